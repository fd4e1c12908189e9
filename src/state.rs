//! The calculator's reactive state: one signal holding the inputs (mirrored in the URL), and
//! memos for everything derived from them. Components read these; only inputs write `page`.

use estimator::query::{PageState, QueryIssue};
use estimator::{estimate, verdict, Budget, ConfigError, Estimate, Verdict};
use leptos::prelude::*;

use crate::browser;
use crate::i18n::{Strings, EN};

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
    pub strings: Signal<&'static Strings>,
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
        AppState {
            page,
            notices: RwSignal::new(issues),
            estimate,
            budget,
            verdict,
            strings: Signal::stored(&EN),
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
