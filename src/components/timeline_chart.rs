//! Memory over the run (rendered by [`crate::html::timeline`]).

use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn TimelineChart() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let html = move || {
        let budget = app.budget.with(|b| b.allocator_budget());
        app.analysis.with(|a| {
            a.as_ref()
                .ok()
                .map(|a| crate::html::timeline::chart(tr, a, budget))
        })
    };
    view! { <div class="timeline" inner_html=html></div> }
}
