//! One multi-pattern automaton: which of many patterns occur in a subject.

use regex_automata::meta;
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind, PatternSet};

/// Size limits for building one automaton; past them, compilation fails with
/// a diagnostic rather than using unbounded memory.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub nfa_bytes: usize,
    pub dfa_bytes: usize,
    pub cache_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            nfa_bytes: 64 << 20,
            dfa_bytes: 16 << 20,
            cache_bytes: 8 << 20,
        }
    }
}

/// Every pattern of a rule set for one subject kind, compiled together.
#[derive(Debug, Clone)]
pub struct Automaton {
    re: meta::Regex,
}

impl Automaton {
    /// Builds one automaton over `patterns`; pattern ids are their indexes.
    pub fn new(patterns: &[String], limits: Limits) -> Result<Automaton, String> {
        let re = meta::Regex::builder()
            // globset emits byte-oriented regexes: the syntax must allow them
            // and empty matches need not split on UTF-8 boundaries.
            .syntax(syntax::Config::new().utf8(false))
            .configure(
                meta::Config::new()
                    .utf8_empty(false)
                    .match_kind(MatchKind::All)
                    .nfa_size_limit(Some(limits.nfa_bytes))
                    .dfa_size_limit(Some(limits.dfa_bytes))
                    .hybrid_cache_capacity(limits.cache_bytes),
            )
            .build_many(patterns)
            .map_err(|e| e.to_string())?;
        Ok(Automaton { re })
    }

    /// The set of patterns that match somewhere in `subject` (anchored
    /// patterns only at their anchors).
    pub fn matches(&self, subject: &[u8]) -> PatternSet {
        let mut set = PatternSet::new(self.re.pattern_len());
        self.re
            .which_overlapping_matches(&Input::new(subject), &mut set);
        set
    }
}
