//! train_gpt2.py's run as the caching allocator sees it. The model, its forward, loss, backward
//! and fused AdamW step are GPT-2's as nanoGPT's sequence writes them (`nanogpt::sequence::Gen`:
//! the same modules, autocast, optimizer groups and clipping); what is the script's own is the
//! loop, read from its source:
//!
//! * each micro-step loads its batch first (`x, y = train_loader.next_batch()` rebinds the
//!   module-level `x, y`, freeing the previous ones, then `.to(device)`), no prefetch;
//! * `logits, loss = model(x, y)` rebinds module-level names: the last micro-step's logits live
//!   on through clipping, the optimizer step, and into the next evaluation or forward;
//! * `optimizer.zero_grad()` runs at the start of a training step, so the evaluations at steps
//!   250, 500, … and the last one run with the gradients alive;
//! * validation (`val_loss_steps` batches of B×T through `model`, compiled or not) at step 0,
//!   every 250 steps and the last; it shares the name `logits` with training.
//!
//! * HellaSwag (lines 413-444; uncompiled runs only, at step 0, every 250 steps and the last)
//!   right after validation: per example `tokens, mask` to the device, `logits, loss =
//!   model(tokens)` on (4, L) rows under no_grad and bf16 autocast (no targets: no loss path),
//!   which rebinds the module-level `logits` (the first example frees validation's last 2·B·T·V
//!   logits before training's next forward), then `get_most_likely_row` (lines 258-275, outside
//!   autocast: a bf16 shifted copy of the logits, bf16 log_softmax, per-token losses);
//! * sampling (lines 446-480; uncompiled, not at step 0): 4 rows grown from 8 prompt tokens to
//!   32, one (4, t) forward per token, each rebinding `logits` (to a view of the last position,
//!   which keeps the (4, t, V) storage until the next rebinding).

use super::config::BngConfig;
use crate::engine::events::{Phase, Sequence, Stage, TensorId};
use crate::gpu::Gpu;
use crate::physics::Patches;
use crate::programs::nanogpt::sequence::{simulated_micro_steps, Gen};
use crate::terms::Term;

/// Validation batches replayed (each frees the one before; more repeat the second).
const VAL_BATCHES: u32 = 2;

/// Steps replayed: step 0 (validation, then training), step 1, and a later evaluation step.
const STEADY_STEPS: u32 = 2;

/// Micro-steps replayed per step at most (`simulated_micro_steps`: as many as `accum`'s parity
/// allows below it).
const MAX_MICRO_STEPS: u32 = 4;

/// HellaSwag examples replayed per evaluation, and each one's token length L (context +
/// ending, padded to the longest of the 4 endings). These are the probe's 8 stub examples
/// (tools/build-nanogpt-probe/run_train.py: `L = 60 + 10 i`), which the measured runs ran; the
/// real 10,042 validation rows vary in length (tens of tokens, up to ~190), so a real run's
/// small HellaSwag blocks — and which cached segments they split — differ somewhat. The
/// decisive effect, validation's logits freed before training, does not depend on L.
const HELLASWAG_LENGTHS: [u128; 8] = [60, 70, 80, 90, 100, 110, 120, 130];

/// HellaSwag's and sampling's rows: 4 endings per example, `num_return_sequences = 4`.
const EVAL_ROWS: u128 = 4;

/// Sampling: the prompt ("Hello, I'm a language model,": 8 GPT-2 tokens) grown to `max_length`.
const SAMPLE_PROMPT: u128 = 8;
const SAMPLE_MAX_LENGTH: u128 = 32;

/// The model's sizes an eval forward of a few rows needs.
#[derive(Clone, Copy)]
struct Dims {
    n_layer: u32,
    c: u128,
    v: u128,
}

/// The module-level names the script's loop keeps alive.
#[derive(Default)]
struct Globals {
    x: TensorId,
    y: TensorId,
    logits: TensorId,
    /// HellaSwag's `tokens, mask` (GPU copies; sampling rebinds `tokens` to a list).
    tokens: TensorId,
    mask: TensorId,
    /// Sampling's last `xgen, probs, topk_probs, topk_indices, ix, xcol`: never rebound later.
    sample: Vec<TensorId>,
}

impl Globals {
    /// `x, y = loader.next_batch(); x, y = x.to(device), y.to(device)`: the old pair goes with
    /// the first rebinding, the new pair arrives with the second.
    fn next_batch(&mut self, g: &mut Gen) {
        g.free_all(&[self.x.take(), self.y.take()]);
        let (x, y) = g.batch();
        self.x = x;
        self.y = y;
    }
}

/// The validation loop: `model.eval()`, `no_grad`, `val_loss_steps` batches.
fn validate(g: &mut Gen, globals: &mut Globals, phase: Phase, compiled: bool) {
    g.mark(Some(phase), Stage::Eval, 0);
    for _ in 0..VAL_BATCHES {
        globals.next_batch(g);
        let mut cache = Vec::new();
        let fwd = if compiled {
            g.forward_compiled(true)
        } else {
            g.forward(true, &mut cache)
        };
        // autocast's weight copies go when its `with` ends; then `logits` is rebound
        g.free_all(&cache);
        g.f(globals.logits.take());
        globals.logits = fwd.logits;
    }
}

/// `model(idx)` without targets on `n` rows of `l` tokens under no_grad and bf16 autocast, in
/// the order nanoGPT's eval forward allocates (`nanogpt::sequence::Gen::forward` with flash
/// attention, less the loss path). Returns the bf16 logits (n, l, V) and the autocast cache's
/// weight copies (freed when the `with torch.autocast` block ends).
fn small_forward(g: &mut Gen, d: Dims, n: u128, l: u128) -> (TensorId, Vec<TensorId>) {
    let (c, v) = (d.c, d.v);
    let (bt, btc) = (n * l, n * l * c);
    let tr = Term::BlockTransient;
    let local = Term::ForwardLocals;
    let pos = g.a(8 * l, local);
    let tok = g.a(4 * btc, local);
    let pemb = g.a(4 * l * c, local);
    let mut x = g.a(4 * btc, tr);
    let mut cache = Vec::new();
    // ln → (mean, rstd freed) → the next Linear's bf16 weight copy (cached) and input copy
    let norm_and_cast = |g: &mut Gen, w: u128, cache: &mut Vec<TensorId>| {
        let out = g.a(4 * btc, tr);
        let stats = [g.a(4 * bt, tr), g.a(4 * bt, tr)];
        g.free_all(&stats);
        cache.push(g.a(2 * w, Term::WeightCopies));
        (out, g.a(2 * btc, tr))
    };
    for _ in 0..d.n_layer {
        let (ln1, ln1c) = norm_and_cast(g, 3 * c * c, &mut cache);
        let qkv = g.a(6 * btc, tr);
        g.f(ln1c);
        let y = g.a(2 * btc, tr);
        cache.push(g.a(2 * c * c, Term::WeightCopies));
        let proj = g.a(2 * btc, tr);
        g.free_all(&[y, qkv, ln1]);
        let x_mid = g.a(4 * btc, tr);
        g.f(proj);
        let (ln2, ln2c) = norm_and_cast(g, 4 * c * c, &mut cache);
        let h = g.a(8 * btc, tr);
        g.f(ln2c);
        let gelu = g.a(8 * btc, tr);
        g.f(h);
        cache.push(g.a(8 * c * c, Term::WeightCopies));
        let mlp = g.a(2 * btc, tr);
        g.f(gelu);
        g.f(ln2);
        let x_out = g.a(4 * btc, tr);
        g.free_all(&[mlp, x_mid, x]);
        x = x_out;
    }
    let lnf = g.a(4 * btc, local);
    let stats = [g.a(4 * bt, tr), g.a(4 * bt, tr)];
    g.free_all(&[stats[0], stats[1], x]);
    cache.push(g.a(2 * v * c, Term::WeightCopies));
    let lnfc = g.a(2 * btc, tr);
    let logits = g.a(2 * bt * v, Term::Logits);
    g.f(lnfc);
    // the forward's locals die as it returns (`loss` is None)
    g.free_all(&[pos, tok, pemb, lnf]);
    (logits, cache)
}

/// `logits, loss = model(rows)` inside `with torch.autocast`: the new logits are bound (the old
/// ones freed) before the `with` ends and drops the weight copies.
fn rebind_logits(g: &mut Gen, globals: &mut Globals, d: Dims, n: u128, l: u128) {
    let (logits, cache) = small_forward(g, d, n, l);
    g.f(globals.logits.take());
    globals.logits = logits;
    g.free_all(&cache);
}

/// The HellaSwag loop (train_gpt2.py lines 413-444) over [`HELLASWAG_LENGTHS`].
fn hellaswag(g: &mut Gen, globals: &mut Globals, d: Dims, phase: Phase) {
    g.mark(Some(phase), Stage::Eval, 0);
    for &l in &HELLASWAG_LENGTHS {
        // `_, tokens, mask, label = render_example(example)` rebinds both to CPU tensors
        g.free_all(&[globals.tokens.take(), globals.mask.take()]);
        globals.tokens = g.a(8 * EVAL_ROWS * l, Term::TokenIds);
        globals.mask = g.a(8 * EVAL_ROWS * l, Term::TokenIds);
        rebind_logits(g, globals, d, EVAL_ROWS, l);
        // get_most_likely_row, outside autocast: everything bf16 like the logits
        let n = EVAL_ROWS * (l - 1);
        let tr = Term::BlockTransient;
        let shift_logits = g.a(2 * n * d.v, tr);
        let shift_tokens = g.a(8 * n, tr);
        // F.cross_entropy(reduction='none'): log_softmax, then nll_loss
        let lsm = g.a(2 * n * d.v, Term::LogSoftmax);
        let losses = g.a(2 * n, tr);
        let total_weight = g.a(2, tr);
        g.free_all(&[total_weight, lsm]);
        let shift_mask = g.a(8 * n, tr);
        let masked = g.a(2 * n, tr);
        let sum_loss = g.a(2 * EVAL_ROWS, tr);
        let mask_sum = g.a(8 * EVAL_ROWS, tr);
        let avg = g.a(2 * EVAL_ROWS, tr);
        let argmin = g.a(8, tr);
        // `.item()`, then the function's locals go
        g.free_all(&[
            shift_logits,
            shift_tokens,
            losses,
            shift_mask,
            masked,
            sum_loss,
            mask_sum,
            avg,
            argmin,
        ]);
    }
}

/// The sampling loop (train_gpt2.py lines 446-480): 4 rows, 8 prompt tokens grown to 32.
fn sample(g: &mut Gen, globals: &mut Globals, d: Dims, phase: Phase) {
    g.mark(Some(phase), Stage::Eval, 0);
    let tr = Term::BlockTransient;
    // `tokens = enc.encode(...)` rebinds HellaSwag's GPU tokens; `xgen = tokens.to(device)`
    g.f(globals.tokens.take());
    let old = std::mem::take(&mut globals.sample);
    g.free_all(&old);
    let mut xgen = g.a(8 * EVAL_ROWS * SAMPLE_PROMPT, Term::TokenIds);
    let (mut probs, mut topk_p, mut topk_i, mut ix, mut xcol) = (None, None, None, None, None);
    for t in SAMPLE_PROMPT..SAMPLE_MAX_LENGTH {
        // the logits of the last position are a view: the (4, t, V) storage lives on
        rebind_logits(g, globals, d, EVAL_ROWS, t);
        let p = g.a(2 * EVAL_ROWS * d.v, tr);
        g.f(probs);
        probs = p;
        let (tp, ti) = (g.a(2 * EVAL_ROWS * 50, tr), g.a(8 * EVAL_ROWS * 50, tr));
        g.free_all(&[topk_p, topk_i]);
        (topk_p, topk_i) = (tp, ti);
        // torch.multinomial: an exponential draw per candidate, then the argmax
        let q = g.a(4 * EVAL_ROWS * 50, tr);
        let i = g.a(8 * EVAL_ROWS, tr);
        g.f(q);
        g.f(ix);
        ix = i;
        let col = g.a(8 * EVAL_ROWS, tr);
        g.f(xcol);
        xcol = col;
        let grown = g.a(8 * EVAL_ROWS * (t + 1), Term::TokenIds);
        g.f(xgen);
        xgen = grown;
    }
    globals.sample = vec![xgen, probs, topk_p, topk_i, ix, xcol];
}

/// The allocation sequence of one train_gpt2.py process on `gpu`, with HellaSwag and sampling
/// where the script runs them (eager only).
pub fn generate(cfg: &BngConfig, gpu: &Gpu) -> Sequence {
    generate_with(cfg, gpu, !cfg.use_compile)
}

/// [`generate`], with HellaSwag and sampling replayed or not (`evals`: the traced runs that
/// switched them off are the script without them).
pub fn generate_with(cfg: &BngConfig, gpu: &Gpu, evals: bool) -> Sequence {
    generate_rank(cfg, gpu, evals, false)
}

/// [`generate_with`] under DDP with the old bucket `held` through step 1 by the last
/// all-reduce (NCCL's watchdog had not released it when DDP rebuilt the buckets), or not.
pub fn generate_rank(cfg: &BngConfig, gpu: &Gpu, evals: bool, held: bool) -> Sequence {
    let model = cfg.model();
    let workspace = gpu.cublas_workspace_bytes();
    let mut g = Gen::new(&model, workspace, Patches::default());
    g.prefetch = false;
    g.tied_grad_keeps_lm_head = false;
    g.t = u128::from(cfg.t);
    g.wpe_rows = u128::from(cfg.block_size);
    g.model_load();
    // DDP(model), as train.py's (nanogpt::ddp): the state's broadcast and one bucket, rebuilt at
    // step 1's first forward (every rank runs the same: validation and HellaSwag are sharded)
    let mut buckets = g.ddp_wrap();
    let mut globals = Globals::default();
    let dims = Dims {
        n_layer: cfg.n_layer,
        c: u128::from(cfg.n_embd),
        v: u128::from(cfg.vocab_size),
    };
    // step 0's validation: its first matmul creates the forward thread's cuBLAS workspace
    g.mark(Some(Phase::Eval), Stage::Eval, 0);
    g.first_forward_workspace();
    validate(&mut g, &mut globals, Phase::Eval, cfg.use_compile);
    if evals {
        // no sampling at step 0 (`step > 0`)
        hellaswag(&mut g, &mut globals, dims, Phase::Eval);
    }

    let accum = u32::try_from(cfg.grad_accum_steps().max(1)).unwrap_or(u32::MAX);
    let micro = simulated_micro_steps(accum, MAX_MICRO_STEPS);
    let mut adam: Vec<TensorId> = Vec::new();
    let mut grads: Vec<TensorId> = Vec::new();
    let mut first_backward = true;
    let steps = std::iter::once(Phase::TrainFirstIter).chain(std::iter::repeat_n(
        Phase::TrainSteady,
        STEADY_STEPS as usize,
    ));
    for (step, phase) in steps.enumerate() {
        // the last step evaluates first, with the previous step's gradients still alive
        if step == STEADY_STEPS as usize {
            validate(&mut g, &mut globals, Phase::EvalAfterStep, cfg.use_compile);
            if evals {
                hellaswag(&mut g, &mut globals, dims, Phase::EvalAfterStep);
                sample(&mut g, &mut globals, dims, Phase::EvalAfterStep);
            }
        }
        // model.train(); optimizer.zero_grad()
        g.mark(Some(phase), Stage::ZeroGrad, 0);
        g.free_all(&std::mem::take(&mut grads));
        let mut old_buckets = Vec::new();
        for i in 1..=micro {
            g.mark(Some(phase), Stage::Forward, i);
            globals.next_batch(&mut g);
            if step == 1 && i == 1 {
                // inside `model(x, y)`, after the batch reached the card
                old_buckets = g.ddp_rebuild(&mut buckets, held);
            }
            let mut xy = (globals.x, globals.y);
            g.micro_step(
                phase,
                i,
                &mut globals.logits,
                &mut xy,
                &mut grads,
                first_backward,
            );
            first_backward = false;
        }
        g.optimizer_step(phase, &mut adam);
        g.free_all(&old_buckets);
    }
    g.out.finish()
}
