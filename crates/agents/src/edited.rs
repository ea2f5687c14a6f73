//! A targeted change reported as what it replaced, applied to what the
//! agent last saw of the file.
//!
//! Some edit tools report only the replacement (Copilot CLI's edit: "File
//! X updated with changes.") or a diff of it (opencode's edit), not the
//! file's new text. The agent knows the new text where it knew the old:
//! its last view, with the change applied. The change must apply exactly
//! (the replaced text found once, each hunk's lines where the hunk says);
//! otherwise the view is not what the tool changed and nothing is known.
//! What comes out is held against the disk like any reported text, so a
//! change landing around the edit is reported, never taken as seen.

use serde_json::{json, Value};

use crate::event::Change;

/// `text` with `change` applied; `text` holds the file's lines from line
/// `offset` (1 for the whole file). `None` when the change does not apply
/// to exactly this text. A tool that decodes `\r\n` as `\n` reports its
/// change in those terms: the text is tried as it is, then so decoded.
pub fn apply(text: &str, offset: u64, change: &Change) -> Option<String> {
    apply_to(text, offset, change).or_else(|| {
        text.contains("\r\n")
            .then(|| apply_to(&text.replace("\r\n", "\n"), offset, change))
            .flatten()
    })
}

fn apply_to(text: &str, offset: u64, change: &Change) -> Option<String> {
    match change {
        Change::Replace { old, new, all } => {
            if old.is_empty() {
                return None;
            }
            match (text.matches(old.as_str()).count(), all) {
                (0, _) => None,
                (_, true) => Some(text.replace(old.as_str(), new)),
                (1, false) => Some(text.replacen(old.as_str(), new, 1)),
                // Not unique here: the tool, which refuses that, saw other
                // text.
                _ => None,
            }
        }
        Change::Patch(diff) => {
            let lines = text.split_inclusive('\n').count() as u64;
            let hunks = hunks(diff)?
                .into_iter()
                .map(|h| h.within(offset, lines))
                .collect::<Option<Vec<_>>>()?;
            if hunks.is_empty() {
                return None;
            }
            let hunks: Vec<Value> = hunks
                .into_iter()
                .map(|h| json!({"oldStart": h.start - offset + 1, "lines": h.lines}))
                .collect();
            crate::claude::apply_patch(text, &hunks)
        }
    }
}

/// One hunk of a unified diff: the line its old side starts at, and its
/// lines (` ` context, `-` removed, `+` added, `\` no newline at end).
struct Hunk {
    start: u64,
    lines: Vec<String>,
}

impl Hunk {
    /// The hunk cut to lines `offset..offset+count` of the file: context
    /// outside them goes (the model saw none of it, and the tool's report
    /// of it is not the file's text it knows); `None` when a change lies
    /// outside.
    fn within(mut self, offset: u64, count: u64) -> Option<Hunk> {
        while self.start < offset {
            if !self.lines.first()?.starts_with(' ') {
                return None;
            }
            self.lines.remove(0);
            self.start += 1;
        }
        let end = offset + count;
        loop {
            let old_end = self.start
                + self
                    .lines
                    .iter()
                    .filter(|l| l.starts_with([' ', '-']))
                    .count() as u64;
            if old_end <= end {
                break;
            }
            match self.lines.iter().rposition(|l| !l.starts_with('\\')) {
                Some(i) if self.lines[i].starts_with(' ') => {
                    self.lines.remove(i);
                }
                _ => return None,
            }
        }
        Some(self)
    }
}

/// The hunks of a unified diff; `None` when it cannot be read.
fn hunks(diff: &str) -> Option<Vec<Hunk>> {
    let mut out = Vec::new();
    let mut cur: Option<Hunk> = None;
    for line in diff.split('\n') {
        if let Some(rest) = line.strip_prefix("@@ -") {
            out.extend(cur.take());
            let old = rest.split(' ').next()?;
            let start: u64 = old.split(',').next()?.parse().ok()?;
            let count: u64 = match old.split_once(',') {
                Some((_, c)) => c.parse().ok()?,
                None => 1,
            };
            // An empty old side ("-0,0") starts after line 0.
            let start = if count == 0 { start + 1 } else { start };
            cur = Some(Hunk {
                start,
                lines: Vec::new(),
            });
        } else if let Some(h) = cur.as_mut() {
            match line.chars().next() {
                Some(' ' | '-' | '+' | '\\') => h.lines.push(line.to_string()),
                // The end of the diff (its last newline).
                None => {}
                Some(_) => return None,
            }
        }
    }
    out.extend(cur);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replace(old: &str, new: &str, all: bool) -> Change {
        Change::Replace {
            old: old.into(),
            new: new.into(),
            all,
        }
    }

    #[test]
    fn a_replacement_applies_once_or_everywhere() {
        assert_eq!(
            apply("a\nb\nc\n", 1, &replace("b", "B", false)).as_deref(),
            Some("a\nB\nc\n")
        );
        assert_eq!(
            apply("x y x", 1, &replace("x", "z", true)).as_deref(),
            Some("z y z")
        );
        // Not unique, not there, nothing to find: not what the tool did.
        assert_eq!(apply("x y x", 1, &replace("x", "z", false)), None);
        assert_eq!(apply("abc", 1, &replace("q", "z", false)), None);
        assert_eq!(apply("abc", 1, &replace("", "z", false)), None);
    }

    // The diff opencode 1.18.33 reported for replacing "two" by "TWO".
    const DIFF: &str = "Index: /w/a.txt\n===================================================================\n--- /w/a.txt\n+++ /w/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";

    #[test]
    fn a_diff_applies_at_its_lines() {
        let p = Change::Patch(DIFF.into());
        assert_eq!(
            apply("one\ntwo\nthree\n", 1, &p).as_deref(),
            Some("one\nTWO\nthree\n")
        );
        // Other text at those lines: not what the tool changed.
        assert_eq!(apply("one\nTWO\nthree\n", 1, &p), None);
        // A slice of the file from line 1 holds the hunk too.
        assert_eq!(
            apply("one\ntwo\nthree\nfour\n", 1, &p).as_deref(),
            Some("one\nTWO\nthree\nfour\n")
        );
        // A slice of lines 2-3: the context above it goes, the change is
        // in it.
        assert_eq!(
            apply("two\nthree\n", 2, &p).as_deref(),
            Some("TWO\nthree\n")
        );
        // Lines 2-2: the context below goes too.
        assert_eq!(apply("two\n", 2, &p).as_deref(), Some("TWO\n"));
        // A slice that holds no change of the hunk does not take it.
        assert_eq!(apply("three\n", 3, &p), None);
        // CRLF text, a diff in decoded terms.
        assert_eq!(
            apply("one\r\ntwo\r\nthree\r\n", 1, &p).as_deref(),
            Some("one\nTWO\nthree\n")
        );
        let later = Change::Patch("@@ -3,2 +3,2 @@\n c\n-d\n+D\n".into());
        assert_eq!(apply("c\nd\n", 3, &later).as_deref(), Some("c\nD\n"));
        // Two hunks, a final line without a newline.
        let two = Change::Patch(
            "@@ -1,1 +1,1 @@\n-a\n+A\n@@ -9,1 +9,1 @@\n-i\n\\ No newline at end of file\n+I\n\\ No newline at end of file\n"
                .into(),
        );
        assert_eq!(
            apply("a\nb\nc\nd\ne\nf\ng\nh\ni", 1, &two).as_deref(),
            Some("A\nb\nc\nd\ne\nf\ng\nh\nI")
        );
        assert_eq!(apply("a\n", 1, &Change::Patch("no hunks\n".into())), None);
    }
}
