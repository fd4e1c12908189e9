//! The page's plan worker (`worker.js` beside it runs it in a Web Worker): a whole nanochat run
//! script planned for the page's cards, and the plan view's results rendered in the page's
//! language. A module of its own, fetched the first time the plan view opens: the stages' models
//! and the plan's searches are not part of what every visitor downloads (~31 KB of Brotli off the
//! page's module), and a plan (every stage replayed at several batch sizes, a depth search on a
//! small card) runs off the page's thread. The page's own module carries the view's inputs only.
//!
//! The numbers are the CLI's `vramfit plan` (one function, `nanochat::plan::plan`).

pub mod view;

use estimator::programs::nanochat::plan::{plan as plan_script, Hardware};
use estimator::query::PageState;
use vramfit_i18n::Lang;
use wasm_bindgen::prelude::*;

/// The plan view's results (HTML, every text escaped) for `script` on the cards the page's
/// settings name (`query`, the page URL's query string: the card, its usable memory, the plan's
/// GPU count), in language `lang` (a tag: `de`, `zh-Hans`; English for any other).
#[wasm_bindgen]
pub fn plan(query: &str, script: &str, lang: &str) -> String {
    let tr = Lang::from_tag(lang).unwrap_or(Lang::En).bundled();
    vramfit_i18n::format::use_separators(&tr.bar_words());
    let hw = hardware(query);
    view::results(tr, &plan_script(script, &hw, None, None))
}

/// The cards a page's query names: its card's usable memory, and the plan's count of them.
pub fn hardware(query: &str) -> Hardware {
    let (page, _) = PageState::from_query(query);
    Hardware {
        budget: page.budget(),
        gpus: page.plan.unwrap_or_default().gpus,
    }
}
