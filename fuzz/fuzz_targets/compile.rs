//! Stages 2-3: lowering and program building never panic; a compiled policy
//! decides every request without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        if let Ok(policy) = permc::Policy::compile("fuzz.perm", src, &permc::Options::logical()) {
            for name in policy.policy_names() {
                let req = permc::Request::new("shell", serde_json::json!({"command": "ls; rm -rf /", "path": "/w/.env"})).unwrap();
                let _ = policy.decide_as(name, &req);
            }
        }
    }
});
