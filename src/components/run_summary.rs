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
    let phases = move || {
        app.analysis.with(|a| {
            let a = a.as_ref().ok()?;
            let peak_phase = a.peak_at().0;
            let rows = [
                Phase::TrainFirstIter,
                Phase::TrainSteady,
                Phase::Eval,
                Phase::EvalAfterStep,
            ]
            .into_iter()
            .filter_map(|p| a.phase_bytes(p).map(|b| (p, b)))
            .map(|(p, bytes)| {
                view! {
                    <li
                        class="phases__item"
                        class:phases__item--peak=Some(p) == peak_phase
                        data-testid=format!("phase-{}", p.id())
                        data-bytes=bytes.to_string()
                    >
                        <span class="phases__name">{tr.phase(p)}</span>
                        <span class="phases__value">{format::gib(bytes)}</span>
                    </li>
                }
            })
            .collect_view();
            Some(view! { <ul class="phases">{rows}</ul> })
        })
    };
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
        {phases}
    }
}
