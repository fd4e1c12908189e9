//! nanoGPT's configurator, applied to text: config files (Python assignments) and `--key=value`
//! overrides, in the order given, then what train.py derives (vocabulary from the dataset's
//! meta.pkl, model shape from `init_from='gpt2*'`).
//!
//! train.py runs `exec(open(config_file).read())` for each file and `ast.literal_eval` for each
//! override (configurator.py). Files may hold anything Python; lines that are not a literal
//! assignment are reported with their number and skipped, which is harmless for the lines nanoGPT's
//! own configs have (`import time`, `wandb_run_name = 'ft-' + str(time.time())`). Overrides are
//! checked as strictly as train.py checks them: unknown keys and unreadable values are errors.

use crate::config::{field, TrainConfig, OTHER_TRAIN_KEYS};
use crate::error::{ConfigError, Problem};
use crate::pyliteral::{eval, PyValue};

pub use crate::input::skipped::{SkipReason, Skipped};

/// The model shapes `GPT.from_pretrained` loads (model.py), with GPT-2's 50257-token vocabulary,
/// bias=True and a 1024-token context.
pub const PRETRAINED: &[(&str, u32, u32, u32)] = &[
    ("gpt2", 12, 12, 768),
    ("gpt2-medium", 24, 16, 1024),
    ("gpt2-large", 36, 20, 1280),
    ("gpt2-xl", 48, 25, 1600),
];

/// Vocabulary sizes train.py reads from `data/<dataset>/meta.pkl`; datasets without one use
/// GPT-2's 50304.
pub const DATASET_VOCAB: &[(&str, u32)] = &[("shakespeare_char", 65)];

/// nanoGPT's own config files (karpathy/nanoGPT `config/*.py`, memory-relevant lines verbatim), so
/// a pasted command line that names one applies it as train.py would.
pub const NANOGPT_CONFIGS: &[(&str, &str)] = &[
    (
        "config/train_gpt2.py",
        "wandb_log = True\nwandb_project = 'owt'\nwandb_run_name='gpt2-124M'\nbatch_size = 12\nblock_size = 1024\ngradient_accumulation_steps = 5 * 8\nmax_iters = 600000\nlr_decay_iters = 600000\neval_interval = 1000\neval_iters = 200\nlog_interval = 10\nweight_decay = 1e-1\n",
    ),
    (
        "config/train_shakespeare_char.py",
        "out_dir = 'out-shakespeare-char'\neval_interval = 250\neval_iters = 200\nlog_interval = 10\nalways_save_checkpoint = False\nwandb_log = False\nwandb_project = 'shakespeare-char'\nwandb_run_name = 'mini-gpt'\ndataset = 'shakespeare_char'\ngradient_accumulation_steps = 1\nbatch_size = 64\nblock_size = 256\nn_layer = 6\nn_head = 6\nn_embd = 384\ndropout = 0.2\nlearning_rate = 1e-3\nmax_iters = 5000\nlr_decay_iters = 5000\nmin_lr = 1e-4\nbeta2 = 0.99\nwarmup_iters = 100\n",
    ),
    (
        "config/finetune_shakespeare.py",
        "import time\nout_dir = 'out-shakespeare'\neval_interval = 5\neval_iters = 40\nwandb_log = False\nwandb_project = 'shakespeare'\nwandb_run_name = 'ft-' + str(time.time())\ndataset = 'shakespeare'\ninit_from = 'gpt2-xl'\nalways_save_checkpoint = False\nbatch_size = 1\ngradient_accumulation_steps = 32\nmax_iters = 20\nlearning_rate = 3e-5\ndecay_lr = False\n",
    ),
    ("config/eval_gpt2.py", "batch_size = 8\neval_iters = 500\neval_only = True\nwandb_log = False\ninit_from = 'gpt2'\n"),
    ("config/eval_gpt2_medium.py", "batch_size = 8\neval_iters = 500\neval_only = True\nwandb_log = False\ninit_from = 'gpt2-medium'\n"),
    ("config/eval_gpt2_large.py", "batch_size = 8\neval_iters = 500\neval_only = True\nwandb_log = False\ninit_from = 'gpt2-large'\n"),
    ("config/eval_gpt2_xl.py", "batch_size = 8\neval_iters = 500\neval_only = True\nwandb_log = False\ninit_from = 'gpt2-xl'\n"),
];

/// The text of one of nanoGPT's own config files, by its path or file name
/// (`config/train_gpt2.py`, `../nanoGPT/config/train_gpt2.py`, `train_gpt2.py`).
pub fn nanogpt_config(path: &str) -> Option<&'static str> {
    let file = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    NANOGPT_CONFIGS
        .iter()
        .find(|(name, _)| file(name) == file(path))
        .map(|(_, text)| *text)
}

/// What a pasted command line said besides train.py's settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommandLine {
    /// `torchrun --nproc_per_node=N` (× `--nnodes`), 1 for a plain `python train.py`.
    pub world_size: u32,
    /// Config files named on it that are not nanoGPT's own (their content is unknown here).
    pub unknown_files: Vec<String>,
    /// `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` in front of it.
    pub expandable_segments: bool,
}

/// Applies config files and overrides in order.
#[derive(Clone, Debug, Default)]
pub struct Configurator {
    pub cfg: TrainConfig,
    vocab_explicit: bool,
    dataset: Option<String>,
    init_from: Option<String>,
    /// Lines of config files that were not applied.
    pub skipped: Vec<Skipped>,
}

impl Configurator {
    pub fn new() -> Self {
        Configurator::default()
    }

    /// Sets one key as train.py's globals would be set; `Ok(false)` for a key train.py knows but
    /// that does not change memory (kept only where it derives something, like `dataset`).
    fn assign(&mut self, key: &str, value: &PyValue) -> Result<(), ConfigError> {
        if field(key).is_some() {
            self.cfg.set(key, value)?;
            if key == "vocab_size" {
                self.vocab_explicit = true;
            }
            return Ok(());
        }
        let Some(&(_, ty)) = OTHER_TRAIN_KEYS.iter().find(|(k, _)| *k == key) else {
            return Err(ConfigError::new(key, value, Problem::UnknownKey));
        };
        let type_ok = matches!(
            (ty, value),
            ("str", PyValue::Str(_))
                | ("bool", PyValue::Bool(_))
                | ("int", PyValue::Int(_))
                | ("float", PyValue::Float(_) | PyValue::Int(_))
        );
        if !type_ok {
            return Err(ConfigError::new(
                key,
                value,
                Problem::WrongType {
                    expected: match ty {
                        "str" => "a string",
                        "bool" => "True or False",
                        "int" => "an integer",
                        _ => "a number",
                    },
                },
            ));
        }
        match (key, value) {
            // the run's memory is a card's only on CUDA: said, not silently answered for a GPU
            ("device", PyValue::Str(s)) if s != "cuda" && !s.starts_with("cuda:") => {
                return Err(ConfigError::new(
                    key,
                    value,
                    Problem::Unreadable {
                        detail: "vramfit models a run on a CUDA GPU ('cuda', 'cuda:N'); on the \
                                 CPU or Apple's mps the memory is the machine's, not a card's"
                            .into(),
                    },
                ))
            }
            ("dataset", PyValue::Str(s)) => self.dataset = Some(s.clone()),
            ("init_from", PyValue::Str(s)) => self.init_from = Some(s.clone()),
            _ => {}
        }
        Ok(())
    }

    /// One `--key=value` argument, as train.py's configurator reads it: the value is a Python
    /// literal, or else taken as a string (`--dtype=float16` works unquoted).
    pub fn apply_override(&mut self, arg: &str) -> Result<(), ConfigError> {
        let body = arg.strip_prefix("--").unwrap_or(arg);
        let Some((key, raw)) = body.split_once('=') else {
            return Err(ConfigError::new(
                body,
                "",
                Problem::Unreadable {
                    detail: "expected --key=value".into(),
                },
            ));
        };
        let key = key.trim();
        let value = parse_override_value(raw);
        self.assign(key, &value)
    }

    /// A config file's text: each `key = value` line in order; other lines are collected in
    /// [`Configurator::skipped`].
    pub fn apply_file(&mut self, source: &str, text: &str) {
        for (i, line) in logical_lines(text) {
            let code = strip_comment(&line);
            let code = code.trim();
            if code.is_empty() {
                continue;
            }
            let skip = |reason| Skipped {
                source: source.to_string(),
                line: i,
                text: line.clone(),
                reason,
            };
            let Some((lhs, rhs)) = split_assignment(code) else {
                let why = if code.starts_with("import ") || code.starts_with("from ") {
                    "an import".to_string()
                } else {
                    "not an assignment".to_string()
                };
                self.skipped.push(skip(SkipReason::NotUnderstood(why)));
                continue;
            };
            let key = lhs.trim();
            if !is_identifier(key) {
                self.skipped.push(skip(SkipReason::NotUnderstood(
                    "not a simple assignment".into(),
                )));
                continue;
            }
            let known = field(key).is_some() || OTHER_TRAIN_KEYS.iter().any(|(k, _)| *k == key);
            match eval(rhs.trim()) {
                Err(e) if known => self
                    .skipped
                    .push(skip(SkipReason::NotUnderstood(e.to_string()))),
                Err(e) => self
                    .skipped
                    .push(skip(SkipReason::NotUnderstood(e.to_string()))),
                Ok(_) if !known => self
                    .skipped
                    .push(skip(SkipReason::UnknownKey(key.to_string()))),
                Ok(v) => {
                    if let Err(e) = self.assign(key, &v) {
                        self.skipped.push(skip(SkipReason::Invalid(e)));
                    }
                }
            }
        }
    }

    /// A `python train.py …` or `torchrun … train.py …` line: environment assignments in front,
    /// torchrun's options, then train.py's arguments applied in order (nanoGPT's own config
    /// files by their known content). Errors name the argument.
    pub fn apply_command_line(&mut self, line: &str) -> Result<CommandLine, ConfigError> {
        let launch = crate::input::command_line::parse(line)?;
        if launch.program != crate::programs::Program::NanoGpt {
            return Err(ConfigError::new(
                "command",
                line.chars().take(80).collect::<String>(),
                Problem::Unreadable {
                    detail: format!(
                        "this line launches {}, not train.py",
                        launch.program.script()
                    ),
                },
            ));
        }
        let mut out = CommandLine {
            world_size: launch.world_size,
            expandable_segments: launch.expandable_segments == Some(true),
            ..CommandLine::default()
        };
        // each process runs train.py: the world size is part of the run (range-checked here)
        self.cfg
            .set("world_size", &PyValue::Int(out.world_size.into()))?;
        self.cfg.torchrun = launch.one_process_ddp();
        for arg in &launch.args {
            if arg.starts_with("--") {
                self.apply_override(arg)?;
            } else if let Some(text) = nanogpt_config(arg) {
                self.apply_file(arg, text);
            } else {
                out.unknown_files.push(arg.clone());
            }
        }
        Ok(out)
    }

    /// What train.py derives after the configurator ran.
    pub fn finish(mut self) -> Result<(TrainConfig, Vec<Skipped>), ConfigError> {
        if let Some(init) = self.init_from.as_deref() {
            if let Some(&(_, l, h, c)) = PRETRAINED.iter().find(|(n, ..)| *n == init) {
                // GPT.from_pretrained: GPT-2's shape, vocabulary and biases; crop_block_size()
                // shortens the context only if the config asks for less than 1024.
                self.cfg.n_layer = l;
                self.cfg.n_head = h;
                self.cfg.n_embd = c;
                self.cfg.vocab_size = 50257;
                self.cfg.bias = true;
                self.cfg.block_size = self.cfg.block_size.min(1024);
            } else if init != "scratch" && init != "resume" {
                return Err(ConfigError::new(
                    "init_from",
                    PyValue::Str(init.to_string()),
                    Problem::NotOneOf {
                        choices: &[
                            "scratch",
                            "resume",
                            "gpt2",
                            "gpt2-medium",
                            "gpt2-large",
                            "gpt2-xl",
                        ],
                    },
                ));
            }
        }
        let from_scratch = !matches!(self.init_from.as_deref(), Some(i) if i.starts_with("gpt2"));
        if from_scratch && !self.vocab_explicit {
            if let Some(ds) = self.dataset.as_deref() {
                if let Some(&(_, v)) = DATASET_VOCAB.iter().find(|(d, _)| *d == ds) {
                    self.cfg.vocab_size = v;
                }
            }
        }
        self.cfg.validate()?;
        Ok((self.cfg, self.skipped))
    }
}

/// train.py's configurator: `literal_eval(val)`, falling back to the raw string.
pub fn parse_override_value(raw: &str) -> PyValue {
    let trimmed = raw.trim();
    match eval(trimmed) {
        Ok(v) => v,
        Err(_) => PyValue::Str(trimmed.to_string()),
    }
}

/// Joins lines continued by a backslash or by open brackets, keeping the first line's number.
pub(crate) fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut buf = String::new();
    let mut start = 0;
    let mut depth: i32 = 0;
    for (i, raw) in text.lines().enumerate() {
        if buf.is_empty() {
            start = i + 1;
        }
        let code = strip_comment(raw);
        depth += code.matches(['(', '[', '{']).count() as i32;
        depth -= code.matches([')', ']', '}']).count() as i32;
        if let Some(stripped) = raw.trim_end().strip_suffix('\\') {
            buf.push_str(stripped);
            buf.push(' ');
            continue;
        }
        buf.push_str(raw);
        if depth > 0 {
            buf.push(' ');
            continue;
        }
        depth = 0;
        out.push((start, std::mem::take(&mut buf)));
    }
    if !buf.is_empty() {
        out.push((start, buf));
    }
    out
}

/// Drops a `#` comment that is not inside a string.
pub(crate) fn strip_comment(line: &str) -> String {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' => return line[..i].to_string(),
            None => {}
        }
    }
    line.to_string()
}

/// `key = value` (not `==`, `+=`, `<=`…): the position of the single `=` outside strings.
fn split_assignment(code: &str) -> Option<(&str, &str)> {
    let bytes = code.as_bytes();
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'=' => {
                let prev = if i > 0 { bytes[i - 1] } else { b' ' };
                let next = bytes.get(i + 1).copied().unwrap_or(b' ');
                if next == b'=' || b"=!<>+-*/%&|^@:".contains(&prev) {
                    return None;
                }
                return Some((&code[..i], &code[i + 1..]));
            }
            None => {}
        }
    }
    None
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// nanoGPT's config/train_gpt2.py, as in the repository.
    const TRAIN_GPT2: &str = "# config for training GPT-2 (124M) down to very nice loss of ~2.85 on 1 node of 8X A100 40GB
# launch as the following (e.g. in a screen session) and wait ~5 days:
# $ torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py

wandb_log = True
wandb_project = 'owt'
wandb_run_name='gpt2-124M'

# these make the total batch size be ~0.5M
# 12 batch size * 1024 block size * 5 gradaccum * 8 GPUs = 491,520
batch_size = 12
block_size = 1024
gradient_accumulation_steps = 5 * 8

# this makes total number of tokens be 300B
max_iters = 600000
lr_decay_iters = 600000

# eval stuff
eval_interval = 1000
eval_iters = 200
log_interval = 10

# weight decay
weight_decay = 1e-1
";

    #[test]
    fn train_gpt2_config() {
        let mut c = Configurator::new();
        c.apply_file("config/train_gpt2.py", TRAIN_GPT2);
        let (cfg, skipped) = c.finish().unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        assert_eq!(cfg.gradient_accumulation_steps, 40);
        assert_eq!(cfg.batch_size, 12);
        assert_eq!(cfg.eval_interval, 1000);
    }

    #[test]
    fn overrides_after_files_like_train_py() {
        let mut c = Configurator::new();
        c.apply_file("x.py", "batch_size = 16\ncompile = False\n");
        c.apply_override("--batch_size=8").unwrap();
        c.apply_override("--dtype=float16").unwrap();
        c.apply_override("--dropout=0.1").unwrap();
        let (cfg, _) = c.finish().unwrap();
        assert_eq!(cfg.batch_size, 8);
        assert!(!cfg.compile);
        assert_eq!(cfg.dtype, crate::Dtype::Float16);
        assert_eq!(cfg.dropout, 0.1);
    }

    #[test]
    fn bad_overrides_are_errors() {
        let mut c = Configurator::new();
        assert_eq!(
            c.apply_override("--batch_sise=8").unwrap_err().problem,
            Problem::UnknownKey
        );
        assert!(c.apply_override("--batch_size=eight").is_err());
        assert!(c.apply_override("--batch_size").is_err());
        assert!(c.apply_override("--learning_rate=fast").is_err());
        c.apply_override("--learning_rate=3e-4").unwrap();
    }

    #[test]
    fn file_lines_not_understood_are_reported_with_numbers() {
        let text = "import time\nwandb_run_name = 'ft-' + str(time.time())\nbatch_size = 4 # small\nfoo = 3\nn_layer = 'x'\n";
        let mut c = Configurator::new();
        c.apply_file("f.py", text);
        let lines: Vec<usize> = c.skipped.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![1, 2, 4, 5]);
        let (cfg, _) = c.finish().unwrap();
        assert_eq!(cfg.batch_size, 4);
        assert_eq!(cfg.n_layer, 12);
    }

    #[test]
    fn dataset_and_pretrained_models_derive_shape() {
        let mut c = Configurator::new();
        c.apply_file("s.py", "dataset = 'shakespeare_char'\nn_layer = 6\n");
        assert_eq!(c.finish().unwrap().0.vocab_size, 65);

        let mut c = Configurator::new();
        c.apply_file("ft.py", "init_from = 'gpt2-xl'\nbatch_size = 1\n");
        let (cfg, _) = c.finish().unwrap();
        assert_eq!((cfg.n_layer, cfg.n_head, cfg.n_embd), (48, 25, 1600));
        assert_eq!(
            (cfg.vocab_size, cfg.bias, cfg.block_size),
            (50257, true, 1024)
        );

        let mut c = Configurator::new();
        c.apply_override("--init_from=gpt3").unwrap();
        assert!(c.finish().is_err());
    }

    #[test]
    fn command_lines_as_users_paste_them() {
        let mut c = Configurator::new();
        let cl = c
            .apply_command_line(
                "python train.py config/train_shakespeare_char.py --batch_size=32 --compile=False",
            )
            .unwrap();
        assert_eq!(cl.world_size, 1);
        let (cfg, _) = c.finish().unwrap();
        assert_eq!((cfg.n_layer, cfg.batch_size, cfg.vocab_size), (6, 32, 65));
        assert!(!cfg.compile);

        let mut c = Configurator::new();
        let cl = c
            .apply_command_line("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py")
            .unwrap();
        assert_eq!(cl.world_size, 8);
        assert!(cl.expandable_segments);
        assert_eq!(c.finish().unwrap().0.gradient_accumulation_steps, 40);

        let mut c = Configurator::new();
        let cl = c
            .apply_command_line("torchrun --nproc_per_node 4 --nnodes=2 train.py my_config.py \\\n --dtype='float16'")
            .unwrap();
        assert_eq!(cl.world_size, 8);
        assert_eq!(cl.unknown_files, vec!["my_config.py".to_string()]);
        assert_eq!(c.finish().unwrap().0.dtype, crate::Dtype::Float16);

        // one process under torchrun (or torch.distributed.run) is DDP; python's is not
        for (line, torchrun) in [
            ("torchrun --standalone --nproc_per_node=1 train.py", true),
            ("/opt/venv/bin/torchrun --nproc_per_node 1 train.py", true),
            (
                "python -m torch.distributed.run --nproc_per_node=1 train.py",
                true,
            ),
            ("python train.py --torchrun=True", false),
            ("python3 train.py", false),
        ] {
            let mut c = Configurator::new();
            c.cfg.torchrun = !torchrun; // a launch line says which, whatever was set before
            let cl = c.apply_command_line(line).unwrap();
            assert_eq!(cl.world_size, 1, "{line}");
            let cfg = c.finish().unwrap().0;
            // a script argument still wins over the launcher, as train.py's own overrides do
            let want = torchrun || line.contains("--torchrun=True");
            assert_eq!((cfg.torchrun, cfg.is_ddp()), (want, want), "{line}");
        }

        assert!(Configurator::new()
            .apply_command_line("python sample.py")
            .is_err());
        assert!(Configurator::new()
            .apply_command_line("torchrun --nproc_per_node=x train.py")
            .is_err());
    }

    #[test]
    fn nanogpt_own_configs_parse_to_the_right_fields() {
        let get = |name: &str| {
            let (_, text) = NANOGPT_CONFIGS.iter().find(|(n, _)| *n == name).unwrap();
            let mut c = Configurator::new();
            c.apply_file(name, text);
            let skipped = c.skipped.clone();
            (c.finish().unwrap().0, skipped)
        };
        let (cfg, skipped) = get("config/train_gpt2.py");
        assert!(skipped.is_empty());
        assert_eq!(
            (
                cfg.batch_size,
                cfg.gradient_accumulation_steps,
                cfg.eval_interval
            ),
            (12, 40, 1000)
        );
        let (cfg, _) = get("config/train_shakespeare_char.py");
        assert_eq!(
            (cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.block_size),
            (6, 6, 384, 256)
        );
        assert_eq!(
            (
                cfg.batch_size,
                cfg.gradient_accumulation_steps,
                cfg.dropout,
                cfg.vocab_size
            ),
            (64, 1, 0.2, 65)
        );
        let (cfg, skipped) = get("config/finetune_shakespeare.py");
        assert_eq!(
            (cfg.n_layer, cfg.n_embd, cfg.vocab_size, cfg.bias),
            (48, 1600, 50257, true)
        );
        assert_eq!((cfg.batch_size, cfg.gradient_accumulation_steps), (1, 32));
        // `import time` and the wandb_run_name built with str(time.time()) are reported
        assert_eq!(
            skipped.iter().map(|s| s.line).collect::<Vec<_>>(),
            vec![1, 7]
        );
        for (name, (l, e)) in [
            ("config/eval_gpt2.py", (12, 768)),
            ("config/eval_gpt2_medium.py", (24, 1024)),
            ("config/eval_gpt2_large.py", (36, 1280)),
            ("config/eval_gpt2_xl.py", (48, 1600)),
        ] {
            let (cfg, _) = get(name);
            assert_eq!(
                (cfg.n_layer, cfg.n_embd, cfg.batch_size, cfg.eval_iters),
                (l, e, 8, 500),
                "{name}"
            );
        }
    }

    #[test]
    fn multi_line_values_and_strings_with_hashes() {
        let mut c = Configurator::new();
        c.apply_file(
            "m.py",
            "gradient_accumulation_steps = (5 *\n  8)\nout_dir = 'out#1'\n",
        );
        assert!(c.skipped.is_empty(), "{:?}", c.skipped);
        assert_eq!(c.finish().unwrap().0.gradient_accumulation_steps, 40);
    }
}
