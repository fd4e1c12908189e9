//! The shape of a language: the `strings!` macro declares a table (one `&'static str` per key, or
//! a fixed-size array of them) together with its key list — [`super::Strings`] for the page,
//! [`super::CliStrings`] for the command line — and [`parse`] fills either from a language file.
//!
//! A language file holds one `key = value` per line (`hints.3 = …` for the fourth item of an
//! array); `#` starts a comment line; in values `\n` is a line break and `\\` a backslash.

/// Declares a table with one field per listed key (`name` or `name[N]`), plus the one
/// per-field accessor everything else is built on (kept small: this is wasm).
macro_rules! strings {
    ($(#[doc = $sdoc:literal])* $name:ident { $( $(#[doc = $doc:literal])* $field:ident $([$n:literal])? ),* $(,)? }) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: strings!(@ty $($n)?), )*
        }

        impl $crate::table::Table for $name {
            const NAMES: &'static [&'static str] = &[$( stringify!($field) ),*];
            const ARRAYS: &'static [bool] = &[$( strings!(@is_array $($n)?) ),*];

            fn empty() -> Self {
                $name { $( $field: strings!(@empty $($n)?), )* }
            }

            fn field_mut(&mut self, i: usize) -> &mut [&'static str] {
                let mut k = 0usize;
                $(
                    if i == k {
                        return strings!(@slice self.$field $(, $n)?);
                    }
                    k += 1;
                )*
                let _ = k;
                &mut []
            }
        }
    };
    (@ty) => { &'static str };
    (@ty $n:literal) => { [&'static str; $n] };
    (@empty) => { "" };
    (@empty $n:literal) => { [""; $n] };
    (@is_array) => { false };
    (@is_array $n:literal) => { true };
    (@slice $place:expr) => { std::slice::from_mut(&mut $place) };
    (@slice $place:expr, $n:literal) => { &mut $place[..] };
}

/// A table of strings that `strings!` declared.
pub trait Table: Clone {
    /// Field names, in declaration order.
    const NAMES: &'static [&'static str];
    /// Whether each field is an array (its keys are `name.0`, `name.1`, …).
    const ARRAYS: &'static [bool];

    /// A table with every string empty; [`parse`] fills it.
    fn empty() -> Self;

    /// The strings of field number `i` (one for a plain field).
    fn field_mut(&mut self, i: usize) -> &mut [&'static str];

    /// Every key of a language file, in declaration order (`hints.0` … for arrays).
    fn keys() -> Vec<String> {
        Self::empty()
            .entries()
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    /// Every `(key, value)` pair, in [`Table::keys`] order.
    fn entries(&self) -> Vec<(String, &'static str)> {
        let mut copy = self.clone();
        let mut out = Vec::new();
        for (i, name) in Self::NAMES.iter().enumerate() {
            let array = Self::ARRAYS[i];
            for (j, v) in copy.field_mut(i).iter().enumerate() {
                let key = if array {
                    format!("{name}.{j}")
                } else {
                    (*name).to_string()
                };
                out.push((key, *v));
            }
        }
        out
    }

    /// Sets the string a key names; false when no field has that key.
    fn set(&mut self, name: &str, index: Option<usize>, value: &'static str) -> bool {
        let Some(i) = Self::NAMES.iter().position(|n| *n == name) else {
            return false;
        };
        let array = Self::ARRAYS[i];
        let slot = self.field_mut(i);
        match (array, index) {
            (false, None) => slot[0] = value,
            (true, Some(j)) if j < slot.len() => slot[j] = value,
            _ => return false,
        }
        true
    }
}

/// What is wrong with a language file. A file with problems still yields a usable language (see
/// [`parse`]); tests turn every problem into a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// A line that is not `key = value`.
    NotKeyValue { line: usize },
    /// A key the table has no field for.
    UnknownKey { line: usize, key: String },
    /// The same key twice.
    Duplicate { line: usize, key: String },
    /// A key the file lacks.
    Missing { key: String },
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::NotKeyValue { line } => write!(f, "line {line}: not `key = value`"),
            ParseError::UnknownKey { line, key } => write!(f, "line {line}: unknown key {key}"),
            ParseError::Duplicate { line, key } => write!(f, "line {line}: {key} given twice"),
            ParseError::Missing { key } => write!(f, "missing key {key}"),
        }
    }
}

/// Reads a language file. Keys the file lacks are taken from `fallback` (so a damaged download
/// still renders a whole page) and reported, like every other problem, in the second value.
pub fn parse<T: Table>(text: &'static str, fallback: Option<&T>) -> (T, Vec<ParseError>) {
    let mut strings = T::empty();
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((key, value)) = raw.split_once(" = ") else {
            errors.push(ParseError::NotKeyValue { line });
            continue;
        };
        let key = key.trim();
        let (name, index) = split_key(key);
        if !strings.set(name, index, unescape(value)) {
            errors.push(ParseError::UnknownKey {
                line,
                key: key.to_string(),
            });
        } else if !seen.insert(key) {
            errors.push(ParseError::Duplicate {
                line,
                key: key.to_string(),
            });
        }
    }
    let fallback = fallback.map(T::entries).unwrap_or_default();
    for (n, key) in T::keys().into_iter().enumerate() {
        if seen.contains(key.as_str()) {
            continue;
        }
        if let Some(&(_, value)) = fallback.get(n) {
            let (name, index) = split_key(&key);
            strings.set(name, index, value);
        }
        errors.push(ParseError::Missing { key });
    }
    (strings, errors)
}

/// `hints.3` → (`hints`, Some(3)); `title` → (`title`, None).
fn split_key(key: &str) -> (&str, Option<usize>) {
    match key.split_once('.') {
        Some((name, index)) => match index.parse() {
            Ok(i) => (name, Some(i)),
            Err(_) => (key, None),
        },
        None => (key, None),
    }
}

/// `\n` → line break, `\\` → backslash; the text is leaked once per language loaded (at most
/// five), which is what lets every string be `&'static`.
fn unescape(value: &'static str) -> &'static str {
    if !value.contains('\\') {
        return value;
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    Box::leak(out.into_boxed_str())
}

/// The inverse of [`unescape`], for writing a language file.
#[cfg(test)]
pub fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_keys_arrays_escapes_and_reports_problems() {
        let text =
            "# comment\n\ntitle = vramfit\nhints.2 = a\\nb\nnope = x\ntitle = again\nbroken line\n";
        let (s, errors) = parse::<super::super::Strings>(text, None);
        assert_eq!(s.title, "again");
        assert_eq!(s.hints[2], "a\nb");
        assert!(errors.contains(&ParseError::UnknownKey {
            line: 5,
            key: "nope".into()
        }));
        assert!(errors.contains(&ParseError::Duplicate {
            line: 6,
            key: "title".into()
        }));
        assert!(errors.contains(&ParseError::NotKeyValue { line: 7 }));
        assert!(errors.contains(&ParseError::Missing {
            key: "tagline".into()
        }));
        assert!(!errors.contains(&ParseError::Missing {
            key: "title".into()
        }));
    }

    #[test]
    fn missing_keys_fall_back() {
        let en = super::super::en();
        let (s, _) = parse("title = Titel\n", Some(en));
        assert_eq!(s.title, "Titel");
        assert_eq!(s.tagline, en.tagline);
        assert_eq!(s.hints[3], en.hints[3]);
    }

    #[test]
    fn escape_round_trips() {
        let v = "a\\b\nc";
        let leaked: &'static str = Box::leak(escape(v).into_boxed_str());
        assert_eq!(unescape(leaked), v);
    }
}
