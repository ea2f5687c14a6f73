//! No missed change, no false alarm: the racy and renamed ways a file can
//! change behind the agent, and the names under which it is the same file.

use std::os::unix::fs::MetadataExt;

use serde_json::{json, Value};

use crate::harness::{mtime, set_mtime, Env};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

fn modified(path: &str, change: &str) -> String {
    format!("{path}: modified ({change}): {MODIFIED}\n")
}

/// The session's one record, of file `a`, holds its identity now: a hard
/// link made to it is the same file to the gate.
fn adopted(env: &Env) {
    let stored = rusqlite::Connection::open(&env.session)
        .unwrap()
        .query_row("SELECT ino FROM files", [], |r| r.get::<_, i64>(0))
        .unwrap() as u64;
    assert_eq!(stored, std::fs::metadata(env.path("a")).unwrap().ino());
    std::fs::hard_link(env.path("a"), env.path("hard")).unwrap();
    env.run("fsview-check-edit", &["--write", "hard"])
        .expect(0, "hard: ok\n");
}

fn read_ok(env: &Env, path: &str) {
    let r = env.run("fsview-read", &["-q", path]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

// Racy git: a same-size rewrite within the same second (the same timestamp
// tick) leaves size and mtime alone; the hash must catch it.
#[test]
fn same_size_rewrite_in_the_same_second_racy_git() {
    let env = Env::new();
    let p = env.write("a", "aaaa\n");
    read_ok(&env, "a");
    let (s, ns) = mtime(&p);
    env.write("a", "bbbb\n");
    set_mtime(&p, s, ns);
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "content"));
}

// mtime going backwards: `touch -d` to the old time after a change. The
// ctime moved, so the stat differs and the hash decides.
#[test]
fn touch_d_back_in_time_after_a_change() {
    let env = Env::new();
    let p = env.write("a", "one\n");
    set_mtime(&p, 1_600_000_000, 0);
    read_ok(&env, "a");
    env.write("a", "two\n");
    env.sh("touch -d @1600000000 a").expect(0, "");
    assert_eq!(mtime(&p), (1_600_000_000, 0));
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "content"));
}

// mtime going backwards: `cp -p` of an older copy over the file.
#[test]
fn cp_p_of_an_older_copy() {
    let env = Env::new();
    let old = env.write("old", "old text\n");
    set_mtime(&old, 1_500_000_000, 0);
    env.write("a", "new text\n");
    read_ok(&env, "a");
    env.sh("cp -p old a").expect(0, "");
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "content"));
}

// The content decides (issue 9): editors save by writing a new file and
// renaming it over the old one. The same bytes under the new file object
// are fresh, and its identity is adopted: a hard link made to the new file
// afterwards is the same file to the gate.
#[test]
fn rename_save_with_the_same_bytes_is_fresh_and_adopts_the_new_file() {
    let env = Env::new();
    env.write("a", "text\n");
    read_ok(&env, "a");
    env.write("a.tmp", "text\n");
    env.sh("mv a.tmp a").expect(0, "");
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: ok\n");
    adopted(&env);
    env.run("fsview-check-edit", &["--changed"]).expect(0, "");
    // Other bytes saved the same way: another file object with other bytes.
    env.write("a.tmp", "other\n");
    env.sh("mv a.tmp a").expect(0, "");
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "replaced"));
}

// The same through a read: a file saved by rename with the same bytes and
// read again is recorded under its new identity (only a record whose
// identity changed has it written), so a hard link to it is that file.
#[test]
fn a_reread_after_a_rename_save_adopts_the_new_file() {
    let env = Env::new();
    env.write("a", "text\n");
    read_ok(&env, "a");
    read_ok(&env, "a");
    env.write("a.tmp", "text\n");
    env.sh("mv a.tmp a").expect(0, "");
    read_ok(&env, "a");
    adopted(&env);
}

// The content decides: `git stash && git stash pop` writes the file again
// with the bytes it had; the agent's view of them is still true.
#[test]
fn git_stash_and_pop_is_fresh() {
    let env = Env::new();
    let git = "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main";
    env.write("a.rs", "fn a() {}\n");
    env.sh(&format!(
        "{git} init -q && {git} add a.rs && {git} commit -q -m one"
    ))
    .expect(0, "");
    env.write("a.rs", "fn a() { work(); }\n");
    read_ok(&env, "a.rs");
    env.sh(&format!("{git} stash -q && {git} stash pop -q"))
        .expect(0, "");
    assert_eq!(
        std::fs::read_to_string(env.path("a.rs")).unwrap(),
        "fn a() { work(); }\n"
    );
    env.run("fsview-check-edit", &["--write", "a.rs"])
        .expect(0, "a.rs: ok\n");
    // git writes a file anew: stashed away, the other bytes stand there
    // under another file object.
    env.sh(&format!("{git} stash -q")).expect(0, "");
    env.run("fsview-check-edit", &["a.rs"])
        .expect(1, &modified("a.rs", "replaced"));
}

#[test]
fn deleted_and_replaced_by_a_directory() {
    let env = Env::new();
    env.write("a", "text\n");
    env.write("b", "text\n");
    read_ok(&env, "a");
    read_ok(&env, "b");
    std::fs::remove_file(env.path("a")).unwrap();
    env.run("fsview-check-edit", &["a"]).expect(
        1,
        "a: modified (deleted): File has been deleted since read: there is nothing to edit. Write the whole file to create it again, or leave it deleted.\n",
    );
    // Written whole, it is created again: nothing there held anyone's text.
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: new_file\n");
    std::fs::remove_file(env.path("b")).unwrap();
    std::fs::create_dir(env.path("b")).unwrap();
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "a: modified (deleted): deleted\nb: modified (type): now a directory\n",
    );
}

#[test]
fn touch_and_chmod_alone_stay_fresh() {
    let env = Env::new();
    let p = env.write("a", "text\n");
    read_ok(&env, "a");
    env.sh("touch a").expect(0, "");
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: ok\n");
    env.sh("chmod 600 a").expect(0, "");
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: ok\n");
    set_mtime(&p, 1_000_000_000, 0);
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: ok\n");
    env.run("fsview-check-edit", &["--changed"]).expect(0, "");
}

#[test]
fn one_file_under_many_names() {
    let env = Env::new();
    env.write("dir/a", "text\n");
    read_ok(&env, "dir/a");
    std::os::unix::fs::symlink(env.path("dir/a"), env.path("link")).unwrap();
    std::fs::hard_link(env.path("dir/a"), env.path("hard")).unwrap();
    let abs = env.path("dir/a");
    let abs = abs.to_str().unwrap();
    env.run(
        "fsview-check-edit",
        &["--write", "./dir/a", "dir/../dir/a", abs, "link", "hard"],
    )
    .expect(
        0,
        &format!("./dir/a: ok\ndir/../dir/a: ok\n{abs}: ok\nlink: ok\nhard: ok\n"),
    );
    // Written through the hard link: caught under every name.
    env.write("hard", "changed\n");
    env.run("fsview-check-edit", &["dir/a", "link"]).expect(
        1,
        &format!(
            "{}{}",
            modified("dir/a", "content"),
            modified("link", "content")
        ),
    );
}

#[test]
fn a_different_file_swapped_in_is_not_the_viewed_one() {
    let env = Env::new();
    env.write("a", "A\n");
    env.write("b", "B\n");
    read_ok(&env, "a");
    env.sh("mv b a").expect(0, "");
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "replaced"));
    // A symlink now stands at the path.
    env.write("c", "C\n");
    read_ok(&env, "c");
    std::fs::remove_file(env.path("c")).unwrap();
    std::os::unix::fs::symlink(env.path("a"), env.path("c")).unwrap();
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "a: modified (replaced)\n--- a (as viewed)\n+++ a (now)\n@@ -1 +1 @@\n-A\n+B\nc: modified (type): now a symbolic link\n",
    );
}

// A range read of a file over 32 MiB is fingerprinted by its stat alone
// (hashing the whole file would cost more than the range): fresh while the
// stat is unchanged, and any stat change counts as a change, even a touch.
#[test]
fn huge_file_range_read_fails_closed_on_any_stat_change() {
    let env = Env::new();
    let line = "y".repeat(99) + "\n";
    env.write("huge.log", line.repeat(340_000));
    // Let mtime and ctime age past the racy window (ctime cannot be set).
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let r = env.run(
        "fsview-read",
        &["--json", "-o", "200000", "-n", "2", "huge.log"],
    );
    let j = r.json();
    assert_eq!(j[0]["kind"], "range");
    assert_eq!(j[0]["sha256"], serde_json::Value::Null);
    assert_eq!(j[0]["total_lines"], serde_json::Value::Null);
    env.run("fsview-check-edit", &["huge.log"])
        .expect(0, "huge.log: ok\n");
    env.sh("touch huge.log").expect(0, "");
    env.run("fsview-check-edit", &["huge.log"])
        .expect(1, &modified("huge.log", "content"));
    // Issue 13: a huge file written a moment ago (its stat racy) is not
    // hashed whole either: a hash would be stale by the next check if it is
    // being written, and would cost the whole file on every read. Such a
    // view can never be proved fresh: modified until read again.
    env.write("huge2.log", line.repeat(340_000));
    let j = env
        .run(
            "fsview-read",
            &["--json", "-o", "5", "-n", "1", "huge2.log"],
        )
        .json();
    assert_eq!(
        (&j[0]["kind"], &j[0]["sha256"], &j[0]["total_lines"]),
        (&json!("range"), &Value::Null, &Value::Null)
    );
    env.run("fsview-check-edit", &["huge2.log"])
        .expect(1, &modified("huge2.log", "content"));
    std::thread::sleep(std::time::Duration::from_millis(2100));
    env.run("fsview-check-edit", &["huge2.log"])
        .expect(1, &modified("huge2.log", "content"));
    // Read again once it has settled: its stat can vouch for it now.
    env.run("fsview-read", &["-q", "-o", "5", "-n", "1", "huge2.log"]);
    env.run("fsview-check-edit", &["huge2.log"])
        .expect(0, "huge2.log: ok\n");
}

// Issue 13: a 33 MB log a server appends to every 50 ms. A range read
// deep inside it shows exactly the lines asked for, reads only up to them
// (no hash, no line count: it never went on to the end), and its view is
// never taken as fresh while the file moves, nor after it stopped, until
// it is read again.
#[test]
fn a_huge_file_being_appended_to_costs_its_range_and_fails_closed() {
    let env = Env::new();
    let line = "z".repeat(99) + "\n";
    env.write("server.log", line.repeat(340_000));
    let mut server = env
        .cmd("bash")
        .args([
            "-c",
            "while :; do echo appended >> server.log; sleep 0.05; done",
        ])
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    for _ in 0..3 {
        let j = env
            .run(
                "fsview-read",
                &["--json", "-o", "300000", "-n", "2", "server.log"],
            )
            .json();
        assert_eq!(
            (
                &j[0]["kind"],
                &j[0]["sha256"],
                &j[0]["total_lines"],
                &j[0]["content"]
            ),
            (
                &json!("range"),
                &Value::Null,
                &Value::Null,
                &json!(format!("300000\t{0}300001\t{0}", line))
            )
        );
        env.run("fsview-check-edit", &["server.log"])
            .expect(1, &modified("server.log", "content"));
    }
    server.kill().unwrap();
    server.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2100));
    env.run("fsview-check-edit", &["server.log"])
        .expect(1, &modified("server.log", "content"));
    env.run(
        "fsview-read",
        &["-q", "-o", "300000", "-n", "2", "server.log"],
    );
    env.run("fsview-check-edit", &["server.log"])
        .expect(0, "server.log: ok\n");
}
