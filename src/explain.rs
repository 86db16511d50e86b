//! `permc explain`: a readable trace of one decision: for each item, every
//! rule tried, why it matched or not, and which one decided.

use crate::lower::{PolicyBody, RuleList};
use crate::reference::{self, Step};
use crate::request::{Item, Subject, expand};
use crate::{Decision, Policy, Request};
use std::fmt::Write as _;

/// Explains how `policy` decides `req` under the selected policy (or `name`).
///
/// ```
/// use permc::{Options, Policy, Request, explain::explain};
/// let p = Policy::compile("p.perm", "policy p { deny tool Bash as no_bash }", &Options::logical()).unwrap();
/// let req = Request::new("Bash", serde_json::json!({})).unwrap();
/// let text = explain(&p, None, &req);
/// assert!(text.contains("no_bash"));
/// assert!(explain(&p, Some("nope"), &req).contains("unknown policy"));
/// ```
pub fn explain(policy: &Policy, name: Option<&str>, req: &Request) -> String {
    let pid = match name {
        Some(n) => policy.policy_id(n),
        None => policy.selected(),
    };
    let Some(pid) = pid else {
        return format!(
            "unknown policy `{}`; the file defines: {}\n",
            name.unwrap_or(""),
            policy.policy_names().join(", ")
        );
    };
    let mut out = String::new();
    explain_policy(policy, pid, req, 0, &mut out);
    let decision = match name {
        Some(n) => policy.decide_as(n, req),
        None => Some(policy.decide(req)),
    };
    if let Some(d) = decision {
        write_decision(&d, &mut out);
    }
    out
}

fn explain_policy(policy: &Policy, pid: u32, req: &Request, depth: usize, out: &mut String) {
    let low = policy.lowered();
    let Some(pol) = low.policies.get(pid as usize) else {
        return;
    };
    let pad = "  ".repeat(depth);
    match &pol.body {
        PolicyBody::All(children) => {
            let _ = writeln!(
                out,
                "{pad}policy `{}` = all(...): the strictest outcome of its policies wins",
                pol.name
            );
            if children.is_empty() {
                let _ = writeln!(out, "{pad}  (empty: allows)");
            }
            for &c in children {
                explain_policy(policy, c, req, depth + 1, out);
                // Evaluation stops at the first deny; so does the trace.
                let d = policy.decide_as(&low.policies[c as usize].name, req);
                if d.is_some_and(|d| d.decision == crate::Effect::Deny) {
                    let _ = writeln!(
                        out,
                        "{pad}  (`{}` denies: later policies are not consulted)",
                        low.policies[c as usize].name
                    );
                    break;
                }
            }
        }
        PolicyBody::Rules(list) => {
            let _ = writeln!(
                out,
                "{pad}policy `{}` ({}, default {}, workspace {})",
                pol.name,
                match list.combine {
                    crate::syntax::ast::Combine::FirstMatch => "first-match",
                    crate::syntax::ast::Combine::Strictest => "strictest",
                },
                list.default,
                list.workspace
            );
            let tool = low
                .tool_index
                .get(&req.tool)
                .map(|&i| &low.tools[i as usize]);
            let resolver: Option<crate::request::Resolver> = if policy.resolves_paths() {
                Some(&crate::paths::RealFs)
            } else {
                None
            };
            match expand(req, tool, &list.workspace, resolver) {
                Err(why) => {
                    let _ = writeln!(out, "{pad}  malformed request: {why}");
                }
                Ok(items) => {
                    for item in &items {
                        explain_item(policy, list, item, &pad, out);
                    }
                }
            }
        }
    }
}

fn explain_item(policy: &Policy, list: &RuleList, item: &Item, pad: &str, out: &mut String) {
    let subject = match &item.subject {
        Subject::Path(p) => format!(" {p}"),
        Subject::Command(c) => {
            let cwd = c
                .cwd
                .as_deref()
                .map(|d| format!(" (cwd {d})"))
                .unwrap_or_default();
            let opaque = c
                .opaque
                .map(|o| format!(" [opaque: {}]", o.describe()))
                .unwrap_or_default();
            format!(" `{}`{cwd}{opaque}", c.text)
        }
        Subject::Bare => String::new(),
    };
    let _ = writeln!(out, "{pad}  item: {} {}{subject}", item.tool, item.op);
    let trace = reference::trace(list, item);
    let decided = reference::pick(list, &trace);
    for (i, (rule, step)) in list.rules.iter().zip(&trace).enumerate() {
        let (line, _) = policy.sources().line_col(rule.loc);
        // Rules spliced from another file say which file.
        let root = crate::syntax::loc::FileId(0);
        let file = if rule.loc.file == root {
            String::new()
        } else {
            policy
                .sources()
                .get(rule.loc.file)
                .map(|f| format!("{} ", f.name))
                .unwrap_or_default()
        };
        let why = match step {
            Step::OtherTool => continue,
            Step::OtherOp => continue,
            Step::GateInside => {
                "cwd gate: cwd inside the workspace (or unset), skipped".to_string()
            }
            Step::GateFired => "cwd gate: cwd outside the workspace, fires".to_string(),
            Step::Matched(why) => format!("matches: {why}"),
            Step::NoMatch => "no match".to_string(),
        };
        let mark = if decided == Some(i as u32) {
            "=>"
        } else {
            "  "
        };
        let _ = writeln!(
            out,
            "{pad}  {mark} #{i} {file}line {line} {} `{}`: {why}",
            rule.effect, rule.label
        );
    }
    match decided {
        Some(i) => {
            let r = &list.rules[i as usize];
            let _ = writeln!(
                out,
                "{pad}  decided by rule #{i} `{}`: {}",
                r.label, r.effect
            );
        }
        None => {
            let _ = writeln!(out, "{pad}  no rule matched: default {}", list.default);
        }
    }
}

fn write_decision(d: &Decision, out: &mut String) {
    let _ = writeln!(out, "decision: {}", d.decision);
    let _ = writeln!(out, "rule: {}", d.rule.as_deref().unwrap_or("(default)"));
    let _ = writeln!(out, "reason: {}", d.reason);
    if let Some(g) = &d.guidance {
        let _ = writeln!(out, "guidance: {g}");
    }
}
