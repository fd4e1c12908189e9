//! The vocabulary: GPT-2's BPE (train.py's 50304), characters (shakespeare_char's meta.pkl: 65),
//! or any size.

use leptos::prelude::*;

use super::number_field::NumberField;
use crate::i18n::use_strings;
use crate::state::use_app;

const GPT2: u32 = 50304;
const CHARS: u32 = 65;
const STEPS: &[f64] = &[
    65.0, 256.0, 1024.0, 8192.0, 32000.0, 32768.0, 50257.0, 50304.0, 65536.0, 100352.0, 128256.0,
    151936.0, 262144.0,
];

#[component]
pub fn VocabField() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let choice = Memo::new(
        move |_| match app.page.with(|p| p.configs.nanogpt.vocab_size) {
            GPT2 => "gpt2",
            CHARS => "char",
            _ => "custom",
        },
    );
    view! {
        <div class="field field--group">
            <label class="field__label" for="vocab-preset">
                {tr.vocab_label}
            </label>
            <select
                class="field__select"
                id="vocab-preset"
                prop:value=move || choice.get()
                on:change:target=move |ev| {
                    let v = match ev.target().value().as_str() {
                        "gpt2" => GPT2,
                        "char" => CHARS,
                        _ => return,
                    };
                    app.page.update(|p| p.configs.nanogpt.vocab_size = v);
                }
            >
                <option value="gpt2" selected=move || choice.get() == "gpt2">
                    {move || tr.vocab_gpt2}
                </option>
                <option value="char" selected=move || choice.get() == "char">
                    {tr.vocab_char}
                </option>
                <option value="custom" selected=move || choice.get() == "custom">
                    {tr.vocab_custom}
                </option>
            </select>
            <NumberField key="vocab_size" steps=STEPS />
        </div>
    }
}
