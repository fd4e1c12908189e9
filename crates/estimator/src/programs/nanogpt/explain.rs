//! Each term's formula, symbolic and with this config's numbers, for the page's explanations.
//! Language-neutral (symbols and numbers); the words around them are the UI's.

use crate::config::{Attention, TrainConfig};
use crate::terms::Term;

/// A formula as shown: `L·B·T·(36·C+16)` and `12·8·1024·(36·768+16)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Formula {
    pub symbolic: String,
    pub numbers: String,
}

pub(crate) fn f(symbolic: &str, numbers: String) -> Formula {
    Formula {
        symbolic: without_zero_terms(symbolic),
        numbers: without_zero_terms(&numbers),
    }
}

/// A sum without its terms of coefficient zero (`0·B·T·C + 4·T·C` → `4·T·C`): a count that
/// multiplies to nothing says nothing to the reader.
fn without_zero_terms(sum: &str) -> String {
    let kept: Vec<&str> = sum
        .split(" + ")
        .filter(|t| !(t.starts_with("0·") || t.starts_with("≈0·")))
        .collect();
    if kept.is_empty() {
        "0".into()
    } else {
        kept.join(" + ")
    }
}

/// `k` such that `bytes = k·unit + rest`, as text (`k` when exact, else `≈k`).
pub(crate) fn multiple(bytes: u128, unit: u128, rest: u128) -> String {
    if unit == 0 {
        return "0".into();
    }
    let net = bytes.saturating_sub(rest);
    let k = net as f64 / unit as f64;
    // the replay counts requests rounded up to 512 bytes: within 0.1 % is the whole number
    if net.is_multiple_of(unit) || (k.round() - k).abs() < 1e-3 * k.max(1.0) {
        format!("{}", k.round() as u128)
    } else {
        format!("≈{}", crate::decimal::Fixed(k, 2))
    }
}

/// The formula behind a term's `bytes` at some moment, for `cfg`. Terms whose multiplier depends
/// on the moment (how many loss gradients, buffers or workspaces are alive) show it as a number.
pub fn formula(term: Term, cfg: &TrainConfig, total_params: u64, bytes: u128) -> Formula {
    let (l, h, c, v, t, b) = (
        cfg.n_layer,
        cfg.n_head,
        cfg.n_embd,
        cfg.vocab_size,
        cfg.block_size,
        cfg.batch_size,
    );
    let s = cfg.dtype.bytes();
    let half = cfg.dtype.is_16bit();
    let p = total_params;
    let (bt, btc, btv, vc, tc) = {
        let (b, t, c, v) = (u128::from(b), u128::from(t), u128::from(c), u128::from(v));
        (b * t, b * t * c, b * t * v, v * c, t * c)
    };
    match term {
        Term::Params => f("4·P", format!("4·{p}")),
        Term::MaskBuffers => f("4·L·T²", format!("4·{l}·{t}²")),
        Term::AdamState => f("(4+4)·P", format!("8·{p}")),
        Term::Grads | Term::FreshGrads => f("4·P", format!("4·{p}")),
        Term::TiedWeightGrad => {
            let n = multiple(bytes, 4 * vc, 0);
            f(&format!("{n}·4·V·C"), format!("{n}·4·{v}·{c}"))
        }
        Term::BlockActivations => {
            let per = if half { 36 } else { 64 };
            let stats = if cfg.compile { 8 } else { 16 };
            let mut sym = format!("L·B·T·({per}·C+{stats})");
            let mut num = format!("{l}·{b}·{t}·({per}·{c}+{stats})");
            if cfg.dropout > 0.0 {
                sym += " + L·2·B·T·C";
                num += &format!(" + {l}·2·{b}·{t}·{c}");
            }
            if cfg.attention == Attention::Manual && !cfg.compile {
                let k = match (half, cfg.dropout > 0.0) {
                    (true, false) => 6,
                    (true, true) => 7,
                    (false, false) => 4,
                    (false, true) => 9,
                };
                sym += &format!(" + L·{k}·B·H·T²");
                num += &format!(" + {l}·{k}·{b}·{h}·{t}²");
            } else {
                sym += " + L·4·B·H·T";
                num += &format!(" + {l}·4·{b}·{h}·{t}");
            }
            f(&sym, num)
        }
        Term::FinalActivations => {
            let stats = if cfg.compile { 4 } else { 8 };
            f(
                &format!("B·T·(4·C+{stats}) + {s}·B·T·C"),
                format!("{b}·{t}·(4·{c}+{stats}) + {s}·{b}·{t}·{c}"),
            )
        }
        Term::EmbeddingDropoutMask => f("B·T·C", format!("{b}·{t}·{c}")),
        Term::WeightCopies => f("2·(V·C + 12·L·C²)", format!("2·({v}·{c} + 12·{l}·{c}²)")),
        Term::ForwardLocals => {
            let k = multiple(bytes, btc, 4 * tc);
            f(
                &format!("{k}·B·T·C + 4·T·C"),
                format!("{k}·{b}·{t}·{c} + 4·{t}·{c}"),
            )
        }
        Term::BlockTransient => {
            let k = multiple(bytes, btc, 0);
            f(&format!("{k}·B·T·C"), format!("{k}·{b}·{t}·{c}"))
        }
        Term::Logits | Term::PrevLogits | Term::StaleTrainLogits | Term::ZeroTangent => {
            f(&format!("{s}·B·T·V"), format!("{s}·{b}·{t}·{v}"))
        }
        Term::LogSoftmax => f(&format!("{s}·B·T·V"), format!("{s}·{b}·{t}·{v}")),
        Term::LossFp32Copy => f("4·B·T·V", format!("4·{b}·{t}·{v}")),
        Term::LossGrads => {
            let k = multiple(bytes, btv, 0);
            f(&format!("{k}·B·T·V"), format!("{k}·{b}·{t}·{v}"))
        }
        Term::LmHeadGrads => {
            if bytes.is_multiple_of(vc) && bytes / vc <= 6 {
                let k = bytes / vc;
                f(&format!("{k}·V·C"), format!("{k}·{v}·{c}"))
            } else {
                let k = multiple(bytes, btc, s * vc);
                let w = s;
                f(
                    &format!("{w}·V·C + {k}·B·T·C"),
                    format!("{w}·{v}·{c} + {k}·{b}·{t}·{c}"),
                )
            }
        }
        Term::CublasWorkspace => {
            let ws = bytes / 2;
            let n = if bytes == 32 << 20 || bytes == (8 << 20) + (128 << 10) {
                1
            } else {
                2
            };
            let one = if n == 1 { bytes } else { ws };
            f("n·workspace", format!("{n}·{one}"))
        }
        Term::InductorAutotune => {
            let l2 = bytes.saturating_sub(4 * s * btc);
            f(
                &format!("L2 + 4·{s}·B·T·C"),
                format!("{l2} + 4·{s}·{b}·{t}·{c}"),
            )
        }
        Term::TokenIds => {
            let n = multiple(bytes, 8 * bt, 0);
            f(&format!("{n}·8·B·T"), format!("{n}·8·{b}·{t}"))
        }
        Term::DdpBuckets | Term::DdpRebuiltBuckets => f("4·P", format!("4·{p}")),
        Term::AllocatorRounding => f(
            "blocks rounded to 512 B; large blocks keep a tail ≤ 1 MiB",
            "simulated".into(),
        ),
        // nanochat's tensors: a nanoGPT run never holds them
        Term::StoredParams
        | Term::KvCache
        | Term::RotaryBuffers
        | Term::TokenBytes
        | Term::MuonState
        | Term::OptimizerStacks
        | Term::PolarExpress
        | Term::EmbeddingGradBuffer
        | Term::AttentionMask
        | Term::Scalars => f("", bytes.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_term_of_coefficient_zero_is_left_out() {
        assert_eq!(without_zero_terms("0·B·T·C + 4·T·C"), "4·T·C");
        assert_eq!(without_zero_terms("2·V·C + 0·B·T·C"), "2·V·C");
        assert_eq!(without_zero_terms("0·B·T·C"), "0");
        assert_eq!(without_zero_terms("10·B·T·C"), "10·B·T·C");
    }

    #[test]
    fn block_activation_formula_shows_this_config() {
        let cfg = TrainConfig {
            batch_size: 8,
            compile: false,
            ..TrainConfig::default()
        };
        let fm = formula(Term::BlockActivations, &cfg, 124_373_760, 0);
        assert_eq!(fm.symbolic, "L·B·T·(36·C+16) + L·4·B·H·T");
        assert_eq!(fm.numbers, "12·8·1024·(36·768+16) + 12·4·8·12·1024");
    }

    #[test]
    fn multipliers_come_from_the_bytes() {
        let cfg = TrainConfig {
            batch_size: 8,
            ..TrainConfig::default()
        };
        let btv = 8 * 1024 * 50304;
        assert_eq!(
            formula(Term::LossGrads, &cfg, 0, 4 * btv).symbolic,
            "4·B·T·V"
        );
        // X, Y and the next batch's X, Y: four int64 (B, T) tensors
        assert_eq!(
            formula(Term::TokenIds, &cfg, 0, 32 * 8 * 1024).symbolic,
            "4·8·B·T"
        );
        assert_eq!(
            formula(Term::CublasWorkspace, &cfg, 0, 64 << 20).numbers,
            "2·33554432"
        );
    }
}
