//! Memory over the run (rendered by [`crate::html::timeline`]). Redrawn once the inputs settle,
//! not on every step of a slider drag: the bar and the verdict are the live part.

use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn TimelineChart() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let html = move || {
        // settled inputs are the current ones, so the current analysis is theirs
        app.settled.track();
        app.analysis.with_untracked(|a| {
            // the usable line where the verdict drew it
            a.as_ref()
                .ok()
                .map(|a| crate::html::timeline::chart(tr, a, a.program(), a.verdict.budget_bytes))
        })
    };
    view! { <div class="timeline" inner_html=html></div> }
}
