//! karpathy/build-nanogpt's `train_gpt2.py` at 6104ab1 ("Let's reproduce GPT-2 (124M)"): its
//! constants and asserts (`config`), its loop around nanoGPT's GPT-2 model (`sequence`), and the
//! fixes with its own knobs (`fixes`). Numbers are for PyTorch 2.11 with bf16 autocast, checked
//! against runs of the real script (`data/measured/build-nanogpt*.jsonl`).

pub mod config;
pub mod fixes;
pub mod sequence;

pub use config::BngConfig;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// A train_gpt2.py run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct BngAnalysis {
    pub config: BngConfig,
    pub run: Run,
}

impl std::ops::Deref for BngAnalysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

impl BngAnalysis {
    /// Parameters as the model holds them (the tied embedding counted once).
    pub fn params(&self) -> u64 {
        crate::params::ParamCounts::of(&self.config.model()).total
    }
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &BngConfig, budget: &Budget) -> Result<BngAnalysis, ConfigError> {
    cfg.validate()?;
    let sequence = sequence::generate(cfg, &budget.gpu);
    Ok(BngAnalysis {
        config: cfg.clone(),
        run: Run::replay(sequence, cfg.allocator, budget.allocator_cap())?,
    })
}

/// Whether `cfg` runs on `budget`'s card (one replay).
pub fn fits_on_card(cfg: &BngConfig, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && crate::engine::run::fits(
            &sequence::generate(cfg, &budget.gpu),
            cfg.allocator,
            budget.allocator_cap(),
        )
}
