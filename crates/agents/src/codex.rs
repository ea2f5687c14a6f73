//! Codex's command hooks, as fsview's common events.
//!
//! Fields as Codex 0.171.0 sends them (fixtures captured from the real
//! binary: `tests/fixtures/hooks/codex-0.171.0/`). Every payload carries
//! `session_id` (the thread: fsview's session, unchanged on resume), `cwd`
//! (where the command runs), `hook_event_name`, `model`,
//! `permission_mode`, `transcript_path`; a subagent's also `agent_id` and
//! `agent_type`.
//!
//! Codex reads and writes through two tools:
//! - `Bash` (`tool_input.command`, the command line): PostToolUse's
//!   `tool_response` is the output the model got. The reads
//!   [`shell`](crate::shell) understands are recorded from it (`cat`,
//!   `sed -n 'A,Bp'`, `nl -ba … | sed -n`, `head`, `tail`), and only when
//!   the disk holds exactly what was printed; an output Codex truncated
//!   ("Warning: truncated output …", "…N tokens truncated…" inside) shows
//!   its first lines only. A patch sent to `apply_patch` as a
//!   here-document is gated at PreToolUse like the tool, and recorded there:
//!   Codex applies it without a PostToolUse.
//! - `apply_patch` (`tool_input.command`, the patch): PreToolUse gates each
//!   file it changes: `*** Update File` is a targeted edit, `*** Add
//!   File`, `*** Delete File` and a `*** Move to` destination change the
//!   whole file. PreToolUse comes before Codex checks the patch, so a patch
//!   fsview cannot read is refused. PostToolUse's `tool_response` ends
//!   "Success. Updated the following files:" when it was applied: then an
//!   added file is what the agent wrote, an updated one what its full view
//!   becomes with the patch (else the lines the patch wrote), and a deleted
//!   one is forgotten.
//!
//! A refusal is `hookSpecificOutput.permissionDecision: "deny"` with the
//! gate's message; the model receives "Command blocked by PreToolUse hook:
//! REASON. Command: …". A hook that fails outside the gate, when asked to
//! fail closed, exits 2 (Codex's blocking error).
//!
//! `SessionStart` (`source`: startup, resume, clear): Codex loads AGENTS.md
//! itself, and adds a start's context again on resume, so fsview sends only
//! instruction files of other names (`--also`), never on resume. What Codex
//! gave the model of AGENTS.md is in the transcript it names
//! (`transcript_path`, written before SessionStart runs): recorded as a view
//! of the AGENTS.md that holds exactly that text, if one does. The
//! transcript is the one file this adapter reads.
//! `UserPromptSubmit`: the reminder of changed files; Codex gives
//! `additionalContext` to the model verbatim, as a developer message.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::claude::Claude;
use crate::event::{Answer, Changed, Event, Extent, Patched, Shown, ShownText, Stage, Start, Who};
use crate::install::{Hook, Installer, Scope};
use crate::patch::{self, FileOp};
use crate::shell::{self, Lines};
use crate::{Agent, Parsed, Problem, Reply};

/// Codex.
pub struct Codex;

type Failed = (Stage, Problem);

fn problem(stage: Stage, msg: impl Into<String>) -> Failed {
    (stage, Problem::new(msg))
}

impl Agent for Codex {
    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload: Value = serde_json::from_slice(payload).map_err(|e| {
            problem(
                Stage::Other,
                format!("the hook payload is not JSON ({e}); fsview-hook codex reads one Codex hook payload on stdin"),
            )
        })?;
        let name = payload
            .get("hook_event_name")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                problem(
                    Stage::Other,
                    "the hook payload has no hook_event_name string; fsview-hook codex reads one Codex hook payload on stdin",
                )
            })?;
        let stage = match name {
            "PreToolUse" => Stage::AboutToChange,
            "PostToolUse" => Stage::Shown,
            "SessionStart" => Stage::SessionStart,
            "UserPromptSubmit" => Stage::Prompt,
            other => {
                return Err(problem(
                    Stage::Other,
                    format!("hook event {other:?} is not one fsview-hook answers; wire it to PreToolUse, PostToolUse, SessionStart and UserPromptSubmit only"),
                ))
            }
        };
        let who = who(&payload, name).map_err(|p| (stage, p))?;
        let event = match stage {
            Stage::AboutToChange => pre_tool_use(&payload),
            Stage::Shown => post_tool_use(&payload),
            Stage::SessionStart => Ok(session_start(&payload, &who)),
            _ => Ok(Event::Prompt),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event })
    }

    fn reply(&self, stage: Stage, answer: Answer) -> Reply {
        // Codex's hook answers are Claude Code's (permissionDecision,
        // additionalContext); only a prompt's context is never a tool's.
        let stage = match stage {
            Stage::SessionStart => Stage::SessionStart,
            Stage::AboutToChange => Stage::AboutToChange,
            _ => Stage::Prompt,
        };
        Claude.reply(stage, answer)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        // The same failure answers as Claude Code's: a deny naming the
        // problem, or exit 2, Codex's blocking error.
        Claude.fail(stage, msg, closed)
    }

    fn loads_itself(&self, name: &str) -> bool {
        matches!(name, "AGENTS.md" | "AGENTS.override.md")
    }
}

/// A session starts: and what Codex gave the model of AGENTS.md, where its
/// transcript says. Codex writes the instructions it loaded into the
/// transcript before SessionStart runs, as "# AGENTS.md instructions for
/// DIR", then the text between `<INSTRUCTIONS>` lines. The text is taken as
/// shown of the AGENTS.md of the working directory or one above it only
/// when that file holds exactly it (several files joined, or cut, hold
/// none of it: nothing is recorded).
fn session_start(payload: &Value, who: &Who) -> Event {
    let start = match payload.get("source").and_then(Value::as_str) {
        Some("resume") => Start::Resume,
        Some("clear") => Start::Clear,
        _ => Start::Startup,
    };
    let transcript = payload.get("transcript_path").and_then(Value::as_str);
    let loaded = match (start, transcript) {
        (Start::Resume, _) | (_, None) => None,
        (_, Some(t)) => agents_md(Path::new(t)),
    };
    let Some(text) = loaded else {
        return Event::SessionStart(start);
    };
    let mut events = vec![Event::SessionStart(start)];
    events.extend(who.cwd.ancestors().map(|dir| {
        Event::Shown(Shown {
            path: dir.join("AGENTS.md"),
            text: ShownText::Printed(text.clone()),
            offset: 1,
            extent: Extent::Whole,
        })
    }));
    Event::Each(events)
}

const AGENTS_MD: &str = "# AGENTS.md instructions for ";

/// The last AGENTS.md text a Codex transcript gave the model.
fn agents_md(transcript: &Path) -> Option<String> {
    let text = std::fs::read_to_string(transcript).ok()?;
    text.lines()
        .rev()
        .filter(|l| l.contains(AGENTS_MD))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| {
            let content = v.get("payload")?.get("content")?.as_array()?.clone();
            content.iter().find_map(|c| {
                let t = c.get("text")?.as_str()?;
                let rest = t.strip_prefix(AGENTS_MD)?;
                let inner = rest.split_once("\n\n<INSTRUCTIONS>\n")?.1;
                Some(inner.strip_suffix("\n</INSTRUCTIONS>")?.to_string())
            })
        })
}

/// A PreToolUse answer.
fn who(payload: &Value, event: &str) -> Result<Who, Problem> {
    let session = payload
        .get("session_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            Problem::new(format!(
                "the {event} payload has no session_id string; pass --sid ID to name the session"
            ))
        })?;
    let cwd = payload
        .get("cwd")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Problem::new(format!("the {event} payload has no cwd string")))?;
    Ok(Who {
        session: session.to_string(),
        agent: payload
            .get("agent_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(String::from),
        cwd: PathBuf::from(cwd),
    })
}

/// The tool and its `tool_input.command` (the command line, or the patch).
fn tool_command(payload: &Value) -> Result<(&str, &str), Problem> {
    let tool = payload
        .get("tool_name")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the payload has no tool_name string"))?;
    let command = payload
        .get("tool_input")
        .and_then(|i| i.get("command"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Problem::new(format!(
                "the {tool} payload has no tool_input.command string"
            ))
        })?;
    Ok((tool, command))
}

/// A patch's operations, or why it cannot be read (then it is refused:
/// fsview cannot tell what it would change).
fn operations(text: &str) -> Result<Vec<FileOp>, Problem> {
    patch::parse(text).ok_or_else(|| {
        Problem::new(
            "the patch is not in the apply_patch format (*** Begin Patch, *** Add/Update/Delete File: PATH, ..., *** End Patch)",
        )
    })
}

/// `path` as named from `dir` (a `cd DIR &&` before the command).
fn under(dir: &Option<PathBuf>, path: &Path) -> PathBuf {
    match dir {
        Some(d) => d.join(path),
        None => path.to_path_buf(),
    }
}

fn pre_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (tool, command) = tool_command(payload)?;
    let mut events = Vec::new();
    match tool {
        "apply_patch" => gates(&None, &operations(command)?, &mut events),
        "Bash" => {
            // Codex applies such a patch itself and reports nothing after:
            // gate it, and hold the views to what it will make of the files.
            let patches = shell::patch_heredocs(command);
            for (dir, text) in &patches {
                gates(dir, &operations(text)?, &mut events);
            }
            for (dir, text) in &patches {
                for op in operations(text)? {
                    events.extend(applied(dir, op, false));
                }
            }
        }
        _ => {}
    }
    Ok(match events.len() {
        0 => Event::Ignored,
        _ => Event::Each(events),
    })
}

/// The gate's questions for each file a patch changes.
fn gates(dir: &Option<PathBuf>, ops: &[FileOp], out: &mut Vec<Event>) {
    for op in ops {
        let (path, whole) = match op {
            FileOp::Update { path, .. } => (path, false),
            FileOp::Add { path, .. } | FileOp::Delete { path } => (path, true),
        };
        out.push(Event::AboutToChange {
            path: under(dir, path),
            whole,
        });
        if let FileOp::Update { to: Some(to), .. } = op {
            out.push(Event::AboutToChange {
                path: under(dir, to),
                whole: true,
            });
        }
    }
}

/// What a patch operation makes of its file, once applied (or about to be,
/// when not `done`).
fn applied(dir: &Option<PathBuf>, op: FileOp, done: bool) -> Option<Event> {
    Some(match op {
        FileOp::Add { path, text } if done => Event::Changed(Changed {
            path: under(dir, &path),
            text,
            before: None,
            whole: true,
        }),
        FileOp::Add { path, text } => Event::Patched(Patched {
            path: under(dir, &path),
            from: None,
            text: Some(text),
            chunks: Vec::new(),
            applied: false,
        }),
        FileOp::Delete { path } if done => Event::Removed(under(dir, &path)),
        // Not removed yet: the views stay until they are not fresh.
        FileOp::Delete { .. } => return None,
        FileOp::Update { path, to, chunks } => Event::Patched(Patched {
            path: under(dir, to.as_ref().unwrap_or(&path)),
            from: to.is_some().then(|| under(dir, &path)),
            text: None,
            chunks,
            applied: done,
        }),
    })
}

fn post_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (tool, command) = tool_command(payload)?;
    let output = payload.get("tool_response").and_then(Value::as_str);
    match tool {
        "apply_patch" => {
            // Applied only when Codex says so.
            if !output.is_some_and(|o| o.contains("Success. Updated the following files:")) {
                return Ok(Event::Ignored);
            }
            let events: Vec<Event> = operations(command)?
                .into_iter()
                .filter_map(|op| applied(&None, op, true))
                .collect();
            Ok(Event::Each(events))
        }
        "Bash" => {
            let (Some(read), Some(output)) = (shell::read(command), output) else {
                return Ok(Event::Ignored);
            };
            Ok(shown(read, output).map_or(Event::Ignored, Event::Shown))
        }
        _ => Ok(Event::Ignored),
    }
}

/// What a read command's output showed of its file.
fn shown(read: shell::Read, output: &str) -> Option<Shown> {
    let (output, truncated) = match untruncated(output) {
        Some(head) => (head, true),
        None => (output.to_string(), false),
    };
    let (offset, extent) = match read.lines {
        Lines::All if truncated => (1, Extent::Start),
        Lines::All if read.numbered => (1, Extent::Range),
        Lines::All => (1, Extent::Whole),
        Lines::Range { from, .. } => (from, Extent::Range),
        Lines::Head(_) => (1, Extent::Range),
        // Which lines a cut tail shows is not known.
        Lines::Tail(_) if truncated => return None,
        Lines::Tail(_) => (1, Extent::Tail),
    };
    let text = if read.numbered {
        unnumbered(&output, offset)?
    } else {
        output
    };
    if text.is_empty() {
        return None;
    }
    Some(Shown {
        path: under(&read.dir, &read.path),
        text: ShownText::Printed(text),
        offset,
        extent,
    })
}

/// The first complete lines of an output Codex truncated ("Warning:
/// truncated output (original token count: N)", "Total output lines: M",
/// a blank line, the head, "…K tokens truncated…", the tail); `None` when
/// it was not truncated.
fn untruncated(output: &str) -> Option<String> {
    let rest = output.strip_prefix("Warning: truncated output")?;
    let (_, body) = rest.split_once("\n\n")?;
    // The marker "…K tokens truncated…" (an ellipsis of the file's own
    // before it only cuts the head shorter).
    let cut = match body.find(" tokens truncated\u{2026}") {
        Some(end) => body[..end].rfind('\u{2026}').unwrap_or(end),
        None => body.len(),
    };
    let head = &body[..cut];
    // The line the cut went through was not shown whole.
    Some(match head.rfind('\n') {
        Some(i) => head[..=i].to_string(),
        None => String::new(),
    })
}

/// The lines of `nl -ba` (or `cat -n`) output without their numbers, which
/// must count up from `first`; the last newline left out (it is printed
/// even after a last line that has none).
fn unnumbered(output: &str, first: u64) -> Option<String> {
    let body = output.strip_suffix('\n').unwrap_or(output);
    let mut lines = Vec::new();
    for (i, line) in body.split('\n').enumerate() {
        let (n, text) = shell::unnumber(line)?;
        if n != first + i as u64 {
            return None;
        }
        lines.push(text);
    }
    Some(lines.join("\n"))
}

/// Codex's hook files and the hooks fsview wires into them.
pub struct CodexInstaller;

/// The wiring: the gate before every patch and shell command (a patch can
/// come as a here-document), a record after each, the session's start
/// (not on resume, where Codex would add it again), each prompt.
pub const HOOKS: &[Hook] = &[
    Hook {
        event: "PreToolUse",
        matcher: Some("^(apply_patch|Bash)$"),
        fail_closed: true,
    },
    Hook {
        event: "PostToolUse",
        matcher: Some("^(apply_patch|Bash)$"),
        fail_closed: false,
    },
    Hook {
        event: "SessionStart",
        matcher: Some("^(startup|clear)$"),
        fail_closed: false,
    },
    Hook {
        event: "UserPromptSubmit",
        matcher: None,
        fail_closed: false,
    },
];

impl Installer for CodexInstaller {
    fn agent(&self) -> &'static str {
        "codex"
    }

    /// Codex reads `.codex/hooks.json` of the project, and the user's from
    /// `$CODEX_HOME`, else `~/.codex`.
    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
        match scope {
            Scope::Project => Ok(cwd.join(".codex").join("hooks.json")),
            Scope::User => {
                let dir = match std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
                    Some(d) => cwd.join(d),
                    None => crate::gemini::home("CODEX_HOME", cwd)?.join(".codex"),
                };
                Ok(dir.join("hooks.json"))
            }
            Scope::Local => Err(Problem::new(
                "Codex has no hook file for one user in one project; use --project or --user",
            )),
        }
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }

    fn hooks(&self) -> &'static [Hook] {
        HOOKS
    }

    fn next_step(&self, scope: Scope) -> Option<String> {
        let project = if scope == Scope::Project {
            "trust this project and "
        } else {
            ""
        };
        Some(format!(
            "Codex runs hooks only once they are trusted: start codex here, {project}trust fsview's hooks in /hooks (they run no more after an edit of this file until trusted again), or run codex with --dangerously-bypass-hook-trust"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A subagent's payloads carry `agent_id` and `agent_type`; the main
    /// thread's do not.
    #[test]
    fn a_subagent_is_named_by_its_agent_id() {
        let p = json!({"session_id": "s", "cwd": "/w", "hook_event_name": "UserPromptSubmit",
            "prompt": "x", "agent_id": "sub-1", "agent_type": "worker"});
        let parsed = Codex.parse(p.to_string().as_bytes()).unwrap();
        assert_eq!(parsed.who.agent.as_deref(), Some("sub-1"));
        assert_eq!(parsed.event, Event::Prompt);
        let mut p = p;
        p.as_object_mut().unwrap().remove("agent_id");
        let parsed = Codex.parse(p.to_string().as_bytes()).unwrap();
        assert_eq!(parsed.who.agent, None);
    }

    #[test]
    fn a_truncated_output_shows_its_first_whole_lines() {
        let out = "Warning: truncated output (original token count: 57224)\nTotal output lines: 5000\n\nline 1\nline 2\nline 3 of\u{2026}57124 tokens truncated\u{2026}line 4999\nline 5000\n";
        assert_eq!(untruncated(out).as_deref(), Some("line 1\nline 2\n"));
        assert_eq!(untruncated("line 1\n"), None);
    }

    #[test]
    fn numbered_lines_count_up() {
        assert_eq!(
            unnumbered("     3\tline 3\n     4\t\n", 3).as_deref(),
            Some("line 3\n")
        );
        assert_eq!(unnumbered("     3\ta\n     5\tb\n", 3), None);
        assert_eq!(unnumbered("a\n", 1), None);
    }
}
