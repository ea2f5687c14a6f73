//! Every agent's shell tool under fsview-hook, fed the payloads each real
//! binary sent (`*_shell_*` fixtures, captured by `scripts/e2e-AGENT
//! --save-fixtures capture-shell`): a write through the shell is gated like
//! the agent's write tool (issue 21), and what a read command printed
//! counts as seen, held to the text shown (issue 20).

use serde_json::{json, Value};

use crate::agent::{line, partial, view, Agent, NOT_READ};
use crate::hook_fixtures::given_modified;

const A_TXT: &str = "one\ntwo\nthree\n";

/// The files as they were when the shell's fixtures were captured.
fn files(a: &Agent) {
    a.env.write("a.txt", A_TXT);
    a.env.write("crlf.txt", b"one\r\ntwo\r\n");
    a.env.write("empty.txt", "");
    a.env.write("lead.txt", "\n\n  lead\ttab  \nx  \n\n");
    let big: String = (1..=5000)
        .map(|i| format!("line {i} of a big file with some words in it\n"))
        .collect();
    a.env.write("big.txt", big);
}

/// Claude Code's, Codex's and Qwen Code's refusal.
fn claude_deny(reason: &str) -> String {
    line(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }}))
}

/// The reads every agent's shell shows, as the agent reported them: each a
/// view of the lines printed, held to the disk.
fn reads_are_views(a: &Agent) {
    reads_but_empty_are_views(a);
    a.hook("post_shell_cat_empty", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(a.view("empty.txt"), view("full", "read", 1, 0, true));
}

/// The same, but for an empty file, which shows the agent's words for "no
/// output" ("Command completed successfully", "(no output)"): no view.
fn reads_but_empty_are_views(a: &Agent) {
    files(a);
    for f in [
        "post_shell_cat",
        "post_shell_cat_crlf",
        "post_shell_sed_range",
        "post_shell_nl_sed",
    ] {
        a.hook(f, &[]).expect(0, "").stderr_is("");
    }
    assert_eq!(
        a.views("a.txt"),
        [
            view("full", "read", 1, 3, true),
            view("range", "read", 2, 2, true),
            view("range", "read", 1, 2, true),
        ]
    );
    assert_eq!(a.view("crlf.txt"), view("full", "read", 1, 2, true));
}

/// The gate before a command, for each file it writes.
fn writes_are_gated(a: &Agent, deny: fn(&str) -> String) {
    files(a);
    // sed -i edits in place: a fresh view of the file.
    a.hook("pre_shell_sed_in_place", &[])
        .expect(0, &deny(NOT_READ));
    a.hook("post_shell_sed_range", &[]).expect(0, "");
    a.hook("pre_shell_sed_in_place", &[]).expect(0, "");
    a.env.write("a.txt", "one\ntwo\nthree\nthe user's line\n");
    // Refused, with the small file given back whole (issue 25).
    let given = given_modified("one\ntwo\nthree\nthe user's line\n");
    let given = match crate::hook_fixtures::numbers_reads(a.name) {
        true => given,
        false => crate::hook_fixtures::unnumbered(&given),
    };
    a.hook("pre_shell_sed_in_place", &[])
        .expect(0, &deny(&given));
    // A whole-file write: a fresh view of all of it; a new file: none.
    a.hook("pre_shell_heredoc_write", &[]).expect(0, "");
    a.env.write("new.txt", "the user's new file\n");
    a.hook("pre_shell_heredoc_write", &[])
        .expect(0, &deny(NOT_READ));
    a.env.write("a.txt", A_TXT);
    a.hook("post_shell_sed_range", &[]).expect(0, "");
    let over = a.with_command("pre_shell_heredoc_write", "cat > a.txt <<'EOF'\nx\nEOF");
    a.send(&over, &[])
        .expect(0, &deny(&partial("lines 2-3 of 3")));
    // An append loses nothing; a command that writes nothing, nothing.
    a.hook("pre_shell_append", &[]).expect(0, "");
    a.hook("pre_shell_other", &[]).expect(0, "");
    a.hook("pre_shell_cat", &[]).expect(0, "");
}

/// A file a command wrote with a text it spelled out is what the agent
/// wrote: its next edit needs no read. Only where the disk holds exactly
/// that text.
fn heredoc_writes_are_written(a: &Agent) {
    files(a);
    a.env.write("new.txt", "new file\n");
    a.hook("post_shell_heredoc_write", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(a.view("new.txt"), view("full", "write", 1, 1, true));
    let b = Agent::new(a.name, a.fixtures);
    files(&b);
    b.env.write("new.txt", "new file\nand a formatter's line\n");
    b.hook("post_shell_heredoc_write", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(b.views("new.txt"), []);
}

fn claude() -> Agent {
    Agent::new("claude", "claude-2.1.332")
}

#[test]
fn claude_bash_reads_are_views() {
    let a = claude();
    reads_are_views(&a);
    // Claude Code removes blank lines at the start and whitespace at the
    // end of an output: every other character was shown.
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // An output too large is saved to a file: the model got a preview the
    // payload does not hold, so nothing is taken as seen.
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    assert_eq!(a.views("big.txt"), []);
    // Output that is not the file's: nothing.
    a.env.write("crlf.txt", "changed\n");
    let b = claude();
    files(&b);
    b.env.write("a.txt", "one\nTWO\nthree\n");
    b.hook("post_shell_cat", &[]).expect(0, "");
    assert_eq!(b.views("a.txt"), []);
}

#[test]
fn claude_bash_writes_are_gated() {
    writes_are_gated(&claude(), claude_deny);
}

#[test]
fn claude_bash_heredoc_writes_are_written() {
    heredoc_writes_are_written(&claude());
}

fn codex() -> Agent {
    Agent::new("codex", "codex-0.171.0")
}

#[test]
fn codex_shell_reads_are_views() {
    let a = codex();
    reads_are_views(&a);
    // Codex shows the output as it is.
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // Cut in the middle: the lines before the cut.
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    assert_eq!(a.view("big.txt"), view("start", "read", 1, 446, true));
}

/// Codex's two shell bugs (issue 20): `cat` of an empty file showed the
/// empty file, and a command run on a terminal (`tty: true`, which the hook
/// is not told) printed each "\n" as "\r\n".
#[test]
fn codex_an_empty_file_and_a_terminal_are_views() {
    let a = codex();
    files(&a);
    a.hook("post_shell_cat_empty", &[]).expect(0, "");
    assert_eq!(a.view("empty.txt"), view("full", "read", 1, 0, true));
    let patch = "*** Begin Patch\n*** Add File: empty.txt\n+now it has a line\n*** End Patch\n";
    a.send(
        &a.with_command(
            "pre_shell_patch_cd_unspaced",
            &format!("apply_patch <<'EOF'\n{patch}EOF\n"),
        ),
        &[],
    )
    .expect(0, "");
    // Codex applies it (with no report after).
    a.env.write("empty.txt", "now it has a line\n");
    a.env.write("a.txt", "ONE\ntwo\nthree\n");
    a.hook("post_shell_cat_tty", &[]).expect(0, "");
    assert_eq!(a.view("a.txt"), view("full", "read", 1, 3, true));
    a.hook("post_shell_cat_crlf_tty", &[]).expect(0, "");
    assert_eq!(a.view("crlf.txt"), view("full", "read", 1, 2, true));
    // The same output from a CRLF file, with no terminal: the file as is.
    let b = codex();
    files(&b);
    b.env.write("a.txt", "ONE\r\ntwo\r\nthree\r\n");
    b.hook("post_shell_cat_tty", &[]).expect(0, "");
    assert_eq!(b.view("a.txt"), view("full", "read", 1, 3, true));
}

#[test]
fn codex_shell_writes_are_gated() {
    writes_are_gated(&codex(), claude_deny);
}

#[test]
fn codex_heredoc_writes_are_written() {
    heredoc_writes_are_written(&codex());
}

/// The apply_patch here-documents Codex takes from a command line (issue
/// 21): after `cd DIR &&` with DIR quoted, or with no space around `&&`,
/// gated on the file in DIR; a file one creates is held to its text, so
/// the next patch of it needs no read; a here-document inside another
/// command's here-document is that command's input, not a patch.
#[test]
fn codex_patches_in_the_forms_codex_takes() {
    let a = codex();
    files(&a);
    a.env.write("my dir/f.txt", "old\n");
    a.env.write("f.txt", "a file of the same name elsewhere\n");
    a.hook("pre_shell_patch_cd_quoted", &[])
        .expect(0, &claude_deny(NOT_READ));
    let mut read = a.with_command("post_shell_cat", "cat 'my dir/f.txt'");
    read["tool_response"] = json!("old\n");
    a.send(&read, &[]).expect(0, "");
    a.hook("pre_shell_patch_cd_quoted", &[]).expect(0, "");
    assert_eq!(a.view("my dir/f.txt"), view("full", "write", 1, 1, false));
    a.env.write("my dir/f.txt", "new\n");
    assert_eq!(a.view("my dir/f.txt"), view("full", "write", 1, 1, true));
    // cd sub&&apply_patch, adding a file: it needs no read, and is known.
    std::fs::create_dir_all(a.env.path("sub")).unwrap();
    a.hook("pre_shell_patch_cd_unspaced", &[]).expect(0, "");
    a.env.write("sub/added.txt", "added\n");
    assert_eq!(a.view("sub/added.txt"), view("full", "write", 1, 1, true));
    let update =
        "*** Begin Patch\n*** Update File: added.txt\n@@\n-added\n+changed\n*** End Patch\n";
    a.send(
        &a.with_command(
            "pre_shell_patch_cd_unspaced",
            &format!("cd sub && apply_patch <<'EOF'\n{update}EOF\n"),
        ),
        &[],
    )
    .expect(0, "");
    // A patch quoted in another here-document: not a patch of a.txt, but
    // a write of notes.md.
    let b = codex();
    files(&b);
    b.hook("pre_shell_patch_in_heredoc", &[]).expect(0, "");
    b.env.write("notes.md", "the user's notes\n");
    b.hook("pre_shell_patch_in_heredoc", &[])
        .expect(0, &claude_deny(NOT_READ));
    assert_eq!(b.views("a.txt"), []);
}

fn gemini() -> Agent {
    Agent::new("gemini", "gemini-0.61.0")
}

fn gemini_deny(reason: &str) -> String {
    line(json!({"decision": "deny", "reason": reason}))
}

/// The whole lines of the first `n` characters of what gemini-cli showed
/// of `cat big.txt` (the prefix included).
fn big_lines_within(n: usize) -> u64 {
    let shown = n - "<untrusted_context>\nOutput: ".len();
    let line = |i: usize| format!("line {i} of a big file with some words in it\n").len();
    let (mut used, mut lines) = (0, 0);
    while used + line(lines + 1) <= shown {
        lines += 1;
        used += line(lines);
    }
    lines as u64
}

#[test]
fn gemini_shell_reads_are_views() {
    let a = gemini();
    reads_are_views(&a);
    // gemini-cli trims the output at both ends: every other character was
    // shown.
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // The hook sees the whole output; the model gets the first fifth of
    // tools.truncateToolOutputThreshold characters (40,000 by default).
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    let n = big_lines_within(8_000);
    assert_eq!(a.view("big.txt"), view("start", "read", 1, n, true));
    // A lower threshold in the project's settings: fewer lines.
    let b = gemini();
    files(&b);
    b.env.write(
        ".gemini/settings.json",
        r#"{"tools": {"truncateToolOutputThreshold": 10000}}"#,
    );
    b.hook("post_shell_cat_big", &[]).expect(0, "");
    let n = big_lines_within(2_000);
    assert_eq!(b.view("big.txt"), view("start", "read", 1, n, true));
}

#[test]
fn gemini_shell_writes_are_gated() {
    writes_are_gated(&gemini(), gemini_deny);
}

#[test]
fn gemini_shell_heredoc_writes_are_written() {
    heredoc_writes_are_written(&gemini());
}

/// A view's kind, source, offset and freshness, and its line count apart.
fn start_view(a: &Agent, rel: &str) -> u64 {
    let (kind, source, offset, lines, fresh) = a.view(rel);
    assert_eq!(
        (kind.as_str(), source.as_str(), offset, fresh),
        ("start", "read", 1, true)
    );
    assert!(lines > 0, "{lines}");
    lines
}

fn qwen() -> Agent {
    Agent::new("qwen", "qwen-0.24.4")
}

#[test]
fn qwen_shell_reads_are_views() {
    let a = qwen();
    reads_are_views(&a);
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // Cut: the head's whole lines (its last one is cut, marked "...").
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    start_view(&a, "big.txt");
}

#[test]
fn qwen_shell_writes_are_gated() {
    writes_are_gated(&qwen(), claude_deny);
}

#[test]
fn qwen_shell_heredoc_writes_are_written() {
    heredoc_writes_are_written(&qwen());
}

fn opencode() -> Agent {
    Agent::new("opencode", "opencode-1.18.33")
}

fn opencode_deny(reason: &str) -> String {
    line(json!({ "deny": reason }))
}

#[test]
fn opencode_bash_reads_are_views() {
    let a = opencode();
    reads_are_views(&a);
    // opencode shows the output exactly.
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // Cut, it shows the last lines: nothing is taken.
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    assert_eq!(a.views("big.txt"), []);
}

#[test]
fn opencode_bash_writes_are_gated() {
    writes_are_gated(&opencode(), opencode_deny);
}

#[test]
fn opencode_bash_heredoc_writes_are_written() {
    heredoc_writes_are_written(&opencode());
}

/// The race under opencode, which is told what changed after a tool, not
/// with its call: the sed is let through, and the change is told after it,
/// whole (the command's own change with it, since nothing records what the
/// model believes the command made); the next sed needs no read.
#[test]
fn opencode_a_sed_far_from_an_outside_change_is_let_through_and_the_change_told_after() {
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let formatted = base.replacen("line 1\n", "line 1 (formatted)\n", 1);
    let a = opencode();
    a.env.write("a.txt", &base);
    let mut p = a.with_command("post_shell_cat", "cat a.txt");
    p["output"]["output"] = json!(base);
    p["output"]["metadata"]["output"] = json!(base);
    a.send(&p, &[]).expect(0, "").stderr_is("");
    a.env.write("a.txt", &formatted);
    let sed = "sed -i 's/line 10/line ten/' a.txt";
    a.send(&a.with_command("pre_shell_sed_in_place", sed), &[])
        .expect(0, "")
        .stderr_is("");
    a.env
        .write("a.txt", formatted.replace("line 10\n", "line ten\n"));
    let r = a.send(&a.with_command("post_shell_sed_in_place", sed), &[]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    assert_eq!(
        v["context"],
        json!("These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,12 +1,12 @@\n-line 1\n+line 1 (formatted)\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n"),
        "{}",
        r.stdout
    );
    let ev = a.env.run("fsview-session", &["events", "--sid", a.sid]);
    assert!(ev.stdout.contains("told after the result"), "{}", ev.stdout);
    a.send(
        &a.with_command(
            "pre_shell_sed_in_place",
            "sed -i 's/line 11/line eleven/' a.txt",
        ),
        &[],
    )
    .expect(0, "")
    .stderr_is("");
}

fn copilot() -> Agent {
    Agent::new("copilot", "copilot-1.0.102")
}

fn copilot_deny(reason: &str) -> String {
    line(json!({"permissionDecision": "deny", "permissionDecisionReason": reason}))
}

#[test]
fn copilot_bash_reads_are_views() {
    let a = copilot();
    reads_are_views(&a);
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // Too large: a preview of its first 500 characters.
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    assert_eq!(start_view(&a, "big.txt"), 11);
}

#[test]
fn copilot_bash_writes_are_gated() {
    writes_are_gated(&copilot(), copilot_deny);
}

#[test]
fn copilot_bash_heredoc_writes_are_written() {
    heredoc_writes_are_written(&copilot());
}

fn droid() -> Agent {
    Agent::new("droid", "droid-0.225.2")
}

/// Droid's Execute: the output exactly, then "\n\n[Process exited with
/// code N]".
#[test]
fn droid_execute_reads_are_views() {
    let a = droid();
    reads_but_empty_are_views(&a);
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // Nothing printed is "Command completed successfully": not the file.
    a.hook("post_shell_cat_empty", &[]).expect(0, "");
    assert_eq!(a.views("empty.txt"), []);
    // Cut ("[... N lines skipped ...]", "Full command output saved to"):
    // nothing is taken.
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    assert_eq!(a.views("big.txt"), []);
}

#[test]
fn droid_execute_writes_are_gated() {
    writes_are_gated(&droid(), claude_deny);
}

#[test]
fn droid_execute_heredoc_writes_are_written() {
    heredoc_writes_are_written(&droid());
}

fn pi() -> Agent {
    Agent::new("pi", "pi-0.73.1")
}

#[test]
fn pi_bash_reads_are_views() {
    let a = pi();
    reads_but_empty_are_views(&a);
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // Nothing printed is "(no output)": not the file.
    a.hook("post_shell_cat_empty", &[]).expect(0, "");
    assert_eq!(a.views("empty.txt"), []);
    // Cut, pi shows the last lines: nothing is taken.
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    assert_eq!(a.views("big.txt"), []);
}

#[test]
fn pi_bash_writes_are_gated() {
    writes_are_gated(&pi(), opencode_deny);
}

#[test]
fn pi_bash_heredoc_writes_are_written() {
    heredoc_writes_are_written(&pi());
}

fn kilo() -> Agent {
    Agent::new("kilo", "kilo-7.7.9")
}

/// Kilo Code CLI's bash: opencode's, through the same plugin.
#[test]
fn kilo_bash_reads_are_views() {
    let a = kilo();
    reads_are_views(&a);
    a.hook("post_shell_cat_lead", &[]).expect(0, "");
    assert_eq!(a.view("lead.txt"), view("full", "read", 1, 5, true));
    // Cut, it shows the last lines: nothing is taken.
    a.hook("post_shell_cat_big", &[]).expect(0, "");
    assert_eq!(a.views("big.txt"), []);
}

#[test]
fn kilo_bash_writes_are_gated() {
    writes_are_gated(&kilo(), opencode_deny);
}

#[test]
fn kilo_bash_heredoc_writes_are_written() {
    heredoc_writes_are_written(&kilo());
}

/// Kilo's background_process, starting a command: gated as its bash is.
#[test]
fn kilo_background_process_start_is_gated() {
    let a = kilo();
    files(&a);
    // A new file: nothing to lose.
    a.hook("pre_shell_background_start", &[]).expect(0, "");
    a.env.write("bg.txt", "the user's file\n");
    a.hook("pre_shell_background_start", &[])
        .expect(0, &opencode_deny(NOT_READ));
    let sed = a.with_command("pre_shell_background_start", "sed -i 's/one/ONE/' a.txt");
    a.send(&sed, &[]).expect(0, &opencode_deny(NOT_READ));
    a.hook("post_shell_cat", &[]).expect(0, "");
    a.send(&sed, &[]).expect(0, "");
    // Not a start: nothing to gate.
    let mut stop = a.payload("pre_shell_background_start");
    stop["output"]["args"] = json!({"action": "stop", "id": "bgp1"});
    a.send(&stop, &[]).expect(0, "");
}

/// How an agent words a refusal.
type Deny = fn(&str) -> String;

/// Every agent, with its refusal's words.
fn every_agent() -> Vec<(Agent, Deny)> {
    vec![
        (claude(), claude_deny as Deny),
        (codex(), claude_deny),
        (gemini(), gemini_deny),
        (qwen(), claude_deny),
        (opencode(), opencode_deny),
        (copilot(), copilot_deny),
        (droid(), claude_deny),
        (pi(), opencode_deny),
        (kilo(), opencode_deny),
    ]
}

/// The hook run on `payload` with its standard error going to `stderr`,
/// a file: its exit code and stdout.
fn with_stderr_in(a: &Agent, payload: &Value, stderr: &std::path::Path) -> (i32, String) {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut c = a.cmd(crate::harness::bin("fsview-hook"));
    c.arg(a.name)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).unwrap());
    let mut child = crate::harness::spawn(&mut c);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// A name that is no file is never gated (issue 39, item 2), whatever the
/// hook's own descriptors are: with its standard error in a file of the
/// work tree that was never read, `>/dev/stderr`, `/dev/fd/2` and
/// `/proc/self/fd/2` name the command's standard error, not that file.
#[test]
fn names_that_are_no_file_are_never_gated() {
    for (a, deny) in every_agent() {
        files(&a);
        let log = a.env.path("hook-stderr.log");
        for command in [
            "echo x >/dev/stderr",
            "echo x > /dev/fd/2",
            "echo x >/proc/self/fd/2",
            "echo x >/proc/thread-self/fd/2",
            "cargo build 2>/dev/stdout | tee /dev/tty",
            "echo x > /dev/null; echo y >| /dev/stdout",
            "cd /tmp && echo x > ../dev/stderr",
        ] {
            let p = a.with_command("pre_shell_heredoc_write", command);
            assert_eq!(
                with_stderr_in(&a, &p, &log),
                (0, String::new()),
                "{}: {command}",
                a.name
            );
        }
        // The file itself, by its name: gated as ever.
        let p = a.with_command("pre_shell_heredoc_write", "echo x > hook-stderr.log");
        assert_eq!(
            with_stderr_in(&a, &p, &log),
            (0, deny(NOT_READ)),
            "{}",
            a.name
        );
    }
}

/// Stand-ins for the build tools the tests' commands run, first on PATH:
/// each prints what the real one would, `cargo` fails its build as a real
/// one often does.
fn stand_ins(a: &Agent) -> std::path::PathBuf {
    let bin = a.env.root().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, body) in [
        (
            "cargo",
            "echo '   Compiling demo v0.1.0'\necho 'error[E0308]: mismatched types' >&2\nexit 101\n",
        ),
        ("pytest", "echo '3 passed in 0.01s'\n"),
    ] {
        let p = bin.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// The hook after a command, as `a`'s agent sends it: Claude Code sends
/// PostToolUseFailure for a command that exited non-zero.
fn after(a: &Agent, command: &str, failed: bool) -> Value {
    let mut p = a.with_command("post_shell_other", command);
    if failed && a.name == "claude" {
        let o = p.as_object_mut().unwrap();
        o.remove("tool_response");
        o.remove("duration_ms");
        o.insert("hook_event_name".into(), json!("PostToolUseFailure"));
        o.insert("error".into(), json!("Exit code 1"));
        o.insert("is_interrupt".into(), json!(false));
    }
    p
}

/// A command as the agent runs it: the hook before, and when it lets the
/// command through (answers nothing), the command run for real in the work
/// tree (the stand-in tools first on PATH), then the hook after it.
/// Returns the answer before.
fn agent_runs(a: &Agent, bin: &std::path::Path, command: &str) -> String {
    let pre = a.send(&a.with_command("pre_shell_heredoc_write", command), &[]);
    assert_eq!(pre.code, 0, "{command}: {}", pre.stderr);
    if !pre.stdout.is_empty() {
        return pre.stdout.clone();
    }
    let ran = a
        .env
        .sh(&format!("PATH={}:$PATH\n{command}", bin.display()));
    let post = a.send(&after(a, command, ran.code != 0), &[]);
    assert_eq!(post.code, 0, "{command}: {}", post.stderr);
    String::new()
}

/// The refusal of the agent's own output that someone else changed since.
fn own_changed(diff: &str) -> String {
    format!("File has been changed since your own command last wrote it, by the user or another program. Read it first before writing to it. The change since your command wrote it:\n\n{diff}")
}

/// Issue 39, item 1: a file the agent's own command created or last wrote,
/// unchanged since, may be written again by its later commands, whatever
/// the command; not a view; once someone else changes it, refused with the
/// change.
fn own_output_is_its_own(a: &Agent, deny: fn(&str) -> String) {
    files(a);
    let bin = stand_ins(a);
    for cmd in [
        "cargo build > build.log 2>&1",
        "cargo test 2>&1 | tee test.log",
        "cargo build &> all.log",
        "cargo build 2> err.log",
        "cargo build >| clobber.log",
        "git diff > x.patch",
        "exec 3> lock; echo locked >&3",
        ": > scratch.log",
        "printf '%s\\n' a b > list.txt",
        "cat > env.txt <<EOF\n$PWD\nEOF",
        "python3 -c \"open('gen.txt', 'w').write('x')\"",
        "node -e \"require('fs').writeFileSync('gen.json', '{}')\"",
        "echo -e 'a\\tb' > tabs.txt",
        "cp a.txt copy.txt",
    ] {
        assert_eq!(agent_runs(a, &bin, cmd), "", "{}: {cmd}", a.name);
        assert_eq!(agent_runs(a, &bin, cmd), "", "{} again: {cmd}", a.name);
    }
    // Each ran, and made its file: the second run wrote over it.
    for f in [
        "build.log",
        "test.log",
        "all.log",
        "err.log",
        "clobber.log",
        "x.patch",
        "lock",
        "scratch.log",
        "list.txt",
        "env.txt",
        "gen.txt",
        "gen.json",
        "tabs.txt",
        "copy.txt",
    ] {
        assert!(a.env.path(f).is_file(), "{}: {f}", a.name);
    }
    assert_eq!(
        std::fs::read_to_string(a.env.path("test.log")).unwrap(),
        "   Compiling demo v0.1.0\nerror[E0308]: mismatched types\n"
    );
    // Whatever the command: an edit in place of its own output.
    assert_eq!(agent_runs(a, &bin, "sed -i s/x/y/ gen.txt"), "");
    assert_eq!(agent_runs(a, &bin, "perl -pi -e s/y/z/ gen.txt"), "");
    // Not a view: the model was shown none of it.
    assert_eq!(a.views("build.log"), []);
    assert_eq!(a.views("list.txt"), []);
    // Someone else changes one: somebody's text again, refused with the
    // change.
    a.env.write("list.txt", "a\nb\nthe user's line\n");
    assert_eq!(
        agent_runs(a, &bin, "printf '%s\\n' a b > list.txt"),
        deny(&own_changed(
            "--- list.txt (as your command wrote it)\n+++ list.txt (now)\n@@ -1,2 +1,3 @@\n a\n b\n+the user's line\n"
        )),
        "{}",
        a.name
    );
    assert_eq!(agent_runs(a, &bin, "sed -i s/a/A/ list.txt"), deny(&own_changed(
        "--- list.txt (as your command wrote it)\n+++ list.txt (now)\n@@ -1,2 +1,3 @@\n a\n b\n+the user's line\n"
    )));
    // An append to somebody's file does not make it the agent's.
    a.env.write("notes.txt", "the user's notes\n");
    assert_eq!(agent_runs(a, &bin, "echo more >> notes.txt"), "");
    assert_eq!(
        agent_runs(a, &bin, "echo x > notes.txt"),
        deny(NOT_READ),
        "{}",
        a.name
    );
    // An append to its own output keeps it its own; so does one that
    // creates the file.
    assert_eq!(agent_runs(a, &bin, "cargo test >> build.log 2>&1"), "");
    assert_eq!(agent_runs(a, &bin, "echo a >> new.log"), "");
    assert_eq!(
        agent_runs(
            a,
            &bin,
            "cargo build > build.log 2>&1; cargo build > new.log"
        ),
        ""
    );
}

/// What a command copies from a file the agent holds whole, and an empty
/// file, are known text: views, so the agent's edit tool may change them.
/// Anything else of its own is no view.
fn known_text_of_its_own(a: &Agent) {
    files(a);
    let bin = stand_ins(a);
    a.hook("post_shell_cat", &[]).expect(0, "");
    assert_eq!(agent_runs(a, &bin, "cp a.txt copy.txt"), "");
    assert_eq!(a.view("copy.txt"), view("full", "write", 1, 3, true));
    assert_eq!(agent_runs(a, &bin, "touch new-note.txt"), "");
    assert_eq!(a.view("new-note.txt"), view("full", "write", 1, 0, true));
    assert_eq!(
        agent_runs(a, &bin, "cat > new-note.txt <<EOF\n$HOME\nEOF"),
        ""
    );
    // Its own command rewrote the file with a text it was not shown: the
    // view of what was there is gone, not told back to it as a change.
    assert_eq!(a.views("new-note.txt"), []);
    // Not from a file it does not hold whole.
    a.env.write("unread.txt", "never read\n");
    assert_eq!(agent_runs(a, &bin, "cp unread.txt copy2.txt"), "");
    assert_eq!(a.views("copy2.txt"), []);
    // A touch of somebody's file makes it no one's but theirs.
    assert_eq!(agent_runs(a, &bin, "touch unread.txt"), "");
    assert_eq!(agent_runs(a, &bin, "echo x > unread.txt"), {
        let deny = every_agent()
            .into_iter()
            .find(|(b, _)| b.name == a.name)
            .unwrap()
            .1;
        deny(NOT_READ)
    });
}

#[test]
fn the_agents_own_output_is_its_own() {
    for (a, deny) in every_agent() {
        own_output_is_its_own(&a, deny);
    }
}

#[test]
fn a_copy_of_what_it_holds_and_an_empty_file_are_known() {
    for (a, _) in every_agent() {
        known_text_of_its_own(&a);
    }
}

/// The agent's own output is the shell's to write again, never a view: the
/// agent's edit tool still needs a read of text the model never saw.
#[test]
fn claude_own_output_lets_no_edit_tool_through() {
    let a = claude();
    files(&a);
    let bin = stand_ins(&a);
    assert_eq!(agent_runs(&a, &bin, "cargo build > build.log 2>&1"), "");
    let mut edit = a.payload("pre_edit");
    edit["tool_input"]["file_path"] = json!(a.env.path("build.log"));
    a.send(&edit, &[]).expect(0, &claude_deny(NOT_READ));
}

/// The system's temporary directory is scratch (issue 39, item 1): a file
/// an earlier session or program left there may be written, outside the
/// work tree and any git work tree; a project there is gated as any other.
#[test]
fn scratch_in_the_temporary_directory_is_not_gated() {
    for (a, deny) in every_agent() {
        files(&a);
        let bin = stand_ins(&a);
        let tmp = tempfile::Builder::new()
            .prefix("fsview-scratch")
            .tempdir_in("/tmp")
            .unwrap();
        let tmp = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::write(tmp.join("pytest.log"), "an earlier session's log\n").unwrap();
        let cmd = format!("pytest > {}/pytest.log 2>&1", tmp.display());
        assert_eq!(agent_runs(&a, &bin, &cmd), "", "{}", a.name);
        std::fs::create_dir_all(tmp.join("clone/.git")).unwrap();
        std::fs::write(tmp.join("clone/notes.txt"), "the user's notes\n").unwrap();
        let cmd = format!("echo x > {}/clone/notes.txt", tmp.display());
        assert_eq!(agent_runs(&a, &bin, &cmd), deny(NOT_READ), "{}", a.name);
        // The work tree itself is never scratch, wherever it lies.
        a.env.write("kept.txt", "the user's\n");
        assert_eq!(
            agent_runs(&a, &bin, "echo x > kept.txt"),
            deny(NOT_READ),
            "{}",
            a.name
        );
    }
}

/// A git work tree of `files`, committed, with a branch `other`.
fn git_repo(a: &Agent) {
    files(a);
    a.env
        .sh("git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm init && git branch other")
        .expect(0, "");
}

/// Issue 39, item 3: git's discards of a user's uncommitted edit the agent
/// never saw are refused: a path form as a whole-file write of each file,
/// a whole-tree form naming the files with the diff each would lose. The
/// agent's discard of its own changes passes, and so does a branch switch.
fn git_discards_are_gated(a: &Agent, deny: fn(&str) -> String) {
    git_repo(a);
    let bin = stand_ins(a);
    let user = "one\ntwo\nthree\nthe user's line\n";
    a.env.write("a.txt", user);
    for cmd in [
        "git checkout -- a.txt",
        "git checkout a.txt",
        "git restore a.txt",
        "git checkout HEAD -- a.txt",
        "git restore --source=HEAD --worktree a.txt",
        "git stash push -- a.txt",
    ] {
        assert_eq!(
            agent_runs(a, &bin, cmd),
            deny(NOT_READ),
            "{}: {cmd}",
            a.name
        );
    }
    for cmd in [
        "git checkout .",
        "git restore .",
        "git reset --hard",
        "git reset --hard HEAD~0",
        "git stash",
        "git checkout -f other",
        "git switch --discard-changes other",
    ] {
        assert_eq!(
            agent_runs(a, &bin, cmd),
            deny(&a.discard_refused(&[("a.txt", true)])),
            "{}: {cmd}",
            a.name
        );
    }
    // Untracked: the agent's own scratch may go, the user's notes may not.
    a.env.write("notes.txt", "the user's notes\n");
    assert_eq!(agent_runs(a, &bin, "echo x > scratch.txt"), "");
    assert_eq!(
        agent_runs(a, &bin, "git clean -f"),
        deny(&a.discard_refused(&[("notes.txt", false)])),
        "{}",
        a.name
    );
    std::fs::remove_file(a.env.path("notes.txt")).unwrap();
    assert_eq!(agent_runs(a, &bin, "git clean -f"), "");
    assert!(!a.env.path("scratch.txt").exists());
    // A branch switch loses nothing (git refuses to): not gated.
    assert_eq!(agent_runs(a, &bin, "git checkout other"), "");
    assert_eq!(std::fs::read_to_string(a.env.path("a.txt")).unwrap(), user);
    // Once the agent has read the whole file, the discard is its to make.
    a.env.write("a.txt", A_TXT);
    a.hook("post_shell_cat", &[]).expect(0, "");
    a.env.write("a.txt", user);
    assert_eq!(
        agent_runs(a, &bin, "git checkout -- a.txt"),
        deny(&crate::harness::modified_told(
            "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,4 @@\n one\n two\n three\n+the user's line\n"
        )),
        "{}",
        a.name
    );
    // The refusal told it the whole change: now it holds all of it.
    assert_eq!(
        agent_runs(a, &bin, "git checkout -- a.txt"),
        "",
        "{}",
        a.name
    );
    // Its own change to a file it holds whole: its own to discard.
    assert_eq!(
        agent_runs(a, &bin, "sed -i s/two/TWO/ a.txt"),
        "",
        "{}",
        a.name
    );
    assert_eq!(agent_runs(a, &bin, "git checkout ."), "", "{}", a.name);
    assert_eq!(std::fs::read_to_string(a.env.path("a.txt")).unwrap(), A_TXT);
    // Nothing changed: nothing to lose.
    assert_eq!(agent_runs(a, &bin, "git reset --hard"), "");
    assert_eq!(agent_runs(a, &bin, "git checkout -- big.txt"), "");
}

#[test]
fn git_discards_of_what_the_agent_never_saw_are_refused() {
    for (a, deny) in every_agent() {
        git_discards_are_gated(&a, deny);
    }
}

/// More writers (issue 39, item 4): an option naming the output file
/// (`sort -o`, `curl -o`, `wget -O`), Ruby's in-place edit, a shell reading
/// its script from a here-document, `eval` of literal words, and the
/// wrappers that run a command (`stdbuf`, `flock`, `setsid`): gated as
/// their writes, in every payload shape.
#[test]
fn more_writers_are_gated() {
    for (a, deny) in every_agent() {
        files(&a);
        let bin = stand_ins(&a);
        for cmd in [
            "sort -o a.txt a.txt",
            "curl -fsSLo a.txt https://example.invalid/a.txt",
            "wget -qO a.txt https://example.invalid/a.txt",
            "ruby -pi -e 'gsub(/one/, \"ONE\")' a.txt",
            "bash <<'EOF'\necho x > a.txt\nEOF",
            "sh -s <<EOF\necho $HOME > a.txt\nEOF",
            "eval 'echo x > a.txt'",
            "stdbuf -oL sed -i s/one/ONE/ a.txt",
            "flock /tmp/fsview.lock -c 'echo x > a.txt'",
            "setsid cp crlf.txt a.txt",
        ] {
            assert_eq!(
                agent_runs(&a, &bin, cmd),
                deny(NOT_READ),
                "{}: {cmd}",
                a.name
            );
        }
        assert_eq!(std::fs::read_to_string(a.env.path("a.txt")).unwrap(), A_TXT);
        // Read whole, then sorted in place: allowed, and its own after.
        a.hook("post_shell_cat", &[]).expect(0, "");
        assert_eq!(
            agent_runs(&a, &bin, "sort -o a.txt a.txt"),
            "",
            "{}",
            a.name
        );
        assert_eq!(
            agent_runs(&a, &bin, "bash <<'EOF'\nsort -r -o a.txt a.txt\nEOF"),
            "",
            "{}",
            a.name
        );
        assert_eq!(
            std::fs::read_to_string(a.env.path("a.txt")).unwrap(),
            "two\nthree\none\n"
        );
    }
}

/// Issue 39, item 4: a line brush-parser rejects (a `case` inside `$(...)`,
/// a `select` loop) was allowed whole, the literal writes beside it
/// included. The parts that parse are read: their writes are gated; what
/// does not parse is allowed, never refused on a guess.
#[test]
fn unparsable_lines_are_gated_in_the_parts_that_parse() {
    for (a, deny) in every_agent() {
        files(&a);
        let bin = stand_ins(&a);
        for cmd in [
            "x=$(case a in a) echo a;; esac); echo x > a.txt",
            "select f in a; do break; done < /dev/null; sed -i s/one/ONE/ a.txt",
            "select f in a\ndo\n  break\ndone < /dev/null\ncp crlf.txt a.txt",
            "uv run python3 -c \"open('a.txt', 'w').write('x')\"",
            "npx tee a.txt < /dev/null",
        ] {
            assert_eq!(
                agent_runs(&a, &bin, cmd),
                deny(NOT_READ),
                "{}: {cmd}",
                a.name
            );
        }
        assert_eq!(std::fs::read_to_string(a.env.path("a.txt")).unwrap(), A_TXT);
        // What does not parse, or names no file literally, is allowed.
        for cmd in [
            "x=$(case a in a) echo a;; esac) > /dev/null",
            "select f in a; do echo 'x > a.txt'; done < /dev/null",
            "select f in a; do break; done < /dev/null # ; echo x > a.txt",
        ] {
            assert_eq!(agent_runs(&a, &bin, cmd), "", "{}: {cmd}", a.name);
        }
        assert_eq!(std::fs::read_to_string(a.env.path("a.txt")).unwrap(), A_TXT);
    }
}

/// Issue 44, item 2: `ln -sf`, `ln -sfn`, `mv -f` and `cp
/// --remove-destination` onto a symlink replace the link and leave the
/// file it points to alone: gated as what they do to the link (a link
/// holds no one's text), where `cp` onto it writes through it and is gated
/// as a write of the file behind it. A link made is no one's output: the
/// file it points to stays the user's.
#[test]
fn links_are_replaced_not_written_through() {
    for (a, deny) in every_agent() {
        files(&a);
        let bin = stand_ins(&a);
        let link = |to: &str| {
            let at = a.env.path("link");
            let _ = std::fs::remove_file(&at);
            std::os::unix::fs::symlink(to, &at).unwrap();
        };
        for cmd in [
            "ln -sf crlf.txt link",
            "ln -sfn big.txt link",
            "ln -f -s -n crlf.txt link",
            "mv -f new.txt link",
            "mv new.txt link",
            "cp --remove-destination crlf.txt link",
        ] {
            link("a.txt");
            a.env.write("new.txt", "new\n");
            assert_eq!(agent_runs(&a, &bin, cmd), "", "{}: {cmd}", a.name);
            assert_eq!(std::fs::read_to_string(a.env.path("a.txt")).unwrap(), A_TXT);
        }
        // Through the link: the file behind it is written.
        link("a.txt");
        assert_eq!(
            agent_runs(&a, &bin, "cp crlf.txt link"),
            deny(NOT_READ),
            "{}",
            a.name
        );
        assert_eq!(
            agent_runs(&a, &bin, "echo x > link"),
            deny(NOT_READ),
            "{}",
            a.name
        );
        // A link to a directory without -n: the link made goes in it.
        std::fs::create_dir_all(a.env.path("d")).unwrap();
        link("d");
        assert_eq!(agent_runs(&a, &bin, "ln -sf crlf.txt link"), "");
        assert!(a.env.path("d/crlf.txt").is_symlink());
        // The file a link it made points to is still the user's.
        assert_eq!(agent_runs(&a, &bin, "ln -sf a.txt made"), "");
        assert_eq!(
            agent_runs(&a, &bin, "echo x > a.txt"),
            deny(NOT_READ),
            "{}",
            a.name
        );
        assert_eq!(std::fs::read_to_string(a.env.path("a.txt")).unwrap(), A_TXT);
    }
}

/// Issue 41's race through the shell: a formatter changes line 1 of a file
/// Claude Code read whole while its `sed -i 's/line 10/line ten/'` is on
/// its way. The replacement is plainly literal and far from the change:
/// let through, the change told with the call, and the command's own
/// change is the agent's (the next Edit needs no read). Near the change,
/// a pattern sed reads as more than text, a `g` that would also change a
/// line the formatter added, or `--on-change refuse`: refused with the
/// change.
#[test]
fn claude_a_sed_far_from_an_outside_change_is_let_through_and_the_change_told() {
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let formatted = base.replacen("line 1\n", "line 1 (formatted)\n", 1);
    let diff = "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,9 +1,9 @@\n-line 1\n+line 1 (formatted)\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n";
    let read = |a: &Agent, now: &str| {
        a.env.write("a.txt", &base);
        let mut p = a.with_command("post_shell_cat", "cat a.txt");
        p["tool_response"]["stdout"] = json!(base.trim_end());
        a.send(&p, &[]).expect(0, "").stderr_is("");
        a.env.write("a.txt", now);
    };
    let a = claude();
    read(&a, &formatted);
    let sed = "sed -i 's/line 10/line ten/' a.txt";
    a.send(&a.with_command("pre_shell_sed_in_place", sed), &[])
        .expect(
            0,
            &line(json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": format!("[fsview] a.txt changed since you read it (by the user or another program). Your edit is 3 or more lines from that change, so it is applied to the file as it is now, keeping that change. You now hold the file with both: the other change is below.\n\nThese files changed since you last saw them:\n\n{diff}"),
            }})),
        )
        .stderr_is("");
    // The command runs.
    a.env
        .write("a.txt", formatted.replace("line 10\n", "line ten\n"));
    // Its own change is told after it, as after any sed -i (Claude Code
    // itself asks for a read after one), named as the command's.
    let r = a.send(&a.with_command("post_shell_sed_in_place", sed), &[]);
    assert_eq!(
        crate::harness::untimed(&r.stdout),
        line(json!({"hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "These files changed since you last saw them:\n\na.txt: modified (content): by your own shell command `sed -i 's/line 10/line ten/' a.txt` at HH:MM\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -2,11 +2,11 @@\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n",
        }}))
    );
    let mut edit = a.payload("pre_edit");
    edit["tool_input"]["old_string"] = json!("line 11");
    edit["tool_input"]["new_string"] = json!("line eleven");
    a.send(&edit, &[]).expect(0, "").stderr_is("");
    let ev = a.env.run("fsview-session", &["events", "--sid", a.sid]);
    assert!(ev.stdout.contains("merged"), "{}", ev.stdout);
    // A sed or perl of a pattern is run by its program over the text read
    // and the text now: far from the change, it is merged the same way.
    let pattern = "sed -i -E 's/^line (10)$/line \\1 (ten)/' a.txt";
    let perl = "perl -pi -e 's/^line (10)$/line $1 (ten)/' a.txt";
    for (command, needs) in [
        (pattern, crate::harness::gnu_sed()),
        (perl, crate::harness::tool("perl", "perl")),
    ] {
        if !crate::harness::can_run(needs) {
            continue;
        }
        let b = claude();
        read(&b, &formatted);
        b.send(&b.with_command("pre_shell_sed_in_place", command), &[])
            .expect(
                0,
                &line(json!({"hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "additionalContext": format!("[fsview] a.txt changed since you read it (by the user or another program). Your edit is 3 or more lines from that change, so it is applied to the file as it is now, keeping that change. You now hold the file with both: the other change is below.\n\nThese files changed since you last saw them:\n\n{diff}"),
                }})),
            )
            .stderr_is("");
    }
    let added = format!("{formatted}line 10 again\n");
    for (now, command, args) in [
        (
            formatted.as_str(),
            "sed -i 's/line 2/line two/' a.txt",
            &[][..],
        ),
        // A pattern that also matches the line the formatter changed.
        (
            formatted.as_str(),
            "sed -i 's/line 1./line ten/' a.txt",
            &[][..],
        ),
        // A script that is more than substitutions.
        (formatted.as_str(), "sed -i '10d' a.txt", &[][..]),
        (formatted.as_str(), pattern, &["--on-change", "refuse"][..]),
        // Perl that would run code, or change line 1 too.
        (
            formatted.as_str(),
            "perl -pi -e 's/^line (10)$/$x/' a.txt",
            &[][..],
        ),
        (
            formatted.as_str(),
            "perl -pi -e 's/^line 1/line one/' a.txt",
            &[][..],
        ),
        (
            added.as_str(),
            "sed -i 's/line 10/line ten/g' a.txt",
            &[][..],
        ),
        (formatted.as_str(), sed, &["--on-change", "refuse"][..]),
    ] {
        let b = claude();
        read(&b, now);
        let r = b.send(&b.with_command("pre_shell_sed_in_place", command), args);
        let reason = crate::harness::denied_reason(&r.stdout);
        assert!(
            reason.starts_with(&crate::harness::modified_told(
                "a.txt: modified (content)\n"
            )),
            "{command}: {reason}"
        );
    }
}

/// The same race under Codex, which hands the model PreToolUse's context
/// too: the sed is let through with the other change told with the call,
/// and its own change is told after it, as under Claude Code; the next sed
/// needs no read.
#[test]
fn codex_a_sed_far_from_an_outside_change_is_let_through_and_the_change_told() {
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let formatted = base.replacen("line 1\n", "line 1 (formatted)\n", 1);
    let a = codex();
    a.env.write("a.txt", &base);
    let mut p = a.with_command("post_shell_cat", "cat a.txt");
    p["tool_response"] = json!(base);
    a.send(&p, &[]).expect(0, "").stderr_is("");
    a.env.write("a.txt", &formatted);
    let sed = "sed -i 's/line 10/line ten/' a.txt";
    a.send(&a.with_command("pre_shell_sed_in_place", sed), &[])
        .expect(
            0,
            &line(json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "additionalContext": "[fsview] a.txt changed since you read it (by the user or another program). Your edit is 3 or more lines from that change, so it is applied to the file as it is now, keeping that change. You now hold the file with both: the other change is below.\n\nThese files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,9 +1,9 @@\n-line 1\n+line 1 (formatted)\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n",
            }})),
        )
        .stderr_is("");
    a.env
        .write("a.txt", formatted.replace("line 10\n", "line ten\n"));
    let r = a.send(&a.with_command("post_shell_sed_in_place", sed), &[]);
    assert_eq!(
        crate::harness::untimed(&r.stdout),
        line(json!({"hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "These files changed since you last saw them:\n\na.txt: modified (content): by your own shell command `sed -i 's/line 10/line ten/' a.txt` at HH:MM\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -2,11 +2,11 @@\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n",
        }}))
    );
    let ev = a.env.run("fsview-session", &["events", "--sid", a.sid]);
    assert!(ev.stdout.contains("told with the call"), "{}", ev.stdout);
    // A sed of a pattern, run by sed over both texts: the same; one near
    // the change is refused with it.
    if crate::harness::can_run(crate::harness::gnu_sed()) {
        for (pattern, merged) in [
            ("sed -i -E 's/^line (10)$/line \\1 (ten)/' a.txt", true),
            ("sed -i -E 's/^line (2)$/line \\1 (two)/' a.txt", false),
        ] {
            let b = codex();
            b.env.write("a.txt", &base);
            let mut p = b.with_command("post_shell_cat", "cat a.txt");
            p["tool_response"] = json!(base);
            b.send(&p, &[]).expect(0, "").stderr_is("");
            b.env.write("a.txt", &formatted);
            let r = b.send(&b.with_command("pre_shell_sed_in_place", pattern), &[]);
            match merged {
                true => {
                    assert!(
                        r.code == 0
                            && r.stdout
                                .contains("Your edit is 3 or more lines from that change"),
                        "{pattern}: {}",
                        r.stdout
                    );
                }
                false => {
                    let told = crate::harness::modified_told(
                        "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,9 +1,9 @@\n-line 1\n+line 1 (formatted)\n line 2\n",
                    );
                    let reason = crate::harness::denied_reason(&r.stdout);
                    assert!(reason.starts_with(&told), "{pattern}: {reason}");
                }
            }
        }
    }
    a.send(
        &a.with_command(
            "pre_shell_sed_in_place",
            "sed -i 's/line 11/line eleven/' a.txt",
        ),
        &[],
    )
    .expect(0, "")
    .stderr_is("");
}

/// A command that edits two files, one far from a change made since the
/// read (merged, told) and one near a change (refused): the command is
/// refused whole, and the refusal tells both changes, since the first
/// one's view moved to what it told.
#[test]
fn claude_a_sed_of_two_files_refused_for_one_tells_the_others_change_too() {
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let a = claude();
    for f in ["a.txt", "b.txt"] {
        a.env.write(f, &base);
        let mut p = a.with_command("post_shell_cat", &format!("cat {f}"));
        p["tool_response"]["stdout"] = json!(base.trim_end());
        a.send(&p, &[]).expect(0, "").stderr_is("");
    }
    a.env.write(
        "a.txt",
        base.replacen("line 1\n", "line 1 (formatted)\n", 1),
    );
    a.env.write(
        "b.txt",
        base.replacen("line 9\n", "line 9 (formatted)\n", 1),
    );
    let sed = "sed -i 's/line 10/line ten/' a.txt b.txt";
    let b_diff = "b.txt: modified (content)\n--- b.txt (as viewed)\n+++ b.txt (now)\n@@ -1,12 +1,12 @@\n line 1\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n-line 9\n+line 9 (formatted)\n line 10\n line 11\n line 12";
    let a_diff = "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,9 +1,9 @@\n-line 1\n+line 1 (formatted)\n line 2\n line 3\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n";
    a.send(&a.with_command("pre_shell_sed_in_place", sed), &[])
        .expect(0, &claude_deny(&format!("b.txt: File has been modified since read, either by the user or by a linter. The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).\n\nThese files changed since you last saw them:\n\n{b_diff}\n\nNone of it ran. What else changed meanwhile in the other files it edits, which you hold now:\n\nThese files changed since you last saw them:\n\n{a_diff}")))
        .stderr_is("");
    // Told both, the model may run it again.
    a.send(&a.with_command("pre_shell_sed_in_place", sed), &[])
        .expect(0, "")
        .stderr_is("");
}

// Who changed a file, as the shell tells it: a command that failed and left
// the file as its agent saw it wrote nothing, and is not named; a
// subagent's command is named as that subagent's, with its command line.
#[test]
fn claude_a_shell_writer_is_named_only_for_what_it_wrote() {
    let a = claude();
    let base: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let as_sid = |mut p: Value, sid: &str| {
        p["session_id"] = json!(sid);
        p
    };
    let cat = |sid: &str, agent: Option<&str>, text: &str| {
        let mut p = as_sid(a.with_command("post_shell_cat", "cat a.txt"), sid);
        p["tool_response"]["stdout"] = json!(text.trim_end());
        if let Some(id) = agent {
            p["agent_id"] = json!(id);
        }
        a.send(&p, &[]).expect(0, "").stderr_is("");
    };
    let deny_of = |r: &crate::harness::Run| -> String {
        let v: Value = serde_json::from_str(r.stdout.trim()).unwrap();
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    a.env.write("a.txt", &base);
    cat("B", None, &base);
    let users = format!("{base}the user's line\n");
    a.env.write("a.txt", &users);
    cat("A", None, &users);
    // A's `cp` fails: a.txt is left as A saw it.
    let cp = "cp nothere.txt a.txt";
    a.send(&as_sid(a.with_command("pre_shell_other", cp), "A"), &[])
        .expect(0, "");
    a.send(&as_sid(a.with_command("post_shell_other", cp), "A"), &[])
        .expect(0, "");
    let mut write = as_sid(a.payload("pre_write_update"), "B");
    write["tool_input"]["content"] = json!("from memory\n");
    let r = a.send(&write, &[]);
    let why = deny_of(&r);
    assert!(
        why.starts_with("File has been modified since read, either by the user or by a linter."),
        "{why}"
    );

    // Subagent S3 of conversation M formats the file M read.
    a.env.write("a.txt", &base);
    cat("M", None, &base);
    cat("M", Some("S3"), &base);
    let fmt = "npm run fmt";
    let mut pre = as_sid(a.with_command("pre_shell_other", fmt), "M");
    pre["agent_id"] = json!("S3");
    a.send(&pre, &[]).expect(0, "");
    a.env
        .write("a.txt", base.replace("line 6\n", "line 6 formatted\n"));
    let mut post = as_sid(a.with_command("post_shell_other", fmt), "M");
    post["agent_id"] = json!("S3");
    let r = a.send(&post, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        crate::harness::untimed(&r.stdout).contains(
            "a.txt: modified (content): by your own shell command `npm run fmt` at HH:MM\\n"
        ),
        "{}",
        r.stdout
    );
    let mut write = as_sid(a.payload("pre_write_update"), "M");
    write["tool_input"]["content"] = json!("from memory\n");
    let r = a.send(&write, &[]);
    let why = crate::harness::untimed(&deny_of(&r));
    assert!(
        why.starts_with("File has been modified since read, by a shell command `npm run fmt` of subagent S3 at HH:MM."),
        "{why}"
    );
}

// Ways around the shell's gate an adversarial pass found: a link the line
// makes, then a write through it; a hard link made by `cp -l`, written
// next; someone's file moved to a new name, then overwritten; `--backup`
// that makes none; `mv -n -f`, where the last wins. Each is refused; a
// temporary file moved over its target stays the agent's own.
#[test]
fn claude_links_moves_and_backups_that_make_none_are_gated() {
    let a = claude();
    a.env.write("notes.txt", "someone's notes\n");
    a.env.write("sub/keep.txt", "keep\n");
    let pre = |cmd: &str| a.send(&a.with_command("pre_shell_other", cmd), &[]);
    let post = |cmd: &str| {
        a.send(&a.with_command("post_shell_other", cmd), &[])
            .expect(0, "");
    };
    let refused = |cmd: &str| {
        let r = pre(cmd);
        assert!(
            r.stdout.contains("\"permissionDecision\":\"deny\""),
            "{cmd}: {}",
            r.stdout
        );
    };
    for cmd in [
        "ln -s notes.txt s.txt && echo x > s.txt",
        "ln notes.txt h.txt && echo x > h.txt",
        "cp -s notes.txt s.txt && printf 'x\\n' > s.txt",
        "cp --backup=none sub/keep.txt notes.txt",
        "mv --backup=off sub/keep.txt notes.txt",
        "mv -n -f sub/keep.txt notes.txt",
    ] {
        refused(cmd);
    }
    // In two steps.
    pre("cp -l notes.txt h.txt").expect(0, "");
    std::fs::hard_link(a.env.path("notes.txt"), a.env.path("h.txt")).unwrap();
    post("cp -l notes.txt h.txt");
    refused("echo x > h.txt");
    a.env.write("draft.txt", "my uncommitted draft\n");
    pre("mv draft.txt plan.md").expect(0, "");
    std::fs::rename(a.env.path("draft.txt"), a.env.path("plan.md")).unwrap();
    post("mv draft.txt plan.md");
    refused("echo agent text > plan.md");
    // The agent's own temporary file, moved over a new file: its own.
    let tmp = "sed s/keep/kept/ sub/keep.txt > tmp.txt && mv tmp.txt new.txt";
    pre(tmp).expect(0, "");
    a.env.write("new.txt", "kept\n");
    post(tmp);
    pre("echo again > new.txt").expect(0, "");
}

// `env -C DIR` (and `sudo -D DIR`, `uv run --directory DIR`) runs its
// command in DIR: a write there is gated as the file there, not as the one
// of that name the agent read here.
#[test]
fn claude_a_write_run_in_another_directory_is_gated_there() {
    let a = claude();
    a.env.write("notes.txt", "mine\n");
    a.env.write("sub/notes.txt", "someone's notes\n");
    let mut p = a.with_command("post_shell_cat", "cat notes.txt");
    p["tool_response"]["stdout"] = json!("mine");
    a.send(&p, &[]).expect(0, "").stderr_is("");
    let pre = |cmd: &str| a.send(&a.with_command("pre_shell_other", cmd), &[]);
    for cmd in [
        "env -C sub sed -i 1d notes.txt",
        "env --chdir=sub bash -c 'echo x > notes.txt'",
        "cd src 2>/dev/null; env -C \"$PWD/sub\" tee notes.txt",
    ] {
        let r = pre(cmd);
        let denied = r.stdout.contains("\"permissionDecision\":\"deny\"");
        // The last names its directory by a variable: not followed, so
        // not gated (as `cd "$D"` is not), and never the file read here.
        assert_eq!(denied, !cmd.contains("$PWD"), "{cmd}: {}", r.stdout);
    }
    pre("sed -i 1d notes.txt").expect(0, "");
    pre("env -C sub tee new.txt").expect(0, "");
}

// A directory copied over files the agent never read: each file it would
// overwrite is gated; into a fresh directory, nothing is asked.
#[test]
fn claude_a_directory_copied_over_unread_files_is_gated() {
    let a = claude();
    a.env.write("notes.txt", "someone's notes\n");
    a.env.write("sub/notes.txt", "other\n");
    std::fs::create_dir_all(a.env.path("out")).unwrap();
    for cmd in ["cp -r sub/. .", "cp -a sub/. .", "cp -rT sub ."] {
        let r = a.send(&a.with_command("pre_shell_other", cmd), &[]);
        assert!(
            r.stdout.contains("\"permissionDecision\":\"deny\""),
            "{cmd}: {}",
            r.stdout
        );
    }
    a.send(&a.with_command("pre_shell_other", "cp -r sub out/"), &[])
        .expect(0, "");
}
