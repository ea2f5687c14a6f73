//! Claude Code's command hooks, as fsview's common events.
//!
//! Fields as Claude Code 2.1.332 sends them (fixtures captured from the real
//! binary: `tests/fixtures/hooks/claude-2.1.332/`). Every payload carries
//! `session_id` (the conversation: fsview's session), `cwd`,
//! `hook_event_name`; a subagent's also `agent_id` and `agent_type`.
//!
//! - `PreToolUse` of Edit, MultiEdit (older versions), NotebookEdit: a
//!   targeted edit of `tool_input.file_path` (`notebook_path`); of Write: a
//!   whole-file write. A refusal is `hookSpecificOutput.permissionDecision:
//!   "deny"` with the gate's message, which the model receives as the tool's
//!   error ("PreToolUse:Edit hook error: ..."). A change the gate lets
//!   through gets no opinion, so Claude Code's own permission rules still
//!   apply (or `"allow"` when asked to approve).
//! - `PostToolUse` of Read: `tool_response.file` says what was shown:
//!   `content` (the lines, `\r\n` as `\n`, no byte-order mark, the last
//!   line's newline left out of a slice), `startLine`, `numLines` (which
//!   counts the empty "line" after a final newline: a 3-line file reads as
//!   4 of 4), `totalLines`, and `truncatedByTokenCap` when a whole-file read
//!   over the 25,000-token cap showed only a first page. A notebook read
//!   (`type: "notebook"`) shows its `cells`; images and PDFs show no text.
//!   Where a field is missing (another version), only what is certain is
//!   used: without `totalLines` a read is never taken as the whole file,
//!   and without `content` nothing is recorded.
//! - `PostToolUse` of Write: `tool_response.content` (else the input's) is
//!   the whole file as the agent wrote it; of Edit: `originalFile` with
//!   `structuredPatch` applied (else `oldString` replaced by `newString` as
//!   the tool does it); of NotebookEdit: `updated_file`, after
//!   `original_file`. A change held for review (`staged`) changed nothing.
//! - `SessionStart`: `source` is `startup`, `resume`, `clear` or `compact`.
//!   Claude Code itself sends the CLAUDE.md files, git status and the date,
//!   so fsview sends only instruction files of other names (`--also`);
//!   context arrives as a system message "SessionStart hook additional
//!   context: ...", and Claude Code escapes `<system-reminder>` tags in it,
//!   so fsview's context uses no markup.
//! - `UserPromptSubmit`: the reminder of files changed since they were seen,
//!   as `additionalContext` ("UserPromptSubmit hook additional context: ").
//! - `PostToolUse` of any tool (but a subagent's launch): what changed
//!   meanwhile, told at once as `additionalContext`, so the model knows
//!   before its next step. A whole re-read of the exact text the
//!   conversation still holds is answered short when asked (`--short-reads`):
//!   `updatedToolOutput` in Read's own output shape (`{type: "text", file:
//!   {filePath, content, numLines, startLine, totalLines}}`, which Claude
//!   Code checks), with the notice as the content (Claude Code numbers it
//!   as line 1).
//! - `InstructionsLoaded` with `load_reason` `nested_traversal` or
//!   `path_glob_match`: Claude Code attached the nested CLAUDE.md files and
//!   matching rules for `trigger_file_path`; fsview records them as views
//!   (`ctx-build --for`) and sends nothing.
//!
//! Subagents (the `Agent` tool, `Task` in older versions; background by
//! default) run inside the conversation: their hooks carry the parent's
//! `session_id` plus `agent_id` and `agent_type` (`general-purpose`,
//! `fork`, a custom type), which is all that makes their views their own
//! ([`Who::agent`]). Claude Code keeps one read state per agent: a
//! subagent starts empty, a `fork` with a copy of its launcher's (and a
//! subagent may launch one too), nothing flows back. So:
//! - `SubagentStart` (`agent_id`, `agent_type`, no prompt, no parent): the
//!   agent's views start, a copy of its launcher's for `fork`;
//! - `PreToolUse` of `Agent` with `tool_input.subagent_type` `fork`: the
//!   launcher says it launches one (the start does not say who did);
//! - `PostToolUse` of `Agent` whose `tool_response.status` is `completed`
//!   (a foreground agent, `agentId` its id): the moment to tell the
//!   launcher what changed meanwhile, as `additionalContext` ("PostToolUse
//!   hook additional context"). A background agent's launch
//!   (`async_launched`) changed nothing yet; when it finishes, the parent
//!   gets a `UserPromptSubmit` whose prompt is a `<task-notification>`,
//!   answered like any prompt.
//!
//! Subagents fire no SessionStart, UserPromptSubmit or Stop of their own.
//!
//! Every hook first catches up with the transcript
//! ([`crate::transcript::claude`]): files attached to a prompt
//! (`@path`) and re-attached after a compaction, what a compaction kept and
//! a rewind abandoned. `Stop` is wired for that alone, so a turn's
//! attachments are recorded at its end, while the disk still holds what
//! was shown.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::event::{
    AgentStart, Answer, Cell, Changed, Event, Extent, Replace, Shown, ShownText, Stage, Start, Who,
};
use crate::install::{hook_settings, ExcludeLine, Hook, Installer, Part, Run, Scope};
use crate::shell::{self, Output};
use crate::{payload, Agent, Parsed, Problem, Reply};

/// Claude Code.
pub struct Claude;

type Failed = (Stage, Problem);

fn problem(stage: Stage, msg: impl Into<String>) -> Failed {
    (stage, Problem::new(msg))
}

impl Agent for Claude {
    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload: Value = serde_json::from_slice(payload).map_err(|e| {
            problem(
                Stage::Other,
                format!("the hook payload is not JSON ({e}); fsview-hook claude reads one Claude Code hook payload on stdin"),
            )
        })?;
        if !payload.is_object() {
            return Err(problem(
                Stage::Other,
                "the hook payload is not a JSON object; fsview-hook claude reads one Claude Code hook payload on stdin",
            ));
        }
        let name = payload
            .get("hook_event_name")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                problem(
                    Stage::Other,
                    "the hook payload has no hook_event_name string",
                )
            })?;
        let stage = match name {
            "PreToolUse" => Stage::AboutToChange,
            "PostToolUse" => Stage::Shown,
            // A Bash command that failed (a non-zero exit) fires this, not
            // PostToolUse: what it wrote is recorded all the same.
            "PostToolUseFailure" => Stage::Changed,
            "SessionStart" => Stage::SessionStart,
            "UserPromptSubmit" => Stage::Prompt,
            "InstructionsLoaded" => Stage::Shown,
            "SubagentStart" => Stage::Other,
            // Only the transcript's catch-up: what the turn attached is
            // recorded while the disk still holds what was shown.
            "Stop" => Stage::Other,
            other => {
                return Err(problem(
                    Stage::Other,
                    format!("hook event {other:?} is not one fsview-hook answers; wire it to PreToolUse, PostToolUse, PostToolUseFailure, SessionStart, UserPromptSubmit, InstructionsLoaded, SubagentStart and Stop only"),
                ))
            }
        };
        let who = who(&payload, name).map_err(|p| (stage, p))?;
        let event = match stage {
            Stage::AboutToChange => pre_tool_use(&payload),
            Stage::Shown if name == "InstructionsLoaded" => Ok(instructions_loaded(&payload)),
            // After any tool but a subagent's launch (its return tells
            // what its agent changed, a background launch nothing yet):
            // what changed meanwhile is told there.
            Stage::Shown => post_tool_use(&payload).map(|e| {
                match tool_name(&payload).is_ok_and(is_agent_tool) {
                    true => e,
                    false => Event::AfterTool(Box::new(e)),
                }
            }),
            Stage::SessionStart => Ok(Event::SessionStart(
                match payload.get("source").and_then(Value::as_str) {
                    Some("resume") => Start::Resume,
                    Some("clear") => Start::Clear,
                    Some("compact") => Start::Compact,
                    _ => Start::Startup,
                },
            )),
            Stage::Changed => post_tool_use_failure(&payload),
            Stage::Other if name == "Stop" => Ok(Event::Ignored),
            Stage::Other => Ok(subagent_start(&payload)),
            _ => Ok(Event::Prompt),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event })
    }

    fn reply(&self, stage: Stage, answer: Answer) -> Reply {
        let out = match answer {
            Answer::Nothing => return Reply::nothing(),
            Answer::Allow(reason) => decision("allow", &reason),
            Answer::Deny(reason) => decision("deny", &reason),
            Answer::Short(short, context) => {
                let mut out = json!({
                    "hookSpecificOutput": {
                        "hookEventName": "PostToolUse",
                        // Read's own output shape, which Claude Code checks:
                        // the notice in place of the lines.
                        "updatedToolOutput": {
                            "type": "text",
                            "file": {
                                "filePath": short.path,
                                "content": short.notice,
                                "numLines": 1,
                                "startLine": 1,
                                "totalLines": short.lines,
                            }
                        },
                    }
                });
                if let Some(c) = context {
                    out["hookSpecificOutput"]["additionalContext"] = c.into();
                }
                out
            }
            Answer::Context(text) => json!({
                "hookSpecificOutput": {
                    "hookEventName": match stage {
                        Stage::SessionStart => "SessionStart",
                        // A change let through, with what the model must
                        // know with its result (a merged edit).
                        Stage::AboutToChange => "PreToolUse",
                        Stage::Shown | Stage::Changed => "PostToolUse",
                        _ => "UserPromptSubmit",
                    },
                    "additionalContext": text,
                }
            }),
        };
        Reply::json(&out)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        if !closed {
            return Reply::error(msg, 0);
        }
        if stage == Stage::AboutToChange {
            return Reply::unchecked(msg, |reason| decision("deny", reason));
        }
        // Exit 2: Claude Code's blocking error, with our one line as its
        // message.
        Reply::error(msg, 2)
    }

    fn loads_itself(&self, name: &str) -> bool {
        matches!(name, "CLAUDE.md" | "CLAUDE.local.md")
    }

    /// Its Read shows `\r\n` as `\n`, and its Edit matches `old_string`
    /// against that text, writing the file's line ends back.
    fn shows_crlf_as_lf(&self) -> bool {
        true
    }

    /// PostToolUse's `updatedToolOutput` replaces what Read gives the
    /// model (in Read's own output shape).
    /// PreToolUse's `additionalContext` with no decision reaches the model
    /// with the tool's result (2.1.332: `scripts/e2e-claude`
    /// merge-far-edit).
    fn tells_before_change(&self) -> bool {
        true
    }

    /// Hook context over 10,000 characters (its `additionalContext`, as a
    /// JavaScript string's length) is saved to a file and the model shown
    /// its first 2 KB (2.1.332: `scripts/e2e-claude long-reminder`). A
    /// refusal's reason is not cut (`long-change-before-edit`).
    fn context_limit(&self) -> Option<(usize, &'static str)> {
        Some((
            10_000,
            "Claude Code shows the model only the start of hook context over 10,000 characters",
        ))
    }

    fn shortens_reads(&self) -> bool {
        true
    }

    fn transcript(&self) -> Option<&'static dyn crate::transcript::Format> {
        Some(&crate::transcript::claude::CLAUDE_CODE)
    }

    /// Its compactions and rewinds are followed (SessionStart `compact`
    /// and `clear`, the transcript's compact boundaries and branches):
    /// unchanged re-reads are answered short by default.
    fn tells_drops(&self) -> bool {
        true
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

pub(crate) fn who(payload: &Value, event: &str) -> Result<Who, Problem> {
    let mut who = payload::who(payload, event, &payload::CLAUDE)?;
    // A subagent's payload names the conversation's transcript; its own is
    // beside it (as SubagentStop's agent_transcript_path says).
    if let (Some(agent), Some(main)) = (&who.agent, &who.transcript) {
        who.transcript = subagent_transcript(main, &who.session, agent);
    }
    Ok(who)
}

/// Where Claude Code 2.1.332 keeps subagent `agent`'s transcript of
/// conversation `session` whose transcript is `main`:
/// `DIR/SESSION/subagents/agent-AGENT.jsonl` beside `DIR/SESSION.jsonl`.
fn subagent_transcript(main: &Path, session: &str, agent: &str) -> Option<PathBuf> {
    if agent.contains('/') || session.contains('/') {
        return None;
    }
    Some(
        main.parent()?
            .join(session)
            .join("subagents")
            .join(format!("agent-{agent}.jsonl")),
    )
}

/// A subagent starts: a `fork` with a copy of its launcher's views, any
/// other type with none.
fn subagent_start(payload: &Value) -> Event {
    let kind = payload
        .get("agent_type")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
        .map(String::from);
    Event::AgentStart(AgentStart {
        inherits: kind.as_deref() == Some(FORK),
        kind,
    })
}

/// The subagent type that starts with a copy of its launcher's context.
const FORK: &str = "fork";

/// The subagent tool: `Agent`, `Task` in versions before it was renamed.
fn is_agent_tool(tool: &str) -> bool {
    matches!(tool, "Agent" | "Task")
}

/// Instruction files Claude Code loaded when the agent first worked on a
/// path (`nested_traversal`: a directory's CLAUDE.md; `path_glob_match`: a
/// rule whose `paths:` match): the ones for `trigger_file_path`. Those of
/// the session's start (`session_start`, `include`) are SessionStart's.
fn instructions_loaded(payload: &Value) -> Event {
    let reason = payload.get("load_reason").and_then(Value::as_str);
    let trigger = payload.get("trigger_file_path").and_then(Value::as_str);
    match (reason, trigger) {
        (Some("nested_traversal" | "path_glob_match"), Some(t)) if !t.is_empty() => {
            Event::InstructionsFor(PathBuf::from(t))
        }
        _ => Event::Ignored,
    }
}

fn tool_name(payload: &Value) -> Result<&str, Problem> {
    payload
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the payload has no tool_name string"))
}

fn tool_input<'a>(payload: &'a Value, tool: &str) -> Result<&'a Value, Problem> {
    payload
        .get("tool_input")
        .filter(|v| v.is_object())
        .ok_or_else(|| Problem::new(format!("the {tool} payload has no tool_input object")))
}

/// The file a tool works on: `notebook_path` for NotebookEdit, else
/// `file_path`, else `filepath`: Continue CLI (`cn`), which loads Claude
/// Code's settings and hooks, names it so for its Read and Write.
fn tool_path(tool: &str, input: &Value) -> Result<PathBuf, Problem> {
    if tool == "NotebookEdit" {
        return input_path(tool, input, "notebook_path");
    }
    match input.get("file_path") {
        None if input.get("filepath").is_some() => input_path(tool, input, "filepath"),
        _ => input_path(tool, input, "file_path"),
    }
}

/// The path in `tool_input.KEY` of a `tool` call.
pub(crate) fn input_path(tool: &str, input: &Value, key: &str) -> Result<PathBuf, Problem> {
    input
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Problem::new(format!("the {tool} payload has no tool_input.{key} string")))
}

/// An optional line number or count: a JSON number, or digits in a string
/// (Claude Code coerces those too).
pub(crate) fn count(v: &Value, key: &str) -> Result<Option<u64>, Problem> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(Value::String(s)) if s.parse::<u64>().is_ok() => Ok(s.parse().ok()),
        Some(other) => Err(Problem::new(format!("{key} is {other}, not a line number"))),
    }
}

fn pre_tool_use(payload: &Value) -> Result<Event, Problem> {
    let tool = tool_name(payload)?;
    if is_agent_tool(tool) {
        let kind = payload
            .get("tool_input")
            .and_then(|i| i.get("subagent_type"))
            .and_then(Value::as_str);
        return Ok(match kind {
            Some(FORK) => Event::Launching {
                kind: FORK.to_string(),
            },
            _ => Event::Ignored,
        });
    }
    let whole = match tool {
        "Write" => true,
        "Edit" | "MultiEdit" => false,
        "NotebookEdit" => {
            let path = tool_path(tool, tool_input(payload, tool)?)?;
            return Ok(Event::AboutToEditCells(path));
        }
        "Bash" => {
            let command = command(tool_input(payload, tool)?)?;
            return Ok(Event::all(shell::about_to_run(command, None)));
        }
        _ => return Ok(Event::Ignored),
    };
    let input = tool_input(payload, tool)?;
    let path = tool_path(tool, input)?;
    if !whole {
        // An Edit's replacement, or a MultiEdit's `edits`; one the input
        // does not say whole is only gated, never merged.
        if let Some(edits) = Replace::each(input, "old_string", "new_string", Some("replace_all")) {
            return Ok(Event::AboutToReplace { path, edits });
        }
    }
    Ok(Event::AboutToChange { path, whole })
}

/// The command line of a Bash call.
fn command(input: &Value) -> Result<&str, Problem> {
    input
        .get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the Bash payload has no tool_input.command string"))
}

/// What a Bash command showed: `stdout` as the model got it, its blank
/// lines at the start and whitespace at the end removed. Nothing is taken
/// from a command interrupted, run in the background, or whose output was
/// too long to be shown whole (saved to a file, `persistedOutputPath`, of
/// which the model got a preview the payload does not hold).
fn bash(input: &Value, response: &Value) -> Result<Event, Problem> {
    let command = command(input)?;
    // Still running: what it writes is being written.
    if response.get("backgroundTaskId").is_some() {
        return Ok(Event::all(shell::started(command, None)));
    }
    let stdout = string(response, "stdout")
        .filter(|o| o.len() < BASH_SHOWN_WHOLE)
        .filter(|_| {
            !["interrupted", "isImage"]
                .iter()
                .any(|k| response.get(*k).and_then(Value::as_bool) == Some(true))
                && response.get("persistedOutputPath").is_none()
                && response.get("backgroundTaskId").is_none()
        });
    Ok(Event::all(shell::ran(
        command,
        None,
        stdout.map(Output::Trimmed),
    )))
}

/// A Bash command that failed: the files it wrote (its output is not
/// given, and nothing is answered: the event has an output of its own).
fn post_tool_use_failure(payload: &Value) -> Result<Event, Problem> {
    let tool = tool_name(payload)?;
    if tool != "Bash" {
        return Ok(Event::Ignored);
    }
    let command = command(tool_input(payload, tool)?)?;
    Ok(Event::all(shell::ran(command, None, None)))
}

/// Claude Code shows a Bash output whole below this many characters, and
/// saves a longer one to a file, showing a preview.
const BASH_SHOWN_WHOLE: usize = 30_000;

fn post_tool_use(payload: &Value) -> Result<Event, Problem> {
    let tool = tool_name(payload)?;
    if is_agent_tool(tool) {
        // A foreground agent has finished (a background one's launch says
        // `async_launched`: nothing changed yet).
        let status = payload
            .get("tool_response")
            .and_then(|r| r.get("status"))
            .and_then(Value::as_str);
        return Ok(match status {
            Some("completed") => Event::AgentDone,
            _ => Event::Ignored,
        });
    }
    if !is_file_tool(tool) && tool != "Bash" {
        return Ok(Event::Ignored);
    }
    let input = tool_input(payload, tool)?;
    // Continue CLI's tools answer with a string, which says what a Read
    // showed: "Content of PATH:\n" and the whole file. A Write's input
    // holds what it wrote. An Edit's string ("Successfully edited ...")
    // does not say what the file now holds: nothing is recorded as seen,
    // and the change is told as any other is.
    if let Some(said) = payload.get("tool_response").and_then(Value::as_str) {
        return match tool {
            "Read" => continue_read(tool_path(tool, input)?, input, said),
            "Write" => write(tool_path(tool, input)?, input, &Value::Null),
            _ => Ok(Event::Ignored),
        };
    }
    let response = payload
        .get("tool_response")
        .filter(|v| v.is_object())
        .ok_or_else(|| {
            Problem::new(format!(
                "the {tool} payload has no tool_response object, so nothing was recorded"
            ))
        })?;
    tool_result(tool, input, response)
}

/// What a call of `tool` with `input` did, from its `response` (the
/// PostToolUse `tool_response`, or the `toolUseResult` the transcript
/// keeps, the same object): a read shown, a file changed, or nothing
/// fsview records.
pub(crate) fn tool_result(tool: &str, input: &Value, response: &Value) -> Result<Event, Problem> {
    // Held for the machine owner's review: the file is unchanged.
    if response.get("staged").and_then(Value::as_bool) == Some(true) {
        return Ok(Event::Ignored);
    }
    if tool == "Bash" {
        return bash(input, response);
    }
    let path = tool_path(tool, input)?;
    // The user changed the proposed edit before accepting it: the file
    // holds the user's text, which the model never saw (its earlier view
    // is no longer fresh, and the gate asks for a read).
    if response.get("userModified").and_then(Value::as_bool) == Some(true) {
        return Ok(Event::Ignored);
    }
    match tool {
        "Read" => read(path, input, response),
        "Write" => write(path, input, response),
        "NotebookEdit" => notebook_edit(path, response),
        "Edit" | "MultiEdit" => edit(tool, path, input, response),
        _ => Ok(Event::Ignored),
    }
}

/// The tools whose results show or change a file ([`tool_result`]).
pub(crate) fn is_file_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Read" | "Edit" | "MultiEdit" | "NotebookEdit" | "Write"
    )
}

pub(crate) fn read(path: PathBuf, input: &Value, response: &Value) -> Result<Event, Problem> {
    let file = response.get("file").filter(|f| f.is_object());
    match response.get("type").and_then(Value::as_str) {
        Some("text") => {}
        Some("notebook") => return notebook_read(path, file),
        // An image, a PDF, a stub for an unchanged file: no text to hold.
        Some(_) => return Ok(Event::Ignored),
        None => {
            return Err(Problem::new(
                "the Read response has no type, so nothing was recorded",
            ))
        }
    }
    let file = file.ok_or_else(|| {
        Problem::new("the Read response has no file object, so nothing was recorded")
    })?;
    let content = file
        .get("content")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Problem::new("the Read response has no file.content, so what was shown is unknown and nothing was recorded")
        })?;
    let asked_offset = count(input, "offset")?;
    let asked_limit = count(input, "limit")?;
    // Claude Code counts lines from 1 and takes 0 for the first.
    let start = count(file, "startLine")?
        .or(asked_offset)
        .unwrap_or(1)
        .max(1);
    let shown = match count(file, "numLines")? {
        Some(n) => n,
        None => content.split('\n').count() as u64,
    };
    let total = count(file, "totalLines")?;
    let capped = file.get("truncatedByTokenCap").and_then(Value::as_bool) == Some(true);
    let extent = if start == 1 && total == Some(shown) && !capped {
        Extent::Whole
    } else if capped || (asked_offset.is_none() && asked_limit.is_none()) {
        Extent::Start
    } else {
        Extent::Range
    };
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Lines(content.to_string()),
        offset: start,
        extent,
    }))
}

/// Continue CLI's Read: `Content of {filepath}:\n{content}`, the whole
/// file as UTF-8 (a file over its caps is an error, not a start), the path
/// as the model gave it, less a leading `./`.
fn continue_read(path: PathBuf, input: &Value, said: &str) -> Result<Event, Problem> {
    let given = string(input, "filepath").unwrap_or_default();
    let given = given.strip_prefix("./").unwrap_or(given);
    let content = said
        .strip_prefix("Content of ")
        .and_then(|rest| rest.strip_prefix(given))
        .and_then(|rest| rest.strip_prefix(":\n"))
        .ok_or_else(|| {
            Problem::new("the Read response is a string that does not start \"Content of PATH:\", so what was shown is unknown and nothing was recorded")
        })?;
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Lines(content.to_string()),
        offset: 1,
        extent: Extent::Whole,
    }))
}

fn notebook_read(path: PathBuf, file: Option<&Value>) -> Result<Event, Problem> {
    let cells = file
        .and_then(|f| f.get("cells"))
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Problem::new("the notebook Read response has no file.cells, so nothing was recorded")
        })?;
    let cells = cells
        .iter()
        .map(|c| {
            Some(Cell {
                id: c.get("cell_id").and_then(Value::as_str).map(String::from),
                source: c.get("source")?.as_str()?.to_string(),
            })
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            Problem::new("a notebook cell in the Read response has no source string, so nothing was recorded")
        })?;
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Cells(cells),
        offset: 1,
        extent: Extent::Whole,
    }))
}

fn string<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn write(path: PathBuf, input: &Value, response: &Value) -> Result<Event, Problem> {
    let text = string(response, "content")
        .or_else(|| string(input, "content"))
        .ok_or_else(|| {
            Problem::new("the Write payload has no content string, so nothing was recorded")
        })?;
    Ok(Event::Changed(Changed {
        path,
        text: text.to_string(),
        before: string(response, "originalFile").map(String::from),
        whole: true,
    }))
}

/// NotebookEdit changes cells by id: afterwards the model knows the
/// notebook's cells as the edit left them (`updated_file`), not its JSON
/// (outputs, metadata): a view of the cells, as a notebook read's.
fn notebook_edit(path: PathBuf, response: &Value) -> Result<Event, Problem> {
    if string(response, "error").is_some_and(|e| !e.is_empty()) {
        return Ok(Event::Ignored);
    }
    let text = string(response, "updated_file").ok_or_else(|| {
        Problem::new("the NotebookEdit response has no updated_file, so what the notebook now holds is unknown and nothing was recorded")
    })?;
    let cells = crate::hold::cells_of(text.as_bytes()).ok_or_else(|| {
        Problem::new(
            "the NotebookEdit response's updated_file is not a notebook, so nothing was recorded",
        )
    })?;
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Cells(cells),
        offset: 1,
        extent: Extent::Whole,
    }))
}

/// Edit (and the MultiEdit of older versions): the file before, with the
/// change the tool reports applied.
fn edit(tool: &str, path: PathBuf, input: &Value, response: &Value) -> Result<Event, Problem> {
    let unknown = || {
        Problem::new(format!(
            "the {tool} response does not say what the file now holds (no originalFile, or a patch that does not apply), so nothing was recorded"
        ))
    };
    let before = string(response, "originalFile")
        .or_else(|| string(response, "originalFileContents"))
        .ok_or_else(unknown)?;
    let patched = response
        .get("structuredPatch")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
        .and_then(|p| apply_patch(before, p));
    let text = match patched {
        Some(t) => t,
        None => replaced(before, input, response).ok_or_else(unknown)?,
    };
    Ok(Event::Changed(Changed {
        path,
        whole: before.is_empty(),
        text,
        before: Some(before.to_string()),
    }))
}

/// `before` with `oldString` replaced by `newString` (the response's, else
/// the input's; every occurrence with `replaceAll`), as the Edit tool does
/// it: an empty replacement of text that ends a line takes the newline too.
fn replaced(before: &str, input: &Value, response: &Value) -> Option<String> {
    let old = string(response, "oldString").or_else(|| string(input, "old_string"))?;
    let new = string(response, "newString").or_else(|| string(input, "new_string"))?;
    let all = response
        .get("replaceAll")
        .or_else(|| input.get("replace_all"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if old.is_empty() {
        return before.is_empty().then(|| new.to_string());
    }
    let with_newline = format!("{old}\n");
    let old = if new.is_empty() && !old.ends_with('\n') && before.contains(&with_newline) {
        with_newline.as_str()
    } else {
        old
    };
    if !before.contains(old) {
        return None;
    }
    Some(if all {
        before.replace(old, new)
    } else {
        before.replacen(old, new, 1)
    })
}

/// Apply a structured patch (jsdiff's hunks: `oldStart`, and `lines` each
/// starting with ' ', '-', '+', or '\' for "No newline at end of file") to
/// `before`; `None` when it does not apply exactly.
pub fn apply_patch(before: &str, hunks: &[Value]) -> Option<String> {
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let mut out = String::with_capacity(before.len());
    let mut pos = 0usize;
    for h in hunks {
        let start = (h.get("oldStart")?.as_u64()? as usize).saturating_sub(1);
        if start < pos || start > old.len() {
            return None;
        }
        old[pos..start].iter().for_each(|l| out.push_str(l));
        pos = start;
        let mut added_last = false;
        for l in h.get("lines")?.as_array()? {
            let l = l.as_str()?;
            let (tag, text) = l.split_at(l.char_indices().nth(1).map_or(l.len(), |(i, _)| i));
            match tag {
                " " | "-" => {
                    let o = old.get(pos)?;
                    if o.strip_suffix('\n').unwrap_or(o) != text {
                        return None;
                    }
                    if tag == " " {
                        out.push_str(o);
                    }
                    pos += 1;
                    added_last = false;
                }
                "+" => {
                    out.push_str(text);
                    out.push('\n');
                    added_last = true;
                }
                "\\" => {
                    if added_last {
                        out.pop();
                    }
                }
                _ => return None,
            }
        }
    }
    old[pos..].iter().for_each(|l| out.push_str(l));
    Some(out)
}

/// Claude Code's settings files and the hooks fsview wires into them.
pub struct ClaudeInstaller;

/// The wiring: the gate before every change (closed when the hook cannot
/// run), a record after every read and change, the session's start, each
/// prompt, the instruction files loaded along the way, and subagents: their
/// start, a fork's launch (before `Agent`) and a foreground agent's end
/// (after it). MultiEdit is gone from 2.1.332, and `Task` is the subagent
/// tool's older name; naming them is harmless and keeps older versions
/// gated.
pub const HOOKS: &[Hook] = &[
    Hook {
        event: "PreToolUse",
        matcher: Some("Edit|MultiEdit|Write|NotebookEdit|Bash|Agent|Task"),
        fail_closed: true,
    },
    Hook {
        event: "PostToolUse",
        // Every tool: after any call, what changed meanwhile is told.
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "PostToolUseFailure",
        // A Bash command that failed: what it wrote.
        matcher: Some("Bash"),
        fail_closed: false,
    },
    Hook {
        event: "SessionStart",
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "UserPromptSubmit",
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "InstructionsLoaded",
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "SubagentStart",
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "Stop",
        matcher: None,
        fail_closed: false,
    },
];

impl Installer for ClaudeInstaller {
    fn agent(&self) -> &'static str {
        "claude"
    }

    /// Claude Code 2.1.332 reads `.claude/settings.json` only in the
    /// directory it starts in, and `.claude/settings.local.json` there or
    /// at the top of the git work tree (observed: `scripts/e2e-claude
    /// installed-from-subdirectory`), so the local file goes to the top,
    /// where it holds for every directory of the project; the user's are
    /// in `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
        Ok(match scope {
            Scope::Project => cwd.join(".claude").join("settings.json"),
            Scope::Local => crate::install::work_top(cwd)
                .unwrap_or_else(|| cwd.to_path_buf())
                .join(".claude")
                .join("settings.local.json"),
            Scope::User => {
                let dir = std::env::var_os("CLAUDE_CONFIG_DIR")
                    .filter(|d| !d.is_empty())
                    .map(|d| cwd.join(d))
                    .or_else(|| {
                        std::env::var_os("HOME")
                            .filter(|h| !h.is_empty())
                            .map(|h| PathBuf::from(h).join(".claude"))
                    })
                    .ok_or_else(|| {
                        Problem::new("neither CLAUDE_CONFIG_DIR nor HOME is set, so the user's settings cannot be found; use --project or --local")
                    })?;
                dir.join("settings.json")
            }
        })
    }

    fn hooks(&self) -> &'static [Hook] {
        HOOKS
    }

    fn next_step(&self, scope: Scope, cwd: &Path) -> Option<String> {
        let top = crate::install::work_top(cwd)?;
        (scope == Scope::Project && top != cwd).then(|| {
            format!(
                "Claude Code reads .claude/settings.json only in the directory it starts in: start it in {} (the local settings, the default, hold for every directory of the project)",
                fsview_store::error::quote(cwd)
            )
        })
    }

    /// The local file is the user's own: kept out of git in this clone
    /// (`info/exclude`), as Claude Code expects it to be, unless the
    /// project's rules already ignore it.
    fn parts(&self, scope: Scope, cwd: &Path, run: &Run) -> Result<Vec<Box<dyn Part>>, Problem> {
        let settings = hook_settings(self, scope, cwd, run)?;
        let exclude = (scope == Scope::Local)
            .then(|| ExcludeLine::of(&settings.file))
            .flatten();
        let mut parts: Vec<Box<dyn Part>> = vec![Box::new(settings)];
        if let Some(x) = exclude {
            parts.push(Box::new(x));
        }
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunks(v: Value) -> Vec<Value> {
        v.as_array().unwrap().clone()
    }

    // Patches as Claude Code 2.1.332 reported them.
    #[test]
    fn patches_apply_as_the_tool_applied_them() {
        let p = hunks(
            json!([{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
            "lines": [" one", "-two", "+TWO", " three"]}]),
        );
        assert_eq!(
            apply_patch("one\ntwo\nthree\n", &p).as_deref(),
            Some("one\nTWO\nthree\n")
        );
        let p = hunks(
            json!([{"oldStart": 1, "oldLines": 4, "newStart": 1, "newLines": 3,
            "lines": ["   lead\ttab  ", " ", " ", "-trail   "]}]),
        );
        assert_eq!(
            apply_patch("  lead\ttab  \n\n\ntrail   \n", &p).as_deref(),
            Some("  lead\ttab  \n\n\n")
        );
        let p = hunks(
            json!([{"oldStart": 1, "oldLines": 0, "newStart": 1, "newLines": 1, "lines": ["+created"]}]),
        );
        assert_eq!(apply_patch("", &p).as_deref(), Some("created\n"));
        let p = hunks(
            json!([{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 1,
            "lines": ["-a", "-b", "\\ No newline at end of file", "+replaced"]}]),
        );
        assert_eq!(apply_patch("a\nb", &p).as_deref(), Some("replaced\n"));
        let p = hunks(
            json!([{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
            "lines": ["-a", "+b", "\\ No newline at end of file"]}]),
        );
        assert_eq!(apply_patch("a\n", &p).as_deref(), Some("b"));
        // Context that is not in the file: not what the tool did.
        let p = hunks(
            json!([{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1, "lines": ["-x", "+y"]}]),
        );
        assert_eq!(apply_patch("a\nb\n", &p), None);
    }

    #[test]
    fn replacement_deletes_a_line_with_its_newline() {
        let r = |before: &str, old: &str, new: &str, all: bool| {
            replaced(
                before,
                &json!({}),
                &json!({"oldString": old, "newString": new, "replaceAll": all}),
            )
        };
        assert_eq!(r("a\nb\nc\n", "b", "", false).as_deref(), Some("a\nc\n"));
        assert_eq!(r("a b a", "a", "x", true).as_deref(), Some("x b x"));
        assert_eq!(r("a b a", "a", "x", false).as_deref(), Some("x b a"));
        assert_eq!(r("", "", "new\n", false).as_deref(), Some("new\n"));
        assert_eq!(r("a", "zz", "x", false), None);
    }
}
