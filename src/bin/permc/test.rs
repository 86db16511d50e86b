//! `permc test FILE...`: run the test blocks; the last line is
//! `N passed, N failed`; exit 1 on any failure.

use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Policy files whose test blocks to run.
    #[arg(required = true)]
    files: Vec<std::path::PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &args.files {
        let policy = match permc::Policy::load(file, &permc::Options::logical()) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{}", e.render(crate::color()));
                failed += 1;
                continue;
            }
        };
        for r in permc::testing::run_tests(&policy) {
            let (line, col) = policy.sources().line_col(r.loc);
            if r.passed {
                passed += 1;
            } else {
                failed += 1;
                println!(
                    "FAIL {}:{line}:{col} test `{}`: {}",
                    file.display(),
                    r.block,
                    r.message
                );
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
