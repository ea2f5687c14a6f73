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
//!   read ([`fsview_store::transcripts`]). A hook reads only the bytes
//!   written since, up to the last newline (a line being written is read
//!   next time); when nothing was written it costs one `fstat`. A transcript
//!   that is another file now (another identity, or shorter than the
//!   offset) is read again from its start.
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
//! - **Never in the agent's way.** A transcript that is missing (not written
//!   yet) records nothing; one that cannot be read records nothing and says
//!   so once (the problem is kept with the cursor until it changes); a
//!   catch-up that fails never fails the hook's own answer.

pub mod claude;
pub mod droid;

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use fsview_store::error::{plain_io, quote};
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
    pub found: Vec<Found>,
    /// The reader's state after the last line.
    pub state: String,
}

/// How one agent writes its transcript.
pub trait Format: Sync {
    /// The agent and version whose transcripts were seen to be written so.
    fn seen_in(&self) -> &'static str;

    /// What the complete lines `lines`, written after those the reader's
    /// `state` (from the previous call, `None` at first) came from, say.
    fn read(&self, lines: &[&[u8]], state: Option<&str>) -> Step;

    /// What the whole transcript `all` (complete lines) says.
    fn resync(&self, all: &[u8]) -> Holding;

    /// The other calls of the message that made call `call`, if `tail`
    /// (the transcript's last lines) holds it.
    fn siblings(&self, tail: &[u8], call: &str) -> Option<HashSet<String>>;

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

/// How long a hook waits for the agent's transcript to reach its call
/// ([`waited_for_call`]), and for a transcript not created yet to appear.
/// Claude Code writes its transcript at most 100 ms after the fact when
/// idle (its write queue drains on a timer); on a loaded 2-core machine it
/// was seen to take longer than 0.75 s. A wait ends as soon as the line
/// is there, so the bound only matters when it never comes.
const CALL_WAIT: std::time::Duration = std::time::Duration::from_millis(3000);
const CREATE_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// Whether `who`'s transcript did not yet hold its call when first looked
/// at, and more of it was written while this waited: the agent writes its
/// transcript a little after the fact (Claude Code 2.1.332 was seen to run
/// a PreToolUse hook before the lines of the prompt it answers, an `@file`
/// attachment among them, were written), so a hook that refuses a change
/// first waits, at most [`CALL_WAIT`], for the line of the call itself;
/// every line before it is then written, and a catch-up sees what the
/// model was shown. A transcript not created yet is waited for the same
/// way, at most [`CREATE_WAIT`] (an agent that keeps none, such as Claude
/// Code with `--no-session-persistence`, still names one). `false` at once
/// for an agent whose transcript fsview does not read, a call without an
/// id, or a call already there; after the wait, when nothing was written.
pub fn waited_for_call(agent: &dyn Agent, who: &Who) -> bool {
    matches!(wait_for_call(agent, who), Waited::Came | Waited::Grew)
}

/// What [`wait_for_call`] saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waited {
    /// No wait: no transcript fsview reads, no call id, or the call was
    /// there at the first look.
    No,
    /// The call's line came.
    Came,
    /// More was written, but not the call's line.
    Grew,
    /// Nothing was written (or the transcript was never created).
    Nothing,
}

fn wait_for_call(agent: &dyn Agent, who: &Who) -> Waited {
    let (Some(_), Some(path), Some(call)) = (
        agent.transcript(),
        who.transcript.as_deref(),
        who.call.as_deref(),
    ) else {
        return Waited::No;
    };
    let needle = format!("\"{call}\"");
    // Where the next look starts: the tail at first, then only what was
    // written since ([`lines_hold`]).
    let mut from: Option<u64> = None;
    // Some((there, size)): whether the call is there, and the size looked
    // at (None: no file yet); None: a transcript that will not say (not a
    // regular file, unreadable).
    let mut holds = || -> Option<(bool, Option<u64>)> {
        let mut f = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some((false, None)),
            Err(_) => return None,
        };
        let size = f.metadata().ok().filter(|m| m.is_file())?.len();
        let mut at = match from {
            Some(seen) if seen <= size => seen,
            _ => size.saturating_sub(TAIL),
        };
        let found = lines_hold(&mut f, &mut at, &[needle.as_bytes()]);
        from = Some(at);
        match found {
            Some(0) => Some((true, Some(size))),
            Some(_) => None,
            None => Some((false, Some(size))),
        }
    };
    let first = match holds() {
        Some((false, size)) => size,
        _ => return Waited::No,
    };
    let start = std::time::Instant::now();
    let mut last = first;
    loop {
        let bound = if last.is_some() {
            CALL_WAIT
        } else {
            CREATE_WAIT
        };
        if start.elapsed() >= bound {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        match holds() {
            Some((true, _)) => return Waited::Came,
            Some((false, size)) => last = size,
            None => break,
        }
    }
    if last != first {
        Waited::Grew
    } else {
        Waited::Nothing
    }
}

/// How much of a transcript's end [`siblings`] reads first.
const TAIL: u64 = 1 << 20;

/// The other calls of the message that launches a subagent (`who`'s call),
/// whose results the subagent's context, ending with that message, does
/// not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Siblings {
    /// The message was found in the transcript: its other calls.
    Known(Vec<String>),
    /// The transcript does not hold the launch, even after waiting
    /// ([`CALL_WAIT`]): which calls shared its message is not known. The
    /// whole transcript as last read (empty when it cannot be read), for
    /// [`unwritten`].
    Unwritten(Vec<u8>),
    /// The agent keeps no transcript fsview reads, or the call has no id.
    NoTranscript,
}

/// The other calls of the message that made `who`'s call (a subagent's
/// launch), from `who`'s transcript, waiting for the transcript to reach
/// the call as a refusal does ([`waited_for_call`]).
pub fn siblings(agent: &dyn Agent, who: &Who) -> Siblings {
    let (Some(format), Some(path), Some(call)) = (
        agent.transcript(),
        who.transcript.as_deref(),
        who.call.as_deref(),
    ) else {
        return Siblings::NoTranscript;
    };
    // The launch's other calls, or the whole transcript read for it when
    // it does not hold the launch (empty when it cannot be read).
    let find = || -> Result<Vec<String>, Vec<u8>> {
        let Ok(mut f) = File::open(path) else {
            return Err(Vec::new());
        };
        let size = f.metadata().map_or(0, |m| m.len());
        let mut read = Vec::new();
        // The launch is one of the last entries; the whole file only if not.
        for from in [size.saturating_sub(TAIL), 0] {
            read = read_span(&mut f, from, size).unwrap_or_default();
            if let Some(s) = format.siblings(&read, call) {
                let mut s: Vec<String> = s.into_iter().collect();
                s.sort();
                return Ok(s);
            }
            if from == 0 {
                break;
            }
        }
        Err(read)
    };
    if let Ok(s) = find() {
        return Siblings::Known(s);
    }
    // Looked at again after the wait, whatever it saw: what was written
    // meanwhile names calls that came before the launch.
    wait_for_call(agent, who);
    match find() {
        Ok(s) => Siblings::Known(s),
        Err(all) => Siblings::Unwritten(all),
    }
}

/// Of the call ids `ids`, those the transcript `all` ([`Siblings::Unwritten`])
/// does not name at all: calls whose message is not written yet. The
/// transcript is written in order, so when the launch of a subagent is not
/// there, neither is any call of its message, and the calls it does name
/// came before it.
pub fn unwritten(all: &[u8], ids: Vec<String>) -> Vec<String> {
    ids.into_iter()
        .filter(|id| memchr::memmem::find(all, format!("\"{id}\"").as_bytes()).is_none())
        .collect()
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
    let opened = File::open(path).and_then(|f| f.metadata().map(|m| (f, m)));
    let (mut f, meta) = match opened {
        Ok(x) => x,
        // Not written yet (a new conversation), or gone: nothing shown.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            let problem = format!(
                "cannot read the transcript {} ({}); what it alone records (files attached to a prompt, compactions, rewinds) is not known",
                quote(path),
                plain_io(&e)
            );
            return say_once(&file, &sid, path, problem);
        }
    };
    if !meta.is_file() {
        return say_once(
            &file,
            &sid,
            path,
            format!("the transcript {} is not a regular file", quote(path)),
        );
    }
    let store = Store::open(&file)?;
    let was = store.cursor(&sid)?;
    let read = Reading {
        agent,
        format,
        opts,
        who,
        path,
        store: &store,
        sid: &sid,
    };
    let now = read.on(&mut f, &meta, was.as_ref())?;
    let Some((prompt, mark, call)) = awaited(format, who, now.as_ref()) else {
        return Ok(None);
    };
    // The transcript has not reached the hook's own turn: wait for its
    // lines, looking again at what was just read (it may hold the call's
    // own line, which ends the wait at once), then read on.
    let mut from = at_cursor(was.as_ref(), path, &meta).map_or(0, |c| c.offset);
    let needles = [mark.as_bytes(), call.as_bytes()];
    let start = std::time::Instant::now();
    let mut came = lines_hold(&mut f, &mut from, &needles);
    while came.is_none() && start.elapsed() < CALL_WAIT {
        std::thread::sleep(std::time::Duration::from_millis(10));
        came = lines_hold(&mut f, &mut from, &needles);
    }
    let meta = f.metadata().map_err(|e| read.io(e))?;
    let now = read.on(&mut f, &meta, now.as_ref())?;
    if came != Some(0) {
        // Its lines did not come: later hooks of the turn do not wait.
        if let Some(now) = now {
            let next = Cursor {
                state: format.reached(now.state.as_deref(), prompt),
                ..now.clone()
            };
            store.advance_cursor(&sid, Some(&now), &next)?;
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
    if format.at_prompt(now.and_then(|c| c.state.as_deref()), prompt) {
        return None;
    }
    Some((prompt, mark, format!("\"{call}\"")))
}

/// The cursor `was`, if it is one into the transcript at `path` as `meta`
/// says it is now (the same file, not shorter than its offset).
fn at_cursor<'c>(
    was: Option<&'c Cursor>,
    path: &Path,
    meta: &std::fs::Metadata,
) -> Option<&'c Cursor> {
    was.filter(|c| {
        c.path == path && c.dev == meta.dev() && c.ino == meta.ino() && c.offset <= meta.len()
    })
}

/// Which of `needles` (the index of the first, in their order) the
/// complete lines of `f` from `*from` to its end hold; `*from` moves to
/// where the next look starts (the end of those lines, less the longest
/// needle: one may be cut between two writes). `Some(needles.len())`
/// when `f` cannot be read: it will not say.
fn lines_hold(f: &mut File, from: &mut u64, needles: &[&[u8]]) -> Option<usize> {
    let Ok(new) = f.metadata().and_then(|m| read_span(f, *from, m.len())) else {
        return Some(needles.len());
    };
    let longest = needles.iter().map(|n| n.len()).max().unwrap_or(0) as u64;
    *from = (*from + new.len() as u64)
        .saturating_sub(longest)
        .max(*from);
    needles
        .iter()
        .position(|n| memchr::memmem::find(&new, n).is_some())
}

/// What reading a transcript on from a cursor needs.
struct Reading<'a> {
    agent: &'a dyn Agent,
    format: &'a dyn Format,
    opts: &'a Options,
    who: &'a Who,
    path: &'a Path,
    store: &'a Store,
    sid: &'a str,
}

impl Reading<'_> {
    fn io(&self, e: std::io::Error) -> Problem {
        Problem::new(format!(
            "cannot read the transcript {} ({})",
            quote(self.path),
            plain_io(&e)
        ))
    }

    /// Read what the transcript `f` (`meta`) says since the cursor `was`,
    /// and record it. Returns the cursor now.
    fn on(
        &self,
        f: &mut File,
        meta: &std::fs::Metadata,
        was: Option<&Cursor>,
    ) -> Result<Option<Cursor>, Problem> {
        let Reading {
            agent,
            format,
            opts,
            who,
            path,
            store,
            sid,
        } = *self;
        let size = meta.len();
        let same_file = at_cursor(was, path, meta).is_some();
        if same_file && was.is_some_and(|c| c.offset == size && c.problem.is_none()) {
            return Ok(was.cloned()); // nothing new
        }
        let next = Cursor {
            path: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
            offset: 0,
            state: None,
            problem: None,
        };
        let compaction = match was.filter(|_| same_file) {
            Some(c) => {
                let new = read_span(f, c.offset, size).map_err(|e| self.io(e))?;
                let lines: Vec<&[u8]> = new
                    .split(|b| *b == b'\n')
                    .filter(|l| !l.is_empty())
                    .collect();
                match format.read(&lines, c.state.as_deref()) {
                    Step::Read { found, state } => {
                        replay(agent, opts, who, store, sid, found)?;
                        let next = Cursor {
                            offset: c.offset + new.len() as u64,
                            state: Some(state),
                            ..next
                        };
                        return self.store(was, next);
                    }
                    Step::Resync { compaction } => compaction,
                }
            }
            None => false,
        };
        let next = self.resync(f, size, compaction, next)?;
        self.store(was, next)
    }

    /// Read the whole transcript (`size` bytes of `f`) and settle what the
    /// conversation holds: the views of origins it no longer has are
    /// released, those it holds again restored, and its live views not
    /// yet recorded are. Returns the cursor past it, to store.
    fn resync(
        &self,
        f: &mut File,
        size: u64,
        compaction: bool,
        mut next: Cursor,
    ) -> Result<Cursor, Problem> {
        let Reading {
            agent,
            format,
            opts,
            who,
            store,
            sid,
            ..
        } = *self;
        let all = read_span(f, 0, size).map_err(|e| self.io(e))?;
        let h = format.resync(&all);
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
        next.offset = all.len() as u64;
        next.state = Some(h.state);
        replay(agent, opts, who, store, sid, h.found)?;
        Ok(next)
    }

    /// Store `next` as the cursor if it still is `was`; the cursor now.
    fn store(&self, was: Option<&Cursor>, next: Cursor) -> Result<Option<Cursor>, Problem> {
        Ok(match self.store.advance_cursor(self.sid, was, &next)? {
            true => Some(next),
            // Another hook read on first: its cursor.
            false => self.store.cursor(self.sid)?,
        })
    }
}

/// Record the views `found`, those whose origin the session does not have
/// yet, each as its agent's hook would have (held to the disk).
fn replay(
    agent: &dyn Agent,
    opts: &Options,
    who: &Who,
    store: &Store,
    sid: &str,
    found: Vec<Found>,
) -> Result<(), Problem> {
    if found.is_empty() {
        return Ok(());
    }
    let have = store.origins(sid)?;
    // The same text shown again records the same view: only its latest
    // showing is recorded (a long conversation reads a file many times).
    let mut shown_later = HashSet::new();
    let mut todo: Vec<Found> = found
        .into_iter()
        .rev()
        .filter(|f| !have.contains(&f.origin) && shown_later.insert(same_view(&f.event)))
        .collect();
    todo.reverse();
    for f in todo {
        let mut by = who.clone();
        by.call = Some(f.origin);
        // One view that cannot be held (its file gone) stops no other.
        let _ = core::replay(agent, opts, &by, &f.event);
    }
    Ok(())
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

/// The bytes of `f` from `from` up to `to`, cut after the last newline: a
/// line still being written is left for next time.
fn read_span(f: &mut File, from: u64, to: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(to.saturating_sub(from) as usize);
    f.seek(SeekFrom::Start(from))?;
    f.take(to.saturating_sub(from)).read_to_end(&mut buf)?;
    let end = buf.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    buf.truncate(end);
    Ok(buf)
}

/// Say `problem` unless it was said last time for this session: it is kept
/// with the cursor (which stays where it was).
fn say_once(
    file: &Path,
    sid: &str,
    path: &Path,
    problem: String,
) -> Result<Option<String>, Problem> {
    let store = Store::open(file)?;
    let was = store.cursor(sid)?;
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
    store.advance_cursor(sid, was.as_ref(), &next)?;
    Ok(Some(problem))
}
