//! Stage 3: the compiled program. Each policy's rules are split into rule sets
//! per (tool, operation); each rule set compiles its patterns into one
//! automaton per subject kind (paths; command text; command words), so the
//! cost of a decision grows with the input, not with the number of rules.

mod automaton;

pub use automaton::{Automaton, Limits};

use crate::diag::Diagnostic;
use crate::eval::Backend;
use crate::lower::{Lowered, PolicyBody, ResolvedMatcher, RuleList};
use crate::request::{Item, Subject};
use crate::syntax::ast::{Combine, Effect};
use std::collections::HashMap;

/// The compiled form of every policy of a lowered file.
#[derive(Debug, Clone)]
pub struct Program {
    /// Indexed like [`Lowered::policies`]; `None` for `all(...)` policies.
    pub policies: Vec<Option<PolicyProgram>>,
}

/// One rule-list policy, compiled.
#[derive(Debug, Clone)]
pub struct PolicyProgram {
    combine: Combine,
    workspace: String,
    effects: Vec<Effect>,
    sets: Vec<RuleSet>,
    /// tool -> operation -> rule set, for tools named anywhere.
    by_tool: HashMap<String, HashMap<String, u32>>,
    /// operation -> rule set, for every other tool.
    other: HashMap<String, u32>,
}

/// The rules that apply to one (tool, operation), compiled.
#[derive(Debug, Clone, Default)]
struct RuleSet {
    /// cwd gates, in rule order.
    gates: Vec<u32>,
    /// Rules without patterns, which match every item, in rule order.
    always: Vec<u32>,
    path: Option<Automaton>,
    /// Pattern id -> (rule, negated).
    path_pats: Vec<(u32, bool)>,
    /// Negated path patterns: (pattern id, rule). A negated glob matches when
    /// its pattern does not, so these are checked by absence.
    negated: Vec<(u32, u32)>,
    text: Option<Automaton>,
    text_pats: Vec<u32>,
    words: Option<Automaton>,
    words_pats: Vec<u32>,
}

impl Program {
    /// Compiles every rule-list policy.
    pub fn build(low: &Lowered, limits: Limits) -> Result<Program, Vec<Diagnostic>> {
        let mut policies = Vec::with_capacity(low.policies.len());
        let mut errors = Vec::new();
        for p in &low.policies {
            match &p.body {
                PolicyBody::All(_) => policies.push(None),
                PolicyBody::Rules(list) => match PolicyProgram::build(low, list, limits) {
                    Ok(pp) => policies.push(Some(pp)),
                    Err(e) => {
                        errors.push(
                            Diagnostic::error("permc::too-large", format!("policy `{}` is too large to compile: {e}", p.name))
                                .label(p.loc, "this policy")
                                .help("split very large pattern lists across policies, or raise the compile limits"),
                        );
                        policies.push(None);
                    }
                },
            }
        }
        if errors.is_empty() {
            Ok(Program { policies })
        } else {
            Err(errors)
        }
    }
}

impl PolicyProgram {
    fn build(low: &Lowered, list: &RuleList, limits: Limits) -> Result<PolicyProgram, String> {
        // Every tool name that can be told apart: declared ones and those that
        // rules name. Any other tool behaves like an unnamed one.
        let mut tools: Vec<String> = low.tools.iter().map(|t| t.name.clone()).collect();
        for r in &list.rules {
            for t in r.tools.iter().flatten() {
                if t != "*" && !tools.contains(t) {
                    tools.push(t.clone());
                }
            }
        }
        let mut sets: Vec<RuleSet> = Vec::new();
        let mut dedup: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut set_for = |tool: Option<&str>, op: &str| -> Result<u32, String> {
            let members: Vec<u32> = list
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    tool.map_or_else(
                        || r.tools.as_ref().is_none_or(|t| t.iter().any(|n| n == "*")),
                        |t| r.applies_to_tool(t),
                    )
                })
                .filter(|(_, r)| r.applies_to_op(op))
                .map(|(i, _)| i as u32)
                .collect();
            if let Some(&id) = dedup.get(&members) {
                return Ok(id);
            }
            let set = RuleSet::build(list, &members, limits)?;
            sets.push(set);
            let id = (sets.len() - 1) as u32;
            dedup.insert(members, id);
            Ok(id)
        };
        let mut by_tool = HashMap::new();
        for t in &tools {
            let mut ops: Vec<String> = vec!["tool".to_string()];
            if let Some(&ti) = low.tool_index.get(t) {
                for s in &low.tools[ti as usize].stmts {
                    if !ops.contains(&s.op) {
                        ops.push(s.op.clone());
                    }
                }
            }
            let mut per_op = HashMap::new();
            for op in ops {
                let id = set_for(Some(t), &op)?;
                per_op.insert(op, id);
            }
            by_tool.insert(t.clone(), per_op);
        }
        let mut other = HashMap::new();
        other.insert("tool".to_string(), set_for(None, "tool")?);
        Ok(PolicyProgram {
            combine: list.combine,
            workspace: list.workspace.clone(),
            effects: list.rules.iter().map(|r| r.effect).collect(),
            sets,
            by_tool,
            other,
        })
    }

    /// The deciding rule for one item, or `None` for the policy default.
    pub fn select(&self, item: &Item) -> Option<u32> {
        let id = match self.by_tool.get(&item.tool) {
            Some(per_op) => per_op.get(&item.op),
            None => self.other.get(&item.op),
        }?;
        let set = self.sets.get(*id as usize)?;
        let mut cands: Vec<u32> = Vec::new();
        if let Subject::Command(c) = &item.subject {
            if let Some(cwd) = &c.cwd {
                if !set.gates.is_empty() && !crate::paths::is_within(cwd, &self.workspace) {
                    if self.combine == Combine::FirstMatch {
                        return set.gates.first().copied();
                    }
                    cands.extend(&set.gates);
                }
            }
        }
        match self.combine {
            Combine::FirstMatch => cands.extend(set.always.first()),
            Combine::Strictest => cands.extend(&set.always),
        }
        match &item.subject {
            Subject::Path(p) => {
                if let Some(a) = &set.path {
                    let hits = a.matches(p.as_bytes());
                    for pid in hits.iter() {
                        if let Some(&(rule, false)) = set.path_pats.get(pid.as_usize()) {
                            cands.push(rule);
                        }
                    }
                    for &(pid, rule) in &set.negated {
                        if !hits.contains(regex_automata::PatternID::new_unchecked(pid as usize)) {
                            cands.push(rule);
                        }
                    }
                }
            }
            Subject::Command(c) => {
                if let Some(a) = &set.text {
                    for pid in a.matches(c.canonical.as_bytes()).iter() {
                        cands.extend(set.text_pats.get(pid.as_usize()));
                    }
                }
                if let Some(a) = &set.words {
                    for pid in a.matches(c.words.join("\0").as_bytes()).iter() {
                        cands.extend(set.words_pats.get(pid.as_usize()));
                    }
                }
            }
            Subject::Bare => {}
        }
        match self.combine {
            Combine::FirstMatch => cands.into_iter().min(),
            Combine::Strictest => cands.into_iter().max_by_key(|&i| {
                (
                    self.effects
                        .get(i as usize)
                        .copied()
                        .unwrap_or(Effect::Deny),
                    std::cmp::Reverse(i),
                )
            }),
        }
    }
}

impl RuleSet {
    fn build(list: &RuleList, members: &[u32], limits: Limits) -> Result<RuleSet, String> {
        let mut set = RuleSet::default();
        let mut path_res: Vec<String> = Vec::new();
        let mut text_res: Vec<String> = Vec::new();
        let mut word_res: Vec<String> = Vec::new();
        for &i in members {
            let r = &list.rules[i as usize];
            if r.gate {
                set.gates.push(i);
                continue;
            }
            if r.matchers.is_empty() {
                set.always.push(i);
                continue;
            }
            for m in &r.matchers {
                match m {
                    ResolvedMatcher::Glob { regex, negated, .. } => {
                        if *negated {
                            set.negated.push((path_res.len() as u32, i));
                        }
                        set.path_pats.push((i, *negated));
                        path_res.push(regex.clone());
                    }
                    ResolvedMatcher::Regex { source, .. } => {
                        set.path_pats.push((i, false));
                        path_res.push(source.clone());
                        set.text_pats.push(i);
                        text_res.push(source.clone());
                    }
                    ResolvedMatcher::Prefix { words, .. } => {
                        let body: Vec<String> =
                            words.iter().map(|w| regex_syntax::escape(w)).collect();
                        set.words_pats.push(i);
                        word_res.push(format!(r"\A{}(?:\x00|\z)", body.join(r"\x00")));
                    }
                }
            }
        }
        let build = |res: &[String]| -> Result<Option<Automaton>, String> {
            if res.is_empty() {
                Ok(None)
            } else {
                Automaton::new(res, limits).map(Some)
            }
        };
        set.path = build(&path_res)?;
        set.text = build(&text_res)?;
        set.words = build(&word_res)?;
        Ok(set)
    }
}

impl Backend for Program {
    fn select(&self, policy: u32, item: &Item) -> Option<u32> {
        self.policies.get(policy as usize)?.as_ref()?.select(item)
    }
}
