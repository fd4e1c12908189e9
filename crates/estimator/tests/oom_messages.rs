//! Every real out-of-memory message (data/oom-messages) parses to the numbers it holds,
//! and the run's own config explains which tensor failed, where.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use estimator::configurator::Configurator;
use estimator::oom::{diagnose, parse};
use estimator::TrainConfig;
use serde_json::Value;

/// `rel` under the repository root (data/: copies of the shared measurements, data/README.md).
fn in_repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// Every "<number> <unit>" in the text, in bytes.
fn sizes_in(text: &str) -> Vec<u128> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == ')' || c == ',')
        .collect();
    words
        .windows(2)
        .filter_map(|w| {
            let x: f64 = w[0].parse().ok()?;
            let unit = match w[1].trim_end_matches('.') {
                "GiB" => 1u64 << 30,
                "MiB" => 1 << 20,
                "KiB" => 1 << 10,
                _ => return None,
            };
            Some((x * unit as f64).round() as u128)
        })
        .collect()
}

fn run_config(name: &str) -> Option<TrainConfig> {
    let text = std::fs::read_to_string(in_repo("data/measured/calibration.jsonl")).unwrap();
    let run: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["name"] == name)?;
    let mut c = Configurator::new();
    for (k, v) in run["config"].as_object().unwrap() {
        let v = match v {
            Value::Bool(b) => {
                if *b {
                    "True".into()
                } else {
                    "False".into()
                }
            }
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        c.apply_override(&format!("--{k}={v}")).unwrap();
    }
    Some(c.finish().unwrap().0)
}

#[test]
fn every_message_parses_to_its_numbers() {
    let dir = in_repo("data/oom-messages");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let m = parse(&text);
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        assert!(m.recognised, "{name}");
        for (field, v) in [
            ("tried_to_allocate", m.tried_to_allocate_bytes),
            ("total_capacity", m.total_capacity_bytes),
            ("free", m.free_bytes),
            ("process_in_use", m.process_in_use_bytes),
            ("allocated_by_pytorch", m.allocated_by_pytorch_bytes),
            ("reserved_unallocated", m.reserved_unallocated_bytes),
            ("allowed", m.allowed_bytes),
        ] {
            assert!(v.is_some(), "{name}: {field}");
        }
        // every size in the text is one of the fields read
        let mut read: Vec<u128> = [
            m.tried_to_allocate_bytes,
            m.total_capacity_bytes,
            m.free_bytes,
            m.process_in_use_bytes,
            m.allocated_by_pytorch_bytes,
            m.reserved_unallocated_bytes,
            m.allowed_bytes,
        ]
        .into_iter()
        .flatten()
        .chain(m.other_processes.iter().map(|p| p.1))
        .collect();
        let mut in_text = sizes_in(&text);
        read.sort_unstable();
        in_text.sort_unstable();
        assert_eq!(read, in_text, "{name}");
        assert_eq!(
            m.other_processes.len(),
            text.matches("Process ").count(),
            "{name}"
        );
        n += 1;
    }
    assert!(n >= 12, "{n} messages");
}

#[test]
fn the_runs_config_explains_the_failure() {
    for entry in std::fs::read_dir(in_repo("data/oom-messages")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let Some(cfg) = run_config(&name) else {
            continue;
        };
        let m = parse(&std::fs::read_to_string(&path).unwrap());
        let d = diagnose(&m, &cfg).unwrap_or_else(|| panic!("{name}: no tensor of this size"));
        assert!(
            (d.tensor_bytes as f64 - m.tried_to_allocate_bytes.unwrap() as f64).abs()
                < 0.005 * d.tensor_bytes as f64,
            "{name}"
        );
        // the vocabulary-sized loss tensors are what fail in all of these runs
        assert!(
            matches!(
                d.term,
                estimator::Term::Logits
                    | estimator::Term::LogSoftmax
                    | estimator::Term::LossFp32Copy
                    | estimator::Term::LossGrads
                    | estimator::Term::ZeroTangent
            ),
            "{name}: {:?}",
            d.term
        );
    }
}
