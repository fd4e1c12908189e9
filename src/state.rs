//! The calculator's reactive state: one signal holding the inputs (mirrored in the URL), and
//! memos for everything derived from them. Components read these; only inputs write `page`.

use estimator::fixes::{rank_fixes, FixReport};
use estimator::query::{PageState, QueryIssue};
use estimator::{estimate, verdict, Budget, ConfigError, Estimate, Verdict};
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
    pub estimate: Memo<Result<Estimate, ConfigError>>,
    pub budget: Memo<Budget>,
    pub verdict: Memo<Option<Verdict>>,
    /// The fix ranker's answer for the current inputs.
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
        let page = RwSignal::new(page);
        let estimate = Memo::new(move |_| page.with(|p| estimate(&p.config, &p.card())));
        let budget = Memo::new(move |_| page.with(PageState::budget));
        let verdict = Memo::new(move |_| {
            estimate.with(|e| e.as_ref().ok().map(|e| budget.with(|b| verdict(e, b))))
        });
        let mfu = RwSignal::new(estimator::speed::DEFAULT_MFU);
        let fixes = Memo::new(move |_| {
            let m = mfu.get();
            page.with(|p| budget.with(|b| rank_fixes(&p.config, b, m, true)))
        });
        AppState {
            page,
            notices: RwSignal::new(issues),
            estimate,
            budget,
            verdict,
            fixes,
            mfu,
            lang: RwSignal::new(Lang::En),
        }
    }

    /// Keeps the URL equal to the state (replace, never a history entry per keystroke).
    pub fn sync_url(self) {
        Effect::new(move |_| {
            let q = self.page.with(PageState::to_query);
            browser::replace_query(&q);
        });
    }
}

/// The state provided by [`crate::App`].
pub fn use_app() -> AppState {
    expect_context::<AppState>()
}
