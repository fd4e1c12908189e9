//! Fixes for a gpt_instruction_finetuning.py run in the script's own words, each replayed like
//! the run and ranked in the shared order (`engine::ranking`): expandable segments, a smaller
//! `batch_size` (no gradient accumulation in the script: noisier gradients), no dropout, shorter
//! examples (the collate's `allowed_max_length=N` cuts every example to N tokens), a smaller GPT-2
//! (`CHOOSE_MODEL`), and closing what else holds the card.

use super::super::ch06::config::MODEL_NAMES;
use super::config::Ch07Config;
use super::{analyze, fits_on_card};
use crate::config::Allocator;
use crate::engine::ranking::{largest, sort, Impact, Ranked};
use crate::engine::verdict::Verdict;
use crate::gpu::Budget;
use crate::programs::fix_view::FixesView;

crate::engine::fix_kinds! {
    /// The kinds of gpt_instruction_finetuning.py fix.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Ch07FixKind {
        /// `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.
        ExpandableSegments,
        FreeTheCard,
        /// The largest `batch_size` that fits.
        SmallerBatch,
        /// `"drop_rate": 0.0`.
        NoDropout,
        /// The longest `allowed_max_length` that fits: examples cut to it.
        ShorterExamples,
        /// The largest GPT-2 that fits.
        SmallerModel,
    }
}

impl Ch07FixKind {
    pub const fn id(self) -> &'static str {
        match self {
            Ch07FixKind::ExpandableSegments => "expandable_segments",
            Ch07FixKind::FreeTheCard => "free_the_card",
            Ch07FixKind::SmallerBatch => "smaller_batch",
            Ch07FixKind::NoDropout => "no_dropout",
            Ch07FixKind::ShorterExamples => "shorter_examples",
            Ch07FixKind::SmallerModel => "smaller_model",
        }
    }
}

/// One evaluated change.
pub type Ch07Fix = Ranked<Ch07Config, Ch07FixKind>;

/// The lines to edit in gpt_instruction_finetuning.py for `fix`, as the script writes them
/// (`batch_size = 4  # was 8`), and the environment variable where the fix needs one.
pub fn edits(fix: &Ch07Config, from: &Ch07Config) -> Vec<String> {
    let changed = |k: &str| {
        let (a, b) = (
            from.get(k).unwrap_or_default(),
            fix.get(k).unwrap_or_default(),
        );
        (a != b).then_some((a, b))
    };
    let mut out = Vec::new();
    if let Some((a, b)) = changed("CHOOSE_MODEL") {
        out.push(format!("CHOOSE_MODEL = \"{b}\"  # was \"{a}\""));
    }
    if let Some((a, b)) = changed("drop_rate") {
        out.push(format!("\"drop_rate\": {b},  # was {a}"));
    }
    for k in ["batch_size", "num_epochs"] {
        if let Some((a, b)) = changed(k) {
            out.push(format!("{k} = {b}  # was {a}"));
        }
    }
    if let Some((a, b)) = changed("allowed_max_length") {
        out.push(format!(
            "customized_collate_fn = partial(custom_collate_fn, device=device, \
             allowed_max_length={b})  # was {a}"
        ));
    }
    if fix.allocator == Allocator::ExpandableSegments
        && from.allocator != Allocator::ExpandableSegments
    {
        out.push("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into());
    }
    out
}

/// The ranked fixes of a run on a card.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch07FixReport {
    pub current: Verdict,
    pub current_peak: u128,
    pub fixes: Vec<Ch07Fix>,
    /// The largest `batch_size` that fits with the rest kept.
    pub largest_batch_that_fits: Option<u32>,
}

/// Ranks every fix for `cfg` on `budget`'s card (`None` when the config itself is invalid).
pub fn rank_fixes(cfg: &Ch07Config, budget: &Budget) -> Option<Ch07FixReport> {
    let base = analyze(cfg, budget).ok()?;
    let base_peak = base.peak_bytes();
    let fits = |c: &Ch07Config| fits_on_card(c, budget);
    let evaluate = |kind, impact, config: Ch07Config, other: u128| {
        Ranked::evaluate(kind, impact, config, other, budget, base_peak, |c, b| {
            analyze(c, b).ok().map(|a| (a.peak_bytes(), a.run.verdict))
        })
    };
    let with = |f: &dyn Fn(&mut Ch07Config)| {
        let mut c = cfg.clone();
        f(&mut c);
        c
    };
    let other = budget.other_bytes;
    let mut fixes: Vec<Ch07Fix> = Vec::new();

    if cfg.allocator == Allocator::Default {
        let expandable = with(&|c| c.allocator = Allocator::ExpandableSegments);
        fixes.extend(evaluate(
            Ch07FixKind::ExpandableSegments,
            Impact::Nothing,
            expandable,
            other,
        ));
    }
    if other > 0 {
        fixes.extend(evaluate(
            Ch07FixKind::FreeTheCard,
            Impact::Nothing,
            cfg.clone(),
            0,
        ));
    }
    let with_batch = |b: u32| with(&|c| c.batch_size = b);
    let smaller: Vec<u32> = (1..cfg.batch_size).collect();
    if let Some(b) = largest(&smaller, |b| fits(&with_batch(b))).or(smaller.first().copied()) {
        fixes.extend(evaluate(
            Ch07FixKind::SmallerBatch,
            Impact::GradientNoise,
            with_batch(b),
            other,
        ));
    }
    if cfg.drop_rate > 0.0 {
        fixes.extend(evaluate(
            Ch07FixKind::NoDropout,
            Impact::Regularization,
            with(&|c| c.drop_rate = 0.0),
            other,
        ));
    }
    // examples cut (their ends: the response the model learns from): the longest that fits, or
    // where the run fits already, half the width
    let with_length = |t: u32| with(&|c| c.allowed_max_length = t);
    let lengths: Vec<u32> = (1..cfg.width()).collect();
    let shorter = if base.run.verdict.fits {
        Some(cfg.width() / 2).filter(|&t| t >= 1)
    } else {
        largest(&lengths, |t| fits(&with_length(t)))
    };
    if let Some(t) = shorter {
        fixes.extend(evaluate(
            Ch07FixKind::ShorterExamples,
            Impact::ContextLength,
            with_length(t),
            other,
        ));
    }
    if let Some(m) = (0..cfg.model)
        .rev()
        .find(|&m| fits(&with(&|c| c.model = m)))
    {
        fixes.extend(evaluate(
            Ch07FixKind::SmallerModel,
            Impact::ModelCapacity,
            with(&|c| c.model = m),
            other,
        ));
    }
    // a change that frees nothing is no fix
    fixes.retain(|f| f.saving_bytes > 0);
    sort(&mut fixes);
    // every batch_size with a full training batch (a larger one is refused by validate)
    let trains = cfg
        .train_rows()
        .min(u64::from(super::super::config::MAX_BATCH)) as u32;
    let all: Vec<u32> = (1..=trains).collect();
    let largest_batch_that_fits = largest(&all, |b| fits(&with_batch(b)));
    Some(Ch07FixReport {
        current: base.run.verdict,
        current_peak: base_peak,
        fixes,
        largest_batch_that_fits,
    })
}

/// gpt_instruction_finetuning.py's fixes as every front-end shows them: each with the lines to edit
/// (`freed`: what other processes hold on the card).
pub fn view(report: &Ch07FixReport, from: &Ch07Config, freed: u128) -> FixesView {
    use crate::programs::fix_view::{FixView, FixWords, Value};
    use crate::programs::seam::Paste;
    let fixes = report
        .fixes
        .iter()
        .map(|f| {
            let c = &f.config;
            let text = |cfg: &Ch07Config, k: &str| Value::Text(cfg.get(k).unwrap_or_default());
            let values = vec![
                ("b", Value::int(c.batch_size)),
                ("old_b", Value::int(from.batch_size)),
                ("len", Value::int(c.allowed_max_length)),
                ("old_len", Value::int(from.width())),
                ("model", Value::Text(MODEL_NAMES[c.model].into())),
                ("old_model", Value::Text(MODEL_NAMES[from.model].into())),
                ("drop", text(c, "drop_rate")),
                ("old_drop", text(from, "drop_rate")),
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
