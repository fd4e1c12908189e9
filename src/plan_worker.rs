//! The page's side of the plan worker (crates/plan-web): started when the plan view first opens,
//! asked again whenever the script, the cards or the language change.
//!
//! One request is in the worker at a time and at most one waits: a change made while a plan is
//! being made replaces the one waiting, so a worker busy with a long script (a plan replays every
//! stage, ~20 ms each natively on a small card) never works through a queue of stale ones. So an
//! answer is the latest exactly when no request is waiting.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::Object;

use crate::worker::{self, object, text, Failure, Worker};

/// The worker's script, beside the page (scripts/build-worker.sh writes it).
const SCRIPT: &str = "plan/worker.js";

type OnReply = Rc<dyn Fn(Reply)>;

thread_local! {
    static WORKER: Worker = const { Worker::new(SCRIPT) };
    /// A request is in the worker.
    static IN_FLIGHT: Cell<bool> = const { Cell::new(false) };
    /// The request asked for while another was in the worker (only the latest is kept).
    static WAITING: RefCell<Option<(Object, OnReply)>> = const { RefCell::new(None) };
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
    let message = object(&[
        ("kind", &"plan".into()),
        ("query", &query.into()),
        ("script", &script.into()),
        ("lang", &lang.into()),
    ]);
    let on_reply: OnReply = Rc::new(on_reply);
    if IN_FLIGHT.with(Cell::get) {
        WAITING.with(|w| *w.borrow_mut() = Some((message, on_reply)));
    } else {
        send(message, on_reply);
    }
}

fn send(message: Object, on_reply: OnReply) {
    IN_FLIGHT.with(|f| f.set(true));
    worker::ask(&WORKER, &message, move |reply| {
        IN_FLIGHT.with(|f| f.set(false));
        on_reply(match reply {
            Ok(data) => Reply::Planned {
                html: text(&data, "html").unwrap_or_default(),
                latest: WAITING.with(|w| w.borrow().is_none()),
            },
            Err(Failure { message, .. }) => Reply::Failed(message),
        });
        if let Some((next, its_reply)) = WAITING.with(|w| w.borrow_mut().take()) {
            send(next, its_reply);
        }
    });
}
