//! rasbt/LLMs-from-scratch's `ch06/01_main-chapter-code/gpt_class_finetune.py` at 28c65cdf
//! (*Build a Large Language Model (From Scratch)*, chapter 6: a pretrained GPT-2 fine-tuned as a
//! spam classifier): its settings and asserts (`config`), its loop over chapter 5's model with
//! all but the last block frozen (`sequence`), and the fixes with its own names (`fixes`).
//! Numbers are for PyTorch 2.11, fp32, checked against runs of the real script
//! (`data/measured/llms-from-scratch-ch06.jsonl`).

pub mod answer;
pub mod config;
pub mod explain;
pub mod fixes;
pub mod report;
pub mod sequence;

pub use config::Ch06Config;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;

/// A gpt_class_finetune.py run on one card.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch06Analysis {
    pub config: Ch06Config,
    pub run: Run,
}

impl std::ops::Deref for Ch06Analysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &Ch06Config, budget: &Budget) -> Result<Ch06Analysis, ConfigError> {
    cfg.validate()?;
    let sequence = sequence::generate(cfg, &budget.gpu);
    Ok(Ch06Analysis {
        config: cfg.clone(),
        run: Run::replay(sequence, cfg.allocator, budget.allocator_cap())?,
    })
}

/// Whether `cfg` runs on `budget`'s card (one replay).
pub fn fits_on_card(cfg: &Ch06Config, budget: &Budget) -> bool {
    cfg.validate().is_ok()
        && crate::engine::run::fits(
            &sequence::generate(cfg, &budget.gpu),
            cfg.allocator,
            budget.allocator_cap(),
        )
}

/// Parameters of the fine-tuned model, and those it trains: `tok_emb` (V·C), `pos_emb`
/// (1024·C), per block 12·C² weights and 13·C biases and LayerNorm scales and shifts, the final
/// LayerNorm, and the new head (C·classes + classes); it trains the last block, the final
/// LayerNorm and the head.
pub fn params(cfg: &Ch06Config) -> (u64, u64) {
    let (c, l, _) = cfg.dims();
    let (c, l, k) = (u64::from(c), u64::from(l), u64::from(cfg.num_classes));
    let block = 12 * c * c + 13 * c;
    let trained = block + 2 * c + c * k + k;
    let frozen =
        (u64::from(config::VOCAB_SIZE) + u64::from(config::CONTEXT_LENGTH)) * c + (l - 1) * block;
    (frozen + trained, trained)
}

/// LLMs-from-scratch's ch06 `gpt_class_finetune.py` behind the seam.
pub struct GptClassFinetune;

use crate::programs::inputs::{self, as_written, Group, Input, Label, Section};
use crate::programs::seam::{Paste, Read};

/// `CHOOSE_MODEL`'s options, shown as the script writes them.
pub(super) const MODEL_OPTIONS: &[(&str, Label)] = &[
    as_written("gpt2-small (124M)"),
    as_written("gpt2-medium (355M)"),
    as_written("gpt2-large (774M)"),
    as_written("gpt2-xl (1558M)"),
];

impl crate::programs::TrainingProgram for GptClassFinetune {
    lfs_forwards!(Ch06Config, Ch06Analysis, fixes::Ch06FixReport);

    const ID: &'static str = "llms-from-scratch-ch06";
    const SCRIPT: &'static str = "gpt_class_finetune.py";
    const NAME: &'static str = "LLMs-from-scratch gpt_class_finetune.py";
    const LAUNCH_WORDS: &'static [&'static str] = &["gpt_class_finetune.py"];
    /// The script fine-tunes on one GPU (no DDP): a count other than 1 is refused.
    const PROCESSES_KEY: &'static str = "nproc_per_node";
    const MULTI_GPU: bool = false;
    const WORDS: &'static str = "llms-from-scratch-ch06";
    const HINTED: &'static [&'static str] = config::KEYS;
    const FIX_KINDS: &'static [&'static str] = &fixes::Ch06FixKind::IDS;
    const EMBED_SETTINGS: &'static [(&'static str, &'static [f64])] = &[
        ("batch_size", &[1., 2., 4., 8., 16., 32.]),
        ("max_length", &[60., 120., 256., 512., 1024.]),
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
                Input::number("num_classes", &[2., 3., 4., 8., 16., 100.]),
            ],
        },
        Group {
            section: Section::Batch,
            inputs: &[
                Input::number("batch_size", &[1., 2., 4., 8., 16., 32., 64.]),
                Input::number("max_length", &[32., 60., 120., 256., 512., 1024.]),
                Input::number("num_epochs", &[1., 2., 3., 5., 10., 20.]),
                Input::number("train_rows", &[100., 1045., 5000., 20_000., 100_000.]),
                Input::number("val_rows", &[10., 149., 1000., 5000., 20_000.]),
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
        a: &Ch06Analysis,
        _fixes: Option<&fixes::Ch06FixReport>,
        _budget: &Budget,
        _mfu: f64,
    ) -> crate::programs::report::Report {
        report::report(a)
    }

    /// The script's own lines (`CHOOSE_MODEL = "gpt2-medium (355M)"`, `batch_size = 8`,
    /// `"drop_rate": 0.0,`), over the page's: from any page when they name `CHOOSE_MODEL`, else
    /// only on this program's page (bare `batch_size = 8` is also a nanoGPT config line).
    fn config_from_text(
        current: &Ch06Config,
        on_page: bool,
        text: &str,
    ) -> Option<Result<Read<Ch06Config>, ConfigError>> {
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
    fn export(c: &Ch06Config) -> Vec<(Paste, String)> {
        vec![(Paste::Config, config::script_text(c))]
    }

    /// One batch of texts per optimizer step: no accumulation, one GPU.
    fn batch(c: &Ch06Config) -> crate::programs::seam::Batch {
        crate::programs::seam::Batch {
            micro: u64::from(c.batch_size),
            steps: 1,
            sequences: u64::from(c.batch_size),
            tokens: u64::from(c.batch_size) * u64::from(c.max_length),
        }
    }

    /// `--test_mode` swaps in a 1-layer, 12-wide model on the CPU: nothing on the card.
    fn check_script_args(args: &[String]) -> Result<(), ConfigError> {
        match args.first() {
            Some(a) => Err(ConfigError::new(
                "command",
                a,
                crate::error::Problem::Assertion {
                    message: "gpt_class_finetune.py takes only --test_mode (a CPU toy run): give \
                              its settings as --CHOOSE_MODEL=gpt2-medium --batch_size=4 … (or \
                              paste its lines)"
                        .into(),
                },
            )),
            None => Ok(()),
        }
    }

    fn params_reported(a: &Ch06Analysis) -> u64 {
        params(&a.config).0
    }

    /// The asserts (texts within the context, a full training batch, a validation set): the
    /// offending settings back to the script's, the rest kept.
    fn repair(cfg: &mut Ch06Config) -> Vec<ConfigError> {
        let Err(e) = cfg.validate() else {
            return Vec::new();
        };
        let d = Ch06Config::default();
        cfg.max_length = cfg.max_length.min(config::CONTEXT_LENGTH);
        if cfg.validate().is_err() {
            *cfg = Ch06Config {
                allocator: cfg.allocator,
                ..d
            };
        }
        vec![e]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::query::PageState;
    use crate::programs::{Program, ProgramConfig};

    /// The script's lines pasted on nanoGPT's page: `batch_size = 16` is a train.py config line
    /// too, but the script's reader takes more of them (CHOOSE_MODEL, the dataset's max_length).
    #[test]
    fn pasted_script_lines_are_this_programs_from_any_page() {
        let text = "        CHOOSE_MODEL = \"gpt2-xl (1558M)\"\n    train_dataset = SpamDataset(\n        \
                    csv_file=\"train.csv\",\n        max_length=1024,\n        tokenizer=tokenizer\n    )\n    \
                    num_workers = 0\n    batch_size = 16\n";
        let out = crate::paste::interpret(text, &PageState::default());
        assert!(out.error.is_none(), "{:?}", out.error);
        assert_eq!(out.state.program, Program::LfsCh06);
        let cfg =
            Ch06Config::from_args(&["--CHOOSE_MODEL=xl", "--max_length=1024", "--batch_size=16"])
                .unwrap();
        assert!(out.state.configs.holds(&ProgramConfig::LfsCh06(cfg)));
        // a nanoGPT config stays nanoGPT's, on this program's page too
        let on_page = PageState {
            program: Program::LfsCh06,
            ..PageState::default()
        };
        let nano = "batch_size = 8\nblock_size = 512\ngradient_accumulation_steps = 4\n";
        assert_eq!(
            crate::paste::interpret(nano, &on_page).state.program,
            Program::NanoGpt
        );
    }

    /// A pasted out-of-memory message names its tensor: the message PyTorch 2.11 prints for GPT-2
    /// XL on 1,024-token texts at batch 16 on a 12 GB card, as this run's replay on the card
    /// fails (the request, what PyTorch had allocated and reserved).
    #[test]
    fn an_out_of_memory_message_names_its_tensor() {
        let cfg =
            Ch06Config::from_args(&["--CHOOSE_MODEL=xl", "--max_length=1024", "--batch_size=16"])
                .unwrap();
        let message = crate::oom::parse(
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.56 GiB. GPU 0 has a \
             total capacity of 11.69 GiB of which 1.12 GiB is free. Including non-PyTorch memory, \
             this process has 10.55 GiB memory in use. Of the allocated memory 9.84 GiB is \
             allocated by PyTorch, and 155.70 MiB is reserved by PyTorch but unallocated.",
        );
        let d = <GptClassFinetune as crate::programs::TrainingProgram>::diagnose(&cfg, &message)
            .unwrap();
        assert_eq!(d.term, crate::Term::BlockTransient);
        assert_eq!(d.phase, Some(crate::engine::events::Phase::TrainFirstIter));
        assert!(d.reproduced);
    }

    #[test]
    fn parameters_as_the_script_counts_them() {
        // measured: GPT-2 small with a 2-class head, 124,441,346 in all, 7,090,946 trainable
        assert_eq!(params(&Ch06Config::default()), (124_441_346, 7_090_946));
    }
}
