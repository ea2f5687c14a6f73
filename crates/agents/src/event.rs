//! The few things an agent's hooks tell fsview, whatever the agent.
//!
//! Every adapter turns its agent's payloads into one of these events, and
//! the [`core`](crate::core) turns each event into store operations. An
//! event says what the agent's own tool reported, never what fsview guesses:
//! what was shown (the text, and where it sits in the file), what the agent
//! now believes a file holds after changing it, what it is about to change.

use std::path::PathBuf;

/// Who sent an event, and where it works.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Who {
    /// The conversation (the agent's session id): the fsview session.
    pub session: String,
    /// The agent inside the conversation that acted: `None` for the main
    /// thread, a subagent's id otherwise. Carried, not yet used: every
    /// agent of a conversation shares its views for now (see the subagents
    /// issue); an adapter fills it where its payloads say.
    pub agent: Option<String>,
    /// The agent's working directory: what relative paths are relative to,
    /// and where the default session file is looked for.
    pub cwd: PathBuf,
}

/// One thing that happened, in fsview's terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The agent was shown (some of) a file.
    Shown(Shown),
    /// The agent is about to change a file: `whole` replaces all of it (a
    /// write), otherwise it is a targeted edit.
    AboutToChange { path: PathBuf, whole: bool },
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
    /// The agent changed a file with a targeted edit its tool reports as
    /// what it replaced, not as the file's new text.
    Edited(Edited),
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
    /// Lines as [`Lines`](ShownText::Lines), each with its trailing
    /// whitespace removed (Qwen Code's read_file): the file's lines when,
    /// trimmed the same way, they are these.
    Trimmed(String),
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
    pub fn stage(&self) -> Stage {
        match self {
            Event::Shown(_) | Event::InstructionsFor(_) => Stage::Shown,
            Event::AboutToChange { .. } => Stage::AboutToChange,
            Event::Changed(_) | Event::Edited(_) => Stage::Changed,
            Event::SessionStart(_) => Stage::SessionStart,
            Event::Prompt => Stage::Prompt,
            Event::Ignored => Stage::Other,
        }
    }
}
