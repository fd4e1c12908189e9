//! Each of gpt_instruction_finetuning.py's tensor families as a formula, symbolic and with this
//! run's numbers, for the bar's details. B: `batch_size`, T: the widest batch (the longest
//! example, cut at `allowed_max_length`), C: `emb_dim`, H: `n_heads`, L: `n_layers`, V: 50257;
//! fp32 throughout, every parameter trained (chapter 5's model at a GPT-2 size).

use super::config::Ch07Config;
use crate::programs::nanogpt::explain::f;
use crate::programs::seam::Formula;
use crate::terms::Term;

pub fn formula(term: Term, cfg: &Ch07Config, bytes: u128) -> Formula {
    let (c, l, h) = cfg.dims();
    let (b, t) = (cfg.batch_size, cfg.width());
    let params = (
        "4·(2·V·C + 1024·C + L·(12·C² + 13·C) + 2·C)",
        format!("4·(2·50257·{c} + 1024·{c} + {l}·(12·{c}² + 13·{c}) + 2·{c})"),
    );
    match term {
        Term::Params | Term::Grads => f(params.0, params.1),
        Term::AdamState => f(
            "2·4·(2·V·C + 1024·C + L·(12·C² + 13·C) + 2·C)",
            format!("2·{}", params.1),
        ),
        Term::MaskBuffers => f("L·4·1024²", format!("{l}·4·1024²")),
        Term::BlockActivations if cfg.drop_rate > 0.0 => f(
            "L·(130·B·T·C + 9·B·H·T² + 8·B·T + 1024²)",
            format!("{l}·(130·{b}·{t}·{c} + 9·{b}·{h}·{t}² + 8·{b}·{t} + 1024²)"),
        ),
        Term::BlockActivations => f(
            "L·(128·B·T·C + 4·B·H·T² + 8·B·T + 1024²)",
            format!("{l}·(128·{b}·{t}·{c} + 4·{b}·{h}·{t}² + 8·{b}·{t} + 1024²)"),
        ),
        Term::Logits | Term::LogSoftmax => f("4·B·T·V", format!("4·{b}·{t}·50257")),
        Term::LossGrads => f("2·4·B·T·V", format!("2·4·{b}·{t}·50257")),
        Term::CublasWorkspace => f("2·32 MiB", "2·33554432".into()),
        Term::TokenIds => f("2·8·B·T", format!("2·8·{b}·{t}")),
        _ => f("", bytes.to_string()),
    }
}
