//! The session file: where it goes, how it is created, and the files that
//! are refused (exit 2, one line, byte-identical afterwards).

use crate::harness::{bin, output, Env};

fn refused(env: &Env, expected_stderr: &str) {
    let before = std::fs::read(&env.session).unwrap();
    env.write("a", "a\n");
    for args in [&["a"][..], &["--json", "a"][..]] {
        env.run("fsview-read", args)
            .expect(2, "")
            .stderr_is(&format!("fsview-read: {expected_stderr}\n"));
    }
    env.run("fsview-check-edit", &["a"])
        .expect(2, "")
        .stderr_is(&format!("fsview-check-edit: {expected_stderr}\n"));
    assert_eq!(
        std::fs::read(&env.session).unwrap(),
        before,
        "session file was touched"
    );
}

#[test]
fn created_with_mode_0600() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    env.write("a", "a\n");
    env.run("fsview-read", &["-q", "a"]).expect(0, "1\ta\n");
    let mode = std::fs::metadata(&env.session)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn text_file_is_refused() {
    let env = Env::new();
    std::fs::write(&env.session, "just some notes\n").unwrap();
    refused(
        &env,
        &format!(
            "{} is not an fsview session file (not an SQLite database); pass another --session",
            env.session.display()
        ),
    );
}

#[test]
fn foreign_sqlite_file_is_refused() {
    let env = Env::new();
    let c = rusqlite::Connection::open(&env.session).unwrap();
    c.execute_batch("CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('mine');")
        .unwrap();
    drop(c);
    refused(
        &env,
        &format!(
            "{} is an SQLite database but not an fsview session file; pass another --session",
            env.session.display()
        ),
    );
}

#[test]
fn newer_schema_is_refused() {
    let env = Env::new();
    env.write("a", "a\n");
    env.run("fsview-read", &["-q", "a"]).expect(0, "1\ta\n");
    let c = rusqlite::Connection::open(&env.session).unwrap();
    c.execute_batch("PRAGMA user_version = 9;").unwrap();
    drop(c);
    refused(&env, &format!("session file {} was written by a newer fsview (schema 9, this one knows 8); upgrade fsview or pass another --session", env.session.display()));
}

#[test]
fn corrupt_file_is_refused() {
    let env = Env::new();
    env.write("a", "a\n");
    env.run("fsview-read", &["-q", "a"]).expect(0, "1\ta\n");
    // Keep SQLite's header, garble the rest.
    let mut bytes = std::fs::read(&env.session).unwrap();
    for b in bytes.iter_mut().skip(100) {
        *b = 0xa5;
    }
    std::fs::write(&env.session, &bytes).unwrap();
    let _ = std::fs::remove_file(env.session.with_extension("db-wal"));
    let _ = std::fs::remove_file(env.session.with_extension("db-shm"));
    refused(&env, &format!("session file {} is corrupt; move it aside (fsview will start a new one) or pass another --session", env.session.display()));
}

#[test]
fn zero_length_file_is_a_new_session() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    std::fs::write(&env.session, "").unwrap();
    // Made by someone else (`touch`), readable by all: made private, as a
    // file fsview creates, before it holds any text.
    std::fs::set_permissions(&env.session, std::fs::Permissions::from_mode(0o644)).unwrap();
    env.write("a", "a\n");
    env.run("fsview-read", &["-q", "a"]).expect(0, "1\ta\n");
    env.run("fsview-check-edit", &["a"]).expect(0, "a: ok\n");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&env.session), 0o600);
    assert_eq!(mode(&env.session.with_extension("db-wal")), 0o600);
}

// Two names of one file: SQLite would keep a log beside each, and two
// processes through them would lose each other's writes.
#[test]
fn a_session_file_with_two_hard_links_is_refused() {
    let env = Env::new();
    env.write("a", "a\n");
    env.run("fsview-read", &["-q", "a"]).expect(0, "1\ta\n");
    std::fs::hard_link(&env.session, env.root().join("other.db")).unwrap();
    refused(&env, &format!("session file {} has 2 hard links, and SQLite would keep a separate log for each name and corrupt it; use it by one name (a symbolic link is fine), or remove the other links", env.session.display()));
}

#[test]
fn session_path_that_is_a_directory_or_dangling_link() {
    let env = Env::new();
    env.write("a", "a\n");
    std::fs::create_dir(&env.session).unwrap();
    env.run("fsview-read", &["a"]).expect(2, "").stderr_is(&format!(
        "fsview-read: session path {} is a directory, not a file; pass --session with a file path\n",
        env.session.display()
    ));
    let link = env.root().join("link.db");
    std::os::unix::fs::symlink(env.root().join("nowhere.db"), &link).unwrap();
    env.run("fsview-read", &["--session", link.to_str().unwrap(), "a"]).expect(2, "").stderr_is(&format!(
        "fsview-read: session path {} is a dangling symbolic link; fix the link or pass another --session\n",
        link.display()
    ));
}

#[test]
fn default_location_is_inside_the_git_dir() {
    let env = Env::new();
    env.sh("git init -q .").expect(0, "");
    env.write("sub/a", "a\n");
    let mut c = env.cmd(bin("fsview-read"));
    c.env_remove("FSVIEW_SESSION")
        .current_dir(env.path("sub"))
        .arg("a");
    output(c, None).expect(0, "1\ta\n");
    assert!(env.path(".git/fsview/session.db").is_file());
    // Outside a work tree: XDG_STATE_HOME.
    let state = env.root().join("state");
    let mut c = env.cmd(bin("fsview-read"));
    c.env_remove("FSVIEW_SESSION")
        .env("XDG_STATE_HOME", &state)
        .current_dir(env.root())
        .arg("work/sub/a");
    output(c, None).expect(0, "1\ta\n");
    assert!(state.join("fsview/session.db").is_file());
}

#[test]
fn help_and_version_never_open_the_session_file() {
    let env = Env::new();
    std::fs::write(&env.session, "not a database").unwrap();
    for b in ["fsview-read", "fsview-check-edit"] {
        let r = env.run(b, &["--help"]);
        assert_eq!(r.code, 0);
        assert!(r.stdout.contains("Examples:"), "{}", r.stdout);
        let r = env.run(b, &["--version"]);
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (0, format!("{b} {}\n", env!("CARGO_PKG_VERSION")).as_str())
        );
    }
}
