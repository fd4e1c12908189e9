//! The training programs vramfit models, and the registry: one line per program.
//!
//! Each program is a folder — its own names, defaults and asserts, its shape, the one description
//! of its memory (an allocation sequence) and its fixes — with one type implementing
//! [`seam::TrainingProgram`]. The registry below turns the lines into [`Program`] and every
//! dispatch over it; what the programs share (replay, verdict, GPUs, units) is the engine.

pub mod answer;
pub mod build_nanogpt;
pub mod fix_view;
pub mod inputs;
pub mod llms_from_scratch;
pub mod nanochat;
pub mod nanogpt;
mod registry;
pub mod report;
pub mod seam;

pub use seam::TrainingProgram;

use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::Budget;
use crate::input::query::PageState;

registry::registry! {
    /// karpathy/nanoGPT's `train.py`.
    NanoGpt(nanogpt) => nanogpt::NanoGpt,
    /// karpathy/nanochat's `scripts/base_train.py`.
    Nanochat(nanochat) => nanochat::BaseTrain,
    /// karpathy/nanochat's `scripts/chat_sft.py`.
    NanochatSft(nanochat_sft) => nanochat::ChatSft,
    /// karpathy/build-nanogpt's `train_gpt2.py`.
    BuildNanoGpt(bng) => build_nanogpt::BuildNanoGpt,
    /// rasbt/LLMs-from-scratch's `ch05/01_main-chapter-code/gpt_train.py`.
    LfsCh05(lfs_ch05) => llms_from_scratch::GptTrain,
    /// rasbt/LLMs-from-scratch's `ch05/10_llm-training-speed/01_opt_single_gpu.py` (and 02 under torchrun).
    LfsCh05Speed(lfs_ch05_speed) => llms_from_scratch::speed::GptTrainSpeed,
    /// rasbt/LLMs-from-scratch's `ch06/01_main-chapter-code/gpt_class_finetune.py`.
    LfsCh06(lfs_ch06) => llms_from_scratch::ch06::GptClassFinetune,
    /// rasbt/LLMs-from-scratch's `ch07/01_main-chapter-code/gpt_instruction_finetuning.py`.
    LfsCh07(lfs_ch07) => llms_from_scratch::ch07::GptInstructionFinetuning,
}

impl Program {
    /// The program when none is named: train.py, the script vramfit began with.
    pub const DEFAULT: Program = Program::NanoGpt;

    /// The id `--program=` and `?program=` take.
    pub fn parse(s: &str) -> Option<Program> {
        Program::ALL.into_iter().find(|p| p.id() == s)
    }

    /// The program a command-line word launches: a script path or a `-m` module. A word that
    /// names a program's config file is never a script, whatever its name (`config/train_gpt2.py`
    /// is nanoGPT's best-known config, not build-nanogpt's script).
    pub fn from_script(word: &str) -> Option<Program> {
        if Program::of_config_file(word).is_some() {
            return None;
        }
        let name = word.rsplit('/').next().unwrap_or(word);
        Program::ALL
            .into_iter()
            .find(|p| p.launch_words().contains(&name))
    }

    /// The program whose config file a command-line word names (train.py's `config/x.py`).
    pub fn of_config_file(word: &str) -> Option<Program> {
        Program::ALL.into_iter().find(|p| p.names_config_file(word))
    }
}

/// A program's config from its own flags — train.py's `--key=value` overrides, base_train.py's
/// and chat_sft.py's argparse flags, train_gpt2.py's constants as `--B=16` — with every check
/// the script makes. The one reading behind the command line, a JSON config and a pasted launch
/// line.
pub fn config_from_flags(program: Program, flags: &[String]) -> Result<ProgramConfig, ConfigError> {
    program.config_from_flags(flags)
}

/// The page's state analysed: the chosen program's config on the chosen card.
pub fn analyze_page(page: &PageState, budget: &Budget) -> Result<ProgramAnalysis, ConfigError> {
    page.configs.analyze(page.program, budget)
}

/// [`analyze_page`]'s run alone — its peak, components and verdict — without what only explains
/// them (nanoGPT's closed form): what the first bar paints, in a module that is smaller without it.
pub fn replay_page(page: &PageState, budget: &Budget) -> Result<Run, ConfigError> {
    page.configs.replay(page.program, budget)
}

/// The fixes for the page's state, each replayed.
pub fn rank_page_fixes(page: &PageState, budget: &Budget, mfu: f64) -> Option<ProgramFixes> {
    page.configs.rank_fixes(page.program, budget, mfu)
}
