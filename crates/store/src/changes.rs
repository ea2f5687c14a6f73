//! Which files changed since the agent saw them, and how.
//!
//! For the next turn's reminder: every file of the session whose views are
//! no longer fresh, with a unified diff (8 lines of context) from the text
//! the agent was shown to what is on disk now, where that text was kept.
//! Diffs are capped per file and in total; what is cut is counted in a
//! `[N lines truncated]` marker so the reader knows it is not the whole
//! story.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use similar::TextDiff;

use crate::error::Result;
use crate::fingerprint::{self, Change, Fingerprint, Freshness};
use crate::show::slice_lines;
use crate::store::{FileRecord, Store, ViewRecord};
use crate::view::Kind;

/// Files larger than this are reported without a diff.
pub(crate) const MAX_DIFF_FILE: u64 = 8 * 1024 * 1024;

pub const CONTEXT_LINES: usize = 8;

/// Caps on diff output, in lines.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub per_file: usize,
    pub total: usize,
    /// A reminder tells a rewrite too long for `per_file` by the file's
    /// whole new text instead, when that is shorter than the diff and fits
    /// `total` ([`crate::remind`]).
    pub rewrites: bool,
    /// Such a whole text is numbered (`N\t` before each line), as the
    /// agent's read numbers lines; else it is the file's text as is.
    pub numbered: bool,
    /// The agent's read shows a file's `\r\n` line ends as `\n` (Claude
    /// Code): a reminder shows its diff so too, and a file whose every `\r`
    /// ends a line can be told whole ([`crate::remind`]).
    pub crlf_as_lf: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_file: 200,
            total: 1000,
            rewrites: true,
            numbered: true,
            crlf_as_lf: false,
        }
    }
}

/// One changed file.
#[derive(Clone, Debug)]
pub struct Changed {
    pub record: FileRecord,
    pub change: Change,
    /// The unified diff, possibly ending in a truncation marker.
    pub diff: Option<String>,
    /// Lines of diff left out by the caps.
    pub truncated: usize,
    /// Why there is no diff, when there is none.
    pub note: Option<String>,
    /// Who changed it, when fsview knows ([`crate::writers`]).
    pub writer: Option<String>,
}

/// A changed file as every front end lists it in text: `PATH: modified
/// (CHANGE)`, `: NOTE` when there is one, then the diff. `path` comes
/// quoted as the caller shows paths.
pub fn listing(path: &str, change: Change, note: Option<&str>, diff: Option<&str>) -> String {
    let mut text = format!("{path}: modified ({})", change.as_str());
    if let Some(n) = note {
        text.push_str(": ");
        text.push_str(n);
    }
    text.push('\n');
    text.push_str(diff.unwrap_or_default());
    text
}

/// A listing's note with who changed the file first, when known: "by
/// WRITER", "by WRITER; NOTE", or the note alone.
pub fn by_writer(writer: Option<&str>, note: Option<&str>) -> Option<String> {
    match (writer, note) {
        (Some(w), Some(n)) => Some(format!("by {w}; {n}")),
        (Some(w), None) => Some(format!("by {w}")),
        (None, n) => n.map(String::from),
    }
}

/// What a reminder said, when it holds the text as viewed: the gate
/// refuses until the file is read again (see [`crate::remind`]).
pub const TOLD_SINCE: &str =
    "the same text as viewed, but a reminder told of a change since; read it again";

/// Every file of session `sid` the gate would call `modified`: no longer
/// what the agent saw, or told of a change by a reminder and not read since.
/// Paths in diff headers are shown relative to `cwd` when below it.
pub fn changed(store: &Store, sid: &str, cwd: &Path, limits: Limits) -> Result<Vec<Changed>> {
    let mut out = Vec::new();
    let mut budget = limits.total;
    let told = store.told_ids(sid)?;
    // Fingerprints worth storing, stored together at the end.
    let mut refreshes = Vec::new();
    for record in store.files(sid)? {
        let change = match check_deferred(&record, &mut refreshes) {
            Some(c) => c,
            None if told.contains(&record.id) => {
                out.push(Changed {
                    record,
                    change: Change::Content,
                    diff: None,
                    truncated: 0,
                    note: Some(TOLD_SINCE.into()),
                    writer: None,
                });
                continue;
            }
            None => continue,
        };
        let views = store.views(record.id)?;
        let bytes = match change {
            Change::Content | Change::Replaced => read_capped(&record.path),
            Change::Deleted | Change::Type => Ok(None),
        };
        let now = match (change, &bytes) {
            (Change::Deleted | Change::Type, _) => Now::Gone,
            (_, Ok(Some(b))) => Now::Bytes(b),
            (_, Ok(None)) => Now::TooLarge,
            (_, Err(_)) => Now::Unreadable,
        };
        let writer = match &now {
            Now::Bytes(b) => store
                .writer(sid, &record.path, &fingerprint::hash_bytes(b))?
                .map(|w| w.describe(sid)),
            _ => None,
        };
        let d = describe(
            store,
            &record,
            &views,
            change,
            now,
            cwd,
            limits.crlf_as_lf,
            limits.per_file,
            &mut budget,
        )?;
        out.push(Changed {
            record,
            change,
            diff: d.diff,
            truncated: d.truncated,
            note: d.note,
            writer,
        });
    }
    // Saves a hash next time; a failure changes no answer.
    let _ = store.refresh_and_log(sid, &refreshes, &[]);
    Ok(out)
}

/// [`check`], leaving what is worth storing in `refreshes` for one
/// transaction at the end of the batch.
fn check_deferred(
    record: &FileRecord,
    refreshes: &mut Vec<(FileRecord, Fingerprint)>,
) -> Option<Change> {
    match fingerprint::freshness(&record.path, &record.fingerprint) {
        Ok(Freshness::Fresh { refreshed }) => {
            if let Some(fp) = refreshed {
                refreshes.push((record.clone(), fp));
            }
            None
        }
        Ok(Freshness::Stale(c)) => Some(c),
        // Unreadable now (permissions): it is not what was seen.
        Err(_) => Some(Change::Content),
    }
}

/// Is `record` still what the agent saw? `None` when it is; the change
/// when not. A fresh file whose check found a fingerprint worth storing
/// (a new identity, an aged stat) has it stored, only onto this very record
/// (see [`Store::refresh`]), and `record` then holds it.
pub(crate) fn check(store: &Store, sid: &str, record: &mut FileRecord) -> Option<Change> {
    match fingerprint::freshness(&record.path, &record.fingerprint) {
        Ok(Freshness::Fresh { refreshed }) => {
            if let Some(fp) = refreshed {
                // Saves a hash next time; a failure changes no verdict.
                if let Ok(true) = store.refresh(sid, record, &fp) {
                    record.fingerprint = fp;
                }
            }
            None
        }
        Ok(Freshness::Stale(c)) => Some(c),
        // Unreadable now (permissions): it is not what was seen.
        Err(_) => Some(Change::Content),
    }
}

/// A file's diff, or why there is none.
pub(crate) struct Described {
    pub diff: Option<String>,
    pub truncated: usize,
    pub note: Option<String>,
}

fn note(n: impl Into<String>) -> Described {
    Described {
        diff: None,
        truncated: 0,
        note: Some(n.into()),
    }
}

/// What is at a changed file's path now, for its diff.
#[derive(Clone, Copy)]
pub(crate) enum Now<'a> {
    /// The file's bytes.
    Bytes(&'a [u8]),
    TooLarge,
    Unreadable,
    /// Deleted, or no longer a regular file.
    Gone,
}

/// The diff from the text the agent was shown (its best kept view) to
/// what is at the path `now`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn describe(
    store: &Store,
    record: &FileRecord,
    views: &[ViewRecord],
    change: Change,
    now: Now<'_>,
    cwd: &Path,
    crlf: bool,
    per_file: usize,
    budget: &mut usize,
) -> Result<Described> {
    match change {
        Change::Deleted => return Ok(note("deleted")),
        Change::Type => {
            let what = std::fs::symlink_metadata(&record.path)
                .map(|m| fingerprint::FileType::of(&m).describe())
                .unwrap_or("something else");
            return Ok(note(format!("now {what}")));
        }
        Change::Content | Change::Replaced => {}
    }
    let Some(view) = best_kept(views) else {
        let why = if views.iter().all(|v| v.kind == Kind::Processed) {
            "seen only as processed context; no diff"
        } else {
            "the viewed text was not kept; no diff"
        };
        return Ok(note(why));
    };
    let Some(old) = store.text(view.text_hash.as_ref().expect("picked with a text"))? else {
        return Ok(note(
            "the viewed text was dropped to keep the session small; no diff",
        ));
    };
    let new = match now {
        Now::Bytes(b) => b,
        Now::TooLarge => return Ok(note("too large to diff")),
        Now::Unreadable | Now::Gone => return Ok(note("unreadable now; no diff")),
    };
    // The lines viewed, where they are now: found (moved by lines added
    // or removed above them), else at the same line numbers.
    let (new, now_lines) = match view.kind {
        Kind::Full => (new, None),
        _ => match seen_now(&old, new, view.offset) {
            Some((first, count)) => (slice_lines(new, first, count), Some((first, count))),
            None => (slice_lines(new, view.offset, view.lines), None),
        },
    };
    Ok(diff(
        &old,
        new,
        &record.path,
        "as viewed",
        lines_of(view),
        now_lines,
        cwd,
        crlf,
        per_file,
        budget,
    ))
}

/// Where the lines `old` (which began at line `offset`) are in `new`, the
/// file's bytes now: first line and count ([`crate::merge::locate_seen`]).
pub(crate) fn seen_now(old: &[u8], new: &[u8], offset: u64) -> Option<(u64, u64)> {
    let (Ok(old), Ok(new)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        return None;
    };
    let (start, end) = crate::merge::locate_seen(old, new, offset as usize)?;
    Some((start as u64 + 1, (end - start) as u64))
}

/// The view whose kept text a diff starts from: a full one, else the start,
/// else a range.
pub(crate) fn best_kept(views: &[ViewRecord]) -> Option<&ViewRecord> {
    let pick = |k: Kind| views.iter().find(|v| v.kind == k && v.text_hash.is_some());
    pick(Kind::Full)
        .or_else(|| pick(Kind::Start))
        .or_else(|| pick(Kind::Range))
}

/// The lines a view covers: `None` for a full view, else its first line
/// and how many.
pub(crate) fn lines_of(view: &ViewRecord) -> Option<(u64, u64)> {
    (view.kind != Kind::Full).then_some((view.offset, view.lines))
}

/// A unified diff from `old` (the text `label` names) to `new` of the file
/// at `path`, both already cut to `lines` (see [`lines_of`]; `new` to
/// `now_lines` when those lines are elsewhere now), numbered as lines of
/// the file, capped by `per_file` and `budget`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn diff(
    old: &[u8],
    new: &[u8],
    path: &Path,
    label: &str,
    lines: Option<(u64, u64)>,
    now_lines: Option<(u64, u64)>,
    cwd: &Path,
    crlf: bool,
    per_file: usize,
    budget: &mut usize,
) -> Described {
    if memchr::memchr(0, &new[..new.len().min(8192)]).is_some() {
        return note("now binary; no diff");
    }
    let old = String::from_utf8_lossy(old);
    let new = String::from_utf8_lossy(new);
    // Line ends as the agent's read shows them (see [`Limits::crlf_as_lf`]).
    let (old, new) = match crlf {
        true => (
            Cow::Owned(old.replace("\r\n", "\n")),
            Cow::Owned(new.replace("\r\n", "\n")),
        ),
        false => (old, new),
    };
    // Escaped as every message escapes a path: a newline in a name would
    // break the diff's header in two.
    let name = crate::error::quote(&crate::paths::display(cwd, path));
    // Saturating: a view may start at any line the session file can hold.
    let span = |(offset, count): (u64, u64)| match count {
        0 | 1 => format!(", line {offset}"),
        _ => format!(", lines {offset}-{}", offset.saturating_add(count - 1)),
    };
    let what = lines.map(span).unwrap_or_default();
    let moved = now_lines.filter(|&n| Some(n) != lines);
    let now = moved.map(span).unwrap_or_default();
    // A rewrite of most of a long file: a correct, longer diff after this
    // long, not one that takes half a minute to be the smallest.
    let text = TextDiff::configure()
        .timeout(std::time::Duration::from_millis(50))
        .diff_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(
            &format!("{name} ({label}{what})"),
            &format!("{name} (now{now})"),
        )
        .to_string();
    if text.is_empty() {
        // The shown part is the same; the change lies outside it.
        return note(match (lines, moved) {
            (None, _) => {
                "the bytes differ, not the text as shown (bytes that are not UTF-8)".into()
            }
            (Some(_), None) => "changed outside the lines viewed".to_string(),
            (Some(_), Some(at)) => format!(
                "changed outside the lines viewed, which are{} now",
                span(at).trim_start_matches(',')
            ),
        });
    }
    // Numbered as lines of the file, not of the cut.
    let text = match lines {
        None => text,
        Some((offset, _)) => {
            let to = now_lines.map_or(offset, |(first, _)| first);
            shift_hunks(&text, offset - 1, to - 1)
        }
    };
    let (diff, cut) = cap(&text, per_file.min(*budget));
    *budget = budget.saturating_sub(diff.lines().count());
    Described {
        diff: Some(diff),
        truncated: cut,
        note: None,
    }
}

/// `diff` with each hunk header's old line numbers moved by `old_by` and
/// its new ones by `new_by`.
fn shift_hunks(diff: &str, old_by: u64, new_by: u64) -> String {
    if old_by == 0 && new_by == 0 {
        return diff.to_string();
    }
    diff.split_inclusive('\n')
        .map(|l| shift_hunk_header(l, old_by, new_by).unwrap_or_else(|| l.to_string()))
        .collect()
}

/// `@@ -a,b +c,d @@` with `old_by` added to its old start and `new_by` to
/// its new one; `None` when `line` is no hunk header.
pub fn shift_hunk_header(line: &str, old_by: u64, new_by: u64) -> Option<String> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, tail) = rest.split_once(" @@")?;
    let shift = |range: &str, by: u64| -> Option<String> {
        let (start, len) = match range.split_once(',') {
            Some((s, l)) => (s, Some(l)),
            None => (range, None),
        };
        let start: u64 = start.parse().ok()?;
        Some(match len {
            Some(l) => format!("{},{l}", start + by),
            None => (start + by).to_string(),
        })
    };
    Some(format!(
        "@@ -{} +{} @@{tail}",
        shift(old, old_by)?,
        shift(new, new_by)?
    ))
}

/// Keep at most `max` lines of `text`, then a marker naming how many were cut.
fn cap(text: &str, max: usize) -> (String, usize) {
    let total = text.lines().count();
    if total <= max {
        return (text.to_string(), 0);
    }
    let mut out: String = text.lines().take(max).flat_map(|l| [l, "\n"]).collect();
    let cut = total - max;
    out.push_str(&format!("[{cut} lines truncated]\n"));
    (out, cut)
}

/// The file's text, or `None` when it is too large to diff. A UTF-16
/// file's is its text in UTF-8, as a read shows it and keeps it.
pub(crate) fn read_capped(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let f = fingerprint::open_nonblocking(path)?;
    if f.metadata()?.len() > MAX_DIFF_FILE {
        return Ok(None);
    }
    let mut buf = Vec::new();
    f.take(MAX_DIFF_FILE + 1).read_to_end(&mut buf)?;
    Ok(Some(crate::encoding::as_shown(buf)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_lines() {
        let b = b"1\n2\n3\n4\n";
        assert_eq!(slice_lines(b, 2, 2), b"2\n3\n");
        assert_eq!(slice_lines(b, 4, 5), b"4\n");
        assert_eq!(slice_lines(b, 9, 1), b"");
    }

    #[test]
    fn caps_with_marker() {
        let (s, n) = cap("a\nb\nc\nd\n", 2);
        assert_eq!(s, "a\nb\n[2 lines truncated]\n");
        assert_eq!(n, 2);
    }
}
