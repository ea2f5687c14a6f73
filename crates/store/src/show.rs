//! Reading a file the way an agent's Read tool shows it.
//!
//! A read opens the file once, never blocks (FIFOs and devices are refused by
//! type, before a byte is read), streams it in fixed-size chunks so a range
//! deep inside a huge file costs constant memory, and numbers the lines it
//! shows as `N<TAB>line`. The same pass yields the fingerprint of the file:
//! the stat of the open file taken before the first byte, and the SHA-256 of
//! every byte when the whole file was read (always for files up to
//! [`fingerprint::HASH_LIMIT`], which are read to the end even for a range,
//! and for every read that reaches the end from the start, whatever the
//! size).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::encoding::{self, Encoding};
use crate::fingerprint::{self, FileType, Fingerprint, Stat};
use crate::view::Kind;

/// The default cap on what a whole-file read shows: 256 KiB.
pub const DEFAULT_CAP: u64 = 256 * 1024;

/// How many leading bytes decide that a file is binary (a NUL among them).
const SNIFF_LEN: usize = 8 * 1024;

const CHUNK: usize = 256 * 1024;

/// What to show of a file.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// First line, 1-based; `None` for the start.
    pub offset: Option<u64>,
    /// How many lines; `None` for all (up to the cap).
    pub limit: Option<u64>,
    /// Most bytes of file text to show.
    pub cap: u64,
}

impl Request {
    pub fn whole(cap: u64) -> Request {
        Request {
            offset: None,
            limit: None,
            cap,
        }
    }

    pub fn is_range(&self) -> bool {
        self.offset.is_some() || self.limit.is_some()
    }
}

/// Why a file cannot be shown.
#[derive(Debug)]
pub enum ReadError {
    /// Not a regular file (a directory, FIFO, device, socket).
    NotAFile(FileType),
    /// A NUL byte in its first 8 KiB.
    Binary,
    Io(io::Error),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

/// What a read showed, and what the file was.
#[derive(Clone, Debug)]
pub struct Shown {
    pub kind: Kind,
    /// First line shown, 1-based.
    pub offset: u64,
    /// Lines shown.
    pub lines: u64,
    /// Lines in the file, when the whole file was read.
    pub total_lines: Option<u64>,
    /// The exact file bytes shown (whole lines, unless `cut_line`).
    pub bytes: Vec<u8>,
    /// The file's fingerprint at the moment of reading.
    pub fingerprint: Fingerprint,
    /// The cap cut the output short of what was asked.
    pub capped: bool,
    /// A single line longer than the cap was cut inside the line.
    pub cut_line: bool,
}

impl Shown {
    /// The numbered text, `N<TAB>line` per line, as the agent sees it. Bytes
    /// that are not UTF-8 are shown as U+FFFD; a `\r` ending a line (before
    /// `\n`, or at the end of what was shown) is dropped.
    pub fn numbered(&self) -> String {
        number_lines(&self.bytes, self.offset)
    }

    /// [`Shown::numbered`], written to `w`.
    pub fn write_numbered(&self, w: &mut impl io::Write) -> io::Result<()> {
        number_lines_to(&self.bytes, self.offset, w)
    }

    pub fn is_utf8(&self) -> bool {
        std::str::from_utf8(&self.bytes).is_ok()
    }

    /// Nothing of a file that has bytes was shown (an offset past its
    /// end): there is no view to record.
    pub fn shows_nothing(&self) -> bool {
        self.lines == 0 && self.fingerprint.stat.size > 0
    }

    /// The last line shown, or `offset - 1` when none was.
    pub fn last_line(&self) -> u64 {
        self.offset.saturating_add(self.lines).saturating_sub(1)
    }

    /// The same read (of `req`) as a cap of `cap` bytes would have shown
    /// it, when that shows less: its whole lines within `cap`, or the
    /// first line cut at `cap` when even it is longer (a front end whose
    /// client counts the numbered text otherwise than in file bytes).
    pub fn cut_to(mut self, cap: u64, req: &Request) -> Shown {
        if self.bytes.len() as u64 <= cap {
            return self;
        }
        self.bytes.truncate(cap as usize);
        self.cut_line = cut_to_lines(&mut self.bytes);
        self.lines = count_lines(&self.bytes);
        self.capped = true;
        self.kind = if req.is_range() {
            Kind::Range
        } else {
            Kind::Start
        };
        self
    }
}

/// Something a read's reader should know beyond the lines it shows; each
/// front end (fsview-read, fsview-mcp) words it for its own options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The file is empty.
    Empty,
    /// The offset lies past the end: `total` lines, when counted.
    PastEnd { offset: u64, total: Option<u64> },
    /// One line was longer than the cap: only its start was shown.
    CutLine { line: u64 },
    /// The cap cut the output: lines `first`-`last` (of `total`) were
    /// shown of `the range` asked for (`range`) or of the file; `next` reads
    /// on.
    Capped {
        first: u64,
        last: u64,
        total: Option<u64>,
        range: bool,
        next: u64,
    },
    /// Not UTF-8: invalid bytes were shown as U+FFFD.
    NotUtf8,
}

impl Shown {
    /// What a reader of this read, made with `req`, should be told.
    pub fn notices(&self, req: &Request) -> Vec<Notice> {
        let mut v = Vec::new();
        if self.fingerprint.stat.size == 0 {
            v.push(Notice::Empty);
        } else if self.lines == 0 && !self.cut_line {
            v.push(Notice::PastEnd {
                offset: req.offset.unwrap_or(1),
                total: self.total_lines,
            });
        }
        if self.cut_line {
            v.push(Notice::CutLine { line: self.offset });
        } else if self.capped {
            v.push(Notice::Capped {
                first: self.offset,
                last: self.last_line(),
                total: self.total_lines,
                range: req.is_range(),
                next: self.last_line().saturating_add(1),
            });
        }
        if !self.is_utf8() {
            v.push(Notice::NotUtf8);
        }
        v
    }
}

/// Number `bytes` as lines starting at `first`.
pub fn number_lines(bytes: &[u8], first: u64) -> String {
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len() + bytes.len() / 16 + 16);
    number_lines_to(bytes, first, &mut out).expect("writing to a Vec cannot fail");
    // Whole lines of valid UTF-8 (lossy conversion made it so), joined by
    // ASCII: still valid UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// [`number_lines`], written to `w` as it goes (valid UTF-8): a large read
/// is not built in memory a second time before it is written out.
pub fn number_lines_to(bytes: &[u8], first: u64, w: &mut impl io::Write) -> io::Result<()> {
    // from_utf8 is several times faster than the lossy walk on valid text.
    let text = match std::str::from_utf8(bytes) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    let text = text.as_bytes();
    let mut n = first;
    let mut start = 0;
    let mut digits = [0u8; 20];
    while start < text.len() {
        let end = crate::scan::find(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        let mut line = &text[start..end];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        w.write_all(format_u64(n, &mut digits))?;
        w.write_all(b"\t")?;
        w.write_all(line)?;
        w.write_all(b"\n")?;
        n += 1;
        start = end + 1;
    }
    Ok(())
}

/// `n` in decimal, without allocating.
fn format_u64(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Count lines the way they are numbered: a last line without `\n` counts.
pub fn count_lines(bytes: &[u8]) -> u64 {
    let nl = crate::scan::count(b'\n', bytes) as u64;
    if bytes.last().is_some_and(|&b| b != b'\n') {
        nl + 1
    } else {
        nl
    }
}

/// What a session recorded of a file's content: both hashes of the bytes
/// it saw ([`Fingerprint::hash`] and [`Fingerprint::quick`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    pub hash: fingerprint::Hash,
    pub quick: fingerprint::Quick,
}

impl Known {
    /// What `fp` says of the content, if it has both hashes.
    pub fn of(fp: &Fingerprint) -> Option<Known> {
        Some(Known {
            hash: fp.hash?,
            quick: fp.quick?,
        })
    }
}

/// Read `path` as `req` asks.
pub fn read(path: &Path, req: &Request) -> Result<Shown, ReadError> {
    read_known(path, req, None)
}

/// [`read`], for a file whose content the session may already know: a
/// whole read whose bytes have `known`'s quick hash takes its SHA-256 from
/// `known` instead of computing it, as a check decides by the quick hash
/// (a re-read of an unchanged 100 KB file: 0.07 ms). Any other read
/// computes it.
pub fn read_known(path: &Path, req: &Request, known: Option<Known>) -> Result<Shown, ReadError> {
    let taken_ns = fingerprint::now_ns();
    let file = fingerprint::open_nonblocking(path).map_err(|e| {
        // A socket cannot be opened at all; say what it is instead.
        if e.raw_os_error() == Some(libc::ENXIO) {
            if let Ok(m) = std::fs::metadata(path) {
                return ReadError::NotAFile(FileType::of(&m));
            }
        }
        ReadError::Io(e)
    })?;
    let meta = file.metadata()?;
    let stat = Stat::of(&meta);
    if stat.ftype != FileType::File {
        return Err(ReadError::NotAFile(stat.ftype));
    }
    if let Some(enc) = utf16(&file)? {
        return read_utf16(file, enc, req, &stat, taken_ns);
    }
    // A huge file whose stat can stand in for its content is fingerprinted
    // by that stat alone when not read to the end: a range deep inside it
    // skips hashing what passes by. A read from the start hashes as it goes,
    // so one that reaches the end carries the hash of every byte. A read
    // from the start of a file written a moment ago reads on to the end
    // and hashes it all: its racy stat could never prove it fresh, so the
    // agent could not edit a file just made, or just written and read back,
    // until the stat aged.
    let from_start = req.offset.unwrap_or(1) <= 1;
    let stat_only = fingerprint::stat_may_stand_in(&file, &stat, taken_ns)
        && !(from_start && fingerprint::being_written(&stat, taken_ns));
    let mut reader = Reader::new(file, from_start || !stat_only, stat.size);
    let shown = if req.is_range() {
        read_range(&mut reader, req, &stat, taken_ns, stat_only)?
    } else {
        read_whole(&mut reader, req, &stat, taken_ns, stat_only, known)?
    };
    Ok(shown)
}

/// The encoding of a file that starts with a UTF-16 byte-order mark.
fn utf16(file: &File) -> io::Result<Option<Encoding>> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < head.len() {
        match file.read_at(&mut head[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(match encoding::sniff(&head[..got]) {
        Ok(e @ Encoding::Utf16 { .. }) => Some(e),
        _ => None,
    })
}

/// A UTF-16 file (with a BOM): read whole and hashed as it is on disk,
/// shown as its text in UTF-8, as the agent's Read tools show it; lines,
/// ranges and the cap count in that text. A BOM followed by what is not
/// UTF-16 is binary.
fn read_utf16(
    mut file: File,
    enc: Encoding,
    req: &Request,
    stat: &Stat,
    taken_ns: i64,
) -> Result<Shown, ReadError> {
    let mut raw = Vec::with_capacity(stat.size as usize + 1);
    file.read_to_end(&mut raw)?;
    let hash = fingerprint::hash_bytes(&raw);
    let quick = fingerprint::quick_bytes(&raw);
    let text = match encoding::decode(&raw) {
        Ok((e, text)) if e == enc => text.into_owned(),
        _ => return Err(ReadError::Binary),
    };
    drop(raw);
    let mut as_text = *stat;
    as_text.size = text.len() as u64;
    let mut reader = Reader::over(text);
    let mut shown = if req.is_range() {
        read_range(&mut reader, req, &as_text, taken_ns, false)?
    } else {
        read_whole(&mut reader, req, &as_text, taken_ns, false, None)?
    };
    shown.fingerprint = Fingerprint {
        stat: *stat,
        taken_ns,
        hash: Some(hash),
        quick: Some(quick),
    };
    Ok(shown)
}

/// The agent's own write, read back for a `full` view of source `write`.
#[derive(Clone, Debug)]
pub struct Written {
    /// The file's bytes, when it is small enough to keep (`keep` bytes).
    pub bytes: Option<Vec<u8>>,
    /// Always with the hash of the whole file.
    pub fingerprint: Fingerprint,
    /// Lines in the file (0 when too large to have counted them).
    pub lines: u64,
}

/// Read back a file the agent just wrote: its text when it is at most
/// `keep` bytes, and in every case a fingerprint hashing the whole file.
pub fn read_written(path: &Path, keep: u64) -> Result<Written, ReadError> {
    let shown = read(path, &Request::whole(keep))?;
    if shown.kind == Kind::Full && shown.fingerprint.hash.is_some() {
        return Ok(Written {
            lines: shown.lines,
            fingerprint: shown.fingerprint,
            bytes: Some(shown.bytes),
        });
    }
    // Too big to keep the text: still fingerprint the whole file.
    let taken_ns = fingerprint::now_ns();
    let (hash, stat) = fingerprint::hash_path(path)?;
    Ok(Written {
        bytes: None,
        fingerprint: Fingerprint {
            stat,
            taken_ns,
            hash: Some(hash),
            quick: None,
        },
        lines: shown.total_lines.unwrap_or(0),
    })
}

impl Written {
    /// Hold the file to what the agent says it wrote. When the disk already
    /// differs (a formatter ran between the write and this record), the view
    /// becomes the agent's text, with the disk file's identity but a stat no
    /// file can have: the next check hashes the file, finds it is not what
    /// the agent saw, and reports the rewrite with its diff. Line endings
    /// alone are no difference (an agent may keep a file's CRLF). Returns
    /// whether the disk differed.
    pub fn hold_to(&mut self, wrote: &[u8], keep: u64) -> bool {
        let same = match &self.bytes {
            Some(disk) => same_text(disk, wrote),
            None => self.fingerprint.hash == Some(fingerprint::hash_bytes(wrote)),
        };
        if same {
            return false;
        }
        let mut stat = self.fingerprint.stat;
        stat.mtime_ns = i64::MIN;
        self.fingerprint = Fingerprint {
            stat,
            taken_ns: fingerprint::now_ns(),
            hash: Some(fingerprint::hash_bytes(wrote)),
            quick: None,
        };
        self.lines = count_lines(wrote);
        self.bytes = (wrote.len() as u64 <= keep).then(|| wrote.to_vec());
        true
    }
}

/// The same text up to line endings (`\r\n` against `\n`).
pub fn same_text(a: &[u8], b: &[u8]) -> bool {
    fn lf(b: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                i += 1;
                continue;
            }
            out.push(b[i]);
            i += 1;
        }
        out
    }
    a == b || lf(a) == lf(b)
}

/// What a read hashes a file's bytes with: the SHA-256 that names its
/// content (`None` while deferred: see [`Reader::defer_sha`]), and the
/// [`fingerprint::Quick`] hash later checks compare.
type Hashers = (Option<Sha256>, Box<xxhash_rust::xxh3::Xxh3>);

/// The hashes of a file's bytes that [`Hashers`] gave.
#[derive(Clone, Copy)]
struct Sums {
    hash: fingerprint::Hash,
    quick: fingerprint::Quick,
}

/// A chunked reader that hashes what passes through it and counts lines.
struct Reader {
    file: Box<dyn Read>,
    /// The chunk buffer, allocated on first use (a whole read of a file
    /// under the cap reads straight into what it keeps, [`Reader::read_into`]).
    buf: Vec<u8>,
    len: usize,
    hasher: Option<Hashers>,
    /// Bytes from the start of the file looked at for a NUL so far.
    sniffed: usize,
}

impl Reader {
    /// The hash of everything read, if hashing.
    fn finish(&mut self) -> Option<Sums> {
        self.finish_kept(&[], None)
    }

    /// Hash by SHA-256 only what the caller keeps of what it reads, at the
    /// end ([`Reader::finish_kept`]); the quick hash is still taken as the
    /// bytes pass. A caller that stops keeping them calls
    /// [`Reader::catch_up`] first.
    fn defer_sha(&mut self) {
        if let Some((sha, _)) = &mut self.hasher {
            *sha = None;
        }
    }

    /// Hash by SHA-256 what was read so far, `kept`, and from now on every
    /// byte as it passes.
    fn catch_up(&mut self, kept: &[u8]) {
        if let Some((sha @ None, _)) = &mut self.hasher {
            *sha = Some(Sha256::new_with_prefix(kept));
        }
    }

    /// The hash of everything read, if hashing: when the SHA-256 was
    /// deferred, everything read is `kept`, and its SHA-256 is `known`'s if
    /// their quick hashes agree.
    fn finish_kept(&mut self, kept: &[u8], known: Option<Known>) -> Option<Sums> {
        self.hasher.take().map(|(sha, quick)| {
            let quick = quick.digest128().to_le_bytes();
            let hash = match sha {
                Some(sha) => sha.finalize().into(),
                None => match known {
                    Some(k) if k.quick == quick => k.hash,
                    _ => fingerprint::hash_bytes(kept),
                },
            };
            Sums { hash, quick }
        })
    }

    /// A reader of text already in memory (decoded), hashing nothing.
    fn over(text: Vec<u8>) -> Reader {
        let len = (text.len() + 1).clamp(4096, CHUNK);
        Reader {
            file: Box::new(io::Cursor::new(text)),
            buf: Vec::new(),
            len,
            hasher: None,
            sniffed: 0,
        }
    }

    fn new(file: File, hash: bool, size: u64) -> Reader {
        // A small file needs no 256 KiB buffer (nor its page faults); one
        // spare byte lets the first read see the end of the file.
        let len = (size as usize + 1).clamp(4096, CHUNK);
        Reader {
            file: Box::new(file),
            buf: Vec::new(),
            len,
            hasher: hash.then(|| (Some(Sha256::new()), Box::default())),
            sniffed: 0,
        }
    }

    /// Read up to `want` bytes onto the end of `dst`; 0 at the end of the
    /// file.
    fn read_into(&mut self, dst: &mut Vec<u8>, want: usize) -> Result<usize, ReadError> {
        let at = dst.len();
        dst.resize(at + want, 0);
        let n = loop {
            match self.file.read(&mut dst[at..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    dst.truncate(at);
                    return Err(ReadError::Io(e));
                }
            }
        };
        dst.truncate(at + n);
        passed(&mut self.sniffed, &mut self.hasher, &dst[at..])?;
        Ok(n)
    }

    /// The next chunk, or an empty slice at the end of the file.
    fn next(&mut self) -> Result<&[u8], ReadError> {
        if self.buf.is_empty() {
            self.buf = vec![0u8; self.len];
        }
        let n = loop {
            match self.file.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadError::Io(e)),
            }
        };
        let chunk = &self.buf[..n];
        passed(&mut self.sniffed, &mut self.hasher, chunk)?;
        Ok(chunk)
    }
}

/// Sniff the file's first [`SNIFF_LEN`] bytes for a NUL, whatever the sizes
/// of the reads that bring them (a whole read under a small cap asks for a
/// few bytes first), and hash bytes just read.
fn passed(
    sniffed: &mut usize,
    hasher: &mut Option<Hashers>,
    chunk: &[u8],
) -> Result<(), ReadError> {
    if *sniffed < SNIFF_LEN {
        let look = &chunk[..chunk.len().min(SNIFF_LEN - *sniffed)];
        *sniffed += look.len();
        if crate::scan::find(0, look).is_some() {
            return Err(ReadError::Binary);
        }
    }
    if let Some((sha, quick)) = hasher {
        if let Some(sha) = sha {
            sha.update(chunk);
        }
        quick.update(chunk);
    }
    Ok(())
}

/// Lines counted by newlines plus a last unterminated line.
fn total_from(newlines: u64, last: Option<u8>) -> u64 {
    match last {
        Some(b) if b != b'\n' => newlines + 1,
        _ => newlines,
    }
}

fn read_whole(
    reader: &mut Reader,
    req: &Request,
    stat: &Stat,
    taken_ns: i64,
    stat_only: bool,
    known: Option<Known>,
) -> Result<Shown, ReadError> {
    // What is read into `kept` is hashed by SHA-256 only at the end (or
    // when the file turns out to be over the cap), and not at all when its
    // quick hash is `known`'s.
    reader.defer_sha();
    // At most half of u64: `cap + 1` below must not overflow (`--cap` takes
    // any u64), and no file is that big.
    let cap = req.cap.clamp(1, u64::MAX / 2);
    let mut kept: Vec<u8> = Vec::with_capacity(stat.size.min(cap) as usize + 1);
    let mut newlines = 0u64;
    let mut last = None;
    let mut over = false;
    // Up to the cap (and one byte past it, to know), straight into what is
    // kept: a file that fits is read once, into one buffer.
    loop {
        let room = (cap as usize + 1).saturating_sub(kept.len());
        let expected = stat.size.saturating_sub(kept.len() as u64) as usize;
        let spare = kept.capacity() - kept.len();
        // Once the stat's size is in, the end is found in the spare byte:
        // growing `kept` for it would copy the whole file once more.
        let want = if expected == 0 && spare > 0 {
            spare
        } else {
            expected.saturating_add(1).max(4096)
        }
        .min(room);
        let at = kept.len();
        if reader.read_into(&mut kept, want)? == 0 {
            break;
        }
        newlines += crate::scan::count(b'\n', &kept[at..]) as u64;
        last = kept.last().copied();
        if kept.len() as u64 > cap {
            over = true;
            break;
        }
    }
    if over {
        // Beyond the hash limit, a start view of a file whose stat can
        // stand in for it is fingerprinted by that stat; stop reading.
        if stat_only {
            return Ok(start_view(kept, cap, None, stat, taken_ns, None));
        }
        reader.catch_up(&kept);
        loop {
            let chunk = reader.next()?;
            if chunk.is_empty() {
                break;
            }
            newlines += crate::scan::count(b'\n', chunk) as u64;
            last = chunk.last().copied();
        }
    }
    let total = total_from(newlines, last);
    let hash = reader.finish_kept(&kept, known);
    if !over {
        let lines = count_lines(&kept);
        return Ok(Shown {
            kind: Kind::Full,
            offset: 1,
            lines,
            total_lines: Some(total),
            bytes: kept,
            fingerprint: Fingerprint {
                stat: *stat,
                taken_ns,
                hash: hash.map(|h| h.hash),
                quick: hash.map(|h| h.quick),
            },
            capped: false,
            cut_line: false,
        });
    }
    Ok(start_view(kept, cap, Some(total), stat, taken_ns, hash))
}

/// The start of a file over the cap: whole lines within `cap` bytes, or the
/// first line cut at the cap when even it is longer.
fn start_view(
    mut kept: Vec<u8>,
    cap: u64,
    total: Option<u64>,
    stat: &Stat,
    taken_ns: i64,
    hash: Option<Sums>,
) -> Shown {
    kept.truncate(cap as usize);
    let cut_line = cut_to_lines(&mut kept);
    Shown {
        kind: Kind::Start,
        offset: 1,
        lines: count_lines(&kept),
        total_lines: total,
        bytes: kept,
        fingerprint: Fingerprint {
            stat: *stat,
            taken_ns,
            hash: hash.map(|h| h.hash),
            quick: hash.map(|h| h.quick),
        },
        capped: true,
        cut_line,
    }
}

/// Trim `bytes` (already at most the cap) back to its last whole line; if
/// there is none, keep the cut line, ending on a UTF-8 boundary. Returns
/// whether a line was cut.
fn cut_to_lines(bytes: &mut Vec<u8>) -> bool {
    match crate::scan::rfind(b'\n', bytes) {
        Some(i) => {
            bytes.truncate(i + 1);
            false
        }
        None => {
            // Drop a character the cut split: one that starts in the last
            // three bytes and is incomplete. Looking only at the end (not
            // at the first error) cuts cleanly after invalid bytes too.
            let len = bytes.len();
            let split = (len.saturating_sub(3)..len).find(|&i| {
                matches!(std::str::from_utf8(&bytes[i..]),
                    Err(e) if e.valid_up_to() == 0 && e.error_len().is_none())
            });
            bytes.truncate(split.unwrap_or(len));
            true
        }
    }
}

fn read_range(
    reader: &mut Reader,
    req: &Request,
    stat: &Stat,
    taken_ns: i64,
    stat_only: bool,
) -> Result<Shown, ReadError> {
    let offset = req.offset.unwrap_or(1).max(1);
    let limit = req.limit.unwrap_or(u64::MAX);
    let cap = req.cap.clamp(1, u64::MAX / 2);
    let end_line = offset.saturating_add(limit); // first line not shown
    let mut line = 1u64; // line number at the reader's position
    let mut kept: Vec<u8> = Vec::new();
    let mut newlines = 0u64;
    let mut last = None;
    let mut done = limit == 0; // the range is complete
    let mut capped = false;
    loop {
        let chunk = reader.next()?;
        if chunk.is_empty() {
            break;
        }
        last = chunk.last().copied();
        newlines += crate::scan::count(b'\n', chunk) as u64;
        if !done {
            let mut at = 0usize;
            // Skip to the offset.
            while line < offset {
                match crate::scan::find(b'\n', &chunk[at..]) {
                    Some(i) => {
                        at += i + 1;
                        line += 1;
                    }
                    None => {
                        at = chunk.len();
                        break;
                    }
                }
            }
            if line >= offset {
                // Keep whole lines until the limit.
                let mut take_to = at;
                let mut reached = false;
                for i in crate::scan::positions(b'\n', &chunk[at..]) {
                    take_to = at + i + 1;
                    line += 1;
                    if line >= end_line {
                        reached = true;
                        break;
                    }
                }
                if !reached {
                    take_to = chunk.len();
                }
                kept.extend_from_slice(&chunk[at..take_to]);
                if kept.len() as u64 > cap {
                    kept.truncate(cap as usize + 1);
                    capped = true;
                    done = true;
                } else if reached {
                    done = true;
                }
            }
        }
        if done && stat_only {
            // A range of a huge file: do not pay for hashing the rest.
            return Ok(range_view(
                kept, offset, cap, capped, None, stat, taken_ns, None, req,
            ));
        }
    }
    let total = total_from(newlines, last);
    let hash = reader.finish();
    Ok(range_view(
        kept,
        offset,
        cap,
        capped,
        Some(total),
        stat,
        taken_ns,
        hash,
        req,
    ))
}

#[allow(clippy::too_many_arguments)]
fn range_view(
    mut kept: Vec<u8>,
    offset: u64,
    cap: u64,
    capped: bool,
    total: Option<u64>,
    stat: &Stat,
    taken_ns: i64,
    hash: Option<Sums>,
    req: &Request,
) -> Shown {
    let mut cut_line = false;
    if capped {
        kept.truncate(cap as usize);
        cut_line = cut_to_lines(&mut kept);
    }
    let lines = count_lines(&kept);
    // An empty file is all shown by any read of it.
    let offset = if stat.size == 0 && hash.is_some() {
        1
    } else {
        offset
    };
    // A "range" that began at line 1 and showed every byte saw the whole
    // file, unprocessed: that is a full view, whatever was asked.
    let whole = offset == 1
        && !capped
        && hash.is_some()
        && total == Some(lines)
        && kept.len() as u64 == stat.size;
    let kind = if whole { Kind::Full } else { Kind::Range };
    let _ = req;
    Shown {
        kind,
        offset,
        lines,
        total_lines: total,
        bytes: kept,
        fingerprint: Fingerprint {
            stat: *stat,
            taken_ns,
            hash: hash.map(|h| h.hash),
            quick: hash.map(|h| h.quick),
        },
        capped,
        cut_line,
    }
}

/// Lines `offset..offset+count` (1-based) of `bytes`.
pub fn slice_lines(bytes: &[u8], offset: u64, count: u64) -> &[u8] {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, body: &[u8]) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, body).unwrap();
        p
    }

    #[test]
    fn numbers_lines_from_offset() {
        assert_eq!(number_lines(b"a\nb\r\nc", 7), "7\ta\n8\tb\n9\tc\n");
        assert_eq!(number_lines(b"", 1), "");
    }

    #[test]
    fn whole_file_is_full() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "a", b"x\ny\n");
        let s = read(&p, &Request::whole(DEFAULT_CAP)).unwrap();
        assert_eq!(s.kind, Kind::Full);
        assert_eq!((s.offset, s.lines, s.total_lines), (1, 2, Some(2)));
        assert_eq!(s.numbered(), "1\tx\n2\ty\n");
        assert_eq!(s.fingerprint.hash, Some(fingerprint::hash_bytes(b"x\ny\n")));
    }

    #[test]
    fn over_the_cap_is_start() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "a", b"aaaa\nbbbb\ncccc\n");
        let s = read(&p, &Request::whole(12)).unwrap();
        assert_eq!(s.kind, Kind::Start);
        assert_eq!((s.lines, s.total_lines), (2, Some(3)));
        assert_eq!(s.bytes, b"aaaa\nbbbb\n");
        let s = read(&p, &Request::whole(3)).unwrap();
        assert!(s.cut_line);
        assert_eq!(s.bytes, b"aaa");
    }

    #[test]
    fn a_read_of_known_bytes_takes_their_sha256_from_the_session() {
        let d = tempfile::tempdir().unwrap();
        let body = b"fn main() {}\n".repeat(500);
        let p = write(d.path(), "a", &body);
        let real = fingerprint::hash_bytes(&body);
        let quick = fingerprint::quick_bytes(&body);
        let req = Request::whole(DEFAULT_CAP);
        // The session's SHA-256 is taken when the quick hashes agree (a
        // made-up one here shows that it was taken, not computed)...
        let recorded = Known {
            hash: [7; 32],
            quick,
        };
        let s = read_known(&p, &req, Some(recorded)).unwrap();
        assert_eq!(s.fingerprint.hash, Some([7; 32]));
        assert_eq!(s.fingerprint.quick, Some(quick));
        // ...and computed when they do not, or when nothing is known.
        let other = Known {
            hash: [7; 32],
            quick: fingerprint::quick_bytes(b"other bytes"),
        };
        for known in [Some(other), None] {
            let s = read_known(&p, &req, known).unwrap();
            assert_eq!(s.fingerprint.hash, Some(real));
            assert_eq!(s.fingerprint.quick, Some(quick));
            assert_eq!(s.bytes, body);
        }
        // A range read computes it whatever is known.
        let range = Request {
            offset: Some(2),
            limit: Some(1),
            cap: DEFAULT_CAP,
        };
        let s = read_known(&p, &range, Some(recorded)).unwrap();
        assert_eq!(s.fingerprint.hash, Some(real));
    }

    #[test]
    fn a_start_view_hashes_the_whole_file() {
        // The SHA-256 of what was read under the cap, deferred, is caught
        // up before the rest streams past.
        let d = tempfile::tempdir().unwrap();
        let body: Vec<u8> = (0..40_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let p = write(d.path(), "a", &body);
        let known = Known {
            hash: [7; 32],
            quick: fingerprint::quick_bytes(&body),
        };
        for known in [None, Some(known)] {
            let s = read_known(&p, &Request::whole(10_000), known).unwrap();
            assert_eq!(s.kind, Kind::Start);
            assert_eq!(s.total_lines, Some(40_000));
            assert_eq!(s.fingerprint.hash, Some(fingerprint::hash_bytes(&body)));
            assert_eq!(s.fingerprint.quick, Some(fingerprint::quick_bytes(&body)));
        }
    }

    // Found by the property tests: `--cap` takes any u64, and `cap + 1`
    // overflowed (a panic in debug builds; in release, an empty "full" view).
    #[test]
    fn largest_cap_shows_everything() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "a", b"a");
        let s = read(&p, &Request::whole(u64::MAX)).unwrap();
        assert_eq!((s.kind, s.bytes.as_slice()), (Kind::Full, &b"a"[..]));
    }

    // Found by the property tests: an invalid byte before the cut hid the
    // character the cut split.
    #[test]
    fn cut_line_ends_on_a_character_boundary_after_invalid_bytes() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "a", b"\xff\xc3\xa9\xc3\xa9");
        let s = read(&p, &Request::whole(4)).unwrap();
        assert!(s.cut_line);
        assert_eq!(s.bytes, b"\xff\xc3\xa9");
    }

    #[test]
    fn range_in_the_middle() {
        let d = tempfile::tempdir().unwrap();
        let body: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let p = write(d.path(), "a", body.as_bytes());
        let req = Request {
            offset: Some(50),
            limit: Some(3),
            cap: DEFAULT_CAP,
        };
        let s = read(&p, &req).unwrap();
        assert_eq!(s.kind, Kind::Range);
        assert_eq!(s.numbered(), "50\tline 50\n51\tline 51\n52\tline 52\n");
        assert_eq!(s.total_lines, Some(100));
        let past = Request {
            offset: Some(500),
            limit: None,
            cap: DEFAULT_CAP,
        };
        let s = read(&p, &past).unwrap();
        assert_eq!((s.lines, s.total_lines), (0, Some(100)));
    }

    #[test]
    fn range_over_whole_file_is_full() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "a", b"x\ny");
        let req = Request {
            offset: Some(1),
            limit: Some(10),
            cap: DEFAULT_CAP,
        };
        let s = read(&p, &req).unwrap();
        assert_eq!(s.kind, Kind::Full);
        assert_eq!(s.numbered(), "1\tx\n2\ty\n");
    }

    // Found by the property tests: a whole read under a tiny cap asks for
    // cap + 1 bytes first, and the sniff looked at that read only, so a NUL
    // at byte 9 passed as text.
    #[test]
    fn the_sniff_covers_the_first_8_kib_whatever_the_reads() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "a", b"xxxxxxxxx\0xxxxxxxx");
        for cap in [1, 2, 9, 10, 64] {
            assert!(
                matches!(read(&p, &Request::whole(cap)), Err(ReadError::Binary)),
                "cap {cap}"
            );
        }
    }

    #[test]
    fn refuses_binary_and_directories() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "a", b"ab\0cd");
        assert!(matches!(
            read(&p, &Request::whole(DEFAULT_CAP)),
            Err(ReadError::Binary)
        ));
        assert!(matches!(
            read(d.path(), &Request::whole(DEFAULT_CAP)),
            Err(ReadError::NotAFile(FileType::Dir))
        ));
    }
}
