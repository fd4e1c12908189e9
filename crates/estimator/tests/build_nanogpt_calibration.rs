//! build-nanogpt's train_gpt2.py against every measured run of it (data/measured/
//! build-nanogpt.jsonl: the real script on an H100 with PyTorch 2.11, tools/build-nanogpt-probe):
//! each phase of the replayed run within median 0.5 % and worst 3 % of
//! `torch.cuda.max_memory_allocated()`. The runs held out at random before the model was written
//! (build-nanogpt-heldout.jsonl) are held to the same targets.

#![allow(clippy::unwrap_used)]

mod common;

use common::{median, project_runs};

use estimator::programs::build_nanogpt::{analyze, BngConfig};
use estimator::{gpu, Budget, Phase};
use serde_json::Value;

/// The run's constants, as the CLI takes them.
fn config(run: &Value) -> BngConfig {
    let c = &run["config"];
    let mut args = Vec::new();
    for k in [
        "B",
        "T",
        "total_batch_size",
        "n_layer",
        "n_head",
        "n_embd",
        "vocab_size",
        "block_size",
    ] {
        args.push(format!("--{k}={}", c[k]));
    }
    let compile = if c["use_compile"].as_bool().unwrap() {
        "True"
    } else {
        "False"
    };
    args.push(format!("--use_compile={compile}"));
    let alloc = match c["allocator"].as_str().unwrap() {
        "expandable" | "expandable_segments" => "expandable_segments",
        _ => "default",
    };
    args.push(format!("--allocator={alloc}"));
    BngConfig::from_args(&args).unwrap()
}

fn check(file: &str) {
    let budget = Budget::for_gpu(gpu::find("h100").unwrap());
    let phases: [(&str, &[Phase]); 3] = [
        ("peak_allocated_eval", &[Phase::Eval, Phase::EvalAfterStep]),
        ("peak_allocated_train_iter0", &[Phase::TrainFirstIter]),
        ("peak_allocated_train_steady", &[Phase::TrainSteady]),
    ];
    let mut errs: Vec<Vec<f64>> = vec![Vec::new(); 3];
    let mut table = String::new();
    for run in project_runs(file) {
        let a = analyze(&config(&run), &budget).unwrap();
        table += &format!("{:28}", run["name"].as_str().unwrap());
        for (i, (key, ps)) in phases.iter().enumerate() {
            let m = run["measured_bytes"][key].as_f64().unwrap();
            let p = ps.iter().filter_map(|&p| a.phase_bytes(p)).max().unwrap() as f64;
            errs[i].push((p - m).abs() / m);
            table += &format!("  {}: {:+.2}%", &key[14..], (p - m) / m * 100.0);
        }
        table += "\n";
    }
    eprintln!("{table}");
    for (i, (key, _)) in phases.iter().enumerate() {
        let (med, max) = (
            median(errs[i].clone()),
            errs[i].iter().cloned().fold(0.0, f64::max),
        );
        assert!(
            med <= 0.005 && max <= 0.03,
            "{key}: median {:.3}% worst {:.3}%\n{table}",
            med * 100.0,
            max * 100.0
        );
    }
}

#[test]
fn measured_runs_within_targets() {
    check("build-nanogpt.jsonl");
}

#[test]
fn held_out_runs_within_targets() {
    check("build-nanogpt-heldout.jsonl");
}
