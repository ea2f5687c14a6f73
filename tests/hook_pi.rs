//! fsview-hook pi, fed what fsview's pi extension sent from the real pi
//! 0.73.1 (tests/fixtures/hooks/pi-0.73.1, captured by `scripts/e2e-pi
//! --save-fixtures`): pi's own event objects as `{"event", "cwd",
//! "sessionId", ...}`.

use serde_json::{json, Value};

use crate::hook_fixtures::{big, partial, reminder, view, Fixtures, NOT_READ};

const A_TXT: &str = "one\ntwo\nthree\n";

fn pi() -> Fixtures {
    Fixtures::new("pi", "pi-0.73.1")
}

fn deny(reason: &str) -> String {
    format!("{}\n", json!({ "deny": reason }))
}

#[test]
fn pi_edit_and_write_before_any_read_are_denied() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    p.hook("tool_call_edit", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    p.hook("tool_call_write_update", &[])
        .expect(0, &deny(NOT_READ));
    p.hook("tool_call_write_create", &[]).expect(0, "");
    assert!(!p.env.session.exists());
}

/// read shows the file's text as it is, the final newline included.
#[test]
fn pi_a_whole_read_is_a_full_view() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    p.hook("tool_result_read_whole", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(p.view("a.txt"), view("full", "read", 1, 3, true));
    p.hook("tool_call_edit", &[]).expect(0, "");
    p.hook("tool_call_write_update", &[]).expect(0, "");
    // CRLF is shown as it is; an empty file is shown whole.
    p.env.write("crlf.txt", "one\r\ntwo\r\n");
    p.hook("tool_result_read_crlf", &[]).expect(0, "");
    assert_eq!(p.view("crlf.txt"), view("full", "read", 1, 2, true));
    p.env.write("empty.txt", "");
    p.hook("tool_result_read_empty", &[]).expect(0, "");
    assert_eq!(p.view("empty.txt"), view("full", "read", 1, 0, true));
    p.env
        .write("long.txt", format!("{}\nshort\n", "x".repeat(3000)));
    p.hook("tool_result_read_long_line", &[]).expect(0, "");
    assert_eq!(p.view("long.txt"), view("full", "read", 1, 2, true));
    // A line added before the extension ran: not the whole file. The
    // change is told with the read's own result, whole, so the model
    // holds the new text and its edit goes through.
    let q = pi();
    q.env.write("a.txt", "one\ntwo\nthree\nfour\n");
    q.hook("tool_result_read_whole", &[]).expect(0, &context(
        "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,4 @@\n one\n two\n three\n+four\n",
    ));
    assert_eq!(q.view("a.txt").map(|v| v.4), Some(true));
    q.hook("tool_call_edit", &[]).expect(0, "");
    // Changed again after that, unseen: refused with the whole change, and
    // the retry goes through.
    q.env.write("a.txt", "one\ntwo\nthree\nfour\nfive\n");
    q.hook("tool_call_edit", &[]).expect(
        0,
        &deny(&crate::harness::modified_told(
            "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,4 +1,5 @@\n one\n two\n three\n four\n+five\n",
        )),
    );
    q.hook("tool_call_edit", &[]).expect(0, "");
}

/// The extension's answer that tells what changed with a tool's result.
fn context(listing: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({ "context": format!("These files changed since you last saw them:\n\n{listing}") })
    )
}

/// A whole re-read of exactly what the conversation holds is answered with
/// a notice in place of the text (the view is not recorded again); any
/// other read, or one after a compaction or a move to another branch,
/// shows the text.
#[test]
fn pi_an_unchanged_whole_reread_is_answered_short() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    p.hook("tool_result_read_whole", &[]).expect(0, "");
    let notice = "[fsview] a.txt is unchanged (3 lines) since you were last shown it: use that text; to reread, pass an offset or limit.".to_string();
    let short = format!(
        "{}\n",
        serde_json::json!({ "short": notice, "context": null })
    );
    p.hook("tool_result_read_whole", &[]).expect(0, &short);
    // A range shows its lines.
    p.hook("tool_result_read_range", &[]).expect(0, "");
    p.hook("tool_result_read_whole", &[]).expect(0, &short);
    // --short-reads off: the text, recorded as a read again.
    p.hook("tool_result_read_whole", &["--short-reads", "off"])
        .expect(0, "");
    // After a compaction nothing counts as held: the text again, then short.
    let mut c = p.payload("before_agent_start");
    c["event"] = json!("session_compact");
    c.as_object_mut().unwrap().remove("prompt");
    p.send(&c, &[]).expect(0, "");
    p.hook("tool_result_read_whole", &[]).expect(0, "");
    p.hook("tool_result_read_whole", &[]).expect(0, &short);
    c["event"] = json!("session_tree");
    p.send(&c, &[]).expect(0, "");
    p.hook("tool_result_read_whole", &[]).expect(0, "");
}

/// `offset: 2, limit: 1` shows "two" and "[2 more lines in file...]";
/// `offset: 3` alone, the lines from 3 to the end; 2,500 lines, the first
/// 2,000 and "[Showing lines 1-2000 of 2501...]".
#[test]
fn pi_a_range_or_capped_read_records_its_lines() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    p.hook("tool_result_read_range", &[]).expect(0, "");
    assert_eq!(p.view("a.txt"), view("range", "read", 2, 1, true));
    p.hook("tool_call_edit", &[]).expect(0, "");
    p.hook("tool_call_write_update", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
    let q = pi();
    q.env.write("a.txt", A_TXT);
    q.hook("tool_result_read_to_end", &[]).expect(0, "");
    assert_eq!(q.view("a.txt"), view("range", "read", 3, 1, true));
    let r = pi();
    r.env
        .write("big.txt", big(2500, |i| format!("line {i} of a big file")));
    r.hook("tool_result_read_capped", &[]).expect(0, "");
    assert_eq!(r.view("big.txt"), view("start", "read", 1, 2000, true));
    // A first line over 50 KB shows only a note: nothing seen.
    r.env.write("huge.txt", format!("{}\n", "y".repeat(60000)));
    r.hook("tool_result_read_huge_line", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(r.view("huge.txt"), None);
}

#[test]
fn pi_edits_apply_to_the_view_it_had_and_writes_are_full_views() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    p.hook("tool_result_read_whole", &[]).expect(0, "");
    p.env.write("a.txt", "one\nTWO\nthree\n");
    p.hook("tool_result_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(p.view("a.txt"), view("full", "write", 1, 3, true));
    // Two replacements in one call, found in the text as it was.
    p.env.write("a.txt", "ONE\nTWO\nTHREE\n");
    p.hook("tool_result_edit_two", &[]).expect(0, "");
    assert_eq!(p.view("a.txt"), view("full", "write", 1, 3, true));
    p.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    p.hook("tool_result_write_update", &[]).expect(0, "");
    assert_eq!(p.view("a.txt"), view("full", "write", 1, 4, true));
    p.env.write("b.txt", "bee\n");
    p.hook("tool_result_write_create", &[]).expect(0, "");
    assert_eq!(p.view("b.txt"), view("full", "write", 1, 1, true));
    // An edit of a file never seen: nothing known.
    let q = pi();
    q.env.write("a.txt", "one\nTWO\nthree\n");
    q.hook("tool_result_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(q.view("a.txt"), None);
    // A formatter ran after the edit: the agent does not know its change.
    let r = pi();
    r.env.write("a.txt", A_TXT);
    r.hook("tool_result_read_whole", &[]).expect(0, "");
    r.env.write("a.txt", "one\nTWO\nthree\n// formatted\n");
    r.hook("tool_result_edit", &[]).expect(0, &context(
        "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,4 @@\n one\n TWO\n three\n+// formatted\n",
    ));
    // ... until it is told, with the edit's result: then it holds it.
    assert_eq!(r.view("a.txt").map(|v| v.4), Some(true));
}

#[test]
fn pi_a_bash_cat_is_a_read() {
    let p = pi();
    p.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    p.hook("tool_result_bash_cat", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(p.view("a.txt"), view("full", "read", 1, 4, true));
    // Not what the disk holds: not taken as seen.
    let q = pi();
    q.env.write("a.txt", "other\n");
    q.hook("tool_result_bash_cat", &[]).expect(0, "");
    assert_eq!(q.view("a.txt"), None);
    // A failed command showed nothing of the file.
    let mut f = p.payload("tool_result_bash_cat");
    f["isError"] = json!(true);
    let r = pi();
    r.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    r.send(&f, &[]).expect(0, "");
    assert_eq!(r.view("a.txt"), None);
}

/// The extension adds the context after the prompt as it is: a diff with
/// < and > is sent whole.
#[test]
fn pi_a_change_is_told_at_the_next_prompt_verbatim() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    p.hook("tool_result_read_whole", &[]).expect(0, "");
    p.hook("before_agent_start", &[]).expect(0, "");
    p.env.write("a.txt", "one\nVec<u8>\nthree\n");
    let diff =
        "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+Vec<u8>\n three\n";
    p.hook("before_agent_start", &[]).expect(
        0,
        &format!("{}\n", json!({ "context": reminder("a.txt", diff) })),
    );
    p.hook("before_agent_start", &[]).expect(0, "");
}

/// `pi @a.txt "change it"`: pi puts the file's text before the prompt, and
/// that is a view of the whole file; a text that is not the file's any
/// more is held never fresh; an image's block is nothing.
#[test]
fn pi_a_file_argument_in_the_prompt_is_a_view() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    p.env.write("b.txt", "bee\n");
    let a = p.env.path("a.txt").display().to_string();
    let b = p.env.path("b.txt").display().to_string();
    let mut e = p.payload("before_agent_start");
    e["prompt"] = json!(format!(
        "<file name=\"{a}\">\n{A_TXT}\n</file>\n<file name=\"{b}\">\nold bee\n\n</file>\n<file name=\"/x.png\"></file>\nchange it"
    ));
    // What the prompt showed of b.txt is not the disk's any more: told in
    // the same answer.
    let diff = "--- b.txt (as viewed)\n+++ b.txt (now)\n@@ -1 +1 @@\n-old bee\n+bee\n";
    p.send(&e, &[])
        .expect(
            0,
            &format!("{}\n", json!({ "context": reminder("b.txt", diff) })),
        )
        .stderr_is("");
    assert_eq!(p.view("a.txt"), view("full", "read", 1, 3, true));
    // ... whole, from the whole text the prompt showed: the model holds
    // the file's text now (issue 25), and the view moved to it.
    assert_eq!(p.view("b.txt").map(|v| v.4), Some(true));
    p.hook("tool_call_edit", &[]).expect(0, "");
    p.hook("tool_call_write_update", &[]).expect(0, "");
    // A prompt with no file block records nothing.
    let q = pi();
    q.env.write("a.txt", A_TXT);
    q.hook("before_agent_start", &[]).expect(0, "");
    assert_eq!(q.view("a.txt"), None);
}

/// The `session_compact` of `session_compact_kept.jsonl` (written to
/// pi-session.jsonl): the compaction entry and where its kept part starts.
fn kept_compaction(p: &Fixtures) -> Value {
    let mut c = p.payload("before_agent_start");
    c.as_object_mut().unwrap().remove("prompt");
    c["event"] = json!("session_compact");
    c["sessionFile"] = json!(p.env.path("pi-session.jsonl").display().to_string());
    c["compactionId"] = json!("2525e135");
    c["firstKeptEntryId"] = json!("64ceee58");
    c
}

/// `session_compact` with where the kept part starts (`firstKeptEntryId`)
/// and pi's session file (the real one of `scripts/e2e-pi
/// compaction-keeps-tail`: a.txt and b.txt read, the read of b.txt kept):
/// every view is released, then what the kept part shows is read back,
/// held to the disk (b.txt changed since: `modified`, as after any read);
/// without the session file, nothing is read back.
#[test]
fn pi_a_compaction_reads_back_what_its_kept_part_shows() {
    let setup = |b_now: &str| {
        let p = pi();
        for n in ["a.txt", "b.txt"] {
            let text = format!("{n} one\n{n} two\n");
            p.env.write(n, &text);
            let mut r = p.payload("tool_result_read_whole");
            r["input"]["path"] = json!(p.env.path(n).display().to_string());
            r["content"][0]["text"] = json!(text);
            p.send(&r, &[]).expect(0, "").stderr_is("");
        }
        p.env.write("b.txt", b_now);
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hooks/pi-0.73.1/session_compact_kept.jsonl");
        let text = std::fs::read_to_string(file)
            .unwrap()
            .replace("@CWD@", &p.env.work.display().to_string());
        p.env.write("pi-session.jsonl", &text);
        p
    };
    let compact = |p: &Fixtures, c: &Value| {
        p.send(c, &[]).expect(0, "").stderr_is("");
    };
    let c = kept_compaction;
    // What the gate says of a file's whole write.
    let gate = |p: &Fixtures, rel: &str| {
        let r = p
            .env
            .run("fsview-check-edit", &["--sid", p.sid, "--write", rel]);
        let verdict = r.stdout.split_whitespace().nth(1).unwrap_or_default();
        verdict.trim_end_matches(':').to_string()
    };
    let p = setup("b.txt one\nb.txt two\n");
    compact(&p, &c(&p));
    assert_eq!(gate(&p, "a.txt"), "not_read");
    assert_eq!(gate(&p, "b.txt"), "ok");
    // The reads recorded of a file.
    let reads = |p: &Fixtures, rel: &str| {
        let r = p
            .env
            .run("fsview-session", &["events", "--sid", p.sid, "--json"]);
        r.stdout
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["action"] == "read" && e["path"] == rel)
            .count()
    };
    assert_eq!((reads(&p, "a.txt"), reads(&p, "b.txt")), (1, 2));
    // Changed since the read: the conversation still holds the text it was
    // shown, so that is the view, and the change since is what the gate
    // refuses (and the next reminder tells), as after any read.
    let q = setup("b.txt one\nb.txt 2\n");
    compact(&q, &c(&q));
    assert_eq!(gate(&q, "b.txt"), "modified");
    assert_eq!(reads(&q, "b.txt"), 2);
    // No session file, another compaction, or a kept part that does not
    // reach the compaction: nothing is read back.
    for (key, value) in [
        ("sessionFile", json!("")),
        ("compactionId", json!("0000")),
        ("firstKeptEntryId", json!("0000")),
    ] {
        let r = setup("b.txt one\nb.txt two\n");
        let mut c = c(&r);
        c[key] = value;
        compact(&r, &c);
        assert_eq!(gate(&r, "b.txt"), "not_read", "{key}");
        assert_eq!(gate(&r, "a.txt"), "not_read", "{key}");
        assert_eq!(reads(&r, "b.txt"), 1, "{key}");
    }
}

/// A kept read that fsview answered short holds the notice, not the text:
/// the text it points to was before the kept part, summarized. It is no
/// view, so the file is not held (not `modified` either: nothing changed
/// it), and the next prompt tells nothing of it.
#[test]
fn pi_a_kept_read_answered_short_is_no_view() {
    let p = pi();
    let text = "b.txt one\nb.txt two\n";
    p.env.write("b.txt", text);
    let mut r = p.payload("tool_result_read_whole");
    r["input"]["path"] = json!(p.env.path("b.txt").display().to_string());
    r["content"][0]["text"] = json!(text);
    p.send(&r, &[]).expect(0, "").stderr_is("");
    // The re-read, answered short: pi keeps the notice as its result.
    let out = p.send(&r, &[]);
    assert_eq!((out.code, out.stderr.as_str()), (0, ""));
    let short: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    let notice = short["short"].as_str().unwrap().to_string();
    assert!(
        notice.starts_with("[fsview] b.txt is unchanged"),
        "{notice}"
    );
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks/pi-0.73.1/session_compact_kept.jsonl");
    let session = std::fs::read_to_string(file)
        .unwrap()
        .replace("@CWD@", &p.env.work.display().to_string())
        .replace(
            "\"text\":\"b.txt one\\nb.txt two\\n\"",
            &format!("\"text\":{}", json!(notice)),
        );
    assert!(
        session.contains("is unchanged"),
        "the kept read holds the notice"
    );
    p.env.write("pi-session.jsonl", &session);
    p.send(&kept_compaction(&p), &[])
        .expect(0, "")
        .stderr_is("");
    let r = p
        .env
        .run("fsview-check-edit", &["--sid", p.sid, "--write", "b.txt"]);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            1,
            "b.txt: not_read: File has not been read yet. Read it first before writing to it. (What it was shown of it is no longer in the conversation: compaction.)\n"
        )
    );
    p.hook("before_agent_start", &[])
        .expect(0, "")
        .stderr_is("");
}

/// `session_compact`: the conversation is a summary and a tail pi does not
/// name by call, so no view counts as held; a read makes the file editable
/// again.
#[test]
fn pi_a_compaction_releases_the_views() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    p.hook("tool_result_read_whole", &[]).expect(0, "");
    p.hook("tool_call_edit", &[]).expect(0, "");
    let mut c = p.payload("before_agent_start");
    c["event"] = json!("session_compact");
    c.as_object_mut().unwrap().remove("prompt");
    p.send(&c, &[]).expect(0, "").stderr_is("");
    // a.txt is small: the refusal gives it back whole, and the retry goes
    // through without a read.
    let given = |why: &str| {
        format!("no longer in the conversation ({why}). Its whole text is below (3 lines")
    };
    let r = p.hook("tool_call_edit", &[]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains(&given("compaction"))
            && r.stdout.contains("(3 lines, as a read shows them)")
            && r.stdout.contains("\\n\\none\\ntwo\\nthree"),
        "{}",
        r.stdout
    );
    p.hook("tool_call_edit", &[]).expect(0, "");
    // The model holds its text from the refusal: a re-read is answered
    // short.
    let r = p.hook("tool_result_read_whole", &[]);
    assert!(
        r.stdout
            .contains(") since you were last shown it: use that text"),
        "{}",
        r.stdout
    );
    // `/tree` to another branch: none of the views counts either.
    c["event"] = json!("session_tree");
    p.send(&c, &[]).expect(0, "").stderr_is("");
    let r = p.hook("tool_call_edit", &[]);
    assert!(r.stdout.contains(&given("rewind")), "{}", r.stdout);
}

#[test]
fn pi_the_gate_fails_closed_in_the_extensions_terms() {
    let p = pi();
    p.env.write("a.txt", A_TXT);
    let mut e = p.payload("tool_call_edit");
    e.as_object_mut().unwrap().remove("cwd");
    p.send(&e, &[])
        .expect(0, &deny("fsview-hook could not check this change, so it is denied: the tool_call payload has no cwd string"))
        .stderr_is("fsview-hook: the tool_call payload has no cwd string\n");
    let mut e = p.payload("tool_result_read_whole");
    e["sessionId"] = json!("");
    p.send(&e, &[]).expect(0, "").stderr_is(
        "fsview-hook: the tool_result payload has no sessionId string; pass --sid ID to name the session\n",
    );
    p.raw(br#"{"event": "session_start"}"#, &[]).expect(0, "").stderr_is(
        "fsview-hook: extension event \"session_start\" is not one fsview-hook pi answers (tool_call, tool_result, before_agent_start, session_compact, session_tree)\n",
    );
}

#[test]
fn pi_install_writes_the_extension_and_leaves_a_foreign_one_alone() {
    let env = crate::harness::Env::new();
    let exe = std::fs::canonicalize(crate::harness::bin("fsview-hook")).unwrap();
    let exe = exe.display().to_string();
    env.run("fsview-hook", &["install", "pi"]).expect(
        0,
        &format!("{}: tool_call, tool_result, before_agent_start, session_compact, session_tree now run {exe} pi\npi loads the extension when it next starts in this directory (not with --no-extensions); it needs no other setting.\n", env.path(".pi/extensions/fsview.js").display()),
    );
    let file = env.path(".pi/extensions/fsview.js");
    let js = std::fs::read_to_string(&file).unwrap();
    assert!(js.contains(&format!("const HOOK = {};", Value::from(exe.as_str()))));
    env.run("fsview-hook", &["install", "pi", "--quiet"])
        .expect(0, "");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), js);
    env.run("fsview-hook", &["install", "pi", "--uninstall"])
        .expect(
            0,
            &format!(
                "{}: removed (fsview-hook had made it)\n{}: removed (made for fsview-hook's files, now empty)\n{}: removed (made for fsview-hook's files, now empty)\n",
                file.display(),
                env.path(".pi/extensions").display(),
                env.path(".pi").display()
            ),
        );
    assert!(!env.path(".pi").exists());
    env.write(".pi/extensions/fsview.js", "export default () => {};\n");
    env.run("fsview-hook", &["install", "pi"])
        .expect(2, "")
        .stderr_is(&format!(
        "fsview-hook: {} is not one fsview-hook wrote; move it away first, nothing was changed\n",
        file.display()
    ));
    let mut c = env.cmd(crate::harness::bin("fsview-hook"));
    c.args(["install", "pi", "--user", "--quiet"])
        .env("PI_CODING_AGENT_DIR", env.root().join("agent"));
    crate::harness::output(c, None).expect(0, "");
    assert!(env.root().join("agent/extensions/fsview.js").exists());
    env.run("fsview-hook", &["install", "pi", "--user", "--quiet"])
        .expect(0, "");
    assert!(env
        .root()
        .join("home/.pi/agent/extensions/fsview.js")
        .exists());
}

/// Someone else changes line 7 of a file pi read; its edit of line 2 is
/// let through (pi's extension tells only after a tool), and the edit's
/// result tells exactly the other change: the view is the text pi
/// believes it has, its own edit included. Within 3 lines of the change,
/// or with `--on-change refuse`: refused with the change. (Issue 41.)
#[test]
fn pi_an_edit_far_from_an_outside_change_is_let_through_and_the_change_told_after() {
    const SEVEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
    let read = |p: &Fixtures| {
        p.env.write("a.txt", SEVEN);
        let mut r = p.payload("tool_result_read_whole");
        r["content"][0]["text"] = SEVEN.into();
        p.send(&r, &[]).expect(0, "").stderr_is("");
    };
    let p = pi();
    read(&p);
    p.env
        .write("a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n");
    p.hook("tool_call_edit", &[]).expect(0, "").stderr_is("");
    // pi applies it to the file as it is.
    p.env
        .write("a.txt", "one\nTWO\nthree\nfour\nfive\nsix\nSEVEN\n");
    p.hook("tool_result_edit", &[]).expect(0, &context(
        "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,7 +1,7 @@\n one\n TWO\n three\n four\n five\n six\n-seven\n+SEVEN\n",
    ));
    assert_eq!(p.view("a.txt").map(|v| (v.3, v.4)), Some((7, true)));
    let ev = p.env.run("fsview-session", &["events", "--sid", p.sid]);
    assert!(ev.stdout.contains("merged"), "{}", ev.stdout);
    // The change within 3 lines of the edit, or merging off: refused.
    for (change, args) in [
        ("one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n", &[][..]),
        (
            "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n",
            &["--on-change", "refuse"][..],
        ),
    ] {
        let q = pi();
        read(&q);
        q.env.write("a.txt", change);
        let r = q.hook("tool_call_edit", args);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert!(
            v["deny"]
                .as_str()
                .unwrap()
                .starts_with(&crate::harness::modified_told(
                    "a.txt: modified (content)\n"
                )),
            "{}",
            r.stdout
        );
    }
}

/// pi read lines 5-15 of a file (a range); someone adds a line at the top
/// and changes line 7. Its edit of line 12 is let through, and the edit's
/// result tells what else changed in the lines it read, where they are
/// now (nothing of the line at the top, which it never read). An edit
/// within 3 lines of the end of the lines read is refused.
#[test]
fn pi_an_edit_of_a_range_apart_from_an_outside_change_is_told_after() {
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let read = |p: &Fixtures| {
        p.env.write("a.txt", &text);
        let mut r = p.payload("tool_result_read_range");
        let shown: Vec<String> = (5..=15).map(|i| format!("line {i}")).collect();
        r["input"]["offset"] = 5.into();
        r["input"]["limit"] = 11.into();
        r["content"][0]["text"] = format!(
            "{}\n\n[5 more lines in file. Use offset=16 to continue.]",
            shown.join("\n")
        )
        .into();
        p.send(&r, &[]).expect(0, "").stderr_is("");
    };
    let edit = |p: &Fixtures, old: &str, event: &str| {
        let mut e = p.payload(event);
        e["input"]["edits"] = json!([{"oldText": old, "newText": "EDITED"}]);
        e
    };
    let p = pi();
    read(&p);
    let theirs = format!(
        "// header\n{}",
        text.replace("line 7\n", "line 7 formatted\n")
    );
    p.env.write("a.txt", &theirs);
    p.send(&edit(&p, "line 12", "tool_call_edit"), &[])
        .expect(0, "")
        .stderr_is("");
    // pi applies it to the file as it is.
    p.env
        .write("a.txt", theirs.replace("line 12\n", "EDITED\n"));
    p.send(&edit(&p, "line 12", "tool_result_edit"), &[])
        .expect(0, &context(
            "a.txt: modified (content)\n--- a.txt (as viewed, lines 5-15)\n+++ a.txt (now, lines 6-16)\n@@ -5,11 +6,11 @@\n line 5\n line 6\n-line 7\n+line 7 formatted\n line 8\n line 9\n line 10\n line 11\n EDITED\n line 13\n line 14\n line 15\n",
        ))
        .stderr_is("");
    let ev = p.env.run("fsview-session", &["events", "--sid", p.sid]);
    assert!(
        ev.stdout.contains("told after the result, lines 5-15"),
        "{}",
        ev.stdout
    );
    // Only outside the lines read: said in a line.
    let p = pi();
    read(&p);
    let theirs = text.replace("line 20\n", "line twenty\n");
    p.env.write("a.txt", &theirs);
    p.send(&edit(&p, "line 10", "tool_call_edit"), &[])
        .expect(0, "");
    p.env
        .write("a.txt", theirs.replace("line 10\n", "EDITED\n"));
    p.send(&edit(&p, "line 10", "tool_result_edit"), &[])
        .expect(
            0,
            &context("a.txt: modified (content): changed outside the lines viewed\n"),
        );
    // Within 3 lines of the end of the lines read: refused.
    let p = pi();
    read(&p);
    p.env
        .write("a.txt", text.replace("line 20\n", "line twenty\n"));
    let r = p.send(&edit(&p, "line 14", "tool_call_edit"), &[]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        v["deny"]
            .as_str()
            .unwrap()
            .starts_with("File has been modified since read"),
        "{}",
        r.stdout
    );
}
