//! build-nanogpt's part of the JSON answer: its constants, parameters and phases, and what its
//! fix searches found; and each fix's lines of the script to edit.

use super::fixes::{edits, BngFixReport};
use super::{BngAnalysis, BngConfig};
use crate::engine::events::Phase;
use crate::programs::answer::{Object, Params, PeakBytes, Scalar};

/// The settings as the answer's `config` has them.
pub type Settings = Object<Scalar>;

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Answer {
    /// The script's constants by their names.
    pub config: Settings,
    pub params: Params,
    pub peak_bytes: PeakBytes,
    pub grad_accum_steps: u64,
    pub effective_batch: u64,
    pub tokens_per_iter: u64,
    /// `ddp` is train.py's.
    pub ddp: Option<()>,
    #[cfg_attr(feature = "serde", serde(rename = "largest_B_that_fits"))]
    pub largest_b_that_fits: Option<u32>,
}

/// The script's constants by their names, numbers and booleans as JSON's.
pub fn settings(cfg: &BngConfig) -> Settings {
    crate::programs::answer::settings_of(super::config::KEYS, |k| cfg.get(k))
}

pub fn answer(a: &BngAnalysis, fixes: Option<&BngFixReport>) -> Answer {
    let cfg = &a.config;
    let phase = |p| a.phase_bytes(p);
    Answer {
        config: settings(cfg),
        params: Params {
            total: a.params(),
            reported: a.params(),
            scaling: None,
        },
        peak_bytes: PeakBytes {
            overall: a.peak_bytes(),
            train_steady: phase(Phase::TrainSteady),
            train_first_iter: phase(Phase::TrainFirstIter),
            train_first_iter_warm: None,
            eval: phase(Phase::Eval).max(phase(Phase::EvalAfterStep)),
            eval_first: Some(phase(Phase::Eval)),
            eval_after_step: phase(Phase::EvalAfterStep),
            core: None,
            reserved: a.free_run.peak_reserved,
        },
        grad_accum_steps: cfg.grad_accum_steps(),
        effective_batch: cfg.total_batch_size / u64::from(cfg.t),
        tokens_per_iter: cfg.total_batch_size,
        ddp: None,
        largest_b_that_fits: fixes.and_then(|r| r.largest_b_that_fits),
    }
}

/// One fix: its lines to edit.
pub type FixAnswer = crate::programs::answer::EditedFix;

pub fn fix_answers(a: &BngAnalysis, fixes: &BngFixReport) -> Vec<FixAnswer> {
    fixes
        .fixes
        .iter()
        .map(|f| FixAnswer {
            edits: edits(f, &a.config),
            risk: f.verdict.risk,
            tokens_per_iter: f.config.total_batch_size,
        })
        .collect()
}
