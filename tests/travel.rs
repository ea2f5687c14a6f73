//! Issue 13: sessions that travel. A pipeline whose stages run on
//! different CI runners hands the session on: `fsview-session export` in
//! the first runner's clone, `import` in a fresh clone at another path on
//! the second. There the views gate by content: the same bytes may be
//! edited, other bytes are `modified`, and `--changed` lists only what
//! differs.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::harness::{self, Env, Run};

const DELETED: &str = "File has been deleted since read: there is nothing to edit. Write the whole file to create it again, or leave it deleted.";
const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

/// `tool args` in `dir`, with the session file where it lands by default:
/// in the git directory of `dir`'s work tree.
fn run_in(env: &Env, dir: &Path, tool: &str, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut c = env.cmd(harness::bin(tool));
    c.env_remove("FSVIEW_SESSION")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(dir)
        .args(args);
    harness::output(c, stdin)
}

fn git(env: &Env, dir: &Path, args: &[&str]) {
    let mut c = env.cmd("git");
    c.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .current_dir(dir)
        .args(args);
    let r = harness::output(c, None);
    assert_eq!(r.code, 0, "git {args:?}: {}", r.stderr);
}

fn write(path: &Path, body: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

/// A repository `origin` with a few files, and two clones of it: `one`
/// (runner one) and `two`, somewhere else entirely (runner two).
fn clones(env: &Env) -> (PathBuf, PathBuf, PathBuf) {
    let root = env.root();
    let origin = root.join("origin");
    write(&origin.join("src/main.rs"), "fn main() {}\n");
    write(&origin.join("src/lib.rs"), "pub fn a() {}\n");
    let log: String = (1..=500).map(|i| format!("line {i}\n")).collect();
    write(&origin.join("app.log"), log);
    // Over 128 KiB, and over the 64 KiB cap used below: a start view.
    let big: String = (0..4000).map(|i| format!("{i:>60}\n")).collect();
    write(&origin.join("big.txt"), big);
    write(
        &origin.join("CLAUDE.md"),
        "<!-- maintainers -->\nBe brief.\n",
    );
    write(&origin.join("README.md"), "# r\n");
    git(env, &origin, &["init", "-q", "-b", "main"]);
    git(env, &origin, &["add", "-A"]);
    git(env, &origin, &["commit", "-q", "-m", "one"]);
    let one = root.join("runner-1/work/repo");
    let two = root.join("runner-2/somewhere/else/checkout");
    for c in [&one, &two] {
        std::fs::create_dir_all(c.parent().unwrap()).unwrap();
        git(
            env,
            &root,
            &["clone", "-q", origin.to_str().unwrap(), c.to_str().unwrap()],
        );
    }
    (origin, one, two)
}

fn stat_of(p: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(p).unwrap();
    (m.dev(), m.ino())
}

#[test]
fn a_session_exported_in_one_clone_gates_by_content_in_another() {
    let env = Env::new();
    let (_, one, two) = clones(&env);
    // A file outside both work trees keeps its absolute path.
    let shared = env.root().join("shared/conf.txt");
    write(&shared, "key = 1\n");

    // Runner one: the agent reads, in every way there is.
    let read = |args: &[&str], stdin: Option<&[u8]>| {
        let r = run_in(&env, &one, "fsview-read", args, stdin);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    };
    read(&["-q", "src/main.rs", "src/lib.rs"], None);
    read(&["-q", "-o", "100", "-n", "3", "app.log"], None);
    read(&["-q", "--cap", "64K", "big.txt"], None);
    read(&["-q", "--processed", "CLAUDE.md"], Some(b"Be brief.\n"));
    write(&one.join("notes.txt"), "untracked, runner one only\n");
    read(&["-q", "notes.txt", shared.to_str().unwrap()], None);
    let export = run_in(&env, &one.join("src"), "fsview-session", &["export"], None);
    assert_eq!(export.code, 0, "{}", export.stderr);
    let mut doc: Value = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(doc["fsview_export"], 3);
    assert_eq!(doc["root"], json!(one));
    let paths: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "src/main.rs",
            "src/lib.rs",
            "app.log",
            "big.txt",
            "CLAUDE.md",
            "notes.txt",
            shared.to_str().unwrap()
        ]
    );
    let kinds: Vec<&str> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["views"][0]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "full",
            "full",
            "range",
            "start",
            "processed",
            "full",
            "full"
        ]
    );
    // As if exported on another machine: its device and inode numbers
    // name nothing here.
    doc["boot_id"] = json!("another-machine");

    // Runner one is gone; runner two has its own clone, where one file
    // holds other bytes.
    std::fs::remove_dir_all(env.root().join("runner-1")).unwrap();
    write(&two.join("src/lib.rs"), "pub fn a() { changed() }\n");

    let import = run_in(
        &env,
        &two.join("src"),
        "fsview-session",
        &["import", "--json"],
        Some(doc.to_string().as_bytes()),
    );
    let j = &import.json()[0];
    assert_eq!(
        (
            &j["sid"],
            &j["files"],
            &j["views"],
            &j["version"],
            &j["root"]
        ),
        (
            &json!("default"),
            &json!(7),
            &json!(7),
            &json!(3),
            &json!(two)
        ),
        "{}",
        import.stderr
    );
    assert!(two.join(".git/fsview/session.db").exists());

    // Every verdict, in the second clone.
    let check = |args: &[&str]| run_in(&env, &two, "fsview-check-edit", args, None);
    let conf = shared.to_str().unwrap();
    check(&[
        "src/main.rs",
        "src/lib.rs",
        "app.log",
        "big.txt",
        "CLAUDE.md",
        "notes.txt",
        conf,
        "README.md",
        "new.rs",
    ])
    .expect(
        1,
        &format!(
            "src/main.rs: ok\n\
             src/lib.rs: modified (content): {MODIFIED}\n\
             app.log: ok\n\
             big.txt: ok\n\
             CLAUDE.md: processed_view: File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.\n\
             notes.txt: modified (deleted): {DELETED}\n\
             {conf}: ok\n\
             README.md: not_read: {NOT_READ}\n\
             new.rs: new_file\n"
        ),
    );
    check(&["--write", "src/main.rs", "app.log", "big.txt"]).expect(
        1,
        "src/main.rs: ok\n\
         app.log: start_only: File has only been read in part (lines 100-102 of 500). Read the whole file before writing all of it.\n\
         big.txt: start_only: File has only been read in part (lines 1-1074 of 4000). Read the whole file before writing all of it.\n",
    );
    // Only what differs is listed.
    check(&["--changed"]).expect(
        1,
        "src/lib.rs: modified (content)\n\
         --- src/lib.rs (as viewed)\n\
         +++ src/lib.rs (now)\n\
         @@ -1 +1 @@\n\
         -pub fn a() {}\n\
         +pub fn a() { changed() }\n\
         notes.txt: modified (deleted): deleted\n",
    );
    // The first check adopted each file's identity here.
    let db = rusqlite::Connection::open(two.join(".git/fsview/session.db")).unwrap();
    let ident = |p: &Path| -> (u64, u64) {
        db.query_row(
            "SELECT dev, ino FROM files WHERE path = ?1",
            [p.as_os_str().as_encoded_bytes()],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
        )
        .unwrap()
    };
    for rel in ["src/main.rs", "app.log", "big.txt"] {
        assert_eq!(ident(&two.join(rel)), stat_of(&two.join(rel)), "{rel}");
    }
    // The file with other bytes keeps what the agent saw; it has no
    // identity here.
    assert_eq!(ident(&two.join("src/lib.rs")), (0, 0));
    // And after adoption, the same answers.
    check(&["src/main.rs", "app.log", "big.txt"])
        .expect(0, "src/main.rs: ok\napp.log: ok\nbig.txt: ok\n");
    // This conversation never saw the text itself: a re-read is news.
    let r = run_in(
        &env,
        &two,
        "fsview-read",
        &["--json", "--stub", "src/main.rs"],
        None,
    );
    assert_eq!(r.json()[0]["unchanged"], false);
    assert_eq!(r.json()[0]["content"], "1\tfn main() {}\n");
}

// An export taken on this machine and boot keeps its identities: inode
// numbers there still name the same files, so a round trip costs no hash.
// A tarball of the sources without .git takes the relative paths with
// --root.
#[test]
fn an_import_keeps_identities_on_the_same_boot_and_maps_onto_root() {
    let env = Env::new();
    let (_, one, _) = clones(&env);
    let run = |dir: &Path, tool: &str, args: &[&str], stdin: Option<&[u8]>| {
        run_in(&env, dir, tool, args, stdin)
    };
    assert_eq!(
        run(&one, "fsview-read", &["-q", "src/main.rs"], None).code,
        0
    );
    let export = run(&one, "fsview-session", &["export"], None);
    let doc: Value = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(doc["files"][0]["path"], "src/main.rs");
    run(&one, "fsview-session", &["drop", "--sid", "default"], None).expect(
        0,
        "dropped \"default\": 1 file, 1 view, 0 context parts, 0 instruction files, 1 event\n",
    );
    run(&one, "fsview-session", &["import"], Some(export.stdout.as_bytes())).expect(
        0,
        &format!(
            "imported \"default\": 1 file, 1 view, 0 context parts, 0 instruction files, 0 new texts, 1 event; work tree files mapped onto {}\n",
            one.display()
        ),
    );
    let db = rusqlite::Connection::open(one.join(".git/fsview/session.db")).unwrap();
    let ident: (i64, i64) = db
        .query_row("SELECT dev, ino FROM files", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let (dev, ino) = stat_of(&one.join("src/main.rs"));
    assert_eq!(ident, (dev as i64, ino as i64));

    let plain = env.root().join("unpacked");
    write(&plain.join("src/main.rs"), "fn main() {}\n");
    let session = env.root().join("plain.db");
    let mut c = env.cmd(harness::bin("fsview-session"));
    c.env("FSVIEW_SESSION", &session)
        .current_dir(&plain)
        .args(["import", "--root", "."]);
    harness::output(c, Some(export.stdout.as_bytes())).expect(
        0,
        &format!(
            "imported \"default\": 1 file, 1 view, 0 context parts, 0 instruction files, 1 new text, 1 event; work tree files mapped onto {}\n",
            plain.display()
        ),
    );
    let mut c = env.cmd(harness::bin("fsview-check-edit"));
    c.env("FSVIEW_SESSION", &session)
        .current_dir(&plain)
        .args(["src/main.rs"]);
    harness::output(c, None).expect(0, "src/main.rs: ok\n");
    // --root must be a directory.
    let mut c = env.cmd(harness::bin("fsview-session"));
    c.env("FSVIEW_SESSION", &session).current_dir(&plain).args([
        "import",
        "--replace",
        "--root",
        "nowhere",
    ]);
    harness::output(c, Some(export.stdout.as_bytes()))
        .expect(2, "")
        .stderr_is("fsview-session: --root nowhere: no such file or directory; name an existing directory\n");
}
