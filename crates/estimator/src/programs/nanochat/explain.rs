//! Each nanochat tensor family's formula, symbolic and with this config's numbers, for the page's
//! explanations (notation of `shared/reference/nanochat-memory.md`: L layers, C = model_dim,
//! H heads, D = head_dim, V vocabulary, B = device_batch_size, T = max_seq_len, n_ve value
//! embeddings). Where a term's multiplier depends on the moment (how many stacks, buffers or
//! workspaces are alive), it is read off the bytes.

use super::config::NanochatConfig;
use super::shape::Shape;
use crate::explain::{f, multiple, Formula};
use crate::terms::Term;

/// The formula behind `term`'s `bytes` at some moment of `cfg`'s run.
pub fn formula(term: Term, cfg: &NanochatConfig, bytes: u128) -> Formula {
    let s = Shape::of(cfg);
    let (l, c, h, v, t, b, nve) = (
        s.l,
        s.c,
        s.h,
        s.v,
        s.t,
        u64::from(cfg.device_batch_size),
        s.n_ve(),
    );
    let (lu, cu, vu, tu, bu) = (
        u128::from(l),
        u128::from(c),
        u128::from(v),
        u128::from(t),
        u128::from(b),
    );
    let stored = "2·V·C·(1+n_ve) + 4·V·C + 4·(12·L·C² + 12·H·n_ve) + scalars";
    let stored_n = format!("2·{v}·{c}·(1+{nve}) + 4·{v}·{c} + 4·(12·{l}·{c}² + 12·{h}·{nve}) + …");
    match term {
        Term::StoredParams | Term::Grads | Term::FreshGrads => f(stored, stored_n),
        Term::AdamState => f(
            "2·(2·V·C·(1+n_ve) + 4·V·C + scalars)",
            format!("2·(2·{v}·{c}·(1+{nve}) + 4·{v}·{c} + …)"),
        ),
        Term::MuonState => f("4·12·L·C² + second moments", format!("4·12·{l}·{c}² + …")),
        Term::OptimizerStacks => {
            let n = multiple(bytes, 48 * lu * cu * cu, 0);
            f(&format!("{n}·4·12·L·C²"), format!("{n}·4·12·{l}·{c}²"))
        }
        Term::PolarExpress => f("5·2·K·m·n + 2·2·K·min(m,n)²", format!("{bytes}")),
        Term::EmbeddingGradBuffer => {
            let n = multiple(bytes, 4 * vu * cu, 0);
            f(&format!("{n}·4·V·C"), format!("{n}·4·{v}·{c}"))
        }
        Term::LmHeadGrads => f("2·V·C", format!("2·{v}·{c}")),
        Term::RotaryBuffers => f("2·10·T·D", format!("2·10·{t}·{}", s.d)),
        Term::TokenBytes => f("4·V", format!("4·{}", cfg.vocab_size)),
        Term::TokenIds => {
            let n = multiple(bytes, 16 * bu * tu, 0);
            f(&format!("{n}·16·B·T"), format!("{n}·16·{b}·{t}"))
        }
        Term::BlockActivations => f(
            "L·B·T·(36·C + 8 + 12·H) + n_ve·B·T·(2·C + 2·H)",
            format!("{l}·{b}·{t}·(36·{c} + 8 + 12·{h}) + {nve}·{b}·{t}·(2·{c} + 2·{h})"),
        ),
        Term::AttentionMask => f("2·T²", format!("2·{t}²")),
        Term::Logits => {
            let n = multiple(bytes, 2 * bu * tu * vu, 0);
            f(&format!("{n}·2·B·T·V"), format!("{n}·2·{b}·{t}·{v}"))
        }
        Term::ForwardLocals | Term::FinalActivations | Term::BlockTransient => {
            let n = multiple(bytes, 2 * bu * tu * cu, 0);
            f(&format!("{n}·2·B·T·C"), format!("{n}·2·{b}·{t}·{c}"))
        }
        Term::WeightCopies => {
            let n = multiple(bytes, 2 * cu * cu, 0);
            f(&format!("{n}·2·C²"), format!("{n}·2·{c}²"))
        }
        Term::CublasWorkspace => {
            let n = multiple(bytes, 32 << 20, 0);
            f(&format!("{n}·32 MiB"), format!("{n}·33554432"))
        }
        Term::Scalars => f("4·512", "4·512".into()),
        _ => f("", bytes.to_string()),
    }
}
