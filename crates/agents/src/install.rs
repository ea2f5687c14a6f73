//! Wiring fsview-hook into an agent's own settings.
//!
//! Each agent keeps its hooks in a settings file; installing merges
//! fsview-hook's entries into it and keeps everything else (other keys,
//! other hooks, their order). Installing twice gives one entry per event,
//! and uninstalling removes only fsview-hook's. Each command names the
//! installed fsview-hook by its absolute path, so that a `PATH` without
//! fsview cannot make the gate fail open; a hook that must fail closed ends
//! in `|| exit 2`, so that even a missing binary blocks the change.
//!
//! Claude Code's shape (`{"hooks": {EVENT: [{"matcher": M, "hooks":
//! [{"type": "command", "command": C}]}]}}`) is shared by several agents
//! (gemini-cli adds a `name` to each entry, Codex reads it from
//! `hooks.json`), so it is written here once ([`merge`]); an agent with
//! another shape writes its own beside its module.

use std::io::Write;
use std::path::{Path, PathBuf};

use fsview_store::error::{plain_io, quote};
use serde_json::{json, Map, Value};

use crate::Problem;

/// Whose settings to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The project's shared settings, checked in.
    Project,
    /// The project's settings for this user only, not checked in.
    Local,
    /// The user's settings, for every project.
    User,
}

/// One hook to wire: the agent's event, the tools it matches (`None`: every
/// occurrence), and whether a hook that cannot run must block (the gate).
#[derive(Clone, Copy, Debug)]
pub struct Hook {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub fail_closed: bool,
}

/// One agent's installer.
pub trait Installer {
    /// The agent's name as `fsview-hook` takes it (`claude`).
    fn agent(&self) -> &'static str;
    /// Where the hooks live for `scope`, from `cwd` (the project).
    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem>;
    /// What to wire.
    fn hooks(&self) -> &'static [Hook];
    /// The scope `install` uses when none is given.
    fn default_scope(&self) -> Scope {
        Scope::Local
    }
    /// A `name` for each hook entry, where the agent shows one.
    fn hook_name(&self) -> Option<&'static str> {
        None
    }
    /// The agent blocks when a hook cannot start (exit 126, 127): then a
    /// hook that must fail open exits 0 instead.
    fn blocks_when_missing(&self) -> bool {
        false
    }
    /// What the user must still do after installing for `scope`, if
    /// anything.
    fn next_step(&self, _scope: Scope) -> Option<String> {
        None
    }
}

/// What installing or uninstalling did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Done {
    pub file: PathBuf,
    /// The file was written (false: it already was as asked).
    pub changed: bool,
    /// The command each hook runs (before any `|| exit 2`).
    pub command: String,
    pub events: Vec<&'static str>,
}

/// Install (or uninstall) `inst`'s hooks for `scope`, running `exe` with
/// the agent's name and `args`.
pub fn install(
    inst: &dyn Installer,
    scope: Scope,
    uninstall: bool,
    exe: &Path,
    args: &[String],
    cwd: &Path,
) -> Result<Done, Problem> {
    let file = inst.settings_file(scope, cwd)?;
    let mut command = format!("{} {}", shell_quote(&exe.to_string_lossy()), inst.agent());
    for a in args {
        command.push(' ');
        command.push_str(&shell_quote(a));
    }
    let hooks = inst.hooks();
    let target = target_of(&file);
    let before = read_settings(&target)?;
    let mut doc = before.clone().unwrap_or_else(|| Value::Object(Map::new()));
    let wanted = if uninstall { &[][..] } else { hooks };
    let style = Style {
        name: inst.hook_name(),
        open_when_missing: inst.blocks_when_missing(),
    };
    let changed = merge(&mut doc, wanted, &command, inst.agent(), &style).map_err(|what| {
        Problem::new(format!(
            "{} {what}; fix it by hand, nothing was changed",
            quote(&file)
        ))
    })?;
    if changed && !(uninstall && before.is_none()) {
        write_settings(&target, &doc)?;
    }
    Ok(Done {
        file,
        changed: changed && !(uninstall && before.is_none()),
        command,
        events: hooks.iter().map(|h| h.event).collect(),
    })
}

/// The file a settings path names: a symlinked settings file (a dotfiles
/// manager's) is updated where it points, not replaced by a copy.
fn target_of(file: &Path) -> PathBuf {
    std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf())
}

fn read_settings(file: &Path) -> Result<Option<Value>, Problem> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fsview_store::Error::io("read", file, &e).into()),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        Problem::new(format!(
            "{} is not valid JSON ({e}); fix it by hand, nothing was changed",
            quote(file)
        ))
    })?;
    if !v.is_object() {
        return Err(Problem::new(format!(
            "{} is not a JSON object; fix it by hand, nothing was changed",
            quote(file)
        )));
    }
    Ok(Some(v))
}

/// Write `doc` to `file` whole or not at all (a temporary file renamed over
/// it), keeping the file's permissions.
fn write_settings(file: &Path, doc: &Value) -> Result<(), Problem> {
    let mut text = serde_json::to_string_pretty(doc).expect("a JSON value serializes");
    text.push('\n');
    write_text(file, &text)
}

/// Write `text` to `file` whole or not at all (a temporary file renamed
/// over it), keeping the file's permissions.
fn write_text(file: &Path, text: &str) -> Result<(), Problem> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| fsview_store::Error::io("create", dir, &e))?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.fsview-{}", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        if let Ok(meta) = std::fs::metadata(file) {
            f.set_permissions(meta.permissions())?;
        }
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Problem::new(format!(
            "cannot write {}: {}; nothing was changed",
            quote(file),
            plain_io(&e)
        ))
    })
}

/// How an agent's hook entries are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style<'a> {
    /// Each entry's `name`, where the agent shows one.
    pub name: Option<&'a str>,
    /// A hook that must fail open exits 0 when it cannot start.
    pub open_when_missing: bool,
}

/// What ends the command of a hook that must fail open, for an agent that
/// blocks when a hook cannot start: 126 and 127 (not executable, not
/// found) become 0; fsview-hook's own exit codes are kept.
pub const OPEN_WHEN_MISSING: &str = "|| { s=$?; [ $s -lt 126 ] && exit $s; exit 0; }";

/// Make `doc`'s `hooks` hold exactly `wanted` as fsview-hook's entries for
/// `agent` (none: uninstall), each running `command`, written in `style`,
/// leaving every other entry as it is. Returns whether anything changed,
/// or what is wrong with the document.
pub fn merge(
    doc: &mut Value,
    wanted: &[Hook],
    command: &str,
    agent: &str,
    style: &Style<'_>,
) -> Result<bool, String> {
    let root = doc.as_object_mut().ok_or("is not a JSON object")?;
    if root.get("hooks").is_some_and(|h| !h.is_object()) {
        return Err("has a \"hooks\" key that is not an object".to_string());
    }
    let groups_of = |h: &Hook| {
        let mut g = Map::new();
        if let Some(m) = h.matcher {
            g.insert("matcher".into(), m.into());
        }
        let cmd = if h.fail_closed {
            format!("{command} || exit 2")
        } else if style.open_when_missing {
            format!("{command} {OPEN_WHEN_MISSING}")
        } else {
            command.to_string()
        };
        let mut entry = json!({"type": "command", "command": cmd});
        if let Some(n) = style.name {
            entry["name"] = n.into();
        }
        g.insert("hooks".into(), json!([entry]));
        Value::Object(g)
    };
    // Already as wanted: every wanted group present once, no other entry
    // of ours anywhere.
    if let Some(hooks) = root.get("hooks").and_then(Value::as_object) {
        let ours_total: usize = hooks
            .values()
            .filter_map(Value::as_array)
            .flatten()
            .map(|g| ours_in(g, agent))
            .sum();
        let all_there = wanted.iter().all(|h| {
            hooks
                .get(h.event)
                .and_then(Value::as_array)
                .is_some_and(|groups| groups.iter().filter(|g| **g == groups_of(h)).count() == 1)
        });
        if all_there && ours_total == wanted.len() {
            return Ok(false);
        }
    } else if wanted.is_empty() {
        return Ok(false);
    }
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("hooks is an object");
    let mut changed = false;
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            if wanted.iter().any(|h| h.event == event) {
                return Err(format!("has hooks.{event} that is not a list"));
            }
            continue;
        };
        let n = groups.len();
        for g in groups.iter_mut() {
            if let Some(list) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                let len = list.len();
                list.retain(|h| !is_ours(h, agent));
                changed |= list.len() != len;
            }
        }
        groups.retain(|g| {
            !g.get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|l| l.is_empty())
        });
        if groups.len() != n && groups.is_empty() {
            emptied.push(event.clone());
        }
    }
    for e in emptied {
        hooks.remove(&e);
    }
    for h in wanted {
        let groups = hooks
            .entry(h.event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = groups.as_array_mut() else {
            return Err(format!("has hooks.{} that is not a list", h.event));
        };
        groups.push(groups_of(h));
        changed = true;
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    Ok(changed)
}

/// Make `file`, a file fsview-hook owns whole (an agent that reads hooks
/// from every file of a directory, a plugin file), hold `text`, or remove
/// it (`None`). `ours` tells a file fsview-hook wrote from one it did not,
/// which is never overwritten or removed. Returns whether anything
/// changed.
pub fn own_file(
    file: &Path,
    text: Option<String>,
    ours: impl Fn(&str) -> bool,
) -> Result<bool, Problem> {
    let target = target_of(file);
    let now = match std::fs::read_to_string(&target) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(fsview_store::Error::io("read", file, &e).into()),
    };
    if let Some(now) = &now {
        if text.as_deref() == Some(now.as_str()) {
            return Ok(false);
        }
        if !ours(now) {
            return Err(Problem::new(format!(
                "{} is not one fsview-hook wrote; move it away first, nothing was changed",
                quote(file)
            )));
        }
    }
    match (text, now) {
        (Some(t), _) => write_text(&target, &t).map(|()| true),
        (None, None) => Ok(false),
        (None, Some(_)) => std::fs::remove_file(&target)
            .map(|()| true)
            .map_err(|e| fsview_store::Error::io("remove", file, &e).into()),
    }
}

/// Whether a shell command runs `fsview-hook AGENT` (any path to it).
pub fn runs_fsview_hook(command: &str, agent: &str) -> bool {
    is_ours(&json!({ "command": command }), agent)
}

fn ours_in(group: &Value, agent: &str) -> usize {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter(|h| is_ours(h, agent)).count())
        .unwrap_or(0)
}

/// A hook entry that runs `fsview-hook AGENT` (any path to it).
fn is_ours(hook: &Value, agent: &str) -> bool {
    let Some(cmd) = hook.get("command").and_then(Value::as_str) else {
        return false;
    };
    let words = shell_words(cmd, 2);
    matches!(words.as_slice(), [program, a] if a == agent
        && Path::new(program).file_name().is_some_and(|n| n == "fsview-hook"))
}

/// The first `n` words of a shell command line, with quotes removed (enough
/// to recognise a command this module wrote, or a hand-written one).
fn shell_words(cmd: &str, n: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                    if words.len() == n {
                        return words;
                    }
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words.truncate(n);
    words
}

/// `s` as one shell word: as it is when it needs no quoting, else in single
/// quotes.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOOKS: &[Hook] = &[
        Hook {
            event: "PreToolUse",
            matcher: Some("Edit|Write"),
            fail_closed: true,
        },
        Hook {
            event: "SessionStart",
            matcher: None,
            fail_closed: false,
        },
    ];

    #[test]
    fn words_and_quotes() {
        assert_eq!(
            shell_words("'/a b/fsview-hook' claude || exit 2", 2),
            ["/a b/fsview-hook", "claude"]
        );
        assert_eq!(
            shell_words("fsview-hook   claude", 5),
            ["fsview-hook", "claude"]
        );
        assert_eq!(shell_words("\"x\\\"y\" z", 2), ["x\"y", "z"]);
        assert_eq!(shell_quote("/usr/bin/fsview-hook"), "/usr/bin/fsview-hook");
        assert_eq!(shell_quote("/it's here/x"), "'/it'\\''s here/x'");
    }

    #[test]
    fn merge_keeps_others_and_is_idempotent() {
        let mut doc = json!({
            "model": "opus",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "fsview-hook claude"}]}]
            }
        });
        assert_eq!(
            merge(
                &mut doc,
                HOOKS,
                "/bin/fsview-hook claude",
                "claude",
                &Style::default()
            ),
            Ok(true)
        );
        assert_eq!(
            doc,
            json!({
                "model": "opus",
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]},
                        {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "/bin/fsview-hook claude || exit 2"}]}
                    ],
                    "SessionStart": [{"hooks": [{"type": "command", "command": "/bin/fsview-hook claude"}]}]
                }
            })
        );
        let again = doc.clone();
        assert_eq!(
            merge(
                &mut doc,
                HOOKS,
                "/bin/fsview-hook claude",
                "claude",
                &Style::default()
            ),
            Ok(false)
        );
        assert_eq!(doc, again);
        // Another path to the binary: replaced, still one entry.
        assert_eq!(
            merge(
                &mut doc,
                HOOKS,
                "/opt/fsview-hook claude",
                "claude",
                &Style::default()
            ),
            Ok(true)
        );
        assert_eq!(doc["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            merge(
                &mut doc,
                &[],
                "/opt/fsview-hook claude",
                "claude",
                &Style::default()
            ),
            Ok(true)
        );
        assert_eq!(
            doc,
            json!({"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]}})
        );
    }

    #[test]
    fn merge_refuses_what_it_does_not_understand() {
        let mut doc = json!({"hooks": []});
        assert!(merge(&mut doc, HOOKS, "x claude", "claude", &Style::default()).is_err());
        let mut doc = json!({"hooks": {"PreToolUse": {}}});
        assert!(merge(&mut doc, HOOKS, "x claude", "claude", &Style::default()).is_err());
    }
}
