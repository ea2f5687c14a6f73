//! fsview-hook copilot, fed the payloads the real GitHub Copilot CLI
//! 1.0.102 sent (tests/fixtures/hooks/copilot-1.0.102, captured by
//! `scripts/e2e-copilot --save-fixtures` with a local model provider),
//! answered with exact stdout JSON and exit codes.

use serde_json::{json, Value};

use crate::hook_fixtures::{
    given_modified, partial, reminder, unnumbered, view, Fixtures, NOT_READ,
};

const A_TXT: &str = "one\ntwo\nthree\n";

fn copilot() -> Fixtures {
    Fixtures::new("copilot", "copilot-1.0.102")
}

fn deny(reason: &str) -> String {
    format!(
        "{}\n",
        json!({"permissionDecision": "deny", "permissionDecisionReason": reason})
    )
}

fn context(text: &str) -> String {
    format!("{}\n", json!({ "additionalContext": text }))
}

#[test]
fn copilot_edit_before_any_read_is_denied_create_of_a_new_file_is_not() {
    let c = copilot();
    c.env.write("a.txt", A_TXT);
    c.hook("pre_edit", &["--event", "preToolUse"])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    // The event told by the payload's fields: the same answer.
    c.hook("pre_edit", &[]).expect(0, &deny(NOT_READ));
    c.hook("pre_create", &[]).expect(0, "");
    // create over an existing file is a whole-file write.
    c.hook("pre_create_existing", &[])
        .expect(0, &deny(NOT_READ));
}

#[test]
fn copilot_a_whole_view_is_a_full_view() {
    let c = copilot();
    c.env.write("a.txt", A_TXT);
    c.hook("post_view_whole", &["--event", "postToolUse"])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(c.view("a.txt"), view("full", "read", 1, 3, true));
    c.hook("pre_edit", &[]).expect(0, "");
    c.hook("pre_create_existing", &[]).expect(0, "");
    // Copilot CLI shows the bytes: CRLF as it is.
    c.env.write("crlf.txt", "one\r\ntwo\r\n");
    c.hook("post_view_crlf", &[]).expect(0, "");
    assert_eq!(c.view("crlf.txt"), view("full", "read", 1, 2, true));
    c.env.write("empty.txt", "");
    c.hook("post_view_empty", &[]).expect(0, "");
    assert_eq!(c.view("empty.txt"), view("full", "read", 1, 0, true));
}

/// `view_range: [2, 2]` shows "two", without its newline; `[2, -1]` shows
/// to the end of the file.
#[test]
fn copilot_a_range_view_records_its_lines() {
    let c = copilot();
    c.env.write("a.txt", A_TXT);
    c.hook("post_view_range", &[]).expect(0, "");
    assert_eq!(c.view("a.txt"), view("range", "read", 2, 1, true));
    c.hook("pre_edit", &[]).expect(0, "");
    c.hook("pre_create_existing", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
    let d = copilot();
    d.env.write("a.txt", A_TXT);
    d.hook("post_view_range_to_end", &[]).expect(0, "");
    assert_eq!(d.view("a.txt"), view("range", "read", 2, 2, true));
}

/// Over 20 KB a view shows a stub; a directory shows a listing: no file's
/// text, nothing recorded.
#[test]
fn copilot_a_stub_or_a_listing_records_nothing() {
    let c = copilot();
    c.env.write("big.txt", "x\n".repeat(40000));
    c.hook("post_view_too_large", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(c.view("big.txt"), None);
    c.env.write("sub/x.txt", "x\n");
    c.hook("post_view_directory", &[])
        .expect(0, "")
        .stderr_is("");
    assert!(!c.env.session.exists());
}

/// What changed meanwhile, as a tool's result tells it.
fn told(changes: &str) -> String {
    context(&format!(
        "These files changed since you last saw them:\n\n{changes}"
    ))
}

/// "File X updated with changes.": the view the agent had, with its
/// old_str replaced, is what it knows now.
#[test]
fn copilot_an_edit_applies_to_the_view_it_had() {
    let c = copilot();
    c.env.write("a.txt", A_TXT);
    c.hook("post_view_whole", &[]).expect(0, "");
    c.env.write("a.txt", "one\nTWO\nthree\n");
    c.hook("post_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("a.txt"), view("full", "write", 1, 3, true));
    c.hook("pre_create_existing", &[]).expect(0, "");
    // A range view: the lines it covered, with the change.
    let d = copilot();
    d.env.write("a.txt", A_TXT);
    d.hook("post_view_range", &[]).expect(0, "");
    d.env.write("a.txt", "one\nTWO\nthree\n");
    d.hook("post_edit", &[]).expect(0, "");
    assert_eq!(d.view("a.txt"), view("range", "write", 2, 1, true));
    d.hook("pre_edit", &[]).expect(0, "");
    // ... and another line changed with it, outside the range: the
    // lines are the agent's, the file is not what it believes (issue 21).
    let d = copilot();
    d.env.write("a.txt", A_TXT);
    d.hook("post_view_range", &[]).expect(0, "");
    d.env.write("a.txt", "one\nTWO\nthree, changed\n");
    d.hook("post_edit", &[]).expect(
        0,
        &told("a.txt: modified (content): changed outside the lines viewed\n"),
    );
    assert_eq!(d.view("a.txt"), view("range", "write", 2, 1, false));
    d.hook("pre_edit", &[]).expect(
        0,
        &deny(&unnumbered(&given_modified("one\nTWO\nthree, changed\n"))),
    );
    // Another change landed with the edit: not taken as seen.
    let e = copilot();
    e.env.write("a.txt", A_TXT);
    e.hook("post_view_whole", &[]).expect(0, "");
    e.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    // Told with the edit's result, whole: the next edit goes through.
    e.hook("post_edit", &[]).expect(
        0,
        &told("a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,4 @@\n one\n TWO\n three\n+four\n"),
    );
    assert_eq!(e.view("a.txt"), view("full", "read", 1, 4, true));
    e.hook("pre_edit", &[]).expect(0, "");
    // No view to apply it to: nothing is known, nothing recorded.
    let f = copilot();
    f.env.write("a.txt", "one\nTWO\nthree\n");
    f.hook("post_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(f.view("a.txt"), None);
}

#[test]
fn copilot_a_created_file_is_a_full_view_and_a_failure_records_nothing() {
    let c = copilot();
    c.env.write("b.txt", "bee\n");
    c.hook("post_create", &[]).expect(0, "");
    assert_eq!(c.view("b.txt"), view("full", "write", 1, 1, true));
    // postToolUseFailure is not wired; sent anyway, it is refused, open.
    c.env.write("a.txt", A_TXT);
    c.hook("post_failure_create_existing", &[])
        .expect(0, "")
        .stderr_is("fsview-hook: hook event \"postToolUseFailure\" is not one fsview-hook copilot answers; wire it to preToolUse, postToolUse, userPromptSubmitted and preCompact only\n");
    assert_eq!(c.view("a.txt"), None);
}

#[test]
fn copilot_a_change_is_told_at_the_next_prompt_verbatim() {
    let c = copilot();
    c.env.write("a.txt", A_TXT);
    c.hook("post_view_whole", &[]).expect(0, "");
    c.env.write("a.txt", "one\nif a < b\nthree\n");
    let diff =
        "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+if a < b\n three\n";
    c.hook("user_prompt_submitted", &["--event", "userPromptSubmitted"])
        .expect(0, &context(&reminder("a.txt", diff)));
    c.hook("user_prompt_submitted", &[]).expect(0, "");
}

#[test]
fn copilot_session_start_sends_nothing_and_bad_payloads_fail_as_they_should() {
    let c = copilot();
    c.hook("session_start_new", &[]).expect(0, "").stderr_is("");
    c.hook("session_start_resume", &[]).expect(0, "");
    assert!(!c.env.session.exists());
    // The gate fails closed with a deny the model reads.
    c.env.write("a.txt", A_TXT);
    let mut p = c.payload("pre_edit");
    p.as_object_mut().unwrap().remove("sessionId");
    let r = c.send(&p, &["--event", "preToolUse"]);
    r.expect(
        0,
        &deny("fsview-hook could not check this change, so it is denied: the preToolUse payload has no sessionId string; pass --sid ID to name the session"),
    )
    .stderr_is("fsview-hook: the preToolUse payload has no sessionId string; pass --sid ID to name the session\n");
    // toolArgs as a JSON string, as the documentation shows it.
    let mut p = c.payload("pre_edit");
    p["toolArgs"] = Value::String(p["toolArgs"].to_string());
    c.send(&p, &[]).expect(0, &deny(NOT_READ));
    c.raw(b"[]", &[]).expect(0, "").stderr_is(
        "fsview-hook: the hook payload is not a JSON object; fsview-hook copilot reads one Copilot CLI hook payload on stdin\n",
    );
    // A payload that is not JSON at all, where the hook knows it answers
    // the gate (issue 21): denied, with one line.
    let why = "the hook payload is not a JSON object; fsview-hook copilot reads one Copilot CLI hook payload on stdin";
    c.raw(b"not json", &["--event", "preToolUse"])
        .expect(
            0,
            &deny(&format!(
                "fsview-hook could not check this change, so it is denied: {why}"
            )),
        )
        .stderr_is(&format!("fsview-hook: {why}\n"));
    c.raw(b"not json", &["--event", "postToolUse"])
        .expect(0, "")
        .stderr_is(&format!("fsview-hook: {why}\n"));
}

#[test]
fn copilot_install_writes_its_own_hooks_file() {
    let env = crate::harness::Env::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(env.path(""))
        .status()
        .unwrap();
    assert!(git.success());
    std::fs::create_dir_all(env.path("sub")).unwrap();
    let exe = std::fs::canonicalize(crate::harness::bin("fsview-hook")).unwrap();
    let exe = exe.display().to_string();
    let mut c = env.cmd(crate::harness::bin("fsview-hook"));
    c.args(["install", "copilot"]).current_dir(env.path("sub"));
    let r = crate::harness::output(c, None);
    let file = env.path(".github/hooks/fsview.json");
    r.expect(0, &format!("{}: preToolUse, postToolUse, userPromptSubmitted, preCompact now run {exe} copilot\nCopilot CLI runs a folder's hooks once the folder is trusted: answer its trust prompt, or run it with --trust-folder (or COPILOT_ALLOW_ALL=true).\n", file.display()));
    let text = std::fs::read_to_string(&file).unwrap();
    let hook = |e: &str| json!([{"type": "command", "bash": format!("{exe} copilot --event {e}"), "timeoutSec": 30}]);
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"version": 1, "hooks": {
            "preToolUse": hook("preToolUse"),
            "postToolUse": hook("postToolUse"),
            "userPromptSubmitted": hook("userPromptSubmitted"),
            "preCompact": hook("preCompact"),
        }})
    );
    env.run("fsview-hook", &["install", "copilot"]).expect(
        0,
        &format!("{}: already runs {exe} copilot (preToolUse, postToolUse, userPromptSubmitted, preCompact); nothing changed\nCopilot CLI runs a folder's hooks once the folder is trusted: answer its trust prompt, or run it with --trust-folder (or COPILOT_ALLOW_ALL=true).\n", file.display()),
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // Removed with the folders made for it: the project is as it was.
    env.run("fsview-hook", &["install", "copilot", "--uninstall"])
        .expect(
            0,
            &format!(
                "{}: removed (fsview-hook had made it)\n{}: removed (made for fsview-hook's files, now empty)\n{}: removed (made for fsview-hook's files, now empty)\n",
                file.display(),
                env.path(".github/hooks").display(),
                env.path(".github").display()
            ),
        );
    assert!(!env.path(".github").exists());
    // A file of that name fsview-hook did not write is left alone.
    env.write(
        ".github/hooks/fsview.json",
        r#"{"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "echo hi"}]}}"#,
    );
    env.run("fsview-hook", &["install", "copilot"])
        .expect(2, "")
        .stderr_is(&format!(
        "fsview-hook: {} is not one fsview-hook wrote; move it away first, nothing was changed\n",
        file.display()
    ));
    // --user: $COPILOT_HOME/hooks/.
    let mut c = env.cmd(crate::harness::bin("fsview-hook"));
    c.args(["install", "copilot", "--user", "--quiet"])
        .env("COPILOT_HOME", env.root().join("ch"));
    crate::harness::output(c, None).expect(0, "");
    assert!(env.root().join("ch/hooks/fsview.json").exists());
}

/// Issue 41's race under Copilot CLI: someone changes line 1 of a file it
/// viewed whole while its edit of line 10 is on its way. The edit is let
/// through (Copilot applies it to the file as it is), and its result tells
/// exactly the other change. Within 3 lines of the change, or with
/// `--on-change refuse`: refused with the change.
#[test]
fn copilot_an_edit_far_from_an_outside_change_is_let_through_and_the_change_told_after() {
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let formatted = base.replacen("line 1\n", "line 1 (formatted)\n", 1);
    let diff = "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,9 +1,9 @@\n-line 1\n+line 1 (formatted)\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n";
    let read = |c: &Fixtures| {
        c.env.write("a.txt", &base);
        let mut p = c.payload("post_view_whole");
        p["toolResult"]["textResultForLlm"] = json!(base);
        c.send(&p, &[]).expect(0, "").stderr_is("");
        c.env.write("a.txt", &formatted);
    };
    let edit = |c: &Fixtures, fixture: &str, old: &str, new: &str| {
        let mut p = c.payload(fixture);
        p["toolArgs"]["old_str"] = json!(old);
        p["toolArgs"]["new_str"] = json!(new);
        p
    };
    let c = copilot();
    read(&c);
    c.send(&edit(&c, "pre_edit", "line 10", "line ten"), &[])
        .expect(0, "")
        .stderr_is("");
    c.env
        .write("a.txt", formatted.replace("line 10\n", "line ten\n"));
    c.send(&edit(&c, "post_edit", "line 10", "line ten"), &[])
        .expect(0, &told(diff));
    assert_eq!(c.view("a.txt"), view("full", "read", 1, 12, true));
    let ev = c.env.run("fsview-session", &["events", "--sid", c.sid]);
    assert!(ev.stdout.contains("merged"), "{}", ev.stdout);
    for (old, new, args) in [
        ("line 2", "line two", &[][..]),
        ("line 10", "line ten", &["--on-change", "refuse"][..]),
    ] {
        let d = copilot();
        read(&d);
        d.send(&edit(&d, "pre_edit", old, new), args)
            .expect(0, &deny(&crate::harness::modified_told(diff)));
    }
}

// Copilot CLI compacts on its own (headless too) and runs preCompact first
// (the payload as Copilot CLI 1.0.102 handed it to the hook, seen in its
// session log by `scripts/e2e-copilot compaction-drops-views`): every view
// is released, so a write from what the summary remembers is refused.
#[test]
fn copilot_a_compaction_releases_the_views() {
    let c = copilot();
    c.env.write("a.txt", A_TXT);
    c.hook("post_view_whole", &[]).expect(0, "");
    c.hook("pre_compact", &["--event", "preCompact"])
        .expect(0, "")
        .stderr_is("");
    // Refused, the file given back (a read it need not make again).
    c.hook("pre_create_existing", &[]).expect(
        0,
        &deny("File has not been read yet: what you were shown of it is no longer in the conversation (compaction). Its whole text is below (3 lines, as a read shows them): you have now read it, so retry your change against it (no need to read it again).\n\none\ntwo\nthree\n"),
    );
    // The event told by the payload's fields: the same release.
    c.hook("post_view_whole", &[]).expect(0, "");
    c.hook("pre_compact", &[]).expect(0, "").stderr_is("");
    assert!(c.hook("pre_edit", &[]).stdout.contains("(compaction)"));
}
