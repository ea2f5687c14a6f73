//! fsview-hook claude, fed the payloads the real Claude Code 2.1.332 sent
//! (tests/fixtures/hooks/claude-2.1.332, captured by `scripts/e2e-claude
//! --save-fixtures`), answered with exact stdout JSON and exit codes. The
//! files the payloads talk about are written as they were at capture time,
//! or changed on purpose.

use serde_json::{json, Value};

use crate::harness::{self, Env, Run};
use crate::hook_fixtures::given_modified;

const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

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
        "pre_edit",
        "pre_write_update",
        "pre_write_create",
        "pre_notebook_edit",
        "post_read_whole",
        "post_read_range",
        "post_read_token_cap",
        "post_read_crlf",
        "post_read_empty",
        "post_read_notebook",
        "post_edit",
        "post_write_create",
        "post_write_update",
        "post_notebook_edit",
        "session_start_startup",
        "session_start_resume",
        "session_start_compact",
        "user_prompt_submit",
        "instructions_loaded_session_start",
        "instructions_loaded_nested_traversal",
        "instructions_loaded_path_glob_match"
    )
}

/// The files as they were when the fixtures were captured.
const A_TXT: &str = "one\ntwo\nthree\n";

fn big_txt() -> String {
    (1..=2501)
        .map(|i| format!("line {i} of a file that is over the token cap\n"))
        .collect()
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

    /// A fixture with its placeholders filled: the work tree, home and
    /// this agent's session id.
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

    fn hook(&self, name: &str, args: &[&str]) -> Run {
        self.send(&self.payload(name), args)
    }

    fn send(&self, payload: &Value, args: &[&str]) -> Run {
        self.raw(payload.to_string().as_bytes(), args)
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

    /// The one view of `rel`: (kind, source, offset, lines, fresh).
    fn view(&self, rel: &str) -> (String, String, u64, u64, bool) {
        let r = self
            .env
            .run("fsview-session", &["show", "--sid", self.sid, "--json"]);
        let v: Vec<Value> = r.json().into_iter().filter(|v| v["path"] == rel).collect();
        assert_eq!(v.len(), 1, "views of {rel}: {}", r.stdout);
        let v = &v[0];
        (
            v["kind"].as_str().unwrap().to_string(),
            v["source"].as_str().unwrap().to_string(),
            v["offset"].as_u64().unwrap(),
            v["lines"].as_u64().unwrap(),
            v["fresh"].as_bool().unwrap(),
        )
    }

    fn events(&self) -> Vec<(String, String, String)> {
        self.env
            .run("fsview-session", &["events", "--sid", self.sid, "--json"])
            .json()
            .iter()
            .map(|e| {
                let s = |k: &str| e[k].as_str().unwrap_or("-").to_string();
                (s("action"), s("verdict"), s("detail"))
            })
            .collect()
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

/// A reminder as `event`'s context: the header, then `files` (each file's
/// line and its diff or text).
fn reminded(event: &str, files: &str) -> String {
    context(
        event,
        &format!("These files changed since you last saw them:\n\n{files}"),
    )
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

fn partial(lines: &str) -> String {
    format!(
        "File has only been read in part ({lines}). Read the whole file before writing all of it."
    )
}

#[test]
fn edit_before_any_read_is_denied_with_claude_codes_words() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("pre_edit", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    // No session file is created just to answer a check.
    assert!(!a.env.session.exists());
}

#[test]
fn a_whole_read_is_a_full_view_and_lets_edits_through_without_an_opinion() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "").stderr_is("");
    // numLines 4 of 4 is the three lines and the empty one after the last
    // newline: every line, a full view.
    assert_eq!(a.view("a.txt"), ("full".into(), "read".into(), 1, 3, true));
    // No opinion: Claude Code's own permission rules still decide.
    a.hook("pre_edit", &[]).expect(0, "").stderr_is("");
    a.hook("pre_edit", &["--allow"])
        .expect(0, &allow("The file may be changed."));
    a.hook("pre_write_update", &[]).expect(0, "");
}

/// Claude Code shows CRLF as LF and reports it so: the same text.
#[test]
fn a_crlf_file_read_whole_is_a_full_view() {
    let a = Agent::new();
    a.env.write("crlf.txt", "one\r\ntwo\r\n");
    a.hook("post_read_crlf", &[]).expect(0, "");
    assert_eq!(
        a.view("crlf.txt"),
        ("full".into(), "read".into(), 1, 2, true)
    );
    // A byte-order mark Claude Code dropped is no difference either.
    a.env.write("crlf.txt", "\u{feff}one\r\ntwo\r\n");
    a.hook("post_read_crlf", &[]).expect(0, "");
    assert!(a.view("crlf.txt").4);
}

#[test]
fn an_empty_file_read_is_a_full_view() {
    let a = Agent::new();
    a.env.write("empty.txt", "");
    a.hook("post_read_empty", &[]).expect(0, "");
    assert_eq!(
        a.view("empty.txt"),
        ("full".into(), "read".into(), 1, 0, true)
    );
}

#[test]
fn a_range_read_records_the_lines_shown_and_a_write_is_denied() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_range", &[]).expect(0, "");
    assert_eq!(a.view("a.txt"), ("range".into(), "read".into(), 2, 1, true));
    a.hook("pre_edit", &[]).expect(0, "");
    a.hook("pre_write_update", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
}

/// Over Claude Code's token cap a whole-file Read shows a first page: the
/// view is of exactly those lines (not the 2,000 the hook once assumed).
#[test]
fn a_token_capped_read_is_a_start_view_of_the_page_shown() {
    let a = Agent::new();
    a.env.write("big.txt", big_txt());
    a.hook("post_read_token_cap", &[]).expect(0, "");
    assert_eq!(
        a.view("big.txt"),
        ("start".into(), "read".into(), 1, 1787, true)
    );
    let mut w = a.payload("pre_write_update");
    w["tool_input"]["file_path"] = json!(a.env.path("big.txt"));
    a.send(&w, &[])
        .expect(0, &deny(&partial("lines 1-1787 of 2501")));
}

/// A 2,500-line file Claude Code read whole is a full view: no fixed
/// 2,000-line assumption refuses its Write any more.
#[test]
fn a_long_file_read_whole_is_a_full_view() {
    let a = Agent::new();
    let body: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    a.env.write("a.txt", &body);
    let mut p = a.payload("post_read_whole");
    p["tool_response"]["file"]["content"] = json!(body);
    p["tool_response"]["file"]["numLines"] = json!(2501);
    p["tool_response"]["file"]["totalLines"] = json!(2501);
    a.send(&p, &[]).expect(0, "");
    assert_eq!(
        a.view("a.txt"),
        ("full".into(), "read".into(), 1, 2500, true)
    );
    a.hook("pre_write_update", &[]).expect(0, "");
}

/// The file changed after the Read tool ran and before its hook (an
/// autosave, a formatter hook beside ours; here a same-size change): the
/// view is of what was shown, and the change is reported, never taken as
/// seen.
#[test]
fn a_change_before_the_read_hook_is_reported_not_taken_as_seen() {
    let a = Agent::new();
    a.env.write("a.txt", "one\nTWO\nthree\n");
    let reminder = "\
These files changed since you last saw them:

a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
";
    // Told at once, after the read, whole: the model holds what it was
    // shown and the change from it, so the view moves to the disk's text.
    a.hook("post_read_whole", &[])
        .expect(0, &context("PostToolUse", reminder))
        .stderr_is("");
    assert_eq!(a.view("a.txt"), ("full".into(), "read".into(), 1, 3, true));
    a.hook("pre_edit", &[]).expect(0, "");
    a.hook("user_prompt_submit", &[]).expect(0, "");
    assert_eq!(
        a.events()[0],
        ("read".into(), "changed".into(), "full".into())
    );
    // The shown line of a range read changed: the same.
    let b = Agent::new();
    b.env.write("a.txt", "one\nTwo\nthree\n");
    // Told at once; a range is not the whole text, so the view stays.
    b.hook("post_read_range", &[]).expect(
        0,
        &reminded(
            "PostToolUse",
            "\
a.txt: modified (content)
--- a.txt (as viewed, line 2)
+++ a.txt (now)
@@ -2 +2 @@
-two
\\ No newline at end of file
+Two
",
        ),
    );
    // The refusal gives the small file back whole (issue 25).
    b.hook("pre_edit", &[])
        .expect(0, &deny(&given_modified("one\nTwo\nthree\n")));
    b.hook("pre_edit", &[]).expect(0, "");
    // What the tool showed is on disk again: fresh.
    b.env.write("a.txt", A_TXT);
    b.hook("post_read_range", &[]).expect(0, "");
    b.hook("pre_edit", &[]).expect(0, "");
}

/// Another version's payload without some fields: only what is certain.
#[test]
fn missing_fields_fall_back_to_what_is_certain() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    // No totalLines: the read may not have been the whole file.
    let mut p = a.payload("post_read_whole");
    p["tool_response"]["file"]
        .as_object_mut()
        .unwrap()
        .remove("totalLines");
    a.send(&p, &[]).expect(0, "");
    assert_eq!(a.view("a.txt").0, "start");
    a.hook("pre_write_update", &[])
        .expect(0, &deny(&partial("lines 1-3 of 3")));
    // No content: what was shown is unknown; nothing is recorded.
    let b = Agent::new();
    b.env.write("a.txt", A_TXT);
    let mut p = b.payload("post_read_whole");
    p["tool_response"]["file"]
        .as_object_mut()
        .unwrap()
        .remove("content");
    b.send(&p, &[]).expect(0, "").stderr_is(
        "fsview-hook: the Read response has no file.content, so what was shown is unknown and nothing was recorded\n",
    );
    b.hook("pre_edit", &[]).expect(0, &deny(NOT_READ));
    // An Edit whose response does not say what the file now holds.
    let mut e = b.payload("post_edit");
    e["tool_response"]["originalFile"] = Value::Null;
    b.send(&e, &[]).expect(0, "").stderr_is(
        "fsview-hook: the Edit response does not say what the file now holds (no originalFile, or a patch that does not apply), so nothing was recorded\n",
    );
}

#[test]
fn an_edit_after_a_whole_read_is_a_full_view_of_the_new_text() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    a.env.write("a.txt", "one\nTWO\nthree\n");
    a.hook("post_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("a.txt"), ("full".into(), "write".into(), 1, 3, true));
    a.hook("pre_write_update", &[]).expect(0, "");
    // A formatter rewrote it before the hook: what the agent believes is
    // recorded, and the rewrite is told at once, whole: the view moves to
    // the formatted text, and the next edit needs no re-read.
    a.env.write("a.txt", "one\nTWO\nthree\n\n");
    let told = "\
These files changed since you last saw them:

a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,3 +1,4 @@
 one
 TWO
 three
+
";
    a.hook("post_edit", &[])
        .expect(0, &context("PostToolUse", told));
    a.hook("pre_edit", &[]).expect(0, "");
    assert_eq!(a.view("a.txt"), ("full".into(), "read".into(), 1, 4, true));
    assert_eq!(
        a.events().last().unwrap(),
        &("check".into(), "ok".into(), "edit".into())
    );
}

/// The user altered the proposed Edit before accepting it
/// (`userModified`): the file holds the user's text, which the model never
/// saw. The Edit records nothing; what changed since the model's read is
/// told right after the call, whole, so the model then holds the user's
/// text (issue 25) and its next edit needs no read.
#[test]
fn an_edit_the_user_altered_is_no_view_of_the_users_text() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    a.env
        .write("a.txt", "one\nTwo, as the user wrote it\nthree\n");
    let mut edit = a.payload("post_edit");
    edit["tool_response"]["userModified"] = json!(true);
    let told = "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+Two, as the user wrote it\n three\n";
    let want =
        json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": told}});
    a.send(&edit, &[])
        .expect(0, &format!("{want}\n"))
        .stderr_is("");
    assert_eq!(a.view("a.txt").0, "full");
    a.hook("pre_edit", &[]).expect(0, "");
}

/// An Edit shows the agent the lines it changed, not the file: after a
/// partial read, a whole-file Write still needs a whole read.
#[test]
fn an_edit_after_a_partial_read_knows_only_the_changed_lines() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_range", &[]).expect(0, "");
    a.env.write("a.txt", "one\nTWO\nthree\n");
    a.hook("post_edit", &[]).expect(0, "");
    assert_eq!(
        a.view("a.txt"),
        ("range".into(), "write".into(), 2, 1, true)
    );
    a.hook("pre_edit", &[]).expect(0, "");
    a.hook("pre_write_update", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
}

#[test]
fn a_write_is_a_full_view_held_against_the_disk() {
    let a = Agent::new();
    a.hook("pre_write_create", &[]).expect(0, "");
    a.hook("pre_write_create", &["--allow"])
        .expect(0, &allow("File does not exist; creating it needs no read."));
    a.env.write("b.txt", "bee\n");
    a.hook("post_write_create", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("b.txt"), ("full".into(), "write".into(), 1, 1, true));
    // Changed on disk since: denied, with the whole change, so a retry
    // goes through.
    a.env.write("b.txt", "bee\nwasp\n");
    let mut e = a.payload("pre_edit");
    e["tool_input"]["file_path"] = json!(a.env.path("b.txt"));
    let r = a.send(&e, &[]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(reason.ends_with("@@ -1 +1,2 @@\n bee\n+wasp\n"), "{reason}");
    a.send(&e, &[]).expect(0, "");
    // Line endings the tool chose are not a rewrite.
    a.env.write("a.txt", "one\r\nTWO\r\nthree\r\nfour\r\n");
    a.hook("post_write_update", &[]).expect(0, "");
    a.hook("pre_edit", &[]).expect(0, "");
}

/// A notebook is shown as its cells, not as its JSON (outputs, metadata):
/// the cells may be changed by id (NotebookEdit), the file not written
/// whole from them (it would drop what was never shown).
#[test]
fn a_notebook_read_lets_its_cells_be_edited_but_not_the_file_be_written() {
    let a = Agent::new();
    let edit = a.payload("post_notebook_edit");
    let original = edit["tool_response"]["original_file"].as_str().unwrap();
    let updated = edit["tool_response"]["updated_file"].as_str().unwrap();
    a.env.write("nb.ipynb", original);
    a.hook("pre_notebook_edit", &[]).expect(0, &deny(NOT_READ));
    a.hook("post_read_notebook", &[]).expect(0, "");
    assert_eq!(a.view("nb.ipynb").0, "processed");
    a.hook("pre_notebook_edit", &[]).expect(0, "");
    let mut write = a.payload("pre_write_update");
    write["tool_input"]["file_path"] = json!(a.env.path("nb.ipynb"));
    a.send(&write, &[]).expect(0, &deny(NOTEBOOK));
    let mut edit_json = a.payload("pre_edit");
    edit_json["tool_input"]["file_path"] = json!(a.env.path("nb.ipynb"));
    a.send(&edit_json, &[]).expect(0, &deny(NOTEBOOK));
    a.env.write("nb.ipynb", updated);
    a.hook("post_notebook_edit", &[]).expect(0, "");
    assert_eq!(
        a.view("nb.ipynb"),
        ("processed".into(), "read".into(), 1, 15, true)
    );
    a.hook("pre_notebook_edit", &[]).expect(0, "");
    a.send(&write, &[]).expect(0, &deny(NOTEBOOK));
    // A cell changed before the read's hook: not the cells shown.
    let b = Agent::new();
    b.env.write("nb.ipynb", updated);
    let r = b.hook("post_read_notebook", &[]);
    assert!(
        r.stdout.contains("nb.ipynb: modified (content)"),
        "told at once: {}",
        r.stdout
    );
    // A processed view (the cells) does not move with a told diff: the
    // file is refused until read again.
    b.hook("pre_notebook_edit", &[]).expect(0, &deny(MODIFIED));
}

const NOTEBOOK: &str = "File has only been shown processed (as its tool rendered it, such as a notebook's cells), not as it is on disk. Change only what was shown (a notebook cell by cell), or read all of its text before writing to it.";

#[test]
fn user_prompt_submit_reminds_of_changes_once_and_is_silent_without() {
    let a = Agent::new();
    // No session file yet: nothing to remind of, and none is created.
    a.hook("user_prompt_submit", &[])
        .expect(0, "")
        .stderr_is("");
    assert!(!a.env.session.exists());
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    a.hook("user_prompt_submit", &[])
        .expect(0, "")
        .stderr_is("");
    a.env.write("a.txt", "one\ntwo\nthree\nfour\n");
    let reminder = "\
These files changed since you last saw them:

a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,3 +1,4 @@
 one
 two
 three
+four
";
    a.hook("user_prompt_submit", &[])
        .expect(0, &context("UserPromptSubmit", reminder))
        .stderr_is("");
    // Told once: the next prompt does not repeat it. The whole change was
    // told from the whole text the model held: it holds the new text, so
    // its view moved there and an edit needs no re-read.
    a.hook("user_prompt_submit", &[]).expect(0, "");
    assert_eq!(a.view("a.txt"), ("full".into(), "read".into(), 1, 4, true));
    a.hook("pre_edit", &[]).expect(0, "");
    // Back to the old text: told again, and the view follows again.
    a.env.write("a.txt", A_TXT);
    a.hook("user_prompt_submit", &[])
        .expect(
            0,
            &reminded(
                "UserPromptSubmit",
                "\
a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,4 +1,3 @@
 one
 two
 three
-four
",
            ),
        )
        .stderr_is("");
    a.hook("pre_edit", &[]).expect(0, "");
    let told: Vec<_> = a.events().into_iter().filter(|e| e.0 == "told").collect();
    assert_eq!(
        told,
        [
            ("told".into(), "content".into(), "a diff of 7 lines".into()),
            ("told".into(), "content".into(), "a diff of 7 lines".into())
        ]
    );
}

/// A change told only in part (the diff cut by --diff-lines) leaves the
/// view stale: the model must read the file again, or be given it back.
#[test]
fn a_change_told_in_part_leaves_the_view_stale() {
    let a = Agent::new();
    let body: String = (1..=60).map(|i| format!("{i}\n")).collect();
    a.env.write("a.txt", &body);
    let mut read = a.payload("post_read_whole");
    read["tool_response"]["file"]["content"] = json!(body);
    read["tool_response"]["file"]["numLines"] = json!(61);
    read["tool_response"]["file"]["totalLines"] = json!(61);
    a.send(&read, &[]).expect(0, "");
    let changed = body.replace("\n30\n", "\nthirty\n");
    a.env.write("a.txt", &changed);
    // 21 lines of diff cut to 4: shorter than the file's 60 lines, so told
    // as a diff, in part.
    a.hook("user_prompt_submit", &["--diff-lines", "4"]).expect(
        0,
        &reminded(
            "UserPromptSubmit",
            "\
a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -22,17 +22,17 @@
 22
[17 lines truncated]
",
        ),
    );
    // The refusal carries no change it cannot carry whole: it gives the
    // small file back whole instead (issue 25), and the retry passes; with
    // --give-back off, the model must read it again.
    a.hook("pre_edit", &["--diff-lines", "4", "--give-back", "off"])
        .expect(0, &deny(MODIFIED));
    a.hook("pre_edit", &["--diff-lines", "4"])
        .expect(0, &deny(&given_modified(&changed)));
    a.hook("pre_edit", &[]).expect(0, "");
    // A file too long to give back (over 2,000 lines) must be read again.
    let long: String = (1..=2001).map(|i| format!("{i}\n")).collect();
    a.env.write("a.txt", &long);
    let mut read = a.payload("post_read_whole");
    read["tool_response"]["file"]["content"] = json!(long);
    read["tool_response"]["file"]["numLines"] = json!(2002);
    read["tool_response"]["file"]["totalLines"] = json!(2002);
    a.send(&read, &[]).expect(0, "");
    a.env.write("a.txt", long.replace("7\n", "seven\n"));
    let told = a.hook("user_prompt_submit", &["--diff-lines", "4"]);
    assert!(told.stdout.contains("lines truncated]"), "{}", told.stdout);
    a.hook("pre_edit", &["--diff-lines", "4"])
        .expect(0, &deny(MODIFIED));
}

/// A rewrite whose diff the caps would cut, and whose text is shorter than
/// that diff, is told by its whole text: the model holds it, the view
/// moves, the edit needs no read (issue 25). --give-back off tells it in
/// part, as before.
#[test]
fn a_rewrite_is_told_by_its_whole_text() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    a.env.write("a.txt", "1\n2\n3\n4\n5\n6\n");
    a.hook("user_prompt_submit", &["--diff-lines", "4"]).expect(
        0,
        &reminded(
            "UserPromptSubmit",
            "\
a.txt: modified (content): rewritten: its whole text now (6 lines), numbered as a read shows it
1\t1
2\t2
3\t3
4\t4
5\t5
6\t6
",
        ),
    );
    a.hook("pre_edit", &[]).expect(0, "");
    a.hook("user_prompt_submit", &[]).expect(0, "");
    let told: Vec<_> = a.events().into_iter().filter(|e| e.0 == "told").collect();
    assert_eq!(
        told,
        [(
            "told".into(),
            "content".into(),
            "its whole text, 6 lines".into()
        )]
    );
    let b = Agent::new();
    b.env.write("a.txt", A_TXT);
    b.hook("post_read_whole", &[]).expect(0, "");
    b.env.write("a.txt", "1\n2\n3\n4\n5\n6\n");
    b.hook(
        "user_prompt_submit",
        &["--diff-lines", "4", "--give-back", "off"],
    )
    .expect(
        0,
        &reminded(
            "UserPromptSubmit",
            "\
a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,3 +1,6 @@
-one
[8 lines truncated]
",
        ),
    );
    b.hook("pre_edit", &["--give-back", "off"])
        .expect(0, &deny(MODIFIED));
}

/// A change the model was not told of yet: the refusal carries the whole
/// change and moves the view, so the retry goes through without a re-read.
#[test]
fn a_refusal_that_carries_the_whole_change_lets_the_retry_through() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    a.env.write("a.txt", "one\n2\nthree\n");
    let told = "File has been modified since read, either by the user or by a linter. The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).

These files changed since you last saw them:

a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,3 +1,3 @@
 one
-two
+2
 three
";
    a.hook("pre_edit", &[]).expect(0, &deny(told)).stderr_is("");
    a.hook("pre_edit", &[]).expect(0, "");
    // Told: the next prompt does not tell it again.
    a.hook("user_prompt_submit", &[]).expect(0, "");
    // A rewrite too long for --diff-lines is carried by its whole text.
    a.env.write("a.txt", "x\ny\nz\nw\n");
    let rewritten = format!("{}\n\nThese files changed since you last saw them:\n\na.txt: modified (content): rewritten: its whole text now (4 lines), numbered as a read shows it\n1\tx\n2\ty\n3\tz\n4\tw\n", told.lines().next().unwrap());
    a.hook("pre_edit", &["--diff-lines", "3"])
        .expect(0, &deny(&rewritten));
    a.hook("pre_edit", &[]).expect(0, "");
}

/// After any tool call, what changed meanwhile is told at once, so the
/// model knows before its next step.
#[test]
fn after_any_tool_what_changed_meanwhile_is_told() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    let mut bash = a.payload("post_read_whole");
    bash["tool_name"] = "Grep".into();
    bash["tool_input"] = json!({"pattern": "x"});
    bash["tool_response"] = json!({"mode": "files_with_matches", "filenames": []});
    a.send(&bash, &[]).expect(0, "").stderr_is("");
    a.env.write("a.txt", "one\ntwo\n");
    a.send(&bash, &[])
        .expect(
            0,
            &reminded(
                "PostToolUse",
                "\
a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,3 +1,2 @@
 one
 two
-three
",
            ),
        )
        .stderr_is("");
    a.send(&bash, &[]).expect(0, "");
    a.hook("pre_edit", &[]).expect(0, "");
}

/// A whole re-read of the text the conversation holds, unchanged, is
/// answered with a notice in Read's own output shape, and the view is not
/// recorded again: by default (`auto`: fsview follows Claude Code's
/// compactions and rewinds) and with `on`. Off, the read goes through as
/// it is.
#[test]
fn an_unchanged_reread_is_answered_short_when_asked() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    for _ in 0..2 {
        a.hook("post_read_whole", &["--short-reads", "off"])
            .expect(0, "");
    }
    let path = a.env.work.join("a.txt").display().to_string();
    let notice = "[fsview] a.txt is unchanged (3 lines) since you were last shown it: use that text; to reread, pass an offset or limit.".to_string();
    let short = line(json!({"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "updatedToolOutput": {"type": "text", "file": {
            "filePath": path, "content": notice, "numLines": 1, "startLine": 1, "totalLines": 3,
        }},
    }}));
    a.hook("post_read_whole", &[])
        .expect(0, &short)
        .stderr_is("");
    a.hook("post_read_whole", &["--short-reads", "on"])
        .expect(0, &short)
        .stderr_is("");
    let shorts = a
        .events()
        .into_iter()
        .filter(|e| e.0 == "read" && e.1 == "short")
        .count();
    assert_eq!(shorts, 2);
    // A range read is never answered short.
    a.hook("post_read_range", &["--short-reads", "on"])
        .expect(0, "");
    // Changed: the read shows the new text (the payload reports it).
    a.env.write("a.txt", "one\n");
    let mut changed = a.payload("post_read_whole");
    changed["tool_response"]["file"]["content"] = "one\n".into();
    changed["tool_response"]["file"]["numLines"] = 2.into();
    changed["tool_response"]["file"]["totalLines"] = 2.into();
    a.send(&changed, &["--short-reads", "on"]).expect(0, "");
    // After the model's own edit, the text it left is what it holds.
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    a.env.write("a.txt", "one\nTWO\nthree\n");
    a.hook("post_edit", &[]).expect(0, "");
    let mut after = a.payload("post_read_whole");
    after["tool_response"]["file"]["content"] = "one\nTWO\nthree\n".into();
    let r = a.send(&after, &["--short-reads", "on"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let content = v["hookSpecificOutput"]["updatedToolOutput"]["file"]["content"]
        .as_str()
        .unwrap();
    assert_eq!(
        content,
        format!("[fsview] a.txt is unchanged (3 lines) since your own last change to it: use that text; to reread, pass an offset or limit.")
    );
    assert!(content.split_whitespace().count() <= 25, "{content}");
}

// One fsview session shared by two conversations (`--sid`): the second
// conversation's first whole read of a file the first one read gets the
// file's text, not the notice (it never held the first one's read); its
// own re-read then gets the notice. The view remembers the conversation
// that last read it: the first one's re-read after that gets the text.
#[test]
fn a_shared_session_answers_short_only_a_reread_by_the_same_conversation() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    let read_by = |conversation: &str| {
        let mut p = a.payload("post_read_whole");
        p["session_id"] = json!(conversation);
        a.send(&p, &["--sid", "shared"])
    };
    let path = a.env.work.join("a.txt").display().to_string();
    let notice = "[fsview] a.txt is unchanged (3 lines) since you were last shown it: use that text; to reread, pass an offset or limit.".to_string();
    let short = line(json!({"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "updatedToolOutput": {"type": "text", "file": {
            "filePath": path, "content": notice, "numLines": 1, "startLine": 1, "totalLines": 3,
        }},
    }}));
    read_by("conversation-1").expect(0, "").stderr_is("");
    read_by("conversation-2").expect(0, "").stderr_is("");
    read_by("conversation-2").expect(0, &short).stderr_is("");
    read_by("conversation-1").expect(0, "").stderr_is("");
    read_by("conversation-1").expect(0, &short).stderr_is("");
    let reads: Vec<String> = a
        .env
        .run("fsview-session", &["events", "--sid", "shared", "--json"])
        .json()
        .iter()
        .filter(|e| e["action"] == "read")
        .map(|e| e["verdict"].as_str().unwrap_or("-").to_string())
        .collect();
    assert_eq!(reads, ["-", "-", "short", "-", "short"]);
}

/// Claude Code already gives the model the CLAUDE.md files, git status and
/// the date: SessionStart records what was injected and adds only files of
/// other names (--also), in plain text.
#[test]
fn session_start_records_the_instruction_files_and_adds_only_others() {
    let a = Agent::new();
    a.env.write(
        "CLAUDE.md",
        "---\ndescription: rules\n---\n# Rules\n<!-- for humans -->\nUse pnpm.\n",
    );
    a.env.write("AGENTS.md", "Run make check.\n");
    a.hook("session_start_startup", &[])
        .expect(0, "")
        .stderr_is("");
    // Injected with its front matter and comment stripped: a processed
    // view, which a targeted edit may not rest on.
    assert_eq!(a.view("CLAUDE.md").0, "processed");
    let mut e = a.payload("pre_edit");
    e["tool_input"]["file_path"] = json!(a.env.path("CLAUDE.md"));
    let r = a.send(&e, &[]);
    assert!(
        r.stdout
            .contains("File has only been shown processed (as injected context)"),
        "{}",
        r.stdout
    );
    let b = Agent::new();
    b.env.write("CLAUDE.md", "Use pnpm.\n");
    b.env.write("AGENTS.md", "Run make check.\n");
    let text = format!(
        "Instruction files read by fsview (--also AGENTS.md):\n\nContents of {} (project):\n\nRun make check.\n",
        b.env.path("AGENTS.md").display()
    );
    b.hook("session_start_startup", &["--also", "AGENTS.md"])
        .expect(0, &context("SessionStart", &text))
        .stderr_is("");
    assert_eq!(b.view("AGENTS.md").0, "full");
    assert_eq!(b.view("CLAUDE.md").0, "full");
    // A resumed conversation holds it already (Claude Code would add it
    // a second time).
    b.hook("session_start_resume", &["--also", "AGENTS.md"])
        .expect(0, "")
        .stderr_is("");
}

/// The first event of a conversation in a fresh clone is SessionStart, and
/// the session file is the default one (`.git/fsview/session.db`), whose
/// directory does not exist yet: the hook creates it, as every tool creates
/// the default location, before ctx-build (which it names the file to) runs.
/// Found by the Claude Code suite after issue 14 made an explicitly named
/// session file need an existing directory.
#[test]
fn session_start_in_a_fresh_clone_creates_the_default_session_file() {
    let a = Agent::new();
    a.env.write("CLAUDE.md", "Use pnpm.\n");
    a.env.write("AGENTS.md", "Run make check.\n");
    a.env.sh("git init -q").expect(0, "");
    let text = format!(
        "Instruction files read by fsview (--also AGENTS.md):\n\nContents of {} (project):\n\nRun make check.\n",
        a.env.path("AGENTS.md").display()
    );
    let mut c = a.cmd(harness::bin("fsview-hook"));
    c.env_remove("FSVIEW_SESSION")
        .args(["claude", "--also", "AGENTS.md"]);
    harness::output(
        c,
        Some(a.payload("session_start_startup").to_string().as_bytes()),
    )
    .expect(0, &context("SessionStart", &text))
    .stderr_is("");
    assert!(a.env.path(".git/fsview/session.db").is_file());
    // An explicitly named session file still needs its directory.
    let missing = a.env.root().join("no/such/dir/s.db");
    let mut c = a.cmd(harness::bin("fsview-hook"));
    c.env("FSVIEW_SESSION", &missing).arg("claude");
    harness::output(c, Some(a.payload("session_start_startup").to_string().as_bytes()))
        .expect(0, "")
        .stderr_is(&format!(
            "fsview-hook: cannot create the session file {}: directory {} does not exist; create it first, or fix FSVIEW_SESSION\n",
            missing.display(),
            missing.parent().unwrap().display()
        ));
    assert!(!a.env.root().join("no").exists());
}

/// Claude Code attaches a directory's CLAUDE.md (and the rules whose paths
/// match) when the agent first works there, and says so: those become views
/// as injected.
#[test]
fn instructions_loaded_for_a_path_are_recorded_as_injected() {
    let a = Agent::new();
    a.env.write("CLAUDE.md", "# Rules\nUse pnpm.\n");
    a.env.write("sub/CLAUDE.md", "Nested rules.\n");
    a.env.write("sub/x.txt", "x\n");
    a.env.write(
        ".claude/rules/sub.md",
        "---\npaths:\n  - \"sub/**\"\n---\nRules for sub.\n",
    );
    // Loaded at the start: SessionStart's business, nothing here.
    a.hook("instructions_loaded_session_start", &[])
        .expect(0, "")
        .stderr_is("");
    assert!(!a.env.session.exists());
    a.hook("instructions_loaded_nested_traversal", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(
        a.view("sub/CLAUDE.md"),
        ("full".into(), "inject".into(), 1, 1, true)
    );
    // The rule was shown without its front matter.
    assert_eq!(a.view(".claude/rules/sub.md").0, "processed");
    // The same again (Claude Code sends one event per file): nothing new.
    a.hook("instructions_loaded_path_glob_match", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(a.view("sub/CLAUDE.md").1, "inject");
}

/// A compaction leaves the conversation a summary: what it had read is
/// no longer held (and says why), until read again; /clear starts it over:
/// what it had read is forgotten.
#[test]
fn session_start_after_compact_or_clear_drops_the_views() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    a.hook("session_start_compact", &[]).expect(0, "");
    // A small file comes back whole in the refusal: held again, the retry
    // goes through without a read.
    a.hook("pre_edit", &[]).expect(
        0,
        &deny(&crate::hook_fixtures::given_after("compaction", A_TXT)),
    );
    a.hook("pre_edit", &[]).expect(0, "");
    // The model holds its text from the refusal: a re-read is answered
    // short.
    let r = a.hook("post_read_whole", &[]);
    assert!(
        r.stdout
            .contains(") since you were last shown it: use that text"),
        "{}",
        r.stdout
    );
    let mut start = a.payload("session_start_startup");
    start["source"] = json!("clear");
    a.send(&start, &[]).expect(0, "");
    a.hook("pre_edit", &[]).expect(0, &deny(NOT_READ));
}

#[test]
fn malformed_payloads_fail_open_or_closed() {
    let a = Agent::new();
    // Not JSON: the event is unknown, so open by default.
    let r = a.raw(b"Edit a.txt\n", &[]);
    r.expect(0, "");
    assert!(
        r.stderr
            .starts_with("fsview-hook: the hook payload is not JSON ("),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // Wired to PreToolUse (--gate, as installed): denied, one line.
    let r = a.raw(b"Edit a.txt\n", &["--gate"]);
    assert!(
        r.stdout.starts_with(r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"fsview-hook could not check this change, so it is denied: the hook payload is not JSON ("#),
        "{}",
        r.stdout
    );
    assert_eq!((r.code, r.stderr.lines().count()), (0, 1), "{}", r.stderr);
    // Closed, the event unknown: Claude Code's blocking exit 2.
    let r = a.raw(b"Edit a.txt\n", &["--on-error", "closed"]);
    r.expect(2, "");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // A PreToolUse payload missing its file: closed by default.
    let mut bad = a.payload("pre_edit");
    bad["tool_input"]
        .as_object_mut()
        .unwrap()
        .remove("file_path");
    let msg = "the Edit payload has no tool_input.file_path string";
    a.send(&bad, &[])
        .expect(
            0,
            &deny(&format!(
                "fsview-hook could not check this change, so it is denied: {msg}"
            )),
        )
        .stderr_is(&format!("fsview-hook: {msg}\n"));
    a.send(&bad, &["--on-error", "open"])
        .expect(0, "")
        .stderr_is(&format!("fsview-hook: {msg}\n"));
    // Other events: open by default, exit 2 when closed.
    let mut bad = a.payload("user_prompt_submit");
    bad.as_object_mut().unwrap().remove("cwd");
    a.send(&bad, &[])
        .expect(0, "")
        .stderr_is("fsview-hook: the UserPromptSubmit payload has no cwd string\n");
    a.send(&bad, &["--on-error", "closed"])
        .expect(2, "")
        .stderr_is("fsview-hook: the UserPromptSubmit payload has no cwd string\n");
    let mut end = a.payload("user_prompt_submit");
    end["hook_event_name"] = json!("SessionEnd");
    a.send(&end, &[]).expect(0, "").stderr_is(
        "fsview-hook: hook event \"SessionEnd\" is not one fsview-hook answers; wire it to PreToolUse, PostToolUse, PostToolUseFailure, SessionStart, UserPromptSubmit, InstructionsLoaded, SubagentStart and Stop only\n",
    );
    // Tools fsview does not gate or record get no opinion, and no message.
    let mut other = a.payload("pre_edit");
    other["tool_name"] = json!("WebFetch");
    a.send(&other, &[]).expect(0, "").stderr_is("");
    // A Bash call whose command cannot be read is a change fsview cannot
    // check; one it can read that writes nothing has no opinion.
    let mut bash = a.payload("pre_edit");
    bash["tool_name"] = json!("Bash");
    a.send(&bash, &[]).expect(0, &deny("fsview-hook could not check this change, so it is denied: the Bash payload has no tool_input.command string"));
    bash["tool_input"] = json!({"command": "cargo test 2>&1 | tail -5"});
    a.send(&bash, &[]).expect(0, "").stderr_is("");
}

#[test]
fn an_unusable_session_file_fails_like_a_malformed_payload() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    std::fs::write(&a.env.session, "not a database, but a note\n").unwrap();
    let r = a.hook("pre_edit", &[]);
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
    let r = a.hook("post_read_whole", &[]);
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
    a.env.write("a.txt", A_TXT);
    a.sid = "conversation-1";
    a.hook("post_read_whole", &[]).expect(0, "");
    a.hook("pre_edit", &[]).expect(0, "");
    a.sid = "conversation-2";
    a.hook("pre_edit", &[]).expect(0, &deny(NOT_READ));
    // --sid puts every conversation in one session.
    a.hook("pre_edit", &["--sid", "conversation-1"])
        .expect(0, "");
}

// The hook appends to the session's events log like the other tools.
#[test]
fn hook_actions_are_in_the_events_log() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("pre_edit", &[]).expect(0, &deny(NOT_READ));
    a.hook("post_read_range", &[]).expect(0, "");
    a.hook("pre_edit", &[]).expect(0, "");
    // The first check found no session file: nothing to log it in.
    assert_eq!(
        a.events(),
        [
            ("read".into(), "-".into(), "range".into()),
            ("check".into(), "ok".into(), "edit".into())
        ]
    );
}

#[test]
fn help_gives_examples_and_exit_codes_and_never_opens_the_session_file() {
    let a = Agent::new();
    std::fs::create_dir_all(&a.env.session).unwrap();
    for args in [
        &["--help"][..],
        &["claude", "--help"],
        &["install", "--help"],
    ] {
        let r = a.env.run("fsview-hook", args);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(r.stdout.contains("Examples:"), "{args:?}: {}", r.stdout);
        assert!(r.stdout.contains("Exit codes:"), "{args:?}: {}", r.stdout);
    }
    assert_eq!(a.env.run("fsview-hook", &["--version"]).code, 0);
    // Without an agent it is a usage error.
    assert_eq!(a.env.run("fsview-hook", &[]).code, 2);
    // The payload answers are the agent's protocol: no --json there.
    assert_eq!(a.env.run("fsview-hook", &["claude", "--json"]).code, 2);
}

// -- fsview-hook install ---------------------------------------------------

fn hook_path() -> String {
    std::fs::canonicalize(harness::bin("fsview-hook"))
        .unwrap()
        .display()
        .to_string()
}

fn wired(exe: &str) -> Value {
    json!({
        "PreToolUse": [{"matcher": "Edit|MultiEdit|Write|NotebookEdit|Bash|Agent|Task",
            "hooks": [{"type": "command", "command": format!("{exe} claude --gate || exit 2")}]}],
        "PostToolUse": [{
            "hooks": [{"type": "command", "command": format!("{exe} claude")}]}],
        "PostToolUseFailure": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": format!("{exe} claude")}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": format!("{exe} claude")}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": format!("{exe} claude")}]}],
        "InstructionsLoaded": [{"hooks": [{"type": "command", "command": format!("{exe} claude")}]}],
        "SubagentStart": [{"hooks": [{"type": "command", "command": format!("{exe} claude")}]}],
        "Stop": [{"hooks": [{"type": "command", "command": format!("{exe} claude")}]}]
    })
}

fn read_json(p: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn install_wires_every_event_by_absolute_path_once() {
    let env = Env::new();
    let exe = hook_path();
    let events =
        "PreToolUse, PostToolUse, PostToolUseFailure, SessionStart, UserPromptSubmit, InstructionsLoaded, SubagentStart, Stop";
    let file = env.path(".claude/settings.local.json");
    let shown = file.display();
    env.run("fsview-hook", &["install", "claude"])
        .expect(0, &format!("{shown}: {events} now run {exe} claude\n"));
    assert_eq!(read_json(&file), json!({ "hooks": wired(&exe) }));
    let text = std::fs::read_to_string(&file).unwrap();
    env.run("fsview-hook", &["install", "claude"]).expect(
        0,
        &format!("{shown}: already runs {exe} claude ({events}); nothing changed\n"),
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    let j = env
        .run("fsview-hook", &["install", "claude", "--json"])
        .json();
    assert_eq!(
        j,
        [json!({"v": 1, "type": "install", "agent": "claude",
            "file": file.display().to_string(), "action": "install", "changed": false,
            "command": format!("{exe} claude"),
            "events": ["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "UserPromptSubmit", "InstructionsLoaded", "SubagentStart", "Stop"],
            "files": [{"path": file.display().to_string(), "done": "unchanged"}],
            "dirs_removed": []})]
    );
    env.run("fsview-hook", &["install", "claude", "--quiet"])
        .expect(0, "");
}

#[test]
fn install_keeps_everything_else_and_uninstall_removes_only_its_own() {
    let env = Env::new();
    let exe = hook_path();
    let before = json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
            "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "fsview-hook claude"}]}]
        }
    });
    let file = env.write(".claude/settings.json", before.to_string());
    let shown = file.display();
    env.run("fsview-hook", &["install", "claude", "--project", "--also", "AGENTS.md"])
        .expect(
            0,
            &format!("{shown}: PreToolUse, PostToolUse, PostToolUseFailure, SessionStart, UserPromptSubmit, InstructionsLoaded, SubagentStart, Stop now run {exe} claude --also AGENTS.md\n"),
        );
    let after = read_json(&file);
    assert_eq!(after["model"], "opus");
    assert_eq!(after["permissions"], before["permissions"]);
    let pre = after["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre[0], before["hooks"]["PreToolUse"][0]);
    assert_eq!(
        pre[1]["hooks"][0]["command"],
        format!("{exe} claude --also AGENTS.md --gate || exit 2")
    );
    // The README's bare command was replaced, not kept beside ours.
    assert_eq!(after["hooks"]["PostToolUse"].as_array().unwrap().len(), 1);
    env.run(
        "fsview-hook",
        &["install", "claude", "--project", "--uninstall"],
    )
    .expect(
        0,
        &format!("{shown}: given back as it was before fsview-hook changed it\n"),
    );
    // As it was, less the bare command (fsview-hook's too) the install
    // replaced.
    assert_eq!(
        read_json(&file),
        json!({
            "model": "opus",
            "permissions": {"allow": ["Bash(npm test)"]},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}
        })
    );
    env.run(
        "fsview-hook",
        &["install", "claude", "--project", "--uninstall"],
    )
    .expect(
        0,
        &format!("{shown}: no fsview-hook hooks; nothing changed\n"),
    );
    // Nothing to uninstall from a file that does not exist: none is made.
    env.run("fsview-hook", &["install", "claude", "--uninstall"])
        .expect(
            0,
            &format!(
                "{}: no fsview-hook hooks; nothing changed\n",
                env.path(".claude/settings.local.json").display()
            ),
        );
    assert!(!env.path(".claude/settings.local.json").exists());
}

#[test]
fn install_for_the_user_follows_claude_config_dir_and_symlinks() {
    let env = Env::new();
    let config = env.root().join("config");
    let dotfiles = env.root().join("dotfiles");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("settings.json"), "{\"theme\": \"dark\"}\n").unwrap();
    std::os::unix::fs::symlink(dotfiles.join("settings.json"), config.join("settings.json"))
        .unwrap();
    let mut c = env.cmd(harness::bin("fsview-hook"));
    c.args(["install", "claude", "--user", "--quiet"])
        .env("CLAUDE_CONFIG_DIR", &config);
    harness::output(c, None).expect(0, "");
    // The link is kept; the file it points to is updated.
    assert!(std::fs::symlink_metadata(config.join("settings.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    let j = read_json(&dotfiles.join("settings.json"));
    assert_eq!(j["theme"], "dark");
    assert_eq!(j["hooks"], wired(&hook_path()));
}

#[test]
fn install_refuses_a_settings_file_it_cannot_read_and_leaves_it_alone() {
    let env = Env::new();
    let file = env.write(".claude/settings.local.json", "{\"hooks\": [\n");
    let r = env.run("fsview-hook", &["install", "claude"]);
    r.expect(2, "");
    assert!(
        r.stderr.starts_with(&format!(
            "fsview-hook: {} is not valid JSON (",
            file.display()
        )) && r
            .stderr
            .ends_with("); fix it by hand, nothing was changed\n"),
        "{}",
        r.stderr
    );
    env.write(".claude/settings.local.json", "{\"hooks\": []}\n");
    env.run("fsview-hook", &["install", "claude"])
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-hook: {} has a \"hooks\" key that is not an object; fix it by hand, nothing was changed\n",
            file.display()
        ));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\"hooks\": []}\n");
    // Usage: one scope at most.
    assert_eq!(
        env.run("fsview-hook", &["install", "claude", "--user", "--project"])
            .code,
        2
    );
}

// Issue 43: "what did my agent see?" after a hooked conversation needs no
// --sid. The hooks name the session by the conversation's id, so there is
// no session "default": show and events look into the latest conversation
// and say which; show FILE limits to that file, --text gives the text the
// agent was shown, numbered as it saw it.
#[test]
fn what_the_agent_saw_is_shown_without_a_sid() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_range", &[]).expect(0, "");
    let picked = "fsview-session: no session \"default\": showing the latest conversation, \"abc123\" (active just now); --sid ID picks another\n";
    a.env
        .run("fsview-session", &["show", "--text", "a.txt"])
        .expect(
            0,
            "a.txt: range, lines 2-2 of 3, read just now; fresh\n2\ttwo\n\n",
        )
        .stderr_is(picked);
    let events = a.env.run("fsview-session", &["events", "--json"]);
    assert_eq!(events.code, 0, "{}", events.stderr);
    assert_eq!(events.stderr, picked);
    let e = events.json();
    assert_eq!(
        (
            e.last().unwrap()["sid"].as_str(),
            e.last().unwrap()["action"].as_str()
        ),
        (Some("abc123"), Some("read"))
    );
    // A file the agent never saw: exit 1, said.
    a.env.write("b.txt", "b\n");
    a.env
        .run("fsview-session", &["show", "-q", "b.txt"])
        .expect(1, "")
        .stderr_is("");
    a.env
        .run("fsview-session", &["show", "--sid", "abc123", "b.txt"])
        .expect(1, "")
        .stderr_is("fsview-session: b.txt: no view in session \"abc123\"\n");
}

/// A file of seven lines, read whole.
fn read_seven(a: &Agent) {
    let text = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
    a.env.write("a.txt", text);
    let mut read = a.payload("post_read_whole");
    read["tool_response"]["file"]["content"] = text.into();
    read["tool_response"]["file"]["numLines"] = 8.into();
    read["tool_response"]["file"]["totalLines"] = 8.into();
    a.send(&read, &[]).expect(0, "").stderr_is("");
}

/// Someone else changes line 7 of a file the model read; its Edit of
/// line 2 (lines 3-6 between) is let through, and the change is told with
/// it; the Edit's own record then knows the whole file, so a whole-file
/// write needs no read. (Issue 41: merge what does not collide.)
#[test]
fn an_edit_far_from_an_outside_change_is_let_through_and_the_change_told() {
    let a = Agent::new();
    read_seven(&a);
    a.env
        .write("a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n");
    let told = format!("[fsview] a.txt changed since you read it (by the user or another program). Your edit is 3 or more lines from that change, so it is applied to the file as it is now, keeping that change. You now hold the file with both: the other change is below.

These files changed since you last saw them:

{}", seventh_changed("SEVEN"));
    a.hook("pre_edit", &[])
        .expect(0, &context("PreToolUse", &told))
        .stderr_is("");
    // Claude Code applies it to the file as it is.
    a.env
        .write("a.txt", "one\nTWO\nthree\nfour\nfive\nsix\nSEVEN\n");
    let mut post = a.payload("post_edit");
    post["tool_response"]["originalFile"] = "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n".into();
    post["tool_response"]["structuredPatch"] = json!([{"oldStart": 1, "oldLines": 3,
        "newStart": 1, "newLines": 3, "lines": [" one", "-two", "+TWO", " three"]}]);
    a.send(&post, &[]).expect(0, "").stderr_is("");
    a.hook("pre_write_update", &[]).expect(0, "").stderr_is("");
    let ev = a.env.run("fsview-session", &["events", "--sid", a.sid]);
    assert!(ev.stdout.contains("merged"), "{}", ev.stdout);
}

/// The same in a file with CRLF line ends: Claude Code reads `\r\n` as
/// `\n` and its Edit matches `old_string` (lines joined by `\n`) against
/// that text, so the merge and the diff told are of the text so read,
/// without `\r`. Within 3 lines of the change: refused, carrying it.
#[test]
fn an_edit_far_from_an_outside_change_merges_in_a_crlf_file() {
    let lf = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
    let read = |a: &Agent| {
        a.env.write("a.txt", lf.replace('\n', "\r\n"));
        let mut read = a.payload("post_read_whole");
        read["tool_response"]["file"]["content"] = lf.into();
        read["tool_response"]["file"]["numLines"] = 8.into();
        read["tool_response"]["file"]["totalLines"] = 8.into();
        a.send(&read, &[]).expect(0, "").stderr_is("");
    };
    let a = Agent::new();
    read(&a);
    a.env
        .write("a.txt", lf.replace("seven", "SEVEN").replace('\n', "\r\n"));
    let told = format!("[fsview] a.txt changed since you read it (by the user or another program). Your edit is 3 or more lines from that change, so it is applied to the file as it is now, keeping that change. You now hold the file with both: the other change is below.

These files changed since you last saw them:

{}", seventh_changed("SEVEN"));
    let mut edit = a.payload("pre_edit");
    edit["tool_input"]["old_string"] = "one\ntwo".into();
    edit["tool_input"]["new_string"] = "one\nTWO".into();
    a.send(&edit, &[])
        .expect(0, &context("PreToolUse", &told))
        .stderr_is("");
    // Near it: refused, the change carried (told once: the view moved).
    let a = Agent::new();
    read(&a);
    a.env
        .write("a.txt", lf.replace("seven", "SEVEN").replace('\n', "\r\n"));
    let mut edit = a.payload("pre_edit");
    edit["tool_input"]["old_string"] = "five".into();
    edit["tool_input"]["new_string"] = "FIVE".into();
    a.send(&edit, &[]).expect(
        0,
        &deny(&format!(
            "File has been modified since read, either by the user or by a linter. The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).\n\nThese files changed since you last saw them:\n\n{}",
            seventh_changed("SEVEN")
        )),
    );
}

/// The diff of the seven-line file of [`read_seven`] whose last line is
/// now `last`.
fn seventh_changed(last: &str) -> String {
    format!("a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,7 +1,7 @@\n one\n two\n three\n four\n five\n six\n-seven\n+{last}\n")
}

/// Lines 5-15 of a 20-line file, read as a range.
fn read_range(a: &Agent) -> String {
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    a.env.write("a.txt", &text);
    let mut read = a.payload("post_read_range");
    let shown: Vec<String> = (5..=15).map(|i| format!("line {i}")).collect();
    read["tool_input"]["offset"] = 5.into();
    read["tool_input"]["limit"] = 11.into();
    read["tool_response"]["file"]["content"] = shown.join("\n").into();
    read["tool_response"]["file"]["numLines"] = 11.into();
    read["tool_response"]["file"]["startLine"] = 5.into();
    read["tool_response"]["file"]["totalLines"] = 21.into();
    a.send(&read, &[]).expect(0, "").stderr_is("");
    text
}

/// An Edit of lines the model read as a range, in a file changed since:
/// let through when it stands 3 or more lines inside them and from the
/// change, and what became of the lines read is told with it, where they
/// are now. Nearer, or at their ends: refused as before.
#[test]
fn an_edit_of_a_range_apart_from_an_outside_change_is_let_through_and_told() {
    let edit = |a: &Agent, old: &str| {
        let mut e = a.payload("pre_edit");
        e["tool_input"]["old_string"] = old.into();
        e["tool_input"]["new_string"] = "EDITED".into();
        e
    };
    let a = Agent::new();
    let text = read_range(&a);
    // A line added at the top, and line 7 changed.
    let theirs = format!(
        "// header\n{}",
        text.replace("line 7\n", "line 7 formatted\n")
    );
    a.env.write("a.txt", &theirs);
    let told = "[fsview] a.txt changed since you read lines 5-15 (by the user or another program). Your edit is 3 or more lines from that change and inside the lines you read, so it is applied to the file as it is now, keeping that change. Those lines are lines 6-16 now; what changed in them is below.

--- a.txt
+++ a.txt
@@ -5,7 +5,7 @@
 line 4
 line 5
 line 6
-line 7
+line 7 formatted
 line 8
 line 9
 line 10
";
    a.send(&edit(&a, "line 11"), &[])
        .expect(0, &context("PreToolUse", told))
        .stderr_is("");
    let ev = a.env.run("fsview-session", &["events", "--sid", a.sid]);
    assert!(
        ev.stdout.contains("merged") && ev.stdout.contains("told with the call, lines 5-15"),
        "{}",
        ev.stdout
    );
    // Only outside the lines read: said in a line.
    let a = Agent::new();
    let text = read_range(&a);
    a.env
        .write("a.txt", text.replace("line 20\n", "line twenty\n"));
    let told = "[fsview] a.txt changed since you read lines 5-15 (by the user or another program), outside those lines: nothing in them changed, and they are lines 5-15 now. Your edit is applied to the file as it is now, keeping that change.";
    a.send(&edit(&a, "line 12"), &[])
        .expect(0, &context("PreToolUse", told))
        .stderr_is("");
    // Within 3 lines of the change (line 9), or of the end of the lines
    // read (line 14): refused, the file changed since.
    for old in ["line 9", "line 14"] {
        let a = Agent::new();
        let text = read_range(&a);
        a.env.write("a.txt", text.replace("line 6\n", "line six\n"));
        let r = a.send(&edit(&a, old), &[]);
        let reason = crate::harness::denied_reason(&r.stdout);
        assert!(
            reason.starts_with("File has been modified since read"),
            "{old}: {reason}"
        );
    }
}

/// The same edit within 3 lines of the change, or with --on-change
/// refuse: refused, with the change, as a stale edit always was.
#[test]
fn an_edit_near_an_outside_change_or_with_merging_off_is_refused() {
    for (change, args) in [
        ("one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n", &[][..]),
        (
            "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n",
            &["--on-change", "refuse"][..],
        ),
    ] {
        let a = Agent::new();
        read_seven(&a);
        a.env.write("a.txt", change);
        let r = a.hook("pre_edit", args);
        let reason = crate::harness::denied_reason(&r.stdout);
        assert!(
            reason.starts_with(&crate::harness::modified_told(
                "a.txt: modified (content)\n"
            )),
            "{reason}"
        );
    }
}

/// Claude Code 2.1.332 hands the model only the first 2 KB of hook context
/// over 10,000 characters (it saves the rest to a file): a change too long
/// for that is never told as context. After a tool it waits; at a prompt
/// its diff is left out, with the reason, and the view stays stale; the
/// edit's refusal, whose reason Claude Code does not cut, carries it.
#[test]
fn a_change_too_long_for_claude_codes_hook_context_is_not_told_as_context() {
    let a = Agent::new();
    a.env.write("a.txt", A_TXT);
    a.hook("post_read_whole", &[]).expect(0, "");
    let long = "x".repeat(10_000);
    a.env.write("a.txt", format!("one\n{long}\nthree\n"));
    let mut grep = a.payload("post_read_whole");
    grep["tool_name"] = "Grep".into();
    grep["tool_input"] = json!({"pattern": "x"});
    grep["tool_response"] = json!({"mode": "files_with_matches", "filenames": []});
    a.send(&grep, &[]).expect(0, "").stderr_is("");
    a.hook("user_prompt_submit", &[]).expect(
        0,
        &reminded(
            "UserPromptSubmit",
            "a.txt: modified (content)\n(its diff is left out: Claude Code shows the model only the start of hook context over 10,000 characters; read the file to see the change)\n",
        ),
    );
    assert!(!a.view("a.txt").4, "the view stays stale");
    a.hook("user_prompt_submit", &[]).expect(0, "");
    // The refusal gives the file back whole (told of the change, the
    // model was not told its text).
    let given = format!("File has been modified since read, either by the user or by a linter. Its whole new text is below (3 lines, numbered as a read shows them): you have now read it, so retry your change against it (no need to read it again).\n\n1\tone\n2\t{long}\n3\tthree\n");
    let got = a.hook("pre_edit", &[]);
    assert!(
        got.code == 0 && got.stdout == deny(&given),
        "{:.300}",
        got.stdout
    );
    a.hook("pre_edit", &[]).expect(0, "");
    // One character shorter, the change fits and is told.
    let b = Agent::new();
    b.env.write("a.txt", A_TXT);
    b.hook("post_read_whole", &[]).expect(0, "");
    let head = "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+\n three\n";
    let fits = "y".repeat(10_000 - head.len());
    b.env.write("a.txt", format!("one\n{fits}\nthree\n"));
    b.hook("user_prompt_submit", &[]).expect(
        0,
        &reminded(
            "UserPromptSubmit",
            &format!("a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+{fits}\n three\n"),
        ),
    );
    assert!(b.view("a.txt").4, "told whole, the view moved");
}

/// A merged edit is told with the call only when the change fits Claude
/// Code's hook context; else the edit is refused, the change carried by
/// the refusal.
#[test]
fn an_edit_merged_with_a_change_too_long_to_tell_as_context_is_refused() {
    let a = Agent::new();
    read_seven(&a);
    let long = "z".repeat(10_000);
    a.env.write(
        "a.txt",
        format!("one\ntwo\nthree\nfour\nfive\nsix\n{long}\n"),
    );
    let carried = format!("File has been modified since read, either by the user or by a linter. The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).

These files changed since you last saw them:

{}", seventh_changed(&long));
    a.hook("pre_edit", &[])
        .expect(0, &deny(&carried))
        .stderr_is("");
    a.hook("pre_edit", &[]).expect(0, "");
}

/// An instruction file too long for Claude Code's hook context is left
/// out of the session's start, said so, and not recorded as given.
#[test]
fn session_start_leaves_out_an_instruction_file_too_long_for_claude_codes_context() {
    let a = Agent::new();
    a.env.write("CLAUDE.md", "Use pnpm.\n");
    let long: String = (0..400)
        .map(|i| format!("Rule {i}: run make check first.\n"))
        .collect();
    assert!(long.len() > 10_000);
    a.env.write("AGENTS.md", &long);
    let text = format!(
        "Instruction files read by fsview (--also AGENTS.md):\n\n{} is left out: Claude Code shows the model only the start of hook context over 10,000 characters; read it before you follow it.",
        a.env.path("AGENTS.md").display()
    );
    a.hook("session_start_startup", &["--also", "AGENTS.md"])
        .expect(0, &context("SessionStart", &text))
        .stderr_is("");
    assert_eq!(a.view("CLAUDE.md").0, "full");
    let r = a
        .env
        .run("fsview-session", &["show", "--sid", a.sid, "--json"]);
    assert!(
        r.json().iter().all(|v| v["path"] != "AGENTS.md"),
        "{}",
        r.stdout
    );
}

/// A file the model read, replaced by a link to another file: a change of
/// type, told as one (not as the linked file's text, which would move the
/// view onto it), and an Edit through the link is refused.
#[test]
fn a_file_replaced_by_a_link_is_told_as_a_link() {
    let a = Agent::new();
    read_seven(&a);
    a.env.write("e.txt", "other\n");
    std::fs::remove_file(a.env.path("a.txt")).unwrap();
    std::os::unix::fs::symlink("e.txt", a.env.path("a.txt")).unwrap();
    let r = a.hook("user_prompt_submit", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("a.txt: modified (type): now a symbolic link"),
        "{}",
        r.stdout
    );
    let r = a.hook("pre_edit", &[]);
    assert!(
        r.stdout.contains("\"permissionDecision\":\"deny\""),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read_to_string(a.env.path("e.txt")).unwrap(),
        "other\n"
    );
}
