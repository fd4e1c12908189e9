//! `Ch07Config`: what decides the GPU memory of rasbt/LLMs-from-scratch's
//! `ch07/01_main-chapter-code/gpt_instruction_finetuning.py` (28c65cdf), by the script's names
//! (`CHOOSE_MODEL`, `BASE_CONFIG`'s `drop_rate`, `batch_size`, `num_epochs`, `train_model_simple`'s
//! `eval_freq` / `eval_iter`) and what it takes from its data: the longest example (each batch is
//! padded to its longest, up to `allowed_max_length=1024`), the entries (split 85 / 10 / 5 %), and
//! the prompts it generates from.

use super::super::ch06::config::{model_in, MODELS};
use super::super::config::{allocator_in, float_in, int_in, one_gpu, MAX_BATCH};
use crate::config::Allocator;
use crate::error::{ConfigError, Problem};

/// `custom_collate_fn(..., allowed_max_length=1024)`: longer examples are cut to it.
pub const ALLOWED_MAX_LENGTH: u32 = 1024;

/// The settings, the script's names first, then the data's and vramfit's.
pub const KEYS: &[&str] = &[
    "CHOOSE_MODEL",
    "drop_rate",
    "batch_size",
    "num_epochs",
    "allowed_max_length",
    "eval_freq",
    "eval_iter",
    "max_length",
    "entries",
    "sample_prompt",
    "test_prompt",
    "allocator",
    "nproc_per_node",
];

/// instruction-data.json (1,100 entries) as the script splits and encodes it (tiktoken's gpt2;
/// `tools/llms-from-scratch-probe/make_ch07_data_lengths.py`): its longest training example is
/// 91 tokens, `format_input(val_data[0])` 41, its longest test prompt 56.
pub const DATA_ENTRIES: u64 = 1_100;
pub const DATA_LONGEST: u32 = 91;
pub const DATA_SAMPLE_PROMPT: u32 = 41;
pub const DATA_TEST_PROMPT: u32 = 56;

/// The settings of one gpt_instruction_finetuning.py run.
#[derive(Clone, Debug, PartialEq)]
pub struct Ch07Config {
    /// Index into the GPT-2 checkpoints (`CHOOSE_MODEL`; the script: gpt2-medium).
    pub model: usize,
    pub drop_rate: f64,
    pub batch_size: u32,
    pub num_epochs: u32,
    /// The longest example in tokens (instruction, input and response): the widest batch.
    pub max_length: u32,
    /// `partial(custom_collate_fn, ..., allowed_max_length=1024)`: where examples are cut.
    pub allowed_max_length: u32,
    /// Entries of the JSON file: 85 % train, 10 % test, the rest validation.
    pub entries: u64,
    /// Tokens of the prompt the sample after each epoch starts from, and of the longest test
    /// prompt (the responses after training: up to 256 new tokens each).
    pub sample_prompt: u32,
    pub test_prompt: u32,
    pub eval_freq: u32,
    pub eval_iter: u32,
    pub allocator: Allocator,
}

impl Default for Ch07Config {
    fn default() -> Self {
        Ch07Config {
            model: 1,
            drop_rate: 0.0,
            batch_size: 8,
            num_epochs: 2,
            max_length: DATA_LONGEST,
            allowed_max_length: ALLOWED_MAX_LENGTH,
            entries: DATA_ENTRIES,
            sample_prompt: DATA_SAMPLE_PROMPT,
            test_prompt: DATA_TEST_PROMPT,
            eval_freq: 5,
            eval_iter: 5,
            allocator: Allocator::Default,
        }
    }
}

impl Ch07Config {
    /// emb_dim, n_layers, n_heads of the chosen GPT-2.
    pub fn dims(&self) -> (u32, u32, u32) {
        let (_, e, l, h) = MODELS[self.model];
        (e, l, h)
    }

    /// Sets one setting from its text.
    pub fn set(&mut self, key: &str, text: &str) -> Result<(), ConfigError> {
        let key = key.trim_start_matches('-');
        match key {
            "CHOOSE_MODEL" | "choose_model" | "model" => self.model = model_in(key, text)?,
            "drop_rate" => self.drop_rate = float_in(key, text, 0.0, 1.0, ("0", "1 (excluded)"))?,
            "batch_size" => self.batch_size = int_in(key, text, 1, u64::from(MAX_BATCH))? as u32,
            "num_epochs" => self.num_epochs = int_in(key, text, 1, 1_000_000)? as u32,
            "max_length" => self.max_length = int_in(key, text, 1, 1 << 20)? as u32,
            // the position embeddings hold 1024: a longer cut would index past them
            "allowed_max_length" => {
                self.allowed_max_length =
                    int_in(key, text, 1, u64::from(ALLOWED_MAX_LENGTH))? as u32
            }
            "entries" => self.entries = int_in(key, text, 0, 1 << 40)?,
            "sample_prompt" => self.sample_prompt = int_in(key, text, 1, 1 << 20)? as u32,
            "test_prompt" => self.test_prompt = int_in(key, text, 1, 1 << 20)? as u32,
            "eval_freq" => self.eval_freq = int_in(key, text, 1, 1 << 30)? as u32,
            "eval_iter" => self.eval_iter = int_in(key, text, 1, 1 << 30)? as u32,
            "nproc_per_node" | "nproc-per-node" | "world_size" => {
                one_gpu(key, text, "gpt_instruction_finetuning.py")?
            }
            "allocator" => self.allocator = allocator_in(key, text)?,
            _ => return Err(ConfigError::new(key, "", Problem::UnknownKey)),
        }
        Ok(())
    }

    /// `--KEY=VALUE` arguments in order; anything else is named.
    pub fn from_args<S: AsRef<str>>(args: &[S]) -> Result<Ch07Config, ConfigError> {
        let mut cfg = Ch07Config::default();
        crate::programs::seam::key_value_args(
            args,
            "gpt_instruction_finetuning.py's settings are its own names, written --KEY=VALUE \
             (--CHOOSE_MODEL=gpt2-large --batch_size=4)",
            |k, v| cfg.set(k, v),
        )?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// What the loop needs of the data: a full training batch (`drop_last=True`; with none,
    /// `evaluate_model` never runs and the loss list stays empty).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.train_rows() < u64::from(self.batch_size) {
            return Err(ConfigError::new(
                "batch_size",
                self.batch_size,
                Problem::Assertion {
                    message: format!(
                        "the training split's {} examples hold no full batch (drop_last=True): \
                         no step trains",
                        self.train_rows()
                    ),
                },
            ));
        }
        Ok(())
    }

    /// Every batch's width: the longest example, cut to `allowed_max_length`.
    pub fn width(&self) -> u32 {
        self.max_length.min(self.allowed_max_length)
    }

    /// A setting's value as the script would write it.
    pub fn get(&self, key: &str) -> Option<String> {
        Some(match key {
            "CHOOSE_MODEL" => MODELS[self.model].0.to_string(),
            "drop_rate" => super::super::config::py_float(self.drop_rate),
            "batch_size" => self.batch_size.to_string(),
            "num_epochs" => self.num_epochs.to_string(),
            "allowed_max_length" => self.allowed_max_length.to_string(),
            "eval_freq" => self.eval_freq.to_string(),
            "eval_iter" => self.eval_iter.to_string(),
            "max_length" => self.max_length.to_string(),
            "entries" => self.entries.to_string(),
            "sample_prompt" => self.sample_prompt.to_string(),
            "test_prompt" => self.test_prompt.to_string(),
            "allocator" => self.allocator.as_str().to_string(),
            "nproc_per_node" => "1".to_string(),
            _ => return None,
        })
    }

    /// The settings that differ from the script's, as `(key, value)`.
    pub fn changed(&self) -> Vec<(&'static str, String)> {
        let d = Ch07Config::default();
        KEYS.iter()
            .filter(|k| self.get(k) != d.get(k))
            .map(|k| (*k, self.get(k).unwrap_or_default()))
            .collect()
    }

    /// The script's lines pasted: `CHOOSE_MODEL = "gpt2-large (774M)"`, `batch_size = 4`,
    /// `num_epochs = 2`, `"drop_rate": 0.1,`, the collate's `allowed_max_length=512`. Returns
    /// how many were read.
    pub fn apply_script_lines(&mut self, text: &str) -> Result<usize, ConfigError> {
        let entries = script_entries(text);
        for (k, v) in &entries {
            self.set(k, v)?;
        }
        Ok(entries.len())
    }

    /// `train_portion = int(len(data) * 0.85)`, `test_portion = int(len(data) * 0.1)`.
    pub fn train_rows(&self) -> u64 {
        self.entries * 85 / 100
    }

    pub fn test_rows(&self) -> u64 {
        self.entries / 10
    }

    pub fn val_rows(&self) -> u64 {
        self.entries - self.train_rows() - self.test_rows()
    }

    pub fn train_batches(&self) -> u64 {
        self.train_rows() / u64::from(self.batch_size)
    }

    pub fn total_steps(&self) -> u64 {
        self.train_batches() * u64::from(self.num_epochs)
    }
}

/// `BASE_CONFIG`'s `"drop_rate"` and the names the script assigns or passes.
fn script_entries(text: &str) -> Vec<(&str, &str)> {
    let names = [
        "CHOOSE_MODEL",
        "batch_size",
        "num_epochs",
        "allowed_max_length",
        "eval_freq",
        "eval_iter",
    ];
    super::super::config::script_entries(text, &["drop_rate"], &names)
}

/// How many of the script's settings pasted text sets, and whether it names `CHOOSE_MODEL`.
pub fn script_lines(text: &str) -> (usize, bool) {
    let entries = script_entries(text);
    (
        entries.len(),
        entries.iter().any(|(k, _)| *k == "CHOOSE_MODEL"),
    )
}

/// The script's lines as it writes them (what the page's export shows).
pub fn script_text(cfg: &Ch07Config) -> String {
    let get = |k: &str| cfg.get(k).unwrap_or_default();
    format!(
        "customized_collate_fn = partial(custom_collate_fn, device=device, allowed_max_length={})\n\
         batch_size = {}\nBASE_CONFIG = {{\n    \"drop_rate\": {},\n}}\nCHOOSE_MODEL = \"{}\"\n\
         num_epochs = {}\ntrain_model_simple(..., eval_freq={}, eval_iter={})",
        get("allowed_max_length"),
        get("batch_size"),
        get("drop_rate"),
        get("CHOOSE_MODEL"),
        get("num_epochs"),
        get("eval_freq"),
        get("eval_iter"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_defaults_and_its_data() {
        let d = Ch07Config::default();
        d.validate().unwrap();
        // 1,100 entries: 935 / 110 / 55; 116 steps an epoch at batch 8
        assert_eq!(
            (d.train_rows(), d.test_rows(), d.val_rows()),
            (935, 110, 55)
        );
        assert_eq!(d.train_batches(), 116);
        assert_eq!(d.dims(), (1024, 24, 16));
        let c = Ch07Config::from_args(&["--max_length=3000"]).unwrap();
        assert_eq!(c.width(), 1024);
        assert!(Ch07Config::from_args(&["--batch_size=1000"]).is_err());
        assert!(Ch07Config::from_args(&["--CHOOSE_MODEL=gpt2-huge"]).is_err());
        assert_eq!(
            Ch07Config::from_args(&["--allowed_max_length=256", "--max_length=300"])
                .unwrap()
                .width(),
            256
        );
    }

    #[test]
    fn reads_the_script_as_it_is_written() {
        let text = "    customized_collate_fn = partial(custom_collate_fn, device=device, allowed_max_length=512)\n\
                    num_workers = 0\n    batch_size = 4\n        CHOOSE_MODEL = \"gpt2-large (774M)\"\n\
                    num_epochs=num_epochs, eval_freq=5, eval_iter=5,";
        assert_eq!(script_lines(text), (5, true));
        let mut c = Ch07Config::default();
        c.apply_script_lines(text).unwrap();
        assert_eq!((c.model, c.batch_size, c.allowed_max_length), (2, 4, 512));
        let mut back = Ch07Config::default();
        back.apply_script_lines(&script_text(&c)).unwrap();
        assert_eq!(back, c);
    }
}
