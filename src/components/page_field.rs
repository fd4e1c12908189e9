//! A number field bound to one key of the page state that is not a nanoGPT setting (the card's
//! memory, the CUDA context, other processes, the link bandwidth): applied on change, refused
//! with the reason in the page's language.

use leptos::prelude::*;

use crate::state::use_app;

#[component]
pub fn PageField(
    /// Query key (`vram_gib`, `context_gib`, `other_gib`, `link_gbps`).
    key: &'static str,
    label: &'static str,
    hint: &'static str,
    /// The value shown when the state holds none (the card's default).
    value: Signal<String>,
) -> impl IntoView {
    let app = use_app();
    let tr = crate::i18n::use_strings();
    let (error, set_error) = signal(None::<String>);
    let id = format!("field-{key}");
    let err_id = format!("error-{key}");
    view! {
        <div class="field" class:field--invalid=move || error.with(Option::is_some)>
            <label class="field__label" for=id.clone()>
                {label}
            </label>
            <span class="field__hint">{hint}</span>
            <input
                class="field__number"
                type="text"
                inputmode="decimal"
                name=key
                id=id
                autocomplete="off"
                aria-invalid=move || error.with(Option::is_some).to_string()
                aria-describedby=err_id.clone()
                prop:value=move || value.get()
                on:change:target=move |ev| {
                    let raw = ev.target().value();
                    let mut next = app.page.get_untracked();
                    match next.set(key, &raw) {
                        Ok(()) => {
                            app.page.set(next);
                            set_error.set(None);
                        }
                        Err(issue) => set_error.set(Some(crate::i18n::issue(tr, &issue))),
                    }
                }
            />
            <p class="field__error" id=err_id role="alert">
                {move || error.get()}
            </p>
        </div>
    }
}
