//! A nanoGPT key with a few allowed values (`dtype`, `attention`, `allocator`) as a select.

use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn ChoiceField(
    /// The key.
    key: &'static str,
    /// `(value, label)` pairs.
    options: Vec<(&'static str, &'static str)>,
) -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    // the page re-renders its inputs when the program changes: read it once
    let program = app.page.with_untracked(|p| p.program);
    let label = program.field_label(key);
    let current = Memo::new(move |_| app.page.with(|p| p.value(key).unwrap_or_default()));
    let id = format!("field-{key}");
    let hint_id = format!("hint-{key}");
    view! {
        <div class="field">
            <label class="field__label" for=id.clone()>
                <code>{label}</code>
            </label>
            <span class="field__hint" id=hint_id.clone()>
                {tr.program(program).hint(key)}
            </span>
            <select
                class="field__select"
                name=key
                id=id
                aria-describedby=hint_id
                prop:value=move || current.get()
                on:change:target=move |ev| {
                    let v = ev.target().value();
                    app.page.update(|p| {
                        let _ = p.set(key, &v);
                    });
                }
            >
                {options
                    .into_iter()
                    .map(|(value, label)| {
                        view! {
                            <option value=value selected=move || current.get() == value>
                                {label}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </div>
    }
}
