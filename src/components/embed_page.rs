//! `?embed=1`: the compact calculator for an iframe in a blog post — the key settings, the card,
//! the bar, the verdict, the best fix, and a link to the full page with the same state.

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

const BATCH: &[f64] = &[1., 2., 4., 6., 8., 12., 16., 24., 32., 48., 64., 128., 256.];
const ACCUM: &[f64] = &[1., 2., 4., 5., 8., 16., 32., 40., 64., 128.];
const BLOCK: &[f64] = &[128., 256., 512., 1024., 2048., 4096.];

#[component]
pub fn EmbedPage() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let full_page = move || browser::page_link(&app.page.with(PageState::to_query));
    let top = move || {
        let report = app.fixes.get()?;
        let (from, freed) = app
            .settled
            .with(|p| (p.config.clone(), p.budget().other_bytes));
        let f = crate::html::fixes::best(&report)?;
        Some(crate::html::fixes::top_fix(tr, f, &from, freed))
    };
    view! {
        <div class="page page--embed">
            <div class="embed__inputs">
                <ModelPresets />
                <GpuPicker compact=true />
                <NumberField key="batch_size" steps=BATCH />
                <NumberField key="gradient_accumulation_steps" steps=ACCUM />
                <NumberField key="block_size" steps=BLOCK />
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
