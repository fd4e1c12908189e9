//! nanoGPT config files through the configurator.
#![no_main]

use estimator::configurator::Configurator;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let mut c = Configurator::new();
    c.apply_file("fuzz.py", text);
    if let Ok((cfg, _)) = c.finish() {
        assert!(cfg.validate().is_ok());
    }
});
