//! Decimal text ↔ `f64`, exactly as the standard library does it, without its machinery.
//!
//! Why: `str::parse::<f64>` and `format!("{x}")`/`{x:.2}`/`{x:e}` bring core's Grisu and Dragon
//! formatters and the Eisel-Lemire power table into the page's wasm: 24 KB gzipped, a tenth of
//! the page. The page formats a few numbers per input and parses what people
//! type, so a small exact bignum implementation is fast enough and a fraction of the size.
//! Every function here returns what the standard library returns, byte for byte; the tests
//! check that against `std` on random bit patterns and random decimal strings.

/// Unsigned integer of any size, little-endian base-2³² limbs, no trailing zero limbs.
#[derive(Clone)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(x: u64) -> Big {
        let mut b = Big(vec![x as u32, (x >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// `self = self × m + a`.
    fn mul_add(&mut self, m: u32, a: u32) {
        let mut carry = a as u64;
        for limb in &mut self.0 {
            let v = *limb as u64 * m as u64 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow(&mut self, base: u32, mut n: u32) {
        // the largest power of 5 or 10 in a limb: 5¹³, 10⁹
        let (step, per) = if base == 5 {
            (13, 1_220_703_125)
        } else {
            (9, 1_000_000_000)
        };
        while n >= step {
            self.mul_add(per, 0);
            n -= step;
        }
        self.mul_add(base.pow(n), 0);
    }

    fn bits(&self) -> u32 {
        match self.0.last() {
            None => 0,
            Some(top) => 32 * (self.0.len() as u32 - 1) + (32 - top.leading_zeros()),
        }
    }

    /// Whether any bit below `i` is set.
    fn any_below(&self, i: u32) -> bool {
        let (limbs, rest) = ((i / 32) as usize, i % 32);
        self.0.iter().take(limbs).any(|&l| l != 0)
            || (rest > 0
                && self
                    .0
                    .get(limbs)
                    .is_some_and(|l| l & ((1 << rest) - 1) != 0))
    }

    fn shl(&mut self, n: u32) {
        let (limbs, rest) = ((n / 32) as usize, n % 32);
        if rest > 0 {
            let mut carry = 0;
            for limb in &mut self.0 {
                let v = *limb;
                *limb = v << rest | carry;
                carry = v >> (32 - rest);
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
        self.trim();
    }

    fn shr(&mut self, n: u32) {
        let (limbs, rest) = ((n / 32) as usize, n % 32);
        self.0.drain(..limbs.min(self.0.len()));
        if rest > 0 {
            for i in 0..self.0.len() {
                let next = self.0.get(i + 1).map_or(0, |n| n << (32 - rest));
                self.0[i] = self.0[i] >> rest | next;
            }
        }
        self.trim();
    }

    fn low_u64(&self) -> u64 {
        self.0.first().map_or(0, |&l| l as u64) | self.0.get(1).map_or(0, |&l| (l as u64) << 32)
    }

    fn ge(&self, other: &Big) -> bool {
        if self.0.len() != other.0.len() {
            return self.0.len() > other.0.len();
        }
        self.0.iter().rev().cmp(other.0.iter().rev()).is_ge()
    }

    /// `self -= other`, for `self ≥ other`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let v = *limb as i64 - other.0.get(i).map_or(0, |&o| o as i64) - borrow;
            borrow = (v < 0) as i64;
            *limb = v.rem_euclid(1 << 32) as u32;
        }
        self.trim();
    }

    /// The decimal digits, most significant first (empty for zero).
    fn digits(mut self) -> Vec<u8> {
        let mut chunks = Vec::new();
        while !self.is_zero() {
            let mut rem = 0u64;
            for limb in self.0.iter_mut().rev() {
                let v = rem << 32 | *limb as u64;
                *limb = (v / 1_000_000_000) as u32;
                rem = v % 1_000_000_000;
            }
            self.trim();
            chunks.push(rem as u32);
        }
        let mut out = Vec::new();
        for (i, chunk) in chunks.iter().rev().enumerate() {
            let mut d = [0u8; 9];
            let mut c = *chunk;
            for slot in d.iter_mut().rev() {
                *slot = (c % 10) as u8;
                c /= 10;
            }
            let skip = if i == 0 {
                d.iter().take_while(|&&x| x == 0).count()
            } else {
                0
            };
            out.extend_from_slice(&d[skip..]);
        }
        out
    }
}

/// A finite non-negative number as exact decimal digits: `0.d₁d₂…dₙ × 10^point`, `d₁ ≠ 0`,
/// no trailing zeros (no digits for zero).
struct Digits {
    digits: Vec<u8>,
    point: i32,
}

impl Digits {
    /// Every f64 has a finite decimal expansion: m·2^e = m·5^-e / 10^-e for e < 0.
    fn exact(x: f64) -> Digits {
        let bits = x.abs().to_bits();
        let (exp, frac) = ((bits >> 52) as i32, bits & ((1 << 52) - 1));
        let (m, e) = if exp == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, exp - 1075)
        };
        let mut n = Big::from_u64(m);
        let mut scale = 0;
        if e >= 0 {
            n.shl(e as u32);
        } else {
            n.mul_pow(5, (-e) as u32);
            scale = -e;
        }
        let digits = n.digits();
        let mut d = Digits {
            point: digits.len() as i32 - scale,
            digits,
        };
        d.trim();
        d
    }

    /// Rounded (half to even) to the first `keep` digits, which may carry into a new one.
    fn rounded(&self, keep: i32) -> Digits {
        let n = self.digits.len() as i32;
        if keep >= n {
            return Digits {
                digits: self.digits.clone(),
                point: self.point,
            };
        }
        if keep < 0 {
            // below half a unit of the last place kept
            return Digits {
                digits: Vec::new(),
                point: 0,
            };
        }
        let k = keep as usize;
        let tail = &self.digits[k..];
        let last_odd = k > 0 && self.digits[k - 1] % 2 == 1;
        let up = tail[0] > 5 || (tail[0] == 5 && (tail.len() > 1 || last_odd));
        let mut d = Digits {
            digits: self.digits[..k].to_vec(),
            point: self.point,
        };
        if up {
            d.increment();
        }
        d.trim();
        d
    }

    /// Adds one unit in the last digit kept (or makes `0.1 × 10^(point+1)` of nothing).
    fn increment(&mut self) {
        for d in self.digits.iter_mut().rev() {
            if *d == 9 {
                *d = 0;
            } else {
                *d += 1;
                return;
            }
        }
        self.digits.insert(0, 1);
        self.point += 1;
    }

    fn trim(&mut self) {
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
        if self.digits.is_empty() {
            self.point = 0;
        }
    }

    /// The f64 these digits read back as.
    fn value(&self) -> f64 {
        let mut big = Big(Vec::new());
        for &d in &self.digits {
            big.mul_add(10, d as u32);
        }
        from_decimal(big, self.point as i64 - self.digits.len() as i64)
    }

    /// The shortest digits that read back as `x` (closest to it when several are as short).
    fn shortest(x: f64) -> Digits {
        let exact = Digits::exact(x);
        for n in 1..=17 {
            if n >= exact.digits.len() {
                break;
            }
            let mut down = Digits {
                digits: exact.digits[..n].to_vec(),
                point: exact.point,
            };
            let mut up = Digits {
                digits: down.digits.clone(),
                point: down.point,
            };
            up.increment();
            down.trim();
            up.trim();
            let (down_ok, up_ok) = (down.value() == x.abs(), up.value() == x.abs());
            match (down_ok, up_ok) {
                // both read back: the nearer, and up from halfway (as core's Grisu and Dragon do)
                (true, true) if exact.digits[n] >= 5 => return up,
                (true, true) => return down,
                (true, false) => return down,
                (false, true) => return up,
                (false, false) => {}
            }
        }
        exact
    }

    /// Plain notation: all integer digits, then `places` fractional digits (as many as there
    /// are when `None`).
    fn push_plain(&self, out: &mut String, places: Option<usize>) {
        let digit = |at: i64| {
            let d = usize::try_from(at).ok().and_then(|i| self.digits.get(i));
            (b'0' + d.copied().unwrap_or(0)) as char
        };
        if self.point <= 0 {
            out.push('0');
        }
        out.extend((0..self.point as i64).map(digit));
        let frac = places.unwrap_or((self.digits.len() as i64 - self.point as i64).max(0) as usize);
        if frac > 0 {
            out.push('.');
            // fractional digit j is digit number point + j
            out.extend((0..frac as i64).map(|j| digit(self.point as i64 + j)));
        }
    }
}

fn special(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("NaN")
    } else if x == f64::INFINITY {
        Some("inf")
    } else if x == f64::NEG_INFINITY {
        Some("-inf")
    } else {
        None
    }
}

fn sign(x: f64) -> String {
    if x.is_sign_negative() {
        "-".into()
    } else {
        String::new()
    }
}

/// `x` with `.1` decimals inside a `format!`: `format!("{}", Fixed(x, 1))` is
/// `format!("{x:.1}")` (width and fill flags are not supported).
pub struct Fixed(pub f64, pub usize);

impl std::fmt::Display for Fixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&fixed(self.0, self.1))
    }
}

/// `x` inside a `format!` as `{x}` writes it.
pub struct Shortest(pub f64);

impl std::fmt::Display for Shortest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&shortest(self.0))
    }
}

/// `format!("{x:.places$}")`.
pub fn fixed(x: f64, places: usize) -> String {
    if let Some(s) = special(x) {
        return s.into();
    }
    let exact = Digits::exact(x);
    let d = exact.rounded(exact.point.saturating_add(places.min(1100) as i32));
    let mut out = sign(x);
    d.push_plain(&mut out, Some(places));
    out
}

/// `format!("{x}")`: the shortest digits that read back as `x`, never with an exponent.
pub fn shortest(x: f64) -> String {
    if let Some(s) = special(x) {
        return s.into();
    }
    let mut out = sign(x);
    Digits::shortest(x).push_plain(&mut out, None);
    out
}

/// A number a user typed, echoed back as JavaScript prints numbers: plain from 1e-6 up to
/// 1e21 (`0.25`, `16`), with an exponent outside (`1e-300`, `1e+300` as `1e300`), so a value far
/// out of range is not shown as hundreds of digits.
pub fn compact(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-6..1e21).contains(&a) || !a.is_finite() {
        shortest(x)
    } else {
        shortest_exp(x)
    }
}

/// `format!("{x:e}")`: `1e-5`, `1.5e16`, `0e0`.
pub fn shortest_exp(x: f64) -> String {
    if let Some(s) = special(x) {
        return s.into();
    }
    let d = Digits::shortest(x);
    let mut out = sign(x);
    let digits: Vec<char> = d.digits.iter().map(|&c| (b'0' + c) as char).collect();
    out.push(digits.first().copied().unwrap_or('0'));
    if digits.len() > 1 {
        out.push('.');
        out.extend(&digits[1..]);
    }
    let exp = if digits.is_empty() { 0 } else { d.point - 1 };
    out.push('e');
    out.push_str(&exp.to_string());
    out
}

/// `s.parse::<f64>().ok()`: `[+-]` then `inf`, `infinity`, `nan` (any case) or digits with an
/// optional point and exponent (`1.`, `.5`, `1e-3`), correctly rounded.
pub fn parse(s: &str) -> Option<f64> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let signed = |x: f64| if negative { -x } else { x };
    if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        return Some(signed(f64::INFINITY));
    }
    if body.eq_ignore_ascii_case("nan") {
        return Some(f64::NAN);
    }
    let b = body.as_bytes();
    let mut i = 0;
    // significant digits (at most MAX_DIGITS, then a sticky 1) and the decimal exponent
    const MAX_DIGITS: usize = 800;
    let (mut digits, mut kept, mut exp10, mut sticky, mut seen) =
        (Big(Vec::new()), 0, 0i64, false, 0);
    let mut take = |d: u8, fraction: bool, exp10: &mut i64| {
        if kept == 0 && d == 0 {
            if fraction {
                *exp10 -= 1;
            }
        } else if kept < MAX_DIGITS {
            digits.mul_add(10, d as u32);
            kept += 1;
            if fraction {
                *exp10 -= 1;
            }
        } else {
            sticky |= d != 0;
            if !fraction {
                *exp10 += 1;
            }
        }
    };
    while i < b.len() && b[i].is_ascii_digit() {
        take(b[i] - b'0', false, &mut exp10);
        i += 1;
        seen += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            take(b[i] - b'0', true, &mut exp10);
            i += 1;
            seen += 1;
        }
    }
    if seen == 0 {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let neg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            e = (e * 10 + (b[i] - b'0') as i64).min(1 << 40);
            i += 1;
        }
        if i == start {
            return None;
        }
        exp10 += if neg { -e } else { e };
    }
    if i != b.len() {
        return None;
    }
    if sticky {
        // digits past the kept ones only break ties: one more non-zero digit says "above"
        digits.mul_add(10, 1);
        exp10 -= 1;
    }
    Some(signed(from_decimal(digits, exp10)))
}

/// The f64 nearest to `digits × 10^exp10` (ties to even).
fn from_decimal(mut n: Big, exp10: i64) -> f64 {
    if n.is_zero() {
        return 0.0;
    }
    // decimal digits of n, roughly: bits × log10(2)
    let magnitude = (n.bits() as i64 * 30103) / 100_000 + 1 + exp10;
    if magnitude > 310 {
        return f64::INFINITY;
    }
    if magnitude < -343 {
        return 0.0;
    }
    // value = q × 2^e2, plus a sticky bit for what q leaves out
    let (q, e2, sticky) = if exp10 >= 0 {
        n.mul_pow(10, exp10 as u32);
        let drop = n.bits().saturating_sub(57);
        let sticky = n.any_below(drop);
        n.shr(drop);
        (n.low_u64(), drop as i64, sticky)
    } else {
        let mut den = Big::from_u64(1);
        den.mul_pow(10, (-exp10) as u32);
        // scale so the quotient has 56 or 57 bits to round from
        let k = 56 + den.bits() as i64 - n.bits() as i64;
        if k >= 0 {
            n.shl(k as u32);
        } else {
            den.shl((-k) as u32);
        }
        let qbits = (n.bits() + 1).saturating_sub(den.bits());
        let mut q = 0u64;
        let mut t = den.clone();
        t.shl(qbits.saturating_sub(1));
        for i in (0..qbits).rev() {
            if n.ge(&t) {
                n.sub(&t);
                q |= 1 << i;
            }
            t.shr(1);
        }
        (q, -k, !n.is_zero())
    };
    round_to_f64(q, e2, sticky)
}

/// The f64 nearest to `q × 2^e2` (+ a little if `sticky`), ties to even.
fn round_to_f64(q: u64, e2: i64, sticky: bool) -> f64 {
    let len = 64 - q.leading_zeros() as i64;
    // the exponent of the last bit kept: 53 bits, or fewer in the subnormal range
    let mut t = (e2 + len - 53).max(-1074);
    let drop = t - e2;
    let mut m = if drop <= 0 {
        q << (-drop)
    } else if drop >= 64 {
        0
    } else {
        let kept = q >> drop;
        let rest = q & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        let up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        kept + up as u64
    };
    if m == 1 << 53 {
        m >>= 1;
        t += 1;
    }
    if m == 0 {
        return 0.0;
    }
    if m >= 1 << 52 {
        let biased = t + 52 + 1023;
        if biased >= 2047 {
            return f64::INFINITY;
        }
        f64::from_bits((biased as u64) << 52 | (m & ((1 << 52) - 1)))
    } else {
        f64::from_bits(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: f64, b: Option<f64>) -> bool {
        b.is_some_and(|b| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()))
    }

    #[test]
    fn formats_as_std() {
        for x in [
            0.0,
            -0.0,
            1.0,
            0.1,
            0.25,
            2.5,
            0.125,
            1e21,
            1e-7,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            0.1 + 0.2,
            123.456,
            9.995,
            0.5,
            1.5,
            11.76,
            6e-4,
            1e16,
            1.5e16,
            1e-5,
            99.99999,
        ] {
            for x in [x, -x] {
                assert_eq!(shortest(x), format!("{x}"), "{x:e}");
                assert_eq!(shortest_exp(x), format!("{x:e}"), "{x:e}");
                for p in [0, 1, 2, 3, 6, 17, 30] {
                    assert_eq!(fixed(x, p), format!("{x:.p$}"), "{x:e} .{p}");
                }
            }
        }
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(shortest(x), format!("{x}"));
            assert_eq!(fixed(x, 2), format!("{x:.2}"));
            assert_eq!(shortest_exp(x), format!("{x:e}"));
        }
    }

    #[test]
    fn parses_as_std() {
        for s in [
            "1.",
            "1.e3",
            ".5",
            ".",
            "e5",
            "1e",
            "+inf",
            "-Infinity",
            "NaN",
            "+nan",
            " 1",
            "1_0",
            "0x1",
            "1e+5",
            "1E5",
            "00.1",
            "",
            "-",
            "+",
            "0",
            "-0",
            "1e400",
            "1e-400",
            "2.4703282292062328e-324",
            "2.4703282292062327e-324",
            "4.9406564584124654e-324",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "9007199254740993",
            "0.30000000000000004",
            "123456789012345678901234567890e-10",
            "1e99999999999999999999",
            "infinit",
            "nana",
            "1.5e-",
            "--1",
            "1..2",
        ] {
            let want = s.parse::<f64>().ok();
            let got = parse(s);
            assert!(
                want.map_or(got.is_none(), |w| same(w, got)),
                "{s:?}: std {want:?}, ours {got:?}"
            );
        }
        let long = format!("0.{}1", "0".repeat(2000));
        assert_eq!(parse(&long), long.parse().ok());
        let ties = format!("9007199254740993{}", "0".repeat(900));
        assert_eq!(parse(&ties), ties.parse().ok());
        let above = format!("9007199254740993{}1", "0".repeat(900));
        assert_eq!(parse(&above), above.parse().ok());
    }
}
