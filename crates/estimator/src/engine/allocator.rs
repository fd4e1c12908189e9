//! A simulation of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp), the
//! part of it that decides how many bytes `memory_allocated` counts, how many are reserved, and
//! whether a request under a memory cap fails.
//!
//! Modelled: request rounding to 512 B; the small (≤ 1 MiB) and large pools; segment sizes
//! (2 MiB for small requests, 20 MiB below 10 MiB, else rounded up to 2 MiB); best fit by
//! (size, address) among cached free blocks; splitting (small pool: remainder ≥ 512 B; large
//! pool: remainder > 1 MiB — otherwise the whole block is handed out and counted); merging of
//! freed neighbours; on a failed cudaMalloc, freeing every cached unsplit segment and one retry
//! before OOM; and `expandable_segments:True`, where each pool grows one segment in 2 MiB / 20 MiB
//! pages and blocks split down to 512 B.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::config::Allocator;

pub const MIN_BLOCK: u128 = 512;
pub const SMALL_SIZE: u128 = 1 << 20;
pub const SMALL_BUFFER: u128 = 2 << 20;
pub const LARGE_BUFFER: u128 = 20 << 20;
pub const MIN_LARGE_ALLOC: u128 = 10 << 20;
pub const ROUND_LARGE: u128 = 2 << 20;

/// The size a request is rounded to (`round_size`).
pub fn round_size(bytes: u128) -> u128 {
    if bytes < MIN_BLOCK {
        MIN_BLOCK
    } else {
        bytes.div_ceil(MIN_BLOCK) * MIN_BLOCK
    }
}

/// The size of the segment cudaMalloc'd for a request that no cached block can serve.
pub fn segment_size(rounded: u128) -> u128 {
    if rounded <= SMALL_SIZE {
        SMALL_BUFFER
    } else if rounded < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        rounded.div_ceil(ROUND_LARGE) * ROUND_LARGE
    }
}

/// Block addresses are distinct u64s: a multiplicative hash is enough, and much faster than
/// the default SipHash on the replay's hot path.
#[derive(Default)]
struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// A handle to an allocated block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockId(u64);

/// A request the simulated allocator could not serve under its cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    /// The request as made (before rounding).
    pub requested: u128,
    pub allocated: u128,
    pub reserved: u128,
}

#[derive(Clone, Debug)]
struct Block {
    size: u128,
    segment: usize,
    allocated: bool,
    prev: Option<u64>,
    next: Option<u64>,
    small: bool,
}

#[derive(Clone, Debug)]
struct Segment {
    size: u128,
    live: bool,
    /// Expandable segments grow; their pages are mapped on demand.
    expandable: bool,
}

/// The simulated allocator. Addresses are virtual: segments are laid out in creation order,
/// which reproduces the best-fit tie-break by address within and across segments.
#[derive(Clone, Debug)]
pub struct CachingAllocator {
    mode: Allocator,
    cap: Option<u128>,
    blocks: AddrMap<Block>,
    free_small: BTreeSet<(u128, u64)>,
    free_large: BTreeSet<(u128, u64)>,
    segments: Vec<Segment>,
    next_addr: u64,
    allocated: u128,
    reserved: u128,
    peak_allocated: u128,
    peak_reserved: u128,
    /// Expandable mode: the mapped pages of each pool's segment (small, large), by page index.
    mapped: [PageRanges; 2],
    /// Number of times a failed cudaMalloc freed the cache and retried.
    pub retries: u32,
}

/// Gap between segments' virtual addresses, so segments never look adjacent.
const SEGMENT_GAP: u64 = 1 << 30;

/// The virtual range an expandable segment may grow into (PyTorch reserves about the card's size).
const EXPANDABLE_RANGE: u128 = 1 << 48;

impl CachingAllocator {
    /// `cap`: the most bytes that may be reserved (as `set_per_process_memory_fraction` or a full
    /// card would impose); `None` for no limit.
    pub fn new(mode: Allocator, cap: Option<u128>) -> Self {
        CachingAllocator {
            mode,
            cap,
            blocks: AddrMap::default(),
            free_small: BTreeSet::new(),
            free_large: BTreeSet::new(),
            segments: Vec::new(),
            next_addr: 1 << 50,
            allocated: 0,
            reserved: 0,
            peak_allocated: 0,
            peak_reserved: 0,
            mapped: [PageRanges::default(), PageRanges::default()],
            retries: 0,
        }
    }

    pub fn allocated(&self) -> u128 {
        self.allocated
    }
    pub fn reserved(&self) -> u128 {
        self.reserved
    }
    pub fn peak_allocated(&self) -> u128 {
        self.peak_allocated
    }
    pub fn peak_reserved(&self) -> u128 {
        self.peak_reserved
    }
    /// Forgets the peaks (`torch.cuda.reset_peak_memory_stats`).
    pub fn reset_peaks(&mut self) {
        self.peak_allocated = self.allocated;
        self.peak_reserved = self.reserved;
    }

    /// The bytes a block handed out for this request counts (without allocating it).
    pub fn block_size(&self, id: BlockId) -> u128 {
        self.blocks.get(&id.0).map_or(0, |b| b.size)
    }

    fn pool(&mut self, small: bool) -> &mut BTreeSet<(u128, u64)> {
        if small {
            &mut self.free_small
        } else {
            &mut self.free_large
        }
    }

    /// `malloc`: serve from the cache by best fit, else map a new segment (or grow the
    /// expandable one); on failure free the cached segments and retry once.
    pub fn malloc(&mut self, requested: u128) -> Result<BlockId, OutOfMemory> {
        let size = round_size(requested);
        let small = size <= SMALL_SIZE;
        if self.mode == Allocator::ExpandableSegments {
            return self.malloc_expandable(requested, size, small);
        }
        let addr = match self.best_fit(size, small) {
            Some(a) => a,
            None => match self.new_memory(size, small) {
                Some(a) => a,
                None => {
                    self.release_cached();
                    self.retries += 1;
                    match self.new_memory(size, small) {
                        Some(a) => a,
                        None => return Err(self.oom(requested)),
                    }
                }
            },
        };
        self.take(addr, size);
        Ok(BlockId(addr))
    }

    fn oom(&self, requested: u128) -> OutOfMemory {
        OutOfMemory {
            requested,
            allocated: self.allocated,
            reserved: self.reserved,
        }
    }

    /// Expandable segments: one segment per pool in a virtual range far larger than the card;
    /// best fit among free blocks (the unmapped tail is the largest), then the pages the block
    /// covers are mapped. If the cap is in the way, every free page is unmapped and the mapping
    /// retried once.
    fn malloc_expandable(
        &mut self,
        requested: u128,
        size: u128,
        small: bool,
    ) -> Result<BlockId, OutOfMemory> {
        if self.segments.is_empty() {
            for pool_small in [true, false] {
                self.segments.push(Segment {
                    size: 0,
                    live: true,
                    expandable: true,
                });
                let seg = self.segments.len() - 1;
                let base = Self::expandable_base(usize::from(!pool_small));
                self.blocks.insert(
                    base,
                    Block {
                        size: EXPANDABLE_RANGE,
                        segment: seg,
                        allocated: false,
                        prev: None,
                        next: None,
                        small: pool_small,
                    },
                );
                self.pool(pool_small).insert((EXPANDABLE_RANGE, base));
            }
        }
        let Some(addr) = self.best_fit(size, small) else {
            return Err(self.oom(requested));
        };
        let pool_ix = usize::from(!small);
        let page = if small { SMALL_BUFFER } else { LARGE_BUFFER };
        let (first, last) = (addr as u128 / page, (addr as u128 + size - 1) / page);
        let (first, last) = (first as u64, last as u64);
        let unmapped = |mapped: &PageRanges| u128::from(mapped.missing(first, last));
        let mut cost = unmapped(&self.mapped[pool_ix]) * page;
        if self.cap.is_some_and(|cap| self.reserved + cost > cap) {
            self.release_cached();
            self.retries += 1;
            cost = unmapped(&self.mapped[pool_ix]) * page;
            if self.cap.is_some_and(|cap| self.reserved + cost > cap) {
                // the block goes back to the pool untouched
                let free_size = self.blocks.get(&addr).map_or(0, |b| b.size);
                self.pool(small).insert((free_size, addr));
                return Err(self.oom(requested));
            }
        }
        self.mapped[pool_ix].insert(first, last);
        self.reserved += cost;
        self.peak_reserved = self.peak_reserved.max(self.reserved);
        self.take(addr, size);
        Ok(BlockId(addr))
    }

    fn best_fit(&mut self, size: u128, small: bool) -> Option<u64> {
        let pool = self.pool(small);
        let &(bsize, addr) = pool.range((size, 0)..).next()?;
        pool.remove(&(bsize, addr));
        Some(addr)
    }

    /// Hands out the free block at `addr` for a rounded request, splitting off the remainder
    /// when the allocator would (`shouldSplit`).
    fn take(&mut self, addr: u64, size: u128) {
        let expandable = self.mode == Allocator::ExpandableSegments;
        let block = self
            .blocks
            .get(&addr)
            .cloned()
            .expect("take() of a known free block");
        let remaining = block.size - size;
        let split = if block.small || expandable {
            remaining >= MIN_BLOCK
        } else {
            remaining > SMALL_SIZE
        };
        let mut handed = block.size;
        if split {
            handed = size;
            let rest_addr = addr + size as u64;
            let rest = Block {
                size: remaining,
                segment: block.segment,
                allocated: false,
                prev: Some(addr),
                next: block.next,
                small: block.small,
            };
            if let Some(n) = block.next {
                if let Some(nb) = self.blocks.get_mut(&n) {
                    nb.prev = Some(rest_addr);
                }
            }
            self.blocks.insert(rest_addr, rest);
            self.pool(block.small).insert((remaining, rest_addr));
        }
        let b = self.blocks.get_mut(&addr).expect("block present");
        b.allocated = true;
        b.size = handed;
        if split {
            b.next = Some(addr + size as u64);
        }
        self.allocated += handed;
        self.peak_allocated = self.peak_allocated.max(self.allocated);
    }

    /// cudaMalloc of a new segment, or growth of the pool's expandable segment; `None` when the
    /// cap would be exceeded. Returns the address of a free block of at least `size` bytes.
    fn new_memory(&mut self, size: u128, small: bool) -> Option<u64> {
        let seg_size = segment_size(size);
        if self.cap.is_some_and(|cap| self.reserved + seg_size > cap) {
            return None;
        }
        // cudaMalloc hands out addresses downwards: a new segment lies below the older ones, so
        // best fit's tie-break by address prefers the newest segment. (With increasing
        // addresses the simulation misses the measured reserved memory of n_embd=576 runs by
        // 0.8-1.5 GiB; with decreasing ones it matches them to 0.01 GiB.)
        self.next_addr -= seg_size as u64 + SEGMENT_GAP;
        let addr = self.next_addr;
        self.segments.push(Segment {
            size: seg_size,
            live: true,
            expandable: false,
        });
        self.blocks.insert(
            addr,
            Block {
                size: seg_size,
                segment: self.segments.len() - 1,
                allocated: false,
                prev: None,
                next: None,
                small,
            },
        );
        self.reserved += seg_size;
        self.peak_reserved = self.peak_reserved.max(self.reserved);
        Some(addr)
    }

    /// Where a pool's expandable segment starts (0: small pool, 1: large), far above the
    /// regular segments and far from each other.
    fn expandable_base(pool_ix: usize) -> u64 {
        (1u64 << 52) + (pool_ix as u64) * (1u64 << 51)
    }

    /// `free`: the block goes back to its pool, merged with free neighbours.
    pub fn free(&mut self, id: BlockId) {
        let Some(block) = self.blocks.get(&id.0).cloned() else {
            return;
        };
        if !block.allocated {
            return;
        }
        self.allocated -= block.size;
        let mut addr = id.0;
        let mut size = block.size;
        let mut prev = block.prev;
        let mut next = block.next;
        // merge with a free next block
        if let Some(n) = next {
            if let Some(nb) = self.blocks.get(&n).cloned() {
                if !nb.allocated {
                    self.pool(block.small).remove(&(nb.size, n));
                    self.blocks.remove(&n);
                    size += nb.size;
                    next = nb.next;
                    if let Some(nn) = next {
                        if let Some(b) = self.blocks.get_mut(&nn) {
                            b.prev = Some(addr);
                        }
                    }
                }
            }
        }
        // merge into a free previous block
        if let Some(p) = prev {
            if let Some(pb) = self.blocks.get(&p).cloned() {
                if !pb.allocated {
                    self.pool(block.small).remove(&(pb.size, p));
                    self.blocks.remove(&addr);
                    addr = p;
                    size += pb.size;
                    prev = pb.prev;
                    if let Some(n) = next {
                        if let Some(b) = self.blocks.get_mut(&n) {
                            b.prev = Some(addr);
                        }
                    }
                }
            }
        }
        self.blocks.insert(
            addr,
            Block {
                size,
                segment: block.segment,
                allocated: false,
                prev,
                next,
                small: block.small,
            },
        );
        self.pool(block.small).insert((size, addr));
    }

    /// `release_cached_blocks`: every segment that is entirely free goes back to the driver
    /// (expandable segments unmap their free pages at the end).
    fn release_cached(&mut self) {
        let whole: Vec<(u64, usize, u128, bool)> = self
            .blocks
            .iter()
            .filter(|(_, b)| !b.allocated && b.prev.is_none() && b.next.is_none())
            .map(|(&a, b)| (a, b.segment, b.size, b.small))
            .collect();
        for (addr, seg, size, small) in whole {
            if self.segments[seg].expandable {
                continue;
            }
            self.pool(small).remove(&(size, addr));
            self.blocks.remove(&addr);
            self.segments[seg].live = false;
            self.reserved -= self.segments[seg].size;
        }
        // expandable: unmap every page no allocated block touches
        if self.mode == Allocator::ExpandableSegments {
            for pool_ix in 0..2 {
                let page = if pool_ix == 0 {
                    SMALL_BUFFER
                } else {
                    LARGE_BUFFER
                };
                let mut used = PageRanges::default();
                for (&addr, b) in &self.blocks {
                    if b.allocated && usize::from(!b.small) == pool_ix {
                        let (first, last) =
                            (addr as u128 / page, (addr as u128 + b.size - 1) / page);
                        used.insert(first as u64, last as u64);
                    }
                }
                let before = u128::from(self.mapped[pool_ix].len());
                self.mapped[pool_ix] = self.mapped[pool_ix].intersection(&used);
                self.reserved -= (before - u128::from(self.mapped[pool_ix].len())) * page;
            }
        }
    }

    /// Bytes reserved but not allocated: what an OOM message calls "reserved by PyTorch but
    /// unallocated".
    pub fn cached_free(&self) -> u128 {
        self.reserved - self.allocated
    }

    /// The largest free cached block (what a request can get without a new segment).
    pub fn largest_free_block(&self) -> u128 {
        let real = |set: &BTreeSet<(u128, u64)>| {
            set.iter()
                .rev()
                .map(|b| b.0)
                .find(|s| *s < EXPANDABLE_RANGE / 2)
                .unwrap_or(0)
        };
        real(&self.free_small).max(real(&self.free_large))
    }
}

/// A set of page indices kept as disjoint inclusive ranges (`first → last`): expandable segments
/// map gigabytes at a time, so a set of single pages would cost time in proportion to the bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct PageRanges(BTreeMap<u64, u64>);

impl PageRanges {
    /// Pages in the set.
    fn len(&self) -> u64 {
        self.0.iter().map(|(a, b)| b - a + 1).sum()
    }

    /// The ranges overlapping `first..=last`.
    fn overlapping(&self, first: u64, last: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        // the range starting at or before `first` may reach into it
        let before = self.0.range(..first).next_back().map(|(a, b)| (*a, *b));
        before
            .into_iter()
            .chain(self.0.range(first..=last).map(|(a, b)| (*a, *b)))
            .filter(move |&(a, b)| a <= last && b >= first)
    }

    /// Pages of `first..=last` not in the set.
    fn missing(&self, first: u64, last: u64) -> u64 {
        let covered: u64 = self
            .overlapping(first, last)
            .map(|(a, b)| b.min(last) - a.max(first) + 1)
            .sum();
        last - first + 1 - covered
    }

    /// Adds `first..=last`, merging with the ranges it overlaps or touches.
    fn insert(&mut self, first: u64, last: u64) {
        let (mut lo, mut hi) = (first, last);
        let touching: Vec<(u64, u64)> = self
            .overlapping(first.saturating_sub(1), last.saturating_add(1))
            .collect();
        for (a, b) in touching {
            self.0.remove(&a);
            lo = lo.min(a);
            hi = hi.max(b);
        }
        self.0.insert(lo, hi);
    }

    /// The pages in both sets.
    fn intersection(&self, other: &PageRanges) -> PageRanges {
        let mut out = PageRanges::default();
        for (&a, &b) in &self.0 {
            for (c, d) in other.overlapping(a, b) {
                out.0.insert(a.max(c), b.min(d));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PageRanges against a plain set of pages, over overlapping, touching and nested ranges.
    #[test]
    fn page_ranges_behave_as_a_set_of_pages() {
        let ops: [(u64, u64); 8] = [
            (10, 20),
            (30, 40),
            (21, 29),
            (5, 7),
            (6, 12),
            (50, 50),
            (45, 49),
            (100, 200),
        ];
        let mut ranges = PageRanges::default();
        let mut pages = BTreeSet::new();
        for (a, b) in ops {
            let naive_missing = (a..=b).filter(|p| !pages.contains(p)).count() as u64;
            assert_eq!(ranges.missing(a, b), naive_missing, "{a}..={b}");
            ranges.insert(a, b);
            pages.extend(a..=b);
            assert_eq!(ranges.len(), pages.len() as u64);
        }
        let mut used = PageRanges::default();
        used.insert(8, 33);
        used.insert(150, 160);
        let kept = ranges.intersection(&used);
        let naive: Vec<u64> = pages
            .iter()
            .copied()
            .filter(|p| (8..=33).contains(p) || (150..=160).contains(p))
            .collect();
        assert_eq!(kept.len(), naive.len() as u64);
        assert_eq!(
            kept.missing(8, 33),
            (8..=33).filter(|p| !naive.contains(p)).count() as u64
        );
    }

    const MIB: u128 = 1 << 20;

    #[test]
    fn sizes_follow_the_allocator() {
        assert_eq!(round_size(1), 512);
        assert_eq!(round_size(1536), 1536);
        assert_eq!(round_size(1537), 2048);
        assert_eq!(segment_size(512), 2 * MIB);
        assert_eq!(segment_size(MIB), 2 * MIB);
        assert_eq!(segment_size(MIB + 512), 20 * MIB);
        assert_eq!(segment_size(10 * MIB), 10 * MIB);
        assert_eq!(segment_size(10 * MIB + 1), 12 * MIB);
    }

    #[test]
    fn large_remainders_up_to_1_mib_are_not_split() {
        let mut a = CachingAllocator::new(Allocator::Default, None);
        // GPT-2's wte: 50304 × 768 × 4 bytes = 148.1 MiB → a 148.75 MiB segment, 640 KiB unsplit
        let wte = a.malloc(154_533_888).unwrap();
        assert_eq!(a.block_size(wte), 155_189_248);
        assert_eq!(a.allocated() - 154_533_888, 655_360);
        // a 7 MiB request splits a 20 MiB segment; the 13 MiB rest serves the next one
        let x = a.malloc(7 * MIB).unwrap();
        assert_eq!(a.block_size(x), 7 * MIB);
        // 12 MiB + 512 B best-fits the 13 MiB rest; 1 MiB − 512 B left is not split off
        let y = a.malloc(12 * MIB + 512).unwrap();
        assert_eq!(a.block_size(y), 13 * MIB);
        assert_eq!(a.reserved(), 155_189_248 + 20 * MIB);
        a.free(x);
        a.free(y);
        a.free(wte);
        assert_eq!(a.allocated(), 0);
    }

    #[test]
    fn best_fit_reuses_and_merges() {
        let mut a = CachingAllocator::new(Allocator::Default, None);
        let x = a.malloc(4 * MIB).unwrap();
        let y = a.malloc(4 * MIB).unwrap();
        a.free(x);
        a.free(y);
        // x, y and the 12 MiB rest merged back into one 20 MiB block
        let z = a.malloc(19 * MIB).unwrap();
        assert_eq!(a.reserved(), 20 * MIB);
        assert_eq!(
            a.block_size(z),
            20 * MIB,
            "a 1 MiB remainder is not split off"
        );
    }

    #[test]
    fn cap_frees_cache_then_fails() {
        let mut a = CachingAllocator::new(Allocator::Default, Some(100 * MIB));
        let x = a.malloc(60 * MIB).unwrap();
        a.free(x);
        // 60 MiB cached; 70 MiB does not fit beside it, so the cache is released and it fits
        let y = a.malloc(70 * MIB).unwrap();
        assert_eq!(a.retries, 1);
        assert_eq!(a.reserved(), 70 * MIB);
        let e = a.malloc(40 * MIB).unwrap_err();
        assert_eq!(e.requested, 40 * MIB);
        a.free(y);
    }

    #[test]
    fn expandable_segments_grow_in_place() {
        let mut a = CachingAllocator::new(Allocator::ExpandableSegments, Some(100 * MIB));
        let x = a.malloc(30 * MIB).unwrap();
        assert_eq!(a.reserved(), 40 * MIB);
        let y = a.malloc(5 * MIB).unwrap();
        assert_eq!(a.reserved(), 40 * MIB, "served from the mapped tail");
        a.free(x);
        // 30 MiB free at the start + 5 MiB free at the end are not contiguous, but 60 MiB
        // fits after unmapping nothing and growing to 100
        let z = a.malloc(55 * MIB).unwrap();
        assert_eq!(a.allocated(), 60 * MIB);
        a.free(y);
        a.free(z);
    }
}
