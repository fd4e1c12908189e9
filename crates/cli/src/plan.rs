//! `vramfit plan SCRIPT --gpu NAME --gpus N`: a whole nanochat run (`runs/speedrun.sh`) planned
//! for the cards a user has — each stage's peak per rank and verdict, and the script written
//! back so that every stage fits (`estimator::programs::nanochat::plan`).

use std::io::Read;
use std::process::ExitCode;

use estimator::programs::nanochat::plan::{self, Hardware, Outcome, Plan, StagePlan, SPEEDRUN};
use vramfit_i18n::format::{bytes, duration};
use vramfit_i18n::{fill, CliLang};

use crate::{budget_for, config_error, emit, fail};

/// A plan's own words, taken out of the command line before vramfit's options are read.
struct PlanArgs {
    /// The script: a file, `-` for standard input, or `--speedrun`'s stages.
    source: Option<String>,
    gpus: u32,
    core_max_tokens: Option<u64>,
    longest_prompt: Option<u64>,
    /// What is left for vramfit's option reader (`--gpu`, `--vram-gib`, `--json`, `--lang`, …).
    rest: Vec<String>,
}

/// A whole number from `min` to `max`, or why not.
fn number(flag: &str, v: Option<&String>, min: u64, max: u64) -> Result<u64, String> {
    let text = v.ok_or_else(|| format!("{flag} needs a value"))?;
    text.parse()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{flag}={text} is not allowed: a whole number from {min} to {max}"))
}

fn plan_args(argv: &[String]) -> Result<PlanArgs, String> {
    let mut a = PlanArgs {
        source: None,
        gpus: 1,
        core_max_tokens: None,
        longest_prompt: None,
        rest: Vec::new(),
    };
    let mut i = 0;
    while i < argv.len() {
        let w = &argv[i];
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (w.as_str(), None),
        };
        let mut value = || -> Option<String> {
            inline.clone().or_else(|| {
                i += 1;
                argv.get(i).cloned()
            })
        };
        match name {
            // (1024 fits a u32)
            "--gpus" => a.gpus = number("--gpus", value().as_ref(), 1, 1024)? as u32,
            "--core-max-tokens" => {
                a.core_max_tokens = Some(number(name, value().as_ref(), 0, 1 << 24)?)
            }
            "--longest-prompt" => {
                a.longest_prompt = Some(number(name, value().as_ref(), 1, 1 << 20)?)
            }
            "--speedrun" => a.source = Some(String::new()),
            "-" => a.source = Some("-".into()),
            _ if !w.starts_with('-') && a.source.is_none() && !is_option_value(argv, i) => {
                a.source = Some(w.clone())
            }
            _ => a.rest.push(w.clone()),
        }
        i += 1;
    }
    Ok(a)
}

/// Whether `argv[i]` is the value of the vramfit option before it (`--gpu rtx4090`).
fn is_option_value(argv: &[String], i: usize) -> bool {
    i > 0
        && matches!(
            argv[i - 1].as_str(),
            "--gpu" | "--vram-gib" | "--context-gib" | "--other-gib" | "--lang" | "--gpu-index"
        )
}

fn read_script(source: &str) -> Result<String, String> {
    if source.is_empty() {
        return Ok(SPEEDRUN.to_string());
    }
    let mut text = String::new();
    if source == "-" {
        std::io::stdin()
            .take(1 << 20)
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read the script from standard input: {e}"))?;
    } else {
        let f = std::fs::File::open(source).map_err(|e| format!("cannot read {source}: {e}"))?;
        f.take(1 << 20)
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read {source}: {e}"))?;
    }
    Ok(text)
}

pub fn main(argv: &[String]) -> ExitCode {
    let pa = match plan_args(argv) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let Some(source) = pa.source.clone() else {
        return fail(
            "vramfit plan needs a run script: a file, - for standard input, or --speedrun",
        );
    };
    let args = match crate::args::parse(&pa.rest) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let tr = &if args.json {
        CliLang::en()
    } else {
        crate::language(&args).cli()
    };
    vramfit_i18n::format::use_separators(&tr.bar_words());
    let budget = match budget_for(&args, tr, None) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let script = match read_script(&source) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let hw = Hardware {
        budget,
        gpus: pa.gpus,
    };
    let p = plan::plan(&script, &hw, pa.core_max_tokens, pa.longest_prompt);
    if p.stages.is_empty() {
        return fail(
            "no nanochat stage in the script (torchrun … -m scripts.base_train, scripts.base_eval, \
             scripts.chat_sft, scripts.chat_eval)",
        );
    }
    let name = if source.is_empty() {
        "runs/speedrun.sh"
    } else {
        &source
    };
    if args.json {
        return emit(&format!("{}\n", json(&p, &hw)));
    }
    emit(&text(&p, &hw, name, tr))
}

fn outcome_json(o: &Result<Outcome, estimator::ConfigError>) -> serde_json::Value {
    match o {
        Ok(o) => serde_json::json!({
            "peak_bytes": o.peak_bytes as u64,
            "need_bytes": o.need_bytes as u64,
            "usable_bytes": o.budget_bytes as u64,
            "fits": o.fits,
            "phase": o.phase.map(|p| p.id()),
        }),
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    }
}

fn json(p: &Plan, hw: &Hardware) -> serde_json::Value {
    let stages: Vec<serde_json::Value> = p
        .stages
        .iter()
        .map(|s| {
            let planned = outcome_json(&s.planned);
            let mut o = serde_json::json!({
                "line": s.line,
                "command": s.command,
                "program": s.kind.id(),
                "rewritten": s.rewritten,
                "changes": s.changes.iter().map(|c| serde_json::json!({
                    "flag": c.flag,
                    "from": c.from,
                    "to": c.to,
                    "why": plan::comment(std::slice::from_ref(c)),
                })).collect::<Vec<_>>(),
                "as_written": outcome_json(&s.as_written),
                "training_seconds": s.seconds,
            });
            for (k, v) in planned.as_object().into_iter().flatten() {
                o[k] = v.clone();
            }
            o
        })
        .collect();
    serde_json::json!({
        "gpu": hw.budget.gpu.id,
        "gpus": hw.gpus,
        "assumed": {
            "core_max_tokens": p.core_max_tokens,
            "longest_prompt": p.longest_prompt,
        },
        "all_fit": p.all_fit(),
        "stages": stages,
        "script": p.script,
    })
}

fn outcome_text(o: &Result<Outcome, estimator::ConfigError>, tr: &CliLang) -> String {
    match o {
        Ok(o) => {
            let word = if o.fits {
                tr.page.plan_fits
            } else {
                tr.page.plan_oom
            };
            let short = if o.fits {
                String::new()
            } else {
                let by = bytes(o.need_bytes.saturating_sub(o.budget_bytes));
                format!(" ({})", fill(tr.page.plan_short, &[("short", &by)]))
            };
            format!("{} {word}{short}", bytes(o.peak_bytes))
        }
        Err(e) => config_error(tr, e),
    }
}

/// The planned outcome, with base_train.py's training time where the speed model gives one.
fn planned_text(s: &StagePlan, tr: &CliLang) -> String {
    let mut text = outcome_text(&s.planned, tr);
    if let (Some(t), Ok(_)) = (s.seconds, &s.planned) {
        text += ", ";
        text += &fill(tr.page.plan_time, &[("time", &duration(t))]);
    }
    text
}

fn stage_text(s: &StagePlan, tr: &CliLang) -> String {
    let mut out = fill(
        tr.cli.plan_stage,
        &[
            ("line", &format!("{:<4}", s.line)),
            ("module", &format!("{:<18}", s.kind.module())),
            ("written", &outcome_text(&s.as_written, tr)),
            ("planned", &planned_text(s, tr)),
        ],
    );
    out.push('\n');
    if !s.changes.is_empty() {
        let words = vramfit_i18n::plan_text::changes(tr.page, &s.changes);
        out += &format!("          {words}\n");
    }
    out
}

fn text(p: &Plan, hw: &Hardware, name: &str, tr: &CliLang) -> String {
    let card = &hw.budget.gpu.name;
    let gpus = hw.gpus.to_string();
    let mut out = fill(
        tr.cli.plan_head,
        &[("script", name), ("gpus", &gpus), ("card", card)],
    );
    out.push('\n');
    out += &fill(
        tr.cli.plan_assumed,
        &[
            ("core", &p.core_max_tokens.to_string()),
            ("prompt", &p.longest_prompt.to_string()),
        ],
    );
    out += "\n\n";
    for s in &p.stages {
        out += &stage_text(s, tr);
    }
    out.push('\n');
    out += vramfit_i18n::plan_text::summary(tr.page, p);
    out += "\n\n";
    out += &fill(tr.cli.plan_script, &[("gpus", &gpus), ("card", card)]);
    out += "\n\n";
    out += &p.script;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}
