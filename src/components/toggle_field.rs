//! A nanoGPT boolean key (`compile`, `bias`) as a checkbox.

use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn ToggleField(
    /// The nanoGPT key.
    key: &'static str,
) -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let checked = Memo::new(move |_| {
        app.page.with(|p| {
            matches!(
                p.configs.nanogpt.get(key),
                Some(estimator::PyValue::Bool(true))
            )
        })
    });
    let id = format!("field-{key}");
    view! {
        <div class="field field--toggle">
            <input
                type="checkbox"
                name=key
                id=id.clone()
                prop:checked=move || checked.get()
                on:change:target=move |ev| {
                    let on = ev.target().checked();
                    app.page.update(|p| {
                        let _ = p.set(key, if on { "True" } else { "False" });
                    });
                }
            />
            <label class="field__label" for=id>
                <code>{key}</code>
                " = "
                <code>{move || if checked.get() { "True" } else { "False" }}</code>
            </label>
            <span class="field__hint">{tr.program(estimator::programs::Program::NanoGpt).hint(key)}</span>
        </div>
    }
}
