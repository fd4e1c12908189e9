//! vramfit in the browser: the estimator behind sliders, a stacked bar and a verdict.
//!
//! Data flows one way: the URL query → [`state::AppState::page`] → memos calling the pure
//! `estimator` crate → components. Effects only talk to the outside (URL, storage).

pub mod browser;
pub mod components;
/// Numbers as the page shows them (shared with the CLI).
pub use vramfit_i18n::format;
pub mod html;
pub mod i18n;
pub mod plan_worker;
pub mod snapshot_worker;
pub mod state;
pub mod worker;

pub use components::app::App;

/// Timings for scripts/bench.sh, called from the page as `wasmBindings.bench(...)`: milliseconds
/// per call of the estimator's entry points, measured in the browser.
pub mod bench {
    use wasm_bindgen::prelude::wasm_bindgen;

    fn now() -> f64 {
        web_sys::window()
            .and_then(|w| w.performance())
            .map_or(0.0, |p| p.now())
    }

    /// `what`: `estimate`, `analyze`, `fixes_closed_form` or `fixes_simulated`, for the run a
    /// page `query` describes (`""`: the page's default).
    #[wasm_bindgen]
    pub fn bench(what: &str, query: &str, calls: u32) -> f64 {
        let (page, _) = estimator::query::PageState::from_query(query);
        let (cfg, budget) = (page.configs.nanogpt.clone(), page.budget());
        let calls = calls.max(1);
        let start = now();
        for _ in 0..calls {
            let _ = match what {
                "estimate" => estimator::estimate(&cfg, &budget.gpu).map(|e| e.peak_bytes()),
                "analyze" => estimator::analyze(&cfg, &budget).map(|a| a.peak_bytes()),
                "fixes_closed_form" => Ok(estimator::fixes::rank_fixes(&cfg, &budget, 0.35, false)
                    .map_or(0, |r| r.current_peak)),
                "fixes_simulated" => Ok(estimator::fixes::rank_fixes(&cfg, &budget, 0.35, true)
                    .map_or(0, |r| r.current_peak)),
                _ => return f64::NAN,
            };
        }
        (now() - start) / f64::from(calls)
    }

    /// Bytes of wasm linear memory (the Rust heap lives in it; it never shrinks, so growth over
    /// many inputs is a leak).
    #[wasm_bindgen]
    pub fn wasm_memory_bytes() -> f64 {
        #[cfg(target_arch = "wasm32")]
        {
            (core::arch::wasm32::memory_size(0) * 65536) as f64
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            0.0
        }
    }
}
