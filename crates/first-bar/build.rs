//! The first bar's English words, compiled in: the lines of `i18n/en.txt` whose keys
//! [`BarWords`] has. The rest of the file is the page's (20 KB the first bar does not carry);
//! other languages come as their files, fetched (`public/first-bar.js`).

use std::path::Path;

use vramfit_i18n::{BarWords, Table};

fn main() {
    // the list scripts/post-build.py reads for the other languages: it must be BarWords' keys
    let keys_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bar-words.keys");
    println!("cargo::rerun-if-changed={}", keys_path.display());
    let keys = std::fs::read_to_string(&keys_path).expect("bar-words.keys is readable");
    let mut listed: Vec<&str> = keys
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let mut names = BarWords::NAMES.to_vec();
    listed.sort_unstable();
    names.sort_unstable();
    assert_eq!(listed, names, "bar-words.keys lists BarWords' keys");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../i18n/en.txt");
    println!("cargo::rerun-if-changed={}", source.display());
    let text = std::fs::read_to_string(&source).expect("i18n/en.txt is readable");
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| {
            line.split_once(" = ")
                .is_some_and(|(key, _)| BarWords::NAMES.contains(&key.trim()))
        })
        .collect();
    assert_eq!(
        lines.len(),
        BarWords::NAMES.len(),
        "i18n/en.txt has every BarWords key once"
    );
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("en_bar_words.txt");
    std::fs::write(out, lines.join("\n")).expect("OUT_DIR is writable");
}
