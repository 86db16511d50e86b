//! `permc eval --session`: one JSON-lines stream is one invocation (deny
//! policy and budgets, interrupts answered in the stream, audit file).

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], input: &str) -> (Vec<serde_json::Value>, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_permc"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, out.status.code().unwrap_or(-1))
}

fn policy_file(tag: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("permc-session-{tag}-{}.perm", std::process::id()));
    std::fs::write(
        &p,
        r#"import "elsai"
policy p {
  workspace "/w"
  use elsai.deny_destructive
  interrupt exec prefix "curl" as approve_curl reason "Allow curl?"
}"#,
    )
    .unwrap();
    p
}

#[test]
fn a_stream_is_one_invocation() {
    let file = policy_file("stream");
    let audit = std::env::temp_dir().join(format!("permc-audit-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&audit);
    let input = [
        r#"{"tool":"shell","input":{"command":"rm -rf build"},"id":1}"#,
        r#"{"tool":"shell","input":{"command":"curl x"},"id":2}"#,
        r#"{"interrupt_response":{"interruptId":"interrupt-1","response":"approve"}}"#,
        r#"{"tool":"shell","input":{"command":"curl y"},"id":3}"#,
        r#"{"interrupt_response":{"interruptId":"interrupt-2","response":"reject"}}"#,
        r#"{"tool":"shell","input":{"command":"ls"},"id":4}"#,
    ]
    .join("\n");
    let dp =
        r#"{"on_deny":"guide","max_denies_per_invocation":1,"default_guidance":"Ask the user."}"#;
    let (out, code) = run(
        &[
            "eval",
            file.to_str().unwrap(),
            "--no-resolve",
            "--deny-policy",
            dp,
            "--audit",
            audit.to_str().unwrap(),
        ],
        &input,
    );
    assert_eq!(code, 0);
    assert_eq!(out.len(), 6);
    assert_eq!(out[0]["deny_action"], "guide");
    assert_eq!(out[0]["model_guidance"], "Destructive commands are blocked");
    assert_eq!(out[1]["decision"], "ask");
    assert_eq!(out[1]["interrupt"]["name"], "execution_permission");
    assert_eq!(out[2]["decision"], "allow");
    assert_eq!(out[3]["interrupt"]["id"], "interrupt-2");
    // the reject is the second deny: past the budget of 1, on_budget_exceeded (stop) applies
    assert_eq!(out[4]["decision"], "deny");
    assert_eq!(out[4]["deny_action"], "stop");
    assert_eq!(out[4]["stop_reason"], "permission_denied");
    // after a stop, the invocation is over
    assert_eq!(out[5]["decision"], "deny");
    assert_eq!(out[5]["id"], 4);
    let records: Vec<serde_json::Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let decisions: Vec<&str> = records
        .iter()
        .map(|r| r["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["deny", "interrupt", "allow", "interrupt", "deny"]
    );
    assert_eq!(records[4]["reviewer_denied"], true);
    assert!(!std::fs::read_to_string(&audit).unwrap().contains("rm -rf"));
    let _ = std::fs::remove_file(&audit);
    let _ = std::fs::remove_file(&file);
}

#[test]
fn a_bad_deny_policy_is_a_usage_error() {
    let file = policy_file("bad");
    let (_, code) = run(
        &[
            "eval",
            file.to_str().unwrap(),
            "--deny-policy",
            r#"{"on_deny":"explode"}"#,
        ],
        "",
    );
    assert_eq!(code, 2);
    let (_, code) = run(
        &[
            "eval",
            file.to_str().unwrap(),
            "--deny-policy",
            r#"{"max_denies":1}"#,
        ],
        "",
    );
    assert_eq!(code, 2);
    let _ = std::fs::remove_file(&file);
}
