//! The page: inputs on one side, the answer on the other.

use estimator::{Allocator, Attention, Dtype};
use leptos::prelude::*;

use super::choice_field::ChoiceField;
use super::config_export::ConfigExport;
use super::ddp_summary::DdpSummary;
use super::embed_page::EmbedPage;
use super::fix_list::FixList;
use super::gpu_picker::GpuPicker;
use super::header::Header;
use super::link_field::LinkField;
use super::memory_bar::MemoryBar;
use super::model_presets::ModelPresets;
use super::notices::Notices;
use super::number_field::NumberField;
use super::paste_panel::PastePanel;
use super::run_summary::RunSummary;
use super::timeline_chart::TimelineChart;
use super::toggle_field::ToggleField;
use super::verdict_panel::VerdictPanel;
use super::vocab_field::VocabField;
use crate::i18n::use_strings;
use crate::state::{page_param, AppState};

const LAYERS: &[f64] = &[
    1., 2., 3., 4., 6., 8., 12., 16., 20., 24., 32., 36., 40., 48., 64., 96.,
];
const HEADS: &[f64] = &[
    1., 2., 3., 4., 6., 8., 12., 16., 20., 25., 32., 40., 48., 64.,
];
const WIDTHS: &[f64] = &[
    64., 128., 192., 256., 384., 512., 576., 640., 768., 1024., 1280., 1536., 1600., 2048., 2560.,
    3072., 4096., 5120., 6144., 8192.,
];
const BATCH: &[f64] = &[
    1., 2., 3., 4., 6., 8., 12., 16., 24., 32., 48., 64., 96., 128., 192., 256., 384., 512., 1024.,
];
const ACCUM: &[f64] = &[
    1., 2., 4., 5., 8., 10., 16., 20., 32., 40., 64., 80., 128., 256., 512., 1024.,
];
const BLOCK: &[f64] = &[
    64., 128., 256., 512., 768., 1024., 2048., 4096., 8192., 16384., 32768.,
];
const DROPOUT: &[f64] = &[0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5];
const WORLD: &[f64] = &[1., 2., 3., 4., 6., 8., 12., 16., 24., 32., 48., 64.];
const EVAL_ITERS: &[f64] = &[1., 10., 20., 40., 50., 100., 200., 500., 1000.];

/// The page. Re-rendered as a whole when the language changes, so every string inside is a
/// plain value rather than a reactive one.
#[component]
pub fn App() -> impl IntoView {
    let app = AppState::from_url();
    provide_context(app);
    app.sync_url();
    app.follow_history();
    app.settle_inputs();
    if !app.lang.get_untracked().is_ready() {
        // its file could not be fetched before mounting
        app.lang.set(crate::i18n::Lang::En);
    }
    Effect::new(move |_| {
        let tr = app.lang.get().strings();
        crate::browser::set_root_attribute("lang", tr.lang);
        crate::browser::set_title(tr.page_title);
        crate::browser::set_manifest(&format!("manifest.{}.webmanifest", tr.lang));
        // words for the static scripts (pwa.js' update offer)
        crate::browser::set_root_attribute("data-update-text", tr.update_text);
        crate::browser::set_root_attribute("data-update-button", tr.update_button);
    });
    crate::browser::set_root_attribute("data-theme", super::header::initial_theme());
    let query = crate::browser::query();
    if page_param(&query, "bg").as_deref() == Some("transparent") {
        crate::browser::set_root_attribute("data-bg", "transparent");
    }
    move || {
        let tr = app.lang.get().strings();
        crate::format::use_separators(tr);
        provide_context(tr);
        if app.embed {
            view! { <EmbedPage /> }.into_any()
        } else {
            view! { <Page /> }.into_any()
        }
    }
}

#[component]
fn Page() -> impl IntoView {
    let tr = use_strings();
    let app = crate::state::use_app();
    let dtypes = Dtype::ALL
        .iter()
        .map(|d| (d.as_str(), d.as_str()))
        .collect::<Vec<_>>();
    let attentions = vec![
        (Attention::Flash.as_str(), tr.attention_flash),
        (Attention::Manual.as_str(), tr.attention_manual),
    ];
    let allocators = vec![
        (Allocator::Default.as_str(), tr.allocator_default),
        (
            Allocator::ExpandableSegments.as_str(),
            tr.allocator_expandable,
        ),
    ];

    view! {
        <div class="page">
            <Header />
            <Notices />
            <main class="layout">
                <section class="inputs" aria-label=tr.settings_label>
                    <PastePanel />
                    <fieldset class="group">
                        <legend>{tr.section_model}</legend>
                        <ModelPresets />
                        <NumberField key="n_layer" steps=LAYERS />
                        <NumberField key="n_head" steps=HEADS />
                        <NumberField key="n_embd" steps=WIDTHS />
                        <VocabField />
                        <NumberField key="dropout" steps=DROPOUT float=true />
                        <ToggleField key="bias" />
                    </fieldset>
                    <fieldset class="group">
                        <legend>{tr.section_batch}</legend>
                        <NumberField key="batch_size" steps=BATCH />
                        <NumberField key="gradient_accumulation_steps" steps=ACCUM />
                        <NumberField key="block_size" steps=BLOCK />
                    </fieldset>
                    <fieldset class="group">
                        <legend>{tr.section_precision}</legend>
                        <ChoiceField key="dtype" options=dtypes />
                        <ToggleField key="compile" />
                        <ChoiceField key="attention" options=attentions />
                        <ChoiceField key="allocator" options=allocators />
                    </fieldset>
                    <fieldset class="group">
                        <legend>{tr.section_eval}</legend>
                        <NumberField key="eval_iters" steps=EVAL_ITERS />
                        <p class="field__note">{tr.eval_iters_note}</p>
                    </fieldset>
                </section>
                <section class="results" aria-label=tr.result_label>
                    <fieldset class="group group--gpu">
                        <legend>{tr.section_gpu}</legend>
                        <GpuPicker />
                        <NumberField key="world_size" steps=WORLD />
                        <Show when=move || app.page.with(|p| p.config.is_ddp())>
                            <LinkField />
                        </Show>
                    </fieldset>
                    <RunSummary />
                    <DdpSummary />
                    <VerdictPanel />
                    <MemoryBar />
                    <TimelineChart />
                    <FixList />
                    <ConfigExport />
                </section>
            </main>
        </div>
    }
}
