//! `estimator::decimal` against the standard library it replaces in the page: the same text for
//! every f64 and the same f64 for every decimal string.

use estimator::decimal;
use proptest::prelude::*;

fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Decimal strings as people and programs write them, plus the edges of the grammar.
fn decimal_text() -> impl Strategy<Value = String> {
    (
        "[+-]?",
        "[0-9]{0,25}",
        prop_oneof![Just(String::new()), "\\.[0-9]{0,25}"],
        prop_oneof![Just(String::new()), "[eE][+-]?[0-9]{1,3}", "[eE]"],
    )
        .prop_map(|(s, i, f, e)| format!("{s}{i}{f}{e}"))
}

// 3,000 cases each keep the debug-build test run short; 400,000 each (2 million checks) passed
// in release when this was written.
proptest! {
    #![proptest_config(ProptestConfig::with_cases(3_000))]

    #[test]
    fn formats_every_bit_pattern_as_std(bits in any::<u64>(), places in 0usize..24) {
        let x = f64::from_bits(bits);
        prop_assert_eq!(decimal::shortest(x), format!("{x}"));
        prop_assert_eq!(decimal::shortest_exp(x), format!("{x:e}"));
        prop_assert_eq!(decimal::fixed(x, places), format!("{x:.places$}"));
    }

    #[test]
    fn formats_everyday_numbers_as_std(x in -1e7f64..1e7, places in 0usize..8) {
        prop_assert_eq!(decimal::shortest(x), format!("{x}"));
        prop_assert_eq!(decimal::fixed(x, places), format!("{x:.places$}"));
    }

    #[test]
    fn parses_as_std(s in decimal_text()) {
        let ours = decimal::parse(&s);
        match s.parse::<f64>() {
            Ok(x) => prop_assert!(ours.is_some_and(|o| same_bits(o, x)), "{}: std {}, ours {:?}", s, x, ours),
            Err(_) => prop_assert!(ours.is_none(), "{}: std refuses, ours {:?}", s, ours),
        }
    }

    #[test]
    fn reads_back_what_it_writes(bits in any::<u64>()) {
        let x = f64::from_bits(bits);
        prop_assert!(decimal::parse(&decimal::shortest(x)).is_some_and(|y| same_bits(x, y)));
        prop_assert!(decimal::parse(&decimal::shortest_exp(x)).is_some_and(|y| same_bits(x, y)));
    }

    #[test]
    fn parses_any_text_as_std(s in ".{0,12}") {
        let ours = decimal::parse(&s);
        let std = s.parse::<f64>().ok();
        let agree = match (ours, std) {
            (Some(a), Some(b)) => same_bits(a, b),
            (None, None) => true,
            _ => false,
        };
        prop_assert!(agree, "{:?}: std {:?}, ours {:?}", s, std, ours);
    }
}
