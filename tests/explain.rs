//! `permc::explain::explain` traces, snapshot-tested for representative
//! requests. Each test also checks the decision itself, so a snapshot update
//! cannot quietly accept a wrong outcome.

use permc::{Effect, Options, Policy, Request};
use serde_json::json;

const SRC: &str = r#"
tool file_read { read input.path split "," }
tool shell { exec input.command cwd input.work_dir }

policy agent {
  workspace "/home/user/project"
  deny  read "**/.env" as deny_env
    reason "Secrets must not be read"
    guidance "Read config.example.env instead."
  deny  exec /^\s*rm\b/ as block_rm
  deny  exec cwd outside workspace as cwd_gate
  ask   exec prefix "git push"
  allow read "/workspace/**"
  allow exec prefix "git status"
  deny  tool "mcp__github__delete_repo" as no_delete
  default ask
}

policy strict_mode {
  workspace "/home/user/project"
  combine strictest
  allow read "/workspace/**" as in_workspace
  ask   read "**/*.key" as keys_need_approval
  deny  read "**/secrets/**" as no_secrets
  default deny
}

policy reads_only {
  workspace "/home/user/project"
  allow read "**"
  deny  exec as no_exec
}

policy both = all(agent, reads_only)
"#;

/// Compiles [`SRC`] with `name` as the selected policy.
fn policy(name: &str) -> Policy {
    let opts = Options {
        policy: Some(name.to_string()),
        ..Options::logical()
    };
    Policy::compile("explain.perm", SRC, &opts).unwrap_or_else(|e| panic!("{}", e.render(false)))
}

fn request(tool: &str, input: serde_json::Value) -> Request {
    Request::new(tool, input).unwrap()
}

/// Explains `req` under policy `name`, checks the decision and the rule,
/// and returns the trace.
fn explain(name: &str, req: &Request, decision: Effect, rule: Option<&str>) -> String {
    let p = policy(name);
    let d = p.decide(req);
    assert_eq!(
        (d.decision, d.rule.as_deref()),
        (decision, rule),
        "decision for {req:?}: {d:?}"
    );
    let text = permc::explain::explain(&p, None, req);
    assert!(text.contains(&format!("decision: {decision}\n")), "{text}");
    assert!(
        text.contains(&format!("rule: {}\n", rule.unwrap_or("(default)"))),
        "{text}"
    );
    text
}

#[test]
fn multi_path_read_one_denied() {
    let req = request("file_read", json!({"path": "README.md,.env"}));
    let text = explain("agent", &req, Effect::Deny, Some("deny_env"));
    assert!(
        text.contains("item: file_read read /home/user/project/README.md"),
        "{text}"
    );
    assert!(
        text.contains("item: file_read read /home/user/project/.env"),
        "{text}"
    );
    assert!(
        text.contains("decided by rule #0 `deny_env`: deny"),
        "{text}"
    );
    assert!(
        text.contains("guidance: Read config.example.env instead."),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn compound_shell_command() {
    let req = request("shell", json!({"command": "git status; rm -rf ~"}));
    let text = explain("agent", &req, Effect::Deny, Some("block_rm"));
    // Two segments, each decided on its own.
    assert!(text.contains("item: shell exec `git status`"), "{text}");
    assert!(text.contains("item: shell exec `rm -rf ~`"), "{text}");
    assert!(
        text.contains("decided by rule #5 `allow:git status`: allow"),
        "{text}"
    );
    assert!(
        text.contains("decided by rule #1 `block_rm`: deny"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn cwd_gate_fires() {
    // `git status` alone is allowed, but the gate runs first.
    let req = request(
        "shell",
        json!({"command": "git status", "work_dir": "/tmp"}),
    );
    let text = explain("agent", &req, Effect::Deny, Some("cwd_gate"));
    assert!(text.contains("(cwd /tmp)"), "{text}");
    assert!(
        text.contains("cwd gate: cwd outside the workspace, fires"),
        "{text}"
    );
    assert!(
        text.contains("decided by rule #2 `cwd_gate`: deny"),
        "{text}"
    );
    insta::assert_snapshot!(text);

    // Inside the workspace the gate is skipped and the prefix rule decides.
    let req = request(
        "shell",
        json!({"command": "git status", "work_dir": "/home/user/project/src"}),
    );
    let text = explain("agent", &req, Effect::Allow, Some("allow:git status"));
    assert!(
        text.contains("cwd gate: cwd inside the workspace (or unset), skipped"),
        "{text}"
    );
}

#[test]
fn strictest_mode() {
    let req = request(
        "file_read",
        json!({"path": "secrets/api.key,certs/tls.key,src/main.rs"}),
    );
    let text = explain("strict_mode", &req, Effect::Deny, Some("no_secrets"));
    assert!(
        text.contains("policy `strict_mode` (strictest, default deny"),
        "{text}"
    );
    // Every matching rule counts; the strictest wins per item.
    assert!(
        text.contains("decided by rule #2 `no_secrets`: deny"),
        "{text}"
    );
    assert!(
        text.contains("decided by rule #1 `keys_need_approval`: ask"),
        "{text}"
    );
    assert!(
        text.contains("decided by rule #0 `in_workspace`: allow"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn all_composition() {
    // `agent` has no rule for `ls` (default ask); `reads_only` denies exec.
    let req = request("shell", json!({"command": "ls"}));
    let text = explain("both", &req, Effect::Deny, Some("no_exec"));
    assert!(
        text.starts_with("policy `both` = all(...): the strictest outcome of its policies wins\n"),
        "{text}"
    );
    assert!(
        text.contains("  policy `agent` (first-match, default ask"),
        "{text}"
    );
    assert!(
        text.contains("  policy `reads_only` (first-match, default allow"),
        "{text}"
    );
    assert!(text.contains("no rule matched: default ask"), "{text}");
    assert!(
        text.contains("decided by rule #1 `no_exec`: deny"),
        "{text}"
    );
    assert_eq!(policy("both").decide(&req).policy, "reads_only");
    insta::assert_snapshot!(text);
}

#[test]
fn undeclared_tool_hits_a_tool_rule() {
    let req = request("mcp__github__delete_repo", json!({"repo": "acme/site"}));
    let text = explain("agent", &req, Effect::Deny, Some("no_delete"));
    assert!(
        text.contains("item: mcp__github__delete_repo tool\n"),
        "{text}"
    );
    assert!(
        text.contains("decided by rule #6 `no_delete`: deny"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn default_applies() {
    let req = request("file_read", json!({"path": "/etc/passwd"}));
    let text = explain("agent", &req, Effect::Ask, None);
    assert!(
        text.contains("#0 line 7 deny `deny_env`: no match"),
        "{text}"
    );
    assert!(text.contains("no rule matched: default ask"), "{text}");
    assert!(
        text.contains("reason: read requires approval for /etc/passwd (default ask)"),
        "{text}"
    );
    insta::assert_snapshot!(text);
}

#[test]
fn explain_an_unknown_policy_name() {
    let p = policy("agent");
    let req = request("shell", json!({"command": "ls"}));
    let text = permc::explain::explain(&p, Some("agnet"), &req);
    assert!(text.starts_with("unknown policy `agnet`"), "{text}");
    assert!(
        text.contains("agent") && text.contains("strict_mode"),
        "{text}"
    );
}
