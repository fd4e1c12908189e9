//! What train.py's report says beside its run: the model, the batch, each GPU's share and time
//! under DDP, and the settings that change memory.

use super::analysis::Analysis;
use crate::gpu::Budget;
use crate::programs::report::{py_bool, Label, Line, Report, Value};

/// The words of nanoGPT's report section (`crates/i18n/cli/*.txt`).
pub const WORDS: &[&str] = &[
    "model",
    "batch",
    "ddp",
    "ddp_ranks",
    "ddp_reserved",
    "ddp_one",
    "settings",
];

/// `mfu`: the model-FLOPs utilisation the speed model assumes (a DDP run's time).
pub fn report(a: &Analysis, budget: &Budget, mfu: f64) -> Report {
    let est = &a.estimate;
    let cfg = &est.config;
    let mut head = vec![
        (
            Label::Model,
            Line::new(
                "model",
                vec![
                    ("layers", Value::int(cfg.n_layer)),
                    ("heads", Value::int(cfg.n_head)),
                    ("embd", Value::int(cfg.n_embd)),
                    ("vocab", Value::int(cfg.vocab_size)),
                    ("params", Value::Params(est.params.reported)),
                    ("total", Value::Params(est.params.total)),
                ],
            ),
        ),
        (
            Label::Batch,
            Line::new(
                "batch",
                vec![
                    ("batch", Value::int(cfg.batch_size)),
                    ("accum", Value::int(cfg.gradient_accumulation_steps)),
                    ("seqs", Value::int(cfg.effective_batch())),
                    ("tokens", Value::int(cfg.tokens_per_iter())),
                ],
            ),
        ),
    ];
    if let Some(r) = a.ranks() {
        let t = a.iter_time(&budget.gpu, mfu);
        head.push((
            Label::Ddp,
            Line::new(
                "ddp",
                vec![
                    ("accum", Value::int(r.accum_per_rank)),
                    ("total", Value::int(cfg.gradient_accumulation_steps)),
                    ("world", Value::int(r.world_size)),
                    ("s", Value::Decimal(t.seconds, 2)),
                    ("speedup", Value::Decimal(t.speedup(), 2)),
                    ("bytes", Value::Bytes(t.allreduce_bytes)),
                    ("comm", Value::Decimal(t.allreduce_seconds, 2)),
                    ("exposed", Value::Decimal(t.exposed_seconds, 2)),
                ],
            ),
        ));
        head.push((
            Label::More,
            Line::new(
                "ddp_ranks",
                vec![
                    ("rank0", Value::Bytes(r.rank0_peak)),
                    ("others", Value::Bytes(r.other_ranks_peak)),
                    ("buckets", Value::Bytes(r.bucket_bytes)),
                    ("without", Value::Bytes(r.steady_without_rebuild)),
                ],
            ),
        ));
        if let Some(reserved) = r.reserved {
            head.push((
                Label::More,
                Line::new(
                    "ddp_reserved",
                    vec![
                        ("rank0", Value::Bytes(reserved.rank0[0])),
                        ("rank0_held", Value::Bytes(reserved.rank0[1])),
                        ("others", Value::Bytes(reserved.others[0])),
                        ("others_held", Value::Bytes(reserved.others[1])),
                        ("worst", Value::int(r.worst_rank)),
                    ],
                ),
            ));
        }
    }
    if cfg.is_ddp() && !cfg.is_multi_gpu() {
        head.push((
            Label::Ddp,
            Line::new(
                "ddp_one",
                vec![("buckets", Value::Bytes(crate::ddp::bucket_total(cfg)))],
            ),
        ));
    }
    head.push((
        Label::Settings,
        Line::new(
            "settings",
            vec![
                ("block", Value::int(cfg.block_size)),
                ("dtype", Value::Text(cfg.dtype.as_str().into())),
                ("compile", py_bool(cfg.compile)),
                ("attention", Value::Text(cfg.attention.as_str().into())),
                // as train.py writes it (`0.0`); `f64`'s own formatting would add ~17 KB of wasm
                ("dropout", Value::Text(python_text(cfg, "dropout"))),
                ("bias", py_bool(cfg.bias)),
                ("allocator", Value::Text(cfg.allocator.as_str().into())),
            ],
        ),
    ));
    Report {
        head,
        ..Report::default()
    }
}

/// A setting as Python writes it.
fn python_text(cfg: &crate::TrainConfig, key: &str) -> String {
    cfg.get(key)
        .map(|v| crate::query::query_value(&v))
        .unwrap_or_default()
}
