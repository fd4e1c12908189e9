//! The page header: name, one-line purpose, copy-link and theme buttons.

use leptos::prelude::*;

use super::embed_dialog::EmbedDialog;
use super::lang_picker::LangPicker;
use crate::browser;
use crate::i18n::use_strings;
use crate::state::use_app;

/// `light` or `dark`, by the rule the first bar used ([`vramfit_first_bar::opening_theme`]).
pub fn initial_theme() -> &'static str {
    vramfit_first_bar::opening_theme(&browser::query())
}

#[component]
pub fn Header() -> impl IntoView {
    let tr = use_strings();
    let app = use_app();
    let (theme, set_theme) = signal(initial_theme());
    Effect::new(move |_| browser::set_root_attribute("data-theme", theme.get()));
    let (copied, set_copied) = signal(false);
    // a shared link opens in the reader's own language unless the sharer asks for theirs
    let (with_lang, set_with_lang) = signal(false);
    view! {
        <header class="header">
            <div class="header__text">
                <h1 class="header__title">{tr.title}</h1>
                <p class="header__tagline">
                    {move || tr.program(app.page.with(|p| p.program)).tagline()}
                </p>
            </div>
            <div class="header__actions">
                <LangPicker />
                <EmbedDialog />
                <button
                    type="button"
                    class="button"
                    data-testid="copy-link"
                    on:click=move |_| {
                        let lang = with_lang.get_untracked().then(|| app.lang.get_untracked());
                        browser::copy(&browser::page_link(&app.query_with(lang)));
                        set_copied.set(true);
                    }
                >
                    {move || if copied.get() { tr.copied } else { tr.copy_link }}
                </button>
                <label class="header__check">
                    <input
                        type="checkbox"
                        data-testid="link-lang"
                        prop:checked=with_lang
                        on:change:target=move |ev| {
                            set_with_lang.set(ev.target().checked());
                            set_copied.set(false);
                        }
                    />
                    {tr.link_with_lang}
                </label>
                <button
                    type="button"
                    class="button button--icon"
                    aria-label=tr.theme_toggle
                    aria-pressed=move || (theme.get() == "dark").to_string()
                    on:click=move |_| {
                        let next = if theme.get_untracked() == "dark" { "light" } else { "dark" };
                        browser::storage_set(vramfit_first_bar::THEME_STORAGE_KEY, next);
                        set_theme.set(next);
                    }
                >
                    {move || if theme.get() == "dark" { "☀" } else { "☾" }}
                </button>
            </div>
        </header>
    }
}
