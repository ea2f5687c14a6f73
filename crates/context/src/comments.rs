//! Strips authors' notes (`<!-- ... -->`) from instruction files before they
//! are injected, the way Claude Code does.
//!
//! Only comments that form a top-level CommonMark HTML block are removed: a
//! comment inside a paragraph (inline HTML), inside a code block or code span,
//! inside a list item or block quote, and an unclosed `<!--` are kept, so a
//! typo never swallows the rest of a file. When text follows the closing
//! `-->` on the block's last line, the comment spans are removed and that text
//! kept. A file without `<!--` is returned untouched, byte for byte.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// The text with block-level HTML comments removed, and whether any was.
pub fn strip_block_comments(text: &str) -> (String, bool) {
    if !text.contains("<!--") {
        return (text.to_string(), false);
    }
    let mut out = String::with_capacity(text.len());
    let mut copied_to = 0;
    let mut stripped = false;
    let mut depth = 0usize;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::HtmlBlock) if depth == 0 => {
                depth += 1;
                let block = &text[range.clone()];
                let trimmed = block.trim_start();
                if trimmed.starts_with("<!--") && trimmed.contains("-->") {
                    out.push_str(&text[copied_to..range.start]);
                    let residue = remove_comment_spans(block);
                    if !residue.trim().is_empty() {
                        out.push_str(&residue);
                    }
                    copied_to = range.end;
                    stripped = true;
                }
            }
            Event::Start(_) => depth += 1,
            Event::End(TagEnd::HtmlBlock) | Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out.push_str(&text[copied_to..]);
    (out, stripped)
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

    #[test]
    fn block_comment_is_stripped() {
        assert_eq!(
            strip_block_comments("# Title\n\n<!-- a note -->\n\nBody\n"),
            ("# Title\n\n\nBody\n".to_string(), true)
        );
    }

    #[test]
    fn multi_line_block_comment_is_stripped() {
        assert_eq!(strip("a\n\n<!--\nnote\nmore\n-->\nb\n"), "a\n\nb\n");
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
