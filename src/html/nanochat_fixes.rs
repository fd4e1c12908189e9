//! nanochat's ranked fixes as HTML: each with its change, new peak, saving, fit, tokens per step
//! and what it costs training, and the launch line to paste; the best one first when the run
//! does not fit.

use estimator::programs::nanochat::fixes::{self, NanochatFix, NanochatFixReport};
use estimator::programs::nanochat::NanochatConfig;

use super::fix_parts::{self, fact, row, top, FixView};
use crate::format;
use crate::i18n::{fill, Strings};
use vramfit_i18n::fix_text::nanochat_fix_text;
use vramfit_i18n::fix_text::saving;

/// The fix to show first when the run does not fit: the best ranked, if it fits.
pub fn best(report: &NanochatFixReport) -> Option<&NanochatFix> {
    if report.current.fits {
        return None;
    }
    report.fixes.first().filter(|f| f.verdict.fits)
}

fn view<'a>(tr: &Strings, f: &'a NanochatFix, from: &NanochatConfig, freed: u128) -> FixView<'a> {
    let (title, why) = nanochat_fix_text(tr, f, from, freed);
    let facts = fact(tr.col_peak, &format::gib(f.peak_bytes))
        + &fact(tr.col_saving, &saving(tr, f.saving_bytes))
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
    FixView {
        kind: f.kind.id(),
        title,
        why,
        fits: f.verdict.fits,
        peak: f.peak_bytes,
        facts,
        code: fixes::launch_line(&f.config),
    }
}

/// The best fix with its launch line.
pub fn top_fix(tr: &Strings, f: &NanochatFix, from: &NanochatConfig, freed: u128) -> String {
    top(tr, &view(tr, f, from, freed), tr.snippet_cli, "snippet-cli")
}

/// The whole fix panel (`freed`: what other processes hold on the card).
pub fn panel(
    tr: &Strings,
    report: &NanochatFixReport,
    from: &NanochatConfig,
    freed: u128,
) -> String {
    let words = tr.program(estimator::programs::Program::Nanochat);
    let largest = match report.largest_device_batch_that_fits {
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
