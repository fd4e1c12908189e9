//! The link between the GPUs of a DDP run: presets (PCIe generations, NVLink) and the bandwidth
//! the all-reduce gets, editable. Only shown with more than one GPU.

use estimator::decimal::shortest;
use estimator::speed::LINKS;
use leptos::prelude::*;

use super::page_field::PageField;
use crate::i18n::use_strings;
use crate::state::use_app;

#[component]
pub fn LinkField() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let gbps = Memo::new(move |_| app.budget.with(|b| b.gpu.link_gbps));
    // the preset whose bandwidth is the current one, if any
    let selected = move || {
        LINKS
            .iter()
            .find(|(_, g)| (*g - gbps.get()).abs() < 1e-9)
            .map_or("custom", |(id, _)| *id)
    };
    view! {
        <div class="field">
            <label class="field__label" for="field-link">
                {tr.link_label}
            </label>
            <span class="field__hint">{tr.link_hint}</span>
            <select
                id="field-link"
                class="field__select"
                data-testid="link"
                on:change:target=move |ev| {
                    let id = ev.target().value();
                    if let Some((_, g)) = LINKS.iter().find(|(l, _)| *l == id) {
                        app.page.update(|p| p.link_gbps = Some(*g));
                    }
                }
            >
                {LINKS
                    .iter()
                    .zip(tr.links)
                    .map(|((id, _), label)| {
                        view! {
                            <option value=*id selected=move || selected() == *id>
                                {label}
                            </option>
                        }
                    })
                    .collect_view()}
                <option value="custom" selected=move || selected() == "custom" disabled=true>
                    {tr.gpu_custom}
                </option>
            </select>
        </div>
        <PageField
            key="link_gbps"
            label=tr.link_gbps_label
            hint=""
            value=Signal::derive(move || shortest(gbps.get()))
        />
    }
}
