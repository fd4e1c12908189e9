//! `vramfit --program=build-nanogpt --B=16 …` and `vramfit torchrun … train_gpt2.py`:
//! build-nanogpt's train_gpt2.py on the command line. Its constants are given as `--KEY=VALUE`
//! with the script's names; the JSON keeps train.py's contract where the meaning is the same.

use std::process::ExitCode;

use estimator::programs::build_nanogpt::fixes::{self, rank_fixes, BngFixReport};
use estimator::programs::build_nanogpt::{analyze, BngAnalysis, BngConfig};
use estimator::programs::Program;
use estimator::{Budget, Phase};

use crate::args::Args;
use crate::report::{head, notes, ranked_fix_table, run_text, Peaks, Text};
use crate::respond;
use vramfit_i18n::fix_text::largest_line;
use vramfit_i18n::format::params;
use vramfit_i18n::{fill, CliLang};
use vramfit_report::build_nanogpt::{to_json, warnings};

pub fn main(args: &Args, tr: &CliLang, cfg: BngConfig) -> ExitCode {
    respond(
        args,
        tr,
        |budget| analyze(&cfg, budget),
        |_, budget| rank_fixes(&cfg, budget),
        |a, budget, fixes, _| to_json(a, budget, fixes),
        |a, budget, fixes, _| to_text(tr, a, budget, fixes),
    )
}

fn to_text(tr: &CliLang, a: &BngAnalysis, budget: &Budget, fixes: Option<&BngFixReport>) -> String {
    let cfg = &a.config;
    let mut out = Text::default();
    head(
        &mut out,
        &[
            (
                tr.cli.row_model,
                fill(
                    tr.cli.model_bng,
                    &[
                        ("layers", &cfg.n_layer.to_string()),
                        ("heads", &cfg.n_head.to_string()),
                        ("embd", &cfg.n_embd.to_string()),
                        ("vocab", &cfg.vocab_size.to_string()),
                        (
                            "params",
                            &fill(tr.params_count, &[("n", &params(a.params()))]),
                        ),
                    ],
                ),
            ),
            (
                tr.cli.row_batch,
                fill(
                    tr.cli.batch_bng,
                    &[
                        ("b", &cfg.b.to_string()),
                        ("t", &cfg.t.to_string()),
                        ("micro", &cfg.grad_accum_steps().to_string()),
                        ("total", &cfg.total_batch_size.to_string()),
                    ],
                ),
            ),
            (
                tr.cli.row_settings,
                fill(
                    tr.cli.settings_bng,
                    &[
                        ("compile", if cfg.use_compile { "True" } else { "False" }),
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
        Program::BuildNanoGpt,
        &peaks,
    );
    if let Some(r) = fixes {
        out.blank();
        let view = fixes::view(r, cfg, budget.other_bytes);
        if view.largest.is_some() {
            out.line(largest_line(tr, Program::BuildNanoGpt, &view));
        }
        out.line(fill(tr.cli.heading, &[("text", tr.fixes_heading)]));
        ranked_fix_table(&mut out, tr, Program::BuildNanoGpt, &view.fixes);
    }
    notes(&mut out, tr, &warnings(tr.cli, cfg));
    out.into_string()
}
