//! Subagents: each agent of a conversation has its own views.
//!
//! fsview-hook claude fed the payloads Claude Code 2.1.332 sent for its
//! `Agent` tool (tests/fixtures/hooks/claude-2.1.332: `subagent_start_*`,
//! `*_agent_*`, `*_sub_*`, `user_prompt_submit_task_notification`, captured
//! by `scripts/e2e-claude --save-fixtures`): a subagent's payloads carry the
//! parent's `session_id` plus `agent_id` and `agent_type`. Then the shell
//! side: `fsview-session` showing whose views are whose, and the tools
//! addressing one agent's views (`--sid S --agent A`, `--sid S/A`).

use serde_json::{json, Value};

use crate::harness::{self, bin_dir, Env, Run};

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

/// The agent ids the fixtures carry.
const GP: &str = "a0b639467bf3072ee";
const FORK: &str = "a65283cfd748bede0";

fn fixture(name: &str) -> &'static str {
    macro_rules! f {
        ($($n:literal),*) => {
            match name {
                $($n => include_str!(concat!("fixtures/hooks/claude-2.1.332/", $n, ".json")),)*
                other => panic!("no fixture {other}"),
            }
        };
    }
    f!(
        "post_read_whole",
        "pre_edit",
        "pre_write_update",
        "user_prompt_submit",
        "subagent_start_general_purpose",
        "subagent_start_fork",
        "pre_agent_fork",
        "pre_agent_foreground",
        "post_agent_foreground",
        "post_agent_background",
        "post_sub_read",
        "pre_sub_edit",
        "post_sub_edit",
        "user_prompt_submit_task_notification"
    )
}

/// One conversation (session id `conv`) in a work tree, its session file
/// in the harness's place.
struct Conv {
    env: Env,
    sid: &'static str,
}

impl Conv {
    fn new() -> Conv {
        let env = Env::new();
        env.write("a.txt", "one\ntwo\nthree\n");
        env.write("b.txt", "bee\n");
        Conv { env, sid: "conv" }
    }

    /// A fixture with its placeholders filled.
    fn payload(&self, name: &str) -> Value {
        let text = fixture(name)
            .replace("@CWD@", &self.env.work.display().to_string())
            .replace(
                "@HOME@",
                &self.env.root().join("home").display().to_string(),
            )
            .replace("@SID@", self.sid);
        serde_json::from_str(&text).unwrap()
    }

    /// A fixture as the main thread sends it: no agent fields.
    fn main(&self, name: &str) -> Value {
        as_agent(self.payload(name), None)
    }

    /// A fixture as agent `id` of type `kind` sends it.
    fn agent(&self, name: &str, id: &str, kind: &str) -> Value {
        as_agent(self.payload(name), Some((id, kind)))
    }

    /// Claude Code's transcript of the main thread (`agent` None) or of a
    /// subagent, where the hooks say it is, as it writes it before a
    /// fork's launch: `calls` made, each in a message of its own.
    fn transcript(&self, agent: Option<&str>, calls: &[&str]) {
        let path = self.transcript_path(agent);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, transcript_lines(calls)).unwrap();
    }

    /// Where Claude Code keeps the transcript of `agent` (the main
    /// thread's for `None`).
    fn transcript_path(&self, agent: Option<&str>) -> std::path::PathBuf {
        let main = self.payload("post_read_whole")["transcript_path"]
            .as_str()
            .unwrap()
            .to_string();
        let main = std::path::Path::new(&main);
        match agent {
            None => main.to_path_buf(),
            Some(a) => main
                .parent()
                .unwrap()
                .join(self.sid)
                .join("subagents")
                .join(format!("agent-{a}.jsonl")),
        }
    }

    fn send(&self, payload: &Value) -> Run {
        self.send_with(payload, &[])
    }

    fn send_with(&self, payload: &Value, args: &[&str]) -> Run {
        let mut c = self.env.cmd(harness::bin("fsview-hook"));
        c.arg("claude").args(args);
        harness::output(c, Some(payload.to_string().as_bytes()))
    }

    fn session(&self, args: &[&str]) -> Run {
        self.env.run("fsview-session", args)
    }

    /// The views of session `sid`: (path, kind, source, fresh).
    fn views(&self, sid: &str) -> Vec<(String, String, String, bool)> {
        self.session(&["show", "--sid", sid, "--agent", "main", "--json"])
            .json()
            .iter()
            .map(|v| {
                (
                    v["path"].as_str().unwrap().to_string(),
                    v["kind"].as_str().unwrap().to_string(),
                    v["source"].as_str().unwrap().to_string(),
                    v["fresh"].as_bool().unwrap(),
                )
            })
            .collect()
    }
}

fn as_agent(mut p: Value, agent: Option<(&str, &str)>) -> Value {
    let m = p.as_object_mut().unwrap();
    match agent {
        Some((id, kind)) => {
            m.insert("agent_id".into(), id.into());
            m.insert("agent_type".into(), kind.into());
        }
        None => {
            m.remove("agent_id");
            m.remove("agent_type");
        }
    }
    p
}

/// Point a payload's tool at another file of the work tree.
fn at(mut p: Value, conv: &Conv, rel: &str) -> Value {
    let path = conv.env.path(rel).display().to_string();
    p["tool_input"]["file_path"] = path.clone().into();
    if p["tool_response"]["file"].is_object() {
        p["tool_response"]["file"]["filePath"] = path.into();
    } else if p["tool_response"].is_object() {
        p["tool_response"]["filePath"] = path.into();
    }
    p
}

fn deny(reason: &str) -> String {
    format!(
        "{}\n",
        json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }})
    )
}

fn context(event: &str, text: &str) -> String {
    format!(
        "{}\n",
        json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
    )
}

fn view(path: &str, kind: &str, source: &str, fresh: bool) -> (String, String, String, bool) {
    (path.into(), kind.into(), source.into(), fresh)
}

// -- the three cases of the issue ---------------------------------------------

// A subagent Reads b.txt; the parent, which got only the subagent's summary,
// Edits it: the parent never saw it.
#[test]
fn a_subagents_read_is_not_its_parents() {
    let c = Conv::new();
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "")
        .stderr_is("");
    c.send(&c.payload("post_sub_read"))
        .expect(0, "")
        .stderr_is("");
    // The subagent may edit what it read; the parent may not.
    c.send(&c.payload("pre_sub_edit"))
        .expect(0, "")
        .stderr_is("");
    c.send(&c.main("pre_sub_edit"))
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    assert_eq!(c.views("conv"), []);
    assert_eq!(
        c.views(&format!("conv/{GP}")),
        [view("b.txt", "full", "read", true)]
    );
}

// The parent Reads a.txt; a general-purpose subagent starts with no views,
// so its Edit of a.txt is refused. Without its SubagentStart (a hook not
// wired, an older install) it starts empty just the same.
#[test]
fn a_subagent_starts_with_no_views() {
    let c = Conv::new();
    c.send(&c.main("post_read_whole")).expect(0, "");
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.agent("pre_edit", GP, "general-purpose"))
        .expect(0, &deny(NOT_READ));
    c.send(&c.agent("pre_edit", "a-never-started", "general-purpose"))
        .expect(0, &deny(NOT_READ));
    c.send(&c.main("pre_edit")).expect(0, "");
}

// The parent Reads b.txt, a subagent Reads and Edits it, then the parent
// edits from its old read: refused, and its next prompt (the background
// agent's task-notification) tells it what changed, with a diff.
#[test]
fn the_parent_learns_what_its_subagent_changed() {
    let c = Conv::new();
    c.send(&c.main("post_sub_read")).expect(0, "");
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.payload("post_sub_read")).expect(0, "");
    c.send(&c.payload("pre_sub_edit")).expect(0, "");
    c.env.write("b.txt", "BEE\n");
    c.send(&c.payload("post_sub_edit"))
        .expect(0, "")
        .stderr_is("");
    // The subagent knows what it wrote; the parent's view is old.
    c.send(&c.payload("pre_sub_edit")).expect(0, "");
    assert_eq!(c.views("conv"), [view("b.txt", "full", "read", false)]);
    assert_eq!(
        c.views(&format!("conv/{GP}")),
        [view("b.txt", "full", "write", true)]
    );
    let reminder = "\
These files changed since you last saw them:

b.txt: modified (content): by subagent a0b639467bf3072ee (general-purpose) at HH:MM
--- b.txt (as viewed)
+++ b.txt (now)
@@ -1 +1 @@
-bee
+BEE
";
    // The reminder names who changed it.
    let r = c.send(&c.payload("user_prompt_submit_task_notification"));
    assert_eq!(
        (r.code, crate::harness::untimed(&r.stdout)),
        (0, context("UserPromptSubmit", reminder))
    );
    r.stderr_is("");
    // Told once, and whole: the parent holds the new text, so its view
    // moved there and its edit needs no re-read.
    c.send(&c.payload("user_prompt_submit")).expect(0, "");
    assert_eq!(c.views("conv"), [view("b.txt", "full", "read", true)]);
    c.send(&c.main("pre_sub_edit")).expect(0, "");
}

// The same change met by the parent's edit before any prompt: refused
// with the whole change, and the retry goes through.
#[test]
fn the_parents_edit_after_its_subagents_change_is_refused_with_the_change() {
    let c = Conv::new();
    c.send(&c.main("post_sub_read")).expect(0, "");
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.payload("post_sub_read")).expect(0, "");
    c.env.write("b.txt", "BEE\n");
    c.send(&c.payload("post_sub_edit")).expect(0, "");
    let r = c.send(&c.main("pre_sub_edit"));
    assert_eq!(
        (r.code, crate::harness::untimed(&r.stdout)),
        (
            0,
            deny(&crate::harness::modified_told_by(
                "subagent a0b639467bf3072ee (general-purpose) at HH:MM",
                "b.txt: modified (content): by subagent a0b639467bf3072ee (general-purpose) at HH:MM\n--- b.txt (as viewed)\n+++ b.txt (now)\n@@ -1 +1 @@\n-bee\n+BEE\n",
            ))
        )
    );
    c.send(&c.main("pre_sub_edit")).expect(0, "");
    c.send(&c.payload("user_prompt_submit_task_notification"))
        .expect(0, "");
}

// -- forks --------------------------------------------------------------------

// A fork starts with a copy of its launcher's views as they are at its
// start; nothing it does flows back.
#[test]
fn a_fork_starts_with_a_copy_of_its_launchers_views() {
    let c = Conv::new();
    c.send(&c.main("post_read_whole")).expect(0, "");
    c.transcript(None, &["toolu_e2e_0001", "toolu_e2e_0004"]);
    c.send(&c.payload("pre_agent_fork"))
        .expect(0, "")
        .stderr_is("");
    c.send(&c.payload("subagent_start_fork"))
        .expect(0, "")
        .stderr_is("");
    // Read after the fork started: not the fork's.
    c.send(&at(c.main("post_sub_read"), &c, "b.txt"))
        .expect(0, "");
    c.send(&c.agent("pre_edit", FORK, "fork")).expect(0, "");
    c.send(&c.agent("pre_write_update", FORK, "fork"))
        .expect(0, "");
    c.send(&c.agent("pre_sub_edit", FORK, "fork"))
        .expect(0, &deny(NOT_READ));
    // The fork edits a.txt: its view follows, the parent's does not.
    c.env.write("a.txt", "one\nTWO\nthree\n");
    let mut edit = c.agent("post_sub_edit", FORK, "fork");
    edit = at(edit, &c, "a.txt");
    edit["tool_response"] = json!({"filePath": c.env.path("a.txt"), "oldString": "two",
        "newString": "TWO", "originalFile": "one\ntwo\nthree\n",
        "structuredPatch": [{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
            "lines": [" one", "-two", "+TWO", " three"]}],
        "userModified": false, "replaceAll": false});
    c.send(&edit).expect(0, "").stderr_is("");
    c.send(&c.agent("pre_write_update", FORK, "fork"))
        .expect(0, "");
    // Refused with the whole change: the main thread never saw it.
    // It says who changed the file: the fork.
    let r = c.send(&c.main("pre_edit"));
    assert_eq!(
        (r.code, crate::harness::untimed(&r.stdout)),
        (
            0,
            deny(&crate::harness::modified_told_by(
                "subagent a65283cfd748bede0 (fork) at HH:MM",
                "a.txt: modified (content): by subagent a65283cfd748bede0 (fork) at HH:MM\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
            ))
        )
    );
    // The log says where its views came from.
    let ev = c.session(&["events", "--sid", "conv", "--json"]).json();
    let of = |agent: Value, action: &str| -> Vec<(Value, Value)> {
        ev.iter()
            .filter(|e| e["agent"] == agent && e["action"] == action)
            .map(|e| (e["verdict"].clone(), e["detail"].clone()))
            .collect()
    };
    assert_eq!(of(Value::Null, "launch"), [(json!("fork"), Value::Null)]);
    assert_eq!(of(Value::Null, "launched"), [(json!("fork"), json!(FORK))]);
    assert_eq!(
        of(json!(FORK), "agent"),
        [(
            json!("fork"),
            json!("a copy of the main thread's views: 1 files, 1 views")
        )]
    );
}

// A subagent may launch a fork too: that fork copies the subagent's views,
// not the main thread's.
#[test]
fn a_fork_launched_by_a_subagent_copies_that_subagents_views() {
    let c = Conv::new();
    c.send(&c.main("post_read_whole")).expect(0, "");
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.payload("post_sub_read")).expect(0, "");
    c.transcript(Some(GP), &["toolu_e2e_0005", "toolu_e2e_0004"]);
    c.send(&c.agent("pre_agent_fork", GP, "general-purpose"))
        .expect(0, "");
    c.send(&c.payload("subagent_start_fork")).expect(0, "");
    c.send(&c.agent("pre_sub_edit", FORK, "fork")).expect(0, "");
    c.send(&c.agent("pre_edit", FORK, "fork"))
        .expect(0, &deny(NOT_READ));
    let ev = c
        .session(&["events", "--sid", "conv", "--agent", FORK, "--json"])
        .json();
    assert_eq!(
        ev[0]["detail"],
        format!("a copy of agent {GP}'s views: 1 files, 1 views")
    );
}

/// A transcript's lines: each call an assistant message of its own.
fn transcript_lines(calls: &[&str]) -> String {
    calls
        .iter()
        .map(|id| {
            let line = json!({"type": "assistant", "sessionId": "conv", "message": {"id": format!("msg_{id}"),
                "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {}}]}});
            format!("{line}\n")
        })
        .collect()
}

// On a busy machine Claude Code may write a subagent's transcript after
// the subagent's hooks have run, its launch of a fork included: the
// launch waits for it (as long as for a call's line), then copies the
// subagent's views of calls before the launch message.
#[test]
fn a_subagents_fork_launch_waits_for_its_transcript_to_be_written() {
    let c = Conv::new();
    c.send(&c.main("post_read_whole")).expect(0, "");
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.payload("post_sub_read")).expect(0, "");
    let writer = written_later(&c, Some(GP), &["toolu_e2e_0005", "toolu_e2e_0004"]);
    c.send(&c.agent("pre_agent_fork", GP, "general-purpose"))
        .expect(0, "");
    writer.join().unwrap();
    assert_eq!(
        forks_start(&c, "pre_sub_edit"),
        format!("a copy of agent {GP}'s views: 1 files, 1 views")
    );
}

/// The transcript of `agent` (the main thread's for `None`), not there
/// yet, written with `calls` 300 ms from now.
fn written_later(c: &Conv, agent: Option<&str>, calls: &[&str]) -> std::thread::JoinHandle<()> {
    let path = c.transcript_path(agent);
    assert!(!path.exists());
    let lines = transcript_lines(calls);
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, lines).unwrap();
    })
}

/// The fork starts, and its gate of `payload` runs: what its start
/// copied, as logged.
fn forks_start(c: &Conv, payload: &str) -> Value {
    c.send(&c.payload("subagent_start_fork")).expect(0, "");
    c.send(&c.agent(payload, FORK, "fork")).expect(0, "");
    let ev = c
        .session(&["events", "--sid", "conv", "--agent", FORK, "--json"])
        .json();
    ev[0]["detail"].clone()
}

// Early in a conversation Claude Code may not have written the main
// thread's transcript yet when its first calls launch a fork (seen on a
// busy machine: `scripts/e2e-claude fork-inherits`, run four at a time):
// the launch waits for it, as a subagent's does, then copies the views of
// calls before the launch message.
#[test]
fn a_forks_launch_early_in_a_conversation_waits_for_its_transcript() {
    let c = Conv::new();
    c.send(&c.main("post_read_whole")).expect(0, "");
    let writer = written_later(&c, None, &["toolu_e2e_0001", "toolu_e2e_0004"]);
    c.send(&c.payload("pre_agent_fork")).expect(0, "");
    writer.join().unwrap();
    assert_eq!(
        forks_start(&c, "pre_edit"),
        "a copy of the main thread's views: 1 files, 1 views"
    );
}

// A conversation whose transcript Claude Code never writes
// (`--no-session-persistence`): which calls shared the fork's launch
// message is not known, so the fork gets no view of a call the transcript
// does not name (none here).
#[test]
fn a_fork_launched_with_no_transcript_gets_no_view_of_a_call() {
    let c = Conv::new();
    c.send(&c.main("post_read_whole")).expect(0, "");
    c.send(&c.payload("pre_agent_fork")).expect(0, "");
    c.send(&c.payload("subagent_start_fork")).expect(0, "");
    c.send(&c.agent("pre_edit", FORK, "fork"))
        .expect(0, &deny(NOT_READ));
    c.send(&c.main("pre_edit")).expect(0, "");
    let ev = c.session(&["events", "--sid", "conv", "--json"]).json();
    let of = |agent: Value, action: &str| -> Vec<Value> {
        ev.iter()
            .filter(|e| e["agent"] == agent && e["action"] == action)
            .map(|e| e["detail"].clone())
            .collect()
    };
    assert_eq!(
        of(Value::Null, "launch"),
        [json!(
            "not copied (not in the transcript yet): toolu_e2e_0001"
        )]
    );
    assert_eq!(
        of(json!(FORK), "agent"),
        [json!("a copy of the main thread's views: 0 files, 0 views")]
    );
}

// A fork whose launcher is not known (no launch seen, or two agents with a
// launch not yet taken) starts with no views: a needless "read it first"
// costs a read, a wrong copy could let it change a file it never saw.
#[test]
fn a_fork_whose_launcher_is_not_known_starts_empty() {
    let c = Conv::new();
    c.send(&c.main("post_read_whole")).expect(0, "");
    c.send(&c.payload("subagent_start_fork")).expect(0, "");
    c.send(&c.agent("pre_edit", FORK, "fork"))
        .expect(0, &deny(NOT_READ));
    let d = Conv::new();
    d.send(&d.main("post_read_whole")).expect(0, "");
    d.send(&d.payload("subagent_start_general_purpose"))
        .expect(0, "");
    d.send(&d.payload("pre_agent_fork")).expect(0, "");
    d.send(&d.agent("pre_agent_fork", GP, "general-purpose"))
        .expect(0, "");
    d.send(&d.payload("subagent_start_fork")).expect(0, "");
    d.send(&d.agent("pre_edit", FORK, "fork"))
        .expect(0, &deny(NOT_READ));
    let details: Vec<Value> = [&c, &d]
        .iter()
        .map(|x| {
            x.session(&["events", "--sid", "conv", "--agent", FORK, "--json"])
                .json()[0]["detail"]
                .clone()
        })
        .collect();
    assert_eq!(
        details,
        [
            json!("no views (no launch of it was seen)"),
            json!("no views (2 agents launched one; which is not known)")
        ]
    );
}

// A second start of an agent (Claude Code resumes agents by id) keeps what
// it has seen.
#[test]
fn a_repeated_start_keeps_the_agents_views() {
    let c = Conv::new();
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.payload("post_sub_read")).expect(0, "");
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.payload("pre_sub_edit")).expect(0, "");
}

// -- the parent told when a foreground agent returns ------------------------

#[test]
fn a_foreground_agents_return_tells_its_launcher_what_changed() {
    let c = Conv::new();
    c.send(&c.main("post_sub_read")).expect(0, "");
    c.send(&c.payload("pre_agent_foreground"))
        .expect(0, "")
        .stderr_is("");
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.payload("post_sub_read")).expect(0, "");
    c.env.write("b.txt", "BEE\n");
    c.send(&c.payload("post_sub_edit")).expect(0, "");
    // A background launch changed nothing yet.
    c.send(&c.payload("post_agent_background"))
        .expect(0, "")
        .stderr_is("");
    let reminder = "\
These files changed since you last saw them:

b.txt: modified (content): by subagent a0b639467bf3072ee (general-purpose) at HH:MM
--- b.txt (as viewed)
+++ b.txt (now)
@@ -1 +1 @@
-bee
+BEE
";
    let r = c.send(&c.payload("post_agent_foreground"));
    assert_eq!(
        (r.code, crate::harness::untimed(&r.stdout)),
        (0, context("PostToolUse", reminder))
    );
    r.stderr_is("");
    // Told once: the next prompt does not repeat it.
    c.send(&c.payload("user_prompt_submit")).expect(0, "");
}

// -- names -------------------------------------------------------------------

// --sid X makes every conversation's main thread X; its agents are X/A.
#[test]
fn the_hooks_sid_applies_to_agents_too() {
    let c = Conv::new();
    c.send_with(&c.payload("post_sub_read"), &["--sid", "fixed"])
        .expect(0, "");
    assert_eq!(
        c.views(&format!("fixed/{GP}")),
        [view("b.txt", "full", "read", true)]
    );
    assert_eq!(c.views(&format!("conv/{GP}")), []);
    // A start that names no agent has nothing to start: open, one line.
    c.send(&c.main("subagent_start_general_purpose"))
        .expect(0, "")
        .stderr_is("fsview-hook: a subagent's start without an agent id: nothing to start\n");
    // An agent id that cannot name views fails as a malformed payload does.
    let mut bad = c.payload("pre_sub_edit");
    bad["agent_id"] = "a\nb".into();
    c.send(&bad)
        .expect(
            0,
            &deny("fsview-hook could not check this change, so it is denied: agent id \"a\\nb\" cannot name an agent's views (use 1 to 200 printable characters)"),
        )
        .stderr_is("fsview-hook: agent id \"a\\nb\" cannot name an agent's views (use 1 to 200 printable characters)\n");
}

// -- from the shell ------------------------------------------------------------

/// A conversation with a general-purpose agent and a fork, as the hooks
/// leave it.
fn busy() -> Conv {
    let c = Conv::new();
    c.send(&c.main("post_read_whole")).expect(0, "");
    c.transcript(None, &["toolu_e2e_0001", "toolu_e2e_0004"]);
    c.send(&c.payload("pre_agent_fork")).expect(0, "");
    c.send(&c.payload("subagent_start_general_purpose"))
        .expect(0, "");
    c.send(&c.payload("subagent_start_fork")).expect(0, "");
    c.send(&c.payload("post_sub_read")).expect(0, "");
    c
}

#[test]
fn fsview_session_shows_a_conversations_agents_and_whose_views_are_whose() {
    let c = busy();
    c.session(&["list"]).expect(
        0,
        &format!(
            "\
SID                     FILES  VIEWS  EVENTS  CREATED   ACTIVE    PARENT  AGENT
conv                        1      1       3  just now  just now  -       main
conv/{GP}      1      1       2  just now  just now  conv    general-purpose
conv/{FORK}      1      1       1  just now  just now  conv    fork
"
        ),
    );
    c.session(&["show", "--sid", "conv"]).expect(
        0,
        &format!(
            "\
AGENT              PATH   KIND  STATE  HELD  WHEN      SOURCE  LINES
main               a.txt  full  fresh  yes   just now  read    1-3 of 3
{GP}  b.txt  full  fresh  yes   just now  read    1-1 of 1
{FORK}  a.txt  full  fresh  yes   just now  read    1-3 of 3
"
        ),
    );
    c.session(&["show", "--sid", "conv", "--agent", GP]).expect(
        0,
        "\
PATH   KIND  STATE  HELD  WHEN      SOURCE  LINES
b.txt  full  fresh  yes   just now  read    1-1 of 1
",
    );
    c.session(&["show", "--sid", &format!("conv/{GP}")]).expect(
        0,
        "\
PATH   KIND  STATE  HELD  WHEN      SOURCE  LINES
b.txt  full  fresh  yes   just now  read    1-1 of 1
",
    );
    c.session(&["show", "--sid", "conv", "--agent", "main"])
        .expect(
            0,
            "\
PATH   KIND  STATE  HELD  WHEN      SOURCE  LINES
a.txt  full  fresh  yes   just now  read    1-3 of 3
",
        );
    c.session(&["events", "--sid", "conv"]).expect(
        0,
        &format!(
            "\
WHEN      AGENT              TOOL         ACTION    PATH   VERDICT          DETAIL
just now  main               fsview-hook  read      a.txt  -                full
just now  main               fsview-hook  launch    -      fork             -
just now  {GP}  fsview-hook  agent     -      general-purpose  no views
just now  main               fsview-hook  launched  -      fork             {FORK}
just now  {FORK}  fsview-hook  agent     -      fork             a copy of the main thread's views: 1 files, 1 views
just now  {GP}  fsview-hook  read      b.txt  -                full
"
        ),
    );
    let list = c.session(&["list", "--json"]).json();
    let pick = |v: &Value| {
        (
            v["sid"].clone(),
            v["parent"].clone(),
            v["agent"].clone(),
            v["agent_type"].clone(),
            v["agents"].clone(),
        )
    };
    assert_eq!(
        list.iter().map(pick).collect::<Vec<_>>(),
        [
            (
                json!("conv"),
                json!(null),
                json!(null),
                json!(null),
                json!(2)
            ),
            (
                json!(format!("conv/{GP}")),
                json!("conv"),
                json!(GP),
                json!("general-purpose"),
                json!(0)
            ),
            (
                json!(format!("conv/{FORK}")),
                json!("conv"),
                json!(FORK),
                json!("fork"),
                json!(0)
            ),
        ]
    );
    let shown = c.session(&["show", "--sid", "conv", "--json"]).json();
    assert_eq!(
        shown
            .iter()
            .map(|v| (v["sid"].clone(), v["agent"].clone(), v["path"].clone()))
            .collect::<Vec<_>>(),
        [
            (json!("conv"), json!(null), json!("a.txt")),
            (json!(format!("conv/{GP}")), json!(GP), json!("b.txt")),
            (json!(format!("conv/{FORK}")), json!(FORK), json!("a.txt")),
        ]
    );
    // Dropping the conversation drops its agents' views with it.
    c.session(&["drop", "--sid", "conv"]).expect(
        0,
        "dropped \"conv\": 3 files, 3 views, 0 context parts, 0 instruction files, 6 events, and 2 agents\n",
    );
    c.session(&["list"]).expect(0, "");
}

// The tools address one agent's views: --sid S --agent A, the same as
// --sid S/A, or FSVIEW_AGENT; --agent main is the main thread.
#[test]
fn the_tools_address_one_agents_views() {
    let c = Conv::new();
    let e = &c.env;
    e.run("fsview-read", &["--sid", "s", "--agent", "x", "a.txt"])
        .expect(0, "1\tone\n2\ttwo\n3\tthree\n");
    e.run("fsview-check-edit", &["--sid", "s/x", "--write", "a.txt"])
        .expect(0, "a.txt: ok\n");
    e.run("fsview-check-edit", &["--sid", "s", "a.txt"])
        .expect(1, &format!("a.txt: not_read: {NOT_READ}\n"));
    e.run(
        "fsview-check-edit",
        &["--sid", "s", "--agent", "main", "a.txt"],
    )
    .expect(1, &format!("a.txt: not_read: {NOT_READ}\n"));
    let mut cmd = e.cmd(harness::bin("fsview-check-edit"));
    cmd.args(["--sid", "s", "a.txt"]).env("FSVIEW_AGENT", "x");
    harness::output(cmd, None).expect(0, "a.txt: ok\n");
    // The agent's session sits inside its conversation.
    let list = e.run("fsview-session", &["list", "--json"]).json();
    assert_eq!(
        list.iter()
            .map(|v| (v["sid"].clone(), v["parent"].clone(), v["agent"].clone()))
            .collect::<Vec<_>>(),
        [
            (json!("s"), json!(null), json!(null)),
            (json!("s/x"), json!("s"), json!("x")),
        ]
    );
    e.run("fsview-read", &["--sid", "s", "--agent", "", "a.txt"])
        .expect(2, "")
        .stderr_is("fsview-read: invalid agent id \"\": use 1 to 200 printable characters, or main for the main thread (--agent or FSVIEW_AGENT)\n");
}

// -- many processes ------------------------------------------------------------

// A parent and three background subagents fire their hooks at once on one
// session file, each reading its own files and a shared one and checking
// edits: nothing is lost and no view lands in another agent's set.
#[test]
fn concurrent_hooks_of_a_parent_and_its_subagents_never_mix() {
    let c = Conv::new();
    let e = &c.env;
    const N: usize = 25;
    let agents = ["main", "a1", "a2", "a3"];
    let dir = e.root().join("payloads");
    std::fs::create_dir_all(&dir).unwrap();
    e.write("shared.txt", "shared\n");
    let agent_of = |p: Value, who: &str| match who {
        "main" => as_agent(p, None),
        id => as_agent(p, Some((id, "general-purpose"))),
    };
    let read = |who: &str, rel: &str, body: &str| {
        let mut p = at(c.payload("post_read_whole"), &c, rel);
        p["tool_response"]["file"]["content"] = body.into();
        p["tool_response"]["file"]["numLines"] = 2.into();
        p["tool_response"]["file"]["totalLines"] = 2.into();
        agent_of(p, who)
    };
    let edit = |who: &str, rel: &str| agent_of(at(c.payload("pre_edit"), &c, rel), who);
    for (n, who) in agents.iter().enumerate() {
        let d = dir.join(who);
        std::fs::create_dir_all(&d).unwrap();
        if *who != "main" {
            let start = as_agent(
                c.payload("subagent_start_general_purpose"),
                Some((who, "general-purpose")),
            );
            std::fs::write(d.join("000-start.ok"), start.to_string()).unwrap();
        }
        for i in 0..N {
            let rel = format!("{who}/f{i}.txt");
            let body = format!("{who} {i}\n");
            e.write(&rel, &body);
            let other = agents[(n + 1) % agents.len()];
            let steps = [
                ("read.ok", read(who, &rel, &body)),
                ("shared.ok", read(who, "shared.txt", "shared\n")),
                ("edit.ok", edit(who, &rel)),
                // The next agent's file of the previous round: read by it,
                // never by this one.
                (
                    "cross.deny",
                    edit(who, &format!("{other}/f{}.txt", i.max(1) - 1)),
                ),
            ];
            for (k, (name, p)) in steps.iter().enumerate() {
                std::fs::write(d.join(format!("{:03}-{k}-{name}", i + 1)), p.to_string()).unwrap();
            }
        }
    }
    // The next agent's files exist before anyone starts: reading them is
    // the only way to be allowed an edit.
    let script = format!(
        r#"
        export PATH="{bin}:$PATH"
        for who in {agents}; do
          (
            while [ ! -e go ]; do sleep 0.01; done
            # Every read recorded (no re-read answered short): this is
            # about whose views they are.
            export FSVIEW_SHORT_READS=off
            bad=0
            for p in payloads/$who/*; do
              out=$(fsview-hook claude < "$p") || bad=$((bad+1))
              case "$p" in
                *.ok) [ -z "$out" ] || {{ bad=$((bad+1)); echo "$p: $out" >&2; }} ;;
                *.deny) case "$out" in *'"deny"'*) ;; *) bad=$((bad+1)); echo "$p: $out" >&2 ;; esac ;;
              esac
            done
            echo "$who $bad"
          ) > "out.$who" 2> "err.$who" &
        done
        sleep 0.2; touch go
        wait
        cat out.main out.a1 out.a2 out.a3
        cat err.*
        "#,
        bin = bin_dir().display(),
        agents = agents.join(" "),
    );
    let mut cmd = e.cmd("bash");
    cmd.arg("-c").arg(&script).current_dir(e.root());
    harness::output(cmd, None).expect(0, "main 0\na1 0\na2 0\na3 0\n");
    // Each agent's views are exactly its own files and the shared one.
    for who in agents {
        let sid = match who {
            "main" => "conv".to_string(),
            id => format!("conv/{id}"),
        };
        let mut got: Vec<String> = c.views(&sid).into_iter().map(|v| v.0).collect();
        got.sort();
        let mut want: Vec<String> = (0..N).map(|i| format!("{who}/f{i}.txt")).collect();
        want.push("shared.txt".into());
        want.sort();
        assert_eq!(got, want, "views of {who}");
    }
    // They really ran at once: the conversation's log switches between
    // agents far more often than four blocks would.
    let ev = c.session(&["events", "--sid", "conv", "--json"]).json();
    assert_eq!(ev.len(), 4 * N * 4 + 3, "every hook logged once");
    let switches = ev
        .windows(2)
        .filter(|w| w[0]["agent"] != w[1]["agent"])
        .count();
    assert!(switches > 12, "only {switches} switches between agents");
    let db = rusqlite::Connection::open(&e.session).unwrap();
    let ok: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}
