//! A fix in words: its title and its sentence of why, with this run's numbers, in a language.

use estimator::programs::fix_view::{FixWords, FixesView, Note, Value};
use estimator::programs::report::Value as ReportValue;
use estimator::programs::Program;

use crate::{fill, format, Strings};

/// A fix's saving, in the one convention the page and the command line share: memory it frees
/// is a plain positive amount ("4.86 GiB"), memory it adds is a cost ("costs 4.54 GiB"); what
/// rounds to nothing reads "0.00 GiB" either way, never "−0.00".
pub fn saving(tr: &Strings, bytes: i128) -> String {
    let amount = format::gib_abs(bytes);
    if bytes >= 0 || amount == format::gib_abs(0) {
        amount
    } else {
        fill(tr.saving_cost, &[("gib", &amount)])
    }
}

/// A fix's value as the reader's language writes it.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::Int(n) => n.to_string(),
        Value::Grouped(n) => format::grouped(*n),
        Value::Params(n) => format::params(*n),
        Value::Gib(b) => format::gib(*b),
        Value::Text(t) => t.clone(),
    }
}

/// A report's value as the reader's language writes it.
pub fn report_value_text(v: &ReportValue) -> String {
    match v {
        ReportValue::Int(n) => n.to_string(),
        ReportValue::Params(n) => format::params(*n),
        ReportValue::Gib(b) => format::gib(*b),
        ReportValue::Bytes(b) => format::bytes(*b),
        ReportValue::Decimal(x, places) => format::decimal(*x, usize::from(*places)),
        ReportValue::Seconds(s) => format::step_time(*s),
        ReportValue::List(items) => items
            .iter()
            .map(|(label, v)| format!("{label}: {}", report_value_text(v)))
            .collect::<Vec<_>>()
            .join(" · "),
        ReportValue::Text(t) => t.clone(),
    }
}

/// A report line's words with its values filled in.
pub fn report_line(template: &str, values: &[(&'static str, ReportValue)]) -> String {
    let texts: Vec<(&str, String)> = values
        .iter()
        .map(|(k, v)| (*k, report_value_text(v)))
        .collect();
    let pairs: Vec<(&str, &str)> = texts.iter().map(|(k, v)| (*k, v.as_str())).collect();
    fill(template, &pairs)
}

/// `values` filled into `template`.
fn fill_values(template: &str, values: &[(&'static str, Value)]) -> String {
    let texts: Vec<(&str, String)> = values.iter().map(|(k, v)| (*k, value_text(v))).collect();
    let pairs: Vec<(&str, &str)> = texts.iter().map(|(k, v)| (*k, v.as_str())).collect();
    fill(template, &pairs)
}

/// A fix's title and its sentence of why (with the notes that apply), in `tr`'s language and
/// `program`'s words.
pub fn fix_words(tr: &Strings, program: Program, f: &FixWords) -> (String, String) {
    let words = tr.program(program);
    let mut why = fill_values(words.fix_why(f.kind), &f.values);
    for note in &f.notes {
        let template = match note {
            Note::EffectiveBatchNotKept => tr.effective_not_kept,
        };
        why = format!("{why} {}", fill_values(template, &f.values));
    }
    (fill_values(words.fix_title(f.kind), &f.values), why)
}

/// The line of the largest batch that fits keeping the rest, in `program`'s words (train.py's
/// says what a smaller micro-batch does to the effective batch; the others keep their total).
pub fn largest_line(tr: &Strings, program: Program, view: &FixesView) -> String {
    let words = tr.program(program);
    match &view.largest {
        Some(values) => fill_values(words.largest(), values),
        None => words.largest_none().to_string(),
    }
}
