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
    // written since (and the needle's length before it, for a call cut
    // between two looks).
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
        let start = match from {
            Some(seen) if seen <= size => seen.saturating_sub(needle.len() as u64),
            _ => size.saturating_sub(TAIL),
        };
        let new = read_span(&mut f, start, size).ok()?;
        from = Some(size);
        Some((
            memchr::memmem::find(&new, needle.as_bytes()).is_some(),
            Some(size),
        ))
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
    let (meta, assumed) = wait_for_prompt(format, who, path, &mut f, meta, was.as_ref());
    read_on(
        agent,
        format,
        opts,
        who,
        path,
        (&store, &sid),
        f,
        meta,
        was.as_ref(),
    )?;
    if let Some(prompt) = assumed {
        // Its lines did not come: later hooks of the turn do not wait.
        if let Some(now) = store.cursor(&sid)? {
            let next = Cursor {
                state: format.reached(now.state.as_deref(), prompt),
                ..now.clone()
            };
            store.advance_cursor(&sid, Some(&now), &next)?;
        }
    }
    Ok(None)
}

/// Wait, when `who`'s hook is a tool call of the main thread whose prompt
/// the transcript (as read up to the cursor `was`) has not reached, for
/// the prompt's lines to be written: Claude Code writes its transcript a
/// little after the fact (up to 100 ms when idle, longer under load), and a
/// hook run before the lines of its own prompt would judge the conversation
/// as it was before them (a rewind's new prompt abandons views the gate
/// would still count). The wait ends at the prompt's lines, at the call's
/// own line (written after them: the prompt's lines were not marked), or
/// after [`CALL_WAIT`]. Returns the transcript's metadata now, and the
/// prompt when its lines did not come.
fn wait_for_prompt<'a>(
    format: &dyn Format,
    who: &'a Who,
    path: &Path,
    f: &mut File,
    meta: std::fs::Metadata,
    was: Option<&Cursor>,
) -> (std::fs::Metadata, Option<&'a str>) {
    let (Some(prompt), Some(call), None) = (who.prompt.as_deref(), who.call.as_deref(), &who.agent)
    else {
        return (meta, None);
    };
    let Some(mark) = format.prompt_mark(prompt) else {
        return (meta, None);
    };
    let cursor = was.filter(|c| {
        c.path == path && c.dev == meta.dev() && c.ino == meta.ino() && c.offset <= meta.len()
    });
    if format.at_prompt(cursor.and_then(|c| c.state.as_deref()), prompt) {
        return (meta, None);
    }
    let call = format!("\"{call}\"");
    let longest = mark.len().max(call.len()) as u64;
    let mut from = cursor.map_or(0, |c| c.offset);
    // Whether the lines written since `from` hold the prompt's mark (Some
    // (true)) or only the call (Some(false)); a transcript that cannot be
    // read any more will not say (Some(false) too).
    let mut look = |f: &mut File| -> Option<bool> {
        let Some(new) = f.metadata().and_then(|m| read_span(f, from, m.len())).ok() else {
            return Some(false);
        };
        let found = if memchr::memmem::find(&new, mark.as_bytes()).is_some() {
            Some(true)
        } else if memchr::memmem::find(&new, call.as_bytes()).is_some() {
            Some(false)
        } else {
            None
        };
        // The next look starts where this one ended, less a mark cut
        // between two lines' writes.
        from = (from + new.len() as u64).saturating_sub(longest).max(from);
        found
    };
    let start = std::time::Instant::now();
    let mut came = look(f);
    while came.is_none() && start.elapsed() < CALL_WAIT {
        std::thread::sleep(std::time::Duration::from_millis(10));
        came = look(f);
    }
    let meta = f.metadata().unwrap_or(meta);
    (meta, (came != Some(true)).then_some(prompt))
}

/// Read what the transcript `f` says since the cursor `was`, and record it.
#[allow(clippy::too_many_arguments)]
fn read_on(
    agent: &dyn Agent,
    format: &dyn Format,
    opts: &Options,
    who: &Who,
    path: &Path,
    (store, sid): (&Store, &str),
    mut f: File,
    meta: std::fs::Metadata,
    was: Option<&Cursor>,
) -> Result<(), Problem> {
    let size = meta.len();
    let same_file = was.is_some_and(|c| {
        c.path == path && c.dev == meta.dev() && c.ino == meta.ino() && c.offset <= size
    });
    if same_file && was.is_some_and(|c| c.offset == size && c.problem.is_none()) {
        return Ok(()); // nothing new
    }
    let mut next = Cursor {
        path: path.to_path_buf(),
        dev: meta.dev(),
        ino: meta.ino(),
        offset: 0,
        state: None,
        problem: None,
    };
    let io = |e: std::io::Error| {
        Problem::new(format!(
            "cannot read the transcript {} ({})",
            quote(path),
            plain_io(&e)
        ))
    };
    if same_file {
        let c = was.expect("same_file has a cursor");
        let new = read_span(&mut f, c.offset, size).map_err(io)?;
        let lines: Vec<&[u8]> = new
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        match format.read(&lines, c.state.as_deref()) {
            Step::Read { found, state } => {
                next.offset = c.offset + new.len() as u64;
                next.state = Some(state);
                replay(agent, opts, who, store, sid, found)?;
                store.advance_cursor(sid, was, &next)?;
                return Ok(());
            }
            Step::Resync { compaction } => {
                return resync(
                    agent,
                    format,
                    opts,
                    who,
                    (store, sid),
                    (&mut f, size),
                    compaction,
                    was,
                    next,
                );
            }
        }
    }
    resync(
        agent,
        format,
        opts,
        who,
        (store, sid),
        (&mut f, size),
        false,
        was,
        next,
    )
}

/// Read the whole transcript and settle what the conversation holds: the
/// views of origins it no longer has are released, those it holds again
/// restored, and its live views not yet recorded are.
#[allow(clippy::too_many_arguments)]
fn resync(
    agent: &dyn Agent,
    format: &dyn Format,
    opts: &Options,
    who: &Who,
    (store, sid): (&Store, &str),
    (f, size): (&mut File, u64),
    compaction: bool,
    was: Option<&Cursor>,
    mut next: Cursor,
) -> Result<(), Problem> {
    let all = read_span(f, 0, size).map_err(|e| {
        Problem::new(format!(
            "cannot read the transcript {} ({})",
            quote(&next.path),
            plain_io(&e)
        ))
    })?;
    let h = format.resync(&all);
    if compaction {
        // Read at the compaction itself: nothing but what it kept is held,
        // whatever its origin.
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
    store.advance_cursor(sid, was, &next)?;
    Ok(())
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
