//! Conformance: AgentLane behaviour that needs a real filesystem (path
//! scopes, the symlink-resolving boundary) or the host (the approval broker,
//! model-facing texts).

use permc::session::broker::{ApprovalStatus, Broker, BrokerError, Submitted};
use permc::session::text::tool_result_text;
use permc::{Effect, Options, Policy, Request};
use serde_json::json;
use std::path::PathBuf;

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("permc-al-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(std::fs::canonicalize(&p).unwrap())
    }
    fn path(&self, rel: &str) -> String {
        self.0.join(rel).display().to_string()
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(path: &str) -> Request {
    Request::new("read", json!({ "path": path })).unwrap()
}

#[test]
fn path_scopes_follow_what_exists_when_the_policy_loads() {
    // "Existing directory scopes allow descendants. Existing file scopes allow
    // only that exact file. Non-existing scopes allow only that exact future path."
    let t = TempDir::new("scopes");
    std::fs::create_dir_all(t.path("ws/src")).unwrap();
    std::fs::create_dir_all(t.path("refs")).unwrap();
    std::fs::write(t.path("review.md"), "x").unwrap();
    let src = format!(
        r#"import "agentlane"
policy scoped {{
  allow read_file, create_file scope "{ws}", scope "{review}", scope "{future}", scope "{refs}" as in_scope
  deny read_file, create_file as out_of_scope
}}"#,
        ws = t.path("ws"),
        review = t.path("review.md"),
        future = t.path("future.txt"),
        refs = t.path("refs")
    );
    let p = Policy::compile("scoped.perm", &src, &Options::default()).unwrap();
    let cases = [
        (t.path("ws/src/a.py"), Effect::Allow),
        (t.path("ws"), Effect::Allow),
        (t.path("refs/deep/x.md"), Effect::Allow),
        (t.path("review.md"), Effect::Allow),
        (t.path("review.md/x"), Effect::Deny),
        (t.path("future.txt"), Effect::Allow),
        (t.path("future.txt/x"), Effect::Deny),
        (t.path("other.txt"), Effect::Deny),
        (t.path("ws2/a"), Effect::Deny),
    ];
    for (path, want) in cases {
        assert_eq!(p.decide(&read(&path)).decision, want, "{path}");
    }
}

#[test]
fn the_boundary_resolves_symlinks_and_the_nearest_existing_parent() {
    // "Both path policies resolve symlinks and check the nearest existing parent for new paths."
    let t = TempDir::new("boundary");
    std::fs::create_dir_all(t.path("ws")).unwrap();
    std::fs::create_dir_all(t.path("outside")).unwrap();
    std::os::unix::fs::symlink(t.path("outside"), t.path("ws/link")).unwrap();
    let src = r#"import "agentlane"
policy boundary { use agentlane.workspace_boundary }"#;
    let opts = Options {
        workspace: Some(t.path("ws")),
        ..Options::default()
    };
    let p = Policy::compile("b.perm", src, &opts).unwrap();
    assert_eq!(p.decide(&read(&t.path("ws/a.txt"))).decision, Effect::Allow);
    let escaped = p.decide(&read(&t.path("ws/link/secret.txt")));
    assert_eq!(escaped.decision, Effect::Deny);
    assert_eq!(escaped.rule.as_deref(), Some("outside_workspace"));
    // new nested paths are checked through their nearest existing parent
    let w = Request::new("write", json!({ "path": t.path("ws/link/new/file.txt") })).unwrap();
    assert_eq!(p.decide(&w).decision, Effect::Deny);
    let w = Request::new("write", json!({ "path": t.path("ws/new/file.txt") })).unwrap();
    assert_eq!(p.decide(&w).decision, Effect::Allow);
}

#[test]
fn grant_strings_report_every_invalid_entry_together() {
    let src = r#"import "agentlane"
tool web_search { network_access }
policy g { grants "read, web_search:read_file, nope, write:create_file, bash:network_access" default deny }"#;
    let err = Policy::compile("g.perm", src, &Options::logical()).unwrap_err();
    assert_eq!(err.diagnostics.len(), 1);
    let msg = &err.diagnostics[0].message;
    assert_eq!(err.diagnostics[0].code, "permc::invalid-grant");
    for bad in ["`web_search:read_file`", "`nope`", "`bash:network_access`"] {
        assert!(msg.contains(bad), "{msg}");
    }
    assert!(
        !msg.contains("`read`") && !msg.contains("write:create_file"),
        "{msg}"
    );
}

fn approval_policy() -> Policy {
    let src = r#"import "agentlane"
policy p { use agentlane.side_effect_approval }"#;
    Policy::compile("p.perm", src, &Options::logical()).unwrap()
}

#[test]
fn broker_tracks_pending_requests_and_their_lifecycle() {
    let p = approval_policy();
    let broker = Broker::new(false);
    let events = broker.events();
    let req = Request::new("bash", json!({"command": "pytest"})).unwrap();
    let d = p.decide(&req);
    assert_eq!(d.decision, Effect::Ask);
    let Submitted::Pending(id) = broker.submit(req.clone(), d.clone()).unwrap() else {
        panic!("not pending")
    };
    assert_eq!(id, "approval-1");
    assert_eq!(broker.pending().len(), 1);
    assert_eq!(broker.pending()[0].request, req);
    // a second request gets its own stable id
    let Submitted::Pending(id2) = broker.submit(req.clone(), d.clone()).unwrap() else {
        panic!()
    };
    assert_eq!(id2, "approval-2");
    // resolve with an ordinary decision
    let mut allow = d.clone();
    allow.decision = Effect::Allow;
    broker.resolve(&id, allow.clone()).unwrap();
    assert_eq!(broker.wait(&id).unwrap().decision, Effect::Allow);
    assert_eq!(broker.pending().len(), 1);
    // a host timeout can resolve with the original approval-required decision
    broker.resolve(&id2, d.clone()).unwrap();
    assert_eq!(broker.wait(&id2).unwrap().decision, Effect::Ask);
    assert!(broker.pending().is_empty());
    let seen: Vec<_> = events
        .try_iter()
        .map(|e| (e.record.request_id, e.status))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("approval-1".into(), ApprovalStatus::Pending),
            ("approval-2".into(), ApprovalStatus::Pending),
            ("approval-1".into(), ApprovalStatus::Resolved),
            ("approval-2".into(), ApprovalStatus::Resolved),
        ]
    );
    assert_eq!(
        broker.resolve(&id, allow),
        Err(BrokerError::UnknownRequest(id))
    );
}

#[test]
fn broker_rejects_or_records_immediate_decisions() {
    let p = approval_policy();
    let req = Request::new("read", json!({"path": "/w/a"})).unwrap();
    let d = p.decide(&req);
    assert_eq!(d.decision, Effect::Allow);
    assert_eq!(
        Broker::new(false).submit(req.clone(), d.clone()),
        Err(BrokerError::NotAnApproval(Effect::Allow))
    );
    let broker = Broker::new(true);
    let events = broker.events();
    assert_eq!(
        broker.submit(req, d.clone()).unwrap(),
        Submitted::Decided(d)
    );
    assert!(broker.pending().is_empty());
    let statuses: Vec<_> = events.try_iter().map(|e| e.status).collect();
    assert_eq!(
        statuses,
        vec![ApprovalStatus::Pending, ApprovalStatus::Resolved]
    );
}

#[test]
fn close_ends_event_streams_without_resolving() {
    let p = approval_policy();
    let broker = Broker::new(false);
    let events = broker.events();
    let req = Request::new("patch", json!({"path": "/w/a"})).unwrap();
    broker.submit(req.clone(), p.decide(&req)).unwrap();
    broker.close();
    // the existing stream drains and ends; new subscriptions end at once
    assert_eq!(events.iter().count(), 1);
    assert!(broker.events().recv().is_err());
    assert_eq!(broker.pending().len(), 1);
}

#[test]
fn model_facing_texts_are_stable() {
    let src = r#"import "agentlane"
tool web_search { network_access }
policy p {
  workspace "/workspace"
  deny read_file "/workspace/private.txt"
  use agentlane.side_effect_approval
}"#;
    let p = Policy::compile("p.perm", src, &Options::logical()).unwrap();
    let text = |tool: &str, input| tool_result_text(&p.decide(&Request::new(tool, input).unwrap()));
    assert_eq!(
        text("read", json!({"path": "/workspace/private.txt"})).unwrap(),
        "permission denied: read is not allowed for `/workspace/private.txt`"
    );
    assert_eq!(text("read", json!({"path": "/workspace/a.txt"})), None);
    assert_eq!(
        text("bash", json!({"command": "pytest -q"})).unwrap(),
        "approval required: bash command `pytest -q` awaiting approval"
    );
    assert_eq!(
        text("web_search", json!({"q": "x"})).unwrap(),
        "approval required: web_search network access awaiting approval"
    );
}

// ---- added for docs/profiles.md -------------------------------------------

#[test]
fn path_scopes_resolve_symlinks_too() {
    // "Both path policies resolve symlinks and check the nearest existing
    // parent for new paths."
    let t = TempDir::new("scope-links");
    std::fs::create_dir_all(t.path("ws")).unwrap();
    std::fs::create_dir_all(t.path("outside")).unwrap();
    std::os::unix::fs::symlink(t.path("outside"), t.path("ws/link")).unwrap();
    let src = format!(
        r#"import "agentlane"
policy scoped {{
  allow read_file, create_file, create_directory scope "{ws}" as in_scope
  deny read_file, create_file, create_directory as out_of_scope
}}"#,
        ws = t.path("ws")
    );
    let p = Policy::compile("scoped.perm", &src, &Options::default()).unwrap();
    assert_eq!(p.decide(&read(&t.path("ws/a.txt"))).decision, Effect::Allow);
    assert_eq!(
        p.decide(&read(&t.path("ws/link/a.txt"))).rule.as_deref(),
        Some("out_of_scope")
    );
    let w = Request::new("write", json!({ "path": t.path("ws/link/new/file.txt") })).unwrap();
    assert_eq!(p.decide(&w).decision, Effect::Deny);
    let w = Request::new("write", json!({ "path": t.path("ws/new/file.txt") })).unwrap();
    assert_eq!(p.decide(&w).decision, Effect::Allow);
}

#[test]
fn the_write_tool_asks_one_or_two_questions_on_a_real_disk() {
    let t = TempDir::new("write-shape");
    std::fs::create_dir_all(t.path("ws")).unwrap();
    std::fs::write(t.path("ws/old.txt"), "x").unwrap();
    let src = r#"import "agentlane"
policy p { default allow }"#;
    let p = Policy::compile("p.perm", src, &Options::default()).unwrap();
    let ops = |path: String| -> Vec<String> {
        let d = p.decide(&Request::new("write", json!({ "path": path })).unwrap());
        d.items.iter().map(|i| i.op.clone()).collect()
    };
    assert_eq!(
        ops(t.path("ws/new/a.txt")),
        ["create_directory", "create_file"]
    );
    assert_eq!(ops(t.path("ws/a.txt")), ["create_file"]);
    assert_eq!(ops(t.path("ws/old.txt")), ["overwrite_file"]);
    // grep: read_file on an existing file, search_files on a directory or a missing path
    let grep = |path: String| -> String {
        let d = p.decide(&Request::new("grep", json!({ "path": path, "pattern": "x" })).unwrap());
        d.items[0].op.clone()
    };
    assert_eq!(grep(t.path("ws/old.txt")), "read_file");
    assert_eq!(grep(t.path("ws")), "search_files");
    assert_eq!(grep(t.path("ws/missing")), "search_files");
}

#[test]
fn grant_parsing_preserves_duplicates_and_order() {
    // "returns (grants, invalid_entries), preserves duplicates, and does not
    // let later entries override earlier ones"
    use permc::lower::grants::parse_grants;
    let p = Policy::compile(
        "p.perm",
        "import \"agentlane\"\npolicy p { default deny }",
        &Options::logical(),
    )
    .unwrap();
    let (grants, invalid) = parse_grants(
        "write, read, write:create_file, read, bash:nope",
        &p.lowered().tools,
    );
    let entries: Vec<&str> = grants.iter().map(|g| g.entry.as_str()).collect();
    assert_eq!(entries, ["write", "read", "write:create_file", "read"]);
    assert_eq!(
        grants[0].ops,
        ["create_directory", "create_file", "overwrite_file"]
    );
    assert_eq!(grants[2].ops, ["create_file"]);
    assert_eq!(invalid, ["bash:nope"]);
}

#[test]
fn app_tools_need_declaring_and_cannot_replace_built_ins() {
    // "By default the parser only recognizes the built-in first-party tools
    // ... a grant for an app-registered egress tool such as
    // web_search:network_access is reported as invalid."
    let src = r#"import "agentlane"
policy g { grants "web_search:network_access" default deny }"#;
    let err = Policy::compile("g.perm", src, &Options::logical()).unwrap_err();
    assert_eq!(err.diagnostics[0].code, "permc::invalid-grant");
    // "A known_tools entry whose name collides with a built-in is ignored":
    // permc refuses the second declaration instead.
    let src = r#"import "agentlane"
tool read { network_access }
policy g { grants "read" default deny }"#;
    let err = Policy::compile("g.perm", src, &Options::logical()).unwrap_err();
    assert!(
        err.diagnostics
            .iter()
            .any(|d| d.code == "permc::duplicate-name"),
        "{err}"
    );
}

#[test]
fn broker_records_resolution_and_late_subscribers() {
    let p = approval_policy();
    let broker = Broker::new(false);
    let req = Request::new("patch", json!({"path": "/w/a"})).unwrap();
    let d = p.decide(&req);
    let Submitted::Pending(id) = broker.submit(req.clone(), d.clone()).unwrap() else {
        panic!("not pending")
    };
    // the record: request, approval-required decision, status, no final decision yet
    let rec = &broker.pending()[0];
    assert_eq!(
        (rec.request_id.as_str(), &rec.request, &rec.decision),
        (id.as_str(), &req, &d)
    );
    assert_eq!(
        (rec.status, rec.final_decision.clone()),
        (ApprovalStatus::Pending, None)
    );
    // events are emitted after the subscription starts: the pending event is not replayed
    let events = broker.events();
    let mut deny = d.clone();
    deny.decision = Effect::Deny;
    broker.resolve(&id, deny).unwrap();
    let seen: Vec<_> = events.try_iter().collect();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].status, ApprovalStatus::Resolved);
    assert_eq!(
        seen[0].record.final_decision.as_ref().map(|f| f.decision),
        Some(Effect::Deny)
    );
    assert_eq!(broker.wait(&id).unwrap().decision, Effect::Deny);
}

#[test]
fn recording_immediate_decisions_still_suspends_approvals() {
    let p = approval_policy();
    // the default is not to record them
    let read_req = Request::new("read", json!({"path": "/w/a"})).unwrap();
    let allowed = p.decide(&read_req);
    assert_eq!(
        Broker::default().submit(read_req.clone(), allowed.clone()),
        Err(BrokerError::NotAnApproval(Effect::Allow))
    );
    let broker = Broker::new(true);
    let req = Request::new("bash", json!({"command": "pytest"})).unwrap();
    let asked = p.decide(&req);
    assert!(matches!(
        broker.submit(req, asked).unwrap(),
        Submitted::Pending(_)
    ));
    assert_eq!(broker.pending().len(), 1);
    // a deny is recorded and returned unchanged
    let mut denied = allowed;
    denied.decision = Effect::Deny;
    assert_eq!(
        broker.submit(read_req, denied.clone()).unwrap(),
        Submitted::Decided(denied)
    );
    assert_eq!(broker.pending().len(), 1);
}

#[test]
fn requests_carry_tool_operation_path_command_and_cwd() {
    // "Tool-action fields (tool_name, operation, cwd, path, command)"; the
    // request id is echoed for correlation.
    let src = r#"import "agentlane"
policy p { default allow }"#;
    let p = Policy::compile("p.perm", src, &Options::logical()).unwrap();
    let mut req = Request::new("bash", json!({"command": "ls", "cwd": "/srv/ws"})).unwrap();
    req.id = Some(json!("call_1"));
    let d = p.decide(&req);
    assert_eq!(d.id, Some(json!("call_1")));
    let i = &d.items[0];
    assert_eq!(
        (i.tool.as_str(), i.op.as_str()),
        ("bash", "execute_command")
    );
    assert_eq!(
        (i.command.as_deref(), i.cwd.as_deref(), i.path.as_deref()),
        (Some("ls"), Some("/srv/ws"), None)
    );
    let d = p.decide(&Request::new("patch", json!({"path": "/srv/ws/a.py"})).unwrap());
    assert_eq!(
        (d.items[0].op.as_str(), d.items[0].path.as_deref()),
        ("modify_file", Some("/srv/ws/a.py"))
    );
}

#[test]
fn approval_required_texts_without_a_callback() {
    // "If no callback is configured, the tool returns a stable
    // approval-required result and does not execute."
    let p = approval_policy();
    let text = |tool: &str, input| tool_result_text(&p.decide(&Request::new(tool, input).unwrap()));
    assert_eq!(
        text("patch", json!({"path": "/w/a.py"})).unwrap(),
        "approval required: patch on `/w/a.py` awaiting approval"
    );
    assert_eq!(text("read", json!({"path": "/w/a.py"})), None);
}
