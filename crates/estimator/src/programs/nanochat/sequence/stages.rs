//! The evaluation stages' memory: `scripts/base_eval.py` and `scripts/chat_eval.py` as they run
//! at 92d63d4 — `load_model` (checkpoint_manager.py), the `Engine`'s generation through its KV
//! cache (engine.py) and forwards of the uncompiled model under `no_grad`. Checked against runs of
//! the real scripts on real checkpoints (data/measured/nanochat-stages.jsonl).

use super::{Gen, Ranks};
use crate::engine::events::{Phase, Sequence, Stage, TensorId};
use crate::gpu::Gpu;
use crate::programs::nanochat::stage::{Eval, StageConfig};
use crate::programs::nanochat::Shape;
use crate::terms::Term;

/// Decode steps replayed per generation: each later step frees what the one before made, so
/// the second repeats the first (the KV cache is allocated whole before the first).
const DECODE_STEPS: u32 = 2;

/// base_eval.py's seven conditioned sampling prompts are a few words each: the longest is under
/// 16 tokens with nanochat's tokenizer and the BOS; its 16 greedy tokens follow.
const SAMPLE_PROMPT_TOKENS: u128 = 16;

impl Gen<'_> {
    /// `load_model` → `build_model`: `torch.load(map_location=device)` puts the checkpoint's
    /// tensors on the GPU in their saved dtypes; the model built for them ([`Gen::new_model`])
    /// exists beside them until `load_state_dict(assign=True)` swaps the checkpoint's in and
    /// the built ones go. The peak is the checkpoint plus an fp32 model (measured ≈ 2.6× the
    /// loaded weights at d4–d12).
    pub(super) fn load_model(&mut self) {
        self.out.mark(Some(Phase::Load), Stage::ModelLoad, 0);
        let params = self.s.params();
        for p in &params {
            self.out.alloc(p.bytes(), Term::StoredParams);
        }
        let mut built = self.new_model();
        self.out.free_all(&mut built);
    }

    /// One `Engine.generate` of `samples` rows: a batch-1 prefill of the `prompt` tokens into a
    /// KV cache of that length, whose last-position logits (a view: the whole capped (1, P, V)
    /// stays alive) seed the first sample; a decode cache for prompt + `max_tokens` takes the
    /// prefill's keys and values, then one token per row per step.
    pub(super) fn generate(&mut self, prompt: u128, samples: u128, max_tokens: u128) {
        let (c, e) = (self.d.c, self.d.e);
        // the cache holds n_kv_head × head_dim = C per layer and position (n_kv_head = n_head)
        let per_position = u128::from(self.s.l) * c * e;
        let mut ids = self.out.alloc(8 * prompt, Term::TokenIds);
        let mut prefill_cache = vec![
            self.out.alloc(per_position * prompt, Term::KvCache),
            self.out.alloc(per_position * prompt, Term::KvCache),
            self.out.alloc(4, Term::KvCache),
        ];
        let mut logits = self.capped_logits(prompt);
        // kv_cache.prev_embedding: the embedding's last position, a view of the (1, P, C) one
        let prefill_prev = self.out.alloc(e * prompt * c, Term::KvCache);
        let length = prompt + max_tokens;
        let mut decode_cache = vec![
            self.out
                .alloc(per_position * samples * length, Term::KvCache),
            self.out
                .alloc(per_position * samples * length, Term::KvCache),
            self.out.alloc(4 * samples, Term::KvCache),
        ];
        // prefill() copies in place and clones the previous embedding per row; `del` the prefill
        let mut prev = self.out.alloc(e * samples * c, Term::KvCache);
        self.out.free(prefill_prev);
        self.out.free_all(&mut prefill_cache);
        for _ in 0..DECODE_STEPS.min(max_tokens as u32) {
            // sample_next_token: (n, 1) int64 choices (argmax, or top-k and multinomial)
            let next = self.out.alloc(8 * samples, Term::TokenIds);
            let column = self.out.alloc(8 * samples, Term::TokenIds);
            self.out.free(next);
            self.out.free(ids);
            ids = column;
            let new_logits = self.capped_logits(samples);
            let new_prev = self.out.alloc(e * samples * c, Term::KvCache);
            self.out.free(prev);
            prev = new_prev;
            self.out.free(logits);
            logits = new_logits;
        }
        self.out.free(logits);
        self.out.free(prev);
        self.out.free(ids);
        self.out.free_all(&mut decode_cache);
    }

    /// chat_eval.py's `run_categorical_eval` over each task's batches of `tokens`: each batch's
    /// (B, T) int64 ids, then its forward; the batch's ids and capped logits stay bound until
    /// the next batch's replace them, so the later forward runs beside them, and go when the
    /// task's call returns.
    fn categorical(&mut self, tasks: &[Vec<u64>]) {
        self.out.mark(Some(Phase::Core), Stage::Eval, 0);
        for batches in tasks {
            let mut held: Vec<TensorId> = Vec::new();
            for &n in batches {
                let n = u128::from(n);
                let ids = self.out.alloc(8 * n, Term::TokenIds);
                let logits = self.capped_logits(n);
                self.out.free_all(&mut held);
                held = vec![ids, logits];
            }
            self.out.free_all(&mut held);
        }
    }

    /// `evaluate_bpb` over one split: a fresh loader whose on-device 2·B·T int64 buffer
    /// replaces the last one's, then forwards with targets (`loss_reduction='none'`), whose
    /// (B, T) fp32 losses outlive them.
    fn bpb_split(&mut self, steps: u64, buffer: &mut TensorId) {
        if steps == 0 {
            return;
        }
        let new_buffer = self.out.alloc(16 * self.d.bt, Term::TokenIds);
        self.out.free(buffer.take());
        *buffer = new_buffer;
        for _ in 0..steps.min(super::MAX_EVAL_STEPS) {
            self.logits_forward(self.d.bt);
            let loss2d = self.out.alloc(4 * self.d.bt, Term::Logits);
            self.out.free(loss2d);
        }
    }
}

/// The allocation sequence of one rank of a stage's run on `gpu`.
pub fn generate(stage: &StageConfig, gpu: &Gpu) -> Sequence {
    if let Eval::Rl(rl) = &stage.eval {
        return super::rl::generate(stage, rl, gpu);
    }
    let model = stage.model_config();
    let s = Shape::of(&model);
    let ranks = Ranks {
        rank: 0,
        held_stashes: 0,
    };
    let mut g = Gen::new(&model, &s, gpu, ranks, false);
    g.load_model();
    match &stage.eval {
        Eval::Base(b) => {
            // token_bytes = get_token_bytes(device): int32 (V,)
            g.out
                .alloc(4 * u128::from(model.vocab_size), Term::TokenBytes);
            if b.sample {
                g.out.mark(Some(Phase::Generate), Stage::Eval, 0);
                g.generate(SAMPLE_PROMPT_TOKENS, 1, 16);
                g.generate(1, 8, 128);
            }
            if b.bpb {
                g.out.mark(Some(Phase::Eval), Stage::Eval, 0);
                let steps = stage.bpb_steps();
                let mut buffer = None;
                for _split in ["train", "val"] {
                    g.bpb_split(steps, &mut buffer);
                }
            }
            if b.core && stage.core_max_tokens > 0 {
                g.core(u128::from(stage.core_max_tokens));
            }
        }
        // its own sequence, returned above
        Eval::Rl(_) => {}
        Eval::Chat(c) => {
            if c.categorical() {
                g.categorical(&stage.categorical_tasks());
            }
            if c.generative() {
                g.out.mark(Some(Phase::Generate), Stage::Eval, 0);
                g.generate(
                    u128::from(stage.longest_prompt.max(1)),
                    u128::from(c.num_samples),
                    u128::from(c.max_new_tokens),
                );
            }
        }
    }
    g.out.finish()
}
