//! nanochat's memory, described once: every tensor base_train.py puts on the GPU, in the order
//! PyTorch allocates and frees it — model build, the bits-per-byte evaluation at step 0,
//! iteration 0 (whose `MuonAdamW.step()` creates the optimizer state), steady iterations and the
//! evaluation at the last step. The engine replays it through the caching allocator; every peak,
//! component and verdict comes from that replay.
//!
//! What each tensor is and why it is alive is derived in `shared/reference/nanochat-memory.md`
//! (§ numbers below) from nanochat 92d63d4 (`gpt.py`, `optim.py`, `flash_attention.py`,
//! `loss_eval.py`, `scripts/base_train.py`) and the graphs torch.compile builds for it with
//! PyTorch 2.11: the compiled forward saves 36·C bytes per token and layer plus norm statistics
//! (§4.2), the loss keeps only the bf16 logits (§4.4), the backward writes d(logits) in place and
//! produces every gradient in the parameter's dtype (§3), MuonAdamW stacks each Muon group's
//! gradients and parameters (§2.3).

mod backward;
mod fp8;
pub(super) mod rl;
pub(super) mod stages;

use backward::{Kept, Outer};

use super::config::{NanochatAttention, NanochatConfig, Script};
use super::shape::{Owner, Shape};
use crate::engine::buffer_reuse::Kind;
use crate::engine::events::{Builder, Phase, Sequence, Stage, TensorId};
use crate::gpu::Gpu;
use crate::terms::Term;

/// Steady iterations replayed after iteration 0 (the measurements ran iterations 1 and 2).
pub const STEADY_ITERATIONS: u32 = 2;

/// Evaluation batches replayed per `evaluate_bpb` (later ones repeat the second exactly).
const MAX_EVAL_STEPS: u64 = 2;

/// From how many tokens per micro-step a cold run times the loss gradient's kernel twice. Its
/// second launcher is `_dynamic_scale_rblock`'s, added only where ptxas gives the compiled kernel
/// more than 32 registers (PyTorch 2.11 `triton_heuristics.py`), which the code alone does not
/// say: measured on the H200 (tools/nanochat-probe/autotune_log.py, depth 4): 34 registers and
/// two launchers at 4,096 rows, one launcher at 2,048; every cold trace agrees (timed at 4,096
/// and 8,192 tokens, not at 256, 512 or 2,048).
const CE_BACKWARD_RETUNED_ROWS: u128 = 4096;

/// Registers ptxas gives the per-layer RMSNorm kernels of a looped reduction over C (C > 1024,
/// XBLOCK 2, R0_BLOCK 1024, eight warps), measured on the H200 with PyTorch 2.11 at depth 20
/// (data/inductor/autotune/nc_d20_bt2048.txt): the forward's layer-entry kernel (the residual
/// scales and the norm) 40, the backward's closing kernel 64 in a value-embedding layer and 80
/// in a plain one.
const LOOPED_NORM_REGISTERS: LoopedNorms = LoopedNorms {
    entry: 40,
    closing_ve: 64,
    closing_plain: 80,
};

/// The per-layer RMSNorm kernels of a compiled training step, by what they do (their registers,
/// or whether a cold run times them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LoopedNorms<T = u128> {
    entry: T,
    closing_ve: T,
    closing_plain: T,
}

/// Whether a cold run times a per-layer norm kernel of `nreg` registers, `rows` tokens long, on
/// `gpu`. Each layer's kernels differ (they read the layer's `resid_lambdas[i]` and
/// `x0_lambdas[i]` at a constant offset), so Inductor compiles one per layer, and each is timed
/// at its first launch when it has two launchers: a reduction over C has one configuration
/// (`ReductionHint.INNER`), persistent up to C = 1024 (`should_use_persistent_reduction`); past
/// that a looped one, to which `_dynamic_scale_rblock` (PyTorch 2.11 `triton_heuristics.py`)
/// adds a second with half the R0_BLOCK where the registers limit occupancy: more than
/// 65,536 / max-threads-per-SM of them, and more blocks than fit on the card at once (the rows'
/// size hint, a power of two, over XBLOCK, against 65,536 / (registers · 32 · warps) per SM).
fn looped_norm_timed(gpu: &Gpu, c: u128, rows: u128, nreg: u128) -> bool {
    const REGISTERS_PER_SM: u128 = 65_536;
    const WARPS: u128 = 8;
    if c <= 1024 || gpu.compute_capability.0 < 8 {
        return false;
    }
    let xblock = if c.next_power_of_two() <= 2048 { 2 } else { 1 };
    let blocks = rows.next_power_of_two().div_ceil(xblock);
    let per_sm = (REGISTERS_PER_SM / (nreg * 32 * WARPS)).max(1);
    nreg > REGISTERS_PER_SM / gpu.max_threads_per_sm() && blocks > per_sm * gpu.sm_count
}

/// Sizes in bytes, as u128 so that no product of flags can overflow.
struct Dims {
    b: u128,
    t: u128,
    c: u128,
    h: u128,
    v: u128,
    /// Tokens in one micro-batch: B·T.
    bt: u128,
    /// Bytes per element of the compute dtype: 2 (bf16), 4 (fp32).
    e: u128,
    /// bf16 compute: each Linear casts its fp32 weight to bf16 (`Linear.forward`), a copy the
    /// forward allocates and the backward may keep; in fp32 the cast is a no-op.
    copies: bool,
    /// `--fp8`: the Linear layers base_train.py converts run through fp8.py's `_Float8Matmul`
    /// (see [`Gen::fp8_layer`]).
    fp8: bool,
}

struct Gen<'a> {
    out: Builder,
    s: &'a Shape,
    cfg: &'a NanochatConfig,
    d: Dims,
    /// The card's cuBLAS workspace.
    workspace: u128,
    /// The card's L2: Inductor's autotuning flush buffer on a cold first run.
    l2: u128,
    /// Iteration 0 compiles on an empty Inductor cache (a user's first run of these shapes), so
    /// its kernels are autotuned on their first call (see [`Gen::autotune`]). base_train.py's
    /// runs; chat_sft.py runs the base run's graphs, whose choices its cache already holds.
    cold: bool,
    /// The main thread's cuBLAS workspace exists (made by the first matmul).
    main_workspace: bool,
    /// The autograd thread's workspace exists (made by the first backward matmul).
    backward_workspace: bool,
    /// Parameters and their gradients as they stand (`.grad`, `None` after `zero_grad`).
    grads: Vec<TensorId>,
    /// The val loader's on-device buffer, kept by the global `val_loader` between evaluations.
    val_buffer: TensorId,
    /// MuonAdamW's state, created lazily by the first step.
    state_created: bool,
    /// The rank whose memory this is (it decides the Muon matrices the rank owns).
    rank: u64,
    /// Optimizer steps whose collective tensors NCCL still holds while a later step runs (see
    /// [`Ranks`]); 0 on one GPU.
    held: usize,
    /// Each step's tensors ProcessGroupNCCL stashed, oldest first.
    stashes: std::collections::VecDeque<Vec<TensorId>>,
    /// `--fp8`: the cuBLASLt workspaces `torch._scaled_mm` made, the main thread's (first fp8
    /// forward matmul) and the autograd thread's (first fp8 backward matmul).
    lt_workspaces: [bool; 2],
    /// The rotary backward's four (B, T, H, D/2) halves, live between their kernel and the sums
    /// that read them (see [`Gen::compiled_backward`]).
    rot_halves: [TensorId; 4],
    /// The compiled backward's kernels are at their first launch (a cold run's first call).
    tuning_backward: bool,
    /// This micro-step runs the compiled training graphs for the first time on a cold cache:
    /// kernels compiled once per layer are timed at every layer.
    first_launches: bool,
    /// Which per-layer norm kernels a first call times at every layer ([`looped_norm_timed`]).
    norms_timed: LoopedNorms<bool>,
}

/// The cuBLASLt workspace `torch._scaled_mm` allocates once per thread (measured: 1 MiB on an
/// H100 with PyTorch 2.11, two of them after the first backward, data/measured/nanochat-fp8.jsonl).
const LT_WORKSPACE: u128 = 1 << 20;

/// How many of a Muon group's `k` matrices `rank` of `world` owns (optim.py `_compute_muon`:
/// rank r owns matrices r·⌈k/world⌉… of the group, if any).
pub fn owned_matrices(k: u64, world: u64, rank: u64) -> u64 {
    let chunk = k.div_ceil(world.max(1));
    chunk.min(k.saturating_sub(rank * chunk))
}

/// Which rank of a `torchrun` run the sequence describes, and how long NCCL keeps each optimizer
/// step's collective tensors.
///
/// MuonAdamW launches every collective with `async_op=True` and keeps only `.get_future()`.
/// Since PyTorch 2.7 (pytorch#148590, relanded as #150398) ProcessGroupNCCL no longer calls
/// `record_stream` on such tensors: it stashes them until `Work.wait()`, which nanochat never
/// calls, or until its watchdog (polling every 100 ms) has seen the work complete and a later
/// collective is launched (#150079). So a step's gradients, grad slices, Muon stacks and chunks
/// outlive `zero_grad` into the next steps' forward and backward: measured on two and four
/// H200s (data/measured/nanochat-ranks.jsonl, nanochat-ddp2-long.jsonl), each stash held adds
/// one step's collective tensors to the forward/backward peak. Step 0's stash is gone before
/// iteration 1 (its step spans seconds of compilation, between launches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ranks {
    pub rank: u32,
    /// Steps' stashes held at once while a step runs (≥ 1 with more than one GPU).
    pub held_stashes: u32,
}

/// What one layer's compiled forward keeps for the backward (§4.2).
struct LayerSaved {
    /// Freed by the MLP's backward: c_fc output, relu², the MLP's weight copies, n2 and x_mid.
    mlp: Vec<TensorId>,
    /// Freed by the attention output projection's backward: its input y and its weight copy.
    proj: Vec<TensorId>,
    /// The rest, freed at the end of the layer's backward.
    rest: Vec<TensorId>,
}

impl<'a> Gen<'a> {
    /// The builder of one rank's run of `cfg` (whose model is `s`) on `gpu`.
    fn new(cfg: &'a NanochatConfig, s: &'a Shape, gpu: &Gpu, ranks: Ranks, cold: bool) -> Self {
        let d = Dims {
            b: u128::from(cfg.device_batch_size),
            t: u128::from(s.t),
            c: u128::from(s.c),
            h: u128::from(s.h),
            v: u128::from(s.v),
            bt: u128::from(cfg.device_batch_size) * u128::from(s.t),
            e: u128::from(s.e),
            copies: s.e == 2,
            fp8: cfg.fp8 && cfg.script == Script::Base,
        };
        let timed = |nreg| looped_norm_timed(gpu, d.c, d.bt, nreg);
        let r = LOOPED_NORM_REGISTERS;
        let norms_timed = LoopedNorms {
            entry: timed(r.entry),
            closing_ve: timed(r.closing_ve),
            closing_plain: timed(r.closing_plain),
        };
        Gen {
            out: Builder::default(),
            s,
            cfg,
            d,
            workspace: gpu.cublas_workspace_bytes(),
            l2: gpu.l2_cache_bytes,
            cold,
            main_workspace: false,
            backward_workspace: false,
            grads: Vec::new(),
            val_buffer: None,
            state_created: false,
            rank: u64::from(ranks.rank),
            held: if cfg.world_size > 1 {
                ranks.held_stashes.max(1) as usize
            } else {
                0
            },
            stashes: std::collections::VecDeque::new(),
            lt_workspaces: [false; 2],
            rot_halves: [None; 4],
            tuning_backward: false,
            first_launches: false,
            norms_timed,
        }
    }

    /// A Linear's bf16 weight copy (`Linear.forward`); none in fp32, where the cast is a no-op.
    fn copy(&mut self, bytes: u128) -> TensorId {
        if self.d.copies {
            self.out.alloc(bytes, Term::WeightCopies)
        } else {
            None
        }
    }

    /// lm_head's bf16 weight copy. On a graph's first call in a cold run its cast, a 1-D
    /// pointwise kernel, is timed with two configurations before the logits are made (every
    /// cold trace: `copy, flush, flush, logits`).
    fn lm_head_copy(&mut self, first_call: bool) -> TensorId {
        let w = self.copy(2 * self.d.v * self.d.c);
        if first_call && w.is_some() {
            self.autotune(&[]);
        }
        w
    }

    /// An embedding's weight gradient: the backward scatters into an fp32 (V, C) buffer, which
    /// is cast to the bf16 embedding's dtype; in fp32 the buffer is the gradient.
    /// `then_free` goes once the buffer exists (wte's: dx, which the scatter reads).
    fn embedding_grad(&mut self, term: Term, then_free: TensorId) -> TensorId {
        let vc = self.d.v * self.d.c;
        let scatter = self.out.alloc(4 * vc, Term::EmbeddingGradBuffer);
        self.out.free(then_free);
        if !self.d.copies {
            return scatter;
        }
        let grad = self.out.alloc(2 * vc, term);
        self.out.free(scatter);
        grad
    }

    fn ws(&mut self) {
        if !self.main_workspace {
            self.main_workspace = true;
            self.out.alloc(self.workspace, Term::CublasWorkspace);
        }
    }

    /// The autograd thread's cuBLAS workspace, made by the first backward matmul.
    fn backward_workspace(&mut self) {
        if !self.backward_workspace {
            self.backward_workspace = true;
            self.out.alloc(self.workspace, Term::CublasWorkspace);
        }
    }

    /// `torch._scaled_mm`'s cuBLASLt workspace for the main thread (0) or the autograd thread (1).
    fn lt_workspace(&mut self, thread: usize) {
        if !self.lt_workspaces[thread] {
            self.lt_workspaces[thread] = true;
            self.out.alloc(LT_WORKSPACE, Term::CublasWorkspace);
        }
    }

    /// Model build (§1.4): `to_empty` gives every parameter fp32 storage in registration order,
    /// then `init_weights` casts `wte` and the value embeddings to bf16 and recomputes the
    /// rotary tables; the train loader's first batch lands in its on-device buffer.
    fn build(&mut self) {
        self.out.mark(None, Stage::ModelLoad, 0);
        // token_bytes = get_token_bytes(device): int32 (V,), before the model
        self.out
            .alloc(4 * u128::from(self.cfg.vocab_size), Term::TokenBytes);
        self.new_model();
        // loss, train_loss and the loop's other device scalars (§1.3)
        for _ in 0..4 {
            self.out.alloc(4, Term::Scalars);
        }
        // the train loader's buffer: 2·B·T int64, refilled in place by every next()
        self.out.alloc(16 * self.d.bt, Term::TokenIds);
    }

    /// `GPT(config)` on the meta device, `to_empty`, `init_weights`: every parameter gets fp32
    /// storage in registration order, the rotary tables are recomputed, `wte` and the value
    /// embeddings are cast to bf16. Returns the parameters as they stand (the rotary tables stay).
    fn new_model(&mut self) -> Vec<TensorId> {
        let (v, t, hd) = (self.d.v, self.d.t, u128::from(self.s.d));
        let params = self.s.params();
        let mut fp32: Vec<TensorId> = params
            .iter()
            .map(|p| {
                self.out
                    .alloc(4 * u128::from(p.numel()), Term::StoredParams)
            })
            .collect();
        // cos, sin: (1, 10·T, 1, D/2) in the compute dtype each
        let rotary = 10 * t * (hd / 2) * self.d.e;
        let mut tables = vec![
            self.out.alloc(rotary, Term::RotaryBuffers),
            self.out.alloc(rotary, Term::RotaryBuffers),
        ];
        // init_weights: the rotary tables recomputed through fp32 temporaries, then replaced by
        // their casts (in fp32 the cast is a no-op: cos and sin themselves stay)
        let mut temps: Vec<TensorId> = (0..4)
            .map(|_| self.out.alloc(10 * t * (hd / 2) * 4, Term::RotaryBuffers))
            .collect();
        if self.d.copies {
            let _new_tables = [
                self.out.alloc(rotary, Term::RotaryBuffers),
                self.out.alloc(rotary, Term::RotaryBuffers),
            ];
        } else {
            temps.truncate(2);
        }
        self.out.free_all(&mut temps);
        self.out.free_all(&mut tables);
        // wte and each value embedding: `.to(bf16)` makes the bf16 copy, then the fp32 one goes
        for (i, p) in params.iter().enumerate() {
            if p.elem_bytes < 4 {
                let bf16 = self.out.alloc(2 * v * self.d.c, Term::StoredParams);
                self.out.free(fp32[i]);
                fp32[i] = bf16;
            }
        }
        fp32
    }

    /// One `evaluate_bpb` (§5.1): `@torch.no_grad()`, the compiled model in eval mode, batches
    /// from a fresh val loader. `phase` is Eval at step 0 and EvalAfterStep at the last step.
    fn evaluate(&mut self, phase: Phase) {
        let Dims { v, bt, .. } = self.d;
        self.out.mark(Some(phase), Stage::Eval, 0);
        // the global val_loader is rebound to a new generator, whose buffer appears at its first next()
        let old = self.val_buffer.take();
        self.out.free(old);
        let steps = self.cfg.eval_steps().min(MAX_EVAL_STEPS);
        if steps > 0 {
            self.val_buffer = self.out.alloc(16 * bt, Term::TokenIds);
        }
        for step in 0..steps {
            let first = self.cold && phase == Phase::Eval && step == 0;
            if first {
                // the eval graph is compiled apart from the training graphs, on a cold cache
                // at its first call
                self.gate_matmul_bench(false);
                self.gate_matmul_bench(true);
            }
            self.ws();
            // the eval graph is compiled whole, the loss included: its buffers as Inductor's
            // wrapper plans them (`engine::buffer_reuse`)
            self.out.begin_graph();
            let x = self.eval_trunk(first);
            // lm_head: the bf16 weight copy and the (B, T, V) bf16 logits; the softcap and the
            // per-token loss are fused reductions over them (no fp32 logits, §4.4)
            let w = self.lm_head_copy(first);
            let logits = self.out.alloc(self.d.e * bt * v, Term::Logits);
            let loss2d = self.out.alloc(4 * bt, Term::Logits);
            let stat = self.out.alloc(4 * bt, Term::Logits);
            self.out.free(stat);
            self.out.free(w);
            self.out.free(x);
            self.out.free(logits);
            self.out.free(loss2d);
            self.out.end_graph();
        }
    }

    /// The eval forward up to the final norm's output (which it returns): each layer's working
    /// tensors live only inside the layer; nothing is kept for a backward.
    fn eval_trunk(&mut self, first: bool) -> TensorId {
        let Dims { c, bt, e, .. } = self.d;
        let btc = e * bt * c;
        let x0 = self.out.alloc(btc, Term::ForwardLocals);
        let mut x = self.out.alloc(btc, Term::ForwardLocals);
        // on a cold cache the graph's first call benchmarks each kernel with several configs as
        // it first launches it (data/traces/nc_tr_cal17, evaluate_bpb: the norms, the weight
        // casts, the attention's kernels behind the flush buffer; relu², which writes its input in
        // place, behind the flush buffer and a clone of that input)
        let tune = |g: &mut Gen, mutated: &[u128]| {
            if first {
                g.autotune(mutated);
            }
        };
        tune(self, &[]);
        let mut mask: TensorId = None;
        let last_masked = self.last_masked_layer();
        for i in 0..self.s.l as usize {
            self.attention_mask(i, &mut mask);
            // attention: q, k, v and their bf16 weight copies, the output, the projection
            let mut work: Vec<TensorId> = (0..3).map(|_| self.copy(2 * c * c)).collect();
            work.extend((0..3).map(|_| self.out.alloc(btc, Term::BlockTransient)));
            // SDPA's output, which the op allocates itself
            work.push(self.out.alloc_as(Kind::OpOutput, btc, Term::BlockTransient));
            self.out.free_all(&mut work);
            let mid = self.out.alloc(btc, Term::ForwardLocals);
            self.out.free(x);
            // MLP: c_fc to (B, T, 4C), relu², c_proj
            let mut work = vec![
                self.copy(8 * c * c),
                self.out.alloc(4 * btc, Term::BlockTransient),
            ];
            if i == 0 {
                tune(self, &[4 * btc]);
            }
            work.push(self.out.alloc(4 * btc, Term::BlockTransient));
            self.out.free_all(&mut work);
            if i == 0 {
                tune(self, &[btc]);
            }
            x = self.out.alloc(btc, Term::ForwardLocals);
            self.out.free(mid);
            if Some(i) == last_masked {
                self.out.free(mask.take());
            }
        }
        self.out.free(x0);
        let normed = self.out.alloc(btc, Term::FinalActivations);
        self.out.free(x);
        normed
    }

    fn masked(&self, layer: usize) -> bool {
        self.cfg.attention == NanochatAttention::Sdpa && self.s.windows[layer] < self.s.t
    }

    /// The additive bf16 bias made from the bool mask at the first sliding-window layer, then
    /// shared by all of them (§4.3).
    fn attention_mask(&mut self, layer: usize, mask: &mut TensorId) {
        if self.masked(layer) && mask.is_none() {
            *mask = self
                .out
                .alloc(self.d.e * self.d.t * self.d.t, Term::AttentionMask);
        }
    }

    /// The attention's log-sum-exp, kept for its backward: fp32 per head and row, the rows
    /// padded to 32 when masked.
    fn log_sum_exp(&mut self, layer: usize) -> TensorId {
        let Dims { b, t, h, .. } = self.d;
        let rows = if self.masked(layer) {
            t.div_ceil(32) * 32
        } else {
            t
        };
        self.out.alloc(4 * b * h * rows, Term::BlockActivations)
    }

    /// SDPA's kernels also keep their RNG seed and offset, one int64 each (seen in the allocator
    /// traces: flash_attention.py's two SDPA calls); FA3 keeps none.
    fn sdpa_rng_state(&mut self) -> Vec<TensorId> {
        if self.cfg.attention != NanochatAttention::Sdpa {
            return Vec::new();
        }
        (0..2)
            .map(|_| self.out.alloc(8, Term::BlockActivations))
            .collect()
    }

    fn last_masked_layer(&self) -> Option<usize> {
        (0..self.s.l as usize).rev().find(|&i| self.masked(i))
    }

    /// One training micro-step: the compiled forward (what it saves), the loss, the backward
    /// (gradients in the parameters' dtypes), and the gradients landing in `.grad`.
    fn micro_step(&mut self, phase: Phase, micro: u32) {
        let Dims {
            b, t, c, v, bt, e, ..
        } = self.d;
        let btc = e * bt * c;
        let s = self.s;
        self.out.mark(Some(phase), Stage::Forward, micro);
        self.first_launches = self.first_call(phase, micro);
        if self.first_call(phase, micro) && !self.d.fp8 {
            // AOTAutograd compiles the forward and the backward graph at the first call
            self.gate_matmul_bench(false);
            self.gate_matmul_bench(false);
        }
        self.ws();
        // global saved tensors: the embedding and its norm statistics, the first value
        // embedding's lookup (Inductor schedules it here, it reads only the tokens), the smear
        // gate's inputs (its (B, T−1, 24) input made from a transient of its size), x0 (with
        // --fp8: the smear gate's bf16 weight copy, the lookup in its layer, no x0 — allocator
        // traces). The order is the generated wrapper's (data/inductor/oc_nc_*.tgz, the module
        // with `primals_1` and no `tangents`): which blocks lie next to which decides the holes
        // the backward and the optimizer step find (docs/allocation-order.md §14).
        let smear = 24 * e * b * (t - 1);
        if self.d.fp8 {
            // the fp8 forward is written from Inductor's wrapper: its buffers as the wrapper
            // plans them (sequence/fp8.rs)
            self.out.begin_graph();
        }
        let mut global = vec![
            self.out.alloc(btc, Term::ForwardLocals),
            self.out.alloc(4 * bt, Term::ForwardLocals),
        ];
        let first_ve = s.ve.iter().position(|&v| v);
        let mut first_lookup = if self.d.fp8 {
            None
        } else {
            first_ve.and_then(|_| self.out.alloc(btc, Term::BlockActivations))
        };
        if self.d.fp8 {
            global.push(self.copy(2 * 24));
        }
        let transient = self.out.alloc(smear, Term::ForwardLocals);
        global.push(self.out.alloc(smear, Term::ForwardLocals));
        self.out.free(transient);
        global.push(self.out.alloc(e * b * (t - 1), Term::ForwardLocals));
        global.push(self.out.alloc(btc, Term::ForwardLocals));
        let mut mask: TensorId = None;
        let mut layers: Vec<LayerSaved> = Vec::with_capacity(s.l as usize);
        let mut kept: Vec<Kept> = Vec::with_capacity(s.l as usize);
        for i in 0..s.l as usize {
            if self.d.fp8 {
                layers.push(self.fp8_layer(i, &mut mask));
                continue;
            }
            let lookup = if Some(i) == first_ve {
                first_lookup.take()
            } else {
                None
            };
            kept.push(self.layer_forward(i, lookup, &mut mask));
        }
        let grad_term = if micro <= 1 {
            Term::Grads
        } else {
            Term::FreshGrads
        };
        let params = s.params();
        let mut fresh: Vec<TensorId> = vec![None; params.len()];
        // lm_head follows the blocks' matrices in registration order
        let lm_ix = lm_head_index(s);
        let dx = if self.d.fp8 {
            let head = self.fp8_head_forward(&mut layers, phase, micro);
            self.end_fp8_forward(&global, &layers, mask, &head);
            let (dx, lm_grad) = self.fp8_lm_head(head, phase, micro, grad_term);
            if let Some(ix) = lm_ix {
                fresh[ix] = lm_grad;
            }
            dx
        } else {
            let (last, lm_w, logits) = self.loss_forward(phase, micro);
            if self.d.copies {
                // bf16: the compiled backward as Inductor's wrapper runs it
                let outer = Outer {
                    global: std::mem::take(&mut global),
                    last,
                    lm_w,
                    logits,
                    mask: mask.take(),
                };
                let first = self.first_call(phase, micro);
                self.compiled_backward(
                    std::mem::take(&mut kept),
                    outer,
                    &mut fresh,
                    grad_term,
                    first,
                );
                None
            } else {
                // fp32: the loss's backward writes d(logits) into a buffer of its own, lm_head's
                // weight gradient is the fp32 gradient itself; dx then takes the place of the
                // final norm's output
                layers.extend(kept.drain(..).map(Kept::groups));
                let [sub, stat, normed] = last;
                self.backward_workspace();
                let dlogits = self.out.alloc(e * bt * v, Term::LossGrads);
                self.out.free(normed);
                let dx = self.out.alloc(btc, Term::BlockTransient);
                self.out.free(logits);
                self.out.free(dlogits);
                self.out.free(lm_w);
                if let Some(ix) = lm_ix {
                    fresh[ix] = self.out.alloc(4 * v * c, grad_term);
                }
                self.out.free(sub);
                self.out.free(stat);
                dx
            }
        };
        // the layers, last to first (§4.5): the MLP's weight gradients, c_proj's, the value
        // embedding's scatter into an fp32 (V, C) buffer cast to bf16, then q, k, v (and ve_gate)
        let block_ix = block_param_indices(s);
        let first_masked = (0..s.l as usize).find(|&i| self.masked(i));
        for (i, mut saved) in layers.into_iter().enumerate().rev() {
            let ix = &block_ix[i];
            for &k in &ix.mlp {
                fresh[k] = self.out.alloc(params[k].bytes(), grad_term);
            }
            self.out.free_all(&mut saved.mlp);
            fresh[ix.proj] = self.out.alloc(params[ix.proj].bytes(), grad_term);
            self.out.free_all(&mut saved.proj);
            if let Some(k) = ix.value_embed {
                fresh[k] = self.embedding_grad(grad_term, None);
            }
            for &k in &ix.qkv {
                fresh[k] = self.out.alloc(params[k].bytes(), grad_term);
            }
            self.out.free_all(&mut saved.rest);
            if Some(i) == first_masked {
                self.out.free(mask.take());
            }
        }
        self.out.free_all(&mut global);
        self.scalar_grads(&mut fresh, grad_term);
        // wte's, from dx (the compiled bf16 backward has made it)
        if fresh[0].is_none() {
            fresh[0] = self.embedding_grad(grad_term, dx);
        }
        // AccumulateGrad: the first micro-step's gradients become `.grad`; later ones are added
        // in place and released
        if micro <= 1 {
            self.grads = fresh;
        } else {
            for f in fresh {
                self.out.free(f);
            }
        }
    }

    /// One layer's compiled training forward (not --fp8), in the order of the generated
    /// wrapper: the norm, then q and k as the Linears return them — transients, freed once
    /// rotary and QK-norm have made what SDPA reads — between the weight copies, v, the rotary
    /// and normed q and k; the sliding-window mask where the first masked layer needs it; SDPA's
    /// outputs; c_proj and the residual; the MLP. A value-embedding layer computes v, its gate
    /// and lookup before q and k; the first one's lookup was made with the embedding
    /// (`lookup`). Layer i's x_out is the next layer's input.
    fn layer_forward(&mut self, i: usize, lookup: TensorId, mask: &mut TensorId) -> Kept {
        let Dims { h, bt, e, c, .. } = self.d;
        let btc = e * bt * c;
        let s = self.s;
        let a = |g: &mut Gen, bytes: u128| g.out.alloc(bytes, Term::BlockActivations);
        let w = |g: &mut Gen, bytes: u128| g.copy(bytes);
        let n1_stat = a(self, 4 * bt);
        let n1_out = if self.d.copies { a(self, btc) } else { None };
        if i > 0 && self.first_launches && self.norms_timed.entry {
            // the layer's entry kernel (its residual scales, then norm 1) writes the mixed
            // residual in place: timed on a copy of it (the traces: one 5 MiB copy per timing)
            self.autotune(&[btc]);
        }
        // the value embedding: ve_gate's weight copy, its logits, the lookup
        let gate = |g: &mut Gen, lookup: TensorId| {
            let (w_gate, logits) = (w(g, 24 * h), a(g, e * bt * h));
            let lookup = if lookup.is_some() { lookup } else { a(g, btc) };
            [lookup, w_gate, logits]
        };
        let (w_q, q_lin, w_k, k_lin, w_v, v, ve);
        if s.ve[i] && lookup.is_none() {
            (w_v, v) = (w(self, 2 * c * c), a(self, btc));
            ve = Some(gate(self, None));
            (w_q, q_lin) = (w(self, 2 * c * c), a(self, btc));
            (w_k, k_lin) = (w(self, 2 * c * c), a(self, btc));
        } else {
            (w_q, q_lin) = (w(self, 2 * c * c), a(self, btc));
            (w_k, k_lin) = (w(self, 2 * c * c), a(self, btc));
            (w_v, v) = (w(self, 2 * c * c), a(self, btc));
            ve = s.ve[i].then(|| gate(self, lookup));
        }
        let (rot_q, rot_k) = (a(self, btc), a(self, btc));
        let qk_stats = [a(self, 4 * bt * h), a(self, 4 * bt * h)];
        let (q, k) = (a(self, btc), a(self, btc));
        self.out.free(q_lin);
        self.out.free(k_lin);
        self.attention_mask(i, mask);
        let lse = self.log_sum_exp(i);
        let rng = self.sdpa_rng_state();
        // y: SDPA's output, c_proj's input, kept with c_proj's weight copy
        let y = a(self, btc);
        let w_aproj = w(self, 2 * c * c);
        // x_mid, norm 2's statistics and output, c_fc's weight and output, c_proj's weight, relu²
        let x_mid = a(self, btc);
        let n2_stat = a(self, 4 * bt);
        let n2_out = a(self, btc);
        let w_fc = w(self, 8 * c * c);
        let fc_out = a(self, 4 * btc);
        let w_mproj = w(self, 8 * c * c);
        let relu2 = a(self, 4 * btc);
        // x_out, the next layer's input
        let x_out = if i + 1 < s.l as usize {
            a(self, btc)
        } else {
            None
        };
        Kept {
            n1_stat,
            n1_out,
            w_qkv: [w_q, w_k, w_v],
            ve,
            rot_q,
            rot_k,
            qk_stats,
            qkv: [q, k, v],
            lse,
            rng,
            y,
            w_aproj,
            x_mid,
            n2_stat,
            n2_out,
            w_fc,
            fc_out,
            relu2,
            w_mproj,
            x_out,
        }
    }

    /// The scalars' gradients: every fp32 parameter but wte whose gradient `fresh` lacks.
    fn scalar_grads(&mut self, fresh: &mut [TensorId], grad_term: Term) {
        for (k, p) in self.s.params().iter().enumerate() {
            if fresh[k].is_none() && k > 0 && p.elem_bytes == 4 {
                fresh[k] = self.out.alloc(p.bytes(), grad_term);
            }
        }
    }

    /// The final norm (after the backout subtraction), lm_head and the loss, up to the backward:
    /// returns the final norm's input, statistic and output, lm_head's weight copy and the logits.
    fn loss_forward(&mut self, phase: Phase, micro: u32) -> ([TensorId; 3], TensorId, TensorId) {
        let Dims { c, v, bt, e, .. } = self.d;
        let btc = e * bt * c;
        let last = [
            self.out.alloc(btc, Term::FinalActivations),
            self.out.alloc(4 * bt, Term::FinalActivations),
            self.out.alloc(btc, Term::FinalActivations),
        ];
        let lm_w = self.lm_head_copy(self.first_call(phase, micro));
        let logits = self.out.alloc(e * bt * v, Term::Logits);
        self.out.mark(Some(phase), Stage::Loss, micro);
        if self.first_call(phase, micro) && self.d.bt >= CE_BACKWARD_RETUNED_ROWS {
            // the backward's first kernel, the loss's gradient over the logits (one
            // configuration, ReductionHint.INNER), gets a second from `_dynamic_scale_rblock`
            // where its register count passes 32: timed beside the logits, before anything of
            // the backward is made (data/traces/nc_tr_cal00: the first forward's peak); it
            // writes no argument the autotuner copies
            self.autotune(&[]);
        }
        let mut stats = vec![
            self.out.alloc(4 * bt, Term::Logits),
            self.out.alloc(4 * bt, Term::Logits),
        ];
        self.out.free_all(&mut stats);
        self.out.mark(Some(phase), Stage::Backward, micro);
        (last, lm_w, logits)
    }

    /// `--fp8`: the top of the backward, as the allocator traces show it: the backward recomputes
    /// lm_head's input cast, gets the loss's d(logits) in fp32 beside the bf16 logits, and
    /// `_to_fp8(grad_output)` makes its e5m2 cast and that cast's transpose (`go_T`) before either
    /// is freed — 8 bytes per token and vocabulary entry at once, the fp8 run's peak wherever the
    /// vocabulary dominates (measured: the bf16 run keeps only the logits, written in place).
    /// Returns d(input) and lm_head's gradient.
    fn fp8_lm_head(
        &mut self,
        head: fp8::Fp8Head,
        phase: Phase,
        micro: u32,
        grad_term: Term,
    ) -> (TensorId, TensorId) {
        let Dims { c, v, bt, e, .. } = self.d;
        let fp8::Fp8Head {
            final_norm,
            logits,
            stats,
            mut scales,
        } = head;
        self.out.mark(Some(phase), Stage::Backward, micro);
        let d32 = self.out.alloc(4 * bt * v, Term::LossGrads);
        for t in stats {
            self.out.free(t);
        }
        let go = self.out.alloc(bt * v, Term::LossGrads);
        let go_t = self.out.alloc(bt * v, Term::LossGrads);
        if self.first_call(phase, micro) {
            // a first run: the cast's kernels are autotuned here (measured at this point;
            // data/traces/nc_fp8tr_*)
            self.autotune(&[]);
        }
        self.out.free(logits);
        self.out.free(d32);
        // grad_input = go @ w: the weight's cast again, column-major, then the first backward
        // matmul, which makes the autograd thread's workspaces
        let w_col = self.out.alloc(v * c, Term::WeightCopies);
        let dx = self.out.alloc(e * bt * c, Term::BlockTransient);
        self.backward_workspace();
        self.lt_workspace(1);
        self.out.free(go);
        self.out.free(w_col);
        // grad_weight = go_T @ x: the input's cast made again (the forward kept none), the bf16
        // product, cast to the fp32 master's dtype
        let x8 = self.out.alloc(bt * c, Term::BlockTransient);
        let dw16 = self.out.alloc(2 * v * c, Term::LmHeadGrads);
        self.out.free(go_t);
        let grad = self.out.alloc(4 * v * c, grad_term);
        self.out.free(dw16);
        self.out.free(x8);
        // the final norm's backward has made dx: its input and statistic go
        for t in final_norm {
            self.out.free(t);
        }
        self.out.free_all(&mut scales);
        (dx, grad)
    }

    /// One kernel timed on its first call of a cold run, as Inductor's `CachingAutotuner.bench`
    /// does (PyTorch 2.11, `triton_heuristics.py`), for each of its candidate configurations:
    /// `copy_args_to_cpu_if_needed` keeps a copy of each argument the kernel writes (`mutated`,
    /// in order) on the GPU while the copies fit in `max_memory_allocated() −
    /// memory_allocated()` — graphs without a backward (`optimize_mem`), which the optimizer's
    /// are — and moves the rest to the host; the benchmarker holds an L2-sized buffer it writes
    /// between timings, and each timing clones the kept arguments. So the first configuration
    /// raises the peak by the buffer, and the next ones find that much room for their copies
    /// (data/traces/nc_coldtr_d1_B2_T128_GA1_L: lm_head's three 16 MiB copies come only after
    /// the first buffer; nc_tr_*: the buffer, then the copies, at optim.py's last Muon kernel).
    fn autotune(&mut self, mutated: &[u128]) {
        for _configuration in 0..2 {
            let mut room = self.out.below_peak();
            let flush = self
                .out
                .alloc_as(Kind::External, self.l2, Term::InductorAutotune);
            let mut clones = Vec::new();
            for &bytes in mutated {
                if bytes <= room {
                    room -= bytes;
                    clones.push(
                        self.out
                            .alloc_as(Kind::External, bytes, Term::InductorAutotune),
                    );
                }
            }
            self.out.free_all(&mut clones);
            self.out.free(flush);
        }
    }

    /// What compiling a graph on a cold cache times before the graph first runs: the two gates'
    /// small matmuls, each on random inputs laid out as the real ones (x[..., :12] for ve_gate,
    /// x[:, :-1, :24] for the smear gate: views whose storage spans nearly all of x), run on
    /// cuBLAS (the process's first matmul makes its workspace) and timed twice behind the L2
    /// flush buffer, the inputs freed after. Measured in every traced cold run but one
    /// (data/traces/nc_tr_*, requests of exactly the span's bytes): before evaluate_bpb's first
    /// call ve_gate's then the smear gate's (`nc_tr_exp_23` #229, #490), and before the first
    /// training forward ve_gate's twice, for the forward and the backward graph (#1631,
    /// #1962). `nc_tr_exp_16` (batch 1) times none before its eval. That this is Inductor's
    /// pad_mm benchmark (`fx_passes/pad_mm.py`, `_should_pad`: `realize_tensor` allocates a view's
    /// whole span) is an inference from the sizes and the order.
    fn gate_matmul_bench(&mut self, smear: bool) {
        let Dims {
            b, t, c, h, bt, e, ..
        } = self.d;
        let (span, weight) = if smear {
            ((b - 1) * t * c + (t - 2) * c + 24, 24)
        } else {
            ((bt - 1) * c + 12, 12 * h)
        };
        let mut inputs = vec![
            self.out.alloc(e * span, Term::InductorAutotune),
            self.out.alloc(e * weight, Term::InductorAutotune),
        ];
        self.ws();
        self.autotune(&[]);
        self.out.free_all(&mut inputs);
    }

    /// Whether this is a cold run's first call of the training graphs.
    fn first_call(&self, phase: Phase, micro: u32) -> bool {
        self.cold && phase == Phase::TrainFirstIter && micro <= 1
    }

    /// AdamW's `exp_avg` and `exp_avg_sq` of every AdamW parameter, like the parameter (bf16
    /// for the embeddings), 1/N of it on each rank for parameters of ≥ 1024 elements.
    fn adamw_state(&mut self) {
        let n_world = u128::from(self.cfg.world_size.max(1));
        for p in self.s.params().iter().filter(|p| p.owner == Owner::AdamW) {
            let bytes = if n_world > 1 && p.numel() >= 1024 {
                p.bytes() / n_world
            } else {
                p.bytes()
            };
            self.out.alloc(bytes, Term::AdamState);
            self.out.alloc(bytes, Term::AdamState);
        }
    }

    /// One Muon group's `momentum_buffer` (⌈K/N⌉ matrices) and `second_momentum_buffer`.
    fn muon_state(&mut self, (m, n): (u64, u64), k: u64) {
        let chunk = k.div_ceil(u64::from(self.cfg.world_size.max(1)));
        self.out
            .alloc(4 * u128::from(chunk * m * n), Term::MuonState);
        let side = if m >= n { m } else { n };
        self.out
            .alloc(4 * u128::from(chunk * side), Term::MuonState);
    }

    /// chat_sft.py `--load-optimizer=1`: the base run's optimizer state, loaded onto the GPU
    /// before step 0 (`load_state_dict` keeps the loaded tensors: same device and dtype).
    fn load_optimizer_state(&mut self) {
        self.adamw_state();
        for (shape, k) in self.s.muon_groups() {
            self.muon_state(shape, k);
        }
        self.state_created = true;
    }

    /// `MuonAdamW.step()` (optim.py `step`, §2.3) and `zero_grad(set_to_none=True)`, on rank 0.
    ///
    /// One GPU: every Muon group's gradients stacked, then per group its parameters stacked and
    /// the Polar-Express iterates; all stacks live until the copy back. More GPUs (nanochat's own
    /// sharding, no DDP wrapper): AdamW parameters of ≥ 1024 elements reduce-scatter into a
    /// 1/N gradient slice and keep 1/N of their state; each Muon group stacks its gradients,
    /// copies them into a zero-padded ⌈K/N⌉·N stack (kept as the all-gather's output), receives
    /// its ⌈K/N⌉ chunk, keeps state for that chunk, stacks the parameters it owns and fills an
    /// ⌈K/N⌉ all-gather input. Rank 0 owns a full chunk: it is the fullest rank.
    fn optimizer_step(&mut self, phase: Phase) {
        let s = self.s;
        let n_world = u64::from(self.cfg.world_size.max(1));
        self.out.mark(Some(phase), Stage::OptimizerStep, 0);
        let groups = s.muon_groups();
        let mat = |(m, n): (u64, u64), k: u64| 4 * u128::from(k * m * n);
        let first = !self.state_created;
        let adamw = s.adamw_in_step_order();
        let sharded = |p: &super::shape::Param| n_world > 1 && p.numel() >= 1024;
        // phase 1: the reductions (on one GPU, only the Muon stacks). Launching the first
        // collective releases the stashes of steps the watchdog has seen complete: all but the
        // newest `held - 1`, so that `held` steps' tensors are live during this step's forward
        // and backward.
        while n_world > 1 && self.stashes.len() >= self.held.max(1) {
            let mut old = self.stashes.pop_front().unwrap_or_default();
            self.out.free_all(&mut old);
        }
        let mut kept: Vec<TensorId> = Vec::new();
        for p in adamw.iter().filter(|p| sharded(p)) {
            kept.push(
                self.out
                    .alloc(p.bytes() / u128::from(n_world), Term::OptimizerStacks),
            );
        }
        for &(shape, k) in &groups {
            let chunk = k.div_ceil(n_world);
            let stack = self.out.alloc(mat(shape, k), Term::OptimizerStacks);
            if n_world == 1 {
                kept.push(stack);
                continue;
            }
            kept.push(
                self.out
                    .alloc(mat(shape, chunk * n_world), Term::OptimizerStacks),
            );
            self.out.free(stack);
            kept.push(self.out.alloc(mat(shape, chunk), Term::OptimizerStacks));
        }
        // phase 2: AdamW first (state like the parameter: bf16 for the embeddings; 1/N of it
        // where sharded), fused in place; then each Muon group
        // a cold run times each compiled kernel once: one graph per shape and dtype
        // (`dynamic=False`), its state created just before its first call (optim.py 340-341)
        let cold = first && self.cold && phase == Phase::TrainFirstIter;
        if first {
            let mut timed = Vec::new();
            for p in &adamw {
                let bytes = if sharded(p) {
                    p.bytes() / u128::from(n_world)
                } else {
                    p.bytes()
                };
                self.out.alloc(bytes, Term::AdamState);
                self.out.alloc(bytes, Term::AdamState);
                if cold && !timed.contains(&(p.shape, p.elem_bytes)) {
                    timed.push((p.shape, p.elem_bytes));
                    // adamw_step_fused's kernel lists six written arguments of the
                    // parameter's size, bf16 or fp32, each copied while the room lasts
                    // (data/traces/nc_coldcalnr_27: six 16 MiB copies for the fp32 lm_head in
                    // its second configuration; a probe that resets the peak counter leaves
                    // room for three, nc_coldtr_d1_B2_T128_GA1_L, docs/allocation-order.md §19)
                    self.autotune(&[bytes; 6]);
                }
            }
        }
        // polar express's pointwise kernels depend only on the stacks' and the Gram matrices'
        // element counts, so a group whose sizes an earlier group had (the MLP's (4C, C) and
        // (C, 4C)) runs kernels already timed
        let mut timed_sizes = Vec::new();
        for &((m, n), k) in &groups {
            let chunk = k.div_ceil(n_world);
            let owned = owned_matrices(k, n_world, self.rank);
            if first {
                self.out.alloc(mat((m, n), chunk), Term::MuonState);
                let side = if m >= n { m } else { n };
                self.out
                    .alloc(4 * u128::from(chunk * side), Term::MuonState);
            }
            // a rank that owns none of the group stacks nothing and runs no kernel
            let stacked_owned = if owned > 0 {
                self.out.alloc(mat((m, n), owned), Term::OptimizerStacks)
            } else {
                None
            };
            // muon_step_fused as its generated wrapper runs it (data/inductor/
            // oc_nc_d20_B16_T512_L.tgz, the modules with five `bmm` pairs): bf16 stacks X (the
            // equilibrated and the normalized gradient, then each Polar Express iteration's
            // X·B) and two Gram matrices (A and A·A) are made in this order and none is freed
            // before the fifth iteration; a square group's first X·B takes A·A's storage (one
            // size), so it holds one buffer fewer. Four (square: three) go before the closing
            // kernels, three bf16 stacks are held through them.
            let (ko, mu, nu) = (u128::from(owned), u128::from(m), u128::from(n));
            let small = mu.min(nu);
            let (x, gram) = (2 * ko * mu * nu, 2 * ko * small * small);
            let (sizes, freed_first): (&[u128], &[usize]) = if m == n {
                (&[x, x, gram, gram, x, x], &[1, 5, 3])
            } else {
                (&[x, x, gram, gram, x, x, x], &[1, 3, 5, 2])
            };
            // (a rank that owns none of the group asks for nothing: empty requests are none)
            let tuning = cold && ko > 0 && !timed_sizes.contains(&(x, gram));
            timed_sizes.push((x, gram));
            let last = sizes.len() - 1;
            let mut iterates: Vec<TensorId> = Vec::new();
            for (i, &bytes) in sizes.iter().enumerate() {
                iterates.push(self.out.alloc(bytes, Term::PolarExpress));
                if !tuning {
                    continue;
                }
                // a cold run times each pointwise kernel of the iterations where the wrapper
                // first runs it, two launchers each (data/inductor/autotune/nc_d4_bt4096.txt;
                // the order: data/inductor/oc_nc_d4.tgz's four Muon wrappers): each `add_mul`
                // writes the Gram matrix A in place, the fifth iteration's `add_div_…_norm_mul`
                // the first stack; the others write buffers of their own
                let kernels: &[&[u128]] = match (m == n, i) {
                    (_, 1) => &[&[]],
                    (true, 3) | (true, 4) => &[&[gram], &[]],
                    (true, 5) | (false, 3) => &[&[gram]],
                    (false, 4) | (false, 5) => &[&[], &[gram]],
                    _ => &[],
                };
                for &mutated in kernels {
                    self.autotune(mutated);
                }
                if i == last {
                    // the normalized stack's storage goes (its last tenant is the third
                    // iteration's X), then the last two iterations' four kernels
                    self.out.free(iterates[1].take());
                    for mutated in [&[x][..], &[gram], &[], &[gram]] {
                        self.autotune(mutated);
                    }
                }
            }
            for &k in freed_first {
                self.out.free(iterates[k].take());
            }
            if cold && ko > 0 {
                // the last kernel (the cautious update, optim.py 180) is timed while those three
                // are held; it writes the parameters and the update, each an fp32 stack
                // (data/traces/nc_tr_exp_16, nc_tr_cal01, nc_tr_exp_23)
                self.autotune(&[4 * ko * mu * nu; 2]);
            }
            self.out.free_all(&mut iterates);
            if n_world == 1 {
                // the updated stack maps straight onto the parameters in phase 3
                kept.push(stacked_owned);
            } else {
                // the all-gather's input, held by the pending collective until phase 3
                kept.push(self.out.alloc(mat((m, n), chunk), Term::OptimizerStacks));
                self.out.free(stacked_owned);
            }
        }
        self.state_created = true;
        // phase 3: gathers finish, copies back; what step() made goes when it returns, but for
        // what NCCL stashed: the collectives' buffers, and the AdamW gradients they reduced
        let stash = n_world > 1 && !first;
        let mut grads = std::mem::take(&mut self.grads);
        if stash {
            let params = s.params();
            for (g, p) in grads.iter_mut().zip(&params) {
                if p.owner == Owner::AdamW {
                    kept.push(g.take());
                }
            }
        } else {
            self.out.free_all(&mut kept);
        }
        self.out.mark(Some(phase), Stage::ZeroGrad, 0);
        self.out.free_all(&mut grads);
        if stash {
            self.stashes.push_back(kept);
        }
    }

    /// One CORE example through the uncompiled model under `no_grad` (core_eval.py
    /// `forward_model`), `n` tokens (choices × length; sequences are never truncated). Measured
    /// (data/measured/nanochat-core.jsonl, 332 shapes, to 512 B): the lm_head matmul holds the bf16
    /// weight copy and bf16 logits; the softcap then holds three fp32 (N, V) tensors (`.float()`,
    /// `/15`, `tanh`) after the bf16 logits are gone; 8·N·C bytes of activations and the ids stay
    /// alive throughout.
    fn core(&mut self, n: u128) {
        self.out.mark(Some(Phase::Core), Stage::Eval, 0);
        // the batch's int64 ids (8·N), made by core_eval before the forward
        let ids = self.out.alloc(8 * n, Term::TokenIds);
        self.logits_forward(n);
        self.out.free(ids);
    }

    /// One forward of `n` tokens through the uncompiled model without targets' loss kept: what
    /// it holds on top of its input ids while it runs, all of it gone when it returns.
    fn logits_forward(&mut self, n: u128) {
        let capped = self.capped_logits(n);
        // cross_entropy's fp32 log-softmax beside the capped logits (with targets): 8·N·V, below
        // the softcap
        let logp = self.out.alloc(4 * n * self.d.v, Term::Logits);
        self.out.free(logp);
        self.out.free(capped);
    }

    /// The uncompiled forward of `n` tokens up to its capped fp32 (N, V) logits, which it
    /// returns; its activations are freed.
    fn capped_logits(&mut self, n: u128) -> TensorId {
        let Dims { c, v, .. } = self.d;
        // a process's first matmul makes its cuBLAS workspace (chat_eval's first batch)
        self.ws();
        // 2 bytes a token beside the ids (measured: 10·N with core_eval's 8·N ids, 2·N with the
        // loader's) and 8·N·C bytes of activations stay alive throughout
        let small = self.out.alloc(2 * n, Term::TokenIds);
        let acts = self.out.alloc(8 * n * c, Term::ForwardLocals);
        let w = self.copy(2 * v * c);
        let bf16 = self.out.alloc(self.d.e * n * v, Term::Logits);
        self.out.free(w);
        let f32 = self.out.alloc(4 * n * v, Term::Logits);
        self.out.free(bf16);
        let scaled = self.out.alloc(4 * n * v, Term::Logits);
        let tanh = self.out.alloc(4 * n * v, Term::Logits);
        self.out.free(scaled);
        let capped = self.out.alloc(4 * n * v, Term::Logits);
        self.out.free(tanh);
        self.out.free(f32);
        self.out.free(acts);
        self.out.free(small);
        capped
    }

    fn iteration(&mut self, phase: Phase) {
        let micro = self.cfg.grad_accum_steps().min(2) as u32;
        for m in 1..=micro {
            self.micro_step(phase, m);
        }
        self.optimizer_step(phase);
    }
}

/// Where each layer's parameters sit in [`Shape::params`].
struct BlockParams {
    qkv: Vec<usize>,
    proj: usize,
    mlp: Vec<usize>,
    value_embed: Option<usize>,
}

/// Where lm_head sits in [`Shape::params`]: after the blocks' matrices, in registration order.
fn lm_head_index(s: &Shape) -> Option<usize> {
    s.params()
        .iter()
        .rposition(|p| p.owner == Owner::Muon)
        .map(|i| i + 1)
}

fn block_param_indices(s: &Shape) -> Vec<BlockParams> {
    // registration order: wte, then per layer c_q, c_k, c_v, c_proj, [ve_gate], c_fc, c_proj,
    // then lm_head, five scalars, the value embeddings in layer order
    let mut next = 1;
    let mut ve_next = 1 + s.params().len() - s.n_ve() as usize;
    let mut out = Vec::with_capacity(s.l as usize);
    for i in 0..s.l as usize {
        let mut qkv = vec![next, next + 1, next + 2];
        let proj = next + 3;
        next += 4;
        if s.ve[i] {
            qkv.push(next);
            next += 1;
        }
        let mlp = vec![next, next + 1];
        next += 2;
        let value_embed = s.ve[i].then(|| {
            ve_next += 1;
            ve_next - 2
        });
        out.push(BlockParams {
            qkv,
            proj,
            mlp,
            value_embed,
        });
    }
    out
}

/// The allocation sequence of one base_train.py run on one `gpu` (its cuBLAS workspace and, for
/// a first run's autotuning, its L2): model build, the step-0 evaluation (when `--eval-every` > 0), iteration 0,
/// [`STEADY_ITERATIONS`] more, and the evaluation at the last step. Under `torchrun`, rank 0's
/// with one step's collective tensors held (see [`generate_rank`]).
pub fn generate(cfg: &NanochatConfig, gpu: &Gpu) -> Sequence {
    generate_rank(
        cfg,
        gpu,
        Ranks {
            rank: 0,
            held_stashes: 1,
        },
    )
}

/// [`generate`] for one rank of a `torchrun` run, with `ranks.held_stashes` steps' collective
/// tensors held while a step runs: iteration 0, then enough steady iterations for that many
/// stashes to build up (step 0's is released before iteration 1), and the evaluation at the last
/// step with them still held.
pub fn generate_rank(cfg: &NanochatConfig, gpu: &Gpu, ranks: Ranks) -> Sequence {
    generate_with(cfg, gpu, ranks, cfg.script == Script::Base)
}

/// [`generate_rank`] for a run whose Inductor cache already holds these shapes' autotuning
/// choices (a second run of them): iteration 0 without the autotuning.
pub fn generate_on_warm_cache(cfg: &NanochatConfig, gpu: &Gpu, ranks: Ranks) -> Sequence {
    generate_with(cfg, gpu, ranks, false)
}

fn generate_with(cfg: &NanochatConfig, gpu: &Gpu, ranks: Ranks, cold: bool) -> Sequence {
    let s = Shape::of(cfg);
    let mut g = Gen::new(cfg, &s, gpu, ranks, cold);
    g.build();
    if cfg.script == Script::Sft && cfg.load_optimizer {
        g.load_optimizer_state();
    }
    let evaluates = cfg.eval_every > 0;
    if evaluates {
        g.evaluate(Phase::Eval);
    }
    g.iteration(Phase::TrainFirstIter);
    // one iteration with no stash (step 0's is gone), then one more for each stash held, as far
    // as base_train.py runs: a run of N steps builds at most N − 2 stashes
    let steady = STEADY_ITERATIONS.max(g.held as u32 + 1);
    let steady = if cfg.script == Script::Base {
        let after_first = crate::programs::nanochat::speed::base_iterations(cfg).saturating_sub(1);
        steady.min(u32::try_from(after_first).unwrap_or(u32::MAX).max(1))
    } else {
        steady
    };
    for _ in 0..steady {
        g.iteration(Phase::TrainSteady);
    }
    // base_train.py evaluates at the last step when --eval-every > 0; chat_sft.py always does
    if evaluates || cfg.script == Script::Sft {
        g.evaluate(Phase::EvalAfterStep);
    }
    // the last step: CORE after the evaluation (also every --core-metric-every steps, on the same
    // memory: after an optimizer step, without gradients)
    if cfg.models_core() {
        g.core(u128::from(cfg.core_max_tokens));
    }
    g.out.finish()
}

#[cfg(test)]
mod tests {
    use super::{looped_norm_timed, LOOPED_NORM_REGISTERS};
    use crate::gpu;

    /// Which per-layer norms a first run times, by card, width and rows: on the H200 all three at
    /// 2,048 rows (nc_coldcalnr_09's autotune log) and only the 80-register one at 1,024
    /// (nc_coldcalnr_15, exact with it), none up to C = 1024 (persistent); an RTX 4090's SM holds 1,536
    /// threads, so 40 registers do not limit its occupancy; a T4 (SM 7.5) never rescales.
    #[test]
    fn which_norms_a_first_run_times() {
        let r = LOOPED_NORM_REGISTERS;
        let on = |card: &str, c: u128, rows: u128| {
            let g = gpu::find(card).unwrap();
            [r.entry, r.closing_ve, r.closing_plain].map(|n| looped_norm_timed(g, c, rows, n))
        };
        assert_eq!(on("h200", 1280, 2048), [true; 3]);
        assert_eq!(on("h200", 1280, 1024), [false, false, true]);
        assert_eq!(on("h200", 1024, 8192), [false; 3]);
        assert_eq!(on("rtx4090", 1280, 2048), [false, true, true]);
        assert_eq!(on("t4", 1280, 8192), [false; 3]);
    }
}
