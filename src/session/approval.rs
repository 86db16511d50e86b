//! Resolving `ask` through a host callback, with the TS SDK's fail-closed
//! rules: no callback denies; a callback that fails, is aborted, or answers
//! malformed denies; an answer that rewrites the input has the new input
//! checked again.

use crate::eval::Decision;
use crate::syntax::ast::Effect;
use crate::{Policy, Request};
use serde_json::Value;

/// What the callback is asked (the TS SDK's `CanUseToolRequest`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ApprovalRequest {
    pub tool_name: String,
    /// The request id (`tool_use_id`), stable across the events of one call.
    pub tool_use_id: Option<Value>,
    pub input: serde_json::Map<String, Value>,
    /// A one-line description of the call: the decision's reason.
    pub summary: String,
}

/// Why a callback produced no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallbackError {
    /// The callback threw.
    Failed(String),
    /// The abort signal fired before or during the call.
    Aborted,
}

/// The message for a callback that failed or was aborted.
pub const CALLBACK_FAILED: &str = "permission callback failed or aborted.";
/// The message for an `updatedInput` that fails the tool's declaration.
pub const UPDATED_INPUT_INVALID: &str = "updated input is invalid.";

/// Decides `req` as the TS SDK's engine does; a call without an id (its
/// `tool_use_id`) is malformed and denied. An `ask` goes to `callback`, whose
/// raw JSON answer must be
/// `{"behavior":"allow","updatedInput"?:{...}}` or
/// `{"behavior":"deny","message":"..."}`.
///
/// ```
/// use permc::{Effect, Options, Policy, Request};
/// use permc::session::approval::decide_with_callback;
/// let p = Policy::compile("p.perm", "policy p { default ask }", &Options::logical()).unwrap();
/// let mut req = Request::new("Bash", serde_json::json!({"command": "ls"})).unwrap();
/// req.id = Some(serde_json::json!("toolu_1"));
/// // No callback: ask becomes deny (fail-closed).
/// assert_eq!(decide_with_callback(&p, &req, None).decision, Effect::Deny);
/// let mut yes = |_: &_| Ok(serde_json::json!({"behavior": "allow"}));
/// assert_eq!(decide_with_callback(&p, &req, Some(&mut yes)).decision, Effect::Allow);
/// ```
pub fn decide_with_callback(
    policy: &Policy,
    req: &Request,
    callback: Option<&mut dyn FnMut(&ApprovalRequest) -> Result<Value, CallbackError>>,
) -> Decision {
    // The SDK's input validation: a pending call without a tool_use_id is
    // malformed, and malformed is deny.
    if req
        .id
        .as_ref()
        .is_none_or(|id| id.is_null() || id.as_str() == Some(""))
    {
        return Decision::malformed(
            req.id.clone(),
            &policy.selected_name(),
            "the call has no tool_use_id (request `id`)",
        );
    }
    let mut d = policy.decide(req);
    if d.decision != Effect::Ask {
        return d;
    }
    let Some(cb) = callback else {
        d.decision = Effect::Deny;
        d.reason = format!(
            "approval required and no approval callback is configured: {}",
            d.reason
        );
        return d;
    };
    let ask = ApprovalRequest {
        tool_name: req.tool.clone(),
        tool_use_id: req.id.clone(),
        input: req.input.clone(),
        summary: d.reason.clone(),
    };
    let deny = |mut d: Decision, why: String| {
        d.decision = Effect::Deny;
        d.reason = why;
        d
    };
    let answer = match cb(&ask) {
        Ok(v) => v,
        Err(_) => return deny(d, CALLBACK_FAILED.to_string()),
    };
    match parse_answer(&answer) {
        Err(why) => deny(d, format!("malformed approval response: {why}")),
        Ok(Answer::Deny(message)) => deny(d, message),
        Ok(Answer::Allow(None)) => {
            d.decision = Effect::Allow;
            d.reason = format!("approved: {}", d.reason);
            d
        }
        Ok(Answer::Allow(Some(updated))) => {
            // The rewritten input is a new call: it must fit the tool's
            // declaration, and the policy must not deny it (permc is stricter
            // than the SDK here, which only re-validates).
            let new_req = Request {
                input: updated,
                ..req.clone()
            };
            let again = policy.decide(&new_req);
            if again.reason.starts_with("malformed request:") {
                return deny(again, UPDATED_INPUT_INVALID.to_string());
            }
            match again.decision {
                Effect::Deny => again,
                _ => {
                    let mut ok = again;
                    ok.decision = Effect::Allow;
                    ok.reason = format!("approved with updated input: {}", ok.reason);
                    ok
                }
            }
        }
    }
}

enum Answer {
    Allow(Option<serde_json::Map<String, Value>>),
    Deny(String),
}

fn parse_answer(v: &Value) -> Result<Answer, String> {
    let obj = v.as_object().ok_or("the response is not an object")?;
    match obj.get("behavior").and_then(Value::as_str) {
        Some("allow") => match obj.get("updatedInput") {
            None => Ok(Answer::Allow(None)),
            Some(Value::Object(m)) => Ok(Answer::Allow(Some(m.clone()))),
            Some(_) => Err("`updatedInput` is not an object".into()),
        },
        Some("deny") => match obj.get("message") {
            Some(Value::String(m)) => Ok(Answer::Deny(m.clone())),
            _ => Err("a deny needs a string `message`".into()),
        },
        Some(other) => Err(format!("unknown behavior `{other}`")),
        None => Err("`behavior` is missing".into()),
    }
}
