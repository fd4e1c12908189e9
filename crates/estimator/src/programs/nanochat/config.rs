//! `NanochatConfig`: the flags of nanochat's `scripts/base_train.py` (snapshot 92d63d4) that decide
//! its GPU memory, with the script's own names, defaults and asserts, plus what the script takes
//! from elsewhere (vocabulary from the tokenizer, FA3 or SDPA attention, the allocator, the
//! number of processes `torchrun` starts).
//!
//! Flags are argparse's: `--device-batch-size=8` or `--device-batch-size 8`, and a unique prefix
//! (`--device-b=8`) as argparse's `allow_abbrev` accepts it. URL keys and JSON fields are the
//! argparse destinations (`device_batch_size`); both spellings are read everywhere.

use crate::config::Allocator;
use crate::error::{ConfigError, Problem};

/// How attention runs (`nanochat/flash_attention.py`): FA3 when the `kernels` package and a
/// Hopper GPU are present, else PyTorch SDPA with sliding windows as explicit masks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanochatAttention {
    Sdpa,
    Fa3,
}

impl NanochatAttention {
    pub const NAMES: &'static [&'static str] = &["sdpa", "fa3"];

    pub const fn as_str(self) -> &'static str {
        match self {
            NanochatAttention::Sdpa => "sdpa",
            NanochatAttention::Fa3 => "fa3",
        }
    }
}

/// The dtype nanochat computes in (`nanochat/common.py` `_detect_compute_dtype`): `NANOCHAT_DTYPE`
/// where set, else bf16 on CUDA cards from SM 8.0 (Ampere) and fp32 below (T4, V100, RTX 20xx).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanochatDtype {
    /// No `NANOCHAT_DTYPE`: the card decides ([`NanochatConfig::for_card`]).
    Auto,
    Bfloat16,
    Float32,
}

impl NanochatDtype {
    /// (`NANOCHAT_DTYPE=float16`, the GradScaler path, is not modelled.)
    pub const NAMES: &'static [&'static str] = &["auto", "bfloat16", "float32"];

    pub const fn as_str(self) -> &'static str {
        match self {
            NanochatDtype::Auto => "auto",
            NanochatDtype::Bfloat16 => "bfloat16",
            NanochatDtype::Float32 => "float32",
        }
    }
}

/// What argparse converts a flag's text with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int,
    Float,
    Str,
    /// `action="store_true"`: takes no value.
    Switch,
    /// A vramfit setting outside base_train.py's flags (a fixed set of words).
    Choice(&'static [&'static str]),
}

/// One flag: its argparse spelling (with hyphens), its type, its default as text, and whether
/// it is the script's own (else vramfit's: what the script takes from elsewhere).
struct Flag {
    name: &'static str,
    kind: Kind,
    default: &'static str,
    own: bool,
}

/// One of the script's own flags.
const fn flag(name: &'static str, kind: Kind, default: &'static str) -> Flag {
    Flag {
        name,
        kind,
        default,
        own: true,
    }
}

/// A vramfit setting beside the script's flags.
const fn setting(name: &'static str, kind: Kind, default: &'static str) -> Flag {
    Flag {
        name,
        kind,
        default,
        own: false,
    }
}

/// Which of nanochat's training scripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Script {
    /// `scripts/base_train.py`: pretraining from scratch.
    Base,
    /// `scripts/chat_sft.py`: supervised fine-tuning of a base checkpoint.
    Sft,
}

/// base_train.py's flags in its own order (argparse's `add_argument` calls), then vramfit's.
const FLAGS: &[Flag] = &[
    flag("run", Kind::Str, "dummy"),
    flag("device-type", Kind::Str, ""),
    flag("fp8", Kind::Switch, "False"),
    flag(
        "fp8-recipe",
        Kind::Choice(&["rowwise", "tensorwise"]),
        "tensorwise",
    ),
    flag("depth", Kind::Int, "20"),
    flag("aspect-ratio", Kind::Int, "64"),
    flag("head-dim", Kind::Int, "128"),
    flag("max-seq-len", Kind::Int, "2048"),
    flag("window-pattern", Kind::Str, "SSSL"),
    flag("num-iterations", Kind::Int, "-1"),
    flag("target-flops", Kind::Float, "-1.0"),
    flag("target-param-data-ratio", Kind::Float, "12"),
    flag("device-batch-size", Kind::Int, "32"),
    flag("total-batch-size", Kind::Int, "-1"),
    flag("embedding-lr", Kind::Float, "0.3"),
    flag("unembedding-lr", Kind::Float, "0.008"),
    flag("weight-decay", Kind::Float, "0.28"),
    flag("matrix-lr", Kind::Float, "0.02"),
    flag("scalar-lr", Kind::Float, "0.5"),
    flag("warmup-steps", Kind::Int, "40"),
    flag("warmdown-ratio", Kind::Float, "0.65"),
    flag("final-lr-frac", Kind::Float, "0.05"),
    flag("resume-from-step", Kind::Int, "-1"),
    flag("eval-every", Kind::Int, "250"),
    flag("eval-tokens", Kind::Int, "41943040"),
    flag("core-metric-every", Kind::Int, "2000"),
    flag("core-metric-max-per-task", Kind::Int, "500"),
    flag("sample-every", Kind::Int, "2000"),
    flag("save-every", Kind::Int, "-1"),
    flag("model-tag", Kind::Str, ""),
    // vramfit's: what base_train.py takes from its environment
    setting("vocab-size", Kind::Int, "32768"),
    setting("attention", Kind::Choice(NanochatAttention::NAMES), "sdpa"),
    setting(
        "allocator",
        Kind::Choice(Allocator::NAMES),
        "expandable_segments",
    ),
    setting("nproc-per-node", Kind::Int, "1"),
    setting("dtype", Kind::Choice(NanochatDtype::NAMES), "auto"),
    setting("core-max-tokens", Kind::Int, "0"),
];

/// chat_sft.py's flags in its own order, then vramfit's: the base checkpoint's model (its depth,
/// width and windows come from the checkpoint's metadata) and the environment. Where chat_sft.py
/// inherits from the checkpoint (`None`), vramfit takes base_train.py's defaults: max_seq_len
/// 2048, device_batch_size 32, and the automatic total batch of the base run's depth (−1).
const SFT_FLAGS: &[Flag] = &[
    flag("run", Kind::Str, "dummy"),
    flag("device-type", Kind::Str, ""),
    flag("model-tag", Kind::Str, ""),
    flag("model-step", Kind::Int, "-1"),
    flag("load-optimizer", Kind::Int, "1"),
    flag("num-iterations", Kind::Int, "-1"),
    flag("max-seq-len", Kind::Int, "2048"),
    flag("device-batch-size", Kind::Int, "32"),
    flag("total-batch-size", Kind::Int, "-1"),
    flag("embedding-lr", Kind::Float, "0.3"),
    flag("unembedding-lr", Kind::Float, "0.004"),
    flag("matrix-lr", Kind::Float, "0.02"),
    flag("init-lr-frac", Kind::Float, "0.8"),
    flag("warmup-ratio", Kind::Float, "0.0"),
    flag("warmdown-ratio", Kind::Float, "0.5"),
    flag("final-lr-frac", Kind::Float, "0.0"),
    flag("eval-every", Kind::Int, "200"),
    flag("eval-tokens", Kind::Int, "20971520"),
    flag("chatcore-every", Kind::Int, "200"),
    flag("chatcore-max-cat", Kind::Int, "-1"),
    flag("chatcore-max-sample", Kind::Int, "24"),
    flag("mmlu-epochs", Kind::Int, "3"),
    flag("gsm8k-epochs", Kind::Int, "4"),
    // vramfit's: the base checkpoint's model and the environment
    setting("depth", Kind::Int, "20"),
    setting("aspect-ratio", Kind::Int, "64"),
    setting("head-dim", Kind::Int, "128"),
    setting("window-pattern", Kind::Str, "SSSL"),
    setting("vocab-size", Kind::Int, "32768"),
    setting("attention", Kind::Choice(NanochatAttention::NAMES), "sdpa"),
    setting(
        "allocator",
        Kind::Choice(Allocator::NAMES),
        "expandable_segments",
    ),
    setting("nproc-per-node", Kind::Int, "1"),
    setting("dtype", Kind::Choice(NanochatDtype::NAMES), "auto"),
];

fn flags(script: Script) -> &'static [Flag] {
    match script {
        Script::Base => FLAGS,
        Script::Sft => SFT_FLAGS,
    }
}

/// The settings of one base_train.py run that vramfit models (the others are read and checked,
/// then ignored: learning rates, logging, checkpoints).
#[derive(Clone, Debug, PartialEq)]
pub struct NanochatConfig {
    /// base_train.py or chat_sft.py: whose flags these are.
    pub script: Script,
    pub depth: u32,
    pub aspect_ratio: u32,
    pub head_dim: u32,
    pub max_seq_len: u32,
    /// `S`/`L` tiled over the layers (case-insensitive, as `.upper()` in gpt.py).
    pub window_pattern: String,
    pub device_batch_size: u32,
    /// Tokens per optimizer step over all processes; −1: base_train.py's automatic rule.
    pub total_batch_size: i64,
    pub num_iterations: i64,
    pub target_flops: f64,
    pub target_param_data_ratio: f64,
    pub eval_every: i64,
    pub eval_tokens: i64,
    pub core_metric_every: i64,
    pub core_metric_max_per_task: i64,
    pub sample_every: i64,
    /// `--fp8`: nanochat/fp8.py's Float8Linear for every Linear base_train.py's filter passes.
    pub fp8: bool,
    /// `--fp8-recipe=rowwise`, which the pinned fp8.py refuses (only `tensorwise` is written).
    pub fp8_rowwise: bool,
    /// The tokenizer's vocabulary (nanochat's is 32768); the model pads it to a multiple of 64.
    pub vocab_size: u32,
    pub attention: NanochatAttention,
    /// `NANOCHAT_DTYPE`, else the card's (see [`NanochatDtype`]).
    pub dtype: NanochatDtype,
    /// base_train.py sets `PYTORCH_ALLOC_CONF=expandable_segments:True` before importing torch.
    pub allocator: Allocator,
    /// Processes `torchrun --nproc_per_node` starts (× nodes): the script's `ddp_world_size`.
    pub world_size: u32,
    /// Tokens (choices × length) of the largest example the CORE evaluation forwards at once; 0
    /// when unknown. It comes from the eval bundle's data, which vramfit does not have.
    pub core_max_tokens: u64,
    /// chat_sft.py `--load-optimizer`: the base run's optimizer state is loaded before step 0.
    pub load_optimizer: bool,
    /// chat_sft.py `--chatcore-every`.
    pub chatcore_every: i64,
}

impl Default for NanochatConfig {
    fn default() -> Self {
        NanochatConfig::for_script(Script::Base)
    }
}

impl NanochatConfig {
    /// The config as it runs on a card of compute capability `sm`: `dtype` resolved as
    /// `nanochat/common.py` resolves it.
    pub fn for_card(&self, sm: (u8, u8)) -> NanochatConfig {
        let mut cfg = self.clone();
        if cfg.dtype == NanochatDtype::Auto {
            cfg.dtype = if sm.0 >= 8 {
                NanochatDtype::Bfloat16
            } else {
                NanochatDtype::Float32
            };
        }
        cfg
    }

    /// Bytes per element of the compute dtype: activations, logits, embeddings (bf16 where not
    /// resolved yet).
    pub fn compute_bytes(&self) -> u64 {
        match self.dtype {
            NanochatDtype::Float32 => 4,
            NanochatDtype::Bfloat16 | NanochatDtype::Auto => 2,
        }
    }

    /// A script's defaults.
    pub fn for_script(script: Script) -> Self {
        let mut cfg = NanochatConfig {
            script,
            depth: 0,
            aspect_ratio: 0,
            head_dim: 0,
            max_seq_len: 0,
            window_pattern: String::new(),
            device_batch_size: 0,
            total_batch_size: 0,
            num_iterations: 0,
            target_flops: 0.0,
            target_param_data_ratio: 0.0,
            eval_every: 0,
            eval_tokens: 0,
            core_metric_every: 0,
            core_metric_max_per_task: 0,
            sample_every: 0,
            fp8: false,
            fp8_rowwise: false,
            vocab_size: 0,
            attention: NanochatAttention::Sdpa,
            dtype: NanochatDtype::Auto,
            allocator: Allocator::ExpandableSegments,
            world_size: 1,
            core_max_tokens: 0,
            load_optimizer: false,
            chatcore_every: -1,
        };
        // base_train.py's model flags first: chat_sft.py's checkpoint model has their defaults
        if script == Script::Sft {
            cfg.target_param_data_ratio = 12.0;
            cfg.core_metric_every = -1;
            cfg.sample_every = -1;
        }
        for f in flags(script) {
            // the defaults are valid by construction (a test sets every one)
            let _ = cfg.set(f.name, f.default);
        }
        cfg
    }
}

/// Hyphenated argparse spelling of a key given either way (`device_batch_size` → `device-batch-size`).
pub fn flag_name(key: &str) -> String {
    key.trim_start_matches('-').replace('_', "-")
}

/// The flag `key` names: exact, else a unique prefix (argparse's `allow_abbrev`).
fn find_flag(script: Script, key: &str) -> Result<&'static Flag, ConfigError> {
    let name = flag_name(key);
    let table = flags(script);
    if let Some(f) = table.iter().find(|f| f.name == name) {
        return Ok(f);
    }
    let matches: Vec<&Flag> = table
        .iter()
        .filter(|f| !name.is_empty() && f.name.starts_with(&name))
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(ConfigError::new(&name, "", Problem::UnknownKey)),
        many => Err(ConfigError::new(
            &name,
            "",
            Problem::Assertion {
                message: format!(
                    "ambiguous option: --{name} could match {}",
                    many.iter()
                        .map(|f| format!("--{}", f.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        )),
    }
}

/// Python's `int(text)`: optional sign, digits with single underscores between them, spaces around.
fn py_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let v: i64 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -v } else { v })
}

pub(super) fn int_in(key: &str, text: &str, min: i64, max: i64) -> Result<i64, ConfigError> {
    let v = py_int(text).ok_or_else(|| {
        ConfigError::new(
            key,
            text,
            Problem::WrongType {
                expected: "an integer",
            },
        )
    })?;
    if v < min || v > max {
        return Err(ConfigError::new(
            key,
            text,
            Problem::OutOfRange {
                min: min.to_string(),
                max: max.to_string(),
            },
        ));
    }
    Ok(v)
}

/// An int flag whose script values other than −1 or positive make no sense to vramfit (−1 and
/// any value ≤ 0 mean "off" in base_train.py's `> 0` tests).
fn switch_int(key: &str, text: &str) -> Result<i64, ConfigError> {
    int_in(key, text, -(1 << 40), 1 << 40)
}

pub(super) fn u32_in(key: &str, text: &str, min: u32, max: u32) -> Result<u32, ConfigError> {
    // the range check above makes the conversion exact
    int_in(key, text, i64::from(min), i64::from(max)).map(|v| v as u32)
}

fn float(key: &str, text: &str) -> Result<f64, ConfigError> {
    crate::decimal::parse(text.trim())
        .filter(|v| v.is_finite())
        .ok_or_else(|| {
            ConfigError::new(
                key,
                text,
                Problem::WrongType {
                    expected: "a number",
                },
            )
        })
}

impl NanochatConfig {
    /// Sets one flag from its text, as argparse converts it (`key` either spelling).
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let f = find_flag(self.script, key)?;
        let k = f.name;
        match f.kind {
            Kind::Switch => {
                // `--fp8` alone; vramfit also reads `fp8=True|False` from URLs and pastes
                let on = match text {
                    "" | "True" | "true" | "1" => true,
                    "False" | "false" | "0" => false,
                    _ => {
                        return Err(ConfigError::new(
                            k,
                            text,
                            Problem::WrongType {
                                expected: "no value (a switch) or True/False",
                            },
                        ))
                    }
                };
                if k == "fp8" {
                    self.fp8 = on;
                }
            }
            Kind::Choice(choices) => {
                let allocator_alias = k == "allocator" && text == "expandable_segments:True";
                if !choices.contains(&text) && !allocator_alias {
                    return Err(ConfigError::new(k, text, Problem::NotOneOf { choices }));
                }
                match k {
                    "attention" => {
                        self.attention = if text == "fa3" {
                            NanochatAttention::Fa3
                        } else {
                            NanochatAttention::Sdpa
                        }
                    }
                    "allocator" => {
                        self.allocator = Allocator::parse(text).unwrap_or(Allocator::Default)
                    }
                    "fp8-recipe" => self.fp8_rowwise = text == "rowwise",
                    "dtype" => {
                        self.dtype = match text {
                            "bfloat16" => NanochatDtype::Bfloat16,
                            "float32" => NanochatDtype::Float32,
                            _ => NanochatDtype::Auto,
                        }
                    }
                    _ => {}
                }
            }
            Kind::Float => {
                let v = float(k, text)?;
                match k {
                    "target-flops" => self.target_flops = v,
                    "target-param-data-ratio" => self.target_param_data_ratio = v,
                    _ => {}
                }
            }
            Kind::Str => {
                if k == "window-pattern" {
                    let upper = text.to_ascii_uppercase();
                    // gpt.py: assert all(c in "SL" for c in pattern); an empty pattern fails at `pattern[i % 0]`
                    if upper.is_empty() || !upper.chars().all(|c| c == 'S' || c == 'L') {
                        return Err(ConfigError::new(
                            k,
                            text,
                            Problem::Assertion {
                                message: format!(
                                    "Invalid window_pattern: {upper}. Use only S and L."
                                ),
                            },
                        ));
                    }
                    if upper.len() > 64 {
                        return Err(ConfigError::new(
                            k,
                            text,
                            Problem::OutOfRange {
                                min: "1 character".into(),
                                max: "64 characters".into(),
                            },
                        ));
                    }
                    self.window_pattern = upper;
                }
            }
            Kind::Int => match k {
                "depth" => self.depth = u32_in(k, text, 1, 512)?,
                "aspect-ratio" => self.aspect_ratio = u32_in(k, text, 1, 4096)?,
                "head-dim" => self.head_dim = u32_in(k, text, 1, 4096)?,
                // gpt.py asserts T > 1 in the training forward (the smear needs a previous token)
                "max-seq-len" => self.max_seq_len = u32_in(k, text, 2, 1 << 20)?,
                "device-batch-size" => self.device_batch_size = u32_in(k, text, 1, 1 << 16)?,
                "total-batch-size" => {
                    let v = int_in(k, text, -1, 1 << 40)?;
                    if v == 0 {
                        return Err(ConfigError::new(
                            k,
                            text,
                            Problem::OutOfRange {
                                min: "1 (or -1: automatic)".into(),
                                max: (1u64 << 40).to_string(),
                            },
                        ));
                    }
                    self.total_batch_size = v;
                }
                "num-iterations" => self.num_iterations = switch_int(k, text)?,
                "eval-every" => self.eval_every = switch_int(k, text)?,
                "eval-tokens" => self.eval_tokens = switch_int(k, text)?,
                "core-metric-every" => self.core_metric_every = switch_int(k, text)?,
                "core-metric-max-per-task" => self.core_metric_max_per_task = switch_int(k, text)?,
                "sample-every" => self.sample_every = switch_int(k, text)?,
                "vocab-size" => self.vocab_size = u32_in(k, text, 2, 1 << 22)?,
                "nproc-per-node" => self.world_size = u32_in(k, text, 1, 4096)?,
                "core-max-tokens" => self.core_max_tokens = int_in(k, text, 0, 1 << 24)? as u64,
                "load-optimizer" => self.load_optimizer = int_in(k, text, 0, 1)? == 1,
                "chatcore-every" => self.chatcore_every = switch_int(k, text)?,
                // learning rates, logging, checkpoints: type-checked like argparse, no memory effect
                _ => {
                    switch_int(k, text)?;
                }
            },
        }
        Ok(())
    }

    /// Applies base_train.py's command-line flags in order (`--k=v`, `--k v`, `--switch`).
    /// Anything else is an error naming it, as argparse's "unrecognized arguments".
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<NanochatConfig, ConfigError> {
        NanochatConfig::from_script_args(Script::Base, args)
    }

    /// chat_sft.py's command-line flags in order (and vramfit's, for the base checkpoint's model).
    pub fn from_sft_args<S: AsRef<str>>(args: &[S]) -> Result<NanochatConfig, ConfigError> {
        NanochatConfig::from_script_args(Script::Sft, args)
    }

    /// `script`'s defaults with its command-line flags applied in order.
    pub fn from_script_args<S: AsRef<str>>(
        script: Script,
        args: &[S],
    ) -> Result<NanochatConfig, ConfigError> {
        let mut cfg = NanochatConfig::for_script(script);
        cfg.apply_args(args)?;
        Ok(cfg)
    }

    /// Whether `flag` (hyphenated) is the script's own, not one of vramfit's settings.
    pub fn is_script_flag(&self, flag: &str) -> bool {
        flags(self.script).iter().any(|f| f.name == flag && f.own)
    }

    /// The memory-relevant settings of this script, hyphenated, in its order.
    pub fn keys(&self) -> &'static [&'static str] {
        match self.script {
            Script::Base => Self::KEYS,
            Script::Sft => Self::SFT_KEYS,
        }
    }

    /// [`NanochatConfig::from_args`] onto this config.
    pub fn apply_args<S: AsRef<str>>(&mut self, args: &[S]) -> Result<(), ConfigError> {
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_ref();
            let Some(body) = a.strip_prefix("--") else {
                return Err(ConfigError::new(a, "", Problem::UnknownKey));
            };
            let (key, value) = match body.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (body, None),
            };
            let f = find_flag(self.script, key)?;
            let value = match (value, f.kind) {
                (Some(v), _) => v.to_string(),
                (None, Kind::Switch) => String::new(),
                (None, _) => {
                    i += 1;
                    match args.get(i) {
                        Some(v) => v.as_ref().to_string(),
                        None => {
                            return Err(ConfigError::new(
                                f.name,
                                "",
                                Problem::Assertion {
                                    message: format!(
                                        "argument --{}: expected one argument",
                                        f.name
                                    ),
                                },
                            ))
                        }
                    }
                }
            };
            self.set(f.name, &value)?;
            i += 1;
        }
        self.validate()
    }

    /// The script's own asserts that involve more than one flag.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.fp8 && self.fp8_rowwise {
            // nanochat/fp8.py Float8LinearConfig.from_recipe_name, word for word
            return Err(ConfigError::new(
                "fp8-recipe",
                "rowwise",
                Problem::Assertion {
                    message: "ValueError: Only 'tensorwise' recipe is supported, got 'rowwise'. \
                              Rowwise/axiswise recipes require the full torchao library."
                        .into(),
                },
            ));
        }
        if self.fp8 && self.dtype == NanochatDtype::Float32 {
            return Err(ConfigError::new(
                "fp8",
                "True",
                Problem::Assertion {
                    message: "--fp8 with NANOCHAT_DTYPE=float32 is not modelled: Float8Linear \
                              then returns fp32 outputs, never measured; nanochat pairs fp8 with \
                              bf16"
                        .into(),
                },
            ));
        }
        // base_train.py: assert args.num_iterations > 0 or args.target_param_data_ratio > 0 or args.target_flops > 0
        if self.num_iterations <= 0
            && self.target_param_data_ratio <= 0.0
            && self.target_flops <= 0.0
        {
            return Err(ConfigError::new(
                "num-iterations",
                self.num_iterations,
                Problem::Assertion {
                    message: "assert args.num_iterations > 0 or args.target_param_data_ratio > 0 \
                              or args.target_flops > 0"
                        .into(),
                },
            ));
        }
        if self.total_batch_size == -1 && self.target_param_data_ratio <= 0.0 {
            // the automatic rule raises a negative ratio to the power 0.383: a complex number
            return Err(ConfigError::new(
                "total-batch-size",
                -1,
                Problem::Assertion {
                    message:
                        "the automatic --total-batch-size needs --target-param-data-ratio > 0; \
                              give --total-batch-size"
                            .into(),
                },
            ));
        }
        // optim.py: AdamW's reduce_scatter splits the (V, C) embeddings and lm_head by rows
        let v = u64::from(self.vocab_size).div_ceil(64) * 64;
        if self.world_size > 1 && !v.is_multiple_of(u64::from(self.world_size)) {
            return Err(ConfigError::new(
                "nproc-per-node",
                self.world_size,
                Problem::Assertion {
                    message: format!(
                        "AdamW reduce_scatter requires shape[0] ({v}) divisible by world_size ({})",
                        self.world_size
                    ),
                },
            ));
        }
        let world = self.tokens_per_micro_step() * u64::from(self.world_size);
        let total = self.total_batch_tokens();
        if !total.is_multiple_of(world) {
            return Err(ConfigError::new(
                "total-batch-size",
                total,
                Problem::Assertion {
                    message: format!("total_batch_size ({total}) must be a multiple of {world}."),
                },
            ));
        }
        Ok(())
    }

    /// `model_dim`: depth × aspect_ratio nudged up to a multiple of head_dim (`build_model_meta`).
    pub fn model_dim(&self) -> u64 {
        let base = u64::from(self.depth) * u64::from(self.aspect_ratio);
        let hd = u64::from(self.head_dim);
        base.div_ceil(hd) * hd
    }

    /// Tokens one process's forward/backward sees: device_batch_size × max_seq_len.
    pub fn tokens_per_micro_step(&self) -> u64 {
        u64::from(self.device_batch_size) * u64::from(self.max_seq_len)
    }

    /// The total batch in tokens, with −1 resolved as base_train.py does: the d12 reference batch
    /// 2¹⁹ scaled by (this model's scaling params / d12's)^0.383, rounded to a power of two.
    pub fn total_batch_tokens(&self) -> u64 {
        if self.total_batch_size > 0 {
            return self.total_batch_size as u64;
        }
        let ours = super::shape::Shape::of(self).scaling_params() as f64;
        let d12 = super::shape::Shape::of(&NanochatConfig {
            depth: 12,
            ..self.clone()
        })
        .scaling_params() as f64;
        let predicted = (1u64 << 19) as f64 * (ours / d12).powf(0.383);
        // Python's round() on log2: halves to even
        let e = round_half_even(predicted.log2()).clamp(0.0, 40.0);
        1u64 << (e as u32)
    }

    /// Micro-steps per optimizer step on each process (`grad_accum_steps`).
    pub fn grad_accum_steps(&self) -> u64 {
        let world = self.tokens_per_micro_step() * u64::from(self.world_size);
        (self.total_batch_tokens() / world.max(1)).max(1)
    }

    /// Whether the CORE evaluation runs and its largest example is known.
    pub fn models_core(&self) -> bool {
        self.core_metric_every > 0 && self.core_max_tokens > 0
    }

    /// Batches one `evaluate_bpb` call runs: eval_tokens // (B·T·world).
    pub fn eval_steps(&self) -> u64 {
        let world = self.tokens_per_micro_step() * u64::from(self.world_size);
        u64::try_from(self.eval_tokens).unwrap_or(0) / world.max(1)
    }

    /// The value of every flag as text, in base_train.py's order (for snippets and JSON).
    pub fn get(&self, key: &str) -> Option<String> {
        let name = flag_name(key);
        Some(match name.as_str() {
            "depth" => self.depth.to_string(),
            "aspect-ratio" => self.aspect_ratio.to_string(),
            "head-dim" => self.head_dim.to_string(),
            "max-seq-len" => self.max_seq_len.to_string(),
            "window-pattern" => self.window_pattern.clone(),
            "device-batch-size" => self.device_batch_size.to_string(),
            "total-batch-size" => self.total_batch_size.to_string(),
            "num-iterations" => self.num_iterations.to_string(),
            "target-flops" => crate::decimal::shortest(self.target_flops),
            "target-param-data-ratio" => crate::decimal::shortest(self.target_param_data_ratio),
            "eval-every" => self.eval_every.to_string(),
            "eval-tokens" => self.eval_tokens.to_string(),
            "core-metric-every" => self.core_metric_every.to_string(),
            "core-metric-max-per-task" => self.core_metric_max_per_task.to_string(),
            "sample-every" => self.sample_every.to_string(),
            "fp8" => if self.fp8 { "True" } else { "False" }.to_string(),
            "vocab-size" => self.vocab_size.to_string(),
            "attention" => self.attention.as_str().to_string(),
            "dtype" => self.dtype.as_str().to_string(),
            "allocator" => self.allocator.as_str().to_string(),
            "nproc-per-node" => self.world_size.to_string(),
            "core-max-tokens" => self.core_max_tokens.to_string(),
            "load-optimizer" => u8::from(self.load_optimizer).to_string(),
            "chatcore-every" => self.chatcore_every.to_string(),
            _ => return None,
        })
    }

    /// The memory-relevant flags, hyphenated, in base_train.py's order (then vramfit's).
    pub const KEYS: &'static [&'static str] = &[
        "fp8",
        "depth",
        "aspect-ratio",
        "head-dim",
        "max-seq-len",
        "window-pattern",
        "device-batch-size",
        "total-batch-size",
        "num-iterations",
        "target-param-data-ratio",
        "eval-every",
        "eval-tokens",
        "core-metric-every",
        "core-metric-max-per-task",
        "sample-every",
        "vocab-size",
        "attention",
        "dtype",
        "allocator",
        "nproc-per-node",
        "core-max-tokens",
    ];

    /// chat_sft.py's memory-relevant settings (the checkpoint's model first), hyphenated.
    pub const SFT_KEYS: &'static [&'static str] = &[
        "depth",
        "aspect-ratio",
        "head-dim",
        "window-pattern",
        "max-seq-len",
        "device-batch-size",
        "total-batch-size",
        "load-optimizer",
        "num-iterations",
        "eval-every",
        "eval-tokens",
        "chatcore-every",
        "vocab-size",
        "attention",
        "dtype",
        "allocator",
        "nproc-per-node",
    ];

    /// The settings that differ from the script's defaults, as a command line would give them.
    pub fn changed_flags(&self) -> Vec<String> {
        let default = NanochatConfig::for_script(self.script);
        self.keys()
            .iter()
            .filter(|k| self.get(k) != default.get(k))
            .map(|k| {
                let value = self.get(k).unwrap_or_default();
                // a switch (store_true) is the flag alone: it differs from its default only on
                match find_flag(self.script, k).map(|f| &f.kind) {
                    Ok(Kind::Switch) => format!("--{k}"),
                    _ => format!("--{k}={value}"),
                }
            })
            .collect()
    }
}

fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_base_train_defaults() {
        let c = NanochatConfig::default();
        assert_eq!((c.depth, c.aspect_ratio, c.head_dim), (20, 64, 128));
        assert_eq!((c.max_seq_len, c.device_batch_size), (2048, 32));
        assert_eq!(c.window_pattern, "SSSL");
        assert_eq!(c.eval_tokens, 80 * 524288);
        assert_eq!(c.allocator, Allocator::ExpandableSegments);
        assert_eq!(c.model_dim(), 1280);
        c.validate().unwrap();
    }

    #[test]
    fn argparse_spellings() {
        let c = NanochatConfig::from_args(&[
            "--depth=4",
            "--device-batch-size",
            "8",
            "--max-seq",
            "512",
            "--window-pattern=ssl",
            "--total-batch-size=4096",
        ])
        .unwrap();
        assert_eq!((c.depth, c.device_batch_size, c.max_seq_len), (4, 8, 512));
        assert_eq!(c.window_pattern, "SSL");
        assert_eq!(c.grad_accum_steps(), 1);
        assert_eq!(c.model_dim(), 256);
    }

    #[test]
    fn the_scripts_asserts() {
        let e = NanochatConfig::from_args(&["--depth=4", "--total-batch-size=1000"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "total-batch-size=1000: total_batch_size (1000) must be a multiple of 65536."
        );
        let e = NanochatConfig::from_args(&["--window-pattern=SXL"]).unwrap_err();
        assert!(e
            .to_string()
            .contains("Invalid window_pattern: SXL. Use only S and L."));
        let e = NanochatConfig::from_args(&["--device=4"]).unwrap_err();
        assert!(e.to_string().contains("ambiguous option"), "{e}");
        assert!(NanochatConfig::from_args(&["--depth=x"]).is_err());
        assert!(NanochatConfig::from_args(&["--depth"]).is_err());
        assert!(NanochatConfig::from_args(&["--fp8"]).unwrap().fp8);
        let e = NanochatConfig::from_args(&["--fp8", "--fp8-recipe=rowwise"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("Only 'tensorwise' recipe is supported"),
            "{e}"
        );
        // the recipe alone is never read
        assert!(NanochatConfig::from_args(&["--fp8-recipe=rowwise"]).is_ok());
        assert!(NanochatConfig::from_args(&["--bogus=1"]).is_err());
        assert!(NanochatConfig::from_args(&["--max-seq-len=1"]).is_err());
    }

    #[test]
    fn automatic_total_batch_size() {
        // d12 is the reference: 2^19 tokens; deeper models get a larger power of two
        let d12 = NanochatConfig::from_args(&["--depth=12"]).unwrap();
        assert_eq!(d12.total_batch_tokens(), 1 << 19);
        let d20 = NanochatConfig::default();
        assert_eq!(d20.total_batch_tokens(), 1 << 20);
        assert_eq!(d20.grad_accum_steps(), 16);
    }
}
