//! One bar segment explained: what the component is, and each tensor family in it with its
//! formula for this config and its bytes.

use estimator::programs::ProgramAnalysis;
use estimator::{Component, Term};

use super::{el, escape};
use crate::format;
use crate::i18n::Strings;

/// The details panel of `comp` at the analysis's peak.
pub fn details(tr: &Strings, a: &ProgramAnalysis, comp: Component) -> String {
    let rows: String = a
        .peak_terms()
        .0
        .iter()
        .filter(|(term, _)| term.component() == comp)
        .map(|&(term, bytes)| {
            let f = a.formula(term, bytes);
            // the rounding is simulated, not a product of sizes: words, in the page's language
            let (symbolic, numbers) = if term == Term::AllocatorRounding {
                (tr.formula_rounding.to_string(), String::new())
            } else {
                (f.symbolic, f.numbers)
            };
            el(
                "tr",
                &[],
                &(el("th", &[("scope", "row")], &escape(tr.term(term)))
                    + &el(
                        "td",
                        &[("class", "details__formula")],
                        &(el("code", &[], &escape(&symbolic))
                            + "<br>"
                            + &el("code", &[("class", "details__numbers")], &escape(&numbers))),
                    )
                    + &el(
                        "td",
                        &[
                            ("class", "details__bytes"),
                            ("title", &format::bytes_exact(bytes)),
                        ],
                        &escape(&format::bytes(bytes)),
                    )),
            )
        })
        .collect();
    let total = a.components().get(comp);
    el(
        "h3",
        &[(
            "class",
            &format!("details__title details__title--{}", comp.id()),
        )],
        &escape(&format!("{} — {}", tr.component(comp), format::gib(total))),
    ) + &el(
        "p",
        &[("class", "details__help")],
        &escape(tr.component_help(comp)),
    ) + &el(
        "table",
        &[("class", "details__terms")],
        &el("tbody", &[], &rows),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::en;
    use estimator::{analyze, gpu, Budget, TrainConfig};

    #[test]
    fn explains_activations_with_this_configs_numbers() {
        let cfg = TrainConfig {
            batch_size: 8,
            compile: false,
            ..TrainConfig::default()
        };
        let a = analyze(&cfg, &Budget::for_gpu(gpu::find("rtx3090").unwrap())).unwrap();
        let html = details(en(), &ProgramAnalysis::NanoGpt(a), Component::Activations);
        assert!(html.contains("saved block activations"), "{html}");
        assert!(html.contains("12·8·1024·(36·768+16)"), "{html}");
    }

    #[test]
    fn explains_nanochat_with_its_own_formulas() {
        let cfg = estimator::programs::nanochat::NanochatConfig::from_args(&[
            "--depth=12",
            "--device-batch-size=8",
        ])
        .unwrap();
        let budget = Budget::for_gpu(gpu::find("rtx4090").unwrap());
        let a = estimator::programs::nanochat::analyze(&cfg, &budget).unwrap();
        let html = details(en(), &ProgramAnalysis::Nanochat(a), Component::Activations);
        assert!(html.contains("L·B·T·(36·C + 8 + 12·H)"), "{html}");
        assert!(html.contains("12·8·2048·(36·768 + 8 + 12·6)"), "{html}");
    }
}
