//! `vramfit --program=build-nanogpt`: train_gpt2.py's constants by their names, its asserts on
//! bad input, a measured run, and a torchrun line that picks the program.

#![allow(clippy::unwrap_used)]

mod common;

use common::{json, run};

#[test]
fn a_measured_run_and_the_contract() {
    // bng_e_b8_t1024_ga1 (data/measured/build-nanogpt.jsonl, H100, default allocator)
    let v = json(&[
        "--program=build-nanogpt",
        "--B=8",
        "--total_batch_size=8192",
        "--gpu=h100",
    ]);
    assert_eq!(v["program"], "build-nanogpt");
    assert_eq!(v["grad_accum_steps"], 1);
    let steady = v["peak_bytes"]["train_steady"].as_f64().unwrap();
    let measured = 9088.0 * 1048576.0;
    assert!((steady - measured).abs() / measured < 0.005, "{steady}");
    let comps: u64 = v["components_bytes"]
        .as_object()
        .unwrap()
        .values()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(comps, v["peak_bytes"]["overall"].as_u64().unwrap());
}

#[test]
fn the_defaults_need_sixty_gib_and_a_24_gb_card_gets_b_16() {
    let v = json(&["--program=build-nanogpt", "--gpu=rtx4090"]);
    let gib = v["peak_bytes"]["overall"].as_f64().unwrap() / (1u64 << 30) as f64;
    assert!((58.0..61.0).contains(&gib), "{gib}");
    assert_eq!(v["verdict"]["fits"], false);
    assert_eq!(v["fixes"][0]["edits"][0], "B = 16  # was 64");
    // a torchrun line names the script; its constants stay the script's
    let t = json(&[
        "torchrun",
        "--standalone",
        "--nproc_per_node=1",
        "train_gpt2.py",
    ]);
    assert_eq!(t["program"], "build-nanogpt");
}

#[test]
fn the_scripts_asserts_on_bad_input() {
    for (args, says) in [
        (
            vec!["--program=build-nanogpt", "--B=48"],
            "divisible by B * T * ddp_world_size",
        ),
        (
            vec!["--program=build-nanogpt", "--T=2048"],
            "block size is only 1024",
        ),
        (vec!["--program=build-nanogpt", "--B=x"], "B=x"),
        (
            vec!["--program=build-nanogpt", "--batch_size=8"],
            "batch_size",
        ),
        (
            vec!["python", "train_gpt2.py", "--B=8"],
            "takes no arguments",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
