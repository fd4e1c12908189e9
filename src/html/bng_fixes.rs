//! build-nanogpt's ranked fixes as HTML: each with its change, new peak, saving, fit and what it
//! costs training, and the lines of train_gpt2.py to edit; the best one first when the run does
//! not fit.

use estimator::programs::build_nanogpt::fixes::{self, BngFix, BngFixReport};
use estimator::programs::build_nanogpt::BngConfig;

use super::fix_parts::{self, fact, row, top, FixView};
use crate::format;
use crate::i18n::{fill, Strings};
use vramfit_i18n::fix_text::bng_fix_text;
use vramfit_i18n::fix_text::saving;

/// The fix to show first when the run does not fit: the best ranked, if it fits.
pub fn best(report: &BngFixReport) -> Option<&BngFix> {
    if report.current.fits {
        return None;
    }
    report.fixes.first().filter(|f| f.verdict.fits)
}

fn view<'a>(tr: &Strings, f: &'a BngFix, from: &BngConfig, freed: u128) -> FixView<'a> {
    let (title, why) = bng_fix_text(tr, f, from, freed);
    let facts = fact(tr.col_peak, &format::gib(f.peak_bytes))
        + &fact(tr.col_saving, &saving(tr, f.saving_bytes))
        + &fact(tr.col_fits, if f.verdict.fits { tr.yes } else { tr.no })
        + &fact(tr.col_impact, tr.impact(f.impact));
    FixView {
        kind: f.kind.id(),
        title,
        why,
        fits: f.verdict.fits,
        peak: f.peak_bytes,
        facts,
        code: fixes::edits(f, from).join("\n"),
    }
}

/// The best fix with the lines to edit.
pub fn top_fix(tr: &Strings, f: &BngFix, from: &BngConfig, freed: u128) -> String {
    top(
        tr,
        &view(tr, f, from, freed),
        tr.snippet_config,
        "snippet-config",
    )
}

/// The whole fix panel (`freed`: what other processes hold on the card).
pub fn panel(tr: &Strings, report: &BngFixReport, from: &BngConfig, freed: u128) -> String {
    let words = tr.program(estimator::programs::Program::BuildNanoGpt);
    let largest = match report.largest_b_that_fits {
        Some(n) => fill(words.largest(), &[("n", &n.to_string())]),
        None => words.largest_none().to_string(),
    };
    let rows: Vec<String> = report
        .fixes
        .iter()
        .enumerate()
        .map(|(i, f)| row(tr, &view(tr, f, from, freed), i + 1))
        .collect();
    let best = best(report).map(|f| top_fix(tr, f, from, freed));
    fix_parts::panel(tr, &largest, report.current.fits, best, &rows)
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
    }
}
