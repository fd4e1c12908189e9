//! The page header: name, one-line purpose, copy-link and theme buttons.

use leptos::prelude::*;

use super::embed_dialog::EmbedDialog;
use crate::browser;
use crate::i18n::use_strings;

/// `light` or `dark`: the URL's `theme` (embeds), the stored choice, else the system's.
pub fn initial_theme() -> &'static str {
    let from_url = crate::state::page_param(&browser::query(), "theme");
    match from_url
        .or_else(|| browser::storage_get("vramfit-theme"))
        .as_deref()
    {
        Some("dark") => "dark",
        Some("light") => "light",
        _ if browser::prefers_dark() => "dark",
        _ => "light",
    }
}

#[component]
pub fn Header() -> impl IntoView {
    let tr = use_strings();
    let (theme, set_theme) = signal(initial_theme());
    Effect::new(move |_| browser::set_root_attribute("data-theme", theme.get()));
    let (copied, set_copied) = signal(false);
    view! {
        <header class="header">
            <div class="header__text">
                <h1 class="header__title">{tr.title}</h1>
                <p class="header__tagline">{tr.tagline}</p>
            </div>
            <div class="header__actions">
                <EmbedDialog />
                <button
                    type="button"
                    class="button"
                    data-testid="copy-link"
                    on:click=move |_| {
                        browser::copy(&browser::href());
                        set_copied.set(true);
                    }
                >
                    {move || if copied.get() { tr.copied } else { tr.copy_link }}
                </button>
                <button
                    type="button"
                    class="button button--icon"
                    aria-label=tr.theme_toggle
                    aria-pressed=move || (theme.get() == "dark").to_string()
                    on:click=move |_| {
                        let next = if theme.get_untracked() == "dark" { "light" } else { "dark" };
                        browser::storage_set("vramfit-theme", next);
                        set_theme.set(next);
                    }
                >
                    {move || if theme.get() == "dark" { "☀" } else { "☾" }}
                </button>
            </div>
        </header>
    }
}
