//! Will it run on this card? The peak the allocator must reserve, against what the card leaves it.

use crate::config::{Allocator, TrainConfig};
use crate::estimate::Estimate;
use crate::gpu::Budget;

/// The answer users care about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Risk {
    /// Fits with room to spare.
    Fits,
    /// Fits, but with less than [`TIGHT_FRACTION`] of the budget to spare: a desktop, a larger
    /// driver reservation or a different PyTorch version can tip it over.
    Tight,
    /// Out of memory.
    Oom,
}

impl Risk {
    pub fn id(self) -> &'static str {
        match self {
            Risk::Fits => "fits",
            Risk::Tight => "tight",
            Risk::Oom => "oom",
        }
    }
}

/// Headroom below this share of the allocator budget is "tight".
pub const TIGHT_FRACTION: f64 = 0.05;

/// A verdict for one run on one card.
/// Serialized as the JSON contract's `verdict` (the budget is the `gpu`'s `usable_bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Verdict {
    pub fits: bool,
    pub risk: Risk,
    /// `budget − need`: negative is the shortfall.
    pub headroom_bytes: i128,
    /// What the run needs the allocator to be able to reserve: the peak allocated plus the
    /// allocator's fragmentation.
    pub need_bytes: u128,
    /// What the caching allocator may reserve on this card.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub budget_bytes: u128,
}

impl Verdict {
    /// `fits` and the headroom follow from the risk, the budget and the need.
    pub fn new(risk: Risk, budget_bytes: u128, need_bytes: u128) -> Verdict {
        Verdict {
            fits: risk != Risk::Oom,
            risk,
            budget_bytes,
            need_bytes,
            headroom_bytes: budget_bytes as i128 - need_bytes as i128,
        }
    }

    /// The bytes a bar drawing this verdict spans ([`bar_scale`]).
    pub fn bar_scale(&self, card_bytes: u128, peak_bytes: u128) -> u128 {
        bar_scale(card_bytes, self.need_bytes, peak_bytes)
    }
}

/// The bytes a bar of a run spans: the card, or what the run needs (`need_bytes`: 0 where there
/// is no verdict) or its peak where either overflows the card. Never 0, so a share of it is
/// always a number.
pub fn bar_scale(card_bytes: u128, need_bytes: u128, peak_bytes: u128) -> u128 {
    card_bytes.max(need_bytes).max(peak_bytes).max(1)
}

/// Reserved-but-unallocated memory at the peak as a share of the peak allocated.
///
/// Measured (calibration.jsonl, peak_reserved / peak_allocated): eager 16-bit runs with the GPT-2
/// vocabulary 1.09-1.27, growing with the loss path's share (the vocabulary-sized loss tensors of
/// different sizes cannot reuse each other's blocks); compiled runs 1.02-1.04 (one size of
/// vocabulary-sized tensor); fp32 and small-vocabulary runs ~1.04; expandable segments ~1.00-1.01.
pub fn fragmentation(cfg: &TrainConfig, est: &Estimate) -> f64 {
    if cfg.allocator == Allocator::ExpandableSegments {
        return 0.01;
    }
    if cfg.compile || !cfg.dtype.is_16bit() {
        return 0.04;
    }
    // share of the peak held by the loss path (logits and loss buffers)
    let c = est.components();
    let logits = c.get(crate::terms::Component::Logits) as f64;
    let share = logits / c.total().max(1) as f64;
    0.04 + 0.35 * share
}

/// Compares an estimate with a card's budget.
pub fn verdict(est: &Estimate, budget: &Budget) -> Verdict {
    let peak = est.peak_bytes();
    let need = (peak as f64 * (1.0 + fragmentation(&est.config, est))) as u128;
    let budget_bytes = budget.allocator_budget();
    let headroom = budget_bytes as i128 - need as i128;
    let risk = if headroom < 0 {
        Risk::Oom
    } else if (headroom as f64) < TIGHT_FRACTION * budget_bytes as f64 {
        Risk::Tight
    } else {
        Risk::Fits
    };
    Verdict::new(risk, budget_bytes, need)
}
