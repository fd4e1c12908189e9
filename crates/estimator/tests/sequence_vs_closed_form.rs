//! Two independent accounts of the same run must agree: the closed form (physics.rs, moment by
//! moment) and the allocation sequence (sequence.rs, tensor by tensor) give the same peak of
//! live requests per phase, for eager and compiled, every dtype, dropout, bias, attention path.

#![allow(clippy::unwrap_used)]

mod common;

use estimator::physics::Patches;
use estimator::replay::replay;
use estimator::sequence::generate;
use estimator::{estimate, gpu, Allocator, Attention, Dtype, Phase, Term, TrainConfig};

/// Relative tolerance: the sequence holds a few small tensors the closed form leaves out
/// (4-byte scalars, flash's RNG state, clip_grad_norm's scratch, the embedding backward's sort
/// buffers) and frees some transients a little earlier or later than the moments assume. The
/// largest known gaps, about 2 %, are the manual path's fp16 eval and compiled first iterations
/// with dropout of small models; everything else agrees within 1.2 %.
const TOLERANCE: f64 = 0.025;

#[test]
fn phase_peaks_agree() {
    let card = gpu::find("h100").unwrap();
    let mut worst = (0.0, String::new());
    for dtype in Dtype::ALL {
        for compile in [false, true] {
            for attention in [Attention::Flash, Attention::Manual] {
                if compile && attention == Attention::Manual {
                    continue;
                }
                for (b, t, v, c, dropout, bias, ga) in [
                    (8, 1024, 50304, 768, 0.0, false, 2),
                    (4, 512, 50304, 576, 0.1, true, 1),
                    (64, 256, 65, 384, 0.2, false, 2),
                ] {
                    let cfg = TrainConfig {
                        dtype,
                        compile,
                        attention,
                        batch_size: b,
                        block_size: t,
                        vocab_size: v,
                        n_embd: c,
                        n_head: if c == 384 { 6 } else { 12 },
                        dropout,
                        bias,
                        gradient_accumulation_steps: ga,
                        allocator: Allocator::ExpandableSegments,
                        max_iters: 3,
                        eval_interval: 1000,
                        ..TrainConfig::default()
                    };
                    let est = estimate(&cfg, card).unwrap();
                    let seq = generate(&cfg, card, Patches::default());
                    let r = replay(&seq, cfg.allocator, None);
                    for phase in [Phase::TrainFirstIter, Phase::TrainSteady, Phase::Eval] {
                        // the closed form's allocator rounding is its own term
                        let cf = est.phase_peak(phase).unwrap();
                        let cf = (cf.total() - cf.terms.bytes(Term::AllocatorRounding)) as f64;
                        let sim = r.phase_requested(phase).unwrap() as f64;
                        let err = (sim - cf).abs() / sim;
                        if err > worst.0 {
                            worst = (
                                err,
                                format!("{phase:?} {cfg:?}: closed form {cf} vs sequence {sim}"),
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(worst.0 <= TOLERANCE, "{:.3}% {}", worst.0 * 100.0, worst.1);
}

/// The same on every measured run of train.py (`data/measured/calibration.jsonl`): the
/// closed form, which the fix searches use, and the replayed sequence, which every shown number
/// comes from, give the same live bytes per phase within [`TOLERANCE`] — so a search's answer is
/// the replay's up to the corrections `fixes.rs` makes with the replay itself.
#[test]
fn phase_peaks_agree_on_every_calibration_run() {
    let card = gpu::find("h100").unwrap();
    let mut worst = (0.0, String::new());
    let mut checked = 0;
    for run in common::measured_runs("calibration.jsonl") {
        let cfg = common::config(&run);
        let est = estimate(&cfg, card).unwrap();
        let r = replay(
            &generate(&cfg, card, Patches::default()),
            cfg.allocator,
            None,
        );
        for phase in [Phase::TrainFirstIter, Phase::TrainSteady, Phase::Eval] {
            let (Some(cf), Some(sim)) = (est.phase_peak(phase), r.phase_requested(phase)) else {
                continue;
            };
            let cf = (cf.total() - cf.terms.bytes(Term::AllocatorRounding)) as f64;
            let err = (sim as f64 - cf).abs() / sim as f64;
            if err > worst.0 {
                worst = (err, format!("{} {phase:?}", run["name"]));
            }
            checked += 1;
        }
    }
    assert!(checked >= 270, "{checked}");
    assert!(worst.0 <= TOLERANCE, "{:.3}% {}", worst.0 * 100.0, worst.1);
}
