//! fsview-check-edit: every verdict, its message and its exit code.

use crate::harness::Env;

const DELETED: &str = "File has been deleted since read: there is nothing to edit. Write the whole file to create it again, or leave it deleted.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

#[test]
fn ok_after_a_full_read() {
    let env = Env::new();
    env.write("src/main.rs", "fn main() {}\n");
    env.run("fsview-read", &["src/main.rs"])
        .expect(0, "1\tfn main() {}\n");
    env.run("fsview-check-edit", &["src/main.rs"])
        .expect(0, "src/main.rs: ok\n");
    env.run("fsview-check-edit", &["--write", "src/main.rs"])
        .expect(0, "src/main.rs: ok\n");
}

#[test]
fn not_read_and_new_file() {
    let env = Env::new();
    env.write("a.rs", "x\n");
    env.run("fsview-check-edit", &["a.rs"])
        .expect(1, &format!("a.rs: not_read: {NOT_READ}\n"));
    env.run("fsview-check-edit", &["brand-new.rs"])
        .expect(0, "brand-new.rs: new_file\n");
    env.run("fsview-check-edit", &["--write", "sub/dir/new.rs"])
        .expect(0, "sub/dir/new.rs: new_file\n");
    // No session file at all is the same as an empty session, and creates none.
    assert!(!env.session.exists());
}

#[test]
fn modified_after_an_append() {
    let env = Env::new();
    env.write("src/main.rs", "fn main() {}\n");
    env.run("fsview-read", &["src/main.rs"]);
    env.sh("printf '// x\\n' >> src/main.rs").expect(0, "");
    env.run("fsview-check-edit", &["src/main.rs"])
        .expect(1, &format!("src/main.rs: modified (content): {MODIFIED}\n"));
    let j = env
        .run("fsview-check-edit", &["--json", "src/main.rs"])
        .json();
    assert_eq!(j[0]["verdict"], "modified");
    assert_eq!(j[0]["change"], "content");
    assert_eq!(j[0]["allowed"], false);
    assert_eq!(j[0]["message"], MODIFIED);
}

#[test]
fn start_only_for_a_whole_file_write_after_a_range() {
    let env = Env::new();
    let body: String = (1..=300).map(|i| format!("{i}\n")).collect();
    env.write("app.log", body);
    env.run(
        "fsview-read",
        &["--offset", "100", "--limit", "50", "app.log"],
    );
    env.run("fsview-check-edit", &["app.log"])
        .expect(0, "app.log: ok\n");
    env.run("fsview-check-edit", &["--write", "app.log"]).expect(
        1,
        "app.log: start_only: File has only been read in part (lines 100-149 of 300). Read the whole file before writing all of it.\n",
    );
    env.run("fsview-read", &["--cap", "100", "app.log"]);
    env.run("fsview-check-edit", &["--write", "app.log"]).expect(
        1,
        "app.log: start_only: File has only been read in part (lines 1-36 of 300). Read the whole file before writing all of it.\n",
    );
    env.run("fsview-read", &["app.log"]);
    env.run("fsview-check-edit", &["--write", "app.log"])
        .expect(0, "app.log: ok\n");
}

// Read in parts, as a capped read says to ("read on with --offset"): once
// the parts held show every line of the file as it is, each exactly, the
// whole of it was seen. A gap, or a line a cap cut, is not all of it.
#[test]
fn parts_read_that_show_every_line_count_as_the_whole_file() {
    let env = Env::new();
    let lines: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    env.write("n.txt", &lines);
    let read = |args: &[&str]| assert_eq!(env.run("fsview-read", args).code, 0);
    read(&["-q", "--cap", "2K", "n.txt"]);
    env.run("fsview-check-edit", &["--write", "n.txt"]).expect(
        1,
        "n.txt: start_only: File has only been read in part (lines 1-539 of 1000). Read the whole file before writing all of it.\n",
    );
    read(&["-q", "--offset", "541", "n.txt"]);
    env.run("fsview-check-edit", &["--write", "n.txt"]).expect(
        1,
        "n.txt: start_only: File has only been read in part (lines 541-1000 of 1000). Read the whole file before writing all of it.\n",
    );
    read(&["-q", "--offset", "530", "--limit", "20", "n.txt"]);
    env.run("fsview-check-edit", &["--write", "n.txt"])
        .expect(0, "n.txt: ok\n");
    // Line 1 is longer than the cap: its read showed only its start.
    env.write("long.txt", format!("{}\n2\n3\n", "x".repeat(5000)));
    read(&["-q", "--cap", "2K", "long.txt"]);
    read(&["-q", "--offset", "2", "long.txt"]);
    env.run("fsview-check-edit", &["--write", "long.txt"]).expect(
        1,
        "long.txt: start_only: File has only been read in part (lines 2-3 of 3). Read the whole file before writing all of it.\n",
    );
}

// Only reads count as parts: an edit's range runs from its first change
// to its last, which it did not all show (a replace-all of lines 2 and
// 99 showed those, not 9 to 92). And parts that held the whole file go on
// holding it after an edit, as a full read does.
#[test]
fn an_edits_range_is_no_part_and_parts_hold_past_an_edit() {
    let env = Env::new();
    let mut text = String::from("start\nTODO one\n");
    for i in 3..=98 {
        text.push_str(&format!("secret line {i}\n"));
    }
    text.push_str("TODO two\nend\n");
    env.write("f", &text);
    let ok = |args: &[&str]| assert_eq!(env.run(args[0], &args[1..]).code, 0, "{args:?}");
    ok(&["fsview-read", "-q", "-o", "1", "-n", "5", "f"]);
    ok(&[
        "fsview-edit",
        "-q",
        "--all",
        "f",
        "--old",
        "TODO",
        "--new",
        "DONE",
    ]);
    ok(&["fsview-read", "-q", "-o", "1", "-n", "1", "f"]);
    ok(&["fsview-read", "-q", "-o", "100", "-n", "1", "f"]);
    env.run("fsview-check-edit", &["--write", "f"]).expect(
        1,
        "f: start_only: File has only been read in part (line 100 of 100). Read the whole file before writing all of it.\n",
    );
    env.write("g", (1..=10).map(|i| format!("{i}\n")).collect::<String>());
    ok(&["fsview-read", "-q", "-o", "1", "-n", "5", "g"]);
    ok(&["fsview-read", "-q", "-o", "6", "-n", "5", "g"]);
    ok(&["fsview-edit", "-q", "g", "--old", "3\n", "--new", "three\n"]);
    env.run("fsview-check-edit", &["--write", "g"])
        .expect(0, "g: ok\n");
}

#[test]
fn processed_view_only() {
    let env = Env::new();
    env.write("CLAUDE.md", "---\npaths: src\n---\nRule.\n");
    env.run_stdin("fsview-read", &["--processed", "CLAUDE.md"], b"Rule.\n")
        .expect(0, "");
    env.run("fsview-check-edit", &["CLAUDE.md"]).expect(1, "CLAUDE.md: processed_view: File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.\n");
    env.run("fsview-read", &["CLAUDE.md"]);
    env.run("fsview-check-edit", &["CLAUDE.md"])
        .expect(0, "CLAUDE.md: ok\n");
}

#[test]
fn exit_1_when_any_path_is_denied_and_2_on_error() {
    let env = Env::new();
    env.write("a", "a\n");
    env.write("b", "b\n");
    env.run("fsview-read", &["a"]);
    env.run("fsview-check-edit", &["a", "b"])
        .expect(1, &format!("a: ok\nb: not_read: {NOT_READ}\n"));
    std::fs::create_dir(env.path("d")).unwrap();
    env.run("fsview-check-edit", &["a", "d"])
        .expect(2, "a: ok\n")
        .stderr_is(
            "fsview-check-edit: d is a directory; fsview-check-edit gates regular files only\n",
        );
    env.run("fsview-check-edit", &[])
        .expect(2, "")
        .stderr_is("fsview-check-edit: no file given; name one or more PATHs, or `-` to read them from stdin (see --help)\n");
}

#[test]
fn paths_from_stdin_lines_nul_and_json() {
    let env = Env::new();
    env.write("a", "a\n");
    env.write("b c", "b\n");
    env.run("fsview-read", &["a", "b c"]);
    env.run_stdin("fsview-check-edit", &["-"], b"a\nb c\nnew\n")
        .expect(0, "a: ok\nb c: ok\nnew: new_file\n");
    env.run_stdin("fsview-check-edit", &["-0", "-"], b"a\0b c\0")
        .expect(0, "a: ok\nb c: ok\n");
    env.run_stdin(
        "fsview-check-edit",
        &["--requests"],
        b"{\"path\":\"a\",\"write\":true}\n{\"path\":\"zz\"}\n",
    )
    .expect(0, "a: ok\nzz: new_file\n");
}

#[test]
fn git_diff_pipeline() {
    let env = Env::new();
    let git = |args: &str| env.sh(&format!("git -c user.name=t -c user.email=t@t {args}"));
    git("init -q .").expect(0, "");
    env.write("a.rs", "a\n");
    env.write("b.rs", "b\n");
    git("add . && git -c user.name=t -c user.email=t@t commit -qm init").expect(0, "");
    env.run("fsview-read", &["a.rs", "b.rs"]);
    env.write("b.rs", "B\n");
    env.sh("git diff --name-only -z | fsview-check-edit -0 -")
        .expect(1, &format!("b.rs: modified (content): {MODIFIED}\n"));
}

#[test]
fn changed_lists_stale_files_with_diffs() {
    let env = Env::new();
    let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    env.write("a.txt", &body);
    env.write("gone.txt", "bye\n");
    env.write("same.txt", "same\n");
    env.run("fsview-read", &["a.txt", "gone.txt", "same.txt"]);
    env.run("fsview-check-edit", &["--changed"]).expect(0, "");
    env.write("a.txt", body.replace("line 15\n", "line fifteen\n"));
    std::fs::remove_file(env.path("gone.txt")).unwrap();
    let expected = "\
a.txt: modified (content)
--- a.txt (as viewed)
+++ a.txt (now)
@@ -7,17 +7,17 @@
 line 7
 line 8
 line 9
 line 10
 line 11
 line 12
 line 13
 line 14
-line 15
+line fifteen
 line 16
 line 17
 line 18
 line 19
 line 20
 line 21
 line 22
 line 23
gone.txt: modified (deleted): deleted
";
    env.run("fsview-check-edit", &["--changed"])
        .expect(1, expected);
    let r = env.run(
        "fsview-check-edit",
        &["--changed", "--diff-lines", "5", "--json"],
    );
    let j = r.json();
    assert_eq!(j.len(), 2);
    assert_eq!(j[0]["path"], "a.txt");
    assert_eq!(j[0]["change"], "content");
    assert_eq!(j[0]["truncated"], 16);
    assert_eq!(
        j[0]["diff"],
        "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -7,17 +7,17 @@\n line 7\n line 8\n[16 lines truncated]\n"
    );
    assert_eq!(j[1]["change"], "deleted");
    assert_eq!(j[1]["diff"], serde_json::Value::Null);
    // A re-read makes it fresh again.
    env.run("fsview-read", &["-q", "a.txt"]);
    env.run("fsview-check-edit", &["--changed"])
        .expect(1, "gone.txt: modified (deleted): deleted\n");
}

#[test]
fn changed_diff_of_a_range_compares_the_same_lines() {
    let env = Env::new();
    let body: String = (1..=100).map(|i| format!("{i}\n")).collect();
    env.write("r.txt", &body);
    env.run("fsview-read", &["-o", "50", "-n", "2", "r.txt"]);
    env.write("r.txt", body.replace("50\n", "fifty\n"));
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "r.txt: modified (content)\n--- r.txt (as viewed, lines 50-51)\n+++ r.txt (now)\n@@ -50,2 +50,2 @@\n-50\n+fifty\n 51\n",
    );
}

// The lines viewed moved by lines added above them: found where they are
// now, and only what changed in them told, numbered as now; nothing, when
// nothing in them changed.
#[test]
fn changed_diff_of_a_range_follows_lines_that_moved() {
    let env = Env::new();
    let body: String = (1..=100).map(|i| format!("{i}\n")).collect();
    env.write("r.txt", &body);
    env.run("fsview-read", &["-q", "-o", "50", "-n", "4", "r.txt"]);
    let moved = format!("#!/bin/sh\n# header\n{body}");
    env.write("r.txt", &moved);
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "r.txt: modified (content): changed outside the lines viewed, which are lines 52-55 now\n",
    );
    env.write("r.txt", moved.replace("\n51\n", "\nfifty-one\n"));
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "r.txt: modified (content)\n--- r.txt (as viewed, lines 50-53)\n+++ r.txt (now, lines 52-55)\n@@ -50,4 +52,4 @@\n 50\n-51\n+fifty-one\n 52\n 53\n",
    );
}

#[test]
fn sessions_in_one_file_are_independent() {
    let env = Env::new();
    env.write("a", "a\n");
    env.run("fsview-read", &["--sid", "agent-1", "a"]);
    env.run("fsview-check-edit", &["--sid", "agent-1", "a"])
        .expect(0, "a: ok\n");
    env.run("fsview-check-edit", &["--sid", "agent-2", "a"])
        .expect(1, &format!("a: not_read: {NOT_READ}\n"));
    let mut c = env.cmd(crate::harness::bin("fsview-check-edit"));
    c.env("FSVIEW_SID", "agent-1").arg("a");
    crate::harness::output(c, None).expect(0, "a: ok\n");
}

// A batch of more than 64 paths (a pre-commit hook over a tree) logs its
// refusals each and one event counting every verdict: the session's
// bounded log keeps its reads and edits.
#[test]
fn a_big_batch_logs_its_refusals_and_one_count() {
    let env = Env::new();
    let mut list = String::new();
    for i in 0..70 {
        let p = format!("src/f{i}.rs");
        env.write(&p, "x\n");
        list.push_str(&p);
        list.push('\0');
    }
    let reads: Vec<String> = (2..70).map(|i| format!("src/f{i}.rs")).collect();
    let reads: Vec<&str> = reads.iter().map(String::as_str).collect();
    let r = env.run("fsview-read", &[&["-q"][..], &reads].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.write("src/f69.rs", "y\n");
    list.push_str("src/new.rs\0");
    let r = env.run_stdin("fsview-check-edit", &["-0", "-"], list.as_bytes());
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout.lines().count(), 71);
    let ev = env.run("fsview-session", &["events", "--json"]);
    let checks: Vec<(String, String, String)> = ev
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["action"] == "check")
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap_or("-").to_string();
            let path = e["path"].as_str().map_or("-".to_string(), |p| {
                p.rsplit('/').next().unwrap().to_string()
            });
            (path, s("verdict"), s("detail"))
        })
        .collect();
    let t = |p: &str, v: &str, d: &str| (p.to_string(), v.to_string(), d.to_string());
    assert_eq!(
        checks,
        [
            t("f0.rs", "not_read", "edit"),
            t("f1.rs", "not_read", "edit"),
            t("f69.rs", "modified", "edit, content"),
            t(
                "-",
                "-",
                "batch of 71 paths: 2 not_read, 67 ok, 1 modified, 1 new_file"
            ),
        ]
    );
}

// Issue 13: a batch shares its work (directories canonicalized once, one
// read snapshot, one transaction for its refreshes and events), and
// answers every path exactly as a call of its own would: links, `..`, a
// hard link, a save by rename, a told file, a directory in the list.
#[test]
fn a_batch_answers_each_path_as_a_call_of_its_own() {
    let env = Env::new();
    env.write("src/a.rs", "a\n");
    env.write("src/b.rs", "b\n");
    env.write("src/c.rs", "c\n");
    env.write("src/unread.rs", "u\n");
    env.write("docs/d.md", "d\n");
    std::os::unix::fs::symlink(env.path("src/a.rs"), env.path("docs/link.rs")).unwrap();
    std::fs::hard_link(env.path("src/b.rs"), env.path("docs/hard.rs")).unwrap();
    env.run("fsview-read", &["-q", "src/a.rs", "src/b.rs", "src/c.rs", "docs/d.md"])
        .expect(0, "==> src/a.rs <==\n1\ta\n\n==> src/b.rs <==\n1\tb\n\n==> src/c.rs <==\n1\tc\n\n==> docs/d.md <==\n1\td\n");
    env.write("src/c.rs", "changed\n");
    // Files the batch opens ahead (hashing the small ones) before it knows
    // their records: a big one changed, one a FIFO now stands in for.
    env.write("docs/big.txt", "x".repeat(200_000) + "\n");
    env.write("docs/fifo", "f\n");
    let r = env.run("fsview-read", &["-q", "docs/big.txt", "docs/fifo"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.write("docs/big.txt", "y".repeat(200_000) + "\n");
    std::fs::remove_file(env.path("docs/fifo")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(env.path("docs/fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    // The same bytes saved by rename: fresh, and worth a refresh.
    env.write("docs/d.md.tmp", "d\n");
    std::fs::rename(env.path("docs/d.md.tmp"), env.path("docs/d.md")).unwrap();
    let paths = [
        "src/a.rs",
        "docs/../src/a.rs",
        "docs/link.rs",
        "docs/hard.rs",
        "src/c.rs",
        "src/unread.rs",
        "docs/d.md",
        "src/new.rs",
        "src/./b.rs",
        "docs/big.txt",
        "docs/fifo",
        "src",
    ];
    let mut want = String::new();
    let mut code = 0;
    for p in paths {
        let r = env.run("fsview-check-edit", &[p]);
        want.push_str(&r.stdout);
        code = code.max(r.code);
    }
    assert_eq!(code, 2);
    let events_before = env.run("fsview-session", &["list", "--json"]).json()[0]["events"]
        .as_i64()
        .unwrap();
    // Saved by rename once more: the batch has a new identity to store.
    env.write("docs/d.md.tmp", "d\n");
    std::fs::rename(env.path("docs/d.md.tmp"), env.path("docs/d.md")).unwrap();
    let list: String = paths.iter().map(|p| format!("{p}\0")).collect();
    let r = env.run_stdin("fsview-check-edit", &["-0", "-"], list.as_bytes());
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (2, want.as_str()),
        "{}",
        r.stderr
    );
    assert_eq!(
        r.stderr,
        "fsview-check-edit: docs/fifo is a FIFO; fsview-check-edit gates regular files only\nfsview-check-edit: src is a directory; fsview-check-edit gates regular files only\n"
    );
    // One event per path answered, logged together.
    let events = env.run("fsview-session", &["list", "--json"]).json()[0]["events"]
        .as_i64()
        .unwrap();
    assert_eq!(events - events_before, paths.len() as i64 - 2);
    assert!(want.contains(&format!("src/c.rs: modified (content): {MODIFIED}\n")));
    assert!(want.contains(&format!("src/unread.rs: not_read: {NOT_READ}\n")));
    assert!(want.contains("docs/hard.rs: ok\n"));
    assert!(want.contains("docs/d.md: ok\n"));
    assert!(want.contains(&format!("docs/big.txt: modified (content): {MODIFIED}\n")));
    // ... stored at the end of the batch, onto its record.
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(env.path("docs/d.md")).unwrap();
    let db = rusqlite::Connection::open(&env.session).unwrap();
    let ino: i64 = db
        .query_row(
            "SELECT ino FROM files WHERE path = ?1",
            [env.path("docs/d.md").as_os_str().as_encoded_bytes()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(ino as u64, m.ino());
}

// Issue 25: a batch opens each file it has a record of once, takes the stat
// from the open file and looks records up together; the bytes still decide,
// whatever the stat says. Each change in a batch gets the verdict a call of
// its own gives: grown, rewritten to the same size with the old mtime put
// back, deleted, replaced by other bytes, saved by rename with the same
// bytes, a link, a directory and a FIFO where a read file was.
#[test]
fn a_batch_decides_by_the_bytes_of_each_file() {
    let env = Env::new();
    let names = [
        "same.rs",
        "grown.rs",
        "samesize.rs",
        "deleted.rs",
        "replaced.rs",
        "renamed.rs",
        "nowlink.rs",
        "nowdir.rs",
        "nowfifo.rs",
    ];
    for n in names {
        env.write(&format!("src/{n}"), format!("{n} v1\n"));
    }
    let args: Vec<String> = names.iter().map(|n| format!("src/{n}")).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut read = vec!["-q"];
    read.extend(&args);
    assert_eq!(env.run("fsview-read", &read).code, 0);
    env.write("src/grown.rs", "grown.rs v1\nmore\n");
    let (s, ns) = crate::harness::mtime(&env.path("src/samesize.rs"));
    env.write("src/samesize.rs", "samesize.rs v2\n");
    crate::harness::set_mtime(&env.path("src/samesize.rs"), s, ns);
    std::fs::remove_file(env.path("src/deleted.rs")).unwrap();
    env.write("src/replaced.rs.tmp", "replaced.rs v2\n");
    std::fs::rename(env.path("src/replaced.rs.tmp"), env.path("src/replaced.rs")).unwrap();
    env.write("src/renamed.rs.tmp", "renamed.rs v1\n");
    std::fs::rename(env.path("src/renamed.rs.tmp"), env.path("src/renamed.rs")).unwrap();
    std::fs::remove_file(env.path("src/nowlink.rs")).unwrap();
    std::os::unix::fs::symlink("same.rs", env.path("src/nowlink.rs")).unwrap();
    std::fs::remove_file(env.path("src/nowdir.rs")).unwrap();
    std::fs::create_dir(env.path("src/nowdir.rs")).unwrap();
    std::fs::remove_file(env.path("src/nowfifo.rs")).unwrap();
    assert!(env.sh("mkfifo src/nowfifo.rs").code == 0);
    let mut want_out = String::new();
    let mut want_err = String::new();
    for p in &args {
        let r = env.run("fsview-check-edit", &[p]);
        want_out.push_str(&r.stdout);
        want_err.push_str(&r.stderr);
    }
    assert_eq!(
        want_out,
        format!(
            "src/same.rs: ok\n\
             src/grown.rs: modified (content): {MODIFIED}\n\
             src/samesize.rs: modified (content): {MODIFIED}\n\
             src/deleted.rs: modified (deleted): {DELETED}\n\
             src/replaced.rs: modified (replaced): {MODIFIED}\n\
             src/renamed.rs: ok\n\
             src/nowlink.rs: ok\n"
        )
    );
    assert_eq!(
        want_err,
        "fsview-check-edit: src/nowdir.rs is a directory; fsview-check-edit gates regular files only\n\
         fsview-check-edit: src/nowfifo.rs is a FIFO; fsview-check-edit gates regular files only\n"
    );
    let list: String = args.iter().map(|p| format!("{p}\0")).collect();
    let r = env.run_stdin("fsview-check-edit", &["-0", "-"], list.as_bytes());
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (2, want_out.as_str(), want_err.as_str())
    );
}

// A batch that names part of a session looks its records up in chunks of
// 256 paths; one that names most of it reads the session once. Both answer
// every path, in order, a path named twice included.
#[test]
fn a_batch_answers_every_path_in_order_however_it_looks_up() {
    let env = Env::new();
    let n = 1100;
    let mut requests = String::new();
    for i in 0..n {
        env.write(
            &format!("d{}/f{i}.rs", i / 400),
            format!("fn f{i}() {{}}\n"),
        );
        requests.push_str(&format!("{{\"path\":\"d{}/f{i}.rs\"}}\n", i / 400));
    }
    let r = env.run_stdin("fsview-read", &["--requests"], requests.as_bytes());
    assert_eq!(r.code, 0, "{}", r.stderr);
    for i in (0..n).step_by(7) {
        env.write(
            &format!("d{}/f{i}.rs", i / 400),
            format!("fn f{i}() {{ changed }}\n"),
        );
    }
    // 521 of 1,100 files (in chunks), then all of them (one pass).
    for count in [520, n] {
        let (mut list, mut want) = (String::new(), String::new());
        for i in (0..count).chain([7]) {
            let p = format!("d{}/f{i}.rs", i / 400);
            list.push_str(&format!("{p}\n"));
            match i % 7 {
                0 => want.push_str(&format!("{p}: modified (content): {MODIFIED}\n")),
                _ => want.push_str(&format!("{p}: ok\n")),
            }
        }
        let r = env.run_stdin("fsview-check-edit", &["-"], list.as_bytes());
        assert_eq!(
            (r.code, r.stdout.as_str(), r.stderr.as_str()),
            (1, want.as_str(), "")
        );
    }
}

/// A mistyped --sid on a gating tool is a session with no views: the
/// refusal says so, naming the sessions the file does hold, and a check
/// does not create it.
#[test]
fn a_mistyped_sid_is_named_not_created() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.run("fsview-read", &["--sid", "agent-7", "a.rs"]);
    let hint = format!(
        "no session \"agnt-7\" in {}; nearest: \"agent-7\" (see `fsview-session list`)",
        env.session.display()
    );
    env.run("fsview-check-edit", &["--sid", "agnt-7", "a.rs"])
        .expect(
            1,
            "a.rs: not_read: File has not been read yet. Read it first before writing to it.\n",
        )
        .stderr_is(&format!(
            "fsview-check-edit: {hint}; it has no views, so every file in it is not_read\n"
        ));
    let sids = crate::harness::sids;
    assert_eq!(sids(&env), ["agent-7"]);
    // A new file needs no read, and a new session says nothing.
    env.run("fsview-check-edit", &["--sid", "run-2", "new.rs"])
        .expect(0, "new.rs: new_file\n")
        .stderr_is("");
    env.run("fsview-check-edit", &["--sid", "agent-7", "a.rs"])
        .expect(0, "a.rs: ok\n");
}

// Issue 25: a batch big enough to be spread over the cores (600 paths, in
// chunks taken by whichever thread is free) answers each path as a call
// of its own: read and unchanged, read and changed, never read, and never
// read under its own name but a hard link to a read file (the same file
// to the gate), or to a file the session never read.
#[test]
fn a_spread_batch_knows_unread_files_and_hard_links() {
    let env = Env::new();
    let mut list = String::new();
    let mut want = String::new();
    let mut reads = Vec::new();
    for i in 0..600 {
        let p = format!("src/d{}/f{i}.rs", i / 100);
        env.write(&p, format!("fn f{i}() {{}}\n"));
        list.push_str(&p);
        list.push('\0');
        if i % 3 != 0 {
            reads.push(p);
        }
    }
    let args: Vec<&str> = std::iter::once("-q")
        .chain(reads.iter().map(String::as_str))
        .collect();
    assert_eq!(env.run("fsview-read", &args).code, 0);
    env.write("src/d1/f101.rs", "fn f101() { changed() }\n");
    // f200 was read, f201 was not (every third file is left unread).
    std::fs::hard_link(env.path("src/d2/f200.rs"), env.path("src/d2/hard-read.rs")).unwrap();
    std::fs::hard_link(
        env.path("src/d2/f201.rs"),
        env.path("src/d2/hard-unread.rs"),
    )
    .unwrap();
    list.push_str("src/d2/hard-unread.rs\0src/d2/hard-read.rs\0");
    for i in 0..600 {
        let p = format!("src/d{}/f{i}.rs", i / 100);
        match i {
            101 => want.push_str(&format!("{p}: modified (content): {MODIFIED}\n")),
            _ if i % 3 == 0 => want.push_str(&format!("{p}: not_read: {NOT_READ}\n")),
            _ => want.push_str(&format!("{p}: ok\n")),
        }
    }
    want.push_str(&format!("src/d2/hard-unread.rs: not_read: {NOT_READ}\n"));
    want.push_str("src/d2/hard-read.rs: ok\n");
    let r = env.run_stdin("fsview-check-edit", &["-0", "-"], list.as_bytes());
    assert_eq!((r.code, r.stderr.as_str()), (1, ""));
    same_lines(&r.stdout, &want, 602);
    // The same answers one at a time, for a sample across the chunks.
    for p in [
        "src/d0/f0.rs",
        "src/d1/f101.rs",
        "src/d5/f599.rs",
        "src/d2/hard-read.rs",
        "src/d2/hard-unread.rs",
    ] {
        let one = env.run("fsview-check-edit", &[p]);
        assert!(want.contains(&one.stdout), "{p}: {}", one.stdout);
    }
}

// Issue 25: a session much smaller than its batch (a hook over a tree the
// agent has barely read) is read first, and a file it has no record of by
// name only gets its lstat. Every kind of path still gets the verdict a
// call of its own gives: read, changed, never read, a hard link to a read
// and to an unread file, a symbolic link to a read file, nothing there, a
// directory.
#[test]
fn a_batch_over_a_barely_read_tree_stats_what_it_never_read() {
    let env = Env::new();
    let mut paths = Vec::new();
    for i in 0..600 {
        let p = format!("src/d{}/f{i}.rs", i / 100);
        env.write(&p, format!("fn f{i}() {{}}\n"));
        paths.push(p);
    }
    let reads: Vec<&str> = std::iter::once("-q")
        .chain(paths.iter().skip(1).step_by(30).map(String::as_str))
        .collect();
    assert_eq!(env.run("fsview-read", &reads).code, 0);
    env.write("src/d0/f31.rs", "fn f31() { changed() }\n");
    std::fs::hard_link(env.path("src/d0/f1.rs"), env.path("src/hard-read.rs")).unwrap();
    std::fs::hard_link(env.path("src/d0/f2.rs"), env.path("src/hard-unread.rs")).unwrap();
    std::os::unix::fs::symlink(env.path("src/d0/f61.rs"), env.path("src/link-read.rs")).unwrap();
    for p in [
        "src/hard-read.rs",
        "src/hard-unread.rs",
        "src/link-read.rs",
        "src/missing.rs",
        "src/d1",
    ] {
        paths.push(p.to_string());
    }
    let mut want = String::new();
    let mut want_err = String::new();
    for p in &paths {
        let r = env.run("fsview-check-edit", &[p]);
        want.push_str(&r.stdout);
        want_err.push_str(&r.stderr);
    }
    assert!(want.contains("src/d0/f1.rs: ok\n"));
    assert!(want.contains(&format!("src/d0/f31.rs: modified (content): {MODIFIED}\n")));
    assert!(want.contains(&format!("src/d0/f2.rs: not_read: {NOT_READ}\n")));
    assert!(want.contains("src/hard-read.rs: ok\n"));
    assert!(want.contains(&format!("src/hard-unread.rs: not_read: {NOT_READ}\n")));
    assert!(want.contains("src/link-read.rs: ok\n"));
    assert!(want.contains("src/missing.rs: new_file\n"));
    assert_eq!(
        want_err,
        "fsview-check-edit: src/d1 is a directory; fsview-check-edit gates regular files only\n"
    );
    let list: String = paths.iter().map(|p| format!("{p}\0")).collect();
    let r = env.run_stdin("fsview-check-edit", &["-0", "-"], list.as_bytes());
    assert_eq!((r.code, r.stderr.as_str()), (2, want_err.as_str()));
    same_lines(&r.stdout, &want, 604);
}

/// `got` is `want`, `lines` lines long; on failure only the lines that
/// differ are shown (a batch's answers run to hundreds of lines).
fn same_lines(got: &str, want: &str, lines: usize) {
    let wrong: Vec<(&str, &str)> = got
        .lines()
        .zip(want.lines())
        .filter(|(got, want)| got != want)
        .collect();
    assert_eq!(wrong, []);
    assert_eq!((got.lines().count(), want.lines().count()), (lines, lines));
}

// A file name with a newline: escaped in the diff's header too, so the
// diff stays one diff.
#[test]
fn a_name_with_a_newline_is_escaped_in_the_diff_header() {
    let env = Env::new();
    env.write("new\nline.txt", "a\n");
    assert_eq!(env.run("fsview-read", &["new\nline.txt"]).code, 0);
    env.write("new\nline.txt", "b\n");
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "new\\nline.txt: modified (content)\n--- new\\nline.txt (as viewed)\n+++ new\\nline.txt (now)\n@@ -1 +1 @@\n-a\n+b\n",
    );
}
