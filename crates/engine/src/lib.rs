//! # vramfit's engine
//!
//! What every training program shares, and nothing that knows one: a run as allocator events
//! ([`events`]), their replay through a model of PyTorch's caching allocator ([`replay`],
//! [`allocator`]), the run's peaks, components and verdict on a card ([`run`], [`verdict`]), the
//! shared order of fixes ([`ranking`]), the cards and what each leaves a run ([`gpu`]),
//! what PyTorch's kernels allocate beside their outputs ([`kernels`]), how Inductor's generated
//! code hands a dead buffer's storage to the next of its size ([`buffer_reuse`]), the named
//! tensors a bar is made of ([`terms`]), and bytes as people read them ([`units`], [`decimal`]).
//!
//! A program (the `estimator` crate's `programs/`) describes its memory once, as a
//! [`events::Sequence`], and gets everything else from here. This crate depends on no program:
//! Cargo enforces it.

pub mod allocator;
pub mod buffer_reuse;
pub mod ddp;
pub mod decimal;
pub mod error;
pub mod events;
pub mod gpu;
pub mod kernels;
pub mod ranking;
pub mod replay;
pub mod run;
pub mod settings;
pub mod terms;
pub mod units;
pub mod verdict;

/// Each item's id (a `const fn id(self)`) in the order of `$all` (a constant array): the keys the
/// language files and the JSON use, so they can be checked against the enum at compile time.
#[macro_export]
macro_rules! ids {
    ($all:expr) => {{
        let mut ids = [""; $all.len()];
        let mut i = 0;
        while i < ids.len() {
            ids[i] = $all[i].id();
            i += 1;
        }
        ids
    }};
}
