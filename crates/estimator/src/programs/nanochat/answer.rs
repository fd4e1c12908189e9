//! nanochat's part of the JSON answer: its flags, the model its depth gives, its phases, each
//! rank's peaks under `torchrun`, and what its fix searches found; and each fix's flags and
//! launch line.

use super::fixes::{changed_flags, launch_line, NanochatFixReport};
use super::NanochatAnalysis;
use crate::engine::events::Phase;
use crate::programs::answer::{Object, Params, PeakBytes, Scalar};
use crate::verdict::Risk;

/// The settings as the answer's `config` has them.
pub type Settings = Object<Scalar>;

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Answer {
    /// Every setting under the JSON's names (the flags' with underscores).
    pub config: Settings,
    pub model: Model,
    pub params: Params,
    pub peak_bytes: PeakBytes,
    /// Tokens per optimizer step.
    pub total_batch_size: u64,
    pub grad_accum_steps: u64,
    pub effective_batch: u64,
    pub tokens_per_iter: u64,
    /// `ddp` is train.py's; nanochat's GPUs are in `ranks`.
    pub ddp: Option<()>,
    /// More than one GPU: the bound the verdict used, and each run of ranks' peaks; `null` on one.
    pub ranks: Option<Ranks>,
    pub largest_device_batch_size_that_fits: Option<u32>,
    pub largest_core_example_that_fits: Option<u64>,
}

/// The model `--depth` gives.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Model {
    pub n_layer: u64,
    pub model_dim: u64,
    pub n_head: u64,
    pub head_dim: u64,
    pub vocab_size: u64,
    pub value_embedding_layers: u64,
    pub sliding_window_layers: u64,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Ranks {
    pub world_size: u32,
    pub held_steps: u32,
    pub step_seconds: f64,
    pub watchdog_seconds: f64,
    pub one_step_held_peak_bytes: u128,
    pub nccl_bytes: u128,
    pub each: Vec<RankRun>,
}

/// Ranks `first..=last`, whose runs are the same.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RankRun {
    pub first: u32,
    pub last: u32,
    pub peak_bytes: RankPeaks,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RankPeaks {
    pub overall: u128,
    pub train_steady: Option<u128>,
    pub train_first_iter: Option<u128>,
    pub eval_first: Option<u128>,
    pub eval_after_step: Option<u128>,
}

/// A setting's text as JSON's value: a number where it is one (the window pattern stays text).
fn scalar(key: &str, text: String) -> Scalar {
    if key == "window-pattern" {
        return Scalar::Text(text);
    }
    match text.parse::<i64>() {
        Ok(n) => Scalar::Int(n),
        Err(_) => match crate::decimal::parse(&text) {
            Some(x) => Scalar::Float(x),
            None => Scalar::Text(text),
        },
    }
}

/// The config's settings under the JSON answer's names (underscores), numbers as numbers.
pub fn settings(cfg: &super::NanochatConfig) -> Settings {
    Object(
        cfg.keys()
            .iter()
            .filter_map(|k| Some((k.replace('-', "_"), scalar(k, cfg.get(k)?))))
            .collect(),
    )
}

pub fn answer(a: &NanochatAnalysis, fixes: Option<&NanochatFixReport>) -> Answer {
    let cfg = &a.config;
    let s = &a.shape;
    let phase = |p| a.phase_bytes(p);
    Answer {
        config: settings(cfg),
        model: Model {
            n_layer: s.l,
            model_dim: s.c,
            n_head: s.h,
            head_dim: s.d,
            vocab_size: s.v,
            value_embedding_layers: s.n_ve(),
            sliding_window_layers: s.n_masked(),
        },
        params: Params {
            total: s.total_params(),
            reported: s.total_params(),
            scaling: Some(s.scaling_params()),
        },
        peak_bytes: PeakBytes {
            overall: a.peak_bytes(),
            train_steady: phase(Phase::TrainSteady),
            train_first_iter: phase(Phase::TrainFirstIter),
            train_first_iter_warm: a.first_iter_warm().map(Some),
            eval: phase(Phase::Eval).max(phase(Phase::EvalAfterStep)),
            eval_first: Some(phase(Phase::Eval)),
            eval_after_step: phase(Phase::EvalAfterStep),
            core: Some(phase(Phase::Core)),
            reserved: a.free_run.peak_reserved,
        },
        total_batch_size: cfg.total_batch_tokens(),
        grad_accum_steps: cfg.grad_accum_steps(),
        effective_batch: cfg.total_batch_tokens() / u64::from(cfg.max_seq_len),
        tokens_per_iter: cfg.total_batch_tokens(),
        ddp: None,
        ranks: a.ranks.as_ref().map(|r| Ranks {
            world_size: r.world_size,
            held_steps: r.held_stashes,
            step_seconds: r.step_seconds,
            watchdog_seconds: super::speed::WATCHDOG_INTERVAL_S,
            one_step_held_peak_bytes: r.one_stash_peak,
            nccl_bytes: r.nccl_bytes,
            each: r
                .rank_peaks
                .iter()
                .map(|p| RankRun {
                    first: p.first,
                    last: p.last,
                    peak_bytes: RankPeaks {
                        overall: p.peak_bytes,
                        train_steady: p.phase(Phase::TrainSteady),
                        train_first_iter: p.phase(Phase::TrainFirstIter),
                        eval_first: p.phase(Phase::Eval),
                        eval_after_step: p.phase(Phase::EvalAfterStep),
                    },
                })
                .collect(),
        }),
        largest_device_batch_size_that_fits: fixes.and_then(|r| r.largest_device_batch_that_fits),
        largest_core_example_that_fits: fixes.and_then(|r| r.largest_core_example_that_fits),
    }
}

/// nanochat's fields of one fix.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FixAnswer {
    /// The flags it changes, under the JSON's names.
    pub changes: Object<String>,
    /// The launch line to paste.
    pub command: String,
    pub risk: Risk,
    /// Tokens per optimizer step after the change.
    pub total_batch_size: u64,
    pub tokens_per_iter: u64,
}

pub fn fix_answers(a: &NanochatAnalysis, fixes: &NanochatFixReport) -> Vec<FixAnswer> {
    fixes
        .fixes
        .iter()
        .map(|f| FixAnswer {
            changes: Object(
                changed_flags(f, &a.config)
                    .into_iter()
                    .map(|(k, v)| (k.replace('-', "_"), v))
                    .collect(),
            ),
            command: launch_line(&f.config),
            risk: f.verdict.risk,
            total_batch_size: f.config.total_batch_tokens(),
            tokens_per_iter: f.config.total_batch_tokens(),
        })
        .collect()
}
