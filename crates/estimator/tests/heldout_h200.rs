//! Eager runs vramfit was never written from: nanoGPT's train.py and build-nanogpt's
//! train_gpt2.py at 18 configs chosen before any prediction was looked at, on an H200 (every run
//! the models were written from is an H100's), default caching allocator, uncapped
//! (data/measured/heldout-h200-eager.jsonl, tools/heldout/h200_eager_call.sh). What the caching
//! allocator reserves is the verdict's basis; on these runs it is within 0.05 % and every
//! allocated phase within 0.2 %.

#![allow(clippy::unwrap_used)]

mod common;

use common::{bng_config, config, project_runs, PHASES};
use estimator::engine::run::Run;
use estimator::programs::nanogpt::sequence::{simulated_micro_steps, MAX_MICRO_STEPS};
use estimator::{analyze, gpu, programs::build_nanogpt, Budget, Phase};
use serde_json::Value;

/// build-nanogpt's records name the batch `B`; train.py's `batch_size`.
fn is_build_nanogpt(run: &Value) -> bool {
    run["config"].get("B").is_some()
}

fn replay(run: &Value) -> Run {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    if is_build_nanogpt(run) {
        build_nanogpt::analyze(&bng_config(run), &budget)
            .unwrap()
            .run
    } else {
        analyze(&config(run), &budget).unwrap().run
    }
}

/// The replayed peak for a measured phase `key` of `PHASES`: the largest of its phases. train.py's
/// probe evaluates once, before the first step (its eval_interval is past max_iters);
/// build-nanogpt's validates at the first and the last step.
fn predicted(run: &Value, r: &Run, key: &str, phases: &[Phase]) -> f64 {
    let phases = if !is_build_nanogpt(run) && key == "peak_allocated_eval" {
        &[Phase::Eval]
    } else {
        phases
    };
    phases
        .iter()
        .filter_map(|&p| r.phase_bytes(p))
        .max()
        .unwrap() as f64
}

#[test]
fn eager_runs_on_another_card_hold() {
    let runs = project_runs("heldout-h200-eager.jsonl");
    assert_eq!(runs.len(), 18);
    let mut table = String::new();
    let mut worst = (0.0f64, 0.0f64);
    for run in &runs {
        assert_eq!(run["gpu"], "NVIDIA H200");
        let r = replay(run);
        let m = &run["measured_bytes"];
        table += &format!("{:44}", run["name"].as_str().unwrap());
        for (key, phases) in PHASES {
            let measured = m[key].as_f64().unwrap();
            let p = predicted(run, &r, key, phases);
            let err = (p - measured) / measured;
            worst.0 = worst.0.max(err.abs());
            table += &format!(" {}: {:+.3}%", &key[14..], err * 100.0);
        }
        let measured = m["peak_reserved"].as_f64().unwrap();
        let err = (r.free_run.peak_reserved as f64 - measured) / measured;
        worst.1 = worst.1.max(err.abs());
        table += &format!(" reserved: {:+.3}%\n", err * 100.0);
    }
    assert!(worst.0 <= 0.002 && worst.1 <= 0.0005, "{table}");
}

/// The one verdict of the second held-out set that was wrong (capped_edge.rs,
/// `held_out_launches_at_the_edge`): train.py eager fp16, GPT-2 124M, T 256, batch 34, eight
/// micro-steps, traced uncapped and capped at 11.25 GiB (tools/heldout/edge2_trace_call.sh,
/// data/measured/heldout-h200-edge2-traced.jsonl). Uncapped it reserved 12,690 MiB; vramfit said
/// 11,018, having simulated three of the eight micro-steps — the layout repeats every second
/// micro-step (two logits-sized blocks take turns), so the eighth's is the sixth's, not the
/// third's. Its requests, replayed through the engine, reserve the run's bytes; vramfit's own
/// sequence now does too, and every allocated phase holds.
#[test]
fn eight_micro_steps_end_in_the_sixths_layout() {
    let runs = project_runs("heldout-h200-edge2-traced.jsonl");
    let run = runs.iter().find(|r| r["status"] == "ok").unwrap();
    let r = replay(run);
    let m = |k: &str| run["measured_bytes"][k].as_u64().unwrap();
    assert_eq!(m("peak_reserved"), 12_690 << 20);
    assert_eq!(r.free_run.peak_reserved as u64, m("peak_reserved"));
    for (key, phases) in PHASES {
        let (p, real) = (predicted(run, &r, key, phases), m(key) as f64);
        assert!((p - real).abs() / real < 0.001, "{key}: {p} vs {real}");
    }
    let simulated = |accum| simulated_micro_steps(accum, MAX_MICRO_STEPS);
    assert_eq!(
        [simulated(3), simulated(7), simulated(8), simulated(40)],
        [3, 5, 6, 6]
    );
}

/// `simulated_micro_steps` checked before the runs (tools/heldout/microsteps.py; the predictions
/// committed in data/predictions/microsteps.jsonl, the runs in data/measured/heldout-h200-
/// microsteps.jsonl): six uncapped runs on an H200 whose gradient accumulation is longer than
/// vramfit simulates — train.py eager fp16 at GA 7, 8 and 12 (GA 7 of batch 34 reserves 10.76 GiB,
/// GA 12 12.39 GiB: the parity of the micro-steps), the README's first example (GPT-2 124M eager,
/// batch 8, GA 40), train.py's own defaults compiled (batch 12, GA 40, a first run) and
/// build-nanogpt at GA 3. The eager ones reserve vramfit's bytes exactly, the compiled one within
/// 0.32 %, and every allocated phase holds within 0.03 %.
#[test]
fn longer_accumulation_held_out() {
    let runs = project_runs("heldout-h200-microsteps.jsonl");
    assert_eq!(runs.len(), 6);
    for run in &runs {
        let r = replay(run);
        let name = run["name"].as_str().unwrap();
        let measured = run["measured_bytes"]["peak_reserved"].as_u64().unwrap();
        let reserved = r.free_run.peak_reserved as u64;
        if run["config"]["compile"] == true {
            let err = (reserved as f64 - measured as f64) / measured as f64;
            assert!(err.abs() < 0.0035, "{name}: reserved {err:+.4}");
        } else {
            assert_eq!(reserved, measured, "{name}");
        }
        for (key, phases) in PHASES {
            let p = predicted(run, &r, key, phases);
            let m = run["measured_bytes"][key].as_f64().unwrap();
            assert!((p - m).abs() / m < 0.0003, "{name} {key}: {p} vs {m}");
        }
    }
}
