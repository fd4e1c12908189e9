//! rasbt/LLMs-from-scratch's `ch05/01_main-chapter-code/gpt_train.py` at 28c65cdf (*Build a Large
//! Language Model (From Scratch)*, chapter 5: pretraining on the-verdict.txt): its dicts' settings
//! and asserts (`config`), its loop and hand-written GPT as the allocator sees them
//! (`sequence`), and the fixes with its own keys (`fixes`). Numbers are for PyTorch 2.11, fp32,
//! checked against runs of the real script (`data/measured/llms-from-scratch-ch05.jsonl`).

/// The seam's methods every LLMs-from-scratch program forwards the same way to its own folder
/// (`analyze`, `config`, `fixes`, `answer`, `explain`): one text, expanded in each impl.
macro_rules! lfs_forwards {
    ($config:ty, $analysis:ty, $fixes:ty) => {
        lfs_forwards!(
            $config,
            $analysis,
            $fixes,
            <$config>::default(),
            <$config>::from_args
        );
    };
    // a program whose settings start from other defaults than its config type's
    ($config:ty, $analysis:ty, $fixes:ty, $defaults:expr, $from_flags:expr) => {
        type Config = $config;
        type Analysis = $analysis;
        type Fixes = $fixes;
        type Settings = answer::Settings;
        type Answer = answer::Answer;
        type FixAnswer = answer::FixAnswer;

        fn settings(c: &$config) -> answer::Settings {
            answer::settings(c)
        }

        fn answer(
            a: &$analysis,
            fixes: Option<&$fixes>,
            _budget: &Budget,
            _mfu: f64,
        ) -> answer::Answer {
            answer::answer(a, fixes)
        }

        fn fix_answers(a: &$analysis, fixes: &$fixes, _budget: &Budget) -> Vec<answer::FixAnswer> {
            answer::fix_answers(a, fixes)
        }

        /// The scripts take no settings on their line (ch06 and ch07 only `--test_mode`, a CPU
        /// toy): the line says which allocator, and the page's settings stay.
        fn config_from_launch(
            current: &$config,
            launch: &crate::input::command_line::Launch,
            _line: &str,
        ) -> Result<crate::programs::seam::Read<$config>, ConfigError> {
            let mut cfg = current.clone();
            launch.check_script_args()?;
            for (k, v) in launch.launcher_settings() {
                cfg.set(k, &v)?;
            }
            cfg.validate()?;
            Ok(crate::programs::seam::Read::config(cfg, 1))
        }

        fn fixes_view(
            fixes: &$fixes,
            from: &$config,
            freed: u128,
        ) -> crate::programs::fix_view::FixesView {
            fixes::view(fixes, from, freed)
        }

        fn formula(
            a: &$analysis,
            term: crate::Term,
            bytes: u128,
        ) -> crate::programs::seam::Formula {
            explain::formula(term, &a.config, bytes)
        }

        fn default_config() -> $config {
            $defaults
        }

        fn config_from_flags(flags: &[String]) -> Result<$config, ConfigError> {
            ($from_flags)(flags)
        }

        fn json_flag(
            key: &str,
            value: &crate::input::json_config::Setting,
        ) -> Result<Option<String>, ConfigError> {
            crate::input::json_config::constant_flag(key, value)
        }

        fn analyze(cfg: &$config, budget: &Budget) -> Result<$analysis, ConfigError> {
            analyze(cfg, budget)
        }

        fn run(a: &$analysis) -> &Run {
            &a.run
        }

        fn replay(cfg: &$config, budget: &Budget) -> Result<Run, ConfigError> {
            analyze(cfg, budget).map(|a| a.run)
        }

        fn rank_fixes(cfg: &$config, budget: &Budget, _mfu: f64) -> Option<$fixes> {
            fixes::rank_fixes(cfg, budget)
        }

        fn get(cfg: &$config, key: &str) -> Option<String> {
            cfg.get(key)
        }

        fn set(cfg: &mut $config, key: &str, raw: &str) -> Result<(), ConfigError> {
            let mut new = cfg.clone();
            new.set(key, raw.trim())?;
            *cfg = new;
            Ok(())
        }

        fn validate(cfg: &$config) -> Result<(), ConfigError> {
            cfg.validate()
        }

        fn changed(cfg: &$config) -> Vec<(String, String)> {
            cfg.changed()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect()
        }
    };
}

pub mod answer;
pub mod ch06;
pub mod ch07;
pub mod config;
pub mod explain;
pub mod fixes;
pub mod report;
pub mod sequence;
pub mod speed;

pub use config::Ch05Config;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// A gpt_train.py run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch05Analysis {
    pub config: Ch05Config,
    pub run: Run,
}

impl std::ops::Deref for Ch05Analysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &Ch05Config, budget: &Budget) -> Result<Ch05Analysis, ConfigError> {
    cfg.validate()?;
    let sequence = generate(cfg, &budget.gpu);
    Ok(Ch05Analysis {
        config: cfg.clone(),
        run: Run::replay(sequence, cfg.allocator, budget.allocator_cap())?,
    })
}

/// Whether `cfg` runs on `budget`'s card (one replay).
pub fn fits_on_card(cfg: &Ch05Config, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && crate::engine::run::fits(
            &generate(cfg, &budget.gpu),
            cfg.allocator,
            budget.allocator_cap(),
        )
}

/// The run of `cfg`'s script, as rank 0 holds it (the most: the sample runs there), on a
/// user's first run of a compiled script (an empty Inductor cache).
fn generate(cfg: &Ch05Config, gpu: &crate::gpu::Gpu) -> crate::engine::events::Sequence {
    match cfg.script {
        config::Script::GptTrain => sequence::generate(cfg, gpu),
        config::Script::Speed => speed::generate(cfg, gpu, true, 0),
    }
}

/// One batch per optimizer step on every process, no accumulation: gpt_train.py's one GPU, or
/// 02_opt_multi_gpu_ddp.py's ranks (counted as nanoGPT counts accumulation steps, one micro-batch
/// each). The page's summary and the JSON answer both read it.
pub fn batch(c: &Ch05Config) -> crate::programs::seam::Batch {
    let sequences = u64::from(c.batch_size) * u64::from(c.nproc_per_node);
    crate::programs::seam::Batch {
        micro: u64::from(c.batch_size),
        steps: u64::from(c.nproc_per_node),
        sequences,
        tokens: sequences * u64::from(c.context_length),
    }
}

/// Parameters of `GPTModel(cfg)`: untied `tok_emb` and `out_head` (V·C each), `pos_emb`
/// (context_length·C), per block 12·C² weights and 10·C biases and LayerNorm scales and shifts
/// (3·C more with `qkv_bias`), the final LayerNorm.
pub fn params(cfg: &Ch05Config) -> u64 {
    let (v, c, t, l) = (
        u64::from(cfg.vocab_size),
        u64::from(cfg.emb_dim),
        u64::from(cfg.context_length),
        u64::from(cfg.n_layers),
    );
    let qkv_bias = if cfg.qkv_bias { 3 * c } else { 0 };
    2 * v * c + t * c + l * (12 * c * c + 10 * c + qkv_bias) + 2 * c
}

/// LLMs-from-scratch's ch05 `gpt_train.py` behind the seam.
pub struct GptTrain;

use crate::programs::inputs::{self, Group, Input, Section};
use crate::programs::seam::{Paste, Read};

impl crate::programs::TrainingProgram for GptTrain {
    lfs_forwards!(Ch05Config, Ch05Analysis, fixes::Ch05FixReport);

    const ID: &'static str = "llms-from-scratch-ch05";
    const SCRIPT: &'static str = "gpt_train.py";
    const NAME: &'static str = "LLMs-from-scratch gpt_train.py";
    const LAUNCH_WORDS: &'static [&'static str] = &["gpt_train.py"];
    /// The script trains on one GPU (no DDP): a count other than 1 is refused.
    const PROCESSES_KEY: &'static str = "nproc_per_node";
    const MULTI_GPU: bool = false;
    const WORDS: &'static str = "llms-from-scratch-ch05";
    const HINTED: &'static [&'static str] = config::KEYS;
    const FIX_KINDS: &'static [&'static str] = &fixes::Ch05FixKind::IDS;
    const EMBED_SETTINGS: &'static [(&'static str, &'static [f64])] = &[
        ("batch_size", &[1., 2., 4., 8., 16., 32.]),
        ("context_length", &[128., 256., 512., 1024., 2048.]),
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
                Input::number("batch_size", &[1., 2., 4., 8., 16., 32., 64.]),
                Input::number("context_length", &[64., 128., 256., 512., 1024., 2048.]),
                Input::number("num_epochs", &[1., 2., 5., 10., 20., 50.]),
                Input::number(
                    "train_tokens",
                    &[1000., 4612., 20000., 100_000., 1_000_000., 10_000_000.],
                ),
                Input::number(
                    "val_tokens",
                    &[0., 534., 2000., 10_000., 100_000., 1_000_000.],
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

    /// The script's dicts as it writes them (`"context_length": 1024,  # …`), over the page's.
    fn config_from_text(
        current: &Ch05Config,
        _on_page: bool,
        text: &str,
    ) -> Option<Result<Read<Ch05Config>, ConfigError>> {
        current
            .read_pasted_dicts(text)
            .map(|r| r.map(|(cfg, n)| Read::config(cfg, n)))
    }

    /// The two dicts as the script writes them.
    fn export(c: &Ch05Config) -> Vec<(Paste, String)> {
        vec![(Paste::Config, config::dicts(c))]
    }

    fn batch(c: &Ch05Config) -> crate::programs::seam::Batch {
        batch(c)
    }

    /// gpt_train.py reads no arguments: its settings are its dicts.
    fn check_script_args(args: &[String]) -> Result<(), ConfigError> {
        match args.first() {
            Some(a) => Err(ConfigError::new(
                "command",
                a,
                crate::error::Problem::Assertion {
                    message: "gpt_train.py takes no arguments: give its dicts' keys as \
                              --context_length=1024 --batch_size=4 … (or paste its dicts)"
                        .into(),
                },
            )),
            None => Ok(()),
        }
    }

    fn params_reported(a: &Ch05Analysis) -> u64 {
        params(&a.config)
    }

    /// The one assert (heads divide the width): the head count back to the script's, the rest
    /// kept.
    fn repair(cfg: &mut Ch05Config) -> Vec<ConfigError> {
        let Err(e) = cfg.validate() else {
            return Vec::new();
        };
        cfg.n_heads = cfg.defaults().n_heads;
        if cfg.validate().is_err() {
            *cfg = Ch05Config {
                allocator: cfg.allocator,
                nproc_per_node: cfg.nproc_per_node,
                ddp: cfg.ddp,
                ..cfg.defaults()
            };
        }
        vec![e]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::Program;

    /// The dicts pasted as the book prints them, from any page: gpt_train.py's settings, not a
    /// train.py config file (whose reader would take the dict for one statement it cannot read).
    #[test]
    fn a_pasted_dict_is_this_programs() {
        let text = "GPT_CONFIG_124M = {\n    \"vocab_size\": 50257,\n    \"context_length\": 1024,  \
                    # Shortened context length (orig: 1024)\n    \"emb_dim\": 768,\n    \"n_heads\": 12,\n    \
                    \"n_layers\": 12,\n    \"drop_rate\": 0.1,\n    \"qkv_bias\": False\n}\n\
                    OTHER_SETTINGS = {\"learning_rate\": 5e-4, \"num_epochs\": 10, \"batch_size\": 4}";
        let out = crate::paste::interpret(text, &crate::input::query::PageState::default());
        assert_eq!(out.state.program, Program::LfsCh05);
        assert!(out.error.is_none() && out.skipped.is_empty());
        let cfg = Ch05Config::from_args(&["--context_length=1024", "--batch_size=4"]).unwrap();
        assert!(out
            .state
            .configs
            .holds(&crate::programs::ProgramConfig::LfsCh05(cfg)));
    }

    #[test]
    fn parameters_as_the_book_counts_them() {
        // chapter 5: 163,009,536 at context 1024 (GPT-2 small with an untied output head)
        let c = Ch05Config::from_args(&["--context_length=1024"]).unwrap();
        assert_eq!(params(&c), 163_009_536);
    }
}
