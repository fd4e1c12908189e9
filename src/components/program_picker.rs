//! Which training script the page models, one of the registry's programs, grouped by project. Each
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
    let option = move |program: Program, label: &'static str| {
        view! {
            <label class="program__option" class:program__option--on=move || current.get() == program>
                <input
                    type="radio"
                    name="program"
                    value=program.id()
                    data-testid=format!("program-{}", program.id())
                    aria-label=program.name()
                    prop:checked=move || current.get() == program
                    on:change=move |_| app.page.update(|p| p.program = program)
                />
                <span>{label}</span>
            </label>
        }
    };
    // A project with several scripts is named once, before them (eight names in full took three
    // rows at 1280 px and pushed the best fix below the fold); a project with one script keeps
    // its whole name. Names are "project script" (`TrainingProgram::NAME`).
    let split = |p: Program| p.name().split_once(' ').unwrap_or((p.name(), p.name()));
    let options = Program::ALL
        .chunk_by(|a, b| split(*a).0 == split(*b).0)
        .map(|members| {
            if let [program] = *members {
                return option(program, program.name()).into_any();
            }
            let family = split(members[0]).0;
            let scripts = members
                .iter()
                .map(|&program| option(program, split(program).1))
                .collect_view();
            view! {
                <span class="program__family" role="group" aria-label=family>
                    <span class="program__family-name" aria-hidden="true">{family}</span>
                    {scripts}
                </span>
            }
            .into_any()
        })
        .collect_view();
    // a whole nanochat run (runs/speedrun.sh) rather than one script's run: the plan view
    let open_plan = move |_| {
        app.page
            .update(|p| p.plan = Some(estimator::query::PlanPage::default()));
        crate::browser::push_query(&app.page.with_untracked(|p| p.to_query()));
    };
    view! {
        // named by a flex item, not a <legend>: every engine keeps the words on the options'
        // first line (WebKit lays a fieldset's legend out on a line of its own)
        <fieldset class="program" data-testid="program" aria-labelledby="program-label">
            <span class="program__label" id="program-label">{tr.program_label}</span>
            {options}
            <button type="button" class="button--link plan-open" data-testid="plan-open" on:click=open_plan>
                {tr.plan_open}
            </button>
        </fieldset>
    }
}
