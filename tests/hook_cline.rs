//! fsview-hook cline, fed the payloads the real Cline CLI 3.0.65 sent
//! (tests/fixtures/hooks/cline-3.0.65, captured from `cline --json`
//! against a scripted OpenAI-compatible server), answered with exact
//! stdout JSON.

use serde_json::{json, Value};

use crate::hook_fixtures::{big, reminder, view, Fixtures, NOT_READ};

const A_TXT: &str = "one\ntwo\nthree\n";

fn cline() -> Fixtures {
    Fixtures::new("cline", "cline-3.0.65")
}

/// A refusal: the call run with an input its tool rejects, the reason as
/// context.
fn refuse(reason: &str) -> String {
    format!(
        "{}\n",
        json!({
            "overrideInput": {"fsview": "refused; see the hook_context after this result"},
            "context": reason,
        })
    )
}

#[test]
fn cline_edit_before_any_read_is_refused_without_cancel() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    let r = c.hook("pre_edit", &[]);
    r.expect(0, &refuse(NOT_READ)).stderr_is("");
    assert!(!r.stdout.contains("cancel"));
    // Creating a missing file needs no read; reads are not gated.
    c.hook("pre_create_new", &[]).expect(0, "").stderr_is("");
    c.hook("pre_read_whole", &[]).expect(0, "");
}

#[test]
fn cline_a_whole_read_is_a_full_view_and_the_edit_goes_through() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    c.hook("post_read_whole", &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("a.txt"), view("full", "read", 1, 3, true));
    c.hook("pre_edit", &[]).expect(0, "");
    // The edit done: what the model now knows is the edited file.
    c.env.write("a.txt", "one\nTWO\nthree\n");
    c.hook("post_edit", &[]).expect(0, "");
    assert_eq!(c.view("a.txt"), view("full", "write", 1, 3, true));
}

/// `start_line: 2, end_line: 2`: "2 | two".
#[test]
fn cline_a_range_read_records_its_lines() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    c.hook("post_read_range", &[]).expect(0, "");
    assert_eq!(c.view("a.txt"), view("range", "read", 2, 1, true));
    c.hook("pre_edit", &[]).expect(0, "");
}

/// A whole read of 2,500 short lines gives the hook the first 2,000, then
/// "[Showing lines 1-2000 of 2500. ...]" (22,973 characters); the model is
/// sent its first 3,983 and last 3,983 around "...[truncated 15007
/// chars]..." (Cline cuts every string of a result over 8,000): a view of
/// the head's 371 whole lines.
#[test]
fn cline_a_capped_read_is_a_start_view_of_what_cline_sends() {
    let c = cline();
    c.env.write("numbers.txt", big(2500, |i| i.to_string()));
    c.hook("post_read_capped_lines", &[]).expect(0, "");
    assert_eq!(c.view("numbers.txt"), view("start", "read", 1, 371, true));
}

/// Longer lines stop at 48,000 characters: 1,584 lines of "line N of a
/// big file", then "[Showing lines 1-1584 of 2500. ...]"; the model is
/// sent the first 136 whole lines of it (and its end).
#[test]
fn cline_a_read_cut_at_its_characters_is_a_start_view_of_what_cline_sends() {
    let c = cline();
    c.env
        .write("big.txt", big(2500, |i| format!("line {i} of a big file")));
    c.hook("post_read_capped", &[]).expect(0, "");
    assert_eq!(c.view("big.txt"), view("start", "read", 1, 136, true));
}

#[test]
fn cline_a_change_after_the_read_is_refused_and_told() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    c.hook("post_read_whole", &[]).expect(0, "");
    c.env.write("a.txt", "one\ntwo\nthree\nuser's line\n");
    let r = c.hook("pre_edit", &[]);
    assert_eq!(r.code, 0);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["overrideInput"],
        json!({"fsview": "refused; see the hook_context after this result"})
    );
    let told = v["context"].as_str().unwrap();
    assert!(
        told.starts_with("File has been modified since read"),
        "{told}"
    );
    // The refusal carries the change: the model now holds the new text,
    // so the next tool result has nothing more to tell.
    assert!(told.contains("a.txt: modified (content)"), "{told}");
    assert!(told.contains("+user's line"), "{told}");
    c.hook("pre_edit", &[]).expect(0, "");
}

/// A tool result after an outside change tells it, as
/// contextModification.
#[test]
fn cline_a_change_is_told_with_the_next_tool_result() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    c.hook("post_read_whole", &[]).expect(0, "");
    c.env.write("a.txt", "one\ntwo\nthree\nuser's line\n");
    c.env.write("b.txt", "bee\n");
    let r = c.hook("post_create_new", &[]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let told = v["contextModification"].as_str().unwrap();
    assert!(told.contains("a.txt: modified (content)"), "{told}");
    assert!(told.contains("+user's line"), "{told}");
}

/// `cat a.txt` through run_commands: the shell reader records what it
/// printed, when the disk holds exactly that.
#[test]
fn cline_run_commands_output_is_read_by_the_shell_reader() {
    let c = cline();
    c.env.write("a.txt", "zero\none\nTWO\nthree\n");
    c.hook("pre_run_cat", &[]).expect(0, "");
    c.hook("post_run_cat", &[]).expect(0, "");
    assert_eq!(c.view("a.txt"), view("full", "read", 1, 4, true));
}

#[test]
fn cline_a_shell_write_over_an_unread_file_is_refused() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    let mut p = c.payload("pre_run_cat");
    p["tool_call"]["input"] = json!({"commands": ["printf 'x\\n' > a.txt"]});
    c.send(&p, &[]).expect(0, &refuse(NOT_READ));
}

/// A subagent (a parent_agent_id) has views of its own.
#[test]
fn cline_a_subagent_has_its_own_views() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    let mut p = c.payload("post_read_whole");
    p["agent_id"] = json!("agent_sub_1");
    p["parent_agent_id"] = json!("agent_main");
    c.send(&p, &[]).expect(0, "");
    // The main agent never read it.
    c.hook("pre_edit", &[]).expect(0, &refuse(NOT_READ));
    let mut e = c.payload("pre_edit");
    e["agent_id"] = json!("agent_sub_1");
    e["parent_agent_id"] = json!("agent_main");
    c.send(&e, &[]).expect(0, "");
}

#[test]
fn cline_task_start_and_end_are_answered_with_nothing() {
    let c = cline();
    c.hook("agent_start", &[]).expect(0, "");
}

/// The real payloads of a `spawn_agent` call (Cline CLI 3.0.65): the
/// subagent's tool events carry its own `agent_id` and the parent's as
/// `parent_agent_id`, under the same `rootSessionId`. What the parent read
/// does not let the subagent edit, nor the other way round.
#[test]
fn cline_a_spawned_subagent_has_views_of_its_own() {
    let c = cline();
    let main = c.payload("pre_spawn")["agent_id"].clone();
    let sub = c.payload("pre_sub_read");
    assert_eq!(sub["parent_agent_id"], main);
    assert_ne!(sub["agent_id"], main);
    assert_eq!(
        sub["sessionContext"],
        c.payload("pre_spawn")["sessionContext"]
    );
    c.env.write("crlf.txt", "one\r\ntwo\r\n");
    c.env.write("b.txt", "bee\n");
    c.hook("post_read_crlf", &[]).expect(0, "").stderr_is("");
    c.hook("pre_spawn", &[]).expect(0, "").stderr_is("");
    // The parent read crlf.txt; the subagent did not.
    c.hook("pre_sub_edit_unread", &[])
        .expect(0, &refuse(NOT_READ))
        .stderr_is("");
    // The subagent reads b.txt and edits it.
    c.hook("post_sub_read", &[]).expect(0, "").stderr_is("");
    c.hook("pre_sub_edit", &[]).expect(0, "").stderr_is("");
    c.env.write("b.txt", "BEE\n");
    c.hook("post_sub_edit", &[]).expect(0, "").stderr_is("");
    // The parent never read b.txt: its edit of it is refused.
    let mut e = c.payload("pre_edit");
    e["tool_call"]["input"]["path"] = json!(c.env.path("b.txt").display().to_string());
    e["tool_call"]["input"]["old_text"] = json!("BEE");
    c.send(&e, &[]).expect(0, &refuse(NOT_READ));
    // The subagent's result: nothing the parent saw has changed.
    c.hook("post_spawn", &[]).expect(0, "").stderr_is("");
    c.hook("agent_start_subagent", &[]).expect(0, "");
}

/// `editor` with `insert_line` 1 and `new_text` "zero" (the real payloads):
/// gated as an edit, then applied to the agent's view, which stays whole
/// and fresh.
#[test]
fn cline_an_insertion_is_gated_and_applied_to_the_view() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    c.hook("pre_edit_insert", &[]).expect(0, &refuse(NOT_READ));
    c.hook("post_read_whole", &[]).expect(0, "");
    c.hook("pre_edit_insert", &[]).expect(0, "").stderr_is("");
    c.env.write("a.txt", "zero\none\ntwo\nthree\n");
    c.hook("post_edit_insert", &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("a.txt"), view("full", "write", 1, 4, true));
    c.hook("pre_edit", &[]).expect(0, "");
}

/// After the last line (`insert_line` 4 of 3), lines of their own
/// (`new_text` split at its line breaks, each one a line).
#[test]
fn cline_an_insertion_at_the_end_and_of_several_lines() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    c.hook("post_read_whole", &[]).expect(0, "");
    let mut p = c.payload("post_edit_insert");
    p["tool_result"]["input"]["insert_line"] = json!(4);
    p["tool_result"]["input"]["new_text"] = json!("four\r\nfive");
    c.env.write("a.txt", "one\ntwo\nthree\nfour\nfive\n");
    c.send(&p, &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("a.txt"), view("full", "write", 1, 5, true));
}

/// Where Cline's insertion is not the diff fsview applies (after the last
/// line of a file with no final newline, Cline ends that line and leaves
/// its own last one open), what fsview made of the view is not taken as
/// the file: the same tool result tells the model the difference.
#[test]
fn cline_an_insertion_the_disk_does_not_hold_is_told_at_once() {
    let c = cline();
    c.env.write("a.txt", "one\ntwo\nthree");
    c.hook("post_read_whole", &[]).expect(0, "");
    assert_eq!(c.view("a.txt"), view("full", "read", 1, 3, true));
    let mut p = c.payload("post_edit_insert");
    p["tool_result"]["input"]["insert_line"] = json!(4);
    c.env.write("a.txt", "one\ntwo\nthree\nzero");
    let told = reminder(
        "a.txt",
        "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,4 @@\n one\n two\n-threezero\n+three\n+zero\n\\ No newline at end of file\n",
    );
    c.send(&p, &[])
        .expect(0, &format!("{}\n", json!({ "contextModification": told })))
        .stderr_is("");
    // Told: the model holds the file as it is.
    c.hook("pre_edit", &[]).expect(0, "");
}

/// A CRLF file: Cline's read shows it with LF, its insertion writes CRLF
/// lines; the view is the file as it is.
#[test]
fn cline_an_insertion_into_a_crlf_file() {
    let c = cline();
    c.env.write("crlf.txt", "one\r\ntwo\r\n");
    c.hook("post_read_crlf", &[]).expect(0, "");
    let mut p = c.payload("post_edit_insert");
    p["tool_result"]["input"]["path"] = json!(c.env.path("crlf.txt").display().to_string());
    p["tool_result"]["input"]["insert_line"] = json!(2);
    p["tool_result"]["input"]["new_text"] = json!("mid");
    c.env.write("crlf.txt", "one\r\nmid\r\ntwo\r\n");
    c.send(&p, &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("crlf.txt"), view("full", "write", 1, 3, true));
}

/// Cline 3.0.65 cuts hook context after 50,000 characters, refusals
/// included (a refusal is context): a change longer than that is told
/// with its diff left out, and the edit's refusal asks for a read instead
/// of carrying it or giving the file back.
#[test]
fn cline_a_change_too_long_for_its_hook_context_is_not_told() {
    let c = cline();
    c.env.write("a.txt", A_TXT);
    c.hook("post_read_whole", &[]).expect(0, "");
    let long = "y".repeat(50_000);
    c.env.write("a.txt", format!("one\n{long}\nthree\n"));
    c.env.write("b.txt", "bee\n");
    c.hook("post_create_new", &[])
        .expect(0, &format!("{}\n", json!({"contextModification": "These files changed since you last saw them:\n\na.txt: modified (content)\n(its diff is left out: Cline cuts hook context after 50,000 characters; read the file to see the change)\n"})))
        .stderr_is("");
    c.hook("pre_edit", &[])
        .expect(0, &refuse("File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."))
        .stderr_is("");
    assert_eq!(
        c.view("a.txt"),
        view("full", "read", 1, 3, false),
        "not told: the view stays stale"
    );
    // Told in no reminder first, a change whose refusal would pass the
    // limit is not carried by it either.
    let e = cline();
    e.env.write("a.txt", A_TXT);
    e.hook("post_read_whole", &[]).expect(0, "");
    e.env
        .write("a.txt", format!("one\n{}\nthree\n", "y".repeat(49_800)));
    e.hook("pre_edit", &[])
        .expect(0, &refuse("File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."))
        .stderr_is("");
    // Shorter, the same change is carried by the refusal.
    let d = cline();
    d.env.write("a.txt", A_TXT);
    d.hook("post_read_whole", &[]).expect(0, "");
    d.env
        .write("a.txt", format!("one\n{}\nthree\n", "y".repeat(40_000)));
    let r = d.hook("pre_edit", &[]);
    assert!(
        r.stdout.contains("a.txt: modified (content)"),
        "{:.300}",
        r.stdout
    );
    d.hook("pre_edit", &[]).expect(0, "");
}
