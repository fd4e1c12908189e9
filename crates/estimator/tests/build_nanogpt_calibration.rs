//! build-nanogpt's train_gpt2.py against every measured run of it (data/measured/
//! build-nanogpt.jsonl: the real script on an H100 with PyTorch 2.11, tools/build-nanogpt-probe):
//! each phase of the replayed run within median 0.5 % and worst 3 % of
//! `torch.cuda.max_memory_allocated()`. The runs held out at random before the model was written
//! (build-nanogpt-heldout.jsonl) are held to the same targets.

#![allow(clippy::unwrap_used)]

mod common;

use common::{assert_within_targets, bng_config as config, project_runs, score};

use estimator::programs::build_nanogpt::analyze;
use estimator::{gpu, Budget};

fn check(file: &str) {
    let budget = Budget::for_gpu(gpu::find("h100").unwrap());
    let scored = score(&project_runs(file), |run| {
        analyze(&config(run), &budget).unwrap().run
    });
    eprintln!("{}", scored.1);
    assert_within_targets(scored, 0.03);
}

#[test]
fn measured_runs_within_targets() {
    check("build-nanogpt.jsonl");
}

#[test]
fn held_out_runs_within_targets() {
    check("build-nanogpt-heldout.jsonl");
}
