//! The language picker in the header. Choosing a language fetches its strings (once), then
//! re-renders the page in it and remembers the choice on this device.

use leptos::prelude::*;

use crate::browser;
use crate::i18n::{use_strings, Lang};
use crate::state::use_app;

#[component]
pub fn LangPicker() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let (failed, set_failed) = signal(false);
    let (loading, set_loading) = signal(false);
    view! {
        <div class="lang">
            <select
                class="lang__select"
                aria-label=tr.lang_label
                data-testid="lang"
                aria-busy=move || loading.get().to_string()
                on:change:target=move |ev| {
                    let Some(lang) = Lang::from_tag(&ev.target().value()) else { return };
                    set_loading.set(true);
                    crate::i18n::load(
                        lang,
                        move |ok| {
                            set_loading.set(false);
                            set_failed.set(!ok);
                            if ok {
                                browser::storage_set(Lang::STORAGE_KEY, lang.tag());
                                app.lang.set(lang);
                            }
                        },
                    );
                }
            >
                {Lang::ALL
                    .iter()
                    .map(|&l| {
                        view! {
                            <option value=l.tag() selected=move || app.lang.get() == l lang=l.tag()>
                                {l.native_name()}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
            <span class="lang__status" role="status">
                {move || {
                    if loading.get() {
                        tr.lang_loading
                    } else if failed.get() {
                        tr.lang_failed
                    } else {
                        ""
                    }
                }}
            </span>
        </div>
    }
}
