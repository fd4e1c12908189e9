//! The full answer for a nanoGPT run on a card: the closed form (the explanation of the numbers)
//! and the run replayed through the simulated caching allocator ([`Run`]).

use crate::config::TrainConfig;
use crate::engine::run::{self, Run};
use crate::engine::verdict::{Risk, Verdict};
use crate::error::ConfigError;
use crate::estimate::{estimate_patched, Estimate};
use crate::gpu::Budget;
use crate::physics::Patches;
use crate::sequence::{generate_rank, Rank};

/// Peaks, components and verdict of one run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Analysis {
    /// The closed form (moments, formulas): the explanation of the numbers below.
    pub estimate: Estimate,
    /// The run replayed, uncapped and on the card: under DDP, the rank the verdict is judged on
    /// (rank 0, or the ranks that only train where they need more).
    pub run: Run,
    /// Under DDP: each rank's peak and what it reserves (ddp.rs).
    pub ranks: Option<crate::ddp::Ranks>,
}

impl std::ops::Deref for Analysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

impl Analysis {
    /// This run's time per iteration on `gpu` (the all-reduce under DDP included), at `mfu`.
    pub fn iter_time(&self, gpu: &crate::gpu::Gpu, mfu: f64) -> crate::speed::IterTime {
        let est = &self.estimate;
        crate::speed::iter_time(
            &est.config,
            est.params.reported,
            gpu,
            crate::physics::Patches::default(),
            mfu,
        )
    }

    /// Per-GPU peaks of a DDP run, from the replays (`None` on one GPU).
    pub fn ranks(&self) -> Option<crate::ddp::Ranks> {
        self.ranks.clone()
    }
}

/// Replays `cfg` (with `patches`) for `budget`'s card.
pub fn analyze_patched(
    cfg: &TrainConfig,
    budget: &Budget,
    patches: Patches,
) -> Result<Analysis, ConfigError> {
    let estimate = estimate_patched(cfg, &budget.gpu, patches)?;
    let (zero, others) = replay_released(cfg, budget, patches)?;
    let Some(others) = others else {
        return Ok(Analysis {
            estimate,
            run: one_gpu(cfg, budget, patches, zero),
            ranks: None,
        });
    };
    // each kind of rank again with the old bucket held through iteration 1 (ddp.rs): their
    // reserves for the report, and their verdicts for the judged one's
    let [zero_held, others_held] = RANKS[1].map(|rank| replay_rank(cfg, budget, patches, rank));
    let (zero_held, others_held) = (zero_held?, others_held?);
    let held_fits = zero_held.verdict.fits && others_held.verdict.fits;
    let (run, ddp) = judge(zero, others, || held_fits);
    let (zero, others) = if ddp.judged_rank == 0 {
        (&run, &ddp.other)
    } else {
        (&ddp.other, &run)
    };
    let ranks = crate::ddp::Ranks::replayed(
        cfg,
        [zero, &zero_held],
        [others, &others_held],
        ddp.judged_rank,
    );
    Ok(Analysis {
        estimate,
        run,
        ranks,
    })
}

/// [`analyze_patched`]'s run alone, without the closed form: what the peak, components and
/// verdict come from (on one GPU its only run; under DDP the one [`judge`] picks).
pub fn replay_patched(
    cfg: &TrainConfig,
    budget: &Budget,
    patches: Patches,
) -> Result<Run, ConfigError> {
    Ok(match replay_released(cfg, budget, patches)? {
        (zero, None) => one_gpu(cfg, budget, patches, zero),
        (zero, Some(others)) => judge(zero, others, || fits_held(cfg, budget, patches)).0,
    })
}

/// Under DDP, which kind of rank the verdict is judged on, and the other kind's run.
struct DdpReplays {
    /// 0 (rank 0, which also evaluates) or 1 (the ranks that only train).
    judged_rank: u32,
    other: Run,
}

/// Rank 0 (which also evaluates) and a rank that only trains, with the old bucket set released
/// before iteration 1 rebuilds it (`[0]`) or held through it (`[1]`).
const RANKS: [[Rank; 2]; 2] = [
    [Rank::new(true, false), Rank::new(false, false)],
    [Rank::new(true, true), Rank::new(false, true)],
];

/// The kinds of rank `cfg`'s run has ([`RANKS`]): rank 0 alone on one GPU.
fn ranks(cfg: &TrainConfig, old_buckets_held: bool) -> &'static [Rank] {
    let kinds = &RANKS[usize::from(old_buckets_held)];
    if cfg.is_multi_gpu() {
        kinds
    } else {
        &kinds[..1]
    }
}

fn replay_rank(
    cfg: &TrainConfig,
    budget: &Budget,
    patches: Patches,
    rank: Rank,
) -> Result<Run, ConfigError> {
    let sequence = generate_rank(cfg, &budget.gpu, patches, rank);
    Run::replay(sequence, cfg.allocator, budget.allocator_cap())
}

/// Rank 0's run and, under DDP, a rank's that only trains, the old bucket released in time.
fn replay_released(
    cfg: &TrainConfig,
    budget: &Budget,
    patches: Patches,
) -> Result<(Run, Option<Run>), ConfigError> {
    cfg.validate()?;
    let zero = replay_rank(cfg, budget, patches, RANKS[0][0])?;
    let others = cfg
        .is_multi_gpu()
        .then(|| replay_rank(cfg, budget, patches, RANKS[0][1]))
        .transpose()?;
    Ok((zero, others))
}

/// Under DDP, the run the verdict is judged on, and the other kind of rank's. Each rank is
/// replayed with the old bucket released in time (what most measured ranks reserved), and the
/// worse one judged: out of memory before tight before fits, then the larger need (measured,
/// ddp2.jsonl: a rank that only trains reserves more than rank 0 in some runs, its cache laid out
/// without the eval's blocks). Where it fits but a rank holding the old bucket through iteration
/// 1 would not (`held_fits`, asked only then), it is tight: whether it runs is NCCL's watchdog's
/// timing (ddp.rs).
fn judge(zero: Run, others: Run, held_fits: impl FnOnce() -> bool) -> (Run, DdpReplays) {
    let severity = |r: &Run| (r.verdict.risk as u8, r.verdict.need_bytes);
    let (judged_rank, judged, other) = if severity(&others) > severity(&zero) {
        (1, others, zero)
    } else {
        (0, zero, others)
    };
    (
        judge_alone(judged, held_fits),
        DdpReplays { judged_rank, other },
    )
}

/// The run on one GPU: as replayed, or under torchrun (DDP on one GPU) judged as rank 0 alone.
fn one_gpu(cfg: &TrainConfig, budget: &Budget, patches: Patches, zero: Run) -> Run {
    if cfg.is_ddp() {
        judge_alone(zero, || fits_held(cfg, budget, patches))
    } else {
        zero
    }
}

/// The race's rule for a judged run (rank 0 alone on one GPU under torchrun, the worse rank under
/// [`judge`], build-nanogpt's symmetric ranks): tight where it fits with DDP's old bucket released
/// in time but would not with it held (`held_fits`, asked only then).
pub(crate) fn judge_alone(mut zero: Run, held_fits: impl FnOnce() -> bool) -> Run {
    if zero.verdict.risk == Risk::Fits && !held_fits() {
        let v = &zero.verdict;
        zero.verdict = Verdict::new(Risk::Tight, v.budget_bytes, v.need_bytes);
    }
    zero
}

/// Whether every rank runs on `budget`'s card with the old bucket set held through iteration 1.
fn fits_held(cfg: &TrainConfig, budget: &Budget, patches: Patches) -> bool {
    ranks(cfg, true).iter().all(|&rank| {
        run::fits(
            &generate_rank(cfg, &budget.gpu, patches, rank),
            cfg.allocator,
            budget.allocator_cap(),
        )
    })
}

/// Whether `cfg` runs on `budget`'s card: [`Analysis`]'s `verdict.fits` with one replay per kind
/// of rank instead of up to four (what the fix ranker's searches ask, many times).
pub fn fits_on_card(cfg: &TrainConfig, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && ranks(cfg, false).iter().all(|&rank| {
            run::fits(
                &generate_rank(cfg, &budget.gpu, Patches::default(), rank),
                cfg.allocator,
                budget.allocator_cap(),
            )
        })
}

/// [`analyze_patched`] for nanoGPT as it is.
pub fn analyze(cfg: &TrainConfig, budget: &Budget) -> Result<Analysis, ConfigError> {
    analyze_patched(cfg, budget, Patches::default())
}
