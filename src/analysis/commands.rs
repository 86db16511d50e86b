//! Command rules: `permc::unanchored-regex` and `permc::exec-wrapper-allow`.
//!
//! A command regex is searched in the segment's text, so `/rm/` also matches
//! `npm run format`. A `deny`/`ask` regex is reported when it can match
//! starting *inside* a word (right after a word character, with no word
//! boundary in between): that is never the command the author named. Word-
//! boundary regexes such as `/\bsudo\b/` and syntax regexes such as a
//! redirect `/>/` are left alone. An `allow` regex is reported when it can
//! match anywhere but at the start of the segment, since then it allows
//! commands that merely mention the allowed one (`rm -rf ls` for `/ls/`).
//! The witness comes from a short list of realistic commands when one fits,
//! else from the automaton.
//!
//! An allow whose command runs its arguments as another command (`sudo`,
//! `env`, `xargs`, `bash -c`, `find -exec`, ...) allows any command; the
//! witness is such a command that the rule matches.

use super::claims::Subject;
use super::lang::{Comp, Kind, Spec, Tri, encode};
use super::matchers::kinds_by_rule;
use super::walk::Search;
use super::{Ctx, labels};
use crate::diag::Diagnostic;
use crate::lower::{ResolvedMatcher, ResolvedRule, RuleList};
use crate::syntax::ast::Effect;
use std::ops::ControlFlow;

/// Realistic commands, tried in order for a witness.
const REALISTIC: &[&str] = &[
    "npm run format",
    "cargo fmt --all",
    "terraform plan",
    "git log --format=oneline",
    "chmod 644 README.md",
    "git commit -m wip",
    "python3 -m pytest",
    "docker compose up",
    "kubectl get pods",
    "make install",
    "grep -rn TODO src",
    "ls -la",
    "cat README.md",
    "git status",
    "echo done",
];

/// Commands that run their arguments as a command: the word, and a
/// command it could run (after any prefix the rule fixes).
const WRAPPERS: &[(&str, &str)] = &[
    ("sudo", "rm -rf /"),
    ("doas", "rm -rf /"),
    ("su", "-c reboot"),
    ("env", "rm -rf /"),
    ("xargs", "rm -rf"),
    ("nohup", "rm -rf /"),
    ("timeout", "60 rm -rf /"),
    ("nice", "rm -rf /"),
    ("ionice", "rm -rf /"),
    ("time", "rm -rf /"),
    ("watch", "rm -rf /"),
    ("stdbuf", "-o0 rm -rf /"),
    ("setsid", "rm -rf /"),
    ("command", "rm -rf /"),
    ("builtin", "eval reboot"),
    ("exec", "rm -rf /"),
    ("eval", "rm -rf /"),
    ("ssh", "host reboot"),
    ("npx", "rimraf /"),
    ("find", ". -exec rm -rf {} +"),
    ("bash", "-c reboot"),
    ("sh", "-c reboot"),
    ("zsh", "-c reboot"),
    ("dash", "-c reboot"),
    ("ksh", "-c reboot"),
    ("fish", "-c reboot"),
    ("python", "-c CODE"),
    ("python3", "-c CODE"),
    ("node", "-e CODE"),
    ("perl", "-e CODE"),
    ("ruby", "-e CODE"),
];

pub(crate) fn check(cx: &mut Ctx, pid: u32, list: &RuleList) {
    let kinds = kinds_by_rule(cx, pid, list);
    for (i, r) in list.rules.iter().enumerate() {
        if r.gate || !kinds[i].contains(&Kind::Command) || !shell_site(cx, pid, list, i as u32) {
            continue;
        }
        for m in &r.matchers {
            if let ResolvedMatcher::Regex { source, loc } = m {
                unanchored(cx, pid, i as u32, r, source, *loc);
            }
        }
        if r.effect == Effect::Allow {
            wrapper(cx, pid, i as u32, r, list);
        }
    }
}

/// The anchored form of a simple regex that names commands (`rm`, `git
/// push`, `curl|wget`), if it is that simple.
fn anchored_form(re: &str) -> Option<String> {
    let re = re
        .trim_start_matches('^')
        .trim_start_matches(r"\s*")
        .trim_start_matches(r"\b");
    let re = re.trim_end_matches(r"\b");
    let simple = !re.is_empty()
        && re
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " -_|".contains(c));
    match (simple, re.contains('|')) {
        (false, _) => None,
        (true, false) => Some(format!(r"^\s*{re}\b")),
        (true, true) => Some(format!(r"^\s*({re})\b")),
    }
}

/// Whether some command site of the rule is a shell command (not `raw` code).
fn shell_site(cx: &Ctx, pid: u32, list: &RuleList, ri: u32) -> bool {
    cx.groups(pid, list)
        .iter()
        .filter(|g| g.kind == super::sets::ItemKind::Command && g.members[0].contains(&ri))
        .any(|g| {
            g.sites.iter().any(|(tool, op)| {
                tool.as_ref()
                    .and_then(|t| cx.low.tool_index.get(t))
                    .and_then(|&i| cx.low.tools.get(i as usize))
                    .is_some_and(|def| {
                        def.stmts.iter().any(|s| {
                            &s.op == op && s.kind == crate::lower::OpKind::Command && !s.raw
                        })
                    })
            })
        })
}

fn unanchored(
    cx: &mut Ctx,
    pid: u32,
    ri: u32,
    r: &ResolvedRule,
    re: &str,
    loc: crate::syntax::loc::Loc,
) {
    let allow = r.effect == Effect::Allow;
    // The language of unwanted matches, and what else the witness must be in.
    let bad_spec = if allow {
        Spec::Search(re.into(), Kind::Command)
    } else {
        Spec::MidWord(re.into(), Kind::Command)
    };
    let (Ok(bad), Ok(at_start), Ok(domain)) = (
        cx.cache.get(&bad_spec),
        cx.cache.get(&Spec::AtStart(re.into(), Kind::Command)),
        cx.cache.get(&Spec::Domain(Kind::Command)),
    ) else {
        return cx.limit(
            pid,
            r,
            "unanchored-regex",
            "an automaton exceeds the analysis limits",
        );
    };
    let fits = |words: &[&str]| {
        let b = encode(words);
        bad.accepts(&b) == Tri::Yes && at_start.accepts(&b) == Tri::No
    };
    let mut witness: Option<Vec<String>> = REALISTIC
        .iter()
        .map(|c| c.split(' ').collect::<Vec<_>>())
        .find(|w| fits(w))
        .map(|w| w.iter().map(|s| s.to_string()).collect());
    if witness.is_none() {
        // Prefer a witness that shows the harm: a destructive command an
        // allow lets through, or an `echo` a deny blocks.
        let lead: &[&str] = if allow { &["rm", "-rf"] } else { &["echo"] };
        for restrict in [Some(lead), None] {
            let mut comps = vec![
                Comp::one(bad.clone(), 0, false),
                Comp::one(at_start.clone(), 1, true),
            ];
            if let Some(words) = restrict {
                match cx.cache.get(&Spec::Prefix(
                    words.iter().map(|s| s.to_string()).collect(),
                    Kind::Command,
                )) {
                    Ok(lang) => comps.push(Comp::one(lang, 2, false)),
                    Err(_) => continue,
                }
            }
            let base = vec![
                Tri::No,
                Tri::No,
                if restrict.is_some() {
                    Tri::No
                } else {
                    Tri::Yes
                },
            ];
            let s = Search {
                kind: Kind::Command,
                domain: domain.clone(),
                comps,
                base,
                focus: None,
            };
            s.run(|st, trail| {
                if st.iter().all(|t| *t == Tri::Yes) {
                    witness = Some(super::lang::words_of(&trail.bytes()));
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            });
            if witness.is_some() {
                break;
            }
        }
    }
    let Some(words) = witness else { return };
    let subject = Subject::Command(words);
    let shown = subject.show();
    let suggestion = match anchored_form(re) {
        Some(a) => format!("`{a}`"),
        None => "a regex that starts with `^\\s*` and ends the command word with `\\b` (e.g. `^\\s*rm\\b`)".to_string(),
    };
    let (message, why) = if allow {
        (
            format!(
                "regex `/{re}/` is not anchored at the start of the command, so this allow matches commands that only mention it"
            ),
            format!("regexes are searched anywhere in the command: this rule allows `{shown}`"),
        )
    } else {
        (
            format!(
                "regex `/{re}/` is not anchored at the start of the command, so it matches inside other words"
            ),
            format!("regexes are searched anywhere in the command: it matches `{shown}`"),
        )
    };
    let mut d = Diagnostic::warning("permc::unanchored-regex", message)
        .label(loc, "searched anywhere in the command");
    d = super::via(d, r);
    d = d.witness(shown).help(format!(
        "{why}; anchor it with {suggestion}, or use `prefix \"...\"` to match whole words"
    ));
    let claims = super::matchers::claim_sites(cx, pid, ri, super::lang::Kind::Command, &subject);
    cx.push(d, claims);
}

/// Wrappers that run the rest of their arguments after options,
/// assignments and numbers.
const RUN_REST: &[&str] = &[
    "sudo", "doas", "env", "xargs", "nohup", "timeout", "nice", "ionice", "time", "watch",
    "stdbuf", "setsid", "command", "exec", "eval",
];

/// A command `prefix` allows that runs another command, if there is one.
fn prefix_witness(words: &[String]) -> Option<(Vec<String>, &'static str)> {
    let first = words.first()?;
    let base = first.rsplit('/').next().unwrap_or(first);
    let &(w, tail) = WRAPPERS.iter().find(|(w, _)| *w == base)?;
    let tail: Vec<&str> = tail.split(' ').collect();
    let fixed = &words[1..];
    let own = |extra: &[&str]| -> Vec<String> {
        words
            .iter()
            .cloned()
            .chain(extra.iter().map(|s| s.to_string()))
            .collect()
    };
    if fixed.len() <= tail.len() && fixed.iter().zip(&tail).all(|(a, b)| a == b) {
        return Some((own(&tail[fixed.len()..]), w));
    }
    let optionish = |x: &String| x.starts_with('-') || x.contains('=') || x.parse::<f64>().is_ok();
    if RUN_REST.contains(&w) && fixed.iter().all(optionish) {
        return Some((own(&["rm", "-rf", "/"]), w));
    }
    if w == "find" {
        return Some((own(&["-exec", "rm", "-rf", "{}", "+"]), w));
    }
    None
}

fn wrapper(cx: &mut Ctx, pid: u32, ri: u32, r: &ResolvedRule, _list: &RuleList) {
    let home = cx.home(pid);
    for m in &r.matchers {
        let found: Option<(Vec<String>, &str)> = match m {
            ResolvedMatcher::Prefix { words, .. } => prefix_witness(words),
            ResolvedMatcher::Regex { source, .. } => {
                if ["", ".*", "^", "(?s).*", "^.*", "^.*$"].contains(&source.as_str()) {
                    None
                } else {
                    match cx.cache.get(&Spec::Search(source.clone(), Kind::Command)) {
                        Ok(lang) => WRAPPERS.iter().find_map(|&(w, tail)| {
                            let words: Vec<&str> =
                                std::iter::once(w).chain(tail.split(' ')).collect();
                            (lang.accepts(&encode(&words)) == Tri::Yes)
                                .then(|| (words.iter().map(|s| s.to_string()).collect(), w))
                        }),
                        Err(_) => None,
                    }
                }
            }
            _ => None,
        };
        let Some((words, w)) = found else { continue };
        let subject = Subject::Command(words);
        let shown = subject.show();
        let what = match w {
            "find" => "`find -exec`, `-execdir` and `-ok` run any command".to_string(),
            "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" | "su" => {
                format!("`{w} -c` runs any command")
            }
            "python" | "python3" | "node" | "perl" | "ruby" => {
                format!("`{w}` runs any code it is given")
            }
            "npx" => "`npx` downloads and runs any package".to_string(),
            "ssh" => "`ssh` runs any command on the remote host".to_string(),
            _ => format!("`{w}` runs its arguments as a command"),
        };
        let mut d = Diagnostic::warning(
            "permc::exec-wrapper-allow",
            format!(
                "rule `{}` allows `{w}`, which runs other commands, so it allows any command",
                r.label
            ),
        );
        d = labels(d, r, home, &format!("allows `{w}` with any arguments"));
        d = d.witness(shown.clone()).help(format!(
            "{what}: this rule allows `{shown}`. Allow the specific commands instead{}",
            if w == "find" {
                ", or deny `-exec`, `-execdir`, `-ok` and `-okdir` in an earlier rule"
            } else {
                ""
            }
        ));
        let claims =
            super::matchers::claim_sites(cx, pid, ri, super::lang::Kind::Command, &subject);
        cx.push(d, claims);
        return;
    }
}
