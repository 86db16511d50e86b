//! Requests and their items: a tool call becomes `(operation, path)`,
//! `(exec, segment, cwd)` or bare tool items through the tool's declaration.

use crate::lower::{OpKind, ToolDef};
use crate::shell::{self, Opaque};
use crate::syntax::ast::{Cond, FieldPath, FsKind};
use serde_json::Value;

/// One tool call a host asks about.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub tool: String,
    /// The tool's native input; always a JSON object.
    pub input: serde_json::Map<String, Value>,
    /// The agent's working directory; relative paths resolve against it.
    pub cwd: Option<String>,
    /// Echoed back in the decision.
    pub id: Option<Value>,
}

impl Request {
    /// A request for `tool` with `input` (which must be an object).
    ///
    /// ```
    /// use permc::Request;
    /// let r = Request::new("file_read", serde_json::json!({"path": "a.txt"})).unwrap();
    /// assert_eq!(r.tool, "file_read");
    /// assert!(Request::new("file_read", serde_json::json!("a.txt")).is_err());
    /// ```
    pub fn new(tool: impl Into<String>, input: Value) -> Result<Request, String> {
        match input {
            Value::Object(input) => Ok(Request {
                tool: tool.into(),
                input,
                cwd: None,
                id: None,
            }),
            other => Err(format!(
                "input must be an object, found {}",
                type_name(&other)
            )),
        }
    }

    /// Parses the JSON request form `{"tool": ..., "input": {...}, "cwd": ..., "id": ...}`.
    /// The error says what is wrong; the caller turns it into a deny.
    ///
    /// ```
    /// use permc::Request;
    /// let r = Request::from_json(r#"{"tool":"shell","input":{"command":"ls"},"id":7}"#).unwrap();
    /// assert_eq!(r.id, Some(serde_json::json!(7)));
    /// assert_eq!(Request::from_json(r#"{"input":{}}"#).unwrap_err(), "request has no `tool`");
    /// ```
    pub fn from_json(text: &str) -> Result<Request, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("request is not valid JSON: {e}"))?;
        // Parsers disagree on duplicate keys (first or last wins): a request
        // that says two things is malformed, or the host may run the other.
        serde_json::from_str::<NoDuplicateKeys>(text)
            .map_err(|e| format!("request is ambiguous: {e}"))?;
        Request::from_value(v)
    }

    /// Like [`Request::from_json`], from a parsed value.
    pub fn from_value(v: Value) -> Result<Request, String> {
        let Value::Object(mut obj) = v else {
            return Err(format!(
                "request must be a JSON object, found {}",
                type_name(&v)
            ));
        };
        let id = obj.remove("id");
        let tool = match obj.remove("tool") {
            Some(Value::String(s)) if !s.is_empty() => s,
            Some(Value::String(_)) => return Err("request `tool` is empty".into()),
            Some(other) => {
                return Err(format!(
                    "request `tool` must be a string, found {}",
                    type_name(&other)
                ));
            }
            None => return Err("request has no `tool`".into()),
        };
        if tool.contains('\0') {
            return Err("request `tool` contains a NUL byte".into());
        }
        let input = match obj.remove("input") {
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(format!(
                    "request `input` must be an object, found {}",
                    type_name(&other)
                ));
            }
            None => return Err("request has no `input` object".into()),
        };
        let cwd = match obj.remove("cwd") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(other) => {
                return Err(format!(
                    "request `cwd` must be a string, found {}",
                    type_name(&other)
                ));
            }
        };
        if let Some(k) = obj.keys().next() {
            return Err(format!("request has an unknown field `{k}`"));
        }
        Ok(Request {
            tool,
            input,
            cwd,
            id,
        })
    }

    /// The id of a request that may not parse, for echoing in a deny.
    pub fn id_of(text: &str) -> Option<Value> {
        serde_json::from_str::<Value>(text).ok()?.get("id").cloned()
    }
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One thing to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub tool: String,
    pub op: String,
    pub subject: Subject,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A normalised absolute path.
    Path(String),
    Command(Command),
    /// Only the tool and operation are known.
    Bare,
}

/// One command segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The segment as written.
    pub text: String,
    /// Words after quote removal.
    pub words: Vec<String>,
    /// The words joined by single spaces: what `/regex/` matchers search.
    pub canonical: String,
    /// Set when the lexer cannot see through the segment.
    pub opaque: Option<Opaque>,
    /// The normalised working directory, when known.
    pub cwd: Option<String>,
}

/// What the evaluator may learn from the filesystem; `None` means nothing
/// (logical paths, as test blocks use).
pub type Resolver<'a> = &'a dyn crate::paths::Filesystem;

/// Turns a request into items through its tool's declaration. Undeclared
/// tools, and declared ones none of whose statements apply (every `when`
/// fails), give one bare `tool` item. An error means the input is malformed
/// (a statement applies but its field is missing, empty or of the wrong
/// type); the caller denies.
pub fn expand(
    req: &Request,
    tool: Option<&ToolDef>,
    workspace: &str,
    fs: Option<Resolver>,
) -> Result<Vec<Item>, String> {
    let fs: &dyn crate::paths::Filesystem = fs.unwrap_or(&crate::paths::Logical);
    let base = match &req.cwd {
        Some(c) => fs.resolve(
            &crate::paths::normalize(c, workspace).map_err(|e| format!("request `cwd`: {e}"))?,
        ),
        None => workspace.to_string(),
    };
    let mut items = Vec::new();
    let Some(def) = tool else {
        return Ok(vec![Item {
            tool: req.tool.clone(),
            op: "tool".into(),
            subject: Subject::Bare,
        }]);
    };
    let mut applied = false;
    for stmt in &def.stmts {
        if let Some(cond) = &stmt.when {
            if !holds(cond, &req.input) {
                continue;
            }
        }
        applied = true;
        let item = |subject| Item {
            tool: req.tool.clone(),
            op: stmt.op.clone(),
            subject,
        };
        let Some(field) = &stmt.field else {
            items.push(item(Subject::Bare));
            continue;
        };
        let mut values = strings_at(&req.input, field, stmt.split.as_deref(), stmt.json)?;
        if values.is_empty()
            && stmt.else_cwd
            && matches!(lookup(&req.input, field), None | Some(Value::Null))
        {
            values.push(base.clone());
        }
        if values.is_empty() {
            // The declaration says this field holds what the call touches;
            // a call that names nothing there cannot be checked.
            return Err(match lookup(&req.input, field) {
                None | Some(Value::Null) => format!("{field} is missing"),
                Some(_) => format!("{field} names nothing to check"),
            });
        }
        match stmt.kind {
            OpKind::Path => {
                for v in values {
                    let p =
                        crate::paths::normalize(&v, &base).map_err(|e| format!("{field}: {e}"))?;
                    // elsai: a glob input stands for the files it matches; one
                    // that matches nothing is checked as written.
                    let mut paths = if stmt.expand && crate::paths::is_glob(&p) {
                        fs.glob(&p)
                    } else {
                        Vec::new()
                    };
                    if paths.is_empty() {
                        paths.push(p);
                    }
                    for p in paths {
                        let mut p = fs.resolve(&p);
                        if stmt.parent {
                            p = crate::paths::parent(&p);
                        }
                        let kind = fs.kind(&p);
                        let keep = stmt
                            .fs
                            .iter()
                            .all(|&(positive, want)| fs_holds(kind, want) == positive);
                        if keep {
                            items.push(item(Subject::Path(p)));
                        }
                    }
                }
            }
            OpKind::Command => {
                let cwd = match &stmt.cwd {
                    Some(cf) => match strings_at(&req.input, cf, None, false)?.as_slice() {
                        [] => req.cwd.as_ref().map(|_| base.clone()),
                        [one] => Some(
                            fs.resolve(
                                &crate::paths::normalize(one, &base)
                                    .map_err(|e| format!("{cf}: {e}"))?,
                            ),
                        ),
                        _ => return Err(format!("{cf} must be one string")),
                    },
                    None => req.cwd.as_ref().map(|_| base.clone()),
                };
                for v in values {
                    if v.contains('\0') {
                        return Err(format!("{field} contains a NUL byte"));
                    }
                    if stmt.raw {
                        let words = v.split_whitespace().map(str::to_string).collect();
                        items.push(item(Subject::Command(Command {
                            canonical: v.clone(),
                            text: v,
                            words,
                            opaque: None,
                            cwd: cwd.clone(),
                        })));
                        continue;
                    }
                    for seg in split_with_eval(&v) {
                        let canonical = seg.words.join(" ");
                        items.push(item(Subject::Command(Command {
                            text: seg.text,
                            words: seg.words,
                            canonical,
                            opaque: seg.opaque,
                            cwd: cwd.clone(),
                        })));
                    }
                }
            }
            OpKind::Bare => items.push(item(Subject::Bare)),
        }
    }
    if !applied {
        items.push(Item {
            tool: req.tool.clone(),
            op: "tool".into(),
            subject: Subject::Bare,
        });
    }
    if items.is_empty() {
        // Every applicable statement filtered its items away by what is on
        // disk (e.g. `if file` on a directory): nothing matched any declared
        // shape, so fail closed.
        return Err("the input matches no declared shape of this tool".into());
    }
    Ok(items)
}

/// Splits a command, and also the code that `eval` words will run: `eval`
/// joins its arguments and runs them as shell, so `eval rm x` must be
/// checked as `rm x` too. The derived segments follow the `eval` segment.
fn split_with_eval(command: &str) -> Vec<shell::Segment> {
    let mut out = Vec::new();
    let mut work: Vec<(String, u32)> = vec![(command.to_string(), 0)];
    while let Some((text, depth)) = work.pop() {
        for seg in shell::split(&text) {
            let first = seg.words.iter().position(|w| !is_assignment(w));
            let is_eval = first.is_some_and(|i| seg.words[i] == "eval");
            if let (true, Some(i)) = (is_eval && seg.opaque.is_none() && depth < 8, first) {
                let inner = seg.words[i + 1..].join(" ");
                out.push(seg);
                if !inner.trim().is_empty() {
                    work.push((inner, depth + 1));
                }
            } else {
                out.push(seg);
            }
        }
    }
    out
}

/// `NAME=value`: a variable assignment word before the command.
fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn fs_holds(kind: Option<FsKind>, want: FsKind) -> bool {
    match (kind, want) {
        (None, _) => false,
        (Some(_), FsKind::Exists) => true,
        (Some(k), w) => k == w,
    }
}

fn lookup<'v>(input: &'v serde_json::Map<String, Value>, field: &FieldPath) -> Option<&'v Value> {
    let (first, rest) = field.0.split_first()?;
    let mut v = input.get(first)?;
    for k in rest {
        v = v.as_object()?.get(k)?;
    }
    Some(v)
}

fn holds(cond: &Cond, input: &serde_json::Map<String, Value>) -> bool {
    let get = |f: &FieldPath| lookup(input, f).cloned().unwrap_or(Value::Null);
    match cond {
        Cond::Eq(f, v) => get(f) == *v,
        Cond::Ne(f, v) => get(f) != *v,
        Cond::In(f, vs) => vs.contains(&get(f)),
        Cond::NotIn(f, vs) => !vs.contains(&get(f)),
    }
}

/// The strings a field holds: a string (split on `sep`), or a list of them.
/// Missing or null gives none; anything else is malformed.
fn strings_at(
    input: &serde_json::Map<String, Value>,
    field: &FieldPath,
    sep: Option<&str>,
    json: bool,
) -> Result<Vec<String>, String> {
    let split = |s: &str| -> Vec<String> {
        match sep {
            Some(sep) => s
                .split(sep)
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect(),
            None => vec![s.to_string()],
        }
    };
    match lookup(input, field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => {
            if s.is_empty() {
                return Err(format!("{field} is empty"));
            }
            // `json`: a string that is a JSON list of strings is that list
            // (elsai's shell accepts commands spelled this way).
            // A string that is not JSON at all (`[ -f a ] && echo y`) is an
            // ordinary value; JSON that is not a list of strings is malformed.
            if json && s.trim_start().starts_with('[') {
                if let Ok(v) = serde_json::from_str::<Value>(s) {
                    return match serde_json::from_value::<Vec<String>>(v) {
                        Ok(list) => Ok(list.iter().flat_map(|x| split(x)).collect()),
                        Err(_) => Err(format!("{field} is a JSON value but not a list of strings")),
                    };
                }
            }
            Ok(split(s))
        }
        Some(Value::Array(items)) => {
            let mut out = Vec::new();
            for (i, v) in items.iter().enumerate() {
                match v {
                    Value::String(s) => out.extend(split(s)),
                    other => {
                        return Err(format!(
                            "{field}[{i}] must be a string, found {}",
                            type_name(other)
                        ));
                    }
                }
            }
            Ok(out)
        }
        Some(other) => Err(format!(
            "{field} must be a string or a list of strings, found {}",
            type_name(other)
        )),
    }
}

/// Walks a JSON document and fails on an object with a repeated key.
struct NoDuplicateKeys;

impl<'de> serde::Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicateKeysVisitor)
    }
}

struct NoDuplicateKeysVisitor;

impl<'de> serde::de::Visitor<'de> for NoDuplicateKeysVisitor {
    type Value = NoDuplicateKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(NoDuplicateKeys)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(NoDuplicateKeys)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!("duplicate key `{key}`")));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(NoDuplicateKeys)
    }
}
