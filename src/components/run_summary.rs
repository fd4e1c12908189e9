//! The run at a glance: parameters as train.py prints them, effective batch, tokens per
//! iteration, and the peak of each phase.

use estimator::Phase;
use leptos::prelude::*;

use crate::format;
use crate::i18n::fill;
use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn RunSummary() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    // (the batch as the program states it, the tokens per optimizer step)
    let batch = Memo::new(move |_| {
        app.page.with(|p| {
            let b = p.configs.batch(p.program);
            (
                format!(
                    "{} × {} = {}",
                    b.micro,
                    b.steps,
                    format::grouped(b.sequences)
                ),
                b.sequences,
                b.tokens,
            )
        })
    });
    let program = Memo::new(move |_| app.page.with(|p| p.program));
    let peak_phase = Memo::new(move |_| {
        app.analysis
            .with(|a| a.as_ref().ok().and_then(|a| a.peak_at().0))
    });
    // four items made once; a phase the run does not have (no later eval) is hidden
    let phases = [
        Phase::TrainFirstIter,
        Phase::TrainSteady,
        Phase::Eval,
        Phase::EvalAfterStep,
    ]
    .into_iter()
    .map(|p| {
        let bytes = Memo::new(move |_| {
            app.analysis
                .with(|a| a.as_ref().ok().and_then(|a| a.phase_bytes(p)))
        });
        view! {
            <li
                class="phases__item"
                class:phases__item--peak=move || peak_phase.get() == Some(p)
                hidden=move || bytes.get().is_none()
                data-testid=format!("phase-{}", p.id())
                data-bytes=move || bytes.get().unwrap_or(0).to_string()
            >
                <span class="phases__name">{move || tr.phase_for(program.get(), p)}</span>
                <span class="phases__value">{move || bytes.get().map(format::gib)}</span>
            </li>
        }
    })
    .collect_view();
    view! {
        <dl class="summary">
            <div class="summary__item">
                <dt>{tr.section_model}</dt>
                <dd
                    data-testid="param-count"
                    data-params=move || {
                        app.analysis.with(|a| a.as_ref().map_or(0, |a| a.params_reported())).to_string()
                    }
                >
                    {move || {
                        // a dash where the estimator gives no number
                        app.analysis.with(|a| a.as_ref().ok().map(|a| a.params_reported())).map_or_else(
                            || "—".to_string(),
                            |n| fill(tr.params_count, &[("n", &format::params(n))]),
                        )
                    }}
                </dd>
            </div>
            <div class="summary__item">
                <dt>{tr.effective_batch}</dt>
                <dd data-testid="effective-batch" data-value=move || batch.with(|b| b.1).to_string()>
                    {move || batch.with(|b| b.0.clone())}
                </dd>
            </div>
            <div class="summary__item">
                <dt>{tr.tokens_per_iter}</dt>
                <dd data-testid="tokens-per-iter">
                    {move || format::grouped(batch.with(|b| b.2))}
                </dd>
            </div>
        </dl>
        <ul class="phases">{phases}</ul>
    }
}
