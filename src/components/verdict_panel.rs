//! Will it run on this card: fits / tight / out of memory, with the headroom or the shortfall.

use estimator::{Estimate, Risk};
use leptos::prelude::*;

use crate::format;
use crate::i18n::fill;
use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn VerdictPanel() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    move || {
        let v = app.verdict.get()?;
        let card = app.budget.with(|b| b.gpu.name);
        let peak = app
            .estimate
            .with(|e| e.as_ref().map_or(0, Estimate::peak_bytes));
        let (word, class) = match v.risk {
            Risk::Fits => (tr.verdict_fits, "verdict--fits"),
            Risk::Tight => (tr.verdict_tight, "verdict--tight"),
            Risk::Oom => (tr.verdict_oom, "verdict--oom"),
        };
        let margin = if v.headroom_bytes >= 0 {
            fill(tr.headroom, &[("gib", &format::gib_abs(v.headroom_bytes))])
        } else {
            fill(tr.shortfall, &[("gib", &format::gib_abs(v.headroom_bytes))])
        };
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
                ("frag", &format::gib(v.need_bytes.saturating_sub(peak))),
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
            </section>
        })
    }
}
