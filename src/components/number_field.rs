//! A nanoGPT number key: a slider over the values people pick, and a text field that takes any
//! valid value. Invalid text is shown with its error next to the field and not applied; it
//! stays (with the value still in use) until corrected, also after the field loses focus.

use leptos::prelude::*;

use crate::i18n::{fill, use_strings};
use crate::state::use_app;

/// Index of the step nearest to `x` (for the slider's position).
fn nearest(steps: &[f64], x: f64) -> usize {
    steps
        .iter()
        .enumerate()
        .min_by(|a, b| (a.1 - x).abs().total_cmp(&(b.1 - x).abs()))
        .map_or(0, |(i, _)| i)
}

fn step_text(x: f64, float: bool) -> String {
    if float {
        estimator::pyliteral::format_py_float(x)
    } else {
        format!("{}", x as i64)
    }
}

/// A slider + number field for one nanoGPT key.
#[component]
pub fn NumberField(
    /// The nanoGPT key, e.g. `batch_size`.
    key: &'static str,
    /// Values the slider steps through (powers of two where users think in them).
    steps: &'static [f64],
    /// Whether the key is a float (`dropout`).
    #[prop(optional)]
    float: bool,
    /// An extra note under the field.
    #[prop(optional)]
    note: Option<&'static str>,
) -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    // the page re-renders its inputs when the program changes: read it once
    let program = app.page.with_untracked(|p| p.program);
    let label = program.field_label(key);
    let committed = Memo::new(move |_| app.page.with(|p| p.value(key).unwrap_or_default()));
    // Some(text) while the field holds text that was not applied (invalid).
    let (draft, set_draft) = signal(None::<String>);
    let (error, set_error) = signal(None::<String>);

    let apply = move |raw: String| {
        let mut next = app.page.get_untracked();
        let result = next
            .set(key, &raw)
            .map_err(|i| crate::i18n::issue(tr, &i))
            .and_then(|_| next.validate().map_err(|e| crate::i18n::error(tr, &e)));
        match result {
            Ok(()) => {
                app.page.set(next);
                set_error.set(None);
                set_draft.set(None);
            }
            Err(msg) => {
                set_error.set(Some(msg));
                set_draft.set(Some(raw));
            }
        }
    };

    let slider_pos = move || {
        let x = estimator::decimal::parse(&committed.get()).unwrap_or(0.0);
        nearest(steps, x).to_string()
    };
    let input_id = format!("field-{key}");
    let error_id = format!("error-{key}");
    let hint_id = format!("hint-{key}");
    let described = format!("{hint_id} {error_id}");
    view! {
        <div class="field" class:field--invalid=move || error.with(Option::is_some)>
            <label class="field__label" for=input_id.clone()>
                <code>{label}</code>
            </label>
            <span class="field__hint" id=hint_id>
                {tr.program(program).hint(key)}
            </span>
            <div class="field__controls">
                <input
                    class="field__slider"
                    type="range"
                    name=key
                    min="0"
                    max=(steps.len() - 1).to_string()
                    step="1"
                    aria-label=key
                    aria-valuetext=move || committed.get()
                    prop:value=slider_pos
                    on:input:target=move |ev| {
                        let i: usize = ev.target().value().parse().unwrap_or(0);
                        if let Some(x) = steps.get(i) {
                            apply(step_text(*x, float));
                        }
                    }
                />
                <input
                    class="field__number"
                    type="text"
                    inputmode=if float { "decimal" } else { "numeric" }
                    name=key
                    id=input_id
                    autocomplete="off"
                    spellcheck="false"
                    aria-invalid=move || error.with(Option::is_some).to_string()
                    aria-describedby=described
                    prop:value=move || draft.get().unwrap_or_else(|| committed.get())
                    // invalid text stays, with its reason, after the field loses focus: it
                    // vanishing would hide that the page still computes with the old value
                    on:input:target=move |ev| apply(ev.target().value())
                />
            </div>
            <p class="field__error" id=error_id role="alert">
                {move || error.get()}
                {move || {
                    draft.with(Option::is_some).then(|| {
                        view! {
                            <span class="field__kept" data-testid=format!("kept-{key}")>
                                {fill(tr.field_not_applied, &[("value", &committed.get())])}
                            </span>
                        }
                    })
                }}
            </p>
            {note.map(|n| view! { <p class="field__note">{n}</p> })}
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slider_snaps_to_the_nearest_step() {
        let steps = [1.0, 2.0, 4.0, 8.0, 16.0];
        assert_eq!(nearest(&steps, 12.0), 3);
        assert_eq!(nearest(&steps, 13.0), 4);
        assert_eq!(nearest(&steps, 1000.0), 4);
        assert_eq!(step_text(0.05, true), "0.05");
        assert_eq!(step_text(16.0, false), "16");
    }
}
