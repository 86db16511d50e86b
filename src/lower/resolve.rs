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
}

pub(super) fn resolve(modules: &[Module], opts: &LowerOptions, diags: &mut Vec<Diagnostic>) -> Lowered {
    let mut cx = Ctx {
        modules,
        opts,
        diags,
        tools: Vec::new(),
        tool_index: HashMap::new(),
        ops: HashMap::new(),
        policy_ids: HashMap::new(),
    };
    cx.collect_tools();
    cx.check_duplicate_names();

    // Number every policy first so `all(...)` can refer forward.
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (m, module) in modules.iter().enumerate() {
        for (p, pol) in module.file.policies.iter().enumerate() {
            let id = order.len() as u32;
            cx.policy_ids.entry((m, pol.name.node.clone())).or_insert(id);
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
                PolicyBody::All(names.iter().filter_map(|n| cx.lookup_policy(m, n)).collect())
            }
        };
        policies.push(ResolvedPolicy { name, loc: pol.loc, body });
    }
    cx.check_all_cycles(&policies);

    // A test block is named after the policy it tests.
    if let Some(root) = modules.first() {
        for t in &root.file.tests {
            cx.lookup_policy(0, &t.name);
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
        tests: modules.first().map(|m| m.file.tests.clone()).unwrap_or_default(),
        root_policies,
        warnings: Vec::new(),
    }
}

fn qualify(module: &str, name: &str) -> String {
    if module.is_empty() { name.to_string() } else { format!("{module}.{name}") }
}

impl Ctx<'_> {
    fn collect_tools(&mut self) {
        let mut first_loc: HashMap<String, Loc> = HashMap::new();
        for module in self.modules {
            for decl in &module.file.tools {
                let name = decl.name.node.clone();
                if let Some(prev) = first_loc.get(&name) {
                    self.diags.push(
                        Diagnostic::error("permc::duplicate-name", format!("tool `{name}` is declared twice"))
                            .label(decl.name.loc, "declared again here")
                            .label(*prev, "first declared here")
                            .help("a tool has one declaration; merge the two into one `tool` block"),
                    );
                    continue;
                }
                first_loc.insert(name.clone(), decl.name.loc);
                let stmts = decl.stmts.iter().filter_map(|s| self.tool_stmt(&name, s)).collect();
                self.tool_index.insert(name.clone(), self.tools.len() as u32);
                self.tools.push(ToolDef { name, stmts, loc: decl.loc });
            }
        }
    }

    fn tool_stmt(&mut self, tool: &str, s: &Node<crate::syntax::ast::ToolStmt>) -> Option<ToolStmtDef> {
        let op = s.op.node.clone();
        let kind = if op == "exec" {
            OpKind::Command
        } else if s.field.is_some() {
            OpKind::Path
        } else {
            OpKind::Bare
        };
        let mut ok = true;
        if kind == OpKind::Command && s.field.is_none() {
            self.diags.push(
                Diagnostic::error("permc::tool-decl", format!("`exec` in tool `{tool}` names no input field"))
                    .label(s.loc, "which field holds the command?")
                    .help("write e.g. `exec input.command`"),
            );
            ok = false;
        }
        if let (Some(split), None) = (&s.split, &s.field) {
            self.diags.push(
                Diagnostic::error("permc::tool-decl", "`split` needs an input field to split")
                    .label(split.loc, "nothing to split"),
            );
            ok = false;
        }
        if let Some(split) = &s.split {
            if split.node.is_empty() {
                self.diags.push(
                    Diagnostic::error("permc::tool-decl", "`split` needs a non-empty separator")
                        .label(split.loc, "empty separator"),
                );
                ok = false;
            }
        }
        if let (Some(cwd), false) = (&s.cwd, kind == OpKind::Command) {
            self.diags.push(
                Diagnostic::error("permc::tool-decl", "`cwd` applies only to `exec` statements")
                    .label(cwd.loc, "the working directory of what command?"),
            );
            ok = false;
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
                    self.diags.push(
                        Diagnostic::error("permc::duplicate-name", format!("`{}` is defined twice", n.node))
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
        if let Some((mm, n)) = self.module_of(m, &name.node) {
            if let Some(&id) = self.policy_ids.get(&(mm, n.to_string())) {
                return Some(id);
            }
        }
        let known: Vec<String> = self.modules[m].file.policies.iter().map(|p| p.name.node.clone()).collect();
        let mut d = Diagnostic::error("permc::unknown-policy", format!("unknown policy `{}`", name.node))
            .label(name.loc, "no policy has this name");
        if let Some(h) = did_you_mean(&name.node, known.iter().map(String::as_str)) {
            d = d.help(h);
        } else if self.modules[m].file.presets.iter().any(|p| p.name.node == name.node) {
            d = d.help(format!("`{}` is a preset; `all(...)` combines policies", name.node));
        }
        self.diags.push(d);
        None
    }

    fn policy_body(&mut self, m: usize, stmts: &[Node<Stmt>]) -> RuleList {
        let mut workspace: Option<&Node<String>> = None;
        let mut combine: Option<&Node<Combine>> = None;
        let mut default: Option<&Node<Effect>> = None;
        for s in stmts {
            let (slot_loc, what) = match &s.node {
                Stmt::Workspace(w) => (workspace.replace(w).map(|p| p.loc), "workspace"),
                Stmt::Combine(c) => (combine.replace(c).map(|p| p.loc), "combine"),
                Stmt::Default(d) => (default.replace(d).map(|p| p.loc), "default"),
                _ => (None, ""),
            };
            if let Some(prev) = slot_loc {
                self.diags.push(
                    Diagnostic::error("permc::duplicate-setting", format!("`{what}` is set twice in one policy"))
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
                    self.diags.push(
                        Diagnostic::error("permc::workspace", format!("workspace `{}` is not an absolute path", w.node))
                            .label(w.loc, "relative")
                            .help("write the root as an absolute path, e.g. `workspace \"/home/user/project\"`"),
                    );
                }
                normalize_root(&w.node)
            }
            (None, None) => DEFAULT_WORKSPACE.to_string(),
        };
        if self.opts.resolve_workspace {
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
                Stmt::Workspace(_) | Stmt::Combine(_) | Stmt::Default(_) if !in_policy => {
                    self.diags.push(
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
            self.modules[mm].file.presets.iter().position(|p| p.name.node == n).map(|i| (mm, i))
        });
        let Some((mm, pi)) = found else {
            let mut known: Vec<String> = self.modules[m].file.presets.iter().map(|p| p.name.node.clone()).collect();
            for (alias, &im) in &self.modules[m].imports {
                known.extend(self.modules[im].file.presets.iter().map(|p| format!("{alias}.{}", p.name.node)));
            }
            let mut d = Diagnostic::error("permc::unknown-preset", format!("unknown preset `{}`", name.node))
                .label(name.loc, "no preset has this name");
            if let Some(h) = did_you_mean(&name.node, known.iter().map(String::as_str)) {
                d = d.help(h);
            } else if self.modules[m].file.policies.iter().any(|p| p.name.node == name.node) {
                d = d.help(format!("`{}` is a policy; `use` splices presets (compose policies with `all(...)`)", name.node));
            } else if !known.is_empty() {
                d = d.help(format!("known presets: {}", known.join(", ")));
            }
            self.diags.push(d);
            return;
        };
        let preset = &self.modules[mm].file.presets[pi];
        let key = (mm, preset.name.node.clone());
        if stack.contains(&key) {
            let chain: Vec<String> = stack.iter().map(|(_, n)| n.clone()).chain([key.1.clone()]).collect();
            self.diags.push(
                Diagnostic::error("permc::use-cycle", format!("preset `{}` uses itself", key.1))
                    .label(name.loc, "this `use` closes the cycle")
                    .label(preset.name.loc, "preset defined here")
                    .help(format!("the cycle is {}; remove one `use`", chain.join(" -> "))),
            );
            return;
        }
        stack.push(key);
        let mut inner_via = via.to_vec();
        inner_via.push(name.loc);
        let body = preset.body.clone();
        self.splice(mm, &body, ws, stack, &inner_via, out, false);
        stack.pop();
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
                        let mut d = Diagnostic::error("permc::unknown-operation", format!("unknown operation `{}`", op.node))
                            .label(op.loc, "no declared tool has this operation");
                        d = d.help(did_you_mean(&op.node, known.iter().copied()).unwrap_or_else(|| {
                            let mut k = known.clone();
                            k.sort_unstable();
                            format!("declared operations: {}; to match a whole tool write `tool NAME`", k.join(", "))
                        }));
                        self.diags.push(d);
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
                                let known: Vec<&str> = self.tool_index.keys().map(String::as_str).collect();
                                let mut d = Diagnostic::error("permc::unknown-tool", format!("unknown tool `{n}`"))
                                    .label(t.loc, "not declared");
                                d = d.help(did_you_mean(&n, known.iter().copied()).unwrap_or_else(|| {
                                    "`on` names declared tools; declare it with `tool NAME { ... }`, or match an undeclared tool with `tool NAME`".to_string()
                                }));
                                self.diags.push(d);
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
                let first = matchers.first().map(|mt| match &mt.node {
                    Matcher::Glob { pattern, negated } => format!("{}{pattern}", if *negated { "!" } else { "" }),
                    Matcher::Regex(re) => re.clone(),
                    Matcher::Prefix(p) => p.clone(),
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
            let Some(&ti) = self.tool_index.get(t) else { continue };
            let def = &self.tools[ti as usize];
            if !def.stmts.iter().any(|s| ops.contains(&s.op)) {
                let have: Vec<&str> = def.stmts.iter().map(|s| s.op.as_str()).collect();
                self.diags.push(
                    Diagnostic::warning(
                        "permc::unreachable-rule",
                        format!("tool `{t}` has no `{}` operation, so this rule never matches it", ops.join("`/`")),
                    )
                    .label(r.loc, "never matches this tool")
                    .help(format!("`{t}` produces: {}", if have.is_empty() { "only the bare tool item".into() } else { have.join(", ") })),
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
                    self.diags.push(d);
                    return Err(());
                }
                let anchored = anchor_glob(pattern, ws);
                match glob_regex(&anchored) {
                    Ok(regex) => Ok(Some(ResolvedMatcher::Glob {
                        source: pattern.clone(),
                        anchored,
                        regex,
                        negated: *negated,
                        loc,
                    })),
                    Err(e) => {
                        self.diags.push(
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
                    self.diags.push(mismatch("a regex", "operations that carry no path or command", "drop the regex to match every item, or name an operation with a subject"));
                    return Err(());
                }
                match check_regex(re) {
                    Ok(()) => Ok(Some(ResolvedMatcher::Regex { source: re.clone(), loc })),
                    Err(e) => {
                        self.diags.push(
                            Diagnostic::error("permc::invalid-regex", format!("invalid regex `{re}`: {e}"))
                                .label(loc, "invalid regex")
                                .help("permc regexes use the syntax of Rust's `regex` crate and run in linear time; rewrite look-around as separate rules"),
                        );
                        Err(())
                    }
                }
            }
            Matcher::Prefix(p) => {
                if !has(OpKind::Command) {
                    self.diags.push(mismatch("`prefix`", "items that are not commands", "use `prefix` with `exec` rules; match paths with a glob"));
                    return Err(());
                }
                let words = prefix_words(p);
                if words.is_empty() {
                    self.diags.push(
                        Diagnostic::error("permc::empty-matcher", "`prefix \"\"` has no words")
                            .label(loc, "empty prefix")
                            .help("drop the matcher to match every command"),
                    );
                    return Err(());
                }
                Ok(Some(ResolvedMatcher::Prefix { words, loc }))
            }
            Matcher::CwdOutsideWorkspace => {
                if !has(OpKind::Command) {
                    self.diags.push(mismatch("`cwd outside workspace`", "items without a working directory", "cwd gates apply to `exec` rules"));
                    return Err(());
                }
                Ok(None)
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
                            self.diags.push(
                                Diagnostic::error("permc::all-cycle", format!("policy `{}` includes itself through `all(...)`", policies[child].name))
                                    .label(policies[node].loc, "this composition closes the cycle")
                                    .help("a composition must not contain itself; remove one reference"),
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
