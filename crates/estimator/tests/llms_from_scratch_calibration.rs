//! LLMs-from-scratch's ch05 gpt_train.py against every measured run of it (data/measured/
//! llms-from-scratch-ch05.jsonl: the real script on an H200 with PyTorch 2.11,
//! tools/llms-from-scratch-probe): each phase of the replayed run — the first step, later steps,
//! `evaluate_model`, `generate_and_print_sample` — within median 0.5 % and worst 3 % of
//! `torch.cuda.max_memory_allocated()`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_within_targets, project_runs, score_phases};
use estimator::programs::llms_from_scratch::{analyze, Ch05Config};
use estimator::{gpu, Budget, Phase};
use serde_json::Value;

/// The run's settings as the CLI takes them: the dicts' keys, and the splits' token counts (or,
/// `whole`, the text's count, split 90 / 10 as the script splits its characters).
fn config(run: &Value, whole: bool) -> Ch05Config {
    let c = &run["config"];
    let mut args: Vec<String> = [
        "vocab_size",
        "context_length",
        "emb_dim",
        "n_heads",
        "n_layers",
        "drop_rate",
        "qkv_bias",
        "batch_size",
        "num_epochs",
    ]
    .iter()
    .map(|k| {
        let v = match &c[*k] {
            Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            other => other.to_string(),
        };
        format!("--{k}={v}")
    })
    .collect();
    if whole {
        args.push(format!("--text_tokens={}", c["text_tokens"]));
    } else {
        args.push(format!("--train_tokens={}", c["train_text_tokens"]));
        args.push(format!("--val_tokens={}", c["val_text_tokens"]));
    }
    Ch05Config::from_args(&args).unwrap()
}

const PHASES: [(&str, &[Phase]); 4] = [
    ("peak_allocated_train_iter0", &[Phase::TrainFirstIter]),
    ("peak_allocated_train_steady", &[Phase::TrainSteady]),
    ("peak_allocated_eval", &[Phase::Eval]),
    ("peak_allocated_generate", &[Phase::EvalAfterStep]),
];

#[test]
fn measured_runs_within_targets() {
    check(false);
}

/// Given only the text's token count, as a reader knows it, the same targets hold.
#[test]
fn measured_runs_within_targets_from_the_texts_token_count() {
    check(true);
}

fn check(whole: bool) {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let runs = project_runs("llms-from-scratch-ch05.jsonl");
    let scored = score_phases(&runs, &PHASES, |run| {
        analyze(&config(run, whole), &budget).unwrap().run
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
