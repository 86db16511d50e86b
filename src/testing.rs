//! Runs the `test` blocks of a `.perm` file: each case is decided by the
//! compiled program and by the reference interpreter, on logical paths (no
//! filesystem), and must give the expected outcome (and rule, with `by`).

use crate::eval::{self, Decision};
use crate::reference::Reference;
use crate::syntax::ast::Effect;
use crate::syntax::loc::Loc;
use crate::{Policy, Request};

/// The result of one test case.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The test block's name (the policy it tests).
    pub block: String,
    pub loc: Loc,
    pub expected: Effect,
    pub expected_rule: Option<String>,
    pub decision: Option<Decision>,
    pub passed: bool,
    /// Why it failed; empty when it passed.
    pub message: String,
}

/// Builds the filesystem a `given { files: [...], dirs: [...] }` describes.
fn fake_fs(given: &serde_json::Value) -> Result<crate::paths::FakeFs, String> {
    let list = |key: &str| -> Result<Vec<String>, String> {
        match given.get(key) {
            None => Ok(Vec::new()),
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| format!("`given.{key}` must list strings"))
                })
                .collect(),
            Some(_) => Err(format!("`given.{key}` must be a list of paths")),
        }
    };
    if let Some(obj) = given.as_object() {
        if let Some(k) = obj.keys().find(|k| *k != "files" && *k != "dirs") {
            return Err(format!("`given` takes `files` and `dirs`, not `{k}`"));
        }
    }
    Ok(crate::paths::FakeFs {
        files: list("files")?,
        dirs: list("dirs")?,
    })
}

/// Runs every test case of the file's root module.
///
/// ```
/// use permc::{Options, Policy, testing::run_tests};
/// let src = r#"
///   tool shell { exec input.command }
///   policy p { deny exec prefix "rm" }
///   test p {
///     deny shell { command: "ls; rm -rf /" }
///     allow shell { command: "rm -rf /" }
///   }
/// "#;
/// let policy = Policy::compile("p.perm", src, &Options::logical()).unwrap();
/// let results = run_tests(&policy);
/// assert!(results[0].passed);
/// assert!(!results[1].passed); // the second case expects the wrong outcome
/// ```
pub fn run_tests(policy: &Policy) -> Vec<CaseResult> {
    let low = policy.lowered();
    let reference = Reference { low };
    let mut out = Vec::new();
    for block in &low.tests {
        let pid = policy.policy_id(&block.name.node);
        for case in &block.cases {
            let mut res = CaseResult {
                block: block.name.node.clone(),
                loc: case.loc,
                expected: case.expect.node,
                expected_rule: case.by.as_ref().map(|b| b.node.clone()),
                decision: None,
                passed: false,
                message: String::new(),
            };
            let Some(pid) = pid else {
                res.message = format!("test block `{}` names no policy", block.name.node);
                out.push(res);
                continue;
            };
            let req = match Request::new(case.tool.node.clone(), case.input.clone()) {
                Ok(mut r) => {
                    r.cwd = case.cwd.as_ref().map(|c| c.node.clone());
                    r
                }
                Err(e) => {
                    res.message = e;
                    out.push(res);
                    continue;
                }
            };
            let fake = match case.given.as_ref().map(|g| fake_fs(&g.node)) {
                Some(Ok(fs)) => Some(fs),
                Some(Err(e)) => {
                    res.message = e;
                    out.push(res);
                    continue;
                }
                None => None,
            };
            let fs = fake.as_ref().map(|f| f as &dyn crate::paths::Filesystem);
            let compiled = eval::decide(low, policy.program(), pid, &req, fs);
            let oracle = eval::decide(low, &reference, pid, &req, fs);
            res.passed = true;
            if compiled != oracle {
                res.passed = false;
                res.message = format!(
                    "internal error: the compiled program says {} ({}) but the reference interpreter says {} ({})",
                    compiled.decision,
                    compiled.rule.as_deref().unwrap_or("default"),
                    oracle.decision,
                    oracle.rule.as_deref().unwrap_or("default")
                );
            } else if compiled.decision != res.expected {
                res.passed = false;
                res.message = format!(
                    "expected {}, got {}: {}",
                    res.expected, compiled.decision, compiled.reason
                );
            } else if let Some(want) = &res.expected_rule {
                if compiled.rule.as_deref() != Some(want.as_str()) {
                    res.passed = false;
                    res.message = format!(
                        "expected rule `{want}`, got {}",
                        compiled
                            .rule
                            .as_deref()
                            .map_or("the default".to_string(), |r| format!("`{r}`"))
                    );
                }
            }
            res.decision = Some(compiled);
            out.push(res);
        }
    }
    out
}
