//! Anything pasted into the page.
#![no_main]

use estimator::query::PageState;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let out = estimator::paste::interpret(text, &PageState::default());
    assert!(out.state.config.validate().is_ok());
});
