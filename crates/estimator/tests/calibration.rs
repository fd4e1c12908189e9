//! The estimator against every measured run of nanoGPT's train.py (shared/data/measured):
//! the accuracy targets of the Foundation issue, asserted.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use estimator::allocator_rounding::model_rounding;
use estimator::configurator::Configurator;
use estimator::{estimate, gpu, Phase, TrainConfig};
use serde_json::Value;

fn runs() -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/measured/calibration.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The run's config as the scoring tool passes it: `--key=value` per field.
fn config(run: &Value) -> TrainConfig {
    let mut c = Configurator::new();
    for (k, v) in run["config"].as_object().unwrap() {
        let value = match v {
            Value::Bool(true) => "True".to_string(),
            Value::Bool(false) => "False".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        c.apply_override(&format!("--{k}={value}")).unwrap();
    }
    c.finish().unwrap().0
}

fn measured(run: &Value, key: &str) -> Option<f64> {
    run["measured_bytes"][key].as_f64().filter(|v| *v > 0.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[test]
fn peaks_within_targets() {
    let card = gpu::find("h100").unwrap();
    let mut overall = Vec::new();
    let mut phases: [(Phase, &str, Vec<f64>); 3] = [
        (Phase::TrainSteady, "peak_allocated_train_steady", vec![]),
        (Phase::TrainFirstIter, "peak_allocated_train_iter0", vec![]),
        (Phase::Eval, "peak_allocated_eval", vec![]),
    ];
    let mut report = String::new();
    for run in runs() {
        let est = estimate(&config(&run), card).unwrap();
        for (phase, key, errs) in phases.iter_mut() {
            if let Some(m) = measured(&run, key) {
                errs.push((est.phase_bytes(*phase) as f64 - m).abs() / m);
            }
        }
        if run["status"] == "ok" {
            let m = [
                "peak_allocated_train_steady",
                "peak_allocated_train_iter0",
                "peak_allocated_eval",
            ]
            .iter()
            .filter_map(|k| measured(&run, k))
            .fold(0.0, f64::max);
            let e = (est.peak_bytes() as f64 - m) / m;
            report += &format!("{:28} {:+.2}%\n", run["name"].as_str().unwrap(), e * 100.0);
            overall.push(e.abs());
        }
    }
    let (med, max) = (
        median(overall.clone()),
        overall.iter().cloned().fold(0.0, f64::max),
    );
    assert!(med <= 0.005, "overall median {:.3}%\n{report}", med * 100.0);
    assert!(max <= 0.03, "overall max {:.3}%\n{report}", max * 100.0);
    for (phase, _, errs) in phases {
        let med = median(errs);
        assert!(med <= 0.01, "{phase:?} median {:.3}%", med * 100.0);
    }
}

/// `after_model_to_device` is the parameters (and the manual path's mask buffers) as the caching
/// allocator counts them: the allocator-rounding model must reproduce it to the byte.
#[test]
fn model_load_matches_to_the_byte() {
    for run in runs() {
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
