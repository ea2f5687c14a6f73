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
//!   a targeted edit and a whole-file write.
//! - `tool.execute.after` (only after a tool succeeded) of `read`:
//!   `output.metadata.display` says what the model got: `text` (the lines
//!   without their numbers, `\r\n` as `\n`, the last line's newline left
//!   out), `lineStart`, `lineEnd`, `totalLines` and `truncated` (2,000
//!   lines or 50 KB at most unless `offset`/`limit` asked for a part; a
//!   capped read's `totalLines` is not the file's). A line over 2,000
//!   characters is shown cut, ending in "... (line truncated to 2000
//!   chars)": only the lines before it are taken as shown.
//! - `tool.execute.after` of `edit`: `output.metadata.filediff.patch`, the
//!   unified diff the tool applied, and nothing of the file's new text: the
//!   agent's last view with the diff applied is what it now knows
//!   ([`Event::Edited`]). Of `write`: `input.args.content` is the whole
//!   file.
//! - `chat.message`, once per user message: the reminder.
//!
//! Nothing at a session's start: opencode loads its instruction files
//! (AGENTS.md, CLAUDE.md, CONTEXT.md) itself and says nothing of what it gave the
//! model. A subagent (the task tool) works in a session of its own, which
//! is its own fsview session.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::event::{Answer, Change, Changed, Edited, Event, Extent, Shown, ShownText, Stage, Who};
use crate::install::{Done, Scope};
use crate::{Agent, Parsed, Problem, Reply};

/// opencode, through the plugin.
pub struct Opencode;

type Failed = (Stage, Problem);

/// How opencode's read marks a line it cut.
const CUT: &str = "... (line truncated to 2000 chars)";

impl Agent for Opencode {
    fn parse(&self, payload: &[u8]) -> Result<Parsed, Failed> {
        let payload: Value = serde_json::from_slice(payload)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| {
                (
                    Stage::Other,
                    Problem::new("the payload is not a JSON object; fsview-hook opencode reads what fsview's opencode plugin sends on stdin"),
                )
            })?;
        let event = payload.get("event").and_then(Value::as_str).unwrap_or("");
        let stage = match event {
            "tool.execute.before" => Stage::AboutToChange,
            "tool.execute.after" => Stage::Shown,
            "chat.message" => Stage::Prompt,
            other => {
                return Err((
                    Stage::Other,
                    Problem::new(format!("plugin event {other:?} is not one fsview-hook opencode answers (tool.execute.before, tool.execute.after, chat.message)")),
                ))
            }
        };
        let who = who(&payload, event).map_err(|p| (stage, p))?;
        let parsed = match stage {
            Stage::AboutToChange => before(&payload),
            Stage::Shown => after(&payload),
            _ => Ok(Event::Prompt),
        }
        .map_err(|p| (stage, p))?;
        Ok(Parsed { who, event: parsed })
    }

    fn reply(&self, _stage: Stage, answer: Answer) -> Reply {
        let out = match answer {
            // opencode's own permissions decide the rest.
            Answer::Nothing | Answer::Allow(_) => return Reply::nothing(),
            Answer::Deny(reason) => json!({ "deny": reason }),
            Answer::Context(text) => json!({ "context": text }),
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
    let session = payload
        .pointer("/input/sessionID")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            Problem::new(format!(
                "the {event} payload has no input.sessionID string; pass --sid ID to name the session"
            ))
        })?;
    let cwd = payload
        .get("directory")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Problem::new(format!("the {event} payload has no directory string")))?;
    Ok(Who {
        session: session.to_string(),
        agent: None,
        cwd: PathBuf::from(cwd),
    })
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
    let whole = match tool {
        "write" => true,
        "edit" => false,
        _ => return Ok(Event::Ignored),
    };
    let path = file_path(tool, payload.pointer("/output/args"), "output.args")?;
    Ok(Event::AboutToChange { path, whole })
}

fn after(payload: &Value) -> Result<Event, Problem> {
    let tool = tool(payload)?;
    if !matches!(tool, "read" | "edit" | "write") {
        return Ok(Event::Ignored);
    }
    let args = payload.pointer("/input/args");
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

/// The plugin `fsview-hook install opencode` writes, with `@HOOK@` (the
/// absolute path of fsview-hook, as a JSON string) and `@ARGS@` (its extra
/// arguments, a JSON list) filled in.
pub const PLUGIN: &str = r#"// fsview-hook: the opencode end of fsview's hooks, written by
// `fsview-hook install opencode`. Reinstall (or uninstall) rather than edit:
// it is replaced whole. It hands each hook's objects to `fsview-hook
// opencode` and fails closed for the edit gate.
import { spawn } from "node:child_process";

const HOOK = @HOOK@;
const ARGS = @ARGS@;
const GATED = new Set(["edit", "write"]);
const RECORDED = new Set(["read", "edit", "write"]);

function ask(payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(HOOK, ["opencode", ...ARGS], { stdio: ["pipe", "pipe", "pipe"] });
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
}

export const FsviewHook = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    if (!GATED.has(input.tool)) return;
    const r = await ask({ event: "tool.execute.before", directory, input, output });
    const a = answer(r);
    if (a === null) {
      throw new Error("fsview-hook could not check this change, so it is denied: " + why(r));
    }
    if (typeof a.deny === "string") throw new Error(a.deny);
  },
  "tool.execute.after": async (input, output) => {
    if (!RECORDED.has(input.tool)) return;
    await ask({ event: "tool.execute.after", directory, input, output });
  },
  "chat.message": async (input, output) => {
    const first = output.parts && output.parts[0];
    if (!first) return;
    const r = await ask({ event: "chat.message", directory, input, output: { message: output.message } });
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
});
"#;

/// The first line of every plugin fsview-hook writes.
const MARK: &str = "// fsview-hook: the opencode end of fsview's hooks";

/// The plugin for `exe` with `args`.
pub fn plugin(exe: &str, args: &[String]) -> String {
    PLUGIN
        .replace("@HOOK@", &Value::from(exe).to_string())
        .replace("@ARGS@", &json!(args).to_string())
}

/// Where opencode finds plugins it loads by itself: `.opencode/plugins/`
/// at the top of the git work tree (else the current directory), or the
/// user's `$OPENCODE_CONFIG_DIR` (else `$XDG_CONFIG_HOME/opencode`, else
/// `~/.config/opencode`) `/plugins/`.
pub fn plugin_file(scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
    let dir = match scope {
        Scope::Project => cwd
            .ancestors()
            .find(|d| d.join(".git").exists())
            .unwrap_or(cwd)
            .join(".opencode"),
        Scope::User => {
            let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
            env("OPENCODE_CONFIG_DIR")
                .map(|d| cwd.join(d))
                .or_else(|| env("XDG_CONFIG_HOME").map(|d| cwd.join(d).join("opencode")))
                .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config").join("opencode")))
                .ok_or_else(|| {
                    Problem::new("neither XDG_CONFIG_HOME nor HOME is set, so opencode's config directory cannot be found; use --project")
                })?
        }
        Scope::Local => {
            return Err(Problem::new(
                "opencode has no local plugin directory; use --project (.opencode/plugins/) or --user (~/.config/opencode/plugins/)",
            ))
        }
    };
    Ok(dir.join("plugins").join("fsview.js"))
}

/// Write (or remove) the plugin; a file of that name fsview-hook did not
/// write is left alone.
pub fn install(
    scope: Scope,
    uninstall: bool,
    exe: &str,
    args: &[String],
    cwd: &Path,
) -> Result<Done, Problem> {
    let file = plugin_file(scope, cwd)?;
    let text = plugin(exe, args);
    let changed = crate::install::own_file(&file, (!uninstall).then_some(text), |now| {
        now.starts_with(MARK)
    })?;
    let mut command = crate::install::shell_quote(exe);
    command.push_str(" opencode");
    for a in args {
        command.push(' ');
        command.push_str(&crate::install::shell_quote(a));
    }
    Ok(Done {
        file,
        changed,
        command,
        events: vec!["tool.execute.before", "tool.execute.after", "chat.message"],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_names_the_hook_as_json() {
        let p = plugin(
            "/opt/it's here/fsview-hook",
            &["--sid".into(), "a\"b".into()],
        );
        assert!(p.starts_with(MARK));
        assert!(p.contains(r#"const HOOK = "/opt/it's here/fsview-hook";"#));
        assert!(p.contains(r#"const ARGS = ["--sid","a\"b"];"#));
        assert!(!p.contains("@HOOK@") && !p.contains("@ARGS@"));
    }
}
