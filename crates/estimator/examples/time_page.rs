//! Development aid: how long the page's analysis and fix ranking take for a query
//! (default: nanoGPT with every field at its maximum).
//!
//!   cargo run --release -p estimator --example time_page [-- 'QUERY']
use estimator::programs::{analyze_page, rank_page_fixes, replay_page};
use estimator::query::PageState;
use std::time::Instant;

const EVERY_FIELD_AT_ITS_MAXIMUM: &str = "n_layer=1024&n_head=1024&n_embd=131072&block_size=1048576&batch_size=1048576&gradient_accumulation_steps=1000000&eval_iters=1000000&eval_interval=1000000000&max_iters=1000000000&vocab_size=4194304&gpu=h100";

fn main() {
    let query = std::env::args()
        .nth(1)
        .unwrap_or_else(|| EVERY_FIELD_AT_ITS_MAXIMUM.to_string());
    let (page, notes) = PageState::from_query(&query);
    println!("notes: {notes:?}");
    let budget = page.budget();
    let t = Instant::now();
    let run = replay_page(&page, &budget).map(|r| r.peak_bytes());
    println!("replay_page: {:?} ({run:?})", t.elapsed());
    let t = Instant::now();
    let a = analyze_page(&page, &budget).is_ok();
    println!("analyze_page: {:?} (ok: {a})", t.elapsed());
    let t = Instant::now();
    let f = rank_page_fixes(&page, &budget, 0.35).is_some();
    println!("rank_page_fixes: {:?} (some: {f})", t.elapsed());
}
