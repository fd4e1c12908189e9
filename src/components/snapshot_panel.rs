//! Bring your own run: a PyTorch memory snapshot dropped on the panel (or chosen) is read in a
//! worker, in this browser, and explained there beside the page's prediction (its view is the
//! worker's, crates/snapshot-web: this module carries only the controls); and the page's run is
//! written as a snapshot to download, for pytorch.org/memory_viz.

use leptos::prelude::*;

use crate::format;
use crate::i18n::{fill, use_strings, Strings};
use crate::snapshot_worker::{self, Reply};
use crate::state::use_app;

/// What the panel says under its controls.
#[derive(Clone, Debug, PartialEq)]
enum Status {
    Idle,
    Busy(String),
    Said(String),
    Failed(String),
}

fn stage_word(tr: &Strings, stage: &str) -> &'static str {
    match stage {
        "read" => tr.snapshot_stage_read,
        "follow" => tr.snapshot_stage_follow,
        "explain" => tr.snapshot_stage_explain,
        _ => tr.snapshot_stage_load,
    }
}

/// Why `file` was not read, in the page's words: the worker's codes (`empty`, `too_large N L`), the
/// reader's own reason, or the worker's end.
fn refusal(tr: &Strings, file: &str, message: &str, crashed: bool) -> String {
    if crashed {
        return fill(tr.snapshot_crashed, &[("file", file), ("why", message)]);
    }
    if message == "empty" {
        return fill(tr.snapshot_empty, &[("file", file)]);
    }
    let mut sizes = message
        .strip_prefix("too_large ")
        .into_iter()
        .flat_map(|n| n.split(' ').filter_map(|b| b.parse::<u128>().ok()));
    if let (Some(size), Some(limit)) = (sizes.next(), sizes.next()) {
        return fill(
            tr.snapshot_too_large,
            &[
                ("file", file),
                ("size", &format::bytes(size)),
                ("limit", &format::bytes(limit)),
            ],
        );
    }
    fill(tr.snapshot_refused, &[("file", file), ("why", message)])
}

#[component]
pub fn SnapshotPanel() -> impl IntoView {
    let app = use_app();
    let tr = use_strings();
    let status = RwSignal::new(Status::Idle);
    let html = RwSignal::new(String::new());
    let dragging = RwSignal::new(false);

    let read = move |file: web_sys::File| {
        let name = file.name();
        status.set(Status::Busy(fill(
            tr.snapshot_progress,
            &[("file", &name), ("stage", tr.snapshot_stage_load)],
        )));
        let query = app.page.with_untracked(|p| p.to_query());
        snapshot_worker::read(&file, &query, tr.lang, move |reply| match reply {
            Reply::Progress(stage) => status.set(Status::Busy(fill(
                tr.snapshot_progress,
                &[("file", &name), ("stage", stage_word(tr, &stage))],
            ))),
            Reply::View(h) => {
                html.set(h);
                status.set(Status::Idle);
            }
            Reply::Failed { message, crashed } => {
                status.set(Status::Failed(refusal(tr, &name, &message, crashed)))
            }
            Reply::Exported(_) => {}
        });
    };
    // the comparison follows the settings once they settle (and a language switch, which builds
    // the panel anew, asks at once)
    Effect::new(move |_| {
        let query = app.settled.with(|p| p.to_query());
        if snapshot_worker::has_reading() {
            snapshot_worker::view(&query, tr.lang, move |reply| {
                if let Reply::View(h) = reply {
                    html.set(h);
                }
            });
        }
    });
    let export = move |_| {
        let query = app.page.with_untracked(|p| p.to_query());
        let program = app.page.with_untracked(|p| p.program);
        status.set(Status::Busy(tr.snapshot_exporting.to_string()));
        snapshot_worker::export(&query, move |reply| match reply {
            Reply::Exported(bytes) => {
                let name = format!("vramfit-{}.pickle", program.id());
                snapshot_worker::download(&bytes, &name);
                status.set(Status::Said(fill(
                    tr.snapshot_exported,
                    &[
                        ("file", &name),
                        ("size", &format::bytes(bytes.len() as u128)),
                    ],
                )));
            }
            Reply::Failed { message, .. } => status.set(Status::Failed(message)),
            _ => {}
        });
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        let file = ev
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0));
        if let Some(f) = file {
            read(f);
        }
    };
    let on_choose = move |ev: web_sys::Event| {
        let input = event_target::<web_sys::HtmlInputElement>(&ev);
        if let Some(f) = input.files().and_then(|f| f.get(0)) {
            read(f);
        }
        // the same file chosen again reads again
        input.set_value("");
    };
    let status_text = move || match status.get() {
        Status::Idle => String::new(),
        Status::Busy(s) | Status::Said(s) | Status::Failed(s) => s,
    };
    let status_class = move || match status.get() {
        Status::Failed(_) => "snapshot__status snapshot__status--error",
        _ => "snapshot__status",
    };
    view! {
        <section
            class="snapshot"
            id="snapshot"
            aria-labelledby="snapshot-heading"
            data-testid="snapshot"
            class:snapshot--dragging=move || dragging.get()
            on:dragover=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=on_drop
        >
            <h2 id="snapshot-heading" class="snapshot__heading">{tr.snapshot_heading}</h2>
            <p class="snapshot__intro">{tr.snapshot_intro}</p>
            <div class="snapshot__actions">
                <label class="button snapshot__choose">
                    {tr.snapshot_choose}
                    <input
                        type="file"
                        class="snapshot__file"
                        data-testid="snapshot-file"
                        accept=".pickle,.pkl,.gz,application/octet-stream,application/gzip"
                        on:change=on_choose
                    />
                </label>
                <button
                    type="button"
                    class="button button--quiet"
                    data-testid="snapshot-export"
                    title=tr.snapshot_export_help
                    disabled=move || app.analysis.with(|a| a.is_err())
                    on:click=export
                >
                    {tr.snapshot_export}
                </button>
            </div>
            <p class=status_class data-testid="snapshot-status" role="status">{status_text}</p>
            <div class="snapshot__explained" data-testid="snapshot-explained" inner_html=move || html.get()></div>
        </section>
    }
}
