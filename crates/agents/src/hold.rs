//! Holding what a tool reports against the disk.
//!
//! A hook runs after the agent's tool, and the file may have changed in
//! between (an editor's autosave, a formatter hook running beside ours).
//! So the view is built from what the tool reports it showed or wrote, and
//! the disk only vouches for it: when the disk still holds that text, the
//! view takes the disk's fingerprint and is fresh; when it does not, the view
//! keeps the reported text under a fingerprint no file can match (the disk's
//! identity, an impossible mtime, the hash of the reported text), so the next
//! check hashes the file, finds it is not what the agent saw, and reports the
//! change with a diff. Nothing the tool did not report is ever taken as seen.
//!
//! The comparison allows for how a tool decodes text, and nothing else:
//! `\r\n` shown as `\n`, a UTF-8 byte-order mark dropped at the start of the
//! file, and the newline of the last line shown left out of a slice.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use fsview_store::fingerprint::{self, Fingerprint};
use fsview_store::show::{self, ReadError, Request};
use fsview_store::store::NewView;
use fsview_store::{Kind, Source};

use crate::event::{Cell, Changed, Extent, Shown, ShownText};
use crate::Problem;

/// The most of a file a whole-file read is compared with: far above what an
/// agent's Read shows (Claude Code refuses 256 KB unless told otherwise).
const READ_CAP: u64 = 16 * 1024 * 1024;

/// Files up to this size keep their text with the view, for later diffs.
const KEEP: u64 = 8 * 1024 * 1024;

/// A view ready to record.
#[derive(Clone, Debug)]
pub struct Held {
    pub canonical: PathBuf,
    pub kind: Kind,
    pub offset: u64,
    pub lines: u64,
    pub total_lines: Option<u64>,
    pub shown: Vec<u8>,
    pub fingerprint: Fingerprint,
    pub keep_text: bool,
    /// The disk no longer held what the tool reported: the view holds the
    /// reported text and will not be fresh.
    pub moved: bool,
}

impl Held {
    pub fn view(&self, source: Source) -> NewView<'_> {
        NewView {
            path: &self.canonical,
            fingerprint: &self.fingerprint,
            kind: self.kind,
            source,
            offset: self.offset,
            lines: self.lines,
            total_lines: self.total_lines,
            shown: &self.shown,
            keep_text: self.keep_text,
        }
    }
}

/// The text as a tool that decodes it shows it: `\r\n` as `\n`, and without
/// a UTF-8 byte-order mark when `at_start` (the bytes begin the file).
pub fn decoded(bytes: &[u8], at_start: bool) -> Cow<'_, [u8]> {
    let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) if at_start => rest,
        _ => bytes,
    };
    if memchr_crlf(bytes) {
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                i += 1;
                continue;
            }
            out.push(bytes[i]);
            i += 1;
        }
        Cow::Owned(out)
    } else {
        Cow::Borrowed(bytes)
    }
}

fn memchr_crlf(b: &[u8]) -> bool {
    b.windows(2).any(|w| w == b"\r\n")
}

/// A fingerprint that no file can match: the disk file's identity and size,
/// an mtime no file has, and the hash of `text`. The next check hashes the
/// file and decides by content.
fn never_fresh(disk: &Fingerprint, text: &[u8]) -> Fingerprint {
    let mut stat = disk.stat;
    stat.mtime_ns = i64::MIN;
    Fingerprint {
        stat,
        taken_ns: fingerprint::now_ns(),
        hash: Some(fingerprint::hash_bytes(text)),
    }
}

fn read_problem(path: &Path, e: ReadError) -> Problem {
    match e {
        ReadError::NotAFile(ft) => Problem::new(format!(
            "{} is {}; only regular files are recorded",
            fsview_store::error::quote(path),
            ft.describe()
        )),
        ReadError::Binary => Problem::new(format!(
            "{} looks binary (a NUL byte in its first 8 KiB); only text files are recorded",
            fsview_store::error::quote(path)
        )),
        ReadError::Io(e) => fsview_store::Error::io("read", path, &e).into(),
    }
}

/// The view of what a read showed, held against the disk; `None` when
/// nothing was shown or the file is not text fsview can hold.
pub fn shown(canonical: &Path, s: &Shown) -> Result<Option<Held>, Problem> {
    match &s.text {
        ShownText::Lines(text) => lines(canonical, text, s.offset.max(1), s.extent),
        ShownText::Cells(cells) => notebook(canonical, cells),
        ShownText::Trimmed(text) => trimmed(canonical, text, s.offset.max(1), s.extent),
    }
}

/// `text` without the trailing whitespace of each of its lines, as a tool
/// that trims them shows it (`\r` of a `\r\n` is trailing whitespace too).
fn trim_lines(text: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(text)
        .split('\n')
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .into_bytes()
}

/// Lines shown with their trailing whitespace trimmed: the view holds the
/// disk's lines (as [`lines`] would) when, trimmed the same way, they are
/// the lines shown; otherwise the shown text, never fresh. The model saw
/// every character of those lines but the invisible ends, as a tool that
/// shows `\r\n` as `\n` hides the `\r`.
fn trimmed(
    canonical: &Path,
    text: &str,
    offset: u64,
    extent: Extent,
) -> Result<Option<Held>, Problem> {
    let text = text.as_bytes();
    let n = show::count_lines(text);
    if n == 0 && (extent != Extent::Whole || offset > 1) {
        return Ok(None); // nothing was shown
    }
    let req = match extent {
        Extent::Whole => Request::whole(READ_CAP),
        Extent::Start | Extent::Range => Request {
            offset: Some(offset),
            limit: Some(n),
            cap: READ_CAP,
        },
    };
    let disk = match show::read(canonical, &req) {
        Ok(d) => d,
        Err(ReadError::Binary) => return Ok(None),
        Err(e) => return Err(read_problem(canonical, e)),
    };
    let seen = trim_lines(&disk.bytes);
    let same = match extent {
        Extent::Whole => seen == text && disk.kind == Kind::Full,
        Extent::Start | Extent::Range => {
            seen == text
                || trim_lines(disk.bytes.strip_suffix(b"\n").unwrap_or(&disk.bytes)) == text
        }
    };
    let kind = match extent {
        Extent::Whole => Kind::Full,
        Extent::Start => Kind::Start,
        Extent::Range if same => disk.kind,
        Extent::Range => Kind::Range,
    };
    if same {
        return Ok(Some(Held {
            canonical: canonical.to_path_buf(),
            kind,
            offset: disk.offset,
            lines: disk.lines,
            total_lines: disk.total_lines,
            shown: disk.bytes,
            fingerprint: disk.fingerprint,
            keep_text: true,
            moved: false,
        }));
    }
    Ok(Some(Held {
        canonical: canonical.to_path_buf(),
        kind,
        offset,
        lines: n,
        total_lines: None,
        fingerprint: never_fresh(&disk.fingerprint, text),
        shown: text.to_vec(),
        keep_text: true,
        moved: true,
    }))
}

fn lines(
    canonical: &Path,
    text: &str,
    offset: u64,
    extent: Extent,
) -> Result<Option<Held>, Problem> {
    let text = text.as_bytes();
    let n = show::count_lines(text);
    if n == 0 && (extent != Extent::Whole || offset > 1) {
        return Ok(None); // nothing was shown
    }
    let req = match extent {
        Extent::Whole => Request::whole(READ_CAP),
        Extent::Start | Extent::Range => Request {
            offset: Some(offset),
            limit: Some(n),
            cap: READ_CAP,
        },
    };
    let disk = match show::read(canonical, &req) {
        Ok(d) => d,
        // What the tool decoded as text, fsview does not hold (UTF-16).
        Err(ReadError::Binary) => return Ok(None),
        Err(e) => return Err(read_problem(canonical, e)),
    };
    let seen = decoded(&disk.bytes, offset == 1);
    let same = match extent {
        Extent::Whole => seen.as_ref() == text && disk.kind == Kind::Full,
        Extent::Start | Extent::Range => {
            seen.as_ref() == text || seen.strip_suffix(b"\n") == Some(text)
        }
    };
    let kind = match extent {
        Extent::Whole => Kind::Full,
        Extent::Start => Kind::Start,
        // A slice that covered every byte is the whole file.
        Extent::Range if same => disk.kind,
        Extent::Range => Kind::Range,
    };
    if same {
        return Ok(Some(Held {
            canonical: canonical.to_path_buf(),
            kind,
            offset: disk.offset,
            lines: disk.lines,
            total_lines: disk.total_lines,
            shown: disk.bytes,
            fingerprint: disk.fingerprint,
            keep_text: true,
            moved: false,
        }));
    }
    Ok(Some(Held {
        canonical: canonical.to_path_buf(),
        kind,
        offset,
        lines: n,
        total_lines: None,
        fingerprint: never_fresh(&disk.fingerprint, text),
        shown: text.to_vec(),
        keep_text: true,
        moved: true,
    }))
}

/// A notebook is shown as its cells; the view is of the whole file when the
/// disk's cells are the ones shown.
fn notebook(canonical: &Path, cells: &[Cell]) -> Result<Option<Held>, Problem> {
    let disk = match show::read(canonical, &Request::whole(READ_CAP)) {
        Ok(d) => d,
        Err(ReadError::Binary) => return Ok(None),
        Err(e) => return Err(read_problem(canonical, e)),
    };
    let same = disk.kind == Kind::Full
        && disk_cells(&disk.bytes).is_some_and(|on_disk| {
            on_disk.len() == cells.len()
                && on_disk.iter().zip(cells).all(|(d, c)| {
                    // A notebook without cell ids gets made-up ones shown.
                    d.source == c.source && (d.id.is_none() || d.id == c.id)
                })
        });
    if same {
        return Ok(Some(Held {
            canonical: canonical.to_path_buf(),
            kind: Kind::Full,
            offset: 1,
            lines: disk.lines,
            total_lines: disk.total_lines,
            shown: disk.bytes,
            fingerprint: disk.fingerprint,
            keep_text: true,
            moved: false,
        }));
    }
    let rendered: String = cells
        .iter()
        .map(|c| format!("# cell {}\n{}\n", c.id.as_deref().unwrap_or("-"), c.source))
        .collect();
    Ok(Some(Held {
        canonical: canonical.to_path_buf(),
        kind: Kind::Full,
        offset: 1,
        lines: show::count_lines(rendered.as_bytes()),
        total_lines: None,
        fingerprint: never_fresh(&disk.fingerprint, rendered.as_bytes()),
        shown: rendered.into_bytes(),
        keep_text: true,
        moved: true,
    }))
}

/// The cells of a notebook file: each one's id, if it has one, and its
/// source (a string, or a list of strings to join).
fn disk_cells(bytes: &[u8]) -> Option<Vec<Cell>> {
    let doc: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    doc.get("cells")?
        .as_array()?
        .iter()
        .map(|c| {
            let source = match c.get("source")? {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(parts) => parts
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Option<Vec<_>>>()?
                    .concat(),
                _ => return None,
            };
            let id = c.get("id").and_then(|i| i.as_str()).map(String::from);
            Some(Cell { id, source })
        })
        .collect()
}

/// The view of a change the agent made, held against the disk. `knew_all`:
/// before the change the agent had seen exactly the whole of what the tool
/// changed.
pub fn changed(canonical: &Path, c: &Changed, knew_all: bool) -> Result<Held, Problem> {
    let mut disk = show::read_written(canonical, KEEP).map_err(|e| read_problem(canonical, e))?;
    let text = c.text.as_bytes();
    let same = match &disk.bytes {
        Some(bytes) => decoded(bytes, true).as_ref() == decoded(text, true).as_ref(),
        None => disk.fingerprint.hash == Some(fingerprint::hash_bytes(text)),
    };
    let moved = !same;
    if moved {
        disk.fingerprint = never_fresh(&disk.fingerprint, text);
        disk.lines = show::count_lines(text);
        disk.bytes = (text.len() as u64 <= KEEP).then(|| text.to_vec());
    }
    let total = disk.lines;
    let whole = c.whole || knew_all || total == 0;
    let (offset, lines) = if whole {
        (1, total)
    } else {
        changed_lines(c.before.as_deref().unwrap_or(""), &c.text)
    };
    let shown = match &disk.bytes {
        Some(b) if whole => b.clone(),
        Some(b) => slice_lines(b, offset, lines).to_vec(),
        None => Vec::new(),
    };
    Ok(Held {
        canonical: canonical.to_path_buf(),
        kind: if whole { Kind::Full } else { Kind::Range },
        offset,
        lines,
        total_lines: Some(total),
        keep_text: disk.bytes.is_some(),
        shown,
        fingerprint: disk.fingerprint,
        moved,
    })
}

/// The lines of `after` that differ from `before` (first line, count): what
/// a targeted edit showed the agent of the file. A pure deletion is the line
/// where it happened.
pub fn changed_lines(before: &str, after: &str) -> (u64, u64) {
    let b: Vec<&str> = before.split_inclusive('\n').collect();
    let a: Vec<&str> = after.split_inclusive('\n').collect();
    let prefix = b.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let suffix = b[prefix..]
        .iter()
        .rev()
        .zip(a[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let first = prefix + 1;
    let last = a.len() - suffix;
    if a.is_empty() {
        return (1, 0);
    }
    if last < first {
        return (first.min(a.len()) as u64, 1);
    }
    (first as u64, (last - first + 1) as u64)
}

/// Lines `offset..offset+count` of `bytes`, with their newlines.
fn slice_lines(bytes: &[u8], offset: u64, count: u64) -> &[u8] {
    let mut start = 0;
    let mut line = 1;
    while line < offset {
        match bytes[start..].iter().position(|&b| b == b'\n') {
            Some(i) => start += i + 1,
            None => return &[],
        }
        line += 1;
    }
    let mut end = start;
    for _ in 0..count {
        match bytes[end..].iter().position(|&b| b == b'\n') {
            Some(i) => end += i + 1,
            None => {
                end = bytes.len();
                break;
            }
        }
    }
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_drops_crlf_and_a_leading_bom_only() {
        assert_eq!(decoded(b"a\r\nb\r\n", true).as_ref(), b"a\nb\n");
        assert_eq!(decoded(b"\xEF\xBB\xBFhi\n", true).as_ref(), b"hi\n");
        assert_eq!(
            decoded(b"\xEF\xBB\xBFhi\n", false).as_ref(),
            b"\xEF\xBB\xBFhi\n"
        );
        assert_eq!(decoded(b"a\rb", true).as_ref(), b"a\rb");
    }

    #[test]
    fn changed_lines_of_an_edit() {
        assert_eq!(changed_lines("a\nb\nc\n", "a\nB\nc\n"), (2, 1));
        assert_eq!(changed_lines("a\nb\nc\n", "a\nb\nc\nd\n"), (4, 1));
        assert_eq!(changed_lines("a\nb\nc\n", "x\ny\nb\nc\n"), (1, 2));
        // A deleted line: the line now where it was.
        assert_eq!(changed_lines("a\nb\nc\n", "a\nc\n"), (2, 1));
        assert_eq!(changed_lines("a\nb\n", "a\n"), (1, 1));
        assert_eq!(changed_lines("a\n", ""), (1, 0));
    }

    #[test]
    fn slices_of_lines() {
        assert_eq!(slice_lines(b"a\nb\nc", 2, 2), b"b\nc");
        assert_eq!(slice_lines(b"a\r\nb\r\n", 1, 1), b"a\r\n");
        assert_eq!(slice_lines(b"a\n", 3, 1), b"");
    }
}
