//! gemini-cli's command hooks, as fsview's common events.
//!
//! Fields as gemini-cli 0.61.0 sends them (fixtures captured from the real
//! binary: `tests/fixtures/hooks/gemini-0.61.0/`). Every payload carries
//! `session_id` (fsview's session), `cwd`, `hook_event_name`,
//! `transcript_path` and `timestamp`.
//!
//! - `BeforeTool` of `replace` (a targeted edit of `tool_input.file_path`)
//!   and `write_file` (a whole-file write): the gate. A refusal is
//!   `{"decision": "deny", "reason": R}`, which the model receives as "Tool
//!   execution blocked: R". gemini-cli allows a change when a hook exits 1,
//!   so fsview never does; a gate that cannot decide denies (exit 0 with
//!   the deny), and a hook that cannot start blocks.
//! - `AfterTool` of `read_file`: `tool_response.llmContent` is what the
//!   model got. A whole file is its text as is (lines joined by `\n`, CRLF
//!   as LF, no byte-order mark); a part starts with a banner ending
//!   `Status: Showing lines A-B of N total lines.` … `--- FILE CONTENT
//!   (truncated) ---`, then lines A to B (without the last newline; N counts
//!   the empty piece after a final newline). Without `start_line` or
//!   `end_line` only the first 2,000 lines are shown (a `start` view);
//!   lines over 2,000 characters are shortened (`returnDisplay` says "some
//!   lines were shortened": a `processed` view). Instruction files
//!   gemini-cli discovers on the way ("--- Newly Discovered Project Context
//!   ---") are cut off the end. A failed tool (`tool_response.error`)
//!   showed nothing.
//! - `AfterTool` of `replace` and `write_file`: `returnDisplay.newContent`
//!   is what the file now holds, after `originalContent`.
//! - A `replace` of a file changed since the model's whole read, 3 or more
//!   lines from that change (a formatter's pass racing the model's edit),
//!   is merged (issue 41): BeforeTool lets it through (gemini-cli takes no
//!   context before a tool), gemini-cli applies it to the file as it is
//!   (its `originalContent` then is not the model's view, so the view is
//!   kept as it was), and the change is told after its result, whole.
//! - `AfterTool` of any tool: what changed meanwhile is told there, as
//!   `additionalContext` (appended to the tool's result in `<hook_context>`,
//!   its `<` and `>` turned into `&lt;` and `&gt;`: context holding either
//!   is sent with its `&` escaped too and a line saying so, so that the
//!   model gets its exact HTML escape, [`crate::html_escaped`]). A refusal's reason
//!   reaches the model unescaped, so a
//!   `modified` refusal carries the whole change when it can. No hook answer
//!   replaces a read's result but as a failed call ("Tool result blocked:
//!   REASON"), so an unchanged re-read is answered short only when asked
//!   (`--short-reads on`), that way.
//! - `SessionStart` (`source`: startup, resume, clear): gemini-cli loads the
//!   GEMINI.md files itself and no payload says which, so nothing is
//!   recorded of them (an edit of one needs a read first). Context
//!   (`hookSpecificOutput.additionalContext`) is put in front of the prompt,
//!   where gemini-cli reads the files its `@` tokens name into it (an
//!   instruction file with an `@` is left out, said so, rather than shown
//!   altered), and escaped as after a tool. A resumed
//!   session does not hold the first prompt any more, so the context is
//!   sent again on resume.
//! - `BeforeTool` / `AfterTool` of `invoke_agent`: a subagent runs in the
//!   model's turn, and its own calls fire the hooks with the
//!   conversation's `session_id` and nothing of their own: between the two
//!   they are the subagent's ([`Agent::delegates`]), with views of its own
//!   (it starts with none), and at its end the parent is told what changed
//!   meanwhile (additionalContext of AfterTool).
//! - `PreCompress` is not wired: it fires before every model call, whether
//!   or not the history is then compressed, and no hook after says it was
//!   (a manual `/compress` is interactive only). The transcript says it
//!   ([`GeminiTranscript`], read from `transcript_path` at every hook): a
//!   compression releases every view of the conversation.
//! - A hook that fails open says so in `systemMessage` (gemini-cli takes a
//!   lone line on stderr of a hook that exits 0 for an "allow"); a hook
//!   that cannot start blocks, so the installer makes those that must fail
//!   open exit 0 then.
//! - `BeforeAgent`: the files the prompt's `@path`s attached (gemini-cli
//!   reads them itself and puts their text, trimmed at both ends, in the
//!   prompt; a file over 2,000 lines shows its start), each a view; then
//!   the reminder of changed files, as additionalContext
//!   (a part after the prompt, not read for `@` tokens, escaped as after
//!   a tool).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::event::{Answer, Changed, Event, Extent, Replace, Shown, ShownText, Stage, Start, Who};
use crate::install::{Hook, Installer, Scope};
use crate::shell::{self, Output};
use crate::{mention, payload, Agent, Parsed, Problem, Reply};

/// gemini-cli.
pub struct Gemini;

type Failed = (Stage, Problem);

/// The tool that runs a subagent in the model's turn; the subagent's own
/// calls fire the hooks with the conversation's ids and nothing of their
/// own.
const SUBAGENT_TOOL: &str = "invoke_agent";

const JIT_CONTEXT: &str = "\n\n--- Newly Discovered Project Context ---\n";
const JIT_CONTEXT_END: &str = "\n--- End Project Context ---";
const TRUNCATED: &str = "\nIMPORTANT: The file content has been truncated.\n";
const BANNER_STATUS: &str = "Status: Showing lines ";
const BANNER_END: &str = "--- FILE CONTENT (truncated) ---\n";

fn problem(stage: Stage, msg: impl Into<String>) -> Failed {
    (stage, Problem::new(msg))
}

impl Agent for Gemini {
    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload: Value = serde_json::from_slice(payload).map_err(|e| {
            problem(
                Stage::Other,
                format!("the hook payload is not JSON ({e}); fsview-hook gemini reads one gemini-cli hook payload on stdin"),
            )
        })?;
        let name = payload
            .get("hook_event_name")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                problem(
                    Stage::Other,
                    "the hook payload has no hook_event_name string; fsview-hook gemini reads one gemini-cli hook payload on stdin",
                )
            })?;
        let stage = match name {
            "BeforeTool" => Stage::AboutToChange,
            "AfterTool" => Stage::Shown,
            "SessionStart" => Stage::SessionStart,
            "BeforeAgent" => Stage::Prompt,
            other => {
                return Err(problem(
                    Stage::Other,
                    format!("hook event {other:?} is not one fsview-hook answers; wire it to BeforeTool, AfterTool, SessionStart and BeforeAgent only"),
                ))
            }
        };
        let who = who(&payload, name).map_err(|p| (stage, p))?;
        let event = match stage {
            Stage::AboutToChange => before_tool(&payload),
            // After any tool, what changed meanwhile is told there.
            Stage::Shown => after_tool(&payload, &who.cwd).map(|e| Event::AfterTool(Box::new(e))),
            Stage::SessionStart => Ok(Event::SessionStart(
                match payload.get("source").and_then(Value::as_str) {
                    Some("resume") => Start::Resume,
                    Some("clear") => Start::Clear,
                    _ => Start::Startup,
                },
            )),
            _ => Ok(prompt(&payload)),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event })
    }

    fn reply(&self, stage: Stage, answer: Answer) -> Reply {
        let out = match answer {
            Answer::Nothing => return Reply::nothing(),
            Answer::Allow(reason) => json!({"decision": "allow", "reason": reason}),
            Answer::Deny(reason) => json!({"decision": "deny", "reason": reason}),
            // Asked for only with `--short-reads on`: gemini-cli replaces
            // a tool's result only by blocking it ("Tool result blocked:
            // REASON", the reason unescaped), so the notice reaches the
            // model as a failed call.
            Answer::Short(short, told) => json!({
                "decision": "block",
                "reason": match told {
                    Some(t) => format!("{}\n\n{t}", short.notice),
                    None => short.notice,
                },
            }),
            Answer::Context(text) => json!({
                "hookSpecificOutput": {
                    "hookEventName": match stage {
                        Stage::SessionStart => "SessionStart",
                        Stage::Shown | Stage::Changed => "AfterTool",
                        _ => "BeforeAgent",
                    },
                    "additionalContext": crate::html_escaped("gemini-cli", text),
                }
            }),
        };
        Reply::json(&out)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        if !closed {
            // gemini-cli reads a lone line on stderr of a hook that exits 0
            // as {"decision": "allow"}: say it as a message for the user.
            return Reply {
                stdout: Some(json!({"systemMessage": format!("fsview-hook: {msg}")}).to_string()),
                stderr: Some(msg.to_string()),
                code: 0,
            };
        }
        if stage == Stage::AboutToChange {
            return Reply::unchecked(msg, |reason| json!({"decision": "deny", "reason": reason}));
        }
        // Exit 2: gemini-cli's blocking error (exit 1 would only warn).
        Reply::error(msg, 2)
    }

    /// AfterTool may block a read's result and give a reason in its place:
    /// an unchanged re-read is answered short that way, only when asked
    /// (`--short-reads on`: the model sees a failed call; gemini-cli tells
    /// no drop by a hook, so it is off by default).
    fn shortens_reads(&self) -> bool {
        true
    }

    fn reread_with(&self) -> &'static str {
        "a start_line or end_line"
    }

    /// gemini-cli's `read_file` shows the file's text as it is, with no line numbers.
    fn numbers_reads(&self) -> bool {
        false
    }

    fn loads_itself(&self, name: &str) -> bool {
        name == "GEMINI.md"
    }

    fn transcript(&self) -> Option<&'static dyn crate::transcript::Format> {
        Some(&TRANSCRIPT)
    }

    fn delegates(&self) -> bool {
        true
    }

    /// gemini-cli's `--resume` does not give the model the first prompt
    /// again, and SessionStart's context was put in front of it.
    fn resume_keeps_start(&self) -> bool {
        false
    }

    /// AfterTool's `additionalContext` reaches the model with the tool's
    /// result, and the record after `replace` keeps the view it had where
    /// the tool's text was not it (see `core::changed`).
    fn tells_after_change(&self) -> bool {
        true
    }

    fn alters(&self, stage: Stage, text: &str) -> Option<&'static str> {
        // A refusal's reason reaches the model as it is ("Tool execution
        // blocked: REASON"); context is escaped, but whole and readable
        // back ([`crate::html_escaped`]), so it alters nothing.
        if stage == Stage::SessionStart && text.contains('@') {
            return Some("gemini-cli would read the files its at-signs name into the prompt");
        }
        None
    }

    /// gemini-cli 0.61.0 cuts a shell or MCP tool's result past
    /// `tools.truncateToolOutputThreshold` (40,000 characters, less when
    /// its context window is nearly full), AfterTool's context included,
    /// keeping the first 8,000 and the last 32,000: the context, at the
    /// end, reaches the model whole when it fits the last 32,000. Read
    /// from its code (`chunk-JDPZ4CE3.js`), not measured at the edge.
    fn context_limit(&self) -> Option<(usize, &'static str)> {
        Some((
            32_000,
            "gemini-cli keeps only the last 32,000 characters of a long tool result, its hook context included",
        ))
    }

    /// As the model gets it: escaped by fsview ([`crate::html_escaped`],
    /// a line and `&amp;`) and by gemini-cli (`&lt;`, `&gt;`).
    fn context_len(&self, text: &str) -> usize {
        let plain = text.encode_utf16().count();
        if !text.contains(['<', '>']) {
            return plain;
        }
        let escaped = 4 * text.matches('&').count() + 3 * text.matches(['<', '>']).count();
        // The line html_escaped puts before it.
        plain + escaped + 200
    }
}

fn who(payload: &Value, event: &str) -> Result<Who, Problem> {
    let fields = payload::Fields {
        agent: None,
        call: None,
        ..payload::CLAUDE
    };
    payload::who(payload, event, &fields)
}

/// How gemini-cli 0.61.0 puts the files a prompt's `@path`s name into the
/// prompt (BeforeAgent's `prompt`): after the user's words,
/// `--- Content from referenced files ---`, then for each file
/// `Content from @PATH:` and its text trimmed at both ends (read_many_files:
/// the first 2,000 lines under a warning when it has more), then
/// `--- End of content ---`.
const MENTION: &str = "\nContent from @";
const MENTION_CUT: &str = "[WARNING: This file was truncated. To view the full content, use the 'read_file' tool on this specific file.]\n\n";

/// A prompt, and the files its `@path`s attached, each a view (held to the
/// disk) before the reminder.
fn prompt(payload: &Value) -> Event {
    let text = payload.get("prompt").and_then(Value::as_str).unwrap_or("");
    mention::prompt_showing(
        mention::referenced(text, MENTION)
            .into_iter()
            .map(|(path, body)| {
                let (body, extent) = match body.strip_prefix(MENTION_CUT) {
                    Some(rest) => (rest, Extent::Start),
                    // The whole file, but for the whitespace trimmed at its
                    // ends: held as the lines from the first.
                    None => (body, Extent::Range),
                };
                Shown {
                    path: PathBuf::from(path),
                    text: ShownText::Trimmed(body.to_string()),
                    offset: 1,
                    extent,
                }
            }),
    )
}

fn tool_name(payload: &Value) -> Result<&str, Problem> {
    payload
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the payload has no tool_name string"))
}

fn file_path(tool: &str, payload: &Value) -> Result<PathBuf, Problem> {
    payload
        .get("tool_input")
        .and_then(|i| i.get("file_path"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            Problem::new(format!(
                "the {tool} payload has no tool_input.file_path string"
            ))
        })
}

fn before_tool(payload: &Value) -> Result<Event, Problem> {
    let tool = tool_name(payload)?;
    if tool == SUBAGENT_TOOL {
        let kind = payload
            .pointer("/tool_input/agent_name")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .unwrap_or("subagent");
        return Ok(Event::Delegating {
            kind: kind.to_string(),
        });
    }
    if tool == SHELL {
        let (command, dir) = shell_call(payload)?;
        return Ok(Event::all(shell::about_to_run(command, dir)));
    }
    let whole = match tool {
        "write_file" => true,
        "replace" => false,
        _ => return Ok(Event::Ignored),
    };
    let path = file_path(tool, payload)?;
    if tool == "replace" {
        // The replacement itself, so that an edit far from a change the
        // file had since the view may be merged with it.
        let input = payload.get("tool_input").unwrap_or(&Value::Null);
        let edit = Replace::of(input, "old_string", "new_string", Some("allow_multiple"));
        if let Some(r) = edit.filter(|r| !r.old.is_empty()) {
            return Ok(Event::AboutToReplace {
                path,
                edits: vec![r],
            });
        }
    }
    Ok(Event::AboutToChange { path, whole })
}

/// gemini-cli's shell tool.
const SHELL: &str = "run_shell_command";

/// A shell call's command line, and the directory it runs in when it names
/// one (`dir_path`, from the working directory).
fn shell_call(payload: &Value) -> Result<(&str, Option<&Path>), Problem> {
    let input = payload.get("tool_input");
    let command = input
        .and_then(|i| i.get("command"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Problem::new("the run_shell_command payload has no tool_input.command string")
        })?;
    let dir = input
        .and_then(|i| i.get("dir_path"))
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(Path::new);
    Ok((command, dir))
}

/// What a shell command showed. `llmContent` is `<untrusted_context>`,
/// "Output: O" (what it printed through a terminal, the whitespace at both
/// ends removed; "(empty)" for nothing), other lines ("Exit Code: N",
/// "Process Group PGID: P"), `</untrusted_context>`; `returnDisplay` is O.
/// The hook sees it before gemini-cli cuts a long one: over
/// `tools.truncateToolOutputThreshold` characters (40,000 unless the
/// settings say less) the model gets only the first fifth of them, then
/// the last part.
fn shell_ran(payload: &Value, response: &Value, cwd: &Path) -> Result<Event, Problem> {
    let (command, dir) = shell_call(payload)?;
    let content = response
        .get("llmContent")
        .and_then(Value::as_str)
        .unwrap_or("");
    let display = response.get("returnDisplay").and_then(Value::as_str);
    let whole = display.filter(|d| {
        let shown = if d.is_empty() { "(empty)" } else { d };
        content.starts_with(&format!("{UNTRUSTED}\nOutput: {shown}\n"))
    });
    let threshold = truncation_threshold(cwd);
    let output = match whole {
        Some(d) if utf16_len(content) <= threshold => Some(Output::Trimmed(d)),
        Some(_) => {
            let head = utf16_prefix(content, threshold / 5);
            head.strip_prefix(UNTRUSTED)
                .and_then(|h| h.strip_prefix("\nOutput: "))
                .map(|text| Output::Head {
                    text,
                    trimmed: true,
                })
        }
        None => None,
    };
    Ok(Event::all(shell::ran(command, dir, output)))
}

const UNTRUSTED: &str = "<untrusted_context>";

/// The length of `s` as JavaScript counts it (UTF-16 code units).
fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The first `n` UTF-16 code units of `s` (a character cut in two left
/// out).
fn utf16_prefix(s: &str, n: usize) -> &str {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > n {
            return &s[..i];
        }
    }
    s
}

/// The most characters of a shell output gemini-cli shows whole: the least
/// `tools.truncateToolOutputThreshold` of the project's and the user's
/// settings, else its default (40,000). A setting of 0 or less turns the
/// cut off.
fn truncation_threshold(cwd: &Path) -> usize {
    const DEFAULT: usize = 40_000;
    let mut files = vec![cwd.join(".gemini").join("settings.json")];
    if let Ok(home) = home("GEMINI_CLI_HOME", cwd) {
        files.push(home.join(".gemini").join("settings.json"));
    }
    let mut least = None::<i64>;
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            // Settings fsview cannot read may set anything: take nothing
            // as shown whole.
            return 0;
        };
        if let Some(n) = v.pointer("/tools/truncateToolOutputThreshold") {
            let n = n.as_i64().unwrap_or(0);
            least = Some(least.map_or(n, |l| l.min(n)));
        }
    }
    match least {
        None => DEFAULT,
        Some(n) if n <= 0 => usize::MAX,
        Some(n) => n as usize,
    }
}

fn after_tool(payload: &Value, cwd: &Path) -> Result<Event, Problem> {
    let tool = tool_name(payload)?;
    if tool == SUBAGENT_TOOL {
        return Ok(Event::Delegated);
    }
    if !matches!(tool, "read_file" | "replace" | "write_file" | SHELL) {
        return Ok(Event::Ignored);
    }
    if tool == SHELL {
        let response = payload.get("tool_response").filter(|v| v.is_object());
        if response.is_some_and(|r| r.get("error").is_some_and(|e| !e.is_null())) {
            // It may still have run, and written: its writes are known.
            return shell_ran(payload, &Value::Null, cwd);
        }
        return shell_ran(payload, response.unwrap_or(&Value::Null), cwd);
    }
    let path = file_path(tool, payload)?;
    let response = payload
        .get("tool_response")
        .filter(|v| v.is_object())
        .ok_or_else(|| {
            Problem::new(format!(
                "the {tool} payload has no tool_response object, so nothing was recorded"
            ))
        })?;
    // A failed tool showed and changed nothing.
    if response.get("error").is_some_and(|e| !e.is_null()) {
        return Ok(Event::Ignored);
    }
    match tool {
        "read_file" => read(path, payload, response),
        _ => changed(tool, path, payload, response),
    }
}

fn read(path: PathBuf, payload: &Value, response: &Value) -> Result<Event, Problem> {
    // An image, audio or a PDF is sent as data, not text.
    let Some(content) = response.get("llmContent").and_then(Value::as_str) else {
        return Ok(Event::Ignored);
    };
    let display = response
        .get("returnDisplay")
        .and_then(Value::as_str)
        .unwrap_or("");
    // A binary file, an SVG too large to show: a note, not the file.
    if display.starts_with("Skipped ") {
        return Ok(Event::Ignored);
    }
    let content = match content.strip_suffix(JIT_CONTEXT_END) {
        Some(head) => head.rfind(JIT_CONTEXT).map_or(content, |at| &content[..at]),
        None => content,
    };
    let shortened = display.contains("some lines were shortened");
    let input = payload.get("tool_input").unwrap_or(&Value::Null);
    let asked = ["start_line", "end_line"]
        .iter()
        .any(|k| input.get(*k).is_some_and(|v| !v.is_null()));
    let (text, offset, extent) = match banner(content) {
        // Lines the model asked for, or the first page of a longer file.
        Some(b) if asked => (b.lines, b.first, Extent::Range),
        // "lines 1-2000 of 2001" of a 2,000-line file: N counts the empty
        // piece after its final newline, so every line was shown. A slice
        // that covers the file is held as the whole of it.
        Some(b) if b.first == 1 && b.last.saturating_add(1) >= b.total => {
            (b.lines, b.first, Extent::Range)
        }
        Some(b) => (b.lines, b.first, Extent::Start),
        None if content.starts_with(TRUNCATED) => {
            return Err(Problem::new(
                "the read_file response has a truncation banner fsview cannot read, so nothing was recorded",
            ))
        }
        None => (content, 1, Extent::Whole),
    };
    let text = if shortened {
        ShownText::Processed(text.to_string())
    } else {
        ShownText::Lines(text.to_string())
    };
    Ok(Event::Shown(Shown {
        path,
        text,
        offset,
        extent,
    }))
}

/// The truncation banner of a partial read: `Showing lines A-B of N`.
struct Banner<'a> {
    first: u64,
    last: u64,
    total: u64,
    /// The lines after the banner.
    lines: &'a str,
}

fn banner(content: &str) -> Option<Banner<'_>> {
    let status = content
        .strip_prefix(TRUNCATED)?
        .strip_prefix(BANNER_STATUS)?;
    let (first, rest) = status.split_once('-')?;
    let (last, rest) = rest.split_once(" of ")?;
    let total = rest.split(' ').next()?;
    let lines = &status[status.find(BANNER_END)? + BANNER_END.len()..];
    Some(Banner {
        first: first.parse().ok()?,
        last: last.parse().ok()?,
        total: total.parse().ok()?,
        lines,
    })
}

fn changed(tool: &str, path: PathBuf, payload: &Value, response: &Value) -> Result<Event, Problem> {
    let display = response.get("returnDisplay").filter(|d| d.is_object());
    let string = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let whole = tool == "write_file";
    let text = string(display, "newContent").or_else(|| {
        // Another version: the input is what a write wrote.
        whole
            .then(|| string(payload.get("tool_input"), "content"))
            .flatten()
    });
    let Some(text) = text else {
        return Err(Problem::new(format!(
            "the {tool} response does not say what the file now holds (no returnDisplay.newContent), so nothing was recorded"
        )));
    };
    Ok(Event::Changed(Changed {
        path,
        text,
        before: string(display, "originalContent"),
        whole,
    }))
}

/// gemini-cli's settings files and the hooks fsview wires into them.
pub struct GeminiInstaller;

/// The wiring: the gate before every change, a record after every read and
/// change, the session's start, each prompt. Matchers are regular
/// expressions, matched anywhere in the tool's name.
pub const HOOKS: &[Hook] = &[
    Hook {
        event: "BeforeTool",
        matcher: Some("^(replace|write_file|run_shell_command)$"),
        fail_closed: true,
    },
    Hook {
        event: "BeforeTool",
        matcher: Some("^invoke_agent$"),
        fail_closed: false,
    },
    Hook {
        event: "AfterTool",
        // Every tool: after any call, what changed meanwhile is told.
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "SessionStart",
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "BeforeAgent",
        matcher: None,
        fail_closed: false,
    },
];

impl Installer for GeminiInstaller {
    fn agent(&self) -> &'static str {
        "gemini"
    }

    /// gemini-cli reads `.gemini/settings.json` of the directory it starts
    /// in, and the user's from `$GEMINI_CLI_HOME/.gemini`, else
    /// `~/.gemini`.
    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
        match scope {
            Scope::Project => Ok(cwd.join(".gemini").join("settings.json")),
            Scope::User => Ok(home("GEMINI_CLI_HOME", cwd)?
                .join(".gemini")
                .join("settings.json")),
            Scope::Local => Err(Problem::new(
                "gemini-cli has no settings for one user in one project; use --project or --user",
            )),
        }
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }

    fn hooks(&self) -> &'static [Hook] {
        HOOKS
    }

    fn hook_name(&self) -> Option<&'static str> {
        Some("fsview")
    }

    fn blocks_when_missing(&self) -> bool {
        true
    }

    fn next_step(&self, scope: Scope, _cwd: &Path) -> Option<String> {
        (scope == Scope::Project).then(|| {
            "gemini-cli runs a project's hooks only in a trusted folder: trust this folder when gemini-cli asks (or list it in ~/.gemini/trustedFolders.json)".to_string()
        })
    }
}

/// The home directory an agent reads its user settings from: `$VAR` when
/// set (relative to `cwd`), else `$HOME`.
pub fn home(var: &str, cwd: &Path) -> Result<PathBuf, Problem> {
    std::env::var_os(var)
        .filter(|d| !d.is_empty())
        .map(|d| cwd.join(d))
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from)
        })
        .ok_or_else(|| {
            Problem::new(format!(
                "neither {var} nor HOME is set, so the user's settings cannot be found; use --project"
            ))
        })
}

/// gemini-cli's transcript (`transcript_path`), read for its compressions
/// alone.
///
/// gemini-cli 0.61.0 writes JSON Lines: a header (`sessionId`,
/// `kind`), each message as it comes (`{"id", "type": "user" | "gemini",
/// "content", ...}`, a message again when it grows), and
/// `{"$set": {"messages": [...]}}` when it sets the whole history: at a
/// session's start and resume (the same messages) and when it compresses
/// the history (seen with the real binary: `scripts/e2e-gemini
/// compaction-drops-views`). A compression keeps the first message (the
/// session's context) and puts a new message (the summary) in place of the
/// conversation's first ones, and copies what it keeps under new ids: so
/// a history set whose first two messages are not the conversation's is a
/// compression. No hook says so (`PreCompress` fires before every model
/// call, before gemini-cli decides whether to compress), and the payloads
/// name no call: so every view of the conversation is released, and what
/// the kept part shows is read back from the transcript. The compression's
/// history names the calls it keeps (`functionCall` ids after the
/// summary); each model message line lists its calls with their results
/// (`toolCalls`: `id`, `name`, `args`, `result`, `resultDisplay`). A kept
/// `read_file` is a view of what its result showed, and a kept
/// `write_file` of what it wrote, each recorded again as its hook would
/// have (held to the disk); a `replace`, or any call whose line is not
/// found, is not (a read too many, never a view too many). gemini-cli also
/// sets the history anew, under new ids, when it masks old tool results
/// (`ToolOutputMaskingService`, on by default: before each request, the
/// results past the newest 50,000 tokens of them, once 30,000 tokens or
/// more can go, become a note with a preview and a file path; seen with
/// the real binary: `scripts/e2e-gemini masking-drops-views`): read as a
/// compression, and a call whose result the new history holds other than
/// its line does is not kept.
pub struct GeminiTranscript;

/// The format as gemini-cli 0.61.0 writes it.
pub static TRANSCRIPT: GeminiTranscript = GeminiTranscript;

impl GeminiTranscript {
    /// The reader's state after `line`, from `state` (the ids of the
    /// conversation's first two messages, one a line), and whether the
    /// line is a compression.
    fn step(line: &[u8], state: &mut Vec<String>) -> bool {
        serde_json::from_slice::<Value>(line).is_ok_and(|v| Self::step_value(&v, state))
    }

    /// [`GeminiTranscript::step`] for a line already parsed.
    fn step_value(v: &Value, state: &mut Vec<String>) -> bool {
        if let Some(messages) = v.pointer("/$set/messages").and_then(Value::as_array) {
            let first: Vec<String> = messages
                .iter()
                .take(2)
                .filter_map(|m| m.get("id").and_then(Value::as_str))
                .map(String::from)
                .collect();
            if first.len() < 2 {
                // A session's start or resume sets its context alone
                // first: the conversation so far is set after it.
                if state.is_empty() {
                    *state = first;
                }
                return false;
            }
            let compressed = state.len() == 2 && first != *state;
            *state = first;
            return compressed;
        }
        if state.len() < 2 {
            if let (Some(id), Some("user" | "gemini")) = (
                v.get("id").and_then(Value::as_str),
                v.get("type").and_then(Value::as_str),
            ) {
                if !state.iter().any(|s| s == id) {
                    state.push(id.to_string());
                }
            }
        }
        false
    }
}

fn gemini_state(state: Option<&str>) -> Vec<String> {
    state
        .unwrap_or("")
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

impl crate::transcript::Format for GeminiTranscript {
    fn seen_in(&self) -> &'static str {
        "gemini-cli 0.61.0"
    }

    fn read(&self, lines: &[&[u8]], state: Option<&str>) -> crate::transcript::Step {
        let mut s = gemini_state(state);
        for line in lines {
            if Self::step(line, &mut s) {
                return crate::transcript::Step::Resync { compaction: true };
            }
        }
        crate::transcript::Step::Read {
            found: Vec::new(),
            state: s.join("\n"),
        }
    }

    fn resync(&self) -> Box<dyn crate::transcript::Resync> {
        Box::new(GeminiWhole::default())
    }

    fn located(&self, line: &[u8], how: &str) -> Option<Event> {
        kept_call(line, how)
    }

    fn siblings(&self, _tail: &[u8], _call: &str) -> Option<std::collections::HashSet<String>> {
        None
    }
}

/// A whole re-read of gemini-cli's transcript: the reader's state, and,
/// after its last compression, what the kept part shows (the calls the
/// compression kept, and every call after it).
#[derive(Default)]
struct GeminiWhole {
    state: Vec<String>,
    /// Where the latest line listing each finished call is.
    calls: std::collections::HashMap<String, u64>,
    /// The calls the last compression kept and those after it, in order;
    /// `None` before any compression.
    kept: Option<Vec<String>>,
    /// What each finished call's latest line gave the model (a hash of its
    /// `functionResponse.response`), to tell a result a history set kept
    /// from one it replaced.
    results: std::collections::HashMap<String, u64>,
}

/// A hash of a `functionResponse.response`, the same for the same JSON.
fn response_hash(response: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    response.to_string().hash(&mut h);
    h.finish()
}

/// The items of the array at `pointer` in `v`; none when it is no array.
fn items<'a>(v: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The `functionResponse` parts of a history entry: (call id, response).
fn responses(message: &Value) -> impl Iterator<Item = (&str, &Value)> {
    items(message, "/content").filter_map(|p| {
        let r = p.get("functionResponse")?;
        Some((r.get("id")?.as_str()?, r.get("response")?))
    })
}

/// The tools whose calls show a file's text ([`kept_call`]).
const KEPT_TOOLS: [&str; 2] = ["read_file", "write_file"];

/// The ids of the calls of `message` (a history entry: `content` parts
/// with `functionCall`) or of a model message line (`toolCalls`).
fn call_ids(message: &Value) -> Vec<String> {
    let called = items(message, "/content").filter_map(|p| p.pointer("/functionCall/id"));
    let listed = items(message, "/toolCalls").filter_map(|c| c.get("id"));
    called
        .chain(listed)
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

/// What the kept call `id` of a model message line showed, as its hook
/// would have said it.
fn kept_call(line: &[u8], id: &str) -> Option<Event> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let call = v
        .get("toolCalls")?
        .as_array()?
        .iter()
        .find(|c| c.get("id").and_then(Value::as_str) == Some(id))?;
    if call.get("status").and_then(Value::as_str) != Some("success") {
        return None;
    }
    let name = call.get("name").and_then(Value::as_str)?;
    let args = call.get("args")?;
    let output = call
        .get("result")?
        .as_array()?
        .iter()
        .find_map(|r| r.pointer("/functionResponse/response/output"))?
        .as_str()?;
    let payload = json!({"tool_name": name, "tool_input": args});
    let path = file_path(name, &payload).ok()?;
    match name {
        "read_file" => {
            let response = json!({
                "llmContent": output,
                "returnDisplay": call.get("resultDisplay").and_then(Value::as_str).unwrap_or(""),
            });
            read(path, &payload, &response).ok()
        }
        "write_file" => Some(Event::Changed(Changed {
            path,
            text: args.get("content")?.as_str()?.to_string(),
            before: None,
            whole: true,
        })),
        _ => None,
    }
}

impl crate::transcript::Resync for GeminiWhole {
    fn lines(&mut self, lines: &[(u64, &[u8])]) {
        for (at, line) in lines {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if GeminiTranscript::step_value(&v, &mut self.state) {
                // The history after the summary: what the compression kept.
                // A call whose result the new history holds other than the
                // model got it was not kept: gemini-cli masks old tool
                // results so (ToolOutputMaskingService: a note with a
                // preview and a file path), setting the history anew.
                let replaced: std::collections::HashSet<&str> = items(&v, "/$set/messages")
                    .flat_map(responses)
                    .filter(|(id, r)| {
                        self.results
                            .get(*id)
                            .is_some_and(|h| *h != response_hash(r))
                    })
                    .map(|(id, _)| id)
                    .collect();
                self.kept = Some(
                    items(&v, "/$set/messages")
                        .skip(2)
                        .flat_map(call_ids)
                        .filter(|id| !replaced.contains(id.as_str()))
                        .collect(),
                );
                continue;
            }
            if v.get("type").and_then(Value::as_str) != Some("gemini") {
                continue;
            }
            let finished = items(&v, "/toolCalls").filter(|c| {
                c.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| KEPT_TOOLS.contains(&n))
                    && c.get("result").is_some_and(|r| !r.is_null())
            });
            for c in finished {
                if let Some(id) = c.get("id").and_then(Value::as_str) {
                    self.calls.insert(id.to_string(), *at);
                    let response =
                        items(c, "/result").find_map(|r| r.pointer("/functionResponse/response"));
                    match response {
                        Some(r) => self.results.insert(id.to_string(), response_hash(r)),
                        None => self.results.remove(id),
                    };
                    if let Some(kept) = &mut self.kept {
                        if !kept.iter().any(|k| k == id) {
                            kept.push(id.to_string());
                        }
                    }
                }
            }
        }
    }

    fn finish(self: Box<Self>) -> crate::transcript::Holding {
        let found: Vec<crate::transcript::Located> = self
            .kept
            .unwrap_or_default()
            .into_iter()
            .filter_map(|id| {
                let at = *self.calls.get(&id)?;
                Some(crate::transcript::Located {
                    origin: id.clone(),
                    at,
                    how: id,
                })
            })
            .collect();
        crate::transcript::Holding {
            live: found.iter().map(|l| l.origin.clone()).collect(),
            found,
            state: self.state.join("\n"),
            ..crate::transcript::Holding::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_of_a_partial_read() {
        let c = "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 1-5 of 51 total lines.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: 6.\n\n--- FILE CONTENT (truncated) ---\nline 1\nline 2";
        let b = |c: &str| banner(c).map(|b| (b.first, b.last, b.total, b.lines.to_string()));
        assert_eq!(b(c), Some((1, 5, 51, "line 1\nline 2".into())));
        let c = c.replace("1-5 of 51", "46-50 of 51");
        assert_eq!(b(&c), Some((46, 50, 51, "line 1\nline 2".into())));
        assert_eq!(b("line 1\n"), None);
    }

    /// What a history set anew still holds, as gemini-cli 0.61.0 writes it
    /// when it masks old tool results (the lines trimmed to what is read).
    #[test]
    fn a_masked_result_is_not_kept() {
        use crate::transcript::Format;
        let part = |id: &str, output: &str| json!({"functionResponse": {"id": id, "name": "read_file", "response": {"output": output}}});
        let call = |id: &str| json!({"functionCall": {"id": id, "name": "read_file", "args": {}}});
        let model = |mid: &str, id: &str, output: &str| {
            json!({"id": mid, "type": "gemini", "content": "",
                   "toolCalls": [{"id": id, "name": "read_file", "args": {"file_path": "/w/x.txt"},
                                  "status": "success", "result": [part(id, output)]}]})
        };
        let set = |entries: Vec<Value>| json!({"$set": {"messages": entries}});
        let user = |mid: &str| json!({"id": mid, "type": "user", "content": [{"text": "go"}]});
        let entry = |mid: &str, kind: &str, parts: Vec<Value>| json!({"id": mid, "type": kind, "content": parts});
        let before = [
            user("u1"),
            model("m1", "c1", "one"),
            model("m2", "c2", "two"),
            model("m3", "c3", "three"),
        ];
        // Under new ids; c2's result masked, c3's as the model got it.
        let after = set(vec![
            entry("n1", "user", vec![json!({"text": "go"})]),
            entry("n2", "gemini", vec![call("c1")]),
            entry(
                "n3",
                "user",
                vec![part("c1", "<tool_output_masked>one</tool_output_masked>")],
            ),
            entry("n4", "gemini", vec![call("c2")]),
            entry(
                "n5",
                "user",
                vec![part("c2", "<tool_output_masked>two</tool_output_masked>")],
            ),
            entry("n6", "gemini", vec![call("c3")]),
            entry("n7", "user", vec![part("c3", "three")]),
        ]);
        let text: Vec<String> = before
            .iter()
            .chain([&after])
            .map(Value::to_string)
            .collect();
        let mut at = 0u64;
        let lines: Vec<(u64, &[u8])> = text
            .iter()
            .map(|l| {
                let here = at;
                at += l.len() as u64 + 1;
                (here, l.as_bytes())
            })
            .collect();
        let mut r = TRANSCRIPT.resync();
        r.lines(&lines);
        let found: Vec<String> = r.finish().found.into_iter().map(|l| l.origin).collect();
        assert_eq!(found, vec!["c3".to_string()]);
    }
}
