//! A program's ranked fixes as every front-end shows them: the same shape for every program, so
//! the page's fix panel, its embed and the command line's table are written once. A program
//! fills it from its own fixes ([`crate::programs::TrainingProgram::fixes_view`]); the words come
//! from its section of the language files, by the fix kind's id, with the values here.

use crate::engine::ranking::{Impact, Ranked};
use crate::programs::seam::Paste;

/// A value a fix's words take (`{batch}`, `{params}`), formatted in the reader's language.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A count as the script writes it (`8`, `524288`).
    Int(u64),
    /// A count with the language's digit groups (`524,288`).
    Grouped(u64),
    /// A parameter count as the scripts print them (`123.59M`).
    Params(u64),
    /// Bytes in GiB.
    Gib(u128),
    /// Text as it is (a dtype, a value that may be empty).
    Text(String),
}

impl Value {
    /// A count as the script writes it.
    pub fn int(x: impl Into<u64>) -> Value {
        Value::Int(x.into())
    }
}

/// A fact of a fix's row beyond its peak, saving, fit and cost to training.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fact {
    /// Sequences per optimizer step, before → after.
    Batch(u64, u64),
    /// Tokens per optimizer step, before → after.
    Tokens(u64, u64),
    /// Tokens per iteration after the change.
    TokensPerIter(u64),
    /// Time per iteration relative to now.
    TimeRatio(f64),
}

/// A sentence a fix's why adds where it applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    /// The effective batch could not be kept exactly (`{eff}`, `{old_eff}`).
    EffectiveBatchNotKept,
}

/// What a fix's words take.
#[derive(Clone, Debug, PartialEq)]
pub struct FixWords {
    /// Its kind's id: its words are `fix_titles.{kind}` and `fix_why.{kind}` of the program's
    /// section.
    pub kind: &'static str,
    /// What its words' placeholders take.
    pub values: Vec<(&'static str, Value)>,
    /// The sentences its why adds.
    pub notes: Vec<Note>,
}

/// One ranked fix.
#[derive(Clone, Debug, PartialEq)]
pub struct FixView {
    pub words: FixWords,
    pub peak_bytes: u128,
    /// Old peak − new peak: negative when memory grows.
    pub saving_bytes: i128,
    pub fits: bool,
    pub impact: Impact,
    /// The row's facts beyond peak, saving, fit and impact, in order.
    pub facts: Vec<Fact>,
    /// What to paste, in order: a row shows the first, the best fix all of them.
    pub pastes: Vec<(Paste, String)>,
}

impl FixView {
    /// A fix the engine's ranking evaluated ([`Ranked`]), with what only its program says: the
    /// values of its words, its facts and what to paste.
    pub fn ranked<C, K>(
        f: &Ranked<C, K>,
        words: FixWords,
        facts: Vec<Fact>,
        pastes: Vec<(Paste, String)>,
    ) -> FixView {
        FixView {
            words,
            peak_bytes: f.peak_bytes,
            saving_bytes: f.saving_bytes,
            fits: f.verdict.fits,
            impact: f.impact,
            facts,
            pastes,
        }
    }

    /// A change listed apart: it frees nothing or costs training for nothing.
    pub fn is_fix(&self) -> bool {
        self.impact != Impact::NotAFix
    }
}

/// A program's fixes for one card.
#[derive(Clone, Debug, PartialEq)]
pub struct FixesView {
    /// Whether the run fits as it is.
    pub fits_now: bool,
    /// The largest batch that fits keeping the rest: the values of the program's `largest`
    /// words (`{n}` and what else they take); `None` where not even the smallest does.
    pub largest: Option<Vec<(&'static str, Value)>>,
    /// Ranked, best first.
    pub fixes: Vec<FixView>,
    /// Seconds an iteration takes now, where the program has a speed model.
    pub seconds_now: Option<f64>,
}

impl FixesView {
    /// The fix to show first when the run does not fit: the best ranked real fix, if it fits
    /// (the ranking puts fixes that fit before those that do not).
    pub fn best(&self) -> Option<&FixView> {
        if self.fits_now {
            return None;
        }
        self.fixes.iter().find(|f| f.is_fix()).filter(|f| f.fits)
    }
}
