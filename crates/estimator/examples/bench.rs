//! The estimator's speed, native (scripts/bench.sh runs it and merges its JSON into
//! target/bench.json): the closed-form estimate, the replay through the allocator simulation
//! (per simulated training iteration), and the fix ranking, closed-form and simulated.
//!
//!   cargo run --release -p estimator --example bench [-- OUT.json]

use std::hint::black_box;
use std::time::Instant;

use estimator::fixes::rank_fixes;
use estimator::query::PageState;
use estimator::sequence::STEADY_ITERATIONS;
use estimator::{analyze, estimate};

/// Seconds per call of `f`, the median of `rounds` rounds of `calls` calls each.
fn time(rounds: usize, calls: usize, mut f: impl FnMut()) -> f64 {
    let mut per_call: Vec<f64> = (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            t.elapsed().as_secs_f64() / calls as f64
        })
        .collect();
    per_call.sort_by(f64::total_cmp);
    per_call[rounds / 2]
}

fn main() {
    let out = std::env::args().nth(1);
    // the page's default run, and the seeds' out-of-memory run (eager, 12 GB card)
    let cases = [
        ("gpt2_124m_default_rtx3060", ""),
        (
            "gpt2_124m_eager_b8_rtx3060",
            "batch_size=8&compile=False&gpu=rtx3060",
        ),
    ];
    let mut rows = Vec::new();
    for (name, query) in cases {
        let (page, _) = PageState::from_query(query);
        let (cfg, budget) = (page.configs.nanogpt.clone(), page.budget());
        let estimate_s = time(21, 200, || {
            black_box(estimate(black_box(&cfg), &budget.gpu).ok());
        });
        let analyze_s = time(11, 10, || {
            black_box(analyze(black_box(&cfg), &budget).ok());
        });
        // one replay covers model load, estimate_loss(), iteration 0 and the steady iterations
        let iterations = 1 + STEADY_ITERATIONS;
        let fixes_closed_s = time(11, 20, || {
            black_box(rank_fixes(black_box(&cfg), &budget, 0.35, false));
        });
        let fixes_exact_s = time(5, 1, || {
            black_box(rank_fixes(black_box(&cfg), &budget, 0.35, true));
        });
        rows.push(format!(
            "{{\"case\":\"{name}\",\"estimate_us\":{:.2},\"estimate_plus_fixes_closed_form_us\":{:.2},\"replay_ms\":{:.3},\"replay_per_iteration_ms\":{:.3},\"fixes_closed_form_us\":{:.2},\"fixes_simulated_ms\":{:.2}}}",
            estimate_s * 1e6,
            (estimate_s + fixes_closed_s) * 1e6,
            analyze_s * 1e3,
            analyze_s * 1e3 / f64::from(iterations),
            fixes_closed_s * 1e6,
            fixes_exact_s * 1e3,
        ));
    }
    let json = format!("[{}]", rows.join(","));
    match out {
        Some(path) => {
            if let Err(e) = std::fs::write(&path, &json) {
                eprintln!("bench: cannot write {path}: {e}");
                std::process::exit(1);
            }
        }
        None => println!("{json}"),
    }
}
