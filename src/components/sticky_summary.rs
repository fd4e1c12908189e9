//! On a phone the answer sits above the inputs, so a slider far below it would move a bar that is
//! out of sight. This one line — what the run needs, the verdict with its margin, and a thin bar of
//! the six components and the allocator's reserve against the card — sticks to the top of the
//! screen once the answer scrolls away.
//! Wide screens hide it: there the answer stays beside the inputs.

use estimator::decimal::Fixed;
use estimator::Component;
use leptos::prelude::*;

use crate::format;
use crate::i18n::{use_strings, verdict_words};
use crate::state::use_app;

#[component]
pub fn StickySummary() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    move || {
        let v = app.verdict.get()?;
        let (peak, comps) = app
            .analysis
            .with(|a| a.as_ref().ok().map(|a| (a.peak_bytes(), a.components())))?;
        // the same scale as the big bar: the card, or what the run needs when it overflows it
        let scale = v.bar_scale(app.budget.with(|b| b.gpu.total_bytes), peak) as f64;
        let (word, class, margin) = verdict_words(&tr.bar_words(), &v);
        let usable = v.budget_bytes as f64 / scale * 100.0;
        // the line leads with what the verdict weighs (the allocated peak and the allocator's
        // reserve beyond it), so its number and its margin agree at a glance: "9.29 GiB · Out of
        // memory" on an 11.24 GiB card read as a contradiction (issue 26)
        let reserve = v.reserve_beyond(peak);
        Some(view! {
            // the verdict panel says it to screen readers (aria-live); this is its visual echo
            <div class=format!("sticky-summary {class}") data-testid="sticky-summary" aria-hidden="true">
                <p class="sticky-summary__text">
                    <strong data-testid="sticky-total" data-bytes=v.need_bytes.to_string()>
                        {format::gib(v.need_bytes)}
                    </strong>
                    " · "
                    <span class="verdict__word">{word}</span>
                    " · "
                    {margin}
                </p>
                <div class="sticky-summary__bar">
                    {Component::ALL
                        .iter()
                        .map(|&c| {
                            let width = comps.get(c) as f64 / scale * 100.0;
                            view! {
                                <span
                                    class=format!("bar__seg--{}", c.id())
                                    style:width=format!("{}%", Fixed(width, 3))
                                ></span>
                            }
                        })
                        .collect_view()}
                    <span
                        class="sticky-summary__reserve"
                        style:width=format!("{}%", Fixed(reserve as f64 / scale * 100.0, 3))
                    ></span>
                    <span
                        class="sticky-summary__marker"
                        style:left=format!("{}%", Fixed(usable, 3))
                    ></span>
                </div>
            </div>
        })
    }
}
