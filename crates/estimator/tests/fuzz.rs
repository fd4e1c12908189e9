//! Every input from outside, fuzzed: URL queries, config files, command lines, Python literals,
//! out-of-memory messages, pasted text. Random unicode and hostile values (NaN, 1e308, negative,
//! 10^6 layers, empty, deep nesting) must give a value or an error naming the field, never a
//! panic, and what the decoders accept must be a valid run. The same entry points are the
//! cargo-fuzz targets in `fuzz/` (which need a nightly toolchain; this runs in CI).

#![allow(clippy::unwrap_used)]

use estimator::configurator::Configurator;
use estimator::programs::build_nanogpt::{self, config as bng_config, BngConfig};
use estimator::programs::nanochat::{self, NanochatConfig};
use estimator::programs::Program;
use estimator::query::PageState;
use estimator::{gpu, Budget};
use estimator::{oom, paste, pyliteral, FIELDS_JSON_ORDER};
use proptest::prelude::*;

const HOSTILE: &[&str] = &[
    "",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "-1",
    "0",
    "1000000",
    "99999999999999999999999999",
    "1_000",
    "0x10",
    "１２",
    "💥",
    "True",
    "none",
    "None",
    "'float16'",
    "\"bfloat16\"",
    "2**1000000",
    "1/0",
    "((((((((((((((((((((((((((((((((((((((((((((((((((1",
    "[1, 2]",
    "-0.0",
    "8.0",
    "%00",
    "%ZZ",
    "a=b=c",
    "\u{0}",
];

/// A key: one vramfit knows, one of the page's, or anything.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..FIELDS_JSON_ORDER.len()).prop_map(|i| FIELDS_JSON_ORDER[i].to_string()),
        prop::sample::select(vec![
            "gpu",
            "vram_gib",
            "context_gib",
            "other_gib",
            "cap_gib",
            "link_gbps",
            "lang",
            "embed",
            "theme",
            "program",
        ])
        .prop_map(str::to_string),
        // the other programs' names (URL keys: argparse destinations, the script's constants)
        prop::sample::select(
            NanochatConfig::KEYS
                .iter()
                .chain(NanochatConfig::SFT_KEYS)
                .map(|k| k.replace('-', "_"))
                .chain(bng_config::KEYS.iter().map(|k| k.to_string()))
                .collect::<Vec<_>>()
        ),
        ".{0,12}",
    ]
}

/// A value: hostile, numeric, a program, or anything.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..HOSTILE.len()).prop_map(|i| HOSTILE[i].to_string()),
        prop::sample::select(Program::NAMES.to_vec()).prop_map(str::to_string),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|x| x.to_string()),
        ".{0,16}",
    ]
}

/// Text that looks a little like what users paste, or not at all.
fn text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        (key(), value()).prop_map(|(k, v)| format!("{k} = {v}")),
        (key(), value()).prop_map(|(k, v)| format!("--{k}={v}")),
        value().prop_map(|v| format!("Tried to allocate {v} GiB (GPU 0; {v} GiB total capacity; {v} MiB already allocated)")),
        value().prop_map(|v| format!("GPU 0 has a total capacity of {v} GiB of which {v} MiB is free. Of the allocated memory {v} GiB is allocated by PyTorch, and {v} is reserved by PyTorch but unallocated.")),
        value().prop_map(|v| format!("torchrun --standalone --nproc_per_node={v} train.py config/train_gpt2.py --batch_size={v}")),
        (key(), value()).prop_map(|(k, v)| format!("python -m scripts.base_train --{k}={v} --depth {v}")),
        (key(), value()).prop_map(|(k, v)| format!("torchrun --nproc_per_node={v} -m scripts.chat_sft -- --{k} {v}")),
        value().prop_map(|v| format!("torchrun --standalone --nproc_per_node={v} train_gpt2.py")),
        value().prop_map(|v| format!("B = {v} # micro batch size")),
        value().prop_map(|v| format!("model = GPT(GPTConfig(vocab_size=50304, n_layer={v}))")),
        ".{0,40}",
    ];
    prop::collection::vec(line, 0..12).prop_map(|l| l.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// The URL decoder: never fails, always yields a valid run, and round-trips.
    #[test]
    fn url_queries(pairs in prop::collection::vec((key(), value()), 0..10), raw in ".{0,60}") {
        let query: String = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", estimator::query::encode(k), estimator::query::encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        for q in [query.as_str(), raw.as_str()] {
            let (state, issues) = PageState::from_query(q);
            prop_assert!(state.configs.nanogpt.validate().is_ok(), "{q}: {:?}", state.configs.nanogpt.validate());
            prop_assert!(state.validate().is_ok(), "{q}: {:?}", state.validate());
            for i in &issues {
                prop_assert!(!i.to_string().is_empty());
            }
            let again = PageState::from_query(&state.to_query());
            prop_assert_eq!(&again.0, &state);
            prop_assert!(again.1.is_empty(), "{:?}", again.1);
        }
    }

    /// Config files, overrides and command lines through nanoGPT's configurator.
    #[test]
    fn config_files_and_command_lines(t in text(), arg in ".{0,40}") {
        let mut c = Configurator::new();
        c.apply_file("fuzz.py", &t);
        let _ = c.apply_override(&arg);
        if let Ok((cfg, _)) = c.finish() {
            prop_assert!(cfg.validate().is_ok());
        }
        let mut c = Configurator::new();
        if c.apply_command_line(&t).is_ok() {
            if let Ok((cfg, _)) = c.finish() {
                prop_assert!(cfg.validate().is_ok());
            }
        }
    }

    /// Python literals and arithmetic, as config files write them.
    #[test]
    fn python_literals(expr in prop_oneof![value(), "[0-9()+*/%. -]{0,40}", ".{0,40}"]) {
        let _ = pyliteral::eval(&expr);
    }

    /// Out-of-memory messages and any pasted text, whichever program the page shows.
    #[test]
    fn oom_messages_and_pastes(t in text(), program in prop::sample::select(Program::ALL.to_vec())) {
        let m = oom::parse(&t);
        let _ = oom::diagnose(&m, &Default::default());
        let state = PageState { program, ..PageState::default() };
        let out = paste::interpret(&t, &state);
        prop_assert!(out.state.configs.nanogpt.validate().is_ok());
        if out.error.is_none() {
            prop_assert!(out.state.validate().is_ok(), "{:?}", out.state.validate());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// nanochat's and build-nanogpt's argument readers: any flags give a config or an error
    /// naming what was wrong; what they accept is analysed without a panic, its parts adding up.
    #[test]
    fn other_programs_flags(
        flags in prop::collection::vec((key(), value()), 0..6),
        sft in any::<bool>(),
    ) {
        let args: Vec<String> = flags.iter().map(|(k, v)| format!("--{k}={v}")).collect();
        let budget = Budget::for_gpu(gpu::find("rtx4090").unwrap());
        let nc = if sft {
            NanochatConfig::from_sft_args(&args)
        } else {
            NanochatConfig::from_args(&args)
        };
        match nc {
            Ok(cfg) => {
                // keep the fuzzed run small enough to replay quickly
                if cfg.depth <= 32 && cfg.tokens_per_micro_step() <= 1 << 16 {
                    let a = nanochat::analyze(&cfg, &budget).unwrap();
                    prop_assert_eq!(a.components().total(), a.peak_bytes());
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
        match BngConfig::from_args(&args) {
            Ok(cfg) => {
                if cfg.n_layer <= 32 && cfg.tokens_per_micro_step() <= 1 << 16 && cfg.n_embd <= 2048 {
                    let a = build_nanogpt::analyze(&cfg, &budget).unwrap();
                    prop_assert_eq!(a.components().total(), a.peak_bytes());
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn hostile_values_in_every_field_are_refused_by_name() {
    for key in FIELDS_JSON_ORDER {
        for v in ["NaN", "1e308", "-1", "💥", "", "1000000000000"] {
            let mut s = PageState::default();
            if let Err(issue) = s.set(key, v) {
                assert_eq!(issue.key, *key);
                assert!(issue.to_string().contains(key), "{issue}");
                assert_eq!(s, PageState::default(), "{key}={v} changed the state");
            }
            assert!(s.configs.nanogpt.validate().is_ok(), "{key}={v}");
        }
    }
    // 10^6 layers is refused, not estimated
    let mut s = PageState::default();
    let e = s.set("n_layer", "1000000").unwrap_err();
    assert_eq!(
        e.to_string(),
        "n_layer=1000000 is out of range: allowed 1 to 1024; using the default"
    );
    // a megabyte of text is cut, not parsed forever
    let big = "batch_size = 8\n".repeat(200_000);
    assert!(paste::interpret(&big, &PageState::default()).truncated);
}

/// Words a run script is made of, good and bad: launchers, stages, their flags and values.
fn script_word() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "torchrun",
            "--standalone",
            "--nproc_per_node=2",
            "--nproc_per_node",
            "python",
            "-m",
            "--",
            "scripts.base_train",
            "scripts.base_eval",
            "scripts.chat_sft",
            "scripts.chat_eval",
            "scripts.chat_rl",
            "--depth=2",
            "--depth=3",
            "--depth",
            "--max-seq-len=256",
            "--device-batch-size=2",
            "--device-batch-size",
            "--fp8",
            "-i",
            "sft",
            "-b",
            "-b2",
            "-a",
            "MMLU|GSM8K",
            "-n",
            "--eval=bpb",
            "--eval=core,bogus",
            "--split-tokens=-1",
            "\\",
            "#",
            "'",
            "\"",
            "$WANDB_RUN",
            "X=1",
            "\n",
            "&&",
            ";",
        ])
        .prop_map(str::to_string),
        prop::sample::select(HOSTILE.to_vec()).prop_map(str::to_string),
        ".{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A pasted run script: any words, in any order, give a plan (the lines it cannot read kept
    /// as they are, a stage's bad flags as that stage's error), never a panic.
    #[test]
    fn run_scripts(words in prop::collection::vec(script_word(), 0..24), gpus in 1u32..9) {
        let script = words.join(" ");
        let hw = nanochat::plan::Hardware {
            budget: Budget::for_gpu(gpu::find("h100").unwrap()),
            gpus,
        };
        let p = nanochat::plan::plan(&script, &hw, None, None);
        for s in &p.stages {
            if let Err(e) = &s.planned {
                prop_assert!(!e.to_string().is_empty());
            }
        }
        // every line that is not a stage comes back as written
        let stage_lines: Vec<usize> = p.stages.iter().map(|s| s.line).collect();
        for (i, line) in script.lines().enumerate() {
            if !stage_lines.contains(&(i + 1)) && !line.ends_with('\\') {
                prop_assert!(p.script.contains(line), "{line:?} lost");
            }
        }
    }
}
