//! `permc diff`: behaviour changes between two versions of a policy, from the
//! automata, each witness re-decided by the evaluator.
//!
//! Fixtures live in tests/diff/ as `NAME_old.perm` / `NAME_new.perm`.

use permc::diff::{Limits, Report, diff};
use permc::{Effect, Options, Policy, Request};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary from the crate root, without colour.
fn permc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_permc"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run permc")
}

/// `permc diff` on a fixture pair: exit code, stdout and stderr in one text.
fn run_fixture(name: &str, extra: &[&str]) -> String {
    let old = format!("tests/diff/{name}_old.perm");
    let new = format!("tests/diff/{name}_new.perm");
    let mut args = vec!["diff", old.as_str(), new.as_str()];
    args.extend_from_slice(extra);
    let o = permc(&args);
    let mut out = format!(
        "$ permc {}\nexit {}\n",
        args.join(" "),
        o.status.code().unwrap_or(-1)
    );
    out.push_str(&String::from_utf8_lossy(&o.stdout));
    let err = String::from_utf8_lossy(&o.stderr);
    if !err.is_empty() {
        out.push_str("--- stderr\n");
        out.push_str(&err);
    }
    out
}

fn load(path: &Path, policy: Option<&str>) -> Policy {
    let opts = Options {
        policy: policy.map(str::to_string),
        ..Options::logical()
    };
    Policy::load(path, &opts).unwrap_or_else(|e| panic!("{}: {}", path.display(), e.render(false)))
}

/// The library's report on a fixture pair; no witness may fail to reproduce.
fn report(name: &str, policy: Option<&str>) -> Report {
    let old = load(&root().join(format!("tests/diff/{name}_old.perm")), policy);
    let new = load(&root().join(format!("tests/diff/{name}_new.perm")), policy);
    let r = diff(&old, &new, &Limits::default()).expect("diff");
    assert!(
        r.internal_errors.is_empty(),
        "{name}: {:?}",
        r.internal_errors
    );
    r
}

#[test]
fn reordering_two_rules_shows_the_shadowed_inputs() {
    insta::assert_snapshot!(run_fixture("reorder", &[]));
    let r = report("reorder", None);
    assert_eq!(r.changes.len(), 1);
    let c = &r.changes[0];
    assert_eq!(c.input.as_deref(), Some("/home/user/project/.env"));
    assert_eq!(
        (c.old.decision, c.new.decision),
        (Effect::Deny, Effect::Allow)
    );
    assert_eq!(
        (c.old.rule.as_deref(), c.new.rule.as_deref()),
        (Some("no_env"), Some("workspace"))
    );
}

#[test]
fn tightening_a_glob() {
    insta::assert_snapshot!(run_fixture("tighten", &[]));
}

#[test]
fn adding_denies() {
    insta::assert_snapshot!(run_fixture("add_deny", &[]));
    let r = report("add_deny", None);
    // Every new rule shows up with its own class; the bare tool too.
    let rules: Vec<_> = r
        .changes
        .iter()
        .filter_map(|c| c.new.rule.clone())
        .collect();
    for want in ["no_history_rewrite", "no_lockfiles", "no_bash"] {
        assert!(
            rules.iter().any(|r| r == want),
            "{want} missing from {rules:?}"
        );
    }
}

#[test]
fn changing_the_default() {
    insta::assert_snapshot!(run_fixture("default", &[]));
}

#[test]
fn changing_a_command_regex() {
    insta::assert_snapshot!(run_fixture("regex", &[]));
}

#[test]
fn moving_the_workspace_under_a_cwd_gate() {
    insta::assert_snapshot!(run_fixture("gate", &[]));
    // The same workspace given to both: nothing changes.
    let o = permc(&[
        "diff",
        "tests/diff/gate_old.perm",
        "tests/diff/gate_new.perm",
        "--workspace",
        "/srv",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
}

#[test]
fn a_member_of_a_composition() {
    insta::assert_snapshot!(run_fixture("composed", &["--policy", "app"]));
    // The member alone changes the other way round.
    let r = report("composed", Some("approval"));
    assert!(
        r.changes
            .iter()
            .any(|c| c.old.decision == Effect::Ask && c.new.decision == Effect::Allow)
    );
}

#[test]
fn switching_to_strictest() {
    insta::assert_snapshot!(run_fixture("strictest", &[]));
}

#[test]
fn json_output() {
    let o = permc(&[
        "diff",
        "tests/diff/reorder_old.perm",
        "tests/diff/reorder_new.perm",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        v,
        serde_json::json!([{
            "tool": "file_read", "op": "read", "input": "/home/user/project/.env",
            "old": {"decision": "deny", "rule": "no_env"},
            "new": {"decision": "allow", "rule": "workspace"}
        }])
    );
    let o = permc(&[
        "diff",
        "tests/diff/gate_old.perm",
        "tests/diff/gate_new.perm",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v[0]["cwd"], "/w");
    assert_eq!(v[0]["input"], "a");
    let o = permc(&[
        "diff",
        "tests/diff/same.perm",
        "tests/diff/reorder_old.perm",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[]\n");
}

#[test]
fn identical_files_exit_0_without_output() {
    let o = permc(&[
        "diff",
        "tests/diff/same.perm",
        "tests/diff/reorder_old.perm",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn every_shipped_policy_equals_itself() {
    let mut n = 0;
    for dir in [
        "examples",
        "std-policies",
        "tests/corpus",
        "docs/examples",
        "tests/conformance",
    ] {
        let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "perm"))
        {
            let Ok(any) = Policy::load(f, &Options::logical()) else {
                continue;
            };
            for name in any.policy_names() {
                let p = load(f, Some(name));
                let r = diff(&p, &p, &Limits::default()).expect("diff");
                assert!(
                    r.is_empty(),
                    "{} `{name}` differs from itself: {}",
                    f.display(),
                    r.to_text()
                );
                n += 1;
            }
        }
    }
    assert!(n >= 20, "only {n} policies compared");
}

#[test]
fn bad_input_exits_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["diff", "tests/diff/missing.perm", "tests/diff/same.perm"],
            "cannot read",
        ),
        (
            &["diff", "tests/diff/two.perm", "tests/diff/two.perm"],
            "choose one with --policy",
        ),
        (
            &[
                "diff",
                "tests/diff/two.perm",
                "tests/diff/same.perm",
                "--policy",
                "a",
            ],
            "unknown policy `a`",
        ),
        (
            &[
                "diff",
                "tests/diff/same.perm",
                "tests/diff/same.perm",
                "--workspace",
                "w",
            ],
            "must be an absolute path",
        ),
        (
            &["diff", "tests/diff/same.perm", "docs/examples/broken.perm"],
            "unknown preset",
        ),
        (&["diff", "tests/diff/same.perm"], "required"),
    ];
    for (args, want) in cases {
        let o = permc(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_policy_chosen_by_name() {
    let o = permc(&[
        "diff",
        "tests/diff/two.perm",
        "tests/diff/two.perm",
        "--policy",
        "b",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
}

#[test]
fn a_comparison_over_the_limits_says_so() {
    let old = load(&root().join("tests/diff/reorder_old.perm"), None);
    let new = load(&root().join("tests/diff/reorder_new.perm"), None);
    let r = diff(
        &old,
        &new,
        &Limits {
            max_states: 3,
            ..Limits::default()
        },
    )
    .expect("diff");
    assert!(r.incomplete);
    assert!(r.behaviour_changed());
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("could not compare") && n.contains("combined automaton states")),
        "{:?}",
        r.notes
    );
    let r = diff(
        &old,
        &new,
        &Limits {
            dfa_bytes: 10,
            determinize_bytes: 10,
            ..Limits::default()
        },
    )
    .expect("diff");
    assert!(r.incomplete);
    assert!(
        r.notes.iter().any(|n| n.contains("could not compare")),
        "{:?}",
        r.notes
    );
}

// ---- exactness against sampling ------------------------------------------------------

const SEGS: &[&str] = &["a", "b", ".env", "src", "x.rs"];
const WORDS: &[&str] = &["git", "push", "rm", "-rf", "ls"];

fn glob() -> impl Strategy<Value = String> {
    let seg = prop::sample::select(vec!["a", "b", ".env", "src", "*", "**", "*.rs", "x.rs"]);
    (
        prop::collection::vec(seg, 1..4),
        any::<bool>(),
        prop::sample::select(vec!["", "/w/", "/"]),
    )
        .prop_map(|(segs, neg, lead)| {
            let body = segs.join("/");
            let bang = if neg { "!" } else { "" };
            if lead.is_empty() && !body.starts_with("**") {
                format!("{bang}{body}")
            } else {
                format!("{bang}{lead}{body}")
            }
        })
}

fn rule(i: usize) -> BoxedStrategy<String> {
    let effect = prop::sample::select(vec!["allow", "deny", "ask"]);
    let read = (effect.clone(), prop::collection::vec(glob(), 0..3)).prop_map(move |(e, gs)| {
        let ms: Vec<String> = gs.iter().map(|g| format!("\"{g}\"")).collect();
        format!("{e} read {} as r{i}", ms.join(", "))
    });
    let regex = prop::sample::select(vec![
        r"/^rm\b/",
        r"/push/",
        r"/^\s*git /",
        r"/s$/",
        r"/(?-u:\b)ls/",
        r"/\.env/",
    ]);
    let exec = (
        effect.clone(),
        prop::collection::vec(
            prop_oneof![
                prop::sample::select(vec!["git", "git push", "rm", "ls -rf"])
                    .prop_map(|p| format!("prefix \"{p}\"")),
                regex.prop_map(str::to_string),
            ],
            0..3,
        ),
        any::<bool>(),
    )
        .prop_map(move |(e, ms, gate)| {
            let mut all = ms;
            if gate {
                all.insert(0, "cwd outside workspace".to_string());
            }
            format!("{e} exec {} as r{i}", all.join(", "))
        });
    let bare = effect.prop_map(move |e| format!("{e} tool Bash as r{i}"));
    prop_oneof![3 => read, 3 => exec, 1 => bare].boxed()
}

/// A generated policy: rules (each `... as rN`), default, combine, workspace.
#[derive(Debug, Clone)]
struct Gen {
    rules: Vec<String>,
    default: &'static str,
    combine: &'static str,
    ws: &'static str,
}

impl Gen {
    fn source(&self) -> String {
        format!(
            "tool r {{ read input.path }}\ntool sh {{ exec input.command cwd input.dir }}\ntool py {{ exec input.code raw }}\npolicy p {{\n  workspace \"{}\"\n  combine {}\n  default {}\n  {}\n}}\n",
            self.ws,
            self.combine,
            self.default,
            self.rules.join("\n  ")
        )
    }

    /// A small edit: the kind of change a policy review is about.
    fn mutate(&self, how: u8, i: usize, j: usize) -> Gen {
        let mut g = self.clone();
        let n = g.rules.len();
        match how % 6 {
            0 if n > 1 => g.rules.swap(i % n, j % n),
            1 if n > 0 => {
                g.rules.remove(i % n);
            }
            2 if n > 0 => {
                let r = &g.rules[i % n];
                let (effect, rest) = r.split_once(' ').unwrap_or((r, ""));
                let next = match effect {
                    "allow" => "deny",
                    "deny" => "ask",
                    _ => "allow",
                };
                g.rules[i % n] = format!("{next} {rest}");
            }
            3 => {
                g.default = if g.default == "allow" {
                    "deny"
                } else {
                    "allow"
                }
            }
            4 => {
                g.combine = if g.combine == "strictest" {
                    "first-match"
                } else {
                    "strictest"
                }
            }
            _ => g.ws = if g.ws == "/w" { "/w/src" } else { "/w" },
        }
        g
    }
}

fn policy() -> impl Strategy<Value = Gen> {
    (
        prop::collection::vec(any::<u8>(), 0..6),
        prop::sample::select(vec!["allow", "deny", "ask"]),
        prop::sample::select(vec!["first-match", "strictest"]),
        prop::sample::select(vec!["/w", "/w/src"]),
    )
        .prop_flat_map(|(seeds, default, combine, ws)| {
            let rules: Vec<BoxedStrategy<String>> = (0..seeds.len()).map(rule).collect();
            rules.prop_map(move |rules| Gen {
                rules,
                default,
                combine,
                ws,
            })
        })
}

/// Two versions: unrelated ones, or one and a small edit of it.
fn versions() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        (policy(), policy()).prop_map(|(a, b)| (a.source(), b.source())),
        (policy(), any::<u8>(), any::<usize>(), any::<usize>())
            .prop_map(|(a, how, i, j)| (a.source(), a.mutate(how, i, j).source())),
        (policy(), any::<u8>(), any::<usize>(), any::<usize>())
            .prop_map(|(a, how, i, j)| (a.source(), a.mutate(how, i, j).source())),
    ]
}

fn sample_paths() -> Vec<String> {
    let mut out = vec!["/".to_string(), "/w".to_string()];
    let mut layer: Vec<String> = vec![String::new()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for p in &layer {
            for s in SEGS {
                next.push(format!("{p}/{s}"));
            }
        }
        out.extend(next.iter().cloned());
        out.extend(next.iter().map(|p| format!("/w{p}")));
        layer = next;
    }
    out
}

fn sample_commands() -> Vec<String> {
    // Quoted words may hold spaces; tabs and runs of spaces separate words.
    let mut out: Vec<String> = [
        "'git push' x",
        "' rm'",
        "rm\t-rf",
        "git  push",
        "'ls '",
        "\"git\" push",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for a in WORDS {
        out.push(a.to_string());
        for b in WORDS {
            out.push(format!("{a} {b}"));
            for c in ["x", "rm", "push"] {
                out.push(format!("{a} {b} {c}"));
            }
        }
    }
    out
}

/// The (old decision, new decision, old rule, new rule) of one request.
fn class_of(
    old: &Policy,
    new: &Policy,
    req: &Request,
) -> (Effect, Effect, Option<String>, Option<String>) {
    let (a, b) = (old.decide(req), new.decide(req));
    (a.decision, b.decision, a.rule, b.rule)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Every difference that sampling finds belongs to a class the diff
    /// reports, and every reported witness reproduces.
    #[test]
    fn the_diff_finds_every_sampled_difference((old_src, new_src) in versions(), composed in any::<bool>()) {
        // Half of the cases compare `all(p, p2)` with a fixed second member.
        let (old_src, new_src, opts) = if composed {
            let member = "policy p2 {\n  workspace \"/w\"\n  default allow\n  deny read \"**/.env\" as z1\n  ask exec prefix \"git\" as z2\n}\npolicy top = all(p, p2)\n";
            (old_src + member, new_src + member, Options { policy: Some("top".into()), ..Options::logical() })
        } else {
            (old_src, new_src, Options::logical())
        };
        let (Ok(old), Ok(new)) = (
            Policy::compile("old.perm", &old_src, &opts),
            Policy::compile("new.perm", &new_src, &opts),
        ) else {
            return Ok(());
        };
        let r = diff(&old, &new, &Limits::default()).expect("diff");
        prop_assert!(r.internal_errors.is_empty(), "{:?}\n{old_src}\n{new_src}", r.internal_errors);
        prop_assert!(!r.incomplete, "{:?}", r.notes);
        let reported: Vec<(Effect, Effect, Option<String>, Option<String>)> = r
            .changes
            .iter()
            .map(|c| (c.old.decision, c.new.decision, c.old.rule.clone(), c.new.rule.clone()))
            .collect();
        let mut requests: Vec<Request> = Vec::new();
        for p in sample_paths() {
            requests.push(Request::new("r", serde_json::json!({"path": p})).unwrap());
        }
        for c in sample_commands() {
            for dir in [None, Some("/w"), Some("/w/src"), Some("/tmp")] {
                let mut input = serde_json::json!({"command": c});
                if let Some(d) = dir {
                    input["dir"] = serde_json::json!(d);
                }
                requests.push(Request::new("sh", input).unwrap());
            }
        }
        for c in sample_commands().iter().chain(&[" rm".to_string(), "git  push".to_string(), "\tls x".to_string(), "ls ".to_string()]) {
            requests.push(Request::new("py", serde_json::json!({"code": c})).unwrap());
        }
        requests.push(Request::new("Bash", serde_json::json!({})).unwrap());
        requests.push(Request::new("Other", serde_json::json!({})).unwrap());
        for req in &requests {
            let class = class_of(&old, &new, req);
            if class.0 != class.1 {
                prop_assert!(
                    reported.contains(&class),
                    "sampling found {class:?} for {:?}, the diff reported {reported:?}\n--- old\n{old_src}\n--- new\n{new_src}",
                    req.input
                );
            }
        }
        // Each reported class is a real difference (verified) and, with the
        // report's own input, reproduces through the public API too.
        for c in &r.changes {
            prop_assert_ne!(c.old.decision, c.new.decision);
        }
        prop_assert_eq!(r.behaviour_changed(), !r.changes.is_empty());
    }
}
