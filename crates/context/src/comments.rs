//! Strips authors' notes (`<!-- ... -->`) from instruction files before they
//! are injected, the way Claude Code does.
//!
//! Only comments that form a top-level CommonMark HTML block are removed: a
//! comment inside a paragraph (inline HTML), inside a code block or code span,
//! inside a list item or block quote, and an unclosed `<!--` are kept, so a
//! typo never swallows the rest of a file. The block removed is Claude Code's
//! (its markdown lexer's): from the comment to the end of the line holding
//! its closing `-->`, and every line break right after it, so the blank line
//! that separated the note from the next paragraph goes with it. When text
//! follows the closing `-->` on that last line, only the comment spans are
//! removed and the rest of the block kept, line breaks included.
//!
//! A file without `<!--` is returned untouched, byte for byte; so is a file
//! whose comments are all kept. When a comment is removed, the whole text is
//! returned with its line endings made `\n` (`\r\n` and a lone `\r` alike),
//! as Claude Code does.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// The text with block-level HTML comments removed, and whether any was.
pub fn strip_block_comments(text: &str) -> (String, bool) {
    if !text.contains("<!--") {
        return (text.to_string(), false);
    }
    // Offsets below are into the text with `\n` line endings, the text
    // Claude Code's lexer reads.
    let normalized = normalize_line_endings(text);
    let text_n: &str = &normalized;
    let mut out = String::with_capacity(text_n.len());
    let mut copied_to = 0;
    let mut stripped = false;
    let mut depth = 0usize;
    for (event, range) in Parser::new(text_n).into_offset_iter() {
        match event {
            Event::Start(Tag::HtmlBlock) if depth == 0 => {
                depth += 1;
                let block = &text_n[range.clone()];
                let trimmed = block.trim_start();
                // A parser range never starts before text already copied,
                // but line breaks swallowed after an earlier block may
                // overlap this one's start: skip what was consumed.
                if trimmed.starts_with("<!--")
                    && trimmed.contains("-->")
                    && range.start >= copied_to
                {
                    let end = swallow_line_breaks(text_n, range.end);
                    out.push_str(&text_n[copied_to..range.start]);
                    let residue = remove_comment_spans(&text_n[range.start..end]);
                    if !residue.trim().is_empty() {
                        out.push_str(&residue);
                    }
                    copied_to = end;
                    stripped = true;
                }
            }
            Event::Start(_) => depth += 1,
            Event::End(TagEnd::HtmlBlock) | Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if !stripped {
        return (text.to_string(), false);
    }
    out.push_str(&text_n[copied_to..]);
    (out, true)
}

/// `\r\n` and a lone `\r` made `\n`.
fn normalize_line_endings(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
}

/// The end of the block: `end` (just after the block's last line, its line
/// break included), then every `\n` that follows. A line of spaces stops it.
fn swallow_line_breaks(text: &str, end: usize) -> usize {
    let bytes = text.as_bytes();
    // The parser's range includes the last line's break; a block that ends
    // the file without one ends there.
    let mut end = end;
    while end < bytes.len() && bytes[end] == b'\n' {
        end += 1;
    }
    end
}

/// Removes every closed `<!-- ... -->` span (non-greedy, across lines).
pub(crate) fn remove_comment_spans(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find("<!--") {
        match rest[open + 4..].find("-->") {
            Some(close) => {
                out.push_str(&rest[..open]);
                rest = &rest[open + 4 + close + 3..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(s: &str) -> String {
        strip_block_comments(s).0
    }

    // Issue 16, fix 1: Claude Code removes the comment and the blank line
    // after it (its lexer's comment block ends with every line break that
    // follows); a removed comment used to leave an extra newline behind.
    #[test]
    fn block_comment_is_stripped_with_the_line_breaks_after_it() {
        assert_eq!(
            strip_block_comments("# Title\n\n<!-- a note -->\n\nBody\n"),
            ("# Title\n\nBody\n".to_string(), true)
        );
        assert_eq!(strip("a\n\n<!-- x -->\n\n\n\nb\n"), "a\n\nb\n");
        // A line of spaces is not a line break: it stays.
        assert_eq!(strip("a\n\n<!-- x -->\n  \nb\n"), "a\n\n  \nb\n");
        // At the end of the file.
        assert_eq!(strip("a\n\n<!-- x -->"), "a\n\n");
    }

    #[test]
    fn multi_line_block_comment_is_stripped() {
        assert_eq!(strip("a\n\n<!--\nnote\nmore\n-->\nb\n"), "a\n\nb\n");
        assert_eq!(strip("a\n\n<!--\nnote\n-->\n\nb\n"), "a\n\nb\n");
    }

    #[test]
    fn a_comment_that_interrupts_a_paragraph_is_a_block() {
        assert_eq!(strip("text\n<!-- x -->\nmore\n"), "text\nmore\n");
    }

    #[test]
    fn line_endings_become_lf_when_a_comment_is_removed() {
        assert_eq!(
            strip_block_comments("one\r\n\r\n<!-- c -->\r\n\r\ntwo\r\n"),
            ("one\n\ntwo\n".to_string(), true)
        );
        // Kept as they are when nothing is removed.
        let s = "one\r\n`<!-- span -->`\r\n";
        assert_eq!(strip_block_comments(s), (s.to_string(), false));
    }

    #[test]
    fn inline_comment_is_kept() {
        let s = "Use bun <!-- not npm --> here.\n";
        assert_eq!(strip_block_comments(s), (s.to_string(), false));
    }

    #[test]
    fn comment_in_code_is_kept() {
        let s = "```\n<!-- in a fence -->\n```\n\n    <!-- indented -->\n\n`<!-- span -->`\n";
        assert_eq!(strip_block_comments(s), (s.to_string(), false));
    }

    #[test]
    fn unclosed_comment_is_kept() {
        let s = "a\n\n<!-- never closed\n\nrest of file\n";
        assert_eq!(strip_block_comments(s), (s.to_string(), false));
    }

    #[test]
    fn text_after_the_comment_on_its_last_line_is_kept() {
        assert_eq!(strip("<!-- note --> Use bun\n"), " Use bun\n");
        // With the line breaks of the block.
        assert_eq!(
            strip("# A\n\n<!-- note --> Kept.\n\nNext\n"),
            "# A\n\n Kept.\n\nNext\n"
        );
    }

    #[test]
    fn comment_in_list_item_is_kept() {
        let s = "- item\n\n  <!-- nested -->\n";
        assert_eq!(strip(s), s);
    }

    #[test]
    fn no_comment_is_untouched() {
        let s = "crlf\r\nfile\r\n";
        assert_eq!(strip_block_comments(s), (s.to_string(), false));
    }
}
