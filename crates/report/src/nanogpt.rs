//! nanoGPT's train.py: the answer and its JSON.

use estimator::fixes::FixReport;
use estimator::programs::Program;
use estimator::{Analysis, Budget, Phase, FIELDS_JSON_ORDER};
use serde_json::{json, Value};
use vramfit_i18n::en;
use vramfit_i18n::fix_text::fix_words;

use crate::common::{self, object, value};

/// What one question about a train.py run answers beyond what every program's does.
pub struct Answer<'a> {
    /// The replayed run: peaks, components, verdict.
    pub analysis: &'a Analysis,
    pub budget: &'a Budget,
    pub fixes: Option<&'a FixReport>,
    /// Model-FLOPs utilisation the speed model assumes.
    pub mfu: f64,
}

impl Answer<'_> {
    /// This run's time per iteration, the all-reduce under DDP included.
    pub fn time(&self) -> estimator::speed::IterTime {
        let est = &self.analysis.estimate;
        estimator::speed::iter_time(
            &est.config,
            est.params.reported,
            &self.budget.gpu,
            estimator::Patches::default(),
            self.mfu,
        )
    }
}

/// train.py's part of the answer the CLI's `--json` prints.
pub fn to_json(a: &Answer) -> Value {
    let est = &a.analysis.estimate;
    let cfg = &est.config;
    let an = a.analysis;
    let config = object(
        FIELDS_JSON_ORDER
            .iter()
            .filter_map(|k| cfg.get(k).map(|v| (*k, value(v)))),
    );
    let phase = |p| value(an.phase_bytes(p));
    let mut pairs = vec![
        ("config", config),
        (
            "params",
            json!({"total": value(est.params.total), "reported": value(est.params.reported)}),
        ),
        (
            "peak_bytes",
            json!({
                "overall": value(an.peak_bytes()),
                "train_steady": phase(Phase::TrainSteady),
                "train_first_iter": phase(Phase::TrainFirstIter),
                "eval": phase(Phase::Eval),
                "eval_after_step": phase(Phase::EvalAfterStep),
                "reserved": value(an.free_run.peak_reserved),
            }),
        ),
    ];
    pairs.extend(common::peak_at(an));
    pairs.extend([
        (
            "moments",
            Value::Array(
                est.moments
                    .iter()
                    .map(|m| {
                        json!({
                            "phase": m.phase,
                            "moment": m.moment.id(),
                            "micro_step": m.micro_step,
                            "bytes": value(m.total()),
                        })
                    })
                    .collect(),
            ),
        ),
        ("effective_batch", value(cfg.effective_batch())),
        ("tokens_per_iter", value(cfg.tokens_per_iter())),
        ("gpu", common::gpu(a.budget, &an.verdict)),
        ("verdict", value(an.verdict)),
        ("simulated_oom", common::simulated_oom(an)),
        ("ddp", ddp(a)),
        ("fixes", fixes(a)),
        (
            "largest_batch_size_that_fits",
            value(a.fixes.and_then(|r| r.largest_batch_that_fits)),
        ),
        ("iter_seconds", value(a.fixes.map(|r| r.current_seconds))),
    ]);
    object(pairs)
}

/// Per-GPU memory and time of a DDP run; null on one GPU.
fn ddp(a: &Answer) -> Value {
    let Some(r) = a.analysis.ranks() else {
        return Value::Null;
    };
    let t = a.time();
    let last = r.world_size - 1;
    let others = if last == 1 {
        "1".to_string()
    } else {
        format!("1-{last}")
    };
    json!({
        "world_size": r.world_size,
        "accum_per_rank": r.accum_per_rank,
        "worst_rank": estimator::ddp::Ranks::WORST_RANK,
        "bucket_bytes": value(r.bucket_bytes),
        "rebuild_transient_bytes": value(r.rebuild_bytes),
        "steady_without_rebuild_bytes": value(r.steady_without_rebuild),
        "per_rank": [
            {"ranks": "0", "peak_bytes": value(r.rank0_peak), "runs_estimate_loss": true},
            {"ranks": others, "peak_bytes": value(r.other_ranks_peak), "runs_estimate_loss": false},
        ],
        "link_gbps": a.budget.gpu.link_gbps,
        "allreduce_bytes": value(t.allreduce_bytes),
        "allreduce_seconds": t.allreduce_seconds,
        "exposed_allreduce_seconds": t.exposed_seconds,
        "single_gpu_iter_seconds": t.single_gpu_seconds,
        "speedup": t.speedup(),
    })
}

/// The ranked fixes, each with the settings it changes and its English title and reason.
pub fn fixes(a: &Answer) -> Value {
    let Some(r) = a.fixes else {
        return Value::Array(Vec::new());
    };
    let from = &a.analysis.estimate.config;
    Value::Array(
        r.fixes
            .iter()
            .map(|f| {
                let mut changes: Vec<(String, Value)> = f
                    .changed_keys(from)
                    .into_iter()
                    .filter_map(|(k, _)| f.config.get(k).map(|v| (k.to_string(), value(v))))
                    .collect();
                if let Some((k, v)) = f.env(from) {
                    changes.push((k.to_string(), value(v)));
                }
                if f.patches.eval_batch_size.is_some() {
                    changes.push(("patch".into(), value("train.py")));
                }
                if f.patches.checkpoint_blocks || f.patches.chunked_loss {
                    changes.push(("patch".into(), value("model.py")));
                }
                if f.other_bytes < a.budget.other_bytes {
                    changes.push(("other_gib".into(), value(0.0)));
                }
                let words = estimator::fixes::words(f, from, a.budget.other_bytes);
                let (title, why) = fix_words(en(), Program::NanoGpt, &words);
                // the whole train.py line to paste, as nanochat's fixes have; none where the fix
                // is a code change or freeing the card, which no flag says
                let command = (f.patches == estimator::Patches::default()
                    && f.other_bytes >= a.budget.other_bytes)
                    .then(|| estimator::programs::nanogpt::snippet::command_line(&f.config, None));
                json!({
                    "id": f.kind.id(),
                    "title": title,
                    "why": why,
                    "changes": object(changes),
                    "command": command,
                    "peak_bytes": value(f.peak_bytes),
                    "saving_bytes": value(f.saving_bytes),
                    "fits": f.fits(),
                    "risk": f.verdict.risk,
                    "headroom_bytes": value(f.verdict.headroom_bytes),
                    "effective_batch": value(f.effective_batch),
                    "tokens_per_iter": value(f.tokens_per_iter),
                    "effective_batch_kept": f.effective_batch_kept,
                    "iter_time_ratio": f.iter_time_ratio,
                    "impact": f.impact.id(),
                    "params_reported": value(f.params_reported),
                })
            })
            .collect(),
    )
}
