//! fsview inside coding agents: each agent's hook payloads as a few common
//! events, and fsview's answers in the agent's own protocol.
//!
//! An agent that runs command hooks hands each one a JSON payload and reads
//! its answer. Every agent says the same few things in its own words, so
//! each agent has a module that only translates ([`claude`], [`gemini`],
//! [`codex`]; shared readers in [`shell`] and [`patch`]): it turns
//! a payload into an [`Event`](event::Event) (shown, about to change,
//! changed, session start, prompt) and fsview's [`Answer`](event::Answer)
//! back into the agent's reply. The [`core`] turns events into store
//! operations (a view held to the text the tool showed, the gate, reminders,
//! context); the store and the gate never learn an agent's name. Wiring the
//! hooks into an agent's settings is [`install`], with one installer per
//! agent beside its module.
//!
//! A payload that cannot be answered (not JSON, a field missing, an unknown
//! event) or a failure (the session file, I/O) fails open or closed: closed
//! by default for the gate (a change fsview cannot check is refused), open
//! for the rest (exit 0, no answer). A payload that cannot be read at all
//! is the gate's when the hook was wired to the agent's event before a
//! change ([`Options::gate`](core::Options)). Either way one line says what
//! went wrong.

pub mod charset;
pub mod claude;
pub mod cline;
pub mod codex;
pub mod copilot;
pub mod core;
pub mod discard;
pub mod droid;
pub mod edited;
pub mod event;
pub mod gemini;
pub mod hold;
pub mod install;
pub mod mention;
pub mod opencode;
pub mod patch;
pub mod payload;
pub mod pi;
pub mod qwen;
pub mod shell;
pub mod transcript;

use event::{Answer, Event, Stage, Who};

/// Why a payload could not be answered: one line, for stderr and for a
/// deny's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem(pub String);

impl Problem {
    pub fn new(msg: impl Into<String>) -> Problem {
        Problem(msg.into())
    }
}

impl From<fsview_store::Error> for Problem {
    fn from(e: fsview_store::Error) -> Self {
        Problem(e.message().to_string())
    }
}

/// A payload, understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub who: Who,
    pub event: Event,
}

/// What a hook process does in the end: a line on stdout (the agent's
/// answer), a line on stderr, an exit code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub stdout: Option<String>,
    /// One line, without the tool's name.
    pub stderr: Option<String>,
    pub code: u8,
}

impl Reply {
    pub fn nothing() -> Reply {
        Reply {
            stdout: None,
            stderr: None,
            code: 0,
        }
    }

    /// An answer on stdout, exit 0.
    pub fn json(v: &serde_json::Value) -> Reply {
        Reply {
            stdout: Some(v.to_string()),
            stderr: None,
            code: 0,
        }
    }

    /// No answer; `msg` on stderr, exit `code`.
    pub fn error(msg: &str, code: u8) -> Reply {
        Reply {
            stdout: None,
            stderr: Some(msg.to_string()),
            code,
        }
    }

    /// A change the gate could not check, refused all the same: `deny`
    /// (the agent's refusal, built from the reason) on stdout, so the model
    /// sees why, and `msg` on stderr, exit 0.
    pub fn unchecked(msg: &str, deny: impl FnOnce(&str) -> serde_json::Value) -> Reply {
        let reason = format!("fsview-hook could not check this change, so it is denied: {msg}");
        Reply {
            stdout: Some(deny(&reason).to_string()),
            stderr: Some(msg.to_string()),
            code: 0,
        }
    }
}

/// `text` as context for an agent (`label`, as the model reads it) that
/// turns `<` and `>` of a hook's context into `&lt;` and `&gt;` and leaves
/// `&` as it is (gemini-cli, Qwen Code; to keep their `<hook_context>`
/// closed): a text with either gets its `&` escaped here and a line in
/// front saying so. What reaches the model is then the exact HTML escape
/// of the text, read back without a doubt (a `&lt;` of the file's own
/// arrives as `&amp;lt;`). A text without either is sent as it is.
pub(crate) fn html_escaped(label: &str, text: String) -> String {
    if !text.contains(['<', '>']) {
        return text;
    }
    format!(
        "[fsview] {label} shows this context HTML-escaped: read &lt; as a less-than sign, &gt; as a greater-than sign, &amp; as an ampersand.\n{}",
        text.replace('&', "&amp;")
    )
}

/// One agent's protocol.
pub trait Agent {
    /// Turn one payload into an event. A payload that cannot be understood
    /// says as far as it got ([`Stage`]), so it fails open or closed by
    /// what it was.
    fn parse(&self, payload: &[u8]) -> Result<Parsed, (Stage, Problem)>;

    /// fsview's answer, in the agent's protocol.
    fn reply(&self, stage: Stage, answer: Answer) -> Reply;

    /// A payload that could not be answered: open (the agent goes on as if
    /// there were no hook) or closed (the change is refused, or the agent's
    /// blocking error), with `msg` on stderr either way.
    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply;

    /// Whether the agent loads instruction files of this name itself (so a
    /// session start must not send them again).
    fn loads_itself(&self, _file_name: &str) -> bool {
        false
    }

    /// Whether a resumed conversation still holds the context its start was
    /// given (then a start on resume sends nothing again).
    fn resume_keeps_start(&self) -> bool {
        true
    }

    /// Whether a hook may answer the agent's read with other text than the
    /// file's (then an unchanged re-read can be answered short:
    /// [`Answer::Short`](event::Answer::Short)).
    fn shortens_reads(&self) -> bool {
        false
    }

    /// What a short answer's notice says to pass to read the file again
    /// for real: the agent's read tool's range parameters.
    fn reread_with(&self) -> &'static str {
        "an offset or limit"
    }

    /// Whether fsview learns when this agent's conversation drops what it
    /// was shown (a compaction, a rewind): only then are short answers to
    /// re-reads on by default ([`core::Options::short_reads`]).
    fn tells_drops(&self) -> bool {
        false
    }

    /// Whether the agent's subagents report their calls in its name (the
    /// conversation's id, no agent of their own: gemini-cli's
    /// `invoke_agent`), so that what comes between
    /// [`Event::Delegating`](event::Event::Delegating) and
    /// [`Event::Delegated`](event::Event::Delegated) is the subagent's.
    fn delegates(&self) -> bool {
        false
    }

    /// How the agent writes its own transcript of a conversation, when
    /// fsview reads it ([`transcript`]): what only the transcript records
    /// (files attached to a prompt, compactions, rewinds).
    fn transcript(&self) -> Option<&'static dyn transcript::Format> {
        None
    }

    /// Why the agent would not give `text`, sent as context at `stage`, to
    /// the model exactly as it is (it escapes or expands parts of it);
    /// `None` when it would. What it would alter is left out, with this
    /// reason, rather than shown to the model altered.
    fn alters(&self, _stage: Stage, _text: &str) -> Option<&'static str> {
        None
    }

    /// The longest context the agent hands the model whole in one answer,
    /// as [`Agent::context_len`] counts it, and why; `None` when it has no
    /// such limit. Longer context reaches the model as something else
    /// (Claude Code 2.1.332 saves it to a file and shows a 2 KB preview),
    /// so fsview never sends it: what would not fit is left out, with the
    /// reason, and not taken as told.
    fn context_limit(&self) -> Option<(usize, &'static str)> {
        None
    }

    /// Whether the agent's refusals reach the model as context, under
    /// [`Agent::context_limit`] too (Cline: a refusal is `context` with an
    /// input its tools reject); else a refusal's reason is not cut.
    fn refuses_in_context(&self) -> bool {
        false
    }

    /// The length of context as the agent measures it against
    /// [`Agent::context_limit`]: by default UTF-16 code units (the length
    /// of a JavaScript string).
    fn context_len(&self, text: &str) -> usize {
        text.encode_utf16().count()
    }

    /// Whether context answered to the gate's event, with no refusal
    /// ([`Answer::Context`](event::Answer::Context) at
    /// [`Stage::AboutToChange`]), reaches the model with the change's
    /// result: only then is an edit merged with a change the file had
    /// since the view ([`Event::AboutToReplace`](event::Event::AboutToReplace)),
    /// since the model must be told that change.
    fn tells_before_change(&self) -> bool {
        false
    }

    /// Whether what changed meanwhile is told with every tool's result
    /// (context after a tool, as fsview's reminder): then an edit is merged
    /// with a change the file had since the view by letting it through and
    /// recording what the model believes, the view with its edit, never
    /// fresh, so that the reminder after its result tells exactly the other
    /// change ([`Event::AboutToReplace`](event::Event::AboutToReplace)).
    /// The agent's record of the edit must be its last view with the edit
    /// applied ([`Event::Edited`](event::Event::Edited)).
    fn tells_after_change(&self) -> bool {
        false
    }

    /// Whether the agent's read shows a file's lines numbered (Claude
    /// Code's `N\t`, opencode's `N: `, Cline's `N | `): then a whole text
    /// fsview hands the model (a rewrite told, a file given back) is
    /// numbered too; else it is the text as the agent's read shows it, with
    /// no numbers (fewer tokens, and what the model knows a file as).
    fn numbers_reads(&self) -> bool {
        true
    }

    /// Whether the agent's read shows a file's `\r\n` line ends as `\n`,
    /// and its edit tool matches and replaces text so (writing the file's
    /// line ends back): a change to such a file is told, and an edit merged,
    /// on the text as the agent sees it.
    fn shows_crlf_as_lf(&self) -> bool {
        false
    }

    /// Whether the agent keeps a staleness check of its own that refuses
    /// an edit of a file changed since its own last read, whatever the
    /// model was told (Droid 0.225.2: "has been modified externally since
    /// it was last read. Please use the Read tool"): then a refusal that
    /// carries the change to a targeted edit says to read the file again,
    /// and no edit is merged (the agent refuses it first).
    fn rereads_after_change(&self) -> bool {
        false
    }
}

/// Answer one payload: parse, handle, reply; a problem anywhere fails open
/// or closed as `closed` says (default: closed for the gate, open for the
/// rest).
pub fn run(agent: &dyn Agent, opts: &core::Options, closed: Option<bool>, payload: &[u8]) -> Reply {
    let (stage, result, said) = match agent.parse(payload) {
        Ok(p) => {
            let who = core::acting(agent, opts, &p.who, &p.event);
            // What only the transcript records comes first: the gate and
            // every record below see the conversation as it is now.
            let said = transcript::catch_up(agent, opts, &who);
            let result = core::handle(agent, opts, &who, &p.event);
            (p.event.stage(), result, said)
        }
        // Not even its event could be read: the hook's wiring says.
        Err((Stage::Other, problem)) if opts.gate => (Stage::AboutToChange, Err(problem), None),
        Err((stage, problem)) => (stage, Err(problem), None),
    };
    let mut reply = match result {
        Ok(answer) => agent.reply(stage, answer),
        Err(Problem(msg)) => {
            let closed = closed.unwrap_or(stage == Stage::AboutToChange);
            agent.fail(stage, &one_line(&msg), closed)
        }
    };
    if reply.stderr.is_none() {
        reply.stderr = said.map(|s| one_line(&s));
    }
    reply
}

fn one_line(s: &str) -> String {
    s.trim().replace(['\n', '\r'], " ")
}
