//! # vramfit's estimator
//!
//! How much GPU memory a training program needs, where it goes, and whether it fits a card —
//! karpathy/nanoGPT's `train.py`, karpathy/nanochat's `scripts/base_train.py` and
//! `scripts/chat_sft.py`, and karpathy/build-nanogpt's `train_gpt2.py`. Pure and deterministic,
//! with no dependencies: the CLI and the web page both call it.
//!
//! ## The pipeline
//!
//! ```text
//! input (flags, config file, launch line, URL, paste)      input::*, programs::*::config
//!   → a program's config, validated with its own names and asserts
//!   → the program's one description of its memory: an allocation sequence
//!                                                           programs::*::sequence
//!   → replayed through the caching-allocator simulation     engine::replay, engine::allocator
//!   → peaks per phase, components at the peak, the verdict on a card   engine::run
//!   → fixes: the program's knobs, each replayed, ranked in the shared order
//!                                                           programs::*::fixes, engine::ranking
//! ```
//!
//! [`programs::analyze_page`] runs it for whichever program a page state holds. nanoGPT also has
//! a closed form (`physics.rs`, held equal to its sequence by `tests/sequence_vs_closed_form.rs`),
//! fast enough for its fix searches; nanochat's searches replay the sequence itself (a few ms).
//!
//! Every term is derived from the programs' and PyTorch's source (`shared/reference/`) and pinned
//! by a test to measured runs (`data/measured/`).
//!
//! ```
//! use estimator::{estimate, gpu, TrainConfig};
//! let cfg = TrainConfig { batch_size: 8, compile: false, gradient_accumulation_steps: 2, ..TrainConfig::default() };
//! let est = estimate(&cfg, gpu::find("h100").unwrap()).unwrap();
//! // measured on an H200: 9.342 GiB (calibration run s_b8)
//! assert!((est.peak_bytes() as f64 / (1u64 << 30) as f64 - 9.342).abs() < 0.03);
//!
//! use estimator::programs::nanochat::{analyze, NanochatConfig};
//! let cfg = NanochatConfig::from_args(&["--depth=20", "--device-batch-size=1"]).unwrap();
//! let run = analyze(&cfg, &estimator::Budget::for_gpu(gpu::find("rtx3060").unwrap())).unwrap();
//! assert!(!run.verdict.fits); // the optimizer step alone needs ~12.8 GiB
//! ```

pub mod input;
pub mod programs;

/// What every program shares (its own crate, which knows no program).
pub use engine;
// The engine's modules at the paths the crate, the CLI and the page use (`estimator::gpu`, …).
pub use engine::{allocator, decimal, error, gpu, replay, terms, units, verdict};
// nanoGPT's modules at the crate root, their historical paths (`estimator::config`, …).
pub use input::{oom, paste, pyliteral, query};
pub use programs::nanogpt::{
    allocator_rounding, analysis, config, configurator, ddp, estimate, explain, fixes, params,
    physics, sequence, snippet, speed,
};

pub use analysis::{analyze, analyze_patched, Analysis};
pub use config::{Allocator, Attention, Dtype, TrainConfig, FIELDS_JSON_ORDER};
pub use error::{ConfigError, Problem};
pub use estimate::{estimate, estimate_patched, Estimate};
pub use gpu::{Budget, Gpu};
pub use params::ParamCounts;
pub use physics::{Moment, MomentBytes, Patches, Phase};
pub use programs::nanogpt::closed_verdict::verdict;
pub use pyliteral::PyValue;
pub use terms::{Component, Components, Term, Terms};
pub use verdict::{Risk, Verdict};
