//! nanochat's ranked fixes as HTML: each with its change, new peak, saving, fit, tokens per step
//! and what it costs training, and the launch line to paste; the best one first when the run
//! does not fit.

use estimator::programs::nanochat::fixes::{NanochatFix, NanochatFixReport};
use estimator::programs::nanochat::NanochatConfig;

use super::export::snippet_block;
use super::{el, escape};
use crate::format;
use crate::i18n::{fill, Strings};
use vramfit_i18n::fix_text::nanochat_fix_text;

/// The fix to show first when the run does not fit: the best ranked, if it fits.
pub fn best(report: &NanochatFixReport) -> Option<&NanochatFix> {
    if report.current.fits {
        return None;
    }
    report.fixes.first().filter(|f| f.verdict.fits)
}

/// The best fix with its launch line.
pub fn top_fix(tr: &Strings, f: &NanochatFix, from: &NanochatConfig, freed: u128) -> String {
    let (title, why) = nanochat_fix_text(tr, f, from, freed);
    let inner = el("p", &[("class", "topfix__label")], &escape(tr.top_fix))
        + &el("p", &[("class", "topfix__title")], &escape(&title))
        + &el("p", &[("class", "topfix__why")], &escape(&why))
        + &snippet_block(tr, tr.snippet_cli, &f.command_line(), "snippet-cli");
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

fn row(tr: &Strings, f: &NanochatFix, from: &NanochatConfig, freed: u128, rank: usize) -> String {
    let (title, why) = nanochat_fix_text(tr, f, from, freed);
    let saving = if f.saving_bytes >= 0 {
        format!("−{}", format::gib_abs(f.saving_bytes))
    } else {
        format!("+{}", format::gib_abs(f.saving_bytes))
    };
    let facts = fact(tr.col_peak, &format::gib(f.peak_bytes))
        + &fact(tr.col_saving, &saving)
        + &fact(tr.col_fits, if f.verdict.fits { tr.yes } else { tr.no })
        + &fact(
            tr.col_tokens,
            &format!(
                "{} → {}",
                format::grouped(from.total_batch_tokens()),
                format::grouped(f.config.total_batch_tokens())
            ),
        )
        + &fact(tr.col_impact, tr.impact(f.impact));
    let mut class = String::from("fix");
    if f.verdict.fits {
        class += " fix--fits";
    }
    el(
        "li",
        &[
            ("class", &class),
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
                &el("code", &[], &escape(&f.command_line())),
            )),
    )
}

/// The whole fix panel (`freed`: what other processes hold on the card).
pub fn panel(
    tr: &Strings,
    report: &NanochatFixReport,
    from: &NanochatConfig,
    freed: u128,
) -> String {
    let largest = match report.largest_device_batch_that_fits {
        Some(n) => fill(tr.nc_largest_batch, &[("n", &n.to_string())]),
        None => tr.nc_largest_batch_none.to_string(),
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
    use estimator::programs::nanochat::fixes::rank_fixes;
    use estimator::{gpu, Budget};

    #[test]
    fn depth_20_on_a_12_gb_card_gets_a_shallower_model_to_paste() {
        let cfg = NanochatConfig::from_args(&["--device-batch-size=1"]).unwrap();
        let budget = Budget::for_gpu(gpu::find("rtx3060").unwrap());
        let r = rank_fixes(&cfg, &budget).unwrap();
        let html = panel(en(), &r, &cfg, 0);
        assert!(html.contains("data-testid=\"top-fix\""));
        assert!(html.contains("data-fix=\"shallower_model\""));
        assert!(html.contains("python -m scripts.base_train --depth="));
        assert!(html.contains("Not even --device-batch-size=1"));
    }
}
