//! The page's snapshot worker (`worker.js` beside it runs it in a Web Worker): a snapshot a user
//! drops on the page is read here, off the page's thread, and vramfit's run for the page's
//! settings is written here as a snapshot. A module of its own, fetched the first time a
//! snapshot is asked for: the pickle reader, the history and the JSON writer are not part of
//! what every visitor downloads.
//!
//! The view is rendered here too (view.rs), in the page's language: the page's own module carries
//! only the panel's controls.
//!
//! Errors come back as text the page shows; nothing a file holds can panic the reader (its
//! tests feed it thousands of broken files), and should the worker die anyway (a file too large
//! for the browser's memory), the page stays as it was and says so.

pub mod view;

use std::cell::RefCell;

use estimator::programs::{analyze_page, replay_page};
use estimator::query::PageState;
use vramfit_i18n::Lang;
use vramfit_snapshot::read::{read_pickle, unpack};
use vramfit_snapshot::{export, follow};
use wasm_bindgen::prelude::*;

use view::Measured;

thread_local! {
    /// The last snapshot read, and its file's name: the page asks for its view again whenever
    /// its settings or its language change.
    static READING: RefCell<Option<(String, Measured)>> = const { RefCell::new(None) };
}

/// The largest pickle the page reads (unpacked). A reading holds about 16 times the pickle's size
/// at its peak (measured natively: a 5.6 MB pickle, 91 MB), and a browser gives a module at most
/// 4 GiB of memory, some 2: past this the command line reads it (`vramfit --snapshot FILE`).
pub const LIMIT_BYTES: u64 = 128 << 20;

/// [`LIMIT_BYTES`], for worker.js: a file larger than it is refused before it is read at all.
#[wasm_bindgen]
pub fn limit_bytes() -> f64 {
    LIMIT_BYTES as f64
}

/// What a gzip file's trailer says its pickle's size is (modulo 4 GiB).
fn trailer_size(bytes: &[u8]) -> u64 {
    match bytes {
        [.., a, b, c, d] => u64::from(u32::from_le_bytes([*a, *b, *c, *d])),
        _ => 0,
    }
}

/// Reads a snapshot file's bytes (the pickle, or gzipped) and keeps what [`view`] shows;
/// `progress` is called with each stage's name as it starts (`read`, `follow`, `explain`).
/// An error is the reader's reason (`empty`: a snapshot without events; `too_large N L`: N bytes of
/// pickle, more than L = [`LIMIT_BYTES`]).
#[wasm_bindgen]
pub fn read_snapshot(file: &str, bytes: &[u8], progress: &js_sys::Function) -> Result<(), String> {
    let stage = |name: &str| {
        // a progress callback that throws changes nothing here
        let _ = progress.call1(&JsValue::NULL, &JsValue::from_str(name));
    };
    stage("read");
    let Some(pickle) = unpack(bytes, LIMIT_BYTES).map_err(|e| e.to_string())? else {
        let size = (bytes.len() as u64)
            .max(trailer_size(bytes))
            .max(LIMIT_BYTES + 1);
        return Err(format!("too_large {size} {LIMIT_BYTES}"));
    };
    let snap = read_pickle(&pickle).map_err(|e| e.to_string())?;
    drop(pickle);
    if snap.events.is_empty() {
        return Err("empty".into());
    }
    stage("follow");
    let history = follow(&snap);
    stage("explain");
    let json = vramfit_report::snapshot::to_json(&snap, &history);
    let measured = Measured::from_json(&json).ok_or("no reading")?;
    READING.with(|r| *r.borrow_mut() = Some((file.to_string(), measured)));
    Ok(())
}

/// The last snapshot read, explained in language `lang` (a tag: `de`, `zh-Hans`) beside
/// vramfit's prediction for the page's settings (`query`, the page URL's query string); empty
/// before any.
#[wasm_bindgen]
pub fn view(query: &str, lang: &str) -> String {
    let tr = Lang::from_tag(lang).unwrap_or(Lang::En).bundled();
    vramfit_i18n::format::use_separators(&tr.bar_words());
    let (page, _) = PageState::from_query(query);
    let analysis = analyze_page(&page, &page.budget()).ok();
    READING.with(|r| {
        r.borrow().as_ref().map_or(String::new(), |(file, m)| {
            view::view(tr, file, m, analysis.as_ref().map(|a| (a, a.program())))
        })
    })
}
/// vramfit's run for the page's settings (`query`, the page URL's query string) as a snapshot
/// pickle, the file pytorch.org/memory_viz opens.
#[wasm_bindgen]
pub fn export_snapshot(query: &str) -> Result<Vec<u8>, String> {
    let (page, _) = PageState::from_query(query);
    let budget = page.budget();
    let run = replay_page(&page, &budget).map_err(|e| e.to_string())?;
    let snap = export::snapshot(&run, page.program.script());
    Ok(export::to_pickle(&snap))
}
