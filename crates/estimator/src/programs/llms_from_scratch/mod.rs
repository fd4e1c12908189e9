//! rasbt/LLMs-from-scratch's `ch05/01_main-chapter-code/gpt_train.py` at 28c65cdf (*Build a Large
//! Language Model (From Scratch)*, chapter 5: pretraining on the-verdict.txt): its dicts' settings
//! and asserts (`config`), its loop and hand-written GPT as the allocator sees them
//! (`sequence`), and the fixes with its own keys (`fixes`). Numbers are for PyTorch 2.11, fp32,
//! checked against runs of the real script (`data/measured/llms-from-scratch-ch05.jsonl`).

pub mod config;
pub mod sequence;

pub use config::Ch05Config;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// A gpt_train.py run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch05Analysis {
    pub config: Ch05Config,
    pub run: Run,
}

impl std::ops::Deref for Ch05Analysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &Ch05Config, budget: &Budget) -> Result<Ch05Analysis, ConfigError> {
    cfg.validate()?;
    let sequence = sequence::generate(cfg, &budget.gpu);
    Ok(Ch05Analysis {
        config: cfg.clone(),
        run: Run::replay(sequence, cfg.allocator, budget.allocator_cap())?,
    })
}
