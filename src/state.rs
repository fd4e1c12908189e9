//! The calculator's reactive state: one signal holding the inputs (mirrored in the URL), and
//! memos for everything derived from them. Components read these; only inputs write `page`.

use std::time::Duration;

use estimator::oom::OomMessage;
use estimator::programs::{analyze_page, rank_page_fixes, ProgramAnalysis, ProgramFixes};
use estimator::query::{page_param, PageState, QueryIssue};
use estimator::{Budget, ConfigError, Verdict};
use gloo_timers::callback::Timeout;
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
    pub analysis: Memo<Result<ProgramAnalysis, ConfigError>>,
    pub budget: Memo<Budget>,
    pub verdict: Memo<Option<Verdict>>,
    /// An out-of-memory message pasted while the page held only the program's defaults, with
    /// that page: until a setting changes, the page answers with the message's own facts and
    /// asks for the run's settings, never with a verdict for a config the user did not give.
    pub awaiting_settings: RwSignal<Option<(PageState, Box<OomMessage>)>>,
    /// The inputs once they have stopped changing for [`SETTLE`]: what the fix ranker works on.
    pub settled: RwSignal<PageState>,
    /// The fix ranker's answer for the settled inputs (None until the first bar is painted).
    pub fixes: Memo<Option<ProgramFixes>>,
    /// Set once the page has painted: ranking (tens of ms) must not delay the first bar.
    pub painted: RwSignal<bool>,
    /// Model-FLOPs utilisation for the speed model (editable).
    pub mfu: RwSignal<f64>,
    /// The language shown (its strings are loaded before it is set).
    pub lang: RwSignal<Lang>,
    /// Whether the URL carries `?lang=`: kept (and updated) only when the user asked for it.
    pub lang_in_url: bool,
    /// `?embed=1`: the compact calculator for iframes.
    pub embed: bool,
    /// The page's own query keys (embed, theme, bg) as the URL brought them: kept in it.
    pub page_keys: StoredValue<Vec<(String, String)>>,
}

impl AppState {
    /// Reads the URL once and wires the memos.
    pub fn from_url() -> AppState {
        let query = browser::query();
        let (page, mut issues) = PageState::from_query(&query);
        let (lang, in_url, lang_issue) = initial_lang(&query);
        issues.extend(lang_issue);
        let mut app = AppState::new(page, issues);
        app.lang.set(lang);
        app.lang_in_url = in_url;
        app.embed = page_param(&query, "embed").as_deref() == Some("1");
        app.page_keys.set_value(
            estimator::query::query_pairs(&query)
                .into_iter()
                .filter(|(k, _)| k != "lang" && estimator::query::PAGE_KEYS.contains(&k.as_str()))
                .collect(),
        );
        app
    }

    pub fn new(page: PageState, issues: Vec<QueryIssue>) -> AppState {
        let settled = RwSignal::new(page.clone());
        let page = RwSignal::new(page);
        let budget = Memo::new(move |_| page.with(PageState::budget));
        let analysis = Memo::new(move |_| page.with(|p| budget.with(|b| analyze_page(p, b))));
        let awaiting_settings = RwSignal::new(None::<(PageState, Box<OomMessage>)>);
        let verdict = Memo::new(move |_| {
            let waiting = awaiting_settings
                .with(|w| w.as_ref().is_some_and(|(at, _)| page.with(|p| p == at)));
            if waiting {
                return None;
            }
            analysis.with(|a| a.as_ref().ok().map(|a| a.verdict))
        });
        let mfu = RwSignal::new(estimator::speed::DEFAULT_MFU);
        let painted = RwSignal::new(false);
        // ranking re-simulates a dozen configs: it runs once typing pauses, not per keystroke,
        // and not before the first bar is on screen
        let fixes = Memo::new(move |_| {
            if !painted.get() {
                return None;
            }
            let m = mfu.get();
            settled.with(|p| rank_page_fixes(p, &p.budget(), m))
        });
        AppState {
            page,
            notices: RwSignal::new(issues),
            analysis,
            budget,
            verdict,
            awaiting_settings,
            settled,
            fixes,
            painted,
            mfu,
            lang: RwSignal::new(Lang::En),
            lang_in_url: false,
            embed: false,
            page_keys: StoredValue::new(Vec::new()),
        }
    }

    /// The message pasted on the defaults, while the page still holds them.
    pub fn awaiting(self) -> Option<Box<OomMessage>> {
        self.awaiting_settings.with(|w| {
            w.as_ref()
                .filter(|(at, _)| self.page.with(|p| p == at))
                .map(|(_, m)| m.clone())
        })
    }

    /// Copies the inputs to `settled` once they have not changed for [`SETTLE`], and lets the
    /// fixes be ranked once the first frame is painted.
    pub fn settle_inputs(self) {
        // the first animation frame runs before the first paint, the second after it
        request_animation_frame(move || request_animation_frame(move || self.painted.set(true)));
        debounce(
            move || self.page.get(),
            SETTLE,
            move |p| {
                // the debounce fires once at load with the inputs `settled` already holds: setting
                // them again would rank the fixes (and redraw the chart) a second time, a task of
                // ~200 ms on the default page here
                if self.settled.with_untracked(|s| *s != p) {
                    self.settled.set(p);
                }
            },
        );
    }

    /// Back and Forward (to before a paste, or any entry another script made): the URL is read
    /// again exactly as at load, notices included.
    pub fn follow_history(self) {
        let handle = window_event_listener(leptos::ev::popstate, move |_| {
            let (page, issues) = PageState::from_query(&browser::query());
            self.page.set(page);
            self.notices.set(issues);
        });
        // the page lives as long as the tab
        std::mem::forget(handle);
    }

    /// The query the URL should hold: the state, the page's own keys (embed, theme, bg) as they
    /// came, and `lang` when the URL chose the language.
    pub fn url_query(self) -> String {
        self.query_with(self.lang_in_url.then(|| self.lang.get()))
    }

    /// The state, the page's own keys as they came, and `lang` when given.
    pub fn query_with(self, lang: Option<Lang>) -> String {
        let mut q = self.page.with(PageState::to_query);
        let lang = lang.map(|l| ("lang".to_string(), l.tag().to_string()));
        self.page_keys.with_value(|kept| {
            for (k, v) in kept.iter().chain(&lang) {
                if !q.is_empty() {
                    q.push('&');
                }
                q += &format!(
                    "{}={}",
                    estimator::query::encode(k),
                    estimator::query::encode(v)
                );
            }
        });
        q
    }

    /// Keeps the URL equal to the state: replaced, never a history entry per keystroke, and only
    /// once a slider drag pauses for [`URL_DELAY`] (replaceState costs half a millisecond).
    pub fn sync_url(self) {
        debounce(
            move || self.url_query(),
            URL_DELAY,
            |q| browser::replace_query(&q),
        );
    }
}

/// Calls `apply` with `track`'s value once the signals `track` reads have not changed for
/// `delay` (each change restarts the wait).
fn debounce<T: 'static>(
    track: impl Fn() -> T + 'static,
    delay: Duration,
    apply: impl Fn(T) + Copy + 'static,
) {
    // the pending call: storing a new one drops the one before, which cancels it
    let pending = StoredValue::new_local(None::<Timeout>);
    let millis = u32::try_from(delay.as_millis()).unwrap_or(u32::MAX);
    Effect::new(move |_| {
        let value = track();
        pending.set_value(Some(Timeout::new(millis, move || apply(value))));
    });
}

/// The language to show: `?lang=` if it names one, else the stored choice, else the first of the
/// browser's languages vramfit speaks, else English. Also whether the URL chose it, and the
/// notice for a `?lang=` naming no language vramfit has.
pub fn initial_lang(query: &str) -> (Lang, bool, Option<QueryIssue>) {
    // the rule, written once with the first bar's, which must open in the same language
    let lang = vramfit_first_bar::opening_lang(query);
    let named = page_param(query, "lang");
    let chosen = named.as_deref().and_then(Lang::from_tag).is_some();
    let issue = named.filter(|_| !chosen).map(|tag| QueryIssue {
        key: "lang".into(),
        value: tag.clone(),
        problem: estimator::query::IssueKind::Invalid(Box::new(ConfigError {
            key: "lang".into(),
            value: tag,
            problem: estimator::Problem::NotOneOf {
                choices: &crate::i18n::TAGS,
            },
        })),
    });
    (lang, chosen, issue)
}

/// How long the inputs must rest before the URL is updated.
pub const URL_DELAY: Duration = Duration::from_millis(60);

/// How long the inputs must rest before the fixes are re-ranked.
pub const SETTLE: Duration = Duration::from_millis(200);

/// The state provided by [`crate::App`].
pub fn use_app() -> AppState {
    expect_context::<AppState>()
}
