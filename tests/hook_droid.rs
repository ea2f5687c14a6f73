//! fsview-hook droid, fed the payloads the real Factory Droid 0.225.2 sent
//! (tests/fixtures/hooks/droid-0.225.2, captured by `scripts/e2e-droid
//! --save-fixtures`), answered with exact stdout JSON and exit codes.

use serde_json::{json, Value};

use crate::hook_fixtures::{big, partial, reminder, view, Fixtures, NOT_READ};

const A_TXT: &str = "one\ntwo\nthree\n";

fn droid() -> Fixtures {
    Fixtures::new("droid", "droid-0.225.2")
}

/// Droid's answers are Claude Code's.
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

/// The reminder comes with a tool's result.
fn after_tool(text: &str) -> String {
    format!(
        "{}\n",
        json!({"hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": text,
        }})
    )
}

#[test]
fn droid_edit_and_create_before_any_read_are_denied() {
    let d = droid();
    d.env.write("a.txt", A_TXT);
    d.hook("pre_edit", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    d.hook("pre_create_over", &[]).expect(0, &deny(NOT_READ));
    // Creating a file needs no read; reads are not gated.
    d.hook("pre_create_new", &[]).expect(0, "").stderr_is("");
    d.hook("pre_read_whole", &[]).expect(0, "");
    assert!(!d.env.session.exists());
}

#[test]
fn droid_a_whole_read_is_a_full_view() {
    let d = droid();
    d.env.write("a.txt", A_TXT);
    d.hook("post_read_whole", &[]).expect(0, "").stderr_is("");
    assert_eq!(d.view("a.txt"), view("full", "read", 1, 3, true));
    d.hook("pre_edit", &[]).expect(0, "");
    d.hook("pre_create_over", &[]).expect(0, "");
}

/// `offset: 2, limit: 1`: "two" and "[Showing lines 2-2 of 4 total lines]".
#[test]
fn droid_a_range_read_records_its_lines_and_a_create_over_it_is_denied() {
    let d = droid();
    d.env.write("a.txt", A_TXT);
    d.hook("post_read_range", &[]).expect(0, "");
    assert_eq!(d.view("a.txt"), view("range", "read", 2, 1, true));
    d.hook("pre_edit", &[]).expect(0, "");
    d.hook("pre_create_over", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
}

/// A whole-file read of 2,500 lines shows the first 2,400.
#[test]
fn droid_a_capped_read_is_a_start_view_of_the_lines_shown() {
    let d = droid();
    d.env
        .write("big.txt", big(2500, |i| format!("line {i} of a big file")));
    d.hook("post_read_capped", &[]).expect(0, "");
    assert_eq!(d.view("big.txt"), view("start", "read", 1, 2400, true));
    let mut w = d.payload("pre_create_over");
    w["tool_input"]["file_path"] = json!(d.env.path("big.txt"));
    d.send(&w, &[])
        .expect(0, &deny(&partial("lines 1-2400 of 2500")));
}

/// CRLF shown as LF, a 3,000-character line shown whole, an empty file:
/// each the whole file.
#[test]
fn droid_reads_of_crlf_long_lines_and_empty_files_are_full_views() {
    let d = droid();
    d.env.write("crlf.txt", "one\r\ntwo\r\n");
    d.hook("post_read_crlf", &[]).expect(0, "");
    assert_eq!(d.view("crlf.txt"), view("full", "read", 1, 2, true));
    d.env
        .write("long.txt", format!("{}\nshort\n", "x".repeat(3000)));
    d.hook("post_read_long_line", &[]).expect(0, "");
    assert_eq!(d.view("long.txt"), view("full", "read", 1, 2, true));
    d.env.write("empty.txt", "");
    d.hook("post_read_empty", &[]).expect(0, "");
    assert_eq!(d.view("empty.txt"), view("full", "read", 1, 0, true));
    // What the disk no longer holds was not taken as seen, and is told
    // at once.
    let e = droid();
    e.env.write("crlf.txt", "one\r\nTWO\r\n");
    let r = e.hook("post_read_crlf", &[]);
    assert!(
        r.stdout.contains("crlf.txt: modified (content)"),
        "{}",
        r.stdout
    );
    assert_eq!(e.view("crlf.txt"), view("full", "read", 1, 2, false));
}

#[test]
fn droid_its_own_edits_creates_and_cats_are_views() {
    let d = droid();
    d.env.write("a.txt", A_TXT);
    d.hook("post_read_whole", &[]).expect(0, "");
    d.env.write("a.txt", "one\nTWO\nthree\n");
    d.hook("post_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(d.view("a.txt"), view("full", "write", 1, 3, true));
    d.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    d.hook("post_create_over", &[]).expect(0, "");
    assert_eq!(d.view("a.txt"), view("full", "write", 1, 4, true));
    d.env.write("b.txt", "bee\n");
    d.hook("post_create_new", &[]).expect(0, "");
    assert_eq!(d.view("b.txt"), view("full", "write", 1, 1, true));
    // An edit of a file never seen: nothing known of it.
    let e = droid();
    e.env.write("a.txt", "one\nTWO\nthree\n");
    e.hook("post_edit", &[]).expect(0, "");
    assert_eq!(e.view("a.txt"), None);
    // `cat a.txt` run by Execute printed the whole file.
    let c = droid();
    c.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    c.hook("post_execute_cat", &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("a.txt"), view("full", "read", 1, 4, true));
    c.hook("pre_edit", &[]).expect(0, "");
    // ... unless the disk holds something else by the time of the hook.
    let f = droid();
    f.env.write("a.txt", "one\n");
    f.hook("post_execute_cat", &[]).expect(0, "");
    assert_eq!(f.view("a.txt"), None);
}

/// droid exec fires no UserPromptSubmit: a change is told with the next
/// tool result, once.
#[test]
fn droid_a_change_is_told_with_the_next_tool_result_once() {
    let d = droid();
    d.env.write("a.txt", A_TXT);
    d.env.write("crlf.txt", "one\r\ntwo\r\n");
    d.hook("post_read_whole", &[]).expect(0, "");
    d.env.write("a.txt", "one\n2\nthree\n");
    let diff = "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";
    d.hook("post_read_crlf", &[])
        .expect(0, &after_tool(&reminder("a.txt", diff)));
    assert_eq!(d.view("crlf.txt"), view("full", "read", 1, 2, true));
    d.hook("post_read_crlf", &[]).expect(0, "");
    // A tool fsview does not record still brings the news.
    d.env.write("crlf.txt", "three\r\n");
    let mut ls = d.payload("post_read_whole");
    ls["tool_name"] = json!("LS");
    ls["tool_response"] = json!("a.txt\ncrlf.txt\n");
    let r = d.send(&ls, &[]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("crlf.txt: modified (content)"),
        "{}",
        r.stdout
    );
    // Told whole: the view moved to the new text, the edit goes through.
    d.hook("pre_edit", &[]).expect(0, "");
}

#[test]
fn droid_session_start_sends_only_files_it_does_not_load() {
    let d = droid();
    d.env.write("AGENTS.md", "Agents' rules.\n");
    d.hook("SessionStart", &[]).expect(0, "").stderr_is("");
    d.hook("SessionStart", &["--also", "AGENTS.md"])
        .expect(0, "");
    d.env.write("GUIDE.md", "Guide.\n");
    let r = d.hook("SessionStart", &["--also", "GUIDE.md"]);
    assert_eq!(r.code, 0);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(
        ctx.contains("Contents of ") && ctx.ends_with("Guide.\n"),
        "{ctx}"
    );
    assert_eq!(d.view("GUIDE.md"), view("full", "inject", 1, 1, true));
}

#[test]
fn droid_the_gate_fails_closed_and_the_rest_open() {
    let d = droid();
    d.env.write("a.txt", A_TXT);
    std::fs::create_dir(d.env.root().join("dir.db")).unwrap();
    let dir = d.env.root().join("dir.db");
    let dir = dir.to_str().unwrap();
    let r = d.hook("pre_edit", &["--session", dir]);
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
    d.hook("post_read_whole", &["--session", dir]).expect(0, "");
    // An ApplyPatch fsview cannot read is refused.
    let mut p = d.payload("pre_edit");
    p["tool_name"] = json!("ApplyPatch");
    p["tool_input"] = json!({"input": "not a patch"});
    let r = d.send(&p, &[]);
    assert!(
        r.stdout.contains("could not check this change"),
        "{}",
        r.stdout
    );
    // One it can read is gated file by file.
    p["tool_input"] = json!({"input": format!("*** Begin Patch\n*** Update File: {}\n@@\n-two\n+TWO\n*** End Patch", d.env.path("a.txt").display())});
    d.send(&p, &[]).expect(0, &deny(NOT_READ));
    d.raw(b"nonsense", &[]).expect(0, "").stderr_is(
        "fsview-hook: the hook payload is not a JSON object; fsview-hook droid reads one Droid hook payload on stdin\n",
    );
    d.hook("Stop", &[]).expect(0, "").stderr_is(
        "fsview-hook: hook event \"Stop\" is not one fsview-hook droid answers; wire it to PreToolUse, PostToolUse, UserPromptSubmit and SessionStart only\n",
    );
}

#[test]
fn droid_install_merges_into_factory_settings_by_absolute_path() {
    let env = crate::harness::Env::new();
    let exe = std::fs::canonicalize(crate::harness::bin("fsview-hook")).unwrap();
    let exe = exe.display().to_string();
    std::fs::create_dir_all(env.path(".factory")).unwrap();
    let file = env.write(
        ".factory/settings.json",
        r#"{"model": "custom:E2E-0", "hooks": {"PreToolUse": [{"matcher": "Execute", "hooks": [{"type": "command", "command": "lint"}]}]}}"#,
    );
    let before = std::fs::read_to_string(&file).unwrap();
    let events = "PreToolUse, PostToolUse, UserPromptSubmit, SessionStart";
    env.run("fsview-hook", &["install", "droid"]).expect(
        0,
        &format!("{}: {events} now run {exe} droid\n", file.display()),
    );
    let cmd = |closed: bool| json!([{"type": "command", "command": format!("{exe} droid{}", if closed { " --gate || exit 2" } else { "" })}]);
    let want = json!({
        "model": "custom:E2E-0",
        "hooks": {
            "PreToolUse": [
                {"matcher": "Execute", "hooks": [{"type": "command", "command": "lint"}]},
                {"matcher": "Edit|Create|ApplyPatch|Execute", "hooks": cmd(true)}
            ],
            "PostToolUse": [{"matcher": "*", "hooks": cmd(false)}],
            "UserPromptSubmit": [{"hooks": cmd(false)}],
            "SessionStart": [{"hooks": cmd(false)}]
        }
    });
    let read = || -> Value {
        serde_json::from_str(&std::fs::read_to_string(env.path(".factory/settings.json")).unwrap())
            .unwrap()
    };
    assert_eq!(read(), want);
    env.run("fsview-hook", &["install", "droid", "--project", "--quiet"])
        .expect(0, "");
    assert_eq!(read(), want);
    env.run("fsview-hook", &["install", "droid", "--uninstall"])
        .expect(
            0,
            &format!(
                "{}: given back as it was before fsview-hook changed it\n",
                file.display()
            ),
        );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    env.run("fsview-hook", &["install", "droid", "--user", "--quiet"])
        .expect(0, "");
    assert!(env.root().join("home/.factory/settings.json").exists());
    env.run("fsview-hook", &["install", "droid", "--local"])
        .expect(2, "")
        .stderr_is("fsview-hook: Droid runs no hooks from a local settings file; use --project (.factory/settings.json) or --user (~/.factory/settings.json)\n");
    assert!(!env.path(".factory/settings.local.json").exists());
}

/// `droid exec "@m.txt ..."`: Droid attaches the file itself in a message
/// of its own that only its transcript holds (tests/fixtures/transcripts/
/// droid-0.225.2, from the real binary); the next hook reads it there, and
/// the edit goes through. A file changed since it was attached was shown
/// all the same: the edit is refused as modified, with the change (issue
/// 40, item 5), and Droid's own read asked for. A transcript not written
/// records nothing: the edit asks for a read.
#[test]
fn droid_a_file_attached_by_an_at_mention_is_a_view() {
    let m = "first line of m\nsecond line of m\n";
    let changed = deny(&crate::harness::modified_told_reread(
        "m.txt: modified (content)\n--- m.txt (as viewed)\n+++ m.txt (now)\n@@ -1,2 +1,2 @@\n first line of m\n-second line of m\n+second line of M\n",
    ));
    for (disk, written, want) in [
        (m, true, String::new()),
        ("first line of m\nsecond line of M\n", true, changed),
        (m, false, deny(NOT_READ)),
    ] {
        let d = droid();
        d.env.write("m.txt", disk);
        let mut edit = d.payload("pre_edit");
        edit["tool_input"]["file_path"] = json!(d.env.path("m.txt").display().to_string());
        edit["tool_input"]["old_str"] = json!("first");
        let path = std::path::PathBuf::from(edit["transcript_path"].as_str().unwrap());
        if written {
            let text = include_str!("fixtures/transcripts/droid-0.225.2/at_mention.jsonl")
                .replace("@CWD@", &d.env.work.display().to_string())
                .replace("@SID@", d.sid);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        d.send(&edit, &[]).expect(0, &want).stderr_is("");
    }
}
