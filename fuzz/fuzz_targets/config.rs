//! Run configs (TOML): parsing and validation never panic, and a config
//! that validates writes back to TOML that loads to the same config.
#![no_main]
use halatafl_train::RunConfig;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = RunConfig::from_toml(text, Path::new("fuzz.toml")) {
        let written = config.to_toml();
        let again = RunConfig::from_toml(&written, Path::new("written.toml"))
            .expect("a written config loads");
        assert_eq!(again.to_toml(), written);
    }
});
