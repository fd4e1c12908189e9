//! What a paste was understood to be, and what was not, as HTML.

use estimator::configurator::SkipReason;
use estimator::paste::{PasteOutcome, Pasted};

use super::{el, escape};
use crate::format;
use crate::i18n::{error, fill, place, Strings};

/// The report of a paste, in the page's language.
pub fn report(tr: &Strings, out: &PasteOutcome) -> String {
    let mut lines: Vec<String> = Vec::new();
    match &out.pasted {
        Pasted::Nothing if out.error.is_none() => lines.push(tr.paste_nothing.to_string()),
        Pasted::Nothing => {}
        Pasted::OomMessage {
            message: m,
            diagnosis,
        } => {
            let size = |b: Option<u128>| b.map_or("?".to_string(), format::bytes);
            let others: u128 = m.other_processes.iter().map(|p| p.1).sum();
            let others = if others > 0 {
                fill(tr.paste_others, &[("gib", &format::bytes(others))])
            } else {
                String::new()
            };
            let card = m
                .card()
                .map_or_else(|| size(m.total_capacity_bytes), |g| g.name.to_string());
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
            match diagnosis {
                Some(d) => {
                    lines.push(fill(
                        tr.paste_diagnosis,
                        &[
                            ("tensor", tr.term(d.term)),
                            (
                                "where",
                                &place(
                                    tr,
                                    estimator::programs::Program::NanoGpt,
                                    d.phase,
                                    d.stage,
                                    d.micro_step,
                                ),
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
        Pasted::JsonConfig => lines.push(tr.paste_json.to_string()),
    }
    if let Some(e) = &out.error {
        lines.push(fill(tr.paste_error, &[("message", &error(tr, e))]));
    }
    for s in &out.skipped {
        let line = s.line.to_string();
        lines.push(match &s.reason {
            SkipReason::NotUnderstood(_) => fill(
                tr.paste_skip_not_understood,
                &[("line", &line), ("text", s.text.trim())],
            ),
            SkipReason::UnknownKey(k) => {
                fill(tr.paste_skip_unknown, &[("line", &line), ("key", k)])
            }
            SkipReason::Invalid(e) => fill(
                tr.paste_skip_invalid,
                &[("line", &line), ("message", &error(tr, e))],
            ),
        });
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
}
