//! Fixes for a nanochat run with base_train.py's own knobs, each replayed like the run itself and
//! ranked by the shared order (`engine::ranking`): fits first, then what it costs training.
//!
//! The knobs: `--device-batch-size` with `--total-batch-size` kept (more micro-steps, the same
//! optimisation), expandable segments (base_train.py sets them; a run that started CUDA first
//! loses them), a shorter `--max-seq-len` with the same tokens per step, a smaller
//! `--device-batch-size` with a smaller total batch, a smaller `--depth`, bf16 matmuls instead of
//! `--fp8`, twice the GPUs, and closing what else holds the card.

use super::config::{NanochatConfig, Script};
use super::{analyze, fits_on_card};
use crate::config::Allocator;
use crate::engine::ranking::{largest, sort, Impact, Ranked};
use crate::engine::verdict::Verdict;
use crate::gpu::Budget;
use crate::programs::fix_view::FixesView;

crate::engine::fix_kinds! {
    /// The kinds of nanochat fix.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum NanochatFixKind {
        /// Smaller `--device-batch-size`, `--total-batch-size` kept: more micro-steps.
        DeviceBatchKeepTotal,
        /// `PYTORCH_ALLOC_CONF=expandable_segments:True` in effect from the start.
        ExpandableSegments,
        /// Close what else uses the card.
        FreeTheCard,
        /// Smaller `--device-batch-size` and a total batch smaller by as much.
        DeviceBatchSmallerTotal,
        /// Shorter `--max-seq-len`, the same tokens per step.
        ShorterContext,
        /// Smaller `--depth` (a narrower model too: model_dim follows depth).
        ShallowerModel,
        /// `--core-metric-every=-1`: no CORE evaluation, whose uncompiled forward on long few-shot
        /// examples can hold the peak.
        CoreOff,
        /// No CORE evaluation and a smaller `--device-batch-size` with the total kept.
        CoreOffWithDeviceBatch,
        /// No `--fp8`: bf16 matmuls, whose lm_head backward holds less (see the sequence's
        /// `fp8_lm_head`).
        Fp8Off,
        /// Twice the GPUs (`--nproc_per_node`), `--total-batch-size` kept: MuonAdamW shards its
        /// state and the AdamW gradients over the ranks.
        MoreGpus,
    }
}

impl NanochatFixKind {
    pub const fn id(self) -> &'static str {
        match self {
            NanochatFixKind::DeviceBatchKeepTotal => "device_batch_keep_total",
            NanochatFixKind::ExpandableSegments => "expandable_segments",
            NanochatFixKind::FreeTheCard => "free_the_card",
            NanochatFixKind::DeviceBatchSmallerTotal => "device_batch_smaller_total",
            NanochatFixKind::ShorterContext => "shorter_context",
            NanochatFixKind::ShallowerModel => "shallower_model",
            NanochatFixKind::CoreOff => "core_off",
            NanochatFixKind::CoreOffWithDeviceBatch => "core_off_with_device_batch",
            NanochatFixKind::Fp8Off => "fp8_off",
            NanochatFixKind::MoreGpus => "more_gpus",
        }
    }
}

/// One evaluated change.
pub type NanochatFix = Ranked<NanochatConfig, NanochatFixKind>;

/// `(flag, value)` of every flag `fix` changes, hyphenated as base_train.py spells them.
pub fn changed_flags(fix: &NanochatFix, from: &NanochatConfig) -> Vec<(String, String)> {
    from.keys()
        .iter()
        .filter(|k| **k != "allocator")
        .filter_map(|k| {
            let (a, b) = (from.get(k)?, fix.config.get(k)?);
            (a != b).then(|| (k.to_string(), b))
        })
        .collect()
}

/// `python -m scripts.base_train …` (or torchrun's) with every flag that differs from the
/// script's defaults. No allocator setting: base_train.py sets expandable segments itself at
/// import, so only a process that started CUDA before it (a notebook, a harness) runs without.
pub fn launch_line(cfg: &NanochatConfig) -> String {
    let flags: Vec<String> = cfg
        .changed_flags()
        .into_iter()
        .filter(|f| {
            // vramfit's own settings are not the script's flags
            let name = f.trim_start_matches("--").split('=').next().unwrap_or("");
            cfg.is_script_flag(name)
        })
        .collect();
    let module = match cfg.script {
        Script::Base => "scripts.base_train",
        Script::Sft => "scripts.chat_sft",
    };
    let launcher = if cfg.world_size > 1 {
        format!(
            "torchrun --standalone --nproc_per_node={} -m {module} --",
            cfg.world_size
        )
    } else {
        format!("python -m {module}")
    };
    let mut line = launcher;
    for f in flags {
        line.push(' ');
        line.push_str(&f);
    }
    line
}

/// The ranked fixes of a run on a card.
#[derive(Clone, Debug, PartialEq)]
pub struct NanochatFixReport {
    pub current: Verdict,
    pub current_peak: u128,
    /// Ranked, best first.
    pub fixes: Vec<NanochatFix>,
    /// The largest `--device-batch-size` that fits with `--total-batch-size` kept.
    pub largest_device_batch_that_fits: Option<u32>,
    /// When CORE runs: the longest CORE example (choices × tokens) this card can evaluate after
    /// training (`None`: not even one token, or CORE off).
    pub largest_core_example_that_fits: Option<u64>,
}

/// Device batch sizes below `below` that keep `total` tokens per step: B·T·world must divide it.
fn batches_keeping_total(cfg: &NanochatConfig, below: u32) -> Vec<u32> {
    let per = u64::from(cfg.max_seq_len) * u64::from(cfg.world_size);
    let total = cfg.total_batch_tokens();
    (1..below)
        .filter(|&b| total.is_multiple_of(u64::from(b) * per))
        .collect()
}

/// Ranks every fix for `cfg` on `budget`'s card (`None` when the config itself is invalid).
pub fn rank_fixes(cfg: &NanochatConfig, budget: &Budget) -> Option<NanochatFixReport> {
    let base = analyze(cfg, budget).ok()?;
    let base_peak = base.peak_bytes();
    let fits = |c: &NanochatConfig| fits_on_card(c, budget);
    let evaluate = |kind, impact, config: NanochatConfig, other: u128| {
        Ranked::evaluate(kind, impact, config, other, budget, base_peak, |c, b| {
            analyze(c, b).ok().map(|a| (a.peak_bytes(), a.run.verdict))
        })
    };
    // the total batch as a number, so that changing the device batch keeps it
    let pinned = NanochatConfig {
        total_batch_size: cfg.total_batch_tokens() as i64,
        ..cfg.clone()
    };
    let with_batch = |b: u32| NanochatConfig {
        device_batch_size: b,
        ..pinned.clone()
    };
    let mut fixes: Vec<NanochatFix> = Vec::new();
    let other = budget.other_bytes;

    let keeping = batches_keeping_total(cfg, cfg.device_batch_size);
    if let Some(b) = largest(&keeping, |b| fits(&with_batch(b))).or(keeping.first().copied()) {
        fixes.extend(evaluate(
            NanochatFixKind::DeviceBatchKeepTotal,
            Impact::Slower,
            with_batch(b),
            other,
        ));
    }
    if cfg.fp8 {
        // offered only where bf16 holds less: at a large model_dim and a small vocabulary the
        // weight copies and activations fp8 does not keep outweigh its lm_head backward
        let bf16 = NanochatConfig {
            fp8: false,
            ..cfg.clone()
        };
        fixes.extend(
            evaluate(NanochatFixKind::Fp8Off, Impact::Slower, bf16, other)
                .filter(|f| f.saving_bytes > 0),
        );
    }
    // more GPUs, as a torchrun line: each rank owns fewer Muon matrices and AdamW slices, and the
    // same total batch takes fewer micro-steps; listed like the other programs' "add GPUs", so
    // nobody buys a card for an out-of-memory it would not fix
    let more = NanochatConfig {
        world_size: cfg.world_size * 2,
        ..cfg.clone()
    };
    if cfg.world_size < 8 {
        fixes.extend(
            evaluate(NanochatFixKind::MoreGpus, Impact::MoreGpus, more, other).map(|mut f| {
                if f.saving_bytes <= 0 {
                    f.impact = Impact::NotAFix;
                }
                f
            }),
        );
    }
    if cfg.allocator == Allocator::Default {
        fixes.extend(evaluate(
            NanochatFixKind::ExpandableSegments,
            Impact::Nothing,
            NanochatConfig {
                allocator: Allocator::ExpandableSegments,
                ..cfg.clone()
            },
            other,
        ));
    }
    if other > 0 {
        fixes.extend(evaluate(
            NanochatFixKind::FreeTheCard,
            Impact::Nothing,
            cfg.clone(),
            0,
        ));
    }
    // a smaller micro-batch with the same number of micro-steps: fewer tokens per step
    let smaller_total = |b: u32| NanochatConfig {
        device_batch_size: b,
        total_batch_size: (u64::from(b)
            * u64::from(cfg.max_seq_len)
            * u64::from(cfg.world_size)
            * cfg.grad_accum_steps()) as i64,
        ..cfg.clone()
    };
    let below: Vec<u32> = (1..cfg.device_batch_size).collect();
    if let Some(b) = largest(&below, |b| fits(&smaller_total(b))) {
        if !keeping.contains(&b) || fixes.is_empty() {
            fixes.extend(evaluate(
                NanochatFixKind::DeviceBatchSmallerTotal,
                Impact::GradientNoise,
                smaller_total(b),
                other,
            ));
        }
    }
    // a shorter context in powers of two (nanochat's windows tile by 128), same tokens per step
    let shorter: Vec<NanochatConfig> = (1..=4)
        .map(|k| cfg.max_seq_len >> k)
        .filter(|&t| t >= 128)
        .map(|t| NanochatConfig {
            max_seq_len: t,
            ..pinned.clone()
        })
        .filter(|c| c.validate().is_ok())
        .collect();
    if let Some(c) = shorter.iter().find(|c| fits(c)) {
        fixes.extend(evaluate(
            NanochatFixKind::ShorterContext,
            Impact::ContextLength,
            c.clone(),
            other,
        ));
    }
    // a shallower model: the total batch follows depth where it was automatic (base_train.py
    // only: chat_sft.py fine-tunes the checkpoint it is given)
    let depths: Vec<u32> = if cfg.script == Script::Base {
        (1..cfg.depth).collect()
    } else {
        Vec::new()
    };
    let with_depth = |d: u32| NanochatConfig {
        depth: d,
        ..cfg.clone()
    };
    if let Some(d) = largest(&depths, |d| {
        let c = with_depth(d);
        c.validate().is_ok() && fits(&c)
    }) {
        fixes.extend(evaluate(
            NanochatFixKind::ShallowerModel,
            Impact::ModelCapacity,
            with_depth(d),
            other,
        ));
    }

    if cfg.models_core() {
        let no_core = NanochatConfig {
            core_metric_every: -1,
            ..cfg.clone()
        };
        let alone = fits(&no_core);
        fixes.extend(evaluate(
            NanochatFixKind::CoreOff,
            Impact::Evaluation,
            no_core.clone(),
            other,
        ));
        // where training does not fit either: both changes
        let with_batch = |b: u32| NanochatConfig {
            device_batch_size: b,
            total_batch_size: pinned.total_batch_size,
            ..no_core.clone()
        };
        if !alone {
            if let Some(b) = largest(&keeping, |b| fits(&with_batch(b))) {
                fixes.extend(evaluate(
                    NanochatFixKind::CoreOffWithDeviceBatch,
                    Impact::Evaluation,
                    with_batch(b),
                    other,
                ));
            }
        }
    }

    // fits first (with room, then tight), then what it costs training, then the larger saving
    sort(&mut fixes);
    let all_batches = batches_keeping_total(cfg, 1 << 16);
    let largest_device_batch_that_fits = largest(&all_batches, |b| fits(&with_batch(b)));
    // CORE's example sizes come from its data: say how long an example this card can take
    let core_fits = |n: u64| {
        fits(&NanochatConfig {
            core_max_tokens: n,
            ..cfg.clone()
        })
    };
    let largest_core_example_that_fits = if cfg.core_metric_every > 0 && core_fits(1) {
        // bisection over 1..2^24 tokens: the largest that fits
        let (mut ok, mut bad) = (1u64, 1u64 << 24);
        while bad - ok > 1 {
            let mid = ok + (bad - ok) / 2;
            if core_fits(mid) {
                ok = mid;
            } else {
                bad = mid;
            }
        }
        Some(ok)
    } else {
        None
    };
    Some(NanochatFixReport {
        current: base.run.verdict,
        current_peak: base_peak,
        fixes,
        largest_device_batch_that_fits,
        largest_core_example_that_fits,
    })
}

/// base_train.py's and chat_sft.py's fixes as every front-end shows them: each with its launch
/// line (`freed`: what other processes hold on the card).
pub fn view(report: &NanochatFixReport, from: &NanochatConfig, freed: u128) -> FixesView {
    use crate::programs::fix_view::{Fact, FixView, FixWords, Value};
    use crate::programs::seam::Paste;
    let fixes = report
        .fixes
        .iter()
        .map(|f| {
            let c = &f.config;
            let values = vec![
                ("world", Value::int(c.world_size)),
                ("old_world", Value::int(from.world_size)),
                ("batch", Value::int(c.device_batch_size)),
                ("old_batch", Value::int(from.device_batch_size)),
                ("accum", Value::int(c.grad_accum_steps())),
                ("old_accum", Value::int(from.grad_accum_steps())),
                ("total", Value::int(c.total_batch_tokens())),
                ("old_total", Value::int(from.total_batch_tokens())),
                ("seq", Value::int(c.max_seq_len)),
                ("old_seq", Value::int(from.max_seq_len)),
                ("depth", Value::int(c.depth)),
                ("old_depth", Value::int(from.depth)),
                ("params", Value::Params(super::Shape::of(c).total_params())),
                ("freed", Value::Gib(freed)),
            ];
            let tokens = Fact::Tokens(from.total_batch_tokens(), c.total_batch_tokens());
            let line = vec![(Paste::Command, launch_line(c))];
            FixView::ranked(
                f,
                FixWords {
                    kind: f.kind.id(),
                    values,
                    notes: Vec::new(),
                },
                vec![tokens],
                line,
            )
        })
        .collect();
    FixesView {
        fits_now: report.current.fits,
        largest: report
            .largest_device_batch_that_fits
            .map(|n| vec![("n", Value::int(n))]),
        fixes,
        seconds_now: None,
    }
}
