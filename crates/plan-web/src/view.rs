//! The plan view's results as HTML: the summary, each stage as a row (its peak per GPU as written
//! and as planned, the verdict, its memory over the run, the change), the assumptions, and the
//! script written back with its changed lines marked and a copy button (the page's one click
//! handler for `button[data-copy]`, `browser::copy_snippet`, copies it).

use estimator::programs::nanochat::plan::{Outcome, Plan, StagePlan};
use estimator::ConfigError;
use vramfit_html::chart::sparkline;
use vramfit_html::{el, escape};
use vramfit_i18n::{fill, format, plan_text, Strings};

/// A stage's verdict in words, and the class that colours it.
fn outcome_text(tr: &Strings, o: &Result<Outcome, ConfigError>) -> (String, &'static str) {
    match o {
        Ok(o) if o.fits => (
            format!("{} · {}", format::bytes(o.peak_bytes), tr.plan_fits),
            "plan__verdict--fits",
        ),
        Ok(o) => {
            let short = format::bytes(o.need_bytes.saturating_sub(o.budget_bytes));
            (
                format!(
                    "{} · {} ({})",
                    format::bytes(o.peak_bytes),
                    tr.plan_oom,
                    fill(tr.plan_short, &[("short", &short)])
                ),
                "plan__verdict--oom",
            )
        }
        Err(e) => (vramfit_i18n::error(tr, e), "plan__verdict--error"),
    }
}

fn stage_row(tr: &Strings, s: &StagePlan) -> String {
    let (written, written_class) = outcome_text(tr, &s.as_written);
    let (mut planned, planned_class) = outcome_text(tr, &s.planned);
    if let (Some(t), Ok(_)) = (s.seconds, &s.planned) {
        planned += " · ";
        planned += &fill(tr.plan_time, &[("time", &format::duration(t))]);
    }
    let changes = plan_text::changes(tr, &s.changes);
    let peak = match &s.planned {
        Ok(o) => o.peak_bytes.to_string(),
        Err(_) => String::new(),
    };
    // the planned run's picture, or the one as written when the planned one has none
    let pictured = s.planned.as_ref().or(s.as_written.as_ref()).ok();
    let spark = pictured.map_or_else(String::new, |o| {
        sparkline(&o.profile, o.budget_bytes, &planned)
    });
    let cells = [
        el("td", &[("class", "plan__line-no")], &s.line.to_string()),
        el("td", &[], &el("code", &[], &escape(s.kind.module()))),
        el(
            "td",
            &[
                ("class", written_class),
                ("data-label", tr.plan_col_written),
            ],
            &escape(&written),
        ),
        el(
            "td",
            &[
                ("class", planned_class),
                ("data-testid", "plan-planned"),
                ("data-label", tr.plan_col_planned),
            ],
            &escape(&planned),
        ),
        el(
            "td",
            &[
                ("class", "plan__memory"),
                ("data-label", tr.plan_col_memory),
            ],
            &spark,
        ),
        el(
            "td",
            &[
                ("class", "plan__change"),
                ("data-label", tr.plan_col_change),
            ],
            &escape(&changes),
        ),
    ];
    el(
        "tr",
        &[
            ("data-testid", "plan-stage"),
            ("data-program", s.kind.id()),
            ("data-peak-bytes", &peak),
        ],
        &cells.concat(),
    )
}

/// The rewritten script, each line its own element: a `# vramfit:` comment and the command it
/// explains are marked as changed.
fn script_lines(script: &str) -> String {
    let mut after_comment = false;
    script
        .lines()
        .map(|line| {
            let comment = line.trim_start().starts_with("# vramfit:");
            let changed = comment || after_comment;
            after_comment = comment;
            let class = if changed {
                "plan__script-line plan__script-line--changed"
            } else {
                "plan__script-line"
            };
            el("span", &[("class", class)], &escape(&format!("{line}\n")))
        })
        .collect()
}

/// The plan view's results for `p`, in `tr`'s language.
pub fn results(tr: &Strings, p: &Plan) -> String {
    if p.stages.is_empty() {
        return summary(tr.plan_no_stage, "plan__verdict--error");
    }
    let said = plan_text::summary(tr, p);
    // a stage whose flags cannot be read is an error, not out of memory (`plan_text::summary`)
    let class = if p.all_fit() {
        "plan__verdict--fits"
    } else if p.any_unplanned() {
        "plan__verdict--error"
    } else {
        "plan__verdict--oom"
    };
    let head: String = [
        tr.plan_col_line,
        tr.plan_col_stage,
        tr.plan_col_written,
        tr.plan_col_planned,
        tr.plan_col_memory,
        tr.plan_col_change,
    ]
    .iter()
    .map(|h| el("th", &[], &escape(h)))
    .collect();
    let rows: String = p.stages.iter().map(|s| stage_row(tr, s)).collect();
    let table = el(
        "table",
        &[("class", "plan__table")],
        &(el("thead", &[], &el("tr", &[], &head)) + &el("tbody", &[], &rows)),
    );
    let assumed = fill(
        tr.plan_assumed,
        &[
            ("core", &format::grouped(p.core_max_tokens)),
            ("prompt", &format::grouped(p.longest_prompt)),
        ],
    );
    let script_head = el(
        "div",
        &[("class", "plan__script-head")],
        &(el("h3", &[], &escape(tr.plan_rewritten))
            + &el(
                "button",
                &[
                    ("type", "button"),
                    ("class", "button"),
                    ("data-testid", "plan-copy"),
                    ("data-copy", "plan-rewritten"),
                ],
                &escape(tr.copy),
            )),
    );
    let script = el(
        "pre",
        &[("class", "plan__script"), ("data-testid", "plan-rewritten")],
        &script_lines(&p.script),
    );
    [
        summary(said, class),
        el("div", &[("class", "plan__table-wrap")], &table),
        el("p", &[("class", "plan__assumed")], &escape(&assumed)),
        el("div", &[("class", "snippet")], &(script_head + &script)),
    ]
    .concat()
}

fn summary(said: &str, class: &str) -> String {
    el(
        "p",
        &[
            ("class", &format!("plan__summary {class}")),
            ("data-testid", "plan-summary"),
        ],
        &escape(said),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use estimator::gpu::{find, Budget};
    use estimator::programs::nanochat::plan::{plan, Hardware, SPEEDRUN};
    use vramfit_i18n::Lang;

    fn hw(gpu: &str, gpus: u32) -> Hardware {
        Hardware {
            budget: Budget::for_gpu(find(gpu).expect("a preset")),
            gpus,
        }
    }

    /// The text inside each element whose opening tag holds `marker`, in order.
    fn texts_after<'a>(html: &'a str, marker: &str) -> Vec<&'a str> {
        html.split(marker)
            .skip(1)
            .map(|rest| {
                let from = rest.find('>').map_or(0, |i| i + 1);
                &rest[from..]
            })
            .collect()
    }

    #[test]
    fn a_stage_with_wrong_flags_is_named_not_called_out_of_memory() {
        let script =
            "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=abc\n";
        let p = plan(script, &hw("rtx4090", 1), None, None);
        let html = results(Lang::En.bundled(), &p);
        assert!(html.contains("Not every stage could be planned"), "{html}");
        assert!(html.contains("depth=abc has the wrong type"), "{html}");
        assert!(
            html.contains(r#"class="plan__summary plan__verdict--error""#),
            "{html}"
        );
    }

    #[test]
    fn each_stage_is_a_row_with_the_plans_own_peak() {
        let p = plan(SPEEDRUN, &hw("rtx4090", 1), None, None);
        let html = results(Lang::En.bundled(), &p);
        let peaks: Vec<String> = p
            .stages
            .iter()
            .map(|s| {
                format!(
                    "data-peak-bytes=\"{}\"",
                    s.planned.as_ref().expect("planned").peak_bytes
                )
            })
            .collect();
        assert_eq!(
            html.matches("data-testid=\"plan-stage\"").count(),
            p.stages.len()
        );
        for peak in &peaks {
            assert!(html.contains(peak.as_str()), "{peak} in the rows");
        }
        assert!(html.contains("Every stage fits as planned."));
        // one picture per stage, labelled
        assert_eq!(
            html.matches("<svg class=\"plan__spark\"").count(),
            p.stages.len()
        );
    }

    #[test]
    fn the_rewritten_script_reads_back_as_the_plan_wrote_it() {
        let script = "echo '<b>&\"x\"</b>'\ntorchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=24\n";
        let p = plan(script, &hw("rtx3060", 1), None, None);
        let html = results(Lang::En.bundled(), &p);
        let pre = texts_after(&html, "data-testid=\"plan-rewritten\"")[0];
        let pre = &pre[..pre.find("</pre>").expect("the script's end")];
        // the text of the spans, unescaped, is the script
        let text: String = texts_after(pre, "<span")
            .iter()
            .map(|t| &t[..t.find("</span>").expect("a line's end")])
            .collect();
        let unescaped = text
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&");
        assert_eq!(unescaped, p.script);
        assert!(!pre.contains("<b>"), "the script's markup is text");
        // the changed command and its comment are marked
        assert!(html.contains("plan__script-line--changed"));
    }

    #[test]
    fn a_script_without_a_stage_or_with_a_bad_flag_is_said_in_the_readers_language() {
        let none = results(
            Lang::De.bundled(),
            &plan("echo hi\n", &hw("rtx4090", 1), None, None),
        );
        assert!(none.contains(
            Lang::De
                .bundled()
                .plan_no_stage
                .split(':')
                .next()
                .expect("words")
        ));
        assert!(!none.contains("plan-stage"));
        let bad = plan(
            "python -m scripts.base_eval --bogus=1\n",
            &hw("rtx4090", 1),
            None,
            None,
        );
        let html = results(Lang::En.bundled(), &bad);
        assert!(html.contains("unrecognized arguments: --bogus=1"), "{html}");
        assert!(html.contains("plan__verdict--error"));
    }

    #[test]
    fn the_worker_reads_the_cards_from_the_pages_link() {
        let h = crate::hardware("gpu=a100_40&view=plan&plan_gpus=8");
        assert_eq!(h.gpus, 8);
        assert_eq!(h.budget, hw("a100_40", 8).budget);
        // a link naming nothing: the page's default card, one GPU
        let d = crate::hardware("");
        assert_eq!(d.gpus, 1);
        assert_eq!(d.budget, estimator::query::PageState::default().budget());
    }
}
