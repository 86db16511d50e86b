//! Stage 1: the parser never panics and every error has a location.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        if let Err(diags) = permc::syntax::parse(src, permc::syntax::loc::FileId(0)) {
            assert!(diags.iter().all(|d| d.loc().is_some()));
        }
    }
});
