//! # vramfit's answers as JSON
//!
//! The one JSON contract of vramfit, shared by the CLI's `--json` and the npm package
//! (crates/js): for each training program the answer with its field names in their documented
//! order (`nanogpt`, `nanochat`, `build_nanogpt`), the parts every program shares (`common`),
//! and what a caller needs to ask a question as data: a JSON config read into the program's own
//! flags ([`read_config`]), a card ([`Card`]), and the answer for a program and its flags
//! ([`answer`]).

pub mod common;
pub mod snapshot;

use estimator::error::ConfigError;
use estimator::input::json_config::{self, Setting};
use estimator::oom::{Diagnosis, OomMessage};
use estimator::programs::{
    config_from_flags, Configs, Program, ProgramAnalysis, ProgramConfig, ProgramFixes,
};
use estimator::{gpu, Budget};
use serde_json::Value;

use common::value;

/// A refused question: the message the CLI prints, and the setting it is about.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub message: String,
    /// The key as the user gave it (`batch_size`, `depth`, `gpu`, `config`).
    pub field: Option<String>,
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Failure {
        Failure {
            message: e.to_string(),
            field: Some(e.key),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A parsed JSON value as the estimator's [`Setting`] tree.
pub fn setting(v: &Value) -> Setting {
    match v {
        Value::Null => Setting::Null,
        Value::Bool(b) => Setting::Bool(*b),
        Value::Number(n) => Setting::Number(n.to_string()),
        Value::String(s) => Setting::Text(s.clone()),
        Value::Array(_) => Setting::List,
        Value::Object(m) => {
            Setting::Object(m.iter().map(|(k, v)| (k.clone(), setting(v))).collect())
        }
    }
}

/// A JSON config's text (`run.json`) as its program (its `program`, else `default`) and that
/// program's flags.
pub fn read_config(text: &str, default: Program) -> Result<(Program, Vec<String>), Failure> {
    let root: Value = serde_json::from_str(text).map_err(|e| Failure {
        message: format!("the JSON config could not be read: {e}"),
        field: Some("config".into()),
    })?;
    Ok(json_config::to_args(&setting(&root), default)?)
}

/// The card and what else holds it, as the CLI's `--gpu`, `--vram-gib`, `--context-gib` and
/// `--other-gib` give it (and the npm package's `gpu` argument).
#[derive(Clone, Debug, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Card {
    /// A preset's id or name (`rtx3060`, `RTX 4090`); `None` for a custom card of `vram_gib`,
    /// or without it the default (an H100).
    pub gpu: Option<String>,
    pub vram_gib: Option<f64>,
    pub context_gib: Option<f64>,
    pub other_gib: Option<f64>,
}

/// The command line's words for a card name no preset has (the npm package names its own way out).
pub fn unknown_gpu(name: &str) -> String {
    format!(
        "unknown GPU '{}': see --list-gpus, or give --vram-gib for a custom card",
        estimator::error::echo(name)
    )
}

impl Card {
    /// The allocator's budget on this card.
    pub fn budget(&self) -> Result<Budget, Failure> {
        let preset = match self.gpu.as_deref() {
            Some(name) => Some(gpu::find(name).ok_or_else(|| Failure {
                message: unknown_gpu(name),
                field: Some("gpu".into()),
            })?),
            None => None,
        };
        let mut budget = Budget::for_card(preset, self.vram_gib)?;
        if let Some(x) = self.context_gib {
            budget = budget.with_context_gib(x)?;
        }
        if let Some(x) = self.other_gib {
            budget = budget.with_other_gib(x)?;
        }
        Ok(budget)
    }
}

/// The answer's keys that come from the fix searches (each program has some of them).
pub const FIX_KEYS: &[&str] = &[
    "fixes",
    "largest_batch_size_that_fits",
    "iter_seconds",
    "largest_device_batch_size_that_fits",
    "largest_core_example_that_fits",
    "largest_B_that_fits",
];

/// One question about a run, answered: what the answer is made of.
pub struct Asked<'a> {
    pub config: &'a ProgramConfig,
    pub analysis: &'a ProgramAnalysis,
    /// The ranked fixes, where they were searched.
    pub fixes: Option<&'a ProgramFixes>,
    /// The card asked about.
    pub budget: &'a Budget,
    /// A pasted out-of-memory message, and which tensor of this run it names.
    pub message: Option<(&'a OomMessage, Option<Diagnosis>)>,
    /// What the command line read but did not apply (train.py's config-file lines).
    pub skipped: &'a [String],
    /// The speed model's utilisation.
    pub mfu: f64,
}

/// The answer as the CLI's `--json` prints it ([`common::Answer`]), as text: written straight
/// from the typed answer, every float is the shortest text that reads back as itself (a
/// `Value` read back from text on wasm32 can be off by one in the last place).
pub fn to_json(ask: &Asked) -> String {
    let a = ask.analysis;
    let program = a.program();
    // the card as the verdict counted it (one rank's under torchrun: NCCL's memory is out)
    let card = a.card(ask.budget);
    let en = vramfit_i18n::en();
    let fixes = match ask.fixes {
        Some(f) => {
            let views = ask.config.fixes_view(f, card.other_bytes);
            let views = views.map(|v| v.fixes).unwrap_or_default();
            views
                .iter()
                .zip(a.fix_answers(f, ask.budget))
                .map(|(v, own)| {
                    let (title, why) = vramfit_i18n::fix_text::fix_words(en, program, &v.words);
                    common::Fix {
                        kind: v.words.kind,
                        title,
                        why,
                        impact: v.impact.id(),
                        peak_bytes: v.peak_bytes,
                        saving_bytes: v.saving_bytes,
                        fits: v.fits,
                        own,
                    }
                })
                .collect()
        }
        None => Vec::new(),
    };
    let cli = vramfit_i18n::cli_en();
    let warnings = a
        .notes()
        .iter()
        .map(|n| cli.report_word(program, &format!("notes.{n}")).to_string())
        .chain(ask.skipped.iter().cloned())
        .collect();
    let (peak_phase, peak_stage, peak_micro_step) = a.peak_at();
    common::text(&common::Answer {
        program: program.id(),
        script: program.script(),
        own: a.answer(ask.fixes, ask.budget, ask.mfu),
        peak_phase,
        peak_stage,
        peak_micro_step,
        components_bytes: a.components(),
        terms_bytes: a.peak_terms(),
        gpu: common::GpuUse::new(card, &a.verdict),
        verdict: a.verdict,
        simulated_oom: common::SimulatedOom::of(a),
        fixes,
        oom: ask.message.as_ref().map(|(m, _)| common::OomReading::of(m)),
        diagnosis: ask
            .message
            .as_ref()
            .and_then(|(m, d)| Some(common::DiagnosisAnswer::of(program, m, d.as_ref()?))),
        warnings,
    })
}

/// The answer for `program` run with `args` (its own flags, or train.py's `--key=value`
/// overrides) on `budget`, as the CLI's `--json` prints it; `with_fixes: false` leaves the fix
/// searches out (the keys they give, [`FIX_KEYS`], are then empty: a caller drops them).
pub fn answer(
    program: Program,
    args: &[String],
    budget: &Budget,
    with_fixes: bool,
) -> Result<String, Failure> {
    let config = config_from_flags(program, args)?;
    let analysis = config.analyze(budget)?;
    let mfu = estimator::speed::DEFAULT_MFU;
    let fixes = with_fixes.then(|| config.rank_fixes(budget, mfu)).flatten();
    Ok(to_json(&Asked {
        config: &config,
        analysis: &analysis,
        fixes: fixes.as_ref(),
        budget,
        message: None,
        skipped: &[],
        mfu,
    }))
}

/// A program's settings at their defaults, under the names its config takes.
pub fn defaults(program: Program) -> Value {
    value(Configs::default().of(program).settings())
}

/// The GPU presets, as `vramfit --list-gpus` lists them.
pub fn gpus() -> Value {
    value(gpu::PRESETS)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer read back as JSON.
    fn json(program: Program, args: &[String], budget: &Budget) -> Value {
        serde_json::from_str(&answer(program, args, budget, false).unwrap()).unwrap()
    }

    #[test]
    fn a_json_config_is_answered_like_its_flags() {
        let (program, args) = read_config(
            r#"{"program": "nanochat", "depth": 6, "device_batch_size": 4}"#,
            Program::NanoGpt,
        )
        .unwrap();
        let budget = Card::default().budget().unwrap();
        let from_json = json(program, &args, &budget);
        let flags = ["--depth=6".to_string(), "--device-batch-size=4".to_string()];
        let from_flags = json(Program::Nanochat, &flags, &budget);
        assert_eq!(from_json, from_flags);
        assert_eq!(from_json["config"]["device_batch_size"], 4);
    }

    #[test]
    fn bad_json_and_bad_values_name_their_field() {
        let e = read_config("{\"batch_size\": 8,}", Program::NanoGpt).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("config"));
        assert!(
            e.message.starts_with("the JSON config could not be read"),
            "{e}"
        );
        let budget = Card::default().budget().unwrap();
        let (p, args) = read_config(r#"{"batch_size": 0}"#, Program::NanoGpt).unwrap();
        let e = answer(p, &args, &budget, false).unwrap_err();
        assert!(e.message.contains("batch_size=0"), "{e}");
        let e = Card {
            gpu: Some("rtx9999".into()),
            ..Card::default()
        }
        .budget()
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("gpu"));
        let e = Card {
            other_gib: Some(-1.0),
            ..Card::default()
        }
        .budget()
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("other-gib"));
    }

    #[test]
    fn defaults_are_read_back_as_the_defaults() {
        for program in Program::ALL {
            let mut root = serde_json::Map::new();
            root.insert("program".into(), Value::from(program.id()));
            root.insert("config".into(), defaults(program));
            let (p, args) =
                read_config(&Value::Object(root).to_string(), Program::NanoGpt).unwrap();
            assert_eq!(p, program);
            let budget = Card::default().budget().unwrap();
            let again = json(p, &args, &budget);
            // (the answer names the compute dtype the card gets: bf16 on the default H100)
            let mut expected = defaults(program);
            if expected.get("dtype") == Some(&Value::from("auto")) {
                expected["dtype"] = Value::from("bfloat16");
            }
            assert_eq!(again["config"], expected, "{}", program.id());
        }
    }

    #[test]
    fn every_note_is_found_by_its_name() {
        let budget = Card::default().budget().unwrap();
        let cases: [(Program, &[&str], usize); 3] = [
            // a cold cache, FA3, CORE without its examples' size, sampling
            (
                Program::Nanochat,
                &[
                    "--attention=fa3",
                    "--core-metric-every=100",
                    "--sample-every=100",
                ],
                4,
            ),
            // the inherited settings (its cache holds the base run's choices: no cold note)
            (Program::NanochatSft, &[], 1),
            // eager runs' evaluations, more than one GPU
            (
                Program::BuildNanoGpt,
                &["--use_compile=False", "--nproc_per_node=2"],
                2,
            ),
        ];
        for (program, flags, n) in cases {
            let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
            let a = json(program, &flags, &budget);
            let warnings = a["warnings"].as_array().unwrap();
            assert_eq!(warnings.len(), n, "{}: {warnings:?}", program.id());
            assert!(
                warnings.iter().all(|w| !w.as_str().unwrap().is_empty()),
                "{}: {warnings:?}",
                program.id()
            );
        }
    }
}
