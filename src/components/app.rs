//! The page: inputs on one side, the answer on the other.

use estimator::query::page_param;
use leptos::prelude::*;
use std::time::Duration;

use super::config_export::ConfigExport;
use super::ddp_summary::DdpSummary;
use super::embed_page::EmbedPage;
use super::fix_list::FixList;
use super::gpu_picker::GpuPicker;
use super::header::Header;
use super::link_field::LinkField;
use super::memory_bar::MemoryBar;
use super::nanochat_first_run::NanochatFirstRun;
use super::nanochat_ranks::NanochatRanks;
use super::notices::Notices;
use super::number_field::NumberField;
use super::paste_panel::PastePanel;
use super::plan_view::PlanView;
use super::program_inputs::ProgramInputs;
use super::program_picker::ProgramPicker;
use super::run_summary::RunSummary;
use super::snapshot_panel::SnapshotPanel;
use super::sticky_summary::StickySummary;
use super::timeline_chart::TimelineChart;
use super::toggle_field::ToggleField;
use super::verdict_panel::VerdictPanel;
use crate::i18n::use_strings;
use crate::state::AppState;

const WORLD: &[f64] = &[1., 2., 3., 4., 6., 8., 12., 16., 24., 32., 48., 64.];
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
        crate::format::use_separators(&tr.bar_words());
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
    let program = Memo::new(move |_| app.page.with(|p| p.program));
    // The answer (verdict, bar, fixes) is built in the mount's task; the inputs and the panels
    // below the answer (the run's summary, the ranks, the chart, the export) in a task of their
    // own once that frame is out: on this 2-core machine they were ~55 and ~60 ms of the mount's
    // ~160 ms of main-thread time, and a task over 200 ms is a page that ignores its user (issue
    // 33). Nothing moves when they arrive: the inputs fill their own column (below the answer
    // on a phone), the panels sit below the fold.
    let later = RwSignal::new(false);
    request_animation_frame(move || set_timeout(move || later.set(true), Duration::ZERO));
    let planning = Memo::new(move |_| app.page.with(|p| p.plan.is_some()));
    view! {
        <div class="page">
            <Header />
            <Notices />
            <Show when=move || !planning.get() fallback=|| view! { <PlanView /> }>
            <ProgramPicker />
            // on a phone the answer comes first and the paste far below: one tap reaches it
            <a class="jump-paste" href="#paste" data-testid="jump-paste">{tr.jump_to_paste}</a>
            <StickySummary />
            <main class="layout">
                // the card first, then the run's settings (or a pasted error or config); on a
                // phone they follow the answer
                <section class="inputs" aria-label=tr.settings_label>
                    <Show when=move || later.get()>
                        <fieldset class="group group--gpu">
                            <legend>{tr.section_gpu}</legend>
                            <GpuPicker />
                            // more than one GPU: train.py's DDP, build-nanogpt's (the same wrapper)
                            // and nanochat's torchrun (its own sharded optimizer), each by its key;
                            // none for a script that trains on one
                            {move || {
                                let p = program.get();
                                p.multi_gpu().then(|| {
                                    view! { <NumberField key=p.processes_key() steps=WORLD /> }
                                })
                            }}
                            // one GPU that still trains under DDP (train.py started by torchrun,
                            // 02_opt_multi_gpu_ddp.py): more GPUs are DDP anyway
                            {move || {
                                let p = program.get();
                                let one = app
                                    .page
                                    .with(|s| s.value(p.processes_key()).as_deref() == Some("1"));
                                p.one_gpu_ddp()
                                    .filter(|_| one)
                                    .map(|ddp| view! { <ToggleField key=ddp.key /> })
                            }}
                            <Show when=move || app.page.with(|p| p.configs.asks_link(p.program))>
                                <LinkField />
                            </Show>
                        </fieldset>
                        <PastePanel />
                        // rebuilt when the program changes: each script shows its own settings
                        {move || {
                            program.track();
                            view! { <ProgramInputs /> }
                        }}
                    </Show>
                </section>
                // the answer and the best fix on the first screen; the details after them
                <section class="results" aria-label=tr.result_label>
                    <VerdictPanel />
                    <MemoryBar />
                    <FixList />
                    <Show when=move || later.get()>
                        // `display: contents`: its panels stay items of the results column
                        <div class="results__details" data-testid="details">
                            <RunSummary />
                            <NanochatFirstRun />
                            <DdpSummary />
                            <NanochatRanks />
                            <TimelineChart />
                            <ConfigExport />
                            <SnapshotPanel />
                        </div>
                    </Show>
                </section>
            </main>
            </Show>
        </div>
    }
}
