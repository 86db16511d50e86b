//! Path normalisation (pure) and the filesystem resolver (impure).
//!
//! The evaluator only ever sees normalised absolute paths. The resolver, on by
//! default in the CLI, additionally follows symlinks through the nearest
//! existing ancestor, so a link cannot smuggle a path out of a scope.

use std::path::{Component, Path, PathBuf};

/// Why a path cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path contains a NUL byte")]
    Nul,
    #[error("path is empty")]
    Empty,
}

/// Makes `path` absolute against `base` (itself absolute) and removes `.`,
/// `..` and repeated slashes. `..` at the root stays at the root, as the kernel
/// does.
///
/// ```
/// use permc::paths::normalize;
/// assert_eq!(normalize("src/../.env", "/w").unwrap(), "/w/.env");
/// assert_eq!(normalize("//etc/./passwd", "/w").unwrap(), "/etc/passwd");
/// assert!(normalize("a\0b", "/w").is_err());
/// ```
pub fn normalize(path: &str, base: &str) -> Result<String, PathError> {
    if path.contains('\0') || base.contains('\0') {
        return Err(PathError::Nul);
    }
    if path.is_empty() {
        return Err(PathError::Empty);
    }
    let mut parts: Vec<&str> = Vec::new();
    let joined_base = if path.starts_with('/') { "" } else { base };
    for seg in joined_base.split('/').chain(path.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let mut out = String::with_capacity(path.len() + base.len() + 1);
    for p in &parts {
        out.push('/');
        out.push_str(p);
    }
    if out.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// True when `path` is `root` or inside it, by whole components: `/w2` is not
/// inside `/w`. Both must be normalised.
///
/// ```
/// use permc::paths::is_within;
/// assert!(is_within("/w/a", "/w"));
/// assert!(is_within("/w", "/w"));
/// assert!(!is_within("/w2", "/w"));
/// ```
pub fn is_within(path: &str, root: &str) -> bool {
    if root == "/" {
        return path.starts_with('/');
    }
    match path.strip_prefix(root) {
        Some(rest) => rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

/// Resolves a normalised absolute path against the filesystem: the longest
/// existing ancestor is canonicalised (following every symlink), and the
/// not-yet-existing rest is appended. A dangling symlink is resolved through
/// its target, so a link to a missing file outside a scope is still outside.
///
/// Errors reading the filesystem leave the remaining components as written.
/// This is not TOCTOU-safe; it is the same boundary AgentLane documents.
pub fn resolve(path: &str) -> String {
    resolve_depth(Path::new(path), 0)
}

fn resolve_depth(path: &Path, depth: u32) -> String {
    // Symlink loops: the kernel gives up after 40 hops; so do we.
    if depth > 40 {
        return path.to_string_lossy().into_owned();
    }
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        if let Ok(meta) = std::fs::symlink_metadata(&existing) {
            if meta.file_type().is_symlink() && std::fs::metadata(&existing).is_err() {
                // Dangling link: follow its target by hand.
                if let Ok(target) = std::fs::read_link(&existing) {
                    let parent = existing.parent().unwrap_or(Path::new("/"));
                    let mut next = parent.join(target);
                    for r in rest.iter().rev() {
                        next.push(r);
                    }
                    let lexical = lexical(&next);
                    return resolve_depth(Path::new(&lexical), depth + 1);
                }
            }
            if let Ok(canon) = std::fs::canonicalize(&existing) {
                let mut out = canon;
                for r in rest.iter().rev() {
                    out.push(r);
                }
                return lexical(&out);
            }
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent.to_path_buf();
            }
            _ => return path.to_string_lossy().into_owned(),
        }
    }
}

/// Lexical normalisation of an OS path (after a join that may add `..`).
fn lexical(p: &Path) -> String {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
            _ => {}
        }
    }
    out.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_table() {
        let cases = [
            ("a/b", "/w", "/w/a/b"),
            ("./a", "/w", "/w/a"),
            ("a/../../..", "/w", "/"),
            ("/x//y/", "/w", "/x/y"),
            ("/", "/w", "/"),
            ("..", "/", "/"),
            (".env", "/home/user/project", "/home/user/project/.env"),
            ("a/./b/../c", "/", "/a/c"),
        ];
        for (p, base, want) in cases {
            assert_eq!(
                normalize(p, base).unwrap(),
                want,
                "normalize({p:?}, {base:?})"
            );
        }
        assert_eq!(normalize("", "/w"), Err(PathError::Empty));
        assert_eq!(normalize("x\0", "/w"), Err(PathError::Nul));
    }

    #[test]
    fn within_is_by_component() {
        assert!(is_within("/", "/"));
        assert!(is_within("/a", "/"));
        assert!(!is_within("/ab", "/a"));
        assert!(is_within("/a/b", "/a"));
    }

    #[cfg(unix)]
    #[test]
    fn resolver_follows_links_out_of_a_root() {
        let dir = std::env::temp_dir().join(format!("permc-paths-{}", std::process::id()));
        let ws = dir.join("ws");
        let out = dir.join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let link = ws.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&out, &link).unwrap();
        let dangling = ws.join("dangling");
        let _ = std::fs::remove_file(&dangling);
        std::os::unix::fs::symlink(out.join("missing.txt"), &dangling).unwrap();
        let canon_out = std::fs::canonicalize(&out).unwrap();
        let got = resolve(&format!("{}/new/file.txt", link.display()));
        assert_eq!(got, format!("{}/new/file.txt", canon_out.display()));
        let got = resolve(&dangling.to_string_lossy());
        assert_eq!(got, format!("{}/missing.txt", canon_out.display()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// What the evaluator may learn from the filesystem. [`Logical`] knows
/// nothing (paths are matched as written; test blocks use it), [`RealFs`]
/// asks the machine, and [`FakeFs`] answers from lists (for tests).
pub trait Filesystem: Sync {
    /// What a normalised path really names (symlinks followed).
    fn resolve(&self, path: &str) -> String;
    /// What is at a path, if anything.
    fn kind(&self, path: &str) -> Option<crate::syntax::ast::FsKind>;
    /// The existing paths an absolute glob matches, sorted; empty when none
    /// (or when this filesystem cannot look).
    fn glob(&self, pattern: &str) -> Vec<String>;
}

/// No filesystem: nothing exists, nothing resolves, globs expand to nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Logical;

impl Filesystem for Logical {
    fn resolve(&self, path: &str) -> String {
        path.to_string()
    }
    fn kind(&self, _: &str) -> Option<crate::syntax::ast::FsKind> {
        None
    }
    fn glob(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
}

/// The machine's filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

/// Caps on glob expansion, so a hostile `**` cannot walk the whole disk.
const GLOB_MAX_ENTRIES: usize = 20_000;
const GLOB_MAX_DEPTH: usize = 32;

impl Filesystem for RealFs {
    fn resolve(&self, path: &str) -> String {
        resolve(path)
    }
    fn kind(&self, path: &str) -> Option<crate::syntax::ast::FsKind> {
        use crate::syntax::ast::FsKind;
        let meta = std::fs::metadata(path).ok()?;
        Some(if meta.is_dir() {
            FsKind::Dir
        } else if meta.is_file() {
            FsKind::File
        } else {
            FsKind::Exists
        })
    }
    fn glob(&self, pattern: &str) -> Vec<String> {
        let Some(matcher) = glob_matcher(pattern) else {
            return Vec::new();
        };
        // Walk from the longest literal directory prefix of the pattern.
        let mut root = String::from("/");
        for seg in pattern.split('/').filter(|s| !s.is_empty()) {
            if seg.contains(['*', '?', '[', '{']) {
                break;
            }
            root = if root == "/" {
                format!("/{seg}")
            } else {
                format!("{root}/{seg}")
            };
        }
        let mut out = Vec::new();
        let mut stack = vec![(PathBuf::from(&root), 0usize)];
        let mut seen = 0usize;
        if matcher.is_match(&root) {
            out.push(root.clone());
        }
        while let Some((dir, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                seen += 1;
                if seen > GLOB_MAX_ENTRIES {
                    break;
                }
                let p = e.path();
                let s = p.to_string_lossy().into_owned();
                if matcher.is_match(&s) {
                    out.push(s);
                }
                // Never follow directory symlinks while walking: no loops.
                if depth < GLOB_MAX_DEPTH && e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push((p, depth + 1));
                }
            }
        }
        out.sort();
        out
    }
}

/// A filesystem made of lists, for tests and test blocks.
#[derive(Debug, Clone, Default)]
pub struct FakeFs {
    pub files: Vec<String>,
    pub dirs: Vec<String>,
}

impl Filesystem for FakeFs {
    fn resolve(&self, path: &str) -> String {
        path.to_string()
    }
    fn kind(&self, path: &str) -> Option<crate::syntax::ast::FsKind> {
        use crate::syntax::ast::FsKind;
        if self.dirs.iter().any(|d| d == path) || path == "/" {
            Some(FsKind::Dir)
        } else if self.files.iter().any(|f| f == path) {
            Some(FsKind::File)
        } else if self
            .files
            .iter()
            .chain(&self.dirs)
            .any(|p| is_within(p, path))
        {
            // A listed path's ancestors exist as directories.
            Some(FsKind::Dir)
        } else {
            None
        }
    }
    fn glob(&self, pattern: &str) -> Vec<String> {
        let Some(m) = glob_matcher(pattern) else {
            return Vec::new();
        };
        let mut out: Vec<String> = self
            .files
            .iter()
            .chain(&self.dirs)
            .filter(|p| m.is_match(p))
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// True when a path input is a glob to expand.
pub fn is_glob(path: &str) -> bool {
    path.contains(['*', '?', '[', '{'])
}

fn glob_matcher(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

/// The parent of a normalised absolute path (`/` for `/`).
pub fn parent(path: &str) -> String {
    match path.rfind('/') {
        Some(0) | None => "/".to_string(),
        Some(i) => path[..i].to_string(),
    }
}
