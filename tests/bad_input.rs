//! Bad input: each gets one clear line on stderr, exit 2, and loses
//! nothing.

use crate::harness::{bin, output, Env};

// An explicit session path (--session, FSVIEW_SESSION) needs an existing
// directory: a typo is one error line, never a new directory tree holding an
// empty session. Only the default location is created.
#[test]
fn an_explicit_session_path_needs_an_existing_directory() {
    let env = Env::new();
    env.write("a", "a\n");
    let missing = env.root().join("no/such/dir/s.db");
    env.run("fsview-read", &["--session", missing.to_str().unwrap(), "a"])
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-read: cannot create the session file {}: directory {} does not exist; create it first, or fix --session\n",
            missing.display(),
            env.root().join("no/such/dir").display()
        ));
    let mut c = env.cmd(bin("ctx-build"));
    c.env("FSVIEW_SESSION", &missing);
    output(c, None).expect(2, "").stderr_is(&format!(
        "ctx-build: cannot create the session file {}: directory {} does not exist; create it first, or fix FSVIEW_SESSION\n",
        missing.display(),
        env.root().join("no/such/dir").display()
    ));
    assert!(!env.root().join("no").exists());
    // A file where a directory should be.
    let blocker = env.root().join("blocker");
    std::fs::write(&blocker, "not a directory").unwrap();
    let s = blocker.join("sub/s.db");
    env.run("fsview-read", &["--session", s.to_str().unwrap(), "a"])
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-read: cannot create the session file {}: {} is not a directory; fix --session\n",
            s.display(),
            blocker.display()
        ));
    assert_eq!(std::fs::read(&blocker).unwrap(), b"not a directory");
}

// The default location is created, parents and all; when it cannot be
// (root can write anywhere, so a file standing where the directory should
// be stands in for an unwritable one), one line says so.
#[test]
fn the_default_session_directory_is_created_or_reported() {
    let env = Env::new();
    env.write("a", "a\n");
    let state = env.root().join("state");
    let mut c = env.cmd(bin("fsview-read"));
    c.env_remove("FSVIEW_SESSION")
        .env("XDG_STATE_HOME", &state)
        .env("GIT_CEILING_DIRECTORIES", env.root())
        .arg("a");
    output(c, None).expect(0, "1\ta\n");
    assert!(state.join("fsview/session.db").is_file());
    let blocker = env.root().join("blocker");
    std::fs::write(&blocker, "not a directory").unwrap();
    let mut c = env.cmd(bin("fsview-read"));
    c.env_remove("FSVIEW_SESSION")
        .env("XDG_STATE_HOME", &blocker)
        .env("GIT_CEILING_DIRECTORIES", env.root())
        .arg("a");
    output(c, None).expect(2, "").stderr_is(&format!(
        "fsview-read: cannot create the session directory {}: not a directory; check the path and try again\n",
        blocker.join("fsview").display()
    ));
    assert_eq!(std::fs::read(&blocker).unwrap(), b"not a directory");
}

// `FSVIEW_SESSION=` (set, empty) names the variable, not a --session flag
// the user never typed.
#[test]
fn an_empty_fsview_session_names_the_variable() {
    let env = Env::new();
    env.write("a", "a\n");
    for tool in [
        "fsview-read",
        "fsview-check-edit",
        "ctx-build",
        "ctx-invalidate",
    ] {
        let mut c = env.cmd(bin(tool));
        c.env("FSVIEW_SESSION", "");
        if tool != "ctx-build" && tool != "ctx-invalidate" {
            c.arg("a");
        }
        output(c, None).expect(2, "").stderr_is(&format!(
            "{tool}: FSVIEW_SESSION is set but empty; give it a value, as for --session FILE, or unset it\n"
        ));
    }
    let mut c = env.cmd(bin("fsview-session"));
    c.env("FSVIEW_SESSION", "").arg("list");
    output(c, None).expect(2, "").stderr_is(
        "fsview-session: FSVIEW_SESSION is set but empty; give it a value, as for --session FILE, or unset it\n",
    );
    env.run("fsview-read", &["--session=", "a"])
        .expect(2, "")
        .stderr_is("fsview-read: --session needs a value (FILE)\n");
}

#[test]
fn a_ten_megabyte_line_is_cut_at_the_cap() {
    let env = Env::new();
    let mut body = "z".repeat(10 * 1024 * 1024);
    body.push('\n');
    env.write("long", &body);
    let r = env.run("fsview-read", &["--json", "long"]);
    assert_eq!(r.code, 0);
    let j = r.json();
    assert_eq!(j[0]["kind"], "start");
    assert_eq!(
        j[0]["content"].as_str().unwrap().len(),
        "1\t".len() + 256 * 1024 + 1
    );
    assert_eq!(
        j[0]["notices"][0],
        "line 1 is longer than the cap of 262144 bytes and was cut; raise --cap to see all of it"
    );
}

#[test]
fn devices_stdin_and_sockets_are_refused_without_hanging() {
    let env = Env::new();
    let sock = env.path("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let mut c = env.cmd(bin("fsview-read"));
    c.args(["/dev/zero", "/dev/stdin", "sock"]);
    let r = output(c, Some(b""));
    r.expect(2, "").stderr_is(
        "fsview-read: /dev/zero is a character device; fsview-read shows regular files only\n\
         fsview-read: /dev/stdin is a FIFO; fsview-read shows regular files only\n\
         fsview-read: sock is a socket; fsview-read shows regular files only\n",
    );
    env.run("fsview-check-edit", &["/dev/zero"])
        .expect(2, "")
        .stderr_is("fsview-check-edit: /dev/zero is a character device; fsview-check-edit gates regular files only\n");
}

#[test]
fn malformed_check_requests_name_the_line_and_do_the_rest() {
    let env = Env::new();
    env.write("a", "a\n");
    env.run("fsview-read", &["-q", "a"]);
    let r = env.run_stdin(
        "fsview-check-edit",
        &["--requests"],
        b"{\"path\":\"a\"}\n{\"pth\":\"a\"}\n{\"path\":\"a\",\"write\":true}\n",
    );
    r.expect(2, "a: ok\na: ok\n");
    r.stderr_is("fsview-check-edit: stdin line 2: unknown field `pth`, expected `path` or `write` at line 1 column 6; each line must be an object like {\"path\":\"a.rs\",\"write\":false}\n");
}

// A full disk in the middle of recording: the file size limit stands in for
// it (SIGXFSZ is ignored, so the write fails with EFBIG as on a full disk).
#[test]
fn file_size_limit_while_recording_loses_nothing() {
    let env = Env::new();
    env.write("small", "s\n");
    env.run("fsview-read", &["-q", "small"]).expect(0, "1\ts\n");
    let before = std::fs::read(&env.session).unwrap();
    let big: String = (0..20_000)
        .map(|i| format!("line {i:06} of a file too big to record\n"))
        .collect();
    env.write("big", &big);
    let r = env.sh(&format!(
        "ulimit -f 200; {} -q --cap 2M big >/dev/null",
        bin("fsview-read").display()
    ));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.starts_with("fsview-read: "), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    // What was there is still there and still works.
    env.run("fsview-check-edit", &["small", "big"]).expect(1, "small: ok\nbig: not_read: File has not been read yet. Read it first before writing to it.\n");
    assert!(std::fs::read(&env.session).unwrap().len() >= before.len() / 2);
}

// A real full disk and a real read-only filesystem: a 256 KiB tmpfs in a
// private mount namespace (`unshare -m`, as root).
#[test]
fn full_disk_then_read_only_filesystem() {
    let env = Env::new();
    let m = env.root().join("m");
    std::fs::create_dir(&m).unwrap();
    env.write("a.txt", "hello\n");
    let big: String = (1..=40_000).map(|i| format!("{i}\n")).collect();
    env.write("big.txt", big);
    let s = m.join("s.db");
    let script = format!(
        r#"mount -t tmpfs -o size=256k tmpfs "{m}"
        export FSVIEW_SESSION="{s}"
        fsview-read -q a.txt; echo "rc=$?"
        fsview-read -q --cap 1M big.txt > /dev/null; echo "full rc=$?"
        fsview-check-edit a.txt big.txt; echo "rc=$?"
        mount -o remount,ro "{m}"
        fsview-read -q a.txt > /dev/null; echo "read-only rc=$?"
        fsview-check-edit a.txt; echo "rc=$?""#,
        m = m.display(),
        s = s.display()
    );
    let mut c = env.cmd("unshare");
    c.args(["-m", "--propagation", "private", "bash", "-c", &script]);
    let r = output(c, None);
    r.expect(
        0,
        "1\thello\nrc=0\nfull rc=2\na.txt: ok\nbig.txt: not_read: File has not been read yet. Read it first before writing to it.\nrc=1\nread-only rc=2\na.txt: ok\nrc=0\n",
    );
    r.stderr_is(&format!(
        "fsview-read: the disk holding session file {s} is full; nothing was recorded; free some space and retry\n\
         fsview-read: session file {s} is read-only; make it (and its directory) writable or pass another --session\n",
        s = s.display()
    ));
}

// Views in a file someone else owns could be forged by them: refused.
#[test]
fn session_file_owned_by_another_user_is_refused() {
    let env = Env::new();
    env.write("a", "a\n");
    env.run("fsview-read", &["-q", "a"]).expect(0, "1\ta\n");
    std::os::unix::fs::chown(&env.session, Some(54321), None).unwrap();
    let before = std::fs::read(&env.session).unwrap();
    env.run("fsview-check-edit", &["a"]).expect(2, "").stderr_is(&format!(
        "fsview-check-edit: session file {} belongs to another user (uid 54321); fsview only uses its own session files; pass another --session\n",
        env.session.display()
    ));
    assert_eq!(std::fs::read(&env.session).unwrap(), before);
}

// A stdout that cannot be written (a full disk) stops the run with one
// line, whichever tool, and a read whose output was lost records nothing.
#[test]
fn a_full_stdout_is_one_line_and_records_nothing() {
    let env = Env::new();
    env.write("a.txt", "1\n2\n");
    for (tool, args) in [
        ("fsview-read", "a.txt"),
        ("fsview-read", "--json a.txt"),
        ("fsview-read", "a.txt a.txt"),
        ("fsview-check-edit", "a.txt"),
    ] {
        let r = env.sh(&format!("{tool} {args} > /dev/full"));
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (
                2,
                format!("{tool}: cannot write to standard output: no space left on device\n")
                    .as_str()
            ),
            "{tool} {args}"
        );
    }
    env.run("fsview-check-edit", &["a.txt"]).expect(
        1,
        "a.txt: not_read: File has not been read yet. Read it first before writing to it.\n",
    );
}
