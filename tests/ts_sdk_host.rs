//! Conformance: the TS SDK's canUseTool semantics ("Resolution order" 4 and
//! "canUseTool callback") through `decide_with_callback`.

use permc::session::approval::{
    CALLBACK_FAILED, CallbackError, UPDATED_INPUT_INVALID, decide_with_callback,
};
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

/// A pending call with its tool_use_id.
fn call(tool: &str, input: Value) -> Request {
    let mut r = Request::new(tool, input).unwrap();
    r.id = Some(json!("toolu_x"));
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
    assert_eq!(
        with(Ok(json!({"behavior": "allow"}))).decision,
        Effect::Allow
    );
    let d = with(Ok(json!({"behavior": "deny", "message": "user_rejected"})));
    assert_eq!(
        (d.decision, d.reason.as_str()),
        (Effect::Deny, "user_rejected")
    );
}

#[test]
fn thrown_and_aborted_callbacks_deny() {
    for err in [CallbackError::Failed("boom".into()), CallbackError::Aborted] {
        let d = with(Err(err));
        assert_eq!(
            (d.decision, d.reason.as_str()),
            (Effect::Deny, CALLBACK_FAILED)
        );
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
        assert!(
            d.reason.starts_with("malformed approval response"),
            "{bad}: {}",
            d.reason
        );
    }
}

#[test]
fn updated_input_is_checked_again() {
    // fits the declaration: allowed
    let d = with(Ok(
        json!({"behavior": "allow", "updatedInput": {"command": "npm test -- --ci"}}),
    ));
    assert_eq!(d.decision, Effect::Allow);
    // does not fit the declaration (command must be a string)
    let d = with(Ok(
        json!({"behavior": "allow", "updatedInput": {"command": 42}}),
    ));
    assert_eq!(
        (d.decision, d.reason.as_str()),
        (Effect::Deny, UPDATED_INPUT_INVALID)
    );
    // rewritten into something the policy denies: still denied
    let mut cb =
        |_: &_| Ok(json!({"behavior": "allow", "updatedInput": {"file_path": "/etc/passwd"}}));
    let req = call("Write", json!({"file_path": "a.txt"}));
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
    let d = decide_with_callback(
        &policy(),
        &call("Read", json!({"file_path": "a"})),
        Some(&mut cb),
    );
    assert_eq!(d.decision, Effect::Allow);
    assert!(!called);
}

// ---- added for docs/profiles.md -------------------------------------------

fn compile(body: &str) -> Policy {
    let src = format!("import \"ts_sdk\"\npolicy p {{\n workspace \"/project\"\n {body}\n}}");
    Policy::compile("p.perm", &src, &Options::logical()).unwrap()
}

#[test]
fn accept_edits_sends_only_bash_to_the_callback() {
    // "Auto-accept-edits agent": Write and Edit skip the callback; Bash lands
    // there for every invocation; the rm -rf floor never asks.
    let p = compile(
        r#"deny exec on Bash /^\s*rm\s+-rf\b/ as hard_floor
      use ts_sdk.mode_accept_edits"#,
    );
    let mut asked: Vec<String> = Vec::new();
    let mut cb = |r: &permc::session::approval::ApprovalRequest| {
        asked.push(r.tool_name.clone());
        if r.tool_name != "Bash" {
            return Ok(
                json!({"behavior": "deny", "message": format!("Unexpected ask for {}", r.tool_name)}),
            );
        }
        Ok(json!({"behavior": "allow"}))
    };
    let mut run =
        |tool: &str, input: Value| decide_with_callback(&p, &call(tool, input), Some(&mut cb));
    assert_eq!(
        run("Write", json!({"file_path": "src/a.ts"})).decision,
        Effect::Allow
    );
    assert_eq!(
        run("Edit", json!({"file_path": "src/a.ts"})).decision,
        Effect::Allow
    );
    assert_eq!(
        run("Bash", json!({"command": "npm test"})).decision,
        Effect::Allow
    );
    assert_eq!(
        run("Bash", json!({"command": "rm -rf build"}))
            .rule
            .as_deref(),
        Some("hard_floor")
    );
    let d = run("Skill", json!({"skill": "x"}));
    assert_eq!(
        (d.decision, d.reason.as_str()),
        (Effect::Deny, "Unexpected ask for Skill")
    );
    assert_eq!(asked, ["Bash", "Skill"]);
}

#[test]
fn malformed_calls_are_denied_immediately() {
    // "A malformed PendingToolCall (... non-object input ...) returns deny
    // immediately", before the rules and the mode.
    let p = compile("use ts_sdk.mode_yolo");
    for line in [
        r#"{"tool":"Read","input":"a.ts","id":"toolu_1"}"#,
        r#"{"tool":"Read","input":null,"id":"toolu_1"}"#,
        r#"{"input":{"file_path":"a.ts"},"id":"toolu_1"}"#,
        r#"{"tool":"Read","input":{},"id":"toolu_1"}"#,
        r#"{"tool":"Read","input":{"file_path":7},"id":"toolu_1"}"#,
        "not json",
    ] {
        let d = p.decide_json(line);
        assert_eq!(d.decision, Effect::Deny, "{line}");
        assert!(
            d.reason.starts_with("malformed request:"),
            "{line}: {}",
            d.reason
        );
    }
    assert_eq!(
        p.decide_json(r#"{"tool":"Read","input":{"file_path":"a.ts"},"id":"toolu_1"}"#)
            .decision,
        Effect::Allow
    );
}

#[test]
fn the_callback_gets_a_summary_and_never_sees_decided_calls() {
    let mut seen = Vec::new();
    {
        let mut cb = |r: &permc::session::approval::ApprovalRequest| {
            seen.push(r.summary.clone());
            Ok(json!({"behavior": "allow"}))
        };
        // an explicit deny never reaches the callback
        let w = call("Write", json!({"file_path": "/etc/passwd"}));
        assert_eq!(
            decide_with_callback(&policy(), &w, Some(&mut cb)).decision,
            Effect::Deny
        );
        // an ask does, with a one-line summary of the call
        decide_with_callback(&policy(), &bash("npm test"), Some(&mut cb));
    }
    assert_eq!(
        seen,
        ["Bash command requires approval: 'npm test' (rule: mode_default)"]
    );
}

#[test]
fn updated_input_that_still_asks_is_approved() {
    // the approval answers the ask; the rewritten call is re-decided, and an
    // ask (not a deny) for it is the same question already answered
    let d = with(Ok(
        json!({"behavior": "allow", "updatedInput": {"command": "npm run lint"}}),
    ));
    assert_eq!(d.decision, Effect::Allow);
    assert!(
        d.reason.starts_with("approved with updated input"),
        "{}",
        d.reason
    );
}

#[test]
fn a_permission_request_event_through_the_broker() {
    // "Whenever the engine is about to await canUseTool ... the agent emits a
    // permission_request event": a host that wants the event stream submits
    // the ask to the broker (its pending event carries tool_use_id, tool_name,
    // input and the summary) while the callback decides.
    use permc::session::broker::{ApprovalStatus, Broker, Submitted};
    let p = policy();
    let req = bash("npm test");
    let broker = Broker::new(false);
    let events = broker.events();
    let asked = p.decide(&req);
    let Submitted::Pending(id) = broker.submit(req.clone(), asked.clone()).unwrap() else {
        panic!("not pending")
    };
    let ev = events.try_recv().unwrap();
    assert_eq!(ev.status, ApprovalStatus::Pending);
    assert_eq!(ev.record.request.id, Some(json!("toolu_1")));
    assert_eq!(ev.record.request.tool, "Bash");
    assert_eq!(ev.record.request.input["command"], "npm test");
    let mut cb = |r: &permc::session::approval::ApprovalRequest| {
        assert_eq!(r.summary, ev.record.decision.reason);
        assert_eq!(r.tool_use_id, ev.record.request.id);
        Ok(json!({"behavior": "allow"}))
    };
    let d = decide_with_callback(&p, &req, Some(&mut cb));
    broker.resolve(&id, d.clone()).unwrap();
    assert_eq!(d.id, Some(json!("toolu_1")));
    assert_eq!(broker.wait(&id).unwrap().decision, Effect::Allow);
}

#[test]
fn a_call_without_a_tool_use_id_is_denied() {
    // "A malformed PendingToolCall (missing tool_use_id, ...) returns deny immediately."
    let req = Request::new("Read", json!({"file_path": "a"})).unwrap();
    let mut cb = |_: &_| Ok(json!({"behavior": "allow"}));
    let d = decide_with_callback(&policy(), &req, Some(&mut cb));
    assert_eq!(d.decision, Effect::Deny);
    assert!(d.reason.contains("tool_use_id"), "{}", d.reason);
}
