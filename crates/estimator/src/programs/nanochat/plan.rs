//! A whole nanochat run planned for the cards a user has: the stages a run script launches
//! (`runs/speedrun.sh`: base_train → base_eval → chat_sft → chat_eval), each stage's peak per
//! rank and verdict, and the script written back so that every stage fits — torchrun's processes
//! set to the GPUs there are, each stage's device batch the largest that fits with its total
//! batch kept (the same training, only slower), `--fp8` dropped where the card has none, and,
//! where no device batch fits, the deepest model that does, said as a different model.
//!
//! Each stage inherits what the stage before it wrote: base_eval.py and chat_sft.py load the
//! base checkpoint (its model; chat_sft.py also its max_seq_len, device batch and total batch,
//! `scripts/chat_sft.py` 96–115), chat_eval.py loads the SFT checkpoint. Lines that are not a
//! stage are kept as they are.

use super::config::{NanochatConfig, Script};
use super::stage::{StageConfig, StageScript, CORE_MAX_TOKENS, LONGEST_PROMPT};
use super::{analyze, fits_on_card};
use crate::engine::events::Phase;
use crate::engine::run::Run;
use crate::error::ConfigError;
use crate::gpu::{Budget, Gpu};
use crate::input::command_line::{processes, shell_words};

/// The scripts a nanochat run script launches that vramfit plans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageKind {
    BaseTrain,
    BaseEval,
    ChatSft,
    ChatEval,
    /// `scripts.chat_rl` on the SFT checkpoint.
    ChatRl,
}

impl StageKind {
    const ALL: [StageKind; 5] = [
        StageKind::BaseTrain,
        StageKind::BaseEval,
        StageKind::ChatSft,
        StageKind::ChatEval,
        StageKind::ChatRl,
    ];

    /// The module `-m` names.
    pub fn module(self) -> &'static str {
        match self {
            StageKind::BaseTrain => "scripts.base_train",
            StageKind::BaseEval => StageScript::BaseEval.module(),
            StageKind::ChatSft => "scripts.chat_sft",
            StageKind::ChatEval => StageScript::ChatEval.module(),
            StageKind::ChatRl => StageScript::ChatRl.module(),
        }
    }

    /// The id of the JSON answer's `program`.
    pub fn id(self) -> &'static str {
        match self {
            StageKind::BaseTrain => "nanochat-base-train",
            StageKind::BaseEval => "nanochat-base-eval",
            StageKind::ChatSft => "nanochat-chat-sft",
            StageKind::ChatEval => "nanochat-chat-eval",
            StageKind::ChatRl => "nanochat-chat-rl",
        }
    }

    fn of_module(m: &str) -> Option<StageKind> {
        StageKind::ALL.into_iter().find(|k| k.module() == m)
    }

    /// The flag that sets the stage's device batch, long and short.
    fn batch_flag(self) -> (&'static str, Option<char>) {
        match self {
            StageKind::ChatEval => ("batch-size", Some('b')),
            _ => ("device-batch-size", None),
        }
    }
}

/// The cards a plan is for: one card's budget, and how many of them.
#[derive(Clone, Debug)]
pub struct Hardware {
    pub budget: Budget,
    pub gpus: u32,
}

/// Why a plan changed a line.
#[derive(Clone, Debug, PartialEq)]
pub enum Why {
    /// torchrun's processes set to the GPUs there are (`python` for one).
    Gpus { gpus: u32 },
    /// `--fp8` dropped: the card has no FP8 matmuls (SM < 8.9).
    NoFp8 { sm: (u8, u8) },
    /// The largest device batch that fits; for a training stage the total batch is kept, so
    /// gradient accumulation makes up the rest.
    LargestBatch { micro_steps: Option<u64> },
    /// No device batch fits the script's model: the deepest that fits, a different model.
    SmallerModel { from: u32, to: u32 },
}

/// One change to one flag of a line (`to: None`: the flag is removed).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub flag: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub why: Why,
}

/// A stage on the hardware: its rank-0 peak, what the allocator needs for it, and whether the
/// card holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub peak_bytes: u128,
    pub need_bytes: u128,
    pub budget_bytes: u128,
    pub fits: bool,
    /// The phase of the peak (`None`: the model build).
    pub phase: Option<Phase>,
    /// Memory over the run on the card, allocated and reserved, as [`PROFILE_POINTS`] maxima
    /// (up to an out-of-memory point): the stage's picture.
    pub profile: Vec<(u128, u128)>,
}

/// Points in a stage's memory-over-the-run picture: enough to show its phases at the width of a
/// table cell.
pub const PROFILE_POINTS: usize = 64;

impl Outcome {
    fn of(run: &Run) -> Outcome {
        Outcome {
            peak_bytes: run.peak_bytes(),
            need_bytes: run.verdict.need_bytes,
            budget_bytes: run.verdict.budget_bytes,
            fits: run.verdict.fits,
            phase: run.peak_at().0,
            profile: run.on_card.envelope(0, PROFILE_POINTS),
        }
    }
}

/// One stage of the script.
#[derive(Clone, Debug, PartialEq)]
pub struct StagePlan {
    /// The line it starts on, from 1.
    pub line: usize,
    pub kind: StageKind,
    /// The command as written (continuation lines joined).
    pub command: String,
    /// The command as the plan writes it.
    pub rewritten: String,
    pub changes: Vec<Change>,
    /// The stage as written (its flags, on the hardware's GPUs).
    pub as_written: Result<Outcome, ConfigError>,
    /// The stage as rewritten.
    pub planned: Result<Outcome, ConfigError>,
    /// base_train.py's training time as planned, where the speed model can say it
    /// ([`super::speed::base_training_seconds`]: its steps at a measured utilisation of the card).
    pub seconds: Option<f64>,
}

/// The whole plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub stages: Vec<StagePlan>,
    /// The script written back: every line kept, each changed command with a comment above it
    /// saying what changed and why.
    pub script: String,
    /// The data-dependent sizes the plan assumed (see [`super::stage`]).
    pub core_max_tokens: u64,
    pub longest_prompt: u64,
}

impl Plan {
    /// Whether every stage fits as planned.
    pub fn all_fit(&self) -> bool {
        self.stages
            .iter()
            .all(|s| matches!(&s.planned, Ok(o) if o.fits))
    }

    /// Whether a stage could not be planned at all (its flags are wrong: the stage says how).
    pub fn any_unplanned(&self) -> bool {
        self.stages.iter().any(|s| s.planned.is_err())
    }
}

/// Whether `gpu` runs FP8 matmuls (`torch._scaled_mm`: SM 8.9 and later; a card known only by
/// its memory is taken at its word).
pub fn has_fp8(gpu: &Gpu) -> bool {
    gpu.is_custom() || gpu.compute_capability >= (8, 9)
}

/// A line of the script split into its launcher and the script's arguments, each word as
/// written (quotes kept), so that a rewritten line keeps `$WANDB_RUN` and quoting intact.
struct Command {
    /// Words before the launcher (`VAR=value`).
    env: Vec<String>,
    /// `torchrun` or `python` and their options, `-m` excluded.
    launcher: Vec<String>,
    kind: StageKind,
    /// The script's arguments as written (without torchrun's `--`).
    args: Vec<String>,
    /// Anything after an unquoted `#`.
    comment: Option<String>,
}

/// Splits a line into words as written: on unquoted whitespace, quotes kept; a word starting
/// with an unquoted `#` begins the comment.
fn raw_words(line: &str) -> (Vec<String>, Option<String>) {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            cur.push(c);
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                cur.push(c);
            }
            (Some(_), c) => cur.push(c),
            (None, '\\') => {
                cur.push(c);
                escaped = true;
            }
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, '#') if cur.is_empty() => return (words, Some(line[i..].to_string())),
            (None, c) if c.is_whitespace() => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    (words, None)
}

/// A word as the shell gives it to the program (quotes removed).
fn unquoted(word: &str) -> String {
    shell_words(word).concat()
}

fn command(line: &str) -> Option<Command> {
    let (words, comment) = raw_words(line);
    let env_end = words
        .iter()
        .position(|w| !w.contains('=') || w.starts_with('-'))?;
    let m = words.iter().position(|w| w == "-m")?;
    let kind = StageKind::of_module(&unquoted(words.get(m + 1)?))?;
    let launcher = words[env_end..m].to_vec();
    let first = launcher.first().map(|w| unquoted(w))?;
    let known = first == "torchrun" || first.starts_with("python");
    if !known {
        return None;
    }
    let mut args = words[m + 2..].to_vec();
    if args.first().is_some_and(|a| a == "--") {
        args.remove(0);
    }
    Some(Command {
        env: words[..env_end].to_vec(),
        launcher,
        kind,
        args,
        comment,
    })
}

impl Command {
    fn args(&self) -> Vec<String> {
        self.args.iter().map(|a| unquoted(a)).collect()
    }

    /// The processes the launcher starts as written (`command_line::processes`: 1 for `python`).
    fn written_gpus(&self) -> Result<u32, ConfigError> {
        let words: Vec<String> = self.launcher.iter().map(|w| unquoted(w)).collect();
        processes(&words)
    }

    /// Sets a flag's value where it is written (every place argparse would read it), or adds
    /// it at the end.
    fn set(&mut self, long: &str, short: Option<char>, value: &str) {
        let mut found = false;
        let mut i = 0;
        while i < self.args.len() {
            let a = unquoted(&self.args[i]);
            if a.starts_with(&format!("--{long}=")) {
                self.args[i] = format!("--{long}={value}");
                found = true;
            } else if a == format!("--{long}") || short.is_some_and(|s| a == format!("-{s}")) {
                if i + 1 < self.args.len() {
                    self.args[i + 1] = value.to_string();
                    found = true;
                }
                i += 1;
            } else if let Some(s) = short {
                if a.starts_with(&format!("-{s}")) && !a.starts_with("--") && a.len() > 2 {
                    self.args[i] = format!("-{s}{value}");
                    found = true;
                }
            }
            i += 1;
        }
        if !found {
            match short {
                Some(s) => {
                    self.args.push(format!("-{s}"));
                    self.args.push(value.to_string());
                }
                None => self.args.push(format!("--{long}={value}")),
            }
        }
    }

    /// Removes a switch (`--fp8`).
    fn remove(&mut self, long: &str) {
        self.args.retain(|a| unquoted(a) != format!("--{long}"));
    }

    /// The line as it launches: with `gpus` set, torchrun's process count becomes that many on one
    /// node (its other options kept), or `python -m` for one; without, the launcher as written.
    fn line(&self, gpus: Option<u32>) -> String {
        let mut words = self.env.clone();
        let first = unquoted(&self.launcher[0]);
        match gpus {
            None => {
                words.extend(self.launcher.iter().cloned());
                words.extend(["-m".to_string(), self.kind.module().to_string()]);
                if first == "torchrun" {
                    words.push("--".to_string());
                }
            }
            Some(n) if n <= 1 => {
                let python = if first.starts_with("python") {
                    self.launcher[0].clone()
                } else {
                    "python".to_string()
                };
                words.push(python);
                words.extend(["-m".to_string(), self.kind.module().to_string()]);
            }
            Some(n) => {
                if first == "torchrun" {
                    // the counts as written (`--nproc_per_node`, `--nnodes`, their values) go
                    let mut skip = false;
                    for w in &self.launcher {
                        if std::mem::take(&mut skip) {
                            continue;
                        }
                        let u = unquoted(w);
                        let flag = u.split('=').next().unwrap_or("");
                        if matches!(flag, "--nproc_per_node" | "--nproc-per-node" | "--nnodes") {
                            skip = !u.contains('=');
                        } else {
                            words.push(w.clone());
                        }
                    }
                } else {
                    words.extend(["torchrun".to_string(), "--standalone".to_string()]);
                }
                words.push(format!("--nproc_per_node={n}"));
                words.extend(["-m".to_string(), self.kind.module().to_string()]);
                words.push("--".to_string());
            }
        }
        words.extend(self.args.iter().cloned());
        let mut line = words.join(" ");
        if let Some(c) = &self.comment {
            line.push(' ');
            line.push_str(c);
        }
        line
    }
}

fn outcome_of_training(cfg: &NanochatConfig, budget: &Budget) -> Result<Outcome, ConfigError> {
    Ok(Outcome::of(&analyze(cfg, budget)?.run))
}

fn outcome_of_stage(stage: &StageConfig, budget: &Budget) -> Result<Outcome, ConfigError> {
    Ok(Outcome::of(&stage.run_on(budget)?))
}

/// Device batches from `from` down to 1 that keep `cfg`'s total batch (B·T·world divides it).
fn batches_keeping_total(cfg: &NanochatConfig, from: u32) -> Vec<u32> {
    let per = u64::from(cfg.max_seq_len) * u64::from(cfg.world_size.max(1));
    let total = cfg.total_batch_tokens();
    (1..=from)
        .rev()
        .filter(|&b| total.is_multiple_of(u64::from(b) * per))
        .collect()
}

/// The largest of `batches` at which `cfg` (with that batch) fits.
fn largest_fitting(cfg: &NanochatConfig, budget: &Budget, batches: &[u32]) -> Option<u32> {
    batches.iter().copied().find(|&b| {
        let mut c = cfg.clone();
        c.device_batch_size = b;
        fits_on_card(&c, budget)
    })
}

/// chat_sft.py's config on the checkpoint of `base`: its model, and the max_seq_len, device
/// batch and total batch it inherits unless its own flags say otherwise.
fn sft_config(base: &NanochatConfig, args: &[String]) -> Result<NanochatConfig, ConfigError> {
    let inherited = [
        format!("--depth={}", base.depth),
        format!("--aspect-ratio={}", base.aspect_ratio),
        format!("--head-dim={}", base.head_dim),
        format!("--window-pattern={}", base.window_pattern),
        format!("--vocab-size={}", base.vocab_size),
        format!("--max-seq-len={}", base.max_seq_len),
        format!("--device-batch-size={}", base.device_batch_size),
        format!("--total-batch-size={}", base.total_batch_tokens()),
    ];
    let mut words: Vec<String> = inherited.to_vec();
    words.extend(args.iter().cloned());
    let mut cfg = NanochatConfig::from_script_args(Script::Sft, &words)?;
    cfg.world_size = base.world_size;
    cfg.dtype = base.dtype;
    cfg.attention = base.attention;
    cfg.validate()?;
    Ok(cfg)
}

/// What the plan carries from stage to stage.
struct Carried {
    /// The base run as written and as planned.
    base: Option<(NanochatConfig, NanochatConfig)>,
    /// The SFT run as written and as planned.
    sft: Option<(NanochatConfig, NanochatConfig)>,
}

/// Plans `script` for `hw`, with the data-dependent sizes of [`super::stage`] (`None`: their
/// defaults).
pub fn plan(
    script: &str,
    hw: &Hardware,
    core_max_tokens: Option<u64>,
    longest_prompt: Option<u64>,
) -> Plan {
    let core_max_tokens = core_max_tokens.unwrap_or(CORE_MAX_TOKENS);
    let longest_prompt = longest_prompt.unwrap_or(LONGEST_PROMPT);
    let mut carried = Carried {
        base: None,
        sft: None,
    };
    let mut stages = Vec::new();
    let mut out = String::new();
    let lines: Vec<&str> = script.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        // a command continued over several lines is one command
        let start = i;
        let mut joined = lines[i].to_string();
        while joined.ends_with('\\') && i + 1 < lines.len() {
            joined.pop();
            i += 1;
            joined.push(' ');
            joined.push_str(lines[i].trim_start());
        }
        i += 1;
        let original = lines[start..i].join("\n");
        let Some(cmd) = command(&joined) else {
            out.push_str(&original);
            out.push('\n');
            continue;
        };
        let stage = plan_stage(
            cmd,
            start + 1,
            &joined,
            hw,
            &mut carried,
            (core_max_tokens, longest_prompt),
        );
        if stage.changes.is_empty() {
            out.push_str(&original);
        } else {
            let indent: String = joined.chars().take_while(|c| c.is_whitespace()).collect();
            out.push_str(&format!("{indent}# vramfit: {}\n", comment(&stage.changes)));
            out.push_str(&indent);
            out.push_str(&stage.rewritten);
        }
        out.push('\n');
        stages.push(stage);
    }
    if !script.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    Plan {
        stages,
        script: out,
        core_max_tokens,
        longest_prompt,
    }
}

/// The comment above a changed line: each change and why, in English (the script's language).
pub fn comment(changes: &[Change]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in changes {
        let what = match (&c.from, &c.to) {
            (Some(f), _) if c.why == (Why::Gpus { gpus: 1 }) => {
                format!("torchrun --nproc_per_node={f} → python")
            }
            (_, None) => format!("--{} dropped", c.flag),
            (Some(f), Some(t)) => format!("{} {f} → {t}", c.flag),
            (None, Some(t)) => format!("{} {t}", c.flag),
        };
        let why = match &c.why {
            Why::Gpus { gpus: 1 } => "one GPU".to_string(),
            Why::Gpus { gpus } => format!("{gpus} GPUs"),
            Why::NoFp8 { sm } => format!("no FP8 matmuls on SM {}.{}", sm.0, sm.1),
            Why::LargestBatch {
                micro_steps: Some(m),
            } => format!("the largest that fits; total batch kept ({m} micro-steps)"),
            Why::LargestBatch { micro_steps: None } => "the largest that fits".to_string(),
            Why::SmallerModel { from, to } => format!(
                "no device batch fits depth {from}: depth {to} is the deepest that does \
                 (a different, smaller model)"
            ),
        };
        parts.push(format!("{what} ({why})"));
    }
    parts.join("; ")
}

/// One stage's planning: its line being rewritten, the changes so far, and what it decides.
struct Planner<'a> {
    cmd: Command,
    changes: Vec<Change>,
    hw: &'a Hardware,
    /// The data-dependent sizes (see [`super::stage`]).
    core_max_tokens: u64,
    longest_prompt: u64,
}

/// A stage as written and as planned.
type Outcomes = (Result<Outcome, ConfigError>, Result<Outcome, ConfigError>);

fn both(e: ConfigError) -> Outcomes {
    (Err(e.clone()), Err(e))
}

impl Planner<'_> {
    fn budget(&self) -> &Budget {
        &self.hw.budget
    }

    /// The stage's batch flag set from `from` to `to` (nothing when they are equal), with the
    /// micro-steps a training stage's total batch now takes.
    fn set_batch(&mut self, from: u32, to: u32, micro_steps: Option<u64>) {
        if from == to {
            return;
        }
        let (long, short) = self.cmd.kind.batch_flag();
        self.cmd.set(long, short, &to.to_string());
        self.changes.push(Change {
            flag: long.into(),
            from: Some(from.to_string()),
            to: Some(to.to_string()),
            why: Why::LargestBatch { micro_steps },
        });
    }

    /// base_train.py: `--fp8` dropped without FP8 matmuls, then the largest device batch that
    /// fits the script's model with its total batch, else the deepest model that fits at some
    /// batch. Returns its outcomes and the base run as written and as planned.
    fn base_train(&mut self) -> (Outcomes, Option<(NanochatConfig, NanochatConfig)>) {
        let parsed = NanochatConfig::from_script_args(Script::Base, &self.cmd.args());
        let mut written = match parsed {
            Ok(c) => c,
            Err(e) => return (both(e), None),
        };
        written.world_size = self.hw.gpus;
        if written.core_metric_every > 0 {
            written.core_max_tokens = self.core_max_tokens;
        }
        let as_written = outcome_of_training(&written, self.budget());
        let mut p = written.clone();
        if p.fp8 && !has_fp8(&self.budget().gpu) {
            p.fp8 = false;
            self.cmd.remove("fp8");
            self.changes.push(Change {
                flag: "fp8".into(),
                from: Some("True".into()),
                to: None,
                why: Why::NoFp8 {
                    sm: self.budget().gpu.compute_capability,
                },
            });
        }
        let written_b = p.device_batch_size;
        let fitting = (1..=p.depth).rev().find_map(|d| {
            let mut c = p.clone();
            c.depth = d;
            let batches = batches_keeping_total(&c, written_b);
            largest_fitting(&c, self.budget(), &batches).map(|b| (d, b))
        });
        if let Some((d, b)) = fitting {
            if d != p.depth {
                self.changes.push(Change {
                    flag: "depth".into(),
                    from: Some(p.depth.to_string()),
                    to: Some(d.to_string()),
                    why: Why::SmallerModel {
                        from: p.depth,
                        to: d,
                    },
                });
                self.cmd.set("depth", None, &d.to_string());
                p.depth = d;
            }
            p.device_batch_size = b;
            self.set_batch(written_b, b, Some(p.grad_accum_steps()));
        }
        let planned = outcome_of_training(&p, self.budget());
        ((as_written, planned), Some((written, p)))
    }

    /// chat_sft.py on the base run's checkpoint (as written and as planned): the largest device
    /// batch that fits, from the one it inherits (or its own flag's), the total kept.
    fn chat_sft(
        &mut self,
        base: &(NanochatConfig, NanochatConfig),
    ) -> (Outcomes, Option<(NanochatConfig, NanochatConfig)>) {
        let args = self.cmd.args();
        let (written, mut p) = match (sft_config(&base.0, &args), sft_config(&base.1, &args)) {
            (Ok(w), Ok(p)) => (w, p),
            (Err(e), _) | (_, Err(e)) => return (both(e), None),
        };
        let as_written = outcome_of_training(&written, self.budget());
        let from = p.device_batch_size;
        let batches = batches_keeping_total(&p, from);
        if let Some(b) = largest_fitting(&p, self.budget(), &batches) {
            p.device_batch_size = b;
        }
        self.set_batch(from, p.device_batch_size, Some(p.grad_accum_steps()));
        let planned = outcome_of_training(&p, self.budget());
        ((as_written, planned), Some((written, p)))
    }

    /// base_eval.py, chat_eval.py or chat_rl.py on `model`'s checkpoint (as written and as
    /// planned): the largest batch that fits of those that leave the stage's work unchanged
    /// ([`StageConfig::batches_keeping_work`]), from the script's.
    fn evaluation(
        &mut self,
        script: StageScript,
        model: &(NanochatConfig, NanochatConfig),
    ) -> Outcomes {
        let args = self.cmd.args();
        let read = |m: &NanochatConfig| {
            StageConfig::read(script, m, self.hw.gpus, &args).map(|mut s| {
                s.core_max_tokens = self.core_max_tokens;
                s.longest_prompt = self.longest_prompt;
                s
            })
        };
        let (written, mut p) = match (read(&model.0), read(&model.1)) {
            (Ok(w), Ok(p)) => (w, p),
            (Err(e), _) | (_, Err(e)) => return both(e),
        };
        let as_written = outcome_of_stage(&written, self.budget());
        let from = p.batch;
        let fitting = p.batches_keeping_work().into_iter().find(|&b| {
            let mut s = p.clone();
            s.batch = b;
            // the verdict alone: a candidate needs no picture of its run
            s.run_on(self.budget()).is_ok_and(|r| r.verdict.fits)
        });
        if let Some(b) = fitting {
            p.batch = b;
            self.set_batch(from, b, p.passes_per_step());
        }
        (as_written, outcome_of_stage(&p, self.budget()))
    }
}

/// A training config of base_train.py's defaults on `gpus` processes, as written and as planned:
/// the model a stage loads when the script trains none before it.
fn default_base(gpus: u32) -> (NanochatConfig, NanochatConfig) {
    let mut c = NanochatConfig::for_script(Script::Base);
    c.world_size = gpus;
    (c.clone(), c)
}

fn plan_stage(
    cmd: Command,
    line: usize,
    written: &str,
    hw: &Hardware,
    carried: &mut Carried,
    sizes: (u64, u64),
) -> StagePlan {
    let kind = cmd.kind;
    let mut changes = Vec::new();
    let written_gpus = match cmd.written_gpus() {
        Ok(n) => n,
        // a launcher count that is not one: the line is kept, its error said
        Err(e) => {
            let (as_written, planned) = both(e);
            return StagePlan {
                line,
                kind,
                command: written.trim().to_string(),
                rewritten: written.trim_start().to_string(),
                changes,
                as_written,
                planned,
                seconds: None,
            };
        }
    };
    if written_gpus != hw.gpus {
        changes.push(Change {
            flag: "nproc_per_node".into(),
            from: Some(written_gpus.to_string()),
            to: Some(hw.gpus.to_string()),
            why: Why::Gpus { gpus: hw.gpus },
        });
    }
    let mut planner = Planner {
        cmd,
        changes,
        hw,
        core_max_tokens: sizes.0,
        longest_prompt: sizes.1,
    };
    let base = || {
        carried
            .base
            .clone()
            .unwrap_or_else(|| default_base(hw.gpus))
    };
    let mut seconds = None;
    let (as_written, planned) = match kind {
        StageKind::BaseTrain => {
            let (outcomes, configs) = planner.base_train();
            if let Some((w, p)) = configs {
                let on_card = p.for_card(hw.budget.gpu.compute_capability);
                seconds = Some(super::speed::base_training_seconds(
                    &on_card,
                    &hw.budget.gpu,
                ));
                carried.base = Some((w, p));
            }
            outcomes
        }
        StageKind::ChatSft => {
            let (outcomes, configs) = planner.chat_sft(&base());
            carried.sft = configs.or(carried.sft.take());
            outcomes
        }
        StageKind::BaseEval => planner.evaluation(StageScript::BaseEval, &base()),
        StageKind::ChatEval | StageKind::ChatRl => {
            let script = if kind == StageKind::ChatEval {
                StageScript::ChatEval
            } else {
                StageScript::ChatRl
            };
            let model = carried.sft.clone().unwrap_or_else(base);
            planner.evaluation(script, &model)
        }
    };
    // the depth the base run changed to is the checkpoint every later stage loads: no flag of
    // theirs says it, so their lines need no change for it
    let rewritten = if planner.changes.is_empty() {
        written.trim_start().to_string()
    } else {
        let count_changed = planner
            .changes
            .iter()
            .any(|c| matches!(c.why, Why::Gpus { .. }));
        planner.cmd.line(count_changed.then_some(hw.gpus))
    };
    StagePlan {
        line,
        kind,
        command: written.trim().to_string(),
        rewritten,
        changes: planner.changes,
        as_written,
        planned,
        seconds,
    }
}

/// The stages of `runs/speedrun.sh` at 92d63d4, its commands as written there (the tokenizer,
/// dataset and setup lines around them are not stages): what `vramfit plan --speedrun` and the
/// page's list start from.
pub const SPEEDRUN: &str = "\
# runs/speedrun.sh (karpathy/nanochat 92d63d4): its stages, for 8 × H100 80 GB
torchrun --standalone --nproc_per_node=8 -m scripts.base_train -- --depth=24 --target-param-data-ratio=8 --device-batch-size=16 --fp8 --run=$WANDB_RUN
torchrun --standalone --nproc_per_node=8 -m scripts.base_eval -- --device-batch-size=16
torchrun --standalone --nproc_per_node=8 -m scripts.chat_sft -- --run=$WANDB_RUN
torchrun --standalone --nproc_per_node=8 -m scripts.chat_eval -- -i sft
";
