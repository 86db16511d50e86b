//! `permc eval FILE`: one JSON decision per request. Exit 0 whenever it
//! evaluated, whatever the decisions; 2 for a bad policy or arguments.

use std::io::{BufRead, Write};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    load: crate::LoadArgs,
    /// One request as JSON; without it, one request per line on stdin.
    #[arg(long)]
    request: Option<String>,
}

pub fn run(args: Args) -> ExitCode {
    let policy = match args.load.load() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if let Some(req) = &args.request {
        let _ = writeln!(out, "{}", policy.decide_json(req).to_json());
        return ExitCode::SUCCESS;
    }
    let stdin = std::io::stdin();
    let mut reader = stdin.lock();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                eprintln!("error: reading stdin: {e}");
                return ExitCode::from(2);
            }
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let decision = if std::str::from_utf8(&buf).is_err() {
            permc::Decision::malformed(None, &policy.selected_name(), "request is not valid UTF-8")
        } else {
            policy.decide_json(line)
        };
        if writeln!(out, "{}", decision.to_json()).and_then(|_| out.flush()).is_err() {
            // The reader went away; nothing more to say.
            break;
        }
    }
    ExitCode::SUCCESS
}
