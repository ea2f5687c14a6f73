//! Bad input: each gets one clear line on stderr, exit 2, and loses
//! nothing.

use crate::harness::{bin, output, Env};

// A session path whose directory cannot be made (root can write anywhere,
// so a file standing where the directory should be stands in for an
// unwritable one).
#[test]
fn session_directory_that_cannot_be_created() {
    let env = Env::new();
    env.write("a", "a\n");
    let blocker = env.root().join("blocker");
    std::fs::write(&blocker, "not a directory").unwrap();
    let s = blocker.join("sub/s.db");
    env.run("fsview-read", &["--session", s.to_str().unwrap(), "a"])
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-read: cannot create the session directory {}: not a directory; check the path and try again\n",
            blocker.join("sub").display()
        ));
    assert_eq!(std::fs::read(&blocker).unwrap(), b"not a directory");
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
