//! CUDA out-of-memory messages, and the diagnosis against the default run.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let m = estimator::oom::parse(text);
    let _ = estimator::oom::diagnose(&m, &Default::default());
});
