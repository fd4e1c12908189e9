//! Numbers as the page shows them, with the language's decimal and thousands separators
//! (`12.50 GiB`, `12,50 GiB`). GiB stays GiB in every language.

use std::cell::Cell;

use estimator::units::GIB;

use crate::BarWords;

thread_local! {
    /// (decimal separator, thousands separator) of the language being rendered.
    static SEPARATORS: Cell<(char, char)> = const { Cell::new(('.', ',')) };
}

/// Uses a language's separators from now on (`decimal_sep` and `group_sep` of its file; the page
/// calls it before rendering a language).
pub fn use_separators(words: &BarWords) {
    let first = |s: &str, default| s.chars().next().unwrap_or(default);
    SEPARATORS.set((first(words.decimal_sep, '.'), first(words.group_sep, ',')));
}

/// A number Rust formatted (`1234.5`, `-0.25`), with the language's decimal separator.
fn localize(formatted: String) -> String {
    let (decimal, _) = SEPARATORS.get();
    if decimal == '.' {
        formatted
    } else {
        formatted.replace('.', decimal.encode_utf8(&mut [0; 4]))
    }
}

/// `x` with `places` decimals: `0.54`, `61.7`.
pub fn decimal(x: f64, places: usize) -> String {
    localize(estimator::decimal::fixed(x, places))
}

/// `9.34 GiB` (two decimals; the bar's segments and the verdict).
pub fn gib(bytes: u128) -> String {
    format!("{} GiB", decimal(bytes as f64 / GIB as f64, 2))
}

/// A signed amount of GiB without sign (the words say which way).
pub fn gib_abs(bytes: i128) -> String {
    gib(bytes.unsigned_abs())
}

/// A step's time as people read it: `53 ms` under a second, else `1.7 s`.
pub fn step_time(seconds: f64) -> String {
    if seconds < 1.0 {
        format!("{} ms", decimal(seconds * 1000.0, 0))
    } else {
        format!("{} s", decimal(seconds, 1))
    }
}

/// A run's length as people plan with it: `45 min` under an hour, `1.5 h` under ten, `61 h` above.
pub fn duration(seconds: f64) -> String {
    if seconds < 3600.0 {
        format!("{} min", decimal((seconds / 60.0).max(1.0), 0))
    } else if seconds < 36_000.0 {
        format!("{} h", decimal(seconds / 3600.0, 1))
    } else {
        format!("{} h", decimal(seconds / 3600.0, 0))
    }
}

/// `123.59M` as train.py prints parameter counts.
pub fn params(n: u64) -> String {
    format!("{}M", decimal(n as f64 / 1e6, 2))
}

/// `491,520`.
pub fn grouped(n: u64) -> String {
    let (_, group) = SEPARATORS.get();
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(group);
        }
        out.push(ch);
    }
    out
}

/// A byte count in full, for tooltips: `1,648,361,472 B`.
pub fn bytes_exact(b: u128) -> String {
    format!("{} B", grouped(b.min(u64::MAX as u128) as u64))
}

/// A byte count in the largest fitting unit: `786.0 MiB`, `3.07 GiB`.
pub fn bytes(b: u128) -> String {
    localize(estimator::units::format_bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(grouped(491_520), "491,520");
        assert_eq!(grouped(12), "12");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(params(123_587_328), "123.59M");
        assert_eq!(gib(3 << 29), "1.50 GiB");
    }

    #[test]
    fn formats_for_the_language() {
        let (de, problems) = crate::parse::<BarWords>("decimal_sep = ,\ngroup_sep = .\n", None);
        assert!(problems
            .iter()
            .all(|p| matches!(p, crate::ParseError::Missing { .. })));
        use_separators(&de);
        assert_eq!(grouped(124_373_760), "124.373.760");
        assert_eq!(gib(3 << 29), "1,50 GiB");
        assert_eq!(params(123_587_328), "123,59M");
        assert_eq!(bytes(786 << 20), "786,0 MiB");
        use_separators(&crate::en().bar_words());
        assert_eq!(gib(3 << 29), "1.50 GiB");
    }
}
