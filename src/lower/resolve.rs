//! Name resolution and preset splicing; see the module docs of `lower`.

use super::patterns::{anchor_glob, check_regex, glob_regex, prefix_words};
use super::*;
use crate::diag::did_you_mean;
use crate::syntax::ast::{Matcher, PolicyKind, Rule, Stmt, Target};
use crate::syntax::loc::Node;
use std::collections::{BTreeSet, HashSet};

struct Ctx<'a> {
    modules: &'a [Module],
    opts: &'a LowerOptions,
    diags: &'a mut Vec<Diagnostic>,
    tools: Vec<ToolDef>,
    tool_index: HashMap<String, u32>,
    /// Every operation some tool declares, with the kinds it is declared as.
    ops: HashMap<String, BTreeSet<OpKind>>,
    /// (module, name) -> global policy index.
    policy_ids: HashMap<(usize, String), u32>,
    /// Set while splicing a preset into a policy: presets are checked once
    /// on their own, so their findings must not repeat per policy.
    mute: bool,
    /// After the preset pass: splicing mutes the preset's findings.
    mute_presets: bool,
    /// `use` cycles already reported, by their sorted members.
    reported_cycles: HashSet<Vec<(usize, String)>>,
}

pub(super) fn resolve(
    modules: &[Module],
    opts: &LowerOptions,
    diags: &mut Vec<Diagnostic>,
) -> Lowered {
    let mut cx = Ctx {
        modules,
        opts,
        diags,
        tools: Vec::new(),
        tool_index: HashMap::new(),
        ops: HashMap::new(),
        policy_ids: HashMap::new(),
        mute: false,
        mute_presets: false,
        reported_cycles: HashSet::new(),
    };
    cx.collect_tools();
    cx.check_duplicate_names();
    cx.check_presets();

    // Number every policy first so `all(...)` can refer forward.
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (m, module) in modules.iter().enumerate() {
        for (p, pol) in module.file.policies.iter().enumerate() {
            let id = order.len() as u32;
            cx.policy_ids
                .entry((m, pol.name.node.clone()))
                .or_insert(id);
            order.push((m, p));
        }
    }
    let mut policies = Vec::with_capacity(order.len());
    for &(m, p) in &order {
        let pol = &modules[m].file.policies[p];
        let name = qualify(&modules[m].name, &pol.name.node);
        let body = match &pol.kind {
            PolicyKind::Body(stmts) => PolicyBody::Rules(cx.policy_body(m, stmts)),
            PolicyKind::All(names) => {
                if names.is_empty() {
                    cx.diags.push(
                        Diagnostic::warning("permc::empty-all", format!("`all()` in policy `{name}` is empty and allows every request"))
                            .label(pol.loc, "nothing to compose")
                            .help("list the policies to combine, or write a policy with `default allow` if allow-all is intended"),
                    );
                }
                PolicyBody::All(
                    names
                        .iter()
                        .filter_map(|n| cx.lookup_policy(m, n))
                        .collect(),
                )
            }
        };
        policies.push(ResolvedPolicy {
            name,
            loc: pol.loc,
            body,
        });
    }
    cx.check_all_cycles(&policies);

    cx.check_rule_names(&policies);
    // A test block is named after the policy it tests; `by` names one of its
    // rules (checked only when the rules resolved, or every `by` would cascade).
    let rules_resolved = !cx.diags.iter().any(Diagnostic::is_error);
    if let Some(root) = modules.first() {
        for t in &root.file.tests {
            let Some(pid) = cx.lookup_policy_for(
                0,
                &t.name,
                "a test block is named after the policy it tests",
            ) else {
                continue;
            };
            let mut labels = Vec::new();
            collect_labels(&policies, pid, &mut labels, 0);
            for case in t.cases.iter().filter(|_| rules_resolved) {
                let Some(by) = &case.node.by else { continue };
                if !labels.contains(&by.node.as_str()) {
                    let mut d = Diagnostic::error(
                        "permc::unknown-rule",
                        format!(
                            "no rule of policy `{}` is labelled `{}`",
                            t.name.node, by.node
                        ),
                    )
                    .label(by.loc, "no such rule");
                    d = d.help(did_you_mean(&by.node, labels.iter().copied()).unwrap_or_else(|| {
                        "`by` takes a rule's label: its `as` name, else its reason, else the generated `effect:pattern`".to_string()
                    }));
                    cx.report(d);
                }
            }
        }
    }

    let mut policy_index = HashMap::new();
    let mut root_policies = Vec::new();
    for (id, &(m, _)) in order.iter().enumerate() {
        if m == 0 {
            root_policies.push(id as u32);
            policy_index.insert(policies[id].name.clone(), id as u32);
        }
    }
    // Imported policies are reachable from the root as `alias.name`.
    if let Some(root) = modules.first() {
        for (alias, &mi) in &root.imports {
            for (id, &(m, p)) in order.iter().enumerate() {
                if m == mi {
                    let n = &modules[m].file.policies[p].name.node;
                    policy_index.insert(format!("{alias}.{n}"), id as u32);
                }
            }
        }
    }
    Lowered {
        tools: cx.tools,
        tool_index: cx.tool_index,
        policies,
        policy_index,
        tests: modules
            .first()
            .map(|m| m.file.tests.clone())
            .unwrap_or_default(),
        root_policies,
        warnings: Vec::new(),
    }
}

/// Every rule label a policy (or a composition) can decide with.
fn collect_labels<'p>(policies: &'p [ResolvedPolicy], id: u32, out: &mut Vec<&'p str>, depth: u32) {
    let Some(p) = policies.get(id as usize) else {
        return;
    };
    match &p.body {
        PolicyBody::Rules(list) => out.extend(list.rules.iter().map(|r| r.label.as_str())),
        // Cycles are reported elsewhere; the depth cap keeps this finite.
        PolicyBody::All(children) if depth < 64 => {
            for &c in children {
                collect_labels(policies, c, out, depth + 1);
            }
        }
        PolicyBody::All(_) => {}
    }
}

fn qualify(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}.{name}")
    }
}

impl Ctx<'_> {
    fn report(&mut self, d: Diagnostic) {
        if !self.mute {
            self.diags.push(d);
        }
    }

    /// Checks every preset once, used or not, against the default workspace.
    fn check_presets(&mut self) {
        for m in 0..self.modules.len() {
            for p in 0..self.modules[m].file.presets.len() {
                let preset = &self.modules[m].file.presets[p];
                let mut stack = vec![(m, preset.name.node.clone())];
                let body = preset.body.clone();
                let mut sink = Vec::new();
                self.splice(
                    m,
                    &body,
                    DEFAULT_WORKSPACE,
                    &mut stack,
                    &[],
                    &mut sink,
                    false,
                );
            }
        }
        self.mute_presets = true;
    }

    fn collect_tools(&mut self) {
        for module in self.modules {
            for op in &module.file.operations {
                self.ops
                    .entry(op.node.clone())
                    .or_default()
                    .insert(OpKind::Bare);
            }
        }
        let mut first_loc: HashMap<String, Loc> = HashMap::new();
        // Imports load after their importer: walk backwards so that a clash
        // with an imported (perhaps standard) tool is reported in the file
        // that can change.
        for module in self.modules.iter().rev() {
            for decl in &module.file.tools {
                let name = decl.name.node.clone();
                if let Some(prev) = first_loc.get(&name) {
                    self.report(
                        Diagnostic::error("permc::duplicate-name", format!("tool `{name}` is declared twice"))
                            .label(decl.name.loc, "declared again here")
                            .label(*prev, "first declared here")
                            .help("a tool has one declaration; remove this one (or the import that also declares it), or merge the two blocks"),
                    );
                    continue;
                }
                first_loc.insert(name.clone(), decl.name.loc);
                let stmts = decl
                    .stmts
                    .iter()
                    .filter_map(|s| self.tool_stmt(&name, s))
                    .collect();
                self.tool_index
                    .insert(name.clone(), self.tools.len() as u32);
                self.tools.push(ToolDef {
                    name,
                    stmts,
                    loc: decl.loc,
                });
            }
        }
    }

    fn tool_stmt(
        &mut self,
        tool: &str,
        s: &Node<crate::syntax::ast::ToolStmt>,
    ) -> Option<ToolStmtDef> {
        let op = s.op.node.clone();
        use crate::syntax::ast::StmtFlag;
        let command_flag = s
            .flags
            .iter()
            .any(|f| matches!(f.node, StmtFlag::Shell | StmtFlag::Raw));
        let kind = if op == "exec" || command_flag {
            OpKind::Command
        } else if s.field.is_some() {
            OpKind::Path
        } else {
            OpKind::Bare
        };
        let mut ok = true;
        if kind == OpKind::Command && s.field.is_none() {
            self.report(
                Diagnostic::error(
                    "permc::tool-decl",
                    format!("command operation `{op}` in tool `{tool}` names no input field"),
                )
                .label(s.loc, "which field holds the command?")
                .help("write e.g. `exec input.command`"),
            );
            ok = false;
        }
        if let (Some(split), None) = (&s.split, &s.field) {
            self.report(
                Diagnostic::error("permc::tool-decl", "`split` needs an input field to split")
                    .label(split.loc, "nothing to split")
                    .help("write the field to split, e.g. `read input.path split \",\"`"),
            );
            ok = false;
        }
        if let Some(split) = &s.split {
            if split.node.is_empty() {
                self.report(
                    Diagnostic::error("permc::tool-decl", "`split` needs a non-empty separator")
                        .label(split.loc, "empty separator")
                        .help("give the text that separates entries, e.g. `split \",\"`, or drop `split`"),
                );
                ok = false;
            }
        }
        if let (Some(cwd), false) = (&s.cwd, kind == OpKind::Command) {
            self.report(
                Diagnostic::error(
                    "permc::tool-decl",
                    "`cwd` applies only to `exec` statements",
                )
                .label(cwd.loc, "the working directory of what command?")
                .help("move `cwd input.FIELD` onto the tool's `exec` statement"),
            );
            ok = false;
        }
        let (mut else_cwd, mut raw, mut json, mut expand, mut parent, mut fs) =
            (false, false, false, false, false, Vec::new());
        for flag in &s.flags {
            let (fits, what, help) = match flag.node {
                StmtFlag::ElseCwd => {
                    else_cwd = true;
                    (
                        s.field.is_some() && kind == OpKind::Path,
                        "`else cwd`",
                        "`else cwd` gives a missing path field the request's working directory",
                    )
                }
                StmtFlag::Shell => (
                    kind == OpKind::Command,
                    "`shell`",
                    "`shell` marks a command operation; it needs an input field",
                ),
                StmtFlag::Raw => {
                    raw = true;
                    (
                        kind == OpKind::Command,
                        "`raw`",
                        "`raw` keeps an `exec` command as one segment (for code, not shell)",
                    )
                }
                StmtFlag::Json => {
                    json = true;
                    (
                        s.field.is_some(),
                        "`json`",
                        "`json` decodes a field holding a JSON list of strings",
                    )
                }
                StmtFlag::Expand => {
                    expand = true;
                    (
                        kind == OpKind::Path,
                        "`expand`",
                        "`expand` expands glob path inputs against the filesystem",
                    )
                }
                StmtFlag::Parent => {
                    parent = true;
                    (
                        kind == OpKind::Path,
                        "`parent`",
                        "`parent` makes the item the path's parent directory",
                    )
                }
                StmtFlag::Fs(positive, k) => {
                    fs.push((positive, k));
                    (
                        kind == OpKind::Path,
                        "a filesystem condition",
                        "`if`/`unless exists|file|dir` filter path items by what is on disk",
                    )
                }
            };
            if !fits {
                self.report(
                    Diagnostic::error(
                        "permc::tool-decl",
                        format!("{what} does not apply to this statement"),
                    )
                    .label(flag.loc, "not applicable here")
                    .help(help),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        self.ops.entry(op.clone()).or_default().insert(kind);
        Some(ToolStmtDef {
            op,
            kind,
            field: s.field.as_ref().map(|f| f.node.clone()),
            split: s.split.as_ref().map(|f| f.node.clone()),
            cwd: s.cwd.as_ref().map(|f| f.node.clone()),
            when: s.when.as_ref().map(|w| w.node.clone()),
            else_cwd,
            raw,
            json,
            expand,
            parent,
            fs,
        })
    }

    fn check_duplicate_names(&mut self) {
        for module in self.modules {
            let mut seen: HashMap<&str, Loc> = HashMap::new();
            let f = &module.file;
            let names = f
                .presets
                .iter()
                .map(|p| &p.name)
                .chain(f.policies.iter().map(|p| &p.name));
            for n in names {
                if let Some(prev) = seen.get(n.node.as_str()) {
                    self.report(
                        Diagnostic::error(
                            "permc::duplicate-name",
                            format!("`{}` is defined twice", n.node),
                        )
                        .label(n.loc, "defined again here")
                        .label(*prev, "first defined here")
                        .help("presets and policies share one namespace per file; rename one"),
                    );
                } else {
                    seen.insert(&n.node, n.loc);
                }
            }
        }
    }

    /// Follows `alias.` qualifiers to the module that defines a name.
    fn module_of<'n>(&self, mut m: usize, name: &'n str) -> Option<(usize, &'n str)> {
        let mut rest = name;
        while let Some((alias, tail)) = rest.split_once('.') {
            m = *self.modules[m].imports.get(alias)?;
            rest = tail;
        }
        Some((m, rest))
    }

    fn lookup_policy(&mut self, m: usize, name: &Node<String>) -> Option<u32> {
        self.lookup_policy_for(m, name, "`all(...)` combines policies")
    }

    fn lookup_policy_for(&mut self, m: usize, name: &Node<String>, purpose: &str) -> Option<u32> {
        if let Some((mm, n)) = self.module_of(m, &name.node) {
            if let Some(&id) = self.policy_ids.get(&(mm, n.to_string())) {
                return Some(id);
            }
        }
        let known: Vec<String> = self.modules[m]
            .file
            .policies
            .iter()
            .map(|p| p.name.node.clone())
            .collect();
        let mut d = Diagnostic::error(
            "permc::unknown-policy",
            format!("unknown policy `{}`", name.node),
        )
        .label(name.loc, "no policy has this name");
        if let Some(h) = did_you_mean(&name.node, known.iter().map(String::as_str)) {
            d = d.help(h);
        } else if self.modules[m]
            .file
            .presets
            .iter()
            .any(|p| p.name.node == name.node)
        {
            d = d.help(format!("`{}` is a preset; {purpose}", name.node));
        } else if known.is_empty() {
            d = d.help("this file defines no policy");
        } else {
            d = d.help(format!("known policies: {}", known.join(", ")));
        }
        self.report(d);
        None
    }

    fn policy_body(&mut self, m: usize, stmts: &[Node<Stmt>]) -> RuleList {
        let mut workspace: Option<&Node<String>> = None;
        let mut combine: Option<&Node<Combine>> = None;
        let mut default: Option<&Node<Effect>> = None;
        let mut first: HashMap<&'static str, Loc> = HashMap::new();
        for s in stmts {
            let what = match &s.node {
                Stmt::Workspace(w) => {
                    workspace = Some(w);
                    "workspace"
                }
                Stmt::Combine(c) => {
                    combine = Some(c);
                    "combine"
                }
                Stmt::Default(d) => {
                    default = Some(d);
                    "default"
                }
                _ => continue,
            };
            let slot_loc = match first.get(what) {
                Some(prev) => Some(*prev),
                None => {
                    first.insert(what, s.loc);
                    None
                }
            };
            if let Some(prev) = slot_loc {
                self.report(
                    Diagnostic::error(
                        "permc::duplicate-setting",
                        format!("`{what}` is set twice in one policy"),
                    )
                    .label(s.loc, "set again here")
                    .label(prev, "first set here")
                    .help("keep one; a later setting would silently override the first"),
                );
            }
        }
        let mut ws = match (&self.opts.workspace, workspace) {
            (Some(w), _) => normalize_root(w),
            (None, Some(w)) => {
                if !w.node.starts_with('/') {
                    self.report(
                        Diagnostic::error("permc::workspace", format!("workspace `{}` is not an absolute path", w.node))
                            .label(w.loc, "relative")
                            .help("write the root as an absolute path, e.g. `workspace \"/home/user/project\"`"),
                    );
                }
                normalize_root(&w.node)
            }
            (None, None) => DEFAULT_WORKSPACE.to_string(),
        };
        if self.opts.real_fs {
            ws = crate::paths::resolve(&ws);
        }
        let mut rules = Vec::new();
        let mut stack = Vec::new();
        self.splice(m, stmts, &ws, &mut stack, &[], &mut rules, true);
        RuleList {
            workspace: ws,
            combine: combine.map_or(Combine::FirstMatch, |c| c.node),
            default: default.map_or(Effect::Allow, |d| d.node),
            rules,
        }
    }

    /// Appends the rules of `stmts` (and of the presets they `use`) in order.
    #[allow(clippy::too_many_arguments)]
    fn splice(
        &mut self,
        m: usize,
        stmts: &[Node<Stmt>],
        ws: &str,
        stack: &mut Vec<(usize, String)>,
        via: &[Loc],
        out: &mut Vec<ResolvedRule>,
        in_policy: bool,
    ) {
        for s in stmts {
            match &s.node {
                Stmt::Rule(r) => {
                    if let Some(rule) = self.rule(m, r, ws, via) {
                        out.push(rule);
                    }
                }
                Stmt::Use(name) => self.use_preset(m, name, ws, stack, via, out),
                Stmt::Grants(text) => self.grants(text, via, out),
                Stmt::Workspace(_) | Stmt::Combine(_) | Stmt::Default(_) if !in_policy => {
                    self.report(
                        Diagnostic::error("permc::preset-setting", "presets hold rules, not policy settings")
                            .label(s.loc, "only allowed in a policy")
                            .help("move `workspace`, `combine` and `default` into the policy that uses this preset"),
                    );
                }
                _ => {}
            }
        }
    }

    fn use_preset(
        &mut self,
        m: usize,
        name: &Node<String>,
        ws: &str,
        stack: &mut Vec<(usize, String)>,
        via: &[Loc],
        out: &mut Vec<ResolvedRule>,
    ) {
        let found = self.module_of(m, &name.node).and_then(|(mm, n)| {
            self.modules[mm]
                .file
                .presets
                .iter()
                .position(|p| p.name.node == n)
                .map(|i| (mm, i))
        });
        let Some((mm, pi)) = found else {
            let mut known: Vec<String> = self.modules[m]
                .file
                .presets
                .iter()
                .map(|p| p.name.node.clone())
                .collect();
            for (alias, &im) in &self.modules[m].imports {
                known.extend(
                    self.modules[im]
                        .file
                        .presets
                        .iter()
                        .map(|p| format!("{alias}.{}", p.name.node)),
                );
            }
            let mut d = Diagnostic::error(
                "permc::unknown-preset",
                format!("unknown preset `{}`", name.node),
            )
            .label(name.loc, "no preset has this name");
            if let Some(h) = did_you_mean(&name.node, known.iter().map(String::as_str)) {
                d = d.help(h);
            } else if self.modules[m]
                .file
                .policies
                .iter()
                .any(|p| p.name.node == name.node)
            {
                d = d.help(format!(
                    "`{}` is a policy; `use` splices presets (compose policies with `all(...)`)",
                    name.node
                ));
            } else if !known.is_empty() {
                d = d.help(format!("known presets: {}", known.join(", ")));
            }
            self.report(d);
            return;
        };
        let preset = &self.modules[mm].file.presets[pi];
        let key = (mm, preset.name.node.clone());
        if let Some(pos) = stack.iter().position(|k| *k == key) {
            // Checking each preset finds the same cycle from each member:
            // report it once.
            let mut members: Vec<(usize, String)> = stack[pos..].to_vec();
            members.sort();
            if !self.reported_cycles.insert(members) {
                return;
            }
            let chain: Vec<String> = stack
                .iter()
                .map(|(_, n)| n.clone())
                .chain([key.1.clone()])
                .collect();
            self.report(
                Diagnostic::error(
                    "permc::use-cycle",
                    format!("preset `{}` uses itself", key.1),
                )
                .label(name.loc, "this `use` closes the cycle")
                .label(preset.name.loc, "preset defined here")
                .help(format!(
                    "the cycle is {}; remove one `use`",
                    chain.join(" -> ")
                )),
            );
            return;
        }
        stack.push(key);
        let mut inner_via = via.to_vec();
        inner_via.push(name.loc);
        let body = preset.body.clone();
        let was = self.mute;
        self.mute = was || self.mute_presets;
        self.splice(mm, &body, ws, stack, &inner_via, out, false);
        self.mute = was;
        stack.pop();
    }

    /// `grants "..."`: one allow rule per grant; every invalid entry is
    /// reported in one diagnostic, as AgentLane's parser collects them.
    fn grants(&mut self, text: &Node<String>, via: &[Loc], out: &mut Vec<ResolvedRule>) {
        let (grants, invalid) = super::grants::parse_grants(&text.node, &self.tools);
        if !invalid.is_empty() {
            let list: Vec<String> = invalid.iter().map(|e| format!("`{e}`")).collect();
            let mut known: Vec<String> = Vec::new();
            for t in &self.tools {
                known.push(t.name.clone());
            }
            self.report(
                Diagnostic::error("permc::invalid-grant", format!("unsupported tool grants: {}", list.join(", ")))
                    .label(text.loc, "in this grant list")
                    .help(format!(
                        "an entry is a declared tool (`read`) or tool:operation (`write:create_file`); declared tools: {}",
                        known.join(", ")
                    )),
            );
            return;
        }
        for g in grants {
            out.push(ResolvedRule {
                effect: Effect::Allow,
                tools: Some(vec![g.tool.clone()]),
                ops: Some(g.ops.clone()),
                matchers: Vec::new(),
                gate: false,
                name: None,
                reason: None,
                guidance: None,
                label: format!("grant:{}", g.entry),
                loc: text.loc,
                via: via.to_vec(),
            });
        }
    }

    fn resolve_tool_name(&self, m: usize, name: &Node<String>, quoted: bool) -> String {
        if quoted {
            return name.node.clone();
        }
        match self.module_of(m, &name.node) {
            Some((_, n)) if name.node.contains('.') => n.to_string(),
            _ => name.node.clone(),
        }
    }

    fn rule(&mut self, m: usize, r: &Rule, ws: &str, via: &[Loc]) -> Option<ResolvedRule> {
        let effect = r.effect.node;
        let mut ok = true;
        let (tools, ops, matchers, gate, generated) = match &r.target {
            Target::Tools(names) => {
                let tools: Vec<String> = names
                    .iter()
                    .map(|n| {
                        let quoted = self.is_quoted(n);
                        self.resolve_tool_name(m, n, quoted)
                    })
                    .collect();
                let label = format!("{effect}:tool {}", tools.join(","));
                (Some(tools), None, Vec::new(), false, label)
            }
            Target::Ops { ops, on, matchers } => {
                let mut op_names = Vec::new();
                for op in ops {
                    if !self.ops.contains_key(&op.node) {
                        ok = false;
                        let known: Vec<&str> = self.ops.keys().map(String::as_str).collect();
                        let mut d = Diagnostic::error(
                            "permc::unknown-operation",
                            format!("unknown operation `{}`", op.node),
                        )
                        .label(op.loc, "no declared tool has this operation");
                        d = d.help(did_you_mean(&op.node, known.iter().copied()).unwrap_or_else(|| {
                            let mut k = known.clone();
                            k.sort_unstable();
                            if k.is_empty() {
                                "no tool declares any operation; declare one, e.g. `tool file_read { read input.path }`, or match a whole tool with `tool NAME`".to_string()
                            } else {
                                format!("declared operations: {}; to match a whole tool write `tool NAME`", k.join(", "))
                            }
                        }));
                        self.report(d);
                    }
                    op_names.push(op.node.clone());
                }
                let tools = match on {
                    None => None,
                    Some(list) => {
                        let mut names = Vec::new();
                        for t in list {
                            let quoted = self.is_quoted(t);
                            let n = self.resolve_tool_name(m, t, quoted);
                            if n != "*" && !self.tool_index.contains_key(&n) {
                                ok = false;
                                let known: Vec<&str> =
                                    self.tool_index.keys().map(String::as_str).collect();
                                let mut d = Diagnostic::error(
                                    "permc::unknown-tool",
                                    format!("unknown tool `{n}`"),
                                )
                                .label(t.loc, "not declared");
                                let looks_like_pattern =
                                    quoted && (n.contains('/') || n.contains('*'));
                                d = d.help(did_you_mean(&n, known.iter().copied()).unwrap_or_else(|| {
                                    if looks_like_pattern {
                                        "this looks like a pattern: patterns follow the tool list without a comma, e.g. `on file_read \"**/.env\"`".to_string()
                                    } else {
                                        "`on` names declared tools; declare it with `tool NAME { ... }`, or match an undeclared tool with `tool NAME`".to_string()
                                    }
                                }));
                                self.report(d);
                            }
                            names.push(n);
                        }
                        Some(names)
                    }
                };
                if ok {
                    self.warn_unreachable_ops(r, &op_names, tools.as_deref());
                }
                let kinds = self.kinds_of(&op_names, tools.as_deref());
                let mut resolved = Vec::new();
                let mut gate = false;
                for mt in matchers {
                    match self.matcher(mt, ws, &kinds) {
                        Ok(Some(x)) => resolved.push(x),
                        Ok(None) => gate = true,
                        Err(()) => ok = false,
                    }
                }
                if gate && !resolved.is_empty() {
                    self.report(
                        Diagnostic::warning(
                            "permc::gate-with-patterns",
                            "this rule is a cwd gate, so its other matchers never run",
                        )
                        .label(r.loc, "a gate fires on the cwd alone")
                        .help("outside the workspace the gate decides without the patterns; inside it the rule is skipped. Put the patterns on a rule of their own"),
                    );
                }
                let first = matchers.first().map(|mt| match &mt.node {
                    Matcher::Glob { pattern, negated } => {
                        format!("{}{pattern}", if *negated { "!" } else { "" })
                    }
                    Matcher::Regex(re) => re.clone(),
                    Matcher::Prefix(p) => p.clone(),
                    Matcher::Scope { path, .. } => format!("scope {path}"),
                    Matcher::CwdOutsideWorkspace => "cwd outside workspace".to_string(),
                });
                let label = format!("{effect}:{}", first.unwrap_or_else(|| op_names.join(",")));
                (tools, Some(op_names), resolved, gate, label)
            }
        };
        if !ok {
            return None;
        }
        let name = r.name.as_ref().map(|n| n.node.clone());
        let reason = r.reason.as_ref().map(|n| n.node.clone());
        let label = name.clone().or_else(|| reason.clone()).unwrap_or(generated);
        Some(ResolvedRule {
            effect,
            tools,
            ops,
            matchers,
            gate,
            name,
            reason,
            guidance: r.guidance.as_ref().map(|n| n.node.clone()),
            label,
            loc: r.loc,
            via: via.to_vec(),
        })
    }

    fn is_quoted(&self, n: &Node<String>) -> bool {
        // A quoted name's source text starts with `"`; qualifiers apply only
        // to bare names.
        let _ = self;
        n.loc.end > n.loc.start && n.node.len() + 2 == (n.loc.end - n.loc.start) as usize
    }

    fn kinds_of(&self, ops: &[String], tools: Option<&[String]>) -> HashSet<OpKind> {
        let mut kinds = HashSet::new();
        for t in &self.tools {
            if let Some(ts) = tools {
                if !ts.iter().any(|x| x == "*" || *x == t.name) {
                    continue;
                }
            }
            for s in &t.stmts {
                if ops.contains(&s.op) {
                    kinds.insert(s.kind);
                }
            }
        }
        kinds
    }

    fn warn_unreachable_ops(&mut self, r: &Rule, ops: &[String], tools: Option<&[String]>) {
        let Some(tools) = tools else { return };
        for t in tools {
            let Some(&ti) = self.tool_index.get(t) else {
                continue;
            };
            let def = &self.tools[ti as usize];
            if !def.stmts.iter().any(|s| ops.contains(&s.op)) {
                let have: Vec<&str> = def.stmts.iter().map(|s| s.op.as_str()).collect();
                self.report(
                    Diagnostic::warning(
                        "permc::unreachable-rule",
                        format!(
                            "tool `{t}` has no `{}` operation, so this rule never matches it",
                            ops.join("`/`")
                        ),
                    )
                    .label(r.loc, "never matches this tool")
                    .help(format!(
                        "`{t}` produces: {}",
                        if have.is_empty() {
                            "only the bare tool item".into()
                        } else {
                            have.join(", ")
                        }
                    )),
                );
            }
        }
    }

    /// Checks one matcher against the kinds of item it will see. `Ok(None)`
    /// is the cwd gate, which is a flag on the rule rather than a matcher.
    fn matcher(
        &mut self,
        mt: &Node<Matcher>,
        ws: &str,
        kinds: &HashSet<OpKind>,
    ) -> Result<Option<ResolvedMatcher>, ()> {
        let has = |k| kinds.contains(&k);
        let loc = mt.loc;
        let mismatch = |what: &str, need: &str, help: &str| {
            Diagnostic::error("permc::matcher-kind", format!("{what} cannot match {need}"))
                .label(loc, "never matches")
                .help(help.to_string())
        };
        match &mt.node {
            Matcher::Glob { pattern, negated } => {
                if !has(OpKind::Path) && !kinds.is_empty() {
                    let d = mismatch(
                        "a glob pattern",
                        "the items of this rule: globs match paths, and these operations carry commands or nothing",
                        "match a command with `prefix \"git push\"` or a `/regex/`",
                    );
                    self.report(d);
                    return Err(());
                }
                let anchored = anchor_glob(pattern, ws);
                if let Some(why) = super::patterns::never_matches(&anchored) {
                    self.report(
                        Diagnostic::warning(
                            "permc::empty-matcher",
                            format!("glob `{pattern}` can never match"),
                        )
                        .label(loc, "matches no normalised path")
                        .help(format!(
                            "{why}; paths are made absolute and normalised before matching"
                        )),
                    );
                } else if super::patterns::partial_globstar(pattern) {
                    self.report(
                        Diagnostic::warning(
                            "permc::partial-globstar",
                            format!(
                                "`**` in `{pattern}` is not a whole path segment, so it acts as `*`"
                            ),
                        )
                        .label(loc, "stays inside one segment")
                        .help("write `**/` to span directories, e.g. `**/*.env`"),
                    );
                }
                match glob_regex(&anchored) {
                    Ok(regex) => Ok(Some(ResolvedMatcher::Glob {
                        source: pattern.clone(),
                        anchored,
                        regex,
                        negated: *negated,
                        loc,
                    })),
                    Err(e) => {
                        self.report(
                            Diagnostic::error("permc::invalid-glob", format!("invalid glob `{pattern}`: {e}"))
                                .label(loc, "invalid glob")
                                .help("globs support `*`, `**`, `?`, `[...]` and `{a,b}`; escape a literal with `\\\\`"),
                        );
                        Err(())
                    }
                }
            }
            Matcher::Regex(re) => {
                if !has(OpKind::Path) && !has(OpKind::Command) && !kinds.is_empty() {
                    self.report(mismatch(
                        "a regex",
                        "operations that carry no path or command",
                        "drop the regex to match every item, or name an operation with a subject",
                    ));
                    return Err(());
                }
                match check_regex(re) {
                    Ok(()) => Ok(Some(ResolvedMatcher::Regex {
                        source: re.clone(),
                        loc,
                    })),
                    Err(e) => {
                        let help = if e.starts_with("look-around") {
                            "permc regexes run in linear time, without look-around; express the exclusion as an earlier rule instead"
                        } else if e.starts_with("backreferences") {
                            "permc regexes run in linear time, without backreferences; spell the repeated text out"
                        } else {
                            "permc regexes use the syntax of Rust's `regex` crate; write a slash inside `/.../` as `\\/`"
                        };
                        self.report(
                            Diagnostic::error(
                                "permc::invalid-regex",
                                format!("invalid regex `{re}`: {e}"),
                            )
                            .label(loc, "invalid regex")
                            .help(help),
                        );
                        Err(())
                    }
                }
            }
            Matcher::Prefix(p) => {
                if !has(OpKind::Command) && !kinds.is_empty() {
                    self.report(mismatch(
                        "`prefix`",
                        "items that are not commands",
                        "use `prefix` with `exec` rules; match paths with a glob",
                    ));
                    return Err(());
                }
                let words = prefix_words(p);
                if words.is_empty() {
                    self.report(
                        Diagnostic::error("permc::empty-matcher", "`prefix \"\"` has no words")
                            .label(loc, "empty prefix")
                            .help("drop the matcher to match every command"),
                    );
                    return Err(());
                }
                Ok(Some(ResolvedMatcher::Prefix { words, loc }))
            }
            Matcher::Scope { path, kind } => {
                if !has(OpKind::Path) && !kinds.is_empty() {
                    self.report(mismatch(
                        "`scope`",
                        "items that are not paths",
                        "scopes bound path operations",
                    ));
                    return Err(());
                }
                let anchored = anchor_glob(path, ws);
                let Ok(mut abs) = crate::paths::normalize(&anchored, "/") else {
                    self.report(
                        Diagnostic::error(
                            "permc::invalid-scope",
                            format!("invalid scope `{path}`"),
                        )
                        .label(loc, "not a path")
                        .help("a scope is a path: a file or a directory"),
                    );
                    return Err(());
                };
                let kind = match kind {
                    Some(k) => Some(*k),
                    None if self.opts.real_fs => {
                        abs = crate::paths::resolve(&abs);
                        crate::paths::Filesystem::kind(&crate::paths::RealFs, &abs)
                    }
                    None => None,
                };
                // An existing directory admits its descendants; a file, or a
                // path that does not exist yet, only itself.
                let literal = globset::escape(&abs);
                let pattern = if kind == Some(crate::syntax::ast::FsKind::Dir) {
                    format!("{}/**", literal.trim_end_matches('/'))
                } else {
                    literal
                };
                match glob_regex(&pattern) {
                    Ok(regex) => Ok(Some(ResolvedMatcher::Glob {
                        source: format!("scope {path}"),
                        anchored: pattern,
                        regex,
                        negated: false,
                        loc,
                    })),
                    Err(e) => {
                        self.report(
                            Diagnostic::error(
                                "permc::invalid-scope",
                                format!("invalid scope `{path}`: {e}"),
                            )
                            .label(loc, "here"),
                        );
                        Err(())
                    }
                }
            }
            Matcher::CwdOutsideWorkspace => {
                if !has(OpKind::Command) && !kinds.is_empty() {
                    self.report(mismatch(
                        "`cwd outside workspace`",
                        "items without a working directory",
                        "cwd gates apply to `exec` rules",
                    ));
                    return Err(());
                }
                Ok(None)
            }
        }
    }

    /// Two rules of one policy with the same `as` name cannot be told apart
    /// in decisions, audit records or `by` expectations.
    fn check_rule_names(&mut self, policies: &[ResolvedPolicy]) {
        for p in policies {
            let PolicyBody::Rules(list) = &p.body else {
                continue;
            };
            let mut seen: HashMap<&str, &ResolvedRule> = HashMap::new();
            for r in &list.rules {
                let Some(name) = &r.name else { continue };
                match seen.get(name.as_str()) {
                    Some(prev) if prev.loc != r.loc => {
                        let d = Diagnostic::warning(
                            "permc::duplicate-rule-name",
                            format!("two rules of policy `{}` are named `{name}`", p.name),
                        )
                        .label(r.loc, "named again here")
                        .label(prev.loc, "first named here")
                        .help("give each rule its own name so decisions and audit records say which one fired");
                        self.report(d);
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(name, r);
                    }
                }
            }
        }
    }

    fn check_all_cycles(&mut self, policies: &[ResolvedPolicy]) {
        // Iterative DFS colouring over all(...) edges.
        let n = policies.len();
        let mut state = vec![0u8; n];
        for start in 0..n {
            if state[start] != 0 {
                continue;
            }
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            state[start] = 1;
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let children: &[u32] = match &policies[node].body {
                    PolicyBody::All(c) => c,
                    PolicyBody::Rules(_) => &[],
                };
                if *next < children.len() {
                    let child = children[*next] as usize;
                    *next += 1;
                    match state[child] {
                        0 => {
                            state[child] = 1;
                            stack.push((child, 0));
                        }
                        1 => {
                            self.report(
                                Diagnostic::error(
                                    "permc::all-cycle",
                                    format!(
                                        "policy `{}` includes itself through `all(...)`",
                                        policies[child].name
                                    ),
                                )
                                .label(policies[node].loc, "this composition closes the cycle")
                                .help(
                                    "a composition must not contain itself; remove one reference",
                                ),
                            );
                        }
                        _ => {}
                    }
                } else {
                    state[node] = 2;
                    stack.pop();
                }
            }
        }
    }
}

fn normalize_root(w: &str) -> String {
    crate::paths::normalize(w, "/").unwrap_or_else(|_| DEFAULT_WORKSPACE.to_string())
}
