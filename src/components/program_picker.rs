//! Which training script the page models: nanoGPT's train.py or nanochat's base_train.py. Each
//! keeps its own settings; switching shows the other's inputs, bar, verdict and fixes.

use estimator::programs::Program;
use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn ProgramPicker() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let current = Memo::new(move |_| app.page.with(|p| p.program));
    let options = Program::ALL
        .into_iter()
        .map(|program| {
            view! {
                <label class="program__option" class:program__option--on=move || current.get() == program>
                    <input
                        type="radio"
                        name="program"
                        value=program.id()
                        data-testid=format!("program-{}", program.id())
                        prop:checked=move || current.get() == program
                        on:change=move |_| app.page.update(|p| p.program = program)
                    />
                    <span>{program.name()}</span>
                </label>
            }
        })
        .collect_view();
    view! {
        // named by a flex item, not a <legend>: every engine keeps the words on the options'
        // first line (WebKit lays a fieldset's legend out on a line of its own)
        <fieldset class="program" data-testid="program" aria-labelledby="program-label">
            <span class="program__label" id="program-label">{tr.program_label}</span>
            {options}
        </fieldset>
    }
}
