//! fsview-read: what it shows, what it records, what it refuses.

use crate::harness::Env;

#[test]
fn numbers_a_whole_file_and_records_a_full_view() {
    let env = Env::new();
    env.write("a.rs", "fn main() {\n    x();\n}\n");
    env.run("fsview-read", &["a.rs"])
        .expect(0, "1\tfn main() {\n2\t    x();\n3\t}\n")
        .stderr_is("");
    let j = env.run("fsview-read", &["--json", "a.rs"]).json();
    assert_eq!(j[0]["type"], "read");
    assert_eq!(j[0]["kind"], "full");
    assert_eq!(j[0]["source"], "read");
    assert_eq!(j[0]["unchanged"], true);
    assert_eq!(j[0]["total_lines"], 3);
    assert_eq!(j[0]["path"], "a.rs");
    assert_eq!(j[0]["canonical"], env.path("a.rs").to_str().unwrap());
}

#[test]
fn range_is_numbered_from_its_offset() {
    let env = Env::new();
    let body: String = (1..=300).map(|i| format!("log line {i}\n")).collect();
    env.write("app.log", body);
    env.run(
        "fsview-read",
        &["--offset", "100", "--limit", "3", "app.log"],
    )
    .expect(
        0,
        "100\tlog line 100\n101\tlog line 101\n102\tlog line 102\n",
    );
    let j = env
        .run(
            "fsview-read",
            &["--json", "-o", "299", "-n", "5", "app.log"],
        )
        .json();
    assert_eq!(j[0]["kind"], "range");
    assert_eq!(j[0]["offset"], 299);
    assert_eq!(j[0]["lines"], 2);
    assert_eq!(j[0]["content"], "299\tlog line 299\n300\tlog line 300\n");
}

#[test]
fn over_the_cap_shows_the_start_with_a_notice() {
    let env = Env::new();
    env.write("big.txt", "aaaa\nbbbb\ncccc\n");
    env.run("fsview-read", &["--cap", "12", "big.txt"])
        .expect(0, "1\taaaa\n2\tbbbb\n")
        .stderr_is("fsview-read: big.txt: showing lines 1-2 of 3: the file is over the cap of 12 bytes; read on with --offset 3 (or raise --cap)\n");
    let j = env
        .run("fsview-read", &["--json", "--cap", "12", "big.txt"])
        .json();
    assert_eq!(j[0]["kind"], "start");
    assert_eq!(j[0]["notices"].as_array().unwrap().len(), 1);
    // The default cap is 256 KiB.
    let line = "x".repeat(99) + "\n";
    env.write("huge.txt", line.repeat(3000));
    let j = env.run("fsview-read", &["--json", "huge.txt"]).json();
    assert_eq!(j[0]["kind"], "start");
    assert_eq!(j[0]["lines"], 2621);
    assert_eq!(j[0]["total_lines"], 3000);
}

#[test]
fn empty_file_and_offset_past_the_end_have_notices() {
    let env = Env::new();
    env.write("empty", "");
    env.run("fsview-read", &["empty"])
        .expect(0, "")
        .stderr_is("fsview-read: empty: the file exists but is empty\n");
    env.write("short", "one\ntwo\n");
    env.run("fsview-read", &["--offset", "9", "short"])
        .expect(0, "")
        .stderr_is("fsview-read: short: the file exists but is shorter than the provided offset (9); the file has 2 lines\n");
    env.run("fsview-read", &["-q", "--offset", "9", "short"])
        .expect(0, "")
        .stderr_is("");
}

#[test]
fn non_utf8_is_shown_lossily_with_a_notice() {
    let env = Env::new();
    env.write("latin1.txt", b"caf\xe9\n");
    env.run("fsview-read", &["latin1.txt"])
        .expect(0, "1\tcaf\u{fffd}\n")
        .stderr_is("fsview-read: latin1.txt: not valid UTF-8: invalid bytes are shown as U+FFFD\n");
}

#[test]
fn refuses_what_is_not_a_text_file_without_hanging() {
    let env = Env::new();
    env.write("bin", b"\x7fELF\0\0\x01");
    std::fs::create_dir(env.path("dir")).unwrap();
    let fifo = env.path("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let r = env.run(
        "fsview-read",
        &["bin", "dir", "fifo", "/dev/null", "missing"],
    );
    r.expect(2, "").stderr_is(
        "fsview-read: bin looks binary (a NUL byte in its first 8 KiB); fsview-read shows text files only\n\
         fsview-read: dir is a directory; fsview-read shows regular files only\n\
         fsview-read: fifo is a FIFO; fsview-read shows regular files only\n\
         fsview-read: /dev/null is a character device; fsview-read shows regular files only\n\
         fsview-read: missing: no such file; check the path\n",
    );
}

#[test]
fn several_paths_go_on_after_an_error_and_exit_2() {
    let env = Env::new();
    env.write("a", "A\n");
    env.write("b", "B\n");
    env.run("fsview-read", &["a", "nope", "b"])
        .expect(2, "==> a <==\n1\tA\n\n==> b <==\n1\tB\n")
        .stderr_is("fsview-read: nope: no such file; check the path\n");
    let r = env.run("fsview-read", &["--json", "a", "nope"]);
    let j = r.json();
    assert_eq!(j[1]["type"], "error");
    assert_eq!(j[1]["path"], "nope");
    assert_eq!(r.code, 2);
}

#[test]
fn requests_as_json_lines_name_the_bad_line() {
    let env = Env::new();
    env.write("a", "1\n2\n3\n");
    let input = b"{\"path\":\"a\",\"offset\":2,\"limit\":1}\nnot json\n{\"path\":\"a\"}\n";
    let r = env.run_stdin("fsview-read", &["--requests"], input);
    r.expect(2, "==> a <==\n2\t2\n\n==> a <==\n1\t1\n2\t2\n3\t3\n");
    r.stderr_is("fsview-read: stdin line 2: expected ident at line 1 column 2; each line must be an object like {\"path\":\"a.rs\",\"offset\":1,\"limit\":50}\n");
}

#[test]
fn unchanged_reread_is_flagged_and_can_be_a_stub() {
    let env = Env::new();
    env.write("a", "x\n");
    let first = env.run("fsview-read", &["--json", "a"]).json();
    assert_eq!(first[0]["unchanged"], false);
    env.run("fsview-read", &["--stub", "a"]).expect(
        0,
        "File unchanged since last read. The content from the earlier read in this conversation is still current; refer to that instead of re-reading.\n",
    );
    env.write("a", "y\n");
    env.run("fsview-read", &["--stub", "a"]).expect(0, "1\ty\n");
}

#[test]
fn written_records_a_full_view_without_printing() {
    let env = Env::new();
    env.write("a", "new\n");
    env.run("fsview-read", &["--written", "a"]).expect(0, "");
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: ok\n");
    // A formatter that rewrites it afterwards is still caught.
    env.write("a", "NEW\n");
    env.run("fsview-check-edit", &["a"]).expect(1, "a: modified (content): File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.\n");
}

#[test]
fn processed_content_is_recorded_as_processed() {
    let env = Env::new();
    env.write("CLAUDE.md", "<!-- note -->\nBe brief.\n");
    let r = env.run_stdin(
        "fsview-read",
        &["--json", "--processed", "CLAUDE.md"],
        b"Be brief.\n",
    );
    assert_eq!(r.json()[0]["kind"], "processed");
    env.run("fsview-check-edit", &["CLAUDE.md"]).expect(1, "CLAUDE.md: processed_view: File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.\n");
    // Injected text equal to the disk text is a full view.
    let r = env.run_stdin(
        "fsview-read",
        &["--json", "--processed", "CLAUDE.md"],
        b"<!-- note -->\nBe brief.\n",
    );
    assert_eq!(r.json()[0]["kind"], "full");
}

#[test]
fn closed_pipe_exits_quietly() {
    let env = Env::new();
    let body: String = (1..=200_000).map(|i| format!("line {i}\n")).collect();
    env.write("big", body);
    let r = env.sh("fsview-read --cap 10M big | head -n 1; echo \"status $?\"");
    assert_eq!(r.stdout, "1\tline 1\nstatus 0\n");
    assert_eq!(r.stderr, "");
}

/// Started with its standard descriptors closed (`>&-`, a careless
/// daemon), a tool works as usual: no file it opens takes descriptor 1 and
/// receives its output, the session file is unharmed, the exit status is
/// the verdict. (The tools skip Rust's own start-up and open /dev/null on
/// closed standard descriptors themselves, see src/start.rs; SQLite keeps
/// its files off them too.)
#[test]
fn a_tool_started_with_closed_standard_descriptors_works_as_usual() {
    let env = Env::new();
    env.write("a.txt", "one\ntwo\n");
    env.sh("fsview-read a.txt <&- >&- 2>&-; echo \"status $?\"")
        .expect(0, "status 0\n")
        .stderr_is("");
    assert_eq!(
        std::fs::read_to_string(env.path("a.txt")).unwrap(),
        "one\ntwo\n"
    );
    env.run("fsview-check-edit", &["--write", "a.txt"])
        .expect(0, "a.txt: ok\n");
    // A refusal said on a closed stderr is still the exit status.
    env.sh("fsview-check-edit b.txt >&- 2>&-; echo \"status $?\"")
        .expect(0, "status 0\n");
    env.write("c.txt", "c\n");
    env.sh("fsview-check-edit c.txt >&- 2>&-; echo \"status $?\"")
        .expect(0, "status 1\n");
}

/// A view records what was shown: output that never reached its reader is
/// no view. (Recording first used to leave a `full` view of text `head -1`
/// threw away, and `--write` was then ok.)
#[test]
fn a_closed_pipe_records_nothing() {
    let env = Env::new();
    let body: String = (1..=200_000).map(|i| format!("line {i}\n")).collect();
    env.write("big", body);
    let r = env.sh("fsview-read --cap 1G big | head -n 1");
    r.expect(0, "1\tline 1\n");
    env.run("fsview-check-edit", &["--write", "big"]).expect(
        1,
        "big: not_read: File has not been read yet. Read it first before writing to it.\n",
    );
    // The same read written out in full is recorded.
    env.sh("fsview-read --cap 1G big > /dev/null").expect(0, "");
    env.run("fsview-check-edit", &["--write", "big"])
        .expect(0, "big: ok\n");
    // Several files: the ones written out before the pipe closed are views.
    env.write("small", "s\n");
    env.run("ctx-invalidate", &["--forget"])
        .expect(0, "forgot the views of 1 file\n");
    env.sh("fsview-read small big big | head -n 3 >/dev/null")
        .expect(0, "");
    let j = env
        .run("fsview-check-edit", &["--json", "small", "big"])
        .json();
    assert_eq!(
        (j[0]["verdict"].as_str(), j[1]["verdict"].as_str()),
        (Some("ok"), Some("not_read"))
    );
}

/// An interrupt in the middle of the output leaves no view.
#[test]
fn an_interrupt_while_writing_records_nothing() {
    use std::io::Read;
    let env = Env::new();
    let body: String = (1..=200_000).map(|i| format!("line {i}\n")).collect();
    env.write("big", body);
    let mut c = env.cmd(crate::harness::bin("fsview-read"));
    c.args(["--cap", "1G", "big"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    // A test run started in the background (`cmd &` in a script) has
    // SIGINT ignored, and a child inherits that: give it the default, as a
    // terminal's foreground job has.
    use std::os::unix::process::CommandExt;
    // SAFETY: signal(2) only, between fork and exec.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = c.spawn().unwrap();
    // One byte read: it is writing, and blocks on the full pipe.
    let mut first = [0u8; 1];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert_eq!(&first, b"1");
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT));
    env.run("fsview-check-edit", &["big"]).expect(
        1,
        "big: not_read: File has not been read yet. Read it first before writing to it.\n",
    );
}

#[test]
fn non_utf8_paths_are_exact_in_json_and_escaped_in_text() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let name = std::ffi::OsStr::from_bytes(b"n\xffl\nx");
    std::fs::write(env.work.join(name), "z\n").unwrap();
    let mut c = env.cmd(crate::harness::bin("fsview-read"));
    c.arg("--json").arg(name).arg("missing\nfile");
    let r = crate::harness::output(c, None);
    let j = r.json();
    assert_eq!(j[0]["path"], "n\u{fffd}l\nx");
    assert_eq!(j[0]["path_bytes"], "bv9sCng=");
    assert_eq!(
        r.stderr,
        "fsview-read: missing\\nfile: no such file; check the path\n"
    );
}

#[test]
fn range_over_the_cap_says_where_to_read_on() {
    let env = Env::new();
    env.write("r", "aaaa\nbbbb\ncccc\ndddd\n");
    env.run("fsview-read", &["--cap", "10", "-o", "2", "-n", "3", "r"])
        .expect(0, "2\tbbbb\n3\tcccc\n")
        .stderr_is("fsview-read: r: showing lines 2-3 of 4: the range is over the cap of 10 bytes; read on with --offset 4 (or raise --cap)\n");
}

// The agent's write is recorded against the text it wrote: a formatter
// that ran before the record is still caught, with its diff.
#[test]
fn written_with_content_holds_the_file_to_the_text_written() {
    let env = Env::new();
    env.write("a.rs", "fn main() {}\n");
    env.run_stdin(
        "fsview-read",
        &["--written", "--content", "-", "a.rs"],
        b"fn main() {}\n",
    )
    .expect(0, "")
    .stderr_is("");
    env.run("fsview-check-edit", &["--write", "a.rs"])
        .expect(0, "a.rs: ok\n");
    // The agent wrote two lines; a formatter joined them before the record.
    env.write("b.rs", "fn main() { x(); }\n");
    let agent = "fn main() {\n    x();\n}\n";
    let r = env.run_stdin(
        "fsview-read",
        &["--json", "--written", "--content", "-", "b.rs"],
        agent.as_bytes(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()[0]["rewritten"], true);
    assert_eq!(
        r.stderr,
        "fsview-read: b.rs: the file no longer holds what was written (rewritten since?); recorded what was written, so the next check reports the change\n"
    );
    env.run("fsview-check-edit", &["b.rs"]).expect(
        1,
        "b.rs: modified (content): File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.\n",
    );
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "b.rs: modified (content)\n--- b.rs (as viewed)\n+++ b.rs (now)\n@@ -1,3 +1 @@\n-fn main() {\n-    x();\n-}\n+fn main() { x(); }\n",
    );
    // --content names the text of one file.
    env.run("fsview-read", &["--written", "--content", "-", "a.rs", "b.rs"])
        .expect(2, "")
        .stderr_is("fsview-read: --content is the text written to one file: give exactly one PATH with --written --content\n");
}

// An empty file is all shown by any read of it, from whatever line; a
// file with lines, read from past its end, showed nothing: no view.
#[test]
fn any_read_of_an_empty_file_is_full_and_one_past_the_end_is_none() {
    let env = Env::new();
    env.write("e.txt", "");
    env.write("p.txt", "keep 1\nkeep 2\n");
    let r = env.run("fsview-read", &["-o", "2", "e.txt"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "", "fsview-read: e.txt: the file exists but is empty\n")
    );
    let r = env.run("fsview-read", &["-o", "5", "p.txt"]);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "", "fsview-read: p.txt: the file exists but is shorter than the provided offset (5); the file has 2 lines\n")
    );
    env.run("fsview-check-edit", &["--write", "e.txt", "p.txt"]).expect(
        1,
        "e.txt: ok\np.txt: not_read: File has not been read yet. Read it first before writing to it.\n",
    );
}
