//! `scripts/chat_rl.py`'s memory at 92d63d4: the SFT checkpoint loaded ([`Gen::load_model`]),
//! step 0's pass@k evaluation and every step's rollouts through the Engine ([`Gen::generate`]),
//! then the policy-gradient passes — the **uncompiled** model in training mode with per-token
//! losses (`loss_reduction='none'`), run eagerly, so autograd keeps what each op's backward needs
//! — and MuonAdamW's step, whose fused kernels are compiled (on a first run, on a cold cache).
//! Checked against runs of the real script on real checkpoints
//! (data/measured/nanochat-stages.jsonl, `nc_rl_*`).

use super::{Dims, Gen, Ranks, STEADY_ITERATIONS};
use crate::engine::events::{Phase, Sequence, Stage, TensorId};
use crate::engine::kernels::embedding_partial_sums_bytes;
use crate::gpu::Gpu;
use crate::programs::nanochat::shape::{Owner, Param};
use crate::programs::nanochat::stage::{RlSettings, StageConfig};
use crate::programs::nanochat::Shape;
use crate::terms::Term;

/// `run_gsm8k_eval`'s `max_completion_tokens`, which chat_rl.py leaves at its default.
const EVAL_MAX_TOKENS: u128 = 256;

/// Passes and sampling steps replayed per example, and examples per step: each later one
/// repeats the one before it exactly.
const REPLAYED: u32 = 2;

/// What one eager layer's forward keeps for its backward, in the order the backward frees it.
struct EagerLayer {
    /// c_fc's and c_proj's weight copies and inputs, relu's output (which `.square()` also
    /// keeps), norm 2's input, output and statistics.
    mlp: Vec<TensorId>,
    /// The attention: its output projection's weight copy, SDPA's inputs, output, statistics
    /// and mask, the QK-norms' inputs and statistics, the rotary tables' negated sine, the value
    /// gate's, q, k and v's weight copies, norm 1's input, output and statistics.
    attention: Vec<TensorId>,
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
    /// negated sine (kept: `x1 * (-sin)` needs it for x1's gradient), the concatenation (kept
    /// by the QK-norm that follows).
    fn rotary(&mut self, u: u128, t: u128, kept: &mut Vec<TensorId>) -> TensorId {
        let half = u / 2;
        let a = self.transient(half);
        let b = self.transient(half);
        let y1 = self.transient(half);
        self.out.free(a);
        self.out.free(b);
        kept.push(self.act(self.d.e * t * u128::from(self.s.d) / 2));
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
        let mut att = Vec::new();
        // x = resid_lambdas[i] * x + x0_lambdas[i] * x0: two products, their sum kept by norm 1
        let p = self.transient(u);
        let q = self.transient(u);
        let mixed = self.act(u);
        self.out.free(p);
        self.out.free(q);
        att.push(mixed);
        // the value embedding's lookup (n_kv_head · head_dim = C here), kept by the gate's product
        let ve = self.s.ve[i].then(|| self.act(u)).flatten();
        att.push(ve);
        // norm 1: output and fp32 statistics
        att.push(self.act(u));
        att.push(self.act(4 * n));
        // c_q, c_k, c_v: each its bf16 weight copy (kept) and output
        let mut qkv = Vec::new();
        for _ in 0..3 {
            att.push(self.copy(2 * c * c));
            qkv.push(self.transient(u));
        }
        if self.s.ve[i] {
            // v + 3·sigmoid(ve_gate(x[..., :12])) · ve: the gate's weight copy, its logits, the
            // sigmoid and the gate (both kept), the product, the new v (kept by SDPA)
            att.push(self.copy(2 * 12 * h));
            let logits = self.transient(e * n * h);
            att.push(self.act(e * n * h));
            self.out.free(logits);
            att.push(self.act(e * n * h));
            let product = self.transient(u);
            let v = self.act(u);
            self.out.free(product);
            let v0 = qkv.pop().flatten();
            self.out.free(v0);
            att.push(v);
        } else {
            let v = qkv.pop().flatten();
            att.push(v);
        }
        // rotary q and k; the rotated ones are kept by the QK-norms, and q, k go when both are done
        let rq = self.rotary(u, t, &mut att);
        let rk = self.rotary(u, t, &mut att);
        self.out.free_all(&mut qkv);
        att.push(rq);
        att.push(rk);
        // QK-norm (statistics per head, kept), then `* 1.2`, whose products SDPA keeps
        for _ in 0..2 {
            let normed = self.transient(u);
            att.push(self.act(4 * n * h));
            att.push(self.act(u));
            self.out.free(normed);
        }
        // SDPA: under a mask at a sliding-window layer the sequence outgrows, else causal
        let mut mask_temps = Vec::new();
        if u128::from(self.s.windows[i]) < t {
            let (padded, temps) = self.eager_mask(t);
            att.push(padded);
            mask_temps = temps;
        }
        att.push(self.act(u));
        let rows = if mask_temps.is_empty() {
            t
        } else {
            t.div_ceil(32) * 32
        };
        att.push(self.act(4 * b * h * rows));
        att.extend(self.sdpa_rng_state());
        self.out.free_all(&mut mask_temps);
        // c_proj (its weight copy kept; SDPA's output is already (B, T, H, D)-contiguous) and the
        // residual: x_mid, kept by norm 2
        att.push(self.copy(2 * c * c));
        let proj = self.transient(u);
        let mut mlp = vec![self.act(u)];
        self.out.free(proj);
        // norm 2, c_fc, relu (its output kept by relu's and square's backward), square (kept by
        // c_proj), c_proj, the residual
        mlp.push(self.act(u));
        mlp.push(self.act(4 * n));
        mlp.push(self.copy(8 * c * c));
        let fc = self.transient(4 * u);
        mlp.push(self.act(4 * u));
        self.out.free(fc);
        mlp.push(self.act(4 * u));
        mlp.push(self.copy(8 * c * c));
        let out = self.transient(u);
        let x = self.act(u);
        self.out.free(out);
        (
            EagerLayer {
                mlp,
                attention: att,
            },
            x,
        )
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
        let mut global = vec![
            self.out.alloc(u, Term::ForwardLocals),
            self.out.alloc(4 * n, Term::ForwardLocals),
            self.out.alloc(u, Term::ForwardLocals),
            self.out.alloc(24 * e * tail, Term::ForwardLocals),
            self.copy(2 * 24),
        ];
        let gate_logits = self.transient(e * tail);
        global.push(self.act(e * tail));
        self.out.free(gate_logits);
        global.push(self.act(e));
        global.push(self.act(e * tail));
        let product = self.transient(e * tail * c);
        let sum = self.transient(e * tail * c);
        self.out.free(product);
        global.push(self.out.alloc(u, Term::ForwardLocals));
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
        let mut last = vec![self.act(e)];
        let product = self.transient(u);
        last.push(self.out.alloc(u, Term::FinalActivations));
        self.out.free(product);
        let top = outputs.pop().flatten();
        self.out.free(top);
        last.push(self.out.alloc(4 * n, Term::FinalActivations));
        last.push(self.out.alloc(u, Term::FinalActivations));
        last.push(self.copy(2 * v * c));
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
        // lm_head: the autograd thread's first matmul makes its cuBLAS workspace
        self.backward_workspace();
        let params = self.s.params();
        // zero_grad left no `.grad`: this pass's gradients become them (see `keep_grad`)
        if self.grads.is_empty() {
            self.grads = vec![None; params.len()];
        }
        let mut dx = self.transient(u);
        // lm_head follows the blocks' matrices in registration order
        if let Some(k) = params.iter().rposition(|p| p.owner == Owner::Muon) {
            self.weight_grad(k + 1, params[k + 1]);
        }
        self.out.free(grad);
        // the final norm's backward, then the backout's: dx for the top layer
        self.out.free_all(&mut last);
        let g = self.transient(u);
        self.out.free(dx);
        dx = g;
        let block_ix = super::block_param_indices(self.s);
        let mut outputs: Vec<TensorId> = outputs.into_iter().rev().collect();
        for (i, mut saved) in layers.into_iter().enumerate().rev() {
            let ix = &block_ix[i];
            // MLP: c_proj's input gradient (4C), square's and relu's, c_fc's, norm 2's
            let mut g4 = self.transient(4 * u);
            self.weight_grad(ix.mlp[1], params[ix.mlp[1]]);
            for _ in 0..2 {
                let next = self.transient(4 * u);
                self.out.free(g4);
                g4 = next;
            }
            let g1 = self.transient(u);
            self.weight_grad(ix.mlp[0], params[ix.mlp[0]]);
            self.out.free(g4);
            let g2 = self.transient(u);
            self.out.free(g1);
            self.out.free_all(&mut saved.mlp);
            let merged = self.transient(u);
            self.out.free(g2);
            self.out.free(dx);
            dx = merged;
            // attention: c_proj's input gradient, SDPA's q, k, v gradients, then back through
            // the scales, QK-norms and rotaries to q and k; the value gate's; c_q, c_k, c_v
            let gy = self.transient(u);
            self.weight_grad(ix.proj, params[ix.proj]);
            let mut gqkv: Vec<TensorId> = (0..3).map(|_| self.transient(u)).collect();
            self.out.free(gy);
            for _ in 0..3 {
                for g in gqkv.iter_mut().take(2) {
                    let next = self.transient(u);
                    self.out.free(*g);
                    *g = next;
                }
            }
            if let Some(k) = ix.value_embed {
                let g_ve = self.transient(u);
                self.embedding_grad_eager(k, params[k], n);
                self.out.free(g_ve);
            }
            let gn = self.transient(u);
            for &k in &ix.qkv {
                self.weight_grad(k, params[k]);
            }
            self.out.free_all(&mut gqkv);
            self.out.free_all(&mut saved.attention);
            // norm 1, then the mix: the gradient for the layer's input
            let g_in = self.transient(u);
            self.out.free(gn);
            self.out.free(dx);
            dx = g_in;
            let input = outputs.pop().flatten();
            self.out.free(input);
        }
        // the smear and the embedding: wte's gradient from dx
        self.out.free_all(&mut global);
        self.embedding_grad_eager(0, params[0], n);
        self.out.free(dx);
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
        let copy = (self.d.copies && p.numel() >= 4096).then(|| p.numel() as u128 * 2);
        let bf16 = copy.and_then(|bytes| self.out.alloc(bytes, Term::LmHeadGrads));
        let grad = self.out.alloc(p.bytes(), Term::Grads);
        self.out.free(bf16);
        self.keep_grad(k, grad);
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
