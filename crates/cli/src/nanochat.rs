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
use crate::report::run_text;
use crate::{fail, respond};
use vramfit_i18n::en;
use vramfit_i18n::fix_text::nanochat_fix_text;
use vramfit_report::nanochat::{to_json, warnings};

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
    vramfit_report::nanochat_config(program, &flags).map_err(|e| e.to_string())
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
