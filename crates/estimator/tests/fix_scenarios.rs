//! The seeds' scenarios (shared/seeds): the top fix vramfit proposes must be a config that the
//! capped calibration runs (11.25 GiB allocator budget, a 12 GB card) show fitting, and its
//! predicted peak must agree with that run's measured peak within 2 %.

#![allow(clippy::unwrap_used)]

mod common;

use common::{measured_peak, measured_runs};

use estimator::fixes::rank_fixes;
use estimator::{gpu, Allocator, Budget, Dtype, TrainConfig};
use serde_json::Value;

fn capped_runs() -> Vec<Value> {
    measured_runs("calibration.jsonl")
        .into_iter()
        .filter(|r| r["cap_on_purpose"] == true && r["allocator_cap_gib"] == 11.25)
        .collect()
}

/// Whether a measured run had the same memory-relevant config (gradient accumulation matters
/// only as 1 versus more).
fn same_memory_config(run: &Value, c: &TrainConfig) -> bool {
    let r = &run["config"];
    let num = |k: &str| r[k].as_u64().unwrap_or(0);
    num("n_layer") == u64::from(c.n_layer)
        && num("n_head") == u64::from(c.n_head)
        && num("n_embd") == u64::from(c.n_embd)
        && num("block_size") == u64::from(c.block_size)
        && num("batch_size") == u64::from(c.batch_size)
        && (num("gradient_accumulation_steps") > 1) == (c.gradient_accumulation_steps > 1)
        && r["dtype"] == c.dtype.as_str()
        && r["compile"] == c.compile
        && r["dropout"].as_f64() == Some(c.dropout)
        && r["bias"] == c.bias
        && num("vocab_size") == u64::from(c.vocab_size)
        && r["attention"] == c.attention.as_str()
        && r["allocator"] == c.allocator.as_str()
}

fn check(name: &str, cfg: TrainConfig, card: &str) {
    let budget = Budget::for_gpu(gpu::find(card).unwrap());
    let report = rank_fixes(&cfg, &budget, 0.35, true).unwrap();
    let runs = capped_runs();
    let (target, predicted) = if report.current.fits {
        (cfg.clone(), report.current_peak)
    } else {
        let top = &report.fixes[0];
        assert!(top.fits(), "{name}: the top fix must fit: {top:?}");
        assert!(
            top.patches == estimator::Patches::default(),
            "{name}: top fix needs no patch"
        );
        (top.config.clone(), top.peak_bytes)
    };
    let run = runs
        .iter()
        .find(|r| same_memory_config(r, &target))
        .unwrap_or_else(|| panic!("{name}: no capped run measured {target:?}"));
    assert_eq!(
        run["status"], "ok",
        "{name}: {} ran out of memory",
        run["name"]
    );
    let m = measured_peak(run);
    let err = (predicted as f64 - m).abs() / m;
    assert!(
        err <= 0.02,
        "{name}: predicted {predicted} vs measured {m} ({})",
        run["name"]
    );
}

fn seed(batch: u32, compile: bool) -> TrainConfig {
    TrainConfig {
        batch_size: batch,
        gradient_accumulation_steps: 32,
        compile,
        ..TrainConfig::default()
    }
}

#[test]
fn gpt2_124m_batch_16_on_12_gb_cards() {
    for card in ["rtx3060", "rtx4070"] {
        for compile in [true, false] {
            check(
                &format!("{card} compile={compile}"),
                seed(16, compile),
                card,
            );
        }
    }
}

#[test]
fn gpt2_124m_batch_64_on_a_12_gb_card() {
    for compile in [true, false] {
        let cfg = TrainConfig {
            gradient_accumulation_steps: 16,
            ..seed(64, compile)
        };
        check(&format!("b64 compile={compile}"), cfg, "rtx3060");
    }
}

#[test]
fn n_embd_576_fp16_batch_16_on_rtx_4070() {
    for compile in [true, false] {
        let cfg = TrainConfig {
            n_embd: 576,
            dtype: Dtype::Float16,
            ..seed(16, compile)
        };
        check(&format!("576 fp16 compile={compile}"), cfg, "rtx4070");
    }
}

#[test]
fn expandable_segments_is_offered_for_eager_batch_8() {
    // measured: eager batch 8 fails under 11.25 GiB with the default allocator, fits with
    // expandable segments
    let cfg = TrainConfig {
        allocator: Allocator::Default,
        ..seed(8, false)
    };
    let budget = Budget::for_gpu(gpu::find("rtx3060").unwrap());
    let report = rank_fixes(&cfg, &budget, 0.35, true).unwrap();
    assert!(!report.current.fits);
    let exp = report
        .fixes
        .iter()
        .find(|f| f.kind == estimator::fixes::FixKind::ExpandableSegments)
        .unwrap();
    assert!(exp.fits());
}
