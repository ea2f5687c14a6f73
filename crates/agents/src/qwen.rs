//! Qwen Code's command hooks, as fsview's common events.
//!
//! Fields as Qwen Code 0.24.4 sends them (fixtures captured from the real
//! binary: `tests/fixtures/hooks/qwen-0.24.4/`). The hooks are Claude
//! Code's: the same events, the same envelope (`session_id`, `cwd`,
//! `hook_event_name`, `agent_id` in a subagent) and the same answers, so
//! the envelope and the replies are [`claude`](crate::claude)'s. The tools
//! are Qwen Code's own (it descends from gemini-cli):
//!
//! - `PreToolUse` of `edit` (`file_path`) and `notebook_edit`
//!   (`notebook_path`): a targeted edit; of `write_file`: a whole-file
//!   write. A refusal is `permissionDecision: "deny"`; the model receives
//!   its reason as the tool's result, verbatim.
//! - `PostToolUse` of `read_file`: `tool_response.llmContent` is what the
//!   model got. A whole file is its lines, each with its trailing
//!   whitespace removed (a `\r` too), without line numbers. A part starts
//!   with `Showing lines A-B of N total lines.` and a `---` line: the
//!   first 1,000 lines when no range was asked, or the range asked
//!   (`offset` counts from 0, with `limit`); N counts the empty piece after
//!   a final newline. A line cut at the 25,000-character cap ends in
//!   `... [truncated]` and `returnDisplay` ends in `(truncated)`: that line
//!   was not shown whole, so it is not recorded. A full re-read of an
//!   unchanged file shows a stub ("[File X unchanged since last read ...]",
//!   `returnDisplay` "Unchanged: X"): nothing new was shown.
//! - `PostToolUse` of `edit`, `write_file` and `notebook_edit`:
//!   `returnDisplay.newContent` is the whole file as the tool wrote it,
//!   after `returnDisplay.originalContent`. A notebook read shows its cells
//!   rendered (`--- Code Cell ID ---`, the source fenced): held against the
//!   disk's cells (a `processed` view: its cells may be edited, the file not
//!   written whole), and not recorded when the rendering cannot be read
//!   back cell by cell; after `notebook_edit` the model knows the cells of
//!   `newContent`.
//! - `UserPromptSubmit`: the files the prompt's `@path`s attached (Qwen
//!   Code reads them itself and puts their text in the prompt, as
//!   read_file shows it), then the reminder of files changed since they
//!   were seen. Qwen Code fires it for each prompt and again before each model
//!   call that carries tool results (`prompt` empty); a change is told
//!   once either way. Qwen Code escapes `<` and `>` in hook context (not
//!   `&`), so context holding either is sent with its `&` escaped too,
//!   under a line saying so: the model gets the exact HTML escape
//!   ([`crate::html_escaped`]).
//! - `PostCompact` (fired only when a compression succeeded): the
//!   conversation is a summary now, with the few files Qwen Code reads
//!   again into it (a part of each, which no hook reports): none of its
//!   views is held any more.
//! - A result Qwen Code cut to fit its batch (the outputs of one batch of
//!   calls over `tools.toolOutputBatchBudget`, 200,000 characters by
//!   default), or cleared as old (past 500,000 characters of results),
//!   reaches no hook: the transcript says so or counts it, and the view
//!   its `PostToolUse` recorded is released ([`crate::transcript::qwen`]).
//!   The views' origin is the call's `tool_call_id`, the id the
//!   transcript names it by.
//! - `SessionStart`: nothing. Qwen Code loads its own instruction files
//!   (QWEN.md, AGENTS.md, QWEN.local.md) and its payloads do not say what
//!   text it gave the model, so nothing is sent and nothing recorded; an
//!   edit of QWEN.md needs a read first. `/clear` starts a new session id,
//!   so a cleared conversation is a new fsview session.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::claude::{self, Claude};
use crate::event::{Answer, Cell, Changed, Event, Extent, Shown, ShownText, Stage};
use crate::install::{Hook, Installer, Scope};
use crate::shell::{self, Output};
use crate::{mention, payload, Agent, Parsed, Problem, Reply};

/// Qwen Code.
pub struct Qwen;

type Failed = (Stage, Problem);

impl Agent for Qwen {
    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload = payload::object(payload, || {
            "the hook payload is not a JSON object; fsview-hook qwen reads one Qwen Code hook payload on stdin".into()
        })?;
        let name = payload::hook_event_name(&payload)?;
        let stage = match name {
            "PreToolUse" => Stage::AboutToChange,
            "PostToolUse" => Stage::Shown,
            "UserPromptSubmit" => Stage::Prompt,
            "SessionStart" => Stage::SessionStart,
            "PostCompact" => Stage::Shown,
            other => {
                return Err((
                    Stage::Other,
                    Problem::new(format!("hook event {other:?} is not one fsview-hook qwen answers; wire it to PreToolUse, PostToolUse, UserPromptSubmit and PostCompact only")),
                ))
            }
        };
        let who = payload::who(&payload, name, &FIELDS).map_err(|p| (stage, p))?;
        let event = match stage {
            Stage::AboutToChange => pre_tool_use(&payload),
            Stage::Shown if name == "PostCompact" => Ok(Event::Compacted),
            Stage::Shown => post_tool_use(&payload),
            Stage::Prompt => Ok(prompt(&payload)),
            _ => Ok(Event::Ignored),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event })
    }

    fn reply(&self, stage: Stage, answer: Answer) -> Reply {
        // Context is escaped by Qwen Code ([`crate::html_escaped`]); a
        // refusal's reason (permissionDecisionReason) is not: 0.24.4 puts
        // it in the call's error as it is.
        let answer = match answer {
            Answer::Context(text) => Answer::Context(crate::html_escaped("Qwen Code", text)),
            Answer::Short(short, Some(text)) => {
                Answer::Short(short, Some(crate::html_escaped("Qwen Code", text)))
            }
            other => other,
        };
        Claude.reply(stage, answer)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        Claude.fail(stage, msg, closed)
    }

    /// Qwen Code's `read_file` shows the file's text as it is, with no line numbers.
    fn numbers_reads(&self) -> bool {
        false
    }

    fn loads_itself(&self, name: &str) -> bool {
        matches!(name, "QWEN.md" | "AGENTS.md" | "QWEN.local.md")
    }

    /// `PostCompact` (seen headless) releases every view.
    fn tells_drops(&self) -> bool {
        true
    }

    /// Its transcript says which results it cut to fit a batch.
    fn transcript(&self) -> Option<&'static dyn crate::transcript::Format> {
        Some(&crate::transcript::qwen::QWEN_CODE)
    }
}

/// Claude Code's names, but for the call: the API's id (`tool_call_id`),
/// which the transcript's entries carry, not the hooks' own `tool_use_id`.
const FIELDS: payload::Fields = payload::Fields {
    call: Some("/tool_call_id"),
    ..payload::CLAUDE
};

fn tool(payload: &Value) -> Result<(&str, &Value), Problem> {
    let name = payload
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the payload has no tool_name string"))?;
    let input = payload
        .get("tool_input")
        .filter(|v| v.is_object())
        .ok_or_else(|| Problem::new(format!("the {name} payload has no tool_input object")))?;
    Ok((name, input))
}

fn path(tool: &str, input: &Value) -> Result<PathBuf, Problem> {
    let key = if tool == "notebook_edit" {
        "notebook_path"
    } else {
        "file_path"
    };
    claude::input_path(tool, input, key)
}

fn pre_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (name, input) = tool(payload)?;
    if name == SHELL {
        let (command, dir) = shell_call(input)?;
        return Ok(Event::all(shell::about_to_run(command, dir)));
    }
    let whole = match name {
        "write_file" => true,
        "edit" => false,
        "notebook_edit" => return Ok(Event::AboutToEditCells(path(name, input)?)),
        _ => return Ok(Event::Ignored),
    };
    Ok(Event::AboutToChange {
        path: path(name, input)?,
        whole,
    })
}

/// Qwen Code's shell tool.
const SHELL: &str = "run_shell_command";

/// A shell call's command line, and the directory it runs in when it names
/// one (`directory`, from the working directory).
fn shell_call(input: &Value) -> Result<(&str, Option<&Path>), Problem> {
    let command = input
        .get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Problem::new("the run_shell_command payload has no tool_input.command string")
        })?;
    let dir = input
        .get("directory")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map(Path::new);
    Ok((command, dir))
}

/// What a shell command showed: `llmContent` is "Command: C", "Directory:
/// D", "Output: O", then "Error:", "Exit Code:", "Signal:" and "Process
/// Group PGID:" lines, where O is what it printed (standard output and
/// error, through a terminal) with the whitespace at both ends removed,
/// also in `returnDisplay` ("(empty)" for nothing). An output too large is
/// cut: "Truncated part of the output:", the same lines with the head of
/// the output, cut in a line and marked "...", then "... [CONTENT
/// TRUNCATED] ..." and the tail. A background command showed nothing yet.
fn shell_ran(input: &Value, response: &Value) -> Result<Event, Problem> {
    let (command, dir) = shell_call(input)?;
    let content = response
        .get("llmContent")
        .and_then(Value::as_str)
        .unwrap_or("");
    let display = response.get("returnDisplay").and_then(Value::as_str);
    let background = input.get("is_background").and_then(Value::as_bool) == Some(true);
    let whole = display.filter(|d| {
        let shown = if d.is_empty() { "(empty)" } else { d };
        content.starts_with("Command: ") && content.contains(&format!("\nOutput: {shown}\nError: "))
    });
    let output = match whole {
        _ if background => None,
        Some(d) => Some(Output::Trimmed(d)),
        None => truncated_head(content).map(|text| Output::Head {
            text,
            trimmed: true,
        }),
    };
    Ok(Event::all(shell::ran(command, dir, output)))
}

/// The head of an output Qwen Code cut, without the "..." that marks the
/// cut.
fn truncated_head(content: &str) -> Option<&str> {
    let rest = content
        .strip_prefix("Tool output was too large and has been truncated.")?
        .split_once("\nTruncated part of the output:\nCommand: ")?
        .1;
    let (_, rest) = rest.split_once("\nOutput: ")?;
    let (head, _) = rest.split_once("\n\n---\n... [CONTENT TRUNCATED] ...\n---\n")?;
    Some(head.strip_suffix("...").unwrap_or(head))
}

fn post_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (name, input) = tool(payload)?;
    if !matches!(
        name,
        "read_file" | "edit" | "write_file" | "notebook_edit" | SHELL
    ) {
        return Ok(Event::Ignored);
    }
    if name == SHELL {
        let response = payload.get("tool_response").filter(|v| v.is_object());
        return shell_ran(input, response.unwrap_or(&Value::Null));
    }
    let path = path(name, input)?;
    let response = payload
        .get("tool_response")
        .filter(|v| v.is_object())
        .ok_or_else(|| {
            Problem::new(format!(
                "the {name} payload has no tool_response object, so nothing was recorded"
            ))
        })?;
    match name {
        "read_file" => read(path, input, response),
        _ => written(name, path, response),
    }
}

/// The text of an `@path` mention as Qwen Code puts it in the prompt.
const MENTION: &str = "\nContent from ";

/// A prompt, and the files its `@path`s attached: Qwen Code reads them
/// itself and puts their text in the prompt the hook gets, after the
/// user's words: `--- Content from referenced files ---`, then for each
/// `Content from PATH:` and the text as read_file shows it (trailing
/// whitespace trimmed, a banner `Showing lines A-B of [at least] N total
/// lines.` and `---` over a part), then `--- End of content ---`. Each is a
/// view, held to the disk; the reminder follows.
fn prompt(payload: &Value) -> Event {
    let text = payload.get("prompt").and_then(Value::as_str).unwrap_or("");
    mention::prompt_showing(
        mention::referenced(text, MENTION)
            .into_iter()
            .filter_map(|(path, body)| mentioned(PathBuf::from(path), body)),
    )
}

/// The view of a mentioned file's text: whole, or the part under a banner
/// (the start of it, when no range was asked); a line cut at the
/// character cap and what follows it are not taken as shown.
fn mentioned(path: PathBuf, body: &str) -> Option<Shown> {
    let (offset, text, mut extent) = match part(body) {
        Some((first, lines)) => (first, lines, Extent::Start),
        None => (1, body, Extent::Whole),
    };
    let mut text = text;
    if let Some(cut) = text.find(" [truncated]") {
        // The line holding the cut, and anything after it, was not shown.
        text = match text[..cut].rfind('\n') {
            Some(nl) => &text[..nl],
            None => return None,
        };
        extent = Extent::Start;
    }
    Some(Shown {
        path,
        text: ShownText::Trimmed(text.to_string()),
        offset,
        extent,
    })
}

/// `Showing lines A-B of [at least] N total lines.\n---\n`: (A, the rest).
fn part(body: &str) -> Option<(u64, &str)> {
    let rest = body.strip_prefix("Showing lines ")?;
    let (head, lines) = rest.split_once(" total lines.\n---\n")?;
    let (first, _) = head.split_once('-')?;
    Some((first.parse().ok()?, lines))
}

/// A number from the input: JSON integers, `null` for none.
fn number(input: &Value, key: &str) -> Result<Option<u64>, Problem> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| Problem::new(format!("{key} is {v}, not a line number"))),
    }
}

/// `Showing lines A-B of N total lines.\n\n---\n\n`: (A, the rest).
fn banner(text: &str) -> Option<(u64, &str)> {
    let rest = text.strip_prefix("Showing lines ")?;
    let (head, body) = rest.split_once(" total lines.\n\n---\n\n")?;
    let (range, _total) = head.split_once(" of ")?;
    let (first, _last) = range.split_once('-')?;
    Some((first.parse().ok()?, body))
}

fn read(path: PathBuf, input: &Value, response: &Value) -> Result<Event, Problem> {
    // Images and PDFs come as parts, not text.
    let Some(content) = response.get("llmContent").and_then(Value::as_str) else {
        return Ok(Event::Ignored);
    };
    let display = response
        .get("returnDisplay")
        .and_then(Value::as_str)
        .unwrap_or("");
    if display.starts_with("Unchanged: ") {
        return Ok(Event::Ignored);
    }
    if display.starts_with("Read notebook: ") {
        return Ok(match notebook_cells(content) {
            Some(cells) => Event::Shown(Shown {
                path,
                text: ShownText::Cells(cells),
                offset: 1,
                extent: Extent::Whole,
            }),
            None => Event::Ignored,
        });
    }
    let asked = number(input, "offset")?.is_some() || number(input, "limit")?.is_some();
    let (offset, mut text, extent) = match banner(content) {
        Some((first, body)) => (
            first,
            body,
            if asked { Extent::Range } else { Extent::Start },
        ),
        None if asked => (
            number(input, "offset")?.unwrap_or(0) + 1,
            content,
            Extent::Range,
        ),
        None => (1, content, Extent::Whole),
    };
    let mut extent = extent;
    if display.ends_with("(truncated)") {
        // The last line was cut at the character cap (or replaced by the
        // marker, the line before it cut): only the lines before are whole.
        let mut lines: Vec<&str> = text.split('\n').collect();
        if lines.pop() == Some("... [truncated]") {
            lines.pop();
        }
        if lines.is_empty() {
            return Ok(Event::Ignored);
        }
        text = &text[..lines.iter().map(|l| l.len() + 1).sum::<usize>() - 1];
        if extent == Extent::Whole {
            extent = Extent::Start;
        }
    }
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Trimmed(text.to_string()),
        offset,
        extent,
    }))
}

/// The cells of a notebook as read_file renders it: a `Jupyter Notebook
/// (LANG, N cells)` line, then each cell under `--- Code Cell ID ---`
/// (with ` [n]` when it ran), its source fenced and any `Output:` after,
/// or `--- Markdown Cell ID ---` and its source. `None` when the text is
/// not exactly that (a truncated notebook, a source that holds a cell
/// header or a fence): what was shown is then not known cell by cell.
fn notebook_cells(text: &str) -> Option<Vec<Cell>> {
    let (header, rest) = text.split_once("\n\n")?;
    let count: usize = header
        .strip_prefix("Jupyter Notebook (")?
        .strip_suffix(" cells)")?
        .rsplit_once(", ")?
        .1
        .parse()
        .ok()?;
    let mut cells = Vec::new();
    let mut cur: Option<(String, bool, Vec<&str>)> = None;
    for line in rest.split('\n') {
        let head = line
            .strip_prefix("--- ")
            .and_then(|l| l.strip_suffix(" ---"))
            .and_then(|l| {
                let (kind, id) = l.split_once("Cell ")?;
                Some((kind == "Code ", id.split(" [").next()?))
            });
        match head {
            Some((code, id)) => {
                if let Some(c) = cur.take() {
                    cells.push(notebook_cell(c)?);
                }
                cur = Some((id.to_string(), code, Vec::new()));
            }
            None => cur.as_mut()?.2.push(line),
        }
    }
    cells.push(notebook_cell(cur?)?);
    (cells.len() == count).then_some(cells)
}

/// One rendered cell: its id, whether it is code, its lines.
fn notebook_cell((id, code, mut lines): (String, bool, Vec<&str>)) -> Option<Cell> {
    // The blank line that separates it from the next cell.
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let source = if code {
        let end = lines.iter().rposition(|l| *l == "```")?;
        let after = &lines[end + 1..];
        if !(after.is_empty() || after.first() == Some(&"Output:")) {
            return None;
        }
        let body = &lines[..end];
        if !body.first()?.starts_with("```") || body[1..].iter().any(|l| l.starts_with("```")) {
            return None;
        }
        body[1..].join("\n")
    } else {
        lines.join("\n")
    };
    Some(Cell {
        id: Some(id),
        source,
    })
}

/// edit, write_file and notebook_edit: the file as the tool wrote it.
fn written(tool: &str, path: PathBuf, response: &Value) -> Result<Event, Problem> {
    let display = response.get("returnDisplay").filter(|v| v.is_object());
    let field = |k: &str| display.and_then(|d| d.get(k)).and_then(Value::as_str);
    let text = field("newContent").ok_or_else(|| {
        Problem::new(format!(
            "the {tool} response has no returnDisplay.newContent, so what the file now holds is unknown and nothing was recorded"
        ))
    })?;
    let before = field("originalContent").map(String::from);
    if tool == "notebook_edit" {
        // Cells changed by id: the model knows the cells as they are now,
        // not the notebook's JSON.
        return Ok(match crate::hold::cells_of(text.as_bytes()) {
            Some(cells) => Event::Shown(Shown {
                path,
                text: ShownText::Cells(cells),
                offset: 1,
                extent: Extent::Whole,
            }),
            None => Event::Ignored,
        });
    }
    Ok(Event::Changed(Changed {
        path,
        text: text.to_string(),
        whole: tool == "write_file" || before.as_deref() == Some(""),
        before,
    }))
}

/// Qwen Code's settings files and the hooks fsview wires into them.
pub struct QwenInstaller;

/// The gate before every change (closed when the hook cannot run), a
/// record after every read and change, and each prompt.
pub const HOOKS: &[Hook] = &[
    Hook {
        event: "PreToolUse",
        matcher: Some("edit|write_file|notebook_edit|run_shell_command"),
        fail_closed: true,
    },
    Hook {
        event: "PostToolUse",
        matcher: Some("read_file|edit|write_file|notebook_edit|run_shell_command"),
        fail_closed: false,
    },
    Hook {
        event: "UserPromptSubmit",
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "PostCompact",
        matcher: None,
        fail_closed: false,
    },
];

impl Installer for QwenInstaller {
    fn agent(&self) -> &'static str {
        "qwen"
    }

    /// Qwen Code reads a workspace's settings from `.qwen/settings.json`
    /// in the directory it starts in, and the user's from
    /// `~/.qwen/settings.json`; it has no per-user file inside a project.
    fn settings_file(&self, scope: Scope, cwd: &std::path::Path) -> Result<PathBuf, Problem> {
        match scope {
            Scope::Project => Ok(cwd.join(".qwen").join("settings.json")),
            Scope::User => std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".qwen").join("settings.json"))
                .ok_or_else(|| {
                    Problem::new("HOME is not set, so the user's settings cannot be found; use --project")
                }),
            Scope::Local => Err(Problem::new(
                "Qwen Code has no local settings file; use --project (.qwen/settings.json) or --user (~/.qwen/settings.json)",
            )),
        }
    }

    fn hooks(&self) -> &'static [Hook] {
        HOOKS
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }

    fn next_step(&self, scope: Scope, _cwd: &std::path::Path) -> Option<String> {
        (scope == Scope::Project).then(|| {
            "Qwen Code runs a project's hooks only in a trusted folder: with folder trust on (security.folderTrust.enabled), trust this one; `qwen hooks` lists them."
                .to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // As Qwen Code 0.24.4 rendered notebooks.
    #[test]
    fn notebooks_as_rendered() {
        let c = |id: &str, source: &str| Cell {
            id: Some(id.into()),
            source: source.into(),
        };
        assert_eq!(
            notebook_cells("Jupyter Notebook (python, 1 cells)\n\n--- Code Cell c1 ---\n```python\nprint(1)\nx = 2\n```"),
            Some(vec![c("c1", "print(1)\nx = 2")])
        );
        assert_eq!(
            notebook_cells("Jupyter Notebook (python, 2 cells)\n\n--- Markdown Cell m ---\n# Title\n\n--- Code Cell cell-1 [3] ---\n```python\n1 + 1\n```\nOutput:\n2"),
            Some(vec![c("m", "# Title"), c("cell-1", "1 + 1")])
        );
        // Truncated, or a fence inside a source: not known cell by cell.
        assert_eq!(
            notebook_cells("Jupyter Notebook (python, 3 cells)\n\n--- Code Cell a ---\n```python\nx\n```\n\n... [2 remaining cells truncated, total 3 cells. Use shell]"),
            None
        );
        assert_eq!(
            notebook_cells("Jupyter Notebook (python, 1 cells)\n\n--- Code Cell a ---\n```python\ns = \"\"\"\n```\n\"\"\"\n```"),
            None
        );
        assert_eq!(notebook_cells("(empty notebook)"), None);
    }

    #[test]
    fn banners() {
        assert_eq!(
            banner("Showing lines 2-2 of 4 total lines.\n\n---\n\ntwo"),
            Some((2, "two"))
        );
        assert_eq!(
            banner("Showing lines 1-1000 of at least 5000 total lines.\n\n---\n\nx"),
            Some((1, "x"))
        );
        assert_eq!(banner("Showing lines of a file\n"), None);
        assert_eq!(banner("one\ntwo\n"), None);
    }
}
