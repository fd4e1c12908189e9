//! # vramfit for JavaScript
//!
//! The npm package `vramfit` (built by `wasm-pack`, see scripts/build-js.sh): the same answers
//! as the CLI's `--json`, as plain JS objects with the same field names, for the web (an ES
//! module) and for Node. Every function is a thin door onto crates/report; nothing here
//! computes memory.
//!
//! A refused input throws an `Error` whose `message` is the CLI's message and whose `field`
//! names the setting (`batch_size`, `depth`, `gpu`, `vram_gib`, `config`); an argument of the
//! wrong type throws a `TypeError` with the parameter's name as its `field`. A caller's object
//! is read by [`value::read`], iteratively and within bounds, never by anything recursive, so no
//! argument can overflow the wasm stack (after which every call would fail).

mod value;

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
    let answer = parse(&answer(config, gpu, false)?);
    for key in vramfit_report::FIX_KEYS {
        // an own property of a plain object: deleting it cannot fail
        let _ = js_sys::Reflect::delete_property(
            answer.unchecked_ref::<js_sys::Object>(),
            &(*key).into(),
        );
    }
    Ok(answer)
}

/// The ranked fixes, best first: the CLI's `--json` `fixes` (TypeScript signature: types.d.ts).
#[wasm_bindgen(js_name = rankFixes, skip_typescript)]
pub fn rank_fixes(config: JsValue, gpu: Option<JsValue>) -> Result<JsValue, JsValue> {
    let answer = parse(&answer(config, gpu, true)?);
    js_sys::Reflect::get(&answer, &"fixes".into())
}

/// The numbers of a CUDA out-of-memory message (or a log holding one): the CLI's `oom`.
#[wasm_bindgen(js_name = readOom, unchecked_return_type = "OomReading")]
pub fn read_oom(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
) -> Result<JsValue, JsValue> {
    let text = text
        .as_string()
        .ok_or_else(|| type_error("readOom", "text", "a string", &text))?;
    Ok(to_js(&vramfit_report::common::value(
        vramfit_report::common::OomReading::of(&estimator::oom::parse(&text)),
    )))
}

/// The GPU presets.
#[wasm_bindgen(unchecked_return_type = "Gpu[]")]
pub fn gpus() -> JsValue {
    to_js(&vramfit_report::gpus())
}

/// A program's settings at their defaults, under the names a config takes.
#[wasm_bindgen(unchecked_return_type = "Record<string, Setting>")]
pub fn defaults(
    #[wasm_bindgen(unchecked_param_type = "Program")] program: JsValue,
) -> Result<JsValue, JsValue> {
    let program = program
        .as_string()
        .ok_or_else(|| type_error("defaults", "program", "a string", &program))?;
    let p = Program::parse(&program).ok_or_else(|| {
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

/// JSON text as a JS value: `JSON.parse` reads every float back exactly.
fn parse(text: &str) -> JsValue {
    js_sys::JSON::parse(text).unwrap_or(JsValue::NULL)
}

/// The answer (its JSON text) for a config object (or its JSON text) on a card.
fn answer(config: JsValue, gpu: Option<JsValue>, with_fixes: bool) -> Result<String, JsValue> {
    let (program, args) = match config.as_string() {
        Some(text) => vramfit_report::read_config(&text, Program::DEFAULT),
        None => value::read(config, "config").and_then(|v| {
            let root = vramfit_report::setting(&v);
            estimator::input::json_config::to_args(&root, Program::DEFAULT).map_err(Failure::from)
        }),
    }
    .map_err(error)?;
    let card = card(gpu).map_err(error)?;
    let budget = card.budget().map_err(|f| error(js_card_key(f)))?;
    vramfit_report::answer(program, &args, &budget, with_fixes).map_err(error)
}

/// A card object's keys that hold GiB, and the CLI's flags for them, which the estimator's
/// messages name.
const GIB_KEYS: [(&str, &str); 3] = [
    ("vram_gib", "vram-gib"),
    ("context_gib", "context-gib"),
    ("other_gib", "other-gib"),
];

/// The card: nothing for the default, a preset's id or name, or `{gpu, vram_gib, context_gib,
/// other_gib}`, where `gpu: "custom"` (the page's and the answer's id for a custom card) or no
/// `gpu` with `vram_gib` is a custom card of that size, as the CLI's `--vram-gib` without
/// `--gpu` is.
fn card(gpu: Option<JsValue>) -> Result<Card, Failure> {
    let read = match gpu {
        Some(g) => value::read(g, "gpu")?,
        None => Value::Null,
    };
    let mut card = Card::default();
    match read {
        Value::Null => return Ok(card),
        Value::String(name) => card.gpu = Some(name),
        Value::Object(map) => {
            for (key, v) in map {
                let gib = GIB_KEYS.iter().position(|(k, _)| *k == key);
                match (key.as_str(), gib, v) {
                    ("gpu", _, Value::String(name)) => card.gpu = Some(name),
                    ("gpu", _, Value::Null) | (_, Some(_), Value::Null) => {}
                    ("gpu", _, v) => return Err(wrong_type("gpu", &v, "a preset's id (a string)")),
                    (_, Some(i), Value::Number(n)) => {
                        let x = n.as_f64();
                        match i {
                            0 => card.vram_gib = x,
                            1 => card.context_gib = x,
                            _ => card.other_gib = x,
                        }
                    }
                    (key, Some(_), v) => return Err(wrong_type(key, &v, "a number of GiB")),
                    (key, None, _) => {
                        return Err(Failure {
                            message: format!(
                                "unknown card key: {key} (a card takes gpu, vram_gib, \
                                 context_gib, other_gib)"
                            ),
                            field: Some(key.into()),
                        })
                    }
                }
            }
        }
        v => {
            return Err(wrong_type(
                "gpu",
                &v,
                "a preset's id or a card {gpu, vram_gib, context_gib, other_gib}",
            ))
        }
    }
    if let Some(name) = card.gpu.as_deref() {
        if name.trim().eq_ignore_ascii_case("custom") {
            if card.vram_gib.is_none() {
                return Err(Failure {
                    message: format!(
                        "gpu={name} needs vram_gib, the custom card's memory in GiB \
                         ({{gpu: \"custom\", vram_gib: 16}})"
                    ),
                    field: Some("vram_gib".into()),
                });
            }
            card.gpu = None;
        } else if estimator::gpu::find(name).is_none() {
            return Err(Failure {
                message: format!(
                    "unknown GPU '{}': see gpus(), or give {{gpu: \"custom\", vram_gib}} \
                     for a custom card",
                    estimator::error::echo(name)
                ),
                field: Some("gpu".into()),
            });
        }
    }
    Ok(card)
}

/// A card setting of the wrong type, in the words of the estimator's own
/// (`batch_size=[8] has the wrong type: expected …`).
fn wrong_type(key: &str, v: &Value, expected: &str) -> Failure {
    let mut said = v.to_string();
    if said.chars().count() > 40 {
        said = said.chars().take(40).collect::<String>() + "…";
    }
    Failure {
        message: format!("{key}={said} has the wrong type: expected {expected}"),
        field: Some(key.into()),
    }
}

/// A refused card setting named as the card object names it (`vram_gib`), not as the CLI's
/// flag (`vram-gib`) the estimator's message says.
fn js_card_key(mut f: Failure) -> Failure {
    for (js, cli) in GIB_KEYS {
        if f.field.as_deref() == Some(cli) {
            f.field = Some(js.into());
            if let Some(rest) = f.message.strip_prefix(cli) {
                f.message = format!("{js}{rest}");
            }
        }
    }
    f
}

/// An answer as plain JS objects (numbers, not BigInts; objects, not Maps): the CLI's JSON text
/// read by JavaScript's own `JSON.parse`, so an answer is the CLI's `--json` to the number.
/// (serde-wasm-bindgen refuses integers past 2^53 — counts of bytes past 8 PiB — and its refusal
/// made the whole answer `null`.)
fn to_js(v: &Value) -> JsValue {
    // a `Value`'s text is valid JSON, which `JSON.parse` reads
    js_sys::JSON::parse(&v.to_string()).unwrap_or(JsValue::NULL)
}

/// A refusal as the `Error` the functions throw, with its `field`.
fn error(f: Failure) -> JsValue {
    let e = js_sys::Error::new(&f.message);
    let field = f.field.map_or(JsValue::NULL, |s| JsValue::from_str(&s));
    // Reflect.set on a fresh Error object cannot fail
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("field"), &field);
    e.into()
}

/// An argument of the wrong type: a `TypeError` whose `field` is the parameter
/// (`readOom: text must be a string, got number`).
fn type_error(function: &str, param: &str, expected: &str, got: &JsValue) -> JsValue {
    let e = js_sys::TypeError::new(&format!(
        "{function}: {param} must be {expected}, got {}",
        value::type_name(got)
    ));
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("field"), &JsValue::from_str(param));
    e.into()
}
