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
    let cfg = Memo::new(move |_| app.page.with(|p| p.config.clone()));
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
                <span class="phases__name">{tr.phase(p)}</span>
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
                        app.analysis.with(|a| a.as_ref().map_or(0, |a| a.estimate.params.reported)).to_string()
                    }
                >
                    {move || {
                        let n = app.analysis.with(|a| a.as_ref().map_or(0, |a| a.estimate.params.reported));
                        fill(tr.params_count, &[("n", &format::params(n))])
                    }}
                </dd>
            </div>
            <div class="summary__item">
                <dt>{tr.effective_batch}</dt>
                <dd
                    data-testid="effective-batch"
                    data-value=move || cfg.with(|c| c.effective_batch()).to_string()
                >
                    {move || {
                        cfg.with(|c| {
                            format!(
                                "{} × {} = {}",
                                c.batch_size,
                                c.gradient_accumulation_steps,
                                format::grouped(c.effective_batch()),
                            )
                        })
                    }}
                </dd>
            </div>
            <div class="summary__item">
                <dt>{tr.tokens_per_iter}</dt>
                <dd data-testid="tokens-per-iter">
                    {move || format::grouped(cfg.with(|c| c.tokens_per_iter()))}
                </dd>
            </div>
        </dl>
        <ul class="phases">{phases}</ul>
    }
}
