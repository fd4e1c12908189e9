//! The calculator's settings back out as nanoGPT config lines, a command line and the
//! environment, each with a copy button (for the settled inputs: nobody copies mid-drag).

use leptos::prelude::*;

use crate::browser;
use crate::i18n::{fill, use_strings};
use crate::state::use_app;

#[component]
pub fn ConfigExport() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let html = move || {
        app.settled
            .with(|p| crate::html::export::panel(tr, &p.configs.export(p.program)))
    };
    view! {
        <section class="export" aria-labelledby="export-heading">
            <h2 id="export-heading" class="export__heading">
                {move || {
                    let program = app.page.with(|p| p.program);
                    fill(tr.export_heading, &[("program", program.name())])
                }}
            </h2>
            <div on:click=move |ev| browser::copy_snippet(&ev, tr.copied_short) inner_html=html></div>
        </section>
    }
}
