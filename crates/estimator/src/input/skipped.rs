//! A line of pasted or named text (a config file, a script's constants) that a program's
//! reader did not apply, and why: the page lists them under a paste, the command line says them
//! as warnings.

use crate::error::ConfigError;

/// A line of a config file that was not applied, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    /// Where it came from (a file name, or "pasted text").
    pub source: String,
    /// 1-based line number.
    pub line: usize,
    pub text: String,
    pub reason: SkipReason,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SkipReason {
    /// Not `key = literal` (imports, function calls, names on the right-hand side…).
    NotUnderstood(String),
    /// A name the script does not read (train.py's exec() would create a harmless global).
    UnknownKey(String),
    /// A setting whose value is wrong (type or range); the earlier value stays.
    Invalid(ConfigError),
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match &self.reason {
            SkipReason::NotUnderstood(why) => format!("not understood ({why})"),
            SkipReason::UnknownKey(k) => format!("'{k}' is not one of the script's settings"),
            SkipReason::Invalid(e) => e.to_string(),
        };
        write!(
            f,
            "{}:{}: {what}: {}",
            self.source,
            self.line,
            self.text.trim()
        )
    }
}
