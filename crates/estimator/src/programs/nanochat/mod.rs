//! karpathy/nanochat's `scripts/base_train.py` at snapshot 92d63d4: its flags and asserts
//! (`config`), the model they build (`shape`), the one description of its memory (`sequence`),
//! and the fixes with its own knobs (`fixes`).
//!
//! Numbers are for CUDA GPUs with bf16 compute, `torch.compile` (always on in base_train.py) and
//! PyTorch 2.11, checked against runs of the real script on one GPU
//! (`data/measured/nanochat.jsonl` and `nanochat-*.jsonl`). Attention is the SDPA fallback
//! unless `attention=fa3`, whose saved tensors are derived, not measured. Under `torchrun` each
//! rank's sequence follows optim.py's sharding, with the tensors NCCL keeps from earlier steps
//! (`sequence::Ranks`) up to the bound the step time sets (`speed`); checked against two- and
//! four-GPU runs (`data/measured/nanochat-ddp2-long.jsonl`, `nanochat-ranks.jsonl`).

pub mod answer;
pub mod config;
pub mod explain;
pub mod fixes;
pub mod inputs;
pub mod plan;
pub mod report;
pub mod sequence;
pub mod shape;
pub mod speed;
pub mod stage;

pub use config::{NanochatAttention, NanochatConfig};
pub use sequence::Ranks;
pub use shape::Shape;

use crate::engine::run::Run;
use crate::error::{ConfigError, Problem};
use crate::gpu::{Budget, Gpu};

/// A nanochat run on one card: its config, its model and the replayed run (under `torchrun`,
/// rank 0's, the fullest, at the bound of NCCL's held tensors).
#[derive(Clone, Debug, PartialEq)]
pub struct NanochatAnalysis {
    pub config: NanochatConfig,
    pub shape: Shape,
    pub run: Run,
    /// More than one GPU: each rank and the bound the verdict is judged on.
    pub ranks: Option<RanksAnswer>,
    /// The card as the verdict counted it: one rank's, with NCCL's memory beside the context.
    pub budget: Budget,
}

impl NanochatAnalysis {
    /// Iteration 0's peak on a compile cache that holds these shapes already (a second run),
    /// where the analysis's is a first run's (base_train.py; see `sequence::Gen::autotune`);
    /// `None` for chat_sft.py, whose iteration 0 is a warm one. One more replay, made only
    /// where the answer shows it (not in the fix searches' analyses).
    pub fn first_iter_warm(&self) -> Option<u128> {
        if self.config.script != config::Script::Base {
            return None;
        }
        let bound = Ranks {
            rank: 0,
            // (one GPU holds no step's collective tensors, whatever this says)
            held_stashes: self.ranks.as_ref().map_or(1, |r| r.held_stashes),
        };
        crate::engine::replay::replay(
            &sequence::generate_on_warm_cache(&self.config, &self.budget.gpu, bound),
            self.config.allocator,
            None,
        )
        .phase_peak(crate::engine::events::Phase::TrainFirstIter)
    }

    /// Iteration 0 of a first run and of a second run, where they differ: what the report's
    /// and the page's first-run lines say.
    pub fn first_and_second_run(&self) -> Option<(u128, u128)> {
        let first = self
            .run
            .phase_bytes(crate::engine::events::Phase::TrainFirstIter)?;
        let second = self.first_iter_warm()?;
        (second != first).then_some((first, second))
    }
}

/// What each rank of a `torchrun` run holds (see [`sequence::Ranks`] for why steps' collective
/// tensors outlive them).
#[derive(Clone, Debug, PartialEq)]
pub struct RanksAnswer {
    pub world_size: u32,
    /// Steps' collective tensors held at once: the bound the verdict uses (rank 0's run).
    pub held_stashes: u32,
    /// The step time the bound comes from ([`speed::step_seconds`]).
    pub step_seconds: f64,
    /// Rank 0's peak with one step's tensors held: what a step longer than NCCL's watchdog
    /// interval holds when the GPU, not the CPU, sets the pace.
    pub one_stash_peak: u128,
    /// NCCL's memory on each rank, counted with the context ([`crate::gpu::NCCL_RANK_BYTES`]).
    pub nccl_bytes: u128,
    /// Each rank's peaks at the bound, as runs of ranks whose sequences are the same. Rank 0
    /// owns a full chunk of every Muon group, so it is the fullest.
    pub rank_peaks: Vec<RankPeaks>,
}

/// The peaks of ranks `first..=last` (the same sequence: they own as many of each Muon group's
/// matrices).
#[derive(Clone, Debug, PartialEq)]
pub struct RankPeaks {
    pub first: u32,
    pub last: u32,
    pub peak_bytes: u128,
    pub phase_peaks: Vec<(crate::engine::events::Phase, u128)>,
}

impl RankPeaks {
    pub fn phase(&self, phase: crate::engine::events::Phase) -> Option<u128> {
        self.phase_peaks
            .iter()
            .find(|(p, _)| *p == phase)
            .map(|x| x.1)
    }
}

impl std::ops::Deref for NanochatAnalysis {
    type Target = Run;

    /// The replayed run's peaks, components and verdict are the analysis's.
    fn deref(&self) -> &Run {
        &self.run
    }
}

/// `cfg` as it runs on `budget`'s card: the script's asserts and the card's own (`--fp8` needs
/// FP8 matmuls), the dtype the card gets (bf16 from SM 8.0, fp32 below) where NANOCHAT_DTYPE is
/// not set, the held-stash bound from its step time, and one rank's budget. What the analysis
/// and the fix searches both judge.
fn on_card(
    cfg: &NanochatConfig,
    budget: &Budget,
) -> Result<(NanochatConfig, Ranks, f64, Budget), ConfigError> {
    cfg.validate()?;
    fp8_on_card(cfg, &budget.gpu)?;
    let cfg = cfg.for_card(budget.gpu.compute_capability);
    let step = speed::step_seconds(&cfg, &budget.gpu);
    let ranks = Ranks {
        rank: 0,
        held_stashes: speed::held_stashes(step),
    };
    let budget = budget.clone().for_ranks(cfg.world_size);
    Ok((cfg, ranks, step, budget))
}

/// `--fp8` needs FP8 matmuls: `torch._scaled_mm` runs from SM 8.9 (Ada, Hopper and later). On
/// an older preset card base_train.py converts the Linear layers all the same, and its first
/// forward stops with a RuntimeError; a card known only by its memory is taken at its word.
fn fp8_on_card(cfg: &NanochatConfig, gpu: &Gpu) -> Result<(), ConfigError> {
    let (major, minor) = gpu.compute_capability;
    if cfg.fp8 && cfg.script == config::Script::Base && !gpu.is_custom() && (major, minor) < (8, 9)
    {
        return Err(ConfigError::new(
            "fp8",
            "True",
            Problem::Assertion {
                message: format!(
                    "the {} (SM {major}.{minor}) has no FP8 matmuls: base_train.py converts its \
                     Linear layers, then its first forward stops in torch._scaled_mm with a \
                     RuntimeError (FP8 needs SM 8.9 or later: RTX 40xx, L4, L40S, H100, H200). \
                     Drop --fp8",
                    gpu.name
                ),
            },
        ));
    }
    Ok(())
}

/// Replays `cfg` for `budget`'s card.
pub fn analyze(cfg: &NanochatConfig, budget: &Budget) -> Result<NanochatAnalysis, ConfigError> {
    let (cfg, bound, step, budget) = on_card(cfg, budget)?;
    let cfg = &cfg;
    let shape = Shape::of(cfg);
    let run = Run::replay(
        sequence::generate_rank(cfg, &budget.gpu, bound),
        cfg.allocator,
        budget.allocator_cap(),
    )?;
    let ranks = (cfg.world_size > 1).then(|| {
        let replay = |r: Ranks| {
            crate::engine::replay::replay(
                &sequence::generate_rank(cfg, &budget.gpu, r),
                cfg.allocator,
                None,
            )
        };
        let one_stash_peak = if bound.held_stashes == 1 {
            run.peak_bytes()
        } else {
            replay(Ranks {
                held_stashes: 1,
                ..bound
            })
            .peak_allocated
        };
        // ranks that own the same number of each Muon group's matrices run the same sequence
        let groups = shape.muon_groups();
        let owned = |rank: u64| -> Vec<u64> {
            groups
                .iter()
                .map(|&(_, k)| sequence::owned_matrices(k, u64::from(cfg.world_size), rank))
                .collect()
        };
        let mut rank_peaks: Vec<RankPeaks> = Vec::new();
        let mut last: Option<Vec<u64>> = None;
        for rank in 0..cfg.world_size {
            let own = owned(u64::from(rank));
            match rank_peaks.last_mut() {
                Some(same) if last.as_ref() == Some(&own) => same.last = rank,
                _ => {
                    let (peak_bytes, phase_peaks) = if rank == 0 {
                        (run.peak_bytes(), run.free_run.phase_peaks.clone())
                    } else {
                        let r = replay(Ranks { rank, ..bound });
                        (r.peak_allocated, r.phase_peaks)
                    };
                    match rank_peaks.last_mut() {
                        // other matrices, the same bytes: one run of ranks
                        Some(prev)
                            if prev.peak_bytes == peak_bytes && prev.phase_peaks == phase_peaks =>
                        {
                            prev.last = rank
                        }
                        _ => rank_peaks.push(RankPeaks {
                            first: rank,
                            last: rank,
                            peak_bytes,
                            phase_peaks,
                        }),
                    }
                }
            }
            last = Some(own);
        }
        RanksAnswer {
            world_size: cfg.world_size,
            held_stashes: bound.held_stashes,
            step_seconds: step,
            one_stash_peak,
            nccl_bytes: crate::gpu::NCCL_RANK_BYTES,
            rank_peaks,
        }
    });
    Ok(NanochatAnalysis {
        config: cfg.clone(),
        shape,
        run,
        ranks,
        budget,
    })
}

/// Whether `cfg` runs on `budget`'s card (one replay of rank 0 at the bound; what fix searches ask).
pub fn fits_on_card(cfg: &NanochatConfig, budget: &Budget) -> bool {
    let Ok((cfg, bound, _, budget)) = on_card(cfg, budget) else {
        return false;
    };
    crate::engine::run::fits(
        &sequence::generate_rank(&cfg, &budget.gpu, bound),
        cfg.allocator,
        budget.allocator_cap(),
    )
}

/// base_train.py and chat_sft.py behind the seam: one config type, each script with its own id,
/// flags and defaults.
macro_rules! nanochat_script {
    ($(#[$doc:meta])* $name:ident, $script:expr, $id:literal, $path:literal, $name_file:literal, $words:expr, $hinted:expr, $inputs:expr) => {
        $(#[$doc])*
        pub struct $name;

        impl crate::programs::TrainingProgram for $name {
            const ID: &'static str = $id;
            const SCRIPT: &'static str = $path;
            const NAME: &'static str = concat!("nanochat ", $name_file);
            const LAUNCH_WORDS: &'static [&'static str] = $words;
            const PROCESSES_KEY: &'static str = "nproc_per_node";
            // base_train.py and chat_sft.py share their flags' hints and their fixes' words
            const WORDS: &'static str = "nanochat";
            const HINTED: &'static [&'static str] = $hinted;
            const FIX_KINDS: &'static [&'static str] = &fixes::NanochatFixKind::IDS;
            const OWN_WORDS: &'static [&'static str] = &["ranks", "phase_core", "phase_load", "phase_generate", "first_run"];
            const EMBED_SETTINGS: &'static [(&'static str, &'static [f64])] = &[
                ("depth", &[2., 4., 6., 8., 10., 12., 16., 20., 24., 26., 32.]),
                ("device_batch_size", &[1., 2., 4., 8., 16., 32., 64.]),
                ("max_seq_len", &[256., 512., 1024., 2048., 4096.]),
            ];
            const INPUTS: &'static [crate::programs::inputs::Group] = $inputs;
            const REPORT_WORDS: &'static [&'static str] = report::WORDS;

            fn report(
                a: &NanochatAnalysis,
                fixes: Option<&fixes::NanochatFixReport>,
                _budget: &Budget,
                _mfu: f64,
            ) -> crate::programs::report::Report {
                report::report(a, fixes)
            }

            fn notes(a: &NanochatAnalysis) -> Vec<&'static str> {
                report::notes(&a.config)
            }

            /// Under torchrun, one rank's card: NCCL's memory is beside the CUDA context.
            fn card<'a>(a: &'a NanochatAnalysis, _asked: &'a Budget) -> &'a Budget {
                &a.budget
            }

            fn hint_name(key: &str) -> String {
                config::flag_name(key)
            }

            /// A flag of the script as typed (`--device-batch-size`); a setting chat_sft.py
            /// reads from its checkpoint by its plain name.
            fn field_label(key: &str) -> String {
                let flag = config::flag_name(key);
                if NanochatConfig::for_script($script).is_script_flag(&flag) {
                    format!("--{flag}")
                } else {
                    key.to_string()
                }
            }

            /// The script's launch line.
            fn export(c: &NanochatConfig) -> Vec<(crate::programs::seam::Paste, String)> {
                vec![(crate::programs::seam::Paste::Command, fixes::launch_line(c))]
            }

            fn fixes_view(
                fixes: &fixes::NanochatFixReport,
                from: &NanochatConfig,
                freed: u128,
            ) -> crate::programs::fix_view::FixesView {
                fixes::view(fixes, from, freed)
            }

            fn batch(c: &NanochatConfig) -> crate::programs::seam::Batch {
                crate::programs::seam::Batch {
                    micro: u64::from(c.device_batch_size),
                    steps: c.grad_accum_steps() * u64::from(c.world_size),
                    sequences: c.total_batch_tokens() / u64::from(c.max_seq_len),
                    tokens: c.total_batch_tokens(),
                }
            }

            fn formula(
                a: &NanochatAnalysis,
                term: crate::Term,
                bytes: u128,
            ) -> crate::programs::seam::Formula {
                explain::formula(term, &a.config, bytes)
            }

            type Settings = answer::Settings;
            type Answer = answer::Answer;
            type FixAnswer = answer::FixAnswer;

            fn settings(c: &NanochatConfig) -> answer::Settings {
                answer::settings(c)
            }

            fn answer(
                a: &NanochatAnalysis,
                fixes: Option<&fixes::NanochatFixReport>,
                _budget: &Budget,
                _mfu: f64,
            ) -> answer::Answer {
                answer::answer(a, fixes)
            }

            fn fix_answers(
                a: &NanochatAnalysis,
                fixes: &fixes::NanochatFixReport,
                _budget: &Budget,
            ) -> Vec<answer::FixAnswer> {
                answer::fix_answers(a, fixes)
            }

            type Config = NanochatConfig;
            type Analysis = NanochatAnalysis;
            type Fixes = fixes::NanochatFixReport;

            fn default_config() -> NanochatConfig {
                NanochatConfig::for_script($script)
            }

            fn config_from_flags(flags: &[String]) -> Result<NanochatConfig, ConfigError> {
                NanochatConfig::from_script_args($script, flags)
            }

            fn json_flag(
                key: &str,
                value: &crate::input::json_config::Setting,
            ) -> Result<Option<String>, ConfigError> {
                crate::input::json_config::argparse_flag(key, value)
            }

            fn analyze(cfg: &NanochatConfig, budget: &Budget) -> Result<NanochatAnalysis, ConfigError> {
                analyze(cfg, budget)
            }

            fn run(a: &NanochatAnalysis) -> &Run {
                &a.run
            }

            fn replay(cfg: &NanochatConfig, budget: &Budget) -> Result<Run, ConfigError> {
                analyze(cfg, budget).map(|a| a.run)
            }

            fn params_reported(a: &NanochatAnalysis) -> u64 {
                a.shape.total_params()
            }

            fn rank_fixes(
                cfg: &NanochatConfig,
                budget: &Budget,
                _mfu: f64,
            ) -> Option<fixes::NanochatFixReport> {
                fixes::rank_fixes(cfg, budget)
            }

            fn get(cfg: &NanochatConfig, key: &str) -> Option<String> {
                cfg.get(key)
            }

            fn set(cfg: &mut NanochatConfig, key: &str, raw: &str) -> Result<(), ConfigError> {
                set_flag(cfg, key, raw)
            }

            fn validate(cfg: &NanochatConfig) -> Result<(), ConfigError> {
                cfg.validate()
            }

            fn changed(cfg: &NanochatConfig) -> Vec<(String, String)> {
                changed(cfg)
            }

            fn repair(cfg: &mut NanochatConfig) -> Vec<ConfigError> {
                repair(cfg)
            }
        }
    };
}

nanochat_script!(
    /// nanochat's `scripts/base_train.py`.
    BaseTrain,
    config::Script::Base,
    "nanochat",
    "scripts/base_train.py",
    "base_train.py",
    &["base_train.py", "scripts.base_train"],
    NanochatConfig::KEYS,
    inputs::BASE
);
nanochat_script!(
    /// nanochat's `scripts/chat_sft.py`.
    ChatSft,
    config::Script::Sft,
    "nanochat-sft",
    "scripts/chat_sft.py",
    "chat_sft.py",
    &["chat_sft.py", "scripts.chat_sft"],
    // its own flag; the rest are base_train.py's, whose hints the section already has
    &["load-optimizer"],
    inputs::SFT
);

/// One setting from the page or the URL, by its flag's name (`device_batch_size` or
/// `device-batch-size`); a key the script does not have is unknown, not abbreviated.
fn set_flag(cfg: &mut NanochatConfig, key: &str, raw: &str) -> Result<(), ConfigError> {
    if !cfg.keys().contains(&config::flag_name(key).as_str()) {
        return Err(ConfigError::new(
            key,
            raw,
            crate::error::Problem::UnknownKey,
        ));
    }
    let mut new = cfg.clone();
    new.set(key, raw.trim())?;
    *cfg = new;
    Ok(())
}

/// The settings that differ from the script's defaults, under the URL's names (underscores).
fn changed(cfg: &NanochatConfig) -> Vec<(String, String)> {
    let defaults = NanochatConfig::for_script(cfg.script);
    cfg.keys()
        .iter()
        .filter_map(|key| {
            let (v, dv) = (cfg.get(key)?, defaults.get(key)?);
            (v != dv).then(|| (key.replace('-', "_"), v))
        })
        .collect()
}

/// base_train.py's asserts across flags: the batch sizes, the context and fp8 back to the
/// script's defaults (and the whole config, if that is not enough).
fn repair(cfg: &mut NanochatConfig) -> Vec<ConfigError> {
    let Err(e) = cfg.validate() else {
        return Vec::new();
    };
    let d = NanochatConfig::for_script(cfg.script);
    cfg.total_batch_size = d.total_batch_size;
    cfg.device_batch_size = d.device_batch_size;
    cfg.max_seq_len = d.max_seq_len;
    cfg.fp8 = false;
    if cfg.validate().is_err() {
        *cfg = d;
    }
    vec![e]
}
