//! What the CLI prints as text, in the language chosen (`--lang`, else the locale). Its JSON is
//! crates/report's contract and stays English whatever the language.
//!
//! Columns are padded by display width (unicode-width), not by `char`s: a CJK character takes
//! two terminal cells, so `{:<58}` would misalign every Chinese or Japanese row.

use unicode_width::UnicodeWidthStr;

use estimator::engine::run::Run;
use estimator::programs::fix_view::{Fact, FixView};
use estimator::programs::report::{Label, Line};
use estimator::programs::seam::Paste;
use estimator::programs::{Program, ProgramConfig};
use estimator::{Budget, Component, Phase, Risk, Verdict};

use vramfit_i18n::fix_text::{fix_words, report_line};
use vramfit_i18n::format::{bytes, decimal, gib, gib_abs};
use vramfit_i18n::{diagnosis_sentence, fill, place, CliLang};
use vramfit_report::Asked;

const BAR_WIDTH: usize = 60;

/// Colour on a terminal that wants it: stdout is a terminal, `NO_COLOR` is unset and the
/// terminal is not `dumb` (https://no-color.org).
fn colour_wanted() -> bool {
    use std::io::IsTerminal;
    std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// The bar's cells as text: each component's glyph on its colour (the page's palette, in the
/// 256-colour set) when `colour`, else the plain glyphs.
pub fn bar_cells(cells: &[char], colour: bool) -> String {
    if !colour {
        return cells.iter().collect();
    }
    let code = |ch: char| match ch {
        'P' => Some(25),  // parameters: blue
        'O' => Some(97),  // optimizer state: purple
        'G' => Some(130), // gradients: orange
        'A' => Some(28),  // activations: green
        'L' => Some(124), // logits & loss: red
        '+' => Some(243), // other: grey
        _ => None,
    };
    cells
        .iter()
        .map(|&ch| match code(ch) {
            Some(n) => format!("\x1b[48;5;{n}m\x1b[97m{ch}\x1b[0m"),
            None => ch.to_string(),
        })
        .collect()
}

pub fn glyph(c: Component) -> char {
    match c {
        Component::Params => 'P',
        Component::Optimizer => 'O',
        Component::Gradients => 'G',
        Component::Activations => 'A',
        Component::Logits => 'L',
        Component::Other => '+',
    }
}

/// `s` followed by spaces up to `width` terminal cells.
pub fn pad(s: &str, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(s.width())))
}

/// `s` after spaces up to `width` terminal cells.
pub fn pad_left(s: &str, width: usize) -> String {
    format!("{}{s}", " ".repeat(width.saturating_sub(s.width())))
}

/// Lines of text, each ending in a line break.
#[derive(Default)]
pub struct Text(String);

impl Text {
    pub fn line(&mut self, s: impl AsRef<str>) {
        self.0.push_str(s.as_ref());
        self.0.push('\n');
    }

    pub fn blank(&mut self) {
        self.0.push('\n');
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// The head of a report: each row's label (model, batch, settings, ddp), padded to one width,
/// then its text.
pub fn head(out: &mut Text, rows: &[(&str, String)]) {
    let width = rows.iter().map(|(l, _)| l.width()).max().unwrap_or(0) + 2;
    for (label, text) in rows {
        out.line(format!("{}{text}", pad(label, width.max(10))));
    }
}

/// The phases a program runs with their peaks, and the most the allocator reserved.
struct Peaks {
    pub phases: Vec<(Phase, u128)>,
    pub reserved: u128,
}

/// The peak, the bar, the legend, the phases, the verdict and where the card runs out: what every
/// program's report shows of its replayed run.
fn run_text(
    out: &mut Text,
    tr: &CliLang,
    an: &Run,
    budget: &Budget,
    v: &Verdict,
    program: Program,
    peaks: &Peaks,
) {
    let g = &budget.gpu;
    let (peak_phase, peak_stage, peak_micro) = an.peak_at();
    out.line(fill(
        tr.cli.peak,
        &[
            ("bytes", &bytes(an.peak_bytes())),
            (
                "place",
                &place(tr, program, peak_phase, peak_stage, peak_micro),
            ),
        ],
    ));
    let comps = an.components();
    // one stacked bar against the card's total memory, '|' at what the allocator may use
    let scale = g.total_bytes.max(an.peak_bytes()).max(1) as f64;
    let mut cells: Vec<char> = Vec::new();
    for c in Component::ALL {
        let n = (comps.get(c) as f64 / scale * BAR_WIDTH as f64).round() as usize;
        cells.extend(std::iter::repeat_n(glyph(c), n));
    }
    let mark = ((v.budget_bytes as f64 / scale) * BAR_WIDTH as f64).round() as usize;
    cells.resize(BAR_WIDTH.max(cells.len()), '·');
    if mark < cells.len() {
        cells[mark] = '|';
    }
    let colour = colour_wanted();
    out.line(format!("  [{}]", bar_cells(&cells, colour)));
    let name_width = Component::ALL
        .iter()
        .map(|&c| tr.component(c).width())
        .max()
        .unwrap_or(0);
    for c in Component::ALL {
        out.line(format!(
            "  {} {}  {}",
            bar_cells(&[glyph(c)], colour),
            pad(tr.component(c), name_width),
            pad_left(&bytes(comps.get(c)), 10)
        ));
    }
    let mut items: Vec<String> = peaks
        .phases
        .iter()
        .map(|&(p, b)| format!("{} {}", tr.phase_for(program, p), bytes(b)))
        .collect();
    // On a card the run fills, the allocator releases its cache and retries before it fails, so it
    // reserves less there than with room (the verdict's need): both are said, or the phases' reserve
    // reads as more than a card the verdict calls big enough.
    if v.need_bytes < peaks.reserved {
        items.push(format!(
            "{} {} ({})",
            tr.cli.reserved,
            bytes(peaks.reserved),
            fill(tr.cli.reserved_here, &[("here", &bytes(v.need_bytes))])
        ));
    } else {
        items.push(format!("{} {}", tr.cli.reserved, bytes(peaks.reserved)));
    }
    out.line(format!(
        "  {}",
        fill(tr.cli.phases, &[("list", &items.join(" · "))])
    ));
    out.blank();
    let word = match v.risk {
        Risk::Fits => tr.verdict_fits,
        Risk::Tight => tr.verdict_tight,
        Risk::Oom => tr.verdict_oom,
    };
    let margin = gib_abs(v.headroom_bytes);
    let margin = if v.headroom_bytes >= 0 {
        fill(tr.headroom, &[("gib", &margin)])
    } else {
        fill(tr.shortfall, &[("gib", &margin)])
    };
    // the plain sentence first; what the need is made of (the allocator's share) under it
    out.line(fill(
        tr.cli.verdict,
        &[
            ("word", &word.to_uppercase()),
            ("card", g.name),
            ("need", &gib(v.need_bytes)),
            ("usable", &gib(v.budget_bytes)),
            ("margin", &margin),
        ],
    ));
    out.line(format!(
        "  {}",
        fill(
            tr.cli.verdict_parts,
            &[
                ("need", &gib(v.need_bytes)),
                ("peak", &gib(an.peak_bytes())),
                ("frag", &gib(v.reserve_beyond(an.peak_bytes()))),
                ("total", &gib(g.total_bytes)),
                ("context", &gib(budget.context_bytes)),
                ("other", &gib(budget.other_bytes)),
            ],
        )
    ));
    if let Some(o) = an.oom() {
        out.line(format!(
            "  {}",
            fill(
                tr.oom_explained,
                &[
                    ("where", &place(tr, program, o.phase, o.stage, o.micro_step)),
                    ("requested", &bytes(o.requested)),
                    ("tensor", tr.term(o.term)),
                    ("allocated", &bytes(o.allocated)),
                    ("fragmented", &bytes(o.reserved - o.allocated)),
                    ("largest", &bytes(o.largest_free)),
                ],
            )
        ));
    }
}

/// One row of a fix table: the cells, and the lines under it (why, the command or the edits).
pub struct FixRow {
    pub cells: Vec<String>,
    pub below: Vec<String>,
}

/// A ranked fix table: a header, then each row's cells padded to its column's width (text
/// columns left, numbers right, by `right`), the lines under each row indented.
pub fn fix_table(out: &mut Text, header: &[&str], right: &[bool], rows: &[FixRow]) {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.cells[i].width())
                .chain([header[i].width()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .zip(right)
            .map(|((c, &w), &r)| if r { pad_left(c, w) } else { pad(c, w) })
            .collect();
        format!("  {}", padded.join("  ").trim_end())
    };
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    out.line(line(&header));
    for r in rows {
        out.line(line(&r.cells));
        for b in &r.below {
            out.line(format!("      {b}"));
        }
    }
}

/// Notes under a report (English: the JSON's `warnings`).
pub fn notes(out: &mut Text, tr: &CliLang, notes: &[&str]) {
    for n in notes {
        out.line(fill(tr.cli.note, &[("text", n)]));
    }
}

/// What a fix row shows under its why: its command line where it has one, else the environment
/// or the config lines to set; a change to the script's code is the why's to name, not the
/// table's (the page shows it whole).
fn row_pastes(pastes: &[(Paste, String)]) -> impl Iterator<Item = &str> {
    let rank = |k: Paste| match k {
        Paste::Command => Some(0),
        Paste::Env => Some(1),
        Paste::Config | Paste::ConfigOverrides => Some(2),
        Paste::Patch => None,
    };
    let best = pastes.iter().filter_map(|(k, _)| rank(*k)).min();
    pastes
        .iter()
        .filter(move |(k, _)| best.is_some() && rank(*k) == best)
        .flat_map(|(_, t)| t.lines())
}

/// A program's ranked fixes: number, change, new peak, saving, whether it fits, the batch and the
/// time where the program says them, what it changes in training; under each, its why and what
/// to paste.
pub fn ranked_fix_table(out: &mut Text, tr: &CliLang, program: Program, fixes: &[FixView]) {
    let batch = |f: &FixView| {
        f.facts.iter().find_map(|x| match x {
            Fact::Batch(_, after) => Some(after.to_string()),
            _ => None,
        })
    };
    let time = |f: &FixView| {
        f.facts.iter().find_map(|x| match x {
            Fact::TimeRatio(r) => Some(format!("{}×", decimal(*r, 2))),
            _ => None,
        })
    };
    let (with_batch, with_time) = (
        fixes.iter().any(|f| batch(f).is_some()),
        fixes.iter().any(|f| time(f).is_some()),
    );
    let rows: Vec<FixRow> = fixes
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (title, why) = fix_words(tr, program, &f.words);
            let mut cells = vec![
                (i + 1).to_string(),
                title,
                bytes(f.peak_bytes),
                vramfit_i18n::fix_text::saving(tr, f.saving_bytes),
                if f.fits { tr.yes } else { tr.no }.to_string(),
            ];
            if with_batch {
                cells.push(batch(f).unwrap_or_default());
            }
            if with_time {
                cells.push(time(f).unwrap_or_default());
            }
            cells.push(tr.impact(f.impact).to_string());
            FixRow {
                cells,
                below: std::iter::once(why)
                    .chain(row_pastes(&f.pastes).map(String::from))
                    .collect(),
            }
        })
        .collect();
    let mut header = vec![
        "#",
        tr.cli.col_change,
        tr.col_peak,
        tr.col_saving,
        tr.col_fits,
    ];
    let mut right = vec![true, false, true, true, false];
    if with_batch {
        header.push(tr.col_batch);
        right.push(true);
    }
    if with_time {
        header.push(tr.col_time);
        right.push(true);
    }
    header.push(tr.col_impact);
    right.push(false);
    fix_table(out, &header, &right, &rows);
}

/// The label of a row of the report's head.
fn label(tr: &CliLang, label: Label) -> &'static str {
    match label {
        Label::Model => tr.cli.row_model,
        Label::Batch => tr.cli.row_batch,
        Label::Settings => tr.cli.row_settings,
        Label::Ddp => tr.cli.row_ddp,
        Label::More => "",
    }
}

/// The text report of any program's run: its head, the run and its verdict, a pasted message,
/// the fixes and what the numbers assume.
pub fn to_text(tr: &CliLang, ask: &Asked, config: &ProgramConfig) -> String {
    let a = ask.analysis;
    let program = a.program();
    let report = a.report(ask.fixes, ask.budget, ask.mfu);
    let words = |line: &Line| report_line(tr.cli.report_word(program, line.words), &line.values);
    let mut out = Text::default();
    let rows: Vec<(&str, String)> = report
        .head
        .iter()
        .map(|(l, line)| (label(tr, *l), words(line)))
        .collect();
    head(&mut out, &rows);
    out.blank();
    let peaks = Peaks {
        phases: Phase::ALL
            .into_iter()
            .filter_map(|p| Some((p, a.phase_bytes(p)?)))
            .collect(),
        reserved: a.free_run.peak_reserved,
    };
    // the card as the verdict counted it (one rank's under torchrun: NCCL's memory is out)
    let budget = a.card(ask.budget);
    run_text(&mut out, tr, a, budget, &a.verdict, program, &peaks);
    for line in &report.lines {
        out.blank();
        out.line(words(line));
    }
    if let Some((m, d)) = &ask.message {
        out.blank();
        out.line(match (m.recognised, d) {
            (false, _) => tr.cli.not_oom_message.to_string(),
            (true, Some(d)) => diagnosis_sentence(tr, program, m, d),
            (true, None) => fill(
                tr.cli.no_match,
                &[("requested", &bytes(m.tried_to_allocate_bytes.unwrap_or(0)))],
            ),
        });
    }
    if let Some(view) = ask
        .fixes
        .and_then(|f| config.fixes_view(f, budget.other_bytes))
    {
        out.blank();
        out.line(vramfit_i18n::fix_text::largest_line(tr, program, &view));
        for line in &report.fix_lines {
            out.line(words(line));
        }
        out.line(match view.seconds_now {
            Some(s) => fill(
                tr.cli.heading_time,
                &[
                    ("text", tr.fixes_heading),
                    ("time", &fill(tr.time_now, &[("s", &decimal(s, 1))])),
                ],
            ),
            None => fill(tr.cli.heading, &[("text", tr.fixes_heading)]),
        });
        ranked_fix_table(&mut out, tr, program, &view.fixes);
    }
    let notes: Vec<&str> = a
        .notes()
        .iter()
        .map(|n| tr.cli.report_word(program, &format!("notes.{n}")))
        .collect();
    self::notes(&mut out, tr, &notes);
    out.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_is_coloured_only_when_asked() {
        let cells = ['P', 'A', '·', '|'];
        assert_eq!(bar_cells(&cells, false), "PA·|");
        let c = bar_cells(&cells, true);
        assert!(c.starts_with("\x1b[48;5;25m"), "{c:?}");
        assert!(c.ends_with("·|"), "{c:?}");
    }

    #[test]
    fn columns_are_padded_by_terminal_cells() {
        // two cells per CJK character
        assert_eq!(pad("勾配", 6), "勾配  ");
        assert_eq!(pad_left("1.0 GiB", 9), "  1.0 GiB");
        let saving = |b| vramfit_i18n::fix_text::saving(vramfit_i18n::en(), b);
        assert_eq!(saving(-(1 << 30)), "costs 1.00 GiB");
        assert_eq!(saving(3 << 29), "1.50 GiB");
        assert_eq!(saving(-(1 << 20)), "0.00 GiB");
    }

    /// Every program's report, in every language, on one GPU and on several, fitting and not:
    /// each of its words is there and every `{name}` in them is filled.
    #[test]
    fn every_programs_report_fills_its_words_in_every_language() {
        use estimator::programs::Program;
        use vramfit_i18n::Lang;
        let settings: &[(Program, &[&str])] = &[
            (Program::NanoGpt, &["--batch_size=4"]),
            (Program::NanoGpt, &["--world_size=2"]),
            (Program::Nanochat, &["--depth=4", "--core-metric-every=10"]),
            (Program::Nanochat, &["--depth=4", "--nproc_per_node=2"]),
            (
                Program::NanochatSft,
                &["--depth=4", "--device-batch-size=2"],
            ),
            (
                Program::BuildNanoGpt,
                &["--B=4", "--T=256", "--use_compile=False"],
            ),
            (
                Program::BuildNanoGpt,
                &["--B=4", "--T=256", "--nproc_per_node=2"],
            ),
        ];
        for card in ["rtx3060", "t4"] {
            let budget = Budget::for_gpu(estimator::gpu::find(card).unwrap());
            for (program, flags) in settings {
                let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
                let config = program.config_from_flags(&flags).unwrap();
                let analysis = config.analyze(&budget).unwrap();
                let fixes = config.rank_fixes(&budget, 0.35);
                let ask = Asked {
                    config: &config,
                    analysis: &analysis,
                    fixes: fixes.as_ref(),
                    budget: &budget,
                    message: None,
                    skipped: &[],
                    mfu: 0.35,
                };
                let report = analysis.report(fixes.as_ref(), &budget, 0.35);
                for lang in Lang::ALL {
                    let tr = lang.cli();
                    let text = to_text(&tr, &ask, &config);
                    let label = format!("{} {flags:?} on {card} in {}", program.id(), lang.tag());
                    assert!(
                        !text.contains('{'),
                        "{label}: a placeholder is left:\n{text}"
                    );
                    let lines = report.head.iter().map(|(_, l)| l).chain(&report.lines);
                    for line in lines.chain(&report.fix_lines) {
                        let words = tr.cli.report_word(*program, line.words);
                        assert!(!words.is_empty(), "{label}: no words {}", line.words);
                    }
                    for n in analysis.notes() {
                        let words = tr.cli.report_word(*program, &format!("notes.{n}"));
                        assert!(
                            !words.is_empty() && text.contains(words),
                            "{label}: note {n}"
                        );
                    }
                }
            }
        }
    }
}
