//! The plan view (`?view=plan`): a whole nanochat run script planned for the chosen card and a
//! count of them — each stage as a row (its peak per GPU as written and as planned, the verdict,
//! the change), and the script written back with its changed lines marked, one click to copy.
//! The inputs are here; the plan and its results are the plan worker's (crates/plan-web, a module
//! fetched when this view first opens), whose numbers are the CLI's `vramfit plan`.

use estimator::programs::nanochat::plan::SPEEDRUN;
use estimator::query::{PlanPage, MAX_PLAN_GPUS};
use leptos::prelude::*;

use super::gpu_picker::GpuPicker;
use crate::i18n::{fill, use_strings};
use crate::plan_worker::{self, Reply};
use crate::state::use_app;

/// The GPU counts offered (a typed one joins them).
const GPU_COUNTS: &[u32] = &[1, 2, 4, 8, 16];

/// How long the script field waits after the last keystroke before planning again (a plan
/// replays every stage at several batch sizes).
const TYPING_MS: u32 = 400;

#[component]
pub fn PlanView() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let page_plan = move || app.page.with(|p| p.plan.clone().unwrap_or_default());
    let initial = page_plan().script.unwrap_or_else(|| SPEEDRUN.to_string());
    let (text, set_text) = signal(initial);
    let typing = StoredValue::new_local(None::<gloo_timers::callback::Timeout>);
    let set_script = move |t: String| {
        let script = (t != SPEEDRUN).then_some(t);
        app.page.update(|p| {
            if let Some(plan) = &mut p.plan {
                plan.script = script;
            }
        });
    };
    let on_input = move |t: String| {
        set_text.set(t.clone());
        typing.set_value(Some(gloo_timers::callback::Timeout::new(
            TYPING_MS,
            move || set_script(t),
        )));
    };
    let gpus = Memo::new(move |_| page_plan().gpus);
    // what the worker plans: the page's settings (the card, its memory, the GPU count) and the
    // script, asked again only when one of them changes
    let asked = Memo::new(move |_| {
        app.page.with(|p| {
            let script = p.plan.as_ref().and_then(|pl| pl.script.clone());
            (p.to_query(), script.unwrap_or_else(|| SPEEDRUN.to_string()))
        })
    });
    let html = RwSignal::new(String::new());
    let busy = RwSignal::new(true);
    let failed = RwSignal::new(None::<String>);
    Effect::new(move |_| {
        let (query, script) = asked.get();
        busy.set(true);
        plan_worker::plan(&query, &script, tr.lang, move |reply| match reply {
            Reply::Planned { html: h, latest } => {
                html.set(h);
                failed.set(None);
                busy.set(!latest);
            }
            Reply::Failed(why) => {
                failed.set(Some(fill(tr.plan_failed, &[("why", &why)])));
                busy.set(false);
            }
        });
    });
    let set_gpus = move |n: u32| {
        app.page.update(|p| {
            p.plan.get_or_insert_with(PlanPage::default).gpus = n.clamp(1, MAX_PLAN_GPUS)
        })
    };
    let back = move |_| {
        app.page.update(|p| p.plan = None);
        crate::browser::push_query(&app.page.with_untracked(|p| p.to_query()));
    };
    let counts = move || {
        let mut list = GPU_COUNTS.to_vec();
        let n = gpus.get();
        if !list.contains(&n) {
            list.push(n);
            list.sort_unstable();
        }
        list.into_iter()
            .map(|n| view! { <option value=n.to_string()>{n.to_string()}</option> })
            .collect_view()
    };
    view! {
        <main class="plan" data-testid="plan">
            <section class="plan__inputs" aria-label=tr.settings_label>
                <button type="button" class="button button--link" data-testid="plan-back" on:click=back>
                    {tr.plan_back}
                </button>
                <fieldset class="group group--gpu">
                    <legend>{tr.section_gpu}</legend>
                    <GpuPicker />
                    <div class="field">
                        <label class="field__label" for="plan-gpus">{tr.plan_gpus}</label>
                        <select
                            class="field__select"
                            id="plan-gpus"
                            data-testid="plan-gpus"
                            prop:value=move || gpus.get().to_string()
                            on:change:target=move |ev| {
                                if let Ok(n) = ev.target().value().parse::<u32>() {
                                    set_gpus(n)
                                }
                            }
                        >
                            {counts}
                        </select>
                    </div>
                </fieldset>
                <div class="plan__script-input">
                    <label class="field__label" for="plan-script">{tr.plan_script_label}</label>
                    <textarea
                        class="paste__text plan__textarea"
                        id="plan-script"
                        data-testid="plan-script"
                        rows="10"
                        spellcheck="false"
                        prop:value=move || text.get()
                        on:input:target=move |ev| on_input(ev.target().value())
                    ></textarea>
                    <button
                        type="button"
                        class="button"
                        data-testid="plan-speedrun"
                        on:click=move |_| {
                            set_text.set(SPEEDRUN.to_string());
                            set_script(SPEEDRUN.to_string());
                        }
                    >
                        {tr.plan_speedrun}
                    </button>
                </div>
            </section>
            <section class="plan__results" aria-labelledby="plan-heading">
                <h2 id="plan-heading" class="plan__heading">{tr.plan_heading}</h2>
                <p class="plan__intro">{tr.plan_intro}</p>
                // said while the first plan is on its way (its module fetched with it); after that
                // the last plan stays until the next replaces it, dimmed if that takes a while
                // (nothing moves on each change)
                <p class="plan__busy" role="status" data-testid="plan-busy" hidden=move || !busy.get() || html.with(|h| !h.is_empty())>
                    {tr.plan_busy}
                </p>
                <p class="plan__summary plan__verdict--error" role="alert" data-testid="plan-failed" hidden=move || failed.with(Option::is_none)>
                    {move || failed.get().unwrap_or_default()}
                </p>
                // the worker's HTML; its copy button is `button[data-copy]`
                <div
                    class="plan__answer"
                    data-testid="plan-answer"
                    aria-busy=move || busy.get().to_string()
                    inner_html=move || html.get()
                    on:click=move |ev| crate::browser::copy_snippet(&ev, tr.copied_short)
                ></div>
            </section>
        </main>
    }
}
