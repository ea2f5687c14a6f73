//! fsview-hook: the fsview tools as an agent's command hooks.
//!
//! An agent that runs command hooks hands each one a JSON payload on stdin
//! and reads its answer from stdout. `fsview-hook claude` speaks Claude
//! Code's protocol, as its hooks reference documents it
//! (<https://code.claude.com/docs/en/hooks>: "Common input fields",
//! "PreToolUse input", "PreToolUse decision control", "PostToolUse input",
//! "SessionStart", "UserPromptSubmit", "Exit code output"), so that one
//! session file follows the conversation:
//!
//! - every payload carries `session_id` (the fsview session id, unless
//!   `--sid` says otherwise), `cwd` (where the default session file is
//!   looked for, and what relative tool paths are relative to) and
//!   `hook_event_name`;
//! - `PreToolUse` on Edit, MultiEdit, NotebookEdit (targeted edits) and
//!   Write (a whole-file write) runs the edit gate on `tool_input.file_path`
//!   (`notebook_path` for NotebookEdit). A denied change is answered with
//!   `hookSpecificOutput.permissionDecision: "deny"` and the gate's message
//!   as `permissionDecisionReason`, which the documentation says is shown to
//!   Claude. A change the gate lets through gets no opinion (exit 0, no
//!   output), so Claude Code's own permission rules and prompts still
//!   apply: `"allow"` would skip them, and a file being fresh is no reason
//!   to approve an edit the user wanted to be asked about. `--allow` answers
//!   `"allow"` instead, for those who want exactly that;
//! - `PostToolUse` on Read records the view with the tool's `offset` and
//!   `limit`, re-reading the file as the tool showed it. Claude Code's Read
//!   "reads up to 2000 lines starting from the beginning of the file" when
//!   given no limit (its tool description), so a Read without offset and
//!   limit of a longer file is a `start` view, and one of a shorter file is
//!   `full`. A notebook (`.ipynb`) is read whole by that tool, so it is
//!   recorded whole. `PostToolUse` on Edit, MultiEdit, NotebookEdit and
//!   Write records what is now on disk as a `full` view of source `write`,
//!   as `fsview-read --written` does; for Write, whose `tool_input.content`
//!   is what the agent wrote, a disk that already holds something else (a
//!   formatter hook running beside this one) is recorded as what the agent
//!   wrote, so the gate and the next reminder report the difference;
//! - `SessionStart` returns ctx-build's text as
//!   `hookSpecificOutput.additionalContext` (after resetting the session
//!   when `source` is `clear`: the conversation forgot what it had read);
//! - `UserPromptSubmit` returns, as `additionalContext`, the files that
//!   changed since the agent saw them, with diffs, when there are any.
//!
//! A payload that cannot be answered (not JSON, a missing field, an unknown
//! event) or a failure (the session file, I/O) fails open or closed, as
//! `--on-error` says, by default closed for PreToolUse and open for the
//! rest. Open: exit 0 and no answer. Closed: for PreToolUse a deny naming
//! the problem; for any other event (or when the event is unknown) exit 2,
//! which Claude Code documents as a blocking error whose stderr it shows.
//! Either way, exactly one line on stderr says what went wrong.

use std::ffi::OsString;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use clap::{CommandFactory, Parser, ValueEnum};
use serde_json::{json, Value};

use fsview_store::changes::Limits;
use fsview_store::error::{plain_io, quote};
use fsview_store::events::Event as LogEvent;
use fsview_store::gate;
use fsview_store::paths::{self, Resolved};
use fsview_store::remind;
use fsview_store::show::{self, ReadError, Request};
use fsview_store::store::NewView;
use fsview_store::{Error, Kind, Source, Store};

use crate::common::{self, Out, Outcome, SessionArgs, Stop};

const TOOL: &str = "fsview-hook";

/// The most a recorded Read may show: far above what Claude Code's Read
/// returns (it refuses large outputs), so the re-read never cuts earlier
/// than the tool did.
const READ_CAP: u64 = 16 * 1024 * 1024;

/// Written files up to this size keep their text, for later diffs.
const WRITTEN_KEEP: u64 = 8 * 1024 * 1024;

const EXAMPLES: &str = "\
Examples:
  fsview-hook claude < payload.json      answer one Claude Code hook payload (JSON on stdin)
  fsview-hook claude --allow             also approve the edits the gate lets through
  fsview-hook claude --on-error closed   fail closed for every event (exit 2 outside PreToolUse)
  fsview-hook claude --sid main          one fsview session for every conversation
  fsview-hook claude < pre.json | jq -r .hookSpecificOutput.permissionDecision
                                         deny, or nothing when the gate lets it through

Wire it in .claude/settings.json: see \"Claude Code hooks\" in the README.";

/// The agents whose hook protocol fsview-hook speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Agent {
    /// Claude Code's command hooks (settings.json "hooks")
    Claude,
}

/// What to do with a payload that cannot be answered, or a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnError {
    /// Exit 0 with no answer: the agent goes on as if there were no hook
    Open,
    /// PreToolUse: deny, naming the problem; other events: exit 2 (a
    /// blocking error)
    Closed,
}

/// Answer one agent hook payload (JSON on stdin) with the fsview tools.
///
/// For Claude Code: PreToolUse on Edit, MultiEdit, NotebookEdit and Write is
/// gated as fsview-check-edit gates it (Write as a whole-file write): a
/// denied change gets permissionDecision "deny" with the gate's message as
/// the reason Claude sees; a change the gate lets through gets no opinion
/// (Claude Code's permission rules still apply), or "allow" with --allow.
/// PostToolUse on Read records the view with the tool's offset and limit (no
/// limit means Claude Code's 2000 lines: a longer file is a `start` view);
/// on Edit, MultiEdit, NotebookEdit and Write it records the written file as
/// a `full` view of source `write`. SessionStart returns ctx-build's text as
/// additionalContext (resetting the session first when its source is
/// `clear`); UserPromptSubmit returns the files changed since the agent saw
/// them, with diffs, when there are any. Other tools and events get no
/// answer.
///
/// The payload's session_id is the fsview session (FSVIEW_SID is not read:
/// each conversation is its own session unless --sid says otherwise); its
/// cwd is where the default session file is looked for and what relative
/// paths are relative to. A payload that cannot be answered, or a failure,
/// fails open or closed as --on-error says (default: closed for PreToolUse,
/// open for the rest), with one line on stderr either way.
#[derive(Parser, Debug)]
#[command(name = TOOL, version, after_help = EXAMPLES)]
pub struct Args {
    /// Whose hook protocol to speak
    #[arg(value_enum, value_name = "AGENT")]
    pub agent: Agent,

    /// The session file [default: fsview/session.db in the git directory of
    /// the payload's cwd, else $XDG_STATE_HOME/fsview/session.db]
    #[arg(long, env = "FSVIEW_SESSION", value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// The fsview session to use instead of the payload's session_id
    #[arg(long, value_name = "ID")]
    pub sid: Option<String>,

    /// Fail open or closed on a payload that cannot be answered or a
    /// failure [default: closed for PreToolUse, open for the rest]
    #[arg(long, value_enum, value_name = "MODE")]
    pub on_error: Option<OnError>,

    /// Answer permissionDecision "allow" when the gate lets a change through
    /// (skipping Claude Code's permission prompt), instead of no opinion
    #[arg(long)]
    pub allow: bool,

    /// Lines Claude Code's Read shows when given no limit
    #[arg(long, value_name = "N", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..))]
    pub read_lines: u64,

    /// UserPromptSubmit: most diff lines shown per file
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub diff_lines: usize,

    /// UserPromptSubmit: most diff lines shown in all
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub total_diff_lines: usize,
}

pub fn command() -> clap::Command {
    Args::command()
}

pub fn main() -> ExitCode {
    let args: Args = common::parse(command());
    common::finish(TOOL, run(&args))
}

/// The hook events fsview-hook answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    PreToolUse,
    PostToolUse,
    SessionStart,
    UserPromptSubmit,
}

/// Why a payload could not be answered: one line, for stderr and for a
/// deny's reason.
#[derive(Debug)]
struct Problem(String);

impl From<Error> for Problem {
    fn from(e: Error) -> Self {
        Problem(e.message().to_string())
    }
}

fn problem(msg: impl Into<String>) -> Problem {
    Problem(msg.into())
}

fn run(args: &Args) -> Result<Outcome, Stop> {
    let mut out = Out::new(TOOL, false);
    let mut event = None;
    match answer(args, &mut event) {
        Ok(Some(v)) => {
            out.json(&v)?;
            out.flush()?;
            Ok(Outcome::Ok)
        }
        Ok(None) => Ok(Outcome::Ok),
        Err(Problem(msg)) => fail(args, event, &one_line(&msg), &mut out),
    }
}

/// Fail open or closed: the one place a problem becomes an answer.
fn fail(args: &Args, event: Option<Event>, msg: &str, out: &mut Out) -> Result<Outcome, Stop> {
    let closed = match args.on_error {
        Some(mode) => mode == OnError::Closed,
        None => event == Some(Event::PreToolUse),
    };
    if !closed {
        out.error(msg);
        return Ok(Outcome::Ok);
    }
    if event == Some(Event::PreToolUse) {
        out.json(&decision(
            "deny",
            &format!("fsview-hook could not check this change, so it is denied: {msg}"),
        ))?;
        out.flush()?;
        out.error(msg);
        return Ok(Outcome::Ok);
    }
    // Exit 2: Claude Code's blocking error, with our one line as its message.
    Err(Stop::Error(Error::new(msg)))
}

fn one_line(s: &str) -> String {
    s.trim().replace(['\n', '\r'], " ")
}

/// Read the payload and answer it: `Some` JSON for stdout, `None` for no
/// opinion. `event` is set as soon as the payload names a known one.
fn answer(args: &Args, event: &mut Option<Event>) -> Result<Option<Value>, Problem> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut input)
        .map_err(|e| {
            problem(format!(
                "cannot read the hook payload from standard input: {}",
                plain_io(&e)
            ))
        })?;
    let payload: Value = serde_json::from_slice(&input).map_err(|e| {
        problem(format!(
            "the hook payload is not JSON ({e}); fsview-hook claude reads one Claude Code hook payload on stdin"
        ))
    })?;
    if !payload.is_object() {
        return Err(problem(
            "the hook payload is not a JSON object; fsview-hook claude reads one Claude Code hook payload on stdin",
        ));
    }
    let name = payload
        .get("hook_event_name")
        .and_then(Value::as_str)
        .ok_or_else(|| problem("the hook payload has no hook_event_name string"))?;
    let ev = match name {
        "PreToolUse" => Event::PreToolUse,
        "PostToolUse" => Event::PostToolUse,
        "SessionStart" => Event::SessionStart,
        "UserPromptSubmit" => Event::UserPromptSubmit,
        other => {
            return Err(problem(format!(
                "hook event {other:?} is not one fsview-hook answers; wire it to PreToolUse, PostToolUse, SessionStart and UserPromptSubmit only"
            )))
        }
    };
    *event = Some(ev);
    let ctx = Ctx::new(args, &payload, name)?;
    match ev {
        Event::PreToolUse => pre_tool_use(args, &ctx, &payload),
        Event::PostToolUse => post_tool_use(args, &ctx, &payload).map(|()| None),
        Event::SessionStart => session_start(&ctx, &payload),
        Event::UserPromptSubmit => user_prompt_submit(args, &ctx),
    }
}

/// What every event needs: the session and where the agent works.
struct Ctx {
    session: SessionArgs,
    cwd: PathBuf,
}

impl Ctx {
    fn new(args: &Args, payload: &Value, event: &str) -> Result<Ctx, Problem> {
        let sid = match &args.sid {
            Some(s) => s.clone(),
            None => payload
                .get("session_id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| {
                    problem(format!(
                        "the {event} payload has no session_id string; pass --sid ID to name the session"
                    ))
                })?
                .to_string(),
        };
        let cwd = payload
            .get("cwd")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| problem(format!("the {event} payload has no cwd string")))?;
        // A relative --session is relative to where the hook runs; the
        // default one is found from the agent's working directory. The
        // hook's own directory is asked for only when a path needs it.
        let absolute = |p: &Path| -> Result<PathBuf, Problem> {
            if p.is_absolute() {
                Ok(p.to_path_buf())
            } else {
                Ok(common::current_dir()?.join(p))
            }
        };
        let session = args.session.as_deref().map(absolute).transpose()?;
        let cwd = absolute(Path::new(cwd))?;
        Ok(Ctx {
            session: SessionArgs {
                session,
                sid,
                json: false,
                quiet: true,
            },
            cwd,
        })
    }

    fn sid(&self) -> &str {
        &self.session.sid
    }
}

/// A PreToolUse answer.
fn decision(verdict: &str, reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": verdict,
            "permissionDecisionReason": reason,
        }
    })
}

/// Context for the conversation, as SessionStart and UserPromptSubmit add it.
fn additional_context(event: &str, text: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": text,
        }
    })
}

fn tool_name(payload: &Value) -> Result<&str, Problem> {
    payload
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| problem("the payload has no tool_name string"))
}

fn tool_input<'a>(payload: &'a Value, tool: &str) -> Result<&'a Value, Problem> {
    payload
        .get("tool_input")
        .filter(|v| v.is_object())
        .ok_or_else(|| problem(format!("the {tool} payload has no tool_input object")))
}

/// The file a tool works on: `notebook_path` for NotebookEdit, else
/// `file_path`.
fn tool_path(tool: &str, input: &Value) -> Result<PathBuf, Problem> {
    let key = if tool == "NotebookEdit" {
        "notebook_path"
    } else {
        "file_path"
    };
    input
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| problem(format!("the {tool} payload has no tool_input.{key} string")))
}

/// An optional line number or count: a JSON number, or digits in a string
/// (Claude Code coerces those too).
fn count(input: &Value, key: &str) -> Result<Option<u64>, Problem> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(Value::String(s)) if s.parse::<u64>().is_ok() => Ok(s.parse().ok()),
        Some(other) => Err(problem(format!(
            "tool_input.{key} is {other}, not a line number"
        ))),
    }
}

fn pre_tool_use(args: &Args, ctx: &Ctx, payload: &Value) -> Result<Option<Value>, Problem> {
    let tool = tool_name(payload)?;
    let write = match tool {
        "Write" => true,
        "Edit" | "MultiEdit" | "NotebookEdit" => false,
        _ => return Ok(None),
    };
    let path = tool_path(tool, tool_input(payload, tool)?)?;
    let store = ctx.session.open_existing(&ctx.cwd)?;
    let d = gate::decide(store.as_ref(), ctx.sid(), &ctx.cwd, &path, write)?;
    if let Some(store) = &store {
        // As fsview-check-edit logs its checks: a log that cannot be
        // written changes no verdict.
        let detail = if write { "write" } else { "edit" };
        let _ = store.log(
            ctx.sid(),
            &[LogEvent::new(TOOL, "check")
                .path(&d.canonical)
                .verdict(d.verdict.as_str())
                .detail(Some(detail))],
        );
    }
    Ok(match (d.verdict.allowed(), args.allow) {
        (true, true) => Some(decision("allow", &d.message)),
        (true, false) => None,
        (false, _) => Some(decision("deny", &d.message)),
    })
}

fn post_tool_use(args: &Args, ctx: &Ctx, payload: &Value) -> Result<(), Problem> {
    let tool = tool_name(payload)?;
    if !matches!(
        tool,
        "Read" | "Edit" | "MultiEdit" | "NotebookEdit" | "Write"
    ) {
        return Ok(());
    }
    let input = tool_input(payload, tool)?;
    let path = tool_path(tool, input)?;
    let store = ctx.session.open(&ctx.cwd)?;
    match tool {
        "Read" => record_read(args, &store, ctx, &path, input),
        "Write" => {
            let content = match input.get("content") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.as_str()),
                Some(_) => return Err(problem("tool_input.content of Write is not a string")),
            };
            record_written(&store, ctx, &path, content)
        }
        _ => record_written(&store, ctx, &path, None),
    }
}

/// Resolve `path` to an existing regular file's canonical path.
fn existing(cwd: &Path, path: &Path) -> Result<PathBuf, Problem> {
    match paths::resolve(cwd, path)? {
        Resolved::Existing { canonical, .. } => Ok(canonical),
        Resolved::Missing { .. } => Err(problem(format!(
            "{}: no such file any more, so nothing was recorded",
            quote(path)
        ))),
    }
}

fn read_problem(path: &Path, e: ReadError) -> Problem {
    match e {
        ReadError::NotAFile(ft) => problem(format!(
            "{} is {}; only regular files are recorded",
            quote(path),
            ft.describe()
        )),
        ReadError::Binary => problem(format!(
            "{} looks binary (a NUL byte in its first 8 KiB); only text files are recorded",
            quote(path)
        )),
        ReadError::Io(e) => Error::io("read", path, &e).into(),
    }
}

/// Record what the Read tool showed: re-read the file as it did.
fn record_read(
    args: &Args,
    store: &Store,
    ctx: &Ctx,
    path: &Path,
    input: &Value,
) -> Result<(), Problem> {
    let offset = count(input, "offset")?;
    let limit = count(input, "limit")?;
    if limit == Some(0) {
        return Ok(()); // nothing was shown
    }
    let canonical = existing(&ctx.cwd, path)?;
    let asked = offset.is_some() || limit.is_some();
    let notebook = canonical.extension().is_some_and(|e| e == "ipynb");
    let req = if notebook {
        Request::whole(READ_CAP)
    } else {
        Request {
            // Claude Code counts lines from 1 and takes 0 for the first.
            offset: Some(offset.unwrap_or(1).max(1)),
            limit: Some(limit.unwrap_or(args.read_lines)),
            cap: READ_CAP,
        }
    };
    let shown = match show::read(&canonical, &req) {
        Ok(s) => s,
        // Images and PDFs: what the tool showed is no text to gate edits on.
        Err(ReadError::Binary) => return Ok(()),
        Err(e) => return Err(read_problem(path, e)),
    };
    // The whole file was asked for and its first lines were shown: a start
    // view, not a range the agent chose.
    let kind = if !asked && shown.kind == Kind::Range {
        Kind::Start
    } else {
        shown.kind
    };
    store.record_logged(
        ctx.sid(),
        &NewView {
            kind,
            ..NewView::of_shown(&canonical, &shown, Source::Read)
        },
        |_| {
            LogEvent::new(TOOL, "read")
                .path(&canonical)
                .detail(Some(kind.as_str()))
        },
    )?;
    Ok(())
}

/// Record the agent's own write as a full view of what it wrote. `agent`
/// is the text the agent wrote, when the tool says (Write).
fn record_written(
    store: &Store,
    ctx: &Ctx,
    path: &Path,
    agent: Option<&str>,
) -> Result<(), Problem> {
    let canonical = existing(&ctx.cwd, path)?;
    let mut written =
        show::read_written(&canonical, WRITTEN_KEEP).map_err(|e| read_problem(path, e))?;
    // Something may have rewritten the file between the agent's write and
    // this hook (a formatter hook running beside this one).
    let rewritten = agent.is_some_and(|t| written.hold_to(t.as_bytes(), WRITTEN_KEEP));
    store.record_logged(
        ctx.sid(),
        &NewView::of_written(&canonical, &written),
        |_| {
            let e = LogEvent::new(TOOL, "written")
                .path(&canonical)
                .detail(Some(Kind::Full.as_str()));
            if rewritten {
                e.verdict("rewritten")
            } else {
                e
            }
        },
    )?;
    Ok(())
}

fn session_start(ctx: &Ctx, payload: &Value) -> Result<Option<Value>, Problem> {
    let session = ctx.session.session_path(&ctx.cwd)?;
    let mut common: Vec<OsString> = vec![
        "--session".into(),
        session.into_os_string(),
        "--sid".into(),
        ctx.sid().into(),
    ];
    // /clear starts the conversation over: it has read nothing any more.
    if payload.get("source").and_then(Value::as_str) == Some("clear") {
        let mut a: Vec<OsString> = vec![
            "--reset".into(),
            "--hook".into(),
            "--reason".into(),
            "Claude Code SessionStart (clear)".into(),
        ];
        a.extend(common.iter().cloned());
        sibling("ctx-invalidate", &a, &ctx.cwd)?;
    }
    common.push("--quiet".into());
    let text = sibling("ctx-build", &common, &ctx.cwd)?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(additional_context("SessionStart", &text)))
}

/// Run another fsview binary installed next to this one, in `cwd`, and
/// return its stdout. ctx-build has no library entry point of its own: it
/// is run exactly as a shell would run it.
fn sibling(name: &str, args: &[OsString], cwd: &Path) -> Result<String, Problem> {
    let exe = std::env::current_exe()
        .map_err(|e| problem(format!("cannot find fsview-hook itself: {}", plain_io(&e))))?;
    let path = exe
        .parent()
        .map(|d| d.join(name))
        .unwrap_or_else(|| PathBuf::from(name));
    let out = Command::new(&path)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            problem(format!(
                "cannot run {}: {}; install fsview-hook next to the other fsview binaries",
                quote(&path),
                plain_io(&e)
            ))
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().next().unwrap_or("").trim();
        return Err(problem(if first.is_empty() {
            format!("{name} failed ({})", out.status)
        } else {
            first.to_string()
        }));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn user_prompt_submit(args: &Args, ctx: &Ctx) -> Result<Option<Value>, Problem> {
    let Some(store) = ctx.session.open_existing(&ctx.cwd)? else {
        return Ok(None);
    };
    let limits = Limits {
        per_file: args.diff_lines,
        total: args.total_diff_lines,
    };
    // Each change told once, a revert included: the store keeps what the
    // agent was told (fsview_store::remind).
    let text = remind::remind(&store, ctx.sid(), &ctx.cwd, limits, TOOL)?;
    Ok(text.map(|t| additional_context("UserPromptSubmit", &t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_command() {
        command().debug_assert();
    }

    #[test]
    fn line_endings_are_no_rewrite() {
        use fsview_store::show::same_text;
        assert!(same_text(b"a\r\nb\r\n", b"a\nb\n"));
        assert!(same_text(b"a\nb", b"a\nb"));
        assert!(!same_text(b"a\nb\n", b"a\nc\n"));
        assert!(!same_text(b"a\n", b"a\n\n"));
    }
}
