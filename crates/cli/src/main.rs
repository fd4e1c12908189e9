//! `vramfit`: the estimator on the command line.

mod args;
mod nvidia_smi;
mod plan;
mod report;
mod snapshot;

use std::io::Write;
use std::process::ExitCode;

use estimator::input::command_line;
use estimator::oom::CardSaid;
use estimator::programs::seam::ScriptArg;
use estimator::programs::{Program, ProgramConfig};
use estimator::{gpu, Budget};

use args::{Args, Source};
use vramfit_i18n::format::use_separators;
use vramfit_i18n::{en, CliLang, Lang};

/// A refused setting in the report's language. English keeps the estimator's own wording, which
/// carries details the translated templates leave out (what could not be read, and why).
pub(crate) fn config_error(tr: &CliLang, e: &estimator::ConfigError) -> String {
    if tr.lang == en().lang {
        e.to_string()
    } else {
        vramfit_i18n::error(tr, e)
    }
}

/// Bad input: one line on stderr, exit code 2, nothing on stdout.
/// The program `--program=NAME` names, or why it names none.
pub(crate) fn named_program(name: &str) -> Result<Program, String> {
    Program::parse(name).ok_or_else(|| {
        format!(
            "--program={name} is not allowed: use one of {}",
            Program::NAMES.join(", ")
        )
    })
}

pub(crate) fn fail(msg: impl std::fmt::Display) -> ExitCode {
    say(&one_line(&msg.to_string()));
    ExitCode::from(2)
}

/// One line on stderr, prefixed `vramfit: `. A closed stderr loses the line but never panics
/// (as `eprintln!` would).
pub(crate) fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "vramfit: {line}");
}

/// A message as one line: control characters a user typed (`--n_layer=$'a\nb'`) are shown
/// escaped, never as a line break or a carriage return that would tear the message apart.
fn one_line(msg: &str) -> String {
    msg.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// The text report's language: `--lang`, else the locale (`LC_ALL`, `LC_MESSAGES`, `LANG`: the
/// first one set, as POSIX orders them), else English.
pub(crate) fn language(args: &Args) -> Lang {
    args.lang.unwrap_or_else(|| {
        ["LC_ALL", "LC_MESSAGES", "LANG"]
            .iter()
            .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
            .and_then(|v| Lang::from_locale(&v))
            .unwrap_or(Lang::En)
    })
}

/// Config files larger than this are not nanoGPT configs.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// Writes the answer to stdout. A reader that went away (`vramfit --list-gpus | head -1`) ends
/// the run quietly; any other failure to write (`> /dev/full`, a closed stdout) is said in one
/// line and exit code 2, never a panic and never a silent success.
pub(crate) fn emit(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(2),
        Err(e) => fail(format!("cannot write the answer to standard output: {e}")),
    }
}

/// The command line as text; an argument that is not UTF-8 is refused by its position, with
/// the bytes it could read shown (a lossy copy would read as a different value).
fn argv() -> Result<Vec<String>, String> {
    std::env::args_os()
        .skip(1)
        .enumerate()
        .map(|(i, a)| {
            a.into_string().map_err(|a| {
                let mut shown = String::new();
                for chunk in a.as_encoded_bytes().utf8_chunks() {
                    shown.push_str(chunk.valid());
                    for b in chunk.invalid() {
                        shown.push_str(&format!("\\x{b:02x}"));
                    }
                }
                format!("argument {} ('{shown}') is not UTF-8 text", i + 1)
            })
        })
        .collect()
}

fn main() -> ExitCode {
    let argv = match argv() {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    if argv.first().is_some_and(|a| a == "plan") {
        return plan::main(&argv[1..]);
    }
    let mut args = match args::parse(&argv) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    if let Err(e) = read_json_configs(&mut args) {
        return fail(e);
    }
    if args.help {
        return emit(language(&args).cli().cli.help);
    }
    if args.version {
        return emit(&format!("vramfit {}\n", env!("CARGO_PKG_VERSION")));
    }
    let tr = &if args.json {
        CliLang::en()
    } else {
        language(&args).cli()
    };
    use_separators(&tr.bar_words());
    if let Some(path) = &args.snapshot {
        return snapshot::main(&args, path, tr);
    }
    if let Some(path) = &args.export_snapshot {
        return snapshot::export(&args, path, tr);
    }
    if args.list_gpus {
        let mut list = String::new();
        for g in gpu::PRESETS {
            list += &format!(
                "{:<14} {:<26} {:>7.2} GiB  sm{}{}  bf16 {:<3}  L2 {:>3} MiB ({})\n",
                g.id,
                g.name,
                estimator::units::gib(g.total_bytes),
                g.compute_capability.0,
                g.compute_capability.1,
                if g.bf16 { "yes" } else { "no" },
                // the size of Inductor's autotuning buffer on a first compiled run
                g.l2_cache_bytes >> 20,
                if g.l2_measured() {
                    "measured"
                } else {
                    "datasheet"
                }
            );
        }
        return emit(&list);
    }

    // which program: a launch line names it, else --program (nanoGPT's train.py by default)
    let launch = match args.launch.as_deref().map(command_line::parse_words) {
        Some(Ok(l)) => Some(l),
        Some(Err(e)) => return fail(e),
        None => None,
    };
    let program = match (&launch, args.program.as_deref()) {
        (Some(l), _) => l.program,
        (None, None) => Program::DEFAULT,
        (None, Some(name)) => match named_program(name) {
            Ok(p) => p,
            Err(e) => return fail(e),
        },
    };
    let (config, skipped) = match script_config(&args, tr, program, launch.as_ref()) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    respond(&args, tr, &config, &skipped)
}

/// The config the command line describes: the program's words in order (its flags, and
/// train.py's config files with their text), then the launch line's arguments and what the
/// launcher says (`torchrun --nproc_per_node`, `PYTORCH_ALLOC_CONF`), then vramfit's
/// `--nproc_per_node` × `--nnodes` as the program's setting; and what was read but not applied.
fn script_config(
    args: &Args,
    tr: &CliLang,
    program: Program,
    launch: Option<&command_line::Launch>,
) -> Result<(ProgramConfig, Vec<String>), String> {
    let file = |path: &str| -> Result<ScriptArg, String> {
        let text = read_config(path).map_err(|e| format!("cannot read config file {path}: {e}"))?;
        Ok(ScriptArg::File {
            path: path.to_string(),
            text,
        })
    };
    let mut words: Vec<ScriptArg> = Vec::new();
    for source in &args.sources {
        words.push(match source {
            Source::File(path) => file(path)?,
            Source::Override(flag) => ScriptArg::Flag(flag.clone()),
        });
    }
    words.extend(args.script_args.iter().cloned().map(ScriptArg::Flag));
    if let Some(l) = launch {
        l.check_script_args().map_err(|e| config_error(tr, &e))?;
        for a in &l.args {
            words.push(if program.config_files() && !a.starts_with("--") {
                file(a)?
            } else {
                ScriptArg::Flag(a.clone())
            });
        }
        words.extend(l.launcher_flags().into_iter().map(ScriptArg::Flag));
    }
    if args.nproc_per_node.is_some() || args.nnodes.is_some() {
        let world = args.nproc_per_node.unwrap_or(1) * args.nnodes.unwrap_or(1);
        let key = program.processes_key();
        words.push(ScriptArg::Flag(format!("--{key}={world}")));
    }
    program
        .config_from_args(&words)
        .map_err(|e| config_error(tr, &e))
}

/// JSON configs (`vramfit run.json`): each becomes its program's flags where the file stands,
/// so the command line's later flags still win; one naming another program (`"program":
/// "nanochat"`) makes the run that program's.
fn read_json_configs(args: &mut Args) -> Result<(), String> {
    let is_json = |p: &str| p.ends_with(".json");
    let given = match args.program.as_deref() {
        Some(name) => Program::parse(name),
        None => Some(Program::DEFAULT),
    };
    let Some(given) = given else { return Ok(()) }; // the dispatch names a bad --program
    let read = |path: &str| -> Result<(Program, Vec<String>), String> {
        let text = read_config(path).map_err(|e| format!("cannot read config file {path}: {e}"))?;
        let (program, flags) =
            vramfit_report::read_config(&text, given).map_err(|e| format!("{path}: {e}"))?;
        if args.program.is_some() && program != given {
            return Err(format!(
                "{path} is a config for {}, but --program={} was given",
                program.id(),
                given.id()
            ));
        }
        Ok((program, flags))
    };
    // the words as the given program reads them: its config files and flags in order, or the
    // words its own argument parser reads
    let mut sources = Vec::new();
    let mut switched: Option<Program> = None;
    for source in std::mem::take(&mut args.sources) {
        match source {
            Source::File(path) if is_json(&path) => {
                let (program, flags) = read(&path)?;
                if program != given {
                    switched = Some(program);
                }
                sources.extend(flags.into_iter().map(Source::Override));
            }
            other => sources.push(other),
        }
    }
    let mut script_args = Vec::new();
    for a in std::mem::take(&mut args.script_args) {
        if is_json(&a) {
            script_args.extend(read(&a)?.1);
        } else {
            script_args.push(a);
        }
    }
    args.script_args = script_args;
    match switched {
        None => args.sources = sources,
        // another program's config: its flags and the command line's, for its own parser
        Some(program) => {
            args.program = Some(program.id().to_string());
            for s in sources {
                match s {
                    Source::Override(flag) => args.script_args.push(flag),
                    Source::File(path) if !program.config_files() => {
                        return Err(format!(
                            "{path}: a {} config file cannot be combined with a {} JSON config",
                            given.script(),
                            program.id()
                        ))
                    }
                    file => args.sources.push(file),
                }
            }
        }
    }
    Ok(())
}

/// The answer for a config already read: the card from the options (and an OOM message), the
/// analysis and the ranked fixes, printed as JSON or text; what the command line read but did
/// not apply (`skipped`) said first, on stderr.
fn respond(args: &Args, tr: &CliLang, config: &ProgramConfig, skipped: &[String]) -> ExitCode {
    let message = match read_oom_message(args) {
        Ok(m) => m,
        Err(e) => return fail(e),
    };
    let budget = match budget_for(args, tr, message.as_ref()) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let analysis = match config.analyze(&budget) {
        Ok(a) => a,
        Err(e) => return fail(config_error(tr, &e)),
    };
    for w in skipped {
        say(&format!("warning: {w}"));
    }
    let mfu = args.mfu.unwrap_or(estimator::speed::DEFAULT_MFU);
    let fixes = config.rank_fixes(&budget, mfu);
    let ask = vramfit_report::Asked {
        config,
        analysis: &analysis,
        fixes: fixes.as_ref(),
        budget: &budget,
        message: message.as_ref().map(|m| (m, config.diagnose(m))),
        skipped,
        mfu,
    };
    let out = if args.json {
        format!("{}\n", vramfit_report::to_json(&ask))
    } else {
        report::to_text(tr, &ask, config)
    };
    emit(&out)
}

/// The `--oom-message` given, read and parsed.
pub(crate) fn read_oom_message(args: &Args) -> Result<Option<estimator::oom::OomMessage>, String> {
    match args.oom_message.as_deref() {
        Some(path) => match read_message(path) {
            Ok(text) => Ok(Some(estimator::oom::parse(&text))),
            Err(e) => Err(format!("cannot read the out-of-memory message {path}: {e}")),
        },
        None => Ok(None),
    }
}

/// The card and what else holds it: `--gpu` (or the card an OOM message names, else the default),
/// `--vram-gib`, `--context-gib`, `--other-gib`, `--link-gbps`, and what the message says.
pub(crate) fn budget_for(
    args: &Args,
    tr: &CliLang,
    message: Option<&estimator::oom::OomMessage>,
) -> Result<Budget, String> {
    // a pasted out-of-memory message: its numbers, and the card it came from
    let said = message.and_then(|m| m.card_said());
    // no card named anywhere: this machine's, if nvidia-smi answers, else an assumed one that
    // the answer names as such (a 3060 owner must not read "fits on H100" as about their card)
    let unnamed = args.gpu.is_none() && said.is_none() && args.vram_gib.is_none();
    let auto = if unnamed {
        nvidia_smi::budget(args.gpu_index.unwrap_or(0)).ok()
    } else {
        None
    };
    if args.gpu.as_deref() == Some("auto") || auto.is_some() {
        let mut budget = match auto {
            Some(b) => b,
            None => nvidia_smi::budget(args.gpu_index.unwrap_or(0))?,
        };
        if let Some(x) = args.other_gib {
            budget = budget.with_other_gib(x).map_err(|e| e.to_string())?;
        }
        return Ok(budget);
    }
    let preset = match args.gpu.as_deref() {
        // the page's and the answer's id for a custom card: its memory is --vram-gib
        Some(name) if name.trim().eq_ignore_ascii_case("custom") => match args.vram_gib {
            Some(_) => None,
            None => {
                return Err(format!(
                    "--gpu {name} needs --vram-gib, the custom card's memory in GiB \
                     (--gpu custom --vram-gib 16)"
                ))
            }
        },
        Some(name) => match gpu::find(name) {
            Some(g) => Some(g),
            None => return Err(vramfit_report::unknown_gpu(name)),
        },
        None => match said {
            Some(CardSaid::Preset(g)) => Some(g),
            _ => None,
        },
    };
    let mut budget = match (preset, said, args.vram_gib) {
        // a card no preset has, known by the total the message gives
        (None, Some(CardSaid::Custom { total_bytes }), None) => Budget::for_gpu(&gpu::Gpu {
            total_bytes,
            name: "card from the message",
            ..gpu::custom_card()
        }),
        _ => Budget::for_card(preset, args.vram_gib).map_err(|e| e.to_string())?,
    };
    if let Some(x) = args.context_gib {
        budget = budget.with_context_gib(x).map_err(|e| e.to_string())?;
    }
    if let Some(x) = args.other_gib {
        budget = budget.with_other_gib(x).map_err(|e| e.to_string())?;
    }
    // what else the message says held the card
    if let Some(m) = message {
        if args.other_gib.is_none() {
            budget.other_bytes = m.other_bytes();
        }
        if args.context_gib.is_none() {
            if let Some(c) = m.context_bytes() {
                budget.context_bytes = c;
            }
        }
        budget.cap_bytes = m.allowed_bytes;
    }
    if let Some(link) = args.link_gbps {
        budget.gpu.link_gbps = link;
    }
    // said once the card is settled, so a refused option stays the only line
    if unnamed {
        say(&tr.cli.assumed_gpu.replace("{card}", budget.gpu.name));
    }

    Ok(budget)
}

/// At most `limit` bytes of a file or of stdin (`-`), and whether there was more. Every input
/// is read through this: a device (`/dev/zero`), a FIFO or a pipe reports no size up front, so
/// the bound is on what is read, not on what the file system says.
fn read_bounded(path: &str, limit: u64) -> Result<(Vec<u8>, bool), String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let reader: Box<dyn Read> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err("it is a directory".into());
        }
        Box::new(std::fs::File::open(path).map_err(|e| e.to_string())?)
    };
    reader
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    let more = bytes.len() as u64 > limit;
    bytes.truncate(limit as usize);
    Ok((bytes, more))
}

/// An OOM message from a file or stdin (`-`); a long log is read up to its first MiB of text.
fn read_message(path: &str) -> Result<String, String> {
    let (bytes, _) = read_bounded(path, 1 << 20)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A config file's text. nanoGPT's own config files (`config/train_gpt2.py`, …) are known by
/// name when there is no such file here, so its README's commands work from any folder; a file
/// on disk (an edited copy) wins.
fn read_config(path: &str) -> Result<String, String> {
    let missing = std::fs::metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    if missing {
        if let Some(text) = estimator::configurator::nanogpt_config(path) {
            return Ok(text.to_string());
        }
    }
    let (bytes, more) = read_bounded(path, MAX_CONFIG_BYTES)?;
    if more {
        return Err(format!(
            "it is larger than {} bytes, too large for a config file",
            MAX_CONFIG_BYTES
        ));
    }
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())
}
