//! LLMs-from-scratch's ch06 gpt_class_finetune.py against every measured run of it
//! (data/measured/llms-from-scratch-ch06.jsonl: the real script on an H200 with PyTorch 2.11,
//! tools/llms-from-scratch-probe): each phase of the replayed run — the first step, later steps,
//! `evaluate_model`, the accuracy passes after each epoch — within median 0.5 % and worst 3 % of
//! `torch.cuda.max_memory_allocated()`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{median, project_runs};
use estimator::programs::llms_from_scratch::ch06::{analyze, Ch06Config};
use estimator::{gpu, Budget, Phase};
use serde_json::Value;

/// The run's settings as the CLI takes them: the script's names, and the data's longest text.
fn config(run: &Value) -> Ch06Config {
    let c = &run["config"];
    let args = [
        format!("--CHOOSE_MODEL={}", c["choose_model"].as_str().unwrap()),
        format!("--batch_size={}", c["batch_size"]),
        format!("--num_epochs={}", c["num_epochs"]),
        format!("--drop_rate={}", c["drop_rate"]),
        format!("--max_length={}", c["max_length"]),
        format!("--train_rows={}", run["dataset"]["train_rows"]),
        format!("--val_rows={}", run["dataset"]["val_rows"]),
    ];
    Ch06Config::from_args(&args).unwrap()
}

const PHASES: [(&str, Phase); 4] = [
    ("peak_allocated_train_iter0", Phase::TrainFirstIter),
    ("peak_allocated_train_steady", Phase::TrainSteady),
    ("peak_allocated_eval", Phase::Eval),
    ("peak_allocated_accuracy", Phase::EvalAfterStep),
];

#[test]
fn measured_runs_within_targets() {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let runs = project_runs("llms-from-scratch-ch06.jsonl");
    let mut errs = vec![Vec::new(); PHASES.len()];
    let mut reserved = Vec::new();
    let mut table = String::new();
    for run in &runs {
        let a = analyze(&config(run), &budget).unwrap();
        table += &format!("{:24}", run["name"].as_str().unwrap());
        for (i, (key, phase)) in PHASES.iter().enumerate() {
            let Some(m) = run["measured_bytes"][key].as_f64().filter(|m| *m > 0.0) else {
                continue;
            };
            let p = a.phase_bytes(*phase).unwrap_or(0) as f64;
            errs[i].push((p - m).abs() / m);
            table += &format!(" {}:{:+.3}%", &key[15..], (p - m) / m * 100.0);
        }
        let m = run["measured_bytes"]["peak_reserved"].as_f64().unwrap();
        let r = a.run.free_run.peak_reserved as f64;
        reserved.push((r - m).abs() / m);
        table += &format!(" reserved:{:+.2}%\n", (r - m) / m * 100.0);
    }
    eprintln!("{table}");
    for ((key, _), e) in PHASES.iter().zip(&errs) {
        let (med, max) = (median(e.clone()), e.iter().cloned().fold(0.0, f64::max));
        eprintln!(
            "{key}: median {:.3}% worst {:.3}%",
            med * 100.0,
            max * 100.0
        );
    }
    eprintln!(
        "reserved: median {:.3}% worst {:.3}%",
        median(reserved.clone()) * 100.0,
        reserved.iter().cloned().fold(0.0, f64::max) * 100.0
    );
    assert_eq!(runs.len(), 29);
    for ((key, _), e) in PHASES.iter().zip(&errs) {
        let (med, max) = (median(e.clone()), e.iter().cloned().fold(0.0, f64::max));
        assert!(
            med <= 0.005 && max <= 0.03,
            "{key}: median {med} worst {max}\n{table}"
        );
    }
}
