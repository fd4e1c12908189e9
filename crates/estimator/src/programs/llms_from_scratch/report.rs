//! What gpt_train.py's report says beside its run: the model, the batch and the data, the
//! settings that change memory, and what the numbers assume.

use super::{params, Ch05Analysis, Ch05Config};
use crate::programs::report::{py_bool, Label, Line, Report, Value};

/// The words of the program's report section (`crates/i18n/cli/*.txt`).
pub const WORDS: &[&str] = &[
    "model",
    "batch",
    "settings",
    "notes.no_training",
    "notes.no_validation",
    "notes.ddp_one",
];

pub fn report(a: &Ch05Analysis) -> Report {
    let cfg = &a.config;
    let head = vec![
        (
            Label::Model,
            Line::new(
                "model",
                vec![
                    ("layers", Value::int(cfg.n_layers)),
                    ("heads", Value::int(cfg.n_heads)),
                    ("emb", Value::int(cfg.emb_dim)),
                    ("ctx", Value::int(cfg.context_length)),
                    ("vocab", Value::int(cfg.vocab_size)),
                    ("params", Value::Params(params(cfg))),
                    // the speed scripts' line names the one that runs (gpt_train.py's its own)
                    ("script", Value::Text(cfg.script_file().into())),
                ],
            ),
        ),
        (
            Label::Batch,
            Line::new(
                "batch",
                vec![
                    ("b", Value::int(cfg.batch_size)),
                    ("ctx", Value::int(cfg.context_length)),
                    // the speed scripts' processes (gpt_train.py's words leave it out: always 1)
                    ("gpus", Value::int(cfg.nproc_per_node)),
                    ("steps", Value::int(cfg.train_batches())),
                    ("epochs", Value::int(cfg.num_epochs)),
                    ("train_tokens", Value::int(cfg.train_tokens)),
                    ("val_tokens", Value::int(cfg.val_tokens)),
                ],
            ),
        ),
        (
            Label::Settings,
            Line::new(
                "settings",
                vec![
                    (
                        "drop",
                        Value::Text(cfg.get("drop_rate").unwrap_or_default()),
                    ),
                    ("qkv_bias", py_bool(cfg.qkv_bias)),
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
pub fn notes(cfg: &Ch05Config) -> Vec<&'static str> {
    let mut notes = Vec::new();
    if cfg.train_batches() == 0 {
        notes.push("no_training");
    }
    if cfg.val_sequences() == 0 {
        notes.push("no_validation");
    }
    if cfg.ddp_on_one_gpu() {
        notes.push("ddp_one");
    }
    notes
}
