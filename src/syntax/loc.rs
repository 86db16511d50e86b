//! Source locations. Every AST node is a [`Node<T>`] that knows where it came
//! from, so diagnostics, explain traces and lints can point at user text.

use std::sync::Arc;

/// Index of a source file in a [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte span in one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Loc {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Loc {
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        // Sources are capped well below 4 GiB when loaded, so these fit.
        Loc {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The span as miette wants it.
    pub fn span(&self) -> miette::SourceSpan {
        (self.start as usize, (self.end - self.start) as usize).into()
    }
}

/// A value with the location of the source text it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node<T> {
    pub node: T,
    pub loc: Loc,
}

impl<T> Node<T> {
    pub fn new(node: T, loc: Loc) -> Self {
        Node { node, loc }
    }
}

impl<T> std::ops::Deref for Node<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.node
    }
}

/// One loaded source file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The name shown in diagnostics (a path, or `<std>/elsai.perm`).
    pub name: String,
    pub text: Arc<str>,
}

/// All source files of one compilation, indexed by [`FileId`].
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> Self {
        SourceMap::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        self.files.push(SourceFile {
            name: name.into(),
            text: text.into(),
        });
        FileId((self.files.len() - 1) as u32)
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// 1-based line and column of a location's start.
    pub fn line_col(&self, loc: Loc) -> (usize, usize) {
        let Some(file) = self.get(loc.file) else {
            return (0, 0);
        };
        let upto = &file.text[..(loc.start as usize).min(file.text.len())];
        let line = upto.matches('\n').count() + 1;
        let col = upto.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// The source text a location covers.
    pub fn snippet(&self, loc: Loc) -> &str {
        self.get(loc.file)
            .and_then(|f| f.text.get(loc.start as usize..loc.end as usize))
            .unwrap_or("")
    }
}
