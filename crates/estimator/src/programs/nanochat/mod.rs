//! karpathy/nanochat's `scripts/base_train.py` at snapshot 92d63d4: its flags and asserts
//! (`config`), the model they build (`shape`), the one description of its memory (`sequence`),
//! and the fixes with its own knobs (`fixes`).
//!
//! Numbers are for CUDA GPUs with bf16 compute, `torch.compile` (always on in base_train.py) and
//! PyTorch 2.11, checked against runs of the real script on one GPU
//! (`shared/data/measured/nanochat.jsonl`, `data/measured/`). Attention is the SDPA fallback
//! unless `attention=fa3`, whose saved tensors are derived, not measured; so is the per-rank
//! memory under `torchrun` (rank 0, from optim.py's sharding).

pub mod config;
pub mod explain;
pub mod fixes;
pub mod sequence;
pub mod shape;

pub use config::{NanochatAttention, NanochatConfig};
pub use shape::Shape;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// A nanochat run on one card: its config, its model and the replayed run.
#[derive(Clone, Debug, PartialEq)]
pub struct NanochatAnalysis {
    pub config: NanochatConfig,
    pub shape: Shape,
    pub run: Run,
}

impl std::ops::Deref for NanochatAnalysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &NanochatConfig, budget: &Budget) -> Result<NanochatAnalysis, ConfigError> {
    cfg.validate()?;
    let sequence = sequence::generate(cfg, budget.gpu.cublas_workspace_bytes());
    Ok(NanochatAnalysis {
        config: cfg.clone(),
        shape: Shape::of(cfg),
        run: Run::replay(sequence, cfg.allocator, budget.allocator_budget()),
    })
}

/// Whether `cfg` runs on `budget`'s card (one replay; what fix searches ask).
pub fn fits_on_card(cfg: &NanochatConfig, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && crate::engine::run::fits(
            &sequence::generate(cfg, budget.gpu.cublas_workspace_bytes()),
            cfg.allocator,
            budget.allocator_budget(),
        )
}
