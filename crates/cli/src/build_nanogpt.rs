//! `vramfit --program=build-nanogpt --B=16 …` and `vramfit torchrun … train_gpt2.py`:
//! build-nanogpt's train_gpt2.py on the command line. Its constants are given as `--KEY=VALUE`
//! with the script's names; the JSON keeps train.py's contract where the meaning is the same.

use std::process::ExitCode;

use estimator::input::command_line::Launch;
use estimator::programs::build_nanogpt::fixes::{rank_fixes, BngFixReport};
use estimator::programs::build_nanogpt::{analyze, BngAnalysis, BngConfig};
use estimator::programs::Program;
use estimator::units::{format_bytes, format_params, gib_signed};
use estimator::{Budget, Phase};

use crate::args::Args;
use crate::report::run_text;
use crate::{fail, respond};
use vramfit_i18n::en;
use vramfit_i18n::fix_text::bng_fix_text;
use vramfit_report::build_nanogpt::{to_json, warnings};

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
