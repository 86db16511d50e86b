//! The documented mistakes of the reference systems that are language
//! constructs in permc. Each is one function over the lowered file, listed
//! in [`CHECKS`]; adding a lint for a new construct is adding one function
//! and one entry.
//!
//! Covered elsewhere: an empty `all()` (`permc::empty-all`) and a cwd gate
//! with patterns (`permc::gate-with-patterns`) when lowering; a broad allow
//! before a narrow deny (`permc::partly-shadowed`, `permc::shadowed-rule`);
//! an unanchored exec pattern (`permc::unanchored-regex`); a grant that
//! cannot skip approval (`permc::inert-grant`, in `dead`, which has the
//! composition walk).
//!
//! Not lintable from a `.perm` file today: an empty `grants ""` (lowering
//! keeps no trace of an empty statement: it would need the statement's
//! location in the lowered policy), an empty child rule list and interrupt
//! rules without guidance under a `guide` deny policy (both are host
//! settings of the session API; `Session::warnings` reports the latter).

use super::claims::{Claim, Expect, Subject};
use super::lang::Tri;
use super::sets::{Slots, deciders};
use super::{Ctx, also, labels};
use crate::diag::Diagnostic;
use crate::lower::{PolicyBody, RuleList};
use crate::syntax::ast::{Combine, Effect};
use std::collections::BTreeSet;
use std::ops::ControlFlow;

/// One documented mistake: reads the context, pushes findings.
type Check = fn(&mut Ctx);

const CHECKS: &[Check] = &[wildcard_tool_deny, bare_tool_name];

pub(crate) fn check(cx: &mut Ctx) {
    for c in CHECKS {
        c(cx);
    }
}

/// Tools hosts leave open by default (the TypeScript SDK's read-scope and
/// task tools), which a `deny tool "*"` blocks by name.
const READ_SCOPE: &[&str] = &[
    "Read",
    "Glob",
    "Grep",
    "TaskCreate",
    "TaskList",
    "TaskGet",
    "TaskUpdate",
];

/// Every tool name the file declares or any rule names.
fn tool_names(cx: &Ctx) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = cx.low.tools.iter().map(|t| t.name.clone()).collect();
    for p in &cx.low.policies {
        if let PolicyBody::Rules(list) = &p.body {
            for r in &list.rules {
                out.extend(r.tools.iter().flatten().filter(|t| *t != "*").cloned());
            }
        }
    }
    out
}

fn root_lists<'a>(cx: &Ctx<'a>) -> Vec<(u32, &'a RuleList)> {
    cx.low
        .root_policies
        .iter()
        .filter_map(|&pid| match &cx.low.policies.get(pid as usize)?.body {
            PolicyBody::Rules(l) => Some((pid, l)),
            PolicyBody::All(_) => None,
        })
        .collect()
}

/// `deny tool "*"` also denies Read, Glob, Grep and the task tools (the
/// TypeScript SDK trap): reported when it blocks one of them and the file
/// names one of them, or when rules follow it.
fn wildcard_tool_deny(cx: &mut Ctx) {
    let named = tool_names(cx);
    for (pid, list) in root_lists(cx) {
        for (i, r) in list.rules.iter().enumerate() {
            let wildcard = r.effect == Effect::Deny
                && r.ops.is_none()
                && r.matchers.is_empty()
                && r.tools.as_ref().is_some_and(|t| t.iter().any(|n| n == "*"));
            if !wildcard {
                continue;
            }
            let mentions = READ_SCOPE.iter().any(|t| named.contains(*t));
            let followed = list.combine == Combine::FirstMatch && i + 1 < list.rules.len();
            if !mentions && !followed {
                continue;
            }
            let mut blocked: Vec<(&str, Claim)> = Vec::new();
            for t in READ_SCOPE {
                if let Some(c) = blocks(cx, pid, list, i as u32, t, named.contains(*t)) {
                    blocked.push((t, c));
                }
            }
            if blocked.is_empty() {
                continue;
            }
            let home = cx.home(pid);
            let tools: Vec<String> = blocked.iter().map(|(t, _)| format!("`{t}`")).collect();
            let mut d = Diagnostic::warning(
                "permc::wildcard-tool-deny",
                format!(
                    "`deny tool \"*\"` also denies the read-scope tools {}",
                    tools.join(", ")
                ),
            );
            d = labels(d, r, home, "matches every tool by name");
            let first = blocked[0].0;
            d = d.witness(first).help(format!(
                "the wildcard matches every tool by name, read-scope ones too{}; hosts usually leave reads open: \
                 list the tools to deny by name, or put `allow tool {}` before the wildcard",
                if followed { ", and no rule after it is reached for the tools it denies" } else { "" },
                blocked.iter().map(|(t, _)| *t).collect::<Vec<_>>().join(", ")
            ));
            let claims = blocked.into_iter().map(|(_, c)| c).collect();
            cx.push(d, claims);
        }
    }
}

/// Whether the wildcard rule `w` decides (denies) some item of tool `t`, with a claim.
fn blocks(cx: &mut Ctx, pid: u32, list: &RuleList, w: u32, t: &str, named: bool) -> Option<Claim> {
    for g in cx.groups(pid, list).iter() {
        let Some(site) = g
            .sites
            .iter()
            .find(|(tool, _)| {
                if named {
                    tool.as_deref() == Some(t)
                } else {
                    tool.is_none()
                }
            })
            .cloned()
        else {
            continue;
        };
        if !g.members[0].contains(&w) {
            continue;
        }
        let slots = Slots::new(cx, &[list], g);
        let Some(ws) = slots.rules.iter().position(|&(_, r)| r == w) else {
            continue;
        };
        let order: Vec<u32> = slots.rules.iter().map(|&(_, r)| r).collect();
        let mut found = None;
        let upto: Vec<usize> = (0..=ws).collect();
        slots.walk(&upto, Some(ws), |st, bytes| {
            let pairs: Vec<(u32, Tri)> = order.iter().copied().zip(st.iter().copied()).collect();
            let (ds, sure) = deciders(list, &pairs, &[], false);
            if sure && ds.first() == Some(&Some(w)) {
                found = Some(slots.subject(&bytes()));
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        if let Some(subject) = found {
            let tool = Some(t.to_string()).filter(|_| named);
            let claim = Claim {
                policy: pid,
                tool,
                op: site.1,
                subject,
                expect: Expect::DecidedBy(Some(w)),
            };
            // An unnamed tool is called by its own name, not a made-up one.
            return Some(if named {
                claim
            } else {
                Claim {
                    tool: Some(t.to_string()),
                    ..claim
                }
            });
        }
    }
    None
}

/// `deny tool delete_repo` where the only such tool is the MCP tool
/// `mcp__<server>__delete_repo`: rules match tool names exactly, so the
/// rule never matches the MCP tool.
fn bare_tool_name(cx: &mut Ctx) {
    let named = tool_names(cx);
    for (pid, list) in root_lists(cx) {
        let home = cx.home(pid);
        for (i, r) in list.rules.iter().enumerate() {
            for t in r.tools.iter().flatten() {
                if t == "*" || t.starts_with("mcp__") || cx.low.tool_index.contains_key(t) {
                    continue;
                }
                let suffix = format!("__{t}");
                let Some(full) = named.iter().find(|n| {
                    n.strip_prefix("mcp__")
                        .and_then(|rest| rest.strip_suffix(&suffix))
                        .is_some_and(|server| !server.is_empty() && !server.contains("__"))
                }) else {
                    continue;
                };
                let mut d = Diagnostic::warning(
                    "permc::bare-tool-name",
                    format!(
                        "rule `{}` names the tool `{t}`, but the MCP tool is called `{full}`",
                        r.label
                    ),
                );
                d = labels(d, r, home, &format!("never matches `{full}`"));
                if let Some(other) = other_rule_naming(cx, full) {
                    d = also(d, other, home, &format!("`{full}` is named here"));
                } else if let Some(def) = cx
                    .low
                    .tool_index
                    .get(full)
                    .and_then(|&x| cx.low.tools.get(x as usize))
                {
                    d = d.label(def.loc, format!("`{full}` is declared here"));
                }
                d = d.witness(full.clone()).help(format!(
                    "MCP tools are called `mcp__<server>__<tool>` and rules match tool names exactly; write `{}`",
                    if r.ops.is_none() { format!("{} tool {full}", r.effect) } else { format!("on {full}") }
                ));
                let claim = Claim {
                    policy: pid,
                    tool: Some(full.clone()),
                    op: "tool".into(),
                    subject: Subject::Bare,
                    expect: Expect::Matches(i as u32, false),
                };
                let claims = if cx.low.tool_index.contains_key(full) {
                    Vec::new()
                } else {
                    vec![claim]
                };
                cx.push(d, claims);
            }
        }
    }
}

fn other_rule_naming<'a>(cx: &Ctx<'a>, tool: &str) -> Option<&'a crate::lower::ResolvedRule> {
    cx.low.policies.iter().find_map(|p| match &p.body {
        PolicyBody::Rules(l) => l
            .rules
            .iter()
            .find(|r| r.tools.iter().flatten().any(|t| t == tool)),
        PolicyBody::All(_) => None,
    })
}
