//! `?embed=1`: the compact calculator for an iframe in a blog post — the key settings, the card,
//! the bar, the verdict, the best fix, and a link to the full page with the same state.

use estimator::programs::inputs::Input;
use estimator::query::PageState;
use leptos::prelude::*;

use super::gpu_picker::GpuPicker;
use super::memory_bar::MemoryBar;
use super::model_presets::ModelPresets;
use super::number_field::NumberField;
use super::verdict_panel::VerdictPanel;
use crate::browser;
use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn EmbedPage() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let full_page = move || browser::page_link(&app.page.with(PageState::to_query));
    let top = move || {
        let report = app.fixes.get()?;
        app.settled.with(|p| {
            let view = report.view(&p.configs, p.budget().other_bytes);
            let best = view.best()?;
            Some(crate::html::fixes::top_fix(tr, report.program(), best))
        })
    };
    let program = app.page.with_untracked(|p| p.program);
    view! {
        <div class="page page--embed">
            <div class="embed__inputs">
                {program
                    .inputs()
                    .iter()
                    .any(|g| g.inputs.iter().any(|i| matches!(i, Input::ModelPresets)))
                    .then(|| view! { <ModelPresets /> })}
                <GpuPicker compact=true />
                {program
                    .embed_settings()
                    .iter()
                    .map(|&(key, steps)| view! { <NumberField key=key steps=steps /> })
                    .collect_view()}
            </div>
            <VerdictPanel />
            <MemoryBar compact=true />
            <div
                class="embed__fix"
                on:click=move |ev| browser::copy_snippet(&ev, tr.copied_short)
                inner_html=top
            ></div>
            <p class="embed__open">
                <a href=full_page target="_blank" rel="noopener" data-testid="open-full">
                    {tr.embed_open}
                    " ↗"
                </a>
            </p>
        </div>
    }
}
