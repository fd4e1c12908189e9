//! Fixes for a train_gpt2.py run with the script's own constants, each replayed like the run and
//! ranked in the shared order (`engine::ranking`): `B` smaller with `total_batch_size` kept (more
//! micro-steps), `use_compile = True` (the compiled loss keeps less than eager's fp32 copies;
//! the script then skips HellaSwag and sampling), expandable segments, a shorter `T` with the
//! same tokens per step, fewer layers, and closing what else holds the card.

use super::config::BngConfig;
use super::{analyze, fits_on_card};
use crate::config::Allocator;
use crate::engine::ranking::{largest, sort, Impact, Ranked};
use crate::engine::verdict::Verdict;
use crate::gpu::Budget;
use crate::programs::fix_view::FixesView;

crate::engine::fix_kinds! {
    /// The kinds of train_gpt2.py fix.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum BngFixKind {
        /// Smaller `B`, `total_batch_size` kept: more micro-steps.
        MicroBatchKeepTotal,
        /// `use_compile = True` with the largest `B` that then fits.
        CompileWithMicroBatch,
        /// `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.
        ExpandableSegments,
        FreeTheCard,
        /// Shorter `T`, the same tokens per step.
        ShorterContext,
        /// Fewer `n_layer`.
        FewerLayers,
        /// One GPU started by torchrun: `python train_gpt2.py` trains the same without DDP.
        PythonNotTorchrun,
    }
}

impl BngFixKind {
    pub const fn id(self) -> &'static str {
        match self {
            BngFixKind::MicroBatchKeepTotal => "micro_batch_keep_total",
            BngFixKind::CompileWithMicroBatch => "compile_with_micro_batch",
            BngFixKind::ExpandableSegments => "expandable_segments",
            BngFixKind::FreeTheCard => "free_the_card",
            BngFixKind::ShorterContext => "shorter_context",
            BngFixKind::FewerLayers => "fewer_layers",
            BngFixKind::PythonNotTorchrun => "python_not_torchrun",
        }
    }
}

/// One evaluated change.
pub type BngFix = Ranked<BngConfig, BngFixKind>;

/// The constants to edit in train_gpt2.py for `fix`, as its lines (`B = 16 # was 64`), and the
/// environment variable where the fix needs one.
pub fn edits(fix: &BngFix, from: &BngConfig) -> Vec<String> {
    let mut out: Vec<String> = super::config::KEYS
        .iter()
        .filter(|k| !super::config::VRAMFIT_KEYS.contains(k))
        .filter_map(|k| {
            let (a, b) = (from.get(k)?, fix.config.get(k)?);
            (a != b).then(|| match *k {
                "B" | "T" | "total_batch_size" | "use_compile" => {
                    format!("{k} = {b}  # was {a}")
                }
                _ => format!("GPTConfig({k}={b})  # was {a}"),
            })
        })
        .collect();
    if fix.config.allocator == Allocator::ExpandableSegments
        && from.allocator != Allocator::ExpandableSegments
    {
        out.push("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into());
    }
    if from.torchrun && !fix.config.torchrun {
        out.push("python train_gpt2.py  # not torchrun --nproc_per_node=1".into());
    }
    out
}

/// The ranked fixes of a run on a card.
#[derive(Clone, Debug, PartialEq)]
pub struct BngFixReport {
    pub current: Verdict,
    pub current_peak: u128,
    pub fixes: Vec<BngFix>,
    /// The largest `B` that fits with `total_batch_size` kept.
    pub largest_b_that_fits: Option<u32>,
}

/// Values of `B` below `below` that keep `total_batch_size` divisible by B·T·world.
fn batches_keeping_total(cfg: &BngConfig, below: u32) -> Vec<u32> {
    let per = u64::from(cfg.t) * u64::from(cfg.world_size);
    (1..below)
        .filter(|&b| cfg.total_batch_size.is_multiple_of(u64::from(b) * per))
        .collect()
}

/// Ranks every fix for `cfg` on `budget`'s card (`None` when the config itself is invalid).
pub fn rank_fixes(cfg: &BngConfig, budget: &Budget) -> Option<BngFixReport> {
    let base = analyze(cfg, budget).ok()?;
    let base_peak = base.peak_bytes();
    let fits = |c: &BngConfig| fits_on_card(c, budget);
    let evaluate = |kind, impact, config: BngConfig, other: u128| {
        Ranked::evaluate(kind, impact, config, other, budget, base_peak, |c, b| {
            analyze(c, b).ok().map(|a| (a.peak_bytes(), a.run.verdict))
        })
    };
    let with_b = |c: &BngConfig, b: u32| BngConfig { b, ..c.clone() };
    let other = budget.other_bytes;
    let mut fixes: Vec<BngFix> = Vec::new();

    let keeping = batches_keeping_total(cfg, cfg.b);
    if let Some(b) = largest(&keeping, |b| fits(&with_b(cfg, b))).or(keeping.first().copied()) {
        fixes.extend(evaluate(
            BngFixKind::MicroBatchKeepTotal,
            Impact::Slower,
            with_b(cfg, b),
            other,
        ));
    }
    if !cfg.use_compile {
        let compiled = BngConfig {
            use_compile: true,
            ..cfg.clone()
        };
        let up_to: Vec<u32> = batches_keeping_total(&compiled, cfg.b + 1);
        if let Some(b) = largest(&up_to, |b| fits(&with_b(&compiled, b))) {
            fixes.extend(evaluate(
                BngFixKind::CompileWithMicroBatch,
                // the script skips HellaSwag and sampling when compiled
                Impact::Evaluation,
                with_b(&compiled, b),
                other,
            ));
        }
    }
    if cfg.allocator == Allocator::Default {
        fixes.extend(evaluate(
            BngFixKind::ExpandableSegments,
            Impact::Nothing,
            BngConfig {
                allocator: Allocator::ExpandableSegments,
                ..cfg.clone()
            },
            other,
        ));
    }
    // torchrun on one GPU wraps the model in DDP for nothing: no other rank to all-reduce with
    if cfg.torchrun && cfg.world_size == 1 {
        fixes.extend(evaluate(
            BngFixKind::PythonNotTorchrun,
            Impact::Nothing,
            BngConfig {
                torchrun: false,
                ..cfg.clone()
            },
            other,
        ));
    }
    if other > 0 {
        fixes.extend(evaluate(
            BngFixKind::FreeTheCard,
            Impact::Nothing,
            cfg.clone(),
            0,
        ));
    }
    // a shorter T in powers of two, the same tokens per step
    if let Some(c) = (1..=3)
        .map(|k| cfg.t >> k)
        .filter(|&t| t >= 64)
        .map(|t| BngConfig { t, ..cfg.clone() })
        .find(|c| c.validate().is_ok() && fits(c))
    {
        fixes.extend(evaluate(
            BngFixKind::ShorterContext,
            Impact::ContextLength,
            c,
            other,
        ));
    }
    let layers: Vec<u32> = (1..cfg.n_layer).collect();
    if let Some(l) = largest(&layers, |l| {
        fits(&BngConfig {
            n_layer: l,
            ..cfg.clone()
        })
    }) {
        fixes.extend(evaluate(
            BngFixKind::FewerLayers,
            Impact::ModelCapacity,
            BngConfig {
                n_layer: l,
                ..cfg.clone()
            },
            other,
        ));
    }
    sort(&mut fixes);
    // every B the field takes: a search that stopped short would call its own cap the largest
    let all = batches_keeping_total(cfg, super::config::MAX_B_OR_T + 1);
    let largest_b_that_fits = largest(&all, |b| fits(&with_b(cfg, b)));
    Some(BngFixReport {
        current: base.run.verdict,
        current_peak: base_peak,
        fixes,
        largest_b_that_fits,
    })
}

/// train_gpt2.py's fixes as every front-end shows them: each with the lines of the script to edit
/// (`freed`: what other processes hold on the card).
pub fn view(report: &BngFixReport, from: &BngConfig, freed: u128) -> FixesView {
    use crate::programs::fix_view::{FixView, FixWords, Value};
    use crate::programs::seam::Paste;
    let fixes = report
        .fixes
        .iter()
        .map(|f| {
            let c = &f.config;
            let values = vec![
                ("b", Value::int(c.b)),
                ("old_b", Value::int(from.b)),
                ("accum", Value::int(c.grad_accum_steps())),
                ("total", Value::Grouped(c.total_batch_size)),
                ("t", Value::int(c.t)),
                ("old_t", Value::int(from.t)),
                ("layers", Value::int(c.n_layer)),
                ("old_layers", Value::int(from.n_layer)),
                (
                    "params",
                    Value::Params(crate::params::ParamCounts::of(&c.model()).total),
                ),
                ("freed", Value::Gib(freed)),
            ];
            let edits = vec![(Paste::Config, edits(f, from).join("\n"))];
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
            .largest_b_that_fits
            .map(|n| vec![("n", Value::int(n))]),
        fixes,
        seconds_now: None,
    }
}
