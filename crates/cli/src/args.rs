//! Command-line arguments: nanoGPT's own (`config/x.py`, `--key=value`, applied in order, as
//! train.py's configurator applies them) and vramfit's options.

use std::fmt;

use estimator::programs::Program;
use vramfit_i18n::{Lang, TAGS};

/// One nanoGPT source of settings, in command-line order.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    File(String),
    Override(String),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    /// `--program=…` (nanoGPT when absent and no launch line names another).
    pub program: Option<String>,
    /// A launch line given as words: `python -m scripts.base_train …`, `torchrun … train.py …`.
    pub launch: Option<Vec<String>>,
    /// Another program's own flags, in order, as its argument parser will read them.
    pub script_args: Vec<String>,
    pub sources: Vec<Source>,
    pub gpu: Option<String>,
    /// `--gpu-index N`: which of nvidia-smi's GPUs `--gpu auto` reads.
    pub gpu_index: Option<usize>,
    pub vram_gib: Option<f64>,
    pub context_gib: Option<f64>,
    pub other_gib: Option<f64>,
    pub mfu: Option<f64>,
    pub nproc_per_node: Option<u32>,
    pub nnodes: Option<u32>,
    pub link_gbps: Option<f64>,
    pub oom_message: Option<String>,
    /// `--snapshot FILE`: a PyTorch memory snapshot to read back.
    pub snapshot: Option<String>,
    /// `--export-snapshot FILE`: where to write vramfit's run as one.
    pub export_snapshot: Option<String>,
    /// `--lang`: the text report's language (else the locale's).
    pub lang: Option<Lang>,
    pub json: bool,
    pub help: bool,
    pub version: bool,
    pub list_gpus: bool,
}

/// A command line that cannot be understood.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgError(pub String);

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The lowest model-FLOPs utilisation the speed model takes (0.1 %: below it a step's time
/// means nothing).
const MIN_MFU: f64 = 0.001;

const VALUE_OPTIONS: &[&str] = &[
    "gpu",
    "gpu-index",
    "vram-gib",
    "context-gib",
    "other-gib",
    "mfu",
    "oom-message",
    "snapshot",
    "export-snapshot",
    "nproc_per_node",
    "nproc-per-node",
    "nnodes",
    "link-gbps",
    "lang",
];

/// Words that start a launch line: an interpreter, a launcher, or a script vramfit knows.
fn starts_launch(word: &str) -> bool {
    matches!(word, "python" | "python3" | "torchrun" | "-m")
        || Program::from_script(word).is_some()
        || word.contains('=') && !word.starts_with('-') && word.starts_with("PYTORCH_")
}

/// An option's name without its dashes and value (`--gpu=rtx3060` → `gpu`).
fn option_name(word: &str) -> &str {
    let body = word.trim_start_matches('-');
    body.split_once('=').map_or(body, |(n, _)| n)
}

/// Whether a word is one of vramfit's own options that no training script takes (torchrun's
/// `--nproc_per_node`/`--nnodes`, which vramfit also takes, belong in a launch line).
fn is_own_option(word: &str) -> bool {
    word.starts_with("--")
        && !matches!(
            option_name(word),
            "nproc_per_node" | "nproc-per-node" | "nnodes"
        )
        && (VALUE_OPTIONS.contains(&option_name(word)) || matches!(word, "--json" | "--list-gpus"))
}

/// `--program=NAME` or `--program NAME` anywhere in `argv`: it decides how the words before it
/// are read (train.py's `--key=value` settings, or another script's own flags).
fn program_of(argv: &[String]) -> Option<String> {
    argv.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--program=")
            .map(str::to_string)
            .or_else(|| (a == "--program").then(|| argv.get(i + 1).cloned().unwrap_or_default()))
    })
}

/// vramfit's own words, which it reads whichever program runs (any other word of a script's
/// command line is the script's).
fn is_vramfit_word(word: &str) -> bool {
    matches!(
        word,
        "-h" | "--help" | "--version" | "--json" | "--list-gpus" | "--program"
    ) || word.starts_with("--program=")
        || word
            .strip_prefix("--")
            .is_some_and(|_| VALUE_OPTIONS.contains(&option_name(word)))
}

/// The launch line that starts at `word` and takes every word after it, refused where one of
/// vramfit's own options stands inside it (the script would be handed it: train.py says
/// "gpu= could not be read").
fn launch_line(words: Vec<String>) -> Result<Vec<String>, ArgError> {
    let Some(own) = words.iter().position(|w| is_own_option(w)) else {
        return Ok(words);
    };
    let given = if words[own].contains('=') || !VALUE_OPTIONS.contains(&option_name(&words[own])) {
        words[own].clone()
    } else {
        words[own..]
            .iter()
            .take(2)
            .cloned()
            .collect::<Vec<_>>()
            .join(" ")
    };
    Err(ArgError(format!(
        "{given} is vramfit's option, but it stands inside the launch line, whose \
         words go to the script: put vramfit's options before it (vramfit {given} {} …)",
        words[0]
    )))
}

/// Reads the command line with lexopt (ripgrep's parser: `--name value` and `--name=value`
/// alike, clustered short flags, a value that looks like an option taken as a value). Where a
/// word is not vramfit's, it is read as the script reads it, from the raw words: train.py's
/// configurator (config files and `--key=value`, in order), another script's own flags verbatim
/// (argparse reads `--depth -12` and `-m`, which lexopt would split), a launch line whole.
pub fn parse(argv: &[String]) -> Result<Args, ArgError> {
    use lexopt::prelude::*;

    let mut args = Args {
        program: program_of(argv),
        ..Args::default()
    };
    // a program that reads config files takes the words that are not flags as its files, in
    // order with its `--key=value` settings (train.py's configurator); another program's own
    // argument parser reads every word
    let config_files = match args.program.as_deref() {
        None => Program::DEFAULT.config_files(),
        Some(name) => Program::parse(name).is_some_and(Program::config_files),
    };
    let mut parser = lexopt::Parser::from_args(argv);
    loop {
        // the raw word, where lexopt stands between words (not inside `-abc` or `--k=v`)
        if let Some(mut raw) = parser.try_raw_args() {
            let Some(word) = raw.peek().and_then(|w| w.to_str()).map(str::to_string) else {
                break;
            };
            if starts_launch(&word) {
                let words = raw.map(|w| w.to_string_lossy().into_owned()).collect();
                args.launch = Some(launch_line(words)?);
                break;
            }
            if !is_vramfit_word(&word) {
                if !config_files {
                    // the program's own argument parser reads these (and says what is wrong)
                    args.script_args.push(word);
                    raw.next();
                    continue;
                }
                if word == "--" {
                    return Err(ArgError(
                        "unknown option '--': train.py's configurator takes config files and \
                         --key=value settings (see --help)"
                            .into(),
                    ));
                }
            }
        }
        let Some(arg) = parser.next().map_err(|e| ArgError(e.to_string()))? else {
            break;
        };
        let value = |parser: &mut lexopt::Parser, name: &str| {
            parser
                .value()
                .map(|v| v.to_string_lossy().into_owned())
                .map_err(|_| ArgError(format!("--{name} needs a value")))
        };
        match arg {
            Short('h') | Long("help") => args.help = true,
            Long("version") => args.version = true,
            Long("json") => args.json = true,
            Long("list-gpus") => args.list_gpus = true,
            // read before the loop, for the words before it
            Long("program") => drop(value(&mut parser, "program")?),
            Long(name) if VALUE_OPTIONS.contains(&name) => {
                let name = name.to_string();
                let value = value(&mut parser, &name)?;
                option(&mut args, &name, value)?;
            }
            Long(name) => {
                let name = name.to_string();
                match parser.optional_value() {
                    Some(v) => args.sources.push(Source::Override(format!(
                        "--{name}={}",
                        v.to_string_lossy()
                    ))),
                    None => {
                        return Err(ArgError(format!(
                            "unknown option '--{name}': nanoGPT settings are written \
                             --key=value (see --help)"
                        )))
                    }
                }
            }
            Short(c) => return Err(ArgError(format!("unknown option '-{c}' (see --help)"))),
            Value(file) => args
                .sources
                .push(Source::File(file.to_string_lossy().into_owned())),
        }
    }
    Ok(args)
}

/// One of vramfit's options that takes a value, checked as it is read.
fn option(args: &mut Args, name: &str, value: String) -> Result<(), ArgError> {
    let number = || {
        value
            .trim()
            .parse::<f64>()
            .map_err(|_| ArgError(format!("--{name}={value} is not a number of GiB")))
    };
    let count = || {
        value
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=estimator::config::MAX_WORLD_SIZE).contains(n))
            .ok_or_else(|| {
                ArgError(format!(
                    "--{name}={value} is not a number of processes from 1 to {}",
                    estimator::config::MAX_WORLD_SIZE
                ))
            })
    };
    match name {
        "nproc_per_node" | "nproc-per-node" => args.nproc_per_node = Some(count()?),
        "nnodes" => args.nnodes = Some(count()?),
        "link-gbps" => {
            args.link_gbps = Some(
                value
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0 && *x <= 10_000.0)
                    .ok_or_else(|| {
                        ArgError(format!(
                            "--link-gbps={value} is not a bandwidth in GB/s (above 0 to 10000)"
                        ))
                    })?,
            )
        }
        "gpu-index" => {
            args.gpu_index = Some(value.trim().parse().map_err(|_| {
                ArgError(format!("--gpu-index={value} is not a GPU index (0, 1, …)"))
            })?)
        }
        "lang" => {
            args.lang = Some(Lang::from_tag(&value).ok_or_else(|| {
                ArgError(format!("--lang={value} is not one of {}", TAGS.join(", ")))
            })?)
        }
        "vram-gib" => args.vram_gib = Some(number()?),
        "context-gib" => args.context_gib = Some(number()?),
        "other-gib" => args.other_gib = Some(number()?),
        "mfu" => {
            let m = value.trim().parse::<f64>().map_err(|_| {
                ArgError(format!(
                    "--{name}={value} is not a fraction: model-FLOPs utilisation, {MIN_MFU} to 1"
                ))
            })?;
            if !(MIN_MFU..=1.0).contains(&m) {
                return Err(ArgError(format!(
                    "--{name}={value} is out of range: model-FLOPs utilisation is {MIN_MFU} to 1"
                )));
            }
            args.mfu = Some(m)
        }
        "gpu" => args.gpu = Some(value),
        "oom-message" => args.oom_message = Some(value),
        "snapshot" => args.snapshot = Some(value),
        "export-snapshot" => args.export_snapshot = Some(value),
        _ => return Err(ArgError(format!("unknown option '--{name}' (see --help)"))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn keeps_nanogpt_order_and_reads_options() {
        let a = parse(&argv(
            "config/a.py --batch_size=8 --gpu rtx3060 b.py --compile=False --json --vram-gib=11.25",
        ))
        .unwrap();
        assert_eq!(
            a.sources,
            vec![
                Source::File("config/a.py".into()),
                Source::Override("--batch_size=8".into()),
                Source::File("b.py".into()),
                Source::Override("--compile=False".into()),
            ]
        );
        assert_eq!(a.gpu.as_deref(), Some("rtx3060"));
        assert_eq!(a.vram_gib, Some(11.25));
        assert!(a.json);
    }

    #[test]
    fn rejects_malformed() {
        assert!(parse(&argv("--gpu")).is_err());
        assert!(parse(&argv("--vram-gib=lots")).is_err());
        assert!(parse(&argv("--batch_size")).is_err());
        assert!(parse(&argv("-x")).is_err());
        // MFU is a fraction, not memory
        let e = parse(&argv("--mfu=abc")).unwrap_err();
        assert!(e.0.contains("not a fraction"), "{e}");
        let e = parse(&argv("--lang=fr")).unwrap_err();
        assert!(e.0.contains("--lang=fr is not one of en, zh-Hans"), "{e}");
        assert_eq!(
            parse(&argv("--lang zh_TW")).unwrap().lang,
            Some(Lang::ZhHant)
        );
    }

    #[test]
    fn another_scripts_words_pass_through_verbatim() {
        // argparse reads `--depth -12` and `-x`: lexopt alone would split them
        let a = parse(&argv(
            "--program=nanochat --depth -12 --gpu h100 -x --device-batch-size=4 --json",
        ))
        .unwrap();
        assert_eq!(
            a.script_args,
            vec!["--depth", "-12", "-x", "--device-batch-size=4"]
        );
        assert_eq!(a.gpu.as_deref(), Some("h100"));
        assert!(a.json && a.sources.is_empty());
    }

    #[test]
    fn a_launch_line_is_taken_whole() {
        let a = parse(&argv(
            "--gpu=t4 torchrun --nproc_per_node=8 -m scripts.base_train -- --depth=24",
        ))
        .unwrap();
        assert_eq!(a.gpu.as_deref(), Some("t4"));
        assert_eq!(
            a.launch.unwrap(),
            argv("torchrun --nproc_per_node=8 -m scripts.base_train -- --depth=24")
        );
        let e = parse(&argv("python train.py --gpu rtx3060")).unwrap_err();
        assert!(e.0.starts_with("--gpu rtx3060 is vramfit's option"), "{e}");
        // `--` is no train.py setting (its configurator asserts on it)
        let e = parse(&argv("-- --batch_size=8")).unwrap_err();
        assert!(e.0.contains("unknown option '--'"), "{e}");
    }
}
