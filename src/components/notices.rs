//! What the URL held that could not be used: named, with the default that replaced it.

use estimator::query::IssueKind;
use leptos::prelude::*;

use crate::i18n::{error, fill, use_strings};
use crate::state::use_app;

#[component]
pub fn Notices() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    move || {
        let issues = app.notices.get();
        if issues.is_empty() {
            return None;
        }
        let items = issues
            .into_iter()
            .map(|i| {
                let text = match &i.problem {
                    IssueKind::UnknownKey => fill(tr.notice_unknown, &[("key", &i.key)]),
                    IssueKind::Invalid(e) => fill(tr.notice_invalid, &[("message", &error(tr, e))]),
                };
                view! { <li data-key=i.key.clone()>{text}</li> }
            })
            .collect_view();
        Some(view! {
            <aside class="notice" role="status" data-testid="notice">
                <p class="notice__heading">{tr.notice_heading}</p>
                <ul class="notice__list">{items}</ul>
                <button
                    type="button"
                    class="button button--quiet"
                    on:click=move |_| app.notices.set(Vec::new())
                >
                    {tr.dismiss}
                </button>
            </aside>
        })
    }
}
