//! elsai-style audit records: one JSON line per evaluation, with the
//! decision, tool, paths or a SHA-256 of the command (never the command),
//! and matched_rule.

use super::DenyAction;
use crate::Request;
use crate::eval::Decision;
use crate::syntax::ast::Effect;
use sha2::{Digest, Sha256};

/// One audit line.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AuditRecord {
    /// `filesystem.permission`, `execution.permission` or `tool.permission`.
    pub event: &'static str,
    /// `allow`, `deny` or `interrupt`.
    pub decision: &'static str,
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
    /// SHA-256 (hex) of each command segment, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_hash: Option<Vec<String>>,
    /// The deciding rule's label (name, else reason, else generated), or null.
    pub matched_rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deny_action: Option<DenyAction>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reviewer_denied: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
}

/// The lowercase hex SHA-256 of a command.
///
/// ```
/// assert_eq!(permc::session::command_hash("ls"), "c7b68ac37f364473e922936708e7f43c293dd07b295171566c07ff5fe024fab9");
/// assert_ne!(permc::session::command_hash("ls "), permc::session::command_hash("ls"));
/// ```
pub fn command_hash(command: &str) -> String {
    let digest = Sha256::digest(command.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl AuditRecord {
    pub fn new(
        req: &Request,
        d: &Decision,
        action: Option<DenyAction>,
        reviewer_denied: bool,
    ) -> AuditRecord {
        let paths: Vec<String> = d.items.iter().filter_map(|i| i.path.clone()).collect();
        let commands: Vec<String> = d
            .items
            .iter()
            .filter_map(|i| i.command.as_deref().map(command_hash))
            .collect();
        AuditRecord {
            event: event_of(d),
            decision: match d.decision {
                Effect::Allow => "allow",
                Effect::Ask => "interrupt",
                Effect::Deny => "deny",
            },
            tool: req.tool.clone(),
            paths: (!paths.is_empty()).then_some(paths),
            command_hash: (!commands.is_empty()).then_some(commands),
            matched_rule: d.rule.clone(),
            deny_action: if d.decision == Effect::Deny {
                action
            } else {
                None
            },
            reviewer_denied,
            id: req.id.clone(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self)
            .unwrap_or_else(|_| r#"{"event":"tool.permission","decision":"deny"}"#.into())
    }
}

fn event_of(d: &Decision) -> &'static str {
    if d.items.iter().any(|i| i.command.is_some()) {
        "execution.permission"
    } else if d.items.iter().any(|i| i.path.is_some()) {
        "filesystem.permission"
    } else {
        "tool.permission"
    }
}

/// elsai's fixed interrupt names.
pub(super) fn interrupt_name(d: &Decision) -> &'static str {
    match event_of(d) {
        "execution.permission" => "execution_permission",
        "filesystem.permission" => "fs_permission",
        _ => "tool_permission",
    }
}
