//! Numbers as the page shows them.

use estimator::units::GIB;

/// `9.34 GiB` (two decimals; the bar's segments and the verdict).
pub fn gib(bytes: u128) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB as f64)
}

/// A signed amount of GiB without sign (the words say which way).
pub fn gib_abs(bytes: i128) -> String {
    format!("{:.2} GiB", bytes.unsigned_abs() as f64 / GIB as f64)
}

/// `123.59M` as train.py prints parameter counts.
pub fn params(n: u64) -> String {
    format!("{:.2}M", n as f64 / 1e6)
}

/// `491,520`.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A byte count in full, for tooltips: `1,648,361,472 B`.
pub fn bytes_exact(b: u128) -> String {
    format!("{} B", grouped(b.min(u64::MAX as u128) as u64))
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
}
