//! The training programs vramfit models. Each one is a folder: its own names, defaults and
//! asserts, its shape, the one description of its memory (an allocation sequence) and its fixes.
//! What they share — replay, verdict, GPUs, units — is `crate::engine`.

pub mod build_nanogpt;
pub mod nanochat;
pub mod nanogpt;

/// A training script vramfit knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Program {
    /// karpathy/nanoGPT's `train.py`.
    NanoGpt,
    /// karpathy/nanochat's `scripts/base_train.py`.
    Nanochat,
    /// karpathy/nanochat's `scripts/chat_sft.py`.
    NanochatSft,
    /// karpathy/build-nanogpt's `train_gpt2.py`.
    BuildNanoGpt,
}

impl Program {
    pub const ALL: [Program; 4] = [
        Program::NanoGpt,
        Program::Nanochat,
        Program::NanochatSft,
        Program::BuildNanoGpt,
    ];
    /// The ids `--program=` and `?program=` take.
    pub const NAMES: &'static [&'static str] =
        &["nanogpt", "nanochat", "nanochat-sft", "build-nanogpt"];

    pub fn id(self) -> &'static str {
        match self {
            Program::NanoGpt => "nanogpt",
            Program::Nanochat => "nanochat",
            Program::NanochatSft => "nanochat-sft",
            Program::BuildNanoGpt => "build-nanogpt",
        }
    }

    pub fn parse(s: &str) -> Option<Program> {
        Program::ALL.into_iter().find(|p| p.id() == s)
    }

    /// The script as its repository names it.
    pub fn script(self) -> &'static str {
        match self {
            Program::NanoGpt => "train.py",
            Program::Nanochat => "scripts/base_train.py",
            Program::NanochatSft => "scripts/chat_sft.py",
            Program::BuildNanoGpt => "train_gpt2.py",
        }
    }

    /// The program a command-line word launches: a script path or a `-m` module. A file in a
    /// `config/` folder is never a script, whatever its name: it is a nanoGPT config file
    /// (`config/train_gpt2.py` is nanoGPT's best-known config, not build-nanogpt's script).
    pub fn from_script(word: &str) -> Option<Program> {
        if is_nanogpt_config_path(word) {
            return None;
        }
        let name = word.rsplit('/').next().unwrap_or(word);
        match name {
            "base_train.py" | "scripts.base_train" => Some(Program::Nanochat),
            "chat_sft.py" | "scripts.chat_sft" => Some(Program::NanochatSft),
            "train_gpt2.py" => Some(Program::BuildNanoGpt),
            "train.py" => Some(Program::NanoGpt),
            _ => None,
        }
    }
}

/// Whether a command-line word is a file in a `config/` folder (`config/train_gpt2.py`,
/// `./nanoGPT/config/finetune_shakespeare.py`): a nanoGPT config file that train.py reads.
pub fn is_nanogpt_config_path(word: &str) -> bool {
    word.ends_with(".py") && word.rsplit('/').nth(1).is_some_and(|dir| dir == "config")
}

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;
use crate::input::query::PageState;
use crate::physics::Patches;

/// One program's settings, checked as the program itself checks them.
#[derive(Clone, Debug, PartialEq)]
pub enum ProgramConfig {
    NanoGpt(nanogpt::config::TrainConfig),
    /// base_train.py's or chat_sft.py's (its `script` says which).
    Nanochat(nanochat::NanochatConfig),
    BuildNanoGpt(build_nanogpt::BngConfig),
}

/// A program's config from its own flags — train.py's `--key=value` overrides, base_train.py's
/// and chat_sft.py's argparse flags, train_gpt2.py's constants as `--B=16` — with every check
/// the script makes. The one reading behind the command line, a JSON config and a pasted launch
/// line.
pub fn config_from_flags(program: Program, flags: &[String]) -> Result<ProgramConfig, ConfigError> {
    Ok(match program {
        Program::NanoGpt => {
            let mut conf = nanogpt::configurator::Configurator::new();
            for f in flags {
                conf.apply_override(f)?;
            }
            ProgramConfig::NanoGpt(conf.finish()?.0)
        }
        Program::Nanochat => ProgramConfig::Nanochat(nanochat::NanochatConfig::from_args(flags)?),
        Program::NanochatSft => {
            ProgramConfig::Nanochat(nanochat::NanochatConfig::from_sft_args(flags)?)
        }
        Program::BuildNanoGpt => {
            let cfg = build_nanogpt::BngConfig::from_args(flags)?;
            cfg.validate()?;
            ProgramConfig::BuildNanoGpt(cfg)
        }
    })
}

/// One program's full answer: the replayed run (what every view shows) and what only that
/// program has (nanoGPT's closed form and explanations, nanochat's model shape).
#[derive(Clone, Debug, PartialEq)]
pub enum ProgramAnalysis {
    NanoGpt(nanogpt::analysis::Analysis),
    Nanochat(nanochat::NanochatAnalysis),
    BuildNanoGpt(build_nanogpt::BngAnalysis),
}

impl std::ops::Deref for ProgramAnalysis {
    type Target = Run;

    /// The replayed run: peaks, components, verdict, where it runs out.
    fn deref(&self) -> &Run {
        match self {
            ProgramAnalysis::NanoGpt(a) => &a.run,
            ProgramAnalysis::Nanochat(a) => &a.run,
            ProgramAnalysis::BuildNanoGpt(a) => &a.run,
        }
    }
}

impl ProgramAnalysis {
    pub fn program(&self) -> Program {
        match self {
            ProgramAnalysis::NanoGpt(_) => Program::NanoGpt,
            ProgramAnalysis::Nanochat(a) => match a.config.script {
                nanochat::config::Script::Base => Program::Nanochat,
                nanochat::config::Script::Sft => Program::NanochatSft,
            },
            ProgramAnalysis::BuildNanoGpt(_) => Program::BuildNanoGpt,
        }
    }

    /// Parameters as the script prints them.
    pub fn params_reported(&self) -> u64 {
        match self {
            ProgramAnalysis::NanoGpt(a) => a.estimate.params.reported,
            ProgramAnalysis::Nanochat(a) => a.shape.total_params(),
            ProgramAnalysis::BuildNanoGpt(a) => a.params(),
        }
    }

    pub fn nanogpt(&self) -> Option<&nanogpt::analysis::Analysis> {
        match self {
            ProgramAnalysis::NanoGpt(a) => Some(a),
            _ => None,
        }
    }

    pub fn nanochat(&self) -> Option<&nanochat::NanochatAnalysis> {
        match self {
            ProgramAnalysis::Nanochat(a) => Some(a),
            _ => None,
        }
    }
}

/// The page's state analysed: the chosen program's config on the chosen card.
pub fn analyze_page(page: &PageState, budget: &Budget) -> Result<ProgramAnalysis, ConfigError> {
    match page.program {
        Program::NanoGpt => {
            nanogpt::analysis::analyze(&page.config, budget).map(ProgramAnalysis::NanoGpt)
        }
        Program::BuildNanoGpt => {
            build_nanogpt::analyze(&page.bng, budget).map(ProgramAnalysis::BuildNanoGpt)
        }
        Program::Nanochat | Program::NanochatSft => {
            nanochat::analyze(page.nanochat_config(), budget).map(ProgramAnalysis::Nanochat)
        }
    }
}

/// [`analyze_page`]'s run alone — its peak, components and verdict — without nanoGPT's closed
/// form, which only explains them: what the first bar paints, in a module that is smaller without it.
pub fn replay_page(page: &PageState, budget: &Budget) -> Result<Run, ConfigError> {
    match page.program {
        Program::NanoGpt => {
            nanogpt::analysis::replay_patched(&page.config, budget, Patches::default())
        }
        Program::BuildNanoGpt => build_nanogpt::analyze(&page.bng, budget).map(|a| a.run),
        Program::Nanochat | Program::NanochatSft => {
            nanochat::analyze(page.nanochat_config(), budget).map(|a| a.run)
        }
    }
}

/// One program's ranked fixes.
#[derive(Clone, Debug, PartialEq)]
pub enum ProgramFixes {
    NanoGpt(nanogpt::fixes::FixReport),
    Nanochat(nanochat::fixes::NanochatFixReport),
    BuildNanoGpt(build_nanogpt::fixes::BngFixReport),
}

/// The fixes for the page's state (`exact`: nanoGPT's fixes checked by replay; nanochat's always are).
pub fn rank_page_fixes(page: &PageState, budget: &Budget, mfu: f64) -> Option<ProgramFixes> {
    match page.program {
        Program::NanoGpt => {
            nanogpt::fixes::rank_fixes(&page.config, budget, mfu, true).map(ProgramFixes::NanoGpt)
        }
        Program::BuildNanoGpt => {
            build_nanogpt::fixes::rank_fixes(&page.bng, budget).map(ProgramFixes::BuildNanoGpt)
        }
        Program::Nanochat | Program::NanochatSft => {
            nanochat::fixes::rank_fixes(page.nanochat_config(), budget).map(ProgramFixes::Nanochat)
        }
    }
}
