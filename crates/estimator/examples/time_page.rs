//! Development aid: how long the page's analysis and fix ranking take for a query
//! (default: nanoGPT with every field at its maximum), or, given `-`, for every query on
//! standard input, one per line, listing the slowest (to find what could stall the page).
//!
//!   cargo run --release -p estimator --example time_page [-- 'QUERY' | -]
use estimator::programs::{analyze_page, rank_page_fixes, replay_page};
use estimator::query::PageState;
use std::io::BufRead;
use std::time::{Duration, Instant};

const EVERY_FIELD_AT_ITS_MAXIMUM: &str = "n_layer=1024&n_head=1024&n_embd=131072&block_size=1048576&batch_size=1048576&gradient_accumulation_steps=1000000&eval_iters=1000000&eval_interval=1000000000&max_iters=1000000000&vocab_size=4194304&gpu=h100";

/// What the page computes for one query, each step timed: replay, analysis, fix ranking.
fn time_query(query: &str, verbose: bool) -> [Duration; 3] {
    let (page, notes) = PageState::from_query(query);
    let budget = page.budget();
    let t = Instant::now();
    let run = replay_page(&page, &budget).map(|r| r.peak_bytes());
    let replay = t.elapsed();
    let t = Instant::now();
    let a = analyze_page(&page, &budget).is_ok();
    let analysis = t.elapsed();
    let t = Instant::now();
    let f = rank_page_fixes(&page, &budget, 0.35).is_some();
    let fixes = t.elapsed();
    if verbose {
        println!("notes: {notes:?}");
        println!("replay_page: {replay:?} ({run:?})");
        println!("analyze_page: {analysis:?} (ok: {a})");
        println!("rank_page_fixes: {fixes:?} (some: {f})");
    }
    [replay, analysis, fixes]
}

fn main() {
    let arg = std::env::args().nth(1);
    if arg.as_deref() != Some("-") {
        time_query(arg.as_deref().unwrap_or(EVERY_FIELD_AT_ITS_MAXIMUM), true);
        return;
    }
    let mut times: Vec<(Duration, [Duration; 3], String)> = std::io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .map(|q| {
            let t = time_query(&q, false);
            (t.iter().sum(), t, q)
        })
        .collect();
    times.sort_by_key(|t| std::cmp::Reverse(t.0));
    let total: Duration = times.iter().map(|t| t.0).sum();
    println!(
        "{} queries, {total:?} in all; the slowest (replay, analysis, fixes):",
        times.len()
    );
    for (sum, [r, a, f], q) in times.iter().take(15) {
        println!("{sum:>10.1?}  {r:>9.1?} {a:>9.1?} {f:>9.1?}  ?{q}");
    }
}
