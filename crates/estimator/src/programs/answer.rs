//! A program's own part of the JSON answer (crates/report writes what every program's answer
//! has around it): typed, so each key is declared once, in the program's folder, and serialised
//! by serde where the `serde` feature is on. The page does not turn it on; there these types are
//! plain data that nothing reads.

/// What a program's part of the answer must be: serialisable where the JSON is written.
#[cfg(feature = "serde")]
pub trait Part: serde::Serialize {}
#[cfg(feature = "serde")]
impl<T: serde::Serialize> Part for T {}
/// What a program's part of the answer must be: serialisable where the JSON is written.
#[cfg(not(feature = "serde"))]
pub trait Part {}
#[cfg(not(feature = "serde"))]
impl<T> Part for T {}

/// An object whose keys are known only at run time (a program's settings), in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Object<V>(pub Vec<(String, V)>);

#[cfg(feature = "serde")]
impl<V: serde::Serialize> serde::Serialize for Object<V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A setting's value as JSON has it: a number, a boolean or text.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Scalar {
    /// A setting's text as a script writes it, as JSON has it: an integer, a number, Python's
    /// `True`/`False` as booleans, else the text.
    pub fn from_text(text: String) -> Scalar {
        if let Ok(n) = text.parse::<i64>() {
            return Scalar::Int(n);
        }
        // crate::decimal, not str::parse: core's float parser is a tenth of the page's wasm
        if let Some(x) = crate::decimal::parse(&text).filter(|x| x.is_finite()) {
            return Scalar::Float(x);
        }
        match text.as_str() {
            "True" => Scalar::Bool(true),
            "False" => Scalar::Bool(false),
            _ => Scalar::Text(text),
        }
    }
}

/// A program's settings by their names (`keys`, in order), each as [`Scalar::from_text`] reads
/// the text `get` gives it.
pub fn settings_of(keys: &[&str], get: impl Fn(&str) -> Option<String>) -> Object<Scalar> {
    Object(
        keys.iter()
            .filter_map(|k| Some((k.to_string(), Scalar::from_text(get(k)?))))
            .collect(),
    )
}

/// Parameters: as the model holds them, as the script prints them, and (nanochat) those its
/// scaling laws count.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Params {
    pub total: u64,
    pub reported: u64,
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub scaling: Option<u64>,
}

/// The peaks of the phases a program runs, and the most the allocator reserved. `eval` is the
/// larger of the evaluations where the program measures them apart (`eval_first`,
/// `eval_after_step`); a phase a program does not have is absent, one it skips is `null`.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct PeakBytes {
    pub overall: u128,
    pub train_steady: Option<u128>,
    pub train_first_iter: Option<u128>,
    /// Iteration 0 of a second run of the same shapes, where `train_first_iter` is a first
    /// run's on an empty compile cache (nanochat's base_train.py).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub train_first_iter_warm: Option<Option<u128>>,
    pub eval: Option<u128>,
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub eval_first: Option<Option<u128>>,
    pub eval_after_step: Option<u128>,
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub core: Option<Option<u128>>,
    pub reserved: u128,
}

impl PeakBytes {
    /// A run's peaks as a program with one evaluation of each kind answers them: `eval` its
    /// `Eval` phase, `eval_after_step` its `EvalAfterStep`, no split of either.
    pub fn of(run: &crate::engine::run::Run) -> PeakBytes {
        use crate::engine::events::Phase;
        PeakBytes {
            overall: run.peak_bytes(),
            train_steady: run.phase_bytes(Phase::TrainSteady),
            train_first_iter: run.phase_bytes(Phase::TrainFirstIter),
            train_first_iter_warm: None,
            eval: run.phase_bytes(Phase::Eval),
            eval_first: None,
            eval_after_step: run.phase_bytes(Phase::EvalAfterStep),
            core: None,
            reserved: run.free_run.peak_reserved,
        }
    }
}

/// One fix of a script edited by hand (build-nanogpt's constants, LLMs-from-scratch's dicts and
/// lines): the lines to edit, how sure the verdict is, the tokens a step then sees.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct EditedFix {
    /// The script's lines to edit (and the environment to set).
    pub edits: Vec<String>,
    pub risk: crate::verdict::Risk,
    pub tokens_per_iter: u64,
}
