//! Conformance: the TS SDK's canUseTool semantics ("Resolution order" 4 and
//! "canUseTool callback") through `decide_with_callback`.

use permc::session::approval::{CALLBACK_FAILED, CallbackError, UPDATED_INPUT_INVALID, decide_with_callback};
use permc::{Effect, Options, Policy, Request};
use serde_json::{Value, json};

fn policy() -> Policy {
    let src = r#"
import "ts_sdk"
policy p {
  workspace "/project"
  deny read, write "/etc/**" as deny_etc
  use ts_sdk.mode_default
}"#;
    Policy::compile("p.perm", src, &Options::logical()).unwrap()
}

fn bash(cmd: &str) -> Request {
    let mut r = Request::new("Bash", json!({ "command": cmd })).unwrap();
    r.id = Some(json!("toolu_1"));
    r
}

fn with(answer: Result<Value, CallbackError>) -> permc::Decision {
    let mut cb = move |_: &_| answer.clone();
    decide_with_callback(&policy(), &bash("npm test"), Some(&mut cb))
}

#[test]
fn ask_without_a_callback_is_deny() {
    let d = decide_with_callback(&policy(), &bash("npm test"), None);
    assert_eq!(d.decision, Effect::Deny);
    assert!(d.reason.contains("no approval callback"), "{}", d.reason);
}

#[test]
fn allow_and_deny_answers() {
    assert_eq!(with(Ok(json!({"behavior": "allow"}))).decision, Effect::Allow);
    let d = with(Ok(json!({"behavior": "deny", "message": "user_rejected"})));
    assert_eq!((d.decision, d.reason.as_str()), (Effect::Deny, "user_rejected"));
}

#[test]
fn thrown_and_aborted_callbacks_deny() {
    for err in [CallbackError::Failed("boom".into()), CallbackError::Aborted] {
        let d = with(Err(err));
        assert_eq!((d.decision, d.reason.as_str()), (Effect::Deny, CALLBACK_FAILED));
    }
}

#[test]
fn malformed_answers_deny() {
    for bad in [
        json!({}),
        json!({"behavior": "maybe"}),
        json!({"behavior": "deny"}),
        json!({"behavior": "deny", "message": 7}),
        json!({"behavior": "allow", "updatedInput": "ls"}),
        json!("allow"),
        Value::Null,
    ] {
        let d = with(Ok(bad.clone()));
        assert_eq!(d.decision, Effect::Deny, "{bad}");
        assert!(d.reason.starts_with("malformed approval response"), "{bad}: {}", d.reason);
    }
}

#[test]
fn updated_input_is_checked_again() {
    // fits the declaration: allowed
    let d = with(Ok(json!({"behavior": "allow", "updatedInput": {"command": "npm test -- --ci"}})));
    assert_eq!(d.decision, Effect::Allow);
    // does not fit the declaration (command must be a string)
    let d = with(Ok(json!({"behavior": "allow", "updatedInput": {"command": 42}})));
    assert_eq!((d.decision, d.reason.as_str()), (Effect::Deny, UPDATED_INPUT_INVALID));
    // rewritten into something the policy denies: still denied
    let mut cb = |_: &_| Ok(json!({"behavior": "allow", "updatedInput": {"file_path": "/etc/passwd"}}));
    let req = Request::new("Write", json!({"file_path": "a.txt"})).unwrap();
    let d = decide_with_callback(&policy(), &req, Some(&mut cb));
    assert_eq!(d.decision, Effect::Deny);
    assert_eq!(d.rule.as_deref(), Some("deny_etc"));
}

#[test]
fn the_callback_sees_the_call() {
    let mut seen = None;
    let mut cb = |r: &permc::session::approval::ApprovalRequest| {
        seen = Some(r.clone());
        Ok(json!({"behavior": "allow"}))
    };
    decide_with_callback(&policy(), &bash("npm test"), Some(&mut cb));
    let r = seen.expect("called");
    assert_eq!(r.tool_name, "Bash");
    assert_eq!(r.tool_use_id, Some(json!("toolu_1")));
    assert_eq!(r.input["command"], "npm test");
    // rules and mode first: a denied or allowed call never reaches the callback
    let mut called = false;
    let mut cb = |_: &_| {
        called = true;
        Ok(json!({"behavior": "allow"}))
    };
    let d = decide_with_callback(&policy(), &Request::new("Read", json!({"file_path": "a"})).unwrap(), Some(&mut cb));
    assert_eq!(d.decision, Effect::Allow);
    assert!(!called);
}
