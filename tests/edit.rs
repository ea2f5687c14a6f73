//! fsview-edit and fsview-write: the gate first, Claude Code's Edit rules,
//! the file kept as it was stored, the write recorded, bad input refused.
//! (Concurrent writers and kills are in `edit_races`.)

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use crate::harness::{as_user, bin, output, Env};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

fn read(env: &Env, path: &str) {
    let r = env.run("fsview-read", &["-q", path]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn body(env: &Env, path: &str) -> Vec<u8> {
    std::fs::read(env.path(path)).unwrap()
}

/// The temporary files a write may leave (it must not).
fn leftovers(env: &Env) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(&env.work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".fsview-"))
        .collect();
    v.sort();
    v
}

#[test]
fn an_edit_after_a_read_is_applied_with_its_diff() {
    let env = Env::new();
    env.write(
        "src/lib.rs",
        "fn old_name() {}\n\nfn main() {\n    old_name();\n}\n",
    );
    read(&env, "src/lib.rs");
    env.run(
        "fsview-edit",
        &["src/lib.rs", "--old", "fn old_name(", "--new", "fn new_name("],
    )
    .expect(
        0,
        "--- src/lib.rs\n+++ src/lib.rs\n@@ -1,4 +1,4 @@\n-fn old_name() {}\n+fn new_name() {}\n \n fn main() {\n     old_name();\n",
    )
    .stderr_is("");
    assert_eq!(
        body(&env, "src/lib.rs"),
        b"fn new_name() {}\n\nfn main() {\n    old_name();\n}\n"
    );
    // The write is a full view: the next edit needs no re-read, and a
    // whole-file write is allowed too.
    env.run("fsview-edit", &["-q", "src/lib.rs", "--old", "old_name();", "--new", "new_name();"])
        .expect(0, "--- src/lib.rs\n+++ src/lib.rs\n@@ -1,5 +1,5 @@\n fn new_name() {}\n \n fn main() {\n-    old_name();\n+    new_name();\n }\n");
    env.run("fsview-check-edit", &["--write", "src/lib.rs"])
        .expect(0, "src/lib.rs: ok\n");
    assert_eq!(leftovers(&env), Vec::<String>::new());
}

// The gate's verdicts and messages, exactly as fsview-check-edit gives
// them, and the file untouched.
#[test]
fn the_gate_refuses_first_with_check_edits_verdicts() {
    let env = Env::new();
    env.write("a.rs", "x = 1\n");
    env.run("fsview-edit", &["a.rs", "--old", "1", "--new", "2"])
        .expect(1, "")
        .stderr_is(&format!("fsview-edit: a.rs: not_read: {NOT_READ}\n"));
    env.run_stdin("fsview-write", &["a.rs"], b"x = 2\n")
        .expect(1, "")
        .stderr_is(&format!("fsview-write: a.rs: not_read: {NOT_READ}\n"));
    read(&env, "a.rs");
    env.sh("printf 'y = 0\\n' >> a.rs").expect(0, "");
    let r = env.run(
        "fsview-edit",
        &["--json", "a.rs", "--old", "1", "--new", "2"],
    );
    r.stderr_is(&format!(
        "fsview-edit: a.rs: modified (content): {MODIFIED}\n"
    ));
    let j = r.json();
    assert_eq!(r.code, 1);
    assert_eq!(j[0]["type"], "edit");
    assert_eq!(j[0]["applied"], false);
    assert_eq!(j[0]["verdict"], "modified");
    assert_eq!(j[0]["change"], "content");
    assert_eq!(j[0]["message"], MODIFIED);
    assert_eq!(j[0]["diff"], serde_json::Value::Null);
    assert_eq!(body(&env, "a.rs"), b"x = 1\ny = 0\n");

    // Processed context only.
    env.write("CLAUDE.md", "<!-- note -->\nRule.\n");
    env.run_stdin("fsview-read", &["--processed", "CLAUDE.md"], b"Rule.\n")
        .expect(0, "");
    env.run("fsview-edit", &["CLAUDE.md", "--old", "Rule", "--new", "Law"])
        .expect(1, "")
        .stderr_is("fsview-edit: CLAUDE.md: processed_view: File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.\n");

    // A range is enough for an edit, not for a whole-file write.
    let log: String = (1..=300).map(|i| format!("{i}\n")).collect();
    env.write("app.log", &log);
    env.run(
        "fsview-read",
        &["-q", "--offset", "100", "--limit", "50", "app.log"],
    );
    env.run_stdin("fsview-write", &["app.log"], b"short\n")
        .expect(1, "")
        .stderr_is("fsview-write: app.log: start_only: File has only been read in part (lines 100-149 of 300). Read the whole file before writing all of it.\n");
    env.run("fsview-edit", &["-q", "app.log", "--old", "\n120\n", "--new", "\n120!\n"])
        .expect(0, "--- app.log\n+++ app.log\n@@ -117,7 +117,7 @@\n 117\n 118\n 119\n-120\n+120!\n 121\n 122\n 123\n");
    assert_eq!(body(&env, "CLAUDE.md"), b"<!-- note -->\nRule.\n");

    // Deleted since the read: an edit has nothing to change; written
    // whole, it is created again (nothing there held anyone's text).
    read(&env, "a.rs");
    std::fs::remove_file(env.path("a.rs")).unwrap();
    env.run("fsview-edit", &["a.rs", "--old", "x", "--new", "y"])
        .expect(1, "")
        .stderr_is("fsview-edit: a.rs: modified (deleted): File has been deleted since read: there is nothing to edit. Write the whole file to create it again, or leave it deleted.\n");
    env.run_stdin("fsview-write", &["a.rs"], b"back\n")
        .expect(0, "--- /dev/null\n+++ a.rs\n@@ -0,0 +1 @@\n+back\n")
        .stderr_is("");
    assert_eq!(body(&env, "a.rs"), b"back\n");
}

#[test]
fn refusals_say_what_to_do_in_the_command_lines_words() {
    let env = Env::new();
    env.write("a.py", "x = 1\ny = 1\n");
    read(&env, "a.py");
    let r = env.run(
        "fsview-edit",
        &["--json", "a.py", "--old", "z = 1", "--new", "z = 2"],
    );
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j[0]["verdict"], "not_found");
    // The command line names its flags, on one line (fsview-mcp keeps
    // Claude Code's words for the model).
    assert_eq!(j[0]["message"], "--old is not in the file: \"z = 1\"");
    r.stderr_is("fsview-edit: a.py: not_found: --old is not in the file: \"z = 1\"\n");
    let r = env.run(
        "fsview-edit",
        &["--json", "a.py", "--old", " = 1", "--new", " = 2"],
    );
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j[0]["verdict"], "ambiguous");
    assert_eq!(j[0]["message"], "--old occurs 2 times in the file: \" = 1\"; give --all to replace each, or more of the text around the one to replace");
    env.run("fsview-edit", &["a.py", "--old", "x", "--new", "x"])
        .expect(1, "")
        .stderr_is(
            "fsview-edit: a.py: no_change: --old and --new are the same: nothing to change\n",
        );
    env.run("fsview-edit", &["a.py", "--old", "", "--new", "new"])
        .expect(1, "")
        .stderr_is("fsview-edit: a.py: file_exists: the file exists and has text, so an empty --old cannot create it: give the text to replace as --old, or replace all of it with fsview-write\n");
    assert_eq!(body(&env, "a.py"), b"x = 1\ny = 1\n");
    // --all replaces every occurrence.
    let r = env.run(
        "fsview-edit",
        &["--json", "a.py", "--old", " = 1", "--new", " = 2", "--all"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(
        (
            j[0]["applied"].clone(),
            j[0]["verdict"].clone(),
            j[0]["replacements"].clone()
        ),
        (true.into(), "ok".into(), 2.into())
    );
    assert_eq!(body(&env, "a.py"), b"x = 2\ny = 2\n");
    // Every refusal and the edit are in the log, with their verdicts.
    let events = env.run("fsview-session", &["events", "--json"]).json();
    let got: Vec<(String, String)> = events
        .iter()
        .filter(|e| e["tool"] == "fsview-edit")
        .map(|e| {
            (
                e["verdict"].as_str().unwrap().to_string(),
                e["detail"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("not_found", "-"),
        ("ambiguous", "-"),
        ("no_change", "-"),
        ("file_exists", "-"),
        ("ok", "2 replacements"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
}

// Several edits of one file: in order, each on the result of the one
// before, all or nothing.
#[test]
fn several_edits_are_all_or_nothing() {
    let env = Env::new();
    env.write("m.rs", "use a;\nfn f() { a::g() }\n");
    read(&env, "m.rs");
    let r = env.run(
        "fsview-edit",
        &[
            "m.rs",
            "--old",
            "use a;",
            "--new",
            "use b;",
            "--old",
            "a::nothing",
            "--new",
            "b::g",
        ],
    );
    r.expect(1, "").stderr_is(
        "fsview-edit: m.rs: not_found: Edit 2 of 2: --old is not in the file: \"a::nothing\"\n",
    );
    assert_eq!(body(&env, "m.rs"), b"use a;\nfn f() { a::g() }\n");
    env.run(
        "fsview-edit",
        &["-q", "m.rs", "--old", "use a;", "--new", "use b;", "--old", "a::g", "--new", "b::g"],
    )
    .expect(0, "--- m.rs\n+++ m.rs\n@@ -1,2 +1,2 @@\n-use a;\n-fn f() { a::g() }\n+use b;\n+fn f() { b::g() }\n");
    env.run(
        "fsview-edit",
        &["m.rs", "--old", "x", "--new", "y", "--old", "z"],
    )
    .expect(2, "")
    .stderr_is("fsview-edit: 2 --old but 1 --new; give one --new for each --old, in order\n");
}

// Line endings, encoding, BOM, final newline, mode and owner are the
// file's, not the edit's.
#[test]
fn the_file_keeps_how_it_was_stored() {
    let env = Env::new();
    env.write("crlf.txt", "one\r\ntwo\r\nthree");
    env.write("bom.cs", b"\xEF\xBB\xBFclass A {}\n");
    env.write("latin1.txt", b"caf\xe9\nvalue = 1\n");
    let script = env.write("run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::chown(&script, Some(1234), Some(5678)).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o4750)).unwrap();
    for f in ["crlf.txt", "bom.cs", "latin1.txt", "run.sh"] {
        read(&env, f);
    }
    // The model sends LF; the file stays CRLF, without a final newline.
    env.run("fsview-edit", &["-q", "crlf.txt", "--old", "two\nthree", "--new", "2\n3\n4"])
        .expect(0, "--- crlf.txt\n+++ crlf.txt\n@@ -1,3 +1,4 @@\n one\r\n-two\r\n-three\n\\ No newline at end of file\n+2\r\n+3\r\n+4\n\\ No newline at end of file\n");
    assert_eq!(body(&env, "crlf.txt"), b"one\r\n2\r\n3\r\n4");
    env.run(
        "fsview-edit",
        &["-q", "bom.cs", "--old", "class A", "--new", "class B"],
    );
    assert_eq!(body(&env, "bom.cs"), b"\xEF\xBB\xBFclass B {}\n");
    env.run(
        "fsview-edit",
        &["-q", "latin1.txt", "--old", "= 1", "--new", "= 2"],
    );
    assert_eq!(body(&env, "latin1.txt"), b"caf\xe9\nvalue = 2\n");
    env.run(
        "fsview-edit",
        &["-q", "run.sh", "--old", "hi", "--new", "hello"],
    );
    let m = std::fs::metadata(env.path("run.sh")).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o4750, 1234, 5678));
    assert_eq!(body(&env, "run.sh"), b"#!/bin/sh\necho hello\n");
    // fsview-write keeps the BOM and the mode as well.
    read(&env, "bom.cs");
    env.run_stdin("fsview-write", &["-q", "bom.cs"], b"class C {}\n");
    assert_eq!(body(&env, "bom.cs"), b"\xEF\xBB\xBFclass C {}\n");
}

// UTF-16 (with its BOM) is decoded to match and encoded back. fsview-read
// does not show UTF-16, so the view comes from a pipeline that did.
#[test]
fn utf16_stays_utf16() {
    let env = Env::new();
    let utf16 = |s: &str| -> Vec<u8> {
        let mut v = vec![0xFF, 0xFE];
        v.extend(s.encode_utf16().flat_map(|u| u.to_le_bytes()));
        v
    };
    env.write("w.txt", utf16("héllo\r\nwörld\r\n"));
    env.run_stdin(
        "fsview-read",
        &["--processed", "w.txt"],
        &utf16("héllo\r\nwörld\r\n"),
    )
    .expect(0, "");
    env.run(
        "fsview-edit",
        &["-q", "w.txt", "--old", "wörld", "--new", "wörld!\nagain"],
    )
    .expect(
        0,
        "--- w.txt\n+++ w.txt\n@@ -1,2 +1,3 @@\n héllo\r\n-wörld\r\n+wörld!\r\n+again\r\n",
    );
    assert_eq!(body(&env, "w.txt"), utf16("héllo\r\nwörld!\r\nagain\r\n"));
}

// Decided: when the exact text is not found, curly quotes in the file
// match straight ones typed by the model (as Claude Code does), and the new
// text takes the file's curly style.
#[test]
fn curly_quotes_match_straight_ones() {
    let env = Env::new();
    env.write("doc.md", "She said “it’s done” today.\n");
    read(&env, "doc.md");
    env.run("fsview-edit", &["-q", "doc.md", "--old", "said \"it's done\"", "--new", "said \"it's finished\""])
        .expect(0, "--- doc.md\n+++ doc.md\n@@ -1 +1 @@\n-She said “it’s done” today.\n+She said “it’s finished” today.\n");
}

#[test]
fn deleting_a_line_takes_its_line_break() {
    let env = Env::new();
    env.write("a.txt", "keep\ndrop me\nkeep too\n");
    read(&env, "a.txt");
    env.run(
        "fsview-edit",
        &["-q", "a.txt", "--old", "drop me", "--new", ""],
    );
    assert_eq!(body(&env, "a.txt"), b"keep\nkeep too\n");
}

#[test]
fn new_files_need_no_read_and_get_their_directories() {
    let env = Env::new();
    env.run(
        "fsview-edit",
        &["new/deep/a.rs", "--old", "", "--new", "fn a() {}\n"],
    )
    .expect(
        0,
        "--- /dev/null\n+++ new/deep/a.rs\n@@ -0,0 +1 @@\n+fn a() {}\n",
    );
    assert_eq!(body(&env, "new/deep/a.rs"), b"fn a() {}\n");
    env.run_stdin("fsview-write", &["b.txt"], b"no newline")
        .expect(
            0,
            "--- /dev/null\n+++ b.txt\n@@ -0,0 +1 @@\n+no newline\n\\ No newline at end of file\n",
        );
    assert_eq!(body(&env, "b.txt"), b"no newline");
    // Created files are written views: edit them straight away.
    env.run("fsview-edit", &["-q", "b.txt", "--old", "no", "--new", "a"])
        .expect(0, "--- b.txt\n+++ b.txt\n@@ -1 +1 @@\n-no newline\n\\ No newline at end of file\n+a newline\n\\ No newline at end of file\n");
    // Editing a file that is not there.
    env.run("fsview-edit", &["c.rs", "--old", "x", "--new", "y"])
        .expect(1, "")
        .stderr_is("fsview-edit: c.rs: not_found: the file does not exist: to create it, give an empty --old and the whole text as --new (or use fsview-write)\n");
    let mode = std::fs::metadata(env.path("b.txt")).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o666 & !umask());
}

fn umask() -> u32 {
    // The test process's umask (children inherit it).
    // SAFETY: umask is process-wide; setting it back at once.
    unsafe {
        let m = libc::umask(0o022);
        libc::umask(m);
        m as u32
    }
}

#[test]
fn a_whole_file_write_needs_a_full_view_and_keeps_the_content_as_given() {
    let env = Env::new();
    env.write("a.txt", "one\r\ntwo\r\n");
    read(&env, "a.txt");
    // Written as given: the content's own line endings.
    env.run_stdin("fsview-write", &["-q", "a.txt"], b"uno\ndos\n")
        .expect(
            0,
            "--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n-one\r\n-two\r\n+uno\n+dos\n",
        );
    assert_eq!(body(&env, "a.txt"), b"uno\ndos\n");
    // The same content again: nothing to rewrite, still exit 0.
    let before = std::fs::metadata(env.path("a.txt")).unwrap().ino();
    let r = env.run_stdin("fsview-write", &["--json", "a.txt"], b"uno\ndos\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j[0]["type"], "write");
    assert_eq!(j[0]["applied"], true);
    assert_eq!(j[0]["diff"], "");
    assert_eq!(
        j[0]["message"],
        "The file a.txt already holds this content; nothing was rewritten."
    );
    assert_eq!(std::fs::metadata(env.path("a.txt")).unwrap().ino(), before);
    // --content FILE
    env.write("draft", "from a file\n");
    env.run("fsview-write", &["-q", "--content", "draft", "a.txt"]);
    assert_eq!(body(&env, "a.txt"), b"from a file\n");
}

#[test]
fn dry_run_writes_nothing() {
    let env = Env::new();
    env.write("a.rs", "let a = 1;\n");
    read(&env, "a.rs");
    let before = std::fs::metadata(env.path("a.rs")).unwrap();
    let r = env.run(
        "fsview-edit",
        &["--dry-run", "--json", "a.rs", "--old", "a", "--new", "b"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j[0]["applied"], false);
    assert_eq!(j[0]["verdict"], "ok");
    assert_eq!(j[0]["dry_run"], true);
    assert_eq!(
        j[0]["diff"],
        "--- a.rs\n+++ a.rs\n@@ -1 +1 @@\n-let a = 1;\n+let b = 1;\n"
    );
    assert_eq!(
        j[0]["message"],
        "Dry run: the change to a.rs is allowed and was not written."
    );
    let after = std::fs::metadata(env.path("a.rs")).unwrap();
    assert_eq!(
        (after.ino(), after.mtime_nsec()),
        (before.ino(), before.mtime_nsec())
    );
    assert_eq!(body(&env, "a.rs"), b"let a = 1;\n");
    // A dry run of a new file creates nothing, and a refusal is still one.
    env.run(
        "fsview-edit",
        &["-n", "d/new.rs", "--old", "", "--new", "x"],
    )
    .expect(
        0,
        "--- /dev/null\n+++ d/new.rs\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n",
    );
    assert!(!env.path("d").exists());
    env.run("fsview-edit", &["-n", "a.rs", "--old", "zz", "--new", "b"])
        .expect(1, "");
}

#[test]
fn requests_on_stdin_in_order_and_all_or_nothing_per_line() {
    let env = Env::new();
    env.write("a.rs", "a1\na2\n");
    env.write("b.rs", "b1\n");
    read(&env, "a.rs");
    read(&env, "b.rs");
    let input = concat!(
        r#"{"path":"a.rs","old_string":"a1","new_string":"A1"}"#,
        "\n",
        r#"{"file_path":"b.rs","edits":[{"old_string":"b1","new_string":"B1"},{"old_string":"nope","new_string":"x"}]}"#,
        "\n",
        r#"{"path":"a.rs","edits":[{"old_string":"a2","new_string":"A2"},{"old_string":"A1","new_string":"AA","replace_all":true}]}"#,
        "\n",
        r#"{"path":"a.rs","old_string":"x"}"#,
        "\n",
        r#"not json"#,
        "\n",
        r#"{"path":"c.rs","old_string":"","new_string":"new\n"}"#,
        "\n",
    );
    let r = env.run_stdin("fsview-edit", &["--requests", "--json"], input.as_bytes());
    assert_eq!(r.code, 2, "{}", r.stderr);
    let j = r.json();
    let got: Vec<(String, String, bool)> = j
        .iter()
        .map(|o| {
            (
                o["type"].as_str().unwrap().to_string(),
                o["verdict"]
                    .as_str()
                    .or(o["error"].as_str())
                    .unwrap()
                    .to_string(),
                o["applied"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    let shape = "each line must be an object like {\"path\":\"a.rs\",\"old_string\":\"x\",\"new_string\":\"y\"} or {\"path\":\"a.rs\",\"edits\":[{\"old_string\":\"x\",\"new_string\":\"y\"}]}";
    // In the order of the lines, bad ones where they stood.
    assert_eq!(
        got,
        [
            ("edit".to_string(), "ok".to_string(), true),
            ("edit".to_string(), "not_found".to_string(), false),
            ("edit".to_string(), "ok".to_string(), true),
            (
                "error".to_string(),
                "stdin line 4: missing field `new_string`".to_string(),
                false
            ),
            (
                "error".to_string(),
                format!("stdin line 5: expected ident at line 1 column 2; {shape}"),
                false
            ),
            ("edit".to_string(), "new_file".to_string(), true),
        ]
    );
    assert_eq!(body(&env, "a.rs"), b"AA\nA2\n");
    assert_eq!(body(&env, "b.rs"), b"b1\n");
    assert_eq!(body(&env, "c.rs"), b"new\n");
    assert_eq!(
        r.stderr,
        format!(
            "fsview-edit: b.rs: not_found: Edit 2 of 2: old_string is not in the file: \"nope\"\n\
             fsview-edit: stdin line 4: missing field `new_string`\n\
             fsview-edit: stdin line 5: expected ident at line 1 column 2; {shape}\n"
        )
    );
    // fsview-write takes {"path", "content"}.
    let r = env.run_stdin(
        "fsview-write",
        &["--requests"],
        b"{\"path\":\"d.txt\",\"content\":\"d\\n\"}\n{\"path\":\"e.txt\"}\n",
    );
    // Only bad lines: an error for each, and no session file is needed.
    let fresh = Env::new();
    fresh
        .run_stdin("fsview-edit", &["--requests"], b"{}\n")
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-edit: stdin line 1: missing field `path` at line 1 column 2; {shape}\n"
        ));
    assert!(!fresh.session.exists());
    assert_eq!(r.code, 2);
    assert_eq!(body(&env, "d.txt"), b"d\n");
    assert_eq!(r.stderr, "fsview-write: stdin line 2: missing field `content` at line 1 column 16; each line must be an object like {\"path\":\"a.rs\",\"content\":\"...\"}\n");
}

// Symbolic links: the target is written, the link stays a link. Hard
// links: the path gets a new file, the other name keeps the old text, and
// a notice says so.
#[test]
fn links() {
    let env = Env::new();
    env.write("real.txt", "v1\n");
    std::os::unix::fs::symlink("real.txt", env.path("link.txt")).unwrap();
    read(&env, "link.txt");
    env.run(
        "fsview-edit",
        &["-q", "link.txt", "--old", "v1", "--new", "v2"],
    );
    assert!(std::fs::symlink_metadata(env.path("link.txt"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(body(&env, "real.txt"), b"v2\n");
    // The view is of the target, under any name.
    env.run("fsview-check-edit", &["--write", "real.txt"])
        .expect(0, "real.txt: ok\n");

    std::fs::hard_link(env.path("real.txt"), env.path("hard.txt")).unwrap();
    read(&env, "hard.txt");
    let r = env.run("fsview-edit", &["hard.txt", "--old", "v2", "--new", "v3"]);
    assert_eq!(r.code, 0);
    r.stderr_is("fsview-edit: hard.txt had 2 hard links; it was replaced by a new file, so the other names still hold the old text\n");
    assert_eq!(body(&env, "hard.txt"), b"v3\n");
    assert_eq!(body(&env, "real.txt"), b"v2\n");
    // -q keeps notices off stderr; --json has them.
    read(&env, "real.txt");
    std::fs::hard_link(env.path("real.txt"), env.path("hard2.txt")).unwrap();
    let r = env.run(
        "fsview-edit",
        &["-q", "--json", "real.txt", "--old", "v2", "--new", "v4"],
    );
    r.stderr_is("");
    assert_eq!(r.json()[0]["notices"][0], "real.txt had 2 hard links; it was replaced by a new file, so the other names still hold the old text");
}

// A formatter that rewrites the file after fsview-edit is caught by the
// next check: the view is what fsview-edit wrote.
#[test]
fn the_written_view_catches_a_later_rewrite() {
    let env = Env::new();
    env.write("a.rs", "fn a(){}\n");
    read(&env, "a.rs");
    env.run(
        "fsview-edit",
        &["-q", "a.rs", "--old", "a(){}", "--new", "b(){}"],
    );
    env.run("fsview-check-edit", &["a.rs"])
        .expect(0, "a.rs: ok\n");
    env.sh("printf 'fn b() {}\\n' > a.rs").expect(0, "");
    env.run("fsview-check-edit", &["--changed"])
        .expect(1, "a.rs: modified (content)\n--- a.rs (as viewed)\n+++ a.rs (now)\n@@ -1 +1 @@\n-fn b(){}\n+fn b() {}\n");
    let show = env.run("fsview-session", &["show", "--json"]).json();
    assert_eq!(
        (show[0]["kind"].as_str(), show[0]["source"].as_str()),
        (Some("full"), Some("write"))
    );
}

#[test]
fn bad_input_is_one_line_exit_2_and_the_file_untouched() {
    let env = Env::new();
    std::fs::create_dir(env.path("dir")).unwrap();
    env.write("bin.dat", b"\x7fELF\0\0\x01");
    env.write("ro.txt", "read only\n");
    read(&env, "ro.txt");
    std::fs::set_permissions(env.path("ro.txt"), std::fs::Permissions::from_mode(0o444)).unwrap();
    env.run("fsview-edit", &["dir", "--old", "a", "--new", "b"])
        .expect(2, "")
        .stderr_is("fsview-edit: dir is a directory; fsview-edit changes regular files only\n");
    // A binary file is an error before the gate's answer: no read can
    // show it, so "read it first" would be a dead end (issue 43).
    for tool in ["fsview-edit", "fsview-write"] {
        let args: &[&str] = match tool {
            "fsview-edit" => &["bin.dat", "--old", "ELF", "--new", "FLE"],
            _ => &["bin.dat"],
        };
        env.run_stdin(tool, args, b"text\n")
            .expect(2, "")
            .stderr_is(&format!("{tool}: bin.dat looks binary (a NUL byte in its first 8 KiB, or broken UTF-16); {tool} changes text files only\n"));
    }
    assert_eq!(body(&env, "bin.dat"), b"\x7fELF\0\0\x01");
    // One that cannot be read (as another user) gets the gate's answer.
    std::fs::set_permissions(env.path("bin.dat"), std::fs::Permissions::from_mode(0o600)).unwrap();
    as_user(&env, &["fsview-edit", "bin.dat", "--old", "ELF", "--new", "FLE"])
        .expect(1, "")
        .stderr_is("fsview-edit: bin.dat: not_read: File has not been read yet. Read it first before writing to it.\n");
    std::fs::set_permissions(env.path("bin.dat"), std::fs::Permissions::from_mode(0o644)).unwrap();
    env.run_stdin("fsview-write", &["new.txt"], b"a\0b")
        .expect(2, "")
        .stderr_is("fsview-write: the new content for new.txt has a NUL byte (binary data); fsview-write writes text only\n");
    assert!(!env.path("new.txt").exists());
    // A file no one may write is refused for root too (one rule for
    // everyone, issue 22); another user gets the same answer.
    env.run("fsview-edit", &["ro.txt", "--old", "read", "--new", "write"])
        .expect(2, "")
        .stderr_is("fsview-edit: ro.txt is read-only (mode 0444): no one may write it, root included; make it writable (chmod u+w) to change it\n");
    as_user(&env, &["fsview-read", "ro.txt"]).expect(0, "1\tread only\n");
    let r = as_user(
        &env,
        &["fsview-edit", "ro.txt", "--old", "read", "--new", "write"],
    );
    r.expect(2, "").stderr_is(
        "fsview-edit: ro.txt is read-only (mode 0444): no one may write it, root included; make it writable (chmod u+w) to change it\n",
    );
    env.write("theirs.txt", "root's\n");
    as_user(&env, &["fsview-read", "theirs.txt"]).expect(0, "1\troot's\n");
    let r = as_user(
        &env,
        &[
            "fsview-edit",
            "theirs.txt",
            "--old",
            "root",
            "--new",
            "mine",
        ],
    );
    r.expect(2, "").stderr_is("fsview-edit: theirs.txt is not writable for you (mode 0644, owner uid 0); ask its owner, or run as them\n");
    assert_eq!(body(&env, "ro.txt"), b"read only\n");
    // The good paths of one call are still done.
    env.write("ok.txt", "fine\n");
    read(&env, "ok.txt");
    let r = env.run(
        "fsview-edit",
        &["dir", "ok.txt", "--old", "fine", "--new", "good"],
    );
    assert_eq!(r.code, 2);
    assert_eq!(body(&env, "ok.txt"), b"good\n");
    assert_eq!(leftovers(&env), Vec::<String>::new());
}

// A directory that cannot be written, a read-only filesystem and a full
// disk: real ones, in a private mount namespace (`unshare -m`, as root).
#[test]
fn unwritable_directory_read_only_filesystem_and_full_disk() {
    let env = Env::new();
    let m = env.root().join("m");
    std::fs::create_dir(&m).unwrap();
    let user = env.root().join("u");
    std::fs::create_dir(&user).unwrap();
    std::os::unix::fs::chown(&user, Some(4321), Some(4321)).unwrap();
    let script = format!(
        r#"set -u
        mount -t tmpfs -o size=256k tmpfs "{m}"
        cd "{m}"
        printf 'small\n' > a.txt
        fsview-read -q a.txt > /dev/null
        head -c 200000 /dev/zero | tr '\0' 'x' > filler
        fsview-edit -q a.txt --old small --new "$(head -c 80000 /dev/zero | tr '\0' 'y')"; echo "full rc=$?"
        cat a.txt; ls -A | grep -c fsview- ; rm filler
        mkdir locked && printf 'in locked\n' > locked/b.txt && chown 4321 locked/b.txt
        chmod 555 locked
        as_user() {{ FSVIEW_SESSION="{user}/s.db" setpriv --reuid=4321 --regid=4321 --clear-groups -- "$@"; }}
        as_user fsview-read -q locked/b.txt > /dev/null
        as_user fsview-edit -q locked/b.txt --old in --new out; echo "dir rc=$?"
        cat locked/b.txt
        mount -o remount,ro "{m}"
        fsview-edit -q a.txt --old small --new big; echo "ro rc=$?"
        cat a.txt"#,
        m = m.display(),
        user = user.display(),
    );
    std::fs::set_permissions(env.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = env.cmd("unshare");
    c.args(["-m", "--propagation", "private", "bash", "-c", &script]);
    let r = output(c, None);
    r.expect(
        0,
        "full rc=2\nsmall\n0\ndir rc=2\nin locked\nro rc=2\nsmall\n",
    );
    r.stderr_is(&format!(
        "fsview-edit: cannot write a.txt: no space left on device; free some disk space\n\
         fsview-edit: cannot write locked/b.txt: its directory {m}/locked is not writable (fsview-edit writes the new text to a file beside it and renames that into place); make the directory writable\n\
         fsview-edit: a.txt is on a read-only filesystem; it cannot be changed there\n",
        m = m.display()
    ));
}

#[test]
fn help_and_version_open_no_session() {
    let env = Env::new();
    for tool in ["fsview-edit", "fsview-write"] {
        let r = env.run(tool, &["--help"]);
        assert_eq!(r.code, 0);
        assert!(r.stdout.contains("Examples:"), "{}", r.stdout);
        assert_eq!(env.run(tool, &["--version"]).code, 0);
    }
    assert!(!env.session.exists());
}

// A reader that goes away stops the printing, not the edits: every request
// is still applied, and the exit status says how they went.
#[test]
fn a_closed_stdout_stops_printing_not_editing() {
    let env = Env::new();
    let big: String = (0..8000).map(|i| format!("line {i}\n")).collect();
    let reqs = format!(
        "{{\"path\":\"big.txt\",\"old_string\":\"\",\"new_string\":\"{}\"}}\n\
         {{\"path\":\"big.txt\",\"old_string\":\"line 4999\\n\",\"new_string\":\"last\\n\"}}\n\
         {{\"path\":\"small.txt\",\"old_string\":\"\",\"new_string\":\"s\\n\"}}\n\
         {{\"path\":\"small.txt\",\"old_string\":\"nothing\",\"new_string\":\"x\"}}\n",
        big.replace('\n', "\\n")
    );
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut c = env.cmd(bin("fsview-edit"));
    c.arg("--requests").stdout(writer);
    let mut child = c
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(reqs.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "fsview-edit: small.txt: not_found: old_string is not in the file: \"nothing\"\n"
    );
    assert!(body(&env, "big.txt") == big.replace("line 4999\n", "last\n").as_bytes());
    assert_eq!(body(&env, "small.txt"), b"s\n");
}

// The session file's disk fills up after the file was written: the edit
// stands (exit 2 says the record failed), and the gate fails closed: the
// old view no longer matches, so the next edit needs a read.
#[test]
fn a_write_that_cannot_be_recorded_says_so_and_fails_closed() {
    let env = Env::new();
    let m = env.root().join("m");
    std::fs::create_dir(&m).unwrap();
    env.write("a.txt", "small\n");
    let script = format!(
        r#"mount -t tmpfs -o size=512k tmpfs "{m}"
        export FSVIEW_SESSION="{m}/s.db"
        fsview-read -q a.txt > /dev/null
        # The log's pages, kept between calls, given back: the record
        # below needs new space.
        fsview-session gc > /dev/null
        avail=$(df --output=avail -B1 "{m}" | tail -1)
        head -c $((avail - 24576)) /dev/zero > "{m}/filler"
        fsview-edit -q a.txt --old small --new "$(head -c 100000 /dev/zero | tr '\0' 'y')" > /dev/null; echo "rc=$?"
        wc -c < a.txt
        rm "{m}/filler"
        fsview-check-edit a.txt"#,
        m = m.display(),
    );
    let mut c = env.cmd("unshare");
    c.args(["-m", "--propagation", "private", "bash", "-c", &script]);
    let r = output(c, None);
    r.expect(
        1,
        &format!("rc=2\n100001\na.txt: modified (replaced): {MODIFIED}\n"),
    );
    r.stderr_is(&format!(
        "fsview-edit: a.txt was written, but its view was not recorded (the disk holding session file {m}/s.db is full; nothing was recorded; free some space and retry); read it again before the next edit\n",
        m = m.display()
    ));
}

/// A mistyped --sid on fsview-edit or fsview-write: the refusal names the
/// sessions the file does hold, and asking creates no session; a new file
/// written under it starts that session with its view.
#[test]
fn a_mistyped_sid_is_named_not_created() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.run("fsview-read", &["--sid", "agent-7", "a.rs"]);
    let hint = format!(
        "no session \"agnt-7\" in {}; nearest: \"agent-7\" (see `fsview-session list`); it has no views, so every file in it is not_read",
        env.session.display()
    );
    env.run(
        "fsview-edit",
        &["--sid", "agnt-7", "a.rs", "--old", "a()", "--new", "b()"],
    )
    .expect(1, "")
    .stderr_is(&format!(
        "fsview-edit: a.rs: not_read: File has not been read yet. Read it first before writing to it.\nfsview-edit: {hint}\n"
    ));
    env.run_stdin("fsview-write", &["--sid", "agnt-7", "a.rs"], b"x\n")
        .expect(1, "")
        .stderr_is(&format!(
            "fsview-write: a.rs: not_read: File has not been read yet. Read it first before writing to it.\nfsview-write: {hint}\n"
        ));
    let sids = crate::harness::sids;
    assert_eq!(sids(&env), ["agent-7"]);
    assert_eq!(body(&env, "a.rs"), b"fn a() {}\n");
    // A new file needs no read: written, and the session starts with it.
    let r = env.run_stdin(
        "fsview-write",
        &["--sid", "agnt-7", "-q", "new.rs"],
        b"new\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(sids(&env), ["agent-7", "agnt-7"]);
}

// An edit of lines the agent read (a range), in a file changed since: made
// beside the change when it stands 3 or more lines inside those lines and
// from every line the change touched; the change told as what became of
// the lines it read, where they are now. The agent is then held to the
// lines its edit showed it, never to the whole file.
#[test]
fn an_edit_of_a_range_merges_with_a_change_it_stands_apart_from() {
    let env = Env::new();
    let text: String = (1..=60).map(|i| format!("line {i}\n")).collect();
    env.write("f.txt", &text);
    let r = env.run(
        "fsview-read",
        &["-q", "--offset", "20", "--limit", "11", "f.txt"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Two lines added at the top, one changed inside the lines read.
    let theirs = format!("a\nb\n{}", text.replace("line 22\n", "line 22 formatted\n"));
    env.write("f.txt", &theirs);
    let r = env.run(
        "fsview-edit",
        &[
            "--json",
            "f.txt",
            "--old",
            "line 27\n",
            "--new",
            "line 27 edited\n",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(j["verdict"], "merged");
    assert_eq!(
        j["merged"],
        serde_json::json!({
            "diff": "--- f.txt\n+++ f.txt\n@@ -21,7 +21,7 @@\n line 19\n line 20\n line 21\n-line 22\n+line 22 formatted\n line 23\n line 24\n line 25\n",
            "writer": null,
            "lines": {"seen": [20, 30], "now": [22, 32]},
        })
    );
    assert_eq!(
        body(&env, "f.txt"),
        theirs.replace("line 27\n", "line 27 edited\n").as_bytes()
    );
    // Held to the line the edit showed: another edit needs no read, a
    // whole-file write does.
    env.run("fsview-check-edit", &["f.txt"])
        .expect(0, "f.txt: ok\n");
    env.run("fsview-check-edit", &["--write", "f.txt"])
        .expect(1, "f.txt: start_only: File has only been read in part (line 29 of 62). Read the whole file before writing all of it.\n");

    // Changed only outside the lines read: said in one line.
    env.write("f.txt", &text);
    let r = env.run(
        "fsview-read",
        &["-q", "--offset", "20", "--limit", "11", "f.txt"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.write("f.txt", text.replace("line 50\n", "line fifty\n"));
    env.run("fsview-edit", &["f.txt", "--old", "line 25\n", "--new", "line 25 edited\n"])
        .expect(0, "--- f.txt\n+++ f.txt\n@@ -22,7 +22,7 @@\n line 22\n line 23\n line 24\n-line 25\n+line 25 edited\n line 26\n line 27\n line 28\n")
        .stderr_is("fsview-edit: f.txt: merged: it had been changed since lines 20-30 were read, outside them (they are lines 20-30 now); that change is kept, and the edit was made beside it\n");

    // Within 3 lines of the change inside them, or of their end: refused,
    // and nothing written. With merging off: refused.
    let r = env.run(
        "fsview-read",
        &["-q", "--offset", "20", "--limit", "11", "f.txt"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let now = body(&env, "f.txt");
    env.write(
        "f.txt",
        String::from_utf8(now)
            .unwrap()
            .replace("line 22\n", "line 22!\n"),
    );
    let before = body(&env, "f.txt");
    for (old, args) in [
        ("line 24\n", &[][..]),
        ("line 28\n", &[][..]),
        ("line 26\n", &["--on-change", "refuse"][..]),
    ] {
        let mut a = vec!["f.txt", "--old", old, "--new", "x\n"];
        a.extend_from_slice(args);
        env.run("fsview-edit", &a).expect(1, "").stderr_is(&format!(
            "fsview-edit: f.txt: modified (content): {MODIFIED}\n"
        ));
    }
    assert_eq!(body(&env, "f.txt"), before);
    env.run("fsview-edit", &["-q", "f.txt", "--old", "line 26\n", "--new", "x\n"])
        .expect(0, "--- f.txt\n+++ f.txt\n@@ -23,7 +23,7 @@\n line 23\n line 24\n line 25 edited\n-line 26\n+x\n line 27\n line 28\n line 29\n");
}

// A file that starts with a UTF-8 BOM, changed since it was read: an edit
// far from the change merges as in any other file, the BOM kept, and the
// change told is the other change only (the text as read starts with the
// BOM, the decoded text does not: that is no change).
#[test]
fn an_edit_merges_in_a_file_with_a_byte_order_mark() {
    let env = Env::new();
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    env.write("a.txt", format!("\u{feff}{text}"));
    assert_eq!(env.run("fsview-read", &["a.txt"]).code, 0);
    env.write(
        "a.txt",
        format!("\u{feff}{}", text.replace("line 10\n", "line 10 X\n")),
    );
    let r = env.run(
        "fsview-edit",
        &[
            "--json",
            "a.txt",
            "--old",
            "line 2\n",
            "--new",
            "line two\n",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(j["verdict"], "merged");
    assert_eq!(
        j["merged"]["diff"],
        "--- a.txt\n+++ a.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line 10 X\n line 11\n line 12\n line 13\n"
    );
    assert_eq!(
        body(&env, "a.txt"),
        format!(
            "\u{feff}{}",
            text.replace("line 10\n", "line 10 X\n")
                .replace("line 2\n", "line two\n")
        )
        .as_bytes()
    );
}

// --quiet keeps notices off stderr, but not a merge's other change: the
// view now holds it, so the caller must have been told it (a whole write
// from what it knew would else go through and drop that change unseen).
#[test]
fn a_quiet_edit_still_tells_the_change_it_merged_with() {
    let env = Env::new();
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    env.write("a.txt", &text);
    read(&env, "a.txt");
    env.write("a.txt", text.replace("line 15\n", "line 15 theirs\n"));
    let r = env.run(
        "fsview-edit",
        &["-q", "a.txt", "--old", "line 2\n", "--new", "line two\n"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "fsview-edit: a.txt: merged: it had changed since it was read; that change is kept, and the edit was made beside it:\n--- a.txt\n+++ a.txt\n@@ -12,7 +12,7 @@\n line 12\n line 13\n line 14\n-line 15\n+line 15 theirs\n line 16\n line 17\n line 18\n"
    );
    // With --json the JSON tells it, and --quiet keeps stderr quiet.
    env.write(
        "a.txt",
        body(&env, "a.txt")
            .iter()
            .map(|&b| b as char)
            .collect::<String>()
            .replace("line 18\n", "line 18 theirs\n"),
    );
    let r = env.run(
        "fsview-edit",
        &[
            "-q",
            "--json",
            "a.txt",
            "--old",
            "line 3\n",
            "--new",
            "line three\n",
        ],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(j["verdict"], "merged");
    assert_eq!(
        j["merged"]["diff"],
        "--- a.txt\n+++ a.txt\n@@ -15,6 +15,6 @@\n line 15 theirs\n line 16\n line 17\n-line 18\n+line 18 theirs\n line 19\n line 20\n"
    );
}

// Who changed it is named only for a change fsview saw made after the
// asker last saw the file. Each of these was once named after a writer
// whose trace merely held the same bytes.
#[test]
fn a_writer_is_named_only_for_what_it_wrote_after_the_askers_view() {
    let env = Env::new();
    let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let read = |sid: &str| assert_eq!(env.run("fsview-read", &["--sid", sid, "a.txt"]).code, 0);
    let edit = |sid: &str, old: &str, new: &str| {
        let r = env.run(
            "fsview-edit",
            &["--sid", sid, "a.txt", "--old", old, "--new", new],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    let modified = format!("a.txt: modified (content): {MODIFIED}\n");

    // Changed back: B's edit, which A then read past and edited itself;
    // the user puts B's version back. B did not make this change.
    env.write("a.txt", &text);
    read("A");
    read("B");
    edit("B", "line 10\n", "line ten\n");
    let by_b = std::fs::read(env.path("a.txt")).unwrap();
    read("A");
    edit("A", "line 15\n", "line fifteen\n");
    env.write("a.txt", &by_b);
    env.run("fsview-check-edit", &["--sid", "A", "a.txt"])
        .expect(1, &modified);

    // A write of the bytes already there wrote nothing: the user's line
    // is the user's, not C's.
    env.write("a.txt", &text);
    read("A");
    env.write("a.txt", format!("{text}user line\n"));
    read("C");
    let r = env.run_stdin(
        "fsview-write",
        &["--sid", "C", "a.txt"],
        format!("{text}user line\n").as_bytes(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.run("fsview-check-edit", &["--sid", "A", "a.txt"])
        .expect(1, &modified);

    // A fork's copy of M's earlier edit: the fork wrote nothing.
    env.write("a.txt", &text);
    read("M");
    edit("M", "line 10\n", "line ten\n");
    let first = std::fs::read(env.path("a.txt")).unwrap();
    let r = env.run(
        "fsview-session",
        &["fork", "--from", "M", "--sid", "M/worker-1"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    edit("M", "line 12\n", "line twelve\n");
    env.write("a.txt", &first);
    env.run("fsview-check-edit", &["--sid", "M", "a.txt"])
        .expect(1, &modified);

    // Still named for what it did write since.
    read("A");
    read("B");
    edit("B", "line 3\n", "line three\n");
    let r = env.run("fsview-check-edit", &["--sid", "A", "a.txt"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        crate::harness::untimed(&r.stdout),
        "a.txt: modified (replaced): File has been modified since read, by fsview-edit in session \"B\" at HH:MM. Read it again before attempting to write it.\n"
    );
    // --changed names it too, in its text and its JSON.
    let r = env.run("fsview-check-edit", &["--sid", "A", "--changed"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        crate::harness::untimed(&r.stdout).starts_with(
            "a.txt: modified (replaced): by fsview-edit in session \"B\" at HH:MM\n--- a.txt (as viewed)\n"
        ),
        "{}",
        r.stdout
    );
    let r = env.run("fsview-check-edit", &["--sid", "A", "--changed", "--json"]);
    let j: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(
        crate::harness::untimed(j["writer"].as_str().unwrap()),
        "fsview-edit in session \"B\" at HH:MM"
    );
}

// A file with bytes that are not UTF-8: a read shows them as U+FFFD, so a
// whole write from what was shown would replace them unseen. Refused with
// one line (exit 2, nothing written); an edit of its other lines keeps them.
#[test]
fn a_whole_write_over_bytes_shown_as_replacement_characters_is_refused() {
    let env = Env::new();
    env.write("lat.txt", b"caf\xe9\nline two\n");
    assert_eq!(env.run("fsview-read", &["lat.txt"]).code, 0);
    env.run_stdin("fsview-write", &["lat.txt"], "caf\u{fffd}\nline 2\n".as_bytes())
        .expect(2, "")
        .stderr_is("fsview-write: lat.txt holds bytes that are not UTF-8, which a read shows as U+FFFD: writing it whole would replace them; change its lines with an edit instead\n");
    assert_eq!(body(&env, "lat.txt"), b"caf\xe9\nline two\n");
    let r = env.run(
        "fsview-edit",
        &["-q", "lat.txt", "--old", "line two", "--new", "line 2"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(body(&env, "lat.txt"), b"caf\xe9\nline 2\n");
}

// A name ending in `/` names a directory: never created as a file.
#[test]
fn a_path_ending_in_a_slash_is_not_made_a_file() {
    let env = Env::new();
    env.run_stdin("fsview-write", &["newdir/"], b"x\n")
        .expect(2, "")
        .stderr_is("fsview-write: newdir/ ends in /, which names a directory; fsview-write changes regular files: name one\n");
    assert!(!env.path("newdir").exists());
}
