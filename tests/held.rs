//! What the conversation holds, from Claude Code's transcript: files
//! attached to a prompt (@-mentions), compaction (what it kept, what it
//! re-attached), rewind, a catch-up of views no hook recorded, a subagent's
//! own transcript, and a transcript that cannot be read. The transcripts
//! are real (tests/fixtures/transcripts/claude-2.1.332, captured by
//! `scripts/e2e-claude --save-fixtures`), written line by line where the
//! hook payloads say the transcript is, as Claude Code writes it.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::hook_fixtures::{given_after, Fixtures, NOT_READ};

fn transcript(name: &str) -> &'static str {
    match name {
        "mention_compact" => {
            include_str!("fixtures/transcripts/claude-2.1.332/mention_compact.jsonl")
        }
        "rewind" => include_str!("fixtures/transcripts/claude-2.1.332/rewind.jsonl"),
        "fork_same_message" => {
            include_str!("fixtures/transcripts/claude-2.1.332/fork_same_message.jsonl")
        }
        "parallel_subagent" => {
            include_str!("fixtures/transcripts/claude-2.1.332/parallel_subagent.jsonl")
        }
        other => panic!("no transcript {other}"),
    }
}

fn lines(n: usize, fmt: impl Fn(usize) -> String) -> String {
    (1..=n).map(|i| format!("{}\n", fmt(i))).collect()
}

/// A conversation of Claude Code with its transcript, written as the
/// agent goes.
struct Conversation {
    f: Fixtures,
    /// The transcript's lines, placeholders filled.
    lines: Vec<String>,
    /// How many are written.
    written: usize,
}

impl Conversation {
    fn new(name: &str) -> Conversation {
        let f = Fixtures::new("claude", "claude-2.1.332");
        let work = f.env.work.display().to_string();
        let lines = transcript(name)
            .lines()
            .map(|l| l.replace("@CWD@", &work).replace("@SID@", f.sid))
            .collect();
        Conversation {
            f,
            lines,
            written: 0,
        }
    }

    /// Where the payloads say the transcript is.
    fn path(&self) -> PathBuf {
        PathBuf::from(
            self.f.payload("session_start_startup")["transcript_path"]
                .as_str()
                .unwrap(),
        )
    }

    /// Write the transcript's lines up to (not including) the first that
    /// holds `marker`, or all of them.
    fn write_until(&mut self, marker: Option<&str>) {
        let end = match marker {
            Some(m) => {
                self.written
                    + self.lines[self.written..]
                        .iter()
                        .position(|l| l.contains(m))
                        .unwrap_or_else(|| panic!("no line holds {m}"))
            }
            None => self.lines.len(),
        };
        append_lines(&self.path(), &self.lines[self.written..end]);
        self.written = end;
    }

    /// The index just past the first line not written yet that holds
    /// `marker`: how far to write to reach it.
    fn through(&self, marker: &str) -> usize {
        self.written
            + self.lines[self.written..]
                .iter()
                .position(|l| l.contains(marker))
                .unwrap_or_else(|| panic!("no line holds {marker}"))
            + 1
    }

    /// A payload of fixture `name` with `tool_input.file_path` (and the
    /// response's path) set to `rel`, of the turn the transcript is at.
    fn about(&self, name: &str, rel: &str) -> Value {
        let mut p = self.payload(name);
        let abs = self.f.env.path(rel).display().to_string();
        p["tool_input"]["file_path"] = json!(abs);
        p
    }

    /// The payload of fixture `name` with the `prompt_id` of the last
    /// prompt written (none before the first): a hook of the turn the
    /// transcript is at, as Claude Code sends it.
    fn payload(&self, name: &str) -> Value {
        let mut p = self.f.payload(name);
        match self.prompt_id(self.written) {
            Some(id) => p["prompt_id"] = json!(id),
            None => {
                p.as_object_mut().unwrap().remove("prompt_id");
            }
        }
        p
    }

    /// The `promptId` of the last of the first `n` lines that has one.
    fn prompt_id(&self, n: usize) -> Option<String> {
        self.lines[..n].iter().rev().find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            v["promptId"].as_str().map(String::from)
        })
    }

    /// The gate's answer to an Edit (`write`: a Write) of `rel`: the
    /// refusal's reason, or "" when it lets it through.
    fn gate(&self, rel: &str, write: bool) -> String {
        let name = if write {
            "pre_write_update"
        } else {
            "pre_edit"
        };
        self.decide(&self.about(name, rel))
    }

    /// The gate's answer to the PreToolUse `payload`: the refusal's
    /// reason, or "" when it lets the change through.
    fn decide(&self, payload: &Value) -> String {
        let r = self.f.send(payload, &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        if r.stdout.is_empty() {
            return String::new();
        }
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// A prompt: the hook that catches up before the next turn.
    fn prompt(&self) -> String {
        let r = self.f.hook("user_prompt_submit", &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.stderr.clone()
    }

    /// Every view of the session: (path, kind, source, held, released).
    fn views(&self) -> Vec<(String, String, String, bool, Value)> {
        let r = self
            .f
            .env
            .run("fsview-session", &["show", "--sid", self.f.sid, "--json"]);
        r.json()
            .into_iter()
            .map(|v| {
                (
                    v["path"].as_str().unwrap().to_string(),
                    v["kind"].as_str().unwrap().to_string(),
                    v["source"].as_str().unwrap().to_string(),
                    v["held"].as_bool().unwrap(),
                    v["released"].clone(),
                )
            })
            .collect()
    }
}

/// Append `lines` to the transcript at `path`, as the agent writes it
/// (creating it and its folder the first time).
fn append_lines(path: &std::path::Path, lines: &[String]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for l in lines {
        writeln!(out, "{l}").unwrap();
    }
}

/// [`append_lines`] 200 ms from now, on another thread: the agent writing
/// its transcript after the hook ran.
fn append_later(path: PathBuf, lines: Vec<String>) -> std::thread::JoinHandle<()> {
    append_after(path, lines, 200)
}

/// [`append_lines`] `ms` milliseconds from now, on another thread.
fn append_after(path: PathBuf, lines: Vec<String>, ms: u64) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(ms));
        append_lines(&path, &lines);
    })
}

fn view(path: &str, kind: &str, source: &str, held: bool) -> (String, String, String, bool, Value) {
    let released = if held {
        Value::Null
    } else {
        json!("compaction")
    };
    (path.into(), kind.into(), source.into(), held, released)
}

fn not_read_after(why: &str) -> String {
    format!("{NOT_READ} (What it was shown of it is no longer in the conversation: {why}.)")
}

const NOTES: &str = "ALPHA\nbeta\n";
const A_TXT: &str = "one\ntwo\nthree\nfour\n";
const A_EDITED: &str = "one\nTWO\nthree\nfour\n";

fn cut_txt() -> String {
    lines(4001, |i| {
        format!("line {i} of a file that is over the token cap")
    })
}

// `@notes.txt change alpha to ALPHA`: Claude Code attaches the file itself
// (no tool hook fires) before the model's first tool call. The Edit that
// follows is let through: the attachment is a view of the whole file.
#[test]
fn an_at_mention_is_a_view_and_the_edit_after_it_goes_through() {
    let mut c = Conversation::new("mention_compact");
    c.f.env.write("notes.txt", "alpha\nbeta\n");
    c.f.hook("session_start_startup", &[]).expect(0, "");
    c.write_until(Some("toolu_e2e_0002"));
    assert_eq!(c.gate("notes.txt", false), "");
    assert_eq!(c.gate("notes.txt", true), "");
    assert_eq!(c.views(), [view("notes.txt", "full", "read", true)]);
    let events =
        c.f.env
            .run("fsview-session", &["events", "--sid", c.f.sid, "--json"]);
    let reads: Vec<Value> = events
        .json()
        .into_iter()
        .filter(|e| e["action"] == "read")
        .collect();
    assert_eq!(reads.len(), 1, "read once, not at every hook");
}

// Issue 40, item 5: the file changed between the @-mention and the first
// hook. The model was shown the attached text all the same: the Edit is
// refused as modified, with the change (not "not read"), and the view
// stays the attached text, so the change is what it is told.
#[test]
fn an_at_mention_of_a_file_changed_since_is_a_view_of_what_was_shown() {
    let mut c = Conversation::new("mention_compact");
    c.f.env.write("notes.txt", "alpha\nbeta\n");
    c.f.hook("session_start_startup", &[]).expect(0, "");
    c.f.env.write("notes.txt", "alpha\nBETA\n");
    c.write_until(Some("toolu_e2e_0002"));
    let refusal = c.gate("notes.txt", false);
    assert!(
        refusal.contains("notes.txt: modified (content)\n--- notes.txt (as viewed)\n+++ notes.txt (now)\n@@ -1,2 +1,2 @@\n alpha\n-beta\n+BETA\n"),
        "{refusal}"
    );
}

// Claude Code writes its transcript a little after the fact: the hook of
// the model's first call may run before the lines of the prompt (the
// attachment) are written. A refusal first waits for the transcript to
// reach the call, then decides on what it shows; a call the transcript
// never reaches is refused as before.
#[test]
fn a_refusal_waits_for_the_transcript_to_reach_its_call() {
    let mut c = Conversation::new("mention_compact");
    c.f.env.write("notes.txt", "alpha\nbeta\n");
    c.f.hook("session_start_startup", &[]).expect(0, "");
    c.write_until(Some("\"type\":\"file\""));
    let mut edit = c.about("pre_edit", "notes.txt");
    edit["tool_use_id"] = json!("toolu_e2e_0002");
    let through = c.through("\"toolu_e2e_0002\"");
    let writer = append_later(c.path(), c.lines[c.written..through].to_vec());
    c.f.send(&edit, &[]).expect(0, "");
    writer.join().unwrap();
    assert_eq!(c.views(), [view("notes.txt", "full", "read", true)]);
    // The prompt's lines written late, the call's own never: what was
    // written while the refusal waited is caught up with all the same.
    let mut e = Conversation::new("mention_compact");
    e.f.env.write("notes.txt", "alpha\nbeta\n");
    e.f.hook("session_start_startup", &[]).expect(0, "");
    e.write_until(Some("\"type\":\"file\""));
    let mut edit = e.about("pre_edit", "notes.txt");
    edit["tool_use_id"] = json!("toolu_never_written");
    let writer = append_later(e.path(), e.lines[e.written..through - 1].to_vec());
    e.f.send(&edit, &[]).expect(0, "");
    writer.join().unwrap();
    assert_eq!(e.views(), [view("notes.txt", "full", "read", true)]);
    // A call the transcript does not reach: refused after the wait.
    let mut other = c.about("pre_edit", "other.txt");
    c.f.env.write("other.txt", "x\n");
    other["tool_use_id"] = json!("toolu_never_written");
    assert_eq!(c.decide(&other), NOT_READ);
}

// The whole arc of the fixture: an @-mention edited, a mention cut at the
// token cap (a start view: no whole-file write), a read, a range, then
// `/compact`: the conversation holds none of it (SessionStart compact),
// until the transcript shows the files it re-attached.
#[test]
fn a_compaction_drops_views_and_keeps_what_it_reattached() {
    let mut c = Conversation::new("mention_compact");
    c.f.env.write("notes.txt", NOTES);
    c.f.env.write("a.txt", A_TXT);
    c.f.env.write("cut.txt", cut_txt());
    c.write_until(Some("compact_boundary"));
    // No hook saw any of it: the catch-up finds it all. The mention of
    // notes.txt showed text the disk no longer holds (the Edit after it
    // changed it): it is the view the Edit then applies to, so the
    // conversation holds the whole file as the Edit left it (issue 40,
    // item 5: what was shown is a view, even when the disk moved on).
    assert_eq!(c.prompt(), "");
    let mut v = c.views();
    v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(
        v,
        [
            view("a.txt", "full", "read", true),
            view("a.txt", "range", "read", true),
            view("cut.txt", "start", "read", true),
            // The mention's whole text with the Edit applied.
            view("notes.txt", "full", "write", true),
        ]
    );
    assert_eq!(c.gate("notes.txt", false), "");
    assert_eq!(c.gate("a.txt", true), "");
    assert_eq!(
        c.gate("cut.txt", true),
        "File has only been read in part (lines 1-2000 of 4001). Read the whole file before writing all of it."
    );
    c.f.hook("session_start_compact", &[]).expect(0, "");
    // Small files come back whole in the refusal (and are held again);
    // cut.txt, over 2,000 lines, must be read.
    assert_eq!(c.gate("cut.txt", false), not_read_after("compaction"));
    assert_eq!(c.gate("notes.txt", false), given_after("compaction", NOTES));
    assert_eq!(c.gate("notes.txt", false), "");
    assert_eq!(c.gate("a.txt", true), given_after("compaction", A_TXT));
    assert_eq!(c.gate("a.txt", true), "");
    // The boundary, the summary and the re-attached a.txt and notes.txt.
    c.write_until(Some("[t-after]"));
    assert_eq!(c.prompt(), "");
    assert_eq!(c.gate("a.txt", true), "");
    assert_eq!(c.gate("notes.txt", false), "");
    assert_eq!(c.gate("cut.txt", false), not_read_after("compaction"));
    let mut v = c.views();
    v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(
        v,
        [
            view("a.txt", "full", "read", true),
            view("a.txt", "range", "read", false),
            view("cut.txt", "start", "read", false),
            // The re-attached whole text, over the Edit's full view the
            // compaction released.
            view("notes.txt", "full", "read", true),
        ]
    );
}

// A compaction whose SessionStart hook never ran (not wired, failed): the
// boundary in the transcript drops the views all the same.
#[test]
fn the_boundary_alone_drops_views() {
    let mut c = Conversation::new("mention_compact");
    c.f.env.write("notes.txt", NOTES);
    c.f.env.write("a.txt", A_TXT);
    c.f.env.write("cut.txt", cut_txt());
    c.write_until(Some("compact_boundary"));
    c.prompt();
    c.write_until(Some("[t-after]"));
    c.prompt();
    assert_eq!(c.gate("cut.txt", false), not_read_after("compaction"));
    assert_eq!(c.gate("a.txt", true), "");
}

// `--resume-session-at` an earlier message: the turn that read b.txt is
// abandoned, so the Edit of b.txt on the new branch is refused; a.txt,
// read before, still goes through. The reads were never recorded by a
// hook: the catch-up recovered them from the transcript.
#[test]
fn a_rewind_drops_the_abandoned_branch() {
    let mut c = before_the_rewound_prompt();
    assert_eq!(c.gate("b.txt", false), "");
    // The rewound prompt and the Edit's call, written before its
    // PreToolUse.
    c.write_until(Some("toolu_e2e_0006\",\"type\":\"tool_result"));
    // The catch-up before the gate releases b.txt's view; the refusal
    // gives the file back whole, which holds it again.
    assert_eq!(c.gate("b.txt", false), given_after("rewind", "bee\n"));
    assert_eq!(c.gate("a.txt", true), "");
    assert_eq!(c.gate("b.txt", true), "");
    let released: Vec<Value> = c.views().into_iter().map(|v| v.4).collect();
    assert_eq!(released, [json!(null), json!(null)]);
    let events =
        c.f.env
            .run("fsview-session", &["events", "--sid", c.f.sid, "--json"]);
    let given: Vec<(String, String)> = events
        .json()
        .into_iter()
        .filter(|e| e["verdict"] == "given")
        .map(|e| {
            (
                e["action"].as_str().unwrap().into(),
                e["path"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(given, [("read".to_string(), "b.txt".to_string())]);
}

// Claude Code writes a turn's lines a little after the fact: the first
// call after a rewind may be hooked before the rewound prompt is written,
// when the view of the branch it abandons still counts. A tool call of the
// main thread whose transcript has not reached its prompt (the payload's
// prompt_id) waits for the prompt's lines first, or for its own call's.
#[test]
fn a_tool_call_waits_for_the_lines_of_its_prompt() {
    let c = before_the_rewound_prompt();
    assert_eq!(c.gate("b.txt", false), "");
    let rewound = c.prompt_id(c.written + 1).unwrap();
    let through = c.through("\"id\":\"toolu_e2e_0006\"");
    let mut edit = c.about("pre_edit", "b.txt");
    edit["prompt_id"] = json!(rewound);
    edit["tool_use_id"] = json!("toolu_e2e_0006");
    let writer = append_later(c.path(), c.lines[c.written..through].to_vec());
    let reason = c.decide(&edit);
    writer.join().unwrap();
    assert_eq!(reason, given_after("rewind", "bee\n"));
    // A prompt whose lines are never written (the call's own line is
    // there): the hook decides on what the transcript holds.
    let d = before_the_rewound_prompt();
    let mut edit = d.about("pre_edit", "b.txt");
    edit["prompt_id"] = json!("prompt-never-written");
    edit["tool_use_id"] = json!("toolu_e2e_0005");
    assert_eq!(d.decide(&edit), "");
}

/// Fixture `rewind` written up to the rewound prompt (not included), with
/// the files as they were when the conversation ran (after the first turn
/// edited a.txt).
fn before_the_rewound_prompt() -> Conversation {
    let mut c = Conversation::new("rewind");
    c.f.env.write("a.txt", A_EDITED);
    c.f.env.write("b.txt", "bee\n");
    c.write_until(Some("[t-rewound]"));
    c
}

// A subagent's hooks name the conversation's transcript; its own is
// beside it. What the parent was shown (an @-mention) is not the
// subagent's, and the parent's compaction is not the subagent's: each
// keeps its own. (A subagent's transcript keeps no toolUseResult: its
// reads are known from its hooks.)
#[test]
fn a_subagent_keeps_its_own_transcript_and_compactions() {
    let mut c = Conversation::new("mention_compact");
    c.f.env.write("notes.txt", "alpha\nbeta\n");
    c.f.env.write("b.txt", "BEE\n");
    c.write_until(Some("toolu_e2e_0002"));
    let agent = "afc97544e4076e31f";
    let own = c
        .path()
        .parent()
        .unwrap()
        .join(c.f.sid)
        .join("subagents")
        .join(format!("agent-{agent}.jsonl"));
    std::fs::create_dir_all(own.parent().unwrap()).unwrap();
    let work = c.f.env.work.display().to_string();
    std::fs::write(
        &own,
        transcript("parallel_subagent").replace("@CWD@", &work),
    )
    .unwrap();
    let sub = |name: &str, rel: &str| {
        let mut p = c.about(name, rel);
        p["agent_id"] = json!(agent);
        p["agent_type"] = json!("general-purpose");
        p
    };
    let mut read = sub("post_read_whole", "b.txt");
    read["tool_response"]["file"] = json!({"filePath": c.f.env.path("b.txt"),
        "content": "BEE\n", "numLines": 2, "startLine": 1, "totalLines": 2});
    c.f.send(&read, &[]).expect(0, "");
    let deny = |p: &Value| -> String {
        let r = c.f.send(p, &[]);
        let v: Value = serde_json::from_str(&r.stdout).unwrap_or(Value::Null);
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(deny(&sub("pre_edit", "notes.txt")), NOT_READ);
    assert_eq!(deny(&sub("pre_edit", "b.txt")), "");
    assert_eq!(c.gate("notes.txt", false), "");
    c.f.hook("session_start_compact", &[]).expect(0, "");
    assert_eq!(
        c.gate("notes.txt", false),
        given_after("compaction", "alpha\nbeta\n")
    );
    assert_eq!(deny(&sub("pre_edit", "b.txt")), "");
}

// One message reads notes.txt and launches a fork: the fork's context
// ends with that message, without the Read's result, so it does not get
// the view (Claude Code's fork gets its parent's read state as it is, the
// sibling's read included); a view from an earlier message it does get.
#[test]
fn a_fork_gets_no_view_of_its_launch_messages_other_calls() {
    let mut c = fork_conversation();
    // The message's two calls are written before their hooks run.
    c.write_until(Some("\"tool_use_id\":\"toolu_e2e_0011\""));
    read_in_launch_message(&c);
    launch_fork(&c);
    assert_eq!(fork_gate(&c, "notes.txt"), NOT_READ);
    assert_eq!(fork_gate(&c, "a.txt"), "");
    assert_eq!(c.gate("notes.txt", false), "", "the launcher saw it");
    let fork = c.f.payload("subagent_start_fork")["agent_id"]
        .as_str()
        .unwrap()
        .to_string();
    let events = c.f.env.run(
        "fsview-session",
        &["events", "--sid", c.f.sid, "--agent", &fork, "--json"],
    );
    assert_eq!(
        events.json()[0]["detail"],
        "a copy of the main thread's views: 1 files, 1 views"
    );
    assert_eq!(
        launch_details(&c),
        ["not copied (the same message): toolu_e2e_0010"]
    );
}

/// Fixture `fork_same_message`, nothing of it written yet, after a Read of
/// a.txt in an earlier message (its hook ran; its call is `toolu_earlier`).
fn fork_conversation() -> Conversation {
    let c = Conversation::new("fork_same_message");
    c.f.env.write("notes.txt", "ALPHA\nbeta\n");
    c.f.env.write("a.txt", A_EDITED);
    let mut earlier = c.about("post_read_whole", "a.txt");
    earlier["tool_use_id"] = json!("toolu_earlier");
    earlier["tool_response"]["file"] = json!({"filePath": c.f.env.path("a.txt"),
        "content": A_EDITED, "numLines": 5, "startLine": 1, "totalLines": 5});
    c.f.send(&earlier, &[]).expect(0, "");
    c
}

/// The hook of the launch message's Read of notes.txt.
fn read_in_launch_message(c: &Conversation) {
    let mut read = c.about("post_read_whole", "notes.txt");
    read["tool_use_id"] = json!("toolu_e2e_0010");
    read["tool_response"]["file"] = json!({"filePath": c.f.env.path("notes.txt"),
        "content": "ALPHA\nbeta\n", "numLines": 3, "startLine": 1, "totalLines": 3});
    c.f.send(&read, &[]).expect(0, "");
}

/// The hook of the fork's launch (PreToolUse of Agent, call
/// `toolu_e2e_0011`).
fn launch_fork(c: &Conversation) {
    let mut launch = c.payload("pre_agent_fork");
    launch["tool_use_id"] = json!("toolu_e2e_0011");
    c.f.send(&launch, &[]).expect(0, "");
}

/// What the session's launch events say was not copied.
fn launch_details(c: &Conversation) -> Vec<Value> {
    let events =
        c.f.env
            .run("fsview-session", &["events", "--sid", c.f.sid, "--json"]);
    events
        .json()
        .into_iter()
        .filter(|e| e["action"] == "launch")
        .map(|e| e["detail"].clone())
        .collect()
}

/// The fork of fixture `fork_same_message` after its launch (whose hook
/// has run): the gate's answer to an Edit of `rel` by it, "" when it lets
/// it through.
fn fork_gate(c: &Conversation, rel: &str) -> String {
    c.f.hook("subagent_start_fork", &[]).expect(0, "");
    let mut p = c.about("pre_edit", rel);
    p["agent_id"] = c.f.payload("subagent_start_fork")["agent_id"].clone();
    p["agent_type"] = json!("fork");
    let r = c.f.send(&p, &[]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or(Value::Null);
    v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// [`fork_conversation`] up to its launch message (not written): the
/// transcript names the earlier Read (a line of its own), and the
/// message's Read of notes.txt has run.
fn before_the_launch_is_written() -> Conversation {
    let mut c = fork_conversation();
    append_lines(
        &c.path(),
        &[
            json!({"type": "assistant", "message": {"id": "msg_earlier", "content":
            [{"type": "tool_use", "id": "toolu_earlier", "name": "Read", "input": {}}]}})
            .to_string(),
        ],
    );
    c.write_until(Some("\"toolu_e2e_0010\""));
    read_in_launch_message(&c);
    c
}

// Claude Code writes its transcript a little after the fact: the launch's
// hook may run before the message that launches the fork is written. It
// waits for it (as a refusal does), then knows the message's other calls.
#[test]
fn a_forks_launch_waits_for_its_message_to_be_written() {
    let c = before_the_launch_is_written();
    let through = c.through("\"id\":\"toolu_e2e_0011\"");
    let writer = append_later(c.path(), c.lines[c.written..through].to_vec());
    launch_fork(&c);
    writer.join().unwrap();
    assert_eq!(fork_gate(&c, "notes.txt"), NOT_READ);
    assert_eq!(fork_gate(&c, "a.txt"), "");
    assert_eq!(
        launch_details(&c),
        ["not copied (the same message): toolu_e2e_0010"]
    );
}

// A launch the transcript never reaches (not written within the wait): which
// calls shared its message is not known, so the fork gets no view of a call
// the transcript does not name yet; an earlier one it does.
#[test]
fn a_forks_launch_never_written_copies_only_views_the_transcript_names() {
    let c = before_the_launch_is_written();
    launch_fork(&c);
    assert_eq!(fork_gate(&c, "notes.txt"), NOT_READ);
    assert_eq!(fork_gate(&c, "a.txt"), "");
    assert_eq!(c.gate("notes.txt", false), "", "the launcher saw it");
    assert_eq!(
        launch_details(&c),
        ["not copied (not in the transcript yet): toolu_e2e_0010"]
    );
}

// A transcript that cannot be read records nothing, says so once, and
// answers the hook as if there were none.
#[test]
fn an_unreadable_transcript_is_said_once() {
    let c = Conversation::new("rewind");
    c.f.env.write("a.txt", A_TXT);
    std::fs::create_dir_all(c.path()).unwrap();
    let said = c.prompt();
    assert_eq!(
        said,
        format!(
            "fsview-hook: the transcript {} is not a regular file\n",
            c.path().display()
        )
    );
    assert_eq!(c.prompt(), "");
    assert_eq!(c.gate("a.txt", false), NOT_READ);
}

/// The `wait` events of the session: (verdict, detail).
fn waits(c: &Conversation) -> Vec<(String, String)> {
    let events =
        c.f.env
            .run("fsview-session", &["events", "--sid", c.f.sid, "--json"]);
    events
        .json()
        .into_iter()
        .filter(|e| e["action"] == "wait")
        .map(|e| {
            (
                e["verdict"].as_str().unwrap().to_string(),
                e["detail"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

// A hook waits for the transcript only where the call's line will come:
// one that exists and names this conversation. A transcript not created
// yet (an agent that keeps none names one all the same), an empty one, or
// another conversation's is not waited for: the refusal comes at once,
// and the next hook reads what was written since.
#[test]
fn a_call_waits_only_for_a_transcript_that_names_its_conversation() {
    let through = Conversation::new("mention_compact").through("\"toolu_e2e_0002\"");
    for case in ["missing", "empty", "another conversation's"] {
        let mut c = Conversation::new("mention_compact");
        c.f.env.write("notes.txt", "alpha\nbeta\n");
        if case == "another conversation's" {
            for l in &mut c.lines {
                *l = l.replace(c.f.sid, "another-conversation");
            }
            c.write_until(Some("\"type\":\"file\""));
        }
        if case == "empty" {
            append_lines(&c.path(), &[]);
        }
        let mut edit = c.about("pre_edit", "notes.txt");
        edit["tool_use_id"] = json!("toolu_e2e_0002");
        // Written a second after the hook started: a hook that waited
        // (up to 3 s) would see the attachment and let the edit through.
        let writer = append_after(c.path(), c.lines[c.written..through].to_vec(), 1000);
        assert_eq!(c.decide(&edit), NOT_READ, "{case}");
        writer.join().unwrap();
        assert_eq!(c.decide(&edit), "", "{case}");
        assert_eq!(waits(&c), [], "{case}");
    }
}

// Every wait of a conversation counts: they add up to at most 10 s, and
// a wait that gave up is logged with what it waited for.
#[test]
fn a_conversations_waits_are_bounded_and_one_that_gave_up_is_logged() {
    let c = before_the_rewound_prompt();
    c.f.env.write("other.txt", "x\n");
    let mut edit = c.about("pre_edit", "other.txt");
    edit["tool_use_id"] = json!("toolu_never_1");
    assert_eq!(c.decide(&edit), NOT_READ);
    let w = waits(&c);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "gave up");
    let prefix = "call toolu_never_1: not in the transcript after 3";
    assert!(w[0].1.starts_with(prefix), "{}", w[0].1);
    assert!(
        w[0].1.contains(" ms; this conversation has waited 3"),
        "{}",
        w[0].1
    );
    assert!(w[0].1.ends_with(" ms of 10000"), "{}", w[0].1);
    // As if it had waited three times already: what is left (10 ms) is
    // waited once more, and then never.
    let db = rusqlite::Connection::open(&c.f.env.session).unwrap();
    let state: String = db
        .query_row(
            "SELECT state FROM transcripts WHERE sid = ?1",
            [c.f.sid],
            |r| r.get(0),
        )
        .unwrap();
    let mut state: Value = serde_json::from_str(&state).unwrap();
    state["waited_ms"] = json!(9990);
    db.execute(
        "UPDATE transcripts SET state = ?2 WHERE sid = ?1",
        rusqlite::params![c.f.sid, state.to_string()],
    )
    .unwrap();
    edit["tool_use_id"] = json!("toolu_never_2");
    assert_eq!(c.decide(&edit), NOT_READ);
    let w = waits(&c);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[1].1
            .starts_with("call toolu_never_2: not in the transcript after "),
        "{}",
        w[1].1
    );
    assert!(
        w[1].1
            .ends_with(" ms; this conversation has waited 10000 ms of 10000, and waits no more"),
        "{}",
        w[1].1
    );
    edit["tool_use_id"] = json!("toolu_never_3");
    assert_eq!(c.decide(&edit), NOT_READ);
    assert_eq!(waits(&c).len(), 2, "no wait any more");
}

// A FIFO at the transcript's path is never opened: its open would block
// the hook (the gate included) until a writer came. It is said once, and
// the hooks answer as if there were no transcript. (A writer keeps trying
// to open it, which succeeds only while a reader has it open: it unblocks
// a hook that did open it, and tells.)
#[test]
fn a_fifo_as_the_transcript_is_never_opened() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    let c = Conversation::new("rewind");
    c.f.env.write("a.txt", A_TXT);
    let path = c.path();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let opened = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (done, opened, path) = (done.clone(), opened.clone(), path.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let w = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&path);
                if w.is_ok() {
                    opened.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    assert_eq!(
        c.prompt(),
        format!(
            "fsview-hook: the transcript {} is not a regular file\n",
            path.display()
        )
    );
    let mut edit = c.about("pre_edit", "a.txt");
    edit["tool_use_id"] = json!("toolu_never_written");
    edit["prompt_id"] = json!("prompt-never-written");
    assert_eq!(c.decide(&edit), NOT_READ);
    assert_eq!(c.prompt(), "");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    writer.join().unwrap();
    assert!(
        !opened.load(std::sync::atomic::Ordering::SeqCst),
        "a hook opened the FIFO"
    );
}

// A transcript whose last line is never finished (here 2 GiB of it, sparse)
// is read in chunks, never whole: every hook runs within 256 MiB of
// address space. The lines before it are read; once its newline comes,
// the line (longer than any entry) is skipped and the lines after it read.
#[test]
fn a_transcript_without_a_newline_is_read_in_bounded_memory() {
    let mut c = before_the_rewound_prompt();
    let cut = std::fs::OpenOptions::new()
        .write(true)
        .open(c.path())
        .unwrap();
    let len = cut.metadata().unwrap().len();
    cut.set_len(len + (2 << 30)).unwrap();
    assert_eq!(limited(&c, &c.about("pre_edit", "b.txt")), "");
    assert_eq!(limited(&c, &c.about("pre_edit", "b.txt")), "");
    // The rewound prompt comes after the cut line's newline: the branch it
    // abandons is read, and b.txt's read with it.
    append_lines(&c.path(), &[String::new()]);
    c.write_until(Some("toolu_e2e_0006\",\"type\":\"tool_result"));
    assert_eq!(
        limited(&c, &c.about("pre_edit", "b.txt")),
        given_after("rewind", "bee\n")
    );
}

/// The gate's answer to `payload` (as [`Conversation::decide`]), from a
/// hook that may use at most 256 MiB of address space.
fn limited(c: &Conversation, payload: &Value) -> String {
    use std::os::unix::process::CommandExt;
    let mut cmd = c.f.env.cmd(crate::harness::bin("fsview-hook"));
    cmd.arg("claude");
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 256 << 20,
                rlim_max: 256 << 20,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &lim) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let r = crate::harness::output(cmd, Some(payload.to_string().as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "");
    if r.stdout.is_empty() {
        return String::new();
    }
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Fixture `rewind` whose abandoned turn reads b.txt with the shell
/// (`cat b.txt`), its hook run, written up to the rewound prompt.
fn a_shell_read_before_the_rewound_prompt() -> Conversation {
    let mut c = Conversation::new("rewind");
    for l in &mut c.lines {
        *l = l.replace(
            "\"id\":\"toolu_e2e_0005\",\"name\":\"Read\",\"input\":{\"file_path\":",
            "\"id\":\"toolu_e2e_0005\",\"name\":\"Bash\",\"input\":{\"command\":\"cat b.txt\",\"x\":",
        );
    }
    c.f.env.write("a.txt", A_EDITED);
    c.f.env.write("b.txt", "bee\n");
    c.write_until(Some("\"tool_use_id\":\"toolu_e2e_0005\""));
    let mut cat = c.payload("post_shell_cat");
    cat["tool_input"]["command"] = json!("cat b.txt");
    cat["tool_response"]["stdout"] = json!("bee");
    cat["tool_use_id"] = json!("toolu_e2e_0005");
    c.f.send(&cat, &[]).expect(0, "").stderr_is("");
    c.write_until(Some("[t-rewound]"));
    assert_eq!(c.gate("b.txt", true), "", "the shell read holds it");
    c
}

// A rewind past a shell read (`cat b.txt`) releases it as it does a Read:
// a Write of b.txt from memory on the new branch is refused (the refusal
// gives the file back), and a whole Read of it gets its text, not the
// notice that the conversation still holds it.
#[test]
fn a_rewind_releases_a_shell_read_of_the_abandoned_turn() {
    let mut c = a_shell_read_before_the_rewound_prompt();
    c.write_until(Some("toolu_e2e_0006\",\"type\":\"tool_result"));
    assert_eq!(c.gate("b.txt", true), given_after("rewind", "bee\n"));
    let mut c = a_shell_read_before_the_rewound_prompt();
    c.write_until(Some("toolu_e2e_0006\",\"type\":\"tool_result"));
    let mut read = c.about("post_read_whole", "b.txt");
    read["tool_response"]["file"] = json!({"filePath": c.f.env.path("b.txt"),
        "content": "bee\n", "numLines": 2, "startLine": 1, "totalLines": 2});
    c.f.send(&read, &[]).expect(0, "").stderr_is("");
}

// After a rewind, a local command (`/cost`) before the next prompt writes
// its caveat (following the message rewound to), its name and its output;
// the prompt follows those. The branch is seen at the caveat, and the
// turn it abandons released.
#[test]
fn a_local_command_after_a_rewind_still_releases_the_abandoned_turn() {
    const REWOUND_TO: &str = "f013b9f0-7fac-46b2-878c-4cbb89f087c4";
    let mut c = Conversation::new("rewind");
    let at = c
        .lines
        .iter()
        .position(|l| l.contains("[t-rewound]"))
        .unwrap();
    c.lines[at] = c.lines[at].replace(
        &format!("\"parentUuid\":\"{REWOUND_TO}\""),
        "\"parentUuid\":\"cmd-3\"",
    );
    assert!(c.lines[at].contains("cmd-3"));
    let entry = |uuid: &str, parent: &str, content: &str, meta: bool| {
        json!({"parentUuid": parent, "isSidechain": false, "type": "user",
            "message": {"role": "user", "content": content}, "isMeta": meta,
            "uuid": uuid, "timestamp": "2026-12-03T09:48:57.000Z",
            "userType": "external", "entrypoint": "sdk-cli",
            "cwd": c.f.env.work, "sessionId": c.f.sid, "version": "2.1.332"})
        .to_string()
    };
    let command = [
        entry("cmd-1", REWOUND_TO, "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.", true),
        entry("cmd-2", "cmd-1", "<command-name>/cost</command-name>\n<command-message>cost</command-message>\n<command-args></command-args>", false),
        entry("cmd-3", "cmd-2", "<local-command-stdout>Total cost: $0.0000</local-command-stdout>", false),
    ];
    c.lines.splice(at..at, command);
    c.f.env.write("a.txt", A_EDITED);
    c.f.env.write("b.txt", "bee\n");
    c.write_until(Some("cmd-1"));
    assert_eq!(c.gate("b.txt", false), "");
    c.write_until(Some("toolu_e2e_0006\",\"type\":\"tool_result"));
    assert_eq!(c.gate("b.txt", false), given_after("rewind", "bee\n"));
    assert_eq!(c.gate("a.txt", true), "");
}

// One fsview session shared by two conversations (`--sid`), each with its
// own transcript: each keeps its own cursor in it, so that the hooks of
// one do not make the other's transcript read again from its start (nor
// share their waits). Dropping the session drops them all.
#[test]
fn a_shared_session_keeps_a_cursor_per_conversation() {
    let mut c = Conversation::new("rewind");
    c.f.env.write("a.txt", A_EDITED);
    c.f.env.write("b.txt", "bee\n");
    c.write_until(Some("[t-rewound]"));
    let one = c.path();
    let two = one.with_file_name("sid-2.jsonl");
    let written: Vec<String> = c.lines[..c.written]
        .iter()
        .map(|l| l.replace("\"sid-1\"", "\"sid-2\""))
        .collect();
    append_lines(&two, &written);
    let prompt = |session: &str, path: &std::path::Path| {
        let mut p = c.payload("user_prompt_submit");
        p["session_id"] = json!(session);
        p["transcript_path"] = json!(path);
        c.f.send(&p, &["--sid", "shared"])
            .expect(0, "")
            .stderr_is("");
    };
    prompt("sid-1", &one);
    prompt("sid-2", &two);
    prompt("sid-1", &one);
    let cursors = || -> Vec<(String, String)> {
        let db = rusqlite::Connection::open(&c.f.env.session).unwrap();
        let mut q = db
            .prepare("SELECT sid, CAST(path AS TEXT) FROM transcripts ORDER BY sid")
            .unwrap();
        q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        cursors(),
        [
            ("shared\nsid-1".to_string(), one.display().to_string()),
            ("shared\nsid-2".to_string(), two.display().to_string()),
        ]
    );
    c.f.env
        .run("fsview-session", &["drop", "--sid", "shared"])
        .expect(
        0,
        "dropped \"shared\": 2 files, 2 views, 0 context parts, 0 instruction files, 2 events\n",
    );
    assert_eq!(cursors(), []);
}

/// A hand-written Claude Code conversation (the shapes of 2.1.332's
/// transcript and payloads), for what its fixtures do not hold.
struct Scripted {
    env: crate::harness::Env,
    transcript: PathBuf,
    sid: &'static str,
}

impl Scripted {
    fn new() -> Scripted {
        let env = crate::harness::Env::new();
        let transcript = env.root().join("t.jsonl");
        Scripted {
            env,
            transcript,
            sid: "11111111-1111-4111-8111-111111111111",
        }
    }

    /// Transcript entries, each filled in with the session id.
    fn write(&self, entries: &[Value]) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.transcript)
            .unwrap();
        for e in entries {
            let mut e = e.clone();
            e["sessionId"] = json!(self.sid);
            writeln!(f, "{e}").unwrap();
        }
    }

    fn hook(&self, mut payload: Value, args: &[&str]) -> crate::harness::Run {
        payload["session_id"] = json!(self.sid);
        payload["transcript_path"] = json!(self.transcript);
        payload["cwd"] = json!(self.env.work);
        let mut a = vec!["claude"];
        a.extend_from_slice(args);
        let r = self
            .env
            .run_stdin("fsview-hook", &a, payload.to_string().as_bytes());
        assert_eq!(r.code, 0, "{}", r.stderr);
        r
    }

    /// The model's Read of `rel`, whole, as call `id` of prompt `prompt`,
    /// its entries `u` (the call) and `u + 1` (the result) after `parent`.
    fn read(&self, rel: &str, id: &str, prompt: &str, parent: &str, u: u32) {
        let path = self.env.path(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let n = text.lines().count() + 1;
        let file = json!({"filePath": path, "content": text, "numLines": n, "startLine": 1, "totalLines": n});
        self.write(&[json!({"parentUuid": parent, "type": "assistant", "uuid": format!("u{u}"),
            "message": {"id": format!("m{u}"), "role": "assistant",
                        "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": path}}]}})]);
        self.hook(
            json!({"prompt_id": prompt, "hook_event_name": "PostToolUse", "tool_name": "Read",
                   "tool_input": {"file_path": path}, "tool_response": {"type": "text", "file": file},
                   "tool_use_id": id}),
            &[],
        );
        self.write(&[json!({"parentUuid": format!("u{u}"), "type": "user", "promptId": prompt,
            "uuid": format!("u{}", u + 1),
            "message": {"role": "user", "content": [{"tool_use_id": id, "type": "tool_result", "content": "(the lines)"}]},
            "toolUseResult": {"type": "text", "file": file}})]);
    }

    fn prompt(&self, prompt: &str, parent: &str, u: &str) -> crate::harness::Run {
        self.write(&[
            json!({"parentUuid": parent, "type": "user", "promptId": prompt, "uuid": u,
            "message": {"role": "user", "content": "go on"}}),
        ]);
        self.hook(
            json!({"prompt_id": prompt, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}),
            &[],
        )
    }

    fn answer(&self, parent: &str, u: &str) {
        self.write(&[json!({"parentUuid": parent, "type": "assistant", "uuid": u,
            "message": {"id": format!("m-{u}"), "role": "assistant", "content": [{"type": "text", "text": "ok"}]}})]);
    }

    /// The gate's answer to a Write of `rel` with `content`, as call `id`
    /// of prompt `prompt` after entry `parent`.
    fn write_file(&self, rel: &str, content: &str, id: &str, prompt: &str, parent: &str) -> String {
        let path = self.env.path(rel);
        let input = json!({"file_path": path, "content": content});
        self.write(&[json!({"parentUuid": parent, "type": "assistant", "uuid": format!("w-{id}"),
            "message": {"id": format!("m-{id}"), "role": "assistant",
                        "content": [{"type": "tool_use", "id": id, "name": "Write", "input": input}]}})]);
        self.hook(
            json!({"prompt_id": prompt, "hook_event_name": "PreToolUse", "tool_name": "Write",
                   "tool_input": input, "tool_use_id": id}),
            &["--gate"],
        )
        .stdout
    }
}

// A change told whole as a diff moves the view to the new text; that holds
// only while both the telling and the read it was a diff of are in the
// conversation. A rewind past the prompt that told it, or a cut of the read
// (tool_results_cut), leaves the model the old text or a bare diff: a
// Write from either is refused, the file given back.
#[test]
fn a_change_told_holds_only_with_what_told_it_and_what_it_was_a_diff_of() {
    // Told at a prompt, then rewound past it.
    let c = Scripted::new();
    c.env.write("a.txt", "one\ntwo\nthree\n");
    c.write(&[
        json!({"parentUuid": null, "type": "user", "promptId": "p1", "uuid": "u1",
        "message": {"role": "user", "content": "read a.txt"}}),
    ]);
    c.read("a.txt", "toolu_1", "p1", "u1", 2);
    c.answer("u3", "u4");
    c.env.write("a.txt", "ONE\ntwo\nthree\n");
    let told = c.prompt("p2", "u4", "u5");
    assert!(told.stdout.contains("+ONE"), "{}", told.stdout);
    c.answer("u5", "u6");
    // Unrewound, the told text holds: a Write from it goes through.
    assert_eq!(
        c.write_file("a.txt", "ONE\ntwo\nthree\nfour\n", "toolu_w0", "p2", "u6"),
        ""
    );
    c.prompt("p3", "u4", "u7");
    let got = c.write_file("a.txt", "one\ntwo\nthree\nfour\n", "toolu_w1", "p3", "u7");
    assert!(
        got.contains("\"permissionDecision\":\"deny\"")
            && got.contains("(rewind)")
            && got.contains("1\\tONE"),
        "{got}"
    );

    // Told at a prompt, then the read it was a diff of cut.
    let c = Scripted::new();
    c.env.write("a.txt", lines(40, |i| format!("line {i}")));
    c.write(&[
        json!({"parentUuid": null, "type": "user", "promptId": "p1", "uuid": "u1",
        "message": {"role": "user", "content": "read a.txt"}}),
    ]);
    c.read("a.txt", "toolu_1", "p1", "u1", 2);
    c.answer("u3", "u4");
    c.env.write(
        "a.txt",
        lines(40, |i| match i {
            20 => "LINE TWENTY".to_string(),
            i => format!("line {i}"),
        }),
    );
    let told = c.prompt("p2", "u4", "u5");
    assert!(told.stdout.contains("+LINE TWENTY"), "{}", told.stdout);
    c.answer("u5", "u6");
    c.write(&[
        json!({"parentUuid": "u6", "type": "attachment", "uuid": "u7",
        "attachment": {"type": "tool_results_cut", "callIds": ["toolu_1"]}}),
    ]);
    c.prompt("p3", "u7", "u8");
    let got = c.write_file("a.txt", "from memory\n", "toolu_w1", "p3", "u8");
    assert!(
        got.contains("\"permissionDecision\":\"deny\"") && got.contains("(compaction)"),
        "{got}"
    );
}

// A nested CLAUDE.md Claude Code attaches mid-conversation (InstructionsLoaded,
// nested_traversal) is a message of that prompt's turn, not fixed context:
// a rewind past the turn drops it. Attached again later, it is held again.
#[test]
fn a_nested_instruction_file_goes_with_the_turn_that_attached_it() {
    let c = Scripted::new();
    c.env.write("CLAUDE.md", "Root.\n");
    c.env.write("sub/CLAUDE.md", "Use tabs.\n");
    c.env.write("sub/x.txt", "x\n");
    c.write(&[
        json!({"parentUuid": null, "type": "user", "promptId": "p1", "uuid": "u1",
        "message": {"role": "user", "content": "hello"}}),
    ]);
    c.answer("u1", "u2");
    let loaded = |prompt: &str| {
        c.hook(
            json!({"prompt_id": prompt, "hook_event_name": "InstructionsLoaded",
                   "file_path": c.env.path("sub/CLAUDE.md"), "memory_type": "Project",
                   "load_reason": "nested_traversal", "trigger_file_path": c.env.path("sub/x.txt")}),
            &[],
        )
    };
    c.prompt("p2", "u2", "u3");
    loaded("p2");
    c.answer("u3", "u4");
    assert_eq!(
        c.write_file("sub/CLAUDE.md", "Use spaces.\n", "toolu_w0", "p2", "u4"),
        ""
    );
    // Rewound to before p2: the prompt's hook reads the rewind.
    c.prompt("p3", "u2", "u5");
    let check = || {
        c.env.run(
            "fsview-check-edit",
            &["--sid", c.sid, "--write", "sub/CLAUDE.md"],
        )
    };
    check().expect(
        1,
        "sub/CLAUDE.md: not_read: File has not been read yet. Read it first before writing to it. (What it was shown of it is no longer in the conversation: rewind.)\n",
    );
    // Attached again in this turn: held again.
    loaded("p3");
    check().expect(0, "sub/CLAUDE.md: ok\n");
}
