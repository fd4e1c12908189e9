//! Reading the measured runs (shared/data/measured/*.jsonl), shared by the tests that check
//! the estimator against them.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses its own part

use std::path::PathBuf;

use estimator::configurator::Configurator;
use estimator::TrainConfig;
use serde_json::Value;

/// One JSON object per line of `shared/data/measured/<file>`.
pub fn measured_runs(file: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/measured")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// One JSON object per line of this project's own measurements, `data/measured/<file>` (how
/// each was taken: tools/*-probe/README.md).
pub fn project_runs(file: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/measured")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The middle value (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The run's config as the scoring tool passes it: `--key=value` per field.
pub fn config(run: &Value) -> TrainConfig {
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

/// A measured byte count (`None` where the run did not reach that phase).
pub fn measured(run: &Value, key: &str) -> Option<f64> {
    run["measured_bytes"][key].as_f64().filter(|v| *v > 0.0)
}

/// What `max_memory_allocated` reported over the whole run.
pub fn measured_peak(run: &Value) -> f64 {
    [
        "peak_allocated_train_steady",
        "peak_allocated_train_iter0",
        "peak_allocated_eval",
    ]
    .iter()
    .filter_map(|k| measured(run, k))
    .fold(0.0, f64::max)
}
