//! The unified diff of a change, as `diff -u` would print it.
//!
//! An edit changes a few lines of a file that may be long. The lines both
//! texts share at the start and at the end are set aside (all but the
//! context the hunks need) before the line diff runs, so its cost follows
//! the size of the change, not of the file; the hunk headers are then
//! shifted back to the file's line numbers. A rewrite of most of a long
//! file gets a correct diff, not always the shortest (see [`DIFF_TIMEOUT`]).

use std::borrow::Cow;
use std::time::Duration;

use fsview_store::changes::shift_hunk_header;

/// Lines of context around each change.
pub const CONTEXT: usize = 3;

/// How long the line diff may look for the smallest diff. A rewrite of
/// most of a long file costs the diff time that grows with the square of
/// its length; past this, it settles for a correct but longer diff.
const DIFF_TIMEOUT: Duration = Duration::from_millis(20);

/// A unified diff from `old` (`None`: no file) to `new`, both headed by
/// `name` (`/dev/null` for a file that did not exist). Empty when the texts
/// are the same.
pub fn unified(old: Option<&[u8]>, new: &[u8], name: &str) -> String {
    unified_within(old, new, name, Some(DIFF_TIMEOUT))
}

/// [`unified`], the line diff given `timeout` to find the smallest diff
/// (`None`: as long as it takes).
fn unified_within(old: Option<&[u8]>, new: &[u8], name: &str, timeout: Option<Duration>) -> String {
    let from = old.unwrap_or_default();
    let (start, skipped) = shared_start(from, new);
    let (old_end, new_end) = shared_end(&from[start..], &new[start..]);
    let old_mid = text(&from[start..start + old_end]);
    let new_mid = text(&new[start..start + new_end]);
    let mut config = similar::TextDiff::configure();
    if let Some(t) = timeout {
        config.timeout(t);
    }
    let diff = config
        .diff_lines(old_mid.as_ref(), new_mid.as_ref())
        .unified_diff()
        .context_radius(CONTEXT)
        .header(if old.is_some() { name } else { "/dev/null" }, name)
        .to_string();
    if skipped == 0 {
        return diff;
    }
    let mut out = String::with_capacity(diff.len() + 16);
    for line in diff.split_inclusive('\n') {
        match shift_hunk_header(line, skipped as u64, skipped as u64) {
            Some(h) => out.push_str(&h),
            None => out.push_str(line),
        }
    }
    out
}

/// Where the lines both texts start with end, less the context lines; and
/// how many lines that is.
fn shared_start(a: &[u8], b: &[u8]) -> (usize, usize) {
    let same = common_prefix(a, b);
    // Back to the start of the line the first difference is in...
    let mut at = match memchr::memrchr(b'\n', &a[..same]) {
        Some(i) => i + 1,
        None => return (0, 0),
    };
    // ...and further back by the context lines.
    for _ in 0..CONTEXT {
        if at == 0 {
            break;
        }
        at = memchr::memrchr(b'\n', &a[..at - 1]).map_or(0, |i| i + 1);
    }
    let lines = memchr::memchr_iter(b'\n', &a[..at]).count();
    (at, lines)
}

/// How much of each text to diff: everything before the lines both end
/// with, plus the context lines. Like the line diff itself, it looks for
/// the shared end only after the shared start, so both agree on where an
/// insertion into repeated lines goes.
fn shared_end(a: &[u8], b: &[u8]) -> (usize, usize) {
    let shortest = a.len().min(b.len());
    let pre = common_prefix(a, b);
    let same = common_suffix(a, b).min(shortest - pre);
    // Start the shared end after a line break that both texts share.
    let mut tail = match memchr::memchr(b'\n', &a[a.len() - same..]) {
        Some(i) => a.len() - same + i + 1,
        None => a.len(),
    };
    for _ in 0..CONTEXT {
        tail = match memchr::memchr(b'\n', &a[tail..]) {
            Some(i) => tail + i + 1,
            None => a.len(),
        };
    }
    let kept = a.len() - tail;
    (tail, b.len() - kept)
}

/// How many bytes `a` and `b` start with in common (compared a block at a
/// time: a file is long, an edit short).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[i..i + BLOCK] == b[i..i + BLOCK] {
        i += BLOCK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// How many bytes `a` and `b` end with in common.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 64;
    let n = a.len().min(b.len());
    let (ea, eb) = (a.len(), b.len());
    let mut i = 0;
    while i + BLOCK <= n && a[ea - i - BLOCK..ea - i] == b[eb - i - BLOCK..eb - i] {
        i += BLOCK;
    }
    while i < n && a[ea - i - 1] == b[eb - i - 1] {
        i += 1;
    }
    i
}

fn text(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The diff without any trimming, as the reference.
    fn plain(old: Option<&[u8]>, new: &[u8], name: &str) -> String {
        let a = String::from_utf8_lossy(old.unwrap_or_default());
        let b = String::from_utf8_lossy(new);
        similar::TextDiff::from_lines(a.as_ref(), b.as_ref())
            .unified_diff()
            .context_radius(CONTEXT)
            .header(if old.is_some() { name } else { "/dev/null" }, name)
            .to_string()
    }

    #[test]
    fn one_line_changed_deep_in_a_file() {
        let old: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 50\n", "line fifty\n");
        let d = unified(Some(old.as_bytes()), new.as_bytes(), "f");
        assert_eq!(
            d,
            "--- f\n+++ f\n@@ -47,7 +47,7 @@\n line 47\n line 48\n line 49\n-line 50\n+line fifty\n line 51\n line 52\n line 53\n"
        );
        assert_eq!(d, plain(Some(old.as_bytes()), new.as_bytes(), "f"));
    }

    #[test]
    fn new_file_and_no_final_newline() {
        assert_eq!(
            unified(None, b"a\nb", "n"),
            "--- /dev/null\n+++ n\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"
        );
        assert_eq!(unified(Some(b"same\n"), b"same\n", "f"), "");
    }

    /// Apply a unified diff (as this module writes it) to `old`.
    fn patch(old: &str, diff: &str) -> String {
        let old: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0; // lines of `old` used so far
        let mut last_added = false;
        for line in diff.split_inclusive('\n').skip(2) {
            if let Some(h) = line.strip_prefix("@@ -") {
                let start: usize = h.split([',', ' ']).next().unwrap().parse().unwrap();
                // An empty range names the line before it.
                let len_zero = h.split(' ').next().unwrap().ends_with(",0");
                let first = if len_zero { start } else { start - 1 };
                while at < first {
                    out.push_str(old[at]);
                    at += 1;
                }
            } else if line.starts_with('\\') {
                // The line before had no newline.
                if last_added {
                    out.pop();
                }
            } else if let Some(t) = line.strip_prefix('+') {
                out.push_str(t);
                last_added = true;
                continue;
            } else {
                at += 1;
                if line.starts_with(' ') {
                    out.push_str(old[at - 1]);
                }
            }
            last_added = false;
        }
        for l in &old[at..] {
            out.push_str(l);
        }
        out
    }

    fn changed_lines(diff: &str) -> usize {
        diff.lines()
            .skip(2)
            .filter(|l| l.starts_with('+') || l.starts_with('-'))
            .count()
    }

    proptest! {
        // Trimming gives a diff that turns the old text into the new, and
        // changes as few lines as the whole diff does. (Where an insertion
        // goes among repeated lines may differ: both places are right.)
        // Minimal only when the diff may take its time: on a loaded
        // machine the 20 ms timeout can cut even a short search, which
        // then settles for a correct, longer diff.
        #[test]
        fn a_correct_and_minimal_diff(
            base in proptest::collection::vec("[abc]{0,3}\n?", 0..40),
            edits in proptest::collection::vec((0usize..40, "[abcx]{0,3}\n?"), 0..4),
        ) {
            let old: String = base.concat();
            let mut lines = base.clone();
            for (at, text) in edits {
                if lines.is_empty() { lines.push(text) } else { let n = lines.len(); lines[at % n] = text; }
            }
            let new: String = lines.concat();
            let d = unified(Some(old.as_bytes()), new.as_bytes(), "f");
            prop_assert_eq!(&patch(&old, &d), &new, "diff:\n{}", d);
            let d = unified_within(Some(old.as_bytes()), new.as_bytes(), "f", None);
            prop_assert_eq!(&patch(&old, &d), &new, "diff:\n{}", d);
            let whole = plain(Some(old.as_bytes()), new.as_bytes(), "f");
            prop_assert_eq!(changed_lines(&d), changed_lines(&whole));
        }
    }
}
