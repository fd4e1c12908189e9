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
}

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
    peak_at: "at the {moment} in {phase}",
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
};
