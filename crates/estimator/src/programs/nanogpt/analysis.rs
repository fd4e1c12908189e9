//! The full answer for a nanoGPT run on a card: the closed form (the explanation of the numbers)
//! and the run replayed through the simulated caching allocator ([`Run`]).

use crate::config::TrainConfig;
use crate::engine::run::{self, Run};
use crate::error::ConfigError;
use crate::estimate::{estimate_patched, Estimate};
use crate::gpu::Budget;
use crate::physics::{Patches, Phase};
use crate::sequence::generate;

/// Peaks, components and verdict of one run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The closed form (moments, formulas): the explanation of the numbers below.
    pub estimate: Estimate,
    /// The run replayed, uncapped and on the card.
    pub run: Run,
}

impl std::ops::Deref for Analysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

impl Analysis {
    /// This run's time per iteration on `gpu` (the all-reduce under DDP included), at `mfu`.
    pub fn iter_time(&self, gpu: &crate::gpu::Gpu, mfu: f64) -> crate::speed::IterTime {
        let est = &self.estimate;
        crate::speed::iter_time(
            &est.config,
            est.params.reported,
            gpu,
            crate::physics::Patches::default(),
            mfu,
        )
    }

    /// Per-GPU peaks of a DDP run, from the replay (`None` on one GPU).
    pub fn ranks(&self) -> Option<crate::ddp::Ranks> {
        let phase = |p| self.phase_bytes(p).unwrap_or(0);
        crate::ddp::Ranks::new(
            &self.estimate.config,
            phase(Phase::TrainFirstIter),
            phase(Phase::TrainSteady),
            phase(Phase::Eval).max(phase(Phase::EvalAfterStep)),
        )
    }
}

/// Replays `cfg` (with `patches`) for `budget`'s card.
pub fn analyze_patched(
    cfg: &TrainConfig,
    budget: &Budget,
    patches: Patches,
) -> Result<Analysis, ConfigError> {
    let estimate = estimate_patched(cfg, &budget.gpu, patches)?;
    let run = replay_patched(cfg, budget, patches)?;
    Ok(Analysis { estimate, run })
}

/// [`analyze_patched`]'s run alone, without the closed form: what the peak, components and
/// verdict come from.
pub fn replay_patched(
    cfg: &TrainConfig,
    budget: &Budget,
    patches: Patches,
) -> Result<Run, ConfigError> {
    cfg.validate()?;
    let sequence = generate(cfg, &budget.gpu, patches);
    Run::replay(sequence, cfg.allocator, budget.allocator_cap())
}

/// Whether `cfg` runs on `budget`'s card: [`Analysis`]'s `verdict.fits` with one replay instead
/// of up to four (what the fix ranker's searches ask, many times).
pub fn fits_on_card(cfg: &TrainConfig, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && run::fits(
            &generate(cfg, &budget.gpu, Patches::default()),
            cfg.allocator,
            budget.allocator_cap(),
        )
}

/// [`analyze_patched`] for nanoGPT as it is.
pub fn analyze(cfg: &TrainConfig, budget: &Budget) -> Result<Analysis, ConfigError> {
    analyze_patched(cfg, budget, Patches::default())
}
