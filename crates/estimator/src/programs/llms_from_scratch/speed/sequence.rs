//! `ch05/10_llm-training-speed/01_opt_single_gpu.py` (28c65cdf) as the caching allocator sees it,
//! read from the script and from two allocator traces of it on an H200 with PyTorch 2.11
//! (tools/llms-from-scratch-probe/raw/speed_call1/traces; the probe's README says what each
//! buffer is):
//!
//! * `model.to(device).to(torch.bfloat16)`: every parameter moved in fp32, then converted one
//!   by one (the bf16 copy made before the fp32 one goes); from then on everything is bf16;
//! * the model is compiled whole (`torch.compile`): its forward graph keeps, per block, the two
//!   LayerNorms' statistics (fp32) and outputs, q·k·v, SDPA's output and softmax statistics
//!   (cuDNN, flash and memory-efficient keep the same bytes; each call's RNG seed and offset),
//!   the attention projection's and the MLP's outputs, the MLP's hidden layer before and after
//!   its GELU, and each dropout's bool mask — the residual stream is recomputed in the backward;
//! * the loss is eager: `cross_entropy` on the compiled graph's bf16 logits keeps its bf16
//!   log-softmax; its backward holds nll's gradient, the log-softmax's gradient and that output
//!   at once, and the log-softmax's gradient is the compiled backward's input until it ends;
//! * the compiled backward frees each block's saved tensors as it passes them, and sums the
//!   token embedding's gradient in an fp32 (V, E) buffer before casting it;
//! * fused AdamW keeps `exp_avg` and `exp_avg_sq` in the parameters' dtype (bf16) and a device
//!   `step` per parameter, created at its first `step()`;
//! * `evaluate_model` (eval mode, `no_grad`, a recompiled graph) after steps 0, 10, 20, …: the
//!   logits and the eager log-softmax of one batch beside the resident state;
//! * `generate_and_print_sample` after each epoch: one row, greedy, no cache, a graph compiled
//!   for dynamic shapes; on a cold Inductor cache its first call is autotuned with the card's
//!   L2-sized flush buffer.
//!
//! `02_opt_multi_gpu_ddp.py` under torchrun runs the same on every rank, with DDP's gradient
//! buckets beside it (one flat bf16 buffer of every parameter's gradient from `DDP(model)` on,
//! rebuilt at the second step's forward as `engine::ddp::buckets` sizes them, the old one freed
//! first), each rank's `DistributedSampler` share of the batches, four scalars all-reduced for
//! the tokens-per-second line at each evaluation, and the sample on rank 0 only.

use super::super::config::Ch05Config;
use crate::engine::buffer_reuse::Kind;
use crate::engine::events::{Builder, Phase, Sequence, Stage, TensorId};
use crate::gpu::Gpu;
use crate::terms::Term;

type T = TensorId;

/// Training steps replayed: the first (no AdamW state) and two more.
const STEPS_REPLAYED: u64 = 3;

/// bf16.
const BF16: u128 = 2;

/// The model's sizes and the batch.
#[derive(Clone, Copy)]
struct Dims {
    /// Tokens in a batch (B·T), the context, the width, heads, vocabulary, layers.
    n: u128,
    b: u128,
    t: u128,
    e: u128,
    h: u128,
    v: u128,
    layers: u32,
    dropout: bool,
    qkv_bias: bool,
}

/// Where block i's parameters are in `model.parameters()`: the fused qkv weight (its bias
/// after it with `qkv_bias`), the projection and its bias, the MLP's two layers with biases, the
/// first LayerNorm's scale (its shift after it), the second's.
#[derive(Clone, Copy)]
struct BlockParams {
    wqkv: usize,
    wo: usize,
    bo: usize,
    w1: usize,
    b1: usize,
    w2: usize,
    b2: usize,
    n1: usize,
    n2: usize,
}

/// What one block's forward keeps for its backward.
struct Saved {
    ln1: [T; 3],
    qkv: T,
    attn: [T; 4],
    proj: T,
    mask1: T,
    ln2: [T; 3],
    fc: T,
    gelu: T,
    mlp: T,
    mask2: T,
}

struct Gen {
    out: Builder,
    d: Dims,
    workspace: u128,
    fwd_workspace: bool,
    bwd_workspace: bool,
    /// The card's L2-sized flush buffer on a cold Inductor cache (0 on a warm one), and whether
    /// the graphs being run are at their first call, where Triton benchmarks the kernels that
    /// have more than one config.
    flush: u128,
    tuning: bool,
    /// Under DDP (02_opt_multi_gpu_ddp.py): Dynamo's DDPOptimizer splits the compiled graph at
    /// the buckets' boundaries, and out_head, whose weight alone passes the 1 MiB first bucket,
    /// is a graph of its own.
    ddp: bool,
    /// Every parameter's bytes in `model.parameters()` order, and its gradient and AdamW state.
    params: Vec<u128>,
    grads: Vec<T>,
    adam: Vec<[T; 3]>,
}

impl Gen {
    fn a(&mut self, bytes: u128, term: Term) -> T {
        self.out.alloc(bytes, term)
    }

    fn f(&mut self, t: T) {
        self.out.free(t);
    }

    fn fs(&mut self, ts: &[T]) {
        for &t in ts {
            self.out.free(t);
        }
    }

    /// A kernel's first call on a cold cache: Triton benchmarks its configs, each behind the L2
    /// flush buffer, allocated and freed (lfs_spd_l2_c256_b4's trace: a pair of them at each of
    /// the eleven kernels below; at the embeddings' casts, the backward's last, it needed a segment of
    /// its own, which stayed reserved).
    fn autotune(&mut self) {
        if self.tuning && self.flush > 0 {
            for _ in 0..2 {
                let f = self
                    .out
                    .alloc_as(Kind::External, self.flush, Term::InductorAutotune);
                self.f(f);
            }
        }
    }

    /// A forward matmul's output, then (the first time) the main thread's cuBLAS workspace.
    fn matmul(&mut self, bytes: u128, term: Term) -> T {
        let t = self.a(bytes, term);
        if !std::mem::replace(&mut self.fwd_workspace, true) {
            self.a(self.workspace, Term::CublasWorkspace);
        }
        t
    }

    /// A backward matmul's output, then (the first time) the autograd thread's workspace: cuBLAS's
    /// own request, not one of the compiled backward's buffers.
    fn bwd_matmul(&mut self, bytes: u128, term: Term) -> T {
        let t = self.a(bytes, term);
        if !std::mem::replace(&mut self.bwd_workspace, true) {
            self.out
                .alloc_as(Kind::External, self.workspace, Term::CublasWorkspace);
        }
        t
    }

    /// Block `i`'s parameters' indices (after tok_emb and pos_emb, each block's in
    /// [`Gen::param_elems`]' order).
    fn block_params(&self, i: usize) -> BlockParams {
        let bias = usize::from(self.d.qkv_bias);
        let wqkv = 2 + i * (11 + bias);
        let wo = wqkv + 1 + bias;
        BlockParams {
            wqkv,
            wo,
            bo: wo + 1,
            w1: wo + 2,
            b1: wo + 3,
            w2: wo + 4,
            b2: wo + 5,
            n1: wo + 6,
            n2: wo + 8,
        }
    }

    /// The parameters of `GPTModel(cfg)` in registration order, in elements: `tok_emb`,
    /// `pos_emb`, per block the fused qkv Linear (bias with `qkv_bias`), the projection, the
    /// MLP's two Linears, `norm1`, `norm2`; `final_norm`; the untied `out_head`.
    fn param_elems(d: &Dims) -> Vec<u128> {
        let (e, v, t) = (d.e, d.v, d.t);
        let mut p = vec![v * e, t * e];
        for _ in 0..d.layers {
            p.push(3 * e * e);
            if d.qkv_bias {
                p.push(3 * e);
            }
            p.extend([e * e, e, 4 * e * e, 4 * e, 4 * e * e, e, e, e, e, e]);
        }
        p.extend([e, e, v * e]);
        p
    }

    /// `model.to(device).to(torch.bfloat16)`.
    fn model_load(&mut self) {
        self.out.mark(None, Stage::ModelLoad, 0);
        let elems = Self::param_elems(&self.d);
        let fp32: Vec<T> = elems.iter().map(|&n| self.a(4 * n, Term::Params)).collect();
        for (&n, &old) in elems.iter().zip(&fp32) {
            self.a(BF16 * n, Term::Params);
            self.f(old);
        }
        self.params = elems.iter().map(|&n| BF16 * n).collect();
        self.grads = vec![None; elems.len()];
    }

    /// A LayerNorm's fp32 mean and rstd, then its bf16 output.
    fn layer_norm(&mut self, term: Term) -> [T; 3] {
        let n = self.d.n;
        [
            self.a(4 * n, term),
            self.a(4 * n, term),
            self.a(BF16 * n * self.d.e, term),
        ]
    }

    fn mask(&mut self, term: Term) -> T {
        if self.d.dropout {
            self.a(self.d.n * self.d.e, term)
        } else {
            None
        }
    }

    /// The compiled training forward: what it keeps, and (besides) pos_emb, the embedding's
    /// output and mask, the position ids and the final LayerNorm. A first call times the
    /// embeddings' kernel, the first LayerNorm's and the first block's GELU; under DDPOptimizer's
    /// pieces each piece's GELU at its first block, and not that LayerNorm (the traced cold run's
    /// forward: a pair of flush buffers at the start and one after each piece's first GELU
    /// output, each but the first in a segment of its own).
    fn forward(&mut self) -> (Vec<T>, Vec<Saved>, [T; 3]) {
        let Dims { n, b, t, e, h, .. } = self.d;
        let pieces = self.split();
        // pos_emb's output: fused into the embeddings' sum where they are a piece of their own
        let pos = if pieces.is_some() {
            None
        } else {
            self.a(BF16 * t * e, Term::ForwardLocals)
        };
        self.autotune();
        // one Philox seed per dropout call, freed before the graph returns
        let seeds = if self.d.dropout {
            self.a(8 * (2 * u128::from(self.d.layers) + 1), Term::Scalars)
        } else {
            None
        };
        let emb_mask = self.mask(Term::EmbeddingDropoutMask);
        let x0 = self.a(BF16 * n * e, Term::BlockActivations);
        let mut ln = self.layer_norm(Term::BlockActivations);
        let arange = self.a(8 * t, Term::ForwardLocals);
        if pieces.is_none() {
            self.autotune();
        }
        let mut blocks = Vec::new();
        for layer in 0..self.d.layers {
            let act = Term::BlockActivations;
            let qkv = self.matmul(3 * BF16 * n * e, act);
            let attn = [
                self.a(8, act),
                self.a(8, act),
                self.a(BF16 * n * e, act),
                self.a(4 * b * h * t, act),
            ];
            let tmp = self.a(256, Term::BlockTransient);
            self.f(tmp);
            let proj = self.a(BF16 * n * e, act);
            let mask1 = self.mask(act);
            let ln2 = self.layer_norm(act);
            let fc = self.a(4 * BF16 * n * e, act);
            let gelu = self.a(4 * BF16 * n * e, act);
            let first = match &pieces {
                Some(p) => p.iter().any(|&(lo, _)| lo == layer as usize),
                None => layer == 0,
            };
            if first {
                self.autotune();
            }
            let mlp = self.a(BF16 * n * e, act);
            let mask2 = self.mask(act);
            let ln1 = std::mem::replace(&mut ln, self.layer_norm(act));
            blocks.push(Saved {
                ln1,
                qkv,
                attn,
                proj,
                mask1,
                ln2,
                fc,
                gelu,
                mlp,
                mask2,
            });
        }
        self.f(seeds);
        (vec![pos, emb_mask, x0, arange], blocks, ln)
    }

    /// DDP's buckets as the Reducer first builds them: one flat buffer.
    fn ddp_wrap(&mut self) -> Vec<T> {
        let total = self.params.iter().sum();
        vec![self.a(total, Term::DdpBuckets)]
    }

    /// The Reducer's rebuild at the second step's forward: the old buckets freed, then the new
    /// ones allocated.
    fn ddp_rebuild(&mut self, old: &mut Vec<T>) {
        self.out.free_all(old);
        let order = self.ready_order();
        let sizes = crate::engine::ddp::buckets(order.iter().map(|&k| self.params[k]));
        *old = sizes
            .into_iter()
            .map(|b| self.a(b, Term::DdpBuckets))
            .collect();
    }

    /// One training step: the batch, the forward, the eager loss and its backward, the compiled
    /// backward, the optimizer step.
    fn step(&mut self, phase: Phase, buckets: Option<&mut Vec<T>>) {
        let Dims { n, v, .. } = self.d;
        self.out.mark(Some(phase), Stage::ZeroGrad, 0);
        let grads = std::mem::take(&mut self.grads);
        self.fs(&grads);
        self.grads = vec![None; self.params.len()];
        self.out.mark(Some(phase), Stage::Forward, 1);
        let ids = self.a(8 * n, Term::TokenIds);
        let targets = self.a(8 * n, Term::TokenIds);
        if let Some(b) = buckets {
            self.ddp_rebuild(b);
        }
        let (outer, blocks, lnf) = self.forward();
        let logits = self.matmul(BF16 * n * v, Term::Logits);
        self.out.mark(Some(phase), Stage::Loss, 1);
        let lsm = self.a(BF16 * n * v, Term::LogSoftmax);
        let loss = [self.a(2, Term::Scalars), self.a(2, Term::Scalars)];
        self.f(logits);
        self.f(loss[1]);
        self.out.mark(Some(phase), Stage::Backward, 1);
        let seed = self.a(2, Term::Scalars);
        let nll = self.a(BF16 * n * v, Term::LossGrads);
        self.f(targets);
        self.f(loss[0]);
        let tangent = self.a(BF16 * n * v, Term::LossGrads);
        self.fs(&[nll, lsm]);
        match self.split() {
            Some(pieces) => self.split_backward(outer, blocks, lnf, ids, tangent, &pieces),
            None => self.backward(outer, blocks, lnf, ids, tangent),
        }
        self.fs(&[tangent, seed]);
        self.out.mark(Some(phase), Stage::OptimizerStep, 0);
        self.optimizer_step();
    }

    /// SDPA's backward, an extern op in either backward: dq, dk and dv, the graph's buffers once
    /// they exist, and the op's own fp32 accumulator (cuDNN's: 4·N·E + 4·B·H·T + 256 bytes;
    /// flash's and the memory-efficient kernel's differ by bytes), made and freed inside it.
    fn sdpa_backward(&mut self) -> [T; 3] {
        let Dims { n, e, b, h, t, .. } = self.d;
        let grads = std::array::from_fn(|_| {
            self.out
                .alloc_as(Kind::OpOutput, BF16 * n * e, Term::BlockTransient)
        });
        let ws = self.out.alloc_as(
            Kind::External,
            4 * n * e + 4 * b * h * t + 256,
            Term::BlockTransient,
        );
        self.f(ws);
        grads
    }

    /// A parameter's gradient, by index.
    fn grad(&mut self, param: usize) {
        let bytes = self.params[param];
        self.grads[param] = self.a(bytes, Term::Grads);
    }

    /// The compiled backward, last block first, in the order of its generated wrapper
    /// (data/inductor/oc_spd_*.tgz) and traced graph: each block's weight gradients as its matmuls
    /// produce them, its saved tensors freed as they are passed, the earlier block's MLP output
    /// and mask once its residual stream is recomputed. Three (N, E) gradients are in flight
    /// between blocks, SDPA's backward makes dq, dk, dv beside its accumulator
    /// ([`Gen::sdpa_backward`]), and the LayerNorms' weight gradients are reduced through fp32 partial sums (8 per column).
    /// Each block's buffers are written as their own and freed at their last use; the wrapper's
    /// reuse (`engine::buffer_reuse`) then hands a dead one's storage to the next of its size:
    /// the MLP's hidden gradient (N, 4E) to the next block's, and where N·3E = 4E² (N = 1,024 at
    /// E = 768) a block's dqkv to the next block's first weight gradient.
    ///
    /// Under DDP out_head's backward is a graph of its own (its weight's gradient and its input's),
    /// after which the autograd engine drops the logits' gradient (`tangent`) rather than at the
    /// end: measured where the rest of the backward is the peak (`spd_ddp1_l2_c256_b4`: +6.3 %
    /// allocated with the gradient held to the end, −0.01 % without).
    fn backward(&mut self, outer: Vec<T>, blocks: Vec<Saved>, lnf: [T; 3], ids: T, tangent: T) {
        self.out.begin_graph();
        let Dims { n, e, .. } = self.d;
        let np = self.params.len();
        let head = np - 1;
        // out_head's weight gradient, then the final LayerNorm's
        let w = self.params[head];
        self.grads[head] = self.bwd_matmul(w, Term::Grads);
        self.f(lnf[2]);
        let first = self.a(BF16 * n * e, Term::BlockTransient);
        let mut dx = if self.out_head_alone() {
            // out_head's input gradient is the next graph's input, beside its first two buffers
            self.out.end_graph();
            self.f(tangent);
            self.out.begin_graph();
            [
                self.a(BF16 * n * e, Term::BlockTransient),
                self.a(BF16 * n * e, Term::BlockTransient),
                first,
            ]
        } else {
            [
                first,
                self.a(BF16 * n * e, Term::BlockTransient),
                self.a(BF16 * n * e, Term::BlockTransient),
            ]
        };
        let partials = [
            self.a(4 * 8 * e, Term::BlockTransient),
            self.a(4 * 8 * e, Term::BlockTransient),
        ];
        let last = blocks.len();
        if let Some(s) = blocks.last() {
            self.fs(&[s.mask2, s.mlp]);
        }
        self.fs(&lnf[..2]);
        self.grad(np - 3);
        self.grad(np - 2);
        for i in (0..last).rev() {
            let s = &blocks[i];
            let p = self.block_params(i);
            let dfc = self.a(4 * BF16 * n * e, Term::BlockTransient);
            let wb = self.params[p.w2];
            self.grads[p.w2] = self.bwd_matmul(wb, Term::Grads);
            // GELU's backward, in place in the hidden gradient
            if i + 1 == last {
                self.autotune();
            }
            self.f(s.gelu);
            self.grad(p.b2);
            self.f(s.fc);
            self.grad(p.w1);
            self.f(s.ln2[2]);
            let part = self.a(4 * 8 * 4 * e, Term::BlockTransient);
            self.f(dfc);
            self.grad(p.b1);
            self.f(part);
            self.fs(&[s.mask1, s.proj, s.ln2[0], s.ln2[1]]);
            self.grad(p.n2);
            self.grad(p.n2 + 1);
            self.grad(p.wo);
            self.f(dx[0]);
            self.grad(p.bo);
            let dqkv3 = self.sdpa_backward();
            self.f(dx[2]);
            self.fs(&s.attn);
            self.f(s.qkv);
            let dqkv = self.a(3 * BF16 * n * e, Term::BlockTransient);
            if i + 1 == last {
                self.autotune();
            }
            self.f(dqkv3[0]);
            self.grad(p.wqkv);
            if self.d.qkv_bias {
                self.grad(p.wqkv + 1);
            }
            self.f(s.ln1[2]);
            self.f(dqkv);
            // the earlier block's tail, from which the residual stream is recomputed
            if i > 0 {
                self.fs(&[blocks[i - 1].mask2, blocks[i - 1].mlp]);
            }
            self.fs(&[s.ln1[0], s.ln1[1]]);
            self.grad(p.n1);
            self.grad(p.n1 + 1);
            // dq's buffer went to dqkv; dk's and dv's carry on as the block's input gradients
            dx = [dqkv3[1], dqkv3[2], dx[1]];
        }
        // the embeddings: tok_emb's gradient scattered into an fp32 (V, E) buffer and the
        // residual's in fp32, then pos_emb's summed in fp32; each cast to bf16
        let (v, tt) = (self.d.v, self.d.t);
        let emb32 = self.a(4 * v * e, Term::EmbeddingGradBuffer);
        self.autotune();
        let dx32 = self.a(4 * n * e, Term::BlockTransient);
        self.fs(&outer[..3]);
        self.f(ids);
        self.fs(&dx);
        self.f(dx32);
        self.fs(&partials);
        let pos32 = self.a(4 * tt * e, Term::BlockTransient);
        // its zero fill and its sum
        self.autotune();
        self.autotune();
        self.f(outer[3]);
        self.grad(1);
        self.autotune();
        self.f(pos32);
        self.grad(0);
        self.autotune();
        self.f(emb32);
        self.out.end_graph();
    }

    /// The pieces the compiled graph runs in: DDPOptimizer's under DDP where its cuts fall
    /// between blocks; `None` for one compiled graph (or a stand-in for cuts inside blocks).
    fn split(&self) -> Option<Vec<(usize, usize)>> {
        if self.ddp {
            self.ddp_pieces()
        } else {
            None
        }
    }

    /// Whether out_head is a graph of its own under DDP: its weight alone fills DDPOptimizer's
    /// 1 MiB first bucket (any GPT-2 vocabulary does).
    fn out_head_alone(&self) -> bool {
        self.ddp && BF16 * self.d.v * self.d.e >= crate::engine::ddp::FIRST_BUCKET_BYTES
    }

    /// Dynamo's DDPOptimizer's pieces of the blocks, each `(lowest, highest)` block, top first,
    /// where every cut falls between a block's qkv projection and its first LayerNorm (GPT-2
    /// 124M's pairs); `None` where a cut falls inside a block (gpt2-medium's), which the whole
    /// graph's backward stands in for. DDPOptimizer (torch/_dynamo/backends/distributed.py)
    /// walks the graph's nodes backwards adding each one's parameter bytes to a bucket, and starts
    /// the next before the next node once it holds 25 MiB (`bucket_cap_mb`), 1 MiB for the
    /// first: out_head alone, then the final LayerNorm and the blocks from the last.
    fn ddp_pieces(&self) -> Option<Vec<(usize, usize)>> {
        let mut tops = self.ddp_cuts()?;
        // blocks below the last cut share the embeddings' bucket (one graph, here a piece and
        // the embeddings' graph: `embeddings_join`)
        if tops.last() != Some(&0) {
            tops.push(0);
        }
        // each piece runs from the block above a cut's LayerNorm up to the next cut
        Some(
            tops.windows(2)
                .map(|w| (w[1], w[0] - 1))
                .filter(|&(lo, hi)| lo <= hi)
                .collect(),
        )
    }

    /// Whether the lowest blocks share the embeddings' bucket (no cut at the first LayerNorm).
    fn embeddings_join(&self) -> bool {
        self.ddp_cuts().is_some_and(|tops| tops.last() != Some(&0))
    }

    /// The blocks whose first LayerNorm starts one of DDPOptimizer's buckets, the number of
    /// layers first (the final LayerNorm's), top down; `None` where a cut falls elsewhere.
    fn ddp_cuts(&self) -> Option<Vec<usize>> {
        // DDPOptimizer takes its caps from the DDP module's: the Reducer's own
        use crate::engine::ddp::{BUCKET_CAP_BYTES as CAP, FIRST_BUCKET_BYTES as FIRST_CAP};
        let Dims { e, t, v, .. } = self.d;
        let bias = if self.d.qkv_bias { 3 * e } else { 0 };
        // (bytes, the block whose first LayerNorm it is) in reverse order of the forward
        let mut nodes: Vec<(u128, Option<usize>)> =
            vec![(BF16 * v * e, None), (BF16 * 2 * e, None)];
        for i in (0..self.d.layers as usize).rev() {
            for bytes in [
                4 * e * e + e,
                4 * e * e + 4 * e,
                2 * e,
                e * e + e,
                3 * e * e + bias,
            ] {
                nodes.push((BF16 * bytes, None));
            }
            nodes.push((BF16 * 2 * e, Some(i)));
        }
        nodes.extend([(BF16 * t * e, None), (BF16 * v * e, None)]);
        if !self.out_head_alone() {
            return None;
        }
        let (mut bucket, mut tops) = (0u128, vec![self.d.layers as usize]);
        for (k, &(bytes, ln1_of)) in nodes.iter().enumerate() {
            if bucket >= if k == 1 { FIRST_CAP } else { CAP } {
                bucket = 0;
                match (k, ln1_of) {
                    (1, _) => {}
                    (_, Some(i)) => tops.push(i),
                    _ => return None,
                }
            }
            bucket += bytes;
        }
        Some(tops)
    }

    /// The parameters' indices in the order their gradients become ready in a backward, which
    /// the Reducer rebuilds its buckets in: DDPOptimizer's pieces top first (out_head's alone),
    /// each piece's AccumulateGrads in the order the autograd engine's ready queue runs them
    /// (`engine::ddp::ready_order`) having been pushed in the piece's inputs' order — per block its
    /// first LayerNorm (where the piece computes it), qkv, the projection, the residual coming
    /// in (the lower piece's node, run after them), the second LayerNorm, the MLP; the top
    /// LayerNorm last. The embeddings' piece: tok_emb, pos_emb, the first LayerNorm, or with
    /// the lowest blocks where they share its bucket. The parameters' reverse order where a cut
    /// falls inside a block (the eager backward's order, which the buckets' sizes then stand for).
    fn ready_order(&self) -> Vec<usize> {
        use crate::engine::ddp::{ready_order, Ready};
        let np = self.params.len();
        let Some(pieces) = self.split() else {
            return (0..np).rev().collect();
        };
        let lowest = pieces.last().map_or(0, |p| p.0);
        // the embeddings share the lowest piece's graph where no cut falls at LN1(0)
        let joined = self.embeddings_join();
        let grad = |task: usize| Ready {
            sequence_nr: u64::MAX,
            task: Some(task),
        };
        let mut order = vec![np - 1];
        for &(lo, hi) in &pieces {
            let mut pushed = Vec::new();
            if lo == lowest && joined {
                pushed.extend([grad(0), grad(1)]);
            }
            for i in lo..=hi {
                let p = self.block_params(i);
                if i > lo || (lo == lowest && joined) {
                    pushed.extend([grad(p.n1), grad(p.n1 + 1)]);
                }
                pushed.push(grad(p.wqkv));
                if self.d.qkv_bias {
                    pushed.push(grad(p.wqkv + 1));
                }
                pushed.extend([grad(p.wo), grad(p.bo)]);
                if i == lo && !(lo == lowest && joined) {
                    // the residual comes from the lower piece, whose node runs after these
                    pushed.push(Ready {
                        sequence_nr: 0,
                        task: None,
                    });
                }
                pushed.extend([p.n2, p.n2 + 1, p.w1, p.b1, p.w2, p.b2].map(grad));
            }
            let top = if hi + 1 == self.d.layers as usize {
                np - 3
            } else {
                self.block_params(hi + 1).n1
            };
            pushed.extend([grad(top), grad(top + 1)]);
            order.extend(ready_order(&pushed).into_iter().flatten());
        }
        if !joined {
            let n1 = self.block_params(0).n1;
            let pushed = [grad(0), grad(1), grad(n1), grad(n1 + 1)];
            order.extend(ready_order(&pushed).into_iter().flatten());
        }
        order
    }

    /// A buffer of a piece's backward, as its wrapper allocates it (no planning: the reuse is
    /// written where the wrapper writes it).
    fn ext(&mut self, bytes: u128) -> T {
        self.out
            .alloc_as(Kind::External, bytes, Term::BlockTransient)
    }

    /// A parameter's gradient in a piece's backward.
    fn ext_grad(&mut self, k: usize) {
        let bytes = self.params[k];
        self.grads[k] = self.out.alloc_as(Kind::External, bytes, Term::Grads);
    }

    /// The compiled backward as DDPOptimizer's pieces run it, each a graph of its own, written
    /// from the wrapper Inductor generated for them (spd_ddp1_c1024_b8_trace's code: out_head's
    /// graph, one template for every pair of blocks, the embeddings' with the first LayerNorm),
    /// its buffers' reuse as the wrapper writes it (`buf27 = buf6`, `buf49 = buf35  # reuse`)
    /// rather than planned. out_head's graph makes its weight's and its input's gradients, and
    /// the logits' gradient goes when it returns. Each piece: its top LayerNorm's backward fused
    /// with the top block's MLP dropout (the residual's gradient, written in place through the
    /// piece; an fp32 workspace of 2 × 512 × E for the LayerNorm's weight gradients, Inductor's
    /// `mix order reduction`), then per block the MLP, the second LayerNorm (the workspace again,
    /// held to the piece's last LayerNorm), attention and qkv; a lower block takes the upper
    /// one's hidden and qkv gradients' storage, SDPA's dk for its MLP's gradient and dv's for
    /// its input's. Without dropout (spd_ddp1_c1024_b8_drop0_trace's code) there is no MLP
    /// gradient through a mask: the hidden gradient is made first and the LayerNorm's input
    /// gradient below takes the block input gradient's storage. A piece's incoming gradients
    /// live until it returns. The embeddings' graph sums tok_emb's gradient in fp32 (V, E) and
    /// pos_emb's in the workspace's storage. Requests under 1 MiB (biases, the LayerNorms' sums)
    /// are left out.
    fn split_backward(
        &mut self,
        outer: Vec<T>,
        blocks: Vec<Saved>,
        lnf: [T; 3],
        ids: T,
        tangent: T,
        pieces: &[(usize, usize)],
    ) {
        let Dims { n, e, t, v, .. } = self.d;
        let np = self.params.len();
        let ne = BF16 * n * e;
        let workspace = 4 * 2 * 512 * e;
        let last = blocks.len();
        // out_head's graph
        self.grads[np - 1] = self.bwd_matmul(self.params[np - 1], Term::Grads);
        self.f(lnf[2]);
        let mut dln = self.ext(ne);
        self.f(tangent);
        let mut dres: T = None;
        for &(lo, hi) in pieces {
            // the top LayerNorm (the final one, or block hi + 1's first) and its weights
            let (stats, mut norm) = if hi + 1 == last {
                ([lnf[0], lnf[1]], np - 3)
            } else {
                (
                    [blocks[hi + 1].ln1[0], blocks[hi + 1].ln1[1]],
                    self.block_params(hi + 1).n1,
                )
            };
            let drop = self.d.dropout;
            let res = self.ext(ne);
            // with dropout the top kernel also writes the MLP output's gradient through its mask
            let mut dmlp = if drop { self.ext(ne) } else { None };
            let ws0 = self.ext(workspace);
            self.f(ws0);
            self.fs(&[blocks[hi].mlp, stats[0], blocks[hi].mask2, stats[1]]);
            // the piece's incoming gradients live until its backward returns
            let tangents = [dln, dres];
            let (mut ws, mut dh, mut dqkv): (T, T, T) = (None, None, None);
            for i in (lo..=hi).rev() {
                let s = &blocks[i];
                let p = self.block_params(i);
                let top = i == hi;
                // the hidden gradient (N, 4E): a buffer of the top block's, the lower blocks'
                // in its storage; without dropout made before the weight's gradient
                if top && !drop {
                    dh = self.ext(4 * ne);
                }
                if top {
                    let w = self.params[p.w2];
                    self.grads[p.w2] = self.bwd_matmul(w, Term::Grads);
                } else {
                    self.ext_grad(p.w2);
                }
                self.f(s.gelu);
                self.ext_grad(norm);
                self.ext_grad(norm + 1);
                self.ext_grad(p.b2);
                if top && drop {
                    dh = self.ext(4 * ne);
                    self.f(dmlp);
                }
                // GELU's backward, in place in the hidden gradient
                if i + 1 == last {
                    self.autotune();
                }
                self.f(s.fc);
                // the second LayerNorm's input gradient: a buffer of its own in the top block;
                // below, the MLP gradient's storage (dropout) or the block input gradient's
                let dln2 = if drop {
                    self.ext_grad(p.w1);
                    self.f(s.ln2[2]);
                    if top {
                        self.ext(ne)
                    } else {
                        dmlp
                    }
                } else {
                    let d = if top {
                        self.ext(ne)
                    } else {
                        std::mem::take(&mut dln)
                    };
                    self.ext_grad(p.w1);
                    self.f(s.ln2[2]);
                    d
                };
                if !top {
                    self.f(dh);
                }
                // the LayerNorm's backward into the residual's gradient, in place; with dropout
                // it writes the projection's gradient through the mask too: a buffer of the
                // top block's, the block input gradient's storage below
                let d28 = match (drop, top) {
                    (false, _) => None,
                    (true, true) => self.ext(ne),
                    (true, false) => std::mem::take(&mut dln),
                };
                if ws.is_none() {
                    ws = self.ext(workspace);
                }
                if i == lo {
                    self.f(ws);
                }
                self.fs(&[s.proj, s.ln2[0], s.mask1, s.ln2[1]]);
                self.ext_grad(p.b1);
                self.ext_grad(p.n2);
                self.ext_grad(p.n2 + 1);
                self.ext_grad(p.bo);
                self.ext_grad(p.wo);
                // attention's output gradient takes the LayerNorm input gradient's storage
                let datt = dln2;
                self.f(d28);
                let [dq, dk, dv] = self.sdpa_backward();
                self.f(datt);
                self.fs(&s.attn);
                self.f(s.qkv);
                if top {
                    dqkv = self.ext(3 * ne);
                }
                if i + 1 == last {
                    self.autotune();
                }
                self.f(dq);
                // dk carries the lower block's MLP gradient under dropout; otherwise it dies
                let dk = if drop {
                    dk
                } else {
                    self.f(dk);
                    None
                };
                self.ext_grad(p.wqkv);
                if self.d.qkv_bias {
                    self.ext_grad(p.wqkv + 1);
                }
                self.f(s.ln1[2]);
                // the input's gradient in dv's storage
                dln = dv;
                if i == lo {
                    self.fs(&[dk, dqkv]);
                    if top {
                        self.f(dh);
                    }
                } else {
                    // block i's first LayerNorm, fused with block i - 1's MLP dropout, into dk's
                    dmlp = dk;
                    self.fs(&[blocks[i - 1].mlp, s.ln1[0], blocks[i - 1].mask2, s.ln1[1]]);
                    norm = p.n1;
                }
            }
            self.fs(&tangents);
            dres = res;
        }
        // the embeddings' graph, with the first LayerNorm's backward
        let emb32 = self.a(4 * v * e, Term::EmbeddingGradBuffer);
        self.autotune();
        let d8 = self.ext(ne);
        let ws = self.ext(workspace);
        self.fs(&[blocks[0].ln1[0], outer[1], outer[2], ids, blocks[0].ln1[1]]);
        let n1 = self.block_params(0).n1;
        self.ext_grad(n1);
        self.ext_grad(n1 + 1);
        // pos_emb's fp32 sum: the workspace's storage where the sizes agree
        let pos32 = if 4 * t * e == workspace {
            ws
        } else {
            self.f(ws);
            self.ext(4 * t * e)
        };
        // its zero fill and its sum
        self.autotune();
        self.autotune();
        self.fs(&[d8, outer[3], outer[0]]);
        self.ext_grad(1);
        self.autotune();
        self.f(pos32);
        self.ext_grad(0);
        self.autotune();
        self.f(emb32);
        self.fs(&[dln, dres]);
    }

    /// Fused AdamW: at its first step a device `step` and the two moments per parameter.
    fn optimizer_step(&mut self) {
        if self.adam.is_empty() {
            for i in 0..self.params.len() {
                let p = self.params[i];
                let state = [
                    self.a(4, Term::AdamState),
                    self.a(p, Term::AdamState),
                    self.a(p, Term::AdamState),
                ];
                self.adam.push(state);
            }
        }
    }

    /// `evaluate_model`: one training batch, then one validation batch, each a compiled
    /// inference forward and the eager log-softmax.
    fn evaluate(&mut self, rows: &[u128]) {
        self.out.mark(Some(Phase::Eval), Stage::Eval, 0);
        for (k, &r) in rows.iter().enumerate() {
            let n = r * self.d.t;
            let ids = self.a(8 * n, Term::TokenIds);
            let targets = self.a(8 * n, Term::TokenIds);
            // the inference graph's first call: its GELU's kernel benchmarked (the trace's only
            // flush in it), before the logits
            if k == 0 {
                self.autotune();
            }
            let logits = self.a(BF16 * n * self.d.v, Term::Logits);
            let lsm = self.a(BF16 * n * self.d.v, Term::LogSoftmax);
            let loss = self.a(2, Term::Scalars);
            self.fs(&[logits, lsm, ids, targets, loss]);
        }
    }

    /// `generate_and_print_sample`: on a cold cache the dynamic-shape graph's first call is
    /// autotuned beside the card's L2-sized flush buffer; then 50 tokens, one row, no cache.
    fn sample(&mut self) {
        self.out.mark(Some(Phase::EvalAfterStep), Stage::Eval, 0);
        let flush = self.a(self.flush, Term::InductorAutotune);
        self.f(flush);
        for len in 4..54u128 {
            let t = len.min(self.d.t);
            let logits = self.a(BF16 * t * self.d.v, Term::Logits);
            self.f(logits);
        }
    }
}

impl Gen {
    /// The generator for a run of `cfg` on `gpu`, before the model is made.
    fn new(cfg: &Ch05Config, gpu: &Gpu, cold: bool) -> Gen {
        let (b, t) = (u128::from(cfg.batch_size), u128::from(cfg.context_length));
        let d = Dims {
            n: b * t,
            b,
            t,
            e: u128::from(cfg.emb_dim),
            h: u128::from(cfg.n_heads),
            v: u128::from(cfg.vocab_size),
            layers: cfg.n_layers,
            dropout: cfg.drop_rate > 0.0,
            qkv_bias: cfg.qkv_bias,
        };
        Gen {
            out: Builder::default(),
            d,
            workspace: gpu.cublas_workspace_bytes(),
            fwd_workspace: false,
            bwd_workspace: false,
            flush: if cold { gpu.l2_cache_bytes } else { 0 },
            tuning: false,
            ddp: cfg.is_ddp(),
            params: Gen::param_elems(&d).iter().map(|&n| BF16 * n).collect(),
            grads: Vec::new(),
            adam: Vec::new(),
        }
    }
}

/// The order a DDP run of `cfg` sees its parameters' gradients become ready (indices into
/// `model.parameters()`), which its Reducer rebuilds the buckets in: the autograd engine's over
/// DDPOptimizer's pieces where they fall between blocks, the reverse order otherwise.
pub fn ddp_ready_order(cfg: &Ch05Config, gpu: &Gpu) -> Vec<usize> {
    Gen::new(cfg, gpu, false).ready_order()
}

/// The allocation sequence of one run on `gpu` as process `rank` of `cfg.nproc_per_node` sees it
/// (01_opt_single_gpu.py: one process, rank 0), a user's first run (an empty Inductor cache)
/// when `cold`. Each rank trains and evaluates on its `DistributedSampler` share.
pub fn generate(cfg: &Ch05Config, gpu: &Gpu, cold: bool, rank: u32) -> Sequence {
    let mut g = Gen::new(cfg, gpu, cold);
    g.model_load();
    let ddp = g.ddp;
    let mut buckets = if ddp { g.ddp_wrap() } else { Vec::new() };
    let steps = cfg.total_steps();
    let val_rows = cfg.val_sequences().min(u64::from(cfg.batch_size));
    let mut reduced: Vec<T> = Vec::new();
    for step in 0..steps.min(STEPS_REPLAYED) {
        let phase = if step == 0 {
            Phase::TrainFirstIter
        } else {
            Phase::TrainSteady
        };
        // every graph's first call is in step 0 and the evaluation after it
        g.tuning = step == 0;
        g.step(phase, (ddp && step == 1).then_some(&mut buckets));
        if step % u64::from(cfg.eval_freq) == 0 {
            if ddp && reduced.is_empty() {
                // the interval's and the run's token counts, each a tensor and its all-reduced clone
                reduced = (0..4).map(|_| g.a(4, Term::Scalars)).collect();
            }
            let mut rows = vec![u128::from(cfg.batch_size)];
            if val_rows > 0 {
                rows.push(u128::from(val_rows));
            }
            g.evaluate(&rows);
        }
    }
    if rank == 0 {
        g.sample();
    }
    g.out.finish()
}

/// The run replayed without a cap (what the measured runs are held to).
pub fn replay(
    cfg: &Ch05Config,
    gpu: &Gpu,
    cold: bool,
    rank: u32,
) -> Result<crate::engine::run::Run, crate::error::ConfigError> {
    crate::engine::run::Run::replay(
        generate(cfg, gpu, cold, rank),
        cfg.allocator,
        crate::allocator::Cap::card(gpu.total_bytes),
    )
}
