//! The parts of the answer every program shares: the replayed run's components and terms, the
//! card, the verdict, where a capped replay ran out, and a pasted out-of-memory message.

use estimator::engine::run::Run;
use estimator::oom::{Diagnosis, OomMessage};
use estimator::{Budget, Verdict};
use serde::Serialize;
use serde_json::{json, Map, Value};
use vramfit_i18n::CliLang;

/// Any answer part as JSON. Byte counts are u128 in the estimator; past 2^64 (a config at the
/// fields' maxima) serde_json's `Value` cannot hold one as an integer, so such a part is written
/// as text and read back, which makes the count a (rounded) float: still a number, as the text
/// report's is. Only a non-number (NaN) becomes `null`.
pub fn value(x: impl Serialize) -> Value {
    serde_json::to_value(&x)
        .or_else(|_| serde_json::to_string(&x).and_then(|text| serde_json::from_str(&text)))
        .unwrap_or(Value::Null)
}

/// An object with keys in the given order.
pub fn object<K: Into<String>>(pairs: impl IntoIterator<Item = (K, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v))
            .collect::<Map<_, _>>(),
    )
}

/// Where a replay under the card's budget ran out; `null` when it fits.
pub fn simulated_oom(run: &Run) -> Value {
    let Some(o) = run.oom() else {
        return Value::Null;
    };
    json!({
        "phase": o.phase,
        "stage": o.stage,
        "micro_step": o.micro_step,
        "requested_bytes": value(o.requested),
        "tensor": o.term,
        "allocated_bytes": value(o.allocated),
        "reserved_bytes": value(o.reserved),
        "reserved_unallocated_bytes": value(o.reserved - o.allocated),
        "largest_free_block_bytes": value(o.largest_free),
    })
}

/// Bytes of each bar segment at the peak (they sum to `peak_bytes.overall`).
pub fn components(run: &Run) -> Value {
    value(run.components())
}

/// The tensors alive at the peak, by term.
pub fn terms(run: &Run) -> Value {
    value(run.peak_terms())
}

/// The card and what the allocator may use of it.
pub fn gpu(budget: &Budget, v: &Verdict) -> Value {
    let g = &budget.gpu;
    json!({
        "id": g.id,
        "name": g.name,
        "total_bytes": value(g.total_bytes),
        "usable_bytes": value(v.budget_bytes),
        "context_bytes": value(budget.context_bytes),
        "other_bytes": value(budget.other_bytes),
        "cublas_workspace_bytes": value(g.cublas_workspace_bytes()),
    })
}

/// The peak, where it happens and what it is made of: the keys every program's answer has in
/// this order after its `params`.
pub fn peak_at(run: &Run) -> [(&'static str, Value); 5] {
    let (phase, stage, micro_step) = run.peak_at();
    [
        ("peak_phase", value(phase)),
        ("peak_stage", value(stage)),
        ("peak_micro_step", value(micro_step)),
        ("components_bytes", components(run)),
        ("terms_bytes", terms(run)),
    ]
}

/// What a pasted out-of-memory message says, number by number (`null` for what it does not say).
pub fn oom_message(m: &OomMessage) -> Value {
    json!({
        "recognised": m.recognised,
        "tried_to_allocate_bytes": value(m.tried_to_allocate_bytes),
        "total_capacity_bytes": value(m.total_capacity_bytes),
        "free_bytes": value(m.free_bytes),
        "process_in_use_bytes": value(m.process_in_use_bytes),
        "allocated_by_pytorch_bytes": value(m.allocated_by_pytorch_bytes),
        "reserved_unallocated_bytes": value(m.reserved_unallocated_bytes),
        "already_allocated_bytes": value(m.already_allocated_bytes),
        "reserved_total_bytes": value(m.reserved_total_bytes),
        "allowed_bytes": value(m.allowed_bytes),
        "other_processes": m.other_processes.iter()
            .map(|(pid, b)| json!({"pid": pid, "bytes": value(*b)}))
            .collect::<Vec<_>>(),
        "gpu": m.card().map(|g| g.id),
    })
}

/// Which tensor of this config a message's failed request is, and where in the run.
pub fn diagnosis(m: &OomMessage, d: &Diagnosis) -> Value {
    let mut v = value(d);
    if let Value::Object(map) = &mut v {
        map.insert(
            "explanation".into(),
            value(vramfit_i18n::diagnosis_sentence(&CliLang::en(), m, d)),
        );
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use estimator::engine::events::Stage;
    use estimator::Phase;

    #[test]
    fn serde_names_are_the_ids() {
        for p in [
            Phase::TrainFirstIter,
            Phase::TrainSteady,
            Phase::Eval,
            Phase::EvalAfterStep,
            Phase::Core,
        ] {
            assert_eq!(value(p), Value::from(p.id()));
        }
        for s in Stage::ALL {
            assert_eq!(value(s), Value::from(s.id()));
        }
        for r in [
            estimator::Risk::Fits,
            estimator::Risk::Tight,
            estimator::Risk::Oom,
        ] {
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
