//! `Ch06Config`: what decides the GPU memory of rasbt/LLMs-from-scratch's
//! `ch06/01_main-chapter-code/gpt_class_finetune.py` (28c65cdf), named as the script names it:
//! `CHOOSE_MODEL`, the `BASE_CONFIG` dict's keys, `batch_size`, `num_epochs`, `num_classes`,
//! `train_classifier_simple`'s `eval_freq` / `eval_iter`; what it takes from its data (the longest
//! training text, which pads every batch, and the splits' rows); and the allocator.
//!
//! The script loads OpenAI's GPT-2 weights into the model (`load_weights_into_gpt`), so the
//! `BASE_CONFIG` entries the weights fix — `vocab_size` 50257, `context_length` 1024,
//! `qkv_bias` True — are read but only at those values: any other makes the load fail.

use super::super::config::{
    allocator_in, float_in, int_in, one_gpu, py_bool_in, py_float, MAX_BATCH,
};
use crate::config::Allocator;
use crate::error::{ConfigError, Problem};

/// The GPT-2 checkpoints `CHOOSE_MODEL` picks: (name, emb_dim, n_layers, n_heads).
pub const MODELS: [(&str, u32, u32, u32); 4] = [
    ("gpt2-small (124M)", 768, 12, 12),
    ("gpt2-medium (355M)", 1024, 24, 16),
    ("gpt2-large (774M)", 1280, 36, 20),
    ("gpt2-xl (1558M)", 1600, 48, 25),
];

/// `CHOOSE_MODEL`'s names, in size order (the page's choice).
pub const MODEL_NAMES: &[&str] = &[
    "gpt2-small (124M)",
    "gpt2-medium (355M)",
    "gpt2-large (774M)",
    "gpt2-xl (1558M)",
];

/// What the loaded GPT-2 weights fix in `BASE_CONFIG`.
pub const VOCAB_SIZE: u32 = 50_257;
pub const CONTEXT_LENGTH: u32 = 1024;

/// The SMS Spam Collection as the script prepares it: 747 spam and 747 ham messages
/// (`create_balanced_dataset`), split 70 / 10 / 20 % (`random_split`): 1,045 training and 149
/// validation rows; its longest training message is 120 GPT-2 tokens (ch06.ipynb prints 120).
pub const SPAM_TRAIN_ROWS: u64 = 1_045;
pub const SPAM_VAL_ROWS: u64 = 149;
pub const SPAM_MAX_LENGTH: u32 = 120;

/// `CHOOSE_MODEL`'s value: as the script writes it, or by its first word (gpt2-xl), size (xl) or
/// count (1558M); the index into [`MODELS`].
pub fn model_in(key: &str, text: &str) -> Result<usize, ConfigError> {
    let t = text.trim().trim_matches(['"', '\'']);
    MODELS
        .iter()
        .position(|(name, ..)| {
            let first = name.split(' ').next().unwrap_or("");
            *name == t
                || first == t
                || first.strip_prefix("gpt2-") == Some(t)
                || name.contains(&format!("({t})"))
        })
        .ok_or_else(|| {
            ConfigError::new(
                key,
                t,
                Problem::NotOneOf {
                    choices: MODEL_NAMES,
                },
            )
        })
}

/// The settings of one gpt_class_finetune.py run.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch06Config {
    /// Index into [`MODELS`].
    pub model: usize,
    pub drop_rate: f64,
    pub batch_size: u32,
    pub num_epochs: u32,
    /// `num_classes = 2`: the new `out_head`'s outputs.
    pub num_classes: u32,
    /// `SpamDataset`'s `max_length`: the longest training text in tokens (the script passes
    /// `max_length=None`, so the longest pads every train, validation and test sequence).
    pub max_length: u32,
    /// Rows of the training and validation CSVs.
    pub train_rows: u64,
    pub val_rows: u64,
    /// `train_classifier_simple(..., eval_freq=50, eval_iter=5)`.
    pub eval_freq: u32,
    pub eval_iter: u32,
    /// The script sets no `PYTORCH_CUDA_ALLOC_CONF`: the default caching allocator.
    pub allocator: Allocator,
}

impl Default for Ch06Config {
    fn default() -> Self {
        Ch06Config {
            model: 0,
            drop_rate: 0.0,
            batch_size: 8,
            num_epochs: 5,
            num_classes: 2,
            max_length: SPAM_MAX_LENGTH,
            train_rows: SPAM_TRAIN_ROWS,
            val_rows: SPAM_VAL_ROWS,
            eval_freq: 50,
            eval_iter: 5,
            allocator: Allocator::Default,
        }
    }
}

/// The settings, the script's names in its order, then the data's and vramfit's.
pub const KEYS: &[&str] = &[
    "CHOOSE_MODEL",
    "vocab_size",
    "context_length",
    "drop_rate",
    "qkv_bias",
    "batch_size",
    "num_classes",
    "num_epochs",
    "eval_freq",
    "eval_iter",
    "max_length",
    "train_rows",
    "val_rows",
    "allocator",
    "nproc_per_node",
];

/// `BASE_CONFIG`'s keys vramfit reads from a pasted dict.
const DICT_KEYS: &[&str] = &["vocab_size", "context_length", "drop_rate", "qkv_bias"];

/// The script's names set by assignment or keyword (`batch_size = 8`, `eval_freq=50`).
const ASSIGNED_KEYS: &[&str] = &[
    "CHOOSE_MODEL",
    "batch_size",
    "num_epochs",
    "num_classes",
    "eval_freq",
    "eval_iter",
    "max_length",
];

/// The most rows a CSV may have for vramfit (far past any dataset a reader fine-tunes on).
pub const MAX_ROWS: u64 = 1 << 40;

impl Ch06Config {
    /// emb_dim, n_layers, n_heads of the chosen GPT-2.
    pub fn dims(&self) -> (u32, u32, u32) {
        let (_, e, l, h) = MODELS[self.model];
        (e, l, h)
    }

    /// Sets one setting from its text (a Python literal; `true`/`false` too, as URLs carry them).
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let key = key.trim_start_matches('-');
        let fixed = |value: &str, wanted: &str| -> Result<(), ConfigError> {
            if value == wanted {
                return Ok(());
            }
            Err(ConfigError::new(
                key,
                value,
                Problem::Assertion {
                    message: format!(
                        "load_weights_into_gpt loads GPT-2's weights, which fix {key} at {wanted}"
                    ),
                },
            ))
        };
        match key {
            "CHOOSE_MODEL" | "choose_model" | "model" => self.model = model_in(key, text)?,
            "vocab_size" => fixed(&int_in(key, text, 1, 1 << 22)?.to_string(), "50257")?,
            "context_length" => fixed(&int_in(key, text, 1, 1 << 20)?.to_string(), "1024")?,
            "qkv_bias" => fixed(
                if py_bool_in(key, text)? {
                    "True"
                } else {
                    "False"
                },
                "True",
            )?,
            "drop_rate" => self.drop_rate = float_in(key, text, 0.0, 1.0, ("0", "1 (excluded)"))?,
            "batch_size" => self.batch_size = int_in(key, text, 1, u64::from(MAX_BATCH))? as u32,
            "num_epochs" => self.num_epochs = int_in(key, text, 1, 1_000_000)? as u32,
            "num_classes" => self.num_classes = int_in(key, text, 1, 1 << 20)? as u32,
            "eval_freq" => self.eval_freq = int_in(key, text, 1, 1 << 30)? as u32,
            "eval_iter" => self.eval_iter = int_in(key, text, 1, 1 << 30)? as u32,
            "max_length" => {
                self.max_length = int_in(key, text, 1, u64::from(CONTEXT_LENGTH) * 1024)? as u32
            }
            "train_rows" => self.train_rows = int_in(key, text, 0, MAX_ROWS)?,
            "val_rows" => self.val_rows = int_in(key, text, 0, MAX_ROWS)?,
            // the balanced dataset's rows, split as random_split(balanced_df, 0.7, 0.1) does
            "rows" | "balanced_rows" => {
                let n = int_in(key, text, 0, MAX_ROWS)?;
                self.train_rows = n * 7 / 10;
                self.val_rows = n / 10;
            }
            "nproc_per_node" | "nproc-per-node" | "world_size" => {
                one_gpu(key, text, "gpt_class_finetune.py")?
            }
            "allocator" => self.allocator = allocator_in(key, text)?,
            _ => return Err(ConfigError::new(key, "", Problem::UnknownKey)),
        }
        Ok(())
    }

    /// `--KEY=VALUE` arguments in order; anything else is named.
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<Ch06Config, ConfigError> {
        let mut cfg = Ch06Config::default();
        crate::programs::seam::key_value_args(
            args,
            "gpt_class_finetune.py's settings are its own names, written --KEY=VALUE \
             (--CHOOSE_MODEL=gpt2-medium --batch_size=4)",
            |k, v| cfg.set(k, v),
        )?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The script's own lines pasted: `CHOOSE_MODEL = "gpt2-medium (355M)"`, `batch_size = 8`,
    /// `BASE_CONFIG`'s `"drop_rate": 0.0,`, the call's `eval_freq=50, eval_iter=5`. Returns how
    /// many settings were read.
    pub fn apply_script_lines(&mut self, text: &str) -> Result<usize, ConfigError> {
        let entries = script_entries(text);
        for (key, value) in &entries {
            self.set(key, value)?;
        }
        Ok(entries.len())
    }

    /// The script's asserts, and what its loop needs of the data.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // assert train_dataset.max_length <= BASE_CONFIG["context_length"]
        if self.max_length > CONTEXT_LENGTH {
            return Err(ConfigError::new(
                "max_length",
                self.max_length,
                Problem::Assertion {
                    message: format!(
                        "Dataset length {} exceeds model's context length {CONTEXT_LENGTH}. \
                         Reinitialize data sets with `max_length={CONTEXT_LENGTH}`",
                        self.max_length
                    ),
                },
            ));
        }
        // calc_accuracy_loader divides by the examples it saw: none when a loader is empty
        if self.train_rows < u64::from(self.batch_size) {
            return Err(ConfigError::new(
                "batch_size",
                self.batch_size,
                Problem::Assertion {
                    message: format!(
                        "the training set's {} rows hold no full batch (drop_last=True): no step \
                         trains and calc_accuracy_loader divides by zero",
                        self.train_rows
                    ),
                },
            ));
        }
        if self.val_rows == 0 {
            return Err(ConfigError::new(
                "val_rows",
                0,
                Problem::Assertion {
                    message: "an empty validation set: calc_accuracy_loader divides by zero".into(),
                },
            ));
        }
        Ok(())
    }

    /// A setting's value as the script would write it.
    pub fn get(&self, key: &str) -> Option<String> {
        Some(match key {
            "CHOOSE_MODEL" => MODELS[self.model].0.to_string(),
            "vocab_size" => VOCAB_SIZE.to_string(),
            "context_length" => CONTEXT_LENGTH.to_string(),
            "qkv_bias" => "True".to_string(),
            "drop_rate" => py_float(self.drop_rate),
            "batch_size" => self.batch_size.to_string(),
            "num_epochs" => self.num_epochs.to_string(),
            "num_classes" => self.num_classes.to_string(),
            "eval_freq" => self.eval_freq.to_string(),
            "eval_iter" => self.eval_iter.to_string(),
            "max_length" => self.max_length.to_string(),
            "train_rows" => self.train_rows.to_string(),
            "val_rows" => self.val_rows.to_string(),
            "allocator" => self.allocator.as_str().to_string(),
            "nproc_per_node" => "1".to_string(),
            _ => return None,
        })
    }

    /// The settings that differ from the script's, as `(key, value)`.
    pub fn changed(&self) -> Vec<(&'static str, String)> {
        let d = Ch06Config::default();
        KEYS.iter()
            .filter(|k| self.get(k) != d.get(k))
            .map(|k| (*k, self.get(k).unwrap_or_default()))
            .collect()
    }

    /// Training batches per epoch (`drop_last=True`).
    pub fn train_batches(&self) -> u64 {
        self.train_rows / u64::from(self.batch_size)
    }

    /// Validation batches (`drop_last=False`: the last one partial).
    pub fn val_batches(&self) -> u64 {
        self.val_rows.div_ceil(u64::from(self.batch_size))
    }

    /// Optimizer steps in the whole run.
    pub fn total_steps(&self) -> u64 {
        self.train_batches() * u64::from(self.num_epochs)
    }
}

/// The settings pasted script text sets, by the script's names: `BASE_CONFIG`'s entries, the
/// assignments and keywords vramfit reads.
fn script_entries(text: &str) -> Vec<(&str, &str)> {
    super::super::config::script_entries(text, DICT_KEYS, ASSIGNED_KEYS)
}

/// How many of the script's settings pasted text sets, and whether it names `CHOOSE_MODEL` (the
/// line that marks text as this script's wherever it is pasted).
pub fn script_lines(text: &str) -> (usize, bool) {
    let entries = script_entries(text);
    let named = entries.iter().any(|(k, _)| *k == "CHOOSE_MODEL");
    (entries.len(), named)
}

/// The script's lines as it writes them (what the page's export shows).
pub fn script_text(cfg: &Ch06Config) -> String {
    let get = |k: &str| cfg.get(k).unwrap_or_default();
    format!(
        "BASE_CONFIG = {{\n    \"vocab_size\": {},\n    \"context_length\": {},\n    \
         \"drop_rate\": {},\n    \"qkv_bias\": {}\n}}\nCHOOSE_MODEL = \"{}\"\nbatch_size = {}\n\
         num_classes = {}\nnum_epochs = {}\n\
         train_dataset = SpamDataset(csv_file=\"train.csv\", max_length={}, tokenizer=tokenizer)\n\
         train_classifier_simple(..., eval_freq={}, eval_iter={})",
        get("vocab_size"),
        get("context_length"),
        get("drop_rate"),
        get("qkv_bias"),
        get("CHOOSE_MODEL"),
        get("batch_size"),
        get("num_classes"),
        get("num_epochs"),
        get("max_length"),
        get("eval_freq"),
        get("eval_iter"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_defaults_and_its_data() {
        let d = Ch06Config::default();
        d.validate().unwrap();
        // 1,045 rows in batches of 8: 130 steps an epoch; 149 validation rows: 19 batches
        assert_eq!((d.train_batches(), d.val_batches()), (130, 19));
        assert_eq!(d.dims(), (768, 12, 12));
        let m = Ch06Config::from_args(&["--CHOOSE_MODEL=gpt2-medium (355M)"]).unwrap();
        assert_eq!(m.dims(), (1024, 24, 16));
        assert_eq!(
            Ch06Config::from_args(&["--CHOOSE_MODEL=774M"])
                .unwrap()
                .model,
            2
        );
        for bad in [
            "--context_length=256",
            "--qkv_bias=False",
            "--CHOOSE_MODEL=gpt2-huge",
            "--max_length=2048",
            "--batch_size=2000",
            "--drop_rate=1.5",
        ] {
            let e = Ch06Config::from_args(&[bad]).unwrap_err();
            assert!(!e.to_string().is_empty(), "{bad}");
        }
        let e = Ch06Config::from_args(&["--context_length=256"]).unwrap_err();
        assert!(e.to_string().contains("1024"), "{e}");
    }

    #[test]
    fn reads_the_script_as_it_is_written() {
        let mut c = Ch06Config::default();
        let text = "BASE_CONFIG = {\n    \"vocab_size\": 50257,     # Vocabulary size\n    \
                    \"context_length\": 1024,  # Context length\n    \"drop_rate\": 0.1,        \
                    # Dropout rate\n    \"qkv_bias\": True         # Query-key-value bias\n}\n\
                    CHOOSE_MODEL = \"gpt2-large (774M)\"\n    num_workers = 0\n    batch_size = 4\n\
                    train_dataset = SpamDataset(csv_file=\"train.csv\", max_length=None, tokenizer=tokenizer)\n\
                    num_epochs=num_epochs, eval_freq=25, eval_iter=5,";
        assert_eq!(script_lines(text), (8, true));
        c.apply_script_lines(text).unwrap();
        assert_eq!(
            (c.model, c.drop_rate, c.batch_size, c.eval_freq),
            (2, 0.1, 4, 25)
        );
        let mut back = Ch06Config::default();
        back.apply_script_lines(&script_text(&c)).unwrap();
        assert_eq!(back, c);
    }
}
