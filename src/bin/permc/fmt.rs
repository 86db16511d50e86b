//! `permc fmt FILE...`: rewrite policy files in the canonical layout.

use permc::syntax::loc::SourceMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Files to format in place; `-` reads standard input and writes the
    /// result to standard output.
    #[arg(required_unless_present = "stdin")]
    files: Vec<PathBuf>,
    /// Write nothing; list the files that would change and exit 1 if any would.
    #[arg(long)]
    check: bool,
    /// Read standard input and write the result to standard output.
    #[arg(long)]
    stdin: bool,
}

/// What happened to one input.
enum Outcome {
    Unchanged,
    Changed,
    /// It did not parse (or the formatter refused); diagnostics printed.
    Refused,
    /// It could not be read or written; message printed.
    Io,
}

pub fn run(args: Args) -> ExitCode {
    let mut inputs: Vec<Option<PathBuf>> = Vec::new();
    if args.stdin {
        inputs.push(None);
    }
    for f in &args.files {
        inputs.push(if f.as_os_str() == "-" {
            None
        } else {
            Some(f.clone())
        });
    }
    if inputs.iter().filter(|i| i.is_none()).count() > 1 {
        eprintln!("error: standard input can be formatted only once");
        return ExitCode::from(2);
    }
    let mut worst = ExitCode::SUCCESS;
    let mut failed = false;
    let mut io = false;
    for input in &inputs {
        match one(input.as_deref(), args.check) {
            Outcome::Unchanged => {}
            Outcome::Changed => {
                if args.check {
                    failed = true;
                }
            }
            Outcome::Refused => failed = true,
            Outcome::Io => io = true,
        }
    }
    if io {
        worst = ExitCode::from(2);
    } else if failed {
        worst = ExitCode::from(1);
    }
    worst
}

fn one(path: Option<&std::path::Path>, check: bool) -> Outcome {
    let name = path.map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string());
    let text = match path {
        Some(p) => std::fs::read_to_string(p),
        None => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).map(|_| s)
        }
    };
    let text = match text {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read `{name}`: {e}");
            return Outcome::Io;
        }
    };
    let formatted = match permc::fmt::format(&text) {
        Ok(f) => f,
        Err(diags) => {
            let mut sources = SourceMap::new();
            sources.add(name.clone(), text.as_str());
            eprintln!(
                "{}",
                permc::diag::render_all(&diags, &sources, crate::color())
            );
            eprintln!("error: `{name}` was not formatted");
            return Outcome::Refused;
        }
    };
    let changed = formatted != text;
    if check {
        if changed {
            println!("{name}");
            return Outcome::Changed;
        }
        return Outcome::Unchanged;
    }
    match path {
        None => {
            let mut out = std::io::stdout().lock();
            if let Err(e) = out
                .write_all(formatted.as_bytes())
                .and_then(|_| out.flush())
            {
                eprintln!("error: cannot write standard output: {e}");
                return Outcome::Io;
            }
        }
        Some(p) if changed => {
            if let Err(e) = std::fs::write(p, formatted.as_bytes()) {
                eprintln!("error: cannot write `{name}`: {e}");
                return Outcome::Io;
            }
        }
        Some(_) => {}
    }
    if changed {
        Outcome::Changed
    } else {
        Outcome::Unchanged
    }
}
