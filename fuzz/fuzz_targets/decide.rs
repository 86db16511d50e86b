//! Stage 4: any request line gets a decision; malformed ones are denied.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

static POLICY: OnceLock<permc::Policy> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let policy = POLICY.get_or_init(|| {
        let src = include_str!("../../examples/agent.perm");
        permc::Policy::compile("agent.perm", src, &permc::Options::logical()).expect("example compiles")
    });
    if let Ok(line) = std::str::from_utf8(data) {
        let d = policy.decide_json(line);
        if permc::Request::from_json(line).is_err() {
            assert_eq!(d.decision, permc::Effect::Deny);
        }
    }
});
