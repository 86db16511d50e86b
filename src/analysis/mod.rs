//! Static analysis for `permc check`: exact lints over the compiled automata.
//!
//! Each finding is proven, not sampled: rule sets are split per (tool,
//! operation) exactly as the compiled program splits them ([`sets`]), every
//! matcher becomes a DFA over its subject's domain ([`lang`]), and
//! breadth-first walks of their product ([`walk`]) answer which rules match
//! each class of input. From that:
//!
//! - [`first_match`]: `permc::shadowed-rule`, `permc::partly-shadowed`;
//! - [`dead`]: `permc::dead-allow` under `combine strictest` and across
//!   `all(...)`, and `permc::inert-grant` (a grant another member still asks
//!   about: AgentLane's composition trap);
//! - [`matchers`]: `permc::universal-rule`, `permc::empty-matcher`;
//! - [`commands`]: `permc::unanchored-regex`, `permc::exec-wrapper-allow`;
//! - [`mistakes`]: the documented mistakes of the reference systems
//!   (`permc::wildcard-tool-deny`, `permc::bare-tool-name`), one small
//!   function each.
//!
//! Every witness is an input the evaluator really decides as the finding
//! says; each finding carries [`Claim`]s stating exactly that, which the tests
//! check against the reference interpreter. When an automaton or a walk
//! exceeds its limits the lint is skipped with `permc::analysis-limit`
//! rather than guessed. Only the root file's policies are analysed.

mod claims;
mod commands;
mod dead;
mod first_match;
mod lang;
mod matchers;
mod mistakes;
mod sets;
mod walk;

pub use claims::{Claim, Expect, Subject};

/// `permc::analysis-limit` notes per policy before the rest are summed up.
const LIMIT_NOTES: usize = 5;

use crate::diag::Diagnostic;
use crate::lower::{Lowered, PolicyBody, ResolvedRule};
use crate::syntax::ast::Effect;
use crate::syntax::loc::{Loc, SourceMap};
use lang::{Cache, Kind};
use std::collections::HashSet;

/// One finding and what its witness demonstrates.
#[derive(Debug, Clone)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    /// Facts about the witness that the evaluator must confirm.
    pub claims: Vec<Claim>,
}

/// Every lint finding for the root file's policies, as diagnostics.
pub fn lint(low: &Lowered, sources: &SourceMap) -> Vec<Diagnostic> {
    findings(low, sources)
        .into_iter()
        .map(|f| f.diagnostic)
        .collect()
}

/// Lints a compiled policy file.
pub fn lint_policy(policy: &crate::Policy) -> Vec<Diagnostic> {
    lint(policy.lowered(), policy.sources())
}

/// Every lint finding with its claims.
pub fn findings(low: &Lowered, sources: &SourceMap) -> Vec<Finding> {
    let mut cx = Ctx::new(low, sources);
    for &pid in &low.root_policies {
        let Some(p) = low.policies.get(pid as usize) else {
            continue;
        };
        match &p.body {
            PolicyBody::Rules(list) => {
                match list.combine {
                    crate::syntax::ast::Combine::FirstMatch => {
                        first_match::check(&mut cx, pid, list)
                    }
                    crate::syntax::ast::Combine::Strictest => {
                        dead::check_strictest(&mut cx, pid, list)
                    }
                }
                matchers::check(&mut cx, pid, list);
                commands::check(&mut cx, pid, list);
            }
            PolicyBody::All(_) => dead::check_all(&mut cx, pid),
        }
    }
    mistakes::check(&mut cx);
    cx.finish()
}

/// State shared by the analyses of one run.
pub(crate) struct Ctx<'a> {
    pub low: &'a Lowered,
    sources: &'a SourceMap,
    pub cache: Cache,
    out: Vec<Finding>,
    seen: HashSet<(&'static str, Option<Loc>, String)>,
    /// Rules already noted as too large to analyse.
    limited: HashSet<Loc>,
    /// Per policy, limit notes given, and those held back past the first few.
    limit_counts: std::collections::BTreeMap<u32, (usize, usize)>,
    /// The rule-set groups of each policy, computed once.
    groups: std::cell::RefCell<std::collections::HashMap<u32, std::rc::Rc<Vec<sets::Group>>>>,
}

impl<'a> Ctx<'a> {
    fn new(low: &'a Lowered, sources: &'a SourceMap) -> Self {
        Ctx {
            low,
            sources,
            cache: Cache::default(),
            out: Vec::new(),
            seen: HashSet::new(),
            limited: HashSet::new(),
            limit_counts: Default::default(),
            groups: Default::default(),
        }
    }

    /// Records a finding once (a preset's rule can reach the same finding
    /// through several policies).
    pub(crate) fn push(&mut self, mut diagnostic: Diagnostic, claims: Vec<Claim>) {
        // Trim the spans, and merge labels that land on the same one.
        let mut merged: Vec<(Loc, String)> = Vec::new();
        for (loc, text) in std::mem::take(&mut diagnostic.labels) {
            let loc = trim(self.sources, loc);
            match merged.iter_mut().find(|(l, _)| *l == loc) {
                Some((_, t)) if !t.contains(&text) => *t = format!("{t}; {text}"),
                Some(_) => {}
                None => merged.push((loc, text)),
            }
        }
        diagnostic.labels = merged;
        let key = (
            diagnostic.code,
            diagnostic.loc(),
            diagnostic.message.clone(),
        );
        if self.seen.insert(key) {
            self.out.push(Finding { diagnostic, claims });
        }
    }

    /// Notes (once per rule) that an analysis of `rule` could not finish
    /// within the limits.
    pub(crate) fn limit(&mut self, pid: u32, rule: &ResolvedRule, what: &str, why: &str) {
        if !self.limited.insert(rule.loc) {
            return;
        }
        let counts = self.limit_counts.entry(pid).or_default();
        if counts.0 >= LIMIT_NOTES {
            counts.1 += 1;
            return;
        }
        counts.0 += 1;
        let home = self.home(pid);
        let d = Diagnostic::warning(
            "permc::analysis-limit",
            format!("rule `{}` is too large to analyse", rule.label),
        );
        let d = labels(d, rule, home, "not analysed");
        self.push(
            d.help(format!(
                "the {what} analysis stopped: {why}. The rule was skipped, not judged; simplify its patterns, or split the policy"
            )),
            Vec::new(),
        );
    }

    /// The rule-set groups of policy `pid` (whose rules are `list`).
    pub(crate) fn groups(
        &self,
        pid: u32,
        list: &crate::lower::RuleList,
    ) -> std::rc::Rc<Vec<sets::Group>> {
        let mut cache = self.groups.borrow_mut();
        cache
            .entry(pid)
            .or_insert_with(|| std::rc::Rc::new(sets::groups(self.low, &[list])))
            .clone()
    }

    /// The file of a policy's definition: labels prefer locations there.
    pub(crate) fn home(&self, pid: u32) -> crate::syntax::loc::FileId {
        self.low
            .policies
            .get(pid as usize)
            .map(|p| p.loc.file)
            .unwrap_or_default()
    }

    pub(crate) fn policy_name(&self, pid: u32) -> &str {
        self.low
            .policies
            .get(pid as usize)
            .map_or("?", |p| p.name.as_str())
    }

    fn finish(mut self) -> Vec<Finding> {
        let held: Vec<(u32, usize)> = self
            .limit_counts
            .iter()
            .filter(|(_, c)| c.1 > 0)
            .map(|(p, c)| (*p, c.1))
            .collect();
        for (pid, n) in held {
            let Some(p) = self.low.policies.get(pid as usize) else {
                continue;
            };
            let d = Diagnostic::warning(
                "permc::analysis-limit",
                format!(
                    "{n} more rule(s) of policy `{}` are too large to analyse",
                    p.name
                ),
            )
            .label(p.loc, "not fully analysed")
            .help("their analyses stopped at the limits; they were skipped, not judged");
            self.push(d, Vec::new());
        }
        self.out
            .sort_by_key(|f| f.diagnostic.loc().map(|l| (l.file, l.start)));
        self.out
    }
}

/// A span without the whitespace and comments the parser may include at
/// its end, so that a label underlines the rule and nothing after it.
fn trim(sources: &SourceMap, loc: Loc) -> Loc {
    let Some(text) = sources.get(loc.file).map(|f| f.text.clone()) else {
        return loc;
    };
    let Some(span) = text.get(loc.start as usize..loc.end as usize) else {
        return loc;
    };
    let mut keep = span.len();
    loop {
        let t = span[..keep].trim_end();
        keep = t.len();
        let line_start = t.rfind('\n').map_or(0, |i| i + 1);
        match comment_start(&t[line_start..]) {
            Some(c) if line_start + c > 0 => keep = line_start + c,
            _ => break,
        }
    }
    Loc {
        end: loc.start + keep as u32,
        ..loc
    }
}

/// Where a `#` comment starts in one line of source, outside strings and
/// regex literals.
fn comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (c, quote) {
            _ if escaped => escaped = false,
            ('\\', Some(_)) => escaped = true,
            ('"' | '/', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('#', None) => return Some(i),
            _ => {}
        }
    }
    None
}

/// Labels a rule, and the `use` statements that spliced it in. The first
/// label is primary: the rule itself when it is written in `home` (the
/// policy's file), else the outermost `use` there.
pub(crate) fn labels(
    mut d: Diagnostic,
    rule: &ResolvedRule,
    home: crate::syntax::loc::FileId,
    text: &str,
) -> Diagnostic {
    let outer = rule
        .via
        .first()
        .copied()
        .filter(|v| v.file == home && rule.loc.file != home);
    match outer {
        Some(u) => {
            d = d.label(u, format!("{text} (spliced in by this `use`)"));
            d = d.label(rule.loc, format!("rule `{}`", rule.label));
        }
        None => {
            d = d.label(rule.loc, text.to_string());
            for v in &rule.via {
                d = d.label(*v, format!("`{}` is spliced in here", rule.label));
            }
        }
    }
    d
}

/// A secondary label for another rule involved in a finding, and the `use`
/// that spliced it in.
pub(crate) fn also(
    mut d: Diagnostic,
    rule: &ResolvedRule,
    home: crate::syntax::loc::FileId,
    text: &str,
) -> Diagnostic {
    match rule.via.first().filter(|v| v.file == home) {
        Some(u) if rule.loc.file != home => {
            d = d.label(
                *u,
                format!("`{}` {text} (spliced in by this `use`)", rule.label),
            );
            d.label(rule.loc, format!("`{}` {text}", rule.label))
        }
        Some(u) => d
            .label(rule.loc, text.to_string())
            .label(*u, format!("`{}` is spliced in here", rule.label)),
        None => d.label(rule.loc, text.to_string()),
    }
}

/// Labels the outermost `use` that spliced a rule in, when one did.
pub(crate) fn via(d: Diagnostic, rule: &ResolvedRule) -> Diagnostic {
    match rule.via.first() {
        Some(u) => d.label(*u, format!("rule `{}` is spliced in here", rule.label)),
        None => d,
    }
}

/// `allow`, `deny`, `ask` as they read in messages.
pub(crate) fn effect_word(e: Effect) -> &'static str {
    match e {
        Effect::Allow => "allows",
        Effect::Ask => "asks about",
        Effect::Deny => "denies",
    }
}

/// Formats a list of rule labels: "`a`, `b` and 2 more".
pub(crate) fn names<'r>(rules: impl IntoIterator<Item = &'r ResolvedRule>) -> String {
    let all: Vec<String> = rules
        .into_iter()
        .map(|r| format!("`{}`", r.label))
        .collect();
    match all.len() {
        0 => String::new(),
        1 => all[0].clone(),
        n if n <= 3 => format!("{} and {}", all[..n - 1].join(", "), all[n - 1]),
        n => format!("{}, {}, {} and {} more", all[0], all[1], all[2], n - 3),
    }
}

/// The subject kinds a resolved matcher can see.
pub(crate) fn kind_word(k: Kind) -> &'static str {
    match k {
        Kind::Path => "path",
        Kind::Command => "command",
        Kind::Raw => "code text",
    }
}
