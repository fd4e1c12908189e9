//! A fix in words: its title and its sentence of why, with this run's numbers, in a language.

use estimator::fixes::{Fix, Impact};
use estimator::TrainConfig;

use crate::{fill, format, Strings};

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
    let mut why = fill(tr.fix_why(f.kind), &pairs);
    if !f.effective_batch_kept
        && matches!(f.impact, Impact::Nothing | Impact::Slower)
        && f.effective_batch != from.effective_batch()
    {
        why = format!("{why} {}", fill(tr.effective_not_kept, &pairs));
    }
    (fill(tr.fix_title(f.kind), &pairs), why)
}
