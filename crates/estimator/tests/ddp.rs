//! DDP against the measured two-GPU runs (data/measured/ddp2.jsonl, one object per rank):
//! every rank's peaks within 2 %, closed form and replay, and nanoGPT's divisibility rule.

#![allow(clippy::unwrap_used)]

mod common;

use common::{config, measured, measured_runs, project_runs};

use estimator::engine::run::Run;
use estimator::sequence::{generate_rank, Rank};
use estimator::{analyze, estimate, gpu, Budget, Patches, Phase, Problem, Risk, TrainConfig};
use serde_json::Value;

fn err(predicted: u128, measured: f64) -> f64 {
    (predicted as f64 - measured).abs() / measured
}

/// Each rank's first-iteration and eval peaks within 2 %; its steady peak within 2 % of the
/// steady peak with DDP's rebuilt-bucket transient or of the one without (which a run shows
/// depends on thread timing, ddp.rs), and never above the one vramfit reports.
fn check(name: &str, ranks: &estimator::ddp::Ranks, first: u128, eval: u128, run: &Value) {
    let rank = run["rank"].as_u64().unwrap();
    let first_m = measured(run, "peak_allocated_train_iter0").unwrap();
    assert!(
        err(first, first_m) < 0.02,
        "{name} rank {rank}: first iteration {first} vs {first_m}"
    );
    let steady_m = measured(run, "peak_allocated_train_steady").unwrap();
    let with = ranks.other_ranks_peak.max(first);
    let steady_with = ranks.steady_without_rebuild + ranks.rebuild_bytes;
    let without = ranks.steady_without_rebuild;
    assert!(
        err(steady_with, steady_m) < 0.02 || err(without, steady_m) < 0.02,
        "{name} rank {rank}: steady {steady_m} is neither {steady_with} nor {without}"
    );
    assert!(
        steady_m < with as f64 * 1.02,
        "{name} rank {rank}: steady {steady_m} above the reported peak {with}"
    );
    match (rank, measured(run, "peak_allocated_eval")) {
        (0, Some(eval_m)) => assert!(
            err(eval, eval_m) < 0.02,
            "{name} rank 0: eval {eval} vs {eval_m}"
        ),
        (0, None) => panic!("{name}: rank 0 evaluates"),
        (_, m) => assert_eq!(m, None, "{name} rank {rank}: only rank 0 evaluates"),
    }
}

#[test]
fn every_rank_within_two_percent_closed_form() {
    let card = gpu::find("h200").unwrap();
    for run in measured_runs("ddp2.jsonl") {
        let name = run["name"].as_str().unwrap();
        let est = estimate(&config(&run), card).unwrap();
        let ranks = est.ranks().unwrap();
        let eval = est.phase_bytes(Phase::Eval);
        check(
            name,
            &ranks,
            est.phase_bytes(Phase::TrainFirstIter),
            eval,
            &run,
        );
    }
}

/// One kind of rank's run replayed on its own: rank 0 (which evaluates) or a rank that only
/// trains, with the old bucket set held through iteration 1 or released before it.
fn rank_run(cfg: &TrainConfig, budget: &Budget, evaluates: bool, held: bool) -> Run {
    let sequence = generate_rank(
        cfg,
        &budget.gpu,
        Patches::default(),
        Rank::new(evaluates, held),
    );
    Run::replay(sequence, cfg.allocator, budget.allocator_cap()).unwrap()
}

#[test]
fn every_rank_within_two_percent_replayed() {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let mut transient_seen = 0;
    for run in measured_runs("ddp2.jsonl") {
        let name = run["name"].as_str().unwrap();
        let cfg = config(&run);
        let a = analyze(&cfg, &budget).unwrap();
        let ranks = a.ranks().unwrap();
        let rank0 = rank_run(&cfg, &budget, true, true);
        check(
            name,
            &ranks,
            rank0.phase_bytes(Phase::TrainFirstIter).unwrap(),
            rank0.phase_bytes(Phase::Eval).unwrap(),
            &run,
        );
        let steady_m = measured(&run, "peak_allocated_train_steady").unwrap();
        if err(ranks.steady_without_rebuild + ranks.rebuild_bytes, steady_m) < 0.02 {
            transient_seen += 1;
        }
        // DDP adds 4 bytes per parameter on every rank: the buckets
        let p = u128::from(a.estimate.params.total);
        assert!(ranks.bucket_bytes >= 4 * p && ranks.bucket_bytes < 4 * p + (1 << 20));
    }
    // the data hold both kinds of steady peak; the test would not notice one model missing otherwise
    assert_eq!(transient_seen, 3);
}

/// What each rank reserves (issue 27): the 16 ranks of ddp2.jsonl against their kind's two
/// replays, the old bucket set released before iteration 1 rebuilds it or held through it (ddp.rs:
/// which one is NCCL's watchdog's timing). The ten eager GPT-2 ranks are one of the two to the
/// byte, the compiled and character-level ones within 1 % (8 the released replay's alone, 1 the
/// held one's alone: `ddp2_s_b4` rank 0; 7 either's). Before stop 68 every rank was rank 0's
/// replay with the set held and DDP's init as the rebuilt buckets: median 5.8 %, worst 14.9 %.
/// The reserved bytes vramfit reports, the worse rank's released replay, are within 1 % of the
/// run's larger rank in seven of the eight runs (four to the byte); in `ddp2_s_b4` that rank held
/// the set (−5.6 %), which on a card between the two replays the verdict calls tight.
#[test]
fn every_rank_reserves_one_of_its_two_replays() {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let (mut released_only, mut held_only, mut both, mut to_the_byte) = (0, 0, 0, 0);
    // each run's larger rank: its reserved bytes, and whether only the held replay has them
    let mut largest: std::collections::BTreeMap<String, (f64, bool)> = Default::default();
    let mut reported = std::collections::BTreeMap::new();
    for run in measured_runs("ddp2.jsonl") {
        let name = run["name"].as_str().unwrap().to_string();
        let rank = run["rank"].as_u64().unwrap();
        let cfg = config(&run);
        let a = analyze(&cfg, &budget).unwrap();
        let reserved = a.ranks().unwrap().reserved.unwrap();
        let [released, held] = if rank == 0 {
            reserved.rank0
        } else {
            reserved.others
        };
        let m = measured(&run, "peak_reserved").unwrap();
        let (r, h) = (err(released, m) <= 0.01, err(held, m) <= 0.01);
        eprintln!(
            "{name:18} rank {rank}: measured {m:.0}, released {:+.2} %, held {:+.2} %",
            (released as f64 - m) / m * 100.0,
            (held as f64 - m) / m * 100.0
        );
        assert!(
            r || h,
            "{name} rank {rank}: {m} is neither {released} nor {held}"
        );
        match (r, h) {
            (true, false) => released_only += 1,
            (false, true) => held_only += 1,
            _ => both += 1,
        }
        if !cfg.compile && cfg.vocab_size == 50304 {
            assert!(
                [released, held].contains(&(m as u128)),
                "{name} rank {rank}: {m} is not {released} or {held} to the byte"
            );
            to_the_byte += 1;
        }
        let e = largest.entry(name.clone()).or_insert((0.0, false));
        if m > e.0 {
            *e = (m, !r);
        }
        reported.insert(name, a.free_run.peak_reserved);
    }
    assert_eq!((released_only, held_only, both, to_the_byte), (8, 1, 7, 10));
    let mut off = Vec::new();
    for (name, &(m, held)) in &largest {
        let e = err(reported[name], m);
        eprintln!(
            "{name:18} reported {:+.2} % of the larger rank",
            (reported[name] as f64 - m) / m * 100.0
        );
        if e > 0.01 {
            assert!(held, "{name}: reported {} vs {m}", reported[name]);
            off.push(name.as_str());
        }
    }
    assert_eq!(off, ["ddp2_s_b4"]);
}

#[test]
fn accumulation_must_divide_by_the_world_size() {
    let cfg = TrainConfig {
        gradient_accumulation_steps: 5,
        world_size: 2,
        ..TrainConfig::default()
    };
    let e = cfg.validate().unwrap_err();
    assert_eq!(e.key, "gradient_accumulation_steps");
    assert_eq!(
        e.problem,
        Problem::NotDivisibleBy {
            divisor_key: "world_size",
            divisor: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "gradient_accumulation_steps=5 must be divisible by world_size=2"
    );
    // each process runs its share of the micro-steps; tokens per iteration are as given
    let ok = TrainConfig {
        gradient_accumulation_steps: 40,
        world_size: 8,
        ..TrainConfig::default()
    };
    assert_eq!(ok.accum_per_rank(), 5);
    assert_eq!(ok.tokens_per_iter(), 12 * 40 * 1024);
}

#[test]
fn world_size_is_range_checked() {
    let mut cfg = TrainConfig::default();
    assert!(cfg.set("world_size", &estimator::PyValue::Int(65)).is_err());
    assert!(cfg.set("world_size", &estimator::PyValue::Int(0)).is_err());
    cfg.set("world_size", &estimator::PyValue::Int(64)).unwrap();
}

/// torchrun on one GPU (`--nproc_per_node=1`, `torchrun=True`): train.py still wraps the model in
/// DDP, so each run is rank 0 of the same per-rank run on two GPUs. `ddp1-race.jsonl`: five runs of
/// each of two configs (three plain, two pausing 0.3 s after each optimizer step so that NCCL's
/// watchdog has released the old bucket before iteration 1 rebuilds it) and one traced: every run
/// reserved what the replay with the old bucket released reserves, to the byte, paused or not; two
/// of the six B 16 runs carried the old bucket at their steady peak (+474 MiB allocated, the race)
/// with the reserve unchanged. `ddp1-check.jsonl`: five configs predicted before they ran
/// (data/predictions/ddp1-check.jsonl, GPT-2 350M, batch 12 without accumulation, fp16, a paused
/// run, a compiled first run): the four eager ones to the byte, the compiled one −0.94 %
/// (DDPOptimizer's split graph, which vramfit does not write); every steady peak within 0.1 % of
/// the one without the old bucket or with it. Read as `python train.py` (no DDP) the same runs
/// would be answered 0.35-0.57 GiB short for GPT-2 124M (its buckets: 0.46 GiB), 1.33 GiB for 350M.
#[test]
fn one_gpu_under_torchrun() {
    let budget = Budget::for_gpu(gpu::find("h200").unwrap());
    let mut held_at_the_peak = 0;
    let mut runs = project_runs("ddp1-race.jsonl");
    runs.extend(project_runs("ddp1-check.jsonl"));
    assert_eq!(runs.len(), 16);
    for run in runs {
        let name = run["name"].as_str().unwrap();
        let mut cfg = config(&run);
        assert_eq!(cfg.world_size, 1);
        let python = analyze(&cfg, &budget).unwrap();
        cfg.torchrun = true;
        let a = analyze(&cfg, &budget).unwrap();
        assert!(a.ranks().is_none(), "{name}: one GPU has no other ranks");
        let m = measured(&run, "peak_reserved").unwrap();
        let released = a.free_run.peak_reserved;
        if cfg.compile {
            assert!(err(released, m) < 0.01, "{name}: {released} vs {m}");
        } else {
            assert_eq!(released, m as u128, "{name}");
        }
        // what reading the launch as `python train.py` would miss: the buckets (4·P), some of
        // them in blocks the cache would have held anyway
        let missed = released - python.free_run.peak_reserved;
        let buckets = estimator::ddp::bucket_total(&cfg);
        eprintln!("{name}: python train.py's replay {missed} bytes short (buckets {buckets})");
        assert!(
            missed >= buckets / 2,
            "{name}: {missed} short, buckets {buckets}"
        );
        let steady = measured(&run, "peak_allocated_train_steady").unwrap();
        let held = rank_run(&cfg, &budget, true, true).peak_bytes();
        if err(held, steady) < 0.001 {
            held_at_the_peak += 1;
        } else {
            let without = a.phase_bytes(Phase::TrainSteady).unwrap();
            assert!(err(without, steady) < 0.001, "{name}");
        }
    }
    assert_eq!(held_at_the_peak, 2);
}

/// The verdict where NCCL's timing decides (ddp.rs): GPT-2 124M, batch 4, 2 GPUs, whose rank 0
/// reserved 7,776 MiB where the replay with the old bucket set released says 6,990 (measured:
/// 6,990 in every one-GPU run of it under torchrun, data/measured/ddp1-race.jsonl): the worse rank
/// needs 7.17 GiB with the set released and 7.94 GiB with it held; on a card between the two the
/// run fits or not by the watchdog's timing, which the verdict calls tight.
#[test]
fn a_card_between_the_two_replays_is_tight() {
    let cfg = TrainConfig {
        batch_size: 4,
        gradient_accumulation_steps: 4,
        compile: false,
        world_size: 2,
        ..TrainConfig::default()
    };
    let h200 = Budget::for_gpu(gpu::find("h200").unwrap());
    let reserved = analyze(&cfg, &h200)
        .unwrap()
        .ranks()
        .unwrap()
        .reserved
        .unwrap();
    let released = reserved.rank0[0].max(reserved.others[0]) as f64 / GIB;
    let held = reserved.rank0[1].max(reserved.others[1]) as f64 / GIB;
    assert!((7.16..7.18).contains(&released) && (7.93..7.95).contains(&held));
    let usable = h200.allocator_budget() as f64 / GIB;
    for (gib, risk) in [(8.5, Risk::Fits), (7.75, Risk::Tight), (7.0, Risk::Oom)] {
        let card = h200.clone().with_other_gib(usable - gib).unwrap();
        let a = analyze(&cfg, &card).unwrap();
        assert_eq!(a.verdict.risk, risk, "{gib} GiB");
        assert_eq!(
            estimator::analysis::fits_on_card(&cfg, &card),
            risk != Risk::Oom
        );
    }
}

const GIB: f64 = (1u64 << 30) as f64;
