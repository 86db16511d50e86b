//! AgentLane's `ToolApprovalBroker`: pending approval records with stable
//! ids, lifecycle events, resolution with an ordinary decision, and close.
//! It owns no UI, timeout or cancellation policy: a host that needs those
//! resolves a request itself (e.g. with the original approval-required
//! decision on timeout).

use crate::Request;
use crate::eval::Decision;
use crate::syntax::ast::Effect;
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    Pending,
    Resolved,
}

/// One brokered request.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRecord {
    /// Stable: `approval-1`, `approval-2`, ... in submission order.
    pub request_id: String,
    pub request: Request,
    /// The approval-required decision (or the immediate one, when recorded).
    pub decision: Decision,
    pub status: ApprovalStatus,
    /// Set once resolved.
    pub final_decision: Option<Decision>,
}

/// A lifecycle event, emitted to subscribers that exist when it happens.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalEvent {
    pub status: ApprovalStatus,
    pub record: ApprovalRecord,
}

/// What the broker's callback returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// Held for the host: wait with [`Broker::wait`] or watch events.
    Pending(String),
    /// An allow/deny recorded immediately (record_immediate_decisions).
    Decided(Decision),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokerError {
    #[error(
        "the decision is `{0}`, not an approval request; enable record_immediate_decisions to record it"
    )]
    NotAnApproval(Effect),
    #[error("no pending approval `{0}`")]
    UnknownRequest(String),
    #[error("the approval state is unavailable (a host thread panicked while holding it)")]
    Poisoned,
}

#[derive(Default)]
struct State {
    next: u64,
    records: BTreeMap<u64, ApprovalRecord>,
    subscribers: Vec<Sender<ApprovalEvent>>,
    closed: bool,
}

/// The approval broker. Share it between the evaluating side and the host UI.
#[derive(Default)]
pub struct Broker {
    state: Mutex<State>,
    resolved: Condvar,
    record_immediate_decisions: bool,
}

impl Broker {
    /// A broker; with `record_immediate_decisions`, allow/deny decisions
    /// passed to [`Broker::submit`] are recorded (pending then resolved
    /// events) instead of rejected.
    pub fn new(record_immediate_decisions: bool) -> Broker {
        Broker {
            record_immediate_decisions,
            ..Broker::default()
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, BrokerError> {
        self.state.lock().map_err(|_| BrokerError::Poisoned)
    }

    /// The callback: an `ask` decision becomes a pending record.
    pub fn submit(&self, request: Request, decision: Decision) -> Result<Submitted, BrokerError> {
        let mut st = self.lock()?;
        let immediate = decision.decision != Effect::Ask;
        if immediate && !self.record_immediate_decisions {
            return Err(BrokerError::NotAnApproval(decision.decision));
        }
        st.next += 1;
        let n = st.next;
        let record = ApprovalRecord {
            request_id: format!("approval-{n}"),
            request,
            decision: decision.clone(),
            status: ApprovalStatus::Pending,
            final_decision: None,
        };
        emit(&mut st, ApprovalStatus::Pending, &record);
        if immediate {
            // Recorded as resolved in the same step: it never lingers in pending().
            let done = ApprovalRecord {
                status: ApprovalStatus::Resolved,
                final_decision: Some(decision.clone()),
                ..record
            };
            emit(&mut st, ApprovalStatus::Resolved, &done);
            st.records.insert(n, done);
            return Ok(Submitted::Decided(decision));
        }
        let id = record.request_id.clone();
        st.records.insert(n, record);
        Ok(Submitted::Pending(id))
    }

    /// A snapshot of the pending records, oldest first.
    pub fn pending(&self) -> Vec<ApprovalRecord> {
        self.lock()
            .map(|st| {
                st.records
                    .values()
                    .filter(|r| r.status == ApprovalStatus::Pending)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Events emitted after this call. After [`Broker::close`], the stream
    /// ends at once.
    pub fn events(&self) -> Receiver<ApprovalEvent> {
        let (tx, rx) = channel();
        if let Ok(mut st) = self.lock() {
            if !st.closed {
                st.subscribers.push(tx);
            }
        }
        rx
    }

    /// Resolves a pending request with an ordinary decision.
    pub fn resolve(&self, request_id: &str, decision: Decision) -> Result<(), BrokerError> {
        let mut st = self.lock()?;
        let key = st
            .records
            .iter()
            .find(|(_, r)| r.request_id == request_id && r.status == ApprovalStatus::Pending)
            .map(|(k, _)| *k)
            .ok_or_else(|| BrokerError::UnknownRequest(request_id.to_string()))?;
        let mut record = st
            .records
            .remove(&key)
            .ok_or_else(|| BrokerError::UnknownRequest(request_id.to_string()))?;
        record.status = ApprovalStatus::Resolved;
        record.final_decision = Some(decision);
        emit(&mut st, ApprovalStatus::Resolved, &record);
        st.records.insert(key, record);
        self.resolved.notify_all();
        Ok(())
    }

    /// Blocks until the request is resolved and returns its final decision.
    pub fn wait(&self, request_id: &str) -> Result<Decision, BrokerError> {
        let mut st = self.lock()?;
        loop {
            let rec = st.records.values().find(|r| r.request_id == request_id);
            match rec {
                None => return Err(BrokerError::UnknownRequest(request_id.to_string())),
                Some(r) => {
                    if let Some(d) = &r.final_decision {
                        return Ok(d.clone());
                    }
                }
            }
            st = self.resolved.wait(st).map_err(|_| BrokerError::Poisoned)?;
        }
    }

    /// Ends event observation: current subscribers' streams end and future
    /// ones end immediately. Pending approvals stay pending.
    pub fn close(&self) {
        if let Ok(mut st) = self.lock() {
            st.closed = true;
            st.subscribers.clear();
        }
    }
}

fn emit(st: &mut State, status: ApprovalStatus, record: &ApprovalRecord) {
    let ev = ApprovalEvent {
        status,
        record: record.clone(),
    };
    // A subscriber that went away is dropped.
    st.subscribers.retain(|tx| tx.send(ev.clone()).is_ok());
}
