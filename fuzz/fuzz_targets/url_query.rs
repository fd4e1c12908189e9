//! The URL decoder: never panics, always a valid run, and what it writes reads back the same.
#![no_main]

use estimator::query::PageState;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|query: &str| {
    let (state, _) = PageState::from_query(query);
    assert!(state.config.validate().is_ok());
    assert_eq!(PageState::from_query(&state.to_query()).0, state);
});
