//! What a finding's witness demonstrates, in a form the evaluator can check:
//! a request for the witness, and the decision its item must get.

use super::lang::{Kind, show, words_of};
use crate::lower::{Lowered, OpKind};
use crate::request::Request;
use crate::syntax::ast::{Cond, Effect};
use serde_json::{Map, Value};

/// A witness input: what one item is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A normalised absolute path.
    Path(String),
    /// A command segment's words.
    Command(Vec<String>),
    /// A `raw` command's text.
    Text(String),
    /// An item with no subject.
    Bare,
}

impl Subject {
    pub(crate) fn from_bytes(kind: Kind, bytes: &[u8]) -> Subject {
        match kind {
            Kind::Path => Subject::Path(String::from_utf8_lossy(bytes).into_owned()),
            Kind::Command => Subject::Command(words_of(bytes)),
            Kind::Raw => Subject::Text(String::from_utf8_lossy(bytes).into_owned()),
        }
    }

    /// The subject as a person would write it.
    pub fn show(&self) -> String {
        match self {
            Subject::Path(p) => p.clone(),
            Subject::Command(w) => show(Kind::Command, w.join("\0").as_bytes()),
            Subject::Text(t) => t.clone(),
            Subject::Bare => String::new(),
        }
    }
}

/// What the evaluator must say about the witness item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// This rule of the policy (or its default, `None`) decides the item.
    DecidedBy(Option<u32>),
    /// This rule's matchers match the item (`true`) or do not (`false`).
    Matches(u32, bool),
    /// The policy's outcome for the item.
    Effect(Effect),
}

/// One checkable fact: under `policy`, the item `(tool, op, subject)` gets `expect`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub policy: u32,
    /// `None`: a tool the file does not name; see [`Claim::tool_name`].
    pub tool: Option<String>,
    pub op: String,
    pub subject: Subject,
    pub expect: Expect,
}

impl Claim {
    /// The tool to call: the claim's, or a name the file does not use.
    pub fn tool_name(&self, low: &Lowered) -> String {
        match &self.tool {
            Some(t) => t.clone(),
            None => {
                let used = |n: &str| {
                    low.tool_index.contains_key(n)
                        || low.policies.iter().any(|p| match &p.body {
                            crate::lower::PolicyBody::Rules(l) => l
                                .rules
                                .iter()
                                .any(|r| r.tools.iter().flatten().any(|t| t == n)),
                            crate::lower::PolicyBody::All(_) => false,
                        })
                };
                let mut name = "some_tool".to_string();
                let mut i = 0;
                while used(&name) {
                    i += 1;
                    name = format!("some_tool{i}");
                }
                name
            }
        }
    }

    /// A request whose items include the claimed one, when one can be
    /// written: a declared tool statement for the operation that takes the
    /// subject whole (a path containing the statement's `split` separator,
    /// for example, cannot be sent as one item).
    pub fn request(&self, low: &Lowered) -> Option<Request> {
        let tool = self.tool_name(low);
        let Some(def) = low
            .tool_index
            .get(&tool)
            .and_then(|&i| low.tools.get(i as usize))
        else {
            return (self.subject == Subject::Bare && self.op == "tool")
                .then(|| Request::new(tool, Value::Object(Map::new())).ok())?;
        };
        let mut input = Map::new();
        if self.op == "tool" {
            // Every statement is conditional: make each condition fail.
            for s in &def.stmts {
                falsify(&mut input, s.when.as_ref()?)?;
            }
            return Request::new(tool, Value::Object(input)).ok();
        }
        let want = match &self.subject {
            Subject::Path(_) => OpKind::Path,
            Subject::Command(_) | Subject::Text(_) => OpKind::Command,
            Subject::Bare => OpKind::Bare,
        };
        let raw = matches!(self.subject, Subject::Text(_));
        let stmt = def.stmts.iter().find(|s| {
            s.op == self.op && s.kind == want && (want != OpKind::Command || s.raw == raw)
        })?;
        if let Some(c) = &stmt.when {
            satisfy(&mut input, c)?;
        }
        if let Some(field) = &stmt.field {
            let text = match &self.subject {
                Subject::Path(p) => {
                    if stmt.split.as_deref().is_some_and(|sep| p.contains(sep)) || p.trim() != p {
                        return None;
                    }
                    p.clone()
                }
                Subject::Command(words) => {
                    if stmt.raw || !words.iter().all(|w| super::lang::plain(w)) {
                        return None;
                    }
                    words.join(" ")
                }
                Subject::Text(t) => t.clone(),
                Subject::Bare => return None,
            };
            set(&mut input, &field.0, Value::String(text))?;
        }
        // Other statements that apply need their fields too, or the request
        // is malformed: give them a harmless value.
        for s in &def.stmts {
            if let Some(f) = s.field.as_ref().filter(|f| get(&input, &f.0).is_none()) {
                let v = if s.kind == OpKind::Command {
                    "true"
                } else {
                    "/permc-witness-other"
                };
                set(&mut input, &f.0, Value::String(v.into()))?;
            }
        }
        Request::new(tool, Value::Object(input)).ok()
    }
}

fn get<'v>(input: &'v Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let mut v = input.get(first)?;
    for k in rest {
        v = v.as_object()?.get(k)?;
    }
    Some(v)
}

fn set(input: &mut Map<String, Value>, path: &[String], value: Value) -> Option<()> {
    let (last, init) = path.split_last()?;
    let mut obj = input;
    for k in init {
        let slot = obj
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        obj = slot.as_object_mut()?;
    }
    match obj.get(last) {
        Some(existing) if *existing != value => None,
        _ => {
            obj.insert(last.clone(), value);
            Some(())
        }
    }
}

/// A value different from every one of `vs`.
fn other_than(vs: &[Value]) -> Value {
    let mut i = 0;
    loop {
        let v = Value::String(format!("permc-other-{i}"));
        if !vs.contains(&v) {
            return v;
        }
        i += 1;
    }
}

#[allow(unreachable_patterns)]
fn satisfy(input: &mut Map<String, Value>, c: &Cond) -> Option<()> {
    match c {
        Cond::Eq(f, v) => set(input, &f.0, v.clone()),
        Cond::In(f, vs) => set(input, &f.0, vs.first()?.clone()),
        Cond::Ne(f, v) => set(input, &f.0, other_than(std::slice::from_ref(v))),
        Cond::NotIn(f, vs) => set(input, &f.0, other_than(vs)),
        _ => None,
    }
}

#[allow(unreachable_patterns)]
fn falsify(input: &mut Map<String, Value>, c: &Cond) -> Option<()> {
    match c {
        Cond::Eq(f, v) => set(input, &f.0, other_than(std::slice::from_ref(v))),
        Cond::In(f, vs) => set(input, &f.0, other_than(vs)),
        Cond::Ne(f, v) => set(input, &f.0, v.clone()),
        Cond::NotIn(f, vs) => set(input, &f.0, vs.first()?.clone()),
        _ => None,
    }
}
