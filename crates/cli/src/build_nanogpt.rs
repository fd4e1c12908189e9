//! `vramfit --program=build-nanogpt --B=16 …` and `vramfit torchrun … train_gpt2.py`:
//! build-nanogpt's train_gpt2.py on the command line. Its constants are given as `--KEY=VALUE`
//! with the script's names; the JSON keeps train.py's contract where the meaning is the same.

use std::process::ExitCode;

use estimator::input::command_line::Launch;
use estimator::programs::build_nanogpt::config::KEYS;
use estimator::programs::build_nanogpt::fixes::{rank_fixes, BngFixReport};
use estimator::programs::build_nanogpt::{analyze, BngAnalysis, BngConfig};
use estimator::programs::Program;
use estimator::units::{format_bytes, format_params, gib_signed};
use estimator::{Budget, Phase};

use crate::args::Args;
use crate::json::Json;
use crate::report::{components_json, gpu_json, oom_json, run_text, terms_json, verdict_json};
use crate::{fail, respond};
use vramfit_i18n::en;
use vramfit_i18n::fix_text::bng_fix_text;

/// The constants the command line gives, then the processes the launcher or
/// `--nproc_per_node` starts.
fn config(args: &Args, launch: Option<Launch>) -> Result<BngConfig, String> {
    let mut flags: Vec<String> = args.script_args.clone();
    if let Some(l) = launch {
        if let Some(a) = l.args.first() {
            return Err(format!(
                "train_gpt2.py takes no arguments ('{a}'): give its constants as --B=16 --T=1024 …"
            ));
        }
        if l.world_size > 1 {
            flags.push(format!("--nproc_per_node={}", l.world_size));
        }
        if l.expandable_segments == Some(true) {
            flags.push("--allocator=expandable_segments".into());
        }
    }
    if let Some(n) = args.nproc_per_node {
        flags.push(format!("--nproc_per_node={}", n * args.nnodes.unwrap_or(1)));
    }
    BngConfig::from_args(&flags).map_err(|e| e.to_string())
}

pub fn main(args: &Args, launch: Option<Launch>) -> ExitCode {
    let cfg = match config(args, launch) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    respond(
        args,
        |budget| analyze(&cfg, budget),
        |budget| rank_fixes(&cfg, budget),
        to_json,
        to_text,
    )
}

fn to_json(a: &BngAnalysis, budget: &Budget, fixes: Option<&BngFixReport>) -> Json {
    let cfg = &a.config;
    let (peak_phase, peak_stage, peak_micro) = a.peak_at();
    let phase = |p| Json::from(a.phase_bytes(p));
    let eval = a
        .phase_bytes(Phase::Eval)
        .max(a.phase_bytes(Phase::EvalAfterStep));
    let config = Json::Obj(
        KEYS.iter()
            .filter_map(|k| {
                let v = cfg.get(k)?;
                let json = match v.parse::<u64>() {
                    Ok(n) => Json::from(n),
                    Err(_) => match v.as_str() {
                        "True" => Json::from(true),
                        "False" => Json::from(false),
                        _ => Json::from(v),
                    },
                };
                Some((k.to_string(), json))
            })
            .collect(),
    );
    let tokens = cfg.total_batch_size;
    Json::obj([
        ("program", Json::from(Program::BuildNanoGpt.id())),
        ("script", Json::from(Program::BuildNanoGpt.script())),
        ("config", config),
        (
            "params",
            Json::obj([
                ("total", Json::from(a.params())),
                ("reported", Json::from(a.params())),
            ]),
        ),
        (
            "peak_bytes",
            Json::obj([
                ("overall", Json::from(a.peak_bytes())),
                ("train_steady", phase(Phase::TrainSteady)),
                ("train_first_iter", phase(Phase::TrainFirstIter)),
                ("eval", eval.into()),
                ("eval_first", phase(Phase::Eval)),
                ("eval_after_step", phase(Phase::EvalAfterStep)),
                ("reserved", Json::from(a.free_run.peak_reserved)),
            ]),
        ),
        ("peak_phase", Json::from(peak_phase.map(|p| p.id()))),
        ("peak_stage", Json::from(peak_stage.id())),
        ("peak_micro_step", peak_micro.into()),
        ("components_bytes", components_json(&a.run)),
        ("terms_bytes", terms_json(&a.run)),
        ("grad_accum_steps", cfg.grad_accum_steps().into()),
        ("effective_batch", (tokens / u64::from(cfg.t)).into()),
        ("tokens_per_iter", tokens.into()),
        ("gpu", gpu_json(budget, &a.verdict)),
        ("verdict", verdict_json(&a.verdict)),
        ("simulated_oom", oom_json(&a.run)),
        ("ddp", Json::Null),
        (
            "fixes",
            Json::Arr(
                fixes
                    .map(|r| r.fixes.as_slice())
                    .unwrap_or_default()
                    .iter()
                    .map(|f| {
                        Json::obj([
                            ("kind", Json::from(f.kind.id())),
                            ("impact", Json::from(f.impact.id())),
                            (
                                "edits",
                                Json::Arr(f.edits(cfg).into_iter().map(Json::from).collect()),
                            ),
                            ("peak_bytes", Json::from(f.peak_bytes)),
                            ("saving_bytes", Json::from(f.saving_bytes)),
                            ("fits", Json::from(f.verdict.fits)),
                            ("risk", Json::from(f.verdict.risk.id())),
                            ("tokens_per_iter", Json::from(f.config.total_batch_size)),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "largest_B_that_fits",
            fixes.and_then(|r| r.largest_b_that_fits).into(),
        ),
        (
            "warnings",
            Json::Arr(warnings(cfg).into_iter().map(Json::from).collect()),
        ),
    ])
}

/// What the numbers assume.
fn warnings(cfg: &BngConfig) -> Vec<&'static str> {
    let mut w = Vec::new();
    if !cfg.use_compile {
        w.push(
            "HellaSwag (4 rows per example) and sampling (4 × 32 tokens) run beside validation \
             on the same memory with far fewer tokens; they are not replayed",
        );
    }
    if cfg.world_size > 1 {
        w.push(
            "more than one GPU: every process holds the whole model, its AdamW state and DDP's \
             gradient buckets, as nanoGPT's train.py under DDP (measured for train.py, not for \
             train_gpt2.py)",
        );
    }
    w
}

fn to_text(a: &BngAnalysis, budget: &Budget, fixes: Option<&BngFixReport>) -> String {
    let cfg = &a.config;
    let mut out = String::new();
    let mut line = |t: String| {
        out.push_str(&t);
        out.push('\n');
    };
    line(format!(
        "model     build-nanogpt train_gpt2.py: n_layer {}, n_head {}, n_embd {}, vocab {}: {} parameters",
        cfg.n_layer,
        cfg.n_head,
        cfg.n_embd,
        cfg.vocab_size,
        format_params(a.params())
    ));
    line(format!(
        "batch     B {} × T {} × {} micro-steps = total_batch_size {} tokens",
        cfg.b,
        cfg.t,
        cfg.grad_accum_steps(),
        cfg.total_batch_size
    ));
    line(format!(
        "settings  use_compile={}, bf16 autocast, fused AdamW, allocator {}",
        if cfg.use_compile { "True" } else { "False" },
        cfg.allocator.as_str()
    ));
    line(String::new());
    let p = |ph| format_bytes(a.phase_bytes(ph).unwrap_or(0));
    let phases = format!(
        "  phases: first iteration {} · steady {} · validation {} / {} · reserved {}",
        p(Phase::TrainFirstIter),
        p(Phase::TrainSteady),
        p(Phase::Eval),
        p(Phase::EvalAfterStep),
        format_bytes(a.free_run.peak_reserved)
    );
    out.push_str(&run_text(
        &a.run,
        budget,
        &a.verdict,
        Program::BuildNanoGpt,
        &phases,
    ));
    let mut line = |t: String| {
        out.push_str(&t);
        out.push('\n');
    };
    if let Some(r) = fixes {
        line(String::new());
        if let Some(b) = r.largest_b_that_fits {
            line(format!("largest B that fits this card: {b}"));
        }
        line("fixes, best first:".into());
        for (i, f) in r.fixes.iter().enumerate() {
            let (title, why) = bng_fix_text(en(), f, cfg, budget.other_bytes);
            line(format!(
                "  {:>2}  {:<56} {:>10} {:>10}  {:<4}  {}",
                i + 1,
                title,
                format_bytes(f.peak_bytes),
                format!("{:+.2} GiB", gib_signed(f.saving_bytes)),
                if f.verdict.fits { "yes" } else { "no" },
                en().impact(f.impact)
            ));
            line(format!("      {why}"));
            for e in f.edits(cfg) {
                line(format!("      {e}"));
            }
        }
    }
    for w in warnings(cfg) {
        line(format!("note: {w}"));
    }
    out
}
