//! The page's settings back out as what to paste (each program's `export`), with copy buttons.

use estimator::programs::seam::Paste;

use super::{el, escape};
use crate::i18n::Strings;

/// A block of code with a copy button (the panel's click handler copies `data-copy`'s target).
pub fn snippet_block(tr: &Strings, label: &str, code: &str, testid: &str) -> String {
    let head = el("span", &[("class", "snippet__label")], &escape(label))
        + &el(
            "button",
            &[
                ("type", "button"),
                ("class", "button button--small"),
                ("data-copy", testid),
            ],
            &escape(tr.copy),
        );
    el(
        "div",
        &[("class", "snippet")],
        &(el("div", &[("class", "snippet__head")], &head)
            + &el(
                "pre",
                &[
                    ("class", "snippet__code"),
                    ("data-testid", testid),
                    ("tabindex", "0"),
                ],
                &el("code", &[], &escape(code)),
            )),
    )
}

/// A paste's label in the page's words.
pub fn paste_label(tr: &Strings, kind: Paste) -> &'static str {
    match kind {
        Paste::Config => tr.snippet_config,
        Paste::ConfigOverrides => tr.export_config,
        Paste::Command => tr.snippet_cli,
        Paste::Env => tr.snippet_env,
        Paste::Patch => tr.snippet_patch,
    }
}

/// The export panel: each paste with its copy button, or that the settings are the script's
/// defaults.
pub fn panel(tr: &Strings, pastes: &[(Paste, String)]) -> String {
    if pastes.is_empty() {
        return el("p", &[], &escape(tr.export_defaults));
    }
    pastes
        .iter()
        .map(|(kind, text)| {
            snippet_block(
                tr,
                paste_label(tr, *kind),
                text,
                &format!("export-{}", kind.id()),
            )
        })
        .collect()
}
