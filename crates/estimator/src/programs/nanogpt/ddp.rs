//! DistributedDataParallel: what `torchrun --nproc_per_node=N train.py` adds to each GPU.
//!
//! train.py wraps the model in `DDP(model, device_ids=[ddp_local_rank])` after building the
//! optimizer. DDP's Reducer then holds one flat fp32 gradient buffer per bucket, sized as
//! `engine::ddp::buckets` says. Together they are 4 bytes per
//! parameter, on every rank, from before the first `estimate_loss()` to the end
//! (measured, `ddp2.jsonl`: +4.0·P on every rank in every phase, GPT-2 124M and 350M).
//!
//! After the first synchronised backward the Reducer rebuilds its buckets in the order gradients
//! became ready, at the next training forward (iteration 1). The old set outlives that for a
//! while: the last all-reduce's work object (which stashes its tensors) is released by
//! ProcessGroupNCCL's watchdog thread on its own schedule, not the loop's. Measured: in 3 of 8
//! runs of `ddp2.jsonl` one rank's steady peak carried a second 4·P (rank 0 or rank 1, run to
//! run); the others did not. tools/probe/ddp_buckets_probe.py shows the mechanism on two GPUs:
//! +4·P at iteration 1's first forward, gone some iterations later, and never present at a peak
//! when each iteration pauses 0.2 s. vramfit keeps the second set through iteration 1 and counts
//! it in the steady peak, so a verdict holds whichever rank gets it, and reports the peak without
//! it beside.
//!
//! Only rank 0 (`master_process`) runs `estimate_loss()`; every rank runs
//! `gradient_accumulation_steps / world_size` micro-steps per iteration.

use crate::config::TrainConfig;

/// What the buckets take on the card: each one as the caching allocator rounds it.
pub fn bucket_total(cfg: &TrainConfig) -> u128 {
    bucket_bytes(cfg)
        .iter()
        // (the allocator counts in u64; a bucket past that is past any card, rounded or not)
        .map(|&b| u64::try_from(b).map_or(b, |b| crate::allocator::round_size(b).into()))
        .sum()
}

/// The bytes of each of DDP's gradient buckets, in the order the Reducer allocates them
/// (`compute_bucket_assignment_by_size` over the reversed parameters). Empty without DDP.
pub fn bucket_bytes(cfg: &TrainConfig) -> Vec<u128> {
    if !cfg.is_ddp() {
        return Vec::new();
    }
    crate::engine::ddp::buckets(
        crate::params::tensors(cfg)
            .into_iter()
            .rev()
            .map(|p| p.bytes),
    )
}

/// Which parameter tensors (in [`crate::params::tensors`] order) rank 0 keeps AdamW state for
/// under ZeRO-1 (`torch.distributed.optim.ZeroRedundancyOptimizer`): each param group's tensors,
/// largest first, go to the rank holding the fewest elements so far (the lowest rank on a tie),
/// the counts carrying over from group to group — `_partition_parameters`. nanoGPT's groups:
/// the decayed tensors, then the rest.
pub fn zero1_rank0_owns(cfg: &TrainConfig) -> Vec<bool> {
    let tensors = crate::params::tensors(cfg);
    let world = cfg.world_size.max(1) as usize;
    let mut load = vec![0u128; world];
    let mut owner = vec![0usize; tensors.len()];
    for decay in [true, false] {
        let mut group: Vec<usize> = (0..tensors.len())
            .filter(|&i| tensors[i].decay == decay)
            .collect();
        // a stable sort, as Python's sorted(..., reverse=True) keeps equal sizes in order
        group.sort_by(|&a, &b| tensors[b].bytes.cmp(&tensors[a].bytes));
        for i in group {
            let rank = (0..world).min_by_key(|&r| (load[r], r)).unwrap_or(0);
            owner[i] = rank;
            load[rank] += tensors[i].bytes;
        }
    }
    owner.into_iter().map(|r| r == 0).collect()
}

/// fp32 parameter bytes rank 0 keeps AdamW state for under ZeRO-1 (all of them without DDP).
pub fn zero1_rank0_bytes(cfg: &TrainConfig) -> u128 {
    crate::params::tensors(cfg)
        .iter()
        .zip(zero1_rank0_owns(cfg))
        .filter(|(_, own)| *own)
        .map(|(t, _)| t.bytes)
        .sum()
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
        let buckets = bucket_total(cfg);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamCounts;

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
        assert!(b[1..b.len() - 1]
            .iter()
            .all(|&x| x >= crate::engine::ddp::BUCKET_CAP_BYTES));
        assert!(bucket_bytes(&TrainConfig::default()).is_empty());
    }

    #[test]
    fn zero1_gives_rank_0_about_its_share() {
        let total = 4 * u128::from(ParamCounts::of(&TrainConfig::default()).total);
        for world in [2u32, 4, 8] {
            let cfg = TrainConfig {
                world_size: world,
                gradient_accumulation_steps: 40,
                ..TrainConfig::default()
            };
            let share = zero1_rank0_bytes(&cfg) as f64 / total as f64;
            // wte alone is 124M's largest tensor (31 %): rank 0 gets it first
            let ideal = 1.0 / f64::from(world);
            assert!(
                share >= ideal * 0.95 && share <= (ideal * 1.05).max(0.32),
                "{world}: {share}"
            );
        }
        assert_eq!(zero1_rank0_bytes(&TrainConfig::default()), total);
    }
}
