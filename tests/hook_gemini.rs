//! fsview-hook gemini, fed the payloads the real gemini-cli 0.61.0 sent
//! (tests/fixtures/hooks/gemini-0.61.0, captured by `scripts/e2e-gemini
//! --save-fixtures`), answered with exact stdout JSON and exit codes.

use serde_json::{json, Value};

use crate::agent::{hook_path, line, partial, read_json, view, Agent, NOT_READ, PROCESSED};
use crate::harness::{self, Env};

/// The files as they were when the fixtures were captured.
const A_TXT: &str = "one\ntwo\nthree\n";

fn gemini() -> Agent {
    Agent::new("gemini", "gemini-0.61.0")
}

fn deny(reason: &str) -> String {
    line(json!({"decision": "deny", "reason": reason}))
}

fn context(event: &str, text: &str) -> String {
    line(json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}))
}

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("{i}\n")).collect()
}

#[test]
fn a_replace_of_a_file_never_read_is_denied_in_gemini_clis_format() {
    let a = gemini();
    a.env.write("a.txt", A_TXT);
    a.hook("before_replace", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    // No session file is made just to answer a check.
    assert!(!a.env.session.exists());
    // A new file needs no read.
    a.hook("before_write_create", &[]).expect(0, "");
}

#[test]
fn a_whole_read_is_a_full_view_and_changes_get_no_opinion() {
    let a = gemini();
    a.env.write("a.txt", A_TXT);
    a.hook("after_read_whole", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("a.txt"), view("full", "read", 1, 3, true));
    a.hook("before_replace", &[]).expect(0, "");
    a.hook("before_write_update", &[]).expect(0, "");
    a.hook("before_replace", &["--allow"]).expect(
        0,
        &line(json!({"decision": "allow", "reason": "The file may be changed."})),
    );
}

/// The lines under the "Status: Showing lines A-B" banner, as a range.
#[test]
fn a_range_read_is_the_lines_under_the_banner() {
    let a = gemini();
    a.env.write("a.txt", A_TXT);
    a.hook("after_read_range", &[]).expect(0, "");
    assert_eq!(a.view("a.txt"), view("range", "read", 2, 1, true));
    a.hook("before_replace", &[]).expect(0, "");
    a.hook("before_write_update", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
}

/// Without a range, read_file shows 2,000 lines of a longer file.
#[test]
fn the_first_page_of_a_long_file_is_a_start_view() {
    let a = gemini();
    a.env.write("long.txt", lines(2500));
    a.hook("after_read_first_page", &[]).expect(0, "");
    assert_eq!(a.view("long.txt"), view("start", "read", 1, 2000, true));
    let mut w = a.payload("before_write_update");
    w["tool_input"]["file_path"] = json!(a.env.path("long.txt"));
    a.send(&w, &[])
        .expect(0, &deny(&partial("lines 1-2000 of 2500")));
}

/// A file of exactly 2,000 lines comes with the banner all the same,
/// "lines 1-2000 of 2001" (N counts the empty piece after the final
/// newline): every line was shown, so it is a full view and may be
/// written; with one line more, it is the first page.
#[test]
fn a_file_of_exactly_two_thousand_lines_is_read_whole() {
    let read = |a: &Agent| {
        let mut r = a.payload("after_read_first_page");
        let content = r["tool_response"]["llmContent"]
            .as_str()
            .unwrap()
            .replace("of 2501 total lines", "of 2001 total lines");
        r["tool_response"]["llmContent"] = json!(content);
        r["tool_response"]["returnDisplay"] = json!("Read lines 1-2000 of 2001 from long.txt");
        r
    };
    let a = gemini();
    a.env.write("long.txt", lines(2000));
    a.send(&read(&a), &[]).expect(0, "");
    assert_eq!(a.view("long.txt"), view("full", "read", 1, 2000, true));
    let mut w = a.payload("before_write_update");
    w["tool_input"]["file_path"] = json!(a.env.path("long.txt"));
    a.send(&w, &[]).expect(0, "");
    // The same banner over a file that has more: the lines shown only.
    let b = gemini();
    b.env.write("long.txt", lines(2001));
    b.send(&read(&b), &[]).expect(0, "");
    assert_eq!(b.view("long.txt"), view("range", "read", 1, 2000, true));
}

/// A line over 2,000 characters is shown shortened: not the file's text.
#[test]
fn shortened_lines_are_a_processed_view() {
    let a = gemini();
    a.env
        .write("wide.txt", format!("short\n{}\nend\n", "y".repeat(2500)));
    a.hook("after_read_shortened", &[]).expect(0, "");
    assert_eq!(a.view("wide.txt").0, "processed");
    let mut e = a.payload("before_replace");
    e["tool_input"]["file_path"] = json!(a.env.path("wide.txt"));
    a.send(&e, &[]).expect(0, &deny(PROCESSED));
}

#[test]
fn crlf_empty_and_nested_reads_are_full_views() {
    let a = gemini();
    a.env.write("crlf.txt", "one\r\ntwo\r\n");
    a.env.write("empty.txt", "");
    a.env.write("sub/GEMINI.md", "Nested rules.\n");
    a.env.write("sub/x.txt", "x\n");
    a.hook("after_read_crlf", &[]).expect(0, "");
    a.hook("after_read_empty", &[]).expect(0, "");
    // The instruction files gemini-cli found on the way are cut off.
    a.hook("after_read_nested", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("crlf.txt"), view("full", "read", 1, 2, true));
    assert_eq!(a.view("empty.txt"), view("full", "read", 1, 0, true));
    assert_eq!(a.view("sub/x.txt"), view("full", "read", 1, 1, true));
    // Shown as gemini-cli attached it (trimmed): nothing recorded.
    assert_eq!(a.views("sub/GEMINI.md"), []);
    // A read that failed showed nothing.
    a.hook("after_read_missing", &[])
        .expect(0, "")
        .stderr_is("");
}

/// A change between read_file and its hook is told, never taken as seen
/// without being told.
#[test]
fn a_change_before_the_read_hook_is_reported() {
    let a = gemini();
    a.env.write("a.txt", "one\nTWO\nthree\n");
    // Told at once, after the read.
    a.hook("after_read_whole", &[]).expect(
        0,
        &context(
            "AfterTool",
            "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
        ),
    );
    assert_eq!(a.view("a.txt"), view("full", "read", 1, 3, true));
    a.hook("before_replace", &[]).expect(0, "");
    // The same with angle brackets, which gemini-cli escapes in context:
    // told after the read all the same, its `&` escaped too, under a line
    // saying how to read it back.
    let b = gemini();
    b.env.write("a.txt", "one\n<two> && &lt;\nthree\n");
    let mut p = b.payload("after_read_whole");
    p["tool_response"]["llmContent"] = "one\ntwo\nthree\n".into();
    b.send(&p, &[]).expect(
        0,
        &context(
            "AfterTool",
            "[fsview] gemini-cli shows this context HTML-escaped: read &lt; as a less-than sign, &gt; as a greater-than sign, &amp; as an ampersand.\nThese files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+<two> &amp;&amp; &amp;lt;\n three\n",
        ),
    );
    assert_eq!(b.view("a.txt"), view("full", "read", 1, 3, true));
    b.hook("before_replace", &[]).expect(0, "");
    // A refusal's reason reaches the model unescaped: carried as it is.
    let c = gemini();
    c.env.write("a.txt", "one\ntwo\nthree\n");
    c.hook("after_read_whole", &[]).expect(0, "");
    c.env.write("a.txt", "one\n<two>\nthree\n");
    c.hook("before_replace", &[]).expect(
        0,
        &deny(&crate::harness::modified_told(
            "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+<two>\n three\n",
        )),
    );
    c.hook("before_replace", &[]).expect(0, "");
}

#[test]
fn replace_and_write_file_record_what_the_file_now_holds() {
    let a = gemini();
    // Read whole, then replaced: the whole new text is known.
    a.env.write("a.txt", A_TXT);
    a.hook("after_read_whole", &[]).expect(0, "");
    a.env.write("a.txt", "one\nTWO\nthree\n");
    a.hook("after_replace", &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("a.txt"), view("full", "write", 1, 3, true));
    a.hook("before_write_update", &[]).expect(0, "");
    // Never read: only the line the replace wrote.
    let b = gemini();
    b.env.write("a.txt", "one\nTWO\nthree\n");
    b.hook("after_replace", &[]).expect(0, "");
    assert_eq!(b.view("a.txt"), view("range", "write", 2, 1, true));
    b.hook("before_write_update", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
    // A write is the whole file, held against the disk.
    b.env.write("b.txt", "bee\n");
    b.hook("after_write_create", &[]).expect(0, "");
    assert_eq!(b.view("b.txt"), view("full", "write", 1, 1, true));
    b.env
        .write("a.txt", "one\nTWO\nthree\nfour (a formatter)\n");
    // The formatter's change is told at once, whole: the view follows it.
    b.hook("after_write_update", &[]).expect(
        0,
        &context(
            "AfterTool",
            "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,4 +1,4 @@\n one\n TWO\n three\n-four\n+four (a formatter)\n",
        ),
    );
    assert_eq!(b.view("a.txt"), view("full", "read", 1, 4, true));
}

#[test]
fn before_agent_tells_each_change_once_escaped_as_gemini_shows_it() {
    let a = gemini();
    a.env.write("a.txt", A_TXT);
    a.hook("after_read_whole", &[]).expect(0, "");
    let mut page = a.payload("after_read_whole");
    page["tool_input"]["file_path"] = json!(a.env.path("page.html"));
    page["tool_response"]["llmContent"] = json!("<p>hi</p>\n");
    a.env.write("page.html", "<p>hi</p>\n");
    a.send(&page, &[]).expect(0, "");
    a.hook("before_agent", &[]).expect(0, "").stderr_is("");
    a.env.write("a.txt", "one\ntwo\nthree\nfour\n");
    a.env.write("page.html", "<p>bye</p>\n");
    let reminder = "\
[fsview] gemini-cli shows this context HTML-escaped: read &lt; as a less-than sign, &gt; as a greater-than sign, &amp; as an ampersand.
These files changed since you last saw them:

a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -1,3 +1,4 @@
 one
 two
 three
+four
page.html: modified (content)
--- page.html (as viewed)
+++ page.html (now)
@@ -1 +1 @@
-<p>hi</p>
+<p>bye</p>
";
    a.hook("before_agent", &[])
        .expect(0, &context("BeforeAgent", reminder))
        .stderr_is("");
    a.hook("before_agent", &[]).expect(0, "");
}

/// gemini-cli loads GEMINI.md itself and no payload says which: nothing
/// of them is recorded. Other names (--also) are sent and recorded as
/// sent (escaped as gemini-cli will show them, said so, when they hold
/// `<` or `>`), unless gemini-cli would alter them (an `@` it would read
/// a file at); CLAUDE.md, which gemini-cli never loads, is not taken as
/// seen.
#[test]
fn session_start_sends_only_what_gemini_does_not_load_and_alter() {
    let a = gemini();
    a.env.write("GEMINI.md", "Gemini rules.\n");
    a.env.write("CLAUDE.md", "Claude rules.\n");
    a.env
        .write("AGENTS.md", "Run make check; use Vec<u8> & co.\n");
    a.env.write("CONVENTIONS.md", "Mail ops@example.com.\n");
    a.hook("session_start_startup", &[])
        .expect(0, "")
        .stderr_is("");
    let args = [
        "--also",
        "AGENTS.md",
        "--also",
        "CONVENTIONS.md",
        "--also",
        "GEMINI.md",
    ];
    let text = format!(
        "[fsview] gemini-cli shows this context HTML-escaped: read &lt; as a less-than sign, &gt; as a greater-than sign, &amp; as an ampersand.\nInstruction files read by fsview (--also AGENTS.md, CONVENTIONS.md, GEMINI.md):\n\nContents of {} (project):\n\nRun make check; use Vec<u8> &amp; co.\n\n\n{} is left out: gemini-cli would read the files its at-signs name into the prompt; read it before you follow it.",
        a.env.path("AGENTS.md").display(),
        a.env.path("CONVENTIONS.md").display()
    );
    a.hook("session_start_startup", &args)
        .expect(0, &context("SessionStart", &text))
        .stderr_is("");
    assert_eq!(a.view("AGENTS.md"), view("full", "inject", 1, 1, true));
    for f in ["GEMINI.md", "CLAUDE.md", "CONVENTIONS.md"] {
        assert_eq!(a.views(f), [], "{f}");
    }
    // gemini-cli's --resume drops the first prompt, and the context in
    // front of it: it is sent again.
    a.hook("session_start_resume", &args)
        .expect(0, &context("SessionStart", &text));
}

#[test]
fn failures_fail_closed_for_the_gate_and_never_exit_1() {
    let a = gemini();
    // Not JSON: which event is unknown, so open; said to the user, not as
    // a bare line gemini-cli would take for "allow".
    let r = a.raw(b"not json", &[]);
    assert_eq!(r.code, 0);
    let out: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(out["systemMessage"]
        .as_str()
        .unwrap()
        .starts_with("fsview-hook: the hook payload is not JSON ("));
    assert!(r
        .stderr
        .starts_with("fsview-hook: the hook payload is not JSON ("));
    // The gate without a file_path: denied, saying why.
    let mut p = a.payload("before_replace");
    p["tool_input"].as_object_mut().unwrap().remove("file_path");
    a.send(&p, &[])
        .expect(
            0,
            &deny("fsview-hook could not check this change, so it is denied: the replace payload has no tool_input.file_path string"),
        )
        .stderr_is("fsview-hook: the replace payload has no tool_input.file_path string\n");
    // An event fsview does not answer: open.
    let mut e = a.payload("before_agent");
    e["hook_event_name"] = json!("AfterAgent");
    let r = a.send(&e, &[]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("\"systemMessage\""));
    // Closed outside the gate: exit 2, gemini-cli's blocking error.
    let r = a.send(&e, &["--on-error", "closed"]);
    assert_eq!((r.code, r.stdout.as_str()), (2, ""));
    // An unusable session file fails the gate closed.
    a.env.write("a.txt", A_TXT);
    std::fs::write(&a.env.session, "not a session file, just text\n").unwrap();
    let r = a.hook("before_replace", &[]);
    assert_eq!(r.code, 0);
    assert!(r
        .stdout
        .contains("fsview-hook could not check this change, so it is denied: "));
}

// -- fsview-hook install gemini ---------------------------------------------

fn wired(exe: &str) -> Value {
    let open = format!("{exe} gemini || {{ s=$?; [ $s -lt 126 ] && exit $s; exit 0; }}");
    let entry = |cmd: &str| json!([{"type": "command", "command": cmd, "name": "fsview"}]);
    json!({
        "BeforeTool": [{"matcher": "^(replace|write_file|run_shell_command)$", "hooks": entry(&format!("{exe} gemini --gate || exit 2"))},
                       {"matcher": "^invoke_agent$", "hooks": entry(&open)}],
        "AfterTool": [{"hooks": entry(&open)}],
        "SessionStart": [{"hooks": entry(&open)}],
        "BeforeAgent": [{"hooks": entry(&open)}]
    })
}

const TRUST: &str = "gemini-cli runs a project's hooks only in a trusted folder: trust this folder when gemini-cli asks (or list it in ~/.gemini/trustedFolders.json)\n";

#[test]
fn install_gemini_merges_into_the_project_settings_once() {
    let env = Env::new();
    let exe = hook_path();
    let file = env.write(
        ".gemini/settings.json",
        json!({"model": {"name": "gemini-3-pro"}, "hooks": {"BeforeTool": [
            {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}})
        .to_string(),
    );
    let events = "BeforeTool, AfterTool, SessionStart, BeforeAgent";
    let before = std::fs::read_to_string(&file).unwrap();
    let shown = file.display();
    env.run("fsview-hook", &["install", "gemini"]).expect(
        0,
        &format!("{shown}: {events} now run {exe} gemini\n{TRUST}"),
    );
    let mut want = wired(&exe);
    want["BeforeTool"] = json!([
        {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./guard.sh"}]},
        want["BeforeTool"][0].clone(),
        want["BeforeTool"][1].clone()
    ]);
    assert_eq!(
        read_json(&file),
        json!({"model": {"name": "gemini-3-pro"}, "hooks": want})
    );
    env.run("fsview-hook", &["install", "gemini", "--project"])
        .expect(
            0,
            &format!("{shown}: already runs {exe} gemini ({events}); nothing changed\n{TRUST}"),
        );
    env.run("fsview-hook", &["install", "gemini", "--uninstall"])
        .expect(
            0,
            &format!("{shown}: given back as it was before fsview-hook changed it\n"),
        );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    // gemini-cli has no settings for one user in one project.
    env.run("fsview-hook", &["install", "gemini", "--local"])
        .expect(2, "")
        .stderr_is("fsview-hook: gemini-cli has no settings for one user in one project; use --project or --user\n");
}

#[test]
fn install_gemini_for_the_user_follows_gemini_cli_home() {
    let env = Env::new();
    let home = env.root().join("gemini-home");
    let mut c = env.cmd(harness::bin("fsview-hook"));
    c.args(["install", "gemini", "--user"])
        .env("GEMINI_CLI_HOME", &home);
    let r = harness::output(c, None);
    let file = home.join(".gemini/settings.json");
    r.expect(
        0,
        &format!(
            "{}: BeforeTool, AfterTool, SessionStart, BeforeAgent now run {} gemini\n",
            file.display(),
            hook_path()
        ),
    );
    assert_eq!(read_json(&file), json!({"hooks": wired(&hook_path())}));
}

/// The fail-open suffix: a hook that cannot start exits 0 (gemini-cli
/// would block on 127), fsview-hook's own exit codes are kept.
#[test]
fn the_fail_open_suffix_keeps_fsview_hooks_codes_and_opens_on_a_missing_binary() {
    let env = Env::new();
    let suffix = "|| { s=$?; [ $s -lt 126 ] && exit $s; exit 0; }";
    for (cmd, code) in [
        ("true", 0),
        ("exit 2", 2),
        ("/nonexistent/fsview-hook gemini", 0),
        ("/dev/null gemini", 0),
    ] {
        let r = env.sh(&format!("{cmd} {suffix}"));
        assert_eq!(r.code, code, "{cmd}: {}", r.stderr);
    }
}

/// `@m1.txt @m2.txt @big.txt`: gemini-cli reads the files itself and puts
/// their text in the prompt, trimmed at both ends: each is a view (a file
/// over 2,000 lines its start), so an edit after it goes through.
#[test]
fn at_mentions_in_the_prompt_are_views() {
    let a = gemini();
    a.env.write("m1.txt", "one\ntwo\n");
    a.env.write("m2.txt", "bee   \nno newline");
    a.env.write(
        "big.txt",
        (1..=2500)
            .map(|i| format!("line {i} of a big file\n"))
            .collect::<String>(),
    );
    a.hook("before_agent_mentions", &[]).expect(0, "");
    assert_eq!(a.view("m1.txt"), view("full", "read", 1, 2, true));
    assert_eq!(a.view("m2.txt"), view("full", "read", 1, 2, true));
    assert_eq!(a.view("big.txt"), view("start", "read", 1, 2000, true));
    let mut w = a.payload("before_write_update");
    w["tool_input"]["file_path"] = json!(a.env.path("m1.txt"));
    a.send(&w, &[]).expect(0, "");
    w["tool_input"]["file_path"] = json!(a.env.path("big.txt"));
    a.send(&w, &[])
        .expect(0, &deny(&partial("lines 1-2000 of 2500")));
}

/// A subagent (invoke_agent) reports its calls with the conversation's id
/// and nothing of its own: what it reads between the start and the end of
/// invoke_agent is its own view, not the parent's, whose edit of the file
/// is still refused; the parent hears of what the subagent changed.
#[test]
fn a_subagents_reads_are_its_own() {
    let a = gemini();
    a.env.write("m1.txt", "one\ntwo\n");
    a.hook("before_invoke_agent", &[]).expect(0, "");
    a.hook("after_read_by_subagent", &[]).expect(0, "");
    let mut edit = a.payload("before_replace");
    edit["tool_input"]["file_path"] = json!(a.env.path("m1.txt"));
    // Inside the subagent's turn: its own read lets it edit.
    a.send(&edit, &[]).expect(0, "");
    a.hook("after_invoke_agent", &[]).expect(0, "");
    a.send(&edit, &[]).expect(0, &deny(NOT_READ));
    let parent = a.env.run(
        "fsview-session",
        &["show", "--sid", a.sid, "--agent", "main", "--json"],
    );
    assert_eq!(parent.stdout, "", "the parent saw nothing");
    let list = a.env.run("fsview-session", &["list", "--json"]).json();
    let sub: Vec<(Value, Value, Value)> = list
        .iter()
        .filter(|s| !s["agent"].is_null())
        .map(|s| {
            (
                s["agent"].clone(),
                s["agent_type"].clone(),
                s["views"].clone(),
            )
        })
        .collect();
    assert_eq!(
        sub,
        [(
            json!("codebase_investigator-1"),
            json!("codebase_investigator"),
            json!(1)
        )]
    );
}

/// gemini-cli 0.61.0 says nothing of a compression in any hook payload
/// (`PreCompress` fires before every model call, compressing or not); its
/// transcript sets the whole history anew, the summary in place of the
/// conversation's first messages (captured by `scripts/e2e-gemini
/// compaction-drops-views`: the session's context, then a prompt that
/// read a.txt and b.txt; a resume, which sets the same history again; then
/// a compression). The resume keeps the views; the compression releases
/// them, and a.txt, small, is given back by the refusal.
#[test]
fn a_compression_in_the_transcript_releases_the_views() {
    let a = gemini();
    a.env.write("a.txt", A_TXT);
    a.env.write("b.txt", "b.txt one\nb.txt two\n");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks/gemini-0.61.0/transcript_compression.jsonl");
    let text = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("@CWD@", &a.env.work.display().to_string());
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let cut = lines
        .iter()
        .position(|l| l.starts_with("{\"$set\":{\"messages\":") && l.contains("<state_snapshot>"))
        .unwrap();
    let transcript = a.env.root().join("session.jsonl");
    let with_transcript = |fixture: &str| {
        let mut p = a.payload(fixture);
        p["transcript_path"] = json!(transcript.display().to_string());
        p
    };
    std::fs::write(&transcript, lines[..cut].concat()).unwrap();
    a.send(&with_transcript("after_read_whole"), &[])
        .expect(0, "")
        .stderr_is("");
    a.send(&with_transcript("before_write_update"), &[])
        .expect(0, "")
        .stderr_is("");
    std::fs::write(&transcript, lines.concat()).unwrap();
    a.send(&with_transcript("before_write_update"), &[])
        .expect(
            0,
            &deny(&crate::hook_fixtures::unnumbered(
                &crate::hook_fixtures::given_after("compaction", A_TXT),
            )),
        )
        .stderr_is("");
    // Given back whole: the retry goes through.
    a.send(&with_transcript("before_write_update"), &[])
        .expect(0, "");
    // b.txt was read by a call the compression kept (its result came
    // after it): read back from the transcript, it is held, and a
    // write_file of it needs no read.
    let mut b = with_transcript("before_write_update");
    b["tool_input"]["file_path"] = json!(a.env.path("b.txt").display().to_string());
    a.send(&b, &[]).expect(0, "").stderr_is("");
    assert_eq!(a.view("b.txt"), view("full", "read", 1, 2, true));
}

/// Issue 41: a `replace` far from a change the file had since the read is
/// let through (gemini-cli gives no context before a tool), its record
/// keeps the view the model had, and the change, with the model's own
/// edit, is told after the result (escaped as gemini-cli shows context,
/// when it holds `<` or `>`). Nearer, or merging off: refused with the
/// change, unescaped.
#[test]
fn a_replace_far_from_an_outside_change_is_let_through_and_the_change_told_after() {
    const SEVEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n";
    let read = |a: &Agent| {
        a.env.write("a.txt", SEVEN);
        let mut r = a.payload("after_read_whole");
        r["tool_response"]["llmContent"] = SEVEN.into();
        a.send(&r, &[]).expect(0, "").stderr_is("");
    };
    let a = gemini();
    read(&a);
    let theirs = "one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n";
    a.env.write("a.txt", theirs);
    a.hook("before_replace", &[]).expect(0, "").stderr_is("");
    // gemini-cli applies it to the file as it is, and reports that text.
    let result = "one\nTWO\nthree\nfour\nfive\nsix\nSEVEN\n";
    a.env.write("a.txt", result);
    let mut after = a.payload("after_replace");
    after["tool_response"]["returnDisplay"]["originalContent"] = theirs.into();
    after["tool_response"]["returnDisplay"]["newContent"] = result.into();
    a.send(&after, &[]).expect(0, &context(
        "AfterTool",
        "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,7 +1,7 @@\n one\n-two\n+TWO\n three\n four\n five\n six\n-seven\n+SEVEN\n",
    ));
    assert_eq!(a.view("a.txt"), view("full", "read", 1, 7, true));
    let ev = a.env.run("fsview-session", &["events", "--sid", a.sid]);
    assert!(ev.stdout.contains("merged"), "{}", ev.stdout);
    // A change with angle brackets: merged the same, told escaped as
    // gemini-cli will show it.
    let c = gemini();
    read(&c);
    let theirs = "one\ntwo\nthree\nfour\nfive\nsix\n<seven>\n";
    c.env.write("a.txt", theirs);
    c.hook("before_replace", &[]).expect(0, "").stderr_is("");
    let result = "one\nTWO\nthree\nfour\nfive\nsix\n<seven>\n";
    c.env.write("a.txt", result);
    let mut after = c.payload("after_replace");
    after["tool_response"]["returnDisplay"]["originalContent"] = theirs.into();
    after["tool_response"]["returnDisplay"]["newContent"] = result.into();
    c.send(&after, &[]).expect(0, &context(
        "AfterTool",
        "[fsview] gemini-cli shows this context HTML-escaped: read &lt; as a less-than sign, &gt; as a greater-than sign, &amp; as an ampersand.\nThese files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,7 +1,7 @@\n one\n-two\n+TWO\n three\n four\n five\n six\n-seven\n+<seven>\n",
    ));
    assert_eq!(c.view("a.txt"), view("full", "read", 1, 7, true));
    // Within 3 lines of the edit; merging off: refused, the change
    // carried.
    for (change, args) in [
        ("one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n", &[][..]),
        (theirs, &["--on-change", "refuse"][..]),
    ] {
        let b = gemini();
        read(&b);
        b.env.write("a.txt", change);
        let r = b.hook("before_replace", args);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["decision"], "deny", "{}", r.stdout);
        assert!(
            v["reason"]
                .as_str()
                .unwrap()
                .starts_with(&harness::modified_told("a.txt: modified (content)\n")),
            "{}",
            r.stdout
        );
    }
}

/// An unchanged re-read, answered short only when asked (`--short-reads
/// on`): gemini-cli replaces a result only by blocking it, so the notice
/// is the reason of a block, with gemini-cli's own range parameters. By
/// default the read goes through as it is.
#[test]
fn an_unchanged_reread_is_blocked_with_the_notice_only_when_asked() {
    let a = gemini();
    a.env.write("a.txt", A_TXT);
    a.hook("after_read_whole", &[]).expect(0, "");
    a.hook("after_read_whole", &[]).expect(0, "").stderr_is("");
    let notice = "[fsview] a.txt is unchanged (3 lines) since you were last shown it: use that text; to reread, pass a start_line or end_line.";
    a.hook("after_read_whole", &["--short-reads", "on"])
        .expect(0, &line(json!({"decision": "block", "reason": notice})))
        .stderr_is("");
    // What changed meanwhile comes with it, unescaped (a reason is not
    // context).
    a.env.write("b.txt", "one\n");
    let mut b = a.payload("after_read_whole");
    b["tool_input"]["file_path"] = json!(a.env.path("b.txt"));
    b["tool_response"]["llmContent"] = json!("one\n");
    a.send(&b, &[]).expect(0, "");
    a.env.write("b.txt", "<one>\n");
    a.hook("after_read_whole", &["--short-reads", "on"]).expect(
        0,
        &line(json!({"decision": "block", "reason": format!("{notice}\n\nThese files changed since you last saw them:\n\nb.txt: modified (content)\n--- b.txt (as viewed)\n+++ b.txt (now)\n@@ -1 +1 @@\n-one\n+<one>\n")})),
    );
    // Changed: the read shows the new text.
    a.env.write("a.txt", "one\n");
    let mut changed = a.payload("after_read_whole");
    changed["tool_response"]["llmContent"] = json!("one\n");
    a.send(&changed, &["--short-reads", "on"]).expect(0, "");
}

/// Lines 5-15 of a file read (`start_line`/`end_line`); a line added at
/// the top and line 7 changed since. A `replace` of line 12 is let
/// through, its record keeps the lines as read, and what became of them
/// (the model's own edit with it) is told after the result, where they
/// are now.
#[test]
fn a_replace_of_a_range_apart_from_an_outside_change_is_told_after() {
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let a = gemini();
    a.env.write("a.txt", &text);
    let mut r = a.payload("after_read_range");
    let shown: Vec<String> = (5..=15).map(|i| format!("line {i}")).collect();
    r["tool_input"]["start_line"] = 5.into();
    r["tool_input"]["end_line"] = 15.into();
    r["tool_response"]["llmContent"] = format!(
        "\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines 5-15 of 20 total lines.\nAction: To read more of the file, you can use the 'start_line' and 'end_line' parameters in a subsequent 'read_file' call. For example, to read the next section of the file, use start_line: 16.\n\n--- FILE CONTENT (truncated) ---\n{}",
        shown.join("\n")
    )
    .into();
    a.send(&r, &[]).expect(0, "").stderr_is("");
    let theirs = format!(
        "// header\n{}",
        text.replace("line 7\n", "line 7 formatted\n")
    );
    a.env.write("a.txt", &theirs);
    let mut before = a.payload("before_replace");
    before["tool_input"]["old_string"] = "line 12".into();
    before["tool_input"]["new_string"] = "EDITED".into();
    a.send(&before, &[]).expect(0, "").stderr_is("");
    let result = theirs.replace("line 12\n", "EDITED\n");
    a.env.write("a.txt", &result);
    let mut after = a.payload("after_replace");
    after["tool_input"]["old_string"] = "line 12".into();
    after["tool_input"]["new_string"] = "EDITED".into();
    after["tool_response"]["returnDisplay"]["originalContent"] = theirs.clone().into();
    after["tool_response"]["returnDisplay"]["newContent"] = result.clone().into();
    a.send(&after, &[]).expect(0, &context(
        "AfterTool",
        "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed, lines 5-15)\n+++ a.txt (now, lines 6-16)\n@@ -5,11 +6,11 @@\n line 5\n line 6\n-line 7\n+line 7 formatted\n line 8\n line 9\n line 10\n line 11\n-line 12\n+EDITED\n line 13\n line 14\n line 15\n",
    ));
    let ev = a.env.run("fsview-session", &["events", "--sid", a.sid]);
    assert!(
        ev.stdout.contains("told after the result, lines 5-15"),
        "{}",
        ev.stdout
    );
}

/// gemini-cli keeps the last 32,000 characters of a long shell or MCP
/// result, AfterTool's context included: fsview's context stays under
/// that, measured as the model gets it, escaped (`<` is `&lt;`). A
/// 31,000-character line fits; the same line of `<` does not, and its
/// diff is left out.
#[test]
fn a_change_too_long_for_gemini_clis_cut_of_tool_results_is_left_out() {
    for (line, told) in [("x".repeat(31_000), true), ("<".repeat(31_000), false)] {
        let a = gemini();
        a.env.write("a.txt", A_TXT);
        a.hook("after_read_whole", &[]).expect(0, "");
        a.env.write("a.txt", format!("one\n{line}\nthree\n"));
        let got = a.hook("before_agent", &[]);
        let left_out = got.stdout.contains("(its diff is left out: gemini-cli keeps only the last 32,000 characters of a long tool result, its hook context included; read the file to see the change)");
        assert!(
            got.code == 0 && left_out != told && (!told || got.stdout.contains(&line)),
            "{:.400}",
            got.stdout
        );
    }
}
