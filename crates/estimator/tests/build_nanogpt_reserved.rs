//! What the caching allocator reserves for build-nanogpt's train_gpt2.py (eager), against traced
//! runs of the real script (data/measured/build-nanogpt-traced.jsonl and their segment summaries,
//! data/traces/bng-eager-segments.json: H100, PyTorch 2.11, taken by
//! data/traces/bng-eager-trace.py).
//!
//! The runs without HellaSwag and sampling are the run vramfit's sequence describes: its replay
//! must cudaMalloc the same segments in the same order and reserve the same bytes (within one
//! 2 MiB small-pool segment). Replaying the traces' own request streams through the allocator
//! simulation reproduced every segment of all eight runs, HellaSwag's included, to the byte
//! (docs/allocation-order.md, "build-nanogpt: reserved memory"): the allocator is exact, and
//! what the script's HellaSwag and sampling do to the cache is the sequence's to describe.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::path::PathBuf;

use common::{bng_config, project_runs};
use estimator::allocator::{BlockId, CachingAllocator};
use estimator::engine::events::Action;
use estimator::programs::build_nanogpt::{analyze, sequence, BngConfig};
use estimator::{gpu, Allocator, Budget};
use serde_json::Value;

const MIB: u128 = 1 << 20;

/// A traced run's constants: every traced run is eager with the default allocator.
fn config(run: &Value) -> BngConfig {
    assert_eq!(run["config"]["use_compile"], false);
    assert_eq!(run["config"]["allocator"], "default");
    bng_config(run)
}

fn summaries() -> HashMap<String, Value> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/traces/bng-eager-segments.json");
    let t: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    t["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

/// The segments (cudaMalloc sizes, in order) the sequence's replay creates, with HellaSwag and
/// sampling (`evals`) or without.
fn replayed_segments(cfg: &BngConfig, evals: bool) -> Vec<u128> {
    let seq = sequence::generate_with(cfg, gpu::find("h100").unwrap(), evals);
    let mut a = CachingAllocator::new(Allocator::Default, None);
    let mut live: HashMap<u32, BlockId> = HashMap::new();
    let mut segments = Vec::new();
    for e in &seq.events {
        match e.action {
            Action::Alloc => {
                let before = a.reserved();
                live.insert(e.tensor, a.malloc(e.bytes).unwrap());
                if a.reserved() > before {
                    segments.push(u128::from(a.reserved() - before));
                }
            }
            Action::Free => {
                if let Some(id) = live.remove(&e.tensor) {
                    a.free(id);
                }
            }
        }
    }
    segments
}

fn large(v: impl IntoIterator<Item = u128>) -> Vec<u128> {
    v.into_iter().filter(|s| *s > 2 * MIB).collect()
}

#[test]
fn without_hellaswag_and_sampling_the_replay_reserves_what_the_script_does() {
    let runs = project_runs("build-nanogpt-traced.jsonl");
    let traces = summaries();
    let mut checked = 0;
    for run in runs.iter().filter(|r| r["hellaswag_and_sampling"] == false) {
        let name = run["name"].as_str().unwrap();
        let cfg = config(run);
        // no segment is released uncapped: the reserve is the segments' sum
        let predicted: u128 = replayed_segments(&cfg, false).iter().sum();
        let measured = u128::from(run["measured_bytes"]["peak_reserved"].as_u64().unwrap());
        // the small pool may hold one 2 MiB segment more for real (a few sub-MiB blocks)
        assert!(
            predicted.abs_diff(measured) <= 2 * MIB,
            "{name}: reserved {predicted} predicted, {measured} measured"
        );
        // segment by segment: every cudaMalloc above 2 MiB, in the order the script made them
        let real: Vec<u128> = traces[name]["cudamallocs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| u128::from(m[0].as_u64().unwrap()))
            .collect();
        assert_eq!(real.iter().sum::<u128>(), measured, "{name}: summary");
        // (the cuBLAS workspace's own 32 MiB segment comes a few segments later for real: at the
        // first matmul, after the first block's LayerNorm; the replay creates it as validation
        // starts. Every other segment comes in the same order.)
        let workspace = gpu::find("h100").unwrap().cublas_workspace_bytes();
        let (sim, real) = (large(replayed_segments(&cfg, false)), large(real));
        let without = |v: &[u128]| {
            let mut v = v.to_vec();
            let i = v.iter().position(|s| *s == workspace).unwrap();
            v.remove(i);
            v
        };
        assert_eq!(without(&sim), without(&real), "{name}: large segments");
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// The runs with HellaSwag and sampling (the script as it is): each run's summary adds up to its
/// measured reserve, the script's defaults (B = 64) reserve 76.03 GiB on an H100 80 GB, and the
/// sequence, HellaSwag and sampling included (the probe's 8 stub examples), reserves what each
/// run did (within one small-pool segment) and cudaMallocs the same large segments in the same
/// order.
#[test]
fn traced_runs_with_hellaswag_are_recorded_with_their_segments() {
    let runs = project_runs("build-nanogpt-traced.jsonl");
    let traces = summaries();
    assert_eq!(runs.len(), 8);
    for run in &runs {
        let name = run["name"].as_str().unwrap();
        let t = &traces[name];
        let measured = run["measured_bytes"]["peak_reserved"].as_u64().unwrap();
        assert_eq!(t["peak_reserved"].as_u64().unwrap(), measured, "{name}");
        let at_peak: u64 = t["segments_at_peak"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s[0].as_u64().unwrap())
            .sum();
        assert_eq!(at_peak, measured, "{name}: segments at the peak");
        assert_eq!(t["hellaswag_and_sampling"], run["hellaswag_and_sampling"]);
        if run["hellaswag_and_sampling"] == true {
            let cfg = config(run);
            let budget = Budget::for_gpu(gpu::find("h100").unwrap());
            let predicted = analyze(&cfg, &budget).unwrap().run.free_run.peak_reserved;
            let measured = u128::from(measured);
            assert!(
                predicted.abs_diff(measured) <= 3 * MIB,
                "{name}: reserved {predicted} predicted, {measured} measured"
            );
            let real: Vec<u128> = t["cudamallocs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| u128::from(m[0].as_u64().unwrap()))
                .collect();
            let (sim, real) = (large(replayed_segments(&cfg, true)), large(real));
            let workspace = gpu::find("h100").unwrap().cublas_workspace_bytes();
            let without = |v: &[u128]| {
                let mut v = v.to_vec();
                let i = v.iter().position(|s| *s == workspace).unwrap();
                v.remove(i);
                v
            };
            // every segment above 2 MiB, in order (the workspace's aside, as above)
            assert_eq!(without(&sim), without(&real), "{name}: large segments");
        }
    }
    let defaults = runs
        .iter()
        .find(|r| r["config"]["B"] == 64 && r["config"]["total_batch_size"] == 524_288)
        .unwrap();
    assert_eq!(
        defaults["measured_bytes"]["peak_reserved"].as_u64(),
        Some(81_640_030_208)
    );
}

/// Signed relative error of the replayed reserve against each run's measured one (the runs
/// without HellaSwag and sampling replayed without them; `model_evals` false: none replayed,
/// the sequence as it was before HellaSwag and sampling were modelled).
fn reserved_errors(file: &str, model_evals: bool) -> Vec<(String, bool, f64)> {
    let h100 = gpu::find("h100").unwrap();
    let budget = Budget::for_gpu(h100);
    project_runs(file)
        .iter()
        .map(|run| {
            let cfg = bng_config(run);
            let evals = model_evals && !cfg.use_compile && run["hellaswag_and_sampling"] != false;
            let seq = sequence::generate_with(&cfg, h100, evals);
            let predicted =
                estimator::engine::run::Run::replay(seq, cfg.allocator, budget.allocator_cap())
                    .expect("a measured run is below the ceiling")
                    .free_run
                    .peak_reserved as f64;
            let measured = run["measured_bytes"]["peak_reserved"].as_f64().unwrap();
            let name = run["name"].as_str().unwrap().to_string();
            (name, cfg.use_compile, predicted / measured - 1.0)
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn stats(errs: &[(String, bool, f64)], keep: impl Fn(&(String, bool, f64)) -> bool) -> (f64, f64) {
    let abs: Vec<f64> = errs.iter().filter(|e| keep(e)).map(|e| e.2.abs()).collect();
    let worst = abs.iter().copied().fold(0.0, f64::max);
    (median(abs), worst)
}

/// Reserved memory over every measured run (all uncapped, H100 80 GB, PyTorch 2.11). With
/// HellaSwag and sampling replayed (the probe's 8 stub examples, as the runs had), the 34 eager
/// runs' reserve is within median 0.014 % and worst 0.66 % (bng_e_b1_t1024_ga1), from median
/// 4.9 % and worst 8.1 % without; all 45 runs (the 11 compiled ones unchanged: the script skips
/// both when compiled) within median 0.024 % and worst 2.98 % (bng_c_b2_t1024_ga2); at stop 71
/// (the compiled graphs written since), median 0.020 %, worst 0.70 %
/// (bng_c_b1_t512_ga1). The script's defaults (B = 64, GA 8) reserve 76.03 GiB, measured 76.033.
#[test]
fn reserved_within_targets_over_measured_runs() {
    let files = [
        "build-nanogpt.jsonl",
        "build-nanogpt-heldout.jsonl",
        "build-nanogpt-traced.jsonl",
    ];
    let mut all = Vec::new();
    let mut all_before = Vec::new();
    for file in files {
        let before = reserved_errors(file, false);
        all_before.extend(before.clone());
        let errs = reserved_errors(file, true);
        for ((name, compiled, e), b) in errs.iter().zip(&before) {
            eprintln!(
                "{file} {name} compiled={compiled} {:+.3} % (without HellaSwag/sampling {:+.3} %)",
                100.0 * e,
                100.0 * b.2
            );
        }
        for (label, v) in [("before", &before), ("after", &errs)] {
            let (m, w) = stats(v, |_| true);
            let (me, we) = stats(v, |e| !e.1);
            eprintln!(
                "{file} {label}: all median {:.3} %, worst {:.3} %; eager median {:.3} %, worst {:.3} %",
                100.0 * m,
                100.0 * w,
                100.0 * me,
                100.0 * we
            );
        }
        all.extend(errs);
    }
    assert_eq!(all.len(), 45);
    let (mb, wb) = stats(&all_before, |_| true);
    let (meb, web) = stats(&all_before, |e| !e.1);
    eprintln!(
        "all before: median {:.3} %, worst {:.3} %; eager before: median {:.3} %, worst {:.3} %",
        100.0 * mb,
        100.0 * wb,
        100.0 * meb,
        100.0 * web
    );
    let (m, w) = stats(&all, |_| true);
    let (me, we) = stats(&all, |e| !e.1);
    eprintln!(
        "all: median {:.3} %, worst {:.3} %; eager: median {:.3} %, worst {:.3} %",
        100.0 * m,
        100.0 * w,
        100.0 * me,
        100.0 * we
    );
    // the targets, over every (uncapped) run
    assert!(m <= 0.01 && w <= 0.03, "all runs: median {m}, worst {w}");
    // what the model reaches on all of them, pinned
    assert!(
        m <= 0.0003 && w <= 0.0075,
        "all runs: median {m}, worst {w}"
    );
    // what the model reaches on the eager runs, pinned
    assert!(
        me <= 0.0002 && we <= 0.0070,
        "eager runs: median {me}, worst {we}"
    );
}
