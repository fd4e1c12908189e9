//! build-nanogpt train_gpt2.py's inputs, named as the script names its constants (`B`, `T`,
//! `total_batch_size`, `use_compile`, GPTConfig's sizes): the URL keeps the same names.

use estimator::config::Allocator;
use leptos::prelude::*;

use super::choice_field::ChoiceField;
use super::number_field::NumberField;
use crate::i18n::use_strings;
use crate::state::use_app;

const LAYERS: &[f64] = &[2., 4., 6., 8., 12., 16., 24., 36., 48.];
const HEADS: &[f64] = &[4., 6., 8., 12., 16., 20., 25.];
const WIDTHS: &[f64] = &[256., 384., 512., 768., 1024., 1280., 1600.];
const B: &[f64] = &[1., 2., 4., 8., 16., 32., 64., 128.];
const T: &[f64] = &[64., 128., 256., 512., 1024.];
const TOTAL: &[f64] = &[16384., 32768., 65536., 131072., 262144., 524288., 1048576.];

#[component]
pub fn BngInputs() -> impl IntoView {
    let tr = use_strings();
    let app = use_app();
    let allocators = vec![
        (Allocator::Default.as_str(), tr.allocator_default),
        (
            Allocator::ExpandableSegments.as_str(),
            tr.allocator_expandable,
        ),
    ];
    // the micro-steps the script computes
    let steps = move || {
        app.page.with(|p| {
            let c = &p.configs.bng;
            format!(
                "{} × {} × {} = {}",
                c.b,
                c.t,
                c.grad_accum_steps(),
                crate::format::grouped(c.total_batch_size)
            )
        })
    };
    view! {
        <fieldset class="group">
            <legend>{tr.section_model}</legend>
            <NumberField key="n_layer" steps=LAYERS />
            <NumberField key="n_head" steps=HEADS />
            <NumberField key="n_embd" steps=WIDTHS />
        </fieldset>
        <fieldset class="group">
            <legend>{tr.section_batch}</legend>
            <NumberField key="B" steps=B />
            <NumberField key="T" steps=T />
            <NumberField key="total_batch_size" steps=TOTAL />
            <p class="field__note" data-testid="bng-batch">{steps}</p>
        </fieldset>
        <fieldset class="group">
            <legend>{tr.section_precision}</legend>
            <ChoiceField key="use_compile" options=vec![("False", "False"), ("True", "True")] />
            <ChoiceField key="allocator" options=allocators />
        </fieldset>
    }
}
