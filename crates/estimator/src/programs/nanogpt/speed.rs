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

/// Link presets for the all-reduce, nominal GB/s per direction: PCIe 3.0, 4.0 and 5.0 x16, the
/// NVLink bridge of RTX 3090 / A6000 pairs, and NVLink on A100 SXM (H100 SXM has 450).
pub const LINKS: [(&str, f64); 5] = [
    ("pcie3", 16.0),
    ("pcie4", 32.0),
    ("pcie5", 64.0),
    ("nvlink_bridge", 56.25),
    ("nvlink", 300.0),
];

/// Fraction of a link's nominal bandwidth a ring all-reduce sustains (NCCL's "bus bandwidth"
/// on a healthy link). Cards without peer-to-peer over PCIe (GeForce 40xx) go through host memory
/// and reach less: lower the bandwidth for them.
pub const ALLREDUCE_EFFICIENCY: f64 = 0.8;

/// The backward's share of a micro-step's time (2 of the 6·N FLOPs per token are the forward).
const BACKWARD_SHARE: f64 = 2.0 / 3.0;

/// One iteration's time under DDP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IterTime {
    /// Seconds per optimizer step.
    pub seconds: f64,
    /// Of which each GPU computes (its share of the micro-steps).
    pub compute_seconds: f64,
    /// The all-reduce of the fp32 gradients (0 on one GPU).
    pub allreduce_seconds: f64,
    /// The part of the all-reduce the backward does not hide.
    pub exposed_seconds: f64,
    /// Bytes all-reduced per iteration (4 per parameter).
    pub allreduce_bytes: u128,
    /// The same run's time on one GPU (all micro-steps on it).
    pub single_gpu_seconds: f64,
}

impl IterTime {
    /// How many times faster than one GPU.
    pub fn speedup(&self) -> f64 {
        self.single_gpu_seconds / self.seconds.max(1e-12)
    }
}

/// Seconds per optimizer step (`batch_size × gradient_accumulation_steps × block_size` tokens),
/// all-reduce included under DDP.
pub fn iter_seconds(
    cfg: &TrainConfig,
    reported_params: u64,
    gpu: &Gpu,
    patches: Patches,
    mfu: f64,
) -> f64 {
    iter_time(cfg, reported_params, gpu, patches, mfu).seconds
}

/// [`iter_seconds`] with its parts. DDP: each GPU computes `1 / world_size` of the micro-steps;
/// the gradients (4·P bytes) are all-reduced during the last micro-step's backward, bucket by
/// bucket as they become ready (ring all-reduce: 2·(N−1)/N of the bytes over each link). What the
/// backward cannot hide is added: at least the last bucket, which holds the tied wte/lm_head
/// weight whose gradient is complete only when the backward ends.
pub fn iter_time(
    cfg: &TrainConfig,
    reported_params: u64,
    gpu: &Gpu,
    patches: Patches,
    mfu: f64,
) -> IterTime {
    let single_gpu_seconds = compute_seconds(
        cfg,
        cfg.tokens_per_iter(),
        reported_params,
        gpu,
        patches,
        mfu,
    );
    // one GPU under torchrun all-reduces with itself: nothing crosses a link
    if !cfg.is_multi_gpu() {
        return IterTime {
            seconds: single_gpu_seconds,
            compute_seconds: single_gpu_seconds,
            allreduce_seconds: 0.0,
            exposed_seconds: 0.0,
            allreduce_bytes: 0,
            single_gpu_seconds,
        };
    }
    let per_rank_tokens = cfg.tokens_per_iter() / u64::from(cfg.world_size);
    let compute = compute_seconds(cfg, per_rank_tokens, reported_params, gpu, patches, mfu);
    let buckets = crate::ddp::bucket_bytes(cfg);
    let bytes: u128 = buckets.iter().sum();
    let n = f64::from(cfg.world_size);
    let per_byte = 2.0 * (n - 1.0) / n / (gpu.link_gbps.max(0.1) * 1e9 * ALLREDUCE_EFFICIENCY);
    let allreduce = bytes as f64 * per_byte;
    let last_bucket = buckets.last().copied().unwrap_or(0) as f64 * per_byte;
    let backward = compute / f64::from(cfg.accum_per_rank().max(1)) * BACKWARD_SHARE;
    let exposed = (allreduce - backward).max(last_bucket);
    IterTime {
        seconds: compute + exposed,
        compute_seconds: compute,
        allreduce_seconds: allreduce,
        exposed_seconds: exposed,
        allreduce_bytes: bytes,
        single_gpu_seconds,
    }
}

/// Seconds one GPU needs for `tokens` tokens of `cfg`'s training.
fn compute_seconds(
    cfg: &TrainConfig,
    tokens: u64,
    reported_params: u64,
    gpu: &Gpu,
    patches: Patches,
    mfu: f64,
) -> f64 {
    let tokens = tokens as f64;
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

    #[test]
    fn ddp_divides_the_work_and_adds_the_exposed_all_reduce() {
        let g = crate::gpu::find("rtx3090").unwrap();
        let one = TrainConfig::default();
        let n = ParamCounts::of(&one).reported;
        let two = TrainConfig {
            world_size: 2,
            ..one.clone()
        };
        let t = iter_time(&two, n, g, Patches::default(), DEFAULT_MFU);
        assert!(
            (t.single_gpu_seconds - iter_seconds(&one, n, g, Patches::default(), DEFAULT_MFU))
                .abs()
                < 1e-9
        );
        assert!((t.compute_seconds - t.single_gpu_seconds / 2.0).abs() < 1e-9);
        // 4·P fp32 bytes; ring: 2·(N−1)/N of them at 80 % of the NVLink bridge's 56.25 GB/s
        let p = 4.0 * ParamCounts::of(&one).total as f64;
        assert_eq!(
            t.allreduce_bytes,
            4 * u128::from(ParamCounts::of(&one).total)
        );
        assert!((t.allreduce_seconds - p / (56.25e9 * 0.8)).abs() < 1e-9);
        // 20 micro-steps per GPU: the last backward hides all but the wte bucket
        assert!(t.exposed_seconds < t.allreduce_seconds && t.exposed_seconds > 0.0);
        assert!(t.speedup() > 1.9 && t.speedup() < 2.0, "{}", t.speedup());
        // over a slow link with one micro-step per GPU the all-reduce shows
        let slow = crate::gpu::Gpu {
            link_gbps: 1.0,
            ..g.clone()
        };
        let one_step = TrainConfig {
            gradient_accumulation_steps: 2,
            ..two
        };
        let s = iter_time(&one_step, n, &slow, Patches::default(), DEFAULT_MFU);
        assert!(s.exposed_seconds > 0.5 * s.allreduce_seconds, "{s:?}");
    }
}
