//! What the CLI prints as text, in the language chosen (`--lang`, else the locale). Its JSON is
//! crates/report's contract and stays English whatever the language.
//!
//! Columns are padded by display width (unicode-width), not by `char`s: a CJK character takes
//! two terminal cells, so `{:<58}` would misalign every Chinese or Japanese row.

use unicode_width::UnicodeWidthStr;

use estimator::engine::run::Run;
use estimator::programs::fix_view::FixView;
use estimator::programs::Program;
use estimator::{Budget, Component, Phase, Risk, Verdict};

use vramfit_i18n::fix_text::fix_words;
use vramfit_i18n::format::{bytes, decimal, gib, gib_abs, params};
use vramfit_i18n::{diagnosis_sentence, fill, place, CliLang};
use vramfit_report::nanogpt::Answer;

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
pub struct Peaks {
    pub phases: Vec<(Phase, u128)>,
    pub reserved: u128,
}

/// The peak, the bar, the legend, the phases, the verdict and where the card runs out: what every
/// program's report shows of its replayed run.
pub fn run_text(
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
    items.push(format!("{} {}", tr.cli.reserved, bytes(peaks.reserved)));
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

/// nanochat's and build-nanogpt's ranked fixes: number, change, new peak, saving, whether it
/// fits, what it changes in training; under each, `text`'s lines after its title (why, and the
/// command or the edits).
pub fn ranked_fix_table(out: &mut Text, tr: &CliLang, program: Program, fixes: &[FixView]) {
    let rows: Vec<FixRow> = fixes
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (title, why) = fix_words(tr, program, &f.words);
            // the why, then what to paste, line by line
            let below = std::iter::once(why)
                .chain(
                    f.pastes
                        .iter()
                        .flat_map(|(_, t)| t.lines().map(String::from)),
                )
                .collect();
            FixRow {
                cells: vec![
                    (i + 1).to_string(),
                    title,
                    bytes(f.peak_bytes),
                    vramfit_i18n::fix_text::saving(tr, f.saving_bytes),
                    if f.fits { tr.yes } else { tr.no }.to_string(),
                    tr.impact(f.impact).to_string(),
                ],
                below,
            }
        })
        .collect();
    fix_table(
        out,
        &[
            "#",
            tr.cli.col_change,
            tr.col_peak,
            tr.col_saving,
            tr.col_fits,
            tr.col_impact,
        ],
        &[true, false, true, true, false, false],
        &rows,
    );
}

/// The notes a program adds under its report (English: the JSON's `warnings`).
pub fn notes(out: &mut Text, tr: &CliLang, warnings: &[&str]) {
    for w in warnings {
        out.line(fill(tr.cli.note, &[("text", w)]));
    }
}

pub fn to_text(tr: &CliLang, a: &Answer) -> String {
    let est = a.est;
    let cfg = &est.config;
    let mut out = Text::default();
    let yes_no = |b: bool| if b { "True" } else { "False" };
    let mut rows = vec![
        (
            tr.cli.row_model,
            fill(
                tr.cli.model_nanogpt,
                &[
                    ("layers", &cfg.n_layer.to_string()),
                    ("heads", &cfg.n_head.to_string()),
                    ("embd", &cfg.n_embd.to_string()),
                    ("vocab", &cfg.vocab_size.to_string()),
                    (
                        "params",
                        &fill(tr.params_count, &[("n", &params(est.params.reported))]),
                    ),
                    ("total", &params(est.params.total)),
                ],
            ),
        ),
        (
            tr.cli.row_batch,
            fill(
                tr.cli.batch_nanogpt,
                &[
                    ("batch", &cfg.batch_size.to_string()),
                    ("accum", &cfg.gradient_accumulation_steps.to_string()),
                    ("seqs", &cfg.effective_batch().to_string()),
                    ("tokens", &cfg.tokens_per_iter().to_string()),
                ],
            ),
        ),
    ];
    if let Some(r) = a.analysis.ranks() {
        let t = a.time();
        let world = r.world_size.to_string();
        let per_rank = fill(
            tr.ddp_accum_per_rank,
            &[
                ("accum", &r.accum_per_rank.to_string()),
                ("total", &cfg.gradient_accumulation_steps.to_string()),
                ("world", &world),
            ],
        );
        let time = fill(
            tr.ddp_time,
            &[
                ("s", &decimal(t.seconds, 2)),
                ("world", &world),
                ("speedup", &decimal(t.speedup(), 2)),
                ("bytes", &bytes(t.allreduce_bytes)),
                ("comm", &decimal(t.allreduce_seconds, 2)),
                ("exposed", &decimal(t.exposed_seconds, 2)),
            ],
        );
        rows.push((tr.cli.row_ddp, format!("{per_rank}; {time}")));
        rows.push((
            "",
            fill(
                tr.cli.ddp_ranks,
                &[
                    ("rank0", &bytes(r.rank0_peak)),
                    ("others", &bytes(r.other_ranks_peak)),
                    ("buckets", &bytes(r.bucket_bytes)),
                    ("without", &bytes(r.steady_without_rebuild)),
                ],
            ),
        ));
    }
    rows.push((
        tr.cli.row_settings,
        fill(
            tr.cli.settings_nanogpt,
            &[
                ("block", &cfg.block_size.to_string()),
                ("dtype", cfg.dtype.as_str()),
                ("compile", yes_no(cfg.compile)),
                ("attention", cfg.attention.as_str()),
                ("dropout", &cfg.dropout.to_string()),
                ("bias", yes_no(cfg.bias)),
                ("allocator", cfg.allocator.as_str()),
            ],
        ),
    ));
    head(&mut out, &rows);
    out.blank();
    let peaks = Peaks {
        phases: [Phase::TrainFirstIter, Phase::TrainSteady, Phase::Eval]
            .into_iter()
            .map(|p| (p, a.analysis.phase_bytes(p).unwrap_or(0)))
            .collect(),
        reserved: a.analysis.free_run.peak_reserved,
    };
    run_text(
        &mut out,
        tr,
        a.analysis,
        a.budget,
        &a.verdict,
        Program::NanoGpt,
        &peaks,
    );
    if let Some((m, d)) = &a.message {
        out.blank();
        out.line(match (m.recognised, d) {
            (false, _) => tr.cli.not_oom_message.to_string(),
            (true, Some(d)) => diagnosis_sentence(tr, m, d),
            (true, None) => fill(
                tr.cli.no_match,
                &[("requested", &bytes(m.tried_to_allocate_bytes.unwrap_or(0)))],
            ),
        });
    }
    if let Some(r) = &a.fixes {
        out.blank();
        let view = estimator::fixes::view(r, cfg, a.budget.other_bytes);
        out.line(vramfit_i18n::fix_text::largest_line(
            tr,
            Program::NanoGpt,
            &view,
        ));
        out.line(fill(
            tr.cli.heading_time,
            &[
                ("text", tr.fixes_heading),
                (
                    "time",
                    &fill(tr.time_now, &[("s", &decimal(r.current_seconds, 1))]),
                ),
            ],
        ));
        let rows: Vec<FixRow> = r
            .fixes
            .iter()
            .zip(&view.fixes)
            .enumerate()
            .map(|(i, (f, words))| {
                let (title, why) = fix_words(tr, Program::NanoGpt, &words.words);
                FixRow {
                    cells: vec![
                        (i + 1).to_string(),
                        title,
                        bytes(f.peak_bytes),
                        vramfit_i18n::fix_text::saving(tr, f.saving_bytes),
                        if f.fits() { tr.yes } else { tr.no }.to_string(),
                        f.effective_batch.to_string(),
                        format!("{}×", decimal(f.iter_time_ratio, 2)),
                        tr.impact(f.impact).to_string(),
                    ],
                    below: vec![why],
                }
            })
            .collect();
        fix_table(
            &mut out,
            &[
                "#",
                tr.cli.col_change,
                tr.col_peak,
                tr.col_saving,
                tr.col_fits,
                tr.col_batch,
                tr.col_time,
                tr.col_impact,
            ],
            &[true, false, true, true, false, true, true, false],
            &rows,
        );
    }
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
}
