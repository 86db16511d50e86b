//! Diagnostics: one type for every parse, compile and lint finding, rendered
//! with miette.
//!
//! Message style (as in cedar): lowercase, no trailing period, user input in
//! backticks, advice in `help`. Every error is collected; no stage stops at
//! the first one.

use crate::syntax::loc::{Loc, SourceMap};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// One finding, pointing into the sources.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable code such as `permc::unknown-preset`.
    pub code: &'static str,
    pub message: String,
    /// The primary location and its label, then secondary ones.
    pub labels: Vec<(Loc, String)>,
    pub help: Option<String>,
    /// An example input that shows the finding (lints).
    pub witness: Option<String>,
}

impl Diagnostic {
    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: Vec::new(),
            help: None,
            witness: None,
        }
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    pub fn label(mut self, loc: Loc, text: impl Into<String>) -> Self {
        self.labels.push((loc, text.into()));
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn witness(mut self, witness: impl Into<String>) -> Self {
        self.witness = Some(witness.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The primary location, if the finding has one.
    pub fn loc(&self) -> Option<Loc> {
        self.labels.first().map(|(l, _)| *l)
    }

    /// Renders with source snippets. `color` false gives stable text for
    /// snapshots and pipes.
    pub fn render(&self, sources: &SourceMap, color: bool) -> String {
        let named = self.loc().and_then(|l| sources.get(l.file)).map(|f| {
            miette::NamedSource::new(f.name.clone(), f.text.clone()).with_language("perm")
        });
        let report = Rendered {
            diag: self,
            sources,
            named,
        };
        let handler = if color {
            miette::GraphicalReportHandler::new()
        } else {
            miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        };
        let mut out = String::new();
        if handler
            .with_width(100)
            .render_report(&mut out, &report)
            .is_err()
        {
            out = format!("{}: {}", self.code, self.message);
        }
        out
    }

    /// The finding as JSON for editors and CI.
    pub fn to_json(&self, sources: &SourceMap) -> serde_json::Value {
        let (file, line, column) = match self.loc() {
            Some(loc) => {
                let (l, c) = sources.line_col(loc);
                let name = sources
                    .get(loc.file)
                    .map(|f| f.name.clone())
                    .unwrap_or_default();
                (Some(name), Some(l), Some(c))
            }
            None => (None, None, None),
        };
        serde_json::json!({
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": file,
            "line": line,
            "column": column,
            "help": self.help,
            "witness": self.witness,
        })
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Adapter that gives miette the diagnostic plus the source file of its
/// primary label. Labels in other files are folded into the help text, since a
/// miette report shows one source.
struct Rendered<'a> {
    diag: &'a Diagnostic,
    sources: &'a SourceMap,
    named: Option<miette::NamedSource<std::sync::Arc<str>>>,
}

impl fmt::Debug for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.diag, f)
    }
}

impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diag.message)
    }
}

impl std::error::Error for Rendered<'_> {}

impl miette::Diagnostic for Rendered<'_> {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.diag.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        let primary = self.diag.loc().map(|l| l.file);
        let mut parts: Vec<String> = Vec::new();
        for (loc, text) in &self.diag.labels {
            if Some(loc.file) != primary {
                let (line, col) = self.sources.line_col(*loc);
                let name = self.sources.get(loc.file).map_or("?", |f| f.name.as_str());
                parts.push(format!("{text} (at {name}:{line}:{col})"));
            }
        }
        if let Some(w) = &self.diag.witness {
            parts.push(format!("for example: {w}"));
        }
        if let Some(h) = &self.diag.help {
            parts.push(h.clone());
        }
        if parts.is_empty() {
            None
        } else {
            Some(Box::new(parts.join("\n")))
        }
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.named.as_ref().map(|n| n as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let primary = self.diag.loc()?.file;
        let labels = self
            .diag
            .labels
            .iter()
            .filter(move |(l, _)| l.file == primary)
            .map(|(l, t)| miette::LabeledSpan::new_with_span(Some(t.clone()), l.span()));
        Some(Box::new(labels))
    }
}

/// Suggests the closest known name for a misspelt one.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    known
        .into_iter()
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!("did you mean `{k}`?"))
}

/// Renders a list of diagnostics, one after another.
pub fn render_all(diags: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    diags
        .iter()
        .map(|d| d.render(sources, color))
        .collect::<Vec<_>>()
        .join("\n")
}
