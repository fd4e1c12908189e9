//! Read-only panels rendered from pure functions to HTML text.
//!
//! Why not `view!`: every reactive view node monomorphises a chunk of the framework, and the
//! result panels are large trees rebuilt on every input anyway. Building them as strings keeps
//! the wasm within the page budget, and makes them testable natively (`cargo test`), without a
//! browser. Inputs stay Leptos components. Everything user-visible goes through [`escape`].

pub mod breakdown;
pub mod export;
pub mod fixes;
pub mod paste;
pub mod timeline;

pub use vramfit_html::{el, escape};
