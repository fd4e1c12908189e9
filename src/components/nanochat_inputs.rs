//! nanochat base_train.py's inputs, keyed by its argparse names (`--device-batch-size` shown,
//! `device_batch_size` in the URL): the model's depth and shape, the batch, attention and
//! allocator, and the evaluation.

use estimator::config::Allocator;
use estimator::programs::nanochat::NanochatAttention;
use estimator::programs::Program;
use leptos::prelude::*;

use super::choice_field::ChoiceField;
use super::number_field::NumberField;
use crate::i18n::use_strings;
use crate::state::use_app;

const DEPTH: &[f64] = &[
    2., 4., 6., 8., 10., 12., 14., 16., 18., 20., 22., 24., 26., 28., 32.,
];
const ASPECT: &[f64] = &[32., 48., 64., 80., 96., 128.];
const HEAD_DIM: &[f64] = &[64., 96., 128., 192., 256.];
const SEQ: &[f64] = &[256., 512., 1024., 2048., 4096., 8192.];
const BATCH: &[f64] = &[1., 2., 4., 8., 16., 32., 64., 128.];
const TOTAL: &[f64] = &[
    -1., 8192., 16384., 32768., 65536., 131072., 262144., 524288., 1048576., 2097152.,
];
const EVAL_TOKENS: &[f64] = &[
    524288., 2097152., 10485760., 20971520., 41943040., 83886080.,
];
/// NANOCHAT_DTYPE: auto lets the card decide (fp32 below SM 8.0).
const DTYPES: &[(&str, &str)] = &[
    ("auto", "auto"),
    ("bfloat16", "bfloat16"),
    ("float32", "float32"),
];
const PATTERNS: &[(&str, &str)] = &[("L", "L"), ("SL", "SL"), ("SSL", "SSL"), ("SSSL", "SSSL")];

#[component]
pub fn NanochatInputs() -> impl IntoView {
    let tr = use_strings();
    let app = use_app();
    // chat_sft.py: the same model and batch settings, plus whether the optimizer state is loaded
    let sft = app
        .page
        .with_untracked(|p| p.program == Program::NanochatSft);
    let attentions = vec![
        (NanochatAttention::Sdpa.as_str(), "SDPA"),
        (NanochatAttention::Fa3.as_str(), "FA3"),
    ];
    let allocators = vec![
        (
            Allocator::ExpandableSegments.as_str(),
            tr.allocator_expandable,
        ),
        (Allocator::Default.as_str(), tr.allocator_default),
    ];
    // what -1 resolves to, and the micro-steps it makes
    let resolved = move || {
        app.page.with(|p| {
            let c = p.nanochat_config();
            format!(
                "{} × {} × {} = {}",
                c.device_batch_size,
                c.max_seq_len,
                c.grad_accum_steps(),
                crate::format::grouped(c.total_batch_tokens())
            )
        })
    };
    view! {
        <fieldset class="group">
            <legend>{tr.section_model}</legend>
            <NumberField key="depth" steps=DEPTH />
            <NumberField key="aspect_ratio" steps=ASPECT />
            <NumberField key="head_dim" steps=HEAD_DIM />
        </fieldset>
        <fieldset class="group">
            <legend>{tr.section_batch}</legend>
            <NumberField key="device_batch_size" steps=BATCH />
            <NumberField key="total_batch_size" steps=TOTAL />
            <p class="field__note" data-testid="nanochat-batch">{resolved}</p>
            <NumberField key="max_seq_len" steps=SEQ />
        </fieldset>
        <fieldset class="group">
            <legend>{tr.nc_section_attention}</legend>
            <ChoiceField key="window_pattern" options=PATTERNS.to_vec() />
            <ChoiceField key="attention" options=attentions />
            <ChoiceField key="dtype" options=DTYPES.to_vec() />
            {(!sft).then(|| view! { <ChoiceField key="fp8" options=vec![("False", "False"), ("True", "True")] /> })}
            <ChoiceField key="allocator" options=allocators />
        </fieldset>
        <fieldset class="group">
            <legend>{tr.section_eval}</legend>
            <NumberField key="eval_tokens" steps=EVAL_TOKENS />
            {sft.then(|| view! { <ChoiceField key="load_optimizer" options=vec![("1", "1"), ("0", "0")] /> })}
        </fieldset>
    }
}
