//! The page's side of the snapshot worker (crates/snapshot-web): started the first time a
//! snapshot is dropped or an export asked for, one request at a time, and started afresh after
//! it died (a file too large for the browser's memory traps its module; the page goes on).

use std::cell::RefCell;

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};

/// The worker's script, beside the page (scripts/build-snapshot-worker.sh writes it).
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

type Handlers = (
    Closure<dyn Fn(web_sys::MessageEvent)>,
    Closure<dyn Fn(web_sys::ErrorEvent)>,
);

thread_local! {
    static WORKER: RefCell<Option<web_sys::Worker>> = const { RefCell::new(None) };
    /// The handlers the worker answers the current request through.
    static HANDLERS: RefCell<Option<Handlers>> = const { RefCell::new(None) };
    /// The worker holds a snapshot it has read (a fresh one holds none).
    static READ: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the worker holds a snapshot to explain again.
pub fn has_reading() -> bool {
    READ.with(std::cell::Cell::get)
}

fn text(v: &JsValue, key: &str) -> Option<String> {
    Reflect::get(v, &JsValue::from_str(key)).ok()?.as_string()
}

fn worker() -> Result<web_sys::Worker, String> {
    if let Some(w) = WORKER.with(|w| w.borrow().clone()) {
        return Ok(w);
    }
    let w = web_sys::Worker::new(SCRIPT).map_err(|e| format!("{e:?}"))?;
    WORKER.with(|slot| *slot.borrow_mut() = Some(w.clone()));
    Ok(w)
}

/// Ends the worker, so the next request starts a fresh one.
fn forget() {
    READ.with(|r| r.set(false));
    if let Some(w) = WORKER.with(|w| w.borrow_mut().take()) {
        w.terminate();
    }
}

/// Sends `message` (an object with `kind`) and hands each reply to `on_reply` until the last.
fn ask(message: &Object, on_reply: impl Fn(Reply) + 'static) {
    let w = match worker() {
        Ok(w) => w,
        Err(message) => {
            return on_reply(Reply::Failed {
                message,
                crashed: true,
            })
        }
    };
    let on_reply = std::rc::Rc::new(on_reply);
    let reply = on_reply.clone();
    let on_message =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let data = e.data();
            let r = match text(&data, "kind").as_deref() {
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
                _ => {
                    let crashed = Reflect::get(&data, &JsValue::from_str("crashed"))
                        .ok()
                        .and_then(|c| c.as_bool())
                        .unwrap_or(true);
                    if crashed {
                        forget();
                    }
                    Reply::Failed {
                        message: text(&data, "message").unwrap_or_default(),
                        crashed,
                    }
                }
            };
            reply(r);
        });
    // the script itself failed (it could not be fetched, or the worker was killed)
    let reply = on_reply.clone();
    let on_error = Closure::<dyn Fn(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
        forget();
        reply(Reply::Failed {
            message: e.message(),
            crashed: true,
        });
    });
    w.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    w.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    // one pair of handlers per request: kept until the next request's replace them (the page asks
    // again whenever its settings settle, so forgetting each pair would leak one per input)
    HANDLERS.with(|h| *h.borrow_mut() = Some((on_message, on_error)));
    if let Err(e) = w.post_message(message) {
        forget();
        on_reply(Reply::Failed {
            message: format!("{e:?}"),
            crashed: true,
        });
    }
}

fn object(pairs: &[(&str, &JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o
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
