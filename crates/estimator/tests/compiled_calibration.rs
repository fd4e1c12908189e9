//! nanoGPT's train.py with `compile=True` against the compiled runs measured with one Inductor
//! cache per run (data/measured/nanogpt-compiled-*.jsonl, tools/nanogpt-probe/README.md: the
//! real train.py at 3adf61e, PyTorch 2.11.0+cu130, H100).
//!
//! vramfit predicts a user's first run of a config, a cold Inductor cache: each phase of the
//! cold runs within median 0.5 % and worst 3 %. A rerun on a warm cache skips Triton's
//! autotuning: its steady phase is the same, and its eval and first iteration are at most the
//! cold prediction (never more than 3 % above it).

#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_within_targets, config, measured, project_runs, score};

use estimator::{analyze, gpu, Budget, Phase};

/// The run as the probe ran it: `--max_iters=3 --eval_interval=1000` (one `estimate_loss()`).
fn replay(run: &serde_json::Value) -> estimator::engine::run::Run {
    replay_on(run, "h100")
}

/// [`replay`] on the card `card` (a preset's id).
fn replay_on(run: &serde_json::Value, card: &str) -> estimator::engine::run::Run {
    let budget = Budget::for_gpu(gpu::find(card).unwrap());
    let mut cfg = config(run);
    cfg.max_iters = 3;
    cfg.eval_interval = 1000;
    analyze(&cfg, &budget).unwrap().run
}

/// The replay's reserved peak against the run's, relative, on the card the run was measured on.
fn reserved_error(run: &serde_json::Value) -> f64 {
    let r = replay_on(run, common::card_of(run));
    let m = measured(run, "peak_reserved").unwrap();
    (r.free_run.peak_reserved as f64 - m) / m
}

#[test]
fn cold_cache_runs_within_targets() {
    let runs = project_runs("nanogpt-compiled-cold.jsonl");
    assert_eq!(runs.len(), 21);
    let scored = score(&runs, replay);
    eprintln!("{}", scored.1);
    assert_within_targets(scored, 0.03);
}

/// 14 compiled configs held out from the model's development (new sizes, a 4-layer 256-wide
/// model, GA 3), predicted (data/predictions/nanogpt-compiled-check.json) before they were
/// measured on fresh caches (nanogpt-compiled-check.jsonl).
#[test]
fn held_out_cold_runs_within_targets() {
    let runs = project_runs("nanogpt-compiled-check.jsonl");
    assert_eq!(runs.len(), 14);
    let scored = score(&runs, replay);
    eprintln!("{}", scored.1);
    assert_within_targets(scored, 0.03);
}

#[test]
fn warm_cache_runs_steady_within_targets_and_below_the_cold_prediction() {
    let runs = project_runs("nanogpt-compiled-warm.jsonl");
    assert_eq!(runs.len(), 21);
    let mut steady = Vec::new();
    for run in &runs {
        let r = replay(run);
        let name = run["name"].as_str().unwrap();
        let m = measured(run, "peak_allocated_train_steady").unwrap();
        let p = r.phase_bytes(Phase::TrainSteady).unwrap() as f64;
        steady.push((p - m).abs() / m);
        assert!((p - m).abs() / m <= 0.03, "{name} steady {p} vs {m}");
        for (key, phase) in [
            ("peak_allocated_eval", Phase::Eval),
            ("peak_allocated_train_iter0", Phase::TrainFirstIter),
        ] {
            let m = measured(run, key).unwrap();
            let p = r.phase_bytes(phase).unwrap() as f64;
            assert!(p >= 0.97 * m, "{name} {key}: predicted {p} below warm {m}");
        }
    }
    assert!(common::median(steady) <= 0.005);
}

/// Pinned phases (MiB, measured on a cold cache), each within 2.5 %: what sets each peak.
#[test]
fn pinned_cold_phases() {
    // (run, phase, measured MiB, what sets it)
    let pins: [(&str, Phase, f64); 6] = [
        // char, eval: block 0's GELU autotuned: 50 MiB L2 flush + the (N, 4C) clone
        ("cmp_bf16_char_T2048_B1_ga2_cold", Phase::Eval, 143.9),
        ("cmp_fp32_char_T256_B16_ga1_cold", Phase::Eval, 183.1),
        // char, iteration 0 with GA 1: the backward's GELU autotuned
        (
            "cmp_fp16_char_T2048_B1_ga1_cold",
            Phase::TrainFirstIter,
            364.9,
        ),
        // fp32 GPT-2: three (N, V) fp32 buffers through the backward, no 4·V·C grad yet
        (
            "cmp_fp32_gpt2_T2048_B1_ga1_cold",
            Phase::TrainSteady,
            3862.7,
        ),
        (
            "cmp_fp32_gpt2_T2048_B1_ga1_cold",
            Phase::TrainFirstIter,
            2979.0,
        ),
        // bf16 GPT-2 = calibration.jsonl's s_comp_b4 (4.681 GiB)
        (
            "cmp_bf16_gpt2_T1024_B4_ga2_cold",
            Phase::TrainSteady,
            4792.2,
        ),
    ];
    let runs = project_runs("nanogpt-compiled-cold.jsonl");
    for (name, phase, mib) in pins {
        let run = runs.iter().find(|r| r["name"] == name).unwrap();
        let key = match phase {
            Phase::Eval => "peak_allocated_eval",
            Phase::TrainFirstIter => "peak_allocated_train_iter0",
            _ => "peak_allocated_train_steady",
        };
        let m = measured(run, key).unwrap() / 1048576.0;
        assert!(
            (m - mib).abs() < 0.1,
            "{name} {key}: data {m:.1} MiB, pinned {mib}"
        );
        let p = replay(run).phase_bytes(phase).unwrap() as f64 / 1048576.0;
        assert!(
            (p - m).abs() / m <= 0.025,
            "{name} {phase:?}: predicted {p:.1} MiB, measured {m:.1} MiB"
        );
    }
}

/// What a user's first compiled run reserves (issue 27): the training forward and backward written
/// node by node from Inductor's generated code, their buffers handed on as the wrapper's memory
/// planning hands them (`engine::buffer_reuse`), with a cold compile's timings (pad_mm's of
/// lm_head where the vocabulary is off the alignment, each tuned kernel's flush buffer), against
/// the 43 cold runs measured — 21 and 14 held-out ones on an H100, 8 on an H200 with every
/// allocator event kept (data/traces/ngc_h200_*; the last two taken after the backward was
/// written). Stop 56: median 2.3 % -> 1.0 %, six past 2 %, worst 5.8 %. Stop 61 (the forward and
/// the timings): median 0.6 %, the H200's five traced char runs within 0.9 %, five past 2 %:
/// four shakespeare_char runs on the H100 within 3.1 %, where pad_mm's choice for lm_head is the
/// timing's (the same config padded its forward's matmul in one run and not in another:
/// docs/allocation-order.md §16), and `ev_fp32_gpt2_T2048_B1_ga1`, whose real run maps one more
/// (V, C) fp32 block in its second steady iteration (3.976 → 4.124 GiB) where vramfit's layout
/// has settled. Stop 62 (the eval graph from its wrapper, planned by Inductor's own estimate:
/// §17): that GPT-2 run −3.25 → +0.10 %, the median 0.64 → 0.47 %, seven past 2 %, all on the
/// H100: six shakespeare_char-sized runs (two more fp32 ones, whose eval now reserves one L2
/// flush more than they did) and a GPT-2 fp16 run at −2.0 %; the worst 3.05 %, the only one past
/// 3 %; the H200's eight traced runs within 0.9 %. Stop 71 (train.py's Y freed where the compiled
/// backward makes d(logits), as the trace ngc_h200_bf16_gpt2_T1024_B8_ga2 frees it, where vramfit
/// had kept every micro-step's): small-pool blocks move, and `chk_bf16_gpt2_T512_B8_ga3` went
/// from −1.96 % to −2.00 %, eight past 2 %.
#[test]
fn cold_runs_reserve_within_two_percent() {
    // sorted
    let known = [
        "chk_bf16_gpt2_T512_B8_ga3",
        "chk_fp32_mini_T256_B8_ga1",
        "cmp_bf16_char_T1024_B4_ga1_cold",
        "cmp_fp16_char_T1024_B4_ga2_cold",
        "cmp_fp16_char_T2048_B1_ga1_cold",
        "cmp_fp16_gpt2_T256_B16_ga2_cold",
        "cmp_fp32_char_T2048_B1_ga1_cold",
        "cmp_fp32_char_T256_B16_ga1_cold",
    ];
    let mut over = Vec::new();
    let mut errs = Vec::new();
    for file in [
        "nanogpt-compiled-cold.jsonl",
        "nanogpt-compiled-check.jsonl",
        "nanogpt-compiled-cold-h200.jsonl",
    ] {
        for run in project_runs(file) {
            let e = reserved_error(&run);
            let name = run["name"].as_str().unwrap().to_string();
            let card = common::card_of(&run);
            eprintln!("{name:34} {card} reserved {:+.2} %", e * 100.0);
            errs.push(e.abs());
            if e.abs() > 0.02 {
                assert!(e.abs() <= 0.06, "{name}: {:+.2} %", e * 100.0);
                over.push(name);
            }
        }
    }
    assert_eq!(errs.len(), 43);
    over.sort();
    assert_eq!(over, known);
    assert!(common::median(errs) <= 0.005);
}

/// The H200's eight first runs again with the probe's marks leaving the peak counters alone, as
/// train.py runs (`NORESET=1`, tools/nanogpt-probe/device_call_noreset.sh; data/measured/
/// nanogpt-compiled-cold-h200-noreset.jsonl): Inductor's autotuner copies what a kernel writes
/// onto the GPU only while it fits below `max_memory_allocated()`, which the probes reset at each
/// phase (docs/allocation-order.md §18). Two of the eight reserved otherwise: the fp32
/// shakespeare_char runs at T1024 B4 (862 → 838 MiB) and T256 B64 GA2 (2,748 → 2,796 MiB).
/// vramfit, which models the run's own counter, within 3 % of all eight: +2.9 % and −0.9 % for
/// those two, the rest as with the resets (within 0.5 %).
#[test]
fn first_runs_without_the_probes_counter_resets() {
    let runs = project_runs("nanogpt-compiled-cold-h200-noreset.jsonl");
    assert_eq!(runs.len(), 8);
    let mut errs = Vec::new();
    for run in &runs {
        let e = reserved_error(run);
        let name = run["name"].as_str().unwrap();
        assert!(e.abs() <= 0.03, "{name}: {:+.2} %", e * 100.0);
        errs.push(e.abs());
    }
    assert!(common::median(errs) <= 0.005);
}

/// build-nanogpt compiled (B14, T1024, two micro-steps), a first run on an H200 uncapped, every
/// allocator event kept (data/measured/build-nanogpt-compiled-traced.jsonl,
/// data/traces/bng_c_h200_b14_t1024_ga2-events.json.gz): it reserved 10.951 GiB, what its run
/// capped at 11.25 GiB reserved too (build-nanogpt-capped.jsonl). Its Linears have biases, and with
/// them Inductor orders c_proj's dx before its dW (the trace: the (N, 4C) gradient is allocated
/// while the GELU output it reads is still live), so the 16-bit backward written from the bias-free
/// models' generated code is not its sequence; the one it has reserves within 0.5 %.
#[test]
fn build_nanogpt_compiled_first_run_reserve() {
    let runs = project_runs("build-nanogpt-compiled-traced.jsonl");
    let run = &runs[0];
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let r = estimator::programs::build_nanogpt::analyze(&common::bng_config(run), &budget).unwrap();
    let m = measured(run, "peak_reserved").unwrap();
    let p = r.run.free_run.peak_reserved as f64;
    assert!(
        (p - m).abs() / m <= 0.005,
        "reserved {p} predicted, {m} measured"
    );
}
