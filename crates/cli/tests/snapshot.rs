//! `vramfit --snapshot FILE`: a real run's memory snapshot (data/snapshots) read back as its own
//! numbers, and files that are not snapshots refused in one line.

#![allow(clippy::unwrap_used)]

mod common;

use common::{json, run};

fn fixture(name: &str) -> String {
    format!(
        "{}/../../data/snapshots/{name}.pickle.gz",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn a_capped_runs_snapshot_says_what_its_oom_message_said() {
    // build-nanogpt B=16, capped at 8 GiB: "Tried to allocate 3.07 GiB … 5.44 GiB is allocated
    // by PyTorch, and 1.65 GiB is reserved by PyTorch but unallocated"
    let v = json(&["--snapshot", &fixture("snap_bng_b16_cap8"), "--json"]);
    let s = &v["snapshot"];
    assert_eq!(s["whole_run"], true);
    assert_eq!(s["exact"], true);
    assert_eq!(s["oom"]["requested_bytes"], 3_296_722_944u64);
    assert_eq!(s["oom"]["allocated_bytes"], 5_841_425_408u64);
    assert_eq!(s["oom"]["cached_free_bytes"], 1_769_139_200u64);
    // recognised by its frames; the cache at the dump per segment, as segsum sums it
    assert_eq!(s["program"], "build-nanogpt");
    assert_eq!(s["script"], "train_gpt2.py");
    let segments = s["segments_at_dump"].as_array().unwrap();
    let sum = |k: &str| -> u64 { segments.iter().map(|g| g[k].as_u64().unwrap()).sum() };
    assert_eq!(
        sum("total_bytes"),
        sum("allocated_bytes") + sum("free_bytes"),
        "every byte of a segment is in a block, allocated or free"
    );
    assert!(sum("internal_bytes") <= sum("allocated_bytes"));
    // the memory over the run keeps its peak, in at most 400 points
    let allocated = s["timeline"]["allocated_bytes"].as_array().unwrap();
    assert!(allocated.len() <= 400);
    assert_eq!(
        allocated.iter().map(|v| v.as_u64().unwrap()).max(),
        s["peak_allocated_bytes"].as_u64()
    );
    let text =
        String::from_utf8(run(&["--snapshot", &fixture("snap_bng_b16_cap8")]).stdout).unwrap();
    assert!(
        text.contains("tried to allocate 3.07 GiB with 5.44 GiB allocated"),
        "{text}"
    );
    assert!(text.contains("recorded from"), "{text}");
    assert!(text.contains("cache at the dump"), "{text}");
}

#[test]
fn what_is_not_a_snapshot_is_named() {
    let dir = std::env::temp_dir().join(format!("vramfit-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = dir.join("notes.txt");
    std::fs::write(&text, "not a pickle").unwrap();
    // a pickle of a dict that is not a snapshot: {'a': 1}, protocol 4
    let other = dir.join("other.pickle");
    std::fs::write(
        &other,
        b"\x80\x04\x95\x0a\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94K\x01s.",
    )
    .unwrap();
    // a snapshot cut short
    let whole = std::fs::read(fixture("snap_nanogpt_char")).unwrap();
    let cut = dir.join("cut.pickle.gz");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    for (file, says) in [
        (text.clone(), "not a pickle"),
        (other.clone(), "not a memory snapshot"),
        (cut.clone(), "could not be"),
        (dir.join("missing.pickle"), "--snapshot"),
    ] {
        let out = run(&["--snapshot", file.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{file:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_prediction_for_each_programs_run_meets_its_snapshot() {
    // each run's settings as its probe gave them (data/snapshots/runs.jsonl), on its card
    let runs: [(&str, &[&str]); 3] = [
        (
            "snap_nanogpt_char",
            &[
                "--compile=False",
                "--n_layer=4",
                "--n_head=4",
                "--n_embd=256",
                "--block_size=256",
                "--batch_size=8",
                "--gradient_accumulation_steps=2",
                "--eval_iters=2",
                "--dataset=shakespeare_char",
            ],
        ),
        (
            "snap_bng_l4",
            &[
                "--program=build-nanogpt",
                "--B=4",
                "--T=256",
                "--total_batch_size=2048",
                "--use_compile=False",
                "--n_layer=4",
                "--n_head=4",
                "--n_embd=256",
            ],
        ),
        (
            "snap_nanochat_d4",
            &[
                "--program=nanochat",
                "--depth=4",
                "--device-batch-size=8",
                "--max-seq-len=512",
                "--window-pattern=SSL",
                "--total-batch-size=4096",
                "--eval-tokens=8192",
                "--core-metric-every=-1",
                "--sample-every=-1",
            ],
        ),
    ];
    for (name, settings) in runs {
        let file = fixture(name);
        let mut argv = vec!["--snapshot", &file, "--gpu", "h200", "--json"];
        argv.extend_from_slice(settings);
        let s = json(&argv)["snapshot"].clone();
        let measured = s["peak_allocated_bytes"].as_u64().unwrap() as f64;
        let predicted = s["predicted"]["peak_allocated_bytes"].as_u64().unwrap() as f64;
        let off = (predicted / measured - 1.0).abs();
        // the published error of every program's allocated peak: 0.01 % (README)
        assert!(off < 1e-4, "{name}: {predicted} against {measured}");
    }
}

#[test]
fn vramfits_run_exported_as_a_snapshot_reads_back_as_its_prediction() {
    let dir = std::env::temp_dir().join(format!("vramfit-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("nanochat.pickle");
    let settings = [
        "--program=nanochat",
        "--depth=4",
        "--device-batch-size=8",
        "--gpu",
        "rtx4090",
    ];
    let mut argv = vec!["--export-snapshot", file.to_str().unwrap(), "--json"];
    argv.extend(settings);
    let written = json(&argv);
    let mut argv = vec!["--json"];
    argv.extend(settings);
    let predicted = json(&argv)["peak_bytes"]["overall"].as_u64().unwrap();
    assert_eq!(
        written["snapshot_written"]["peak_allocated_bytes"],
        predicted
    );
    let read = json(&["--snapshot", file.to_str().unwrap(), "--json"]);
    assert_eq!(read["snapshot"]["peak_allocated_bytes"], predicted);
    assert_eq!(read["snapshot"]["exact"], true);
    std::fs::remove_dir_all(&dir).unwrap();
}
