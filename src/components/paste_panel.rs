//! Paste an out-of-memory message, a config file, a command line or a JSON config: it is read,
//! applied to the calculator, and what was and was not understood is said.

use estimator::error::{ConfigError, Problem};
use estimator::paste::{
    interpret, interpret_json, looks_like_json, MessageCard, PasteOutcome, Pasted,
};
use estimator::query::PageState;
use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn PastePanel() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let (text, set_text) = signal(String::new());
    let (outcome, set_outcome) = signal(None::<PasteOutcome>);
    // a history entry of its own: Back returns to the settings before the paste
    let apply = move |state: &PageState| {
        if *state != app.page.get_untracked() {
            crate::browser::push_query(&state.to_query());
            app.page.set(state.clone());
        }
    };
    let read = move || {
        let out = app
            .page
            .with_untracked(|p| outcome_of(&text.get_untracked(), p));
        apply(&out.state);
        app.awaiting_settings.set(match &out.pasted {
            Pasted::OomMessage {
                message,
                settings_given: false,
                ..
            } => Some((out.state.clone(), message.clone())),
            _ => None,
        });
        set_outcome.set(Some(out));
    };
    let report = move || outcome.with(|o| o.as_ref().map(|o| crate::html::paste::report(tr, o)));
    // a message from another card than the chosen one: the page keeps its card until asked
    let offered = move || {
        outcome.with(|o| match o.as_ref().map(|o| &o.pasted) {
            Some(Pasted::OomMessage {
                card: MessageCard::Other { with_card, .. },
                ..
            }) => Some((**with_card).clone()),
            _ => None,
        })
    };
    let use_card = move |_| {
        if let Some(state) = offered() {
            apply(&state);
            set_outcome.set(None);
        }
    };
    view! {
        <section class="paste" id="paste" aria-labelledby="paste-heading">
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
                    gloo_timers::callback::Timeout::new(0, read).forget();
                }
            ></textarea>
            <button type="button" class="button" data-testid="paste-read" on:click=move |_| read()>
                {tr.paste_button}
            </button>
            <div class="paste__report" data-testid="paste-report" role="status" inner_html=report></div>
            <Show when=move || offered().is_some()>
                <button type="button" class="button" data-testid="paste-use-card" on:click=use_card>
                    {tr.paste_use_card}
                </button>
            </Show>
        </section>
    }
}

/// What a paste is: JSON is parsed by the browser, the rest by the estimator.
fn outcome_of(text: &str, page: &PageState) -> PasteOutcome {
    if !looks_like_json(text) {
        return interpret(text, page);
    }
    match crate::browser::parse_json(text) {
        Ok(root) => interpret_json(&root, page),
        Err(detail) => PasteOutcome {
            pasted: Pasted::Nothing,
            state: page.clone(),
            skipped: Vec::new(),
            error: Some(ConfigError {
                key: "config".into(),
                value: "JSON".into(),
                problem: Problem::Unreadable { detail },
            }),
            truncated: false,
        },
    }
}
