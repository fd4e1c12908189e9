//! The training programs vramfit models. Each one is a folder: its own names, defaults and
//! asserts, its shape, the one description of its memory (an allocation sequence) and its fixes.
//! What they share — replay, verdict, GPUs, units — is `crate::engine`.

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
}

impl Program {
    pub const ALL: [Program; 3] = [Program::NanoGpt, Program::Nanochat, Program::NanochatSft];
    /// The ids `--program=` and `?program=` take.
    pub const NAMES: &'static [&'static str] = &["nanogpt", "nanochat", "nanochat-sft"];

    pub fn id(self) -> &'static str {
        match self {
            Program::NanoGpt => "nanogpt",
            Program::Nanochat => "nanochat",
            Program::NanochatSft => "nanochat-sft",
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
        }
    }

    /// The program a command-line word launches: a script path or a `-m` module.
    pub fn from_script(word: &str) -> Option<Program> {
        let name = word.rsplit('/').next().unwrap_or(word);
        match name {
            "base_train.py" | "scripts.base_train" => Some(Program::Nanochat),
            "chat_sft.py" | "scripts.chat_sft" => Some(Program::NanochatSft),
            "train.py" => Some(Program::NanoGpt),
            _ => None,
        }
    }
}
