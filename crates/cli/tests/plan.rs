//! `vramfit plan` as a user calls it: a run script from a file, from standard input or the
//! built-in speedrun, a card and a count; the text report and the `--json` object the issue
//! names (`stages` with `command`, `program`, `peak_bytes`, `fits`, `changes`; `script`).

#![allow(clippy::unwrap_used)]

mod common;

fn plan_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["plan"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = common::run(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn the_speedrun_on_one_4090_answers_every_stage_and_the_script() {
    let v = plan_json(&["--speedrun", "--gpu", "rtx4090", "--gpus", "1"]);
    assert_eq!(v["gpu"], "rtx4090");
    assert_eq!(v["all_fit"], true);
    let stages = v["stages"].as_array().unwrap();
    let programs: Vec<&str> = stages
        .iter()
        .map(|s| s["program"].as_str().unwrap())
        .collect();
    assert_eq!(
        programs,
        [
            "nanochat-base-train",
            "nanochat-base-eval",
            "nanochat-chat-sft",
            "nanochat-chat-eval"
        ]
    );
    for s in stages {
        assert!(s["command"]
            .as_str()
            .unwrap()
            .contains("torchrun --standalone --nproc_per_node=8"));
        assert!(s["peak_bytes"].as_u64().unwrap() > 1 << 30);
        assert_eq!(s["fits"], true);
        assert!(s["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["flag"] == "nproc_per_node"));
    }
    // the written base_train does not fit one 4090; the planned one does
    assert_eq!(stages[0]["as_written"]["fits"], false);
    let script = v["script"].as_str().unwrap();
    assert!(script.contains("python -m scripts.base_train --depth=24"));
    assert!(
        script.lines().all(|l| !l.starts_with("torchrun")),
        "{script}"
    );
    assert!(script.contains("# vramfit: "));
}

#[test]
fn a_script_from_standard_input_keeps_its_other_lines() {
    let text = "#!/bin/bash\nexport OMP_NUM_THREADS=1\ntorchrun --standalone --nproc_per_node=8 -m scripts.base_eval -- --device-batch-size=16\necho done\n";
    let out = common::run_stdin(
        &["plan", "-", "--gpu", "rtx3060", "--json"],
        text.as_bytes(),
    );
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let script = v["script"].as_str().unwrap();
    assert!(script.starts_with("#!/bin/bash\nexport OMP_NUM_THREADS=1\n"));
    assert!(script.ends_with("echo done\n"));
    assert_eq!(v["stages"][0]["line"], 3);
}

#[test]
fn bad_input_is_named() {
    for (args, says) in [
        (vec!["plan", "--gpu", "rtx4090"], "needs a run script"),
        (
            vec!["plan", "--speedrun", "--gpu", "rtx4090", "--gpus", "0"],
            "--gpus=0 is not allowed",
        ),
        (
            vec!["plan", "--speedrun", "--gpu", "rtx4090", "--gpus", "x"],
            "--gpus=x is not allowed",
        ),
        (
            vec!["plan", "/nonexistent/speedrun.sh", "--gpu", "rtx4090"],
            "cannot read /nonexistent/speedrun.sh",
        ),
        (
            vec!["plan", "--speedrun", "--gpu", "nosuchcard"],
            "nosuchcard",
        ),
    ] {
        let out = common::run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn the_text_report_names_the_stage_that_does_not_fit_and_by_how_much() {
    let out = common::run(&["plan", "--speedrun", "--gpu", "rtx4090"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("scripts.base_train as written 51.37 GiB out of memory ("),
        "{text}"
    );
    assert!(text.contains("Every stage fits as planned."), "{text}");
}

#[test]
fn a_stage_whose_flags_are_wrong_is_not_called_out_of_memory() {
    let text = "torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=abc\n";
    let out = common::run_stdin(&["plan", "-", "--gpu", "rtx4090"], text.as_bytes());
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("depth=abc has the wrong type"), "{report}");
    assert!(
        report.contains("Not every stage could be planned"),
        "{report}"
    );
    assert!(!report.contains("out of memory"), "{report}");
}
