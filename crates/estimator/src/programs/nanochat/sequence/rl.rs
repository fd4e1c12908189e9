//! `scripts/chat_rl.py`'s memory at 92d63d4: the SFT checkpoint loaded ([`Gen::load_model`]),
//! step 0's pass@k evaluation and every step's rollouts through the Engine ([`Gen::generate`]),
//! then the policy-gradient passes — the **uncompiled** model in training mode with per-token
//! losses (`loss_reduction='none'`), run eagerly, so autograd keeps what each op's backward needs
//! — and MuonAdamW's step, whose fused kernels are compiled (on a first run, on a cold cache).
//! The passes are written request by request in the order Python and autograd make them (a
//! traced d12 run, docs/allocation-order.md §20): under expandable segments where the passes
//! leave their holes decides what step 0's optimizer step has to map.
//! Checked against runs of the real script on real checkpoints
//! (data/measured/nanochat-stages.jsonl, `nc_rl_*`).

use super::{Dims, Gen, Ranks, STEADY_ITERATIONS};
use crate::engine::events::{Phase, Sequence, Stage, TensorId};
use crate::engine::kernels::embedding_partial_sums_bytes;
use crate::gpu::Gpu;
use crate::programs::nanochat::shape::Param;
use crate::programs::nanochat::stage::{RlSettings, StageConfig};
use crate::programs::nanochat::{NanochatAttention, Shape};
use crate::terms::Term;

/// `run_gsm8k_eval`'s `max_completion_tokens`, which chat_rl.py leaves at its default.
const EVAL_MAX_TOKENS: u128 = 256;

/// Passes and sampling steps replayed per example, and examples per step: each later one
/// repeats the one before it exactly.
const REPLAYED: u32 = 2;

/// What one eager layer's forward keeps for its backward (each freed where autograd releases it:
/// when the node that saved it has run).
struct EagerLayer {
    /// The mix's output (norm 1's input), the value embedding's lookup, norm 1's output and
    /// statistics.
    mixed: TensorId,
    ve: TensorId,
    norm1: TensorId,
    norm1_stats: TensorId,
    /// c_q's, c_k's and c_v's bf16 weight copies.
    w_qkv: [TensorId; 3],
    /// The value gate's weight copy, sigmoid and gate.
    gate: Vec<TensorId>,
    /// SDPA's v (c_v's output, or the gated one).
    v: TensorId,
    /// q's and k's: the rotary's negated sine, the rotated tensor (the QK-norm's input), the
    /// norm's statistics, `* 1.2`'s output (SDPA's input).
    sin: [TensorId; 2],
    rotated: [TensorId; 2],
    qk_stats: [TensorId; 2],
    scaled: [TensorId; 2],
    /// SDPA's additive mask, output, statistics and RNG state; c_proj's weight copy.
    mask: TensorId,
    y: TensorId,
    lse: TensorId,
    rng: Vec<TensorId>,
    w_attn_proj: TensorId,
    /// x_mid (norm 2's input), norm 2's output and statistics, c_fc's weight copy, relu's
    /// output, its square (c_proj's input), c_proj's weight copy.
    x_mid: TensorId,
    norm2: TensorId,
    norm2_stats: TensorId,
    w_fc: TensorId,
    relu: TensorId,
    square: TensorId,
    w_proj: TensorId,
}

impl Gen<'_> {
    fn act(&mut self, bytes: u128) -> TensorId {
        self.out.alloc(bytes, Term::BlockActivations)
    }

    fn transient(&mut self, bytes: u128) -> TensorId {
        self.out.alloc(bytes, Term::BlockTransient)
    }

    /// SDPA's fallback under a (T, T) mask at a sliding-window layer shorter than the sequence
    /// (flash_attention.py `_sdpa_attention`): the int64 row and column indices, the causal
    /// bool mask, the window test through an int64 (T, T) difference, their conjunction; SDPA
    /// turns the bool mask into an additive one in the compute dtype and pads its rows to 16
    /// (memory-efficient attention's alignment), and keeps that for the backward.
    fn eager_mask(&mut self, t: u128) -> (TensorId, Vec<TensorId>) {
        let e = self.d.e;
        let mut temps = vec![
            self.transient(8 * t),
            self.transient(8 * t),
            self.transient(t * t),
        ];
        let diff = self.transient(8 * t * t);
        let within = self.transient(t * t);
        let mask = self.transient(t * t);
        self.out.free(diff);
        self.out.free(within);
        let first = temps.pop().flatten();
        self.out.free(first);
        temps.push(mask);
        let additive = self.transient(e * t * t);
        let padded = self
            .out
            .alloc(e * t * t.div_ceil(16) * 16, Term::AttentionMask);
        self.out.free(additive);
        (padded, temps)
    }

    /// `apply_rotary_emb` of one (B, T, H, D) tensor: four half-width products, two sums, the
    /// negated sine (kept in `sin`: `x1 * (-sin)` needs it for x1's gradient), the
    /// concatenation (kept by the QK-norm that follows).
    fn rotary(&mut self, u: u128, t: u128, sin: &mut TensorId) -> TensorId {
        let half = u / 2;
        let a = self.transient(half);
        let b = self.transient(half);
        let y1 = self.transient(half);
        self.out.free(a);
        self.out.free(b);
        *sin = self.act(self.d.e * t * u128::from(self.s.d) / 2);
        let c = self.transient(half);
        let d = self.transient(half);
        let y2 = self.transient(half);
        self.out.free(c);
        self.out.free(d);
        let rotated = self.act(u);
        self.out.free(y1);
        self.out.free(y2);
        rotated
    }

    /// One eager layer's forward of `t` tokens a row: returns what it keeps and its output.
    /// `x` is the layer's input (kept by the residual mix, which needs it for `resid_lambdas`'
    /// gradient), `x0` the embedding kept once for all layers.
    fn eager_layer(&mut self, i: usize, t: u128) -> (EagerLayer, TensorId) {
        let Dims { b, c, h, e, .. } = self.d;
        let n = b * t;
        let u = e * n * c;
        // x = resid_lambdas[i] * x + x0_lambdas[i] * x0: two products, their sum kept by norm 1
        let p = self.transient(u);
        let q = self.transient(u);
        let mixed = self.act(u);
        self.out.free(p);
        self.out.free(q);
        // the value embedding's lookup (n_kv_head · head_dim = C here), kept by the gate's product
        let ve = self.s.ve[i].then(|| self.act(u)).flatten();
        // norm 1: output and fp32 statistics
        let norm1 = self.act(u);
        let norm1_stats = self.act(4 * n);
        // c_q, c_k, c_v: each its bf16 weight copy (kept) and output
        let mut w_qkv = [None; 3];
        let mut qkv = Vec::new();
        for w in &mut w_qkv {
            *w = self.copy(2 * c * c);
            qkv.push(self.transient(u));
        }
        let mut gate = Vec::new();
        let v = if self.s.ve[i] {
            // v + 3·sigmoid(ve_gate(x[..., :12])) · ve: the gate's weight copy, its logits, the
            // sigmoid and the gate (both kept), the product, the new v (kept by SDPA)
            gate.push(self.copy(2 * 12 * h));
            let logits = self.transient(e * n * h);
            gate.push(self.act(e * n * h));
            self.out.free(logits);
            gate.push(self.act(e * n * h));
            let product = self.transient(u);
            let v = self.act(u);
            self.out.free(product);
            let v0 = qkv.pop().flatten();
            self.out.free(v0);
            v
        } else {
            qkv.pop().flatten()
        };
        // rotary q and k; the rotated ones are kept by the QK-norms, and q, k go when both are done
        let mut sin = [None; 2];
        let rq = self.rotary(u, t, &mut sin[0]);
        let rk = self.rotary(u, t, &mut sin[1]);
        self.out.free_all(&mut qkv);
        // `q, k = norm(q), norm(k)` (statistics per head, kept), then `q = q * 1.2` and
        // `k = k * 1.2`, whose products SDPA keeps, each releasing its norm's output
        let mut normed = [None; 2];
        let mut qk_stats = [None; 2];
        for j in 0..2 {
            normed[j] = self.transient(u);
            qk_stats[j] = self.act(4 * n * h);
        }
        let mut scaled = [None; 2];
        for j in 0..2 {
            scaled[j] = self.act(u);
            self.out.free(normed[j]);
        }
        // SDPA: under a mask at a sliding-window layer the sequence outgrows, else causal
        let (mut mask, mut mask_temps) = (None, Vec::new());
        if u128::from(self.s.windows[i]) < t {
            (mask, mask_temps) = self.eager_mask(t);
        }
        let y = self.act(u);
        let rows = if mask_temps.is_empty() {
            t
        } else {
            t.div_ceil(32) * 32
        };
        let lse = self.act(4 * b * h * rows);
        let rng = self.sdpa_rng_state();
        self.out.free_all(&mut mask_temps);
        // c_proj (its weight copy kept; SDPA's output is already (B, T, H, D)-contiguous) and the
        // residual: x_mid, kept by norm 2
        let w_attn_proj = self.copy(2 * c * c);
        let proj = self.transient(u);
        let x_mid = self.act(u);
        self.out.free(proj);
        // norm 2, c_fc, relu (its output kept by relu's and square's backward), square (kept by
        // c_proj), c_proj, the residual
        let norm2 = self.act(u);
        let norm2_stats = self.act(4 * n);
        let w_fc = self.copy(8 * c * c);
        // `x = F.relu(c_fc(x)).square()`: c_fc's output goes when x is rebound
        let fc = self.transient(4 * u);
        let relu = self.act(4 * u);
        let square = self.act(4 * u);
        self.out.free(fc);
        let w_proj = self.copy(8 * c * c);
        let out = self.transient(u);
        let x = self.act(u);
        self.out.free(out);
        let saved = EagerLayer {
            mixed,
            ve,
            norm1,
            norm1_stats,
            w_qkv,
            gate,
            v,
            sin,
            rotated: [rq, rk],
            qk_stats,
            scaled,
            mask,
            y,
            lse,
            rng,
            w_attn_proj,
            x_mid,
            norm2,
            norm2_stats,
            w_fc,
            relu,
            square,
            w_proj,
        };
        (saved, x)
    }

    /// One policy-gradient pass of chat_rl.py: `model(inputs, targets, loss_reduction='none')`
    /// on B rows of `t` tokens, the objective, `loss.backward()`. The first pass after
    /// `zero_grad` makes `.grad`; later ones add into it in place.
    fn rl_pass(&mut self, phase: Phase, t: u128, pass: u32) {
        let Dims { b, c, v, e, .. } = self.d;
        let n = b * t;
        let u = e * n * c;
        let tail = b * (t - 1);
        self.out.mark(Some(phase), Stage::Forward, pass);
        self.ws();
        // the embedding and its norm (input and statistics kept), the smear: its gate's input
        // (x[:, 1:, :24] copied contiguous for the matmul), weight copy, sigmoid, scale and
        // gate kept; the shifted product and sum go into x0, kept by every layer's mix
        let wte_out = self.out.alloc(u, Term::ForwardLocals);
        let emb_stats = self.out.alloc(4 * n, Term::ForwardLocals);
        let emb_norm = self.out.alloc(u, Term::ForwardLocals);
        let gate_in = self.out.alloc(24 * e * tail, Term::ForwardLocals);
        let gate_w = self.copy(2 * 24);
        let gate_logits = self.transient(e * tail);
        let sigmoid = self.act(e * tail);
        self.out.free(gate_logits);
        let smear_lambda = self.act(e);
        let gate = self.act(e * tail);
        let product = self.transient(e * tail * c);
        let sum = self.transient(e * tail * c);
        self.out.free(product);
        let x0 = self.out.alloc(u, Term::ForwardLocals);
        self.out.free(sum);
        // the layers; each output is kept by the next layer's mix, and the halfway one by the
        // backout, so the last one alone goes when the backout replaces it
        let l = self.s.l as usize;
        let mut layers = Vec::with_capacity(l);
        let mut outputs: Vec<TensorId> = Vec::with_capacity(l);
        for i in 0..l {
            let (saved, x) = self.eager_layer(i, t);
            layers.push(saved);
            outputs.push(x);
        }
        // x - backout_lambda · x_backout: the scale kept, the product; the difference kept by the
        // final norm, whose output lm_head keeps with its weight copy
        let backout_lambda = self.act(e);
        let product = self.transient(u);
        let diff = self.out.alloc(u, Term::FinalActivations);
        self.out.free(product);
        let top = outputs.pop().flatten();
        self.out.free(top);
        let final_stats = self.out.alloc(4 * n, Term::FinalActivations);
        let normed = self.out.alloc(u, Term::FinalActivations);
        let w_head = self.copy(2 * v * c);
        // the logits, `.float()` (none in fp32), the softcap: `/ 15`, tanh (kept), `* 15`
        let logits = self.out.alloc(e * n * v, Term::Logits);
        self.out.mark(Some(phase), Stage::Loss, pass);
        let float = if self.d.copies {
            let f = self.out.alloc(4 * n * v, Term::Logits);
            self.out.free(logits);
            f
        } else {
            logits
        };
        let scaled = self.out.alloc(4 * n * v, Term::Logits);
        let tanh = self.out.alloc(4 * n * v, Term::Logits);
        self.out.free(scaled);
        let capped = self.out.alloc(4 * n * v, Term::Logits);
        self.out.free(float);
        // cross-entropy without reduction: the log-softmax (kept by nll_loss), the (N,) losses;
        // the capped logits go when forward returns, the losses when `-loss` replaces them
        let log_softmax = self.out.alloc(4 * n * v, Term::LogSoftmax);
        let losses = self.out.alloc(4 * n, Term::Logits);
        self.out.free(capped);
        let logp = self.out.alloc(4 * n, Term::Logits);
        self.out.free(losses);
        // (logp · advantages).sum() / (valid tokens · passes · examples): a product, scalars
        let weighted = self.transient(4 * n);
        let valid = self.transient(n);
        self.out.free(valid);
        self.out.free(weighted);

        self.out.mark(Some(phase), Stage::Backward, pass);
        // the objective's gradient over the (B, T) log-probabilities, negated
        let g = self.transient(4 * n);
        let g_logp = self.transient(4 * n);
        self.out.free(g);
        // nll_loss's backward: a zeroed (N, V) gradient with the targets' entries set; the
        // log-softmax's backward beside it; then the softcap's three steps, each replacing the last
        let nll = self.out.alloc(4 * n * v, Term::LossGrads);
        self.out.free(g_logp);
        let mut grad = self.out.alloc(4 * n * v, Term::LossGrads);
        self.out.free(nll);
        self.out.free(log_softmax);
        for kept in [None, tanh, None] {
            let next = self.out.alloc(4 * n * v, Term::LossGrads);
            self.out.free(grad);
            self.out.free(kept);
            grad = next;
        }
        if self.d.copies {
            let bf16 = self.out.alloc(2 * n * v, Term::LossGrads);
            self.out.free(grad);
            grad = bf16;
        }
        let params = self.s.params();
        // zero_grad left no `.grad`: this pass's gradients become them (see `keep_grad`)
        if self.grads.is_empty() {
            self.grads = vec![None; params.len()];
        }
        // lm_head: its weight gradient, then the autograd thread's first matmul makes its cuBLAS
        // workspace, then its input gradient
        let head = super::lm_head_index(self.s);
        let dw = head.and_then(|k| self.weight_grad_raw(params[k]));
        self.backward_workspace();
        let gx = self.transient(u);
        self.out.free(grad);
        self.out.free(w_head);
        self.out.free(normed);
        if let Some(k) = head {
            self.weight_grad_done(k, params[k], dw);
        }
        // the final norm's backward: the top layer's gradient
        let mut dx = self.transient(u);
        self.out.free(gx);
        self.out.free(diff);
        self.out.free(final_stats);
        // the backout's: -dx, x_backout's gradient (kept until the halfway layer's own arrives
        // and is added into it), the scale's product
        let negated = self.transient(u);
        let mut backout = self.transient(u);
        let product = self.transient(u);
        self.out.free(product);
        self.out.free(negated);
        self.out.free(backout_lambda);
        let halfway = l / 2;
        if halfway + 1 == l {
            // the top layer is the halfway one: its gradient takes the backout's at once
            self.out.free(backout.take());
        }
        let block_ix = super::block_param_indices(self.s);
        let mut x0_grad: TensorId = None;
        let ws = self.sdpa_backward_workspace(n);
        for (i, saved) in layers.into_iter().enumerate().rev() {
            let input = if i == 0 { x0 } else { outputs[i - 1] };
            self.eager_layer_backward(saved, &block_ix[i], &params, n, ws);
            // the mix's backward: x0's share (x0_lambda · dx, added into x0's gradient, which the
            // top layer's makes) with its scale's product, then the input's (resid_lambda · dx,
            // the layer below's gradient) with its scale's product
            let share = self.transient(u);
            let product = self.transient(u);
            self.out.free(product);
            if x0_grad.is_none() {
                x0_grad = share;
            } else {
                self.out.free(share);
            }
            let below = self.transient(u);
            let product = self.transient(u);
            self.out.free(product);
            self.out.free(dx);
            self.out.free(input);
            dx = below;
            if i == halfway + 1 || i == 0 {
                // added into the halfway output's gradient (the backout's), or into x0's
                self.out.free(dx.take());
                dx = if i == 0 { None } else { backout.take() };
            }
        }
        // the smear's backward: (B, T-1, C) gradients of its sum and product, x0's gradient
        // consumed; then the embedding norm's backward and wte's gradient
        let shifted = e * tail * c;
        let sum = self.transient(shifted);
        let product = self.transient(shifted);
        self.out.free(product);
        self.out.free(emb_norm);
        let g = self.transient(u);
        self.out.free(sum);
        let t = self.transient(u);
        self.out.free(t);
        let t = self.transient(u);
        self.out.free(x0_grad);
        self.out.free(t);
        let part = self.transient(shifted);
        let whole = self.transient(u);
        self.out.free(part);
        self.out.free(whole);
        let normed_grad = self.transient(u);
        self.out.free(g);
        self.out.free(wte_out);
        self.embedding_grad_eager(0, params[0], n);
        self.out.free(normed_grad);
        for t in [emb_stats, gate_in, gate_w, sigmoid, smear_lambda, gate] {
            self.out.free(t);
        }
        // the scalars' gradients
        for (k, p) in params.iter().enumerate() {
            if self.grads[k].is_none() && p.elem_bytes == 4 && p.numel() < 4096 {
                self.weight_grad(k, *p);
            }
        }
        self.out.free(logp);
    }

    /// Parameter `k`'s (`p`'s) gradient, a Linear's or a scalar's: the bf16 matmul result cast
    /// to the fp32 master's dtype.
    fn weight_grad(&mut self, k: usize, p: Param) {
        let raw = self.weight_grad_raw(p);
        self.weight_grad_done(k, p, raw);
    }

    /// The bytes of `p`'s gradient as a bf16 matmul makes it, where the weight was cast (the
    /// scalars are not).
    fn grad_cast_bytes(&self, p: Param) -> Option<u128> {
        (self.d.copies && p.numel() >= 4096).then(|| p.numel() as u128 * 2)
    }

    /// A weight's gradient as its matmul makes it: in bf16 where the weight was cast, else the
    /// fp32 gradient itself.
    fn weight_grad_raw(&mut self, p: Param) -> TensorId {
        match self.grad_cast_bytes(p) {
            Some(bytes) => self.out.alloc(bytes, Term::LmHeadGrads),
            None => self.out.alloc(p.bytes(), Term::Grads),
        }
    }

    /// AccumulateGrad on [`Gen::weight_grad_raw`]'s gradient: copied to the master's dtype
    /// where it was bf16, then kept as `.grad` or added into it ([`Gen::keep_grad`]).
    fn weight_grad_done(&mut self, k: usize, p: Param, raw: TensorId) {
        let grad = if self.grad_cast_bytes(p).is_some() {
            let grad = self.out.alloc(p.bytes(), Term::Grads);
            self.out.free(raw);
            grad
        } else {
            raw
        };
        self.keep_grad(k, grad);
    }

    /// Memory-efficient attention's backward workspace (SDPA without FA3; none under FA3): dq's
    /// fp32 accumulator, a (B, H, T) fp32 row and 256 bytes — 3,628,768 B at B 4, T 293, C 768
    /// and 6 heads, as the traced backward has it.
    fn sdpa_backward_workspace(&self, n: u128) -> u128 {
        if self.cfg.attention != NanochatAttention::Sdpa {
            return 0;
        }
        4 * n * self.d.c + 4 * n * self.d.h + 256
    }

    /// `apply_rotary_emb`'s backward from `g`, the QK-norm's input gradient: four half-width
    /// products (the negated sine released after the first two), the concatenated gradient
    /// (returned) and the second half's.
    fn eager_rotary_backward(&mut self, u: u128, g: TensorId, sin: TensorId) -> TensorId {
        let half = u / 2;
        let h1 = self.transient(half);
        let h2 = self.transient(half);
        self.out.free(sin);
        let h3 = self.transient(half);
        self.out.free(h3);
        let h4 = self.transient(half);
        self.out.free(g);
        self.out.free(h4);
        let pre = self.transient(u);
        self.out.free(h1);
        let t = self.transient(u);
        self.out.free(h2);
        self.out.free(t);
        pre
    }

    /// One eager layer's backward down to its mix, in the order autograd runs it (the traced
    /// backward of a d12 run, data/traces/nc_rl_d12_b4-step0-events.json.gz, micro-step 1):
    /// each Linear's weight gradient before its input gradient, then the saved weight copy and
    /// input released, then AccumulateGrad's fp32 copy; the norms' gradients added into the
    /// residual's in place. `n` tokens of `u` bytes' activations, `ws` bytes of attention
    /// workspace.
    fn eager_layer_backward(
        &mut self,
        mut s: EagerLayer,
        ix: &super::BlockParams,
        params: &[Param],
        n: u128,
        ws: u128,
    ) {
        let u = self.d.e * n * self.d.c;
        // MLP: c_proj
        let dw = self.weight_grad_raw(params[ix.mlp[1]]);
        let g4 = self.transient(4 * u);
        self.out.free(s.w_proj);
        self.out.free(s.square);
        self.weight_grad_done(ix.mlp[1], params[ix.mlp[1]], dw);
        // square's backward (2 · x · grad: three (B·T, 4C) tensors at once), then relu's
        let t = [(); 3].map(|_| self.transient(4 * u));
        self.out.free(t[1]);
        self.out.free(t[0]);
        self.out.free(g4);
        let r = self.transient(4 * u);
        self.out.free(t[2]);
        self.out.free(s.relu);
        // c_fc
        let dw = self.weight_grad_raw(params[ix.mlp[0]]);
        let g1 = self.transient(u);
        self.out.free(r);
        self.out.free(s.w_fc);
        self.out.free(s.norm2);
        self.weight_grad_done(ix.mlp[0], params[ix.mlp[0]], dw);
        // norm 2's backward
        let n2 = self.transient(u);
        self.out.free(g1);
        self.out.free(s.x_mid);
        self.out.free(s.norm2_stats);
        self.out.free(n2);
        // attention: c_proj (SDPA keeps its input)
        let dw = self.weight_grad_raw(params[ix.proj]);
        let gy = self.transient(u);
        self.out.free(s.w_attn_proj);
        self.weight_grad_done(ix.proj, params[ix.proj], dw);
        // SDPA's backward: dq, dk, dv and its workspace; then what it kept
        let [dq, dk, dv] = [(); 3].map(|_| self.transient(u));
        let w = self.transient(ws);
        self.out.free(w);
        self.out.free(gy);
        for t in [s.mask, s.scaled[1], s.scaled[0], s.v, s.lse, s.y] {
            self.out.free(t);
        }
        self.out.free_all(&mut s.rng);
        // `* 1.2`'s backward, k's first; the QK-norms', each releasing its input and statistics
        let gk = self.transient(u);
        self.out.free(dk);
        let gq = self.transient(u);
        self.out.free(dq);
        let nk = self.transient(u);
        self.out.free(gk);
        self.out.free(s.rotated[1]);
        self.out.free(s.qk_stats[1]);
        let nq = self.transient(u);
        self.out.free(gq);
        self.out.free(s.rotated[0]);
        self.out.free(s.qk_stats[0]);
        let pre_k = self.eager_rotary_backward(u, nk, s.sin[1]);
        let pre_q = self.eager_rotary_backward(u, nq, s.sin[0]);
        // at a value-embedding layer: ve's gradient (gate · dv, kept for the embedding's
        // backward), the gate's product and backward, and `x[..., :12]`'s (B, T, C) gradient,
        // into which c_v's, c_k's and c_q's input gradients are added; elsewhere c_v's is the
        // sum's start and c_k's makes a new one
        let gated = s.ve.is_some();
        let (mut d_ve, mut sum) = (None, None);
        if gated {
            d_ve = self.transient(u);
            let product = self.transient(u);
            self.out.free(product);
            self.out.free(s.ve);
            if let Some(&k) = ix.qkv.get(3) {
                self.weight_grad(k, params[k]);
            }
            self.out.free_all(&mut s.gate);
            sum = self.transient(u);
        }
        let dw = self.weight_grad_raw(params[ix.qkv[2]]);
        let gv = self.transient(u);
        self.out.free(dv);
        self.out.free(s.w_qkv[2]);
        if gated {
            self.out.free(gv);
        } else {
            sum = gv;
        }
        self.weight_grad_done(ix.qkv[2], params[ix.qkv[2]], dw);
        let dw = self.weight_grad_raw(params[ix.qkv[1]]);
        let gk = self.transient(u);
        self.out.free(pre_k);
        self.out.free(s.w_qkv[1]);
        if !gated {
            let total = self.transient(u);
            self.out.free(sum);
            sum = total;
        }
        self.out.free(gk);
        self.weight_grad_done(ix.qkv[1], params[ix.qkv[1]], dw);
        let dw = self.weight_grad_raw(params[ix.qkv[0]]);
        let gq = self.transient(u);
        self.out.free(pre_q);
        self.out.free(s.w_qkv[0]);
        self.out.free(s.norm1);
        self.out.free(gq);
        self.weight_grad_done(ix.qkv[0], params[ix.qkv[0]], dw);
        // norm 1's backward
        let n1 = self.transient(u);
        self.out.free(sum);
        self.out.free(s.mixed);
        self.out.free(s.norm1_stats);
        self.out.free(n1);
        if let Some(k) = ix.value_embed {
            self.embedding_grad_eager(k, params[k], n);
            self.out.free(d_ve);
        }
    }

    /// An embedding's gradient from eager `embedding_dense_backward`: past 3,072 ids, the ids
    /// sorted (int64 values, positions and their counts) and fp32 partial sums
    /// ([`embedding_partial_sums_bytes`]); the (V, C) gradient in the weight's dtype.
    fn embedding_grad_eager(&mut self, k: usize, p: Param, n: u128) {
        let mut temps: Vec<TensorId> = Vec::new();
        if n > 3072 {
            temps.extend((0..3).map(|_| self.transient(8 * n)));
            let rows = u128::from(p.numel()) / self.d.c;
            temps.push(self.transient(embedding_partial_sums_bytes(n, rows, self.d.c)));
        }
        let grad = self.out.alloc(p.bytes(), Term::Grads);
        self.out.free_all(&mut temps);
        self.keep_grad(k, grad);
    }

    /// AccumulateGrad: the first pass after `zero_grad` makes parameter `k`'s `.grad`; a later
    /// pass's gradient is added into it in place and released.
    fn keep_grad(&mut self, k: usize, grad: TensorId) {
        if self.grads[k].is_none() {
            self.grads[k] = grad;
        } else {
            self.out.free(grad);
        }
    }

    /// One optimizer step of chat_rl.py on one rank: per example of the rank's share, its
    /// rollouts (`--num-samples // B` Engine batches of B), the batch get_batch yields — ids
    /// and mask (n, prompt + new tokens) int64, targets, rewards, advantages, kept by the loop
    /// until the next example's replace them — and its passes; then MuonAdamW's step.
    fn rl_step(
        &mut self,
        phase: Phase,
        prompt: u128,
        rl: &RlSettings,
        world: u32,
        held: &mut Vec<TensorId>,
    ) {
        let b = self.d.b;
        let samples = u128::from(rl.samples(self.cfg.device_batch_size));
        let sampling_steps = (samples / b) as u32;
        let length = prompt + u128::from(rl.max_new_tokens);
        let examples = (rl.examples_per_step / world.max(1)).max(1);
        for _ in 0..examples.min(REPLAYED) {
            self.out.mark(Some(Phase::Generate), Stage::Eval, 0);
            for _ in 0..sampling_steps.min(REPLAYED) {
                self.generate(prompt, b, u128::from(rl.max_new_tokens));
            }
            let mut batch = vec![
                self.out.alloc(8 * samples * length, Term::TokenIds),
                self.out.alloc(8 * samples * length, Term::TokenIds),
                self.out.alloc(8 * samples * (length - 1), Term::TokenIds),
            ];
            let unmasked = self.transient(samples * (length - 1));
            self.out.free(unmasked);
            batch.push(self.out.alloc(4 * samples, Term::Scalars));
            batch.push(self.out.alloc(4, Term::Scalars));
            batch.push(self.out.alloc(4 * samples, Term::Scalars));
            self.out.free_all(held);
            *held = batch;
            for pass in 1..=sampling_steps.min(REPLAYED) {
                self.rl_pass(phase, length - 1, pass);
            }
        }
        self.optimizer_step(phase);
    }
}

/// The allocation sequence of rank 0 of a chat_rl.py run on `gpu`: the checkpoint loaded, step
/// 0's pass@k evaluation (B samples of 256 tokens per problem), step 0 (MuonAdamW's state made
/// and its kernels compiled on a cold cache) and steady steps. Under `torchrun`, one step's
/// collective tensors are held while the next runs, as in base_train.py (see [`Ranks`]).
pub(super) fn generate(stage: &StageConfig, rl: &RlSettings, gpu: &Gpu) -> Sequence {
    let model = stage.model_config();
    let s = Shape::of(&model);
    let ranks = Ranks {
        rank: 0,
        held_stashes: 1,
    };
    let mut g = Gen::new(&model, &s, gpu, ranks, true);
    g.load_model();
    let [eval, first, later] = stage.rl_prompt_tokens().map(u128::from);
    if rl.eval_examples > 0 {
        g.out.mark(Some(Phase::Eval), Stage::Eval, 0);
        // passk: (B,) fp32, kept to the next evaluation
        g.out.alloc(4 * g.d.b, Term::Scalars);
        g.generate(eval, g.d.b, EVAL_MAX_TOKENS);
    }
    let world = model.world_size.max(1);
    let mut held = Vec::new();
    g.rl_step(Phase::TrainFirstIter, first, rl, world, &mut held);
    let steady = STEADY_ITERATIONS.max(g.held as u32 + 1);
    for _ in 0..steady {
        g.rl_step(Phase::TrainSteady, later, rl, world, &mut held);
    }
    g.out.finish()
}
