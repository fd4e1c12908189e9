//! Each of gpt_class_finetune.py's tensor families as a formula, symbolic and with this run's
//! numbers, for the bar's details (the words around them are the page's). B: `batch_size`, T:
//! `max_length`, C: `emb_dim`, H: `n_heads`, L: `n_layers`, V: 50257, k: `num_classes`; fp32
//! throughout. Only the last block keeps activations: the frozen ones record nothing.

use super::config::Ch06Config;
use crate::programs::nanogpt::explain::f;
use crate::programs::seam::Formula;
use crate::terms::Term;

pub fn formula(term: Term, cfg: &Ch06Config, bytes: u128) -> Formula {
    let (c, l, h) = cfg.dims();
    let (b, t, k) = (cfg.batch_size, cfg.max_length, cfg.num_classes);
    let trained = (
        "4·(12·C² + 15·C + k·C + k)",
        format!("4·(12·{c}² + 15·{c} + {k}·{c} + {k})"),
    );
    match term {
        Term::Params => f(
            "4·(V·C + 1024·C + L·(12·C² + 13·C) + 2·C + k·C + k)",
            format!("4·(50257·{c} + 1024·{c} + {l}·(12·{c}² + 13·{c}) + 2·{c} + {k}·{c} + {k})"),
        ),
        Term::Grads => f(trained.0, trained.1),
        Term::AdamState => f("2·4·(12·C² + 15·C + k·C + k)", format!("2·{}", trained.1)),
        Term::MaskBuffers => f("L·4·1024²", format!("{l}·4·1024²")),
        Term::BlockActivations if cfg.drop_rate > 0.0 => f(
            "122·B·T·C + 9·B·H·T² + 4·B·T + 1024²",
            format!("122·{b}·{t}·{c} + 9·{b}·{h}·{t}² + 4·{b}·{t} + 1024²"),
        ),
        Term::BlockActivations => f(
            "120·B·T·C + 4·B·H·T² + 4·B·T + 1024²",
            format!("120·{b}·{t}·{c} + 4·{b}·{h}·{t}² + 4·{b}·{t} + 1024²"),
        ),
        Term::CublasWorkspace => f("2·32 MiB", "2·33554432".into()),
        _ => f("", bytes.to_string()),
    }
}
