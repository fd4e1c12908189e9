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
//! HellaSwag (4 rows per example, uncompiled runs only) and sampling (4 × 32 tokens) run next to
//! validation on the same memory with far fewer tokens; they are not replayed.

use super::config::BngConfig;
use crate::engine::events::{Phase, Sequence, Stage, TensorId};
use crate::gpu::Gpu;
use crate::physics::Patches;
use crate::programs::nanogpt::sequence::Gen;
use crate::terms::Term;

/// Validation batches replayed (each frees the one before; more repeat the second).
const VAL_BATCHES: u32 = 2;

/// Steps replayed: step 0 (validation, then training), step 1, and a later evaluation step.
const STEADY_STEPS: u32 = 2;

/// Micro-steps replayed per step: the third and later repeat the second.
const MAX_MICRO_STEPS: u64 = 2;

/// The module-level names the script's loop keeps alive.
#[derive(Default)]
struct Globals {
    x: TensorId,
    y: TensorId,
    logits: TensorId,
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

/// The allocation sequence of one train_gpt2.py process on `gpu`.
pub fn generate(cfg: &BngConfig, gpu: &Gpu) -> Sequence {
    let model = cfg.model();
    let workspace = gpu.cublas_workspace_bytes();
    let mut g = Gen::new(&model, workspace, Patches::default());
    g.prefetch = false;
    g.t = u128::from(cfg.t);
    g.wpe_rows = u128::from(cfg.block_size);
    g.model_load();
    // DDP(model): the Reducer's gradient buckets, before the first batch (nanogpt::ddp)
    for b in crate::ddp::bucket_bytes(&model) {
        g.a(b, Term::DdpBuckets);
    }
    let mut globals = Globals::default();
    // step 0's validation: the first matmul creates the forward thread's cuBLAS workspace
    g.mark(Some(Phase::Eval), Stage::Eval, 0);
    g.a(workspace, Term::CublasWorkspace);
    validate(&mut g, &mut globals, Phase::Eval, cfg.use_compile);

    let micro = cfg.grad_accum_steps().clamp(1, MAX_MICRO_STEPS) as u32;
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
        }
        // model.train(); optimizer.zero_grad()
        g.mark(Some(phase), Stage::ZeroGrad, 0);
        g.free_all(&std::mem::take(&mut grads));
        for i in 1..=micro {
            g.mark(Some(phase), Stage::Forward, i);
            globals.next_batch(&mut g);
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
    }
    g.out.finish()
}
