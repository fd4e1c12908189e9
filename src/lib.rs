//! vramfit in the browser: the estimator behind sliders, a stacked bar and a verdict.
//!
//! Data flows one way: the URL query → [`state::AppState::page`] → memos calling the pure
//! `estimator` crate → components. Effects only talk to the outside (URL, storage).

pub mod browser;
pub mod components;
pub mod format;
pub mod html;
pub mod i18n;
pub mod state;

pub use components::app::App;
