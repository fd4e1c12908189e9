//! What nanochat's report says beside its run: the model its depth gives, the batch, the
//! settings that change memory, each rank's peaks under `torchrun`, and what the numbers assume.

use super::config::Script;
use super::fixes::NanochatFixReport;
use super::{NanochatAnalysis, NanochatAttention, NanochatConfig};
use crate::programs::report::{Label, Line, Report, Value};

/// The words of nanochat's report section (`crates/i18n/cli/*.txt`).
pub const WORDS: &[&str] = &[
    "model",
    "batch",
    "settings",
    "ranks",
    "first_run",
    "core_fits",
    "notes.cold-inductor",
    "notes.sft-inherits",
    "notes.fa3",
    "notes.core",
    "notes.sampling",
];

pub fn report(a: &NanochatAnalysis, fixes: Option<&NanochatFixReport>) -> Report {
    let cfg = &a.config;
    let s = &a.shape;
    let script = match cfg.script {
        Script::Base => "base_train.py",
        Script::Sft => "chat_sft.py",
    };
    let head = vec![
        (
            Label::Model,
            Line::new(
                "model",
                vec![
                    ("script", Value::Text(script.into())),
                    ("depth", Value::int(s.l)),
                    ("dim", Value::int(s.c)),
                    ("heads", Value::int(s.h)),
                    ("head_dim", Value::int(s.d)),
                    ("vocab", Value::int(s.v)),
                    ("params", Value::Params(s.total_params())),
                ],
            ),
        ),
        (
            Label::Batch,
            Line::new(
                "batch",
                vec![
                    ("batch", Value::int(cfg.device_batch_size)),
                    ("seq", Value::int(cfg.max_seq_len)),
                    ("micro", Value::int(cfg.grad_accum_steps())),
                    ("total", Value::int(cfg.total_batch_tokens())),
                ],
            ),
        ),
        (
            Label::Settings,
            Line::new(
                "settings",
                vec![
                    ("pattern", Value::Text(cfg.window_pattern.to_string())),
                    ("attention", Value::Text(cfg.attention.as_str().into())),
                    ("dtype", Value::Text(dtype_word(cfg).into())),
                    ("allocator", Value::Text(cfg.allocator.as_str().into())),
                ],
            ),
        ),
    ];
    let mut lines: Vec<Line> = a
        .ranks
        .iter()
        .map(|r| {
            let each = r
                .rank_peaks
                .iter()
                .map(|p| {
                    let ranks = if p.first == p.last {
                        p.first.to_string()
                    } else {
                        format!("{}–{}", p.first, p.last)
                    };
                    (ranks, Value::Gib(p.peak_bytes))
                })
                .collect();
            Line::new(
                "ranks",
                vec![
                    ("world", Value::int(r.world_size)),
                    ("held", Value::int(r.held_stashes)),
                    ("step", Value::Seconds(r.step_seconds)),
                    ("one", Value::Gib(r.one_stash_peak)),
                    ("nccl", Value::Gib(r.nccl_bytes)),
                    ("ranks", Value::List(each)),
                ],
            )
        })
        .collect();
    // a first run's iteration 0 (the answer's) and a second run's, where they differ
    if let Some((cold, warm)) = a.first_and_second_run() {
        lines.push(Line::new(
            "first_run",
            vec![("cold", Value::Bytes(cold)), ("warm", Value::Bytes(warm))],
        ));
    }
    let fix_lines = fixes
        .and_then(|r| r.largest_core_example_that_fits)
        .map(|n| Line::new("core_fits", vec![("n", Value::int(n))]))
        .into_iter()
        .collect();
    Report {
        head,
        lines,
        fix_lines,
    }
}

/// What the numbers assume, by the names of the section's notes.
pub fn notes(cfg: &NanochatConfig) -> Vec<&'static str> {
    // chat_sft.py runs the base run's graphs: its cache holds their choices (sequence.rs `cold`)
    let mut w = vec![];
    match cfg.script {
        Script::Base => w.push("cold-inductor"),
        Script::Sft => w.push("sft-inherits"),
    }
    if cfg.attention == NanochatAttention::Fa3 {
        w.push("fa3");
    }
    if cfg.core_metric_every > 0 && cfg.core_max_tokens == 0 {
        w.push("core");
    }
    if cfg.sample_every > 0 {
        w.push("sampling");
    }
    w
}

/// The compute dtype as the report names it (the analysis's config has it resolved for the card).
fn dtype_word(cfg: &NanochatConfig) -> &'static str {
    if cfg.compute_bytes() == 4 {
        "fp32"
    } else if cfg.fp8 {
        "bf16 with fp8 matmuls (--fp8)"
    } else {
        "bf16"
    }
}
