//! `Ch05Config`: what decides the GPU memory of rasbt/LLMs-from-scratch's
//! `ch05/01_main-chapter-code/gpt_train.py` (28c65cdf), named as the script names it — the keys of
//! its `GPT_CONFIG_124M` and `OTHER_SETTINGS` dicts — with its defaults and asserts, plus what it
//! takes from its data (the token counts of the text's two splits) and from its environment (the
//! allocator).
//!
//! Readers edit the dicts: vramfit reads them as `--context_length=1024` (CLI), `?context_length=1024`
//! (URL) or the dict's own lines pasted (`"context_length": 1024,  # Shortened context length`).

use crate::config::Allocator;
use crate::error::{ConfigError, Problem};

/// Which of the book's chapter-5 training scripts a config describes: they read the same dicts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Script {
    /// `ch05/01_main-chapter-code/gpt_train.py`: eager, fp32, foreach AdamW, one GPU.
    #[default]
    GptTrain,
    /// `ch05/10_llm-training-speed/01_opt_single_gpu.py`, and `02_opt_multi_gpu_ddp.py` under
    /// torchrun: compiled, bf16 weights, fused AdamW (`speed.rs`).
    Speed,
}

/// The speed scripts' DDP script, which wraps the model in DDP on any number of GPUs.
pub const DDP_SCRIPT: &str = "02_opt_multi_gpu_ddp.py";

impl Script {
    /// The script's file, as its messages name it.
    pub fn file(self) -> &'static str {
        match self {
            Script::GptTrain => "gpt_train.py",
            Script::Speed => "01_opt_single_gpu.py",
        }
    }
}

/// The settings of one gpt_train.py (or speed script) run.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch05Config {
    pub script: Script,
    /// torchrun's processes: `02_opt_multi_gpu_ddp.py` above 1; gpt_train.py has no DDP.
    pub nproc_per_node: u32,
    /// `02_opt_multi_gpu_ddp.py` on one GPU (under python or `torchrun --nproc_per_node=1`): its
    /// `main` wraps the model in DDP at world size 1 too, so the card holds DDP's buckets.
    pub ddp: bool,
    pub vocab_size: u32,
    pub context_length: u32,
    pub emb_dim: u32,
    pub n_heads: u32,
    pub n_layers: u32,
    pub drop_rate: f64,
    pub qkv_bias: bool,
    pub batch_size: u32,
    pub num_epochs: u32,
    /// `OTHER_SETTINGS`' learning rate and weight decay: kept as written (they change no tensor).
    pub learning_rate: f64,
    pub weight_decay: f64,
    /// GPT-2 tokens in the first 90 % of the text's characters (the training split) and in the
    /// rest: the-verdict.txt's 20,479 characters are 4,612 and 534 (tiktoken's gpt2 encoding).
    pub train_tokens: u64,
    pub val_tokens: u64,
    /// `train_model_simple(..., eval_freq=5, eval_iter=1)` as main() calls it.
    pub eval_freq: u32,
    pub eval_iter: u32,
    /// gpt_train.py sets no `PYTORCH_CUDA_ALLOC_CONF`: the default caching allocator.
    pub allocator: Allocator,
}

impl Default for Ch05Config {
    fn default() -> Self {
        Ch05Config {
            script: Script::GptTrain,
            nproc_per_node: 1,
            ddp: false,
            vocab_size: 50_257,
            context_length: 256,
            emb_dim: 768,
            n_heads: 12,
            n_layers: 12,
            drop_rate: 0.1,
            qkv_bias: false,
            batch_size: 2,
            num_epochs: 10,
            learning_rate: 5e-4,
            weight_decay: 0.1,
            train_tokens: VERDICT_TRAIN_TOKENS,
            val_tokens: VERDICT_VAL_TOKENS,
            eval_freq: 5,
            eval_iter: 1,
            allocator: Allocator::Default,
        }
    }
}

impl Ch05Config {
    /// `01_opt_single_gpu.py`'s dicts and data: GPT-2's vocabulary padded to 50,304, the full
    /// 1,024 context, batch 32, 15 epochs, `eval_freq=10`, Middlemarch.
    pub fn speed() -> Ch05Config {
        Ch05Config {
            script: Script::Speed,
            vocab_size: 50_304,
            context_length: 1024,
            batch_size: 32,
            num_epochs: 15,
            eval_freq: 10,
            train_tokens: MIDDLEMARCH_TRAIN_TOKENS,
            val_tokens: MIDDLEMARCH_VAL_TOKENS,
            ..Ch05Config::default()
        }
    }

    /// The script that runs: `02_opt_multi_gpu_ddp.py` under DDP, else the config's own.
    pub fn script_file(&self) -> &'static str {
        if self.is_ddp() {
            DDP_SCRIPT
        } else {
            self.script.file()
        }
    }

    /// Whether the run trains under DDP: `02_opt_multi_gpu_ddp.py`, on any number of GPUs.
    pub fn is_ddp(&self) -> bool {
        self.nproc_per_node > 1 || self.ddp
    }

    /// `02_opt_multi_gpu_ddp.py` on one GPU: DDP where `01_opt_single_gpu.py` would do.
    pub fn ddp_on_one_gpu(&self) -> bool {
        self.ddp && self.nproc_per_node == 1
    }

    /// The script's own settings, what `changed` and `repair` go back to.
    pub fn defaults(&self) -> Ch05Config {
        match self.script {
            Script::GptTrain => Ch05Config::default(),
            Script::Speed => Ch05Config::speed(),
        }
    }
}

/// Middlemarch (Project Gutenberg's pg145.txt, which the speed scripts download) in GPT-2 tokens,
/// 90 % of its characters to training: not counted here (the text is not in the repository and
/// this machine has no network) but bounded by the book's own log of `00_orig.py` on it — 52
/// batches of 8 × 1,024 tokens per epoch, so 425,985 to 434,176 training tokens.
pub const MIDDLEMARCH_TRAIN_TOKENS: u64 = 430_000;
pub const MIDDLEMARCH_VAL_TOKENS: u64 = 47_800;

/// the-verdict.txt (ch02/01_main-chapter-code, 20,479 characters) split at `int(0.90 *
/// len(text))` characters and encoded with tiktoken's gpt2: the script's own data.
pub const VERDICT_TRAIN_TOKENS: u64 = 4_612;
pub const VERDICT_VAL_TOKENS: u64 = 534;

/// The settings, the script's dict keys in its order, then the data's and vramfit's.
pub const KEYS: &[&str] = &[
    "vocab_size",
    "context_length",
    "emb_dim",
    "n_heads",
    "n_layers",
    "drop_rate",
    "qkv_bias",
    "learning_rate",
    "num_epochs",
    "batch_size",
    "weight_decay",
    "eval_freq",
    "eval_iter",
    "train_tokens",
    "val_tokens",
    "allocator",
    "nproc_per_node",
    "ddp",
];

/// The keys of the script's two dicts (what a pasted dict may set).
pub const DICT_KEYS: &[&str] = &[
    "vocab_size",
    "context_length",
    "emb_dim",
    "n_heads",
    "n_layers",
    "drop_rate",
    "qkv_bias",
    "learning_rate",
    "num_epochs",
    "batch_size",
    "weight_decay",
];

pub(super) fn int_in(key: &str, text: &str, min: u64, max: u64) -> Result<u64, ConfigError> {
    let t = text.trim();
    // (signed: a negative count is an integer out of range, not a wrong type)
    let v: i128 = t.replace('_', "").parse().map_err(|_| {
        ConfigError::new(
            key,
            t,
            Problem::WrongType {
                expected: "an integer",
            },
        )
    })?;
    if v < i128::from(min) || v > i128::from(max) {
        return Err(ConfigError::new(
            key,
            t,
            Problem::OutOfRange {
                min: min.to_string(),
                max: max.to_string(),
            },
        ));
    }
    Ok(v as u64)
}

pub(super) use crate::programs::seam::py_bool_in;

/// The book's scripts have no DDP: a process count other than 1 is refused.
pub(super) fn one_gpu(key: &str, text: &str, script: &str) -> Result<(), ConfigError> {
    if int_in(key, text, 1, 4096)? != 1 {
        return Err(ConfigError::new(
            key,
            text.trim(),
            Problem::Assertion {
                message: format!(
                    "{script} trains on one GPU (it has no DDP): nproc_per_node must be 1"
                ),
            },
        ));
    }
    Ok(())
}

/// `PYTORCH_CUDA_ALLOC_CONF` by vramfit's names.
pub(super) fn allocator_in(key: &str, text: &str) -> Result<Allocator, ConfigError> {
    Allocator::parse(text.trim()).ok_or_else(|| {
        ConfigError::new(
            key,
            text.trim(),
            Problem::NotOneOf {
                choices: Allocator::NAMES,
            },
        )
    })
}

/// A number from `min` up to (not including) `below`, as the message writes them.
pub(super) fn float_in(
    key: &str,
    text: &str,
    min: f64,
    below: f64,
    range: (&str, &str),
) -> Result<f64, ConfigError> {
    let t = text.trim();
    // crate::decimal, not str::parse: core's float parser is a tenth of the page's wasm
    let v: f64 = crate::decimal::parse(t)
        .filter(|v| v.is_finite())
        .ok_or_else(|| {
            ConfigError::new(
                key,
                t,
                Problem::WrongType {
                    expected: "a number",
                },
            )
        })?;
    if !(min..below).contains(&v) {
        return Err(ConfigError::new(
            key,
            t,
            Problem::OutOfRange {
                min: range.0.into(),
                max: range.1.into(),
            },
        ));
    }
    Ok(v)
}

/// Any finite number from 0 up.
pub(super) const ANY: (&str, &str) = ("0", "∞");

/// The most tokens a text may have for vramfit (a trillion: far past any text a reader trains on).
pub const MAX_TOKENS: u64 = 1 << 40;

/// The longest context and the largest batch vramfit takes.
pub const MAX_CONTEXT: u32 = 1 << 20;
pub const MAX_BATCH: u32 = 1 << 20;

impl Ch05Config {
    /// Sets one setting from its text (a Python literal; `true`/`false` too, as URLs carry them).
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let key = key.trim_start_matches('-');
        match key {
            "vocab_size" => self.vocab_size = int_in(key, text, 1, 1 << 22)? as u32,
            "context_length" => {
                self.context_length = int_in(key, text, 1, u64::from(MAX_CONTEXT))? as u32
            }
            "emb_dim" => self.emb_dim = int_in(key, text, 1, 65_536)? as u32,
            "n_heads" => self.n_heads = int_in(key, text, 1, 1024)? as u32,
            "n_layers" => self.n_layers = int_in(key, text, 1, 512)? as u32,
            // nn.Dropout takes 0 ≤ p ≤ 1; p = 1 zeroes everything, a run no one trains
            "drop_rate" => self.drop_rate = float_in(key, text, 0.0, 1.0, ("0", "1 (excluded)"))?,
            "qkv_bias" => self.qkv_bias = py_bool_in(key, text)?,
            "batch_size" => self.batch_size = int_in(key, text, 1, u64::from(MAX_BATCH))? as u32,
            "num_epochs" => self.num_epochs = int_in(key, text, 1, 1_000_000)? as u32,
            "learning_rate" => self.learning_rate = float_in(key, text, 0.0, f64::MAX, ANY)?,
            "weight_decay" => self.weight_decay = float_in(key, text, 0.0, f64::MAX, ANY)?,
            "eval_freq" => self.eval_freq = int_in(key, text, 1, 1 << 30)? as u32,
            "eval_iter" => self.eval_iter = int_in(key, text, 1, 1 << 30)? as u32,
            "train_tokens" | "train_text_tokens" => {
                self.train_tokens = int_in(key, text, 0, MAX_TOKENS)?
            }
            "val_tokens" | "val_text_tokens" => self.val_tokens = int_in(key, text, 0, MAX_TOKENS)?,
            // the whole text's count: split as the script splits the characters, 90 % to training
            // (tokens follow characters closely: the-verdict.txt's 5,145 split 4,612 / 534)
            "text_tokens" => {
                let n = int_in(key, text, 0, MAX_TOKENS)?;
                self.train_tokens = n * 9 / 10;
                self.val_tokens = n - self.train_tokens;
            }
            // gpt_train.py has no DDP; 02_opt_multi_gpu_ddp.py runs under torchrun
            "nproc_per_node" | "nproc-per-node" | "world_size" => match self.script {
                Script::GptTrain => one_gpu(key, text, self.script.file())?,
                Script::Speed => self.nproc_per_node = int_in(key, text, 1, 4096)? as u32,
            },
            "ddp" => match self.script {
                Script::GptTrain => {
                    if py_bool_in(key, text)? {
                        return Err(ConfigError::new(
                            key,
                            text.trim(),
                            Problem::Assertion {
                                message: "gpt_train.py has no DDP: ddp must be False".into(),
                            },
                        ));
                    }
                }
                Script::Speed => self.ddp = py_bool_in(key, text)?,
            },
            "allocator" => self.allocator = allocator_in(key, text)?,
            _ => return Err(ConfigError::new(key, "", Problem::UnknownKey)),
        }
        Ok(())
    }

    /// gpt_train.py's `--KEY=VALUE` arguments in order; anything else is named.
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<Ch05Config, ConfigError> {
        Ch05Config::default().with_args(args)
    }

    /// These settings with `--KEY=VALUE` arguments applied in order.
    pub fn with_args<S: AsRef<str>>(self, args: &[S]) -> Result<Ch05Config, ConfigError> {
        let mut cfg = self;
        let form = format!(
            "{}'s settings are its dicts' keys, written --KEY=VALUE (--context_length=1024)",
            cfg.script.file()
        );
        crate::programs::seam::key_value_args(args, &form, |k, v| cfg.set(k, v))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// A pasted text's dict lines over these settings, checked: `None` where it holds none.
    pub fn read_pasted_dicts(&self, text: &str) -> Option<Result<(Self, usize), ConfigError>> {
        if dict_lines(text) == 0 {
            return None;
        }
        let mut cfg = self.clone();
        Some(
            cfg.apply_dict_lines(text)
                .and_then(|n| cfg.validate().map(|()| (cfg, n))),
        )
    }

    /// (B, T, C, H, L, V): the letters the formulas are written in.
    pub fn letters(&self) -> (u32, u32, u32, u32, u32, u32) {
        (
            self.batch_size,
            self.context_length,
            self.emb_dim,
            self.n_heads,
            self.n_layers,
            self.vocab_size,
        )
    }

    /// The dicts' own lines (`"context_length": 1024,  # Shortened context length (orig: 1024)`,
    /// or several on one line): each key it knows is read, the rest left. Returns how many
    /// settings were read.
    pub fn apply_dict_lines(&mut self, text: &str) -> Result<usize, ConfigError> {
        let mut read = 0;
        for (key, value) in dict_entries(text, DICT_KEYS) {
            self.set(key, value)?;
            read += 1;
        }
        Ok(read)
    }

    /// The script's asserts.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // MultiHeadAttention: assert d_out % num_heads == 0
        if !self.emb_dim.is_multiple_of(self.n_heads) {
            return Err(ConfigError::new(
                "emb_dim",
                self.emb_dim,
                Problem::NotDivisibleBy {
                    divisor_key: "n_heads",
                    divisor: self.n_heads.into(),
                },
            ));
        }
        Ok(())
    }

    /// A setting's value as the script would write it.
    pub fn get(&self, key: &str) -> Option<String> {
        let py_bool = |b: bool| if b { "True" } else { "False" }.to_string();
        Some(match key {
            "vocab_size" => self.vocab_size.to_string(),
            "context_length" => self.context_length.to_string(),
            "emb_dim" => self.emb_dim.to_string(),
            "n_heads" => self.n_heads.to_string(),
            "n_layers" => self.n_layers.to_string(),
            "drop_rate" => py_float(self.drop_rate),
            "qkv_bias" => py_bool(self.qkv_bias),
            "batch_size" => self.batch_size.to_string(),
            "num_epochs" => self.num_epochs.to_string(),
            "learning_rate" => py_float(self.learning_rate),
            "weight_decay" => py_float(self.weight_decay),
            "eval_freq" => self.eval_freq.to_string(),
            "eval_iter" => self.eval_iter.to_string(),
            "train_tokens" => self.train_tokens.to_string(),
            "val_tokens" => self.val_tokens.to_string(),
            "allocator" => self.allocator.as_str().to_string(),
            "nproc_per_node" => self.nproc_per_node.to_string(),
            "ddp" => py_bool(self.ddp),
            _ => return None,
        })
    }

    /// The settings that differ from the script's, as `(key, value)`.
    pub fn changed(&self) -> Vec<(&'static str, String)> {
        let d = self.defaults();
        KEYS.iter()
            .filter(|k| self.get(k) != d.get(k))
            .map(|k| (*k, self.get(k).unwrap_or_default()))
            .collect()
    }

    /// `GPTDatasetV1` with `stride = max_length = context_length`: one sequence per
    /// `range(0, len(token_ids) - max_length, stride)` start.
    fn sequences(&self, tokens: u64) -> u64 {
        let ctx = u64::from(self.context_length);
        tokens.saturating_sub(ctx).div_ceil(ctx)
    }

    /// Training sequences (each rank's `DistributedSampler` share under torchrun).
    pub fn train_sequences(&self) -> u64 {
        self.sequences(self.train_tokens)
            .div_ceil(u64::from(self.nproc_per_node))
    }

    /// Training batches per epoch (`drop_last=True`).
    pub fn train_batches(&self) -> u64 {
        self.train_sequences() / u64::from(self.batch_size)
    }

    /// Validation batches (`drop_last=False`).
    pub fn val_batches(&self) -> u64 {
        self.val_sequences().div_ceil(u64::from(self.batch_size))
    }

    /// Validation sequences; the loader (`drop_last=False`) batches them by `batch_size`, the last
    /// batch partial. None: `evaluate_model`'s validation loss is `nan`, with no forward.
    pub fn val_sequences(&self) -> u64 {
        self.sequences(self.val_tokens)
            .div_ceil(u64::from(self.nproc_per_node))
    }

    /// Optimizer steps in the whole run.
    pub fn total_steps(&self) -> u64 {
        self.train_batches() * u64::from(self.num_epochs)
    }
}

/// A float as Python prints it (`0.1`, `0.0`, `0.0005`).
pub(super) fn py_float(v: f64) -> String {
    let s = crate::decimal::shortest(v);
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// The `"key": value` entries of pasted dict text whose key is one of `keys`, comments dropped.
pub(super) fn dict_entries<'a>(text: &'a str, keys: &[&str]) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split('#').next().unwrap_or("");
        for part in code.split(',') {
            let Some((k, v)) = part.split_once(':') else {
                continue;
            };
            let k = k.rsplit('{').next().unwrap_or(k).trim();
            let Some(k) = k
                .strip_prefix('"')
                .and_then(|k| k.strip_suffix('"'))
                .or_else(|| k.strip_prefix('\'').and_then(|k| k.strip_suffix('\'')))
            else {
                continue;
            };
            let v = v.trim().trim_end_matches('}').trim();
            if keys.contains(&k) && !v.is_empty() {
                out.push((k, v));
            }
        }
    }
    out
}

/// The settings pasted script text sets: the `"key": value` entries of `dict_keys`, then each
/// `name = value` (an assignment, or a keyword of a call) of `names` whose value is a literal —
/// `num_epochs=num_epochs` and `max_length=None` leave the script's own.
pub(super) fn script_entries<'a>(
    text: &'a str,
    dict_keys: &[&str],
    names: &[&str],
) -> Vec<(&'a str, &'a str)> {
    let mut out = dict_entries(text, dict_keys);
    for line in text.lines() {
        let code = line.split('#').next().unwrap_or("");
        for part in code.split(',') {
            let Some((k, v)) = part.split_once('=') else {
                continue;
            };
            if v.starts_with('=') || k.ends_with(['!', '<', '>']) {
                continue;
            }
            let k = k.rsplit(['(', ' ']).find(|w| !w.is_empty()).unwrap_or("");
            let v = v.trim().trim_end_matches(')').trim();
            let literal = v.starts_with(|c: char| c.is_ascii_digit() || c == '"' || c == '\'');
            if names.contains(&k) && literal {
                out.push((k, v));
            }
        }
    }
    out
}

/// How many of the dicts' keys pasted text sets.
pub fn dict_lines(text: &str) -> usize {
    dict_entries(text, DICT_KEYS).len()
}

/// The script's two dicts as it writes them (what the page's export shows).
pub fn dicts(cfg: &Ch05Config) -> String {
    let entry = |k: &str| format!("    \"{k}\": {},", cfg.get(k).unwrap_or_default());
    let model: Vec<String> = DICT_KEYS[..7].iter().map(|k| entry(k)).collect();
    let other: Vec<String> = DICT_KEYS[7..].iter().map(|k| entry(k)).collect();
    format!(
        "GPT_CONFIG_124M = {{\n{}\n}}\n\nOTHER_SETTINGS = {{\n{}\n}}",
        model.join("\n"),
        other.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_defaults_and_its_data() {
        let d = Ch05Config::default();
        d.validate().unwrap();
        // 4,612 training tokens at 256: 18 sequences, 9 batches of 2; 534 validation tokens: 2
        assert_eq!((d.train_batches(), d.val_sequences()), (9, 2));
        let c = Ch05Config::from_args(&["--context_length=1024"]).unwrap();
        // the validation split holds no full 1,024-token sequence: its loader is empty
        assert_eq!((c.train_batches(), c.val_sequences()), (2, 0));
        let e = Ch05Config::from_args(&["--n_heads=7"]).unwrap_err();
        assert!(e.to_string().contains("n_heads"), "{e}");
        assert!(Ch05Config::from_args(&["--drop_rate=1.5"]).is_err());
        assert!(Ch05Config::from_args(&["--qkv_bias=maybe"]).is_err());
        assert!(Ch05Config::from_args(&["--B=4"]).is_err());
        // a negative count is an integer out of range; a fraction is not an integer
        let e = Ch05Config::from_args(&["--batch_size=-3"]).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = Ch05Config::from_args(&["--batch_size=2.5"]).unwrap_err();
        assert!(e.to_string().contains("integer"), "{e}");
    }

    #[test]
    fn reads_the_dicts_as_the_script_writes_them() {
        let mut c = Ch05Config::default();
        let n = c
            .apply_dict_lines(
                "GPT_CONFIG_124M = {\n    \"vocab_size\": 50257,    # Vocabulary size\n    \
                 \"context_length\": 1024,  # Shortened context length (orig: 1024)\n    \
                 \"drop_rate\": 0.0,       # Dropout rate\n    \"qkv_bias\": True\n}\n\
                 OTHER_SETTINGS = {\"learning_rate\": 5e-4, \"batch_size\": 8}",
            )
            .unwrap();
        assert_eq!(n, 6);
        assert_eq!(
            (c.context_length, c.drop_rate, c.qkv_bias, c.batch_size),
            (1024, 0.0, true, 8)
        );
        let mut back = Ch05Config::default();
        back.apply_dict_lines(&dicts(&c)).unwrap();
        assert_eq!(back, Ch05Config { ..c });
    }
}
