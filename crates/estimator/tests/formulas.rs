//! One test per formula of memory-physics.md: each term the estimator reports, at the moment it
//! is alive, equals the source-derived expression for that config.

#![allow(clippy::unwrap_used)]

use estimator::{
    estimate, gpu, Allocator, Attention, Dtype, Moment, MomentBytes, Phase, Term, TrainConfig,
};

fn h100() -> &'static estimator::Gpu {
    gpu::find("h100").unwrap()
}

/// GPT-2 124M, eager, expandable segments (no allocator rounding), GA=2, batch 8.
fn base() -> TrainConfig {
    TrainConfig {
        batch_size: 8,
        gradient_accumulation_steps: 2,
        compile: false,
        allocator: Allocator::ExpandableSegments,
        ..TrainConfig::default()
    }
}

fn moment(cfg: &TrainConfig, phase: Phase, m: Moment, step: u32) -> MomentBytes {
    let est = estimate(cfg, h100()).unwrap();
    est.moments
        .into_iter()
        .find(|x| x.phase == phase && x.moment == m && x.micro_step == step)
        .unwrap_or_else(|| panic!("no {phase:?} {m:?} {step}"))
}

const B: u128 = 8;
const T: u128 = 1024;
const C: u128 = 768;
const V: u128 = 50304;
const L: u128 = 12;
const H: u128 = 12;
const P: u128 = 124_373_760;

#[test]
fn params_are_fp32_4p() {
    let m = moment(&base(), Phase::TrainSteady, Moment::LossBackward, 2);
    assert_eq!(m.terms.bytes(Term::Params), 4 * P);
}

#[test]
fn adamw_state_is_8p_and_lazy() {
    let cfg = base();
    assert_eq!(
        moment(&cfg, Phase::TrainSteady, Moment::ForwardEnd, 1)
            .terms
            .bytes(Term::AdamState),
        8 * P
    );
    // iteration 0 trains without it; it appears in optimizer.step()
    assert_eq!(
        moment(&cfg, Phase::TrainFirstIter, Moment::LossBackward, 2)
            .terms
            .bytes(Term::AdamState),
        0
    );
    assert_eq!(
        moment(&cfg, Phase::TrainFirstIter, Moment::OptimizerStep, 0)
            .terms
            .bytes(Term::AdamState),
        8 * P
    );
}

#[test]
fn grads_exist_from_micro_step_2_only() {
    let cfg = base();
    assert_eq!(
        moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 1)
            .terms
            .bytes(Term::Grads),
        0
    );
    assert_eq!(
        moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 2)
            .terms
            .bytes(Term::Grads),
        4 * P
    );
    // GA = 1: no micro-step 2, so no grads at the training peak
    let ga1 = TrainConfig {
        gradient_accumulation_steps: 1,
        ..cfg
    };
    let est = estimate(&ga1, h100()).unwrap();
    assert_eq!(est.train_peak().terms.bytes(Term::Grads), 0);
}

#[test]
fn block_activations_16bit_36c_plus_16_plus_lse() {
    let m = moment(&base(), Phase::TrainSteady, Moment::LossBackward, 2);
    // 27,712 bytes per token per layer for C=768, H=12 (memory-physics.md §3.3)
    assert_eq!((36 * C + 16) + 4 * H, 27_712);
    assert_eq!(
        m.terms.bytes(Term::BlockActivations),
        L * B * T * (36 * C + 16) + L * 4 * B * H * T
    );
}

#[test]
fn block_activations_fp32_64c_and_padded_lse() {
    let cfg = TrainConfig {
        dtype: Dtype::Float32,
        ..base()
    };
    let m = moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 2);
    assert_eq!(
        m.terms.bytes(Term::BlockActivations),
        L * B * T * (64 * C + 16) + L * 4 * B * H * T.div_ceil(32) * 32
    );
    assert_eq!(
        m.terms.bytes(Term::WeightCopies),
        0,
        "fp32 makes no 16-bit copies"
    );
}

#[test]
fn dropout_adds_two_masks_per_layer_and_one_at_the_embedding() {
    let cfg = TrainConfig {
        dropout: 0.1,
        ..base()
    };
    let m = moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 2);
    let without = moment(&base(), Phase::TrainSteady, Moment::LossBackward, 2);
    assert_eq!(
        m.terms.bytes(Term::BlockActivations) - without.terms.bytes(Term::BlockActivations),
        L * 2 * B * T * C
    );
    assert_eq!(m.terms.bytes(Term::EmbeddingDropoutMask), B * T * C);
}

#[test]
fn manual_attention_keeps_t_by_t_softmax_and_mask_buffers() {
    let cfg = TrainConfig {
        attention: Attention::Manual,
        ..base()
    };
    let m = moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 2);
    // fp32 softmax output (4) + its 16-bit copy (2) per element; no LSE
    assert_eq!(
        m.terms.bytes(Term::BlockActivations),
        L * B * T * (36 * C + 16) + L * 6 * B * H * T * T
    );
    assert_eq!(m.terms.bytes(Term::MaskBuffers), 4 * L * T * T);
}

#[test]
fn weight_copies_are_2_n_lin_in_training_and_cached_in_eval() {
    let n_lin = V * C + 12 * L * C * C;
    let m = moment(&base(), Phase::TrainSteady, Moment::LossBackward, 2);
    assert_eq!(m.terms.bytes(Term::WeightCopies), 2 * n_lin);
    let with_bias = TrainConfig {
        bias: true,
        ..base()
    };
    let e = moment(&with_bias, Phase::Eval, Moment::EvalLoss, 0);
    assert_eq!(e.terms.bytes(Term::WeightCopies), 2 * (n_lin + 9 * C * L));
}

#[test]
fn eager_16bit_loss_peak_is_12_btv_at_the_first_backward_node() {
    let m = moment(&base(), Phase::TrainSteady, Moment::LossBackward, 2);
    let loss = [
        Term::Logits,
        Term::LogSoftmax,
        Term::LossFp32Copy,
        Term::LossGrads,
    ]
    .iter()
    .map(|t| m.terms.bytes(*t))
    .sum::<u128>();
    assert_eq!(loss, 12 * B * T * V);
    let est = estimate(&base(), h100()).unwrap();
    assert_eq!(est.peak().moment, Moment::LossBackward);
}

#[test]
fn fp32_loss_peak_is_16_btv() {
    let cfg = TrainConfig {
        dtype: Dtype::Float32,
        ..base()
    };
    let m = moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 2);
    assert_eq!(
        m.terms.components().get(estimator::Component::Logits),
        16 * B * T * V
    );
}

#[test]
fn compiled_loss_peak_is_6_btv_plus_lm_head_grad() {
    let cfg = TrainConfig {
        compile: true,
        ..base()
    };
    let m = moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 2);
    assert_eq!(
        m.terms.bytes(Term::Logits)
            + m.terms.bytes(Term::ZeroTangent)
            + m.terms.bytes(Term::LossGrads),
        6 * B * T * V
    );
    assert_eq!(m.terms.bytes(Term::LmHeadGrads), 2 * V * C);
    // compile=True lowers the steady peak by a quarter or more with GPT-2's vocabulary
    let eager = estimate(&base(), h100()).unwrap().peak_bytes() as f64;
    let compiled = estimate(&cfg, h100()).unwrap().peak_bytes() as f64;
    assert!(compiled < 0.8 * eager, "{compiled} vs {eager}");
}

#[test]
fn previous_logits_live_through_the_next_forward() {
    let cfg = base();
    assert_eq!(
        moment(&cfg, Phase::TrainFirstIter, Moment::ForwardEnd, 1)
            .terms
            .bytes(Term::PrevLogits),
        0
    );
    assert_eq!(
        moment(&cfg, Phase::TrainSteady, Moment::ForwardEnd, 1)
            .terms
            .bytes(Term::PrevLogits),
        2 * B * T * V
    );
}

#[test]
fn eval_holds_10_btv_and_does_not_depend_on_eval_iters() {
    let m = moment(&base(), Phase::Eval, Moment::EvalLoss, 0);
    let loss = [
        Term::PrevLogits,
        Term::Logits,
        Term::LogSoftmax,
        Term::LossFp32Copy,
    ]
    .iter()
    .map(|t| m.terms.bytes(*t))
    .sum::<u128>();
    assert_eq!(loss, 10 * B * T * V);
    let few = estimate(
        &TrainConfig {
            eval_iters: 1,
            ..base()
        },
        h100(),
    )
    .unwrap();
    let many = estimate(
        &TrainConfig {
            eval_iters: 1000,
            ..base()
        },
        h100(),
    )
    .unwrap();
    assert_eq!(few.eval_peak().total(), many.eval_peak().total());
}

#[test]
fn later_evals_carry_adam_and_the_stale_training_logits() {
    let cfg = TrainConfig {
        max_iters: 5000,
        eval_interval: 2000,
        ..base()
    };
    let m = moment(&cfg, Phase::EvalAfterStep, Moment::EvalLoss, 0);
    assert_eq!(m.terms.bytes(Term::AdamState), 8 * P);
    assert_eq!(m.terms.bytes(Term::StaleTrainLogits), 2 * B * T * V);
    let no_later = TrainConfig {
        max_iters: 1999,
        ..cfg
    };
    assert!(estimate(&no_later, h100())
        .unwrap()
        .phase_peak(Phase::EvalAfterStep)
        .is_none());
}

#[test]
fn cublas_workspaces_depend_on_the_card_and_the_backward_thread() {
    let cfg = base();
    let m = moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 2);
    assert_eq!(m.terms.bytes(Term::CublasWorkspace), 2 * 32 * 1024 * 1024);
    // the very first backward's peak comes before its thread's first matmul
    let first = moment(&cfg, Phase::TrainFirstIter, Moment::LossBackward, 1);
    assert_eq!(first.terms.bytes(Term::CublasWorkspace), 32 * 1024 * 1024);
    let ampere = estimate(&cfg, gpu::find("rtx3090").unwrap()).unwrap();
    assert_eq!(
        ampere.cublas_workspace_bytes,
        4096 * 1024 * 2 + 16 * 1024 * 8
    );
}

#[test]
fn token_ids_are_two_int64_batches_and_the_next_pair_in_backward() {
    let cfg = base();
    assert_eq!(
        moment(&cfg, Phase::TrainSteady, Moment::ForwardEnd, 1)
            .terms
            .bytes(Term::TokenIds),
        16 * B * T
    );
    assert_eq!(
        moment(&cfg, Phase::TrainSteady, Moment::LossBackward, 1)
            .terms
            .bytes(Term::TokenIds),
        32 * B * T
    );
}

#[test]
fn default_allocator_counts_unsplit_tails_of_parameter_tensors() {
    let exp = estimate(&base(), h100()).unwrap();
    let def = estimate(
        &TrainConfig {
            allocator: Allocator::Default,
            ..base()
        },
        h100(),
    )
    .unwrap();
    // C=768: every parameter tensor is a multiple of 512 bytes
    assert_eq!(exp.peak().terms.bytes(Term::AllocatorRounding), 0);
    // wte's 655,360-byte tail in params, grads and the two AdamW states
    assert_eq!(def.peak().terms.bytes(Term::AllocatorRounding), 4 * 655_360);
}

#[test]
fn components_sum_to_the_peak_across_configs() {
    for dtype in Dtype::ALL {
        for compile in [false, true] {
            for attention in [Attention::Flash, Attention::Manual] {
                for (b, t, v) in [(1, 64, 65), (12, 1024, 50304), (3, 300, 1000)] {
                    let cfg = TrainConfig {
                        dtype,
                        compile,
                        attention,
                        batch_size: b,
                        block_size: t,
                        vocab_size: v,
                        dropout: 0.1,
                        ..TrainConfig::default()
                    };
                    let est = estimate(&cfg, h100()).unwrap();
                    assert_eq!(est.components().total(), est.peak_bytes(), "{cfg:?}");
                    assert!(
                        est.eval_peak().total() <= est.train_peak().total(),
                        "{cfg:?}"
                    );
                }
            }
        }
    }
}
