//! Compile diagnostics, one small input per finding the compiler can report.
//!
//! Every `.perm` file directly under `tests/diagnostics/` is a case: it must
//! have an entry in [`EXPECTED`] (the codes it reports, in order), and its
//! rendered diagnostics (`render(false)`, no colour) are snapshot-tested as
//! `tests/snapshots/diagnostics__<file stem>.snap`. Adding a file adds a case;
//! a file without an entry fails `every_input_has_an_expectation`.

use permc::{CompileError, Options, Policy, Severity};
use std::path::{Path, PathBuf};

/// What compiling each input must report. `Errors`: compilation fails with
/// exactly these codes, in order. `Warnings`: it compiles, with exactly these
/// warning codes.
enum Expect {
    Errors(&'static [&'static str]),
    Warnings(&'static [&'static str]),
}
use Expect::{Errors, Warnings};

const EXPECTED: &[(&str, Expect)] = &[
    // Syntax: pest stops at the first error in a file.
    ("syntax_missing_effect", Errors(&["permc::syntax"])),
    ("syntax_unterminated_string", Errors(&["permc::syntax"])),
    ("syntax_bad_token", Errors(&["permc::syntax"])),
    ("syntax_missing_brace", Errors(&["permc::syntax"])),
    ("syntax_bad_combine_mode", Errors(&["permc::syntax"])),
    ("syntax_keyword_as_name", Errors(&["permc::syntax"])),
    ("syntax_unterminated_regex", Errors(&["permc::syntax"])),
    ("invalid_number", Errors(&["permc::syntax"])),
    // Names.
    (
        "unknown_preset_did_you_mean",
        Errors(&["permc::unknown-preset"]),
    ),
    (
        "unknown_preset_is_policy",
        Errors(&["permc::unknown-preset"]),
    ),
    (
        "unknown_preset_known_list",
        Errors(&["permc::unknown-preset"]),
    ),
    (
        "unknown_preset_qualified",
        Errors(&["permc::unknown-preset"]),
    ),
    (
        "unknown_tool_did_you_mean",
        Errors(&["permc::unknown-tool"]),
    ),
    (
        "unknown_tool_no_suggestion",
        Errors(&["permc::unknown-tool"]),
    ),
    (
        "unknown_operation_did_you_mean",
        Errors(&["permc::unknown-operation"]),
    ),
    (
        "unknown_operation_no_suggestion",
        Errors(&["permc::unknown-operation"]),
    ),
    ("unknown_policy_in_all", Errors(&["permc::unknown-policy"])),
    (
        "unknown_policy_in_all_is_preset",
        Errors(&["permc::unknown-policy"]),
    ),
    (
        "test_block_unknown_policy",
        Errors(&["permc::unknown-policy"]),
    ),
    (
        "unknown_import_did_you_mean",
        Errors(&["permc::unknown-import"]),
    ),
    (
        "unknown_import_no_suggestion",
        Errors(&["permc::unknown-import"]),
    ),
    ("missing_import_file", Errors(&["permc::unknown-import"])),
    ("import_with_syntax_error", Errors(&["permc::syntax"])),
    (
        "duplicate_preset_policy_name",
        Errors(&["permc::duplicate-name"]),
    ),
    ("duplicate_tool", Errors(&["permc::duplicate-name"])),
    // Cycles.
    ("use_cycle", Errors(&["permc::use-cycle"])),
    ("use_self", Errors(&["permc::use-cycle"])),
    ("all_cycle", Errors(&["permc::all-cycle"])),
    ("all_self", Errors(&["permc::all-cycle"])),
    // Policy settings.
    ("duplicate_default", Errors(&["permc::duplicate-setting"])),
    ("duplicate_workspace", Errors(&["permc::duplicate-setting"])),
    ("relative_workspace", Errors(&["permc::workspace"])),
    ("preset_setting", Errors(&["permc::preset-setting"])),
    // Patterns.
    (
        "invalid_regex_lookaround",
        Errors(&["permc::invalid-regex"]),
    ),
    (
        "invalid_regex_backreference",
        Errors(&["permc::invalid-regex"]),
    ),
    (
        "invalid_regex_unclosed_group",
        Errors(&["permc::invalid-regex"]),
    ),
    (
        "invalid_glob_unclosed_class",
        Errors(&["permc::invalid-glob"]),
    ),
    ("glob_on_exec", Errors(&["permc::matcher-kind"])),
    ("prefix_on_read", Errors(&["permc::matcher-kind"])),
    ("cwd_gate_on_read", Errors(&["permc::matcher-kind"])),
    ("regex_on_bare_op", Errors(&["permc::matcher-kind"])),
    ("empty_prefix", Errors(&["permc::empty-matcher"])),
    // Tool declarations.
    ("exec_without_field", Errors(&["permc::tool-decl"])),
    ("cwd_on_non_exec", Errors(&["permc::tool-decl"])),
    ("split_without_field", Errors(&["permc::tool-decl"])),
    ("split_empty_separator", Errors(&["permc::tool-decl"])),
    // Every error is collected, not just the first.
    (
        "several_errors",
        Errors(&[
            "permc::duplicate-setting",
            "permc::workspace",
            "permc::unknown-preset",
            "permc::unknown-operation",
            "permc::unknown-tool",
            "permc::invalid-regex",
            "permc::invalid-glob",
            "permc::unknown-policy",
        ]),
    ),
    // Warnings: the file compiles.
    ("warn_empty_all", Warnings(&["permc::empty-all"])),
    (
        "warn_unreachable_rule",
        Warnings(&["permc::unreachable-rule"]),
    ),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diagnostics")
}

/// Every `.perm` file directly under `tests/diagnostics/`, sorted, as
/// (stem, text).
fn inputs() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(dir())
        .expect("tests/diagnostics exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "perm"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn expectation(name: &str) -> &'static Expect {
    match EXPECTED.iter().find(|(n, _)| *n == name) {
        Some((_, e)) => e,
        None => panic!("tests/diagnostics/{name}.perm has no entry in EXPECTED"),
    }
}

/// Compiles like a host would, turning a panic into a test failure that
/// names the input.
fn compile(name: &str, text: &str) -> Result<Policy, CompileError> {
    let file = format!("{name}.perm");
    let text = text.to_string();
    std::panic::catch_unwind(move || Policy::compile(&file, &text, &Options::logical()))
        .unwrap_or_else(|_| panic!("compiling tests/diagnostics/{name}.perm panicked"))
}

fn codes(diags: &[permc::Diagnostic]) -> Vec<&'static str> {
    diags.iter().map(|d| d.code).collect()
}

#[test]
fn every_input_has_an_expectation() {
    let files: Vec<String> = inputs().into_iter().map(|(n, _)| n).collect();
    for (name, _) in EXPECTED {
        assert!(
            files.iter().any(|f| f == name),
            "EXPECTED names `{name}` but tests/diagnostics/{name}.perm is missing"
        );
    }
    for f in &files {
        expectation(f);
    }
    // No snapshot outlives its input.
    let snaps = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    for e in std::fs::read_dir(snaps).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name
            .strip_prefix("diagnostics__")
            .and_then(|n| n.strip_suffix(".snap"))
        {
            assert!(
                files.iter().any(|f| f == stem),
                "tests/snapshots/{name} has no tests/diagnostics/{stem}.perm"
            );
        }
    }
    assert!(files.len() >= 40, "only {} inputs found", files.len());
}

#[test]
fn compile_errors_snapshot() {
    // Check every input before failing, so one run shows every mismatch.
    let mut wrong = Vec::new();
    for (name, text) in inputs() {
        let Errors(want) = expectation(&name) else {
            continue;
        };
        let err = match compile(&name, &text) {
            Ok(_) => {
                wrong.push(format!("{name}.perm compiled, but should report {want:?}"));
                continue;
            }
            Err(e) => e,
        };
        let got = codes(&err.diagnostics);
        if got != *want {
            wrong.push(format!("{name}.perm reports {got:?}, expected {want:?}"));
        }
        if let Some(d) = err
            .diagnostics
            .iter()
            .find(|d| d.severity != Severity::Error)
        {
            wrong.push(format!(
                "{name}.perm: a failed compile reports a warning first: {}",
                d.message
            ));
        }
        // The first diagnostic's code, in code, not only in the snapshot.
        if err.diagnostics.first().map(|d| d.code) != want.first().copied() {
            wrong.push(format!(
                "{name}.perm: first code {:?}",
                err.diagnostics.first().map(|d| d.code)
            ));
        }
        insta::assert_snapshot!(name.as_str(), err.render(false));
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn warnings_snapshot() {
    for (name, text) in inputs() {
        let Warnings(want) = expectation(&name) else {
            continue;
        };
        let policy = match compile(&name, &text) {
            Ok(p) => p,
            Err(e) => panic!(
                "{name}.perm should compile with warnings, but failed:\n{}",
                e.render(false)
            ),
        };
        let warnings = policy.warnings();
        assert_eq!(codes(warnings), *want, "warnings reported for {name}.perm");
        assert!(warnings.iter().all(|d| d.severity == Severity::Warning));
        let rendered = permc::diag::render_all(warnings, policy.sources(), false);
        insta::assert_snapshot!(name.as_str(), rendered);
    }
}

/// The message style every finding follows: lowercase, no trailing period,
/// a primary location in a known file.
#[test]
fn message_style() {
    let mut problems = Vec::new();
    for (name, text) in inputs() {
        let (diags, sources) = match compile(&name, &text) {
            Ok(p) => (p.warnings().to_vec(), p.sources().clone()),
            Err(e) => (e.diagnostics, e.sources),
        };
        for d in &diags {
            let first = d.message.chars().next().unwrap_or(' ');
            if first.is_uppercase() {
                problems.push(format!("{name}: message starts uppercase: {}", d.message));
            }
            if d.message.ends_with('.') {
                problems.push(format!("{name}: message ends with a period: {}", d.message));
            }
            if !d.code.starts_with("permc::") {
                problems.push(format!("{name}: code `{}` is not `permc::...`", d.code));
            }
            match d.loc() {
                None => problems.push(format!("{name}: `{}` has no location", d.message)),
                Some(loc) => {
                    if sources.get(loc.file).is_none() {
                        problems.push(format!("{name}: `{}` points at an unknown file", d.message));
                    }
                }
            }
            if let Some(h) = d.help.as_deref().filter(|h| h.ends_with('.')) {
                problems.push(format!("{name}: help ends with a period: {h}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "style problems:\n{}",
        problems.join("\n")
    );
}

/// Spot checks of content the snapshots also hold, so that a careless
/// snapshot update cannot lose them.
#[test]
fn key_content() {
    let render = |name: &str| {
        let text = std::fs::read_to_string(dir().join(format!("{name}.perm"))).unwrap();
        match compile(name, &text) {
            Ok(_) => panic!("{name} compiled"),
            Err(e) => (e.diagnostics.clone(), e.render(false)),
        }
    };
    let help = |name: &str| render(name).0[0].help.clone().unwrap_or_default();

    assert_eq!(
        help("unknown_preset_did_you_mean"),
        "did you mean `no_env`?"
    );
    assert!(help("unknown_preset_is_policy").contains("`base` is a policy"));
    assert_eq!(
        help("unknown_preset_qualified"),
        "did you mean `elsai.workspace_only`?"
    );
    assert_eq!(help("unknown_tool_did_you_mean"), "did you mean `shell`?");
    assert_eq!(
        help("unknown_operation_did_you_mean"),
        "did you mean `read`?"
    );
    assert_eq!(help("unknown_policy_in_all"), "did you mean `lenient`?");
    assert!(help("unknown_policy_in_all_is_preset").contains("`guard` is a preset"));
    assert_eq!(help("unknown_import_did_you_mean"), "did you mean `elsai`?");
    assert_eq!(help("test_block_unknown_policy"), "did you mean `agent`?");
    assert!(
        help("use_cycle").contains("a -> b -> a"),
        "{}",
        help("use_cycle")
    );
    assert!(help("use_self").contains("a -> a"), "{}", help("use_self"));

    let (d, _) = render("invalid_regex_lookaround");
    assert!(d[0].message.contains("look-around"), "{}", d[0].message);
    let (d, _) = render("invalid_regex_backreference");
    assert!(d[0].message.contains("backreference"), "{}", d[0].message);
    let (d, _) = render("invalid_glob_unclosed_class");
    assert!(
        d[0].message.starts_with("invalid glob `src/[abc`"),
        "{}",
        d[0].message
    );
    let (d, _) = render("unknown_preset_did_you_mean");
    assert_eq!(d[0].message, "unknown preset `no_evn`");

    // The render names the file, the code and the line of the finding.
    let (_, text) = render("syntax_unterminated_string");
    assert!(text.contains("permc::syntax"), "{text}");
    assert!(
        text.contains("syntax_unterminated_string.perm:4:"),
        "{text}"
    );
    let (_, text) = render("syntax_missing_effect");
    assert!(text.contains("syntax_missing_effect.perm:4:3"), "{text}");
    assert!(text.contains("an effect"), "{text}");
}

/// A policy too large for the automaton limits fails with `permc::too-large`
/// rather than using unbounded memory.
#[test]
fn too_large_for_the_limits() {
    let src = r#"
        tool file_read { read input.path }
        policy p { deny read "/a/**/b*c?d/**" }
    "#;
    let mut opts = Options::logical();
    opts.limits.nfa_bytes = 16;
    opts.limits.dfa_bytes = 16;
    let err = Policy::compile("big.perm", src, &opts).unwrap_err();
    assert_eq!(codes(&err.diagnostics), ["permc::too-large"]);
    assert!(
        err.diagnostics[0]
            .message
            .starts_with("policy `p` is too large to compile")
    );
    // With the default limits the same policy compiles.
    Policy::compile("big.perm", src, &Options::logical()).unwrap();
}

/// Selecting a policy the file does not define.
#[test]
fn unknown_selected_policy() {
    let src = "policy strict { default deny }\npolicy lenient { default allow }\n";
    let opts = Options {
        policy: Some("strcit".into()),
        ..Options::logical()
    };
    let err = Policy::compile("p.perm", src, &opts).unwrap_err();
    assert_eq!(codes(&err.diagnostics), ["permc::unknown-policy"]);
    assert_eq!(err.diagnostics[0].message, "unknown policy `strcit`");
    assert_eq!(
        err.diagnostics[0].help.as_deref(),
        Some("did you mean `strict`?")
    );

    let opts = Options {
        policy: Some("zzz".into()),
        ..Options::logical()
    };
    let err = Policy::compile("p.perm", src, &opts).unwrap_err();
    assert_eq!(
        err.diagnostics[0].help.as_deref(),
        Some("the file defines: lenient, strict")
    );
}

/// A file that does not exist is a `permc::io` error naming it.
#[test]
fn missing_file() {
    let err =
        Policy::load("tests/diagnostics/does-not-exist.perm", &Options::logical()).unwrap_err();
    assert_eq!(codes(&err.diagnostics), ["permc::io"]);
    assert!(
        err.diagnostics[0]
            .message
            .contains("`tests/diagnostics/does-not-exist.perm`")
    );
}

// ---- known problems ----------------------------------------------------------
//
// Each test below states what the compiler should do and fails today; run them
// with `cargo test --test diagnostics -- --ignored`.

fn compile_src(src: &str) -> Result<Policy, CompileError> {
    Policy::compile("p.perm", src, &Options::logical())
}

/// "Advice in help": every error should say what to do about it.
#[test]
fn every_diagnostic_has_help() {
    let mut missing = Vec::new();
    for (name, text) in inputs() {
        let diags = match compile(&name, &text) {
            Ok(p) => p.warnings().to_vec(),
            Err(e) => e.diagnostics,
        };
        for d in diags {
            if d.help.as_deref().is_none_or(str::is_empty) {
                missing.push(format!("{name}: {} `{}`", d.code, d.message));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "diagnostics without help:\n{}",
        missing.join("\n")
    );
}

/// An unknown tool or operation makes the rule's item kinds unknown; the
/// compiler should not then also claim that `prefix` or a cwd gate can never
/// match (a cascade error that disappears once the name is fixed).
#[test]
fn no_matcher_kind_cascade_after_unknown_name() {
    let cases = [
        (
            "tool shell { exec input.command }\npolicy p { deny exec on shel prefix \"rm\" }",
            "permc::unknown-tool",
        ),
        (
            "tool shell { exec input.command }\npolicy p { deny exce prefix \"rm\" }",
            "permc::unknown-operation",
        ),
        (
            "tool shell { exec input.command }\npolicy p { deny exec on shel cwd outside workspace }",
            "permc::unknown-tool",
        ),
        (
            "tool shell { exec input.command }\npolicy p { deny exce cwd outside workspace }",
            "permc::unknown-operation",
        ),
    ];
    for (src, code) in cases {
        let err = compile_src(src).unwrap_err();
        assert_eq!(
            codes(&err.diagnostics),
            [code],
            "{src}\n{}",
            err.render(false)
        );
    }
}

/// A preset no policy uses is never checked: unknown operations, unknown
/// presets, policy settings and `use` cycles inside it all pass `check`.
#[test]
fn unused_preset_is_checked() {
    let src = "tool file_read { read input.path }\n\
               preset unused { deny raed \"**\" }\n\
               policy p { default allow }\n";
    let err =
        compile_src(src).expect_err("unknown operation in an unused preset should be an error");
    assert_eq!(codes(&err.diagnostics), ["permc::unknown-operation"]);

    let src = "preset a { use a }\npolicy p { default allow }\n";
    let err =
        compile_src(src).expect_err("a self-using preset should be an error even when unused");
    assert_eq!(codes(&err.diagnostics), ["permc::use-cycle"]);
}

/// A preset's errors are reported once, not once per policy that uses it.
#[test]
fn preset_errors_reported_once() {
    let src = "tool file_read { read input.path }\n\
               preset x { deny raed \"**\" }\n\
               policy p { use x }\n\
               policy q { use x }\n";
    let err = compile_src(src).unwrap_err();
    assert_eq!(
        codes(&err.diagnostics),
        ["permc::unknown-operation"],
        "{}",
        err.render(false)
    );

    let src = "preset x { default deny }\npolicy p { use x }\npolicy q { use x }\n";
    let err = compile_src(src).unwrap_err();
    assert_eq!(
        codes(&err.diagnostics),
        ["permc::preset-setting"],
        "{}",
        err.render(false)
    );
}

/// The same holds for warnings.
#[test]
fn preset_warnings_reported_once() {
    let src = "tool file_read { read input.path }\n\
               tool file_write { write input.path }\n\
               preset x { deny write on file_read \"**\" }\n\
               policy p { use x }\n\
               policy q { use x }\n";
    let policy = compile_src(src).unwrap();
    assert_eq!(codes(policy.warnings()), ["permc::unreachable-rule"]);
}

/// A file imported back by its own import is the root file: loading it a
/// second time as a module reports its tools as declared twice, both labels
/// pointing at the same declaration.
#[test]
fn import_cycle_to_root_loads_it_once() {
    let root = dir().join("imports/cycle_root.perm");
    match Policy::load(&root, &Options::logical()) {
        Ok(p) => assert!(p.warnings().is_empty()),
        Err(e) => panic!(
            "expected the import cycle to load (or one clear import-cycle error), got:\n{}",
            e.render(false)
        ),
    }
}

/// Redeclaring a tool the standard profile declares: the mistake is in the
/// user's file, so that is where the error should point (the std file cannot
/// be edited, and "merge the two into one `tool` block" is impossible there).
#[test]
fn duplicate_std_tool_points_at_the_users_file() {
    let src = "import \"elsai\"\n\ntool shell { exec input.cmd }\n\npolicy p { default allow }\n";
    let err = compile_src(src).unwrap_err();
    assert_eq!(codes(&err.diagnostics), ["permc::duplicate-name"]);
    let primary = err.diagnostics[0].loc().unwrap();
    assert_eq!(
        err.sources.get(primary.file).unwrap().name,
        "p.perm",
        "{}",
        err.render(false)
    );
}

/// With no tool declared, the help for an unknown operation prints an empty
/// list: "declared operations: ; to match a whole tool write `tool NAME`".
#[test]
fn unknown_operation_help_without_declared_ops() {
    let err = compile_src("policy p { deny read \"x\" }").unwrap_err();
    assert_eq!(codes(&err.diagnostics), ["permc::unknown-operation"]);
    let help = err.diagnostics[0].help.clone().unwrap();
    assert!(!help.contains("operations: ;"), "{help}");
}

/// The regex help always advises rewriting look-around, even when the error
/// is a backreference or an unclosed group.
#[test]
fn regex_help_fits_the_error() {
    for file in [
        "invalid_regex_backreference",
        "invalid_regex_unclosed_group",
    ] {
        let text = std::fs::read_to_string(dir().join(format!("{file}.perm"))).unwrap();
        let err = compile(file, &text).unwrap_err();
        let help = err.diagnostics[0].help.clone().unwrap_or_default();
        assert!(!help.contains("look-around"), "{file}: {help}");
    }
}

/// Syntax errors name what went wrong where pest's expected-set is vague.
#[test]
fn syntax_errors_name_the_problem() {
    let msg = |name: &str| {
        let text = std::fs::read_to_string(dir().join(format!("{name}.perm"))).unwrap();
        compile(name, &text).unwrap_err().diagnostics[0]
            .message
            .clone()
    };
    let m = msg("syntax_unterminated_string");
    assert!(
        m.contains("unterminated") || m.contains("closing `\"`"),
        "{m}"
    );
    let m = msg("syntax_unterminated_regex");
    assert!(
        m.contains("unterminated") || m.contains("closing `/`"),
        "{m}"
    );
    let text = std::fs::read_to_string(dir().join("syntax_missing_brace.perm")).unwrap();
    let d = compile("syntax_missing_brace", &text)
        .unwrap_err()
        .diagnostics[0]
        .clone();
    assert!(d.message.contains("end of file"), "{}", d.message);
    assert!(
        d.help.as_deref().unwrap_or("").contains("`}`"),
        "{:?}",
        d.help
    );
}

/// `check` accepts a test case whose `by` names a rule the policy does not
/// have (only `permc test` finds it), and two rules with the same `as` name
/// in one policy (which makes `by` ambiguous).
#[test]
fn test_by_and_rule_names_are_checked() {
    let err =
        compile_src("policy p { deny tool X as r }\ntest p { deny X {} by nosuch }\n").unwrap_err();
    assert_eq!(codes(&err.diagnostics), ["permc::unknown-rule"]);
    // Two rules with one name compile, with a warning: a preset used twice is legal.
    let p = compile_src("policy p { deny tool X as r\n allow tool Y as r }\n").unwrap();
    assert_eq!(codes(p.warnings()), ["permc::duplicate-rule-name"]);
}

/// A test block named after a preset gets the `all(...)` help, which is about
/// compositions, not test blocks.
#[test]
fn test_block_named_after_a_preset() {
    let src =
        "preset guard { deny tool X }\npolicy p { default allow }\ntest guard { allow X {} }\n";
    let err = compile_src(src).unwrap_err();
    assert_eq!(codes(&err.diagnostics), ["permc::unknown-policy"]);
    let help = err.diagnostics[0].help.clone().unwrap_or_default();
    assert!(!help.contains("all(...)"), "{help}");
}

/// `as` must be followed by a rule name; since rule names became `word`
/// (commit "rule names may be keywords"), the expected-set has no human name
/// for it and the message degrades to "unexpected input".
#[test]
fn missing_rule_name_says_what_is_expected() {
    let err = compile_src("policy p {\n  deny tool Bash as\n}\n").unwrap_err();
    assert_eq!(codes(&err.diagnostics), ["permc::syntax"]);
    assert_eq!(err.diagnostics[0].message, "syntax error: expected a name");
}
