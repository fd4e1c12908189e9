//! Fetching a language file (`i18n/{tag}.txt`, beside the page; the service worker caches it for
//! offline use) and keeping it for the session.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use super::{en, parse, Lang};

#[wasm_bindgen]
extern "C" {
    /// A promise seen only as something with `then(ok, err)`, taking plain functions.
    type Thenable;
    #[wasm_bindgen(method, js_name = then)]
    fn then_call(this: &Thenable, ok: &js_sys::Function, err: &js_sys::Function);
}

type Done = Rc<RefCell<Option<Box<dyn FnOnce(bool)>>>>;

/// Makes `lang`'s strings available, then calls `done(true)`; `done(false)` when the file could
/// not be fetched (the page stays in the language it has). Immediate when already loaded.
pub fn load(lang: Lang, done: impl FnOnce(bool) + 'static) {
    if lang.is_ready() {
        done(true);
        return;
    }
    let done: Done = Rc::new(RefCell::new(Some(Box::new(done))));
    let finish = {
        let done = done.clone();
        move |ok: bool| {
            if let Some(f) = done.borrow_mut().take() {
                f(ok);
            }
        }
    };
    let Some(window) = web_sys::window() else {
        finish(false);
        return;
    };
    let fail = {
        let finish = finish.clone();
        Closure::<dyn FnMut(JsValue)>::new(move |_| finish(false))
    };
    let on_text = {
        let finish = finish.clone();
        Closure::<dyn FnMut(JsValue)>::new(move |text: JsValue| {
            let Some(text) = text.as_string() else {
                finish(false);
                return;
            };
            // Leaked once per language (at most four), so every string can be `&'static`.
            let text: &'static str = Box::leak(text.into_boxed_str());
            let (strings, problems) = parse(text, Some(en()));
            if !problems.is_empty() {
                web_sys::console::warn_1(&JsValue::from_str(&format!(
                    "vramfit: i18n/{}.txt: {} problem(s), first: {}",
                    lang.tag(),
                    problems.len(),
                    problems[0]
                )));
            }
            lang.store(strings);
            finish(true);
        })
    };
    let on_response = {
        let finish = finish.clone();
        let fail = fail.as_ref().clone();
        let on_text = on_text.as_ref().clone();
        Closure::<dyn FnMut(JsValue)>::new(move |response: JsValue| {
            let text = response
                .dyn_into::<web_sys::Response>()
                .ok()
                .filter(web_sys::Response::ok)
                .and_then(|r| r.text().ok());
            match text {
                Some(promise) => {
                    promise
                        .unchecked_ref::<Thenable>()
                        .then_call(on_text.unchecked_ref(), fail.unchecked_ref());
                }
                None => finish(false),
            }
        })
    };
    window
        .fetch_with_str(&format!("i18n/{}.txt", lang.tag()))
        .unchecked_ref::<Thenable>()
        .then_call(
            on_response.as_ref().unchecked_ref(),
            fail.as_ref().unchecked_ref(),
        );
    // The callbacks live until the browser calls them; a handful per language chosen.
    on_response.forget();
    on_text.forget();
    fail.forget();
}
