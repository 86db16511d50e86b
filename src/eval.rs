//! Stage 4: decisions. Per item, a backend selects the deciding rule (the
//! compiled program, or the reference interpreter in tests); this module
//! applies defaults, the opaque-command cap, deny > ask > allow aggregation,
//! `all(...)` composition, and writes the reasons.

use crate::lower::{Lowered, PolicyBody, ResolvedRule, RuleList};
use crate::request::{Item, Request, Resolver, Subject, expand};
use crate::syntax::ast::Effect;
use serde::Serialize;

/// The answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    pub decision: Effect,
    /// The deciding rule's label: its `as` name, else its reason, else a
    /// generated label such as `deny:**/.env`. `null` when a default decided.
    pub rule: Option<String>,
    pub reason: String,
    pub guidance: Option<String>,
    /// The policy whose rule decided (differs from the one asked under `all(...)`).
    pub policy: String,
    pub items: Vec<ItemDecision>,
}

/// The outcome for one item of a request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemDecision {
    pub tool: String,
    pub op: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    pub decision: Effect,
    pub rule: Option<String>,
    pub reason: String,
    #[serde(skip)]
    pub guidance: Option<String>,
    /// The reason is the rule's own `reason` text (not generated).
    #[serde(skip)]
    pub reason_is_written: bool,
    /// Index of the deciding rule in its policy, for explain and tests.
    #[serde(skip)]
    pub rule_index: Option<u32>,
}

impl Decision {
    /// A deny for a request that could not be evaluated.
    pub fn malformed(id: Option<serde_json::Value>, policy: &str, why: &str) -> Decision {
        Decision {
            id,
            decision: Effect::Deny,
            rule: None,
            reason: format!("malformed request: {why}"),
            guidance: None,
            policy: policy.to_string(),
            items: Vec::new(),
        }
    }

    /// One JSON line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"decision":"deny","rule":null,"reason":"internal error serialising the decision","items":[]}"#.to_string()
        })
    }
}

/// Selects the deciding rule of a rule-list policy for one item.
pub trait Backend {
    /// `policy` indexes [`Lowered::policies`]; the result indexes its rules.
    fn select(&self, policy: u32, item: &Item) -> Option<u32>;
}

/// Decides `req` under policy `policy` of `low`, with `backend` choosing rules.
pub fn decide(
    low: &Lowered,
    backend: &dyn Backend,
    policy: u32,
    req: &Request,
    resolver: Option<Resolver>,
) -> Decision {
    let mut d = decide_inner(low, backend, policy, req, resolver, 0);
    d.id = req.id.clone();
    d
}

fn decide_inner(
    low: &Lowered,
    backend: &dyn Backend,
    policy: u32,
    req: &Request,
    resolver: Option<Resolver>,
    depth: u32,
) -> Decision {
    let Some(pol) = low.policies.get(policy as usize) else {
        return Decision::malformed(None, "?", "unknown policy");
    };
    match &pol.body {
        PolicyBody::Rules(list) => {
            decide_rules(low, backend, policy, &pol.name, list, req, resolver)
        }
        PolicyBody::All(children) => {
            // Cycles are rejected when lowering; the depth cap is a second lock.
            if depth > 64 {
                return Decision::malformed(None, &pol.name, "composition nested too deeply");
            }
            let mut best: Option<Decision> = None;
            for &c in children {
                let d = decide_inner(low, backend, c, req, resolver, depth + 1);
                let stricter = best.as_ref().is_none_or(|b| d.decision > b.decision);
                let terminal = d.decision == Effect::Deny;
                if stricter {
                    best = Some(d);
                }
                if terminal {
                    break;
                }
            }
            best.unwrap_or_else(|| Decision {
                id: None,
                decision: Effect::Allow,
                rule: None,
                reason: format!("allowed: `{}` is an empty composition", pol.name),
                guidance: None,
                policy: pol.name.clone(),
                items: Vec::new(),
            })
        }
    }
}

fn decide_rules(
    low: &Lowered,
    backend: &dyn Backend,
    policy: u32,
    name: &str,
    list: &RuleList,
    req: &Request,
    resolver: Option<Resolver>,
) -> Decision {
    let tool = low
        .tool_index
        .get(&req.tool)
        .map(|&i| &low.tools[i as usize]);
    let items = match expand(req, tool, &list.workspace, resolver) {
        Ok(items) => items,
        Err(why) => return Decision::malformed(None, name, &why),
    };
    let mut out: Vec<ItemDecision> = Vec::with_capacity(items.len());
    for item in &items {
        let rule = backend.select(policy, item);
        out.push(item_decision(item, rule, list));
    }
    // deny > ask > allow; the first item with the strictest outcome speaks.
    let mut top = 0;
    for (i, it) in out.iter().enumerate() {
        if it.decision > out[top].decision {
            top = i;
        }
    }
    let head = &out[top];
    Decision {
        id: None,
        decision: head.decision,
        rule: head.rule.clone(),
        reason: head.reason.clone(),
        guidance: head.guidance.clone(),
        policy: name.to_string(),
        items: out,
    }
}

fn item_decision(item: &Item, rule: Option<u32>, list: &RuleList) -> ItemDecision {
    let r: Option<&ResolvedRule> = rule.and_then(|i| list.rules.get(i as usize));
    let mut effect = r.map_or(list.default, |r| r.effect);
    let label = r.map(|r| r.label.clone());
    let who = match &label {
        Some(l) => format!("rule: {l}"),
        None => format!("default {}", list.default),
    };
    let mut reason_is_written = r.is_some_and(|r| r.reason.is_some());
    let mut reason = match r.and_then(|r| r.reason.clone()) {
        Some(text) => text,
        None => generated_reason(item, effect, &who),
    };
    // Never allow what the lexer could not see through: at most ask.
    if let (Subject::Command(c), Effect::Allow) = (&item.subject, effect) {
        if let Some(op) = c.opaque {
            effect = Effect::Ask;
            reason_is_written = false;
            reason = format!(
                "command '{}' contains {}, which permc cannot analyse; it needs approval ({who})",
                c.text,
                op.describe()
            );
        }
    }
    let (path, command, cwd) = match &item.subject {
        Subject::Path(p) => (Some(p.clone()), None, None),
        Subject::Command(c) => (None, Some(c.text.clone()), c.cwd.clone()),
        Subject::Bare => (None, None, None),
    };
    ItemDecision {
        tool: item.tool.clone(),
        op: item.op.clone(),
        path,
        command,
        cwd,
        decision: effect,
        rule: label,
        reason,
        guidance: r.and_then(|r| r.guidance.clone()),
        reason_is_written,
        rule_index: rule,
    }
}

fn generated_reason(item: &Item, effect: Effect, who: &str) -> String {
    let verb = match effect {
        Effect::Allow => "allowed",
        Effect::Ask => "requires approval",
        Effect::Deny => "denied",
    };
    match &item.subject {
        Subject::Path(p) => format!("{} {verb} for {p} ({who})", item.op),
        Subject::Command(c) => {
            let verb = if effect == Effect::Deny {
                "blocked"
            } else {
                verb
            };
            format!("{} command {verb}: '{}' ({who})", item.tool, c.text)
        }
        Subject::Bare if item.op == "tool" => format!("tool {} {verb} ({who})", item.tool),
        Subject::Bare => format!("{} {verb} for tool {} ({who})", item.op, item.tool),
    }
}
