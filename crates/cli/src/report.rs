//! What the CLI prints as text (its JSON is crates/report's contract).

use estimator::engine::run::Run;
use estimator::programs::Program;
use estimator::units::{format_bytes, format_params, gib, gib_signed};
use estimator::{Budget, Component, Phase, Risk, Verdict};

use vramfit_i18n::en;
use vramfit_i18n::fix_text::fix_text;
use vramfit_report::common::{diagnosis_sentence, phase_name};
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

pub fn label(c: Component) -> &'static str {
    match c {
        Component::Params => "parameters",
        Component::Optimizer => "optimizer state",
        Component::Gradients => "gradients",
        Component::Activations => "activations",
        Component::Logits => "logits & loss",
        Component::Other => "other",
    }
}

/// The peak, the bar, the legend, the phases, the verdict and where the card runs out: what every
/// program's report shows of its replayed run.
pub fn run_text(an: &Run, budget: &Budget, v: &Verdict, program: Program, phases: &str) -> String {
    let g = &budget.gpu;
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    let phase_name = |p| phase_name(program, p);
    let (peak_phase, peak_stage, peak_micro) = an.peak_at();
    let step = if peak_micro > 0 {
        format!(", micro-step {peak_micro}")
    } else {
        String::new()
    };
    line(format!(
        "peak {} in {} ({}{})",
        format_bytes(an.peak_bytes()),
        peak_phase.map_or("model load", phase_name),
        peak_stage.id().replace('_', " "),
        step
    ));
    let comps = an.components();
    // one stacked bar against the card's total memory, '|' at what the allocator may use
    let scale = g.total_bytes.max(an.peak_bytes()).max(1) as f64;
    let mut bar = String::new();
    for c in Component::ALL {
        let n = (comps.get(c) as f64 / scale * BAR_WIDTH as f64).round() as usize;
        bar.extend(std::iter::repeat_n(glyph(c), n));
    }
    let mark = ((v.budget_bytes as f64 / scale) * BAR_WIDTH as f64).round() as usize;
    let mut cells: Vec<char> = bar.chars().collect();
    cells.resize(BAR_WIDTH.max(cells.len()), '·');
    if mark < cells.len() {
        cells[mark] = '|';
    }
    let colour = colour_wanted();
    line(format!("  [{}]", bar_cells(&cells, colour)));
    for c in Component::ALL {
        line(format!(
            "  {} {:<16} {:>10}",
            bar_cells(&[glyph(c)], colour),
            label(c),
            format_bytes(comps.get(c))
        ));
    }
    line(phases.to_string());
    line(String::new());
    let word = match v.risk {
        Risk::Fits => "FITS",
        Risk::Tight => "TIGHT",
        Risk::Oom => "OUT OF MEMORY",
    };
    line(format!(
        "{} on {}: the caching allocator reserves {:.2} GiB; it may use {:.2} GiB ({:.2} total − {:.2} context − {:.2} other)",
        word,
        g.name,
        gib(v.need_bytes),
        gib(v.budget_bytes),
        gib(g.total_bytes),
        gib(budget.context_bytes),
        gib(budget.other_bytes)
    ));
    line(if v.headroom_bytes >= 0 {
        format!("  {:.2} GiB to spare", gib_signed(v.headroom_bytes))
    } else {
        format!("  {:.2} GiB short", -gib_signed(v.headroom_bytes))
    });
    if let Some(o) = an.oom() {
        line(format!(
            "  out of memory in {} ({}{}): {} requested for {}; {} allocated, {} reserved but unallocated, largest free block {}",
            o.phase.map_or("model load", phase_name),
            o.stage.id().replace('_', " "),
            if o.micro_step > 0 { format!(", micro-step {}", o.micro_step) } else { String::new() },
            format_bytes(o.requested),
            en().term(o.term),
            format_bytes(o.allocated),
            format_bytes(o.reserved - o.allocated),
            format_bytes(o.largest_free)
        ));
    }
    out
}

pub fn to_text(a: &Answer) -> String {
    let est = a.est;
    let cfg = &est.config;
    let g = &a.budget.gpu;
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "model     {} layers, {} heads, n_embd {}, vocab {}: {} parameters ({} with wpe)",
        cfg.n_layer,
        cfg.n_head,
        cfg.n_embd,
        cfg.vocab_size,
        format_params(est.params.reported),
        format_params(est.params.total)
    ));
    line(format!(
        "batch     batch_size {} × gradient_accumulation_steps {} = {} sequences, {} tokens per iteration",
        cfg.batch_size,
        cfg.gradient_accumulation_steps,
        cfg.effective_batch(),
        cfg.tokens_per_iter()
    ));
    if let Some(r) = a.analysis.ranks() {
        let t = a.time();
        line(format!(
            "ddp       world_size {}: {} micro-steps per GPU ({} ÷ {}); ≈ {:.2} s per iteration, {:.2}× one GPU (all-reduce of {} over {} GB/s: {:.2} s, {:.2} s not hidden)",
            r.world_size,
            r.accum_per_rank,
            cfg.gradient_accumulation_steps,
            r.world_size,
            t.seconds,
            t.speedup(),
            format_bytes(t.allreduce_bytes),
            g.link_gbps,
            t.allreduce_seconds,
            t.exposed_seconds
        ));
        line(format!(
            "          per GPU: rank 0 (runs estimate_loss()) {} · other ranks {} · DDP buckets {} on every rank; the steady peak counts a second set while DDP rebuilds them ({} without)",
            format_bytes(r.rank0_peak),
            format_bytes(r.other_ranks_peak),
            format_bytes(r.bucket_bytes),
            format_bytes(r.steady_without_rebuild)
        ));
    }
    line(format!(
        "settings  block_size {}, {}, compile={}, {} attention, dropout {}, bias={}, allocator {}",
        cfg.block_size,
        cfg.dtype.as_str(),
        if cfg.compile { "True" } else { "False" },
        cfg.attention.as_str(),
        cfg.dropout,
        if cfg.bias { "True" } else { "False" },
        cfg.allocator.as_str()
    ));
    line(String::new());
    let phase = |p| format_bytes(a.analysis.phase_bytes(p).unwrap_or(0));
    let phases = format!(
        "  phases: first iteration {} · steady {} · estimate_loss() {} · reserved {}",
        phase(Phase::TrainFirstIter),
        phase(Phase::TrainSteady),
        phase(Phase::Eval),
        format_bytes(a.analysis.free_run.peak_reserved)
    );
    out.push_str(&run_text(
        a.analysis,
        a.budget,
        &a.verdict,
        Program::NanoGpt,
        &phases,
    ));
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    if let Some((m, d)) = &a.message {
        line(String::new());
        match (m.recognised, d) {
            (false, _) => line("the pasted text is not a CUDA out-of-memory message: nothing was read from it".into()),
            (true, Some(d)) => line(diagnosis_sentence(m, d)),
            (true, None) => line(format!(
                "no tensor of this config has the requested size ({}): the run's config probably differs",
                format_bytes(m.tried_to_allocate_bytes.unwrap_or(0))
            )),
        }
    }
    if let Some(r) = &a.fixes {
        line(String::new());
        if let Some(b) = r.largest_batch_that_fits {
            line(format!("largest batch_size that fits this card: {b}"));
        }
        line(format!(
            "fixes, best first (time per iteration now ≈ {:.1} s):",
            r.current_seconds
        ));
        line(format!(
            "  {:>2}  {:<58} {:>10} {:>10}  {:<4} {:>8} {:>6}  {}",
            "#", "change", "new peak", "saving", "fits", "eff.batch", "time", "changes in training"
        ));
        for (i, f) in r.fixes.iter().enumerate() {
            let (title, why) = fix_text(en(), f, cfg, a.budget.other_bytes);
            line(format!(
                "  {:>2}  {:<58} {:>10} {:>10}  {:<4} {:>8} {:>5.2}×  {}",
                i + 1,
                title,
                format_bytes(f.peak_bytes),
                format!("{:+.2} GiB", gib_signed(f.saving_bytes)),
                if f.fits() { "yes" } else { "no" },
                f.effective_batch,
                f.iter_time_ratio,
                en().impact(f.impact)
            ));
            line(format!("      {why}"));
        }
    }
    out
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
}
