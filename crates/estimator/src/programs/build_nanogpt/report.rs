//! What build-nanogpt's report says beside its run: the model, the batch, the settings that
//! change memory, and what the numbers assume.

use super::{BngAnalysis, BngConfig};
use crate::programs::report::{py_bool, Label, Line, Report, Value};

/// The words of build-nanogpt's report section (`crates/i18n/cli/*.txt`).
pub const WORDS: &[&str] = &["model", "batch", "settings", "notes.evals", "notes.ddp"];

pub fn report(a: &BngAnalysis) -> Report {
    let cfg = &a.config;
    let head = vec![
        (
            Label::Model,
            Line::new(
                "model",
                vec![
                    ("layers", Value::int(cfg.n_layer)),
                    ("heads", Value::int(cfg.n_head)),
                    ("embd", Value::int(cfg.n_embd)),
                    ("vocab", Value::int(cfg.vocab_size)),
                    ("params", Value::Params(a.params())),
                ],
            ),
        ),
        (
            Label::Batch,
            Line::new(
                "batch",
                vec![
                    ("b", Value::int(cfg.b)),
                    ("t", Value::int(cfg.t)),
                    ("micro", Value::int(cfg.grad_accum_steps())),
                    ("total", Value::int(cfg.total_batch_size)),
                ],
            ),
        ),
        (
            Label::Settings,
            Line::new(
                "settings",
                vec![
                    ("compile", py_bool(cfg.use_compile)),
                    ("allocator", Value::Text(cfg.allocator.as_str().into())),
                ],
            ),
        ),
    ];
    Report {
        head,
        ..Report::default()
    }
}

/// What the numbers assume, by the names of the section's notes.
pub fn notes(cfg: &BngConfig) -> Vec<&'static str> {
    let mut notes = Vec::new();
    if !cfg.use_compile {
        notes.push("evals");
    }
    if cfg.model().is_ddp() {
        notes.push("ddp");
    }
    notes
}
