//! `permc::universal-rule`: a rule whose matchers together match every
//! subject of a kind it sees, though none of them says "everything" (the
//! classic case: `"!src/**", "!tests/**"`; each negated entry matches what
//! the other excludes). `permc::empty-matcher`: a matcher no normalised
//! subject can match (a regex anchored against something never there, such
//! as `/^\s+$/` on a path; a negated glob whose pattern matches every path).
//! Globs that can never match for a syntactic reason (`./`, `//`, a trailing
//! slash) are already reported when the file is lowered, and are not
//! reported twice.

use super::claims::{Claim, Expect, Subject};
use super::lang::{Comp, Kind, Spec, Tri};
use super::sets::matcher_spec;
use super::walk::Search;
use super::{Ctx, kind_word, labels};
use crate::diag::Diagnostic;
use crate::lower::{ResolvedMatcher, ResolvedRule, RuleList};
use std::collections::BTreeSet;
use std::ops::ControlFlow;

/// Sources that plainly say "everything": no finding for them.
const PLAINLY_ALL_GLOBS: &[&str] = &["**", "/**", "**/*", "/**/*"];
const PLAINLY_ALL_REGEXES: &[&str] = &[
    "",
    ".*",
    "^",
    "$",
    "^.*",
    ".*$",
    "^.*$",
    "(?s).*",
    "(?s:.*)",
    "^(?s:.*)$",
];

/// The subject kinds each rule of `list` meets, from its rule sets.
pub(crate) fn kinds_by_rule(cx: &Ctx, pid: u32, list: &RuleList) -> Vec<BTreeSet<Kind>> {
    let mut out = vec![BTreeSet::new(); list.rules.len()];
    for g in cx.groups(pid, list).iter() {
        let Some(k) = g.kind.subject() else { continue };
        for &r in &g.members[0] {
            if let Some(set) = out.get_mut(r as usize) {
                set.insert(k);
            }
        }
    }
    out
}

pub(crate) fn check(cx: &mut Ctx, pid: u32, list: &RuleList) {
    let kinds = kinds_by_rule(cx, pid, list);
    for (i, r) in list.rules.iter().enumerate() {
        if r.gate || r.matchers.is_empty() {
            continue;
        }
        let ks = &kinds[i];
        for &k in ks {
            universal(cx, pid, i as u32, r, k);
        }
        for m in &r.matchers {
            empty(cx, pid, r, m, ks);
        }
    }
}

fn plainly_all(m: &ResolvedMatcher) -> bool {
    #[allow(unreachable_patterns)]
    match m {
        ResolvedMatcher::Glob {
            source,
            anchored,
            negated: false,
            ..
        } => {
            PLAINLY_ALL_GLOBS.contains(&source.as_str())
                || PLAINLY_ALL_GLOBS.contains(&anchored.as_str())
        }
        ResolvedMatcher::Regex { source, .. } => PLAINLY_ALL_REGEXES.contains(&source.as_str()),
        _ => false,
    }
}

fn show_matcher(m: &ResolvedMatcher) -> String {
    #[allow(unreachable_patterns)]
    match m {
        ResolvedMatcher::Glob {
            source, negated, ..
        } => format!("glob `{}{source}`", if *negated { "!" } else { "" }),
        ResolvedMatcher::Regex { source, .. } => format!("regex `/{source}/`"),
        ResolvedMatcher::Prefix { words, .. } => format!("`prefix \"{}\"`", words.join(" ")),
        _ => "this matcher".to_string(),
    }
}

/// One search over a rule's matchers of kind `k`, one slot per matcher.
fn search(cx: &mut Ctx, r: &ResolvedRule, k: Kind) -> Result<(Search, Vec<usize>), String> {
    let domain = cx.cache.get(&Spec::Domain(k))?;
    let mut items = Vec::new();
    let mut which = Vec::new();
    for (mi, m) in r.matchers.iter().enumerate() {
        if let Some((spec, negated)) = matcher_spec(m, k) {
            items.push((spec, which.len(), negated));
            which.push(mi);
        }
    }
    let (comps, failed) = cx.cache.comps(items);
    if let Some((_, why)) = failed.into_iter().next() {
        return Err(why);
    }
    let base = vec![Tri::No; which.len()];
    Ok((
        Search {
            kind: k,
            domain,
            comps,
            base,
            focus: None,
        },
        which,
    ))
}

fn universal(cx: &mut Ctx, pid: u32, ri: u32, r: &ResolvedRule, k: Kind) {
    if r.matchers.iter().any(plainly_all) {
        return;
    }
    let (s, which) = match search(cx, r, k) {
        Ok(x) => x,
        Err(why) => {
            return cx.limit(
                pid,
                r,
                "universal-rule",
                &format!("an automaton exceeds the analysis limits ({why})"),
            );
        }
    };
    if which.is_empty() {
        return;
    }
    let mut refuted = false;
    // A subject the first matcher misses but the rule matches, naming the
    // matcher that takes it; else the shortest subject.
    let mut example: Option<(Vec<u8>, Option<usize>)> = None;
    let complete = s.run(|st, trail| {
        let any = st.iter().copied().fold(Tri::No, Tri::or);
        if any != Tri::Yes {
            refuted = true;
            return ControlFlow::Break(());
        }
        let better = match &example {
            None => true,
            Some((_, None)) => st[0] == Tri::No,
            Some(_) => false,
        };
        if better {
            let by = (st[0] == Tri::No)
                .then(|| st.iter().position(|t| *t == Tri::Yes))
                .flatten();
            example = Some((trail.bytes(), by));
        }
        ControlFlow::Continue(())
    });
    if refuted {
        return;
    }
    if !complete {
        return cx.limit(
            pid,
            r,
            "universal-rule",
            "the walk exceeds the analysis limits",
        );
    }
    let Some((bytes, by)) = example else { return };
    let subject = Subject::from_bytes(k, &bytes);
    let shown = subject.show();
    let home = cx.home(pid);
    let mut d = Diagnostic::warning(
        "permc::universal-rule",
        format!("rule `{}` matches every {} it sees", r.label, kind_word(k)),
    );
    d = labels(d, r, home, &format!("matches every {}", kind_word(k)));
    let negated = r
        .matchers
        .iter()
        .filter(|m| matches!(m, ResolvedMatcher::Glob { negated: true, .. }))
        .count();
    let help = match by
        .and_then(|b| which.get(b))
        .and_then(|&mi| r.matchers.get(mi))
    {
        Some(m) if negated > 1 => format!(
            "a rule matches when any of its entries matches, so negated entries add up to everything: `{shown}` is excluded by {} \
             but matched by {}; to act on what lies outside all of them, put a rule for the excluded patterns first and follow it with this rule without them",
            show_matcher(&r.matchers[which[0]]),
            show_matcher(m)
        ),
        Some(m) => format!(
            "a rule matches when any of its entries matches: `{shown}` is missed by {} but matched by {}; if every {} is meant, drop the patterns",
            show_matcher(&r.matchers[which[0]]),
            show_matcher(m),
            kind_word(k)
        ),
        None => format!(
            "{} matches every {}, e.g. `{shown}`; if that is meant, drop the pattern, else narrow it",
            show_matcher(&r.matchers[which[0]]),
            kind_word(k)
        ),
    };
    d = d.witness(shown).help(help);
    let claims = claim_sites(cx, pid, ri, k, &subject);
    cx.push(d, claims);
}

/// A `Matches` claim at one site of the rule with subjects of kind `k`.
pub(crate) fn claim_sites(cx: &Ctx, pid: u32, ri: u32, k: Kind, subject: &Subject) -> Vec<Claim> {
    let Some(crate::lower::PolicyBody::Rules(list)) =
        cx.low.policies.get(pid as usize).map(|p| &p.body)
    else {
        return Vec::new();
    };
    cx.groups(pid, list)
        .iter()
        .filter(|g| g.kind.subject() == Some(k) && g.members[0].contains(&ri))
        .flat_map(|g| g.sites.first().cloned())
        .take(1)
        .map(|(tool, op)| Claim {
            policy: pid,
            tool,
            op,
            subject: subject.clone(),
            expect: Expect::Matches(ri, true),
        })
        .collect()
}

fn empty(cx: &mut Ctx, pid: u32, r: &ResolvedRule, m: &ResolvedMatcher, kinds: &BTreeSet<Kind>) {
    #[allow(unreachable_patterns)]
    let (loc, already) = match m {
        ResolvedMatcher::Glob {
            anchored,
            negated,
            loc,
            ..
        } => (
            *loc,
            !*negated && crate::lower::patterns::never_matches(anchored).is_some(),
        ),
        ResolvedMatcher::Regex { loc, .. } | ResolvedMatcher::Prefix { loc, .. } => (*loc, false),
        _ => return,
    };
    if already {
        return;
    }
    let seen: Vec<Kind> = kinds
        .iter()
        .copied()
        .filter(|&k| matcher_spec(m, k).is_some())
        .collect();
    if seen.is_empty() {
        return;
    }
    for &k in &seen {
        let Some((spec, negated)) = matcher_spec(m, k) else {
            return;
        };
        let (domain, lang) = match (cx.cache.get(&Spec::Domain(k)), cx.cache.get(&spec)) {
            (Ok(d), Ok(l)) => (d, l),
            (Err(why), _) | (_, Err(why)) => {
                return cx.limit(
                    pid,
                    r,
                    "empty-matcher",
                    &format!("an automaton exceeds the analysis limits ({why})"),
                );
            }
        };
        let s = Search {
            kind: k,
            domain,
            comps: vec![Comp::one(lang, 0, negated)],
            base: vec![Tri::No],
            focus: None,
        };
        let mut hit = false;
        let complete = s.run(|st, _| {
            if st[0] != Tri::No {
                hit = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        if hit {
            return;
        }
        if !complete {
            return cx.limit(
                pid,
                r,
                "empty-matcher",
                "the walk exceeds the analysis limits",
            );
        }
    }
    let what = seen
        .iter()
        .map(|k| format!("{}s", kind_word(*k)))
        .collect::<Vec<_>>()
        .join(" or ");
    let mut d = Diagnostic::warning(
        "permc::empty-matcher",
        format!("{} can never match", show_matcher(m)),
    );
    d = d.label(
        loc,
        format!("matches no normalised {}", what.trim_end_matches('s')),
    );
    d = super::via(d, r);
    let help = match m {
        ResolvedMatcher::Glob { negated: true, .. } => {
            "the pattern matches every path, so its negation matches none; drop the `!`, or the entry".to_string()
        }
        _ if seen.contains(&Kind::Path) => format!(
            "it is tested against {what}: paths are absolute and normalised (they start with `/` and have no `.`, `..`, `//` or trailing `/`)"
        ),
        _ => format!("it is tested against {what}: a command's words joined by single spaces"),
    };
    cx.push(d.help(help), Vec::new());
}
