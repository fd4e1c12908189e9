//! The recorded run event by event: what `memory_allocated` and `memory_reserved` were after
//! each event, their peaks, and the cache at an out-of-memory request.
//!
//! The trace records each request as made, while `memory_allocated` counts the blocks handed
//! out: rounded to 512 bytes, and whole where the allocator did not split off the rest (a large
//! block's rest of 1 MiB or less). So the history follows the segments' layout from the events —
//! segments mapped and freed, blocks split at each request and merged when freed — and takes each
//! block's size as the allocator would (`shouldSplit` in c10/cuda/CUDACachingAllocator.cpp, the
//! rule vramfit's own simulation follows). A history that starts before its first recorded event
//! (`_record_memory_history(max_entries=…)` kept only the last ones) cannot be followed so:
//! there the requests' own sizes are counted back from the dump, and the history says it is
//! estimated.

use std::collections::BTreeMap;

use engine::allocator::{round_size, MIN_BLOCK, SMALL_SIZE};
use engine::events::CEILING_BYTES;

use crate::read::{Action, Snapshot};

/// A stretch of mapped memory in the layout the events build.
#[derive(Clone, Copy, Debug)]
struct Span {
    size: u64,
    state: State,
    /// The `alloc` event that handed an allocated block out.
    event: usize,
    /// Which segment (merging stops at its edges).
    segment: u32,
    expandable: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    Allocated,
    /// Freed, its stream not done yet: neither counted nor reusable.
    Pending,
}

/// The failed request of a run that ran out of memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Oom {
    /// Index of the `oom` event.
    pub event: usize,
    /// What the allocator asked of the driver.
    pub requested: u64,
    pub allocated: u64,
    pub reserved: u64,
    /// Reserved bytes in free blocks: what fragmentation left unusable for this request.
    pub cached_free: u64,
    /// The largest of those blocks.
    pub largest_free: u64,
    /// Bytes inside the allocated blocks beyond their requests (the allocator's rounding and the
    /// rests it did not split off), where the history is followed exactly.
    pub internal: Option<u64>,
}

/// What the recorded history shows.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    /// Allocated and reserved bytes after each event.
    pub samples: Vec<(u64, u64)>,
    pub peak_allocated: u64,
    /// Index of the event after which allocated was at its peak.
    pub peak_event: usize,
    pub peak_reserved: u64,
    pub oom: Option<Oom>,
    /// Every segment reserved at the dump was mapped within the recorded events (the history
    /// starts with the run).
    pub whole_run: bool,
    /// The layout followed to the dump exactly: the allocated bytes are the allocator's own.
    /// Otherwise they are estimated from the requests.
    pub exact: bool,
    /// At the dump, the allocated blocks' bytes beyond their requests, as the layout followed
    /// them ([`Oom::internal`]'s measure; the dump's own blocks say the same: a test).
    pub internal_at_dump: Option<u64>,
}

/// Follows `snap`'s events.
pub fn follow(snap: &Snapshot) -> History {
    let reserved_at_dump: i128 = snap.segments.iter().map(|s| i128::from(s.total_size)).sum();
    let mapped: i128 = snap
        .events
        .iter()
        .map(|e| match e.action {
            Action::SegmentAlloc | Action::SegmentMap => i128::from(e.size),
            Action::SegmentFree | Action::SegmentUnmap => -i128::from(e.size),
            _ => 0,
        })
        .sum();
    // everything reserved at the dump was mapped within the recorded events: the whole run
    let whole_run = reserved_at_dump == mapped;
    if whole_run {
        if let Some(h) = Layout::default().replay(snap) {
            return h;
        }
    }
    History {
        whole_run,
        ..from_requests(snap)
    }
}

/// The estimate: requests counted back from the dump's allocated blocks.
fn from_requests(snap: &Snapshot) -> History {
    let blocks = snap.segments.iter().flat_map(|s| &s.blocks);
    let mut allocated = blocks
        .filter(|b| b.state == "active_allocated")
        .map(|b| i128::from(b.size))
        .sum::<i128>();
    let mut reserved = snap
        .segments
        .iter()
        .map(|s| i128::from(s.total_size))
        .sum::<i128>();
    let mut samples = vec![(0u64, 0u64); snap.events.len()];
    for (i, e) in snap.events.iter().enumerate().rev() {
        samples[i] = (clamp(allocated), clamp(reserved));
        let size = i128::from(e.size);
        match e.action {
            Action::Alloc => allocated -= size,
            Action::FreeRequested => allocated += size,
            Action::SegmentAlloc | Action::SegmentMap => reserved -= size,
            Action::SegmentFree | Action::SegmentUnmap => reserved += size,
            _ => {}
        }
    }
    let (peak_event, peak_allocated) = peak(&samples, |s| s.0);
    let oom = snap
        .events
        .iter()
        .position(|e| e.action == Action::Oom)
        .map(|i| Oom {
            event: i,
            requested: snap.events[i].size,
            allocated: samples[i].0,
            reserved: samples[i].1,
            cached_free: samples[i].1.saturating_sub(samples[i].0),
            largest_free: 0,
            internal: None,
        });
    History {
        peak_reserved: peak(&samples, |s| s.1).1,
        samples,
        peak_allocated,
        peak_event,
        oom,
        whole_run: false,
        exact: false,
        internal_at_dump: None,
    }
}

fn clamp(n: i128) -> u64 {
    u64::try_from(n.max(0)).unwrap_or(u64::MAX)
}

/// The first event at the largest value, and that value.
fn peak(samples: &[(u64, u64)], of: impl Fn(&(u64, u64)) -> u64) -> (usize, u64) {
    samples.iter().enumerate().fold(
        (0, 0),
        |best, (i, s)| if of(s) > best.1 { (i, of(s)) } else { best },
    )
}

/// A block live at a moment: its bytes and the `alloc` event that handed it out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Live {
    pub bytes: u64,
    pub event: usize,
}

/// The blocks live after event `at`: each block's own size where the history is followed
/// exactly (`exact`: [`History::exact`]), else each request as recorded (a block from before the
/// recording is not among them).
pub fn live_at(snap: &Snapshot, at: usize, exact: bool) -> Vec<Live> {
    let events = &snap.events[..=at.min(snap.events.len().saturating_sub(1))];
    if exact {
        let mut layout = Layout::default();
        for (i, e) in events.iter().enumerate() {
            if layout.step(i, e).is_none() {
                break;
            }
        }
        return layout
            .spans
            .values()
            .filter(|s| s.state == State::Allocated)
            .map(|s| Live {
                bytes: s.size,
                event: s.event,
            })
            .collect();
    }
    let mut live: BTreeMap<u64, Live> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        match e.action {
            Action::Alloc => drop(live.insert(
                e.addr,
                Live {
                    bytes: e.size,
                    event: i,
                },
            )),
            Action::FreeRequested => drop(live.remove(&e.addr)),
            _ => {}
        }
    }
    live.into_values().collect()
}

/// The mapped memory, span by span, by address.
#[derive(Default)]
struct Layout {
    spans: BTreeMap<u64, Span>,
    segments: u32,
    allocated: u64,
    reserved: u64,
}

impl Layout {
    /// The history, or `None` where the events do not fit the layout they build (a block freed
    /// that was never handed out, a request into memory not mapped, a dump that differs).
    fn replay(mut self, snap: &Snapshot) -> Option<History> {
        let mut samples = Vec::with_capacity(snap.events.len());
        let mut oom = None;
        for (i, e) in snap.events.iter().enumerate() {
            self.step(i, e)?;
            if e.action == Action::Oom && oom.is_none() {
                oom = Some(self.oom_at(i, e.size, snap));
            }
            samples.push((self.allocated, self.reserved));
        }
        // the layout at the dump must be the snapshot's own
        let dumped = snap
            .segments
            .iter()
            .flat_map(|s| &s.blocks)
            .filter(|b| b.state == "active_allocated")
            .map(|b| u128::from(b.size))
            .sum::<u128>();
        if dumped != u128::from(self.allocated) {
            return None;
        }
        let (peak_event, peak_allocated) = peak(&samples, |s| s.0);
        let internal_at_dump = self.oom_at(0, 0, snap).internal;
        Some(History {
            internal_at_dump,
            peak_reserved: peak(&samples, |s| s.1).1,
            samples,
            peak_allocated,
            peak_event,
            oom,
            whole_run: true,
            exact: true,
        })
    }

    /// The cache when the request of event `event` (`requested` bytes) failed.
    fn oom_at(&self, event: usize, requested: u64, snap: &Snapshot) -> Oom {
        let free = self.spans.values().filter(|s| s.state == State::Free);
        let (cached_free, largest_free) = free.fold((0, 0), |(sum, max), s| {
            (sum + s.size, u64::max(max, s.size))
        });
        // what the allocated blocks hold beyond their requests: rounding, rests not split off
        let internal = self
            .spans
            .values()
            .filter(|s| s.state == State::Allocated)
            .map(|s| s.size - snap.events[s.event].size.min(s.size))
            .sum();
        Oom {
            event,
            requested,
            allocated: self.allocated,
            reserved: self.reserved,
            cached_free,
            largest_free,
            internal: Some(internal),
        }
    }

    /// Applies event `i`; `None` where it does not fit the layout.
    fn step(&mut self, i: usize, e: &crate::read::Event) -> Option<()> {
        match e.action {
            Action::SegmentAlloc => self.map(e.addr, e.size, false),
            Action::SegmentMap => self.map(e.addr, e.size, true),
            Action::SegmentFree | Action::SegmentUnmap => self.unmap(e.addr, e.size),
            Action::Alloc => self.alloc(e.addr, e.size, i),
            Action::FreeRequested => self.free_requested(e.addr),
            Action::FreeCompleted => self.free_completed(e.addr),
            Action::Oom | Action::Other => Some(()),
        }
    }

    /// A new segment, or pages mapped into an expandable one (joined to its mapped neighbours).
    fn map(&mut self, addr: u64, size: u64, expandable: bool) -> Option<()> {
        // (a size past any card is a broken file: no sums past 64 bits below)
        if u128::from(size) > CEILING_BYTES || addr.checked_add(size).is_none() {
            return None;
        }
        let neighbour = self
            .spans
            .range(..addr)
            .next_back()
            .filter(|(a, s)| *a + s.size == addr && s.expandable)
            .map(|(_, s)| s.segment)
            .or_else(|| {
                self.spans
                    .get(&(addr + size))
                    .filter(|s| s.expandable)
                    .map(|s| s.segment)
            });
        let segment = match (expandable, neighbour) {
            (true, Some(seg)) => seg,
            _ => {
                self.segments += 1;
                self.segments
            }
        };
        self.spans.insert(
            addr,
            Span {
                size,
                state: State::Free,
                event: 0,
                segment,
                expandable,
            },
        );
        self.reserved = self.reserved.checked_add(size)?;
        self.merge(addr);
        Some(())
    }

    /// Takes `size` bytes at `addr` out of the free span that holds them, leaving what lies before
    /// `addr` free; that span, and its bytes from `addr` on. `None` where no free span holds them.
    fn carve(&mut self, addr: u64, size: u64) -> Option<(Span, u64)> {
        let (&start, &span) = self.spans.range(..=addr).next_back()?;
        if span.state != State::Free || start + span.size < addr.checked_add(size)? {
            return None;
        }
        self.spans.remove(&start);
        if start < addr {
            self.spans.insert(
                start,
                Span {
                    size: addr - start,
                    ..span
                },
            );
        }
        Some((span, start + span.size - addr))
    }

    /// A segment freed, or pages unmapped: the free memory they covered goes.
    fn unmap(&mut self, addr: u64, size: u64) -> Option<()> {
        let (span, from_addr) = self.carve(addr, size)?;
        if size < from_addr {
            self.spans.insert(
                addr + size,
                Span {
                    size: from_addr - size,
                    ..span
                },
            );
        }
        self.reserved -= size;
        Some(())
    }

    /// A request served at `addr`: the block the allocator hands out there.
    fn alloc(&mut self, addr: u64, requested: u64, event: usize) -> Option<()> {
        if u128::from(requested) > CEILING_BYTES {
            return None;
        }
        let size = round_size(requested);
        let (span, free) = self.carve(addr, size)?;
        let remaining = free - size;
        let small = size <= SMALL_SIZE;
        let split = if small || span.expandable {
            remaining >= MIN_BLOCK
        } else {
            remaining > SMALL_SIZE
        };
        let handed = if split { size } else { free };
        self.spans.insert(
            addr,
            Span {
                size: handed,
                state: State::Allocated,
                event,
                ..span
            },
        );
        if split {
            self.spans.insert(
                addr + size,
                Span {
                    size: remaining,
                    ..span
                },
            );
        }
        self.allocated = self.allocated.checked_add(handed)?;
        Some(())
    }

    fn free_requested(&mut self, addr: u64) -> Option<()> {
        let span = self
            .spans
            .get_mut(&addr)
            .filter(|s| s.state == State::Allocated)?;
        span.state = State::Pending;
        self.allocated -= span.size;
        Some(())
    }

    fn free_completed(&mut self, addr: u64) -> Option<()> {
        let span = self
            .spans
            .get_mut(&addr)
            .filter(|s| s.state == State::Pending)?;
        span.state = State::Free;
        self.merge(addr);
        Some(())
    }

    /// Joins the free span at `addr` with free neighbours of its segment.
    fn merge(&mut self, addr: u64) {
        let mut at = addr;
        let Some(&span) = self.spans.get(&at) else {
            return;
        };
        let joins = |s: &Span| s.state == State::Free && s.segment == span.segment;
        if let Some((&before, prev)) = self.spans.range(..at).next_back() {
            if before + prev.size == at && joins(prev) {
                let size = prev.size + span.size;
                self.spans.remove(&at);
                self.spans.insert(before, Span { size, ..span });
                at = before;
            }
        }
        let here = self.spans[&at];
        if let Some(next) = self.spans.get(&(at + here.size)).copied() {
            if joins(&next) {
                self.spans.remove(&(at + here.size));
                self.spans.insert(
                    at,
                    Span {
                        size: here.size + next.size,
                        ..here
                    },
                );
            }
        }
    }
}
