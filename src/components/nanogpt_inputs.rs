//! nanoGPT train.py's inputs, keyed by its config names: the model, the batch, precision and
//! kernels, and the evaluation.

use estimator::{Allocator, Attention, Dtype};
use leptos::prelude::*;

use super::choice_field::ChoiceField;
use super::model_presets::ModelPresets;
use super::number_field::NumberField;
use super::toggle_field::ToggleField;
use super::vocab_field::VocabField;
use crate::i18n::use_strings;

const LAYERS: &[f64] = &[
    1., 2., 3., 4., 6., 8., 12., 16., 20., 24., 32., 36., 40., 48., 64., 96.,
];
const HEADS: &[f64] = &[
    1., 2., 3., 4., 6., 8., 12., 16., 20., 25., 32., 40., 48., 64.,
];
const WIDTHS: &[f64] = &[
    64., 128., 192., 256., 384., 512., 576., 640., 768., 1024., 1280., 1536., 1600., 2048., 2560.,
    3072., 4096., 5120., 6144., 8192.,
];
const BATCH: &[f64] = &[
    1., 2., 3., 4., 6., 8., 12., 16., 24., 32., 48., 64., 96., 128., 192., 256., 384., 512., 1024.,
];
const ACCUM: &[f64] = &[
    1., 2., 4., 5., 8., 10., 16., 20., 32., 40., 64., 80., 128., 256., 512., 1024.,
];
const BLOCK: &[f64] = &[
    64., 128., 256., 512., 768., 1024., 2048., 4096., 8192., 16384., 32768.,
];
const DROPOUT: &[f64] = &[0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5];
const EVAL_ITERS: &[f64] = &[1., 10., 20., 40., 50., 100., 200., 500., 1000.];

#[component]
pub fn NanoGptInputs() -> impl IntoView {
    let tr = use_strings();
    let dtypes = Dtype::ALL
        .iter()
        .map(|d| (d.as_str(), d.as_str()))
        .collect::<Vec<_>>();
    let attentions = vec![
        (Attention::Flash.as_str(), tr.attention_flash),
        (Attention::Manual.as_str(), tr.attention_manual),
    ];
    let allocators = vec![
        (Allocator::Default.as_str(), tr.allocator_default),
        (
            Allocator::ExpandableSegments.as_str(),
            tr.allocator_expandable,
        ),
    ];

    view! {
        <fieldset class="group">
            <legend>{tr.section_model}</legend>
            <ModelPresets />
            <NumberField key="n_layer" steps=LAYERS />
            <NumberField key="n_head" steps=HEADS />
            <NumberField key="n_embd" steps=WIDTHS />
            <VocabField />
            <NumberField key="dropout" steps=DROPOUT float=true />
            <ToggleField key="bias" />
        </fieldset>
        <fieldset class="group">
            <legend>{tr.section_batch}</legend>
            <NumberField key="batch_size" steps=BATCH />
            <NumberField key="gradient_accumulation_steps" steps=ACCUM />
            <NumberField key="block_size" steps=BLOCK />
        </fieldset>
        <fieldset class="group">
            <legend>{tr.section_precision}</legend>
            <ChoiceField key="dtype" options=dtypes />
            <ToggleField key="compile" />
            <ChoiceField key="attention" options=attentions />
            <ChoiceField key="allocator" options=allocators />
        </fieldset>
        <fieldset class="group">
            <legend>{tr.section_eval}</legend>
            <NumberField key="eval_iters" steps=EVAL_ITERS />
            <p class="field__note">{tr.eval_iters_note}</p>
        </fieldset>
    }
}
