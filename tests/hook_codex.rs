//! fsview-hook codex, fed the payloads the real Codex 0.171.0 sent
//! (tests/fixtures/hooks/codex-0.171.0, captured by `scripts/e2e-codex
//! --save-fixtures`), answered with exact stdout JSON and exit codes.

use serde_json::{json, Value};

use crate::agent::{hook_path, line, partial, read_json, view, Agent, NOT_READ};
use crate::harness::{self, Env};
use crate::hook_fixtures::{given_modified, unnumbered};

/// The files as they were when the fixtures were captured.
const A_TXT: &str = "one\ntwo\nthree\n";

fn codex() -> Agent {
    Agent::new("codex", "codex-0.171.0")
}

fn decision(verdict: &str, reason: &str) -> String {
    line(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict,
        "permissionDecisionReason": reason,
    }}))
}

fn deny(reason: &str) -> String {
    decision("deny", reason)
}

fn context(event: &str, text: &str) -> String {
    line(json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}))
}

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn big() -> String {
    (1..=5000)
        .map(|i| format!("line {i} of a big file with some words in it\n"))
        .collect()
}

/// A payload of `fixture` with another command (a patch, a command line).
fn with_command(a: &Agent, fixture: &str, command: &str) -> Value {
    let mut p = a.payload(fixture);
    p["tool_input"]["command"] = json!(command);
    p
}

#[test]
fn a_patch_of_a_file_never_read_is_denied() {
    let a = codex();
    a.env.write("a.txt", A_TXT);
    a.hook("pre_patch_update", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    assert!(!a.env.session.exists());
    // Adding a file that is not there needs no read.
    a.hook("pre_patch_add", &[]).expect(0, "");
    // Nor does anything but a patch.
    a.hook("pre_cat", &[]).expect(0, "");
    a.hook("pre_other_command", &[]).expect(0, "");
}

#[test]
fn cat_is_a_full_view_and_lets_patches_through() {
    let a = codex();
    a.env.write("a.txt", A_TXT);
    a.hook("post_cat", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("a.txt"), view("full", "read", 1, 3, true));
    a.hook("pre_patch_update", &[]).expect(0, "");
    a.hook("pre_patch_update", &["--allow"])
        .expect(0, &decision("allow", "The file may be changed."));
    // *** Add File over it: a whole-file write, allowed after a whole read.
    let add = "*** Begin Patch\n*** Add File: a.txt\n+new\n*** End Patch\n";
    a.send(&with_command(&a, "pre_patch_add", add), &[])
        .expect(0, "");
    // cat prints a CRLF file's bytes as they are.
    a.env.write("crlf.txt", "one\r\ntwo\r\n");
    a.hook("post_cat_crlf", &[]).expect(0, "");
    assert_eq!(a.view("crlf.txt"), view("full", "read", 1, 2, true));
}

#[test]
fn ranges_heads_and_tails_are_the_lines_printed() {
    let a = codex();
    a.env.write("a.txt", A_TXT);
    a.env.write("long.txt", lines(60));
    a.hook("post_sed_range", &[]).expect(0, "");
    assert_eq!(a.view("a.txt"), view("range", "read", 2, 2, true));
    let add = "*** Begin Patch\n*** Add File: a.txt\n+new\n*** End Patch\n";
    a.send(&with_command(&a, "pre_patch_add", add), &[])
        .expect(0, &deny(&partial("lines 2-3 of 3")));
    a.hook("post_nl_sed", &[]).expect(0, "");
    a.hook("post_tail", &[]).expect(0, "");
    assert_eq!(
        a.views("long.txt"),
        [
            view("range", "read", 10, 3, true),
            view("range", "read", 59, 2, true)
        ]
    );
    let b = codex();
    b.env.write("a.txt", A_TXT);
    b.hook("post_head", &[]).expect(0, "");
    assert_eq!(b.view("a.txt"), view("range", "read", 1, 2, true));
    // A head that printed every line is the whole file.
    b.send(&with_command(&b, "post_head", "head -n 5 a.txt"), &[])
        .expect(0, "");
    let mut p = with_command(&b, "post_head", "head -n 5 a.txt");
    p["tool_response"] = json!(A_TXT);
    b.send(&p, &[]).expect(0, "");
    assert!(b.views("a.txt").contains(&view("full", "read", 1, 3, true)));
}

/// Codex cut a long output in the middle: the model saw its first lines.
#[test]
fn a_truncated_cat_is_a_start_view_of_its_whole_first_lines() {
    let a = codex();
    a.env.write("big.txt", big());
    a.hook("post_cat_truncated", &[]).expect(0, "");
    assert_eq!(a.view("big.txt"), view("start", "read", 1, 446, true));
    let add = "*** Begin Patch\n*** Add File: big.txt\n+new\n*** End Patch\n";
    a.send(&with_command(&a, "pre_patch_add", add), &[])
        .expect(0, &deny(&partial("lines 1-446 of 5000")));
}

/// Output that is not the disk's bytes (an error, a file changed before
/// the hook, a command misread) records nothing: never a false view.
#[test]
fn output_that_is_not_the_file_records_nothing() {
    let a = codex();
    a.hook("post_cat_missing", &[]).expect(0, "").stderr_is("");
    std::fs::create_dir(a.env.path("dir")).unwrap();
    let mut d = with_command(&a, "post_cat", "cat dir");
    d["tool_response"] = json!("cat: dir: Is a directory\n");
    a.send(&d, &[]).expect(0, "").stderr_is("");
    a.hook("post_other_command", &[])
        .expect(0, "")
        .stderr_is("");
    a.env.write("a.txt", "one\nTWO\nthree\n");
    a.hook("post_cat", &[]).expect(0, "").stderr_is("");
    a.hook("post_sed_range", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.views("a.txt"), []);
    a.hook("pre_patch_update", &[]).expect(0, &deny(NOT_READ));
    // An older view is not freshened by it: the change is still reported.
    let b = codex();
    b.env.write("a.txt", A_TXT);
    b.hook("post_cat", &[]).expect(0, "");
    b.env.write("a.txt", "one\nTWO\nthree\n");
    // ... and the change is told after the command, whole: the patch
    // after it goes through.
    b.hook("post_cat", &[]).expect(
        0,
        &context(
            "PostToolUse",
            "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
        ),
    );
    b.hook("pre_patch_update", &[]).expect(0, "");
}

#[test]
fn an_applied_patch_is_the_whole_file_when_it_was_seen_whole() {
    let a = codex();
    a.env.write("a.txt", A_TXT);
    a.hook("post_cat", &[]).expect(0, "");
    a.env.write("a.txt", "one\nTWO\nthree\n");
    a.hook("post_patch_update", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("a.txt"), view("full", "write", 1, 3, true));
    // Never read: the lines the patch wrote, but nothing vouches that
    // nothing else changed, so they are not taken as fresh.
    // (The gate refuses such a patch; without it, the model is told the
    // rest of the file is not what it saw, once.)
    let b = codex();
    b.env.write("a.txt", "one\nTWO\nthree\n");
    b.hook("post_patch_update", &[]).expect(
        0,
        &context(
            "PostToolUse",
            "These files changed since you last saw them:\n\na.txt: modified (content): changed outside the lines viewed\n",
        ),
    );
    assert_eq!(b.view("a.txt"), view("range", "write", 1, 2, false));
    b.hook("post_other_command", &[]).expect(0, "");
    // A formatter changed them after: nothing is taken as seen.
    let c = codex();
    c.env.write("a.txt", "one\nTwo\nthree\n");
    c.hook("post_patch_update", &[]).expect(0, "");
    assert_eq!(c.views("a.txt"), []);
}

#[test]
fn added_moved_and_deleted_files() {
    let a = codex();
    a.env.write("b.txt", "bee\n");
    a.hook("post_patch_add", &[]).expect(0, "");
    assert_eq!(a.view("b.txt"), view("full", "write", 1, 1, true));
    a.env.write("crlf.txt", "one\r\ntwo\r\n");
    a.hook("post_cat_crlf", &[]).expect(0, "");
    // b.txt moved to c.txt with a change, crlf.txt deleted.
    std::fs::remove_file(a.env.path("b.txt")).unwrap();
    std::fs::remove_file(a.env.path("crlf.txt")).unwrap();
    a.env.write("c.txt", "sea\n");
    a.hook("post_patch_move_delete", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(a.view("c.txt"), view("full", "write", 1, 1, true));
    // The agent moved and removed them itself: nothing to remind it of.
    assert_eq!(a.views("b.txt"), []);
    assert_eq!(a.views("crlf.txt"), []);
    a.hook("user_prompt_submit", &[]).expect(0, "");
}

/// A patch Codex will apply without a PostToolUse (a here-document in the
/// shell) is gated, and recorded as what it will make of the file: fresh
/// only once the file holds exactly that.
#[test]
fn a_heredoc_patch_is_gated_and_held_to_what_it_will_write() {
    let a = codex();
    a.env.write("a.txt", A_TXT);
    a.hook("pre_heredoc_patch", &[]).expect(0, &deny(NOT_READ));
    a.hook("post_cat", &[]).expect(0, "");
    a.hook("pre_heredoc_patch", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("a.txt"), view("full", "write", 1, 3, false));
    // Codex writes the file in place.
    std::fs::write(a.env.path("a.txt"), "one\ntwo\nTHREE\n").unwrap();
    assert_eq!(a.view("a.txt"), view("full", "write", 1, 3, true));
    a.hook("pre_patch_update", &[]).expect(0, "");
    // The patch did not land (or something else did): not fresh.
    let b = codex();
    b.env.write("a.txt", A_TXT);
    b.hook("post_sed_range", &[]).expect(0, "");
    b.hook("pre_heredoc_patch", &[]).expect(0, "");
    assert_eq!(b.view("a.txt"), view("range", "write", 3, 1, false));
    std::fs::write(b.env.path("a.txt"), "one\ntwo\nthree!\n").unwrap();
    b.hook("pre_patch_update", &[])
        .expect(0, &deny(&unnumbered(&given_modified("one\ntwo\nthree!\n"))));
}

#[test]
fn a_patch_of_several_files_names_each_refused_one() {
    let a = codex();
    a.env.write("a.txt", A_TXT);
    a.env.write("b.txt", "bee\n");
    a.hook("post_cat", &[]).expect(0, "");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** Delete File: c.txt\n*** End Patch\n";
    a.env.write("c.txt", "sea\n");
    a.send(&with_command(&a, "pre_patch_update", patch), &[])
        .expect(0, &deny(&format!("b.txt: {NOT_READ} c.txt: {NOT_READ}")));
    // One refused file of several: still named.
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n";
    a.send(&with_command(&a, "pre_patch_update", patch), &[])
        .expect(0, &deny(&format!("b.txt: {NOT_READ}")));
}

#[test]
fn a_patch_fsview_cannot_read_is_refused() {
    let a = codex();
    let r = a.send(
        &with_command(
            &a,
            "pre_patch_update",
            "*** Begin Patch\n*** Frob File: a.txt\n*** End Patch\n",
        ),
        &[],
    );
    let why = "the patch is not in the apply_patch format (*** Begin Patch, *** Add/Update/Delete File: PATH, ..., *** End Patch)";
    r.expect(
        0,
        &deny(&format!(
            "fsview-hook could not check this change, so it is denied: {why}"
        )),
    )
    .stderr_is(&format!("fsview-hook: {why}\n"));
    // A failed patch (no "Success.") recorded nothing.
    a.env.write("a.txt", A_TXT);
    let mut p = a.payload("post_patch_update");
    p["tool_response"] = json!("apply_patch verification failed: Failed to find expected lines");
    a.send(&p, &[]).expect(0, "").stderr_is("");
    assert!(!a.env.session.exists());
}

/// A change landing between the patch and its PostToolUse (a formatter
/// hook, the user) is never taken as seen: the disk is the agent's view
/// with its patch applied, or what the agent wrote is held never fresh and
/// the other change is told (issue 21).
#[test]
fn a_change_beside_an_applied_patch_is_told_not_absorbed() {
    // Seen whole: the view becomes what the agent's patch made of it.
    let a = codex();
    a.env.write("a.txt", A_TXT);
    a.hook("post_cat", &[]).expect(0, "");
    a.env.write("a.txt", "one\nTWO\nthree, changed\n");
    // The patch's result tells the other change, whole, once: the next
    // patch goes through.
    a.hook("post_patch_update", &[])
        .expect(
            0,
            &context(
                "PostToolUse",
                "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n TWO\n-three\n+three, changed\n",
            ),
        )
        .stderr_is("");
    a.hook("user_prompt_submit", &[]).expect(0, "");
    a.hook("pre_patch_update", &[]).expect(0, "");
    // Seen in part (lines 2-3), and the patch's context line changed
    // too: nothing is taken as seen.
    let b = codex();
    b.env.write("a.txt", A_TXT);
    b.hook("post_sed_range", &[]).expect(0, "");
    b.env.write("a.txt", "one, changed\nTWO\nthree\n");
    // What is told is what the lines it saw are now (its own patch
    // among them: fsview cannot tell it from another's here).
    b.hook("post_patch_update", &[])
        .expect(
            0,
            &context(
                "PostToolUse",
                "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed, lines 2-3)\n+++ a.txt (now)\n@@ -2,2 +2,2 @@\n-two\n+TWO\n three\n",
            ),
        )
        .stderr_is("");
    assert_eq!(b.view("a.txt"), view("range", "read", 2, 2, false));
    b.hook("pre_patch_update", &[]).expect(
        0,
        &deny(&unnumbered(&given_modified("one, changed\nTWO\nthree\n"))),
    );
    // ... and a line the patch did not touch: the lines it wrote, never
    // fresh.
    let b = codex();
    b.env.write("a.txt", A_TXT);
    b.hook("post_sed_range", &[]).expect(0, "");
    b.env.write("a.txt", "one\nTWO\nthree, changed\n");
    b.hook("post_patch_update", &[])
        .expect(
            0,
            &context(
                "PostToolUse",
                "These files changed since you last saw them:\n\na.txt: modified (content): changed outside the lines viewed\n",
            ),
        )
        .stderr_is("");
    assert_eq!(b.view("a.txt"), view("range", "write", 1, 2, false));
    b.hook("pre_patch_update", &[]).expect(
        0,
        &deny(&unnumbered(&given_modified("one\nTWO\nthree, changed\n"))),
    );
    // The same, with nothing but the patch: fresh, and the next patch
    // needs no read.
    let c = codex();
    c.env.write("a.txt", A_TXT);
    c.hook("post_sed_range", &[]).expect(0, "");
    c.env.write("a.txt", "one\nTWO\nthree\n");
    c.hook("post_patch_update", &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("a.txt"), view("range", "write", 1, 2, true));
    c.hook("pre_patch_update", &[]).expect(0, "");
}

/// Codex gives additionalContext to the model verbatim: diffs with < and >
/// are sent as they are.
#[test]
fn user_prompt_submit_tells_each_change_once_verbatim() {
    let a = codex();
    a.env.write("a.txt", A_TXT);
    a.hook("post_cat", &[]).expect(0, "");
    a.env.write("a.txt", "one\n<two>\nthree\n");
    let reminder = "\
These files changed since you last saw them:

a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,3 +1,3 @@
 one
-two
+<two>
 three
";
    a.hook("user_prompt_submit", &[])
        .expect(0, &context("UserPromptSubmit", reminder))
        .stderr_is("");
    a.hook("user_prompt_submit", &[]).expect(0, "");
}

#[test]
fn session_start_sends_only_what_codex_does_not_load() {
    let a = codex();
    a.env.write("AGENTS.md", "# Rules\nUse pnpm.\n");
    a.env.write("CLAUDE.md", "Claude <rules>.\n");
    a.hook("session_start_startup", &[])
        .expect(0, "")
        .stderr_is("");
    let args = ["--also", "CLAUDE.md", "--also", "AGENTS.md"];
    let text = format!(
        "Instruction files read by fsview (--also CLAUDE.md, AGENTS.md):\n\nContents of {} (project):\n\nClaude <rules>.\n",
        a.env.path("CLAUDE.md").display()
    );
    a.hook("session_start_startup", &args)
        .expect(0, &context("SessionStart", &text))
        .stderr_is("");
    assert_eq!(a.view("CLAUDE.md"), view("full", "inject", 1, 1, true));
    // No transcript to say what Codex gave of AGENTS.md: nothing recorded.
    assert_eq!(a.views("AGENTS.md"), []);
    // Codex adds a start's context again on resume: nothing is sent.
    a.hook("session_start_resume", &args).expect(0, "");
}

/// A line of Codex's transcript (rollout) as 0.171.0 wrote it before
/// SessionStart ran: the AGENTS.md it gave the model.
fn transcript_line(dir: &std::path::Path, text: &str) -> String {
    let t = format!(
        "# AGENTS.md instructions for {}\n\n<INSTRUCTIONS>\n{text}\n</INSTRUCTIONS>",
        dir.display()
    );
    json!({"timestamp": "2026-12-02T17:43:51.346Z", "ordinal": 3, "type": "response_item",
        "payload": {"type": "message", "id": "msg_1", "role": "user", "content": [
            {"type": "input_text", "text": t},
            {"type": "input_text", "text": "<environment_context>...</environment_context>"}]}})
    .to_string()
}

#[test]
fn session_start_records_the_agents_md_codex_gave_the_model() {
    let a = codex();
    a.env.write("AGENTS.md", "# Rules\nUse pnpm.\n");
    let p = a.payload("session_start_startup");
    let transcript = std::path::PathBuf::from(p["transcript_path"].as_str().unwrap());
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let meta = json!({"type": "session_meta", "payload": {"id": "x"}}).to_string();
    std::fs::write(
        &transcript,
        format!(
            "{meta}\n{}\n",
            transcript_line(&a.env.work, "# Rules\nUse pnpm.\n")
        ),
    )
    .unwrap();
    a.send(&p, &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("AGENTS.md"), view("full", "read", 1, 2, true));
    let mut e = a.payload("pre_patch_update");
    e["tool_input"]["command"] = json!(
        "*** Begin Patch\n*** Update File: AGENTS.md\n@@\n-Use pnpm.\n+Use yarn.\n*** End Patch\n"
    );
    a.send(&e, &[]).expect(0, "");
    // Not what the file holds (two files joined, a cut, a change since):
    // nothing is taken as seen.
    let b = codex();
    b.env.write("AGENTS.md", "# Rules\nUse pnpm.\n");
    let p = b.payload("session_start_startup");
    let transcript = std::path::PathBuf::from(p["transcript_path"].as_str().unwrap());
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    std::fs::write(
        &transcript,
        transcript_line(
            &b.env.work,
            "# Rules\nUse pnpm.\n\nMore rules from sub/AGENTS.md\n",
        ),
    )
    .unwrap();
    b.send(&p, &[]).expect(0, "").stderr_is("");
    assert_eq!(b.views("AGENTS.md"), []);
}

// A FIFO at the transcript's path is never opened: its open would block
// the session's start until a writer came. (A writer keeps trying to open
// it, which succeeds only while a reader has it open: it unblocks a hook
// that did open it, and tells.)
#[test]
fn a_fifo_as_codexs_transcript_is_never_opened() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    let a = codex();
    a.env.write("AGENTS.md", "# Rules\nUse pnpm.\n");
    let p = a.payload("session_start_startup");
    let path = std::path::PathBuf::from(p["transcript_path"].as_str().unwrap());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    let done = std::sync::Arc::new(AtomicBool::new(false));
    let opened = std::sync::Arc::new(AtomicBool::new(false));
    let writer = {
        let (done, opened, path) = (done.clone(), opened.clone(), path.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let w = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&path);
                if w.is_ok() {
                    opened.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        })
    };
    a.send(&p, &[]).expect(0, "").stderr_is("");
    done.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    assert!(!opened.load(Ordering::SeqCst), "the hook opened the FIFO");
    assert_eq!(a.views("AGENTS.md"), []);
}

#[test]
fn failures_fail_closed_for_the_gate_with_exit_2_outside_it() {
    let a = codex();
    let mut p = a.payload("pre_patch_update");
    p["tool_input"].as_object_mut().unwrap().remove("command");
    a.send(&p, &[])
        .expect(
            0,
            &deny("fsview-hook could not check this change, so it is denied: the apply_patch payload has no tool_input.command string"),
        )
        .stderr_is("fsview-hook: the apply_patch payload has no tool_input.command string\n");
    let mut s = a.payload("post_cat");
    s["hook_event_name"] = json!("Stop");
    a.send(&s, &[]).expect(0, "").stderr_is(
        "fsview-hook: hook event \"Stop\" is not one fsview-hook answers; wire it to PreToolUse, PostToolUse, SessionStart, UserPromptSubmit and PostCompact only\n",
    );
    a.send(&s, &["--on-error", "closed"]).expect(2, "");
}

// -- fsview-hook install codex ----------------------------------------------

fn wired(exe: &str) -> Value {
    let entry = |cmd: String| json!([{"type": "command", "command": cmd}]);
    json!({
        "PreToolUse": [{"matcher": "^(apply_patch|Bash)$", "hooks": entry(format!("{exe} codex --gate || exit 2"))}],
        "PostToolUse": [{"matcher": "^(apply_patch|Bash)$", "hooks": entry(format!("{exe} codex"))}],
        "SessionStart": [{"matcher": "^(startup|clear)$", "hooks": entry(format!("{exe} codex"))}],
        "UserPromptSubmit": [{"hooks": entry(format!("{exe} codex"))}],
        "PostCompact": [{"hooks": entry(format!("{exe} codex"))}]
    })
}

const TRUST: &str = "Codex runs hooks only once they are trusted: start codex here, trust this project and trust fsview's hooks in /hooks (they run no more after an edit of this file until trusted again), or run codex with --dangerously-bypass-hook-trust\n";

#[test]
fn install_codex_writes_hooks_json_and_says_how_to_trust_them() {
    let env = Env::new();
    let exe = hook_path();
    let events = "PreToolUse, PostToolUse, SessionStart, UserPromptSubmit, PostCompact";
    let file = env.path(".codex/hooks.json");
    let shown = file.display();
    env.run("fsview-hook", &["install", "codex"]).expect(
        0,
        &format!("{shown}: {events} now run {exe} codex\n{TRUST}"),
    );
    assert_eq!(read_json(&file), json!({"hooks": wired(&exe)}));
    let text = std::fs::read_to_string(&file).unwrap();
    env.run("fsview-hook", &["install", "codex", "--project"])
        .expect(
            0,
            &format!("{shown}: already runs {exe} codex ({events}); nothing changed\n{TRUST}"),
        );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // Others' hooks stay; uninstall takes only ours.
    let mut doc = read_json(&file);
    doc["hooks"]["Stop"] = json!([{"hooks": [{"type": "command", "command": "notify-send done"}]}]);
    std::fs::write(&file, doc.to_string()).unwrap();
    env.run(
        "fsview-hook",
        &["install", "codex", "--uninstall", "--quiet"],
    )
    .expect(0, "");
    assert_eq!(
        read_json(&file),
        json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}})
    );
    env.run("fsview-hook", &["install", "codex", "--local"])
        .expect(2, "")
        .stderr_is("fsview-hook: Codex has no hook file for one user in one project; use --project or --user\n");
}

#[test]
fn install_codex_for_the_user_follows_codex_home() {
    let env = Env::new();
    let home = env.root().join("codex-home");
    let mut c = env.cmd(harness::bin("fsview-hook"));
    c.args(["install", "codex", "--user", "--json"])
        .env("CODEX_HOME", &home);
    let r = harness::output(c, None);
    let file = home.join("hooks.json");
    assert_eq!(
        r.json(),
        [json!({"v": 1, "type": "install", "agent": "codex",
            "file": file.display().to_string(), "action": "install", "changed": true,
            "command": format!("{} codex", hook_path()),
            "events": ["PreToolUse", "PostToolUse", "SessionStart", "UserPromptSubmit", "PostCompact"],
            "files": [{"path": file.display().to_string(), "done": "created"}],
            "dirs_removed": []})]
    );
    assert_eq!(read_json(&file), json!({"hooks": wired(&hook_path())}));
    // Without CODEX_HOME: ~/.codex/hooks.json.
    env.run("fsview-hook", &["install", "codex", "--user", "--quiet"])
        .expect(0, "");
    assert!(env.root().join("home/.codex/hooks.json").exists());
}

/// PostCompact, as Codex 0.171.0 sent it after an automatic compaction:
/// what the conversation was shown no longer counts.
#[test]
fn codex_a_compaction_drops_the_views() {
    let c = codex();
    c.env.write("a.txt", A_TXT);
    c.hook("post_cat", &[]).expect(0, "");
    c.hook("pre_patch_update", &[]).expect(0, "");
    c.hook("post_compact", &[]).expect(0, "").stderr_is("");
    // a.txt is small: the refusal gives it back whole, and the retry goes
    // through without a read.
    let r = c.hook("pre_patch_update", &[]);
    assert!(
        r.stdout.contains(
            "no longer in the conversation (compaction). Its whole text is below (3 lines"
        ) && r.stdout.contains("(3 lines, as a read shows them)")
            && r.stdout.contains("\\n\\none\\ntwo\\nthree"),
        "{}",
        r.stdout
    );
    c.hook("pre_patch_update", &[]).expect(0, "");
}

/// Issue 41's race under Codex: someone changes line 1 of a file Codex saw
/// whole while its patch of line 10 is on its way. The patch is let
/// through (Codex applies it to the file as it is) and the other change is
/// told with the call (Codex hands PreToolUse's context to the model
/// before the call's output); the view is then the file with both. The
/// same for a patch sent as a here-document, which gets no PostToolUse: the
/// view is held to what Codex makes of the file. A patch within 3 lines of
/// the change, one placed by a context line (`@@ def run():`), or any with
/// `--on-change refuse`: refused with the change.
#[test]
fn a_patch_far_from_an_outside_change_is_let_through_and_the_change_told_with_it() {
    let base = lines(12);
    let formatted = base.replacen("line 1\n", "line 1 (formatted)\n", 1);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n line 9\n-line 10\n+line ten\n line 11\n*** End Patch\n";
    let heredoc = |patch: &str| format!("apply_patch <<'EOF'\n{patch}EOF\n");
    let read = |a: &Agent| {
        a.env.write("a.txt", &base);
        let mut p = with_command(a, "post_cat", "cat a.txt");
        p["tool_response"] = json!(base);
        a.send(&p, &[]).expect(0, "").stderr_is("");
        a.env.write("a.txt", &formatted);
    };
    let diff = "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,9 +1,9 @@\n-line 1\n+line 1 (formatted)\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n";
    let merged = context(
        "PreToolUse",
        &format!("[fsview] a.txt changed since you read it (by the user or another program). Your edit is 3 or more lines from that change, so it is applied to the file as it is now, keeping that change. You now hold the file with both: the other change is below.\n\nThese files changed since you last saw them:\n\n{diff}"),
    );
    let a = codex();
    read(&a);
    a.send(&with_command(&a, "pre_patch_update", patch), &[])
        .expect(0, &merged)
        .stderr_is("");
    // Codex applies it to the file as it is; nothing is left to tell.
    let both = formatted.replace("line 10\n", "line ten\n");
    a.env.write("a.txt", &both);
    let mut done = with_command(&a, "post_patch_update", patch);
    done["tool_response"] = a.payload("post_patch_update")["tool_response"].clone();
    a.send(&done, &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("a.txt"), view("full", "write", 1, 12, true));
    let ev = a.env.run("fsview-session", &["events", "--sid", a.sid]);
    assert!(
        ev.stdout.contains("merged") && ev.stdout.contains("told with the call"),
        "{}",
        ev.stdout
    );
    // The same patch as a here-document: told with the call, and the view
    // held to the file with both, fresh once Codex has applied it.
    let b = codex();
    read(&b);
    let mut p = with_command(&b, "pre_other_command", &heredoc(patch));
    p["tool_name"] = json!("Bash");
    b.send(&p, &[]).expect(0, &merged).stderr_is("");
    b.env.write("a.txt", &both);
    assert_eq!(b.view("a.txt"), view("full", "write", 1, 12, true));
    b.env
        .run("fsview-check-edit", &["--sid", b.sid, "a.txt"])
        .expect(0, "a.txt: ok\n");
    let near =
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-line 2\n+line two\n line 3\n*** End Patch\n";
    let placed = "*** Begin Patch\n*** Update File: a.txt\n@@ line 8\n line 9\n-line 10\n+line ten\n line 11\n*** End Patch\n";
    let told = crate::harness::modified_told(
        "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,9 +1,9 @@\n-line 1\n+line 1 (formatted)\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n",
    );
    for (fixture, command, args) in [
        ("pre_patch_update", near.to_string(), &[][..]),
        ("pre_patch_update", placed.to_string(), &[][..]),
        (
            "pre_patch_update",
            patch.to_string(),
            &["--on-change", "refuse"][..],
        ),
        ("pre_other_command", heredoc(near), &[][..]),
    ] {
        let b = codex();
        read(&b);
        let mut p = with_command(&b, fixture, &command);
        if fixture == "pre_other_command" {
            p["tool_name"] = json!("Bash");
        }
        b.send(&p, args).expect(0, &deny(&told));
        assert_eq!(
            std::fs::read_to_string(b.env.path("a.txt")).unwrap(),
            formatted,
            "{command}"
        );
    }
}

/// Codex 0.171.0 hands the model only the head and tail of hook context
/// over 2,500 tokens (10,000 bytes): a change too long for that is never
/// told as context (fsview keeps 500 bytes under it). Its diff is left
/// out, in bytes, not characters: 3,200 three-byte characters are 9,600
/// bytes.
#[test]
fn a_change_too_long_for_codexs_hook_context_is_left_out() {
    let head = "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+\n three\n";
    for (line, told) in [
        ("x".repeat(9_500 - head.len()), true),
        ("x".repeat(9_501 - head.len()), false),
        ("€".repeat(3_200), false),
    ] {
        let a = codex();
        a.env.write("a.txt", A_TXT);
        a.hook("post_cat", &[]).expect(0, "");
        a.env.write("a.txt", format!("one\n{line}\nthree\n"));
        let reminder = match told {
            true => head.replace("+\n", &format!("+{line}\n")),
            false => "These files changed since you last saw them:\n\na.txt: modified (content)\n(its diff is left out: Codex shows the model only the start and end of hook context over 2,500 tokens; read the file to see the change)\n".to_string(),
        };
        let got = a.hook("user_prompt_submit", &[]);
        assert!(
            got.code == 0 && got.stdout == context("UserPromptSubmit", &reminder),
            "{}: {:.400}",
            line.len(),
            got.stdout
        );
    }
}
