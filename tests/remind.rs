//! Reminders (`fsview-hook claude`, UserPromptSubmit) tell each change
//! once, and what they told counts (issue 9): the agent last heard of the
//! told text, so a revert is news, and the gate refuses until a read.

use serde_json::{json, Value};

use crate::harness::{self, Env, Run};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

struct Agent {
    env: Env,
    /// fsview-hook's options.
    args: Vec<&'static str>,
}

impl Agent {
    fn new() -> Agent {
        let env = Env::new();
        std::fs::create_dir_all(env.root().join("managed")).unwrap();
        Agent { env, args: vec![] }
    }

    fn with(args: &[&'static str]) -> Agent {
        Agent {
            args: args.to_vec(),
            ..Agent::new()
        }
    }

    /// A payload captured from Claude Code 2.1.332 (tests/fixtures/hooks),
    /// its placeholders filled, answered by `fsview-hook claude`.
    fn hook(&self, payload: Value) -> Run {
        let mut c = self.env.cmd(harness::bin("fsview-hook"));
        c.arg("claude").args(&self.args);
        harness::output(c, Some(payload.to_string().as_bytes()))
    }

    fn payload(&self, fixture: &str) -> Value {
        let text = fixture
            .replace("@CWD@", &self.env.work.display().to_string())
            .replace("@SID@", "conv");
        serde_json::from_str(&text).unwrap()
    }

    /// A whole-file Read of `file`, as Claude Code reports it: its text, and
    /// `numLines` counting the empty piece after a final newline.
    fn read(&self, file: &str) {
        let path = self.env.path(file).display().to_string();
        let text = std::fs::read_to_string(self.env.path(file)).unwrap();
        let n = text.split('\n').count();
        let mut p = self.payload(include_str!(
            "fixtures/hooks/claude-2.1.332/post_read_whole.json"
        ));
        p["tool_input"]["file_path"] = json!(path);
        p["tool_response"]["file"] = json!({
            "filePath": path, "content": text, "numLines": n, "startLine": 1, "totalLines": n,
        });
        self.hook(p).expect(0, "").stderr_is("");
    }

    fn prompt(&self) -> Run {
        self.hook(self.prompt_payload())
    }

    fn prompt_payload(&self) -> Value {
        self.payload(include_str!(
            "fixtures/hooks/claude-2.1.332/user_prompt_submit.json"
        ))
    }

    fn pre_write(&self, file: &str) -> Run {
        let mut p = self.payload(include_str!(
            "fixtures/hooks/claude-2.1.332/pre_write_update.json"
        ));
        p["tool_input"]["file_path"] = json!(self.env.path(file).display().to_string());
        self.hook(p)
    }
}

fn reminder(text: &str) -> String {
    let v = json!({"hookSpecificOutput": {
        "hookEventName": "UserPromptSubmit",
        "additionalContext": format!("These files changed since you last saw them:\n\n{text}"),
    }});
    format!("{v}\n")
}

fn deny() -> String {
    let v = json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": MODIFIED,
    }});
    format!("{v}\n")
}

// Issue 9, miss 9: told that `timeout = 30` became `99`, then the file
// goes back to `30`. The revert is told (with the diff from what was told),
// a Write is refused until the agent reads the file, and nothing is told
// twice.
#[test]
fn a_revert_after_a_reminder_is_told_and_refused_until_read() {
    // Diffs cut short (a reminder told whole moves the view instead: see
    // a_revert_told_whole_moves_the_view_back), and refusals that never
    // give the file back (--give-back off; on, the refusal is the read).
    let a = Agent::with(&["--diff-lines", "4", "--give-back", "off"]);
    a.env.write("config.toml", "timeout = 30\n");
    a.read("config.toml");
    a.prompt().expect(0, "");
    a.env.write("config.toml", "timeout = 99\n");
    a.prompt().expect(
        0,
        &reminder("config.toml: modified (content)\n--- config.toml (as viewed)\n+++ config.toml (now)\n@@ -1 +1 @@\n-timeout = 30\n[1 lines truncated]\n"),
    );
    a.prompt().expect(0, "");
    a.pre_write("config.toml").expect(0, &deny());
    a.env.write("config.toml", "timeout = 30\n");
    a.prompt().expect(
        0,
        &reminder("config.toml: modified (content)\n--- config.toml (as last told)\n+++ config.toml (now)\n@@ -1 +1 @@\n-timeout = 99\n[1 lines truncated]\n"),
    );
    a.prompt().expect(0, "");
    a.pre_write("config.toml").expect(0, &deny());
    a.env
        .run("fsview-check-edit", &["--sid", "conv", "--changed"])
        .expect(
            1,
            "config.toml: modified (content): the same text as viewed, but a reminder told of a change since; read it again\n",
        );
    // fsview-session show agrees with the gate: not what the agent last
    // heard of, until it reads the file.
    let state = |a: &Agent| {
        let v = a
            .env
            .run("fsview-session", &["show", "--sid", "conv", "--json"])
            .json();
        (v[0]["state"].clone(), v[0]["change"].clone())
    };
    assert_eq!(state(&a), (json!("modified"), json!("content")));
    a.read("config.toml");
    assert_eq!(state(&a), (json!("fresh"), Value::Null));
    a.pre_write("config.toml").expect(0, "");
    a.prompt().expect(0, "");
    a.env
        .run("fsview-check-edit", &["--sid", "conv", "--changed"])
        .expect(0, "");
    // The log says what was told in words, not as an internal fingerprint.
    let events = a
        .env
        .run("fsview-session", &["events", "--sid", "conv", "--json"])
        .json();
    let told: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["action"] == "remind")
        .map(|e| {
            (
                e["verdict"].as_str().unwrap(),
                e["detail"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        told,
        [
            ("content", "a diff of 4 lines, 1 more cut"),
            ("content", "a diff of 4 lines, 1 more cut")
        ]
    );
}

// The same told whole: the model holds each new text from the diff, so
// the view follows it both ways and a Write needs no read.
#[test]
fn a_revert_told_whole_moves_the_view_back() {
    let a = Agent::new();
    a.env.write("config.toml", "timeout = 30\n");
    a.read("config.toml");
    a.env.write("config.toml", "timeout = 99\n");
    a.prompt().expect(
        0,
        &reminder("config.toml: modified (content)\n--- config.toml (as viewed)\n+++ config.toml (now)\n@@ -1 +1 @@\n-timeout = 30\n+timeout = 99\n"),
    );
    a.pre_write("config.toml").expect(0, "");
    a.env.write("config.toml", "timeout = 30\n");
    a.prompt().expect(
        0,
        &reminder("config.toml: modified (content)\n--- config.toml (as viewed)\n+++ config.toml (now)\n@@ -1 +1 @@\n-timeout = 99\n+timeout = 30\n"),
    );
    a.prompt().expect(0, "");
    a.pre_write("config.toml").expect(0, "");
    a.env
        .run("fsview-check-edit", &["--sid", "conv", "--changed"])
        .expect(0, "");
}

// Told it was deleted, then the very bytes the agent read come back: news
// (the agent last heard "deleted"), refused until read. The same bytes
// saved again under another file object after a reminder are no news.
#[test]
fn a_deletion_told_then_undone_and_a_resave_of_what_was_told() {
    let a = Agent::with(&["--give-back", "off"]);
    a.env.write("a.txt", "one\n");
    a.env.write("b.txt", "two\n");
    a.read("a.txt");
    a.read("b.txt");
    std::fs::remove_file(a.env.path("a.txt")).unwrap();
    a.env.write("b.txt", "three\n");
    a.prompt().expect(
        0,
        &reminder("a.txt: modified (deleted): deleted\nb.txt: modified (content)\n--- b.txt (as viewed)\n+++ b.txt (now)\n@@ -1 +1 @@\n-two\n+three\n"),
    );
    a.env.write("a.txt", "one\n");
    a.env.write("b.txt.tmp", "three\n");
    std::fs::rename(a.env.path("b.txt.tmp"), a.env.path("b.txt")).unwrap();
    a.prompt().expect(
        0,
        &reminder("a.txt: modified (content): the same text as viewed again\n"),
    );
    a.prompt().expect(0, "");
    a.pre_write("a.txt").expect(0, &deny());
    a.read("a.txt");
    a.pre_write("a.txt").expect(0, "");
    // With refusals giving back (the default), the refusal is the read.
    let b = Agent::new();
    b.env.write("a.txt", "one\n");
    b.read("a.txt");
    std::fs::remove_file(b.env.path("a.txt")).unwrap();
    b.prompt()
        .expect(0, &reminder("a.txt: modified (deleted): deleted\n"));
    b.env.write("a.txt", "one\n");
    b.prompt().expect(
        0,
        &reminder("a.txt: modified (content): the same text as viewed again\n"),
    );
    let given = json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": crate::hook_fixtures::given_modified("one\n"),
    }});
    b.pre_write("a.txt").expect(0, &format!("{given}\n"));
    b.pre_write("a.txt").expect(0, "");
}

// The told state is recorded only on the record it was computed from: a
// read that lands between the reminder's look at the disk and its record
// is not overwritten (the agent read the file; nothing stays "told").
#[test]
fn a_read_racing_a_reminder_wins() {
    let a = Agent::new();
    a.env.write("a.txt", "one\n");
    a.read("a.txt");
    a.env.write("a.txt", "two\n");
    let dir = a.env.root().join("pause");
    std::fs::create_dir_all(&dir).unwrap();
    let payload = a.prompt_payload().to_string();
    let mut c = a.env.cmd(harness::bin("fsview-hook"));
    c.arg("claude")
        .env("FSVIEW_TEST_PAUSE", format!("told:{}", dir.display()))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
    }
    let start = std::time::Instant::now();
    while !dir.join("told.waiting").exists() {
        assert!(start.elapsed().as_secs() < 30, "the hook never paused");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    a.read("a.txt");
    std::fs::write(dir.join("told.go"), b"").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .contains("+two"));
    a.pre_write("a.txt").expect(0, "");
    a.prompt().expect(0, "");
}
