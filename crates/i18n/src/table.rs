//! The shape of a language: the `strings!` macro declares a table (one `&'static str` per key, or
//! a fixed-size array of them) together with its key list — [`super::Strings`] for the page,
//! [`super::CliStrings`] for the command line — and [`parse`] fills either from a language file.
//!
//! A language file holds one `key = value` per line (`links.1 = …` for the second item
//! of an array; `hints.n_layer = …` for the item of an array keyed by a list of names, so that
//! reordering the list cannot shift a translation onto another item); `#` starts a comment line;
//! in values `\n` is a line break and `\\` a backslash.

/// Declares a table with one field per listed key — `name`, `name[N]` (items keyed `name.0` …),
/// `name[by LIST]` (items keyed `name.<LIST[i]>`, LIST a `&[&str]` constant) or
/// `name[keys K]` (items keyed by whole keys that `K`, a [`Keys`], makes and finds: each
/// program's section of the file, from the registry) — plus the one
/// per-field accessor everything else is built on (kept small: this is wasm).
macro_rules! strings {
    ($(#[doc = $sdoc:literal])* $name:ident { $( $(#[doc = $doc:literal])* $field:ident $([$($n:tt)+])? ),* $(,)? }) => {
        $(#[doc = $sdoc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            $( $(#[doc = $doc])* pub $field: strings!(@ty $($($n)+)?), )*
        }

        impl $crate::table::Table for $name {
            const NAMES: &'static [&'static str] = &[$( stringify!($field) ),*];
            const ITEMS: &'static [$crate::table::Items] = &[$( strings!(@items $($($n)+)?) ),*];

            fn empty() -> Self {
                $name { $( $field: strings!(@empty $($($n)+)?), )* }
            }

            fn field_mut(&mut self, i: usize) -> &mut [&'static str] {
                let mut k = 0usize;
                $(
                    if i == k {
                        return strings!(@slice self.$field $(, $($n)+)?);
                    }
                    k += 1;
                )*
                let _ = k;
                &mut []
            }
        }
    };
    (@ty) => { &'static str };
    (@ty by $list:path) => { [&'static str; $list.len()] };
    (@ty $n:literal) => { [&'static str; $n] };
    (@ty keys $keys:path) => { [&'static str; $crate::table::MAX_KEYS] };
    (@empty) => { "" };
    (@empty by $list:path) => { [""; $list.len()] };
    (@empty $n:literal) => { [""; $n] };
    (@empty keys $keys:path) => { [""; $crate::table::MAX_KEYS] };
    (@items) => { $crate::table::Items::One };
    (@items by $list:path) => { $crate::table::Items::Named(&$list) };
    (@items $n:literal) => { $crate::table::Items::Indexed };
    (@items keys $keys:path) => { $crate::table::Items::Keys(&$keys) };
    (@slice $place:expr) => { std::slice::from_mut(&mut $place) };
    (@slice $place:expr, keys $keys:path) => { &mut $place[..($keys.count)().min($crate::table::MAX_KEYS)] };
    (@slice $place:expr, $($n:tt)+) => { &mut $place[..] };
}

/// How a field's strings are keyed in a language file.
#[derive(Clone, Copy, Debug)]
pub enum Items {
    /// One string: `name`.
    One,
    /// An array by position: `name.0`, `name.1`, …
    Indexed,
    /// An array by these names, in its order: `name.<names[i]>`.
    Named(&'static [&'static str]),
    /// An array by whole keys, which the field's name is not part of.
    Keys(&'static Keys),
}

/// Room for an [`Items::Keys`] field's items: a fixed array, so that a table stays plain
/// `&'static str`s, copied as one block (a `Vec` field made its derived `Clone`, inlined where
/// [`Table::entries`] copies the table, 5 KB of wasm). Every program's words today: 140; a test
/// fails before a new program's would not fit.
pub const MAX_KEYS: usize = 512;

/// Whole keys made at run time: how many, the `i`th, and which one a key is. Finding a key does
/// not make them all (a language file's parse asks for each of its lines).
#[derive(Debug)]
pub struct Keys {
    pub count: fn() -> usize,
    pub key: fn(usize) -> String,
    pub find: fn(&str) -> Option<usize>,
}

/// A table of strings that `strings!` declared.
pub trait Table: Clone {
    /// Field names, in declaration order.
    const NAMES: &'static [&'static str];
    /// How each field's strings are keyed.
    const ITEMS: &'static [Items];

    /// A table with every string empty; [`parse`] fills it.
    fn empty() -> Self;

    /// The strings of field number `i` (one for a plain field).
    fn field_mut(&mut self, i: usize) -> &mut [&'static str];

    /// Every key of a language file, in declaration order (`links.0` …, `stages.forward` …
    /// for arrays).
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
            for (j, v) in copy.field_mut(i).iter().enumerate() {
                let key = match Self::ITEMS[i] {
                    Items::One => (*name).to_string(),
                    Items::Indexed => format!("{name}.{j}"),
                    Items::Named(names) => format!("{name}.{}", names[j]),
                    Items::Keys(keys) => (keys.key)(j),
                };
                out.push((key, *v));
            }
        }
        out
    }

    /// Sets the string a key names (`name`, or `name.item`); false when no field has that key.
    fn set(&mut self, key: &str, value: &'static str) -> bool {
        let (name, item) = match key.split_once('.') {
            Some((name, item)) => (name, Some(item)),
            None => (key, None),
        };
        let Some(i) = Self::NAMES.iter().position(|n| *n == name) else {
            return self.set_by_whole_key(key, value);
        };
        let j = match (Self::ITEMS[i], item) {
            (Items::One, None) => 0,
            (Items::Indexed, Some(item)) => match item.parse() {
                Ok(j) => j,
                Err(_) => return false,
            },
            (Items::Named(names), Some(item)) => match names.iter().position(|n| *n == item) {
                Some(j) => j,
                None => return false,
            },
            _ => return false,
        };
        match self.field_mut(i).get_mut(j) {
            Some(slot) => *slot = value,
            None => return false,
        }
        true
    }

    /// [`Table::set`] for a key that names no field: one of an [`Items::Keys`] field's keys.
    fn set_by_whole_key(&mut self, key: &str, value: &'static str) -> bool {
        for (i, items) in Self::ITEMS.iter().enumerate() {
            if let Items::Keys(keys) = items {
                if let Some(j) = (keys.find)(key) {
                    self.field_mut(i)[j] = value;
                    return true;
                }
            }
        }
        false
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
        if !strings.set(key, unescape(value)) {
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
            strings.set(&key, value);
        }
        errors.push(ParseError::Missing { key });
    }
    (strings, errors)
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
    use estimator::programs::Program;

    #[test]
    fn reads_keys_arrays_escapes_and_reports_problems() {
        let text = "# comment\n\ntitle = vramfit\nstages.forward = a\\nb\nnope = x\ntitle = again\nbroken line\n\
                    links.1 = p\nstages.2 = positional\nstages.nothing = y\n\
                    nanogpt.hints.n_embd = width\nnanogpt.hints.n_nothing = z\n";
        let (s, errors) = parse::<super::super::Strings>(text, None);
        assert_eq!(s.title, "again");
        // a named item lands where its name is in the list, whatever the list's order
        let forward = estimator::sequence::Stage::IDS
            .iter()
            .position(|k| *k == "forward");
        assert_eq!(s.stages[forward.unwrap()], "a\nb");
        assert_eq!(s.links[1], "p");
        // a program's section: whole keys from the registry, found by name
        assert_eq!(s.program(Program::NanoGpt).hint("n_embd"), "width");
        // named arrays take names only, and only theirs; a section only its keys
        for (line, key) in [
            (9, "stages.2"),
            (10, "stages.nothing"),
            (12, "nanogpt.hints.n_nothing"),
        ] {
            assert!(errors.contains(&ParseError::UnknownKey {
                line,
                key: key.into()
            }));
        }
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
            key: "nanogpt.tagline".into()
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
        let (ours, theirs) = (s.program(Program::Nanochat), en.program(Program::Nanochat));
        assert_eq!(ours.tagline(), theirs.tagline());
        assert_eq!(ours.hint("depth"), theirs.hint("depth"));
    }

    #[test]
    fn escape_round_trips() {
        let v = "a\\b\nc";
        let leaked: &'static str = Box::leak(escape(v).into_boxed_str());
        assert_eq!(unescape(leaked), v);
    }
}
