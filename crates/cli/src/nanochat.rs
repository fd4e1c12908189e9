//! `vramfit --program=nanochat …` and `vramfit python -m scripts.base_train …`: nanochat's
//! base_train.py on the command line, with the same JSON contract as train.py's where the
//! meaning is the same.

use std::process::ExitCode;

use estimator::input::command_line::Launch;
use estimator::programs::nanochat::config::Script;
use estimator::programs::nanochat::fixes::{rank_fixes, NanochatFixReport};
use estimator::programs::nanochat::{analyze, NanochatAnalysis, NanochatConfig};
use estimator::programs::Program;
use estimator::units::{format_bytes, format_params, gib_signed};
use estimator::{Budget, Phase};

use crate::args::Args;
use crate::json::Json;
use crate::report::{components_json, gpu_json, oom_json, run_text, terms_json, verdict_json};
use crate::{fail, respond};
use vramfit_i18n::en;
use vramfit_i18n::fix_text::nanochat_fix_text;

/// The config the command line describes: base_train.py's flags in order, then what the
/// launcher said (`torchrun --nproc_per_node`, `PYTORCH_ALLOC_CONF`) and vramfit's
/// `--nproc_per_node`.
fn config(args: &Args, program: Program, launch: Option<Launch>) -> Result<NanochatConfig, String> {
    let mut flags: Vec<String> = args.script_args.clone();
    if let Some(l) = launch {
        flags.extend(l.args);
        if l.world_size > 1 {
            flags.push(format!("--nproc-per-node={}", l.world_size));
        }
        if l.expandable_segments == Some(false) {
            flags.push("--allocator=default".into());
        }
    }
    if let Some(n) = args.nproc_per_node {
        flags.push(format!("--nproc-per-node={}", n * args.nnodes.unwrap_or(1)));
    }
    match program {
        Program::NanochatSft => NanochatConfig::from_sft_args(&flags),
        _ => NanochatConfig::from_args(&flags),
    }
    .map_err(|e| e.to_string())
}

pub fn main(args: &Args, program: Program, launch: Option<Launch>) -> ExitCode {
    let cfg = match config(args, program, launch) {
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

/// What vramfit says beside the numbers: what they assume.
fn warnings(cfg: &NanochatConfig) -> Vec<&'static str> {
    let mut w = vec![
        "iteration 0 can be higher on a machine whose Inductor cache is cold: autotuning a new \
         kernel briefly holds an L2-sized buffer and copies of the kernel's arguments",
    ];
    if cfg.script == Script::Sft {
        w.push(
            "chat_sft.py inherits max_seq_len, device_batch_size and total_batch_size from the \
             base checkpoint; vramfit assumes base_train.py's defaults (2048, 32, the automatic \
             total for --depth) unless given; the ChatCORE evaluation is not in these peaks",
        );
    }
    if cfg.attention == estimator::programs::nanochat::NanochatAttention::Fa3 {
        w.push(
            "attention=fa3: FA3's saved tensors are derived from its source (no mask, the same \
             q, k, v, output and log-sum-exp), not measured",
        );
    }
    if cfg.core_metric_every > 0 && cfg.core_max_tokens == 0 {
        w.push(
            "the CORE evaluation is not in these peaks: its examples' sizes come from the eval \
             bundle; give --core-max-tokens (choices × tokens of its largest example), or see \
             largest_core_example_that_fits",
        );
    }
    if cfg.sample_every > 0 {
        w.push("sampling (16 tokens from 7 prompts with a KV cache) is not in these peaks");
    }
    w
}

fn phase(a: &NanochatAnalysis, p: Phase) -> Json {
    a.phase_bytes(p).into()
}

fn to_json(a: &NanochatAnalysis, budget: &Budget, fixes: Option<&NanochatFixReport>) -> Json {
    let cfg = &a.config;
    let program = match cfg.script {
        Script::Base => Program::Nanochat,
        Script::Sft => Program::NanochatSft,
    };
    let s = &a.shape;
    let (peak_phase, peak_stage, peak_micro) = a.peak_at();
    let eval = a
        .phase_bytes(Phase::Eval)
        .max(a.phase_bytes(Phase::EvalAfterStep));
    let config = Json::Obj(
        cfg.keys()
            .iter()
            .filter_map(|k| {
                let value = cfg.get(k)?;
                let json = match value.parse::<i64>() {
                    Ok(n) if *k != "window-pattern" => Json::from(n as i128),
                    _ => match estimator::decimal::parse(&value) {
                        Some(x) if *k != "window-pattern" => Json::from(x),
                        _ => Json::from(value),
                    },
                };
                Some((k.replace('-', "_"), json))
            })
            .collect(),
    );
    Json::obj([
        ("program", Json::from(program.id())),
        ("script", Json::from(program.script())),
        ("config", config),
        (
            "model",
            Json::obj([
                ("n_layer", Json::from(s.l)),
                ("model_dim", Json::from(s.c)),
                ("n_head", Json::from(s.h)),
                ("head_dim", Json::from(s.d)),
                ("vocab_size", Json::from(s.v)),
                ("value_embedding_layers", Json::from(s.n_ve())),
                ("sliding_window_layers", Json::from(s.n_masked())),
            ]),
        ),
        (
            "params",
            Json::obj([
                ("total", Json::from(s.total_params())),
                ("reported", Json::from(s.total_params())),
                ("scaling", Json::from(s.scaling_params())),
            ]),
        ),
        (
            "peak_bytes",
            Json::obj([
                ("overall", Json::from(a.peak_bytes())),
                ("train_steady", phase(a, Phase::TrainSteady)),
                ("train_first_iter", phase(a, Phase::TrainFirstIter)),
                ("eval", eval.into()),
                ("eval_first", phase(a, Phase::Eval)),
                ("eval_after_step", phase(a, Phase::EvalAfterStep)),
                ("core", phase(a, Phase::Core)),
                ("reserved", Json::from(a.free_run.peak_reserved)),
            ]),
        ),
        ("peak_phase", Json::from(peak_phase.map(|p| p.id()))),
        ("peak_stage", Json::from(peak_stage.id())),
        ("peak_micro_step", peak_micro.into()),
        ("components_bytes", components_json(&a.run)),
        ("terms_bytes", terms_json(&a.run)),
        ("total_batch_size", cfg.total_batch_tokens().into()),
        ("grad_accum_steps", cfg.grad_accum_steps().into()),
        (
            "effective_batch",
            (cfg.total_batch_tokens() / u64::from(cfg.max_seq_len)).into(),
        ),
        ("tokens_per_iter", cfg.total_batch_tokens().into()),
        ("gpu", gpu_json(budget, &a.verdict)),
        ("verdict", verdict_json(&a.verdict)),
        ("simulated_oom", oom_json(&a.run)),
        ("ddp", Json::Null),
        ("fixes", fixes_json(a, fixes)),
        (
            "largest_device_batch_size_that_fits",
            fixes.and_then(|r| r.largest_device_batch_that_fits).into(),
        ),
        (
            "largest_core_example_that_fits",
            fixes.and_then(|r| r.largest_core_example_that_fits).into(),
        ),
        (
            "warnings",
            Json::Arr(warnings(cfg).into_iter().map(Json::from).collect()),
        ),
    ])
}

fn fixes_json(a: &NanochatAnalysis, fixes: Option<&NanochatFixReport>) -> Json {
    let Some(r) = fixes else {
        return Json::Arr(Vec::new());
    };
    Json::Arr(
        r.fixes
            .iter()
            .map(|f| {
                Json::obj([
                    ("kind", Json::from(f.kind.id())),
                    ("impact", Json::from(f.impact.id())),
                    (
                        "changes",
                        Json::Obj(
                            f.changed_flags(&a.config)
                                .into_iter()
                                .map(|(k, v)| (k.replace('-', "_"), Json::from(v)))
                                .collect(),
                        ),
                    ),
                    ("command", Json::from(f.command_line())),
                    ("peak_bytes", Json::from(f.peak_bytes)),
                    ("saving_bytes", Json::from(f.saving_bytes)),
                    ("fits", Json::from(f.verdict.fits)),
                    ("risk", Json::from(f.verdict.risk.id())),
                    (
                        "total_batch_size",
                        Json::from(f.config.total_batch_tokens()),
                    ),
                    ("tokens_per_iter", Json::from(f.config.total_batch_tokens())),
                ])
            })
            .collect(),
    )
}

fn to_text(a: &NanochatAnalysis, budget: &Budget, fixes: Option<&NanochatFixReport>) -> String {
    let cfg = &a.config;
    let s = &a.shape;
    let mut out = String::new();
    let mut line = |t: String| {
        out.push_str(&t);
        out.push('\n');
    };
    line(format!(
        "model     nanochat {}: depth {} → model_dim {}, {} heads of {}, vocab {}: {} parameters",
        match cfg.script {
            Script::Base => "base_train.py",
            Script::Sft => "chat_sft.py",
        },
        s.l,
        s.c,
        s.h,
        s.d,
        s.v,
        format_params(s.total_params())
    ));
    line(format!(
        "batch     device_batch_size {} × max_seq_len {} × {} micro-steps = total_batch_size {} tokens",
        cfg.device_batch_size,
        cfg.max_seq_len,
        cfg.grad_accum_steps(),
        cfg.total_batch_tokens()
    ));
    line(format!(
        "settings  window_pattern {}, {} attention, torch.compile, bf16, allocator {}",
        cfg.window_pattern,
        cfg.attention.as_str(),
        cfg.allocator.as_str()
    ));
    line(String::new());
    let p = |ph| format_bytes(a.phase_bytes(ph).unwrap_or(0));
    let phases = format!(
        "  phases: first iteration {} · steady {} · evaluate_bpb() {} / {} · reserved {}",
        p(Phase::TrainFirstIter),
        p(Phase::TrainSteady),
        p(Phase::Eval),
        p(Phase::EvalAfterStep),
        format_bytes(a.free_run.peak_reserved)
    ) + &a
        .phase_bytes(Phase::Core)
        .map_or(String::new(), |b| format!(" · CORE {}", format_bytes(b)));
    out.push_str(&run_text(
        &a.run,
        budget,
        &a.verdict,
        Program::Nanochat,
        &phases,
    ));
    let mut line = |t: String| {
        out.push_str(&t);
        out.push('\n');
    };
    if let Some(r) = fixes {
        line(String::new());
        if let Some(b) = r.largest_device_batch_that_fits {
            line(format!(
                "largest --device-batch-size that fits this card: {b}"
            ));
        }
        if let Some(n) = r.largest_core_example_that_fits {
            line(format!(
                "the CORE evaluation fits examples up to {n} tokens (choices × length)"
            ));
        }
        line("fixes, best first:".into());
        for (i, f) in r.fixes.iter().enumerate() {
            let (title, why) = nanochat_fix_text(en(), f, cfg, budget.other_bytes);
            line(format!(
                "  {:>2}  {:<64} {:>10} {:>10}  {:<4}  {}",
                i + 1,
                title,
                format_bytes(f.peak_bytes),
                format!("{:+.2} GiB", gib_signed(f.saving_bytes)),
                if f.verdict.fits { "yes" } else { "no" },
                en().impact(f.impact)
            ));
            line(format!("      {why}"));
            line(format!("      {}", f.command_line()));
        }
    }
    for w in warnings(cfg) {
        line(format!("note: {w}"));
    }
    out
}
