//! The compiled program and the reference interpreter agree on randomly
//! generated policies and requests: the core correctness property.

use permc::eval::decide;
use permc::reference::Reference;
use permc::{Options, Policy, Request};
use proptest::prelude::*;
use serde_json::json;

const TOOLS: &str = r#"
tool fr { read input.path split "," }
tool fw { write input.path }
tool sh { exec input.command cwd input.work_dir }
tool net { network_access }
"#;

fn segment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a",
        "b",
        ".env",
        "src",
        "x.rs",
        "w",
        "secrets",
        "deep",
        "new\nline",
    ])
}

fn glob_part() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a", "b", ".env", "src", "*", "**", "*.rs", "?", "x.rs", "{a,b}", "[ab]", ".*",
    ])
}

fn glob() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "",
            "/",
            "**/",
            "/workspace/",
            "/w/",
            "/tmp/",
            "!",
            "!/workspace/",
            "!**/",
        ]),
        prop::collection::vec(glob_part(), 1..4),
    )
        .prop_map(|(pre, parts)| format!("{pre}{}", parts.join("/")))
}

fn regex() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        r"^\s*rm\b",
        "rm",
        r"\.env$",
        "git (push|pull)",
        r"^ls$",
        "-rf",
        r"\bsrc\b",
        "a.b",
        r"^\/tmp\/",
        "^$",
    ])
}

fn prefix() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["rm", "git push", "git", "ls -la", "echo", "rm -rf"])
}

fn effect() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["allow", "deny", "ask", "interrupt"])
}

fn on_clause(tools: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::option::of(prop::sample::subsequence(tools.to_vec(), 1..=tools.len())).prop_map(|t| {
        t.map(|t| format!(" on {}", t.join(", ")))
            .unwrap_or_default()
    })
}

fn rule() -> impl Strategy<Value = String> {
    let path_rule = (
        effect(),
        prop::sample::select(vec!["read", "write", "read, write"]),
        on_clause(&["fr", "fw"]),
        prop::collection::vec(
            prop_oneof![
                glob().prop_map(|g| format!("{g:?}")),
                regex().prop_map(|r| format!("/{r}/"))
            ],
            0..3,
        ),
    )
        .prop_map(|(e, ops, on, ms)| format!("{e} {ops}{on} {}", ms.join(", ")));
    let exec_rule = (
        effect(),
        on_clause(&["sh"]),
        prop::collection::vec(
            prop_oneof![
                regex().prop_map(|r| format!("/{r}/")),
                prefix().prop_map(|p| format!("prefix {p:?}")),
                Just("cwd outside workspace".to_string()),
            ],
            0..3,
        ),
    )
        .prop_map(|(e, on, ms)| format!("{e} exec{on} {}", ms.join(", ")));
    let tool_rule = (
        effect(),
        prop::sample::subsequence(vec!["fr", "fw", "sh", "net", "X", "\"*\""], 1..3),
    )
        .prop_map(|(e, ts)| format!("{e} tool {}", ts.join(", ")));
    let net_rule = effect().prop_map(|e| format!("{e} network_access"));
    prop_oneof![4 => path_rule, 3 => exec_rule, 2 => tool_rule, 1 => net_rule]
}

fn policy() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["first-match", "strictest"]),
        prop::sample::select(vec!["allow", "ask", "deny"]),
        prop::collection::vec(rule(), 0..10),
    )
        .prop_map(|(combine, default, rules)| {
            format!(
                "{TOOLS}\npolicy p {{\n  workspace \"/w\"\n  combine {combine}\n  default {default}\n  {}\n}}\n",
                rules.join("\n  ")
            )
        })
}

fn path() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "/", "/w/", "/tmp/", "./", "../", "/w/../"]),
        prop::collection::vec(segment(), 1..4),
    )
        .prop_map(|(pre, segs)| format!("{pre}{}", segs.join("/")))
}

fn command() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "rm", "git", "push", "status", "ls", "-rf", "-la", "a", "src", "echo", "\"rm\"", "$(rm a)",
        "'x y'", ".env",
    ]);
    let sep = prop::sample::select(vec![" ", " ", " ", " ; ", " && ", " | ", "\n"]);
    prop::collection::vec((word, sep), 1..6).prop_map(|ws| {
        let mut s = String::new();
        for (w, sep) in ws {
            s.push_str(w);
            s.push_str(sep);
        }
        s
    })
}

fn request() -> impl Strategy<Value = Request> {
    let cwd = prop::option::of(prop::sample::select(vec!["/w", "/w/a", "/tmp", "/", "a"]));
    prop_oneof![
        (prop::collection::vec(path(), 1..4), cwd.clone()).prop_map(|(ps, cwd)| {
            let mut r = Request::new("fr", json!({ "path": ps.join(",") })).unwrap();
            r.cwd = cwd.map(String::from);
            r
        }),
        path().prop_map(|p| Request::new("fw", json!({ "path": p })).unwrap()),
        (command(), cwd).prop_map(|(c, wd)| Request::new(
            "sh",
            json!({ "command": c, "work_dir": wd })
        )
        .unwrap()),
        prop::sample::select(vec!["net", "X", "Y", "fr"])
            .prop_map(|t| Request::new(t, json!({})).unwrap()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn compiled_program_agrees_with_reference(src in policy(), reqs in prop::collection::vec(request(), 1..6)) {
        let policy = Policy::compile("gen.perm", &src, &Options::logical())
            .map_err(|e| TestCaseError::fail(format!("generated policy failed to compile:\n{src}\n{}", e.render(false))))?;
        let low = policy.lowered();
        let pid = policy.selected().ok_or_else(|| TestCaseError::fail("no policy"))?;
        for req in &reqs {
            let compiled = decide(low, policy.program(), pid, req, None);
            let oracle = decide(low, &Reference { low }, pid, req, None);
            prop_assert_eq!(&compiled, &oracle, "policy:\n{}\nrequest: {:?}", src, req);
        }
    }
}

/// The property must be able to fail: a backend that always picks the first
/// rule disagrees with the reference on a policy where order matters.
#[test]
fn agreement_check_detects_a_wrong_backend() {
    struct FirstRule;
    impl permc::eval::Backend for FirstRule {
        fn select(&self, _: u32, _: &permc::request::Item) -> Option<u32> {
            Some(0)
        }
    }
    let src = format!("{TOOLS}\npolicy p {{ deny read \"**/.env\"\n allow read \"**\" }}");
    let policy = Policy::compile("p.perm", &src, &Options::logical()).unwrap();
    let low = policy.lowered();
    let req = Request::new("fr", json!({"path": "README.md"})).unwrap();
    let wrong = decide(low, &FirstRule, 0, &req, None);
    let oracle = decide(low, &Reference { low }, 0, &req, None);
    assert_ne!(wrong, oracle);
    assert_eq!(oracle.decision, permc::Effect::Allow);
}
