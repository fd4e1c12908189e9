//! The stacked bar: the six components alive at the peak, drawn against the card's memory, with
//! a marker where the allocator's usable memory ends. Hovering or focusing a segment (or its
//! legend entry) shows what it is, its tensors with their formulas for this config, and bytes.

use estimator::decimal::Fixed;
use estimator::verdict::bar_scale;
use estimator::Component;
use leptos::prelude::*;

use crate::format;
use crate::i18n::{fill, use_strings};
use crate::state::use_app;

/// Percent of the bar's width for `bytes` (`scale` from [`bar_scale`], never 0).
fn pct(bytes: u128, scale: u128) -> f64 {
    bytes as f64 / scale as f64 * 100.0
}

/// Segments narrower than this show no label inside (it is in the legend and the details).
const LABEL_MIN_PCT: f64 = 9.0;

#[component]
pub fn MemoryBar(
    /// Leave out the per-segment explanations and the legend (the embed).
    #[prop(optional)]
    compact: bool,
) -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let (focused, set_focused) = signal(None::<Component>);

    let comps = Memo::new(move |_| {
        app.analysis
            .with(|a| a.as_ref().map(|a| a.components()).unwrap_or_default())
    });
    let total = Memo::new(move |_| {
        app.analysis
            .with(|a| a.as_ref().map_or(0, |a| a.peak_bytes()))
    });
    // the scale: the card, or what the run needs when it overflows the card
    let scale = Memo::new(move |_| {
        let card = app.budget.with(|b| b.gpu.total_bytes);
        let need = app.verdict.with(|v| v.map_or(0, |v| v.need_bytes));
        bar_scale(card, need, total.get())
    });

    // six elements made once; only their width, bytes and labels change with the inputs
    let segments = Component::ALL
        .iter()
        .map(|&comp| {
            let bytes = Memo::new(move |_| comps.with(|c| c.get(comp)));
            let width = move || pct(bytes.get(), scale.get());
            let label = move || format!("{}: {}", tr.component(comp), format::gib(bytes.get()));
            view! {
                <div
                    class=format!("bar__seg bar__seg--{}", comp.id())
                    data-testid=format!("segment-{}", comp.id())
                    data-bytes=move || bytes.get().to_string()
                    style:width=move || format!("{}%", Fixed(width(), 3))
                    tabindex="0"
                    role="img"
                    aria-label=label
                    title=label
                    on:mouseenter=move |_| set_focused.set(Some(comp))
                    on:focus=move |_| set_focused.set(Some(comp))
                >
                    <span class="bar__seg-label">
                        {move || (width() >= LABEL_MIN_PCT).then(|| format::gib(bytes.get()))}
                    </span>
                </div>
            }
        })
        .collect_view();
    let card_pct = move || pct(app.budget.with(|b| b.gpu.total_bytes), scale.get());
    let cache_bytes = move || {
        app.verdict
            .with(|v| v.map_or(0, |v| v.reserve_beyond(total.get())))
    };
    // what the verdict counted as usable (one rank's card under torchrun: NCCL's memory is out)
    let usable = move || {
        app.verdict
            .with(|v| v.map(|v| v.budget_bytes))
            .unwrap_or_else(|| app.budget.with(|b| b.allocator_budget()))
    };
    let usable_pct = move || pct(usable(), scale.get());

    // the focused segment's details; until the user points at one, a line saying how (the
    // largest component's table used to stand here, and pushed the fixes below the first screen)
    let details = move || {
        if compact {
            return None;
        }
        let Some(comp) = focused.get() else {
            return Some(crate::html::el(
                "p",
                &[("class", "details__hint")],
                &crate::html::escape(tr.segment_hint),
            ));
        };
        app.analysis.with(|a| {
            let a = a.as_ref().ok()?;
            Some(crate::html::breakdown::details(tr, a, comp))
        })
    };
    let peak_at = move || {
        app.analysis.with(|a| {
            let a = a.as_ref().ok()?;
            let (phase, stage, micro) = a.peak_at();
            let mut moment = tr.stage(stage).to_string();
            if micro > 0 {
                let step = fill(tr.micro_step, &[("n", &micro.to_string())]);
                moment = fill(tr.list_pair, &[("a", &moment), ("b", &step)]);
            }
            let phase = phase.map_or(tr.model_load, |p| tr.phase_for(a.program(), p));
            Some(fill(tr.peak_at, &[("moment", &moment), ("phase", phase)]))
        })
    };

    view! {
        // no bar for a run past the ceiling: it has no peak to draw (the verdict panel says why)
        <figure
            class="bar"
            aria-labelledby="bar-caption"
            hidden=move || app.analysis.with(|a| a.as_ref().is_err_and(|e| e.is_beyond_any_card()))
        >
            <figcaption id="bar-caption" class="bar__caption">
                {tr.bar_caption}
                ": "
                <strong data-testid="total" data-bytes=move || total.get().to_string()>
                    {move || format::gib(total.get())}
                </strong>
            </figcaption>
            <div class="bar__track">
                <div class="bar__card" style:width=move || format!("{}%", Fixed(card_pct(), 3))></div>
                <div
                    class="bar__reserved"
                    style:left=move || format!("{}%", Fixed(usable_pct(), 3))
                    style:width=move || format!("{}%", Fixed((card_pct() - usable_pct()).max(0.0), 3))
                    title=tr.reserved_outside
                ></div>
                <div class="bar__segs">{segments}</div>
                // what the caching allocator holds beyond the allocated peak: the verdict counts
                // it, so the bar shows it, beside the tensors rather than as one of them
                <div
                    class="bar__cache"
                    data-testid="segment-cache"
                    data-bytes=move || cache_bytes().to_string()
                    style:left=move || format!("{}%", Fixed(pct(total.get(), scale.get()), 3))
                    style:width=move || format!("{}%", Fixed(pct(cache_bytes(), scale.get()), 3))
                    title=move || format!("{}: {}", tr.cache_title, format::gib(cache_bytes()))
                ></div>
                <div
                    class="bar__marker"
                    // in the bar's left half its label goes right of the line, so it never
                    // sticks out past the bar's start (seen in Firefox at 360 px)
                    class:bar__marker--start=move || usable_pct() < 50.0
                    data-testid="usable-marker"
                    style:left=move || format!("{}%", Fixed(usable_pct(), 3))
                >
                    <span class="bar__marker-label">
                        {tr.usable_marker}
                        " "
                        {move || format::gib(usable())}
                    </span>
                </div>
            </div>
            <ul class="legend" class:legend--compact=compact>
                {Component::ALL
                    .iter()
                    .map(|&comp| {
                        view! {
                            <li class="legend__item">
                                <button
                                    type="button"
                                    class=format!("legend__swatch legend__swatch--{}", comp.id())
                                    aria-label=tr.component(comp)
                                    on:click=move |_| set_focused.set(Some(comp))
                                ></button>
                                <span class="legend__name">{tr.component(comp)}</span>
                                <span class="legend__value">
                                    {move || format::gib(comps.get().get(comp))}
                                </span>
                            </li>
                        }
                    })
                    .collect_view()}
                <li class="legend__item">
                    <span class="legend__swatch legend__swatch--cache" aria-hidden="true"></span>
                    <span class="legend__name">{tr.cache_legend}</span>
                    <span class="legend__value">{move || format::gib(cache_bytes())}</span>
                </li>
            </ul>
            <div class="details" data-testid="segment-details" aria-live="polite" inner_html=details></div>
        </figure>
        <p class="peak-at" data-testid="peak-at">{peak_at}</p>
    }
}
