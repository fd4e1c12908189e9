//! nanochat base_train.py's iteration 0 as a second run of the same shapes would need it, beside
//! the answer's, which is a first run's on an empty compile cache (Inductor's autotuning).

use leptos::prelude::*;

use crate::format;
use crate::i18n::{fill, use_strings};
use crate::state::use_app;

#[component]
pub fn NanochatFirstRun() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    move || {
        // nothing to say where a warm cache changes nothing
        let (cold, warm) = app.analysis.with(|a| {
            a.as_ref()
                .ok()?
                .own::<estimator::programs::nanochat::NanochatAnalysis>()?
                .first_and_second_run()
        })?;
        let text = fill(
            tr.program(estimator::programs::Program::Nanochat)
                .own("first_run"),
            &[("warm", &format::gib(warm)), ("cold", &format::gib(cold))],
        );
        Some(view! {
            <p class="first-run" data-testid="nc-first-run" data-cold=cold.to_string()
                data-warm=warm.to_string()>{text}</p>
        })
    }
}
