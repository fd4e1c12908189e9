//! Fixes for a gpt_class_finetune.py run in the script's own words, each replayed like the run
//! and ranked in the shared order (`engine::ranking`): expandable segments, a smaller
//! `batch_size` (no gradient accumulation in the script: noisier gradients), no dropout, shorter
//! texts (`SpamDataset(..., max_length=N)` truncates every text to N tokens), a smaller GPT-2
//! (`CHOOSE_MODEL`), and closing what else holds the card. The pretrained weights fix the layer
//! count and the context, so no fix changes them.

use super::config::{Ch06Config, MODEL_NAMES};
use super::{analyze, fits_on_card};
use crate::config::Allocator;
use crate::engine::ranking::{largest, sort, Impact, Ranked};
use crate::engine::verdict::Verdict;
use crate::gpu::Budget;
use crate::programs::fix_view::FixesView;

crate::engine::fix_kinds! {
    /// The kinds of gpt_class_finetune.py fix.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Ch06FixKind {
        /// `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.
        ExpandableSegments,
        FreeTheCard,
        /// The largest `batch_size` that fits.
        SmallerBatch,
        /// `"drop_rate": 0.0`.
        NoDropout,
        /// The longest `max_length` that fits: texts truncated to it.
        ShorterTexts,
        /// The largest GPT-2 that fits.
        SmallerModel,
    }
}

impl Ch06FixKind {
    pub const fn id(self) -> &'static str {
        match self {
            Ch06FixKind::ExpandableSegments => "expandable_segments",
            Ch06FixKind::FreeTheCard => "free_the_card",
            Ch06FixKind::SmallerBatch => "smaller_batch",
            Ch06FixKind::NoDropout => "no_dropout",
            Ch06FixKind::ShorterTexts => "shorter_texts",
            Ch06FixKind::SmallerModel => "smaller_model",
        }
    }
}

/// One evaluated change.
pub type Ch06Fix = Ranked<Ch06Config, Ch06FixKind>;

/// The lines to edit in gpt_class_finetune.py for `fix`, as the script writes them
/// (`batch_size = 4  # was 8`), and the environment variable where the fix needs one.
pub fn edits(fix: &Ch06Config, from: &Ch06Config) -> Vec<String> {
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
    for k in ["batch_size", "num_epochs", "num_classes"] {
        if let Some((a, b)) = changed(k) {
            out.push(format!("{k} = {b}  # was {a}"));
        }
    }
    if let Some((a, b)) = changed("max_length") {
        out.push(format!(
            "train_dataset = SpamDataset(csv_file=\"train.csv\", max_length={b}, \
             tokenizer=tokenizer)  # was {a} tokens"
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
pub struct Ch06FixReport {
    pub current: Verdict,
    pub current_peak: u128,
    pub fixes: Vec<Ch06Fix>,
    /// The largest `batch_size` that fits with the rest kept.
    pub largest_batch_that_fits: Option<u32>,
}

/// Ranks every fix for `cfg` on `budget`'s card (`None` when the config itself is invalid).
pub fn rank_fixes(cfg: &Ch06Config, budget: &Budget) -> Option<Ch06FixReport> {
    let base = analyze(cfg, budget).ok()?;
    let base_peak = base.peak_bytes();
    let fits = |c: &Ch06Config| fits_on_card(c, budget);
    let evaluate = |kind, impact, config: Ch06Config, other: u128| {
        Ranked::evaluate(kind, impact, config, other, budget, base_peak, |c, b| {
            analyze(c, b).ok().map(|a| (a.peak_bytes(), a.run.verdict))
        })
    };
    let with = |f: &dyn Fn(&mut Ch06Config)| {
        let mut c = cfg.clone();
        f(&mut c);
        c
    };
    let other = budget.other_bytes;
    let mut fixes: Vec<Ch06Fix> = Vec::new();

    if cfg.allocator == Allocator::Default {
        let expandable = with(&|c| c.allocator = Allocator::ExpandableSegments);
        fixes.extend(evaluate(
            Ch06FixKind::ExpandableSegments,
            Impact::Nothing,
            expandable,
            other,
        ));
    }
    if other > 0 {
        fixes.extend(evaluate(
            Ch06FixKind::FreeTheCard,
            Impact::Nothing,
            cfg.clone(),
            0,
        ));
    }
    let with_batch = |b: u32| with(&|c| c.batch_size = b);
    let smaller: Vec<u32> = (1..cfg.batch_size).collect();
    if let Some(b) = largest(&smaller, |b| fits(&with_batch(b))).or(smaller.first().copied()) {
        fixes.extend(evaluate(
            Ch06FixKind::SmallerBatch,
            Impact::GradientNoise,
            with_batch(b),
            other,
        ));
    }
    if cfg.drop_rate > 0.0 {
        fixes.extend(evaluate(
            Ch06FixKind::NoDropout,
            Impact::Regularization,
            with(&|c| c.drop_rate = 0.0),
            other,
        ));
    }
    // texts truncated (their ends cut: the classifier reads the last token): the longest that
    // fits, or where the run fits already, half the length
    let with_length = |t: u32| with(&|c| c.max_length = t);
    let lengths: Vec<u32> = (1..cfg.max_length).collect();
    let shorter = if base.run.verdict.fits {
        Some(cfg.max_length / 2).filter(|&t| t >= 1)
    } else {
        largest(&lengths, |t| fits(&with_length(t)))
    };
    if let Some(t) = shorter {
        fixes.extend(evaluate(
            Ch06FixKind::ShorterTexts,
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
            Ch06FixKind::SmallerModel,
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
        .train_rows
        .min(u64::from(super::super::config::MAX_BATCH)) as u32;
    let all: Vec<u32> = (1..=trains).collect();
    let largest_batch_that_fits = largest(&all, |b| fits(&with_batch(b)));
    Some(Ch06FixReport {
        current: base.run.verdict,
        current_peak: base_peak,
        fixes,
        largest_batch_that_fits,
    })
}

/// gpt_class_finetune.py's fixes as every front-end shows them: each with the lines to edit
/// (`freed`: what other processes hold on the card).
pub fn view(report: &Ch06FixReport, from: &Ch06Config, freed: u128) -> FixesView {
    use crate::programs::fix_view::{FixView, FixWords, Value};
    use crate::programs::seam::Paste;
    let fixes = report
        .fixes
        .iter()
        .map(|f| {
            let c = &f.config;
            let text = |cfg: &Ch06Config, k: &str| Value::Text(cfg.get(k).unwrap_or_default());
            let values = vec![
                ("b", Value::int(c.batch_size)),
                ("old_b", Value::int(from.batch_size)),
                ("len", Value::int(c.max_length)),
                ("old_len", Value::int(from.max_length)),
                ("model", Value::Text(MODEL_NAMES[c.model].into())),
                ("old_model", Value::Text(MODEL_NAMES[from.model].into())),
                ("drop", text(c, "drop_rate")),
                ("old_drop", text(from, "drop_rate")),
                ("params", Value::Params(super::params(c).0)),
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
