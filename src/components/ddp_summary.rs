//! A DDP run per GPU: each process's share of the micro-steps, which rank the bar shows and why,
//! and the time per iteration with the all-reduce, against one GPU.

use leptos::prelude::*;

use crate::format;
use crate::i18n::{fill, use_strings};
use crate::state::use_app;

#[component]
pub fn DdpSummary() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    move || {
        // nothing to show (or to compute) without DDP
        let ranks = app
            .analysis
            .with(|a| a.as_ref().ok()?.own::<estimator::Analysis>()?.ranks())?;
        let cfg = app.page.with(|p| p.configs.nanogpt.clone());
        let params = app
            .analysis
            .with(|a| a.as_ref().map_or(0, |a| a.params_reported()));
        let t = app.budget.with(|b| {
            estimator::speed::iter_time(
                &cfg,
                params,
                &b.gpu,
                estimator::Patches::default(),
                app.mfu.get(),
            )
        });
        let n = |x: u32| x.to_string();
        // train.py's own words (its section's `own` part)
        let words = tr.program(estimator::programs::Program::NanoGpt);
        let accum = fill(
            words.own("ddp_accum_per_rank"),
            &[
                ("accum", &n(ranks.accum_per_rank)),
                ("total", &n(cfg.gradient_accumulation_steps)),
                ("world", &n(ranks.world_size)),
            ],
        );
        let worst = fill(
            words.own("ddp_worst_rank"),
            &[("rank", &n(ranks.worst_rank))],
        );
        let time = fill(
            words.own("ddp_time"),
            &[
                ("s", &format::decimal(t.seconds, 2)),
                ("world", &n(ranks.world_size)),
                ("speedup", &format::decimal(t.speedup(), 2)),
                ("bytes", &format::bytes(t.allreduce_bytes)),
                ("comm", &format::decimal(t.allreduce_seconds, 3)),
                ("exposed", &format::decimal(t.exposed_seconds, 3)),
            ],
        );
        let reserved = ranks.reserved.map(|r| {
            fill(
                words.own("ddp_reserved"),
                &[
                    ("rank0", &format::bytes(r.rank0[0])),
                    ("rank0_held", &format::bytes(r.rank0[1])),
                    ("others", &format::bytes(r.others[0])),
                    ("others_held", &format::bytes(r.others[1])),
                ],
            )
        });
        Some(view! {
            <section class="ddp" data-testid="ddp" data-world=n(ranks.world_size)>
                <p class="ddp__head">
                    <strong>{tr.ddp_per_gpu}</strong>
                    " · "
                    <span data-testid="ddp-accum">{accum}</span>
                </p>
                <p data-testid="ddp-worst">{format!("{worst} ({})", words.own("ddp_rank0_eval"))}</p>
                <p
                    data-testid="ddp-time"
                    data-speedup=estimator::decimal::fixed(t.speedup(), 4)
                    data-seconds=estimator::decimal::fixed(t.seconds, 6)
                >
                    {time}
                </p>
                {reserved.map(|r| view! { <p data-testid="ddp-reserved">{r}</p> })}
            </section>
        })
    }
}
