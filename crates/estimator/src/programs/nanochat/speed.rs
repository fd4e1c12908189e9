//! How long one base_train.py step takes on a card: what decides how many steps' collective
//! tensors NCCL still holds when more than one GPU trains (see [`super::sequence::Ranks`]).
//!
//! FLOPs are counted as nanochat counts them (`GPT.estimate_flops`: 6 per matmul weight and
//! token, plus 12·h·q·window per layer for attention), over the tokens one rank runs in a step.
//! The step is those FLOPs at [`MATMUL_UTILISATION`] of the card's peak, plus a fixed cost per
//! step and per micro-step (the loop, the optimizer's small kernels, launching the compiled
//! graphs). Both were measured with base_train.py on an H200 (PyTorch 2.11, cold compile cache
//! excluded: steps 2-11; data/measured/nanochat-ranks.jsonl): d6, d12, d20 at B32 T2048 and d26
//! at B16 T2048 on one GPU (46.9, 156, 504, 542 ms: median steps) and d12 B8 T1024 with 2
//! micro-steps and d20 B8 T2048 on four (50-59 and 142-147 ms); the model gives each within 10 %
//! (45.2, 148, 519, 538; 52.9 and 142 ms).

use super::config::NanochatConfig;
use super::shape::{Owner, Shape};
use crate::gpu::Gpu;
use crate::Dtype;

/// The fraction of the card's peak the forward and backward matmuls sustain.
pub const MATMUL_UTILISATION: f64 = 0.38;
/// Seconds each optimizer step costs beyond its FLOPs.
pub const STEP_OVERHEAD_S: f64 = 0.010;
/// Seconds each micro-step costs beyond its FLOPs.
pub const MICRO_STEP_OVERHEAD_S: f64 = 0.006;
/// ProcessGroupNCCL's watchdog polls for completed work this often
/// (`kWatchdogThreadSleepMillis`, 100 ms in PyTorch 2.11).
pub const WATCHDOG_INTERVAL_S: f64 = 0.100;

/// FLOPs per token, forward and backward, as `GPT.estimate_flops` counts them.
pub fn flops_per_token(s: &Shape) -> f64 {
    let matmul: u64 = s
        .params()
        .iter()
        .filter(|p| p.owner == Owner::Muon)
        .map(|p| p.numel())
        .sum::<u64>()
        + s.v * s.c;
    let attention: u64 = s.windows.iter().map(|&w| 12 * s.h * s.d * w.min(s.t)).sum();
    6.0 * matmul as f64 + attention as f64
}

/// Seconds one optimizer step takes on each rank of `cfg` on `gpu`.
pub fn step_seconds(cfg: &NanochatConfig, gpu: &Gpu) -> f64 {
    let s = Shape::of(cfg);
    let micro = cfg.grad_accum_steps();
    let tokens = cfg.tokens_per_micro_step() as f64 * micro as f64;
    let dtype = if s.e == 4 {
        Dtype::Float32
    } else {
        Dtype::Bfloat16
    };
    let peak = gpu.peak_tflops(dtype) * 1e12;
    tokens * flops_per_token(&s) / (peak * MATMUL_UTILISATION)
        + STEP_OVERHEAD_S
        + MICRO_STEP_OVERHEAD_S * micro as f64
}

/// The most steps whose collective tensors are held at once while a step runs, for steps of
/// `step` seconds: a step's tensors go at the first collective launched after the watchdog has
/// seen its work complete, at most one interval after it completed, and the next step launches
/// its first collective at once (the CPU runs ahead of the GPU): ⌈interval / step⌉ + 1.
/// Measured without any wait before the optimizer step (a real run): d20 on four H200s, steps
/// of 142 ms, held 2; d12, 50-58 ms, up to 3 (2.4 on four GPUs, 3 on two over 300 steps).
pub fn held_stashes(step: f64) -> u32 {
    let per_interval = (WATCHDOG_INTERVAL_S / step.max(1e-6)).ceil();
    // a step of a microsecond would hold 100,000: no run is that fast, and the replay grows
    // with the count
    per_interval.min(64.0) as u32 + 1
}

/// The optimizer steps base_train.py runs (`scripts/base_train.py` 338–350): `--num-iterations`
/// if given, else `--target-flops` over nanochat's FLOPs per step, else `--target-param-data-ratio`
/// times the scaling parameters over the total batch.
pub fn base_iterations(cfg: &NanochatConfig) -> u64 {
    let total = cfg.total_batch_tokens().max(1);
    if cfg.num_iterations > 0 {
        return cfg.num_iterations as u64;
    }
    let s = Shape::of(cfg);
    if cfg.target_flops > 0.0 {
        return (cfg.target_flops / (flops_per_token(&s) * total as f64)).round() as u64;
    }
    if cfg.target_param_data_ratio > 0.0 {
        let tokens = (cfg.target_param_data_ratio * s.scaling_params() as f64) as u64;
        return tokens / total;
    }
    0
}

/// base_train.py's whole training on `gpu` (each of `cfg.world_size` ranks): its steps at
/// [`step_seconds`], the evaluations and the compile left out. An estimate for planning.
pub fn base_training_seconds(cfg: &NanochatConfig, gpu: &Gpu) -> f64 {
    base_iterations(cfg) as f64 * step_seconds(cfg, gpu)
}
