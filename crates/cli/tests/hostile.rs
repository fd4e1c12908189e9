//! Hostile, extreme and careless input on the command line: every one ends in one line on
//! stderr and exit code 2 (or an answer), never a panic, a hang or a silent success; and what a
//! newcomer types first (nanoGPT's best-known config file, a card they own, no card at all) is
//! answered as they mean it.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{json, run, run_env};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 2, one line on stderr starting `vramfit: `, no panic.
fn refused(out: &std::process::Output) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("vramfit: "), "{err}");
    err
}

#[test]
fn nanogpts_config_file_is_nanogpts_from_any_folder() {
    // the README's first example, run where no config/ folder exists (the tests' folder)
    let v = json(&[
        "config/train_gpt2.py",
        "--batch_size=8",
        "--compile=False",
        "--gpu",
        "rtx3060",
    ]);
    assert_eq!(v["config"]["batch_size"], 8);
    assert_eq!(
        v["config"]["gradient_accumulation_steps"], 40,
        "the file was applied"
    );
    assert_eq!(v["gpu"]["id"], "rtx3060");
    // so is `--program=nanogpt` with it, and a path to the nanoGPT checkout
    let v = json(&[
        "--program=nanogpt",
        "../nanoGPT/config/train_shakespeare_char.py",
    ]);
    assert_eq!(v["config"]["n_layer"], 6);
    assert_eq!(v["config"]["vocab_size"], 65);
}

#[test]
fn the_cards_learners_own_answer() {
    for (name, id) in [
        ("rtx3070", "rtx3070"),
        ("rtx4060", "rtx4060"),
        ("rtx3060ti", "rtx3060ti"),
        ("3050", "rtx3050"),
        ("RTX 4060 Laptop", "rtx4060laptop"),
        ("gtx1660ti", "gtx1660ti"),
    ] {
        let v = json(&["--gpu", name, "--batch_size=1"]);
        assert_eq!(v["gpu"]["id"], id, "{name}");
    }
}

#[test]
fn no_card_named_is_said_to_be_assumed_or_read_from_nvidia_smi() {
    let out = run(&["--batch_size=4"]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(err.contains("assumed H100 80 GB"), "{err}");
    // with an nvidia-smi that answers, its card, and nothing said
    let smi = common::stand_in_nvidia_smi("hostile", "NVIDIA GeForce RTX 3060, 12288 MiB, 700 MiB");
    let out = run_env(
        &["--json", "--batch_size=4"],
        &[("VRAMFIT_NVIDIA_SMI", smi.to_str().unwrap())],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gpu"]["id"], "rtx3060");
    assert_eq!(v["gpu"]["other_bytes"], 700u64 << 20);
    std::fs::remove_dir_all(smi.parent().unwrap()).ok();
}

#[test]
fn vramfits_options_inside_a_launch_line_are_named() {
    let err = refused(&run(&[
        "python",
        "train.py",
        "--batch_size=8",
        "--gpu",
        "rtx3060",
    ]));
    assert!(err.contains("--gpu rtx3060 is vramfit's option"), "{err}");
    assert!(err.contains("before"), "{err}");
}

#[test]
fn endless_inputs_are_read_to_a_bound() {
    let t = Instant::now();
    let err = refused(&run(&["/dev/zero"]));
    assert!(err.contains("too large"), "{err}");
    // `yes | vramfit /dev/stdin`: a pipe that never ends
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .arg("/dev/stdin")
        .env("VRAMFIT_NVIDIA_SMI", "/nonexistent/nvidia-smi")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let line = b"y\n".repeat(4096);
        // ends when vramfit closes the pipe
        while stdin.write_all(&line).is_ok() {}
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    refused(&out);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[cfg(unix)]
#[test]
fn invalid_utf8_is_one_line_naming_the_bytes() {
    use std::os::unix::ffi::OsStrExt;
    let arg = std::ffi::OsStr::from_bytes(b"--batch_size=\xff");
    let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .arg(arg)
        .output()
        .unwrap();
    let err = refused(&out);
    assert!(err.contains(r"--batch_size=\xff"), "{err}");
}

/// A run whose peak passes 2^64 bytes: one small layer, whose logits alone do.
const PAST_2_64: &[&str] = &[
    "--n_layer=1",
    "--n_head=1",
    "--n_embd=64",
    "--block_size=1048576",
    "--batch_size=1048576",
    "--vocab_size=4194304",
    "--gpu",
    "h100",
];

/// nanoGPT with every field at its maximum: 2^72 bytes of activations, 1.4 million events.
const EVERY_FIELD_AT_ITS_MAXIMUM: &[&str] = &[
    "--n_layer=1024",
    "--n_head=1024",
    "--n_embd=131072",
    "--block_size=1048576",
    "--batch_size=1048576",
    "--gradient_accumulation_steps=1000000",
    "--eval_iters=1000000",
    "--eval_interval=1000000000",
    "--max_iters=1000000000",
    "--vocab_size=4194304",
    "--gpu",
    "h100",
];

/// Past 8 TiB of logits alone: beyond every card, below the ceiling.
const PAST_EVERY_CARD: &[&str] = &[
    "--n_layer=1",
    "--batch_size=4096",
    "--vocab_size=1048576",
    "--gpu",
    "h100",
];

#[test]
fn a_run_past_the_ceiling_is_beyond_any_card_at_once() {
    for args in [PAST_2_64, EVERY_FIELD_AT_ITS_MAXIMUM] {
        for json in [false, true] {
            let t = Instant::now();
            let mut all = args.to_vec();
            if json {
                all.push("--json");
            }
            let err = refused(&run(&all));
            assert!(
                err.contains("more than 256 TiB at once") && err.contains("beyond any card"),
                "{err}"
            );
            assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        }
    }
}

#[test]
fn a_run_past_every_card_is_numbers_and_claims_no_absurd_saving() {
    let v = json(PAST_EVERY_CARD);
    let peak = v["peak_bytes"]["overall"].as_f64().unwrap();
    assert!(peak > 8.0 * 2f64.powi(40), "{peak}");
    assert_eq!(v["verdict"]["fits"], false);
    // expandable segments cannot change a peak of terabytes by terabytes
    for f in v["fixes"].as_array().unwrap() {
        let saving = f["saving_bytes"].as_f64().unwrap();
        let new_peak = f["peak_bytes"].as_f64().unwrap();
        assert!(
            new_peak > 1e9 || f["fits"] == true,
            "{}: new peak {new_peak} for a run of {peak}",
            f["kind"]
        );
        if f["kind"] == "expandable_segments" {
            assert!(saving.abs() < peak * 0.01, "{f}");
        }
    }
}

#[test]
fn the_largest_b_is_searched_over_every_b() {
    let v = json(&[
        "--program=build-nanogpt",
        "--B=8192",
        "--T=1",
        "--total_batch_size=1099511627776",
        // compiled: no HellaSwag or sampling, so B = 8192 fits the 3060 (the search once stopped at
        // 2048, a 4096-wide list of candidates)
        "--use_compile=True",
        "--gpu",
        "rtx3060",
    ]);
    let b = v["largest_B_that_fits"]
        .as_u64()
        .or_else(|| v["largest_b_that_fits"].as_u64())
        .unwrap();
    assert!(
        b >= 8192,
        "{b}: the search stopped short of the B that fits"
    );
}

#[test]
fn an_unwritable_stdout_is_said_not_panicked() {
    #[cfg(target_os = "linux")]
    for args in [&["--help"][..], &["--batch_size=4", "--gpu", "rtx3060"][..]] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_vramfit"))
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let err = refused(&out);
        assert!(err.contains("cannot write"), "{err}");
    }
    // a reader that goes away (`vramfit --list-gpus | head -1`)
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(["--gpu", "rtx3060", "--batch_size=4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(out.status.code().is_some(), "ended by a signal");
}

#[test]
fn odd_numbers_get_honest_messages() {
    let err = refused(&run(&["--mfu", "1e-5"]));
    assert!(err.contains("0.001 to 1"), "{err}");
    let err = refused(&run(&["--vram-gib", "1e-300"]));
    assert!(err.contains("1e-300") && err.len() < 200, "{err}");
    let err = refused(&run(&["--other-gib", "1e300"]));
    assert!(err.contains("1e300") && err.len() < 200, "{err}");
}

#[test]
fn odd_numbers_in_an_oom_message_are_not_misread() {
    let dir = std::env::temp_dir().join(format!("vramfit-hostile-oom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let msg = dir.join("oom.txt");
    std::fs::write(
        &msg,
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate -0.5 GiB. GPU 0 has a total \
         capacity of 0 bytes of which 0 bytes is free. 0.01 GiB allowed; 1.00 GiB already allocated",
    )
    .unwrap();
    let v = json(&["--oom-message", msg.to_str().unwrap(), "--batch_size=4"]);
    assert_ne!(v["oom"]["requested_bytes"], 5u64 << 30, "-0.5 read as 5");
    assert_ne!(
        v["gpu"]["total_bytes"],
        1u64 << 28,
        "0 bytes read as a card"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_device_that_is_not_cuda_is_said() {
    let err = refused(&run(&["--device=cpu", "--gpu", "rtx3060"]));
    assert!(err.contains("CUDA GPU"), "{err}");
    assert!(json(&["--device=cuda:1", "--gpu", "rtx3060"])["config"].is_object());
}

#[test]
fn a_config_line_of_many_string_sums_is_refused_at_once() {
    let dir = std::env::temp_dir().join(format!("vramfit-hostile-sum-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sums.py");
    let terms = vec!["'a'*65536"; 1600].join(" + ");
    std::fs::write(&file, format!("out_dir = {terms}\nbatch_size = 4\n")).unwrap();
    let t = Instant::now();
    let out = run(&[file.to_str().unwrap(), "--gpu", "rtx3060"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // the line is named as not applied; the rest of the file is
    assert!(stderr(&out).contains("string too long"), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).ok();
}
