//! Fetching a language file (`i18n/{tag}.txt`, beside the page; the service worker caches it for
//! offline use) and keeping it for the session.

use wasm_bindgen::JsValue;

use super::{en, parse, Lang};

/// Makes `lang`'s strings available, then calls `done(true)`; `done(false)` when the file could
/// not be fetched (the page stays in the language it has). Immediate when already loaded.
/// (wasm-bindgen-futures' executor, not Leptos': the first language loads before mounting.)
pub fn load(lang: Lang, done: impl FnOnce(bool) + 'static) {
    if lang.is_ready() {
        done(true);
        return;
    }
    wasm_bindgen_futures::spawn_local(async move {
        let Some(text) = fetch(lang).await else {
            done(false);
            return;
        };
        // Leaked once per language (at most four), so every string can be `&'static`.
        let text: &'static str = Box::leak(text.into_boxed_str());
        let (strings, problems) = parse(text, Some(en()));
        if !problems.is_empty() {
            web_sys::console::warn_1(&JsValue::from_str(&format!(
                "vramfit: i18n/{}.txt: {} problem(s), first: {}",
                lang.tag(),
                problems.len(),
                problems[0]
            )));
        }
        lang.store(strings);
        done(true);
    });
}

/// The language file's text; `None` offline without a cached copy, or on an error status.
async fn fetch(lang: Lang) -> Option<String> {
    let url = format!("i18n/{}.txt", lang.tag());
    let response = gloo_net::http::Request::get(&url).send().await.ok()?;
    if !response.ok() {
        return None;
    }
    response.text().await.ok()
}
