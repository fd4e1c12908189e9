//! rasbt/LLMs-from-scratch's `ch06/01_main-chapter-code/gpt_class_finetune.py` at 28c65cdf
//! (*Build a Large Language Model (From Scratch)*, chapter 6: a pretrained GPT-2 fine-tuned as a
//! spam classifier): its settings and asserts (`config`), its loop over chapter 5's model with
//! all but the last block frozen (`sequence`), and the fixes with its own names (`fixes`).
//! Numbers are for PyTorch 2.11, fp32, checked against runs of the real script
//! (`data/measured/llms-from-scratch-ch06.jsonl`).

pub mod config;
pub mod sequence;

pub use config::Ch06Config;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// A gpt_class_finetune.py run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch06Analysis {
    pub config: Ch06Config,
    pub run: Run,
}

impl std::ops::Deref for Ch06Analysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &Ch06Config, budget: &Budget) -> Result<Ch06Analysis, ConfigError> {
    cfg.validate()?;
    let sequence = sequence::generate(cfg, &budget.gpu);
    Ok(Ch06Analysis {
        config: cfg.clone(),
        run: Run::replay(sequence, cfg.allocator, budget.allocator_cap())?,
    })
}

/// Whether `cfg` runs on `budget`'s card (one replay).
pub fn fits_on_card(cfg: &Ch06Config, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && crate::engine::run::fits(
            &sequence::generate(cfg, &budget.gpu),
            cfg.allocator,
            budget.allocator_cap(),
        )
}

/// Parameters of the fine-tuned model, and those it trains: `tok_emb` (V·C), `pos_emb`
/// (1024·C), per block 12·C² weights and 13·C biases and LayerNorm scales and shifts, the final
/// LayerNorm, and the new head (C·classes + classes); it trains the last block, the final
/// LayerNorm and the head.
pub fn params(cfg: &Ch06Config) -> (u64, u64) {
    let (c, l, _) = cfg.dims();
    let (c, l, k) = (u64::from(c), u64::from(l), u64::from(cfg.num_classes));
    let block = 12 * c * c + 13 * c;
    let trained = block + 2 * c + c * k + k;
    let frozen =
        (u64::from(config::VOCAB_SIZE) + u64::from(config::CONTEXT_LENGTH)) * c + (l - 1) * block;
    (frozen + trained, trained)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_as_the_script_counts_them() {
        // measured: GPT-2 small with a 2-class head, 124,441,346 in all, 7,090,946 trainable
        assert_eq!(params(&Ch06Config::default()), (124_441_346, 7_090_946));
    }
}
