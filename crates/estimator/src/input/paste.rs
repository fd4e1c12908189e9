//! Whatever a user pastes: an out-of-memory message (with or without its traceback), a
//! `python train.py …` / `torchrun … train.py …` command line, a nanoGPT config file, or a JSON
//! config (parsed by the page, read by [`interpret_json`]). Says what it is, applies what it
//! understood to the page's state, and lists what it did not.

use crate::error::ConfigError;
use crate::input::json_config::{self, Setting};
use crate::input::skipped::Skipped;
use crate::oom::{parse, CardSaid, Diagnosis, OomMessage};
use crate::programs::{config_from_flags, Program};
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
        /// The message's card against the one chosen on the page.
        card: MessageCard,
        /// Whether the page holds settings of the user's (not the program's defaults): a
        /// message says nothing of the run's settings, so without them the page asks for them.
        settings_given: bool,
    },
    /// A train.py or torchrun command line.
    CommandLine {
        world_size: u32,
        /// Config files it names whose content is not known here.
        unknown_files: Vec<String>,
    },
    ConfigFile,
    /// train.py settings that change nothing of the run's memory (`learning_rate = 3e-4`):
    /// nothing was changed.
    ConfigUnchanged,
    /// A JSON config (or a saved `--json` answer), of the program it names.
    JsonConfig,
}

/// Where an out-of-memory message's card stands against the page's.
#[derive(Clone, Debug, PartialEq)]
pub enum MessageCard {
    /// The message names no card (or a capacity no card has).
    Unknown,
    /// The card chosen on the page is the message's: what else held it (other processes, the
    /// context, a cap) was applied.
    Same,
    /// The message comes from another card than the one chosen: nothing of the card was
    /// applied, since a message can come from another machine; `with_card` is the page with
    /// the message's card and budget, for the user to switch to.
    Other {
        /// The capacity the message gives, in bytes.
        total_bytes: u128,
        /// The preset of that capacity, if any (a message names no model: only its size).
        like: Option<&'static str>,
        with_card: Box<PageState>,
    },
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
        // A message gives its card's size, never its model, and drivers move that size by up
        // to ~0.25 GiB: a card within 1.5 % of it (the tolerance presets are matched with) is
        // taken for the chosen one, which is kept. Another card is only offered: a message can
        // come from another machine, and the page must not answer for a card the user did not
        // pick.
        let chosen = out.state.budget().gpu.total_bytes;
        let card = match message.card_said() {
            None => MessageCard::Unknown,
            Some(_) => {
                let total = message.total_capacity_bytes.unwrap_or_default();
                if chosen.abs_diff(total) as f64 <= 0.015 * chosen as f64 {
                    MessageCard::Same
                } else {
                    let mut with_card = out.state.clone();
                    apply_card(&mut with_card, &message);
                    apply_budget(&mut with_card, &message);
                    MessageCard::Other {
                        total_bytes: total,
                        like: message.card().map(|g| g.name),
                        with_card: Box::new(with_card),
                    }
                }
            }
        };
        // the same card, or none named: what else held it belongs to this run
        if !matches!(card, MessageCard::Other { .. }) {
            apply_budget(&mut out.state, &message);
        }
        // which tensor failed: read off the run's allocation sequence, where the program does
        let diagnosis = out.state.configs.diagnose(out.state.program, &message);
        out.pasted = Pasted::OomMessage {
            message: Box::new(message),
            diagnosis,
            card,
            settings_given: !out.state.has_default_settings(),
        };
        return out;
    }
    // a command line names a training script (on one of its lines)
    let launches = |l: &str| {
        Program::ALL
            .iter()
            .any(|p| p.launch_words().iter().any(|w| l.contains(w)))
    };
    if let Some(line) = text
        .lines()
        .find(|l| !l.trim_start().starts_with('#') && launches(l))
    {
        // backslash continuations: the rest of the paste belongs to the command
        let start = text.find(line).unwrap_or(0);
        let command = &text[start..];
        let read = crate::input::command_line::parse(command).and_then(|l| {
            let read = out.state.configs.read_launch(l.program, &l, command)?;
            Ok((l, read))
        });
        match read {
            Ok((l, read)) => {
                out.state.program = l.program;
                out.skipped = read.skipped;
                out.pasted = Pasted::CommandLine {
                    world_size: l.world_size,
                    unknown_files: read.unknown_files,
                };
            }
            Err(e) => out.error = Some(e),
        }
        return out;
    }
    // a script's own text (a config file's lines, its constants): the program that applies the
    // most of its lines (a nanochat-free `batch_size = 8` is nanoGPT's and LLMs-from-scratch's
    // alike: the one that also reads `CHOOSE_MODEL = …` is the script's), ties to the page's
    // program and then the registry's order; an error only where no program reads it cleanly
    let order = std::iter::once(current.program)
        .chain(Program::ALL.into_iter().filter(|p| *p != current.program));
    let reads: Vec<_> = order
        .filter_map(|p| current.configs.read_text(p, current.program == p, text))
        .collect();
    let most = reads
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|r| r.applied))
        .max();
    let best = match most {
        Some(n) => reads
            .into_iter()
            .find(|r| r.as_ref().is_ok_and(|r| r.applied == n)),
        None => reads.into_iter().next(),
    };
    match best {
        Some(Ok(read)) => {
            out.skipped = read.skipped;
            if current.configs.holds(&read.config) {
                out.pasted = Pasted::ConfigUnchanged;
            } else {
                out.state.set_config(read.config);
                out.pasted = Pasted::ConfigFile;
            }
        }
        Some(Err(e)) => out.error = Some(e),
        None => {}
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
        state.set_config(config_from_flags(program, &args)?);
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
/// The message's card as the page's card.
fn apply_card(state: &mut PageState, m: &OomMessage) {
    use crate::gpu::{MAX_CARD_GIB, MIN_CARD_GIB};
    match m.card_said() {
        Some(CardSaid::Preset(card)) => state.gpu = card.id.to_string(),
        Some(CardSaid::Custom { total_bytes }) => {
            state.gpu = "custom".into();
            state.vram_gib = gib_hundredths(total_bytes).clamp(MIN_CARD_GIB, MAX_CARD_GIB);
        }
        None => {}
    }
}

/// What else held the card, as the message says: other processes, the context, a cap. A number
/// outside what the page takes (a cap of "0.01 GiB allowed") is left out rather than written
/// into the URL, where a reload would refuse it.
fn apply_budget(state: &mut PageState, m: &OomMessage) {
    use crate::gpu::{MAX_CARD_GIB, MIN_CARD_GIB};
    state.other_gib = gib_hundredths(m.other_bytes()).min(MAX_CARD_GIB);
    if let Some(c) = m.context_bytes() {
        state.context_gib = Some(gib_hundredths(c).min(64.0));
    }
    state.cap_gib = m
        .allowed_bytes
        .map(gib_hundredths)
        .filter(|x| (MIN_CARD_GIB..=MAX_CARD_GIB).contains(x));
}

/// Bytes as GiB to the hundredth, as the page's fields hold them.
fn gib_hundredths(b: u128) -> f64 {
    (crate::units::gib(b) * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::programs::Program;
    use crate::Dtype;

    #[test]
    fn an_oom_message_sets_the_card_and_explains_the_failure() {
        let mut state = PageState::default();
        state.configs.nanogpt.batch_size = 8;
        state.configs.nanogpt.compile = false;
        state.configs.nanogpt.gradient_accumulation_steps = 2;
        let text = "Traceback (most recent call last):\n  File \"train.py\", line 300, in <module>\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.54 GiB. GPU 0 has a total capacity of 11.69 GiB of which 1.05 GiB is free. Including non-PyTorch memory, this process has 10.64 GiB memory in use. Of the allocated memory 7.81 GiB is allocated by PyTorch, and 2.40 GiB is reserved by PyTorch but unallocated.";
        let out = interpret(text, &state);
        assert_eq!(out.state.gpu, "rtx3060");
        let Pasted::OomMessage { diagnosis, .. } = out.pasted else {
            panic!("{:?}", out.pasted)
        };
        let d = diagnosis.unwrap();
        assert_eq!(d.term, crate::Term::LossGrads);
        assert_eq!(
            out.state.configs.nanogpt, state.configs.nanogpt,
            "the config is kept"
        );
    }

    const MESSAGE_3080_12: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.54 GiB. GPU 0 has a total capacity of 11.76 GiB of which 1.05 GiB is free. Process 99 has 1.50 GiB memory in use. Of the allocated memory 7.81 GiB is allocated by PyTorch, and 2.40 GiB is reserved by PyTorch but unallocated.";

    #[test]
    fn a_message_from_another_card_is_offered_not_applied() {
        let mut state = PageState {
            gpu: "rtx4090".into(),
            ..PageState::default()
        };
        state.configs.nanogpt.batch_size = 8;
        let out = interpret(MESSAGE_3080_12, &state);
        assert_eq!(out.state, state, "nothing of the page changes");
        let Pasted::OomMessage {
            card: MessageCard::Other {
                like, with_card, ..
            },
            settings_given: true,
            ..
        } = &out.pasted
        else {
            panic!("{:?}", out.pasted)
        };
        assert_eq!(*like, Some("RTX 3080 12 GB"));
        assert_eq!(with_card.gpu, "rtx3080_12");
        assert_eq!(with_card.other_gib, 1.5);
        assert_eq!(with_card.configs.nanogpt, state.configs.nanogpt);
    }

    #[test]
    fn a_message_within_a_drivers_difference_is_the_chosen_card() {
        // 11.76 GiB reported, an RTX 3060 (11.69) chosen: the same card under another driver
        let out = interpret(MESSAGE_3080_12, &PageState::default());
        assert_eq!(out.state.gpu, "rtx3060");
        assert_eq!(out.state.other_gib, 1.5, "what else held it is applied");
        assert!(matches!(
            out.pasted,
            Pasted::OomMessage {
                card: MessageCard::Same,
                settings_given: false,
                ..
            }
        ));
    }

    #[test]
    fn odd_numbers_in_a_message_are_not_misread() {
        let m = parse("CUDA out of memory. Tried to allocate -0.5 GiB. GPU 0 has a total capacity of 0 bytes of which 1 GiB is free. 0.01 GiB allowed; 1.00 GiB reserved");
        assert_ne!(m.tried_to_allocate_bytes, Some(5 << 30), "-0.5 is not 5");
        assert_eq!(m.card_said(), None, "0 bytes is no card");
        let out = interpret(
            "CUDA out of memory. Tried to allocate 20.00 MiB. 0.01 GiB allowed; 0.00 GiB already allocated",
            &PageState::default(),
        );
        assert_eq!(
            out.state.cap_gib, None,
            "a cap the page cannot take is left out"
        );
    }

    #[test]
    fn nanogpts_config_files_are_nanogpts_on_a_pasted_line() {
        let state = PageState {
            program: Program::BuildNanoGpt,
            ..PageState::default()
        };
        let out = interpret("config/train_gpt2.py --batch_size=8", &state);
        assert_eq!(out.error, None);
        assert_eq!(out.state.program, Program::NanoGpt);
        assert_eq!(out.state.configs.nanogpt.batch_size, 8);
        assert_eq!(out.state.configs.nanogpt.gradient_accumulation_steps, 40);
    }

    #[test]
    fn config_lines_edit_the_page_and_irrelevant_ones_change_nothing() {
        let mut state = PageState::default();
        state.configs.nanogpt.batch_size = 3;
        state.configs.nanogpt.n_layer = 6;
        let out = interpret("learning_rate = 3e-4", &state);
        assert_eq!(out.pasted, Pasted::ConfigUnchanged);
        assert_eq!(out.state, state);
        let out = interpret("block_size = 256", &state);
        assert_eq!(out.pasted, Pasted::ConfigFile);
        assert_eq!(
            (
                out.state.configs.nanogpt.batch_size,
                out.state.configs.nanogpt.n_layer
            ),
            (3, 6),
            "the other settings are kept"
        );
        assert_eq!(out.state.configs.nanogpt.block_size, 256);
        let nanochat = PageState {
            program: Program::Nanochat,
            ..PageState::default()
        };
        let out = interpret("learning_rate = 3e-4", &nanochat);
        assert_eq!(
            out.state.program,
            Program::Nanochat,
            "no switch for nothing"
        );
    }

    #[test]
    fn a_long_sum_of_strings_is_refused_in_linear_time() {
        let line = format!("out_dir = {}\n", vec!["'a'*65536"; 1600].join(" + "));
        let t = std::time::Instant::now();
        let out = interpret(&line, &PageState::default());
        assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
        assert_eq!(out.state, PageState::default());
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
        assert_eq!(out.state.configs.nanogpt.batch_size, 8);
        assert_eq!(out.state.configs.nanogpt.dtype, Dtype::Float16);
        assert_eq!(out.state.configs.nanogpt.gradient_accumulation_steps, 40);
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
        assert_eq!(out.state.configs.nanogpt.gradient_accumulation_steps, 40);
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
        assert_eq!(out.state.configs.nanochat.depth, 8);
        // without "program": the page's own
        let ng = Setting::Object(vec![("batch_size".into(), num("4"))]);
        assert_eq!(
            interpret_json(&ng, &PageState::default())
                .state
                .configs
                .nanogpt
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
