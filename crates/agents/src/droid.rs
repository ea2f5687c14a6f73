//! Factory Droid's command hooks, as fsview's common events.
//!
//! Fields as Droid 0.225.2 sends them (fixtures captured from the real
//! binary, run with a BYOK custom model on a local server:
//! `tests/fixtures/hooks/droid-0.225.2/`). The hooks are Claude Code's
//! classic ones, read from the `hooks` key of `.factory/settings.json`
//! (not from `.factory/hooks.json`), with the same envelope (`session_id`,
//! `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`) and the
//! same answers, so the envelope and the replies are
//! [`claude`](crate::claude)'s. The tools are Droid's own:
//!
//! - `PreToolUse` of `Edit` (`file_path`, `old_str`, `new_str`,
//!   `change_all`): a targeted edit; of `Create` (`file_path`, `content`):
//!   a whole-file write. A refusal is `permissionDecision: "deny"`; the
//!   model receives "Error: REASON". `ApplyPatch` (offered to some models)
//!   is gated file by file when its input holds a patch in the
//!   `apply_patch` format, and refused when it does not: its payload was
//!   never seen (the BYOK model was not offered it headless). Of
//!   `Execute` (`command`, `riskLevel`, `riskLevelReason`; it runs in the
//!   session's `cwd`): the gate for each file the command writes, as the
//!   shell reader finds them ([`shell::about_to_run`]); Droid refuses the
//!   command as it refuses an edit.
//! - `PostToolUse` of `Read`: `tool_response` is the string the model got.
//!   A whole file is its text as it is (CRLF as LF), no line numbers, no
//!   line cut. A part ends in `\n\n<system-reminder>[Showing lines A-B of
//!   N total lines]</system-reminder>` after lines A to B joined by `\n`
//!   (N counts the empty piece after a final newline): the range asked
//!   (`offset` from 1, `limit`), or the first 2,400 lines of a longer file.
//!   A directory or an image is no text.
//! - `PostToolUse` of `Edit`: `tool_response` is a JSON string
//!   (`{"success": true, "diffLines": [...]}`) that does not hold the
//!   file; the agent's last view with `old_str` replaced is what it now
//!   knows ([`Event::Edited`]). Of `Create`: the input's `content` is the
//!   whole file. Of `Execute`: the command's output, then `\n\n[Process
//!   exited with code N]`; a read command's output (`cat`, `sed -n`, ...,
//!   see [`shell`](crate::shell)) is recorded when the disk holds exactly
//!   that.
//! - The reminder of files changed since they were seen goes with every
//!   `PostToolUse` (as `additionalContext`, which the model receives
//!   verbatim as a user message after the tool's result): `droid exec`
//!   fires no `UserPromptSubmit`, not even for the second message of a
//!   `--input-format stream-json` session. `UserPromptSubmit` is wired
//!   too, for the interactive Droid, and answered the same way.
//! - `SessionStart` (`source`: `startup`, ...): Droid loads AGENTS.md
//!   itself; only `--also` files of other names are sent, as
//!   `additionalContext` (a user message before the prompt, verbatim).
//!
//! Droid's subagents (custom droids, the `Task` tool) are not offered in
//! `droid exec` without `allowSubagentsInScripts`; their payloads were not
//! seen, so a subagent's changes are treated as the main thread's.

use std::path::PathBuf;

use serde_json::Value;

use crate::claude::{self, Claude};
use crate::event::{
    Answer, Change, Changed, Edited, Event, Extent, Replace, Shown, ShownText, Stage, Start,
};
use crate::install::{Hook, Installer, Scope};
use crate::patch::{self, FileOp};
use crate::shell;
use crate::{payload, Agent, Parsed, Problem, Reply};

/// Factory Droid.
pub struct Droid;

type Failed = (Stage, Problem);

impl Agent for Droid {
    /// Droid refuses an Edit of a file changed since its own last Read,
    /// even after fsview told the change: seen on 0.225.2 (e2e-droid
    /// merge-near-edit, the retry).
    fn rereads_after_change(&self) -> bool {
        true
    }

    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload = payload::object(payload, || {
            "the hook payload is not a JSON object; fsview-hook droid reads one Droid hook payload on stdin".into()
        })?;
        let name = payload::hook_event_name(&payload)?;
        let stage = match name {
            "PreToolUse" => Stage::AboutToChange,
            "PostToolUse" => Stage::Shown,
            "UserPromptSubmit" => Stage::Prompt,
            "SessionStart" => Stage::SessionStart,
            other => {
                return Err((
                    Stage::Other,
                    Problem::new(format!("hook event {other:?} is not one fsview-hook droid answers; wire it to PreToolUse, PostToolUse, UserPromptSubmit and SessionStart only")),
                ))
            }
        };
        let who = claude::who(&payload, name).map_err(|p| (stage, p))?;
        let event = match stage {
            Stage::AboutToChange => pre_tool_use(&payload),
            // What the tool showed or changed, then what changed meanwhile.
            Stage::Shown => post_tool_use(&payload).map(|e| match e {
                Event::Ignored => Event::ToolDone,
                e => Event::Each(vec![e, Event::ToolDone]),
            }),
            Stage::Prompt => Ok(Event::Prompt),
            _ => Ok(Event::SessionStart(
                match payload.get("source").and_then(Value::as_str) {
                    Some("resume") => Start::Resume,
                    Some("clear") => Start::Clear,
                    Some("compact") => Start::Compact,
                    _ => Start::Startup,
                },
            )),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event })
    }

    fn reply(&self, stage: Stage, answer: Answer) -> Reply {
        Claude.reply(stage, answer)
    }

    fn fail(&self, stage: Stage, msg: &str, closed: bool) -> Reply {
        Claude.fail(stage, msg, closed)
    }

    /// Droid's `Read` shows the file's text as it is, with no line numbers.
    fn numbers_reads(&self) -> bool {
        false
    }

    fn loads_itself(&self, name: &str) -> bool {
        name == "AGENTS.md"
    }

    fn transcript(&self) -> Option<&'static dyn crate::transcript::Format> {
        Some(&crate::transcript::droid::DROID)
    }
}

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

fn pre_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (name, input) = tool(payload)?;
    let whole = match name {
        "Create" => true,
        "Edit" => false,
        "ApplyPatch" => return apply_patch(input),
        "Execute" => {
            let command = input
                .get("command")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Problem::new("the Execute payload has no tool_input.command string")
                })?;
            return Ok(Event::all(shell::about_to_run(command, None)));
        }
        _ => return Ok(Event::Ignored),
    };
    let path = claude::input_path(name, input, "file_path")?;
    if let (false, Some(r)) = (
        whole,
        Replace::of(input, "old_str", "new_str", Some("change_all")),
    ) {
        return Ok(Event::AboutToReplace {
            path,
            edits: vec![r],
        });
    }
    Ok(Event::AboutToChange { path, whole })
}

/// ApplyPatch: a gate for each file of the patch, found in the first
/// string of its input that is one.
fn apply_patch(input: &Value) -> Result<Event, Problem> {
    let ops = input
        .as_object()
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(Value::as_str)
        .find_map(patch::parse)
        .ok_or_else(|| {
            Problem::new("the ApplyPatch input holds no patch in the apply_patch format (*** Begin Patch, *** Update File: PATH, ...)")
        })?;
    let mut events = Vec::new();
    for op in &ops {
        let whole = !matches!(op, FileOp::Update { .. });
        events.push(Event::AboutToChange {
            path: op.path().clone(),
            whole,
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

fn post_tool_use(payload: &Value) -> Result<Event, Problem> {
    let (name, input) = tool(payload)?;
    if !matches!(name, "Read" | "Edit" | "Create" | "Execute") {
        return Ok(Event::Ignored);
    }
    // An image, a refused or failed call: no text the tool reports as shown.
    let Some(response) = payload.get("tool_response").and_then(Value::as_str) else {
        return Ok(Event::Ignored);
    };
    if name == "Execute" {
        return Ok(execute(input, response));
    }
    let path = claude::input_path(name, input, "file_path")?;
    match name {
        "Read" => read(path, input, response),
        "Create" => {
            if !succeeded(response) {
                return Ok(Event::Ignored);
            }
            let text = input
                .get("content")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Problem::new("the Create payload has no tool_input.content string, so nothing was recorded")
                })?;
            Ok(Event::Changed(Changed {
                path,
                text: text.to_string(),
                before: None,
                whole: true,
            }))
        }
        _ => {
            if !succeeded(response) {
                return Ok(Event::Ignored);
            }
            let text = |k: &str| {
                input.get(k).and_then(Value::as_str).ok_or_else(|| {
                    Problem::new(format!(
                        "the Edit payload has no tool_input.{k} string, so nothing was recorded"
                    ))
                })
            };
            Ok(Event::Edited(Edited {
                path,
                change: Change::Replace {
                    old: text("old_str")?.to_string(),
                    new: text("new_str")?.to_string(),
                    all: input.get("change_all").and_then(Value::as_bool) == Some(true),
                },
            }))
        }
    }
}

/// Whether an Edit or Create response (a JSON string) says it succeeded.
fn succeeded(response: &str) -> bool {
    serde_json::from_str::<Value>(response)
        .ok()
        .and_then(|v| v.get("success").and_then(Value::as_bool))
        == Some(true)
}

/// How a Read marks a part of the file.
const PART: &str = "\n\n<system-reminder>[Showing lines ";

fn read(path: PathBuf, input: &Value, response: &str) -> Result<Event, Problem> {
    if response.starts_with("Error: ") {
        return Ok(Event::Ignored);
    }
    let asked = ["offset", "limit"]
        .iter()
        .any(|k| input.get(*k).is_some_and(|v| !v.is_null()));
    let Some(at) = response.rfind(PART) else {
        // The whole file, as it is (or the lines from an offset asked to
        // its end).
        let offset = claude::count(input, "offset")?.unwrap_or(1).max(1);
        return Ok(Event::Shown(Shown {
            path,
            text: ShownText::Lines(response.to_string()),
            offset,
            extent: if asked { Extent::Range } else { Extent::Whole },
        }));
    };
    let marker = &response[at + PART.len()..];
    let first = marker
        .split_once('-')
        .and_then(|(a, rest)| {
            rest.split_once(" of ")?;
            marker.ends_with(" total lines]</system-reminder>").then_some(a)
        })
        .and_then(|a| a.parse::<u64>().ok())
        .ok_or_else(|| {
            Problem::new("the Read response's \"Showing lines\" marker is not \"A-B of N total lines\", so nothing was recorded")
        })?;
    Ok(Event::Shown(Shown {
        path,
        text: ShownText::Lines(response[..at].to_string()),
        offset: first.max(1),
        extent: if asked { Extent::Range } else { Extent::Start },
    }))
}

/// What an Execute read printed of a file, when it exited 0.
fn execute(input: &Value, response: &str) -> Event {
    let Some(command) = input.get("command").and_then(Value::as_str) else {
        return Event::Ignored;
    };
    let output = response.strip_suffix("\n\n[Process exited with code 0]");
    Event::all(shell::ran(command, None, output.map(shell::Output::Exact)))
}

/// Droid's settings files and the hooks fsview wires into them.
pub struct DroidInstaller;

/// The wiring: the gate before Edit, Create, ApplyPatch and Execute (the
/// files a command writes; closed when the hook cannot run); after every tool, a record of what Read, Edit, Create
/// and Execute showed or wrote and the reminder of what changed; each
/// prompt (the interactive Droid); the session's start.
pub const HOOKS: &[Hook] = &[
    Hook {
        event: "PreToolUse",
        matcher: Some("Edit|Create|ApplyPatch|Execute"),
        fail_closed: true,
    },
    Hook {
        event: "PostToolUse",
        matcher: Some("*"),
        fail_closed: false,
    },
    Hook {
        event: "UserPromptSubmit",
        matcher: None,
        fail_closed: false,
    },
    Hook {
        event: "SessionStart",
        matcher: None,
        fail_closed: false,
    },
];

impl Installer for DroidInstaller {
    fn agent(&self) -> &'static str {
        "droid"
    }

    /// Droid reads project settings from `.factory/` in the directory it
    /// starts in, and the user's from `~/.factory/`.
    fn settings_file(&self, scope: Scope, cwd: &std::path::Path) -> Result<PathBuf, Problem> {
        Ok(match scope {
            Scope::Project => cwd.join(".factory").join("settings.json"),
            // Droid 0.225.2 runs no hooks from .factory/settings.local.json
            // (nor from .factory/hooks.json).
            Scope::Local => {
                return Err(Problem::new(
                    "Droid runs no hooks from a local settings file; use --project (.factory/settings.json) or --user (~/.factory/settings.json)",
                ))
            }
            Scope::User => std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".factory").join("settings.json"))
                .ok_or_else(|| {
                    Problem::new(
                        "HOME is not set, so Droid's user settings cannot be found; use --project",
                    )
                })?,
        })
    }

    fn hooks(&self) -> &'static [Hook] {
        HOOKS
    }

    fn default_scope(&self) -> Scope {
        Scope::Project
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(input: Value, response: &str) -> Event {
        read(PathBuf::from("a.txt"), &input, response).unwrap()
    }

    // Read responses as Droid 0.225.2 gave them.
    #[test]
    fn a_read_says_which_lines_it_showed() {
        assert_eq!(
            shown(json!({}), "one\ntwo\nthree\n"),
            Event::Shown(Shown {
                path: "a.txt".into(),
                text: ShownText::Lines("one\ntwo\nthree\n".into()),
                offset: 1,
                extent: Extent::Whole,
            })
        );
        assert_eq!(
            shown(
                json!({"offset": 2, "limit": 1}),
                "two\n\n<system-reminder>[Showing lines 2-2 of 4 total lines]</system-reminder>"
            ),
            Event::Shown(Shown {
                path: "a.txt".into(),
                text: ShownText::Lines("two".into()),
                offset: 2,
                extent: Extent::Range,
            })
        );
        assert_eq!(
            shown(
                json!({}),
                "l1\nl2\n\n<system-reminder>[Showing lines 1-2 of 3001 total lines]</system-reminder>"
            ),
            Event::Shown(Shown {
                path: "a.txt".into(),
                text: ShownText::Lines("l1\nl2".into()),
                offset: 1,
                extent: Extent::Start,
            })
        );
        assert_eq!(
            shown(json!({}), "Error: Path \"a.txt\" is a directory."),
            Event::Ignored
        );
        assert!(read(
            PathBuf::from("a.txt"),
            &json!({}),
            "x\n\n<system-reminder>[Showing lines soon]</system-reminder>"
        )
        .is_err());
    }

    fn pre(input: Value) -> Result<Event, Problem> {
        pre_tool_use(&json!({"tool_name": "Execute", "tool_input": input}))
    }

    // Execute inputs as Droid 0.225.2 sent them.
    #[test]
    fn an_execute_is_gated_for_the_files_it_writes() {
        let input =
            |c: &str| json!({"command": c, "riskLevelReason": "it edits", "riskLevel": "low"});
        assert_eq!(
            pre(input("sed -i 's/one/ONE/' a.txt")).unwrap().gates(),
            Event::Each(vec![Event::shell_replace("a.txt", "one", "ONE")])
        );
        assert_eq!(
            pre(input("cat > new.txt <<'EOF'\nnew file\nEOF"))
                .unwrap()
                .gates(),
            Event::Each(vec![Event::shell_write("new.txt", true)])
        );
        assert_eq!(
            pre(input("echo x | tee a.txt b.txt")).unwrap().gates(),
            Event::Each(vec![
                Event::shell_write("a.txt", true),
                Event::shell_write("b.txt", true)
            ])
        );
        // An append, a read, a command fsview cannot read: no question.
        for c in [
            "echo x >> log.txt",
            "cat a.txt",
            "cargo build",
            "make \"$T\" > \"$OUT\"",
        ] {
            assert_eq!(pre(input(c)).unwrap().gates(), Event::Ignored, "{c}");
        }
        assert_eq!(
            pre(json!({"riskLevel": "low"})).unwrap_err().0,
            "the Execute payload has no tool_input.command string"
        );
        assert!(HOOKS[0].matcher.unwrap().split('|').any(|t| t == "Execute"));
    }

    #[test]
    fn an_execute_read_is_its_output_before_the_exit_line() {
        let e = execute(
            &json!({"command": "cat a.txt"}),
            "one\ntwo\n\n\n[Process exited with code 0]",
        );
        assert_eq!(
            e,
            Event::Each(vec![
                Event::Shown(Shown {
                    path: "a.txt".into(),
                    text: ShownText::Printed(crate::event::Printed {
                        text: "one\ntwo\n".into(),
                        form: crate::event::Form::Exact,
                    }),
                    offset: 1,
                    extent: Extent::Whole,
                }),
                // What it changed without naming it is looked for.
                Event::ShellWritten(vec![], "cat a.txt".into())
            ])
        );
        assert_eq!(
            execute(
                &json!({"command": "cat a.txt"}),
                "cat: a.txt: No such file\n\n\n[Process exited with code 1]"
            ),
            Event::Each(vec![Event::ShellWritten(vec![], "cat a.txt".into())])
        );
        assert_eq!(
            execute(
                &json!({"command": "ls"}),
                "a.txt\n\n\n[Process exited with code 0]"
            ),
            Event::Each(vec![Event::ShellWritten(vec![], "ls".into())])
        );
    }
}
