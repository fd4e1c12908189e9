//! The ranked fixes (rendered by [`crate::html::fixes`]) and the speed model's MFU input.

use leptos::prelude::*;

use estimator::query::PageState;

use crate::browser;
use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn FixList() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let html = move || {
        let report = app.fixes.get()?;
        app.settled.with(|p| {
            let view = report.view(&p.configs, p.budget().other_bytes);
            Some(crate::html::fixes::panel(tr, report.program(), &view))
        })
    };
    let on_click = move |ev: leptos::ev::MouseEvent| browser::copy_snippet(&ev, tr.copied_short);
    view! {
        <section class="fixes" aria-labelledby="fixes-heading">
            <h2 id="fixes-heading" class="fixes__heading">{tr.fixes_heading}</h2>
            <div
                class="fixes__body"
                data-testid="fixes"
                data-settled=move || app.settled.with(PageState::to_query)
                on:click=on_click
                inner_html=html
            ></div>
            // where the speed model (the time column) takes one
            <Show when=move || app.page.with(|p| p.program.speed_from_mfu())>
            <label class="fixes__mfu">
                    <span>{tr.mfu_label}</span>
                    <input
                        type="number"
                        name="mfu"
                        min="0.05"
                        max="1"
                        step="0.05"
                        prop:value=move || estimator::decimal::shortest(app.mfu.get())
                        on:change:target=move |ev| {
                            if let Some(m) = estimator::decimal::parse(&ev.target().value()) {
                                if m > 0.0 && m <= 1.0 {
                                    app.mfu.set(m);
                                }
                            }
                        }
                    />
                    <span class="field__hint">{tr.mfu_hint}</span>
                </label>
            </Show>
        </section>
    }
}
