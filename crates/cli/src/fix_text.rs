//! The fix ranker's results in English words, for the command line.

use estimator::fixes::{Fix, FixKind, Impact};
use estimator::units::format_bytes;
use estimator::TrainConfig;

/// A short title naming the change.
pub fn title(f: &Fix, from: &TrainConfig) -> String {
    let c = &f.config;
    match f.kind {
        FixKind::MicroBatchKeepEffective => format!(
            "micro-batch {} × {} accumulation steps (was {} × {})",
            c.batch_size,
            c.gradient_accumulation_steps,
            from.batch_size,
            from.gradient_accumulation_steps
        ),
        FixKind::ExpandableWithMicroBatch => format!(
            "expandable segments and micro-batch {} × {}",
            c.batch_size, c.gradient_accumulation_steps
        ),
        FixKind::CompileWithMicroBatch => format!(
            "compile=True and micro-batch {} × {}",
            c.batch_size, c.gradient_accumulation_steps
        ),
        FixKind::MicroBatchOnly => format!("batch_size {} (accumulation unchanged)", c.batch_size),
        FixKind::CompileOn => "compile=True".into(),
        FixKind::ExpandableSegments => "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into(),
        FixKind::ShorterBlock => format!("block_size {} (was {})", c.block_size, from.block_size),
        FixKind::FewerLayers => format!("n_layer {} (was {})", c.n_layer, from.n_layer),
        FixKind::Narrower => format!("n_embd {} (was {})", c.n_embd, from.n_embd),
        FixKind::HalfPrecision => format!("dtype='{}' (was float32)", c.dtype.as_str()),
        FixKind::Float16OnOldCard => "dtype='float16' (this card has no native bf16)".into(),
        FixKind::DropoutOff => "dropout=0.0".into(),
        FixKind::SmallerEvalBatch => format!(
            "evaluate at batch {} (patch train.py)",
            f.patches.eval_batch_size.unwrap_or(0)
        ),
        FixKind::ActivationCheckpointing => {
            "activation checkpointing per block (patch model.py)".into()
        }
        FixKind::ChunkedLoss => "chunked cross-entropy (patch model.py)".into(),
        FixKind::FreeTheCard => "close other processes / the desktop on this card".into(),
        FixKind::CompileOff => "compile=False (raises memory)".into(),
        FixKind::EvalItersNoEffect => format!("eval_iters {} (no effect on memory)", c.eval_iters),
        FixKind::AddGpus => format!("{} GPUs (was {})", c.world_size, from.world_size),
        FixKind::ShardOptimizer => format!(
            "ZeRO-1: shard AdamW's state over {} GPUs (patch train.py)",
            c.world_size
        ),
    }
}

/// One sentence of why. `freed` is what other processes held on the card before.
pub fn why(f: &Fix, from: &TrainConfig, freed: u128) -> String {
    match f.kind {
        FixKind::MicroBatchKeepEffective | FixKind::ExpandableWithMicroBatch | FixKind::CompileWithMicroBatch => {
            let kept = if f.effective_batch_kept {
                "the effective batch stays the same".to_string()
            } else {
                format!(
                    "the effective batch becomes {} (was {}): it cannot be kept exactly",
                    f.effective_batch,
                    from.effective_batch()
                )
            };
            format!("Activations and loss buffers scale with the micro-batch; {kept}.")
        }
        FixKind::MicroBatchOnly => format!(
            "Fewer sequences per step: the effective batch drops from {} to {}, so gradients get noisier.",
            from.effective_batch(),
            f.effective_batch
        ),
        FixKind::CompileOn => {
            "The compiled loss keeps 6 bytes per logit instead of eager's 12, and it runs faster.".into()
        }
        FixKind::ExpandableSegments => {
            "The allocator maps memory into one growing segment, so freed loss buffers no longer fragment the cache.".into()
        }
        FixKind::ShorterBlock => "Activations and logits scale with the context length; the model sees shorter context.".into(),
        FixKind::FewerLayers | FixKind::Narrower => format!(
            "A smaller model: {:.2}M parameters instead of the current model's.",
            f.params_reported as f64 / 1e6
        ),
        FixKind::HalfPrecision => "Mixed precision halves activations and logits; weights and AdamW stay fp32.".into(),
        FixKind::Float16OnOldCard => {
            "Cards before Ampere emulate bf16 slowly; float16 with train.py's GradScaler runs at full speed with the same memory.".into()
        }
        FixKind::DropoutOff => "Dropout saves a one-byte mask per element at three places per block.".into(),
        FixKind::SmallerEvalBatch => {
            "estimate_loss() holds the peak (two logits tensors plus an fp32 copy); a smaller eval batch shrinks them.".into()
        }
        FixKind::ActivationCheckpointing => {
            "Only each block's input is kept; its activations are recomputed in the backward (one more forward pass).".into()
        }
        FixKind::ChunkedLoss => {
            "The (batch, block, vocabulary) logits are never materialised at once; lm_head is recomputed per chunk.".into()
        }
        FixKind::FreeTheCard => format!(
            "Other processes hold {} of this card.",
            format_bytes(freed)
        ),
        FixKind::CompileOff => {
            "Eager mode keeps a 16-bit log-softmax, an fp32 copy and an fp32 gradient of the logits: more memory, and slower.".into()
        }
        FixKind::EvalItersNoEffect => {
            "Each eval batch is freed before the next; only the previous batch's logits survive, whatever eval_iters is.".into()
        }
        FixKind::AddGpus => "Every GPU still holds the whole model, its AdamW state and a micro-batch, plus DDP's gradient buckets: it does not lower the peak per GPU; it makes each iteration faster.".into(),
        FixKind::ShardOptimizer => format!(
            "ZeroRedundancyOptimizer keeps about 1/{} of exp_avg and exp_avg_sq on each GPU; the all-reduce traffic stays the same.",
            f.config.world_size
        ),
    }
}

pub fn impact(i: Impact) -> &'static str {
    match i {
        Impact::Nothing => "nothing",
        Impact::Slower => "slower only",
        Impact::CodeChange => "needs a code change",
        Impact::GradientNoise => "gradient noise",
        Impact::Regularization => "regularisation",
        Impact::ContextLength => "context length",
        Impact::ModelCapacity => "model capacity",
        Impact::NotAFix => "not a fix",
        Impact::MoreGpus => "more GPUs",
    }
}

/// What a tensor family is, in a few words.
pub fn term_name(t: estimator::Term) -> &'static str {
    use estimator::Term::*;
    match t {
        Params => "fp32 parameters",
        MaskBuffers => "causal mask buffers",
        AdamState => "AdamW exp_avg and exp_avg_sq",
        Grads => "accumulated gradients",
        FreshGrads => "gradients being produced",
        TiedWeightGrad => "tied wte/lm_head weight gradient",
        BlockActivations => "saved block activations",
        FinalActivations => "ln_f and lm_head inputs",
        EmbeddingDropoutMask => "embedding dropout mask",
        WeightCopies => "16-bit weight copies",
        ForwardLocals => "forward locals (tok_emb, pos_emb, ln_f output)",
        BlockTransient => "a block's working tensors",
        Logits => "logits",
        PrevLogits => "previous logits",
        StaleTrainLogits => "training loop's last logits",
        LogSoftmax => "log-softmax",
        LossFp32Copy => "fp32 copy of the log-softmax for nll_loss",
        LossGrads => "loss gradient (nll_loss's fp32 grad, dlogits)",
        ZeroTangent => "zero tangent for the unused logits",
        LmHeadGrads => "lm_head gradients",
        CublasWorkspace => "cuBLAS workspace",
        TokenIds => "token ids",
        AllocatorRounding => "allocator rounding",
        DdpBuckets => "DDP gradient buckets",
        DdpRebuiltBuckets => "DDP buckets being rebuilt (old set not yet freed)",
    }
}
