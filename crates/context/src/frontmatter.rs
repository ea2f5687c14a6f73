//! Front matter of instruction files, and the `paths:` rules it declares.
//!
//! A file that starts with a `---` line and has a later `---` line has front
//! matter. It is parsed as YAML with gray_matter and removed from the injected
//! text; the body is taken from the source by offset, so a file's line endings
//! and final newline survive (gray_matter's own `content` re-joins lines).
//! Like Claude Code, a value YAML rejects because of a special character
//! (`paths: **/*.ts` reads as an alias) is retried quoted. If it still does
//! not parse, the caller gets an error to warn about and the file is injected
//! with its front matter left in place, and no `paths:` (so a rule with broken
//! front matter is unconditional: better seen than silently lost).
//!
//! `paths:` is a string (comma-separated outside braces) or a list of them;
//! braces are expanded (`src/*.{ts,tsx}` is two patterns), a trailing `/**` is
//! dropped (gitignore's `dir` already covers everything inside) and a list of
//! only `**` means "every path", i.e. no condition. Patterns match with
//! gitignore semantics (the `ignore` crate) against a path relative to a base
//! directory; a path outside the base never matches.

use std::path::Path;

use gray_matter::engine::YAML;
use gray_matter::{Matter, ParsedEntity, Pod};
use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// At most this many patterns come out of one brace expansion; beyond it the
/// pattern is kept as written (the glob engine understands braces too).
const MAX_BRACE_RESULTS: usize = 1000;

/// What the front matter of one file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatter {
    /// Byte offset in the source where the body starts (0: no front matter,
    /// or front matter that could not be parsed).
    pub body_start: usize,
    /// The `paths:` patterns after splitting and expansion; `None` when the
    /// file is unconditional.
    pub paths: Option<Vec<String>>,
    /// Why the front matter could not be parsed, when it could not.
    pub error: Option<String>,
}

impl FrontMatter {
    fn none() -> Self {
        FrontMatter {
            body_start: 0,
            paths: None,
            error: None,
        }
    }
}

/// Finds, parses and measures the front matter of `text`.
pub fn parse(text: &str) -> FrontMatter {
    let Some((yaml, body_start)) = locate(text) else {
        return FrontMatter::none();
    };
    let data = match parse_yaml(yaml) {
        Ok(data) => data,
        Err(first) => match parse_yaml(&quote_values(yaml, false)) {
            Ok(data) => data,
            Err(_) => {
                return FrontMatter {
                    error: Some(first),
                    ..FrontMatter::none()
                }
            }
        },
    };
    let paths_of = |data: Option<Pod>| match data {
        Some(Pod::Hash(mut map)) => map.remove("paths"),
        _ => None,
    };
    let paths = match paths_of(data) {
        // YAML reads `paths: 2024` or `- 1.50` as a number and
        // `paths: {src,lib}` as a mapping, but a glob is text as written:
        // read the block again with plain values quoted.
        Some(pod) if not_text(&pod) => parse_yaml(&quote_values(yaml, true))
            .ok()
            .and_then(paths_of)
            .and_then(|p| paths_from_pod(&p))
            .or_else(|| paths_from_pod(&pod)),
        Some(pod) => paths_from_pod(&pod),
        None => None,
    };
    FrontMatter {
        body_start,
        paths,
        error: None,
    }
}

/// The YAML between the delimiters and the offset just past the closing
/// delimiter line, when `text` opens with front matter.
fn locate(text: &str) -> Option<(&str, usize)> {
    let first_end = text.find('\n')?;
    if text[..first_end].trim_end() != "---" {
        return None;
    }
    let yaml_start = first_end + 1;
    let mut pos = yaml_start;
    while pos < text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        if text[pos..line_end].trim_end() == "---" {
            let body_start = (line_end + 1).min(text.len());
            return Some((&text[yaml_start..pos], body_start));
        }
        pos = line_end + 1;
    }
    None
}

fn parse_yaml(yaml: &str) -> Result<Option<Pod>, String> {
    // gray_matter wants the whole document; hand it just the block so that
    // what it parses is exactly what `locate` found.
    let doc = format!("---\n{yaml}\n---\n");
    let parsed: ParsedEntity = Matter::<YAML>::new()
        .parse(&doc)
        .map_err(|e| e.to_string())?;
    Ok(parsed.data)
}

/// Quotes `key: value` lines whose unquoted value holds a character YAML
/// gives a meaning to (`*` alias, `{` flow mapping, `: `, ...), as Claude
/// Code's front matter parser does before giving up. With `all`, also plain
/// values and `- item` values (but flow sequences and values with a
/// comment), so that a number keeps its spelling and `{a,b}` is a glob.
fn quote_values(yaml: &str, all: bool) -> String {
    const SPECIAL: &[char] = &[
        '{', '}', '[', ']', '*', '&', '#', '!', '|', '>', '%', '@', '`',
    ];
    let mut out = String::with_capacity(yaml.len() + 16);
    for line in yaml.lines() {
        let item = line.trim_start().strip_prefix("- ").filter(|_| all);
        if let Some(value) = item.map(str::trim) {
            let plain = !value.starts_with(['"', '\'', '[']) && !value.contains(" #");
            if plain && !value.is_empty() {
                let indent = &line[..line.len() - line.trim_start().len()];
                let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
                out.push_str(&format!("{indent}- \"{escaped}\"\n"));
                continue;
            }
        }
        let quoted = line.split_once(':').and_then(|(key, value)| {
            let key_ok = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            let value = value.strip_prefix(|c: char| c == ' ' || c == '\t')?.trim();
            let already = (value.starts_with('"') && value.ends_with('"') && value.len() > 1)
                || (value.starts_with('\'') && value.ends_with('\'') && value.len() > 1);
            let special = value.contains(SPECIAL) || value.contains(": ");
            let special = match all {
                true => !value.starts_with('[') && !value.contains(" #"),
                false => special,
            };
            (key_ok && !value.is_empty() && !already && special).then(|| {
                let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
                format!("{key}: \"{escaped}\"")
            })
        });
        out.push_str(quoted.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// Whether YAML read a `paths:` value, or an item of it, as something other
/// than a string or null.
fn not_text(pod: &Pod) -> bool {
    match pod {
        Pod::Integer(_) | Pod::Float(_) | Pod::Boolean(_) | Pod::Hash(_) => true,
        Pod::Array(items) => items.iter().any(not_text),
        _ => false,
    }
}

fn paths_from_pod(pod: &Pod) -> Option<Vec<String>> {
    // YAML reads `paths: 2024` as a number: it is still a glob, not "no
    // condition" (canonical forms come back as written; `1.50` as `1.5`).
    let text = |pod: &Pod| match pod {
        Pod::String(s) => Some(s.clone()),
        Pod::Integer(i) => Some(i.to_string()),
        Pod::Float(f) => Some(f.to_string()),
        Pod::Boolean(b) => Some(b.to_string()),
        _ => None,
    };
    let raw: Vec<String> = match pod {
        Pod::Array(items) => items.iter().filter_map(text).collect(),
        scalar => vec![text(scalar)?],
    };
    let patterns = split_paths(&raw);
    if patterns.is_empty() || patterns.iter().all(|p| p == "**") {
        None
    } else {
        Some(patterns)
    }
}

/// Splits `paths:` entries on commas outside braces, expands braces, drops a
/// trailing `/**` and empty patterns.
pub fn split_paths(entries: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for entry in entries {
        for part in split_outside_braces(entry) {
            for pattern in expand_braces(&part) {
                let pattern = pattern.strip_suffix("/**").unwrap_or(&pattern).to_string();
                if !pattern.is_empty() {
                    out.push(pattern);
                }
            }
        }
    }
    out
}

fn split_outside_braces(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth <= 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect()
}

/// Expands `{a,b}` groups, nested or several, into every combination.
pub fn expand_braces(pattern: &str) -> Vec<String> {
    let mut out = Vec::new();
    expand_into(pattern, &mut out);
    if out.len() > MAX_BRACE_RESULTS {
        return vec![pattern.to_string()];
    }
    out
}

fn expand_into(pattern: &str, out: &mut Vec<String>) {
    if out.len() > MAX_BRACE_RESULTS {
        return;
    }
    let Some((open, close, alternatives)) = first_group(pattern) else {
        out.push(pattern.to_string());
        return;
    };
    let (prefix, suffix) = (&pattern[..open], &pattern[close + 1..]);
    for alternative in alternatives {
        expand_into(&format!("{prefix}{alternative}{suffix}"), out);
    }
}

/// The first `{...}` group holding a top-level comma: its byte offsets and
/// its alternatives.
fn first_group(pattern: &str) -> Option<(usize, usize, Vec<&str>)> {
    let bytes = pattern.as_bytes();
    let mut search = 0;
    while let Some(rel) = pattern[search..].find('{') {
        let open = search + rel;
        let mut depth = 0;
        let mut commas = Vec::new();
        for (i, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if commas.is_empty() {
                            break;
                        }
                        let mut alternatives = Vec::new();
                        let mut start = open + 1;
                        for &c in &commas {
                            alternatives.push(&pattern[start..c]);
                            start = c + 1;
                        }
                        alternatives.push(&pattern[start..i]);
                        return Some((open, i, alternatives));
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
        }
        search = open + 1;
    }
    None
}

/// Compiled `paths:` patterns of one rule.
#[derive(Debug, Clone)]
pub struct PathRule {
    base: std::path::PathBuf,
    matcher: Gitignore,
}

impl PathRule {
    /// Compiles `patterns` relative to `base`. Patterns that are not valid
    /// globs are left out and returned as error lines.
    pub fn new(base: &Path, patterns: &[String]) -> (PathRule, Vec<String>) {
        let mut builder = GitignoreBuilder::new(base);
        let mut errors = Vec::new();
        for pattern in patterns {
            if let Err(e) = builder.add_line(None, pattern) {
                errors.push(format!("pattern {pattern:?}: {e}"));
            }
        }
        let matcher = builder.build().unwrap_or_else(|e| {
            errors.push(e.to_string());
            Gitignore::empty()
        });
        (
            PathRule {
                base: base.to_path_buf(),
                matcher,
            },
            errors,
        )
    }

    /// Whether `path` (absolute) lies under the base and matches, as git
    /// would decide whether a `.gitignore` in the base ignores it: a pattern
    /// naming a directory matches everything inside it.
    pub fn matches(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.base) else {
            return false;
        };
        if rel.as_os_str().is_empty() {
            return false;
        }
        self.matcher
            .matched_path_or_any_parents(rel, false)
            .is_ignore()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn front_matter_is_located_and_measured() {
        let text = "---\npaths: \"src/**\"\n---\n# Body\n";
        let fm = parse(text);
        assert_eq!(&text[fm.body_start..], "# Body\n");
        assert_eq!(fm.paths, Some(s(&["src"])));
        assert_eq!(fm.error, None);
    }

    #[test]
    fn no_front_matter() {
        assert_eq!(parse("# Title\n---\n"), FrontMatter::none());
        assert_eq!(parse("---\nnever closed\n"), FrontMatter::none());
    }

    #[test]
    fn front_matter_without_paths_is_unconditional() {
        let text = "---\ndescription: x\n---\nbody";
        let fm = parse(text);
        assert_eq!(&text[fm.body_start..], "body");
        assert_eq!(fm.paths, None);
    }

    #[test]
    fn paths_as_a_list_and_a_comma_string() {
        let fm = parse("---\npaths:\n  - lib/*.rs\n  - \"docs/**\"\n---\n");
        assert_eq!(fm.paths, Some(s(&["lib/*.rs", "docs"])));
        let fm = parse("---\npaths: \"a/*.md, src/*.{ts,tsx}\"\n---\n");
        assert_eq!(fm.paths, Some(s(&["a/*.md", "src/*.ts", "src/*.tsx"])));
    }

    #[test]
    fn unquoted_special_value_is_retried_quoted() {
        let fm = parse("---\npaths: **/*.ts\n---\nx\n");
        assert_eq!(fm.error, None);
        assert_eq!(fm.paths, Some(s(&["**/*.ts"])));
    }

    // Found by the property tests: YAML reads these as a number, a boolean
    // or a mapping, and the rule became unconditional.
    #[test]
    fn paths_yaml_reads_as_numbers_or_mappings_stay_globs() {
        assert_eq!(parse("---\npaths: 0\n---\n").paths, Some(s(&["0"])));
        assert_eq!(parse("---\npaths: -0\n---\n").paths, Some(s(&["-0"])));
        let fm = parse("---\npaths:\n  - 1.50\n  - true\n---\n");
        assert_eq!(fm.paths, Some(s(&["1.50", "true"])));
        let fm = parse("---\npaths: {.,a}\n---\n");
        assert_eq!(fm.paths, Some(s(&[".", "a"])));
        assert_eq!(
            parse("---\npaths: 2024 # year\n---\n").paths,
            Some(s(&["2024"]))
        );
    }

    #[test]
    fn only_double_star_is_unconditional() {
        assert_eq!(parse("---\npaths: \"**\"\n---\n").paths, None);
    }

    #[test]
    fn invalid_yaml_is_an_error_and_keeps_the_text() {
        let fm = parse("---\npaths: [unclosed\n  - : :\n---\nbody\n");
        assert_eq!(fm.body_start, 0);
        assert_eq!(fm.paths, None);
        assert!(fm.error.is_some());
    }

    #[test]
    fn braces_expand_in_every_combination() {
        assert_eq!(
            expand_braces("{a,b}/{c,d}"),
            s(&["a/c", "a/d", "b/c", "b/d"])
        );
        assert_eq!(
            expand_braces("x.{ts,{js,jsx}}"),
            s(&["x.ts", "x.js", "x.jsx"])
        );
        assert_eq!(expand_braces("plain{}"), s(&["plain{}"]));
    }

    #[test]
    fn gitignore_style_matching_relative_to_base() {
        let base = Path::new("/repo");
        let patterns = split_paths(&s(&["src/**/*.{ts,tsx}"]));
        let (rule, errors) = PathRule::new(base, &patterns);
        assert!(errors.is_empty());
        assert!(rule.matches(Path::new("/repo/src/a/b.tsx")));
        assert!(rule.matches(Path::new("/repo/src/x.ts")));
        assert!(!rule.matches(Path::new("/repo/lib/x.ts")));
        assert!(!rule.matches(Path::new("/elsewhere/src/a/b.tsx")));

        let (dir_rule, _) = PathRule::new(base, &split_paths(&s(&["docs/**"])));
        assert!(dir_rule.matches(Path::new("/repo/docs/deep/file.md")));
        let (unanchored, _) = PathRule::new(base, &s(&["*.md"]));
        assert!(unanchored.matches(Path::new("/repo/a/b/README.md")));
    }
}
