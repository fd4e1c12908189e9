//! nanochat's base_train.py and chat_sft.py: the answer's JSON, with train.py's contract where
//! the meaning is the same.

use estimator::programs::nanochat::fixes::{self, NanochatFixReport};
use estimator::programs::nanochat::{NanochatAnalysis, NanochatConfig};
use estimator::Phase;
use serde_json::{json, Value};

use crate::common::{self, object, value};

/// The config's settings under the JSON answer's names (underscores), numbers as numbers.
pub fn config(cfg: &NanochatConfig) -> Value {
    object(cfg.keys().iter().filter_map(|k| {
        let text = cfg.get(k)?;
        let v = match text.parse::<i64>() {
            Ok(n) if *k != "window-pattern" => value(n),
            _ => match estimator::decimal::parse(&text) {
                Some(x) if *k != "window-pattern" => value(x),
                _ => value(text),
            },
        };
        Some((k.replace('-', "_"), v))
    }))
}

/// nanochat's part of the answer the CLI's `--json` prints.
pub fn to_json(a: &NanochatAnalysis, fixes: Option<&NanochatFixReport>) -> Value {
    let cfg = &a.config;
    // the card as the verdict counted it (one rank's under torchrun: NCCL's memory is out)
    let budget = &a.budget;
    let s = &a.shape;
    let phase = |p| value(a.phase_bytes(p));
    let eval = a
        .phase_bytes(Phase::Eval)
        .max(a.phase_bytes(Phase::EvalAfterStep));
    let mut pairs = vec![
        ("config", config(cfg)),
        (
            "model",
            json!({
                "n_layer": s.l,
                "model_dim": s.c,
                "n_head": s.h,
                "head_dim": s.d,
                "vocab_size": s.v,
                "value_embedding_layers": s.n_ve(),
                "sliding_window_layers": s.n_masked(),
            }),
        ),
        (
            "params",
            json!({
                "total": value(s.total_params()),
                "reported": value(s.total_params()),
                "scaling": value(s.scaling_params()),
            }),
        ),
        (
            "peak_bytes",
            json!({
                "overall": value(a.peak_bytes()),
                "train_steady": phase(Phase::TrainSteady),
                "train_first_iter": phase(Phase::TrainFirstIter),
                "eval": value(eval),
                "eval_first": phase(Phase::Eval),
                "eval_after_step": phase(Phase::EvalAfterStep),
                "core": phase(Phase::Core),
                "reserved": value(a.free_run.peak_reserved),
            }),
        ),
    ];
    pairs.extend(common::peak_at(&a.run));
    pairs.extend([
        ("total_batch_size", value(cfg.total_batch_tokens())),
        ("grad_accum_steps", value(cfg.grad_accum_steps())),
        (
            "effective_batch",
            value(cfg.total_batch_tokens() / u64::from(cfg.max_seq_len)),
        ),
        ("tokens_per_iter", value(cfg.total_batch_tokens())),
        ("gpu", common::gpu(budget, &a.verdict)),
        ("verdict", value(a.verdict)),
        ("simulated_oom", common::simulated_oom(&a.run)),
        ("ddp", Value::Null),
        ("ranks", ranks_json(a)),
        ("fixes", fixes_json(a, fixes)),
        (
            "largest_device_batch_size_that_fits",
            value(fixes.and_then(|r| r.largest_device_batch_that_fits)),
        ),
        (
            "largest_core_example_that_fits",
            value(fixes.and_then(|r| r.largest_core_example_that_fits)),
        ),
    ]);
    object(pairs)
}

/// More than one GPU: the bound the verdict used, and each rank's peaks (`peak_bytes` above is
/// rank 0's, the fullest).
fn ranks_json(a: &NanochatAnalysis) -> Value {
    let Some(r) = &a.ranks else {
        return Value::Null;
    };
    json!({
        "world_size": r.world_size,
        "held_steps": r.held_stashes,
        "step_seconds": r.step_seconds,
        "watchdog_seconds": estimator::programs::nanochat::speed::WATCHDOG_INTERVAL_S,
        "one_step_held_peak_bytes": value(r.one_stash_peak),
        "nccl_bytes": value(r.nccl_bytes),
        "each": r.rank_peaks.iter().map(|p| json!({
            "first": p.first,
            "last": p.last,
            "peak_bytes": {
                "overall": value(p.peak_bytes),
                "train_steady": value(p.phase(Phase::TrainSteady)),
                "train_first_iter": value(p.phase(Phase::TrainFirstIter)),
                "eval_first": value(p.phase(Phase::Eval)),
                "eval_after_step": value(p.phase(Phase::EvalAfterStep)),
            },
        })).collect::<Vec<_>>(),
    })
}

/// The ranked fixes: the flags each changes and the launch line to paste.
pub fn fixes_json(a: &NanochatAnalysis, fixes: Option<&NanochatFixReport>) -> Value {
    let Some(r) = fixes else {
        return Value::Array(Vec::new());
    };
    Value::Array(
        r.fixes
            .iter()
            .map(|f| {
                json!({
                    "kind": f.kind.id(),
                    "impact": f.impact.id(),
                    "changes": object(
                        fixes::changed_flags(f, &a.config)
                            .into_iter()
                            .map(|(k, v)| (k.replace('-', "_"), value(v))),
                    ),
                    "command": fixes::launch_line(&f.config),
                    "peak_bytes": value(f.peak_bytes),
                    "saving_bytes": value(f.saving_bytes),
                    "fits": f.verdict.fits,
                    "risk": f.verdict.risk,
                    "total_batch_size": value(f.config.total_batch_tokens()),
                    "tokens_per_iter": value(f.config.total_batch_tokens()),
                })
            })
            .collect(),
    )
}
