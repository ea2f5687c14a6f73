//! fsview-hook claude: payloads shaped like Claude Code's documented ones
//! (tests/fixtures/hooks), answered with exact stdout JSON and exit codes.

use serde_json::{json, Value};

use crate::harness::{self, Env, Run};

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

fn fixture(name: &str) -> &'static str {
    match name {
        "pre_edit" => include_str!("fixtures/hooks/pre_tool_use_edit.json"),
        "pre_write" => include_str!("fixtures/hooks/pre_tool_use_write.json"),
        "post_read" => include_str!("fixtures/hooks/post_tool_use_read.json"),
        "post_read_range" => include_str!("fixtures/hooks/post_tool_use_read_range.json"),
        "post_write" => include_str!("fixtures/hooks/post_tool_use_write.json"),
        "session_start" => include_str!("fixtures/hooks/session_start.json"),
        "prompt" => include_str!("fixtures/hooks/user_prompt_submit.json"),
        other => panic!("no fixture {other}"),
    }
}

/// A work tree, a session file and a conversation id.
struct Agent {
    env: Env,
    sid: &'static str,
}

impl Agent {
    fn new() -> Agent {
        let env = Env::new();
        std::fs::create_dir_all(env.root().join("managed")).unwrap();
        Agent { env, sid: "abc123" }
    }

    /// A fixture with its placeholders filled: the work tree, this agent's
    /// session id, and `FILE` / `SOURCE` where the fixture has them.
    fn payload(&self, name: &str, file: &str) -> String {
        fixture(name)
            .replace("@CWD@", &self.env.work.display().to_string())
            .replace("@SID@", self.sid)
            .replace("@FILE@", file)
            .replace("@SOURCE@", file)
    }

    fn hook(&self, name: &str, file: &str, args: &[&str]) -> Run {
        self.raw(self.payload(name, file).as_bytes(), args)
    }

    fn raw(&self, stdin: &[u8], args: &[&str]) -> Run {
        let mut c = self.cmd(harness::bin("fsview-hook"));
        c.arg("claude").args(args);
        harness::output(c, Some(stdin))
    }

    /// The harness's hermetic command, plus what ctx-build reads.
    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let root = self.env.root();
        let mut c = self.env.cmd(program);
        c.env("CLAUDE_CONFIG_DIR", root.join("claude"))
            .env("FSVIEW_MANAGED_DIR", root.join("managed"))
            .env("GIT_CEILING_DIRECTORIES", &root)
            .env("SOURCE_DATE_EPOCH", "1700000000");
        c
    }
}

fn deny(reason: &str) -> String {
    line(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }}))
}

fn allow(reason: &str) -> String {
    line(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": reason,
    }}))
}

fn context(event: &str, text: &str) -> String {
    line(json!({"hookSpecificOutput": {
        "hookEventName": event,
        "additionalContext": text,
    }}))
}

fn line(v: Value) -> String {
    format!("{v}\n")
}

#[test]
fn edit_before_any_read_is_denied_with_claude_codes_words() {
    let a = Agent::new();
    a.env.write("src/main.rs", "fn main() {}\n");
    a.hook("pre_edit", "", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    // No session file is created just to answer a check.
    assert!(!a.env.session.exists());
}

#[test]
fn read_then_edit_is_let_through_without_overriding_permissions() {
    let a = Agent::new();
    a.env.write("src/main.rs", "fn main() {}\n");
    a.hook("post_read", "src/main.rs", &[])
        .expect(0, "")
        .stderr_is("");
    // No opinion: Claude Code's own permission rules still decide.
    a.hook("pre_edit", "", &[]).expect(0, "").stderr_is("");
    a.hook("pre_edit", "", &["--allow"])
        .expect(0, &allow("The file may be changed."));
    // The read was a full view: a whole-file write may follow too.
    a.hook("pre_write", "src/main.rs", &[]).expect(0, "");
    a.env
        .run(
            "fsview-check-edit",
            &["--sid", "abc123", "--json", "src/main.rs"],
        )
        .json()
        .iter()
        .for_each(|j| assert_eq!(j["view"], "full"));
}

// The hook appends to the session's events log like the other tools.
#[test]
fn hook_actions_are_in_the_events_log() {
    let a = Agent::new();
    a.env.write("src/main.rs", "fn main() {}\n");
    a.hook("pre_edit", "", &[]).expect(0, &deny(NOT_READ));
    a.hook("post_read", "src/main.rs", &[]).expect(0, "");
    a.hook("pre_edit", "", &[]).expect(0, "");
    let events: Vec<(String, String, String)> = a
        .env
        .run("fsview-session", &["events", "--sid", "abc123", "--json"])
        .json()
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("-").to_string();
            (s("tool"), s("action"), s("verdict"))
        })
        .collect();
    let want = [("fsview-hook", "read", "-"), ("fsview-hook", "check", "ok")];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    // The first check found no session file: nothing to log it in.
    assert_eq!(events, want);
}

#[test]
fn read_with_offset_and_limit_then_write_is_denied_start_only() {
    let a = Agent::new();
    let body: String = (1..=300).map(|i| format!("{i}\n")).collect();
    a.env.write("app.log", body);
    a.hook("post_read_range", "app.log", &[]).expect(0, "");
    a.hook("pre_write", "app.log", &[]).expect(
        0,
        &deny("File has only been read in part (lines 100-149 of 300). Read the whole file before writing all of it."),
    );
    let j = a
        .env
        .run(
            "fsview-check-edit",
            &["--sid", "abc123", "--json", "app.log"],
        )
        .json();
    assert_eq!(
        (j[0]["verdict"].as_str(), j[0]["view"].as_str()),
        (Some("ok"), Some("range"))
    );
}

/// Claude Code's Read shows 2000 lines when given no limit: reading a
/// longer file that way saw only its start.
#[test]
fn read_without_a_limit_of_a_long_file_is_a_start_view() {
    let a = Agent::new();
    let body: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    a.env.write("long.txt", body);
    a.hook("post_read", "long.txt", &[]).expect(0, "");
    a.hook("pre_write", "long.txt", &[]).expect(
        0,
        &deny("File has only been read in part (lines 1-2000 of 2500). Read the whole file before writing all of it."),
    );
    let j = a
        .env
        .run(
            "fsview-check-edit",
            &["--sid", "abc123", "--json", "long.txt"],
        )
        .json();
    assert_eq!(j[0]["view"], "start");
    // A Read limit of another agent version, by option.
    a.hook("post_read", "long.txt", &["--read-lines", "3000"])
        .expect(0, "");
    a.hook("pre_write", "long.txt", &[]).expect(0, "");
}

#[test]
fn write_of_a_new_file_is_allowed() {
    let a = Agent::new();
    a.hook("pre_write", "src/new.rs", &[]).expect(0, "");
    a.hook("pre_write", "src/new.rs", &["--allow"])
        .expect(0, &allow("File does not exist; creating it needs no read."));
}

#[test]
fn own_write_is_recorded_then_a_change_on_disk_is_denied() {
    let a = Agent::new();
    a.env.write("src/main.rs", "fn main() {\n    run();\n}\n");
    a.hook("post_write", "", &[]).expect(0, "").stderr_is("");
    a.hook("pre_edit", "", &[]).expect(0, "");
    a.hook("pre_write", "src/main.rs", &[]).expect(0, "");
    a.env
        .sh("printf '// formatted\\n' >> src/main.rs")
        .expect(0, "");
    a.hook("pre_edit", "", &[]).expect(0, &deny(MODIFIED));
}

/// A formatter hook running beside ours rewrote the file before we looked:
/// what the agent wrote is what it saw, so the rewrite is reported.
#[test]
fn a_rewrite_racing_the_write_hook_is_still_caught() {
    let a = Agent::new();
    a.env.write("src/main.rs", "fn main() { run(); }\n");
    a.hook("post_write", "", &[]).expect(0, "");
    a.hook("pre_edit", "", &[]).expect(0, &deny(MODIFIED));
    let reminder = "\
These files changed since you last saw them:

src/main.rs: modified (content)
--- src/main.rs (as viewed)
+++ src/main.rs (now)
@@ -1,3 +1 @@
-fn main() {
-    run();
-}
+fn main() { run(); }
";
    a.hook("prompt", "", &[])
        .expect(0, &context("UserPromptSubmit", reminder));
    // Line endings the tool chose are not a rewrite.
    a.env
        .write("src/main.rs", "fn main() {\r\n    run();\r\n}\r\n");
    a.hook("post_write", "", &[]).expect(0, "");
    a.hook("pre_edit", "", &[]).expect(0, "");
}

#[test]
fn user_prompt_submit_reminds_of_changes_and_is_silent_without() {
    let a = Agent::new();
    // No session file yet: nothing to remind of, and none is created.
    a.hook("prompt", "", &[]).expect(0, "").stderr_is("");
    assert!(!a.env.session.exists());
    let body: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    a.env.write("notes.txt", &body);
    a.hook("post_read", "notes.txt", &[]).expect(0, "");
    a.hook("prompt", "", &[]).expect(0, "").stderr_is("");
    a.env
        .write("notes.txt", body.replace("line 6\n", "line six\n"));
    let reminder = "\
These files changed since you last saw them:

notes.txt: modified (content)
--- notes.txt (as viewed)
+++ notes.txt (now)
@@ -1,12 +1,12 @@
 line 1
 line 2
 line 3
 line 4
 line 5
-line 6
+line six
 line 7
 line 8
 line 9
 line 10
 line 11
 line 12
";
    a.hook("prompt", "", &[])
        .expect(0, &context("UserPromptSubmit", reminder))
        .stderr_is("");
    // Told once: the next prompt does not repeat it, though the gate still
    // refuses an edit until the file is read.
    a.hook("prompt", "", &[]).expect(0, "").stderr_is("");
    a.env
        .run("fsview-check-edit", &["--sid", "abc123", "notes.txt"])
        .expect(1, &format!("notes.txt: modified (content): {MODIFIED}\n"));
    // Changed again: news again.
    a.env
        .write("notes.txt", body.replace("line 6\n", "line 6!\n"));
    let r = a.hook("prompt", "", &[]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("+line 6!"), "{}", r.stdout);
    // Read again: fresh, nothing to say.
    a.hook("post_read", "notes.txt", &[]).expect(0, "");
    a.hook("prompt", "", &[]).expect(0, "");
}

#[test]
fn session_start_returns_ctx_build_text() {
    let a = Agent::new();
    a.env
        .write("CLAUDE.md", "# Project\n\nUse pnpm, never npm.\n");
    let r = a.hook("session_start", "startup", &[]);
    // The same bytes ctx-build gives (now from its memo).
    let mut c = a.cmd(harness::bin("ctx-build"));
    c.args(["--sid", "abc123"]);
    let built = harness::output(c, None);
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert!(
        built.stdout.contains("Use pnpm, never npm."),
        "{}",
        built.stdout
    );
    r.expect(0, &context("SessionStart", &built.stdout))
        .stderr_is("");
    // The injected CLAUDE.md is a view of this session.
    let j = a
        .env
        .run(
            "fsview-check-edit",
            &["--sid", "abc123", "--json", "CLAUDE.md"],
        )
        .json();
    assert_eq!(j[0]["verdict"], "ok");
}

/// /clear starts the conversation over: what it had read is forgotten.
#[test]
fn session_start_after_clear_resets_the_views() {
    let a = Agent::new();
    a.env.write("src/main.rs", "fn main() {}\n");
    a.hook("post_read", "src/main.rs", &[]).expect(0, "");
    a.hook("session_start", "compact", &[]);
    a.hook("pre_edit", "", &[]).expect(0, "");
    let r = a.hook("session_start", "clear", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    a.hook("pre_edit", "", &[]).expect(0, &deny(NOT_READ));
}

#[test]
fn malformed_payload_fails_open_or_closed() {
    let a = Agent::new();
    // Not JSON: the event is unknown, so open by default.
    let r = a.raw(b"Edit src/main.rs\n", &[]);
    r.expect(0, "");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("fsview-hook: the hook payload is not JSON ("),
        "{}",
        r.stderr
    );
    // Closed, the event unknown: Claude Code's blocking exit 2.
    let r = a.raw(b"Edit src/main.rs\n", &["--on-error", "closed"]);
    r.expect(2, "");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // A PreToolUse payload missing its file: closed by default.
    let bad = a
        .payload("pre_edit", "")
        .replace("\"file_path\"", "\"path\"");
    let msg = "the Edit payload has no tool_input.file_path string";
    a.raw(bad.as_bytes(), &[])
        .expect(
            0,
            &deny(&format!(
                "fsview-hook could not check this change, so it is denied: {msg}"
            )),
        )
        .stderr_is(&format!("fsview-hook: {msg}\n"));
    a.raw(bad.as_bytes(), &["--on-error", "open"])
        .expect(0, "")
        .stderr_is(&format!("fsview-hook: {msg}\n"));
    // Other events: open by default, exit 2 when closed.
    let bad = a.payload("prompt", "").replace("\"cwd\"", "\"dir\"");
    a.raw(bad.as_bytes(), &[])
        .expect(0, "")
        .stderr_is("fsview-hook: the UserPromptSubmit payload has no cwd string\n");
    a.raw(bad.as_bytes(), &["--on-error", "closed"])
        .expect(2, "")
        .stderr_is("fsview-hook: the UserPromptSubmit payload has no cwd string\n");
    let stop = a.payload("prompt", "").replace("UserPromptSubmit", "Stop");
    a.raw(stop.as_bytes(), &[]).expect(0, "").stderr_is(
        "fsview-hook: hook event \"Stop\" is not one fsview-hook answers; wire it to PreToolUse, PostToolUse, SessionStart and UserPromptSubmit only\n",
    );
    // Tools fsview does not gate or record get no opinion, and no message.
    let bash = a.payload("pre_edit", "").replace("\"Edit\"", "\"Bash\"");
    a.raw(bash.as_bytes(), &[]).expect(0, "").stderr_is("");
}

#[test]
fn an_unusable_session_file_fails_like_a_malformed_payload() {
    let a = Agent::new();
    a.env.write("src/main.rs", "fn main() {}\n");
    std::fs::write(&a.env.session, "not a database, but a note\n").unwrap();
    let r = a.hook("pre_edit", "", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(j["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = j["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.starts_with("fsview-hook could not check this change, so it is denied: "),
        "{reason}"
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    let r = a.hook("post_read", "src/main.rs", &[]);
    r.expect(0, "");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // The file is left as it was.
    assert_eq!(
        std::fs::read_to_string(&a.env.session).unwrap(),
        "not a database, but a note\n"
    );
}

#[test]
fn each_conversation_is_its_own_session() {
    let mut a = Agent::new();
    a.env.write("src/main.rs", "fn main() {}\n");
    a.sid = "conversation-1";
    a.hook("post_read", "src/main.rs", &[]).expect(0, "");
    a.hook("pre_edit", "", &[]).expect(0, "");
    a.sid = "conversation-2";
    a.hook("pre_edit", "", &[]).expect(0, &deny(NOT_READ));
    // --sid puts every conversation in one session.
    a.hook("pre_edit", "", &["--sid", "conversation-1"])
        .expect(0, "");
}

#[test]
fn help_and_version_never_open_the_session_file() {
    let a = Agent::new();
    std::fs::create_dir_all(&a.env.session).unwrap();
    let r = a.env.run("fsview-hook", &["--help"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Examples:"), "{}", r.stdout);
    assert_eq!(a.env.run("fsview-hook", &["--version"]).code, 0);
    // Without an agent it is a usage error.
    assert_eq!(a.env.run("fsview-hook", &[]).code, 2);
}
