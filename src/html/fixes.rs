//! The ranked fixes as HTML: each with its change, new peak, saving, fit, effective batch,
//! tokens, time and what it costs training; the best one with the snippets to paste.

use estimator::fixes::{Fix, FixReport, Impact};
use estimator::snippet;
use estimator::TrainConfig;

use super::export::snippet_block;
use super::{el, escape};
use crate::format;
use crate::i18n::{fill, Strings};
use vramfit_i18n::fix_text::fix_text;
use vramfit_i18n::fix_text::saving;

/// The best fix with everything needed to apply it.
pub fn top_fix(tr: &Strings, f: &Fix, from: &TrainConfig, freed: u128) -> String {
    let (title, why) = fix_text(tr, f, from, freed);
    let mut inner = el("p", &[("class", "topfix__label")], &escape(tr.top_fix))
        + &el("p", &[("class", "topfix__title")], &escape(&title))
        + &el("p", &[("class", "topfix__why")], &escape(&why));
    let config = snippet::changes(&f.config, from);
    if !config.is_empty() {
        inner += &snippet_block(tr, tr.snippet_config, &config, "snippet-config");
    }
    let cli = snippet::command_line(&f.config, Some(from));
    if cli != "python train.py" {
        inner += &snippet_block(tr, tr.snippet_cli, &cli, "snippet-cli");
    }
    if let Some((k, v)) = f.env(from) {
        inner += &snippet_block(
            tr,
            tr.snippet_env,
            &format!("export {k}={v}"),
            "snippet-env",
        );
    }
    if let Some(code) = snippet::patch_code(&f.patches) {
        inner += &snippet_block(tr, tr.snippet_patch, code, "snippet-patch");
    }
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

fn fact(label: &str, value: &str, class: &str) -> String {
    el(
        "div",
        &[],
        &(el("dt", &[], &escape(label)) + &el("dd", &[("class", class)], &escape(value))),
    )
}

fn row(tr: &Strings, f: &Fix, from: &TrainConfig, freed: u128, rank: Option<usize>) -> String {
    let (title, why) = fix_text(tr, f, from, freed);
    let mut class = String::from("fix");
    if f.fits() {
        class += " fix--fits";
    }
    if f.impact == Impact::NotAFix {
        class += " fix--notafix";
    }
    let rank_mark = rank.map_or(String::new(), |r| {
        el("span", &[("class", "fix__rank")], &r.to_string())
    });
    // the rows that are not fixes have nothing to paste
    let code = match (rank, paste_for(tr, f, from)) {
        (Some(r), Some((label, code))) => super::fix_parts::row_code(tr, label, &code, r),
        _ => String::new(),
    };
    let facts = fact(tr.col_peak, &format::gib(f.peak_bytes), "")
        + &fact(tr.col_saving, &saving(tr, f.saving_bytes), "")
        + &fact(
            tr.col_fits,
            if f.fits() { tr.yes } else { tr.no },
            "fix__fit",
        )
        + &fact(
            tr.col_batch,
            &format!(
                "{} → {}",
                format::grouped(from.effective_batch()),
                format::grouped(f.effective_batch)
            ),
            "",
        )
        + &fact(tr.col_tokens, &format::grouped(f.tokens_per_iter), "")
        + &fact(
            tr.col_time,
            &format!("{}×", format::decimal(f.iter_time_ratio, 2)),
            "",
        )
        + &fact(tr.col_impact, tr.impact(f.impact), "");
    let fits = f.fits().to_string();
    let peak = f.peak_bytes.to_string();
    el(
        "li",
        &[
            ("class", &class),
            ("data-testid", "fix"),
            ("data-fix", f.kind.id()),
            ("data-fits", &fits),
            ("data-peak", &peak),
        ],
        &(el(
            "p",
            &[("class", "fix__title")],
            &(rank_mark + &escape(&title)),
        ) + &el("p", &[("class", "fix__why")], &escape(&why))
            + &el("dl", &[("class", "fix__facts")], &facts)
            + &code),
    )
}

/// What to paste for a ranked fix: its train.py command line, else the code change it needs.
fn paste_for(tr: &Strings, f: &Fix, from: &TrainConfig) -> Option<(&'static str, String)> {
    if let Some(code) = snippet::patch_code(&f.patches) {
        return Some((tr.snippet_patch, code.to_string()));
    }
    let cli = snippet::command_line(&f.config, Some(from));
    (cli != "python train.py").then_some((tr.snippet_cli, cli))
}

/// The fix to show first when the run does not fit: the best ranked real fix, if it fits (the
/// ranking puts fixes that fit before those that do not).
pub fn best(report: &FixReport) -> Option<&Fix> {
    if report.current.fits {
        return None;
    }
    report
        .fixes
        .iter()
        .find(|f| f.impact != Impact::NotAFix)
        .filter(|f| f.fits())
}

/// The whole fix panel for a report (`freed`: what other processes hold on the card).
pub fn panel(tr: &Strings, report: &FixReport, from: &TrainConfig, freed: u128) -> String {
    let (real, not_fixes): (Vec<&Fix>, Vec<&Fix>) = report
        .fixes
        .iter()
        .partition(|f| f.impact != Impact::NotAFix);
    let largest = vramfit_i18n::fix_text::largest_batch(tr, report.largest_batch_that_fits, from);
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
    let rows: String = real
        .iter()
        .enumerate()
        .map(|(i, f)| row(tr, f, from, freed, Some(i + 1)))
        .collect();
    out += &el("ol", &[("class", "fixes__list")], &rows);
    let others: String = not_fixes
        .iter()
        .map(|f| row(tr, f, from, freed, None))
        .collect();
    out += &el(
        "details",
        &[("class", "fixes__others")],
        &(el("summary", &[], &escape(tr.not_a_fix_heading))
            + &el("ul", &[("class", "fixes__list")], &others)),
    );
    out += &el(
        "p",
        &[("class", "fixes__time")],
        &escape(&fill(
            tr.time_now,
            &[("s", &format::decimal(report.current_seconds, 1))],
        )),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::en;
    use estimator::fixes::rank_fixes;
    use estimator::{gpu, Budget};

    #[test]
    fn panel_shows_the_top_fix_with_snippets_and_escapes_text() {
        let cfg = TrainConfig {
            batch_size: 16,
            gradient_accumulation_steps: 32,
            ..TrainConfig::default()
        };
        let budget = Budget::for_gpu(gpu::find("rtx3060").unwrap());
        let r = rank_fixes(&cfg, &budget, 0.35, false).unwrap();
        let html = panel(en(), &r, &cfg, 0);
        assert!(html.contains("data-testid=\"top-fix\""));
        assert!(html.contains("batch_size = 8  # was 16"));
        assert!(html.contains("python train.py --batch_size=8 --gradient_accumulation_steps=64"));
        assert!(html.contains("compile=False"), "the anti-fix is listed");
        // dtype = 'float16' style text is escaped
        assert!(!html.contains("='"));
        // the top fix: the first that is a fix and fits; none once the run fits
        let top = best(&r).expect("a fix that fits");
        let first_fitting = r
            .fixes
            .iter()
            .find(|f| f.impact != Impact::NotAFix && f.fits());
        assert_eq!(Some(top.kind), first_fitting.map(|f| f.kind));
        let fitting = rank_fixes(
            &TrainConfig::default(),
            &Budget::for_gpu(gpu::find("h100").unwrap()),
            0.35,
            false,
        )
        .unwrap();
        assert!(best(&fitting).is_none());
    }
}
