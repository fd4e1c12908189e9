//! The seam: what a training program supplies, and all that the rest of vramfit asks of it.
//!
//! A program is a folder under `programs/` with one type implementing [`TrainingProgram`], and
//! one line in the registry (`programs/mod.rs`). The registry turns the lines into the
//! [`crate::programs::Program`] choice and every dispatch over it — reading flags, a JSON config
//! and a launch line, the page's settings and URL, the analysis, the fixes — so the compiler names
//! everything a new program must supply, and nothing outside the registry matches on a program
//! to reach its model.

use crate::engine::run::Run;
use crate::engine::terms::Term;
use crate::error::ConfigError;
use crate::gpu::Budget;
use crate::input::json_config::Setting;
pub use crate::programs::nanogpt::explain::Formula;

/// What a piece of text to paste is, which decides its label and its place on the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paste {
    /// The lines of a config file (or of the script) to set.
    Config,
    /// A nanoGPT config file: only what differs from train.py's defaults.
    ConfigOverrides,
    /// A command line to launch the run.
    Command,
    /// An environment variable to export first.
    Env,
    /// A change to the script's code.
    Patch,
}

impl Paste {
    /// Its id, in the page's `data-testid`s (`export-config`, `snippet-cli`, …).
    pub fn id(self) -> &'static str {
        match self {
            Paste::Config | Paste::ConfigOverrides => "config",
            Paste::Command => "cli",
            Paste::Env => "env",
            Paste::Patch => "patch",
        }
    }
}

/// The batch of one optimizer step as the page's summary states it: `micro × steps = sequences`,
/// and the tokens they hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Sequences per forward/backward on one GPU.
    pub micro: u64,
    /// Micro-steps per optimizer step, over all GPUs.
    pub steps: u64,
    /// Sequences per optimizer step.
    pub sequences: u64,
    /// Tokens per optimizer step.
    pub tokens: u64,
}

/// One word of a command line for the script, as its config is read from it.
#[derive(Clone, Debug, PartialEq)]
pub enum ScriptArg {
    /// A flag (`--depth=12`, `--batch_size=8`) or a value the script's argument parser reads.
    Flag(String),
    /// A config file the script executes (train.py's `config/train_gpt2.py`), with its text.
    File { path: String, text: String },
}

/// What a program read of a pasted launch line or pasted text of its own: its config, and what
/// it could not apply.
#[derive(Clone, Debug, PartialEq)]
pub struct Read<C> {
    pub config: C,
    /// Lines read but not applied (a config file's), with why.
    pub skipped: Vec<crate::input::skipped::Skipped>,
    /// Config files a launch line names whose text is not known here.
    pub unknown_files: Vec<String>,
    /// Lines of pasted text it applied.
    pub applied: usize,
}

impl<C> Read<C> {
    /// The config alone, nothing skipped.
    pub fn config(config: C, applied: usize) -> Read<C> {
        Read {
            config,
            skipped: Vec::new(),
            unknown_files: Vec::new(),
            applied,
        }
    }

    pub fn map<D>(self, f: impl FnOnce(C) -> D) -> Read<D> {
        Read {
            config: f(self.config),
            skipped: self.skipped,
            unknown_files: self.unknown_files,
            applied: self.applied,
        }
    }
}

/// A program's setting for DDP on one GPU ([`TrainingProgram::ONE_GPU_DDP`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OneGpuDdp {
    /// The setting (a Python bool).
    pub key: &'static str,
    /// What on a launch line of one process sets it.
    pub when: DdpLaunch,
}

/// What makes one process a DDP run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DdpLaunch {
    /// Being started by torchrun (`torchrun`, `python -m torch.distributed.run` or `.launch`).
    Torchrun,
    /// The script of this name, however it is started.
    Script(&'static str),
}

/// One training script vramfit models.
pub trait TrainingProgram {
    /// The id `--program=`, `?program=` and a JSON config's `"program"` take.
    const ID: &'static str;
    /// The script as its repository names it (`train.py`, `scripts/base_train.py`).
    const SCRIPT: &'static str;
    /// Its name as the page shows it, the same in every language: the project, one space, the
    /// script (the page's picker names a project with several scripts once, before them).
    const NAME: &'static str;
    /// The launch-line words that run it: its file name (in any folder) and its `-m` module.
    const LAUNCH_WORDS: &'static [&'static str];
    /// Its own setting for the processes `torchrun` starts (`--nproc_per_node` × `--nnodes`).
    const PROCESSES_KEY: &'static str;
    /// Its section of the language files (`i18n/*.txt`, read by the i18n crate): `{WORDS}.tagline`,
    /// `.chart_title`, `.phase_eval`, `.phase_eval_later`, `.largest`, `.largest_none`, a hint per
    /// setting (`{WORDS}.hints.{name}`) and each fix's words (`{WORDS}.fix_titles.{kind}`,
    /// `{WORDS}.fix_why.{kind}`). The scripts of one repository may share a section.
    const WORDS: &'static str;
    /// The settings with a hint in its section, by [`Self::hint_name`]'s names.
    const HINTED: &'static [&'static str];
    /// Its fix kinds' ids (`engine::fix_kinds!`'s `IDS`), each with words in its section.
    const FIX_KINDS: &'static [&'static str];
    /// The words only its own views on the page say (`{WORDS}.own.{name}`: nanoGPT's DDP
    /// summary, nanochat's ranks and first run), each in its section.
    const OWN_WORDS: &'static [&'static str] = &[];
    /// The few settings an embedded calculator shows (`?embed=1`), each with its slider's steps.
    const EMBED_SETTINGS: &'static [(&'static str, &'static [f64])];
    /// Whether its speed estimate takes a model FLOPs utilisation (the fix list then asks for one).
    const SPEED_FROM_MFU: bool = false;
    /// Whether it trains on several GPUs (torchrun's processes, by [`Self::PROCESSES_KEY`]); a
    /// single-GPU script has no GPU count on the page, and refuses one above 1 elsewhere.
    const MULTI_GPU: bool = true;
    /// Its setting for one process that still trains under DDP, and what on a launch line says
    /// so: torchrun (train.py wraps the model in DDP whenever torchrun sets `RANK`) or the script
    /// itself (02_opt_multi_gpu_ddp.py wraps it at world size 1 under python too); `None` where one
    /// process runs as a single-GPU script does (nanochat's optimizer skips its communication at
    /// world size 1). The page shows it as a box under the GPU count when that count is 1.
    const ONE_GPU_DDP: Option<OneGpuDdp> = None;
    /// Whether a command line's words that are not flags are config files it executes, in order
    /// with its flags (train.py's configurator), rather than values its argument parser reads.
    const CONFIG_FILES: bool = false;
    /// Its settings as the page lays them out, group by group (the card and the number of GPUs
    /// come first for every program: [`Self::PROCESSES_KEY`]).
    const INPUTS: &'static [crate::programs::inputs::Group];
    /// The names of its report's words in its section of the command line's language files
    /// (`crates/i18n/cli/*.txt`): each [`Self::report`] line's and note's (`notes.{name}`).
    const REPORT_WORDS: &'static [&'static str];

    /// What its report says beyond the replayed run: the head's rows and lines under the run and
    /// the fixes (`fixes`: where they were searched; `budget`: the card asked about; `mfu`: the
    /// speed model's utilisation, where it has one).
    fn report(
        analysis: &Self::Analysis,
        fixes: Option<&Self::Fixes>,
        budget: &Budget,
        mfu: f64,
    ) -> crate::programs::report::Report;

    /// What its numbers assume, by the names of its section's notes (`notes.{name}`): the text
    /// report's notes and the JSON answer's `warnings`.
    fn notes(_analysis: &Self::Analysis) -> Vec<&'static str> {
        Vec::new()
    }

    /// Its settings as the JSON answer's `config` has them.
    type Settings: crate::programs::answer::Part;
    /// Its own part of the JSON answer (crates/report writes the rest around it).
    type Answer: crate::programs::answer::Part;
    /// Its own fields of each ranked fix in the JSON answer.
    type FixAnswer: crate::programs::answer::Part;

    /// Every setting under the JSON's names, in order.
    fn settings(config: &Self::Config) -> Self::Settings;

    /// Its own part of the JSON answer (`fixes`: where searched; `budget`: the card asked
    /// about; `mfu`: the speed model's utilisation).
    fn answer(
        analysis: &Self::Analysis,
        fixes: Option<&Self::Fixes>,
        budget: &Budget,
        mfu: f64,
    ) -> Self::Answer;

    /// Its own fields of each of `fixes`, in their order.
    fn fix_answers(
        analysis: &Self::Analysis,
        fixes: &Self::Fixes,
        budget: &Budget,
    ) -> Vec<Self::FixAnswer>;

    /// The card as its verdict counted it (default: the card asked about).
    fn card<'a>(_analysis: &'a Self::Analysis, asked: &'a Budget) -> &'a Budget {
        asked
    }

    /// The name under which a setting's hint is found (`key`: as the page names the setting).
    fn hint_name(key: &str) -> String {
        key.to_string()
    }

    /// How the page labels a setting's input (default: its key, as the script writes it).
    fn field_label(key: &str) -> String {
        key.to_string()
    }

    /// The batch as the run's summary states it.
    fn batch(config: &Self::Config) -> Batch;

    /// Which tensor a pasted out-of-memory message's request was, read off the run's allocation
    /// sequence on the message's card (`None`: no tensor of this config has the requested size).
    fn diagnose(
        config: &Self::Config,
        message: &crate::oom::OomMessage,
    ) -> Option<crate::oom::Diagnosis> {
        let budget = Budget::for_gpu(&crate::oom::message_card(message));
        let run = Self::replay(config, &budget).ok()?;
        crate::oom::diagnose_sequence(message, &run.sequence, run.allocator, true)
    }

    /// Whether the page asks for the link between the GPUs (its bandwidth sets how long a step's
    /// gradient exchange takes in the speed estimate).
    fn asks_link(_config: &Self::Config) -> bool {
        false
    }

    /// Its fixes as every front-end shows them (`freed`: what other processes hold on the card).
    fn fixes_view(
        fixes: &Self::Fixes,
        from: &Self::Config,
        freed: u128,
    ) -> crate::programs::fix_view::FixesView;

    /// The settings back out as what to paste, in order; none where they are the script's own
    /// defaults with nothing to set.
    fn export(config: &Self::Config) -> Vec<(Paste, String)>;

    /// One tensor family's formula at the analysis's peak, with this config's numbers (`bytes`:
    /// what the family holds there).
    fn formula(analysis: &Self::Analysis, term: Term, bytes: u128) -> Formula;

    /// Its settings, with its own names, defaults and checks.
    type Config: Clone + std::fmt::Debug + PartialEq;
    /// Its answer for one card: the replayed run and what only this program shows.
    type Analysis: Clone + std::fmt::Debug + PartialEq;
    /// Its ranked fixes for one card.
    type Fixes: Clone + std::fmt::Debug + PartialEq;

    /// The script's defaults.
    fn default_config() -> Self::Config;

    /// Its config from its own command-line flags, with every check the script makes: the one
    /// reading behind the command line, a JSON config and a pasted launch line.
    fn config_from_flags(flags: &[String]) -> Result<Self::Config, ConfigError>;

    /// Whether a command-line word names one of its config files (train.py's `config/x.py`):
    /// such a word launches the program even with the script left out, and is never a script.
    fn names_config_file(_word: &str) -> bool {
        false
    }

    /// Its config from a command line's words in order, config files with their text
    /// ([`Self::CONFIG_FILES`]), and what was read but not applied (said as warnings). By
    /// default a program takes no config files and reads its flags by [`Self::config_from_flags`].
    fn config_from_args(args: &[ScriptArg]) -> Result<(Self::Config, Vec<String>), ConfigError> {
        let mut flags = Vec::new();
        for a in args {
            match a {
                ScriptArg::Flag(f) => flags.push(f.clone()),
                ScriptArg::File { path, .. } => {
                    return Err(ConfigError::new(
                        "config",
                        path.clone(),
                        crate::error::Problem::Unreadable {
                            detail: format!("{} takes no config files", Self::SCRIPT),
                        },
                    ))
                }
            }
        }
        Ok((Self::config_from_flags(&flags)?, Vec::new()))
    }

    /// Its config from a pasted launch line (`line`, read as `launch`), given the page's settings
    /// of it (`current`). By default: the script's flags on the line and what the launcher sets,
    /// from the script's defaults (a launch line says every setting it changes).
    fn config_from_launch(
        _current: &Self::Config,
        launch: &crate::input::command_line::Launch,
        _line: &str,
    ) -> Result<Read<Self::Config>, ConfigError> {
        let mut args = launch.args.clone();
        args.extend(launch.launcher_flags());
        Ok(Read::config(Self::config_from_flags(&args)?, 1))
    }

    /// Pasted lines of the script's own text (a config file's `key = value` lines, its
    /// constants, a dict as it writes one), applied to the page's settings of it (`current`;
    /// `on_page`: whether the page shows this program); `None` where not one line is its.
    fn config_from_text(
        _current: &Self::Config,
        _on_page: bool,
        _text: &str,
    ) -> Option<Result<Read<Self::Config>, ConfigError>> {
        None
    }

    /// Refuses script arguments of a launch line the script does not take (default: it takes
    /// its flags, read by [`Self::config_from_flags`]).
    fn check_script_args(_args: &[String]) -> Result<(), ConfigError> {
        Ok(())
    }

    /// One JSON setting as the flag [`Self::config_from_flags`] reads; `None` for a switch
    /// that is off. An object or a list is refused before this is asked; the styles the
    /// programs share are in [`json_config`](crate::input::json_config).
    fn json_flag(key: &str, value: &Setting) -> Result<Option<String>, ConfigError>;

    /// Replays the config for the card.
    fn analyze(config: &Self::Config, budget: &Budget) -> Result<Self::Analysis, ConfigError>;

    /// The analysis's replayed run: peaks, components, verdict, where it runs out.
    fn run(analysis: &Self::Analysis) -> &Run;

    /// [`Self::analyze`]'s run alone: what the first bar paints, in a module that should not
    /// carry what only explains it.
    fn replay(config: &Self::Config, budget: &Budget) -> Result<Run, ConfigError>;

    /// Parameters as the script prints them.
    fn params_reported(analysis: &Self::Analysis) -> u64;

    /// The fixes for the config on the card, each replayed, best first (`mfu`: the model-FLOPs
    /// utilisation a program's speed model assumes, where it has one).
    fn rank_fixes(config: &Self::Config, budget: &Budget, mfu: f64) -> Option<Self::Fixes>;

    /// A setting as the page's input and the URL show it (`None`: not one of its keys).
    fn get(config: &Self::Config, key: &str) -> Option<String>;

    /// Sets one setting from its URL or input text; `Problem::UnknownKey` for a key that is not
    /// the program's. The config is unchanged on error.
    fn set(config: &mut Self::Config, key: &str, raw: &str) -> Result<(), ConfigError>;

    /// The script's checks that involve more than one setting.
    fn validate(config: &Self::Config) -> Result<(), ConfigError>;

    /// `(key, value)` of each setting that differs from the defaults, in the URL's order.
    fn changed(config: &Self::Config) -> Vec<(String, String)>;

    /// After a URL's settings were set one by one: where the script's checks across settings
    /// fail, the settings involved go back to their defaults; what was refused, in order.
    fn repair(config: &mut Self::Config) -> Vec<ConfigError>;
}

/// A script's boolean setting as text: Python's `True`/`False`, and `true`/`false` and 1/0 too,
/// as URLs and JSON carry them.
pub fn py_bool_in(key: &str, text: &str) -> Result<bool, ConfigError> {
    match text.trim() {
        "True" | "true" | "1" => Ok(true),
        "False" | "false" | "0" => Ok(false),
        other => Err(ConfigError::new(
            key,
            other,
            crate::error::Problem::WrongType {
                expected: "True or False",
            },
        )),
    }
}

/// `--KEY=VALUE` arguments, in order, each given to `set` (a script whose settings are constants
/// or dict keys, not argparse flags); a word of another form is named, with `form` saying how the
/// script's settings are written.
pub fn key_value_args<S: AsRef<str>>(
    args: &[S],
    form: &str,
    mut set: impl FnMut(&str, &str) -> Result<(), ConfigError>,
) -> Result<(), ConfigError> {
    for a in args {
        let a = a.as_ref();
        let Some((k, v)) = a.strip_prefix("--").and_then(|b| b.split_once('=')) else {
            return Err(ConfigError::new(
                a,
                "",
                crate::error::Problem::Unreadable {
                    detail: form.into(),
                },
            ));
        };
        set(k, v)?;
    }
    Ok(())
}
