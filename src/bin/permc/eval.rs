//! `permc eval FILE`: one JSON decision per request. Exit 0 whenever it
//! evaluated, whatever the decisions; 2 for a bad policy or arguments.
//!
//! With `--session` (or `--audit`, or `--deny-policy`), the input stream is
//! one agent invocation: denies go through the deny policy (budgets count
//! across the stream), `ask` outcomes become interrupts that later lines may
//! answer with `{"interrupt_response": {"interruptId": ID, "response": "approve"}}`,
//! and every evaluation is written to the audit file.

use permc::session::{DenyPolicy, OnDeny, Outcome, Session};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    load: crate::LoadArgs,
    /// One request as JSON; without it, one request per line on stdin.
    #[arg(long)]
    request: Option<String>,
    /// Treat the input as one invocation: deny policy, interrupts, budgets.
    #[arg(long)]
    session: bool,
    /// The deny policy as JSON, e.g. '{"on_deny":"guide","max_denies_per_invocation":2}'.
    /// Implies --session.
    #[arg(long)]
    deny_policy: Option<String>,
    /// Append one JSON audit record per evaluation to FILE. Implies --session.
    #[arg(long)]
    audit: Option<std::path::PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let policy = match args.load.load() {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut session = None;
    if args.session || args.deny_policy.is_some() || args.audit.is_some() {
        let mut s = Session::new(Arc::new(policy.clone()));
        if let Some(dp) = &args.deny_policy {
            match serde_json::from_str::<DenyPolicy>(dp) {
                Ok(dp) => s = s.with_deny_policy(dp),
                Err(e) => {
                    eprintln!("error: --deny-policy is not a valid deny policy: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        if let Some(path) = &args.audit {
            match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                Ok(f) => s = s.with_audit(Box::new(f)),
                Err(e) => {
                    eprintln!("error: cannot open audit file `{}`: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
        }
        for w in s.warnings() {
            eprintln!("warning: {w}");
        }
        session = Some(Stream {
            session: s,
            stopped: false,
        });
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut answer = |line: &str| -> String {
        match &mut session {
            Some(st) => st.line(line),
            None => policy.decide_json(line).to_json(),
        }
    };
    if let Some(req) = &args.request {
        let _ = writeln!(out, "{}", answer(req));
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
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t.trim().to_string(),
            Err(_) => {
                let d = permc::Decision::malformed(
                    None,
                    &policy.selected_name(),
                    "request is not valid UTF-8",
                );
                if writeln!(out, "{}", d.to_json()).is_err() {
                    break;
                }
                continue;
            }
        };
        if text.is_empty() {
            continue;
        }
        if writeln!(out, "{}", answer(&text))
            .and_then(|_| out.flush())
            .is_err()
        {
            // The reader went away; nothing more to say.
            break;
        }
    }
    ExitCode::SUCCESS
}

/// One invocation's worth of lines.
struct Stream {
    session: Session,
    /// After a `stop`, the invocation is over: every later call is denied.
    stopped: bool,
}

impl Stream {
    fn line(&mut self, line: &str) -> String {
        let parsed: Option<serde_json::Value> = serde_json::from_str(line).ok();
        if let Some(resp) = parsed.as_ref().and_then(|v| v.get("interrupt_response")) {
            let id = resp
                .get("interruptId")
                .and_then(|v| v.as_str())
                .unwrap_or("");
            // Anything but the exact approve response rejects, a missing one included.
            let response = resp.get("response").and_then(|v| v.as_str()).unwrap_or("");
            let outcome = self.session.resolve_interrupt(id, response);
            return self.render(outcome);
        }
        if self.stopped {
            let mut d = permc::Decision::malformed(permc::Request::id_of(line), "", "");
            d.reason = "the invocation was stopped after a deny (on_deny: stop)".into();
            return with_fields(
                &d,
                &[("stop_reason", serde_json::json!("permission_denied"))],
            );
        }
        let outcome = self.session.evaluate_json(line);
        self.render(outcome)
    }

    fn render(&mut self, o: Outcome) -> String {
        let mut extra: Vec<(&str, serde_json::Value)> = Vec::new();
        if let Some(a) = o.action {
            extra.push(("deny_action", serde_json::json!(a)));
            if a == OnDeny::Stop {
                self.stopped = true;
                extra.push(("stop_reason", serde_json::json!("permission_denied")));
            }
        }
        if let Some(g) = &o.guidance {
            extra.push(("model_guidance", serde_json::json!(g)));
        }
        if let Some(i) = &o.interrupt {
            extra.push((
                "interrupt",
                serde_json::json!({"id": i.id, "name": i.name, "reason": i.reason}),
            ));
            extra.push(("stop_reason", serde_json::json!("interrupt")));
        }
        with_fields(&o.decision, &extra)
    }
}

fn with_fields(d: &permc::Decision, extra: &[(&str, serde_json::Value)]) -> String {
    let mut v = serde_json::to_value(d).unwrap_or_else(|_| serde_json::json!({"decision": "deny"}));
    if let Some(obj) = v.as_object_mut() {
        for (k, val) in extra {
            obj.insert((*k).to_string(), val.clone());
        }
    }
    v.to_string()
}
