//! gpt_class_finetune.py's part of the JSON answer: its settings by the script's names and its
//! data's, its parameters (all, and those it trains) and phases (`eval` is `evaluate_model`,
//! `eval_after_step` the accuracy passes after each epoch), what its fix search found; and each
//! fix's lines to edit.

use super::fixes::{edits, Ch06FixReport};
use super::{params, Ch06Analysis, Ch06Config};
use crate::programs::answer::{Object, Params, PeakBytes, Scalar};

/// The settings as the answer's `config` has them.
pub type Settings = Object<Scalar>;

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Answer {
    /// The script's settings and the data's, by their names.
    pub config: Settings,
    pub params: Params,
    /// The parameters with a gradient: the last block, `final_norm`, the new head.
    pub trainable_params: u64,
    pub peak_bytes: PeakBytes,
    /// Texts and tokens per optimizer step (no accumulation: one batch).
    pub effective_batch: u64,
    pub tokens_per_iter: u64,
    /// `ddp` is train.py's (the script trains on one GPU).
    pub ddp: Option<()>,
    /// Optimizer steps per epoch (`len(train_loader)`).
    pub steps_per_epoch: u64,
    pub largest_batch_size_that_fits: Option<u32>,
}

/// The settings by their names, numbers and booleans as JSON's.
pub fn settings(cfg: &Ch06Config) -> Settings {
    crate::programs::answer::settings_of(super::config::KEYS, |k| cfg.get(k))
}

pub fn answer(a: &Ch06Analysis, fixes: Option<&Ch06FixReport>) -> Answer {
    let cfg = &a.config;
    let (total, trained) = params(cfg);
    Answer {
        config: settings(cfg),
        params: Params {
            total,
            reported: total,
            scaling: None,
        },
        trainable_params: trained,
        peak_bytes: PeakBytes::of(&a.run),
        effective_batch: u64::from(cfg.batch_size),
        tokens_per_iter: u64::from(cfg.batch_size) * u64::from(cfg.max_length),
        ddp: None,
        steps_per_epoch: cfg.train_batches(),
        largest_batch_size_that_fits: fixes.and_then(|r| r.largest_batch_that_fits),
    }
}

/// One fix: its lines to edit.
pub type FixAnswer = crate::programs::answer::EditedFix;

pub fn fix_answers(a: &Ch06Analysis, fixes: &Ch06FixReport) -> Vec<FixAnswer> {
    fixes
        .fixes
        .iter()
        .map(|f| FixAnswer {
            edits: edits(&f.config, &a.config),
            risk: f.verdict.risk,
            tokens_per_iter: u64::from(f.config.batch_size) * u64::from(f.config.max_length),
        })
        .collect()
}
