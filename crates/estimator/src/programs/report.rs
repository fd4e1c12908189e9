//! What a program's report says of its run beyond the replay, neutral of language and medium:
//! the rows of the report's head and the lines under the run and under the fixes' heading. Each
//! is named in the program's section of the report's language files (`crates/i18n/cli/*.txt`:
//! `{WORDS}.model`), with the values its words take; the CLI writes it in the reader's
//! language. A program fills it from its own analysis
//! ([`crate::programs::TrainingProgram::report`]), so the report is written once for all. (What
//! the numbers assume, its notes, are the seam's `notes`: the JSON answer says them too.)

/// A value a report's words take, formatted in the reader's language. (Apart from a fix's
/// [`crate::programs::fix_view::Value`]: the page shows fixes, not reports, and does not carry
/// the formatting only a report needs.)
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A count as the script writes it (`8`, `524288`).
    Int(u64),
    /// A parameter count as the scripts print them (`123.59M`).
    Params(u64),
    /// Bytes in GiB.
    Gib(u128),
    /// Bytes in the unit that reads best (`786.0 MiB`, `9.29 GiB`).
    Bytes(u128),
    /// A number with this many decimals.
    Decimal(f64, u8),
    /// A duration: milliseconds below a second, else seconds.
    Seconds(f64),
    /// Labelled values, in order (`0: 24.99 GiB · 1–3: 24.10 GiB`).
    List(Vec<(String, Value)>),
    /// Text as it is (a dtype, a switch as Python writes it).
    Text(String),
}

impl Value {
    /// A count as the script writes it.
    pub fn int(x: impl Into<u64>) -> Value {
        Value::Int(x.into())
    }
}

/// What a row of the head is about: the label the report puts before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    Model,
    Batch,
    Settings,
    /// More than one GPU.
    Ddp,
    /// The row above, continued (no label).
    More,
}

/// One line of a program's words with the values they take.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Its words' name in the program's section (`model`, `ranks`, `core_fits`).
    pub words: &'static str,
    pub values: Vec<(&'static str, Value)>,
}

impl Line {
    pub fn new(words: &'static str, values: Vec<(&'static str, Value)>) -> Line {
        Line { words, values }
    }
}

/// What a program's report says beyond the replayed run and its fixes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// The head: what runs (model, batch, settings, GPUs), row by row.
    pub head: Vec<(Label, Line)>,
    /// Under the run's verdict (nanochat's ranks).
    pub lines: Vec<Line>,
    /// Under the largest batch that fits, before the fix table (nanochat's CORE examples).
    pub fix_lines: Vec<Line>,
}

/// `value` as Python writes a bool (`True`, `False`): the scripts' own spelling.
pub fn py_bool(value: bool) -> Value {
    Value::Text(if value { "True" } else { "False" }.into())
}
