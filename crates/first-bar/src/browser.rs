//! What the first bar and the page read of the browser to decide how the page opens (its
//! language and theme): written once here, re-exported by the page's `src/browser.rs`.

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

/// The current query string, with its leading `?` (or empty).
pub fn query() -> String {
    window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

/// A value from localStorage; `None` where there is none or storage is refused (an embed in a
/// partitioned iframe, a private window).
pub fn storage_get(key: &str) -> Option<String> {
    window()?.local_storage().ok()??.get_item(key).ok()?
}

/// The browser's preferred languages (`navigator.languages`), most preferred first.
pub fn preferred_languages() -> Vec<String> {
    window()
        .map(|w| {
            w.navigator()
                .languages()
                .iter()
                .filter_map(|v| v.as_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the system asks for a dark theme.
pub fn prefers_dark() -> bool {
    window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}
