//! # vramfit for JavaScript
//!
//! The npm package `vramfit` (built by `wasm-pack`, see scripts/build-js.sh): the same answers
//! as the CLI's `--json`, as plain JS objects with the same field names, for the web (an ES
//! module) and for Node. Every function is a thin door onto crates/report; nothing here
//! computes memory.
//!
//! A refused input throws an `Error` whose `message` is the CLI's message and whose `field`
//! names the setting (`batch_size`, `depth`, `gpu`, `config`).

use estimator::programs::Program;
use serde_json::Value;
use vramfit_report::{Card, Failure};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("types.d.ts");

/// What the memory of a run is and whether it fits: the CLI's `--json` answer, without the fix
/// searches' keys (see `rankFixes`). Its TypeScript signature is in types.d.ts: wasm-bindgen
/// cannot mark `gpu` optional.
#[wasm_bindgen(skip_typescript)]
pub fn analyze(config: JsValue, gpu: Option<JsValue>) -> Result<JsValue, JsValue> {
    answer(config, gpu, false).map(|a| to_js(&a))
}

/// The ranked fixes, best first: the CLI's `--json` `fixes` (TypeScript signature: types.d.ts).
#[wasm_bindgen(js_name = rankFixes, skip_typescript)]
pub fn rank_fixes(config: JsValue, gpu: Option<JsValue>) -> Result<JsValue, JsValue> {
    let answer = answer(config, gpu, true)?;
    Ok(to_js(&answer["fixes"]))
}

/// The numbers of a CUDA out-of-memory message (or a log holding one): the CLI's `oom`.
#[wasm_bindgen(js_name = readOom, unchecked_return_type = "OomReading")]
pub fn read_oom(text: &str) -> JsValue {
    to_js(&vramfit_report::common::oom_message(
        &estimator::oom::parse(text),
    ))
}

/// The GPU presets.
#[wasm_bindgen(unchecked_return_type = "Gpu[]")]
pub fn gpus() -> JsValue {
    to_js(&vramfit_report::gpus())
}

/// A program's settings at their defaults, under the names a config takes.
#[wasm_bindgen(unchecked_return_type = "Record<string, Setting>")]
pub fn defaults(
    #[wasm_bindgen(unchecked_param_type = "Program")] program: &str,
) -> Result<JsValue, JsValue> {
    let p = Program::parse(program).ok_or_else(|| {
        error(Failure {
            message: format!(
                "program={program} is not allowed: use one of {}",
                Program::NAMES.join(", ")
            ),
            field: Some("program".into()),
        })
    })?;
    Ok(to_js(&vramfit_report::defaults(p)))
}

/// The answer for a config object (or its JSON text) on a card.
fn answer(config: JsValue, gpu: Option<JsValue>, with_fixes: bool) -> Result<Value, JsValue> {
    let (program, args) = match config.as_string() {
        Some(text) => vramfit_report::read_config(&text, Program::NanoGpt),
        None => from_js::<Value>(config, "config").and_then(|v| {
            let root = vramfit_report::setting(&v);
            estimator::input::json_config::to_args(&root, Program::NanoGpt).map_err(Failure::from)
        }),
    }
    .map_err(error)?;
    let card = card(gpu).map_err(error)?;
    let budget = card.budget().map_err(error)?;
    vramfit_report::answer(program, &args, &budget, with_fixes).map_err(error)
}

/// The card: nothing for the default, a preset's id or name, or `{gpu, vram_gib, context_gib,
/// other_gib}`.
fn card(gpu: Option<JsValue>) -> Result<Card, Failure> {
    let Some(gpu) = gpu.filter(|g| !g.is_undefined() && !g.is_null()) else {
        return Ok(Card::default());
    };
    if let Some(name) = gpu.as_string() {
        return Ok(Card {
            gpu: Some(name),
            ..Card::default()
        });
    }
    from_js(gpu, "gpu")
}

/// A JS value read as `T`; what serde says is wrong, named by `field`. Read through a JSON value
/// first: serde-wasm-bindgen looks up only a struct's own fields, so a misspelt key
/// (`{vram: 3}`) would pass unseen, where serde_json names it.
fn from_js<T: serde::de::DeserializeOwned>(v: JsValue, field: &str) -> Result<T, Failure> {
    let fail = |e: &dyn std::fmt::Display| Failure {
        message: format!("{field}: {e}"),
        field: Some(field.into()),
    };
    let json: Value = serde_wasm_bindgen::from_value(v).map_err(|e| fail(&e))?;
    serde_json::from_value(json).map_err(|e| fail(&e))
}

/// An answer as plain JS objects (numbers, not BigInts; objects, not Maps).
fn to_js(v: &Value) -> JsValue {
    use serde::Serialize;
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

/// A refusal as the `Error` the functions throw, with its `field`.
fn error(f: Failure) -> JsValue {
    let e = js_sys::Error::new(&f.message);
    let field = f.field.map_or(JsValue::NULL, |s| JsValue::from_str(&s));
    // Reflect.set on a fresh Error object cannot fail
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("field"), &field);
    e.into()
}
