//! Command-line arguments: nanoGPT's own (`config/x.py`, `--key=value`, applied in order, as
//! train.py's configurator applies them) and vramfit's options.

use std::fmt;

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
    "nproc_per_node",
    "nproc-per-node",
    "nnodes",
    "link-gbps",
    "lang",
];

/// Words that start a launch line: an interpreter, a launcher, or a script vramfit knows.
fn starts_launch(word: &str) -> bool {
    matches!(word, "python" | "python3" | "torchrun" | "-m")
        || estimator::programs::Program::from_script(word).is_some()
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

/// `--program=NAME` or `--program NAME` anywhere in `argv`.
fn program_of(argv: &[String]) -> Option<String> {
    argv.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--program=")
            .map(str::to_string)
            .or_else(|| (a == "--program").then(|| argv.get(i + 1).cloned().unwrap_or_default()))
    })
}

pub fn parse(argv: &[String]) -> Result<Args, ArgError> {
    let mut args = Args {
        program: program_of(argv),
        ..Args::default()
    };
    let nanogpt = args.program.as_deref().is_none_or(|p| p == "nanogpt");
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        i += 1;
        if arg == "--program" {
            i += 1;
            continue;
        }
        if arg.starts_with("--program=") {
            continue;
        }
        if starts_launch(arg) {
            let launch = argv[i - 1..].to_vec();
            if let Some(own) = launch.iter().position(|w| is_own_option(w)) {
                // the script would be handed it (train.py: "gpu= could not be read")
                let given = launch[own..].iter().take(2).cloned().collect::<Vec<_>>();
                let given = if launch[own].contains('=')
                    || !VALUE_OPTIONS.contains(&option_name(&launch[own]))
                {
                    launch[own].clone()
                } else {
                    given.join(" ")
                };
                return Err(ArgError(format!(
                    "{given} is vramfit's option, but it stands inside the launch line, whose \
                     words go to the script: put vramfit's options before it (vramfit {given} {} …)",
                    launch[0]
                )));
            }
            args.launch = Some(launch);
            break;
        }
        match arg.as_str() {
            "-h" | "--help" => args.help = true,
            "--version" => args.version = true,
            "--json" => args.json = true,
            "--list-gpus" => args.list_gpus = true,
            _ => {}
        }
        if matches!(
            arg.as_str(),
            "-h" | "--help" | "--version" | "--json" | "--list-gpus"
        ) {
            continue;
        }
        let vramfit_option = arg
            .strip_prefix("--")
            .map(|b| b.split_once('=').map_or(b, |x| x.0))
            .is_some_and(|name| VALUE_OPTIONS.contains(&name));
        if !nanogpt && !vramfit_option {
            // the program's own argument parser reads these (and says what is wrong with them)
            args.script_args.push(arg.clone());
            continue;
        }
        let Some(body) = arg.strip_prefix("--") else {
            if arg.starts_with('-') {
                return Err(ArgError(format!("unknown option '{arg}' (see --help)")));
            }
            args.sources.push(Source::File(arg.clone()));
            continue;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        if VALUE_OPTIONS.contains(&name) {
            let value = match inline {
                Some(v) => v,
                None => {
                    let Some(v) = argv.get(i) else {
                        return Err(ArgError(format!("--{name} needs a value")));
                    };
                    i += 1;
                    v.clone()
                }
            };
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
                "gpu" => args.gpu = Some(value.clone()),
                "gpu-index" => {
                    args.gpu_index = Some(value.trim().parse().map_err(|_| {
                        ArgError(format!("--gpu-index={value} is not a GPU index (0, 1, …)"))
                    })?)
                }
                "oom-message" => args.oom_message = Some(value.clone()),
                "lang" => {
                    args.lang = Some(Lang::from_tag(&value).ok_or_else(|| {
                        ArgError(format!("--lang={value} is not one of {}", TAGS.join(", ")))
                    })?)
                }
                "vram-gib" => args.vram_gib = Some(number()?),
                "context-gib" => args.context_gib = Some(number()?),
                "mfu" => {
                    let m = value.trim().parse::<f64>().map_err(|_| {
                        ArgError(format!(
                            "--{name}={value} is not a fraction: model-FLOPs utilisation, {} to 1",
                            MIN_MFU
                        ))
                    })?;
                    if !(MIN_MFU..=1.0).contains(&m) {
                        return Err(ArgError(format!(
                            "--{name}={value} is out of range: model-FLOPs utilisation is {MIN_MFU} to 1"
                        )));
                    }
                    args.mfu = Some(m)
                }
                _ => args.other_gib = Some(number()?),
            }
            continue;
        }
        if inline.is_none() {
            return Err(ArgError(format!(
                "unknown option '{arg}': nanoGPT settings are written --key=value (see --help)"
            )));
        }
        args.sources.push(Source::Override(arg.clone()));
    }
    Ok(args)
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
}
