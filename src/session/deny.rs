//! elsai's `DenyPolicy`: what happens after a deny, with budgets.

use crate::Request;
use crate::eval::Decision;
use std::collections::HashMap;

/// `on_deny` / `on_budget_exceeded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnDeny {
    /// Cancel the tool; the model sees the error and goes on.
    Continue,
    /// End the invocation (`stop_reason = "permission_denied"`).
    Stop,
    /// Cancel the tool and give the model an instruction.
    Guide,
}

/// The action taken for one deny.
pub type DenyAction = OnDeny;

/// elsai's DenyPolicy, with its documented defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DenyPolicy {
    pub on_deny: OnDeny,
    pub on_budget_exceeded: OnDeny,
    pub max_denies_per_invocation: Option<u32>,
    pub max_denies_per_tool: HashMap<String, u32>,
    pub max_denies_same_key: Option<u32>,
    pub default_guidance: Option<String>,
    pub budget_guidance: Option<String>,
}

impl Default for DenyPolicy {
    fn default() -> Self {
        DenyPolicy {
            on_deny: OnDeny::Continue,
            on_budget_exceeded: OnDeny::Stop,
            max_denies_per_invocation: None,
            max_denies_per_tool: HashMap::new(),
            max_denies_same_key: None,
            default_guidance: None,
            budget_guidance: None,
        }
    }
}

/// The text used when nothing more specific is set.
pub const GENERIC_GUIDANCE: &str = "This call was blocked by a permission rule. Do not retry it; choose a different approach or ask the user.";

impl DenyPolicy {
    /// The action for a deny already counted in `counts`. Budgets are
    /// inclusive: with a cap of 2, denials 1 and 2 use `on_deny` and the
    /// third uses `on_budget_exceeded`.
    pub(super) fn act(
        &self,
        counts: &Counts,
        tool: &str,
        key: &str,
        d: &Decision,
        reviewer_reject: bool,
    ) -> (DenyAction, Option<String>) {
        let over = |n: u32, cap: Option<u32>| cap.is_some_and(|c| n > c);
        let exceeded = over(counts.invocation, self.max_denies_per_invocation)
            || over(
                counts.per_tool.get(tool).copied().unwrap_or(0),
                self.max_denies_per_tool.get(tool).copied(),
            )
            || over(
                counts.same_key.get(key).copied().unwrap_or(0),
                self.max_denies_same_key,
            );
        let action = if exceeded {
            self.on_budget_exceeded
        } else {
            self.on_deny
        };
        let guidance = (action == OnDeny::Guide).then(|| {
            if exceeded {
                if let Some(b) = &self.budget_guidance {
                    return b.clone();
                }
            }
            // The rule's guidance, the rule's reason (not for an interrupt
            // rule: that is a question for a human), default_guidance, then
            // a generic fallback.
            let rule_reason = if reviewer_reject {
                None
            } else {
                rule_reason(d)
            };
            d.guidance
                .clone()
                .or(rule_reason)
                .or_else(|| self.default_guidance.clone())
                .unwrap_or_else(|| GENERIC_GUIDANCE.to_string())
        });
        (action, guidance)
    }
}

/// The deciding rule's own reason text, if it wrote one (generated reasons
/// are not advice).
fn rule_reason(d: &Decision) -> Option<String> {
    let item = d
        .items
        .iter()
        .find(|i| i.decision == d.decision && i.rule == d.rule)?;
    if item.reason_is_written {
        Some(item.reason.clone())
    } else {
        None
    }
}

/// Denial counts within one invocation.
#[derive(Debug, Clone, Default)]
pub(super) struct Counts {
    pub invocation: u32,
    pub per_tool: HashMap<String, u32>,
    pub same_key: HashMap<String, u32>,
}

impl Counts {
    pub fn record(&mut self, tool: &str, key: &str) {
        self.invocation += 1;
        *self.per_tool.entry(tool.to_string()).or_default() += 1;
        *self.same_key.entry(key.to_string()).or_default() += 1;
    }
}

/// "the same path set or command": the tool and its sorted subjects.
pub(super) fn same_key(req: &Request, d: &Decision) -> String {
    let mut subjects: Vec<String> = d
        .items
        .iter()
        .map(|i| {
            i.path
                .clone()
                .or_else(|| i.command.clone())
                .unwrap_or_default()
        })
        .collect();
    subjects.sort();
    subjects.dedup();
    if subjects.iter().all(String::is_empty) {
        // Malformed or bare: the raw input is the key.
        return format!(
            "{}\0{}",
            req.tool,
            serde_json::Value::Object(req.input.clone())
        );
    }
    format!("{}\0{}", req.tool, subjects.join("\0"))
}
