//! gpt_train.py's part of the JSON answer: its dicts' settings and its data's token counts, its
//! parameters and phases (`eval` is `evaluate_model`, `eval_after_step` the samples printed after
//! each epoch), what its fix search found; and each fix's dict entries to edit.

use super::fixes::{edits, Ch05FixReport};
use super::{params, Ch05Analysis, Ch05Config};
use crate::programs::answer::{Object, Params, PeakBytes, Scalar};

/// The settings as the answer's `config` has them.
pub type Settings = Object<Scalar>;

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Answer {
    /// The dicts' keys and the data's token counts, by their names.
    pub config: Settings,
    pub params: Params,
    pub peak_bytes: PeakBytes,
    /// Sequences and tokens per optimizer step (no accumulation: one batch).
    pub effective_batch: u64,
    pub tokens_per_iter: u64,
    /// `ddp` is train.py's (the script trains on one GPU).
    pub ddp: Option<()>,
    /// Optimizer steps per epoch (`len(train_loader)`) and validation sequences.
    pub steps_per_epoch: u64,
    pub val_sequences: u64,
    pub largest_batch_size_that_fits: Option<u32>,
}

/// The settings by their names, numbers and booleans as JSON's.
pub fn settings(cfg: &Ch05Config) -> Settings {
    crate::programs::answer::settings_of(super::config::KEYS, |k| cfg.get(k))
}

pub fn answer(a: &Ch05Analysis, fixes: Option<&Ch05FixReport>) -> Answer {
    let cfg = &a.config;
    let batch = super::batch(cfg);
    Answer {
        config: settings(cfg),
        params: Params {
            total: params(cfg),
            reported: params(cfg),
            scaling: None,
        },
        peak_bytes: PeakBytes::of(&a.run),
        effective_batch: batch.sequences,
        tokens_per_iter: batch.tokens,
        ddp: None,
        steps_per_epoch: cfg.train_batches(),
        val_sequences: cfg.val_sequences(),
        largest_batch_size_that_fits: fixes.and_then(|r| r.largest_batch_that_fits),
    }
}

/// One fix: its lines to edit.
pub type FixAnswer = crate::programs::answer::EditedFix;

pub fn fix_answers(a: &Ch05Analysis, fixes: &Ch05FixReport) -> Vec<FixAnswer> {
    fixes
        .fixes
        .iter()
        .map(|f| FixAnswer {
            edits: edits(&f.config, &a.config),
            risk: f.verdict.risk,
            tokens_per_iter: u64::from(f.config.batch_size) * u64::from(f.config.context_length),
        })
        .collect()
}
