//! Every byte nanoGPT's train.py puts on the GPU, moment by moment.
//!
//! Each formula is derived in `shared/reference/memory-physics.md` from nanoGPT's model.py and
//! train.py and PyTorch's source (section numbers in the comments); the measured runs in
//! `data/measured` pin them (tests/calibration.rs). Notation: L layers, H heads, C = n_embd,
//! V = vocab_size, T = block_size (train.py always samples full blocks), B = batch_size,
//! s = bytes of a 16-bit or fp32 activation, P = parameters.

use crate::allocator_rounding::{model_rounding, persistent_rounding};
use crate::config::{Attention, TrainConfig};
pub use crate::engine::events::Phase;
use crate::params::ParamCounts;
use crate::terms::{Term, Terms};

/// The moments within a phase where the peak can fall (memory-physics.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Moment {
    /// End of the forward, inside the cross-entropy.
    ForwardEnd,
    /// The fp32 softmax of the last block's manual attention.
    AttentionSoftmax,
    /// The first backward node (NllLossBackward / the compiled loss backward).
    LossBackward,
    /// lm_head's backward: dx and the vocabulary-sized weight gradient.
    LmHeadBackward,
    /// The last transformer block's backward.
    BlockBackward,
    /// End of the backward: every gradient exists.
    BackwardEnd,
    /// `optimizer.step()` (iteration 0 creates the AdamW state here).
    OptimizerStep,
    /// Eval: inside the loss of a batch.
    EvalLoss,
    /// Eval: inside a block's forward.
    EvalBlock,
    /// torch.compile, cold Inductor cache: a GELU kernel autotuned on its first call (the first
    /// eval's block 0, the first backward's last block).
    Autotune,
}

impl Moment {
    pub fn id(self) -> &'static str {
        match self {
            Moment::ForwardEnd => "forward_end",
            Moment::AttentionSoftmax => "attention_softmax",
            Moment::LossBackward => "loss_backward",
            Moment::LmHeadBackward => "lm_head_backward",
            Moment::BlockBackward => "block_backward",
            Moment::BackwardEnd => "backward_end",
            Moment::OptimizerStep => "optimizer_step",
            Moment::EvalLoss => "eval_loss",
            Moment::EvalBlock => "eval_block",
            Moment::Autotune => "autotune",
        }
    }
}

/// One candidate peak: where it is and what is alive then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MomentBytes {
    pub phase: Phase,
    pub moment: Moment,
    /// 1-based micro-step within the iteration (0 for eval and the optimizer step).
    pub micro_step: u32,
    pub terms: Terms,
}

impl MomentBytes {
    pub fn total(&self) -> u128 {
        self.terms.total()
    }
}

/// Changes to nanoGPT's code that the fix ranker evaluates (none of them is a train.py setting).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Patches {
    /// model.py: `torch.utils.checkpoint` around each Block's forward. Only each block's input
    /// (4·B·T·C, fp32) stays saved; a block's activations are recomputed during its backward.
    pub checkpoint_blocks: bool,
    /// model.py: cross-entropy computed over `LOSS_CHUNKS` slices of the B·T rows with lm_head
    /// recomputed in the backward, so the full (B, T, V) logits never exist (`logits` is None).
    pub chunked_loss: bool,
    /// train.py: `estimate_loss()` at this batch size instead of `batch_size`.
    pub eval_batch_size: Option<u32>,
    /// train.py: AdamW wrapped in `ZeroRedundancyOptimizer` (ZeRO-1, DDP only): each rank keeps
    /// the state of its share of the parameters (ddp.rs, [`crate::ddp::zero1_rank0_bytes`]).
    pub shard_optimizer: bool,
}

/// Slices of the chunked cross-entropy patch.
pub const LOSS_CHUNKS: u128 = 8;

/// The tensor sizes of one run, in bytes, named as in memory-physics.md.
#[derive(Clone, Debug)]
pub struct Sizes {
    pub params: ParamCounts,
    /// Bytes of a 16-bit or fp32 activation element (2 or 4).
    pub s: u128,
    pub half: bool,
    pub bf16: bool,
    pub compiled: bool,
    pub manual: bool,
    pub dropout: bool,
    pub bt: u128,
    pub btc: u128,
    pub btv: u128,
    /// The vocabulary-sized rows alive at once in the loss: all B·T, or one chunk of them.
    pub loss_btv: u128,
    /// Whether the full logits are kept (bound to `logits`); not with the chunked-loss patch.
    pub keeps_logits: bool,
    /// The checkpointed-blocks patch.
    pub checkpoint: bool,
    pub vc: u128,
    pub tc: u128,
    /// B·H·T² for the manual path (0 with flash).
    pub bhtt: u128,
    /// Saved activations of one transformer block (§3.3).
    pub per_layer: u128,
    pub n_layer: u128,
    pub c: u128,
    /// `ln_f` input + stats + lm_head input (§3.3, "After the last block").
    pub final_acts: u128,
    pub emb_dropout_mask: u128,
    /// 2·N_lin under 16-bit autocast: weight copies saved by the matmuls (§2.5).
    pub weight_copies: u128,
    /// 2·(N_lin + biases): what the autocast cache holds during an eval forward (§2.5).
    pub weight_cache: u128,
    pub mask_buffers: u128,
    /// One cuBLAS workspace (§2.6).
    pub workspace: u128,
    /// torch.compile on a cold Inductor cache: the card's L2 size, the autotuner's flush
    /// buffer (0: no autotuning, eager or not set). [`crate::estimate`] sets it.
    pub autotune_l2: u128,
    /// X and Y, int64 (B, T) each.
    pub token_ids: u128,
    /// Allocator overhead of the model as loaded (§6.4, allocator_rounding.rs).
    pub rounding_model: u128,
    /// fp32 bytes of one AdamW moment (exp_avg or exp_avg_sq) on rank 0: every parameter, or its
    /// ZeRO-1 share.
    pub adam_set: u128,
    /// … and of each later parameter-shaped set (grads, exp_avg, exp_avg_sq).
    pub rounding_per_set: u128,
}

impl Sizes {
    /// `workspace` is one cuBLAS workspace on the target card (32 MiB on sm90, else 8.125 MiB).
    pub fn new(cfg: &TrainConfig, workspace: u128, patches: Patches) -> Sizes {
        let params = ParamCounts::of(cfg);
        let (l, h, c, v, t, b) = (
            u128::from(cfg.n_layer),
            u128::from(cfg.n_head),
            u128::from(cfg.n_embd),
            u128::from(cfg.vocab_size),
            u128::from(cfg.block_size),
            u128::from(cfg.batch_size),
        );
        let half = cfg.dtype.is_16bit();
        let s = cfg.dtype.bytes();
        let manual = cfg.attention == Attention::Manual;
        let dropout = cfg.dropout > 0.0;
        let (bt, btc, btv) = (b * t, b * t * c, b * t * v);
        let bhtt = if manual { b * h * t * t } else { 0 };

        // §3.3: per block 36·C + 16 bytes/token (16-bit) or 64·C + 16 (fp32): the 16 are the
        // two LayerNorms' fp32 mean and rstd; Inductor saves rstd only (trace s_b8_bf16_compile) …
        let ln_stats = if cfg.compile { 8 } else { 16 };
        let mut per_layer = bt
            * if half {
                36 * c + ln_stats
            } else {
                64 * c + ln_stats
            };
        // … two bool dropout masks (residual and MLP); attention dropout lives in flash's RNG state
        if dropout {
            per_layer += 2 * btc;
        }
        if manual {
            // fp32 softmax output kept by SoftmaxBackward + its 16-bit copy for att @ v
            // (+ the dropout mask); no log-sum-exp on this path
            let per_elem = match (half, dropout) {
                (true, false) => 6,
                (true, true) => 7,
                (false, false) => 4,
                (false, true) => 9,
            };
            per_layer += bhtt * per_elem;
        } else {
            // flash keeps a (B, H, T) fp32 log-sum-exp; the memory-efficient kernel (fp32)
            // pads T to a multiple of 32
            let lse_t = if half { t } else { t.div_ceil(32) * 32 };
            per_layer += 4 * b * h * lse_t;
        }

        let n_lin = u128::from(params.linear_weights);
        let biases = u128::from(params.linear_biases);
        Sizes {
            params,
            s,
            half,
            bf16: cfg.dtype == crate::config::Dtype::Bfloat16,
            compiled: cfg.compile,
            manual,
            dropout,
            bt,
            btc,
            btv,
            loss_btv: if patches.chunked_loss {
                btv.div_ceil(LOSS_CHUNKS)
            } else {
                btv
            },
            keeps_logits: !patches.chunked_loss,
            checkpoint: patches.checkpoint_blocks,
            vc: v * c,
            tc: t * c,
            bhtt,
            per_layer,
            n_layer: l,
            c,
            final_acts: bt * (4 * c + ln_stats / 2) + btc * s,
            emb_dropout_mask: if dropout { btc } else { 0 },
            weight_copies: if half { 2 * n_lin } else { 0 },
            weight_cache: if half { 2 * (n_lin + biases) } else { 0 },
            mask_buffers: if manual {
                4 * l * u128::from(cfg.block_size).pow(2)
            } else {
                0
            },
            workspace,
            autotune_l2: 0,
            token_ids: 16 * bt,
            rounding_model: model_rounding(cfg),
            adam_set: if patches.shard_optimizer {
                crate::ddp::zero1_rank0_bytes(cfg)
            } else {
                4 * u128::from(params.total)
            },
            rounding_per_set: persistent_rounding(cfg),
        }
    }

    fn p4(&self) -> u128 {
        4 * u128::from(self.params.total)
    }

    /// Everything the forward saved for the backward (the "A" of §3.3).
    fn activation_terms(&self, t: &mut Terms) {
        t.add(Term::BlockActivations, self.saved_block_activations());
        t.add(Term::FinalActivations, self.final_acts);
        t.add(Term::EmbeddingDropoutMask, self.emb_dropout_mask);
        t.add(Term::WeightCopies, self.saved_weight_copies());
    }

    /// All blocks' saved tensors; with checkpointed blocks only each block's fp32 input.
    fn saved_block_activations(&self) -> u128 {
        if self.checkpoint {
            self.n_layer * 4 * self.btc
        } else {
            self.n_layer * self.per_layer
        }
    }

    /// 16-bit weight copies kept for the backward; with checkpointed blocks only lm_head's.
    fn saved_weight_copies(&self) -> u128 {
        if self.checkpoint && self.half {
            2 * self.vc
        } else {
            self.weight_copies
        }
    }
}

/// The persistent state at a moment: which of params / Adam / grads exist.
#[derive(Clone, Copy)]
struct State {
    adam: bool,
    grads: bool,
}

impl State {
    fn terms(self, z: &Sizes) -> Terms {
        let mut t = Terms::default();
        t.add(Term::Params, z.p4());
        t.add(Term::MaskBuffers, z.mask_buffers);
        let mut sets = 0;
        if self.adam {
            t.add(Term::AdamState, 2 * z.adam_set);
            sets += 2;
        }
        if self.grads {
            t.add(Term::Grads, z.p4());
            sets += 1;
        }
        t.add(
            Term::AllocatorRounding,
            z.rounding_model + sets * z.rounding_per_set,
        );
        t
    }
}

/// Where a micro-step sits in the run; decides what else is alive during it.
#[derive(Clone, Copy)]
struct MicroStep {
    phase: Phase,
    /// 1-based micro-step within the iteration.
    index: u32,
    /// AdamW state exists (iterations ≥ 1).
    adam: bool,
    /// The previous micro-step's logits are still bound to `logits` during this forward.
    prev_logits: bool,
    /// `.grad` already holds gradients (micro-steps 2..GA).
    grads: bool,
    /// The autograd thread's cuBLAS workspace exists before this backward's first matmul (not in
    /// the very first backward of the run: it is created by lm_head's weight-gradient matmul).
    backward_workspace: bool,
}

/// The candidate peaks of one training micro-step (§4, §5; event order from the traces).
fn micro_step(z: &Sizes, m: MicroStep) -> Vec<MomentBytes> {
    let base = State {
        adam: m.adam,
        grads: m.grads,
    }
    .terms(z);
    // the loss path's rows alive at once (a chunk of them with the chunked-loss patch)
    let (s, btv, btc, vc, tc) = (z.s, z.loss_btv, z.btc, z.vc, z.tc);
    let kept_logits = if z.keeps_logits { s * z.btv } else { 0 };
    let mut out = Vec::new();
    let early_ws = if m.backward_workspace { 2 } else { 1 };
    // Terms alive at a moment: the persistent state, optionally every saved activation, the
    // given extras, the token ids and `workspaces` cuBLAS workspaces.
    let at = |moment: Moment, acts: bool, extra: &[(Term, u128)], xy: u128, workspaces: u128| {
        let mut t = base.clone();
        if acts {
            z.activation_terms(&mut t);
        }
        for &(term, b) in extra {
            t.add(term, b);
        }
        t.add(Term::TokenIds, xy);
        t.add(Term::CublasWorkspace, workspaces * z.workspace);
        MomentBytes {
            phase: m.phase,
            moment,
            micro_step: m.index,
            terms: t,
        }
    };
    let prev = if m.prev_logits { kept_logits } else { 0 };
    // the next batch is fetched between forward and backward (train.py:303)
    let (xy1, xy2) = (z.token_ids, 2 * z.token_ids);

    if z.compiled {
        // §4.2 and trace s_b8_bf16_compile: the loss fuses into row statistics; the backward
        // holds the logits, a zero tangent for the unused `logits` output and dlogits, and peaks
        // when lm_head's 16-bit weight gradient is allocated. pos_emb is kept as a saved tensor.
        out.push(at(
            Moment::ForwardEnd,
            true,
            &[
                (Term::PrevLogits, prev),
                (Term::Logits, s * btv),
                (Term::ForwardLocals, 4 * tc),
            ],
            xy1,
            early_ws,
        ));
        // fp32 computes lm_head's input gradient first and its weight gradient only at the end
        // of the backward (trace nanogpt-compiled-fp32_gpt2_T2048_B1_ga1): dx (4·BTC) here.
        let lm_head = if z.half { s * vc } else { 4 * btc };
        out.push(at(
            Moment::LossBackward,
            true,
            &[
                (Term::Logits, s * btv),
                (Term::ZeroTangent, s * btv),
                (Term::LossGrads, s * btv),
                (Term::LmHeadGrads, lm_head),
                (Term::ForwardLocals, 4 * tc),
            ],
            xy2,
            early_ws,
        ));
    } else if z.half {
        // §4.1: logits 2, 16-bit log-softmax 2, fp32 copy for nll_loss 4 (+ previous logits 2);
        // GPT.forward's fp32 locals tok_emb and ln_f output are still alive.
        out.push(at(
            Moment::ForwardEnd,
            true,
            &[
                (Term::PrevLogits, prev),
                (Term::Logits, 2 * btv),
                (Term::LogSoftmax, 2 * btv),
                (Term::LossFp32Copy, 4 * btv),
                (Term::ForwardLocals, 8 * btc + 4 * tc),
            ],
            xy1,
            early_ws,
        ));
        // NllLossBackward allocates its fp32 grad while everything above is alive: 12·BTV.
        out.push(at(
            Moment::LossBackward,
            true,
            &[
                (Term::Logits, 2 * btv),
                (Term::LogSoftmax, 2 * btv),
                (Term::LossFp32Copy, 4 * btv),
                (Term::LossGrads, 4 * btv),
            ],
            xy2,
            early_ws,
        ));
        // lm_head's backward: dlogits, the 16-bit weight grad and dx (later the fp32 copies,
        // by then dlogits is freed, which is always less).
        out.push(at(
            Moment::LmHeadBackward,
            true,
            &[
                (Term::Logits, 2 * btv),
                (Term::LossGrads, 2 * btv),
                (Term::LmHeadGrads, 2 * vc + 2 * btc),
            ],
            xy2,
            2,
        ));
    } else {
        // fp32: no casts; log_softmax's output feeds nll_loss directly; the peak is at
        // LogSoftmaxBackward: logits 4 + lsm 4 + nll grad 4 + dlogits 4.
        out.push(at(
            Moment::ForwardEnd,
            true,
            &[
                (Term::PrevLogits, prev),
                (Term::Logits, 4 * btv),
                (Term::LogSoftmax, 4 * btv),
                // tok_emb and pos_emb; the fp32 ln_f output is lm_head's saved input here
                (Term::ForwardLocals, 4 * btc + 4 * tc),
            ],
            xy1,
            early_ws,
        ));
        out.push(at(
            Moment::LossBackward,
            true,
            &[
                (Term::Logits, 4 * btv),
                (Term::LogSoftmax, 4 * btv),
                (Term::LossGrads, 8 * btv),
            ],
            xy2,
            early_ws,
        ));
        out.push(at(
            Moment::LmHeadBackward,
            true,
            &[
                (Term::Logits, 4 * btv),
                (Term::LossGrads, 4 * btv),
                (Term::LmHeadGrads, 4 * btc + 4 * vc),
            ],
            xy2,
            2,
        ));
    }

    // The manual path's softmax in the last block's forward: an fp32 (B,H,T,T) tensor (+ an
    // fp32 copy of the input for bf16), before the block's later activations exist (§3.3).
    if z.manual && !z.compiled {
        // beyond the saved fp32 softmax output: the masked scores it reads (s bytes per
        // element), and for bf16 an fp32 copy of them (fp16 has a half-to-float kernel)
        let k = z.s + if z.bf16 { 4 } else { 0 };
        let mut t = base.clone();
        let acts_so_far =
            (z.n_layer * z.per_layer + z.final_acts + z.emb_dropout_mask).saturating_sub(26 * btc);
        t.add(Term::BlockActivations, acts_so_far);
        t.add(Term::WeightCopies, z.weight_copies);
        t.add(Term::PrevLogits, prev);
        t.add(Term::BlockTransient, k * z.bhtt);
        t.add(Term::TokenIds, xy1);
        t.add(Term::CublasWorkspace, early_ws * z.workspace);
        out.push(MomentBytes {
            phase: m.phase,
            moment: Moment::AttentionSoftmax,
            micro_step: m.index,
            terms: t,
        });
    }

    // What the loss path leaves alive through the rest of the backward: the logits (still
    // bound to `logits`), and for compile the zero tangent and lm_head's 16-bit weight grad,
    // which torch 2.11 frees only when the compiled backward ends.
    // In fp32 the compiled backward keeps dlogits instead, for lm_head's weight gradient at
    // its end (trace nanogpt-compiled-fp32_gpt2_T2048_B1_ga1).
    let loss_leftovers: Vec<(Term, u128)> = if z.compiled && z.half {
        vec![
            (Term::Logits, kept_logits),
            (Term::ZeroTangent, kept_logits),
            (Term::LmHeadGrads, s * vc),
        ]
    } else if z.compiled {
        vec![
            (Term::Logits, kept_logits),
            (Term::ZeroTangent, kept_logits),
            (Term::LossGrads, s * btv),
        ]
    } else {
        vec![(Term::Logits, kept_logits)]
    };

    // The last block's backward: lm_head's weight copy and the final activations are gone,
    // the tied weight's fp32 grad waits in the engine (4·VC).
    {
        let mut t = base.clone();
        t.add(Term::BlockActivations, z.n_layer * z.per_layer);
        t.add(Term::EmbeddingDropoutMask, z.emb_dropout_mask);
        t.add(
            Term::WeightCopies,
            z.weight_copies
                .saturating_sub(if z.half { 2 * vc } else { 0 }),
        );
        for &(term, b) in &loss_leftovers {
            t.add(term, b);
        }
        // (a compiled fp32 backward makes lm_head's weight gradient only at its end)
        let fp32_compiled = z.compiled && !z.half;
        t.add(Term::TiedWeightGrad, if fp32_compiled { 0 } else { 4 * vc });
        // At the MLP's first backward matmul (GELU's output grad allocated): the residual grad
        // (4), the branch's grad (its 16-bit cast, or the dropout backward's output, which
        // frees the mask) and d(gelu) (4·s). The manual path's attention backward holds up to
        // 8·BHTT (d(att) in fp32 and softmax's grad) once the MLP's saved tensors are gone.
        let branch = if z.dropout {
            s
        } else if z.half {
            2
        } else {
            0
        };
        let mlp = (4 + branch + 4 * s) * btc + if z.half { 8 } else { 16 } * z.c * z.c;
        let mask_freed = if z.dropout { btc } else { 0 };
        let attention = if z.manual {
            let mlp_saved = if z.half { 22 } else { 40 } * btc;
            (8 * z.bhtt + 4 * btc).saturating_sub(mlp_saved)
        } else {
            0
        };
        let transient = mlp.max(attention).saturating_sub(mask_freed);
        t.add(Term::BlockTransient, transient);
        t.add(Term::TokenIds, xy2);
        t.add(Term::CublasWorkspace, 2 * z.workspace);
        out.push(MomentBytes {
            phase: m.phase,
            moment: Moment::BlockBackward,
            micro_step: m.index,
            terms: t,
        });

        // The run's first backward on a cold Inductor cache: GELU's backward kernel (in place
        // on d(gelu)) is autotuned on its first call, in the last block, once the branch's
        // grad, c_proj's weight cast and GELU's saved output are freed: the clone of d(gelu)
        // and the L2-flush buffer beside the residual grad, d(gelu) and c_proj's weight grad
        // (sequence.rs `autotune_gelu`; trace nanogpt-compiled-bf16_char_T256_B64_ga1).
        if z.compiled && z.autotune_l2 > 0 && m.phase == Phase::TrainFirstIter && m.index == 1 {
            let mut t = base.clone();
            t.add(
                Term::BlockActivations,
                (z.n_layer * z.per_layer).saturating_sub(4 * s * btc + mask_freed),
            );
            t.add(Term::EmbeddingDropoutMask, z.emb_dropout_mask);
            t.add(
                Term::WeightCopies,
                z.weight_copies
                    .saturating_sub(if z.half { 2 * vc + 8 * z.c * z.c } else { 0 }),
            );
            for &(term, b) in &loss_leftovers {
                t.add(term, b);
            }
            t.add(Term::TiedWeightGrad, if fp32_compiled { 0 } else { 4 * vc });
            let dw = if z.half { 8 } else { 16 } * z.c * z.c;
            t.add(Term::BlockTransient, (4 + 4 * s) * btc + dw);
            t.add(Term::InductorAutotune, 4 * s * btc + z.autotune_l2);
            t.add(Term::TokenIds, xy2);
            t.add(Term::CublasWorkspace, 2 * z.workspace);
            out.push(MomentBytes {
                phase: m.phase,
                moment: Moment::Autotune,
                micro_step: m.index,
                terms: t,
            });
        }
    }

    // End of the backward: every gradient exists; eager accumulates each into `.grad` as it
    // is ready, a compiled backward returns a full fresh set first (+4P if `.grad` exists).
    {
        let mut t = base.clone();
        // (a compiled fp32 backward frees dlogits once lm_head's weight gradient exists)
        for &(term, b) in &loss_leftovers {
            if term != Term::LossGrads {
                t.add(term, b);
            }
        }
        t.add(Term::TiedWeightGrad, 4 * vc);
        if !m.grads || z.compiled {
            t.add(Term::FreshGrads, z.p4());
            t.add(Term::AllocatorRounding, z.rounding_per_set);
        } else {
            t.add(Term::TiedWeightGrad, 4 * vc);
        }
        t.add(Term::TokenIds, xy2);
        t.add(Term::CublasWorkspace, 2 * z.workspace);
        out.push(MomentBytes {
            phase: m.phase,
            moment: Moment::BackwardEnd,
            micro_step: m.index,
            terms: t,
        });
    }
    out
}

/// `optimizer.step()`: params + grads + AdamW state (created here in iteration 0) + the logits.
fn optimizer_step(z: &Sizes, phase: Phase) -> MomentBytes {
    let mut t = State {
        adam: true,
        grads: true,
    }
    .terms(z);
    t.add(Term::Logits, if z.keeps_logits { z.s * z.btv } else { 0 });
    t.add(Term::TokenIds, 2 * z.token_ids);
    t.add(Term::CublasWorkspace, 2 * z.workspace);
    MomentBytes {
        phase,
        moment: Moment::OptimizerStep,
        micro_step: 0,
        terms: t,
    }
}

/// `estimate_loss()` under `torch.no_grad()` (§4.3): no saved tensors, but the autocast cache
/// holds every 16-bit weight copy, and the previous batch's logits survive into the next.
fn eval_pass(z: &Sizes, phase: Phase) -> Vec<MomentBytes> {
    let after_step = phase == Phase::EvalAfterStep;
    let base = State {
        adam: after_step,
        grads: false,
    }
    .terms(z);
    let (s, btv, btc) = (z.s, z.loss_btv, z.btc);
    let kept = if z.keeps_logits { s * z.btv } else { 0 };
    let stale = if after_step { kept } else { 0 };
    // the backward thread's workspace exists only once a backward has run
    let workspaces = if after_step { 2 } else { 1 };
    let moment = |moment: Moment, extra: &[(Term, u128)]| {
        let mut t = base.clone();
        for &(term, b) in extra {
            t.add(term, b);
        }
        t.add(Term::StaleTrainLogits, stale);
        t.add(Term::TokenIds, 2 * z.token_ids);
        t.add(Term::CublasWorkspace, workspaces * z.workspace);
        MomentBytes {
            phase,
            moment,
            micro_step: 0,
            terms: t,
        }
    };
    if z.compiled {
        // Inductor fuses the loss into reductions and frees weight casts per use.
        let copy = if z.half { 2 * z.vc } else { 0 };
        let mut out = Vec::new();
        // The first eval on a cold Inductor cache: block 0's GELU kernel is autotuned (the
        // clone of its in-place (N, 4C) buffer and the L2-flush buffer) while c_fc's output,
        // c_proj's and SDPA's (N, C) outputs and the block's three weight casts are alive; the
        // embeddings' sum and x + attn are inlined, never stored (sequence.rs
        // `forward_compiled_eval`; trace nanogpt-compiled-bf16_char_T256_B64_ga1).
        if z.autotune_l2 > 0 && phase == Phase::Eval {
            let casts = if z.half { 16 * z.c * z.c } else { 0 };
            out.push(moment(
                Moment::Autotune,
                &[
                    (Term::BlockTransient, 6 * s * btc),
                    (Term::WeightCopies, casts),
                    (Term::InductorAutotune, 4 * s * btc + z.autotune_l2),
                ],
            ));
        }
        out.extend([
            moment(
                Moment::EvalLoss,
                &[
                    (Term::PrevLogits, kept),
                    (Term::Logits, s * btv),
                    (Term::FinalActivations, s * btc),
                    (Term::WeightCopies, copy),
                ],
            ),
            moment(
                Moment::EvalBlock,
                &[
                    (Term::PrevLogits, kept),
                    // x_mid, c_fc's input, h and gelu's output (Inductor frees a buffer after
                    // the kernel that last reads it): 22·BTC measured for 16-bit. fp32 peaks in
                    // the next block's attention: x, ln_1's output and the previous c_fc output
                    // (kept for reuse), qkv and the memory-efficient SDPA's three (N, C)
                    // buffers, 48·BTC (trace nanogpt-compiled-fp32_char_T256_B64_ga2_cold)
                    (Term::BlockTransient, if z.half { 22 } else { 48 } * btc),
                    (Term::WeightCopies, copy),
                ],
            ),
        ]);
        out
    } else if z.half {
        // a block under no_grad: its MLP holds x_in, x_mid, ln_2's fp32 output, h and gelu
        // (28·BTC); the manual path's attention holds x_in, ln_1's output and qkv (8 + 3·s
        // BTC) and, at the softmax, the masked scores, their fp32 copy (bf16) and the fp32
        // softmax, or at att @ v the softmax, its 16-bit cast, v's copy and the output (the q, k
        // copies go with the scores: data/traces/s_noflash_b4_default-events.json.gz)
        let mlp = 28 * btc;
        let attention = if z.manual {
            let base = (8 + 3 * s) * btc;
            let softmax = base + z.bhtt * (s + 4 + if z.bf16 { 4 } else { 0 });
            let att_v = base + 2 * s * btc + 6 * z.bhtt;
            softmax.max(att_v)
        } else {
            0
        };
        vec![
            moment(
                Moment::EvalLoss,
                &[
                    (Term::WeightCopies, z.weight_cache),
                    (Term::PrevLogits, kept),
                    (Term::Logits, 2 * btv),
                    (Term::LogSoftmax, 2 * btv),
                    (Term::LossFp32Copy, 4 * btv),
                    (Term::ForwardLocals, 8 * btc + 4 * z.tc),
                ],
            ),
            moment(
                Moment::EvalBlock,
                &[
                    (Term::WeightCopies, z.weight_cache),
                    (Term::PrevLogits, kept),
                    (Term::BlockTransient, mlp.max(attention)),
                    // GPT.forward keeps tok_emb and pos_emb for the whole forward
                    (Term::ForwardLocals, 4 * btc + 4 * z.tc),
                ],
            ),
        ]
    } else {
        vec![
            moment(
                Moment::EvalLoss,
                &[
                    (Term::PrevLogits, kept),
                    (Term::Logits, 4 * btv),
                    (Term::LogSoftmax, 4 * btv),
                    (Term::ForwardLocals, 8 * btc + 4 * z.tc),
                ],
            ),
            moment(
                Moment::EvalBlock,
                &[
                    (Term::PrevLogits, kept),
                    // fp32: the MLP holds 44·BTC; the manual attention 20·BTC and, at the softmax,
                    // the masked scores and the softmax, or at att @ v the softmax, v's copy
                    // and the output (as in 16-bit above)
                    (
                        Term::BlockTransient,
                        (44 * btc).max(if z.manual {
                            (20 * btc + 8 * z.bhtt).max(28 * btc + 4 * z.bhtt)
                        } else {
                            0
                        }),
                    ),
                    (Term::ForwardLocals, 4 * btc + 4 * z.tc),
                ],
            ),
        ]
    }
}

/// Every candidate peak of a run: iteration 0, a steady iteration, the first and later evals.
/// `z_eval` are the sizes `estimate_loss()` runs at (the same as `z` unless patched).
pub fn moments(cfg: &TrainConfig, z: &Sizes, z_eval: &Sizes) -> Vec<MomentBytes> {
    let ga = cfg.accum_per_rank();
    let mut all = Vec::new();
    let step = |phase, index, adam, first_of_run: bool| MicroStep {
        phase,
        index,
        adam,
        prev_logits: !first_of_run,
        grads: index > 1,
        backward_workspace: !first_of_run,
    };
    // Iteration 0: its first micro-step has neither AdamW state nor previous logits (the eval's
    // logits died with estimate_loss's frame), and its backward creates the second workspace.
    all.extend(micro_step(z, step(Phase::TrainFirstIter, 1, false, true)));
    if ga > 1 {
        all.extend(micro_step(z, step(Phase::TrainFirstIter, 2, false, false)));
    }
    all.push(optimizer_step(z, Phase::TrainFirstIter));
    all.extend(micro_step(z, step(Phase::TrainSteady, 1, true, false)));
    if ga > 1 {
        all.extend(micro_step(z, step(Phase::TrainSteady, 2, true, false)));
    }
    all.push(optimizer_step(z, Phase::TrainSteady));
    all.extend(eval_pass(z_eval, Phase::Eval));
    // train.py evaluates at every multiple of eval_interval up to max_iters
    if cfg.max_iters >= cfg.eval_interval {
        all.extend(eval_pass(z_eval, Phase::EvalAfterStep));
    }
    // DDP (ddp.rs): the buckets exist from before the first eval; the old set may survive
    // into the first steady iteration
    let buckets = crate::ddp::bucket_total(cfg);
    if buckets > 0 {
        for m in &mut all {
            m.terms.add(Term::DdpBuckets, buckets);
            if m.phase == Phase::TrainSteady {
                m.terms.add(Term::DdpRebuiltBuckets, buckets);
            }
        }
    }
    all
}
