//! First-match policies: `permc::shadowed-rule` (earlier rules decide every
//! input a rule matches) and `permc::partly-shadowed` (a laxer earlier rule
//! decides some of a stricter later rule's inputs).
//!
//! For every rule set the product walk answers, per class of input, which
//! rules match; the first matching rule decides. A rule is shadowed when it
//! matches some input but decides none (proven only by a complete walk). A
//! later rule `k` is partly shadowed by an earlier `j` when `j` is laxer than
//! `k` (allow before deny or ask, ask before deny), `j` decides an input `k`
//! matches, and `j` also decides an input `k` does not match. The last
//! condition spares the intended "exception first" layout, where a narrow
//! allow is carved out of a broad deny that follows it (`allow
//! "/workspace/**"` then `deny "**"`): there every input the allow decides is
//! inside the deny.
//!
//! cwd gates run before every rule but only for a working directory outside
//! the workspace; every command can also run inside it, so gates never
//! shadow ordinary rules. A gate after another gate of the same rule set
//! never fires, and is reported as shadowed.

use super::claims::{Claim, Expect, Subject};
use super::lang::Tri;
use super::sets::{Group, ItemKind, Slots, deciders, gates};
use super::{Ctx, also, effect_word, labels};
use crate::diag::Diagnostic;
use crate::lower::RuleList;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::ControlFlow;

/// A witness: the site (tool, operation) and subject.
#[derive(Clone)]
pub(crate) struct Seen {
    pub site: (Option<String>, String),
    pub subject: Subject,
}

impl Seen {
    /// How the walks of one group turn an accepted byte string into a
    /// witness: the group's first (tool, operation) site and the subject.
    pub(crate) fn maker<'a>(group: &Group, slots: &'a Slots) -> impl Fn(&[u8]) -> Seen + 'a {
        let site = group
            .sites
            .first()
            .cloned()
            .unwrap_or((None, "tool".into()));
        move |bytes: &[u8]| Seen {
            site: site.clone(),
            subject: slots.subject(bytes),
        }
    }

    /// The witness for the diagnostic: the subject, or the tool of a bare item.
    pub(crate) fn witness(&self) -> String {
        match (&self.subject, &self.site.0) {
            (Subject::Bare, Some(t)) => t.clone(),
            (Subject::Bare, None) => "any tool the file does not name".to_string(),
            (s, _) => s.show(),
        }
    }

    /// The witness in a sentence; with the tool when the rule is about
    /// tools rather than subjects.
    pub(crate) fn text(&self, tool_level: bool) -> String {
        match (&self.subject, &self.site.0) {
            (Subject::Bare, Some(t)) => format!("a call of `{t}`"),
            (Subject::Bare, None) => "a call of a tool the file does not name".to_string(),
            (s, Some(t)) if tool_level => format!("`{}` ({} by `{t}`)", s.show(), self.site.1),
            (s, _) => format!("`{}`", s.show()),
        }
    }
}

#[derive(Default)]
struct Facts {
    /// Definitely matches some input.
    matched: bool,
    /// May decide some input.
    may_decide: bool,
    /// A walk that could prove it shadowed did not finish.
    incomplete: bool,
    /// Earlier rules that decide its inputs, with a first witness.
    covered_by: BTreeMap<u32, Seen>,
}

/// What the answers of one subject say about each rule.
fn record(
    list: &RuleList,
    slots: &Slots,
    st: &[Tri],
    facts: &mut HashMap<u32, Facts>,
    witness: &mut dyn FnMut() -> Seen,
) {
    let pairs = slots.pairs(st);
    let (ds, _) = deciders(list, &pairs, &[], false);
    let first_yes = pairs.iter().find(|(_, t)| *t == Tri::Yes).map(|(r, _)| *r);
    let mut seen: Option<Seen> = None;
    for &(k, t) in &pairs {
        if t == Tri::No {
            continue;
        }
        let f = facts.entry(k).or_default();
        f.matched |= t == Tri::Yes;
        if ds.contains(&Some(k)) {
            f.may_decide = true;
        } else if let Some(j) = first_yes.filter(|&j| j < k) {
            f.covered_by
                .entry(j)
                .or_insert_with(|| seen.get_or_insert_with(&mut *witness).clone());
        }
    }
}

/// Whether slot `j` certainly decides a subject with these answers.
fn decides(list: &RuleList, slots: &Slots, st: &[Tri], j: usize) -> bool {
    let pairs = slots.pairs(st);
    let (ds, sure) = deciders(list, &pairs, &[], false);
    sure && ds.first() == Some(&Some(slots.rules[j].1))
}

pub(crate) fn check(cx: &mut Ctx, pid: u32, list: &RuleList) {
    let mut facts: HashMap<u32, Facts> = HashMap::new();
    // k -> (j, an input j decides and k matches).
    let mut partly: BTreeMap<u32, (u32, Seen)> = BTreeMap::new();
    let mut failed_noted: HashSet<u32> = HashSet::new();

    for group in cx.groups(pid, list).iter() {
        let slots = Slots::new(cx, &[list], group);
        for (_, ri, why) in &slots.failed {
            if let Some(r) = list
                .rules
                .get(*ri as usize)
                .filter(|_| failed_noted.insert(*ri))
            {
                cx.limit(
                    pid,
                    r,
                    "shadowing",
                    &format!("its automaton exceeds the analysis limits ({why})"),
                );
            }
        }
        let seen_of = Seen::maker(group, &slots);
        for ks in 0..slots.len() {
            let k = slots.rules[ks].1;
            // Cheap first: a few inputs the rule matches, judged with every rule.
            for x in slots.candidates(&[ks], Some(ks), |st| st[ks] == Tri::Yes) {
                let st = slots.statuses(&x);
                record(list, &slots, &st, &mut facts, &mut || seen_of(&x));
            }
            if facts.get(&k).is_some_and(|f| f.may_decide) {
                continue;
            }
            // Else every input it can match, with every earlier rule.
            let upto: Vec<usize> = (0..=ks).collect();
            let complete = slots.walk(&upto, Some(ks), |st, bytes| {
                record(list, &slots, st, &mut facts, &mut || seen_of(&bytes()));
                if facts.get(&k).is_some_and(|f| f.may_decide) {
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            let f = facts.entry(k).or_default();
            if !complete && !f.may_decide {
                f.incomplete = true;
            }
        }
        // Partly shadowed: a laxer earlier rule decides an input this one
        // matches, and also one it does not match.
        for ks in 0..slots.len() {
            let (_, k) = slots.rules[ks];
            let Some(r) = list.rules.get(k as usize) else {
                continue;
            };
            if partly.contains_key(&k) || !facts.get(&k).is_some_and(|f| f.may_decide) {
                continue;
            }
            for js in 0..ks {
                let j = slots.rules[js].1;
                if list
                    .rules
                    .get(j as usize)
                    .is_none_or(|e| e.effect >= r.effect)
                {
                    continue;
                }
                // Cheap first: do the two overlap at all?
                if slots
                    .candidates(&[js, ks], Some(ks), |st| {
                        st[js] == Tri::Yes && st[ks] == Tri::Yes
                    })
                    .is_empty()
                {
                    continue;
                }
                let mut upto: Vec<usize> = (0..=js).collect();
                upto.push(ks);
                let find = |want_k: Tri| {
                    let mut hit = None;
                    slots.walk(
                        &upto,
                        Some(if want_k == Tri::Yes { ks } else { js }),
                        |st, bytes| {
                            if st[ks] == want_k && decides(list, &slots, st, js) {
                                hit = Some(bytes());
                                return ControlFlow::Break(());
                            }
                            ControlFlow::Continue(())
                        },
                    );
                    hit
                };
                let Some(inside) = find(Tri::Yes) else {
                    continue;
                };
                if find(Tri::No).is_none() {
                    continue;
                }
                partly.insert(k, (j, seen_of(&inside)));
                break;
            }
        }
    }

    let home = cx.home(pid);
    for (i, r) in list.rules.iter().enumerate() {
        let k = i as u32;
        let Some(f) = facts.get(&k) else { continue };
        if r.gate || !f.matched || f.may_decide {
            continue;
        }
        if f.incomplete {
            cx.limit(
                pid,
                r,
                "shadowing",
                "a walk over its rule sets exceeds the analysis limits",
            );
            continue;
        }
        report_shadowed(cx, pid, list, k, f, home);
    }
    for (&k, (j, w)) in &partly {
        let (Some(r), Some(e)) = (list.rules.get(k as usize), list.rules.get(*j as usize)) else {
            continue;
        };
        if facts.get(&k).is_some_and(|f| !f.may_decide) {
            continue;
        }
        let shown = w.text(r.ops.is_none() || e.ops.is_none());
        let mut d = Diagnostic::warning(
            "permc::partly-shadowed",
            format!(
                "rule `{}` is partly shadowed by the earlier rule `{}`",
                r.label, e.label
            ),
        );
        d = labels(
            d,
            r,
            home,
            &format!("some of its inputs are decided first by `{}`", e.label),
        );
        d = also(d, e, home, &format!("{} first", effect_word(e.effect)));
        d = d.witness(w.witness()).help(format!(
            "first match wins: {shown} is matched by both, and `{}` {} it before this rule can {}; \
             move this rule above `{}`, or narrow `{}`",
            e.label,
            past(e.effect),
            r.effect,
            e.label,
            e.label
        ));
        let claims = vec![
            claim(pid, w, Expect::DecidedBy(Some(*j))),
            claim(pid, w, Expect::Matches(k, true)),
        ];
        cx.push(d, claims);
    }
    check_gates(cx, pid, list, home);
}

fn report_shadowed(
    cx: &mut Ctx,
    pid: u32,
    list: &RuleList,
    k: u32,
    f: &Facts,
    home: crate::syntax::loc::FileId,
) {
    let Some(r) = list.rules.get(k as usize) else {
        return;
    };
    let covers: Vec<(u32, &Seen)> = f.covered_by.iter().map(|(j, w)| (*j, w)).collect();
    let differ = covers.iter().find(|(j, _)| {
        list.rules
            .get(*j as usize)
            .is_some_and(|e| e.effect != r.effect)
    });
    let Some(&(j, w)) = differ.or(covers.first()) else {
        return;
    };
    let Some(e) = list.rules.get(j as usize) else {
        return;
    };
    let shown = w.text(r.ops.is_none() || e.ops.is_none());
    let mut d = Diagnostic::warning(
        "permc::shadowed-rule",
        format!(
            "rule `{}` never decides anything: earlier rules match every input it matches",
            r.label
        ),
    );
    d = labels(d, r, home, "never reached");
    for (jj, _) in &covers {
        if let Some(other) = list.rules.get(*jj as usize) {
            d = also(d, other, home, &format!("decides first ({})", other.effect));
        }
    }
    let help = if differ.is_some() {
        format!(
            "the outcome would differ: `{}` {} {shown}, which this rule would {}; \
             move this rule above `{}` if it should win, or delete it",
            e.label,
            effect_word(e.effect),
            r.effect,
            e.label
        )
    } else {
        format!(
            "removing it changes no decision (the earlier rules also {}); delete it",
            verb(r.effect)
        )
    };
    d = d.witness(w.witness()).help(help);
    let claims = vec![
        claim(pid, w, Expect::DecidedBy(Some(j))),
        claim(pid, w, Expect::Matches(k, true)),
    ];
    cx.push(d, claims);
}

/// A later cwd gate of a rule set never fires: the first one decides.
fn check_gates(cx: &mut Ctx, pid: u32, list: &RuleList, home: crate::syntax::loc::FileId) {
    if list.workspace == "/" {
        return;
    }
    // Gate -> the first gate of every command set that holds it (`None`
    // where it is the first).
    let mut firsts: BTreeMap<u32, Vec<Option<u32>>> = BTreeMap::new();
    for group in cx
        .groups(pid, list)
        .iter()
        .filter(|g| g.kind == ItemKind::Command)
    {
        let gs = gates(list, &group.members[0]);
        for (n, &g) in gs.iter().enumerate() {
            firsts.entry(g).or_default().push((n > 0).then_some(gs[0]));
        }
    }
    for (g, all) in firsts {
        let Some(Some(first)) = all
            .iter()
            .try_fold(None, |acc, f| f.map(|f| acc.or(Some(f))))
        else {
            continue;
        };
        let (Some(r), Some(e)) = (list.rules.get(g as usize), list.rules.get(first as usize))
        else {
            continue;
        };
        let mut d = Diagnostic::warning(
            "permc::shadowed-rule",
            format!(
                "cwd gate `{}` never fires: the earlier gate `{}` decides first",
                r.label, e.label
            ),
        );
        d = labels(d, r, home, "never reached");
        d = also(d, e, home, &format!("decides first ({})", e.effect));
        let help = if e.effect != r.effect {
            format!(
                "gates run before the other rules, in order, and the first one decides every command run outside \
                 the workspace; the outcome would differ ({} instead of {}): keep one gate",
                e.effect, r.effect
            )
        } else {
            "gates run before the other rules, in order, and the first one decides every command run outside the workspace; delete this one".to_string()
        };
        cx.push(d.help(help), Vec::new());
    }
}

fn claim(pid: u32, w: &Seen, expect: Expect) -> Claim {
    Claim {
        policy: pid,
        tool: w.site.0.clone(),
        op: w.site.1.clone(),
        subject: w.subject.clone(),
        expect,
    }
}

fn past(e: crate::Effect) -> &'static str {
    match e {
        crate::Effect::Allow => "allows",
        crate::Effect::Ask => "asks about",
        crate::Effect::Deny => "denies",
    }
}

fn verb(e: crate::Effect) -> &'static str {
    match e {
        crate::Effect::Allow => "allow",
        crate::Effect::Ask => "ask",
        crate::Effect::Deny => "deny",
    }
}
