//! Every visible string of the page, per language. A language is a `Strings` value: the compiler
//! refuses one with a missing field, so a missing translation cannot ship. nanoGPT keys and code
//! stay as they are in every language.
//!
//! Templates hold `{name}` placeholders filled by [`fill`].

use estimator::{Component, Term};

/// All strings of one language.
pub struct Strings {
    /// BCP 47 tag for `<html lang>`.
    pub lang: &'static str,
    /// The language's own name, for the picker.
    pub name: &'static str,
    pub title: &'static str,
    pub tagline: &'static str,
    pub section_model: &'static str,
    pub section_batch: &'static str,
    pub section_precision: &'static str,
    pub section_eval: &'static str,
    pub section_gpu: &'static str,
    pub settings_label: &'static str,
    pub result_label: &'static str,
    pub preset_label: &'static str,
    pub preset_custom: &'static str,
    /// Hints under each nanoGPT key, in [`estimator::FIELDS_JSON_ORDER`] order.
    pub hints: [&'static str; 16],
    pub vocab_label: &'static str,
    pub vocab_gpt2: &'static str,
    pub vocab_char: &'static str,
    pub vocab_custom: &'static str,
    pub attention_flash: &'static str,
    pub attention_manual: &'static str,
    pub allocator_default: &'static str,
    pub allocator_expandable: &'static str,
    pub gpu_label: &'static str,
    pub gpu_custom: &'static str,
    pub vram_label: &'static str,
    pub context_label: &'static str,
    pub context_hint: &'static str,
    pub other_label: &'static str,
    pub other_hint: &'static str,
    /// `{n}` parameters as train.py prints them.
    pub params_count: &'static str,
    pub effective_batch: &'static str,
    pub tokens_per_iter: &'static str,
    pub peak_label: &'static str,
    /// Component names, in [`Component::ALL`] order.
    pub components: [&'static str; 6],
    /// What each component is, in [`Component::ALL`] order.
    pub component_help: [&'static str; 6],
    /// Term names, in [`TERMS`] order.
    pub terms: [&'static str; 23],
    pub phase_first_iter: &'static str,
    pub phase_steady: &'static str,
    pub phase_eval: &'static str,
    pub phase_eval_later: &'static str,
    /// Moment names, in [`MOMENTS`] order.
    pub moments: [&'static str; 9],
    /// `{phase}`, `{moment}`.
    pub peak_at: &'static str,
    pub micro_step: &'static str,
    pub bar_caption: &'static str,
    pub usable_marker: &'static str,
    pub reserved_outside: &'static str,
    pub verdict_fits: &'static str,
    pub verdict_tight: &'static str,
    pub verdict_oom: &'static str,
    /// `{need}`, `{usable}`, `{card}`.
    pub verdict_detail: &'static str,
    /// `{gib}`.
    pub headroom: &'static str,
    /// `{gib}`.
    pub shortfall: &'static str,
    /// `{peak}`, `{frag}`.
    pub need_explained: &'static str,
    pub copy_link: &'static str,
    pub copied: &'static str,
    pub theme_toggle: &'static str,
    pub notice_heading: &'static str,
    /// `{key}`.
    pub notice_unknown: &'static str,
    /// `{message}`.
    pub notice_invalid: &'static str,
    pub dismiss: &'static str,
    pub formula: &'static str,
    pub eval_iters_note: &'static str,
    pub fixes_heading: &'static str,
    /// `{n}`.
    pub largest_batch: &'static str,
    pub largest_batch_none: &'static str,
    pub already_fits: &'static str,
    /// `{s}` seconds.
    pub time_now: &'static str,
    pub mfu_label: &'static str,
    pub mfu_hint: &'static str,
    /// Fix titles in [`FIX_KINDS`] order. Placeholders: `{batch} {accum} {old_batch} {old_accum}
    /// {block} {old_block} {layers} {old_layers} {embd} {old_embd} {dtype} {eval_batch}
    /// {eval_iters} {eff} {old_eff} {params} {freed}`.
    pub fix_titles: [&'static str; 18],
    /// One sentence of why, same order and placeholders.
    pub fix_why: [&'static str; 18],
    /// `{eff}`, `{old_eff}`: said when the effective batch could not be kept exactly.
    pub effective_not_kept: &'static str,
    /// What a fix changes in training, in [`estimator::fixes::Impact`] order.
    pub impacts: [&'static str; 8],
    pub col_peak: &'static str,
    pub col_saving: &'static str,
    pub col_fits: &'static str,
    pub col_batch: &'static str,
    pub col_tokens: &'static str,
    pub col_time: &'static str,
    pub col_impact: &'static str,
    pub yes: &'static str,
    pub no: &'static str,
    pub top_fix: &'static str,
    pub snippet_config: &'static str,
    pub snippet_cli: &'static str,
    pub snippet_env: &'static str,
    pub snippet_patch: &'static str,
    pub copy: &'static str,
    pub copied_short: &'static str,
    pub not_a_fix_heading: &'static str,
    /// Stage names, in [`STAGES`] order.
    pub stages: [&'static str; 7],
    pub model_load: &'static str,
    /// `{where} {requested} {tensor} {allocated} {fragmented} {largest}`.
    pub oom_explained: &'static str,
    pub chart_title: &'static str,
    pub chart_allocated: &'static str,
    pub chart_reserved: &'static str,
    pub chart_budget: &'static str,
    pub chart_oom: &'static str,
    /// Caption of the table that gives the chart's numbers to screen readers.
    pub chart_table: &'static str,
    pub chart_col_stage: &'static str,
    pub chart_col_allocated: &'static str,
    pub chart_col_reserved: &'static str,
    pub paste_heading: &'static str,
    pub paste_placeholder: &'static str,
    pub paste_button: &'static str,
    pub paste_nothing: &'static str,
    /// `{card} {requested} {allocated} {fragmented} {others}`.
    pub paste_message: &'static str,
    /// `{gib}`.
    pub paste_others: &'static str,
    /// `{tensor} {where}`.
    pub paste_diagnosis: &'static str,
    pub paste_reproduced: &'static str,
    /// `{requested}`.
    pub paste_no_match: &'static str,
    /// `{n}`: processes of a torchrun line.
    pub paste_command: &'static str,
    pub paste_config: &'static str,
    /// `{line} {text}`.
    pub paste_skip_not_understood: &'static str,
    /// `{line} {key}`.
    pub paste_skip_unknown: &'static str,
    /// `{line} {message}`.
    pub paste_skip_invalid: &'static str,
    /// `{files}`.
    pub paste_unknown_files: &'static str,
    /// `{message}`.
    pub paste_error: &'static str,
    pub paste_truncated: &'static str,
    pub export_heading: &'static str,
    pub export_config: &'static str,
    pub export_defaults: &'static str,
    pub embed_button: &'static str,
    pub embed_heading: &'static str,
    pub embed_hint: &'static str,
    pub embed_open: &'static str,
    pub embed_frame_title: &'static str,
    pub update_text: &'static str,
    pub update_button: &'static str,
    pub close: &'static str,
}

/// Stages in the order of [`Strings::stages`].
pub const STAGES: [estimator::sequence::Stage; 7] = {
    use estimator::sequence::Stage::*;
    [
        ModelLoad,
        Forward,
        Loss,
        Backward,
        OptimizerStep,
        ZeroGrad,
        Eval,
    ]
};

/// Fix kinds in the order of [`Strings::fix_titles`].
pub const FIX_KINDS: [estimator::fixes::FixKind; 18] = {
    use estimator::fixes::FixKind::*;
    [
        MicroBatchKeepEffective,
        ExpandableWithMicroBatch,
        CompileWithMicroBatch,
        MicroBatchOnly,
        CompileOn,
        ExpandableSegments,
        ShorterBlock,
        FewerLayers,
        Narrower,
        HalfPrecision,
        Float16OnOldCard,
        DropoutOff,
        SmallerEvalBatch,
        ActivationCheckpointing,
        ChunkedLoss,
        FreeTheCard,
        CompileOff,
        EvalItersNoEffect,
    ]
};

/// Terms in the order of [`Strings::terms`].
pub const TERMS: [Term; 23] = [
    Term::Params,
    Term::MaskBuffers,
    Term::AdamState,
    Term::Grads,
    Term::FreshGrads,
    Term::TiedWeightGrad,
    Term::BlockActivations,
    Term::FinalActivations,
    Term::EmbeddingDropoutMask,
    Term::WeightCopies,
    Term::ForwardLocals,
    Term::BlockTransient,
    Term::Logits,
    Term::PrevLogits,
    Term::StaleTrainLogits,
    Term::LogSoftmax,
    Term::LossFp32Copy,
    Term::LossGrads,
    Term::ZeroTangent,
    Term::LmHeadGrads,
    Term::CublasWorkspace,
    Term::TokenIds,
    Term::AllocatorRounding,
];

/// Moments in the order of [`Strings::moments`].
pub const MOMENTS: [estimator::Moment; 9] = [
    estimator::Moment::ForwardEnd,
    estimator::Moment::AttentionSoftmax,
    estimator::Moment::LossBackward,
    estimator::Moment::LmHeadBackward,
    estimator::Moment::BlockBackward,
    estimator::Moment::BackwardEnd,
    estimator::Moment::OptimizerStep,
    estimator::Moment::EvalLoss,
    estimator::Moment::EvalBlock,
];

impl Strings {
    pub fn component(&self, c: Component) -> &'static str {
        self.components[c as usize]
    }

    pub fn component_help(&self, c: Component) -> &'static str {
        self.component_help[c as usize]
    }

    pub fn term(&self, t: Term) -> &'static str {
        TERMS
            .iter()
            .position(|x| *x == t)
            .map_or("", |i| self.terms[i])
    }

    pub fn moment(&self, m: estimator::Moment) -> &'static str {
        MOMENTS
            .iter()
            .position(|x| *x == m)
            .map_or("", |i| self.moments[i])
    }

    pub fn fix_title(&self, k: estimator::fixes::FixKind) -> &'static str {
        FIX_KINDS
            .iter()
            .position(|x| *x == k)
            .map_or("", |i| self.fix_titles[i])
    }

    pub fn fix_why(&self, k: estimator::fixes::FixKind) -> &'static str {
        FIX_KINDS
            .iter()
            .position(|x| *x == k)
            .map_or("", |i| self.fix_why[i])
    }

    pub fn stage(&self, st: estimator::sequence::Stage) -> &'static str {
        STAGES
            .iter()
            .position(|x| *x == st)
            .map_or("", |i| self.stages[i])
    }

    pub fn impact(&self, i: estimator::fixes::Impact) -> &'static str {
        self.impacts[i as usize]
    }

    pub fn phase(&self, p: estimator::Phase) -> &'static str {
        match p {
            estimator::Phase::TrainFirstIter => self.phase_first_iter,
            estimator::Phase::TrainSteady => self.phase_steady,
            estimator::Phase::Eval => self.phase_eval,
            estimator::Phase::EvalAfterStep => self.phase_eval_later,
        }
    }

    pub fn hint(&self, key: &str) -> &'static str {
        estimator::FIELDS_JSON_ORDER
            .iter()
            .position(|k| *k == key)
            .map_or("", |i| self.hints[i])
    }
}

/// The languages of the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    En,
}

impl Lang {
    pub const ALL: [Lang; 1] = [Lang::En];

    pub fn strings(self) -> &'static Strings {
        match self {
            Lang::En => &EN,
        }
    }
}

/// The strings of the language being rendered (provided by [`crate::App`]).
pub fn use_strings() -> &'static Strings {
    leptos::prelude::use_context::<&'static Strings>().unwrap_or(&EN)
}

/// Replaces each `{name}` in a template.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (name, value) in values {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

pub const EN: Strings = Strings {
    lang: "en",
    name: "English",
    title: "vramfit",
    tagline: "Will your nanoGPT run fit in VRAM? Every number below is checked against real train.py runs.",
    section_model: "Model",
    section_batch: "Batch",
    section_precision: "Precision and kernels",
    section_eval: "Evaluation",
    section_gpu: "GPU",
    settings_label: "Settings",
    result_label: "Result",
    preset_label: "Model preset",
    preset_custom: "custom",
    hints: [
        "transformer blocks",
        "attention heads (must divide n_embd)",
        "width of the residual stream",
        "context length in tokens",
        "micro-batch: sequences per forward/backward",
        "micro-batches summed before each optimizer step",
        "dropout probability (nanoGPT default 0.0)",
        "biases in Linear and LayerNorm layers",
        "autocast type",
        "torch.compile the model (train.py default True)",
        "batches per split in estimate_loss()",
        "iterations between evaluations",
        "total training iterations",
        "vocabulary: 50304 for GPT-2 BPE, 65 for shakespeare_char",
        "F.scaled_dot_product_attention, or model.py's T×T path (torch < 2.0)",
        "PYTORCH_CUDA_ALLOC_CONF",
    ],
    vocab_label: "Vocabulary",
    vocab_gpt2: "GPT-2 BPE (50304)",
    vocab_char: "characters (65, shakespeare_char)",
    vocab_custom: "custom",
    attention_flash: "flash (SDPA)",
    attention_manual: "manual (T×T)",
    allocator_default: "default",
    allocator_expandable: "expandable_segments:True",
    gpu_label: "Card",
    gpu_custom: "Custom card",
    vram_label: "Memory (GiB)",
    context_label: "CUDA context (GiB)",
    context_hint: "driver, kernels, cuBLAS: outside PyTorch's allocator",
    other_label: "Other processes (GiB)",
    other_hint: "a desktop, a notebook, another run — see nvidia-smi",
    params_count: "{n} parameters",
    effective_batch: "effective batch",
    tokens_per_iter: "tokens per iteration",
    peak_label: "Peak memory",
    components: [
        "parameters",
        "optimizer state",
        "gradients",
        "activations",
        "logits & loss",
        "other",
    ],
    component_help: [
        "The model's weights, kept in fp32 (autocast casts per operation).",
        "AdamW's two moments per parameter, fp32, created at the first optimizer step.",
        "One fp32 gradient per parameter; alive during the forward of micro-steps 2 and later.",
        "Tensors the forward saves for the backward, and the 16-bit weight copies autocast makes.",
        "The (batch, block, vocabulary) logits and the loss's buffers: the largest item with GPT-2's vocabulary.",
        "cuBLAS workspaces, token ids, and what the caching allocator rounds up.",
    ],
    terms: [
        "fp32 parameters",
        "causal mask buffers",
        "AdamW exp_avg + exp_avg_sq",
        "accumulated gradients",
        "gradients being produced",
        "tied wte/lm_head weight gradient",
        "saved block activations",
        "ln_f and lm_head inputs",
        "embedding dropout mask",
        "16-bit weight copies",
        "forward locals (tok_emb, pos_emb, ln_f output)",
        "a block's working tensors",
        "logits",
        "previous logits (still bound to `logits`)",
        "training loop's last logits",
        "log-softmax",
        "fp32 copy for nll_loss",
        "loss gradients",
        "zero tangent for unused logits (compile)",
        "lm_head gradients",
        "cuBLAS workspaces",
        "token ids X, Y",
        "allocator rounding",
    ],
    phase_first_iter: "first iteration",
    phase_steady: "steady training",
    phase_eval: "estimate_loss()",
    phase_eval_later: "later estimate_loss()",
    moments: [
        "end of forward",
        "attention softmax",
        "start of backward (loss)",
        "lm_head backward",
        "last block's backward",
        "end of backward",
        "optimizer step",
        "eval loss",
        "eval block",
    ],
    peak_at: "Peak in {phase}: {moment}",
    micro_step: "micro-step {n}",
    bar_caption: "Memory at the peak, against the card",
    usable_marker: "usable",
    reserved_outside: "context + other",
    verdict_fits: "Fits",
    verdict_tight: "Tight",
    verdict_oom: "Out of memory",
    verdict_detail: "needs {need} of {usable} usable on {card}",
    headroom: "{gib} to spare",
    shortfall: "{gib} short",
    need_explained: "peak {peak} allocated + {frag} allocator fragmentation",
    copy_link: "Copy link",
    copied: "Link copied",
    theme_toggle: "Toggle dark mode",
    notice_heading: "Some settings in the link were not used:",
    notice_unknown: "unknown setting {key}",
    notice_invalid: "{message}; using the default",
    dismiss: "Dismiss",
    formula: "formula",
    eval_iters_note: "eval_iters does not change memory: each eval batch is freed before the next.",
    fixes_heading: "What to change, best first",
    largest_batch: "Largest batch_size that fits this card: {n}",
    largest_batch_none: "Not even batch_size 1 fits this card with these settings.",
    already_fits: "This run fits. Changes that would free more memory:",
    time_now: "≈ {s} s per iteration now",
    mfu_label: "MFU",
    mfu_hint: "model-FLOPs utilisation assumed by the speed estimate",
    fix_titles: [
        "Micro-batch {batch} × {accum} accumulation steps (was {old_batch} × {old_accum})",
        "expandable_segments and micro-batch {batch} × {accum}",
        "compile=True and micro-batch {batch} × {accum}",
        "batch_size {batch}, accumulation unchanged",
        "compile=True",
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
        "block_size {block} (was {old_block})",
        "n_layer {layers} (was {old_layers})",
        "n_embd {embd} (was {old_embd})",
        "dtype = '{dtype}' (was float32)",
        "dtype = 'float16' (no native bf16 on this card)",
        "dropout = 0.0",
        "Evaluate at batch {eval_batch} (needs a change to train.py)",
        "Activation checkpointing per block (needs a change to model.py)",
        "Chunked cross-entropy (needs a change to model.py)",
        "Free the card: close other processes and the desktop",
        "compile=False",
        "eval_iters = {eval_iters}",
    ],
    fix_why: [
        "Activations and loss buffers scale with the micro-batch; the effective batch stays {eff} sequences.",
        "The allocator stops fragmenting, so a larger micro-batch fits; the effective batch stays {eff}.",
        "The compiled loss keeps 6 bytes per logit instead of 12, so a larger micro-batch fits, and it runs faster.",
        "The effective batch drops from {old_eff} to {eff} sequences: noisier gradients.",
        "The compiled loss keeps 6 bytes per logit instead of eager's 12, and it runs faster.",
        "One growing segment per stream: freed loss buffers no longer fragment the cache.",
        "Activations and logits scale with the context length; the model sees shorter contexts.",
        "A smaller model: {params} parameters.",
        "A smaller model: {params} parameters.",
        "Mixed precision halves activations and logits; weights and AdamW stay fp32.",
        "Cards before Ampere emulate bf16 slowly; float16 with train.py's GradScaler runs at full speed, same memory.",
        "Dropout keeps a one-byte mask per element at three places per block.",
        "estimate_loss() holds the peak: two logits tensors and an fp32 copy; a smaller eval batch shrinks them.",
        "Only each block's input is kept; its activations are recomputed in the backward (one more forward pass).",
        "The (batch, block, vocabulary) logits never exist at once; lm_head is recomputed per slice.",
        "Other processes hold {freed} of this card.",
        "Eager mode keeps a 16-bit log-softmax, an fp32 copy and an fp32 gradient of the logits: more memory, and slower.",
        "Each eval batch is freed before the next; only the previous batch's logits survive, whatever eval_iters is.",
    ],
    effective_not_kept: "The effective batch becomes {eff} (was {old_eff}): it cannot be kept exactly.",
    impacts: [
        "changes nothing",
        "slower only",
        "needs a code change",
        "noisier gradients",
        "less regularisation",
        "shorter context",
        "smaller model",
        "not a fix",
    ],
    col_peak: "new peak",
    col_saving: "saving",
    col_fits: "fits",
    col_batch: "effective batch",
    col_tokens: "tokens/iter",
    col_time: "time/iter",
    col_impact: "changes in training",
    yes: "yes",
    no: "no",
    top_fix: "Best fix",
    snippet_config: "Config file",
    snippet_cli: "Command line",
    snippet_env: "Environment",
    snippet_patch: "Code change",
    copy: "Copy",
    copied_short: "Copied",
    not_a_fix_heading: "Not fixes (shown so nobody reaches for them)",
    stages: [
        "model load",
        "forward",
        "loss",
        "backward",
        "optimizer step",
        "zero_grad",
        "estimate_loss()",
    ],
    model_load: "model load",
    oom_explained: "Out of memory in {where}: {requested} requested for {tensor}, with {allocated} allocated and {fragmented} reserved but unallocated (largest free block {largest}).",
    chart_title: "Memory over the run: estimate_loss(), the first iteration, then steady ones",
    chart_allocated: "allocated",
    chart_reserved: "reserved",
    chart_budget: "usable",
    chart_oom: "out of memory",
    chart_table: "Peak allocated and reserved memory in each stage",
    chart_col_stage: "stage",
    chart_col_allocated: "allocated",
    chart_col_reserved: "reserved",
    paste_heading: "Paste an out-of-memory message, a config file or a command line",
    paste_placeholder: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …\nor: python train.py config/train_gpt2.py --batch_size=8\nor: batch_size = 8",
    paste_button: "Read it",
    paste_nothing: "Nothing here looks like an out-of-memory message, a train.py command line or a config file: nothing was changed.",
    paste_message: "Out-of-memory message read: card {card}; {requested} requested with {allocated} allocated and {fragmented} reserved but unallocated{others}. The card is set above.",
    paste_others: "; other processes held {gib}",
    paste_diagnosis: "With the settings on this page, that request is the {tensor} in {where}.",
    paste_reproduced: "Simulating these settings under the message's budget fails at the same request.",
    paste_no_match: "No tensor of the settings on this page has the requested size ({requested}): paste the run's config or command line to see what failed.",
    paste_command: "Command line applied ({n} process(es)).",
    paste_config: "Config file applied.",
    paste_skip_not_understood: "line {line} not applied (not understood): {text}",
    paste_skip_unknown: "line {line} not applied: {key} is not a train.py setting",
    paste_skip_invalid: "line {line} not applied: {message}",
    paste_unknown_files: "Config files whose text is unknown here (paste their text to apply them): {files}",
    paste_error: "Not applied: {message}",
    paste_truncated: "Only the first MiB of the text was read.",
    export_heading: "These settings for nanoGPT",
    export_config: "Config file (what differs from train.py's defaults)",
    export_defaults: "These are train.py's defaults: nothing to set.",
    embed_button: "Embed",
    embed_heading: "Embed this calculator in a page",
    embed_hint: "The iframe opens with these settings; the script sizes it to its content. Nothing else is loaded and no data leaves the reader's browser.",
    embed_open: "Open in vramfit",
    embed_frame_title: "vramfit: GPU memory of a nanoGPT run",
    update_text: "A new version of vramfit is available.",
    update_button: "Reload",
    close: "Close",
};
