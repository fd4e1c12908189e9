//! The first answer a reader sees, before the page's own module has arrived: the peak, the verdict
//! with its margin and a thin bar of the six components against the card — the page's summary
//! line — for the state the URL holds, in the language the page will open in.
//!
//! Why a module of its own: the page's module carries Leptos and every panel (≈236 KB Brotli); on
//! a phone's network (Lighthouse's "Slow 4G") it alone takes ~1.4 s to arrive. This one carries
//! the estimator and the words (a third of that), so the right number is on screen in about half
//! the time; the page's module is fetched after it and replaces it when mounted (`src/main.rs`
//! removes [`ID`]). `public/first-bar.js` loads it: [`lang`] says which language file to fetch,
//! [`paint`] paints. It builds its few elements with web-sys rather than Leptos, which is the
//! weight it exists to avoid.

use estimator::decimal::Fixed;
use estimator::programs::replay_page;
use estimator::query::{page_param, PageState};
use estimator::{Component, Components, Verdict};
use vramfit_i18n::{format, parse, verdict_words, BarWords, Lang};
use web_sys::{Document, Element};

pub mod browser;

/// The element's id: the page removes it once it has mounted.
pub const ID: &str = "first-bar";

/// Where the page keeps the reader's choice of theme (localStorage).
pub const THEME_STORAGE_KEY: &str = "vramfit-theme";

/// `light` or `dark` (`<html data-theme>`, which the style sheet reads): the URL's `theme`
/// (embeds), else the stored choice, else the system's. The first bar sets it before it paints,
/// so a dark page does not open light; the page sets it again from the same rule.
pub fn theme(from_url: Option<&str>, stored: Option<&str>, system_dark: bool) -> &'static str {
    match from_url.or(stored) {
        Some("dark") => "dark",
        Some("light") => "light",
        _ if system_dark => "dark",
        _ => "light",
    }
}

/// The theme a page with `query` opens in ([`theme`], from what the browser holds).
pub fn opening_theme(query: &str) -> &'static str {
    theme(
        page_param(query, "theme").as_deref(),
        browser::storage_get(THEME_STORAGE_KEY).as_deref(),
        browser::prefers_dark(),
    )
}

/// The language a page with `query` opens in: `?lang=` where it names one, else the stored
/// choice, else the browser's ([`Lang::unchosen`]).
pub fn opening_lang(query: &str) -> Lang {
    page_param(query, "lang")
        .and_then(|tag| Lang::from_tag(&tag))
        .unwrap_or_else(|| {
            Lang::unchosen(
                browser::storage_get(Lang::STORAGE_KEY).as_deref(),
                browser::preferred_languages().iter().map(String::as_str),
            )
        })
}

/// What the first bar shows for one URL state, computed as the page computes it.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstBar {
    pub peak_bytes: u128,
    pub components: Components,
    pub verdict: Verdict,
    /// What the bar's full width stands for ([`Verdict::bar_scale`]).
    pub scale_bytes: u128,
}

/// What the first line says: the bar, or that the run fits no card at all.
#[derive(Debug, Clone, PartialEq)]
pub enum FirstAnswer {
    Bar(FirstBar),
    /// The run would hold more than the ceiling at once (`Problem::BeyondAnyCard`): the page's
    /// verdict panel says so, and this line says it first.
    BeyondAnyCard,
}

impl FirstAnswer {
    /// The answer for `query` (a page URL's query string), or `None` where the page shows no
    /// line of this kind: an embed (`embed=1`, its own compact layout) or a config the estimator
    /// refuses for another reason (the page explains why; a bar would say nothing).
    pub fn for_query(query: &str) -> Option<FirstAnswer> {
        if page_param(query, "embed").as_deref() == Some("1") {
            return None;
        }
        let (page, _) = PageState::from_query(query);
        let budget = page.budget();
        match replay_page(&page, &budget) {
            Ok(run) => {
                let peak_bytes = run.peak_bytes();
                Some(FirstAnswer::Bar(FirstBar {
                    peak_bytes,
                    components: run.components(),
                    verdict: run.verdict,
                    scale_bytes: run.verdict.bar_scale(budget.gpu.total_bytes, peak_bytes),
                }))
            }
            Err(e) if e.is_beyond_any_card() => Some(FirstAnswer::BeyondAnyCard),
            Err(_) => None,
        }
    }
}

impl FirstBar {
    /// [`FirstAnswer::for_query`]'s bar, where it has one.
    pub fn for_query(query: &str) -> Option<FirstBar> {
        match FirstAnswer::for_query(query)? {
            FirstAnswer::Bar(bar) => Some(bar),
            FirstAnswer::BeyondAnyCard => None,
        }
    }

    /// Percent of the bar's width for `bytes`.
    pub fn pct(&self, bytes: u128) -> f64 {
        bytes as f64 / self.scale_bytes as f64 * 100.0
    }
}

/// The language the page will open in ([`opening_lang`]), as the tag of its files
/// (`first-bar/{tag}.txt`, the bar's words; `i18n/{tag}.txt`, the page's).
#[cfg_attr(feature = "exports", wasm_bindgen::prelude::wasm_bindgen)]
pub fn lang() -> String {
    opening_lang(&browser::query()).tag().to_string()
}

/// Paints the first bar at the top of the page, in the language whose bar words are `text`
/// (`first-bar/{lang}.txt`; `None`: English). Paints nothing when the page has already mounted, where the URL asks for no
/// bar ([`FirstBar::for_query`]), or when the language's file could not be had (the page would
/// then open in English, and the bar must not speak another language than the page). Returns
/// whether it painted.
#[cfg_attr(feature = "exports", wasm_bindgen::prelude::wasm_bindgen)]
pub fn paint(text: Option<String>) -> bool {
    console_error_panic_hook::set_once();
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return false;
    };
    // the page's module won the race (a warm cache): its own bar is there
    if document.query_selector(".page").ok().flatten().is_some() {
        return false;
    }
    let query = browser::query();
    // before anything is painted, so a dark page does not open light
    if let Some(root) = document.document_element() {
        let _ = root.set_attribute("data-theme", opening_theme(&query));
    }
    let Some(answer) = FirstAnswer::for_query(&query) else {
        return false;
    };
    let Some(words) = words(text, opening_lang(&query)) else {
        return false;
    };
    format::use_separators(&words);
    let Some(body) = document.body() else {
        return false;
    };
    let built = match &answer {
        FirstAnswer::Bar(bar) => build(&document, bar, &words),
        FirstAnswer::BeyondAnyCard => build_beyond(&document, &words),
    };
    built.and_then(|el| body.prepend_with_node_1(&el)).is_ok()
}

/// The words of `lang`, whose file's text is `text`: English's where the file lacks one; English's
/// without a text when `lang` is English; `None` without a text for another language.
fn words(text: Option<String>, lang: Lang) -> Option<BarWords> {
    let english = parse::<BarWords>(
        include_str!(concat!(env!("OUT_DIR"), "/en_bar_words.txt")),
        None,
    )
    .0;
    match text {
        // the language's bar words (first-bar/{lang}.txt, scripts/post-build.py); a word it
        // lacks is English's (leaked once: this module lives as long as the tab)
        Some(text) => Some(parse(Box::leak(text.into_boxed_str()), Some(&english)).0),
        None if lang == Lang::En => Some(english),
        None => None,
    }
}

/// The summary line as the page's sticky summary draws it (`src/components/sticky_summary.rs`,
/// the same classes), inside a `.page` so it sits where the page will.
fn build(
    doc: &Document,
    bar: &FirstBar,
    words: &BarWords,
) -> Result<Element, wasm_bindgen::JsValue> {
    let (word, class, margin) = verdict_words(words, &bar.verdict);
    let outer = element(doc, "div", "page first-bar")?;
    outer.set_id(ID);
    let summary = element(
        doc,
        "div",
        &format!("sticky-summary sticky-summary--first {class}"),
    )?;
    summary.set_attribute("data-testid", "first-bar")?;
    summary.set_attribute("role", "status")?;

    let text = element(doc, "p", "sticky-summary__text")?;
    let total = element(doc, "strong", "")?;
    total.set_attribute("data-testid", "first-bar-total")?;
    // what the verdict weighs, as the page's sticky summary leads with it
    total.set_attribute("data-bytes", &bar.verdict.need_bytes.to_string())?;
    total.set_text_content(Some(&format::gib(bar.verdict.need_bytes)));
    let word_el = element(doc, "span", "verdict__word")?;
    word_el.set_text_content(Some(word));
    text.append_with_node_1(&total)?;
    text.append_with_str_1(" · ")?;
    text.append_with_node_1(&word_el)?;
    text.append_with_str_1(&format!(" · {margin}"))?;

    let track = element(doc, "div", "sticky-summary__bar")?;
    for c in Component::ALL {
        let seg = element(doc, "span", &format!("bar__seg--{}", c.id()))?;
        let bytes = bar.components.get(c);
        seg.set_attribute("data-component", c.id())?;
        seg.set_attribute("data-bytes", &bytes.to_string())?;
        set_style(&seg, "width", bar.pct(bytes))?;
        track.append_with_node_1(&seg)?;
    }
    let reserve = element(doc, "span", "sticky-summary__reserve")?;
    set_style(
        &reserve,
        "width",
        bar.pct(bar.verdict.reserve_beyond(bar.peak_bytes)),
    )?;
    track.append_with_node_1(&reserve)?;
    let marker = element(doc, "span", "sticky-summary__marker")?;
    set_style(&marker, "left", bar.pct(bar.verdict.budget_bytes))?;
    track.append_with_node_1(&marker)?;

    summary.append_with_node_2(&text, &track)?;
    outer.append_with_node_1(&summary)?;
    Ok(outer)
}

/// The line for a run past the ceiling: its verdict and how far past, no bar (there is no peak
/// to draw).
fn build_beyond(doc: &Document, words: &BarWords) -> Result<Element, wasm_bindgen::JsValue> {
    let outer = element(doc, "div", "page first-bar")?;
    outer.set_id(ID);
    let summary = element(
        doc,
        "div",
        "sticky-summary sticky-summary--first verdict--oom",
    )?;
    summary.set_attribute("data-testid", "first-bar")?;
    summary.set_attribute("data-risk", "beyond")?;
    summary.set_attribute("role", "status")?;
    let text = element(doc, "p", "sticky-summary__text")?;
    let word = element(doc, "strong", "verdict__word")?;
    word.set_text_content(Some(words.verdict_beyond));
    let ceiling = estimator::engine::events::ceiling_text();
    let margin = vramfit_i18n::fill(words.beyond_margin, &[("ceiling", &ceiling)]);
    text.append_with_node_1(&word)?;
    text.append_with_str_1(&format!(" · {margin}"))?;
    summary.append_with_node_1(&text)?;
    outer.append_with_node_1(&summary)?;
    Ok(outer)
}

fn element(doc: &Document, tag: &str, class: &str) -> Result<Element, wasm_bindgen::JsValue> {
    let el = doc.create_element(tag)?;
    if !class.is_empty() {
        el.set_class_name(class);
    }
    Ok(el)
}

/// A percentage through the CSSOM: the page's Content-Security-Policy (`style-src 'self'`)
/// refuses `style` attributes, not style properties set from script.
fn set_style(el: &Element, property: &str, pct: f64) -> Result<(), wasm_bindgen::JsValue> {
    use wasm_bindgen::JsCast;
    el.unchecked_ref::<web_sys::HtmlElement>()
        .style()
        .set_property(property, &format!("{}%", Fixed(pct, 3)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use estimator::programs::analyze_page;

    #[test]
    fn the_first_bar_is_the_pages_answer() {
        for query in [
            "",
            "?gpu=rtx3060&batch_size=16&compile=False&n_layer=24",
            "?program=nanochat&depth=16&device_batch_size=8&gpu=rtx4090&lang=de",
            "?program=build-nanogpt&B=32&gpu=rtx4090",
            // several GPUs: rank 0's bar at the bound, with NCCL's memory out of the card
            "?program=nanochat&depth=12&nproc_per_node=4&gpu=h200",
            "?program=nanochat-sft&depth=8&nproc-per-node=8&gpu=h100",
        ] {
            let bar = FirstBar::for_query(query).expect("a bar");
            let (page, _) = PageState::from_query(query);
            let a = analyze_page(&page, &page.budget()).expect("a valid config");
            assert_eq!(bar.peak_bytes, a.peak_bytes(), "{query}");
            assert_eq!(bar.components, a.components(), "{query}");
            assert_eq!(bar.verdict, a.verdict, "{query}");
            let sum: u128 = Component::ALL.iter().map(|&c| bar.components.get(c)).sum();
            assert_eq!(sum, bar.peak_bytes, "the six segments make the total");
            assert!(
                bar.pct(bar.peak_bytes) <= 100.0,
                "{query}: the bar stays inside its track"
            );
        }
        // a run past the ceiling: the first line says it fits no card, as the page's verdict does
        let beyond =
            "?n_layer=1024&n_embd=131072&n_head=1024&block_size=1048576&batch_size=1048576";
        assert_eq!(
            FirstAnswer::for_query(beyond),
            Some(FirstAnswer::BeyondAnyCard)
        );
        let (page, _) = PageState::from_query(beyond);
        let e = analyze_page(&page, &page.budget()).unwrap_err();
        assert!(e.is_beyond_any_card(), "{e}");
    }

    #[test]
    fn theme_from_the_url_then_the_stored_choice_then_the_system() {
        assert_eq!(theme(Some("dark"), Some("light"), false), "dark");
        assert_eq!(theme(None, Some("light"), true), "light");
        assert_eq!(theme(None, None, true), "dark");
        assert_eq!(theme(None, None, false), "light");
        // a theme the URL names wrongly is the system's, not the stored one
        assert_eq!(theme(Some("blue"), Some("dark"), false), "light");
    }

    #[test]
    fn no_bar_for_an_embed() {
        assert_eq!(FirstBar::for_query("?embed=1&batch_size=8"), None);
        assert!(FirstBar::for_query("?embed=0").is_some());
    }

    #[test]
    fn any_query_gives_an_answer_or_none_without_panicking() {
        for query in [
            "?batch_size=-1",
            "?%ff%fe=1&&&=",
            "?program=nope",
            "?gpu=",
            "?n_layer=1e99",
        ] {
            if let Some(bar) = FirstBar::for_query(query) {
                assert!(bar.scale_bytes >= bar.peak_bytes);
            }
        }
    }
}
