//! The estimator against every measured run of nanoGPT's train.py (data/measured/calibration.jsonl):
//! the accuracy targets of the Foundation issue, asserted.

#![allow(clippy::unwrap_used)]

mod common;

use common::{config, measured, measured_peak, measured_runs};

use estimator::allocator_rounding::model_rounding;
use estimator::{analyze, estimate, gpu, Budget, Phase};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The Foundation targets on the closed form alone (no simulation): median ≤ 0.5 %, worst ≤ 3 %.
#[test]
fn closed_form_within_targets() {
    let card = gpu::find("h100").unwrap();
    let mut overall = Vec::new();
    for run in measured_runs("calibration.jsonl") {
        if run["status"] != "ok" {
            continue;
        }
        let est = estimate(&config(&run), card).unwrap();
        let m = measured_peak(&run);
        overall.push((est.peak_bytes() as f64 - m).abs() / m);
    }
    let (med, max) = (
        median(overall.clone()),
        overall.iter().cloned().fold(0.0, f64::max),
    );
    assert!(
        med <= 0.005 && max <= 0.03,
        "median {:.3}% max {:.3}%",
        med * 100.0,
        max * 100.0
    );
}

/// What vramfit reports (the replayed run): every phase of every measured run.
#[test]
fn replayed_peaks_within_targets() {
    let card = gpu::find("h100").unwrap();
    let mut overall = Vec::new();
    let mut phases: [(Phase, &str, Vec<f64>); 3] = [
        (Phase::TrainSteady, "peak_allocated_train_steady", vec![]),
        (Phase::TrainFirstIter, "peak_allocated_train_iter0", vec![]),
        (Phase::Eval, "peak_allocated_eval", vec![]),
    ];
    let mut report = String::new();
    for run in measured_runs("calibration.jsonl") {
        let a = analyze(&config(&run), &Budget::for_gpu(card)).unwrap();
        for (phase, key, errs) in phases.iter_mut() {
            if let Some(m) = measured(&run, key) {
                errs.push((a.phase_bytes(*phase).unwrap_or(0) as f64 - m).abs() / m);
            }
        }
        if run["status"] == "ok" {
            let m = measured_peak(&run);
            let e = (a.peak_bytes() as f64 - m) / m;
            report += &format!("{:28} {:+.2}%\n", run["name"].as_str().unwrap(), e * 100.0);
            overall.push(e.abs());
        }
    }
    let (med, max) = (
        median(overall.clone()),
        overall.iter().cloned().fold(0.0, f64::max),
    );
    assert!(med <= 0.001, "overall median {:.3}%\n{report}", med * 100.0);
    assert!(max <= 0.01, "overall max {:.3}%\n{report}", max * 100.0);
    for (phase, _, errs) in phases {
        let med = median(errs);
        assert!(med <= 0.002, "{phase:?} median {:.3}%", med * 100.0);
    }
}

/// Does it fit: every run capped on purpose (a 12 GB or 24 GB card's budget), replayed under
/// that budget, must end as it did: all of them, default allocator and expandable segments.
#[test]
fn capped_runs_fit_or_fail_as_measured() {
    let card = gpu::find("h100").unwrap();
    let mut wrong = Vec::new();
    let mut n = 0;
    for run in measured_runs("calibration.jsonl")
        .iter()
        .filter(|r| r["cap_on_purpose"] == true)
    {
        let cap = run["allocator_cap_gib"].as_f64().unwrap();
        let budget = Budget::for_gpu(card)
            .with_total_gib(cap)
            .unwrap()
            .with_context_gib(0.0)
            .unwrap();
        let a = analyze(&config(run), &budget).unwrap();
        n += 1;
        if a.verdict.fits != (run["status"] == "ok") {
            wrong.push(run["name"].as_str().unwrap().to_string());
        }
    }
    assert!(n >= 26, "{n} capped runs");
    assert!(wrong.is_empty(), "wrong verdicts: {wrong:?}");
}

/// The simulation's reserved memory against the measured `peak_reserved` of runs that fit;
/// and of the eager runs the harness's cap never pressed (no cache released:
/// `num_alloc_retries` 0), each: their request streams are the traces' request by request
/// (data/traces/l_b4_default-, char_fp32_b64_default-, exp_s_b16_uncapped-events.json.gz), so
/// the replay reserves what they did. (Compiled runs differ by what a warm Inductor cache
/// skipped; runs whose cap released cache are compared uncapped, which they were not.)
#[test]
fn reserved_memory_as_measured() {
    let card = gpu::find("h100").unwrap();
    let (mut errs, mut eager) = (Vec::new(), Vec::new());
    for run in measured_runs("calibration.jsonl")
        .iter()
        .filter(|r| r["status"] == "ok")
    {
        let a = analyze(&config(run), &Budget::for_gpu(card)).unwrap();
        let m = measured(run, "peak_reserved").unwrap();
        let err = (a.free_run.peak_reserved as f64 - m).abs() / m;
        errs.push(err);
        if run["config"]["compile"] == false && run["num_alloc_retries"] == 0 {
            eager.push((err, run["name"].as_str().unwrap().to_string()));
        }
    }
    let med = median(errs.clone());
    assert!(med <= 0.001, "median {:.3}%", med * 100.0);
    let worst = eager
        .iter()
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .cloned()
        .unwrap_or_default();
    println!(
        "eager, cap never pressed: {} runs, median {:.3}%, worst {:.3}% ({})",
        eager.len(),
        median(eager.iter().map(|e| e.0).collect()) * 100.0,
        worst.0 * 100.0,
        worst.1
    );
    assert!(eager.len() >= 55, "{} eager runs", eager.len());
    assert!(
        worst.0 <= 0.002,
        "worst {:.3}% ({})",
        worst.0 * 100.0,
        worst.1
    );
}

/// `after_model_to_device` is the parameters (and the manual path's mask buffers) as the caching
/// allocator counts them: the allocator-rounding model must reproduce it to the byte.
#[test]
fn model_load_matches_to_the_byte() {
    for run in measured_runs("calibration.jsonl") {
        let cfg = config(&run);
        let est = estimate(&cfg, gpu::find("h100").unwrap()).unwrap();
        let masks = if cfg.attention == estimator::Attention::Manual {
            4 * u128::from(cfg.n_layer) * u128::from(cfg.block_size).pow(2)
        } else {
            0
        };
        let predicted = 4 * u128::from(est.params.total) + masks + model_rounding(&cfg);
        let m = run["measured_bytes"]["after_model_to_device"]
            .as_u64()
            .unwrap() as u128;
        assert_eq!(predicted, m, "{}", run["name"]);
    }
}
