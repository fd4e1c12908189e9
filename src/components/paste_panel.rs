//! Paste an out-of-memory message, a config file or a command line: it is read, applied to the
//! calculator, and what was and was not understood is said.

use estimator::paste::{interpret, PasteOutcome};
use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn PastePanel() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let (text, set_text) = signal(String::new());
    let (outcome, set_outcome) = signal(None::<PasteOutcome>);
    let read = move || {
        let out = app
            .page
            .with_untracked(|p| interpret(&text.get_untracked(), p));
        if out.state != app.page.get_untracked() {
            // a history entry of its own: Back returns to the settings before the paste
            crate::browser::push_query(&out.state.to_query());
            app.page.set(out.state.clone());
        }
        set_outcome.set(Some(out));
    };
    let report = move || outcome.with(|o| o.as_ref().map(|o| crate::html::paste::report(tr, o)));
    view! {
        <section class="paste" aria-labelledby="paste-heading">
            <h2 id="paste-heading" class="paste__heading">{tr.paste_heading}</h2>
            <textarea
                class="paste__text"
                name="paste"
                rows="4"
                spellcheck="false"
                aria-labelledby="paste-heading"
                placeholder=tr.paste_placeholder
                prop:value=move || text.get()
                on:input:target=move |ev| set_text.set(ev.target().value())
                on:paste=move |_| {
                    // read once the pasted text is in the field
                    set_timeout(read, std::time::Duration::from_millis(0));
                }
            ></textarea>
            <button type="button" class="button" data-testid="paste-read" on:click=move |_| read()>
                {tr.paste_button}
            </button>
            <div class="paste__report" data-testid="paste-report" role="status" inner_html=report></div>
        </section>
    }
}
