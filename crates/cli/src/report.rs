//! What the CLI prints: the JSON contract and the plain-text report.

use estimator::engine::run::Run;
use estimator::fixes::FixReport;
use estimator::oom::{Diagnosis, OomMessage};
use estimator::programs::Program;
use estimator::units::{format_bytes, format_params, gib, gib_signed};
use estimator::{
    Analysis, Budget, Component, Estimate, Phase, PyValue, Risk, Verdict, FIELDS_JSON_ORDER,
};

use crate::json::Json;
use vramfit_i18n::en;
use vramfit_i18n::fix_text::fix_text;

/// Everything one invocation answers.
pub struct Answer<'a> {
    /// The replayed run: peaks, components, verdict.
    pub analysis: &'a Analysis,
    pub est: &'a Estimate,
    pub budget: &'a Budget,
    pub verdict: Verdict,
    /// Config-file lines that were not applied (shown as warnings).
    pub skipped: Vec<String>,
    pub fixes: Option<FixReport>,
    /// A pasted out-of-memory message and what this config says failed.
    pub message: Option<(OomMessage, Option<Diagnosis>)>,
    /// Model-FLOPs utilisation the speed model assumes.
    pub mfu: f64,
}

impl Answer<'_> {
    /// This run's time per iteration, the all-reduce under DDP included.
    fn time(&self) -> estimator::speed::IterTime {
        estimator::speed::iter_time(
            &self.est.config,
            self.est.params.reported,
            &self.budget.gpu,
            estimator::Patches::default(),
            self.mfu,
        )
    }
}

/// Per-GPU memory and time of a DDP run; null on one GPU.
fn ddp_json(a: &Answer) -> Json {
    let Some(r) = a.analysis.ranks() else {
        return Json::Null;
    };
    let t = a.time();
    let last = r.world_size - 1;
    let others = if last == 1 {
        "1".to_string()
    } else {
        format!("1-{last}")
    };
    Json::obj([
        ("world_size", Json::from(r.world_size)),
        ("accum_per_rank", Json::from(r.accum_per_rank)),
        ("worst_rank", Json::from(estimator::ddp::Ranks::WORST_RANK)),
        ("bucket_bytes", Json::from(r.bucket_bytes)),
        ("rebuild_transient_bytes", Json::from(r.rebuild_bytes)),
        (
            "steady_without_rebuild_bytes",
            Json::from(r.steady_without_rebuild),
        ),
        (
            "per_rank",
            Json::Arr(vec![
                Json::obj([
                    ("ranks", Json::from("0")),
                    ("peak_bytes", Json::from(r.rank0_peak)),
                    ("runs_estimate_loss", Json::from(true)),
                ]),
                Json::obj([
                    ("ranks", Json::from(others.as_str())),
                    ("peak_bytes", Json::from(r.other_ranks_peak)),
                    ("runs_estimate_loss", Json::from(false)),
                ]),
            ]),
        ),
        ("link_gbps", Json::Num(a.budget.gpu.link_gbps)),
        ("allreduce_bytes", Json::from(t.allreduce_bytes)),
        ("allreduce_seconds", Json::Num(t.allreduce_seconds)),
        ("exposed_allreduce_seconds", Json::Num(t.exposed_seconds)),
        ("single_gpu_iter_seconds", Json::Num(t.single_gpu_seconds)),
        ("speedup", Json::Num(t.speedup())),
    ])
}

fn py_json(v: PyValue) -> Json {
    match v {
        PyValue::Int(n) => Json::Int(n.into()),
        PyValue::Float(x) => Json::Num(x),
        PyValue::Bool(b) => Json::Bool(b),
        PyValue::Str(s) => Json::Str(s),
        PyValue::None => Json::Null,
    }
}

fn fixes_json(a: &Answer) -> Json {
    let Some(r) = &a.fixes else {
        return Json::Arr(Vec::new());
    };
    let from = &a.est.config;
    Json::Arr(
        r.fixes
            .iter()
            .map(|f| {
                let mut changes: Vec<(String, Json)> = f
                    .changed_keys(from)
                    .into_iter()
                    .filter_map(|(k, _)| f.config.get(k).map(|v| (k.to_string(), py_json(v))))
                    .collect();
                if let Some((k, v)) = f.env(from) {
                    changes.push((k.to_string(), Json::from(v)));
                }
                if f.patches.eval_batch_size.is_some() {
                    changes.push(("patch".into(), Json::from("train.py")));
                }
                if f.patches.checkpoint_blocks || f.patches.chunked_loss {
                    changes.push(("patch".into(), Json::from("model.py")));
                }
                if f.other_bytes < a.budget.other_bytes {
                    changes.push(("other_gib".into(), Json::from(0.0)));
                }
                let (title, why) = fix_text(en(), f, from, a.budget.other_bytes);
                Json::obj([
                    ("id", Json::from(f.kind.id())),
                    ("title", Json::from(title)),
                    ("why", Json::from(why)),
                    ("changes", Json::Obj(changes)),
                    ("peak_bytes", Json::from(f.peak_bytes)),
                    ("saving_bytes", Json::from(f.saving_bytes)),
                    ("fits", Json::from(f.fits())),
                    ("risk", Json::from(f.verdict.risk.id())),
                    ("headroom_bytes", Json::from(f.verdict.headroom_bytes)),
                    ("effective_batch", Json::from(f.effective_batch)),
                    ("tokens_per_iter", Json::from(f.tokens_per_iter)),
                    ("effective_batch_kept", Json::from(f.effective_batch_kept)),
                    ("iter_time_ratio", Json::from(f.iter_time_ratio)),
                    ("impact", Json::from(f.impact.id())),
                    ("params_reported", Json::from(f.params_reported)),
                ])
            })
            .collect(),
    )
}

fn phase_bytes(a: &Analysis, phase: Phase) -> Json {
    a.phase_bytes(phase).into()
}

fn message_json(a: &Answer) -> Json {
    let Some((m, _)) = &a.message else {
        return Json::Null;
    };
    Json::obj([
        ("recognised", Json::from(m.recognised)),
        (
            "tried_to_allocate_bytes",
            Json::from(m.tried_to_allocate_bytes),
        ),
        ("total_capacity_bytes", Json::from(m.total_capacity_bytes)),
        ("free_bytes", Json::from(m.free_bytes)),
        ("process_in_use_bytes", Json::from(m.process_in_use_bytes)),
        (
            "allocated_by_pytorch_bytes",
            Json::from(m.allocated_by_pytorch_bytes),
        ),
        (
            "reserved_unallocated_bytes",
            Json::from(m.reserved_unallocated_bytes),
        ),
        (
            "already_allocated_bytes",
            Json::from(m.already_allocated_bytes),
        ),
        ("reserved_total_bytes", Json::from(m.reserved_total_bytes)),
        ("allowed_bytes", Json::from(m.allowed_bytes)),
        (
            "other_processes",
            Json::Arr(
                m.other_processes
                    .iter()
                    .map(|(pid, b)| {
                        Json::obj([("pid", Json::from(*pid)), ("bytes", Json::from(*b))])
                    })
                    .collect(),
            ),
        ),
        ("gpu", Json::from(m.card().map(|g| g.id))),
    ])
}

fn diagnosis_json(a: &Answer) -> Json {
    let Some((m, Some(d))) = &a.message else {
        return Json::Null;
    };
    Json::obj([
        ("phase", Json::from(d.phase.map(|p| p.id()))),
        ("stage", Json::from(d.stage.id())),
        ("micro_step", Json::from(d.micro_step)),
        ("tensor", Json::from(d.term.id())),
        ("tensor_bytes", Json::from(d.tensor_bytes)),
        ("reproduced", Json::from(d.reproduced)),
        ("explanation", Json::from(diagnosis_sentence(m, d))),
    ])
}

/// "The 3.07 GiB request is the fp32 copy … in steady training (loss, micro-step 2); …".
pub fn diagnosis_sentence(m: &OomMessage, d: &Diagnosis) -> String {
    let place = format!(
        "{}, {}{}",
        d.phase
            .map_or("model load", |p| phase_name(Program::NanoGpt, p)),
        d.stage.id().replace('_', " "),
        if d.micro_step > 0 {
            format!(", micro-step {}", d.micro_step)
        } else {
            String::new()
        }
    );
    let fragmented = m
        .reserved_unallocated_bytes
        .map(|r| {
            format!(
                "; {} was reserved but unallocated (fragmentation)",
                format_bytes(r)
            )
        })
        .unwrap_or_default();
    let how = if d.reproduced {
        "simulating this config under the message's budget fails at the same request"
    } else {
        "this config has a tensor of that size there, but under the message's budget the simulation fails elsewhere or not at all: check the config"
    };
    format!(
        "The {} request is the {} ({}) in {}{}; {}.",
        format_bytes(m.tried_to_allocate_bytes.unwrap_or(0)),
        en().term(d.term),
        format_bytes(d.tensor_bytes),
        place,
        fragmented,
        how
    )
}

pub fn oom_json(a: &Run) -> Json {
    let Some(o) = a.oom() else { return Json::Null };
    Json::obj([
        ("phase", Json::from(o.phase.map(|p| p.id()))),
        ("stage", Json::from(o.stage.id())),
        ("micro_step", Json::from(o.micro_step)),
        ("requested_bytes", Json::from(o.requested)),
        ("tensor", Json::from(o.term.id())),
        ("allocated_bytes", Json::from(o.allocated)),
        ("reserved_bytes", Json::from(o.reserved)),
        (
            "reserved_unallocated_bytes",
            Json::from(o.reserved - o.allocated),
        ),
        ("largest_free_block_bytes", Json::from(o.largest_free)),
    ])
}

/// Bytes of each bar segment at the peak (they sum to `peak_bytes.overall`).
pub fn components_json(run: &Run) -> Json {
    let comps = run.components();
    Json::Obj(
        Component::ALL
            .iter()
            .map(|c| (c.id().to_string(), Json::from(comps.get(*c))))
            .collect(),
    )
}

/// The tensors alive at the peak, by term.
pub fn terms_json(run: &Run) -> Json {
    Json::Obj(
        run.peak_terms()
            .0
            .iter()
            .map(|(t, b)| (t.id().to_string(), Json::from(*b)))
            .collect(),
    )
}

/// The card and what the allocator may use of it.
pub fn gpu_json(budget: &Budget, v: &Verdict) -> Json {
    let g = &budget.gpu;
    Json::obj([
        ("id", Json::from(g.id)),
        ("name", Json::from(g.name)),
        ("total_bytes", Json::from(g.total_bytes)),
        ("usable_bytes", Json::from(v.budget_bytes)),
        ("context_bytes", Json::from(budget.context_bytes)),
        ("other_bytes", Json::from(budget.other_bytes)),
        (
            "cublas_workspace_bytes",
            Json::from(g.cublas_workspace_bytes()),
        ),
    ])
}

pub fn verdict_json(v: &Verdict) -> Json {
    Json::obj([
        ("fits", Json::from(v.fits)),
        ("risk", Json::from(v.risk.id())),
        ("headroom_bytes", Json::from(v.headroom_bytes)),
        ("need_bytes", Json::from(v.need_bytes)),
    ])
}

pub fn to_json(a: &Answer) -> Json {
    let est = a.est;
    let cfg = &est.config;
    let an = a.analysis;
    let (peak_phase, peak_stage, peak_micro) = an.peak_at();
    let config = Json::Obj(
        FIELDS_JSON_ORDER
            .iter()
            .filter_map(|k| cfg.get(k).map(|v| (k.to_string(), py_json(v))))
            .collect(),
    );
    Json::obj([
        ("config", config),
        (
            "params",
            Json::obj([
                ("total", Json::from(est.params.total)),
                ("reported", Json::from(est.params.reported)),
            ]),
        ),
        (
            "peak_bytes",
            Json::obj([
                ("overall", Json::from(an.peak_bytes())),
                ("train_steady", phase_bytes(an, Phase::TrainSteady)),
                ("train_first_iter", phase_bytes(an, Phase::TrainFirstIter)),
                ("eval", phase_bytes(an, Phase::Eval)),
                ("eval_after_step", phase_bytes(an, Phase::EvalAfterStep)),
                ("reserved", Json::from(an.free_run.peak_reserved)),
            ]),
        ),
        ("peak_phase", Json::from(peak_phase.map(|p| p.id()))),
        ("peak_stage", Json::from(peak_stage.id())),
        ("peak_micro_step", peak_micro.into()),
        ("components_bytes", components_json(an)),
        ("terms_bytes", terms_json(an)),
        (
            "moments",
            Json::Arr(
                est.moments
                    .iter()
                    .map(|m| {
                        Json::obj([
                            ("phase", Json::from(m.phase.id())),
                            ("moment", Json::from(m.moment.id())),
                            ("micro_step", Json::from(m.micro_step)),
                            ("bytes", Json::from(m.total())),
                        ])
                    })
                    .collect(),
            ),
        ),
        ("effective_batch", cfg.effective_batch().into()),
        ("tokens_per_iter", cfg.tokens_per_iter().into()),
        ("gpu", gpu_json(a.budget, &a.verdict)),
        ("verdict", verdict_json(&a.verdict)),
        ("simulated_oom", oom_json(&an.run)),
        ("ddp", ddp_json(a)),
        ("oom", message_json(a)),
        ("diagnosis", diagnosis_json(a)),
        ("fixes", fixes_json(a)),
        (
            "largest_batch_size_that_fits",
            a.fixes
                .as_ref()
                .and_then(|r| r.largest_batch_that_fits)
                .into(),
        ),
        (
            "iter_seconds",
            a.fixes.as_ref().map(|r| r.current_seconds).into(),
        ),
        (
            "warnings",
            Json::Arr(a.skipped.iter().map(|s| Json::from(s.as_str())).collect()),
        ),
    ])
}

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

fn phase_name(program: Program, p: Phase) -> &'static str {
    match (program, p) {
        (_, Phase::TrainFirstIter) => "the first training iteration",
        (_, Phase::TrainSteady) => "steady training",
        (Program::NanoGpt, Phase::Eval) => "estimate_loss() at iteration 0",
        (Program::NanoGpt, Phase::EvalAfterStep) => "a later estimate_loss()",
        (Program::BuildNanoGpt, Phase::Eval) => "validation at step 0",
        (Program::BuildNanoGpt, Phase::EvalAfterStep) => "a later validation",
        (_, Phase::Eval) => "evaluate_bpb() at step 0",
        (_, Phase::EvalAfterStep) => "evaluate_bpb() at the last step",
        (_, Phase::Core) => "the CORE evaluation",
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
