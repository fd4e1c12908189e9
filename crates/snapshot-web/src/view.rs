//! A user's own memory snapshot explained: what the recorded run reached, its memory over the
//! run, what was live at the peak and at a failed request, the cache at the dump per segment,
//! and the same run as vramfit predicts it for the page's settings, side by side.
//!
//! Rendered in the worker, off the page's module: [`Measured::from_json`] takes what the view shows
//! out of the JSON of `vramfit_report::snapshot::to_json` (the CLI's `--json`, one contract).

use estimator::programs::{Program, ProgramAnalysis};
use estimator::Component;

use vramfit_html::chart::{grid, lines, pct_of, plot, px, y_at, WIDTH};
use vramfit_html::{el, escape};
use vramfit_i18n::{fill, format, Strings};

/// A parsed JSON value, as much of one as [`Measured::from_json`] reads.
pub trait Json: Sized {
    /// The member `k` of an object; `None` where it is missing or null.
    fn key(&self, k: &str) -> Option<Self>;
    fn num(&self) -> Option<f64>;
    fn text(&self) -> Option<String>;
    fn flag(&self) -> Option<bool>;
    fn items(&self) -> Vec<Self>;
}

impl Json for serde_json::Value {
    fn key(&self, k: &str) -> Option<Self> {
        self.get(k).filter(|v| !v.is_null()).cloned()
    }
    fn num(&self) -> Option<f64> {
        self.as_f64()
    }
    fn text(&self) -> Option<String> {
        self.as_str().map(str::to_string)
    }
    fn flag(&self) -> Option<bool> {
        self.as_bool()
    }
    fn items(&self) -> Vec<Self> {
        self.as_array().cloned().unwrap_or_default()
    }
}

/// What was live at one moment of the recorded run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Live {
    /// Bytes per component, in [`Component::ALL`] order.
    pub components: [u64; 6],
    pub before_recording: u64,
    /// The lines of the user's code that allocated the most, with bytes.
    pub sites: Vec<(String, u64)>,
}

/// The failed request of a run that ran out of memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Oom {
    pub event: u64,
    pub requested: u64,
    pub allocated: u64,
    pub reserved: u64,
    pub cached_free: u64,
    pub largest_free: u64,
}

/// One segment of the cache at the dump.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Segment {
    pub total: u64,
    pub allocated: u64,
    pub internal: u64,
    pub free: u64,
}

/// A snapshot as this view shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measured {
    pub events: u64,
    pub whole_run: bool,
    pub peak_allocated: u64,
    pub peak_reserved: u64,
    pub peak_event: u64,
    pub oom: Option<Oom>,
    pub at_peak: Live,
    pub at_oom: Option<Live>,
    /// (first event, allocated, reserved) of each stretch of the run, at most a few hundred.
    pub timeline: Vec<(u64, u64, u64)>,
    /// The most free first.
    pub segments: Vec<Segment>,
    /// The script the frames name, and the program vramfit models it as (its id).
    pub script: Option<String>,
    pub program: Option<String>,
}

fn bytes_of<J: Json>(j: &J, k: &str) -> u64 {
    j.key(k).and_then(|v| v.num()).unwrap_or(0.0) as u64
}

fn live<J: Json>(j: &J) -> Live {
    let comps = j.key("components_bytes");
    let mut components = [0u64; 6];
    for c in Component::ALL {
        components[c as usize] = comps.as_ref().map_or(0, |o| bytes_of(o, c.id()));
    }
    Live {
        components,
        before_recording: bytes_of(j, "before_recording_bytes"),
        sites: j
            .key("allocated_by")
            .map(|a| a.items())
            .unwrap_or_default()
            .iter()
            .map(|s| {
                (
                    s.key("site").and_then(|v| v.text()).unwrap_or_default(),
                    bytes_of(s, "bytes"),
                )
            })
            .collect(),
    }
}

impl Measured {
    /// The view's numbers from the worker's JSON (its `snapshot` object); `None` where it is not
    /// one.
    pub fn from_json<J: Json>(root: &J) -> Option<Measured> {
        let s = root.key("snapshot")?;
        let series = |k: &str| -> Vec<u64> {
            s.key("timeline")
                .and_then(|t| t.key(k))
                .map(|a| a.items())
                .unwrap_or_default()
                .iter()
                .map(|v| v.num().unwrap_or(0.0) as u64)
                .collect()
        };
        let (at, allocated, reserved) = (
            series("event"),
            series("allocated_bytes"),
            series("reserved_bytes"),
        );
        Some(Measured {
            events: bytes_of(&s, "events"),
            whole_run: s.key("whole_run").and_then(|v| v.flag()).unwrap_or(false),
            peak_allocated: bytes_of(&s, "peak_allocated_bytes"),
            peak_reserved: bytes_of(&s, "peak_reserved_bytes"),
            peak_event: bytes_of(&s, "peak_event"),
            oom: s.key("oom").map(|o| Oom {
                event: bytes_of(&o, "event"),
                requested: bytes_of(&o, "requested_bytes"),
                allocated: bytes_of(&o, "allocated_bytes"),
                reserved: bytes_of(&o, "reserved_bytes"),
                cached_free: bytes_of(&o, "cached_free_bytes"),
                largest_free: bytes_of(&o, "largest_free_block_bytes"),
            }),
            at_peak: s.key("live_at_peak").map(|l| live(&l)).unwrap_or_default(),
            at_oom: s.key("live_at_oom").map(|l| live(&l)),
            timeline: at
                .iter()
                .zip(&allocated)
                .zip(&reserved)
                .map(|((e, a), r)| (*e, *a, *r))
                .collect(),
            segments: s
                .key("segments_at_dump")
                .map(|a| a.items())
                .unwrap_or_default()
                .iter()
                .map(|g| Segment {
                    total: bytes_of(g, "total_bytes"),
                    allocated: bytes_of(g, "allocated_bytes"),
                    internal: bytes_of(g, "internal_bytes"),
                    free: bytes_of(g, "free_bytes"),
                })
                .collect(),
            script: s.key("script").and_then(|v| v.text()),
            program: s.key("program").and_then(|v| v.text()),
        })
    }
}

/// How many segments the cache's table lists before it sums the rest.
const SEGMENTS: usize = 8;

fn b(x: u64) -> String {
    escape(&format::bytes(x.into()))
}

/// A row of label and value cells.
fn row(cells: &[String], head: bool) -> String {
    let inner: String = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i == 0 && head {
                el("th", &[("scope", "row")], c)
            } else {
                el("td", &[], c)
            }
        })
        .collect();
    el("tr", &[], &inner)
}

/// A table that scrolls on its own on a narrow screen, not the page.
fn scroll_table(inner: &str) -> String {
    el(
        "div",
        &[("class", "snapshot__scroll")],
        &el("table", &[("class", "snapshot__table")], inner),
    )
}

fn head_row(cells: &[&str]) -> String {
    el(
        "tr",
        &[],
        &cells
            .iter()
            .map(|c| el("th", &[("scope", "col")], &escape(c)))
            .collect::<String>(),
    )
}

/// The recorded memory over the run, with its peak and its failed request marked.
fn chart(tr: &Strings, m: &Measured) -> String {
    if m.timeline.is_empty() {
        return String::new();
    }
    let env: Vec<(u128, u128)> = m
        .timeline
        .iter()
        .map(|p| (p.1.into(), p.2.into()))
        .collect();
    let most = m
        .timeline
        .iter()
        .map(|p| p.1.max(p.2))
        .chain(m.oom.as_ref().map(|o| o.reserved))
        .max()
        .unwrap_or(1)
        .max(1);
    let top = most as f64 * 1.08;
    let (mut svg, mut overlay) = grid(top);
    svg += &lines(&env, top);
    let last = m.events.max(1) as f64;
    let mut mark = |event: u64, bytes: u64, class: &str, word: &str| {
        let (x, y) = pct_of(event as f64 / last * WIDTH, y_at(top, bytes.into()));
        let right = event as f64 / last > 0.6;
        overlay += &format!(
            "<circle class=\"{class}\" cx=\"{x}%\" cy=\"{y}%\" r=\"5\"/>\
             <text class=\"chart__label\" x=\"{x}%\" y=\"{y}%\" dx=\"{}\" dy=\"-8\" text-anchor=\"{}\">{}</text>",
            if right { -8 } else { 8 },
            if right { "end" } else { "start" },
            escape(word)
        );
    };
    mark(
        m.peak_event,
        m.peak_allocated,
        "chart__peak",
        tr.snapshot_peak,
    );
    if let Some(o) = &m.oom {
        mark(o.event, o.reserved, "chart__oom", tr.chart_oom);
    }
    let legend = format!(
        "<p class=\"chart__legend\"><span class=\"chart__key chart__key--allocated\"></span>{}\
         <span class=\"chart__key chart__key--reserved\"></span>{}</p>",
        escape(tr.chart_allocated),
        escape(tr.chart_reserved),
    );
    el(
        "figure",
        &[("class", "chart"), ("data-testid", "snapshot-chart")],
        &(el(
            "h3",
            &[("class", "chart__title"), ("id", "snapshot-chart-title")],
            &escape(tr.snapshot_chart_title),
        ) + &plot(&svg, &overlay, "snapshot-chart-title")
            + &legend),
    )
}

/// What was live at a moment: a bar of the six components and the lines that allocated most.
fn live_view(tr: &Strings, title: &str, l: &Live, testid: &str) -> String {
    let total: u64 = l.components.iter().sum::<u64>().max(1);
    let mut bar = String::new();
    let mut legend = String::new();
    let mut x = 0.0;
    for c in Component::ALL {
        let mut bytes = l.components[c as usize];
        if c == Component::Other {
            bytes -= bytes.min(l.before_recording);
        }
        if bytes == 0 {
            continue;
        }
        // SVG attributes, not inline styles: the page's CSP allows no style attribute
        let width = bytes as f64 / total as f64 * 1000.0;
        bar += &format!(
            "<rect class=\"snapshot__seg--{}\" x=\"{}\" y=\"0\" width=\"{}\" height=\"20\"/>",
            c.id(),
            // SVG numbers, never the language's decimal comma
            px(x),
            px(width)
        );
        x += width;
        legend += &el(
            "li",
            &[
                ("data-component", c.id()),
                ("data-bytes", &bytes.to_string()),
            ],
            &format!(
                "<span class=\"snapshot__swatch snapshot__seg--{}\"></span>{} {}",
                c.id(),
                escape(tr.component(c)),
                b(bytes)
            ),
        );
    }
    if l.before_recording > 0 {
        legend += &el(
            "li",
            &[],
            &format!("{} {}", b(l.before_recording), escape(tr.snapshot_before)),
        );
    }
    let sites: String = l
        .sites
        .iter()
        .map(|(site, bytes)| {
            el(
                "li",
                &[],
                &(el("code", &[], &escape(site)) + " " + &b(*bytes)),
            )
        })
        .collect();
    el(
        "div",
        &[("class", "snapshot__live"), ("data-testid", testid)],
        &(el("h3", &[], &escape(title))
            + &format!(
                "<svg class=\"snapshot__bar\" viewBox=\"0 0 1000 20\" preserveAspectRatio=\"none\" aria-hidden=\"true\">{bar}</svg>"
            )
            + &el("ul", &[("class", "snapshot__legend")], &legend)
            + &el("p", &[("class", "snapshot__by")], &escape(tr.snapshot_allocated_by))
            + &el("ol", &[("class", "snapshot__sites")], &sites)),
    )
}

/// The cache at the dump, segment by segment (the most free first).
fn cache(tr: &Strings, m: &Measured) -> String {
    if m.segments.is_empty() {
        return String::new();
    }
    let mut rows = String::new();
    for (i, s) in m.segments.iter().take(SEGMENTS).enumerate() {
        rows += &row(
            &[
                (i + 1).to_string(),
                b(s.total),
                b(s.allocated),
                b(s.internal),
                b(s.free),
            ],
            true,
        );
    }
    if m.segments.len() > SEGMENTS {
        let rest = &m.segments[SEGMENTS..];
        let more = fill(
            tr.snapshot_cache_more,
            &[
                ("n", &rest.len().to_string()),
                (
                    "bytes",
                    &format::bytes(rest.iter().map(|s| u128::from(s.total)).sum()),
                ),
            ],
        );
        rows += &el("tr", &[], &el("td", &[("colspan", "5")], &escape(&more)));
    }
    let title = fill(
        tr.snapshot_cache_title,
        &[("segments", &m.segments.len().to_string())],
    );
    el(
        "div",
        &[
            ("class", "snapshot__cache"),
            ("data-testid", "snapshot-cache"),
        ],
        &(el("h3", &[], &escape(&title))
            + &scroll_table(
                &(el(
                    "thead",
                    &[],
                    &head_row(&[
                        tr.snapshot_col_segment,
                        tr.snapshot_col_total,
                        tr.snapshot_col_allocated,
                        tr.snapshot_col_internal,
                        tr.snapshot_col_free,
                    ]),
                ) + &el("tbody", &[], &rows)),
            )),
    )
}

/// A signed difference, predicted − measured, with its share of the measured.
fn difference(predicted: u64, measured: u64) -> String {
    let d = i128::from(predicted) - i128::from(measured);
    let sign = if d > 0 {
        "+"
    } else if d < 0 {
        "−"
    } else {
        ""
    };
    let pct = if measured > 0 {
        format!(
            " ({sign}{} %)",
            format::decimal(d.unsigned_abs() as f64 / measured as f64 * 100.0, 1)
        )
    } else {
        String::new()
    };
    format!("{sign}{}{pct}", format::bytes(d.unsigned_abs()))
}

/// The recorded run beside vramfit's prediction for the page's settings (`a`, of `program`).
fn comparison(tr: &Strings, m: &Measured, a: &ProgramAnalysis, program: Program) -> String {
    let recognised = m.program.as_deref().and_then(Program::parse);
    let script = m.script.clone().unwrap_or_default();
    let lead = match recognised {
        Some(p) if p != program => {
            return el(
                "p",
                &[
                    ("class", "snapshot__note"),
                    ("data-testid", "snapshot-compare"),
                ],
                &escape(&fill(
                    tr.snapshot_other_program,
                    &[("script", &script), ("program", p.name())],
                )),
            )
        }
        Some(_) => fill(tr.snapshot_same_program, &[("script", &script)]),
        None => tr.snapshot_unknown_script.to_string(),
    };
    let predicted_components = a.components();
    let mut rows = row(
        &[
            escape(tr.snapshot_peak_allocated),
            b(m.peak_allocated),
            b(a.peak_bytes() as u64),
            escape(&difference(a.peak_bytes() as u64, m.peak_allocated)),
        ],
        true,
    );
    rows += &row(
        &[
            escape(tr.snapshot_peak_reserved),
            b(m.peak_reserved),
            b(a.verdict.need_bytes as u64),
            escape(&difference(a.verdict.need_bytes as u64, m.peak_reserved)),
        ],
        true,
    );
    let mut largest: Option<(Component, u64, u64)> = None;
    for c in Component::ALL {
        let (p, mm) = (
            predicted_components.get(c) as u64,
            m.at_peak.components[c as usize],
        );
        if p == 0 && mm == 0 {
            continue;
        }
        rows += &row(
            &[
                escape(tr.component(c)),
                b(mm),
                b(p),
                escape(&difference(p, mm)),
            ],
            true,
        );
        if largest.is_none_or(|(_, lp, lm)| p.abs_diff(mm) > lp.abs_diff(lm)) {
            largest = Some((c, p, mm));
        }
    }
    let largest = largest
        .filter(|(_, p, mm)| p != mm)
        .map(|(c, p, mm)| {
            el(
                "p",
                &[("data-testid", "snapshot-largest")],
                &escape(&fill(
                    tr.snapshot_largest_difference,
                    &[
                        ("component", tr.component(c)),
                        ("difference", &difference(p, mm)),
                    ],
                )),
            )
        })
        .unwrap_or_default();
    el(
        "div",
        &[
            ("class", "snapshot__compare"),
            ("data-testid", "snapshot-compare"),
        ],
        &(el("h3", &[], &escape(tr.snapshot_compare_title))
            + &el("p", &[("class", "snapshot__note")], &escape(&lead))
            + &scroll_table(
                &(el(
                    "thead",
                    &[],
                    &head_row(&[
                        "",
                        tr.snapshot_col_measured,
                        tr.snapshot_col_predicted,
                        tr.snapshot_col_difference,
                    ]),
                ) + &el("tbody", &[], &rows)),
            )
            + &largest),
    )
}

/// The whole explanation of snapshot `file`; `page`: the page's analysis and its program, where
/// its settings give one.
pub fn view(
    tr: &Strings,
    file: &str,
    m: &Measured,
    page: Option<(&ProgramAnalysis, Program)>,
) -> String {
    let events = format::grouped(m.events);
    let recorded = fill(
        if m.whole_run {
            tr.snapshot_whole
        } else {
            tr.snapshot_cut
        },
        &[("file", file), ("events", &events)],
    );
    let mut facts = el("p", &[("class", "snapshot__recorded")], &escape(&recorded));
    facts += &el(
        "dl",
        &[("class", "snapshot__peaks")],
        &(el("dt", &[], &escape(tr.snapshot_peak_allocated))
            + &el(
                "dd",
                &[
                    ("data-testid", "snapshot-peak"),
                    ("data-bytes", &m.peak_allocated.to_string()),
                ],
                &b(m.peak_allocated),
            )
            + &el("dt", &[], &escape(tr.snapshot_peak_reserved))
            + &el(
                "dd",
                &[
                    ("data-testid", "snapshot-reserved"),
                    ("data-bytes", &m.peak_reserved.to_string()),
                ],
                &b(m.peak_reserved),
            )),
    );
    if let Some(o) = &m.oom {
        facts += &el(
            "p",
            &[("class", "snapshot__oom"), ("data-testid", "snapshot-oom")],
            &escape(&fill(
                tr.snapshot_oom,
                &[
                    ("requested", &format::bytes(o.requested.into())),
                    ("allocated", &format::bytes(o.allocated.into())),
                    ("reserved", &format::bytes(o.reserved.into())),
                    ("free", &format::bytes(o.cached_free.into())),
                    ("largest", &format::bytes(o.largest_free.into())),
                ],
            )),
        );
    }
    let mut out = facts + &chart(tr, m);
    out += &live_view(tr, tr.snapshot_live_peak, &m.at_peak, "snapshot-live-peak");
    if let Some(l) = &m.at_oom {
        out += &live_view(tr, tr.snapshot_live_oom, l, "snapshot-live-oom");
    }
    out += &cache(tr, m);
    if let Some((a, program)) = page {
        out += &comparison(tr, m, a, program);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use estimator::programs::analyze_page;
    use estimator::query::PageState;
    use vramfit_i18n::en;

    /// A fixture of data/snapshots as the page's worker hands it over.
    fn measured(name: &str) -> Measured {
        let path = format!(
            "{}/../../data/snapshots/{name}.pickle.gz",
            env!("CARGO_MANIFEST_DIR")
        );
        let snap = vramfit_snapshot::read(&std::fs::read(path).unwrap()).unwrap();
        let h = vramfit_snapshot::follow(&snap);
        Measured::from_json(&vramfit_report::snapshot::to_json(&snap, &h)).unwrap()
    }

    #[test]
    fn a_capped_runs_snapshot_shows_its_peak_its_oom_and_its_cache() {
        let m = measured("snap_nanogpt_b12_cap6");
        // the run's own numbers (crates/snapshot/tests), carried through the JSON unchanged
        assert_eq!(m.oom.as_ref().unwrap().requested, 2_472_542_208);
        assert_eq!(m.program.as_deref(), Some("nanogpt"));
        assert!(m.timeline.len() <= vramfit_report::snapshot::POINTS);
        assert_eq!(
            m.timeline.iter().map(|p| p.1).max(),
            Some(m.peak_allocated),
            "the chart keeps the peak"
        );
        let html = view(en(), "snap.pickle.gz", &m, None);
        for part in [
            "snapshot-peak",
            "snapshot-oom",
            "snapshot-chart",
            "snapshot-live-peak",
            "snapshot-live-oom",
            "snapshot-cache",
            "Tried to allocate 2.30 GiB",
            "model.py:187 in forward",
        ] {
            assert!(
                html.to_lowercase().contains(&part.to_lowercase()),
                "{part} missing"
            );
        }
        assert!(html.contains(&format::bytes(m.peak_allocated.into())));
        // no comparison without the page's answer
        assert!(!html.contains("snapshot-compare"));
    }

    #[test]
    fn beside_the_prediction_the_largest_difference_is_named() {
        let m = measured("snap_nanogpt_char");
        let page = PageState::default();
        let a = analyze_page(&page, &page.budget()).unwrap();
        let html = view(en(), "char.pickle.gz", &m, Some((&a, a.program())));
        assert!(html.contains("snapshot-compare"));
        assert!(html.contains("snapshot-largest"), "{html}");
        assert!(html.contains(&format::bytes(a.peak_bytes())));
        // a run of another script: said, not compared
        let m = measured("snap_bng_l4");
        let html = view(en(), "bng.pickle.gz", &m, Some((&a, a.program())));
        assert!(html.contains("train_gpt2.py"));
        assert!(html.contains(
            estimator::programs::Program::parse("build-nanogpt")
                .unwrap()
                .name()
        ));
        assert!(!html.contains("snapshot-largest"));
    }

    #[test]
    fn svg_numbers_keep_their_point_in_a_language_with_a_decimal_comma() {
        let de = vramfit_i18n::Lang::De.bundled();
        vramfit_i18n::format::use_separators(&de.bar_words());
        let html = view(de, "x", &measured("snap_nanogpt_char"), None);
        vramfit_i18n::format::use_separators(&en().bar_words());
        let values = |attr: &str| -> Vec<String> {
            html.split(attr)
                .skip(1)
                .map(|part| part[..part.find('"').unwrap()].to_string())
                .collect()
        };
        for attr in [" x=\"", " width=\"", " cx=\"", " cy=\""] {
            for v in values(attr) {
                assert!(!v.contains(','), "{attr}{v}");
            }
        }
        // a polyline's points are x,y pairs: one comma each
        for v in values(" points=\"") {
            assert!(v.split(' ').all(|p| p.matches(',').count() == 1), "{v}");
        }
    }

    #[test]
    fn what_is_not_a_snapshots_json_gives_no_view() {
        assert!(Measured::from_json(&serde_json::json!({"peak_bytes": 1})).is_none());
        // a reading with its optional parts missing still renders
        let m = Measured::from_json(&serde_json::json!({"snapshot": {"events": 0}})).unwrap();
        assert!(!view(en(), "x", &m, None).is_empty());
    }
}
