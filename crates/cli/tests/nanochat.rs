//! `vramfit --program=nanochat`: base_train.py's flags as it spells them, its launch lines, its
//! assertion texts on bad input, and the JSON contract shared with train.py's.

#![allow(clippy::unwrap_used)]

mod common;

use common::{json, run};

use serde_json::Value;

/// nc_cal_05 of data/measured/nanochat.jsonl: d8 B8 T2048 SSL, 4 micro-steps, measured
/// on an H200 with the default allocator.
const NC_CAL_05: &[&str] = &[
    "--program=nanochat",
    "--depth=8",
    "--device-batch-size=8",
    "--max-seq-len=2048",
    "--window-pattern=SSL",
    "--total-batch-size=65536",
    "--num-iterations=3",
    "--eval-every=1000",
    "--eval-tokens=32768",
    "--core-metric-every=-1",
    "--sample-every=-1",
    "--warmup-steps=1",
    "--allocator=default",
    "--gpu=h200",
];

#[test]
fn json_contract_and_a_measured_run() {
    let v = json(NC_CAL_05);
    assert_eq!(v["program"], "nanochat");
    assert_eq!(v["grad_accum_steps"], 4);
    assert_eq!(v["model"]["model_dim"], 512);
    let peak = &v["peak_bytes"];
    let measured = [
        ("train_steady", 5_057_536_512.0),
        ("train_first_iter", 4_486_906_880.0),
        ("eval", 2_103_443_456.0),
    ];
    for (k, m) in measured {
        let p = peak[k].as_f64().unwrap();
        assert!((p - m).abs() / m < 0.005, "{k}: {p} vs {m}");
    }
    let comps: u64 = v["components_bytes"]
        .as_object()
        .unwrap()
        .values()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(comps, peak["overall"].as_u64().unwrap());
    assert_eq!(v["verdict"]["fits"], true);
    assert!(v["fixes"].is_array());
}

#[test]
fn a_launch_line_picks_the_program() {
    let direct = json(&["--program=nanochat", "--depth=4", "--device-batch-size=4"]);
    let python = json(&[
        "python",
        "-m",
        "scripts.base_train",
        "--depth",
        "4",
        "--device-batch-size=4",
    ]);
    assert_eq!(direct["peak_bytes"], python["peak_bytes"]);
    let torchrun = json(&[
        "torchrun",
        "--standalone",
        "--nproc_per_node=1",
        "-m",
        "scripts.base_train",
        "--",
        "--depth=4",
        "--device-batch-size=4",
    ]);
    assert_eq!(torchrun["config"]["nproc_per_node"], 1);
    assert_eq!(torchrun["grad_accum_steps"], 32);
    // the script's assert counts every process: 8 × 32 × 2048 tokens do not divide d4's
    // automatic 262,144
    let eight = run(&[
        "torchrun",
        "--nproc_per_node=8",
        "-m",
        "scripts.base_train",
        "--",
        "--depth=4",
    ]);
    assert!(String::from_utf8_lossy(&eight.stderr)
        .contains("total_batch_size (262144) must be a multiple of 524288."));
    // more than one GPU: answered per rank, at the bound of the steps NCCL holds, with NCCL's
    // memory in the card's budget
    let eight_gpus = [
        "--program=nanochat",
        "--depth=4",
        "--device-batch-size=4",
        "--total-batch-size=65536",
        "--nproc-per-node=8",
        "--gpu=h100",
    ];
    let out = run(&[&["--json"][..], &eight_gpus].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ranks = &j["ranks"];
    assert_eq!(ranks["world_size"], 8);
    assert!(ranks["held_steps"].as_u64().unwrap() >= 2, "{ranks}");
    // rank 0 is the answer, and the fullest
    let each = ranks["each"].as_array().unwrap();
    assert_eq!(each[0]["first"], 0);
    assert_eq!(each[0]["peak_bytes"]["overall"], j["peak_bytes"]["overall"]);
    assert!(each
        .iter()
        .all(|r| r["peak_bytes"]["overall"].as_u64() <= j["peak_bytes"]["overall"].as_u64()));
    assert_eq!(each.last().unwrap()["last"], 7);
    assert!(
        j["peak_bytes"]["overall"].as_u64() > ranks["one_step_held_peak_bytes"].as_u64(),
        "more steps held than one: a higher peak"
    );
    let one_gpu_context =
        j["gpu"]["context_bytes"].as_u64().unwrap() - ranks["nccl_bytes"].as_u64().unwrap();
    assert_eq!(
        one_gpu_context,
        795 << 20,
        "the H100's own context beside NCCL's"
    );
    // the text says which bound it used
    let text = run(&[&eight_gpus[..], &["--lang=en"]].concat());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("per rank (torchrun, 8 processes)"), "{text}");
}

#[test]
fn the_scripts_own_words_on_bad_input() {
    for (args, says) in [
        (
            vec!["--program=nanochat", "--depth=4", "--total-batch-size=1000"],
            "total_batch_size (1000) must be a multiple of",
        ),
        (
            vec!["--program=nanochat", "--window-pattern=SX"],
            "Invalid window_pattern: SX. Use only S and L.",
        ),
        (vec!["--program=nanochat", "--depth=abc"], "depth=abc"),
        (vec!["--program=nanochat", "--bogus=1"], "bogus"),
        (
            vec!["--program=nanochat", "--fp8", "--gpu", "rtx3090"],
            "the RTX 3090 24 GB (SM 8.6) has no FP8 matmuls",
        ),
        (
            vec!["--program=nanochat", "--fp8", "--fp8-recipe=rowwise"],
            "Only 'tensorwise' recipe is supported, got 'rowwise'",
        ),
        (vec!["--program=nanochat-xl"], "--program=nanochat-xl"),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn depth_20_fits_no_12_gb_card() {
    // the optimizer step alone needs ~12.8 GiB at any batch size (issue #14's measurement)
    let v = json(&[
        "--program=nanochat",
        "--depth=20",
        "--device-batch-size=1",
        "--gpu=rtx3060",
    ]);
    assert_eq!(v["verdict"]["fits"], false);
    assert_eq!(v["largest_device_batch_size_that_fits"], Value::Null);
    let first = &v["fixes"][0];
    assert_eq!(first["kind"], "shallower_model");
    assert_eq!(first["fits"], true);
    assert!(first["command"]
        .as_str()
        .unwrap()
        .starts_with("python -m scripts.base_train --depth="));
}
