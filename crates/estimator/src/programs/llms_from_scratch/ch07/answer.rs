//! gpt_instruction_finetuning.py's part of the JSON answer: its settings by the script's names and
//! its data's, its parameters and phases (`eval` the initial losses and `evaluate_model`,
//! `eval_after_step` the samples and the responses), what its fix search found; and each fix's
//! lines to edit.

use super::fixes::{edits, Ch07FixReport};
use super::{params, Ch07Analysis, Ch07Config};
use crate::programs::answer::{Object, Params, PeakBytes, Scalar};

/// The settings as the answer's `config` has them.
pub type Settings = Object<Scalar>;

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Answer {
    /// The script's settings and the data's, by their names.
    pub config: Settings,
    pub params: Params,
    pub peak_bytes: PeakBytes,
    /// Examples and tokens per optimizer step (no accumulation: one batch at its widest).
    pub effective_batch: u64,
    pub tokens_per_iter: u64,
    /// `ddp` is train.py's (the script trains on one GPU).
    pub ddp: Option<()>,
    /// Optimizer steps per epoch (`len(train_loader)`).
    pub steps_per_epoch: u64,
    pub largest_batch_size_that_fits: Option<u32>,
}

/// The settings by their names, numbers and booleans as JSON's.
pub fn settings(cfg: &Ch07Config) -> Settings {
    crate::programs::answer::settings_of(super::config::KEYS, |k| cfg.get(k))
}

pub fn answer(a: &Ch07Analysis, fixes: Option<&Ch07FixReport>) -> Answer {
    let cfg = &a.config;
    let total = params(cfg);
    Answer {
        config: settings(cfg),
        params: Params {
            total,
            reported: total,
            scaling: None,
        },
        peak_bytes: PeakBytes::of(&a.run),
        effective_batch: u64::from(cfg.batch_size),
        tokens_per_iter: u64::from(cfg.batch_size) * u64::from(cfg.width()),
        ddp: None,
        steps_per_epoch: cfg.train_batches(),
        largest_batch_size_that_fits: fixes.and_then(|r| r.largest_batch_that_fits),
    }
}

/// One fix: its lines to edit.
pub type FixAnswer = crate::programs::answer::EditedFix;

pub fn fix_answers(a: &Ch07Analysis, fixes: &Ch07FixReport) -> Vec<FixAnswer> {
    fixes
        .fixes
        .iter()
        .map(|f| FixAnswer {
            edits: edits(&f.config, &a.config),
            risk: f.verdict.risk,
            tokens_per_iter: u64::from(f.config.batch_size) * u64::from(f.config.width()),
        })
        .collect()
}
