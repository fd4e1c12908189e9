//! gpt_class_finetune.py's run as the caching allocator sees it, read from the book's source at
//! 28c65cdf (`ch06/01_main-chapter-code/gpt_class_finetune.py`, `previous_chapters.py`) and
//! PyTorch's autograd. The model is chapter 5's ([`super::super::sequence::Gen`]); what chapter
//! 6 changes:
//!
//! * `out_head` is replaced by `Linear(emb_dim, num_classes)` on the CPU before `model.to(device)`:
//!   the card never holds the vocabulary-sized head;
//! * every parameter is frozen but the last block's, `final_norm`'s and the new head's: the
//!   embeddings and all other blocks record nothing for autograd (they run as under `no_grad`,
//!   in training mode), the last block's first LayerNorm keeps only its normalised input (its
//!   input needs no gradient), and the backward stops inside the last block;
//! * AdamW's state exists only for the parameters with a gradient;
//! * every batch is `batch_size` texts padded to `max_length` (the longest training text); the
//!   loss reads the last token's logits only (`[:, -1, :]`, a `(B, num_classes)` cross-entropy;
//!   its backward is a zeroed `(B, T, num_classes)` gradient);
//! * `evaluate_model` after steps 0, 50, 100, … over `eval_iter` batches of each loader, and
//!   `calc_accuracy_loader` over `eval_iter` batches of each after every epoch, beside the
//!   gradients and AdamW's state.

use super::super::sequence::{BlockSaved, Dims, Gen, LnSaved, STEPS_REPLAYED};
use super::config::{Ch06Config, CONTEXT_LENGTH, VOCAB_SIZE};
use crate::engine::events::{Phase, Sequence, Stage, TensorId};
use crate::gpu::Gpu;
use crate::terms::Term;

type T = TensorId;

/// A training forward's saved tensors.
struct ClassifierForward {
    targets: T,
    block: BlockSaved,
    last: T,
    lnf: LnSaved,
    lsm: T,
    total_weight: T,
}

impl Gen {
    /// `logits = model(input_batch)[:, -1, :]` and `cross_entropy` with the frozen blocks; the
    /// batch's ids go as `calc_loss_batch` returns (the frozen embedding keeps nothing).
    fn classifier_forward_train(
        &mut self,
        b: u128,
        t: u128,
        ids: T,
        targets: T,
    ) -> (ClassifierForward, T) {
        let d = self.d;
        let n = b * t;
        let a = 4 * n * d.c;
        let tok = self.a(a, Term::ForwardLocals);
        let arange = self.a(8 * t, Term::TokenIds);
        let pos = self.a(4 * t * d.c, Term::ForwardLocals);
        self.f(arange);
        let mut x0 = self.a(a, Term::BlockTransient);
        if d.dropout {
            x0 = self.drop_no_grad(x0, a, n * d.c);
        }
        // nn.Sequential rebinds its `input` block by block; GPTModel.forward's `x` keeps the
        // embeddings until the blocks return
        let mut x = x0;
        for _ in 1..d.layers {
            let out = self.block_eval(b, t, d.dropout);
            if x != x0 {
                self.f(x);
            }
            x = out;
        }
        let (block, last) = self.block_train(b, t, false);
        if x != x0 {
            self.f(x);
        }
        self.f(x0);
        let lnf = self.ln_train(n, true);
        let logits = self.matmul_out(4 * n * d.head, Term::Logits);
        self.fs(&[tok, pos]);
        self.mark(Some(self.phase), Stage::Loss, 1);
        let lsm = self.a(4 * b * d.head, Term::LogSoftmax);
        let loss = self.a(4, Term::Scalars);
        let total_weight = self.a(4, Term::Scalars);
        self.fs(&[logits, ids]);
        let fwd = ClassifierForward {
            targets,
            block,
            last,
            lnf,
            lsm,
            total_weight,
        };
        (fwd, loss)
    }

    /// The backward from the loss to the last block, which ends it.
    fn classifier_backward(&mut self, b: u128, t: u128, fwd: ClassifierForward) {
        let n = b * t;
        let (a, classes) = (4 * n * self.d.c, self.d.head);
        let seed = self.a(4, Term::LossGrads);
        let g_nll = self.a(4 * b * classes, Term::LossGrads);
        self.fs(&[seed, fwd.targets, fwd.total_weight]);
        let g_lsm = self.a(4 * b * classes, Term::LossGrads);
        self.fs(&[g_nll, fwd.lsm]);
        // [:, -1, :]: select's backward writes into a zeroed (B, T, classes) gradient
        let g_logits = self.a(4 * n * classes, Term::LossGrads);
        self.f(g_lsm);
        // out_head, addmm: the input's gradient, the weight's, the bias's
        let dx = self.bwd_matmul_out(a, Term::LmHeadGrads);
        self.grad(self.head);
        self.grad(self.head + 1);
        self.fs(&[g_logits, fwd.lnf.y]);
        let mut res: T = None;
        let lnf = LnSaved { y: None, ..fwd.lnf };
        self.ln_backward(n, lnf, self.final_norm, dx, fwd.last, &mut res);
        let p = self.blocks[self.blocks.len() - 1];
        self.block_backward(b, t, p, None, fwd.block, &mut res);
    }

    /// `calc_loss_batch` under no_grad on `rows` texts: the batch, the forward, the last token's
    /// loss; its locals go as it returns (each loss is `.item()`-ed).
    fn classifier_loss_eval(&mut self, rows: u128, t: u128) {
        let ids = self.a(8 * rows * t, Term::TokenIds);
        let targets = self.a(8 * rows, Term::TokenIds);
        let logits = self.forward_eval(rows, t);
        let lsm = self.a(4 * rows * self.d.head, Term::LogSoftmax);
        let loss = self.a(4, Term::Scalars);
        let total_weight = self.a(4, Term::Scalars);
        self.fs(&[lsm, total_weight, ids, targets, logits, loss]);
    }

    /// `calc_accuracy_loader` over batches of `rows` texts: per batch the ids and labels, the
    /// forward, `argmax`, `==` and `.sum()`; `logits` and `predicted_labels` live on to the next
    /// batch's, the GPU batch until the loop rebinds its names.
    fn accuracy(&mut self, batches: impl Iterator<Item = u128>, t: u128) {
        let (mut ids, mut labels, mut logits, mut predicted): (T, T, T, T) =
            (None, None, None, None);
        for rows in batches {
            self.fs(&[ids, labels]);
            ids = self.a(8 * rows * t, Term::TokenIds);
            labels = self.a(8 * rows, Term::TokenIds);
            let l = self.forward_eval(rows, t);
            self.f(logits);
            logits = l;
            let p = self.a(8 * rows, Term::TokenIds);
            self.f(predicted);
            predicted = p;
            let eq = self.a(rows, Term::Scalars);
            let sum = self.a(8, Term::Scalars);
            self.fs(&[eq, sum]);
        }
        self.fs(&[ids, labels, logits, predicted]);
    }
}

/// The loader's first `iters` batches of `rows` rows in batches of `b` (`drop_last` or not).
fn batches(rows: u64, b: u64, iters: u64, drop_last: bool) -> impl Iterator<Item = u128> {
    let n = if drop_last {
        rows / b
    } else {
        rows.div_ceil(b)
    };
    (0..iters.min(n)).map(move |i| u128::from((rows - i * b).min(b)))
}

/// The allocation sequence of one gpt_class_finetune.py run on `gpu`.
pub fn generate(cfg: &Ch06Config, gpu: &Gpu) -> Sequence {
    let (c, layers, h) = cfg.dims();
    let d = Dims {
        c: u128::from(c),
        h: u128::from(h),
        v: u128::from(VOCAB_SIZE),
        ctx: u128::from(CONTEXT_LENGTH),
        layers,
        dropout: cfg.drop_rate > 0.0,
        qkv_bias: true,
        head: u128::from(cfg.num_classes),
        head_bias: true,
    };
    let mut g = Gen::new(d, gpu);
    g.model_load();
    let (b, t) = (u128::from(cfg.batch_size), u128::from(cfg.max_length));
    let b64 = u64::from(cfg.batch_size);
    let iters = u64::from(cfg.eval_iter);
    let per_epoch = cfg.train_batches();
    let steps = cfg.total_steps().min(STEPS_REPLAYED);
    let mut loss: T = None;
    let mut accuracy_after_training = false;
    let accuracy = |g: &mut Gen| {
        g.mark(Some(Phase::EvalAfterStep), Stage::Eval, 0);
        g.accuracy(batches(cfg.train_rows, b64, iters, true), t);
        g.accuracy(batches(cfg.val_rows, b64, iters, false), t);
    };
    for step in 0..steps {
        g.start_step(step);
        let ids = g.a(8 * b * t, Term::TokenIds);
        let targets = g.a(8 * b, Term::TokenIds);
        let (fwd, new_loss) = g.classifier_forward_train(b, t, ids, targets);
        g.f(loss);
        loss = new_loss;
        g.mark(Some(g.phase), Stage::Backward, 1);
        g.classifier_backward(b, t, fwd);
        g.mark(Some(g.phase), Stage::OptimizerStep, 0);
        g.optimizer_step();
        if step % u64::from(cfg.eval_freq) == 0 {
            g.mark(Some(Phase::Eval), Stage::Eval, 0);
            let train = batches(cfg.train_rows, b64, iters, true);
            for rows in train.chain(batches(cfg.val_rows, b64, iters, false)) {
                g.classifier_loss_eval(rows, t);
            }
        }
        if (step + 1) % per_epoch == 0 {
            accuracy(&mut g);
            accuracy_after_training = true;
        }
    }
    // the accuracy passes after each epoch: beside the gradients and AdamW's state
    if !accuracy_after_training {
        accuracy(&mut g);
    }
    g.out.finish()
}
