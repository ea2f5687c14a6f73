//! GitHub Copilot CLI's command hooks, as fsview's common events.
//!
//! Fields as Copilot CLI 1.0.102 sends them (fixtures captured from the
//! real binary, run against a local model with `COPILOT_PROVIDER_BASE_URL`:
//! `tests/fixtures/hooks/copilot-1.0.102/`). Hooks live in
//! `.github/hooks/*.json` as `{"version": 1, "hooks": {EVENT: [{"type":
//! "command", "bash": C, "timeoutSec": N}]}}`. With camelCase event names
//! (these) a payload is `{sessionId, timestamp, cwd, ...}` and does not
//! name its event, so the installed command says it (`--event`); without
//! it the event is told by the payload's fields.
//!
//! - `preToolUse` of `edit` (`toolArgs.path`): a targeted edit; of
//!   `create`: a whole-file write (the tool refuses an existing file, and
//!   the gate says `new_file`). A refusal is `{"permissionDecision":
//!   "deny", "permissionDecisionReason": R}`; the model receives "Denied by
//!   preToolUse hook: R". Copilot CLI denies the tool when a preToolUse
//!   hook fails in any way (any exit but 0, a hook that cannot start).
//! - `postToolUse` of `view`: `toolResult.textResultForLlm` is the file's
//!   text exactly as the model got it: the bytes of the whole file, or of
//!   lines A-B of `view_range: [A, B]` (`B` = -1: to the end) joined by
//!   newlines, the last one's left out unless the range reaches the end.
//!   Over 20 KB a whole-file view shows only "File too large to read at
//!   once (...)": nothing of the file. A directory shows a listing.
//! - `postToolUse` of `edit`: "File X updated with changes.": the tool
//!   replaced the one `old_str` with `new_str`, and says nothing else; the
//!   agent's last view with that replacement applied is what it now knows
//!   ([`Event::Edited`]). Of `create`: `file_text` is the whole file.
//! - `preToolUse` of `bash` (`toolArgs.command`): the gate for each file
//!   the command writes ([`shell`](crate::shell)); `postToolUse` of it:
//!   what it showed (`textResultForLlm`: what it printed, trimmed, then a
//!   `<shellId: N completed with exit code X>` line; a preview of the
//!   first 500 characters of a large one).
//! - `userPromptSubmitted`: the reminder, as `additionalContext`, which the
//!   model receives verbatim inside `<system_reminder>` after the prompt;
//!   `postToolUse` of any tool: the same, which Copilot CLI 1.0.102 appends
//!   verbatim to the tool's result ("Tool "view" succeeded. Additional
//!   guidance from postToolUse hooks:" and the text). So an `edit` of a
//!   file that changed since the agent's whole view, 3 or more lines from
//!   that change, is let through and the change told after it.
//! - `sessionStart`: nothing. Copilot CLI loads its own instruction files,
//!   and the payload does not say what it gave the model.
//! - `preCompact`: every view is released ([`Event::Compacted`]). Copilot
//!   CLI compacts on its own, headless too: once its estimate of the
//!   context passes a threshold of the model's prompt limit it asks the
//!   model for a summary in the background, and when that comes back it
//!   replaces everything before the compaction's start with it ("Some of
//!   the conversation history has been ..."), keeping what came after.
//!   The hook fires at the start, so what is read after it stays held. A
//!   compaction cancelled (the process ended first) leaves the views
//!   released while the model still has them: a read again, never a
//!   write let through blind.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::event::{
    Answer, Change, Changed, Edited, Event, Extent, Replace, Shown, ShownText, Stage, Who,
};
use crate::install::{Installer, OwnFile, Part, Run, Scope};
use crate::shell::{self, Output};
use crate::{payload, Agent, Parsed, Problem, Reply};

/// The hook events fsview-hook answers, as Copilot CLI names them.
pub const EVENTS: &[&str] = &[
    "preToolUse",
    "postToolUse",
    "userPromptSubmitted",
    "preCompact",
];

/// Copilot CLI, answering `event` (told by the payload when `None`).
pub struct Copilot {
    pub event: Option<String>,
}

type Failed = (Stage, Problem);

impl Agent for Copilot {
    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload = payload::object(payload, || {
            "the hook payload is not a JSON object; fsview-hook copilot reads one Copilot CLI hook payload on stdin".into()
        })?;
        let event = match &self.event {
            Some(e) => e.as_str(),
            None => event_of(&payload),
        };
        let stage = match event {
            "preToolUse" => Stage::AboutToChange,
            "postToolUse" => Stage::Shown,
            "userPromptSubmitted" => Stage::Prompt,
            "sessionStart" => Stage::SessionStart,
            "preCompact" => Stage::Other,
            other => {
                return Err((
                    Stage::Other,
                    Problem::new(format!("hook event {other:?} is not one fsview-hook copilot answers; wire it to preToolUse, postToolUse, userPromptSubmitted and preCompact only")),
                ))
            }
        };
        let who = who(&payload, event).map_err(|p| (stage, p))?;
        let parsed = match stage {
            Stage::AboutToChange => pre_tool_use(&payload),
            // After any tool: what changed meanwhile is told with its
            // result.
            Stage::Shown => {
                post_tool_use(&payload, &who.cwd).map(|e| Event::AfterTool(Box::new(e)))
            }
            Stage::Prompt => Ok(Event::Prompt),
            _ if event == "preCompact" => Ok(Event::Compacted),
            _ => Ok(Event::Ignored),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event: parsed })
    }

    fn reply(&self, _stage: Stage, answer: Answer) -> Reply {
        let out = match answer {
            Answer::Nothing => return Reply::nothing(),
            Answer::Allow(reason) => decision("allow", &reason),
            Answer::Deny(reason) => decision("deny", &reason),
            Answer::Context(text) | Answer::Short(_, Some(text)) => {
                json!({ "additionalContext": text })
            }
            // Never asked for: copilot cannot replace a read's output.
            Answer::Short(_, None) => return Reply::nothing(),
        };
        Reply::json(&out)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        if !closed {
            return Reply::error(msg, 0);
        }
        if stage == Stage::AboutToChange {
            // A deny with the reason, which the model sees (a failing hook
            // is denied too, but as "hook errored", without it).
            return Reply::unchecked(msg, |reason| decision("deny", reason));
        }
        Reply::error(msg, 2)
    }

    /// Copilot CLI's `view` shows the file's bytes as they are, with no line numbers.
    fn numbers_reads(&self) -> bool {
        false
    }

    fn loads_itself(&self, name: &str) -> bool {
        matches!(
            name,
            "AGENTS.md" | "CLAUDE.md" | "GEMINI.md" | "copilot-instructions.md"
        )
    }

    /// postToolUse's `additionalContext` reaches the model verbatim with
    /// the tool's result, and an `edit` is recorded as the agent's last
    /// view with its replacement: an edit far from an outside change is
    /// merged, the change told after it.
    fn tells_after_change(&self) -> bool {
        true
    }
}

/// The event a camelCase payload is, by its fields.
fn event_of(payload: &Value) -> &'static str {
    let has = |k: &str| payload.get(k).is_some();
    if has("toolResult") {
        "postToolUse"
    } else if has("error") && has("toolName") {
        "postToolUseFailure"
    } else if has("toolName") {
        "preToolUse"
    } else if has("prompt") {
        "userPromptSubmitted"
    } else if has("trigger") && has("transcriptPath") {
        "preCompact"
    } else if has("source") {
        "sessionStart"
    } else {
        "unknown"
    }
}

fn decision(verdict: &str, reason: &str) -> Value {
    json!({"permissionDecision": verdict, "permissionDecisionReason": reason})
}

fn who(payload: &Value, event: &str) -> Result<Who, Problem> {
    const FIELDS: payload::Fields = payload::Fields {
        session: "/sessionId",
        cwd: "/cwd",
        agent: None,
        call: None,
        transcript: None,
        prompt: None,
    };
    payload::who(payload, event, &FIELDS)
}

/// The tool's name and arguments (an object, or an object as a JSON
/// string, as the documentation shows it).
fn tool(payload: &Value) -> Result<(&str, Value), Problem> {
    let name = payload
        .get("toolName")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the payload has no toolName string"))?;
    let args = match payload.get("toolArgs") {
        Some(Value::String(s)) => serde_json::from_str(s).ok(),
        Some(v) => Some(v.clone()),
        None => None,
    }
    .filter(Value::is_object)
    .ok_or_else(|| Problem::new(format!("the {name} payload has no toolArgs object")))?;
    Ok((name, args))
}

fn path(tool: &str, args: &Value) -> Result<PathBuf, Problem> {
    args.get("path")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Problem::new(format!("the {tool} payload has no toolArgs.path string")))
}

fn pre_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (name, args) = tool(payload)?;
    if name == "bash" {
        return Ok(Event::all(shell::about_to_run(bash_command(&args)?, None)));
    }
    let whole = match name {
        "create" => true,
        "edit" => false,
        _ => return Ok(Event::Ignored),
    };
    let path = path(name, &args)?;
    match (whole, Replace::of(&args, "old_str", "new_str", None)) {
        (false, Some(r)) => Ok(Event::AboutToReplace {
            path,
            edits: vec![r],
        }),
        _ => Ok(Event::AboutToChange { path, whole }),
    }
}

fn bash_command(args: &Value) -> Result<&str, Problem> {
    args.get("command")
        .and_then(Value::as_str)
        .ok_or_else(|| Problem::new("the bash payload has no toolArgs.command string"))
}

/// What a bash command showed: `textResultForLlm` is what it printed
/// (standard output and error, through a terminal) with the whitespace at
/// both ends removed, then a line "<shellId: N completed with exit code
/// X>". Over about 20 KB it is "Output too large to read at once", and a
/// "Preview (first 500 chars):" of it. A command run `async` showed
/// nothing yet.
fn bash_ran(args: &Value, result: Option<&Value>) -> Result<Event, Problem> {
    let command = bash_command(args)?;
    let text = result
        .filter(|r| r.get("resultType").and_then(Value::as_str) == Some("success"))
        .and_then(|r| r.get("textResultForLlm"))
        .and_then(Value::as_str);
    let sync = args
        .get("mode")
        .and_then(Value::as_str)
        .is_none_or(|m| m == "sync");
    let output = text.filter(|_| sync).and_then(|t| {
        let (body, last) = t.rsplit_once('\n')?;
        if !(last.starts_with("<shellId: ") && last.contains(" completed with exit code ")) {
            return None;
        }
        if body.starts_with("Output too large to read at once (") {
            let (_, preview) = body.split_once("\nPreview (first ")?;
            let (_, head) = preview.split_once("):\n")?;
            return Some(Output::Head {
                text: head,
                trimmed: true,
            });
        }
        Some(Output::Trimmed(body))
    });
    Ok(Event::all(shell::ran(command, None, output)))
}

fn post_tool_use(payload: &Value, cwd: &Path) -> Result<Event, Problem> {
    let (name, args) = tool(payload)?;
    if name == "bash" {
        return bash_ran(&args, payload.get("toolResult").filter(|v| v.is_object()));
    }
    if !matches!(name, "view" | "edit" | "create") {
        return Ok(Event::Ignored);
    }
    let path = path(name, &args)?;
    let result = payload.get("toolResult").filter(|v| v.is_object());
    let kind = result
        .and_then(|r| r.get("resultType"))
        .and_then(Value::as_str);
    if kind != Some("success") {
        return Ok(Event::Ignored);
    }
    let text = result
        .and_then(|r| r.get("textResultForLlm"))
        .and_then(Value::as_str);
    let string = |k: &str| args.get(k).and_then(Value::as_str);
    match name {
        "view" => {
            let text = text.ok_or_else(|| {
                Problem::new("the view response has no toolResult.textResultForLlm, so nothing was recorded")
            })?;
            view(path, &args, text, cwd)
        }
        "create" => Ok(Event::Changed(Changed {
            path,
            text: string("file_text")
                .ok_or_else(|| {
                    Problem::new(
                        "the create payload has no toolArgs.file_text, so nothing was recorded",
                    )
                })?
                .to_string(),
            before: None,
            whole: true,
        })),
        _ => match (string("old_str"), string("new_str")) {
            (Some(old), new) => Ok(Event::Edited(Edited {
                path,
                change: Change::Replace {
                    old: old.to_string(),
                    new: new.unwrap_or("").to_string(),
                    all: false,
                },
            })),
            (None, _) => Err(Problem::new(
                "the edit payload has no toolArgs.old_str, so what it changed is unknown and nothing was recorded",
            )),
        },
    }
}

fn view(path: PathBuf, args: &Value, text: &str, cwd: &Path) -> Result<Event, Problem> {
    // A directory's listing, or the stub of a file too large to show: no
    // file's text was shown.
    if cwd.join(&path).is_dir() || text.starts_with("File too large to read at once (") {
        return Ok(Event::Ignored);
    }
    let range = args.get("view_range").and_then(Value::as_array);
    let (offset, extent) = match range.map(|r| r.as_slice()) {
        None => (1, Extent::Whole),
        Some([first, _last]) => match first.as_u64() {
            Some(f) => (f.max(1), Extent::Range),
            None => return Ok(Event::Ignored),
        },
        Some(_) => return Ok(Event::Ignored),
    };
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Lines(text.to_string()),
        offset,
        extent,
    }))
}

/// Where Copilot CLI reads hooks: `.github/hooks/` at the top of the git
/// work tree (else the current directory) for a project, the user's
/// `$COPILOT_HOME/hooks/` (else `~/.copilot/hooks/`).
pub fn hooks_file(scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
    let dir = match scope {
        Scope::Project => crate::install::work_top(cwd)
            .unwrap_or_else(|| cwd.to_path_buf())
            .join(".github")
            .join("hooks"),
        Scope::User => std::env::var_os("COPILOT_HOME")
            .filter(|h| !h.is_empty())
            .map(|h| cwd.join(h))
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(|h| PathBuf::from(h).join(".copilot"))
            })
            .ok_or_else(|| {
                Problem::new(
                    "neither COPILOT_HOME nor HOME is set, so the user's hooks cannot be found; use --project",
                )
            })?
            .join("hooks"),
        Scope::Local => {
            return Err(Problem::new(
                "Copilot CLI has no local hooks file; use --project (.github/hooks/) or --user (~/.copilot/hooks/)",
            ))
        }
    };
    Ok(dir.join("fsview.json"))
}

/// The hooks file fsview-hook owns: every event it answers, each running
/// `command --event EVENT`.
pub fn hooks_document(command: &str) -> Value {
    let mut hooks = serde_json::Map::new();
    for e in EVENTS {
        hooks.insert(
            (*e).to_string(),
            json!([{
                "type": "command",
                "bash": format!("{command} --event {e}"),
                "timeoutSec": 30,
            }]),
        );
    }
    json!({"version": 1, "hooks": hooks})
}

/// Copilot CLI's hooks file, `.github/hooks/fsview.json`: a file of
/// fsview-hook's own, so nothing else of the user's is touched; a file
/// there that fsview-hook did not write is left alone.
pub struct CopilotInstaller;

impl Installer for CopilotInstaller {
    fn agent(&self) -> &'static str {
        "copilot"
    }

    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
        hooks_file(scope, cwd)
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }

    fn events(&self) -> Vec<&'static str> {
        EVENTS.to_vec()
    }

    fn next_step(&self, _scope: Scope, _cwd: &Path) -> Option<String> {
        Some("Copilot CLI runs a folder's hooks once the folder is trusted: answer its trust prompt, or run it with --trust-folder (or COPILOT_ALLOW_ALL=true).".into())
    }

    fn parts(&self, scope: Scope, cwd: &Path, run: &Run) -> Result<Vec<Box<dyn Part>>, Problem> {
        let mut text = serde_json::to_string_pretty(&hooks_document(&run.command("copilot")))
            .expect("JSON serializes");
        text.push('\n');
        Ok(vec![Box::new(OwnFile {
            file: hooks_file(scope, cwd)?,
            base: self.base(scope, cwd)?,
            text,
            ours: Box::new(|text| {
                serde_json::from_str::<Value>(text).is_ok_and(|v| {
                    v.get("hooks").and_then(Value::as_object).is_some_and(|h| {
                        h.values()
                            .flat_map(|l| l.as_array().into_iter().flatten())
                            .all(|e| {
                                e.get("bash")
                                    .and_then(Value::as_str)
                                    .is_some_and(|b| crate::install::runs_fsview_hook(b, "copilot"))
                            })
                    })
                })
            }),
            executable: false,
        })])
    }
}
