//! The lints of `permc check` (`src/analysis/`).
//!
//! * Every `.perm` file under `tests/analysis/` is a case: [`EXPECTED`] lists
//!   the lint codes it must report, in order (an empty list is a negative
//!   case), and its rendered findings are snapshot-tested as
//!   `tests/snapshots/analysis__<stem>.snap`.
//! * [`witnesses`] pins (code, witness) pairs for small inline policies.
//! * Every finding carries claims about its witness (which rule decides it,
//!   which rule matches it, what the outcome is); [`every_claim_holds`] and
//!   the property test [`generated_policies`] check each one with the
//!   reference interpreter, and check the "never" findings against sampled
//!   inputs too (a sample is no proof, but a counterexample is a bug).
//! * The shipped policies are checked, and the analysis of a generated
//!   1,000-rule policy is an ignored test that prints its time (run it with
//!   `cargo test --release --test analysis -- --ignored --nocapture`).

use permc::analysis::{Claim, Expect, Finding, Subject, findings};
use permc::lower::{Lowered, PolicyBody};
use permc::reference::{Reference, Step, trace};
use permc::request::{Subject as ItemSubject, expand};
use permc::{Effect, Options, Policy};
use proptest::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

const EXPECTED: &[(&str, &[&str])] = &[
    ("shadowed_rule", &["permc::shadowed-rule"]),
    ("shadowed_same_effect", &["permc::shadowed-rule"]),
    ("shadowed_preset", &["permc::shadowed-rule"]),
    ("shadowed_gate", &["permc::shadowed-rule"]),
    ("shadowed_negative", &[]),
    ("partly_shadowed", &["permc::partly-shadowed"]),
    ("partly_shadowed_negative", &[]),
    ("universal_rule", &["permc::universal-rule"]),
    ("universal_rule_negative", &[]),
    (
        "empty_matcher",
        &["permc::empty-matcher", "permc::empty-matcher"],
    ),
    ("empty_matcher_negative", &[]),
    ("dead_allow_strictest", &["permc::dead-allow"]),
    ("dead_allow_all", &["permc::dead-allow"]),
    ("dead_allow_negative", &[]),
    ("inert_grant", &["permc::inert-grant"]),
    ("inert_grant_negative", &[]),
    (
        "unanchored_regex",
        &["permc::unanchored-regex", "permc::unanchored-regex"],
    ),
    ("unanchored_regex_negative", &[]),
    (
        "exec_wrapper_allow",
        &[
            "permc::exec-wrapper-allow",
            "permc::exec-wrapper-allow",
            "permc::exec-wrapper-allow",
            "permc::exec-wrapper-allow",
        ],
    ),
    ("exec_wrapper_allow_negative", &[]),
    (
        "wildcard_tool_deny",
        &["permc::wildcard-tool-deny", "permc::shadowed-rule"],
    ),
    ("wildcard_tool_deny_negative", &[]),
    ("wildcard_tool_deny_lone", &[]),
    ("bare_tool_name", &["permc::bare-tool-name"]),
    ("bare_tool_name_negative", &[]),
    ("analysis_limit", &["permc::analysis-limit"]),
];

fn load(path: &str) -> Policy {
    Policy::load(path, &Options::logical())
        .unwrap_or_else(|e| panic!("{path} does not compile:\n{}", e.render(false)))
}

fn case(stem: &str) {
    let path = format!("tests/analysis/{stem}.perm");
    let policy = load(&path);
    let found = findings(policy.lowered(), policy.sources());
    let codes: Vec<&str> = found.iter().map(|f| f.diagnostic.code).collect();
    let want = EXPECTED
        .iter()
        .find(|(s, _)| *s == stem)
        .map(|(_, c)| *c)
        .unwrap_or_default();
    let rendered: Vec<String> = found
        .iter()
        .map(|f| f.diagnostic.render(policy.sources(), false))
        .collect();
    assert_eq!(codes, want, "{path}:\n{}", rendered.join("\n"));
    let text = if rendered.is_empty() {
        "(no findings)\n".to_string()
    } else {
        rendered.join("\n")
    };
    insta::assert_snapshot!(stem, text);
    check_claims(&policy, &found).unwrap_or_else(|e| panic!("{path}: {e}"));
}

macro_rules! cases {
    ($($name:ident),* $(,)?) => { $( #[test] fn $name() { case(stringify!($name)); } )* };
}

cases!(
    shadowed_rule,
    shadowed_same_effect,
    shadowed_preset,
    shadowed_gate,
    shadowed_negative,
    partly_shadowed,
    partly_shadowed_negative,
    universal_rule,
    universal_rule_negative,
    empty_matcher,
    empty_matcher_negative,
    dead_allow_strictest,
    dead_allow_all,
    dead_allow_negative,
    inert_grant,
    inert_grant_negative,
    unanchored_regex,
    unanchored_regex_negative,
    exec_wrapper_allow,
    exec_wrapper_allow_negative,
    wildcard_tool_deny,
    wildcard_tool_deny_negative,
    wildcard_tool_deny_lone,
    bare_tool_name,
    bare_tool_name_negative,
    analysis_limit,
);

#[test]
fn every_input_has_an_expectation() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir("tests/analysis").expect("tests/analysis") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "perm") {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            if !EXPECTED.iter().any(|(s, _)| *s == stem) {
                missing.push(stem);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "add these to EXPECTED and to cases!: {missing:?}"
    );
}

// ---- witnesses ---------------------------------------------------------------

/// Small policies and the (code, witness) each must produce, in order.
const WITNESSES: &[(&str, &[(&str, &str)])] = &[
    (
        r#"tool file_read { read input.path }
           policy p { workspace "/home/user/project"
             allow read "/workspace/**"
             deny read "**/.env" }"#,
        &[("permc::partly-shadowed", "/home/user/project/.env")],
    ),
    (
        r#"tool file_read { read input.path }
           policy p { workspace "/w"
             allow read "/w/**"
             deny read "/w/src/**" }"#,
        &[("permc::shadowed-rule", "/w/src")],
    ),
    (
        r#"tool shell { exec input.command }
           policy p { deny exec /rm/ }"#,
        &[("permc::unanchored-regex", "npm run format")],
    ),
    (
        r#"tool shell { exec input.command }
           policy p { deny exec /git push/ }"#,
        &[("permc::unanchored-regex", "echo agit push")],
    ),
    (
        r#"tool shell { exec input.command }
           policy p { allow exec /ls/ default ask }"#,
        &[("permc::unanchored-regex", "rm -rf ls")],
    ),
    (
        r#"tool shell { exec input.command }
           policy p { allow exec prefix "env" default ask }"#,
        &[("permc::exec-wrapper-allow", "env rm -rf /")],
    ),
    (
        r#"tool shell { exec input.command }
           policy p { allow exec prefix "timeout 5" default ask }"#,
        &[("permc::exec-wrapper-allow", "timeout 5 rm -rf /")],
    ),
    (
        r#"tool shell { exec input.command }
           policy p { allow exec prefix "python3" default ask }"#,
        &[("permc::exec-wrapper-allow", "python3 -c CODE")],
    ),
    (
        r#"tool file_write { write input.path }
           policy p { workspace "/w" deny write "!src/**", "!tests/**" }"#,
        &[("permc::universal-rule", "/w/src")],
    ),
    (
        r#"tool shell { exec input.command }
           policy p { deny exec /a*/ }"#,
        &[("permc::universal-rule", "''")],
    ),
    (
        r#"tool file_read { read input.path }
           policy p { combine strictest deny read "/w/**" allow read "/w/a/**" }"#,
        &[("permc::dead-allow", "/w/a")],
    ),
    (
        r#"policy p { deny tool delete_repo deny tool mcp__gh__delete_repo }"#,
        &[("permc::bare-tool-name", "mcp__gh__delete_repo")],
    ),
    (
        r#"tool Read { read input.file_path }
           policy p { deny tool "*" }"#,
        &[("permc::wildcard-tool-deny", "Read")],
    ),
    (
        // A Unicode word boundary: proven on ASCII, settled once matched.
        r#"tool shell { exec input.command }
           policy p { deny exec /^\s*rm\b/ deny exec prefix "rm" }"#,
        &[("permc::shadowed-rule", "rm")],
    ),
    (
        // `prefix` compares whole words; a quoted word with a space is one
        // word, so the regex is not covered by the prefix.
        r#"tool shell { exec input.command }
           policy p { deny exec prefix "git" ask exec /^git( |$)/ }"#,
        &[],
    ),
    (
        r#"tool shell { exec input.command }
           policy p { allow exec prefix "git" deny exec /^git / }"#,
        &[("permc::partly-shadowed", "git a")],
    ),
    (
        // ...and the gate of a first-match policy shadows nothing.
        r#"tool shell { exec input.command cwd input.dir }
           policy p { deny exec cwd outside workspace allow exec prefix "ls" }"#,
        &[],
    ),
];

#[test]
fn witnesses() {
    let mut problems = Vec::new();
    for (src, want) in WITNESSES {
        let policy = Policy::compile("w.perm", src, &Options::logical())
            .unwrap_or_else(|e| panic!("{}", e.render(false)));
        let found = findings(policy.lowered(), policy.sources());
        let got: Vec<(&str, String)> = found
            .iter()
            .map(|f| {
                (
                    f.diagnostic.code,
                    f.diagnostic.witness.clone().unwrap_or_default(),
                )
            })
            .collect();
        let want: Vec<(&str, String)> = want.iter().map(|(c, w)| (*c, w.to_string())).collect();
        if got != want {
            problems.push(format!("{src}\n  want {want:?}\n  got  {got:?}"));
        }
        if let Err(e) = check_claims(&policy, &found) {
            problems.push(format!("{src}\n  {e}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

// ---- claims ------------------------------------------------------------------

static CHECKED: AtomicUsize = AtomicUsize::new(0);

fn same_subject(item: &ItemSubject, want: &Subject) -> bool {
    match (item, want) {
        (ItemSubject::Path(p), Subject::Path(q)) => p == q,
        (ItemSubject::Command(c), Subject::Command(w)) => c.words == *w,
        (ItemSubject::Command(c), Subject::Text(t)) => c.canonical == *t,
        (ItemSubject::Bare, Subject::Bare) => true,
        _ => false,
    }
}

fn rules(low: &Lowered, policy: u32) -> Option<&permc::lower::RuleList> {
    match &low.policies.get(policy as usize)?.body {
        PolicyBody::Rules(l) => Some(l),
        PolicyBody::All(_) => None,
    }
}

/// Checks every claim that can be sent as a request. Err names the first
/// claim that does not hold.
fn check_claims(policy: &Policy, found: &[Finding]) -> Result<(), String> {
    let low = policy.lowered();
    for f in found {
        for c in &f.claims {
            check_claim(low, c)
                .map_err(|e| format!("{}: {e}\nclaim: {c:?}", f.diagnostic.message))?;
        }
    }
    Ok(())
}

fn check_claim(low: &Lowered, c: &Claim) -> Result<(), String> {
    let Some(req) = c.request(low) else {
        return Ok(());
    };
    let tool = c.tool_name(low);
    match (&c.expect, rules(low, c.policy)) {
        (Expect::Effect(e), None) => {
            let d = permc::eval::decide(low, &Reference { low }, c.policy, &req, None);
            CHECKED.fetch_add(1, Ordering::Relaxed);
            return if d.decision == *e {
                Ok(())
            } else {
                Err(format!("the composition decides {}", d.decision))
            };
        }
        (_, None) => return Err("a rule claim on a composition".into()),
        (Expect::Matches(k, want), Some(list)) => {
            let def = low
                .tool_index
                .get(&tool)
                .and_then(|&i| low.tools.get(i as usize));
            let items = expand(&req, def, &list.workspace, None)?;
            let item = items
                .iter()
                .find(|it| it.op == c.op && same_subject(&it.subject, &c.subject))
                .ok_or_else(|| format!("no such item among {items:?}"))?;
            let step = trace(list, item)
                .into_iter()
                .nth(*k as usize)
                .ok_or("no such rule")?;
            let matched = matches!(step, Step::Matched(_) | Step::GateFired);
            CHECKED.fetch_add(1, Ordering::Relaxed);
            if matched != *want {
                return Err(format!("rule {k}: {step:?}"));
            }
        }
        (expect, Some(list)) => {
            let d = permc::eval::decide(low, &Reference { low }, c.policy, &req, None);
            let item = d
                .items
                .iter()
                .zip(expand(
                    &req,
                    low.tool_index
                        .get(&tool)
                        .and_then(|&i| low.tools.get(i as usize)),
                    &list.workspace,
                    None,
                )?)
                .find(|(it, x)| it.op == c.op && same_subject(&x.subject, &c.subject))
                .map(|(it, _)| it)
                .ok_or_else(|| format!("no such item in {d:?}"))?;
            CHECKED.fetch_add(1, Ordering::Relaxed);
            match expect {
                Expect::DecidedBy(r) if item.rule_index != *r => {
                    return Err(format!("decided by {:?}", item.rule_index));
                }
                Expect::Effect(e) if item.decision != *e => {
                    return Err(format!("decided {}", item.decision));
                }
                _ => {}
            }
        }
    }
    Ok(())
}

#[test]
fn every_claim_holds() {
    // The fixtures' claims are checked by their cases; here, the shipped
    // files and the conformance suites.
    let mut paths = shipped();
    if let Ok(entries) = std::fs::read_dir("tests/conformance") {
        paths.extend(
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "perm"))
                .map(|p| p.display().to_string()),
        );
    }
    for path in paths {
        let policy = load(&path);
        let found = findings(policy.lowered(), policy.sources());
        check_claims(&policy, &found).unwrap_or_else(|e| panic!("{path}: {e}"));
        check_samples(&policy, &found).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
}

// ---- generated policies --------------------------------------------------------

const PATH_MATCHERS: &[&str] = &[
    "\"/workspace/**\"",
    "\"**/.env\"",
    "\"/workspace/src/**\"",
    "\"**/*.pem\"",
    "\"/etc/**\"",
    "\"!/workspace/**\"",
    "\"**\"",
    "\"src/**\"",
    "\"!src/**\"",
    "\"/workspace/.env\"",
    "/\\.env$/",
    "/^\\/etc/",
    "/secret/",
];
const COMMAND_MATCHERS: &[&str] = &[
    "prefix \"rm\"",
    "prefix \"git\"",
    "prefix \"git push\"",
    "prefix \"ls\"",
    "prefix \"sudo\"",
    "prefix \"find\"",
    "/rm/",
    "/^\\s*rm\\b/",
    "/push/",
    "/^git/",
    "/ls/",
    "/\\bsudo\\b/",
];
const TOOL_TARGETS: &[&str] = &[
    "tool Read",
    "tool \"*\"",
    "tool shell",
    "tool mcp__gh__delete_repo",
    "tool delete_repo",
];
const EFFECTS: &[&str] = &["allow", "deny", "ask"];

fn rule_strategy() -> impl Strategy<Value = String> {
    let effect = prop::sample::select(EFFECTS);
    let path = (
        effect.clone(),
        prop::collection::vec(prop::sample::select(PATH_MATCHERS), 0..3),
    )
        .prop_map(|(e, ms)| format!("{e} read {}", ms.join(", ")));
    let cmd = (
        effect.clone(),
        prop::collection::vec(prop::sample::select(COMMAND_MATCHERS), 0..3),
    )
        .prop_map(|(e, ms)| format!("{e} exec {}", ms.join(", ")));
    let tool = (effect, prop::sample::select(TOOL_TARGETS)).prop_map(|(e, t)| format!("{e} {t}"));
    prop_oneof![3 => path, 3 => cmd, 1 => tool]
}

fn body_strategy() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop::sample::select(EFFECTS),
        prop::collection::vec(rule_strategy(), 1..6),
    )
        .prop_map(|(strict, default, rules)| {
            format!(
                "workspace \"/home/user/project\"\n  combine {}\n  default {default}\n  {}",
                if strict { "strictest" } else { "first-match" },
                rules.join("\n  ")
            )
        })
}

fn policy_strategy() -> impl Strategy<Value = String> {
    (body_strategy(), prop::option::of(body_strategy())).prop_map(|(a, b)| {
        let head = "tool Read { read input.file_path }\ntool file_read { read input.path }\ntool shell { exec input.command }\n";
        match b {
            None => format!("{head}policy a {{\n  {a}\n}}\n"),
            Some(b) => format!("{head}policy a {{\n  {a}\n}}\npolicy b {{\n  {b}\n}}\npolicy app = all(a, b)\n"),
        }
    })
}

const SAMPLE_PATHS: &[&str] = &[
    "/home/user/project/.env",
    "/home/user/project/src/main.rs",
    "/home/user/project/src/.env",
    "/home/user/project/key.pem",
    "/home/user/project/secret",
    "/etc/passwd",
    "/tmp/x",
    "/",
];
const SAMPLE_COMMANDS: &[&str] = &[
    "rm -rf x",
    "git push",
    "git status",
    "ls -la",
    "npm run format",
    "sudo rm",
    "find . -name x",
    "echo hi",
    "pushd x",
];

/// The claimed-"never" findings must hold on sampled inputs too.
fn check_samples(policy: &Policy, found: &[Finding]) -> Result<(), String> {
    let low = policy.lowered();
    for f in found {
        let code = f.diagnostic.code;
        let Some(k) = f.claims.iter().find_map(|c| match c.expect {
            Expect::Matches(k, true) => Some((c.policy, k)),
            _ => None,
        }) else {
            continue;
        };
        let (pid, k) = k;
        let Some(list) = rules(low, pid) else {
            continue;
        };
        for (tool, input) in SAMPLE_PATHS
            .iter()
            .map(|p| ("file_read", serde_json::json!({ "path": p })))
            .chain(
                SAMPLE_COMMANDS
                    .iter()
                    .map(|c| ("shell", serde_json::json!({ "command": c }))),
            )
        {
            let req = permc::Request::new(tool, input).map_err(|e| e.to_string())?;
            let d = permc::eval::decide(low, &Reference { low }, pid, &req, None);
            let def = low
                .tool_index
                .get(tool)
                .and_then(|&i| low.tools.get(i as usize));
            let kind = f.claims.iter().find_map(|c| match c.expect {
                Expect::Matches(_, true) => Some(std::mem::discriminant(&c.subject)),
                _ => None,
            });
            for (it, x) in d
                .items
                .iter()
                .zip(expand(&req, def, &list.workspace, None)?)
            {
                let step = trace(list, &x).into_iter().nth(k as usize);
                if matches!(step, Some(Step::OtherTool | Step::OtherOp)) {
                    continue;
                }
                let same_kind = match &x.subject {
                    ItemSubject::Path(_) => {
                        kind == Some(std::mem::discriminant(&Subject::Path(String::new())))
                    }
                    ItemSubject::Command(_) => {
                        kind == Some(std::mem::discriminant(&Subject::Command(Vec::new())))
                    }
                    ItemSubject::Bare => false,
                };
                let matched = matches!(step, Some(Step::Matched(_)));
                let bad = match code {
                    "permc::shadowed-rule" => it.rule_index == Some(k),
                    "permc::dead-allow" => it.rule_index == Some(k) && it.decision == Effect::Allow,
                    "permc::universal-rule" => !matched && same_kind,
                    _ => false,
                };
                if bad {
                    return Err(format!(
                        "{code} for rule {k}, but {tool} {:?} says otherwise: {it:?}",
                        req.input
                    ));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn generated_policies() {
    let before = CHECKED.load(Ordering::Relaxed);
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 300,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    });
    let with_findings = AtomicUsize::new(0);
    let result = runner.run(&policy_strategy(), |src| {
        let policy = Policy::compile("gen.perm", &src, &Options::logical())
            .map_err(|e| TestCaseError::fail(format!("{src}\n{}", e.render(false))))?;
        let found = findings(policy.lowered(), policy.sources());
        if !found.is_empty() {
            with_findings.fetch_add(1, Ordering::Relaxed);
        }
        check_claims(&policy, &found).map_err(|e| TestCaseError::fail(format!("{src}\n{e}")))?;
        check_samples(&policy, &found).map_err(|e| TestCaseError::fail(format!("{src}\n{e}")))?;
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let checked = CHECKED.load(Ordering::Relaxed) - before;
    let with_findings = with_findings.load(Ordering::Relaxed);
    assert!(
        with_findings > 50,
        "only {with_findings} generated policies had findings"
    );
    assert!(checked > 200, "only {checked} claims were checkable");
}

// ---- shipped policies and cost ----------------------------------------------

fn shipped() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["std-policies", "examples", "tests/corpus", "docs/examples"] {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "perm") && !p.ends_with("broken.perm") {
                out.push(p.display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn shipped_policies_need_no_limits() {
    for path in shipped() {
        let policy = load(&path);
        let found = findings(policy.lowered(), policy.sources());
        let codes: Vec<&str> = found.iter().map(|f| f.diagnostic.code).collect();
        assert!(
            !codes.contains(&"permc::analysis-limit"),
            "{path}: {codes:?}"
        );
        if path.starts_with("std-policies") || path.ends_with("quickstart.perm") {
            assert!(codes.is_empty(), "{path} must be clean: {codes:?}");
        }
    }
}

/// A generated policy of `n` rules of every kind.
fn big_policy(n: usize) -> String {
    let mut s = String::from(
        "tool file_read { read input.path }\ntool shell { exec input.command }\npolicy big {\n  workspace \"/w\"\n",
    );
    for i in 0..n {
        let rule = match i % 5 {
            0 => format!("  deny read \"/w/dir{i}/**\" as r{i}\n"),
            1 => format!("  allow read \"**/*.ext{i}\" as r{i}\n"),
            2 => format!("  deny exec prefix \"tool{i} sub\" as r{i}\n"),
            3 => format!("  allow exec /^\\s*cmd{i}\\b/ as r{i}\n"),
            _ => format!("  ask tool t{i} as r{i}\n"),
        };
        s.push_str(&rule);
    }
    s.push_str("}\n");
    s
}

#[test]
#[ignore = "a benchmark: run with --release --ignored --nocapture"]
fn bench_1000_rules() {
    let src = big_policy(1000);
    let policy = Policy::compile("big.perm", &src, &Options::logical()).expect("compiles");
    let t = std::time::Instant::now();
    let found = findings(policy.lowered(), policy.sources());
    eprintln!("1000 rules: {} findings in {:?}", found.len(), t.elapsed());
}

#[test]
fn a_big_policy_is_analysed() {
    let policy =
        Policy::compile("big.perm", &big_policy(60), &Options::logical()).expect("compiles");
    let found = findings(policy.lowered(), policy.sources());
    assert!(
        found
            .iter()
            .all(|f| f.diagnostic.code != "permc::analysis-limit")
    );
    // Every fifth rule is a directory deny after an allow of some extension.
    assert_eq!(
        found
            .iter()
            .filter(|f| f.diagnostic.code == "permc::partly-shadowed")
            .count(),
        11
    );
}
