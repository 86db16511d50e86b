//! Stage 1: `.perm` source text to a typed AST, with pest.
//!
//! The grammar lives in `grammar/perm.pest`; this module walks pest's pairs into
//! [`ast`] nodes, each carrying its [`loc::Loc`].

pub mod ast;
pub mod loc;

use crate::diag::Diagnostic;
use ast::*;
use loc::{FileId, Loc, Node};
use pest::Parser as _;
use pest::iterators::Pair;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/perm.pest"]
struct PermParser;

type P<'a> = Pair<'a, Rule>;

/// Parses one source file. Syntax errors come back as diagnostics; pest stops
/// at the first one in a file, later stages collect the rest.
///
/// ```
/// use permc::syntax::{parse, loc::FileId};
/// let file = parse("policy p { deny read \"**/.env\" }", FileId(0)).unwrap();
/// assert_eq!(file.policies[0].name.node, "p");
/// // A rule needs an effect first:
/// assert!(parse("policy p { read \"x\" }", FileId(0)).is_err());
/// ```
pub fn parse(src: &str, file: FileId) -> Result<ast::File, Vec<Diagnostic>> {
    let mut pairs =
        PermParser::parse(Rule::file, src).map_err(|e| vec![syntax_error(e, src, file)])?;
    let mut b = Builder {
        file,
        errors: Vec::new(),
    };
    let mut out = ast::File::default();
    if let Some(root) = pairs.next() {
        for item in root.into_inner().filter(not_kw) {
            match item.as_rule() {
                Rule::import => {
                    if let Some(s) = item.into_inner().filter(not_kw).next() {
                        out.imports.push(b.string(s));
                    }
                }
                Rule::tool_decl => out.tools.push(b.tool_decl(item)),
                Rule::op_decl => {
                    for op in item.into_inner().filter(not_kw) {
                        out.operations.push(b.text(op));
                    }
                }
                Rule::preset => out.presets.push(b.preset(item)),
                Rule::policy => out.policies.push(b.policy(item)),
                Rule::test_block => out.tests.push(b.test_block(item)),
                _ => {}
            }
        }
    }
    if b.errors.is_empty() {
        Ok(out)
    } else {
        Err(b.errors)
    }
}

fn syntax_error(e: pest::error::Error<Rule>, src: &str, file: FileId) -> Diagnostic {
    let (start, end) = match e.location {
        pest::error::InputLocation::Pos(p) => (p, p),
        pest::error::InputLocation::Span((s, t)) => (s, t),
    };
    if let Some(d) = unclosed(src, start, file) {
        return d;
    }
    let expected = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            let mut names: Vec<&str> = positives.iter().filter_map(|r| rule_name(*r)).collect();
            names.sort_unstable();
            names.dedup();
            names
        }
        pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
    };
    let message = if expected.is_empty() {
        "unexpected input".to_string()
    } else {
        format!("expected {}", join_or(&expected))
    };
    Diagnostic::error("permc::syntax", format!("syntax error: {message}"))
        .label(Loc::new(file, start, end), "here")
        .help("see docs/language.md for the forms a .perm file may contain")
}

/// Recognises the errors pest reports poorly: a string, regex or block left
/// open. Returns a diagnostic that names what is unclosed and where it began.
fn unclosed(src: &str, at: usize, file: FileId) -> Option<Diagnostic> {
    let rest = src.get(at..)?;
    let line_end = rest.find('\n').map_or(src.len(), |i| at + i);
    let open_quote = |q: char| -> bool {
        // An odd number of unescaped quote characters before the line's end.
        let mut n = 0;
        let mut esc = false;
        for c in src[at..line_end].chars() {
            match c {
                '\\' if !esc => esc = true,
                c if c == q && !esc => n += 1,
                _ => esc = false,
            }
            if c != '\\' {
                esc = false;
            }
        }
        n % 2 == 1
    };
    if rest.starts_with('"') && open_quote('"') {
        return Some(
            Diagnostic::error("permc::syntax", "syntax error: unterminated string")
                .label(Loc::new(file, at, at + 1), "this string is never closed")
                .help(
                    "close it with `\"` on the same line; write a quote inside a string as `\\\"`",
                ),
        );
    }
    if rest.starts_with('/') && !rest.starts_with("//") && open_quote('/') {
        return Some(
            Diagnostic::error("permc::syntax", "syntax error: unterminated regex")
                .label(Loc::new(file, at, at + 1), "this `/regex/` is never closed")
                .help("close it with `/` on the same line; write a slash inside a regex as `\\/`"),
        );
    }
    if rest.trim().is_empty() {
        let opens = src.matches('{').count();
        let closes = src.matches('}').count();
        let mut d = Diagnostic::error("permc::syntax", "syntax error: unexpected end of file");
        let end = src.trim_end().len();
        d = d.label(
            Loc::new(file, end.saturating_sub(1), end),
            "the file ends here",
        );
        return Some(if opens > closes {
            d.help("a `{` block is not closed; add the missing `}`")
        } else {
            d.help("the last item is incomplete")
        });
    }
    None
}

fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

/// Human names for the grammar rules pest reports as expected.
fn rule_name(r: Rule) -> Option<&'static str> {
    Some(match r {
        Rule::EOI => "end of input",
        Rule::import => "`import`",
        Rule::tool_decl => "`tool`",
        Rule::preset => "`preset`",
        Rule::policy => "`policy`",
        Rule::test_block => "`test`",
        Rule::ident
        | Rule::qname
        | Rule::tool_name
        | Rule::tool_ref
        | Rule::op_name
        | Rule::word
        | Rule::string_or_ident => "a name",
        Rule::string | Rule::glob => "a string",
        Rule::regex => "a `/regex/`",
        Rule::effect => "an effect (`allow`, `deny`, `ask`)",
        Rule::rule => "a rule",
        Rule::field => "a field such as `input.path`",
        Rule::value | Rule::object => "a value",
        Rule::matcher | Rule::matchers | Rule::prefix | Rule::cwd_gate => "a matcher",
        Rule::workspace | Rule::combine | Rule::default | Rule::use_stmt => "a policy statement",
        Rule::combine_mode => "`first-match` or `strictest`",
        Rule::policy_all | Rule::policy_body => "`{` or `= all(...)`",
        Rule::test_case => "a test case such as `deny tool { ... }`",
        Rule::tool_stmt => "an operation such as `read input.path`",
        Rule::cond_eq | Rule::cond_ne | Rule::cond_in | Rule::cond_nin => {
            "`==`, `!=`, `in` or `not in`"
        }
        Rule::rule_name | Rule::reason | Rule::guidance => "`as`, `reason` or `guidance`",
        Rule::on_tools => "`on`",
        Rule::split => "`split`",
        Rule::when => "`when`",
        _ => return None,
    })
}

/// Keyword tokens are pairs of their own (so `as` cannot match the start of
/// `ask`); the builder skips them.
fn not_kw(p: &P) -> bool {
    !matches!(
        p.as_rule(),
        Rule::k_import
            | Rule::k_tool
            | Rule::k_preset
            | Rule::k_policy
            | Rule::k_test
            | Rule::k_use
            | Rule::k_workspace
            | Rule::k_combine
            | Rule::k_default
            | Rule::k_on
            | Rule::k_as
            | Rule::k_reason
            | Rule::k_guidance
            | Rule::k_prefix
            | Rule::k_cwd
            | Rule::k_outside
            | Rule::k_split
            | Rule::k_when
            | Rule::k_in
            | Rule::k_all
            | Rule::k_by
            | Rule::k_else
            | Rule::k_given
            | Rule::k_not
            | Rule::k_grants
            | Rule::k_operation
            | Rule::k_scope
            | Rule::k_if
            | Rule::k_unless
    )
}

struct Builder {
    file: FileId,
    errors: Vec<Diagnostic>,
}

impl Builder {
    fn loc(&self, p: &P) -> Loc {
        let s = p.as_span();
        Loc::new(self.file, s.start(), s.end())
    }

    fn text(&self, p: P) -> Node<String> {
        Node::new(p.as_str().to_string(), self.loc(&p))
    }

    /// A `"..."` literal, unescaped.
    fn string(&mut self, p: P) -> Node<String> {
        let loc = self.loc(&p);
        let raw = p
            .into_inner()
            .filter(not_kw)
            .next()
            .map(|i| i.as_str())
            .unwrap_or("");
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('0') => out.push('\0'),
                Some(c @ ('"' | '\\')) => out.push(c),
                // Unknown escapes stay as written: globs use `\*` for a literal star.
                Some(c) => {
                    out.push('\\');
                    out.push(c);
                }
                None => out.push('\\'),
            }
        }
        Node::new(out, loc)
    }

    /// A name that may be an identifier or a string.
    fn name(&mut self, p: P) -> Node<String> {
        let loc = self.loc(&p);
        match p.into_inner().filter(not_kw).next() {
            Some(i) if i.as_rule() == Rule::string => self.string(i),
            Some(i) => Node::new(i.as_str().to_string(), loc),
            None => Node::new(String::new(), loc),
        }
    }

    fn field(&self, p: P) -> Node<FieldPath> {
        let loc = self.loc(&p);
        Node::new(
            FieldPath(
                p.into_inner()
                    .filter(not_kw)
                    .map(|k| k.as_str().to_string())
                    .collect(),
            ),
            loc,
        )
    }

    fn tool_decl(&mut self, p: P) -> ToolDecl {
        let loc = self.loc(&p);
        let mut inner = p.into_inner().filter(not_kw);
        let name = inner
            .next()
            .map(|n| self.name(n))
            .unwrap_or_else(|| Node::new(String::new(), loc));
        let stmts = inner.map(|s| self.tool_stmt(s)).collect();
        ToolDecl { name, stmts, loc }
    }

    fn tool_stmt(&mut self, p: P) -> Node<ToolStmt> {
        let loc = self.loc(&p);
        let mut stmt = ToolStmt {
            op: Node::new(String::new(), loc),
            field: None,
            split: None,
            cwd: None,
            when: None,
            flags: Vec::new(),
        };
        for part in p.into_inner().filter(not_kw) {
            match part.as_rule() {
                Rule::op_name => stmt.op = self.text(part),
                Rule::field => stmt.field = Some(self.field(part)),
                Rule::split => {
                    stmt.split = part
                        .into_inner()
                        .filter(not_kw)
                        .next()
                        .map(|s| self.string(s))
                }
                Rule::cwd_field => {
                    stmt.cwd = part
                        .into_inner()
                        .filter(not_kw)
                        .next()
                        .map(|f| self.field(f))
                }
                Rule::when => stmt.when = self.when(part),
                Rule::else_cwd => stmt
                    .flags
                    .push(Node::new(StmtFlag::ElseCwd, self.loc(&part))),
                Rule::stmt_flag => {
                    let flag = match part.as_str() {
                        "raw" => StmtFlag::Raw,
                        "json" => StmtFlag::Json,
                        "expand" => StmtFlag::Expand,
                        "shell" => StmtFlag::Shell,
                        _ => StmtFlag::Parent,
                    };
                    stmt.flags.push(Node::new(flag, self.loc(&part)));
                }
                Rule::fs_cond => {
                    let loc = self.loc(&part);
                    let positive = part.as_str().starts_with("if");
                    let kind = match part.into_inner().filter(not_kw).next().map(|k| k.as_str()) {
                        Some("file") => FsKind::File,
                        Some("dir") => FsKind::Dir,
                        _ => FsKind::Exists,
                    };
                    stmt.flags
                        .push(Node::new(StmtFlag::Fs(positive, kind), loc));
                }
                _ => {}
            }
        }
        Node::new(stmt, loc)
    }

    fn when(&mut self, p: P) -> Option<Node<Cond>> {
        let loc = self.loc(&p);
        let mut inner = p.into_inner().filter(not_kw);
        let field = self.field(inner.next()?).node;
        let cond = inner.next()?;
        let node = match cond.as_rule() {
            Rule::cond_eq => Cond::Eq(field, self.value(cond.into_inner().filter(not_kw).next()?)),
            Rule::cond_ne => Cond::Ne(field, self.value(cond.into_inner().filter(not_kw).next()?)),
            Rule::cond_nin => Cond::NotIn(
                field,
                cond.into_inner()
                    .filter(not_kw)
                    .map(|v| self.value(v))
                    .collect(),
            ),
            _ => Cond::In(
                field,
                cond.into_inner()
                    .filter(not_kw)
                    .map(|v| self.value(v))
                    .collect(),
            ),
        };
        Some(Node::new(node, loc))
    }

    fn preset(&mut self, p: P) -> Preset {
        let loc = self.loc(&p);
        let mut inner = p.into_inner().filter(not_kw);
        let name = inner
            .next()
            .map(|n| self.text(n))
            .unwrap_or_else(|| Node::new(String::new(), loc));
        let body = inner.filter_map(|s| self.stmt(s)).collect();
        Preset { name, body, loc }
    }

    fn policy(&mut self, p: P) -> Policy {
        let loc = self.loc(&p);
        let mut inner = p.into_inner().filter(not_kw);
        let name = inner
            .next()
            .map(|n| self.text(n))
            .unwrap_or_else(|| Node::new(String::new(), loc));
        let kind = match inner.next() {
            Some(k) if k.as_rule() == Rule::policy_all => PolicyKind::All(
                k.into_inner()
                    .filter(not_kw)
                    .map(|n| self.text(n))
                    .collect(),
            ),
            Some(k) => PolicyKind::Body(
                k.into_inner()
                    .filter(not_kw)
                    .filter_map(|s| self.stmt(s))
                    .collect(),
            ),
            None => PolicyKind::Body(Vec::new()),
        };
        Policy { name, kind, loc }
    }

    fn stmt(&mut self, p: P) -> Option<Node<Stmt>> {
        let loc = self.loc(&p);
        let stmt = match p.as_rule() {
            Rule::workspace => Stmt::Workspace(self.string(p.into_inner().filter(not_kw).next()?)),
            Rule::combine => {
                let m = p.into_inner().filter(not_kw).next()?;
                let mode = if m.as_str() == "strictest" {
                    Combine::Strictest
                } else {
                    Combine::FirstMatch
                };
                Stmt::Combine(Node::new(mode, self.loc(&m)))
            }
            Rule::default => Stmt::Default(self.effect(p.into_inner().filter(not_kw).next()?)),
            Rule::use_stmt => Stmt::Use(self.text(p.into_inner().filter(not_kw).next()?)),
            Rule::grants => Stmt::Grants(self.string(p.into_inner().filter(not_kw).next()?)),
            Rule::rule => Stmt::Rule(self.rule(p)?),
            _ => return None,
        };
        Some(Node::new(stmt, loc))
    }

    fn effect(&self, p: P) -> Node<Effect> {
        let loc = self.loc(&p);
        // The grammar admits only effect keywords here.
        Node::new(
            Effect::from_keyword(p.as_str()).unwrap_or(Effect::Deny),
            loc,
        )
    }

    fn rule(&mut self, p: P) -> Option<Rule_> {
        let loc = self.loc(&p);
        let mut inner = p.into_inner().filter(not_kw);
        let effect = self.effect(inner.next()?);
        let target_pair = inner.next()?;
        let target = match target_pair.as_rule() {
            Rule::tool_rule => Target::Tools(
                target_pair
                    .into_inner()
                    .filter(not_kw)
                    .map(|t| self.name(t))
                    .collect(),
            ),
            _ => {
                let mut ops = Vec::new();
                let mut on = None;
                let mut matchers = Vec::new();
                for part in target_pair.into_inner().filter(not_kw) {
                    match part.as_rule() {
                        Rule::op_list => {
                            ops = part
                                .into_inner()
                                .filter(not_kw)
                                .map(|o| self.text(o))
                                .collect()
                        }
                        Rule::on_tools => {
                            on = Some(
                                part.into_inner()
                                    .filter(not_kw)
                                    .map(|t| self.name(t))
                                    .collect(),
                            )
                        }
                        Rule::matchers => {
                            matchers = part
                                .into_inner()
                                .filter(not_kw)
                                .map(|m| self.matcher(m))
                                .collect()
                        }
                        _ => {}
                    }
                }
                Target::Ops { ops, on, matchers }
            }
        };
        let mut rule = Rule_ {
            effect,
            target,
            name: None,
            reason: None,
            guidance: None,
            loc,
        };
        for meta in inner {
            let rule_kind = meta.as_rule();
            let meta_loc = self.loc(&meta);
            let Some(arg) = meta.into_inner().filter(not_kw).next() else {
                continue;
            };
            let (slot, value, what) = match rule_kind {
                Rule::rule_name => (&mut rule.name, self.text(arg), "as"),
                Rule::reason => (&mut rule.reason, self.string(arg), "reason"),
                Rule::guidance => (&mut rule.guidance, self.string(arg), "guidance"),
                _ => continue,
            };
            if let Some(prev) = slot.replace(value) {
                self.errors.push(
                    Diagnostic::error(
                        "permc::duplicate-setting",
                        format!("`{what}` is given twice on one rule"),
                    )
                    .label(meta_loc, "given again here")
                    .label(prev.loc, "first given here")
                    .help("keep one; a later one would silently override the first"),
                );
            }
        }
        Some(rule)
    }

    fn matcher(&mut self, p: P) -> Node<Matcher> {
        let loc = self.loc(&p);
        let m = match p.as_rule() {
            Rule::cwd_gate => Matcher::CwdOutsideWorkspace,
            Rule::scope => {
                let mut kind = None;
                let mut path = String::new();
                for part in p.into_inner().filter(not_kw) {
                    match part.as_rule() {
                        Rule::scope_kind => {
                            kind = Some(if part.as_str() == "dir" {
                                FsKind::Dir
                            } else {
                                FsKind::File
                            });
                        }
                        _ => path = self.string(part).node,
                    }
                }
                Matcher::Scope { path, kind }
            }
            Rule::prefix => Matcher::Prefix(
                p.into_inner()
                    .filter(not_kw)
                    .next()
                    .map(|s| self.string(s).node)
                    .unwrap_or_default(),
            ),
            Rule::regex => {
                let raw = p
                    .into_inner()
                    .filter(not_kw)
                    .next()
                    .map(|i| i.as_str())
                    .unwrap_or("");
                // `\/` is how a slash is written inside `/.../`; everything else
                // is handed to the regex engine as written.
                Matcher::Regex(raw.replace("\\/", "/"))
            }
            _ => {
                let s = p
                    .into_inner()
                    .filter(not_kw)
                    .next()
                    .map(|s| self.string(s).node)
                    .unwrap_or_default();
                match s.strip_prefix('!') {
                    Some(rest) => Matcher::Glob {
                        pattern: rest.to_string(),
                        negated: true,
                    },
                    None => Matcher::Glob {
                        pattern: s,
                        negated: false,
                    },
                }
            }
        };
        Node::new(m, loc)
    }

    fn test_block(&mut self, p: P) -> TestBlock {
        let loc = self.loc(&p);
        let mut inner = p.into_inner().filter(not_kw);
        let name = inner
            .next()
            .map(|n| self.text(n))
            .unwrap_or_else(|| Node::new(String::new(), loc));
        let cases = inner.filter_map(|c| self.test_case(c)).collect();
        TestBlock { name, cases, loc }
    }

    fn test_case(&mut self, p: P) -> Option<Node<TestCase>> {
        let loc = self.loc(&p);
        let mut inner = p.into_inner().filter(not_kw);
        let expect = self.effect(inner.next()?);
        let tool = self.name(inner.next()?);
        let input = self.value_of(inner.next()?);
        let mut case = TestCase {
            expect,
            tool,
            input,
            cwd: None,
            by: None,
            given: None,
        };
        for extra in inner {
            let kind = extra.as_rule();
            let extra_loc = self.loc(&extra);
            let Some(arg) = extra.into_inner().filter(not_kw).next() else {
                continue;
            };
            match kind {
                Rule::test_cwd => case.cwd = Some(self.string(arg)),
                Rule::test_by => case.by = Some(self.name(arg)),
                Rule::test_given => case.given = Some(Node::new(self.value_of(arg), extra_loc)),
                _ => {}
            }
        }
        Some(Node::new(case, loc))
    }

    fn value(&mut self, p: P) -> serde_json::Value {
        match p.into_inner().filter(not_kw).next() {
            Some(v) => self.value_of(v),
            None => serde_json::Value::Null,
        }
    }

    fn value_of(&mut self, p: P) -> serde_json::Value {
        use serde_json::Value;
        match p.as_rule() {
            Rule::object => {
                let mut map = serde_json::Map::new();
                for pair in p.into_inner().filter(not_kw) {
                    let mut kv = pair.into_inner().filter(not_kw);
                    let (Some(k), Some(v)) = (kv.next(), kv.next()) else {
                        continue;
                    };
                    let key = if k.as_rule() == Rule::string {
                        self.string(k).node
                    } else {
                        k.as_str().to_string()
                    };
                    map.insert(key, self.value(v));
                }
                Value::Object(map)
            }
            Rule::array => Value::Array(
                p.into_inner()
                    .filter(not_kw)
                    .map(|v| self.value(v))
                    .collect(),
            ),
            Rule::string => Value::String(self.string(p).node),
            Rule::number => {
                let loc = self.loc(&p);
                match serde_json::from_str::<serde_json::Number>(p.as_str()) {
                    Ok(n) => Value::Number(n),
                    Err(_) => {
                        self.errors.push(
                            Diagnostic::error(
                                "permc::syntax",
                                format!("invalid number `{}`", p.as_str()),
                            )
                            .label(loc, "not a number")
                            .help("write a JSON number such as `42` or `1.5`"),
                        );
                        Value::Null
                    }
                }
            }
            Rule::boolean => Value::Bool(p.as_str() == "true"),
            Rule::value => self.value(p),
            _ => Value::Null,
        }
    }
}

type Rule_ = ast::Rule;

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> ast::File {
        match parse(src, FileId(0)) {
            Ok(f) => f,
            Err(e) => panic!("{src}\n{:?}", e),
        }
    }

    fn rules(f: &ast::File) -> Vec<&ast::Rule> {
        match &f.policies[0].kind {
            PolicyKind::Body(stmts) => stmts
                .iter()
                .filter_map(|s| {
                    if let Stmt::Rule(r) = &s.node {
                        Some(r)
                    } else {
                        None
                    }
                })
                .collect(),
            PolicyKind::All(_) => Vec::new(),
        }
    }

    #[test]
    fn every_form_parses_with_spans() {
        let src = r#"
import "elsai"
tool file_read {
  read input.path split ","
  read input.comparison_path when input.mode == "diff"
  write input.path when input.command in ["create", "insert",]
  read input.x when input.y != null
}
tool shell { exec input.command cwd input.work_dir }
tool "mcp__x__y" { network_access }
preset no_env { deny read, write "**/.env" as deny_env reason "r" guidance "g" }
policy agent {
  workspace "/home/user/project"
  combine strictest
  default ask
  use no_env
  use elsai.workspace_only
  deny exec on shell, execute /^\s*rm\b/ as block_rm
  deny exec on shell cwd outside workspace
  interrupt exec on shell prefix "git push"
  require_approval tool Read, "mcp__a__b", elsai.shell
  allow write on file_write "!/workspace/**", "x"
}
policy app = all(agent, elsai.read_only,)
test agent {
  deny file_read { path: "a,b", "n": 1.5, list: [true, false, null], o: {k: "v"} } cwd "/tmp" by deny_env
}
"#;
        let f = ok(src);
        assert_eq!(f.imports[0].node, "elsai");
        assert_eq!(f.tools.len(), 3);
        assert_eq!(f.tools[2].name.node, "mcp__x__y");
        let stmt = &f.tools[0].stmts[1].node;
        assert!(matches!(&stmt.when, Some(w) if matches!(&w.node, Cond::Eq(_, v) if v == "diff")));
        assert_eq!(f.presets[0].name.node, "no_env");
        let rs = rules(&f);
        assert_eq!(rs.len(), 5);
        assert_eq!(rs[0].name.as_ref().unwrap().node, "block_rm");
        assert_eq!(rs[2].effect.node, Effect::Ask);
        assert_eq!(rs[3].effect.node, Effect::Ask);
        match &rs[4].target {
            Target::Ops { matchers, .. } => {
                assert_eq!(
                    matchers[0].node,
                    Matcher::Glob {
                        pattern: "/workspace/**".into(),
                        negated: true
                    }
                );
            }
            Target::Tools(_) => panic!("expected an op rule"),
        }
        // Spans point at the source text.
        let r = rs[0];
        assert!(src[r.loc.start as usize..r.loc.end as usize].starts_with("deny exec on shell"));
        assert!(matches!(&f.policies[1].kind, PolicyKind::All(n) if n.len() == 2));
        let case = &f.tests[0].cases[0].node;
        assert_eq!(case.input["n"], serde_json::json!(1.5));
        assert_eq!(case.cwd.as_ref().unwrap().node, "/tmp");
    }

    #[test]
    fn keywords_end_at_word_boundaries() {
        // `as` must not eat the start of `ask`; `tool` must not eat `tools`.
        let f = ok(
            "policy p {\n deny exec on shell cwd outside workspace\n ask exec on shell prefix \"x\"\n deny tools\n}",
        );
        let rs = rules(&f);
        assert_eq!(rs.len(), 3);
        assert!(rs[0].name.is_none());
        assert!(matches!(&rs[2].target, Target::Ops { ops, .. } if ops[0].node == "tools"));
    }

    #[test]
    fn strings_and_regexes_unescape() {
        let f = ok(r#"policy p { deny read "a\"b\\c\*" deny exec /a\/b\d/ }"#);
        let rs = rules(&f);
        let m = |i: usize| match &rs[i].target {
            Target::Ops { matchers, .. } => matchers[0].node.clone(),
            Target::Tools(_) => panic!(),
        };
        assert_eq!(
            m(0),
            Matcher::Glob {
                pattern: r#"a"b\c\*"#.into(),
                negated: false
            }
        );
        assert_eq!(m(1), Matcher::Regex(r"a/b\d".into()));
    }

    #[test]
    fn syntax_errors_point_at_the_problem() {
        let cases = [
            ("policy p { read \"x\" }", 11),
            ("policy p { deny read \"x }", 21),
            ("tool t { read input. }", 20),
            ("policy p { default maybe }", 19),
        ];
        for (src, at) in cases {
            let e = parse(src, FileId(0)).unwrap_err();
            assert_eq!(e.len(), 1, "{src}");
            assert_eq!(e[0].code, "permc::syntax");
            assert_eq!(
                e[0].loc().map(|l| l.start),
                Some(at),
                "{src}: {}",
                e[0].message
            );
        }
    }
}
