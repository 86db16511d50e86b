//! `permc diff OLD NEW`: what changed in behaviour between two versions of a
//! policy, with a verified witness input per changed class.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The old version of the policy file.
    old: PathBuf,
    /// The new version of the policy file.
    new: PathBuf,
    /// The policy to compare when a file defines several (the same name in both).
    #[arg(long)]
    policy: Option<String>,
    /// The workspace root for both files; overrides their `workspace`.
    #[arg(long)]
    workspace: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

pub fn run(args: Args) -> ExitCode {
    if let Err(code) = crate::check_workspace(&args.workspace) {
        return code;
    }
    let opts = permc::Options {
        workspace: args.workspace.clone(),
        policy: args.policy.clone(),
        ..permc::Options::logical()
    };
    let load = |path: &PathBuf| -> Result<permc::Policy, ExitCode> {
        match permc::Policy::load(path, &opts) {
            Ok(p) if p.selected().is_some() => Ok(p),
            Ok(p) if p.policy_names().is_empty() => {
                eprintln!("error: `{}` defines no policy to compare", path.display());
                Err(ExitCode::from(2))
            }
            Ok(p) => {
                eprintln!(
                    "error: `{}` defines several policies ({}); choose one with --policy",
                    path.display(),
                    p.policy_names().join(", ")
                );
                Err(ExitCode::from(2))
            }
            Err(e) => {
                eprintln!("{}", e.render(crate::color()));
                Err(ExitCode::from(2))
            }
        }
    };
    let (old, new) = match (load(&args.old), load(&args.new)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let report = match permc::diff::diff(&old, &new, &permc::diff::Limits::default()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot compare: {e}");
            return ExitCode::from(2);
        }
    };
    match args.format {
        Format::Text => print!("{}", report.to_text()),
        Format::Json => {
            println!("{}", report.to_json());
            for n in &report.notes {
                eprintln!("note: {n}");
            }
            for e in &report.internal_errors {
                eprintln!("internal error: {e}");
            }
        }
    }
    if report.behaviour_changed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
