//! The "Embed" button: the iframe and the auto-sizing script for the current settings.

use estimator::query::PageState;
use leptos::prelude::*;

use crate::browser;
use crate::html::{el, escape, export::snippet_block};
use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn EmbedDialog() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let (open, set_open) = signal(false);
    let html = move || {
        let base = browser::page_base();
        let q = app.page.with(PageState::to_query);
        let src = format!("{base}?embed=1{}{q}", if q.is_empty() { "" } else { "&" });
        let iframe = format!(
            "<iframe data-vramfit src=\"{}\" title=\"{}\" style=\"width:100%;border:0\" loading=\"lazy\"></iframe>\n<script src=\"{}embed.js\" defer></script>",
            escape(&src),
            escape(tr.embed_frame_title),
            escape(base.trim_end_matches("index.html"))
        );
        // the heading, then what to do, then the code
        el(
            "h2",
            &[("class", "embed-dialog__heading")],
            &escape(tr.embed_heading),
        ) + &el("p", &[], &escape(tr.embed_hint))
            + &snippet_block(tr, "", &iframe, "embed-snippet")
    };
    view! {
        <button
            type="button"
            class="button"
            data-testid="embed-button"
            aria-expanded=move || open.get().to_string()
            aria-controls="embed-panel"
            on:click=move |_| set_open.update(|o| *o = !*o)
        >
            {tr.embed_button}
        </button>
        <Show when=move || open.get()>
            <div
                class="embed-dialog"
                id="embed-panel"
                role="dialog"
                aria-label=tr.embed_heading
                on:click=move |ev| browser::copy_snippet(&ev, tr.copied_short)
            >
                <div inner_html=html></div>
                <button type="button" class="button button--small" on:click=move |_| set_open.set(false)>
                    {tr.close}
                </button>
            </div>
        </Show>
    }
}
