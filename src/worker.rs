//! A module the page runs in a Web Worker (crates/snapshot-web, crates/plan-web): started the
//! first time it is asked for, so its script and wasm are fetched then and not with the page;
//! answering through one pair of handlers at a time; and started afresh after it died (a trap,
//! memory the browser would not give), while the page goes on. Every worker answers a request
//! that failed with `{kind: 'error', message, crashed}`.

use std::cell::RefCell;
use std::thread::LocalKey;

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};

type Handlers = (
    Closure<dyn Fn(web_sys::MessageEvent)>,
    Closure<dyn Fn(web_sys::Event)>,
);

/// A request that failed.
pub struct Failure {
    pub message: String,
    /// The worker is gone (a trap, its script not fetched); `false`: its module's own refusal.
    pub crashed: bool,
}

/// One worker's slot: its script beside the page (scripts/build-worker.sh writes it), and the
/// worker once started.
pub struct Worker {
    script: &'static str,
    running: RefCell<Option<web_sys::Worker>>,
    /// The handlers the worker answers the current request through.
    handlers: RefCell<Option<Handlers>>,
}

impl Worker {
    pub const fn new(script: &'static str) -> Self {
        Worker {
            script,
            running: RefCell::new(None),
            handlers: RefCell::new(None),
        }
    }

    fn started(&self) -> Result<web_sys::Worker, String> {
        if let Some(w) = self.running.borrow().clone() {
            return Ok(w);
        }
        let w = web_sys::Worker::new(self.script).map_err(|e| format!("{e:?}"))?;
        *self.running.borrow_mut() = Some(w.clone());
        Ok(w)
    }

    /// Ends the worker, so the next request starts a fresh one.
    fn forget(&self) {
        if let Some(w) = self.running.borrow_mut().take() {
            w.terminate();
        }
    }
}

/// A member of a worker's message, as text.
pub fn text(v: &JsValue, key: &str) -> Option<String> {
    Reflect::get(v, &JsValue::from_str(key)).ok()?.as_string()
}

/// A message: an object with these members.
pub fn object(pairs: &[(&str, &JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o
}

/// Sends `message` (an object with `kind`) to `slot`'s worker, starting it if need be, and hands
/// each reply to `on_reply` until the next request: its data, or the failure (after which the
/// next request starts a fresh worker where this one crashed).
pub fn ask(
    slot: &'static LocalKey<Worker>,
    message: &Object,
    on_reply: impl Fn(Result<JsValue, Failure>) + 'static,
) {
    let w = match slot.with(Worker::started) {
        Ok(w) => w,
        Err(message) => {
            return on_reply(Err(Failure {
                message,
                crashed: true,
            }))
        }
    };
    let on_reply = std::rc::Rc::new(on_reply);
    let reply = on_reply.clone();
    let on_message =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let data = e.data();
            if text(&data, "kind").as_deref() != Some("error") {
                return reply(Ok(data));
            }
            let crashed = Reflect::get(&data, &JsValue::from_str("crashed"))
                .ok()
                .and_then(|c| c.as_bool())
                .unwrap_or(true);
            if crashed {
                slot.with(Worker::forget);
            }
            reply(Err(Failure {
                message: text(&data, "message").unwrap_or_default(),
                crashed,
            }));
        });
    // the script itself failed (it could not be fetched, or the worker was killed). A script that
    // could not be fetched gets a plain `Event`, not an `ErrorEvent` (Chromium): its `message`
    // getter would throw on it, so the message is read as a property that may be missing
    let reply = on_reply.clone();
    let on_error = Closure::<dyn Fn(web_sys::Event)>::new(move |e: web_sys::Event| {
        slot.with(Worker::forget);
        let message = text(&e, "message")
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| format!("{} could not be loaded", slot.with(|s| s.script)));
        reply(Err(Failure {
            message,
            crashed: true,
        }));
    });
    w.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    w.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    // one pair of handlers per request: kept until the next request's replace them (the page asks
    // again whenever its settings settle, so forgetting each pair would leak one per input)
    slot.with(|s| *s.handlers.borrow_mut() = Some((on_message, on_error)));
    if let Err(e) = w.post_message(message) {
        slot.with(Worker::forget);
        on_reply(Err(Failure {
            message: format!("{e:?}"),
            crashed: true,
        }));
    }
}
