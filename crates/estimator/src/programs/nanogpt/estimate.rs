//! `estimate()`: the peak of every phase of a run, where it falls and what is alive then.

use crate::config::TrainConfig;
use crate::error::ConfigError;
use crate::gpu::Gpu;
use crate::params::ParamCounts;
use crate::physics::{moments, MomentBytes, Patches, Phase, Sizes};
use crate::terms::Components;

/// The answer for one config on one kind of card.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub config: TrainConfig,
    pub params: ParamCounts,
    /// Every candidate peak, in run order.
    pub moments: Vec<MomentBytes>,
    /// Sizes the moments were computed from (for explanations).
    pub cublas_workspace_bytes: u128,
}

impl Estimate {
    /// The highest moment of a phase (`None` if the run has no such phase, e.g. no later eval).
    pub fn phase_peak(&self, phase: Phase) -> Option<&MomentBytes> {
        max_by_total(self.moments.iter().filter(|m| m.phase == phase))
    }

    /// The overall peak: what `torch.cuda.max_memory_allocated()` reports over the whole run.
    pub fn peak(&self) -> &MomentBytes {
        max_by_total(self.moments.iter()).expect("a run always has moments")
    }

    pub fn peak_bytes(&self) -> u128 {
        self.peak().total()
    }

    /// Bytes of a phase's peak, 0 if the run has no such phase.
    pub fn phase_bytes(&self, phase: Phase) -> u128 {
        self.phase_peak(phase).map_or(0, MomentBytes::total)
    }

    /// The training peak (first iteration or steady, whichever is higher).
    pub fn train_peak(&self) -> &MomentBytes {
        max_by_total(
            self.moments
                .iter()
                .filter(|m| matches!(m.phase, Phase::TrainFirstIter | Phase::TrainSteady)),
        )
        .expect("a run always trains")
    }

    /// The highest `estimate_loss()` moment (first or later eval).
    pub fn eval_peak(&self) -> &MomentBytes {
        max_by_total(
            self.moments
                .iter()
                .filter(|m| matches!(m.phase, Phase::Eval | Phase::EvalAfterStep)),
        )
        .expect("a run always evaluates at iteration 0")
    }

    /// Per-GPU peaks of a DDP run (`None` on one GPU).
    pub fn ranks(&self) -> Option<crate::ddp::Ranks> {
        crate::ddp::Ranks::new(
            &self.config,
            self.phase_bytes(Phase::TrainFirstIter),
            self.phase_bytes(Phase::TrainSteady),
            self.phase_bytes(Phase::Eval)
                .max(self.phase_bytes(Phase::EvalAfterStep)),
        )
    }

    /// The six bar segments at the overall peak; they sum exactly to [`Estimate::peak_bytes`].
    pub fn components(&self) -> Components {
        self.peak().terms.components()
    }
}

/// The first of the highest (earliest in the run wins a tie, as a peak counter would record).
fn max_by_total<'a>(it: impl Iterator<Item = &'a MomentBytes>) -> Option<&'a MomentBytes> {
    it.fold(None, |best: Option<&MomentBytes>, m| match best {
        Some(b) if b.total() >= m.total() => Some(b),
        _ => Some(m),
    })
}

/// Estimates the GPU memory of nanoGPT's train.py for `cfg` on a card like `gpu` (the card only
/// matters through the cuBLAS workspace size).
pub fn estimate(cfg: &TrainConfig, gpu: &Gpu) -> Result<Estimate, ConfigError> {
    estimate_patched(cfg, gpu, Patches::default())
}

/// [`estimate`] for nanoGPT with code changes applied (what the fix ranker proposes).
pub fn estimate_patched(
    cfg: &TrainConfig,
    gpu: &Gpu,
    patches: Patches,
) -> Result<Estimate, ConfigError> {
    cfg.validate()?;
    let workspace = gpu.cublas_workspace_bytes();
    // a compiled run is predicted as a user's first run of its config: a cold Inductor cache,
    // whose autotuning allocates an L2-flush buffer (sequence.rs `autotune_gelu`)
    let l2 = if cfg.compile { gpu.l2_cache_bytes } else { 0 };
    let mut sizes = Sizes::new(cfg, workspace, patches);
    sizes.autotune_l2 = l2;
    let eval_sizes = match patches.eval_batch_size {
        Some(b) if b != cfg.batch_size => {
            let eval_cfg = TrainConfig {
                batch_size: b.max(1),
                ..cfg.clone()
            };
            let mut z = Sizes::new(&eval_cfg, workspace, patches);
            z.autotune_l2 = l2;
            z
        }
        _ => sizes.clone(),
    };
    Ok(Estimate {
        config: cfg.clone(),
        params: sizes.params,
        moments: moments(cfg, &sizes, &eval_sizes),
        cublas_workspace_bytes: workspace,
    })
}
