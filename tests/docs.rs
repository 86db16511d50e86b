//! The manuals are tests.
//!
//! * Every ```` ```perm ```` block of `docs/language.md`, `docs/cli.md` and
//!   `README.md` (when it exists) must compile, and its `test` blocks must pass
//!   (each case is decided by the compiled program and by the reference
//!   interpreter). A first-line comment `# warning: permc::CODE` also requires
//!   that warning.
//! * Every ```` ```perm,error ```` block must fail to compile; a first-line
//!   comment `# error: permc::CODE` names the diagnostic it must report.
//! * A block whose first line is `# file: PATH` must be a verbatim copy of that
//!   file (after the marker line), so the manuals cannot drift from the files
//!   they show.
//! * The manual must keep at least [`MIN_LANGUAGE_BLOCKS`] examples, and every
//!   keyword of the grammar must appear in at least one example that compiles.
//! * Every ```` ```console ```` block of `docs/cli.md` is a transcript: each
//!   `$ ` line runs in `sh` from the crate root (with the freshly built `permc`
//!   first on `PATH`), and its output (stdout and stderr, interleaved) must be
//!   the lines that follow it.
//!
//! Relative imports in examples resolve against the process's working
//! directory, which for `cargo test` is the crate root.

use permc::{Options, Policy};
use std::path::{Path, PathBuf};

/// Deleting examples from the manual must fail this test.
const MIN_LANGUAGE_BLOCKS: usize = 64;
/// The manual shows at least this many compile errors.
const MIN_ERROR_BLOCKS: usize = 25;

/// Every keyword of `grammar/perm.pest` (multi-word forms as written).
const KEYWORDS: &[&str] = &[
    "import",
    "tool",
    "preset",
    "policy",
    "test",
    "use",
    "workspace",
    "combine",
    "default",
    "on",
    "as",
    "reason",
    "guidance",
    "prefix",
    "cwd outside workspace",
    "split",
    "when",
    "in",
    "all",
    "by",
    "interrupt",
    "require_approval",
    "strictest",
    "first-match",
    "not in",
    "else cwd",
    "raw",
    "shell",
    "json",
    "expand",
    "parent",
    "unless",
    "if",
    "operation",
    "scope",
    "grants",
    "given",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// ```` ```perm ````: compiles, tests pass.
    Ok,
    /// ```` ```perm,error ````: fails to compile.
    Error,
    /// ```` ```console ````: a CLI transcript.
    Console,
}

#[derive(Debug, Clone)]
struct Block {
    /// The markdown file, relative to the crate root.
    file: String,
    /// 1-based line of the block's first content line.
    line: usize,
    kind: Kind,
    text: String,
}

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// The value of a first-line marker comment such as `# error: CODE`.
    fn marker(&self, key: &str) -> Option<String> {
        let first = self.text.lines().next()?.trim();
        let rest = first.strip_prefix('#')?.trim_start();
        let value = rest.strip_prefix(key)?.strip_prefix(':')?;
        Some(value.trim().to_string())
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fenced blocks of a markdown file whose info string is `perm`,
/// `perm,error` or `console`. Fences of three or more backticks are
/// understood, so a longer fence can quote a shorter one.
fn blocks(rel: &str) -> Vec<Block> {
    let path = root().join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut out = Vec::new();
    let mut open: Option<(usize, String, usize, Vec<&str>)> = None; // (fence len, info, first line, lines)
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        match &mut open {
            None => {
                if ticks >= 3 {
                    let info: String = trimmed[ticks..]
                        .chars()
                        .filter(|c| !c.is_whitespace())
                        .collect();
                    open = Some((ticks, info, i + 2, Vec::new()));
                }
            }
            Some((fence, info, first, lines)) => {
                if ticks >= *fence && trimmed[ticks..].trim().is_empty() {
                    let kind = match info.as_str() {
                        "perm" => Some(Kind::Ok),
                        "perm,error" => Some(Kind::Error),
                        "console" => Some(Kind::Console),
                        other if other.starts_with("perm") => {
                            panic!(
                                "{rel}:{}: unknown info string `{other}`; use `perm` or `perm,error`",
                                *first - 1
                            )
                        }
                        _ => None,
                    };
                    if let Some(kind) = kind {
                        let mut body = lines.join("\n");
                        body.push('\n');
                        out.push(Block {
                            file: rel.to_string(),
                            line: *first,
                            kind,
                            text: body,
                        });
                    }
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    if let Some((_, info, first, _)) = open {
        panic!("{rel}:{}: the ```{info} block is never closed", first - 1);
    }
    out
}

/// The markdown files whose `perm` blocks are checked.
fn doc_files() -> Vec<&'static str> {
    let mut files = vec!["docs/language.md", "docs/cli.md"];
    if root().join("README.md").exists() {
        files.push("README.md");
    }
    files
}

fn all_perm_blocks() -> Vec<Block> {
    doc_files()
        .into_iter()
        .flat_map(blocks)
        .filter(|b| b.kind != Kind::Console)
        .collect()
}

/// Compiles one block the way the manual promises: `Options::logical()`, and
/// checks what it must. Returns the problems found.
fn check_block(b: &Block) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(file) = b.marker("file") {
        let body: String = b.text.split_inclusive('\n').skip(1).collect();
        match std::fs::read_to_string(root().join(&file)) {
            Ok(want) if want.trim_end() == body.trim_end() => {}
            Ok(_) => problems.push(format!(
                "{}: the block is not a verbatim copy of `{file}`; update one or the other",
                b.at()
            )),
            Err(e) => problems.push(format!("{}: cannot read `{file}`: {e}", b.at())),
        }
    }
    let result = Policy::compile(&b.at(), &b.text, &Options::logical());
    match (b.kind, result) {
        (Kind::Ok, Ok(policy)) => {
            if let Some(code) = b.marker("warning") {
                // Compile warnings and `permc check`'s analyses.
                let mut warnings = policy.warnings().to_vec();
                warnings.extend(permc::analysis::lint_policy(&policy));
                if !warnings.iter().any(|d| d.code == code) {
                    let got: Vec<&str> = warnings.iter().map(|d| d.code).collect();
                    problems.push(format!(
                        "{}: expected warning `{code}`, got {got:?}",
                        b.at()
                    ));
                }
            }
            for r in permc::testing::run_tests(&policy) {
                if !r.passed {
                    let (line, _) = policy.sources().line_col(r.loc);
                    problems.push(format!(
                        "{}:{}: test `{}` failed: {}",
                        b.file,
                        b.line + line.saturating_sub(1),
                        r.block,
                        r.message
                    ));
                }
            }
        }
        (Kind::Ok, Err(e)) => {
            problems.push(format!(
                "{}: the example does not compile:\n{}",
                b.at(),
                e.render(false)
            ));
        }
        (Kind::Error, Ok(_)) => {
            problems.push(format!(
                "{}: a `perm,error` example compiled; it must fail",
                b.at()
            ));
        }
        (Kind::Error, Err(e)) => {
            if let Some(code) = b.marker("error") {
                if !e.diagnostics.iter().any(|d| d.code == code) {
                    let got: Vec<&str> = e.diagnostics.iter().map(|d| d.code).collect();
                    problems.push(format!(
                        "{}: expected error `{code}`, got {got:?}\n{}",
                        b.at(),
                        e.render(false)
                    ));
                }
            }
        }
        (Kind::Console, _) => unreachable!("console blocks are not compiled"),
    }
    problems
}

#[test]
fn every_example_compiles_and_its_tests_pass() {
    let blocks = all_perm_blocks();
    let mut problems = Vec::new();
    for b in &blocks {
        problems.extend(check_block(b));
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) in the manual's examples:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
    eprintln!("checked {} perm blocks", blocks.len());
}

#[test]
fn the_manual_keeps_its_examples() {
    let lang = blocks("docs/language.md");
    let ok = lang.iter().filter(|b| b.kind == Kind::Ok).count();
    let err = lang.iter().filter(|b| b.kind == Kind::Error).count();
    assert!(
        ok + err >= MIN_LANGUAGE_BLOCKS,
        "docs/language.md has {} perm blocks; it must keep at least {MIN_LANGUAGE_BLOCKS}",
        ok + err
    );
    assert!(
        err >= MIN_ERROR_BLOCKS,
        "docs/language.md has {err} perm,error blocks; it must keep at least {MIN_ERROR_BLOCKS}"
    );
    let with_tests = lang
        .iter()
        .filter(|b| b.kind == Kind::Ok && words(&b.text).iter().any(|w| w == "test"))
        .count();
    assert!(
        with_tests >= 10,
        "only {with_tests} examples carry test blocks"
    );
    let cli = blocks("docs/cli.md");
    assert!(
        cli.iter().any(|b| b.kind == Kind::Ok),
        "docs/cli.md shows no policy"
    );
    assert!(
        cli.iter().filter(|b| b.kind == Kind::Console).count() >= 5,
        "docs/cli.md has too few transcripts"
    );
}

/// The words of `.perm` source outside comments, strings and regex literals.
fn words(src: &str) -> Vec<String> {
    let mut code = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '#' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                code.push('\n');
            }
            '"' | '/' => {
                // A string, or a regex literal (outside strings `/` only opens one).
                let close = c;
                while let Some(c) = chars.next() {
                    if c == '\\' {
                        chars.next();
                    } else if c == close || (close == '/' && c == '\n') {
                        break;
                    }
                }
                code.push(' ');
            }
            c => code.push(c),
        }
    }
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn every_keyword_appears_in_a_compiled_example() {
    let compiled: Vec<Vec<String>> = all_perm_blocks()
        .iter()
        .filter(|b| {
            b.kind == Kind::Ok && Policy::compile(&b.at(), &b.text, &Options::logical()).is_ok()
        })
        .map(|b| words(&b.text))
        .collect();
    let mut missing = Vec::new();
    for kw in KEYWORDS {
        let seq: Vec<&str> = kw.split(' ').collect();
        let found = compiled.iter().any(|ws| {
            ws.windows(seq.len())
                .any(|w| w.iter().zip(&seq).all(|(a, b)| a == b))
        });
        if !found {
            missing.push(*kw);
        }
    }
    assert!(missing.is_empty(), "no compiled example uses: {missing:?}");
}

#[test]
fn words_skip_comments_strings_and_regexes() {
    let w = words("deny read \"in all\" # in\nask exec /in\\/all/ as by");
    assert_eq!(w, ["deny", "read", "ask", "exec", "as", "by"]);
}

/// Runs `cmd` in `sh` from the crate root with the built `permc` first on PATH.
fn run_shell(cmd: &str) -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_permc"));
    let dir = bin.parent().unwrap_or(Path::new("."));
    let path = match std::env::var_os("PATH") {
        Some(p) => {
            let mut parts = vec![dir.to_path_buf()];
            parts.extend(std::env::split_paths(&p));
            std::env::join_paths(parts).expect("PATH")
        }
        None => dir.as_os_str().to_owned(),
    };
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1\n{cmd}"))
        .current_dir(root())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run sh");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn cli_transcripts_are_real() {
    let mut problems = Vec::new();
    let mut commands = 0;
    for b in blocks("docs/cli.md")
        .iter()
        .filter(|b| b.kind == Kind::Console)
    {
        // (line, command, expected output lines)
        let mut steps: Vec<(usize, String, Vec<String>)> = Vec::new();
        for (i, line) in b.text.lines().enumerate() {
            match line.strip_prefix("$ ") {
                Some(cmd) => steps.push((b.line + i, cmd.to_string(), Vec::new())),
                None => match steps.last_mut() {
                    Some(step) => step.2.push(line.trim_end().to_string()),
                    None => problems.push(format!(
                        "{}: a console block must start with a `$ ` command",
                        b.at()
                    )),
                },
            }
        }
        for (line, cmd, want) in steps {
            commands += 1;
            let mut got: Vec<String> = run_shell(&cmd)
                .lines()
                .map(|l| l.trim_end().to_string())
                .collect();
            let mut want = want;
            for lines in [&mut got, &mut want] {
                while lines.last().is_some_and(String::is_empty) {
                    lines.pop();
                }
            }
            if got != want {
                problems.push(format!(
                    "docs/cli.md:{line}: `{cmd}` printed\n{}\n-- but the manual says --\n{}",
                    got.join("\n"),
                    want.join("\n")
                ));
            }
        }
    }
    assert!(commands > 0, "docs/cli.md runs no commands");
    assert!(
        problems.is_empty(),
        "{} transcript(s) differ:\n\n{}",
        problems.len(),
        problems.join("\n\n")
    );
}
