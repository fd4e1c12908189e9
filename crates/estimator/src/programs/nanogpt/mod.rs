//! karpathy/nanoGPT's `train.py`: its config and configurator, parameter count, memory physics
//! (the closed form), allocation sequence, DDP, speed, fixes and config snippets.

pub mod allocator_rounding;
pub mod analysis;
pub mod answer;
pub mod closed_verdict;
pub mod config;
pub mod configurator;
pub mod ddp;
pub mod estimate;
pub mod explain;
pub mod fixes;
pub mod params;
pub mod physics;
pub mod report;
pub mod sequence;
pub mod snippet;
pub mod speed;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;
use crate::programs::inputs::{self, as_written, Group, Input, Label, Section};
use crate::pyliteral::PyValue;
use config::{Attention, Dtype, TrainConfig};

/// nanoGPT's `train.py` behind the seam.
pub struct NanoGpt;

impl crate::programs::TrainingProgram for NanoGpt {
    const ID: &'static str = "nanogpt";
    const SCRIPT: &'static str = "train.py";
    const NAME: &'static str = "nanoGPT train.py";
    const LAUNCH_WORDS: &'static [&'static str] = &["train.py"];
    /// train.py reads `WORLD_SIZE` from torchrun; vramfit's setting for it.
    const PROCESSES_KEY: &'static str = "world_size";
    const ONE_GPU_DDP: Option<crate::programs::seam::OneGpuDdp> =
        Some(crate::programs::seam::OneGpuDdp {
            key: "torchrun",
            when: crate::programs::seam::DdpLaunch::Torchrun,
        });
    const WORDS: &'static str = "nanogpt";
    const HINTED: &'static [&'static str] = crate::FIELDS_JSON_ORDER;
    const FIX_KINDS: &'static [&'static str] = &fixes::FixKind::IDS;
    const OWN_WORDS: &'static [&'static str] = &[
        "ddp_worst_rank",
        "ddp_rank0_eval",
        "ddp_accum_per_rank",
        "ddp_time",
        "ddp_reserved",
    ];
    const EMBED_SETTINGS: &'static [(&'static str, &'static [f64])] = &[
        (
            "batch_size",
            &[1., 2., 4., 6., 8., 12., 16., 24., 32., 48., 64., 128., 256.],
        ),
        (
            "gradient_accumulation_steps",
            &[1., 2., 4., 5., 8., 16., 32., 40., 64., 128.],
        ),
        ("block_size", &[128., 256., 512., 1024., 2048., 4096.]),
    ];
    const SPEED_FROM_MFU: bool = true;
    const CONFIG_FILES: bool = true;
    const INPUTS: &'static [Group] = &[
        Group {
            section: Section::Model,
            inputs: &[
                Input::ModelPresets,
                Input::number(
                    "n_layer",
                    &[
                        1., 2., 3., 4., 6., 8., 12., 16., 20., 24., 32., 36., 40., 48., 64., 96.,
                    ],
                ),
                Input::number(
                    "n_head",
                    &[
                        1., 2., 3., 4., 6., 8., 12., 16., 20., 25., 32., 40., 48., 64.,
                    ],
                ),
                Input::number(
                    "n_embd",
                    &[
                        64., 128., 192., 256., 384., 512., 576., 640., 768., 1024., 1280., 1536.,
                        1600., 2048., 2560., 3072., 4096., 5120., 6144., 8192.,
                    ],
                ),
                Input::Vocab,
                Input::Number {
                    key: "dropout",
                    steps: &[0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5],
                    float: true,
                },
                Input::Toggle { key: "bias" },
            ],
        },
        Group {
            section: Section::Batch,
            inputs: &[
                Input::number(
                    "batch_size",
                    &[
                        1., 2., 3., 4., 6., 8., 12., 16., 24., 32., 48., 64., 96., 128., 192.,
                        256., 384., 512., 1024.,
                    ],
                ),
                Input::number(
                    "gradient_accumulation_steps",
                    &[
                        1., 2., 4., 5., 8., 10., 16., 20., 32., 40., 64., 80., 128., 256., 512.,
                        1024.,
                    ],
                ),
                Input::number(
                    "block_size",
                    &[
                        64., 128., 256., 512., 768., 1024., 2048., 4096., 8192., 16384., 32768.,
                    ],
                ),
                Input::BatchLine,
            ],
        },
        Group {
            section: Section::Precision,
            inputs: &[
                Input::Choice {
                    key: "dtype",
                    options: &[
                        as_written(Dtype::Bfloat16.as_str()),
                        as_written(Dtype::Float16.as_str()),
                        as_written(Dtype::Float32.as_str()),
                    ],
                },
                Input::Toggle { key: "compile" },
                Input::Choice {
                    key: "attention",
                    options: &[
                        (Attention::Flash.as_str(), Label::AttentionFlash),
                        (Attention::Manual.as_str(), Label::AttentionManual),
                    ],
                },
                Input::Choice {
                    key: "allocator",
                    options: inputs::ALLOCATORS,
                },
            ],
        },
        Group {
            section: Section::Eval,
            inputs: &[
                Input::number(
                    "eval_iters",
                    &[1., 10., 20., 40., 50., 100., 200., 500., 1000.],
                ),
                Input::EvalItersNote,
            ],
        },
    ];

    const REPORT_WORDS: &'static [&'static str] = report::WORDS;

    fn report(
        a: &analysis::Analysis,
        _fixes: Option<&fixes::FixReport>,
        budget: &Budget,
        mfu: f64,
    ) -> crate::programs::report::Report {
        report::report(a, budget, mfu)
    }

    type Settings = answer::Settings;
    type Answer = answer::Answer;
    type FixAnswer = answer::FixAnswer;

    fn settings(c: &TrainConfig) -> answer::Settings {
        answer::settings(c)
    }

    fn answer(
        a: &analysis::Analysis,
        fixes: Option<&fixes::FixReport>,
        budget: &Budget,
        mfu: f64,
    ) -> answer::Answer {
        answer::answer(a, fixes, budget, mfu)
    }

    fn fix_answers(
        a: &analysis::Analysis,
        fixes: &fixes::FixReport,
        budget: &Budget,
    ) -> Vec<answer::FixAnswer> {
        answer::fix_answers(a, fixes, budget)
    }

    type Config = TrainConfig;
    type Analysis = analysis::Analysis;
    type Fixes = fixes::FixReport;

    /// The config lines that differ from train.py's defaults, the command line, the allocator's
    /// environment; nothing at train.py's defaults.
    fn export(c: &TrainConfig) -> Vec<(crate::programs::seam::Paste, String)> {
        use crate::programs::seam::Paste;
        let config = crate::snippet::config_file(c, None);
        let env = crate::snippet::env_line(c);
        if config.is_empty() && env.is_none() {
            return Vec::new();
        }
        let mut out = Vec::new();
        if !config.is_empty() {
            out.push((Paste::ConfigOverrides, config));
        }
        out.push((Paste::Command, crate::snippet::command_line(c, None)));
        out.extend(env.map(|e| (Paste::Env, e)));
        out
    }

    fn fixes_view(
        fixes: &fixes::FixReport,
        from: &TrainConfig,
        freed: u128,
    ) -> crate::programs::fix_view::FixesView {
        fixes::view(fixes, from, freed)
    }

    fn diagnose(
        c: &TrainConfig,
        message: &crate::oom::OomMessage,
    ) -> Option<crate::oom::Diagnosis> {
        crate::oom::diagnose(message, c)
    }

    /// On several GPUs its speed estimate needs the link between them.
    fn asks_link(c: &TrainConfig) -> bool {
        c.is_multi_gpu()
    }

    fn batch(c: &TrainConfig) -> crate::programs::seam::Batch {
        crate::programs::seam::Batch {
            micro: u64::from(c.batch_size),
            steps: u64::from(c.gradient_accumulation_steps),
            sequences: c.effective_batch(),
            tokens: c.tokens_per_iter(),
        }
    }

    fn formula(
        a: &analysis::Analysis,
        term: crate::Term,
        bytes: u128,
    ) -> crate::programs::seam::Formula {
        explain::formula(term, &a.estimate.config, a.estimate.params.total, bytes)
    }

    fn default_config() -> TrainConfig {
        TrainConfig::default()
    }

    /// train.py's configurator over the line: its config files (nanoGPT's own by their known
    /// text) and `--key=value` settings in order, from train.py's defaults.
    fn config_from_launch(
        _current: &TrainConfig,
        _launch: &crate::input::command_line::Launch,
        line: &str,
    ) -> Result<crate::programs::seam::Read<TrainConfig>, ConfigError> {
        let mut conf = configurator::Configurator::new();
        let cl = conf.apply_command_line(line)?;
        let (mut cfg, skipped) = conf.finish()?;
        if cl.expandable_segments {
            cfg.allocator = config::Allocator::ExpandableSegments;
        }
        Ok(crate::programs::seam::Read {
            config: cfg,
            skipped,
            unknown_files: cl.unknown_files,
            applied: 1,
        })
    }

    /// A config file's lines: they edit the page's settings (`batch_size = 4` changes the batch,
    /// nothing else), as a config file edits train.py's defaults; shown on another program's
    /// page, they start from train.py's defaults.
    fn config_from_text(
        current: &TrainConfig,
        on_page: bool,
        text: &str,
    ) -> Option<Result<crate::programs::seam::Read<TrainConfig>, ConfigError>> {
        let mut conf = configurator::Configurator::new();
        if on_page {
            conf.cfg = current.clone();
        }
        conf.apply_file("pasted text", text);
        // statements, as the configurator reads them: a dict over several lines is one (another
        // script's, LLMs-from-scratch's `GPT_CONFIG_124M = {…}`, which train.py cannot read)
        let lines = configurator::logical_lines(text)
            .into_iter()
            .filter(|(_, l)| !configurator::strip_comment(l).trim().is_empty())
            .count();
        let applied = lines.saturating_sub(conf.skipped.len());
        if applied == 0 {
            return None;
        }
        Some(
            conf.finish()
                .map(|(config, skipped)| crate::programs::seam::Read {
                    config,
                    skipped,
                    unknown_files: Vec::new(),
                    applied,
                }),
        )
    }

    /// A file in a `config/` folder (`config/train_gpt2.py`, `./nanoGPT/config/finetune_shakespeare.py`).
    fn names_config_file(word: &str) -> bool {
        word.ends_with(".py") && word.rsplit('/').nth(1).is_some_and(|dir| dir == "config")
    }

    /// train.py's configurator: config files and `--key=value` overrides, in order; the config
    /// files' lines it could not apply are said.
    fn config_from_args(
        args: &[crate::programs::seam::ScriptArg],
    ) -> Result<(TrainConfig, Vec<String>), ConfigError> {
        use crate::programs::seam::ScriptArg;
        let mut conf = configurator::Configurator::new();
        for a in args {
            match a {
                ScriptArg::Flag(f) => conf.apply_override(f)?,
                ScriptArg::File { path, text } => conf.apply_file(path, text),
            }
        }
        let (cfg, skipped) = conf.finish()?;
        Ok((cfg, skipped.iter().map(ToString::to_string).collect()))
    }

    /// train.py's configurator: config files and `--key=value` overrides, in order.
    fn config_from_flags(flags: &[String]) -> Result<TrainConfig, ConfigError> {
        let mut conf = configurator::Configurator::new();
        for f in flags {
            conf.apply_override(f)?;
        }
        Ok(conf.finish()?.0)
    }

    fn json_flag(
        key: &str,
        value: &crate::input::json_config::Setting,
    ) -> Result<Option<String>, ConfigError> {
        crate::input::json_config::python_flag(key, value)
    }

    fn analyze(cfg: &TrainConfig, budget: &Budget) -> Result<analysis::Analysis, ConfigError> {
        analysis::analyze(cfg, budget)
    }

    fn run(a: &analysis::Analysis) -> &Run {
        &a.run
    }

    /// The replay without the closed form, which only explains it.
    fn replay(cfg: &TrainConfig, budget: &Budget) -> Result<Run, ConfigError> {
        analysis::replay_patched(cfg, budget, physics::Patches::default())
    }

    fn params_reported(a: &analysis::Analysis) -> u64 {
        a.estimate.params.reported
    }

    /// Every fix checked by replay (`exact`).
    fn rank_fixes(cfg: &TrainConfig, budget: &Budget, mfu: f64) -> Option<fixes::FixReport> {
        fixes::rank_fixes(cfg, budget, mfu, true)
    }

    fn get(cfg: &TrainConfig, key: &str) -> Option<String> {
        cfg.get(key).map(|v| crate::query::query_value(&v))
    }

    fn set(cfg: &mut TrainConfig, key: &str, raw: &str) -> Result<(), ConfigError> {
        if config::field(key).is_none() {
            return Err(ConfigError::new(
                key,
                raw,
                crate::error::Problem::UnknownKey,
            ));
        }
        let mut new = cfg.clone();
        new.set(key, &lenient_value(raw))?;
        *cfg = new;
        Ok(())
    }

    fn validate(cfg: &TrainConfig) -> Result<(), ConfigError> {
        cfg.validate()
    }

    fn changed(cfg: &TrainConfig) -> Vec<(String, String)> {
        let d = TrainConfig::default();
        config::FIELDS_JSON_ORDER
            .iter()
            .filter_map(|key| {
                let (v, dv) = (cfg.get(key)?, d.get(key)?);
                (v != dv).then(|| (key.to_string(), crate::query::query_value(&v)))
            })
            .collect()
    }

    /// train.py's relations between fields: a head count that does not divide the width (the
    /// width and heads back to GPT-2's), accumulation steps the processes cannot share (one
    /// process).
    fn repair(cfg: &mut TrainConfig) -> Vec<ConfigError> {
        let mut refused = Vec::new();
        for _ in 0..2 {
            let Err(e) = cfg.validate() else {
                break;
            };
            let d = TrainConfig::default();
            if e.key == "gradient_accumulation_steps" {
                cfg.world_size = d.world_size;
            } else {
                cfg.n_embd = d.n_embd;
                cfg.n_head = d.n_head;
            }
            refused.push(e);
        }
        refused
    }
}

/// A URL's or an input's value as people type it: `true`, `False`, `8`, `float16`, `'float16'`.
fn lenient_value(raw: &str) -> PyValue {
    match raw.trim() {
        "true" | "True" => PyValue::Bool(true),
        "false" | "False" => PyValue::Bool(false),
        t => configurator::parse_override_value(t),
    }
}
