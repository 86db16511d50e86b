//! `permc diff`: what changed in behaviour between two versions of a policy.
//!
//! For every tool and operation, each policy's decision is a function of the
//! item's subject (a normalised absolute path; a shell command segment's
//! words, spelled joined by NUL bytes, which regexes read as the spaces of the
//! command text; or a `raw` command's text). The two functions are compared
//! exactly on the
//! automata: every rule's language is a regex (globs full-match, `/regex/`
//! matchers are searched, negated globs are complements, `prefix` matches
//! whole leading words), each policy's rules for one (tool, operation) become
//! one multi-pattern DFA, and a breadth-first walk of the product of both
//! sides' DFAs with a DFA for the valid subjects visits every combination of
//! matching rules that some input reaches. Each combination names the
//! deciding rule on each side; where the outcomes differ, the walk has found
//! the shortest input of that class (made of printable ASCII characters when
//! one exists). Every witness is then decided again through the library
//! ([`crate::eval::decide`] with the compiled programs); one that does not
//! reproduce is dropped and reported as an internal error.
//!
//! Settings (default, combine mode, workspace, composition members), rules
//! added, removed, changed or moved (matched by label) and tool declarations
//! are compared as written.
//!
//! What is not exact, and says so in [`Report::notes`]: an automaton over the
//! size limits (that operation is not compared; [`Report::incomplete`]), and
//! operations whose rules use a Unicode `\b` (inputs with non-ASCII characters
//! are not explored there). Outside the compared domain: empty command words;
//! when every statement of an operation splits its input, subjects holding
//! any of their separators (one statement could carry another's); and
//! relative request paths (they resolve against the workspace, whose change
//! is listed).

use crate::eval;
use crate::lower::{
    Lowered, OpKind, PolicyBody, ResolvedMatcher, ResolvedRule, RuleList, ToolStmtDef,
};
use crate::paths::FakeFs;
use crate::syntax::ast::{Combine, Cond, Effect, FsKind};
use crate::{Policy, Request};
use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::{start, syntax};
use regex_automata::{Anchored, MatchKind};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};

/// Bounds on the work one comparison may do.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Size limit of one DFA, in bytes.
    pub dfa_bytes: usize,
    /// Memory for determinising one DFA, in bytes.
    pub determinize_bytes: usize,
    /// Product states visited per (tool, operation, working directory).
    pub max_states: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            dfa_bytes: 64 << 20,
            determinize_bytes: 64 << 20,
            max_states: 1 << 20,
        }
    }
}

/// What one side decides for an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub decision: Effect,
    /// The deciding rule's label; `None` when the default decided.
    pub rule: Option<String>,
    /// The rule-list policy that decided (a member, under `all(...)`).
    pub policy: String,
    /// Whether the side is a composition (then `policy` is worth showing).
    pub composed: bool,
    /// The side is `all()` with no members: everything is allowed.
    pub empty: bool,
}

/// One class of inputs whose decision changed, with its witness.
#[derive(Debug, Clone)]
pub struct Change {
    /// The tool name; for `any_tool`, a name neither file mentions.
    pub tool: String,
    /// The change concerns every tool neither file names.
    pub any_tool: bool,
    pub op: String,
    /// The witness as a request gives it (a path, or a command line); `None`
    /// for a bare tool item.
    pub input: Option<String>,
    /// The working directory the witness needs (commands under cwd gates).
    pub cwd: Option<String>,
    pub old: Outcome,
    pub new: Outcome,
}

/// Everything `diff` found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub old_policy: String,
    pub new_policy: String,
    /// Changes of default, combine mode, workspace, members.
    pub settings: Vec<String>,
    /// Rules added, removed, changed or moved.
    pub rules: Vec<String>,
    /// Tool declarations added, removed or changed.
    pub tools: Vec<String>,
    /// Behaviour changes, one per class.
    pub changes: Vec<Change>,
    /// Where the comparison is not exact.
    pub notes: Vec<String>,
    /// Some operation could not be compared at all.
    pub incomplete: bool,
    /// Witnesses that did not reproduce (a bug in the analysis).
    pub internal_errors: Vec<String>,
}

impl Report {
    /// Nothing differs at all.
    pub fn is_empty(&self) -> bool {
        self.settings.is_empty()
            && self.rules.is_empty()
            && self.tools.is_empty()
            && self.changes.is_empty()
            && self.notes.is_empty()
            && self.internal_errors.is_empty()
            && !self.incomplete
    }

    /// Some decision changed, or could not be compared, or a tool
    /// declaration changed (then some requests, at least malformed ones, are
    /// read differently).
    pub fn behaviour_changed(&self) -> bool {
        !self.changes.is_empty() || self.incomplete || !self.tools.is_empty()
    }

    /// The readable report.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        if self.is_empty() {
            return out;
        }
        if self.old_policy != self.new_policy {
            let _ = writeln!(out, "policy: `{}` → `{}`", self.old_policy, self.new_policy);
        }
        for line in self.settings.iter().chain(&self.tools).chain(&self.rules) {
            let _ = writeln!(out, "{line}");
        }
        if !self.changes.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            let _ = writeln!(out, "behaviour changes:");
            for c in &self.changes {
                let _ = writeln!(out, "  {}", c.describe());
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        for e in &self.internal_errors {
            let _ = writeln!(out, "internal error: {e}");
        }
        let n = self.changes.len();
        let summary = match n {
            0 if self.incomplete => {
                "no behaviour change found, but the comparison is incomplete".to_string()
            }
            0 if !self.tools.is_empty() => {
                "no item decision changed, but requests to a changed tool are read differently"
                    .to_string()
            }
            0 => "no behaviour change".to_string(),
            1 => "1 behaviour change".to_string(),
            n => format!("{n} behaviour changes"),
        };
        let _ = writeln!(out, "{summary}");
        out
    }

    /// The behaviour changes as JSON text: an array of
    /// `{tool, op, input, old: {decision, rule}, new: {decision, rule}}`
    /// (`cwd` when the witness needs one; `policy` on a composed side).
    pub fn to_json(&self) -> String {
        let items: Vec<String> = self.changes.iter().map(Change::to_json).collect();
        format!("[{}]", items.join(","))
    }
}

impl Outcome {
    fn describe(&self) -> String {
        if self.empty {
            return format!(
                "{} (`{}` is an empty composition)",
                self.decision, self.policy
            );
        }
        let by = match &self.rule {
            Some(r) => format!("rule `{r}`"),
            None => "default".to_string(),
        };
        if self.composed {
            format!("{} by {by} of `{}`", self.decision, self.policy)
        } else {
            format!("{} by {by}", self.decision)
        }
    }

    fn to_json(&self) -> JsonOutcome<'_> {
        JsonOutcome {
            decision: self.decision,
            rule: self.rule.as_deref(),
            policy: self.composed.then_some(self.policy.as_str()),
        }
    }
}

impl Change {
    /// One line: `file_read read `/w/.env`: deny by rule `x` → allow by default`.
    pub fn describe(&self) -> String {
        let tool = if self.any_tool {
            "any other tool".to_string()
        } else {
            self.tool.clone()
        };
        let what = match &self.input {
            Some(i) => format!("{tool} {} {}", self.op, quote(i)),
            None if self.op == "tool" => tool,
            None => format!("{tool} {}", self.op),
        };
        let cwd = match &self.cwd {
            Some(c) => format!(" (cwd {})", quote(c)),
            None => String::new(),
        };
        format!(
            "{what}{cwd}: {} → {}",
            self.old.describe(),
            self.new.describe()
        )
    }

    fn to_json(&self) -> String {
        let v = JsonChange {
            tool: if self.any_tool {
                "*"
            } else {
                self.tool.as_str()
            },
            op: &self.op,
            input: self.input.as_deref(),
            cwd: self.cwd.as_deref(),
            old: self.old.to_json(),
            new: self.new.to_json(),
        };
        serde_json::to_string(&v).unwrap_or_else(|_| "null".to_string())
    }
}

#[derive(serde::Serialize)]
struct JsonOutcome<'a> {
    decision: Effect,
    rule: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<&'a str>,
}

#[derive(serde::Serialize)]
struct JsonChange<'a> {
    tool: &'a str,
    op: &'a str,
    input: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a str>,
    old: JsonOutcome<'a>,
    new: JsonOutcome<'a>,
}

/// Backticks for plain text, a JSON string for anything else.
fn quote(s: &str) -> String {
    let plain =
        !s.is_empty() && !s.contains('`') && s.chars().all(|c| !c.is_control()) && s.trim() == s;
    if plain {
        format!("`{s}`")
    } else {
        Value::String(s.to_string()).to_string()
    }
}

// ---- the two sides -------------------------------------------------------------

/// One side: a compiled file and the policy compared, flattened into the
/// rule-list policies (leaves) it consists of.
struct Side<'a> {
    policy: &'a Policy,
    root: u32,
    leaves: Vec<u32>,
    composed: bool,
}

impl<'a> Side<'a> {
    fn new(policy: &'a Policy) -> Result<Side<'a>, String> {
        let root = policy
            .selected()
            .ok_or_else(|| "no policy selected".to_string())?;
        let mut leaves = Vec::new();
        collect_leaves(policy.lowered(), root, 0, &mut leaves)?;
        let composed = !matches!(
            policy
                .lowered()
                .policies
                .get(root as usize)
                .map(|p| &p.body),
            Some(PolicyBody::Rules(_))
        );
        Ok(Side {
            policy,
            root,
            leaves,
            composed,
        })
    }

    fn low(&self) -> &'a Lowered {
        self.policy.lowered()
    }

    fn list(&self, leaf: usize) -> Option<&'a RuleList> {
        let id = *self.leaves.get(leaf)?;
        match &self.low().policies.get(id as usize)?.body {
            PolicyBody::Rules(l) => Some(l),
            PolicyBody::All(_) => None,
        }
    }

    fn leaf_name(&self, leaf: usize) -> String {
        self.leaves
            .get(leaf)
            .and_then(|&id| self.low().policies.get(id as usize))
            .map(|p| p.name.clone())
            .unwrap_or_default()
    }

    fn name(&self) -> String {
        self.low()
            .policies
            .get(self.root as usize)
            .map(|p| p.name.clone())
            .unwrap_or_default()
    }

    /// The side's outcome from each leaf's (effect, deciding rule): the
    /// strictest, the first leaf among equals (as `all(...)` decides).
    fn fold(&self, per_leaf: &[(Effect, Option<u32>)]) -> Decided {
        fold_leaves(per_leaf)
    }

    fn outcome(&self, d: &Decided) -> Outcome {
        let (rule, policy) = match d.leaf {
            Some(l) => (
                d.rule.and_then(|r| {
                    self.list(l)
                        .and_then(|list| list.rules.get(r as usize))
                        .map(|r| r.label.clone())
                }),
                self.leaf_name(l),
            ),
            None => (None, self.name()),
        };
        Outcome {
            decision: d.effect,
            rule,
            policy,
            composed: self.composed,
            empty: self.leaves.is_empty(),
        }
    }
}

fn collect_leaves(low: &Lowered, id: u32, depth: u32, out: &mut Vec<u32>) -> Result<(), String> {
    if depth > 64 {
        return Err("composition nested too deeply".into());
    }
    match low.policies.get(id as usize).map(|p| &p.body) {
        Some(PolicyBody::Rules(_)) => out.push(id),
        Some(PolicyBody::All(children)) => {
            for &c in children {
                collect_leaves(low, c, depth + 1, out)?;
            }
        }
        None => return Err(format!("unknown policy index {id}")),
    }
    Ok(())
}

/// What one side decided for one input: the effect, and which leaf's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Decided {
    effect: Effect,
    leaf: Option<usize>,
    rule: Option<u32>,
}

// ---- one leaf's rules for one (tool, operation) -----------------------------------

/// The most patterns one automaton of a rule set holds.
const PART_SIZE: usize = 256;

/// A leaf's rules for one (tool, operation), as the program selects them.
struct RuleSet {
    combine: Combine,
    default: Effect,
    workspace: String,
    effects: Vec<Effect>,
    gates: Vec<u32>,
    always: Vec<u32>,
    /// Pattern id -> (rule, negated).
    pats: Vec<(u32, bool)>,
    /// The automata over the patterns: each with how it reads a NUL byte
    /// (as the space that joins words, for regexes over the command text),
    /// and the pattern id of each of its patterns.
    parts: Vec<Part>,
}

struct Part {
    dfa: dense::DFA<Vec<u32>>,
    nul_as_space: bool,
    pids: Vec<usize>,
}

/// How the subject of one (tool, operation) is spelled for the automata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Model {
    /// A normalised absolute path.
    Path,
    /// A shell command segment: its words joined by NUL bytes; regexes read
    /// the NUL bytes as the spaces of the command text they search.
    Words,
    /// A `raw` command: the text itself (its words are its
    /// whitespace-separated parts).
    Raw,
    Bare,
}

impl RuleSet {
    /// The rule set of `members` (indexes of the rules that apply).
    fn build(
        list: &RuleList,
        members: &[u32],
        model: Model,
        limits: &Limits,
    ) -> Result<RuleSet, String> {
        let mut set = RuleSet {
            combine: list.combine,
            default: list.default,
            workspace: list.workspace.clone(),
            effects: list.rules.iter().map(|r| r.effect).collect(),
            gates: Vec::new(),
            always: Vec::new(),
            pats: Vec::new(),
            parts: Vec::new(),
        };
        // (pattern, pattern id) per automaton: globs anchored at a literal
        // start, floating globs (`**/...`), searched regexes, prefixes, and
        // regexes over command text (which read NUL as a space). Kept apart,
        // each automaton stays small; the product walk combines them.
        let mut anchored: Vec<(String, usize)> = Vec::new();
        let mut floating: Vec<(String, usize)> = Vec::new();
        let mut direct: Vec<(String, usize)> = Vec::new();
        let mut prefixes: Vec<(String, usize)> = Vec::new();
        let mut spaced: Vec<(String, usize)> = Vec::new();
        for &i in members {
            let Some(r) = list.rules.get(i as usize) else {
                continue;
            };
            if r.gate {
                set.gates.push(i);
                continue;
            }
            if r.matchers.is_empty() {
                set.always.push(i);
                continue;
            }
            for m in &r.matchers {
                let pid = set.pats.len();
                match (m, model) {
                    (
                        ResolvedMatcher::Glob {
                            regex,
                            negated,
                            anchored: glob,
                            ..
                        },
                        Model::Path,
                    ) => {
                        set.pats.push((i, *negated));
                        let group = if glob.starts_with('/') {
                            &mut anchored
                        } else {
                            &mut floating
                        };
                        group.push((regex.clone(), pid));
                    }
                    (
                        ResolvedMatcher::Regex { source, .. },
                        Model::Path | Model::Raw | Model::Words,
                    ) => {
                        set.pats.push((i, false));
                        let pattern = searched(source);
                        if model == Model::Words {
                            spaced.push((pattern, pid))
                        } else {
                            direct.push((pattern, pid))
                        }
                    }
                    (ResolvedMatcher::Prefix { words, .. }, Model::Words) => {
                        let body: Vec<String> =
                            words.iter().map(|w| regex_syntax::escape(w)).collect();
                        set.pats.push((i, false));
                        prefixes.push((
                            format!(r"\A{}(?:\x00(?s-u:.)*)?\z", body.join(r"\x00")),
                            pid,
                        ));
                    }
                    (ResolvedMatcher::Prefix { words, .. }, Model::Raw) => {
                        // The words of raw text are its `split_whitespace` parts.
                        let body: Vec<String> =
                            words.iter().map(|w| regex_syntax::escape(w)).collect();
                        set.pats.push((i, false));
                        prefixes.push((
                            format!(r"\A\s*{}(?:\s(?s-u:.)*)?\z", body.join(r"\s+")),
                            pid,
                        ));
                    }
                    // The program never consults these for this kind of item.
                    _ => {}
                }
            }
        }
        for (list, nul_as_space) in [
            (anchored, false),
            (floating, false),
            (direct, false),
            (prefixes, false),
            (spaced, true),
        ] {
            // Patterns that can match anywhere keep every one of their
            // states alive in a subset construction: smaller groups
            // determinise much faster.
            for chunk in list.chunks(PART_SIZE) {
                let patterns: Vec<String> = chunk.iter().map(|(p, _)| p.clone()).collect();
                let dfa = build_dfa(&patterns, false, limits)?;
                set.parts.push(Part {
                    dfa,
                    nul_as_space,
                    pids: chunk.iter().map(|(_, id)| *id).collect(),
                });
            }
        }
        Ok(set)
    }

    /// The deciding rule given which patterns match, as the program selects.
    fn select(&self, matched: &[bool], gate_fires: bool) -> Option<u32> {
        let mut cands: Vec<u32> = Vec::new();
        if gate_fires && !self.gates.is_empty() {
            if self.combine == Combine::FirstMatch {
                return self.gates.first().copied();
            }
            cands.extend(&self.gates);
        }
        match self.combine {
            Combine::FirstMatch => cands.extend(self.always.first()),
            Combine::Strictest => cands.extend(&self.always),
        }
        for (pid, &(rule, negated)) in self.pats.iter().enumerate() {
            let hit = matched.get(pid).copied().unwrap_or(false);
            if hit != negated {
                cands.push(rule);
            }
        }
        match self.combine {
            Combine::FirstMatch => cands.into_iter().min(),
            Combine::Strictest => cands.into_iter().max_by_key(|&i| {
                (
                    self.effects
                        .get(i as usize)
                        .copied()
                        .unwrap_or(Effect::Deny),
                    std::cmp::Reverse(i),
                )
            }),
        }
    }

    fn effect(&self, rule: Option<u32>) -> Effect {
        rule.and_then(|r| self.effects.get(r as usize).copied())
            .unwrap_or(self.default)
    }
}

/// A searched user regex as a whole-subject pattern: `.*(?:re).*`, without
/// the `.*` on a side where the regex is anchored (`^`, `\A`, `$`, `\z`), which
/// keeps the automata small. The regex is parsed and printed back, so that
/// verbose-mode comments (`(?x) a # ...`) cannot swallow the parenthesis.
fn searched(source: &str) -> String {
    use regex_syntax::hir::Look;
    let any = "(?s-u:.)*";
    match regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(source)
    {
        Ok(hir) => {
            let props = hir.properties();
            let start = props.look_set_prefix().contains(Look::Start);
            let end = props.look_set_suffix().contains(Look::End);
            format!(
                "{}(?:{hir}){}",
                if start { "" } else { any },
                if end { "" } else { any }
            )
        }
        Err(_) => format!("{any}(?:{source}){any}"),
    }
}

fn build_dfa(
    patterns: &[String],
    unicode_input: bool,
    limits: &Limits,
) -> Result<dense::DFA<Vec<u32>>, String> {
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::All)
                .start_kind(StartKind::Anchored)
                .unicode_word_boundary(true)
                .dfa_size_limit(Some(limits.dfa_bytes))
                .determinize_size_limit(Some(limits.determinize_bytes)),
        )
        .syntax(syntax::Config::new().utf8(unicode_input))
        .thompson(thompson::Config::new().utf8(unicode_input))
        .build_many(patterns)
        .map_err(|e| e.to_string())
}

/// The subjects an item of one (tool, operation) can have: pattern 0 must
/// match, no other may.
fn domain(
    model: Model,
    seps: &[String],
    no_root: bool,
    limits: &Limits,
) -> Result<dense::DFA<Vec<u32>>, String> {
    let shape = match model {
        // A normalised absolute path: `/`, or `/seg` repeated, where a segment
        // is not empty, `.` or `..`, and holds no `/` or NUL.
        Model::Path => r"\A(?:/|(?:/(?:[^/\x00.][^/\x00]*|\.[^/\x00.][^/\x00]*|\.\.[^/\x00]+))+)\z",
        // Words: not empty, no NUL; joined by NUL.
        Model::Words => r"\A[^\x00]+(?:\x00[^\x00]+)*\z",
        // Any text without NUL.
        _ => r"\A[^\x00]+\z",
    };
    let mut pats = vec![shape.to_string()];
    if !seps.is_empty() {
        // A value is split there and its parts trimmed, so no item holds the
        // separator (or, for paths and raw text, starts or ends with
        // whitespace).
        for s in seps {
            pats.push(format!(r"(?s:.)*{}(?s:.)*", regex_syntax::escape(s)));
        }
        if model != Model::Words {
            pats.push(r"(?s:.)*\s".to_string());
            pats.push(r"\s(?s:.)*".to_string());
        }
    }
    if no_root {
        // `/` is always a directory: no statement's condition admits it.
        pats.push(r"\A/\z".to_string());
    }
    build_dfa(&pats, true, limits)
}

// ---- the product walk --------------------------------------------------------------

/// The key of a class of inputs: both outcomes and deciding rules.
type ClassKey = (Effect, Effect, Option<(usize, u32)>, Option<(usize, u32)>);

/// The deciding rule on each side for one (tool, operation) and one working
/// directory scenario.
/// The outcome from each leaf's (effect, deciding rule): the strictest, the
/// first leaf among equals (as `all(...)` decides); an empty side allows.
fn fold_leaves(per_leaf: &[(Effect, Option<u32>)]) -> Decided {
    let mut best: Option<(usize, Effect, Option<u32>)> = None;
    for (i, &(e, r)) in per_leaf.iter().enumerate() {
        if best.is_none_or(|(_, b, _)| e > b) {
            best = Some((i, e, r));
        }
    }
    match best {
        Some((leaf, effect, rule)) => Decided {
            effect,
            leaf: Some(leaf),
            rule,
        },
        None => Decided {
            effect: Effect::Allow,
            leaf: None,
            rule: None,
        },
    }
}

struct Walk<'s> {
    domain: &'s dense::DFA<Vec<u32>>,
    /// NUL separates words (it belongs to the printable alphabet then).
    words: bool,
    /// Per side, per leaf: the rule set, and whether its gates fire.
    sides: [Vec<(&'s RuleSet, bool)>; 2],
}

struct WalkResult {
    /// Witness bytes per class, in discovery order.
    found: Vec<(ClassKey, Vec<u8>, [Decided; 2])>,
    /// A transition was skipped because a DFA would have given up (a
    /// Unicode word boundary next to a non-ASCII byte).
    quit: bool,
    /// The state limit was reached.
    truncated: bool,
}

/// How much a byte is preferred in witnesses: lowercase letters, digits,
/// `.-_`, `/`, uppercase, other printable ASCII, space, then the rest.
fn rank(b: u8) -> u32 {
    match b {
        b'a'..=b'z' => (b - b'a') as u32,
        b'0'..=b'9' => 26 + (b - b'0') as u32,
        b'.' => 36,
        b'-' => 37,
        b'_' => 38,
        b'/' => 39,
        b'A'..=b'Z' => 40 + (b - b'A') as u32,
        0x21..=0x7e => 100 + b as u32,
        b' ' | 0 => 300,
        _ => 400 + b as u32,
    }
}

/// One automaton of the product and whether it reads NUL as a space.
type Comp<'s> = (&'s dense::DFA<Vec<u32>>, bool);

impl Walk<'_> {
    fn comps(&self) -> Vec<Comp<'_>> {
        let mut v: Vec<Comp> = vec![(self.domain, false)];
        for side in &self.sides {
            for (set, _) in side {
                for part in &set.parts {
                    v.push((&part.dfa, part.nul_as_space));
                }
            }
        }
        v
    }

    /// The outcome of both sides for the input that led to `states`, if that
    /// input is a valid subject.
    fn classify(&self, comps: &[Comp], states: &[StateID]) -> Option<[Decided; 2]> {
        let eoi = |c: usize| comps[c].0.next_eoi_state(states[c]);
        let matches = |c: usize| -> Vec<usize> {
            let d = comps[c].0;
            let s = eoi(c);
            if !d.is_match_state(s) {
                return Vec::new();
            }
            (0..d.match_len(s))
                .map(|i| d.match_pattern(s, i).as_usize())
                .collect()
        };
        let dom = matches(0);
        if !dom.contains(&0) || dom.iter().any(|&p| p != 0) {
            return None;
        }
        let mut c = 1;
        let mut out = [Decided {
            effect: Effect::Allow,
            leaf: None,
            rule: None,
        }; 2];
        for (si, side) in self.sides.iter().enumerate() {
            let mut per_leaf = Vec::with_capacity(side.len());
            for (set, gate) in side {
                let mut matched = vec![false; set.pats.len()];
                for part in &set.parts {
                    for p in matches(c) {
                        if let Some(m) = part.pids.get(p).and_then(|&id| matched.get_mut(id)) {
                            *m = true;
                        }
                    }
                    c += 1;
                }
                let rule = set.select(&matched, *gate);
                per_leaf.push((set.effect(rule), rule));
            }
            out[si] = fold_leaves(&per_leaf);
        }
        Some(out)
    }

    /// Breadth-first over the product; `printable` restricts the alphabet to
    /// printable ASCII. Classes in `skip` are already known.
    fn run(&self, printable: bool, skip: &HashMap<ClassKey, ()>, max_states: usize) -> WalkResult {
        let comps = self.comps();
        let n = comps.len();
        let mut result = WalkResult {
            found: Vec::new(),
            quit: false,
            truncated: false,
        };
        // The alphabet: one representative byte per combination of byte
        // classes, the most preferred one, in order of preference.
        let mut reps: HashMap<Vec<u8>, u8> = HashMap::new();
        let feed = |b: u8, nul_as_space: bool| if b == 0 && nul_as_space { b' ' } else { b };
        for b in 0..=255u8 {
            if printable && !(0x20..=0x7e).contains(&b) && !(b == 0 && self.words) {
                continue;
            }
            let sig: Vec<u8> = comps
                .iter()
                .map(|&(d, nul)| d.byte_classes().get(feed(b, nul)))
                .collect();
            let e = reps.entry(sig).or_insert(b);
            if rank(b) < rank(*e) {
                *e = b;
            }
        }
        let mut alphabet: Vec<u8> = reps.into_values().collect();
        alphabet.sort_by_key(|&b| rank(b));

        let cfg = start::Config::new().anchored(Anchored::Yes);
        let mut start = Vec::with_capacity(n);
        for (d, _) in &comps {
            match d.start_state(&cfg) {
                Ok(s) => start.push(s),
                Err(_) => return result,
            }
        }
        let mut states: Vec<StateID> = start.clone();
        let mut parent: Vec<(u32, u8)> = vec![(u32::MAX, 0)];
        let mut seen: HashMap<Vec<StateID>, u32> = HashMap::new();
        seen.insert(start, 0);
        let mut queue: VecDeque<u32> = VecDeque::from([0]);
        let mut known: HashMap<ClassKey, ()> = skip.clone();
        let mut next = vec![StateID::ZERO; n];
        while let Some(node) = queue.pop_front() {
            let base = node as usize * n;
            let cur: Vec<StateID> = states[base..base + n].to_vec();
            if let Some(dec) = self.classify(&comps, &cur) {
                if dec[0].effect != dec[1].effect {
                    let key: ClassKey = (
                        dec[0].effect,
                        dec[1].effect,
                        dec[0].leaf.zip(dec[0].rule),
                        dec[1].leaf.zip(dec[1].rule),
                    );
                    if known.insert(key, ()).is_none() {
                        result.found.push((key, path_to(&parent, node), dec));
                    }
                }
            }
            'bytes: for &b in &alphabet {
                for (c, &(d, nul)) in comps.iter().enumerate() {
                    let s = d.next_state(cur[c], feed(b, nul));
                    if d.is_quit_state(s) {
                        result.quit = true;
                        continue 'bytes;
                    }
                    if c == 0 && d.is_dead_state(s) {
                        continue 'bytes;
                    }
                    next[c] = s;
                }
                if seen.contains_key(&next) {
                    continue;
                }
                if seen.len() >= max_states {
                    result.truncated = true;
                    return result;
                }
                let id = parent.len() as u32;
                seen.insert(next.clone(), id);
                states.extend_from_slice(&next);
                parent.push((node, b));
                queue.push_back(id);
            }
        }
        result
    }
}

fn path_to(parent: &[(u32, u8)], mut node: u32) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(&(p, b)) = parent.get(node as usize) {
        if p == u32::MAX {
            break;
        }
        out.push(b);
        node = p;
    }
    out.reverse();
    out
}

// ---- what to compare ------------------------------------------------------------------

/// One (tool, operation) to compare.
#[derive(Debug, Clone)]
struct Target {
    tool: String,
    any_tool: bool,
    op: String,
    kind: OpKind,
    /// The side (0 old, 1 new) that does not declare the tool: there the
    /// same request is one bare `tool` item.
    bare_side: Option<usize>,
}

/// Every (tool, operation) either file can produce items for.
fn targets(old: &Side, new: &Side, report: &mut Report) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for side in [old, new] {
        for t in &side.low().tools {
            if !names.contains(&t.name) {
                names.push(t.name.clone());
            }
        }
    }
    let declared = |side: &Side, name: &str| -> Option<Vec<ToolStmtDef>> {
        side.low()
            .tool_index
            .get(name)
            .and_then(|&i| side.low().tools.get(i as usize))
            .map(|t| t.stmts.clone())
    };
    for name in &names {
        let (a, b) = (declared(old, name), declared(new, name));
        let shape = |side: &Side, s: &Option<Vec<ToolStmtDef>>| -> Vec<(String, OpKind)> {
            let mut v: Vec<(String, OpKind)> = Vec::new();
            match s {
                Some(stmts) => {
                    for st in stmts {
                        if !v.iter().any(|(o, k)| *o == st.op && *k == st.kind) {
                            v.push((st.op.clone(), st.kind));
                        }
                    }
                    // A bare `tool` item when no statement applies.
                    if no_statement_applies(side, name).is_some() {
                        v.push(("tool".to_string(), OpKind::Bare));
                    }
                }
                None => v.push(("tool".to_string(), OpKind::Bare)),
            }
            v
        };
        match (&a, &b) {
            (Some(x), Some(y)) if format!("{x:?}") != format!("{y:?}") => {
                let show =
                    |v: &[ToolStmtDef]| v.iter().map(describe_stmt).collect::<Vec<_>>().join("; ");
                let (dx, dy) = (show(x), show(y));
                if dx == dy {
                    report
                        .tools
                        .push(format!("tool `{name}`: declaration changed"));
                } else {
                    report.tools.push(format!(
                        "tool `{name}`: declaration changed: `{dx}` → `{dy}`"
                    ));
                }
            }
            (Some(_), None) => report
                .tools
                .push(format!("tool `{name}`: declared only in the old file")),
            (None, Some(_)) => report
                .tools
                .push(format!("tool `{name}`: declared only in the new file")),
            _ => {}
        }
        let (sa, sb) = (shape(old, &a), shape(new, &b));
        for (op, kind) in &sa {
            if sb.contains(&(op.clone(), *kind)) {
                out.push(Target {
                    tool: name.clone(),
                    any_tool: false,
                    op: op.clone(),
                    kind: *kind,
                    bare_side: None,
                });
            }
        }
        // Declared on one side only: its items against the other side's bare item.
        let one_sided = match (&a, &b) {
            (Some(_), None) => Some((&sa, 1)),
            (None, Some(_)) => Some((&sb, 0)),
            _ => None,
        };
        if let Some((shape, bare)) = one_sided {
            for (op, kind) in shape.iter().filter(|(op, _)| op != "tool") {
                out.push(Target {
                    tool: name.clone(),
                    any_tool: false,
                    op: op.clone(),
                    kind: *kind,
                    bare_side: Some(bare),
                });
            }
        }
    }
    // Tools the rules name without declaring them: one bare item each.
    let mut named: Vec<String> = Vec::new();
    for side in [old, new] {
        for leaf in 0..side.leaves.len() {
            for r in side.list(leaf).map(|l| l.rules.as_slice()).unwrap_or(&[]) {
                for t in r.tools.iter().flatten() {
                    if t != "*" && !names.contains(t) && !named.contains(t) {
                        named.push(t.clone());
                    }
                }
            }
        }
    }
    named.sort();
    for t in &named {
        out.push(Target {
            tool: t.clone(),
            any_tool: false,
            op: "tool".into(),
            kind: OpKind::Bare,
            bare_side: None,
        });
    }
    // Every other tool.
    let mut other = "other_tool".to_string();
    while names.contains(&other) || named.contains(&other) {
        other.push('_');
    }
    out.push(Target {
        tool: other,
        any_tool: true,
        op: "tool".into(),
        kind: OpKind::Bare,
        bare_side: None,
    });
    out
}

// ---- settings, rules, tools as written ------------------------------------------------------

/// A tool statement as source-like text.
fn describe_stmt(s: &ToolStmtDef) -> String {
    let mut parts = vec![s.op.clone()];
    if let Some(f) = &s.field {
        parts.push(f.to_string());
    }
    if let Some(sep) = &s.split {
        parts.push(format!("split {}", Value::String(sep.clone())));
    }
    if let Some(c) = &s.cwd {
        parts.push(format!("cwd {c}"));
    }
    for (on, word) in [
        (s.else_cwd, "else cwd"),
        (s.raw, "raw"),
        (s.json, "json"),
        (s.expand, "expand"),
        (s.parent, "parent"),
    ] {
        if on {
            parts.push(word.to_string());
        }
    }
    for (positive, kind) in &s.fs {
        let k = match kind {
            FsKind::Exists => "exists",
            FsKind::File => "file",
            FsKind::Dir => "dir",
        };
        parts.push(format!("{} {k}", if *positive { "if" } else { "unless" }));
    }
    if let Some(w) = &s.when {
        let list = |vs: &[Value]| {
            vs.iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        parts.push(match w {
            Cond::Eq(f, v) => format!("when {f} == {v}"),
            Cond::Ne(f, v) => format!("when {f} != {v}"),
            Cond::In(f, vs) => format!("when {f} in [{}]", list(vs)),
            Cond::NotIn(f, vs) => format!("when {f} not in [{}]", list(vs)),
        });
    }
    parts.join(" ")
}

fn describe_matcher(m: &ResolvedMatcher) -> String {
    match m {
        ResolvedMatcher::Glob {
            source, negated, ..
        } => {
            if source.starts_with("scope ") {
                source.clone()
            } else {
                let bang = if *negated { "!" } else { "" };
                Value::String(format!("{bang}{source}")).to_string()
            }
        }
        ResolvedMatcher::Regex { source, .. } => format!("/{source}/"),
        ResolvedMatcher::Prefix { words, .. } => {
            format!("prefix {}", Value::String(words.join(" ")))
        }
    }
}

/// A rule as one line of source-like text (without its name).
fn describe_rule(r: &ResolvedRule) -> String {
    let mut parts = vec![r.effect.to_string()];
    match &r.ops {
        None => {
            parts.push("tool".into());
            parts.push(
                r.tools
                    .as_ref()
                    .map(|t| t.join(", "))
                    .unwrap_or_else(|| "*".into()),
            );
        }
        Some(ops) => {
            parts.push(ops.join(", "));
            if let Some(t) = &r.tools {
                parts.push(format!("on {}", t.join(", ")));
            }
            let mut ms: Vec<String> = Vec::new();
            if r.gate {
                ms.push("cwd outside workspace".into());
            }
            ms.extend(r.matchers.iter().map(describe_matcher));
            if !ms.is_empty() {
                parts.push(ms.join(", "));
            }
        }
    }
    parts.join(" ")
}

/// Compares two rule lists as written, by label.
fn diff_rules(prefix: &str, a: &RuleList, b: &RuleList, out: &mut Vec<String>) {
    let line = |r: &ResolvedRule| format!("`{}` ({})", r.label, describe_rule(r));
    // Pair rules with equal labels in order of occurrence.
    let mut used = vec![false; b.rules.len()];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut removed: Vec<usize> = Vec::new();
    for (i, r) in a.rules.iter().enumerate() {
        match (0..b.rules.len()).find(|&j| !used[j] && b.rules[j].label == r.label) {
            Some(j) => {
                used[j] = true;
                pairs.push((i, j));
            }
            None => removed.push(i),
        }
    }
    for i in removed {
        out.push(format!("{prefix}rule removed: {}", line(&a.rules[i])));
    }
    for (j, r) in b.rules.iter().enumerate() {
        if !used[j] {
            out.push(format!("{prefix}rule added: {} at #{}", line(r), j + 1));
        }
    }
    for &(i, j) in &pairs {
        let (x, y) = (&a.rules[i], &b.rules[j]);
        let mut what: Vec<String> = Vec::new();
        let (dx, dy) = (describe_rule(x), describe_rule(y));
        if dx != dy {
            what.push(format!("{dx} → {dy}"));
        }
        if x.reason != y.reason {
            what.push("reason changed".into());
        }
        if x.guidance != y.guidance {
            what.push("guidance changed".into());
        }
        if !what.is_empty() {
            out.push(format!(
                "{prefix}rule changed: `{}`: {}",
                x.label,
                what.join("; ")
            ));
        }
    }
    // Moved: paired rules outside a longest run kept in order.
    let keep = longest_increasing(&pairs.iter().map(|&(_, j)| j).collect::<Vec<_>>());
    for (k, &(i, j)) in pairs.iter().enumerate() {
        if !keep.contains(&k) {
            out.push(format!(
                "{prefix}rule moved: `{}` from #{} to #{}",
                a.rules[i].label,
                i + 1,
                j + 1
            ));
        }
    }
}

/// Indexes of one longest strictly increasing subsequence.
fn longest_increasing(xs: &[usize]) -> Vec<usize> {
    let n = xs.len();
    let mut len = vec![1usize; n];
    let mut prev = vec![usize::MAX; n];
    for i in 0..n {
        for j in 0..i {
            if xs[j] < xs[i] && len[j] + 1 > len[i] {
                len[i] = len[j] + 1;
                prev[i] = j;
            }
        }
    }
    let mut out = Vec::new();
    let mut at = (0..n).max_by_key(|&i| (len[i], std::cmp::Reverse(i)));
    while let Some(i) = at {
        out.push(i);
        at = (prev[i] != usize::MAX).then_some(prev[i]);
    }
    out.reverse();
    out
}

fn diff_settings(prefix: &str, a: &RuleList, b: &RuleList, out: &mut Vec<String>) {
    if a.default != b.default {
        out.push(format!("{prefix}default: {} → {}", a.default, b.default));
    }
    if a.combine != b.combine {
        let name = |c: Combine| {
            if c == Combine::FirstMatch {
                "first-match"
            } else {
                "strictest"
            }
        };
        out.push(format!(
            "{prefix}combine: {} → {}",
            name(a.combine),
            name(b.combine)
        ));
    }
    if a.workspace != b.workspace {
        out.push(format!(
            "{prefix}workspace: `{}` → `{}`",
            a.workspace, b.workspace
        ));
    }
}

// ---- the comparison ---------------------------------------------------------------------

/// Compares the selected policies of two compiled files (compile them with
/// [`crate::Options::logical`], the same workspace option, and the policy to
/// compare selected).
///
/// ```
/// use permc::{Options, Policy};
/// let old = Policy::compile("old.perm", "tool r { read input.path }\npolicy p { allow read \"/w/**\"\n deny read \"**/.env\" }", &Options::logical()).unwrap();
/// let new = Policy::compile("new.perm", "tool r { read input.path }\npolicy p { deny read \"**/.env\"\n allow read \"/w/**\" }", &Options::logical()).unwrap();
/// let report = permc::diff::diff(&old, &new, &permc::diff::Limits::default()).unwrap();
/// assert_eq!(report.changes.len(), 1);
/// assert_eq!(report.changes[0].input.as_deref(), Some("/w/.env"));
/// ```
pub fn diff(old: &Policy, new: &Policy, limits: &Limits) -> Result<Report, String> {
    let a = Side::new(old)?;
    let b = Side::new(new)?;
    let mut report = Report {
        old_policy: a.name(),
        new_policy: b.name(),
        ..Report::default()
    };

    // As written.
    let names = |s: &Side| {
        (0..s.leaves.len())
            .map(|i| s.leaf_name(i))
            .collect::<Vec<_>>()
    };
    if a.composed || b.composed {
        let (na, nb) = (names(&a), names(&b));
        if na != nb {
            let list = |n: &[String]| {
                if n.is_empty() {
                    "(none)".to_string()
                } else {
                    n.join(", ")
                }
            };
            report
                .settings
                .push(format!("members: {} → {}", list(&na), list(&nb)));
        }
        for (i, n) in na.iter().enumerate() {
            if let Some(j) = nb.iter().position(|m| m == n) {
                if let (Some(x), Some(y)) = (a.list(i), b.list(j)) {
                    let prefix = format!("in `{n}`: ");
                    diff_settings(&prefix, x, y, &mut report.settings);
                    diff_rules(&prefix, x, y, &mut report.rules);
                }
            }
        }
    } else if let (Some(x), Some(y)) = (a.list(0), b.list(0)) {
        diff_settings("", x, y, &mut report.settings);
        diff_rules("", x, y, &mut report.rules);
    }
    let targets = targets(&a, &b, &mut report);
    let same_members = names(&a) == names(&b);
    if report.settings.is_empty()
        && report.rules.is_empty()
        && report.tools.is_empty()
        && same_members
    {
        // Same rules, settings and declarations: the same decisions.
        return Ok(report);
    }

    // Behaviour.
    let mut quit_ops: Vec<String> = Vec::new();
    let mut cache = Cache::default();
    for t in &targets {
        compare_target(&a, &b, t, limits, &mut cache, &mut report, &mut quit_ops);
    }
    if !quit_ops.is_empty() {
        report.notes.push(format!(
            "inputs with non-ASCII characters were not compared for {}: a rule there uses a Unicode `\\b`, which the automata cannot follow (write `(?-u:\\b)` to compare them too)",
            quit_ops.join(", ")
        ));
    }
    report.changes.sort_by(|x, y| {
        (
            x.any_tool,
            &x.tool,
            &x.op,
            x.input.as_ref().map(|s| s.len()),
            &x.input,
            &x.cwd,
        )
            .cmp(&(
                y.any_tool,
                &y.tool,
                &y.op,
                y.input.as_ref().map(|s| s.len()),
                &y.input,
                &y.cwd,
            ))
    });
    Ok(report)
}

/// Automata and walks already computed: tools that share rules (every tool
/// a rule names, or none) share their rule sets, and then their walks.
#[derive(Default)]
struct Cache {
    /// (side, leaf, member rules, model) -> rule set id.
    set_ids: HashMap<(usize, usize, Vec<u32>, Model), usize>,
    sets: Vec<Result<RuleSet, String>>,
    /// (rule set ids of both sides, model, separators, no root, cwds) -> walk.
    walks: HashMap<
        (
            Vec<usize>,
            Vec<usize>,
            Model,
            Vec<String>,
            bool,
            Vec<Option<String>>,
        ),
        Explored,
    >,
}

/// What the walks of one (tool, operation) found, over every working directory.
#[derive(Clone, Default)]
struct Explored {
    /// (class, witness bytes, decisions, working directory).
    found: Vec<(ClassKey, Vec<u8>, [Decided; 2], Option<String>)>,
    quit: bool,
    /// Why the walk stopped early, if it did.
    truncated: Option<String>,
}

impl Cache {
    fn set(
        &mut self,
        side: usize,
        leaf: usize,
        list: &RuleList,
        tool: &str,
        op: &str,
        model: Model,
        limits: &Limits,
    ) -> usize {
        let members: Vec<u32> = list
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.applies_to_tool(tool) && r.applies_to_op(op))
            .map(|(i, _)| i as u32)
            .collect();
        let key = (side, leaf, members, model);
        if let Some(&id) = self.set_ids.get(&key) {
            return id;
        }
        let built = RuleSet::build(list, &key.2, model, limits);
        self.sets.push(built);
        let id = self.sets.len() - 1;
        self.set_ids.insert(key, id);
        id
    }
}

fn compare_target(
    a: &Side,
    b: &Side,
    t: &Target,
    limits: &Limits,
    cache: &mut Cache,
    report: &mut Report,
    quit_ops: &mut Vec<String>,
) {
    let label = if t.any_tool {
        format!("`{}` (any other tool)", t.op)
    } else {
        format!("`{} {}`", t.tool, t.op)
    };
    let stmts: Vec<ToolStmtDef> = statements(a, t)
        .into_iter()
        .chain(statements(b, t))
        .collect();
    let model = match t.kind {
        OpKind::Path => Model::Path,
        OpKind::Command if !stmts.is_empty() && stmts.iter().all(|s| s.raw) => Model::Raw,
        OpKind::Command => Model::Words,
        OpKind::Bare => Model::Bare,
    };
    let mut ids: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    for (si, side) in [a, b].into_iter().enumerate() {
        let (op, m) = if t.bare_side == Some(si) {
            ("tool", Model::Bare)
        } else {
            (t.op.as_str(), model)
        };
        for l in 0..side.leaves.len() {
            match side.list(l) {
                Some(list) => ids[si].push(cache.set(si, l, list, &t.tool, op, m, limits)),
                None => {
                    report.incomplete = true;
                    report.notes.push(format!(
                        "could not compare {label} exactly: a member is not a rule list"
                    ));
                    return;
                }
            }
        }
    }
    let mut sets: [Vec<&RuleSet>; 2] = [Vec::new(), Vec::new()];
    for si in 0..2 {
        for &id in &ids[si] {
            match cache.sets.get(id) {
                Some(Ok(set)) => sets[si].push(set),
                Some(Err(e)) => {
                    report.incomplete = true;
                    report
                        .notes
                        .push(format!("could not compare {label} exactly: {e}"));
                    return;
                }
                None => return,
            }
        }
    }
    let [sa, sb] = sets;
    if model == Model::Bare {
        let decide = |side: &Side, sets: &[&RuleSet]| {
            let per: Vec<(Effect, Option<u32>)> = sets
                .iter()
                .map(|s| {
                    let r = s.select(&vec![false; s.pats.len()], false);
                    (s.effect(r), r)
                })
                .collect();
            side.fold(&per)
        };
        let (da, db) = (decide(a, &sa), decide(b, &sb));
        if da.effect != db.effect {
            push_verified(a, b, t, None, None, [da, db], report);
        }
        return;
    }
    // Separators of split statements (when every statement of the operation splits).
    let seps: Vec<String> = if !stmts.is_empty() && stmts.iter().all(|s| s.split.is_some()) {
        let mut v: Vec<String> = stmts.iter().filter_map(|s| s.split.clone()).collect();
        v.sort();
        v.dedup();
        v
    } else {
        Vec::new()
    };
    let dir_ok = |s: &ToolStmtDef| {
        s.fs.iter()
            .all(|&(positive, want)| matches!(want, FsKind::Exists | FsKind::Dir) == positive)
    };
    let no_root = model == Model::Path && !stmts.is_empty() && !stmts.iter().any(dir_ok);
    // Working directories: only commands, and only under gates.
    let mut cwds: Vec<Option<String>> = vec![None];
    let has_gates = sa.iter().chain(&sb).any(|s| !s.gates.is_empty());
    if t.kind == OpKind::Command && has_gates {
        let roots: Vec<String> = sa.iter().chain(&sb).map(|s| s.workspace.clone()).collect();
        let mut candidates: Vec<String> = roots.clone();
        let mut outside = "/permc-diff-outside".to_string();
        while roots.iter().any(|r| crate::paths::is_within(&outside, r)) && outside.len() < 64 {
            outside.push('_');
        }
        candidates.push(outside);
        let mut seen_vectors: Vec<Vec<bool>> = vec![vec![false; roots.len()]];
        for c in candidates {
            let v: Vec<bool> = roots
                .iter()
                .map(|r| !crate::paths::is_within(&c, r))
                .collect();
            if !seen_vectors.contains(&v) {
                seen_vectors.push(v);
                cwds.push(Some(c));
            }
        }
    }
    let key = (
        ids[0].clone(),
        ids[1].clone(),
        model,
        seps.clone(),
        no_root,
        cwds.clone(),
    );
    let explored = match cache.walks.get(&key) {
        Some(e) => e.clone(),
        None => {
            let e = explore(&sa, &sb, model, &seps, no_root, &cwds, limits);
            cache.walks.insert(key, e.clone());
            e
        }
    };
    if explored.quit && !quit_ops.contains(&label) {
        quit_ops.push(label.clone());
    }
    if let Some(why) = &explored.truncated {
        report.incomplete = true;
        report
            .notes
            .push(format!("could not compare {label} exactly: {why}"));
    }
    for (_, bytes, dec, cwd) in explored.found {
        let witness = match model {
            Model::Path => String::from_utf8(bytes).map(Witness::Path),
            Model::Raw => String::from_utf8(bytes).map(Witness::Text),
            _ => bytes
                .split(|&b| b == 0)
                .map(|w| String::from_utf8(w.to_vec()))
                .collect::<Result<Vec<_>, _>>()
                .map(Witness::Words),
        };
        match witness {
            Ok(w) => push_verified(a, b, t, Some(&w), cwd.as_deref(), dec, report),
            Err(e) => report
                .internal_errors
                .push(format!("{label}: a witness is not UTF-8: {e}")),
        }
    }
}

/// Walks the product for every working directory, printable inputs first.
fn explore(
    sa: &[&RuleSet],
    sb: &[&RuleSet],
    model: Model,
    seps: &[String],
    no_root: bool,
    cwds: &[Option<String>],
    limits: &Limits,
) -> Explored {
    let mut out = Explored::default();
    let dom = match domain(model, seps, no_root, limits) {
        Ok(d) => d,
        Err(e) => {
            out.truncated = Some(e);
            return out;
        }
    };
    let mut known: HashMap<ClassKey, ()> = HashMap::new();
    for cwd in cwds {
        let fires = |s: &RuleSet| {
            cwd.as_ref()
                .is_some_and(|c| !crate::paths::is_within(c, &s.workspace))
        };
        let walk = Walk {
            domain: &dom,
            words: model == Model::Words,
            sides: [
                sa.iter().map(|s| (*s, fires(s))).collect(),
                sb.iter().map(|s| (*s, fires(s))).collect(),
            ],
        };
        for printable in [true, false] {
            let r = walk.run(printable, &known, limits.max_states);
            out.quit |= r.quit;
            for (key, bytes, dec) in r.found {
                known.insert(key, ());
                out.found.push((key, bytes, dec, cwd.clone()));
            }
            if r.truncated {
                out.truncated = Some(format!(
                    "more than {} combined automaton states",
                    limits.max_states
                ));
                return out;
            }
        }
    }
    out
}

/// A tool's declaration on one side, for comparison.
fn declaration(side: &Side, tool: &str) -> Option<String> {
    let low = side.low();
    low.tool_index
        .get(tool)
        .and_then(|&i| low.tools.get(i as usize))
        .map(|d| format!("{:?}", d.stmts))
}

/// The statements of `t.tool` for `t.op` on one side.
fn statements(side: &Side, t: &Target) -> Vec<ToolStmtDef> {
    if t.any_tool {
        return Vec::new();
    }
    let low = side.low();
    low.tool_index
        .get(&t.tool)
        .and_then(|&i| low.tools.get(i as usize))
        .map(|d| {
            d.stmts
                .iter()
                .filter(|s| s.op == t.op && s.kind == t.kind)
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

// ---- verification --------------------------------------------------------------------------

/// A subject found by the walk.
#[derive(Debug, Clone)]
enum Witness {
    Path(String),
    /// A shell command's words.
    Words(Vec<String>),
    /// A raw command's text.
    Text(String),
}

impl Witness {
    fn display(&self) -> String {
        match self {
            Witness::Path(p) | Witness::Text(p) => p.clone(),
            Witness::Words(w) => w.join(" "),
        }
    }
}

/// Checks a witness by deciding it on both sides; records the change, or an
/// internal error when it does not reproduce.
fn push_verified(
    a: &Side,
    b: &Side,
    t: &Target,
    subject: Option<&Witness>,
    cwd: Option<&str>,
    expected: [Decided; 2],
    report: &mut Report,
) {
    let what = match subject {
        Some(s) => format!("`{} {}` {}", t.tool, t.op, quote(&s.display())),
        None => format!("`{} {}`", t.tool, t.op),
    };
    let path = match subject {
        Some(Witness::Path(p)) => Some(p.as_str()),
        _ => None,
    };
    let push = |input: Option<String>, report: &mut Report| {
        report.changes.push(Change {
            tool: t.tool.clone(),
            any_tool: t.any_tool,
            op: t.op.clone(),
            input,
            cwd: cwd.map(str::to_string),
            old: a.outcome(&expected[0]),
            new: b.outcome(&expected[1]),
        });
    };
    let mut last_err = "no request produces this item".to_string();
    // Both sides declare the tool, differently: the same item comes from a
    // different request on each side, so each side is checked with its own.
    if t.bare_side.is_none() && declaration(a, &t.tool) != declaration(b, &t.tool) {
        let mut shown = None;
        for (si, side) in [a, b].into_iter().enumerate() {
            let found = candidate_requests(side, t, subject, cwd)
                .into_iter()
                .find_map(|(req, fs, input)| {
                    match decide_item(side, t, false, &req, &fs, path, input.as_deref()) {
                        Ok(x) if x == expected[si] => Some(input),
                        Ok(x) => {
                            last_err =
                                format!("the evaluator decided {}", side.outcome(&x).describe());
                            None
                        }
                        Err(e) => {
                            last_err = e;
                            None
                        }
                    }
                });
            match found {
                Some(input) => {
                    if si == 0 {
                        shown = Some(input);
                    }
                }
                None => {
                    report
                        .internal_errors
                        .push(format!("witness {what} did not reproduce: {last_err}"));
                    return;
                }
            }
        }
        push(shown.flatten(), report);
        return;
    }
    // Requests are built from the side that declares the tool.
    let requests = candidate_requests(if t.bare_side == Some(0) { b } else { a }, t, subject, cwd);
    for (req, fs, input) in requests {
        let got_a = decide_item(
            a,
            t,
            t.bare_side == Some(0),
            &req,
            &fs,
            path,
            input.as_deref(),
        );
        let got_b = decide_item(
            b,
            t,
            t.bare_side == Some(1),
            &req,
            &fs,
            path,
            input.as_deref(),
        );
        match (got_a, got_b) {
            (Ok(x), Ok(y)) if x == expected[0] && y == expected[1] => {
                push(input, report);
                return;
            }
            (Ok(x), Ok(y)) => {
                last_err = format!(
                    "the analysis expected {} → {}, the evaluator decided {} → {}",
                    a.outcome(&expected[0]).describe(),
                    b.outcome(&expected[1]).describe(),
                    a.outcome(&x).describe(),
                    b.outcome(&y).describe()
                );
            }
            (Err(e), _) | (_, Err(e)) => last_err = e,
        }
    }
    report
        .internal_errors
        .push(format!("witness {what} did not reproduce: {last_err}"));
}

/// Requests that should produce the item, with the filesystem they need and
/// the input text shown to the user (a command line may need quoting).
fn candidate_requests(
    side: &Side,
    t: &Target,
    subject: Option<&Witness>,
    cwd: Option<&str>,
) -> Vec<(Request, FakeFs, Option<String>)> {
    let mut out = Vec::new();
    let bare = |tool: &str| Request::new(tool, json!({})).ok();
    let Some(subject) = subject else {
        // A bare item: a tool without a field, or one no statement applies to.
        let stmts = statements(side, t);
        if stmts.is_empty() {
            if let Some(r) = bare(&t.tool) {
                out.push((r, FakeFs::default(), None));
            }
            if let Some(r) = no_statement_applies(side, &t.tool) {
                out.push((r, FakeFs::default(), None));
            }
        }
        for s in stmts {
            if let Some((input, _)) = input_for(side, t, &s, None, None) {
                if let Ok(r) = Request::new(t.tool.as_str(), Value::Object(input)) {
                    out.push((r, FakeFs::default(), None));
                }
            }
        }
        return out;
    };
    for s in statements(side, t) {
        // The value to put in the field, and the item subject it yields.
        let mut values: Vec<String> = Vec::new();
        match subject {
            Witness::Path(p) if s.parent => values.push(if p == "/" {
                "/x".into()
            } else {
                format!("{p}/x")
            }),
            Witness::Path(p) => values.push(p.clone()),
            Witness::Text(text) if s.raw => values.push(text.clone()),
            Witness::Text(text) => values.extend(command_lines(
                &text.split(' ').map(str::to_string).collect::<Vec<_>>(),
            )),
            Witness::Words(words) if s.raw => values.push(words.join(" ")),
            Witness::Words(words) => values.extend(command_lines(words)),
        }
        let subject = subject.display();
        // The filesystem the statement's conditions need for the item.
        let fs_options: Vec<FakeFs> = [None, Some(FsKind::File), Some(FsKind::Dir)]
            .into_iter()
            .filter(|k| {
                s.fs.iter().all(|&(positive, want)| {
                    let holds = match (k, want) {
                        (None, _) => false,
                        (Some(_), FsKind::Exists) => true,
                        (Some(k), w) => *k == w,
                    };
                    holds == positive
                })
            })
            .map(|k| match (k, t.kind) {
                (Some(FsKind::Dir), OpKind::Path) => FakeFs {
                    files: Vec::new(),
                    dirs: vec![subject.to_string()],
                },
                (Some(_), OpKind::Path) => FakeFs {
                    files: vec![subject.to_string()],
                    dirs: Vec::new(),
                },
                _ => FakeFs::default(),
            })
            .collect();
        for v in values {
            let Some((input, req_cwd)) = input_for(side, t, &s, Some(&v), cwd) else {
                continue;
            };
            for fs in &fs_options {
                if let Ok(mut r) = Request::new(t.tool.as_str(), Value::Object(input.clone())) {
                    r.cwd = req_cwd.clone();
                    out.push((r, fs.clone(), Some(v.clone())));
                }
            }
        }
    }
    out
}

/// A request none of whose tool's statements applies (each has a `when`).
fn no_statement_applies(side: &Side, tool: &str) -> Option<Request> {
    let low = side.low();
    let def = low
        .tool_index
        .get(tool)
        .and_then(|&i| low.tools.get(i as usize))?;
    let mut input = serde_json::Map::new();
    for s in &def.stmts {
        match s.when.as_ref()? {
            Cond::Eq(f, v) if v.is_null() => set_field(&mut input, &f.0, json!("permc-diff")),
            Cond::Ne(f, v) => set_field(&mut input, &f.0, v.clone()),
            Cond::In(f, vs) if vs.iter().any(Value::is_null) => {
                set_field(&mut input, &f.0, json!("permc-diff"))
            }
            Cond::NotIn(f, vs) => set_field(&mut input, &f.0, vs.first()?.clone()),
            _ => {}
        }
    }
    let req = Request::new(tool, Value::Object(input)).ok()?;
    // Check that it really gives the bare item.
    let items = crate::request::expand(&req, Some(def), "/", None).ok()?;
    items.iter().any(|i| i.op == "tool").then_some(req)
}

/// Command lines whose one segment has these words: as written, then with
/// words quoted where the shell would treat them specially.
fn command_lines(words: &[String]) -> Vec<String> {
    let plain = words.join(" ");
    let quoted: Vec<String> = words
        .iter()
        .map(|w| {
            let safe = w
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:,@%+=^".contains(c));
            if safe {
                w.to_string()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect();
    let quoted = quoted.join(" ");
    if quoted == plain {
        vec![plain]
    } else {
        vec![plain, quoted]
    }
}

/// The tool input that makes statement `s` produce an item from `value`, and
/// the request cwd; `None` when the statement's condition cannot be met.
fn input_for(
    side: &Side,
    t: &Target,
    s: &ToolStmtDef,
    value: Option<&str>,
    cwd: Option<&str>,
) -> Option<(serde_json::Map<String, Value>, Option<String>)> {
    let mut input = serde_json::Map::new();
    let mut req_cwd = None;
    if let (Some(f), Some(v)) = (&s.field, value) {
        set_field(&mut input, &f.0, json!([v]));
    }
    if let Some(c) = cwd {
        match &s.cwd {
            Some(cf) => set_field(&mut input, &cf.0, Value::String(c.to_string())),
            None => req_cwd = Some(c.to_string()),
        }
    }
    if let Some(cond) = &s.when {
        match cond {
            Cond::Eq(f, v) => set_field(&mut input, &f.0, v.clone()),
            Cond::In(f, vs) => set_field(&mut input, &f.0, vs.first()?.clone()),
            Cond::Ne(f, v) => {
                let other = if *v == json!("permc-diff") {
                    json!("permc-diff-2")
                } else {
                    json!("permc-diff")
                };
                set_field(&mut input, &f.0, other);
            }
            // Others (`not in`) hold for a missing field.
            _ => {}
        }
    }
    // Other statements of the tool that apply need their fields too.
    let low = side.low();
    if let Some(def) = low
        .tool_index
        .get(&t.tool)
        .and_then(|&i| low.tools.get(i as usize))
    {
        for other in &def.stmts {
            if let Some(f) = &other.field {
                if get_field(&input, &f.0).is_none() && !other.else_cwd {
                    let filler = if other.kind == OpKind::Path {
                        "/permc-diff-filler"
                    } else {
                        "true"
                    };
                    set_field(&mut input, &f.0, json!([filler]));
                }
            }
        }
    }
    Some((input, req_cwd))
}

fn set_field(input: &mut serde_json::Map<String, Value>, path: &[String], v: Value) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        input.insert(first.clone(), v);
        return;
    }
    let entry = input
        .entry(first.clone())
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(m) = entry {
        set_field(m, rest, v);
    }
}

fn get_field<'v>(input: &'v serde_json::Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    let mut v = input.get(first)?;
    for k in rest {
        v = v.as_object()?.get(k)?;
    }
    Some(v)
}

/// Decides `req` on one side, leaf by leaf, and returns what the side
/// decides for the item with `subject` (or the bare item).
fn decide_item(
    side: &Side,
    t: &Target,
    bare: bool,
    req: &Request,
    fs: &FakeFs,
    path: Option<&str>,
    input: Option<&str>,
) -> Result<Decided, String> {
    let low = side.low();
    let program = side.policy.program();
    let mut per_leaf: Vec<(Effect, Option<u32>)> = Vec::new();
    for &leaf in &side.leaves {
        let d = eval::decide(low, program, leaf, req, Some(fs));
        let item = d.items.iter().find(|it| {
            if bare {
                return it.tool == t.tool && it.op == "tool";
            }
            it.tool == t.tool
                && it.op == t.op
                && match t.kind {
                    OpKind::Path => path.is_some() && it.path.as_deref() == path,
                    OpKind::Command => {
                        input.is_some()
                            && (it.command.as_deref() == input
                                || it.command.as_deref() == input.map(str::trim))
                    }
                    OpKind::Bare => it.path.is_none() && it.command.is_none(),
                }
        });
        match item {
            Some(it) => per_leaf.push((it.decision, it.rule_index)),
            None => {
                return Err(format!(
                    "the request {} gave no such item ({})",
                    Value::Object(req.input.clone()),
                    if d.items.is_empty() {
                        d.reason.clone()
                    } else {
                        format!("{} item(s)", d.items.len())
                    }
                ));
            }
        }
    }
    let folded = side.fold(&per_leaf);
    // With one item, the whole decision must say the same.
    let whole = eval::decide(low, program, side.root, req, Some(fs));
    let items = if side.composed {
        per_leaf.len()
    } else {
        whole.items.len()
    };
    if items == 1 && whole.decision != folded.effect {
        return Err(format!(
            "the request decided {} as a whole, {} item by item",
            whole.decision, folded.effect
        ));
    }
    Ok(folded)
}
