//! Calling the `vramfit` binary as a user does, shared by the CLI's test files.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses its own part

use std::process::{Command, Output};

use serde_json::Value;

pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .output()
        .expect("vramfit runs")
}

pub fn json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}
