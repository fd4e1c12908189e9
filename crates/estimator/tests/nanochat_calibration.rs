//! nanochat's base_train.py against every measured run of it: each phase of the replayed run
//! within median 0.5 % and worst 3 % of `torch.cuda.max_memory_allocated()`.
//!
//! `data/measured/nanochat.jsonl`: 30 runs on an H200 with the default caching allocator
//! (the probe started CUDA before the script set expandable segments). `data/measured/
//! nanochat-expandable.jsonl` (this project's, see tools/nanochat-probe/README.md): runs with
//! expandable segments, as base_train.py sets them.
//!
//! Each test prints its table of runs when it fails: `cargo test -p estimator --test
//! nanochat_calibration -- --nocapture` with a failing target shows every run's error.

#![allow(clippy::unwrap_used)]

mod common;

use common::{
    assert_within_targets, nanochat_argv as argv, nanochat_config as config, project_runs, score,
};
use estimator::engine::events::{Action, Stage};
use estimator::engine::run::Run;
use estimator::programs::nanochat::{analyze, NanochatAnalysis, NanochatConfig};
use estimator::{gpu, Budget, Phase};
use serde_json::Value;

/// A base_train.py run replayed on the H200 the shared runs were measured on (one-GPU peaks
/// do not depend on the card's size).
fn replay_base(run: &Value) -> Run {
    analyze(&config(run), &Budget::for_gpu(gpu::find("h200").unwrap()))
        .unwrap()
        .run
}

/// This project's runs with expandable segments (tools/nanochat-probe/README.md: H100,
/// PyTorch 2.11.0+cu130, nanochat 92d63d4).
fn expandable_runs() -> Vec<Value> {
    project_runs("nanochat-expandable.jsonl")
}

/// base_train.py's own allocator: every phase within median 0.5 %, worst 3 % (iteration 0: the
/// autotuning test below).
#[test]
fn expandable_segments_runs_within_targets() {
    let runs = expandable_runs();
    assert!(runs.len() >= 46);
    assert_within_targets(score(&runs, replay_base), 1.0);
}

fn shared_runs() -> Vec<Value> {
    common::measured_runs("nanochat.jsonl")
}

/// Evaluation and steady training: median ≤ 0.5 %, worst ≤ 3 %. Iteration 0: median ≤ 0.5 %;
/// its worst is the autotuning test below.
#[test]
fn default_allocator_runs_within_targets() {
    assert_within_targets(score(&shared_runs(), replay_base), 1.0);
}

/// Every run on its own empty Inductor/Triton cache: nanochat-cold.jsonl's cold ones and the
/// traced runs.
fn cold_runs() -> Vec<Value> {
    project_runs("nanochat-cold.jsonl")
        .into_iter()
        .chain(project_runs("nanochat-traced.jsonl"))
        .filter(|r| r["inductor_cache"] == "private, cold")
        .collect()
}

/// A user's first run (data/measured/nanochat-cold.jsonl, tools/nanochat-probe/cold_call.sh:
/// an empty Inductor/Triton cache per run, H200, expandable segments; and the three cold runs
/// traced in nanochat-traced.jsonl): iteration 0 autotunes its kernels on their first call
/// (sequence.rs `autotune`), and every phase, iteration 0 included, is within median 0.5 %,
/// worst 0.5 % for iteration 0 and 3 % for the rest. The 17 cold runs of that file were
/// measured after the model was written. Left out: the runs whose twin measured as the script
/// runs peaked elsewhere ([`moved_by_the_probe`]); [`what_a_first_run_reserves`] scores their
/// twins.
#[test]
fn a_first_run_on_a_cold_cache() {
    let twins = project_runs("nanochat-cold-noreset.jsonl");
    let (cold, moved): (Vec<Value>, Vec<Value>) = cold_runs()
        .into_iter()
        .partition(|r| !moved_by_the_probe(r, &twins));
    assert_eq!((cold.len(), moved.len()), (31, 7));
    assert_within_targets(score(&cold, replay_base), 0.005);
}

/// The run's overall allocated peak: its largest phase.
fn overall_peak(run: &Value) -> f64 {
    common::PHASES
        .iter()
        .filter_map(|(key, _)| run["measured_bytes"][key].as_f64())
        .fold(0.0, f64::max)
}

/// The most a run held up to the end of iteration 0: what a run measured without the resets
/// reports as iteration 0's peak; with them, the larger of the first evaluation's and iteration
/// 0's.
fn through_iteration_zero(run: &Value) -> f64 {
    let m = &run["measured_bytes"];
    let first_eval = m["peak_eval_each"][0].as_f64().unwrap_or(0.0);
    m["peak_allocated_train_iter0"]
        .as_f64()
        .unwrap()
        .max(first_eval)
}

/// [`through_iteration_zero`] of the replay.
fn replayed_through_iteration_zero(out: &Run) -> f64 {
    [Phase::Eval, Phase::TrainFirstIter]
        .iter()
        .filter_map(|&p| out.free_run.phase_peak(p))
        .max()
        .unwrap() as f64
}

/// Whether the probe's own `reset_peak_memory_stats()` at each phase mark changed what `run`
/// measured: its twin among `twins` (the same flags and allocator, measured with `NORESET=1`, as
/// base_train.py runs) held more than 0.5 % more through iteration 0. Inductor's autotuner
/// copies the arguments a kernel writes onto the GPU only while they fit below
/// `max_memory_allocated()` (`copy_args_to_cpu_if_needed`), so a reset just before the optimizer
/// step leaves it less room than the script, which never resets the counter, has
/// (docs/allocation-order.md §18-19).
fn moved_by_the_probe(run: &Value, twins: &[Value]) -> bool {
    twins
        .iter()
        .find(|t| t["argv"] == run["argv"] && t["allocator"] == run["allocator"])
        .is_some_and(|t| through_iteration_zero(t) > 1.005 * through_iteration_zero(run))
}

/// A run measured as the script runs it (no counter resets) against its replay, in percent:
/// the reserved peak, the overall allocated peak and the most held through iteration 0 (its
/// phase peaks are the run's so far, so only these compare).
fn errors_as_the_script_runs(run: &Value) -> [f64; 3] {
    let out = replay_base(run);
    let m = run["measured_bytes"]["peak_reserved"].as_f64().unwrap();
    [
        100.0 * (out.free_run.peak_reserved as f64 / m - 1.0),
        100.0 * (out.free_run.peak_allocated as f64 / overall_peak(run) - 1.0),
        100.0 * (replayed_through_iteration_zero(&out) / through_iteration_zero(run) - 1.0),
    ]
}

/// Runs whose cache had seen their shapes before (the warm twins of nanochat-cold.jsonl, and
/// the shared and expandable runs, taken with one cache across runs): some or all of the
/// autotuning is skipped, so iteration 0 lies at or under the first run's (within 2 %: seven
/// processes shared one cache there), by no more than
/// what autotuning adds (two L2 flush buffers and the clones of two Muon stacks of the widest
/// group, 2·4·L·C·4C bytes). The other phases do not depend on the cache.
#[test]
fn a_warmer_cache_needs_less_in_iteration_zero() {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let warmer: Vec<Value> = project_runs("nanochat-cold.jsonl")
        .into_iter()
        .filter(|r| r["inductor_cache"] != "private, cold")
        .chain(shared_runs())
        .chain(expandable_runs())
        .collect();
    assert!(warmer.len() >= 79);
    for run in warmer {
        let cfg = config(&run);
        let a = analyze(&cfg, &budget).unwrap();
        let m = run["measured_bytes"]["peak_allocated_train_iter0"]
            .as_f64()
            .unwrap();
        let p = a.phase_bytes(Phase::TrainFirstIter).unwrap() as f64;
        let c = cfg.model_dim() as f64;
        let allowance =
            2.0 * budget.gpu.l2_cache_bytes as f64 + 2.0 * 16.0 * f64::from(cfg.depth) * c * c;
        assert!(
            m <= p * 1.02 && p - m <= allowance,
            "{}: predicted {p}, measured {m}, allowance {allowance}",
            run["name"]
        );
    }
}

/// The CORE evaluation: for every measured example shape (data/measured/nanochat-core.jsonl,
/// synthetic task batches of n choices × s tokens through core_eval.py's `forward_model` on the
/// uncompiled model), what the replay adds over the memory before CORE equals what the GPU added,
/// within 1 MiB.
#[test]
fn core_evaluation_per_example_shape() {
    let budget = Budget::for_gpu(gpu::find("h100").unwrap());
    let runs = project_runs("nanochat-core.jsonl");
    let mut checked = 0;
    for run in &runs {
        let base = config(run);
        let last_call = run["core_calls"].as_array().unwrap().last().unwrap();
        for e in last_call.as_array().unwrap() {
            let tokens = e["n"].as_u64().unwrap() * e["s"].as_u64().unwrap();
            let cfg = NanochatConfig {
                core_max_tokens: tokens,
                ..base.clone()
            };
            let a = analyze(&cfg, &budget).unwrap();
            let start = a
                .sequence
                .marks
                .iter()
                .find(|m| m.phase == Some(Phase::Core))
                .unwrap()
                .at;
            let before = u128::from(a.free_run.samples[start - 1].allocated);
            let extra = a.phase_bytes(Phase::Core).unwrap() - before;
            let measured = e["extra_peak"].as_f64().unwrap();
            assert!(
                (extra as f64 - measured).abs() <= 1048576.0,
                "{} {}×{}: {extra} vs {measured}",
                run["name"],
                e["n"],
                e["s"]
            );
            checked += 1;
        }
    }
    assert!(checked >= 160, "{checked} shapes");
}

/// chat_sft.py (data/measured/nanochat-sft.jsonl: the real script on real base checkpoints,
/// H100, expandable segments): the run's flags plus the checkpoint's depth, every phase within
/// median 0.5 % and worst 3 % — with the base run's optimizer state loaded (iteration 0 = steady)
/// and without (`--load-optimizer=0`).
#[test]
fn chat_sft_runs_within_targets() {
    let budget = Budget::for_gpu(gpu::find("h100").unwrap());
    let replay = |run: &Value| {
        let mut args = argv(run);
        args.push(format!("--depth={}", run["base_checkpoint"]["depth"]));
        let cfg = NanochatConfig::from_sft_args(&args).unwrap();
        analyze(&cfg, &budget).unwrap().run
    };
    let scored = score(&project_runs("nanochat-sft.jsonl"), replay);
    eprintln!("{}", scored.1);
    assert_within_targets(scored, 0.03);
}

/// Two GPUs (data/measured/nanochat-ddp2.jsonl, both ranks, 3 steps): iteration 0 of every rank
/// within 6 % (these runs shared the GPUs five at a time, so their first steps overlapped others').
#[test]
fn two_gpus_iteration_zero() {
    let budget = Budget::for_gpu(gpu::find("h100").unwrap());
    for run in project_runs("nanochat-ddp2.jsonl") {
        let mut cfg = config(&run);
        cfg.world_size = 2;
        let a = analyze(&cfg, &budget).unwrap();
        let p = a.phase_bytes(Phase::TrainFirstIter).unwrap() as f64;
        let m = run["measured_bytes"]["peak_allocated_train_iter0"]
            .as_f64()
            .unwrap();
        assert!(
            (p - m).abs() / m <= 0.06,
            "{} rank {}: {p} vs {m}",
            run["name"],
            run["rank"]
        );
    }
}

/// Two GPUs for 3 steps (data/measured/nanochat-ddp2.jsonl): a run of N steps builds at most
/// N − 2 of NCCL's stashes (step 0's is gone before step 1), so the replay runs only the steps
/// base_train.py runs. Before stop 68 it built the stashes of a long run (the bound a real run
/// reaches within ~100 steps): reserved +83 % to +146 %. Now the steady peak of eight of the ten
/// ranks within 0.1 %, their reserve too but at depth 6 (+5.0 %, not isolated: these runs shared
/// the GPUs five at a time); depth 20 at batch 2, +10.6 % steady and +9.8 % reserved, whose
/// step-1 stash the watchdog released before step 2's peak (a race, as in the four-GPU runs that
/// hold fewer stashes than the bound).
#[test]
fn two_gpus_for_three_steps() {
    let budget = Budget::for_gpu(gpu::find("h100").unwrap());
    let mut exact = 0;
    for run in project_runs("nanochat-ddp2.jsonl") {
        let mut cfg = config(&run);
        cfg.world_size = 2;
        let a = analyze(&cfg, &budget).unwrap();
        let m = &run["measured_bytes"];
        let err = |p: u128, key: &str| {
            let m = m[key].as_f64().unwrap();
            (p as f64 - m) / m
        };
        let steady = err(
            a.phase_bytes(Phase::TrainSteady).unwrap(),
            "peak_allocated_train_steady",
        );
        let reserved = err(a.free_run.peak_reserved, "peak_reserved");
        eprintln!(
            "{} rank {}: steady {:+.2} %, reserved {:+.2} %",
            run["name"],
            run["rank"],
            steady * 100.0,
            reserved * 100.0
        );
        assert!(
            steady.abs() <= 0.11 && reserved.abs() <= 0.10,
            "{}",
            run["name"]
        );
        if steady.abs() <= 0.001 && reserved.abs() <= 0.001 {
            exact += 1;
        }
    }
    assert_eq!(exact, 6);
}

/// One GPU under `torchrun --nproc_per_node=1` is `python -m scripts.base_train` for the card: the
/// process group exists, but nanochat's optimizer skips its communication at world size 1
/// (nanochat/optim.py), so vramfit has no torchrun setting for nanochat. Measured (stop 69,
/// data/measured/nanochat-torchrun1.jsonl: two configs each launched both ways on an H200, a
/// private cold compile cache per run, the counters left alone, answers committed first in
/// data/predictions/nanochat-torchrun1.jsonl): each pair reserved the same bytes, its steady
/// peaks 512 bytes apart, and vramfit's one answer within 0.08 % reserved and 0.01 % through
/// iteration 0 and steady training. (Without the probe's resets its `estimate` window holds the
/// run's peak so far, which is not the evaluation's.)
#[test]
fn one_gpu_under_torchrun_is_python() {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let runs = project_runs("nanochat-torchrun1.jsonl");
    assert_eq!(runs.len(), 4);
    for run in &runs {
        let name = run["name"].as_str().unwrap();
        let twin = if name.contains("_t1_") {
            name.replacen("_t1_", "_p1_", 1)
        } else {
            name.replacen("_p1_", "_t1_", 1)
        };
        let twin = runs.iter().find(|r| r["name"] == twin.as_str()).unwrap();
        let m = |r: &Value, k: &str| r["measured_bytes"][k].as_f64().unwrap();
        assert_eq!(m(run, "peak_reserved"), m(twin, "peak_reserved"), "{name}");
        let a = analyze(&config(run), &budget).unwrap();
        let err = |p: u128, k: &str| (p as f64 - m(run, k)).abs() / m(run, k);
        assert!(
            err(a.free_run.peak_reserved, "peak_reserved") < 0.0008,
            "{name}"
        );
        for (phase, k) in [
            (Phase::TrainFirstIter, "peak_allocated_train_iter0"),
            (Phase::TrainSteady, "peak_allocated_train_steady"),
        ] {
            assert!(err(a.phase_bytes(phase).unwrap(), k) < 0.0001, "{name} {k}");
        }
    }
}

/// fp32 compute, as nanochat/common.py picks it below SM 8.0 (data/measured/nanochat-fp32.jsonl:
/// six runs forced with NANOCHAT_DTYPE=float32 on an H100): no bf16 weight copies, fp32
/// activations and logits, d(logits) in a buffer of its own, embeddings stored in fp32. The
/// evaluation to 0.1 %, iteration 0 and steady training to 1 %.
#[test]
fn fp32_compute() {
    let budget = Budget::for_gpu(gpu::find("h100").unwrap());
    for run in project_runs("nanochat-fp32.jsonl") {
        let mut args = argv(&run);
        args.push("--dtype=float32".into());
        let a = analyze(&NanochatConfig::from_args(&args).unwrap(), &budget).unwrap();
        assert_phases_within(&a, &run, [0.001, 0.01, 0.01]);
    }
}

/// The analysis's evaluation, iteration-0 and steady peaks against `run`'s, each within its
/// relative `tolerance` (in that order).
fn assert_phases_within(a: &NanochatAnalysis, run: &Value, tolerance: [f64; 3]) {
    for ((key, phases), tolerance) in [
        (
            "peak_allocated_eval",
            &[Phase::Eval, Phase::EvalAfterStep][..],
        ),
        ("peak_allocated_train_iter0", &[Phase::TrainFirstIter][..]),
        ("peak_allocated_train_steady", &[Phase::TrainSteady][..]),
    ]
    .into_iter()
    .zip(tolerance)
    {
        let p = phases
            .iter()
            .filter_map(|&ph| a.phase_bytes(ph))
            .max()
            .unwrap() as f64;
        let m = run["measured_bytes"][key].as_f64().unwrap();
        assert!(
            (p - m).abs() / m <= tolerance,
            "{} {key}: {p} vs {m}",
            run["name"]
        );
    }
}

/// The card a record was measured on (nanochat-fp8.jsonl holds H100 and H200 runs).
fn card_of(run: &Value) -> Budget {
    Budget::for_gpu(gpu::find(common::card_of(run)).unwrap())
}

/// `--fp8` (data/measured/nanochat-fp8.jsonl: thirteen runs on an H100, d2-d24, each with a cold
/// Inductor cache, the last five measured after the model was written, and d18 at batch 2 twice
/// on an H200): the evaluation (fp8 off, as base_train.py evaluates) and steady training to
/// 0.01 % (the replay matches them to the byte); iteration 0 of a first run to 2 % (its
/// autotuning: the L2 flush at lm_head's backward is modelled, a cold Muon step's is not).
#[test]
fn fp8_training() {
    for run in project_runs("nanochat-fp8.jsonl") {
        let a = analyze(&config(&run), &card_of(&run)).unwrap();
        assert!(a.config.fp8, "{}", run["name"]);
        assert_phases_within(&a, &run, [0.0001, 0.02, 0.0001]);
    }
    // a card without FP8 matmuls gets base_train.py's own end, said plainly
    let cfg = NanochatConfig::from_args(&["--depth=4".to_string(), "--fp8".to_string()]).unwrap();
    let e = analyze(&cfg, &Budget::for_gpu(gpu::find("rtx3090").unwrap())).unwrap_err();
    assert!(e.to_string().contains("has no FP8 matmuls"), "{e}");
    assert!(analyze(&cfg, &Budget::for_gpu(gpu::find("rtx4090").unwrap())).is_ok());
}

/// A traced run's requests and frees of at least 1 MiB from the end of its first optimizer step
/// (`zero_grad`, then the steady iteration's forward) to lm_head's fp32 d(logits), the backward's
/// first request, as (allocation, bytes): a free carries the bytes of the block it frees.
fn traced_steady_forward(run: &Value) -> Vec<(bool, u64)> {
    let name = run["name"].as_str().unwrap();
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../data/traces/{name}-events.json.gz"));
    let trace: Value = serde_json::from_reader(flate2::read::GzDecoder::new(
        std::fs::File::open(path).unwrap(),
    ))
    .unwrap();
    let step_end = run["mark_times_us"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m[0] == "optimizer_step")
        .unwrap()[1]
        .as_u64()
        .unwrap();
    let c = &run["config"];
    let d_logits =
        4 * c["device_batch_size"].as_u64().unwrap() * c["max_seq_len"].as_u64().unwrap() * 32768;
    let mut held = std::collections::HashMap::new();
    let mut out = Vec::new();
    for e in trace["events"].as_array().unwrap() {
        let (addr, size, t) = (
            e[1].as_u64().unwrap(),
            e[2].as_u64().unwrap(),
            e[3].as_u64().unwrap(),
        );
        let freed = match e[0].as_str().unwrap() {
            "a" => {
                held.insert(addr, size);
                if t > step_end && size == d_logits {
                    break;
                }
                (t > step_end && size >= 1 << 20).then_some((true, size))
            }
            "f" => held
                .remove(&addr)
                .filter(|&b| t > step_end && b >= 1 << 20)
                .map(|b| (false, b)),
            _ => None,
        };
        out.extend(freed);
    }
    out
}

/// The same stretch of vramfit's sequence: iteration 0's `zero_grad` and the steady forward, up
/// to the backward's mark.
fn modelled_steady_forward(a: &NanochatAnalysis) -> Vec<(bool, u64)> {
    let seq = &a.run.sequence;
    let at = |phase: Phase, stage: Stage| {
        seq.marks
            .iter()
            .find(|m| m.phase == Some(phase) && m.stage == stage)
            .unwrap()
            .at
    };
    let (from, to) = (
        at(Phase::TrainFirstIter, Stage::ZeroGrad),
        at(Phase::TrainSteady, Stage::Backward),
    );
    let mut bytes = std::collections::HashMap::new();
    let mut out = Vec::new();
    for (i, e) in seq.events.iter().enumerate() {
        if e.action == Action::Alloc {
            bytes.insert(e.tensor, e.bytes);
        }
        if i < from || i >= to {
            continue;
        }
        let b = match e.action {
            Action::Alloc => e.bytes,
            Action::Free => bytes.get(&e.tensor).copied().unwrap_or(0),
        };
        if b >= 1 << 20 {
            out.push((e.action == Action::Alloc, b));
        }
    }
    out
}

/// `--fp8`'s training forward written from Inductor's wrapper (sequence/fp8.rs; docs/
/// allocation-order.md §22) makes, request by request, what the traced runs made in a steady
/// iteration (data/traces/nc_fp8tr_*, and nc_fp8newtr_d8_b16_t1024, traced after it was written): the input, weight and relu² casts, the raw q and k,
/// a plain layer's fp32 norm output, the transposed casts at the graph's end. At depths 2 and 4
/// the wrapper hands a dead cast's storage to the next of its size (no request), at depth 18 it
/// does not: `engine::buffer_reuse` decides both as Inductor did.
#[test]
fn fp8_forward_requests_as_traced() {
    for (file, name) in [
        ("nanochat-fp8.jsonl", "nc_fp8tr_d2_B16_T256_GA1_SL"),
        ("nanochat-fp8.jsonl", "nc_fp8tr_d4_B8_T512_GA1_SSL"),
        ("nanochat-fp8.jsonl", "nc_fp8tr_h200_d18_B2_T2048_GA1_L"),
        // not seen when the forward was written: depth 8 at 16 × 1024, SL
        ("nanochat-fp8-check.jsonl", "nc_fp8newtr_d8_b16_t1024"),
    ] {
        let run = project_runs(file)
            .into_iter()
            .find(|r| r["name"] == name)
            .unwrap();
        let a = analyze(&config(&run), &card_of(&run)).unwrap();
        let (real, modelled) = (traced_steady_forward(&run), modelled_steady_forward(&a));
        assert!(real.len() > 20, "{name}");
        assert_eq!(modelled, real, "{name}");
    }
}

/// What `--fp8` reserves, over its runs as base_train.py runs them (data/measured/nanochat-fp8.jsonl
/// and nanochat-fp8-noreset.jsonl: the H100's and the H200's, with and without the probe's
/// counter resets): median within 1 %, worst within 3 %; and depth 18 measured five times more
/// (nanochat-edge.jsonl: one number, 11,486,101,504 B) within 3 %. The forward is the wrapper's;
/// the backward is still written per layer from what each layer frees and makes
/// (docs/allocation-order.md §22: depth 18 −1.6 %, depth 24 at batch 8 +2.2 %).
#[test]
fn fp8_reserve_within_targets() {
    let error = |run: &Value| {
        let a = analyze(&config(run), &card_of(run)).unwrap();
        let measured = run["measured_bytes"]["peak_reserved"].as_f64().unwrap();
        (a.run.free_run.peak_reserved as f64 / measured - 1.0).abs()
    };
    let mut errs: Vec<(f64, Value)> = ["nanochat-fp8.jsonl", "nanochat-fp8-noreset.jsonl"]
        .into_iter()
        .flat_map(project_runs)
        .map(|run| (error(&run), run["name"].clone()))
        .collect();
    errs.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    assert_eq!(errs.len(), 18);
    let median = errs[errs.len() / 2].0;
    let worst = errs.last().unwrap();
    assert!(
        median <= 0.01 && worst.0 <= 0.03,
        "median {median}, worst {worst:?}"
    );
    let repeats: Vec<Value> = project_runs("nanochat-edge.jsonl")
        .into_iter()
        .filter(|r| argv(r).iter().any(|a| a == "--fp8"))
        .collect();
    assert_eq!(repeats.len(), 5);
    for run in repeats {
        assert!(error(&run) <= 0.03, "{}", run["name"]);
    }
}

/// Five `--fp8` configurations the forward was not written from, predicted before they ran
/// (data/predictions/nanochat-fp8-check.jsonl) and then measured on an H200 as base_train.py runs
/// them (data/measured/nanochat-fp8-check.jsonl: depths 8-26, SL, SSSL and L, each cold, counters
/// never reset, so the phases are the run's so far): the allocated peak, overall and through
/// iteration 0, within 0.01 %, the reserve within 1.5 % (measured −1.27 % to 0.00 %).
#[test]
fn fp8_runs_it_had_not_seen() {
    let runs = project_runs("nanochat-fp8-check.jsonl");
    assert_eq!(runs.len(), 6);
    for run in &runs {
        let [reserved, overall, iter0] = errors_as_the_script_runs(run);
        assert!(
            reserved.abs() <= 1.5 && overall.abs() <= 0.01 && iter0.abs() <= 0.01,
            "{}: reserved {reserved:+.2} %, allocated {overall:+.3} %, iteration 0 {iter0:+.3} %",
            run["name"]
        );
    }
}

/// The card decides: a T4 (SM 7.5) computes in fp32, an RTX 3060 (SM 8.6) in bf16, unless
/// NANOCHAT_DTYPE says otherwise.
#[test]
fn the_card_decides_the_dtype() {
    let cfg = NanochatConfig::from_args(&["--depth=4".to_string()]).unwrap();
    let on = |id: &str, cfg: &NanochatConfig| {
        analyze(cfg, &Budget::for_gpu(gpu::find(id).unwrap()))
            .unwrap()
            .config
            .dtype
            .as_str()
    };
    assert_eq!(on("t4", &cfg), "float32");
    assert_eq!(on("rtx3060", &cfg), "bfloat16");
    let forced =
        NanochatConfig::from_args(&["--depth=4".to_string(), "--dtype=bfloat16".to_string()])
            .unwrap();
    assert_eq!(on("t4", &forced), "bfloat16");
}

/// What a user's first run reserves (the same cold runs, measured again as base_train.py runs them:
/// nanochat-cold-noreset.jsonl, `peak_reserved` over the whole run): median within 0.1 %,
/// worst 3 %, and the overall allocated peak within 0.25 % of every one. Since stop 58 the training
/// backward is the generated code's, buffer by buffer with the wrapper's reuse
/// (sequence/backward.rs, docs/allocation-order.md §13); since stop 59 the training forward and the
/// fused Muon step are too, compiling a graph times the two gates' matmuls on inputs that span
/// nearly all of x before the graph first runs, and the saved tensors the backward writes into (the
/// logits, each c_fc output) join the wrapper's pool when they die, as its own buffers do (§14).
/// Since stop 60 the backward also holds lm_head's input gradient and the final norm's input and
/// statistic for the layer above the backout, seeds x0's gradient with the last layer's, writes the
/// looped reductions' fp32 scratch (C > 1024) and the bottom layers' closing buffers as the
/// generated code does, and pools one kernel's dead buffers in the order of their names and by
/// dtype (§15). Over these 38 runs: median 0.42 % (stop 57) → 0.33 % (stop 58) → 0.04 % (stop 59) →
/// 0.00 %; worst 9.7 % → 6.4 % → 2.7 %; past 3 %: 8 → 5 → 2 → 0 (nc_tr_exp_cal29: +6.2 % → 0.00 %,
/// depth 18 at batch 8: −1.5 % → 0.00 %, depth 20 at batch 16: +6.4 % → +1.3 %). The backward's
/// buffers of 1 MiB or more live as long as the generated code's but for 2 of 188 at depth 18, 6 of
/// 166 at depth 16 and 21 of 196 at depth 20, whose wrapper runs the bottom three layers' weight
/// gradients last (an order Inductor's `reorder_for_peak_memory` may have chosen; vramfit keeps the
/// graph's). Since stop 64 they are scored against the twins measured without the probe's counter
/// resets (§19): 0.00 % median, worst 2.7 %; the overall allocated peak within 0.22 %.
#[test]
fn what_a_first_run_reserves() {
    let runs = project_runs("nanochat-cold-noreset.jsonl");
    assert_eq!(runs.len(), 35);
    let mut errs = Vec::new();
    let mut table = String::new();
    for run in &runs {
        let [e, a, i] = errors_as_the_script_runs(run);
        table += &format!(
            "{:38} {:>21} reserved {e:+7.2} %  allocated {a:+6.2} %  to iteration 0 {i:+6.2} %\n",
            run["name"].as_str().unwrap(),
            run["allocator"]
        );
        assert!(
            a.abs() <= 0.25 && i.abs() <= 0.25 && e.abs() <= 3.0,
            "{table}"
        );
        errs.push(e.abs());
    }
    let med = common::median(errs);
    assert!(med <= 0.1, "median {med:.2} %\n{table}");
}

/// Three first runs past C = 1024 that vramfit had not seen, predicted before they ran (stop 66:
/// data/predictions/nanochat-edge-check.jsonl; then measured by tools/nanochat-probe/edge_call.sh
/// check on an H200, default allocator, each on its own empty cache, counters left alone:
/// nanochat-edge-check.jsonl): depth 18 and depth 24 at 2,048 rows and depth 20 at 4,096, where
/// every per-layer norm kernel is timed (docs/allocation-order.md §21). As predicted: reserve
/// +0.00 %, +0.10 % and +0.00 %, the overall allocated peak within 0.01 %.
#[test]
fn first_runs_past_c_1024_it_had_not_seen() {
    let runs = project_runs("nanochat-edge-check.jsonl");
    assert_eq!(runs.len(), 3);
    for run in &runs {
        let [e, a, _] = errors_as_the_script_runs(run);
        assert!(
            e.abs() <= 0.2 && a.abs() <= 0.05,
            "{}: reserved {e:+.2} %, allocated {a:+.2} %",
            run["name"]
        );
    }
}

/// The 30 configurations of nanochat.jsonl on an empty compile cache each, measured after the
/// model was written (H200, default allocator; tools/nanochat-probe/cold_cal_call.sh), twice:
/// as the probes measure (peak counters reset at each phase: nanochat-cold-cal.jsonl) and as
/// base_train.py runs (never reset, `NORESET=1`: nanochat-cold-cal-noreset.jsonl, whose phase
/// peaks are the run's so far and so only the overall peak is compared). The resets moved 15 of
/// the 30 reserves (from −1.1 % to +8.9 %, nc_cal_27 316 → 344 MiB, nc_cal_21 11,018 → 11,402).
/// Iteration 0 within 0.2 % of what the probe measured where its resets did not move the run;
/// against the runs without resets (what a user gets) the overall allocated peak within 0.25 %
/// and the reserve median 0.05 %, every run within 3 % (since stop 66, when a first run times
/// the looped per-layer norm kernels at depth 17 and up, §21: nc_cal_09 +3.8 → −0.5 %, nc_cal_15
/// −0.4 % → exact).
#[test]
fn cold_calibration_configs() {
    let twins = project_runs("nanochat-cold-cal-noreset.jsonl");
    let mut table = String::new();
    let mut reserved = Vec::new();
    for run in project_runs("nanochat-cold-cal.jsonl") {
        if moved_by_the_probe(&run, &twins) {
            continue;
        }
        let m = &run["measured_bytes"];
        let out = replay_base(&run);
        let it0 = out.free_run.phase_peak(Phase::TrainFirstIter).unwrap() as f64;
        let e = 100.0 * (it0 / m["peak_allocated_train_iter0"].as_f64().unwrap() - 1.0);
        table += &format!(
            "{:18} iteration 0 {e:+6.2} %\n",
            run["name"].as_str().unwrap()
        );
        assert!(e.abs() <= 0.2, "{table}");
    }
    for run in twins {
        let [e, a, i] = errors_as_the_script_runs(&run);
        let name = run["name"].as_str().unwrap();
        table += &format!(
            "{name:18} reserved {e:+6.2} %  allocated {a:+6.2} %  to iteration 0 {i:+6.2} %\n"
        );
        assert!(a.abs() <= 0.25 && i.abs() <= 0.25, "{table}");
        assert!(e.abs() <= 3.0, "{table}");
        reserved.push(e.abs());
    }
    assert_eq!(reserved.len(), 30);
    let med = common::median(reserved);
    assert!(med <= 0.1, "median {med:.2} %\n{table}");
}

/// nanochat's micro-steps, held out (tools/heldout/nanochat_accum.py, stop 71; the predictions
/// committed first in data/predictions/nanochat-accum.jsonl): vramfit replays two of
/// base_train.py's micro-steps — its loop keeps no logits across them (`loss = model(x, y)`),
/// unlike train.py's (allocation-order.md §25) — and five runs of 3 to 8 on an H200, as the
/// script runs (the probe's counters left alone), reserve its bytes: the four with expandable
/// segments exactly, the default allocator's within 0.06 %, the first iteration and steady
/// training within 0.05 %.
#[test]
fn longer_accumulation_needs_two_micro_steps() {
    let runs = project_runs("nanochat-accum-heldout.jsonl");
    assert_eq!(runs.len(), 5);
    for run in &runs {
        let name = run["name"].as_str().unwrap();
        let r = replay_base(run);
        let m = |k: &str| run["measured_bytes"][k].as_f64().unwrap();
        let reserved = r.free_run.peak_reserved as f64;
        if run["allocator"] == "expandable_segments" {
            assert_eq!(reserved, m("peak_reserved"), "{name}");
        } else {
            let err = (reserved - m("peak_reserved")).abs() / m("peak_reserved");
            assert!(err < 0.001, "{name}: reserved off by {err}");
        }
        for (phase, key) in [
            (Phase::TrainFirstIter, "peak_allocated_train_iter0"),
            (Phase::TrainSteady, "peak_allocated_train_steady"),
        ] {
            let p = r.phase_bytes(phase).unwrap() as f64;
            assert!((p - m(key)).abs() / m(key) < 0.0006, "{name} {key}: {p}");
        }
    }
}
