//! DistributedDataParallel: what `torchrun --nproc_per_node=N train.py` adds to each GPU.
//!
//! train.py wraps the model in `DDP(model, device_ids=[ddp_local_rank])` after building the
//! optimizer. DDP's Reducer then holds one flat fp32 gradient buffer per bucket
//! (`gradient_as_bucket_view=False`, the default): the parameters in reverse order, a first
//! bucket closed at 1 MiB (`dist._DEFAULT_FIRST_BUCKET_BYTES`) and the rest at 25 MiB
//! (`bucket_cap_mb`), a bucket closing once it reaches its limit. Together they are 4 bytes per
//! parameter, on every rank, from before the first `estimate_loss()` to the end
//! (measured, `ddp2.jsonl`: +4.0·P on every rank in every phase, GPT-2 124M and 350M).
//!
//! After the first synchronised backward the Reducer rebuilds its buckets in the order gradients
//! became ready, at the next training forward (iteration 1). The old set can outlive that by most
//! of the iteration: the last all-reduce's work object (which stashes its tensors) is released by
//! ProcessGroupNCCL's watchdog thread on its own schedule. Measured: in 3 of 8 runs one rank's
//! steady peak carried a second 4·P (rank 0 or rank 1, run to run); the others did not. vramfit
//! counts it in the steady peak, so a verdict holds whichever rank gets it, and reports the peak
//! without it beside.
//!
//! Only rank 0 (`master_process`) runs `estimate_loss()`; every rank runs
//! `gradient_accumulation_steps / world_size` micro-steps per iteration.

use crate::config::TrainConfig;

/// DDP's first bucket limit: `torch.distributed._DEFAULT_FIRST_BUCKET_BYTES`.
pub const FIRST_BUCKET_BYTES: u128 = 1 << 20;
/// DDP's `bucket_cap_mb` default (25) in bytes.
pub const BUCKET_CAP_BYTES: u128 = 25 << 20;

/// The fp32 parameter tensors of model.py's GPT in `model.parameters()` order (the tied
/// wte/lm_head weight once), in bytes.
pub fn parameter_bytes(cfg: &TrainConfig) -> Vec<u128> {
    let (c, v, t) = (
        u128::from(cfg.n_embd),
        u128::from(cfg.vocab_size),
        u128::from(cfg.block_size),
    );
    let mut out = vec![4 * v * c, 4 * t * c];
    for _ in 0..cfg.n_layer {
        for (fan_in, fan_out, layer_norm) in [
            (c, 3 * c, true),
            (c, c, false),
            (c, 4 * c, true),
            (4 * c, c, false),
        ] {
            if layer_norm {
                out.push(4 * c);
                if cfg.bias {
                    out.push(4 * c);
                }
            }
            out.push(4 * fan_in * fan_out);
            if cfg.bias {
                out.push(4 * fan_out);
            }
        }
    }
    out.push(4 * c);
    if cfg.bias {
        out.push(4 * c);
    }
    out
}

/// The bytes of each of DDP's gradient buckets, in the order the Reducer allocates them
/// (`compute_bucket_assignment_by_size` over the reversed parameters). Empty without DDP.
pub fn bucket_bytes(cfg: &TrainConfig) -> Vec<u128> {
    if !cfg.is_ddp() {
        return Vec::new();
    }
    let mut buckets = Vec::new();
    let (mut size, mut limit) = (0u128, FIRST_BUCKET_BYTES);
    for p in parameter_bytes(cfg).into_iter().rev() {
        size += p;
        if size >= limit {
            buckets.push(size);
            size = 0;
            limit = BUCKET_CAP_BYTES;
        }
    }
    if size > 0 {
        buckets.push(size);
    }
    buckets
}

/// What each GPU of a DDP run holds, beside the single-GPU physics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranks {
    pub world_size: u32,
    /// Micro-steps per process per iteration.
    pub accum_per_rank: u32,
    /// DDP's gradient buckets on every rank.
    pub bucket_bytes: u128,
    /// The old bucket set a rank may still hold during iteration 1 (counted in steady peaks).
    pub rebuild_bytes: u128,
    /// Rank 0's overall peak: training plus `estimate_loss()`. Always the worst rank.
    pub rank0_peak: u128,
    /// Every other rank's peak: training only.
    pub other_ranks_peak: u128,
    /// The steady peak without the rebuilt-bucket transient: what most runs show.
    pub steady_without_rebuild: u128,
}

impl Ranks {
    /// The rank whose peak the page and the verdict show: rank 0 (it also evaluates).
    pub const WORST_RANK: u32 = 0;

    /// The ranks of `cfg`'s run from rank 0's phase peaks (which include the buckets and, in
    /// steady training, the rebuilt set). `None` without DDP.
    pub fn new(cfg: &TrainConfig, first_iter: u128, steady: u128, eval: u128) -> Option<Ranks> {
        if !cfg.is_ddp() {
            return None;
        }
        let buckets: u128 = bucket_bytes(cfg)
            .iter()
            .map(|&b| crate::allocator::round_size(b))
            .sum();
        let train = first_iter.max(steady);
        Some(Ranks {
            world_size: cfg.world_size,
            accum_per_rank: cfg.accum_per_rank(),
            bucket_bytes: buckets,
            rebuild_bytes: buckets,
            rank0_peak: train.max(eval),
            other_ranks_peak: train,
            steady_without_rebuild: steady.saturating_sub(buckets),
        })
    }

    /// Rank `r`'s peak.
    pub fn peak_of(&self, r: u32) -> u128 {
        if r == 0 {
            self.rank0_peak
        } else {
            self.other_ranks_peak
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamCounts;

    #[test]
    fn parameters_are_every_tensor_once() {
        for bias in [false, true] {
            let cfg = TrainConfig {
                bias,
                ..TrainConfig::default()
            };
            let sum: u128 = parameter_bytes(&cfg).iter().sum();
            assert_eq!(sum, 4 * u128::from(ParamCounts::of(&cfg).total));
        }
    }

    #[test]
    fn buckets_hold_every_gradient_first_one_small() {
        let cfg = TrainConfig {
            world_size: 2,
            ..TrainConfig::default()
        };
        let b = bucket_bytes(&cfg);
        assert_eq!(
            b.iter().sum::<u128>(),
            4 * u128::from(ParamCounts::of(&cfg).total)
        );
        // reversed: ln_f (3 KiB) and the last c_proj (9 MiB) close the 1 MiB first bucket
        assert_eq!(b[0], 4 * 768 + 4 * 4 * 768 * 768);
        assert!(b[1..b.len() - 1].iter().all(|&x| x >= BUCKET_CAP_BYTES));
        assert!(bucket_bytes(&TrainConfig::default()).is_empty());
    }
}
