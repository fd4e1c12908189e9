//! LLMs-from-scratch's ch06 gpt_class_finetune.py against every measured run of it
//! (data/measured/llms-from-scratch-ch06.jsonl: the real script on an H200 with PyTorch 2.11,
//! tools/llms-from-scratch-probe): each phase of the replayed run — the first step, later steps,
//! `evaluate_model`, the accuracy passes after each epoch — within median 0.5 % and worst 3 % of
//! `torch.cuda.max_memory_allocated()`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_within_targets, project_runs, score_phases};
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

const PHASES: [(&str, &[Phase]); 4] = [
    ("peak_allocated_train_iter0", &[Phase::TrainFirstIter]),
    ("peak_allocated_train_steady", &[Phase::TrainSteady]),
    ("peak_allocated_eval", &[Phase::Eval]),
    ("peak_allocated_accuracy", &[Phase::EvalAfterStep]),
];

#[test]
fn measured_runs_within_targets() {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let runs = project_runs("llms-from-scratch-ch06.jsonl");
    assert_eq!(runs.len(), 29);
    let scored = score_phases(&runs, &PHASES, |run| {
        analyze(&config(run), &budget).unwrap().run
    });
    eprintln!("{}", scored.1);
    for (key, med, max) in &scored.0 {
        eprintln!(
            "{key}: median {:.3}% worst {:.3}%",
            med * 100.0,
            max * 100.0
        );
    }
    assert_within_targets(scored, 0.03);
}
