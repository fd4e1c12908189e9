//! nanochat under torchrun: which rank the bar shows, and the bound on what NCCL still holds
//! from earlier steps that it counts.

use leptos::prelude::*;

use crate::format;
use crate::i18n::{fill, use_strings};
use crate::state::use_app;

#[component]
pub fn NanochatRanks() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    move || {
        let ranks = app.analysis.with(|a| {
            let own = a
                .as_ref()
                .ok()?
                .own::<estimator::programs::nanochat::NanochatAnalysis>();
            own?.ranks.clone()
        })?;
        let text = fill(
            tr.program(estimator::programs::Program::Nanochat)
                .own("ranks"),
            &[
                ("held", &ranks.held_stashes.to_string()),
                ("step", &format::step_time(ranks.step_seconds)),
                ("one", &format::gib(ranks.one_stash_peak)),
                ("nccl", &format::gib(ranks.nccl_bytes)),
            ],
        );
        Some(view! {
            <section class="ddp" data-testid="nc-ranks" data-world=ranks.world_size.to_string()
                data-held=ranks.held_stashes.to_string()>
                <p class="ddp__head"><strong>{tr.ddp_per_gpu}</strong></p>
                <p>{text}</p>
            </section>
        })
    }
}
