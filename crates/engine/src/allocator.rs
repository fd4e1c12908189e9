//! A simulation of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp), the
//! part of it that decides how many bytes `memory_allocated` counts, how many are reserved, and
//! whether a request under a memory cap fails.
//!
//! Modelled: request rounding to 512 B; the small (≤ 1 MiB) and large pools; segment sizes
//! (2 MiB for small requests, 20 MiB below 10 MiB, else rounded up to 2 MiB); best fit by
//! (size, address) among cached free blocks; splitting (small pool: remainder ≥ 512 B; large
//! pool: remainder > 1 MiB — otherwise the whole block is handed out and counted); merging of
//! freed neighbours; on a failed cudaMalloc, freeing every cached unsplit segment and one retry
//! before OOM; and `expandable_segments:True`, where each pool has one segment of virtual
//! addresses whose 2 MiB / 20 MiB pages are mapped on demand and unmapped when the cache is
//! released, and blocks split down to 512 B (PyTorch 2.11: `try_allocate_expandable_block`,
//! `find_expandable_block`, `map_block`, `unmap_block`).

use std::cmp::Ordering;
use std::collections::BTreeSet;

use crate::events::CEILING_BYTES;
use crate::settings::Allocator;

// Bytes are `u64` in here, where the rest of vramfit counts in `u128`: no request passes
// [`CEILING_BYTES`] (2^48; a sequence stops before one would, and `malloc` refuses one), a
// block is at most an expandable segment's range (2^27 pages of 20 MiB), and wasm has no
// 128-bit arithmetic — each `u128` add or compare is several 64-bit ones, on every event of a
// replay, which the page runs before its first answer on code V8 has not optimised yet.

pub const MIN_BLOCK: u64 = 512;
pub const SMALL_SIZE: u64 = 1 << 20;
pub const SMALL_BUFFER: u64 = 2 << 20;
pub const LARGE_BUFFER: u64 = 20 << 20;
pub const MIN_LARGE_ALLOC: u64 = 10 << 20;
pub const ROUND_LARGE: u64 = 2 << 20;

/// The size a request is rounded to (`round_size`).
pub fn round_size(bytes: u64) -> u64 {
    if bytes < MIN_BLOCK {
        MIN_BLOCK
    } else {
        bytes.div_ceil(MIN_BLOCK) * MIN_BLOCK
    }
}

/// The size of the segment cudaMalloc'd for a request that no cached block can serve.
pub fn segment_size(rounded: u64) -> u64 {
    if rounded <= SMALL_SIZE {
        SMALL_BUFFER
    } else if rounded < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        rounded.div_ceil(ROUND_LARGE) * ROUND_LARGE
    }
}

/// A handle to an allocated block: its slot in the allocator's block store, valid until the block
/// is freed (the slot is then reused).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockId(usize);

/// A request the simulated allocator could not serve under its cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    /// The request as made (before rounding).
    pub requested: u64,
    pub allocated: u64,
    pub reserved: u64,
}

/// A block of a segment. Neighbours are slots in the block store; `addr` orders best fit.
#[derive(Clone, Copy, Debug)]
struct Block {
    addr: u64,
    size: u64,
    segment: usize,
    allocated: bool,
    prev: Option<usize>,
    next: Option<usize>,
    small: bool,
    /// Backed by memory. Only an expandable segment has unmapped blocks: free address space
    /// whose pages are not mapped, kept out of the best-fit pools.
    mapped: bool,
}

/// A free block in its pool, in best-fit order: by size, then address. Addresses are unique, so
/// the slot (there to find the block without a lookup) never decides the order.
#[derive(Clone, Copy, Debug)]
struct Free {
    size: u64,
    addr: u64,
    slot: usize,
}

/// A pool's free blocks in best-fit order. A pool of a few blocks is a sorted vector: a pool
/// holds tens of blocks in most runs (10-50 on average over the replays of the page's default
/// runs, measured), where a binary search and one move of the tail cost less than a B-tree's walk
/// through its nodes — above all in wasm, whose first replay on a page runs on V8's baseline code
/// (the B-tree was half of it) while the move is one `memory.copy`. A pool of many blocks is a
/// B-tree, where moving the tail would cost more (~1,000 blocks at 96 layers: a quarter slower as
/// a vector; 1,024 layers: four times).
#[derive(Clone, Debug)]
enum Pool {
    Few(Vec<Free>),
    Many(BTreeSet<Free>),
}

/// A pool of more blocks than this becomes a B-tree; one of fewer than [`FEW_AGAIN`], a vector
/// again (apart, so that a pool near one size does not change form at every event).
const MANY: usize = 256;
const FEW_AGAIN: usize = 64;

impl Default for Pool {
    fn default() -> Self {
        Pool::Few(Vec::new())
    }
}

impl Pool {
    fn insert(&mut self, free: Free) {
        match self {
            Pool::Few(v) if v.len() >= MANY => {
                // one insert at a time: `collect` would sort, more code in the module for nothing
                let mut tree = BTreeSet::new();
                for f in v.drain(..).chain([free]) {
                    tree.insert(f);
                }
                *self = Pool::Many(tree);
            }
            Pool::Few(v) => v.insert(lower_bound(v, free.size, free.addr), free),
            Pool::Many(t) => {
                t.insert(free);
            }
        }
    }

    fn remove(&mut self, free: &Free) {
        match self {
            Pool::Few(v) => {
                let at = lower_bound(v, free.size, free.addr);
                if v.get(at)
                    .is_some_and(|f| f.size == free.size && f.addr == free.addr)
                {
                    v.remove(at);
                }
            }
            Pool::Many(t) => {
                t.remove(free);
                if t.len() < FEW_AGAIN {
                    *self = Pool::Few(std::mem::take(t).into_iter().collect());
                }
            }
        }
    }

    /// The block best fit hands out for `size` bytes ([`Pool::iter_from`]'s first).
    fn best(&self, size: u64) -> Option<Free> {
        self.iter_from(size).next()
    }

    /// The blocks of at least `size` bytes, smallest (then lowest address) first.
    fn iter_from(&self, size: u64) -> PoolIter<'_> {
        match self {
            Pool::Few(v) => PoolIter::Few(v[lower_bound(v, size, 0)..].iter()),
            Pool::Many(t) => PoolIter::Many(t.range(
                Free {
                    size,
                    addr: 0,
                    slot: 0,
                }..,
            )),
        }
    }

    fn largest(&self) -> u64 {
        match self {
            Pool::Few(v) => v.last(),
            Pool::Many(t) => t.last(),
        }
        .map_or(0, |f| f.size)
    }

    fn iter(&self) -> PoolIter<'_> {
        self.iter_from(0)
    }

    #[cfg(test)]
    fn contains(&self, free: &Free) -> bool {
        match self {
            Pool::Few(v) => v.binary_search(free).is_ok(),
            Pool::Many(t) => t.contains(free),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        match self {
            Pool::Few(v) => v.len(),
            Pool::Many(t) => t.len(),
        }
    }
}

/// Where a block of `size` bytes at `addr` is or would be in a sorted pool: the first block not
/// before it. Written out rather than `partition_point` with a closure, which opt-level "z"
/// leaves a call per step of the search (in wasm's baseline code, a tenth of a replay).
#[inline(always)]
fn lower_bound(v: &[Free], size: u64, addr: u64) -> usize {
    let (mut lo, mut hi) = (0, v.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let f = v[mid];
        if f.size < size || (f.size == size && f.addr < addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// A pool's blocks in order, whichever form it has.
enum PoolIter<'a> {
    Few(std::slice::Iter<'a, Free>),
    Many(std::collections::btree_set::Range<'a, Free>),
}

impl Iterator for PoolIter<'_> {
    type Item = Free;

    fn next(&mut self) -> Option<Free> {
        match self {
            PoolIter::Few(i) => i.next(),
            PoolIter::Many(i) => i.next(),
        }
        .copied()
    }
}

impl Ord for Free {
    // inlined into the pools' binary searches, the replay's hottest loop (opt-level "z" would call it)
    #[inline(always)]
    fn cmp(&self, other: &Free) -> Ordering {
        self.size.cmp(&other.size).then(self.addr.cmp(&other.addr))
    }
}

impl PartialOrd for Free {
    #[inline(always)]
    fn partial_cmp(&self, other: &Free) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Free {
    #[inline(always)]
    fn eq(&self, other: &Free) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Free {}

#[derive(Clone, Debug)]
struct Segment {
    size: u64,
    live: bool,
    /// Expandable segments grow; their pages are mapped on demand.
    expandable: bool,
}

/// The simulated allocator. Addresses are virtual: segments are laid out in creation order,
/// which reproduces the best-fit tie-break by address within and across segments.
#[derive(Clone, Debug)]
pub struct CachingAllocator {
    mode: Allocator,
    cap: Option<Cap>,
    /// Every block, by slot: a slab rather than a map by address, because the replay looks
    /// blocks up on every event (hashing was a quarter of its time); a merged-away block's slot
    /// is reused.
    blocks: Vec<Option<Block>>,
    vacant: Vec<usize>,
    free_small: Pool,
    free_large: Pool,
    segments: Vec<Segment>,
    next_addr: u64,
    /// The address the driver gave the next segment, where a trace says it
    /// ([`CachingAllocator::next_segment_at`]).
    driver_addr: Option<u64>,
    allocated: u64,
    reserved: u64,
    peak_allocated: u64,
    peak_reserved: u64,
    /// Expandable mode: each pool's unmapped blocks (small, large) by address, then slot.
    unmapped: [BTreeSet<(u64, usize)>; 2],
    /// Number of times a failed cudaMalloc freed the cache and retried.
    pub retries: u32,
    /// The segments' changes, where recorded ([`CachingAllocator::record_segments`]).
    changes: Option<Vec<SegmentChange>>,
}

/// A change to what the allocator holds from the driver, as a memory snapshot's trace records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentChange {
    pub kind: SegmentChangeKind,
    pub addr: u64,
    pub size: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentChangeKind {
    /// cudaMalloc of a segment.
    Alloc,
    /// A segment given back (`release_cached_blocks`).
    Free,
    /// Pages mapped into an expandable segment.
    Map,
    /// Pages unmapped from one.
    Unmap,
}

/// A live segment as a memory snapshot lists it: its mapped blocks in address order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentLayout {
    pub addr: u64,
    pub size: u64,
    pub expandable: bool,
    /// Of the small pool (requests up to 1 MiB).
    pub small: bool,
    /// Each block's address, size, whether it is allocated, and its handle.
    pub blocks: Vec<(u64, u64, bool, BlockId)>,
}

/// The most bytes the allocator may reserve, and what imposes that limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cap {
    pub bytes: u128,
    pub kind: CapKind,
}

impl Cap {
    /// A card's memory (or what of it the allocator may use).
    pub fn card(bytes: u128) -> Cap {
        Cap {
            bytes,
            kind: CapKind::Card,
        }
    }
}

/// How the cap stops an expandable segment from growing. The default allocator asks for whole
/// segments, so both kinds stop it at the same request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapKind {
    /// A card's memory: mapping a page fails once the card has none left, so a request costs
    /// only the pages it maps.
    Card,
    /// `torch.cuda.set_per_process_memory_fraction`: `alloc_block` refuses a request when the
    /// reserved bytes plus the request's whole allocation size would pass the fraction, however
    /// much of it is already mapped.
    Fraction,
}

/// Gap between segments' virtual addresses, so segments never look adjacent.
const SEGMENT_GAP: u64 = 1 << 30;

/// Pages of the virtual range an expandable segment may grow into. PyTorch reserves 9/8 of the
/// card's memory and opens another segment when a request finds no room; a range larger than any
/// run (2^48 bytes of small pages) leaves that second segment out.
const EXPANDABLE_PAGES: u64 = 1 << 27;

/// The page size of a pool's expandable segment.
fn page_size(small: bool) -> u64 {
    if small {
        SMALL_BUFFER
    } else {
        LARGE_BUFFER
    }
}

impl CachingAllocator {
    /// `cap`: the most bytes that may be reserved (as `set_per_process_memory_fraction` or a full
    /// card would impose); `None` for no limit.
    pub fn new(mode: Allocator, cap: Option<Cap>) -> Self {
        CachingAllocator {
            mode,
            cap,
            blocks: Vec::new(),
            vacant: Vec::new(),
            free_small: Pool::default(),
            free_large: Pool::default(),
            segments: Vec::new(),
            next_addr: 1 << 50,
            driver_addr: None,
            allocated: 0,
            reserved: 0,
            peak_allocated: 0,
            peak_reserved: 0,
            unmapped: [BTreeSet::new(), BTreeSet::new()],
            retries: 0,
            changes: None,
        }
    }

    /// Whether `bytes` more reserved would pass a cap of `kind`.
    fn over_cap(&self, kind: CapKind, bytes: u64) -> bool {
        self.cap
            .is_some_and(|cap| cap.kind == kind && u128::from(self.reserved + bytes) > cap.bytes)
    }

    pub fn allocated(&self) -> u64 {
        self.allocated
    }
    pub fn reserved(&self) -> u64 {
        self.reserved
    }
    pub fn peak_allocated(&self) -> u64 {
        self.peak_allocated
    }
    pub fn peak_reserved(&self) -> u64 {
        self.peak_reserved
    }
    /// Forgets the peaks (`torch.cuda.reset_peak_memory_stats`).
    pub fn reset_peaks(&mut self) {
        self.peak_allocated = self.allocated;
        self.peak_reserved = self.reserved;
    }

    /// The bytes a block handed out for this request counts (without allocating it).
    pub fn block_size(&self, id: BlockId) -> u64 {
        self.blocks
            .get(id.0)
            .and_then(|b| b.as_ref())
            .map_or(0, |b| b.size)
    }

    fn block(&self, slot: usize) -> &Block {
        self.blocks[slot].as_ref().expect("a live block's slot")
    }

    fn block_mut(&mut self, slot: usize) -> &mut Block {
        self.blocks[slot].as_mut().expect("a live block's slot")
    }

    /// Stores a new block; its slot.
    fn add_block(&mut self, block: Block) -> usize {
        match self.vacant.pop() {
            Some(slot) => {
                self.blocks[slot] = Some(block);
                slot
            }
            None => {
                self.blocks.push(Some(block));
                self.blocks.len() - 1
            }
        }
    }

    fn remove_block(&mut self, slot: usize) {
        self.blocks[slot] = None;
        self.vacant.push(slot);
    }

    /// Puts the free block in `slot` into its pool.
    fn pool_insert(&mut self, slot: usize) {
        let b = *self.block(slot);
        self.pool(b.small).insert(Free {
            size: b.size,
            addr: b.addr,
            slot,
        });
    }

    /// Takes the free block in `slot` out of its pool.
    fn pool_remove(&mut self, slot: usize) {
        let b = *self.block(slot);
        self.pool(b.small).remove(&Free {
            size: b.size,
            addr: b.addr,
            slot,
        });
    }

    fn pool(&mut self, small: bool) -> &mut Pool {
        if small {
            &mut self.free_small
        } else {
            &mut self.free_large
        }
    }

    /// `malloc`: serve from the cache by best fit, else map a new segment (or grow the
    /// expandable one); on failure free the cached segments and retry once.
    pub fn malloc(&mut self, requested: u64) -> Result<BlockId, OutOfMemory> {
        // (beyond any card, and where the sizes below could overflow)
        if u128::from(requested) > CEILING_BYTES {
            return Err(self.oom(requested));
        }
        let size = round_size(requested);
        let small = size <= SMALL_SIZE;
        if self.mode == Allocator::ExpandableSegments {
            return self.malloc_expandable(requested, size, small);
        }
        let slot = match self.best_fit(size, small) {
            Some(s) => s,
            None => match self.new_memory(size, small) {
                Some(s) => s,
                None => {
                    self.release_cached();
                    self.retries += 1;
                    match self.new_memory(size, small) {
                        Some(s) => s,
                        None => return Err(self.oom(requested)),
                    }
                }
            },
        };
        self.take(slot, size);
        Ok(BlockId(slot))
    }

    fn oom(&self, requested: u64) -> OutOfMemory {
        OutOfMemory {
            requested,
            allocated: self.allocated,
            reserved: self.reserved,
        }
    }

    /// Expandable segments (`malloc` with `expandable_segments:True`): best fit among the
    /// mapped free blocks; else, once the cap allows the request, map pages at the lowest
    /// address with room (`try_allocate_expandable_block`); if the cap is in the way, unmap every
    /// free page and try once more.
    fn malloc_expandable(
        &mut self,
        requested: u64,
        size: u64,
        small: bool,
    ) -> Result<BlockId, OutOfMemory> {
        if self.segments.is_empty() {
            for pool_small in [true, false] {
                self.segments.push(Segment {
                    size: 0,
                    live: true,
                    expandable: true,
                });
                let slot = self.add_block(Block {
                    addr: Self::expandable_base(pool_small),
                    size: EXPANDABLE_PAGES * page_size(pool_small),
                    segment: self.segments.len() - 1,
                    allocated: false,
                    prev: None,
                    next: None,
                    small: pool_small,
                    mapped: false,
                });
                self.unmapped_insert(slot);
            }
        }
        if let Some(slot) = self.best_fit_expandable(size, small) {
            self.take(slot, size);
            return Ok(BlockId(slot));
        }
        let slot = match self.grow_expandable(size, small) {
            Some(slot) => slot,
            None => {
                self.release_cached();
                self.retries += 1;
                self.grow_expandable(size, small)
                    .ok_or_else(|| self.oom(requested))?
            }
        };
        self.take(slot, size);
        Ok(BlockId(slot))
    }

    /// Best fit among the mapped free blocks (`get_free_block`), where a block followed by
    /// unmapped space counts as large as it could grow: the search moves on past it to the next
    /// larger block that would not grow.
    fn best_fit_expandable(&mut self, size: u64, small: bool) -> Option<usize> {
        let growable = |a: &Self, f: &Free| {
            let b = a.block(f.slot);
            b.size
                + b.next
                    .map(|n| a.block(n))
                    .filter(|n| !n.mapped)
                    .map_or(0, |n| n.size)
        };
        let pool = if small {
            &self.free_small
        } else {
            &self.free_large
        };
        let mut fits = pool.iter_from(size);
        let mut best = fits.next()?;
        for next in fits {
            if growable(self, &next) >= growable(self, &best) {
                break;
            }
            best = next;
        }
        self.pool(small).remove(&best);
        Some(best.slot)
    }

    /// `alloc_block` for an expandable segment: the cap's check, then pages mapped from the
    /// lowest address with room for `size` (merged with the free block before it); the slot of
    /// a mapped free block of at least `size`, out of its pool. `None` where the cap refuses.
    fn grow_expandable(&mut self, size: u64, small: bool) -> Option<usize> {
        if self.over_cap(CapKind::Fraction, segment_size(size)) {
            return None;
        }
        let mut at = self.find_room(size, small)?;
        if !self.block(at).mapped {
            at = self.map_block(at, size.min(self.block(at).size))?;
        }
        while self.block(at).size < size {
            let next = self.block(at).next.expect("the room found runs on");
            let want = (size - self.block(at).size).min(self.block(next).size);
            at = self.map_block(next, want)?;
        }
        self.pool_remove(at);
        Some(at)
    }

    /// `find_expandable_block`: the unmapped block of lowest address which, with the free block
    /// before it, starts `size` bytes of free address space; that start.
    fn find_room(&self, size: u64, small: bool) -> Option<usize> {
        self.unmapped[usize::from(!small)]
            .iter()
            .map(|&(_, slot)| match self.block(slot).prev {
                Some(p) if !self.block(p).allocated => p,
                _ => slot,
            })
            .find(|&start| {
                let mut room = 0;
                let mut at = Some(start);
                while let Some(b) = at.map(|s| self.block(s)).filter(|b| !b.allocated) {
                    room += b.size;
                    if room >= size {
                        return true;
                    }
                    at = b.next;
                }
                false
            })
    }

    /// `map_block`: maps the first `bytes` of an unmapped block, rounded up to whole pages (the
    /// rest stays unmapped), merges them with free mapped neighbours and pools the result; its
    /// slot. `None` where the card has no memory left for the pages (the block stays unmapped).
    fn map_block(&mut self, slot: usize, bytes: u64) -> Option<usize> {
        let b = *self.block(slot);
        let len = bytes.div_ceil(page_size(b.small)) * page_size(b.small);
        let len = len.min(b.size);
        if self.over_cap(CapKind::Card, len) {
            return None;
        }
        self.unmapped_remove(slot);
        if len < b.size {
            let rest = self.split_off(slot, len);
            self.unmapped_insert(rest);
        }
        self.block_mut(slot).mapped = true;
        self.note(SegmentChangeKind::Map, b.addr, len);
        self.reserved += len;
        self.peak_reserved = self.peak_reserved.max(self.reserved);
        let merged = self.merge_free_neighbours(slot);
        self.pool_insert(merged);
        Some(merged)
    }

    /// `unmap_block`: unmaps the whole pages inside a free mapped block (out of its pool); the
    /// bytes of a page it shares with a neighbour stay mapped as free blocks of their own.
    fn unmap_block(&mut self, slot: usize) {
        let b = *self.block(slot);
        let page = page_size(b.small);
        let offset = b.addr - Self::expandable_base(b.small);
        // the whole pages inside, as offsets into the block
        let (begin, end) = (
            offset.div_ceil(page) * page,
            (offset + b.size) / page * page,
        );
        if begin >= end {
            self.pool_insert(slot);
            return;
        }
        let (first, last) = (begin - offset, end - offset);
        let mut middle = slot;
        if first > 0 {
            middle = self.split_off(slot, first);
            self.pool_insert(slot);
        }
        if last < b.size {
            let after = self.split_off(middle, last - first);
            self.pool_insert(after);
        }
        self.block_mut(middle).mapped = false;
        self.note(SegmentChangeKind::Unmap, b.addr + first, last - first);
        self.reserved -= last - first;
        let merged = self.merge_free_neighbours(middle);
        self.unmapped_insert(merged);
    }

    /// Splits the block in `slot` after its first `size` bytes; the slot of the second part (of
    /// the same state, in no pool).
    fn split_off(&mut self, slot: usize, size: u64) -> usize {
        let b = *self.block(slot);
        let rest = self.add_block(Block {
            addr: b.addr.wrapping_add(size),
            size: b.size - size,
            prev: Some(slot),
            ..b
        });
        if let Some(n) = b.next {
            self.block_mut(n).prev = Some(rest);
        }
        let first = self.block_mut(slot);
        first.next = Some(rest);
        first.size = size;
        rest
    }

    /// Merges the free block in `slot` (in no pool) with its free neighbours of the same mapped
    /// state (`try_merge_blocks`), taking them out of their pools; the merged block's slot.
    fn merge_free_neighbours(&mut self, slot: usize) -> usize {
        let mut merged = *self.block(slot);
        let mut into = slot;
        let joins = |n: &Block| !n.allocated && n.mapped == merged.mapped;
        if let Some(n) = merged.next.filter(|&n| joins(self.block(n))) {
            let nb = *self.block(n);
            self.out_of_pool(n);
            self.remove_block(n);
            merged.size += nb.size;
            merged.next = nb.next;
            if let Some(nn) = nb.next {
                self.block_mut(nn).prev = Some(slot);
            }
        }
        if let Some(p) = merged.prev.filter(|&p| joins(self.block(p))) {
            let pb = *self.block(p);
            self.out_of_pool(p);
            self.remove_block(slot);
            into = p;
            merged.addr = pb.addr;
            merged.size += pb.size;
            merged.prev = pb.prev;
            if let Some(n) = merged.next {
                self.block_mut(n).prev = Some(p);
            }
        }
        *self.block_mut(into) = merged;
        into
    }

    /// Takes a free block out of the pool its state puts it in.
    fn out_of_pool(&mut self, slot: usize) {
        if self.block(slot).mapped {
            self.pool_remove(slot);
        } else {
            self.unmapped_remove(slot);
        }
    }

    fn unmapped_insert(&mut self, slot: usize) {
        let b = *self.block(slot);
        self.unmapped[usize::from(!b.small)].insert((b.addr, slot));
    }

    fn unmapped_remove(&mut self, slot: usize) {
        let b = *self.block(slot);
        self.unmapped[usize::from(!b.small)].remove(&(b.addr, slot));
    }

    /// The smallest free block of at least `size` (the lowest address among equals), out of its
    /// pool; its slot.
    fn best_fit(&mut self, size: u64, small: bool) -> Option<usize> {
        let pool = self.pool(small);
        let fit = pool.best(size)?;
        pool.remove(&fit);
        Some(fit.slot)
    }

    /// Hands out the free block in `slot` for a rounded request, splitting off the remainder
    /// when the allocator would (`shouldSplit`).
    fn take(&mut self, slot: usize, size: u64) {
        let expandable = self.mode == Allocator::ExpandableSegments;
        let block = *self.block(slot);
        let remaining = block.size - size;
        let split = if block.small || expandable {
            remaining >= MIN_BLOCK
        } else {
            remaining > SMALL_SIZE
        };
        let mut handed = block.size;
        if split {
            handed = size;
            let rest = self.split_off(slot, size);
            self.pool_insert(rest);
        }
        let b = self.block_mut(slot);
        b.allocated = true;
        b.size = handed;
        self.allocated += handed;
        self.peak_allocated = self.peak_allocated.max(self.allocated);
    }

    /// cudaMalloc of a new segment, or growth of the pool's expandable segment; `None` when the
    /// cap would be exceeded. Returns the slot of a free block of at least `size` bytes.
    fn new_memory(&mut self, size: u64, small: bool) -> Option<usize> {
        let seg_size = segment_size(size);
        // a whole segment: the card's check and the fraction's are the same
        if self
            .cap
            .is_some_and(|cap| u128::from(self.reserved + seg_size) > cap.bytes)
        {
            return None;
        }
        // cudaMalloc hands out addresses downwards: a new segment lies below the older ones, so
        // best fit's tie-break by address prefers the newest segment. (With increasing
        // addresses the simulation misses the measured reserved memory of n_embd=576 runs by
        // 0.8-1.5 GiB; with decreasing ones it matches them to 0.01 GiB.)
        // (addresses only order blocks: for sizes no card has, 2^50 bytes and more, they wrap)
        self.next_addr = self
            .next_addr
            .wrapping_sub(seg_size.wrapping_add(SEGMENT_GAP));
        let addr = self.driver_addr.take().unwrap_or(self.next_addr);
        self.segments.push(Segment {
            size: seg_size,
            live: true,
            expandable: false,
        });
        let slot = self.add_block(Block {
            addr,
            size: seg_size,
            segment: self.segments.len() - 1,
            allocated: false,
            prev: None,
            next: None,
            small,
            mapped: true,
        });
        self.note(SegmentChangeKind::Alloc, addr, seg_size);
        self.reserved += seg_size;
        self.peak_reserved = self.peak_reserved.max(self.reserved);
        Some(slot)
    }

    /// Where a pool's expandable segment starts: a whole number of its pages (its pages are
    /// counted from there), far above the regular segments and far from the other pool's.
    fn expandable_base(small: bool) -> u64 {
        page_size(small) << 32
    }

    /// `free`: the block goes back to its pool, merged with free neighbours.
    pub fn free(&mut self, id: BlockId) {
        let slot = id.0;
        let Some(block) = self.blocks.get(slot).copied().flatten() else {
            return;
        };
        if !block.allocated {
            return;
        }
        self.allocated -= block.size;
        self.block_mut(slot).allocated = false;
        let merged = self.merge_free_neighbours(slot);
        self.pool_insert(merged);
    }

    /// `release_cached_blocks`: every segment that is entirely free goes back to the driver
    /// (expandable segments unmap their free pages at the end).
    fn release_cached(&mut self) {
        let whole: Vec<usize> = (0..self.blocks.len())
            .filter(|&slot| {
                self.blocks[slot].is_some_and(|b| {
                    !b.allocated
                        && b.prev.is_none()
                        && b.next.is_none()
                        && !self.segments[b.segment].expandable
                })
            })
            .collect();
        for slot in whole {
            let (seg, addr) = (self.block(slot).segment, self.block(slot).addr);
            self.note(SegmentChangeKind::Free, addr, self.segments[seg].size);
            self.pool_remove(slot);
            self.remove_block(slot);
            self.segments[seg].live = false;
            self.reserved -= self.segments[seg].size;
        }
        // expandable (`release_blocks`): unmap the whole pages of every free mapped block
        if self.mode == Allocator::ExpandableSegments {
            let free: Vec<usize> = self
                .free_small
                .iter()
                .chain(self.free_large.iter())
                .map(|f| f.slot)
                .collect();
            for slot in free {
                self.pool_remove(slot);
                self.unmap_block(slot);
            }
        }
    }

    /// Bytes reserved but not allocated: what an OOM message calls "reserved by PyTorch but
    /// unallocated".
    pub fn cached_free(&self) -> u64 {
        self.reserved - self.allocated
    }

    /// Records the segments' changes from here on ([`CachingAllocator::take_segment_changes`]):
    /// what exporting a replay as a memory snapshot needs, and nothing else pays for.
    pub fn record_segments(&mut self) {
        self.changes.get_or_insert_with(Vec::new);
    }

    /// The segments' changes recorded since the last call.
    pub fn take_segment_changes(&mut self) -> Vec<SegmentChange> {
        self.changes
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    fn note(&mut self, kind: SegmentChangeKind, addr: u64, size: u64) {
        if let Some(c) = &mut self.changes {
            c.push(SegmentChange { kind, addr, size });
        }
    }

    /// The next segment at `addr`, where the driver put it: a trace's own addresses, for
    /// replaying a real run whose best-fit ties the driver's address order broke.
    pub fn next_segment_at(&mut self, addr: u64) {
        self.driver_addr = Some(addr);
    }

    /// Where the block `id` starts.
    pub fn block_addr(&self, id: BlockId) -> Option<u64> {
        self.blocks.get(id.0).copied().flatten().map(|b| b.addr)
    }

    /// The live segments with their mapped blocks, as a memory snapshot lists them.
    pub fn layout(&self) -> Vec<SegmentLayout> {
        let mut out = Vec::new();
        for (seg, s) in self.segments.iter().enumerate().filter(|(_, s)| s.live) {
            let live: Vec<(usize, Block)> = self
                .blocks
                .iter()
                .enumerate()
                .filter_map(|(slot, b)| b.map(|b| (slot, b)))
                .filter(|(_, b)| b.segment == seg && b.mapped)
                .collect();
            let small = live.first().is_some_and(|(_, b)| b.small);
            let mut blocks: Vec<(u64, u64, bool, BlockId)> = live
                .iter()
                .map(|&(slot, b)| (b.addr, b.size, b.allocated, BlockId(slot)))
                .collect();
            blocks.sort_by_key(|b| b.0);
            let Some(&(addr, ..)) = blocks.first() else {
                continue;
            };
            out.push(SegmentLayout {
                addr,
                size: blocks.iter().map(|b| b.1).sum(),
                expandable: s.expandable,
                small,
                blocks,
            });
        }
        out
    }

    /// The largest free cached block (what a request can get without a new segment).
    pub fn largest_free_block(&self) -> u64 {
        self.free_small.largest().max(self.free_large.largest())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl CachingAllocator {
        /// Panics unless the block store, the pools and the counters agree: each live segment
        /// is a chain of blocks at consecutive addresses covering it, a block is in its pool
        /// exactly when it is free, and `allocated` is the sum of allocated blocks.
        fn check(&self) {
            let live: Vec<(usize, &Block)> = self
                .blocks
                .iter()
                .enumerate()
                .filter_map(|(slot, b)| b.as_ref().map(|b| (slot, b)))
                .collect();
            assert_eq!(live.len() + self.vacant.len(), self.blocks.len());
            let mut allocated = 0;
            for &(slot, b) in &live {
                let key = Free {
                    size: b.size,
                    addr: b.addr,
                    slot,
                };
                let pool = if b.small {
                    &self.free_small
                } else {
                    &self.free_large
                };
                let unmapped = self.unmapped[usize::from(!b.small)].contains(&(b.addr, slot));
                assert_eq!(unmapped, !b.mapped, "block {slot}: {b:?}");
                assert_eq!(
                    pool.contains(&key),
                    !b.allocated && b.mapped,
                    "block {slot}: {b:?}"
                );
                if b.allocated {
                    allocated += b.size;
                }
                if let Some(n) = b.next {
                    let nb = self.block(n);
                    assert_eq!(nb.prev, Some(slot));
                    assert_eq!(nb.addr, b.addr.wrapping_add(b.size));
                    assert!(
                        b.allocated || nb.allocated || b.mapped != nb.mapped,
                        "two free neighbours unmerged"
                    );
                }
                if b.prev.is_none() && !self.segments[b.segment].expandable {
                    let mut size = 0;
                    let mut at = Some(slot);
                    while let Some(s) = at {
                        size += self.block(s).size;
                        at = self.block(s).next;
                    }
                    assert_eq!(size, self.segments[b.segment].size);
                }
            }
            let pooled = self.free_small.len() + self.free_large.len();
            let free_mapped = live.iter().filter(|(_, b)| !b.allocated && b.mapped);
            assert_eq!(pooled, free_mapped.count());
            assert_eq!(allocated, self.allocated);
        }
    }

    /// Thousands of requests of mixed sizes freed in a shuffled order, under either kind of cap,
    /// in both modes: the store stays consistent (slots reused, neighbours merged) and everything
    /// freed leaves nothing allocated.
    #[test]
    fn random_requests_keep_the_block_store_consistent() {
        let modes = [Allocator::Default, Allocator::ExpandableSegments];
        let kinds = [CapKind::Card, CapKind::Fraction];
        for (mode, kind) in modes.into_iter().flat_map(|m| kinds.map(|k| (m, k))) {
            let cap = Cap {
                bytes: 2 << 30,
                kind,
            };
            let mut a = CachingAllocator::new(mode, Some(cap));
            let mut live = Vec::new();
            let mut seed: u64 = 0x5eed;
            let mut next = || {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                seed >> 33
            };
            for _ in 0..4000 {
                if live.is_empty() || next() % 3 != 0 {
                    // small, medium and large requests
                    let bytes = match next() % 3 {
                        0 => 1 + next() % 4096,
                        1 => next() % (8 << 20),
                        _ => next() % (96 << 20),
                    };
                    if let Ok(id) = a.malloc(bytes) {
                        live.push(id);
                    }
                } else {
                    let i = next() as usize % live.len();
                    a.free(live.swap_remove(i));
                }
                a.check();
            }
            for id in live {
                a.free(id);
            }
            a.check();
            assert_eq!(a.allocated(), 0, "{mode:?} {kind:?}");
            assert!(
                a.retries > 0,
                "{mode:?} {kind:?}: the cap was never pressed"
            );
        }
    }

    #[test]
    fn a_pool_of_many_blocks_is_a_tree_and_still_best_fit() {
        for mode in [Allocator::Default, Allocator::ExpandableSegments] {
            let mut a = CachingAllocator::new(mode, None);
            // 1,200 small blocks of 1-7 × 512 B; every other one freed leaves 600 apart
            let ids: Vec<BlockId> = (0..1200)
                .map(|i| a.malloc(512 * (1 + i % 7)).unwrap())
                .collect();
            for &id in ids.iter().step_by(2) {
                a.free(id);
            }
            a.check();
            assert!(matches!(a.free_small, Pool::Many(_)), "{mode:?}");
            // the smallest free block that holds 1,536 B is one of exactly that size
            let x = a.malloc(1536).unwrap();
            assert_eq!(a.block_size(x), 1536, "{mode:?}");
            a.check();
            for &id in ids.iter().skip(1).step_by(2) {
                a.free(id);
            }
            a.free(x);
            a.check();
            assert!(matches!(a.free_small, Pool::Few(_)), "{mode:?}");
            assert_eq!(a.allocated(), 0);
        }
    }

    const MIB: u64 = 1 << 20;

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
        let mut a = CachingAllocator::new(Allocator::Default, Some(Cap::card((100 * MIB).into())));
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
        let mut a = CachingAllocator::new(
            Allocator::ExpandableSegments,
            Some(Cap::card((100 * MIB).into())),
        );
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
