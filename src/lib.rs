//! permc: a declarative permission-policy language for AI-agent tool calls.
//!
//! A host asks one question before each tool call: may it run? permc answers
//! `allow`, `deny` or `ask` from a `.perm` policy compiled to automata.
//!
//! ```
//! use permc::{Effect, Options, Policy, Request};
//! let src = r#"
//!     tool file_read { read input.path split "," }
//!     policy agent {
//!       workspace "/home/user/project"
//!       deny read "**/.env" as deny_env
//!       allow read "/workspace/**"
//!       default deny
//!     }
//! "#;
//! let policy = Policy::compile("agent.perm", src, &Options::logical()).unwrap();
//! let req = Request::new("file_read", serde_json::json!({"path": "README.md,.env"})).unwrap();
//! let d = policy.decide(&req);
//! assert_eq!(d.decision, Effect::Deny);
//! assert_eq!(d.rule.as_deref(), Some("deny_env"));
//!
//! // Errors are collected and rendered with their source:
//! let err = Policy::compile("bad.perm", "policy p { use missing }", &Options::logical()).unwrap_err();
//! assert!(err.render(false).contains("unknown preset `missing`"));
//! ```
//!
//! The pipeline, one module per stage: [`syntax`] (pest) → [`lower`] →
//! [`program`] → [`eval`]; [`reference`] is the slow oracle the tests compare
//! against; [`shell`] splits commands; [`paths`] normalises and resolves.

pub mod analysis;
pub mod diag;
pub mod diff;
pub mod eval;
pub mod explain;
pub mod fmt;
pub mod lower;
pub mod paths;
pub mod program;
pub mod reference;
pub mod request;
pub mod session;
pub mod shell;
pub mod syntax;
pub mod testing;

pub use diag::{Diagnostic, Severity};
pub use eval::{Decision, ItemDecision};
pub use request::Request;
pub use syntax::ast::Effect;

use lower::{LowerOptions, Lowered};
use program::{Limits, Program};
use std::path::Path;
use syntax::loc::SourceMap;

/// How to compile and evaluate a policy.
#[derive(Debug, Clone)]
pub struct Options {
    /// The workspace root; overrides the policies' `workspace` settings.
    /// Default: none (each policy's own, else `/workspace`).
    pub workspace: Option<String>,
    /// The policy `decide` uses. Default: the file's only policy.
    pub policy: Option<String>,
    /// Resolve symlinks and the nearest existing parent on the real
    /// filesystem before matching. Default: true.
    pub resolve_paths: bool,
    /// Automaton size limits. Default: [`Limits::default`].
    pub limits: Limits,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            workspace: None,
            policy: None,
            resolve_paths: true,
            limits: Limits::default(),
        }
    }
}

impl Options {
    /// Options that never touch the filesystem: paths are matched as written
    /// (after normalisation). Test blocks run this way.
    pub fn logical() -> Self {
        Options {
            resolve_paths: false,
            ..Options::default()
        }
    }
}

/// Compilation failed; every error found is here.
#[derive(Debug, Clone)]
pub struct CompileError {
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

impl CompileError {
    /// Renders every diagnostic with its source snippet.
    pub fn render(&self, color: bool) -> String {
        diag::render_all(&self.diagnostics, &self.sources, color)
    }
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(false))
    }
}

impl std::error::Error for CompileError {}

/// A compiled `.perm` file: load once, decide many times from many threads.
#[derive(Debug, Clone)]
pub struct Policy {
    lowered: Lowered,
    program: Program,
    sources: SourceMap,
    selected: Option<u32>,
    resolve_paths: bool,
}

impl Policy {
    /// Compiles source text. Relative imports resolve against the process's
    /// current directory.
    pub fn compile(name: &str, text: &str, opts: &Options) -> Result<Policy, CompileError> {
        let lowered = lower::lower_source(name, text, None, &lower_opts(opts));
        Policy::finish(lowered, opts)
    }

    /// Compiles a file; its relative imports resolve against its folder.
    pub fn load(path: impl AsRef<Path>, opts: &Options) -> Result<Policy, CompileError> {
        Policy::finish(lower::lower_file(path.as_ref(), &lower_opts(opts)), opts)
    }

    fn finish(
        lowered: Result<(Lowered, SourceMap), lower::Failure>,
        opts: &Options,
    ) -> Result<Policy, CompileError> {
        let (lowered, sources) = lowered.map_err(|f| CompileError {
            sources: f.sources,
            diagnostics: f.diagnostics,
        })?;
        let program =
            Program::build(&lowered, opts.limits).map_err(|diagnostics| CompileError {
                sources: sources.clone(),
                diagnostics,
            })?;
        let selected = match &opts.policy {
            Some(name) => match lowered.policy_index.get(name) {
                Some(&i) => Some(i),
                None => {
                    let known: Vec<&str> =
                        lowered.policy_index.keys().map(String::as_str).collect();
                    let mut d = Diagnostic::error(
                        "permc::unknown-policy",
                        format!("unknown policy `{name}`"),
                    );
                    d = d.help(
                        diag::did_you_mean(name, known.iter().copied()).unwrap_or_else(|| {
                            let mut k = known.clone();
                            k.sort_unstable();
                            format!("the file defines: {}", k.join(", "))
                        }),
                    );
                    return Err(CompileError {
                        sources,
                        diagnostics: vec![d],
                    });
                }
            },
            None if lowered.root_policies.len() == 1 => lowered.root_policies.first().copied(),
            None => None,
        };
        Ok(Policy {
            lowered,
            program,
            sources,
            selected,
            resolve_paths: opts.resolve_paths,
        })
    }

    /// Decides a request under the selected policy. Never panics and never
    /// errors: anything that cannot be evaluated is a deny with a reason.
    pub fn decide(&self, req: &Request) -> Decision {
        match self.selected {
            Some(p) => self.decide_with(p, req),
            None => {
                let names = self.policy_names().join("`, `");
                Decision::malformed(
                    req.id.clone(),
                    "",
                    &format!("no policy selected: the file defines `{names}`; choose one"),
                )
            }
        }
    }

    /// Decides a request under the named policy.
    pub fn decide_as(&self, policy: &str, req: &Request) -> Option<Decision> {
        let &p = self.lowered.policy_index.get(policy)?;
        Some(self.decide_with(p, req))
    }

    fn decide_with(&self, p: u32, req: &Request) -> Decision {
        let resolver: Option<request::Resolver> = if self.resolve_paths {
            Some(&paths::RealFs)
        } else {
            None
        };
        eval::decide(&self.lowered, &self.program, p, req, resolver)
    }

    /// Decides a request given as a JSON line; malformed JSON is a deny.
    pub fn decide_json(&self, line: &str) -> Decision {
        match Request::from_json(line) {
            Ok(r) => self.decide(&r),
            Err(why) => Decision::malformed(Request::id_of(line), &self.selected_name(), &why),
        }
    }

    /// The root file's policies, in source order.
    pub fn policy_names(&self) -> Vec<&str> {
        self.lowered
            .root_policies
            .iter()
            .map(|&i| self.lowered.policies[i as usize].name.as_str())
            .collect()
    }

    /// The name of the policy `decide` uses, or empty.
    pub fn selected_name(&self) -> String {
        self.selected
            .map(|i| self.lowered.policies[i as usize].name.clone())
            .unwrap_or_default()
    }

    /// Lowering warnings (the file compiled).
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.lowered.warnings
    }

    pub fn sources(&self) -> &SourceMap {
        &self.sources
    }

    pub fn lowered(&self) -> &Lowered {
        &self.lowered
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Whether the filesystem resolver is on.
    pub fn resolves_paths(&self) -> bool {
        self.resolve_paths
    }

    /// Index of a named policy.
    pub fn policy_id(&self, name: &str) -> Option<u32> {
        self.lowered.policy_index.get(name).copied()
    }

    pub fn selected(&self) -> Option<u32> {
        self.selected
    }
}

fn lower_opts(opts: &Options) -> LowerOptions {
    LowerOptions {
        workspace: opts.workspace.clone(),
        real_fs: opts.resolve_paths,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn policy_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<super::Policy>();
    }
}
