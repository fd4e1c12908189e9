//! Calling the `vramfit` binary as a user does, shared by the CLI's test files.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses its own part

use std::process::{Command, Output};

use serde_json::Value;

/// The binary with `args` in a locale-free environment (its text follows `LC_ALL`, `LC_MESSAGES`
/// and `LANG`) and no nvidia-smi, plus `env`.
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG")
        // no card from this machine's nvidia-smi: the answers are for the assumed card, here as
        // on CI (a test that wants one sets its own stand-in)
        .env("VRAMFIT_NVIDIA_SMI", "/nonexistent/nvidia-smi")
        .envs(env.iter().copied())
        .output()
        .expect("vramfit runs")
}

pub fn run(args: &[&str]) -> Output {
    run_env(args, &[])
}

/// [`run`] with `input` on standard input (an argument `-` reads it).
pub fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG")
        .env("VRAMFIT_NVIDIA_SMI", "/nonexistent/nvidia-smi")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vramfit runs");
    child
        .stdin
        .take()
        .expect("its stdin")
        .write_all(input)
        .expect("vramfit reads its stdin");
    child.wait_with_output().expect("vramfit ends")
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

/// A stand-in `nvidia-smi` that lists one GPU (`name, total MiB, used MiB` as nvidia-smi's CSV
/// writes it), in a folder of its own named by `tag`; returns its path.
pub fn stand_in_nvidia_smi(tag: &str, gpu_line: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vramfit-smi-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let smi = dir.join("nvidia-smi");
    std::fs::write(
        &smi,
        format!(
            "#!/bin/sh\necho 'name, memory.total [MiB], memory.used [MiB]'\necho '{gpu_line}'\n"
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&smi, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    smi
}
