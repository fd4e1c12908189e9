//! The full answer for a run on a card: the run replayed through the simulated caching
//! allocator, without a cap (the peaks `max_memory_allocated` reports, and what they are made of)
//! and under the card's budget (does it fit; if not, where it fails and why).

use crate::config::{Allocator, TrainConfig};
use crate::error::ConfigError;
use crate::estimate::{estimate_patched, Estimate};
use crate::gpu::Budget;
use crate::physics::{Patches, Phase};
use crate::replay::{replay, OomEvent, Replay};
use crate::sequence::{generate, Sequence, Stage};
use crate::terms::{Components, Terms};
use crate::verdict::{Risk, Verdict, TIGHT_FRACTION};

/// Peaks, components and verdict of one run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The closed form (moments, formulas): the explanation of the numbers below.
    pub estimate: Estimate,
    pub sequence: Sequence,
    /// The run replayed without a memory cap.
    pub free_run: Replay,
    /// The run replayed under the card's budget (stops at an out-of-memory).
    pub on_card: Replay,
    pub verdict: Verdict,
}

impl Analysis {
    /// `max_memory_allocated` over the whole run.
    pub fn peak_bytes(&self) -> u128 {
        self.free_run.peak_allocated
    }

    /// The peak of one phase (`None` if the run has no such phase).
    pub fn phase_bytes(&self, phase: Phase) -> Option<u128> {
        self.free_run.phase_peak(phase)
    }

    /// What is alive at the overall peak, by term; sums exactly to [`Analysis::peak_bytes`].
    pub fn peak_terms(&self) -> &Terms {
        &self.free_run.peak_terms
    }

    pub fn components(&self) -> Components {
        self.free_run.peak_terms.components()
    }

    /// Where the overall peak falls: phase, stage and micro-step.
    pub fn peak_at(&self) -> (Option<Phase>, Stage, u32) {
        self.sequence
            .mark_at(self.free_run.peak_event)
            .map_or((None, Stage::ModelLoad, 0), |m| {
                (m.phase, m.stage, m.micro_step)
            })
    }

    /// Per-GPU peaks of a DDP run, from the replay (`None` on one GPU).
    pub fn ranks(&self) -> Option<crate::ddp::Ranks> {
        let phase = |p| self.phase_bytes(p).unwrap_or(0);
        crate::ddp::Ranks::new(
            &self.estimate.config,
            phase(Phase::TrainFirstIter),
            phase(Phase::TrainSteady),
            phase(Phase::Eval).max(phase(Phase::EvalAfterStep)),
        )
    }

    /// Where the run fails on the card, if it does.
    pub fn oom(&self) -> Option<&OomEvent> {
        self.on_card.oom.as_ref()
    }
}

/// Replays `cfg` (with `patches`) for `budget`'s card.
pub fn analyze_patched(
    cfg: &TrainConfig,
    budget: &Budget,
    patches: Patches,
) -> Result<Analysis, ConfigError> {
    let estimate = estimate_patched(cfg, &budget.gpu, patches)?;
    let sequence = generate(cfg, &budget.gpu, patches);
    let cap = budget.allocator_budget();
    let on_card = replay(&sequence, cfg.allocator, Some(cap));
    // a run the cap never pressed (no cache released, no failure) is the uncapped run
    let free_run = if on_card.fits() && on_card.retries == 0 {
        on_card.clone()
    } else {
        replay(&sequence, cfg.allocator, None)
    };
    let verdict = sim_verdict(cfg, &sequence, &free_run, &on_card, cap);
    Ok(Analysis {
        estimate,
        sequence,
        free_run,
        on_card,
        verdict,
    })
}

/// Whether `cfg` runs on `budget`'s card: [`Analysis::verdict`]`.fits` with one replay instead
/// of up to four (what the fix ranker's searches ask, many times).
pub fn fits_on_card(cfg: &TrainConfig, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && replay(
            &generate(cfg, &budget.gpu, Patches::default()),
            cfg.allocator,
            Some(budget.allocator_budget()),
        )
        .fits()
}

/// [`analyze_patched`] for nanoGPT as it is.
pub fn analyze(cfg: &TrainConfig, budget: &Budget) -> Result<Analysis, ConfigError> {
    analyze_patched(cfg, budget, Patches::default())
}

/// Fits when the capped replay finishes; tight when it fits with less than [`TIGHT_FRACTION`]
/// of the budget to spare, or only thanks to expandable segments.
///
/// `need_bytes` is what the run reserves: on the card when it fits (the allocator releases
/// cache under pressure), unconstrained when it does not.
fn sim_verdict(
    cfg: &TrainConfig,
    seq: &Sequence,
    free_run: &Replay,
    on_card: &Replay,
    cap: u128,
) -> Verdict {
    let need = if on_card.fits() {
        on_card.peak_reserved
    } else {
        free_run.peak_reserved
    };
    let risk = if !on_card.fits() {
        Risk::Oom
    } else {
        let tighter = (cap as f64 * (1.0 - TIGHT_FRACTION)) as u128;
        // only replay again where the answer could differ
        let short_of_margin =
            on_card.peak_reserved > tighter && !replay(seq, cfg.allocator, Some(tighter)).fits();
        let only_with_expandable = cfg.allocator == Allocator::ExpandableSegments
            && !replay(seq, Allocator::Default, Some(cap)).fits();
        if short_of_margin || only_with_expandable {
            Risk::Tight
        } else {
            Risk::Fits
        }
    };
    Verdict::new(risk, cap, need)
}
