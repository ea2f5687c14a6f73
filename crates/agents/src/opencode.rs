//! opencode's plugin hooks, as fsview's common events.
//!
//! opencode runs no command hooks: it loads JavaScript plugins in its own
//! process. `fsview-hook install opencode` writes a small one
//! ([`PLUGIN`], in `.opencode/plugins/fsview.js`) that hands each hook's
//! objects, as opencode passed them, to `fsview-hook opencode` on stdin as
//! `{"event", "directory", "input", "output"}`, and acts on the answer:
//! `{"deny": R}` throws `R` (the tool fails and the model receives `R`
//! verbatim), `{"context": T}` adds `T` to the user's message as a
//! synthetic text part (verbatim: nothing is escaped). The plugin fails
//! closed for the gate: a hook that cannot run, exits non-zero or answers
//! nonsense denies the change.
//!
//! Fields as opencode 1.18.33 passes them (fixtures captured from the real
//! binary: `tests/fixtures/hooks/opencode-1.18.33/`):
//!
//! - `tool.execute.before` of `edit` and `write` (`output.args.filePath`):
//!   a targeted edit and a whole-file write; of `apply_patch`, the tool
//!   opencode gives GPT models instead of those two (`args.patchText`, a
//!   patch in Codex's format, [`patch`](crate::patch)): the gate for each
//!   file of it; of `bash` (`args.command`, `args.workdir`): the gate for
//!   each file the command writes ([`shell`](crate::shell)); of Kilo Code
//!   CLI's `background_process` with `action: "start"` (`args.command`,
//!   `args.workdir`), the same (its `restart` runs again a command gated
//!   when it started).
//! - `tool.execute.after` (only after a tool succeeded) of `read`:
//!   `output.metadata.display` says what the model got: `text` (the lines
//!   without their numbers, `\r\n` as `\n`, the last line's newline left
//!   out), `lineStart`, `lineEnd`, `totalLines` and `truncated` (2,000
//!   lines or 50 KB at most unless `offset`/`limit` asked for a part; a
//!   capped read's `totalLines` is not the file's). A line over 2,000
//!   characters is shown cut, ending in "... (line truncated to 2000
//!   chars)": only the lines before it are taken as shown.
//! - `tool.execute.after` of `bash`: `output.output` is what the command
//!   printed (standard output and error), exactly, "(no output)" for
//!   nothing, only its last lines when `metadata.truncated`; of
//!   `apply_patch` ("Success. Updated the following files:"): what the
//!   patch made of each file, as for Codex.
//! - `tool.execute.after` of `edit`: `output.metadata.filediff.patch`, the
//!   unified diff the tool applied, and nothing of the file's new text: the
//!   agent's last view with the diff applied is what it now knows
//!   ([`Event::Edited`]). Of `write`: `input.args.content` is the whole
//!   file.
//! - `chat.message`, once per user message: the reminder, after the views
//!   of the calls whose results opencode pruned since (`output.pruned`,
//!   with `compaction.prune` on: "[Old tool result content cleared]") are
//!   released ([`Event::Pruned`]). Kilo 7.7.9 also prunes in the middle of
//!   a prompt, by default, when a request would pass 1,250,000 bytes (its
//!   payload limit): so the gate and each result carry the ids heard of
//!   since too (`pruned`), released before the gate answers. And after every
//!   tool (`tool.execute.after` of any tool): what changed meanwhile,
//!   appended to `output.output` after a blank line, verbatim, so the
//!   model knows before its next step (the plugin sends the output only of
//!   the tools whose results fsview records). An MCP tool's result is its
//!   `output.content` parts instead (opencode does not read its
//!   `output.output`), joined by blank lines and cut past 2,000 lines or
//!   51,200 bytes with what the plugin added: the plugin adds a text part,
//!   and sends `room`, the bytes and lines left, which the context must
//!   fit ([`crate::core::within`]).
//! - the `session.compacted` bus event (from the plugin's `event` hook;
//!   named so in 1.18.33's code, `{sessionID}`): the conversation is a
//!   summary now and the tail the compaction kept (from its
//!   `tail_start_id`, when it kept one). The plugin asks opencode for the
//!   session's messages and sends the ids of the calls whose results the
//!   kept tail holds (`output.kept`): their views stay held, every other
//!   is released ([`Event::CompactedKeeping`]).
//!
//! Nothing at a session's start: opencode loads its instruction files
//! (AGENTS.md, CLAUDE.md, CONTEXT.md) itself and says nothing of what it gave the
//! model. A subagent (the task tool) works in a session of its own, which
//! is its own fsview session.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::event::{
    Answer, Change, Changed, Edited, Event, Extent, Replace, Shown, ShownText, Stage, Who,
};
use crate::install::{Installer, OwnFile, Part, Run, Scope};
use crate::patch;
use crate::shell::{self, Output};
use crate::{payload, Agent, Parsed, Problem, Reply};

/// An agent that loads opencode's JavaScript plugins: opencode itself, or
/// Kilo Code CLI, its fork (the same hooks and objects, its own names and
/// directories).
#[derive(Debug)]
pub struct Host {
    /// `fsview-hook`'s name for it.
    pub name: &'static str,
    /// Its project directory, at the top of the git work tree.
    pub project_dir: &'static str,
    /// The variable naming its user config directory.
    pub config_env: &'static str,
    /// Its user config directory's name under `$XDG_CONFIG_HOME`.
    pub config_name: &'static str,
}

/// opencode: `.opencode/plugins/`, `~/.config/opencode/plugins/`.
pub const OPENCODE: Host = Host {
    name: "opencode",
    project_dir: ".opencode",
    config_env: "OPENCODE_CONFIG_DIR",
    config_name: "opencode",
};

/// Kilo Code CLI 7.7.9 (opencode's fork): `.kilo/plugins/` (also
/// `.kilo/plugin/` and `.kilocode/plugins/`; not `.opencode/`),
/// `$KILO_CONFIG_DIR`, else `~/.config/kilo/plugins/`.
pub const KILO: Host = Host {
    name: "kilo",
    project_dir: ".kilo",
    config_env: "KILO_CONFIG_DIR",
    config_name: "kilo",
};

/// opencode or Kilo Code CLI, through the plugin.
pub struct Opencode(pub &'static Host);

type Failed = (Stage, Problem);

/// How opencode's read marks a line it cut.
const CUT: &str = "... (line truncated to 2000 chars)";

impl Agent for Opencode {
    /// `tool.execute.after` appends fsview's context to the tool's output,
    /// and an edit is recorded as the diff it made.
    fn tells_after_change(&self) -> bool {
        true
    }

    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload = payload::object(payload, || {
            format!("the payload is not a JSON object; fsview-hook {0} reads what fsview's {0} plugin sends on stdin", self.0.name)
        })?;
        let event = payload.get("event").and_then(Value::as_str).unwrap_or("");
        let stage = match event {
            "tool.execute.before" => Stage::AboutToChange,
            "tool.execute.after" => Stage::Shown,
            "chat.message" => Stage::Prompt,
            "session.compacted" => Stage::Shown,
            other => {
                return Err((
                    Stage::Other,
                    Problem::new(format!("plugin event {other:?} is not one fsview-hook {} answers (tool.execute.before, tool.execute.after, chat.message, session.compacted)", self.0.name)),
                ))
            }
        };
        let who = who(&payload, event).map_err(|p| (stage, p))?;
        // An MCP tool's result: opencode cuts it with what the plugin adds
        // to it past 2,000 lines or 51,200 bytes, so context must fit
        // what is left (`room`, the plugin's measure of it).
        let room = payload.get("room").map(|r| {
            let n = |k: &str| r.get(k).and_then(Value::as_u64).unwrap_or(0) as usize;
            crate::core::Room {
                bytes: n("bytes"),
                lines: n("lines"),
            }
        });
        crate::core::within(room);
        let parsed = match stage {
            Stage::AboutToChange => before(&payload).map(|e| pruned_first(&payload, "/pruned", e)),
            Stage::Shown if event == "session.compacted" => Ok(compacted(&payload)),
            // What the tool showed or changed, then what changed meanwhile
            // (told with this result, before the model's next step).
            Stage::Shown => after(&payload)
                .map(|e| pruned_first(&payload, "/pruned", Event::AfterTool(Box::new(e)))),
            _ => Ok(pruned_first(&payload, "/output/pruned", Event::Prompt)),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event: parsed })
    }

    fn reply(&self, _stage: Stage, answer: Answer) -> Reply {
        let out = match answer {
            // opencode's own permissions decide the rest.
            Answer::Nothing | Answer::Allow(_) => return Reply::nothing(),
            Answer::Deny(reason) => json!({ "deny": reason }),
            Answer::Context(text) | Answer::Short(_, Some(text)) => json!({ "context": text }),
            // Never asked for: a read's output shows no final newline, so no
            // read here is known to be of the whole file before it is held
            // (see `read`), and fsview does not follow opencode's `/undo`.
            Answer::Short(_, None) => return Reply::nothing(),
        };
        Reply::json(&out)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        if closed && stage == Stage::AboutToChange {
            return Reply::unchecked(msg, |reason| json!({ "deny": reason }));
        }
        Reply::error(msg, if closed { 2 } else { 0 })
    }

    fn loads_itself(&self, name: &str) -> bool {
        matches!(name, "AGENTS.md" | "CLAUDE.md" | "CONTEXT.md")
    }
}

fn who(payload: &Value, event: &str) -> Result<Who, Problem> {
    const FIELDS: payload::Fields = payload::Fields {
        session: "/input/sessionID",
        cwd: "/directory",
        agent: None,
        call: Some("/input/callID"),
        transcript: None,
        prompt: None,
    };
    payload::who(payload, event, &FIELDS)
}

/// `event`, after releasing the views of the calls whose results opencode
/// pruned since the plugin last said (the ids at `pointer`: `output.pruned`
/// of a user message, `pruned` of a tool's events). Kilo prunes in the
/// middle of a prompt too (its payload limit), so the gate and the next
/// result must not wait for the next prompt to hear of it.
fn pruned_first(payload: &Value, pointer: &str, event: Event) -> Event {
    let ids: Vec<String> = payload
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    if ids.is_empty() {
        return event;
    }
    let mut events = vec![Event::Pruned(ids)];
    match event {
        // One list, so that every gate in it still answers.
        Event::Each(more) => events.extend(more),
        e => events.push(e),
    }
    Event::Each(events)
}

/// A compaction: with the calls whose results the part it kept still
/// holds (`output.kept`, the plugin's list of their ids), the views they
/// showed stay held; without it, none does.
fn compacted(payload: &Value) -> Event {
    let kept = payload.pointer("/output/kept").and_then(Value::as_array);
    match kept.map(|k| k.iter().map(Value::as_str).collect::<Option<Vec<_>>>()) {
        Some(Some(ids)) => Event::CompactedKeeping(ids.into_iter().map(String::from).collect()),
        _ => Event::Compacted,
    }
}

fn tool(payload: &Value) -> Result<&str, Problem> {
    payload
        .pointer("/input/tool")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the payload has no input.tool string"))
}

fn file_path(tool: &str, args: Option<&Value>, at: &str) -> Result<PathBuf, Problem> {
    args.and_then(|a| a.get("filePath"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Problem::new(format!("the {tool} payload has no {at}.filePath string")))
}

fn before(payload: &Value) -> Result<Event, Problem> {
    let tool = tool(payload)?;
    let args = payload.pointer("/output/args");
    match tool {
        "bash" => {
            let (command, dir) = bash_call(args)?;
            return Ok(Event::all(shell::about_to_run(command, dir)));
        }
        // Kilo Code CLI's: a command started in the background.
        "background_process" => {
            if args.and_then(|a| a.get("action")).and_then(Value::as_str) != Some("start") {
                return Ok(Event::Ignored);
            }
            let (command, dir) = bash_call(args)?;
            return Ok(Event::all(shell::about_to_run(command, dir)));
        }
        // An update far from an outside change is merged, as an `edit`
        // is: the applied patch is recorded as the view with it, and the
        // change told after it.
        "apply_patch" => {
            return Ok(Event::all(patch::gates_merging(
                None,
                &patch::operations(patch_text(args)?)?,
            )))
        }
        _ => {}
    }
    let whole = match tool {
        "write" => true,
        "edit" => false,
        _ => return Ok(Event::Ignored),
    };
    let path = file_path(tool, args, "output.args")?;
    let edit = args.and_then(|a| Replace::of(a, "oldString", "newString", Some("replaceAll")));
    if let (false, Some(r)) = (whole, edit) {
        return Ok(Event::AboutToReplace {
            path,
            edits: vec![r],
        });
    }
    Ok(Event::AboutToChange { path, whole })
}

/// A bash call's command line, and the directory it runs in when it names
/// one (`workdir`).
fn bash_call(args: Option<&Value>) -> Result<(&str, Option<&Path>), Problem> {
    let command = args
        .and_then(|a| a.get("command"))
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the bash payload has no args.command string"))?;
    let dir = args
        .and_then(|a| a.get("workdir"))
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(Path::new);
    Ok((command, dir))
}

fn patch_text(args: Option<&Value>) -> Result<&str, Problem> {
    args.and_then(|a| a.get("patchText"))
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the apply_patch payload has no args.patchText string"))
}

/// What a bash command showed: `output.output`, what it printed (standard
/// output and error) exactly, "(no output)" for nothing. An output opencode
/// cut (`metadata.truncated`) shows its last lines only: nothing is taken.
fn bash_ran(args: Option<&Value>, output: Option<&Value>) -> Result<Event, Problem> {
    let (command, dir) = bash_call(args)?;
    let truncated = output
        .and_then(|o| o.pointer("/metadata/truncated"))
        .and_then(Value::as_bool)
        != Some(false);
    let shown = output
        .and_then(|o| o.get("output"))
        .and_then(Value::as_str)
        .filter(|_| !truncated)
        .map(|o| if o == "(no output)" { "" } else { o });
    Ok(Event::all(shell::ran(
        command,
        dir,
        shown.map(Output::Exact),
    )))
}

fn after(payload: &Value) -> Result<Event, Problem> {
    let tool = tool(payload)?;
    let args = payload.pointer("/input/args");
    match tool {
        "bash" => return bash_ran(args, payload.get("output")),
        // Called only after a tool that succeeded.
        "apply_patch" => {
            let ops = patch::operations(patch_text(args)?)?;
            return Ok(Event::all(
                ops.into_iter()
                    .filter_map(|op| patch::applied(None, op, true))
                    .collect(),
            ));
        }
        "read" | "edit" | "write" => {}
        _ => return Ok(Event::Ignored),
    }
    let path = file_path(tool, args, "input.args")?;
    let output = payload.get("output").filter(|o| o.is_object());
    let metadata = output.and_then(|o| o.get("metadata"));
    match tool {
        "read" => read(path, args, metadata),
        "write" => {
            let text = args
                .and_then(|a| a.get("content"))
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Problem::new(
                        "the write payload has no input.args.content, so nothing was recorded",
                    )
                })?;
            Ok(Event::Changed(Changed {
                path,
                text: text.to_string(),
                before: None,
                whole: true,
            }))
        }
        _ => {
            let diff = metadata
                .and_then(|m| m.pointer("/filediff/patch").or_else(|| m.get("diff")))
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Problem::new("the edit response has no metadata.filediff.patch, so what it changed is unknown and nothing was recorded")
                })?;
            Ok(Event::Edited(Edited {
                path,
                change: Change::Patch(diff.to_string()),
            }))
        }
    }
}

fn read(path: PathBuf, args: Option<&Value>, metadata: Option<&Value>) -> Result<Event, Problem> {
    let display = metadata
        .and_then(|m| m.get("display"))
        .filter(|d| d.is_object());
    let Some(display) = display else {
        // A directory's listing, an image, a PDF: no file text.
        return Ok(Event::Ignored);
    };
    if display.get("type").and_then(Value::as_str) != Some("file") {
        return Ok(Event::Ignored);
    }
    let text = display.get("text").and_then(Value::as_str).ok_or_else(|| {
        Problem::new("the read response has no metadata.display.text, so nothing was recorded")
    })?;
    let number = |k: &str| display.get(k).and_then(Value::as_u64);
    let start = number("lineStart").unwrap_or(1).max(1);
    let capped = display.get("truncated").and_then(Value::as_bool) != Some(false);
    let asked = args.is_some_and(|a| {
        ["offset", "limit"]
            .iter()
            .any(|k| a.get(*k).is_some_and(|v| !v.is_null()))
    });
    // Only the lines before the first one cut are shown as they are.
    let (text, cut) = match text.split('\n').position(|l| l.ends_with(CUT)) {
        Some(0) => return Ok(Event::Ignored),
        Some(i) => (
            text.split('\n').take(i).collect::<Vec<_>>().join("\n"),
            true,
        ),
        None => (text.to_string(), false),
    };
    if text.is_empty() && number("totalLines") == Some(0) && !asked {
        return Ok(Event::Shown(Shown {
            path,
            text: ShownText::Lines(String::new()),
            offset: 1,
            extent: Extent::Whole,
        }));
    }
    // The last line's newline is not shown: a slice from line 1 that the
    // disk holds whole is the whole file (the store says so), and a file
    // that grew before the hook is not taken as seen whole.
    let extent = if asked {
        Extent::Range
    } else if capped || cut {
        Extent::Start
    } else {
        Extent::Range
    };
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Lines(text),
        offset: start,
        extent,
    }))
}

/// The plugin `fsview-hook install opencode` (or `kilo`) writes, with
/// `@AGENT@` (the agent's name), `@HOOK@` (the absolute path of
/// fsview-hook, as a JSON string) and `@ARGS@` (its extra arguments, a JSON
/// list) filled in.
pub const PLUGIN: &str = r#"// fsview-hook: the @AGENT@ end of fsview's hooks, written by
// `fsview-hook install @AGENT@`. Reinstall (or uninstall) rather than edit:
// it is replaced whole. It hands each hook's objects to `fsview-hook
// @AGENT@` and fails closed for the edit gate.
import { spawn } from "node:child_process";

const HOOK = @HOOK@;
const ARGS = @ARGS@;
const GATED = new Set(["edit", "write", "apply_patch", "bash", "background_process"]);
const RECORDED = new Set(["read", "edit", "write", "apply_patch", "bash"]);

@ASK@

// A session's messages, as opencode's client gives them (an array, or
// `{ data }`); `null` when it cannot.
async function sessionMessages(client, sessionID) {
  try {
    const r = await client.session.messages({ path: { id: sessionID } });
    const messages = Array.isArray(r) ? r : r && r.data;
    return Array.isArray(messages) ? messages : null;
  } catch {
    return null;
  }
}

// The tool calls whose results the part of the conversation a compaction
// kept still holds: the messages from the compaction's tail_start_id up to
// its own message, as opencode rebuilds the conversation after it (a result
// pruned since, "[Old tool result content cleared]", is not held). `null`
// when the messages cannot be had (every view is then released).
async function keptCalls(client, sessionID) {
  const messages = await sessionMessages(client, sessionID);
  if (!messages) return null;
  try {
    let at = -1;
    let tail;
    messages.forEach((m, i) => {
      const part = m.info && m.info.role === "user" && (m.parts || []).find((p) => p.type === "compaction");
      if (part) {
        at = i;
        tail = part.tail_start_id;
      }
    });
    if (at < 0) return null;
    const from = tail === undefined ? -1 : messages.findIndex((m) => m.info && m.info.id === tail);
    if (from < 0 || from >= at) return [];
    const kept = [];
    for (const m of messages.slice(from, at)) {
      for (const p of m.parts || []) {
        const done = p.type === "tool" && p.state && p.state.status === "completed";
        if (done && !prunedPart(p) && typeof p.callID === "string") kept.push(p.callID);
      }
    }
    return kept;
  } catch {
    return null;
  }
}

// The calls whose results opencode pruned ("[Old tool result content
// cleared]", with compaction.prune on), by session, not yet told to fsview;
// and the sessions whose pruning in an earlier process was looked for.
const pruned = new Map();
const looked = new Set();

function prunedPart(p) {
  return !!(p && p.type === "tool" && p.state && p.state.time && p.state.time.compacted && typeof p.callID === "string");
}

// The pruned calls of a session to tell fsview: those heard of since the
// last prompt, and at its first prompt in this process, those the
// session's messages say were pruned before.
async function prunedCalls(client, sessionID) {
  const calls = pruned.get(sessionID) || new Set();
  pruned.delete(sessionID);
  if (!looked.has(sessionID)) {
    looked.add(sessionID);
    for (const m of (await sessionMessages(client, sessionID)) || []) {
      for (const p of m.parts || []) if (prunedPart(p)) calls.add(p.callID);
    }
  }
  return [...calls];
}

// Pruned calls fsview was not told of after all (its answer did not come):
// told with the next event.
function unsent(sessionID, calls) {
  if (!calls.length) return;
  if (!pruned.has(sessionID)) pruned.set(sessionID, new Set());
  for (const c of calls) pruned.get(sessionID).add(c);
}

export const FsviewHook = async ({ directory, client }) => ({
  "tool.execute.before": async (input, output) => {
    if (!GATED.has(input.tool)) return;
    const calls = await prunedCalls(client, input.sessionID);
    const r = await ask({ event: "tool.execute.before", directory, input, output, pruned: calls }, true);
    const a = answer(r);
    if (a === null) {
      unsent(input.sessionID, calls);
      throw new Error("fsview-hook could not check this change, so it is denied: " + why(r));
    }
    if (typeof a.deny === "string") throw new Error(a.deny);
  },
  "tool.execute.after": async (input, output) => {
    // Every tool's result, to tell what changed meanwhile; the output only
    // of the tools whose results fsview records.
    const shown = RECORDED.has(input.tool) ? output : {};
    // An MCP tool's result is its content parts (its `output` is not
    // read), joined by blank lines and then cut past 2,000 lines or
    // 51,200 bytes, with what is added here: fsview is told the room left.
    const mcp = Array.isArray(output.content);
    let room;
    if (mcp) {
      const text = output.content.filter((p) => p && p.type === "text").map((p) => p.text).join("\n\n");
      room = {
        bytes: Math.max(0, 51200 - Buffer.byteLength(text) - 64),
        lines: Math.max(0, 2000 - text.split("\n").length - 2),
      };
    }
    const calls = await prunedCalls(client, input.sessionID);
    const a = answer(await ask({ event: "tool.execute.after", directory, input, output: shown, room, pruned: calls }));
    if (a === null) unsent(input.sessionID, calls);
    if (a === null || typeof a.context !== "string") return;
    if (mcp) output.content.push({ type: "text", text: a.context });
    else output.output = (output.output || "") + "\n\n" + a.context;
  },
  "chat.message": async (input, output) => {
    const first = output.parts && output.parts[0];
    if (!first) return;
    const calls = await prunedCalls(client, input.sessionID);
    const told = calls.length ? { message: output.message, pruned: calls } : { message: output.message };
    const r = await ask({ event: "chat.message", directory, input, output: told });
    const a = answer(r);
    if (a && typeof a.context === "string") {
      output.parts.push({
        id: first.id + "fsview",
        sessionID: first.sessionID,
        messageID: first.messageID,
        type: "text",
        text: a.context,
        synthetic: true,
      });
    }
  },
  event: async ({ event }) => {
    const part = event && event.type === "message.part.updated" && event.properties && event.properties.part;
    if (prunedPart(part)) {
      if (!pruned.has(part.sessionID)) pruned.set(part.sessionID, new Set());
      pruned.get(part.sessionID).add(part.callID);
      return;
    }
    if (!event || event.type !== "session.compacted") return;
    const sessionID = event.properties && event.properties.sessionID;
    const kept = await keptCalls(client, sessionID);
    await ask({ event: "session.compacted", directory, input: { sessionID }, output: kept === null ? {} : { kept } });
  },
});
"#;

/// What a plugin or extension that calls fsview-hook needs to ask it
/// (`ask(payload, gate)`, `gate` before a change: fsview-hook then denies a
/// payload it cannot read), read its answer (`answer(r)`: an object, or `null`
/// when there is none to trust) and say why not (`why(r)`), with `@AGENT@`
/// the subcommand to run: opencode's plugin and pi's extension share it.
pub(crate) const ASK: &str = r#"function ask(payload, gate) {
  return new Promise((resolve) => {
    let child;
    try {
      const args = ["@AGENT@", ...ARGS, ...(gate ? ["--gate"] : [])];
      child = spawn(HOOK, args, { stdio: ["pipe", "pipe", "pipe"] });
    } catch (e) {
      resolve({ error: String((e && e.message) || e) });
      return;
    }
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", (e) => resolve({ error: e.message }));
    child.on("close", (code) => resolve({ code, out, err }));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function answer(r) {
  if (r.error !== undefined || r.code !== 0) return null;
  try {
    const a = r.out.trim() === "" ? {} : JSON.parse(r.out);
    return a !== null && typeof a === "object" ? a : null;
  } catch {
    return null;
  }
}

function why(r) {
  return r.error || (r.err || "").trim().split("\n")[0] || "it exited with " + r.code;
}"#;

/// The first line of every plugin fsview-hook writes for `host`.
fn mark(host: &Host) -> String {
    format!("// fsview-hook: the {} end of fsview's hooks", host.name)
}

/// The plugin for `host`, running `exe` with `args`.
pub fn plugin(host: &Host, exe: &str, args: &[String]) -> String {
    PLUGIN
        .replace("@ASK@", ASK)
        .replace("@AGENT@", host.name)
        .replace("@HOOK@", &Value::from(exe).to_string())
        .replace("@ARGS@", &json!(args).to_string())
}

/// Where `host` finds plugins it loads by itself: `.opencode/plugins/`
/// (`.kilo/plugins/`) at the top of the git work tree (else the current
/// directory), or the user's `$OPENCODE_CONFIG_DIR` (`$KILO_CONFIG_DIR`),
/// else `$XDG_CONFIG_HOME/opencode` (`kilo`), else `~/.config/opencode`
/// (`kilo`), `/plugins/`.
pub fn plugin_file(host: &Host, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
    let dir = match scope {
        Scope::Project => crate::install::work_top(cwd)
            .unwrap_or_else(|| cwd.to_path_buf())
            .join(host.project_dir),
        Scope::User => {
            let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
            env(host.config_env)
                .map(|d| cwd.join(d))
                .or_else(|| env("XDG_CONFIG_HOME").map(|d| cwd.join(d).join(host.config_name)))
                .or_else(|| {
                    env("HOME").map(|h| PathBuf::from(h).join(".config").join(host.config_name))
                })
                .ok_or_else(|| {
                    Problem::new(format!("neither XDG_CONFIG_HOME nor HOME is set, so {}'s config directory cannot be found; use --project", host.name))
                })?
        }
        Scope::Local => {
            return Err(Problem::new(format!(
                "{0} has no local plugin directory; use --project ({1}/plugins/) or --user (~/.config/{2}/plugins/)",
                host.name, host.project_dir, host.config_name
            )))
        }
    };
    Ok(dir.join("plugins").join("fsview.js"))
}

/// `host`'s plugin: a file of fsview-hook's own, so nothing of the user's
/// is touched; a file of that name fsview-hook did not write is left
/// alone.
impl Installer for Host {
    fn agent(&self) -> &'static str {
        self.name
    }

    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
        plugin_file(self, scope, cwd)
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }

    fn events(&self) -> Vec<&'static str> {
        vec![
            "tool.execute.before",
            "tool.execute.after",
            "chat.message",
            "session.compacted",
        ]
    }

    fn next_step(&self, _scope: Scope, _cwd: &Path) -> Option<String> {
        Some(if self.name == "kilo" {
            "Kilo Code CLI loads the plugin when it next starts; it needs no other setting.".into()
        } else {
            "opencode loads the plugin when it next starts (not with --pure); it needs no other setting.".into()
        })
    }

    fn parts(&self, scope: Scope, cwd: &Path, run: &Run) -> Result<Vec<Box<dyn Part>>, Problem> {
        let mark = mark(self);
        Ok(vec![Box::new(OwnFile {
            file: plugin_file(self, scope, cwd)?,
            base: self.base(scope, cwd)?,
            text: plugin(self, &run.exe.to_string_lossy(), &run.args),
            ours: Box::new(move |now| now.starts_with(&mark)),
            executable: false,
        })])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Kilo Code CLI 7.7.7's background_process (its tool's parameters:
    // action, command, workdir, ...).
    #[test]
    fn a_background_process_started_is_gated_like_bash() {
        let call = |args: Value| {
            before(&json!({"event": "tool.execute.before", "directory": "/w",
                "input": {"tool": "background_process", "sessionID": "s", "callID": "c"},
                "output": {"args": args}}))
        };
        assert_eq!(
            call(json!({"action": "start", "command": "node gen.js > out.json"}))
                .unwrap()
                .gates(),
            Event::Each(vec![Event::shell_write("out.json", true)])
        );
        assert_eq!(
            call(json!({"action": "start", "command": "sed -i s/a/b/ a.txt", "workdir": "/w/sub"}))
                .unwrap()
                .gates(),
            Event::Each(vec![Event::shell_replace("/w/sub/a.txt", "a", "b")])
        );
        assert_eq!(
            call(json!({"action": "start", "command": "npm run dev"}))
                .unwrap()
                .gates(),
            Event::Ignored
        );
        assert_eq!(
            call(json!({"action": "stop", "id": "bgp1"})).unwrap(),
            Event::Ignored
        );
        assert!(plugin(&KILO, "/bin/fsview-hook", &[]).contains(
            r#"const GATED = new Set(["edit", "write", "apply_patch", "bash", "background_process"]);"#
        ));
    }

    #[test]
    fn the_plugin_names_the_hook_as_json() {
        let p = plugin(
            &KILO,
            "/opt/it's here/fsview-hook",
            &["--sid".into(), "a\"b".into()],
        );
        assert!(p.starts_with("// fsview-hook: the kilo end of fsview's hooks"));
        assert!(p.contains(r#"const args = ["kilo", ...ARGS, ...(gate ? ["--gate"] : [])];"#));
        assert!(p.contains(r#"const HOOK = "/opt/it's here/fsview-hook";"#));
        assert!(p.contains(r#"const ARGS = ["--sid","a\"b"];"#));
        assert!(!p.contains("@HOOK@") && !p.contains("@ARGS@") && !p.contains("@AGENT@"));
    }

    /// At `session.compacted` the plugin asks opencode for the session's
    /// messages (its `client`) and sends the calls the kept tail holds.
    #[test]
    fn the_plugin_sends_the_calls_a_compaction_kept() {
        let p = plugin(&KILO, "/bin/fsview-hook", &[]);
        assert!(p.contains("export const FsviewHook = async ({ directory, client }) => ({"));
        assert!(p.contains("const r = await client.session.messages({ path: { id: sessionID } });"));
        assert!(p.contains(
            "    const kept = await keptCalls(client, sessionID);\n    await ask({ event: \"session.compacted\", directory, input: { sessionID }, output: kept === null ? {} : { kept } });"
        ));
        assert!(!p.contains("/tmp/"));
        // Pruned results: heard of as parts' updates, looked for in the
        // messages at a session's first prompt in the process, sent with
        // the next user message.
        assert!(p.contains("const part = event && event.type === \"message.part.updated\" && event.properties && event.properties.part;"));
        assert!(p.contains("    const calls = await prunedCalls(client, input.sessionID);"));
        assert!(p.contains("{ message: output.message, pruned: calls }"));
    }
}
