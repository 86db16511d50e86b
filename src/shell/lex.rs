//! Tokens of the shell command language, as seen by [`super::split`].
//!
//! Shell lexing is context-sensitive, so there are two token sets: [`Tok`] for
//! unquoted text and [`DqTok`] for the inside of a double-quoted string. The
//! splitter asks for one token at a time at an explicit byte position (see
//! [`tok_at`] and [`dq_tok_at`]), which lets it switch between the two sets and
//! re-enter the unquoted set inside `$(...)` without any lexer state to undo.
//!
//! Every pattern consumes at least one character and every character of the
//! input starts some pattern, so lexing always makes progress. Constructs whose
//! end a regular expression can find (single quotes, `$'...'`, backticks) are
//! single tokens, each with an `...Unterminated` twin that matches the same
//! opening up to the end of input: the longest match picks the complete form
//! when the closing character exists, so no backtracking is ever needed.

use logos::Logos;

/// A token of unquoted shell text.
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok {
    /// Spaces and tabs: the only blanks bash knows (`\r` is a word character).
    #[regex(r"[ \t]+")]
    Blank,
    #[token("\n")]
    Newline,
    /// Backslash-newline: removed entirely, even inside a word.
    #[token("\\\n")]
    LineContinuation,
    /// A backslash quoting the next character.
    #[regex(r"\\[^\n]")]
    Escaped,
    /// A backslash at the very end of the input, quoting nothing.
    #[token("\\")]
    TrailingBackslash,
    #[regex(r"'[^']*'")]
    SingleQuoted,
    #[regex(r"'[^']*")]
    SingleUnterminated,
    /// Opening `"`; the string's contents are lexed with [`DqTok`].
    #[token("\"")]
    DoubleQuote,
    /// `$"`: a locale-translated string, otherwise like `"`.
    #[token("$\"")]
    LocaleQuote,
    /// `$'...'` ANSI-C quoting, where `\'` does not end the string.
    #[regex(r"\$'([^'\\]|\\(?s:.))*'")]
    AnsiC,
    #[regex(r"\$'([^'\\]|\\(?s:.))*\\?")]
    AnsiCUnterminated,
    /// A whole backtick command substitution. In bash the first backtick not
    /// preceded by a backslash ends it, whatever quotes come in between.
    #[regex(r"`([^`\\]|\\(?s:.))*`")]
    Backquoted,
    #[regex(r"`([^`\\]|\\(?s:.))*\\?")]
    BackquoteUnterminated,
    #[token("$(")]
    CmdSubOpen,
    #[token("$((")]
    ArithOpen,
    /// `$[`: the deprecated spelling of arithmetic expansion.
    #[token("$[")]
    DollarBracket,
    #[token("${")]
    ParamOpen,
    /// `$NAME`, `$1`, and the special parameters `$@ $* $# $? $$ $! $-`.
    #[regex(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])")]
    Var,
    /// A `$` that starts no expansion, which bash keeps literally.
    #[token("$")]
    Dollar,
    #[token("<(")]
    #[token(">(")]
    ProcSubOpen,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    /// `{` and `}` are ordinary word characters except when they stand alone
    /// in command position, so they are separate tokens for the splitter to
    /// judge (and to find the end of `${...}`).
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    /// `#` starts a comment only at the start of a word, which the splitter
    /// decides; mid-word it is a literal character.
    #[token("#")]
    Hash,
    /// Everything that ends one simple command and starts another.
    #[token(";")]
    #[token(";;")]
    #[token(";&")]
    #[token(";;&")]
    #[token("&&")]
    #[token("||")]
    #[token("|")]
    #[token("|&")]
    #[token("&")]
    Separator,
    /// A redirection operator that takes a target word, with an optional file
    /// descriptor number in front (`2>`, `>>`, `<>`, `>|`, `>&`, `&>`, ...).
    #[regex(r"[0-9]*(<|>|>>|<>|>\||>&|<&)")]
    #[token("&>")]
    #[token("&>>")]
    Redirect,
    /// A descriptor duplication or close that is complete by itself: `2>&1`,
    /// `>&2`, `<&-`.
    #[regex(r"[0-9]*[<>]&([0-9]+|-)")]
    RedirectDup,
    /// `<<` or `<<-`: a here-document, whose body follows the next newline.
    #[regex(r"[0-9]*<<-?")]
    HereDoc,
    /// `<<<`: a here-string, whose target is an ordinary word.
    #[regex(r"[0-9]*<<<")]
    HereString,
    /// A run of ordinary word characters.
    #[regex(r#"[^ \t\n;&|()<>'"\\$`{}#]+"#)]
    Word,
}

/// A token inside a double-quoted string (also used for here-document bodies,
/// whose expansions follow the same rules).
#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DqTok {
    /// The closing `"`.
    #[token("\"")]
    End,
    /// Inside double quotes a backslash only quotes these characters.
    #[regex(r#"\\[\\"$`]"#)]
    Escaped,
    #[token("\\\n")]
    LineContinuation,
    /// Any other backslash stays literal.
    #[token("\\")]
    Backslash,
    #[regex(r"`([^`\\]|\\(?s:.))*`")]
    Backquoted,
    #[regex(r"`([^`\\]|\\(?s:.))*\\?")]
    BackquoteUnterminated,
    #[token("$(")]
    CmdSubOpen,
    #[token("$((")]
    ArithOpen,
    #[token("$[")]
    DollarBracket,
    #[token("${")]
    ParamOpen,
    #[regex(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])")]
    Var,
    #[token("$")]
    Dollar,
    #[regex(r#"[^"\\$`]+"#)]
    Text,
}

/// One lexed token: its kind (`None` when no pattern matched, which the
/// patterns above are meant to make impossible) and its byte range.
pub(crate) struct Lexed<T> {
    pub(crate) tok: Option<T>,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Lexes the [`Tok`] starting at byte `pos` of `src`, or `None` at the end.
pub(crate) fn tok_at(src: &str, pos: usize) -> Option<Lexed<Tok>> {
    lex_one::<Tok>(src, pos)
}

/// Lexes the [`DqTok`] starting at byte `pos` of `src`, or `None` at the end.
pub(crate) fn dq_tok_at(src: &str, pos: usize) -> Option<Lexed<DqTok>> {
    lex_one::<DqTok>(src, pos)
}

fn lex_one<'s, T>(src: &'s str, pos: usize) -> Option<Lexed<T>>
where
    T: Logos<'s, Source = str, Extras = ()>,
{
    let rest = src.get(pos..)?;
    let first_len = rest.chars().next()?.len_utf8();
    let mut lexer = T::lexer(rest);
    let tok = lexer.next()?;
    let span = lexer.span();
    // A zero-width match would stall the caller; never hand one out.
    let end = pos + span.end.max(span.start + first_len);
    Some(Lexed {
        tok: tok.ok(),
        start: pos + span.start,
        end,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<(Tok, &str)> {
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(l) = tok_at(src, pos) {
            out.push((l.tok.unwrap(), &src[l.start..l.end]));
            pos = l.end;
        }
        out
    }

    #[test]
    fn operators_take_the_longest_match() {
        use Tok::*;
        let cases: &[(&str, &[(Tok, &str)])] = &[
            ("a&&b", &[(Word, "a"), (Separator, "&&"), (Word, "b")]),
            ("a&>b", &[(Word, "a"), (Redirect, "&>"), (Word, "b")]),
            ("&>>f", &[(Redirect, "&>>"), (Word, "f")]),
            ("2>&1", &[(RedirectDup, "2>&1")]),
            (">&2", &[(RedirectDup, ">&2")]),
            ("2>&-", &[(RedirectDup, "2>&-")]),
            (">& f", &[(Redirect, ">&"), (Blank, " "), (Word, "f")]),
            ("12>f", &[(Redirect, "12>"), (Word, "f")]),
            ("a2>f", &[(Word, "a2"), (Redirect, ">"), (Word, "f")]),
            (">|f", &[(Redirect, ">|"), (Word, "f")]),
            ("|&", &[(Separator, "|&")]),
            (";;&", &[(Separator, ";;&")]),
            ("<<-E", &[(HereDoc, "<<-"), (Word, "E")]),
            ("<<<w", &[(HereString, "<<<"), (Word, "w")]),
            ("<(x)", &[(ProcSubOpen, "<("), (Word, "x"), (RParen, ")")]),
            ("$((", &[(ArithOpen, "$((")]),
            ("$#x", &[(Var, "$#"), (Word, "x")]),
            ("$ ", &[(Dollar, "$"), (Blank, " ")]),
            ("a#b", &[(Word, "a"), (Hash, "#"), (Word, "b")]),
        ];
        for (src, want) in cases {
            assert_eq!(&toks(src), want, "lexing {src:?}");
        }
    }

    #[test]
    fn quotes_fall_back_to_unterminated_forms() {
        use Tok::*;
        let cases: &[(&str, &[(Tok, &str)])] = &[
            ("'a;b'c", &[(SingleQuoted, "'a;b'"), (Word, "c")]),
            ("'a;b", &[(SingleUnterminated, "'a;b")]),
            ("'a\\'", &[(SingleQuoted, "'a\\'")]),
            ("$'a\\'b'", &[(AnsiC, "$'a\\'b'")]),
            ("$'a\\'", &[(AnsiCUnterminated, "$'a\\'")]),
            ("$'a\\", &[(AnsiCUnterminated, "$'a\\")]),
            ("`a\\`b`", &[(Backquoted, "`a\\`b`")]),
            ("`a\\", &[(BackquoteUnterminated, "`a\\")]),
            (
                "\\;\\\n\\",
                &[
                    (Escaped, "\\;"),
                    (LineContinuation, "\\\n"),
                    (TrailingBackslash, "\\"),
                ],
            ),
            ("\\é", &[(Escaped, "\\é")]),
        ];
        for (src, want) in cases {
            assert_eq!(&toks(src), want, "lexing {src:?}");
        }
    }

    #[test]
    fn double_quoted_tokens() {
        use DqTok::*;
        let src = r#"a\"b\x$HOME${x}$(`c`"#;
        let mut got = Vec::new();
        let mut pos = 0;
        while let Some(l) = dq_tok_at(src, pos) {
            got.push((l.tok.unwrap(), &src[l.start..l.end]));
            pos = l.end;
        }
        let want = [
            (Text, "a"),
            (Escaped, "\\\""),
            (Text, "b"),
            (Backslash, "\\"),
            (Text, "x"),
            (Var, "$HOME"),
            (ParamOpen, "${"),
            (Text, "x}"),
            (CmdSubOpen, "$("),
            (Backquoted, "`c`"),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn every_input_makes_progress() {
        let src = "\0\u{7f}é\r\u{a0}'\"`$\\";
        let mut pos = 0;
        let mut steps = 0;
        while let Some(l) = tok_at(src, pos) {
            assert!(l.end > pos, "no progress at {pos}");
            pos = l.end;
            steps += 1;
        }
        assert_eq!(pos, src.len());
        assert!(steps > 0);
    }
}
