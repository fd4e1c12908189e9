//! What a paste was understood to be, and what was not, as HTML.

use estimator::configurator::SkipReason;
use estimator::paste::{MessageCard, PasteOutcome, Pasted};

use super::{el, escape};
use crate::format;
use crate::i18n::{error, fill, place, Strings};

/// How many lines not applied are named one by one.
const MAX_SKIPPED_SHOWN: usize = 12;
/// How many characters of a line not applied are shown.
const MAX_LINE_SHOWN: usize = 120;

/// A line cut to [`MAX_LINE_SHOWN`] characters, with an ellipsis when it was longer.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(MAX_LINE_SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The report of a paste, in the page's language.
pub fn report(tr: &Strings, out: &PasteOutcome) -> String {
    let mut lines: Vec<String> = Vec::new();
    match &out.pasted {
        Pasted::Nothing if out.error.is_none() => lines.push(tr.paste_nothing.to_string()),
        Pasted::Nothing => {}
        Pasted::OomMessage {
            message: m,
            diagnosis,
            card: message_card,
            settings_given,
        } => {
            let size = |b: Option<u128>| b.map_or("?".to_string(), format::bytes);
            let others: u128 = m.other_processes.iter().map(|p| p.1).sum();
            let others = if others > 0 {
                fill(tr.paste_others, &[("gib", &format::bytes(others))])
            } else {
                String::new()
            };
            // the message gives its card's size, never its model: the size is what is said
            let card = size(m.total_capacity_bytes);
            lines.push(fill(
                tr.paste_message,
                &[
                    ("card", &card),
                    ("requested", &size(m.tried_to_allocate_bytes)),
                    ("allocated", &size(m.allocated())),
                    ("fragmented", &size(m.reserved_unallocated_bytes)),
                    ("others", &others),
                ],
            ));
            match message_card {
                MessageCard::Other {
                    total_bytes, like, ..
                } => {
                    let like =
                        like.map_or(String::new(), |c| fill(tr.paste_card_like, &[("card", c)]));
                    lines.push(fill(
                        tr.paste_card_other,
                        &[
                            ("total", &format::bytes(*total_bytes)),
                            ("like", &like),
                            ("chosen", out.state.card().name),
                        ],
                    ));
                }
                MessageCard::Same | MessageCard::Unknown => {
                    lines.push(tr.paste_budget_set.to_string())
                }
            }
            match diagnosis {
                // a message says nothing of the run's settings: without them, ask for them
                None if !settings_given => lines.push(tr.paste_needs_settings.to_string()),
                Some(d) => {
                    lines.push(fill(
                        tr.paste_diagnosis,
                        &[
                            ("tensor", tr.term(d.term)),
                            (
                                "where",
                                &place(tr, out.state.program, d.phase, d.stage, d.micro_step),
                            ),
                        ],
                    ));
                    if d.reproduced {
                        lines.push(tr.paste_reproduced.to_string());
                    }
                }
                None => lines.push(fill(
                    tr.paste_no_match,
                    &[("requested", &size(m.tried_to_allocate_bytes))],
                )),
            }
        }
        Pasted::CommandLine {
            world_size,
            unknown_files,
        } => {
            lines.push(fill(tr.paste_command, &[("n", &world_size.to_string())]));
            if !unknown_files.is_empty() {
                lines.push(fill(
                    tr.paste_unknown_files,
                    &[("files", &unknown_files.join(", "))],
                ));
            }
        }
        Pasted::ConfigFile => lines.push(tr.paste_config.to_string()),
        Pasted::ConfigUnchanged => lines.push(tr.paste_config_unchanged.to_string()),
        Pasted::JsonConfig => lines.push(tr.paste_json.to_string()),
    }
    if let Some(e) = &out.error {
        lines.push(fill(tr.paste_error, &[("message", &error(tr, e))]));
    }
    // a pasted log or binary file can have thousands of lines: the first few are named, each cut
    // short, and the rest counted
    for s in out.skipped.iter().take(MAX_SKIPPED_SHOWN) {
        let line = s.line.to_string();
        lines.push(match &s.reason {
            SkipReason::NotUnderstood(_) => fill(
                tr.paste_skip_not_understood,
                &[("line", &line), ("text", &shortened(s.text.trim()))],
            ),
            SkipReason::UnknownKey(k) => {
                fill(tr.paste_skip_unknown, &[("line", &line), ("key", k)])
            }
            SkipReason::Invalid(e) => fill(
                tr.paste_skip_invalid,
                &[("line", &line), ("message", &shortened(&error(tr, e)))],
            ),
        });
    }
    if out.skipped.len() > MAX_SKIPPED_SHOWN {
        let more = (out.skipped.len() - MAX_SKIPPED_SHOWN).to_string();
        lines.push(fill(tr.paste_skip_more, &[("n", &more)]));
    }
    if out.truncated {
        lines.push(tr.paste_truncated.to_string());
    }
    lines.iter().map(|l| el("p", &[], &escape(l))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::en;
    use estimator::paste::interpret;
    use estimator::query::PageState;

    #[test]
    fn reports_lines_not_applied_and_escapes_them() {
        let out = interpret("batch_size = 4\nimport <os>\n", &PageState::default());
        let html = report(en(), &out);
        assert!(html.contains("Config file applied."));
        assert!(html.contains("line 2 not applied"));
        assert!(html.contains("import &lt;os&gt;"));
    }

    #[test]
    fn a_paste_of_thousands_of_bad_lines_names_a_dozen_cut_short() {
        let junk: String = (0..5000)
            .map(|i| format!("{} {i} = 1\n", "☃".repeat(400)))
            .collect();
        let out = interpret(&format!("batch_size = 4\n{junk}"), &PageState::default());
        // (the paste is cut at its first MiB)
        let n = out.skipped.len();
        assert!(n > 500, "{n}");
        let html = report(en(), &out);
        assert!(html.matches("<p>").count() <= 1 + MAX_SKIPPED_SHOWN + 2);
        let more = format!("… and {} more lines not applied.", n - MAX_SKIPPED_SHOWN);
        assert!(html.contains(&more), "{html}");
        assert!(html.len() < 12 * 1024, "{} bytes", html.len());
    }
}
