//! # vramfit's estimator
//!
//! How much GPU memory karpathy/nanoGPT's `train.py` needs, where it goes, and whether it fits a
//! card. Pure and deterministic, with no dependencies: the CLI and the web page both call it.
//!
//! Every term is derived in `shared/reference/memory-physics.md` from nanoGPT's and PyTorch's
//! source and pinned by a test to a measured run (`shared/data/measured/calibration.jsonl`).
//!
//! ```
//! use estimator::{estimate, gpu, TrainConfig};
//! let cfg = TrainConfig { batch_size: 8, compile: false, gradient_accumulation_steps: 2, ..TrainConfig::default() };
//! let est = estimate(&cfg, gpu::find("h100").unwrap()).unwrap();
//! // measured on an H200: 9.342 GiB (calibration run s_b8)
//! assert!((est.peak_bytes() as f64 / (1u64 << 30) as f64 - 9.342).abs() < 0.03);
//! ```

pub mod decimal;
pub mod engine;
pub mod error;
pub mod gpu;
pub mod input;
pub mod programs;
pub mod terms;
pub mod units;

// The modules' historical paths (`estimator::config`, `crate::replay`, …), used across the crate,
// the CLI and the page.
pub use engine::{allocator, allocator_rounding, replay, verdict};
pub use input::{oom, paste, pyliteral, query};
pub use programs::nanogpt::{
    analysis, config, configurator, ddp, estimate, explain, fixes, params, physics, sequence,
    snippet, speed,
};

pub use analysis::{analyze, analyze_patched, Analysis};
pub use config::{Allocator, Attention, Dtype, TrainConfig, FIELDS_JSON_ORDER};
pub use error::{ConfigError, Problem};
pub use estimate::{estimate, estimate_patched, Estimate};
pub use gpu::{Budget, Gpu};
pub use params::ParamCounts;
pub use physics::{Moment, MomentBytes, Patches, Phase};
pub use pyliteral::PyValue;
pub use terms::{Component, Components, Term, Terms};
pub use verdict::{verdict, Risk, Verdict};
