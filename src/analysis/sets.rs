//! Rule sets per (tool, operation), partitioned as the compiled program
//! partitions them (`program::PolicyProgram::build`), with the kinds of item
//! each can really receive; and the product search over one set's rules.

use super::Ctx;
use super::claims::Subject;
use super::lang::{Comp, Kind, Lang, Spec, Tri};
use super::walk::{Search, Trail};
use crate::lower::{Lowered, OpKind, ResolvedMatcher, ResolvedRule, RuleList};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::rc::Rc;

/// The kind of item a (tool, operation) produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum ItemKind {
    Path,
    Command,
    /// A `raw` command statement: code, not shell.
    Raw,
    Bare,
}

impl ItemKind {
    pub(crate) fn subject(self) -> Option<Kind> {
        match self {
            ItemKind::Path => Some(Kind::Path),
            ItemKind::Command => Some(Kind::Command),
            ItemKind::Raw => Some(Kind::Raw),
            ItemKind::Bare => None,
        }
    }
}

/// Every (tool, operation) whose items of one kind meet the same rules.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub kind: ItemKind,
    /// Per rule list analysed together, its member rules in rule order.
    pub members: Vec<Vec<u32>>,
    /// The (tool, operation) pairs; tool `None` is any tool the file does not name.
    pub sites: Vec<(Option<String>, String)>,
}

/// The groups of `lists` (analysed together, e.g. two members of an `all`).
pub(crate) fn groups(low: &Lowered, lists: &[&RuleList]) -> Vec<Group> {
    let mut tools: Vec<String> = low.tools.iter().map(|t| t.name.clone()).collect();
    for list in lists {
        for r in &list.rules {
            for t in r.tools.iter().flatten() {
                if t != "*" && !tools.contains(t) {
                    tools.push(t.clone());
                }
            }
        }
    }
    let mut sites: Vec<(Option<String>, String, ItemKind)> = Vec::new();
    for t in &tools {
        match low
            .tool_index
            .get(t)
            .and_then(|&i| low.tools.get(i as usize))
        {
            Some(def) => {
                // A declared tool yields a bare `tool` item only when no
                // statement applies, which needs every statement to be
                // conditional.
                if def.stmts.iter().all(|s| s.when.is_some()) {
                    sites.push((Some(t.clone()), "tool".into(), ItemKind::Bare));
                }
                for s in &def.stmts {
                    let kind = match s.kind {
                        OpKind::Path => ItemKind::Path,
                        OpKind::Command if s.raw => ItemKind::Raw,
                        OpKind::Command => ItemKind::Command,
                        OpKind::Bare => ItemKind::Bare,
                    };
                    let site = (Some(t.clone()), s.op.clone(), kind);
                    if !sites.contains(&site) {
                        sites.push(site);
                    }
                }
            }
            None => sites.push((Some(t.clone()), "tool".into(), ItemKind::Bare)),
        }
    }
    sites.push((None, "tool".into(), ItemKind::Bare));

    let mut out: Vec<Group> = Vec::new();
    let mut index: HashMap<(ItemKind, Vec<Vec<u32>>), usize> = HashMap::new();
    for (tool, op, kind) in sites {
        let members: Vec<Vec<u32>> = lists
            .iter()
            .map(|list| {
                list.rules
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| match &tool {
                        Some(t) => r.applies_to_tool(t),
                        None => r
                            .tools
                            .as_ref()
                            .is_none_or(|ts| ts.iter().any(|n| n == "*")),
                    })
                    .filter(|(_, r)| r.applies_to_op(&op))
                    .map(|(i, _)| i as u32)
                    .collect()
            })
            .collect();
        match index.get(&(kind, members.clone())) {
            Some(&g) => out[g].sites.push((tool, op)),
            None => {
                index.insert((kind, members.clone()), out.len());
                out.push(Group {
                    kind,
                    members,
                    sites: vec![(tool, op)],
                });
            }
        }
    }
    out
}

/// The specs of a rule's matchers that can see subjects of `kind`, each
/// with whether it is negated.
pub(crate) fn matcher_specs(rule: &ResolvedRule, kind: Kind) -> Vec<(Spec, bool)> {
    rule.matchers
        .iter()
        .filter_map(|m| matcher_spec(m, kind))
        .collect()
}

#[allow(unreachable_patterns)]
pub(crate) fn matcher_spec(m: &ResolvedMatcher, kind: Kind) -> Option<(Spec, bool)> {
    match (m, kind) {
        (ResolvedMatcher::Glob { regex, negated, .. }, Kind::Path) => {
            Some((Spec::Glob(regex.clone()), *negated))
        }
        (ResolvedMatcher::Regex { source, .. }, k) => {
            Some((Spec::Search(source.clone(), k), false))
        }
        (ResolvedMatcher::Prefix { words, .. }, Kind::Command | Kind::Raw) => {
            Some((Spec::Prefix(words.clone(), kind), false))
        }
        _ => None,
    }
}

/// Witnesses a candidate search collects before it stops.
const CANDIDATES: usize = 12;

/// One slot per rule of a group (gates excluded: the callers decide when
/// they fire), each with its matchers' automata.
pub(crate) struct Slots {
    /// Slot -> (list number, rule index).
    pub rules: Vec<(usize, u32)>,
    /// Per slot, the answer before any matcher: `Yes` for a rule without
    /// patterns, `Maybe` for one whose automaton could not be built.
    pub base: Vec<Tri>,
    kind: Option<Kind>,
    domain: Option<Rc<Lang>>,
    /// Per slot, its matchers' automata and whether each is negated.
    langs: Vec<Vec<(Rc<Lang>, bool)>>,
    /// Rules whose automaton could not be built, with why.
    pub failed: Vec<(usize, u32, String)>,
}

impl Slots {
    /// Builds the slots of `group` for `lists` (in that order).
    pub(crate) fn new(cx: &mut Ctx, lists: &[&RuleList], group: &Group) -> Slots {
        let mut rules = Vec::new();
        let mut base = Vec::new();
        let mut langs = Vec::new();
        let mut failed = Vec::new();
        let kind = group.kind.subject();
        for (li, members) in group.members.iter().enumerate() {
            for &ri in members {
                let Some(r) = lists[li].rules.get(ri as usize) else {
                    continue;
                };
                if r.gate {
                    continue;
                }
                rules.push((li, ri));
                let mut mine = Vec::new();
                let mut b = if r.matchers.is_empty() {
                    Tri::Yes
                } else {
                    Tri::No
                };
                for (spec, negated) in kind.map(|k| matcher_specs(r, k)).unwrap_or_default() {
                    match cx.cache.get(&spec) {
                        Ok(lang) => mine.push((lang, negated)),
                        Err(e) => {
                            b = b.or(Tri::Maybe);
                            failed.push((li, ri, e));
                        }
                    }
                }
                base.push(b);
                langs.push(mine);
            }
        }
        let domain = kind.and_then(|k| cx.cache.get(&Spec::Domain(k)).ok());
        Slots {
            rules,
            base,
            kind,
            domain,
            langs,
            failed,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.rules.len()
    }

    /// Every slot's answer for one subject (bytes in the kind's encoding).
    pub(crate) fn statuses(&self, bytes: &[u8]) -> Vec<Tri> {
        let mut st = self.base.clone();
        for (slot, langs) in self.langs.iter().enumerate() {
            for (lang, negated) in langs {
                let t = lang.accepts(bytes);
                st[slot] = st[slot].or(if *negated { t.not() } else { t });
            }
        }
        st
    }

    /// The subject a witness's bytes stand for.
    /// Each slot's rule with its answer in `st`, in slot order.
    pub(crate) fn pairs(&self, st: &[Tri]) -> Vec<(u32, Tri)> {
        self.rules
            .iter()
            .map(|&(_, r)| r)
            .zip(st.iter().copied())
            .collect()
    }

    pub(crate) fn subject(&self, bytes: &[u8]) -> Subject {
        match self.kind {
            Some(k) => Subject::from_bytes(k, bytes),
            None => Subject::Bare,
        }
    }

    /// Walks the subjects of the group's kind, shortest first, with the
    /// matchers of the slots in `include` (the others answer `No`), calling
    /// `visit` with every slot's answer and the witness bytes. With `focus`,
    /// subjects that slot can no longer match are not explored. Bare items
    /// are one subject. Returns whether the walk was complete.
    pub(crate) fn walk(
        &self,
        include: &[usize],
        focus: Option<usize>,
        mut visit: impl FnMut(&[Tri], &dyn Fn() -> Vec<u8>) -> ControlFlow<()>,
    ) -> bool {
        let mut base = vec![Tri::No; self.base.len()];
        for &i in include {
            base[i] = self.base[i];
        }
        let (Some(kind), Some(domain)) = (self.kind, self.domain.clone()) else {
            return visit(&base, &Vec::new).is_continue();
        };
        let comps: Vec<Comp> = include
            .iter()
            .flat_map(|&slot| {
                self.langs[slot]
                    .iter()
                    .map(move |(l, n)| Comp::one(l.clone(), slot, *n))
            })
            .collect();
        let search = Search {
            kind,
            domain,
            comps,
            base,
            focus,
        };
        search.run(|st, trail: &Trail| visit(st, &|| search.prettier(trail.bytes(), st)))
    }

    /// Up to a few subjects for which `want` holds of the included slots'
    /// answers (found by a walk that stops early).
    pub(crate) fn candidates(
        &self,
        include: &[usize],
        focus: Option<usize>,
        want: impl Fn(&[Tri]) -> bool,
    ) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        self.walk(include, focus, |st, bytes| {
            if want(st) {
                out.push(bytes());
                if out.len() >= CANDIDATES {
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        });
        out
    }
}

/// The rules that may decide an item given each slot's answer, and whether
/// that is certain. `None` stands for the policy's default. `slots` holds
/// the list's rule indexes in slot order; `gates` fire when `outside`.
pub(crate) fn deciders(
    list: &RuleList,
    slots: &[(u32, Tri)],
    gates: &[u32],
    outside: bool,
) -> (Vec<Option<u32>>, bool) {
    let effect = |i: u32| {
        list.rules
            .get(i as usize)
            .map_or(crate::Effect::Deny, |r| r.effect)
    };
    match list.combine {
        crate::syntax::ast::Combine::FirstMatch => {
            if let Some(&g) = gates.first().filter(|_| outside) {
                return (vec![Some(g)], true);
            }
            let mut out = Vec::new();
            for &(ri, t) in slots {
                match t {
                    Tri::Yes => {
                        out.push(Some(ri));
                        let sure = out.len() == 1;
                        return (out, sure);
                    }
                    Tri::Maybe => out.push(Some(ri)),
                    Tri::No => {}
                }
            }
            out.push(None);
            let sure = out.len() == 1;
            (out, sure)
        }
        crate::syntax::ast::Combine::Strictest => {
            let mut yes: Vec<u32> = slots
                .iter()
                .filter(|(_, t)| *t == Tri::Yes)
                .map(|(r, _)| *r)
                .collect();
            if outside {
                yes.extend(gates);
            }
            // Strictest effect, then the lowest index.
            let best = yes
                .iter()
                .copied()
                .max_by_key(|&i| (effect(i), std::cmp::Reverse(i)));
            let mut out = vec![best];
            for &(ri, t) in slots {
                if t == Tri::Maybe && best.is_none_or(|b| effect(ri) >= effect(b)) {
                    out.push(Some(ri));
                }
            }
            let sure = out.len() == 1;
            (out, sure)
        }
    }
}

/// The cwd gates of a group's members of one list, in rule order.
pub(crate) fn gates(list: &RuleList, members: &[u32]) -> Vec<u32> {
    members
        .iter()
        .copied()
        .filter(|&i| list.rules.get(i as usize).is_some_and(|r| r.gate))
        .collect()
}
