//! karpathy/build-nanogpt's `train_gpt2.py` at 6104ab1 ("Let's reproduce GPT-2 (124M)"): its
//! constants and asserts (`config`), its loop around nanoGPT's GPT-2 model (`sequence`), and the
//! fixes with its own knobs (`fixes`). Numbers are for PyTorch 2.11 with bf16 autocast, checked
//! against runs of the real script (`data/measured/build-nanogpt*.jsonl`).

pub mod answer;
pub mod config;
pub mod fixes;
pub mod report;
pub mod sequence;

pub use config::BngConfig;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// A train_gpt2.py run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct BngAnalysis {
    pub config: BngConfig,
    pub run: Run,
}

impl std::ops::Deref for BngAnalysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

impl BngAnalysis {
    /// Parameters as the model holds them (the tied embedding counted once).
    pub fn params(&self) -> u64 {
        crate::params::ParamCounts::of(&self.config.model()).total
    }
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &BngConfig, budget: &Budget) -> Result<BngAnalysis, ConfigError> {
    cfg.validate()?;
    let sequence = sequence::generate(cfg, &budget.gpu);
    let run = Run::replay(sequence, cfg.allocator, budget.allocator_cap())?;
    // under DDP, tight where the run fits only if NCCL let go of the old bucket in time
    let run = if cfg.model().is_ddp() {
        crate::programs::nanogpt::analysis::judge_alone(run, || {
            crate::engine::run::fits(
                &sequence::generate_rank(cfg, &budget.gpu, !cfg.use_compile, true),
                cfg.allocator,
                budget.allocator_cap(),
            )
        })
    } else {
        run
    };
    Ok(BngAnalysis {
        config: cfg.clone(),
        run,
    })
}

/// Whether `cfg` runs on `budget`'s card (one replay).
pub fn fits_on_card(cfg: &BngConfig, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && crate::engine::run::fits(
            &sequence::generate(cfg, &budget.gpu),
            cfg.allocator,
            budget.allocator_cap(),
        )
}

/// build-nanogpt's `train_gpt2.py` behind the seam.
pub struct BuildNanoGpt;

use crate::programs::inputs::{self, Group, Input, Section};

impl crate::programs::TrainingProgram for BuildNanoGpt {
    const ID: &'static str = "build-nanogpt";
    const SCRIPT: &'static str = "train_gpt2.py";
    const NAME: &'static str = "build-nanogpt train_gpt2.py";
    const LAUNCH_WORDS: &'static [&'static str] = &["train_gpt2.py"];
    const PROCESSES_KEY: &'static str = "nproc_per_node";
    /// train_gpt2.py wraps the model in DDP whenever torchrun sets `RANK`, one process or more.
    const ONE_GPU_DDP: Option<crate::programs::seam::OneGpuDdp> =
        Some(crate::programs::seam::OneGpuDdp {
            key: "torchrun",
            when: crate::programs::seam::DdpLaunch::Torchrun,
        });
    const WORDS: &'static str = "build-nanogpt";
    const HINTED: &'static [&'static str] = config::KEYS;
    const FIX_KINDS: &'static [&'static str] = &fixes::BngFixKind::IDS;
    const EMBED_SETTINGS: &'static [(&'static str, &'static [f64])] = &[
        ("B", &[1., 2., 4., 8., 16., 32., 64.]),
        ("T", &[256., 512., 1024., 2048., 4096.]),
    ];
    const INPUTS: &'static [Group] = &[
        Group {
            section: Section::Model,
            inputs: &[
                Input::number("n_layer", &[2., 4., 6., 8., 12., 16., 24., 36., 48.]),
                Input::number("n_head", &[4., 6., 8., 12., 16., 20., 25.]),
                Input::number("n_embd", &[256., 384., 512., 768., 1024., 1280., 1600.]),
            ],
        },
        Group {
            section: Section::Batch,
            inputs: &[
                Input::number("B", &[1., 2., 4., 8., 16., 32., 64., 128.]),
                Input::number("T", &[64., 128., 256., 512., 1024.]),
                Input::number(
                    "total_batch_size",
                    &[16384., 32768., 65536., 131072., 262144., 524288., 1048576.],
                ),
                Input::BatchLine,
            ],
        },
        Group {
            section: Section::Precision,
            inputs: &[
                Input::Choice {
                    key: "use_compile",
                    options: inputs::PY_BOOL,
                },
                Input::Choice {
                    key: "allocator",
                    options: inputs::ALLOCATORS,
                },
            ],
        },
    ];

    const REPORT_WORDS: &'static [&'static str] = report::WORDS;

    fn report(
        a: &BngAnalysis,
        _fixes: Option<&fixes::BngFixReport>,
        _budget: &Budget,
        _mfu: f64,
    ) -> crate::programs::report::Report {
        report::report(a)
    }

    fn notes(a: &BngAnalysis) -> Vec<&'static str> {
        report::notes(&a.config)
    }

    type Settings = answer::Settings;
    type Answer = answer::Answer;
    type FixAnswer = answer::FixAnswer;

    fn settings(c: &BngConfig) -> answer::Settings {
        answer::settings(c)
    }

    fn answer(
        a: &BngAnalysis,
        fixes: Option<&fixes::BngFixReport>,
        _budget: &Budget,
        _mfu: f64,
    ) -> answer::Answer {
        answer::answer(a, fixes)
    }

    fn fix_answers(
        a: &BngAnalysis,
        fixes: &fixes::BngFixReport,
        _budget: &Budget,
    ) -> Vec<answer::FixAnswer> {
        answer::fix_answers(a, fixes)
    }

    /// train_gpt2.py takes no arguments: the line says how many GPUs and which allocator, and
    /// the page's constants stay (the script's assert counts every process: refused as the
    /// script would refuse it).
    fn config_from_launch(
        current: &BngConfig,
        launch: &crate::input::command_line::Launch,
        _line: &str,
    ) -> Result<crate::programs::seam::Read<BngConfig>, ConfigError> {
        let mut cfg = current.clone();
        cfg.world_size = 1;
        launch.check_script_args()?;
        for (k, v) in launch.launcher_settings() {
            cfg.set(k, &v)?;
        }
        cfg.validate()?;
        Ok(crate::programs::seam::Read::config(cfg, 1))
    }

    /// The script's own constants (`B = 16 # micro batch size`, `GPTConfig(n_layer=24)`), over
    /// the page's.
    fn config_from_text(
        current: &BngConfig,
        _on_page: bool,
        text: &str,
    ) -> Option<Result<crate::programs::seam::Read<BngConfig>, ConfigError>> {
        let constant = |l: &str| {
            let code = l.split('#').next().unwrap_or("").trim();
            code.contains("GPTConfig(")
                || code.split_once('=').is_some_and(|(k, _)| {
                    ["B", "T", "total_batch_size", "use_compile"].contains(&k.trim())
                })
        };
        let lines = text.lines().filter(|l| constant(l)).count();
        if lines == 0 {
            return None;
        }
        let mut cfg = current.clone();
        Some(
            cfg.apply_script_lines(text)
                .and_then(|_| cfg.validate())
                .map(|()| crate::programs::seam::Read::config(cfg, lines)),
        )
    }

    type Config = BngConfig;
    type Analysis = BngAnalysis;
    type Fixes = fixes::BngFixReport;

    /// train_gpt2.py's constants as the script writes them.
    fn export(c: &BngConfig) -> Vec<(crate::programs::seam::Paste, String)> {
        vec![(crate::programs::seam::Paste::Config, config::constants(c))]
    }

    fn fixes_view(
        fixes: &fixes::BngFixReport,
        from: &BngConfig,
        freed: u128,
    ) -> crate::programs::fix_view::FixesView {
        fixes::view(fixes, from, freed)
    }

    fn batch(c: &BngConfig) -> crate::programs::seam::Batch {
        crate::programs::seam::Batch {
            micro: u64::from(c.b),
            steps: c.grad_accum_steps() * u64::from(c.world_size),
            sequences: c.total_batch_size / u64::from(c.t),
            tokens: c.total_batch_size,
        }
    }

    /// GPT-2's tensors as nanoGPT's formulas name them, at the length T it is fed.
    fn formula(a: &BngAnalysis, term: crate::Term, bytes: u128) -> crate::programs::seam::Formula {
        let model = crate::TrainConfig {
            block_size: a.config.t,
            ..a.config.model()
        };
        crate::explain::formula(term, &model, a.params(), bytes)
    }

    fn default_config() -> BngConfig {
        BngConfig::default()
    }

    fn config_from_flags(flags: &[String]) -> Result<BngConfig, ConfigError> {
        let cfg = BngConfig::from_args(flags)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// train_gpt2.py reads no arguments: its settings are constants in the file.
    fn check_script_args(args: &[String]) -> Result<(), ConfigError> {
        match args.first() {
            Some(a) => Err(ConfigError::new(
                "command",
                a,
                crate::error::Problem::Assertion {
                    message: "train_gpt2.py takes no arguments: give its constants as \
                              --B=16 --T=1024 … (or paste its lines, B = 16)"
                        .into(),
                },
            )),
            None => Ok(()),
        }
    }

    fn json_flag(
        key: &str,
        value: &crate::input::json_config::Setting,
    ) -> Result<Option<String>, ConfigError> {
        crate::input::json_config::constant_flag(key, value)
    }

    fn analyze(cfg: &BngConfig, budget: &Budget) -> Result<BngAnalysis, ConfigError> {
        analyze(cfg, budget)
    }

    fn run(a: &BngAnalysis) -> &Run {
        &a.run
    }

    fn replay(cfg: &BngConfig, budget: &Budget) -> Result<Run, ConfigError> {
        analyze(cfg, budget).map(|a| a.run)
    }

    fn params_reported(a: &BngAnalysis) -> u64 {
        a.params()
    }

    fn rank_fixes(cfg: &BngConfig, budget: &Budget, _mfu: f64) -> Option<fixes::BngFixReport> {
        fixes::rank_fixes(cfg, budget)
    }

    fn get(cfg: &BngConfig, key: &str) -> Option<String> {
        cfg.get(key)
    }

    fn set(cfg: &mut BngConfig, key: &str, raw: &str) -> Result<(), ConfigError> {
        let mut new = cfg.clone();
        new.set(key, raw.trim())?;
        *cfg = new;
        Ok(())
    }

    fn validate(cfg: &BngConfig) -> Result<(), ConfigError> {
        cfg.validate()
    }

    fn changed(cfg: &BngConfig) -> Vec<(String, String)> {
        cfg.changed()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    /// train_gpt2.py's asserts: the constants back to the script's, the layer count, the
    /// vocabulary, compile and the allocator kept.
    fn repair(cfg: &mut BngConfig) -> Vec<ConfigError> {
        let Err(e) = cfg.validate() else {
            return Vec::new();
        };
        *cfg = BngConfig {
            n_layer: cfg.n_layer,
            vocab_size: cfg.vocab_size,
            use_compile: cfg.use_compile,
            allocator: cfg.allocator,
            ..BngConfig::default()
        };
        vec![e]
    }
}
