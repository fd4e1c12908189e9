//! The calculator's reactive state: one signal holding the inputs (mirrored in the URL), and
//! memos for everything derived from them. Components read these; only inputs write `page`.

use std::time::Duration;

use estimator::fixes::{rank_fixes, FixReport};
use estimator::query::{PageState, QueryIssue};
use estimator::{analyze, Analysis, Budget, ConfigError, Verdict};
use leptos::prelude::*;

use crate::browser;
use crate::i18n::Lang;

/// Shared by every component through context.
#[derive(Clone, Copy)]
pub struct AppState {
    /// The inputs. Always a valid config: inputs refuse values that would make it invalid.
    pub page: RwSignal<PageState>,
    /// What the URL held that could not be used, shown until dismissed.
    pub notices: RwSignal<Vec<QueryIssue>>,
    /// The run replayed through the allocator simulation: peaks, components, verdict.
    pub analysis: Memo<Result<Analysis, ConfigError>>,
    pub budget: Memo<Budget>,
    pub verdict: Memo<Option<Verdict>>,
    /// The inputs once they have stopped changing for [`SETTLE`]: what the fix ranker works on.
    pub settled: RwSignal<PageState>,
    /// The fix ranker's answer for the settled inputs.
    pub fixes: Memo<Option<FixReport>>,
    /// Model-FLOPs utilisation for the speed model (editable).
    pub mfu: RwSignal<f64>,
    pub lang: RwSignal<Lang>,
}

impl AppState {
    /// Reads the URL once and wires the memos.
    pub fn from_url() -> AppState {
        let (page, issues) = PageState::from_query(&browser::query());
        AppState::new(page, issues)
    }

    pub fn new(page: PageState, issues: Vec<QueryIssue>) -> AppState {
        let settled = RwSignal::new(page.clone());
        let page = RwSignal::new(page);
        let budget = Memo::new(move |_| page.with(PageState::budget));
        let analysis = Memo::new(move |_| page.with(|p| budget.with(|b| analyze(&p.config, b))));
        let verdict = Memo::new(move |_| analysis.with(|a| a.as_ref().ok().map(|a| a.verdict)));
        let mfu = RwSignal::new(estimator::speed::DEFAULT_MFU);
        // ranking re-simulates a dozen configs: it runs once typing pauses, not per keystroke
        let fixes = Memo::new(move |_| {
            let m = mfu.get();
            settled.with(|p| rank_fixes(&p.config, &p.budget(), m, true))
        });
        AppState {
            page,
            notices: RwSignal::new(issues),
            analysis,
            budget,
            verdict,
            settled,
            fixes,
            mfu,
            lang: RwSignal::new(Lang::En),
        }
    }

    /// Copies the inputs to `settled` once they have not changed for [`SETTLE`].
    pub fn settle_inputs(self) {
        let generation = StoredValue::new(0u64);
        Effect::new(move |_| {
            let current = self.page.get();
            let mine = generation.get_value() + 1;
            generation.set_value(mine);
            set_timeout(
                move || {
                    if generation.get_value() == mine {
                        self.settled.set(current);
                    }
                },
                SETTLE,
            );
        });
    }

    /// Keeps the URL equal to the state (replace, never a history entry per keystroke).
    pub fn sync_url(self) {
        Effect::new(move |_| {
            let q = self.page.with(PageState::to_query);
            browser::replace_query(&q);
        });
    }
}

/// How long the inputs must rest before the fixes are re-ranked.
pub const SETTLE: Duration = Duration::from_millis(200);

/// The state provided by [`crate::App`].
pub fn use_app() -> AppState {
    expect_context::<AppState>()
}
