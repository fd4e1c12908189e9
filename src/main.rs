//! Mounts the calculator once the language it opens in is loaded (English is compiled in; the
//! others are fetched first, so the page never flashes English). Everything else lives in the
//! library so tests can reach it.

fn main() {
    console_error_panic_hook::set_once();
    let (lang, _, _) = vramfit_web::state::initial_lang(&vramfit_web::browser::query());
    vramfit_web::i18n::load(lang, |_| leptos::mount::mount_to_body(vramfit_web::App));
}
