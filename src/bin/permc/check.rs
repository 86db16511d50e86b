//! `permc check FILE...`: compile each file, print every diagnostic.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy files to check.
    #[arg(required = true)]
    files: Vec<std::path::PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Exit 1 on warnings too.
    #[arg(long)]
    deny_warnings: bool,
    /// The workspace root to anchor patterns at.
    #[arg(long)]
    workspace: Option<String>,
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
        ..permc::Options::logical()
    };
    let mut errors = 0usize;
    let mut warnings = 0usize;
    let mut json = Vec::new();
    for file in &args.files {
        let (diags, sources) = match permc::Policy::load(file, &opts) {
            Ok(p) => {
                let mut diags = p.warnings().to_vec();
                diags.extend(permc::analysis::lint_policy(&p));
                (diags, p.sources().clone())
            }
            Err(e) => (e.diagnostics, e.sources),
        };
        for d in &diags {
            if d.is_error() {
                errors += 1;
            } else {
                warnings += 1;
            }
            match args.format {
                Format::Text => eprintln!("{}", d.render(&sources, crate::color())),
                Format::Json => {
                    let mut v = d.to_json(&sources);
                    // Findings without a source location still belong to a file.
                    if v["file"].is_null() {
                        v["file"] = serde_json::Value::String(file.display().to_string());
                    }
                    json.push(v);
                }
            }
        }
    }
    match args.format {
        Format::Json => println!("{}", serde_json::Value::Array(json)),
        Format::Text => eprintln!(
            "{} file(s) checked: {errors} error(s), {warnings} warning(s)",
            args.files.len()
        ),
    }
    if errors > 0 || (args.deny_warnings && warnings > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
