//! `TrainConfig`: the settings of a nanoGPT run that decide its GPU memory, with train.py's own
//! names and defaults, plus what nanoGPT takes from elsewhere (vocabulary, attention path, allocator).

use crate::error::{ConfigError, Problem};
use crate::pyliteral::{format_py_float, PyValue};
pub use engine::settings::{Allocator, Dtype};

/// How model.py computes attention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Attention {
    /// `F.scaled_dot_product_attention` (flash or memory-efficient kernel): no T×T matrix.
    Flash,
    /// model.py's explicit `q @ k.T` path, taken when SDPA is missing (torch < 2.0).
    Manual,
}

impl Attention {
    pub const NAMES: &'static [&'static str] = &["flash", "manual"];

    pub const fn as_str(self) -> &'static str {
        match self {
            Attention::Flash => "flash",
            Attention::Manual => "manual",
        }
    }

    pub fn parse(s: &str) -> Option<Attention> {
        match s {
            "flash" => Some(Attention::Flash),
            "manual" => Some(Attention::Manual),
            _ => None,
        }
    }
}

/// The memory-relevant settings of one nanoGPT `train.py` run.
///
/// Field names and defaults are train.py's (`batch_size = 12`, `gradient_accumulation_steps = 40`,
/// GPT-2 124M, `compile = True`, …). Build one with `TrainConfig::default()` and [`TrainConfig::set`],
/// then [`TrainConfig::validate`]; [`crate::estimate`] validates again, so an invalid config can never
/// reach the arithmetic.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    pub n_layer: u32,
    pub n_head: u32,
    pub n_embd: u32,
    pub block_size: u32,
    pub batch_size: u32,
    pub gradient_accumulation_steps: u32,
    pub dropout: f64,
    pub bias: bool,
    pub dtype: Dtype,
    pub compile: bool,
    pub eval_iters: u32,
    pub eval_interval: u32,
    pub max_iters: u32,
    /// 50304 (GPT-2's 50257 padded to a multiple of 64) unless the dataset's meta.pkl says otherwise.
    pub vocab_size: u32,
    pub attention: Attention,
    pub allocator: Allocator,
    /// Processes training together under DDP (`torchrun --nproc_per_node × nodes`; train.py reads
    /// `WORLD_SIZE`). 1: a single GPU, no DDP unless `torchrun`.
    pub world_size: u32,
    /// Started by torchrun (`RANK` set): train.py wraps the model in DDP whatever the world size,
    /// so `torchrun --nproc_per_node=1 train.py` holds DDP's buckets on its one GPU (measured:
    /// data/measured/ddp1-race.jsonl). Always so for more than one process.
    pub torchrun: bool,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            n_layer: 12,
            n_head: 12,
            n_embd: 768,
            block_size: 1024,
            batch_size: 12,
            gradient_accumulation_steps: 40,
            dropout: 0.0,
            bias: false,
            dtype: Dtype::Bfloat16,
            compile: true,
            eval_iters: 200,
            eval_interval: 2000,
            max_iters: 600_000,
            vocab_size: 50304,
            attention: Attention::Flash,
            allocator: Allocator::Default,
            world_size: 1,
            torchrun: false,
        }
    }
}

/// What kind of value a key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Bool,
    Choice(&'static [&'static str]),
}

/// One memory-relevant key: its name, kind and allowed range.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub key: &'static str,
    pub kind: Kind,
    /// Inclusive bounds for `Int`; for `Float` the range is `[min, max)`.
    pub min: f64,
    pub max: f64,
}

/// Upper bounds are "sane", not physical: wide enough for any run someone could launch, narrow
/// enough that the byte arithmetic (u128) cannot overflow and a typo like 10^6 layers is caught.
pub const FIELDS: &[Field] = &[
    int("n_layer", 1, 1024),
    int("n_head", 1, 1024),
    int("n_embd", 1, 131_072),
    int("block_size", 1, 1_048_576),
    int("batch_size", 1, 1_048_576),
    int("gradient_accumulation_steps", 1, 1_000_000),
    Field {
        key: "dropout",
        kind: Kind::Float,
        min: 0.0,
        max: 1.0,
    },
    boolean("bias"),
    choice("dtype", Dtype::NAMES),
    boolean("compile"),
    int("eval_iters", 1, 1_000_000),
    int("eval_interval", 1, 1_000_000_000),
    int("max_iters", 0, 1_000_000_000),
    int("vocab_size", 1, 4_194_304),
    choice("attention", Attention::NAMES),
    choice("allocator", Allocator::NAMES),
    int("world_size", 1, MAX_WORLD_SIZE),
    boolean("torchrun"),
];

/// The largest DDP world vramfit models (nodes × GPUs per node).
pub const MAX_WORLD_SIZE: u32 = 64;

const fn int(key: &'static str, min: u32, max: u32) -> Field {
    Field {
        key,
        kind: Kind::Int,
        min: min as f64,
        max: max as f64,
    }
}

const fn boolean(key: &'static str) -> Field {
    Field {
        key,
        kind: Kind::Bool,
        min: 0.0,
        max: 1.0,
    }
}

const fn choice(key: &'static str, names: &'static [&'static str]) -> Field {
    Field {
        key,
        kind: Kind::Choice(names),
        min: 0.0,
        max: 0.0,
    }
}

/// train.py's other configuration keys: accepted (its configurator knows them) but they do not
/// change GPU memory. With the Python type train.py declares, which its configurator enforces.
pub const OTHER_TRAIN_KEYS: &[(&str, &str)] = &[
    ("out_dir", "str"),
    ("log_interval", "int"),
    ("eval_only", "bool"),
    ("always_save_checkpoint", "bool"),
    ("init_from", "str"),
    ("wandb_log", "bool"),
    ("wandb_project", "str"),
    ("wandb_run_name", "str"),
    ("dataset", "str"),
    ("learning_rate", "float"),
    ("weight_decay", "float"),
    ("beta1", "float"),
    ("beta2", "float"),
    ("grad_clip", "float"),
    ("decay_lr", "bool"),
    ("warmup_iters", "int"),
    ("lr_decay_iters", "int"),
    ("min_lr", "float"),
    ("backend", "str"),
    ("device", "str"),
];

/// Keys in the order they are written out (JSON, snippets).
pub const FIELDS_JSON_ORDER: &[&str] = &[
    "n_layer",
    "n_head",
    "n_embd",
    "block_size",
    "batch_size",
    "gradient_accumulation_steps",
    "dropout",
    "bias",
    "dtype",
    "compile",
    "eval_iters",
    "eval_interval",
    "max_iters",
    "vocab_size",
    "attention",
    "allocator",
    "world_size",
    "torchrun",
];

/// Looks up a memory-relevant key.
pub fn field(key: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.key == key)
}

impl TrainConfig {
    /// Sets one key from a Python value, as nanoGPT's configurator would, and checks its range.
    ///
    /// Ints are accepted for float keys (`dropout=0`), and `true`/`false` strings for booleans
    /// (URLs and shells write them so); everything else must have the key's type.
    pub fn set(&mut self, key: &str, value: &PyValue) -> Result<(), ConfigError> {
        let Some(f) = field(key) else {
            return Err(ConfigError::new(key, value, Problem::UnknownKey));
        };
        match f.kind {
            Kind::Int => {
                let n = match value {
                    PyValue::Int(n) => *n,
                    // 8.0 is what a slider or a float-typed form may send for 8
                    PyValue::Float(x) if x.fract() == 0.0 && x.abs() < 1e15 => *x as i64,
                    _ => {
                        return Err(ConfigError::new(
                            key,
                            value,
                            Problem::WrongType {
                                expected: "an integer",
                            },
                        ))
                    }
                };
                if (n as f64) < f.min || (n as f64) > f.max {
                    return Err(ConfigError::new(key, n, range_of(f)));
                }
                self.set_int(key, n as u32);
            }
            Kind::Float => {
                let x = match value {
                    PyValue::Float(x) => *x,
                    PyValue::Int(n) => *n as f64,
                    _ => {
                        return Err(ConfigError::new(
                            key,
                            value,
                            Problem::WrongType {
                                expected: "a number",
                            },
                        ))
                    }
                };
                if !x.is_finite() || x < f.min || x >= f.max {
                    return Err(ConfigError::new(
                        key,
                        format_py_float(x),
                        Problem::OutOfRange {
                            min: format_py_float(f.min),
                            max: format!("below {}", format_py_float(f.max)),
                        },
                    ));
                }
                self.dropout = x;
            }
            Kind::Bool => {
                let b = match value {
                    PyValue::Bool(b) => *b,
                    PyValue::Str(s) if s.eq_ignore_ascii_case("true") => true,
                    PyValue::Str(s) if s.eq_ignore_ascii_case("false") => false,
                    _ => {
                        return Err(ConfigError::new(
                            key,
                            value,
                            Problem::WrongType {
                                expected: "True or False",
                            },
                        ))
                    }
                };
                match key {
                    "bias" => self.bias = b,
                    "torchrun" => self.torchrun = b,
                    _ => self.compile = b,
                }
            }
            Kind::Choice(names) => {
                let PyValue::Str(s) = value else {
                    return Err(ConfigError::new(
                        key,
                        value,
                        Problem::NotOneOf { choices: names },
                    ));
                };
                let bad = || ConfigError::new(key, value, Problem::NotOneOf { choices: names });
                match key {
                    "dtype" => self.dtype = Dtype::parse(s).ok_or_else(bad)?,
                    "attention" => self.attention = Attention::parse(s).ok_or_else(bad)?,
                    _ => self.allocator = Allocator::parse(s).ok_or_else(bad)?,
                }
            }
        }
        Ok(())
    }

    fn set_int(&mut self, key: &str, n: u32) {
        match key {
            "n_layer" => self.n_layer = n,
            "n_head" => self.n_head = n,
            "n_embd" => self.n_embd = n,
            "block_size" => self.block_size = n,
            "batch_size" => self.batch_size = n,
            "gradient_accumulation_steps" => self.gradient_accumulation_steps = n,
            "eval_iters" => self.eval_iters = n,
            "eval_interval" => self.eval_interval = n,
            "max_iters" => self.max_iters = n,
            "world_size" => self.world_size = n,
            _ => self.vocab_size = n,
        }
    }

    /// The value of a key as Python would write it in a config file (`12`, `0.1`, `True`, `'bfloat16'`).
    pub fn get(&self, key: &str) -> Option<PyValue> {
        Some(match key {
            "n_layer" => PyValue::Int(self.n_layer.into()),
            "n_head" => PyValue::Int(self.n_head.into()),
            "n_embd" => PyValue::Int(self.n_embd.into()),
            "block_size" => PyValue::Int(self.block_size.into()),
            "batch_size" => PyValue::Int(self.batch_size.into()),
            "gradient_accumulation_steps" => PyValue::Int(self.gradient_accumulation_steps.into()),
            "dropout" => PyValue::Float(self.dropout),
            "bias" => PyValue::Bool(self.bias),
            "dtype" => PyValue::Str(self.dtype.as_str().into()),
            "compile" => PyValue::Bool(self.compile),
            "eval_iters" => PyValue::Int(self.eval_iters.into()),
            "eval_interval" => PyValue::Int(self.eval_interval.into()),
            "max_iters" => PyValue::Int(self.max_iters.into()),
            "vocab_size" => PyValue::Int(self.vocab_size.into()),
            "attention" => PyValue::Str(self.attention.as_str().into()),
            "allocator" => PyValue::Str(self.allocator.as_str().into()),
            "world_size" => PyValue::Int(self.world_size.into()),
            "torchrun" => PyValue::Bool(self.torchrun),
            _ => return None,
        })
    }

    /// Checks every field and the relations between them (`n_embd % n_head == 0`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        for f in FIELDS {
            if let Some(v) = self.get(f.key) {
                // re-setting a copy runs exactly the checks that input goes through
                self.clone().set(f.key, &v)?;
            }
        }
        // train.py: `assert gradient_accumulation_steps % ddp_world_size == 0`
        if !self
            .gradient_accumulation_steps
            .is_multiple_of(self.world_size)
        {
            return Err(ConfigError::new(
                "gradient_accumulation_steps",
                self.gradient_accumulation_steps,
                Problem::NotDivisibleBy {
                    divisor_key: "world_size",
                    divisor: self.world_size.into(),
                },
            ));
        }
        if !self.n_embd.is_multiple_of(self.n_head) {
            return Err(ConfigError::new(
                "n_embd",
                self.n_embd,
                Problem::NotDivisibleBy {
                    divisor_key: "n_head",
                    divisor: self.n_head.into(),
                },
            ));
        }
        Ok(())
    }

    /// Micro-steps each process runs per iteration: train.py divides
    /// `gradient_accumulation_steps` by the world size.
    pub fn accum_per_rank(&self) -> u32 {
        self.gradient_accumulation_steps / self.world_size.max(1)
    }

    /// Whether the model is wrapped in DDP: more than one process, or one started by torchrun.
    pub fn is_ddp(&self) -> bool {
        self.world_size > 1 || self.torchrun
    }

    /// Whether more than one process trains (an all-reduce between GPUs, ranks that only train).
    pub fn is_multi_gpu(&self) -> bool {
        self.world_size > 1
    }

    /// Sequences per optimizer step (`batch_size × gradient_accumulation_steps`).
    pub fn effective_batch(&self) -> u64 {
        u64::from(self.batch_size) * u64::from(self.gradient_accumulation_steps)
    }

    /// Tokens per optimizer step, as train.py prints it.
    pub fn tokens_per_iter(&self) -> u64 {
        self.effective_batch() * u64::from(self.block_size)
    }
}

fn range_of(f: &Field) -> Problem {
    Problem::OutOfRange {
        min: format!("{}", f.min as i64),
        max: format!("{}", f.max as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_train_py_defaults() {
        let c = TrainConfig::default();
        assert_eq!(
            (c.n_layer, c.n_head, c.n_embd, c.block_size, c.batch_size),
            (12, 12, 768, 1024, 12)
        );
        assert_eq!(c.gradient_accumulation_steps, 40);
        assert_eq!((c.dropout, c.bias, c.compile), (0.0, false, true));
        assert_eq!(c.dtype, Dtype::Bfloat16);
        assert_eq!(
            (c.eval_iters, c.eval_interval, c.max_iters),
            (200, 2000, 600_000)
        );
        assert_eq!(c.vocab_size, 50304);
        assert!(c.validate().is_ok());
        assert_eq!(c.tokens_per_iter(), 491_520);
    }

    #[test]
    fn set_checks_type_and_range() {
        let mut c = TrainConfig::default();
        c.set("batch_size", &PyValue::Int(8)).unwrap();
        assert_eq!(c.batch_size, 8);
        c.set("dropout", &PyValue::Int(0)).unwrap();
        c.set("compile", &PyValue::Str("false".into())).unwrap();
        assert!(!c.compile);
        let e = c.set("batch_size", &PyValue::Int(0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "batch_size=0 is out of range: allowed 1 to 1048576"
        );
        let e = c.set("dropout", &PyValue::Float(1.0)).unwrap_err();
        assert!(
            e.to_string().starts_with("dropout=1.0 is out of range"),
            "{e}"
        );
        let e = c.set("dtype", &PyValue::Str("fp8".into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "dtype='fp8' is not allowed: use one of bfloat16, float16, float32"
        );
        let e = c.set("batch_size", &PyValue::Str("8".into())).unwrap_err();
        assert_eq!(
            e.to_string(),
            "batch_size='8' has the wrong type: expected an integer"
        );
        let e = c.set("learning_rat", &PyValue::Float(1.0)).unwrap_err();
        assert_eq!(e.problem, Problem::UnknownKey);
        assert!(c.set("n_layer", &PyValue::Int(1 << 40)).is_err());
        assert!(c.set("dropout", &PyValue::Float(f64::NAN)).is_err());
    }

    #[test]
    fn validate_checks_relations() {
        let c = TrainConfig {
            n_embd: 770,
            ..TrainConfig::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "n_embd=770 must be divisible by n_head=12"
        );
        let c = TrainConfig {
            batch_size: 0,
            ..TrainConfig::default()
        };
        assert_eq!(c.validate().unwrap_err().key, "batch_size");
    }

    #[test]
    fn every_field_round_trips() {
        let c = TrainConfig::default();
        for f in FIELDS {
            let v = c.get(f.key).unwrap();
            let mut d = TrainConfig::default();
            d.set(f.key, &v).unwrap();
            assert_eq!(d, c, "{}", f.key);
        }
    }
}
