//! What fsview does with each common event, for every agent.
//!
//! - [`Event::Shown`]: record the view the tool reports, held to the shown
//!   text ([`hold`](crate::hold)).
//! - [`Event::AboutToChange`]: the edit gate, as `fsview-check-edit` runs it.
//! - [`Event::Changed`]: record what the agent now believes the file holds,
//!   held against the disk: a `full` view when the agent wrote all of it or
//!   had seen exactly all of what it changed, else a `range` over the lines
//!   it changed (it knows those, not the lines it never read).
//! - [`Event::InstructionsFor`]: run `ctx-build --for PATH`, which records
//!   the nested instruction files and matching rules as views; the agent
//!   has them already, so nothing is sent.
//! - [`Event::SessionStart`]: reset on a clear, run `ctx-build` (which
//!   records the instruction files as views), and hand back as context only
//!   the instruction files the agent does not load itself.
//! - [`Event::Prompt`]: the files that changed since the agent saw them,
//!   each told once ([`fsview_store::remind`]).
//! - [`Event::Compacted`], and a session start after a compaction: the
//!   conversation holds none of what it was shown
//!   ([`fsview_store::held`]).
//! - [`Event::Patched`]: record what the agent's patch makes of a file
//!   ([`hold::patched`]); [`Event::Removed`]: forget a file the agent
//!   removed; [`Event::Each`]: the gate for every file of a change, then
//!   the records; [`Event::Edited`]: a targeted change reported as what it
//!   replaced, applied to the agent's last view of the file
//!   ([`edited`](crate::edited)), recorded as [`Event::Changed`] would be;
//!   nothing when it does not apply.
//! - [`Event::AgentStart`]: create the subagent's own views, empty or a
//!   copy of its launcher's; [`Event::Launching`]: note that an agent
//!   launches such a copying subagent; [`Event::AgentDone`]: tell the agent
//!   what changed while its subagent ran, as at a prompt.
//!
//! Every event answers for the agent that sent it ([`Who::agent`]): the
//! main thread's views are the conversation's session, each subagent's its
//! own session inside it (`fsview_store::agents`), so the gate, the
//! reminders and the recorded views of one agent never mix with another's.
//!
//! The core knows no agent's name: what differs between agents is in their
//! modules, behind [`Agent`](crate::Agent).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fsview_store::agents::{self, Start as AgentViews};
use fsview_store::changes::Limits;
use fsview_store::error::{plain_io, quote};
use fsview_store::events::Event as LogEvent;
use fsview_store::gate::{
    Verdict, Want, MSG_DISCARD, MSG_OWN_CHANGED, MSG_OWN_OUTPUT, MSG_SCRATCH,
};
use fsview_store::held;
use fsview_store::memo::ForgetPath;
use fsview_store::own::{self, Before, Own};
use fsview_store::paths::{self, Resolved};
use fsview_store::view::Released;
use fsview_store::{fingerprint, gate, location, Kind, Source, Store};
use serde_json::Value;

use crate::event::{
    AgentStart, Answer, Changed, Edited, Edits, Event, Extent, OwnWrite, Patched, ShellWrite,
    Short, Shown, ShownText, Stage, Start, Who,
};
use crate::hold::{self, Held};
use crate::{Agent, Problem};
use fsview_store::remind;

/// The name fsview-hook's events carry in the session's log.
pub const TOOL: &str = "fsview-hook";

/// How fsview answers, whatever the agent.
#[derive(Clone, Debug)]
pub struct Options {
    /// The session file (absolute), instead of the default for the agent's
    /// working directory.
    pub session: Option<PathBuf>,
    /// The fsview session to use instead of the agent's conversation id.
    pub sid: Option<String>,
    /// Approve the changes the gate lets through, instead of no opinion.
    pub allow: bool,
    /// Caps on the diffs of a reminder.
    pub limits: Limits,
    /// Other instruction file names `ctx-build` reads (`--also`).
    pub also: Vec<String>,
    /// Where `ctx-build` and `ctx-invalidate` are installed.
    pub bin_dir: PathBuf,
    /// The hook answers the agent's event before a change (the installer
    /// says so): a payload that cannot be read at all is the gate's, and
    /// fails as the gate does.
    pub gate: bool,
    /// Answer an unchanged re-read short ([`Answer::Short`]): `None` for
    /// the default, on only for an agent whose drops fsview learns
    /// ([`Agent::tells_drops`]), since a conversation that dropped the
    /// text must get it again.
    pub short_reads: Option<bool>,
    /// A refusal gives back a small file whole when the model needs it to
    /// retry ([`given_again`]).
    pub give_back: bool,
    /// A targeted edit of a file that changed since the view: merged with
    /// that change where they do not collide ([`merged`]), or refused.
    pub on_change: fsview_store::merge::OnChange,
}

impl Options {
    /// Whether `agent`'s unchanged re-reads are answered short.
    pub fn shortens(&self, agent: &dyn Agent) -> bool {
        agent.shortens_reads() && self.short_reads.unwrap_or_else(|| agent.tells_drops())
    }
}

/// The session an event belongs to: the views of the agent that sent it.
struct Session<'a> {
    file: PathBuf,
    /// The agent's views: the conversation's session for the main thread,
    /// `conversation/agent` for a subagent.
    sid: String,
    /// The conversation's session.
    conversation: String,
    who: &'a Who,
    /// Recording what the agent's transcript showed, read after the fact:
    /// a view the disk no longer holds is not recorded (see
    /// [`crate::transcript`]).
    replaying: bool,
}

impl Session<'_> {
    /// Open (creating if needed) the session file, with the agent's
    /// session in it when it is a subagent's: every write of a subagent
    /// goes into its own session, whose parent is the conversation.
    fn open(&self) -> Result<Store, Problem> {
        let store = Store::open(&self.file)?;
        self.ensure_agent(&store)?;
        Ok(store)
    }

    /// A subagent's views, created empty the first time they are needed
    /// (the agent's start was not seen, or came later).
    fn ensure_agent(&self, store: &Store) -> Result<(), Problem> {
        if let Some(agent) = &self.who.agent {
            if !store.has_session(&self.sid)? {
                store.start_agent(&self.conversation, agent, None, AgentViews::Empty, TOOL)?;
            }
        }
        Ok(())
    }

    fn open_existing(&self) -> Result<Option<Store>, Problem> {
        Ok(Store::open_existing(&self.file)?)
    }

    fn cwd(&self) -> &Path {
        &self.who.cwd
    }

    /// The conversation what this event records is shown to: the agent's
    /// session id, with its subagent's id, as the session is named
    /// without `--sid` (each view records it).
    fn shown_to(&self) -> String {
        match &self.who.agent {
            None => self.who.session.clone(),
            Some(a) => agents::sid_of(&self.who.session, a),
        }
    }

    /// The session is named otherwise than the conversation (`--sid`):
    /// other conversations may share it, so what one was shown is not
    /// what another holds.
    fn shared(&self) -> bool {
        self.sid != self.shown_to()
    }
}

/// Answer one event.
pub fn handle(
    agent: &dyn Agent,
    opts: &Options,
    who: &Who,
    event: &Event,
) -> Result<Answer, Problem> {
    if *event == Event::Ignored {
        return Ok(Answer::Nothing);
    }
    let session = session(opts, who)?;
    match event {
        Event::Shown(s) => shown(agent, opts, &session, s),
        Event::AboutToChange { path, whole } => {
            let want = if *whole { Want::Write } else { Want::Edit };
            about_to_change(agent, opts, &session, path, want, None)
        }
        Event::AboutToReplace { path, edits } => {
            let edits = Edits::Replace(edits.clone());
            about_to_change(agent, opts, &session, path, Want::Edit, Some(&edits))
        }
        Event::AboutToEditCells(path) => {
            about_to_change(agent, opts, &session, path, Want::Cells, None)
        }
        Event::ShellWrite(w) => shell_write(agent, opts, &session, w),
        Event::GitDiscard(d) => git_discard(agent, opts, &session, d),
        Event::ShellWrote(c) => shell_wrote(&session, c).map(|()| Answer::Nothing),
        Event::ShellWriting(w) => shell_writing(&session, w).map(|()| Answer::Nothing),
        Event::ShellWritten(w, command) => {
            shell_written(&session, w, command).map(|()| Answer::Nothing)
        }
        Event::GitDiscarded => git_discarded(&session).map(|()| Answer::Nothing),
        Event::Changed(c) => changed(&session, c).map(|()| Answer::Nothing),
        Event::InstructionsFor(path) => {
            instructions_for(opts, &session, path).map(|()| Answer::Nothing)
        }
        Event::SessionStart(start) => session_start(agent, opts, &session, *start),
        Event::Prompt | Event::AgentDone | Event::ToolDone => {
            prompt(agent, opts, &session, Stage::Prompt, 0)
        }
        Event::AfterTool(inner) => after_tool(agent, opts, who, &session, inner),
        Event::Delegating { kind } => {
            let store = session.open()?;
            store.delegate(&session.conversation, &session.sid, kind, TOOL)?;
            Ok(Answer::Nothing)
        }
        Event::Delegated => {
            if let Some(store) = session.open_existing()? {
                store.delegated(&session.sid, TOOL)?;
            }
            prompt(agent, opts, &session, Stage::Prompt, 0)
        }
        Event::Compacted => {
            compacted(&session.open()?, &session, &Default::default())?;
            Ok(Answer::Nothing)
        }
        Event::Pruned(calls) => {
            if let Some(store) = session.open_existing()? {
                release_calls(&store, &session.sid, &calls.iter().cloned().collect())?;
            }
            Ok(Answer::Nothing)
        }
        Event::CompactedKeeping(calls) => {
            let live = calls.iter().cloned().collect();
            compacted(&session.open()?, &session, &live)?;
            Ok(Answer::Nothing)
        }
        Event::Rewound => {
            if let Some(store) = session.open_existing()? {
                store.hold_only(
                    &session.sid,
                    &Default::default(),
                    held::Scope::All,
                    Released::Rewind,
                    TOOL,
                )?;
            }
            Ok(Answer::Nothing)
        }
        Event::AgentStart(start) => agent_start(&session, start).map(|()| Answer::Nothing),
        Event::Launching { kind } => {
            let store = session.open()?;
            // Its context ends with the message that launches it: the
            // results of that message's other calls are not in it. When
            // the transcript does not say which they are (not written
            // that far yet), none whose message is not written.
            use crate::transcript::{self, Siblings};
            let (unseen, known) = match transcript::siblings(agent, opts, who) {
                Siblings::Known(calls) => (calls, true),
                Siblings::Unwritten(all) => {
                    let mut origins: Vec<String> =
                        store.origins(&session.sid)?.into_iter().collect();
                    origins.sort();
                    (transcript::unwritten(&all, origins), false)
                }
                Siblings::NoTranscript => (Vec::new(), true),
            };
            store.launching(&session.sid, TOOL, kind, &unseen, known)?;
            Ok(Answer::Nothing)
        }
        Event::Patched(p) => patched(&session, p).map(|()| Answer::Nothing),
        Event::Removed(path) => removed(&session, path).map(|()| Answer::Nothing),
        Event::Each(events) => each(agent, opts, who, events),
        Event::Edited(e) => edited(&session, e).map(|()| Answer::Nothing),
        Event::Ignored => Ok(Answer::Nothing),
    }
}

/// Several events of one payload: the gate for each file first (every
/// refusal, each naming its file when there are several), and only when
/// all may change, the rest in order (records, a session's start and its
/// context).
fn each(agent: &dyn Agent, opts: &Options, who: &Who, events: &[Event]) -> Result<Answer, Problem> {
    let gates = events.iter().filter(|e| e.is_gate()).count();
    TOLD_BESIDE.set(0);
    let mut denied = Vec::new();
    let mut allowed = None;
    // What a gate that lets its change through tells with it (a merged
    // edit's other change).
    let mut told: Vec<String> = Vec::new();
    // Views the conversation no longer holds are released first, so that
    // no gate after them counts them.
    for e in events.iter().filter(|e| matches!(e, Event::Pruned(_))) {
        handle(agent, opts, who, e)?;
    }
    for e in events {
        let Some(path) = gated(e) else {
            continue;
        };
        match handle(agent, opts, who, e)? {
            Answer::Deny(m) if gates > 1 => denied.push(format!("{}: {m}", path.display())),
            Answer::Deny(m) => denied.push(m),
            Answer::Allow(m) => allowed = allowed.or(Some(m)),
            Answer::Context(c) => {
                // The next gate's tell goes in the same context.
                TOLD_BESIDE.set(TOLD_BESIDE.get() + agent.context_len(&c) + 2);
                told.push(c);
            }
            _ => {}
        }
    }
    TOLD_BESIDE.set(0);
    if !denied.is_empty() {
        let mut reason = denied.join(" ");
        if !told.is_empty() {
            reason.truncate(reason.trim_end().len());
            // A gate that let its change through told what else changed in
            // its file, and moved the view there: the refusal must carry
            // that, since none of the command runs.
            reason.push_str(
                "\n\nNone of it ran. What else changed meanwhile in the other files it edits, which you hold now:",
            );
            for t in &told {
                reason.push_str("\n\n");
                reason.push_str(other_change(t));
            }
        }
        return Ok(Answer::Deny(reason));
    }
    let mut failed = None;
    let mut context = (!told.is_empty()).then(|| told.join("\n\n"));
    for e in events
        .iter()
        .filter(|e| !e.is_gate() && !matches!(e, Event::Pruned(_)))
    {
        match handle(agent, opts, who, e) {
            Ok(Answer::Context(c)) => context = context.or(Some(c)),
            Ok(_) => {}
            Err(p) => {
                failed.get_or_insert(p);
            }
        }
    }
    match (failed, gates, allowed, context) {
        // A record that failed changes no verdict, and hides no context.
        (Some(p), 0, _, None) => Err(p),
        (_, _, Some(m), _) => Ok(Answer::Allow(m)),
        (_, _, _, Some(c)) => Ok(Answer::Context(c)),
        _ => Ok(Answer::Nothing),
    }
}

/// What a merged edit's tell ([`merged`], [`merged_lines`]) says of the
/// other change alone, without the words on the edit being applied: for
/// a refusal of the command the edit was part of.
fn other_change(told: &str) -> &str {
    match told.split_once("\n\n") {
        Some((_, change)) => change,
        None => told
            .strip_suffix(" Your edit is applied to the file as it is now, keeping that change.")
            .unwrap_or(told),
    }
}

/// The file an event asks the gate about, if it does.
fn gated(e: &Event) -> Option<&Path> {
    match e {
        Event::AboutToChange { path, .. }
        | Event::AboutToReplace { path, .. }
        | Event::AboutToEditCells(path) => Some(path),
        Event::ShellWrite(w) => Some(&w.path),
        Event::GitDiscard(d) => Some(Path::new(&d.words)),
        _ => None,
    }
}

fn session<'a>(opts: &Options, who: &'a Who) -> Result<Session<'a>, Problem> {
    let conversation = match &opts.sid {
        Some(s) => s.clone(),
        None => who.session.clone(),
    };
    if !usable_id(&conversation) {
        return Err(Problem::new(format!(
            "session id {conversation:?} cannot name an fsview session (use 1 to 200 printable characters); pass --sid ID"
        )));
    }
    let sid = match &who.agent {
        None => conversation.clone(),
        Some(a) if usable_id(a) => agents::sid_of(&conversation, a),
        Some(a) => {
            return Err(Problem::new(format!(
                "agent id {a:?} cannot name an agent's views (use 1 to 200 printable characters)"
            )))
        }
    };
    let file = location::session_path(opts.session.as_deref(), &who.cwd)?;
    if let Some(given) = &opts.session {
        location::check_explicit_dir(&file, given)?;
    }
    Ok(Session {
        file,
        sid,
        conversation,
        who,
        replaying: false,
    })
}

/// Who acted, for an agent whose subagents' calls come in its name
/// ([`Agent::delegates`]): the subagent the conversation handed its turn
/// to, if one is running; else `who` as it is. The handing over and back
/// themselves are the parent's.
pub(crate) fn acting(agent: &dyn Agent, opts: &Options, who: &Who, event: &Event) -> Who {
    // The subagent's start and end, also as the tool call they close.
    let inner = match event {
        Event::AfterTool(e) => e.as_ref(),
        e => e,
    };
    if !agent.delegates()
        || who.agent.is_some()
        || matches!(inner, Event::Delegating { .. } | Event::Delegated)
    {
        return who.clone();
    }
    let delegate = session(opts, who)
        .ok()
        .and_then(|s| {
            Store::open_existing(&s.file)
                .ok()
                .flatten()
                .map(|st| (st, s.sid))
        })
        .and_then(|(store, sid)| store.delegate_of(&sid).ok().flatten());
    let mut w = who.clone();
    w.agent = delegate;
    w
}

/// The session file and the session holding the views of `who`.
pub(crate) fn views_of(opts: &Options, who: &Who) -> Result<(PathBuf, String), Problem> {
    let s = session(opts, who)?;
    Ok((s.file, s.sid))
}

/// Record a view the agent's transcript shows (a [`Event::Shown`] or
/// [`Event::Changed`], its origin in [`Who::call`]) as its hook would
/// have, but only where the disk still holds exactly what was shown: the
/// line may be older than what the session knows since.
/// Release the views session `sid` was shown by calls `calls`, whose
/// results the agent took out of the conversation (as a compaction does).
pub(crate) fn release_calls(
    store: &Store,
    sid: &str,
    calls: &std::collections::HashSet<String>,
) -> Result<(), Problem> {
    if !calls.is_empty() {
        store.hold_only(
            sid,
            &Default::default(),
            held::Scope::Origins(calls),
            Released::Compaction,
            TOOL,
        )?;
    }
    Ok(())
}

pub(crate) fn replay(
    agent: &dyn Agent,
    opts: &Options,
    who: &Who,
    event: &Event,
) -> Result<(), Problem> {
    let mut s = session(opts, who)?;
    s.replaying = true;
    match event {
        Event::Shown(x) => shown(agent, opts, &s, x).map(|_| ()),
        Event::Changed(c) => changed(&s, c),
        _ => Ok(()),
    }
}

/// 1 to 200 printable characters: what a session or agent id may be.
fn usable_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 200 && !id.chars().any(char::is_control)
}

/// A subagent starts: its own views, empty or a copy of its launcher's.
fn agent_start(s: &Session<'_>, start: &AgentStart) -> Result<(), Problem> {
    let Some(agent) = &s.who.agent else {
        return Err(Problem::new(
            "a subagent's start without an agent id: nothing to start",
        ));
    };
    let views = if start.inherits {
        AgentViews::CopyOfLauncher
    } else {
        AgentViews::Empty
    };
    let store = Store::open(&s.file)?;
    store.start_agent(&s.conversation, agent, start.kind.as_deref(), views, TOOL)?;
    Ok(())
}

/// Resolve `path` to an existing regular file's canonical path.
fn existing(cwd: &Path, path: &Path) -> Result<PathBuf, Problem> {
    match paths::resolve(cwd, path)? {
        Resolved::Existing { canonical, .. } => Ok(canonical),
        Resolved::Missing { .. } => Err(Problem::new(format!(
            "{}: no such file any more, so nothing was recorded",
            quote(path)
        ))),
    }
}

fn record(
    s: &Session<'_>,
    store: &Store,
    held: &Held,
    source: Source,
    action: &str,
) -> Result<(), Problem> {
    // A line read back from the transcript may be older than what the
    // session learned since: where the disk no longer holds what it
    // showed, it is recorded only for a file the session has no record of
    // (an @-mention whose file changed before the first hook: the model
    // was shown that text, and the gate is to say "modified" with the
    // diff, not "not read"), never over a newer view.
    if s.replaying && held.moved && store.file_by_path(&s.sid, &held.canonical)?.is_some() {
        return Ok(());
    }
    let verdict = match (held.moved, source) {
        (false, _) => None,
        (true, Source::Read) => Some("changed"),
        (true, _) => Some("rewritten"),
    };
    let shown_to = s.shown_to();
    let view = held
        .view(source)
        .with_origin(s.who.call.as_deref())
        .with_conversation(Some(&shown_to));
    store.record_logged(&s.sid, &view, |_| {
        let e = LogEvent::new(TOOL, action)
            .path(&held.canonical)
            .detail(Some(held.kind.as_str()));
        match verdict {
            Some(v) => e.verdict(v),
            None => e,
        }
    })?;
    Ok(())
}

fn shown(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    shown: &Shown,
) -> Result<Answer, Problem> {
    // A command's output for a file that is not there showed no file.
    if matches!(shown.text, ShownText::Printed(_))
        && matches!(
            paths::resolve(s.cwd(), &shown.path)?,
            Resolved::Missing { .. }
        )
    {
        return Ok(Answer::Nothing);
    }
    // fsview's own short answer, read back from a transcript (a kept part
    // after a compaction): the text it points to is not in it.
    if let ShownText::Lines(t) | ShownText::Trimmed(t) | ShownText::Processed(t) = &shown.text {
        if is_short_notice(t) {
            return Ok(Answer::Nothing);
        }
    }
    let canonical = existing(s.cwd(), &shown.path)?;
    let Some(held) = hold::shown(&canonical, shown)? else {
        return Ok(Answer::Nothing);
    };
    let store = s.open()?;
    // A view replayed from the transcript is recorded, never answered.
    if opts.shortens(agent) && !s.replaying && shown.extent == Extent::Whole {
        if let Some(short) = short(s, &store, &held, &shown.path, agent.reread_with())? {
            return Ok(Answer::Short(short, None));
        }
    }
    record(s, &store, &held, Source::Read, "read")?;
    Ok(Answer::Nothing)
}

/// The short answer to a whole read of what the agent holds already: the
/// same `full` text, still on disk, of a view this agent was shown itself
/// and its conversation still holds (in a session other conversations
/// share, a view recorded for this one: [`Session::shared`]). The view is
/// not recorded again: the model was shown the notice, not the text, so
/// what holds the text is still the earlier view (and where it came
/// from).
fn short(
    s: &Session<'_>,
    store: &Store,
    held: &Held,
    named: &Path,
    reread_with: &str,
) -> Result<Option<Short>, Problem> {
    // In a session other conversations share, only a view this one was
    // shown: another's read of the file is not in this conversation.
    let shown_to = s.shown_to();
    let asking = s.shared().then_some(shown_to.as_str());
    let view = held.view(Source::Read).with_conversation(asking);
    if held.kind != Kind::Full || held.moved || !store.seen(&s.sid, &view)? {
        return Ok(None);
    }
    let Some(file) = store.file_by_path(&s.sid, &held.canonical)? else {
        return Ok(None);
    };
    // A file a reminder told of is refused until it is read: this read
    // must be the real one that lets its edits through again.
    if store.is_told(file.id)? {
        return Ok(None);
    }
    // Which view holds it, to say where the model finds the text.
    let source = store
        .views(file.id)?
        .into_iter()
        .find(|v| {
            v.kind == Kind::Full
                && v.held()
                && asking.is_none_or(|c| v.conversation.as_deref() == Some(c))
        })
        .map(|v| v.source);
    // At most 25 words: the notice stays in every later request.
    let place = match source {
        Some(Source::Write) => "your own last change to it",
        Some(Source::Inject | Source::Import) => "the instructions given at the start",
        _ => "you were last shown it",
    };
    store.log(
        &s.sid,
        &[LogEvent::new(TOOL, "read")
            .path(&held.canonical)
            .verdict("short")
            .detail(Some(held.kind.as_str()))],
    )?;
    // The path as the model knows it, shorter under its working directory
    // (`src/a.rs`, not the absolute path its tool was given).
    let said = paths::display(s.cwd(), named);
    Ok(Some(Short {
        path: named.to_path_buf(),
        lines: held.lines,
        notice: short_notice(&said.display().to_string(), held.lines, place, reread_with),
    }))
}

/// The short answer's words: at most 25, the path, where the text is.
fn short_notice(said: &str, lines: u64, place: &str, reread_with: &str) -> String {
    format!(
        "[fsview] {said} is unchanged ({}) since {place}: use that text; to reread, pass {reread_with}.",
        remind::plural(lines, "line")
    )
}

/// Whether `text` is a notice [`short_notice`] wrote (one line, a newline or
/// none after it): what a conversation shows for a re-read fsview
/// answered short, which holds none of the file's text. A file whose text
/// is such a line is not recorded as read from it: a view left out costs
/// a read, never a change let through.
fn is_short_notice(text: &str) -> bool {
    let line = text.strip_suffix('\n').unwrap_or(text);
    !line.contains('\n')
        && line.starts_with("[fsview] ")
        && line.contains(" is unchanged (")
        && line.contains(" line")
        && line.contains(") since ")
        && line.contains(": use that text; to reread, pass ")
}

/// A tool call finished: its own event, then what changed meanwhile, told
/// now rather than at the next prompt, so the model knows of a change
/// before it acts on the file.
fn after_tool(
    agent: &dyn Agent,
    opts: &Options,
    who: &Who,
    s: &Session<'_>,
    inner: &Event,
) -> Result<Answer, Problem> {
    let answer = handle(agent, opts, who, inner)?;
    // The reminder goes in the same context as what the call's own event
    // answered, joined by a blank line.
    let used = match &answer {
        Answer::Context(c) | Answer::Short(_, Some(c)) => agent.context_len(c) + 2,
        _ => 0,
    };
    let told = match &answer {
        Answer::Nothing | Answer::Context(_) | Answer::Short(..) => {
            match prompt(agent, opts, s, Stage::Shown, used)? {
                Answer::Context(t) => Some(t),
                _ => None,
            }
        }
        _ => None,
    };
    let Some(told) = told else {
        return Ok(answer);
    };
    Ok(match answer {
        Answer::Context(c) => Answer::Context(format!("{c}\n\n{told}")),
        Answer::Short(short, None) => Answer::Short(short, Some(told)),
        Answer::Short(short, Some(c)) => Answer::Short(short, Some(format!("{c}\n\n{told}"))),
        _ => Answer::Context(told),
    })
}

fn changed(s: &Session<'_>, c: &Changed) -> Result<(), Problem> {
    let canonical = existing(s.cwd(), &c.path)?;
    let store = s.open()?;
    let knew_all = match &c.before {
        Some(before) => knew_all(&store, &s.sid, &canonical, before)?,
        None => false,
    };
    if let (Some(before), false, false) = (&c.before, knew_all, c.whole) {
        // The agent holds the whole file, but the text its tool changed is
        // not that: its edit was made on top of a change it has not been
        // told (merged with it, or racing it). Its view stays as it was,
        // so what changed since, its own edit with it, is told next,
        // rather than taken as seen.
        if let Some(kept) = full_text(&store, &s.sid, &canonical)? {
            if hold::decoded(&kept, true).as_ref() != before.as_bytes() {
                return Ok(());
            }
        } else if lines_moved_under(&store, &s.sid, &canonical, before)? {
            // The same for lines it read: none of them is where it read
            // them in the text its tool changed.
            return Ok(());
        }
    }
    let held = hold::changed(&canonical, c, knew_all)?;
    record(s, &store, &held, Source::Write, "written")
}

/// Whether the agent holds lines of the file it read (a `range` or
/// `start` view whose text was kept), and none of them is what `before`,
/// the text its tool changed, holds at their place: its edit was merged
/// with a change it has not been told yet.
fn lines_moved_under(
    store: &Store,
    sid: &str,
    canonical: &Path,
    before: &str,
) -> Result<bool, Problem> {
    let Some(record) = store.file_by_path(sid, canonical)? else {
        return Ok(false);
    };
    let before = hold::decoded(before.as_bytes(), true).into_owned();
    let mut held = 0;
    for v in store.views(record.id)? {
        if !matches!(v.kind, Kind::Range | Kind::Start) || !v.held() {
            continue;
        }
        let Some(kept) = v.text_hash.map(|h| store.text(&h)).transpose()?.flatten() else {
            continue;
        };
        held += 1;
        let there = fsview_store::show::slice_lines(&before, v.offset, v.lines);
        if hold::decoded(&kept, v.offset == 1).as_ref() == there {
            return Ok(false);
        }
    }
    Ok(held > 0)
}

/// Whether the agent had a `full` view of exactly `before`: then after a
/// targeted change it still knows the whole file.
fn knew_all(store: &Store, sid: &str, canonical: &Path, before: &str) -> Result<bool, Problem> {
    if before.is_empty() {
        return Ok(true);
    }
    let Some(record) = store.file_by_path(sid, canonical)? else {
        return Ok(false);
    };
    if !store
        .views(record.id)?
        .iter()
        .any(|v| v.kind == Kind::Full && v.held())
    {
        return Ok(false);
    }
    if record.fingerprint.hash == Some(fingerprint::hash_bytes(before.as_bytes())) {
        return Ok(true);
    }
    // The file's bytes may differ from the tool's text by how it decodes
    // them (CRLF, a byte-order mark): compare the kept text.
    let Some(kept) = full_text(store, sid, canonical)? else {
        return Ok(false);
    };
    Ok(hold::decoded(&kept, true).as_ref() == before.as_bytes())
}

/// The kept text of the agent's `full` view of a file, if it has one and
/// still holds it.
fn full_text(store: &Store, sid: &str, canonical: &Path) -> Result<Option<Vec<u8>>, Problem> {
    let Some(record) = store.file_by_path(sid, canonical)? else {
        return Ok(None);
    };
    let views = store.views(record.id)?;
    let Some(hash) = views
        .iter()
        .find(|v| v.kind == Kind::Full && v.held())
        .and_then(|v| v.text_hash)
    else {
        return Ok(None);
    };
    Ok(store.text(&hash)?)
}

/// A patch: its views, as [`hold::patched`] finds them; a move forgets
/// the file it came from.
fn patched(s: &Session<'_>, p: &Patched) -> Result<(), Problem> {
    let canonical = match paths::resolve(s.cwd(), &p.path)? {
        Resolved::Existing { canonical, .. } => canonical,
        // A file a patch is about to create: held to its text, so that the
        // next patch of it needs no read.
        Resolved::Missing { canonical } => {
            let (Some(text), false) = (&p.text, p.applied) else {
                return Ok(()); // nothing there: nothing to hold
            };
            let store = s.open()?;
            let held = hold::to_be_created(&canonical, text);
            return record(s, &store, &held, Source::Write, "written");
        }
    };
    let source = match &p.from {
        Some(from) => paths::resolve(s.cwd(), from)?.canonical().to_path_buf(),
        None => canonical.clone(),
    };
    let store = s.open()?;
    let known = full_text(&store, &s.sid, &source)?;
    let hash = store
        .file_by_path(&s.sid, &source)?
        .and_then(|r| r.fingerprint.hash);
    let before = hold::Before {
        known: known.as_deref(),
        hash,
    };
    for held in hold::patched(&canonical, before, p)? {
        record(s, &store, &held, Source::Write, "written")?;
    }
    if p.applied && source != canonical {
        forget(s, &store, &source)?;
    }
    Ok(())
}

/// The agent removed a file: it saw it go, so its views are forgotten
/// (no reminder of its own change).
fn removed(s: &Session<'_>, path: &Path) -> Result<(), Problem> {
    let Resolved::Missing { canonical } = paths::resolve(s.cwd(), path)? else {
        return Ok(()); // still there: nothing was removed
    };
    match s.open_existing()? {
        Some(store) => forget(s, &store, &canonical),
        None => Ok(()),
    }
}

fn forget(s: &Session<'_>, store: &Store, canonical: &Path) -> Result<(), Problem> {
    let which = [ForgetPath {
        path: canonical,
        stat: None,
    }];
    store.forget(&s.sid, Some(&which), Some("the agent removed it"))?;
    Ok(())
}

fn about_to_change(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    path: &Path,
    want: Want,
    edits: Option<&Edits>,
) -> Result<Answer, Problem> {
    let mut store = s.open_existing()?;
    let mut d = gate::decide_for(store.as_ref(), &s.sid, s.cwd(), path, want)?;
    // An agent that may write what releases a view after the gate runs
    // (Qwen Code's queue) is waited for whatever the verdict: in the main
    // thread, whose calls its transcript holds.
    let late = s.who.agent.is_none() && agent.transcript().is_some_and(|f| f.releases_late());
    if (!d.verdict.allowed() || late)
        && !s.replaying
        && (crate::transcript::waited_for_call(agent, opts, s.who) || late)
    {
        // The agent had not written its transcript up to this call when
        // the hook caught up with it (Claude Code writes it a little
        // later): what the call's message came after (a file attached to
        // the prompt, a result taken out) is there now. Decide again on
        // all of it.
        let _ = crate::transcript::catch_up(agent, opts, s.who);
        store = s.open_existing()?;
        d = gate::decide_for(store.as_ref(), &s.sid, s.cwd(), path, want)?;
    }
    if let Some(store) = &store {
        // As fsview-check-edit logs its checks: a log that cannot be
        // written changes no verdict (nor does a subagent's session that
        // cannot be created for it).
        let detail = match want {
            Want::Write => "write",
            Want::Edit => "edit",
            Want::Cells => "cells",
        };
        if s.ensure_agent(store).is_ok() {
            let _ = store.log(
                &s.sid,
                &[LogEvent::new(TOOL, "check")
                    .path(&d.canonical)
                    .verdict(d.verdict.as_str())
                    .detail(Some(detail))],
            );
        }
    }
    // Where a refusal may give the file back whole (--give-back).
    let give_back = store.as_ref().filter(|_| opts.give_back);
    if matches!(d.verdict, Verdict::Modified(_)) {
        let change = d.verdict.change().unwrap_or(fingerprint::Change::Content);
        if let (Some(edits), Some(store)) = (edits, &store) {
            match merged(agent, opts, s, store, &d, edits)? {
                Some(Merge::Told(told)) => return Ok(Answer::Context(told)),
                Some(Merge::TellAfter) => {
                    return Ok(allowed(opts, "The edit is merged with the file's change since it was read; the change is told with its result."))
                }
                None => {}
            }
        }
        if let Some(told) = carried(agent, opts, s, store.as_ref(), &d.canonical)? {
            return Ok(Answer::Deny(format!(
                "{}\n\n{told}",
                // The agent's own edit tool asks for its read again
                // (not its shell, nor a whole-file write, as seen).
                modified_told(
                    change,
                    d.writer.as_deref(),
                    edits.is_some() && agent.rereads_after_change()
                )
            )));
        }
        // A change too long to tell whole (a rewrite), or told before:
        // the file itself, when small, so that it costs a retry, not a
        // read and a retry. Not for a file the agent was shown processed
        // (a notebook's cells): its text is not what its tool shows.
        let text_view = d.view.as_ref().is_some_and(|v| v.kind != Kind::Processed);
        if let Some(store) = give_back.filter(|_| text_view && want != Want::Cells) {
            let why = Given::Modified(change, d.writer.clone());
            if let Some(given) = given_again(agent, s, store, &d.canonical, why)? {
                return Ok(Answer::Deny(given));
            }
        }
    }
    if let (Verdict::NotRead, Some(why), Some(store)) = (&d.verdict, d.released, give_back) {
        if let Some(given) = given_again(agent, s, store, &d.canonical, Given::Released(why))? {
            return Ok(Answer::Deny(given));
        }
    }
    Ok(match (d.verdict.allowed(), opts.allow) {
        (true, true) => Answer::Allow(d.message.into_owned()),
        (true, false) => Answer::Nothing,
        (false, _) => Answer::Deny(d.message.into_owned()),
    })
}

/// How a merged edit's other change reaches the model ([`merged`]).
enum Merge {
    /// Told now, with the edit let through (the text to hand the model).
    Told(String),
    /// Let through; the agent's record of the edit holds the view with the
    /// edit, never fresh, and the reminder after the tool's result tells
    /// the other change ([`Agent::tells_after_change`]).
    TellAfter,
}

/// An edit merged with the change its file had since the agent's view
/// ([`fsview_store::merge`]): the change told whole with the edit's result,
/// now (the view moved to the file's text, so that the edit's own record
/// after it knows the whole file: [`Agent::tells_before_change`]) or after
/// it ([`Agent::tells_after_change`]). `None` when it cannot be: merging
/// is off (`--on-change refuse`), the agent can be told neither way, the
/// agent's view is not all of the file, the edit comes within 3 lines of
/// the change or lands elsewhere, or the change cannot be told whole.
fn merged(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    store: &Store,
    d: &gate::Decision,
    edits: &Edits,
) -> Result<Option<Merge>, Problem> {
    use fsview_store::merge::{self, OnChange, Seen};
    let mergeable = matches!(
        d.verdict,
        Verdict::Modified(fingerprint::Change::Content | fingerprint::Change::Replaced)
    );
    let told = agent.tells_before_change() || agent.tells_after_change();
    if opts.on_change != OnChange::Merge || !told || agent.rereads_after_change() || !mergeable {
        return Ok(None);
    }
    let Some(base) = full_text(store, &s.sid, &d.canonical)? else {
        // Some of its lines.
        return merged_lines(agent, opts, s, store, d, edits);
    };
    let (Ok(base), Ok(theirs)) = (
        String::from_utf8(base),
        std::fs::read_to_string(&d.canonical),
    ) else {
        return Ok(None);
    };
    let (base, theirs) = (as_shown(agent, base), as_shown(agent, theirs));
    if merge::merge_edit(Seen::Whole(&base), &theirs, |t| edits.apply(t)).is_err() {
        return Ok(None);
    }
    let log = |how: &str| log_merged(store, s, d, how);
    // The other change, as it would be told: merged only when the model
    // can be told all of it, unaltered, where it will be (with the call,
    // or after its result).
    let stage = match agent.tells_before_change() {
        true => Stage::AboutToChange,
        false => Stage::Shown,
    };
    let found = remind::select_file(store, &s.sid, s.cwd(), limits(agent, opts), &d.canonical)?;
    let whole = found.len() == 1
        && found[0].whole
        && found[0]
            .diff
            .as_deref()
            .is_some_and(|d| agent.alters(stage, d).is_none());
    if !whole {
        return Ok(None);
    }
    if !agent.tells_before_change() {
        log("told after the result");
        return Ok(Some(Merge::TellAfter));
    }
    let by = match &d.writer {
        Some(w) => format!("by {w}"),
        None => "by the user or another program".to_string(),
    };
    let told = format!(
        "[fsview] {} changed since you read it ({by}). Your edit is 3 or more lines from that change, so it is applied to the file as it is now, keeping that change. You now hold the file with both: the other change is below.\n\n{}",
        paths::display(s.cwd(), &d.canonical).display(),
        remind::render(s.cwd(), &found)
    );
    if !fits(agent, TOLD_BESIDE.get(), &told) {
        // Refused instead, the change carried whole by the refusal.
        return Ok(None);
    }
    remind::record(store, &s.sid, TOOL, &found, s.who.call.as_deref())?;
    log("told with the call");
    Ok(Some(Merge::Told(told)))
}

/// A file's text as the agent's read shows it and its edit tool matches
/// against: `\r\n` as `\n` for an agent that reads it so
/// ([`Agent::shows_crlf_as_lf`]).
fn as_shown(agent: &dyn Agent, text: String) -> String {
    match agent.shows_crlf_as_lf() && text.contains("\r\n") {
        true => text.replace("\r\n", "\n"),
        false => text,
    }
}

/// [`merged`] for an agent that saw only some lines of the file (a range,
/// or the start of a long one), each run it holds tried, the latest
/// first: the edit stands 3 or more lines inside them and from every line
/// the change touched ([`fsview_store::merge::merge_edit`]), and what
/// became of those lines is told with the call, or after it: the record
/// of the edit then keeps the lines as the model believes them (see
/// [`changed`], [`edited`]), so that the reminder after the result tells
/// what else changed in them, where they are now.
fn merged_lines(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    store: &Store,
    d: &gate::Decision,
    edits: &Edits,
) -> Result<Option<Merge>, Problem> {
    use fsview_store::merge::{self, Seen};
    let Some(file) = store.file_by_path(&s.sid, &d.canonical)? else {
        return Ok(None);
    };
    let Ok(theirs) = std::fs::read_to_string(&d.canonical) else {
        return Ok(None);
    };
    let theirs = as_shown(agent, theirs);
    let mut views = store.views(file.id)?;
    views.retain(|v| matches!(v.kind, Kind::Range | Kind::Start) && v.held());
    views.sort_by_key(|v| std::cmp::Reverse(v.viewed_ns));
    let shown = paths::display(s.cwd(), &d.canonical);
    for v in views {
        let Some(kept) = v.text_hash.map(|h| store.text(&h)).transpose()?.flatten() else {
            continue;
        };
        let Ok(text) = String::from_utf8(kept) else {
            continue;
        };
        let text = as_shown(agent, text);
        let seen = Seen::Lines {
            text: &text,
            first: v.offset as usize,
            total: v.total_lines.map(|t| t as usize),
        };
        let Ok(m) = merge::merge_edit(seen, &theirs, |t| edits.apply(t)) else {
            continue;
        };
        if !agent.tells_before_change() {
            // Told by the reminder after the result: only when it will
            // tell all of it, unaltered.
            let found =
                remind::select_file(store, &s.sid, s.cwd(), limits(agent, opts), &d.canonical)?;
            // A diff of the lines read, or a line saying the change is
            // outside them.
            let told = found.first().and_then(|r| {
                r.diff.as_deref().or(r
                    .note
                    .as_deref()
                    .filter(|n| n.starts_with("changed outside the lines viewed")))
            });
            let whole = found.len() == 1
                && found[0].truncated == 0
                && !found[0].rewrite
                && told.is_some_and(|t| agent.alters(Stage::Shown, t).is_none());
            if !whole {
                return Ok(None);
            }
            log_merged(
                store,
                s,
                d,
                &format!(
                    "told after the result, {}",
                    lines_span(v.offset, v.offset + v.lines.max(1) - 1)
                ),
            );
            return Ok(Some(Merge::TellAfter));
        }
        let (first, count) = m.now.expect("lines seen are found in the file now");
        let read = lines_span(v.offset, v.offset + v.lines.max(1) - 1);
        let now = lines_span(first as u64, (first + count.max(1) - 1) as u64);
        let by = match &d.writer {
            Some(w) => format!("by {w}"),
            None => "by the user or another program".to_string(),
        };
        let diff = merge::told(&m, &theirs, &shown.display().to_string());
        let told = match diff.is_empty() {
            true => format!(
                "[fsview] {} changed since you read {read} ({by}), outside those lines: nothing in them changed, and they are {now} now. Your edit is applied to the file as it is now, keeping that change.",
                shown.display()
            ),
            false => format!(
                "[fsview] {} changed since you read {read} ({by}). Your edit is 3 or more lines from that change and inside the lines you read, so it is applied to the file as it is now, keeping that change. Those lines are {now} now; what changed in them is below.\n\n{diff}",
                shown.display()
            ),
        };
        if agent.alters(Stage::AboutToChange, &told).is_some()
            || !fits(agent, TOLD_BESIDE.get(), &told)
        {
            return Ok(None);
        }
        // Told what became of the lines read, the model holds them as they
        // are now: the view moves there (as a change told whole moves a
        // full view), so that the edit's own record is of the lines it
        // changed in them.
        let lines = fsview_store::show::slice_lines(theirs.as_bytes(), first as u64, count as u64);
        let now_shown = Shown {
            path: d.canonical.clone(),
            text: ShownText::Lines(String::from_utf8_lossy(lines).into_owned()),
            offset: first as u64,
            extent: Extent::Range,
        };
        if let Some(held) = hold::shown(&d.canonical, &now_shown)? {
            record(s, store, &held, Source::Read, "told")?;
        }
        log_merged(store, s, d, &format!("told with the call, {read}"));
        return Ok(Some(Merge::Told(told)));
    }
    Ok(None)
}

/// Log a merged edit's check: how its change is told, and by whom it was
/// made when fsview knows.
fn log_merged(store: &Store, s: &Session<'_>, d: &gate::Decision, how: &str) {
    let detail = match &d.writer {
        Some(w) => format!("{how}; changed by {w}"),
        None => how.to_string(),
    };
    let _ = store.log(
        &s.sid,
        &[LogEvent::new(TOOL, "check")
            .path(&d.canonical)
            .verdict("merged")
            .detail(Some(&detail))],
    );
}

/// "lines A-B", or "line A".
fn lines_span(first: u64, last: u64) -> String {
    match first == last {
        true => format!("line {first}"),
        false => format!("lines {first}-{last}"),
    }
}

/// A `modified` refusal that carries the whole change, so the model holds
/// the new text from it and may retry at once ([`gate::RETRY_TOLD`]),
/// naming who changed the file when fsview knows.
/// For an agent that insists on its own re-read
/// ([`Agent::rereads_after_change`]), the change is still told, and the
/// re-read asked for.
fn modified_told(change: fingerprint::Change, writer: Option<&str>, reread: bool) -> String {
    let then = match reread {
        true => "The whole change is below; your edit tool still needs the file read again before it edits it.",
        false => gate::RETRY_TOLD,
    };
    format!("{}. {then}", gate::modified_since(change, writer))
}

/// The whole change to a file the gate refuses as `modified`, told (and
/// the view moved to the new text: [`remind::record`]), when it can be:
/// the agent held the whole earlier text and the diff is complete and
/// reaches the model unaltered in the refusal. `None` otherwise: the
/// refusal stays Claude Code's "Read it again".
fn carried(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    store: Option<&Store>,
    canonical: &Path,
) -> Result<Option<String>, Problem> {
    let Some(store) = store else {
        return Ok(None);
    };
    let found = remind::select_file(store, &s.sid, s.cwd(), limits(agent, opts), canonical)?;
    let whole = found.len() == 1
        && found[0].whole
        && found[0]
            .diff
            .as_deref()
            .is_some_and(|d| agent.alters(Stage::AboutToChange, d).is_none());
    if !whole {
        return Ok(None);
    }
    let told = remind::render(s.cwd(), &found);
    // Room for the refusal's own words before it.
    if agent.refuses_in_context() && !fits(agent, 500, &told) {
        return Ok(None);
    }
    remind::record(store, &s.sid, TOOL, &found, s.who.call.as_deref())?;
    Ok(Some(told))
}

/// The most of a file a `not_read` refusal gives back whole
/// ([`given_again`]): under the 27 KB refusal Claude Code 2.1.332 was seen
/// to hand the model whole, and what its Read shows unasked.
const GIVE_BYTES: u64 = remind::REWRITE_BYTES as u64;
const GIVE_LINES: u64 = 2000;

/// Why a refusal gives a file back ([`given_again`]).
#[derive(Clone)]
enum Given {
    /// `not_read`: the conversation was shown it and then dropped it (a
    /// compaction, a rewind).
    Released(Released),
    /// `modified`, by a change that could not be told whole in the
    /// refusal (a rewrite longer than the diff caps, a change told before
    /// and not read since, a diff the agent would alter); by whom, when
    /// fsview knows.
    Modified(fingerprint::Change, Option<String>),
}

/// A refusal that gives the file back: its whole text, numbered, in the
/// refusal, recorded as a `full` view of it (the refusal is the re-read the
/// model would make next, without the turn), for a `not_read` of a file the
/// conversation dropped or a `modified` whose change cannot be told whole.
/// Only for a small UTF-8 text file ([`hold::whole_text`]) and an agent
/// that passes the refusal on unaltered. `None` otherwise: the refusal
/// stays "Read it first" or "Read it again".
fn given_again(
    agent: &dyn Agent,
    s: &Session<'_>,
    store: &Store,
    canonical: &Path,
    why: Given,
) -> Result<Option<String>, Problem> {
    let Some(held) = hold::whole_text(canonical, GIVE_BYTES, GIVE_LINES) else {
        return Ok(None);
    };
    // As the agent's read shows it (whole_text holds plain UTF-8 only).
    let (text, how) = match agent.numbers_reads() {
        true => (
            fsview_store::show::number_lines(&held.shown, held.offset),
            "numbered as a read shows them",
        ),
        false => (
            String::from_utf8_lossy(&held.shown).into_owned(),
            "as a read shows them",
        ),
    };
    let opening = match why {
        Given::Released(r) => format!(
            "File has not been read yet: what you were shown of it is no longer in the conversation ({}). Its whole text is below",
            r.as_str()
        ),
        Given::Modified(change, writer) => format!(
            "{}. Its whole new text is below",
            gate::modified_since(change, writer.as_deref())
        ),
    };
    let count = remind::plural(held.lines, "line");
    let message = format!(
        "{opening} ({count}, {how}): you have now read it, so retry your change against it (no need to read it again).\n\n{text}",
    );
    if agent.alters(Stage::AboutToChange, &message).is_some()
        || (agent.refuses_in_context() && !fits(agent, 0, &message))
    {
        return Ok(None);
    }
    let shown_to = s.shown_to();
    let view = held
        .view(Source::Read)
        .with_origin(s.who.call.as_deref())
        .with_conversation(Some(&shown_to));
    store.record_logged(&s.sid, &view, |_| {
        LogEvent::new(TOOL, "read")
            .path(&held.canonical)
            .verdict("given")
            .detail(Some(held.kind.as_str()))
    })?;
    Ok(Some(message))
}

/// Where a shell command's write of `path` lands: the regular file there
/// (`true`), or the path where no file is yet (`false`); the file named
/// `into` inside, where a directory stands and the command writes into it.
/// `None` for anything else there, a path that cannot be resolved, and a
/// name that is no file ([`crate::shell::not_a_file`]): the command's own
/// business.
fn shell_target(cwd: &Path, path: &Path, into: Option<&str>) -> Option<(PathBuf, bool)> {
    if crate::shell::not_a_file(&cwd.join(path)) {
        return None;
    }
    let mut at = path.to_path_buf();
    for _ in 0..2 {
        match paths::resolve(cwd, &at) {
            Ok(Resolved::Existing { meta, canonical }) if meta.is_file() => {
                return Some((canonical, true))
            }
            Ok(Resolved::Existing { meta, .. }) if meta.is_dir() => match into {
                Some(name) if at == path => at = at.join(name),
                _ => return None,
            },
            Ok(Resolved::Missing { canonical }) => return Some((canonical, false)),
            _ => return None,
        }
    }
    None
}

/// Diff lines a discard's refusal shows of each file, and how many files
/// get a diff (every file is named).
const DISCARD_DIFF_LINES: usize = 40;
const DISCARD_DIFF_FILES: usize = 10;

/// A git command about to discard changes in the work tree (issue 39): what
/// it would lose, file by file, as git lists it ([`crate::discard`]). A
/// file may go where the agent's own command left it as it is, or where
/// the agent holds every line the discard throws away (fresh views that
/// cover them, a `full` one covers all); nothing there, nothing lost. Any
/// other file refuses the command: one that names its files (`git checkout
/// -- f`) in the gate's words for a whole-file write of each, a whole-tree
/// one (`git checkout .`, `git reset --hard`) naming the files, with the
/// diff each would lose.
fn git_discard(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    d: &crate::shell::Discard,
) -> Result<Answer, Problem> {
    use crate::discard;
    use crate::shell::Loses;
    let dir = s.cwd().join(&d.dir);
    let Some(top) = discard::top(&dir) else {
        return Ok(Answer::Nothing);
    };
    let (paths, loses) = match &d.loses {
        Loses::CheckoutAmbiguous => {
            let first = d.paths.first().map(String::as_str).unwrap_or_default();
            match discard::is_commit(&dir, first) {
                // A branch switch: git itself refuses to lose a change.
                true if d.paths.len() == 1 => return Ok(Answer::Nothing),
                true => (
                    d.paths[1..].to_vec(),
                    Loses::SinceCommit {
                        rev: first.to_string(),
                        untracked: false,
                        ignored: false,
                    },
                ),
                false => (d.paths.clone(), Loses::SinceIndex),
            }
        }
        l => (d.paths.clone(), l.clone()),
    };
    let Some(files) = discard::files(&dir, &top, &paths, &loses) else {
        return Ok(Answer::Nothing);
    };
    let store = s.open_existing()?;
    if let Some(store) = &store {
        store.own_unpend(&s.conversation, Before::Discard)?;
    }
    let mut lost = Vec::new();
    for f in &files {
        if !holds_what_is_lost(s, store.as_ref(), &dir, f, &loses)? {
            lost.push(f.clone());
        }
    }
    if let Some(store) = &store {
        if s.ensure_agent(store).is_ok() {
            let events: Vec<LogEvent> = lost
                .iter()
                .map(|l| {
                    LogEvent::new(TOOL, "check")
                        .path(&l.path)
                        .verdict("discard")
                        .detail(Some("git"))
                })
                .collect();
            let _ = store.log(&s.sid, &events);
        }
    }
    if lost.is_empty() {
        // What it restores is committed text: the agent's own to write
        // again, once the command has run (git_discarded).
        let store = s.open()?;
        for f in &files {
            if let Ok(canonical) = std::fs::canonicalize(&f.path) {
                store.own_before(&s.conversation, &canonical, Before::Discard)?;
            }
        }
        return Ok(allowed(
            opts,
            "The git command discards only changes you made or were shown.",
        ));
    }
    // The files it names, each a regular file: a whole-file write of each.
    let named: Vec<PathBuf> = paths
        .iter()
        .filter_map(|p| std::fs::canonicalize(dir.join(p)).ok())
        .filter(|p| p.is_file())
        .collect();
    let is_named =
        |l: &discard::Lost| std::fs::canonicalize(&l.path).is_ok_and(|c| named.contains(&c));
    if lost.iter().all(is_named) {
        let mut denied = Vec::new();
        for l in &lost {
            let m = match about_to_change(agent, opts, s, &l.path, Want::Write, None)? {
                Answer::Deny(m) => m,
                _ => MSG_DISCARD.to_string(),
            };
            denied.push((l, m));
        }
        return Ok(Answer::Deny(match denied.as_slice() {
            [(_, m)] => m.clone(),
            all => all
                .iter()
                .map(|(l, m)| format!("{}: {m}", paths::display(s.cwd(), &l.path).display()))
                .collect::<Vec<_>>()
                .join(" "),
        }));
    }
    let mut text = format!("{MSG_DISCARD}\n");
    for (i, l) in lost.iter().enumerate() {
        let shown = paths::display(s.cwd(), &l.path);
        if i < DISCARD_DIFF_FILES {
            let what = if l.tracked {
                "its changes"
            } else {
                "the whole file (untracked)"
            };
            text.push_str(&format!(
                "\n{}: {what}\n{}",
                shown.display(),
                discard::diff(&dir, l, &loses, DISCARD_DIFF_LINES)
            ));
        } else {
            text.push_str(&format!("\n{}: (diff left out)\n", shown.display()));
        }
    }
    Ok(Answer::Deny(text))
}

/// Whether a discard of `lost` loses nothing the agent did not make or see:
/// nothing there (a deletion restored), not a regular file, an empty
/// untracked file, the agent's own output unchanged since, or a file whose
/// fresh views (held, not processed, not told of a change since) cover
/// every line the discard throws away.
fn holds_what_is_lost(
    s: &Session<'_>,
    store: Option<&Store>,
    dir: &Path,
    lost: &crate::discard::Lost,
    loses: &crate::shell::Loses,
) -> Result<bool, Problem> {
    let Ok(meta) = std::fs::symlink_metadata(&lost.path) else {
        return Ok(true);
    };
    if !meta.is_file() || (meta.len() == 0 && !lost.tracked) {
        return Ok(true);
    }
    let Some(store) = store else {
        return Ok(false);
    };
    let Ok(canonical) = std::fs::canonicalize(&lost.path) else {
        return Ok(false);
    };
    if own_now(store, &s.conversation, &canonical)?.0 || made_by_run(s, store, &canonical)? {
        return Ok(true);
    }
    let Some(record) = store.file_by_path(&s.sid, &canonical)? else {
        return Ok(false);
    };
    let fresh = matches!(
        fingerprint::freshness(&canonical, &record.fingerprint),
        Ok(fingerprint::Freshness::Fresh { .. })
    );
    if !fresh || store.is_told(record.id)? {
        return Ok(false);
    }
    let views: Vec<_> = store
        .views(record.id)?
        .into_iter()
        .filter(|v| v.held() && v.kind != Kind::Processed)
        .collect();
    if views.iter().any(|v| v.kind == Kind::Full) {
        return Ok(true);
    }
    let Some(ranges) = crate::discard::lines(dir, lost, loses) else {
        return Ok(false);
    };
    let covered = |line: u64| {
        views
            .iter()
            .any(|v| v.lines > 0 && line >= v.offset && line - v.offset < v.lines)
    };
    Ok(ranges
        .iter()
        .all(|&(a, b)| b.saturating_sub(a) < 1_000_000 && (a..=b).all(covered)))
}

/// A file a shell command is about to write: the gate, for a regular file
/// or a path with no file yet ([`shell_target`]). The agent's own output,
/// unchanged since its command wrote it, and scratch in the system's
/// temporary directory may be written whatever the views; a file of the
/// agent's own that someone else changed since is refused with that
/// change.
fn shell_write(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    w: &ShellWrite,
) -> Result<Answer, Problem> {
    let want = if w.whole { Want::Write } else { Want::Edit };
    if let Some(at) = replaced_link(s.cwd(), &w.path, w.into.as_deref(), w.link) {
        return Ok(match &s.open_existing()? {
            Some(store) => passed(opts, s, store, &at, want, "link", MSG_LINK),
            None => allowed(opts, MSG_LINK),
        });
    }
    let Some((canonical, exists)) = shell_target(s.cwd(), &w.path, w.into.as_deref()) else {
        return Ok(Answer::Nothing);
    };
    let mut changed_own = None;
    if exists {
        let store = s.open_existing()?;
        if let Some(store) = &store {
            let (own, row) = own_now(store, &s.conversation, &canonical)?;
            if own || made_by_run(s, store, &canonical)? {
                return Ok(passed(
                    opts,
                    s,
                    store,
                    &canonical,
                    want,
                    "own",
                    MSG_OWN_OUTPUT,
                ));
            }
            changed_own = row.filter(|r| r.fingerprint.is_some() && r.before.is_none());
        }
        if scratch(&canonical, s.cwd()) {
            if let Some(store) = &store {
                return Ok(passed(
                    opts,
                    s,
                    store,
                    &canonical,
                    want,
                    "scratch",
                    MSG_SCRATCH,
                ));
            }
            return Ok(allowed(opts, MSG_SCRATCH));
        }
    }
    // A replacement of literal text (`sed -i 's/OLD/NEW/'`) may be merged
    // with a change the file had since the view, as an edit tool's is.
    // Told after the command, the change comes with the command's own
    // (nothing records the view with its edit), whole or not at all.
    let edits = w.edits.as_ref();
    let answer = about_to_change(agent, opts, s, &canonical, want, edits)?;
    Ok(match (answer, changed_own) {
        (Answer::Deny(m), Some(row)) if m == gate::MSG_NOT_READ => {
            let store = s.open_existing()?;
            let diff = match &store {
                Some(store) => store.own_changed(&row, &canonical, s.cwd())?,
                None => None,
            };
            Answer::Deny(match diff {
                Some(d) => {
                    format!("{MSG_OWN_CHANGED} The change since your command wrote it:\n\n{d}")
                }
                None => MSG_OWN_CHANGED.to_string(),
            })
        }
        (a, _) => a,
    })
}

/// A command replacing a symbolic link ([`replaced_link`]).
const MSG_LINK: &str = "The command replaces a symbolic link, not the file it points to: a link holds no one's text, and the file behind it is not touched.";

/// Where a command that replaces a symlink rather than writing through it
/// (`ln -sf`, `ln -sfn`, `mv`, `cp --remove-destination`: [`crate::shell::Link`])
/// finds one at its destination: the link's own path (its directory
/// resolved, not the link). A link to a directory, without `-n` or `-T`,
/// is followed as the command follows it: the name written is in the
/// directory, and a link there is replaced in turn.
fn replaced_link(
    cwd: &Path,
    path: &Path,
    into: Option<&str>,
    link: Option<crate::shell::Link>,
) -> Option<PathBuf> {
    let link = link?;
    if crate::shell::not_a_file(&cwd.join(path)) {
        return None;
    }
    let is_link = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    let at = cwd.join(path);
    let dest = if is_link(&at) && (into.is_none() || link.even_to_dir || !at.is_dir()) {
        at
    } else if at.is_dir() {
        at.join(into?)
    } else {
        return None;
    };
    if !is_link(&dest) {
        return None;
    }
    Some(dest.parent()?.canonicalize().ok()?.join(dest.file_name()?))
}

/// A change the gate lets through, as `fsview-check-edit` answers it.
fn allowed(opts: &Options, message: &str) -> Answer {
    match opts.allow {
        true => Answer::Allow(message.to_string()),
        false => Answer::Nothing,
    }
}

/// A shell write let through for what the path is (`verdict`: `own`,
/// `scratch`), logged as the gate's checks are.
fn passed(
    opts: &Options,
    s: &Session<'_>,
    store: &Store,
    canonical: &Path,
    want: Want,
    verdict: &str,
    message: &str,
) -> Answer {
    let detail = match want {
        Want::Write => "write",
        _ => "edit",
    };
    if s.ensure_agent(store).is_ok() {
        let _ = store.log(
            &s.sid,
            &[LogEvent::new(TOOL, "check")
                .path(canonical)
                .verdict(verdict)
                .detail(Some(detail))],
        );
    }
    allowed(opts, message)
}

/// Whether the file at `canonical` is conversation `sid`'s own output now
/// ([`fsview_store::own`]), with the record of it: what one of its
/// commands left there, unchanged since. A command the agent runs on in
/// the background (its hook after came when it started) owns whatever it
/// writes, where the path held nothing or the agent's own output before.
/// A command whose end no hook reported left nothing of the agent's own:
/// nothing says it ran, so what is there may be anyone's.
fn own_now(store: &Store, sid: &str, canonical: &Path) -> Result<(bool, Option<Own>), Problem> {
    let Some(row) = store.own(sid, canonical)? else {
        return Ok((false, None));
    };
    let own = match row.before {
        Some(Before::New | Before::Own) if row.live => true,
        _ => row.holds(canonical),
    };
    Ok((own, Some(row)))
}

/// Whether the file at `canonical` was made by one of the conversation's
/// own shell commands without naming it (a generator's new output): born
/// in the window of one of them ([`Store::run_made`]), under the agent's
/// working directory, and not changed since that command's end. Such a
/// file becomes the agent's own output from here on, logged as a `check`
/// with verdict `own` and the command. A file someone else creates while
/// the command runs cannot be told apart from the command's, as for a
/// change ([`attribute`]).
fn made_by_run(s: &Session<'_>, store: &Store, canonical: &Path) -> Result<bool, Problem> {
    let cwd = std::fs::canonicalize(s.cwd()).unwrap_or_else(|_| s.cwd().to_path_buf());
    if !canonical.starts_with(&cwd) {
        return Ok(false);
    }
    // Only a file fsview knew nothing of: one it has a view or an own
    // output of was there before, and a new file in its place while a
    // command ran (an editor's save) may be anyone's.
    if store.file_by_path(&s.sid, canonical)?.is_some()
        || store.own(&s.conversation, canonical)?.is_some()
    {
        return Ok(false);
    }
    let Ok(meta) = std::fs::symlink_metadata(canonical) else {
        return Ok(false);
    };
    if !meta.is_file() {
        return Ok(false);
    }
    let stat = fingerprint::Stat::of(&meta);
    let Some(command) = store.run_made(&s.conversation, &stat)? else {
        return Ok(false);
    };
    let Ok((fp, bytes)) = own::take(canonical) else {
        return Ok(false);
    };
    if fp.stat.mtime_ns != stat.mtime_ns {
        return Ok(false); // written meanwhile
    }
    store.own_wrote(&s.conversation, canonical, &fp, bytes.as_deref())?;
    if s.ensure_agent(store).is_ok() {
        let _ = store.log(
            &s.sid,
            &[LogEvent::new(TOOL, "check")
                .path(canonical)
                .verdict("own")
                .detail(Some(&format!("made by the command: {command}")))],
        );
    }
    Ok(true)
}

/// The system's temporary directories: `/tmp`, `/var/tmp`, `/dev/shm` and
/// `$TMPDIR`. A file in one of them, outside the agent's working directory
/// and outside any git work tree, is scratch that programs and earlier
/// sessions leave and share (`pytest > /tmp/pytest.log`): nobody's text
/// is kept there. A project there (a clone in `mktemp -d`) is gated as
/// any other.
fn scratch(canonical: &Path, cwd: &Path) -> bool {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    if canonical.starts_with(&cwd) {
        return false;
    }
    let mut roots = vec![
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    if let Some(t) = std::env::var_os("TMPDIR").map(PathBuf::from) {
        if t.is_absolute() {
            roots.push(t);
        }
    }
    for root in roots {
        let Ok(root) = std::fs::canonicalize(&root) else {
            continue;
        };
        if canonical == root || !canonical.starts_with(&root) {
            continue;
        }
        let mut dir = canonical.parent();
        while let Some(d) = dir.filter(|d| *d != root) {
            if std::fs::symlink_metadata(d.join(".git")).is_ok() {
                return false;
            }
            dir = d.parent();
        }
        return true;
    }
    false
}

/// A shell command is about to write these files: what each holds now
/// decides whether what it leaves there is the agent's own
/// ([`shell_written`]).
fn shell_writing(s: &Session<'_>, writes: &[OwnWrite]) -> Result<(), Problem> {
    // Opened even where no session file is yet: the command's window is
    // recorded, so a file it makes is the agent's own. Where the file
    // cannot be made (a read-only work tree), a command that names no
    // write goes on untracked rather than refused.
    let store = match s.open() {
        Ok(store) => store,
        Err(_) if writes.is_empty() => match s.open_existing() {
            Ok(Some(store)) => store,
            _ => return Ok(()),
        },
        Err(e) => return Err(e),
    };
    track(s, &store)?;
    for w in writes {
        if w.link.is_some_and(|l| l.makes) {
            continue; // a link holds no one's text
        }
        // A link replaced (`mv`, `cp --remove-destination`): the file made
        // there is where nothing was.
        let replaced = replaced_link(s.cwd(), &w.path, w.into.as_deref(), w.link);
        let Some((canonical, exists)) = replaced
            .map(|at| (at, false))
            .or_else(|| shell_target(s.cwd(), &w.path, w.into.as_deref()))
        else {
            continue;
        };
        let before = if !exists {
            Before::New
        } else if own_now(&store, &s.conversation, &canonical)?.0 {
            Before::Own
        } else if gate::decide_for(Some(&store), &s.sid, s.cwd(), &canonical, Want::Write)?.verdict
            == Verdict::Ok
        {
            Before::Seen
        } else {
            Before::Other
        };
        store.own_before(&s.conversation, &canonical, before)?;
    }
    Ok(())
}

/// How many of the conversation's own outputs, and of the session's
/// viewed files, a command's hooks look at for what it changed without
/// naming it ([`track`]): the newest.
const TRACK_FILES: usize = 200;

/// Before a shell command: the files it may change without naming them
/// (`cargo fmt`, a generator, `make`) whose change would be the agent's
/// own. Under the agent's working directory, among the newest
/// [`TRACK_FILES`]: its own output that still holds what its command left
/// (`own`), and files it holds whole, fresh (`seen`). What the last
/// command marked and no hook after it reported is dropped first: a
/// change since is not this command's.
fn track(s: &Session<'_>, store: &Store) -> Result<(), Problem> {
    store.own_untrack(&s.conversation)?;
    store.run_started(&s.conversation)?;
    let cwd = std::fs::canonicalize(s.cwd()).unwrap_or_else(|_| s.cwd().to_path_buf());
    let mut own = Vec::new();
    for p in store.own_paths(&s.conversation, TRACK_FILES)? {
        if !p.starts_with(&cwd) {
            continue;
        }
        if let Some(row) = store.own(&s.conversation, &p)? {
            if row.before.is_none() && !row.live && row.holds(&p) {
                own.push(p);
            }
        }
    }
    let mut seen = Vec::new();
    for f in store.recent_files(&s.sid, TRACK_FILES)? {
        if !f.path.starts_with(&cwd) || store.own(&s.conversation, &f.path)?.is_some() {
            continue;
        }
        if gate::decide_for(Some(store), &s.sid, s.cwd(), &f.path, Want::Write)?.verdict
            == Verdict::Ok
        {
            seen.push(f.path);
        }
    }
    // Marked together, in one write.
    let marks: Vec<(&Path, Before)> = own
        .iter()
        .map(|p| (p.as_path(), Before::Own))
        .chain(seen.iter().map(|p| (p.as_path(), Before::Seen)))
        .collect();
    store.own_before_all(&s.conversation, &marks)?;
    Ok(())
}

/// After a shell command: each file [`track`] marked that the command
/// changed without naming it is the agent's own output now (logged as a
/// `check` with verdict `own` and the command); one it did not change is
/// as it was.
fn attribute(s: &Session<'_>, store: &Store, command: &str) -> Result<(), Problem> {
    // The command, as the event's detail: its first line, capped.
    let line = command.lines().next().unwrap_or("");
    let cut: String = line.chars().take(200).collect();
    let more = if cut.len() < command.len() {
        " ..."
    } else {
        ""
    };
    store.run_ended(&s.conversation, &format!("{cut}{more}"))?;
    let detail = format!("changed by the command: {cut}{more}");
    let mut changed = Vec::new();
    for p in store.own_pending(&s.conversation, Before::Own)? {
        match store.own(&s.conversation, &p)? {
            Some(row) if !row.live && !row.holds(&p) => changed.push(p),
            _ => {}
        }
    }
    for p in store.own_pending(&s.conversation, Before::Seen)? {
        if gate::decide_for(Some(store), &s.sid, s.cwd(), &p, Want::Write)?.verdict != Verdict::Ok {
            changed.push(p);
        }
    }
    for p in changed {
        match own::take(&p) {
            Ok((fp, bytes)) => {
                store.own_wrote(&s.conversation, &p, &fp, bytes.as_deref())?;
                if s.ensure_agent(store).is_ok() {
                    let _ = store.log(
                        &s.sid,
                        &[LogEvent::new(TOOL, "check")
                            .path(&p)
                            .verdict("own")
                            .detail(Some(&detail))],
                    );
                }
            }
            Err(_) => store.own_forget(&s.conversation, &p)?,
        }
    }
    store.own_untrack(&s.conversation)?;
    Ok(())
}

/// A shell command that wrote these files has finished: what it left is
/// the agent's own where the path held nothing, the agent's own output or
/// a text it held whole before, or the command wrote all of it; else the
/// file holds text the agent never saw, and is not. After a whole-file write the agent knows its
/// command replaced the file: a view of what was there before is
/// forgotten (nothing to tell it), and the text it now holds is a view
/// where it is known: a copy of a file it holds whole (`cp`), an empty
/// file.
fn shell_written(s: &Session<'_>, writes: &[OwnWrite], command: &str) -> Result<(), Problem> {
    let Some(store) = s.open_existing()? else {
        return Ok(());
    };
    let mut targets: Vec<(PathBuf, bool, Option<&Path>, bool, bool)> = Vec::new();
    for w in writes {
        if w.link.is_some_and(|l| l.makes) {
            continue; // a link holds no one's text
        }
        let Some((canonical, _)) = shell_target(s.cwd(), &w.path, w.into.as_deref()) else {
            continue;
        };
        let whole = w.how == crate::shell::How::Whole;
        let moves = w.link.is_some_and(|l| l.moves);
        match targets.iter_mut().find(|t| t.0 == canonical) {
            Some(t) => {
                t.1 |= whole;
                t.2 = t.2.or(w.from.as_deref());
                t.3 |= w.live;
                t.4 |= moves;
            }
            None => targets.push((canonical, whole, w.from.as_deref(), w.live, moves)),
        }
    }
    for (canonical, whole, from, live, moves) in targets {
        let Some(row) = store.own(&s.conversation, &canonical)? else {
            continue;
        };
        let Some(before) = row.before else {
            continue; // no command of this conversation was about to write it
        };
        if live {
            store.own_live(&s.conversation, &canonical)?;
            continue;
        }
        if !whole && before == Before::Other {
            store.own_forget(&s.conversation, &canonical)?;
            continue;
        }
        // A text the agent held whole, left as it was (the command failed,
        // or wrote the same bytes): the command made nothing there, and
        // must not be named as the writer of that text.
        if before == Before::Seen
            && gate::decide_for(Some(&store), &s.sid, s.cwd(), &canonical, Want::Write)?.verdict
                == Verdict::Ok
        {
            store.own_forget(&s.conversation, &canonical)?;
            continue;
        }
        let Ok((fp, bytes)) = own::take(&canonical) else {
            store.own_forget(&s.conversation, &canonical)?;
            continue;
        };
        // A move puts the source's text here, and leaves it nowhere else:
        // the agent's own only when the source was (written by this same
        // line, or its own output, unchanged). Someone's file moved here
        // is still theirs; where the agent held it whole, it holds it here.
        if let (true, Some(from)) = (moves, from) {
            let made_here = writes.iter().any(|w| w.path == from);
            let src = match paths::resolve(s.cwd(), from) {
                Ok(Resolved::Existing { canonical, .. } | Resolved::Missing { canonical }) => {
                    Some(canonical)
                }
                _ => None,
            };
            let was_own = src
                .as_ref()
                .map(|c| store.own(&s.conversation, c))
                .transpose()?
                .flatten()
                .and_then(|row| row.fingerprint)
                .is_some_and(|f| f.hash.is_some() && f.hash == fp.hash);
            if !made_here && !was_own {
                store.own_forget(&s.conversation, &canonical)?;
                let held = match (&src, &bytes) {
                    (Some(src), Some(b)) => held_text(s, &store, src, b)?,
                    _ => None,
                };
                if let Some(text) = held {
                    changed(
                        s,
                        &Changed {
                            path: canonical,
                            text,
                            before: None,
                            whole: true,
                        },
                    )?;
                }
                continue;
            }
        }
        store.own_wrote(&s.conversation, &canonical, &fp, bytes.as_deref())?;
        let known = match (from, &bytes) {
            (Some(from), Some(bytes)) if whole => copied_text(s, &store, from, bytes)?,
            _ => None,
        };
        match known.or_else(|| bytes.filter(|b| b.is_empty()).map(|_| String::new())) {
            Some(text) => changed(
                s,
                &Changed {
                    path: canonical,
                    text,
                    before: None,
                    whole: true,
                },
            )?,
            None if whole => forget_replaced(s, &store, &canonical)?,
            None => {}
        }
    }
    attribute(s, &store, command)?;
    Ok(())
}

/// A git command that discarded work-tree changes has run: each file it was
/// about to restore ([`git_discard`]) holds committed text now, nothing of
/// anyone's that is not in git: the agent's own output. A file it removed
/// (`git clean`) is no one's. The views stay: what changed is told as any
/// change is.
fn git_discarded(s: &Session<'_>) -> Result<(), Problem> {
    let Some(store) = s.open_existing()? else {
        return Ok(());
    };
    for canonical in store.own_pending(&s.conversation, Before::Discard)? {
        match own::take(&canonical) {
            Ok((fp, bytes)) => {
                store.own_wrote(&s.conversation, &canonical, &fp, bytes.as_deref())?
            }
            Err(_) => store.own_forget(&s.conversation, &canonical)?,
        }
    }
    Ok(())
}

/// The text of `from` when the agent holds all of it (a fresh `full` view
/// whose text was kept) and `bytes` are exactly those.
fn copied_text(
    s: &Session<'_>,
    store: &Store,
    from: &Path,
    bytes: &[u8],
) -> Result<Option<String>, Problem> {
    let Ok(Resolved::Existing { canonical, .. }) = paths::resolve(s.cwd(), from) else {
        return Ok(None);
    };
    held_text(s, store, &canonical, bytes)
}

/// [`copied_text`] of a file already resolved (one that may be gone: the
/// source of a move).
fn held_text(
    s: &Session<'_>,
    store: &Store,
    canonical: &Path,
    bytes: &[u8],
) -> Result<Option<String>, Problem> {
    Ok(full_text(store, &s.sid, canonical)?
        .filter(|kept| kept == bytes)
        .and_then(|kept| String::from_utf8(kept).ok()))
}

/// The agent's command replaced the whole file with what the agent was not
/// shown: its views of what was there are of a text gone by its own doing,
/// forgotten rather than told back to it as a change.
fn forget_replaced(s: &Session<'_>, store: &Store, canonical: &Path) -> Result<(), Problem> {
    let Some(record) = store.file_by_path(&s.sid, canonical)? else {
        return Ok(());
    };
    if matches!(
        fingerprint::freshness(canonical, &record.fingerprint),
        Ok(fingerprint::Freshness::Fresh { .. })
    ) {
        return Ok(());
    }
    let which = [ForgetPath {
        path: canonical,
        stat: None,
    }];
    store.forget(
        &s.sid,
        Some(&which),
        Some("the agent's own command rewrote it"),
    )?;
    Ok(())
}

/// A shell command wrote a file with a text it spelled out: what the agent
/// now believes the file holds, recorded only where a regular file holds
/// exactly that text. Otherwise the command failed, wrote a device, or
/// something else changed the file after it: the views it had stay as they
/// were, and the next check finds whatever changed.
fn shell_wrote(s: &Session<'_>, c: &Changed) -> Result<(), Problem> {
    if crate::shell::not_a_file(&s.cwd().join(&c.path)) {
        return Ok(());
    }
    let Ok(Resolved::Existing { meta, canonical }) = paths::resolve(s.cwd(), &c.path) else {
        return Ok(());
    };
    if !meta.is_file() || meta.len() != c.text.len() as u64 {
        return Ok(());
    }
    match std::fs::read(&canonical) {
        Ok(bytes) if bytes == c.text.as_bytes() => changed(s, c),
        _ => Ok(()),
    }
}

/// An instruction file `ctx-build` injected, from its `--json` output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionFile {
    pub path: PathBuf,
    pub label: Option<String>,
    pub text: String,
    pub imported_by: Option<PathBuf>,
    /// What was injected is not the disk text (stripped, truncated).
    pub processed: bool,
}

fn session_start(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    start: Start,
) -> Result<Answer, Problem> {
    // The siblings get the session file by name, as an explicit path: it
    // must exist (its default directory created) before they run, and a
    // subagent's views with it.
    let store = s.open()?;
    if start == Start::Compact {
        // The conversation is a summary now: it holds none of what it was
        // shown. What the compaction kept, and the files it attached
        // again, are in the agent's transcript once it is written, and
        // held again then (crate::transcript).
        compacted(&store, s, &Default::default())?;
    }
    if start == Start::Clear {
        // The conversation starts over: it has read nothing any more.
        let a: Vec<OsString> = vec![
            "--reset".into(),
            "--hook".into(),
            "--reason".into(),
            "SessionStart (clear)".into(),
            "--session".into(),
            s.file.clone().into_os_string(),
            "--sid".into(),
            s.sid.clone().into(),
        ];
        sibling(opts, "ctx-invalidate", &a, s.cwd())?;
    }
    // ctx-build reads Claude Code's instruction files (CLAUDE.md and the
    // rest) and records each as given to the agent: right only for an agent
    // that loads them itself. Any other gets the `--also` files it does not
    // load, read without the memo, and views of exactly what it was sent.
    let loads_defaults = agent.loads_itself(CTX_BUILD_NAME);
    // A resumed conversation may already hold what its start was given
    // (and the agent may add a start's context again).
    let holds_start = start == Start::Resume && agent.resume_keeps_start();
    if !loads_defaults && (holds_start || opts.also.iter().all(|n| agent.loads_itself(n))) {
        return Ok(Answer::Nothing);
    }
    let mut args = ctx_args(opts, s);
    if !loads_defaults {
        args.push("--no-cache".into());
    }
    // Records the injected instruction files as views (a cache hit records
    // nothing new and returns the same bytes).
    let out = sibling(opts, "ctx-build", &args, s.cwd())?;
    if holds_start {
        return Ok(Answer::Nothing);
    }
    let files = instruction_files(&out)?;
    let head = format!(
        "Instruction files read by fsview (--also {}):\n\n",
        opts.also.join(", ")
    );
    // What the context holds so far: the heading, each block and the blank
    // line after it ([`Agent::context_limit`]).
    let mut used = agent.context_len(&head);
    let mut blocks = Vec::new();
    for f in not_loaded_by(agent, opts, &files) {
        let label = f
            .label
            .as_deref()
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        let block = format!("Contents of {}{label}:\n\n{}", f.path.display(), f.text);
        let why = match agent.alters(Stage::SessionStart, &f.text) {
            Some(why) => Some(why),
            None if !fits(agent, used, &block) => agent.context_limit().map(|(_, why)| why),
            None => None,
        };
        if let Some(why) = why {
            let out = format!(
                "{} is left out: {why}; read it before you follow it.",
                f.path.display()
            );
            used += agent.context_len(&out) + 2;
            blocks.push(out);
            if loads_defaults {
                // ctx-build recorded it as given: it was not.
                unrecord(s, &f.path)?;
            }
            continue;
        }
        if !loads_defaults {
            given(s, f)?;
        }
        used += agent.context_len(&block) + 2;
        blocks.push(block);
    }
    if blocks.is_empty() {
        return Ok(Answer::Nothing);
    }
    Ok(Answer::Context(format!("{head}{}", blocks.join("\n\n"))))
}

/// Forget the session's views of an instruction file that ctx-build
/// recorded as given, when it was left out of what the agent was given.
fn unrecord(s: &Session<'_>, path: &Path) -> Result<(), Problem> {
    let canonical = existing(s.cwd(), path)?;
    let stat = std::fs::symlink_metadata(&canonical)
        .ok()
        .map(|m| fingerprint::Stat::of(&m));
    let which = [ForgetPath {
        path: &canonical,
        stat,
    }];
    s.open()?.forget(
        &s.sid,
        Some(&which),
        Some("left out of the session's start: too long for the agent's context"),
    )?;
    Ok(())
}

/// The conversation was compacted: the views shown by a call in `live`
/// (one whose result the compaction kept) stay held, every other is
/// released.
fn compacted(
    store: &Store,
    s: &Session<'_>,
    live: &std::collections::HashSet<String>,
) -> Result<(), Problem> {
    store.hold_only(&s.sid, live, held::Scope::All, Released::Compaction, TOOL)?;
    Ok(())
}

/// The instruction file name `ctx-build` always reads: an agent that loads
/// it itself loads what `ctx-build` reads by default.
const CTX_BUILD_NAME: &str = "CLAUDE.md";

/// Record an instruction file sent as context: the view of what was sent.
fn given(s: &Session<'_>, f: &InstructionFile) -> Result<(), Problem> {
    let canonical = existing(s.cwd(), &f.path)?;
    let text = if f.processed {
        ShownText::Processed(f.text.clone())
    } else {
        ShownText::Lines(f.text.clone())
    };
    let shown = Shown {
        path: canonical.clone(),
        text,
        offset: 1,
        extent: Extent::Whole,
    };
    let Some(held) = hold::shown(&canonical, &shown)? else {
        return Ok(());
    };
    let source = match f.imported_by {
        Some(_) => Source::Import,
        None => Source::Inject,
    };
    record(s, &s.open()?, &held, source, "inject")
}

fn instructions_for(opts: &Options, s: &Session<'_>, path: &Path) -> Result<(), Problem> {
    // ctx-build records into the agent's views (and the session file),
    // which must exist first.
    s.open()?;
    let mut a = ctx_args(opts, s);
    a.push("--for".into());
    a.push(path.into());
    // Attached mid-conversation, in this prompt's turn: they go with it
    // (a compaction, a rewind), unlike the instructions of the start.
    if let Some(p) = s.who.prompt.as_deref() {
        a.push("--origin".into());
        a.push(crate::transcript::prompt_origin(p).into());
    }
    sibling(opts, "ctx-build", &a, s.cwd())?;
    Ok(())
}

/// The arguments every `ctx-build` run of the hook takes.
fn ctx_args(opts: &Options, s: &Session<'_>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![
        "--session".into(),
        s.file.clone().into_os_string(),
        "--sid".into(),
        s.sid.clone().into(),
        "--json".into(),
        "--quiet".into(),
    ];
    for name in &opts.also {
        a.push("--also".into());
        a.push(name.into());
    }
    a
}

/// The user-part files of `ctx-build --json` output.
fn instruction_files(json: &str) -> Result<Vec<InstructionFile>, Problem> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| Problem::new(format!("ctx-build --json gave no JSON ({e})")))?;
    let files = v
        .get("files")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(files
        .iter()
        .filter(|f| f.get("part").and_then(Value::as_str) == Some("user"))
        .filter_map(|f| {
            Some(InstructionFile {
                path: PathBuf::from(f.get("path")?.as_str()?),
                label: f.get("label").and_then(Value::as_str).map(String::from),
                text: f.get("text")?.as_str()?.to_string(),
                imported_by: f
                    .get("imported_by")
                    .and_then(Value::as_str)
                    .map(PathBuf::from),
                processed: f.get("kind").and_then(Value::as_str) != Some("full"),
            })
        })
        .collect())
}

/// The files found only by `--also` names the agent does not load itself,
/// with what they import, in `ctx-build`'s order.
fn not_loaded_by<'f>(
    agent: &dyn Agent,
    opts: &Options,
    files: &'f [InstructionFile],
) -> Vec<&'f InstructionFile> {
    let mut send: Vec<&InstructionFile> = Vec::new();
    for f in files {
        let wanted = match &f.imported_by {
            Some(parent) => send.iter().any(|s| &s.path == parent),
            None => f
                .path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| opts.also.iter().any(|a| a == n) && !agent.loads_itself(n)),
        };
        if wanted {
            send.push(f);
        }
    }
    send
}

/// Run another fsview binary installed next to this one, in `cwd`, and
/// return its stdout. ctx-build has no library entry point of its own: it
/// is run exactly as a shell would run it.
fn sibling(opts: &Options, name: &str, args: &[OsString], cwd: &Path) -> Result<String, Problem> {
    let path = opts.bin_dir.join(name);
    let out = Command::new(&path)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Problem::new(format!(
                "cannot run {}: {}; install fsview-hook next to the other fsview binaries",
                quote(&path),
                plain_io(&e)
            ))
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().next().unwrap_or("").trim();
        return Err(Problem::new(if first.is_empty() {
            format!("{name} failed ({})", out.status)
        } else {
            first.to_string()
        }));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The caps on what is told, with whole texts as the agent's read shows
/// them ([`Agent::numbers_reads`]).
fn limits(agent: &dyn Agent, opts: &Options) -> Limits {
    Limits {
        numbered: agent.numbers_reads(),
        crlf_as_lf: agent.shows_crlf_as_lf(),
        ..opts.limits
    }
}

/// Tell what changed since the agent saw it, as context given at `stage`,
/// in an answer whose context holds `used` units already
/// ([`Agent::context_limit`]).
fn prompt(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    stage: Stage,
    used: usize,
) -> Result<Answer, Problem> {
    let Some(store) = s.open_existing()? else {
        return Ok(Answer::Nothing);
    };
    // Each change told once, a revert included: the store keeps what the
    // agent was told (fsview_store::remind), the same for every agent.
    let mut found = if stage == Stage::Shown {
        // After every tool call: only what a stat shows, so a call costs
        // no hash of every file read so far.
        remind::select_stat_moved(&store, &s.sid, s.cwd(), limits(agent, opts))?
    } else {
        remind::select(&store, &s.sid, s.cwd(), limits(agent, opts))?
    };
    if stage == Stage::Shown {
        // After a tool, only what reaches the model whole: a diff the agent
        // would alter waits for the refusal that carries it unaltered, or
        // for the next prompt.
        found.retain(|r| {
            r.diff
                .as_deref()
                .is_none_or(|d| agent.alters(stage, d).is_none())
        });
    }
    if found.is_empty() {
        return Ok(Answer::Nothing);
    }
    for r in &mut found {
        // A diff the agent would alter (escape) is not shown at all: in its
        // place, a line saying why and what to do; and the view stays
        // stale, since the model did not get the change.
        if let Some(why) = r.diff.as_deref().and_then(|d| agent.alters(stage, d)) {
            r.diff = Some(format!(
                "(its diff is left out: {why}; read the file to see the change)\n"
            ));
            r.whole = false;
        }
    }
    fit(agent, s.cwd(), &mut found, used, stage);
    if found.is_empty() {
        return Ok(Answer::Nothing);
    }
    // Told with a call's result, or with the prompt.
    let origin = s.who.call.clone().or_else(|| {
        s.who
            .prompt
            .as_deref()
            .map(crate::transcript::prompt_origin)
    });
    remind::record(&store, &s.sid, TOOL, &found, origin.as_deref())?;
    Ok(Answer::Context(remind::render(s.cwd(), &found)))
}

thread_local! {
    /// What the gates of one payload told so far ([`each`]): the context a
    /// merged edit's tell goes beside ([`Agent::context_limit`]).
    static TOLD_BESIDE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether `text`, in an answer whose context holds `used` units already,
/// reaches the model whole ([`Agent::context_limit`], and the room the
/// payload left for it: [`within`]).
fn fits(agent: &dyn Agent, used: usize, text: &str) -> bool {
    let limit = agent
        .context_limit()
        .is_none_or(|(limit, _)| used + agent.context_len(text) <= limit);
    limit
        && ROOM.get().is_none_or(|room| {
            used + text.len() <= room.bytes && text.split('\n').count() <= room.lines
        })
}

/// Why context that does not fit is left out.
fn not_whole(agent: &dyn Agent) -> &'static str {
    match agent.context_limit() {
        Some((_, why)) if ROOM.get().is_none() => why,
        _ => "the agent cuts the tool's result with it past its size",
    }
}

/// Cut reminders to what the agent hands the model whole ([`fits`]): the
/// longest diff (or whole text) first. After a tool, one that does not
/// fit waits for the next prompt, or for the refusal that carries it (a
/// refusal's reason is not cut); at a prompt, its diff is left out, with
/// why and what to do, and the view stays stale. Reminders that still
/// do not fit wait, the last first.
fn fit(
    agent: &dyn Agent,
    cwd: &Path,
    found: &mut Vec<remind::Reminder>,
    used: usize,
    stage: Stage,
) {
    let left_out = format!(
        "(its diff is left out: {}; read the file to see the change)\n",
        not_whole(agent)
    );
    while !found.is_empty() && !fits(agent, used, &remind::render(cwd, found)) {
        let longest = found
            .iter()
            .enumerate()
            .filter(|(_, r)| r.diff.as_deref().is_some_and(|d| d != left_out))
            .max_by_key(|(_, r)| r.diff.as_ref().map_or(0, String::len))
            .map(|(i, _)| i);
        match (longest, stage) {
            (Some(i), Stage::Shown) => {
                found.remove(i);
            }
            (Some(i), _) => {
                let r = &mut found[i];
                r.diff = Some(left_out.clone());
                r.whole = false;
                r.rewrite = false;
                r.truncated = 0;
            }
            (None, _) => {
                found.pop();
            }
        }
    }
}

/// What the payload says is left of the tool's result before the agent
/// cuts it, context included: bytes and lines.
#[derive(Clone, Copy, Debug)]
pub struct Room {
    pub bytes: usize,
    pub lines: usize,
}

thread_local! {
    /// The room the payload being answered left for context ([`within`]).
    static ROOM: std::cell::Cell<Option<Room>> = const { std::cell::Cell::new(None) };
}

/// Answer the next payload's events with at most `room` for context (an
/// opencode MCP tool's result, which opencode cuts past 51,200 bytes or
/// 2,000 lines with the plugin's text in it).
pub fn within(room: Option<Room>) {
    ROOM.set(room);
}

/// Whether the file is the one of hash `before` with only `change` made to
/// it.
fn only_this_change(
    canonical: &Path,
    change: &crate::event::Change,
    before: Option<fingerprint::Hash>,
) -> bool {
    let (Some(before), Ok(now)) = (before, std::fs::read_to_string(canonical)) else {
        return false;
    };
    crate::edited::unapply(&now, change)
        .iter()
        .any(|t| fingerprint::hash_bytes(t.as_bytes()) == before)
}

/// A targeted change reported as what it replaced: the agent's last view
/// of the file with the change applied, recorded as a change it made (a
/// `full` view when that view was the whole file, else a `range` over the
/// view's lines), held against the disk. Nothing is recorded when no view
/// with kept text takes the change exactly.
fn edited(s: &Session<'_>, e: &Edited) -> Result<(), Problem> {
    let canonical = existing(s.cwd(), &e.path)?;
    let Some(store) = s.open_existing()? else {
        return Ok(());
    };
    let Some(file) = store.file_by_path(&s.sid, &canonical)? else {
        return Ok(());
    };
    let mut views = store.views(file.id)?;
    // The whole file first: then the agent knows all of it afterwards.
    views.sort_by_key(|v| v.kind != Kind::Full);
    // What the conversation no longer holds, the agent does not know.
    for v in views
        .iter()
        .filter(|v| v.kind != Kind::Processed && v.held())
    {
        let Some(kept) = v.text_hash.map(|h| store.text(&h)).transpose()?.flatten() else {
            continue;
        };
        let Ok(kept) = String::from_utf8(kept) else {
            continue;
        };
        let Some(after) = crate::edited::apply(&kept, v.offset, &e.change) else {
            continue;
        };
        let held = if v.kind == Kind::Full {
            let c = Changed {
                path: canonical.clone(),
                text: after,
                before: Some(kept),
                whole: false,
            };
            hold::changed(&canonical, &c, true)?
        } else {
            let shown = Shown {
                path: canonical.clone(),
                text: ShownText::Lines(after),
                offset: v.offset,
                extent: Extent::Range,
            };
            let Some(mut held) = hold::shown(&canonical, &shown)? else {
                return Ok(());
            };
            // The lines are on disk; the rest of the file is the agent's
            // only where taking the change back out gives the bytes its
            // views were of. Otherwise something else changed the file
            // too: not taken as seen.
            if !held.moved && !only_this_change(&canonical, &e.change, file.fingerprint.hash) {
                held.never_fresh();
            }
            held
        };
        return record(s, &store, &held, Source::Write, "written");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{is_short_notice, short_notice};

    #[test]
    fn a_short_notice_is_known_again_and_nothing_else_is() {
        for place in [
            "your own last change to it",
            "the instructions given at the start",
            "you were last shown it",
        ] {
            for reread in ["an offset or limit", "a start_line or end_line"] {
                let n = short_notice("src/a b.rs", 12, place, reread);
                assert!(n.split_whitespace().count() <= 25, "{n}");
                let one = short_notice("a.rs", 1, place, reread);
                assert!(one.contains("(1 line) since "), "{one}");
                assert!(is_short_notice(&one), "{one}");
                assert!(is_short_notice(&n), "{n}");
                assert!(is_short_notice(&format!("{n}\n")), "{n}");
                assert!(!is_short_notice(&format!("{n}\nmore\n")), "{n}");
                assert!(!is_short_notice(&format!("x{n}")), "{n}");
            }
        }
        assert!(!is_short_notice(
            "[fsview] a.rs changed since you read it\n"
        ));
        assert!(!is_short_notice("fn main() {}\n"));
    }
}
