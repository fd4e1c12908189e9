//! Time per iteration, to compare fixes: a FLOP count divided by what the card sustains.
//!
//! FLOPs per token are counted as nanoGPT's `estimate_mfu` counts them: 6·N + 12·L·H·Q·T, with
//! N the parameters train.py reports and Q = n_embd / n_head. The card's peak TFLOP/s for the
//! dtype is scaled by a model-FLOPs utilisation (editable, default [`DEFAULT_MFU`]) and by the
//! known slowdowns below. Absolute times are rough; ratios between configs are what the ranking
//! uses.

use crate::config::TrainConfig;
use crate::gpu::Gpu;
use crate::physics::Patches;

/// Model-FLOPs utilisation of a compiled, 16-bit nanoGPT run at large micro-batches. nanoGPT's
/// README reports ~40 % on A100s for GPT-2 124M; consumer cards sit lower.
pub const DEFAULT_MFU: f64 = 0.35;

/// Eager mode's time relative to compiled: nanoGPT's README, "torch.compile … reduces iteration
/// time from ~250ms to 135ms".
pub const EAGER_SLOWDOWN: f64 = 250.0 / 135.0;

/// Tokens per micro-step at which the GPU reaches half its large-batch efficiency (kernel
/// launches and Python overhead dominate tiny micro-batches).
pub const HALF_EFFICIENCY_TOKENS: f64 = 512.0;

/// Activation checkpointing recomputes every block's forward once: +1 forward ≈ +1/3.
pub const CHECKPOINT_SLOWDOWN: f64 = 4.0 / 3.0;

/// The chunked loss recomputes lm_head's forward in the backward.
pub const CHUNKED_LOSS_SLOWDOWN: f64 = 1.08;

/// FLOPs per token (forward + backward), nanoGPT's `estimate_mfu` count.
pub fn flops_per_token(cfg: &TrainConfig, reported_params: u64) -> f64 {
    let (l, h, t) = (
        f64::from(cfg.n_layer),
        f64::from(cfg.n_head),
        f64::from(cfg.block_size),
    );
    let q = f64::from(cfg.n_embd) / h;
    6.0 * reported_params as f64 + 12.0 * l * h * q * t
}

/// Seconds per optimizer step (`batch_size × gradient_accumulation_steps × block_size` tokens).
pub fn iter_seconds(
    cfg: &TrainConfig,
    reported_params: u64,
    gpu: &Gpu,
    patches: Patches,
    mfu: f64,
) -> f64 {
    let tokens = cfg.tokens_per_iter() as f64;
    let micro_tokens = f64::from(cfg.batch_size) * f64::from(cfg.block_size);
    let efficiency = micro_tokens / (micro_tokens + HALF_EFFICIENCY_TOKENS);
    let mut seconds = flops_per_token(cfg, reported_params) * tokens
        / (gpu.peak_tflops(cfg.dtype) * 1e12 * mfu.max(1e-3) * efficiency);
    if !cfg.compile {
        seconds *= EAGER_SLOWDOWN;
    }
    if patches.checkpoint_blocks {
        seconds *= CHECKPOINT_SLOWDOWN;
    }
    if patches.chunked_loss {
        seconds *= CHUNKED_LOSS_SLOWDOWN;
    }
    seconds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamCounts;

    #[test]
    fn flops_match_nanogpt_estimate_mfu() {
        let cfg = TrainConfig::default();
        let n = ParamCounts::of(&cfg).reported;
        // 6 · 123,587,328 + 12 · 12 · 12 · 64 · 1024
        assert_eq!(
            flops_per_token(&cfg, n),
            6.0 * 123_587_328.0 + 12.0 * 12.0 * 12.0 * 64.0 * 1024.0
        );
    }

    #[test]
    fn slower_for_eager_small_micro_batches_and_checkpointing() {
        let g = crate::gpu::find("rtx3090").unwrap();
        let cfg = TrainConfig::default();
        let n = ParamCounts::of(&cfg).reported;
        let base = iter_seconds(&cfg, n, g, Patches::default(), DEFAULT_MFU);
        let eager = TrainConfig {
            compile: false,
            ..cfg.clone()
        };
        assert!(
            (iter_seconds(&eager, n, g, Patches::default(), DEFAULT_MFU) / base - EAGER_SLOWDOWN)
                .abs()
                < 1e-9
        );
        // same tokens in more, smaller micro-steps: slower, but only a little at this size
        let small = TrainConfig {
            batch_size: 6,
            gradient_accumulation_steps: 80,
            ..cfg.clone()
        };
        let r = iter_seconds(&small, n, g, Patches::default(), DEFAULT_MFU) / base;
        assert!(r > 1.0 && r < 1.05, "{r}");
        let ck = Patches {
            checkpoint_blocks: true,
            ..Patches::default()
        };
        assert!((iter_seconds(&cfg, n, g, ck, DEFAULT_MFU) / base - 4.0 / 3.0).abs() < 1e-9);
        // GPT-2 124M, 491,520 tokens per iteration (4.2e14 FLOPs) on a 3090 at 35 % MFU
        assert!(base > 10.0 && base < 30.0, "{base}");
    }
}
