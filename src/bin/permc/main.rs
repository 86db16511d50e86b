//! The `permc` command line: one file per subcommand.

mod check;
mod diff;
mod eval;
mod explain;
mod fmt;
mod test;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "permc",
    version,
    about = "Permission policies for AI-agent tool calls"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check policy files; exit 1 on any error.
    Check(check::Args),
    /// Show what changed in behaviour between two versions of a policy.
    Diff(diff::Args),
    /// Decide JSON requests, one decision per line.
    Eval(eval::Args),
    /// Trace how a request is decided, rule by rule.
    Explain(explain::Args),
    /// Rewrite policy files in the canonical layout.
    Fmt(fmt::Args),
    /// Run the test blocks of policy files.
    Test(test::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // Help and version are not errors; everything else is a usage error.
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(2),
            };
        }
    };
    match cli.command {
        Command::Check(a) => check::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Fmt(a) => fmt::run(a),
        Command::Test(a) => test::run(a),
    }
}

/// Options shared by the subcommands that load one policy.
#[derive(clap::Args, Debug, Clone)]
pub struct LoadArgs {
    /// The policy file.
    pub file: std::path::PathBuf,
    /// The policy to use when the file defines several.
    #[arg(long)]
    pub policy: Option<String>,
    /// The workspace root; overrides the policy's `workspace`.
    #[arg(long)]
    pub workspace: Option<String>,
    /// Match paths as written, without resolving symlinks on this machine.
    #[arg(long)]
    pub no_resolve: bool,
}

impl LoadArgs {
    /// Loads the policy, printing diagnostics on failure.
    pub fn load(&self) -> Result<permc::Policy, ExitCode> {
        check_workspace(&self.workspace)?;
        let opts = permc::Options {
            workspace: self.workspace.clone(),
            policy: self.policy.clone(),
            resolve_paths: !self.no_resolve,
            ..permc::Options::default()
        };
        match permc::Policy::load(&self.file, &opts) {
            Ok(p) => {
                if p.selected().is_none() && p.policy_names().is_empty() {
                    eprintln!(
                        "error: `{}` defines no policy to evaluate",
                        self.file.display()
                    );
                    return Err(ExitCode::from(2));
                }
                if p.selected().is_none() {
                    eprintln!(
                        "error: `{}` defines several policies ({}); choose one with --policy",
                        self.file.display(),
                        p.policy_names().join(", ")
                    );
                    return Err(ExitCode::from(2));
                }
                Ok(p)
            }
            Err(e) => {
                eprintln!("{}", e.render(color()));
                Err(ExitCode::from(2))
            }
        }
    }
}

/// Colour only on a terminal, and never when NO_COLOR is set.
pub fn color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// `--workspace` must be absolute: a relative root would be anchored at `/`
/// and silently mean something else.
pub fn check_workspace(workspace: &Option<String>) -> Result<(), ExitCode> {
    match workspace {
        Some(w) if !w.starts_with('/') => {
            eprintln!("error: --workspace must be an absolute path, got `{w}`");
            Err(ExitCode::from(2))
        }
        _ => Ok(()),
    }
}
