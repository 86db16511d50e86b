//! The shell splitter never panics, and never returns an empty word list for
//! a segment it claims to understand.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(cmd) = std::str::from_utf8(data) {
        for seg in permc::shell::split(cmd) {
            if seg.opaque.is_none() {
                assert!(!seg.words.is_empty(), "{cmd:?}");
            }
        }
    }
});
