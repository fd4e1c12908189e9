//! train.py's part of the JSON answer: its settings, parameters and phases, the moments of an
//! iteration, each GPU's share under DDP, and what its fix searches found; and each fix's
//! settings, command line and effect on the batch and the time.

use super::analysis::Analysis;
use super::fixes::{Fix, FixReport};
use crate::engine::events::Phase;
use crate::gpu::Budget;
use crate::input::pyliteral::PyValue;
use crate::programs::answer::{Object, Params, PeakBytes};
use crate::verdict::Risk;

/// train.py's settings as the answer's `config` has them.
pub type Settings = Object<PyValue>;

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Answer {
    /// Every setting, under train.py's names.
    pub config: Settings,
    pub params: Params,
    /// `eval` is the first `estimate_loss()` (before any step), `eval_after_step` the later ones.
    pub peak_bytes: PeakBytes,
    /// The peaks at the moments of an iteration.
    pub moments: Vec<MomentPeak>,
    pub effective_batch: u64,
    pub tokens_per_iter: u64,
    /// Per-GPU memory and time under DDP; `null` on one GPU.
    /// Boxed: most runs have none, and the program answers' enum stays small.
    pub ddp: Option<Box<Ddp>>,
    pub largest_batch_size_that_fits: Option<u32>,
    /// Seconds an iteration takes now (the speed model).
    pub iter_seconds: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct MomentPeak {
    pub phase: Phase,
    pub moment: &'static str,
    pub micro_step: u32,
    pub bytes: u128,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Ddp {
    pub world_size: u32,
    pub accum_per_rank: u32,
    pub worst_rank: u32,
    pub bucket_bytes: u128,
    pub rebuild_transient_bytes: u128,
    pub steady_without_rebuild_bytes: u128,
    pub per_rank: [RankPeak; 2],
    pub link_gbps: f64,
    pub allreduce_bytes: u128,
    pub allreduce_seconds: f64,
    pub exposed_allreduce_seconds: f64,
    pub single_gpu_iter_seconds: f64,
    pub speedup: f64,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RankPeak {
    pub ranks: String,
    pub peak_bytes: u128,
    pub runs_estimate_loss: bool,
    /// Reserved at the peak with the old bucket set released before iteration 1's rebuild, and
    /// held through it (the verdict's): NCCL's watchdog decides which a run sees (ddp.rs).
    pub reserved_released_bytes: Option<u128>,
    pub reserved_held_bytes: Option<u128>,
}

/// Every setting, under train.py's names, in the JSON's order.
pub fn settings(cfg: &crate::TrainConfig) -> Settings {
    Object(
        crate::FIELDS_JSON_ORDER
            .iter()
            .filter_map(|k| cfg.get(k).map(|v| (k.to_string(), v)))
            .collect(),
    )
}

pub fn answer(a: &Analysis, fixes: Option<&FixReport>, budget: &Budget, mfu: f64) -> Answer {
    let est = &a.estimate;
    let cfg = &est.config;
    let phase = |p| a.phase_bytes(p);
    Answer {
        config: settings(cfg),
        params: Params {
            total: est.params.total,
            reported: est.params.reported,
            scaling: None,
        },
        peak_bytes: PeakBytes {
            overall: a.peak_bytes(),
            train_steady: phase(Phase::TrainSteady),
            train_first_iter: phase(Phase::TrainFirstIter),
            train_first_iter_warm: None,
            eval: phase(Phase::Eval),
            eval_first: None,
            eval_after_step: phase(Phase::EvalAfterStep),
            core: None,
            reserved: a.free_run.peak_reserved,
        },
        moments: est
            .moments
            .iter()
            .map(|m| MomentPeak {
                phase: m.phase,
                moment: m.moment.id(),
                micro_step: m.micro_step,
                bytes: m.total(),
            })
            .collect(),
        effective_batch: cfg.effective_batch(),
        tokens_per_iter: cfg.tokens_per_iter(),
        ddp: ddp(a, budget, mfu).map(Box::new),
        largest_batch_size_that_fits: fixes.and_then(|r| r.largest_batch_that_fits),
        iter_seconds: fixes.map(|r| r.current_seconds),
    }
}

fn ddp(a: &Analysis, budget: &Budget, mfu: f64) -> Option<Ddp> {
    let r = a.ranks()?;
    let t = a.iter_time(&budget.gpu, mfu);
    let last = r.world_size - 1;
    let others = if last == 1 {
        "1".to_string()
    } else {
        format!("1-{last}")
    };
    Some(Ddp {
        world_size: r.world_size,
        accum_per_rank: r.accum_per_rank,
        worst_rank: r.worst_rank,
        bucket_bytes: r.bucket_bytes,
        rebuild_transient_bytes: r.rebuild_bytes,
        steady_without_rebuild_bytes: r.steady_without_rebuild,
        per_rank: [
            RankPeak {
                ranks: "0".into(),
                peak_bytes: r.rank0_peak,
                runs_estimate_loss: true,
                reserved_released_bytes: r.reserved.map(|x| x.rank0[0]),
                reserved_held_bytes: r.reserved.map(|x| x.rank0[1]),
            },
            RankPeak {
                ranks: others,
                peak_bytes: r.other_ranks_peak,
                runs_estimate_loss: false,
                reserved_released_bytes: r.reserved.map(|x| x.others[0]),
                reserved_held_bytes: r.reserved.map(|x| x.others[1]),
            },
        ],
        link_gbps: budget.gpu.link_gbps,
        allreduce_bytes: t.allreduce_bytes,
        allreduce_seconds: t.allreduce_seconds,
        exposed_allreduce_seconds: t.exposed_seconds,
        single_gpu_iter_seconds: t.single_gpu_seconds,
        speedup: t.speedup(),
    })
}

/// train.py's fields of one fix.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FixAnswer {
    /// The settings it changes, the environment it sets, the file it patches (`patch`), and
    /// `other_gib: 0` where it frees the card.
    pub changes: Object<PyValue>,
    /// The whole train.py line to run; `null` where the fix is a code change or freeing the
    /// card, which no flag says.
    pub command: Option<String>,
    pub risk: Risk,
    pub headroom_bytes: i128,
    pub effective_batch: u64,
    pub tokens_per_iter: u64,
    pub effective_batch_kept: bool,
    pub iter_time_ratio: f64,
    pub params_reported: u64,
}

pub fn fix_answers(a: &Analysis, fixes: &FixReport, budget: &Budget) -> Vec<FixAnswer> {
    let from = &a.estimate.config;
    fixes
        .fixes
        .iter()
        .map(|f| fix_answer(f, from, budget))
        .collect()
}

fn fix_answer(f: &Fix, from: &crate::TrainConfig, budget: &Budget) -> FixAnswer {
    let mut changes: Vec<(String, PyValue)> = f
        .changed_keys(from)
        .into_iter()
        .filter_map(|(k, _)| f.config.get(k).map(|v| (k.to_string(), v)))
        .collect();
    if let Some((k, v)) = f.env(from) {
        changes.push((k.to_string(), PyValue::Str(v.to_string())));
    }
    if f.patches.eval_batch_size.is_some() {
        changes.push(("patch".into(), PyValue::Str("train.py".into())));
    }
    if f.patches.checkpoint_blocks || f.patches.chunked_loss {
        changes.push(("patch".into(), PyValue::Str("model.py".into())));
    }
    let frees_the_card = f.other_bytes < budget.other_bytes;
    if frees_the_card {
        changes.push(("other_gib".into(), PyValue::Float(0.0)));
    }
    let command = (f.patches == super::physics::Patches::default() && !frees_the_card)
        .then(|| super::snippet::command_line(&f.config, None));
    FixAnswer {
        changes: Object(changes),
        command,
        risk: f.verdict.risk,
        headroom_bytes: f.verdict.headroom_bytes,
        effective_batch: f.effective_batch,
        tokens_per_iter: f.tokens_per_iter,
        effective_batch_kept: f.effective_batch_kept,
        iter_time_ratio: f.iter_time_ratio,
        params_reported: f.params_reported,
    }
}
