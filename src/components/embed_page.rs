//! `?embed=1`: the compact calculator for an iframe in a blog post — the key settings, the card,
//! the bar, the verdict, the best fix, and a link to the full page with the same state.

use estimator::programs::{Program, ProgramFixes};
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
const DEPTH: &[f64] = &[2., 4., 6., 8., 10., 12., 16., 20., 24., 26., 32.];
const NC_BATCH: &[f64] = &[1., 2., 4., 8., 16., 32., 64.];
const SEQ: &[f64] = &[256., 512., 1024., 2048., 4096.];

#[component]
pub fn EmbedPage() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let full_page = move || browser::page_link(&app.page.with(PageState::to_query));
    let top = move || {
        let report = app.fixes.get()?;
        app.settled.with(|p| {
            let freed = p.budget().other_bytes;
            match &report {
                ProgramFixes::NanoGpt(r) => {
                    let f = crate::html::fixes::best(r)?;
                    Some(crate::html::fixes::top_fix(
                        tr,
                        f,
                        &p.configs.nanogpt,
                        freed,
                    ))
                }
                ProgramFixes::BuildNanoGpt(r) => {
                    let f = crate::html::bng_fixes::best(r)?;
                    Some(crate::html::bng_fixes::top_fix(
                        tr,
                        f,
                        &p.configs.bng,
                        freed,
                    ))
                }
                ProgramFixes::Nanochat(r) | ProgramFixes::NanochatSft(r) => {
                    let f = crate::html::nanochat_fixes::best(r)?;
                    Some(crate::html::nanochat_fixes::top_fix(
                        tr,
                        f,
                        p.nanochat_config(),
                        freed,
                    ))
                }
            }
        })
    };
    let program = app.page.with_untracked(|p| p.program);
    view! {
        <div class="page page--embed">
            <div class="embed__inputs">
                {(program == Program::NanoGpt).then(|| view! { <ModelPresets /> })}
                <GpuPicker compact=true />
                {if program == Program::NanoGpt {
                    view! {
                        <NumberField key="batch_size" steps=BATCH />
                        <NumberField key="gradient_accumulation_steps" steps=ACCUM />
                        <NumberField key="block_size" steps=BLOCK />
                    }
                        .into_any()
                } else if program == Program::BuildNanoGpt {
                    view! {
                        <NumberField key="B" steps=NC_BATCH />
                        <NumberField key="T" steps=SEQ />
                    }
                        .into_any()
                } else {
                    view! {
                        <NumberField key="depth" steps=DEPTH />
                        <NumberField key="device_batch_size" steps=NC_BATCH />
                        <NumberField key="max_seq_len" steps=SEQ />
                    }
                        .into_any()
                }}
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
