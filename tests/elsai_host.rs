//! Conformance: elsai's host-side behaviour (elsai-permissions.txt sections
//! "DenyPolicy", "Budgets", "Approving an interrupt rule", "Sub-agents",
//! "Audit logs"), through the session API.

use permc::session::{ChildRules, DenyAction, DenyPolicy, OnDeny, Session, command_hash};
use permc::{Effect, Options, Policy, Request};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn policy(body: &str) -> Arc<Policy> {
    let src = format!("import \"elsai\"\npolicy p {{\n workspace \"/home/user/project\"\n {body}\n}}");
    Arc::new(Policy::compile("p.perm", &src, &Options::logical()).unwrap())
}

fn read(path: &str) -> Request {
    Request::new("file_read", json!({ "path": path })).unwrap()
}

fn shell(cmd: &str) -> Request {
    Request::new("shell", json!({ "command": cmd })).unwrap()
}

/// A shared buffer the session writes audit lines into.
#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);
impl std::io::Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
impl Buf {
    fn lines(&self) -> Vec<serde_json::Value> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

#[test]
fn deny_policy_continue_is_the_default() {
    let mut s = Session::new(policy("use elsai.deny_secrets"));
    let o = s.evaluate(&read(".env"));
    assert_eq!(o.decision.decision, Effect::Deny);
    assert_eq!(o.action, Some(DenyAction::Continue));
    assert_eq!(o.guidance, None);
}

#[test]
fn deny_policy_stop_ends_on_the_first_deny() {
    let dp = DenyPolicy { on_deny: OnDeny::Stop, ..DenyPolicy::default() };
    let mut s = Session::new(policy("use elsai.deny_secrets")).with_deny_policy(dp);
    assert_eq!(s.evaluate(&read(".env")).action, Some(DenyAction::Stop));
    assert_eq!(s.evaluate(&read("README.md")).action, None);
}

#[test]
fn guide_takes_rule_guidance_then_reason_then_default_then_generic() {
    let body = r#"
      deny read "**/.env" as deny_env reason "Secrets must not be read"
        guidance "Read config.example.env instead, or ask the user for the value."
      deny read "**/*.key" as keys reason "Keys are private"
      deny read "**/*.pem" as pems
    "#;
    let guide = |default: Option<&str>| {
        let dp = DenyPolicy { on_deny: OnDeny::Guide, default_guidance: default.map(String::from), ..DenyPolicy::default() };
        Session::new(policy(body)).with_deny_policy(dp)
    };
    let mut s = guide(Some("Use an allowlisted path, or ask the user."));
    assert_eq!(s.evaluate(&read(".env")).guidance.as_deref(), Some("Read config.example.env instead, or ask the user for the value."));
    assert_eq!(s.evaluate(&read("a.key")).guidance.as_deref(), Some("Keys are private"));
    assert_eq!(s.evaluate(&read("a.pem")).guidance.as_deref(), Some("Use an allowlisted path, or ask the user."));
    let mut s = guide(None);
    assert_eq!(s.evaluate(&read("a.pem")).guidance.as_deref(), Some(permc::session::deny_guidance_fallback()));
}

#[test]
fn interrupt_reason_is_skipped_in_the_guide_chain() {
    // "Interrupt-mode reason is skipped in that chain"
    let body = r#"interrupt read "**/approval-required.txt" as approve_sensitive_read reason "Allow reading approval-required.txt?""#;
    let dp = DenyPolicy { on_deny: OnDeny::Guide, default_guidance: Some("Ask the user.".into()), ..DenyPolicy::default() };
    let mut s = Session::new(policy(body)).with_deny_policy(dp);
    let o = s.evaluate(&read("approval-required.txt"));
    let int = o.interrupt.expect("an interrupt");
    assert_eq!(int.name, "fs_permission");
    assert_eq!(int.reason, "Allow reading approval-required.txt?");
    let rejected = s.resolve_interrupt(&int.id, "reject");
    assert_eq!(rejected.decision.decision, Effect::Deny);
    assert_eq!(rejected.guidance.as_deref(), Some("Ask the user."));
}

#[test]
fn budgets_are_inclusive_and_reset_per_invocation() {
    let dp = DenyPolicy {
        on_deny: OnDeny::Guide,
        max_denies_per_invocation: Some(2),
        on_budget_exceeded: OnDeny::Stop,
        budget_guidance: Some("Deny budget reached. Stop retrying blocked commands.".into()),
        ..DenyPolicy::default()
    };
    let mut s = Session::new(policy("use elsai.deny_destructive")).with_deny_policy(dp);
    let actions: Vec<_> = (0..3).map(|_| s.evaluate(&shell("rm -rf build")).action).collect();
    assert_eq!(actions, vec![Some(OnDeny::Guide), Some(OnDeny::Guide), Some(OnDeny::Stop)]);
    s.begin_invocation();
    assert_eq!(s.evaluate(&shell("rm -rf build")).action, Some(OnDeny::Guide));
}

#[test]
fn budget_guidance_is_used_when_guiding_past_a_budget() {
    let dp = DenyPolicy {
        on_deny: OnDeny::Continue,
        on_budget_exceeded: OnDeny::Guide,
        max_denies_same_key: Some(1),
        budget_guidance: Some("Stop retrying.".into()),
        ..DenyPolicy::default()
    };
    let mut s = Session::new(policy("use elsai.deny_secrets")).with_deny_policy(dp);
    assert_eq!(s.evaluate(&read(".env")).action, Some(OnDeny::Continue));
    // a different key does not count against the same-key budget
    assert_eq!(s.evaluate(&read("b/.env")).action, Some(OnDeny::Continue));
    let o = s.evaluate(&read(".env"));
    assert_eq!(o.action, Some(OnDeny::Guide));
    assert_eq!(o.guidance.as_deref(), Some("Stop retrying."));
}

#[test]
fn per_tool_budgets_leave_other_tools_alone() {
    let mut per_tool = std::collections::HashMap::new();
    per_tool.insert("shell".to_string(), 1);
    let dp = DenyPolicy { max_denies_per_tool: per_tool, ..DenyPolicy::default() };
    let mut s = Session::new(policy("use elsai.deny_destructive\n use elsai.deny_secrets")).with_deny_policy(dp);
    assert_eq!(s.evaluate(&shell("rm a")).action, Some(OnDeny::Continue));
    assert_eq!(s.evaluate(&read(".env")).action, Some(OnDeny::Continue));
    assert_eq!(s.evaluate(&read(".env")).action, Some(OnDeny::Continue));
    assert_eq!(s.evaluate(&shell("rm b")).action, Some(OnDeny::Stop));
}

#[test]
fn approve_runs_the_call_and_anything_else_rejects() {
    let body = r#"interrupt exec on shell as ask_shell"#;
    let mut s = Session::new(policy(body));
    for (response, want) in [("approve", Effect::Allow), ("reject", Effect::Deny), ("no", Effect::Deny), ("", Effect::Deny), ("APPROVE", Effect::Deny)] {
        let int = s.evaluate(&shell("ls")).interrupt.expect("interrupt");
        assert_eq!(int.name, "execution_permission");
        assert_eq!(s.resolve_interrupt(&int.id, response).decision.decision, want, "{response:?}");
    }
    assert!(s.pending().is_empty());
    // an unknown or already answered id is a deny
    assert_eq!(s.resolve_interrupt("interrupt-1", "approve").decision.decision, Effect::Deny);
}

#[test]
fn sub_agents_inherit_replace_or_enforce_nothing() {
    let parent = Session::new(policy("use elsai.deny_secrets"));
    let read_only = policy("use elsai.read_only");
    // None (unset) inherits the parent's rules
    let mut child = parent.child(ChildRules::Inherit, None);
    assert_eq!(child.evaluate(&read(".env")).decision.decision, Effect::Deny);
    // a non-empty list replaces them, which can widen access
    let mut child = parent.child(ChildRules::Replace(read_only), None);
    assert_eq!(child.evaluate(&read(".env")).decision.decision, Effect::Allow);
    // [] enforces nothing at all
    let mut child = parent.child(ChildRules::Nothing, None);
    assert_eq!(child.evaluate(&read("/etc/shadow")).decision.decision, Effect::Allow);
}

#[test]
fn child_deny_policy_wins_when_set() {
    let stop = DenyPolicy { on_deny: OnDeny::Stop, ..DenyPolicy::default() };
    let guide = DenyPolicy { on_deny: OnDeny::Guide, ..DenyPolicy::default() };
    let parent = Session::new(policy("use elsai.deny_secrets")).with_deny_policy(stop);
    assert_eq!(parent.child(ChildRules::Inherit, None).evaluate(&read(".env")).action, Some(OnDeny::Stop));
    assert_eq!(parent.child(ChildRules::Inherit, Some(guide)).evaluate(&read(".env")).action, Some(OnDeny::Guide));
}

#[test]
fn audit_records_hash_commands_and_name_the_rule() {
    let buf = Buf::default();
    let body = r#"use elsai.deny_destructive
      deny read "**/.env"
      interrupt exec prefix "curl" as approve_curl"#;
    let mut s = Session::new(policy(body)).with_audit(Box::new(buf.clone()));
    s.evaluate(&read("README.md"));
    s.evaluate(&read(".env"));
    s.evaluate(&shell("rm -rf build"));
    let int = s.evaluate(&shell("curl https://x")).interrupt.unwrap();
    s.resolve_interrupt(&int.id, "no");
    let lines = buf.lines();
    assert_eq!(lines.len(), 5, "{lines:#?}");
    assert_eq!(lines[0]["event"], "filesystem.permission");
    assert_eq!(lines[0]["decision"], "allow");
    assert_eq!(lines[0]["paths"], json!(["/home/user/project/README.md"]));
    assert_eq!(lines[1]["decision"], "deny");
    assert_eq!(lines[1]["matched_rule"], "deny:**/.env");        // the generated label
    assert_eq!(lines[1]["deny_action"], "continue");
    assert_eq!(lines[2]["event"], "execution.permission");
    assert_eq!(lines[2]["command_hash"], json!([command_hash("rm -rf build")]));
    assert_eq!(lines[2]["matched_rule"], "deny_destructive");
    // never the raw command
    for l in &lines {
        assert!(!l.to_string().contains("rm -rf build"), "{l}");
        assert!(!l.to_string().contains("curl https"), "{l}");
    }
    // an interrupt logs interrupt; a human reject logs a second event as deny
    assert_eq!(lines[3]["decision"], "interrupt");
    assert_eq!(lines[4]["decision"], "deny");
    assert_eq!(lines[4]["reviewer_denied"], true);
    assert_eq!(lines[4]["deny_action"], "continue");
}
