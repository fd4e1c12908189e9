//! Will it run on this card? The peak the allocator must reserve, against what the card leaves it.

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

    /// What the caching allocator holds beyond the run's allocated peak `peak_bytes`: reserved
    /// but unallocated, the part of the need the verdict counts and the tensors do not.
    pub fn reserve_beyond(&self, peak_bytes: u128) -> u128 {
        self.need_bytes.saturating_sub(peak_bytes)
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
