//! Python literals and arithmetic as config files write them.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|expr: &str| {
    let _ = estimator::pyliteral::eval(expr);
});
