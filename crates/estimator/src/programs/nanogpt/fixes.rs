//! The fix ranker: every change that could make a run fit, re-estimated and ranked by what it
//! costs training.
//!
//! Each candidate is a changed config (and, where it needs one, a code patch or an environment
//! variable), estimated exactly like the user's own. Ranking: fits first; then by what changes in
//! training — nothing, only slower, a code change, more gradient noise, less regularisation,
//! shorter context, a smaller model; ties by speed. Changes that raise memory or do nothing (turning
//! `compile` off, lowering `eval_iters`) are listed with their true sign, last, never as fixes.

use super::closed_verdict::verdict;
use crate::analysis::{analyze, analyze_patched, fits_on_card, Analysis};
use crate::config::{Allocator, Dtype, TrainConfig};
use crate::estimate::{estimate_patched, Estimate};
use crate::gpu::Budget;
use crate::physics::{Patches, Phase};
use crate::programs::fix_view::{FixWords, FixesView};
use crate::speed::iter_seconds;
use crate::verdict::{Risk, Verdict};

pub use crate::engine::ranking::Impact;

crate::engine::fix_kinds! {
    /// The kinds of fix.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum FixKind {
        /// Smaller `batch_size`, more `gradient_accumulation_steps`, same effective batch.
        MicroBatchKeepEffective,
        /// The same with `expandable_segments:True`, which lets a larger micro-batch fit.
        ExpandableWithMicroBatch,
        /// The same with `compile=True`, whose smaller loss buffers let a larger micro-batch fit.
        CompileWithMicroBatch,
        /// Smaller `batch_size` alone.
        MicroBatchOnly,
        CompileOn,
        ExpandableSegments,
        ShorterBlock,
        FewerLayers,
        Narrower,
        /// float32 → bfloat16 (or float16 where the card has no bf16).
        HalfPrecision,
        /// bfloat16 → float16 on cards without native bf16 (speed; memory unchanged).
        Float16OnOldCard,
        DropoutOff,
        /// train.py patch: evaluate at a smaller batch.
        SmallerEvalBatch,
        /// model.py patch: checkpoint every block.
        ActivationCheckpointing,
        /// model.py patch: chunked cross-entropy.
        ChunkedLoss,
        /// Close what else uses the card.
        FreeTheCard,
        /// Listed with its true sign: compile=False raises steady-state memory.
        CompileOff,
        /// Listed: `eval_iters` does not change the peak.
        EvalItersNoEffect,
        /// Twice the GPUs under DDP: faster, but every GPU still holds the whole run (and DDP's
        /// buckets), so it is listed with its true memory effect.
        AddGpus,
        /// ZeRO-1 (DDP only): AdamW's state sharded over the ranks; a change to train.py.
        ShardOptimizer,
        /// One GPU started by torchrun: `python train.py` trains the same without DDP's buckets.
        PythonNotTorchrun,
    }
}

impl FixKind {
    pub const fn id(self) -> &'static str {
        match self {
            FixKind::MicroBatchKeepEffective => "micro_batch_keep_effective",
            FixKind::ExpandableWithMicroBatch => "expandable_with_micro_batch",
            FixKind::CompileWithMicroBatch => "compile_with_micro_batch",
            FixKind::MicroBatchOnly => "micro_batch_only",
            FixKind::CompileOn => "compile_on",
            FixKind::ExpandableSegments => "expandable_segments",
            FixKind::ShorterBlock => "shorter_block",
            FixKind::FewerLayers => "fewer_layers",
            FixKind::Narrower => "narrower",
            FixKind::HalfPrecision => "half_precision",
            FixKind::Float16OnOldCard => "float16_on_old_card",
            FixKind::DropoutOff => "dropout_off",
            FixKind::SmallerEvalBatch => "smaller_eval_batch",
            FixKind::ActivationCheckpointing => "activation_checkpointing",
            FixKind::ChunkedLoss => "chunked_loss",
            FixKind::FreeTheCard => "free_the_card",
            FixKind::CompileOff => "compile_off",
            FixKind::EvalItersNoEffect => "eval_iters_no_effect",
            FixKind::AddGpus => "add_gpus",
            FixKind::ShardOptimizer => "shard_optimizer",
            FixKind::PythonNotTorchrun => "python_not_torchrun",
        }
    }
}

/// One evaluated change.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub kind: FixKind,
    /// The config with the change applied.
    pub config: TrainConfig,
    /// Code patches it needs (none for config-only fixes).
    pub patches: Patches,
    /// Memory other processes may keep on the card after the change.
    pub other_bytes: u128,
    pub peak_bytes: u128,
    /// Old peak − new peak: negative when memory grows.
    pub saving_bytes: i128,
    pub verdict: Verdict,
    pub effective_batch: u64,
    pub tokens_per_iter: u64,
    /// Whether `batch_size × gradient_accumulation_steps` stayed exactly the same.
    pub effective_batch_kept: bool,
    /// Time per iteration relative to the current config.
    pub iter_time_ratio: f64,
    pub impact: Impact,
    /// Parameters (as train.py prints them) after the change.
    pub params_reported: u64,
}

impl Fix {
    pub fn fits(&self) -> bool {
        self.verdict.fits
    }

    /// `(key, value)` of every nanoGPT setting this fix changes, as Python literals.
    pub fn changed_keys(&self, from: &TrainConfig) -> Vec<(&'static str, String)> {
        crate::config::FIELDS_JSON_ORDER
            .iter()
            .filter(|k| **k != "allocator")
            .filter_map(|k| {
                let (a, b) = (from.get(k)?, self.config.get(k)?);
                (a != b).then(|| (*k, b.to_string()))
            })
            .collect()
    }

    /// The environment variable this fix sets, if any.
    pub fn env(&self, from: &TrainConfig) -> Option<(&'static str, &'static str)> {
        (self.config.allocator == Allocator::ExpandableSegments
            && from.allocator != Allocator::ExpandableSegments)
            .then_some(("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"))
    }
}

/// The ranked fixes for a run on a card.
#[derive(Clone, Debug, PartialEq)]
pub struct FixReport {
    pub current: Verdict,
    pub current_peak: u128,
    pub current_seconds: f64,
    /// Ranked, best first.
    pub fixes: Vec<Fix>,
    /// The largest `batch_size` that fits on this card, all else equal (None if not even 1).
    pub largest_batch_that_fits: Option<u32>,
}

/// Evaluates one changed config.
struct Evaluator<'a> {
    base: &'a TrainConfig,
    budget: &'a Budget,
    mfu: f64,
    base_peak: u128,
    base_seconds: f64,
    /// Check fits with the allocator simulation (exact, ~ms each) rather than the closed form
    /// with its fragmentation allowance (µs each). Searches always run on the closed form and
    /// are then corrected step by step with the simulation.
    exact: bool,
}

/// How far the simulation may move a closed-form search result.
const MAX_CORRECTION_STEPS: u32 = 8;

impl Evaluator<'_> {
    fn estimate(&self, cfg: &TrainConfig, patches: Patches) -> Option<Estimate> {
        estimate_patched(cfg, &self.budget.gpu, patches).ok()
    }

    fn budget_with(&self, other: u128) -> Budget {
        Budget {
            other_bytes: other,
            ..self.budget.clone()
        }
    }

    /// The closed form's answer (fast).
    fn fits(&self, cfg: &TrainConfig, patches: Patches, other: u128) -> bool {
        let b = self.budget_with(other);
        self.estimate(cfg, patches)
            .is_some_and(|e| verdict(&e, &b).fits)
    }

    /// The simulation's answer.
    fn fits_exactly(&self, cfg: &TrainConfig) -> bool {
        fits_on_card(cfg, self.budget)
    }

    fn fix(
        &self,
        kind: FixKind,
        cfg: TrainConfig,
        patches: Patches,
        other: u128,
        impact: Impact,
    ) -> Option<Fix> {
        let budget = self.budget_with(other);
        let (est, v, peak) = if self.exact {
            let a = analyze_patched(&cfg, &budget, patches).ok()?;
            let peak = a.peak_bytes();
            (a.estimate, a.run.verdict, peak)
        } else {
            let est = self.estimate(&cfg, patches)?;
            let (v, peak) = (verdict(&est, &budget), est.peak_bytes());
            (est, v, peak)
        };
        let seconds = iter_seconds(&cfg, est.params.reported, &budget.gpu, patches, self.mfu);
        let ratio = seconds / self.base_seconds;
        // "only slower" that turns out not to be slower (compile on) costs nothing
        let impact = if impact == Impact::Slower && ratio <= 1.0 {
            Impact::Nothing
        } else {
            impact
        };
        Some(Fix {
            kind,
            patches,
            other_bytes: other,
            peak_bytes: peak,
            saving_bytes: self.base_peak as i128 - peak as i128,
            verdict: v,
            effective_batch: cfg.effective_batch(),
            tokens_per_iter: cfg.tokens_per_iter(),
            effective_batch_kept: cfg.effective_batch() == self.base.effective_batch(),
            iter_time_ratio: ratio,
            impact,
            params_reported: est.params.reported,
            config: cfg,
        })
    }

    /// The largest `x` in `lo..=hi` for which `make(x)` fits (memory grows with `x`).
    fn largest(&self, lo: u32, hi: u32, make: impl Fn(u32) -> TrainConfig) -> Option<u32> {
        if hi < lo || !self.fits(&make(lo), Patches::default(), self.budget.other_bytes) {
            return None;
        }
        let (mut ok, mut bad) = (lo, hi + 1);
        while bad - ok > 1 {
            let mid = ok + (bad - ok) / 2;
            if self.fits(&make(mid), Patches::default(), self.budget.other_bytes) {
                ok = mid;
            } else {
                bad = mid;
            }
        }
        if !self.exact {
            return Some(ok);
        }
        // the closed form's fragmentation allowance is an average: let the simulation decide,
        // within MAX_CORRECTION_STEPS of it, by bisection (a few replays, not one per step)
        let fits = |x: u32| self.fits_exactly(&make(x));
        let (mut good, mut bad) = if fits(ok) {
            let top = hi.min(ok.saturating_add(MAX_CORRECTION_STEPS));
            if top == ok || fits(top) {
                return Some(top);
            }
            (ok, top)
        } else {
            if ok == lo || !fits(lo) {
                return None;
            }
            let bottom = lo.max(ok.saturating_sub(MAX_CORRECTION_STEPS));
            if fits(bottom) {
                (bottom, ok)
            } else {
                (lo, bottom)
            }
        };
        // fits(good), !fits(bad)
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            if fits(mid) {
                good = mid;
            } else {
                bad = mid;
            }
        }
        Some(good)
    }
}

/// Search bound for "largest batch_size that fits".
const MAX_SEARCH_BATCH: u32 = 4096;

/// `steps` accumulation steps as train.py can run them on `world` processes: it divides the
/// steps among them, so a multiple of `world` (rounded up), within the config's bound.
fn accumulation_steps(steps: u64, world: u64) -> u32 {
    const MAX_STEPS: u64 = 1_000_000;
    (steps.div_ceil(world) * world).min(MAX_STEPS / world * world) as u32
}

/// Ranks every fix for `cfg` on `budget`'s card. `mfu` feeds the speed model. With `exact`,
/// every listed fix is checked with the allocator simulation (tens of ms); without, with the
/// closed form (under a millisecond).
pub fn rank_fixes(cfg: &TrainConfig, budget: &Budget, mfu: f64, exact: bool) -> Option<FixReport> {
    if exact {
        let a = analyze(cfg, budget).ok()?;
        return rank_fixes_of(&a, budget, mfu);
    }
    rank(cfg, budget, mfu, None)
}

/// [`rank_fixes`] (exact) for a run already analysed on `budget`'s card: the base is not
/// replayed again.
pub fn rank_fixes_of(base: &Analysis, budget: &Budget, mfu: f64) -> Option<FixReport> {
    rank(&base.estimate.config, budget, mfu, Some(base))
}

fn rank(
    cfg: &TrainConfig,
    budget: &Budget,
    mfu: f64,
    analysed: Option<&Analysis>,
) -> Option<FixReport> {
    let exact = analysed.is_some();
    let (base_est, current, base_peak) = if let Some(a) = analysed {
        (a.estimate.clone(), a.run.verdict, a.peak_bytes())
    } else {
        let est = estimate_patched(cfg, &budget.gpu, Patches::default()).ok()?;
        let (v, peak) = (verdict(&est, budget), est.peak_bytes());
        (est, v, peak)
    };
    let base_seconds = iter_seconds(
        cfg,
        base_est.params.reported,
        &budget.gpu,
        Patches::default(),
        mfu,
    );
    let ev = Evaluator {
        base: cfg,
        budget,
        mfu,
        base_peak,
        base_seconds,
        exact,
    };
    let other = budget.other_bytes;
    let none = Patches::default();
    let mut fixes: Vec<Fix> = Vec::new();
    let mut push = |f: Option<Fix>| fixes.extend(f);

    // micro-batch: the largest smaller batch_size that fits (GA > 1 vs = 1 is what matters, so
    // the same b' serves both variants)
    let b = cfg.batch_size;
    // the micro-batch to use when `nb` is the largest that fits: a divisor of the effective
    // batch keeps it exactly; one much smaller than `nb` would cost more speed than it is worth
    let world = u64::from(cfg.world_size.max(1));
    let exact = |nb: u32| {
        let eff = cfg.effective_batch();
        let d = (1..=nb)
            .rev()
            .find(|d| {
                eff.is_multiple_of(u64::from(*d)) && (eff / u64::from(*d)).is_multiple_of(world)
            })
            .unwrap_or(1);
        if 2 * d >= nb {
            d
        } else {
            nb
        }
    };
    let with_batch = |nb: u32, keep: bool| {
        let mut c = cfg.clone();
        c.batch_size = nb;
        if keep {
            c.gradient_accumulation_steps =
                accumulation_steps(cfg.effective_batch().div_ceil(u64::from(nb)), world);
        }
        c
    };
    if b > 1 {
        if let Some(nb) = ev.largest(1, b - 1, |nb| with_batch(nb, true)) {
            let nb = exact(nb);
            push(ev.fix(
                FixKind::MicroBatchKeepEffective,
                with_batch(nb, true),
                none,
                other,
                Impact::Slower,
            ));
        } else {
            push(ev.fix(
                FixKind::MicroBatchKeepEffective,
                with_batch(1, true),
                none,
                other,
                Impact::Slower,
            ));
        }
        if let Some(nb) = ev.largest(1, b - 1, |nb| with_batch(nb, false)) {
            push(ev.fix(
                FixKind::MicroBatchOnly,
                with_batch(nb, false),
                none,
                other,
                Impact::GradientNoise,
            ));
        }
        if cfg.allocator == Allocator::Default {
            let exp = |nb: u32| TrainConfig {
                allocator: Allocator::ExpandableSegments,
                ..with_batch(nb, true)
            };
            if let Some(nb) = ev.largest(1, b - 1, exp) {
                let nb = exact(nb);
                push(ev.fix(
                    FixKind::ExpandableWithMicroBatch,
                    exp(nb),
                    none,
                    other,
                    Impact::Slower,
                ));
            }
        }
        if !cfg.compile {
            let comp = |nb: u32| TrainConfig {
                compile: true,
                ..with_batch(nb, true)
            };
            if let Some(nb) = ev.largest(1, b - 1, comp) {
                let nb = exact(nb);
                push(ev.fix(
                    FixKind::CompileWithMicroBatch,
                    comp(nb),
                    none,
                    other,
                    Impact::Slower,
                ));
            }
        }
    }

    // torchrun on one GPU wraps the model in DDP for nothing: no other rank to all-reduce with
    if cfg.torchrun && !cfg.is_multi_gpu() {
        let c = TrainConfig {
            torchrun: false,
            ..cfg.clone()
        };
        push(ev.fix(FixKind::PythonNotTorchrun, c, none, other, Impact::Nothing));
    }

    if cfg.allocator == Allocator::Default {
        let c = TrainConfig {
            allocator: Allocator::ExpandableSegments,
            ..cfg.clone()
        };
        push(ev.fix(FixKind::ExpandableSegments, c, none, other, Impact::Nothing));
    }

    if !cfg.compile {
        let c = TrainConfig {
            compile: true,
            ..cfg.clone()
        };
        push(ev.fix(FixKind::CompileOn, c, none, other, Impact::Nothing));
    } else {
        let c = TrainConfig {
            compile: false,
            ..cfg.clone()
        };
        push(ev.fix(FixKind::CompileOff, c, none, other, Impact::NotAFix));
    }

    // shorter context: the largest multiple of 64 below block_size that fits
    if cfg.block_size > 64 {
        let blocks = |k: u32| TrainConfig {
            block_size: k * 64,
            ..cfg.clone()
        };
        if let Some(k) = ev.largest(1, (cfg.block_size - 1) / 64, blocks) {
            push(ev.fix(
                FixKind::ShorterBlock,
                blocks(k),
                none,
                other,
                Impact::ContextLength,
            ));
        }
    }

    if cfg.n_layer > 1 {
        let layers = |l: u32| TrainConfig {
            n_layer: l,
            ..cfg.clone()
        };
        if let Some(l) = ev.largest(1, cfg.n_layer - 1, layers) {
            push(ev.fix(
                FixKind::FewerLayers,
                layers(l),
                none,
                other,
                Impact::ModelCapacity,
            ));
        }
    }

    // narrower: n_embd in steps of the head count times 8 (keeps head size a multiple of 8)
    let step = cfg.n_head * 8;
    if cfg.n_embd > step {
        let widths = |k: u32| TrainConfig {
            n_embd: k * step,
            ..cfg.clone()
        };
        if let Some(k) = ev.largest(1, (cfg.n_embd - 1) / step, widths) {
            push(ev.fix(
                FixKind::Narrower,
                widths(k),
                none,
                other,
                Impact::ModelCapacity,
            ));
        }
    }

    match cfg.dtype {
        Dtype::Float32 => {
            let dtype = if budget.gpu.bf16 {
                Dtype::Bfloat16
            } else {
                Dtype::Float16
            };
            let c = TrainConfig {
                dtype,
                ..cfg.clone()
            };
            push(ev.fix(FixKind::HalfPrecision, c, none, other, Impact::Nothing));
        }
        Dtype::Bfloat16 if !budget.gpu.bf16 => {
            let c = TrainConfig {
                dtype: Dtype::Float16,
                ..cfg.clone()
            };
            push(ev.fix(FixKind::Float16OnOldCard, c, none, other, Impact::Nothing));
        }
        _ => {}
    }

    if cfg.dropout > 0.0 {
        let c = TrainConfig {
            dropout: 0.0,
            ..cfg.clone()
        };
        push(ev.fix(FixKind::DropoutOff, c, none, other, Impact::Regularization));
    }

    // evaluating at a smaller batch only helps when estimate_loss() holds the peak
    if matches!(base_est.peak().phase, Phase::Eval | Phase::EvalAfterStep) && b > 1 {
        let train_peak = base_est.train_peak().total();
        let mut eb = b / 2;
        loop {
            let p = Patches {
                eval_batch_size: Some(eb),
                ..none
            };
            let below = ev
                .estimate(cfg, p)
                .is_some_and(|e| e.eval_peak().total() <= train_peak);
            if below || eb == 1 {
                push(ev.fix(
                    FixKind::SmallerEvalBatch,
                    cfg.clone(),
                    p,
                    other,
                    Impact::CodeChange,
                ));
                break;
            }
            eb /= 2;
        }
    }

    let ck = Patches {
        checkpoint_blocks: true,
        ..none
    };
    push(ev.fix(
        FixKind::ActivationCheckpointing,
        cfg.clone(),
        ck,
        other,
        Impact::CodeChange,
    ));
    let chunked = Patches {
        chunked_loss: true,
        ..none
    };
    push(ev.fix(
        FixKind::ChunkedLoss,
        cfg.clone(),
        chunked,
        other,
        Impact::CodeChange,
    ));

    if other > 0 {
        push(ev.fix(FixKind::FreeTheCard, cfg.clone(), none, 0, Impact::Nothing));
    }

    // the folk remedy that does nothing: fewer eval iterations
    let c = TrainConfig {
        eval_iters: (cfg.eval_iters / 4).max(1),
        ..cfg.clone()
    };
    push(ev.fix(FixKind::EvalItersNoEffect, c, none, other, Impact::NotAFix));

    // more GPUs: always listed, so nobody buys one for an out-of-memory it cannot fix
    if cfg.world_size < crate::config::MAX_WORLD_SIZE {
        let w = (cfg.world_size * 2).min(crate::config::MAX_WORLD_SIZE);
        let c = TrainConfig {
            world_size: w,
            gradient_accumulation_steps: accumulation_steps(
                cfg.gradient_accumulation_steps.into(),
                w.into(),
            ),
            ..cfg.clone()
        };
        if let Some(mut f) = ev.fix(FixKind::AddGpus, c, none, other, Impact::MoreGpus) {
            if f.saving_bytes <= 0 {
                f.impact = Impact::NotAFix;
            }
            fixes.push(f);
        }
    }
    if cfg.is_multi_gpu() {
        let p = Patches {
            shard_optimizer: true,
            ..none
        };
        fixes.extend(ev.fix(
            FixKind::ShardOptimizer,
            cfg.clone(),
            p,
            other,
            Impact::CodeChange,
        ));
    }

    // drop changes that do nothing for memory unless they are there to be seen
    // (an added GPU either saves memory or is marked not a fix: both stay listed)
    fixes.retain(|f| {
        f.impact == Impact::NotAFix
            || f.kind == FixKind::Float16OnOldCard
            || f.saving_bytes > 0
            || f.other_bytes < other
    });
    drop_dominated_combinations(&mut fixes);
    // a change that neither makes the run fit nor lowers its peak by 1 % is no fix for this
    // out-of-memory: listed with the others that are not, so the ranked list holds real ones
    if !current.fits {
        for f in &mut fixes {
            if !f.fits() && f.saving_bytes * 100 < base_peak as i128 {
                f.impact = Impact::NotAFix;
            }
        }
    }
    fixes.sort_by(|a, b| {
        rank_key(a, cfg)
            .partial_cmp(&rank_key(b, cfg))
            .unwrap_or(std::cmp::Ordering::Equal)
    });

    let largest = ev.largest(1, MAX_SEARCH_BATCH, |nb| TrainConfig {
        batch_size: nb,
        ..cfg.clone()
    });
    Some(FixReport {
        current,
        current_peak: base_peak,
        current_seconds: base_seconds,
        fixes,
        largest_batch_that_fits: largest,
    })
}

/// A combination ("expandable_segments and micro-batch 5 × 64") is worth a row only where it
/// buys what neither part does alone: not when its lever fits on its own (then the smaller
/// micro-batch only costs speed), nor when the plain micro-batch fix already fits at that
/// micro-batch or a larger one (then the lever adds nothing).
fn drop_dominated_combinations(fixes: &mut Vec<Fix>) {
    let fitting = |kind: FixKind, fixes: &[Fix]| {
        fixes
            .iter()
            .find(|f| f.kind == kind && f.fits())
            .map(|f| f.config.batch_size)
    };
    let plain = fitting(FixKind::MicroBatchKeepEffective, fixes);
    let lever_alone = |kind: FixKind| match kind {
        FixKind::ExpandableWithMicroBatch => Some(FixKind::ExpandableSegments),
        FixKind::CompileWithMicroBatch => Some(FixKind::CompileOn),
        _ => None,
    };
    let dominated: Vec<bool> = fixes
        .iter()
        .map(|f| {
            lever_alone(f.kind).is_some_and(|alone| {
                fitting(alone, fixes).is_some() || plain.is_some_and(|nb| f.config.batch_size <= nb)
            })
        })
        .collect();
    let mut keep = dominated.into_iter().map(|d| !d);
    fixes.retain(|_| keep.next().unwrap_or(true));
}

/// Sort key: fits first (a tight fit counts, after what fits with room), then what it changes
/// in training, then speed, then the simpler change (fewer things to edit), then headroom.
fn rank_key(f: &Fix, base: &TrainConfig) -> (u8, u8, u8, f64, usize, i128) {
    let not_a_fix = u8::from(f.impact == Impact::NotAFix);
    let edits = crate::config::FIELDS_JSON_ORDER
        .iter()
        .filter(|k| f.config.get(k) != base.get(k))
        .count()
        + usize::from(f.patches != Patches::default());
    (
        not_a_fix * 2 + u8::from(!f.verdict.fits),
        f.impact as u8,
        u8::from(f.verdict.risk == Risk::Tight),
        (f.iter_time_ratio * 1000.0).round(),
        edits,
        -f.verdict.headroom_bytes,
    )
}

/// What a train.py fix's words take (`freed`: what other processes hold on the card, which
/// freeing it gives back).
pub fn words(f: &Fix, from: &TrainConfig, freed: u128) -> FixWords {
    use crate::programs::fix_view::{Note, Value};
    let c = &f.config;
    let int = |x: u32| Value::int(x);
    let not_kept = !f.effective_batch_kept
        && matches!(f.impact, Impact::Nothing | Impact::Slower)
        && f.effective_batch != from.effective_batch();
    FixWords {
        kind: f.kind.id(),
        values: vec![
            ("batch", int(c.batch_size)),
            ("accum", int(c.gradient_accumulation_steps)),
            ("old_batch", int(from.batch_size)),
            ("old_accum", int(from.gradient_accumulation_steps)),
            ("block", int(c.block_size)),
            ("old_block", int(from.block_size)),
            ("layers", int(c.n_layer)),
            ("old_layers", int(from.n_layer)),
            ("embd", int(c.n_embd)),
            ("old_embd", int(from.n_embd)),
            ("dtype", Value::Text(c.dtype.as_str().to_string())),
            (
                "eval_batch",
                Value::Text(
                    f.patches
                        .eval_batch_size
                        .map(|b| b.to_string())
                        .unwrap_or_default(),
                ),
            ),
            ("eval_iters", int(c.eval_iters)),
            ("eff", Value::Grouped(f.effective_batch)),
            ("old_eff", Value::Grouped(from.effective_batch())),
            ("params", Value::Params(f.params_reported)),
            ("freed", Value::Gib(freed)),
            ("world", int(c.world_size)),
            ("old_world", int(from.world_size)),
        ],
        notes: not_kept
            .then_some(Note::EffectiveBatchNotKept)
            .into_iter()
            .collect(),
    }
}

/// train.py's fixes as every front-end shows them, each with what to paste.
pub fn view(report: &FixReport, from: &TrainConfig, freed: u128) -> FixesView {
    use crate::programs::fix_view::{Fact, FixView, Value};
    use crate::programs::seam::Paste;
    let fixes = report
        .fixes
        .iter()
        .map(|f| {
            let c = &f.config;
            let mut pastes = Vec::new();
            let config = crate::snippet::changes(c, from);
            if !config.is_empty() {
                pastes.push((Paste::Config, config));
            }
            // the whole line to run, as the other programs' fixes have it (the config lines
            // above are the change alone); none where the fix is a code change or freeing the
            // card, which no flag says
            let cli = crate::snippet::command_line(c, None);
            let by_flags = f.patches == Patches::default() && f.other_bytes >= freed;
            if by_flags && cli != "python train.py" {
                pastes.push((Paste::Command, cli));
            }
            if let Some((k, v)) = f.env(from) {
                pastes.push((Paste::Env, format!("export {k}={v}")));
            }
            if let Some(code) = crate::snippet::patch_code(&f.patches) {
                pastes.push((Paste::Patch, code.to_string()));
            }
            FixView {
                words: words(f, from, freed),
                peak_bytes: f.peak_bytes,
                saving_bytes: f.saving_bytes,
                fits: f.fits(),
                impact: f.impact,
                facts: vec![
                    Fact::Batch(from.effective_batch(), f.effective_batch),
                    Fact::TokensPerIter(f.tokens_per_iter),
                    Fact::TimeRatio(f.iter_time_ratio),
                ],
                pastes,
            }
        })
        .collect();
    FixesView {
        fits_now: report.current.fits,
        // train.py keeps gradient_accumulation_steps: a smaller micro-batch is fewer sequences
        // per iteration (the line says how many)
        largest: report.largest_batch_that_fits.map(|n| {
            let with_n = TrainConfig {
                batch_size: n,
                ..from.clone()
            };
            vec![
                ("n", Value::int(n)),
                ("accum", Value::int(from.gradient_accumulation_steps)),
                ("eff", Value::Grouped(with_n.effective_batch())),
                ("old_eff", Value::Grouped(from.effective_batch())),
            ]
        }),
        fixes,
        seconds_now: Some(report.current_seconds),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::find;

    #[test]
    fn what_neither_fits_nor_lowers_the_peak_is_not_ranked_as_a_fix() {
        // GPT-2 124M at batch 32 on a 3060: expandable segments alone cannot make it fit
        let cfg = TrainConfig {
            batch_size: 32,
            ..TrainConfig::default()
        };
        let budget = crate::gpu::Budget::for_gpu(find("rtx3060").unwrap());
        let r = rank_fixes(&cfg, &budget, 0.35, true).unwrap();
        assert!(!r.current.fits);
        for f in &r.fixes {
            if !f.fits() && f.saving_bytes * 100 < r.current_peak as i128 {
                assert_eq!(f.impact, Impact::NotAFix, "{:?}", f.kind);
            }
        }
        let first_not = r.fixes.iter().position(|f| f.impact == Impact::NotAFix);
        assert!(first_not.is_some_and(|i| r.fixes[i..].iter().all(|f| f.impact == Impact::NotAFix)));
    }

    fn report(cfg: &TrainConfig, gpu: &str) -> FixReport {
        rank_fixes(
            cfg,
            &Budget::for_gpu(find(gpu).unwrap()),
            crate::speed::DEFAULT_MFU,
            true,
        )
        .unwrap()
    }

    #[test]
    fn compile_off_is_never_recommended_and_shows_its_cost() {
        let cfg = TrainConfig {
            batch_size: 16,
            gradient_accumulation_steps: 32,
            ..TrainConfig::default()
        };
        let r = report(&cfg, "rtx3060");
        let off = r
            .fixes
            .iter()
            .find(|f| f.kind == FixKind::CompileOff)
            .unwrap();
        assert!(off.saving_bytes < 0, "compile=False raises memory");
        assert_eq!(off.impact, Impact::NotAFix);
        assert_eq!(r.fixes.last().map(|f| f.impact), Some(Impact::NotAFix));
        assert_ne!(r.fixes[0].kind, FixKind::CompileOff);
    }

    #[test]
    fn keeps_effective_batch_first_when_it_fits() {
        let cfg = TrainConfig {
            batch_size: 16,
            gradient_accumulation_steps: 32,
            compile: false,
            ..TrainConfig::default()
        };
        let r = report(&cfg, "rtx3060");
        assert!(!r.current.fits);
        let top = &r.fixes[0];
        assert!(top.fits(), "{top:?}");
        // compile=True alone does not fit at batch 16 (measured: cap12_s_comp_b16 ran out), but
        // with a smaller micro-batch it fits and is faster than now: nothing lost
        assert_eq!(top.kind, FixKind::CompileWithMicroBatch);
        assert_eq!(top.impact, Impact::Nothing);
        assert_eq!(top.effective_batch, 512);
        assert!(!r
            .fixes
            .iter()
            .find(|f| f.kind == FixKind::CompileOn)
            .unwrap()
            .fits());
        let mb = r
            .fixes
            .iter()
            .find(|f| f.kind == FixKind::MicroBatchKeepEffective)
            .unwrap();
        assert!(mb.fits());
        assert_eq!(mb.effective_batch, 512);
        assert!(mb.config.batch_size < 16);
        assert!(mb.iter_time_ratio >= 1.0);
    }

    #[test]
    fn ranking_is_fast_enough_for_every_keystroke() {
        let cfg = TrainConfig {
            batch_size: 16,
            gradient_accumulation_steps: 32,
            compile: false,
            ..TrainConfig::default()
        };
        let budget = Budget::for_gpu(find("rtx3060").unwrap());
        let start = std::time::Instant::now();
        let n = 20;
        for _ in 0..n {
            rank_fixes(&cfg, &budget, 0.35, false).unwrap();
        }
        let per = start.elapsed() / n;
        eprintln!("rank_fixes: {per:?} per call");
    }

    #[test]
    fn eval_iters_never_saves_memory() {
        let r = report(
            &TrainConfig {
                batch_size: 64,
                ..TrainConfig::default()
            },
            "rtx3060",
        );
        let e = r
            .fixes
            .iter()
            .find(|f| f.kind == FixKind::EvalItersNoEffect)
            .unwrap();
        assert_eq!(e.saving_bytes, 0);
    }

    #[test]
    fn every_fix_is_consistent_with_a_direct_estimate() {
        let cfg = TrainConfig {
            batch_size: 32,
            dropout: 0.1,
            dtype: Dtype::Float32,
            ..TrainConfig::default()
        };
        let budget = Budget::for_gpu(find("rtx4090").unwrap());
        let r = rank_fixes(&cfg, &budget, 0.35, false).unwrap();
        for f in &r.fixes {
            let e = estimate_patched(&f.config, &budget.gpu, f.patches).unwrap();
            assert_eq!(e.peak_bytes(), f.peak_bytes, "{:?}", f.kind);
        }
        let largest = r.largest_batch_that_fits.unwrap();
        let fits = |b| {
            let c = TrainConfig {
                batch_size: b,
                ..cfg.clone()
            };
            verdict(&crate::estimate(&c, &budget.gpu).unwrap(), &budget).fits
        };
        assert!(fits(largest) && !fits(largest + 1));
    }
}
