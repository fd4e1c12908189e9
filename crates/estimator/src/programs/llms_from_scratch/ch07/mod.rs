//! rasbt/LLMs-from-scratch's `ch07/01_main-chapter-code/gpt_instruction_finetuning.py` at
//! 28c65cdf (*Build a Large Language Model (From Scratch)*, chapter 7: a pretrained GPT-2
//! fine-tuned to follow instructions, every parameter trained): its settings (`config`), its loop
//! over chapter 5's model (`sequence`) and its fixes, checked against runs of the real script
//! (`data/measured/llms-from-scratch-ch07.jsonl`).

pub mod answer;
pub mod config;
pub mod explain;
pub mod fixes;
pub mod report;
pub mod sequence;

pub use config::Ch07Config;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// A gpt_instruction_finetuning.py run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch07Analysis {
    pub config: Ch07Config,
    pub run: Run,
}

impl std::ops::Deref for Ch07Analysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &Ch07Config, budget: &Budget) -> Result<Ch07Analysis, ConfigError> {
    cfg.validate()?;
    let sequence = sequence::generate(cfg, &budget.gpu);
    Ok(Ch07Analysis {
        config: cfg.clone(),
        run: Run::replay(sequence, cfg.allocator, budget.allocator_cap())?,
    })
}

/// Whether `cfg` runs on `budget`'s card (one replay).
pub fn fits_on_card(cfg: &Ch07Config, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && crate::engine::run::fits(
            &sequence::generate(cfg, &budget.gpu),
            cfg.allocator,
            budget.allocator_cap(),
        )
}

/// The replayed run alone.
pub fn replay(cfg: &Ch07Config, budget: &Budget) -> Result<Run, ConfigError> {
    analyze(cfg, budget).map(|a| a.run)
}

/// Parameters of the fine-tuned GPT-2: `tok_emb` and an untied `out_head` (V·C each: the loader
/// gives the head its own copy of the embedding), `pos_emb` (1024·C), per block 12·C² weights and
/// 13·C biases and LayerNorm scales and shifts, the final LayerNorm.
pub fn params(cfg: &Ch07Config) -> u64 {
    let (c, l, _) = cfg.dims();
    let (c, l) = (u64::from(c), u64::from(l));
    2 * 50_257 * c + 1024 * c + l * (12 * c * c + 13 * c) + 2 * c
}

/// LLMs-from-scratch's ch07 `gpt_instruction_finetuning.py` behind the seam.
pub struct GptInstructionFinetuning;

use super::ch06::MODEL_OPTIONS;
use crate::programs::inputs::{self, Group, Input, Section};
use crate::programs::seam::{Paste, Read};

impl crate::programs::TrainingProgram for GptInstructionFinetuning {
    lfs_forwards!(Ch07Config, Ch07Analysis, fixes::Ch07FixReport);

    const ID: &'static str = "llms-from-scratch-ch07";
    const SCRIPT: &'static str = "gpt_instruction_finetuning.py";
    const NAME: &'static str = "LLMs-from-scratch gpt_instruction_finetuning.py";
    const LAUNCH_WORDS: &'static [&'static str] = &["gpt_instruction_finetuning.py"];
    /// The script fine-tunes on one GPU (no DDP): a count other than 1 is refused.
    const PROCESSES_KEY: &'static str = "nproc_per_node";
    const MULTI_GPU: bool = false;
    const WORDS: &'static str = "llms-from-scratch-ch07";
    const HINTED: &'static [&'static str] = config::KEYS;
    const FIX_KINDS: &'static [&'static str] = &fixes::Ch07FixKind::IDS;
    const EMBED_SETTINGS: &'static [(&'static str, &'static [f64])] = &[
        ("batch_size", &[1., 2., 4., 8., 16., 32.]),
        ("max_length", &[91., 256., 512., 1024.]),
    ];
    const INPUTS: &'static [Group] = &[
        Group {
            section: Section::Model,
            inputs: &[
                Input::Choice {
                    key: "CHOOSE_MODEL",
                    options: MODEL_OPTIONS,
                },
                Input::Number {
                    key: "drop_rate",
                    steps: &[0.0, 0.05, 0.1, 0.2, 0.3, 0.5],
                    float: true,
                },
            ],
        },
        Group {
            section: Section::Batch,
            inputs: &[
                Input::number("batch_size", &[1., 2., 4., 8., 16., 32., 64.]),
                Input::number("max_length", &[64., 91., 256., 512., 1024., 2048.]),
                Input::number("allowed_max_length", &[128., 256., 512., 1024.]),
                Input::number("num_epochs", &[1., 2., 3., 5., 10.]),
                Input::number("entries", &[110., 1100., 5000., 20_000., 52_000.]),
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
        a: &Ch07Analysis,
        _fixes: Option<&fixes::Ch07FixReport>,
        _budget: &Budget,
        _mfu: f64,
    ) -> crate::programs::report::Report {
        report::report(a)
    }

    /// The script's own lines (`CHOOSE_MODEL = "gpt2-large (774M)"`, `batch_size = 4`, the
    /// collate's `allowed_max_length=512`), over the page's: from any page when they name
    /// `CHOOSE_MODEL`, else only on this program's page.
    fn config_from_text(
        current: &Ch07Config,
        on_page: bool,
        text: &str,
    ) -> Option<Result<Read<Ch07Config>, ConfigError>> {
        let (read, named) = config::script_lines(text);
        if read == 0 || !(named || on_page) {
            return None;
        }
        let mut cfg = current.clone();
        Some(
            cfg.apply_script_lines(text)
                .and_then(|n| cfg.validate().map(|()| n))
                .map(|n| Read::config(cfg, n)),
        )
    }

    /// The script's lines as it writes them.
    fn export(c: &Ch07Config) -> Vec<(Paste, String)> {
        vec![(Paste::Config, config::script_text(c))]
    }

    /// One batch of examples per optimizer step, at its widest: no accumulation, one GPU.
    fn batch(c: &Ch07Config) -> crate::programs::seam::Batch {
        crate::programs::seam::Batch {
            micro: u64::from(c.batch_size),
            steps: 1,
            sequences: u64::from(c.batch_size),
            tokens: u64::from(c.batch_size) * u64::from(c.width()),
        }
    }

    /// `--test_mode` swaps in a 1-layer, 12-wide model on the CPU: nothing on the card.
    fn check_script_args(args: &[String]) -> Result<(), ConfigError> {
        match args.first() {
            Some(a) => Err(ConfigError::new(
                "command",
                a,
                crate::error::Problem::Assertion {
                    message: "gpt_instruction_finetuning.py takes only --test_mode (a CPU toy \
                              run): give its settings as --CHOOSE_MODEL=gpt2-large --batch_size=4 \
                              … (or paste its lines)"
                        .into(),
                },
            )),
            None => Ok(()),
        }
    }

    fn params_reported(a: &Ch07Analysis) -> u64 {
        params(&a.config)
    }

    /// The one check (a full training batch): the script's settings back, the allocator kept.
    fn repair(cfg: &mut Ch07Config) -> Vec<ConfigError> {
        let Err(e) = cfg.validate() else {
            return Vec::new();
        };
        *cfg = Ch07Config {
            allocator: cfg.allocator,
            ..Ch07Config::default()
        };
        vec![e]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_of_gpt2_medium_with_its_untied_head() {
        // 354.8 M with the head tied; the loader gives out_head a copy: 406.3 M in memory
        assert_eq!(params(&Ch07Config::default()), 406_286_336);
    }
}
