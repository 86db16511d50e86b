//! `permc fmt`: idempotent, meaning-preserving, comment-preserving; refuses
//! files that do not parse. Checked on every shipped `.perm` file, on the
//! manual's examples, on generated sources, and through the binary.

use permc::fmt::{comments, fingerprint, format};
use permc::syntax::{loc::FileId, parse};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The properties every formatted source must have. Returns the output.
fn check_properties(name: &str, src: &str) -> String {
    let out = format(src).unwrap_or_else(|e| {
        let msgs: Vec<String> = e.iter().map(|d| d.message.clone()).collect();
        panic!("{name}: fmt refused a file that parses: {msgs:?}")
    });
    let again =
        format(&out).unwrap_or_else(|_| panic!("{name}: fmt refused its own output:\n{out}"));
    assert_eq!(
        again, out,
        "{name}: fmt is not idempotent; first pass:\n{out}"
    );
    let a = parse(src, FileId(0)).expect("the input parses");
    let b = parse(&out, FileId(0))
        .unwrap_or_else(|_| panic!("{name}: the output does not parse:\n{out}"));
    assert_eq!(
        fingerprint(&a),
        fingerprint(&b),
        "{name}: the syntax tree changed:\n{out}"
    );
    assert_eq!(
        comments(src),
        comments(&out),
        "{name}: a comment changed or moved:\n{out}"
    );
    assert!(
        out.is_empty() || out.ends_with('\n') && !out.ends_with("\n\n"),
        "{name}: one final newline"
    );
    assert_no_trailing_whitespace(name, &out);
    out
}

/// Trailing whitespace, and more than one blank line in a row, are allowed
/// only inside a string that spans lines.
fn assert_no_trailing_whitespace(name: &str, out: &str) {
    let (mut in_str, mut in_comment, mut in_regex, mut escaped) = (false, false, false, false);
    let mut prev = '\n';
    let mut line = 1;
    let mut blank_run = 0;
    for c in out.chars() {
        if c == '\n' {
            if !in_str {
                assert!(
                    prev != ' ' && prev != '\t',
                    "{name}:{line}: trailing whitespace:\n{out}"
                );
                blank_run = if prev == '\n' { blank_run + 1 } else { 0 };
                assert!(
                    blank_run < 2,
                    "{name}:{line}: more than one blank line in a row:\n{out}"
                );
                in_comment = false;
                in_regex = false;
            }
            line += 1;
        } else if in_comment {
        } else if in_str || in_regex {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if (c == '"' && in_str) || (c == '/' && in_regex) {
                in_str = false;
                in_regex = false;
            }
        } else if c == '#' {
            in_comment = true;
        } else if c == '"' {
            in_str = true;
        } else if c == '/' {
            in_regex = true;
        }
        prev = c;
    }
}

fn perm_files(dir: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root().join(dir)) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "perm"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_file_formats_safely() {
    let dirs = [
        "examples",
        "std-policies",
        "tests/corpus",
        "tests/conformance",
        "docs/examples",
        "tests/fixtures",
        "tests/diagnostics",
    ];
    let mut formatted = 0;
    let mut refused = 0;
    for dir in dirs {
        for file in perm_files(dir) {
            let src = std::fs::read_to_string(&file).unwrap();
            let name = file
                .strip_prefix(root())
                .unwrap_or(&file)
                .display()
                .to_string();
            if parse(&src, FileId(0)).is_ok() {
                check_properties(&name, &src);
                formatted += 1;
            } else {
                assert!(
                    format(&src).is_err(),
                    "{name}: does not parse, but fmt accepted it"
                );
                refused += 1;
            }
        }
    }
    assert!(formatted >= 15, "only {formatted} shipped files formatted");
    eprintln!("{formatted} shipped files formatted, {refused} refused (they do not parse)");
}

/// The ```perm blocks of a markdown file.
fn perm_blocks(rel: &str) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(root().join(rel)).unwrap_or_default();
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut open {
            None if line.trim_start().starts_with("```perm") => open = Some((i + 2, Vec::new())),
            None => {}
            Some((first, lines)) => {
                if line.trim_start().starts_with("```") {
                    out.push((*first, lines.join("\n") + "\n"));
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    out
}

#[test]
fn every_manual_example_formats_safely() {
    let mut n = 0;
    for doc in ["docs/language.md", "docs/cli.md", "README.md"] {
        for (line, src) in perm_blocks(doc) {
            if parse(&src, FileId(0)).is_ok() {
                check_properties(&format!("{doc}:{line}"), &src);
                n += 1;
            }
        }
    }
    assert!(n >= 40, "only {n} manual examples formatted");
}

#[test]
fn the_canonical_layout() {
    let src = "# header\nimport \"elsai\"\nimport   \"lib.perm\"   # a lib\n\n\n\ntool t {read input.path split \",\"   \n  exec input.cmd\n      when input.m in [\"a\",\"b\" ,]}\ntool u { read input.p }\ntool v { read input.p }\n# about p\npreset p{\n\n\tdeny read,write \"**/.env\"  as no_env\n  reason \"r  #  not a comment\"\n\n\n guidance \"g\"\n  allow   read /a\\/b  #c/   # real comment   \n\n}\npolicy q = all( p ,x, )\npolicy r {\n  workspace \"/w\"   # root\n  default   ask     # the default\n  use p\n  require_approval tool \"*\"\n  deny exec on shell\n    prefix \"git push\",\n    /rm/\n  # the end\n\n}\ntest r{\n  deny t{path:\"a\",list:[1,-2.5,true,null],o:{k:\"v\"}}cwd \"/tmp\" by no_env\n  allow u {}\n  ask v {\n  p: \"x\",\n  } by\n  x\n}\n";
    let out = check_properties("layout", src);
    insta::assert_snapshot!(out);
}

#[test]
fn strings_regexes_and_comments_are_kept_verbatim() {
    // A string may span lines; its inside (spaces, tabs, `#`) is untouched.
    let src = "policy p {\n        deny read \"a   b\n   \t# not a comment\n  c\"   as x\n  deny exec /a  #b\\/  c/\n# a\tcomment with  spaces   \n}\n";
    let out = check_properties("verbatim", src);
    assert!(
        out.contains("\"a   b\n   \t# not a comment\n  c\" as x"),
        "{out}"
    );
    assert!(out.contains("/a  #b\\/  c/"), "{out}");
    assert!(out.contains("# a\tcomment with  spaces\n"), "{out}");
}

#[test]
fn crlf_tabs_and_empty_files() {
    assert_eq!(format("").unwrap(), "");
    assert_eq!(format("\n\n  \n").unwrap(), "");
    assert_eq!(format("# only a comment   ").unwrap(), "# only a comment\n");
    let out = check_properties("crlf", "policy p {\r\n\tdeny read \"x\"\r\n}\r\n");
    assert_eq!(out, "policy p {\n  deny read \"x\"\n}\n");
}

#[test]
fn files_that_do_not_parse_are_refused() {
    for src in [
        "policy p { read \"x\" }",
        "policy p { deny read \"x }",
        "tool t {",
        "policy p { deny read \"a\" as x as y }",
    ] {
        let e = format(src).expect_err(src);
        assert!(e.iter().all(|d| d.is_error()), "{src}");
        assert!(e.iter().any(|d| d.code.starts_with("permc::")), "{src}");
    }
}

// ---- generated sources ---------------------------------------------------------

/// A source as a list of tokens; separators are added between them.
fn tokens_to_source(tokens: &[String], seps: &[usize], comments: &[String]) -> String {
    const SEPS: &[&str] = &[
        " ",
        " ",
        " ",
        "  ",
        "\t",
        "\n",
        "\n  ",
        "\n\n",
        "\n\n\n    ",
        " \t \n",
        "C",
        "\nC",
    ];
    let mut out = String::new();
    for (i, t) in tokens.iter().enumerate() {
        out.push_str(t);
        let sep = SEPS[seps.get(i).copied().unwrap_or(0) % SEPS.len()];
        if sep.contains('C') {
            let c = &comments[i % comments.len().max(1)];
            out.push_str(&sep.replace('C', &format!(" {c}\n")));
        } else {
            out.push_str(sep);
        }
    }
    out
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "a",
        "b_1",
        "x-y",
        "read",
        "exec",
        "file_read",
        "Bash",
        "q9",
    ])
    .prop_map(str::to_string)
}

fn string_lit() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "a", "/", "**", "#", " ", "  ", "\\\"", "\\\\", "\n", "\t", "{", "}", ",", "é", "/*",
        ]),
        0..6,
    )
    .prop_map(|parts| format!("\"{}\"", parts.concat()))
}

fn regex_lit() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["a", "\\/", "#", " ", "\\s", "^", "\"", "b+", "(x|y)"]),
        1..5,
    )
    .prop_map(|parts| format!("/{}/", parts.concat()))
}

fn effect() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "allow",
        "deny",
        "ask",
        "interrupt",
        "require_approval",
    ])
    .prop_map(str::to_string)
}

fn list_of(
    item: BoxedStrategy<Vec<String>>,
    min: usize,
    max: usize,
    trailing: bool,
) -> BoxedStrategy<Vec<String>> {
    (prop::collection::vec(item, min..max), any::<bool>())
        .prop_map(move |(items, comma)| {
            let mut out = Vec::new();
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    out.push(",".to_string());
                }
                out.extend(it.iter().cloned());
            }
            if trailing && comma && !items.is_empty() {
                out.push(",".to_string());
            }
            out
        })
        .boxed()
}

fn value(depth: u32) -> BoxedStrategy<Vec<String>> {
    let leaf = prop_oneof![
        string_lit().prop_map(|s| vec![s]),
        prop::sample::select(vec!["1", "-2", "3.5", "true", "false", "null"])
            .prop_map(|s| vec![s.to_string()]),
    ]
    .boxed();
    if depth == 0 {
        return leaf;
    }
    prop_oneof![
        leaf,
        list_of(value(depth - 1), 0, 3, true).prop_map(|v| [
            vec!["[".to_string()],
            v,
            vec!["]".to_string()]
        ]
        .concat()),
        object(depth - 1),
    ]
    .boxed()
}

fn object(depth: u32) -> BoxedStrategy<Vec<String>> {
    let pair = (prop_oneof![name(), string_lit()], value(depth))
        .prop_map(|(k, v)| [vec![k, ":".to_string()], v].concat())
        .boxed();
    list_of(pair, 0, 3, true)
        .prop_map(|v| [vec!["{".to_string()], v, vec!["}".to_string()]].concat())
        .boxed()
}

fn tool_decl() -> impl Strategy<Value = Vec<String>> {
    let field =
        prop::sample::select(vec!["input.path", "input.a.b", "input.x-y"]).prop_map(str::to_string);
    let when = prop_oneof![
        Just(None),
        (field.clone(), value(1))
            .prop_map(|(f, v)| Some([vec!["when".into(), f, "==".into()], v].concat())),
        (field.clone(), value(0))
            .prop_map(|(f, v)| Some([vec!["when".into(), f, "!=".into()], v].concat())),
        (field.clone(), list_of(value(0), 0, 3, true)).prop_map(|(f, v)| Some(
            [
                vec!["when".into(), f, "in".into(), "[".into()],
                v,
                vec!["]".into()]
            ]
            .concat()
        )),
    ];
    let stmt = (
        name(),
        prop::option::of(field.clone()),
        prop::option::of(string_lit()),
        prop::option::of(field),
        when,
    )
        .prop_map(|(op, f, split, cwd, when)| {
            let mut t = vec![op];
            if let Some(f) = f {
                t.push(f);
            }
            if let Some(s) = split {
                t.extend(["split".to_string(), s]);
            }
            if let Some(c) = cwd {
                t.extend(["cwd".to_string(), c]);
            }
            t.extend(when.unwrap_or_default());
            t
        });
    (
        prop_oneof![name(), string_lit()],
        prop::collection::vec(stmt, 0..3),
    )
        .prop_map(|(n, stmts)| {
            [
                vec!["tool".to_string(), n, "{".to_string()],
                stmts.concat(),
                vec!["}".to_string()],
            ]
            .concat()
        })
}

fn rule() -> impl Strategy<Value = Vec<String>> {
    let tool_ref = prop_oneof![name(), string_lit(), Just("elsai.shell".to_string())]
        .prop_map(|s| vec![s])
        .boxed();
    let matcher = prop_oneof![
        Just(vec![
            "cwd".to_string(),
            "outside".to_string(),
            "workspace".to_string()
        ]),
        string_lit().prop_map(|s| vec!["prefix".to_string(), s]),
        regex_lit().prop_map(|s| vec![s]),
        string_lit().prop_map(|s| vec![s]),
    ]
    .boxed();
    let target = prop_oneof![
        list_of(tool_ref.clone(), 1, 3, false).prop_map(|t| [vec!["tool".to_string()], t].concat()),
        (
            list_of(name().prop_map(|n| vec![n]).boxed(), 1, 3, false),
            prop::option::of(list_of(tool_ref, 1, 3, false)),
            prop::option::of(list_of(matcher, 1, 4, false)),
        )
            .prop_map(|(ops, on, ms)| {
                let mut t = ops;
                if let Some(on) = on {
                    t.push("on".to_string());
                    t.extend(on);
                }
                t.extend(ms.unwrap_or_default());
                t
            }),
    ];
    let word =
        prop::sample::select(vec!["x", "outside", "deny_env", "as"]).prop_map(str::to_string);
    (
        effect(),
        target,
        prop::option::of(word),
        prop::option::of(string_lit()),
        prop::option::of(string_lit()),
    )
        .prop_map(|(e, t, n, r, g)| {
            let mut out = vec![e];
            out.extend(t);
            if let Some(n) = n {
                out.extend(["as".to_string(), n]);
            }
            if let Some(r) = r {
                out.extend(["reason".to_string(), r]);
            }
            if let Some(g) = g {
                out.extend(["guidance".to_string(), g]);
            }
            out
        })
}

fn body_stmt() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        string_lit().prop_map(|s| vec!["workspace".to_string(), s]),
        prop::sample::select(vec!["first-match", "strictest"])
            .prop_map(|m| vec!["combine".to_string(), m.to_string()]),
        effect().prop_map(|e| vec!["default".to_string(), e]),
        prop::sample::select(vec!["p", "elsai.workspace_only"])
            .prop_map(|n| vec!["use".to_string(), n.to_string()]),
        rule(),
        rule(),
        rule(),
    ]
}

fn item() -> impl Strategy<Value = Vec<String>> {
    let block = |kw: &'static str| {
        (name(), prop::collection::vec(body_stmt(), 0..5)).prop_map(move |(n, b)| {
            [
                vec![kw.to_string(), n, "{".to_string()],
                b.concat(),
                vec!["}".to_string()],
            ]
            .concat()
        })
    };
    let all = (
        name(),
        list_of(
            prop::sample::select(vec!["a", "elsai.x"])
                .prop_map(|s| vec![s.to_string()])
                .boxed(),
            0,
            3,
            true,
        ),
    )
        .prop_map(|(n, l)| {
            [
                vec![
                    "policy".to_string(),
                    n,
                    "=".into(),
                    "all".into(),
                    "(".into(),
                ],
                l,
                vec![")".into()],
            ]
            .concat()
        });
    let case = (
        effect(),
        prop_oneof![name(), string_lit()],
        object(2),
        prop::option::of(string_lit()),
        prop::option::of(name()),
    )
        .prop_map(|(e, t, o, cwd, by)| {
            let mut out = vec![e, t];
            out.extend(o);
            if let Some(c) = cwd {
                out.extend(["cwd".to_string(), c]);
            }
            if let Some(b) = by {
                out.extend(["by".to_string(), b]);
            }
            out
        });
    let test = (name(), prop::collection::vec(case, 0..4)).prop_map(|(n, cs)| {
        [
            vec!["test".to_string(), n, "{".to_string()],
            cs.concat(),
            vec!["}".to_string()],
        ]
        .concat()
    });
    prop_oneof![
        string_lit().prop_map(|s| vec!["import".to_string(), s]),
        tool_decl(),
        block("preset"),
        block("policy"),
        all,
        test,
    ]
}

fn source() -> impl Strategy<Value = String> {
    let comment = prop::collection::vec(
        prop::sample::select(vec!["#", "x", " ", "\t", "\"", "/", "{", "}", "é", "  "]),
        0..8,
    )
    .prop_map(|p| format!("#{}", p.concat()));
    (
        prop::collection::vec(item(), 0..5),
        prop::collection::vec(0usize..64, 0..400),
        prop::collection::vec(comment, 1..6),
        prop::option::of(Just("# leading\n".to_string())),
    )
        .prop_map(|(items, seps, comments, lead)| {
            let tokens: Vec<String> = items.concat();
            let seps: Vec<usize> = seps
                .into_iter()
                .map(|s| if s < 40 { s % 4 } else { s })
                .collect();
            lead.unwrap_or_default() + &tokens_to_source(&tokens, &seps, &comments)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn generated_sources_format_safely(src in source()) {
        prop_assert!(parse(&src, FileId(0)).is_ok(), "the generator made a source that does not parse:\n{}", src);
        check_properties("generated", &src);
    }
}

// ---- the binary ------------------------------------------------------------------

fn permc(args: &[&str], dir: &Path, stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_permc"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn permc");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(input.as_bytes()).expect("write stdin");
    }
    child.wait_with_output().expect("wait for permc")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("permc-fmt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

const MESSY: &str = "policy p {\n deny   read \"**/.env\"   # secrets\n}\n";
const TIDY: &str = "policy p {\n  deny read \"**/.env\" # secrets\n}\n";

#[test]
fn cli_rewrites_in_place_and_checks() {
    let dir = scratch("inplace");
    std::fs::write(dir.join("a.perm"), MESSY).unwrap();
    std::fs::write(dir.join("b.perm"), TIDY).unwrap();

    let o = permc(&["fmt", "--check", "a.perm", "b.perm"], &dir, None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "a.perm\n");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.perm")).unwrap(),
        MESSY,
        "--check never writes"
    );

    let o = permc(&["fmt", "a.perm", "b.perm"], &dir, None);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(dir.join("a.perm")).unwrap(), TIDY);

    let o = permc(&["fmt", "--check", "a.perm", "b.perm"], &dir, None);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_refuses_a_file_that_does_not_parse() {
    let dir = scratch("refuse");
    let bad = "policy p {\n   read \"x\"\n}\n";
    std::fs::write(dir.join("bad.perm"), bad).unwrap();
    std::fs::write(dir.join("ok.perm"), MESSY).unwrap();
    let o = permc(&["fmt", "bad.perm", "ok.perm"], &dir, None);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("syntax error") && err.contains("`bad.perm` was not formatted"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("bad.perm")).unwrap(),
        bad,
        "never written"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("ok.perm")).unwrap(),
        TIDY,
        "other files still formatted"
    );

    let o = permc(&["fmt", "missing.perm"], &dir, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read `missing.perm`"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_formats_standard_input() {
    let dir = root();
    for args in [&["fmt", "-"][..], &["fmt", "--stdin"][..]] {
        let o = permc(args, &dir, Some(MESSY));
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&o.stdout), TIDY);
    }
    let o = permc(&["fmt", "--check", "-"], &dir, Some(MESSY));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "<stdin>\n");
    let o = permc(&["fmt", "-"], &dir, Some("policy {"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        o.stdout.is_empty(),
        "nothing written for a file that does not parse"
    );
    let o = permc(&["fmt"], &dir, None);
    assert_eq!(o.status.code(), Some(2), "no file is a usage error");
}
