//! The page's snapshot worker (`worker.js` beside it runs it in a Web Worker): a snapshot a user
//! drops on the page is read here, off the page's thread, and vramfit's run for the page's
//! settings is written here as a snapshot. A module of its own, fetched the first time a
//! snapshot is asked for: the pickle reader, the history and the JSON writer are not part of
//! what every visitor downloads.
//!
//! Errors come back as text the page shows; nothing a file holds can panic the reader (its
//! tests feed it thousands of broken files), and should the worker die anyway (a file too large
//! for the browser's memory), the page stays as it was and says so.

use estimator::programs::replay_page;
use estimator::query::PageState;
use vramfit_snapshot::{export, follow, read};
use wasm_bindgen::prelude::*;

/// Reads a snapshot file's bytes (the pickle, or gzipped) into the JSON of
/// `vramfit_report::snapshot::to_json`; `progress` is called with each stage's name as it
/// starts (`read`, `follow`, `explain`).
#[wasm_bindgen]
pub fn read_snapshot(bytes: &[u8], progress: &js_sys::Function) -> Result<String, String> {
    let stage = |name: &str| {
        // a progress callback that throws changes nothing here
        let _ = progress.call1(&JsValue::NULL, &JsValue::from_str(name));
    };
    stage("read");
    let snap = read(bytes).map_err(|e| e.to_string())?;
    if snap.events.is_empty() {
        return Err("empty".into());
    }
    stage("follow");
    let history = follow(&snap);
    stage("explain");
    Ok(vramfit_report::snapshot::to_json(&snap, &history).to_string())
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
