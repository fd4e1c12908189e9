//! The card: presets (the 12/24/48 GB cards users bring first), a custom size, and what else
//! takes memory from it (CUDA context, other processes).

use estimator::gpu::PRESETS;
use leptos::prelude::*;

use super::page_field::PageField;
use crate::i18n::use_strings;
use crate::state::use_app;

/// What a desktop session with a browser holds of the card it runs on, for the "drives my
/// display" box: nvidia-smi shows 0.5-1.5 GiB for Xorg or Wayland with a browser; the field
/// beside it takes the user's own reading.
const DESKTOP_GIB: f64 = 1.0;

fn gib_text(bytes: u128) -> String {
    let s = estimator::decimal::fixed(bytes as f64 / (1u64 << 30) as f64, 2);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[component]
pub fn GpuPicker(
    /// Only the card (the embed): no custom size, context or other processes.
    #[prop(optional)]
    compact: bool,
) -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let selected = Memo::new(move |_| app.page.with(|p| p.gpu.clone()));
    let is_custom = move || selected.get() == "custom";
    view! {
        <div class="field">
            <label class="field__label" for="field-gpu">
                {tr.gpu_label}
            </label>
            <select
                class="field__select"
                id="field-gpu"
                name="gpu"
                prop:value=move || selected.get()
                on:change:target=move |ev| {
                    let v = ev.target().value();
                    app.page.update(|p| {
                        let _ = p.set("gpu", &v);
                    });
                }
            >
                {PRESETS
                    .iter()
                    .map(|g| {
                        // the embed's narrow column has room for the name only (which says
                        // its size); the full page adds what PyTorch reports
                        let label = if compact {
                            g.name.to_string()
                        } else {
                            format!("{} — {}", g.name, crate::format::gib(g.total_bytes))
                        };
                        view! {
                            <option value=g.id selected=move || selected.get() == g.id>
                                {label}
                            </option>
                        }
                    })
                    .collect_view()}
                <option value="custom" selected=is_custom>
                    {tr.gpu_custom}
                </option>
            </select>
        </div>
        <Show when=move || is_custom() && !compact>
            <PageField
                key="vram_gib"
                label=tr.vram_label
                hint=""
                value=Signal::derive(move || app.page.with(|p| estimator::decimal::shortest(p.vram_gib)))
            />
        </Show>
        <Show when=move || !compact>
        // asked plainly: most consumer cards also drive a desktop, which the number field's
        // "other processes" does not say to someone who has never read nvidia-smi
        <div class="field field--toggle">
            <input
                type="checkbox"
                name="drives_display"
                id="field-drives-display"
                prop:checked=move || app.page.with(|p| p.other_gib > 0.0)
                on:change:target=move |ev| {
                    let on = ev.target().checked();
                    app.page.update(|p| {
                        p.other_gib = if on { DESKTOP_GIB } else { 0.0 };
                    });
                }
            />
            <label class="field__label" for="field-drives-display">
                {tr.drives_display_label}
            </label>
            <span class="field__hint">{tr.drives_display_hint}</span>
        </div>
        <PageField
            key="context_gib"
            label=tr.context_label
            hint=tr.context_hint
            value=Signal::derive(move || app.budget.with(|b| gib_text(b.context_bytes)))
        />
        <PageField
            key="other_gib"
            label=tr.other_label
            hint=tr.other_hint
            value=Signal::derive(move || app.budget.with(|b| gib_text(b.other_bytes)))
        />
        </Show>
    }
}
