//! Whatever a user pastes: an out-of-memory message (with or without its traceback), a
//! `python train.py …` / `torchrun … train.py …` command line, a nanoGPT config file, or a JSON
//! config (parsed by the page, read by [`interpret_json`]). Says what it is, applies what it
//! understood to the page's state, and lists what it did not.

use crate::configurator::{Configurator, Skipped};
use crate::error::ConfigError;
use crate::input::json_config::{self, Setting};
use crate::oom::{diagnose, parse, CardSaid, Diagnosis, OomMessage};
use crate::programs::config_from_flags;
use crate::query::PageState;

/// Longest paste read (a long log is cut, not refused).
pub const MAX_PASTE: usize = 1 << 20;

/// What the pasted text turned out to be.
#[derive(Clone, Debug, PartialEq)]
pub enum Pasted {
    /// Nothing recognisable (also: empty text).
    Nothing,
    OomMessage {
        message: Box<OomMessage>,
        /// Which tensor of the current config failed, if one has the requested size.
        diagnosis: Option<Diagnosis>,
    },
    /// A train.py or torchrun command line.
    CommandLine {
        world_size: u32,
        /// Config files it names whose content is not known here.
        unknown_files: Vec<String>,
    },
    ConfigFile,
    /// A JSON config (or a saved `--json` answer), of the program it names.
    JsonConfig,
}

/// The outcome of a paste.
#[derive(Clone, Debug, PartialEq)]
pub struct PasteOutcome {
    pub pasted: Pasted,
    /// The page's state with the paste applied (unchanged when nothing was understood).
    pub state: PageState,
    /// Lines of a config that were not applied, with their numbers and why.
    pub skipped: Vec<Skipped>,
    /// An error that stopped the paste from applying (a bad value on a command line).
    pub error: Option<ConfigError>,
    /// Whether the text was cut to [`MAX_PASTE`] bytes.
    pub truncated: bool,
}

fn cut(text: &str) -> (&str, bool) {
    let head = crate::query::head(text, MAX_PASTE);
    (head, head.len() < text.len())
}

/// Reads a paste against the page's current state.
pub fn interpret(text: &str, current: &PageState) -> PasteOutcome {
    let (text, truncated) = cut(text);
    let mut out = PasteOutcome {
        pasted: Pasted::Nothing,
        state: current.clone(),
        skipped: Vec::new(),
        error: None,
        truncated,
    };
    let message = parse(text);
    if message.recognised {
        apply_message(&mut out.state, &message);
        // which tensor failed: read off nanoGPT's allocation sequence (nanochat's: not yet)
        let diagnosis = match out.state.program {
            crate::programs::Program::NanoGpt => diagnose(&message, &out.state.config),
            _ => None,
        };
        out.pasted = Pasted::OomMessage {
            message: Box::new(message),
            diagnosis,
        };
        return out;
    }
    // a command line names a training script (on one of its lines)
    if let Some(line) = text.lines().find(|l| {
        !l.trim_start().starts_with('#')
            && [
                "train.py",
                "train_gpt2.py",
                "scripts.base_train",
                "scripts.chat_sft",
            ]
            .iter()
            .any(|s| l.contains(s))
    }) {
        // backslash continuations: the rest of the paste belongs to the command
        let start = text.find(line).unwrap_or(0);
        let command = &text[start..];
        match crate::input::command_line::parse(command) {
            Ok(l) if l.program == crate::programs::Program::BuildNanoGpt => {
                // train_gpt2.py takes no arguments: the line says which script and how many GPUs
                let mut cfg = out.state.bng.clone();
                cfg.world_size = l.world_size;
                if l.expandable_segments == Some(true) {
                    cfg.allocator = crate::config::Allocator::ExpandableSegments;
                }
                // the script's assert counts every process: refused as the script would refuse it
                match cfg.validate() {
                    Ok(()) => {
                        out.state.program = l.program;
                        out.state.bng = cfg;
                        out.pasted = Pasted::CommandLine {
                            world_size: l.world_size,
                            unknown_files: Vec::new(),
                        };
                    }
                    Err(e) => out.error = Some(e),
                }
                return out;
            }
            Ok(l) if l.program != crate::programs::Program::NanoGpt => {
                let mut args = l.args.clone();
                if l.world_size > 1 {
                    args.push(format!("--nproc-per-node={}", l.world_size));
                }
                match config_from_flags(l.program, &args) {
                    Ok(cfg) => {
                        out.state.set_config(l.program, cfg);
                        out.pasted = Pasted::CommandLine {
                            world_size: l.world_size,
                            unknown_files: Vec::new(),
                        };
                    }
                    Err(e) => out.error = Some(e),
                }
                return out;
            }
            _ => {}
        }
        let mut conf = Configurator::new();
        match conf.apply_command_line(command) {
            Ok(cl) => match conf.finish() {
                Ok((cfg, skipped)) => {
                    out.state.program = crate::programs::Program::NanoGpt;
                    out.state.config = cfg;
                    if cl.expandable_segments {
                        out.state.config.allocator = crate::config::Allocator::ExpandableSegments;
                    }
                    out.skipped = skipped;
                    out.pasted = Pasted::CommandLine {
                        world_size: cl.world_size,
                        unknown_files: cl.unknown_files,
                    };
                }
                Err(e) => out.error = Some(e),
            },
            Err(e) => out.error = Some(e),
        }
        return out;
    }
    // train_gpt2.py's own constants (`B = 16 # micro batch size`, `GPTConfig(n_layer=24)`)
    let bng_line = |l: &str| {
        let code = l.split('#').next().unwrap_or("").trim();
        code.contains("GPTConfig(")
            || code.split_once('=').is_some_and(|(k, _)| {
                ["B", "T", "total_batch_size", "use_compile"].contains(&k.trim())
            })
    };
    if text.lines().any(bng_line) {
        let mut cfg = out.state.bng.clone();
        match cfg.apply_script_lines(text).and_then(|_| cfg.validate()) {
            Ok(()) => {
                out.state.program = crate::programs::Program::BuildNanoGpt;
                out.state.bng = cfg;
                out.pasted = Pasted::ConfigFile;
            }
            Err(e) => out.error = Some(e),
        }
        return out;
    }
    // a config file: at least one `key = value` line train.py knows
    let mut conf = Configurator::new();
    conf.apply_file("pasted text", text);
    let lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .count();
    if lines > conf.skipped.len() {
        match conf.finish() {
            Ok((cfg, skipped)) => {
                out.state.program = crate::programs::Program::NanoGpt;
                out.state.config = cfg;
                out.skipped = skipped;
                out.pasted = Pasted::ConfigFile;
            }
            Err(e) => out.error = Some(e),
        }
    }
    out
}

/// A pasted JSON config, already parsed into a [`Setting`] tree: its program (else the page's)
/// and settings replace that program's config, checked as its command line would be.
pub fn interpret_json(root: &Setting, current: &PageState) -> PasteOutcome {
    let mut out = PasteOutcome {
        pasted: Pasted::Nothing,
        state: current.clone(),
        skipped: Vec::new(),
        error: None,
        truncated: false,
    };
    let mut state = current.clone();
    let applied = json_config::to_args(root, current.program).and_then(|(program, args)| {
        state.set_config(program, config_from_flags(program, &args)?);
        Ok(())
    });
    match applied {
        Ok(()) => {
            out.state = state;
            out.pasted = Pasted::JsonConfig;
        }
        Err(e) => out.error = Some(e),
    }
    out
}

/// A paste that looks like JSON (an object) rather than anything [`interpret`] reads.
pub fn looks_like_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// What an OOM message says about the card: which one it is, what else was on it, the cap.
fn apply_message(state: &mut PageState, m: &OomMessage) {
    let gib = |b: u128| (crate::units::gib(b) * 100.0).round() / 100.0;
    match m.card_said() {
        Some(CardSaid::Preset(card)) => state.gpu = card.id.to_string(),
        Some(CardSaid::Custom { total_bytes }) => {
            state.gpu = "custom".into();
            state.vram_gib = gib(total_bytes).max(0.25);
        }
        None => {}
    }
    state.other_gib = gib(m.other_bytes());
    if let Some(c) = m.context_bytes() {
        state.context_gib = Some(gib(c));
    }
    state.cap_gib = m.allowed_bytes.map(gib);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::Program;
    use crate::Dtype;

    #[test]
    fn an_oom_message_sets_the_card_and_explains_the_failure() {
        let mut state = PageState::default();
        state.config.batch_size = 8;
        state.config.compile = false;
        state.config.gradient_accumulation_steps = 2;
        let text = "Traceback (most recent call last):\n  File \"train.py\", line 300, in <module>\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.54 GiB. GPU 0 has a total capacity of 11.69 GiB of which 1.05 GiB is free. Including non-PyTorch memory, this process has 10.64 GiB memory in use. Of the allocated memory 7.81 GiB is allocated by PyTorch, and 2.40 GiB is reserved by PyTorch but unallocated.";
        let out = interpret(text, &state);
        assert_eq!(out.state.gpu, "rtx3060");
        let Pasted::OomMessage { diagnosis, .. } = out.pasted else {
            panic!("{:?}", out.pasted)
        };
        let d = diagnosis.unwrap();
        assert_eq!(d.term, crate::Term::LossGrads);
        assert_eq!(out.state.config, state.config, "the config is kept");
    }

    #[test]
    fn a_command_line_replaces_the_config() {
        let out = interpret(
            "torchrun --standalone --nproc_per_node=2 train.py config/train_gpt2.py --batch_size=8 \\\n  --dtype=float16",
            &PageState::default(),
        );
        assert_eq!(
            out.pasted,
            Pasted::CommandLine {
                world_size: 2,
                unknown_files: vec![]
            }
        );
        assert_eq!(out.state.config.batch_size, 8);
        assert_eq!(out.state.config.dtype, Dtype::Float16);
        assert_eq!(out.state.config.gradient_accumulation_steps, 40);
        let bad = interpret("python train.py --batch_size=lots", &PageState::default());
        assert!(bad.error.is_some());
        assert_eq!(bad.state, PageState::default());
    }

    #[test]
    fn a_config_file_with_lines_not_understood() {
        let out = interpret(
            "# my run\nbatch_size = 4\ngradient_accumulation_steps = 5 * 8\nimport os\nfoo = 1\n",
            &PageState::default(),
        );
        assert_eq!(out.pasted, Pasted::ConfigFile);
        assert_eq!(out.state.config.gradient_accumulation_steps, 40);
        assert_eq!(
            out.skipped.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![4, 5]
        );
    }

    #[test]
    fn a_json_config_switches_program_and_a_bad_one_changes_nothing() {
        let num = |n: &str| Setting::Number(n.into());
        let nc = Setting::Object(vec![
            ("program".into(), Setting::Text("nanochat".into())),
            ("depth".into(), num("8")),
        ]);
        let out = interpret_json(&nc, &PageState::default());
        assert_eq!(out.pasted, Pasted::JsonConfig);
        assert_eq!(out.state.program, Program::Nanochat);
        assert_eq!(out.state.nanochat.depth, 8);
        // without "program": the page's own
        let ng = Setting::Object(vec![("batch_size".into(), num("4"))]);
        assert_eq!(
            interpret_json(&ng, &PageState::default())
                .state
                .config
                .batch_size,
            4
        );
        let bad = Setting::Object(vec![("batch_size".into(), num("-4"))]);
        let out = interpret_json(&bad, &PageState::default());
        assert_eq!(out.error.map(|e| e.key), Some("batch_size".into()));
        assert_eq!(out.state, PageState::default());
        assert!(looks_like_json("  {\"a\": 1}") && !looks_like_json("batch_size = 4"));
    }

    #[test]
    fn junk_is_nothing_and_changes_nothing() {
        let big = "x".repeat(3 * MAX_PASTE);
        for junk in [
            "",
            "   ",
            "hello world",
            "\u{0}\u{1}\u{fffd}",
            "ValueError: boom",
            big.as_str(),
        ] {
            let out = interpret(junk, &PageState::default());
            assert_eq!(
                out.pasted,
                Pasted::Nothing,
                "{:?}",
                &junk[..junk.len().min(20)]
            );
            assert_eq!(out.state, PageState::default());
        }
        assert!(interpret(&big, &PageState::default()).truncated);
    }
}
