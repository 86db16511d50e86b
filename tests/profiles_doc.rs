//! docs/profiles.md maps every documented behaviour of the three reference
//! systems to a test. This checks the tables: every row of every table with a
//! `Test` column names at least one test, written
//! `` `tests/conformance/elsai.perm` + `test NAME` `` or
//! `` `tests/elsai_host.rs` + `fn NAME` ``, and nothing else; every named test
//! exists (a `.perm` file holds `test NAME {`, a `.rs` file a `#[test]`
//! function `fn NAME(`). Renaming or removing a test a row names fails here.

use regex::Regex;
use std::collections::HashMap;
use std::path::Path;

/// One table row: its line number, its section heading, and its cells.
struct Row {
    line: usize,
    section: String,
    cells: Vec<String>,
}

/// One table: its header cells and rows.
struct Table {
    line: usize,
    header: Vec<String>,
    rows: Vec<Row>,
}

/// Splits a table line into cells at unescaped `|`.
fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t
        .strip_suffix('|')
        .filter(|s| !s.ends_with('\\'))
        .unwrap_or(t);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('\\');
                cur.push(chars.next().unwrap());
            }
            '|' => out.push(std::mem::take(&mut cur).trim().to_string()),
            _ => cur.push(c),
        }
    }
    out.push(cur.trim().to_string());
    out
}

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.contains("---") && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

fn tables(md: &str) -> Vec<Table> {
    let lines: Vec<&str> = md.lines().collect();
    let mut out: Vec<Table> = Vec::new();
    let mut section = String::new();
    let mut in_code = false;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && l.starts_with("## ") {
            section = l[3..].trim().to_string();
        }
        if !in_code
            && l.trim_start().starts_with('|')
            && i + 1 < lines.len()
            && is_separator(lines[i + 1])
        {
            let mut t = Table {
                line: i + 1,
                header: cells(l),
                rows: Vec::new(),
            };
            i += 2;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                t.rows.push(Row {
                    line: i + 1,
                    section: section.clone(),
                    cells: cells(lines[i]),
                });
                i += 1;
            }
            out.push(t);
            continue;
        }
        i += 1;
    }
    out
}

/// A test a row names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TestRef {
    file: String,
    kind: String,
    name: String,
}

fn ref_regex() -> Regex {
    Regex::new(r"`(tests/[^`\s]+\.(?:perm|rs))`\s*\+\s*`(test|fn) ([A-Za-z_][A-Za-z0-9_.]*)`")
        .unwrap()
}

/// Does `file`'s text define the test?
fn defines(text: &str, r: &TestRef) -> bool {
    let name = regex::escape(&r.name);
    if r.kind == "test" {
        return Regex::new(&format!(r"(?m)^\s*test\s+{name}\s*\{{"))
            .unwrap()
            .is_match(text);
    }
    // `fn NAME(` with `#[test]` among the attributes just above it.
    let lines: Vec<&str> = text.lines().collect();
    let f = Regex::new(&format!(r"^\s*(pub\s+)?fn\s+{name}\s*\(")).unwrap();
    lines.iter().enumerate().any(|(i, l)| {
        f.is_match(l)
            && lines[..i]
                .iter()
                .rev()
                .map(|l| l.trim())
                .take_while(|l| l.is_empty() || l.starts_with("#[") || l.starts_with("//"))
                .any(|l| l.starts_with("#[test]"))
    })
}

/// Every problem with the document's tables; `read` gives a file's text.
fn check(md: &str, read: &dyn Fn(&str) -> Option<String>) -> (Vec<String>, HashMap<String, usize>) {
    let re = ref_regex();
    let mut errors = Vec::new();
    let mut rows_per_section: HashMap<String, usize> = HashMap::new();
    let mut cache: HashMap<String, Option<String>> = HashMap::new();
    for t in tables(md) {
        let Some(col) = t.header.iter().position(|h| h == "Test") else {
            continue;
        };
        if t.rows.is_empty() {
            errors.push(format!(
                "line {}: a table with a Test column has no rows",
                t.line
            ));
        }
        for row in &t.rows {
            let at = format!("line {} ({})", row.line, row.section);
            if row.cells.len() != t.header.len() {
                errors.push(format!(
                    "{at}: {} cells, the header has {} (escape `|` inside cells as `\\|`)",
                    row.cells.len(),
                    t.header.len()
                ));
                continue;
            }
            *rows_per_section.entry(row.section.clone()).or_default() += 1;
            let cell = &row.cells[col];
            let refs: Vec<TestRef> = re
                .captures_iter(cell)
                .map(|c| TestRef {
                    file: c[1].to_string(),
                    kind: c[2].to_string(),
                    name: c[3].to_string(),
                })
                .collect();
            if refs.is_empty() {
                errors.push(format!("{at}: the row names no test: {cell:?}"));
                continue;
            }
            let rest = re.replace_all(cell, "").replace("<br>", "");
            if !rest.trim().is_empty() {
                errors.push(format!(
                    "{at}: the Test cell holds something that is not a test reference: {:?}",
                    rest.trim()
                ));
            }
            for r in refs {
                let want = if r.file.ends_with(".perm") {
                    "test"
                } else {
                    "fn"
                };
                if r.kind != want {
                    errors.push(format!(
                        "{at}: `{}` names a `{}`; a {} file holds `{want}` tests",
                        r.file,
                        r.kind,
                        &r.file[r.file.rfind('.').unwrap()..]
                    ));
                    continue;
                }
                let text = cache.entry(r.file.clone()).or_insert_with(|| read(&r.file));
                match text {
                    None => errors.push(format!("{at}: `{}` does not exist", r.file)),
                    Some(text) if !defines(text, &r) => errors.push(format!(
                        "{at}: `{}` has no {}",
                        r.file,
                        if r.kind == "test" {
                            format!("`test {} {{` block", r.name)
                        } else {
                            format!("`#[test] fn {}(`", r.name)
                        }
                    )),
                    Some(_) => {}
                }
            }
        }
    }
    (errors, rows_per_section)
}

fn repo_file(rel: &str) -> Option<String> {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).ok()
}

#[test]
fn every_row_names_a_test_that_exists() {
    let md = repo_file("docs/profiles.md").expect("docs/profiles.md");
    let (errors, rows) = check(&md, &repo_file);
    assert!(
        errors.is_empty(),
        "docs/profiles.md:\n{}",
        errors.join("\n")
    );
    // Deleting a system's table must not pass silently.
    for (section, min) in [
        ("elsai", 100),
        ("TypeScript agent SDK", 40),
        ("AgentLane", 70),
    ] {
        let n = rows.get(section).copied().unwrap_or(0);
        assert!(
            n >= min,
            "section `{section}` has {n} rows, expected at least {min}"
        );
    }
    for section in [
        "Contradictions in the documents",
        "Where permc is stricter than the upstream implementations",
        "Decisions where the documents are silent",
    ] {
        assert!(
            rows.get(section).copied().unwrap_or(0) > 0,
            "section `{section}` has no table rows"
        );
    }
}

#[test]
fn the_checker_catches_missing_and_renamed_tests() {
    let files: HashMap<&str, &str> = HashMap::from([
        ("tests/conformance/x.perm", "policy a { }\ntest a {\n}\n"),
        (
            "tests/x_host.rs",
            "#[test]\nfn real() {}\n\nfn helper() {}\n",
        ),
    ]);
    let read = |f: &str| files.get(f).map(|s| s.to_string());
    let doc = |cell: &str| {
        format!("## S\n\n| # | Behaviour | Test |\n|---|---|---|\n| 1 | b \\| c | {cell} |\n")
    };
    let ok = |cell: &str| check(&doc(cell), &read).0;
    assert_eq!(
        ok("`tests/conformance/x.perm` + `test a`"),
        Vec::<String>::new()
    );
    assert_eq!(
        ok("`tests/x_host.rs` + `fn real`<br>`tests/conformance/x.perm` + `test a`"),
        Vec::<String>::new()
    );
    // a renamed or removed test
    assert_eq!(ok("`tests/conformance/x.perm` + `test b`").len(), 1);
    assert_eq!(ok("`tests/x_host.rs` + `fn gone`").len(), 1);
    // a helper is not a test
    assert_eq!(ok("`tests/x_host.rs` + `fn helper`").len(), 1);
    // a missing file, a wrong kind, no reference, stray text
    assert_eq!(ok("`tests/nope.perm` + `test a`").len(), 1);
    assert_eq!(ok("`tests/x_host.rs` + `test real`").len(), 1);
    assert_eq!(ok("").len(), 1);
    assert_eq!(ok("see above").len(), 1);
    assert_eq!(ok("`tests/x_host.rs` + `fn real` and more").len(), 1);
    // an unescaped `|` shifts the cells
    let bad = "## S\n\n| # | Behaviour | Test |\n|---|---|---|\n| 1 | a | b | `tests/x_host.rs` + `fn real` |\n";
    assert_eq!(check(bad, &read).0.len(), 1);
    // tables without a Test column are not checked
    assert!(
        check("| a | b |\n|---|---|\n| 1 | 2 |\n", &read)
            .0
            .is_empty()
    );
}
