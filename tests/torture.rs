//! Change-detection torture: every way a file can change behind the agent,
//! each with its exact verdict, and the false alarms that must not fire.
//! (The racy-git and mtime-backwards cases live in `freshness`.)

use crate::harness::{mtime, set_mtime, Env};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

fn modified(path: &str, change: &str) -> String {
    format!("{path}: modified ({change}): {MODIFIED}\n")
}

fn read(env: &Env, path: &str) {
    let r = env.run("fsview-read", &["-q", path]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

// The content decides (issue 9): a file deleted and created again with the
// same bytes holds what the agent saw, so it is fresh; with other bytes it
// is `replaced`.
#[test]
fn delete_and_recreate_with_the_same_content_is_fresh() {
    let env = Env::new();
    env.write("a", "same\n");
    read(&env, "a");
    std::fs::remove_file(env.path("a")).unwrap();
    env.write("a", "same\n");
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: ok\n");
    std::fs::remove_file(env.path("a")).unwrap();
    env.write("a", "else\n");
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "replaced"));
}

// Truncated, then the same bytes written back into the same file: it holds
// exactly what was seen, so it is fresh.
#[test]
fn truncated_then_restored_is_fresh() {
    let env = Env::new();
    env.write("a", "keep me\n");
    read(&env, "a");
    env.sh("truncate -s 0 a && printf 'keep me\\n' >> a")
        .expect(0, "");
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: ok\n");
    env.sh("truncate -s 0 a").expect(0, "");
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "content"));
}

// A filesystem with whole-second timestamps: the rewrite lands on the same
// second, same size; the mtime cannot tell, the hash does.
#[test]
fn coarse_timestamps_same_second_same_size() {
    let env = Env::new();
    let p = env.write("a", "1111\n");
    let (s, _) = mtime(&p);
    set_mtime(&p, s, 0);
    read(&env, "a");
    env.write("a", "2222\n");
    set_mtime(&p, s, 0);
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "content"));
}

#[test]
fn replaced_by_a_symlink_to_identical_content_is_a_type_change() {
    let env = Env::new();
    env.write("a", "x\n");
    env.write("b", "x\n");
    read(&env, "a");
    std::fs::remove_file(env.path("a")).unwrap();
    std::os::unix::fs::symlink(env.path("b"), env.path("a")).unwrap();
    // The name now leads to b, which was never read.
    env.run("fsview-check-edit", &["a"]).expect(
        1,
        "a: not_read: File has not been read yet. Read it first before writing to it.\n",
    );
    env.run("fsview-check-edit", &["--changed"])
        .expect(1, "a: modified (type): now a symbolic link\n");
}

// The false alarms that must not fire.
#[test]
fn touch_chmod_chown_and_a_read_are_not_changes() {
    let env = Env::new();
    env.write("a", "x\n");
    read(&env, "a");
    env.sh("touch a && chmod 640 a && chown \"$(id -u):$(id -g)\" a && cat a >/dev/null")
        .expect(0, "");
    env.run("fsview-check-edit", &["--write", "a"])
        .expect(0, "a: ok\n");
    env.run("fsview-check-edit", &["--changed"]).expect(0, "");
}

#[test]
fn written_through_a_hard_link_under_the_viewed_name() {
    let env = Env::new();
    env.write("a", "x\n");
    read(&env, "a");
    std::fs::hard_link(env.path("a"), env.path("b")).unwrap();
    env.sh("printf 'y\\n' > b").expect(0, "");
    env.run("fsview-check-edit", &["a"])
        .expect(1, &modified("a", "content"));
}
