//! A run's full answer on one card, for any program: its allocation sequence replayed through the
//! simulated caching allocator without a cap (the peaks `max_memory_allocated` reports, and what
//! they are made of) and under the card's budget (does it fit; if not, where it fails and why).

use crate::allocator::Cap;
use crate::error::ConfigError;
use crate::events::{Phase, Sequence, Stage};
use crate::replay::{replay, OomEvent, Replay};
use crate::settings::Allocator;
use crate::terms::{Components, Terms};
use crate::verdict::{Risk, Verdict, TIGHT_FRACTION};

/// Peaks, components and verdict of one run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub sequence: Sequence,
    /// The allocator it was replayed with, and the card's budget for it: what replaying it again
    /// (a snapshot of it, `crates/snapshot`) takes.
    pub allocator: Allocator,
    pub cap: Cap,
    /// The run replayed without a memory cap.
    pub free_run: Replay,
    /// The run replayed under the card's budget (stops at an out-of-memory).
    pub on_card: Replay,
    pub verdict: Verdict,
}

impl Run {
    /// Replays `sequence` with `allocator` for a card whose allocator may reserve up to `cap`;
    /// refuses a run past [`crate::events::CEILING_BYTES`].
    pub fn replay(sequence: Sequence, allocator: Allocator, cap: Cap) -> Result<Run, ConfigError> {
        // a run past the ceiling has no peak to show, only that no card holds it
        if let Some(b) = sequence.beyond {
            return Err(ConfigError::beyond_any_card(b));
        }
        let on_card = replay(&sequence, allocator, Some(cap));
        // a run the cap never pressed (no cache released, no failure) is the uncapped run
        let free_run = if on_card.fits() && on_card.retries == 0 {
            on_card.clone()
        } else {
            let free = replay(&sequence, allocator, None);
            // Without a cap only a request past an expandable segment's virtual range (2^48
            // bytes, beyond any card) can fail. The allocated bytes barely depend on the mode
            // (requests round alike; only unsplit remainders differ), so such a run's peaks
            // come from the default allocator's replay, which has no range: a number near the
            // truth, where a stop at 2^48 would be off by orders of magnitude.
            if free.fits() {
                free
            } else {
                replay(&sequence, Allocator::Default, None)
            }
        };
        let verdict = sim_verdict(allocator, &sequence, &free_run, &on_card, cap);
        Ok(Run {
            sequence,
            allocator,
            cap,
            free_run,
            on_card,
            verdict,
        })
    }

    /// `max_memory_allocated` over the whole run.
    pub fn peak_bytes(&self) -> u128 {
        self.free_run.peak_allocated
    }

    /// The peak of one phase (`None` if the run has no such phase).
    pub fn phase_bytes(&self, phase: Phase) -> Option<u128> {
        self.free_run.phase_peak(phase)
    }

    /// What is alive at the overall peak, by term; sums exactly to [`Run::peak_bytes`].
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

    /// Where the run fails on the card, if it does.
    pub fn oom(&self) -> Option<&OomEvent> {
        self.on_card.oom.as_ref()
    }
}

/// Whether `sequence` runs within `cap`: one lean replay, for searches that ask nothing else.
pub fn fits(sequence: &Sequence, allocator: Allocator, cap: Cap) -> bool {
    crate::replay::fits(sequence, allocator, cap)
}

/// Fits when the capped replay finishes; tight when it fits with less than [`TIGHT_FRACTION`]
/// of the budget to spare, or only thanks to expandable segments.
///
/// `need_bytes` is what the run reserves: on the card when it fits (the allocator releases
/// cache under pressure), unconstrained when it does not.
fn sim_verdict(
    allocator: Allocator,
    seq: &Sequence,
    free_run: &Replay,
    on_card: &Replay,
    cap: Cap,
) -> Verdict {
    let need = if on_card.fits() {
        on_card.peak_reserved
    } else {
        free_run.peak_reserved
    };
    let risk = if !on_card.fits() {
        Risk::Oom
    } else {
        let tighter = Cap {
            bytes: (cap.bytes as f64 * (1.0 - TIGHT_FRACTION)) as u128,
            ..cap
        };
        // only replay again where the answer could differ
        let short_of_margin =
            on_card.peak_reserved > tighter.bytes && !fits(seq, allocator, tighter);
        let only_with_expandable =
            allocator == Allocator::ExpandableSegments && !fits(seq, Allocator::Default, cap);
        if short_of_margin || only_with_expandable {
            Risk::Tight
        } else {
            Risk::Fits
        }
    };
    Verdict::new(risk, cap.bytes, need)
}
