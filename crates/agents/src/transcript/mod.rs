//! An agent's own transcript of the conversation, read a little at a time.
//!
//! Some of what an agent shows the model reaches no hook: a file the user
//! attached to a prompt (Claude Code's `@file`), the files re-attached after
//! a compaction, what a compaction kept and a rewind abandoned. The agent
//! writes it all to its transcript (JSON Lines), so each hook first catches
//! up with the lines written since the last one ([`catch_up`]):
//!
//! - **Incrementally, from a cursor.** The store keeps, per session, the
//!   transcript's identity and the offset just past the last complete line
//!   read ([`fsview_store::transcripts`]), and how far past it the bytes of
//!   a line still being written were looked at. A hook reads only the bytes
//!   written since (a line being written is read when its newline comes);
//!   when nothing was written it costs one `fstat`. A transcript that is
//!   another file now (another identity, or shorter than the offset) is
//!   read again from its start.
//! - **Bounded.** The transcript is read in chunks of [`CHUNK`] bytes, and
//!   only a path that is a regular file is opened (a FIFO, a device or a
//!   directory is said once and never opened, so a hook never blocks on
//!   it). A line longer than [`MAX_LINE`] (no entry an agent writes is that
//!   long) is skipped, never held. So a hook holds at most one chunk, one
//!   line and, while it reads the whole transcript again, a few ids per
//!   entry ([`Format::resync`]); what a line shows is parsed when it is
//!   recorded, one at a time.
//! - **What a line says**, an agent's [`Format`] decides: a view shown, with
//!   its origin in the conversation ([`Found`]), or that what the
//!   conversation holds changed (a compaction, a rewind), after which the
//!   whole transcript is read once ([`Format::resync`]) and the store told
//!   what the conversation holds now ([`Store::hold_only`]). A line the
//!   format does not understand says nothing.
//! - **Held to the disk, never guessed.** A view found in the transcript is
//!   recorded as the agent's own tool would have been (the same adapter
//!   code turns it into an event), held against the disk, and only when
//!   the disk still holds exactly what was shown: a line read later than it
//!   was written may be older than what fsview knows since. A view whose
//!   origin the session already has (its hook recorded it) is not recorded
//!   again, so a catch-up also recovers the views of a hook that failed, or
//!   ran before fsview was installed.
//! - **Caught up to the hook's own turn.** The agent writes its transcript
//!   a little after the fact; a tool call of the main thread whose turn the
//!   transcript has not reached yet (its payload names the prompt, the
//!   prompt's lines carry the same id) waits for the prompt's lines first
//!   ([`Format::prompt_mark`]): else a rewind's new prompt, not written yet,
//!   would leave the views of the branch it abandons counted.
//! - **Waits only where the line will come.** A hook waits for the
//!   transcript only when it exists and names this conversation
//!   ([`Format::names`]: a line of it carries the payload's session id),
//!   never for one that is missing, empty or another's; and a
//!   conversation's waits add up to at most [`WAIT_BUDGET`]. A wait that
//!   gave up is logged (`wait`, verdict `gave up`).
//! - **Never in the agent's way.** A transcript that is missing (not written
//!   yet) records nothing; one that cannot be read records nothing and says
//!   so once (the problem is kept with the cursor until it changes); a
//!   catch-up that fails never fails the hook's own answer.

pub mod claude;
pub mod droid;
pub mod qwen;

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use fsview_store::error::{plain_io, quote};
use fsview_store::events::Event as LogEvent;
use fsview_store::held::Scope;
use fsview_store::transcripts::Cursor;
use fsview_store::view::Released;
use fsview_store::Store;

use crate::core::{self, Options};
use crate::event::{Event, Who};
use crate::{Agent, Problem};

/// A view a transcript shows, with where in the conversation it was shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The agent's id for it (the origin of the view it records).
    pub origin: String,
    /// What was shown or changed, as the agent's hook would have said it.
    pub event: Event,
}

/// A view a whole transcript shows, found without holding its text: the
/// line at `at` shows it, as `how` (the format's own words) says
/// ([`Format::located`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The agent's id for it (the origin of the view it records).
    pub origin: String,
    /// Where the line that shows it starts.
    pub at: u64,
    /// How to read that line ([`Format::located`]).
    pub how: String,
}

/// What new lines of a transcript say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Views shown, in order, and the reader's state after the lines.
    Read { found: Vec<Found>, state: String },
    /// What the conversation holds changed: read the whole transcript
    /// again ([`Format::resync`]). `compaction`: the lines hold a
    /// compaction, which drops every view of the conversation's messages
    /// but those it kept.
    Resync { compaction: bool },
    /// The lines take the results of these calls (their ids, the views'
    /// origins) out of what the model is sent from now on, and nothing
    /// else changed: their views are released, and reading goes on, with
    /// the reader's state after the lines.
    Release {
        calls: HashSet<String>,
        state: String,
    },
}

/// What a whole transcript says the conversation holds now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holding {
    /// The origins on the live conversation: what it still holds.
    pub live: HashSet<String>,
    /// Origins the last compaction dropped (before it, and not kept).
    pub compacted: HashSet<String>,
    /// Origins of abandoned branches (a rewind), not live.
    pub abandoned: HashSet<String>,
    /// The live views, in order.
    pub found: Vec<Located>,
    /// The reader's state after the last line.
    pub state: String,
}

/// A whole re-read of a transcript in progress ([`Format::resync`]).
pub trait Resync {
    /// The next complete lines, in order, each with where it starts.
    fn lines(&mut self, lines: &[(u64, &[u8])]);

    /// What all the lines given say.
    fn finish(self: Box<Self>) -> Holding;
}

/// How one agent writes its transcript.
pub trait Format: Sync {
    /// The agent and version whose transcripts were seen to be written so.
    fn seen_in(&self) -> &'static str;

    /// What the complete lines `lines`, written after those the reader's
    /// `state` (from the previous call, `None` at first) came from, say.
    fn read(&self, lines: &[&[u8]], state: Option<&str>) -> Step;

    /// A whole re-read: it is given every complete line of the transcript
    /// ([`Resync::lines`]), keeps of each only what settles the
    /// conversation (ids, where a view's line is), and then says what the
    /// conversation holds.
    fn resync(&self) -> Box<dyn Resync>;

    /// The view the line `line` shows, as `how` (a [`Located`]'s) says.
    fn located(&self, line: &[u8], how: &str) -> Option<Event>;

    /// The other calls of the message that made call `call`, if `tail`
    /// (complete lines of the transcript, around the call) holds it.
    fn siblings(&self, tail: &[u8], call: &str) -> Option<HashSet<String>>;

    /// What a line of conversation `session`'s transcript (the payload's
    /// session id) holds that another conversation's does not, if the
    /// format says: a hook waits only for a transcript that holds it.
    fn names(&self, _session: &str) -> Option<String> {
        None
    }

    /// Whether lines the agent writes after a gate may run release a view
    /// the gate would count: Qwen Code writes its transcript through a
    /// queue, so the lines that say a result was taken out may come after
    /// the gate of a call made after it. Such a gate waits for its own
    /// call's line ([`waited_for_call`]), after which every line before it
    /// is written, even when it would let the change through.
    fn releases_late(&self) -> bool {
        false
    }

    /// What the lines of prompt `prompt` (the hook's [`Who::prompt`]) hold
    /// that no line before them does, if the format knows its prompts:
    /// a hook of that prompt's turn waits for them ([`catch_up`]).
    fn prompt_mark(&self, _prompt: &str) -> Option<String> {
        None
    }

    /// Whether the reader's `state` has reached prompt `prompt`'s lines
    /// (or was told to stop waiting for them, [`Format::reached`]).
    fn at_prompt(&self, _state: Option<&str>, _prompt: &str) -> bool {
        true
    }

    /// The reader's `state`, taken as having reached prompt `prompt`: its
    /// lines did not come in time, and later hooks of its turn do not wait
    /// for them again.
    fn reached(&self, state: Option<&str>, _prompt: &str) -> Option<String> {
        state.map(String::from)
    }
}

/// How much of a transcript is read at a time.
pub const CHUNK: usize = 1 << 20;

/// The longest line read: far above any entry Claude Code 2.1.332 writes
/// (a Read shows at most 256 KB, a shell's output at most 30,000
/// characters, an Edit's entry holds the file it changed; fsview holds no
/// view of a file over 16 MiB). A longer line is skipped, and the cursor
/// moved past it: nothing of it is held, parsed or recorded.
pub const MAX_LINE: usize = 64 << 20;

/// How long a hook waits for the agent's transcript to reach its call
/// ([`waited_for_call`]) or its prompt ([`catch_up`]). Claude Code writes
/// its transcript at most 100 ms after the fact when idle (its write queue
/// drains on a timer); on a loaded 2-core machine it was seen to take
/// longer than 0.75 s. A wait ends as soon as the line is there, so the
/// bound only matters when it never comes.
const CALL_WAIT: Duration = Duration::from_millis(3000);

/// The most all hooks of one conversation wait for its transcript, in
/// all: a transcript that names the conversation but never gets its calls
/// (a host that copies one, an agent that writes it elsewhere) costs at
/// most this, once.
pub const WAIT_BUDGET: Duration = Duration::from_millis(10_000);

/// The reader's own state between hooks, kept with the cursor (as its
/// `state`, which the store does not read).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kept {
    /// The format's own state ([`Format::read`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    format: Option<String>,
    /// How far the transcript was looked at (absolute, at or past the
    /// cursor's offset): the bytes from the offset to here hold no newline
    /// (a line being written), and are not read again until it ends.
    #[serde(default, skip_serializing_if = "is_zero")]
    scanned: u64,
    /// A line read names this conversation ([`Format::names`]): only then
    /// does a hook wait for the transcript.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    named: bool,
    /// How long this conversation's hooks have waited for the transcript,
    /// in milliseconds (at most [`WAIT_BUDGET`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    waited_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Kept {
    /// The state a cursor keeps; a state written before this one was kept
    /// (the format's alone) is the format's.
    fn of(c: Option<&Cursor>) -> Kept {
        let Some(state) = c.and_then(|c| c.state.as_deref()) else {
            return Kept::default();
        };
        serde_json::from_str(state).unwrap_or_else(|_| Kept {
            format: Some(state.to_string()),
            ..Kept::default()
        })
    }

    fn to_state(&self) -> Option<String> {
        serde_json::to_string(self).ok()
    }

    /// `waited` added to the conversation's waits (at most the budget).
    fn charge(&mut self, waited: Duration) {
        self.waited_ms = self
            .waited_ms
            .saturating_add(waited.as_millis() as u64)
            .min(WAIT_BUDGET.as_millis() as u64);
    }

    /// What is left of the conversation's wait budget.
    fn left(&self) -> Duration {
        WAIT_BUDGET.saturating_sub(Duration::from_millis(self.waited_ms))
    }
}

/// How a transcript's path opened.
enum Opened {
    /// No file there (not written yet, or gone).
    Missing,
    /// Not a regular file, or not readable: why, to say once.
    Unusable(String),
    /// A regular file, and what `fstat` said of it.
    File(File, std::fs::Metadata),
}

/// Open the transcript at `path` for reading, only when it is a regular
/// file: looked at first (a FIFO's open would block until a writer came,
/// a device's read never ends), then opened without blocking all the same
/// (the path may be another file by then) and looked at again.
fn open(path: &Path) -> Opened {
    let cannot = |e: &std::io::Error| {
        Opened::Unusable(format!(
            "cannot read the transcript {} ({}); what it alone records (files attached to a prompt, compactions, rewinds) is not known",
            quote(path),
            plain_io(e)
        ))
    };
    let not_regular = || {
        Opened::Unusable(format!(
            "the transcript {} is not a regular file",
            quote(path)
        ))
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Opened::Missing,
        Err(e) => return cannot(&e),
        Ok(m) if !m.is_file() => return not_regular(),
        Ok(_) => {}
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    match f.and_then(|f| f.metadata().map(|m| (f, m))) {
        Ok((f, m)) if m.is_file() => Opened::File(f, m),
        Ok(_) => not_regular(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Opened::Missing,
        Err(e) => cannot(&e),
    }
}

/// The first `cap` bytes of the file at `path`, when it is a regular file
/// (anything else is never opened: see [`open`]); `None` when it is not,
/// or cannot be read. For an agent's transcript read once, from its start
/// (Codex's, at a session's start).
pub(crate) fn head(path: &Path, cap: usize) -> Option<Vec<u8>> {
    let Opened::File(f, meta) = open(path) else {
        return None;
    };
    let mut buf = vec![0u8; cap.min(meta.len() as usize)];
    let n = read_at(&f, &mut buf, 0).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// Where reading a transcript stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct At {
    /// Just past the last complete line read (or skipped).
    offset: u64,
    /// How far the bytes after `offset` were looked at (at or past it):
    /// they hold no newline.
    scanned: u64,
}

/// What [`each_line`] hands each batch of complete lines to: each line's
/// offset and bytes; false stops the reading.
type EachLines<'a> = dyn FnMut(&[(u64, &[u8])]) -> bool + 'a;

/// Read the complete lines of `f` after `at`, up to `size`, in chunks of
/// [`CHUNK`] bytes, and give them to `each` a chunk's worth at a time,
/// each line (without its newline) with where it starts, until `each`
/// says to stop. A line longer than [`MAX_LINE`] is skipped; the bytes of
/// a line not complete yet are looked at once, held only up to a chunk,
/// and read again only when its newline comes. So it holds at most two
/// chunks, and one complete line when one is longer than a chunk. Returns
/// where reading stands, or `None` when `each` stopped it.
fn each_line(f: &File, at: At, size: u64, each: &mut EachLines<'_>) -> std::io::Result<Option<At>> {
    // Where the line being read starts, and the next byte to read.
    let mut start = at.offset;
    let mut pos = at.scanned.max(at.offset);
    // The bytes of the line being read, from `start` to `pos`, while they
    // are no more than a chunk (`None`: read them again when the line
    // ends, or skip it): a line being written is not held whole.
    let mut held: Option<Vec<u8>> = (pos == start).then(Vec::new);
    let mut chunk = vec![0u8; CHUNK.min(size.saturating_sub(pos) as usize)];
    while pos < size {
        let want = CHUNK.min((size - pos) as usize);
        let got = read_at(f, &mut chunk[..want], pos)?;
        if got == 0 {
            break; // shorter than it was: what is there is read
        }
        let data = &chunk[..got];
        let first = memchr::memchr(b'\n', data);
        // The line that started before this chunk, when it ends here and
        // is not too long.
        let carried: Option<Vec<u8>> = match first {
            Some(i) if start < pos && pos + i as u64 - start <= MAX_LINE as u64 => {
                Some(match held.take() {
                    Some(mut h) => {
                        h.extend_from_slice(&data[..i]);
                        h
                    }
                    None => {
                        let mut line = vec![0u8; (pos + i as u64 - start) as usize];
                        let n = read_at(f, &mut line, start)?;
                        line.truncate(n);
                        line
                    }
                })
            }
            _ => None,
        };
        let mut batch: Vec<(u64, &[u8])> = Vec::new();
        if let Some(c) = &carried {
            batch.push((start, c));
        }
        let mut from = 0;
        for nl in memchr::memchr_iter(b'\n', data) {
            let begins_here = start >= pos;
            if begins_here && nl - from <= MAX_LINE {
                batch.push((start, &data[from..nl]));
            }
            start = pos + nl as u64 + 1;
            from = nl + 1;
        }
        // The rest starts (or continues) a line not complete yet.
        let rest = &data[from..];
        held = match (first, held.take()) {
            (None, Some(mut h)) if h.len() + rest.len() <= CHUNK => {
                h.extend_from_slice(rest);
                Some(h)
            }
            (None, _) => None,
            (Some(_), _) => Some(rest.to_vec()),
        };
        pos += got as u64;
        if !batch.is_empty() && !each(&batch) {
            return Ok(None);
        }
    }
    Ok(Some(At {
        offset: start,
        scanned: pos,
    }))
}

/// Fill `buf` from `f` at `offset`, as far as the file goes: how much was
/// read.
fn read_at(f: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// The complete line of `f` that starts at `at`, if it is one and not
/// longer than [`MAX_LINE`]: read a little first, and more only while no
/// newline came (a whole re-read parses each view's line again, and most
/// are short).
fn line_at(f: &File, at: u64) -> Option<Vec<u8>> {
    let left = f.metadata().ok()?.len().saturating_sub(at);
    let mut want: u64 = 64 << 10;
    loop {
        let mut line = vec![0u8; want.min(left) as usize];
        let n = read_at(f, &mut line, at).ok()?;
        line.truncate(n);
        if let Some(i) = memchr::memchr(b'\n', &line) {
            line.truncate(i);
            return Some(line);
        }
        if want >= left || want > MAX_LINE as u64 {
            return None;
        }
        want = (want * 4).min(MAX_LINE as u64 + 1);
    }
}

/// A search of what is written to a transcript for needles, in its
/// complete lines: each look reads only what was written since the last
/// one, a chunk at a time.
struct Watch<'n> {
    needles: &'n [&'n [u8]],
    /// The next byte to read.
    from: u64,
    /// The last bytes read, a needle's length less one: a needle may be
    /// cut between two reads.
    carry: Vec<u8>,
    /// Where each needle was first seen.
    first: Vec<Option<u64>>,
    /// Where the last newline read is.
    newline: Option<u64>,
}

impl<'n> Watch<'n> {
    fn new(needles: &'n [&'n [u8]], from: u64) -> Watch<'n> {
        Watch {
            needles,
            from,
            carry: Vec::new(),
            first: vec![None; needles.len()],
            newline: None,
        }
    }

    /// Which of the needles (the index of the first, in their order) the
    /// complete lines written from where the watch started hold;
    /// `Some(needles.len())` when `f` cannot be read (it will not say).
    fn look(&mut self, f: &File) -> Option<usize> {
        let unreadable = Some(self.needles.len());
        let Ok(size) = f.metadata().map(|m| m.len()) else {
            return unreadable;
        };
        let keep = self.needles.iter().map(|n| n.len()).max().unwrap_or(1) - 1;
        let mut buf = Vec::new();
        while self.from < size {
            buf.clear();
            buf.extend_from_slice(&self.carry);
            let base = self.from - buf.len() as u64;
            let had = buf.len();
            buf.resize(had + CHUNK.min((size - self.from) as usize), 0);
            let Ok(got) = read_at(f, &mut buf[had..], self.from) else {
                return unreadable;
            };
            if got == 0 {
                break;
            }
            buf.truncate(had + got);
            if let Some(i) = memchr::memrchr(b'\n', &buf[had..]) {
                self.newline = Some(self.from + i as u64);
            }
            for (k, n) in self.needles.iter().enumerate() {
                if self.first[k].is_none() {
                    self.first[k] = memchr::memmem::find(&buf, n).map(|p| base + p as u64);
                }
            }
            self.from += got as u64;
            self.carry = buf[buf.len().saturating_sub(keep)..].to_vec();
        }
        // A needle holds no newline: one is in a complete line when a
        // newline comes after where it starts.
        (0..self.needles.len())
            .find(|&k| matches!((self.first[k], self.newline), (Some(p), Some(nl)) if nl >= p))
    }
}

/// Whether `who`'s transcript did not yet hold its call when first looked
/// at, and more of it was written while this waited: the agent writes its
/// transcript a little after the fact (Claude Code 2.1.332 was seen to run
/// a PreToolUse hook before the lines of the prompt it answers, an `@file`
/// attachment among them, were written), so a hook that refuses a change
/// first waits, at most [`CALL_WAIT`], for the line of the call itself;
/// every line before it is then written, and a catch-up sees what the
/// model was shown. `false` at once for an agent whose transcript fsview
/// does not read, a call without an id, a call already there, or a
/// transcript that will not get it ([`may_wait`]); after the wait, when
/// nothing was written.
pub fn waited_for_call(agent: &dyn Agent, opts: &Options, who: &Who) -> bool {
    matches!(wait_for_call(agent, opts, who), Waited::Came | Waited::Grew)
}

/// What [`wait_for_call`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waited {
    /// No wait: no transcript fsview reads, no call id, the call was there
    /// at the first look, or a transcript not to wait for.
    No,
    /// The call's line came.
    Came,
    /// More was written, but not the call's line.
    Grew,
    /// Nothing was written.
    Nothing,
}

/// The name of `who`'s transcript cursor in session `sid` (its views):
/// the session's own; in a session named otherwise than the conversation
/// (`--sid`), which several conversations may share, each with its own
/// transcript, the conversation's within it (`SID`, a newline, the
/// conversation), so that their hooks do not read each other's
/// transcripts again from the start, nor share their waits.
fn cursor_key(who: &Who, sid: &str) -> String {
    let conversation = match &who.agent {
        None => who.session.clone(),
        Some(a) => fsview_store::agents::sid_of(&who.session, a),
    };
    match conversation == sid {
        true => conversation,
        false => format!("{sid}\n{conversation}"),
    }
}

/// A transcript a hook may wait for: where it is, open, and what its
/// cursor says of it.
struct Waitable {
    store: Store,
    /// The session of the views (its log), and the cursor's name.
    sid: String,
    key: String,
    f: File,
    size: u64,
    cursor: Cursor,
}

/// `who`'s transcript, when a hook may wait for it: it exists, is the file
/// the catch-up read (its cursor), names the conversation, and the
/// conversation's waits have not used up [`WAIT_BUDGET`]. A transcript
/// that is missing, empty, another conversation's, or not a regular file
/// is never waited for: its lines will not come.
fn may_wait(opts: &Options, who: &Who) -> Option<Waitable> {
    let path = who.transcript.as_deref()?;
    let (file, sid) = core::views_of(opts, who).ok()?;
    let Opened::File(f, meta) = open(path) else {
        return None;
    };
    let store = Store::open_existing(&file).ok().flatten()?;
    let key = cursor_key(who, &sid);
    let cursor = store.cursor(&key).ok().flatten()?;
    at_cursor(Some(&cursor), path, &meta)?;
    let kept = Kept::of(Some(&cursor));
    if !kept.named || kept.left().is_zero() {
        return None;
    }
    Some(Waitable {
        store,
        sid,
        key,
        f,
        size: meta.len(),
        cursor,
    })
}

impl Waitable {
    /// Wait until `watch` sees one of its needles (its index), at most
    /// [`CALL_WAIT`] or what is left of the budget; add the time to the
    /// conversation's waits, and log a wait that gave up, for `what`.
    fn wait(&self, watch: &mut Watch<'_>, what: &str) -> Option<usize> {
        let bound = CALL_WAIT.min(Kept::of(Some(&self.cursor)).left());
        let start = Instant::now();
        let mut seen = None;
        while seen.is_none() && start.elapsed() < bound {
            std::thread::sleep(Duration::from_millis(10));
            seen = watch.look(&self.f);
        }
        let waited = start.elapsed();
        let _ = self.spent(waited, seen.is_none(), what);
        seen
    }

    /// Add `waited` to the conversation's waits; log it when it `gave_up`.
    fn spent(&self, waited: Duration, gave_up: bool, what: &str) -> Result<(), Problem> {
        // The cursor as it is now (a hook may have read on meanwhile).
        let now = self.store.cursor(&self.key)?;
        let mut kept = Kept::of(now.as_ref());
        kept.charge(waited);
        if let Some(now) = &now {
            let next = Cursor {
                state: kept.to_state(),
                ..now.clone()
            };
            self.store.advance_cursor(&self.key, Some(now), &next)?;
        }
        if gave_up {
            let mut detail = format!(
                "{what}: not in the transcript after {} ms; this conversation has waited {} ms of {}",
                waited.as_millis(),
                kept.waited_ms,
                WAIT_BUDGET.as_millis()
            );
            if kept.left().is_zero() {
                detail.push_str(", and waits no more");
            }
            self.store.log(
                &self.sid,
                &[LogEvent::new(core::TOOL, "wait")
                    .verdict("gave up")
                    .detail(Some(&detail))],
            )?;
        }
        Ok(())
    }
}

fn wait_for_call(agent: &dyn Agent, opts: &Options, who: &Who) -> Waited {
    let (Some(_), Some(call)) = (agent.transcript(), who.call.as_deref()) else {
        return Waited::No;
    };
    let Some(w) = may_wait(opts, who) else {
        return Waited::No;
    };
    let needle = format!("\"{call}\"");
    let needles = [needle.as_bytes()];
    // The call is one of the last lines: the tail first, then only what
    // is written since.
    let mut watch = Watch::new(&needles, w.size.saturating_sub(TAIL));
    if watch.look(&w.f).is_some() {
        return Waited::No;
    }
    match w.wait(&mut watch, &format!("call {call}")) {
        Some(0) => Waited::Came,
        _ if w.f.metadata().is_ok_and(|m| m.len() != w.size) => Waited::Grew,
        _ => Waited::Nothing,
    }
}

/// How much of a transcript's end [`siblings`] reads first.
const TAIL: u64 = 1 << 20;

/// The other calls of the message that launches a subagent (`who`'s call),
/// whose results the subagent's context, ending with that message, does
/// not hold.
#[derive(Debug)]
pub enum Siblings {
    /// The message was found in the transcript: its other calls.
    Known(Vec<String>),
    /// The transcript does not hold the launch, even after waiting
    /// ([`CALL_WAIT`]): which calls shared its message is not known. The
    /// transcript, for [`unwritten`].
    Unwritten(Unwritten),
    /// The agent keeps no transcript fsview reads, or the call has no id.
    NoTranscript,
}

/// A transcript that does not hold a launch ([`Siblings::Unwritten`]).
#[derive(Debug)]
pub struct Unwritten {
    /// Where it is; `None` when it cannot be read.
    path: Option<PathBuf>,
}

/// The other calls of the message that made `who`'s call (a subagent's
/// launch), from `who`'s transcript, waiting for the transcript to reach
/// the call as a refusal does ([`waited_for_call`]).
pub fn siblings(agent: &dyn Agent, opts: &Options, who: &Who) -> Siblings {
    let (Some(format), Some(path), Some(call)) = (
        agent.transcript(),
        who.transcript.as_deref(),
        who.call.as_deref(),
    ) else {
        return Siblings::NoTranscript;
    };
    let needle = format!("\"{call}\"");
    // The launch's other calls: the message's lines are together, and one
    // of the last; its line is looked for in the tail first, then in the
    // whole file, and the lines around it read.
    let find = || -> Option<Vec<String>> {
        let Opened::File(f, meta) = open(path) else {
            return None;
        };
        let size = meta.len();
        for from in [size.saturating_sub(TAIL), 0] {
            let needles = [needle.as_bytes()];
            let mut watch = Watch::new(&needles, from);
            watch.look(&f);
            if let Some(at) = watch.first[0] {
                let around = complete_lines(&f, at.saturating_sub(TAIL), (at + TAIL).min(size));
                let mut s: Vec<String> = format.siblings(&around, call)?.into_iter().collect();
                s.sort();
                return Some(s);
            }
            if from == 0 {
                break;
            }
        }
        None
    };
    if let Some(s) = find() {
        return Siblings::Known(s);
    }
    // Looked at again after the wait, whatever it saw: what was written
    // meanwhile names calls that came before the launch.
    let waited = wait_for_call(agent, opts, who);
    if let Some(s) = find() {
        return Siblings::Known(s);
    }
    // A subagent's transcript (Claude Code writes one for each) may not be
    // there at all yet on a busy machine, or not yet read by any hook of
    // the subagent: no cursor to wait on. So may the main thread's, early
    // in a conversation (a fork launched by its first calls). Its lines
    // will come: looked for as long as a call's line is waited for.
    // The main thread's waits for an unread transcript count against the
    // conversation's budget: one Claude Code never writes
    // (`--no-session-persistence`) costs at most that, once.
    let bound = match (&who.agent, waited) {
        (Some(_), Waited::No) => Some(CALL_WAIT),
        (None, Waited::No) => unread(opts, who).map(|left| CALL_WAIT.min(left)),
        _ => None,
    };
    if let Some(bound) = bound {
        let start = Instant::now();
        let mut found = None;
        while found.is_none() && start.elapsed() < bound {
            std::thread::sleep(Duration::from_millis(10));
            found = find();
        }
        if who.agent.is_none() {
            charge_unread(opts, who, path, start.elapsed());
        }
        if let Some(s) = found {
            return Siblings::Known(s);
        }
    }
    Siblings::Unwritten(Unwritten {
        path: matches!(open(path), Opened::File(..)).then(|| path.to_path_buf()),
    })
}

/// When no hook of `who`'s has read its transcript yet (no cursor, or none
/// of its lines named the conversation): what is left of the
/// conversation's wait budget. `None` once it was read (the waits of
/// [`may_wait`] apply), or without a session to keep the budget in.
fn unread(opts: &Options, who: &Who) -> Option<Duration> {
    let (file, sid) = core::views_of(opts, who).ok()?;
    let store = Store::open_existing(&file).ok().flatten()?;
    let cursor = store.cursor(&cursor_key(who, &sid)).ok().flatten();
    let kept = Kept::of(cursor.as_ref());
    (!kept.named).then(|| kept.left())
}

/// Add `waited` to the wait budget of `who`'s conversation, whose
/// transcript (at `path`) no hook has read yet: kept with its cursor, made
/// for it if there is none (one that matches no file, so the first
/// catch-up reads the transcript from its start).
fn charge_unread(opts: &Options, who: &Who, path: &Path, waited: Duration) {
    let Ok((file, sid)) = core::views_of(opts, who) else {
        return;
    };
    let Ok(Some(store)) = Store::open_existing(&file) else {
        return;
    };
    let key = cursor_key(who, &sid);
    let Ok(was) = store.cursor(&key) else {
        return;
    };
    let mut kept = Kept::of(was.as_ref());
    kept.charge(waited);
    let next = match &was {
        Some(c) => Cursor {
            state: kept.to_state(),
            ..c.clone()
        },
        None => Cursor {
            path: path.to_path_buf(),
            dev: 0,
            ino: 0,
            offset: 0,
            state: kept.to_state(),
            problem: None,
        },
    };
    let _ = store.advance_cursor(&key, was.as_ref(), &next);
}

/// The complete lines of `f` between `from` and `to` (the first cut at its
/// start dropped, the last at its end), at most `to - from` bytes.
fn complete_lines(f: &File, from: u64, to: u64) -> Vec<u8> {
    let mut buf = vec![0u8; to.saturating_sub(from) as usize];
    let n = read_at(f, &mut buf, from).unwrap_or(0);
    buf.truncate(n);
    let end = memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1);
    buf.truncate(end);
    if from > 0 {
        let start = memchr::memchr(b'\n', &buf).map_or(buf.len(), |i| i + 1);
        buf.drain(..start);
    }
    buf
}

/// Of the call ids `ids`, those the transcript `all` ([`Siblings::Unwritten`])
/// does not name at all: calls whose message is not written yet. The
/// transcript is written in order, so when the launch of a subagent is not
/// there, neither is any call of its message, and the calls it does name
/// came before it. Read a chunk at a time: every string between two
/// quotes is looked up among the ids.
/// The origin of what was told with prompt `id` (Claude Code's
/// `prompt_id`, whose turn's transcript entries carry it as `promptId`):
/// held while an entry of that turn is on the live chain.
pub fn prompt_origin(id: &str) -> String {
    format!("{PROMPT_ORIGIN}{id}")
}

/// How [`prompt_origin`] starts.
pub const PROMPT_ORIGIN: &str = "prompt:";

/// Of the origins `ids`, those `all`'s transcript does not name yet (a
/// prompt's origin by its prompt id).
pub fn unwritten(all: &Unwritten, ids: Vec<String>) -> Vec<String> {
    let bare = |id: &String| id.strip_prefix(PROMPT_ORIGIN).unwrap_or(id).to_string();
    let named: Vec<String> = ids.iter().map(bare).collect();
    let left = unwritten_ids(all, named.clone());
    ids.into_iter()
        .zip(named)
        .filter(|(_, n)| left.contains(n))
        .map(|(id, _)| id)
        .collect()
}

fn unwritten_ids(all: &Unwritten, ids: Vec<String>) -> Vec<String> {
    let Some(Opened::File(f, meta)) = all.path.as_deref().map(open) else {
        return ids;
    };
    let mut left: HashSet<String> = ids.iter().cloned().collect();
    let longest = ids.iter().map(String::len).max().unwrap_or(0);
    // The bytes since the last quote (a string cut between two chunks),
    // while not longer than an id.
    let mut string: Vec<u8> = Vec::new();
    let mut too_long = false;
    let mut pos = 0;
    let mut chunk = vec![0u8; CHUNK];
    while pos < meta.len() && !left.is_empty() {
        let Ok(got) = read_at(&f, &mut chunk, pos) else {
            break;
        };
        if got == 0 {
            break;
        }
        let data = &chunk[..got];
        let mut from = 0;
        for q in memchr::memchr_iter(b'"', data) {
            let piece = &data[from..q];
            if !too_long && string.len() + piece.len() <= longest {
                string.extend_from_slice(piece);
                if let Ok(s) = std::str::from_utf8(&string) {
                    left.remove(s);
                }
            }
            string.clear();
            too_long = false;
            from = q + 1;
        }
        let rest = &data[from..];
        if !too_long && string.len() + rest.len() <= longest {
            string.extend_from_slice(rest);
        } else {
            string.clear();
            too_long = true;
        }
        pos += got as u64;
    }
    ids.into_iter().filter(|id| left.contains(id)).collect()
}

/// Catch up with the transcript of `who`'s conversation, if its agent
/// keeps one fsview reads: record what it showed since the last hook, and
/// settle what the conversation holds. Returns a problem to say (once),
/// never fails the hook.
pub fn catch_up(agent: &dyn Agent, opts: &Options, who: &Who) -> Option<String> {
    let format = agent.transcript()?;
    let path = who.transcript.as_deref()?;
    match run(agent, format, opts, who, path) {
        Ok(said) => said,
        Err(Problem(msg)) => Some(format!(
            "the transcript {} was not read: {msg}",
            quote(path)
        )),
    }
}

fn run(
    agent: &dyn Agent,
    format: &dyn Format,
    opts: &Options,
    who: &Who,
    path: &Path,
) -> Result<Option<String>, Problem> {
    let (file, sid) = core::views_of(opts, who)?;
    let key = cursor_key(who, &sid);
    let (f, meta) = match open(path) {
        Opened::File(f, meta) => (f, meta),
        // Not written yet (a new conversation), or gone: nothing shown.
        Opened::Missing => return Ok(None),
        Opened::Unusable(problem) => return say_once(&file, &key, path, problem),
    };
    let store = Store::open(&file)?;
    let was = store.cursor(&key)?;
    let read = Reading {
        agent,
        format,
        opts,
        who,
        path,
        store: &store,
        sid: &sid,
        key: &key,
    };
    let now = read.on(&f, &meta, was.as_ref())?;
    let Some((prompt, mark, call)) = awaited(format, who, now.as_ref()) else {
        return Ok(None);
    };
    // The transcript has not reached the hook's own turn: wait for its
    // lines, looking again at what was just read (it may hold the call's
    // own line, which ends the wait at once), then read on. Only for a
    // transcript that will get them.
    let Some(w) = may_wait(opts, who) else {
        return Ok(None);
    };
    let from = at_cursor(was.as_ref(), path, &meta).map_or(0, |c| c.offset);
    let needles = [mark.as_bytes(), call.as_bytes()];
    let mut watch = Watch::new(&needles, from);
    let came = match watch.look(&f) {
        None => w.wait(&mut watch, &format!("prompt {prompt}")),
        seen => seen,
    };
    let meta = f.metadata().map_err(|e| read.io(e))?;
    let now = read.on(&f, &meta, store.cursor(&key)?.as_ref())?;
    if came != Some(0) {
        // Its lines did not come: later hooks of the turn do not wait.
        if let Some(now) = now {
            let mut kept = Kept::of(Some(&now));
            kept.format = format.reached(kept.format.as_deref(), prompt);
            let next = Cursor {
                state: kept.to_state(),
                ..now.clone()
            };
            store.advance_cursor(&key, Some(&now), &next)?;
        }
    }
    Ok(None)
}

/// When `who`'s hook is a tool call of the main thread whose prompt the
/// transcript, read up to the cursor `now`, has not reached: the prompt,
/// what its lines hold ([`Format::prompt_mark`]) and what the call's own
/// line holds (written after them). Claude Code writes its transcript a
/// little after the fact (up to 100 ms when idle, longer under load), and
/// a hook run before the lines of its own prompt would judge the
/// conversation as it was before them (a rewind's new prompt abandons
/// views the gate would still count).
fn awaited<'a>(
    format: &dyn Format,
    who: &'a Who,
    now: Option<&Cursor>,
) -> Option<(&'a str, String, String)> {
    let (Some(prompt), Some(call), None) = (who.prompt.as_deref(), who.call.as_deref(), &who.agent)
    else {
        return None;
    };
    let mark = format.prompt_mark(prompt)?;
    if format.at_prompt(Kept::of(now).format.as_deref(), prompt) {
        return None;
    }
    Some((prompt, mark, format!("\"{call}\"")))
}

/// The cursor `was`, if it is one into the transcript at `path` as `meta`
/// says it is now (the same file, not shorter than what was read of it).
fn at_cursor<'c>(
    was: Option<&'c Cursor>,
    path: &Path,
    meta: &std::fs::Metadata,
) -> Option<&'c Cursor> {
    was.filter(|c| {
        c.path == path
            && c.dev == meta.dev()
            && c.ino == meta.ino()
            && c.offset.max(Kept::of(Some(c)).scanned) <= meta.len()
    })
}

/// What reading a transcript on from a cursor needs.
struct Reading<'a> {
    agent: &'a dyn Agent,
    format: &'a dyn Format,
    opts: &'a Options,
    who: &'a Who,
    path: &'a Path,
    store: &'a Store,
    /// The session of the views.
    sid: &'a str,
    /// The cursor's name ([`cursor_key`]).
    key: &'a str,
}

impl Reading<'_> {
    fn io(&self, e: std::io::Error) -> Problem {
        Problem::new(format!(
            "cannot read the transcript {} ({})",
            quote(self.path),
            plain_io(&e)
        ))
    }

    /// Whether `line` names the conversation ([`Format::names`]).
    fn names(&self, lines: &[(u64, &[u8])]) -> bool {
        self.format.names(&self.who.session).is_some_and(|n| {
            lines
                .iter()
                .any(|(_, l)| memchr::memmem::find(l, n.as_bytes()).is_some())
        })
    }

    /// Read what the transcript `f` (`meta`) says since the cursor `was`,
    /// and record it. Returns the cursor now.
    fn on(
        &self,
        f: &File,
        meta: &std::fs::Metadata,
        was: Option<&Cursor>,
    ) -> Result<Option<Cursor>, Problem> {
        let size = meta.len();
        let same = at_cursor(was, self.path, meta);
        let mut kept = Kept::of(same);
        let at = same.map_or(At::default(), |c| At {
            offset: c.offset,
            scanned: kept.scanned.max(c.offset),
        });
        if same.is_some_and(|c| c.problem.is_none()) && at.scanned == size {
            return Ok(was.cloned()); // nothing new
        }
        let mut next = Cursor {
            path: self.path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
            offset: 0,
            state: None,
            problem: None,
        };
        // What this conversation waited is its own, whatever the file.
        let waited_ms = Kept::of(was).waited_ms;
        let compaction = match same {
            Some(_) => {
                let mut have = None;
                let mut failed = None;
                let mut resync = None;
                let end = each_line(f, at, size, &mut |batch| {
                    let lines: Vec<&[u8]> = batch.iter().map(|(_, l)| *l).collect();
                    kept.named = kept.named || self.names(batch);
                    match self.format.read(&lines, kept.format.as_deref()) {
                        Step::Read { found, state } => {
                            kept.format = Some(state);
                            if let Err(p) = self.replay(&mut have, found) {
                                failed = Some(p);
                                return false;
                            }
                            true
                        }
                        Step::Release { calls, state } => {
                            kept.format = Some(state);
                            if let Err(p) = core::release_calls(self.store, self.sid, &calls) {
                                failed = Some(p);
                                return false;
                            }
                            true
                        }
                        Step::Resync { compaction } => {
                            resync = Some(compaction);
                            false
                        }
                    }
                })
                .map_err(|e| self.io(e))?;
                if let Some(p) = failed {
                    return Err(p);
                }
                match (end, resync) {
                    (Some(end), _) => {
                        kept.scanned = end.scanned;
                        kept.waited_ms = waited_ms;
                        next.offset = end.offset;
                        next.state = kept.to_state();
                        return self.store(was, next);
                    }
                    (None, compaction) => compaction.unwrap_or(false),
                }
            }
            None => false,
        };
        let next = self.resync(f, size, compaction, waited_ms, next)?;
        self.store(was, next)
    }

    /// Read the whole transcript (`size` bytes of `f`) and settle what the
    /// conversation holds: the views of origins it no longer has are
    /// released, those it holds again restored, and its live views not
    /// yet recorded are. Returns the cursor past it, to store.
    fn resync(
        &self,
        f: &File,
        size: u64,
        compaction: bool,
        waited_ms: u64,
        mut next: Cursor,
    ) -> Result<Cursor, Problem> {
        let Reading { store, sid, .. } = *self;
        let mut r = self.format.resync();
        let mut named = false;
        let end = each_line(f, At::default(), size, &mut |batch| {
            named = named || self.names(batch);
            r.lines(batch);
            true
        })
        .map_err(|e| self.io(e))?
        .unwrap_or_default();
        let h = r.finish();
        if compaction {
            // Read at the compaction itself: nothing but what it kept is
            // held, whatever its origin.
            store.hold_only(sid, &h.live, Scope::All, Released::Compaction, core::TOOL)?;
        } else {
            store.hold_only(
                sid,
                &h.live,
                Scope::Origins(&h.compacted),
                Released::Compaction,
                core::TOOL,
            )?;
        }
        store.hold_only(
            sid,
            &h.live,
            Scope::Origins(&h.abandoned),
            Released::Rewind,
            core::TOOL,
        )?;
        next.offset = end.offset;
        next.state = Kept {
            format: Some(h.state),
            scanned: end.scanned,
            named,
            waited_ms,
        }
        .to_state();
        self.replay_located(f, h.found)?;
        Ok(next)
    }

    /// Record the views `found`, those whose origin the session does not
    /// have yet (`have`, read once), each as its agent's hook would have
    /// (held to the disk). The same text shown again records the same
    /// view: only its latest showing is recorded.
    fn replay(&self, have: &mut Option<HashSet<String>>, found: Vec<Found>) -> Result<(), Problem> {
        if found.is_empty() {
            return Ok(());
        }
        let have = match have {
            Some(h) => h,
            None => have.insert(self.store.origins(self.sid)?),
        };
        let mut shown_later = HashSet::new();
        let mut todo: Vec<Found> = found
            .into_iter()
            .rev()
            .filter(|f| !have.contains(&f.origin) && shown_later.insert(same_view(&f.event)))
            .collect();
        todo.reverse();
        for f in todo {
            have.insert(f.origin.clone());
            self.record(f.origin, &f.event);
        }
        Ok(())
    }

    /// [`Reading::replay`] for the views a whole re-read located: each
    /// line read and parsed again, one at a time, so that no more than one
    /// view's text is held. Latest first, to know which showings are the
    /// latest; then recorded in order.
    fn replay_located(&self, f: &File, found: Vec<Located>) -> Result<(), Problem> {
        if found.is_empty() {
            return Ok(());
        }
        let have = self.store.origins(self.sid)?;
        let event =
            |l: &Located| line_at(f, l.at).and_then(|line| self.format.located(&line, &l.how));
        let mut shown_later = HashSet::new();
        let mut todo: Vec<&Located> = found
            .iter()
            .rev()
            .filter(|l| !have.contains(&l.origin))
            .filter(|l| event(l).is_some_and(|e| shown_later.insert(same_view(&e))))
            .collect();
        todo.reverse();
        for l in todo {
            if let Some(e) = event(l) {
                self.record(l.origin.clone(), &e);
            }
        }
        Ok(())
    }

    /// Record `event`, shown by `origin`, as the agent's hook would have.
    fn record(&self, origin: String, event: &Event) {
        let mut by = self.who.clone();
        by.call = Some(origin);
        // One view that cannot be held (its file gone) stops no other.
        let _ = core::replay(self.agent, self.opts, &by, event);
    }

    /// Store `next` as the cursor if it still is `was`; the cursor now.
    fn store(&self, was: Option<&Cursor>, next: Cursor) -> Result<Option<Cursor>, Problem> {
        Ok(match self.store.advance_cursor(self.key, was, &next)? {
            true => Some(next),
            // Another hook read on first: its cursor.
            false => self.store.cursor(self.key)?,
        })
    }
}

/// What makes two events record the same view: a hash of the file, the
/// extent and the text.
fn same_view(e: &Event) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match e {
        Event::Shown(s) => {
            (0u8, &s.path, s.offset, format!("{:?}", s.extent)).hash(&mut h);
            format!("{:?}", s.text).hash(&mut h);
        }
        Event::Changed(c) => (1u8, &c.path, &c.text, &c.before, c.whole).hash(&mut h),
        other => format!("{other:?}").hash(&mut h),
    }
    h.finish()
}

/// Say `problem` unless it was said last time for this cursor (`key`): it
/// is kept with the cursor (which stays where it was).
fn say_once(
    file: &Path,
    key: &str,
    path: &Path,
    problem: String,
) -> Result<Option<String>, Problem> {
    let store = Store::open(file)?;
    let was = store.cursor(key)?;
    if was.as_ref().and_then(|c| c.problem.as_deref()) == Some(problem.as_str()) {
        return Ok(None);
    }
    let next = match &was {
        Some(c) => Cursor {
            problem: Some(problem.clone()),
            ..c.clone()
        },
        None => Cursor {
            path: path.to_path_buf(),
            problem: Some(problem.clone()),
            ..Cursor::default()
        },
    };
    store.advance_cursor(key, was.as_ref(), &next)?;
    Ok(Some(problem))
}

/// What the whole transcript `all` says, read as a hook reads it: its
/// complete lines, then the views it located, each parsed from its line.
#[cfg(test)]
pub(crate) fn resync_bytes(format: &dyn Format, all: &[u8]) -> (Holding, Vec<Found>) {
    let mut r = format.resync();
    let mut at = 0;
    let mut lines = Vec::new();
    for l in all.split_inclusive(|b| *b == b'\n') {
        if l.ends_with(b"\n") {
            lines.push((at as u64, &l[..l.len() - 1]));
        }
        at += l.len();
    }
    r.lines(&lines);
    let h = r.finish();
    let found = h
        .found
        .iter()
        .filter_map(|l| {
            let line = lines.iter().find(|(a, _)| *a == l.at)?.1;
            Some(Found {
                origin: l.origin.clone(),
                event: format.located(line, &l.how)?,
            })
        })
        .collect();
    (h, found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        std::fs::write(&p, bytes).unwrap();
        let f = File::open(&p).unwrap();
        (d, f)
    }

    /// Every line `each_line` gives from `at`, and where it stopped.
    fn all_lines(f: &File, at: At) -> (Vec<(u64, Vec<u8>)>, At) {
        let size = f.metadata().unwrap().len();
        let mut got = Vec::new();
        let end = each_line(f, at, size, &mut |b| {
            got.extend(b.iter().map(|(a, l)| (*a, l.to_vec())));
            true
        })
        .unwrap()
        .unwrap();
        (got, end)
    }

    // Lines across chunks are read whole; the bytes of a line still being
    // written are looked at once and not read again until its newline
    // comes; a line over MAX_LINE is skipped, and the cursor moved past it.
    #[test]
    fn lines_are_read_in_chunks_and_a_cut_tail_once() {
        let long = vec![b'x'; CHUNK + 10];
        let mut all = b"one\n".to_vec();
        all.extend_from_slice(&long);
        all.extend_from_slice(b"\ntwo\nthr");
        let (_d, f) = file(&all);
        let (lines, end) = all_lines(&f, At::default());
        assert_eq!(
            lines,
            [
                (0, b"one".to_vec()),
                (4, long.clone()),
                (CHUNK as u64 + 15, b"two".to_vec())
            ]
        );
        let size = all.len() as u64;
        assert_eq!(
            end,
            At {
                offset: size - 3,
                scanned: size
            }
        );
        // Read again from there: nothing new, nothing read.
        assert_eq!(all_lines(&f, end), (vec![], end));
        // Its newline comes: the line is read whole, from its start.
        let (_d, f) = file(&[&all[..], b"ee\n"].concat());
        assert_eq!(all_lines(&f, end).0, [(size - 3, b"three".to_vec())]);
    }

    #[test]
    fn a_line_over_the_cap_is_skipped() {
        let mut all = b"one\n".to_vec();
        all.resize(4 + MAX_LINE + 1, b'y');
        let cut = all.len() as u64;
        let (_d, f) = file(&all);
        // Not complete: the cursor stays at its start, its bytes looked at.
        let (lines, end) = all_lines(&f, At::default());
        assert_eq!(lines, [(0, b"one".to_vec())]);
        assert_eq!(
            end,
            At {
                offset: 4,
                scanned: cut
            }
        );
        // Complete: skipped, and the line after it read.
        all.extend_from_slice(b"\ntwo\n");
        let (_d, f) = file(&all);
        let (lines, end) = all_lines(&f, end);
        assert_eq!(lines, [(cut + 1, b"two".to_vec())]);
        assert_eq!(end.offset, all.len() as u64);
        // The same from the start, the long line held in no buffer.
        let (lines, _) = all_lines(&f, At::default());
        assert_eq!(lines, [(0, b"one".to_vec()), (cut + 1, b"two".to_vec())]);
    }

    // A view's line read again from where it starts: a short one, one
    // longer than the first read, none where no newline ends it.
    #[test]
    fn a_line_is_read_again_from_where_it_starts() {
        let long = vec![b'z'; 300 << 10];
        let all = [&b"one\n"[..], &long, b"\nthree"].concat();
        let (_d, f) = file(&all);
        assert_eq!(line_at(&f, 0).as_deref(), Some(&b"one"[..]));
        assert_eq!(line_at(&f, 4), Some(long));
        assert_eq!(line_at(&f, all.len() as u64 - 5), None);
    }

    // A watch finds a needle only in a complete line, even cut between
    // two looks, and reads each byte once.
    #[test]
    fn a_watch_sees_needles_in_complete_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        std::fs::write(&p, b"{\"a\":1}\n{\"id\":\"tool").unwrap();
        let f = File::open(&p).unwrap();
        let needles: [&[u8]; 2] = [b"\"prompt\"", b"\"toolu_1\""];
        let mut w = Watch::new(&needles, 0);
        assert_eq!(w.look(&f), None);
        let mut out = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        out.write_all(b"u_1\"}").unwrap();
        assert_eq!(w.look(&f), None, "not a complete line yet");
        out.write_all(b"\n").unwrap();
        assert_eq!(w.look(&f), Some(1));
        out.write_all(b"{\"prompt\":2}\n").unwrap();
        assert_eq!(w.look(&f), Some(0));
    }

    #[test]
    fn the_reader_keeps_the_formats_state_and_its_own() {
        let c = |state: &str| Cursor {
            state: Some(state.to_string()),
            ..Cursor::default()
        };
        // A state kept before the reader kept its own is the format's.
        let old = Kept::of(Some(&c("{\"leaf\":\"u1\"}")));
        assert_eq!(old.format.as_deref(), Some("{\"leaf\":\"u1\"}"));
        let k = Kept {
            format: Some("{\"leaf\":\"u1\"}".into()),
            scanned: 7,
            named: true,
            waited_ms: 3000,
        };
        assert_eq!(Kept::of(Some(&c(&k.to_state().unwrap()))), k);
        assert_eq!(k.left(), Duration::from_millis(7000));
    }

    #[test]
    fn unwritten_calls_are_those_the_transcript_does_not_name() {
        let mut all = b"{\"id\":\"toolu_a\"}\n".to_vec();
        // A string cut between two chunks is still seen.
        all.resize(CHUNK - 8, b' ');
        all.extend_from_slice(b"{\"x\":\"toolu_b\"}\n");
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        std::fs::write(&p, &all).unwrap();
        let u = Unwritten { path: Some(p) };
        let ids = ["toolu_a", "toolu_b", "toolu_c", "toolu"]
            .map(String::from)
            .to_vec();
        assert_eq!(unwritten(&u, ids), ["toolu_c", "toolu"]);
    }
}
