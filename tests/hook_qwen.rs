//! fsview-hook qwen, fed the payloads the real Qwen Code 0.24.4 sent
//! (tests/fixtures/hooks/qwen-0.24.4, captured by `scripts/e2e-qwen
//! --save-fixtures`), answered with exact stdout JSON and exit codes.

use serde_json::{json, Value};

use crate::hook_fixtures::{
    big, given_after, partial, reminder, unnumbered, view, Fixtures, MODIFIED, NOT_READ,
};

const A_TXT: &str = "one\ntwo\nthree\n";

fn qwen() -> Fixtures {
    Fixtures::new("qwen", "qwen-0.24.4")
}

fn big_txt() -> String {
    big(2500, |i| format!("line {i} of a big file"))
}

/// Qwen Code's answers are Claude Code's.
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

fn context(text: &str) -> String {
    format!(
        "{}\n",
        json!({"hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": text,
        }})
    )
}

#[test]
fn qwen_edit_and_write_before_any_read_are_denied() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    q.hook("pre_edit", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    q.hook("pre_write_update", &[]).expect(0, &deny(NOT_READ));
    // Creating a file needs no read.
    q.hook("pre_write_create", &[]).expect(0, "").stderr_is("");
    assert!(!q.env.session.exists());
}

#[test]
fn qwen_a_whole_read_is_a_full_view() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    q.hook("post_read_whole", &[]).expect(0, "").stderr_is("");
    assert_eq!(q.view("a.txt"), view("full", "read", 1, 3, true));
    q.hook("pre_edit", &[]).expect(0, "");
    q.hook("pre_write_update", &[]).expect(0, "");
}

/// `offset: 1, limit: 1` (from 0): "Showing lines 2-2 of 4 total lines."
#[test]
fn qwen_a_range_read_records_its_lines_and_a_write_is_denied() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    q.hook("post_read_range", &[]).expect(0, "");
    assert_eq!(q.view("a.txt"), view("range", "read", 2, 1, true));
    q.hook("pre_edit", &[]).expect(0, "");
    q.hook("pre_write_update", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
}

/// A whole-file read of 2,500 lines shows the first 1,000.
#[test]
fn qwen_a_capped_read_is_a_start_view_of_the_lines_shown() {
    let q = qwen();
    q.env.write("big.txt", big_txt());
    q.hook("post_read_capped", &[]).expect(0, "");
    assert_eq!(q.view("big.txt"), view("start", "read", 1, 1000, true));
    let mut w = q.payload("pre_write_update");
    w["tool_input"]["file_path"] = json!(q.env.path("big.txt"));
    q.send(&w, &[])
        .expect(0, &deny(&partial("lines 1-1000 of 2500")));
}

/// Qwen Code shows each line without its trailing whitespace (`\r`
/// included): the disk's lines, trimmed so, are what was shown.
#[test]
fn qwen_trimmed_lines_are_the_files_lines() {
    let q = qwen();
    q.env.write("crlf.txt", "one\r\ntwo\r\n");
    q.hook("post_read_crlf", &[]).expect(0, "");
    assert_eq!(q.view("crlf.txt"), view("full", "read", 1, 2, true));
    q.env.write("trail.txt", "trail   \n\tx\n");
    q.hook("post_read_trailing_whitespace", &[]).expect(0, "");
    assert_eq!(q.view("trail.txt"), view("full", "read", 1, 2, true));
    // A file whose visible text is not what was shown: not seen.
    let r = qwen();
    r.env.write("trail.txt", "trail   \n\ty\n");
    r.hook("post_read_trailing_whitespace", &[]).expect(0, "");
    assert_eq!(r.view("trail.txt"), view("full", "read", 1, 2, false));
    let mut e = r.payload("pre_edit");
    e["tool_input"]["file_path"] = json!(r.env.path("trail.txt"));
    // Refused with the whole change (from the lines shown): the retry goes
    // through.
    r.send(&e, &[]).expect(
        0,
        &deny(&crate::harness::modified_told(
            "trail.txt: modified (content)\n--- trail.txt (as viewed)\n+++ trail.txt (now)\n@@ -1,2 +1,2 @@\n-trail\n-\tx\n+trail   \n+\ty\n",
        )),
    );
    r.send(&e, &[]).expect(0, "");
}

/// A line over the 25,000-character cap is shown cut: not a line seen.
#[test]
fn qwen_a_line_cut_at_the_cap_is_not_recorded() {
    let q = qwen();
    q.env
        .write("long.txt", format!("{}\nshort\n", "x".repeat(30000)));
    q.hook("post_read_long_line", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(q.view("long.txt"), None);
    // A cut after whole lines keeps those.
    let mut p = q.payload("post_read_long_line");
    p["tool_response"]["llmContent"] = json!(format!(
        "Showing lines 1-2 of 3 total lines.\n\n---\n\nshort\n{}... [truncated]",
        "y".repeat(10)
    ));
    q.env
        .write("long.txt", format!("short\n{}\n", "y".repeat(30000)));
    q.send(&p, &[]).expect(0, "");
    assert_eq!(q.view("long.txt"), view("start", "read", 1, 1, true));
}

#[test]
fn qwen_an_empty_file_read_is_a_full_view_and_a_stub_records_nothing() {
    let q = qwen();
    q.env.write("empty.txt", "");
    q.hook("post_read_empty", &[]).expect(0, "");
    assert_eq!(q.view("empty.txt"), view("full", "read", 1, 0, true));
    // "[File a.txt unchanged since last read ...]": nothing new shown.
    q.env.write("a.txt", A_TXT);
    q.hook("post_read_unchanged", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(q.view("a.txt"), None);
}

#[test]
fn qwen_its_own_edits_and_writes_are_full_views() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    q.hook("post_read_whole", &[]).expect(0, "");
    q.env.write("a.txt", "one\nTWO\nthree\n");
    q.hook("post_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(q.view("a.txt"), view("full", "write", 1, 3, true));
    q.hook("pre_write_update", &[]).expect(0, "");
    q.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    q.hook("post_write_update", &[]).expect(0, "");
    assert_eq!(q.view("a.txt"), view("full", "write", 1, 4, true));
    q.env.write("b.txt", "bee\n");
    q.hook("post_write_create", &[]).expect(0, "");
    assert_eq!(q.view("b.txt"), view("full", "write", 1, 1, true));
    // An edit of a file seen only in part: the lines it changed.
    let r = qwen();
    r.env.write("a.txt", "one\nTWO\nthree\n");
    r.hook("post_edit", &[]).expect(0, "");
    assert_eq!(r.view("a.txt"), view("range", "write", 2, 1, true));
    // A formatter's change after the edit is not taken as written.
    let s = qwen();
    s.env.write("a.txt", "one\nTWO\nthree\n\n");
    s.hook("post_edit", &[]).expect(0, "");
    assert_eq!(s.view("a.txt").map(|v| v.4), Some(false));
}

#[test]
fn qwen_a_change_is_told_at_the_next_prompt_once() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    q.hook("post_read_whole", &[]).expect(0, "");
    q.hook("user_prompt_submit", &[]).expect(0, "");
    q.env.write("a.txt", "one\n2\nthree\n");
    let diff = "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";
    q.hook("user_prompt_submit_continuation", &[])
        .expect(0, &context(&reminder("a.txt", diff)));
    q.hook("user_prompt_submit", &[]).expect(0, "");
}

/// Qwen Code escapes < and > in hook context (not &): a diff holding them
/// is sent with its & escaped too, under a line saying so, so the model
/// gets its exact HTML escape; the view moves to the text told.
#[test]
fn qwen_a_diff_qwen_would_escape_is_told_as_its_html_escape() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    q.hook("post_read_whole", &[]).expect(0, "");
    q.env.write("a.txt", "one\nif a < b && c\nthree\n");
    q.hook("user_prompt_submit", &[]).expect(
        0,
        &context(
            "[fsview] Qwen Code shows this context HTML-escaped: read &lt; as a less-than sign, &gt; as a greater-than sign, &amp; as an ampersand.\nThese files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+if a < b &amp;&amp; c\n three\n",
        ),
    );
    q.hook("user_prompt_submit", &[]).expect(0, "");
}

#[test]
fn qwen_session_start_sends_and_records_nothing() {
    let q = qwen();
    q.env.write("QWEN.md", "Rules.\n");
    q.env.write("CLAUDE.md", "Claude's rules.\n");
    q.hook("session_start_startup", &[])
        .expect(0, "")
        .stderr_is("");
    q.hook("session_start_resume", &[]).expect(0, "");
    assert!(!q.env.session.exists());
}

#[test]
fn qwen_the_gate_fails_closed_and_the_rest_open() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    std::fs::create_dir(q.env.root().join("dir.db")).unwrap();
    let dir = q.env.root().join("dir.db");
    let dir = dir.to_str().unwrap();
    let r = q.hook("pre_edit", &["--session", dir]);
    assert_eq!(r.code, 0);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.starts_with("fsview-hook could not check this change, so it is denied: "),
        "{reason}"
    );
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    q.hook("post_read_whole", &["--session", dir]).expect(0, "");
    // Not a payload: fails open, one line.
    q.raw(b"nonsense", &[]).expect(0, "").stderr_is(
        "fsview-hook: the hook payload is not a JSON object; fsview-hook qwen reads one Qwen Code hook payload on stdin\n",
    );
    let mut other = q.payload("pre_edit");
    other["hook_event_name"] = json!("Stop");
    q.send(&other, &[]).expect(0, "").stderr_is(
        "fsview-hook: hook event \"Stop\" is not one fsview-hook qwen answers; wire it to PreToolUse, PostToolUse, UserPromptSubmit and PostCompact only\n",
    );
}

#[test]
fn qwen_install_merges_into_qwen_settings_by_absolute_path() {
    let env = crate::harness::Env::new();
    let exe = std::fs::canonicalize(crate::harness::bin("fsview-hook")).unwrap();
    let exe = exe.display().to_string();
    std::fs::create_dir_all(env.path(".qwen")).unwrap();
    env.write(
        ".qwen/settings.json",
        r#"{"model": {"name": "qwen3-coder"}, "hooks": {"PreToolUse": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "lint"}]}]}}"#,
    );
    let events = "PreToolUse, PostToolUse, UserPromptSubmit, PostCompact";
    let shown = env.path(".qwen/settings.json").display().to_string();
    let before = std::fs::read_to_string(env.path(".qwen/settings.json")).unwrap();
    env.run("fsview-hook", &["install", "qwen"]).expect(
        0,
        &format!("{shown}: {events} now run {exe} qwen\nQwen Code runs a project's hooks only in a trusted folder: with folder trust on (security.folderTrust.enabled), trust this one; `qwen hooks` lists them.\n"),
    );
    let cmd = |closed: bool| json!([{"type": "command", "command": format!("{exe} qwen{}", if closed { " --gate || exit 2" } else { "" })}]);
    let want = json!({
        "model": {"name": "qwen3-coder"},
        "hooks": {
            "PreToolUse": [
                {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "lint"}]},
                {"matcher": "edit|write_file|notebook_edit|run_shell_command", "hooks": cmd(true)}
            ],
            "PostToolUse": [{"matcher": "read_file|edit|write_file|notebook_edit|run_shell_command", "hooks": cmd(false)}],
            "UserPromptSubmit": [{"hooks": cmd(false)}],
            "PostCompact": [{"hooks": cmd(false)}]
        }
    });
    let read = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(env.path(".qwen/settings.json")).unwrap())
            .unwrap()
    };
    assert_eq!(read(), want);
    env.run("fsview-hook", &["install", "qwen", "--project", "--quiet"])
        .expect(0, "");
    assert_eq!(read(), want);
    env.run("fsview-hook", &["install", "qwen", "--uninstall"])
        .expect(
            0,
            &format!("{shown}: given back as it was before fsview-hook changed it\n"),
        );
    assert_eq!(
        std::fs::read_to_string(env.path(".qwen/settings.json")).unwrap(),
        before
    );
    // --user: ~/.qwen/settings.json; --local: none for Qwen Code.
    env.run("fsview-hook", &["install", "qwen", "--user", "--quiet"])
        .expect(0, "");
    assert!(env.root().join("home/.qwen/settings.json").exists());
    let r = env.run("fsview-hook", &["install", "qwen", "--local"]);
    r.expect(2, "").stderr_is("fsview-hook: Qwen Code has no local settings file; use --project (.qwen/settings.json) or --user (~/.qwen/settings.json)\n");
}

const NOTEBOOK: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"id\": \"c1\",\n   \"metadata\": {},\n   \"source\": [\n    \"print(1)\\n\",\n    \"x = 2\"\n   ],\n   \"outputs\": [],\n   \"execution_count\": null\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

/// A notebook read shows its cells rendered: held against the disk's cells.
#[test]
fn qwen_a_notebook_read_is_its_cells_and_notebook_edit_goes_through() {
    let q = qwen();
    q.env.write("nb.ipynb", NOTEBOOK);
    q.hook("pre_notebook_edit", &[]).expect(0, &deny(NOT_READ));
    q.hook("post_read_notebook", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(q.view("nb.ipynb"), view("processed", "read", 1, 18, true));
    q.hook("pre_notebook_edit", &[]).expect(0, "");
    q.env.write(
        "nb.ipynb",
        NOTEBOOK.replace(
            "    \"print(1)\\n\",\n    \"x = 2\"\n",
            "    \"print(42)\"\n",
        ),
    );
    q.hook("post_notebook_edit", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(q.view("nb.ipynb"), view("processed", "read", 1, 17, true));
    // Another cell source on disk than the one shown: not seen.
    let r = qwen();
    r.env.write("nb.ipynb", NOTEBOOK.replace("x = 2", "x = 3"));
    r.hook("post_read_notebook", &[]).expect(0, "");
    assert_eq!(r.view("nb.ipynb").map(|v| v.4), Some(false));
    // The cells shown are not the file: a refusal cannot carry the change
    // from them, so it asks for a read.
    r.hook("pre_notebook_edit", &[]).expect(0, &deny(MODIFIED));
}

/// Files that are not UTF-8, read as Qwen Code 0.24.4 decodes them. A
/// Latin-1 file it took for ISO-8859-2 and a GBK file it decoded right
/// showed the exact text of their bytes: full views, fresh (not "modified"
/// forever). A file whose first 8 KiB are UTF-8 and whose bad bytes come
/// after was decoded lossily (U+FFFD): not the file, a processed view that
/// lets no change through (a write would destroy those bytes).
#[test]
fn qwen_files_that_are_not_utf8_are_held_as_it_decoded_them() {
    let q = qwen();
    q.env.write(
        "latin1.txt",
        b"caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade\n".repeat(20),
    );
    q.env.write("gbk.txt", gbk_file());
    let mut lossy = b"a".repeat(9000);
    lossy.extend_from_slice(b"\n\xff\xfe bad bytes here\n");
    q.env.write("lossy.txt", &lossy);
    for name in ["post_read_latin1", "post_read_gbk", "post_read_lossy"] {
        q.hook(name, &[]).expect(0, "").stderr_is("");
    }
    assert_eq!(q.view("latin1.txt"), view("full", "read", 1, 20, true));
    assert_eq!(q.view("gbk.txt"), view("full", "read", 1, 20, true));
    assert_eq!(q.view("lossy.txt").map(|v| v.0), Some("processed".into()));
    let edit = |rel: &str| {
        let mut p = q.payload("pre_edit");
        p["tool_input"]["file_path"] = json!(q.env.path(rel));
        q.send(&p, &[]).stdout
    };
    assert_eq!(edit("gbk.txt"), "");
    assert_eq!(edit("latin1.txt"), "");
    assert!(edit("lossy.txt").contains("shown processed"));
}

/// The GBK file the fixture read: twenty lines of Chinese, in GBK.
fn gbk_file() -> Vec<u8> {
    let line: &[u8] = b"\xd6\xd0\xce\xc4\xb2\xe2\xca\xd4\xce\xc4\xb1\xbe\xa3\xac\xd5\xe2\xca\xc7\xd2\xbb\xb8\xf6\xd3\xc3\xd3\xda\xb1\xe0\xc2\xeb\xbc\xec\xb2\xe2\xb5\xc4\xce\xc4\xbc\xfe\xa1\xa3\xce\xd2\xc3\xc7\xd0\xe8\xd2\xaa\xd7\xe3\xb9\xbb\xb6\xe0\xb5\xc4\xba\xba\xd7\xd6\xc0\xb4\xc8\xc3\xbc\xec\xb2\xe2\xc6\xf7\xca\xb6\xb1\xf0\xb1\xe0\xc2\xeb\xa1\xa3\n";
    line.repeat(20)
}

/// `@m1.txt @m2.txt @crlf.txt`: Qwen Code reads the files itself and puts
/// their text in the prompt (trailing whitespace trimmed, as read_file
/// shows it): each is a view, so the edit that follows goes through. A
/// file over read_file's 1,000 lines shows its start.
#[test]
fn qwen_at_mentions_in_the_prompt_are_views() {
    let q = qwen();
    q.env.write("m1.txt", "one\ntwo\n");
    q.env.write("m2.txt", "bee   \nno newline");
    q.env.write("crlf.txt", "one\r\ntwo\r\n");
    q.env.write("big.txt", big_txt());
    q.hook("user_prompt_submit_mentions", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(q.view("m1.txt"), view("full", "read", 1, 2, true));
    assert_eq!(q.view("m2.txt"), view("full", "read", 1, 2, true));
    assert_eq!(q.view("crlf.txt"), view("full", "read", 1, 2, true));
    q.hook("user_prompt_submit_mention_big", &[]).expect(0, "");
    assert_eq!(q.view("big.txt"), view("start", "read", 1, 1000, true));
    let mut w = q.payload("pre_write_update");
    w["tool_input"]["file_path"] = json!(q.env.path("big.txt"));
    q.send(&w, &[])
        .expect(0, &deny(&partial("lines 1-1000 of 2500")));
    w["tool_input"]["file_path"] = json!(q.env.path("m2.txt"));
    q.send(&w, &[]).expect(0, "");
}

/// PostCompact: the conversation is a summary now; none of its views
/// counts until the file is read again.
#[test]
fn qwen_a_compaction_drops_the_views() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    q.hook("post_read_whole", &[]).expect(0, "");
    q.hook("pre_edit", &[]).expect(0, "");
    q.hook("post_compact", &[]).expect(0, "").stderr_is("");
    q.hook("pre_edit", &[])
        .expect(0, &deny(&unnumbered(&given_after("compaction", A_TXT))));
    q.hook("pre_edit", &[]).expect(0, "");
    q.hook("post_read_whole", &[]).expect(0, "");
    q.hook("pre_edit", &[]).expect(0, "");
}

/// A result Qwen Code cut to fit its batch (over
/// `tools.toolOutputBatchBudget`) reaches no hook cut: PostToolUse has the
/// whole output. The transcript has the cut, under the call's
/// `tool_call_id`: the whole view the hook recorded is released before the
/// next gate, as a compaction's, and the file given back with the refusal.
#[test]
fn qwen_a_read_cut_to_fit_its_batch_is_released() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    let read = q.payload("post_read_whole");
    q.send(&read, &[]).expect(0, "");
    let transcript = transcript_of(&read);
    // Another call's result, whole: nothing released.
    std::fs::write(
        &transcript,
        result_line(json!({}), &json!("call_other"), "other\n"),
    )
    .unwrap();
    q.hook("pre_edit", &[]).expect(0, "").stderr_is("");
    // This read's, cut.
    let cut = result_line(json!({}), &read["tool_call_id"], CUT);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    std::io::Write::write_all(&mut f, cut.as_bytes()).unwrap();
    q.hook("pre_edit", &[])
        .expect(0, &deny(&unnumbered(&given_after("compaction", A_TXT))))
        .stderr_is("");
    q.hook("pre_edit", &[]).expect(0, "");
}

/// Qwen Code writes its transcript through a queue: the line that says a
/// result was cut may reach the file after the gate of a call the next
/// answer makes. So the gate waits for its own call's line (the answer's
/// entry, queued after the results), even when it would let the change
/// through, and decides on what came before it.
#[test]
fn qwen_a_gate_waits_for_the_lines_queued_before_its_call() {
    let q = qwen();
    q.env.write("a.txt", A_TXT);
    let read = q.payload("post_read_whole");
    let gate = q.payload("pre_edit");
    let transcript = transcript_of(&read);
    let line = |v: Value| format!("{v}\n");
    std::fs::write(
        &transcript,
        line(json!({"sessionId": q.sid, "type": "user", "message": {"role": "user", "parts": [{"text": "go"}]}})),
    )
    .unwrap();
    q.send(&read, &[]).expect(0, "");
    let late = format!(
        "{}{}",
        result_line(json!({"sessionId": q.sid}), &read["tool_call_id"], CUT),
        line(
            json!({"sessionId": q.sid, "type": "assistant", "message": {"role": "model", "parts": [
            {"functionCall": {"id": gate["tool_call_id"], "name": "edit", "args": {}}}]}})
        ),
    );
    let path = transcript.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, late.as_bytes()).unwrap();
    });
    q.send(&gate, &[])
        .expect(0, &deny(&unnumbered(&given_after("compaction", A_TXT))))
        .stderr_is("");
    writer.join().unwrap();
}

/// A read's result as Qwen Code cuts it to fit its batch.
const CUT: &str =
    "Tool output truncated. Persisted tool-output artifact: /t/a.txt\n\non\n...\nee\n";

/// The transcript a payload names, its folder made.
fn transcript_of(payload: &Value) -> std::path::PathBuf {
    let t = std::path::PathBuf::from(payload["transcript_path"].as_str().unwrap());
    std::fs::create_dir_all(t.parent().unwrap()).unwrap();
    t
}

/// Qwen Code's transcript line of call `id`'s read result, with the
/// fields of `more`.
fn result_line(mut more: Value, id: &Value, output: &str) -> String {
    more["type"] = json!("tool_result");
    more["message"] = json!({"role": "user", "parts": [{"functionResponse": {
        "id": id, "name": "read_file", "response": {"output": output}}}]});
    format!("{more}\n")
}
