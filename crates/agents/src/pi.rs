//! pi's extension events, as fsview's common events.
//!
//! pi (the pi coding agent) runs no command hooks: it loads TypeScript or
//! JavaScript extensions in its own process. `fsview-hook install pi`
//! writes a small one ([`EXTENSION`], in `.pi/extensions/fsview.js`) that
//! hands each event it subscribes to, as pi passed it, to `fsview-hook pi`
//! on stdin as `{"event", "cwd", "sessionId", ...the event's fields}`, and
//! acts on the answer: `{"deny": R}` blocks the tool call with reason `R`
//! (the model receives `R` verbatim), `{"context": T}` adds `T` after the
//! user's prompt as a message of its own, or after a tool's result as a
//! text block of its own (what changed meanwhile, told before the model's
//! next step), verbatim; `{"short": N}` puts the notice `N` in place of a
//! read's text (a whole re-read of exactly what the conversation holds,
//! `--short-reads`, on by default: fsview releases every view at pi's
//! compactions and branch moves). The extension fails
//! closed for the gate: a hook that cannot run, exits non-zero or answers
//! nonsense blocks the change.
//!
//! Fields as pi 0.73.1 passes them (fixtures captured from the real binary:
//! `tests/fixtures/hooks/pi-0.73.1/`):
//!
//! - `tool_call` of `edit` (`input.path`; `input.edits`, each `{oldText,
//!   newText}`) and `write` (`input.path`, `input.content`): a targeted
//!   edit and a whole-file write. pi gates every call of a message before
//!   any runs. Of `bash` (`input.command`, `input.timeout`; it runs in
//!   the session's `cwd`): the gate for each file the command writes, as
//!   the shell reader finds them ([`shell::about_to_run`]).
//! - `tool_result` of `read` (`details.truncation` without its `content`,
//!   which repeats the text): `content[0].text` is what the model got:
//!   the file's text decoded as UTF-8 (CRLF kept, no line numbers) from
//!   line `input.offset` (else 1), cut to complete lines at 2,000 lines or
//!   50 KB (then `details.truncation.truncated`, and a `\n\n[Showing lines
//!   A-B of N...]` note follows), or to `input.limit` lines (then a
//!   `\n\n[R more lines in file. Use offset=K to continue.]` note). A first
//!   line over 50 KB shows only a note. An image shows no text.
//! - `tool_result` of `edit`: "Successfully replaced N block(s) in P.",
//!   and `details.diff`, pi's own numbered rendering: nothing of the
//!   file's text. pi replaced each `oldText` (found once in the original,
//!   none overlapping) with its `newText`, so the agent's last view with
//!   those replacements is what it now knows ([`Event::Edited`]); a
//!   `oldText` pi matched loosely (quotes, dashes, trailing blanks, which
//!   pi then normalises in the whole file) does not apply exactly, and
//!   nothing is recorded. Of `write`: `input.content` is the whole file.
//!   Of `bash`: the command's output; a read command's (`cat`, `sed -n`,
//!   ..., see [`shell`](crate::shell)) is recorded when the disk holds
//!   exactly that, never a truncated output or a failed command's.
//! - `before_agent_start`, once per prompt: the reminder. Its `prompt` is
//!   the text the model gets, with the files named by `@FILE` arguments
//!   (`pi @a.txt "change it"`) before it, each as `<file name="ABS">\n`,
//!   the file's text decoded as UTF-8, `\n</file>\n` (an empty file is left
//!   out): each is a view of the whole file, held to that text.
//! - `session_compact`, after a compaction (`/compact` or an automatic
//!   one): the conversation is a summary and a kept tail
//!   (`compactionEntry.firstKeptEntryId`): every view is released, then
//!   the reads and writes the tail still shows are read back from pi's
//!   session file (`sessionFile`, which the extension passes) and
//!   recorded again, held to the disk ([`kept`]). pi re-attaches no
//!   file (`details.readFiles` lists paths only). `pi -p` compacts after
//!   its prompt's end and tells this after its own shutdown, as it exits,
//!   with a ctx that throws when used: the extension names the
//!   conversation as the last usable ctx did (from `session_start` on) and
//!   runs the hook to its end (`spawnSync`) before pi goes on.
//! - `session_tree`, after `/tree` moved the conversation to another of its
//!   branches (`newLeafId`, `oldLeafId`): which views that branch holds is
//!   not known either, so none counts as held (released as by a rewind).
//!
//! Nothing at a session's start: pi loads its instruction files (AGENTS.md,
//! CLAUDE.md) itself, and says nothing of what it gave the model. The
//! session is pi's session id (`ctx.sessionManager.getSessionId()`),
//! which a next prompt with `--session ID` keeps.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::event::{
    Answer, Change, Changed, Edited, Event, Extent, Replace, Shown, ShownText, Stage, Who,
};
use crate::install::{Installer, OwnFile, Part, Run, Scope};
use crate::shell;
use crate::{payload, Agent, Parsed, Problem, Reply};

/// pi, through the extension.
pub struct Pi;

type Failed = (Stage, Problem);

impl Agent for Pi {
    /// `tool_result` adds fsview's text to the result, and an edit is
    /// recorded as its replacements.
    fn tells_after_change(&self) -> bool {
        true
    }

    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload = payload::object(payload, || {
            "the payload is not a JSON object; fsview-hook pi reads what fsview's pi extension sends on stdin".into()
        })?;
        let event = payload.get("event").and_then(Value::as_str).unwrap_or("");
        let stage = match event {
            "tool_call" => Stage::AboutToChange,
            "tool_result" => Stage::Shown,
            "before_agent_start" => Stage::Prompt,
            "session_compact" | "session_tree" => Stage::Shown,
            other => {
                return Err((
                    Stage::Other,
                    Problem::new(format!("extension event {other:?} is not one fsview-hook pi answers (tool_call, tool_result, before_agent_start, session_compact, session_tree)")),
                ))
            }
        };
        let who = who(&payload, event).map_err(|p| (stage, p))?;
        let parsed = match stage {
            Stage::AboutToChange => tool_call(&payload),
            Stage::Shown if event == "session_compact" => Ok(session_compact(&payload)),
            Stage::Shown if event == "session_tree" => Ok(Event::Rewound),
            // What the tool showed or changed, then what changed meanwhile
            // (told with this result, before the model's next step).
            Stage::Shown => tool_result(&payload).map(|e| Event::AfterTool(Box::new(e))),
            _ => Ok(prompt(&payload)),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event: parsed })
    }

    fn reply(&self, _stage: Stage, answer: Answer) -> Reply {
        let out = match answer {
            // pi's own permissions (none by default) decide the rest.
            Answer::Nothing | Answer::Allow(_) => return Reply::nothing(),
            Answer::Deny(reason) => json!({ "deny": reason }),
            Answer::Context(text) => json!({ "context": text }),
            // The extension puts the notice in place of the read's text.
            Answer::Short(short, context) => json!({ "short": short.notice, "context": context }),
        };
        Reply::json(&out)
    }

    fn shortens_reads(&self) -> bool {
        true
    }

    /// A compaction or a move to another branch releases every view (see
    /// the module documentation): nothing pi drops is still counted held.
    fn tells_drops(&self) -> bool {
        true
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        if closed && stage == Stage::AboutToChange {
            return Reply::unchecked(msg, |reason| json!({ "deny": reason }));
        }
        Reply::error(msg, if closed { 2 } else { 0 })
    }

    /// pi's `read` shows the file's text as it is, with no line numbers.
    fn numbers_reads(&self) -> bool {
        false
    }

    fn loads_itself(&self, name: &str) -> bool {
        matches!(name, "AGENTS.md" | "CLAUDE.md")
    }
}

fn who(payload: &Value, event: &str) -> Result<Who, Problem> {
    let string = |k: &str| {
        payload
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let session = string("sessionId").ok_or_else(|| {
        Problem::new(format!(
            "the {event} payload has no sessionId string; pass --sid ID to name the session"
        ))
    })?;
    let cwd = string("cwd")
        .ok_or_else(|| Problem::new(format!("the {event} payload has no cwd string")))?;
    Ok(Who {
        session: session.to_string(),
        agent: None,
        cwd: PathBuf::from(cwd),
        // pi's session file is read at a compaction only (`kept`), and
        // its calls' ids place nothing.
        call: None,
        transcript: None,
        prompt: None,
    })
}

/// The most of pi's session file a compaction reads back ([`kept`]): a
/// longer one is not read, and every view is released.
const SESSION_FILE_MAX: usize = 256 << 20;

/// A compaction: every view released, then what the kept part still shows
/// recorded again ([`kept`]).
fn session_compact(payload: &Value) -> Event {
    match kept(payload) {
        Some(kept) if !kept.is_empty() => {
            Event::Each(std::iter::once(Event::Compacted).chain(kept).collect())
        }
        _ => Event::Compacted,
    }
}

/// What the part of the conversation a compaction kept shows, read back
/// from pi's session file (`sessionFile`, a JSON line an entry, each with
/// its `id` and `parentId`): the entries from `firstKeptEntryId` to the
/// compaction entry (`compactionId`) along their parents. A kept `read`'s
/// result is a view of what it showed, and a kept `write` of what it
/// wrote, as its `tool_result` would have recorded them (then held to the
/// disk); only a result whose call is kept too, and only the result's
/// first part (what fsview appended after a read is not the file). An
/// `edit` is not: the next edit of that file needs a read. `None` when the
/// file or the entries are not there (every view is released).
fn kept(payload: &Value) -> Option<Vec<Event>> {
    let file = payload
        .get("sessionFile")?
        .as_str()
        .filter(|f| !f.is_empty())?;
    let first = payload.get("firstKeptEntryId")?.as_str()?;
    let compaction = payload.get("compactionId")?.as_str()?;
    let bytes = crate::transcript::head(Path::new(file), SESSION_FILE_MAX + 1)?;
    if bytes.len() > SESSION_FILE_MAX {
        return None;
    }
    let entries: std::collections::HashMap<String, Value> = bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .filter_map(|v| Some((v.get("id")?.as_str()?.to_string(), v)))
        .collect();
    let parent = |v: &Value| v.get("parentId").and_then(Value::as_str).map(String::from);
    let mut chain = Vec::new();
    let mut at = parent(entries.get(compaction)?);
    loop {
        let id = at?;
        let entry = entries.get(&id)?;
        chain.push(entry);
        if id == first {
            break;
        }
        at = parent(entry);
    }
    chain.reverse();
    let messages: Vec<&Value> = chain.iter().filter_map(|e| e.get("message")).collect();
    let mut calls = std::collections::HashMap::new();
    for m in &messages {
        let parts = m.get("content").and_then(Value::as_array);
        for c in parts.into_iter().flatten() {
            if c.get("type").and_then(Value::as_str) == Some("toolCall") {
                if let Some(id) = c.get("id").and_then(Value::as_str) {
                    calls.insert(id, c);
                }
            }
        }
    }
    let mut out = Vec::new();
    for m in &messages {
        if m.get("role").and_then(Value::as_str) != Some("toolResult") {
            continue;
        }
        let name = m.get("toolName").and_then(Value::as_str);
        let call = m
            .get("toolCallId")
            .and_then(Value::as_str)
            .and_then(|id| calls.get(id));
        let (Some(name @ ("read" | "write")), Some(call)) = (name, call) else {
            continue;
        };
        let mut content = m.get("content").cloned().unwrap_or(Value::Null);
        if let (Some(parts), "read") = (content.as_array_mut(), name) {
            parts.truncate(1);
        }
        let result = json!({
            "toolName": name,
            "input": call.get("arguments"),
            "content": content,
            "details": m.get("details"),
            "isError": m.get("isError"),
        });
        match tool_result(&result) {
            Ok(Event::Ignored) | Err(_) => {}
            Ok(e) => out.push(e),
        }
    }
    Some(out)
}

fn tool(payload: &Value) -> Result<(&str, &Value), Problem> {
    let name = payload
        .get("toolName")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the payload has no toolName string"))?;
    let input = payload
        .get("input")
        .filter(|v| v.is_object())
        .ok_or_else(|| Problem::new(format!("the {name} payload has no input object")))?;
    Ok((name, input))
}

fn path(tool: &str, input: &Value) -> Result<PathBuf, Problem> {
    input
        .get("path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Problem::new(format!("the {tool} payload has no input.path string")))
}

fn tool_call(payload: &Value) -> Result<Event, Problem> {
    let (name, input) = tool(payload)?;
    let whole = match name {
        "write" => true,
        "edit" => false,
        "bash" => {
            let command = input
                .get("command")
                .and_then(Value::as_str)
                .ok_or_else(|| Problem::new("the bash payload has no input.command string"))?;
            return Ok(Event::all(shell::about_to_run(command, None)));
        }
        _ => return Ok(Event::Ignored),
    };
    let path = path(name, input)?;
    if !whole {
        let edits = Replace::each(input, "oldText", "newText", None);
        if let Some(edits) = edits.filter(|e| !e.is_empty()) {
            return Ok(Event::AboutToReplace { path, edits });
        }
    }
    Ok(Event::AboutToChange { path, whole })
}

/// The text the model got: the result's text parts, when it has no other.
fn result_text(payload: &Value) -> Option<String> {
    let parts = payload.get("content")?.as_array()?;
    let mut text = String::new();
    for p in parts {
        if p.get("type")?.as_str()? != "text" {
            return None;
        }
        text.push_str(p.get("text")?.as_str()?);
    }
    Some(text)
}

fn tool_result(payload: &Value) -> Result<Event, Problem> {
    let (name, input) = tool(payload)?;
    if !matches!(name, "read" | "edit" | "write" | "bash") {
        return Ok(Event::Ignored);
    }
    if payload.get("isError").and_then(Value::as_bool) != Some(false) {
        // A command that failed (pi's bash errs on a non-zero exit) wrote
        // what it wrote all the same; what it printed is not the file.
        return Ok(match (name, input.get("command").and_then(Value::as_str)) {
            ("bash", Some(command)) => Event::all(shell::ran(command, None, None)),
            _ => Event::Ignored,
        });
    }
    let Some(text) = result_text(payload) else {
        // An image: no file text.
        return Ok(Event::Ignored);
    };
    let details = payload.get("details");
    let truncated = details
        .and_then(|d| d.pointer("/truncation/truncated"))
        .and_then(Value::as_bool)
        == Some(true);
    match name {
        "read" => read(path(name, input)?, input, &text, truncated),
        "bash" => Ok(bash(input, &text, truncated)),
        "write" => {
            let content = input
                .get("content")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Problem::new(
                        "the write payload has no input.content string, so nothing was recorded",
                    )
                })?;
            Ok(Event::Changed(Changed {
                path: path(name, input)?,
                text: content.to_string(),
                before: None,
                whole: true,
            }))
        }
        _ => edit(path(name, input)?, input),
    }
}

fn number(input: &Value, key: &str) -> Option<u64> {
    input.get(key).and_then(Value::as_f64).map(|n| n as u64)
}

fn read(path: PathBuf, input: &Value, text: &str, truncated: bool) -> Result<Event, Problem> {
    let offset = number(input, "offset").unwrap_or(1).max(1);
    let limited = input.get("limit").is_some_and(|v| !v.is_null());
    let (shown, extent) = if truncated {
        // The lines that fit, then "[Showing lines A-B of N...]"; or only
        // a note when the first line alone is over the limit.
        match text.rsplit_once("\n\n[Showing lines ") {
            Some((head, _)) => (
                head,
                if limited || offset > 1 {
                    Extent::Range
                } else {
                    Extent::Start
                },
            ),
            None => return Ok(Event::Ignored),
        }
    } else if limited {
        match text.rsplit_once("\n\n[") {
            Some((head, note))
                if note.ends_with(" to continue.]") && note.contains(" more lines in file.") =>
            {
                (head, Extent::Range)
            }
            _ => (text, Extent::Range),
        }
    } else if offset > 1 {
        (text, Extent::Range)
    } else {
        (text, Extent::Whole)
    };
    // An empty file shows nothing; an empty slice of a file is no view.
    if shown.is_empty() && extent != Extent::Whole {
        return Ok(Event::Ignored);
    }
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Lines(shown.to_string()),
        offset,
        extent,
    }))
}

/// pi's edit: each `oldText` replaced by its `newText`, all at once.
fn edit(path: PathBuf, input: &Value) -> Result<Event, Problem> {
    let bad = || {
        Problem::new("the edit payload has no input.edits list of {oldText, newText}, so nothing was recorded")
    };
    let edits = input
        .get("edits")
        .and_then(Value::as_array)
        .ok_or_else(bad)?;
    let pairs = edits
        .iter()
        .map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).map(String::from);
            Some((s("oldText")?, s("newText")?))
        })
        .collect::<Option<Vec<_>>>()
        .filter(|p| !p.is_empty())
        .ok_or_else(bad)?;
    let change = match <[_; 1]>::try_from(pairs) {
        Ok([(old, new)]) => Change::Replace {
            old,
            new,
            all: false,
        },
        Err(pairs) => Change::Each(pairs),
    };
    Ok(Event::Edited(Edited { path, change }))
}

/// A prompt: the files its `@FILE` arguments put before it, then the
/// reminder.
fn prompt(payload: &Value) -> Event {
    let text = payload.get("prompt").and_then(Value::as_str).unwrap_or("");
    crate::mention::prompt_showing(attached(text).into_iter().map(|(path, body)| Shown {
        path: PathBuf::from(path),
        text: ShownText::Lines(body.to_string()),
        offset: 1,
        extent: Extent::Whole,
    }))
}

/// The `<file name="ABS">\nTEXT\n</file>\n` blocks pi puts first in a
/// prompt for its `@FILE` arguments, in order: (ABS, TEXT). A text that
/// holds `\n</file>\n` itself is cut there, and held to what it was cut
/// to (never fresh: it is not the file); an image's block has no newline
/// after its opening tag and is nothing.
fn attached(prompt: &str) -> Vec<(&str, &str)> {
    const OPEN: &str = "<file name=\"";
    const CLOSE: &str = "\n</file>\n";
    let mut out = Vec::new();
    let mut rest = prompt;
    while let Some(at) = rest.find(OPEN) {
        let after = &rest[at + OPEN.len()..];
        let Some((name, body)) = after.split_once("\">\n") else {
            break;
        };
        if name.contains(['"', '\n']) || !name.starts_with('/') {
            rest = after;
            continue;
        }
        let Some(end) = body.find(CLOSE) else {
            break;
        };
        out.push((name, &body[..end]));
        rest = &body[end + CLOSE.len()..];
    }
    out
}

/// What a read command printed of a file. pi keeps the end of a long
/// output (`details.truncation`): which lines it shows is not known.
fn bash(input: &Value, output: &str, truncated: bool) -> Event {
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return Event::Ignored;
    };
    let shown = (!truncated).then_some(shell::Output::Exact(output));
    Event::all(shell::ran(command, None, shown))
}

/// The extension `fsview-hook install pi` writes, with `@ASK@`
/// ([`opencode::ASK`](crate::opencode::ASK)), `@HOOK@` (the absolute path
/// of fsview-hook, as a JSON string) and `@ARGS@` (its extra arguments, a
/// JSON list) filled in.
pub const EXTENSION: &str = r#"// fsview-hook: the pi end of fsview's hooks, written by
// `fsview-hook install pi`. Reinstall (or uninstall) rather than edit: it is
// replaced whole. It hands each event to `fsview-hook pi` and fails closed
// for the gate before an edit, a write or a shell command.
import { spawn, spawnSync } from "node:child_process";

const HOOK = @HOOK@;
const ARGS = @ARGS@;
const GATED = new Set(["edit", "write", "bash"]);
const RECORDED = new Set(["read", "edit", "write", "bash"]);

@ASK@

// Told while pi may be on its way out: `pi -p` ends its prompt, starts the
// compaction the prompt's usage calls for, shuts down, and tells
// `session_compact` when the summary comes, then exits. So the hook runs
// to its end before the handler returns (a spawned one would be cut off).
function tell(payload) {
  try {
    spawnSync(HOOK, ["pi", ...ARGS], { input: JSON.stringify(payload), stdio: ["pipe", "ignore", "ignore"], timeout: 30000 });
  } catch {}
}

// The conversation, as the last usable ctx named it: after pi's shutdown
// (where `pi -p` tells `session_compact`) every ctx is stale and throws.
let last = { cwd: process.cwd(), sessionId: "", sessionFile: "" };

function who(ctx) {
  try {
    const cwd = ctx.cwd;
    let sessionId = "";
    let sessionFile = "";
    try {
      sessionId = ctx.sessionManager.getSessionId() || "";
      sessionFile = ctx.sessionManager.getSessionFile() || "";
    } catch {}
    last = { cwd, sessionId, sessionFile };
  } catch {}
  return last;
}

export default function (pi) {
  pi.on("session_start", (_event, ctx) => {
    who(ctx);
  });
  pi.on("tool_call", async (event, ctx) => {
    if (!GATED.has(event.toolName)) return;
    const r = await ask({ event: "tool_call", ...who(ctx), toolName: event.toolName, toolCallId: event.toolCallId, input: event.input }, true);
    const a = answer(r);
    if (a === null) {
      return { block: true, reason: "fsview-hook could not check this change, so it is denied: " + why(r) };
    }
    if (typeof a.deny === "string") return { block: true, reason: a.deny };
  });
  pi.on("tool_result", async (event, ctx) => {
    // Every tool's result, to tell what changed meanwhile; the text only
    // of the tools whose results fsview records.
    const recorded = RECORDED.has(event.toolName);
    // details.truncation.content repeats what content holds.
    let details = recorded ? event.details : undefined;
    if (details && details.truncation) details = { ...details, truncation: { ...details.truncation, content: undefined } };
    const a = answer(await ask({
      event: "tool_result", ...who(ctx), toolName: event.toolName, toolCallId: event.toolCallId,
      input: event.input, content: recorded ? event.content : undefined, details, isError: event.isError,
    }));
    if (a === null) return;
    let content = event.content;
    // A whole re-read of what the conversation holds: the notice instead.
    if (typeof a.short === "string") content = [{ type: "text", text: a.short }];
    if (typeof a.context === "string") content = [...content, { type: "text", text: a.context }];
    if (content !== event.content) return { content };
  });
  pi.on("session_compact", (event, ctx) => {
    // Where the kept part starts: fsview reads it back from the session file.
    const entry = (event && event.compactionEntry) || {};
    tell({ event: "session_compact", ...who(ctx), compactionId: entry.id, firstKeptEntryId: entry.firstKeptEntryId });
  });
  pi.on("session_tree", async (_event, ctx) => {
    await ask({ event: "session_tree", ...who(ctx) });
  });
  pi.on("before_agent_start", async (event, ctx) => {
    const a = answer(await ask({ event: "before_agent_start", ...who(ctx), prompt: event.prompt }));
    if (a && typeof a.context === "string") {
      return { message: { customType: "fsview", content: a.context, display: false } };
    }
  });
}
"#;

/// The first line of every extension fsview-hook writes.
const MARK: &str = "// fsview-hook: the pi end of fsview's hooks";

/// The extension for `exe` with `args`.
pub fn extension(exe: &str, args: &[String]) -> String {
    EXTENSION
        .replace("@ASK@", crate::opencode::ASK)
        .replace("@AGENT@", "pi")
        .replace("@HOOK@", &Value::from(exe).to_string())
        .replace("@ARGS@", &json!(args).to_string())
}

/// Where pi finds extensions it loads by itself: `.pi/extensions/` in the
/// directory it starts in (pi looks nowhere else in the project), or the
/// user's `$PI_CODING_AGENT_DIR` (else `~/.pi/agent`) `/extensions/`.
pub fn extension_file(scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
    let dir = match scope {
        Scope::Project => cwd.join(".pi"),
        Scope::User => std::env::var_os("PI_CODING_AGENT_DIR")
            .filter(|v| !v.is_empty())
            .map(|d| cwd.join(d))
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| PathBuf::from(h).join(".pi").join("agent"))
            })
            .ok_or_else(|| {
                Problem::new("neither PI_CODING_AGENT_DIR nor HOME is set, so pi's directory cannot be found; use --project")
            })?,
        Scope::Local => {
            return Err(Problem::new(
                "pi has no local extension directory; use --project (.pi/extensions/) or --user (~/.pi/agent/extensions/)",
            ))
        }
    };
    Ok(dir.join("extensions").join("fsview.js"))
}

/// pi's extension: a file of fsview-hook's own, so nothing of the user's is
/// touched; a file of that name fsview-hook did not write is left alone.
pub struct PiInstaller;

impl Installer for PiInstaller {
    fn agent(&self) -> &'static str {
        "pi"
    }

    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
        extension_file(scope, cwd)
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }

    fn events(&self) -> Vec<&'static str> {
        vec![
            "tool_call",
            "tool_result",
            "before_agent_start",
            "session_compact",
            "session_tree",
        ]
    }

    fn next_step(&self, _scope: Scope, _cwd: &Path) -> Option<String> {
        Some("pi loads the extension when it next starts in this directory (not with --no-extensions); it needs no other setting.".into())
    }

    fn parts(&self, scope: Scope, cwd: &Path, run: &Run) -> Result<Vec<Box<dyn Part>>, Problem> {
        Ok(vec![Box::new(OwnFile {
            file: extension_file(scope, cwd)?,
            base: self.base(scope, cwd)?,
            text: extension(&run.exe.to_string_lossy(), &run.args),
            ours: Box::new(|now| now.starts_with(MARK)),
            executable: false,
        })])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(input: Value, text: &str, truncated: bool) -> Event {
        read(PathBuf::from("a.txt"), &input, text, truncated).unwrap()
    }

    fn lines(text: &str, offset: u64, extent: Extent) -> Event {
        Event::Shown(Shown {
            path: "a.txt".into(),
            text: ShownText::Lines(text.into()),
            offset,
            extent,
        })
    }

    #[test]
    fn a_read_says_which_lines_it_showed() {
        assert_eq!(
            shown(json!({}), "one\ntwo\n", false),
            lines("one\ntwo\n", 1, Extent::Whole)
        );
        assert_eq!(
            shown(
                json!({"offset": 2, "limit": 1}),
                "two\n\n[2 more lines in file. Use offset=3 to continue.]",
                false
            ),
            lines("two", 2, Extent::Range)
        );
        assert_eq!(
            shown(json!({"offset": 3}), "three\n", false),
            lines("three\n", 3, Extent::Range)
        );
        assert_eq!(
            shown(
                json!({}),
                "l1\nl2\n\n[Showing lines 1-2 of 9. Use offset=3 to continue.]",
                true
            ),
            lines("l1\nl2", 1, Extent::Start)
        );
        assert_eq!(
            shown(
                json!({}),
                "[Line 1 is 60.0KB, exceeds 50.0KB limit. Use bash: sed -n '1p' a.txt | head -c 51200]",
                true
            ),
            Event::Ignored
        );
    }

    // bash calls as pi 0.73.1 passed them.
    #[test]
    fn a_bash_call_is_gated_for_the_files_it_writes() {
        let call = |input: Value| {
            tool_call(
                &json!({"event": "tool_call", "toolName": "bash", "toolCallId": "c1", "input": input}),
            )
        };
        assert_eq!(
            call(json!({"command": "sed -i 's/one/ONE/' a.txt"}))
                .unwrap()
                .gates(),
            Event::Each(vec![Event::shell_replace("a.txt", "one", "ONE")])
        );
        assert_eq!(
            call(json!({"command": "printf 'x\\n' > unread.txt", "timeout": 30}))
                .unwrap()
                .gates(),
            Event::Each(vec![Event::shell_write("unread.txt", true)])
        );
        for c in ["echo x >> log.txt", "cat a.txt", "npm test"] {
            assert_eq!(
                call(json!({ "command": c })).unwrap().gates(),
                Event::Ignored,
                "{c}"
            );
        }
        assert_eq!(
            call(json!({})).unwrap_err().0,
            "the bash payload has no input.command string"
        );
        let e = extension("/bin/fsview-hook", &[]);
        assert!(e.contains(r#"const GATED = new Set(["edit", "write", "bash"]);"#));
    }

    #[test]
    fn the_extension_names_the_hook_as_json() {
        let e = extension("/opt/it's here/fsview-hook", &["--sid".into()]);
        assert!(e.starts_with(MARK));
        assert!(e.contains(r#"const HOOK = "/opt/it's here/fsview-hook";"#));
        assert!(e.contains(r#"const ARGS = ["--sid"];"#));
        assert!(!e.contains("@HOOK@") && !e.contains("@ARGS@") && !e.contains("@A"));
        assert!(e.contains(r#"const args = ["pi", ...ARGS, ...(gate ? ["--gate"] : [])];"#));
    }

    /// `pi -p` tells `session_compact` after its shutdown, on its way out
    /// (seen on pi 0.73.1: `agent_end`, `session_before_compact`,
    /// `session_shutdown`, `session_compact`, exit): a hook spawned there
    /// was cut off and the views stayed held. The extension runs it to its
    /// end before the handler returns.
    #[test]
    fn the_extension_tells_a_compaction_before_pi_can_exit() {
        let e = extension("/bin/fsview-hook", &[]);
        assert!(e.contains(r#"import { spawn, spawnSync } from "node:child_process";"#));
        assert!(e.contains(
            "    tell({ event: \"session_compact\", ...who(ctx), compactionId: entry.id, firstKeptEntryId: entry.firstKeptEntryId });\n  });"
        ));
        assert!(e.contains(r#"spawnSync(HOOK, ["pi", ...ARGS], { input: JSON.stringify(payload)"#));
        // ... with the conversation the last usable ctx named: a stale one
        // throws at `ctx.cwd`.
        assert!(
            e.contains("    last = { cwd, sessionId, sessionFile };\n  } catch {}\n  return last;")
        );
        assert!(e.contains("  pi.on(\"session_start\", (_event, ctx) => {\n    who(ctx);\n  });"));
    }
}
