//! An agent's hook payloads, captured from its real binary
//! (tests/fixtures/hooks/AGENT-VERSION, by `scripts/e2e-AGENT
//! --save-fixtures`), sent to `fsview-hook AGENT` in a hermetic work tree:
//! what the adapter tests of every agent but Claude Code share.

use std::path::PathBuf;

use serde_json::Value;

use crate::harness::{self, Env, Run};

/// One conversation of one agent in a work tree with a session file.
pub struct Agent {
    pub env: Env,
    pub sid: &'static str,
    /// `fsview-hook`'s subcommand.
    pub name: &'static str,
    /// The fixture directory under tests/fixtures/hooks.
    pub fixtures: &'static str,
}

impl Agent {
    /// A payload of `fixture` with its command changed, where the agent
    /// puts it.
    pub fn with_command(&self, fixture: &str, command: &str) -> Value {
        let mut p = self.payload(fixture);
        if self.name == "cline" {
            // run_commands: one command, as the call and as its result
            // (and the flattened copies Cline sends beside them).
            let one = Value::from(vec![Value::from(command)]);
            let flat = Value::from(serde_json::to_string(&one).unwrap());
            for at in ["/tool_call/input/commands", "/tool_result/input/commands"] {
                if let Some(v) = p.pointer_mut(at) {
                    *v = one.clone();
                }
            }
            for at in [
                "/preToolUse/parameters/commands",
                "/postToolUse/parameters/commands",
            ] {
                if let Some(v) = p.pointer_mut(at) {
                    *v = flat.clone();
                }
            }
            return p;
        }
        let at = match self.name {
            "opencode" | "kilo" if p["input"]["args"].is_object() => "/input/args/command",
            "opencode" | "kilo" => "/output/args/command",
            "pi" => "/input/command",
            "copilot" => "/toolArgs/command",
            _ => "/tool_input/command",
        };
        *p.pointer_mut(at).unwrap() = Value::from(command);
        p
    }

    /// The refusal of a whole-tree git discard: each file with what it
    /// would lose, as git shows it (`true`: tracked).
    pub fn discard_refused(&self, files: &[(&str, bool)]) -> String {
        let mut text = String::from("This git command would discard changes you have neither made nor been shown, by the user or another program: they would be lost. If they are yours to drop, read each file first; otherwise leave these files out of the command. What it would lose:\n");
        for (f, tracked) in files {
            let (what, diff) = if *tracked {
                (
                    "its changes",
                    self.env.sh(&format!("git diff -- {f}")).stdout,
                )
            } else {
                (
                    "the whole file (untracked)",
                    self.env
                        .sh(&format!("git diff --no-index -- /dev/null {f}; true"))
                        .stdout,
                )
            };
            text.push_str(&format!("\n{f}: {what}\n{diff}"));
        }
        text
    }

    pub fn new(name: &'static str, fixtures: &'static str) -> Agent {
        let env = Env::new();
        std::fs::create_dir_all(env.root().join("managed")).unwrap();
        Agent {
            env,
            sid: "abc123",
            name,
            fixtures,
        }
    }

    /// A captured payload with its placeholders filled: the work tree,
    /// home, the temporary root and this conversation's id.
    pub fn payload(&self, fixture: &str) -> Value {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hooks")
            .join(self.fixtures)
            .join(format!("{fixture}.json"));
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .replace("@CWD@", &self.env.work.display().to_string())
            .replace(
                "@HOME@",
                &self.env.root().join("home").display().to_string(),
            )
            .replace("@ROOT@", &self.env.root().display().to_string())
            .replace("@SID@", self.sid);
        serde_json::from_str(&text).unwrap()
    }

    pub fn hook(&self, fixture: &str, args: &[&str]) -> Run {
        self.send(&self.payload(fixture), args)
    }

    pub fn send(&self, payload: &Value, args: &[&str]) -> Run {
        self.raw(payload.to_string().as_bytes(), args)
    }

    pub fn raw(&self, stdin: &[u8], args: &[&str]) -> Run {
        let mut c = self.cmd(harness::bin("fsview-hook"));
        c.arg(self.name).args(args);
        harness::output(c, Some(stdin))
    }

    /// The harness's hermetic command, plus what ctx-build reads.
    pub fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let root = self.env.root();
        let mut c = self.env.cmd(program);
        c.env("CLAUDE_CONFIG_DIR", root.join("claude"))
            .env("FSVIEW_MANAGED_DIR", root.join("managed"))
            .env("GIT_CEILING_DIRECTORIES", &root)
            .env("SOURCE_DATE_EPOCH", "1700000000");
        c
    }

    /// The views of `rel`: (kind, source, offset, lines, fresh), in the
    /// order `fsview-session show` lists them.
    pub fn views(&self, rel: &str) -> Vec<(String, String, u64, u64, bool)> {
        let r = self
            .env
            .run("fsview-session", &["show", "--sid", self.sid, "--json"]);
        r.json()
            .into_iter()
            .filter(|v| v["path"] == rel)
            .map(|v| {
                (
                    v["kind"].as_str().unwrap().to_string(),
                    v["source"].as_str().unwrap().to_string(),
                    v["offset"].as_u64().unwrap(),
                    v["lines"].as_u64().unwrap(),
                    v["fresh"].as_bool().unwrap(),
                )
            })
            .collect()
    }

    /// The one view of `rel`.
    #[track_caller]
    pub fn view(&self, rel: &str) -> (String, String, u64, u64, bool) {
        let v = self.views(rel);
        assert_eq!(v.len(), 1, "views of {rel}: {v:?}");
        v.into_iter().next().unwrap()
    }
}

pub const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
/// What the gate says of a file a tool showed processed (lines it
/// shortened, a notebook's cells).
pub const PROCESSED: &str = "File has only been shown processed (as its tool rendered it, such as a notebook's cells), not as it is on disk. Change only what was shown (a notebook cell by cell), or read all of its text before writing to it.";

pub fn partial(lines: &str) -> String {
    format!(
        "File has only been read in part ({lines}). Read the whole file before writing all of it."
    )
}

pub fn line(v: Value) -> String {
    format!("{v}\n")
}

pub fn view(
    kind: &str,
    source: &str,
    offset: u64,
    lines: u64,
    fresh: bool,
) -> (String, String, u64, u64, bool) {
    (kind.into(), source.into(), offset, lines, fresh)
}

/// The canonical path of the installed fsview-hook, as `install` writes it.
pub fn hook_path() -> String {
    std::fs::canonicalize(harness::bin("fsview-hook"))
        .unwrap()
        .display()
        .to_string()
}

pub fn read_json(p: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}
