//! Model presets: the GPT-2 sizes and nanoGPT's shakespeare_char baby GPT.

use leptos::prelude::*;

use crate::i18n::use_strings;
use crate::state::use_app;

/// `(id, label, n_layer, n_head, n_embd)`; the baby GPT also sets its data and batch.
const PRESETS: &[(&str, &str, u32, u32, u32)] = &[
    ("gpt2", "GPT-2 124M", 12, 12, 768),
    ("gpt2-medium", "GPT-2 350M", 24, 16, 1024),
    ("gpt2-large", "GPT-2 774M", 36, 20, 1280),
    ("gpt2-xl", "GPT-2 1.5B", 48, 25, 1600),
    ("baby", "shakespeare_char baby GPT 10.7M", 6, 6, 384),
];

#[component]
pub fn ModelPresets() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let current = Memo::new(move |_| {
        app.page.with(|p| {
            let c = &p.configs.nanogpt;
            PRESETS
                .iter()
                .find(|(id, _, l, h, e)| {
                    (c.n_layer, c.n_head, c.n_embd) == (*l, *h, *e)
                        && (*id != "baby" || c.vocab_size == 65)
                        && (*id == "baby" || c.vocab_size != 65)
                })
                .map_or("custom", |p| p.0)
        })
    });
    view! {
        <div class="field">
            <label class="field__label" for="model-preset">
                {tr.preset_label}
            </label>
            <select
                class="field__select"
                id="model-preset"
                name="model_preset"
                prop:value=move || current.get()
                on:change:target=move |ev| {
                    let id = ev.target().value();
                    let Some(&(_, _, l, h, e)) = PRESETS.iter().find(|p| p.0 == id) else {
                        return;
                    };
                    app.page.update(|p| {
                        let c = &mut p.configs.nanogpt;
                        c.n_layer = l;
                        c.n_head = h;
                        c.n_embd = e;
                        if id == "baby" {
                            // config/train_shakespeare_char.py
                            c.vocab_size = 65;
                            c.block_size = 256;
                            c.batch_size = 64;
                            c.gradient_accumulation_steps = 1;
                            c.dropout = 0.2;
                        } else if c.vocab_size == 65 {
                            c.vocab_size = 50304;
                            c.block_size = 1024;
                        }
                    });
                }
            >
                {PRESETS
                    .iter()
                    .map(|(id, label, ..)| {
                        view! {
                            <option value=*id selected=move || current.get() == *id>
                                {*label}
                            </option>
                        }
                    })
                    .collect_view()}
                <option value="custom" selected=move || current.get() == "custom">
                    {tr.preset_custom}
                </option>
            </select>
        </div>
    }
}
