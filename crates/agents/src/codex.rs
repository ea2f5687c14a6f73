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
//!   fsview cannot read is refused. An update of a file that changed since
//!   the agent's whole view is let through when each chunk's old lines are
//!   found once, 3 or more lines from that change (a merge, as for the
//!   other agents' targeted edits), and the change is told after it. PostToolUse's `tool_response` ends
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
//! `UserPromptSubmit`, and `PostToolUse` of every patch and command: the
//! reminder of changed files; Codex gives `additionalContext` to the model
//! verbatim, as a developer message (after a tool, between its call and
//! its output).
//! `PostCompact` (`trigger`: auto, manual; seen after an automatic
//! compaction, `model_auto_compact_token_limit`): the conversation is a
//! summary now, and none of its views is held any more. (A `SessionStart`
//! with `source` compact follows; the installer's matcher leaves it out.)
//! An `@path` in Codex's prompt is a path only: Codex reads nothing itself.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::claude::Claude;
use crate::event::{Answer, Event, Extent, Form, Printed, Shown, ShownText, Stage, Start, Who};
use crate::install::{Hook, Installer, Scope};
use crate::patch;
use crate::shell::{self, Output};
use crate::{payload, Agent, Parsed, Problem, Reply};

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
            "PostCompact" => Stage::Shown,
            other => {
                return Err(problem(
                    Stage::Other,
                    format!("hook event {other:?} is not one fsview-hook answers; wire it to PreToolUse, PostToolUse, SessionStart, UserPromptSubmit and PostCompact only"),
                ))
            }
        };
        let who = who(&payload, name).map_err(|p| (stage, p))?;
        let event = match stage {
            Stage::AboutToChange => pre_tool_use(&payload),
            Stage::Shown if name == "PostCompact" => Ok(Event::Compacted),
            // After a patch or a command: what changed meanwhile is told
            // there, with its result.
            Stage::Shown => post_tool_use(&payload).map(|e| Event::AfterTool(Box::new(e))),
            Stage::SessionStart => Ok(session_start(&payload, &who)),
            _ => Ok(Event::Prompt),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event })
    }

    fn reply(&self, stage: Stage, answer: Answer) -> Reply {
        // Codex's hook answers are Claude Code's (permissionDecision,
        // additionalContext, which Codex 0.171.0 hands the model as a
        // developer message after a tool's call as after a prompt).
        let stage = match stage {
            Stage::SessionStart => Stage::SessionStart,
            Stage::AboutToChange => Stage::AboutToChange,
            Stage::Shown | Stage::Changed => Stage::Shown,
            _ => Stage::Prompt,
        };
        Claude.reply(stage, answer)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        // The same failure answers as Claude Code's: a deny naming the
        // problem, or exit 2, Codex's blocking error.
        Claude.fail(stage, msg, closed)
    }

    /// Codex reads with `cat`: the file's text as it is, with no line numbers.
    fn numbers_reads(&self) -> bool {
        false
    }

    fn loads_itself(&self, name: &str) -> bool {
        matches!(name, "AGENTS.md" | "AGENTS.override.md")
    }

    /// `PostCompact` (seen headless) releases every view.
    fn tells_drops(&self) -> bool {
        true
    }

    /// What changed meanwhile is told after every `apply_patch` and shell
    /// command (PostToolUse's `additionalContext`).
    fn tells_after_change(&self) -> bool {
        true
    }

    /// Codex 0.171.0 hands PreToolUse's `additionalContext` to the model
    /// too, verbatim, as a developer message between the call and its
    /// output (seen for `cat` and for a here-document patch, which gets no
    /// PostToolUse): a patch or `sed -i` far from an outside change is
    /// merged, the change told with the call, as under Claude Code.
    fn tells_before_change(&self) -> bool {
        true
    }

    /// Codex 0.171.0 saves hook `additionalContext` over 2,500 tokens (it
    /// counts a token per 4 bytes: 10,000 bytes) to a file and hands the
    /// model its head and tail ("Full hook output saved to: ...";
    /// `scripts/e2e-codex long-reminder`). A handler's
    /// `additionalContextLimit` did not lift it there. fsview keeps 500
    /// bytes under it, since how Codex rounds was read from its source,
    /// not measured at the edge.
    fn context_limit(&self) -> Option<(usize, &'static str)> {
        Some((
            9_500,
            "Codex shows the model only the start and end of hook context over 2,500 tokens",
        ))
    }

    fn context_len(&self, text: &str) -> usize {
        text.len()
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
            text: ShownText::Printed(Printed {
                text: text.clone(),
                form: Form::Exact,
            }),
            offset: 1,
            extent: Extent::Whole,
        })
    }));
    Event::Each(events)
}

const AGENTS_MD: &str = "# AGENTS.md instructions for ";

/// How much of a Codex transcript is read for it: what a session's start
/// loaded is written first, before SessionStart runs.
const AGENTS_MD_HEAD: usize = 16 << 20;

/// The last AGENTS.md text a Codex transcript gave the model (only a
/// regular file is opened, and only its start read: a FIFO or a device at
/// `transcript_path` would stall the hook).
fn agents_md(transcript: &Path) -> Option<String> {
    let head = crate::transcript::head(transcript, AGENTS_MD_HEAD)?;
    let text = String::from_utf8_lossy(&head);
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

fn who(payload: &Value, event: &str) -> Result<Who, Problem> {
    // Codex's transcript (a rollout file) is not read: what it shows the
    // model arrives through its hooks.
    let fields = payload::Fields {
        transcript: None,
        ..payload::CLAUDE
    };
    payload::who(payload, event, &fields)
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

fn pre_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (tool, command) = tool_command(payload)?;
    let mut events = Vec::new();
    match tool {
        "apply_patch" => events = patch::gates_merging(None, &patch::operations(command)?),
        "Bash" => match shell::apply_patch(command) {
            // Codex applies such a patch itself, without running the
            // command, and reports nothing after: gate it (an update merged
            // with a change told with the call, as the tool's), and hold the
            // views to what it will make of the files.
            Some((dir, text)) => {
                let ops = patch::operations(&text)?;
                events = patch::gates_merging(dir.as_deref(), &ops);
                events.extend(
                    ops.into_iter()
                        .filter_map(|op| patch::applied(dir.as_deref(), op, false)),
                );
            }
            // Any other command: the files it writes.
            None => events = shell::about_to_run(command, None),
        },
        _ => {}
    }
    Ok(Event::all(events))
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
            let events: Vec<Event> = patch::operations(command)?
                .into_iter()
                .filter_map(|op| patch::applied(None, op, true))
                .collect();
            Ok(Event::Each(events))
        }
        "Bash" => {
            // The output the model got: maybe from a terminal (`tty`, which
            // the payload does not say), maybe cut in the middle.
            let head = output.and_then(untruncated);
            let shown = match (&head, output) {
                (Some(h), _) => Some(Output::Head {
                    text: h,
                    trimmed: false,
                }),
                (None, Some(o)) => Some(Output::Terminal(o)),
                (None, None) => None,
            };
            Ok(Event::all(shell::ran(command, None, shown)))
        }
        _ => Ok(Event::Ignored),
    }
}

/// The head of an output Codex truncated ("Warning: truncated output
/// (original token count: N)", "Total output lines: M", a blank line, the
/// head, "…K tokens truncated…", the tail); `None` when it was not
/// truncated.
fn untruncated(output: &str) -> Option<&str> {
    let rest = output.strip_prefix("Warning: truncated output")?;
    let (_, body) = rest.split_once("\n\n")?;
    // The marker "…K tokens truncated…" (an ellipsis of the file's own
    // before it only cuts the head shorter).
    let cut = match body.find(" tokens truncated\u{2026}") {
        Some(end) => body[..end].rfind('\u{2026}').unwrap_or(end),
        None => body.len(),
    };
    Some(&body[..cut])
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
    Hook {
        event: "PostCompact",
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

    fn next_step(&self, scope: Scope, _cwd: &Path) -> Option<String> {
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
    fn a_truncated_output_shows_its_head() {
        let out = "Warning: truncated output (original token count: 57224)\nTotal output lines: 5000\n\nline 1\nline 2\nline 3 of\u{2026}57124 tokens truncated\u{2026}line 4999\nline 5000\n";
        assert_eq!(untruncated(out), Some("line 1\nline 2\nline 3 of"));
        assert_eq!(untruncated("line 1\n"), None);
    }
}
