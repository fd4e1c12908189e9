//! The JSON answer every program shares, typed: the parts around a program's own
//! ([`estimator::programs::ProgramAnswer`], declared in its folder), each key written once here.
//! crates/js/src/types.d.ts declares the same for TypeScript; a test of the npm package holds
//! the two together on every program's answers.

use estimator::engine::events::Stage;
use estimator::engine::run::Run;
use estimator::oom::{Diagnosis, OomMessage};
use estimator::programs::{Program, ProgramAnswer, ProgramFixAnswer};
use estimator::{Budget, Phase, Term, Verdict};
use serde::Serialize;
use serde_json::Value;
use vramfit_i18n::CliLang;

/// Any answer part as JSON, written as text and read back. Byte counts are u128 in the
/// estimator; past 2^64 (a config at the fields' maxima) serde_json's `Value` cannot hold one as
/// an integer, and read back from text such a count is a (rounded) float: still a number, as the
/// text report's is. Only a non-number (NaN) becomes `null`. (Through text only: serialising
/// straight to a `Value` as well would compile every answer's serialisation twice, ~8 KB of the
/// npm package's wasm.)
pub fn value(x: impl Serialize) -> Value {
    serde_json::to_string(&x)
        .and_then(|text| serde_json::from_str(&text))
        .unwrap_or(Value::Null)
}

/// An answer part as JSON text (`null` if it could not be written, which no answer's types
/// allow: every key is text).
pub fn text(x: &impl Serialize) -> String {
    serde_json::to_string(x).unwrap_or_else(|_| "null".into())
}

/// The answer: the program, its own part, then the peak and what it is made of, the card, the
/// verdict, where the card runs out, the ranked fixes, a pasted message and what the numbers
/// assume.
#[derive(Serialize)]
pub struct Answer<'a> {
    pub program: &'static str,
    /// The script as its repository names it.
    pub script: &'static str,
    #[serde(flatten)]
    pub own: ProgramAnswer,
    pub peak_phase: Option<Phase>,
    pub peak_stage: Stage,
    pub peak_micro_step: u32,
    /// Bytes of each bar segment at the peak (they sum to `peak_bytes.overall`).
    pub components_bytes: estimator::Components,
    /// The tensors alive at the peak, by term.
    pub terms_bytes: &'a estimator::Terms,
    pub gpu: GpuUse,
    pub verdict: Verdict,
    /// Where a replay under the card's budget ran out; `null` when it fits.
    pub simulated_oom: Option<SimulatedOom>,
    pub fixes: Vec<Fix>,
    pub oom: Option<OomReading>,
    pub diagnosis: Option<DiagnosisAnswer<'a>>,
    /// What the numbers assume, and what the command line read but did not apply.
    pub warnings: Vec<String>,
}

/// The card and what the allocator may use of it.
#[derive(Serialize)]
pub struct GpuUse {
    pub id: &'static str,
    pub name: &'static str,
    pub total_bytes: u128,
    pub usable_bytes: u128,
    pub context_bytes: u128,
    pub other_bytes: u128,
    pub cublas_workspace_bytes: u128,
}

impl GpuUse {
    pub fn new(budget: &Budget, v: &Verdict) -> GpuUse {
        let g = &budget.gpu;
        GpuUse {
            id: g.id,
            name: g.name,
            total_bytes: g.total_bytes,
            usable_bytes: v.budget_bytes,
            context_bytes: budget.context_bytes,
            other_bytes: budget.other_bytes,
            cublas_workspace_bytes: g.cublas_workspace_bytes(),
        }
    }
}

#[derive(Serialize)]
pub struct SimulatedOom {
    pub phase: Option<Phase>,
    pub stage: Stage,
    pub micro_step: u32,
    pub requested_bytes: u128,
    pub tensor: Term,
    pub allocated_bytes: u128,
    pub reserved_bytes: u128,
    pub reserved_unallocated_bytes: u128,
    pub largest_free_block_bytes: u128,
}

impl SimulatedOom {
    pub fn of(run: &Run) -> Option<SimulatedOom> {
        let o = run.oom()?;
        Some(SimulatedOom {
            phase: o.phase,
            stage: o.stage,
            micro_step: o.micro_step,
            requested_bytes: o.requested,
            tensor: o.term,
            allocated_bytes: o.allocated,
            reserved_bytes: o.reserved,
            reserved_unallocated_bytes: o.reserved - o.allocated,
            largest_free_block_bytes: o.largest_free,
        })
    }
}

/// One ranked fix: its kind, its English title and why, what it does to the peak and the
/// verdict, and its program's own fields (what to set, the command line or the edits).
#[derive(Serialize)]
pub struct Fix {
    pub kind: &'static str,
    pub title: String,
    pub why: String,
    /// How much it changes training: nothing, slower, batch, model, …
    pub impact: &'static str,
    pub peak_bytes: u128,
    /// Old peak − new peak: negative where the change costs memory.
    pub saving_bytes: i128,
    pub fits: bool,
    #[serde(flatten)]
    pub own: ProgramFixAnswer,
}

/// What a pasted out-of-memory message says, number by number (`null` for what it does not say).
#[derive(Serialize)]
pub struct OomReading {
    pub recognised: bool,
    pub tried_to_allocate_bytes: Option<u128>,
    pub total_capacity_bytes: Option<u128>,
    pub free_bytes: Option<u128>,
    pub process_in_use_bytes: Option<u128>,
    pub allocated_by_pytorch_bytes: Option<u128>,
    pub reserved_unallocated_bytes: Option<u128>,
    pub already_allocated_bytes: Option<u128>,
    pub reserved_total_bytes: Option<u128>,
    pub allowed_bytes: Option<u128>,
    pub other_processes: Vec<OtherProcess>,
    /// The card it names, as a preset's id.
    pub gpu: Option<&'static str>,
}

#[derive(Serialize)]
pub struct OtherProcess {
    pub pid: u64,
    pub bytes: u128,
}

impl OomReading {
    pub fn of(m: &OomMessage) -> OomReading {
        OomReading {
            recognised: m.recognised,
            tried_to_allocate_bytes: m.tried_to_allocate_bytes,
            total_capacity_bytes: m.total_capacity_bytes,
            free_bytes: m.free_bytes,
            process_in_use_bytes: m.process_in_use_bytes,
            allocated_by_pytorch_bytes: m.allocated_by_pytorch_bytes,
            reserved_unallocated_bytes: m.reserved_unallocated_bytes,
            already_allocated_bytes: m.already_allocated_bytes,
            reserved_total_bytes: m.reserved_total_bytes,
            allowed_bytes: m.allowed_bytes,
            other_processes: m
                .other_processes
                .iter()
                .map(|&(pid, bytes)| OtherProcess { pid, bytes })
                .collect(),
            gpu: m.card().map(|g| g.id),
        }
    }
}

/// Which tensor of this run a message's failed request is, and where, with its sentence.
#[derive(Serialize)]
pub struct DiagnosisAnswer<'a> {
    #[serde(flatten)]
    pub diagnosis: &'a Diagnosis,
    pub explanation: String,
}

impl DiagnosisAnswer<'_> {
    pub fn of<'a>(program: Program, m: &OomMessage, d: &'a Diagnosis) -> DiagnosisAnswer<'a> {
        DiagnosisAnswer {
            diagnosis: d,
            explanation: vramfit_i18n::diagnosis_sentence(&CliLang::en(), program, m, d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use estimator::Risk;
    use serde_json::json;

    #[test]
    fn serde_names_are_the_ids() {
        for p in Phase::ALL {
            assert_eq!(value(p), Value::from(p.id()));
        }
        for s in Stage::ALL {
            assert_eq!(value(s), Value::from(s.id()));
        }
        for r in [Risk::Fits, Risk::Tight, Risk::Oom] {
            assert_eq!(value(r), Value::from(r.id()));
        }
    }

    #[test]
    fn a_count_past_u64_is_a_number_not_null() {
        assert_eq!(value(u128::MAX), json!(u128::MAX as f64));
        let parts = value((1u128 << 70, 3u128));
        assert_eq!(parts, json!([(1u128 << 70) as f64, 3]));
        assert!(parts[0].is_number());
        assert_eq!(value(f64::NAN), Value::Null);
        assert_eq!(value(7u128), json!(7));
    }
}
