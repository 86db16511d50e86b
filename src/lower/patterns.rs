//! Pattern normalisation: globs anchored at the workspace and turned into
//! regexes through globset; regexes checked with regex-syntax.

/// Anchors a glob at the workspace root, as written in the language manual:
/// `/workspace` and `/workspace/...` mean the root, absolute patterns stay,
/// patterns starting with `**` float, and every other relative pattern is
/// anchored at the root.
///
/// ```
/// use permc::lower::patterns::anchor_glob;
/// assert_eq!(anchor_glob("/workspace/**", "/home/u/p"), "/home/u/p/**");
/// assert_eq!(anchor_glob("src/*.rs", "/home/u/p"), "/home/u/p/src/*.rs");
/// assert_eq!(anchor_glob("**/.env", "/home/u/p"), "**/.env");
/// assert_eq!(anchor_glob("/etc/**", "/home/u/p"), "/etc/**");
/// ```
pub fn anchor_glob(pattern: &str, root: &str) -> String {
    if pattern == "/workspace" {
        return root.to_string();
    }
    if let Some(rest) = pattern.strip_prefix("/workspace/") {
        return join(root, rest);
    }
    if pattern.starts_with('/') || pattern.starts_with("**") {
        return pattern.to_string();
    }
    join(root, pattern)
}

fn join(root: &str, rest: &str) -> String {
    if root.ends_with('/') {
        format!("{root}{rest}")
    } else {
        format!("{root}/{rest}")
    }
}

/// Builds the regex for an anchored glob with picomatch `dot: true` semantics:
/// `*` and `?` stay inside one path segment, `**` spans segments, dotfiles
/// match like any name, `dir/**` also matches `dir` itself, case-sensitive.
/// The regex matches the whole path.
///
/// ```
/// use permc::lower::patterns::glob_regex;
/// let re = regex::bytes::Regex::new(&glob_regex("/w/**").unwrap()).unwrap();
/// assert!(re.is_match(b"/w") && re.is_match(b"/w/.env") && !re.is_match(b"/w2"));
/// assert!(glob_regex("/w/[").is_err());
/// ```
pub fn glob_regex(anchored: &str) -> Result<String, String> {
    let one = |p: &str| -> Result<String, String> {
        globset::GlobBuilder::new(p)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map(|g| g.regex().to_string())
            .map_err(|e| e.kind().to_string())
    };
    let main = one(anchored)?;
    // picomatch: `dir/**` matches `dir` too; globset only its descendants.
    let re = match anchored.strip_suffix("/**") {
        Some(dir) if !dir.is_empty() && !dir.ends_with('/') => {
            format!("(?:{main})|(?:{})", one(dir)?)
        }
        _ => main,
    };
    // globset's `**` is `.*`; a file name may hold a newline, and `.` must
    // cross it as globset's own matcher does, or `/a\nb` escapes `**`.
    Ok(format!("(?s:{re})"))
}

/// Checks a user regex and names the unsupported construct when it fails.
pub fn check_regex(re: &str) -> Result<(), String> {
    use regex_syntax::ast::ErrorKind;
    match regex_syntax::ast::parse::Parser::new().parse(re) {
        Ok(_) => {}
        Err(e) => {
            return Err(match e.kind() {
                ErrorKind::UnsupportedLookAround => {
                    "look-around (`(?=`, `(?!`, `(?<=`, `(?<!`) is not supported".to_string()
                }
                ErrorKind::UnsupportedBackreference => {
                    "backreferences are not supported".to_string()
                }
                k => k.to_string(),
            });
        }
    }
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(re)
        .map(|_| ())
        .map_err(|e| match e {
            regex_syntax::Error::Translate(t) => t.kind().to_string(),
            other => other.to_string(),
        })
}

/// The words of a `prefix "..."` matcher.
pub fn prefix_words(prefix: &str) -> Vec<String> {
    prefix.split_whitespace().map(str::to_string).collect()
}

/// Why an anchored glob can never match a normalised absolute path, if it
/// cannot: paths reach the matcher without `.`, `..`, `//` or a trailing
/// slash, and always start with `/`.
///
/// ```
/// use permc::lower::patterns::never_matches;
/// assert!(never_matches("/w/./docs/**").is_some());
/// assert!(never_matches("/w/docs/").is_some());
/// assert!(never_matches("/w/docs/**").is_none());
/// ```
pub fn never_matches(anchored: &str) -> Option<&'static str> {
    let segs: Vec<&str> = anchored.split('/').collect();
    if anchored.len() > 1 && anchored.ends_with('/') {
        return Some("it ends with `/`, and normalised paths never do");
    }
    if segs.iter().skip(1).any(|s| s.is_empty()) {
        return Some("it contains `//`, and normalised paths never do");
    }
    if segs.iter().any(|s| *s == "." || *s == "..") {
        return Some("it contains a `.` or `..` segment, and normalised paths never do");
    }
    if !anchored.starts_with('/') && !anchored.starts_with("**") && !anchored.starts_with('{') {
        return Some("it is not absolute, and paths are matched in absolute form");
    }
    None
}

/// `**` that is not a whole path segment acts as `*` in globset and in
/// picomatch alike, which is rarely what the author meant.
pub fn partial_globstar(pattern: &str) -> bool {
    pattern
        .split('/')
        .any(|seg| seg.contains("**") && seg != "**")
}
