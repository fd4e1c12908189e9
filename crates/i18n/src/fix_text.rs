//! A fix in words: its title and its sentence of why, with this run's numbers, in a language.

use estimator::fixes::{Fix, Impact};
use estimator::programs::Program;
use estimator::TrainConfig;

use crate::{fill, format, Strings};

/// A fix's saving, in the one convention the page and the command line share: memory it frees
/// is a plain positive amount ("4.86 GiB"), memory it adds is a cost ("costs 4.54 GiB"); what
/// rounds to nothing reads "0.00 GiB" either way, never "−0.00".
pub fn saving(tr: &Strings, bytes: i128) -> String {
    let amount = format::gib_abs(bytes);
    if bytes >= 0 || amount == format::gib_abs(0) {
        amount
    } else {
        fill(tr.saving_cost, &[("gib", &amount)])
    }
}

/// The largest `batch_size` that fits, with what it does to the effective batch: train.py keeps
/// `gradient_accumulation_steps`, so a smaller micro-batch is fewer sequences per iteration
/// unless the accumulation grows too (which the micro-batch fix does).
pub fn largest_batch(tr: &Strings, n: Option<u32>, cfg: &TrainConfig) -> String {
    let words = tr.program(Program::NanoGpt);
    let Some(n) = n else {
        return words.largest_none().to_string();
    };
    let with_n = TrainConfig {
        batch_size: n,
        ..cfg.clone()
    };
    fill(
        words.largest(),
        &[
            ("n", &n.to_string()),
            ("accum", &cfg.gradient_accumulation_steps.to_string()),
            ("eff", &format::grouped(with_n.effective_batch())),
            ("old_eff", &format::grouped(cfg.effective_batch())),
        ],
    )
}

/// A fix's title and its sentence of why, in `tr`'s language. `freed`: what other processes hold on the card.
pub fn fix_text(tr: &Strings, f: &Fix, from: &TrainConfig, freed: u128) -> (String, String) {
    let c = &f.config;
    let n = |x: u32| x.to_string();
    let values: [(&str, String); 19] = [
        ("batch", n(c.batch_size)),
        ("accum", n(c.gradient_accumulation_steps)),
        ("old_batch", n(from.batch_size)),
        ("old_accum", n(from.gradient_accumulation_steps)),
        ("block", n(c.block_size)),
        ("old_block", n(from.block_size)),
        ("layers", n(c.n_layer)),
        ("old_layers", n(from.n_layer)),
        ("embd", n(c.n_embd)),
        ("old_embd", n(from.n_embd)),
        ("dtype", c.dtype.as_str().to_string()),
        (
            "eval_batch",
            f.patches.eval_batch_size.map(n).unwrap_or_default(),
        ),
        ("eval_iters", n(c.eval_iters)),
        ("eff", format::grouped(f.effective_batch)),
        ("old_eff", format::grouped(from.effective_batch())),
        ("params", format::params(f.params_reported)),
        ("freed", format::gib(freed)),
        ("world", n(c.world_size)),
        ("old_world", n(from.world_size)),
    ];
    let pairs: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let words = tr.program(Program::NanoGpt);
    let mut why = fill(words.fix_why(f.kind.id()), &pairs);
    if !f.effective_batch_kept
        && matches!(f.impact, Impact::Nothing | Impact::Slower)
        && f.effective_batch != from.effective_batch()
    {
        why = format!("{why} {}", fill(tr.effective_not_kept, &pairs));
    }
    (fill(words.fix_title(f.kind.id()), &pairs), why)
}

/// A nanochat fix's title and explanation in `tr`'s language, filled in for this change (`freed`:
/// what other processes held on the card).
pub fn nanochat_fix_text(
    tr: &Strings,
    f: &estimator::programs::nanochat::fixes::NanochatFix,
    from: &estimator::programs::nanochat::NanochatConfig,
    freed: u128,
) -> (String, String) {
    let c = &f.config;
    let params = estimator::programs::nanochat::Shape::of(c).total_params();
    let values: [(&str, String); 14] = [
        ("world", c.world_size.to_string()),
        ("old_world", from.world_size.to_string()),
        ("batch", c.device_batch_size.to_string()),
        ("old_batch", from.device_batch_size.to_string()),
        ("accum", c.grad_accum_steps().to_string()),
        ("old_accum", from.grad_accum_steps().to_string()),
        ("total", c.total_batch_tokens().to_string()),
        ("old_total", from.total_batch_tokens().to_string()),
        ("seq", c.max_seq_len.to_string()),
        ("old_seq", from.max_seq_len.to_string()),
        ("depth", c.depth.to_string()),
        ("old_depth", from.depth.to_string()),
        ("params", format::params(params)),
        ("freed", format::gib(freed)),
    ];
    let pairs: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let words = tr.program(Program::Nanochat);
    (
        fill(words.fix_title(f.kind.id()), &pairs),
        fill(words.fix_why(f.kind.id()), &pairs),
    )
}

/// A build-nanogpt fix's title and explanation in `tr`'s language, filled in for this change
/// (`freed`: what other processes held on the card).
pub fn bng_fix_text(
    tr: &Strings,
    f: &estimator::programs::build_nanogpt::fixes::BngFix,
    from: &estimator::programs::build_nanogpt::BngConfig,
    freed: u128,
) -> (String, String) {
    let c = &f.config;
    let params = estimator::params::ParamCounts::of(&c.model()).total;
    let values: [(&str, String); 10] = [
        ("b", c.b.to_string()),
        ("old_b", from.b.to_string()),
        ("accum", c.grad_accum_steps().to_string()),
        ("total", format::grouped(c.total_batch_size)),
        ("t", c.t.to_string()),
        ("old_t", from.t.to_string()),
        ("layers", c.n_layer.to_string()),
        ("old_layers", from.n_layer.to_string()),
        ("params", format::params(params)),
        ("freed", format::gib(freed)),
    ];
    let pairs: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let words = tr.program(Program::BuildNanoGpt);
    (
        fill(words.fix_title(f.kind.id()), &pairs),
        fill(words.fix_why(f.kind.id()), &pairs),
    )
}
