//! What gpt_instruction_finetuning.py's report says beside its run: the model, the batch and the
//! data, and the settings that change memory.

use super::super::ch06::config::MODEL_NAMES;
use super::{params, Ch07Analysis};
use crate::programs::report::{Label, Line, Report, Value};

/// The words of the program's report section (`crates/i18n/cli/*.txt`).
pub const WORDS: &[&str] = &["model", "batch", "settings"];

pub fn report(a: &Ch07Analysis) -> Report {
    let cfg = &a.config;
    let (emb, layers, heads) = cfg.dims();
    let total = params(cfg);
    let head = vec![
        (
            Label::Model,
            Line::new(
                "model",
                vec![
                    ("model", Value::Text(MODEL_NAMES[cfg.model].into())),
                    ("layers", Value::int(layers)),
                    ("heads", Value::int(heads)),
                    ("emb", Value::int(emb)),
                    ("params", Value::Params(total)),
                ],
            ),
        ),
        (
            Label::Batch,
            Line::new(
                "batch",
                vec![
                    ("b", Value::int(cfg.batch_size)),
                    ("len", Value::int(cfg.width())),
                    ("steps", Value::int(cfg.train_batches())),
                    ("epochs", Value::int(cfg.num_epochs)),
                    ("train_rows", Value::int(cfg.train_rows())),
                    ("val_rows", Value::int(cfg.val_rows())),
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
