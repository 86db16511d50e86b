//! AgentLane grant strings: `read, find, write:create_file`.

use super::ToolDef;

/// One granted (tool, operations) pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The entry as written.
    pub entry: String,
    pub tool: String,
    /// A whole-tool entry lists the tool's declared operations; an
    /// operation entry lists one.
    pub ops: Vec<String>,
}

/// Parses a comma-separated grant string against the declared tools.
/// Returns the grants (duplicates preserved, in order) and every invalid
/// entry, so callers can report them together. Whole-tool entries expand to
/// the tool's declared operations, not to a wildcard; `tool:op` must name an
/// operation the tool declares.
///
/// ```
/// use permc::lower::grants::parse_grants;
/// use permc::{Options, Policy};
/// let p = Policy::compile("t.perm", "tool write { create_file input.path\n overwrite_file input.path }",
///     &Options::logical()).unwrap();
/// let (grants, invalid) = parse_grants("write, write:create_file, write:read_file, web", &p.lowered().tools);
/// assert_eq!(grants[0].ops, ["create_file", "overwrite_file"]);
/// assert_eq!(grants[1].ops, ["create_file"]);
/// assert_eq!(invalid, ["write:read_file", "web"]);
/// ```
pub fn parse_grants(text: &str, tools: &[ToolDef]) -> (Vec<Grant>, Vec<String>) {
    let mut grants = Vec::new();
    let mut invalid = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (tool, op) = match entry.split_once(':') {
            Some((t, o)) => (t.trim(), Some(o.trim())),
            None => (entry, None),
        };
        let Some(def) = tools.iter().find(|t| t.name == tool) else {
            invalid.push(entry.to_string());
            continue;
        };
        let mut declared: Vec<String> = Vec::new();
        for s in &def.stmts {
            if !declared.contains(&s.op) {
                declared.push(s.op.clone());
            }
        }
        let ops = match op {
            None => declared,
            Some(o) if declared.iter().any(|d| d == o) => vec![o.to_string()],
            Some(_) => {
                invalid.push(entry.to_string());
                continue;
            }
        };
        grants.push(Grant {
            entry: entry.to_string(),
            tool: tool.to_string(),
            ops,
        });
    }
    (grants, invalid)
}
