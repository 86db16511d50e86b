//! Matchers as automata, and the product search every analysis runs on.
//!
//! Every matcher becomes one dense DFA over bytes that accepts exactly the
//! subjects it matches, read whole from an anchored start:
//!
//! - a glob: the whole-path regex globset built for it, read as globset's
//!   own matcher reads it (byte-oriented, `.` matching newlines);
//! - a regex `r`, which the evaluator *searches*: `(?s:.*)(?:r)(?s:.*)`,
//!   wrapped at the HIR level so that flags or `(?x)` comments inside `r`
//!   cannot leak out, and with `r`'s anchors and word boundaries still
//!   evaluated against the whole subject;
//! - `prefix "w1 w2"`: the command's words, joined by NUL, are `w1`, `w2`
//!   and then anything.
//!
//! **Command subjects** are encoded exactly as the evaluator sees them: the
//! words joined by NUL (words never contain NUL, and every string is some
//! word list). A `prefix` reads that encoding; a regex reads the canonical
//! text, the words joined by spaces, so its automaton reads a NUL as a space.
//! **Path subjects** are restricted to their domain: `/`, or `/seg` repeated
//! where a segment is non-empty, has no `/` or NUL, and is not `.` or `..`.
//! Both domains contain only valid UTF-8, as the evaluator's inputs do.
//!
//! **Unicode word boundaries.** User regexes keep the `regex` crate's
//! semantics (Unicode `\b`, `\w`, `\s`, `.`). A dense DFA cannot decide a
//! Unicode `\b` after a non-ASCII character, so regexes that use one are built
//! with `unicode_word_boundary(true)`: exact on ASCII, and the automaton
//! *quits* on the first non-ASCII byte. The search below turns a quit into
//! the three-valued answer `Maybe` for that matcher, for every extension of
//! that input. Findings that need a witness only use definite answers;
//! findings that need "no input at all" fail to be proven when a `Maybe`
//! could refute them, and are then not reported. A searched regex that has
//! already matched (a mid-input match state of `.*r.*`) is *settled*: it
//! matches every extension, so later non-ASCII bytes no longer matter.
//!
//! Size limits apply to every automaton; exceeding one is reported, never
//! guessed. The walks over these automata are in [`super::walk`].

use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::{Dot, Hir, Repetition};
use std::collections::HashMap;
use std::rc::Rc;

/// Heap bytes one matcher's NFA may use.
const NFA_BYTES: usize = 8 << 20;
/// Heap bytes one matcher's DFA may use.
const DFA_BYTES: usize = 8 << 20;
/// Working memory for determinising one matcher.
const DETERMINIZE_BYTES: usize = 16 << 20;

/// What a subject is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// A normalised absolute path.
    Path,
    /// A command segment's words, joined by NUL.
    Command,
    /// A `raw` command (code): the text as written, which regexes search
    /// and whose whitespace-separated words `prefix` compares.
    Raw,
}

/// A three-valued answer: a quit automaton makes `Maybe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tri {
    No,
    Maybe,
    Yes,
}

impl Tri {
    pub(crate) fn or(self, other: Tri) -> Tri {
        self.max(other)
    }

    pub(crate) fn not(self) -> Tri {
        match self {
            Tri::No => Tri::Yes,
            Tri::Maybe => Tri::Maybe,
            Tri::Yes => Tri::No,
        }
    }
}

/// What to build an automaton for. Also the cache key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Spec {
    /// The domain of a subject kind.
    Domain(Kind),
    /// A glob's whole-path regex (from globset).
    Glob(String),
    /// A user regex, searched in paths or in command text.
    Search(String, Kind),
    /// A user regex, matched starting at the subject's first byte.
    AtStart(String, Kind),
    /// A user regex whose match starts inside a word: right after a word
    /// character, with no word boundary in between.
    MidWord(String, Kind),
    /// The leading words of a command.
    Prefix(Vec<String>, Kind),
}

/// One automaton: a matcher's, or several matchers' of one rule set
/// compiled together (pattern `i` answering for `targets[i]` of its [`Comp`]).
#[derive(Debug)]
pub(crate) struct Lang {
    pub(super) dfa: dense::DFA<Vec<u32>>,
    pub(super) start: StateID,
    /// One pattern built as `.*r.*`: a mid-input match state settles it.
    searched: bool,
    /// Reads command text: the word separator NUL is read as a space.
    nul_as_space: bool,
}

/// A spec as a pattern: its HIR, whether it is searched, whether it reads
/// command text, and whether it needs quit bytes (a Unicode word boundary).
struct Part {
    hir: Hir,
    searched: bool,
    nul_as_space: bool,
    quits: bool,
}

impl Part {
    fn of(spec: &Spec) -> Result<Part, String> {
        let text = |k: &Kind| *k == Kind::Command;
        let plain = |hir: Hir| Part {
            hir,
            searched: false,
            nul_as_space: false,
            quits: false,
        };
        let user = |hir: Hir, searched: bool, k: &Kind| {
            let quits = hir.properties().look_set().contains_word_unicode();
            Part {
                hir,
                searched,
                nul_as_space: text(k),
                quits,
            }
        };
        Ok(match spec {
            Spec::Domain(Kind::Path) => plain(pattern(
                r"/|(?:/(?:[^/\x00.][^/\x00]*|\.[^/\x00.][^/\x00]*|\.\.[^/\x00]+))+",
            )?),
            Spec::Domain(Kind::Command) => plain(pattern(r"(?s:.)*")?),
            Spec::Domain(Kind::Raw) => plain(pattern(r"[^\x00]*")?),
            // globset matches with `.` matching newlines too (its own
            // matcher, which the reference interpreter uses, sets it).
            Spec::Glob(re) => plain(
                regex_syntax::ParserBuilder::new()
                    .utf8(false)
                    .dot_matches_new_line(true)
                    .build()
                    .parse(re)
                    .map_err(|e| e.to_string())?,
            ),
            Spec::Search(re, k) => user(
                Hir::concat(vec![any_star(), user_hir(re)?, any_star()]),
                true,
                k,
            ),
            Spec::AtStart(re, k) => user(Hir::concat(vec![user_hir(re)?, any_star()]), false, k),
            Spec::MidWord(re, k) => {
                let head = user_hir(r"(?s:.*)\w\B")?;
                user(Hir::concat(vec![head, user_hir(re)?, any_star()]), true, k)
            }
            Spec::Prefix(words, Kind::Raw) => {
                // `split_whitespace` words: Unicode White_Space, as `\s` is.
                let body: Vec<String> = words.iter().map(|w| regex_syntax::escape(w)).collect();
                plain(pattern(&format!(r"(?s)\s*{}(?:\s.*)?", body.join(r"\s+")))?)
            }
            Spec::Prefix(words, _) => {
                let body: Vec<String> = words.iter().map(|w| regex_syntax::escape(w)).collect();
                plain(pattern(&format!(r"(?s){}(?:\x00.*)?", body.join(r"\x00")))?)
            }
        })
    }
}

fn pattern(p: &str) -> Result<Hir, String> {
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(p)
        .map_err(|e| e.to_string())
}

impl Lang {
    pub(crate) fn build(spec: &Spec) -> Result<Lang, String> {
        let part = Part::of(spec)?;
        Lang::from_hirs(&[part.hir], part.searched, part.nul_as_space)
    }

    /// One automaton for several specs that read the same encoding and need
    /// no quit bytes. Pattern ids are their indexes.
    fn build_many(specs: &[Spec]) -> Result<Lang, String> {
        let parts: Vec<Part> = specs.iter().map(Part::of).collect::<Result<_, _>>()?;
        let nul_as_space = parts.first().is_some_and(|p| p.nul_as_space);
        if parts
            .iter()
            .any(|p| p.quits || p.nul_as_space != nul_as_space)
        {
            return Err("these patterns cannot share an automaton".into());
        }
        let hirs: Vec<Hir> = parts.into_iter().map(|p| p.hir).collect();
        Lang::from_hirs(&hirs, false, nul_as_space)
    }

    fn from_hirs(hirs: &[Hir], searched: bool, nul_as_space: bool) -> Result<Lang, String> {
        // Searches are anchored, so UTF-8 mode (which only shapes unanchored
        // prefixes and empty matches) is off, and byte-oriented glob
        // patterns may share an automaton with Unicode ones.
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .utf8(false)
                    .which_captures(thompson::WhichCaptures::None)
                    .nfa_size_limit(Some(NFA_BYTES)),
            )
            .build_many_from_hir(hirs)
            .map_err(|e| e.to_string())?;
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(MatchKind::All)
                    .start_kind(StartKind::Anchored)
                    .unicode_word_boundary(true)
                    .accelerate(false)
                    .minimize(false)
                    .dfa_size_limit(Some(DFA_BYTES))
                    .determinize_size_limit(Some(DETERMINIZE_BYTES)),
            )
            .build_from_nfa(&nfa)
            .map_err(|e| e.to_string())?;
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .map_err(|e| e.to_string())?;
        Ok(Lang {
            dfa,
            start,
            searched: searched && hirs.len() == 1,
            nul_as_space,
        })
    }

    pub(super) fn byte(&self, b: u8) -> u8 {
        if self.nul_as_space && b == 0 { b' ' } else { b }
    }

    pub(super) fn step(&self, s: St, b: u8) -> Option<St> {
        match s {
            St::Live(id) => {
                let n = self.dfa.next_state(id, self.byte(b));
                if self.dfa.is_dead_state(n) {
                    None
                } else if self.dfa.is_quit_state(n) {
                    Some(St::Unknown)
                } else if self.searched && self.dfa.is_match_state(n) {
                    Some(St::Settled)
                } else {
                    Some(St::Live(n))
                }
            }
            other => Some(other),
        }
    }

    /// The answer of each pattern at the end of the subject.
    pub(super) fn at_end(&self, s: St, out: &mut Vec<Tri>, patterns: usize) {
        out.clear();
        match s {
            St::Live(id) => {
                out.resize(patterns, Tri::No);
                let e = self.dfa.next_eoi_state(id);
                if self.dfa.is_match_state(e) {
                    for i in 0..self.dfa.match_len(e) {
                        if let Some(t) = out.get_mut(self.dfa.match_pattern(e, i).as_usize()) {
                            *t = Tri::Yes;
                        }
                    }
                }
            }
            St::Settled => out.resize(patterns, Tri::Yes),
            St::Unknown => out.resize(patterns, Tri::Maybe),
            St::Dead => out.resize(patterns, Tri::No),
        }
    }

    pub(super) fn run(&self, subject: &[u8]) -> St {
        let mut s = St::Live(self.start);
        for &b in subject {
            match self.step(s, b) {
                None => return St::Dead,
                Some(n) => s = n,
            }
        }
        s
    }

    /// Whether the automaton's first pattern accepts `subject` (bytes in its
    /// own encoding).
    pub(crate) fn accepts(&self, subject: &[u8]) -> Tri {
        let mut out = Vec::new();
        self.at_end(self.run(subject), &mut out, 1);
        out.first().copied().unwrap_or(Tri::No)
    }
}

fn user_hir(re: &str) -> Result<Hir, String> {
    // The evaluator's `regex::Regex::new` parses with these defaults.
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(re)
        .map_err(|e| e.to_string())
}

fn any_star() -> Hir {
    Hir::repetition(Repetition {
        min: 0,
        max: None,
        greedy: true,
        sub: Box::new(Hir::dot(Dot::AnyChar)),
    })
}

/// Builds each automaton once per lint run.
#[derive(Default)]
pub(crate) struct Cache {
    langs: HashMap<Spec, Result<Rc<Lang>, String>>,
    many: HashMap<Vec<Spec>, Result<Rc<Lang>, String>>,
}

impl Cache {
    pub(crate) fn get(&mut self, spec: &Spec) -> Result<Rc<Lang>, String> {
        if let Some(found) = self.langs.get(spec) {
            return found.clone();
        }
        let built = Lang::build(spec).map(Rc::new);
        self.langs.insert(spec.clone(), built.clone());
        built
    }

    fn get_many(&mut self, specs: &[Spec]) -> Result<Rc<Lang>, String> {
        if let Some(found) = self.many.get(specs) {
            return found.clone();
        }
        let built = Lang::build_many(specs).map(Rc::new);
        self.many.insert(specs.to_vec(), built.clone());
        built
    }

    /// The components for matchers `(spec, slot, negated)`: those that can
    /// share an automaton share one (what the compiled program does too);
    /// regexes with a Unicode word boundary, which need quit bytes, get one
    /// each. Also returns the slots whose automaton could not be built.
    pub(crate) fn comps(
        &mut self,
        items: Vec<(Spec, usize, bool)>,
    ) -> (Vec<Comp>, Vec<(usize, String)>) {
        let mut comps = Vec::new();
        let mut failed = Vec::new();
        // Matchers that read command text (NUL as a space) apart from the rest.
        type Group = (bool, Vec<(Spec, usize, bool)>);
        let mut groups: Vec<Group> = Vec::new();
        let mut single = Vec::new();
        for item in items {
            match Part::of(&item.0) {
                Ok(p) if !p.quits => match groups.iter_mut().find(|(n, _)| *n == p.nul_as_space) {
                    Some((_, g)) => g.push(item),
                    None => groups.push((p.nul_as_space, vec![item])),
                },
                Ok(_) => single.push(item),
                Err(e) => failed.push((item.1, e)),
            }
        }
        for (_, group) in groups {
            if group.len() < 2 {
                single.extend(group);
                continue;
            }
            let specs: Vec<Spec> = group.iter().map(|(s, _, _)| s.clone()).collect();
            match self.get_many(&specs) {
                Ok(lang) => comps.push(Comp {
                    lang,
                    targets: group.iter().map(|(_, slot, neg)| (*slot, *neg)).collect(),
                }),
                Err(_) => single.extend(group),
            }
        }
        for (spec, slot, negated) in single {
            match self.get(&spec) {
                Ok(lang) => comps.push(Comp::one(lang, slot, negated)),
                Err(e) => failed.push((slot, e)),
            }
        }
        (comps, failed)
    }
}

/// A matcher's state inside a product state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum St {
    Live(StateID),
    /// A searched regex that has matched: it matches every extension.
    Settled,
    /// The automaton quit (a Unicode word boundary after non-ASCII).
    Unknown,
    /// Dead, kept only for automata with negated patterns.
    Dead,
}

/// One automaton in a search; pattern `i` answers for slot `targets[i].0`
/// (negated when `targets[i].1`: the slot matches when the pattern does not).
pub(crate) struct Comp {
    pub lang: Rc<Lang>,
    pub targets: Vec<(usize, bool)>,
}

impl Comp {
    pub(crate) fn one(lang: Rc<Lang>, slot: usize, negated: bool) -> Comp {
        Comp {
            lang,
            targets: vec![(slot, negated)],
        }
    }

    pub(super) fn negates(&self) -> bool {
        self.targets.iter().any(|(_, n)| *n)
    }
}

/// A subject as a person would write it: a path, or a command with each
/// word quoted for the shell when it needs to be.
pub(crate) fn show(kind: Kind, bytes: &[u8]) -> String {
    match kind {
        Kind::Path | Kind::Raw => String::from_utf8_lossy(bytes).into_owned(),
        Kind::Command => words_of(bytes)
            .iter()
            .map(|w| quote(w))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The words of an encoded command.
pub(crate) fn words_of(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|&b| b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

/// Encodes words as a command subject.
pub(crate) fn encode(words: &[&str]) -> Vec<u8> {
    words.join("\0").into_bytes()
}

/// Whether a word needs no shell quoting.
pub(crate) fn plain(w: &str) -> bool {
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c))
}

fn quote(w: &str) -> String {
    if plain(w) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(spec: Spec) -> Lang {
        Lang::build(&spec).unwrap()
    }

    #[test]
    fn path_domain_is_normalised_paths() {
        let d = lang(Spec::Domain(Kind::Path));
        for ok in ["/", "/a", "/a/.env", "/.../x", "/..a", "/a b/é"] {
            assert_eq!(d.accepts(ok.as_bytes()), Tri::Yes, "{ok}");
        }
        for bad in ["", "a", "/a/", "//a", "/./a", "/a/..", "/a\0b"] {
            assert_eq!(d.accepts(bad.as_bytes()), Tri::No, "{bad:?}");
        }
    }

    #[test]
    fn searched_regexes_read_nul_as_space() {
        let r = lang(Spec::Search(r"^\s*rm\b".into(), Kind::Command));
        assert_eq!(r.accepts(&encode(&["rm", "-rf"])), Tri::Yes);
        assert_eq!(r.accepts(&encode(&["rm"])), Tri::Yes);
        assert_eq!(r.accepts(&encode(&["rmdir"])), Tri::No);
        assert_eq!(r.accepts(&encode(&["echo", "rm"])), Tri::No);
        // A Unicode word boundary after non-ASCII is not decided by a DFA.
        assert_eq!(r.accepts("rmé".as_bytes()), Tri::Maybe);
        // Unless the regex has already matched.
        assert_eq!(r.accepts("rm é".as_bytes()), Tri::Yes);
    }

    #[test]
    fn flags_inside_a_regex_stay_inside() {
        let r = lang(Spec::Search("(?x) rm # a comment".into(), Kind::Command));
        assert_eq!(r.accepts(b"farm"), Tri::Yes);
        assert_eq!(r.accepts(b"fa"), Tri::No);
    }

    #[test]
    fn prefixes_match_whole_words() {
        let p = lang(Spec::Prefix(
            vec!["git".into(), "push".into()],
            Kind::Command,
        ));
        assert_eq!(p.accepts(&encode(&["git", "push"])), Tri::Yes);
        assert_eq!(p.accepts(&encode(&["git", "push", "-f"])), Tri::Yes);
        assert_eq!(p.accepts(&encode(&["git", "pushy"])), Tri::No);
        assert_eq!(
            p.accepts(b"git push"),
            Tri::No,
            "one word with a space is not two words"
        );
    }

    #[test]
    fn raw_prefixes_split_at_whitespace() {
        let p = lang(Spec::Prefix(vec!["import".into(), "os".into()], Kind::Raw));
        assert_eq!(p.accepts(b"import os"), Tri::Yes);
        assert_eq!(
            p.accepts(b"  import\t os; x"),
            Tri::No,
            "`os;` is not the word `os`"
        );
        assert_eq!(p.accepts(b"  import\t os\nx"), Tri::Yes);
        assert_eq!(p.accepts(b"import osx"), Tri::No);
    }

    #[test]
    fn mid_word_matches_start_inside_a_word() {
        let m = lang(Spec::MidWord("rm".into(), Kind::Command));
        assert_eq!(m.accepts(&encode(&["npm", "run", "format"])), Tri::Yes);
        assert_eq!(m.accepts(&encode(&["rm", "x"])), Tri::No);
        let b = lang(Spec::MidWord(r"\brm\b".into(), Kind::Command));
        assert_eq!(b.accepts(&encode(&["echo", "farm"])), Tri::No);
    }

    #[test]
    fn commands_show_with_quotes_when_needed() {
        assert_eq!(
            show(Kind::Command, &encode(&["git", "commit", "-m", "a b"])),
            "git commit -m 'a b'"
        );
        assert_eq!(show(Kind::Command, &encode(&["echo", ""])), "echo ''");
    }
}
