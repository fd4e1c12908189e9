//! The page's side of the plan worker (crates/plan-web): started when the plan view first opens,
//! asked again whenever the script, the cards or the language change; each answer names the
//! request it answers, so the view knows whether a newer one is still being planned.

use std::cell::Cell;

use js_sys::Reflect;
use wasm_bindgen::JsValue;

use crate::worker::{self, object, text, Failure, Worker};

/// The worker's script, beside the page (scripts/build-worker.sh writes it).
const SCRIPT: &str = "plan/worker.js";

thread_local! {
    static WORKER: Worker = const { Worker::new(SCRIPT) };
    /// The last request's number.
    static LAST: Cell<u32> = const { Cell::new(0) };
}

/// What the worker answers.
pub enum Reply {
    /// The plan view's results (HTML, escaped by the worker's view), and whether they answer the
    /// latest request (`false`: a newer one is on its way).
    Planned { html: String, latest: bool },
    /// The worker could not plan: it could not be fetched or started, or it died.
    Failed(String),
}

/// Plans `script` for the cards the page's settings name (`query`), in language `lang` (a tag).
pub fn plan(query: &str, script: &str, lang: &str, on_reply: impl Fn(Reply) + 'static) {
    let id = LAST.with(|l| l.get().wrapping_add(1));
    LAST.with(|l| l.set(id));
    let message = object(&[
        ("kind", &"plan".into()),
        ("id", &id.into()),
        ("query", &query.into()),
        ("script", &script.into()),
        ("lang", &lang.into()),
    ]);
    worker::ask(&WORKER, &message, move |reply| {
        on_reply(match reply {
            Ok(data) => {
                let answered = Reflect::get(&data, &JsValue::from_str("id"))
                    .ok()
                    .and_then(|v| v.as_f64());
                Reply::Planned {
                    html: text(&data, "html").unwrap_or_default(),
                    latest: answered == Some(f64::from(LAST.with(Cell::get))),
                }
            }
            Err(Failure { message, .. }) => Reply::Failed(message),
        })
    });
}
