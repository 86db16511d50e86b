//! `permc fmt`: one canonical layout for `.perm` source.
//!
//! The formatter works on the token and line structure of the source, not on
//! the AST, so nothing the user wrote is lost: comments stay where they are,
//! and the inside of strings, regexes and comments is never changed (only
//! trailing whitespace is removed from comments). What it does:
//!
//! - re-indents by brace depth (`{`, `(`, `[`), two spaces a level, and two
//!   more for the continuation lines of a statement (a rule's `reason`,
//!   `guidance`, `as` or matchers on lines of their own);
//! - puts one space between tokens, none before `,`, `:`, `)` and `]`, none
//!   after `(` and `[`, none between a name and `(`, and writes an empty block
//!   as `{}`;
//! - aligns the trailing comments of consecutive lines one space after the
//!   longest code among them;
//! - keeps the user's line breaks, removes trailing whitespace, keeps at most
//!   one blank line in a row, none at the start or end of a block, exactly
//!   one between top-level items (consecutive `import`s may stay together),
//!   and ends the file with one newline.
//!
//! A file that does not parse is refused. As a safety net every result is
//! parsed again and must give the same syntax tree (locations aside) and the
//! same comments; otherwise the formatter refuses with an internal error
//! rather than change what a file means.
//!
//! ```
//! let src = "policy p{deny  read \"**/.env\"   # secrets\n\n\n   default allow}\n";
//! let out = permc::fmt::format(src).unwrap();
//! assert_eq!(out, "policy p {\n  deny read \"**/.env\" # secrets\n\n  default allow\n}\n");
//! assert_eq!(permc::fmt::format(&out).unwrap(), out);
//! assert!(permc::fmt::format("policy p { read }").is_err());
//! ```

use crate::diag::Diagnostic;
use crate::syntax::loc::FileId;
use std::sync::OnceLock;

/// Formats `.perm` source. Errors are diagnostics against [`FileId(0)`]: the
/// syntax errors of a file that does not parse, or an internal error when the
/// formatter would have changed the file's meaning (it never writes then).
pub fn format(src: &str) -> Result<String, Vec<Diagnostic>> {
    let before = crate::syntax::parse(src, FileId(0))?;
    let tokens = lex(src).map_err(|at| {
        vec![internal(&format!(
            "cannot tokenise the source at byte {at}"
        ))]
    })?;
    let out = layout(&tokens);
    // The safety net: same tree, same comments.
    let after = crate::syntax::parse(&out, FileId(0))
        .map_err(|_| vec![internal("the formatted text does not parse")])?;
    if fingerprint(&before) != fingerprint(&after) {
        return Err(vec![internal("formatting would change the syntax tree")]);
    }
    if comments(src) != comments(&out) {
        return Err(vec![internal("formatting would change a comment")]);
    }
    Ok(out)
}

fn internal(what: &str) -> Diagnostic {
    Diagnostic::error(
        "permc::fmt-internal",
        format!("internal formatter error: {what}"),
    )
    .help("the file was left unchanged; please report this with the file attached")
}

/// A rendering of a syntax tree without source locations: two sources that
/// mean the same have the same fingerprint.
pub fn fingerprint(file: &crate::syntax::ast::File) -> String {
    static LOC: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let dbg = format!("{file:?}");
    match LOC.get_or_init(|| {
        regex::Regex::new(r"Loc \{ file: FileId\(\d+\), start: \d+, end: \d+ \}").ok()
    }) {
        Some(re) => re.replace_all(&dbg, "Loc").into_owned(),
        None => dbg,
    }
}

/// The text of every comment of `src`, in order, without trailing whitespace.
/// Returns an empty list when `src` cannot be tokenised.
pub fn comments(src: &str) -> Vec<String> {
    lex(src)
        .map(|toks| {
            toks.into_iter()
                .filter(|t| t.kind == Kind::Comment)
                .map(|t| t.text.trim_end().to_string())
                .collect()
        })
        .unwrap_or_default()
}

// ---- tokens -----------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Names, keywords, numbers, fields (`input.a.b`), `first-match`.
    Word,
    /// A string literal with its quotes, as written (may span lines).
    Str,
    /// A `/regex/` literal as written.
    Regex,
    /// `# ...` to the end of the line.
    Comment,
    /// `{ } ( ) [ ] , : = == !=` and anything else.
    Punct,
    /// A line break outside any literal.
    Newline,
}

#[derive(Debug, Clone)]
struct Token<'a> {
    kind: Kind,
    text: &'a str,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
}

/// Splits source into tokens. Outside strings and comments a `/` always opens
/// a regex literal (the grammar has no other use for it). Fails, with the
/// byte offset, only on an unclosed literal, which a parsed file cannot have.
fn lex(src: &str) -> Result<Vec<Token<'_>>, usize> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let kind = match c {
            b'\n' => {
                i += 1;
                Kind::Newline
            }
            b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                Kind::Comment
            }
            b'"' => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None => return Err(start),
                        Some(b'\\') => i += 2,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                Kind::Str
            }
            b'/' => {
                i += 1;
                loop {
                    match bytes.get(i) {
                        None | Some(b'\n') => return Err(start),
                        Some(b'\\') => {
                            if bytes.get(i + 1) == Some(&b'\n') {
                                return Err(start);
                            }
                            i += 2;
                        }
                        Some(b'/') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                Kind::Regex
            }
            b'=' | b'!' if bytes.get(i + 1) == Some(&b'=') => {
                i += 2;
                Kind::Punct
            }
            _ if is_word_char(c as char) => {
                while i < bytes.len() && is_word_char(bytes[i] as char) {
                    i += 1;
                }
                Kind::Word
            }
            _ => {
                // One character, whatever its UTF-8 length.
                let len = src[i..].chars().next().map_or(1, char::len_utf8);
                i += len;
                Kind::Punct
            }
        };
        let text = src.get(start..i.min(src.len())).ok_or(start)?;
        out.push(Token { kind, text });
    }
    Ok(out)
}

// ---- layout -----------------------------------------------------------------

/// The keywords of the grammar, read from `grammar/perm.pest` itself so the
/// formatter follows the grammar as it grows.
fn keywords() -> &'static Vec<String> {
    static KW: OnceLock<Vec<String>> = OnceLock::new();
    KW.get_or_init(|| {
        let grammar = include_str!("../grammar/perm.pest");
        let Some(start) = grammar.find("keyword = @{") else {
            return Vec::new();
        };
        let rest = &grammar[start..];
        let end = rest.find("~ !ident_char").unwrap_or(rest.len());
        rest[..end]
            .split('"')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    })
}

const EFFECTS: &[&str] = &["allow", "deny", "ask", "interrupt", "require_approval"];
/// The words that can begin a grammar rule, read from `grammar/perm.pest`:
/// `starters("body_stmt")` gives `workspace`, `combine`, ..., and the effects.
fn starters(rule: &str) -> Vec<String> {
    fn body(grammar: &'static str, name: &str) -> Option<&'static str> {
        // A rule is `name = { ... }` (possibly `@{`, `_{`, `${`), on one or more lines.
        let mut offset = 0;
        let mut start = None;
        for line in grammar.split_inclusive('\n') {
            if line
                .split_once('=')
                .is_some_and(|(lhs, _)| lhs.trim() == name)
            {
                start = Some(offset);
                break;
            }
            offset += line.len();
        }
        let rest = &grammar[start?..];
        let open = rest.find('{')?;
        // The matching `}`, skipping string literals.
        let (mut level, mut in_str, mut esc) = (0usize, false, false);
        for (i, c) in rest[open..].char_indices() {
            match c {
                _ if esc => esc = false,
                '\\' if in_str => esc = true,
                '"' => in_str = !in_str,
                '{' if !in_str => level += 1,
                '}' if !in_str => {
                    level -= 1;
                    if level == 0 {
                        return Some(&rest[open + 1..open + i]);
                    }
                }
                _ => {}
            }
        }
        None
    }
    fn first(grammar: &'static str, text: &str, depth: u32, out: &mut Vec<String>) {
        if depth > 8 {
            return;
        }
        let text = text.trim_start();
        // The first element: a parenthesised group, a literal, or a rule name.
        let element = if let Some(inner) = text.strip_prefix('(') {
            let mut level = 1;
            let mut end = inner.len();
            for (i, c) in inner.char_indices() {
                match c {
                    '(' => level += 1,
                    ')' => {
                        level -= 1;
                        if level == 0 {
                            end = i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            &inner[..end]
        } else {
            text.split(['~', ')']).next().unwrap_or("")
        };
        for alt in element.split('|') {
            let alt = alt.trim();
            if alt.starts_with('(') {
                first(grammar, alt, depth + 1, out);
            } else if let Some(lit) = alt.strip_prefix('"') {
                let lit = lit.split('"').next().unwrap_or("");
                if !lit.is_empty() && !out.iter().any(|o| o == lit) {
                    out.push(lit.to_string());
                }
            } else {
                let name = alt
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("");
                if let Some(b) = body(grammar, name).filter(|_| !name.is_empty() && name != "SOI") {
                    first(grammar, b, depth + 1, out);
                }
            }
        }
    }
    let grammar = include_str!("../grammar/perm.pest");
    let mut out = Vec::new();
    if let Some(b) = body(grammar, rule) {
        first(grammar, b, 0, &mut out);
    }
    out
}

/// Cached [`starters`] of the rules the layout needs.
struct Starters {
    body: Vec<String>,
    test: Vec<String>,
    tool_options: Vec<String>,
}

fn grammar_starters() -> &'static Starters {
    static S: OnceLock<Starters> = OnceLock::new();
    S.get_or_init(|| {
        let or = |mut v: Vec<String>, fallback: &[&str]| {
            for f in fallback {
                if !v.iter().any(|x| x == f) {
                    v.push(f.to_string());
                }
            }
            v
        };
        let mut tool_options = starters("stmt_opt");
        tool_options.extend(starters("when"));
        Starters {
            body: or(
                starters("body_stmt"),
                &["workspace", "combine", "default", "use"],
            ),
            test: or(starters("test_case"), EFFECTS),
            tool_options: or(tool_options, &["split", "cwd", "when"]),
        }
    })
}

/// What kind of block a line is directly inside: decides which lines are
/// continuation lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Top,
    Tool,
    Body,
    Test,
    /// Objects, arrays, `all(...)`: plain indentation.
    Value,
}

fn is_opener(t: &Token) -> bool {
    t.kind == Kind::Punct && matches!(t.text, "{" | "(" | "[")
}

fn is_closer(t: &Token) -> bool {
    t.kind == Kind::Punct && matches!(t.text, "}" | ")" | "]")
}

/// One source line: its tokens (a trailing comment included), or none for a
/// blank line.
struct Line<'a> {
    toks: Vec<Token<'a>>,
    /// Indentation, in spaces.
    indent: usize,
    /// Starts a top-level item.
    item_start: bool,
    /// The item keyword of the item it starts.
    item_kw: Option<&'a str>,
    /// The item it starts also ends on this line.
    one_line_item: bool,
    /// The last code token opens a block.
    ends_open: bool,
    /// The first token closes a block.
    starts_close: bool,
    /// Depth 0, outside any item (a comment between items).
    top_free: bool,
    /// Starts a statement of a policy, preset or test block (not a
    /// continuation line): the block's id, and whether it starts with an
    /// effect keyword.
    stmt: Option<(usize, bool)>,
    /// Spaces added after a leading effect keyword to align a run of rules.
    effect_pad: usize,
}

impl Line<'_> {
    fn blank(&self) -> bool {
        self.toks.is_empty()
    }
    fn comment_only(&self) -> bool {
        self.toks.len() == 1 && self.toks[0].kind == Kind::Comment
    }
}

/// Effect keywords are aligned in a run of rules (or test cases) only when
/// every one of them is at most this long (`allow`): padding to
/// `require_approval` would push the rules far right.
const ALIGN_EFFECTS_UP_TO: usize = 5;

fn layout(tokens: &[Token]) -> String {
    let tokens = break_blocks(tokens);
    // Cut into lines at newlines outside literals.
    let mut raw: Vec<Vec<Token>> = vec![Vec::new()];
    for t in &tokens {
        if t.kind == Kind::Newline {
            raw.push(Vec::new());
        } else if let Some(last) = raw.last_mut() {
            last.push(t.clone());
        }
    }
    let mut lines = structure(raw);
    let blank_before = blank_lines(&lines);
    align_effects(&mut lines, &blank_before);

    // Render code, then align trailing comments.
    let mut rendered: Vec<(String, Option<String>, bool)> = Vec::new(); // (code, comment, multiline)
    for (i, line) in lines.iter().enumerate() {
        if line.blank() {
            continue;
        }
        if blank_before[i] && !rendered.is_empty() {
            rendered.push((String::new(), None, false));
        }
        let (code, comment) = render_line(line);
        let multiline = code.contains('\n');
        rendered.push((code, comment, multiline));
    }
    let mut out = String::new();
    let mut i = 0;
    while i < rendered.len() {
        // A run of consecutive lines with code and a trailing comment.
        let mut j = i;
        while j < rendered.len()
            && !rendered[j].0.trim().is_empty()
            && rendered[j].1.is_some()
            && !rendered[j].2
        {
            j += 1;
        }
        if j > i {
            let width = rendered[i..j]
                .iter()
                .map(|r| r.0.chars().count())
                .max()
                .unwrap_or(0);
            for r in &rendered[i..j] {
                let pad = width - r.0.chars().count() + 1;
                out.push_str(&r.0);
                out.extend(std::iter::repeat_n(' ', pad));
                out.push_str(r.1.as_deref().unwrap_or(""));
                out.push('\n');
            }
            i = j;
            continue;
        }
        let r = &rendered[i];
        out.push_str(&r.0);
        if let Some(c) = &r.1 {
            out.push(' ');
            out.push_str(c);
        }
        out.push('\n');
        i += 1;
    }
    // No trailing blank lines; exactly one final newline (none for an empty file).
    let trimmed = out.trim_end_matches('\n').len();
    out.truncate(trimmed);
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// A `{ ... }` block that spans lines gets a line break after its `{` and
/// before its `}` (a comment may stay after the `{`).
fn break_blocks<'a>(tokens: &[Token<'a>]) -> Vec<Token<'a>> {
    let newline = Token {
        kind: Kind::Newline,
        text: "\n",
    };
    let mut line_of = Vec::with_capacity(tokens.len());
    let mut line = 0usize;
    for t in tokens {
        line_of.push(line);
        if t.kind == Kind::Newline {
            line += 1;
        }
    }
    let mut after = vec![false; tokens.len()];
    let mut before = vec![false; tokens.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.kind != Kind::Punct {
            continue;
        }
        match t.text {
            "{" => open.push(i),
            "}" => {
                let Some(o) = open.pop() else { continue };
                if line_of[o] == line_of[i] {
                    continue;
                }
                if tokens
                    .get(o + 1)
                    .is_some_and(|n| n.kind != Kind::Newline && n.kind != Kind::Comment)
                {
                    after[o] = true;
                }
                if i > 0 && tokens[i - 1].kind != Kind::Newline {
                    before[i] = true;
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::with_capacity(tokens.len() + 8);
    for (i, t) in tokens.iter().enumerate() {
        if before[i] {
            out.push(newline.clone());
        }
        out.push(t.clone());
        if after[i] {
            out.push(newline.clone());
        }
    }
    out
}

/// Walks the lines with a stack of open blocks and decides each line's
/// indentation and role.
fn structure(raw: Vec<Vec<Token<'_>>>) -> Vec<Line<'_>> {
    let kws = keywords();
    let mut stack: Vec<(Ctx, usize)> = Vec::new();
    let mut blocks = 0usize;
    let mut item_kw: Option<&str> = None;
    let mut expect_item = true;
    let mut lines: Vec<Line> = Vec::with_capacity(raw.len());
    // Comment lines take the continuation status of the next code line.
    let mut pending_comments: Vec<usize> = Vec::new();
    // The last line that started an item and ended at depth 0.
    let mut last_item_line: Option<usize> = None;
    for toks in raw {
        let depth = stack.len();
        let (ctx, block) = stack.last().copied().unwrap_or((Ctx::Top, 0));
        let mut line = Line {
            toks,
            indent: depth * 2,
            item_start: false,
            item_kw: None,
            one_line_item: false,
            ends_open: false,
            starts_close: false,
            top_free: depth == 0 && expect_item,
            stmt: None,
            effect_pad: 0,
        };
        if line.blank() {
            lines.push(line);
            continue;
        }
        let first = line.toks[0].clone();
        line.starts_close = is_closer(&first);
        if line.comment_only() {
            pending_comments.push(lines.len());
            lines.push(line);
            continue;
        }
        let word = |set: &[&str]| first.kind == Kind::Word && set.contains(&first.text);
        let st = grammar_starters();
        let starts =
            |set: &[String]| first.kind == Kind::Word && set.iter().any(|k| k == first.text);
        // At the top level a line that starts with a keyword starts an item
        // (`all` only continues `policy NAME =`), even when the previous
        // item has no closing brace (`operation NAME`).
        if depth == 0
            && first.kind == Kind::Word
            && first.text != "all"
            && kws.iter().any(|k| k == first.text)
        {
            expect_item = true;
        }
        let continuation = !line.starts_close
            && match ctx {
                Ctx::Top => !expect_item,
                Ctx::Body => !(word(EFFECTS) || starts(&st.body)),
                Ctx::Test => !(word(EFFECTS) || starts(&st.test)),
                Ctx::Tool => {
                    first.kind != Kind::Word
                        || first.text.starts_with("input")
                        || kws.iter().any(|k| k == first.text)
                        || starts(&st.tool_options)
                }
                Ctx::Value => false,
            };
        if matches!(ctx, Ctx::Body | Ctx::Test) && !continuation && !line.starts_close {
            line.stmt = Some((block, word(EFFECTS)));
        }
        let level = if line.starts_close {
            depth.saturating_sub(1)
        } else {
            depth
        };
        line.indent = level * 2 + if continuation { 2 } else { 0 };
        let starts_item = depth == 0 && expect_item;
        for idx in pending_comments.drain(..) {
            if continuation {
                lines[idx].indent += 2;
            }
            if starts_item {
                lines[idx].top_free = true;
            }
        }
        // Track structure through the line's tokens.
        for (ti, t) in line.toks.iter().enumerate() {
            if t.kind == Kind::Comment {
                continue;
            }
            if stack.is_empty() && expect_item {
                expect_item = false;
                item_kw = if t.kind == Kind::Word {
                    Some(t.text)
                } else {
                    None
                };
                if ti == 0 {
                    line.item_start = true;
                    line.item_kw = item_kw;
                }
            }
            if is_opener(t) {
                let kind = if t.text == "{" && stack.is_empty() {
                    match item_kw {
                        Some("tool") => Ctx::Tool,
                        Some("preset" | "policy") => Ctx::Body,
                        Some("test") => Ctx::Test,
                        _ => Ctx::Value,
                    }
                } else {
                    Ctx::Value
                };
                blocks += 1;
                stack.push((kind, blocks));
            } else if is_closer(t) {
                stack.pop();
                if stack.is_empty() {
                    expect_item = true;
                }
            } else if stack.is_empty() && t.kind == Kind::Str && item_kw == Some("import") {
                expect_item = true;
            }
        }
        line.one_line_item = line.item_start && stack.is_empty();
        if let Some(prev) = last_item_line.take() {
            // The previous item was one line only if this line starts the next.
            if !line.item_start {
                lines[prev].one_line_item = false;
            }
        }
        if line.item_start && stack.is_empty() {
            last_item_line = Some(lines.len());
        }
        line.ends_open = line
            .toks
            .iter()
            .rev()
            .find(|t| t.kind != Kind::Comment)
            .is_some_and(is_opener);
        lines.push(line);
    }
    lines
}

/// Pads the effect keywords of a run of rules or test cases to one width:
/// statements of one block, not separated by a blank line or another kind of
/// statement.
fn align_effects(lines: &mut [Line], blank_before: &[bool]) {
    let mut run: Vec<usize> = Vec::new();
    let mut run_block = None;
    let flush = |run: &mut Vec<usize>, lines: &mut [Line]| {
        let width = run
            .iter()
            .map(|&i| lines[i].toks[0].text.len())
            .max()
            .unwrap_or(0);
        if width <= ALIGN_EFFECTS_UP_TO {
            for &i in run.iter() {
                // Never pad an effect that ends its line's code.
                let more = lines[i]
                    .toks
                    .get(1)
                    .is_some_and(|t| t.kind != Kind::Comment);
                if more {
                    lines[i].effect_pad = width - lines[i].toks[0].text.len();
                }
            }
        }
        run.clear();
    };
    for i in 0..lines.len() {
        let Some((block, effect)) = lines[i].stmt else {
            continue;
        };
        if run_block != Some(block) || blank_before[i] || !effect {
            flush(&mut run, lines);
        }
        run_block = Some(block);
        if effect {
            run.push(i);
        }
    }
    flush(&mut run, lines);
}

/// Whether to print one blank line before each line (blank source lines
/// themselves are never printed): where the source had blank lines, unless at
/// the start of the file or of a block, or at the end of a block; and always
/// before a top-level item (or the comments directly above it), except
/// between consecutive imports, and between consecutive one-line items of
/// the same kind, where the source decides.
fn blank_lines(lines: &[Line]) -> Vec<bool> {
    let n = lines.len();
    let mut before = vec![false; n];
    let mut prev_code: Option<usize> = None;
    let mut gap = false;
    for i in 0..n {
        if lines[i].blank() {
            gap = true;
            continue;
        }
        if let Some(p) = prev_code {
            if gap && !lines[p].ends_open && !lines[i].starts_close {
                before[i] = true;
            }
        }
        gap = false;
        prev_code = Some(i);
    }
    let mut prev_item: Option<(Option<&str>, bool)> = None;
    for i in 0..n {
        if !lines[i].item_start {
            continue;
        }
        let this = (lines[i].item_kw, lines[i].one_line_item);
        let grouped = match prev_item {
            Some((kw, one)) => kw == this.0 && ((one && this.1) || kw == Some("import")),
            None => false,
        };
        prev_item = Some(this);
        // The comments directly above the item belong to it.
        let mut g = i;
        while g > 0 && lines[g - 1].comment_only() && lines[g - 1].top_free {
            g -= 1;
        }
        let has_code_before = lines[..g].iter().any(|l| !l.blank());
        let blank_above = g > 0 && lines[g - 1].blank();
        if has_code_before && !blank_above && !grouped {
            before[g] = true;
        }
    }
    before
}

/// The code of a line with canonical spacing, and its trailing comment.
fn render_line(line: &Line) -> (String, Option<String>) {
    let mut code = String::new();
    code.extend(std::iter::repeat_n(' ', line.indent));
    let mut comment = None;
    let mut prev: Option<&Token> = None;
    for t in &line.toks {
        if t.kind == Kind::Comment {
            comment = Some(t.text.trim_end().to_string());
            continue;
        }
        if let Some(p) = prev {
            if space_between(p, t) {
                code.push(' ');
            }
        }
        code.push_str(t.text);
        if prev.is_none() {
            code.extend(std::iter::repeat_n(' ', line.effect_pad));
        }
        prev = Some(t);
    }
    if prev.is_none() {
        // A comment-only line: the comment is the code.
        if let Some(c) = comment.take() {
            code.push_str(&c);
        }
    }
    (code, comment)
}

fn space_between(a: &Token, b: &Token) -> bool {
    let punct = |t: &Token, s: &str| t.kind == Kind::Punct && t.text == s;
    if b.kind == Kind::Punct && matches!(b.text, "," | ":" | ")" | "]") {
        return false;
    }
    if punct(a, "(") || punct(a, "[") {
        return false;
    }
    if punct(b, "(") && a.kind == Kind::Word {
        return false;
    }
    if punct(a, "{") && punct(b, "}") {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn statement_starters_come_from_the_grammar() {
        let body = super::starters("body_stmt");
        for k in [
            "workspace",
            "combine",
            "default",
            "use",
            "allow",
            "deny",
            "ask",
            "interrupt",
            "require_approval",
        ] {
            assert!(body.iter().any(|s| s == k), "{k} missing from {body:?}");
        }
        assert!(!body.iter().any(|s| s == "as"), "{body:?}");
        let options = super::starters("stmt_opt");
        for k in ["split", "cwd"] {
            assert!(
                options.iter().any(|s| s == k),
                "{k} missing from {options:?}"
            );
        }
        assert_eq!(super::starters("when"), ["when"]);
        assert_eq!(super::starters("no_such_rule"), Vec::<String>::new());
    }
}
