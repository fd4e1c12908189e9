//! build-nanogpt's train_gpt2.py: the answer's JSON, with train.py's contract where the meaning
//! is the same.

use estimator::programs::build_nanogpt::config::KEYS;
use estimator::programs::build_nanogpt::fixes::{self, BngFixReport};
use estimator::programs::build_nanogpt::{BngAnalysis, BngConfig};
use estimator::{Budget, Phase};
use serde_json::{json, Value};

use crate::common::{self, object, value};

/// The script's constants by their names, numbers and booleans as JSON's.
pub fn config(cfg: &BngConfig) -> Value {
    object(KEYS.iter().filter_map(|k| {
        let text = cfg.get(k)?;
        let v = match text.parse::<u64>() {
            Ok(n) => value(n),
            Err(_) => match text.as_str() {
                "True" => value(true),
                "False" => value(false),
                _ => value(text),
            },
        };
        Some((*k, v))
    }))
}

/// build-nanogpt's part of the answer the CLI's `--json` prints.
pub fn to_json(a: &BngAnalysis, budget: &Budget, fixes: Option<&BngFixReport>) -> Value {
    let cfg = &a.config;
    let phase = |p| value(a.phase_bytes(p));
    let eval = a
        .phase_bytes(Phase::Eval)
        .max(a.phase_bytes(Phase::EvalAfterStep));
    let tokens = cfg.total_batch_size;
    let mut pairs = vec![
        ("config", config(cfg)),
        (
            "params",
            json!({"total": value(a.params()), "reported": value(a.params())}),
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
                "reserved": value(a.free_run.peak_reserved),
            }),
        ),
    ];
    pairs.extend(common::peak_at(&a.run));
    pairs.extend([
        ("grad_accum_steps", value(cfg.grad_accum_steps())),
        ("effective_batch", value(tokens / u64::from(cfg.t))),
        ("tokens_per_iter", value(tokens)),
        ("gpu", common::gpu(budget, &a.verdict)),
        ("verdict", value(a.verdict)),
        ("simulated_oom", common::simulated_oom(&a.run)),
        ("ddp", Value::Null),
        ("fixes", fixes_json(a, fixes)),
        (
            "largest_B_that_fits",
            value(fixes.and_then(|r| r.largest_b_that_fits)),
        ),
    ]);
    object(pairs)
}

/// The ranked fixes: the lines of the script each edits.
pub fn fixes_json(a: &BngAnalysis, fixes: Option<&BngFixReport>) -> Value {
    Value::Array(
        fixes
            .map(|r| r.fixes.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|f| {
                json!({
                    "kind": f.kind.id(),
                    "impact": f.impact.id(),
                    "edits": fixes::edits(f, &a.config),
                    "peak_bytes": value(f.peak_bytes),
                    "saving_bytes": value(f.saving_bytes),
                    "fits": f.verdict.fits,
                    "risk": f.verdict.risk,
                    "tokens_per_iter": value(f.config.total_batch_size),
                })
            })
            .collect(),
    )
}
