//! fsview-hook opencode, fed what fsview's opencode plugin sent from the
//! real opencode 1.18.33 (tests/fixtures/hooks/opencode-1.18.33, captured
//! by `scripts/e2e-opencode --save-fixtures`): opencode's own hook objects
//! as `{"event", "directory", "input", "output"}`.

use serde_json::{json, Value};

use crate::hook_fixtures::{big, partial, reminder, view, Fixtures, NOT_READ};

const A_TXT: &str = "one\ntwo\nthree\n";

fn opencode() -> Fixtures {
    Fixtures::new("opencode", "opencode-1.18.33")
}

fn deny(reason: &str) -> String {
    format!("{}\n", json!({ "deny": reason }))
}

#[test]
fn opencode_edit_and_write_before_any_read_are_denied() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    o.hook("before_edit", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    o.hook("before_write_update", &[])
        .expect(0, &deny(NOT_READ));
    o.hook("before_write_create", &[]).expect(0, "");
}

/// display.text leaves out the last line's newline: the lines from line 1
/// that the disk holds whole are the whole file.
#[test]
fn opencode_a_whole_read_is_a_full_view() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    o.hook("after_read_whole", &[]).expect(0, "").stderr_is("");
    assert_eq!(o.view("a.txt"), view("full", "read", 1, 3, true));
    o.hook("before_edit", &[]).expect(0, "");
    o.hook("before_write_update", &[]).expect(0, "");
    // Without a final newline, the same text is the whole file too.
    let p = opencode();
    p.env.write("a.txt", "one\ntwo\nthree");
    p.hook("after_read_whole", &[]).expect(0, "");
    assert_eq!(p.view("a.txt"), view("full", "read", 1, 3, true));
    // A line added before the hook ran: the lines shown, no more.
    let q = opencode();
    q.env.write("a.txt", "one\ntwo\nthree\nfour\n");
    q.hook("after_read_whole", &[]).expect(0, "");
    assert_eq!(q.view("a.txt"), view("range", "read", 1, 3, true));
    q.hook("before_write_update", &[])
        .expect(0, &deny(&partial("lines 1-3 of 4")));
    // CRLF is shown as LF; an empty file is shown whole.
    o.env.write("crlf.txt", "one\r\ntwo\r\n");
    o.hook("after_read_crlf", &[]).expect(0, "");
    assert_eq!(o.view("crlf.txt"), view("full", "read", 1, 2, true));
    o.env.write("empty.txt", "");
    o.hook("after_read_empty", &[]).expect(0, "");
    assert_eq!(o.view("empty.txt"), view("full", "read", 1, 0, true));
}

#[test]
fn opencode_a_range_or_capped_read_records_its_lines() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    o.hook("after_read_range", &[]).expect(0, "");
    assert_eq!(o.view("a.txt"), view("range", "read", 2, 1, true));
    o.hook("before_write_update", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
    o.env
        .write("big.txt", big(2500, |i| format!("line {i} of a big file")));
    o.hook("after_read_capped", &[]).expect(0, "");
    assert_eq!(o.view("big.txt"), view("start", "read", 1, 2000, true));
}

/// "... (line truncated to 2000 chars)": that line, and those after it,
/// were not shown as they are.
#[test]
fn opencode_a_cut_line_is_not_recorded() {
    let o = opencode();
    o.env
        .write("long.txt", format!("{}\nshort\n", "x".repeat(3000)));
    o.hook("after_read_long_line", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(o.view("long.txt"), None);
    let mut p = o.payload("after_read_long_line");
    p["output"]["metadata"]["display"]["text"] = json!(format!(
        "short\n{}... (line truncated to 2000 chars)",
        "y".repeat(2000)
    ));
    o.env
        .write("long.txt", format!("short\n{}\n", "y".repeat(3000)));
    o.send(&p, &[]).expect(0, "");
    assert_eq!(o.view("long.txt"), view("start", "read", 1, 1, true));
}

/// An edit reports only its diff: applied to the agent's view.
#[test]
fn opencode_an_edit_applies_its_diff_to_the_view_it_had() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    o.hook("after_read_whole", &[]).expect(0, "");
    o.env.write("a.txt", "one\nTWO\nthree\n");
    o.hook("after_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(o.view("a.txt"), view("full", "write", 1, 3, true));
    o.hook("before_write_update", &[]).expect(0, "");
    // A formatter ran after the edit: the agent does not know its change.
    let p = opencode();
    p.env.write("a.txt", A_TXT);
    p.hook("after_read_whole", &[]).expect(0, "");
    p.env.write("a.txt", "one\nTWO\nthree\n// formatted\n");
    // ... until the edit's own result tells it, whole: then it holds it.
    p.hook("after_edit", &[]).expect(
        0,
        &format!(
            "{}\n",
            json!({ "context": "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,4 @@\n one\n TWO\n three\n+// formatted\n" })
        ),
    );
    assert_eq!(p.view("a.txt").map(|v| v.4), Some(true));
    p.hook("before_edit", &[]).expect(0, "");
    // Changed again, unseen: refused with the whole change, and the retry
    // goes through.
    p.env
        .write("a.txt", "one\nTWO\nthree\n// formatted\n// again\n");
    p.hook("before_edit", &[]).expect(
        0,
        &deny(&crate::harness::modified_told(
            "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,4 +1,5 @@\n one\n TWO\n three\n // formatted\n+// again\n",
        )),
    );
    p.hook("before_edit", &[]).expect(0, "");
    // No view: nothing known, nothing recorded, no noise.
    let q = opencode();
    q.env.write("a.txt", "one\nTWO\nthree\n");
    q.hook("after_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(q.view("a.txt"), None);
}

#[test]
fn opencode_a_write_is_a_full_view() {
    let o = opencode();
    o.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    o.hook("after_write_update", &[]).expect(0, "");
    assert_eq!(o.view("a.txt"), view("full", "write", 1, 4, true));
    o.env.write("b.txt", "bee\n");
    o.hook("after_write_create", &[]).expect(0, "");
    assert_eq!(o.view("b.txt"), view("full", "write", 1, 1, true));
}

/// The plugin adds the context to the user's message as it is: a diff
/// with < and > is sent whole.
#[test]
fn opencode_a_change_is_told_at_the_next_message_verbatim() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    o.hook("after_read_whole", &[]).expect(0, "");
    o.hook("chat_message", &[]).expect(0, "");
    o.env.write("a.txt", "one\nVec<u8>\nthree\n");
    let diff =
        "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+Vec<u8>\n three\n";
    o.hook("chat_message", &[]).expect(
        0,
        &format!("{}\n", json!({ "context": reminder("a.txt", diff) })),
    );
    o.hook("chat_message", &[]).expect(0, "");
}

#[test]
fn opencode_the_gate_fails_closed_in_the_plugins_terms() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    let mut p = o.payload("before_edit");
    p.as_object_mut().unwrap().remove("directory");
    o.send(&p, &[])
        .expect(0, &deny("fsview-hook could not check this change, so it is denied: the tool.execute.before payload has no directory string"))
        .stderr_is("fsview-hook: the tool.execute.before payload has no directory string\n");
    // Outside the gate: open.
    let mut p = o.payload("after_read_whole");
    p.as_object_mut().unwrap().remove("directory");
    o.send(&p, &[])
        .expect(0, "")
        .stderr_is("fsview-hook: the tool.execute.after payload has no directory string\n");
    o.raw(br#"{"event": "session.idle"}"#, &[]).expect(0, "").stderr_is(
        "fsview-hook: plugin event \"session.idle\" is not one fsview-hook opencode answers (tool.execute.before, tool.execute.after, chat.message, session.compacted)\n",
    );
}

#[test]
fn opencode_install_writes_the_plugin_and_leaves_a_foreign_one_alone() {
    let env = crate::harness::Env::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(env.path(""))
        .status()
        .unwrap();
    assert!(git.success());
    let exe = std::fs::canonicalize(crate::harness::bin("fsview-hook")).unwrap();
    let exe = exe.display().to_string();
    env.run("fsview-hook", &["install", "opencode"]).expect(
        0,
        &format!("{}: tool.execute.before, tool.execute.after, chat.message, session.compacted now run {exe} opencode\nopencode loads the plugin when it next starts (not with --pure); it needs no other setting.\n", env.path(".opencode/plugins/fsview.js").display()),
    );
    let file = env.path(".opencode/plugins/fsview.js");
    let js = std::fs::read_to_string(&file).unwrap();
    assert!(js.contains(&format!("const HOOK = {};", Value::from(exe.as_str()))));
    assert!(js.contains("const ARGS = [];"));
    env.run("fsview-hook", &["install", "opencode", "--quiet"])
        .expect(0, "");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), js);
    env.run(
        "fsview-hook",
        &["install", "opencode", "--also", "X.md", "--quiet"],
    )
    .expect(0, "");
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains(r#"const ARGS = ["--also","X.md"];"#));
    env.run("fsview-hook", &["install", "opencode", "--uninstall"])
        .expect(
            0,
            &format!(
                "{}: removed (fsview-hook had made it)\n{}: removed (made for fsview-hook's files, now empty)\n{}: removed (made for fsview-hook's files, now empty)\n",
                file.display(),
                env.path(".opencode/plugins").display(),
                env.path(".opencode").display()
            ),
        );
    assert!(!env.path(".opencode").exists());
    env.write(
        ".opencode/plugins/fsview.js",
        "export const Mine = async () => ({});\n",
    );
    env.run("fsview-hook", &["install", "opencode", "--uninstall"])
        .expect(2, "")
        .stderr_is(&format!("fsview-hook: {} is not one fsview-hook wrote; move it away first, nothing was changed\n", file.display()));
    let mut c = env.cmd(crate::harness::bin("fsview-hook"));
    c.args(["install", "opencode", "--user", "--quiet"])
        .env("XDG_CONFIG_HOME", env.root().join("xdg"));
    crate::harness::output(c, None).expect(0, "");
    assert!(env.root().join("xdg/opencode/plugins/fsview.js").exists());
}

/// The `session.compacted` bus event, as the plugin hands it on: the
/// conversation is a summary now, and what it was shown no longer counts.
#[test]
fn opencode_a_compaction_drops_the_views() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    o.hook("after_read_whole", &[]).expect(0, "");
    o.hook("before_edit", &[]).expect(0, "");
    let sid = o.payload("after_read_whole")["input"]["sessionID"].clone();
    let compacted = json!({"event": "session.compacted",
        "directory": o.env.work.display().to_string(),
        "input": {"sessionID": sid}, "output": {}});
    o.send(&compacted, &[]).expect(0, "").stderr_is("");
    // a.txt is small: the refusal gives it back whole, and the retry goes
    // through without a read.
    let r = o.hook("before_edit", &[]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains(
            "no longer in the conversation (compaction). Its whole text is below (3 lines"
        ) && r.stdout.contains("1\\tone\\n2\\ttwo\\n3\\tthree"),
        "{}",
        r.stdout
    );
    o.hook("before_edit", &[]).expect(0, "");
}

/// `rel`, holding [`A_TXT`], read whole by the call `call`.
fn read_in_call(o: &Fixtures, rel: &str, call: &str) {
    o.env.write(rel, A_TXT);
    let mut p = o.payload("after_read_whole");
    p["input"]["callID"] = json!(call);
    for at in ["/input/args/filePath", "/output/args/filePath"] {
        if let Some(v) = p.pointer_mut(at) {
            *v = json!(o.env.path(rel).display().to_string());
        }
    }
    o.send(&p, &[]).expect(0, "").stderr_is("");
}

/// A compaction that kept a tail (opencode 1.18.33's `tail_start_id`): the
/// plugin sends the ids of the calls whose results the kept tail holds
/// (`output.kept`, seen in `scripts/e2e-opencode compaction-keeps-tail`),
/// and the views those calls showed stay held; every other is released.
/// An empty list keeps none; a list that is not of strings is no list.
#[test]
fn opencode_a_compaction_keeps_the_views_of_the_calls_it_kept() {
    let check = |o: &Fixtures, rel: &str| {
        let r = o.env.run("fsview-check-edit", &["--sid", o.sid, rel]);
        let verdict = r.stdout.split_whitespace().nth(1).unwrap_or_default();
        verdict.trim_end_matches(':').to_string()
    };
    for (kept, a, b) in [
        (json!(["call_b", "call_other"]), "not_read", "ok"),
        (json!([]), "not_read", "not_read"),
        (json!(["call_b", 7]), "not_read", "not_read"),
    ] {
        let o = opencode();
        read_in_call(&o, "a.txt", "call_a");
        read_in_call(&o, "b.txt", "call_b");
        let sid = o.payload("after_read_whole")["input"]["sessionID"].clone();
        let compacted = json!({"event": "session.compacted",
            "directory": o.env.work.display().to_string(),
            "input": {"sessionID": sid}, "output": {"kept": kept}});
        o.send(&compacted, &[]).expect(0, "").stderr_is("");
        assert_eq!(
            (check(&o, "a.txt"), check(&o, "b.txt")),
            (a.into(), b.into()),
            "{kept}"
        );
    }
}

/// opencode's pruning of old tool outputs (`compaction.prune`): the plugin
/// sends the ids of the calls pruned since with the next user message
/// (`output.pruned`, seen in `scripts/e2e-opencode prune-drops-views`);
/// their views are released before the reminder, the others stay held.
#[test]
fn opencode_pruned_results_release_their_views() {
    let o = opencode();
    for (rel, call) in [("a.txt", "call_a"), ("b.txt", "call_b")] {
        read_in_call(&o, rel, call);
    }
    let mut m = o.payload("chat_message");
    m["output"]["pruned"] = json!(["call_a"]);
    // b.txt changed meanwhile: the reminder still tells it.
    o.env.write("b.txt", "one\ntwo\nTHREE\n");
    let r = o.send(&m, &[]);
    assert!(
        r.stdout.contains("b.txt: modified (content)"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("a.txt"), "{}", r.stdout);
    let check = |rel: &str| {
        let r = o.env.run("fsview-check-edit", &["--sid", o.sid, rel]);
        r.stdout
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        (check("a.txt"), check("b.txt")),
        ("not_read:".into(), "ok".into())
    );
    let ev = o
        .env
        .run("fsview-session", &["events", "--sid", o.sid, "--json"]);
    let released: Vec<Value> = ev
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["action"] == "release")
        .collect();
    assert_eq!(released.len(), 1, "{}", ev.stdout);
    assert_eq!(
        released[0]["detail"],
        "1 views no longer held, 0 held again"
    );
}

/// Kilo prunes in the middle of a prompt too (its payload limit, on by
/// default: `scripts/e2e-kilo payload-prune-drops-views`): the plugin
/// sends the calls pruned since with the gate's payload (`pruned`), and
/// their views are released before the gate answers.
#[test]
fn opencode_calls_pruned_before_a_gate_release_their_views_first() {
    let o = opencode();
    read_in_call(&o, "a.txt", "call_a");
    let gate = o.payload("before_write_update");
    o.send(&gate, &[]).expect(0, "").stderr_is("");
    let mut pruned = gate.clone();
    pruned["pruned"] = json!(["call_a"]);
    o.send(&pruned, &[]).expect(
        0,
        &deny(
            "File has not been read yet: what you were shown of it is no longer in the conversation (compaction). \
             Its whole text is below (3 lines, numbered as a read shows them): you have now read it, so retry your \
             change against it (no need to read it again).\n\n1\tone\n2\ttwo\n3\tthree\n",
        ),
    );
    // After a tool, likewise: released before what changed is told.
    read_in_call(&o, "b.txt", "call_b");
    let mut after = o.payload("after_edit");
    after["pruned"] = json!(["call_b"]);
    o.send(&after, &[]);
    let r = o.env.run("fsview-check-edit", &["--sid", o.sid, "b.txt"]);
    assert!(r.stdout.starts_with("b.txt: not_read"), "{}", r.stdout);
}

/// opencode gives GPT models apply_patch (`args.patchText`, Codex's patch
/// format) instead of edit and write: the gate for each file of a patch,
/// and what the applied patch made of it (issue 21).
#[test]
fn opencode_apply_patch_is_gated_and_recorded() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    o.hook("before_apply_patch_update", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    // Adding a file that is not there needs no read; over one that is, a
    // whole-file write needs all of it seen.
    o.hook("before_apply_patch_add", &[]).expect(0, "");
    o.env.write("b.txt", "the user's b\n");
    o.hook("before_apply_patch_add", &[])
        .expect(0, &deny(NOT_READ));
    o.hook("before_apply_patch_delete", &[])
        .expect(0, &deny(NOT_READ));
    // Read whole: the patch goes through, and the file is what the patch
    // made of what was read.
    o.hook("after_read_whole", &[]).expect(0, "");
    o.hook("before_apply_patch_update", &[]).expect(0, "");
    o.env.write("a.txt", "one\nTWO\nthree\n");
    o.hook("after_apply_patch_update", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(o.view("a.txt"), view("full", "write", 1, 3, true));
    // An added file is what the patch wrote; a deleted one is forgotten.
    o.env.write("b.txt", "bee\n");
    o.hook("after_apply_patch_add", &[]).expect(0, "");
    assert_eq!(o.view("b.txt"), view("full", "write", 1, 1, true));
    std::fs::remove_file(o.env.path("b.txt")).unwrap();
    o.hook("after_apply_patch_delete", &[]).expect(0, "");
    assert_eq!(o.view("b.txt"), None);
    // The plugin passes --gate before a change: a payload it cannot read
    // is denied.
    o.raw(b"not json", &["--gate"]).expect(
        0,
        &deny("fsview-hook could not check this change, so it is denied: the payload is not a JSON object; fsview-hook opencode reads what fsview's opencode plugin sends on stdin"),
    );
}

/// Issue 41's race on a patch: a formatter changes line 1 of a file
/// opencode read whole while its apply_patch of line 10 is on its way.
/// Let through (the patch applies to the file as it is), the change told
/// after it; within 3 lines of the change: refused with it.
#[test]
fn opencode_a_patch_far_from_an_outside_change_is_let_through_and_the_change_told_after() {
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let formatted = base.replacen("line 1\n", "line 1 (formatted)\n", 1);
    let read = |o: &Fixtures| {
        o.env.write("a.txt", &base);
        let mut p = o.payload("after_read_whole");
        let shown = base.trim_end();
        p["output"]["metadata"]["display"]["text"] = json!(shown);
        p["output"]["metadata"]["display"]["lineEnd"] = json!(12);
        p["output"]["metadata"]["display"]["totalLines"] = json!(12);
        o.send(&p, &[]).expect(0, "").stderr_is("");
        o.env.write("a.txt", &formatted);
    };
    let with_patch = |o: &Fixtures, fixture: &str, chunk: &str| {
        let text = format!("*** Begin Patch\n*** Update File: a.txt\n@@\n{chunk}*** End Patch");
        let mut p = o.payload(fixture);
        for at in ["/output/args/patchText", "/input/args/patchText"] {
            if let Some(v) = p.pointer_mut(at) {
                *v = json!(text);
            }
        }
        p
    };
    let far = " line 9\n-line 10\n+line ten\n line 11\n";
    let diff = "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,9 +1,9 @@\n-line 1\n+line 1 (formatted)\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n";
    let o = opencode();
    read(&o);
    o.send(&with_patch(&o, "before_apply_patch_update", far), &[])
        .expect(0, "")
        .stderr_is("");
    o.env
        .write("a.txt", formatted.replace("line 10\n", "line ten\n"));
    let r = o.send(&with_patch(&o, "after_apply_patch_update", far), &[]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["context"], json!(reminder("a.txt", diff)), "{}", r.stdout);
    assert_eq!(o.view("a.txt"), view("full", "read", 1, 12, true));
    let near = " line 1\n-line 2\n+line two\n";
    let p = opencode();
    read(&p);
    let r = p.send(&with_patch(&p, "before_apply_patch_update", near), &[]);
    assert!(
        r.stdout.contains("File has been modified since read")
            && r.stdout.contains("+line 1 (formatted)"),
        "{}",
        r.stdout
    );
}

/// After an MCP tool, the plugin says how much room opencode's cut of the
/// result (2,000 lines or 51,200 bytes, the plugin's text included) leaves
/// (`room`): a reminder that fits is told; one that does not waits for
/// the next tool's result (and is not recorded as told).
#[test]
fn opencode_after_an_mcp_tool_a_reminder_is_told_only_within_its_room() {
    let o = opencode();
    o.env.write("a.txt", A_TXT);
    o.hook("after_read_whole", &[]).expect(0, "");
    o.env.write("a.txt", "one\n2\nthree\n");
    let mut mcp = o.payload("after_read_whole");
    mcp["input"]["tool"] = json!("probe_big");
    mcp["input"]["args"] = json!({"bytes": 51000});
    mcp["output"] = json!({});
    let told = reminder(
        "a.txt",
        "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n",
    );
    for (bytes, lines) in [
        (told.len() - 1, 100),
        (told.len(), told.lines().count() - 1),
    ] {
        mcp["room"] = json!({"bytes": bytes, "lines": lines});
        o.send(&mcp, &[]).expect(0, "").stderr_is("");
    }
    mcp["room"] = json!({"bytes": told.len(), "lines": told.split('\n').count()});
    o.send(&mcp, &[])
        .expect(0, &format!("{}\n", json!({ "context": told })))
        .stderr_is("");
    // Told once.
    o.send(&mcp, &[]).expect(0, "");
}
