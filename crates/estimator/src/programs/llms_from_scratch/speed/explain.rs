//! Each of the speed scripts' tensor families as a formula, symbolic and with this run's numbers,
//! for the bar's details. B: `batch_size`, T: `context_length`, C: `emb_dim`, H: `n_heads`, L:
//! `n_layers`, V: `vocab_size`; bf16 weights, gradients and AdamW state (`sequence.rs`).

use super::super::config::Ch05Config;
use crate::programs::nanogpt::explain::f;
use crate::programs::seam::Formula;
use crate::terms::Term;

pub fn formula(term: Term, cfg: &Ch05Config, bytes: u128) -> Formula {
    let (b, t, c, h, l, v) = cfg.letters();
    let weights = (
        "2·(2·V·C + T·C + L·(12·C² + 10·C) + 2·C)",
        format!("2·(2·{v}·{c} + {t}·{c} + {l}·(12·{c}² + 10·{c}) + 2·{c})"),
    );
    // per block: LayerNorm outputs, q·k·v, SDPA's output, the projection's and the MLP's
    // outputs, the hidden layer before and after GELU (32·B·T·C bytes), two dropout masks
    // (2·B·T·C), the LayerNorms' fp32 statistics (16·B·T) and SDPA's (4·B·H·T)
    let masks = if cfg.drop_rate > 0.0 { 34 } else { 32 };
    match term {
        Term::Params | Term::Grads => f(weights.0, weights.1),
        Term::AdamState => f(
            "2·2·(2·V·C + T·C + L·(12·C² + 10·C) + 2·C)",
            format!("2·{}", weights.1),
        ),
        Term::BlockActivations => f(
            &format!("L·({masks}·B·T·C + 16·B·T + 4·B·H·T)"),
            format!("{l}·({masks}·{b}·{t}·{c} + 16·{b}·{t} + 4·{b}·{h}·{t})"),
        ),
        Term::Logits | Term::LogSoftmax => f("2·B·T·V", format!("2·{b}·{t}·{v}")),
        Term::LossGrads => f("2·2·B·T·V", format!("2·2·{b}·{t}·{v}")),
        Term::EmbeddingGradBuffer => f("4·V·C", format!("4·{v}·{c}")),
        Term::DdpBuckets => f(weights.0, weights.1),
        Term::TokenIds => f("2·8·B·T", format!("2·8·{b}·{t}")),
        _ => f("", bytes.to_string()),
    }
}
