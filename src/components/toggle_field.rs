//! A boolean setting (nanoGPT's `compile`, `bias`) as a checkbox, written as Python writes it.

use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn ToggleField(
    /// The setting's key.
    key: &'static str,
) -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    // the page re-renders its inputs when the program changes: read it once
    let program = app.page.with_untracked(|p| p.program);
    let checked = Memo::new(move |_| app.page.with(|p| p.value(key).as_deref() == Some("True")));
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
            <span class="field__hint">{tr.program(program).hint(key)}</span>
        </div>
    }
}
