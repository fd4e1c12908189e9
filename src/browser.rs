//! The page's few contacts with the browser: the URL, the clipboard, localStorage, JSON.parse.
//! Each fails quietly (an embed without storage access, an old browser) rather than breaking the page.

use estimator::input::json_config::Setting;
use wasm_bindgen::{JsCast, JsValue};

// what the first bar reads too, written once there
pub use vramfit_first_bar::browser::{preferred_languages, prefers_dark, query, storage_get};

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

/// Replaces the URL's query without adding a history entry (typing must not fill the history).
pub fn replace_query(query: &str) {
    set_query(query, false);
}

/// Adds a history entry for `query` (a change worth undoing with Back: an applied paste).
pub fn push_query(query: &str) {
    set_query(query, true);
}

/// The address with `query` in place of the current one, the path and the hash kept; a new
/// history entry or the current one replaced.
fn set_query(query: &str, push: bool) {
    let Some(w) = window() else { return };
    let path = w.location().pathname().unwrap_or_default();
    let hash = w.location().hash().unwrap_or_default();
    let url = if query.is_empty() {
        format!("{path}{hash}")
    } else {
        format!("{path}?{query}{hash}")
    };
    if let Ok(history) = w.history() {
        let _ = if push {
            history.push_state_with_url(&JsValue::NULL, "", Some(&url))
        } else {
            history.replace_state_with_url(&JsValue::NULL, "", Some(&url))
        };
    }
}

/// The page's address with `query` (the link to share or to open the full page).
pub fn page_link(query: &str) -> String {
    if query.is_empty() {
        page_base()
    } else {
        format!("{}?{query}", page_base())
    }
}

/// The page's full URL.
pub fn href() -> String {
    window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default()
}

/// Copies text to the clipboard (fire and forget).
pub fn copy(text: &str) {
    if let Some(w) = window() {
        let _ = w.navigator().clipboard().write_text(text);
    }
}

pub fn storage_set(key: &str, value: &str) {
    if let Some(Ok(Some(s))) = window().map(|w| w.local_storage()) {
        let _ = s.set_item(key, value);
    }
}

/// Sets an attribute on `<html>` (theme, language).
pub fn set_root_attribute(name: &str, value: &str) {
    if let Some(root) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = root.set_attribute(name, value);
    }
}

/// Removes the element with this id, if there is one.
pub fn remove_element(id: &str) {
    if let Some(el) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
    {
        el.remove();
    }
}

/// One click handler for every copy button of a panel rendered as HTML: a click on a
/// `button[data-copy=ID]` copies the text of the element `[data-testid=ID]` in the same snippet,
/// and the button says `done`.
pub fn copy_snippet(ev: &web_sys::MouseEvent, done: &str) {
    let Some(button) = ev
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|e| e.closest("button[data-copy]").ok().flatten())
    else {
        return;
    };
    let Some(id) = button.get_attribute("data-copy") else {
        return;
    };
    let code = button
        .closest(".snippet")
        .ok()
        .flatten()
        .and_then(|s| {
            s.query_selector(&format!("[data-testid='{id}']"))
                .ok()
                .flatten()
        })
        .and_then(|c| c.text_content());
    if let Some(code) = code {
        copy(&code);
        button.set_text_content(Some(done));
    }
}

/// The page's address without its query: where the full calculator and its embeds live.
pub fn page_base() -> String {
    window()
        .map(|w| {
            let l = w.location();
            format!(
                "{}{}",
                l.origin().unwrap_or_default(),
                l.pathname().unwrap_or_default()
            )
        })
        .unwrap_or_default()
}

/// Sets the document's title (the tab, the installed app's window).
pub fn set_title(title: &str) {
    if let Some(d) = window().and_then(|w| w.document()) {
        d.set_title(title);
    }
}

/// Points `<link rel=manifest>` at `href` (the manifest in the page's language).
pub fn set_manifest(href: &str) {
    if let Some(link) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("link[rel=manifest]").ok().flatten())
    {
        let _ = link.set_attribute("href", href);
    }
}

/// A pasted JSON text as the estimator's [`Setting`] tree, parsed by the browser's own
/// `JSON.parse` (serde_json would add its weight to the page for this one use); the browser's
/// message when it is not JSON.
pub fn parse_json(text: &str) -> Result<Setting, String> {
    let value = js_sys::JSON::parse(text).map_err(|e| {
        e.dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .unwrap_or_else(|| "not JSON".into())
    })?;
    Ok(setting(&value, 0))
}

/// A parsed JSON value as a [`Setting`]. Only the top object and its `config` hold settings, so
/// objects deeper than that are kept empty (and a deeply nested paste cannot exhaust the stack).
fn setting(v: &JsValue, depth: u32) -> Setting {
    if let Some(b) = v.as_bool() {
        Setting::Bool(b)
    } else if let Some(n) = v.as_f64() {
        // JavaScript's own shortest text of the number (`8`, `0.1`, `1e-7`)
        Setting::Number(String::from(
            js_sys::Number::from(n)
                .to_string_with_radix(10)
                .unwrap_or_default(),
        ))
    } else if let Some(s) = v.as_string() {
        Setting::Text(s)
    } else if js_sys::Array::is_array(v) {
        Setting::List
    } else if v.is_object() && depth < 2 {
        let entries = js_sys::Object::entries(v.unchecked_ref());
        Setting::Object(
            entries
                .iter()
                .filter_map(|pair| {
                    let pair: js_sys::Array = pair.dyn_into().ok()?;
                    Some((pair.get(0).as_string()?, setting(&pair.get(1), depth + 1)))
                })
                .collect(),
        )
    } else if v.is_object() {
        Setting::Object(Vec::new())
    } else {
        Setting::Null
    }
}
