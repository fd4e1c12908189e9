//! The allocation sequence of a nanoGPT run, tensor by tensor, in the order PyTorch allocates and
//! frees them: model load, the first `estimate_loss()`, iteration 0 (micro-steps, clipping, the
//! optimizer step that creates AdamW's state, `zero_grad`) and a steady iteration.
//!
//! The order is read off the allocator traces of real runs (`data/traces`, analysed in
//! `docs/allocation-order.md`): one transformer block's forward and backward, the loss path, the
//! embedding backward, clipping, fused AdamW. Sizes are the physics notes' (`physics.rs`); a test
//! holds the two to each other, so the closed form and this sequence cannot drift apart.

use crate::config::{Attention, TrainConfig};
use crate::engine::buffer_reuse::Kind;
use crate::engine::events::Builder;
pub use crate::engine::events::{Action, Event, Mark, Sequence, Stage};
use crate::gpu::Gpu;
use crate::physics::{Patches, Phase};
use crate::terms::Term;

/// A tensor id (`None`: no tensor, e.g. a zero-byte one).
type T = crate::engine::events::TensorId;

/// Builds a sequence; every helper below appends the events of one piece of nanoGPT. The GPT-2
/// model and its training step are also build-nanogpt's (`programs/build_nanogpt`), whose loop
/// differs: it sets [`Gen::prefetch`] and [`Gen::wpe_rows`].
pub(crate) struct Gen<'a> {
    pub(crate) out: Builder,
    cfg: &'a TrainConfig,
    b: u128,
    /// Tokens per sequence of the forwards (train.py: block_size).
    pub(crate) t: u128,
    c: u128,
    h: u128,
    v: u128,
    s: u128,
    half: bool,
    bf16: bool,
    dropout: bool,
    manual: bool,
    compiled: bool,
    patches: Patches,
    pub(crate) workspace: u128,
    /// train.py fetches the next batch between forward and backward (its `X, Y` are rebound
    /// then, so autograd alone keeps the old ones); build-nanogpt loads each batch at the start of
    /// its micro-step, and its `x, y` live until then.
    pub(crate) prefetch: bool,
    /// Which of the tied weight's two fp32 gradients micro-step 1 keeps as `.grad`: lm_head's
    /// (train.py: data/traces/exp_s_b16_uncapped-, l_b4_default-events.json.gz free the
    /// embedding's, the later buffer) or the embedding's (build-nanogpt's eager traces, which
    /// free lm_head's; what makes the two scripts differ is not isolated yet).
    pub(crate) tied_grad_keeps_lm_head: bool,
    /// Rows of `wpe` (its gradient's size): the model's block_size, whatever length is fed.
    pub(crate) wpe_rows: u128,
    /// torch.compile on a cold Inductor cache (a user's first run of a config): the card's L2
    /// size, the benchmarker's flush buffer (0: no autotuning modelled).
    pub(crate) l2: u128,
    /// The eval graph's, the training forward's and the training backward's kernels are still
    /// to be autotuned on their first call.
    tune: [bool; 3],
    /// The forward thread's cuBLAS workspace is still to be created, by the first matmul of an
    /// eager forward (block 0's qkv projection, once its output is allocated).
    pub(crate) workspace_pending: bool,
    /// The card's streaming multiprocessors (the compiled backward's LayerNorm workspace follows
    /// them).
    pub(crate) sms: u128,
}

/// The tensors one block keeps for its backward.
#[derive(Default)]
struct BlockSaved {
    x_in: T,
    /// ln_1's statistics (and its output where it is saved).
    ln1: Vec<T>,
    /// Everything the attention half keeps, released together in its backward.
    attn: Vec<T>,
    /// Eager: what autograd's Linear nodes of the attention keep — ln_1's 16-bit output and
    /// c_attn's weight copy (freed when c_attn's backward returns, after its dx), c_proj's
    /// weight copy (freed when c_proj's returns, before its dW's fp32 copy). `None` where the
    /// compiled graph keeps them in `attn`.
    linear_inputs: Option<[T; 3]>,
    /// The attention output's dropout mask (freed by its backward, before the rest).
    attn_mask: T,
    x_mid: T,
    ln2: Vec<T>,
    ln2c: T,
    h: T,
    gelu: T,
    w_fc: T,
    w_mproj: T,
    mlp_mask: T,
}

/// The model's parameter tensors (fp32) in `model.to()` order, and each one's group.
struct ParamSlots {
    /// (bytes, decay group) in module order.
    sizes: Vec<(u128, bool)>,
}

impl<'a> Gen<'a> {
    pub(crate) fn new(cfg: &'a TrainConfig, workspace: u128, patches: Patches) -> Self {
        Gen {
            out: Builder::default(),
            cfg,
            b: u128::from(cfg.batch_size),
            t: u128::from(cfg.block_size),
            c: u128::from(cfg.n_embd),
            h: u128::from(cfg.n_head),
            v: u128::from(cfg.vocab_size),
            s: cfg.dtype.bytes(),
            half: cfg.dtype.is_16bit(),
            bf16: cfg.dtype == crate::config::Dtype::Bfloat16,
            dropout: cfg.dropout > 0.0,
            manual: cfg.attention == Attention::Manual,
            compiled: cfg.compile,
            patches,
            workspace,
            prefetch: true,
            tied_grad_keeps_lm_head: true,
            wpe_rows: u128::from(cfg.block_size),
            l2: 0,
            tune: [false; 3],
            workspace_pending: false,
            sms: 132,
        }
    }

    /// Where a forward's first matmul runs: the forward thread's cuBLAS workspace, if it is yet
    /// to be created.
    fn first_matmul(&mut self) {
        if std::mem::take(&mut self.workspace_pending) {
            self.a(self.workspace, Term::CublasWorkspace);
        }
    }

    /// The forward thread's cuBLAS workspace at the first forward (the first eval's, on rank 0):
    /// created by its first matmul, which in eager runs comes inside block 0 (trace
    /// exp_s_b16_uncapped: after the qkv projection's output) and in compiled runs before the
    /// graph's first buffer.
    pub(crate) fn first_forward_workspace(&mut self) {
        if self.compiled && !self.lm_head_padding_timed() {
            self.a(self.workspace, Term::CublasWorkspace);
        } else {
            self.workspace_pending = true;
        }
    }

    /// The first call of the eval graph's or the backward's GELU kernel on a cold Inductor
    /// cache (`graph`: 0 or 2): Triton's autotuner times each candidate config
    /// (`CachingAutotuner.benchmark_all_configs`), first cloning the buffer the kernel writes in
    /// place (`clone_preserve_strides`: the (N, 4C) GELU buffer, 4·s·BTC) and, per timing,
    /// allocating an L2-sized flush buffer (`benchmark_gpu`); both are freed before the kernel's
    /// real launch. Traces nanogpt-compiled-bf16_char_T256_B64_ga1 (eval: 50 MiB + the 48 MiB
    /// clone at `triton_poi_fused__unsafe_view_gelu_5`; iteration 0: the same at the backward's
    /// `..._gelu_gelu_backward_...` kernel) and nanogpt-compiled-fp32_gpt2_T2048_B1_ga1. A warm
    /// cache holds the chosen configs and skips this (measured: nanogpt-compiled-warm.jsonl).
    /// Other kernels are autotuned too, with smaller clones: the GELU one is the largest (the
    /// training forward's writes out of place and clones nothing: [`Gen::tune_kernel`]).
    /// These two graphs `optimize_mem` (`is_inference or is_backward`, `codegen/triton.py`): the
    /// clone is made on the GPU only where it fits below the run's peak so far
    /// (`copy_args_to_cpu_if_needed`: `max_memory_allocated() − memory_allocated()`), else on the
    /// host; the first timing's flush buffer leaves that much room for the next one's.
    fn autotune_gelu(&mut self, graph: usize) {
        if self.l2 == 0 || !self.tune[graph] {
            return;
        }
        self.tune[graph] = false;
        let bytes = 4 * self.s * self.btc();
        let clone = if bytes <= self.out.below_peak().max(self.l2) {
            self.a_as(Kind::External, bytes, Term::InductorAutotune)
        } else {
            None
        };
        let flush = self.a_as(Kind::External, self.l2, Term::InductorAutotune);
        self.free_all(&[flush, clone]);
    }

    pub(crate) fn mark(&mut self, phase: Option<Phase>, stage: Stage, micro_step: u32) {
        self.out.mark(phase, stage, micro_step);
    }

    pub(crate) fn a(&mut self, bytes: u128, term: Term) -> T {
        self.out.alloc(bytes, term)
    }

    /// Inside a compiled graph, what an extern op or the autotuner asks for itself (see
    /// `engine::buffer_reuse::Kind`).
    fn a_as(&mut self, kind: Kind, bytes: u128, term: Term) -> T {
        self.out.alloc_as(kind, bytes, term)
    }

    pub(crate) fn f(&mut self, t: T) {
        self.out.free(t);
    }

    pub(crate) fn free_all(&mut self, ts: &[T]) {
        for t in ts {
            self.f(*t);
        }
    }

    /// The end of a residual branch (attention or MLP): dropout on the branch's output when
    /// training (its mask kept for the backward), the LayerNorm output that fed the branch freed
    /// or kept in `saved_ln` (fp32 runs keep it for the backward), then `x + branch` (fp32).
    /// Returns the new `x` and the dropout mask.
    fn close_branch(
        &mut self,
        out: T,
        ln: T,
        saved_ln: &mut Vec<T>,
        eval: bool,
        act: Term,
    ) -> (T, T) {
        let btc = self.btc();
        let mut out = out;
        let mut mask = None;
        if self.dropout && !eval {
            mask = self.a(btc, act);
            let dropped = self.a(self.s * btc, Term::BlockTransient);
            self.f(out);
            out = dropped;
        }
        if self.half || eval {
            self.f(ln);
        } else {
            saved_ln.push(ln);
        }
        let x = self.a(4 * btc, act);
        self.f(out);
        (x, mask)
    }

    fn bt(&self) -> u128 {
        self.b * self.t
    }
    fn btc(&self) -> u128 {
        self.b * self.t * self.c
    }
    fn btv(&self) -> u128 {
        self.b * self.t * self.v
    }
    /// Rows of the loss alive at once (one slice with the chunked-loss patch).
    fn loss_btv(&self) -> u128 {
        if self.patches.chunked_loss {
            self.btv().div_ceil(crate::physics::LOSS_CHUNKS)
        } else {
            self.btv()
        }
    }

    fn params(&self) -> ParamSlots {
        let sizes = crate::params::tensors(self.cfg)
            .into_iter()
            .map(|t| (t.bytes, t.decay))
            .collect();
        ParamSlots { sizes }
    }

    /// `model.to(device)`: every parameter (and the manual path's causal-mask buffer) in
    /// `nn.Module._apply` order: children depth-first, a module's parameters, then its buffers.
    pub(crate) fn model_load(&mut self) {
        self.mark(None, Stage::ModelLoad, 0);
        for t in crate::params::model_tensors(self.cfg) {
            let term = match t {
                crate::params::ModelTensor::Param(_) => Term::Params,
                crate::params::ModelTensor::MaskBuffer(_) => Term::MaskBuffers,
            };
            self.a(t.bytes(), term);
        }
    }

    pub(crate) fn batch(&mut self) -> (T, T) {
        let bt = self.bt();
        (
            self.a(8 * bt, Term::TokenIds),
            self.a(8 * bt, Term::TokenIds),
        )
    }

    /// 16-bit copy of a Linear weight, as autocast makes it (none in fp32).
    fn cast(&mut self, numel: u128) -> T {
        if self.half {
            self.a(2 * numel, Term::WeightCopies)
        } else {
            None
        }
    }

    /// A LayerNorm's forward (fp32 output, mean and rstd, the statistics kept for the backward
    /// unless `eval`), then the 16-bit copies the next Linear makes of its weight (`weight_numel`
    /// elements) and of its input. Returns (output, kept statistics, weight copy, input copy).
    fn norm_and_cast(&mut self, eval: bool, act: Term, weight_numel: u128) -> (T, Vec<T>, T, T) {
        let (bt, btc) = (self.bt(), self.btc());
        let out = self.a(4 * btc, act);
        let (mean, rstd) = (self.a(4 * bt, act), self.a(4 * bt, act));
        let stats = if eval {
            self.free_all(&[mean, rstd]);
            Vec::new()
        } else {
            vec![mean, rstd]
        };
        let weight = self.cast(weight_numel);
        let input = if self.half {
            self.a(2 * btc, act)
        } else {
            None
        };
        (out, stats, weight, input)
    }

    /// One block's forward under autograd (eager) — trace s_b8_bf16_eager §1.2.
    /// `eval`: nothing is saved (no_grad, or a checkpointed block's first forward); then
    /// `keep_input` keeps the block's input alive (checkpoint saves it for the recompute).
    fn block_forward(&mut self, x_in: T, eval: bool, keep_input: bool) -> (T, BlockSaved) {
        let (btc, c, s) = (self.btc(), self.c, self.s);
        let act = if eval {
            Term::BlockTransient
        } else {
            Term::BlockActivations
        };
        let mut sv = BlockSaved {
            x_in,
            ..BlockSaved::default()
        };
        // ln_1: fp32 output (saved directly in fp32 runs), mean and rstd
        let (ln1, stats, w_attn, ln1c) = self.norm_and_cast(eval, act, 3 * c * c);
        sv.ln1 = stats;
        let qkv = self.a(3 * s * btc, act);
        self.first_matmul();
        if eval {
            self.f(ln1c);
        }
        let mut att = Vec::new();
        if self.manual {
            let bhtt = self.b * self.h * self.t * self.t;
            let tr = Term::BlockTransient;
            // q @ kᵀ: a bmm on reshaped copies of q and kᵀ (saved), then the scale and the
            // causal mask, each a new (B, H, T, T) tensor
            let (qc, kc) = (self.a(s * btc, act), self.a(s * btc, act));
            let scores = self.a(s * bhtt, tr);
            // (data/traces/s_noflash_b4_default-events.json.gz) under no_grad each temporary
            // goes as its op returns; q, k, v (views of qkv) and att (the softmax) live to
            // attn.forward's return
            if eval {
                self.free_all(&[qc, kc]);
            }
            let scaled = self.a(s * bhtt, tr);
            self.f(scores);
            // the causal mask's bool (T, T) `bias == 0`: masked_fill's backward keeps it
            let cond = self.a(self.t * self.t, tr);
            let masked = self.a(s * bhtt, tr);
            self.f(scaled);
            if eval {
                self.f(cond);
            }
            // F.softmax runs in fp32 (autocast's fp32 list): bf16 first copies its input
            let soft_in = if self.bf16 {
                self.a(4 * bhtt, tr)
            } else {
                None
            };
            let soft = self.a(4 * bhtt, act);
            self.free_all(&[soft_in, masked]);
            // attn_dropout keeps a bool mask; its fp32 output feeds att @ v
            let (mask, dropped) = if self.dropout && !eval {
                (self.a(bhtt, act), self.a(4 * bhtt, act))
            } else {
                (None, None)
            };
            // att @ v: autocast casts att to 16-bit (saved); in fp32 the bmm keeps its input
            let att16 = if self.half {
                self.a(2 * bhtt, act)
            } else {
                None
            };
            if self.half {
                self.f(dropped);
            }
            let vc = self.a(s * btc, act);
            let y0 = self.a(s * btc, tr);
            if eval {
                self.free_all(&[att16, vc, mask, dropped]);
            }
            let y = self.a(s * btc, act);
            self.f(y0);
            let dropped = if self.half { None } else { dropped };
            att = if eval {
                vec![soft, y]
            } else {
                vec![qc, kc, cond, soft, mask, dropped, att16, vc, y]
            };
        } else {
            let rng = if self.half && !eval {
                vec![self.a(8, act), self.a(8, act)]
            } else {
                vec![]
            };
            let y = self.a(s * btc, act);
            let lse = if eval {
                None
            } else {
                let lse_t = if self.half {
                    self.t
                } else {
                    self.t.div_ceil(32) * 32
                };
                self.a(4 * self.b * self.h * lse_t, act)
            };
            att.extend(rng);
            att.push(y);
            att.push(lse);
        }
        let w_cproj = self.cast(c * c);
        let proj = self.a(s * btc, Term::BlockTransient);
        if eval {
            // y, then qkv and (manual) att die as soon as c_proj has run
            let y = att.pop().flatten();
            self.f(y);
            self.f(qkv);
            self.free_all(&att);
            att.clear();
        } else if self.manual {
            // the head-split views of qkv were copied for the bmms, so nothing autograd saves
            // keeps qkv: it goes with q, k, v as attn.forward returns
            self.f(qkv);
        }
        // ln_1's output (the attention's argument) dies when attn.forward returns
        let (x_mid, attn_mask) = self.close_branch(proj, ln1, &mut sv.ln1, eval, act);
        sv.attn_mask = attn_mask;
        // ln_2 and the MLP
        let (ln2, stats, w_fc, ln2c) = self.norm_and_cast(eval, act, 4 * c * c);
        sv.ln2 = stats;
        let hh = self.a(4 * s * btc, act);
        if eval {
            self.f(ln2c);
        }
        let g = self.a(4 * s * btc, act);
        if eval {
            self.f(hh);
        }
        let w_mproj = self.cast(4 * c * c);
        let mlp = self.a(s * btc, Term::BlockTransient);
        if eval {
            self.f(g);
        }
        let (x_out, mlp_mask) = self.close_branch(mlp, ln2, &mut sv.ln2, eval, act);
        if eval {
            // x_mid, and the caller's `x`, rebound only now
            self.f(x_mid);
            if !keep_input {
                self.f(x_in);
            }
            // the autocast cache keeps the weight copies until the forward ends
            sv.attn = vec![w_attn, w_cproj, w_fc, w_mproj];
            return (x_out, sv);
        }
        sv.attn = att;
        if !self.manual {
            sv.attn.push(qkv);
        }
        sv.linear_inputs = Some([ln1c, w_attn, w_cproj]);
        sv.x_mid = x_mid;
        sv.ln2c = ln2c;
        sv.h = hh;
        sv.gelu = g;
        sv.w_fc = w_fc;
        sv.w_mproj = w_mproj;
        sv.mlp_mask = mlp_mask;
        (x_out, sv)
    }

    /// The whole forward of `model(X, Y)`; returns the new logits and the saved state.
    pub(crate) fn forward(&mut self, eval: bool, cache: &mut Vec<T>) -> Forward {
        let (btc, tc, t) = (self.btc(), self.t * self.c, self.t);
        let local = Term::ForwardLocals;
        let pos = self.a(8 * t, if eval { local } else { Term::FinalActivations });
        let tok = self.a(4 * btc, local);
        let pemb = self.a(4 * tc, local);
        let mut x = self.a(
            4 * btc,
            if eval {
                Term::BlockTransient
            } else {
                Term::BlockActivations
            },
        );
        let mut emb_mask = None;
        if self.dropout && !eval {
            emb_mask = self.a(btc, Term::EmbeddingDropoutMask);
            let out = self.a(4 * btc, Term::BlockActivations);
            self.f(x);
            x = out;
        }
        let mut blocks = Vec::new();
        let mut checkpointed = Vec::new();
        let checkpoint = self.patches.checkpoint_blocks && !eval;
        for _ in 0..self.cfg.n_layer {
            let (out, saved) = self.block_forward(x, eval || checkpoint, checkpoint);
            if eval || checkpoint {
                // autocast keeps the weight copies until the forward's `with ctx` ends
                cache.extend(saved.attn.iter().copied());
            } else {
                blocks.push(saved);
            }
            if checkpoint {
                checkpointed.push(x);
            }
            x = out;
        }
        // ln_f, lm_head, the loss
        let final_term = if eval {
            Term::BlockTransient
        } else {
            Term::FinalActivations
        };
        let lnf = self.a(4 * btc, local);
        let stats = [
            self.a(4 * self.bt(), final_term),
            self.a(4 * self.bt(), final_term),
        ];
        if eval {
            // under no_grad nothing keeps the last block's output once `x` is rebound
            self.free_all(&[stats[0], stats[1], x]);
        }
        let w_lm = self.cast(self.v * self.c);
        let lnfc = if self.half {
            self.a(2 * btc, final_term)
        } else {
            None
        };
        let lbtv = self.loss_btv();
        let logits = self.a(self.s * lbtv, Term::Logits);
        if eval {
            // lm_head's 16-bit input: nothing saves it under no_grad
            self.f(lnfc);
        }
        let lsm = self.a(self.s * lbtv, Term::LogSoftmax);
        let cp32 = if self.half {
            self.a(4 * lbtv, Term::LossFp32Copy)
        } else {
            None
        };
        let loss = self.a(4, Term::LossGrads);
        let tw = self.a(4, Term::LossGrads);
        if eval {
            self.free_all(&[tw, cp32, lsm, pos, tok, pemb, lnf, loss]);
            cache.push(w_lm);
        } else {
            self.free_all(&[tok, pemb]);
            if self.half {
                self.f(lnf);
            }
        }
        let logits = if self.patches.chunked_loss {
            // the chunked loss returns no logits: its slices die inside the loss
            self.f(logits);
            None
        } else {
            logits
        };
        Forward {
            logits,
            checkpointed,
            pos,
            x_last: x,
            lnf: if self.half { None } else { lnf },
            stats,
            w_lm,
            lnfc,
            lsm,
            cp32,
            loss,
            tw,
            emb_mask,
            tied_grad: None,
            blocks,
        }
    }

    /// The compiled forward: the same saved tensors per block (36·BTC), LayerNorm outputs cast in
    /// the fused kernel, only rstd saved, pos_emb kept, the loss reduced to row statistics. The
    /// eval graph ([`Gen::forward_compiled_eval`]) and a training forward with dropout
    /// ([`Gen::forward_compiled_dropout`]) are written from their generated code; GPT-2's
    /// training forward without dropout is not yet.
    pub(crate) fn forward_compiled(&mut self, eval: bool) -> Forward {
        self.time_lm_head_padding(eval);
        if eval {
            return self.forward_compiled_eval();
        }
        if self.dropout && !self.manual && !self.cfg.bias {
            return self.forward_compiled_dropout();
        }
        let (btc, bt, c, s, tc) = (self.btc(), self.bt(), self.c, self.s, self.t * self.c);
        let act = Term::BlockActivations;
        let pos = self.a(8 * self.t, Term::FinalActivations);
        let pemb = self.a(4 * tc, Term::ForwardLocals);
        let mut x = self.a(4 * btc, act);
        let emb_mask = if self.dropout {
            self.a(btc, Term::EmbeddingDropoutMask)
        } else {
            None
        };
        let mut blocks = Vec::new();
        let mut pending: Vec<T> = Vec::new();
        for _ in 0..self.cfg.n_layer {
            let ln1c = self.a(s * btc, act);
            let r1 = self.a(4 * bt, act);
            let w_attn = self.cast(3 * c * c);
            let qkv = self.a(3 * s * btc, act);
            let y = self.a(s * btc, act);
            let lse = self.a(4 * self.b * self.h * self.t, act);
            let w_cproj = self.cast(c * c);
            pending.push(self.a(s * btc, Term::BlockTransient));
            let x_mid = self.a(4 * btc, act);
            let mask1 = if self.dropout { self.a(btc, act) } else { None };
            let ln2c = self.a(s * btc, act);
            let r2 = self.a(4 * bt, act);
            let w_fc = self.cast(4 * c * c);
            let hh = self.a(4 * s * btc, act);
            let g = self.a(4 * s * btc, act);
            // a first run times GELU's kernel (out of place: no clone) after its output
            self.tune_last_forward_kernel();
            let w_mproj = self.cast(4 * c * c);
            pending.push(self.a(s * btc, Term::BlockTransient));
            let mask2 = if self.dropout { self.a(btc, act) } else { None };
            let x_out = self.a(4 * btc, act);
            // Inductor frees the matmul outputs in batches after the next fused kernel
            if pending.len() >= 4 {
                let batch: Vec<T> = std::mem::take(&mut pending);
                self.free_all(&batch);
            }
            blocks.push(BlockSaved {
                x_in: x,
                ln1: vec![r1],
                attn: vec![ln1c, w_attn, qkv, y, lse, w_cproj],
                linear_inputs: None,
                attn_mask: mask1,
                x_mid,
                ln2: vec![r2],
                ln2c,
                h: hh,
                gelu: g,
                w_fc,
                w_mproj,
                mlp_mask: mask2,
            });
            x = x_out;
        }
        let pending_left = std::mem::take(&mut pending);
        self.free_all(&pending_left);
        let lnfc = self.a(s * btc, Term::FinalActivations);
        let rf = self.a(4 * bt, Term::FinalActivations);
        self.compiled_head([pos, pemb, emb_mask, x, lnfc, rf], blocks)
    }

    /// The compiled eval graph (no_grad), kernel by kernel as Inductor's wrapper runs it, one
    /// planned graph (data/inductor/oc_ng_{bf16,fp32}_char_T256_B64.tgz and
    /// data/inductor/reuse-logs/: the module whose `call()` takes `arg*_1`). Each buffer dies
    /// after the kernel that reads it last, and the wrapper's pool hands its storage on
    /// (`engine::buffer_reuse`: ln_1's output to c_proj's, SDPA's output to ln_2's, the GELU
    /// buffer to the next block's c_fc output where the graph's estimate allows it). GELU writes
    /// c_fc's output in place. The residual stream is a lazy sum: a kernel that reads it reads
    /// the stored sum (or, before there is one, the embedding's three inputs) and every branch
    /// output since, and where that makes five reads it stores the sum (Inductor's
    /// `realize_reads_threshold`, 4) — at block 0's end in a new fp32 buffer (in fp32: in place
    /// of attention's output, the same size), then in place every second block — and the
    /// branch outputs it summed die. The graph returns the logits and the loss, which its
    /// estimate owes from its start: GPT-2's fp32 logits leave it no room to hold a dead buffer
    /// across a kernel (docs/allocation-order.md §17).
    fn forward_compiled_eval(&mut self) -> Forward {
        let (btc, c, s, layers) = (self.btc(), self.c, self.s, self.cfg.n_layer);
        let tr = Term::BlockTransient;
        self.out.begin_graph();
        let pos = self.a(8 * self.t, Term::FinalActivations);
        // a first run times block 0's two LayerNorm kernels (looped reductions, the embedding's
        // gather inside) and its weight copies' kernels (trace ngc_h200_bf16_char_T256_B476_ga1)
        let mut ln = self.a(s * btc, tr);
        self.tune_kernel(0, true);
        let (mut x, mut pending): (T, Vec<T>) = (None, Vec::new());
        for layer in 0..layers {
            let w = self.cast(3 * c * c);
            self.tune_kernel(0, self.half);
            let qkv = self.a(3 * s * btc, tr);
            self.free_all(&[ln, w]);
            // SDPA's output, the op's own (fp32: the memory-efficient kernel; 16-bit: cuDNN's);
            // neither asks the allocator for more here (traces ngc_h200_fp32_char_*: qkv, the
            // output, qkv freed)
            let y = self.a_as(Kind::OpOutput, s * btc, tr);
            self.f(qkv);
            let w = self.cast(c * c);
            self.tune_kernel(0, self.half);
            pending.push(self.a(s * btc, tr));
            self.free_all(&[y, w]);
            ln = self.a(s * btc, tr);
            self.tune_kernel(0, layer == 0);
            let w = self.cast(4 * c * c);
            self.tune_kernel(0, self.half);
            let h = self.a(4 * s * btc, tr);
            self.free_all(&[ln, w]);
            self.out.in_place(4 * s * btc);
            self.autotune_gelu(0);
            let w = self.cast(4 * c * c);
            pending.push(self.a(s * btc, tr));
            self.free_all(&[h, w]);
            // the next kernel: the residual, then the next block's ln_1 or ln_f
            if layer + 1 == layers {
                let attn_out = pending.remove(pending.len() - 2);
                self.f(attn_out);
                break;
            }
            let stored = pending.len() + if x.is_none() { 3 } else { 1 } >= 5;
            if stored {
                let first = x.is_none();
                if first {
                    if !self.half {
                        self.f(pending.remove(0));
                    }
                    x = self.a(4 * btc, tr);
                }
                // the sum written over storage it reads: the stored sum, or (fp32, the first
                // time) attention's output; 16-bit stores its first in a new buffer
                if !(first && self.half) {
                    self.out.in_place(4 * btc);
                }
            }
            ln = self.a(s * btc, tr);
            if stored {
                self.free_all(&std::mem::take(&mut pending));
            }
        }
        let lnfc = self.a(s * btc, Term::FinalActivations);
        pending.push(x);
        self.free_all(&pending);
        let fwd = self.compiled_head([pos, None, None, None, lnfc, None], Vec::new());
        self.out.graph_output(fwd.logits);
        self.out.graph_output(fwd.loss);
        let [_, stats] = fwd.stats;
        self.free_all(&[stats, fwd.lsm, fwd.loss, lnfc, fwd.w_lm, pos]);
        self.out.end_graph();
        Forward {
            logits: fwd.logits,
            ..Forward::default()
        }
    }

    /// The compiled forward's end, once ln_f's output is made: lm_head's weight copy, the logits
    /// (gone at once under the chunked-loss patch), the loss's two row statistics and its value;
    /// with what the forward made before them (the positions, pos_emb, the embeddings' dropout
    /// mask, the last residual, ln_f's output and statistic) and the blocks' saved tensors, what
    /// it leaves.
    fn compiled_head(&mut self, made: [T; 6], blocks: Vec<BlockSaved>) -> Forward {
        let [pos, tw, emb_mask, x_last, lnfc, rf] = made;
        let mut fwd = Forward {
            pos,
            tw,
            emb_mask,
            x_last,
            lnfc,
            stats: [rf, None],
            blocks,
            ..Forward::default()
        };
        let (bt, s) = (self.bt(), self.s);
        fwd.w_lm = self.cast(self.v * self.c);
        fwd.logits = self.a(s * self.loss_btv(), Term::Logits);
        fwd.stats[1] = self.a(4 * bt, Term::LossGrads);
        fwd.lsm = self.a(4 * bt, Term::LossGrads);
        fwd.loss = self.a(4, Term::LossGrads);
        if self.patches.chunked_loss {
            self.f(fwd.logits.take());
        }
        fwd
    }

    /// The compiled training forward of a model with dropout, kernel by kernel as Inductor's
    /// wrapper runs it, one graph (data/inductor/oc_ng_{bf16,fp16,fp32}_char_T256_B64.tgz, the
    /// module whose `call()` takes `primals_*`; the first run's order in the trace
    /// data/traces/ngc_h200_bf16_char_T256_B64_ga1). Each dropout's mask is made by the kernel
    /// after it; one fp32 residual stream is written in place by every block's second kernel
    /// (16-bit: a new buffer at block 0; fp32: c_proj's output, which that kernel consumes) and
    /// saved for ln_f's backward; the attention's and the MLP's c_proj outputs
    /// die in the block's second kernel, and their storage goes to the MLP's c_proj output and
    /// the next block's ln_1 output (`engine::buffer_reuse`, in the order of their names).
    fn forward_compiled_dropout(&mut self) -> Forward {
        let (btc, bt, c, s, layers) = (self.btc(), self.bt(), self.c, self.s, self.cfg.n_layer);
        let (act, tr) = (Term::BlockActivations, Term::BlockTransient);
        self.out.begin_graph();
        let pos = self.a(8 * self.t, Term::FinalActivations);
        let pemb = self.a(4 * self.t * c, Term::ForwardLocals);
        // the dropouts' RNG seeds (one int64 per dropout), used up by ln_f's kernel
        let seeds = self.a(8 * (2 * u128::from(layers) + 1), Term::ForwardLocals);
        // the first kernel: the embeddings, their dropout, ln_1 (its mean and rstd both kept)
        let emb_mask = self.a(btc, Term::EmbeddingDropoutMask);
        let mut x1 = self.a(4 * btc, act);
        let mut ln1 = vec![self.a(4 * bt, act), self.a(4 * bt, act)];
        let mut ln1c = self.a(s * btc, act);
        let (mut resid, mut mlp_out): (T, T) = (None, None);
        let mut blocks = Vec::new();
        for layer in 0..layers {
            // Inductor's names of the two c_proj outputs (`bufN`: block 0's 19 and 32, then 29
            // more per block; fp32: 17 and 28, then 25 more): they die in one kernel, and its
            // frees pool them in the string order of their names
            let (first, stride, step) = if self.half {
                (19, 29, 13)
            } else {
                (17, 25, 11)
            };
            let attn_name = first + stride * layer;
            let w_attn = self.cast(3 * c * c);
            self.tune_kernel(1, self.half);
            let qkv = self.a(3 * s * btc, act);
            let y = self.a_as(Kind::OpOutput, s * btc, act);
            let lse = self.a_as(Kind::OpOutput, 4 * self.b * self.h * self.t, act);
            let w_cproj = self.cast(c * c);
            self.tune_kernel(1, self.half);
            self.out.name_from(attn_name);
            let mut attn_out = self.a(s * btc, tr);
            // the second kernel: attention's dropout, x + attn into the residual, ln_2
            let attn_mask = self.a(btc, act);
            if resid.is_none() {
                if !self.half {
                    self.f(attn_out.take());
                }
                resid = self.a(4 * btc, tr);
            }
            let x_mid = self.a(4 * btc, act);
            let ln2c = self.a(s * btc, act);
            let ln2 = vec![self.a(4 * bt, act)];
            self.free_all(&[mlp_out, attn_out]);
            let w_fc = self.cast(4 * c * c);
            self.tune_kernel(1, self.half);
            let h = self.a(4 * s * btc, act);
            let w_mproj = self.cast(4 * c * c);
            let gelu = self.a(4 * s * btc, act);
            self.tune_last_forward_kernel();
            self.out.name_from(attn_name + step);
            mlp_out = self.a(s * btc, tr);
            // the next kernel: the MLP's dropout, then the next block's ln_1 (or ln_f)
            let mlp_mask = self.a(btc, act);
            blocks.push(BlockSaved {
                x_in: x1,
                ln1: std::mem::take(&mut ln1),
                attn: vec![ln1c, w_attn, qkv, y, lse, w_cproj],
                linear_inputs: None,
                attn_mask,
                x_mid,
                ln2,
                ln2c,
                h,
                gelu,
                w_fc,
                w_mproj,
                mlp_mask,
            });
            if layer + 1 < layers {
                x1 = self.a(4 * btc, act);
                ln1c = self.a(s * btc, act);
                ln1.push(self.a(4 * bt, act));
            }
        }
        let lnfc = self.a(s * btc, Term::FinalActivations);
        let rf = self.a(4 * bt, Term::FinalActivations);
        self.free_all(&[mlp_out, seeds]);
        let fwd = self.compiled_head([pos, pemb, emb_mask, resid, lnfc, rf], blocks);
        self.out.end_graph();
        fwd
    }

    /// Inductor's pad_mm pass on a cold cache, compiling the eval graph and then the training
    /// graph, where the vocabulary is off the matmul alignment (shakespeare_char's 65; GPT-2's
    /// 50,304 is aligned): it times lm_head's matmul on random inputs laid out as the real ones,
    /// unpadded and padded to the alignment (8 elements in 16-bit: 72; 4 in fp32: 68), first once
    /// and then once per repetition beside an L2-sized flush buffer (`should_pad_bench`). The eval
    /// graph's timing is the run's first matmul, so it makes the forward thread's cuBLAS
    /// workspace; the training graph's times the backward's d(logits)·W (its input and a padded
    /// copy, (N, C) outputs) and then the forward's padded product again (traces
    /// ngc_h200_{bf16,fp32}_char_T256_B64_*, ngc_h200_bf16_char_T256_B476_ga1; weights and their
    /// padded copies are below the large pool and left out).
    fn time_lm_head_padding(&mut self, eval: bool) {
        let (s, align) = (self.s, 16 / self.s);
        if !self.tune[usize::from(!eval)] || !self.lm_head_padding_timed() {
            return;
        }
        let (nc, nv, nvp) = (
            s * self.btc(),
            s * self.bt() * self.v,
            s * self.bt() * self.v.next_multiple_of(align),
        );
        if eval {
            let x = self.a(nc, Term::InductorAutotune);
            self.timed_output(nv, true);
            self.timed_output(nv, false);
            self.timed_output(nvp, true);
            self.timed_output(nvp, false);
            self.f(x);
            return;
        }
        let g = self.a(nv, Term::InductorAutotune);
        let gp = self.a(nvp, Term::InductorAutotune);
        for _ in 0..2 {
            self.timed_output(nc, true);
            self.timed_output(nc, false);
        }
        self.free_all(&[g, gp]);
        // the forward's: its unpadded time is known from the eval graph's (one flush buffer, no
        // repetitions), the padded one is timed again
        let g = self.a(nv, Term::InductorAutotune);
        let x = self.a(nc, Term::InductorAutotune);
        self.timed_output(0, false);
        self.timed_output(nvp, true);
        self.timed_output(nvp, false);
        self.free_all(&[g, x]);
    }

    /// Whether pad_mm times lm_head's matmul: a cold compile, and the vocabulary off the 16-byte
    /// alignment.
    fn lm_head_padding_timed(&self) -> bool {
        self.l2 > 0 && !self.v.is_multiple_of(16 / self.s)
    }

    /// One step of a compile-time timing: the first call's output (`first`), with the forward
    /// thread's cuBLAS workspace if it is still to be made; else the repetitions' outputs, one at
    /// a time, beside the L2 flush buffer.
    fn timed_output(&mut self, bytes: u128, first: bool) {
        let flush = if first {
            None
        } else {
            self.a(self.l2, Term::InductorAutotune)
        };
        let out = self.a(bytes, Term::InductorAutotune);
        if first {
            self.first_matmul();
        }
        self.free_all(&[out, flush]);
    }

    /// A first run's autotuning of a kernel of graph `graph` (`tuned`: it has more than one
    /// config) at its first launch: the benchmarker times each config beside an L2-sized flush
    /// buffer. In the training forward the timed kernels write out of place (a weight's 16-bit
    /// copy, GELU's output), so nothing is cloned (trace ngc_h200_bf16_char_T256_B64_ga1: two
    /// 60 MiB requests after each of block 0's three weight copies' and GELU's outputs).
    fn tune_kernel(&mut self, graph: usize, tuned: bool) {
        if tuned && self.l2 > 0 && self.tune[graph] {
            let flush = self.a_as(Kind::External, self.l2, Term::InductorAutotune);
            self.f(flush);
        }
    }

    /// [`Gen::tune_kernel`] for the training forward's GELU, the last of its kernels a first run
    /// times (all in block 0): later blocks launch tuned kernels.
    fn tune_last_forward_kernel(&mut self) {
        self.tune_kernel(1, true);
        self.tune[1] = false;
    }

    /// One block's backward (eager) — trace §1.4. `g` is the residual-stream gradient (4·BTC).
    fn block_backward(&mut self, mut sv: BlockSaved, keep_grads: bool, grads: &mut Vec<T>) {
        let (btc, c, s) = (self.btc(), self.c, self.s);
        let tr = Term::BlockTransient;
        // A weight gradient in the matmul's dtype, then (16-bit) its fp32 copy: kept as `.grad`
        // in micro-step 1, added in place and freed in later ones. LayerNorm grads are fp32.
        let dw_first = |gen: &mut Gen, numel: u128| {
            gen.a(if gen.half { 2 } else { 4 } * numel, Term::FreshGrads)
        };
        // The residual gradient reaching a branch: cast to the branch's 16-bit dtype, then
        // through the dropout's backward (which frees its mask).
        let branch_grad = |gen: &mut Gen, mask: T| {
            let mut gin = if gen.half { gen.a(2 * btc, tr) } else { None };
            if mask.is_some() {
                let dd = gen.a(s * btc, tr);
                gen.f(mask);
                gen.f(gin);
                gin = dd;
            }
            gin
        };
        let (ln2c, hh, g, w_fc, w_mproj, mlp_mask) =
            (sv.ln2c, sv.h, sv.gelu, sv.w_fc, sv.w_mproj, sv.mlp_mask);
        // MLP
        let gin = branch_grad(self, mlp_mask);
        let d = dw_first(self, 4 * c * c);
        let dgelu = self.a(4 * s * btc, tr);
        self.free_all(&[gin, w_mproj, g]);
        // (compiled, first backward on a cold cache: GELU's backward kernel, in place on dgelu)
        self.autotune_gelu(2);
        self.weight_grad_done(d, 4 * c * c, keep_grads, grads);
        let dh = self.a(4 * s * btc, tr);
        self.free_all(&[dgelu, hh]);
        let d = dw_first(self, 4 * c * c);
        let dx16 = self.a(s * btc, tr);
        self.free_all(&[dh, w_fc, ln2c]);
        self.branch_backward_end(dx16, d, 4 * c * c, sv.x_mid, sv.ln2, keep_grads, grads);
        // attention
        let attn_mask = sv.attn_mask;
        let gin = branch_grad(self, attn_mask);
        let d = dw_first(self, c * c);
        let dy = self.a(s * btc, tr);
        self.f(gin);
        // (data/traces/l_b4_default-events.json.gz: c_proj's weight copy goes before the fp32
        // copy of its dW, c_attn's and its input after c_attn's dx)
        let [ln1c, w_attn, w_cproj] = sv.linear_inputs.unwrap_or_default();
        self.f(w_cproj);
        if self.manual {
            // and, the hand-written attention's head merge being c_proj's only keeper, its input
            let y = sv.attn.pop().flatten();
            self.f(y);
        }
        self.weight_grad_done(d, c * c, keep_grads, grads);
        let dq: Vec<T> = if self.manual {
            self.manual_attention_backward(std::mem::take(&mut sv.attn), dy)
        } else {
            let dq = vec![
                self.a(s * btc, tr),
                self.a(s * btc, tr),
                self.a(s * btc, tr),
            ];
            self.sdpa_backward_workspace();
            self.f(dy);
            dq
        };
        for t in sv.attn.iter() {
            self.f(*t);
        }
        let dqkv = self.a(3 * s * btc, tr);
        self.free_all(&dq);
        let d = dw_first(self, 3 * c * c);
        let dx16 = self.a(s * btc, tr);
        self.free_all(&[dqkv, ln1c, w_attn]);
        self.branch_backward_end(dx16, d, 3 * c * c, sv.x_in, sv.ln1, keep_grads, grads);
    }

    /// The compiled backward where it is not yet written from Inductor's generated code (Linears
    /// with biases — build-nanogpt — and the hand-written attention): the eager backward's blocks
    /// with the compiled graph's loss and ends, as the traces of those runs show them. The graph's
    /// leftovers die as it returns; its gradients go to `fresh`.
    fn compiled_backward_eager_shaped(
        &mut self,
        fwd: &mut Forward,
        first_backward: bool,
        fresh: &mut Vec<T>,
        xy: &mut (T, T),
    ) {
        let (s, btc, vc) = (self.s, self.btc(), self.v * self.c);
        // 16-bit: lm_head's weight gradient first, then dlogits dies after dx. fp32: the
        // graph computes dx first and lm_head's weight gradient only at the end, beside the
        // embedding's (trace nanogpt-compiled-fp32_gpt2_T2048_B1_ga1: at the backward peak
        // and at the last block's GELU backward three (N, V) fp32 buffers are live, logits,
        // the zero tangent and dlogits, and no 4·V·C buffer from the backward graph)
        let [tangent, dlogits, dw_lm] = self.compiled_loss_grads(fwd, first_backward, false, xy);
        // (fp32 recomputes ln_f's output for lm_head's weight gradient at the end rather
        // than keeping it: the fp32 runs' training peaks measure no (N, C) more)
        self.f(fwd.lnfc);
        let dx = self.a(s * btc, Term::BlockTransient);
        let dlogits = if self.half {
            self.free_all(&[dlogits, fwd.w_lm]);
            None
        } else {
            dlogits
        };
        let dx32 = self.a(4 * btc, Term::BlockTransient);
        self.f(dx);
        let g = self.a(4 * btc, Term::BlockTransient);
        self.free_all(&[dx32, fwd.x_last, fwd.stats[0]]);
        for sv in fwd.blocks.drain(..).rev() {
            self.block_backward(sv, true, fresh);
        }
        // the tied weight's gradient is lm_head's, in fp32, plus the embedding's: the graph
        // upcasts lm_head's bf16 one at the end, beside the embedding's dense buffer
        // (measured: build-nanogpt's compiled B1 T512, 4·V·C at the end of every backward)
        fwd.tied_grad = self.a(4 * vc, Term::TiedWeightGrad);
        // fp32: that is lm_head's own weight gradient (dlogitsᵀ · ln_f's output); dlogits
        // dies with it
        self.f(dlogits);
        self.embedding_backward(fwd, g, true, fresh, xy);
        self.free_all(&[tangent, dw_lm, fwd.tw]);
    }

    /// The opening of a compiled backward: autograd's zero tangent for the logits the graph also
    /// returns (made before the graph runs), then — inside the graph where its buffers are planned
    /// (`planned`) — d(logits), the loss's row statistics freed, lm_head's 16-bit weight gradient
    /// and, in the first backward, the autograd thread's cuBLAS workspace with its first matmul.
    /// Returns (tangent, d(logits), lm_head's 16-bit dW).
    fn compiled_loss_grads(
        &mut self,
        fwd: &Forward,
        first_backward: bool,
        planned: bool,
        xy: &mut (T, T),
    ) -> [T; 3] {
        let (s, lbtv) = (self.s, self.loss_btv());
        let tangent = if self.patches.chunked_loss {
            None
        } else {
            self.a(s * lbtv, Term::ZeroTangent)
        };
        if planned {
            self.out.begin_graph();
        }
        let dlogits = self.a(s * lbtv, Term::LossGrads);
        // the loss's saved statistics go once d(logits) is made, and with them train.py's Y,
        // which the prefetch rebound: the graph held the last reference (the trace
        // ngc_h200_bf16_gpt2_T1024_B8_ga2 frees every micro-step's Y here; vramfit had kept them
        // all, 8·B·T bytes a micro-step)
        let y = if self.prefetch { xy.1.take() } else { None };
        self.free_all(&[fwd.stats[1], fwd.lsm, y]);
        let dw_lm = if self.half {
            self.a(s * self.v * self.c, Term::LmHeadGrads)
        } else {
            None
        };
        if first_backward {
            // a first run times the loss's backward kernel here, a persistent reduction over the
            // vocabulary where it is at most 1,024 wide (shakespeare_char's; GPT-2's is a looped
            // one, untimed): the trace ngc_h200_bf16_char_T256_B64_ga1 takes three flush buffers
            // between d(logits) and the workspace, which then lies where they did
            self.tune_kernel(2, self.v <= 1024);
            self.a_as(Kind::External, self.workspace, Term::CublasWorkspace);
        }
        [tangent, dlogits, dw_lm]
    }

    /// The backward graph of a compiled run with SDPA and bias-free Linears (train.py's default),
    /// node by node in the order of Inductor's schedule, each buffer allocated where its node
    /// makes it and freed after the node that reads it last (PyTorch 2.11's generated code for it:
    /// data/inductor/oc_ng_bf16_char_T256_B64.tgz, dropout 0.2, oc_ng_bf16_gpt2_T1024_B8.tgz, no
    /// dropout, oc_ng_fp32_char_T256_B64.tgz; `tools/inductor/wrapper_allocations.py`). Which dead
    /// buffer's storage each new one takes is the wrapper's memory planning, applied to the graph
    /// as a whole (`engine::buffer_reuse`): once the first block has run, the fp32 weight
    /// gradients the graph returns are most of its new requests. Those gradients go to `fresh`.
    fn compiled_backward(
        &mut self,
        fwd: &mut Forward,
        first_backward: bool,
        fresh: &mut Vec<T>,
        xy: &mut (T, T),
    ) {
        let (s, btc, c) = (self.s, self.btc(), self.c);
        let (vc, tr) = (self.v * self.c, Term::BlockTransient);
        // the loss: d(logits); 16-bit: lm_head's weight gradient (kept for the tied weight's sum
        // at the end) and dx, then d(logits) goes; fp32: dx only, d(logits) and ln_f's output
        // kept for lm_head's weight gradient at the end
        let [tangent, dlogits, dw_lm] = self.compiled_loss_grads(fwd, first_backward, true, xy);
        let lnfc = if self.half {
            self.f(fwd.lnfc);
            None
        } else {
            fwd.lnfc
        };
        let dx = self.a(s * btc, tr);
        let dlogits = if self.half {
            self.free_all(&[dlogits, fwd.w_lm]);
            None
        } else {
            dlogits
        };
        // ln_f's backward, fused with the last block's MLP dropout: the fp32 residual gradient
        // (updated in place by every later LayerNorm backward) and the branch's gradient (dx
        // itself where no dropout mask applies)
        let g = self.a(4 * btc, tr);
        let mut blocks = std::mem::take(&mut fwd.blocks);
        let last_mask = blocks.last_mut().and_then(|b| b.mlp_mask.take());
        let mut gm = self.ln_backward(dx, last_mask.is_some(), fresh);
        self.free_all(&[fwd.stats[0], last_mask, fwd.x_last]);
        while let Some(sv) = blocks.pop() {
            // MLP: c_proj's dW and dx; GELU's backward in place on that dx (the node that also
            // copies a 16-bit dW to fp32); c_fc's dW and dx
            let dw = self.weight_grad(4 * c * c, fresh);
            self.f(sv.gelu);
            let dg = self.a(4 * s * btc, tr);
            self.free_all(&[gm, sv.w_mproj]);
            // (a first run times that GELU backward kernel here, on a copy of dg)
            self.autotune_gelu(2);
            self.weight_grad_copied(dw, 4 * c * c, fresh);
            self.f(sv.h);
            let dw = self.weight_grad(4 * c * c, fresh);
            self.f(sv.ln2c);
            let dxf = self.a(s * btc, tr);
            self.free_all(&[dg, sv.w_fc]);
            self.weight_grad_copied(dw, 4 * c * c, fresh);
            // ln_2's backward into g, fused with the attention output's dropout
            let ga = self.ln_backward(dxf, sv.attn_mask.is_some(), fresh);
            self.free_all(&sv.ln2);
            self.free_all(&[sv.attn_mask, sv.x_mid]);
            // attention: c_proj's dW and dx (dy); SDPA's backward, whose three gradients are the
            // op's own allocations, then the graph's; dqkv; c_attn's dW and dx
            let [ln1c, w_attn, qkv, y, lse, w_cproj] = sv.attn[..] else {
                unreachable!("a compiled block saves six attention tensors")
            };
            let dw = self.weight_grad(c * c, fresh);
            let dy = self.a(s * btc, tr);
            self.free_all(&[ga, w_cproj]);
            self.weight_grad_copied(dw, c * c, fresh);
            let dqkv: Vec<T> = (0..3)
                .map(|_| self.a_as(Kind::OpOutput, s * btc, tr))
                .collect();
            self.sdpa_backward_workspace();
            self.free_all(&[dy, y, lse, qkv]);
            let cat = self.a(3 * s * btc, tr);
            self.free_all(&dqkv);
            let dw = self.weight_grad(3 * c * c, fresh);
            self.f(ln1c);
            let dxa = self.a(s * btc, tr);
            self.free_all(&[w_attn, cat]);
            self.weight_grad_copied(dw, 3 * c * c, fresh);
            // ln_1's backward into g, fused with the previous block's MLP dropout (block 0's
            // goes on to the embeddings)
            let prev_mask = blocks.last_mut().and_then(|b| b.mlp_mask.take());
            gm = if blocks.is_empty() {
                self.ln_weight_grad(fresh);
                self.f(dxa);
                None
            } else {
                self.ln_backward(dxa, prev_mask.is_some(), fresh)
            };
            self.free_all(&sv.ln1);
            self.free_all(&[prev_mask, sv.x_in]);
        }
        // the embeddings: wte's gradient scattered into a dense fp32 (V, C) buffer (their
        // dropout applied in place), the inputs go, wpe's gradient; then the tied weight's: that
        // dense one plus lm_head's (16-bit: upcast; fp32: d(logits)ᵀ · ln_f's output, added in
        // one matmul)
        let dense = self.a(4 * vc, Term::TiedWeightGrad);
        let x = if self.prefetch { xy.0.take() } else { None };
        self.free_all(&[fwd.emb_mask, fwd.tw, fwd.pos, x]);
        fresh.push(self.a(4 * self.wpe_rows * c, Term::FreshGrads));
        self.f(g);
        fresh.push(self.a(4 * vc, Term::TiedWeightGrad));
        self.free_all(&[dw_lm, dlogits, dense, lnfc, tangent]);
        self.out.end_graph();
    }

    /// A Linear's weight gradient in the compiled backward: the matmul's 16-bit output, or in fp32
    /// the gradient the graph returns itself.
    fn weight_grad(&mut self, numel: u128, fresh: &mut Vec<T>) -> T {
        if self.half {
            self.a(2 * numel, Term::FreshGrads)
        } else {
            fresh.push(self.a(4 * numel, Term::FreshGrads));
            None
        }
    }

    /// A 16-bit weight gradient's fp32 copy, the one the graph returns; the 16-bit one goes.
    fn weight_grad_copied(&mut self, dw: T, numel: u128, fresh: &mut Vec<T>) {
        if self.half {
            self.weight_grad_done(dw, numel, true, fresh);
        }
    }

    /// What SDPA's backward allocates inside the op beside its three gradients (never the
    /// compiled graph's own buffers).
    fn sdpa_backward_workspace(&mut self) {
        let (btc, bht, tr) = (self.btc(), self.b * self.h * self.t, Term::BlockTransient);
        if self.half {
            // the flash backward's fp32 dq accumulator and softmax sums, and 256 B more (every
            // 16-bit trace: 25,559,296 B at GPT-2 B8 T1024), one more 512 B unit
            let ws = self.a_as(Kind::External, 4 * btc + 4 * bht + 256, tr);
            self.f(ws);
        } else {
            // fp32 runs the memory-efficient kernel: one more (B, T, C) buffer while it takes the
            // row sums of dO·O (twice), then its workspace: dq's fp32 accumulator and T/16 floats
            // per head (traces s_b4_fp32_eager: 12,595,200 B at GPT-2 B4 T1024;
            // char_fp32_b64_default: 25,190,400 B at B64 T256)
            let extra = self.a_as(Kind::External, 4 * btc, tr);
            let sums = [
                self.a_as(Kind::External, 4 * bht, tr),
                self.a_as(Kind::External, 4 * bht, tr),
            ];
            self.free_all(&[sums[0], extra]);
            let ws = self.a_as(Kind::External, 4 * btc + bht / 4, tr);
            self.free_all(&[sums[1], ws]);
        }
    }

    /// A fused LayerNorm backward of the compiled graph: the residual gradient updated in place,
    /// the LayerNorm's fp32 weight gradient, and the gradient of the branch below — a new buffer
    /// where a dropout mask applies, `dx` itself where none does (`dx` goes when a new one is
    /// made).
    fn ln_backward(&mut self, dx: T, masked: bool, fresh: &mut Vec<T>) -> T {
        let gb = if masked {
            self.a(self.s * self.btc(), Term::BlockTransient)
        } else {
            None
        };
        self.ln_weight_grad(fresh);
        if masked {
            self.f(dx);
            gb
        } else {
            dx
        }
    }

    /// A LayerNorm's fp32 weight gradient, fused with its input gradient (Inductor's mix-order
    /// reduction): each split of `rows` tokens writes its partial sums of the C columns to an fp32
    /// workspace, summed after and freed (`workspace_0[...].view(splits, C).sum(dim=0)` in the
    /// generated code: 1,024 × 384 floats at N = 16,384, 512 × 768 at N = 8,192, 16-row splits
    /// both). The next LayerNorm's workspace takes its storage where the graph's peak allows.
    fn ln_weight_grad(&mut self, fresh: &mut Vec<T>) {
        let n = self.bt();
        // `_pick_split_size`: a power of 2 near rows / (8·SMs), within [16, 128]
        let per = n / (8 * self.sms);
        let rows = (1u128 << per.checked_ilog2().unwrap_or(0)).clamp(16, 128);
        let ws = self.a(4 * n.div_ceil(rows) * self.c, Term::BlockTransient);
        fresh.push(self.a(4 * self.c, Term::FreshGrads));
        self.f(ws);
    }

    /// The hand-written attention's backward (`saved`: what its forward kept but c_proj's input),
    /// from c_proj's input gradient `dy` to the three
    /// head-split gradients the concatenation into dqkv reads, each saved tensor freed as its
    /// op's backward returns (data/traces/s_noflash_b4_default-events.json.gz). A matmul's
    /// backward gives its second operand's gradient first.
    fn manual_attention_backward(&mut self, saved: Vec<T>, dy: T) -> Vec<T> {
        let (btc, s, tr) = (self.btc(), self.s, Term::BlockTransient);
        let bhtt = self.b * self.h * self.t * self.t;
        let [qc, kc, cond, soft, mask, dropped, att16, vc] =
            <[T; 8]>::try_from(saved).unwrap_or_default();
        // the head merge's backward copies dy back to (B, H, T, hd)
        let gy0 = self.a(s * btc, tr);
        self.f(dy);
        // att @ v: v's gradient, then att's in the bmm's dtype; the bmm's saved inputs go
        let dv = self.a(s * btc, tr);
        let d_att = self.a(s * bhtt, tr);
        self.free_all(&[gy0, vc, att16]);
        // back to fp32 through autocast's cast; softmax's backward and its `grad * output`
        let d_in = self.recast_if_half(d_att, 4 * bhtt, tr);
        let d_soft = self.a(4 * bhtt, tr);
        let prod = self.a(4 * bhtt, tr);
        self.free_all(&[prod, d_in, soft, mask, dropped]);
        // the softmax ran on an fp32 copy of its 16-bit input: that copy's backward, then the
        // causal mask's and the scale's
        let d_masked = self.recast_if_half(d_soft, s * bhtt, tr);
        let d_m = self.a(s * bhtt, tr);
        self.free_all(&[d_masked, cond]);
        let d_scores = self.a(s * bhtt, tr);
        self.f(d_m);
        // q @ kᵀ: kᵀ's gradient, then q's; the saved copies of q and kᵀ go
        let dk = self.a(s * btc, tr);
        let dq = self.a(s * btc, tr);
        self.free_all(&[d_scores, qc, kc]);
        // v's and q's gradients copied back to (B, T, H, hd); k's is read as it lies
        let cv = self.a(s * btc, tr);
        self.f(dv);
        let cq = self.a(s * btc, tr);
        self.f(dq);
        vec![cq, dk, cv]
    }

    /// In a 16-bit run a cast of `t` (`bytes`, to fp32 or back) replaces it: the copy, then `t`
    /// freed; in fp32 `t` itself goes on.
    fn recast_if_half(&mut self, t: T, bytes: u128, term: Term) -> T {
        if !self.half {
            return t;
        }
        let cast = self.a(bytes, term);
        self.f(t);
        cast
    }

    /// A weight gradient done: (16-bit) its fp32 copy replaces it; kept as `.grad` in
    /// micro-step 1 (`keep`), added in place and freed in later ones. `numel` 0: a LayerNorm
    /// gradient, fp32 from the start.
    fn weight_grad_done(&mut self, d: T, numel: u128, keep: bool, grads: &mut Vec<T>) {
        let d32 = if self.half && numel > 0 {
            let d32 = self.a(4 * numel, Term::FreshGrads);
            self.f(d);
            d32
        } else {
            d
        };
        if keep {
            grads.push(d32);
        } else {
            self.f(d32);
        }
    }

    /// The end of a branch's backward (MLP or attention): its input gradient to fp32, its first
    /// Linear's weight gradient (`numel` elements) done, then the LayerNorm in front of it — its
    /// gradient and gamma's — and the branch's input and the LayerNorm's statistics freed.
    #[allow(clippy::too_many_arguments)]
    fn branch_backward_end(
        &mut self,
        dx16: T,
        d: T,
        numel: u128,
        x: T,
        ln: Vec<T>,
        keep: bool,
        grads: &mut Vec<T>,
    ) {
        let (btc, c, tr) = (self.btc(), self.c, Term::BlockTransient);
        // fp32: dx is already the LayerNorm's input gradient and lives through its backward
        // (char_fp32_b64_default-events.json.gz)
        let dx32 = self.recast_if_half(dx16, 4 * btc, tr);
        self.weight_grad_done(d, numel, keep, grads);
        // fp32: the LayerNorm's output, saved by the branch's first Linear (`close_branch`
        // pushed it last), goes when that Linear's backward returns, before the LayerNorm's
        let mut ln = ln;
        if !self.half {
            let out = ln.pop().flatten();
            self.f(out);
        }
        let dln = self.a(4 * btc, tr);
        let dgamma = self.a(4 * c, Term::FreshGrads);
        self.weight_grad_done(dgamma, 0, keep, grads);
        self.free_all(&[dx32, x]);
        for t in ln {
            self.f(t);
        }
        self.f(dln);
    }

    /// One training micro-step: forward, loss, backward.
    pub(crate) fn micro_step(
        &mut self,
        phase: Phase,
        index: u32,
        prev_logits: &mut T,
        xy: &mut (T, T),
        grads: &mut Vec<T>,
        first_backward: bool,
    ) {
        let keep = grads.is_empty();
        self.mark(Some(phase), Stage::Forward, index);
        let mut cache = Vec::new();
        let mut fwd = if self.compiled {
            self.forward_compiled(false)
        } else {
            self.forward(false, &mut cache)
        };
        self.mark(Some(phase), Stage::Loss, index);
        // `with ctx` ends after the loss: the autocast cache goes (what autograd saved stays)
        self.free_all(&cache);
        // `logits, loss = model(X, Y)` rebinds: the previous logits die only now
        self.f(*prev_logits);
        *prev_logits = fwd.logits;
        let scaled = self.a(4, Term::LossGrads);
        self.f(fwd.loss);
        // get_batch for the next micro-step, between forward and backward (train.py only)
        let next = if self.prefetch {
            self.batch()
        } else {
            (None, None)
        };
        self.mark(Some(phase), Stage::Backward, index);
        let seed = self.a(4, Term::LossGrads);
        let lbtv = self.loss_btv();
        let (s, btc, vc) = (self.s, self.btc(), self.v * self.c);
        // the autograd thread's cuBLAS workspace comes with its first matmul (lm_head's)
        if self.compiled {
            let mut fresh = Vec::new();
            if !self.manual && !self.cfg.bias {
                self.compiled_backward(&mut fwd, first_backward, &mut fresh, xy);
            } else {
                self.compiled_backward_eager_shaped(&mut fwd, first_backward, &mut fresh, xy);
            }
            // the compiled graph returns: fresh grads land in .grad
            if keep {
                grads.append(&mut fresh);
            } else {
                self.free_all(&fresh);
            }
        } else {
            // nll_loss's gradient is fp32 in every dtype
            let nll_grad = self.a(4 * lbtv, Term::LossGrads);
            // train.py's Y was rebound by the prefetch: nll_loss's backward releases it
            let y = if self.prefetch { xy.1.take() } else { None };
            self.free_all(&[fwd.cp32, y, fwd.tw]);
            let lsm_grad = if self.half {
                let tc = self.a(s * lbtv, Term::LossGrads);
                self.f(nll_grad);
                let d = self.a(s * lbtv, Term::LossGrads);
                self.f(tc);
                d
            } else {
                let d = self.a(4 * lbtv, Term::LossGrads);
                self.f(nll_grad);
                d
            };
            self.f(fwd.lsm);
            // lm_head
            let dw16 = if self.half {
                self.a(2 * vc, Term::LmHeadGrads)
            } else {
                None
            };
            if first_backward {
                self.a(self.workspace, Term::CublasWorkspace);
            }
            let dx16 = self.a(s * btc, Term::LmHeadGrads);
            self.free_all(&[lsm_grad, fwd.w_lm, fwd.lnfc]);
            // fp32: dx is ln_f's input gradient and lives through its backward, and lm_head's
            // saved input (ln_f's output) goes when lm_head's backward returns
            // (char_fp32_b64_default-events.json.gz)
            let dx32 = self.recast_if_half(dx16, 4 * btc, Term::BlockTransient);
            let dw32 = if self.half {
                let d = self.a(4 * vc, Term::TiedWeightGrad);
                self.f(dw16);
                d
            } else {
                self.a(4 * vc, Term::TiedWeightGrad)
            };
            if !self.half {
                self.f(fwd.lnf.take());
            }
            // ln_f
            let g = self.a(4 * btc, Term::BlockTransient);
            let dgamma = self.a(4 * self.c, Term::FreshGrads);
            if keep {
                grads.push(dgamma);
            } else {
                self.f(dgamma);
            }
            self.free_all(&[dx32, fwd.x_last, fwd.lnf, fwd.stats[0], fwd.stats[1]]);
            for sv in std::mem::take(&mut fwd.blocks).into_iter().rev() {
                self.block_backward(sv, keep, grads);
            }
            // checkpointed blocks: recompute each forward from its saved input, then backward
            for x_in in std::mem::take(&mut fwd.checkpointed).into_iter().rev() {
                let (out, sv) = self.block_forward(x_in, false, false);
                self.f(out);
                self.block_backward(sv, keep, grads);
            }
            fwd.tied_grad = dw32;
            self.embedding_backward(&mut fwd, g, keep, grads, xy);
        }
        self.free_all(&[seed, scaled]);
        if self.prefetch {
            *xy = next;
        }
    }

    /// wpe's and wte's backward, and the tied weight's two gradients summed (§1.5).
    fn embedding_backward(
        &mut self,
        fwd: &mut Forward,
        g: T,
        keep: bool,
        grads: &mut Vec<T>,
        xy: &mut (T, T),
    ) {
        let (bt, tc, vc, c) = (self.bt(), self.t * self.c, self.v * self.c, self.c);
        // the embeddings' dropout, eager: its backward writes a new fp32 gradient, then the
        // incoming one and the mask go (char_fp32_b64_default-events.json.gz); the compiled
        // graph fuses it
        let g = if fwd.emb_mask.is_some() && !self.compiled {
            let dropped = self.a(4 * self.btc(), Term::BlockTransient);
            self.free_all(&[g, fwd.emb_mask]);
            dropped
        } else {
            self.f(fwd.emb_mask);
            g
        };
        let sum = self.a(4 * tc, Term::BlockTransient);
        let wpe = self.a(4 * self.wpe_rows * c, Term::FreshGrads);
        self.free_all(&[sum, fwd.pos]);
        // after micro-step 1, AccumulateGrad adds wpe's gradient into `.grad` as soon as it
        // exists, before wte's backward runs (data/traces/l_b4_default-events.json.gz)
        let wpe = if keep {
            wpe
        } else {
            self.f(wpe);
            None
        };
        let sort = [
            self.a(8 * bt, Term::BlockTransient),
            self.a(8 * bt, Term::BlockTransient),
            self.a(8 * bt, Term::BlockTransient),
        ];
        let dense = self.a(4 * vc, Term::TiedWeightGrad);
        let partial = self.a(
            crate::engine::kernels::embedding_partial_sums_bytes(bt, self.v, c),
            Term::BlockTransient,
        );
        self.f(partial);
        self.free_all(&sort);
        self.f(g);
        // train.py's X was rebound by the prefetch: the embedding's backward releases it
        if self.prefetch {
            self.f(xy.0.take());
        }
        // the tied weight: lm_head's grad (waiting in the engine) + the embedding's; micro-step
        // 1 keeps one as `.grad` (see `tied_grad_keeps_lm_head`), adds the other into it
        let lm = fwd.tied_grad;
        if keep {
            let (kept, added) = if self.tied_grad_keeps_lm_head {
                (lm, dense)
            } else {
                (dense, lm)
            };
            self.f(added);
            grads.push(kept);
            grads.push(wpe);
        } else {
            self.free_all(&[lm, dense]);
        }
    }

    /// clip_grad_norm_ and the fused AdamW step (creating its state in iteration 0).
    pub(crate) fn optimizer_step(&mut self, phase: Phase, adam: &mut Vec<T>) {
        self.mark(Some(phase), Stage::OptimizerStep, 0);
        let slots = self.params();
        let n = slots.sizes.len() - 1; // the tied weight is one tensor
        let scratch = self.a(177_000, Term::BlockTransient);
        let norms: Vec<T> = (0..n).map(|_| self.a(4, Term::BlockTransient)).collect();
        self.f(scratch);
        let stack = self.a(4 * n as u128, Term::BlockTransient);
        self.free_all(&norms);
        self.f(stack);
        if adam.is_empty() {
            // decay group (matrices, embeddings) first, then LayerNorm weights and biases; under
            // ZeRO-1 only the tensors this rank owns
            let owned = if self.patches.shard_optimizer {
                crate::ddp::zero1_rank0_owns(self.cfg)
            } else {
                vec![true; slots.sizes.len()]
            };
            let mine: Vec<(u128, bool)> = slots
                .sizes
                .iter()
                .zip(owned)
                .filter(|(_, own)| *own)
                .map(|(s, _)| *s)
                .collect();
            let order: Vec<u128> = mine
                .iter()
                .filter(|(_, d)| *d)
                .chain(mine.iter().filter(|(_, d)| !*d))
                .map(|(b, _)| *b)
                .collect();
            for bytes in order {
                let step = self.a(4, Term::AdamState);
                let m = self.a(bytes, Term::AdamState);
                let v = self.a(bytes, Term::AdamState);
                adam.extend([step, m, v]);
            }
        }
    }

    /// `estimate_loss()`: both splits, two batches each (more change nothing: each batch is
    /// freed before the next, only the previous logits survive).
    fn estimate_loss(&mut self, phase: Phase) {
        self.mark(Some(phase), Stage::Eval, 0);
        // the train.py patch that evaluates at a smaller batch
        let train_batch = self.b;
        if let Some(eb) = self.patches.eval_batch_size {
            self.b = u128::from(eb.max(1));
        }
        let mut prev: T = None;
        // estimate_loss's own X, Y: the training loop's batch stays alive beside them
        let mut xy: (T, T) = (None, None);
        for _ in 0..4 {
            let next = self.batch();
            self.free_all(&[xy.0, xy.1]);
            xy = next;
            let mut cache = Vec::new();
            let fwd = if self.compiled {
                self.forward_compiled(true)
            } else {
                self.forward(true, &mut cache)
            };
            // the autocast cache is cleared when the `with ctx` block exits
            self.free_all(&cache);
            self.f(prev);
            prev = fwd.logits;
        }
        self.free_all(&[prev, xy.0, xy.1]);
        self.b = train_batch;
    }
}

/// What a forward leaves for its loss and backward.
#[derive(Default)]
pub(crate) struct Forward {
    pub(crate) logits: T,
    /// Inputs of checkpointed blocks (their activations are recomputed in the backward).
    checkpointed: Vec<T>,
    pos: T,
    x_last: T,
    lnf: T,
    stats: [T; 2],
    w_lm: T,
    lnfc: T,
    lsm: T,
    cp32: T,
    loss: T,
    tw: T,
    emb_mask: T,
    /// lm_head's fp32 weight gradient waiting in the engine for the embedding's (eager).
    tied_grad: T,
    blocks: Vec<BlockSaved>,
}

/// Micro-steps simulated per iteration at most ([`simulated_micro_steps`]): the sixth's layout is
/// the eighth's (above).
pub const MAX_MICRO_STEPS: u32 = 6;

/// How many of an iteration's `accum` micro-steps are simulated, at most `max`. From the second on
/// each makes the same requests, but not into the same layout: train.py's `logits` (and
/// build-nanogpt's) still holds the last micro-step's logits while the next are computed, so two
/// logits-sized blocks take turns and the layout repeats every second micro-step once it has
/// settled (from the fourth in the runs traced: ho2_fp16_b34, whose eight micro-steps end in the
/// sixth's layout, not the third's — one 1.63 GiB segment more, the run's 12,690 MiB). So all of
/// them up to `max`, else the most below it with `accum`'s parity.
pub fn simulated_micro_steps(accum: u32, max: u32) -> u32 {
    if accum <= max {
        accum
    } else {
        max - (accum - max) % 2
    }
}

/// Steady iterations simulated after iteration 0, as many as the calibration harness ran.
pub const STEADY_ITERATIONS: u32 = 3;

/// Which process of a DDP run a sequence is, and when NCCL lets go of the bucket DDP rebuilds at
/// iteration 1 (ddp.rs). One GPU is [`Rank::ZERO`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rank {
    /// Rank 0 (`master_process`) runs `estimate_loss()`; the other ranks only train.
    pub evaluates: bool,
    /// Whether the last all-reduce still holds DDP's first bucket when iteration 1's first
    /// forward allocates the rebuilt ones, and then through iteration 1; else ProcessGroupNCCL's
    /// watchdog released it before, and the rebuilt buckets take its blocks.
    pub old_buckets_held: bool,
}

impl Rank {
    /// Rank 0 with the old bucket released in time: a one-GPU run, and under DDP what rank 0 of
    /// most runs does.
    pub const ZERO: Rank = Rank::new(true, false);

    pub const fn new(evaluates: bool, old_buckets_held: bool) -> Rank {
        Rank {
            evaluates,
            old_buckets_held,
        }
    }
}

impl Gen<'_> {
    /// `DDP(model)` (ddp.rs): the module's state broadcast from rank 0 in flat chunks, two in
    /// flight, then the Reducer's one bucket of every gradient, until iteration 1 rebuilds them.
    /// Nothing without DDP.
    pub(crate) fn ddp_wrap(&mut self) -> Vec<T> {
        if !self.cfg.is_ddp() {
            return Vec::new();
        }
        let mut in_flight: Vec<T> = Vec::new();
        for chunk in crate::ddp::broadcast_chunk_bytes(self.cfg) {
            if in_flight.len() == 2 {
                let done = in_flight.remove(0);
                self.f(done);
            }
            in_flight.push(self.a(chunk, Term::DdpBuckets));
        }
        self.free_all(&in_flight);
        let total = crate::ddp::bucket_bytes(self.cfg).iter().sum();
        vec![self.a(total, Term::DdpBuckets)]
    }

    /// DDP's rebuild at iteration 1's first forward, in the order the gradients became ready:
    /// the old bucket freed first where NCCL's watchdog has let go of it, else (`held`) returned
    /// to be freed at the iteration's end (ddp.rs). Nothing without DDP.
    pub(crate) fn ddp_rebuild(&mut self, buckets: &mut Vec<T>, held: bool) -> Vec<T> {
        if buckets.is_empty() {
            return Vec::new();
        }
        if !held {
            self.free_all(&std::mem::take(buckets));
        }
        let rebuilt = crate::ddp::bucket_bytes(self.cfg)
            .into_iter()
            .map(|b| self.a(b, Term::DdpBuckets))
            .collect();
        std::mem::replace(buckets, rebuilt)
    }
}

/// The allocation sequence of `cfg`'s run (rank 0's under DDP, the old bucket released in time).
pub fn generate(cfg: &TrainConfig, gpu: &Gpu, patches: Patches) -> Sequence {
    generate_rank(cfg, gpu, patches, Rank::ZERO)
}

/// The allocation sequence of one `rank` of `cfg`'s run: model load, the first `estimate_loss()`
/// (rank 0), iteration 0 and [`STEADY_ITERATIONS`] more (each with up to [`MAX_MICRO_STEPS`]
/// micro-steps), and, when the run evaluates again, a later `estimate_loss()` (rank 0).
pub fn generate_rank(cfg: &TrainConfig, gpu: &Gpu, patches: Patches, rank: Rank) -> Sequence {
    let workspace = gpu.cublas_workspace_bytes();
    let mut g = Gen::new(cfg, workspace, patches);
    // vramfit predicts a user's first run of a config: a cold Inductor cache (a rerun of the
    // same config finds the autotuned configs on disk and stays below it)
    if cfg.compile {
        g.l2 = gpu.l2_cache_bytes;
        g.tune = [true; 3];
        g.sms = gpu.sm_count;
    }
    g.model_load();
    // past the ceiling nothing more is recorded: 1,024 layers of calls that record nothing would
    // still cost the page a tenth of a second
    if g.out.is_beyond() {
        return g.out.finish();
    }
    let mut buckets = g.ddp_wrap();
    let mut xy = g.batch();
    g.first_forward_workspace();
    if rank.evaluates {
        g.mark(Some(Phase::Eval), Stage::Eval, 0);
        g.estimate_loss(Phase::Eval);
    }
    if g.out.is_beyond() {
        return g.out.finish();
    }
    let micro = simulated_micro_steps(cfg.accum_per_rank(), MAX_MICRO_STEPS);
    let mut adam: Vec<T> = Vec::new();
    let mut logits: T = None;
    let mut first_backward = true;
    // iteration 0, then steady iterations: fragmentation can still grow in the second and third
    // (measured: w576_fp16_b4 reserves 0.77 GiB more in iteration 2 than in iteration 1)
    let phases = std::iter::once(Phase::TrainFirstIter).chain(std::iter::repeat_n(
        Phase::TrainSteady,
        STEADY_ITERATIONS as usize,
    ));
    for (iteration, phase) in phases.enumerate() {
        if g.out.is_beyond() {
            break;
        }
        // DDP rebuilds its buckets at iteration 1's first forward, in the order the gradients
        // became ready; the old one is freed when NCCL lets go of it (ddp.rs): before, or at the
        // iteration's end
        let old_buckets: Vec<T> = if iteration == 1 {
            g.mark(Some(phase), Stage::Forward, 1);
            g.ddp_rebuild(&mut buckets, rank.old_buckets_held)
        } else {
            Vec::new()
        };
        let mut grads: Vec<T> = Vec::new();
        for i in 1..=micro {
            g.micro_step(phase, i, &mut logits, &mut xy, &mut grads, first_backward);
            first_backward = false;
        }
        g.optimizer_step(phase, &mut adam);
        g.mark(Some(phase), Stage::ZeroGrad, 0);
        g.free_all(&grads);
        g.free_all(&old_buckets);
    }
    if cfg.max_iters >= cfg.eval_interval && rank.evaluates {
        g.estimate_loss(Phase::EvalAfterStep);
    }
    g.out.finish()
}
