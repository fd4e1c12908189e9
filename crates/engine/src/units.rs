//! Byte counts as people read them.

use crate::decimal::Fixed;

/// Bytes in a GiB (what PyTorch's messages call GiB).
pub const GIB: u128 = 1 << 30;
pub const MIB: u128 = 1 << 20;

/// Bytes as GiB, for display.
pub fn gib(bytes: u128) -> f64 {
    bytes as f64 / GIB as f64
}

/// Signed bytes as GiB.
pub fn gib_signed(bytes: i128) -> f64 {
    bytes as f64 / GIB as f64
}

/// `12.34 GiB`, or MiB below one GiB so small numbers keep their digits.
pub fn format_bytes(bytes: u128) -> String {
    if bytes >= GIB {
        format!("{} GiB", Fixed(gib(bytes), 2))
    } else if bytes >= MIB {
        format!("{} MiB", Fixed(bytes as f64 / MIB as f64, 1))
    } else if bytes >= 1024 {
        format!("{} KiB", Fixed(bytes as f64 / 1024.0, 1))
    } else {
        format!("{bytes} B")
    }
}

/// Parameter counts as train.py prints them (`123.59M`).
pub fn format_params(n: u64) -> String {
    format!("{}M", Fixed(n as f64 / 1e6, 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format_bytes(3 * GIB / 2), "1.50 GiB");
        assert_eq!(format_bytes(32 * MIB), "32.0 MiB");
        assert_eq!(format_bytes(2048), "2.0 KiB");
        assert_eq!(format_bytes(12), "12 B");
        assert_eq!(format_params(123_587_328), "123.59M");
    }
}
