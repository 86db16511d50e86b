//! Stage 2: AST to a resolved program description.
//!
//! Lowering loads imports, checks names (tools, operations, presets, policies),
//! splices presets into policies, anchors patterns at the workspace and checks
//! every glob and regex. Its output, [`Lowered`], is a flat list of resolved
//! rules per policy: the program builder compiles it into automata, and the
//! reference interpreter evaluates it rule by rule.

pub mod grants;
pub mod patterns;
mod resolve;

use crate::diag::Diagnostic;
use crate::syntax::ast::{Combine, Cond, Effect, FieldPath, TestBlock};
use crate::syntax::loc::{Loc, SourceMap};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The workspace root used when neither the policy nor the host sets one, so
/// that `/workspace/...` patterns keep their literal meaning.
pub const DEFAULT_WORKSPACE: &str = "/workspace";

/// The standard library of profiles, loadable with `import "NAME"`.
pub const STD: &[(&str, &str)] = &[
    ("elsai", include_str!("../../std-policies/elsai.perm")),
    ("ts_sdk", include_str!("../../std-policies/ts_sdk.perm")),
    (
        "agentlane",
        include_str!("../../std-policies/agentlane.perm"),
    ),
];

/// Options for lowering.
#[derive(Debug, Clone, Default)]
pub struct LowerOptions {
    /// Overrides every policy's `workspace` (the host knows the real root).
    pub workspace: Option<String>,
    /// Consult the real filesystem while lowering: the workspace root is
    /// resolved through symlinks (as request paths will be, or a root that is
    /// itself a link would contain nothing), and a `scope "..."` asks what it
    /// names; otherwise an unqualified scope is only its exact path.
    pub real_fs: bool,
}

/// The result of lowering one root file and its imports.
#[derive(Debug, Clone)]
pub struct Lowered {
    pub tools: Vec<ToolDef>,
    pub tool_index: HashMap<String, u32>,
    pub policies: Vec<ResolvedPolicy>,
    /// Policy names as the root file spells them: `agent`, `elsai.read_only`.
    pub policy_index: HashMap<String, u32>,
    /// Test blocks of the root file.
    pub tests: Vec<TestBlock>,
    /// Policies defined in the root file, in source order.
    pub root_policies: Vec<u32>,
    pub warnings: Vec<Diagnostic>,
}

/// What kind of item an operation produces.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub enum OpKind {
    /// A path, checked by globs and regexes.
    Path,
    /// A shell command, split into segments.
    Command,
    /// No subject: only the tool and operation are known.
    Bare,
}

/// A declared tool.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: String,
    pub stmts: Vec<ToolStmtDef>,
    pub loc: Loc,
}

/// One statement of a tool declaration.
#[derive(Debug, Clone)]
pub struct ToolStmtDef {
    pub op: String,
    pub kind: OpKind,
    pub field: Option<FieldPath>,
    pub split: Option<String>,
    pub cwd: Option<FieldPath>,
    pub when: Option<Cond>,
    /// `else cwd`: a missing field means the request's working directory.
    pub else_cwd: bool,
    /// `raw`: commands are one segment as written.
    pub raw: bool,
    /// `json`: a string holding a JSON list of strings is that list.
    pub json: bool,
    /// `expand`: glob inputs are expanded against the filesystem.
    pub expand: bool,
    /// `parent`: the item is the path's parent directory.
    pub parent: bool,
    /// `if`/`unless` filesystem conditions, all of which must hold per item.
    pub fs: Vec<(bool, crate::syntax::ast::FsKind)>,
}

#[derive(Debug, Clone)]
pub struct ResolvedPolicy {
    /// The qualified name: `agent`, `elsai.read_only`.
    pub name: String,
    pub loc: Loc,
    pub body: PolicyBody,
}

#[derive(Debug, Clone)]
pub enum PolicyBody {
    Rules(RuleList),
    /// `all(...)`: indexes into [`Lowered::policies`].
    All(Vec<u32>),
}

/// A policy's flattened rules and settings.
#[derive(Debug, Clone)]
pub struct RuleList {
    /// The normalised workspace root.
    pub workspace: String,
    pub combine: Combine,
    pub default: Effect,
    pub rules: Vec<ResolvedRule>,
}

/// One rule after preset splicing and name resolution.
#[derive(Debug, Clone)]
pub struct ResolvedRule {
    pub effect: Effect,
    /// `None`: every tool. Names may include `*`, which also means every tool.
    pub tools: Option<Vec<String>>,
    /// `None`: every operation (a `tool` rule).
    pub ops: Option<Vec<String>>,
    /// Empty: the rule matches every item its tools and operations select.
    pub matchers: Vec<ResolvedMatcher>,
    /// The rule has `cwd outside workspace`: it runs in the first pass and its
    /// other matchers never run (elsai's documented semantics).
    pub gate: bool,
    pub name: Option<String>,
    pub reason: Option<String>,
    pub guidance: Option<String>,
    /// `name`, else `reason`, else a generated label such as `deny:**/.env`.
    pub label: String,
    pub loc: Loc,
    /// The `use` statements that spliced this rule in, outermost first.
    pub via: Vec<Loc>,
}

impl ResolvedRule {
    pub fn applies_to_tool(&self, tool: &str) -> bool {
        match &self.tools {
            None => true,
            Some(names) => names.iter().any(|n| n == "*" || n == tool),
        }
    }

    pub fn applies_to_op(&self, op: &str) -> bool {
        match &self.ops {
            None => true,
            Some(ops) => ops.iter().any(|o| o == op),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolvedMatcher {
    /// `source` as written; `anchored` after workspace anchoring; `regex` the
    /// whole-path regex globset built for it.
    Glob {
        source: String,
        anchored: String,
        regex: String,
        negated: bool,
        loc: Loc,
    },
    /// Searched in the path or in the command segment's text.
    Regex { source: String, loc: Loc },
    /// Whole leading words of a command segment.
    Prefix { words: Vec<String>, loc: Loc },
}

/// Lowering failed: every error found, with the sources to render them.
#[derive(Debug, Clone)]
pub struct Failure {
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lowers a file from disk; its relative imports resolve against its folder.
pub fn lower_file(path: &Path, opts: &LowerOptions) -> Result<(Lowered, SourceMap), Failure> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let key = std::fs::canonicalize(path)
                .ok()
                .map(|c| c.display().to_string());
            lower_inner(&path.display().to_string(), &text, path.parent(), key, opts)
        }
        Err(e) => Err(Failure {
            sources: SourceMap::new(),
            diagnostics: vec![Diagnostic::error(
                "permc::io",
                format!("cannot read `{}`: {e}", path.display()),
            )],
        }),
    }
}

/// Lowers source text. `dir` is where relative imports are looked up.
///
/// ```
/// use permc::lower::{lower_source, LowerOptions};
/// let (low, _) = lower_source("p.perm", "policy p { deny tool Bash }", None, &LowerOptions::default()).unwrap();
/// assert_eq!(low.policies.len(), 1);
/// // Unknown presets are errors, with every error collected:
/// let err = lower_source("p.perm", "policy p { use nope use nada }", None, &LowerOptions::default()).unwrap_err();
/// assert_eq!(err.diagnostics.len(), 2);
/// ```
pub fn lower_source(
    name: &str,
    text: &str,
    dir: Option<&Path>,
    opts: &LowerOptions,
) -> Result<(Lowered, SourceMap), Failure> {
    lower_inner(name, text, dir, None, opts)
}

fn lower_inner(
    name: &str,
    text: &str,
    dir: Option<&Path>,
    root_key: Option<String>,
    opts: &LowerOptions,
) -> Result<(Lowered, SourceMap), Failure> {
    let mut sources = SourceMap::new();
    let mut diags = Vec::new();
    let modules = load_modules(
        name,
        text,
        dir.map(Path::to_path_buf),
        root_key,
        &mut sources,
        &mut diags,
    );
    if diags.iter().any(Diagnostic::is_error) {
        return Err(Failure {
            sources,
            diagnostics: diags,
        });
    }
    let lowered = resolve::resolve(&modules, opts, &mut diags);
    if diags.iter().any(Diagnostic::is_error) {
        diags.sort_by_key(|d| d.severity != crate::diag::Severity::Error);
        return Err(Failure {
            sources,
            diagnostics: diags,
        });
    }
    let mut lowered = lowered;
    lowered.warnings = diags;
    Ok((lowered, sources))
}

/// One parsed file and the name its importer uses for it.
pub(crate) struct Module {
    /// `""` for the root file, else the import's name (`elsai`, `lib`).
    pub name: String,
    pub file: crate::syntax::ast::File,
    /// Module indexes of this module's imports, by the name used to qualify.
    pub imports: HashMap<String, usize>,
}

const MAX_SOURCE: usize = 16 << 20;

fn load_modules(
    name: &str,
    text: &str,
    dir: Option<PathBuf>,
    root_key: Option<String>,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Module> {
    let mut modules: Vec<Module> = Vec::new();
    // Key (std name or canonical path) -> module index, so a module imported
    // twice (or in a cycle, back to the root too) loads once.
    let mut seen: HashMap<String, usize> = HashMap::new();
    if let Some(k) = root_key {
        seen.insert(k, 0);
    }
    let mut queue: Vec<(usize, Option<PathBuf>)> = Vec::new();
    if text.len() > MAX_SOURCE {
        diags.push(Diagnostic::error(
            "permc::io",
            format!("`{name}` is larger than 16 MiB"),
        ));
        return modules;
    }
    let id = sources.add(name, text);
    match crate::syntax::parse(text, id) {
        Ok(file) => {
            modules.push(Module {
                name: String::new(),
                file,
                imports: HashMap::new(),
            });
            queue.push((0, dir));
        }
        Err(e) => diags.extend(e),
    }
    while let Some((idx, dir)) = queue.pop() {
        let imports: Vec<_> = modules[idx].file.imports.clone();
        for imp in imports {
            let (key, modname, loaded) = match load_import(&imp.node, dir.as_deref()) {
                Ok(found) => found,
                Err(msg) => {
                    let known: Vec<&str> = STD.iter().map(|(n, _)| *n).collect();
                    let mut d = Diagnostic::error("permc::unknown-import", msg)
                        .label(imp.loc, "imported here");
                    d = d.help(crate::diag::did_you_mean(&imp.node, known.iter().copied()).unwrap_or_else(
                        || if imp.node.ends_with(".perm") {
                            "the path is relative to the importing file's folder".to_string()
                        } else {
                            format!("standard profiles are {}; import a file by a path ending in `.perm`", known.join(", "))
                        },
                    ));
                    diags.push(d);
                    continue;
                }
            };
            if let Some(&existing) = seen.get(&key) {
                modules[idx].imports.insert(modname, existing);
                continue;
            }
            let (display, text, next_dir) = loaded;
            let fid = sources.add(display, text.as_str());
            match crate::syntax::parse(&text, fid) {
                Ok(file) => {
                    modules.push(Module {
                        name: modname.clone(),
                        file,
                        imports: HashMap::new(),
                    });
                    let new = modules.len() - 1;
                    seen.insert(key, new);
                    modules[idx].imports.insert(modname, new);
                    queue.push((new, next_dir));
                }
                Err(e) => diags.extend(e),
            }
        }
    }
    modules
}

type Loaded = (String, String, (String, String, Option<PathBuf>));

/// Finds an import: a standard profile by name, or a `.perm` file by path.
fn load_import(spec: &str, dir: Option<&Path>) -> Result<Loaded, String> {
    if let Some((_, text)) = STD.iter().find(|(n, _)| *n == spec) {
        return Ok((
            format!("std:{spec}"),
            spec.to_string(),
            (format!("<std>/{spec}.perm"), text.to_string(), None),
        ));
    }
    if !spec.ends_with(".perm") {
        return Err(format!("unknown import `{spec}`"));
    }
    let path = match dir {
        Some(d) => d.join(spec),
        None => PathBuf::from(spec),
    };
    let canon =
        std::fs::canonicalize(&path).map_err(|e| format!("cannot read import `{spec}`: {e}"))?;
    let text =
        std::fs::read_to_string(&canon).map_err(|e| format!("cannot read import `{spec}`: {e}"))?;
    if text.len() > MAX_SOURCE {
        return Err(format!("import `{spec}` is larger than 16 MiB"));
    }
    let stem = Path::new(spec)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let next_dir = canon.parent().map(Path::to_path_buf);
    Ok((
        canon.display().to_string(),
        stem,
        (path.display().to_string(), text, next_dir),
    ))
}
