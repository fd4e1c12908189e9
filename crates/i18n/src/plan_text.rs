//! A plan's changes in words (`nanochat::plan::Change`): the flag as the script spells it, and
//! why, in the reader's language. Shared by the page's plan view and `vramfit plan`; the comment
//! written into the script itself stays English, the script's language (`plan::comment`).

use estimator::programs::nanochat::plan::{Change, Plan, Why};

use crate::{fill, Strings};

/// One change: what (`device-batch-size 16 → 4`) and why.
pub fn change(tr: &Strings, c: &Change) -> String {
    let what = match (&c.from, &c.to) {
        (Some(f), _) if c.why == (Why::Gpus { gpus: 1 }) => {
            format!("torchrun --nproc_per_node={f} → python")
        }
        (_, None) => format!("--{} {}", c.flag, tr.plan_dropped),
        (Some(f), Some(t)) => format!("{} {f} → {t}", c.flag),
        (None, Some(t)) => format!("{} {t}", c.flag),
    };
    let why = match &c.why {
        Why::Gpus { gpus: 1 } => tr.plan_why_one_gpu.to_string(),
        Why::Gpus { gpus } => fill(tr.plan_why_gpus, &[("gpus", &gpus.to_string())]),
        Why::NoFp8 { sm } => fill(tr.plan_why_fp8, &[("sm", &format!("{}.{}", sm.0, sm.1))]),
        Why::LargestBatch {
            micro_steps: Some(m),
        } => fill(tr.plan_why_batch, &[("micro", &m.to_string())]),
        Why::LargestBatch { micro_steps: None } => tr.plan_why_batch_eval.to_string(),
        Why::SmallerModel { from, to } => fill(
            tr.plan_why_depth,
            &[("from", &from.to_string()), ("to", &to.to_string())],
        ),
    };
    format!("{what} ({why})")
}

/// Every change of a stage, in order (`plan_unchanged` for none).
pub fn changes(tr: &Strings, changes: &[Change]) -> String {
    if changes.is_empty() {
        return tr.plan_unchanged.to_string();
    }
    changes
        .iter()
        .map(|c| change(tr, c))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The plan's one-line verdict: every stage fits; a stage could not be planned (its flags are
/// wrong, which its row names — said first, since no batch size mends it); or a stage does not fit.
pub fn summary(tr: &Strings, p: &Plan) -> &'static str {
    if p.all_fit() {
        tr.plan_all_fit
    } else if p.any_unplanned() {
        tr.plan_not_planned
    } else {
        tr.plan_not_all_fit
    }
}
