//! Runs the test blocks of every `.perm` file in tests/corpus/,
//! tests/conformance/, examples/ and
//! std-policies/ through both backends (compiled program and reference
//! interpreter; `run_tests` fails a case when they disagree).

use permc::{Options, Policy, testing::run_tests};
use std::path::Path;

fn perm_files(dir: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "perm"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_case_passes_on_every_backend() {
    let mut total = 0;
    let mut failures = Vec::new();
    for file in perm_files("tests/corpus")
        .into_iter()
        .chain(perm_files("tests/conformance"))
        .chain(perm_files("examples"))
        .chain(perm_files("std-policies"))
    {
        let policy = match Policy::load(&file, &Options::logical()) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!(
                    "{}: does not compile\n{}",
                    file.display(),
                    e.render(false)
                ));
                continue;
            }
        };
        for r in run_tests(&policy) {
            total += 1;
            if !r.passed {
                let (line, _) = policy.sources().line_col(r.loc);
                failures.push(format!("{}:{line}: {}", file.display(), r.message));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Deleting corpus files must not pass silently.
    assert!(total >= 100, "only {total} corpus cases ran");
}

#[test]
fn a_wrong_expectation_fails() {
    let src = "tool t { read input.path }\npolicy p { deny read \"**\" }\ntest p { allow t { path: \"/x\" } }";
    let policy = Policy::compile("p.perm", src, &Options::logical()).unwrap();
    let results = run_tests(&policy);
    assert_eq!(results.len(), 1);
    assert!(!results[0].passed);
    assert!(
        results[0].message.contains("expected allow, got deny"),
        "{}",
        results[0].message
    );
}
