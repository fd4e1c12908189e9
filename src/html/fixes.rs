//! A program's ranked fixes as HTML, the same panel for every program (its
//! [`FixesView`]): the largest batch that fits, the best fix with everything to paste, each
//! ranked row with its new peak, saving, fit, the program's own facts and what it costs
//! training, and the changes that are not fixes apart.

use estimator::programs::fix_view::{Fact, FixView, FixesView};
use estimator::programs::seam::Paste;
use estimator::programs::Program;

use super::export::{paste_label, snippet_block};
use super::{el, escape};
use crate::format;
use crate::i18n::{fill, Strings};
use vramfit_i18n::fix_text::{fix_words, largest_line, saving};

/// The best fix with everything needed to apply it.
pub fn top_fix(tr: &Strings, program: Program, f: &FixView) -> String {
    let (title, why) = fix_words(tr, program, &f.words);
    let mut inner = el("p", &[("class", "topfix__label")], &escape(tr.top_fix))
        + &el("p", &[("class", "topfix__title")], &escape(&title))
        + &el("p", &[("class", "topfix__why")], &escape(&why));
    for (kind, text) in &f.pastes {
        inner += &snippet_block(
            tr,
            paste_label(tr, *kind),
            text,
            &format!("snippet-{}", kind.id()),
        );
    }
    el(
        "div",
        &[
            ("class", "topfix"),
            ("data-testid", "top-fix"),
            ("data-fix", f.words.kind),
        ],
        &inner,
    )
}

/// What a ranked row offers to paste: a code change first, else the command line, else the
/// config lines (an environment variable alone is the best fix's to show).
fn row_paste(f: &FixView) -> Option<&(Paste, String)> {
    [Paste::Patch, Paste::Command, Paste::Config]
        .into_iter()
        .find_map(|kind| f.pastes.iter().find(|(k, _)| *k == kind))
}

/// One fact of a row: label and value.
fn fact(label: &str, value: &str, class: Option<&str>) -> String {
    let attrs: &[(&str, &str)] = match class {
        Some(c) => &[("class", c)],
        None => &[],
    };
    el(
        "div",
        &[],
        &(el("dt", &[], &escape(label)) + &el("dd", attrs, &escape(value))),
    )
}

/// A program's own fact, labelled.
fn program_fact(tr: &Strings, f: &Fact) -> String {
    let (label, value) = match *f {
        Fact::Batch(from, to) => (
            tr.col_batch,
            format!("{} → {}", format::grouped(from), format::grouped(to)),
        ),
        Fact::Tokens(from, to) => (
            tr.col_tokens,
            format!("{} → {}", format::grouped(from), format::grouped(to)),
        ),
        Fact::TokensPerIter(n) => (tr.col_tokens, format::grouped(n)),
        Fact::TimeRatio(x) => (tr.col_time, format!("{}×", format::decimal(x, 2))),
    };
    fact(label, &value, None)
}

/// One row: ranked (with what to paste) or, `rank` `None`, one of the changes that are not fixes.
fn row(tr: &Strings, program: Program, f: &FixView, rank: Option<usize>) -> String {
    let (title, why) = fix_words(tr, program, &f.words);
    let mut class = String::from("fix");
    if f.fits {
        class += " fix--fits";
    }
    if !f.is_fix() {
        class += " fix--notafix";
    }
    let rank_mark = rank.map_or(String::new(), |r| {
        el("span", &[("class", "fix__rank")], &r.to_string())
    });
    // every fix can be taken as it is, not only the best one; the rows that are not fixes have
    // nothing to paste
    let code = match (rank, row_paste(f)) {
        (Some(r), Some((kind, text))) => el(
            "div",
            &[("class", "fix__command")],
            &snippet_block(tr, paste_label(tr, *kind), text, &format!("fix-code-{r}")),
        ),
        _ => String::new(),
    };
    let facts = fact(tr.col_peak, &format::gib(f.peak_bytes), None)
        + &fact(tr.col_saving, &saving(tr, f.saving_bytes), None)
        + &fact(
            tr.col_fits,
            if f.fits { tr.yes } else { tr.no },
            Some("fix__fit"),
        )
        + &f.facts
            .iter()
            .map(|x| program_fact(tr, x))
            .collect::<String>()
        + &fact(tr.col_impact, tr.impact(f.impact), None);
    el(
        "li",
        &[
            ("class", &class),
            ("data-testid", "fix"),
            ("data-fix", f.words.kind),
            ("data-fits", &f.fits.to_string()),
            ("data-peak", &f.peak_bytes.to_string()),
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

/// The whole fix panel.
pub fn panel(tr: &Strings, program: Program, v: &FixesView) -> String {
    let (real, not_fixes): (Vec<&FixView>, Vec<&FixView>) =
        v.fixes.iter().partition(|f| f.is_fix());
    let mut out = el(
        "p",
        &[
            ("class", "fixes__largest"),
            ("data-testid", "largest-batch"),
        ],
        &escape(&largest_line(tr, program, v)),
    );
    if v.fits_now {
        out += &el("p", &[("class", "fixes__fits")], &escape(tr.already_fits));
    } else if let Some(top) = v.best() {
        out += &top_fix(tr, program, top);
    }
    let rows: String = real
        .iter()
        .enumerate()
        .map(|(i, f)| row(tr, program, f, Some(i + 1)))
        .collect();
    out += &el("ol", &[("class", "fixes__list")], &rows);
    if !not_fixes.is_empty() {
        let others: String = not_fixes
            .iter()
            .map(|f| row(tr, program, f, None))
            .collect();
        out += &el(
            "details",
            &[("class", "fixes__others")],
            &(el("summary", &[], &escape(tr.not_a_fix_heading))
                + &el("ul", &[("class", "fixes__list")], &others)),
        );
    }
    if let Some(s) = v.seconds_now {
        out += &el(
            "p",
            &[("class", "fixes__time")],
            &escape(&fill(tr.time_now, &[("s", &format::decimal(s, 1))])),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::en;
    use estimator::programs::build_nanogpt::BngConfig;
    use estimator::programs::nanochat::NanochatConfig;
    use estimator::{gpu, Budget, TrainConfig};

    #[test]
    fn train_py_gets_the_top_fix_with_snippets_and_escaped_text() {
        let cfg = TrainConfig {
            batch_size: 16,
            gradient_accumulation_steps: 32,
            ..TrainConfig::default()
        };
        let budget = Budget::for_gpu(gpu::find("rtx3060").unwrap());
        let r = estimator::fixes::rank_fixes(&cfg, &budget, 0.35, false).unwrap();
        let v = estimator::fixes::view(&r, &cfg, 0);
        let html = panel(en(), Program::NanoGpt, &v);
        assert!(html.contains("data-testid=\"top-fix\""));
        assert!(html.contains("batch_size = 8  # was 16"));
        assert!(html.contains("python train.py --batch_size=8 --gradient_accumulation_steps=64"));
        assert!(html.contains("compile=False"), "the anti-fix is listed");
        assert!(html.contains("fixes__others") && html.contains("fixes__time"));
        // dtype = 'float16' style text is escaped
        assert!(!html.contains("='"));
        // the top fix: the first that is a fix and fits; none once the run fits
        let top = v.best().expect("a fix that fits");
        let first_fitting = v.fixes.iter().find(|f| f.is_fix() && f.fits);
        assert_eq!(Some(top.words.kind), first_fitting.map(|f| f.words.kind));
        let fitting = estimator::fixes::rank_fixes(
            &TrainConfig::default(),
            &Budget::for_gpu(gpu::find("h100").unwrap()),
            0.35,
            false,
        )
        .unwrap();
        assert!(estimator::fixes::view(&fitting, &TrainConfig::default(), 0)
            .best()
            .is_none());
    }

    #[test]
    fn depth_20_on_a_12_gb_card_gets_a_shallower_model_to_paste() {
        use estimator::programs::nanochat::fixes::{rank_fixes, view};
        let cfg = NanochatConfig::from_args(&["--device-batch-size=1"]).unwrap();
        let budget = Budget::for_gpu(gpu::find("rtx3060").unwrap());
        let r = rank_fixes(&cfg, &budget).unwrap();
        let html = panel(en(), Program::Nanochat, &view(&r, &cfg, 0));
        assert!(html.contains("data-testid=\"top-fix\""));
        assert!(html.contains("data-fix=\"shallower_model\""));
        assert!(html.contains("python -m scripts.base_train --depth="));
        assert!(html.contains("Not even --device-batch-size=1"));
        // no speed model: no time line
        assert!(!html.contains("fixes__time"));
    }

    #[test]
    fn the_scripts_defaults_on_a_24_gb_card_get_lines_to_edit() {
        use estimator::programs::build_nanogpt::fixes::{rank_fixes, view};
        let cfg = BngConfig::default();
        let r = rank_fixes(&cfg, &Budget::for_gpu(gpu::find("rtx4090").unwrap())).unwrap();
        let html = panel(en(), Program::BuildNanoGpt, &view(&r, &cfg, 0));
        assert!(html.contains("data-testid=\"top-fix\""));
        assert!(html.contains("B = 16  # was 64"), "{html}");
        assert!(html.contains("data-testid=\"fix-code-1\""));
    }
}
