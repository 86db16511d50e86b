//! The typed syntax tree of a `.perm` file. Every node carries its [`Loc`].

use super::loc::{Loc, Node};

/// A parsed `.perm` file.
#[derive(Debug, Clone, Default)]
pub struct File {
    pub imports: Vec<Node<String>>,
    pub tools: Vec<ToolDecl>,
    /// `operation NAME, ...` declarations.
    pub operations: Vec<Node<String>>,
    pub presets: Vec<Preset>,
    pub policies: Vec<Policy>,
    pub tests: Vec<TestBlock>,
}

/// `tool NAME { STMT* }`: how a tool's input becomes items to check.
#[derive(Debug, Clone)]
pub struct ToolDecl {
    pub name: Node<String>,
    pub stmts: Vec<Node<ToolStmt>>,
    pub loc: Loc,
}

/// `OP [FIELD] [OPTION...] [when COND]`; options are `split "SEP"`,
/// `cwd FIELD`, `else cwd`, `raw`, `json`, `expand`, `parent`, and
/// `if|unless exists|file|dir`.
#[derive(Debug, Clone)]
pub struct ToolStmt {
    pub op: Node<String>,
    pub field: Option<Node<FieldPath>>,
    pub split: Option<Node<String>>,
    pub cwd: Option<Node<FieldPath>>,
    pub when: Option<Node<Cond>>,
    /// Flags, each with where it was written.
    pub flags: Vec<Node<StmtFlag>>,
}

/// A tool statement option without an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StmtFlag {
    /// `else cwd`: a missing field means the request's working directory.
    ElseCwd,
    /// `raw`: the string is one command as written (code, not shell).
    Raw,
    /// `shell`: a command operation with a name other than `exec`.
    Shell,
    /// `json`: a string holding a JSON list of strings is that list.
    Json,
    /// `expand`: glob inputs are expanded against the filesystem first.
    Expand,
    /// `parent`: the item is the path's parent directory.
    Parent,
    /// `if KIND` (true) / `unless KIND` (false): keep items by what is on disk.
    Fs(bool, FsKind),
}

/// What a path names on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FsKind {
    /// Anything: file, directory or other.
    Exists,
    File,
    Dir,
}

/// `input.a.b`: the keys after `input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath(pub Vec<String>);

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "input")?;
        for k in &self.0 {
            write!(f, ".{k}")?;
        }
        Ok(())
    }
}

/// A `when` condition on the tool input.
#[derive(Debug, Clone)]
pub enum Cond {
    Eq(FieldPath, serde_json::Value),
    Ne(FieldPath, serde_json::Value),
    In(FieldPath, Vec<serde_json::Value>),
    NotIn(FieldPath, Vec<serde_json::Value>),
}

/// `preset NAME { ... }`: a named list of rules spliced by `use`.
#[derive(Debug, Clone)]
pub struct Preset {
    pub name: Node<String>,
    pub body: Vec<Node<Stmt>>,
    pub loc: Loc,
}

/// `policy NAME { ... }` or `policy NAME = all(...)`.
#[derive(Debug, Clone)]
pub struct Policy {
    pub name: Node<String>,
    pub kind: PolicyKind,
    pub loc: Loc,
}

#[derive(Debug, Clone)]
pub enum PolicyKind {
    Body(Vec<Node<Stmt>>),
    All(Vec<Node<String>>),
}

/// A statement of a policy or preset body.
#[derive(Debug, Clone)]
pub enum Stmt {
    Workspace(Node<String>),
    Combine(Node<Combine>),
    Default(Node<Effect>),
    Use(Node<String>),
    /// `grants "read, write:create_file"`: allow rules from a grant string.
    Grants(Node<String>),
    Rule(Rule),
}

/// How a policy's rules combine for one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Combine {
    /// The first rule that matches decides.
    #[default]
    FirstMatch,
    /// Every matching rule counts; the strictest outcome wins.
    Strictest,
}

/// An outcome. Ordered by strictness: `Allow < Ask < Deny`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Allow,
    Ask,
    Deny,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Allow => "allow",
            Effect::Ask => "ask",
            Effect::Deny => "deny",
        }
    }

    /// Parses an effect keyword; `interrupt` and `require_approval` mean `ask`.
    pub fn from_keyword(word: &str) -> Option<Effect> {
        match word {
            "allow" => Some(Effect::Allow),
            "deny" => Some(Effect::Deny),
            "ask" | "interrupt" | "require_approval" => Some(Effect::Ask),
            _ => None,
        }
    }
}

impl std::fmt::Display for Effect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule: `EFFECT TARGET [as NAME] [reason "..."] [guidance "..."]`.
#[derive(Debug, Clone)]
pub struct Rule {
    pub effect: Node<Effect>,
    pub target: Target,
    pub name: Option<Node<String>>,
    pub reason: Option<Node<String>>,
    pub guidance: Option<Node<String>>,
    pub loc: Loc,
}

/// What a rule applies to.
#[derive(Debug, Clone)]
pub enum Target {
    /// `tool A, B`: every item of the named tools, whatever its operation.
    Tools(Vec<Node<String>>),
    /// `OPS [on TOOLS] [MATCHERS]`.
    Ops {
        ops: Vec<Node<String>>,
        on: Option<Vec<Node<String>>>,
        matchers: Vec<Node<Matcher>>,
    },
}

/// One matcher of a rule; a rule matches when any of its matchers does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher {
    /// A glob over the normalised absolute path; `negated` for a leading `!`.
    Glob { pattern: String, negated: bool },
    /// A regex searched in the path or the command segment.
    Regex(String),
    /// Whole leading words of a command segment.
    Prefix(String),
    /// `scope [dir|file] "PATH"`: a path scope (AgentLane).
    Scope { path: String, kind: Option<FsKind> },
    /// `cwd outside workspace`: a gate that fires before every other rule.
    CwdOutsideWorkspace,
}

/// `test NAME { CASE* }`.
#[derive(Debug, Clone)]
pub struct TestBlock {
    pub name: Node<String>,
    pub cases: Vec<Node<TestCase>>,
    pub loc: Loc,
}

/// `EFFECT TOOL { input } [cwd "DIR"] [by RULE]`.
#[derive(Debug, Clone)]
pub struct TestCase {
    pub expect: Node<Effect>,
    pub tool: Node<String>,
    pub input: serde_json::Value,
    pub cwd: Option<Node<String>>,
    pub by: Option<Node<String>>,
    /// `given { files: [...], dirs: [...] }`: a fake filesystem for the case.
    pub given: Option<Node<serde_json::Value>>,
}
