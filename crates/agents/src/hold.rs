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
use fsview_store::show::{self, changed_lines, slice_lines, ReadError, Request};
use fsview_store::store::NewView;
use fsview_store::{Kind, Source};

use crate::event::{Cell, Changed, Extent, Form, Patched, Shown, ShownText};
use crate::{charset, patch, Problem};

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
    /// Hold the view to its text under a fingerprint no file matches: the
    /// next check finds the file is not what the agent believes, and tells.
    pub fn never_fresh(&mut self) {
        self.fingerprint = never_fresh(&self.fingerprint, &self.shown);
        self.moved = true;
    }

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
            origin: None,
            conversation: None,
        }
    }
}

/// The whole of a file as fsview shows it itself, from one read that gives
/// both the text and the fingerprint the view is held to: `None` unless the
/// file is whole within `cap` bytes and `max_lines` lines of UTF-8 text
/// with no NUL and no `\r` (so its numbered text is exactly its bytes).
pub fn whole_text(canonical: &Path, cap: u64, max_lines: u64) -> Option<Held> {
    let disk = show::read(canonical, &Request::whole(cap)).ok()?;
    let plain = std::str::from_utf8(&disk.bytes).is_ok_and(|t| !t.contains(['\0', '\r']));
    if disk.kind != Kind::Full || disk.capped || disk.lines > max_lines || !plain {
        return None;
    }
    let held = Held {
        canonical: canonical.to_path_buf(),
        kind: Kind::Full,
        offset: disk.offset,
        lines: disk.lines,
        total_lines: disk.total_lines,
        shown: disk.bytes,
        fingerprint: disk.fingerprint,
        keep_text: true,
        moved: false,
    };
    Some(held)
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
    Fingerprint::of_bytes(stat, fingerprint::now_ns(), text)
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
    let offset = s.offset.max(1);
    match &s.text {
        ShownText::Lines(text) => lines(canonical, text, offset, s.extent, Seen::Decoded),
        ShownText::Printed(p) => lines(canonical, &p.text, offset, s.extent, Seen::Printed(p.form)),
        ShownText::Processed(text) => processed(canonical, text, offset),
        ShownText::Cells(cells) => notebook(canonical, cells),
        ShownText::Trimmed(text) => lines(canonical, text, offset, s.extent, Seen::Trimmed),
    }
}

fn read_disk(canonical: &Path, req: &Request) -> Result<Option<show::Shown>, Problem> {
    match show::read(canonical, req) {
        Ok(d) => Ok(Some(d)),
        // What the tool decoded as text, fsview does not hold (UTF-16).
        Err(ReadError::Binary) => Ok(None),
        Err(e) => Err(read_problem(canonical, e)),
    }
}

/// Where the last `n` lines of the file start, from the disk.
fn tail_offset(canonical: &Path, n: u64) -> Result<Option<u64>, Problem> {
    let Some(disk) = read_disk(canonical, &Request::whole(READ_CAP))? else {
        return Ok(None);
    };
    if disk.kind != Kind::Full || n > disk.lines {
        return Ok(None);
    }
    Ok(Some(disk.lines - n + 1))
}

/// `text` without the trailing whitespace of each of its lines, as a tool
/// that trims them shows it (`\r` of a `\r\n` is trailing whitespace too);
/// `None` when it is not UTF-8 (decoded some other way first).
fn trim_lines(text: &[u8]) -> Option<Vec<u8>> {
    Some(
        std::str::from_utf8(text)
            .ok()?
            .split('\n')
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes(),
    )
}

/// U+FFFD, as a decoder puts it in place of bytes it cannot read.
const REPLACED: [u8; 3] = [0xEF, 0xBF, 0xBD];

/// `text` as printed off a terminal, which prints each "\n" as "\r\n":
/// `None` unless every newline has its "\r".
fn untty(text: &[u8]) -> Option<Vec<u8>> {
    let newlines = text.iter().filter(|&&b| b == b'\n').count();
    let crlf = text.windows(2).filter(|w| w == b"\r\n").count();
    if newlines == 0 || crlf != newlines {
        return None;
    }
    let mut out = Vec::with_capacity(text.len());
    for (i, &b) in text.iter().enumerate() {
        if b == b'\r' && text.get(i + 1) == Some(&b'\n') {
            continue;
        }
        out.push(b);
    }
    Some(out)
}

fn trim_ascii(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}

/// How a tool's text shows the file's lines.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// The bytes, or decoded ([`decoded`]: no BOM, `\r\n` as `\n`); text
    /// that is neither is what the agent saw, held never fresh.
    Decoded,
    /// A command's output, shown in this form: the text must be what the
    /// disk holds, else nothing is recorded.
    Printed(Form),
    /// Each line without its trailing whitespace (Qwen Code's read_file):
    /// the model saw every character of those lines but the invisible
    /// ends, as a tool that shows `\r\n` as `\n` hides the `\r`.
    Trimmed,
}

/// The view of `text`, shown from line `offset` of the file with `extent`:
/// the disk's lines when they are what was shown (as `seen` says a tool
/// shows them), else the shown text, never fresh.
fn lines(
    canonical: &Path,
    text: &str,
    mut offset: u64,
    extent: Extent,
    seen_as: Seen,
) -> Result<Option<Held>, Problem> {
    let exact = matches!(seen_as, Seen::Printed(_));
    let text = text.as_bytes();
    let n = show::count_lines(text);
    if n == 0 && (extent != Extent::Whole || offset > 1) {
        return Ok(None); // nothing was shown
    }
    if extent == Extent::Tail {
        match tail_offset(canonical, n) {
            Ok(Some(o)) => offset = o,
            Err(e) if !exact => return Err(e),
            _ => return Ok(None),
        }
    }
    let req = match extent {
        Extent::Whole => Request::whole(READ_CAP),
        Extent::Start | Extent::Range | Extent::Tail => Request {
            offset: Some(offset),
            limit: Some(n),
            cap: READ_CAP,
        },
    };
    let disk = match read_disk(canonical, &req) {
        Ok(Some(d)) => d,
        // A command's output of what is no text file shows none.
        Err(_) if exact => return Ok(None),
        other => match other? {
            Some(d) => d,
            None => return Ok(None),
        },
    };
    // A tool shows the file's bytes, or decodes (or trims) them.
    let shows = |bytes: &[u8]| -> Option<Vec<u8>> {
        Some(match seen_as {
            Seen::Trimmed => trim_lines(bytes)?,
            Seen::Decoded | Seen::Printed(_) => decoded(bytes, offset == 1).into_owned(),
        })
    };
    // A terminal printed each "\n" as "\r\n".
    let off_terminal = match seen_as {
        Seen::Printed(Form::Terminal) => untty(text),
        _ => None,
    };
    let texts: Vec<&[u8]> = std::iter::once(text)
        .chain(off_terminal.as_deref())
        .collect();
    let matches = |seen: Option<&[u8]>| match (seen_as, extent) {
        // Only the whitespace at the ends was left out.
        (Seen::Printed(Form::Trimmed), _) => {
            (extent != Extent::Whole || disk.kind == Kind::Full)
                && trim_ascii(&disk.bytes) == trim_ascii(text)
        }
        (_, Extent::Whole) => {
            disk.kind == Kind::Full && texts.iter().any(|t| seen == Some(*t) || disk.bytes == *t)
        }
        (_, Extent::Start | Extent::Range | Extent::Tail) => texts.iter().any(|t| {
            [seen, Some(&disk.bytes[..])]
                .iter()
                .flatten()
                .any(|s| *s == *t || s.strip_suffix(b"\n") == Some(*t))
        }),
    };
    let mut same = matches(shows(&disk.bytes).as_deref());
    if !same && !exact {
        // Bytes that are not UTF-8, shown decoded by the tool: the same
        // text under the encoding it chose is a view of those bytes.
        same = charset::decodings(&disk.bytes).any(|d| matches(shows(d.as_bytes()).as_deref()));
        if !same
            && std::str::from_utf8(&disk.bytes).is_err()
            && text.windows(3).any(|w| w == REPLACED)
        {
            // Decoded lossily: the model saw U+FFFD where bytes it could
            // not read are. Not the file: a processed view, which lets no
            // change through (a write would destroy those bytes).
            return Ok(Some(Held {
                canonical: canonical.to_path_buf(),
                kind: Kind::Processed,
                offset,
                lines: n,
                total_lines: disk.total_lines,
                fingerprint: disk.fingerprint,
                shown: text.to_vec(),
                keep_text: true,
                moved: false,
            }));
        }
    }
    if exact && !same {
        return Ok(None);
    }
    let kind = match extent {
        Extent::Whole => Kind::Full,
        Extent::Start => Kind::Start,
        // A slice that covered every byte is the whole file.
        Extent::Range | Extent::Tail if same => disk.kind,
        Extent::Range | Extent::Tail => Kind::Range,
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

/// Lines shown altered (shortened): a `processed` view of them, held to
/// the disk as it is now. Nothing can compare them with the disk, and a
/// processed view lets no change through, so a change before the hook is
/// caught by the gate all the same.
fn processed(canonical: &Path, text: &str, offset: u64) -> Result<Option<Held>, Problem> {
    let Some(disk) = read_disk(canonical, &Request::whole(READ_CAP))? else {
        return Ok(None);
    };
    Ok(Some(Held {
        canonical: canonical.to_path_buf(),
        kind: Kind::Processed,
        offset,
        lines: show::count_lines(text.as_bytes()),
        total_lines: disk.total_lines,
        shown: text.as_bytes().to_vec(),
        fingerprint: disk.fingerprint,
        keep_text: true,
        moved: false,
    }))
}

/// A notebook is shown as its cells, not as its JSON (outputs, metadata):
/// a `processed` view, which lets the cells be changed by id but the file
/// not be written whole. Held to the disk when its cells are the ones
/// shown; else the cells shown, never fresh.
fn notebook(canonical: &Path, cells: &[Cell]) -> Result<Option<Held>, Problem> {
    let Some(disk) = read_disk(canonical, &Request::whole(READ_CAP))? else {
        return Ok(None);
    };
    let same = disk.kind == Kind::Full
        && cells_of(&disk.bytes).is_some_and(|on_disk| {
            on_disk.len() == cells.len()
                && on_disk.iter().zip(cells).all(|(d, c)| {
                    // A notebook without cell ids gets made-up ones shown.
                    d.source == c.source && (d.id.is_none() || d.id == c.id)
                })
        });
    if same {
        return Ok(Some(Held {
            canonical: canonical.to_path_buf(),
            kind: Kind::Processed,
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
        kind: Kind::Processed,
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
pub fn cells_of(bytes: &[u8]) -> Option<Vec<Cell>> {
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

/// The views of a file the agent patched. `known`: the text of the agent's
/// full view of the file before the patch, if it had one.
///
/// Once the tool applied the patch, the agent knows the whole file when
/// its full view with the patch applied is exactly the disk; otherwise it
/// knows the lines its chunks wrote, where the disk holds them. A patch
/// about to be applied (no report follows) is held to what it will make of
/// the file now on disk: the views are fresh only once the disk holds
/// exactly that, so a patch that fails, or a change landing after it,
/// is never taken as seen.
pub fn patched(canonical: &Path, before: Before<'_>, p: &Patched) -> Result<Vec<Held>, Problem> {
    let disk = show::read_written(canonical, KEEP).map_err(|e| read_problem(canonical, e))?;
    // Too big to hold, or not text: nothing is recorded.
    let Some(now) = disk
        .bytes
        .as_deref()
        .and_then(|b| std::str::from_utf8(b).ok())
    else {
        return Ok(Vec::new());
    };
    let same = |a: &str, b: &str| decoded(a.as_bytes(), true) == decoded(b.as_bytes(), true);
    let known = before.known.and_then(|k| std::str::from_utf8(k).ok());
    if p.applied {
        let after = match &p.text {
            Some(t) => Some(t.clone()),
            None => known
                .and_then(|k| patch::apply(k, &p.chunks))
                .map(|(t, _)| t),
        };
        if after.as_deref().is_some_and(|a| same(a, now)) {
            return Ok(vec![held(canonical, now, &disk.fingerprint, None)]);
        }
        // The disk is not what the agent's text makes of it. It is still
        // the file the agent's views were of with only this patch applied
        // (the tool matched a line more loosely than fsview does) when
        // taking the patch back out gives those views' bytes; anything
        // else also changed the file, and what the agent wrote is held
        // never fresh, so that change is told, never taken as seen.
        let only_this = p.text.is_none()
            && before.hash.is_some_and(|h| {
                patch::unapply(now, &p.chunks).is_some_and(|candidates| {
                    candidates
                        .iter()
                        .any(|c| fingerprint::hash_bytes(c.as_bytes()) == h)
                })
            });
        if only_this {
            return Ok(match known {
                Some(_) => vec![held(canonical, now, &disk.fingerprint, None)],
                None => patch::locate(now, &p.chunks)
                    .into_iter()
                    .map(|span| held(canonical, now, &disk.fingerprint, Some(span)))
                    .collect(),
            });
        }
        return Ok(match after {
            Some(a) => vec![held(
                canonical,
                &a,
                &never_fresh(&disk.fingerprint, a.as_bytes()),
                None,
            )],
            None => patch::locate(now, &p.chunks)
                .into_iter()
                .map(|span| {
                    let lines = slice_lines(now.as_bytes(), span.0, span.1);
                    held(
                        canonical,
                        now,
                        &never_fresh(&disk.fingerprint, lines),
                        Some(span),
                    )
                })
                .collect(),
        });
    }
    let (after, spans) = match &p.text {
        Some(t) => (t.clone(), Vec::new()),
        None => match patch::apply(now, &p.chunks) {
            Some(x) => x,
            None => return Ok(Vec::new()),
        },
    };
    let fingerprint = expected(&disk.fingerprint, after.as_bytes());
    if p.text.is_some() || known.is_some_and(|k| same(k, now)) {
        return Ok(vec![held(canonical, &after, &fingerprint, None)]);
    }
    Ok(spans
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .map(|span| held(canonical, &after, &fingerprint, Some(span)))
        .collect())
}

/// What the agent's views of a file held before its change: the text of
/// its `full` view, if it had one, and the hash of the bytes its views
/// were of.
#[derive(Clone, Copy, Debug, Default)]
pub struct Before<'a> {
    pub known: Option<&'a [u8]>,
    pub hash: Option<fingerprint::Hash>,
}

/// The view of a file a patch is about to create with `text` (no report
/// will follow): fresh only once a file there holds exactly `text`.
pub fn to_be_created(canonical: &Path, text: &str) -> Held {
    let mut stat = fingerprint::Stat {
        dev: 0,
        ino: 0,
        btime_ns: None,
        ftype: fingerprint::FileType::File,
        size: text.len() as u64,
        mtime_ns: i64::MIN,
        ctime_ns: i64::MIN,
    };
    stat.forget_identity();
    let fp = Fingerprint::of_bytes(stat, fingerprint::now_ns(), text.as_bytes());
    held(canonical, text, &fp, None)
}

/// The fingerprint of the file at its present identity once it holds
/// `text`: its size and hash, and an mtime no file has, so the first check
/// hashes the file and decides by content.
fn expected(disk: &Fingerprint, text: &[u8]) -> Fingerprint {
    let mut stat = disk.stat;
    stat.mtime_ns = i64::MIN;
    stat.size = text.len() as u64;
    Fingerprint::of_bytes(stat, fingerprint::now_ns(), text)
}

/// A view of `text` (the whole file as `fingerprint` says it is): all of
/// it, or the lines of `span`.
fn held(
    canonical: &Path,
    text: &str,
    fingerprint: &Fingerprint,
    span: Option<patch::Span>,
) -> Held {
    let bytes = text.as_bytes();
    let total = show::count_lines(bytes);
    let (kind, offset, lines, shown) = match span {
        None => (Kind::Full, 1, total, bytes),
        Some((o, n)) => (Kind::Range, o, n, slice_lines(bytes, o, n)),
    };
    Held {
        canonical: canonical.to_path_buf(),
        kind,
        offset,
        lines,
        total_lines: Some(total),
        shown: shown.to_vec(),
        fingerprint: fingerprint.clone(),
        keep_text: true,
        moved: false,
    }
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
