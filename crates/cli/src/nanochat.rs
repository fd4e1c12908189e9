//! `vramfit --program=nanochat …` and `vramfit python -m scripts.base_train …`: nanochat's
//! base_train.py on the command line, with the same JSON contract as train.py's where the
//! meaning is the same.

use std::process::ExitCode;

use estimator::programs::nanochat::config::Script;
use estimator::programs::nanochat::fixes::{self, rank_fixes, NanochatFixReport};
use estimator::programs::nanochat::{analyze, NanochatAnalysis, NanochatConfig};
use estimator::programs::Program;
use estimator::Phase;

use crate::args::Args;
use crate::report::{head, notes, ranked_fix_table, run_text, Peaks, Text};
use crate::respond;
use vramfit_i18n::fix_text::largest_line;
use vramfit_i18n::format::{gib, params, step_time};
use vramfit_i18n::{fill, CliLang};
use vramfit_report::nanochat::{to_json, warnings};

pub fn main(args: &Args, tr: &CliLang, cfg: NanochatConfig) -> ExitCode {
    respond(
        args,
        tr,
        |budget| analyze(&cfg, budget),
        |_, budget| rank_fixes(&cfg, budget),
        |a, _, fixes, _| to_json(a, fixes),
        |a, _, fixes, _| to_text(tr, a, fixes),
    )
}

fn to_text(tr: &CliLang, a: &NanochatAnalysis, fixes: Option<&NanochatFixReport>) -> String {
    let cfg = &a.config;
    let s = &a.shape;
    // the card as the verdict counted it (one rank's under torchrun: NCCL's memory is out)
    let budget = &a.budget;
    let mut out = Text::default();
    let script = match cfg.script {
        Script::Base => "base_train.py",
        Script::Sft => "chat_sft.py",
    };
    head(
        &mut out,
        &[
            (
                tr.cli.row_model,
                fill(
                    tr.cli.model_nanochat,
                    &[
                        ("script", script),
                        ("depth", &s.l.to_string()),
                        ("dim", &s.c.to_string()),
                        ("heads", &s.h.to_string()),
                        ("head_dim", &s.d.to_string()),
                        ("vocab", &s.v.to_string()),
                        (
                            "params",
                            &fill(tr.params_count, &[("n", &params(s.total_params()))]),
                        ),
                    ],
                ),
            ),
            (
                tr.cli.row_batch,
                fill(
                    tr.cli.batch_nanochat,
                    &[
                        ("batch", &cfg.device_batch_size.to_string()),
                        ("seq", &cfg.max_seq_len.to_string()),
                        ("micro", &cfg.grad_accum_steps().to_string()),
                        ("total", &cfg.total_batch_tokens().to_string()),
                    ],
                ),
            ),
            (
                tr.cli.row_settings,
                fill(
                    tr.cli.settings_nanochat,
                    &[
                        ("pattern", &cfg.window_pattern.to_string()),
                        ("attention", cfg.attention.as_str()),
                        ("dtype", dtype_word(cfg)),
                        ("allocator", cfg.allocator.as_str()),
                    ],
                ),
            ),
        ],
    );
    out.blank();
    let peaks = Peaks {
        phases: [
            Phase::TrainFirstIter,
            Phase::TrainSteady,
            Phase::Eval,
            Phase::EvalAfterStep,
            Phase::Core,
        ]
        .into_iter()
        .filter_map(|p| Some((p, a.phase_bytes(p)?)))
        .collect(),
        reserved: a.free_run.peak_reserved,
    };
    run_text(
        &mut out,
        tr,
        &a.run,
        budget,
        &a.verdict,
        Program::Nanochat,
        &peaks,
    );
    if let Some(r) = &a.ranks {
        out.blank();
        let each = r
            .rank_peaks
            .iter()
            .map(|p| {
                let ranks = if p.first == p.last {
                    p.first.to_string()
                } else {
                    format!("{}–{}", p.first, p.last)
                };
                format!("{ranks}: {}", gib(p.peak_bytes))
            })
            .collect::<Vec<_>>()
            .join(" · ");
        out.line(fill(
            tr.cli.nc_ranks,
            &[
                ("world", &r.world_size.to_string()),
                ("held", &r.held_stashes.to_string()),
                ("step", &step_time(r.step_seconds)),
                ("one", &gib(r.one_stash_peak)),
                ("nccl", &gib(r.nccl_bytes)),
                ("ranks", &each),
            ],
        ));
    }
    if let Some(r) = fixes {
        out.blank();
        let view = fixes::view(r, cfg, budget.other_bytes);
        if view.largest.is_some() {
            out.line(largest_line(tr, Program::Nanochat, &view));
        }
        if let Some(n) = r.largest_core_example_that_fits {
            out.line(fill(tr.cli.core_fits, &[("n", &n.to_string())]));
        }
        out.line(fill(tr.cli.heading, &[("text", tr.fixes_heading)]));
        ranked_fix_table(&mut out, tr, Program::Nanochat, &view.fixes);
    }
    notes(&mut out, tr, &warnings(tr.cli, cfg));
    out.into_string()
}

/// The compute dtype as the report names it (the analysis's config has it resolved for the card).
fn dtype_word(cfg: &NanochatConfig) -> &'static str {
    if cfg.compute_bytes() == 4 {
        "fp32"
    } else if cfg.fp8 {
        "bf16 with fp8 matmuls (--fp8)"
    } else {
        "bf16"
    }
}
