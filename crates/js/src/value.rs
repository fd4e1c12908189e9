//! A JS value read as a JSON value, iteratively and within bounds.
//!
//! Nothing recursive ever sees a caller's object: serde-wasm-bindgen recursed once per level of
//! nesting, so an object 2,000 deep overflowed the wasm stack ("memory access out of bounds"),
//! and the trap left the module's stack pointer where it was, so every later call failed too.
//! Here one loop with its own stack of open containers builds the [`Value`] and refuses, with
//! an `Error` naming the argument, a value that is
//!
//! - nested [`MAX_DEPTH`] deep or more (objects and arrays): serde_json's own limit, so an object
//!   and its JSON text are refused at the same depth, and everything after (serde_json, the
//!   config's reader) recurses at most that deep;
//! - cyclic (an object inside itself): JSON cannot hold it;
//! - more than [`MAX_VALUES`] values in all, a shared object counted each time it is reached
//!   (as serde and JSON.stringify would read it): a chain of objects each holding the next one
//!   twice is 2^depth values for 2·depth references, so only a count of what is read bounds
//!   the work;
//! - not JSON: a function, a symbol, a BigInt, a number that is not finite, an object that is not
//!   a plain one (a Map, a Date, a typed array), or a getter or proxy that throws.
//!
//! A key whose value is `undefined` is left out, as JSON.stringify leaves it out, so an object
//! and its JSON text are the same question.

use js_sys::{Array, Function, Object, Reflect, Set};
use serde_json::{Map, Number, Value};
use vramfit_report::Failure;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Objects and arrays nested this deep are refused: serde_json refuses a JSON text at the same
/// depth (its recursion limit of 128 counts the outermost container, so 127 levels pass).
pub const MAX_DEPTH: usize = 128;

/// At most this many values in all. A config has a few dozen and the CLI's own `--json` answer
/// (which `analyze` reads back) a few thousand, with its fixes; 100,000 is far above both and
/// still bounds a refused call to a few milliseconds and a few MB, whatever the object is.
pub const MAX_VALUES: usize = 100_000;

#[wasm_bindgen]
extern "C" {
    // Both throw for a revoked Proxy, and Object.keys runs a Proxy's traps: caught, so a JS
    // exception never unwinds through wasm frames.
    #[wasm_bindgen(js_namespace = Array, js_name = isArray, catch)]
    fn is_array(v: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_namespace = Object, js_name = keys, catch)]
    fn object_keys(v: &JsValue) -> Result<Array, JsValue>;
}

/// `v` as a JSON value; what is wrong is said about `field` (`config`, `gpu`).
pub fn read(v: JsValue, field: &str) -> Result<Value, Failure> {
    Walk::new(field).run(v)
}

/// What `typeof` says, with `null` and arrays told apart: for "got number" in a message.
pub fn type_name(v: &JsValue) -> String {
    if v.is_null() {
        "null".into()
    } else if is_array(v).unwrap_or(false) {
        "array".into()
    } else {
        v.js_typeof().as_string().unwrap_or_default()
    }
}

/// How a value is named from its container: the path in a message is `config.a[3].b`.
enum Segment {
    Root,
    Index(u32),
    Key(String),
}

impl Segment {
    fn write(&self, out: &mut String) {
        match self {
            Segment::Root => {}
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
            Segment::Key(k) => {
                let mut chars = k.chars();
                let word = chars
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                    && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
                if word {
                    out.push('.');
                    out.push_str(k);
                } else {
                    out.push('[');
                    out.push_str(&Value::from(k.as_str()).to_string());
                    out.push(']');
                }
            }
        }
    }
}

/// An object or array being read: its children so far, and which one comes next.
struct Open {
    source: JsValue,
    /// An object's keys (Object.keys); `None` for an array.
    keys: Option<Array>,
    len: u32,
    next: u32,
    built: Value,
    segment: Segment,
}

impl Open {
    fn add(&mut self, segment: Segment, v: Value) {
        match (&mut self.built, segment) {
            (Value::Object(map), Segment::Key(k)) => {
                map.insert(k, v);
            }
            (Value::Array(items), _) => items.push(v),
            _ => {}
        }
    }
}

/// A value read: a leaf (with its segment back), or a container now open on the stack.
enum Read {
    Leaf(Segment, Value),
    Opened,
}

struct Walk<'a> {
    field: &'a str,
    stack: Vec<Open>,
    /// The containers on the stack, for finding a cycle in one look-up.
    on_path: Set,
    values: usize,
    /// `Object.prototype.toString`, which names what kind of object a value is.
    tag: Option<Function>,
}

impl<'a> Walk<'a> {
    fn new(field: &'a str) -> Walk<'a> {
        Walk {
            field,
            stack: Vec::new(),
            on_path: Set::new(&JsValue::UNDEFINED),
            values: 0,
            tag: None,
        }
    }

    fn run(mut self, root: JsValue) -> Result<Value, Failure> {
        if let Read::Leaf(_, v) = self.enter(root, Segment::Root)? {
            return Ok(v);
        }
        while let Some(top) = self.stack.last_mut() {
            if top.next >= top.len {
                let Some(done) = self.stack.pop() else { break };
                self.on_path.delete(&done.source);
                match self.stack.last_mut() {
                    Some(parent) => parent.add(done.segment, done.built),
                    None => return Ok(done.built),
                }
                continue;
            }
            let i = top.next;
            top.next += 1;
            let (segment, child) = match &top.keys {
                Some(keys) => {
                    let key = keys.get(i).as_string().unwrap_or_default();
                    let child = Reflect::get(&top.source, &JsValue::from_str(&key));
                    (Segment::Key(key), child)
                }
                None => (Segment::Index(i), Reflect::get_u32(&top.source, i)),
            };
            let child = match child {
                Ok(c) => c,
                Err(e) => return Err(self.unreadable(&segment, &e)),
            };
            if child.is_undefined() && matches!(segment, Segment::Key(_)) {
                continue; // as JSON.stringify leaves it out
            }
            if let Read::Leaf(segment, v) = self.enter(child, segment)? {
                if let Some(top) = self.stack.last_mut() {
                    top.add(segment, v);
                }
            }
        }
        Ok(Value::Null)
    }

    /// Reads one value: a leaf's JSON value, or opens a container.
    fn enter(&mut self, v: JsValue, segment: Segment) -> Result<Read, Failure> {
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(self.fail(format!(
                "{} holds more than {MAX_VALUES} values (a shared object counted each time it \
                 is reached): too many to be a config or a card",
                self.field
            )));
        }
        if v.is_null() || v.is_undefined() {
            return Ok(Read::Leaf(segment, Value::Null));
        }
        if let Some(b) = v.as_bool() {
            return Ok(Read::Leaf(segment, Value::Bool(b)));
        }
        if let Some(x) = v.as_f64() {
            return match number(x) {
                Some(n) => Ok(Read::Leaf(segment, Value::Number(n))),
                None => Err(self.not_json(&segment, js_number_name(x))),
            };
        }
        if let Some(s) = v.as_string() {
            return Ok(Read::Leaf(segment, Value::String(s)));
        }
        if v.is_function() {
            return Err(self.not_json(&segment, "a function"));
        }
        if v.is_symbol() {
            return Err(self.not_json(&segment, "a symbol"));
        }
        if v.is_bigint() {
            return Err(self.not_json(&segment, "a BigInt (give a number: 8, not 8n)"));
        }
        if !v.is_object() {
            let what = format!("of type {}", type_name(&v));
            return Err(self.not_json(&segment, &what));
        }
        let array = is_array(&v).map_err(|e| self.unreadable(&segment, &e))?;
        if !array {
            let kind = self.kind(&v).map_err(|e| self.unreadable(&segment, &e))?;
            if kind != "Object" {
                let article = match kind.chars().next() {
                    Some('A' | 'E' | 'I' | 'O') => "an", // a Uint8Array, a URL
                    _ => "a",
                };
                return Err(self.not_json(&segment, &format!("{article} {kind}")));
            }
        }
        if self.on_path.has(&v) {
            return Err(self.cyclic(&segment, &v));
        }
        if self.stack.len() + 1 >= MAX_DEPTH {
            return Err(self.fail(format!(
                "{} nests objects and arrays {MAX_DEPTH} deep (at {}): at most {}, as in a JSON \
                 text",
                self.field,
                self.path(Some(&segment), self.stack.len()),
                MAX_DEPTH - 1
            )));
        }
        let (keys, len, built) = if array {
            let len = Reflect::get(&v, &JsValue::from_str("length"))
                .map_err(|e| self.unreadable(&segment, &e))?
                .as_f64()
                .unwrap_or(0.0);
            // a length past u32 cannot be an array's; past MAX_VALUES the count refuses it
            let len = len.clamp(0.0, f64::from(u32::MAX)) as u32;
            (None, len, Value::Array(Vec::new()))
        } else {
            let keys = object_keys(&v).map_err(|e| self.unreadable(&segment, &e))?;
            let len = keys.length();
            (Some(keys), len, Value::Object(Map::new()))
        };
        self.on_path.add(&v);
        self.stack.push(Open {
            source: v,
            keys,
            len,
            next: 0,
            built,
            segment,
        });
        Ok(Read::Opened)
    }

    /// What kind of object `v` is, as `Object.prototype.toString` names it: `Object` for a plain
    /// one (or a class's instance), `Map`, `Date`, `Uint8Array`, ….
    fn kind(&mut self, v: &JsValue) -> Result<String, JsValue> {
        if self.tag.is_none() {
            let proto = Object::get_prototype_of(&Object::new());
            self.tag = Reflect::get(&proto, &JsValue::from_str("toString"))?
                .dyn_into::<Function>()
                .ok();
        }
        let Some(tag) = &self.tag else {
            return Ok("Object".into());
        };
        let said = tag.call0(v)?.as_string().unwrap_or_default();
        Ok(said
            .strip_prefix("[object ")
            .and_then(|s| s.strip_suffix(']'))
            .unwrap_or("Object")
            .to_string())
    }

    /// The path to the open container `depth` levels down, then `last`: `config.a[3].b`.
    fn path(&self, last: Option<&Segment>, depth: usize) -> String {
        let mut parts: Vec<String> = self.stack[..depth.min(self.stack.len())]
            .iter()
            .map(|o| &o.segment)
            .chain(last)
            .map(|s| {
                let mut out = String::new();
                s.write(&mut out);
                out
            })
            .filter(|s| !s.is_empty())
            .collect();
        if parts.len() > 12 {
            let hidden = parts.len() - 10;
            parts.splice(4..parts.len() - 6, [format!("…{hidden} more…")]);
        }
        format!("{}{}", self.field, parts.concat())
    }

    fn fail(&self, message: String) -> Failure {
        Failure {
            message,
            field: Some(self.field.to_string()),
        }
    }

    fn not_json(&self, at: &Segment, what: &str) -> Failure {
        self.fail(format!(
            "{} is {what}: {} takes only what JSON holds (plain objects, arrays, strings, finite \
             numbers, booleans, null)",
            self.path(Some(at), self.stack.len()),
            self.field
        ))
    }

    fn cyclic(&self, at: &Segment, v: &JsValue) -> Failure {
        let again = self.stack.iter().position(|o| &o.source == v).unwrap_or(0);
        self.fail(format!(
            "{} is cyclic: {} refers back to {}, and JSON cannot hold an object inside itself",
            self.field,
            self.path(Some(at), self.stack.len()),
            self.path(None, again + 1)
        ))
    }

    fn unreadable(&self, at: &Segment, e: &JsValue) -> Failure {
        let said = match e.dyn_ref::<js_sys::Error>() {
            Some(e) => String::from(e.message()),
            None => e.as_string().unwrap_or_else(|| format!("{e:?}")),
        };
        self.fail(format!(
            "{} could not be read: {said}",
            self.path(Some(at), self.stack.len())
        ))
    }
}

/// A JS number as serde-wasm-bindgen gave it: a safe integer as an integer (`8`, never `8.0`),
/// any other finite number as a float; `None` for NaN and the infinities.
fn number(x: f64) -> Option<Number> {
    const SAFE: f64 = 9_007_199_254_740_991.0; // Number.MAX_SAFE_INTEGER
    if x.fract() == 0.0 && x.abs() <= SAFE {
        Some(Number::from(x as i64))
    } else {
        Number::from_f64(x)
    }
}

/// How JS prints a number that is not finite.
fn js_number_name(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}
