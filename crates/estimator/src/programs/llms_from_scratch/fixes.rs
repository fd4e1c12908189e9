//! Fixes for a gpt_train.py run with the script's own dict keys, each replayed like the run and
//! ranked in the shared order (`engine::ranking`): expandable segments, a smaller `batch_size`
//! (the script has no gradient accumulation: a smaller batch is noisier gradients), no dropout
//! (its masks and outputs go), a shorter `context_length` (the book's own "Shortened context
//! length (orig: 1024)"), fewer layers, and closing what else holds the card.

use super::config::Ch05Config;
use super::{analyze, fits_on_card};
use crate::config::Allocator;
use crate::engine::ranking::{largest, sort, Impact, Ranked};
use crate::engine::verdict::Verdict;
use crate::gpu::Budget;
use crate::programs::fix_view::FixesView;

crate::engine::fix_kinds! {
    /// The kinds of gpt_train.py fix.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Ch05FixKind {
        /// `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.
        ExpandableSegments,
        FreeTheCard,
        /// The largest `batch_size` that fits.
        SmallerBatch,
        /// `"drop_rate": 0.0`.
        NoDropout,
        /// A shorter `context_length`.
        ShorterContext,
        /// Fewer `n_layers`.
        FewerLayers,
        /// `python 01_opt_single_gpu.py` for `02_opt_multi_gpu_ddp.py` on one GPU: no DDP buckets.
        SingleGpuScript,
    }
}

impl Ch05FixKind {
    pub const fn id(self) -> &'static str {
        match self {
            Ch05FixKind::ExpandableSegments => "expandable_segments",
            Ch05FixKind::FreeTheCard => "free_the_card",
            Ch05FixKind::SmallerBatch => "smaller_batch",
            Ch05FixKind::NoDropout => "no_dropout",
            Ch05FixKind::ShorterContext => "shorter_context",
            Ch05FixKind::FewerLayers => "fewer_layers",
            Ch05FixKind::SingleGpuScript => "single_gpu_script",
        }
    }
}

/// One evaluated change.
pub type Ch05Fix = Ranked<Ch05Config, Ch05FixKind>;

/// The dict entries to edit in gpt_train.py for `fix`, as the script writes them
/// (`"batch_size": 1,  # was 2`), and the environment variable where the fix needs one.
pub fn edits(fix: &Ch05Config, from: &Ch05Config) -> Vec<String> {
    let mut out: Vec<String> = super::config::DICT_KEYS
        .iter()
        .filter_map(|k| {
            let (a, b) = (from.get(k)?, fix.get(k)?);
            (a != b).then(|| format!("\"{k}\": {b},  # was {a}"))
        })
        .collect();
    if fix.allocator == Allocator::ExpandableSegments
        && from.allocator != Allocator::ExpandableSegments
    {
        out.push("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into());
    }
    if from.ddp && !fix.ddp {
        out.push(format!(
            "python 01_opt_single_gpu.py  # not {}",
            super::config::DDP_SCRIPT
        ));
    }
    out
}

/// The ranked fixes of a run on a card.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch05FixReport {
    pub current: Verdict,
    pub current_peak: u128,
    pub fixes: Vec<Ch05Fix>,
    /// The largest `batch_size` that fits with the rest kept.
    pub largest_batch_that_fits: Option<u32>,
}

/// Ranks every fix for `cfg` on `budget`'s card (`None` when the config itself is invalid).
pub fn rank_fixes(cfg: &Ch05Config, budget: &Budget) -> Option<Ch05FixReport> {
    let base = analyze(cfg, budget).ok()?;
    let base_peak = base.peak_bytes();
    let fits = |c: &Ch05Config| fits_on_card(c, budget);
    let evaluate = |kind, impact, config: Ch05Config, other: u128| {
        Ranked::evaluate(kind, impact, config, other, budget, base_peak, |c, b| {
            analyze(c, b).ok().map(|a| (a.peak_bytes(), a.run.verdict))
        })
    };
    let with_batch = |c: &Ch05Config, batch_size: u32| Ch05Config {
        batch_size,
        ..c.clone()
    };
    let other = budget.other_bytes;
    let mut fixes: Vec<Ch05Fix> = Vec::new();

    if cfg.allocator == Allocator::Default {
        let expandable = Ch05Config {
            allocator: Allocator::ExpandableSegments,
            ..cfg.clone()
        };
        fixes.extend(evaluate(
            Ch05FixKind::ExpandableSegments,
            Impact::Nothing,
            expandable,
            other,
        ));
    }
    // the book's single-GPU script trains the same model without DDP's buckets
    if cfg.ddp_on_one_gpu() {
        let single = Ch05Config {
            ddp: false,
            ..cfg.clone()
        };
        fixes.extend(evaluate(
            Ch05FixKind::SingleGpuScript,
            Impact::Nothing,
            single,
            other,
        ));
    }
    if other > 0 {
        fixes.extend(evaluate(
            Ch05FixKind::FreeTheCard,
            Impact::Nothing,
            cfg.clone(),
            0,
        ));
    }
    let smaller: Vec<u32> = (1..cfg.batch_size).collect();
    if let Some(b) = largest(&smaller, |b| fits(&with_batch(cfg, b))).or(smaller.first().copied()) {
        fixes.extend(evaluate(
            Ch05FixKind::SmallerBatch,
            Impact::GradientNoise,
            with_batch(cfg, b),
            other,
        ));
    }
    if cfg.drop_rate > 0.0 {
        let no_dropout = Ch05Config {
            drop_rate: 0.0,
            ..cfg.clone()
        };
        fixes.extend(evaluate(
            Ch05FixKind::NoDropout,
            Impact::Regularization,
            no_dropout,
            other,
        ));
    }
    // halving, as the book shortens 1024 to 256
    if let Some(c) = (1..=4)
        .map(|k| cfg.context_length >> k)
        .filter(|&t| t >= 16)
        .map(|context_length| Ch05Config {
            context_length,
            ..cfg.clone()
        })
        .find(|c| fits(c))
    {
        fixes.extend(evaluate(
            Ch05FixKind::ShorterContext,
            Impact::ContextLength,
            c,
            other,
        ));
    }
    let with_layers = |n_layers| Ch05Config {
        n_layers,
        ..cfg.clone()
    };
    let layers: Vec<u32> = (1..cfg.n_layers).collect();
    if let Some(l) = largest(&layers, |l| fits(&with_layers(l))) {
        fixes.extend(evaluate(
            Ch05FixKind::FewerLayers,
            Impact::ModelCapacity,
            with_layers(l),
            other,
        ));
    }
    // a change that frees nothing is no fix (a shorter context or a smaller batch can make a run
    // whose split held no full batch train, and cost memory)
    fixes.retain(|f| f.saving_bytes > 0);
    sort(&mut fixes);
    // every batch_size that trains (a larger one leaves the training loader empty): a search that
    // stopped short would call its cap the largest
    let trains = cfg
        .train_sequences()
        .min(u64::from(super::config::MAX_BATCH)) as u32;
    let all: Vec<u32> = (1..=trains).collect();
    let largest_batch_that_fits = largest(&all, |b| fits(&with_batch(cfg, b)));
    Some(Ch05FixReport {
        current: base.run.verdict,
        current_peak: base_peak,
        fixes,
        largest_batch_that_fits,
    })
}

/// gpt_train.py's fixes as every front-end shows them: each with the dict entries to edit
/// (`freed`: what other processes hold on the card).
pub fn view(report: &Ch05FixReport, from: &Ch05Config, freed: u128) -> FixesView {
    use crate::programs::fix_view::{FixView, FixWords, Value};
    use crate::programs::seam::Paste;
    let fixes = report
        .fixes
        .iter()
        .map(|f| {
            let c = &f.config;
            let text = |k: &str| Value::Text(c.get(k).unwrap_or_default());
            let values = vec![
                ("b", Value::int(c.batch_size)),
                ("old_b", Value::int(from.batch_size)),
                ("ctx", Value::int(c.context_length)),
                ("old_ctx", Value::int(from.context_length)),
                ("layers", Value::int(c.n_layers)),
                ("old_layers", Value::int(from.n_layers)),
                ("drop", text("drop_rate")),
                (
                    "old_drop",
                    Value::Text(from.get("drop_rate").unwrap_or_default()),
                ),
                ("params", Value::Params(super::params(c))),
                ("freed", Value::Gib(freed)),
            ];
            let edits = vec![(Paste::Config, edits(c, from).join("\n"))];
            FixView::ranked(
                f,
                FixWords {
                    kind: f.kind.id(),
                    values,
                    notes: Vec::new(),
                },
                Vec::new(),
                edits,
            )
        })
        .collect();
    FixesView {
        fits_now: report.current.fits,
        largest: report
            .largest_batch_that_fits
            .map(|n| vec![("n", Value::int(n))]),
        fixes,
        seconds_now: None,
    }
}
