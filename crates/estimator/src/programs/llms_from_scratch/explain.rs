//! Each of gpt_train.py's tensor families as a formula, symbolic and with this run's numbers, for
//! the bar's details (the words around them are the page's). B: `batch_size`, T:
//! `context_length`, C: `emb_dim`, H: `n_heads`, L: `n_layers`, V: `vocab_size`; fp32 throughout.

use super::config::Ch05Config;
use crate::programs::nanogpt::explain::f;
use crate::programs::seam::Formula;
use crate::terms::Term;

pub fn formula(term: Term, cfg: &Ch05Config, bytes: u128) -> Formula {
    let (b, t, c, h, l, v) = cfg.letters();
    let blocks = if cfg.drop_rate > 0.0 {
        // 32.5 (B, T, C) tensors and 2.25 (B, H, T, T) ones per block, with the dropout masks
        (
            "L·(130·B·T·C + 9·B·H·T² + 8·B·T + T²)",
            format!("{l}·(130·{b}·{t}·{c} + 9·{b}·{h}·{t}² + 8·{b}·{t} + {t}²)"),
        )
    } else {
        (
            "L·(128·B·T·C + 4·B·H·T² + 8·B·T + T²)",
            format!("{l}·(128·{b}·{t}·{c} + 4·{b}·{h}·{t}² + 8·{b}·{t} + {t}²)"),
        )
    };
    let params = (
        "4·(2·V·C + T·C + L·(12·C² + 10·C) + 2·C)",
        format!("4·(2·{v}·{c} + {t}·{c} + {l}·(12·{c}² + 10·{c}) + 2·{c})"),
    );
    match term {
        Term::Params | Term::Grads => f(params.0, params.1),
        Term::AdamState => f(
            "2·4·(2·V·C + T·C + L·(12·C² + 10·C) + 2·C)",
            format!("2·{}", params.1),
        ),
        Term::MaskBuffers => f("L·4·T²", format!("{l}·4·{t}²")),
        Term::BlockActivations => f(blocks.0, blocks.1),
        Term::Logits | Term::LogSoftmax => f("4·B·T·V", format!("4·{b}·{t}·{v}")),
        Term::LossGrads => f("2·4·B·T·V", format!("2·4·{b}·{t}·{v}")),
        Term::CublasWorkspace => f("2·32 MiB", "2·33554432".into()),
        Term::TokenIds => f("2·8·B·T", format!("2·8·{b}·{t}")),
        _ => f("", bytes.to_string()),
    }
}
