//! The values nanoGPT's configurator accepts: Python literals, and the arithmetic on literals that
//! nanoGPT's own config files use (`gradient_accumulation_steps = 5 * 8`, `lr = 6e-4 / 10`).
//!
//! train.py's configurator calls `ast.literal_eval` on `--key=value` and `exec` on config files;
//! this evaluator covers what both accept in practice: ints (with `_` separators), floats, strings,
//! `True`/`False`/`None`, unary `+`/`-`, `+ - * / // % **` and parentheses, with Python's
//! precedence and its int/float rules. Anything else is an error value, never a panic.

use std::fmt;

/// A Python value as the configurator would see it.
///
/// Serialized as JSON's nearest value (`None` is `null`).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
pub enum PyValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    None,
}

impl PyValue {
    /// Python's name for the type, as used in messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Bool(_) => "bool",
            PyValue::Str(_) => "str",
            PyValue::None => "NoneType",
        }
    }
}

impl fmt::Display for PyValue {
    /// Formats the way Python's `repr` would (close enough for messages and snippets).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyValue::Int(i) => write!(f, "{i}"),
            PyValue::Float(x) => write!(f, "{}", format_py_float(*x)),
            PyValue::Bool(true) => f.write_str("True"),
            PyValue::Bool(false) => f.write_str("False"),
            PyValue::Str(s) => write!(f, "'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            PyValue::None => f.write_str("None"),
        }
    }
}

/// `repr(float)`: always shows a decimal point or exponent (`0.0`, `0.1`, `1e-05`).
pub fn format_py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = crate::decimal::shortest_exp(x);
        // Rust writes 1e-5, Python 1e-05.
        if let Some((mant, exp)) = s.split_once('e') {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ("-", d),
                None => ("+", exp),
            };
            let digits = if digits.len() < 2 {
                format!("0{digits}")
            } else {
                digits.to_string()
            };
            return format!("{mant}e{sign}{digits}");
        }
        return s;
    }
    let s = crate::decimal::shortest(x);
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct PyError(pub String);

impl fmt::Display for PyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Evaluates a Python literal or an arithmetic expression on literals.
pub fn eval(src: &str) -> Result<PyValue, PyError> {
    let tokens = tokenize(src)?;
    let mut p = Parser { tokens, pos: 0 };
    let v = p.expr(0)?;
    if p.pos != p.tokens.len() {
        return Err(PyError(format!(
            "unexpected {} after the value",
            p.tokens[p.pos].describe()
        )));
    }
    Ok(v)
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(PyValue),
    Str(String),
    Name(String),
    Op(&'static str),
    LParen,
    RParen,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Num(v) => format!("number {v}"),
            Tok::Str(s) => format!("string '{s}'"),
            Tok::Name(n) => format!("name '{n}'"),
            Tok::Op(o) => format!("'{o}'"),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
        }
    }
}

/// Longest inputs are bounded by the callers; this bound keeps recursion shallow on hostile text.
const MAX_DEPTH: usize = 64;

fn tokenize(src: &str) -> Result<Vec<Tok>, PyError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                // an exponent sign belongs to the number: 1e-5
                if (chars[i] == 'e' || chars[i] == 'E')
                    && matches!(chars.get(i + 1), Some('+') | Some('-'))
                    && !is_hex_prefix(&chars[start..i])
                {
                    i += 2;
                    continue;
                }
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            out.push(Tok::Num(parse_number(&text)?));
        } else if c == '\'' || c == '"' {
            let (s, next) = read_string(&chars, i)?;
            out.push(Tok::Str(s));
            i = next;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            // a string prefix such as r'..' or b'..' is not a name
            if i < chars.len() && (chars[i] == '\'' || chars[i] == '"') {
                return Err(PyError(format!("string prefix '{name}' is not supported")));
            }
            out.push(Tok::Name(name));
        } else if c == '(' {
            out.push(Tok::LParen);
            i += 1;
        } else if c == ')' {
            out.push(Tok::RParen);
            i += 1;
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let op = match two.as_str() {
                "**" => Some("**"),
                "//" => Some("//"),
                _ => None,
            };
            if let Some(op) = op {
                out.push(Tok::Op(op));
                i += 2;
                continue;
            }
            let op = match c {
                '+' => "+",
                '-' => "-",
                '*' => "*",
                '/' => "/",
                '%' => "%",
                _ => return Err(PyError(format!("unexpected character '{c}'"))),
            };
            out.push(Tok::Op(op));
            i += 1;
        }
    }
    if out.is_empty() {
        return Err(PyError("empty value".into()));
    }
    Ok(out)
}

fn is_hex_prefix(chars: &[char]) -> bool {
    chars.len() >= 2 && chars[0] == '0' && matches!(chars[1], 'x' | 'X')
}

fn parse_number(text: &str) -> Result<PyValue, PyError> {
    let bad = || PyError(format!("'{text}' is not a number"));
    if text.starts_with('_') || text.ends_with('_') || text.contains("__") {
        return Err(bad());
    }
    let clean: String = text.chars().filter(|&c| c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = lower.strip_prefix(prefix) {
            return i64::from_str_radix(digits, radix)
                .map(PyValue::Int)
                .map_err(|_| bad());
        }
    }
    if lower.chars().all(|c| c.is_ascii_digit()) {
        // Python 3 forbids leading zeros in non-zero decimal ints.
        if lower.len() > 1 && lower.starts_with('0') && lower.chars().any(|c| c != '0') {
            return Err(bad());
        }
        return lower
            .parse::<i64>()
            .map(PyValue::Int)
            .map_err(|_| PyError(format!("integer {text} is too large")));
    }
    if lower.contains("inf") || lower.contains("nan") {
        return Err(bad());
    }
    match crate::decimal::parse(&lower) {
        Some(x) if x.is_finite() => Ok(PyValue::Float(x)),
        Some(_) => Err(PyError(format!("{text} is out of range for a float"))),
        None => Err(bad()),
    }
}

fn read_string(chars: &[char], start: usize) -> Result<(String, usize), PyError> {
    let quote = chars[start];
    let mut s = String::new();
    let mut i = start + 1;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            let Some(&n) = chars.get(i + 1) else { break };
            let escaped = match n {
                'n' => Some('\n'),
                't' => Some('\t'),
                '\\' | '\'' | '"' => Some(n),
                _ => None,
            };
            match escaped {
                Some(e) => s.push(e),
                // an unknown escape keeps its backslash, as Python does
                None => {
                    s.push('\\');
                    s.push(n);
                }
            }
            i += 2;
        } else if c == quote {
            return Ok((s, i + 1));
        } else if c == '\n' {
            break;
        } else {
            s.push(c);
            i += 1;
        }
    }
    Err(PyError("unterminated string".into()))
}

struct Parser {
    tokens: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    /// Binary operators by precedence climbing: `+ -` < `* / // %` < unary < `**`.
    fn expr(&mut self, depth: usize) -> Result<PyValue, PyError> {
        let mut lhs = self.term(depth)?;
        while let Some(Tok::Op(op @ ("+" | "-"))) = self.peek() {
            let op = *op;
            self.pos += 1;
            let rhs = self.term(depth)?;
            lhs = binary(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn term(&mut self, depth: usize) -> Result<PyValue, PyError> {
        let mut lhs = self.unary(depth)?;
        while let Some(Tok::Op(op @ ("*" | "/" | "//" | "%"))) = self.peek() {
            let op = *op;
            self.pos += 1;
            let rhs = self.unary(depth)?;
            lhs = binary(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn unary(&mut self, depth: usize) -> Result<PyValue, PyError> {
        if depth > MAX_DEPTH {
            return Err(PyError("expression nested too deeply".into()));
        }
        if let Some(Tok::Op(op @ ("+" | "-"))) = self.peek() {
            let op = *op;
            self.pos += 1;
            let v = self.unary(depth + 1)?;
            return match (op, v) {
                ("-", PyValue::Int(i)) => i
                    .checked_neg()
                    .map(PyValue::Int)
                    .ok_or_else(|| PyError("integer overflow".into())),
                ("-", PyValue::Float(x)) => Ok(PyValue::Float(-x)),
                ("-", PyValue::Bool(b)) => Ok(PyValue::Int(-(b as i64))),
                ("+", PyValue::Bool(b)) => Ok(PyValue::Int(b as i64)),
                ("+", v @ (PyValue::Int(_) | PyValue::Float(_))) => Ok(v),
                (_, v) => Err(PyError(format!(
                    "bad operand type for unary {op}: '{}'",
                    v.type_name()
                ))),
            };
        }
        self.power(depth)
    }

    fn power(&mut self, depth: usize) -> Result<PyValue, PyError> {
        let base = self.atom(depth)?;
        if let Some(Tok::Op("**")) = self.peek() {
            self.pos += 1;
            // right-associative, and binds tighter than a unary minus on its left only
            let exp = self.unary(depth + 1)?;
            return binary("**", base, exp);
        }
        Ok(base)
    }

    fn atom(&mut self, depth: usize) -> Result<PyValue, PyError> {
        let Some(tok) = self.tokens.get(self.pos).cloned() else {
            return Err(PyError("value ends too early".into()));
        };
        self.pos += 1;
        match tok {
            Tok::Num(v) => Ok(v),
            Tok::Str(mut s) => {
                // adjacent string literals concatenate, as in Python
                while let Some(Tok::Str(next)) = self.peek() {
                    s.push_str(next);
                    self.pos += 1;
                }
                Ok(PyValue::Str(s))
            }
            Tok::Name(n) => match n.as_str() {
                "True" => Ok(PyValue::Bool(true)),
                "False" => Ok(PyValue::Bool(false)),
                "None" => Ok(PyValue::None),
                _ => Err(PyError(format!(
                    "name '{n}' is not a literal (only numbers, strings, True/False/None and arithmetic are understood)"
                ))),
            },
            Tok::LParen => {
                let v = self.expr(depth + 1)?;
                match self.peek() {
                    Some(Tok::RParen) => {
                        self.pos += 1;
                        Ok(v)
                    }
                    _ => Err(PyError("missing ')'".into())),
                }
            }
            other => Err(PyError(format!("unexpected {}", other.describe()))),
        }
    }
}

fn as_num(v: &PyValue) -> Option<Num> {
    match v {
        PyValue::Int(i) => Some(Num::I(*i)),
        PyValue::Bool(b) => Some(Num::I(*b as i64)),
        PyValue::Float(x) => Some(Num::F(*x)),
        _ => None,
    }
}

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(x) => x,
        }
    }
}

fn overflow() -> PyError {
    PyError("integer overflow".into())
}

fn finite(x: f64) -> Result<PyValue, PyError> {
    if x.is_finite() {
        Ok(PyValue::Float(x))
    } else {
        Err(PyError("float result out of range".into()))
    }
}

/// The longest string an expression may build (`'a' * 65536` is the longest). Every string
/// operation checks it before building, so a line of many terms costs time linear in its length.
const MAX_STR: usize = 1 << 16;

fn binary(op: &str, a: PyValue, b: PyValue) -> Result<PyValue, PyError> {
    let too_long = || PyError(format!("string too long (more than {MAX_STR} characters)"));
    // str + str and str * int, as Python does
    match (op, a, b) {
        ("+", PyValue::Str(mut x), PyValue::Str(y)) => {
            if x.len() + y.len() > MAX_STR {
                return Err(too_long());
            }
            x.push_str(&y);
            Ok(PyValue::Str(x))
        }
        ("*", PyValue::Str(s), PyValue::Int(n)) | ("*", PyValue::Int(n), PyValue::Str(s)) => {
            let n = n.max(0) as usize;
            if s.len().saturating_mul(n) > MAX_STR {
                return Err(too_long());
            }
            Ok(PyValue::Str(s.repeat(n)))
        }
        (op, a, b) => numeric(op, a, b),
    }
}

/// `binary` for numbers (ints, floats, bools), as Python computes them.
fn numeric(op: &str, a: PyValue, b: PyValue) -> Result<PyValue, PyError> {
    let (Some(x), Some(y)) = (as_num(&a), as_num(&b)) else {
        return Err(PyError(format!(
            "unsupported operand types for {op}: '{}' and '{}'",
            a.type_name(),
            b.type_name()
        )));
    };
    let zero_div = || PyError("division by zero".into());
    match (x, y) {
        (Num::I(i), Num::I(j)) => match op {
            "+" => i.checked_add(j).map(PyValue::Int).ok_or_else(overflow),
            "-" => i.checked_sub(j).map(PyValue::Int).ok_or_else(overflow),
            "*" => i.checked_mul(j).map(PyValue::Int).ok_or_else(overflow),
            "/" => {
                if j == 0 {
                    Err(zero_div())
                } else {
                    finite(i as f64 / j as f64)
                }
            }
            "//" => {
                if j == 0 {
                    Err(zero_div())
                } else {
                    i.checked_div_euclid(j)
                        .map(|_| PyValue::Int(floor_div(i, j)))
                        .ok_or_else(overflow)
                }
            }
            "%" => {
                if j == 0 {
                    Err(zero_div())
                } else {
                    Ok(PyValue::Int(i - j * floor_div(i, j)))
                }
            }
            "**" => {
                if j < 0 {
                    finite((i as f64).powf(j as f64))
                } else {
                    let e = u32::try_from(j).map_err(|_| overflow())?;
                    i.checked_pow(e).map(PyValue::Int).ok_or_else(overflow)
                }
            }
            _ => Err(PyError(format!("unknown operator {op}"))),
        },
        (x, y) => {
            let (x, y) = (x.f(), y.f());
            match op {
                "+" => finite(x + y),
                "-" => finite(x - y),
                "*" => finite(x * y),
                "/" if y == 0.0 => Err(zero_div()),
                "/" => finite(x / y),
                "//" if y == 0.0 => Err(zero_div()),
                "//" => finite((x / y).floor()),
                "%" if y == 0.0 => Err(zero_div()),
                "%" => finite(x - y * (x / y).floor()),
                "**" => finite(x.powf(y)),
                _ => Err(PyError(format!("unknown operator {op}"))),
            }
        }
    }
}

/// Python's `//` on ints rounds towards negative infinity.
fn floor_div(i: i64, j: i64) -> i64 {
    let q = i / j;
    if (i % j != 0) && ((i < 0) != (j < 0)) {
        q - 1
    } else {
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> PyValue {
        eval(src).unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    #[test]
    fn literals() {
        assert_eq!(ok("12"), PyValue::Int(12));
        assert_eq!(ok("1_024"), PyValue::Int(1024));
        assert_eq!(ok("0.1"), PyValue::Float(0.1));
        assert_eq!(ok("6e-4"), PyValue::Float(6e-4));
        assert_eq!(ok("1E+3"), PyValue::Float(1000.0));
        assert_eq!(ok(".5"), PyValue::Float(0.5));
        assert_eq!(ok("True"), PyValue::Bool(true));
        assert_eq!(ok("False"), PyValue::Bool(false));
        assert_eq!(ok("None"), PyValue::None);
        assert_eq!(ok("'float16'"), PyValue::Str("float16".into()));
        assert_eq!(ok("\"gpt2-xl\""), PyValue::Str("gpt2-xl".into()));
        assert_eq!(ok("0x10"), PyValue::Int(16));
    }

    #[test]
    fn arithmetic_as_python() {
        assert_eq!(ok("5 * 8"), PyValue::Int(40));
        assert_eq!(ok("5*8*2"), PyValue::Int(80));
        assert_eq!(ok("6e-4 / 2"), PyValue::Float(3e-4));
        // Python prints 5.9999999999999995e-05 for this too
        assert_eq!(ok("6e-4 / 10"), PyValue::Float(6e-4 / 10.0));
        assert_eq!(ok("7 // 2"), PyValue::Int(3));
        assert_eq!(ok("-7 // 2"), PyValue::Int(-4));
        assert_eq!(ok("-7 % 3"), PyValue::Int(2));
        assert_eq!(ok("8 / 2"), PyValue::Float(4.0));
        assert_eq!(ok("2 ** 10"), PyValue::Int(1024));
        assert_eq!(ok("-2 ** 2"), PyValue::Int(-4));
        assert_eq!(ok("2 ** -1"), PyValue::Float(0.5));
        assert_eq!(ok("(1 + 2) * 3"), PyValue::Int(9));
        assert_eq!(ok("1 + 2 * 3"), PyValue::Int(7));
        assert_eq!(ok("'a' 'b'"), PyValue::Str("ab".into()));
    }

    #[test]
    fn errors_are_values() {
        for bad in [
            "",
            "1 +",
            "(1",
            "1)",
            "foo",
            "1/0",
            "1 // 0",
            "2 ** 99999",
            "'abc",
            "01",
            "1__0",
            "[1, 2]",
            "os.system('x')",
            "1e999",
            "nan",
            "--",
            "\u{0}",
            "r'x'",
        ] {
            assert!(eval(bad).is_err(), "{bad:?} should be an error");
        }
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        assert!(eval(&deep).is_err());
        let minus = "-".repeat(10_000) + "1";
        assert!(eval(&minus).is_err());
    }

    #[test]
    fn float_repr_matches_python() {
        assert_eq!(format_py_float(0.0), "0.0");
        assert_eq!(format_py_float(0.1), "0.1");
        assert_eq!(format_py_float(6e-4), "0.0006");
        assert_eq!(format_py_float(1e-5), "1e-05");
        assert_eq!(format_py_float(2.0), "2.0");
        assert_eq!(format_py_float(1e16), "1e+16");
    }
}
