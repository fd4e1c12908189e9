//! Errors are values: every invalid input names the field, the value and what is allowed.

use std::fmt;

use crate::events::{ceiling_text, Beyond};
use crate::units::format_bytes;

/// What was wrong with one field of a program's settings (or of a GPU setting).
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigError {
    /// The program's setting (or vramfit option) the problem is about, e.g. `batch_size`.
    pub key: String,
    /// The offending value as the user wrote it (or as Python would print it).
    pub value: String,
    /// Why it was refused.
    pub problem: Problem,
}

/// The kinds of invalid input.
#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    /// A number outside the allowed closed range (`max` is `None` for "no upper bound").
    OutOfRange { min: String, max: String },
    /// A value of the wrong type, e.g. a string where an integer is expected.
    WrongType { expected: &'static str },
    /// A string that is not one of the allowed choices.
    NotOneOf { choices: &'static [&'static str] },
    /// `n_embd` must be a multiple of `n_head` (model.py asserts it).
    NotDivisibleBy {
        divisor_key: &'static str,
        divisor: u64,
    },
    /// A key the program does not know (nanoGPT's configurator raises `ValueError: Unknown config key`).
    UnknownKey,
    /// A value that could not be read at all (bad syntax).
    Unreadable { detail: String },
    /// A training script's own assertion or argparse error, in the script's words.
    Assertion { message: String },
    /// The run would hold more than [`crate::events::CEILING_BYTES`] at once: no card holds it, and vramfit
    /// does not follow it further (key `config`: no one setting is to blame).
    BeyondAnyCard { beyond: Beyond },
}

impl ConfigError {
    pub fn new(key: &str, value: impl fmt::Display, problem: Problem) -> Self {
        ConfigError {
            key: key.to_string(),
            value: value.to_string(),
            problem,
        }
    }

    /// A run that passes [`crate::events::CEILING_BYTES`] where `beyond` says.
    pub fn beyond_any_card(beyond: Beyond) -> Self {
        ConfigError::new("config", "", Problem::BeyondAnyCard { beyond })
    }

    /// Whether this is [`Problem::BeyondAnyCard`]: a run with no peak to show, only that no card
    /// holds it (the page's verdict and first bar say so instead of a bar).
    pub fn is_beyond_any_card(&self) -> bool {
        matches!(self.problem, Problem::BeyondAnyCard { .. })
    }
}

/// A value the user gave, as a message shows it back: whole up to [`ECHO_CHARS`] characters,
/// else its start and an ellipsis (a 5,000-character card name is not worth 5,000 characters of
/// error).
pub fn echo(value: &str) -> std::borrow::Cow<'_, str> {
    match value.char_indices().nth(ECHO_CHARS) {
        None => value.into(),
        Some((cut, _)) => format!("{}…", &value[..cut]).into(),
    }
}

/// How much of a value [`echo`] shows.
pub const ECHO_CHARS: usize = 80;

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // what the user typed is shown back, not all of it where it is long
        let (key, value) = (echo(&self.key), echo(&self.value));
        match &self.problem {
            Problem::OutOfRange { min, max } => {
                write!(f, "{key}={value} is out of range: allowed {min} to {max}")
            }
            Problem::WrongType { expected } => {
                write!(f, "{key}={value} has the wrong type: expected {expected}")
            }
            Problem::NotOneOf { choices } => {
                write!(
                    f,
                    "{key}={value} is not allowed: use one of {}",
                    choices.join(", ")
                )
            }
            Problem::NotDivisibleBy {
                divisor_key,
                divisor,
            } => write!(
                f,
                "{key}={value} must be divisible by {divisor_key}={divisor}"
            ),
            Problem::UnknownKey => write!(f, "unknown config key: {key}"),
            Problem::Unreadable { detail } => {
                write!(f, "{key}={value} could not be read: {detail}")
            }
            Problem::Assertion { message } if value.is_empty() => write!(f, "{key}: {message}"),
            Problem::Assertion { message } => write!(f, "{key}={value}: {message}"),
            Problem::BeyondAnyCard { beyond } => {
                write!(
                    f,
                    "this run would hold more than {} at once (at ",
                    ceiling_text()
                )?;
                // an eval's stage is the eval itself: said once
                match beyond.phase {
                    Some(p) if beyond.stage == crate::events::Stage::Eval => {
                        write!(f, "{}", p.id())?
                    }
                    Some(p) => write!(f, "{} {}", p.id(), beyond.stage.id())?,
                    None => write!(f, "{}", beyond.stage.id())?,
                }
                write!(
                    f,
                    ", a request of {} for {}): beyond any card",
                    format_bytes(beyond.requested),
                    beyond.term.id()
                )
            }
        }
    }
}

impl std::error::Error for ConfigError {}
