//! The chosen program's settings, group by group, as its folder lays them out
//! (`estimator::programs::inputs`, the seam's `INPUTS`): any program's inputs, drawn by one
//! component, so that a new program brings its inputs with it.

use estimator::programs::inputs::{Group, Input, Label, Section};
use leptos::prelude::*;

use super::choice_field::ChoiceField;
use super::model_presets::ModelPresets;
use super::number_field::NumberField;
use super::toggle_field::ToggleField;
use super::vocab_field::VocabField;
use crate::i18n::{use_strings, Strings};
use crate::state::use_app;

#[component]
pub fn ProgramInputs() -> impl IntoView {
    let app = use_app();
    // rebuilt when the program changes (app.rs): each script shows its own settings
    let program = app.page.with_untracked(|p| p.program);
    program.inputs().iter().map(group).collect_view()
}

fn group(g: &'static Group) -> impl IntoView {
    let tr = use_strings();
    view! {
        <fieldset class="group">
            <legend>{heading(tr, g.section)}</legend>
            {g.inputs.iter().map(|i| input(tr, i)).collect_view()}
        </fieldset>
    }
}

fn heading(tr: &'static Strings, section: Section) -> &'static str {
    match section {
        Section::Model => tr.section_model,
        Section::Batch => tr.section_batch,
        Section::Precision => tr.section_precision,
        Section::Attention => tr.section_attention,
        Section::Eval => tr.section_eval,
    }
}

fn label(tr: &'static Strings, label: Label) -> &'static str {
    match label {
        Label::Text(text) => text,
        Label::AllocatorDefault => tr.allocator_default,
        Label::AllocatorExpandable => tr.allocator_expandable,
        Label::AttentionFlash => tr.attention_flash,
        Label::AttentionManual => tr.attention_manual,
    }
}

fn input(tr: &'static Strings, i: &'static Input) -> AnyView {
    match *i {
        Input::Number { key, steps, float } => {
            view! { <NumberField key=key steps=steps float=float /> }.into_any()
        }
        Input::Choice { key, options } => {
            let options = options.iter().map(|&(v, l)| (v, label(tr, l))).collect();
            view! { <ChoiceField key=key options=options /> }.into_any()
        }
        Input::Toggle { key } => view! { <ToggleField key=key /> }.into_any(),
        Input::BatchLine => view! { <BatchLine /> }.into_any(),
        Input::ModelPresets => view! { <ModelPresets /> }.into_any(),
        Input::Vocab => view! { <VocabField /> }.into_any(),
        Input::EvalItersNote => {
            view! { <p class="field__note">{tr.eval_iters_note}</p> }.into_any()
        }
    }
}

/// The batch as the script computes it: micro-batch × sequence length × micro-steps (over every
/// GPU) = tokens per optimizer step.
#[component]
fn BatchLine() -> impl IntoView {
    let app = use_app();
    let line = move || {
        app.page.with(|p| {
            let b = p.configs.batch(p.program);
            format!(
                "{} × {} × {} = {}",
                b.micro,
                b.tokens / b.sequences.max(1),
                b.steps,
                crate::format::grouped(b.tokens)
            )
        })
    };
    view! { <p class="field__note" data-testid="batch-line">{line}</p> }
}
