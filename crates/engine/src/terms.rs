//! The named pieces of memory alive at a moment, and the six groups the stacked bar shows.

/// The groups of the stacked bar. Every [`Term`] belongs to exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Component {
    Params,
    Optimizer,
    Gradients,
    Activations,
    Logits,
    Other,
}

impl Component {
    pub const ALL: [Component; 6] = [
        Component::Params,
        Component::Optimizer,
        Component::Gradients,
        Component::Activations,
        Component::Logits,
        Component::Other,
    ];

    /// Each component's id, in [`Component::ALL`] order.
    pub const IDS: [&'static str; 6] = crate::ids!(Component::ALL);

    /// Stable id, used in JSON, CSS classes and test hooks (`segment-params`, …).
    pub const fn id(self) -> &'static str {
        match self {
            Component::Params => "params",
            Component::Optimizer => "optimizer",
            Component::Gradients => "gradients",
            Component::Activations => "activations",
            Component::Logits => "logits",
            Component::Other => "other",
        }
    }
}

/// One tensor (or family of tensors) the physics notes name, alive at some moment of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Term {
    /// fp32 parameters, 4 bytes each (the model is never cast; autocast casts per op).
    Params,
    /// model.py's registered causal-mask buffers (manual attention only), fp32 T×T per layer.
    MaskBuffers,
    /// AdamW `exp_avg` + `exp_avg_sq`, fp32, created lazily at the first `optimizer.step()`.
    AdamState,
    /// `.grad` of every parameter, fp32: alive from the first backward of an iteration until
    /// `zero_grad(set_to_none=True)`; so during the forward of micro-steps 2..GA.
    Grads,
    /// Gradients as the backward produces them, before they land in `.grad` (compiled
    /// backwards return a whole fresh set at once).
    FreshGrads,
    /// The tied `wte`/`lm_head` weight's fp32 grad waiting in the autograd engine's input
    /// buffer for the embedding backward, and the embedding's dense grad added to it.
    TiedWeightGrad,
    /// Tensors every transformer block saves for its backward.
    BlockActivations,
    /// `ln_f`'s fp32 input and statistics, and the 16-bit input of `lm_head`.
    FinalActivations,
    /// The bool mask of the embedding dropout (dropout > 0).
    EmbeddingDropoutMask,
    /// 16-bit copies of the Linear weights made by autocast and kept by the matmuls' autograd
    /// nodes (training) or the autocast cache (eval, under `no_grad`).
    WeightCopies,
    /// `GPT.forward`'s locals: the fp32 token embedding, the fp32 `ln_f` output, `pos_emb`.
    ForwardLocals,
    /// Working tensors of one block's forward or backward (gradients of its inputs, the
    /// softmax of the manual path, eval's per-block intermediates).
    BlockTransient,
    /// The (B, T, vocab_size) logits of the current forward.
    Logits,
    /// The previous forward's logits, still bound to the Python name `logits` until the new
    /// forward returns.
    PrevLogits,
    /// During an `estimate_loss()` after training began: the training loop's last logits.
    StaleTrainLogits,
    /// `F.cross_entropy`'s log-softmax output (16-bit under autocast; shared with nll in fp32).
    LogSoftmax,
    /// The fp32 copy of the log-softmax that autocast makes for `nll_loss` (kept for backward).
    LossFp32Copy,
    /// Gradients of the loss path: nll's grad, the log-softmax grad, dlogits.
    LossGrads,
    /// The zero tangent AOTAutograd materialises for the unused `logits` output (compile).
    ZeroTangent,
    /// lm_head's backward outputs: dx and the (V, C) weight grad in 16-bit and fp32.
    LmHeadGrads,
    /// cuBLAS workspaces, one per (handle, stream): the forward thread's and the backward's.
    CublasWorkspace,
    /// The int64 (B, T) `X`, `Y` batches (the next batch is fetched during the backward).
    TokenIds,
    /// What the caching allocator counts beyond the requested bytes: blocks rounded to 512 B,
    /// and large blocks not split when the remainder would be 1 MiB or less.
    AllocatorRounding,
    /// DDP's flat fp32 gradient buckets (ddp.rs), on every rank.
    DdpBuckets,
    /// The old bucket set a rank may still hold after DDP rebuilds its buckets (iteration 1).
    DdpRebuiltBuckets,
    /// nanochat: parameters as stored — fp32 masters for the Linear layers and scalars, bf16
    /// token and value embeddings.
    StoredParams,
    /// nanochat: the rotary `cos`/`sin` tables, bf16, for 10× the context.
    RotaryBuffers,
    /// nanochat: `token_bytes`, the int32 (V,) table the bits-per-byte evaluation reads.
    TokenBytes,
    /// nanochat: Muon's `momentum_buffer` and `second_momentum_buffer`, fp32, per shape group.
    MuonState,
    /// nanochat: `torch.stack` of a Muon group's gradients and of its parameters, alive during
    /// `MuonAdamW.step()`.
    OptimizerStacks,
    /// nanochat: the bf16 Polar-Express iterates of `muon_step_fused` (one group at a time).
    PolarExpress,
    /// nanochat: the fp32 (V, C) buffer an embedding's backward scatters into before its bf16 cast.
    EmbeddingGradBuffer,
    /// nanochat with SDPA: the additive (T, T) mask of the sliding-window layers.
    AttentionMask,
    /// Loss and other scalars the loop keeps on the GPU.
    Scalars,
    /// torch.compile on a cold Inductor cache: while a Triton kernel with several candidate
    /// configs is autotuned on its first call, the benchmarker's L2-flush buffer and clones of
    /// the arguments the kernel mutates.
    InductorAutotune,
    /// nanochat's `Engine`: the key and value caches of a generation, (layers, samples, prompt +
    /// new tokens, heads, head dim) each, in the compute dtype.
    KvCache,
}

/// Every term, in declaration order (`Term as usize` indexes it).
pub const ALL_TERMS: [Term; 36] = [
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
    Term::DdpBuckets,
    Term::DdpRebuiltBuckets,
    Term::StoredParams,
    Term::RotaryBuffers,
    Term::TokenBytes,
    Term::MuonState,
    Term::OptimizerStacks,
    Term::PolarExpress,
    Term::EmbeddingGradBuffer,
    Term::AttentionMask,
    Term::Scalars,
    Term::InductorAutotune,
    Term::KvCache,
];

impl Term {
    pub fn component(self) -> Component {
        use Term::*;
        match self {
            Params | MaskBuffers | StoredParams | RotaryBuffers => Component::Params,
            AdamState | MuonState | OptimizerStacks | PolarExpress => Component::Optimizer,
            Grads | FreshGrads | TiedWeightGrad | DdpBuckets | DdpRebuiltBuckets
            | EmbeddingGradBuffer => Component::Gradients,
            BlockActivations | FinalActivations | EmbeddingDropoutMask | WeightCopies
            | ForwardLocals | BlockTransient | AttentionMask | KvCache => Component::Activations,
            Logits | PrevLogits | StaleTrainLogits | LogSoftmax | LossFp32Copy | LossGrads
            | ZeroTangent | LmHeadGrads => Component::Logits,
            CublasWorkspace | TokenIds | AllocatorRounding | TokenBytes | Scalars
            | InductorAutotune => Component::Other,
        }
    }

    /// Each term's id, in declaration order ([`ALL_TERMS`]).
    pub const IDS: [&'static str; ALL_TERMS.len()] = crate::ids!(ALL_TERMS);

    /// Stable id for JSON and for looking up explanations in the UI.
    pub const fn id(self) -> &'static str {
        use Term::*;
        match self {
            Params => "params",
            MaskBuffers => "mask_buffers",
            AdamState => "adam_state",
            Grads => "grads",
            FreshGrads => "fresh_grads",
            TiedWeightGrad => "tied_weight_grad",
            BlockActivations => "block_activations",
            FinalActivations => "final_activations",
            EmbeddingDropoutMask => "embedding_dropout_mask",
            WeightCopies => "weight_copies",
            ForwardLocals => "forward_locals",
            BlockTransient => "block_transient",
            Logits => "logits",
            PrevLogits => "prev_logits",
            StaleTrainLogits => "stale_train_logits",
            LogSoftmax => "log_softmax",
            LossFp32Copy => "loss_fp32_copy",
            LossGrads => "loss_grads",
            ZeroTangent => "zero_tangent",
            LmHeadGrads => "lm_head_grads",
            CublasWorkspace => "cublas_workspace",
            TokenIds => "token_ids",
            AllocatorRounding => "allocator_rounding",
            DdpBuckets => "ddp_buckets",
            DdpRebuiltBuckets => "ddp_rebuilt_buckets",
            StoredParams => "stored_params",
            RotaryBuffers => "rotary_buffers",
            TokenBytes => "token_bytes",
            MuonState => "muon_state",
            OptimizerStacks => "optimizer_stacks",
            PolarExpress => "polar_express",
            EmbeddingGradBuffer => "embedding_grad_buffer",
            AttentionMask => "attention_mask",
            Scalars => "scalars",
            InductorAutotune => "inductor_autotune",
            KvCache => "kv_cache",
        }
    }
}

/// Bytes per component, in [`Component::ALL`] order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Components(pub [u128; 6]);

impl Components {
    pub fn get(&self, c: Component) -> u128 {
        self.0[c as usize]
    }

    pub fn total(&self) -> u128 {
        self.0.iter().sum()
    }
}

/// The terms alive at one moment, with their bytes (zero-byte terms are left out).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Terms(pub Vec<(Term, u128)>);

impl Terms {
    pub fn add(&mut self, term: Term, bytes: u128) {
        if bytes == 0 {
            return;
        }
        match self.0.iter_mut().find(|(t, _)| *t == term) {
            Some((_, b)) => *b += bytes,
            None => self.0.push((term, bytes)),
        }
    }

    pub fn extend(&mut self, other: &Terms) {
        for &(t, b) in &other.0 {
            self.add(t, b);
        }
    }

    pub fn total(&self) -> u128 {
        self.0.iter().map(|(_, b)| b).sum()
    }

    pub fn bytes(&self, term: Term) -> u128 {
        self.0
            .iter()
            .find(|(t, _)| *t == term)
            .map_or(0, |(_, b)| *b)
    }

    pub fn components(&self) -> Components {
        let mut c = Components::default();
        for &(t, b) in &self.0 {
            c.0[t.component() as usize] += b;
        }
        c
    }
}

/// The JSON contract's forms: a component or a term by its id; the bytes of each, as an object
/// keyed by id (components in [`Component::ALL`] order, terms in the order they were added).
#[cfg(feature = "serde")]
mod serialize {
    use super::{Component, Components, Term, Terms};
    use serde::ser::{Serialize, SerializeMap, Serializer};

    impl Serialize for Component {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(self.id())
        }
    }

    impl Serialize for Term {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(self.id())
        }
    }

    impl Serialize for Components {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut map = s.serialize_map(Some(Component::ALL.len()))?;
            for c in Component::ALL {
                map.serialize_entry(c.id(), &self.get(c))?;
            }
            map.end()
        }
    }

    impl Serialize for Terms {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut map = s.serialize_map(Some(self.0.len()))?;
            for (t, bytes) in &self.0 {
                map.serialize_entry(t.id(), bytes)?;
            }
            map.end()
        }
    }
}
