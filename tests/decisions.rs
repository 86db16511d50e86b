//! Decision contents: labels, reasons, guidance, items, malformed input.

use permc::{Effect, Options, Policy, Request};
use serde_json::json;

const SRC: &str = r#"
tool file_read { read input.path split "," }
tool file_write { write input.path }
tool shell { exec input.command cwd input.work_dir }
tool web { network_access }

policy p {
  workspace "/home/user/project"
  deny read "**/.env" as deny_env guidance "Read config.example.env instead."
  deny read "/etc/**"
  deny exec /^\s*rm\b/ as block_rm
  ask exec prefix "curl" reason "Allow this download?"
  ask network_access
  allow read, write "/workspace/**"
  default deny
}
"#;

fn policy() -> Policy {
    Policy::compile("p.perm", SRC, &Options::logical()).unwrap()
}

fn decide(tool: &str, input: serde_json::Value) -> permc::Decision {
    policy().decide(&Request::new(tool, input).unwrap())
}

#[test]
fn labels_and_reasons() {
    // (tool, input, decision, rule label, reason)
    let table: Vec<(&str, serde_json::Value, Effect, Option<&str>, &str)> = vec![
        (
            "file_read",
            json!({"path": ".env"}),
            Effect::Deny,
            Some("deny_env"),
            "read denied for /home/user/project/.env (rule: deny_env)",
        ),
        (
            "file_read",
            json!({"path": "/etc/passwd"}),
            Effect::Deny,
            Some("deny:/etc/**"),
            "read denied for /etc/passwd (rule: deny:/etc/**)",
        ),
        (
            "shell",
            json!({"command": "rm -rf /"}),
            Effect::Deny,
            Some("block_rm"),
            "shell command blocked: 'rm -rf /' (rule: block_rm)",
        ),
        (
            "shell",
            json!({"command": "curl x"}),
            Effect::Ask,
            Some("Allow this download?"),
            "Allow this download?",
        ),
        (
            "web",
            json!({}),
            Effect::Ask,
            Some("ask:network_access"),
            "network_access requires approval for tool web (rule: ask:network_access)",
        ),
        (
            "file_write",
            json!({"path": "a.txt"}),
            Effect::Allow,
            Some("allow:/workspace/**"),
            "write allowed for /home/user/project/a.txt (rule: allow:/workspace/**)",
        ),
        (
            "file_write",
            json!({"path": "/tmp/a"}),
            Effect::Deny,
            None,
            "write denied for /tmp/a (default deny)",
        ),
        (
            "Bash",
            json!({"command": "ls"}),
            Effect::Deny,
            None,
            "tool Bash denied (default deny)",
        ),
    ];
    for (tool, input, want, rule, reason) in table {
        let d = decide(tool, input.clone());
        assert_eq!(d.decision, want, "{tool} {input}");
        assert_eq!(d.rule.as_deref(), rule, "{tool} {input}");
        assert_eq!(d.reason, reason, "{tool} {input}");
    }
}

#[test]
fn guidance_and_items_travel_with_the_decision() {
    let d = decide("file_read", json!({"path": "README.md,.env"}));
    assert_eq!(d.decision, Effect::Deny);
    assert_eq!(
        d.guidance.as_deref(),
        Some("Read config.example.env instead.")
    );
    let items: Vec<_> = d
        .items
        .iter()
        .map(|i| (i.path.as_deref().unwrap(), i.decision))
        .collect();
    assert_eq!(
        items,
        vec![
            ("/home/user/project/README.md", Effect::Allow),
            ("/home/user/project/.env", Effect::Deny)
        ]
    );
    let v: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
    assert_eq!(v["items"][1]["op"], "read");
    assert_eq!(v["items"][1]["rule"], "deny_env");
    assert_eq!(v["decision"], "deny");
}

#[test]
fn command_items_carry_segments_and_cwd() {
    let d = decide(
        "shell",
        json!({"command": "ls; rm -rf build", "work_dir": "/tmp"}),
    );
    assert_eq!(d.decision, Effect::Deny);
    let cmds: Vec<_> = d
        .items
        .iter()
        .map(|i| i.command.as_deref().unwrap())
        .collect();
    assert_eq!(cmds, vec!["ls", "rm -rf build"]);
    assert!(d.items.iter().all(|i| i.cwd.as_deref() == Some("/tmp")));
}

#[test]
fn malformed_requests_are_denied_with_a_reason() {
    let p = policy();
    let cases = [
        ("not json", "not valid JSON"),
        ("[1,2]", "must be a JSON object"),
        (r#"{"input":{}}"#, "no `tool`"),
        (r#"{"tool":7,"input":{}}"#, "`tool` must be a string"),
        (
            r#"{"tool":"file_read","input":"x"}"#,
            "`input` must be an object",
        ),
        (r#"{"tool":"file_read"}"#, "no `input`"),
        (
            r#"{"tool":"file_read","input":{"path":42}}"#,
            "input.path must be a string",
        ),
        (
            r#"{"tool":"file_read","input":{"path":["a",1]}}"#,
            "input.path[1] must be a string",
        ),
        (r#"{"tool":"file_read","input":{"path":"a\u0000b"}}"#, "NUL"),
        (r#"{"tool":"shell","input":{"command":"ls\u0000"}}"#, "NUL"),
        (r#"{"tool":"file_read","input":{"path":""}}"#, "empty"),
        (
            r#"{"tool":"file_read","input":{},"cwd":5}"#,
            "`cwd` must be a string",
        ),
        (
            r#"{"tool":"file_read","input":{},"extra":1}"#,
            "unknown field `extra`",
        ),
        (
            r#"{"tool":"file_read","input":{"path":".env","path":"a"}}"#,
            "duplicate key `path`",
        ),
        (
            r#"{"tool":"file_read","tool":"shell","input":{}}"#,
            "duplicate key `tool`",
        ),
    ];
    for (line, needle) in cases {
        let d = p.decide_json(line);
        assert_eq!(d.decision, Effect::Deny, "{line}");
        assert!(
            d.reason.starts_with("malformed request: "),
            "{line}: {}",
            d.reason
        );
        assert!(d.reason.contains(needle), "{line}: {}", d.reason);
    }
    // The id survives when the JSON parses.
    let d = p.decide_json(r#"{"id":"c1","tool":"file_read","input":{"path":42}}"#);
    assert_eq!(d.id, Some(json!("c1")));
}

#[test]
fn several_policies_need_a_choice() {
    let src = "policy a { default allow }\npolicy b { default deny }";
    let p = Policy::compile("ab.perm", src, &Options::logical()).unwrap();
    let req = Request::new("x", json!({})).unwrap();
    let d = p.decide(&req);
    assert_eq!(d.decision, Effect::Deny);
    assert!(d.reason.contains("no policy selected"), "{}", d.reason);
    assert_eq!(p.decide_as("a", &req).unwrap().decision, Effect::Allow);
    let chosen = Policy::compile(
        "ab.perm",
        src,
        &Options {
            policy: Some("a".into()),
            ..Options::logical()
        },
    )
    .unwrap();
    assert_eq!(chosen.decide(&req).decision, Effect::Allow);
    let err = Policy::compile(
        "ab.perm",
        src,
        &Options {
            policy: Some("c".into()),
            ..Options::logical()
        },
    )
    .unwrap_err();
    assert_eq!(err.diagnostics[0].code, "permc::unknown-policy");
}

#[test]
fn workspace_option_overrides_the_policy() {
    let opts = Options {
        workspace: Some("/srv/app".into()),
        ..Options::logical()
    };
    let p = Policy::compile("p.perm", SRC, &opts).unwrap();
    let d = p.decide(&Request::new("file_write", json!({"path": "a.txt"})).unwrap());
    assert_eq!(d.decision, Effect::Allow);
    assert_eq!(d.items[0].path.as_deref(), Some("/srv/app/a.txt"));
}

#[cfg(unix)]
#[test]
fn the_resolver_sees_through_symlinks() {
    let dir = std::env::temp_dir().join(format!("permc-dec-{}", std::process::id()));
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let link = ws.join("escape");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/etc", &link).unwrap();
    let ws_canon = std::fs::canonicalize(&ws).unwrap().display().to_string();
    let src = "tool file_read { read input.path }\npolicy p { allow read \"/workspace/**\"\n default deny }";
    let resolving = Options {
        workspace: Some(ws_canon.clone()),
        ..Options::default()
    };
    let logical = Options {
        workspace: Some(ws_canon),
        ..Options::logical()
    };
    let req = Request::new("file_read", json!({"path": "escape/passwd"})).unwrap();
    let through = Policy::compile("p.perm", src, &resolving)
        .unwrap()
        .decide(&req);
    assert_eq!(through.decision, Effect::Deny, "{through:?}");
    assert_eq!(through.items[0].path.as_deref(), Some("/etc/passwd"));
    let as_written = Policy::compile("p.perm", src, &logical)
        .unwrap()
        .decide(&req);
    assert_eq!(as_written.decision, Effect::Allow);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn decisions_from_many_threads() {
    let p = std::sync::Arc::new(policy());
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let p = p.clone();
            std::thread::spawn(move || {
                let path = if i % 2 == 0 { ".env" } else { "a.txt" };
                (0..200)
                    .map(|_| {
                        p.decide(&Request::new("file_read", json!({"path": path})).unwrap())
                            .decision
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let want = if i % 2 == 0 {
            Effect::Deny
        } else {
            Effect::Allow
        };
        assert!(h.join().unwrap().iter().all(|d| *d == want));
    }
}
