//! `permc::dead-allow`: an allow that can never produce an allow.
//!
//! - Under `combine strictest`, an allow rule is dead when every input it
//!   matches is also matched by a stricter rule (deny or ask), which then
//!   decides. (cwd gates only add candidates outside the workspace, so they
//!   are left out: a finding without them holds with them.)
//! - Under `all(...)`, an allow rule of one member is dead when every input it
//!   decides in that member is denied by another member: one deny decides the
//!   composition, whatever the other items of the call. Both members must
//!   share a workspace, so that a call's items are the same for both. For
//!   commands, the walk is done twice, with the working directory inside the
//!   workspace and outside it (where the members' cwd gates fire).

use super::claims::{Claim, Expect};
use super::first_match::Seen;
use super::lang::Tri;
use super::sets::{ItemKind, Slots, deciders, gates, groups};
use super::{Ctx, also, labels, names};
use crate::diag::Diagnostic;
use crate::lower::{PolicyBody, RuleList};
use crate::syntax::ast::Effect;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::ControlFlow;

#[derive(Default)]
struct Facts {
    matched: Option<Seen>,
    may_live: bool,
    incomplete: bool,
    /// Stricter rules seen deciding its inputs.
    killers: BTreeMap<u32, Seen>,
}

pub(crate) fn check_strictest(cx: &mut Ctx, pid: u32, list: &RuleList) {
    let mut facts: HashMap<u32, Facts> = HashMap::new();
    for group in cx.groups(pid, list).iter() {
        let slots = Slots::new(cx, &[list], group);
        let order: Vec<u32> = slots.rules.iter().map(|&(_, r)| r).collect();
        let seen_of = Seen::maker(group, &slots);
        let effect = |s: usize| {
            list.rules
                .get(order[s] as usize)
                .map_or(Effect::Deny, |r| r.effect)
        };
        let record = |st: &[Tri], facts: &mut HashMap<u32, Facts>, witness: &dyn Fn() -> Seen| {
            let pairs: Vec<(u32, Tri)> = order.iter().copied().zip(st.iter().copied()).collect();
            let (ds, sure) = deciders(list, &pairs, &[], false);
            let allowed = ds.iter().any(|d| {
                d.and_then(|i| list.rules.get(i as usize))
                    .is_none_or(|r| r.effect == Effect::Allow)
            });
            for &(k, t) in &pairs {
                if t == Tri::No
                    || list
                        .rules
                        .get(k as usize)
                        .is_none_or(|r| r.effect != Effect::Allow)
                {
                    continue;
                }
                let f = facts.entry(k).or_default();
                if t == Tri::Yes && f.matched.is_none() {
                    f.matched = Some(witness());
                }
                if allowed {
                    f.may_live = true;
                } else if let (true, Some(Some(j))) = (sure, ds.first()) {
                    f.killers.entry(*j).or_insert_with(witness);
                }
            }
        };
        for ks in 0..slots.len() {
            let k = order[ks];
            if effect(ks) != Effect::Allow {
                continue;
            }
            for x in slots.candidates(&[ks], Some(ks), |st| st[ks] == Tri::Yes) {
                record(&slots.statuses(&x), &mut facts, &|| seen_of(&x));
            }
            if facts.get(&k).is_some_and(|f| f.may_live) {
                continue;
            }
            let include: Vec<usize> = (0..slots.len())
                .filter(|&s| s == ks || effect(s) > Effect::Allow)
                .collect();
            let complete = slots.walk(&include, Some(ks), |st, bytes| {
                record(st, &mut facts, &|| seen_of(&bytes()));
                if facts.get(&k).is_some_and(|f| f.may_live) {
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            let f = facts.entry(k).or_default();
            if !complete && !f.may_live {
                f.incomplete = true;
            }
        }
    }
    let home = cx.home(pid);
    for (i, r) in list.rules.iter().enumerate() {
        let Some(f) = facts.get(&(i as u32)) else {
            continue;
        };
        if r.effect != Effect::Allow || r.gate || f.may_live || f.matched.is_none() {
            continue;
        }
        if f.incomplete {
            cx.limit(
                pid,
                r,
                "dead-allow",
                "a walk over its rule sets exceeds the analysis limits",
            );
            continue;
        }
        let Some((&j, w)) = f.killers.iter().next() else {
            continue;
        };
        let killers: Vec<&crate::lower::ResolvedRule> = f
            .killers
            .keys()
            .filter_map(|j| list.rules.get(*j as usize))
            .collect();
        let only_deny = killers.iter().all(|k| k.effect == Effect::Deny);
        let mut d = Diagnostic::warning(
            "permc::dead-allow",
            format!(
                "allow rule `{}` never allows anything: under `combine strictest` every input it matches is also {} by {}",
                r.label,
                if only_deny {
                    "denied"
                } else {
                    "denied or asked about"
                },
                names(killers.iter().copied())
            ),
        );
        d = labels(d, r, home, "never takes effect");
        for k in &killers {
            d = also(d, k, home, &format!("stricter ({})", k.effect));
        }
        let shown = w.text(r.ops.is_none());
        d = d.witness(w.witness()).help(format!(
            "the strictest matching rule decides, so {shown} is decided by `{}`; narrow the stricter rules, \
             or use `combine first-match` with this allow first if it is meant as an exception",
            list.rules.get(j as usize).map_or("?", |e| e.label.as_str())
        ));
        let claims = vec![
            Claim {
                policy: pid,
                tool: w.site.0.clone(),
                op: w.site.1.clone(),
                subject: w.subject.clone(),
                expect: Expect::DecidedBy(Some(j)),
            },
            Claim {
                policy: pid,
                tool: w.site.0.clone(),
                op: w.site.1.clone(),
                subject: w.subject.clone(),
                expect: Expect::Matches(i as u32, true),
            },
        ];
        cx.push(d, claims);
    }
}

/// The rule-list policies of a composition, depth-first, once each.
fn members(cx: &Ctx, pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = vec![(pid, 0u32)];
    let mut seen = HashSet::new();
    while let Some((p, depth)) = stack.pop() {
        if depth > 64 || !seen.insert(p) {
            continue;
        }
        match cx.low.policies.get(p as usize).map(|x| &x.body) {
            Some(PolicyBody::Rules(_)) => out.push(p),
            Some(PolicyBody::All(children)) => {
                stack.extend(children.iter().rev().map(|&c| (c, depth + 1)))
            }
            None => {}
        }
    }
    out
}

fn rules_of<'a>(cx: &Ctx<'a>, pid: u32) -> Option<&'a RuleList> {
    match &cx.low.policies.get(pid as usize)?.body {
        PolicyBody::Rules(l) => Some(l),
        PolicyBody::All(_) => None,
    }
}

pub(crate) fn check_all(cx: &mut Ctx, pid: u32) {
    let ms = members(cx, pid);
    for &a in &ms {
        for &b in &ms {
            if a != b {
                check_pair(cx, pid, a, b);
            }
        }
    }
}

/// What one allow rule of member `a` meets in member `b`.
#[derive(Default, Clone)]
struct PairFacts {
    /// An input it decides that `b` denies, with `b`'s deciding rule.
    denied: Option<(Seen, Option<u32>)>,
    /// Some input it decides is not denied by `b`.
    not_denied: bool,
    /// An input it decides that `b` asks about, with `b`'s deciding rule.
    asked: Option<(Seen, Option<u32>)>,
    /// Some input it decides may be allowed by `b`.
    allowed: bool,
    /// A walk was cut short.
    incomplete: bool,
}

impl PairFacts {
    /// Nothing left to prove: `b` lets some of its inputs through.
    fn settled(&self, grant: bool) -> bool {
        self.not_denied && (!grant || self.allowed)
    }
}

/// Allows of member `a` whose every decided input member `b` denies.
fn check_pair(cx: &mut Ctx, all: u32, a: u32, b: u32) {
    let low = cx.low;
    let (Some(la), Some(lb)) = (rules_of(cx, a), rules_of(cx, b)) else {
        return;
    };
    if la.workspace != lb.workspace
        || !la
            .rules
            .iter()
            .any(|r| r.effect == Effect::Allow && !r.gate)
    {
        return;
    }
    let mut facts: HashMap<u32, PairFacts> = HashMap::new();
    for group in groups(low, &[la, lb]) {
        let slots = Slots::new(cx, &[la, lb], &group);
        let split = slots
            .rules
            .iter()
            .position(|&(li, _)| li == 1)
            .unwrap_or(slots.rules.len());
        let ga = gates(la, &group.members[0]);
        let gb = gates(lb, &group.members[1]);
        let modes: &[bool] = if group.kind == ItemKind::Command
            && (!ga.is_empty() || !gb.is_empty())
            && la.workspace != "/"
        {
            &[false, true]
        } else {
            &[false]
        };
        let seen_of = Seen::maker(&group, &slots);
        let ra: Vec<u32> = slots.rules[..split].iter().map(|&(_, r)| r).collect();
        let rb: Vec<u32> = slots.rules[split..].iter().map(|&(_, r)| r).collect();
        let eval = |st: &[Tri], facts: &mut HashMap<u32, PairFacts>, witness: &dyn Fn() -> Seen| {
            let pa: Vec<(u32, Tri)> = ra
                .iter()
                .copied()
                .zip(st[..split].iter().copied())
                .collect();
            let pb: Vec<(u32, Tri)> = rb
                .iter()
                .copied()
                .zip(st[split..].iter().copied())
                .collect();
            for &outside in modes {
                let (da, sure_a) = deciders(la, &pa, &ga, outside);
                let (db, sure_b) = deciders(lb, &pb, &gb, outside);
                let effect_b = |d: &Option<u32>| {
                    d.and_then(|i| lb.rules.get(i as usize))
                        .map_or(lb.default, |r| r.effect)
                };
                let b_denies = db.iter().all(|d| effect_b(d) == Effect::Deny);
                let b_blocks = db.iter().all(|d| effect_b(d) >= Effect::Ask);
                let sure = sure_a && sure_b && !outside;
                for d in &da {
                    let Some(k) = *d else { continue };
                    if la
                        .rules
                        .get(k as usize)
                        .is_none_or(|r| r.effect != Effect::Allow)
                    {
                        continue;
                    }
                    let f = facts.entry(k).or_default();
                    if !b_denies {
                        f.not_denied = true;
                    } else if sure && f.denied.is_none() {
                        f.denied = Some((witness(), db.first().copied().flatten()));
                    }
                    if !b_blocks {
                        f.allowed = true;
                    } else if sure && !b_denies && f.asked.is_none() {
                        f.asked = Some((witness(), db.first().copied().flatten()));
                    }
                }
            }
        };
        for ks in 0..split {
            let k = ra[ks];
            let Some(r) = la
                .rules
                .get(k as usize)
                .filter(|r| r.effect == Effect::Allow)
            else {
                continue;
            };
            let grant = is_grant(r);
            for x in slots.candidates(&[ks], Some(ks), |st| st[ks] == Tri::Yes) {
                eval(&slots.statuses(&x), &mut facts, &|| seen_of(&x));
            }
            if facts.get(&k).is_some_and(|f| f.settled(grant)) {
                continue;
            }
            let include: Vec<usize> = (0..slots.len()).collect();
            let complete = slots.walk(&include, Some(ks), |st, bytes| {
                eval(st, &mut facts, &|| seen_of(&bytes()));
                if facts.get(&k).is_some_and(|f| f.settled(grant)) {
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            let f = facts.entry(k).or_default();
            if !complete && !f.settled(grant) {
                f.incomplete = true;
            }
        }
    }
    let home = cx.home(all);
    // Grant statement (by location) -> its inert entries: (rule, witness, `b`'s rule).
    type Inert = Vec<(u32, Seen, Option<u32>)>;
    let mut inert_grants: BTreeMap<(crate::syntax::loc::FileId, u32, u32), Inert> = BTreeMap::new();
    let mut keys: Vec<u32> = facts.keys().copied().collect();
    keys.sort_unstable();
    for k in keys {
        let (Some(f), Some(r)) = (facts.get(&k).cloned(), la.rules.get(k as usize)) else {
            continue;
        };
        let dead = !f.not_denied && f.denied.is_some();
        let inert = is_grant(r) && !dead && !f.allowed && f.asked.is_some();
        if !dead && !inert {
            continue;
        }
        if f.incomplete {
            cx.limit(
                a,
                r,
                "dead-allow",
                "a walk over its rule sets exceeds the analysis limits",
            );
            continue;
        }
        let Some((w, by)) = (if dead { f.denied } else { f.asked }) else {
            continue;
        };
        let (an, bn, alln) = (
            cx.policy_name(a).to_string(),
            cx.policy_name(b).to_string(),
            cx.policy_name(all).to_string(),
        );
        let Some(comp) = low.policies.get(all as usize) else {
            continue;
        };
        let by_text = match by.and_then(|j| lb.rules.get(j as usize)) {
            Some(j) => format!("rule `{}` of `{bn}`", j.label),
            None => format!("the default of `{bn}`"),
        };
        let shown = w.text(r.ops.is_none() || is_grant(r));
        let mk = |policy, expect| Claim {
            policy,
            tool: w.site.0.clone(),
            op: w.site.1.clone(),
            subject: w.subject.clone(),
            expect,
        };
        let d = if dead {
            let mut d = Diagnostic::warning(
                "permc::dead-allow",
                format!(
                    "allow rule `{}` of `{an}` never takes effect in `{alln}`: `{bn}` denies every input it allows",
                    r.label
                ),
            );
            d = d.label(
                comp.loc,
                format!("`{bn}` denies whatever `{}` allows here", r.label),
            );
            d = also(d, r, home, "allows only what another member denies");
            if let Some(j) = by.and_then(|j| lb.rules.get(j as usize)) {
                d = also(d, j, home, "denies");
            }
            d.witness(w.witness()).help(format!(
                "`all(...)` keeps the strictest decision and one deny decides; {shown} is allowed by `{}` but denied by {by_text}. \
                 Allow it in `{bn}` too, or drop the rule",
                r.label
            ))
        } else {
            inert_grants
                .entry((r.loc.file, r.loc.start, r.loc.end))
                .or_default()
                .push((k, w.clone(), by));
            continue;
        };
        let claims = vec![
            mk(a, Expect::DecidedBy(Some(k))),
            mk(b, Expect::Effect(Effect::Deny)),
        ];
        cx.push(d, claims);
    }
    // One finding per `grants` statement, naming its inert entries.
    for found in inert_grants.into_values() {
        let Some(&(k, ref w, by)) = found.first() else {
            continue;
        };
        let (Some(r), Some(comp)) = (la.rules.get(k as usize), low.policies.get(all as usize))
        else {
            continue;
        };
        let (an, bn, alln) = (
            cx.policy_name(a).to_string(),
            cx.policy_name(b).to_string(),
            cx.policy_name(all).to_string(),
        );
        let entries: Vec<String> = found
            .iter()
            .filter_map(|(k, _, _)| la.rules.get(*k as usize))
            .map(|g| format!("`{}`", g.label.trim_start_matches("grant:")))
            .collect();
        let by_text = match by.and_then(|j| lb.rules.get(j as usize)) {
            Some(j) => format!("rule `{}` of `{bn}`", j.label),
            None => format!("the default of `{bn}`"),
        };
        let mut d = Diagnostic::warning(
            "permc::inert-grant",
            format!(
                "{} {} in `{an}` cannot skip approval in `{alln}`: `{bn}` asks about every call {}",
                if entries.len() == 1 {
                    "grant"
                } else {
                    "grants"
                },
                entries.join(", "),
                if entries.len() == 1 {
                    "it grants"
                } else {
                    "they grant"
                }
            ),
        );
        d = d.label(comp.loc, format!("`{bn}` still asks about what is granted"));
        d = also(d, r, home, "grants, but the composition keeps the approval");
        if let Some(j) = by.and_then(|j| lb.rules.get(j as usize)) {
            d = also(d, j, home, "asks");
        }
        let shown = w.text(true);
        d = d.witness(w.witness()).help(format!(
            "`all(...)` keeps the strictest decision, so {shown} still needs approval ({by_text}); \
             to let a grant skip approval, grant it in `{bn}` too, before its approval rules"
        ));
        let mk = |policy, expect| Claim {
            policy,
            tool: w.site.0.clone(),
            op: w.site.1.clone(),
            subject: w.subject.clone(),
            expect,
        };
        let claims = vec![
            mk(a, Expect::DecidedBy(Some(k))),
            mk(b, Expect::Effect(Effect::Ask)),
        ];
        cx.push(d, claims);
    }
}

/// A rule made by a `grants "..."` statement.
fn is_grant(r: &crate::lower::ResolvedRule) -> bool {
    r.label.starts_with("grant:") && r.name.is_none() && r.reason.is_none()
}
