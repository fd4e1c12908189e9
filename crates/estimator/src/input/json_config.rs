//! A config given as JSON — `vramfit run.json`, a JSON object pasted on the page, the npm
//! package's `analyze({...})`: one object of a program's settings by the program's own names,
//! `{"program": "nanochat", "depth": 12, "device_batch_size": 8}`, or the CLI's own `--json`
//! answer (its `program` and `config` are read, the rest ignored), so an answer can be fed back.
//!
//! Whoever parses the JSON (serde_json in the CLI and the npm package, the browser's
//! `JSON.parse` on the page) hands over a [`Setting`] tree; the rules of what it means live only
//! here. Every setting becomes the flag the program's own parser reads, so a JSON config is
//! checked by exactly the same code, with the same messages, as the command line.

use crate::error::{ConfigError, Problem};
use crate::programs::Program;

/// A JSON value, as far as a config needs one.
#[derive(Clone, Debug, PartialEq)]
pub enum Setting {
    Null,
    Bool(bool),
    /// A number as JSON wrote it (`8`, `0.1`, `6e-4`): each program's parser reads the text.
    Number(String),
    Text(String),
    /// An array (never a setting: refused by name).
    List,
    Object(Vec<(String, Setting)>),
}

/// The program (the object's `program`, else `default`) and the flags its parser takes, in the
/// object's order.
pub fn to_args(root: &Setting, default: Program) -> Result<(Program, Vec<String>), ConfigError> {
    let Setting::Object(entries) = root else {
        return Err(ConfigError::new(
            "config",
            describe(root),
            Problem::WrongType {
                expected: "a JSON object of settings, e.g. {\"batch_size\": 8}",
            },
        ));
    };
    let program = match entries.iter().find(|(k, _)| k == "program") {
        None => default,
        Some((_, Setting::Text(name))) => Program::parse(name).ok_or_else(|| {
            ConfigError::new(
                "program",
                name,
                Problem::NotOneOf {
                    choices: Program::NAMES,
                },
            )
        })?,
        Some((_, other)) => {
            return Err(ConfigError::new(
                "program",
                describe(other),
                Problem::NotOneOf {
                    choices: Program::NAMES,
                },
            ))
        }
    };
    // the CLI's answer: its settings are under "config"
    let settings = match entries.iter().find(|(k, _)| k == "config") {
        Some((_, Setting::Object(inner))) => inner.as_slice(),
        _ => entries.as_slice(),
    };
    let mut args = Vec::new();
    for (key, value) in settings {
        if key == "program" {
            continue;
        }
        if let Some(arg) = flag(program, key, value)? {
            args.push(arg);
        }
    }
    Ok((program, args))
}

/// One setting as the program's command line writes it; `None` for a switch that is off.
fn flag(program: Program, key: &str, value: &Setting) -> Result<Option<String>, ConfigError> {
    match value {
        Setting::Object(_) | Setting::List => Err(ConfigError::new(
            key,
            describe(value),
            Problem::WrongType {
                expected: "a number, true/false or a string",
            },
        )),
        _ => program.json_flag(key, value),
    }
}

/// A setting as a `--key=value` override that train.py's configurator reads as Python: a JSON
/// string stays a string (quoted), `null` is `None`, booleans are `True`/`False`.
pub fn python_flag(key: &str, value: &Setting) -> Result<Option<String>, ConfigError> {
    let text = match value {
        Setting::Text(s) => python_str(s),
        Setting::Null => "None".into(),
        _ => return constant_flag(key, value),
    };
    Ok(Some(format!("--{key}={text}")))
}

/// A setting as a `--key=value` constant (build-nanogpt's): booleans `True`/`False`, no `null`.
pub fn constant_flag(key: &str, value: &Setting) -> Result<Option<String>, ConfigError> {
    let text = match value {
        Setting::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        _ => scalar_text(key, value)?,
    };
    Ok(Some(format!("--{key}={text}")))
}

/// A setting as an argparse flag: spelled with hyphens (the JSON answer writes underscores), a
/// `store_true` switch there or not, no `null`.
pub fn argparse_flag(key: &str, value: &Setting) -> Result<Option<String>, ConfigError> {
    let flag = key.replace('_', "-");
    Ok(match value {
        Setting::Bool(true) => Some(format!("--{flag}")),
        Setting::Bool(false) => None,
        _ => Some(format!("--{flag}={}", scalar_text(key, value)?)),
    })
}

/// A number's or a string's text, for a program that reads it itself; refuses the rest.
fn scalar_text(key: &str, value: &Setting) -> Result<String, ConfigError> {
    match value {
        Setting::Number(n) | Setting::Text(n) => Ok(n.clone()),
        Setting::Null => Err(ConfigError::new(
            key,
            "null",
            Problem::WrongType {
                expected: "a value (leave the key out for the script's default)",
            },
        )),
        _ => Err(ConfigError::new(
            key,
            describe(value),
            Problem::WrongType {
                expected: "a number, true/false or a string",
            },
        )),
    }
}

/// A Python string literal of `s`.
fn python_str(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// What a refused value was, for the message.
fn describe(v: &Setting) -> String {
    match v {
        Setting::Null => "null".into(),
        Setting::Bool(b) => b.to_string(),
        Setting::Number(n) | Setting::Text(n) => n.clone(),
        Setting::List => "[…]".into(),
        Setting::Object(_) => "{…}".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(pairs: &[(&str, Setting)]) -> Setting {
        Setting::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }
    fn num(n: &str) -> Setting {
        Setting::Number(n.into())
    }

    #[test]
    fn nanogpt_settings_become_configurator_overrides() {
        let cfg = obj(&[
            ("batch_size", num("8")),
            ("compile", Setting::Bool(false)),
            ("dtype", Setting::Text("float16".into())),
        ]);
        let (p, args) = to_args(&cfg, Program::NanoGpt).unwrap();
        assert_eq!(p, Program::NanoGpt);
        assert_eq!(
            args,
            ["--batch_size=8", "--compile=False", "--dtype='float16'"]
        );
    }

    #[test]
    fn nanochat_settings_become_argparse_flags() {
        let cfg = obj(&[
            ("program", Setting::Text("nanochat".into())),
            ("depth", num("12")),
            ("device_batch_size", num("8")),
            ("fp8", Setting::Bool(false)),
            ("window_pattern", Setting::Text("SSSL".into())),
        ]);
        let (p, args) = to_args(&cfg, Program::NanoGpt).unwrap();
        assert_eq!(p, Program::Nanochat);
        assert_eq!(
            args,
            [
                "--depth=12",
                "--device-batch-size=8",
                "--window-pattern=SSSL"
            ]
        );
    }

    #[test]
    fn the_cli_answer_is_read_through_its_config() {
        let answer = obj(&[
            ("program", Setting::Text("build-nanogpt".into())),
            (
                "config",
                obj(&[("B", num("16")), ("use_compile", Setting::Bool(true))]),
            ),
            ("peak_bytes", obj(&[("overall", num("1"))])),
        ]);
        let (p, args) = to_args(&answer, Program::NanoGpt).unwrap();
        assert_eq!(p, Program::BuildNanoGpt);
        assert_eq!(args, ["--B=16", "--use_compile=True"]);
    }

    #[test]
    fn wrong_shapes_name_the_key() {
        let e = to_args(&Setting::List, Program::NanoGpt).unwrap_err();
        assert_eq!(e.key, "config");
        let e = to_args(
            &obj(&[("program", Setting::Text("llama".into()))]),
            Program::NanoGpt,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("program=llama is not allowed"),
            "{e}"
        );
        let e = to_args(&obj(&[("batch_size", Setting::List)]), Program::NanoGpt).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("batch_size=[…] has the wrong type"),
            "{e}"
        );
        let nc = obj(&[
            ("program", Setting::Text("nanochat".into())),
            ("depth", Setting::Null),
        ]);
        assert_eq!(to_args(&nc, Program::NanoGpt).unwrap_err().key, "depth");
        // without "program", the caller's (`--program=nanochat run.json`)
        let bare = obj(&[("depth", num("6"))]);
        assert_eq!(to_args(&bare, Program::Nanochat).unwrap().1, ["--depth=6"]);
    }
}
