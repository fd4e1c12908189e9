//! gpt_instruction_finetuning.py's run as the caching allocator sees it, read from the book's
//! source at 28c65cdf (`ch07/01_main-chapter-code/gpt_instruction_finetuning.py`,
//! `previous_chapters.py`): chapter 5's model and loop ([`super::super::sequence::Gen`]) at a
//! GPT-2 size, every parameter trained, with what chapter 7 changes:
//!
//! * `custom_collate_fn` builds each batch on the device, padded to its longest example: the
//!   loop's names hold the inputs and targets until the next batch is built;
//! * the initial losses (`calc_loss_loader` over 5 batches of each loader, under `no_grad`)
//!   before the optimizer exists;
//! * after each epoch 50 tokens from `format_input(val_data[0])`; after training a response to
//!   each test entry (`generate`: up to 256 tokens, fewer once the model writes its end-of-text
//!   token), beside the gradients and AdamW's state.

use super::super::sequence::{Dims, Gen, STEPS_REPLAYED};
use super::config::Ch07Config;
use crate::engine::events::{Phase, Sequence, Stage, TensorId};
use crate::gpu::Gpu;
use crate::terms::Term;

type T = TensorId;

/// `generate_and_print_sample`'s and `generate`'s new tokens.
const SAMPLE_TOKENS: u128 = 50;
const RESPONSE_TOKENS: u128 = 256;

/// `calc_loss_loader` over the first `eval_iter` batches of the training loader (full) and of the
/// validation loader (its last partial), each `.item()`-ed before the next.
fn losses(g: &mut Gen, cfg: &Ch07Config, t: u128) {
    let (b, iters) = (u64::from(cfg.batch_size), u64::from(cfg.eval_iter));
    let train = std::iter::repeat_n(b, iters.min(cfg.train_batches()) as usize);
    let val_rows = cfg.val_rows();
    let val = (0..iters.min(val_rows.div_ceil(b))).map(|i| (val_rows - i * b).min(b));
    for rows in train.chain(val) {
        let loss = g.loss_eval(u128::from(rows), t);
        g.f(loss);
    }
}

/// The allocation sequence of one gpt_instruction_finetuning.py run on `gpu`, every batch at its
/// widest (the run meets its longest example once an epoch).
pub fn generate(cfg: &Ch07Config, gpu: &Gpu) -> Sequence {
    let (c, layers, h) = cfg.dims();
    let d = Dims {
        c: u128::from(c),
        h: u128::from(h),
        v: 50_257,
        ctx: 1024,
        layers,
        dropout: cfg.drop_rate > 0.0,
        qkv_bias: true,
        // load_weights_into_gpt gives out_head its own copy of wte: untied, no bias
        head: 50_257,
        head_bias: false,
    };
    let mut g = Gen::new(d, gpu);
    g.model_load();
    let (b, t) = (u128::from(cfg.batch_size), u128::from(cfg.width()));
    g.mark(Some(Phase::Eval), Stage::Eval, 0);
    losses(&mut g, cfg, t);
    let per_epoch = cfg.train_batches();
    let steps = cfg.total_steps().min(STEPS_REPLAYED);
    let (mut batch, mut loss): ((T, T), T) = ((None, None), None);
    let mut sampled = false;
    for step in 0..steps {
        // the collate's tensors, built on the device; the last batch's die as the names rebind
        let ids = g.a(8 * b * t, Term::TokenIds);
        let targets = g.a(8 * b * t, Term::TokenIds);
        g.fs(&[batch.0, batch.1]);
        batch = (ids, targets);
        g.start_step(step);
        // the batch is the loop's: autograd's references to it free nothing
        let (fwd, new_loss) = g.forward_train(b, t, None, None);
        g.f(loss);
        loss = new_loss;
        g.mark(Some(g.phase), Stage::Backward, 1);
        g.backward(b, t, fwd);
        g.mark(Some(g.phase), Stage::OptimizerStep, 0);
        g.optimizer_step();
        if step % u64::from(cfg.eval_freq) == 0 {
            g.mark(Some(Phase::Eval), Stage::Eval, 0);
            losses(&mut g, cfg, t);
        }
        if (step + 1) % per_epoch == 0 {
            g.mark(Some(Phase::EvalAfterStep), Stage::Eval, 0);
            g.generate_tokens(u128::from(cfg.sample_prompt), SAMPLE_TOKENS);
            sampled = true;
        }
    }
    if !sampled {
        g.mark(Some(Phase::EvalAfterStep), Stage::Eval, 0);
        g.generate_tokens(u128::from(cfg.sample_prompt), SAMPLE_TOKENS);
    }
    // train_model_simple returns: its batch and loss go; the responses, beside the gradients and
    // AdamW's state (at most 256 tokens: a bound where the model stops at its end-of-text token)
    g.fs(&[batch.0, batch.1, loss]);
    g.mark(Some(Phase::EvalAfterStep), Stage::Eval, 0);
    g.generate_tokens(u128::from(cfg.test_prompt), RESPONSE_TOKENS);
    g.out.finish()
}
