//! build-nanogpt's ranked fixes as HTML: each with its change, new peak, saving, fit and what it
//! costs training, and the lines of train_gpt2.py to edit; the best one first when the run does
//! not fit.

use estimator::programs::build_nanogpt::config::KEYS;
use estimator::programs::build_nanogpt::fixes::{BngFix, BngFixReport};
use estimator::programs::build_nanogpt::BngConfig;

use super::export::snippet_block;
use super::{el, escape};
use crate::format;
use crate::i18n::{fill, Strings};
use vramfit_i18n::fix_text::bng_fix_text;

/// train_gpt2.py's constants as the script writes them (what the export shows).
pub fn constants(cfg: &BngConfig) -> String {
    let d = BngConfig::default();
    let mut lines: Vec<String> = ["total_batch_size", "B", "T", "use_compile"]
        .iter()
        .filter_map(|k| Some(format!("{k} = {}", cfg.get(k)?)))
        .collect();
    let sizes: Vec<String> = KEYS
        .iter()
        .filter(|k| ["n_layer", "n_head", "n_embd", "block_size"].contains(k))
        .filter(|k| cfg.get(k) != d.get(k))
        .filter_map(|k| Some(format!(", {k}={}", cfg.get(k)?)))
        .collect();
    lines.push(format!(
        "model = GPT(GPTConfig(vocab_size={}{}))",
        cfg.vocab_size,
        sizes.concat()
    ));
    if cfg.allocator != d.allocator {
        lines.push("# export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into());
    }
    lines.join("\n")
}

/// The fix to show first when the run does not fit: the best ranked, if it fits.
pub fn best(report: &BngFixReport) -> Option<&BngFix> {
    if report.current.fits {
        return None;
    }
    report.fixes.first().filter(|f| f.verdict.fits)
}

/// The best fix with the lines to edit.
pub fn top_fix(tr: &Strings, f: &BngFix, from: &BngConfig, freed: u128) -> String {
    let (title, why) = bng_fix_text(tr, f, from, freed);
    let inner = el("p", &[("class", "topfix__label")], &escape(tr.top_fix))
        + &el("p", &[("class", "topfix__title")], &escape(&title))
        + &el("p", &[("class", "topfix__why")], &escape(&why))
        + &snippet_block(
            tr,
            tr.snippet_config,
            &f.edits(from).join("\n"),
            "snippet-config",
        );
    el(
        "div",
        &[
            ("class", "topfix"),
            ("data-testid", "top-fix"),
            ("data-fix", f.kind.id()),
        ],
        &inner,
    )
}

fn fact(label: &str, value: &str) -> String {
    el(
        "div",
        &[],
        &(el("dt", &[], &escape(label)) + &el("dd", &[], &escape(value))),
    )
}

fn row(tr: &Strings, f: &BngFix, from: &BngConfig, freed: u128, rank: usize) -> String {
    let (title, why) = bng_fix_text(tr, f, from, freed);
    let saving = if f.saving_bytes >= 0 {
        format!("−{}", format::gib_abs(f.saving_bytes))
    } else {
        format!("+{}", format::gib_abs(f.saving_bytes))
    };
    let facts = fact(tr.col_peak, &format::gib(f.peak_bytes))
        + &fact(tr.col_saving, &saving)
        + &fact(tr.col_fits, if f.verdict.fits { tr.yes } else { tr.no })
        + &fact(tr.col_impact, tr.impact(f.impact));
    let class = if f.verdict.fits {
        "fix fix--fits"
    } else {
        "fix"
    };
    el(
        "li",
        &[
            ("class", class),
            ("data-testid", "fix"),
            ("data-fix", f.kind.id()),
            ("data-fits", &f.verdict.fits.to_string()),
            ("data-peak", &f.peak_bytes.to_string()),
        ],
        &(el(
            "p",
            &[("class", "fix__title")],
            &(el("span", &[("class", "fix__rank")], &rank.to_string()) + &escape(&title)),
        ) + &el("p", &[("class", "fix__why")], &escape(&why))
            + &el("dl", &[("class", "fix__facts")], &facts)
            + &el(
                "pre",
                &[("class", "snippet__code fix__command")],
                &el("code", &[], &escape(&f.edits(from).join("\n"))),
            )),
    )
}

/// The whole fix panel (`freed`: what other processes hold on the card).
pub fn panel(tr: &Strings, report: &BngFixReport, from: &BngConfig, freed: u128) -> String {
    let largest = match report.largest_b_that_fits {
        Some(n) => fill(tr.bng_largest_b, &[("n", &n.to_string())]),
        None => tr.bng_largest_b_none.to_string(),
    };
    let mut out = el(
        "p",
        &[
            ("class", "fixes__largest"),
            ("data-testid", "largest-batch"),
        ],
        &escape(&largest),
    );
    if report.current.fits {
        out += &el("p", &[("class", "fixes__fits")], &escape(tr.already_fits));
    } else if let Some(top) = best(report) {
        out += &top_fix(tr, top, from, freed);
    }
    let rows: String = report
        .fixes
        .iter()
        .enumerate()
        .map(|(i, f)| row(tr, f, from, freed, i + 1))
        .collect();
    out + &el("ol", &[("class", "fixes__list")], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::en;
    use estimator::programs::build_nanogpt::fixes::rank_fixes;
    use estimator::{gpu, Budget};

    #[test]
    fn the_scripts_defaults_on_a_24_gb_card_get_lines_to_edit() {
        let cfg = BngConfig::default();
        let r = rank_fixes(&cfg, &Budget::for_gpu(gpu::find("rtx4090").unwrap())).unwrap();
        let html = panel(en(), &r, &cfg, 0);
        assert!(html.contains("data-testid=\"top-fix\""));
        assert!(html.contains("B = 16  # was 64"), "{html}");
        assert!(constants(&cfg).contains("total_batch_size = 524288\nB = 64\nT = 1024"));
    }
}
