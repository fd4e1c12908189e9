//! A run as the caching allocator sees it: every request and release in order, labelled with the
//! phase, stage and micro-step it belongs to. Each training program writes its run as such a
//! sequence (`programs/*/sequence.rs`); the engine replays it (`replay.rs`).

use crate::buffer_reuse::{self, Kind};
use crate::terms::Term;

/// The phases of a run whose peaks `torch.cuda.max_memory_allocated()` would report.
/// Serialized as its [`Phase::id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum Phase {
    /// Iteration 0: no AdamW state until its `optimizer.step()`.
    TrainFirstIter,
    /// Iterations ≥ 1: AdamW state exists throughout.
    TrainSteady,
    /// The first `estimate_loss()`, at iteration 0 before any training step.
    Eval,
    /// Later `estimate_loss()` calls: AdamW state and the training loop's last logits are alive.
    EvalAfterStep,
    /// nanochat's CORE evaluation: the uncompiled model on few-shot task examples (and
    /// chat_eval.py's categorical batches, the same forward).
    Core,
    /// nanochat's `load_model`: a checkpoint read onto the GPU beside the model built for it.
    Load,
    /// nanochat's `Engine`: prompts prefilled and tokens decoded through its KV cache.
    Generate,
}

impl Phase {
    /// Every phase, in the order a report lists them.
    pub const ALL: [Phase; 7] = [
        Phase::TrainFirstIter,
        Phase::TrainSteady,
        Phase::Eval,
        Phase::EvalAfterStep,
        Phase::Core,
        Phase::Load,
        Phase::Generate,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Phase::TrainFirstIter => "train_first_iter",
            Phase::TrainSteady => "train_steady",
            Phase::Eval => "eval",
            Phase::EvalAfterStep => "eval_after_step",
            Phase::Core => "core",
            Phase::Load => "load",
            Phase::Generate => "generate",
        }
    }
}

/// What happens to one tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Alloc,
    Free,
}

/// The stage of the run an event belongs to (for the chart's labels and OOM messages).
/// Serialized as its [`Stage::id`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(rename_all = "snake_case")
)]
pub enum Stage {
    ModelLoad,
    Forward,
    Loss,
    Backward,
    OptimizerStep,
    ZeroGrad,
    Eval,
}

impl Stage {
    /// Every stage, in declaration order.
    pub const ALL: [Stage; 7] = [
        Stage::ModelLoad,
        Stage::Forward,
        Stage::Loss,
        Stage::Backward,
        Stage::OptimizerStep,
        Stage::ZeroGrad,
        Stage::Eval,
    ];
    /// Each stage's id, in [`Stage::ALL`] order.
    pub const IDS: [&'static str; 7] = crate::ids!(Stage::ALL);

    pub const fn id(self) -> &'static str {
        match self {
            Stage::ModelLoad => "model_load",
            Stage::Forward => "forward",
            Stage::Loss => "loss",
            Stage::Backward => "backward",
            Stage::OptimizerStep => "optimizer_step",
            Stage::ZeroGrad => "zero_grad",
            Stage::Eval => "eval",
        }
    }
}

/// One allocator request or release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub action: Action,
    /// Index of the tensor (allocs number them in order).
    pub tensor: u32,
    /// The request (at most [`CEILING_BYTES`]: the allocator's unit, see `allocator.rs`).
    pub bytes: u64,
    pub term: Term,
}

/// Where a stretch of events begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    /// Index of the first event of the stretch.
    pub at: usize,
    pub phase: Option<Phase>,
    pub stage: Stage,
    /// 1-based micro-step (0 outside training micro-steps).
    pub micro_step: u32,
}

/// The most bytes a run may hold at once for vramfit to follow it: 256 TiB, 64 times the largest
/// card the inputs allow (4 TiB) and the virtual range PyTorch reserves for an expandable segment.
/// A run whose live requests pass it ends there ([`Sequence::beyond`]): it fits no card, and
/// following it further would only cost time — with every field at its maximum a nanoGPT run is
/// 1.4 million events, half a second natively and seconds in a browser, to say that 2^72 bytes
/// do not fit.
pub const CEILING_BYTES: u128 = 1 << 48;

/// [`CEILING_BYTES`] as messages say it: `256 TiB`.
pub fn ceiling_text() -> String {
    format!("{} TiB", CEILING_BYTES >> 40)
}

/// Where a run passes [`CEILING_BYTES`]: the request that does, and what was live with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Beyond {
    /// The request that passes the ceiling.
    pub requested: u128,
    pub term: Term,
    /// Live requested bytes with it: more than [`CEILING_BYTES`].
    pub live_bytes: u128,
    pub phase: Option<Phase>,
    pub stage: Stage,
    pub micro_step: u32,
}

/// The events of a run and the marks that label them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sequence {
    pub events: Vec<Event>,
    pub marks: Vec<Mark>,
    /// Where the run passes [`CEILING_BYTES`]; the events stop before that request. A replay
    /// counts it as a request no card can serve (`replay.rs`).
    pub beyond: Option<Beyond>,
}

impl Sequence {
    /// The mark in force at event `i`.
    pub fn mark_at(&self, i: usize) -> Option<&Mark> {
        self.marks.iter().rev().find(|m| m.at <= i)
    }
}

/// A tensor a [`Builder`] handed out (`None`: a zero-byte request, which allocates nothing).
pub type TensorId = Option<u32>;

/// Writes a [`Sequence`]: a program describes its run through these calls, in the order PyTorch
/// allocates and frees.
/// Past [`CEILING_BYTES`] every call does nothing: the program's description runs on, cheaply,
/// and the sequence ends where the run passed it.
#[derive(Debug, Default)]
pub struct Builder {
    seq: Sequence,
    /// Bytes of each tensor handed out, by id (to count what is live; its length is the next id).
    sizes: Vec<u128>,
    live: u128,
    /// The most that has been live at once so far (`torch.cuda.max_memory_allocated()` of a run
    /// that never resets it).
    peak: u128,
    /// Bytes of every tensor handed out, by id, freed or not (`sizes` forgets a freed one's), as
    /// the events carry them.
    bytes_of: Vec<u64>,
    /// The compiled graph being written, if any ([`Builder::begin_graph`]).
    graph: Option<OpenGraph>,
    /// (tensor, the tensor whose storage it took) for the buffers of earlier graphs that took a
    /// dead one's, in tensor order: their frees name that storage.
    aliases: Vec<(u32, u32)>,
}

/// A compiled graph being written: where it starts, what is live then, and the requests in it
/// that are not the wrapper's own buffers.
#[derive(Debug)]
struct OpenGraph {
    start: usize,
    /// What was live, and the peak so far, as it began: the planned stream's peak is counted
    /// again from here when it ends.
    live_at_start: u128,
    peak_at_start: u128,
    /// Its outputs and writes in place ([`Builder::graph_output`], [`Builder::in_place`]).
    counted: buffer_reuse::Counted,
    /// (tensor, kind) of the requests that are not its own buffers, in tensor order.
    kinds: Vec<(u32, Kind)>,
    /// Tensors made before it that become its buffers ([`Builder::donate`]), in tensor order.
    donated: Vec<u32>,
    /// (tensor, the number of Inductor's name for it, `bufN`), in tensor order, and the number
    /// the next request takes ([`Builder::name_from`]).
    names: Vec<(u32, u32)>,
    name_next: Option<u32>,
    /// Its buffers of 4-byte elements ([`Builder::wide`]), in tensor order.
    wide: Vec<u32>,
}

impl Builder {
    /// Starts a stretch of the run: events from here on belong to this phase, stage and micro-step.
    pub fn mark(&mut self, phase: Option<Phase>, stage: Stage, micro_step: u32) {
        if self.seq.beyond.is_some() {
            return;
        }
        let at = self.seq.events.len();
        // a mark with no event after it says nothing: the new one replaces it
        if self.seq.marks.last().is_some_and(|m| m.at == at) {
            self.seq.marks.pop();
        }
        self.seq.marks.push(Mark {
            at,
            phase,
            stage,
            micro_step,
        });
    }

    /// Requests `bytes` for a tensor of `term`.
    pub fn alloc(&mut self, bytes: u128, term: Term) -> TensorId {
        if bytes == 0 || self.seq.beyond.is_some() {
            return None;
        }
        let live = self.live.saturating_add(bytes);
        if live > CEILING_BYTES {
            let m = self.seq.marks.last();
            self.seq.beyond = Some(Beyond {
                requested: bytes,
                term,
                live_bytes: live,
                phase: m.and_then(|m| m.phase),
                stage: m.map_or(Stage::ModelLoad, |m| m.stage),
                micro_step: m.map_or(0, |m| m.micro_step),
            });
            return None;
        }
        self.live = live;
        self.peak = self.peak.max(live);
        let id = self.sizes.len() as u32;
        self.sizes.push(bytes);
        self.bytes_of.push(bytes as u64);
        if let Some(g) = self.graph.as_mut() {
            if let Some(n) = g.name_next {
                g.names.push((id, n));
                g.name_next = Some(n + 1);
            }
        }
        self.seq.events.push(Event {
            action: Action::Alloc,
            tensor: id,
            // within the ceiling, checked above
            bytes: bytes as u64,
            term,
        });
        Some(id)
    }

    /// Releases a tensor (nothing for `None`).
    pub fn free(&mut self, t: TensorId) {
        if self.seq.beyond.is_some() {
            return;
        }
        if let Some(id) = t {
            // a tensor freed twice frees its bytes once, and says so once: its storage may be
            // another buffer's by then (`end_graph`)
            let bytes = std::mem::take(&mut self.sizes[id as usize]);
            if bytes == 0 {
                return;
            }
            self.live -= bytes;
            self.seq.events.push(Event {
                action: Action::Free,
                tensor: self
                    .aliases
                    .binary_search_by_key(&id, |a| a.0)
                    .map_or(id, |i| self.aliases[i].1),
                bytes: 0,
                term: Term::Params,
            });
        }
    }

    /// Requests `bytes` inside a compiled graph for what is not one of the wrapper's own buffers
    /// there ([`Kind`]): an extern op's output, or an op's or the autotuner's own request. Outside
    /// a graph, [`Builder::alloc`].
    pub fn alloc_as(&mut self, kind: Kind, bytes: u128, term: Term) -> TensorId {
        let t = self.alloc(bytes, term);
        if let (Some(g), Some(id)) = (self.graph.as_mut(), t) {
            g.kinds.push((id, kind));
            // a request that is not a buffer of the graph has no name there
            if kind == Kind::External && g.names.last().is_some_and(|n| n.0 == id) {
                g.names.pop();
                g.name_next = g.name_next.map(|n| n - 1);
            }
        }
        t
    }

    /// Inside a compiled graph: `t`, made before it, is written in place by one of its kernels
    /// and is its buffer from then on — dead, it is pooled for a later buffer of its size, as
    /// the wrapper's own are (`bufN = reinterpret_tensor(mm_51, …); del mm_51  # reuse`, then
    /// `bufM = reinterpret_tensor(bufN, …)`). Outside a graph, nothing.
    pub fn donate(&mut self, t: TensorId) {
        // kept sorted, as `kinds` is: it is looked up for every free of an older tensor in the
        // graph (an insertion, not a sort, which would cost the page's wasm 2 KB gzipped)
        if let (Some(g), Some(id)) = (self.graph.as_mut(), t) {
            if let Err(at) = g.donated.binary_search(&id) {
                g.donated.insert(at, id);
            }
        }
    }

    /// Inside a compiled graph: the buffers requested from here on are named `bufN` from `n` up,
    /// in order, as Inductor names them where the generator knows its numbering; the order of
    /// their names decides which dead buffer the wrapper's pool hands on
    /// ([`buffer_reuse::plan`]).
    pub fn name_from(&mut self, n: u32) {
        if let Some(g) = self.graph.as_mut() {
            g.name_next = Some(n);
        }
    }

    /// Inside a compiled graph: `t`, just requested, holds 4-byte elements (fp32). The wrapper
    /// pools dead buffers by dtype as well as size, so where buffers of one size and two dtypes
    /// meet, the generator says which are fp32 ([`buffer_reuse::plan`]).
    pub fn wide(&mut self, t: TensorId) -> TensorId {
        if let (Some(g), Some(id)) = (self.graph.as_mut(), t) {
            // requested in order, so pushed in order
            g.wide.push(id);
        }
        t
    }

    /// Inside a compiled graph: `t`, made in it, is one of the tensors it returns, which
    /// Inductor's estimate never frees and counts from the graph's start as owed
    /// ([`buffer_reuse::Counted`]).
    pub fn graph_output(&mut self, t: TensorId) {
        if let (Some(g), Some(id)) = (self.graph.as_mut(), t) {
            if let Err(at) = g.counted.outputs.binary_search(&id) {
                g.counted.outputs.insert(at, id);
            }
        }
    }

    /// Inside a compiled graph: the next kernel writes a `bytes` output into an input it reads
    /// last, which takes no request but which Inductor's estimate counts as a second buffer
    /// there ([`buffer_reuse::Counted`]).
    pub fn in_place(&mut self, bytes: u128) {
        let at = self.seq.events.len();
        if let Some(g) = self.graph.as_mut() {
            if let Some(k) = (at > g.start).then(|| at - 1 - g.start) {
                g.counted.in_place.push((k, bytes));
            }
        }
    }

    /// Starts a compiled graph: what is allocated from here to [`Builder::end_graph`] with
    /// [`Builder::alloc`] is the graph's own buffers, in the order of Inductor's schedule.
    pub fn begin_graph(&mut self) {
        self.graph = Some(OpenGraph {
            start: self.seq.events.len(),
            live_at_start: self.live,
            peak_at_start: self.peak,
            counted: buffer_reuse::Counted::default(),
            kinds: Vec::new(),
            donated: Vec::new(),
            names: Vec::new(),
            name_next: None,
            wide: Vec::new(),
        });
    }

    /// Ends the compiled graph begun last: the wrapper's memory planning hands dead buffers'
    /// storage to new ones ([`buffer_reuse::plan`]), which takes their requests out of the stretch
    /// and never raises the graph's own peak.
    pub fn end_graph(&mut self) {
        let Some(g) = self.graph.take() else {
            return;
        };
        if self.seq.beyond.is_some() {
            return;
        }
        let bytes_of = &self.bytes_of;
        let p = buffer_reuse::plan(
            &self.seq.events[g.start..],
            |t| {
                g.kinds
                    .binary_search_by_key(&t, |k| k.0)
                    .map_or(Kind::Planned, |i| g.kinds[i].1)
            },
            |t| g.donated.binary_search(&t).is_ok(),
            |t| g.wide.binary_search(&t).is_ok(),
            |t| {
                g.names
                    .binary_search_by_key(&t, |n| n.0)
                    .ok()
                    .map(|i| g.names[i].1)
            },
            |t| bytes_of.get(t as usize).map_or(0, |b| u128::from(*b)),
            &g.counted,
        );
        // marks inside the stretch move back by the events taken out before them
        let mut kept_before = vec![0usize; p.kept.len() + 1];
        for (i, k) in p.kept.iter().enumerate() {
            kept_before[i + 1] = kept_before[i] + usize::from(*k);
        }
        for m in self.seq.marks.iter_mut().filter(|m| m.at > g.start) {
            m.at = g.start + kept_before[(m.at - g.start).min(p.kept.len())];
        }
        self.seq.events.truncate(g.start);
        self.seq.events.extend(p.events);
        self.aliases.extend(p.aliases);
        // The wrapper holds a dead buffer's storage until the buffer that takes it is made, so
        // `max_memory_allocated()` after the graph is the planned stream's peak, not the
        // requests' (data/traces/nc_coldcalnr_27: 8 MiB higher in a backward), and the autotuner
        // after it has that much more room (`below_peak`).
        let mut live = g.live_at_start;
        self.peak = g.peak_at_start;
        for e in &self.seq.events[g.start..] {
            match e.action {
                Action::Alloc => live += u128::from(e.bytes),
                Action::Free => {
                    live = live.saturating_sub(u128::from(self.bytes_of[e.tensor as usize]))
                }
            }
            self.peak = self.peak.max(live);
        }
    }

    /// Releases every tensor of `ts` in order and empties it.
    pub fn free_all(&mut self, ts: &mut Vec<TensorId>) {
        for t in ts.drain(..) {
            self.free(t);
        }
    }

    /// How far below its peak so far the run is now (`max_memory_allocated() −
    /// memory_allocated()`): what Inductor's autotuner may fill with copies without raising it.
    pub fn below_peak(&self) -> u128 {
        self.peak - self.live
    }

    /// Whether the run has passed [`CEILING_BYTES`]: what follows records nothing, so a program
    /// may stop describing it.
    pub fn is_beyond(&self) -> bool {
        self.seq.beyond.is_some()
    }

    pub fn finish(self) -> Sequence {
        self.seq
    }
}
