//! The pieces every program's fix panel is made of: the largest-batch line, the best fix with
//! what to paste, one ranked row with its facts and its code. nanoGPT's panel
//! (`fixes.rs`) predates them; nanochat's and build-nanogpt's are written with them.

use super::{el, escape};
use crate::i18n::Strings;

/// One fact of a row: label and value.
pub fn fact(label: &str, value: &str) -> String {
    el(
        "div",
        &[],
        &(el("dt", &[], &escape(label)) + &el("dd", &[], &escape(value))),
    )
}

/// What a fix is, for its row and its box.
pub struct FixView<'a> {
    pub kind: &'a str,
    pub title: String,
    pub why: String,
    pub fits: bool,
    pub peak: u128,
    /// The facts (`fact(…)` each), in order.
    pub facts: String,
    /// What to paste: a launch line or the lines to edit.
    pub code: String,
}

/// The best fix, with its code as a snippet to copy.
pub fn top(tr: &Strings, f: &FixView, snippet_label: &str, testid: &str) -> String {
    let inner = el("p", &[("class", "topfix__label")], &escape(tr.top_fix))
        + &el("p", &[("class", "topfix__title")], &escape(&f.title))
        + &el("p", &[("class", "topfix__why")], &escape(&f.why))
        + &super::export::snippet_block(tr, snippet_label, &f.code, testid);
    el(
        "div",
        &[
            ("class", "topfix"),
            ("data-testid", "top-fix"),
            ("data-fix", f.kind),
        ],
        &inner,
    )
}

/// A ranked row's code (its command line, config edit or patch) with its own Copy button: every
/// fix can be taken as it is, not only the best one.
pub fn row_code(tr: &Strings, label: &str, code: &str, rank: usize) -> String {
    el(
        "div",
        &[("class", "fix__command")],
        &super::export::snippet_block(tr, label, code, &format!("fix-code-{rank}")),
    )
}

/// One ranked row.
pub fn row(tr: &Strings, f: &FixView, rank: usize) -> String {
    let class = if f.fits { "fix fix--fits" } else { "fix" };
    el(
        "li",
        &[
            ("class", class),
            ("data-testid", "fix"),
            ("data-fix", f.kind),
            ("data-fits", &f.fits.to_string()),
            ("data-peak", &f.peak.to_string()),
        ],
        &(el(
            "p",
            &[("class", "fix__title")],
            &(el("span", &[("class", "fix__rank")], &rank.to_string()) + &escape(&f.title)),
        ) + &el("p", &[("class", "fix__why")], &escape(&f.why))
            + &el("dl", &[("class", "fix__facts")], &f.facts)
            + &row_code(tr, "", &f.code, rank)),
    )
}

/// The panel: the largest batch that fits, then "already fits" or the best fix, then the rows.
pub fn panel(
    tr: &Strings,
    largest: &str,
    fits: bool,
    top: Option<String>,
    rows: &[String],
) -> String {
    let mut out = el(
        "p",
        &[
            ("class", "fixes__largest"),
            ("data-testid", "largest-batch"),
        ],
        &escape(largest),
    );
    if fits {
        out += &el("p", &[("class", "fixes__fits")], &escape(tr.already_fits));
    } else if let Some(t) = top {
        out += &t;
    }
    out + &el("ol", &[("class", "fixes__list")], &rows.concat())
}
