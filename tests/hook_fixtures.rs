//! What the tests of fsview-hook's agents share: a work tree, a session
//! file, and the payloads an agent's real binary sent, captured by its
//! `scripts/e2e-AGENT --save-fixtures` into tests/fixtures/hooks/DIR/ with
//! `@CWD@`, `@HOME@` and `@SID@` for the work tree, home and session id.

use serde_json::Value;

use crate::harness::{self, Env, Run};

pub const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

/// The refusal of a small file whose views the conversation dropped
/// (`why`: compaction, rewind): it gives the file's whole `text` back,
/// numbered, and holds it again (issue 25).
pub fn given_after(why: &str, text: &str) -> String {
    given(
        &format!("File has not been read yet: what you were shown of it is no longer in the conversation ({why}). Its whole text is below"),
        text,
    )
}

/// The refusal of a small file changed by a change it cannot tell whole
/// (a diff longer than the caps, one told before): it gives the file's
/// whole new `text`, numbered, and holds it (issue 25).
pub fn given_modified(text: &str) -> String {
    given(
        "File has been modified since read, either by the user or by a linter. Its whole new text is below",
        text,
    )
}

fn given(opening: &str, text: &str) -> String {
    let numbered: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{}\t{l}\n", i + 1))
        .collect();
    let count = match text.lines().count() {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    };
    format!(
        "{opening} ({count}, numbered as a read shows them): you have now read it, so retry your change against it (no need to read it again).\n\n{numbered}"
    )
}

/// A refusal that gives a file back ([`given_after`], [`given_modified`])
/// as it reaches an agent whose read shows no line numbers (Codex, Copilot
/// CLI, Droid, gemini-cli, pi, Qwen Code): the text as it is.
pub fn unnumbered(given: &str) -> String {
    let (head, numbered) = given.split_once("\n\n").unwrap();
    let text: String = numbered
        .split_inclusive('\n')
        .map(|l| l.split_once('\t').unwrap().1)
        .collect();
    format!(
        "{}\n\n{text}",
        head.replace(
            ", numbered as a read shows them)",
            ", as a read shows them)"
        )
    )
}

/// Whether agent `name`'s read shows line numbers (fsview-hook's
/// `numbers_reads`).
pub fn numbers_reads(name: &str) -> bool {
    matches!(name, "claude" | "opencode" | "kilo" | "cline")
}
pub const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

pub fn partial(lines: &str) -> String {
    format!(
        "File has only been read in part ({lines}). Read the whole file before writing all of it."
    )
}

/// One agent's fixtures, in one work tree with one session file.
pub struct Fixtures {
    pub env: Env,
    /// `fsview-hook`'s subcommand for the agent.
    pub agent: &'static str,
    /// The fixtures' directory under tests/fixtures/hooks/.
    pub dir: &'static str,
    pub sid: &'static str,
}

impl Fixtures {
    pub fn new(agent: &'static str, dir: &'static str) -> Fixtures {
        Fixtures {
            env: Env::new(),
            agent,
            dir,
            sid: "sid-1",
        }
    }

    /// A fixture with its placeholders filled.
    pub fn payload(&self, name: &str) -> Value {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hooks")
            .join(self.dir)
            .join(format!("{name}.json"));
        let text = std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
            .replace("@CWD@", &self.env.work.display().to_string())
            .replace(
                "@HOME@",
                &self.env.root().join("home").display().to_string(),
            )
            .replace("@SID@", self.sid);
        serde_json::from_str(&text).unwrap()
    }

    pub fn hook(&self, name: &str, args: &[&str]) -> Run {
        self.send(&self.payload(name), args)
    }

    pub fn send(&self, payload: &Value, args: &[&str]) -> Run {
        self.raw(payload.to_string().as_bytes(), args)
    }

    pub fn raw(&self, stdin: &[u8], args: &[&str]) -> Run {
        let mut c = self.env.cmd(harness::bin("fsview-hook"));
        c.arg(self.agent).args(args);
        harness::output(c, Some(stdin))
    }

    /// The one view of `rel`: (kind, source, offset, lines, fresh); `None`
    /// when there is none.
    pub fn view(&self, rel: &str) -> Option<(String, String, u64, u64, bool)> {
        let r = self
            .env
            .run("fsview-session", &["show", "--sid", self.sid, "--json"]);
        if r.code != 0 {
            return None;
        }
        let v: Vec<Value> = r.json().into_iter().filter(|v| v["path"] == rel).collect();
        assert!(v.len() <= 1, "views of {rel}: {}", r.stdout);
        let v = v.first()?;
        Some((
            v["kind"].as_str().unwrap().to_string(),
            v["source"].as_str().unwrap().to_string(),
            v["offset"].as_u64().unwrap(),
            v["lines"].as_u64().unwrap(),
            v["fresh"].as_bool().unwrap(),
        ))
    }
}

/// `(kind, source, offset, lines, fresh)` as [`Fixtures::view`] gives it.
pub fn view(
    kind: &str,
    source: &str,
    offset: u64,
    lines: u64,
    fresh: bool,
) -> Option<(String, String, u64, u64, bool)> {
    Some((kind.into(), source.into(), offset, lines, fresh))
}

pub fn big(n: usize, fmt: impl Fn(usize) -> String) -> String {
    (1..=n).map(|i| format!("{}\n", fmt(i))).collect()
}

/// The reminder fsview gives at a prompt for one file changed from
/// `before` to `after` (a unified diff of them).
pub fn reminder(path: &str, diff: &str) -> String {
    format!("These files changed since you last saw them:\n\n{path}: modified (content)\n{diff}")
}
