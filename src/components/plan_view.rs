//! The plan view (`?view=plan`): a whole nanochat run script planned for the chosen card and a
//! count of them — each stage as a row (its peak per GPU as written and as planned, the verdict,
//! the change), and the script written back with its changed lines marked, one click to copy.
//! The numbers are the CLI's `vramfit plan` (one function, `nanochat::plan::plan`).

use estimator::programs::nanochat::plan::{plan, Hardware, Outcome, Plan, StagePlan, SPEEDRUN};
use estimator::query::{PlanPage, MAX_PLAN_GPUS};
use estimator::ConfigError;
use leptos::prelude::*;

use super::gpu_picker::GpuPicker;
use crate::i18n::{fill, use_strings, Strings};
use crate::state::use_app;

/// The GPU counts offered (a typed one joins them).
const GPU_COUNTS: &[u32] = &[1, 2, 4, 8, 16];

/// How long the script field waits after the last keystroke before planning again (a plan
/// replays every stage at several batch sizes).
const TYPING_MS: u32 = 400;

fn outcome_text(tr: &Strings, o: &Result<Outcome, ConfigError>) -> (String, &'static str) {
    match o {
        Ok(o) if o.fits => (
            format!("{} · {}", crate::format::bytes(o.peak_bytes), tr.plan_fits),
            "plan__verdict--fits",
        ),
        Ok(o) => {
            let short = crate::format::bytes(o.need_bytes.saturating_sub(o.budget_bytes));
            (
                format!(
                    "{} · {} ({})",
                    crate::format::bytes(o.peak_bytes),
                    tr.plan_oom,
                    fill(tr.plan_short, &[("short", &short)])
                ),
                "plan__verdict--oom",
            )
        }
        Err(e) => (crate::i18n::error(tr, e), "plan__verdict--error"),
    }
}

fn stage_row(tr: &'static Strings, s: &StagePlan) -> impl IntoView {
    let (written, written_class) = outcome_text(tr, &s.as_written);
    let (mut planned, planned_class) = outcome_text(tr, &s.planned);
    if let (Some(t), Ok(_)) = (s.seconds, &s.planned) {
        planned += " · ";
        planned += &fill(tr.plan_time, &[("time", &crate::format::duration(t))]);
    }
    let changes = vramfit_i18n::plan_text::changes(tr, &s.changes);
    let peak = match &s.planned {
        Ok(o) => o.peak_bytes.to_string(),
        Err(_) => String::new(),
    };
    // the planned run's picture, or the one as written when the planned one has none
    let pictured = s.planned.as_ref().or(s.as_written.as_ref()).ok();
    let spark = pictured.map_or_else(String::new, |o| {
        crate::html::timeline::sparkline(&o.profile, o.budget_bytes, &planned)
    });
    view! {
        <tr data-testid="plan-stage" data-program=s.kind.id() data-peak-bytes=peak>
            <td class="plan__line-no">{s.line}</td>
            <td><code>{s.kind.module()}</code></td>
            <td class=written_class data-label=tr.plan_col_written>{written}</td>
            <td class=planned_class data-testid="plan-planned" data-label=tr.plan_col_planned>
                {planned}
            </td>
            <td class="plan__memory" data-label=tr.plan_col_memory inner_html=spark></td>
            <td class="plan__change" data-label=tr.plan_col_change>{changes}</td>
        </tr>
    }
}

/// The rewritten script, each line its own element: a `# vramfit:` comment and the command it
/// explains are marked as changed.
fn script_view(script: &str) -> impl IntoView {
    let mut after_comment = false;
    script
        .lines()
        .map(|line| {
            let comment = line.trim_start().starts_with("# vramfit:");
            let changed = comment || after_comment;
            after_comment = comment;
            view! {
                <span class="plan__script-line" class:plan__script-line--changed=changed>
                    {format!("{line}\n")}
                </span>
            }
        })
        .collect_view()
}

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
    let result = Memo::new(move |_| {
        let script = app
            .page
            .with(|p| p.plan.as_ref().and_then(|pl| pl.script.clone()))
            .unwrap_or_else(|| SPEEDRUN.to_string());
        let hw = Hardware {
            budget: app.budget.get(),
            gpus: gpus.get(),
        };
        plan(&script, &hw, None, None)
    });
    let set_gpus = move |n: u32| {
        app.page.update(|p| {
            p.plan.get_or_insert_with(PlanPage::default).gpus = n.clamp(1, MAX_PLAN_GPUS)
        })
    };
    let copied = RwSignal::new(false);
    let copy = move |_| {
        result.with_untracked(|p: &Plan| crate::browser::copy(&p.script));
        copied.set(true);
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
                {move || {
                    result.with(|p| {
                        if p.stages.is_empty() {
                            return view! {
                                <p class="plan__summary plan__verdict--error" role="status" data-testid="plan-summary">
                                    {tr.plan_no_stage}
                                </p>
                            }
                            .into_any();
                        }
                        let (summary, class) = if p.all_fit() {
                            (tr.plan_all_fit, "plan__verdict--fits")
                        } else {
                            (tr.plan_not_all_fit, "plan__verdict--oom")
                        };
                        let rows = p.stages.iter().map(|s| stage_row(tr, s)).collect_view();
                        let assumed = fill(
                            tr.plan_assumed,
                            &[
                                ("core", &crate::format::grouped(p.core_max_tokens)),
                                ("prompt", &crate::format::grouped(p.longest_prompt)),
                            ],
                        );
                        view! {
                            <p class=format!("plan__summary {class}") role="status" data-testid="plan-summary">
                                {summary}
                            </p>
                            <div class="plan__table-wrap">
                                <table class="plan__table">
                                    <thead>
                                        <tr>
                                            <th>{tr.plan_col_line}</th>
                                            <th>{tr.plan_col_stage}</th>
                                            <th>{tr.plan_col_written}</th>
                                            <th>{tr.plan_col_planned}</th>
                                            <th>{tr.plan_col_memory}</th>
                                            <th>{tr.plan_col_change}</th>
                                        </tr>
                                    </thead>
                                    <tbody>{rows}</tbody>
                                </table>
                            </div>
                            <p class="plan__assumed">{assumed}</p>
                            <div class="plan__script-head">
                                <h3>{tr.plan_rewritten}</h3>
                                <button type="button" class="button" data-testid="plan-copy" on:click=copy>
                                    {move || if copied.get() { tr.copied_short } else { tr.copy }}
                                </button>
                            </div>
                            <pre class="plan__script" data-testid="plan-rewritten">{script_view(&p.script)}</pre>
                        }
                        .into_any()
                    })
                }}
            </section>
        </main>
    }
}
