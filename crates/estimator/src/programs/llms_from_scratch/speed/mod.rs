//! rasbt/LLMs-from-scratch's `ch05/10_llm-training-speed/01_opt_single_gpu.py` and
//! `02_opt_multi_gpu_ddp.py` at 28c65cdf: chapter 5's pretraining made fast — torch.compile, bf16
//! weights, fused AdamW, SDPA, Middlemarch as the text. They read chapter 5's dicts, so they
//! share its config (`Script::Speed` chooses their defaults and this run), fixes, report and
//! answer; their run as the allocator sees it is `sequence`, their formulas `explain`. Checked
//! against runs of the real scripts (`data/measured/llms-from-scratch-ch05-speed.jsonl`).

pub mod explain;
pub mod sequence;

pub use sequence::{ddp_ready_order, generate, replay};

use super::config::{self, Ch05Config};
use super::{answer, fixes, report, Ch05Analysis};
use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;
use crate::programs::inputs::{self, Group, Input, Section};
use crate::programs::seam::{Paste, Read};

/// The speed scripts behind the seam.
pub struct GptTrainSpeed;

/// `super::analyze` for the speed scripts' settings, with the seam's signature.
fn analyze(cfg: &Ch05Config, budget: &Budget) -> Result<Ch05Analysis, ConfigError> {
    super::analyze(cfg, budget)
}

impl crate::programs::TrainingProgram for GptTrainSpeed {
    lfs_forwards!(
        Ch05Config,
        Ch05Analysis,
        fixes::Ch05FixReport,
        Ch05Config::speed(),
        |flags: &[String]| Ch05Config::speed().with_args(flags)
    );

    const ID: &'static str = "llms-from-scratch-ch05-speed";
    const SCRIPT: &'static str = "01_opt_single_gpu.py";
    const NAME: &'static str = "LLMs-from-scratch 01_opt_single_gpu.py";
    const LAUNCH_WORDS: &'static [&'static str] = &["01_opt_single_gpu.py", config::DDP_SCRIPT];
    /// More than one process: `02_opt_multi_gpu_ddp.py` under torchrun.
    const PROCESSES_KEY: &'static str = "nproc_per_node";
    const MULTI_GPU: bool = true;
    /// `02_opt_multi_gpu_ddp.py` on one GPU, however started, is DDP at world size 1.
    const ONE_GPU_DDP: Option<crate::programs::seam::OneGpuDdp> =
        Some(crate::programs::seam::OneGpuDdp {
            key: "ddp",
            when: crate::programs::seam::DdpLaunch::Script(config::DDP_SCRIPT),
        });
    const WORDS: &'static str = "llms-from-scratch-ch05-speed";
    const HINTED: &'static [&'static str] = config::KEYS;
    const FIX_KINDS: &'static [&'static str] = &fixes::Ch05FixKind::IDS;
    const EMBED_SETTINGS: &'static [(&'static str, &'static [f64])] = &[
        ("batch_size", &[1., 2., 4., 8., 16., 32., 64.]),
        ("context_length", &[256., 512., 1024., 2048.]),
    ];
    const INPUTS: &'static [Group] = &[
        Group {
            section: Section::Model,
            inputs: &[
                Input::number("n_layers", &[2., 4., 6., 12., 24., 36., 48.]),
                Input::number("n_heads", &[4., 6., 8., 12., 16., 20., 25.]),
                Input::number("emb_dim", &[256., 384., 512., 768., 1024., 1280., 1600.]),
                Input::Number {
                    key: "drop_rate",
                    steps: &[0.0, 0.05, 0.1, 0.2, 0.3, 0.5],
                    float: true,
                },
                Input::Choice {
                    key: "qkv_bias",
                    options: inputs::PY_BOOL,
                },
            ],
        },
        Group {
            section: Section::Batch,
            inputs: &[
                Input::number("batch_size", &[1., 2., 4., 8., 16., 32., 64., 128.]),
                Input::number("context_length", &[128., 256., 512., 1024., 2048., 4096.]),
                Input::number("num_epochs", &[1., 2., 5., 10., 15., 50.]),
                Input::number(
                    "train_tokens",
                    &[10_000., 100_000., 430_000., 1_000_000., 10_000_000.],
                ),
                Input::number(
                    "val_tokens",
                    &[0., 2000., 10_000., 47_800., 100_000., 1_000_000.],
                ),
                Input::BatchLine,
            ],
        },
        Group {
            section: Section::Precision,
            inputs: &[Input::Choice {
                key: "allocator",
                options: inputs::ALLOCATORS,
            }],
        },
    ];

    const REPORT_WORDS: &'static [&'static str] = report::WORDS;

    fn report(
        a: &Ch05Analysis,
        _fixes: Option<&fixes::Ch05FixReport>,
        _budget: &Budget,
        _mfu: f64,
    ) -> crate::programs::report::Report {
        report::report(a)
    }

    fn notes(a: &Ch05Analysis) -> Vec<&'static str> {
        report::notes(&a.config)
    }

    /// The dicts as the book writes them, over the page's.
    fn config_from_text(
        current: &Ch05Config,
        _on_page: bool,
        text: &str,
    ) -> Option<Result<Read<Ch05Config>, ConfigError>> {
        current
            .read_pasted_dicts(text)
            .map(|r| r.map(|(cfg, n)| Read::config(cfg, n)))
    }

    fn export(c: &Ch05Config) -> Vec<(Paste, String)> {
        vec![(Paste::Config, config::dicts(c))]
    }

    fn batch(c: &Ch05Config) -> crate::programs::seam::Batch {
        super::batch(c)
    }

    /// The scripts read no arguments: their settings are their dicts.
    fn check_script_args(args: &[String]) -> Result<(), ConfigError> {
        match args.first() {
            Some(a) => Err(ConfigError::new(
                "command",
                a,
                crate::error::Problem::Assertion {
                    message: "01_opt_single_gpu.py and 02_opt_multi_gpu_ddp.py take no arguments: \
                              give their dicts' keys as --context_length=1024 --batch_size=16 … \
                              (or paste the dicts)"
                        .into(),
                },
            )),
            None => Ok(()),
        }
    }

    fn params_reported(a: &Ch05Analysis) -> u64 {
        super::params(&a.config)
    }

    fn repair(cfg: &mut Ch05Config) -> Vec<ConfigError> {
        <super::GptTrain as crate::programs::TrainingProgram>::repair(cfg)
    }
}
