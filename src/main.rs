//! Mounts the calculator once the language it opens in is loaded (English is compiled in; the
//! others are fetched first, so the page never flashes English). Everything else lives in the
//! library so tests can reach it.

fn main() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        // a mark on <html> that a panic happened: every engine's test driver can read it, where
        // only some of them can read the console
        // (with the message, so a test in an engine without a console still says what failed).
        // The first panic only: it is the cause. A panic traps the module without unwinding, so
        // a task it stopped stays borrowed and the next wake of that task panics again with
        // js-sys' "RefCell already borrowed", which would hide the first.
        static FIRST: std::sync::Once = std::sync::Once::new();
        FIRST.call_once(|| {
            vramfit_web::browser::set_root_attribute("data-panicked", &info.to_string())
        });
    }));
    let (lang, _, _) = vramfit_web::state::initial_lang(&vramfit_web::browser::query());
    vramfit_web::i18n::load(lang, |_| {
        leptos::mount::mount_to_body(vramfit_web::App);
        // in the same task as the mount, so no frame shows both answers or neither
        vramfit_web::browser::remove_element(vramfit_first_bar::ID);
    });
}
