//! DistributedDataParallel: what `torchrun --nproc_per_node=N train.py` adds to each GPU.
//!
//! train.py wraps the model in `DDP(model, device_ids=[ddp_local_rank])` after building the
//! optimizer (under torchrun, so on one GPU too when launched with `--nproc_per_node=1`). What
//! that allocates (trace `data/traces/ddp1_s_b16_ev`): the module's state broadcast from rank 0
//! in flat chunks of up to 250 MiB, two in flight (`engine::ddp::broadcast_chunks`; their
//! segments stay cached), then the Reducer's gradient buffer as **one bucket** of every
//! parameter: until the first backward has shown the order gradients become ready, DDP buckets
//! with `bucket_size_limits=[sys.maxsize]`. 4 bytes per parameter, on every rank, from before
//! the first `estimate_loss()` to the end (measured, `ddp2.jsonl`: +4.0·P on every rank in every
//! phase, GPT-2 124M and 350M).
//!
//! At iteration 1's first forward the Reducer rebuilds its buckets in the ready order, 1 MiB
//! then 25 MiB each (`engine::ddp::buckets`: 13 for GPT-2 124M). The old bucket outlives that for
//! a while: the last all-reduce's work object (which stashes its tensors) is released by
//! ProcessGroupNCCL's watchdog thread, which wakes every 100 ms (`kWatchdogThreadSleepMillis`),
//! not by the loop. Measured: in 3 of 8 runs of `ddp2.jsonl` one rank's steady peak carried a
//! second 4·P (rank 0 or rank 1, run to run), and 2 of 6 one-GPU torchrun runs of one config
//! (`ddp1-race.jsonl`); tools/probe/ddp_buckets_probe.py: never present at a peak when each
//! iteration pauses 0.2 s. vramfit keeps the old bucket through iteration 1 in the peaks it
//! gives per rank, so they hold whichever rank gets it, and gives the peak without it beside.
//!
//! What a rank *reserves* follows from the same race. Released before the rebuild, the new set
//! takes the old bucket's blocks; held, the new set needs blocks of its own and what the
//! allocator caches from then on is laid out around both. vramfit replays both
//! ([`Ranks::reserved`]), reports and judges the released one (what 15 of the 16 measured ranks
//! reserved), and calls the verdict tight where only the held one runs out. Measured
//! (`tests/ddp.rs`): every eager GPT-2 rank of `ddp2.jsonl` is one of its two replays to the byte,
//! the compiled and character-level ones within 1 %; every one-GPU torchrun run the released one
//! to the byte, paused or not.
//!
//! Only rank 0 (`master_process`) runs `estimate_loss()`; every rank runs
//! `gradient_accumulation_steps / world_size` micro-steps per iteration. The others' caches are
//! laid out without the eval's blocks, so they are replayed on their own, and in some runs they
//! reserve more than rank 0 (`ddp2_s_b8_acc2`: rank 1 11.54 GiB, rank 0 10.67 GiB, each its
//! replay to the byte): the verdict is the worse rank's.

use crate::config::TrainConfig;

/// What the buckets take on the card: each one as the caching allocator rounds it.
pub fn bucket_total(cfg: &TrainConfig) -> u128 {
    bucket_bytes(cfg)
        .iter()
        // (the allocator counts in u64; a bucket past that is past any card, rounded or not)
        .map(|&b| u64::try_from(b).map_or(b, |b| crate::allocator::round_size(b).into()))
        .sum()
}

/// The flat chunks `DDP(model)` broadcasts the module's state in (`engine::ddp::broadcast_chunks`):
/// the parameters in the module's order, then its buffers (the causal masks of train.py's own
/// attention). Empty without DDP.
pub fn broadcast_chunk_bytes(cfg: &TrainConfig) -> Vec<u128> {
    if !cfg.is_ddp() {
        return Vec::new();
    }
    let (params, buffers): (Vec<_>, Vec<_>) = crate::params::model_tensors(cfg)
        .into_iter()
        .partition(|t| matches!(t, crate::params::ModelTensor::Param(_)));
    crate::engine::ddp::broadcast_chunks(params.into_iter().chain(buffers).map(|t| t.bytes()))
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
    /// The rank the verdict is judged on and the bar shows: 0, or 1 for the ranks that only
    /// train where they need more.
    pub worst_rank: u32,
    /// What each kind of rank reserves, from the replays (`None` for the closed form).
    pub reserved: Option<RanksReserved>,
}

/// What a DDP run's ranks reserve at their peak: `[released, held]`, the old bucket set released
/// by NCCL's watchdog before iteration 1 rebuilds it, or held through iteration 1 (the
/// verdict's). A real run lands on one or the other, by the watchdog's timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RanksReserved {
    pub rank0: [u128; 2],
    pub others: [u128; 2],
}

impl Ranks {
    /// The ranks of `cfg`'s run from rank 0's phase peaks in the closed form (which include the
    /// buckets and, in steady training, the rebuilt set). `None` on one GPU.
    pub fn new(cfg: &TrainConfig, first_iter: u128, steady: u128, eval: u128) -> Option<Ranks> {
        if !cfg.is_multi_gpu() {
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
            worst_rank: 0,
            reserved: None,
        })
    }

    /// The ranks of `cfg`'s run from the replays of rank 0 and of a rank that only trains, each
    /// `[released, held]` (the old bucket set), and the rank the verdict is judged on. `None`
    /// on one GPU.
    pub fn replayed(
        cfg: &TrainConfig,
        rank0: [&crate::engine::run::Run; 2],
        others: [&crate::engine::run::Run; 2],
        worst_rank: u32,
    ) -> Option<Ranks> {
        if !cfg.is_multi_gpu() {
            return None;
        }
        let buckets = bucket_total(cfg);
        let reserved = |r: [&crate::engine::run::Run; 2]| r.map(|r| r.free_run.peak_reserved);
        Some(Ranks {
            world_size: cfg.world_size,
            accum_per_rank: cfg.accum_per_rank(),
            bucket_bytes: buckets,
            rebuild_bytes: buckets,
            rank0_peak: rank0[1].peak_bytes(),
            other_ranks_peak: others[1].peak_bytes(),
            steady_without_rebuild: rank0[0]
                .phase_bytes(crate::physics::Phase::TrainSteady)
                .unwrap_or(0),
            worst_rank,
            reserved: Some(RanksReserved {
                rank0: reserved(rank0),
                others: reserved(others),
            }),
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
