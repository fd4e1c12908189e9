//! The page's side of the snapshot worker (crates/snapshot-web): started the first time a
//! snapshot is dropped or an export asked for, one request at a time, and started afresh after
//! it died (a file too large for the browser's memory traps its module; the page goes on).

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use crate::worker::{self, object, text, Failure, Worker};

/// The worker's script, beside the page (scripts/build-worker.sh writes it).
const SCRIPT: &str = "snapshot/worker.js";

/// What the worker answers.
pub enum Reply {
    /// A stage started: `load`, `read`, `follow`, `explain`.
    Progress(String),
    /// The last snapshot read, explained (HTML, escaped by the worker's view).
    View(String),
    /// vramfit's run as a snapshot pickle.
    Exported(Vec<u8>),
    /// Refused (`crashed` false: the reader's reason) or failed (the worker is gone).
    Failed { message: String, crashed: bool },
}

thread_local! {
    static WORKER: Worker = const { Worker::new(SCRIPT) };
    /// The worker holds a snapshot it has read (a fresh one holds none).
    static READ: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the worker holds a snapshot to explain again.
pub fn has_reading() -> bool {
    READ.with(std::cell::Cell::get)
}

/// Sends `message` and hands each reply to `on_reply`, in the snapshot worker's words.
fn ask(message: &Object, on_reply: impl Fn(Reply) + 'static) {
    worker::ask(&WORKER, message, move |reply| {
        let r = match reply {
            Ok(data) => match text(&data, "kind").as_deref() {
                Some("progress") => Reply::Progress(text(&data, "stage").unwrap_or_default()),
                Some("view") => {
                    READ.with(|r| r.set(true));
                    Reply::View(text(&data, "html").unwrap_or_default())
                }
                Some("export") => match Reflect::get(&data, &JsValue::from_str("bytes")) {
                    Ok(b) => Reply::Exported(Uint8Array::new(&b).to_vec()),
                    Err(_) => Reply::Failed {
                        message: "no bytes".into(),
                        crashed: true,
                    },
                },
                other => Reply::Failed {
                    message: format!("an answer of kind {other:?}"),
                    crashed: false,
                },
            },
            Err(Failure { message, crashed }) => {
                if crashed {
                    // a fresh worker holds no snapshot
                    READ.with(|r| r.set(false));
                }
                Reply::Failed { message, crashed }
            }
        };
        on_reply(r);
    });
}

/// Reads `file` in the worker, then explains it beside the prediction for the page's settings
/// (`query`) in language `lang` (a tag).
pub fn read(file: &web_sys::File, query: &str, lang: &str, on_reply: impl Fn(Reply) + 'static) {
    ask(
        &object(&[
            ("kind", &"read".into()),
            ("file", file.as_ref()),
            ("query", &query.into()),
            ("lang", &lang.into()),
        ]),
        on_reply,
    );
}

/// The last snapshot read explained again, for the page's settings now.
pub fn view(query: &str, lang: &str, on_reply: impl Fn(Reply) + 'static) {
    ask(
        &object(&[
            ("kind", &"view".into()),
            ("query", &query.into()),
            ("lang", &lang.into()),
        ]),
        on_reply,
    );
}

/// Writes vramfit's run for the page's settings (`query`) as a snapshot, in the worker.
pub fn export(query: &str, on_reply: impl Fn(Reply) + 'static) {
    ask(
        &object(&[("kind", &"export".into()), ("query", &query.into())]),
        on_reply,
    );
}

/// Offers `bytes` as a download named `name`.
pub fn download(bytes: &[u8], name: &str) {
    let parts = js_sys::Array::of1(&Uint8Array::from(bytes));
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence(&parts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let anchor = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("a").ok())
        .and_then(|a| a.dyn_into::<web_sys::HtmlAnchorElement>().ok());
    if let Some(a) = anchor {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    // not at once: Firefox cancels a download whose URL is revoked before it starts
    gloo_timers::callback::Timeout::new(60_000, move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    })
    .forget();
}
