//! A pasted or given launch line — `python train.py …`, `python -m scripts.base_train …`,
//! `torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- …` — split into what it
//! launches (which program), what the launcher says (processes, allocator) and the script's own
//! arguments, which the program then reads with its own rules.

use crate::config::Allocator;
use crate::error::{ConfigError, Problem};
use crate::programs::seam::DdpLaunch;
use crate::programs::Program;

/// What a launch line says.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub program: Program,
    /// `torchrun --nproc_per_node=N` × `--nnodes`; 1 for a plain `python`.
    pub world_size: u32,
    /// Started by torchrun (`torchrun`, `python -m torch.distributed.run` or `.launch`), which
    /// sets `RANK` even for one process.
    pub torchrun: bool,
    /// The word that named the program (`train.py`, `ch05/10_llm-training-speed/02_opt_multi_gpu_ddp.py`).
    pub script: String,
    /// `PYTORCH_CUDA_ALLOC_CONF=…` / `PYTORCH_ALLOC_CONF=…` in front of it: whether it asks for
    /// expandable segments (`None` when the line does not set it).
    pub expandable_segments: Option<bool>,
    /// The script's arguments, in order.
    pub args: Vec<String>,
}

impl Launch {
    /// What the launcher's words set, as the program's own settings (key, value): the processes
    /// torchrun starts (or, for one, that it still trains under DDP, where the program tells
    /// them apart) and the allocator `PYTORCH_ALLOC_CONF` asks for, either way. The page's
    /// paste and the CLI apply them after the script's arguments, so both read a line alike.
    pub fn launcher_settings(&self) -> Vec<(&'static str, String)> {
        let mut settings = Vec::new();
        if self.world_size > 1 {
            settings.push((self.program.processes_key(), self.world_size.to_string()));
        } else if let Some(ddp) = self
            .program
            .one_gpu_ddp()
            .filter(|_| self.one_process_ddp())
        {
            settings.push((ddp.key, "True".to_string()));
        }
        if let Some(expandable) = self.expandable_segments {
            let allocator = if expandable {
                Allocator::ExpandableSegments
            } else {
                Allocator::Default
            };
            settings.push(("allocator", allocator.as_str().to_string()));
        }
        settings
    }

    /// One process that trains under DDP all the same, by what its program says makes it so
    /// (torchrun's `RANK` for train.py and train_gpt2.py, its own name for
    /// 02_opt_multi_gpu_ddp.py); more than one are counted by `world_size` and are DDP whatever
    /// starts them.
    pub fn one_process_ddp(&self) -> bool {
        self.world_size == 1
            && match self.program.one_gpu_ddp().map(|d| d.when) {
                Some(DdpLaunch::Torchrun) => self.torchrun,
                Some(DdpLaunch::Script(name)) => self.script.rsplit('/').next() == Some(name),
                None => false,
            }
    }

    /// [`Launch::launcher_settings`] as `--key=value` flags.
    pub fn launcher_flags(&self) -> Vec<String> {
        self.launcher_settings()
            .into_iter()
            .map(|(k, v)| format!("--{k}={v}"))
            .collect()
    }

    /// Refuses arguments the script does not take (train_gpt2.py reads none: its settings are
    /// constants in the file), so a line that gives it some is refused, not half-read.
    pub fn check_script_args(&self) -> Result<(), ConfigError> {
        self.program.check_script_args(&self.args)
    }
}

/// Reads a launch line; the error names what is missing or wrong.
pub fn parse(line: &str) -> Result<Launch, ConfigError> {
    parse_words(&shell_words(line))
}

/// [`parse`] for a line already split into words (a command line given to the CLI).
pub fn parse_words(words: &[String]) -> Result<Launch, ConfigError> {
    let line = words.join(" ");
    // (where the launcher's words end, where the script's arguments start, the program)
    let found = words
        .iter()
        .enumerate()
        .find_map(|(i, w)| Program::from_script(w).map(|p| (i, i + 1, p)))
        // `config/train_gpt2.py --batch_size=8`, train.py left out: the config file names its
        // program, and it is the first of the script's arguments
        .or_else(|| {
            words
                .iter()
                .enumerate()
                .find_map(|(i, w)| Program::of_config_file(w).map(|p| (i, i, p)))
        });
    let Some((script, args_start, program)) = found else {
        return Err(ConfigError::new(
            "command",
            line.chars().take(80).collect::<String>(),
            Problem::Unreadable {
                detail: "no training script in the command line (train.py, scripts.base_train, \
                         scripts.chat_sft, train_gpt2.py)"
                    .into(),
            },
        ));
    };
    let world_size = processes(&words[..script])?;
    let torchrun = words[..script].iter().any(|w| {
        w.rsplit('/').next() == Some("torchrun")
            || w == "torch.distributed.run"
            || w == "torch.distributed.launch"
    });
    let expandable_segments = words[..script].iter().rev().find_map(|w| {
        ["PYTORCH_CUDA_ALLOC_CONF=", "PYTORCH_ALLOC_CONF="]
            .iter()
            .find_map(|var| w.strip_prefix(var))
            .map(|v| v.contains("expandable_segments:True"))
    });
    let mut args: Vec<String> = words[args_start..].to_vec();
    // torchrun … -m scripts.base_train -- --depth=26: the `--` only ends torchrun's options
    if args.first().is_some_and(|a| a == "--") {
        args.remove(0);
    }
    Ok(Launch {
        program,
        world_size,
        torchrun,
        script: words[script].clone(),
        expandable_segments,
        args,
    })
}

/// The processes a launcher's words start: torchrun's `--nproc_per_node` (either spelling) ×
/// `--nnodes`, 1 for a plain `python`; an error names a count that is not 1-1024.
pub fn processes(launcher: &[String]) -> Result<u32, ConfigError> {
    let (mut nproc, mut nnodes) = (1u32, 1u32);
    let mut i = 0;
    while i < launcher.len() {
        let w = &launcher[i];
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (w.as_str(), None),
        };
        if flag == "--nproc_per_node" || flag == "--nproc-per-node" || flag == "--nnodes" {
            let v = inline.or_else(|| {
                i += 1;
                launcher.get(i).cloned()
            });
            let n = v
                .as_deref()
                .and_then(|v| v.parse::<u32>().ok())
                .filter(|n| (1..=1024).contains(n))
                .ok_or_else(|| {
                    ConfigError::new(
                        flag.trim_start_matches('-'),
                        v.clone().unwrap_or_default(),
                        Problem::WrongType {
                            expected: "a whole number of processes",
                        },
                    )
                })?;
            if flag == "--nnodes" {
                nnodes = n;
            } else {
                nproc = n;
            }
        }
        i += 1;
    }
    Ok(nproc.saturating_mul(nnodes))
}

/// Splits a shell command line into words (single and double quotes, backslash escapes).
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let mut in_word = false;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    // a line continuation joins the lines
                    if n != '\n' {
                        cur.push(n);
                        in_word = true;
                    }
                }
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}
