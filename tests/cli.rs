//! The `permc` binary: exit codes, output formats and the request protocol.
//!
//! Exit codes: `check` 0 clean / 1 errors; `eval` and `explain` 0 whenever
//! they evaluated (whatever the decision), 2 for a bad policy or arguments;
//! `test` 0 all passed / 1 any failed.

use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const CLI: &str = "tests/fixtures/cli.perm";

fn permc(args: &[&str]) -> Output {
    permc_stdin(args, None)
}

/// Runs the binary from the package root (so fixture paths in the output are
/// stable), without colour, feeding `stdin` when given.
fn permc_stdin(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_permc"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn permc");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(input).unwrap();
        // Dropping the pipe closes stdin.
    }
    child.wait_with_output().expect("wait for permc")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("permc exited by a signal")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// The single JSON line `eval --request` prints.
fn eval_one(file: &str, request: &str, extra: &[&str]) -> Value {
    let mut args = vec!["eval", file, "--no-resolve", "--request", request];
    args.extend_from_slice(extra);
    let o = permc(&args);
    assert_eq!(
        code(&o),
        0,
        "eval exits 0 whatever the decision; stderr:\n{}",
        stderr(&o)
    );
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "one decision line, got:\n{out}");
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("not JSON ({e}): {}", lines[0]))
}

/// The decision shape of the design:
/// `{"id","decision","rule","reason","guidance","items":[{"op","path"|"command","decision","rule"}]}`.
fn assert_decision_shape(d: &Value) {
    let obj = d
        .as_object()
        .unwrap_or_else(|| panic!("decision is not an object: {d}"));
    let effect = |v: &Value| matches!(v.as_str(), Some("allow" | "deny" | "ask"));
    assert!(effect(&d["decision"]), "decision: {d}");
    assert!(d["rule"].is_string() || d["rule"].is_null(), "rule: {d}");
    assert!(
        d["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "reason: {d}"
    );
    assert!(
        obj.contains_key("guidance") && (d["guidance"].is_string() || d["guidance"].is_null()),
        "guidance: {d}"
    );
    let items = d["items"]
        .as_array()
        .unwrap_or_else(|| panic!("items: {d}"));
    for it in items {
        assert!(it["op"].is_string(), "item op: {it}");
        assert!(effect(&it["decision"]), "item decision: {it}");
        assert!(
            it["rule"].is_string() || it["rule"].is_null(),
            "item rule: {it}"
        );
        let subjects = ["path", "command"]
            .iter()
            .filter(|k| it.get(**k).is_some())
            .count();
        assert!(
            subjects <= 1,
            "an item has a path or a command, not both: {it}"
        );
    }
}

// ---- check ------------------------------------------------------------------

#[test]
fn check_good_file_exits_0() {
    for file in [CLI, "examples/agent.perm"] {
        let o = permc(&["check", file]);
        assert_eq!(code(&o), 0, "{file}: {}", stderr(&o));
        // The design sketch keeps two rules that earlier rules shadow
        // (docs/language.md, "The design sketch"); `check` points them out.
        let want = if file == CLI {
            "0 warning(s)"
        } else {
            "2 warning(s)"
        };
        assert!(
            stderr(&o).contains(&format!("1 file(s) checked: 0 error(s), {want}")),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn check_bad_file_exits_1_with_codes() {
    let o = permc(&["check", "tests/fixtures/bad.perm"]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.contains("permc::unknown-preset"), "{err}");
    assert!(err.contains("permc::unknown-operation"), "{err}");
    assert!(err.contains("did you mean `no_env`?"), "{err}");
    assert!(err.contains("2 error(s)"), "{err}");
    assert!(
        !err.contains('\u{1b}'),
        "no colour when NO_COLOR is set / not a terminal"
    );

    // One bad file among good ones still fails the run.
    let o = permc(&["check", CLI, "tests/fixtures/bad.perm"]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains("2 file(s) checked: 2 error(s)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_warnings_exit_0_unless_denied() {
    let o = permc(&["check", "tests/fixtures/warning.perm"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("permc::empty-all"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("0 error(s), 1 warning(s)"),
        "{}",
        stderr(&o)
    );

    let o = permc(&["check", "--deny-warnings", "tests/fixtures/warning.perm"]);
    assert_eq!(code(&o), 1);
}

#[test]
fn check_json_format() {
    let o = permc(&["check", "--format", "json", "tests/fixtures/bad.perm"]);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_str(stdout(&o).trim()).expect("stdout is one JSON value");
    let arr = v.as_array().expect("a JSON array");
    assert_eq!(arr.len(), 2, "{v}");
    let first = &arr[0];
    assert_eq!(first["code"], "permc::unknown-preset");
    assert_eq!(first["severity"], "error");
    assert_eq!(first["message"], "unknown preset `no_evn`");
    assert_eq!(first["file"], "tests/fixtures/bad.perm");
    assert_eq!(first["line"], 8);
    assert_eq!(first["column"], 7);
    assert_eq!(first["help"], "did you mean `no_env`?");
    assert_eq!(arr[1]["code"], "permc::unknown-operation");
    assert_eq!(
        (arr[1]["line"].as_u64(), arr[1]["column"].as_u64()),
        (Some(9), Some(8))
    );

    // A clean file gives an empty array, and exit 0.
    let o = permc(&["check", "--format", "json", CLI]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        serde_json::from_str::<Value>(stdout(&o).trim()).unwrap(),
        json!([])
    );

    // Warnings appear with severity "warning".
    let o = permc(&["check", "--format", "json", "tests/fixtures/warning.perm"]);
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v[0]["code"], "permc::empty-all");
    assert_eq!(v[0]["severity"], "warning");
}

#[test]
fn check_missing_file_is_an_error() {
    let o = permc(&[
        "check",
        "--format",
        "json",
        "tests/fixtures/does-not-exist.perm",
    ]);
    assert_eq!(code(&o), 1);
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v[0]["code"], "permc::io");
    assert_eq!(v[0]["severity"], "error");
    assert!(
        v[0]["message"]
            .as_str()
            .unwrap()
            .contains("`tests/fixtures/does-not-exist.perm`"),
        "{v}"
    );
}

/// With several files checked, a JSON consumer needs `file` to attribute a
/// finding; for an unreadable file it is `null` although the path is known.
#[test]
fn check_json_io_error_names_the_file() {
    let o = permc(&[
        "check",
        "--format",
        "json",
        CLI,
        "tests/fixtures/does-not-exist.perm",
    ]);
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v[0]["file"], "tests/fixtures/does-not-exist.perm", "{v}");
}

// ---- eval -------------------------------------------------------------------

#[test]
fn eval_request_prints_one_decision() {
    let d = eval_one(
        CLI,
        r#"{"tool":"file_read","input":{"path":"README.md,.env"},"id":"call-1"}"#,
        &[],
    );
    assert_decision_shape(&d);
    assert_eq!(d["id"], "call-1");
    assert_eq!(d["decision"], "deny");
    assert_eq!(d["rule"], "deny_env");
    assert_eq!(d["reason"], "Secrets must not be read");
    assert_eq!(d["guidance"], "Read config.example.env instead.");
    let items = d["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["op"], "read");
    assert_eq!(items[0]["path"], "/home/user/project/README.md");
    assert_eq!(items[0]["decision"], "allow");
    assert_eq!(items[0]["rule"], "in_workspace");
    assert_eq!(items[1]["path"], "/home/user/project/.env");
    assert_eq!(items[1]["decision"], "deny");
    assert_eq!(items[1]["rule"], "deny_env");

    // A command: one item per segment; numeric ids are echoed as numbers.
    let d = eval_one(
        CLI,
        r#"{"tool":"shell","input":{"command":"git status; rm -rf build"},"id":7}"#,
        &[],
    );
    assert_decision_shape(&d);
    assert_eq!(d["id"], 7);
    assert_eq!(d["decision"], "deny");
    assert_eq!(d["rule"], "block_rm");
    let items = d["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{d}");
    assert_eq!(items[0]["op"], "exec");
    assert_eq!(items[0]["command"], "git status");
    assert_eq!(items[0]["decision"], "allow");
    assert_eq!(items[1]["command"], "rm -rf build");
    assert_eq!(items[1]["rule"], "block_rm");

    // The default decides: rule is null; no id, no `id` key.
    let d = eval_one(
        CLI,
        r#"{"tool":"web_fetch","input":{"url":"https://example.com"}}"#,
        &[],
    );
    assert_decision_shape(&d);
    assert!(d.get("id").is_none(), "{d}");
    assert_eq!(d["decision"], "deny");
    assert_eq!(d["rule"], Value::Null);
    assert_eq!(d["guidance"], Value::Null);
    assert_eq!(d["items"][0]["op"], "tool");
}

#[test]
fn eval_ask_and_cwd_gate() {
    let d = eval_one(
        CLI,
        r#"{"tool":"shell","input":{"command":"git push origin main"}}"#,
        &[],
    );
    assert_eq!(
        (d["decision"].as_str(), d["rule"].as_str()),
        (Some("ask"), Some("ask_push")),
        "{d}"
    );

    let d = eval_one(
        CLI,
        r#"{"tool":"shell","input":{"command":"git status","work_dir":"/tmp"}}"#,
        &[],
    );
    assert_eq!(
        (d["decision"].as_str(), d["rule"].as_str()),
        (Some("deny"), Some("cwd_gate")),
        "{d}"
    );
    assert_eq!(d["items"][0]["cwd"], "/tmp");
}

#[test]
fn eval_workspace_flag_overrides_the_policy() {
    let req = r#"{"tool":"file_read","input":{"path":"src/lib.rs"}}"#;
    let d = eval_one(CLI, req, &["--workspace", "/srv/other"]);
    assert_eq!(d["items"][0]["path"], "/srv/other/src/lib.rs", "{d}");
    assert_eq!(
        d["decision"], "allow",
        "/workspace/** follows the --workspace root: {d}"
    );
}

#[test]
fn eval_stdin_one_line_per_request_in_order() {
    let input = concat!(
        r#"{"tool":"file_read","input":{"path":"a.txt"},"id":1}"#,
        "\n",
        r#"{"tool":"file_read","input":{"path":".env"},"id":2}"#,
        "\n",
        "\n", // blank lines are skipped
        r#"{"tool":"shell","input":{"command":"git push"},"id":3}"#,
        "\n",
        r#"{"tool":"mcp__github__delete_repo","input":{},"id":"four"}"#,
        "\n",
        r#"{"tool":"shell","input":{"command":"git status"},"id":5}"#, // no trailing newline
    );
    let o = permc_stdin(&["eval", CLI, "--no-resolve"], Some(input.as_bytes()));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let decisions: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let got: Vec<(Value, &str)> = decisions
        .iter()
        .map(|d| (d["id"].clone(), d["decision"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (json!(1), "allow"),
            (json!(2), "deny"),
            (json!(3), "ask"),
            (json!("four"), "deny"),
            (json!(5), "allow")
        ],
        "{out}"
    );
    for d in &decisions {
        assert_decision_shape(d);
    }
}

/// Every malformed request is a deny with a reason naming the problem; the
/// process keeps going and exits 0.
#[test]
fn eval_malformed_requests_are_denied() {
    let cases: &[(&str, &str)] = &[
        ("this is not json", "request is not valid JSON"),
        (
            r#"[{"tool":"file_read","input":{}}]"#,
            "request must be a JSON object, found an array",
        ),
        (r#"{"input":{"path":"a"}}"#, "request has no `tool`"),
        (
            r#"{"tool":42,"input":{}}"#,
            "request `tool` must be a string, found a number",
        ),
        (r#"{"tool":"","input":{}}"#, "request `tool` is empty"),
        (
            r#"{"tool":"file_read","input":"a.txt"}"#,
            "request `input` must be an object, found a string",
        ),
        (r#"{"tool":"file_read"}"#, "request has no `input` object"),
        (
            r#"{"tool":"file_read","input":{"path":42}}"#,
            "input.path must be a string or a list of strings, found a number",
        ),
        (
            r#"{"tool":"file_read","input":{"path":["a",1]}}"#,
            "input.path[1] must be a string, found a number",
        ),
        (
            r#"{"tool":"file_read","input":{"path":""}}"#,
            "input.path is empty",
        ),
        (
            r#"{"tool":"file_read","input":{"path":"a\u0000b"}}"#,
            "NUL byte",
        ),
        (
            r#"{"tool":"shell","input":{"command":"ls\u0000rm"}}"#,
            "NUL byte",
        ),
        (
            r#"{"tool":"shell","input":{"command":"ls"},"cwd":7}"#,
            "request `cwd` must be a string, found a number",
        ),
        (
            r#"{"tool":"shell","input":{"command":"ls"},"extra":true}"#,
            "unknown field `extra`",
        ),
    ];
    let mut stdin = Vec::new();
    for (req, _) in cases {
        stdin.extend_from_slice(req.as_bytes());
        stdin.push(b'\n');
    }
    // Invalid UTF-8 is a request too.
    stdin.extend_from_slice(b"{\"tool\":\"\xff\xfe\",\"input\":{}}\n");
    let o = permc_stdin(&["eval", CLI, "--no-resolve"], Some(&stdin));
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), cases.len() + 1, "one line per request:\n{out}");
    for (line, (req, want)) in lines.iter().zip(cases) {
        let d: Value = serde_json::from_str(line).unwrap();
        assert_decision_shape(&d);
        assert_eq!(d["decision"], "deny", "{req} -> {line}");
        assert_eq!(d["rule"], Value::Null, "{req} -> {line}");
        let reason = d["reason"].as_str().unwrap();
        assert!(
            reason.starts_with("malformed request: "),
            "{req} -> {reason}"
        );
        assert!(
            reason.contains(want),
            "{req}: reason `{reason}` should contain `{want}`"
        );
    }
    let last: Value = serde_json::from_str(lines[cases.len()]).unwrap();
    assert_eq!(last["decision"], "deny");
    assert!(
        last["reason"].as_str().unwrap().contains("not valid UTF-8"),
        "{last}"
    );

    // The same through --request, where the id is still echoed.
    let d = eval_one(CLI, r#"{"id":"m1","tool":7,"input":{}}"#, &[]);
    assert_eq!(d["id"], "m1");
    assert_eq!(d["decision"], "deny");
    assert!(
        d["reason"]
            .as_str()
            .unwrap()
            .contains("`tool` must be a string"),
        "{d}"
    );
    let d = eval_one(
        CLI,
        r#"{"id":"m2","tool":"file_read","input":{"path":"a\u0000b"}}"#,
        &[],
    );
    assert_eq!(d["id"], "m2");
    assert_eq!(d["decision"], "deny");
    assert!(d["reason"].as_str().unwrap().contains("input.path"), "{d}");
}

#[test]
fn eval_bad_policy_exits_2() {
    let o = permc(&[
        "eval",
        "tests/fixtures/bad.perm",
        "--request",
        r#"{"tool":"x","input":{}}"#,
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        stdout(&o).is_empty(),
        "no decision for a bad policy: {}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("permc::unknown-preset"),
        "{}",
        stderr(&o)
    );

    let o = permc(&[
        "eval",
        "tests/fixtures/does-not-exist.perm",
        "--request",
        r#"{"tool":"x","input":{}}"#,
    ]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("permc::io"), "{}", stderr(&o));
    assert!(stderr(&o).contains("does-not-exist.perm"), "{}", stderr(&o));

    // The same for explain.
    let o = permc(&[
        "explain",
        "tests/fixtures/bad.perm",
        "--request",
        r#"{"tool":"x","input":{}}"#,
    ]);
    assert_eq!(code(&o), 2);
}

#[test]
fn eval_several_policies_need_policy_flag() {
    let req = r#"{"tool":"file_read","input":{"path":"a.txt"}}"#;
    let o = permc(&[
        "eval",
        "tests/fixtures/two_policies.perm",
        "--no-resolve",
        "--request",
        req,
    ]);
    assert_eq!(code(&o), 2);
    assert!(stdout(&o).is_empty());
    let err = stderr(&o);
    assert!(err.contains("--policy"), "{err}");
    assert!(err.contains("strict") && err.contains("lenient"), "{err}");

    let d = eval_one(
        "tests/fixtures/two_policies.perm",
        req,
        &["--policy", "strict"],
    );
    assert_eq!(
        (d["decision"].as_str(), d["rule"].as_str()),
        (Some("deny"), Some("no_reads")),
        "{d}"
    );
    let d = eval_one(
        "tests/fixtures/two_policies.perm",
        req,
        &["--policy", "lenient"],
    );
    assert_eq!(
        (d["decision"].as_str(), d["rule"].as_str()),
        (Some("allow"), Some("all_reads")),
        "{d}"
    );

    let o = permc(&[
        "eval",
        "tests/fixtures/two_policies.perm",
        "--policy",
        "strcit",
        "--request",
        req,
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("unknown policy `strcit`"),
        "{}",
        stderr(&o)
    );
    assert!(
        stderr(&o).contains("did you mean `strict`?"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn relative_workspace_flag_exits_2() {
    let req = r#"{"tool":"file_read","input":{"path":"a.txt"}}"#;
    for sub in ["eval", "explain"] {
        let o = permc(&[sub, CLI, "--workspace", "project", "--request", req]);
        assert_eq!(code(&o), 2, "{sub}");
        assert!(stdout(&o).is_empty(), "{sub}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("--workspace must be an absolute path"),
            "{sub}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn file_without_policies_exits_2() {
    let o = permc(&[
        "eval",
        "tests/fixtures/no_policy.perm",
        "--request",
        r#"{"tool":"x","input":{}}"#,
    ]);
    assert_eq!(code(&o), 2);
    assert!(stdout(&o).is_empty());
}

#[test]
fn file_without_policies_says_so() {
    let o = permc(&[
        "eval",
        "tests/fixtures/no_policy.perm",
        "--request",
        r#"{"tool":"x","input":{}}"#,
    ]);
    let err = stderr(&o);
    assert!(!err.contains("several"), "{err}");
    assert!(err.contains("no polic"), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(code(&permc(&[])), 2);
    assert_eq!(code(&permc(&["frobnicate"])), 2);
    assert_eq!(code(&permc(&["eval"])), 2, "eval needs a file");
    assert_eq!(
        code(&permc(&["explain", CLI])),
        2,
        "explain needs --request"
    );
    assert_eq!(code(&permc(&["--help"])), 0);
}

// ---- explain ----------------------------------------------------------------

#[test]
fn explain_names_the_deciding_rule() {
    let o = permc(&[
        "explain",
        CLI,
        "--no-resolve",
        "--request",
        r#"{"tool":"file_read","input":{"path":"README.md,.env"}}"#,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("decided by rule #0 `deny_env`: deny"), "{out}");
    assert!(
        out.contains("decided by rule #4 `in_workspace`: allow"),
        "{out}"
    );
    assert!(
        out.ends_with("guidance: Read config.example.env instead.\n"),
        "{out}"
    );
    insta::assert_snapshot!("cli_explain_multi_path", out);

    let o = permc(&[
        "explain",
        CLI,
        "--no-resolve",
        "--request",
        r#"{"tool":"shell","input":{"command":"git status; rm -rf build"}}"#,
    ]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(out.contains("decided by rule #1 `block_rm`: deny"), "{out}");
    assert!(out.contains("decision: deny\nrule: block_rm\n"), "{out}");
    insta::assert_snapshot!("cli_explain_compound_command", out);
}

#[test]
fn explain_malformed_request_is_a_deny() {
    let o = permc(&["explain", CLI, "--no-resolve", "--request", "not json"]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(
        out.starts_with("malformed request: request is not valid JSON"),
        "{out}"
    );
    assert!(out.ends_with("decision: deny\n"), "{out}");

    let o = permc(&[
        "explain",
        CLI,
        "--no-resolve",
        "--request",
        r#"{"tool":"file_read","input":{"path":7}}"#,
    ]);
    assert_eq!(code(&o), 0);
    let out = stdout(&o);
    assert!(
        out.contains("malformed request: input.path must be a string"),
        "{out}"
    );
    assert!(out.contains("decision: deny\n"), "{out}");
}

// ---- test -------------------------------------------------------------------

fn summary(out: &str) -> (usize, usize) {
    let last = out.lines().last().unwrap_or_else(|| panic!("no output"));
    let parse = || -> Option<(usize, usize)> {
        let (p, f) = last.split_once(" passed, ")?;
        Some((p.parse().ok()?, f.strip_suffix(" failed")?.parse().ok()?))
    };
    parse().unwrap_or_else(|| panic!("last line is not `N passed, M failed`: {last:?}"))
}

#[test]
fn test_example_passes() {
    assert!(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/agent.perm")
            .exists()
    );
    let o = permc(&["test", "examples/agent.perm"]);
    let out = stdout(&o);
    let (passed, failed) = summary(&out);
    assert_eq!(failed, 0, "{out}");
    assert!(passed > 0, "{out}");
    assert_eq!(code(&o), 0, "{out}");

    let o = permc(&["test", CLI]);
    assert_eq!(summary(&stdout(&o)), (6, 0), "{}", stdout(&o));
    assert_eq!(code(&o), 0);
}

#[test]
fn test_failure_exits_1() {
    let o = permc(&["test", "tests/fixtures/failing_test.perm"]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert_eq!(summary(&out), (2, 1), "{out}");
    let fail = out
        .lines()
        .find(|l| l.starts_with("FAIL "))
        .unwrap_or_else(|| panic!("no FAIL line:\n{out}"));
    assert!(
        fail.starts_with(
            "FAIL tests/fixtures/failing_test.perm:12:3 test `p`: expected allow, got deny"
        ),
        "{fail}"
    );

    // Several files add up; a file that does not compile counts as a failure.
    let o = permc(&[
        "test",
        CLI,
        "tests/fixtures/failing_test.perm",
        "tests/fixtures/bad.perm",
    ]);
    assert_eq!(code(&o), 1);
    assert_eq!(summary(&stdout(&o)), (8, 2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("permc::unknown-preset"),
        "{}",
        stderr(&o)
    );
}
