//! Host-side behaviour the reference systems document, in one place so that
//! hosts do not each rebuild it: deny policies and budgets (elsai), approval
//! of `ask` outcomes by a callback or a human (TS SDK, elsai, AgentLane),
//! audit records that hash commands (elsai), and sub-agent inheritance.
//!
//! A [`Session`] wraps a compiled [`Policy`] for one agent. Each call to
//! [`Session::evaluate`] decides a request, applies the deny policy and
//! writes an audit record; [`Session::begin_invocation`] starts a new
//! `agent(...)` call (budgets reset).

pub mod approval;
mod audit;
pub mod broker;
mod deny;
pub mod text;

pub use audit::{AuditRecord, command_hash};
pub use deny::{DenyAction, DenyPolicy, OnDeny};

/// The guidance used when neither the rule nor the deny policy has any.
pub fn deny_guidance_fallback() -> &'static str {
    deny::GENERIC_GUIDANCE
}

use crate::eval::Decision;
use crate::syntax::ast::Effect;
use crate::{Policy, Request};
use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

/// What a host does with one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub decision: Decision,
    /// For a deny: continue, stop or guide (after budgets).
    pub action: Option<DenyAction>,
    /// For `guide`: the text the model is given.
    pub guidance: Option<String>,
    /// For an `ask`: the pending interrupt to answer.
    pub interrupt: Option<Interrupt>,
}

impl Outcome {
    /// elsai's `stop_reason` for the invocation after this call: `interrupt`
    /// while a call waits for a human, `permission_denied` after a stop.
    pub fn stop_reason(&self) -> Option<&'static str> {
        if self.interrupt.is_some() {
            Some("interrupt")
        } else if self.action == Some(DenyAction::Stop) {
            Some("permission_denied")
        } else {
            None
        }
    }
}

/// A held tool call waiting for a human.
#[derive(Debug, Clone, PartialEq)]
pub struct Interrupt {
    /// Stable within the session: `interrupt-1`, `interrupt-2`, ...
    pub id: String,
    /// `fs_permission` or `execution_permission` (elsai's fixed names), or
    /// `tool_permission` for calls with neither paths nor commands.
    pub name: &'static str,
    /// The prompt for the reviewer: the deciding rule's reason.
    pub reason: String,
}

/// The interrupt response that approves; anything else rejects (elsai).
pub const APPROVE_RESPONSE: &str = "approve";

/// Which rules a sub-agent enforces (elsai's `filesystem_permissions` on a child).
#[derive(Debug, Clone)]
pub enum ChildRules {
    /// Unset (`None`): the parent's policy and workspace.
    Inherit,
    /// A non-empty list: the child's own policy, no inheritance.
    Replace(Arc<Policy>),
    /// `[]`: inheritance disabled and nothing enforced.
    Nothing,
}

/// One agent's permission state.
pub struct Session {
    /// `None`: nothing is enforced (a child created with [`ChildRules::Nothing`]).
    policy: Option<Arc<Policy>>,
    deny_policy: Option<DenyPolicy>,
    audit: Option<Box<dyn Write + Send>>,
    counts: deny::Counts,
    pending: HashMap<String, (Request, Decision)>,
    next_interrupt: u64,
}

impl Session {
    /// A session enforcing `policy`, with no deny policy and no audit log.
    pub fn new(policy: Arc<Policy>) -> Session {
        Session {
            policy: Some(policy),
            deny_policy: None,
            audit: None,
            counts: deny::Counts::default(),
            pending: HashMap::new(),
            next_interrupt: 0,
        }
    }

    /// Sets what happens after a deny (elsai's `DenyPolicy`).
    pub fn with_deny_policy(mut self, deny_policy: DenyPolicy) -> Session {
        self.deny_policy = Some(deny_policy);
        self
    }

    /// What elsai warns about when a deny policy is set: with `guide`,
    /// interrupt rules without guidance leave a rejected call with only the
    /// default guidance or the generic template.
    pub fn warnings(&self) -> Vec<String> {
        let (Some(dp), Some(policy)) = (&self.deny_policy, &self.policy) else {
            return Vec::new();
        };
        if dp.on_deny != OnDeny::Guide && dp.on_budget_exceeded != OnDeny::Guide {
            return Vec::new();
        }
        let mut out = Vec::new();
        for p in &policy.lowered().policies {
            if let crate::lower::PolicyBody::Rules(list) = &p.body {
                for r in list
                    .rules
                    .iter()
                    .filter(|r| r.effect == Effect::Ask && r.guidance.is_none())
                {
                    let (line, _) = policy.sources().line_col(r.loc);
                    out.push(format!(
                        "interrupt rule `{}` (line {line}) has no guidance: with on_deny \"guide\", a rejected call falls back to default_guidance or a generic text",
                        r.label
                    ));
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Writes one JSON audit record per evaluation to `out`.
    pub fn with_audit(mut self, out: Box<dyn Write + Send>) -> Session {
        self.audit = Some(out);
        self
    }

    /// A sub-agent's session: rules per `rules`; the child's deny policy wins
    /// when set, else the parent's is used. The child shares no budgets.
    pub fn child(&self, rules: ChildRules, deny_policy: Option<DenyPolicy>) -> Session {
        let policy = match rules {
            ChildRules::Inherit => self.policy.clone(),
            ChildRules::Replace(p) => Some(p),
            ChildRules::Nothing => None,
        };
        Session {
            policy,
            deny_policy: deny_policy.or_else(|| self.deny_policy.clone()),
            audit: None,
            counts: deny::Counts::default(),
            pending: HashMap::new(),
            next_interrupt: 0,
        }
    }

    /// Starts a new invocation (an `agent(...)` call): budgets reset.
    pub fn begin_invocation(&mut self) {
        self.counts = deny::Counts::default();
    }

    /// Decides a request: a deny goes through the deny policy, an ask becomes
    /// a pending interrupt, and an audit record is written.
    pub fn evaluate(&mut self, req: &Request) -> Outcome {
        let decision = self.decide(req);
        self.finish(req, decision, false)
    }

    /// Decides a JSON request line (malformed lines are denied).
    pub fn evaluate_json(&mut self, line: &str) -> Outcome {
        match Request::from_json(line) {
            Ok(req) => self.evaluate(&req),
            Err(why) => {
                let d = Decision::malformed(Request::id_of(line), "", &why);
                let req = Request {
                    tool: String::new(),
                    input: Default::default(),
                    cwd: None,
                    id: d.id.clone(),
                };
                self.finish(&req, d, false)
            }
        }
    }

    /// Answers a pending interrupt: `approve` runs the call, anything else is
    /// a reviewer's deny, which flows into the deny policy. An unknown id is
    /// a deny too.
    pub fn resolve_interrupt(&mut self, id: &str, response: &str) -> Outcome {
        let Some((req, mut decision)) = self.pending.remove(id) else {
            let d = Decision::malformed(None, "", &format!("no pending interrupt `{id}`"));
            return Outcome {
                decision: d,
                action: Some(DenyAction::Continue),
                guidance: None,
                interrupt: None,
            };
        };
        if response == APPROVE_RESPONSE {
            decision.decision = Effect::Allow;
            decision.reason = format!("approved by a reviewer: {}", decision.reason);
            self.write_audit(&req, &decision, None, false);
            return Outcome {
                decision,
                action: None,
                guidance: None,
                interrupt: None,
            };
        }
        decision.decision = Effect::Deny;
        decision.reason = format!("rejected by a reviewer: {}", decision.reason);
        // The rejected rule's reason is a question for a human, not guidance.
        self.finish(&req, decision, true)
    }

    /// The ids of calls waiting for a reviewer.
    pub fn pending(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.pending.keys().cloned().collect();
        ids.sort();
        ids
    }

    fn decide(&self, req: &Request) -> Decision {
        match &self.policy {
            Some(p) => p.decide(req),
            None => Decision {
                id: req.id.clone(),
                decision: Effect::Allow,
                rule: None,
                reason: "no rules are enforced for this agent".into(),
                guidance: None,
                policy: String::new(),
                items: Vec::new(),
            },
        }
    }

    fn finish(&mut self, req: &Request, decision: Decision, reviewer: bool) -> Outcome {
        match decision.decision {
            Effect::Allow => {
                self.write_audit(req, &decision, None, false);
                Outcome {
                    decision,
                    action: None,
                    guidance: None,
                    interrupt: None,
                }
            }
            Effect::Ask => {
                self.next_interrupt += 1;
                let id = format!("interrupt-{}", self.next_interrupt);
                let interrupt = Interrupt {
                    id: id.clone(),
                    name: audit::interrupt_name(&decision),
                    reason: decision.reason.clone(),
                };
                self.write_audit(req, &decision, None, false);
                self.pending.insert(id, (req.clone(), decision.clone()));
                Outcome {
                    decision,
                    action: None,
                    guidance: None,
                    interrupt: Some(interrupt),
                }
            }
            Effect::Deny => {
                let key = deny::same_key(req, &decision);
                self.counts.record(&req.tool, &key);
                let (action, guidance) = match &self.deny_policy {
                    Some(dp) => dp.act(&self.counts, &req.tool, &key, &decision, reviewer),
                    None => (DenyAction::Continue, None),
                };
                self.write_audit(req, &decision, Some(action), reviewer);
                Outcome {
                    decision,
                    action: Some(action),
                    guidance,
                    interrupt: None,
                }
            }
        }
    }

    fn write_audit(
        &mut self,
        req: &Request,
        d: &Decision,
        action: Option<DenyAction>,
        reviewer: bool,
    ) {
        if let Some(out) = &mut self.audit {
            let rec = AuditRecord::new(req, d, action, reviewer);
            // Audit is best effort for the host's log; a failed write must
            // not change the decision.
            let _ = writeln!(out, "{}", rec.to_json());
            let _ = out.flush();
        }
    }
}
