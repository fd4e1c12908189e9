//! Every command the README and `--help` show runs as shown: each `vramfit …` and
//! `cargo run --release -p vramfit -- …` line of the README's shell blocks and every example
//! line of the help text exits 0 (a `--json` one prints one JSON object), and the README's
//! console block prints exactly the lines it shows. A README example that stops working fails
//! here, not in front of a newcomer.

#![allow(clippy::unwrap_used)]

mod common;

use estimator::input::command_line::shell_words;

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap()
}

/// The fenced code blocks of a Markdown text: (language, lines).
fn blocks(md: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in md.lines() {
        match (line.strip_prefix("```"), open.take()) {
            (Some(_), Some(block)) => out.push(block),
            (Some(lang), None) => open = Some((lang.trim().to_string(), Vec::new())),
            (None, Some(mut block)) => {
                block.1.push(line.to_string());
                open = Some(block);
            }
            (None, None) => {}
        }
    }
    out
}

/// The arguments of a line that runs vramfit, with its comment dropped; `None` for other lines.
fn vramfit_args(line: &str) -> Option<Vec<String>> {
    let line = line.trim().trim_start_matches("$ ");
    let rest = line
        .strip_prefix("cargo run --release -p vramfit -- ")
        .or_else(|| line.strip_prefix("vramfit "))?;
    let words = shell_words(rest.split(" #").next().unwrap_or(rest));
    Some(words)
}

fn check_runs(args: &[String], from: &str) {
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::run(&argv);
    assert!(
        out.status.success(),
        "{from}: `vramfit {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.stdout.is_empty(),
        "{from}: `vramfit {}` printed nothing",
        args.join(" ")
    );
    if args.iter().any(|a| a == "--json") {
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{from}: `vramfit {}`: not JSON: {e}", args.join(" ")));
    }
}

#[test]
fn every_readme_command_runs() {
    let md = readme();
    let mut ran = 0;
    for (lang, lines) in blocks(&md) {
        if lang != "sh" && lang != "console" {
            continue;
        }
        for line in &lines {
            if let Some(args) = vramfit_args(line) {
                check_runs(&args, "README");
                ran += 1;
            }
        }
    }
    // the first example, nanochat's three, build-nanogpt's three, the install block's --help
    assert!(ran >= 9, "only {ran} README commands found");
}

#[test]
fn the_readme_shows_what_its_first_example_prints() {
    let md = readme();
    let (_, lines) = blocks(&md)
        .into_iter()
        .find(|(lang, _)| lang == "console")
        .expect("a console block");
    let args = vramfit_args(&lines[0]).expect("the block starts with a vramfit command");
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::run(&argv);
    assert!(out.status.success());
    let printed = String::from_utf8(out.stdout).unwrap();
    let printed: Vec<&str> = printed.lines().map(str::trim_end).collect();
    let shown: Vec<&str> = lines[1..].iter().map(|l| l.trim_end()).collect();
    // a last line "…" shows the start of the output only
    let (shown, whole) = match shown.split_last() {
        Some((&"…", head)) => (head.to_vec(), false),
        _ => (shown, true),
    };
    assert!(shown.len() > 10, "the block shows too little: {shown:?}");
    if whole {
        assert_eq!(
            shown, printed,
            "the README's console block differs from the output"
        );
    } else {
        assert_eq!(
            shown,
            printed[..shown.len().min(printed.len())],
            "the README's console block differs from the output"
        );
    }
}

#[test]
fn every_help_example_runs() {
    let out = common::run(&["--help"]);
    let help = String::from_utf8(out.stdout).unwrap();
    let examples: Vec<Vec<String>> = help
        .lines()
        .filter(|l| l.starts_with("  vramfit "))
        .filter_map(vramfit_args)
        .collect();
    assert!(examples.len() >= 3, "{help}");
    for args in examples {
        check_runs(&args, "--help");
    }
}
