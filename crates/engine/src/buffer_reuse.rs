//! Inductor's buffer reuse inside one compiled graph: what PyTorch 2.11's generated wrapper does
//! with a buffer it is done with (`torch/_inductor/codegen/wrapper.py`, `memory_plan_reuse`).
//!
//! The wrapper frees a dead buffer only if no later buffer takes its storage: a free puts the
//! buffer in a pool keyed by device, dtype and storage size (`FreeIfNotReusedLine.plan`), and a
//! later allocation of the same key takes the most recently pooled one (`AllocateLine.plan`; the
//! pool is a stack) — `bufN = reinterpret_tensor(bufM, …); del bufM  # reuse` in the wrapper, no
//! request to the caching allocator at all. It does so only where holding the storage from the
//! free to the allocation keeps the graph within its own peak (`should_reuse_buffer`: the
//! allocation's size plus the peak between the two is at most the graph's overall peak, or the
//! two are adjacent), and a reuse raises what the range holds for later decisions
//! (`update_peak_between`).
//!
//! Here a graph is a stretch of a [`crate::events::Sequence`]: its buffers are the requests made
//! inside it that Inductor's wrapper allocates itself ([`Kind::Planned`]). An extern op's outputs
//! (SDPA's gradients) are the graph's buffers once they exist — freed into the pool, taken by a
//! later buffer — but the op allocates them itself ([`Kind::OpOutput`]); what an op or the
//! autotuner's benchmarker allocates for its own use is neither ([`Kind::External`]). The pool's
//! key is the request's size and whether its elements are 4 bytes wide: the sequences carry no
//! dtype, and where buffers of one size and two dtypes meet in a graph the generator says which
//! are fp32 (nanochat where BT = 4C: a (C, C) fp32 gradient and a rotary half, (B, T, C/2) bf16,
//! are both 4 MiB, and the wrapper never hands one's storage to the other). The peak
//! is the live bytes after each event, what Inductor's `estimate_peak_memory` follows node by
//! node, with the autotuner's and cuBLAS's requests left out (Inductor does not see them).

use crate::events::{Action, Event};
use crate::terms::Term;

/// What a request inside a graph is to Inductor's memory planning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A buffer the wrapper allocates: it may take a dead buffer's storage, and gives its own
    /// to a later one when it dies.
    Planned,
    /// An extern op's output: allocated by the op, the graph's buffer once it exists.
    OpOutput,
    /// An op's or the benchmarker's own request (workspaces, autotuning copies).
    External,
}

/// The stretch of a graph's events with Inductor's reuse applied: the frees and allocations a
/// reuse replaces are gone, and a reused buffer's later frees name the storage it took.
pub struct Planned {
    pub events: Vec<Event>,
    /// For each event of the input, whether it was kept (to move the marks inside the stretch).
    pub kept: Vec<bool>,
    /// (tensor, the tensor whose storage it took: the root of a chain), in tensor order.
    pub aliases: Vec<(u32, u32)>,
}

/// What Inductor's estimate of a graph counts that its events do not say, where the generator
/// knows it: the outputs the graph returns (their bytes are taken off from the graph's start
/// until they are made, `memory[end_step + 1]` with `end_step = -1`), and each write in place
/// (`buf16 = buf15; del buf15  # reuse` with no planning decision: the kernel writes its output
/// into an input it reads last), which the estimate counts as a second buffer of that size at
/// its node — here, after the event at that index of the stretch.
#[derive(Debug, Default)]
pub struct Counted {
    /// The graph's outputs made in it, in tensor order.
    pub outputs: Vec<u32>,
    /// (index in the stretch of the event the write follows, its bytes), in index order.
    pub in_place: Vec<(usize, u128)>,
}

/// Applies Inductor's reuse to `events`, one graph's stretch. `kind(tensor)` says what a request
/// made in it is to the planner ([`Kind`]); `donated(tensor)` whether a tensor made before the
/// graph is one of its buffers once a kernel writes into it in place (a saved activation the
/// backward may overwrite: AOTAutograd's donated buffers), so that its death pools it like the
/// graph's own; `name_of(tensor)` the number N of Inductor's name `bufN` for a buffer made in
/// it, where the generator knows it (it orders the buffers one kernel leaves dead:
/// [`free_order`]); `bytes_of(tensor)` gives any tensor's size (a free names only the tensor);
/// `counted` what Inductor's estimate counts that the events do not say ([`Counted`]).
pub fn plan(
    events: &[Event],
    kind: impl Fn(u32) -> Kind,
    donated: impl Fn(u32) -> bool,
    wide: impl Fn(u32) -> bool,
    name_of: impl Fn(u32) -> Option<u32>,
    bytes_of: impl Fn(u32) -> u128,
    counted: &Counted,
) -> Planned {
    // tensors are numbered in allocation order: those made in the stretch are a range of ids, so
    // what is kept per tensor is a vector over that range (a page replays many graphs per answer)
    let base = events
        .iter()
        .filter(|e| e.action == Action::Alloc)
        .map(|e| e.tensor)
        .min()
        .unwrap_or(0);
    let top = events.iter().map(|e| e.tensor).max().unwrap_or(0);
    let slots = (top.saturating_sub(base) + 1) as usize;
    let slot = |t: u32| t.checked_sub(base).map(|d| d as usize);
    let unseen = |term: Term| matches!(term, Term::InductorAutotune | Term::CublasWorkspace);
    // The graph's estimate after each event, as Inductor's `estimate_peak_memory` counts
    // (torch/_inductor/memory.py; docs/allocation-order.md §17, every rule checked against the
    // planner's own log): the graph's buffers while they live; the inputs it frees (a backward's
    // saved tensors) from its start, not those it keeps (the parameters: `is_nonfreeable_buffers`);
    // a write in place as a second buffer where it happens; a graph output's bytes taken off from
    // the start until it is made, and never freed; the autotuner's and cuBLAS's requests not at
    // all. Kept shifted up by the outputs' bytes, so never negative: Inductor's maxima start at
    // 0, which is `shift` here.
    let output = |t: u32| counted.outputs.binary_search(&t).is_ok();
    let freed_inputs: u128 = events
        .iter()
        .filter(|e| e.action == Action::Free && slot(e.tensor).is_none())
        .map(|e| bytes_of(e.tensor))
        .sum();
    let shift: u128 = events
        .iter()
        .filter(|e| e.action == Action::Alloc && output(e.tensor))
        .map(|e| u128::from(e.bytes))
        .sum();
    let mut hidden = vec![false; slots];
    let mut live = Vec::with_capacity(events.len());
    let mut now = freed_inputs;
    let mut in_place = counted.in_place.iter().peekable();
    for (k, e) in events.iter().enumerate() {
        match (e.action, slot(e.tensor)) {
            (Action::Alloc, Some(i)) if unseen(e.term) => hidden[i] = true,
            (Action::Alloc, _) => now += u128::from(e.bytes),
            (Action::Free, Some(i)) if hidden[i] => hidden[i] = false,
            (Action::Free, _) if output(e.tensor) => {}
            (Action::Free, _) => now = now.saturating_sub(bytes_of(e.tensor)),
        }
        let mut second = 0;
        while let Some(&(_, bytes)) = in_place.next_if(|p| p.0 == k) {
            second += bytes;
        }
        live.push(now + second);
    }
    let overall = live
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(freed_inputs)
        .max(shift)
        - shift;
    let mut live = RangeMax::new(&live);

    // (size and width, the pooled buffers of that key: where each was freed and its storage's
    // tensor), a few keys per graph (a vector, not a map: the page's wasm pays for every map type)
    let key = |t: u32, bytes: u64| bytes * 2 + u64::from(wide(t));
    let mut pool: Vec<(u64, Vec<(usize, u32)>)> = Vec::new();
    let stack = |pool: &mut Vec<(u64, Vec<(usize, u32)>)>, bytes: u64| -> usize {
        match pool.iter().position(|(b, _)| *b == bytes) {
            Some(i) => i,
            None => {
                pool.push((bytes, Vec::new()));
                pool.len() - 1
            }
        }
    };
    // the size of each buffer made in the stretch while it lives, and whose storage it took
    let mut born_here: Vec<Option<u64>> = vec![None; slots];
    let mut took: Vec<Option<u32>> = vec![None; slots];
    let mut kept = vec![true; events.len()];
    // a run of frees pushes its buffers in name order (Inductor's `free_buffers` sorts them)
    let mut order: Vec<usize> = (0..events.len()).collect();
    let mut run: Vec<(u64, usize)> = Vec::new();
    let mut a = 0;
    while a < events.len() {
        let mut b = a;
        while b < events.len() && events[b].action == Action::Free {
            b += 1;
        }
        if b > a + 1 {
            run.clear();
            run.extend((a..b).map(|k| {
                let t = events[k].tensor;
                (free_order(t, slot(t).is_some(), &name_of), k)
            }));
            // an insertion sort, stable, on keys made once: the runs are short but for a
            // graph's last frees, and a library sort costs the page's wasm 2 KB
            for i in 1..run.len() {
                let mut j = i;
                while j > 0 && run[j - 1].0 > run[j].0 {
                    run.swap(j - 1, j);
                    j -= 1;
                }
            }
            for (slot, &(_, k)) in order[a..b].iter_mut().zip(&run) {
                *slot = k;
            }
        }
        a = b.max(a + 1);
    }
    for &k in &order {
        let e = &events[k];
        let Some(ix) = slot(e.tensor) else {
            if e.action == Action::Free && donated(e.tensor) {
                let at = stack(&mut pool, key(e.tensor, bytes_of(e.tensor) as u64));
                pool[at].1.push((k, e.tensor));
            }
            continue;
        };
        match e.action {
            Action::Alloc => {
                match kind(e.tensor) {
                    Kind::External => continue,
                    Kind::OpOutput => {
                        born_here[ix] = Some(e.bytes);
                        continue;
                    }
                    Kind::Planned => born_here[ix] = Some(e.bytes),
                }
                let at = stack(&mut pool, key(e.tensor, e.bytes));
                let Some((i, old)) = pool[at].1.pop() else {
                    continue;
                };
                let size = u128::from(e.bytes);
                let between = live.max(i + 1, k).max(shift) - shift;
                if k == i + 1 || size + between <= overall {
                    kept[i] = false;
                    kept[k] = false;
                    took[ix] = Some(old);
                    live.add(i, k, size);
                } else {
                    pool[at].1.push((i, old));
                }
            }
            Action::Free => {
                if let Some(bytes) = born_here[ix].take() {
                    let root = took[ix].unwrap_or(e.tensor);
                    let at = stack(&mut pool, key(e.tensor, bytes));
                    pool[at].1.push((k, root));
                }
            }
        }
    }
    let root = |t: u32| slot(t).and_then(|i| took[i]).unwrap_or(t);
    let out = events
        .iter()
        .zip(&kept)
        .filter(|(_, &k)| k)
        .map(|(e, _)| match e.action {
            Action::Free => Event {
                tensor: root(e.tensor),
                ..*e
            },
            Action::Alloc => *e,
        })
        .collect();
    let aliases = took
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.map(|r| (base + i as u32, r)))
        .collect();
    Planned {
        events: out,
        kept,
        aliases,
    }
}

/// Where a dying buffer goes in a run of frees: Inductor frees a kernel's dead buffers sorted by
/// name, so a graph's own `bufN` come in the string order of N ("buf100" before "buf95"), where
/// the generator names them, else in the order they were made; the tensors made before the graph
/// (`mm_51`, …) come after them.
fn free_order(t: u32, in_graph: bool, name_of: &impl Fn(u32) -> Option<u32>) -> u64 {
    let Some(n) = name_of(t).filter(|_| in_graph) else {
        return (u64::from(!in_graph) << 63) + (1 << 62) + u64::from(t);
    };
    // n's decimal digits, left-aligned, each one up, in base 11: a shorter name sorts first
    let len = n.checked_ilog10().unwrap_or(0) + 1;
    let mut key = 0u64;
    for i in 0..10 {
        let d = if i < len {
            u64::from(n / 10u32.pow(len - 1 - i) % 10) + 1
        } else {
            0
        };
        key = key * 11 + d;
    }
    key
}

/// The live bytes after each event, with what each reuse adds over the range it holds: a range
/// addition and a range maximum in O(log n) each (a segment tree whose nodes keep their own
/// additions rather than pushing them down). Scanning the range instead made deep graphs
/// quadratic: a pooled buffer that may not be taken stays on its size's stack, and every later
/// request of that size checks it again over a longer range (the CLI's answer for nanochat at
/// depth 512, fixes included, on this 2-core machine: 4.6 s with the scan, 2.2 s with this and
/// the backward's parameter list built once per micro-step; 0.6 s before that backward was
/// written buffer by buffer).
struct RangeMax {
    /// Leaves: a power of two at least the number of events.
    leaves: usize,
    /// Each node's maximum, its own addition included.
    max: Vec<u128>,
    /// What was added to each node's whole range.
    add: Vec<u128>,
}

impl RangeMax {
    fn new(values: &[u128]) -> Self {
        let leaves = values.len().next_power_of_two();
        let mut max = vec![0; 2 * leaves];
        max[leaves..leaves + values.len()].copy_from_slice(values);
        for n in (1..leaves).rev() {
            max[n] = max[2 * n].max(max[2 * n + 1]);
        }
        RangeMax {
            leaves,
            add: vec![0; 2 * leaves],
            max,
        }
    }

    /// Adds `v` to the values at `l..r`.
    fn add(&mut self, l: usize, r: usize, v: u128) {
        self.update(1, 0, self.leaves, l, r, v);
    }

    fn update(&mut self, n: usize, lo: usize, hi: usize, l: usize, r: usize, v: u128) {
        if r <= lo || hi <= l {
            return;
        }
        if l <= lo && hi <= r {
            self.max[n] += v;
            self.add[n] += v;
            return;
        }
        let mid = (lo + hi) / 2;
        self.update(2 * n, lo, mid, l, r, v);
        self.update(2 * n + 1, mid, hi, l, r, v);
        self.max[n] = self.max[2 * n].max(self.max[2 * n + 1]) + self.add[n];
    }

    /// The largest value at `l..r`, 0 for an empty range (the values are never negative).
    fn max(&self, l: usize, r: usize) -> u128 {
        // (a node's own addition counts only where a part of its range is asked for)
        if l >= r {
            return 0;
        }
        self.query(1, 0, self.leaves, l, r)
    }

    fn query(&self, n: usize, lo: usize, hi: usize, l: usize, r: usize) -> u128 {
        if r <= lo || hi <= l {
            return 0;
        }
        if l <= lo && hi <= r {
            return self.max[n];
        }
        let mid = (lo + hi) / 2;
        let below = self
            .query(2 * n, lo, mid, l, r)
            .max(self.query(2 * n + 1, mid, hi, l, r));
        below + self.add[n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(tensor: u32, bytes: u64) -> Event {
        Event {
            action: Action::Alloc,
            tensor,
            bytes,
            term: Term::BlockTransient,
        }
    }
    fn f(tensor: u32) -> Event {
        Event {
            action: Action::Free,
            tensor,
            bytes: 0,
            term: Term::Params,
        }
    }
    const SIZES: [u128; 4] = [100, 100, 50, 100];
    /// Every request a planned buffer, none donated, none fp32, none named, nothing live before.
    fn plan_plain(ev: &[Event]) -> Planned {
        plan_kinds(ev, |_| Kind::Planned)
    }
    /// The same with the requests' kinds given.
    fn plan_kinds(ev: &[Event], kind: impl Fn(u32) -> Kind) -> Planned {
        plan(
            ev,
            kind,
            |_| false,
            |_| false,
            |_| None,
            |t| SIZES[t as usize],
            &Counted::default(),
        )
    }
    /// Every request a planned buffer, none fp32 or named; what is donated and what the estimate
    /// counts beside the events as given.
    fn plan_with(ev: &[Event], donated: impl Fn(u32) -> bool, counted: &Counted) -> Planned {
        plan(
            ev,
            |_| Kind::Planned,
            donated,
            |_| false,
            |_| None,
            |t| SIZES[t as usize],
            counted,
        )
    }
    fn ext(which: u32) -> impl Fn(u32) -> Kind {
        move |t| {
            if t == which {
                Kind::External
            } else {
                Kind::Planned
            }
        }
    }

    #[test]
    fn a_freed_buffer_of_the_same_size_is_taken_over_where_the_peak_allows() {
        // 0 (100) and 2 (50) live: peak 150; 0 dies, then 1 (100) comes: taken over
        let ev = [a(0, 100), a(2, 50), f(0), f(2), a(1, 100), f(1)];
        let p = plan_plain(&ev);
        assert_eq!(p.events, vec![a(0, 100), a(2, 50), f(2), f(0)]);
        assert_eq!(p.aliases, vec![(1, 0)]);
    }

    #[test]
    fn no_reuse_that_would_raise_the_graph_peak() {
        // 0 dies, 2 and an extern op's 3 rise to 150 with 0 gone (the peak); holding 0 through
        // them would make 250
        let ev = [
            a(0, 100),
            f(0),
            a(2, 50),
            a(3, 100),
            f(3),
            f(2),
            a(1, 100),
            f(1),
        ];
        let p = plan_kinds(&ev, ext(3));
        assert_eq!(p.events.len(), ev.len(), "nothing reused: {:?}", p.events);
    }

    #[test]
    fn a_write_in_place_counts_twice_in_the_estimate() {
        // 0 (100) dies, 2 (50) lives between, 1 (100) comes: 150 over a peak of 100, refused —
        // unless a kernel wrote 100 bytes in place after event 0, which Inductor's estimate
        // counts as a second buffer there (its peak 200: the GELU of docs/allocation-order.md
        // §17), and then the hold fits
        let ev = [a(0, 100), f(0), a(2, 50), f(2), a(1, 100), f(1)];
        assert_eq!(plan_plain(&ev).events.len(), ev.len());
        let counted = Counted {
            outputs: Vec::new(),
            in_place: vec![(0, 100)],
        };
        assert_eq!(plan_with(&ev, |_| false, &counted).aliases, vec![(1, 0)]);
    }

    #[test]
    fn an_extern_request_is_never_a_planned_buffer() {
        let ev = [a(0, 100), f(0), a(1, 100), f(1)];
        let p = plan_kinds(&ev, ext(1));
        assert_eq!(p.events.len(), 4);
    }

    #[test]
    fn an_op_output_is_taken_over_but_never_takes_over() {
        // 0 is an op's output: allocated by the op (so not from 3's storage), pooled when it dies
        let kind = |t: u32| {
            if t == 0 {
                Kind::OpOutput
            } else {
                Kind::Planned
            }
        };
        let ev = [a(3, 100), f(3), a(0, 100), f(0), a(1, 100), f(1)];
        let p = plan_kinds(&ev, kind);
        // (0 took nothing; 1 took 0's storage)
        assert_eq!(p.aliases, vec![(1, 0)]);
    }

    #[test]
    fn a_donated_tensor_made_before_the_graph_is_pooled_at_its_death() {
        // 0 (100) was saved by the forward; the backward writes into it, is done with it, and
        // then needs a buffer of its size: donated, the storage is handed on; not, it is freed
        let ev = [f(0), a(1, 100), f(1)];
        let p = plan_with(&ev, |t| t == 0, &Counted::default());
        assert_eq!(p.events, vec![f(0)]);
        assert_eq!(p.aliases, vec![(1, 0)]);
        let p = plan_with(&ev, |_| false, &Counted::default());
        assert_eq!(p.events, ev.to_vec());
        assert!(p.aliases.is_empty());
    }

    #[test]
    fn the_most_recently_freed_buffer_is_taken_first() {
        let ev = [a(0, 100), a(3, 100), f(0), f(3), a(1, 100), f(1)];
        let p = plan_plain(&ev);
        assert_eq!(p.aliases, vec![(1, 3)]);
    }

    #[test]
    fn a_dead_fp32_buffer_is_never_handed_to_a_16_bit_one_of_its_size() {
        // 0 is fp32; right after its death comes a buffer of its size: taken only if fp32 too
        let wide = |t: u32| t != 1;
        for (next, took) in [(1, vec![]), (3, vec![(3, 0)])] {
            let ev = [a(0, 100), f(0), a(next, 100), f(next)];
            let p = plan(
                &ev,
                |_| Kind::Planned,
                |_| false,
                wide,
                |_| None,
                |t| SIZES[t as usize],
                &Counted::default(),
            );
            assert_eq!(p.aliases, took);
        }
    }

    #[test]
    fn one_kernel_s_dead_buffers_are_pooled_in_the_string_order_of_their_names() {
        // 0 is buf95 and 3 is buf100, both dead after one kernel: "buf100" is freed first, so
        // buf95's storage is on top of the pool; unnamed, the order they were made decides
        let ev = [a(0, 100), a(3, 100), f(0), f(3), a(1, 100), f(1)];
        let named = |t: u32| match t {
            0 => Some(95),
            3 => Some(100),
            _ => None,
        };
        let p = plan(
            &ev,
            |_| Kind::Planned,
            |_| false,
            |_| false,
            named,
            |t| SIZES[t as usize],
            &Counted::default(),
        );
        assert_eq!(p.aliases, vec![(1, 0)]);
        let ev = [a(0, 100), a(3, 100), f(3), f(0), a(1, 100), f(1)];
        let p = plan_plain(&ev);
        assert_eq!(p.aliases, vec![(1, 3)]);
    }

    #[test]
    fn the_range_maximum_is_a_scan_of_the_range() {
        let mut values: Vec<u128> = (0..37u128).map(|i| (i * 7919) % 101).collect();
        let mut tree = RangeMax::new(&values);
        for (l, r, v) in [
            (3, 20, 5),
            (0, 37, 1),
            (10, 11, 40),
            (30, 37, 9),
            (5, 5, 100),
        ] {
            tree.add(l, r, v);
            for x in &mut values[l..r] {
                *x += v;
            }
            for a in 0..=values.len() {
                for b in a..=values.len() {
                    let scan = values[a..b].iter().copied().max().unwrap_or(0);
                    assert_eq!(tree.max(a, b), scan, "{a}..{b}");
                }
            }
        }
    }
}
