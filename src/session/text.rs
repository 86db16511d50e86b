//! Stable model-facing texts, as AgentLane's tools return them before any
//! side effect: `permission denied: read is not allowed for `/workspace/private.txt``.

use crate::eval::Decision;
use crate::syntax::ast::Effect;

/// The tool-result text for a decision that stops a call, or `None` for an
/// allow. The subject is the deciding item's path, else its command.
///
/// ```
/// use permc::{Options, Policy, Request};
/// use permc::session::text::tool_result_text;
/// let p = Policy::compile("p.perm", "tool read { read_file input.path }\npolicy p { deny read_file }",
///     &Options::logical()).unwrap();
/// let d = p.decide(&Request::new("read", serde_json::json!({"path": "/workspace/private.txt"})).unwrap());
/// assert_eq!(tool_result_text(&d).unwrap(), "permission denied: read is not allowed for `/workspace/private.txt`");
/// ```
pub fn tool_result_text(d: &Decision) -> Option<String> {
    let item = d
        .items
        .iter()
        .find(|i| i.decision == d.decision && i.rule == d.rule);
    let tool = item.map(|i| i.tool.as_str()).unwrap_or("tool");
    let subject = item.and_then(|i| i.path.clone().or_else(|| i.command.clone()));
    match d.decision {
        Effect::Allow => None,
        Effect::Deny => Some(match subject {
            Some(s) => format!("permission denied: {tool} is not allowed for `{s}`"),
            None if d.items.is_empty() => format!("permission denied: {}", d.reason),
            None => format!("permission denied: {tool} is not allowed"),
        }),
        Effect::Ask => Some(match (item.map(|i| i.op.as_str()), subject) {
            (Some("network_access"), _) => {
                format!("approval required: {tool} network access awaiting approval")
            }
            (_, Some(s)) if item.is_some_and(|i| i.command.is_some()) => {
                format!("approval required: {tool} command `{s}` awaiting approval")
            }
            (_, Some(s)) => format!("approval required: {tool} on `{s}` awaiting approval"),
            (_, None) => format!("approval required: {tool} awaiting approval"),
        }),
    }
}

/// elsai's cancel message for the model: `PermissionDenied: REASON` for
/// filesystem calls, `ExecutionDenied: REASON` for commands; `None` unless
/// the decision is a deny.
///
/// ```
/// use permc::{Options, Policy, Request};
/// use permc::session::text::elsai_error_text;
/// let p = Policy::compile("p.perm", "import \"elsai\"\npolicy p { use elsai.deny_destructive }",
///     &Options::logical()).unwrap();
/// let d = p.decide(&Request::new("shell", serde_json::json!({"command": "rm -rf /"})).unwrap());
/// assert_eq!(elsai_error_text(&d).unwrap(), "ExecutionDenied: Destructive commands are blocked");
/// let d = p.decide(&Request::new("shell", serde_json::json!({"command": "ls"})).unwrap());
/// assert_eq!(elsai_error_text(&d), None);
/// ```
pub fn elsai_error_text(d: &Decision) -> Option<String> {
    if d.decision != Effect::Deny {
        return None;
    }
    let exec = d.items.iter().any(|i| i.command.is_some());
    Some(format!(
        "{}: {}",
        if exec {
            "ExecutionDenied"
        } else {
            "PermissionDenied"
        },
        d.reason
    ))
}
