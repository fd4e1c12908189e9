//! train.py and torchrun command lines.
#![no_main]

use estimator::configurator::Configurator;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|line: &str| {
    let mut c = Configurator::new();
    if c.apply_command_line(line).is_ok() {
        if let Ok((cfg, _)) = c.finish() {
            assert!(cfg.validate().is_ok());
        }
    }
});
