//! How fixes are ranked, for every program: first those that make the run fit, then by what they
//! cost training — nothing, only slower, a code change, noisier gradients, less regularisation, a
//! shorter context, a smaller model — never the other way round.

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
    /// Replays `config` (by `analyze`) on `budget`'s card with `other` bytes held by others.
    pub fn evaluate(
        kind: K,
        impact: Impact,
        config: C,
        other: u128,
        budget: &crate::gpu::Budget,
        base_peak: u128,
        analyze: impl Fn(&C, &crate::gpu::Budget) -> Option<(u128, crate::verdict::Verdict)>,
    ) -> Option<Self> {
        let b = crate::gpu::Budget {
            other_bytes: other,
            ..budget.clone()
        };
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
/// search varies only adds memory, so `fits` is monotone over them.
pub fn largest<T: Copy>(candidates: &[T], fits: impl Fn(T) -> bool) -> Option<T> {
    // everything below `lo` fits, everything from `hi` on does not
    let (mut lo, mut hi) = (0usize, candidates.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if fits(candidates[mid]) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo.checked_sub(1).map(|i| candidates[i])
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
