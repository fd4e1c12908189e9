//! A program's settings as the page lays them out: groups of inputs, each a slider over the steps
//! people think in, a choice, a switch, or a line the page computes. The program states them (the
//! seam's `INPUTS`); the page draws any program's from this, so a new program brings its inputs
//! with it and the page's code does not change.

use crate::engine::settings::Allocator;

/// One group of inputs under its heading.
#[derive(Clone, Copy, Debug)]
pub struct Group {
    pub section: Section,
    pub inputs: &'static [Input],
}

/// A group's heading (the language files' `section_*` words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    Model,
    Batch,
    Precision,
    /// Attention, dtype and allocator, where a script groups them (nanochat's flags).
    Attention,
    Eval,
}

/// One input of a group, by its setting's key (the URL's, the JSON's).
#[derive(Clone, Copy, Debug)]
pub enum Input {
    /// A slider through `steps` and a field that takes any valid value; `float`: a fraction
    /// (dropout), shown as Python writes it.
    Number {
        key: &'static str,
        steps: &'static [f64],
        float: bool,
    },
    /// One of `options`: each a value and how it is shown.
    Choice {
        key: &'static str,
        options: &'static [(&'static str, Label)],
    },
    /// `True` / `False`.
    Toggle { key: &'static str },
    /// The batch as the script computes it: micro-batch × sequence length × micro-steps = tokens
    /// per optimizer step (the seam's `batch`).
    BatchLine,
    /// nanoGPT's model sizes by name (GPT-2 small to XL, Shakespeare's baby GPT).
    ModelPresets,
    /// nanoGPT's vocabulary: GPT-2's, characters', or a number.
    Vocab,
    /// That evaluation memory does not depend on `eval_iters` (a note under its field).
    EvalItersNote,
}

/// How an option is shown: as written, or in the page's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    Text(&'static str),
    AllocatorDefault,
    AllocatorExpandable,
    AttentionFlash,
    AttentionManual,
}

impl Input {
    /// A slider over `steps` for a whole number.
    pub const fn number(key: &'static str, steps: &'static [f64]) -> Input {
        Input::Number {
            key,
            steps,
            float: false,
        }
    }

    /// The setting it edits, if it edits one.
    pub fn key(&self) -> Option<&'static str> {
        match *self {
            Input::Number { key, .. } | Input::Choice { key, .. } | Input::Toggle { key } => {
                Some(key)
            }
            Input::BatchLine | Input::ModelPresets | Input::Vocab | Input::EvalItersNote => None,
        }
    }
}

/// An option shown as it is written.
pub const fn as_written(value: &'static str) -> (&'static str, Label) {
    (value, Label::Text(value))
}

/// The options `False` and `True`, shown as Python writes them.
pub const PY_BOOL: &[(&str, Label)] = &[as_written("False"), as_written("True")];

/// The caching allocator's two modes, the default first.
pub const ALLOCATORS: &[(&str, Label)] = &[
    (Allocator::Default.as_str(), Label::AllocatorDefault),
    (
        Allocator::ExpandableSegments.as_str(),
        Label::AllocatorExpandable,
    ),
];
