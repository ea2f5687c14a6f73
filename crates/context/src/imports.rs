//! Finds the `@path` imports of an instruction file.
//!
//! An import is `@` at the start of a text run or after white space, followed
//! by a path made of non-space characters (`\ ` is an escaped space), in one
//! of the forms `./x`, `../x`, `~/x`, `/abs/x` or a bare relative `x` that
//! starts with a letter, digit, `.`, `_` or `-` (so `@@x`, `@#x` and an e-mail
//! address are not imports). A `#fragment` is dropped.
//!
//! Markdown is parsed with pulldown-cmark and only text is scanned: fenced
//! and indented code blocks, code spans and HTML are skipped. Scanning works
//! on the source by offsets: adjacent text events are merged into runs, so a
//! parser that splits text at a backslash or an entity does not split a path,
//! and a run starts where markup ends (like `^` on a text node in Claude
//! Code's lexer). A block-level HTML comment followed by text on its last
//! line (`<!-- note --> @x.md`) has that text scanned too.
//!
//! This module only reads text: resolving, checking and loading the targets
//! is the loader's job.

use std::ops::Range;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use crate::comments::remove_comment_spans;

/// One `@import` as written and where it points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The path as written, fragment dropped and `\ ` unescaped (`./a b.md`).
    pub written: String,
    /// Where it resolves: absolute, not canonicalized. `None` for `~/x` when
    /// there is no home directory.
    pub target: Option<PathBuf>,
}

/// The imports of `text`, in order of appearance, each once, resolved against
/// `base_dir` (the importing file's directory) and `home`.
pub fn find_imports(text: &str, base_dir: &Path, home: Option<&Path>) -> Vec<Import> {
    let mut found: Vec<Import> = Vec::new();
    for written in import_paths(text) {
        if found.iter().any(|i| i.written == written) {
            continue;
        }
        let target = resolve(&written, base_dir, home);
        found.push(Import { written, target });
    }
    found
}

/// The import paths written in `text`, in order, duplicates kept.
pub fn import_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Option<Range<usize>> = None;
    let mut in_code_block = 0usize;
    let mut html_depth = 0usize;
    let flush = |run: &mut Option<Range<usize>>, out: &mut Vec<String>| {
        if let Some(r) = run.take() {
            scan(&text[r], out);
        }
    };
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Text(_) if in_code_block == 0 && html_depth == 0 => {
                match &mut run {
                    Some(r) if r.end == range.start => r.end = range.end,
                    _ => {
                        flush(&mut run, &mut out);
                        run = Some(range);
                    }
                }
                continue;
            }
            Event::Start(Tag::CodeBlock(_)) => in_code_block += 1,
            Event::End(TagEnd::CodeBlock) => in_code_block = in_code_block.saturating_sub(1),
            Event::Start(Tag::HtmlBlock) => {
                html_depth += 1;
                let block = &text[range];
                let trimmed = block.trim_start();
                if trimmed.starts_with("<!--") && trimmed.contains("-->") {
                    flush(&mut run, &mut out);
                    scan(&remove_comment_spans(block), &mut out);
                }
            }
            Event::End(TagEnd::HtmlBlock) => html_depth = html_depth.saturating_sub(1),
            _ => {}
        }
        flush(&mut run, &mut out);
    }
    flush(&mut run, &mut out);
    out
}

/// Scans one run of text for `@path`.
fn scan(s: &str, out: &mut Vec<String>) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'@'
            && (i == 0
                || (bytes[i - 1] as char).is_ascii_whitespace()
                || preceded_by_unicode_space(s, i))
        {
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() {
                let b = bytes[j];
                if b == b'\\' {
                    if bytes.get(j + 1) == Some(&b' ') {
                        j += 2;
                        continue;
                    }
                    break;
                }
                if (b as char).is_ascii_whitespace() {
                    break;
                }
                // Non-ASCII: stop only at Unicode white space.
                if b >= 0x80 {
                    let c = s[j..].chars().next().unwrap_or(' ');
                    if c.is_whitespace() {
                        break;
                    }
                    j += c.len_utf8();
                    continue;
                }
                j += 1;
            }
            if let Some(path) = accept(&s[start..j]) {
                out.push(path);
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
}

fn preceded_by_unicode_space(s: &str, i: usize) -> bool {
    s[..i].chars().next_back().is_some_and(char::is_whitespace)
}

/// Applies the fragment, escape and form rules to a candidate path.
fn accept(candidate: &str) -> Option<String> {
    let without_fragment = candidate.split('#').next().unwrap_or("");
    if without_fragment.is_empty() {
        return None;
    }
    let path = without_fragment.replace("\\ ", " ");
    let first = path.chars().next()?;
    let valid = path.starts_with("./")
        || path.starts_with("~/")
        || (path.starts_with('/') && path != "/")
        || (first.is_ascii_alphanumeric() || matches!(first, '.' | '_' | '-'));
    valid.then_some(path)
}

/// Resolves a written import against the importing file's directory.
pub fn resolve(written: &str, base_dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(rest) = written.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    let p = Path::new(written);
    if p.is_absolute() {
        Some(p.to_path_buf())
    } else {
        Some(base_dir.join(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(s: &str) -> Vec<String> {
        import_paths(s)
    }

    #[test]
    fn forms_at_line_start_and_after_space() {
        assert_eq!(
            paths("@a.md and @./b.md\nsee @../c.md then @~/d.md and @/abs/e.md\n"),
            vec!["a.md", "./b.md", "../c.md", "~/d.md", "/abs/e.md"]
        );
    }

    #[test]
    fn not_imports() {
        assert_eq!(
            paths("mail me at user@example.com\n@@x @#y @/ @* @\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn fragment_is_dropped_and_escaped_space_kept() {
        assert_eq!(
            paths("@guide.md#setup @a\\ b.md\n"),
            vec!["guide.md", "a b.md"]
        );
    }

    #[test]
    fn ignored_in_fenced_block() {
        assert_eq!(
            paths("```\n@fenced.md\n```\n\n~~~md\n@tilde.md\n~~~\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn ignored_in_indented_block() {
        assert_eq!(paths("para\n\n    @indented.md\n"), Vec::<String>::new());
    }

    #[test]
    fn ignored_in_code_span() {
        assert_eq!(paths("run `@span.md` then @real.md\n"), vec!["real.md"]);
    }

    #[test]
    fn found_in_lists_quotes_and_emphasis() {
        assert_eq!(
            paths("- @list.md\n\n> @quote.md\n\n*@em.md*\n"),
            vec!["list.md", "quote.md", "em.md"]
        );
    }

    #[test]
    fn html_comment_residue_is_scanned_but_comment_is_not() {
        assert_eq!(paths("<!-- @hidden.md --> @shown.md\n"), vec!["shown.md"]);
        assert_eq!(paths("<!--\n@hidden.md\n-->\n"), Vec::<String>::new());
    }

    #[test]
    fn resolution() {
        let base = Path::new("/p/dir");
        let home = Some(Path::new("/home/u"));
        let found = find_imports("@x.md @../y.md @~/z.md @/abs.md @x.md\n", base, home);
        let targets: Vec<_> = found.iter().map(|i| i.target.clone().unwrap()).collect();
        assert_eq!(
            targets,
            vec![
                PathBuf::from("/p/dir/x.md"),
                PathBuf::from("/p/dir/../y.md"),
                PathBuf::from("/home/u/z.md"),
                PathBuf::from("/abs.md"),
            ]
        );
        assert_eq!(find_imports("@~/z.md\n", base, None)[0].target, None);
    }
}
