//! rasbt/LLMs-from-scratch's `ch07/01_main-chapter-code/gpt_instruction_finetuning.py` at
//! 28c65cdf (*Build a Large Language Model (From Scratch)*, chapter 7: a pretrained GPT-2
//! fine-tuned on instructions, every parameter trained): its settings (`config`) and its loop over
//! chapter 5's model (`sequence`), checked against runs of the real script
//! (`data/measured/llms-from-scratch-ch07.jsonl`). Not a registered program yet: the page, the
//! CLI and the fixes come with its registry line.

pub mod config;
pub mod sequence;

pub use config::Ch07Config;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// Replays `cfg` for `budget`'s card.
pub fn replay(cfg: &Ch07Config, budget: &Budget) -> Result<Run, ConfigError> {
    cfg.validate()?;
    Run::replay(
        sequence::generate(cfg, &budget.gpu),
        cfg.allocator,
        budget.allocator_cap(),
    )
}
