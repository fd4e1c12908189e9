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
    /// `?embed=1`: the compact calculator for iframes.
    pub embed: bool,
}

impl AppState {
    /// Reads the URL once and wires the memos.
    pub fn from_url() -> AppState {
        let query = browser::query();
        let (page, issues) = PageState::from_query(&query);
        let mut app = AppState::new(page, issues);
        app.embed = page_param(&query, "embed").as_deref() == Some("1");
        app
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
            embed: false,
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
        // the page's own keys (embed, theme, bg, lang) stay as they came
        let kept: Vec<(String, String)> = estimator::query::query_pairs(&browser::query())
            .into_iter()
            .filter(|(k, _)| estimator::query::PAGE_KEYS.contains(&k.as_str()))
            .collect();
        Effect::new(move |_| {
            let mut q = self.page.with(PageState::to_query);
            for (k, v) in &kept {
                if !q.is_empty() {
                    q.push('&');
                }
                q += &format!(
                    "{}={}",
                    estimator::query::encode(k),
                    estimator::query::encode(v)
                );
            }
            browser::replace_query(&q);
        });
    }
}

/// A page key of the query (`embed`, `bg`, `theme`, `lang`): not part of the calculator's state.
pub fn page_param(query: &str, key: &str) -> Option<String> {
    estimator::query::query_pairs(query)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// How long the inputs must rest before the fixes are re-ranked.
pub const SETTLE: Duration = Duration::from_millis(200);

/// The state provided by [`crate::App`].
pub fn use_app() -> AppState {
    expect_context::<AppState>()
}
