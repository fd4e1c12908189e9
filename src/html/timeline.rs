//! Memory over the run as an SVG chart: allocated and reserved bytes, event by event, from the
//! first `estimate_loss()` to the last simulated iteration, against the card's usable memory,
//! with the out-of-memory point when there is one — and the same numbers as a table.

use estimator::decimal::Shortest;
use estimator::engine::run::Run;
use estimator::programs::Program;
use estimator::sequence::{Sequence, Stage};
use estimator::Phase;

use super::{el, escape};
use crate::format;
use crate::i18n::{fill, Strings};
use vramfit_html::chart::{
    across, grid, lines, pct_of, plot, plot_top, px, y_at, BOTTOM, HEIGHT, TOP, WIDTH,
};

/// Points across the chart (each the maximum of its stretch of events).
const BUCKETS: usize = 360;

/// A stretch of the run the chart labels (a phase, or a stage inside it).
struct Span {
    phase: Option<Phase>,
    stage: Stage,
    micro_step: u32,
    start: usize,
    end: usize,
}

/// The marks from `from` on, as contiguous spans of events (clipped to `len`).
fn spans(seq: &Sequence, from: usize, len: usize) -> Vec<Span> {
    let marks: Vec<_> = seq.marks.iter().filter(|m| m.at >= from).collect();
    marks
        .iter()
        .enumerate()
        .map(|(i, m)| Span {
            phase: m.phase,
            stage: m.stage,
            micro_step: m.micro_step,
            start: m.at,
            end: marks.get(i + 1).map_or(len, |n| n.at).min(len),
        })
        .filter(|s| s.end > s.start)
        .collect()
}

fn phase_label(tr: &Strings, program: Program, p: Option<Phase>) -> &'static str {
    p.map_or(tr.model_load, |p| tr.phase_for(program, p))
}

/// The chart and its table for an analysis on a card whose allocator may use `budget` bytes.
pub fn chart(tr: &Strings, a: &Run, program: Program, budget: u128) -> String {
    let r = &a.on_card;
    // start where estimate_loss() does: model loading is a ramp, not the question
    let from = a
        .sequence
        .marks
        .iter()
        .find(|m| m.phase == Some(Phase::Eval))
        .map_or(0, |m| m.at);
    let env = r.envelope(from, BUCKETS);
    let len = r.samples.len();
    if env.is_empty() || len <= from {
        return String::new();
    }
    let top = plot_top(&env, budget);
    let y_of = |b: u128| y_at(top, b);
    let ev_to_x = |e: usize| (e.saturating_sub(from)) as f64 / (len - from) as f64 * WIDTH;
    let pct_x = |x: f64| pct_of(x, 0.0).0;
    let pct_y = |y: f64| pct_of(0.0, y).1;
    // words and marks go in an overlay of their own, positioned in percent and never scaled: the
    // plot below is stretched to the chart's width, which would distort text and circles
    let (mut svg, mut overlay) = grid(top);
    // the run's stretches (each iteration one), alternately shaded; the wide ones numbered, and
    // named under the chart, where the words wrap at any width and in any language
    let mut phase_start: Option<(Option<Phase>, usize)> = None;
    let spans = spans(&a.sequence, from, len);
    let mut bands: Vec<(Option<Phase>, usize, usize)> = Vec::new();
    for s in &spans {
        match phase_start {
            Some((p, _)) if p == s.phase && !(s.stage == Stage::Forward && s.micro_step == 1) => {}
            _ => {
                if let Some((p, st)) = phase_start {
                    bands.push((p, st, s.start));
                }
                phase_start = Some((s.phase, s.start));
            }
        }
    }
    if let Some((p, st)) = phase_start {
        bands.push((p, st, len));
    }
    let mut named: Vec<(usize, usize, &'static str)> = Vec::new();
    for (i, (p, start, end)) in bands.iter().enumerate() {
        let (x0, x1) = (ev_to_x(*start), ev_to_x(*end));
        if i % 2 == 1 {
            svg += &format!(
                "<rect class=\"chart__band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                px(x0),
                Shortest(TOP),
                px((x1 - x0).max(0.0)),
                px(HEIGHT - TOP - BOTTOM)
            );
        }
        // a number needs about 3 % of the width (12 px at 360 px)
        if x1 - x0 < WIDTH * 0.03 {
            continue;
        }
        let no = named.last().map_or(1, |n| n.1 + 1);
        overlay += &format!(
            "<text class=\"chart__label chart__band-no\" x=\"{}%\" y=\"12\" text-anchor=\"middle\">{no}</text>",
            pct_x((x0 + x1) / 2.0)
        );
        let label = phase_label(tr, program, *p);
        match named.last_mut() {
            // consecutive stretches of one phase: "3–5 steady training"
            Some(last) if last.2 == label => last.1 = no,
            _ => named.push((no, no, label)),
        }
    }
    svg += &lines(&env, top);
    let by = y_of(budget);
    svg += &across("chart__budget", by);
    overlay += &format!(
        "<text class=\"chart__label chart__label--budget\" x=\"99%\" y=\"{}%\" dy=\"-4\" text-anchor=\"end\">{} {}</text>",
        pct_y(by),
        escape(tr.chart_budget),
        escape(&format::gib(budget))
    );
    if let Some(o) = &r.oom {
        let x = ev_to_x(o.event);
        let y = y_of(o.reserved);
        let right = x > WIDTH * 0.6;
        overlay += &format!(
            "<circle class=\"chart__oom\" cx=\"{}%\" cy=\"{}%\" r=\"6\"/>\
             <text class=\"chart__label chart__label--oom\" x=\"{}%\" y=\"{}%\" dx=\"{}\" dy=\"20\" text-anchor=\"{}\">{}</text>",
            pct_x(x),
            pct_y(y),
            pct_x(x),
            // under the point: above it is the usable line's own label
            pct_y(y),
            if right { -10 } else { 10 },
            if right { "end" } else { "start" },
            escape(tr.chart_oom)
        );
    }
    let svg = plot(&svg, &overlay, "chart-title");
    let phases: String = named
        .iter()
        .map(|(first, last, label)| {
            let no = if first == last {
                first.to_string()
            } else {
                format!("{first}–{last}")
            };
            el(
                "li",
                &[],
                &(el("span", &[("class", "chart__phase-no")], &no) + &escape(label)),
            )
        })
        .collect();
    let phases = el(
        "ol",
        &[("class", "chart__phases"), ("data-testid", "chart-phases")],
        &phases,
    );
    let legend = format!(
        "<p class=\"chart__legend\"><span class=\"chart__key chart__key--allocated\"></span>{}\
         <span class=\"chart__key chart__key--reserved\"></span>{}\
         <span class=\"chart__key chart__key--budget\"></span>{}</p>",
        escape(tr.chart_allocated),
        escape(tr.chart_reserved),
        escape(tr.chart_budget)
    );
    let title = el(
        "h3",
        &[("class", "chart__title"), ("id", "chart-title")],
        &escape(tr.program(program).chart_title()),
    );
    el(
        "figure",
        &[("class", "chart"), ("data-testid", "timeline")],
        &(title + &svg + &phases + &legend + &table(tr, a, program, &spans)),
    )
}

/// Peak allocated and reserved per stage, for screen readers and anyone who wants the numbers.
fn table(tr: &Strings, a: &Run, program: Program, spans: &[Span]) -> String {
    let r = &a.on_card;
    let mut rows = String::new();
    for s in spans {
        let slice = &r.samples[s.start..s.end.min(r.samples.len())];
        let (al, re) = slice
            .iter()
            .fold((0, 0), |(a, b), x| (a.max(x.allocated), b.max(x.reserved)));
        let micro = if s.micro_step > 0 {
            format!(
                " · {}",
                fill(tr.micro_step, &[("n", &s.micro_step.to_string())])
            )
        } else {
            String::new()
        };
        let label = format!(
            "{} · {}{micro}",
            phase_label(tr, program, s.phase),
            tr.stage(s.stage)
        );
        rows += &el(
            "tr",
            &[],
            &(el("th", &[("scope", "row")], &escape(&label))
                + &el("td", &[], &format::gib(al.into()))
                + &el("td", &[], &format::gib(re.into()))),
        );
    }
    let head = el(
        "tr",
        &[],
        &(el("th", &[("scope", "col")], &escape(tr.chart_col_stage))
            + &el("th", &[("scope", "col")], &escape(tr.chart_col_allocated))
            + &el("th", &[("scope", "col")], &escape(tr.chart_col_reserved))),
    );
    el(
        "details",
        &[("class", "chart__numbers")],
        &(el("summary", &[], &escape(tr.chart_table))
            + &el(
                "table",
                &[("class", "chart__table")],
                &(el("thead", &[], &head) + &el("tbody", &[], &rows)),
            )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::i18n::en;
    use estimator::{analyze, gpu, Budget, TrainConfig};

    #[test]
    fn chart_marks_the_oom_and_tabulates_every_stage() {
        let cfg = TrainConfig {
            batch_size: 8,
            compile: false,
            gradient_accumulation_steps: 2,
            ..TrainConfig::default()
        };
        let budget = Budget::for_gpu(gpu::find("rtx3060").unwrap());
        let a = analyze(&cfg, &budget).unwrap();
        assert!(!a.verdict.fits);
        let html = chart(en(), &a, Program::NanoGpt, budget.allocator_budget());
        assert!(html.contains("class=\"chart__oom\""));
        assert!(html.contains("<polyline class=\"chart__allocated\""));
        assert!(html.contains("estimate_loss()"));
        // a y axis in GiB, and the stretches named under the chart
        assert!(html.contains(" GiB</text>"), "tick labels");
        assert!(html.contains("data-testid=\"chart-phases\""));
        assert!(html.contains("<table"));
        // it fits with a 48 GB card: no OOM point
        let big = Budget::for_gpu(gpu::find("a6000").unwrap());
        let a = analyze(&cfg, &big).unwrap();
        assert!(!chart(en(), &a, Program::NanoGpt, big.allocator_budget()).contains("chart__oom"));
    }
}
