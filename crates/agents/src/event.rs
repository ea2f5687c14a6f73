//! The few things an agent's hooks tell fsview, whatever the agent.
//!
//! Every adapter turns its agent's payloads into one of these events, and
//! the [`core`](crate::core) turns each event into store operations. An
//! event says what the agent's own tool reported, never what fsview guesses:
//! what was shown (the text, and where it sits in the file), what the agent
//! now believes a file holds after changing it, what it is about to change.

use std::path::PathBuf;

use serde_json::Value;

/// Who sent an event, and where it works.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Who {
    /// The conversation (the agent's session id): the fsview session.
    pub session: String,
    /// The agent inside the conversation that acted: `None` for the main
    /// thread, a subagent's id otherwise (1 to 200 printable characters).
    /// Each agent has its own views (`fsview_store::agents`): the main
    /// thread's are the session `session`, a subagent's the session
    /// `session/agent`, created empty the first time it is needed. This is
    /// all an adapter must fill for its agent's subagents to work; see
    /// [`Event::AgentStart`] and [`Event::Launching`] for a subagent that
    /// starts with a copy of its parent's views.
    pub agent: Option<String>,
    /// The agent's working directory: what relative paths are relative to,
    /// and where the default session file is looked for.
    pub cwd: PathBuf,
    /// The agent's id for the tool call the payload reports (Claude Code's
    /// `tool_use_id`), if it has one: where in the conversation what the
    /// call showed came from, so that a view dropped with it (compaction,
    /// rewind) is known ([`fsview_store::held`]).
    pub call: Option<String>,
    /// The agent's own transcript of this agent's conversation, if it keeps
    /// one fsview can read ([`crate::transcript`]).
    pub transcript: Option<PathBuf>,
    /// The agent's id for the prompt the model is answering (Claude Code's
    /// `prompt_id`), if it says: the transcript's lines of that prompt
    /// carry it, so a hook knows whether the transcript has reached its
    /// turn ([`crate::transcript::catch_up`]).
    pub prompt: Option<String>,
}

/// One targeted replacement: `old` becomes `new`, once, or at every
/// occurrence when `all`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replace {
    pub old: String,
    pub new: String,
    pub all: bool,
}

impl Replace {
    /// The replacement a tool's input `v` names: its text to replace and
    /// the new text under the keys `old` and `new`, and, where the tool has
    /// one, the flag `all` for every occurrence (absent: once).
    pub fn of(v: &Value, old: &str, new: &str, all: Option<&str>) -> Option<Replace> {
        Some(Replace {
            old: v.get(old)?.as_str()?.to_string(),
            new: v.get(new)?.as_str()?.to_string(),
            all: all
                .and_then(|k| v.get(k))
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// Each replacement of an input's `edits` list, or the one the input
    /// names itself ([`Replace::of`]); `None` when any is incomplete.
    pub fn each(input: &Value, old: &str, new: &str, all: Option<&str>) -> Option<Vec<Replace>> {
        match input.get("edits").and_then(Value::as_array) {
            Some(list) => list.iter().map(|e| Replace::of(e, old, new, all)).collect(),
            None => Replace::of(input, old, new, all).map(|r| vec![r]),
        }
    }
}

/// What a targeted edit does to a file's text, in a form fsview can make
/// of another text: to merge the edit with a change the file had since the
/// agent's view ([`fsview_store::merge`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edits {
    /// Replacements of literal text, as an edit tool makes them (and a
    /// literal `sed -i 's/OLD/NEW/'`).
    Replace(Vec<Replace>),
    /// A script of substitutions of patterns (`sed -i`, `perl -pi`), run
    /// by its program over the text ([`crate::shell::Filter`]).
    Filter(crate::shell::Filter),
}

impl Edits {
    /// `text` with the edit made, by the rules of the tool that makes it;
    /// `None` when it cannot be (an old text not found, or found more than
    /// once; a script whose program fails).
    pub fn apply(&self, text: &str) -> Option<String> {
        match self {
            Edits::Replace(list) => {
                let list: Vec<(&str, &str, bool)> = list
                    .iter()
                    .map(|e| (e.old.as_str(), e.new.as_str(), e.all))
                    .collect();
                fsview_store::merge::replace_exact(text, &list)
            }
            Edits::Filter(f) => f.run(text),
        }
    }
}

/// One thing that happened, in fsview's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The agent was shown (some of) a file.
    Shown(Shown),
    /// The agent is about to change a file: `whole` replaces all of it (a
    /// write), otherwise it is a targeted edit.
    AboutToChange { path: PathBuf, whole: bool },
    /// The agent is about to make targeted replacements in a file (Claude
    /// Code's Edit): the gate as for a targeted
    /// [`AboutToChange`](Event::AboutToChange), and, when the file changed
    /// since the agent's view, the edits merged with that change where they
    /// do not collide ([`fsview_store::merge`]).
    AboutToReplace { path: PathBuf, edits: Vec<Replace> },
    /// The agent is about to change cells of a notebook by their ids
    /// (Claude Code's NotebookEdit): the gate as for a targeted edit, where
    /// the cells it was shown (a processed view) do.
    AboutToEditCells(PathBuf),
    /// A shell command is about to write a file: the gate as for
    /// [`AboutToChange`](Event::AboutToChange), for a regular file or a
    /// path where no file is yet; anything else there (a device, a
    /// directory with no [`ShellWrite::into`], a path that cannot be
    /// resolved) is the command's own business and is not gated.
    ShellWrite(ShellWrite),
    /// A shell command wrote a file with a text it spelled out: recorded
    /// as [`Changed`](Event::Changed), when a regular file is there.
    ShellWrote(Changed),
    /// A shell command is about to run a git command that discards changes
    /// in the work tree ([`crate::shell::discards`]): the gate, for what it
    /// would lose that the agent neither made nor was shown.
    GitDiscard(crate::shell::Discard),
    /// A shell command that ran a git command discarding work-tree changes
    /// has finished: what it restored is committed text, the agent's own to
    /// write again.
    GitDiscarded,
    /// A shell command is about to write these files (the gate let it, or
    /// does not ask: an append): what each path holds now, which decides
    /// whether the command's output is the agent's own
    /// ([`fsview_store::own`]).
    ShellWriting(Vec<OwnWrite>),
    /// A shell command that wrote these files has finished: what it left
    /// in each is the agent's own output, where it was nothing or the
    /// agent's own before, or the command wrote all of it. With the
    /// command line: what else it changed is looked for, and told with it.
    ShellWritten(Vec<OwnWrite>, String),
    /// The agent changed a file, and now believes it holds a known text.
    Changed(Changed),
    /// The agent put the instruction files that apply to a path into its
    /// context (the nested CLAUDE.md files of its directories, the rules
    /// whose globs match it), as it does when it first works there.
    InstructionsFor(PathBuf),
    /// A conversation starts, or starts over.
    SessionStart(Start),
    /// The user sent a prompt: the moment to tell what changed.
    Prompt,
    /// The conversation was compacted into a summary: it holds none of what
    /// it was shown any more (what a compaction kept and re-attached is
    /// recorded as it is shown, from the agent's transcript where it keeps
    /// one).
    Compacted,
    /// The conversation was compacted into a summary and a kept part that
    /// holds the results of these calls (their ids, as the views record
    /// them): the views they showed are still held, every other is not.
    CompactedKeeping(Vec<String>),
    /// The agent cleared the results of these calls (their ids, as the
    /// views record them) from the conversation, keeping the rest
    /// (opencode's pruning of old tool outputs): the views they showed are
    /// released.
    Pruned(Vec<String>),
    /// The conversation moved to another branch of itself (pi's `/tree`)
    /// and says nothing of which views that branch holds: it holds none of
    /// them any more, as far as fsview knows.
    Rewound,
    /// A subagent starts: the agent in [`Who::agent`], of type `kind` as
    /// the agent names it. With `inherits` it starts with a copy of the
    /// views of the agent that launched it (Claude Code's `fork`), which
    /// that agent announced with [`Event::Launching`]; otherwise with none.
    /// Without this event a subagent's views start empty when its first
    /// view is recorded.
    AgentStart(AgentStart),
    /// The agent launches a subagent of type `kind` that will start with a
    /// copy of its views ([`AgentStart::inherits`]): a subagent's start
    /// does not say who launched it, so its launcher says so first.
    Launching { kind: String },
    /// The agent hands its turn to a subagent of type `kind` whose calls
    /// come in its name (gemini-cli's `invoke_agent`): until
    /// [`Event::Delegated`], every event of the conversation is the
    /// subagent's, with views of its own ([`Agent::delegates`](crate::Agent::delegates)).
    Delegating { kind: String },
    /// That subagent has finished: the moment to tell the agent what it
    /// changed, as at a prompt.
    Delegated,
    /// A subagent the agent waited for has finished: the moment to tell the
    /// agent what its subagents changed (its own views are untouched by
    /// theirs), as at a prompt.
    AgentDone,
    /// A tool call finished: the moment to tell the agent what changed
    /// since it last saw its files, for an agent whose prompts fire no
    /// hook (Droid headless), answered with the tool's result.
    ToolDone,
    /// The agent changed a file with a patch: the file now holds (or, when
    /// not `applied`, is about to hold) what the patch makes of it.
    Patched(Patched),
    /// The agent removed a file itself: what it saw of it is gone with it.
    Removed(PathBuf),
    /// Several events of one payload (a patch of several files, a session
    /// start and what it showed): the gate for each file first, where any
    /// refusal refuses them all and nothing else is acted on; then the
    /// rest, in order.
    Each(Vec<Event>),
    /// The agent changed a file with a targeted edit its tool reports as
    /// what it replaced, not as the file's new text.
    Edited(Edited),
    /// A tool call finished with `0`'s event (possibly
    /// [`Ignored`](Event::Ignored)): after it, the moment to tell what
    /// changed meanwhile (a formatter, another process), before the model
    /// acts on its next step.
    AfterTool(Box<Event>),
    /// Nothing fsview watches (another tool, an answer with nothing to
    /// record, a change that was not applied).
    Ignored,
}

/// What a tool showed of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shown {
    pub path: PathBuf,
    /// What was shown, as the tool reports it.
    pub text: ShownText,
    /// The first line shown, 1-based.
    pub offset: u64,
    /// How much of the file the tool says it showed.
    pub extent: Extent,
}

/// The shown text, in the form the tool reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShownText {
    /// Lines of the file without their numbers, joined by `\n`: the last
    /// line's newline may be left out; `\r\n` may have become `\n` and a
    /// byte-order mark may have been dropped (a tool decoding the file).
    Lines(String),
    /// The cells of a Jupyter notebook: each cell's id (when it has one)
    /// and its source text.
    Cells(Vec<Cell>),
    /// Lines as a shell command printed them (`cat`, `sed -n`, `head`):
    /// the file's bytes, taken as [`Lines`](ShownText::Lines) only when the
    /// disk holds them. Otherwise nothing is recorded: the command may not
    /// have printed what it was taken for.
    Printed(Printed),
    /// A rendering of the lines that is not the file's text (lines the tool
    /// shortened): a `processed` view, which lets no change through.
    Processed(String),
    /// Lines as [`Lines`](ShownText::Lines), each with its trailing
    /// whitespace removed (Qwen Code's read_file): the file's lines when,
    /// trimmed the same way, they are these.
    Trimmed(String),
}

/// What a command printed, as the agent showed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    pub text: String,
    pub form: Form,
}

/// How an agent's shell tool shows what a command printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Every byte as printed.
    Exact,
    /// As printed, or printed on a terminal (each `\n` as `\r\n`).
    Terminal,
    /// With the whitespace at both ends of the output removed: every
    /// character between was shown.
    Trimmed,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    pub id: Option<String>,
    pub source: String,
}

/// How much of a file a read showed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    /// Every line of the file.
    Whole,
    /// The whole file was asked for, and only its first lines were shown
    /// (a size or token cap cut it).
    Start,
    /// A slice the agent asked for (an offset, a limit).
    Range,
    /// The last lines of the file (`tail`): they start where the disk's
    /// last lines do.
    Tail,
}

/// A file a shell command is about to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellWrite {
    pub path: PathBuf,
    /// It replaces the whole file (else it changes it in place).
    pub whole: bool,
    /// When `path` is a directory, the file written is the one of this
    /// name in it (`cp a.txt dir`).
    pub into: Option<String>,
    /// A symlink there is replaced, not written through (`ln -sf`).
    pub link: Option<crate::shell::Link>,
    /// What an in-place edit does, when fsview can make it of another
    /// text (`sed -i 's/OLD/NEW/'`, a sed or perl script of substitutions):
    /// as for [`AboutToReplace`](Event::AboutToReplace).
    pub edits: Option<Edits>,
}

/// A file a shell command writes, as the reader of its command line finds
/// it ([`crate::shell::writes`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnWrite {
    pub path: PathBuf,
    /// When `path` is a directory, the file written is the one of this
    /// name in it (`cp a.txt dir`).
    pub into: Option<String>,
    pub how: crate::shell::How,
    /// The file whose bytes it copies there (`cp SRC DEST`).
    pub from: Option<PathBuf>,
    /// It runs in the background: it may go on writing after the hook that
    /// follows the command.
    pub live: bool,
    /// A symlink there is replaced, not written through (`ln -sf`).
    pub link: Option<crate::shell::Link>,
}

/// A change the agent made, as its tool reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    pub path: PathBuf,
    /// What the agent now believes the file holds.
    pub text: String,
    /// What the file held before, as the tool saw it; `None` when the tool
    /// does not say.
    pub before: Option<String>,
    /// The agent wrote every byte (a whole-file write), so it knows all of
    /// the file whatever it saw before.
    pub whole: bool,
}

/// A subagent's start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentStart {
    /// Its type, as the agent names it (`general-purpose`, `fork`, ...).
    pub kind: Option<String>,
    /// It starts with a copy of its launcher's views.
    pub inherits: bool,
}

/// A patch of one file, as the agent's tool applies it: each chunk's old
/// lines, found in order (after its context line, if any), become its new
/// lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patched {
    /// The file the patch leaves.
    pub path: PathBuf,
    /// The file it was before, when the patch moved it.
    pub from: Option<PathBuf>,
    /// The whole new text, for a file the patch adds (or replaces whole);
    /// else the file's text is changed by `chunks`.
    pub text: Option<String>,
    pub chunks: Vec<crate::patch::Chunk>,
    /// The tool reported the patch applied; `false`: it is about to be,
    /// and no report will follow (a patch run from the shell), so the view
    /// holds what the patch will make of the file, fresh only once the disk
    /// holds exactly that.
    pub applied: bool,
}

/// A targeted change as the agent's tool reports it: what it replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edited {
    pub path: PathBuf,
    pub change: Change,
}

/// What a targeted change replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// `old` became `new`: its one occurrence (the tool refuses an `old`
    /// that is not unique), or every one with `all`.
    Replace { old: String, new: String, all: bool },
    /// A unified diff of the file (`@@ -A,B +C,D @@` hunks), as the tool
    /// applied it.
    Patch(String),
    /// Several replacements made at once (pi's edit): each `old`, found
    /// once in the text and overlapping no other, becomes its `new`.
    Each(Vec<(String, String)>),
}

/// Why a conversation starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// A new conversation.
    Startup,
    /// An earlier conversation carries on: it already holds what its start
    /// was given.
    Resume,
    /// The conversation was cleared: it has seen nothing any more.
    Clear,
    /// The conversation was compacted into a summary.
    Compact,
}

/// fsview's answer to an event, before an adapter puts it in the agent's
/// protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// No opinion: the agent goes on as if there were no hook.
    Nothing,
    /// Let the change through, with the gate's message (only when asked to
    /// approve changes, see [`Options::allow`](crate::core::Options)).
    Allow(String),
    /// Refuse the change, with the gate's message for the model.
    Deny(String),
    /// Text for the model's context.
    Context(String),
    /// Answer a read with a short notice instead of the text it showed:
    /// the conversation still holds exactly that text, whole (only for an
    /// agent whose [`Agent::shortens_reads`](crate::Agent::shortens_reads)),
    /// with context to add, if any.
    Short(Short, Option<String>),
}

/// A read answered short.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Short {
    /// The file, as the tool named it.
    pub path: PathBuf,
    /// Its lines (all of which the model holds).
    pub lines: u64,
    /// The notice for the model, in place of the text.
    pub notice: String,
}

/// Which common event a payload is, known before it is fully understood:
/// a payload that fails half-way is still failed open or closed by what it
/// was (the gate fails closed, everything else open).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Shown,
    AboutToChange,
    Changed,
    SessionStart,
    Prompt,
    /// An event or tool fsview does not answer.
    Other,
}

impl Event {
    /// Several events of one payload as one: [`Event::Ignored`] for none.
    pub fn all(events: Vec<Event>) -> Event {
        match events.len() {
            0 => Event::Ignored,
            _ => Event::Each(events),
        }
    }

    /// The gate's question for a file a command writes by name (tests).
    #[cfg(test)]
    pub(crate) fn shell_write(path: &str, whole: bool) -> Event {
        Event::ShellWrite(ShellWrite {
            path: path.into(),
            whole,
            into: None,
            link: None,
            edits: None,
        })
    }

    /// The gate's question for a file `sed -i 's/OLD/NEW/'` edits (tests).
    #[cfg(test)]
    pub(crate) fn shell_replace(path: &str, old: &str, new: &str) -> Event {
        Event::ShellWrite(ShellWrite {
            path: path.into(),
            whole: false,
            into: None,
            link: None,
            edits: Some(Edits::Replace(vec![Replace {
                old: old.into(),
                new: new.into(),
                all: false,
            }])),
        })
    }

    /// Only the gate's questions of several events (tests).
    #[cfg(test)]
    pub(crate) fn gates(self) -> Event {
        match self {
            Event::Each(events) => Event::all(events.into_iter().filter(Event::is_gate).collect()),
            e => e,
        }
    }

    /// A question for the gate.
    pub fn is_gate(&self) -> bool {
        matches!(
            self,
            Event::AboutToChange { .. }
                | Event::AboutToReplace { .. }
                | Event::AboutToEditCells(_)
                | Event::ShellWrite(_)
                | Event::GitDiscard(_)
        )
    }

    pub fn stage(&self) -> Stage {
        match self {
            Event::Shown(_) | Event::InstructionsFor(_) => Stage::Shown,
            Event::AboutToChange { .. }
            | Event::AboutToReplace { .. }
            | Event::AboutToEditCells(_)
            | Event::ShellWrite(_)
            | Event::GitDiscard(_) => Stage::AboutToChange,
            Event::Changed(_)
            | Event::Patched(Patched { applied: true, .. })
            | Event::Removed(_)
            | Event::ShellWrote(_)
            | Event::ShellWritten(..)
            | Event::GitDiscarded => Stage::Changed,
            Event::Patched(_) => Stage::AboutToChange,
            Event::Each(events) => events.first().map_or(Stage::Other, Event::stage),
            Event::Edited(_) => Stage::Changed,
            Event::AfterTool(e) => match e.stage() {
                Stage::Other => Stage::Shown,
                s => s,
            },
            Event::SessionStart(_) => Stage::SessionStart,
            Event::Prompt => Stage::Prompt,
            // Fails open: a view kept too long is what it was before.
            Event::Compacted | Event::CompactedKeeping(_) | Event::Pruned(_) | Event::Rewound => {
                Stage::Shown
            }
            // Answered where a tool's result is (after the launch tool).
            Event::AgentDone | Event::Delegated | Event::ToolDone => Stage::Shown,
            // Bookkeeping: a failure only costs a subagent its copied
            // views (it then starts empty), so these fail open.
            Event::AgentStart(_)
            | Event::Launching { .. }
            | Event::Delegating { .. }
            | Event::ShellWriting(_)
            | Event::Ignored => Stage::Other,
        }
    }
}
