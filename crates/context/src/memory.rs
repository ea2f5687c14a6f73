//! The auto-memory entrypoint (`MEMORY.md`) is an index the agent keeps
//! itself, so it can grow without bound; only its start is injected.
//!
//! Like Claude Code: at most 200 lines, then at most 25,000 characters (cut
//! at the last line break before the limit, so no line is split), and when
//! anything was cut a warning paragraph saying which limit was hit. Unlike
//! Claude Code, a file within both limits is returned as it is, not trimmed,
//! so a MEMORY.md that ends with a newline is not reported as processed.

/// Lines kept at most.
pub const MAX_LINES: usize = 200;
/// Characters kept at most.
pub const MAX_CHARS: usize = 25_000;

/// The text to inject, and whether it was truncated.
pub fn truncate(text: &str) -> (String, bool) {
    let trimmed = text.trim();
    let line_count = trimmed.split('\n').count();
    let char_count = trimmed.chars().count();
    let over_lines = line_count > MAX_LINES;
    let over_chars = char_count > MAX_CHARS;
    if !over_lines && !over_chars {
        return (text.to_string(), false);
    }
    let mut kept: String = if over_lines {
        trimmed
            .split('\n')
            .take(MAX_LINES)
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        trimmed.to_string()
    };
    if let Some((limit_byte, _)) = kept.char_indices().nth(MAX_CHARS) {
        let cut = match kept[..limit_byte].rfind('\n') {
            Some(nl) if nl > 0 => nl,
            _ => limit_byte,
        };
        kept.truncate(cut);
    }
    let reason = match (over_lines, over_chars) {
        (true, false) => format!("{line_count} lines (limit: {MAX_LINES})"),
        (false, true) => {
            format!("{char_count} characters (limit: {MAX_CHARS}) — index entries are too long")
        }
        _ => format!("{line_count} lines and {char_count} characters"),
    };
    kept.push_str(&format!(
        "\n\n> WARNING: MEMORY.md is {reason}. Only part of it was loaded. \
         Keep index entries to one line under ~200 chars; move detail into topic files."
    ));
    (kept, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_file_is_untouched() {
        assert_eq!(
            truncate("- [a](a.md)\n"),
            ("- [a](a.md)\n".to_string(), false)
        );
    }

    #[test]
    fn cut_at_200_lines_with_notice() {
        let text: String = (1..=250).map(|i| format!("line {i}\n")).collect();
        let (out, cut) = truncate(&text);
        assert!(cut);
        let expected_body: String = (1..=200)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(
            out,
            format!(
                "{expected_body}\n\n> WARNING: MEMORY.md is 250 lines (limit: 200). Only part of it \
                 was loaded. Keep index entries to one line under ~200 chars; move detail into topic files."
            )
        );
    }

    #[test]
    fn cut_at_25000_characters_on_a_line_break() {
        // 100 lines of 299 characters: 29,999 characters once trimmed.
        let text: String = (0..100).map(|_| format!("{}\n", "x".repeat(299))).collect();
        let (out, cut) = truncate(&text);
        assert!(cut);
        let expected_body = vec!["x".repeat(299); 83].join("\n");
        assert_eq!(
            out,
            format!(
                "{expected_body}\n\n> WARNING: MEMORY.md is 29999 characters (limit: 25000) — index \
                 entries are too long. Only part of it was loaded. Keep index entries to one line under \
                 ~200 chars; move detail into topic files."
            )
        );
    }
}
