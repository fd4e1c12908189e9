//! The page's languages: which one to show, fetching a language file when it is chosen, and the
//! strings of the language being rendered. The strings themselves live in the `vramfit-i18n` crate,
//! shared with the command line.

pub use vramfit_i18n::{
    en, error, fill, issue, parse, place, verdict_words, Lang, ParseError, Strings, TAGS,
};

#[cfg(target_arch = "wasm32")]
mod load;
#[cfg(target_arch = "wasm32")]
pub use load::load;

/// Outside the browser there is nothing to fetch: only English is ever ready.
#[cfg(not(target_arch = "wasm32"))]
pub fn load(lang: Lang, done: impl FnOnce(bool) + 'static) {
    done(lang.is_ready());
}

/// The strings of the language being rendered (provided by [`crate::App`]).
pub fn use_strings() -> &'static Strings {
    leptos::prelude::use_context::<&'static Strings>().unwrap_or_else(en)
}
