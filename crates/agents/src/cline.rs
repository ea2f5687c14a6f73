//! Cline CLI's hook files, as fsview's common events.
//!
//! Fields as Cline CLI 3.0.65 sends them (fixtures captured from the real
//! binary, run headless against a local OpenAI-compatible server:
//! `tests/fixtures/hooks/cline-3.0.65/`). Cline runs every file named by
//! an event (`PreToolUse`, `PostToolUse`, ...; no extension or `.sh`,
//! `.bash`, `.js`, `.py`, ..., its shebang honoured) in the project's
//! `.clinerules/hooks/` (also `.cline/hooks/`, `~/.cline/hooks/`,
//! `--hooks-dir`), hands it the payload on stdin and reads a JSON answer
//! from its stdout; PreToolUse and PostToolUse wait for it (120 s), the
//! others run detached and their answers are dropped. A payload names its
//! event in `hookName` (`tool_call`, `tool_result`, `agent_start`, ...)
//! and carries `taskId`, `sessionContext.rootSessionId` (the session),
//! `workspaceRoots` (the first is the working directory), `agent_id` and
//! `parent_agent_id` (a subagent's: `spawn_agent`), and no transcript.
//!
//! - `tool_call` (PreToolUse) of `editor` (`path`, `old_text`, `new_text`,
//!   `insert_line`): a targeted edit, or, without `old_text`, the creation
//!   of a missing file (the tool refuses an existing one): a whole-file
//!   write. Of `apply_patch` (`input`, a patch in the apply_patch format):
//!   the gate for each file. Of `run_commands` (`commands`: strings, or
//!   `{command, args}`): the gate for each file a command writes
//!   ([`shell::about_to_run`]).
//! - A refusal: Cline has no answer that skips one call. `cancel` ends the
//!   whole task without telling the model, a failing hook is ignored. So
//!   the answer is `overrideInput` (the tool runs with an input it rejects
//!   before touching anything: its validation fails) and `context` (the
//!   model receives the refusal as `<hook_context source="PreToolUse" ...>`
//!   right after the tool's error).
//! - `tool_result` (PostToolUse) of `read_files`: `output` is a list, one
//!   `{query, result, success}` per file asked, `result` the lines as
//!   `N | line` (numbers padded to the widest), CRLF as LF, a line over
//!   2,000 characters cut (` [line truncated]`), at most 2,000 lines or
//!   48,000 characters, then `\n\n[Showing lines A-B of N. Use
//!   start_line/end_line to read other sections.]`. Of `editor`: the
//!   replacement made (`old_text` by `new_text`, once), or the file
//!   created with `new_text`; an insertion (`insert_line`: `new_text`'s
//!   lines put before that line, "Inserted content at line N in PATH.")
//!   applied to the agent's last view as a diff.
//!   Of `run_commands`: each command's output (`result`, stdout and stderr
//!   as printed), for the shell reader. The reminder of files changed
//!   since they were seen goes with every tool result as
//!   `contextModification` (headless Cline fires no prompt hook that
//!   waits).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::event::{
    Answer, Change, Changed, Edited, Event, Extent, Replace, Shown, ShownText, Stage,
};
use crate::install::{Installer, OwnFile, Part, Run, Scope};
use crate::patch::{self, FileOp};
use crate::shell::{self, Output};
use crate::{payload, Agent, Parsed, Problem, Reply};

/// Cline CLI.
pub struct Cline;

type Failed = (Stage, Problem);

/// The input a refused call runs with: no tool fsview gates accepts it,
/// so the tool fails before it touches anything.
pub fn harmless_input() -> Value {
    json!({"fsview": "refused; see the hook_context after this result"})
}

/// A refusal, in Cline's answer: the call made harmless, the reason told.
pub fn refusal(reason: &str) -> Value {
    json!({"overrideInput": harmless_input(), "context": reason})
}

impl Agent for Cline {
    /// Cline 3.0.65 cuts a hook's context after 50,000 characters ("[hook
    /// context truncated: exceeded 50000 characters]").
    fn context_limit(&self) -> Option<(usize, &'static str)> {
        Some((50_000, "Cline cuts hook context after 50,000 characters"))
    }

    fn refuses_in_context(&self) -> bool {
        true
    }

    /// `contextModification` after a tool reaches the model, and an edit
    /// is recorded as its replacement.
    fn tells_after_change(&self) -> bool {
        true
    }

    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload = payload::object(payload, || {
            "the hook payload is not a JSON object; fsview-hook cline reads one Cline hook payload on stdin".into()
        })?;
        let name = payload
            .get("hookName")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                (
                    Stage::Other,
                    Problem::new("the payload has no hookName string"),
                )
            })?;
        let stage = match name {
            "tool_call" => Stage::AboutToChange,
            "tool_result" => Stage::Shown,
            "prompt_submit" => Stage::Prompt,
            "agent_start" | "agent_resume" => Stage::SessionStart,
            other => {
                return Err((
                    Stage::Other,
                    Problem::new(format!("hook {other:?} is not one fsview-hook cline answers; install it as PreToolUse and PostToolUse only")),
                ))
            }
        };
        let mut who = who(&payload, name).map_err(|p| (stage, p))?;
        let event = match stage {
            Stage::AboutToChange => {
                who.call = call_id(&payload, "tool_call");
                pre_tool_use(&payload)
            }
            Stage::Shown => {
                who.call = call_id(&payload, "tool_result");
                post_tool_use(&payload, &who.cwd).map(|e| match e {
                    Event::Ignored => Event::ToolDone,
                    e => Event::Each(vec![e, Event::ToolDone]),
                })
            }
            Stage::Prompt => Ok(Event::Prompt),
            _ => Ok(Event::Ignored),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event })
    }

    fn reply(&self, stage: Stage, answer: Answer) -> Reply {
        let out = match answer {
            Answer::Nothing | Answer::Allow(_) | Answer::Short(_, None) => return Reply::nothing(),
            Answer::Deny(reason) => refusal(&reason),
            Answer::Context(text) | Answer::Short(_, Some(text)) => {
                let _ = stage;
                json!({ "contextModification": text })
            }
        };
        Reply::json(&out)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        if closed && stage == Stage::AboutToChange {
            return Reply::unchecked(msg, refusal);
        }
        // Cline ignores a hook's exit code: nothing else would be heard.
        Reply::error(msg, 0)
    }

    fn loads_itself(&self, name: &str) -> bool {
        matches!(name, "AGENTS.md" | ".clinerules")
    }
}

fn who(payload: &Value, event: &str) -> Result<crate::event::Who, Problem> {
    const FIELDS: payload::Fields = payload::Fields {
        session: "/sessionContext/rootSessionId",
        cwd: "/workspaceRoots/0",
        agent: None,
        call: None,
        transcript: None,
        prompt: None,
    };
    let mut who = payload::who(payload, event, &FIELDS)?;
    // Every agent has an agent_id; a subagent has a parent.
    let parent = payload
        .get("parent_agent_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    if parent.is_some() {
        who.agent = payload
            .get("agent_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
    }
    Ok(who)
}

fn call_id(payload: &Value, key: &str) -> Option<String> {
    payload
        .get(key)
        .and_then(|c| c.get("id"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn tool<'a>(payload: &'a Value, key: &str) -> Result<(&'a str, &'a Value), Problem> {
    let call = payload
        .get(key)
        .filter(|v| v.is_object())
        .ok_or_else(|| Problem::new(format!("the payload has no {key} object")))?;
    let name = call
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new(format!("the payload has no {key}.name string")))?;
    Ok((name, call.get("input").unwrap_or(&Value::Null)))
}

fn path_of(tool: &str, input: &Value) -> Result<PathBuf, Problem> {
    input
        .get("path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Problem::new(format!("the {tool} input has no path string")))
}

fn present(input: &Value, key: &str) -> bool {
    input.get(key).is_some_and(|v| !v.is_null())
}

/// The commands of a run_commands input, each as a shell command line.
fn commands(input: &Value) -> Option<Vec<String>> {
    let one = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => {
                let c = o.get("command").and_then(Value::as_str)?;
                let mut line = crate::install::shell_quote(c);
                for a in o
                    .get("args")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    line.push(' ');
                    line.push_str(&crate::install::shell_quote(a.as_str()?));
                }
                Some(line)
            }
            _ => None,
        }
    };
    let list = match input {
        Value::String(_) => vec![one(input)?],
        Value::Array(a) => a.iter().map(one).collect::<Option<Vec<_>>>()?,
        Value::Object(o) => match o.get("commands") {
            Some(Value::Array(a)) => a.iter().map(one).collect::<Option<Vec<_>>>()?,
            Some(v) => vec![one(v)?],
            None if o.contains_key("args") => vec![one(input)?],
            None => vec![one(o.get("command").or_else(|| o.get("cmd"))?)?],
        },
        _ => return None,
    };
    Some(list)
}

fn pre_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (name, input) = tool(payload, "tool_call")?;
    match name {
        "editor" => {
            let path = path_of(name, input)?;
            let edit = Replace::of(input, "old_text", "new_text", None);
            if let (Some(r), false) = (edit, present(input, "insert_line")) {
                if !r.old.is_empty() {
                    return Ok(Event::AboutToReplace {
                        path,
                        edits: vec![r],
                    });
                }
            }
            Ok(Event::AboutToChange {
                path,
                // Without old_text (and no insert_line) the tool creates a
                // missing file, and refuses an existing one.
                whole: !present(input, "old_text") && !present(input, "insert_line"),
            })
        }
        "apply_patch" => apply_patch(input),
        "run_commands" => {
            let list = commands(input).ok_or_else(|| {
                Problem::new("the run_commands input holds no commands fsview-hook can read")
            })?;
            Ok(Event::all(
                list.iter()
                    .flat_map(|c| shell::about_to_run(c, None))
                    .collect(),
            ))
        }
        _ => Ok(Event::Ignored),
    }
}

/// apply_patch: a gate for each file of the patch.
fn apply_patch(input: &Value) -> Result<Event, Problem> {
    let text = match input {
        Value::String(s) => Some(s.as_str()),
        _ => input.get("input").and_then(Value::as_str),
    };
    let ops = text.and_then(patch::parse).ok_or_else(|| {
        Problem::new("the apply_patch input holds no patch in the apply_patch format (*** Begin Patch, *** Update File: PATH, ...)")
    })?;
    let mut events = Vec::new();
    for op in &ops {
        events.push(Event::AboutToChange {
            path: op.path().clone(),
            whole: !matches!(op, FileOp::Update { .. }),
        });
        if let FileOp::Update { to: Some(to), .. } = op {
            events.push(Event::AboutToChange {
                path: to.clone(),
                whole: true,
            });
        }
    }
    Ok(Event::Each(events))
}

fn post_tool_use(payload: &Value, cwd: &Path) -> Result<Event, Problem> {
    let (name, input) = tool(payload, "tool_result")?;
    let result = &payload["tool_result"];
    // A call that failed (a refused one too): nothing shown or changed.
    if result.get("error").is_some_and(|e| !e.is_null()) {
        return Ok(Event::Ignored);
    }
    let output = result.get("output").unwrap_or(&Value::Null);
    match name {
        "read_files" => Ok(read_files(input, output, cwd)),
        "editor" => editor(input, output),
        "run_commands" => Ok(run_commands(input, output)),
        _ => Ok(Event::Ignored),
    }
}

/// The files a read_files input asks for, in order: path, first line,
/// last line.
fn files(input: &Value) -> Vec<(String, Option<u64>, Option<u64>)> {
    let one = |v: &Value| match v {
        Value::String(s) => Some((s.clone(), None, None)),
        Value::Object(o) => {
            let path = ["path", "file_path", "filePath"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str))?;
            let n = |k: &str| {
                o.get(k).and_then(|v| {
                    v.as_u64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                })
            };
            Some((path.to_string(), n("start_line"), n("end_line")))
        }
        _ => None,
    };
    let list: Vec<&Value> = match input {
        Value::Array(a) => a.iter().collect(),
        Value::Object(o) => match o
            .get("files")
            .or_else(|| o.get("paths"))
            .or_else(|| o.get("file_paths"))
        {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(v) => vec![v],
            None => vec![input],
        },
        v => vec![v],
    };
    list.into_iter().filter_map(one).collect()
}

/// What the read tool's trailer says when it stopped early.
const SHOWING: &str = "\n\n[Showing lines ";

fn read_files(input: &Value, output: &Value, cwd: &Path) -> Event {
    let asked = files(input);
    let Some(results) = output.as_array() else {
        return Event::Ignored;
    };
    // One result per file asked, in order.
    if results.len() != asked.len() {
        return Event::Ignored;
    }
    let mut events = Vec::new();
    for ((path, start, end), r) in asked.into_iter().zip(results) {
        if r.get("success").and_then(Value::as_bool) != Some(true) {
            continue;
        }
        let Some(text) = r.get("result").and_then(Value::as_str) else {
            continue; // an image: parts, no text
        };
        // Cut by Cline: the head's whole lines, as a read that stopped
        // early (none when no line is whole).
        let (body, cut) = match shown_head(text) {
            None => trailer(text),
            Some(head) => match head.rfind('\n') {
                Some(i) => (&head[..i], true),
                None => continue,
            },
        };
        events.extend(numbered(PathBuf::from(path), body, cut, start, end, cwd));
    }
    Event::all(events)
}

/// How many characters of one string of a tool's result Cline 3.0.65 sends
/// the model (`maxToolResultChars`): 8,000, or what
/// `CLINE_MESSAGE_BUILDER_MAX_TOOL_RESULT_CHARS` says (a positive integer
/// at its start, as `parseInt` reads it). The hook runs in Cline's
/// environment, so it reads the same variable.
fn result_limit() -> usize {
    std::env::var("CLINE_MESSAGE_BUILDER_MAX_TOOL_RESULT_CHARS")
        .ok()
        .and_then(|v| leading_int(&v))
        .filter(|&n| n > 0)
        .unwrap_or(8_000)
}

/// The integer JavaScript's `parseInt(v, 10)` reads at the start of `v`.
fn leading_int(v: &str) -> Option<usize> {
    let v = v.trim_start();
    let (negative, digits) = match v.as_bytes().first() {
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, v),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    let n: usize = digits[..end].parse().ok()?;
    (!negative || n == 0).then_some(n)
}

/// The start of `text` the model is sent, when Cline cuts it: before each
/// request Cline 3.0.65 cuts every string of a tool's result (each file's
/// `result` of a read, each command's output) over [`result_limit`]
/// characters (JavaScript's, UTF-16 units) in the middle: its first and
/// last J characters around "\n\n...[truncated N chars]...\n\n"
/// (`truncateMiddle`), J as it reckons it. The hooks get it whole, and
/// nothing records the cut. `None` when it is sent whole. Of the cut one
/// fsview holds the head (its whole lines): the tail, the file's end
/// without line numbers at its start, is not recorded.
fn shown_head(text: &str) -> Option<&str> {
    let limit = result_limit();
    let len = text.encode_utf16().count();
    if len <= limit {
        return None;
    }
    let marker = |n: usize| {
        format!("\n\n...[truncated {n} chars]...\n\n")
            .encode_utf16()
            .count()
    };
    let first = limit.saturating_sub(marker(len - limit)) / 2;
    let omitted = len.saturating_sub(first * 2);
    let keep = limit.saturating_sub(marker(omitted)) / 2;
    // `keep` UTF-16 units from the start (a surrogate pair cut in two is
    // cut before it).
    let mut units = 0;
    let end = text
        .char_indices()
        .find(|(_, c)| {
            units += c.len_utf16();
            units > keep
        })
        .map_or(text.len(), |(i, _)| i);
    Some(&text[..end])
}

/// A read's text without the trailer it ends with when it stopped early,
/// and whether it did.
fn trailer(text: &str) -> (&str, bool) {
    match text.find(SHOWING) {
        Some(i) if text[i..].ends_with(" Use start_line/end_line to read other sections.]") => {
            (&text[..i], true)
        }
        _ => (text, false),
    }
}

/// One file's `N | line` lines (its trailer taken off, `cut` when the read
/// stopped early or Cline cut it) as a view.
/// The lines come without their newlines: whether the last one had one
/// is not said, so a whole read takes it from the disk.
fn numbered(
    path: PathBuf,
    body: &str,
    cut: bool,
    start: Option<u64>,
    end: Option<u64>,
    cwd: &Path,
) -> Option<Event> {
    let ranged = start.is_some_and(|s| s > 1) || end.is_some();
    if body.is_empty() {
        // An empty file read whole; a range past the end shows nothing.
        return (!ranged && !cut).then(|| {
            Event::Shown(Shown {
                path,
                text: ShownText::Lines(String::new()),
                offset: 1,
                extent: Extent::Whole,
            })
        });
    }
    let mut first = None;
    let mut lines = Vec::new();
    let mut shortened = false;
    for line in body.split('\n') {
        let (n, rest) = line.split_once(" | ")?;
        let n: u64 = n.trim_start().parse().ok()?;
        if first.is_none() {
            first = Some(n);
        }
        if rest.chars().count() == 2000 + " [line truncated]".chars().count()
            && rest.ends_with(" [line truncated]")
        {
            shortened = true;
        }
        lines.push(rest);
    }
    let mut text = lines.join("\n");
    let extent = if ranged {
        Extent::Range
    } else if cut {
        Extent::Start
    } else {
        Extent::Whole
    };
    if extent == Extent::Whole && std::fs::read(cwd.join(&path)).is_ok_and(|b| b.ends_with(b"\n")) {
        text.push('\n');
    }
    Some(Event::Shown(Shown {
        path,
        text: if shortened {
            ShownText::Processed(text)
        } else {
            ShownText::Lines(text)
        },
        offset: first?,
        extent,
    }))
}

fn editor(input: &Value, output: &Value) -> Result<Event, Problem> {
    if output.get("success").and_then(Value::as_bool) != Some(true) {
        return Ok(Event::Ignored);
    }
    let said = output.get("result").and_then(Value::as_str).unwrap_or("");
    let path = path_of("editor", input)?;
    let new = input.get("new_text").and_then(Value::as_str);
    if said.starts_with("File created successfully at: ") {
        let Some(text) = new else {
            return Ok(Event::Ignored);
        };
        return Ok(Event::Changed(Changed {
            path,
            text: text.to_string(),
            before: None,
            whole: true,
        }));
    }
    if let Some(at) = insert_line(input) {
        return Ok(match new {
            Some(new) if said.starts_with("Inserted content at line ") => Event::Edited(Edited {
                path,
                change: Change::Patch(insertion(at, new)),
            }),
            _ => Event::Ignored,
        });
    }
    match (input.get("old_text").and_then(Value::as_str), new) {
        (Some(old), Some(new)) if said.starts_with("Edited ") => Ok(Event::Edited(Edited {
            path,
            change: Change::Replace {
                old: old.to_string(),
                new: new.to_string(),
                all: false,
            },
        })),
        _ => Ok(Event::Ignored),
    }
}

/// An editor input's `insert_line` (a number, or a string of one: Cline
/// coerces it), when it is a line, 1 or more.
fn insert_line(input: &Value) -> Option<u64> {
    input
        .get("insert_line")
        .and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        })
        .filter(|&n| n >= 1)
}

/// What Cline's editor does with `insert_line` AT, as a unified diff: the
/// lines of `text` (split at `\r\n` or `\n`, as Cline splits them) put
/// before line AT, each ending a line. Applied to the agent's last view
/// (an insertion outside a range view does not apply to it), and held
/// against the disk like any change: where Cline did otherwise (it joins
/// the file's lines again with one line ending, `\r\n` when the file held
/// one; after the last line of a file with no final newline), the view is
/// not taken as fresh and the next edit is told the difference.
fn insertion(at: u64, text: &str) -> String {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut diff = format!("@@ -{},0 +{at},{} @@\n", at - 1, lines.len());
    for l in lines {
        diff.push('+');
        diff.push_str(l);
        diff.push('\n');
    }
    diff
}

fn run_commands(input: &Value, output: &Value) -> Event {
    let (Some(list), Some(results)) = (commands(input), output.as_array()) else {
        return Event::Ignored;
    };
    if list.len() != results.len() {
        return Event::Ignored;
    }
    let mut events = Vec::new();
    for (command, r) in list.iter().zip(results) {
        let ok = r.get("success").and_then(Value::as_bool) == Some(true);
        let text = r.get("result").and_then(Value::as_str).filter(|_| ok);
        let output = text.map(|t| match shown_head(t) {
            None => Output::Exact(t),
            Some(head) => Output::Head {
                text: head,
                trimmed: false,
            },
        });
        events.extend(shell::ran(command, None, output));
    }
    Event::all(events)
}

/// The events fsview-hook answers, as Cline names its hook files.
pub const EVENTS: &[&str] = &["PreToolUse", "PostToolUse"];

/// The mark every hook file fsview-hook writes holds.
const MARK: &str = "# Written by `fsview-hook install cline`";

/// Where Cline looks for hook files: the project's `.clinerules/hooks/`
/// (at the top of the git work tree, else the current directory), the
/// user's `~/.cline/hooks/`.
pub fn hooks_dir(scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
    match scope {
        Scope::Project => Ok(crate::install::work_top(cwd)
            .unwrap_or_else(|| cwd.to_path_buf())
            .join(".clinerules")
            .join("hooks")),
        Scope::User => std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".cline").join("hooks"))
            .ok_or_else(|| {
                Problem::new("HOME is not set, so the user's hooks cannot be found; use --project")
            }),
        Scope::Local => Err(Problem::new(
            "Cline has no local hooks folder; use --project (.clinerules/hooks/) or --user (~/.cline/hooks/)",
        )),
    }
}

/// The file name of fsview-hook's hook for `event` (a `.bash` file, so a
/// user's own `PreToolUse` or `PreToolUse.sh` is left alone: Cline runs
/// them all).
fn file_name(event: &str) -> String {
    format!("{event}.bash")
}

/// The hook file for `event`: fsview-hook, by its absolute path; when it
/// is gone, the file answers itself: a change refused (fail closed), the
/// rest let through.
pub fn script(event: &str, run: &Run) -> String {
    let exe = crate::install::shell_quote(&run.exe.to_string_lossy());
    let command = run.command("cline");
    let missing = if event == "PreToolUse" {
        let reason = format!(
            "fsview-hook could not check this change, so it is denied: {} is missing (reinstall fsview, or run `fsview-hook install cline --uninstall`)",
            run.exe.to_string_lossy()
        );
        let answer = refusal(&reason).to_string();
        format!(
            "payload=$(cat)\n\
             case $payload in\n  \
             *'\"preToolUse\":{{\"toolName\":\"editor\"'* | *'\"preToolUse\":{{\"toolName\":\"apply_patch\"'* | *'\"preToolUse\":{{\"toolName\":\"run_commands\"'*)\n    \
             printf '%s\\n' {} ;;\n\
             esac\n",
            crate::install::shell_quote(&answer)
        )
    } else {
        "cat > /dev/null\n".to_string()
    };
    format!(
        "#!/bin/sh\n\
         {MARK} (Cline {event} hook); `fsview-hook install cline --uninstall` removes it.\n\
         if [ -x {exe} ]; then\n  exec {command}\nfi\n\
         {missing}"
    )
}

fn ours(text: &str) -> bool {
    text.lines().nth(1).is_some_and(|l| l.starts_with(MARK))
}

/// Cline's hook files, `.clinerules/hooks/PreToolUse.bash` and
/// `PostToolUse.bash`: files of fsview-hook's own.
pub struct ClineInstaller;

impl Installer for ClineInstaller {
    fn agent(&self) -> &'static str {
        "cline"
    }

    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
        Ok(hooks_dir(scope, cwd)?.join(file_name(EVENTS[0])))
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }

    fn events(&self) -> Vec<&'static str> {
        EVENTS.to_vec()
    }

    fn parts(&self, scope: Scope, cwd: &Path, run: &Run) -> Result<Vec<Box<dyn Part>>, Problem> {
        let dir = hooks_dir(scope, cwd)?;
        let base = self.base(scope, cwd)?;
        Ok(EVENTS
            .iter()
            .map(|e| {
                Box::new(OwnFile {
                    file: dir.join(file_name(e)),
                    base: base.clone(),
                    text: script(e, run),
                    ours: Box::new(ours),
                    executable: true,
                }) as Box<dyn Part>
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As Cline CLI 3.0.65 sent it (`scripts/e2e-cline read-cut-views`):
    /// a read of 240 lines, whose `result` (25,091 characters) reached the
    /// model as its first 3,983 and last 3,983 characters around
    /// "...[truncated 17125 chars]...".
    #[test]
    fn a_result_over_8000_characters_is_sent_cut_in_the_middle() {
        let text = (1..=240)
            .map(|i| format!("{i:>3} | big.txt line {i}: {}", "x".repeat(80)))
            .collect::<Vec<_>>()
            .join("\n");
        let head = shown_head(&text).unwrap();
        assert!(head.ends_with(&format!(" 39 | big.txt line 39: {}", "x".repeat(17))));
        assert_eq!(text.len() - 2 * head.len(), 17125);
        assert_eq!(shown_head(&text[..8000]), None);
        // Counted in UTF-16 units: 4,000 characters of 2 units each.
        assert!(shown_head(&"😀".repeat(4000)).is_none());
        assert!(shown_head(&"😀".repeat(4001)).is_some_and(|h| h.len() % 4 == 0));
    }

    #[test]
    fn the_limit_is_read_as_parse_int_reads_it() {
        assert_eq!(leading_int("12000"), Some(12000));
        assert_eq!(leading_int("  500abc"), Some(500));
        assert_eq!(leading_int("+7"), Some(7));
        assert_eq!(leading_int("-5"), None);
        assert_eq!(leading_int("abc"), None);
        assert_eq!(leading_int(""), None);
    }
}
