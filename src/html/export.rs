//! The page's settings back out: config-file lines, a train.py command line, the environment.

use estimator::snippet;
use estimator::TrainConfig;

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

/// The export panel for `cfg`.
pub fn panel(tr: &Strings, cfg: &TrainConfig) -> String {
    let config = snippet::config_file(cfg, None);
    if config.is_empty() && snippet::env_line(cfg).is_none() {
        return el("p", &[], &escape(tr.export_defaults));
    }
    let mut out = String::new();
    if !config.is_empty() {
        out += &snippet_block(tr, tr.export_config, &config, "export-config");
    }
    let cli = snippet::command_line(cfg, None);
    out += &snippet_block(tr, tr.snippet_cli, &cli, "export-cli");
    if let Some(env) = snippet::env_line(cfg) {
        out += &snippet_block(tr, tr.snippet_env, &env, "export-env");
    }
    out
}
