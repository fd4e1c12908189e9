//! `BngConfig`: the constants of build-nanogpt's `train_gpt2.py` (6104ab1) that decide its GPU
//! memory, named as the script names them (`B`, `T`, `total_batch_size`, `use_compile`, and
//! GPTConfig's `n_layer`, `n_head`, `n_embd`, `vocab_size`, `block_size`), with its defaults and
//! asserts, plus what it takes from elsewhere (the allocator, the processes `torchrun` starts).
//!
//! The script has no command line: people edit its constants. vramfit reads them as `--B=16`
//! (CLI), `?B=16` (URL) or the script's own lines pasted (`B = 16 # micro batch size`).

use crate::config::{Allocator, TrainConfig};
use crate::error::{ConfigError, Problem};
use crate::programs::seam::py_bool_in;

/// The settings of one train_gpt2.py run.
#[derive(Clone, Debug, PartialEq)]
pub struct BngConfig {
    /// `B`: micro batch size.
    pub b: u32,
    /// `T`: sequence length.
    pub t: u32,
    /// Tokens per optimizer step over all processes.
    pub total_batch_size: u64,
    pub use_compile: bool,
    pub n_layer: u32,
    pub n_head: u32,
    pub n_embd: u32,
    /// `GPT(GPTConfig(vocab_size=50304))`: GPT-2's 50257 padded for speed.
    pub vocab_size: u32,
    /// GPTConfig's block_size: the rows of `wpe`, and the longest `T` the model takes.
    pub block_size: u32,
    /// train_gpt2.py sets no `PYTORCH_CUDA_ALLOC_CONF`: the default caching allocator.
    pub allocator: Allocator,
    /// `torchrun --nproc_per_node`: `ddp_world_size`.
    pub world_size: u32,
    /// Started by torchrun (`RANK` set): the script wraps the model in DDP even for one process.
    pub torchrun: bool,
}

impl Default for BngConfig {
    fn default() -> Self {
        BngConfig {
            b: 64,
            t: 1024,
            total_batch_size: 524_288,
            use_compile: false,
            n_layer: 12,
            n_head: 12,
            n_embd: 768,
            vocab_size: 50_304,
            block_size: 1024,
            allocator: Allocator::Default,
            world_size: 1,
            torchrun: false,
        }
    }
}

/// The settings, named as the script names them, in its order (then vramfit's).
pub const KEYS: &[&str] = &[
    "B",
    "T",
    "total_batch_size",
    "use_compile",
    "n_layer",
    "n_head",
    "n_embd",
    "vocab_size",
    "block_size",
    "allocator",
    "nproc_per_node",
    "torchrun",
];

/// The settings vramfit adds (the script's constants are the rest).
pub const VRAMFIT_KEYS: &[&str] = &["allocator", "nproc_per_node", "torchrun"];

/// A Python integer as the script writes it: `524288`, `2**19`, `16_384`.
fn py_int(text: &str) -> Option<u64> {
    let t = text.trim();
    if let Some((base, exp)) = t.split_once("**") {
        let (base, exp) = (py_int(base)?, py_int(exp)?);
        return base.checked_pow(u32::try_from(exp).ok()?);
    }
    if t.is_empty() || t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return None;
    }
    t.chars()
        .all(|c| c.is_ascii_digit() || c == '_')
        .then(|| t.replace('_', "").parse().ok())
        .flatten()
}

fn int_in(key: &str, text: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let v = py_int(text).ok_or_else(|| {
        ConfigError::new(
            key,
            text.trim(),
            Problem::WrongType {
                expected: "an integer",
            },
        )
    })?;
    if v < min || v > max {
        return Err(ConfigError::new(
            key,
            text.trim(),
            Problem::OutOfRange {
                min: min.to_string(),
                max: max.to_string(),
            },
        ));
    }
    Ok(v)
}

/// The largest `B` and `T` vramfit takes (also where the search for the largest `B` that fits
/// ends: it covers every `B` that can be entered).
pub const MAX_B_OR_T: u32 = 1 << 20;

impl BngConfig {
    /// Sets one constant from its text (a Python literal; `true`/`false` too, as URLs carry them).
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let key = key.trim_start_matches('-');
        let small = |k, t| int_in(k, t, 1, u64::from(MAX_B_OR_T)).map(|v| v as u32);
        match key {
            "B" => self.b = small(key, text)?,
            "T" => self.t = small(key, text)?,
            "total_batch_size" => self.total_batch_size = int_in(key, text, 1, 1 << 40)?,
            "use_compile" => self.use_compile = py_bool_in(key, text)?,
            "torchrun" => self.torchrun = py_bool_in(key, text)?,
            "n_layer" => self.n_layer = int_in(key, text, 1, 512)? as u32,
            "n_head" => self.n_head = int_in(key, text, 1, 1024)? as u32,
            "n_embd" => self.n_embd = int_in(key, text, 1, 65_536)? as u32,
            "vocab_size" => self.vocab_size = int_in(key, text, 1, 1 << 22)? as u32,
            "block_size" => self.block_size = small(key, text)?,
            "allocator" => {
                self.allocator = Allocator::parse(text.trim()).ok_or_else(|| {
                    ConfigError::new(
                        key,
                        text.trim(),
                        Problem::NotOneOf {
                            choices: Allocator::NAMES,
                        },
                    )
                })?
            }
            "nproc_per_node" | "nproc-per-node" | "world_size" => {
                self.world_size = int_in(key, text, 1, 4096)? as u32
            }
            _ => return Err(ConfigError::new(key, "", Problem::UnknownKey)),
        }
        Ok(())
    }

    /// `--KEY=VALUE` arguments in order; anything else is named.
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<BngConfig, ConfigError> {
        let mut cfg = BngConfig::default();
        crate::programs::seam::key_value_args(
            args,
            "train_gpt2.py's constants are written --KEY=VALUE (--B=16)",
            |k, v| cfg.set(k, v),
        )?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The script's own lines (`B = 16 # micro batch size`, `use_compile = True`,
    /// `model = GPT(GPTConfig(vocab_size=50304, n_layer=24))`): each constant it knows is read,
    /// the rest left. Returns how many lines were read.
    pub fn apply_script_lines(&mut self, text: &str) -> Result<usize, ConfigError> {
        let mut read = 0;
        for line in text.lines() {
            let code = line.split('#').next().unwrap_or("").trim();
            if let Some(inner) = code
                .split_once("GPTConfig(")
                .and_then(|(_, rest)| rest.split_once(')'))
                .map(|(args, _)| args)
            {
                for arg in inner.split(',').filter(|a| !a.trim().is_empty()) {
                    if let Some((k, v)) = arg.split_once('=') {
                        self.set(k.trim(), v.trim())?;
                        read += 1;
                    }
                }
                continue;
            }
            let Some((k, v)) = code.split_once('=') else {
                continue;
            };
            let k = k.trim();
            if ["B", "T", "total_batch_size", "use_compile"].contains(&k) {
                self.set(k, v.trim())?;
                read += 1;
            }
        }
        Ok(read)
    }

    /// The script's asserts.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // CausalSelfAttention: assert config.n_embd % config.n_head == 0
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
        // GPT.forward: assert T <= self.config.block_size
        if self.t > self.block_size {
            return Err(ConfigError::new(
                "T",
                self.t,
                Problem::Assertion {
                    message: format!(
                        "Cannot forward sequence of length {}, block size is only {}",
                        self.t, self.block_size
                    ),
                },
            ));
        }
        let world = self.tokens_per_micro_step() * u64::from(self.world_size);
        if !self.total_batch_size.is_multiple_of(world) {
            return Err(ConfigError::new(
                "total_batch_size",
                self.total_batch_size,
                Problem::Assertion {
                    message: "make sure total_batch_size is divisible by B * T * ddp_world_size"
                        .into(),
                },
            ));
        }
        Ok(())
    }

    pub fn tokens_per_micro_step(&self) -> u64 {
        u64::from(self.b) * u64::from(self.t)
    }

    /// `grad_accum_steps = total_batch_size // (B * T * ddp_world_size)`.
    pub fn grad_accum_steps(&self) -> u64 {
        self.total_batch_size / (self.tokens_per_micro_step() * u64::from(self.world_size)).max(1)
    }

    /// A constant's value as the script would write it.
    pub fn get(&self, key: &str) -> Option<String> {
        Some(match key {
            "B" => self.b.to_string(),
            "T" => self.t.to_string(),
            "total_batch_size" => self.total_batch_size.to_string(),
            "use_compile" => if self.use_compile { "True" } else { "False" }.to_string(),
            "n_layer" => self.n_layer.to_string(),
            "n_head" => self.n_head.to_string(),
            "n_embd" => self.n_embd.to_string(),
            "vocab_size" => self.vocab_size.to_string(),
            "block_size" => self.block_size.to_string(),
            "allocator" => self.allocator.as_str().to_string(),
            "nproc_per_node" => self.world_size.to_string(),
            "torchrun" => if self.torchrun { "True" } else { "False" }.to_string(),
            _ => return None,
        })
    }

    /// The model and its training step as nanoGPT's terms describe them: the same GPT-2 modules
    /// (biases, tied embeddings, flash attention, GELU), bf16 autocast, fused AdamW in two
    /// groups, gradient clipping. `block_size` is the model's (for `wpe`); the forwards see `T`.
    pub fn model(&self) -> TrainConfig {
        TrainConfig {
            n_layer: self.n_layer,
            n_head: self.n_head,
            n_embd: self.n_embd,
            block_size: self.block_size,
            batch_size: self.b,
            // train.py's convention: micro-steps over all processes
            gradient_accumulation_steps: (self.grad_accum_steps() * u64::from(self.world_size))
                .min(u64::from(u32::MAX)) as u32,
            dropout: 0.0,
            bias: true,
            dtype: crate::config::Dtype::Bfloat16,
            compile: self.use_compile,
            vocab_size: self.vocab_size,
            attention: crate::config::Attention::Flash,
            allocator: self.allocator,
            world_size: self.world_size,
            torchrun: self.torchrun,
            ..TrainConfig::default()
        }
    }

    /// The constants that differ from the script's, as `--KEY=VALUE`.
    pub fn changed(&self) -> Vec<(&'static str, String)> {
        let d = BngConfig::default();
        KEYS.iter()
            .filter(|k| self.get(k) != d.get(k))
            .map(|k| (*k, self.get(k).unwrap_or_default()))
            .collect()
    }
}

/// train_gpt2.py's constants as the script writes them (what the page's export shows).
pub fn constants(cfg: &BngConfig) -> String {
    let d = BngConfig::default();
    let mut lines: Vec<String> = ["total_batch_size", "B", "T", "use_compile"]
        .iter()
        .filter_map(|k| Some(format!("{k} = {}", cfg.get(k)?)))
        .collect();
    let sizes: Vec<String> = KEYS
        .iter()
        .filter(|k| ["n_layer", "n_head", "n_embd", "block_size"].contains(k))
        .filter(|k| cfg.get(k) != d.get(k))
        .filter_map(|k| Some(format!(", {k}={}", cfg.get(k)?)))
        .collect();
    lines.push(format!(
        "model = GPT(GPTConfig(vocab_size={}{}))",
        cfg.vocab_size,
        sizes.concat()
    ));
    if cfg.allocator != d.allocator {
        lines.push("# export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True".into());
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_as_the_script_writes_them() {
        let d = BngConfig::default();
        assert!(constants(&d).contains("total_batch_size = 524288\nB = 64\nT = 1024"));
        let deeper = BngConfig::from_args(&["--n_layer=24"]).unwrap();
        assert!(
            constants(&deeper).ends_with("model = GPT(GPTConfig(vocab_size=50304, n_layer=24))")
        );
    }

    #[test]
    fn the_scripts_defaults_and_asserts() {
        let d = BngConfig::default();
        assert_eq!(d.grad_accum_steps(), 8);
        d.validate().unwrap();
        let e = BngConfig::from_args(&["--B=48"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("divisible by B * T * ddp_world_size"),
            "{e}"
        );
        let e = BngConfig::from_args(&["--T=2048"]).unwrap_err();
        assert!(e.to_string().contains("block size is only 1024"), "{e}");
        assert!(BngConfig::from_args(&["--n_head=7"]).is_err());
        assert!(BngConfig::from_args(&["--use_compile=maybe"]).is_err());
        assert!(BngConfig::from_args(&["--batch_size=4"]).is_err());
        let c = BngConfig::from_args(&["--B=16", "--total_batch_size=2**19"]).unwrap();
        assert_eq!((c.b, c.grad_accum_steps()), (16, 32));
    }

    #[test]
    fn reads_the_scripts_own_lines() {
        let mut c = BngConfig::default();
        let n = c
            .apply_script_lines(
                "total_batch_size = 524288 # 2**19, ~0.5M, in number of tokens\n\
                 B = 16 # micro batch size\nT = 1024 # sequence length\n\
                 model = GPT(GPTConfig(vocab_size=50304, n_layer=24, n_head=16, n_embd=1024))\n\
                 use_compile = True # torch.compile interferes with HellaSwag eval",
            )
            .unwrap();
        assert_eq!(n, 8);
        assert_eq!(
            (c.b, c.n_layer, c.n_embd, c.use_compile),
            (16, 24, 1024, true)
        );
    }
}
