//! gpt_train.py's run as the caching allocator sees it, read from the book's source at 28c65cdf
//! (`ch05/01_main-chapter-code/gpt_train.py` and `previous_chapters.py`) and PyTorch's autograd:
//!
//! * everything is fp32, eager, uncompiled; `model.to(device)` moves each parameter, and each
//!   block's fp32 causal-mask buffer `triu(ones(ctx, ctx))`, in module order;
//! * the model is written out by hand, so autograd keeps what each elementwise op needs: per
//!   LayerNorm `x - mean`, `sqrt(var + eps)`, the normalised `x` and its output; per attention
//!   the contiguous copies `matmul` makes of the transposed queries, keys and values, the
//!   `mask.bool()` it builds each forward (ctx², 1 byte each), the softmax (B·H·T·T fp32), the
//!   dropout's output and mask, and the re-laid-out context; per GELU the input of `pow`, `0.5·x`,
//!   `tanh(…)` and `1 + tanh(…)`; each dropout's bool mask;
//! * Python's names decide lifetimes: `keys, queries, values` and `attn_scores` live until the
//!   attention's forward returns, `tok_embeds` and `pos_embeds` until the model's does, `logits`
//!   until `calc_loss_batch` returns;
//! * the backward frees as autograd does: a node's outputs are allocated (a C++ expression's
//!   temporaries live to its end), then its input gradients die, then what it saved; gradients
//!   reaching one tensor from several uses are summed in place into the first; the residual
//!   stream's gradient is one buffer from the last block to the embedding;
//! * `optimizer.zero_grad()` (set_to_none) starts each step, so evaluations and the samples after
//!   an epoch run beside the gradients; AdamW (foreach) creates `exp_avg` and `exp_avg_sq` per
//!   parameter at its first step and a `sqrt(exp_avg_sq)` list each step;
//! * `evaluate_model` after steps 0, 5, 10, …: one training batch and one validation batch
//!   (`eval_iter=1`) under `no_grad` in eval mode (no dropout); the validation batch is the first
//!   of the validation loader, partial when the split holds fewer than `batch_size` sequences,
//!   absent when it holds none;
//! * `generate_and_print_sample` after each epoch: 50 greedy tokens from the 4-token start
//!   context, a full forward of one row per token, no cache.

use super::config::Ch05Config;
use crate::engine::events::{Builder, Phase, Sequence, Stage, TensorId};
use crate::engine::kernels::{column_sum_staging_bytes, embedding_partial_sums_bytes};
use crate::gpu::Gpu;
use crate::terms::Term;

type T = TensorId;

/// Training steps replayed: the first (no AdamW state before its `step()`) and two more (the
/// caching allocator's blocks settle by the third).
pub(super) const STEPS_REPLAYED: u64 = 3;

/// `start_context="Every effort moves you"`: 4 GPT-2 tokens; `max_new_tokens=50`.
const START_TOKENS: u128 = 4;
const NEW_TOKENS: u128 = 50;

/// The model's sizes.
#[derive(Clone, Copy)]
pub(super) struct Dims {
    pub(super) c: u128,
    pub(super) h: u128,
    pub(super) v: u128,
    pub(super) ctx: u128,
    pub(super) layers: u32,
    pub(super) dropout: bool,
    pub(super) qkv_bias: bool,
    /// `out_head`'s out features (the vocabulary, or chapter 6's classes) and its bias.
    pub(super) head: u128,
    pub(super) head_bias: bool,
}

/// Indices of one block's parameters in `model.parameters()` order.
#[derive(Clone, Copy)]
pub(super) struct BlockParams {
    pub(super) wq: usize,
    pub(super) wk: usize,
    pub(super) wv: usize,
    pub(super) wo: usize,
    pub(super) w1: usize,
    pub(super) w2: usize,
    pub(super) n1: usize,
    pub(super) n2: usize,
}

/// What one LayerNorm's forward keeps for its backward, and its output.
pub(super) struct LnSaved {
    pub(super) d: T,
    pub(super) s: T,
    pub(super) nx: T,
    pub(super) y: T,
}

/// What one block's forward keeps for its backward.
pub(super) struct BlockSaved {
    pub(super) ln1: LnSaved,
    pub(super) qc: T,
    pub(super) kc: T,
    pub(super) mask: T,
    pub(super) sm: T,
    pub(super) drop_out: T,
    pub(super) drop_mask: T,
    pub(super) vc: T,
    pub(super) cc: T,
    pub(super) res_mask1: T,
    pub(super) x1: T,
    pub(super) ln2: LnSaved,
    pub(super) h: T,
    pub(super) t1: T,
    pub(super) t5: T,
    pub(super) t6: T,
    pub(super) g: T,
    pub(super) res_mask2: T,
}

/// A training forward's saved tensors.
pub(super) struct Forward {
    pub(super) ids: T,
    pub(super) targets: T,
    pub(super) arange: T,
    pub(super) emb_mask: T,
    pub(super) blocks: Vec<(T, BlockSaved)>,
    pub(super) last: T,
    pub(super) lnf: LnSaved,
    pub(super) lsm: T,
    pub(super) total_weight: T,
}

pub(super) struct Gen {
    pub(super) out: Builder,
    pub(super) d: Dims,
    pub(super) workspace: u128,
    pub(super) fwd_workspace: bool,
    pub(super) bwd_workspace: bool,
    /// Parameter sizes in `model.parameters()` order.
    pub(super) params: Vec<u128>,
    pub(super) blocks: Vec<BlockParams>,
    /// `.grad` of each parameter (set_to_none frees them in parameter order).
    pub(super) grads: Vec<T>,
    pub(super) adam: Vec<T>,
    /// The training step's phase (for the loss's mark).
    pub(super) phase: Phase,
    /// Indices of `final_norm.scale` and `out_head.weight` in `model.parameters()`.
    pub(super) final_norm: usize,
    pub(super) head: usize,
}

impl Gen {
    pub(super) fn new(d: Dims, gpu: &Gpu) -> Gen {
        Gen {
            out: Builder::default(),
            d,
            workspace: gpu.cublas_workspace_bytes(),
            fwd_workspace: false,
            bwd_workspace: false,
            params: Vec::new(),
            blocks: Vec::new(),
            grads: Vec::new(),
            adam: Vec::new(),
            phase: Phase::TrainFirstIter,
            final_norm: 0,
            head: 0,
        }
    }

    pub(super) fn a(&mut self, bytes: u128, term: Term) -> T {
        self.out.alloc(bytes, term)
    }

    pub(super) fn f(&mut self, t: T) {
        self.out.free(t);
    }

    pub(super) fn fs(&mut self, ts: &[T]) {
        for &t in ts {
            self.out.free(t);
        }
    }

    pub(super) fn mark(&mut self, phase: Option<Phase>, stage: Stage, micro: u32) {
        self.out.mark(phase, stage, micro);
    }

    /// A forward matmul's output, then (the first time) the main thread's cuBLAS workspace.
    pub(super) fn matmul_out(&mut self, bytes: u128, term: Term) -> T {
        let t = self.a(bytes, term);
        if !std::mem::replace(&mut self.fwd_workspace, true) {
            self.a(self.workspace, Term::CublasWorkspace);
        }
        t
    }

    /// A backward matmul's output, then (the first time) the autograd thread's workspace.
    pub(super) fn bwd_matmul_out(&mut self, bytes: u128, term: Term) -> T {
        let t = self.a(bytes, term);
        self.bwd_workspace_once();
        t
    }

    /// The autograd thread's cuBLAS workspace, at its first matmul.
    fn bwd_workspace_once(&mut self) {
        if !std::mem::replace(&mut self.bwd_workspace, true) {
            self.a(self.workspace, Term::CublasWorkspace);
        }
    }

    /// A parameter's gradient as its backward produces it (AccumulateGrad keeps that tensor).
    pub(super) fn grad(&mut self, param: usize) {
        let g = self.a(self.params[param], Term::Grads);
        self.grads[param] = g;
    }

    /// A gradient summed over the batch's `rows` (a bias's, a LayerNorm's scale or shift): the
    /// gradient, then the reduction's staging buffer, taken and given back.
    fn row_sum_grad(&mut self, param: usize, rows: u128) {
        self.grad(param);
        let staging = column_sum_staging_bytes(rows, self.params[param] / 4);
        if staging > 0 {
            let s = self.a(staging, Term::BlockTransient);
            self.f(s);
        }
    }

    // ---- setup --------------------------------------------------------------------------------

    /// `GPTModel(cfg).to(device)`: `Module._apply` moves each module's children first, then its
    /// own parameters and buffers (the attention's mask after its four Linears).
    pub(super) fn model_load(&mut self) {
        self.mark(None, Stage::ModelLoad, 0);
        let (c, v, ctx) = (self.d.c, self.d.v, self.d.ctx);
        self.param(4 * v * c);
        self.param(4 * ctx * c);
        let mut blocks = Vec::new();
        for _ in 0..self.d.layers {
            let qb = self.d.qkv_bias;
            let wq = self.linear_to_device(c, c, qb);
            let wk = self.linear_to_device(c, c, qb);
            let wv = self.linear_to_device(c, c, qb);
            let wo = self.linear_to_device(c, c, true);
            self.a(4 * ctx * ctx, Term::MaskBuffers);
            let w1 = self.linear_to_device(c, 4 * c, true);
            let w2 = self.linear_to_device(4 * c, c, true);
            let n1 = self.param(4 * c);
            self.param(4 * c);
            let n2 = self.param(4 * c);
            self.param(4 * c);
            blocks.push(BlockParams {
                wq,
                wk,
                wv,
                wo,
                w1,
                w2,
                n1,
                n2,
            });
        }
        self.final_norm = self.param(4 * c);
        self.param(4 * c);
        self.head = self.linear_to_device(c, self.d.head, self.d.head_bias);
        self.grads = vec![None; self.params.len()];
        self.blocks = blocks;
    }

    /// One parameter to the GPU; returns its index in `model.parameters()`.
    pub(super) fn param(&mut self, bytes: u128) -> usize {
        self.a(bytes, Term::Params);
        self.params.push(bytes);
        self.params.len() - 1
    }

    /// An `nn.Linear(i, o)`'s weight, then its bias; returns the weight's index.
    pub(super) fn linear_to_device(&mut self, i: u128, o: u128, bias: bool) -> usize {
        let w = self.param(4 * i * o);
        if bias {
            self.param(4 * o);
        }
        w
    }

    pub(super) fn bias_of(&self, weight: usize, has_bias: bool) -> Option<usize> {
        has_bias.then_some(weight + 1)
    }

    // ---- forward, training (autograd keeps what backward needs) -------------------------------

    /// LayerNorm.forward: `mean`, `var` (locals until it returns), `x - mean`, `var + eps`,
    /// its sqrt, the quotient, `scale * norm_x`, `+ shift`. When `x` needs no gradient (the
    /// first block chapter 6 trains) autograd records only `scale * norm_x`, which keeps
    /// `norm_x`: `x - mean` and the sqrt die with the division's expression.
    pub(super) fn ln_train(&mut self, n: u128, input_grad: bool) -> LnSaved {
        let (a, row) = (4 * n * self.d.c, 4 * n);
        let tr = Term::BlockTransient;
        let act = Term::BlockActivations;
        let mean = self.a(row, tr);
        let var = self.a(row, tr);
        let d = self.a(a, act);
        let ve = self.a(row, tr);
        let s = self.a(row, act);
        self.f(ve);
        let nx = self.a(a, act);
        let (d, s) = if input_grad {
            (d, s)
        } else {
            self.fs(&[d, s]);
            (None, None)
        };
        let sc = self.a(a, tr);
        let y = self.a(a, act);
        self.fs(&[sc, mean, var]);
        LnSaved { d, s, nx, y }
    }

    /// One TransformerBlock's forward: what it keeps, and its output. `input_grad`: whether
    /// its input needs a gradient (not for the first block chapter 6 trains).
    pub(super) fn block_train(&mut self, b: u128, t: u128, input_grad: bool) -> (BlockSaved, T) {
        let d = self.d;
        let n = b * t;
        let a = 4 * n * d.c;
        let s = 4 * b * d.h * t * t;
        let act = Term::BlockActivations;
        let tr = Term::BlockTransient;
        let ln1 = self.ln_train(n, input_grad);
        // keys, queries, values: bound to locals until the attention returns
        let k = self.matmul_out(a, tr);
        let q = self.a(a, tr);
        let v = self.a(a, tr);
        // queries @ keys.transpose(2, 3): matmul copies both (B·H, T, hd) operands contiguous
        let qc = self.a(a, act);
        let kc = self.a(a, act);
        let scores = self.a(s, tr);
        // self.mask.bool(): the whole ctx × ctx, sliced; masked_fill_ keeps it
        let mask = self.a(d.ctx * d.ctx, act);
        let scaled = self.a(s, tr);
        let sm = self.a(s, act);
        self.f(scaled);
        // a dropout takes its bool mask before its output, here and in every dropout below
        // (data/traces/lfs_cf_s_L512_b32_d01-events.json.gz)
        let (drop_out, drop_mask) = if d.dropout {
            let mask = self.a(s / 4, act);
            (self.a(s, act), mask)
        } else {
            (None, None)
        };
        let vc = self.a(a, act);
        let co = self.a(a, tr);
        // .transpose(1, 2).reshape(b, T, d_out): a copy, which out_proj keeps
        let cc = self.a(a, act);
        self.f(co);
        let proj = self.a(a, tr);
        self.fs(&[k, q, v, scores]);
        let (res_mask1, x1) = self.residual(n, proj);
        let ln2 = self.ln_train(n, true);
        let h = self.a(4 * a, act);
        // GELU: 0.5 * x * (1 + tanh(sqrt(2/π) * (x + 0.044715 * x³)))
        let t1 = self.a(4 * a, act);
        let p3 = self.a(4 * a, tr);
        let t2 = self.a(4 * a, tr);
        self.f(p3);
        let t3 = self.a(4 * a, tr);
        self.f(t2);
        let t4 = self.a(4 * a, tr);
        self.f(t3);
        let t5 = self.a(4 * a, act);
        self.f(t4);
        let t6 = self.a(4 * a, act);
        let g = self.a(4 * a, act);
        let mlp = self.a(a, tr);
        let (res_mask2, out) = self.residual(n, mlp);
        let saved = BlockSaved {
            ln1,
            qc,
            kc,
            mask,
            sm,
            drop_out,
            drop_mask,
            vc,
            cc,
            res_mask1,
            x1,
            ln2,
            h,
            t1,
            t5,
            t6,
            g,
            res_mask2,
        };
        (saved, out)
    }

    /// `x = self.drop_shortcut(x); x = x + shortcut`: the dropout's output (its mask kept) dies
    /// with the sum.
    pub(super) fn residual(&mut self, n: u128, x: T) -> (T, T) {
        let a = 4 * n * self.d.c;
        if self.d.dropout {
            let mask = self.a(n * self.d.c, Term::BlockActivations);
            let out = self.a(a, Term::BlockTransient);
            self.f(x);
            let sum = self.a(a, Term::BlockActivations);
            self.f(out);
            (mask, sum)
        } else {
            let sum = self.a(a, Term::BlockActivations);
            self.f(x);
            (None, sum)
        }
    }

    /// `logits = model(input_batch)` then `cross_entropy` in training mode.
    pub(super) fn forward_train(&mut self, b: u128, t: u128, ids: T, targets: T) -> (Forward, T) {
        let (c, v) = (self.d.c, self.d.v);
        let n = b * t;
        let a = 4 * n * c;
        let tok = self.a(a, Term::ForwardLocals);
        // torch.arange(seq_len): pos_emb's indices, kept by its backward
        let arange = self.a(8 * t, Term::TokenIds);
        let pos = self.a(4 * t * c, Term::ForwardLocals);
        let x0 = self.a(a, Term::BlockActivations);
        let (mut x, emb_mask) = if self.d.dropout {
            let mask = self.a(n * c, Term::EmbeddingDropoutMask);
            let out = self.a(a, Term::BlockActivations);
            self.f(x0);
            (out, mask)
        } else {
            (x0, None)
        };
        let mut blocks = Vec::new();
        for _ in 0..self.d.layers {
            let (saved, out) = self.block_train(b, t, true);
            blocks.push((x, saved));
            x = out;
        }
        let lnf = self.ln_train(n, true);
        let logits = self.matmul_out(4 * n * v, Term::Logits);
        self.fs(&[tok, pos]);
        self.mark_loss();
        let lsm = self.a(4 * n * v, Term::LogSoftmax);
        let loss = self.a(4, Term::Scalars);
        let total_weight = self.a(4, Term::Scalars);
        // calc_loss_batch returns: `logits` goes (log_softmax kept its output)
        self.f(logits);
        (
            Forward {
                ids,
                targets,
                arange,
                emb_mask,
                blocks,
                last: x,
                lnf,
                lsm,
                total_weight,
            },
            loss,
        )
    }

    pub(super) fn mark_loss(&mut self) {
        self.mark(Some(self.phase), Stage::Loss, 1);
    }

    // ---- backward -----------------------------------------------------------------------------

    /// A Linear's backward (`addmm` with a bias, `mm` without): the input's gradient, the
    /// weight's, then the bias's (reduced from the output's gradient); the output's gradient and
    /// the saved input die after. Returns the input's gradient.
    pub(super) fn linear_backward(
        &mut self,
        n: u128,
        w: usize,
        bias: Option<usize>,
        g_out: T,
    ) -> T {
        let c_in = self.params[w] / 4 / self.out_features(w, bias);
        // addmm gives the input's gradient first, mm (no bias) the weight's (out_head's:
        // data/traces/lfs_in_s_L256_b8-events.json.gz)
        let g_in = if bias.is_some() {
            let g_in = self.bwd_matmul_out(4 * n * c_in, Term::BlockTransient);
            self.grad(w);
            g_in
        } else {
            self.grad(w);
            self.bwd_matmul_out(4 * n * c_in, Term::BlockTransient)
        };
        if let Some(b) = bias {
            self.row_sum_grad(b, n);
        }
        self.f(g_out);
        g_in
    }

    pub(super) fn out_features(&self, w: usize, bias: Option<usize>) -> u128 {
        match bias {
            Some(b) => self.params[b] / 4,
            None => {
                // the attention's square projections (no bias with qkv_bias=False)
                let c = self.d.c;
                debug_assert_eq!(self.params[w], 4 * c * c);
                c
            }
        }
    }

    /// LayerNorm's backward from its output's gradient `gy`, summing its input's gradient into
    /// `res` (the residual stream's buffer) and freeing its input `x` (kept by `var`); only
    /// `scale`'s and `shift`'s gradients when its input needs none.
    pub(super) fn ln_backward(
        &mut self,
        n: u128,
        ln: LnSaved,
        scale: usize,
        gy: T,
        x: T,
        res: &mut T,
    ) {
        let (a, row) = (4 * n * self.d.c, 4 * n);
        let tr = Term::BlockTransient;
        // y = scale * nx + shift: shift's gradient reduced; norm_x's (only when x needs one:
        // `ln_train`'s `input_grad`), then scale's from gy * nx, reduced
        // (data/traces/lfs_in_s_L256_b8-events.json.gz)
        self.row_sum_grad(scale + 1, n);
        let input_grad = ln.d.is_some();
        let g_nx = if input_grad { self.a(a, tr) } else { None };
        let g_scale_full = self.a(a, tr);
        self.row_sum_grad(scale, n);
        self.f(g_scale_full);
        self.fs(&[gy, ln.nx]);
        if !input_grad {
            return;
        }
        // nx = d / s: s's gradient, -grad * ((d / s) / s), then d's, then s's reduced to (N, 1)
        // (data/traces/lfs_in_s_L256_b8-events.json.gz)
        let tmp = [self.a(a, tr), self.a(a, tr), self.a(a, tr)];
        let g_s_full = self.a(a, tr);
        self.fs(&tmp);
        let g_d = self.a(a, tr);
        let g_s = self.a(row, tr);
        self.fs(&[g_s_full, g_nx, ln.d]);
        // sqrt: grad / (2 * result)
        let two = self.a(row, tr);
        let g_ve = self.a(row, tr);
        self.fs(&[two, g_s, ln.s]);
        // x - mean: x's gradient is g_d itself (summed into the residual), mean's is -g_d reduced
        let neg = self.a(a, tr);
        let g_mean = self.a(row, tr);
        self.f(neg);
        self.add_into(res, g_d);
        // var: (2 / C) * grad * (x - x.mean()), its temporaries alive to the expression's end
        let tmp = [self.a(row, tr), self.a(a, tr), self.a(row, tr)];
        let g_var = self.a(a, tr);
        self.fs(&tmp);
        self.fs(&[g_ve, x]);
        self.add_into(res, g_var);
        // mean: grad.expand(...) / C
        let g_m = self.a(a, tr);
        self.f(g_mean);
        self.add_into(res, g_m);
    }

    /// A gradient reaching a tensor that already has one: summed in place into the first (the
    /// engine's InputBuffer), the new one freed; the first becomes the buffer.
    pub(super) fn add_into(&mut self, buffer: &mut T, g: T) {
        if buffer.is_none() {
            *buffer = g;
        } else {
            self.f(g);
        }
    }

    pub(super) fn block_backward(
        &mut self,
        b: u128,
        t: u128,
        p: BlockParams,
        x_in: T,
        s: BlockSaved,
        res: &mut T,
    ) {
        let d = self.d;
        let n = b * t;
        let a = 4 * n * d.c;
        let sz = 4 * b * d.h * t * t;
        let tr = Term::BlockTransient;
        // out = drop(mlp) + x1: the residual gradient goes to both
        let g_mlp = self.dropout_backward(a, s.res_mask2, *res);
        let g_g = self.linear_backward(n, p.w2, Some(p.w2 + 1), g_mlp);
        self.f(s.g);
        // g = t1 * t6: t6's gradient comes first (data/traces/lfs_in_s_L256_b8-events.json.gz)
        let g_t6 = self.a(4 * a, tr);
        let g_t1 = self.a(4 * a, tr);
        self.fs(&[g_g, s.t1, s.t6]);
        // tanh, then sqrt(2/π) * t3
        let g_t4 = self.a(4 * a, tr);
        self.fs(&[g_t6, s.t5]);
        let g_t3 = self.a(4 * a, tr);
        self.f(g_t4);
        // t3 = h + t2: g_t3 is h's first gradient; t2 = 0.044715 * pow(h, 3)
        let g_p3 = self.a(4 * a, tr);
        let tmp = [self.a(4 * a, tr), self.a(4 * a, tr)];
        let g_hp = self.a(4 * a, tr);
        self.fs(&tmp);
        self.fs(&[g_p3, s.h, g_hp]);
        // t1 = 0.5 * h
        let g_h2 = self.a(4 * a, tr);
        self.fs(&[g_t1, g_h2]);
        let g_y2 = self.linear_backward(n, p.w1, Some(p.w1 + 1), g_t3);
        self.f(s.ln2.y);
        self.ln_backward(n, s.ln2, p.n2, g_y2, s.x1, res);
        // x1 = drop(proj) + x_in; when x_in needs no gradient the residual buffer ends with the
        // node it feeds (the dropout's, or with p = 0 out_proj's)
        let input_grad = s.ln1.d.is_some();
        let g_proj = self.dropout_backward(a, s.res_mask1, *res);
        if !input_grad && d.dropout {
            self.f(res.take());
        }
        let g_cc = self.linear_backward(n, p.wo, Some(p.wo + 1), g_proj);
        if !input_grad && !d.dropout {
            self.f(res.take());
        }
        self.f(s.cc);
        // the context's gradient laid out as bmm's output, then bmm(weights, values)
        // (the order of every gradient below: data/traces/lfs_in_s_L256_b8-events.json.gz; a
        // matmul's backward gives its second operand's gradient first)
        let g_co = self.a(a, tr);
        self.f(g_cc);
        let g_vc = self.a(a, tr);
        let g_w = self.bwd_matmul_out(sz, tr);
        self.fs(&[g_co, s.drop_out, s.vc]);
        let g_sm = if d.dropout {
            let g = self.a(sz, tr);
            self.fs(&[g_w, s.drop_mask]);
            g
        } else {
            g_w
        };
        // softmax_backward_cuda_out: its output, then `grad * output` (freed as it returns)
        let g_ss = self.a(sz, tr);
        let prod = self.a(sz, tr);
        self.f(prod);
        self.fs(&[g_sm, s.sm]);
        let g_sc = self.a(sz, tr);
        self.f(g_ss);
        let g_m = self.a(sz, tr);
        self.fs(&[g_sc, s.mask]);
        let g_kc = self.a(a, tr);
        let g_qc = self.a(a, tr);
        self.fs(&[g_m, s.qc, s.kc]);
        // each (B, H, T, hd) gradient back to (B, T, C) as a copy as the engine reaches it:
        // queries' and values', their Linears; the first two input gradients summed into a new
        // buffer (neither can be stolen), then keys' copy and Linear, added in place
        let cq = self.a(a, tr);
        self.f(g_qc);
        let cv = self.a(a, tr);
        self.f(g_vc);
        let bias = d.qkv_bias;
        let g_v = self.linear_backward(n, p.wv, self.bias_of(p.wv, bias), cv);
        let g_q = self.linear_backward(n, p.wq, self.bias_of(p.wq, bias), cq);
        let g_y = self.a(a, tr);
        self.fs(&[g_v, g_q]);
        let ck = self.a(a, tr);
        self.f(g_kc);
        let g_k = self.linear_backward(n, p.wk, self.bias_of(p.wk, bias), ck);
        self.f(g_k);
        self.f(s.ln1.y);
        self.ln_backward(n, s.ln1, p.n1, g_y, x_in, res);
    }

    /// A dropout's backward on the residual gradient: a new gradient (its mask then freed), or
    /// with p = 0 (no dropout node) the residual gradient itself, shared.
    pub(super) fn dropout_backward(&mut self, a: u128, mask: T, res: T) -> T {
        if self.d.dropout {
            let g = self.a(a, Term::BlockTransient);
            self.f(mask);
            g
        } else {
            // shared with the residual buffer: the consumer must not free it
            let _ = res;
            None
        }
    }

    pub(super) fn backward(&mut self, b: u128, t: u128, mut fwd: Forward) {
        let (c, v) = (self.d.c, self.d.v);
        let n = b * t;
        let a = 4 * n * c;
        let seed = self.a(4, Term::LossGrads);
        // nll_loss: a zeroed (N, V) gradient; it releases the targets and total_weight
        let g_nll = self.a(4 * n * v, Term::LossGrads);
        self.fs(&[seed, fwd.targets, fwd.total_weight]);
        let g_logits = self.a(4 * n * v, Term::LossGrads);
        self.fs(&[g_nll, fwd.lsm]);
        // out_head: mm's two gradients, the weight's first, then (the backward's first cuBLAS
        // call) its workspace and the input's (data/traces/lfs_in_s_L256_b8-events.json.gz)
        let head = self.head;
        self.grad(head);
        self.bwd_workspace_once();
        let dx = self.a(a, Term::LmHeadGrads);
        self.fs(&[g_logits, fwd.lnf.y]);
        let mut res: T = None;
        let fnorm = self.final_norm;
        let lnf = std::mem::replace(
            &mut fwd.lnf,
            LnSaved {
                d: None,
                s: None,
                nx: None,
                y: None,
            },
        );
        self.ln_backward(n, lnf, fnorm, dx, fwd.last, &mut res);
        let blocks = std::mem::take(&mut self.blocks);
        for (i, (x_in, saved)) in fwd.blocks.into_iter().enumerate().rev() {
            self.block_backward(b, t, blocks[i], x_in, saved, &mut res);
        }
        self.blocks = blocks;
        // drop_emb, then tok_embeds + pos_embeds: pos's gradient reduced to (T, C)
        let g_x0 = if self.d.dropout {
            let g = self.a(a, Term::BlockTransient);
            self.fs(&[res, fwd.emb_mask]);
            g
        } else {
            res
        };
        let g_pos = self.a(4 * t * c, Term::BlockTransient);
        self.embedding_backward(1, (t, self.d.ctx), g_pos, fwd.arange);
        self.embedding_backward(0, (n, self.d.v), g_x0, fwd.ids);
    }

    /// `embedding_dense_backward` (CUDA): past 3,072 indices it sorts them (two int64 copies
    /// and the segment offsets) and sums per partial segment of a `rows`-row table before
    /// scattering into the zeroed weight gradient ([`embedding_partial_sums_bytes`]).
    pub(super) fn embedding_backward(
        &mut self,
        param: usize,
        (indices, rows): (u128, u128),
        g_out: T,
        ids: T,
    ) {
        let tr = Term::BlockTransient;
        let temps: Vec<T> = if indices > 3072 {
            vec![
                self.a(8 * indices, tr),
                self.a(8 * indices, tr),
                self.a(8 * indices, tr),
                self.a(embedding_partial_sums_bytes(indices, rows, self.d.c), tr),
            ]
        } else {
            Vec::new()
        };
        self.grad(param);
        self.fs(&temps);
        self.fs(&[g_out, ids]);
    }

    // ---- optimizer ----------------------------------------------------------------------------

    /// AdamW, foreach: its state at the first step (exp_avg, exp_avg_sq per parameter with a
    /// gradient — chapter 6's frozen ones have none; `step` on the CPU), then each step
    /// `_foreach_sqrt(exp_avg_sqs)`, freed when the step returns.
    pub(super) fn optimizer_step(&mut self) {
        let sizes: Vec<u128> = (self.params.iter().zip(&self.grads))
            .filter(|(_, g)| g.is_some())
            .map(|(&s, _)| s)
            .collect();
        if self.adam.is_empty() {
            for &s in &sizes {
                let m = self.a(s, Term::AdamState);
                let v = self.a(s, Term::AdamState);
                self.adam.extend([m, v]);
            }
        }
        let sqrt: Vec<T> = sizes.iter().map(|&s| self.a(s, Term::AdamState)).collect();
        self.fs(&sqrt);
    }

    /// A training step's start: its phase, `optimizer.zero_grad()` (set_to_none: the last
    /// step's gradients go), then the forward's mark.
    pub(super) fn start_step(&mut self, step: u64) {
        self.phase = if step == 0 {
            Phase::TrainFirstIter
        } else {
            Phase::TrainSteady
        };
        self.mark(Some(self.phase), Stage::ZeroGrad, 0);
        self.zero_grad();
        self.mark(Some(self.phase), Stage::Forward, 1);
    }

    pub(super) fn zero_grad(&mut self) {
        let grads = std::mem::take(&mut self.grads);
        self.fs(&grads);
        self.grads = vec![None; self.params.len()];
    }

    // ---- forward without gradients (evaluation and sampling) ----------------------------------

    pub(super) fn ln_eval(&mut self, n: u128) -> T {
        let (a, row) = (4 * n * self.d.c, 4 * n);
        let tr = Term::BlockTransient;
        let mean = self.a(row, tr);
        let var = self.a(row, tr);
        let d = self.a(a, tr);
        let ve = self.a(row, tr);
        let s = self.a(row, tr);
        self.f(ve);
        let nx = self.a(a, tr);
        self.fs(&[d, s]);
        let sc = self.a(a, tr);
        let y = self.a(a, tr);
        self.fs(&[sc, mean, var, nx]);
        y
    }

    /// A dropout that records nothing for autograd: its mask (taken first, as every dropout's),
    /// gone with the tuple `native_dropout` returned, its output, its input gone as the name is
    /// rebound. With p = 0, or in eval
    /// mode, the input itself.
    pub(super) fn drop_no_grad(&mut self, x: T, bytes: u128, mask: u128) -> T {
        let m = self.a(mask, Term::BlockTransient);
        let out = self.a(bytes, Term::BlockTransient);
        self.fs(&[m, x]);
        out
    }

    /// One block's forward with nothing recorded for autograd: under `no_grad`, or in chapter
    /// 6's frozen blocks (`dropout`: they run in training mode, so with p > 0 each dropout
    /// makes a new tensor). Returns its output; its input is the caller's.
    pub(super) fn block_eval(&mut self, b: u128, t: u128, dropout: bool) -> T {
        let d = self.d;
        let n = b * t;
        let a = 4 * n * d.c;
        let s = 4 * b * d.h * t * t;
        let tr = Term::BlockTransient;
        let y = self.ln_eval(n);
        let k = self.matmul_out(a, tr);
        let q = self.a(a, tr);
        let v = self.a(a, tr);
        let qc = self.a(a, tr);
        let kc = self.a(a, tr);
        let scores = self.a(s, tr);
        self.fs(&[qc, kc]);
        let mask = self.a(d.ctx * d.ctx, tr);
        let scaled = self.a(s, tr);
        let mut sm = self.a(s, tr);
        self.f(scaled);
        if dropout {
            sm = self.drop_no_grad(sm, s, s / 4);
        }
        let vc = self.a(a, tr);
        let co = self.a(a, tr);
        self.f(vc);
        let cc = self.a(a, tr);
        self.f(co);
        let mut proj = self.a(a, tr);
        self.f(cc);
        self.fs(&[k, q, v, scores, mask, sm, y]);
        if dropout {
            proj = self.drop_no_grad(proj, a, n * d.c);
        }
        let x1 = self.a(a, tr);
        self.f(proj);
        let y2 = self.ln_eval(n);
        let h = self.a(4 * a, tr);
        let t1 = self.a(4 * a, tr);
        let mut prev = self.a(4 * a, tr);
        // x³, 0.044715·x³, x + …, sqrt(2/π)·…, tanh, 1 + tanh: each frees the one before
        for _ in 0..5 {
            let next = self.a(4 * a, tr);
            self.f(prev);
            prev = next;
        }
        let g = self.a(4 * a, tr);
        self.fs(&[t1, prev, h]);
        let mut mlp = self.a(a, tr);
        self.fs(&[g, y2]);
        if dropout {
            mlp = self.drop_no_grad(mlp, a, n * d.c);
        }
        let out = self.a(a, tr);
        self.fs(&[mlp, x1]);
        out
    }

    /// `model(idx)` under no_grad in eval mode on `b` rows of `t` tokens: returns the logits.
    pub(super) fn forward_eval(&mut self, b: u128, t: u128) -> T {
        let c = self.d.c;
        let n = b * t;
        let a = 4 * n * c;
        let tok = self.a(a, Term::ForwardLocals);
        let arange = self.a(8 * t, Term::TokenIds);
        let pos = self.a(4 * t * c, Term::ForwardLocals);
        self.f(arange);
        // GPTModel.forward's `x` keeps the embeddings' sum until the blocks return
        let x0 = self.a(a, Term::BlockTransient);
        let mut x = x0;
        for _ in 0..self.d.layers {
            let out = self.block_eval(b, t, false);
            if x != x0 {
                self.f(x);
            }
            x = out;
        }
        self.f(x0);
        let y = self.ln_eval(n);
        self.f(x);
        let logits = self.matmul_out(4 * n * self.d.head, Term::Logits);
        self.fs(&[tok, pos, y]);
        logits
    }

    /// `calc_loss_batch` under no_grad: the batch to the GPU, the forward, the loss; its locals
    /// go as it returns.
    pub(super) fn loss_eval(&mut self, b: u128, t: u128) -> T {
        let ids = self.a(8 * b * t, Term::TokenIds);
        let targets = self.a(8 * b * t, Term::TokenIds);
        let logits = self.forward_eval(b, t);
        let lsm = self.a(4 * b * t * self.d.v, Term::LogSoftmax);
        let loss = self.a(4, Term::Scalars);
        let total_weight = self.a(4, Term::Scalars);
        self.fs(&[lsm, total_weight, ids, targets, logits]);
        loss
    }

    /// `evaluate_model(…, eval_iter)`: `calc_loss_loader` over the first `eval_iter` batches of
    /// the training loader (full), then of the validation loader (its last batch partial; none
    /// when it is empty). Each loss is `.item()`-ed, so each batch's tensors go before the next.
    pub(super) fn evaluate(&mut self, cfg: &Ch05Config) {
        self.mark(Some(Phase::Eval), Stage::Eval, 0);
        let (b, t) = (u64::from(cfg.batch_size), self.d.ctx);
        let iters = u64::from(cfg.eval_iter);
        let train = std::iter::repeat_n(b, iters.min(cfg.train_batches()) as usize);
        let val_seqs = cfg.val_sequences();
        let val = (0..iters.min(cfg.val_batches())).map(|i| (val_seqs - i * b).min(b));
        for rows in train.chain(val) {
            let loss = self.loss_eval(u128::from(rows), t);
            self.f(loss);
        }
    }

    /// `generate_and_print_sample`: one row grown from the start context by 50 greedy tokens.
    pub(super) fn sample(&mut self) {
        self.mark(Some(Phase::EvalAfterStep), Stage::Eval, 0);
        self.generate_tokens(START_TOKENS, NEW_TOKENS);
    }

    /// `generate_text_simple` (and `generate` until its end-of-text token): one row grown from
    /// a `start`-token prompt by `new` greedy tokens, a full forward of the row per token (no
    /// cache), its last `ctx` tokens once it is longer.
    pub(super) fn generate_tokens(&mut self, start: u128, new: u128) {
        let encoded = self.a(8 * start, Term::TokenIds);
        let mut idx = encoded;
        let (mut logits, mut next): (T, T) = (None, None);
        for i in 0..new {
            let t = (start + i).min(self.d.ctx);
            let l = self.forward_eval(1, t);
            self.f(logits);
            logits = l;
            let argmax = self.a(8, Term::TokenIds);
            self.f(next);
            next = argmax;
            let grown = self.a(8 * (start + i + 1), Term::TokenIds);
            if idx != encoded {
                self.f(idx);
            }
            idx = grown;
        }
        self.fs(&[logits, next, idx, encoded]);
    }
}

/// The allocation sequence of one gpt_train.py run on `gpu`.
pub fn generate(cfg: &Ch05Config, gpu: &Gpu) -> Sequence {
    let d = Dims {
        c: u128::from(cfg.emb_dim),
        h: u128::from(cfg.n_heads),
        v: u128::from(cfg.vocab_size),
        ctx: u128::from(cfg.context_length),
        layers: cfg.n_layers,
        dropout: cfg.drop_rate > 0.0,
        qkv_bias: cfg.qkv_bias,
        // the untied language-model head, no bias
        head: u128::from(cfg.vocab_size),
        head_bias: false,
    };
    let mut g = Gen::new(d, gpu);
    g.model_load();
    let (b, t) = (u128::from(cfg.batch_size), d.ctx);
    let per_epoch = cfg.train_batches();
    let steps = cfg.total_steps().min(STEPS_REPLAYED);
    let mut loss: T = None;
    let mut sampled_after_training = false;
    for step in 0..steps {
        g.start_step(step);
        let ids = g.a(8 * b * t, Term::TokenIds);
        let targets = g.a(8 * b * t, Term::TokenIds);
        let (fwd, new_loss) = g.forward_train(b, t, ids, targets);
        g.f(loss);
        loss = new_loss;
        g.mark(Some(g.phase), Stage::Backward, 1);
        g.backward(b, t, fwd);
        g.mark(Some(g.phase), Stage::OptimizerStep, 0);
        g.optimizer_step();
        if step % u64::from(cfg.eval_freq) == 0 {
            g.evaluate(cfg);
        }
        if (step + 1) % per_epoch == 0 {
            g.sample();
            sampled_after_training = true;
        }
    }
    // the samples after each epoch: beside the gradients and AdamW's state once training ran
    if !sampled_after_training {
        g.sample();
    }
    g.out.finish()
}
