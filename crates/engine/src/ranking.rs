//! How fixes are ranked, for every program: first those that make the run fit, then by what they
//! cost training — nothing, only slower, a code change, noisier gradients, less regularisation, a
//! shorter context, a smaller model — never the other way round.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// What a fix changes in training, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Impact {
    /// Same model, same effective batch, same tokens, same speed or faster.
    Nothing,
    /// Same optimisation, only slower (more micro-steps).
    Slower,
    /// Same optimisation, but the program's code must be patched.
    CodeChange,
    /// Training unchanged; an evaluation runs less often or not at all.
    Evaluation,
    /// A smaller effective batch: noisier gradients.
    GradientNoise,
    /// Less dropout.
    Regularization,
    /// A shorter context.
    ContextLength,
    /// A smaller model.
    ModelCapacity,
    /// Not a fix: raises memory or changes nothing (shown so nobody reaches for it).
    NotAFix,
    /// More GPUs: a purchase, not a change to training (ranked after everything that fits).
    MoreGpus,
}

impl Impact {
    /// Every impact, best first (declaration order).
    pub const ALL: [Impact; 10] = [
        Impact::Nothing,
        Impact::Slower,
        Impact::CodeChange,
        Impact::Evaluation,
        Impact::GradientNoise,
        Impact::Regularization,
        Impact::ContextLength,
        Impact::ModelCapacity,
        Impact::NotAFix,
        Impact::MoreGpus,
    ];
    /// Each impact's id, in [`Impact::ALL`] order.
    pub const IDS: [&'static str; 10] = crate::ids!(Impact::ALL);

    pub const fn id(self) -> &'static str {
        match self {
            Impact::Nothing => "nothing",
            Impact::Slower => "slower",
            Impact::CodeChange => "code_change",
            Impact::Evaluation => "evaluation",
            Impact::GradientNoise => "gradient_noise",
            Impact::Regularization => "regularization",
            Impact::ContextLength => "context_length",
            Impact::ModelCapacity => "model_capacity",
            Impact::NotAFix => "not_a_fix",
            Impact::MoreGpus => "more_gpus",
        }
    }
}

/// One fix evaluated for any program: its kind, what it costs training, the changed config and
/// what its replay says.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranked<C, K> {
    pub kind: K,
    pub impact: Impact,
    /// The config with the change applied.
    pub config: C,
    /// Memory other processes may keep on the card after the change.
    pub other_bytes: u128,
    pub peak_bytes: u128,
    /// Old peak − new peak: negative when memory grows.
    pub saving_bytes: i128,
    pub verdict: crate::verdict::Verdict,
}

impl<C, K> Ranked<C, K> {
    /// Replays `config` (by `analyze`) on `budget`'s card with `other` bytes held by others,
    /// after a [`Pause`].
    #[allow(clippy::too_many_arguments)]
    pub async fn evaluate(
        kind: K,
        impact: Impact,
        config: C,
        other: u128,
        budget: &crate::gpu::Budget,
        base_peak: u128,
        pause: &dyn Pause,
        analyze: impl Fn(&C, &crate::gpu::Budget) -> Option<(u128, crate::verdict::Verdict)>,
    ) -> Option<Self> {
        let b = crate::gpu::Budget {
            other_bytes: other,
            ..budget.clone()
        };
        pause.pause().await;
        let (peak, verdict) = analyze(&config, &b)?;
        Some(Ranked {
            kind,
            impact,
            config,
            other_bytes: other,
            peak_bytes: peak,
            saving_bytes: base_peak as i128 - peak as i128,
            verdict,
        })
    }
}

/// Best first: fits with room, then tight, then not; then what it costs training; then the
/// larger saving.
pub fn sort<C, K>(fixes: &mut [Ranked<C, K>]) {
    use crate::verdict::Risk;
    let fit_rank = |r: Risk| match r {
        Risk::Fits => 0,
        Risk::Tight => 1,
        Risk::Oom => 2,
    };
    fixes.sort_by_key(|f| (fit_rank(f.verdict.risk), f.impact, -f.saving_bytes));
}

/// The last of `candidates` (ascending) for which `fits` holds, by bisection: every size a fix
/// search varies only adds memory, so `fits` is monotone over them. Each `fits` is a replay:
/// [`Pause`]d before it (`fits` a trait object: one future type for every search, so the
/// page's module holds this body once).
pub async fn largest<T: Copy>(
    candidates: &[T],
    pause: &dyn Pause,
    fits: &dyn Fn(T) -> bool,
) -> Option<T> {
    // everything below `lo` fits, everything from `hi` on does not
    let (mut lo, mut hi) = (0usize, candidates.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        pause.pause().await;
        if fits(candidates[mid]) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo.checked_sub(1).map(|i| candidates[i])
}

/// Where a fix ranking may give its thread back: before each replay (a few to a few hundred
/// milliseconds each), so a page can rank in slices between frames instead of freezing for
/// the whole ranking. The command line and the npm package never pause ([`Unpaused`]).
pub trait Pause {
    fn pause(&self) -> Yield;
}

/// A [`Pause`]'s answer, awaited: go on at once, or hand the thread back once (pending on the
/// first poll, ready on the next).
#[derive(Debug)]
pub struct Yield {
    hand_back: bool,
}

impl Yield {
    pub const fn go_on() -> Yield {
        Yield { hand_back: false }
    }

    pub const fn hand_back() -> Yield {
        Yield { hand_back: true }
    }
}

impl Future for Yield {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if std::mem::take(&mut self.hand_back) {
            // no waker is kept: whoever polls a ranking polls it again (see [`to_the_end`] and
            // the page's driver), which is all a yield needs
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// The pause of a caller with nothing else to do: never hands the thread back.
pub struct Unpaused;

impl Pause for Unpaused {
    fn pause(&self) -> Yield {
        Yield::go_on()
    }
}

/// Runs a ranking to its end on this thread: what every caller but the page does. A
/// [`Yield`] that hands back is polled again at once (no executor is needed: nothing in a
/// ranking waits for anything but its own next step).
pub fn to_the_end<T>(ranking: impl Future<Output = T>) -> T {
    let mut ranking = std::pin::pin!(ranking);
    let mut cx = Context::from_waker(std::task::Waker::noop());
    loop {
        if let Poll::Ready(v) = ranking.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// Declares a program's fix-kind enum with `ALL` (every kind, in declaration order) and `IDS`
/// (each kind's `id()`, a `const fn` the program writes, in that order): `kind as usize` indexes
/// both, and the language files key each kind's texts by its id.
#[macro_export]
macro_rules! fix_kinds {
    ($(#[$meta:meta])* $vis:vis enum $kind:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        $vis enum $kind {
            $($(#[$vmeta])* $variant),+
        }

        impl $kind {
            /// Every kind, in declaration order.
            pub const ALL: [$kind; [$(stringify!($variant)),+].len()] = [$($kind::$variant),+];
            /// Each kind's id, in [`Self::ALL`] order: the JSON's `kind`, and the key of the
            /// kind's texts in the language files.
            pub const IDS: [&'static str; $kind::ALL.len()] = $crate::ids!($kind::ALL);
        }
    };
}
