//! Splitting a shell command line into the simple commands it runs.
//!
//! A policy must judge every command that a command line runs, so
//! `git status; rm -rf ~` has to be seen as two commands. [`split`] cuts a line
//! into [`Segment`]s and, where it cannot see what will run (a command
//! substitution, a variable used as the command name, an unclosed quote, ...),
//! says so with an [`Opaque`] reason instead of guessing.
//!
//! The splitter follows bash's grammar closely enough for segmentation and is
//! deliberately conservative: whenever its reading might differ from bash's,
//! the segment concerned is marked opaque. Some consequences a policy should
//! know about:
//!
//! - Commands found inside `$(...)`, backticks, `<(...)`, `( ... )` and
//!   `{ ...; }` are reported as extra segments after the segment containing
//!   them (recursively), so a rule denying `rm` also sees `echo $(rm -rf /)`.
//! - A segment that starts with a reserved word (`if`, `then`, `!`, `time`,
//!   `do`, ...) is marked [`Opaque::Unsupported`]; when a command follows the
//!   reserved words, that command is also reported as its own segment.
//! - Words are reported after quote removal only: `$HOME`, globs such as
//!   `*.rs` and `~` are kept as written, since their values are unknown here.
//! - Leading assignments stay in the words (`FOO=1 cmd` gives
//!   `["FOO=1", "cmd"]`); deciding what they mean is the policy's job.

mod lex;

use std::collections::BTreeMap;

use lex::{DqTok, Tok, dq_tok_at, tok_at};

/// One simple command of a shell command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The segment's source text, trimmed of surrounding whitespace (quotes kept).
    pub text: String,
    /// The words after quote removal: `git "sta"'tus'` gives ["git", "status"].
    /// Redirection operators such as `>`, `>>`, `2>&1`, `<` are their own
    /// words (e.g. "2>&1", ">", "/dev/null"). Expansions and substitutions
    /// are kept as written (`$HOME`, `$(date)`). Never empty; for an opaque
    /// segment the words are a best effort.
    pub words: Vec<String>,
    /// Why permc cannot see through this segment, if it cannot (None when
    /// fully understood).
    pub opaque: Option<Opaque>,
}

/// Why a [`Segment`] cannot be fully understood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opaque {
    /// `$(...)` or `` `...` ``: the output of another command becomes part
    /// of this one.
    CommandSubstitution,
    /// `<(...)` or `>(...)`.
    ProcessSubstitution,
    /// A here-document (`<<` or `<<-`).
    HereDoc,
    /// A quote that is never closed; the segment runs to the end of input.
    UnbalancedQuote,
    /// A `( ... )` subshell or `{ ...; }` group.
    Subshell,
    /// `$VAR`, `${...}`, `$1`, ... in the command word, so the command that
    /// runs is unknowable.
    VariableExpansion,
    /// Anything else that is unclear: reserved words, arithmetic, ANSI-C
    /// `$'...'` quoting, brace expansion, a glob in the command word, a
    /// redirection before the command word, a trailing backslash, NUL bytes,
    /// unmatched parentheses, nesting deeper than the splitter follows.
    Unsupported,
}

impl Opaque {
    /// A short lowercase description for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Opaque::CommandSubstitution => "command substitution `$(...)`",
            Opaque::ProcessSubstitution => "process substitution `<(...)`",
            Opaque::HereDoc => "here-document `<<`",
            Opaque::UnbalancedQuote => "unbalanced quote",
            Opaque::Subshell => "subshell or command group `( ... )`",
            Opaque::VariableExpansion => "variable expansion in command position",
            Opaque::Unsupported => "unsupported shell syntax",
        }
    }
}

/// Splits a shell command line into its simple commands.
///
/// Segments come in source order; the commands found inside a substitution
/// or group follow the segment that contains them. Empty commands are
/// dropped, and comments are not part of any segment.
///
/// ```
/// use permc::shell::{split, Opaque};
///
/// let segments = split("git status && echo $(rm -rf /)");
/// assert_eq!(segments.len(), 3);
/// assert_eq!(segments[0].words, ["git", "status"]);
/// assert_eq!(segments[0].opaque, None);
/// // The substitution makes the `echo` opaque...
/// assert_eq!(segments[1].text, "echo $(rm -rf /)");
/// assert_eq!(segments[1].opaque, Some(Opaque::CommandSubstitution));
/// // ...and the command inside it is reported too.
/// assert_eq!(segments[2].words, ["rm", "-rf", "/"]);
///
/// let segments = split("$EDITOR notes.txt");
/// assert_eq!(segments[0].opaque, Some(Opaque::VariableExpansion));
/// ```
pub fn split(command: &str) -> Vec<Segment> {
    split_at_depth(command, 0)
}

/// How deeply substitutions, groups and quotes may nest before the splitter
/// stops following them (and marks what remains [`Opaque::Unsupported`]):
/// this bounds recursion, hence stack use, on hostile input.
const MAX_DEPTH: usize = 32;

/// Stands in a word's skeleton for a character that was quoted or came from
/// an expansion, so that it can never look like an unquoted `{`, `*` or `=`.
const PLACEHOLDER: char = '\u{E000}';

/// The characters bash treats as blanks around words and commands.
const BLANKS: [char; 3] = [' ', '\t', '\n'];

fn split_at_depth(src: &str, depth: usize) -> Vec<Segment> {
    if depth > MAX_DEPTH {
        let text = src.trim_matches(BLANKS);
        if text.is_empty() {
            return Vec::new();
        }
        return vec![make_segment(text, Vec::new(), Some(Opaque::Unsupported))];
    }
    let mut parser = Parser::new(src);
    let out = parser.list(0, Term::Eof, depth);
    parser.finalize(out.segs)
}

fn make_segment(text: &str, words: Vec<String>, mut opaque: Option<Opaque>) -> Segment {
    // bash drops or truncates at NUL bytes depending on how it gets the
    // command, so a NUL-bearing command may not be what we see.
    if opaque.is_none() && text.contains('\0') {
        opaque = Some(Opaque::Unsupported);
    }
    let words = if words.is_empty() {
        vec![text.to_string()]
    } else {
        words
    };
    Segment {
        text: text.to_string(),
        words,
        opaque,
    }
}

/// A finished segment, with the id of the builder that made it so that
/// here-document bodies read later can be attached to it.
struct RawSeg {
    id: Option<usize>,
    seg: Segment,
}

/// A here-document body read at a newline, waiting to be attached to the
/// segment whose `<<` asked for it.
struct Body {
    owner: usize,
    /// The body and its delimiter line, as shown in the owner's text.
    text: String,
    /// Commands run by substitutions inside an unquoted-delimiter body.
    inner: Vec<Segment>,
}

/// A `<<` whose body starts after the next unquoted newline.
struct PendingHereDoc {
    owner: usize,
    delimiter: String,
    strip_tabs: bool,
    /// Bodies expand `$(...)` unless any part of the delimiter was quoted.
    expand: bool,
}

/// What ends a command list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Term {
    Eof,
    /// `)` of `$(...)`, `<(...)` or `( ... )`.
    Paren,
    /// `}` in command position, closing `{ ...; }`.
    Brace,
}

enum ListEnd {
    /// The terminator was found; parsing resumes at this byte.
    Closed(usize),
    /// The input ended first; `Some` if because of an unterminated construct.
    Eof(Option<Opaque>),
}

struct ListOut {
    segs: Vec<RawSeg>,
    end: ListEnd,
}

/// The input ended inside a construct; the reason to report.
struct Unterminated(Opaque);

/// The byte at which to continue, or why the rest of the input is opaque.
type Step = Result<usize, Unterminated>;

#[derive(Debug, Clone, Copy)]
enum Target {
    File,
    HereDocDelimiter { strip_tabs: bool },
}

/// Tracks a command that follows reserved words (`! cmd`, `then cmd`), which
/// is reported as a segment of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Derived {
    None,
    /// The command starts at this word index.
    From(usize),
    /// A reserved word that does not precede a command (`for`, `case`, ...).
    Disabled,
}

/// A word under construction.
struct Word {
    start: usize,
    text: String,
    /// The unquoted literal characters, with [`PLACEHOLDER`] for the rest:
    /// what decides assignments, reserved words, globs and brace expansion.
    skeleton: String,
    quoted: bool,
    /// Contains a parameter expansion or substitution: its value is unknown.
    dynamic: bool,
}

impl Word {
    fn new(start: usize) -> Self {
        Word {
            start,
            text: String::new(),
            skeleton: String::new(),
            quoted: false,
            dynamic: false,
        }
    }
}

/// A segment under construction.
struct SegBuilder {
    id: usize,
    start: Option<usize>,
    end: usize,
    words: Vec<String>,
    word_starts: Vec<usize>,
    word: Option<Word>,
    opaque: Option<Opaque>,
    /// The next word would be the command word (or a reserved word).
    cmd_pos: bool,
    /// A redirection operator is waiting for its target word.
    target: Option<Target>,
    derived: Derived,
    derived_opaque: Option<Opaque>,
    inner: Vec<RawSeg>,
    /// The segment swallows the rest of the input.
    forced: bool,
    /// The last word was a group, after which `}` may close an enclosing
    /// group (`{ { a; } }`, though not `{ { a; } >f }`).
    after_group: bool,
}

impl SegBuilder {
    fn new(id: usize) -> Self {
        SegBuilder {
            id,
            start: None,
            end: 0,
            words: Vec::new(),
            word_starts: Vec::new(),
            word: None,
            opaque: None,
            cmd_pos: true,
            target: None,
            derived: Derived::None,
            derived_opaque: None,
            inner: Vec::new(),
            forced: false,
            after_group: false,
        }
    }

    fn begin(&mut self, at: usize) {
        if self.start.is_none() {
            self.start = Some(at);
        }
    }

    fn reach(&mut self, end: usize) {
        self.end = self.end.max(end);
    }

    /// Records a reason; the first one recorded is the one reported.
    fn mark(&mut self, why: Opaque) {
        if self.opaque.is_none() {
            self.opaque = Some(why);
        }
        if matches!(self.derived, Derived::From(_)) && self.derived_opaque.is_none() {
            self.derived_opaque = Some(why);
        }
    }

    fn word_mut(&mut self, at: usize) -> &mut Word {
        self.begin(at);
        self.word.get_or_insert_with(|| Word::new(at))
    }

    /// Unquoted literal text.
    fn lit(&mut self, at: usize, text: &str) {
        let word = self.word_mut(at);
        word.text.push_str(text);
        word.skeleton.push_str(text);
    }

    /// Quoted or escaped text.
    fn quoted(&mut self, at: usize, text: &str) {
        let word = self.word_mut(at);
        word.text.push_str(text);
        word.skeleton.push(PLACEHOLDER);
        word.quoted = true;
    }

    /// An expansion or substitution, kept as written.
    fn expansion(&mut self, at: usize, text: &str) {
        let word = self.word_mut(at);
        word.text.push_str(text);
        word.skeleton.push(PLACEHOLDER);
        word.dynamic = true;
    }

    fn push_word(&mut self, text: String, start: usize) {
        self.words.push(text);
        self.word_starts.push(start);
    }

    /// Takes over what a scratch builder found while scanning a construct
    /// whose text is kept whole (`${...}`, `$((...))`).
    fn absorb(&mut self, scratch: SegBuilder) {
        if let Some(why) = scratch.opaque {
            self.mark(why);
        }
        self.inner.extend(scratch.inner);
    }
}

struct Parser<'a> {
    src: &'a str,
    next_id: usize,
    pending: Vec<PendingHereDoc>,
    bodies: Vec<Body>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser {
            src,
            next_id: 0,
            pending: Vec::new(),
            bodies: Vec::new(),
        }
    }

    fn new_seg(&mut self) -> SegBuilder {
        let id = self.next_id;
        self.next_id += 1;
        SegBuilder::new(id)
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.src.get(start..end).unwrap_or("")
    }

    fn rest(&self, start: usize) -> &'a str {
        self.src.get(start..).unwrap_or("")
    }

    /// Parses a list of commands from `start` until `term` (or the end).
    fn list(&mut self, start: usize, term: Term, depth: usize) -> ListOut {
        let mut segs = Vec::new();
        if depth > MAX_DEPTH {
            // Too deep to follow: report the rest as one unsupported segment
            // (the containing segments run to the end of input too).
            let text = self.rest(start).trim_matches(BLANKS);
            if !text.is_empty() {
                segs.push(RawSeg {
                    id: None,
                    seg: make_segment(text, Vec::new(), Some(Opaque::Unsupported)),
                });
            }
            return ListOut {
                segs,
                end: ListEnd::Eof(Some(Opaque::Unsupported)),
            };
        }
        let mut seg = self.new_seg();
        let mut pos = start;
        while let Some(lexed) = tok_at(self.src, pos) {
            let (s, e) = (lexed.start, lexed.end);
            let step = match lexed.tok {
                Some(Tok::Blank) => {
                    self.end_word(&mut seg);
                    Ok(e)
                }
                Some(Tok::LineContinuation) => Ok(e),
                Some(Tok::Newline) => {
                    let done = std::mem::replace(&mut seg, self.new_seg());
                    self.finish(done, &mut segs);
                    Ok(self.heredoc_bodies(e, depth))
                }
                Some(Tok::Separator) => {
                    let done = std::mem::replace(&mut seg, self.new_seg());
                    self.finish(done, &mut segs);
                    Ok(e)
                }
                // A comment runs to the end of the line (the newline stays).
                Some(Tok::Hash) if seg.word.is_none() => {
                    Ok(self.rest(e).find('\n').map_or(self.src.len(), |i| e + i))
                }
                Some(Tok::RParen) if term == Term::Paren => {
                    self.finish(seg, &mut segs);
                    return ListOut {
                        segs,
                        end: ListEnd::Closed(e),
                    };
                }
                Some(Tok::RParen) => {
                    // Unmatched, as after a `case` pattern: keep the text,
                    // distrust it, and start afresh after it.
                    self.end_word(&mut seg);
                    seg.begin(s);
                    seg.push_word(")".to_string(), s);
                    seg.reach(e);
                    seg.mark(Opaque::Unsupported);
                    let done = std::mem::replace(&mut seg, self.new_seg());
                    self.finish(done, &mut segs);
                    Ok(e)
                }
                Some(Tok::LParen) => self.paren(&mut seg, s, e, depth),
                Some(Tok::LBrace)
                    if seg.word.is_none()
                        && seg.cmd_pos
                        && seg.target.is_none()
                        && self.delimited(e) =>
                {
                    self.brace_group(&mut seg, s, e, depth)
                }
                Some(Tok::RBrace)
                    if term == Term::Brace
                        && seg.word.is_none()
                        && seg.target.is_none()
                        && (seg.words.is_empty() || seg.after_group)
                        && self.delimited(e) =>
                {
                    self.finish(seg, &mut segs);
                    return ListOut {
                        segs,
                        end: ListEnd::Closed(e),
                    };
                }
                Some(tok @ (Tok::Redirect | Tok::RedirectDup | Tok::HereDoc | Tok::HereString)) => {
                    Ok(self.redirect(&mut seg, tok, s, e))
                }
                Some(tok) => self.part(&mut seg, tok, s, e, depth),
                None => {
                    seg.mark(Opaque::Unsupported);
                    seg.lit(s, self.slice(s, e));
                    seg.reach(e);
                    Ok(e)
                }
            };
            match step {
                Ok(next) => pos = next.max(e),
                Err(Unterminated(why)) => {
                    self.end_word(&mut seg);
                    seg.begin(s);
                    seg.forced = true;
                    if why == Opaque::UnbalancedQuote {
                        // Overrides an earlier reason: the segment's extent
                        // itself is unknown, which matters most.
                        seg.opaque = Some(why);
                    } else {
                        seg.mark(why);
                    }
                    self.finish(seg, &mut segs);
                    return ListOut {
                        segs,
                        end: ListEnd::Eof(Some(why)),
                    };
                }
            }
        }
        self.finish(seg, &mut segs);
        ListOut {
            segs,
            end: ListEnd::Eof(None),
        }
    }

    /// Whether the token at `pos` ends a word (so that a `{` or `}` before
    /// it stands alone).
    fn delimited(&self, mut pos: usize) -> bool {
        loop {
            match tok_at(self.src, pos) {
                None => return true,
                Some(l) if l.tok == Some(Tok::LineContinuation) => pos = l.end,
                Some(l) => {
                    return matches!(
                        l.tok,
                        Some(
                            Tok::Blank
                                | Tok::Newline
                                | Tok::Separator
                                | Tok::LParen
                                | Tok::RParen
                                | Tok::Redirect
                                | Tok::RedirectDup
                                | Tok::HereDoc
                                | Tok::HereString
                        )
                    );
                }
            }
        }
    }

    /// Finishes a word: classifies it (assignment, reserved word, command
    /// word, argument, redirection target) and records what that implies.
    fn end_word(&mut self, seg: &mut SegBuilder) {
        let Some(word) = seg.word.take() else {
            return;
        };
        if let Some(target) = seg.target.take() {
            if let Target::HereDocDelimiter { strip_tabs } = target {
                self.pending.push(PendingHereDoc {
                    owner: seg.id,
                    delimiter: word.text.clone(),
                    strip_tabs,
                    expand: !word.quoted,
                });
            }
            seg.push_word(word.text, word.start);
            return;
        }
        if !seg.cmd_pos {
            if has_brace_expansion(&word.skeleton) {
                seg.mark(Opaque::Unsupported);
            }
            seg.after_group = false;
            seg.push_word(word.text, word.start);
            return;
        }
        if is_assignment(&word.skeleton) {
            seg.push_word(word.text, word.start);
            return;
        }
        if let Some(precedes_command) = reserved_word(&word, seg) {
            seg.mark(Opaque::Unsupported);
            seg.push_word(word.text, word.start);
            if !precedes_command {
                seg.cmd_pos = false;
                seg.derived = Derived::Disabled;
            } else if seg.derived != Derived::Disabled {
                seg.derived = Derived::From(seg.words.len());
                seg.derived_opaque = None;
            }
            return;
        }
        if word.dynamic {
            seg.mark(Opaque::VariableExpansion);
        }
        // `/bin/r? -rf /` or `{rm,-rf,/}` run a command we cannot name.
        if has_glob(&word.skeleton) || has_brace_expansion(&word.skeleton) {
            seg.mark(Opaque::Unsupported);
        }
        seg.cmd_pos = false;
        seg.push_word(word.text, word.start);
    }

    fn finish(&mut self, mut seg: SegBuilder, out: &mut Vec<RawSeg>) {
        self.end_word(&mut seg);
        let Some(start) = seg.start else {
            out.extend(seg.inner);
            return;
        };
        if seg.target.take().is_some() {
            // A redirection operator with no target.
            seg.mark(Opaque::Unsupported);
        }
        let end = if seg.forced {
            self.src.len()
        } else {
            seg.end.max(start)
        };
        let mut text = self.slice(start, end);
        if seg.forced {
            text = text.trim_end_matches(BLANKS);
        }
        let derived = match seg.derived {
            Derived::From(k) if !seg.forced => seg.word_starts.get(k).map(|&from| {
                let words = seg
                    .words
                    .get(k..)
                    .map(<[String]>::to_vec)
                    .unwrap_or_default();
                make_segment(self.slice(from, end), words, seg.derived_opaque)
            }),
            _ => None,
        };
        out.push(RawSeg {
            id: Some(seg.id),
            seg: make_segment(text, seg.words, seg.opaque),
        });
        if let Some(derived) = derived {
            out.push(RawSeg {
                id: None,
                seg: derived,
            });
        }
        out.extend(seg.inner);
    }

    /// Attaches here-document bodies to their segments, giving the final list.
    fn finalize(&mut self, raw: Vec<RawSeg>) -> Vec<Segment> {
        let mut by_owner: BTreeMap<usize, Vec<Body>> = BTreeMap::new();
        for body in std::mem::take(&mut self.bodies) {
            by_owner.entry(body.owner).or_default().push(body);
        }
        let mut out = Vec::with_capacity(raw.len());
        for RawSeg { id, mut seg } in raw {
            let bodies = id.and_then(|id| by_owner.remove(&id)).unwrap_or_default();
            for body in &bodies {
                seg.text.push('\n');
                seg.text.push_str(&body.text);
            }
            if !bodies.is_empty() && seg.opaque.is_none() {
                seg.opaque = Some(Opaque::HereDoc);
            }
            out.push(seg);
            for body in bodies {
                out.extend(body.inner);
            }
        }
        // Never lose text: a body whose owner vanished is reported alone.
        for body in by_owner.into_values().flatten() {
            if !body.text.trim_matches(BLANKS).is_empty() {
                out.push(make_segment(&body.text, Vec::new(), Some(Opaque::HereDoc)));
            }
            out.extend(body.inner);
        }
        out
    }

    /// Reads the bodies of all pending here-documents, starting at `pos`
    /// (just after a newline); returns where the command text resumes.
    fn heredoc_bodies(&mut self, mut pos: usize, depth: usize) -> usize {
        let len = self.src.len();
        for doc in std::mem::take(&mut self.pending) {
            let (body_end, shown_end, next) =
                find_delimiter_line(self.src, pos, &doc.delimiter, doc.strip_tabs)
                    .unwrap_or((len, len, len));
            let inner = if doc.expand {
                heredoc_expansions(self.slice(pos, body_end), depth + 1)
            } else {
                Vec::new()
            };
            self.bodies.push(Body {
                owner: doc.owner,
                text: self.slice(pos, shown_end).to_string(),
                inner,
            });
            pos = next;
        }
        pos
    }

    /// Handles `(`: a subshell in command position, `((...))` arithmetic, or
    /// anything else (function definitions, arrays) which is unsupported.
    fn paren(&mut self, seg: &mut SegBuilder, s: usize, e: usize, depth: usize) -> Step {
        let glued = seg.word.is_some();
        self.end_word(seg);
        let group = seg.cmd_pos && !glued && seg.target.is_none();
        if seg.target.take().is_some() {
            seg.mark(Opaque::Unsupported);
        }
        seg.begin(s);
        let end = if group && self.rest(e).starts_with('(') {
            seg.mark(Opaque::Unsupported);
            self.arith(e + 1, seg, depth + 1)?
        } else if group {
            seg.mark(Opaque::Subshell);
            self.nested_list(e, Term::Paren, seg, depth, Opaque::Subshell)?
        } else {
            seg.mark(Opaque::Unsupported);
            self.nested_list(e, Term::Paren, seg, depth, Opaque::Unsupported)?
        };
        seg.push_word(self.slice(s, end).to_string(), s);
        seg.reach(end);
        // After `name()` a function body follows in command position; after
        // `arr=(...)` a command may follow.
        seg.cmd_pos = !group;
        seg.after_group = group;
        Ok(end)
    }

    fn brace_group(&mut self, seg: &mut SegBuilder, s: usize, e: usize, depth: usize) -> Step {
        seg.begin(s);
        seg.mark(Opaque::Subshell);
        let end = self.nested_list(e, Term::Brace, seg, depth, Opaque::Subshell)?;
        seg.push_word(self.slice(s, end).to_string(), s);
        seg.reach(end);
        seg.cmd_pos = false;
        seg.after_group = true;
        Ok(end)
    }

    /// Parses the command list inside a construct, keeping its segments as
    /// the containing segment's inner segments.
    fn nested_list(
        &mut self,
        start: usize,
        term: Term,
        seg: &mut SegBuilder,
        depth: usize,
        unclosed: Opaque,
    ) -> Step {
        let out = self.list(start, term, depth + 1);
        seg.inner.extend(out.segs);
        match out.end {
            ListEnd::Closed(end) => Ok(end),
            ListEnd::Eof(why) => Err(Unterminated(why.unwrap_or(unclosed))),
        }
    }

    fn redirect(&mut self, seg: &mut SegBuilder, tok: Tok, s: usize, e: usize) -> usize {
        let text = self.slice(s, e);
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        let mut op_start = s;
        if digits == 0
            && seg
                .word
                .as_ref()
                .is_some_and(|w| is_fd_variable(&w.skeleton))
        {
            // `{fd}>file cmd` opens a descriptor and runs `cmd`; the first
            // word is not the command.
            seg.mark(Opaque::Unsupported);
        }
        if digits > 0 && seg.word.is_some() {
            // `"a"2>f`: digits glued to a word are part of it, not an fd.
            seg.lit(s, text.get(..digits).unwrap_or(""));
            op_start = s + digits;
        }
        self.end_word(seg);
        if seg.target.take().is_some() {
            seg.mark(Opaque::Unsupported);
        }
        seg.begin(op_start);
        seg.after_group = false;
        if seg.cmd_pos {
            // `>/dev/null rm -rf /` runs `rm`, but its first word is `>`.
            seg.mark(Opaque::Unsupported);
        }
        seg.push_word(self.slice(op_start, e).to_string(), op_start);
        seg.reach(e);
        match tok {
            Tok::RedirectDup => {
                // `2>&1x` would redirect to a file named `1x`.
                if !self.delimited(e) {
                    seg.mark(Opaque::Unsupported);
                }
            }
            Tok::HereDoc => {
                seg.mark(Opaque::HereDoc);
                seg.target = Some(Target::HereDocDelimiter {
                    strip_tabs: text.ends_with('-'),
                });
            }
            _ => seg.target = Some(Target::File),
        }
        e
    }

    /// Adds one piece of a word (quoting, expansion, literal text).
    fn part(&mut self, seg: &mut SegBuilder, tok: Tok, s: usize, e: usize, depth: usize) -> Step {
        let raw = self.slice(s, e);
        let end = match tok {
            Tok::Dollar if self.rest(e).starts_with("\\\n") => {
                // bash removes `\<newline>` first: `$\<newline>(cmd)` is `$(cmd)`.
                seg.mark(Opaque::Unsupported);
                seg.lit(s, raw);
                e
            }
            Tok::Word | Tok::LBrace | Tok::RBrace | Tok::Hash | Tok::Dollar => {
                seg.lit(s, raw);
                e
            }
            Tok::Escaped => {
                seg.quoted(s, raw.get(1..).unwrap_or(""));
                e
            }
            Tok::TrailingBackslash => {
                seg.mark(Opaque::Unsupported);
                seg.quoted(s, raw);
                e
            }
            Tok::SingleQuoted => {
                seg.quoted(s, raw.get(1..raw.len().saturating_sub(1)).unwrap_or(""));
                e
            }
            Tok::SingleUnterminated | Tok::AnsiCUnterminated | Tok::BackquoteUnterminated => {
                // Best-effort word: the text after the opening quote.
                let skip = match tok {
                    Tok::SingleUnterminated => 1,
                    Tok::AnsiCUnterminated => 2,
                    _ => 0,
                };
                seg.quoted(s, raw.get(skip..).unwrap_or(""));
                return Err(Unterminated(Opaque::UnbalancedQuote));
            }
            Tok::DoubleQuote => {
                seg.quoted(s, "");
                self.dq(e, seg, depth + 1, false)?
            }
            Tok::LocaleQuote => {
                seg.mark(Opaque::Unsupported);
                seg.quoted(s, "");
                self.dq(e, seg, depth + 1, false)?
            }
            Tok::AnsiC => {
                seg.mark(Opaque::Unsupported);
                seg.quoted(s, raw.get(2..raw.len().saturating_sub(1)).unwrap_or(""));
                e
            }
            Tok::Backquoted => self.backquote(seg, s, e, depth, false),
            Tok::CmdSubOpen => self.substitution(seg, s, e, depth, Opaque::CommandSubstitution)?,
            Tok::ProcSubOpen => self.substitution(seg, s, e, depth, Opaque::ProcessSubstitution)?,
            Tok::ArithOpen => self.arith_expansion(seg, s, e, depth)?,
            Tok::DollarBracket => {
                // `$[`: old arithmetic; what follows lexes as ordinary text.
                seg.mark(Opaque::Unsupported);
                seg.expansion(s, raw);
                e
            }
            Tok::ParamOpen => self.param(seg, s, e, depth)?,
            Tok::Var => {
                seg.expansion(s, raw);
                e
            }
            // Structural tokens are handled by the caller; should one get
            // here, keep its text but distrust the segment.
            _ => {
                seg.mark(Opaque::Unsupported);
                seg.lit(s, raw);
                e
            }
        };
        seg.reach(end);
        Ok(end)
    }

    /// Scans a double-quoted string from `pos` (after the `"`), or a whole
    /// here-document body when `heredoc` is set (where `"` is literal).
    fn dq(&mut self, mut pos: usize, seg: &mut SegBuilder, depth: usize, heredoc: bool) -> Step {
        if depth > MAX_DEPTH {
            return Err(Unterminated(Opaque::Unsupported));
        }
        loop {
            let Some(lexed) = dq_tok_at(self.src, pos) else {
                return if heredoc {
                    Ok(pos)
                } else {
                    Err(Unterminated(Opaque::UnbalancedQuote))
                };
            };
            let (s, e) = (lexed.start, lexed.end);
            let raw = self.slice(s, e);
            pos = match lexed.tok {
                Some(DqTok::End) if !heredoc => return Ok(e),
                Some(DqTok::Dollar) if self.rest(e).starts_with("\\\n") => {
                    seg.mark(Opaque::Unsupported);
                    seg.quoted(s, raw);
                    e
                }
                Some(DqTok::End | DqTok::Text | DqTok::Backslash | DqTok::Dollar) => {
                    seg.quoted(s, raw);
                    e
                }
                Some(DqTok::Escaped) => {
                    seg.quoted(s, raw.get(1..).unwrap_or(""));
                    e
                }
                Some(DqTok::LineContinuation) => e,
                Some(DqTok::Backquoted) => self.backquote(seg, s, e, depth, true),
                Some(DqTok::BackquoteUnterminated) => {
                    return Err(Unterminated(Opaque::UnbalancedQuote));
                }
                Some(DqTok::CmdSubOpen) => {
                    self.substitution(seg, s, e, depth, Opaque::CommandSubstitution)?
                }
                Some(DqTok::ArithOpen) => self.arith_expansion(seg, s, e, depth)?,
                Some(DqTok::DollarBracket) => {
                    seg.mark(Opaque::Unsupported);
                    seg.expansion(s, raw);
                    e
                }
                Some(DqTok::ParamOpen) => self.param(seg, s, e, depth)?,
                Some(DqTok::Var) => {
                    seg.expansion(s, raw);
                    e
                }
                None => {
                    seg.mark(Opaque::Unsupported);
                    seg.quoted(s, raw);
                    e
                }
            };
        }
    }

    /// `$(...)` or `<(...)`/`>(...)`: `s..e` is the opening token.
    fn substitution(
        &mut self,
        seg: &mut SegBuilder,
        s: usize,
        e: usize,
        depth: usize,
        why: Opaque,
    ) -> Step {
        seg.mark(why);
        let end = self.nested_list(e, Term::Paren, seg, depth, why)?;
        seg.expansion(s, self.slice(s, end));
        Ok(end)
    }

    /// A complete `` `...` `` token at `s..e`.
    fn backquote(
        &mut self,
        seg: &mut SegBuilder,
        s: usize,
        e: usize,
        depth: usize,
        in_dq: bool,
    ) -> usize {
        seg.mark(Opaque::CommandSubstitution);
        let raw = self.slice(s, e);
        let body = raw.get(1..raw.len().saturating_sub(1)).unwrap_or("");
        let inner = split_at_depth(&unescape_backquoted(body, in_dq), depth + 1);
        seg.inner
            .extend(inner.into_iter().map(|seg| RawSeg { id: None, seg }));
        seg.expansion(s, raw);
        e
    }

    /// `$((...))`: `s..e` is the opening token.
    fn arith_expansion(&mut self, seg: &mut SegBuilder, s: usize, e: usize, depth: usize) -> Step {
        // Arithmetic evaluates variables' contents as expressions, and an
        // array subscript in them can run a command substitution.
        seg.mark(Opaque::Unsupported);
        let end = self.arith(e, seg, depth + 1)?;
        seg.expansion(s, self.slice(s, end));
        Ok(end)
    }

    /// Finds the `))` closing an arithmetic expression that starts at `pos`,
    /// collecting the substitutions inside it. Its text is not a command, so
    /// it is not split (`<<` there is a shift, not a here-document).
    fn arith(&mut self, mut pos: usize, seg: &mut SegBuilder, depth: usize) -> Step {
        if depth > MAX_DEPTH {
            return Err(Unterminated(Opaque::Unsupported));
        }
        let mut scratch = self.new_seg();
        let mut open = 0usize;
        let result = loop {
            let Some(lexed) = tok_at(self.src, pos) else {
                break Err(Unterminated(Opaque::Unsupported));
            };
            let (s, e) = (lexed.start, lexed.end);
            pos = match lexed.tok {
                Some(Tok::LParen | Tok::ProcSubOpen) => {
                    open += 1;
                    e
                }
                Some(Tok::RParen) if open > 0 => {
                    open -= 1;
                    e
                }
                Some(Tok::RParen) if self.rest(e).starts_with(')') => break Ok(e + 1),
                // `$((a)+b)` is not arithmetic after all; don't guess.
                Some(Tok::RParen) => break Err(Unterminated(Opaque::Unsupported)),
                Some(tok) if quotes_or_expands(tok) => {
                    match self.part(&mut scratch, tok, s, e, depth) {
                        Ok(next) => next,
                        Err(u) => break Err(u),
                    }
                }
                _ => e,
            };
        };
        seg.absorb(scratch);
        result
    }

    /// `${...}`: `s..e` is the opening token. Quotes and nested expansions
    /// are skipped whole; the first other `}` ends it.
    fn param(&mut self, seg: &mut SegBuilder, s: usize, e: usize, depth: usize) -> Step {
        let depth = depth + 1;
        if depth > MAX_DEPTH {
            return Err(Unterminated(Opaque::Unsupported));
        }
        let mut scratch = self.new_seg();
        let mut pos = e;
        let result = loop {
            let Some(lexed) = tok_at(self.src, pos) else {
                break Err(Unterminated(Opaque::Unsupported));
            };
            let (ts, te) = (lexed.start, lexed.end);
            pos = match lexed.tok {
                // bash does not pair bare braces here: in `${x:-{a};b }` the
                // first `}` closes, and `;b }` is another command.
                Some(Tok::RBrace) => break Ok(te),
                Some(tok) if quotes_or_expands(tok) => {
                    match self.part(&mut scratch, tok, ts, te, depth) {
                        Ok(next) => next,
                        Err(u) => break Err(u),
                    }
                }
                _ => te,
            };
        };
        seg.absorb(scratch);
        let end = result?;
        if param_evaluates_code(self.slice(e, end.saturating_sub(1))) {
            seg.mark(Opaque::Unsupported);
        }
        seg.expansion(s, self.slice(s, end));
        Ok(end)
    }
}

/// Whether a `${...}` (given its contents) may evaluate a variable's value
/// as code: arithmetic (array subscripts, substring offsets), indirection
/// (`${!x}`, whose target may carry a subscript) and prompt expansion
/// (`${x@P}`) all run command substitutions found in a value, so
/// `x='a[$(rm -rf ~)]'; echo ${arr[x]}` runs `rm`. Only forms known to be
/// inert pass.
fn param_evaluates_code(contents: &str) -> bool {
    let contents = contents.replace("\\\n", "");
    let mut rest = contents.as_str();
    let mut indirect = false;
    if let Some(r) = rest.strip_prefix('#').filter(|r| !r.is_empty()) {
        rest = r;
    } else if let Some(r) = rest.strip_prefix('!').filter(|r| !r.is_empty()) {
        indirect = true;
        rest = r;
    }
    let name_len = match rest.chars().next() {
        Some(c) if c == '_' || c.is_ascii_alphabetic() => rest
            .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
            .unwrap_or(rest.len()),
        Some(c) if c.is_ascii_digit() => rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len()),
        Some('@' | '*' | '#' | '?' | '$' | '!' | '-') => 1,
        _ => return true,
    };
    rest = rest.get(name_len..).unwrap_or("");
    let mut lists_all = false;
    if let Some(r) = rest.strip_prefix('[') {
        let Some(close) = r.find(']') else {
            return true;
        };
        let subscript = r.get(..close).unwrap_or("");
        lists_all = matches!(subscript, "@" | "*");
        if !lists_all && !is_literal_arithmetic(subscript) {
            return true;
        }
        rest = r.get(close + 1..).unwrap_or("");
    }
    if indirect {
        // Only `${!prefix*}`, `${!prefix@}` and `${!arr[@]}` list names.
        return !(matches!(rest, "*" | "@") || (lists_all && rest.is_empty()));
    }
    let Some(op) = rest.chars().next() else {
        return false;
    };
    match op {
        ':' => {
            let after = rest.get(1..).unwrap_or("");
            // `:-` `:=` `:+` `:?` are defaults; anything else is a substring,
            // whose offset and length are arithmetic.
            !(after.starts_with(['-', '=', '+', '?'])
                || after.split(':').all(is_literal_arithmetic))
        }
        '-' | '=' | '+' | '?' | '#' | '%' | '/' | '^' | ',' => false,
        '@' => !matches!(
            rest,
            "@Q" | "@E" | "@A" | "@a" | "@U" | "@u" | "@L" | "@K" | "@k"
        ),
        _ => true,
    }
}

/// A non-empty integer literal, possibly signed and spaced: safe to evaluate.
fn is_literal_arithmetic(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || c == '-' || c == ' ')
}

/// Tokens that matter while looking for the end of `${...}` or `$((...))`:
/// quotes (which hide closing characters) and nested expansions (bash runs
/// even `<(...)` inside an unquoted `${x:-...}`, and `$\<newline>(` is `$(`).
fn quotes_or_expands(tok: Tok) -> bool {
    matches!(
        tok,
        Tok::ProcSubOpen
            | Tok::Dollar
            | Tok::Escaped
            | Tok::TrailingBackslash
            | Tok::SingleQuoted
            | Tok::SingleUnterminated
            | Tok::DoubleQuote
            | Tok::LocaleQuote
            | Tok::AnsiC
            | Tok::AnsiCUnterminated
            | Tok::Backquoted
            | Tok::BackquoteUnterminated
            | Tok::CmdSubOpen
            | Tok::ArithOpen
            | Tok::DollarBracket
            | Tok::ParamOpen
            | Tok::Var
    )
}

/// Collects the commands run by substitutions in a here-document body.
fn heredoc_expansions(body: &str, depth: usize) -> Vec<Segment> {
    if depth > MAX_DEPTH {
        return Vec::new();
    }
    let mut parser = Parser::new(body);
    let mut scratch = parser.new_seg();
    // An unterminated substitution in the body still leaves what was found
    // in `scratch`; the owning segment is opaque either way.
    let _ = parser.dq(0, &mut scratch, depth, true);
    let raw = std::mem::take(&mut scratch.inner);
    parser.finalize(raw)
}

/// Finds a here-document's delimiter line at or after `from`. Returns the
/// start of that line (end of the body), its end without the newline, and
/// where the input resumes; `None` if the input ends first.
fn find_delimiter_line(
    src: &str,
    from: usize,
    delimiter: &str,
    strip_tabs: bool,
) -> Option<(usize, usize, usize)> {
    let mut line_start = from;
    loop {
        let rest = src.get(line_start..).filter(|r| !r.is_empty())?;
        let line_end = rest.find('\n').map_or(src.len(), |i| line_start + i);
        let line = src.get(line_start..line_end)?;
        let line = if strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        if line == delimiter {
            return Some((line_start, line_end, (line_end + 1).min(src.len())));
        }
        if line_end >= src.len() {
            return None;
        }
        line_start = line_end + 1;
    }
}

/// Undoes the backslash escapes that backticks add to their contents.
fn unescape_backquoted(body: &str, in_dq: bool) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && (matches!(next, '$' | '`' | '\\') || (in_dq && next == '"'))
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// `NAME=` or `NAME+=` at the start of a word's skeleton.
fn is_assignment(skeleton: &str) -> bool {
    let mut chars = skeleton.chars();
    if !chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
    {
        return false;
    }
    for c in chars.by_ref() {
        match c {
            '=' => return true,
            '+' => return chars.next() == Some('='),
            c if c == '_' || c.is_ascii_alphanumeric() => {}
            _ => return false,
        }
    }
    false
}

/// If the word is a reserved word in command position: whether a command
/// follows it in the same segment (`! cmd`, `then cmd`) or not (`for`, `fi`).
fn reserved_word(word: &Word, seg: &SegBuilder) -> Option<bool> {
    if word.quoted || word.skeleton != word.text {
        return None;
    }
    match word.text.as_str() {
        "if" | "then" | "elif" | "else" | "while" | "until" | "do" | "!" | "time" => Some(true),
        // `time -p cmd`
        "-p" if seg.words.last().is_some_and(|w| w == "time")
            && seg.derived == Derived::From(seg.words.len()) =>
        {
            Some(true)
        }
        "fi" | "done" | "esac" | "case" | "for" | "select" | "function" | "in" | "coproc"
        | "[[" | "]]" | "{" | "}" => Some(false),
        _ => None,
    }
}

/// `{name}`, which glued to a redirection operator names a descriptor.
fn is_fd_variable(skeleton: &str) -> bool {
    skeleton
        .strip_prefix('{')
        .and_then(|rest| rest.strip_suffix('}'))
        .is_some_and(|name| is_assignment(&format!("{name}=")))
}

/// An unquoted glob character (`*`, `?`, or a `[...]` class).
fn has_glob(skeleton: &str) -> bool {
    skeleton.contains(['*', '?'])
        || skeleton
            .find('[')
            .and_then(|open| skeleton.get(open..))
            .is_some_and(|rest| rest.contains(']'))
}

/// An unquoted `{...,...}` or `{a..b}` that bash would expand into several
/// words. Checked on the widest `{...}` span, which over-approximates.
fn has_brace_expansion(skeleton: &str) -> bool {
    let (Some(open), Some(close)) = (skeleton.find('{'), skeleton.rfind('}')) else {
        return false;
    };
    skeleton
        .get(open..close)
        .is_some_and(|inside| inside.contains(',') || inside.contains(".."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use Opaque::{
        CommandSubstitution as Cs, HereDoc as Hd, ProcessSubstitution as Ps, Subshell as Sub,
        UnbalancedQuote as Uq, Unsupported as Un, VariableExpansion as Ve,
    };

    /// An expected segment: text, words, reason.
    type Want = (&'static str, &'static [&'static str], Option<Opaque>);

    fn check(input: &str, want: &[Want]) {
        let got = split(input);
        let want: Vec<Segment> = want
            .iter()
            .map(|(text, words, opaque)| Segment {
                text: text.to_string(),
                words: words.iter().map(|w| w.to_string()).collect(),
                opaque: *opaque,
            })
            .collect();
        assert_eq!(got, want, "splitting {input:?}");
    }

    fn check_all(cases: &[(&str, &[Want])]) {
        for (input, want) in cases {
            check(input, want);
        }
    }

    #[test]
    #[rustfmt::skip]
    fn separators() {
        check_all(&[
            ("git status; rm -rf ~", &[("git status", &["git", "status"], None), ("rm -rf ~", &["rm", "-rf", "~"], None)]),
            ("a && b || c | d & e", &[("a", &["a"], None), ("b", &["b"], None), ("c", &["c"], None), ("d", &["d"], None), ("e", &["e"], None)]),
            ("a |& b ;& c", &[("a", &["a"], None), ("b", &["b"], None), ("c", &["c"], None)]),
            ("a;;b", &[("a", &["a"], None), ("b", &["b"], None)]),
            ("a;", &[("a", &["a"], None)]),
            ("a &", &[("a", &["a"], None)]),
            ("  \n\t ls  ", &[("ls", &["ls"], None)]),
            (";", &[]),
            ("", &[]),
            ("a\nb", &[("a", &["a"], None), ("b", &["b"], None)]),
            ("a &&\nb", &[("a", &["a"], None), ("b", &["b"], None)]),
            ("cat f | grep \"x|y\" | wc -l", &[("cat f", &["cat", "f"], None), ("grep \"x|y\"", &["grep", "x|y"], None), ("wc -l", &["wc", "-l"], None)]),
            // `\r` is a word character to bash, not a blank.
            ("ls\r\nrm x", &[("ls\r", &["ls\r"], None), ("rm x", &["rm", "x"], None)]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn quoting_and_escapes() {
        check_all(&[
            (r#"echo "a;b" 'c|d'"#, &[(r#"echo "a;b" 'c|d'"#, &["echo", "a;b", "c|d"], None)]),
            (r"echo a\;b", &[(r"echo a\;b", &["echo", "a;b"], None)]),
            (r#"g"i"t st'atus'"#, &[(r#"g"i"t st'atus'"#, &["git", "status"], None)]),
            (r#"echo a"b"'c'"#, &[(r#"echo a"b"'c'"#, &["echo", "abc"], None)]),
            (r#"echo "" ''"#, &[(r#"echo "" ''"#, &["echo", "", ""], None)]),
            (r#"echo "a\"b" 'a\'"#, &[(r#"echo "a\"b" 'a\'"#, &["echo", "a\"b", "a\\"], None)]),
            (r#"echo "a\$b\`c\x""#, &[(r#"echo "a\$b\`c\x""#, &["echo", r"a$b`c\x"], None)]),
            (r"echo '$(rm)' \$HOME", &[(r"echo '$(rm)' \$HOME", &["echo", "$(rm)", "$HOME"], None)]),
            ("ls \\\n  -la", &[("ls \\\n  -la", &["ls", "-la"], None)]),
            ("ec\\\nho \"a\\\nb\"", &[("ec\\\nho \"a\\\nb\"", &["echo", "ab"], None)]),
            ("echo 'a\nb'; ls", &[("echo 'a\nb'", &["echo", "a\nb"], None), ("ls", &["ls"], None)]),
            ("bash -c 'rm -rf /'", &[("bash -c 'rm -rf /'", &["bash", "-c", "rm -rf /"], None)]),
            (r"echo a\ b", &[(r"echo a\ b", &["echo", "a b"], None)]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn comments() {
        check_all(&[
            ("ls # rm -rf /", &[("ls", &["ls"], None)]),
            ("# only a comment\n", &[]),
            ("echo hi # c; rm x\nls", &[("echo hi", &["echo", "hi"], None), ("ls", &["ls"], None)]),
            ("echo a#b", &[("echo a#b", &["echo", "a#b"], None)]),
            (r##"echo "x"#y; z"##, &[(r##"echo "x"#y"##, &["echo", "x#y"], None), ("z", &["z"], None)]),
            ("echo '#'", &[("echo '#'", &["echo", "#"], None)]),
            ("echo $#", &[("echo $#", &["echo", "$#"], None)]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn redirections() {
        check_all(&[
            ("ls 2>&1 | grep x", &[("ls 2>&1", &["ls", "2>&1"], None), ("grep x", &["grep", "x"], None)]),
            ("cmd &>/dev/null", &[("cmd &>/dev/null", &["cmd", "&>", "/dev/null"], None)]),
            ("cmd &>>f", &[("cmd &>>f", &["cmd", "&>>", "f"], None)]),
            ("echo x >| f", &[("echo x >| f", &["echo", "x", ">|", "f"], None)]),
            ("echo x >&2", &[("echo x >&2", &["echo", "x", ">&2"], None)]),
            ("cmd 2>/dev/null", &[("cmd 2>/dev/null", &["cmd", "2>", "/dev/null"], None)]),
            ("cat < in >> out", &[("cat < in >> out", &["cat", "<", "in", ">>", "out"], None)]),
            // Digits glued to a word belong to it, not to the operator.
            (r#"echo "a"2>&1"#, &[(r#"echo "a"2>&1"#, &["echo", "a2", ">&1"], None)]),
            ("echo x 2 >f", &[("echo x 2 >f", &["echo", "x", "2", ">", "f"], None)]),
            (r#"cat <<<"hi there""#, &[(r#"cat <<<"hi there""#, &["cat", "<<<", "hi there"], None)]),
            // A redirection before the command word hides the command.
            (">/dev/null rm -rf /", &[(">/dev/null rm -rf /", &[">", "/dev/null", "rm", "-rf", "/"], Some(Un))]),
            ("echo >", &[("echo >", &["echo", ">"], Some(Un))]),
            ("echo > ; ls", &[("echo >", &["echo", ">"], Some(Un)), ("ls", &["ls"], None)]),
            ("echo 2>&1x", &[("echo 2>&1x", &["echo", "2>&1", "x"], Some(Un))]),
            // A named descriptor: `rm` is the command, not `{fd}`.
            ("{fd}>/dev/null rm -rf /", &[("{fd}>/dev/null rm -rf /", &["{fd}", ">", "/dev/null", "rm", "-rf", "/"], Some(Un))]),
            ("echo {x}", &[("echo {x}", &["echo", "{x}"], None)]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn substitutions() {
        check_all(&[
            ("echo $(rm -rf /)", &[("echo $(rm -rf /)", &["echo", "$(rm -rf /)"], Some(Cs)), ("rm -rf /", &["rm", "-rf", "/"], None)]),
            ("echo `rm -rf /`", &[("echo `rm -rf /`", &["echo", "`rm -rf /`"], Some(Cs)), ("rm -rf /", &["rm", "-rf", "/"], None)]),
            (r#"echo "$(rm -rf /)""#, &[(r#"echo "$(rm -rf /)""#, &["echo", "$(rm -rf /)"], Some(Cs)), ("rm -rf /", &["rm", "-rf", "/"], None)]),
            (r#"echo "`rm x`""#, &[(r#"echo "`rm x`""#, &["echo", "`rm x`"], Some(Cs)), ("rm x", &["rm", "x"], None)]),
            ("echo $(echo $(rm -rf /))", &[
                ("echo $(echo $(rm -rf /))", &["echo", "$(echo $(rm -rf /))"], Some(Cs)),
                ("echo $(rm -rf /)", &["echo", "$(rm -rf /)"], Some(Cs)),
                ("rm -rf /", &["rm", "-rf", "/"], None),
            ]),
            (r"echo `echo \`rm -rf /\``", &[
                (r"echo `echo \`rm -rf /\``", &["echo", r"`echo \`rm -rf /\``"], Some(Cs)),
                ("echo `rm -rf /`", &["echo", "`rm -rf /`"], Some(Cs)),
                ("rm -rf /", &["rm", "-rf", "/"], None),
            ]),
            (r#"echo "$(echo ")")""#, &[(r#"echo "$(echo ")")""#, &["echo", r#"$(echo ")")"#], Some(Cs)), (r#"echo ")""#, &["echo", ")"], None)]),
            ("x=$(rm -rf /)", &[("x=$(rm -rf /)", &["x=$(rm -rf /)"], Some(Cs)), ("rm -rf /", &["rm", "-rf", "/"], None)]),
            ("echo ${x:-$(rm -rf /)}", &[("echo ${x:-$(rm -rf /)}", &["echo", "${x:-$(rm -rf /)}"], Some(Cs)), ("rm -rf /", &["rm", "-rf", "/"], None)]),
            ("$(rm) x", &[("$(rm) x", &["$(rm)", "x"], Some(Cs)), ("rm", &["rm"], None)]),
            ("diff <(ls a) <(ls b)", &[("diff <(ls a) <(ls b)", &["diff", "<(ls a)", "<(ls b)"], Some(Ps)), ("ls a", &["ls", "a"], None), ("ls b", &["ls", "b"], None)]),
            ("tee >(rm x)", &[("tee >(rm x)", &["tee", ">(rm x)"], Some(Ps)), ("rm x", &["rm", "x"], None)]),
            // `\$(` is not a substitution, and `(` mid-command is not bash.
            (r"echo \$(rm)", &[(r"echo \$(rm)", &["echo", "$", "(rm)"], Some(Un)), ("rm", &["rm"], None)]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn variables() {
        check_all(&[
            ("$CMD -x", &[("$CMD -x", &["$CMD", "-x"], Some(Ve))]),
            (r#""$CMD" x"#, &[(r#""$CMD" x"#, &["$CMD", "x"], Some(Ve))]),
            ("${CMD} x", &[("${CMD} x", &["${CMD}", "x"], Some(Ve))]),
            ("/opt/$V/bin/tool", &[("/opt/$V/bin/tool", &["/opt/$V/bin/tool"], Some(Ve))]),
            ("echo $HOME", &[("echo $HOME", &["echo", "$HOME"], None)]),
            (r#"echo "$HOME" ${x:-y} $1"#, &[(r#"echo "$HOME" ${x:-y} $1"#, &["echo", "$HOME", "${x:-y}", "$1"], None)]),
            ("FOO=1 cmd", &[("FOO=1 cmd", &["FOO=1", "cmd"], None)]),
            ("FOO=$BAR A+=x cmd", &[("FOO=$BAR A+=x cmd", &["FOO=$BAR", "A+=x", "cmd"], None)]),
            ("FOO=1 $CMD", &[("FOO=1 $CMD", &["FOO=1", "$CMD"], Some(Ve))]),
            ("$X=1 cmd", &[("$X=1 cmd", &["$X=1", "cmd"], Some(Ve))]),
            (r#""F"OO=1 cmd"#, &[(r#""F"OO=1 cmd"#, &["FOO=1", "cmd"], None)]),
            // bash removes `\<newline>` before anything else, even after `$`.
            ("$\\\nCMD", &[("$\\\nCMD", &["$CMD"], Some(Un))]),
            ("echo \"$\\\n(rm x)\"", &[("echo \"$\\\n(rm x)\"", &["echo", "$(rm x)"], Some(Un))]),
            ("echo $HO\\\nME", &[("echo $HO\\\nME", &["echo", "$HOME"], None)]),
            ("echo ${x:-$\\\n(rm)}", &[("echo ${x:-$\\\n(rm)}", &["echo", "${x:-$\\\n(rm)}"], Some(Un))]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn parameter_expansions_that_evaluate_code() {
        // Arithmetic, indirection and prompt expansion evaluate a variable's
        // value, and an array subscript in it runs a command substitution.
        check_all(&[
            ("x='b[$(rm -rf ~)]'; echo ${arr[x]}", &[("x='b[$(rm -rf ~)]'", &["x=b[$(rm -rf ~)]"], None), ("echo ${arr[x]}", &["echo", "${arr[x]}"], Some(Un))]),
            (r#"echo "${arr[$i]}""#, &[(r#"echo "${arr[$i]}""#, &["echo", "${arr[$i]}"], Some(Un))]),
            ("echo ${y:x} ", &[("echo ${y:x}", &["echo", "${y:x}"], Some(Un))]),
            ("echo ${y:1:n}", &[("echo ${y:1:n}", &["echo", "${y:1:n}"], Some(Un))]),
            ("echo ${y[@]:n}", &[("echo ${y[@]:n}", &["echo", "${y[@]:n}"], Some(Un))]),
            ("echo ${!x}", &[("echo ${!x}", &["echo", "${!x}"], Some(Un))]),
            ("echo ${x@P}", &[("echo ${x@P}", &["echo", "${x@P}"], Some(Un))]),
            ("echo ${$(rm)}", &[("echo ${$(rm)}", &["echo", "${$(rm)}"], Some(Cs)), ("rm", &["rm"], None)]),
            // Inert forms stay understood.
            (
                "echo ${arr[0]} ${arr[-1]} ${arr[@]} ${#arr[*]} ${!arr[@]} ${!pre*} ${y:0:7} ${y: -2}",
                &[(
                    "echo ${arr[0]} ${arr[-1]} ${arr[@]} ${#arr[*]} ${!arr[@]} ${!pre*} ${y:0:7} ${y: -2}",
                    &["echo", "${arr[0]}", "${arr[-1]}", "${arr[@]}", "${#arr[*]}", "${!arr[@]}", "${!pre*}", "${y:0:7}", "${y: -2}"],
                    None,
                )],
            ),
            (
                "echo ${x@Q} ${x^^} ${x/a/b} ${x%.rs} ${#x} ${#} ${!} ${1} ${x:=d} ${x+a}",
                &[(
                    "echo ${x@Q} ${x^^} ${x/a/b} ${x%.rs} ${#x} ${#} ${!} ${1} ${x:=d} ${x+a}",
                    &["echo", "${x@Q}", "${x^^}", "${x/a/b}", "${x%.rs}", "${#x}", "${#}", "${!}", "${1}", "${x:=d}", "${x+a}"],
                    None,
                )],
            ),
            // bash runs a process substitution even inside `${x:-...}`.
            ("echo ${x:-<(rm x)}", &[("echo ${x:-<(rm x)}", &["echo", "${x:-<(rm x)}"], Some(Ps)), ("rm x", &["rm", "x"], None)]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn unbalanced_and_unterminated() {
        check_all(&[
            (r#"echo "unterminated"#, &[(r#"echo "unterminated"#, &["echo", "unterminated"], Some(Uq))]),
            ("ls; echo 'a; rm x", &[("ls", &["ls"], None), ("echo 'a; rm x", &["echo", "a; rm x"], Some(Uq))]),
            ("echo `ls; rm", &[("echo `ls; rm", &["echo", "`ls; rm"], Some(Uq))]),
            ("echo $'a; rm", &[("echo $'a; rm", &["echo", "a; rm"], Some(Uq))]),
            (r#"echo $(ls "x; rm)"#, &[(r#"echo $(ls "x; rm)"#, &["echo"], Some(Uq)), (r#"ls "x; rm)"#, &["ls", "x; rm)"], Some(Uq))]),
            ("echo $(ls", &[("echo $(ls", &["echo"], Some(Cs)), ("ls", &["ls"], None)]),
            ("(ls", &[("(ls", &["(ls"], Some(Sub)), ("ls", &["ls"], None)]),
            ("echo ${x", &[("echo ${x", &["echo"], Some(Un))]),
            // bash closes `${` at the first bare `}`, without pairing braces.
            ("echo ${x:-{a};echo PWNED }", &[("echo ${x:-{a}", &["echo", "${x:-{a}"], None), ("echo PWNED }", &["echo", "PWNED", "}"], None)]),
            (r#"echo ${x:-'}'} "${x:-\}}""#, &[(r#"echo ${x:-'}'} "${x:-\}}""#, &["echo", "${x:-'}'}", r"${x:-\}}"], None)]),
            (r"echo a\", &[(r"echo a\", &["echo", r"a\"], Some(Un))]),
            ("echo a) rm x", &[("echo a)", &["echo", "a", ")"], Some(Un)), ("rm x", &["rm", "x"], None)]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn here_documents() {
        check_all(&[
            ("cat <<EOF\nhi; rm x\nEOF\nls", &[("cat <<EOF\nhi; rm x\nEOF", &["cat", "<<", "EOF"], Some(Hd)), ("ls", &["ls"], None)]),
            ("cat <<'EOF'\n$(rm x)\nEOF", &[("cat <<'EOF'\n$(rm x)\nEOF", &["cat", "<<", "EOF"], Some(Hd))]),
            ("cat <<EOF\n$(rm -rf /)\nEOF", &[("cat <<EOF\n$(rm -rf /)\nEOF", &["cat", "<<", "EOF"], Some(Hd)), ("rm -rf /", &["rm", "-rf", "/"], None)]),
            ("cat <<-EOF\n\tx\n\tEOF\nls", &[("cat <<-EOF\n\tx\n\tEOF", &["cat", "<<-", "EOF"], Some(Hd)), ("ls", &["ls"], None)]),
            ("cat <<EOF\nno end; rm x", &[("cat <<EOF\nno end; rm x", &["cat", "<<", "EOF"], Some(Hd))]),
            ("cat <<EOF; ls\nbody\nEOF\npwd", &[("cat <<EOF\nbody\nEOF", &["cat", "<<", "EOF"], Some(Hd)), ("ls", &["ls"], None), ("pwd", &["pwd"], None)]),
            ("cat <<A <<B\na\nA\nb\nB\nls", &[("cat <<A <<B\na\nA\nb\nB", &["cat", "<<", "A", "<<", "B"], Some(Hd)), ("ls", &["ls"], None)]),
            ("cat <<", &[("cat <<", &["cat", "<<"], Some(Hd))]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn groups() {
        check_all(&[
            ("(cd /; rm -rf x)", &[("(cd /; rm -rf x)", &["(cd /; rm -rf x)"], Some(Sub)), ("cd /", &["cd", "/"], None), ("rm -rf x", &["rm", "-rf", "x"], None)]),
            ("{ ls; rm x; }", &[("{ ls; rm x; }", &["{ ls; rm x; }"], Some(Sub)), ("ls", &["ls"], None), ("rm x", &["rm", "x"], None)]),
            ("{ ls; } > out && pwd", &[("{ ls; } > out", &["{ ls; }", ">", "out"], Some(Sub)), ("ls", &["ls"], None), ("pwd", &["pwd"], None)]),
            // `}` may directly follow an inner group, but not an argument.
            ("{ { a; } }; b", &[("{ { a; } }", &["{ { a; } }"], Some(Sub)), ("{ a; }", &["{ a; }"], Some(Sub)), ("a", &["a"], None), ("b", &["b"], None)]),
            ("{ (a) }", &[("{ (a) }", &["{ (a) }"], Some(Sub)), ("(a)", &["(a)"], Some(Sub)), ("a", &["a"], None)]),
            ("{ a }", &[("{ a }", &["{ a }"], Some(Sub)), ("a }", &["a", "}"], None)]),
            ("f() { rm -rf /; }", &[("f() { rm -rf /; }", &["f", "()", "{ rm -rf /; }"], Some(Un)), ("rm -rf /", &["rm", "-rf", "/"], None)]),
            ("a=(x y) cmd", &[("a=(x y) cmd", &["a=", "(x y)", "cmd"], Some(Un)), ("x y", &["x", "y"], None)]),
            ("(( i++ ))", &[("(( i++ ))", &["(( i++ ))"], Some(Un))]),
            ("echo $((1+2))", &[("echo $((1+2))", &["echo", "$((1+2))"], Some(Un))]),
            ("echo $((x<<2))\nls", &[("echo $((x<<2))", &["echo", "$((x<<2))"], Some(Un)), ("ls", &["ls"], None)]),
            ("echo $[1+2]", &[("echo $[1+2]", &["echo", "$[1+2]"], Some(Un))]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn reserved_words() {
        check_all(&[
            ("if true; then rm -rf /; fi", &[
                ("if true", &["if", "true"], Some(Un)),
                ("true", &["true"], None),
                ("then rm -rf /", &["then", "rm", "-rf", "/"], Some(Un)),
                ("rm -rf /", &["rm", "-rf", "/"], None),
                ("fi", &["fi"], Some(Un)),
            ]),
            ("! grep -q x f", &[("! grep -q x f", &["!", "grep", "-q", "x", "f"], Some(Un)), ("grep -q x f", &["grep", "-q", "x", "f"], None)]),
            ("time -p make", &[("time -p make", &["time", "-p", "make"], Some(Un)), ("make", &["make"], None)]),
            ("! $CMD", &[("! $CMD", &["!", "$CMD"], Some(Un)), ("$CMD", &["$CMD"], Some(Ve))]),
            (r#"for f in *; do rm "$f"; done"#, &[
                ("for f in *", &["for", "f", "in", "*"], Some(Un)),
                (r#"do rm "$f""#, &["do", "rm", "$f"], Some(Un)),
                (r#"rm "$f""#, &["rm", "$f"], None),
                ("done", &["done"], Some(Un)),
            ]),
            ("[[ -f x ]] && ls", &[("[[ -f x ]]", &["[[", "-f", "x", "]]"], Some(Un)), ("ls", &["ls"], None)]),
            // Quoted, a reserved word is an ordinary command name.
            ("'if' x", &[("'if' x", &["if", "x"], None)]),
            ("echo if then", &[("echo if then", &["echo", "if", "then"], None)]),
        ]);
    }

    #[test]
    #[rustfmt::skip]
    fn other_unsupported_syntax() {
        check_all(&[
            (r"echo $'a\nb'", &[(r"echo $'a\nb'", &["echo", r"a\nb"], Some(Un))]),
            (r#"echo $"x""#, &[(r#"echo $"x""#, &["echo", "x"], Some(Un))]),
            ("{rm,-rf,/}", &[("{rm,-rf,/}", &["{rm,-rf,/}"], Some(Un))]),
            ("mkdir -p a/{b,c}", &[("mkdir -p a/{b,c}", &["mkdir", "-p", "a/{b,c}"], Some(Un))]),
            ("echo {1..3}", &[("echo {1..3}", &["echo", "{1..3}"], Some(Un))]),
            (r"echo '{a,b}' \{a,b}", &[(r"echo '{a,b}' \{a,b}", &["echo", "{a,b}", "{a,b}"], None)]),
            (r"find . -name '*.rs' -exec rm {} \;", &[(r"find . -name '*.rs' -exec rm {} \;", &["find", ".", "-name", "*.rs", "-exec", "rm", "{}", ";"], None)]),
            ("/bin/r? -rf /", &[("/bin/r? -rf /", &["/bin/r?", "-rf", "/"], Some(Un))]),
            ("ls *.rs [ab]", &[("ls *.rs [ab]", &["ls", "*.rs", "[ab]"], None)]),
            ("[ -f x ]", &[("[ -f x ]", &["[", "-f", "x", "]"], None)]),
            ("r\0m -rf /", &[("r\0m -rf /", &["r\0m", "-rf", "/"], Some(Un))]),
        ]);
    }

    #[test]
    fn describe_is_lowercase_and_distinct() {
        let all = [Cs, Ps, Hd, Uq, Sub, Ve, Un];
        let texts: Vec<&str> = all.iter().map(Opaque::describe).collect();
        for text in &texts {
            assert!(!text.is_empty());
            assert_eq!(text.to_lowercase(), *text);
        }
        let mut unique = texts.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), texts.len());
        assert_eq!(Cs.describe(), "command substitution `$(...)`");
    }

    #[test]
    fn deep_nesting_is_capped() {
        let deep = format!("echo {}x{}", "$(".repeat(40), ")".repeat(40));
        let segs = split(&deep);
        assert_eq!(segs[0].opaque, Some(Cs));
        assert!(segs.iter().any(|s| s.opaque == Some(Un)), "{segs:?}");
        assert!(segs.len() <= MAX_DEPTH + 2);

        let deep = format!("echo {}", "\"${x:-".repeat(40));
        assert_eq!(split(&deep)[0].opaque, Some(Un));

        // Shallow nesting is still followed all the way down.
        let shallow = format!("echo {}rm x{}", "$(".repeat(5), ")".repeat(5));
        let segs = split(&shallow);
        assert_eq!(segs.len(), 6, "{segs:?}");
        assert!(segs[..5].iter().all(|s| s.opaque == Some(Cs)));
        assert_eq!(segs[5].words, ["rm", "x"]);
        assert_eq!(segs[5].opaque, None);
    }

    #[test]
    fn huge_and_hostile_inputs_finish() {
        let inputs = [
            "a;".repeat(100_000),
            "$(".repeat(100_000),
            "(".repeat(100_000),
            "( ".repeat(100_000),
            "{ ".repeat(100_000),
            "\"${x:-".repeat(50_000),
            "$((".repeat(50_000),
            "${".repeat(50_000),
            "'".repeat(100_001),
            "`".repeat(99_999),
            "\\".repeat(100_001),
            "\\\n".repeat(100_000),
            format!("{{{}", "\\\n".repeat(100_000)),
            format!("cat {}\n{}", "<<a ".repeat(10_000), "x\n".repeat(10_000)),
            "\0".repeat(10_000),
            "$'".repeat(50_000),
        ];
        for input in &inputs {
            let segs = split(input);
            assert!(segs.iter().all(|s| !s.words.is_empty()));
        }
        assert_eq!(split(&"a;".repeat(100_000)).len(), 100_000);
    }

    /// One piece of a generated word, rendered so that bash reads it back
    /// as exactly its value.
    #[derive(Debug, Clone)]
    enum Part {
        Plain(String),
        Single(String),
        Double(String),
        Escaped(char),
    }

    impl Part {
        fn render(&self) -> String {
            match self {
                Part::Plain(s) => s.clone(),
                Part::Single(s) => format!("'{s}'"),
                Part::Double(s) => {
                    let mut out = String::from("\"");
                    for c in s.chars() {
                        if matches!(c, '"' | '\\' | '$' | '`') {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                    out
                }
                Part::Escaped(c) => format!("\\{c}"),
            }
        }

        fn value(&self) -> String {
            match self {
                Part::Plain(s) | Part::Single(s) | Part::Double(s) => s.clone(),
                Part::Escaped(c) => c.to_string(),
            }
        }
    }

    fn part() -> impl Strategy<Value = Part> {
        prop_oneof![
            3 => "[a-z0-9_./:,@%+-]{1,6}".prop_map(Part::Plain),
            1 => "[^\\x00']{0,6}".prop_map(Part::Single),
            1 => "[^\\x00]{0,6}".prop_map(Part::Double),
            1 => any::<char>()
                .prop_filter("NUL and newline are special", |c| *c != '\0' && *c != '\n')
                .prop_map(Part::Escaped),
        ]
    }

    type Command = Vec<Vec<Part>>;

    fn command() -> impl Strategy<Value = Command> {
        prop::collection::vec(prop::collection::vec(part(), 1..4), 1..5)
    }

    fn separator() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            ";", " ; ", "&&", " && ", "||", "|", " | ", "&", " & ", "\n", " \n ", "|&", ";;",
        ])
    }

    const RESERVED: &[&str] = &[
        "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "in", "case",
        "esac", "select", "function", "time", "coproc",
    ];

    /// A generated command is reported exactly: one segment per command,
    /// with its source text and its words after quote removal.
    fn check_generated(commands: &[Command], seps: &[&str]) -> Result<(), TestCaseError> {
        let mut input = String::new();
        let mut want = Vec::new();
        for (i, cmd) in commands.iter().enumerate() {
            if let [Part::Plain(first)] = cmd[0].as_slice() {
                prop_assume!(!RESERVED.contains(&first.as_str()));
            }
            let text: Vec<String> = cmd
                .iter()
                .map(|w| w.iter().map(Part::render).collect())
                .collect();
            let text = text.join(" ");
            let words = cmd
                .iter()
                .map(|w| w.iter().map(Part::value).collect())
                .collect();
            if i > 0 {
                input.push_str(seps[(i - 1) % seps.len()]);
            }
            input.push_str(&text);
            want.push(Segment {
                text,
                words,
                opaque: None,
            });
        }
        prop_assert_eq!(split(&input), want, "input {:?}", input);
        Ok(())
    }

    /// Shell-flavoured fragments, to reach the interesting paths often.
    fn shellish() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec![
            "a", "rm", " ", "\t", "\n", ";", "&", "|", "&&", "(", ")", "{", "}", "<", ">", "2>&1",
            "<<", "<<-", "<<<", "EOF", "\nEOF\n", "'", "\"", "\\", "\\\n", "$", "$(", "${", "$((",
            "`", "#", "=", "*", "!", "if", "then", "x=", "$x", "<(", "\0", "é", "\r",
        ]);
        prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
    }

    /// Properties every split must have, whatever the input.
    fn check_invariants(input: &str) -> Result<(), TestCaseError> {
        let segs = split(input);
        for seg in &segs {
            prop_assert!(
                !seg.words.is_empty(),
                "no words in {:?} from {:?}",
                seg,
                input
            );
            prop_assert!(!seg.text.is_empty(), "empty text from {:?}", input);
            if seg.opaque.is_none() {
                // A segment fully understood holds no separator, quote or
                // expansion that we might have misread: read alone, it is
                // the same single command.
                prop_assert_eq!(
                    split(&seg.text),
                    vec![seg.clone()],
                    "re-splitting from {:?}",
                    input
                );
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn generated_commands_split_exactly(
            commands in prop::collection::vec(command(), 1..5),
            seps in prop::collection::vec(separator(), 1..5),
        ) {
            check_generated(&commands, &seps)?;
        }

        #[test]
        fn invariants_hold_on_shellish_input(input in shellish()) {
            check_invariants(&input)?;
        }

        #[test]
        fn invariants_hold_on_any_input(input in any::<String>()) {
            check_invariants(&input)?;
        }
    }
}
