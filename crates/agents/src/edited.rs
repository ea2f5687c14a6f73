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
        Change::Each(pairs) => {
            // Where each one is in the text as it was, in order.
            let mut at = Vec::with_capacity(pairs.len());
            for (old, new) in pairs {
                if old.is_empty() || text.matches(old.as_str()).count() != 1 {
                    return None;
                }
                let start = text.find(old.as_str())?;
                at.push((start, start + old.len(), new.as_str()));
            }
            at.sort_unstable_by_key(|a| a.0);
            if at.windows(2).any(|w| w[0].1 > w[1].0) {
                return None;
            }
            let mut out = String::with_capacity(text.len());
            let mut pos = 0;
            for (start, end, new) in at {
                out.push_str(&text[pos..start]);
                out.push_str(new);
                pos = end;
            }
            out.push_str(&text[pos..]);
            Some(out)
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

/// The texts the whole file `after` may have been before `change` made it
/// so: each place the change's result stands, put back. Empty when the
/// change cannot be taken out (an empty replacement, a diff that does not
/// apply backwards).
pub fn unapply(after: &str, change: &Change) -> Vec<String> {
    match change {
        Change::Replace { old, new, all } => {
            if new.is_empty() {
                return Vec::new();
            }
            if *all {
                return vec![after.replace(new.as_str(), old)];
            }
            after
                .match_indices(new.as_str())
                .take(64)
                .map(|(at, _)| format!("{}{old}{}", &after[..at], &after[at + new.len()..]))
                .collect()
        }
        Change::Patch(diff) => reversed(diff)
            .and_then(|hunks| crate::claude::apply_patch(after, &hunks))
            .into_iter()
            .collect(),
        // Several replacements at once: taken back out as one, where each
        // result stands once.
        Change::Each(pairs) => apply(
            after,
            1,
            &Change::Each(pairs.iter().map(|(o, n)| (n.clone(), o.clone())).collect()),
        )
        .into_iter()
        .collect(),
    }
}

/// A unified diff's hunks the other way round (its new side as the old),
/// as jsdiff hunks for [`claude::apply_patch`](crate::claude::apply_patch).
fn reversed(diff: &str) -> Option<Vec<Value>> {
    let mut out: Vec<Value> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    let mut start = None;
    let flush = |start: &mut Option<u64>, lines: &mut Vec<String>, out: &mut Vec<Value>| {
        if let Some(s) = start.take() {
            out.push(json!({"oldStart": s, "lines": std::mem::take(lines)}));
        }
    };
    for line in diff.split('\n') {
        if let Some(rest) = line.strip_prefix("@@ -") {
            flush(&mut start, &mut lines, &mut out);
            let new = rest.split(' ').nth(1)?.strip_prefix('+')?;
            let from: u64 = new.split(',').next()?.parse().ok()?;
            let count: u64 = match new.split_once(',') {
                Some((_, c)) => c.parse().ok()?,
                None => 1,
            };
            start = Some(if count == 0 { from + 1 } else { from });
        } else if start.is_some() {
            match line.chars().next() {
                Some('+') => lines.push(format!("-{}", &line[1..])),
                Some('-') => lines.push(format!("+{}", &line[1..])),
                Some(' ' | '\\') => lines.push(line.to_string()),
                None => {}
                Some(_) => return None,
            }
        }
    }
    flush(&mut start, &mut lines, &mut out);
    (!out.is_empty()).then_some(out)
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

    /// pi's edits: all found in the text as it was, then replaced together.
    #[test]
    fn several_replacements_apply_together_or_not_at_all() {
        let each = |p: &[(&str, &str)]| {
            Change::Each(
                p.iter()
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .collect(),
            )
        };
        assert_eq!(
            apply("a\nb\nc\n", 1, &each(&[("c", "C"), ("a", "b")])).as_deref(),
            Some("b\nb\nC\n")
        );
        // A second text found only after the first replacement: not pi's.
        assert_eq!(apply("a\nc\n", 1, &each(&[("a", "b"), ("b", "B")])), None);
        // Overlapping, or not unique: pi refuses those.
        assert_eq!(apply("abc", 1, &each(&[("ab", "x"), ("bc", "y")])), None);
        assert_eq!(apply("aa b", 1, &each(&[("a", "x"), ("b", "y")])), None);
        assert_eq!(
            apply("one\r\ntwo\r\n", 1, &each(&[("one\ntwo", "1\n2")])).as_deref(),
            Some("1\n2\n")
        );
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

    #[test]
    fn a_change_taken_back_out() {
        let p = Change::Patch(DIFF.into());
        assert_eq!(unapply("one\nTWO\nthree\n", &p), ["one\ntwo\nthree\n"]);
        assert_eq!(
            unapply("one\nTWO\nthree, changed\n", &p),
            Vec::<String>::new()
        );
        assert_eq!(
            unapply("B a B", &replace("b", "B", false)),
            ["b a B", "B a b"]
        );
        assert_eq!(unapply("B a B", &replace("b", "B", true)), ["b a b"]);
        assert_eq!(unapply("a", &replace("b", "", false)), Vec::<String>::new());
    }
}
