//! The stages of a nanochat run after training at 92d63d4: `scripts/base_eval.py`,
//! `scripts/chat_eval.py` and `scripts/chat_rl.py`, read from their command lines as argparse
//! reads them. A stage loads
//! the checkpoint the stage before it wrote, so its model (depth, width, context, windows) is
//! that run's: [`StageConfig::read`] takes it from the training stage's config.
//!
//! Two sizes come from data vramfit does not have: the longest CORE example (the eval bundle's)
//! and the longest chat prompt (the task datasets'). They are settings with stated defaults
//! ([`CORE_MAX_TOKENS`], [`LONGEST_PROMPT`]), not measurements.

use super::config::{int_in, u32_in, NanochatConfig, Script};
use crate::engine::run::Run;
use crate::error::{ConfigError, Problem};
use crate::gpu::{Budget, Gpu};

/// Tokens (choices × length) of the largest CORE example when not given: agi_eval_lsat_ar's five
/// choices, each three LSAT logic-game passages with their questions and answers (≈ 1,600 tokens
/// each). An estimate from the task's shape, not a count over the bundle.
pub const CORE_MAX_TOKENS: u64 = 8_192;

/// The longest rendered chat prompt when not given: MMLU's longest questions with their four
/// choices in nanochat's chat format (the GSM8K and HumanEval prompts are shorter). An estimate.
pub const LONGEST_PROMPT: u64 = 1_024;

/// Which script a stage runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageScript {
    BaseEval,
    ChatEval,
    ChatRl,
}

impl StageScript {
    pub fn file(self) -> &'static str {
        match self {
            StageScript::BaseEval => "base_eval.py",
            StageScript::ChatEval => "chat_eval.py",
            StageScript::ChatRl => "chat_rl.py",
        }
    }

    /// The module `python -m`/`torchrun -m` names.
    pub fn module(self) -> &'static str {
        match self {
            StageScript::BaseEval => "scripts.base_eval",
            StageScript::ChatEval => "scripts.chat_eval",
            StageScript::ChatRl => "scripts.chat_rl",
        }
    }

    /// The flag that sets the stage's batch.
    pub fn batch_flag(self) -> &'static str {
        match self {
            StageScript::BaseEval | StageScript::ChatRl => "--device-batch-size",
            StageScript::ChatEval => "-b",
        }
    }

    fn options(self) -> &'static [Opt] {
        match self {
            StageScript::BaseEval => BASE_EVAL,
            StageScript::ChatEval => CHAT_EVAL,
            StageScript::ChatRl => CHAT_RL,
        }
    }
}

/// What base_eval.py evaluates (`--eval`, comma-separated).
#[derive(Clone, Debug, PartialEq)]
pub struct BaseModes {
    pub core: bool,
    pub bpb: bool,
    pub sample: bool,
}

/// chat_eval.py's tasks and its generation settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatTasks {
    /// `-a`, split on `|`; all five when not given.
    pub tasks: Vec<String>,
    pub num_samples: u32,
    pub max_new_tokens: u32,
}

/// chat_eval.py's tasks by kind (its `run_chat_eval` table and each task's `eval_type`).
const CATEGORICAL: &[&str] = &["ARC-Easy", "ARC-Challenge", "MMLU"];
const GENERATIVE: &[&str] = &["GSM8K", "HumanEval"];
const ALL_CHAT_TASKS: &[&str] = &["ARC-Easy", "ARC-Challenge", "MMLU", "GSM8K", "HumanEval"];

impl ChatTasks {
    pub fn categorical(&self) -> bool {
        self.tasks.iter().any(|t| CATEGORICAL.contains(&t.as_str()))
    }

    pub fn generative(&self) -> bool {
        self.tasks.iter().any(|t| GENERATIVE.contains(&t.as_str()))
    }
}

/// chat_rl.py's sampling and step settings.
#[derive(Clone, Debug, PartialEq)]
pub struct RlSettings {
    /// `--num-samples`: completions per example, sampled `--device-batch-size` at a time.
    pub num_samples: u32,
    pub max_new_tokens: u32,
    /// `--examples-per-step`, over all ranks (each rank takes its share).
    pub examples_per_step: u32,
    /// `--eval-examples`: problems of the pass@k evaluation at step 0 (and every
    /// `--eval-every` steps), split over the ranks.
    pub eval_examples: u32,
}

impl RlSettings {
    /// Completions one example gets: `num_samples // B` sampling steps of B (chat_rl.py's
    /// `num_sampling_steps`), so a batch that does not divide `--num-samples` trains on fewer.
    pub fn samples(&self, batch: u32) -> u32 {
        self.num_samples / batch.max(1) * batch
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Eval {
    Base(BaseModes),
    Chat(ChatTasks),
    Rl(RlSettings),
}

/// One evaluation stage as its command line sets it, on the checkpoint of `model`'s run.
#[derive(Clone, Debug, PartialEq)]
pub struct StageConfig {
    pub script: StageScript,
    /// The training run whose checkpoint this stage loads (its model and environment).
    pub model: NanochatConfig,
    /// base_eval.py `--device-batch-size` (its bpb batch); chat_eval.py `-b` (categorical);
    /// chat_rl.py `--device-batch-size` (its sampling and training batch).
    pub batch: u32,
    pub eval: Eval,
    /// base_eval.py `--split-tokens`.
    pub split_tokens: u64,
    /// The largest CORE example's tokens ([`CORE_MAX_TOKENS`] unless given).
    pub core_max_tokens: u64,
    /// The longest chat prompt's tokens ([`LONGEST_PROMPT`] unless given).
    pub longest_prompt: u64,
    /// chat_eval.py's categorical batches, task by task in the order the script runs them:
    /// each batch's tokens (B × the longest prompt in it). Each batch runs while the one before
    /// it still holds its logits (`logits` is rebound only when the forward returns), and where
    /// the batches' blocks land decides what the allocator reserves, so the order matters; the
    /// data decides it (a measured run knows it). `None`: one task of two batches of `batch` ×
    /// `longest_prompt`, the worst two neighbours can be.
    pub categorical_batches: Option<Vec<Vec<u64>>>,
    /// chat_rl.py's prompts: the pass@k evaluation's, step 0's example's and the later steps'
    /// (a measured run knows them). `None`: all three are `longest_prompt`.
    pub rl_prompts: Option<[u64; 3]>,
}

#[derive(Clone, Copy, PartialEq)]
enum Arg {
    Int,
    Float,
    Str,
}

/// One argparse option: its long name, its short letter if any, and its type.
struct Opt {
    long: &'static str,
    short: Option<char>,
    arg: Arg,
}

const fn opt(long: &'static str, short: Option<char>, arg: Arg) -> Opt {
    Opt { long, short, arg }
}

/// base_eval.py's `add_argument` calls, in order.
const BASE_EVAL: &[Opt] = &[
    opt("eval", None, Arg::Str),
    opt("model-tag", None, Arg::Str),
    opt("step", None, Arg::Int),
    opt("max-per-task", None, Arg::Int),
    opt("device-batch-size", None, Arg::Int),
    opt("split-tokens", None, Arg::Int),
    opt("device-type", None, Arg::Str),
];

/// chat_rl.py's `add_argument` calls, in order.
const CHAT_RL: &[Opt] = &[
    opt("run", None, Arg::Str),
    opt("device-type", None, Arg::Str),
    opt("model-tag", None, Arg::Str),
    opt("model-step", None, Arg::Int),
    opt("num-epochs", None, Arg::Int),
    opt("device-batch-size", None, Arg::Int),
    opt("examples-per-step", None, Arg::Int),
    opt("num-samples", None, Arg::Int),
    opt("max-new-tokens", None, Arg::Int),
    opt("temperature", None, Arg::Float),
    opt("top-k", None, Arg::Int),
    opt("embedding-lr", None, Arg::Float),
    opt("unembedding-lr", None, Arg::Float),
    opt("matrix-lr", None, Arg::Float),
    opt("weight-decay", None, Arg::Float),
    opt("init-lr-frac", None, Arg::Float),
    opt("eval-every", None, Arg::Int),
    opt("eval-examples", None, Arg::Int),
    opt("save-every", None, Arg::Int),
];

/// chat_eval.py's `add_argument` calls, in order.
const CHAT_EVAL: &[Opt] = &[
    opt("source", Some('i'), Arg::Str),
    opt("task-name", Some('a'), Arg::Str),
    opt("temperature", Some('t'), Arg::Float),
    opt("max-new-tokens", Some('m'), Arg::Int),
    opt("num-samples", Some('n'), Arg::Int),
    opt("top-k", Some('k'), Arg::Int),
    opt("batch-size", Some('b'), Arg::Int),
    opt("model-tag", Some('g'), Arg::Str),
    opt("step", Some('s'), Arg::Int),
    opt("max-problems", Some('x'), Arg::Int),
    opt("device-type", None, Arg::Str),
];

fn argparse_error(script: StageScript, key: &str, value: &str, message: String) -> ConfigError {
    ConfigError::new(
        key,
        value,
        Problem::Assertion {
            message: format!("{}: error: {message}", script.file()),
        },
    )
}

fn option_name(o: &Opt) -> String {
    match o.short {
        Some(c) => format!("-{c}/--{}", o.long),
        None => format!("--{}", o.long),
    }
}

/// The option an argument names: `--long` exactly or by a unique prefix (argparse's
/// `allow_abbrev`), `-x` by its letter. `None` for a word that is not an option.
fn find(script: StageScript, head: &str, word: &str) -> Result<Option<&'static Opt>, ConfigError> {
    let opts = script.options();
    if let Some(long) = head.strip_prefix("--") {
        if let Some(o) = opts.iter().find(|o| o.long == long) {
            return Ok(Some(o));
        }
        let matches: Vec<&Opt> = opts.iter().filter(|o| o.long.starts_with(long)).collect();
        return match matches.as_slice() {
            [one] if !long.is_empty() => Ok(Some(one)),
            [] | [_] => Err(argparse_error(
                script,
                word,
                "",
                format!("unrecognized arguments: {word}"),
            )),
            many => {
                let names: Vec<String> = many.iter().map(|o| format!("--{}", o.long)).collect();
                Err(argparse_error(
                    script,
                    word,
                    "",
                    format!("ambiguous option: {word} could match {}", names.join(", ")),
                ))
            }
        };
    }
    let mut letters = head.strip_prefix('-').unwrap_or("").chars();
    match (letters.next(), letters.next()) {
        (Some(c), None) => match opts.iter().find(|o| o.short == Some(c)) {
            Some(o) => Ok(Some(o)),
            None => Err(argparse_error(
                script,
                word,
                "",
                format!("unrecognized arguments: {word}"),
            )),
        },
        _ => Ok(None),
    }
}

/// Splits a command line into (option, value) pairs as argparse does: `--k=v`, `--k v`,
/// `-k v`, `-kv`, `-k=v`.
fn pairs<S: AsRef<str>>(
    script: StageScript,
    args: &[S],
) -> Result<Vec<(&'static Opt, String)>, ConfigError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let word = args[i].as_ref();
        let (head, inline) = if word.starts_with("--") {
            match word.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (word.to_string(), None),
            }
        } else if word.starts_with('-') && word.len() > 2 && !is_number(word) {
            let rest = &word[2..];
            let value = rest.strip_prefix('=').unwrap_or(rest);
            (word[..2].to_string(), Some(value.to_string()))
        } else {
            (word.to_string(), None)
        };
        let Some(o) = find(script, &head, word)? else {
            return Err(argparse_error(
                script,
                word,
                "",
                format!("unrecognized arguments: {word}"),
            ));
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                match args.get(i).map(AsRef::as_ref) {
                    Some(v) if !v.starts_with('-') || is_number(v) => v.to_string(),
                    _ => {
                        return Err(argparse_error(
                            script,
                            o.long,
                            "",
                            format!("argument {}: expected one argument", option_name(o)),
                        ))
                    }
                }
            }
        };
        check_type(script, o, &value)?;
        out.push((o, value));
        i += 1;
    }
    Ok(out)
}

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok()
}

fn check_type(script: StageScript, o: &Opt, value: &str) -> Result<(), ConfigError> {
    let ok = match o.arg {
        Arg::Int => value.trim().parse::<i64>().is_ok(),
        Arg::Float => value.trim().parse::<f64>().is_ok(),
        Arg::Str => true,
    };
    if ok {
        return Ok(());
    }
    let kind = if o.arg == Arg::Int { "int" } else { "float" };
    Err(argparse_error(
        script,
        o.long,
        value,
        format!(
            "argument {}: invalid {kind} value: '{value}'",
            option_name(o)
        ),
    ))
}

impl StageConfig {
    /// `script`'s command line, on the checkpoint `model`'s run wrote, under `world_size`
    /// processes. `model` is the training stage's config (base_train.py for base_eval.py,
    /// chat_sft.py for chat_eval.py -i sft).
    pub fn read<S: AsRef<str>>(
        script: StageScript,
        model: &NanochatConfig,
        world_size: u32,
        args: &[S],
    ) -> Result<StageConfig, ConfigError> {
        let mut model = model.clone();
        model.script = Script::Sft;
        model.world_size = world_size;
        let mut cfg = StageConfig {
            script,
            model,
            batch: 0,
            eval: Eval::Base(BaseModes {
                core: true,
                bpb: true,
                sample: true,
            }),
            split_tokens: 40 * 524_288,
            core_max_tokens: CORE_MAX_TOKENS,
            longest_prompt: LONGEST_PROMPT,
            categorical_batches: None,
            rl_prompts: None,
        };
        match script {
            StageScript::BaseEval => cfg.batch = 32,
            StageScript::ChatEval => {
                cfg.batch = 8;
                cfg.eval = Eval::Chat(ChatTasks {
                    tasks: ALL_CHAT_TASKS.iter().map(|s| s.to_string()).collect(),
                    num_samples: 1,
                    max_new_tokens: 512,
                });
            }
            StageScript::ChatRl => {
                cfg.batch = 8;
                cfg.eval = Eval::Rl(RlSettings {
                    num_samples: 16,
                    max_new_tokens: 256,
                    examples_per_step: 16,
                    eval_examples: 400,
                });
            }
        }
        let mut eval_every = 60;
        let mut source = None;
        for (o, value) in pairs(script, args)? {
            match (script, o.long) {
                (StageScript::BaseEval, "eval") => cfg.eval = Eval::Base(read_modes(&value)?),
                (StageScript::BaseEval, "device-batch-size") => {
                    cfg.batch = u32_in(o.long, &value, 1, 1 << 20)?
                }
                (StageScript::BaseEval, "split-tokens") => {
                    cfg.split_tokens = int_in(o.long, &value, 0, 1 << 40)? as u64
                }
                (StageScript::ChatEval, "batch-size") => {
                    cfg.batch = u32_in(o.long, &value, 1, 1 << 20)?
                }
                (StageScript::ChatEval, "source") => source = Some(value),
                (StageScript::ChatEval, other) => {
                    if let Eval::Chat(c) = &mut cfg.eval {
                        match other {
                            "task-name" => c.tasks = read_tasks(&value)?,
                            "num-samples" => c.num_samples = u32_in(other, &value, 1, 1 << 16)?,
                            "max-new-tokens" => {
                                c.max_new_tokens = u32_in(other, &value, 0, 1 << 20)?
                            }
                            // sampling, the checkpoint's step, how many problems: no memory effect
                            _ => {}
                        }
                    }
                }
                (StageScript::ChatRl, "device-batch-size") => {
                    cfg.batch = u32_in(o.long, &value, 1, 1 << 20)?
                }
                (StageScript::ChatRl, "eval-every") => {
                    eval_every = int_in(o.long, &value, i64::MIN, i64::MAX)?
                }
                (StageScript::ChatRl, other) => {
                    if let Eval::Rl(r) = &mut cfg.eval {
                        match other {
                            "num-samples" => r.num_samples = u32_in(other, &value, 1, 1 << 16)?,
                            "max-new-tokens" => {
                                r.max_new_tokens = u32_in(other, &value, 1, 1 << 20)?
                            }
                            "examples-per-step" => {
                                r.examples_per_step = u32_in(other, &value, 1, 1 << 20)?
                            }
                            "eval-examples" => r.eval_examples = u32_in(other, &value, 0, 1 << 24)?,
                            // sampling, learning rates, epochs, checkpoints: no memory effect
                            _ => {}
                        }
                    }
                }
                // the checkpoint's tag and step, --max-per-task, the device type: no memory effect
                _ => {}
            }
        }
        if let Eval::Rl(r) = &cfg.eval {
            check_rl(r, cfg.batch, eval_every, world_size)?;
        }
        if script == StageScript::ChatEval {
            match source.as_deref() {
                None => {
                    return Err(argparse_error(
                        script,
                        "source",
                        "",
                        "the following arguments are required: -i/--source".into(),
                    ))
                }
                // chat_eval.py loads "sft" or "rl" checkpoints (checkpoint_manager's sources)
                Some("sft" | "rl" | "base") => {}
                Some(other) => {
                    return Err(ConfigError::new(
                        "source",
                        other,
                        Problem::NotOneOf {
                            choices: &["sft", "rl", "base"],
                        },
                    ))
                }
            }
        }
        Ok(cfg)
    }

    /// The training config whose model and batch the stage's sequence builds from.
    pub fn model_config(&self) -> NanochatConfig {
        let mut m = self.model.clone();
        m.device_batch_size = self.batch;
        m
    }

    /// The tokens of the categorical batches, task by task (see
    /// [`StageConfig::categorical_batches`]).
    pub fn categorical_tasks(&self) -> Vec<Vec<u64>> {
        self.categorical_batches
            .clone()
            .unwrap_or_else(|| vec![vec![u64::from(self.batch) * self.longest_prompt; 2]])
    }

    /// chat_rl.py's three prompts (see [`StageConfig::rl_prompts`]).
    pub fn rl_prompt_tokens(&self) -> [u64; 3] {
        self.rl_prompts.unwrap_or([self.longest_prompt; 3])
    }

    /// The batches from the stage's own down to 1 that leave what it computes unchanged: every
    /// one for an evaluation; for chat_rl.py those that give each example as many completions
    /// as the stage's own batch does (`--num-samples // B` sampling steps of B).
    pub fn batches_keeping_work(&self) -> Vec<u32> {
        (1..=self.batch)
            .rev()
            .filter(|&b| match &self.eval {
                Eval::Rl(r) => r.samples(b) == r.samples(self.batch),
                _ => true,
            })
            .collect()
    }

    /// chat_rl.py's forward-backward passes per optimizer step on one rank (its examples ×
    /// `samples / B`); `None` for an evaluation, which takes no step.
    pub fn passes_per_step(&self) -> Option<u64> {
        let Eval::Rl(r) = &self.eval else {
            return None;
        };
        let examples = r.examples_per_step / self.model.world_size.max(1);
        Some(u64::from(examples) * u64::from(r.samples(self.batch) / self.batch.max(1)))
    }

    /// base_eval.py's bpb steps per split: `--split-tokens` rounded down to whole steps of
    /// B·T·world tokens.
    pub fn bpb_steps(&self) -> u64 {
        let per_step = u64::from(self.batch)
            * u64::from(self.model.max_seq_len)
            * u64::from(self.model.world_size.max(1));
        self.split_tokens / per_step.max(1)
    }

    /// This stage on `budget`'s card: the replayed run of one rank, with the card's dtype and
    /// one rank's budget.
    pub fn run_on(&self, budget: &Budget) -> Result<Run, ConfigError> {
        let mut stage = self.clone();
        stage.model = self.model.for_card(budget.gpu.compute_capability);
        let budget = budget.clone().for_ranks(stage.model.world_size);
        let seq = crate::programs::nanochat::sequence::stages::generate(&stage, &budget.gpu);
        Run::replay(seq, stage.model.allocator, budget.allocator_cap())
    }

    /// [`StageConfig::run_on`] with the whole card.
    pub fn run(&self, gpu: &Gpu) -> Result<Run, ConfigError> {
        self.run_on(&Budget::for_gpu(gpu))
    }
}

/// What stops chat_rl.py before its first step, in its own words.
fn check_rl(r: &RlSettings, batch: u32, eval_every: i64, world: u32) -> Result<(), ConfigError> {
    let fail = |key: &str, value: String, message: &str| {
        Err(ConfigError::new(
            key,
            &value,
            Problem::Assertion {
                message: format!("chat_rl.py: {message}"),
            },
        ))
    };
    if eval_every == 0 {
        // `step % args.eval_every`
        return fail(
            "eval-every",
            "0".into(),
            "ZeroDivisionError: integer modulo by zero",
        );
    }
    if !r.examples_per_step.is_multiple_of(world.max(1)) {
        return fail(
            "examples-per-step",
            r.examples_per_step.to_string(),
            &format!(
                "AssertionError: Desired examples per step must be divisible by the number of \
                 ranks ({} on {world} ranks)",
                r.examples_per_step
            ),
        );
    }
    if r.samples(batch) == 0 {
        // no sampling step: get_batch's `max(len(seq) for seq in [])`
        return fail(
            "num-samples",
            r.num_samples.to_string(),
            &format!(
                "ValueError: max() arg is an empty sequence (--num-samples {} is fewer than \
                 --device-batch-size {batch}: no rollouts)",
                r.num_samples
            ),
        );
    }
    Ok(())
}

fn read_modes(value: &str) -> Result<BaseModes, ConfigError> {
    let mut modes = BaseModes {
        core: false,
        bpb: false,
        sample: false,
    };
    let mut invalid = Vec::new();
    for m in value.split(',').map(str::trim) {
        match m {
            "core" => modes.core = true,
            "bpb" => modes.bpb = true,
            "sample" => modes.sample = true,
            other => invalid.push(format!("'{other}'")),
        }
    }
    if !invalid.is_empty() {
        // base_eval.py's own parser.error, word for word
        return Err(argparse_error(
            StageScript::BaseEval,
            "eval",
            value,
            format!(
                "Invalid eval modes: {{{}}}. Valid: {{'core', 'bpb', 'sample'}}",
                invalid.join(", ")
            ),
        ));
    }
    Ok(modes)
}

fn read_tasks(value: &str) -> Result<Vec<String>, ConfigError> {
    let tasks: Vec<String> = value.split('|').map(str::to_string).collect();
    for t in &tasks {
        if !CATEGORICAL.contains(&t.as_str()) && !GENERATIVE.contains(&t.as_str()) {
            // chat_eval.py's task dict lookup fails with a KeyError on the name
            return Err(ConfigError::new(
                "task-name",
                t,
                Problem::Assertion {
                    message: format!("chat_eval.py: KeyError: '{t}'"),
                },
            ));
        }
    }
    Ok(tasks)
}
