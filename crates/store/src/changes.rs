//! Which files changed since the agent saw them, and how.
//!
//! For the next turn's reminder: every file of the session whose views are
//! no longer fresh, with a unified diff (8 lines of context) from the text
//! the agent was shown to what is on disk now, where that text was kept.
//! Diffs are capped per file and in total; what is cut is counted in a
//! `[N lines truncated]` marker so the reader knows it is not the whole
//! story.

use std::io::Read;
use std::path::Path;

use similar::TextDiff;

use crate::error::Result;
use crate::fingerprint::{self, Change, Freshness};
use crate::store::{FileRecord, Store, ViewRecord};
use crate::view::Kind;

/// Files larger than this are reported without a diff.
const MAX_DIFF_FILE: u64 = 8 * 1024 * 1024;

pub const CONTEXT_LINES: usize = 8;

/// Caps on diff output, in lines.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub per_file: usize,
    pub total: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            per_file: 200,
            total: 1000,
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
}

/// Every file of session `sid` that is no longer what the agent saw.
/// Paths in diff headers are shown relative to `cwd` when below it.
pub fn changed(store: &Store, sid: &str, cwd: &Path, limits: Limits) -> Result<Vec<Changed>> {
    let mut out = Vec::new();
    let mut budget = limits.total;
    for record in store.files(sid)? {
        let change = match fingerprint::freshness(&record.path, &record.fingerprint) {
            Ok(Freshness::Fresh { refreshed }) => {
                if let Some(fp) = refreshed {
                    let _ = store.refresh(record.id, &fp);
                }
                continue;
            }
            Ok(Freshness::Stale(c)) => c,
            // Unreadable now (permissions): it is not what was seen.
            Err(_) => Change::Content,
        };
        let views = store.views(record.id)?;
        let (diff, truncated, note) = describe(
            store,
            &record,
            &views,
            change,
            cwd,
            limits.per_file,
            &mut budget,
        )?;
        out.push(Changed {
            record,
            change,
            diff,
            truncated,
            note,
        });
    }
    Ok(out)
}

type Described = (Option<String>, usize, Option<String>);

fn describe(
    store: &Store,
    record: &FileRecord,
    views: &[ViewRecord],
    change: Change,
    cwd: &Path,
    per_file: usize,
    budget: &mut usize,
) -> Result<Described> {
    match change {
        Change::Deleted => return Ok((None, 0, Some("deleted".into()))),
        Change::Type => {
            let what = std::fs::symlink_metadata(&record.path)
                .map(|m| fingerprint::FileType::of(&m).describe())
                .unwrap_or("something else");
            return Ok((None, 0, Some(format!("now {what}"))));
        }
        Change::Content | Change::Replaced => {}
    }
    let pick = |k: Kind| views.iter().find(|v| v.kind == k && v.text_hash.is_some());
    let Some(view) = pick(Kind::Full)
        .or_else(|| pick(Kind::Start))
        .or_else(|| pick(Kind::Range))
    else {
        let why = if views.iter().all(|v| v.kind == Kind::Processed) {
            "seen only as processed context; no diff"
        } else {
            "the viewed text was not kept; no diff"
        };
        return Ok((None, 0, Some(why.into())));
    };
    let Some(old) = store.text(view.text_hash.as_ref().expect("picked with a text"))? else {
        return Ok((
            None,
            0,
            Some("the viewed text was dropped to keep the session small; no diff".into()),
        ));
    };
    let new = match read_capped(&record.path) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok((None, 0, Some("too large to diff".into()))),
        Err(_) => return Ok((None, 0, Some("unreadable now; no diff".into()))),
    };
    if memchr::memchr(0, &new[..new.len().min(8192)]).is_some() {
        return Ok((None, 0, Some("now binary; no diff".into())));
    }
    let new = if view.kind == Kind::Full {
        new
    } else {
        slice_lines(&new, view.offset, view.lines).to_vec()
    };
    let old = String::from_utf8_lossy(&old);
    let new = String::from_utf8_lossy(&new);
    let name = crate::paths::display(cwd, &record.path)
        .display()
        .to_string();
    let what = match view.kind {
        Kind::Full => String::new(),
        _ => format!(
            ", lines {}-{}",
            view.offset,
            view.offset + view.lines.max(1) - 1
        ),
    };
    let text = TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(CONTEXT_LINES)
        .header(
            &format!("{name} (as viewed{what})"),
            &format!("{name} (now)"),
        )
        .to_string();
    if text.is_empty() {
        // The shown part is the same; the change lies outside it.
        let note = match view.kind {
            Kind::Full => "same text, another file".to_string(),
            _ => "changed outside the lines viewed".to_string(),
        };
        return Ok((None, 0, Some(note)));
    }
    let (diff, cut) = cap(&text, per_file.min(*budget));
    *budget = budget.saturating_sub(diff.lines().count());
    Ok((Some(diff), cut, None))
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

/// Lines `offset..offset+count` (1-based) of `bytes`.
fn slice_lines(bytes: &[u8], offset: u64, count: u64) -> &[u8] {
    let mut start = 0usize;
    let mut line = 1u64;
    let mut it = memchr::memchr_iter(b'\n', bytes);
    while line < offset {
        match it.next() {
            Some(i) => {
                start = i + 1;
                line += 1;
            }
            None => return &[],
        }
    }
    let mut end = bytes.len();
    let mut taken = 0;
    for i in it {
        taken += 1;
        if taken == count {
            end = i + 1;
            break;
        }
    }
    if count == 0 {
        end = start;
    }
    &bytes[start..end.max(start)]
}

fn read_capped(path: &Path) -> std::io::Result<Option<Vec<u8>>> {
    let f = fingerprint::open_nonblocking(path)?;
    if f.metadata()?.len() > MAX_DIFF_FILE {
        return Ok(None);
    }
    let mut buf = Vec::new();
    f.take(MAX_DIFF_FILE + 1).read_to_end(&mut buf)?;
    Ok(Some(buf))
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
