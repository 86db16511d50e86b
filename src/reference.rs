//! The reference interpreter: walks a policy's resolved rules one by one with
//! plain matchers (globset's own matcher, the `regex` crate, word comparison).
//! It is slow and obviously right; tests compare the compiled program to it,
//! and `permc explain` uses its trace.

use crate::eval::Backend;
use crate::lower::{Lowered, PolicyBody, ResolvedMatcher, ResolvedRule, RuleList};
use crate::request::{Item, Subject};
use crate::syntax::ast::{Combine, Effect};

/// Why one rule did or did not match an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The rule names other tools.
    OtherTool,
    /// The rule names other operations.
    OtherOp,
    /// A cwd gate whose cwd is inside the workspace (or unset): skipped.
    GateInside,
    /// A cwd gate that fired.
    GateFired,
    /// Matched; the text says by what.
    Matched(String),
    /// No matcher matched.
    NoMatch,
}

/// The interpreter over a lowered file.
pub struct Reference<'a> {
    pub low: &'a Lowered,
}

impl Backend for Reference<'_> {
    fn select(&self, policy: u32, item: &Item) -> Option<u32> {
        let list = rules_of(self.low, policy)?;
        let trace = trace(list, item);
        pick(list, &trace)
    }
}

fn rules_of(low: &Lowered, policy: u32) -> Option<&RuleList> {
    match &low.policies.get(policy as usize)?.body {
        PolicyBody::Rules(l) => Some(l),
        PolicyBody::All(_) => None,
    }
}

/// Chooses the deciding rule from a full trace.
pub fn pick(list: &RuleList, trace: &[Step]) -> Option<u32> {
    let fired = |s: &Step| matches!(s, Step::GateFired | Step::Matched(_));
    match list.combine {
        Combine::FirstMatch => {
            // Gates run as a first pass, then the rules in order.
            let gate = trace.iter().position(|s| *s == Step::GateFired);
            let first = gate.or_else(|| trace.iter().position(|s| matches!(s, Step::Matched(_))));
            first.map(|i| i as u32)
        }
        Combine::Strictest => {
            let mut best: Option<(Effect, usize)> = None;
            for (i, s) in trace.iter().enumerate() {
                if fired(s) {
                    let e = list.rules[i].effect;
                    if best.is_none_or(|(b, _)| e > b) {
                        best = Some((e, i));
                    }
                }
            }
            best.map(|(_, i)| i as u32)
        }
    }
}

/// What every rule of `list` does with `item`, in rule order.
pub fn trace(list: &RuleList, item: &Item) -> Vec<Step> {
    list.rules
        .iter()
        .map(|r| step(r, item, &list.workspace))
        .collect()
}

fn step(rule: &ResolvedRule, item: &Item, workspace: &str) -> Step {
    if !rule.applies_to_tool(&item.tool) {
        return Step::OtherTool;
    }
    if !rule.applies_to_op(&item.op) {
        return Step::OtherOp;
    }
    if rule.gate {
        return match &item.subject {
            Subject::Command(c) => match &c.cwd {
                Some(cwd) if !crate::paths::is_within(cwd, workspace) => Step::GateFired,
                _ => Step::GateInside,
            },
            _ => Step::GateInside,
        };
    }
    if rule.matchers.is_empty() {
        return Step::Matched(
            "the rule has no pattern, so it matches every item it applies to".into(),
        );
    }
    for m in &rule.matchers {
        if let Some(why) = matcher_matches(m, item) {
            return Step::Matched(why);
        }
    }
    Step::NoMatch
}

fn matcher_matches(m: &ResolvedMatcher, item: &Item) -> Option<String> {
    match (m, &item.subject) {
        (
            ResolvedMatcher::Glob {
                source,
                anchored,
                negated,
                ..
            },
            Subject::Path(p),
        ) => {
            let hit = glob_is_match(anchored, p);
            match (hit, negated) {
                (true, false) => Some(format!("glob `{source}` matches")),
                (false, true) => Some(format!(
                    "negated glob `!{source}`: the path is outside `{source}`"
                )),
                _ => None,
            }
        }
        (ResolvedMatcher::Regex { source, .. }, Subject::Path(p)) => {
            regex_search(source, p).then(|| format!("regex /{source}/ found in the path"))
        }
        (ResolvedMatcher::Regex { source, .. }, Subject::Command(c)) => {
            regex_search(source, &c.canonical)
                .then(|| format!("regex /{source}/ found in `{}`", c.canonical))
        }
        (ResolvedMatcher::Prefix { words, .. }, Subject::Command(c)) => {
            (c.words.len() >= words.len() && c.words[..words.len()] == words[..])
                .then(|| format!("the command starts with the words `{}`", words.join(" ")))
        }
        _ => None,
    }
}

/// Plain globset matching with the same picomatch adjustments as lowering:
/// `dir/**` also matches `dir`.
fn glob_is_match(anchored: &str, path: &str) -> bool {
    let build = |p: &str| {
        globset::GlobBuilder::new(p)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .ok()
            .map(|g| g.compile_matcher())
    };
    let main = build(anchored).is_some_and(|m| m.is_match(path));
    main || anchored
        .strip_suffix("/**")
        .filter(|d| !d.is_empty() && !d.ends_with('/'))
        .and_then(build)
        .is_some_and(|m| m.is_match(path))
}

fn regex_search(re: &str, hay: &str) -> bool {
    regex::Regex::new(re).is_ok_and(|r| r.is_match(hay))
}
