//! `permc explain FILE --request JSON`: a rule-by-rule trace.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    load: crate::LoadArgs,
    /// The request to explain, as JSON.
    #[arg(long)]
    request: String,
}

pub fn run(args: Args) -> ExitCode {
    let policy = match args.load.load() {
        Ok(p) => p,
        Err(code) => return code,
    };
    match permc::Request::from_json(&args.request) {
        Ok(req) => {
            print!("{}", permc::explain::explain(&policy, None, &req));
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("malformed request: {why}");
            println!("decision: deny");
            ExitCode::SUCCESS
        }
    }
}
