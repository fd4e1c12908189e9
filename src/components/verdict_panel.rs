//! Will it run on this card: fits / tight / out of memory, with the headroom or the shortfall,
//! and where and why an out-of-memory happens.

use estimator::oom::OomMessage;
use estimator::programs::ProgramAnalysis;
use leptos::prelude::*;

use crate::format;
use crate::i18n::{fill, place, use_strings, verdict_words, Strings};
use crate::state::use_app;

/// "Out of memory in steady training, loss, micro-step 2: 1.54 GiB requested for …".
fn oom_sentence(tr: &Strings, a: &ProgramAnalysis) -> Option<String> {
    let o = a.oom()?;
    Some(fill(
        tr.oom_explained,
        &[
            (
                "where",
                &place(tr, a.program(), o.phase, o.stage, o.micro_step),
            ),
            ("requested", &format::bytes(o.requested)),
            ("tensor", tr.term(o.term)),
            ("allocated", &format::bytes(o.allocated)),
            ("fragmented", &format::bytes(o.reserved - o.allocated)),
            ("largest", &format::bytes(o.largest_free)),
        ],
    ))
}

/// What a pasted message itself says, when the page has none of the run's settings.
fn message_facts(tr: &Strings, m: &OomMessage) -> String {
    let size = |b: Option<u128>| b.map_or("?".to_string(), format::bytes);
    fill(
        tr.verdict_message_facts,
        &[
            ("total", &size(m.total_capacity_bytes)),
            ("requested", &size(m.tried_to_allocate_bytes)),
            ("allocated", &size(m.allocated())),
            ("fragmented", &size(m.reserved_unallocated_bytes)),
            ("free", &size(m.free_bytes)),
        ],
    )
}

#[component]
pub fn VerdictPanel() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    move || {
        if let Some(m) = app.awaiting() {
            return Some(
                view! {
                    <section
                        class="verdict verdict--waiting"
                        data-testid="verdict"
                        data-risk="awaiting-settings"
                        aria-live="polite"
                    >
                        <p class="verdict__word">{tr.verdict_waiting}</p>
                        <p class="verdict__detail">{message_facts(tr, &m)}</p>
                        <p class="verdict__need">{tr.paste_needs_settings}</p>
                    </section>
                }
                .into_any(),
            );
        }
        // a run past the ceiling has no verdict against the card, only that no card holds it; a
        // run the script itself would stop on this card (--fp8 without FP8 matmuls) says why
        let refused = app.analysis.with(|a| match a {
            Err(e) if e.is_beyond_any_card() => {
                Some(("beyond", tr.verdict_beyond, crate::i18n::error(tr, e)))
            }
            Err(e) => Some((
                "cannot-run",
                tr.verdict_cannot_run,
                crate::i18n::error(tr, e),
            )),
            Ok(_) => None,
        });
        if let Some((risk, word, why)) = refused {
            return Some(
                view! {
                    <section
                        class="verdict verdict--oom"
                        data-testid="verdict"
                        data-fits="false"
                        data-risk=risk
                        aria-live="polite"
                    >
                        <p class="verdict__word">{word}</p>
                        <p class="verdict__detail">{why}</p>
                    </section>
                }
                .into_any(),
            );
        }
        let v = app.verdict.get()?;
        let card = app.budget.with(|b| b.gpu.name);
        let (peak, oom) = app.analysis.with(|a| {
            a.as_ref()
                .map_or((0, None), |a| (a.peak_bytes(), oom_sentence(tr, a)))
        });
        let (word, class, margin) = verdict_words(&tr.bar_words(), &v);
        let detail = fill(
            tr.verdict_detail,
            &[
                ("need", &format::gib(v.need_bytes)),
                ("usable", &format::gib(v.budget_bytes)),
                ("card", card),
            ],
        );
        let need = fill(
            tr.need_explained,
            &[
                ("peak", &format::gib(peak)),
                ("frag", &format::gib(v.reserve_beyond(peak))),
            ],
        );
        Some(view! {
            <section
                class=format!("verdict {class}")
                data-testid="verdict"
                data-fits=v.fits.to_string()
                data-risk=v.risk.id()
                aria-live="polite"
            >
                <p class="verdict__word">{word}</p>
                <p class="verdict__margin">{margin}</p>
                <p class="verdict__detail">{detail}</p>
                <p class="verdict__need">{need}</p>
                {oom.map(|s| view! { <p class="verdict__oom" data-testid="oom-explained">{s}</p> })}
            </section>
        }
        .into_any())
    }
}
