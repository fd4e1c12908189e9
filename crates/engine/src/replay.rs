//! Replaying a run's allocation sequence through the simulated caching allocator: what
//! `memory_allocated` and `memory_reserved` do over an iteration, and whether (and where) a
//! capped allocator runs out of memory.

use crate::allocator::{round_size, BlockId, CachingAllocator, Cap};
use crate::events::Phase;
use crate::events::{Action, Sequence, Stage};
use crate::settings::Allocator;
use crate::terms::{Term, Terms};

/// A failed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OomEvent {
    /// Index of the failing event in the sequence.
    pub event: usize,
    pub requested: u128,
    pub term: Term,
    pub phase: Option<Phase>,
    pub stage: Stage,
    pub micro_step: u32,
    pub allocated: u128,
    pub reserved: u128,
    /// The largest cached free block at that moment (what fragmentation left).
    pub largest_free: u128,
}

/// Allocated and reserved bytes after one event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    pub allocated: u64,
    pub reserved: u64,
}

/// What a replay found.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// `max_memory_allocated` over the run (what the allocator counts: rounded blocks).
    pub peak_allocated: u128,
    pub peak_reserved: u128,
    /// Peak allocated per phase.
    pub phase_peaks: Vec<(Phase, u128)>,
    /// Peak of live requests per phase.
    pub phase_requested: Vec<(Phase, u128)>,
    pub oom: Option<OomEvent>,
    /// One sample per event (up to the OOM).
    pub samples: Vec<Sample>,
    /// What was alive at the overall allocated peak: requests by term, plus the allocator's
    /// rounding (blocks larger than their requests) as [`Term::AllocatorRounding`].
    pub peak_terms: Terms,
    /// Index of the event at the overall allocated peak.
    pub peak_event: usize,
    /// Times the allocator had to release cached memory to stay under the cap.
    pub retries: u32,
}

impl Replay {
    pub fn fits(&self) -> bool {
        self.oom.is_none()
    }

    pub fn phase_peak(&self, phase: Phase) -> Option<u128> {
        self.phase_peaks
            .iter()
            .find(|(p, _)| *p == phase)
            .map(|x| x.1)
    }

    pub fn phase_requested(&self, phase: Phase) -> Option<u128> {
        self.phase_requested
            .iter()
            .find(|(p, _)| *p == phase)
            .map(|x| x.1)
    }

    /// Allocated and reserved bytes from event `from` on, as the maxima of `buckets` equal
    /// stretches of events (fewer when there are fewer events): the run's shape at a width a
    /// chart can draw, without losing a peak between points.
    pub fn envelope(&self, from: usize, buckets: usize) -> Vec<(u128, u128)> {
        let samples = &self.samples[from.min(self.samples.len())..];
        if samples.is_empty() {
            return Vec::new();
        }
        let per = samples.len().div_ceil(buckets.max(1)).max(1);
        samples
            .chunks(per)
            .map(|c| {
                (
                    c.iter().map(|s| s.allocated).max().unwrap_or(0).into(),
                    c.iter().map(|s| s.reserved).max().unwrap_or(0).into(),
                )
            })
            .collect()
    }
}

const TERM_COUNT: usize = ALL_TERMS.len();
use crate::terms::ALL_TERMS;

fn bump(list: &mut Vec<(Phase, u128)>, phase: Phase, value: u128) {
    match list.iter_mut().find(|(p, _)| *p == phase) {
        Some(e) => e.1 = e.1.max(value),
        None => list.push((phase, value)),
    }
}

/// The events since the last mark, of one phase: its peaks are taken when the next mark (or the
/// end) closes it — the allocator's peak only grows between marks — and not at every event, which
/// the replay's loop would pay for on every one of tens of thousands.
struct OpenPhase {
    phase: Phase,
    /// The most live requested bytes after any of its events.
    requested: u64,
}

/// Adds a closed phase's peaks to the replay's.
fn close_phase(out: &mut Replay, open: Option<OpenPhase>, alloc: &CachingAllocator) {
    if let Some(o) = open {
        bump(&mut out.phase_peaks, o.phase, alloc.peak_allocated().into());
        bump(&mut out.phase_requested, o.phase, o.requested.into());
    }
}

/// Replays `seq` through an allocator in `mode` that may reserve at most `cap` bytes.
pub fn replay(seq: &Sequence, mode: Allocator, cap: Option<Cap>) -> Replay {
    replay_recording(seq, mode, cap, true)
}

/// Whether `seq` runs within `cap`: the replay without its per-event samples and per-term
/// accounting (what fix searches ask, many times).
pub fn fits(seq: &Sequence, mode: Allocator, cap: Cap) -> bool {
    replay_recording(seq, mode, Some(cap), false).fits()
}

/// [`replay`], recording samples and what is alive at the peak only when `record`.
fn replay_recording(seq: &Sequence, mode: Allocator, cap: Option<Cap>, record: bool) -> Replay {
    let mut alloc = CachingAllocator::new(mode, cap);
    let mut blocks: Vec<Option<(BlockId, u64)>> = Vec::new();
    // the loop counts in the allocator's unit (u64, see allocator.rs); the replay's answer in u128
    let mut requested: u64 = 0;
    let mut out = Replay {
        peak_allocated: 0,
        peak_reserved: 0,
        phase_peaks: Vec::new(),
        phase_requested: Vec::new(),
        oom: None,
        samples: Vec::with_capacity(if record { seq.events.len() } else { 0 }),
        peak_terms: Terms::default(),
        peak_event: 0,
        retries: 0,
    };
    // live requested bytes per term, to know what the peak is made of
    let mut by_term = [0u64; TERM_COUNT];
    let mut terms_of: Vec<Term> = Vec::new();
    let mut peak_by_term = by_term;
    let mut peak_rounding = 0;
    let (mut peak_allocated, mut peak_reserved) = (0, 0);
    let mut mark_ix = 0;
    let mut phase: Option<Phase> = None;
    let mut open: Option<OpenPhase> = None;
    for (i, e) in seq.events.iter().enumerate() {
        while mark_ix < seq.marks.len() && seq.marks[mark_ix].at <= i {
            close_phase(&mut out, open.take(), &alloc);
            phase = seq.marks[mark_ix].phase;
            // peaks are per phase: reset the counter at each boundary, as the harness does
            alloc.reset_peaks();
            mark_ix += 1;
        }
        match e.action {
            Action::Alloc => {
                let ix = e.tensor as usize;
                if blocks.len() <= ix {
                    blocks.resize(ix + 1, None);
                }
                match alloc.malloc(e.bytes) {
                    Ok(id) => {
                        let r = round_size(e.bytes);
                        blocks[ix] = Some((id, r));
                        if record {
                            requested += r;
                            if terms_of.len() <= ix {
                                terms_of.resize(ix + 1, Term::Params);
                            }
                            terms_of[ix] = e.term;
                            by_term[e.term as usize] += r;
                        }
                    }
                    Err(oom) => {
                        let m = seq.mark_at(i);
                        out.oom = Some(OomEvent {
                            event: i,
                            requested: e.bytes.into(),
                            term: e.term,
                            phase: m.and_then(|m| m.phase),
                            stage: m.map_or(Stage::ModelLoad, |m| m.stage),
                            micro_step: m.map_or(0, |m| m.micro_step),
                            allocated: oom.allocated.into(),
                            reserved: oom.reserved.into(),
                            largest_free: alloc.largest_free_block().into(),
                        });
                        break;
                    }
                }
            }
            Action::Free => {
                if let Some((id, r)) = blocks.get_mut(e.tensor as usize).and_then(Option::take) {
                    alloc.free(id);
                    if record {
                        requested -= r;
                        by_term[terms_of[e.tensor as usize] as usize] -= r;
                    }
                }
            }
        }
        if alloc.allocated() > peak_allocated {
            peak_allocated = alloc.allocated();
            out.peak_event = i;
            peak_by_term = by_term;
            peak_rounding = alloc.allocated() - requested;
        }
        peak_reserved = peak_reserved.max(alloc.reserved());
        if let Some(p) = phase {
            let o = open.get_or_insert(OpenPhase {
                phase: p,
                requested: 0,
            });
            o.requested = o.requested.max(requested);
        }
        if record {
            out.samples.push(Sample {
                allocated: alloc.allocated(),
                reserved: alloc.reserved(),
            });
        }
    }
    close_phase(&mut out, open, &alloc);
    // a run past the ceiling ends with the request that passes it, which no card serves
    if let (None, Some(b)) = (out.oom, seq.beyond) {
        out.oom = Some(OomEvent {
            event: seq.events.len(),
            requested: b.requested,
            term: b.term,
            phase: b.phase,
            stage: b.stage,
            micro_step: b.micro_step,
            allocated: alloc.allocated().into(),
            reserved: alloc.reserved().into(),
            largest_free: alloc.largest_free_block().into(),
        });
    }
    out.peak_allocated = peak_allocated.into();
    out.peak_reserved = peak_reserved.into();
    for term in ALL_TERMS {
        out.peak_terms.add(term, peak_by_term[term as usize].into());
    }
    out.peak_terms
        .add(Term::AllocatorRounding, peak_rounding.into());
    out.retries = alloc.retries;
    out
}
