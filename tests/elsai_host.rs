//! Conformance: elsai's host-side behaviour (elsai-permissions.txt sections
//! "DenyPolicy", "Budgets", "Approving an interrupt rule", "Sub-agents",
//! "Audit logs"), through the session API.

use permc::session::{ChildRules, DenyAction, DenyPolicy, OnDeny, Session, command_hash};
use permc::{Effect, Options, Policy, Request};
use serde_json::json;
use std::sync::{Arc, Mutex};

fn policy(body: &str) -> Arc<Policy> {
    let src =
        format!("import \"elsai\"\npolicy p {{\n workspace \"/home/user/project\"\n {body}\n}}");
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
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
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
    let dp = DenyPolicy {
        on_deny: OnDeny::Stop,
        ..DenyPolicy::default()
    };
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
        let dp = DenyPolicy {
            on_deny: OnDeny::Guide,
            default_guidance: default.map(String::from),
            ..DenyPolicy::default()
        };
        Session::new(policy(body)).with_deny_policy(dp)
    };
    let mut s = guide(Some("Use an allowlisted path, or ask the user."));
    assert_eq!(
        s.evaluate(&read(".env")).guidance.as_deref(),
        Some("Read config.example.env instead, or ask the user for the value.")
    );
    assert_eq!(
        s.evaluate(&read("a.key")).guidance.as_deref(),
        Some("Keys are private")
    );
    assert_eq!(
        s.evaluate(&read("a.pem")).guidance.as_deref(),
        Some("Use an allowlisted path, or ask the user.")
    );
    let mut s = guide(None);
    assert_eq!(
        s.evaluate(&read("a.pem")).guidance.as_deref(),
        Some(permc::session::deny_guidance_fallback())
    );
}

#[test]
fn interrupt_reason_is_skipped_in_the_guide_chain() {
    // "Interrupt-mode reason is skipped in that chain"
    let body = r#"interrupt read "**/approval-required.txt" as approve_sensitive_read reason "Allow reading approval-required.txt?""#;
    let dp = DenyPolicy {
        on_deny: OnDeny::Guide,
        default_guidance: Some("Ask the user.".into()),
        ..DenyPolicy::default()
    };
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
    let actions: Vec<_> = (0..3)
        .map(|_| s.evaluate(&shell("rm -rf build")).action)
        .collect();
    assert_eq!(
        actions,
        vec![Some(OnDeny::Guide), Some(OnDeny::Guide), Some(OnDeny::Stop)]
    );
    s.begin_invocation();
    assert_eq!(
        s.evaluate(&shell("rm -rf build")).action,
        Some(OnDeny::Guide)
    );
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
    let dp = DenyPolicy {
        max_denies_per_tool: per_tool,
        ..DenyPolicy::default()
    };
    let mut s = Session::new(policy(
        "use elsai.deny_destructive\n use elsai.deny_secrets",
    ))
    .with_deny_policy(dp);
    assert_eq!(s.evaluate(&shell("rm a")).action, Some(OnDeny::Continue));
    assert_eq!(s.evaluate(&read(".env")).action, Some(OnDeny::Continue));
    assert_eq!(s.evaluate(&read(".env")).action, Some(OnDeny::Continue));
    assert_eq!(s.evaluate(&shell("rm b")).action, Some(OnDeny::Stop));
}

#[test]
fn approve_runs_the_call_and_anything_else_rejects() {
    let body = r#"interrupt exec on shell as ask_shell"#;
    let mut s = Session::new(policy(body));
    for (response, want) in [
        ("approve", Effect::Allow),
        ("reject", Effect::Deny),
        ("no", Effect::Deny),
        ("", Effect::Deny),
        ("APPROVE", Effect::Deny),
    ] {
        let int = s.evaluate(&shell("ls")).interrupt.expect("interrupt");
        assert_eq!(int.name, "execution_permission");
        assert_eq!(
            s.resolve_interrupt(&int.id, response).decision.decision,
            want,
            "{response:?}"
        );
    }
    assert!(s.pending().is_empty());
    // an unknown or already answered id is a deny
    assert_eq!(
        s.resolve_interrupt("interrupt-1", "approve")
            .decision
            .decision,
        Effect::Deny
    );
}

#[test]
fn sub_agents_inherit_replace_or_enforce_nothing() {
    let parent = Session::new(policy("use elsai.deny_secrets"));
    let read_only = policy("use elsai.read_only");
    // None (unset) inherits the parent's rules
    let mut child = parent.child(ChildRules::Inherit, None);
    assert_eq!(
        child.evaluate(&read(".env")).decision.decision,
        Effect::Deny
    );
    // a non-empty list replaces them, which can widen access
    let mut child = parent.child(ChildRules::Replace(read_only), None);
    assert_eq!(
        child.evaluate(&read(".env")).decision.decision,
        Effect::Allow
    );
    // [] enforces nothing at all
    let mut child = parent.child(ChildRules::Nothing, None);
    assert_eq!(
        child.evaluate(&read("/etc/shadow")).decision.decision,
        Effect::Allow
    );
}

#[test]
fn child_deny_policy_wins_when_set() {
    let stop = DenyPolicy {
        on_deny: OnDeny::Stop,
        ..DenyPolicy::default()
    };
    let guide = DenyPolicy {
        on_deny: OnDeny::Guide,
        ..DenyPolicy::default()
    };
    let parent = Session::new(policy("use elsai.deny_secrets")).with_deny_policy(stop);
    assert_eq!(
        parent
            .child(ChildRules::Inherit, None)
            .evaluate(&read(".env"))
            .action,
        Some(OnDeny::Stop)
    );
    assert_eq!(
        parent
            .child(ChildRules::Inherit, Some(guide))
            .evaluate(&read(".env"))
            .action,
        Some(OnDeny::Guide)
    );
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
    assert_eq!(lines[1]["matched_rule"], "deny:**/.env"); // the generated label
    assert_eq!(lines[1]["deny_action"], "continue");
    assert_eq!(lines[2]["event"], "execution.permission");
    assert_eq!(
        lines[2]["command_hash"],
        json!([command_hash("rm -rf build")])
    );
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

// ---- added for docs/profiles.md -------------------------------------------

#[test]
fn deny_beside_an_interrupt_asks_no_human() {
    // "One deny wins the whole call — including over an interrupt on a
    // sibling path or command. No human is asked."
    let body = r#"
      interrupt read "**/*.pem" as approve_pem
      deny read "**/.env" as deny_env
      interrupt exec prefix "curl" as approve_curl
      deny exec prefix "rm" as block_rm"#;
    let mut s = Session::new(policy(body));
    let o = s.evaluate(&read("key.pem,.env"));
    assert_eq!(
        (o.decision.decision, o.decision.rule.as_deref()),
        (Effect::Deny, Some("deny_env"))
    );
    assert_eq!(o.interrupt, None);
    let cmds = Request::new(
        "shell",
        json!({ "command": ["curl https://example.com", "rm -rf build"] }),
    )
    .unwrap();
    let o = s.evaluate(&cmds);
    assert_eq!(
        (o.decision.decision, o.decision.rule.as_deref()),
        (Effect::Deny, Some("block_rm"))
    );
    assert_eq!(o.interrupt, None);
    assert!(s.pending().is_empty());
    // without the deny, the pem read pauses
    assert!(s.evaluate(&read("README.md,key.pem")).interrupt.is_some());
}

#[test]
fn generated_messages_name_the_rule() {
    // "When unset, an automatic message is generated (read denied for
    // /etc/passwd (rule: deny_env))" and "(shell command blocked: 'rm -rf /'
    // (rule: block_rm))"; a written reason is the message itself.
    let body = r#"
      deny read "/etc/passwd" as deny_env
      deny exec on shell, execute /^\s*rm\b/, /^\s*dd\b/ as block_rm
      deny read "**/.env" as env reason "Secrets must not be read or written""#;
    let p = policy(body);
    assert_eq!(
        p.decide(&read("/etc/passwd")).reason,
        "read denied for /etc/passwd (rule: deny_env)"
    );
    assert_eq!(
        p.decide(&shell("rm -rf /")).reason,
        "shell command blocked: 'rm -rf /' (rule: block_rm)"
    );
    assert_eq!(
        p.decide(&read(".env")).reason,
        "Secrets must not be read or written"
    );
}

#[test]
fn guidance_reaches_the_model_only_under_guide() {
    // "guidance ... used only when DenyPolicy(on_deny="guide") is set"
    let body =
        r#"deny read "**/.env" as deny_env guidance "Ask the user instead of reading .env.""#;
    let mut s = Session::new(policy(body));
    assert_eq!(s.evaluate(&read(".env")).guidance, None);
    let dp = DenyPolicy {
        on_deny: OnDeny::Stop,
        ..DenyPolicy::default()
    };
    let mut s = Session::new(policy(body)).with_deny_policy(dp);
    assert_eq!(s.evaluate(&read(".env")).guidance, None);
    let dp = DenyPolicy {
        on_deny: OnDeny::Guide,
        ..DenyPolicy::default()
    };
    let mut s = Session::new(policy(body)).with_deny_policy(dp);
    assert_eq!(
        s.evaluate(&read(".env")).guidance.as_deref(),
        Some("Ask the user instead of reading .env.")
    );
}

#[test]
fn deny_policy_defaults_are_the_documented_ones() {
    let dp = DenyPolicy::default();
    assert_eq!(dp.on_deny, OnDeny::Continue);
    assert_eq!(dp.on_budget_exceeded, OnDeny::Stop);
    assert_eq!(dp.max_denies_per_invocation, None);
    assert!(dp.max_denies_per_tool.is_empty());
    assert_eq!(dp.max_denies_same_key, None);
    assert_eq!(dp.default_guidance, None);
    assert_eq!(dp.budget_guidance, None);
}

#[test]
fn several_pauses_are_answered_one_response_each() {
    // "One turn can pause several times, and approving may reveal the next
    // pause, so keep resuming until the agent finishes normally."
    let body = r#"
      interrupt read "**/approval-required.txt" as approve_sensitive_read reason "Allow reading approval-required.txt?"
      interrupt exec prefix "git push" as approve_push reason "Allow git push?""#;
    let mut s = Session::new(policy(body));
    let a = s
        .evaluate(&read("approval-required.txt"))
        .interrupt
        .unwrap();
    let b = s.evaluate(&shell("git push")).interrupt.unwrap();
    assert_eq!((a.id.as_str(), a.name), ("interrupt-1", "fs_permission"));
    assert_eq!(
        (b.id.as_str(), b.name),
        ("interrupt-2", "execution_permission")
    );
    assert_eq!(
        s.pending(),
        vec!["interrupt-1".to_string(), "interrupt-2".to_string()]
    );
    assert_eq!(
        s.resolve_interrupt(&a.id, permc::session::APPROVE_RESPONSE)
            .decision
            .decision,
        Effect::Allow
    );
    assert_eq!(s.pending(), vec!["interrupt-2".to_string()]);
    // the approved turn goes on and hits the next interrupt rule
    let c = s
        .evaluate(&read("docs/approval-required.txt"))
        .interrupt
        .unwrap();
    assert_eq!(c.id, "interrupt-3");
    assert_eq!(
        s.resolve_interrupt(&b.id, "reject").decision.decision,
        Effect::Deny
    );
    assert_eq!(
        s.resolve_interrupt(&c.id, "approve").decision.decision,
        Effect::Allow
    );
    assert!(s.pending().is_empty());
}

#[test]
fn a_rejection_is_a_deny_for_the_deny_policy() {
    // "A rejection is a deny, so it flows into DenyPolicy like any other deny."
    let body = r#"interrupt exec prefix "curl" as approve_curl reason "Allow curl?""#;
    let stop = DenyPolicy {
        on_deny: OnDeny::Stop,
        ..DenyPolicy::default()
    };
    let mut s = Session::new(policy(body)).with_deny_policy(stop);
    let int = s.evaluate(&shell("curl x")).interrupt.unwrap();
    assert_eq!(
        s.resolve_interrupt(&int.id, "no").action,
        Some(OnDeny::Stop)
    );
    // "Using on_deny="guide" with interrupt rules but no guidance: rejects fall
    // back to default_guidance or an auto template" — never the rule's reason.
    let guide = DenyPolicy {
        on_deny: OnDeny::Guide,
        ..DenyPolicy::default()
    };
    let mut s = Session::new(policy(body)).with_deny_policy(guide.clone());
    let int = s.evaluate(&shell("curl x")).interrupt.unwrap();
    assert_eq!(
        s.resolve_interrupt(&int.id, "").guidance.as_deref(),
        Some(permc::session::deny_guidance_fallback())
    );
    // "Set guidance on interrupt rules when using on_deny="guide""
    let with_guidance = r#"interrupt exec prefix "curl" as approve_curl reason "Allow curl?" guidance "Use the cached copy instead.""#;
    let mut s = Session::new(policy(with_guidance)).with_deny_policy(guide);
    let int = s.evaluate(&shell("curl x")).interrupt.unwrap();
    assert_eq!(
        s.resolve_interrupt(&int.id, "reject").guidance.as_deref(),
        Some("Use the cached copy instead.")
    );
}

#[test]
fn audit_and_interrupts_for_calls_without_paths_or_commands() {
    // The document has two loggers; a tool with neither paths nor commands
    // (an undeclared tool under a `tool` rule) logs `tool.permission`, and an
    // interrupt on it is named `tool_permission`.
    let buf = Buf::default();
    let body = r#"deny tool http_request as no_http
      interrupt tool retrieve as approve_retrieve"#;
    let mut s = Session::new(policy(body)).with_audit(Box::new(buf.clone()));
    s.evaluate(&Request::new("http_request", json!({ "url": "https://example.com" })).unwrap());
    let int = s
        .evaluate(&Request::new("retrieve", json!({ "text": "x" })).unwrap())
        .interrupt
        .unwrap();
    assert_eq!(int.name, "tool_permission");
    let lines = buf.lines();
    assert_eq!(lines[0]["event"], "tool.permission");
    assert_eq!(lines[0]["decision"], "deny");
    assert_eq!(lines[0]["matched_rule"], "no_http");
    assert_eq!(lines[0].get("paths"), None);
    assert_eq!(lines[0].get("command_hash"), None);
    assert_eq!(lines[1]["decision"], "interrupt");
}

#[test]
fn audit_hashes_each_segment_and_lists_every_path() {
    let buf = Buf::default();
    let mut s = Session::new(policy("use elsai.deny_secrets")).with_audit(Box::new(buf.clone()));
    s.evaluate(&read("README.md,.env"));
    s.evaluate(&shell("git status && ls"));
    let lines = buf.lines();
    assert_eq!(
        lines[0]["paths"],
        json!(["/home/user/project/README.md", "/home/user/project/.env"])
    );
    assert_eq!(lines[0]["matched_rule"], "deny_secrets");
    assert_eq!(
        lines[1]["command_hash"],
        json!([command_hash("git status"), command_hash("ls")])
    );
    assert_eq!(lines[1]["matched_rule"], serde_json::Value::Null); // the permissive default decided
}

#[test]
fn rules_need_an_operation() {
    // "operations: "read" and/or "write" (must be non-empty)": a rule without
    // an operation does not parse.
    let src = "import \"elsai\"\npolicy p { deny \"**/.env\" }";
    let err = Policy::compile("p.perm", src, &Options::logical()).unwrap_err();
    assert_eq!(err.diagnostics[0].code, "permc::syntax");
}

#[test]
fn a_gate_with_patterns_draws_a_warning() {
    // "require_workspace_cwd=True plus patterns on one rule" is a documented mistake.
    let p = policy(r#"deny exec on shell cwd outside workspace, /^\s*rm\b/ as gate_and_rm"#);
    assert!(
        p.warnings()
            .iter()
            .any(|w| w.code == "permc::gate-with-patterns"),
        "{:?}",
        p.warnings()
    );
}

#[test]
fn spawned_workers_copy_the_template_rules_with_their_own_budgets() {
    // "Spawn workers copy the template agent's configured permission lists."
    let dp = DenyPolicy {
        max_denies_per_invocation: Some(1),
        ..DenyPolicy::default()
    };
    let mut template = Session::new(policy("use elsai.deny_secrets")).with_deny_policy(dp);
    template.evaluate(&read(".env"));
    assert_eq!(template.evaluate(&read(".env")).action, Some(OnDeny::Stop));
    let mut worker = template.child(ChildRules::Inherit, None);
    let o = worker.evaluate(&read(".env"));
    assert_eq!(
        (o.decision.decision, o.action),
        (Effect::Deny, Some(OnDeny::Continue))
    );
}

#[test]
fn symlinks_are_judged_by_their_target() {
    // Stricter than "absolute paths are matched as-is": with the resolver on
    // (the default), a link inside the workspace that points outside it is
    // judged by its target.
    let root = std::env::temp_dir().join(format!("permc-elsai-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("project")).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(root.join("outside/secret.txt"), "x").unwrap();
    let root = std::fs::canonicalize(&root).unwrap();
    std::os::unix::fs::symlink(root.join("outside"), root.join("project/link")).unwrap();
    let src = "import \"elsai\"\npolicy p { use elsai.workspace_only }";
    let opts = Options {
        workspace: Some(root.join("project").display().to_string()),
        ..Options::default()
    };
    let p = Policy::compile("p.perm", src, &opts).unwrap();
    let d = p.decide(&read(
        &root.join("project/link/secret.txt").display().to_string(),
    ));
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(
        (d.decision, d.rule.as_deref()),
        (Effect::Deny, Some("workspace_only_outside"))
    );
}

#[test]
fn guide_without_interrupt_guidance_is_warned() {
    // "Set guidance on interrupt rules when using on_deny="guide"; the SDK warns if you forget."
    let body = r#"interrupt read "**/a.txt" as no_guidance
      interrupt read "**/b.txt" as with_guidance guidance "Ask first.""#;
    let guide = DenyPolicy {
        on_deny: OnDeny::Guide,
        ..DenyPolicy::default()
    };
    let s = Session::new(policy(body)).with_deny_policy(guide);
    let w = s.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("no_guidance"), "{w:?}");
    let s = Session::new(policy(body)).with_deny_policy(DenyPolicy::default());
    assert!(s.warnings().is_empty());
}

#[test]
fn stop_reasons_and_model_error_texts() {
    // "result.stop_reason # "interrupt"" and "PermissionDenied: / ExecutionDenied: error"
    let mut s = Session::new(policy(
        "use elsai.deny_secrets\n use elsai.interrupt_all_shell",
    ));
    let o = s.evaluate(&shell("ls"));
    assert_eq!(o.stop_reason(), Some("interrupt"));
    let o = s.evaluate(&read(".env"));
    assert_eq!(o.stop_reason(), None);
    assert_eq!(
        permc::session::text::elsai_error_text(&o.decision).as_deref(),
        Some("PermissionDenied: Secrets must not be read or written")
    );
    let stop = DenyPolicy {
        on_deny: OnDeny::Stop,
        ..DenyPolicy::default()
    };
    let mut s = Session::new(policy("use elsai.deny_secrets")).with_deny_policy(stop);
    assert_eq!(
        s.evaluate(&read(".env")).stop_reason(),
        Some("permission_denied")
    );
}
