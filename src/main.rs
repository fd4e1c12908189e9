//! Mounts the calculator. Everything else lives in the library so tests can reach it.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(vramfit_web::App);
}
