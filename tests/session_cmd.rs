//! fsview-session: list, show, events, fork, drop, export/import and gc,
//! and the event log every binary appends to.

use std::path::Path;

use serde_json::{json, Value};

use crate::harness::{self, Env, Run};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

/// Run `name` with the session file at `session` instead of the env's.
fn run_at(env: &Env, session: &Path, name: &str, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut c = env.cmd(harness::bin(name));
    c.env("FSVIEW_SESSION", session).args(args);
    harness::output(c, stdin)
}

/// ctx-build with no user or managed instruction files and a fixed date.
fn ctx_build(env: &Env, args: &[&str]) -> Run {
    let mut c = env.cmd(harness::bin("ctx-build"));
    c.env("CLAUDE_CONFIG_DIR", env.root().join("no-claude"))
        .env("FSVIEW_MANAGED_DIR", env.root().join("no-managed"))
        .env("GIT_CEILING_DIRECTORIES", env.root())
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .args(args);
    harness::output(c, None)
}

/// Drop the fields that hold wall-clock times or ids.
fn timeless(mut v: Vec<Value>) -> Vec<Value> {
    for o in &mut v {
        let m = o.as_object_mut().unwrap();
        for k in [
            "created",
            "active",
            "created_ns",
            "active_ns",
            "viewed",
            "viewed_ns",
            "at",
            "at_ns",
            "id",
            "canonical",
        ] {
            m.remove(k);
        }
    }
    v
}

/// A session with a full read, a range read, checks, builds and an
/// invalidation: 3 files, 3 views, 8 events.
fn busy_session() -> Env {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.write("b.txt", "one\ntwo\nthree\n");
    env.write("CLAUDE.md", "Be brief.\n");
    env.run("fsview-read", &["a.rs"])
        .expect(0, "1\tfn a() {}\n");
    env.run("fsview-read", &["--offset", "2", "--limit", "1", "b.txt"])
        .expect(0, "2\ttwo\n");
    env.run("fsview-check-edit", &["a.rs", "b.txt"])
        .expect(0, "a.rs: ok\nb.txt: ok\n");
    assert_eq!(ctx_build(&env, &[]).code, 0);
    assert_eq!(ctx_build(&env, &[]).code, 0);
    env.run(
        "ctx-invalidate",
        &["--system", "--reason", "branch switched"],
    )
    .expect(0, "cleared the system context\n");
    assert_eq!(ctx_build(&env, &[]).code, 0);
    env
}

#[test]
fn list_show_and_events_as_text() {
    let env = busy_session();
    env.run("fsview-session", &["list"]).expect(
        0,
        "\
SID      FILES  VIEWS  EVENTS  CREATED   ACTIVE    PARENT
default      3      3       8  just now  just now  -
",
    );
    env.run("fsview-session", &["show"]).expect(
        0,
        "\
PATH       KIND   STATE  HELD  WHEN      SOURCE  LINES
a.rs       full   fresh  yes   just now  read    1-1 of 1
b.txt      range  fresh  yes   just now  read    2-2 of 3
CLAUDE.md  full   fresh  yes   just now  inject  1-1 of 1
",
    );
    env.run("fsview-session", &["events"]).expect(
        0,
        "\
WHEN      TOOL               ACTION      PATH   VERDICT  DETAIL
just now  fsview-read        read        a.rs   -        full
just now  fsview-read        read        b.txt  -        range
just now  fsview-check-edit  check       a.rs   ok       edit
just now  fsview-check-edit  check       b.txt  ok       edit
just now  ctx-build          build       -      miss     -
just now  ctx-build          build       -      hit      -
just now  ctx-invalidate     invalidate  -      system   branch switched
just now  ctx-build          build       -      miss     -
",
    );
    env.run("fsview-session", &["events", "--limit", "2"])
        .expect(
            0,
            "\
WHEN      TOOL            ACTION      PATH  VERDICT  DETAIL
just now  ctx-invalidate  invalidate  -     system   branch switched
just now  ctx-build       build       -     miss     -
",
        );
}

#[test]
fn list_show_and_events_as_json() {
    let env = busy_session();
    let r = env.run("fsview-session", &["list", "--json"]);
    assert_eq!(r.code, 0);
    assert_eq!(
        timeless(r.json()),
        [
            json!({"v": 1, "type": "session", "sid": "default", "parent": null,
                "agent": null, "agent_type": null, "agents": 0,
                "files": 3, "views": 3, "events": 8})
        ]
    );
    let created = &r.json()[0]["created"];
    assert!(created.as_str().unwrap().ends_with('Z'), "{created}");

    let r = env.run("fsview-session", &["show", "--json"]);
    assert_eq!(r.code, 0);
    let mut views = timeless(r.json());
    for v in &mut views {
        assert_eq!(v["sha256"].as_str().unwrap().len(), 64);
        v.as_object_mut().unwrap().remove("sha256");
    }
    let view = |path: &str, kind: &str, source: &str, offset: u64, lines: u64, total: Value| {
        json!({"v": 1, "type": "view", "sid": "default", "agent": null, "path": path, "kind": kind,
               "source": source, "fresh": true, "state": "fresh", "change": null,
               "offset": offset, "lines": lines, "total_lines": total, "text_kept": true,
               "held": true, "released": null, "released_ns": null, "origin": null})
    };
    assert_eq!(
        views,
        [
            view("a.rs", "full", "read", 1, 1, json!(1)),
            view("b.txt", "range", "read", 2, 1, json!(3)),
            view("CLAUDE.md", "full", "inject", 1, 1, json!(1)),
        ]
    );

    let r = env.run("fsview-session", &["events", "--json", "--limit", "3"]);
    assert_eq!(r.code, 0);
    let event = |tool: &str, action: &str, verdict: &str, detail: Value| {
        json!({"v": 1, "type": "event", "sid": "default", "agent": null, "tool": tool, "action": action,
               "path": null, "verdict": verdict, "detail": detail})
    };
    assert_eq!(
        timeless(r.json()),
        [
            event("ctx-build", "build", "hit", Value::Null),
            event(
                "ctx-invalidate",
                "invalidate",
                "system",
                json!("branch switched")
            ),
            event("ctx-build", "build", "miss", Value::Null),
        ]
    );
    let r = env.run("fsview-session", &["events", "--json", "--limit", "8"]);
    let first = &r.json()[0];
    assert_eq!(first["path"], "a.rs");
    assert_eq!(first["canonical"], env.path("a.rs").to_str().unwrap());
}

#[test]
fn show_marks_a_modified_file() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.write("gone.rs", "x\n");
    env.run("fsview-read", &["a.rs", "gone.rs"]);
    env.sh("printf '// more\\n' >> a.rs && rm gone.rs")
        .expect(0, "");
    env.run("fsview-session", &["show"]).expect(
        0,
        "\
PATH     KIND  STATE               HELD  WHEN      SOURCE  LINES
a.rs     full  modified (content)  yes   just now  read    1-1 of 1
gone.rs  full  modified (deleted)  yes   just now  read    1-1 of 1
",
    );
    let j = env.run("fsview-session", &["show", "--json"]).json();
    assert_eq!(
        (&j[0]["fresh"], &j[0]["state"], &j[0]["change"]),
        (&json!(false), &json!("modified"), &json!("content"))
    );
    assert_eq!(j[1]["change"], "deleted");
}

// A file a reminder told only in part (the lines read, of a range view)
// stays modified until read, even changed back; a fork holds what its
// parent was told, so it answers as its parent does.
#[test]
fn a_fork_keeps_what_its_parent_was_told() {
    let env = Env::new();
    let text: String = (1..=30).map(|i| format!("{i}\n")).collect();
    env.write("a.txt", &text);
    env.run(
        "fsview-read",
        &["-q", "--sid", "S", "--offset", "5", "--limit", "5", "a.txt"],
    )
    .expect(0, "5\t5\n6\t6\n7\t7\n8\t8\n9\t9\n");
    env.write("a.txt", text.replacen("\n7\n", "\nSEVEN\n", 1));
    let prompt = serde_json::json!({
        "hook_event_name": "UserPromptSubmit", "session_id": "S",
        "cwd": env.work, "prompt": "go",
        "transcript_path": env.root().join("t.jsonl"),
    });
    assert_eq!(
        env.run_stdin("fsview-hook", &["claude"], prompt.to_string().as_bytes())
            .code,
        0
    );
    env.write("a.txt", &text);
    let modified = "a.txt: modified (content): File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.\n";
    env.run("fsview-check-edit", &["--sid", "S", "a.txt"])
        .expect(1, modified);
    env.run("fsview-session", &["fork", "--from", "S", "--sid", "S/f"])
        .expect(
            0,
            "forked \"S\" into \"S/f\": 1 file, 1 view, 0 context parts, 0 instruction files\n",
        );
    env.run("fsview-check-edit", &["--sid", "S/f", "a.txt"])
        .expect(1, modified);
}

#[test]
fn a_fork_starts_with_its_parents_views() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.write("CLAUDE.md", "Be brief.\n");
    env.run("fsview-read", &["--sid", "main", "a.rs"]);
    assert_eq!(ctx_build(&env, &["--sid", "main"]).code, 0);
    env.run(
        "fsview-session",
        &["fork", "--from", "main", "--sid", "sub-1"],
    )
    .expect(
        0,
        "forked \"main\" into \"sub-1\": 2 files, 2 views, 2 context parts, 1 instruction file\n",
    );
    env.run("fsview-check-edit", &["--sid", "sub-1", "--write", "a.rs"])
        .expect(0, "a.rs: ok\n");
    // The memoized context came along: the fork's first build is a hit.
    let j = ctx_build(&env, &["--sid", "sub-1", "--json"]).json();
    assert_eq!(j[0]["cache"], "hit");
    env.run("fsview-session", &["list"]).expect(
        0,
        "\
SID    FILES  VIEWS  EVENTS  CREATED   ACTIVE    PARENT
main       2      2       2  just now  just now  -
sub-1      2      2       3  just now  just now  main
",
    );
    // A fork never overwrites a session unless asked to.
    env.run("fsview-session", &["fork", "--from", "main", "--sid", "sub-1"])
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-session: session \"sub-1\" already exists in {}; pass --replace to overwrite it, or fork into another --sid\n",
            env.session.display()
        ));
    env.run(
        "fsview-session",
        &["fork", "--from", "main", "--sid", "sub-1", "--replace"],
    )
    .expect(
        0,
        "forked \"main\" into \"sub-1\": 2 files, 2 views, 2 context parts, 1 instruction file\n",
    );
    env.run(
        "fsview-session",
        &["fork", "--from", "nobody", "--sid", "x"],
    )
    .expect(2, "")
    .stderr_is(&format!(
        "fsview-session: no session \"nobody\" in {}; nearest: \"sub-1\", \"main\" (see `fsview-session list`)\n",
        env.session.display()
    ));
    // The fork is independent: forgetting in it leaves the parent alone.
    env.run("ctx-invalidate", &["--sid", "sub-1", "--forget"]);
    env.run("fsview-check-edit", &["--sid", "main", "a.rs"])
        .expect(0, "a.rs: ok\n");
}

#[test]
fn drop_deletes_a_session_and_everything_of_it() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.run("fsview-read", &["--sid", "one", "a.rs"]);
    env.run("fsview-read", &["--sid", "two", "a.rs"]);
    env.run("fsview-session", &["drop", "--sid", "one"]).expect(
        0,
        "dropped \"one\": 1 file, 1 view, 0 context parts, 0 instruction files, 1 event\n",
    );
    let list = env.run("fsview-session", &["list", "--json"]).json();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["sid"], "two");
    env.run("fsview-check-edit", &["--sid", "one", "a.rs"])
        .expect(
            1,
            "a.rs: not_read: File has not been read yet. Read it first before writing to it.\n",
        );
    env.run("fsview-session", &["drop", "--sid", "three", "--json"])
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-session: no session \"three\" in {}; nearest: \"two\" (see `fsview-session list`)\n",
            env.session.display()
        ));
    // Deleting needs the session named: not the default by omission.
    let before = std::fs::read(&env.session).unwrap();
    let mut c = env.cmd(crate::harness::bin("fsview-session"));
    c.arg("drop").env_remove("FSVIEW_SID");
    crate::harness::output(c, None).expect(2, "").stderr_is(
        "fsview-session: drop deletes a session and everything of it: name it with --sid ID (--sid default for the default session); fsview-session list shows them\n",
    );
    assert_eq!(std::fs::read(&env.session).unwrap(), before);
    let mut c = env.cmd(crate::harness::bin("fsview-session"));
    c.args(["drop", "--quiet"]).env("FSVIEW_SID", "two");
    crate::harness::output(c, None).expect(
        0,
        "dropped \"two\": 1 file, 1 view, 0 context parts, 0 instruction files, 1 event\n",
    );
}

#[test]
fn export_and_import_round_trip_into_another_session_file() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.write("b.txt", "one\ntwo\nthree\n");
    env.write("CLAUDE.md", "<!-- hidden -->\nBe brief.\n");
    env.run("fsview-read", &["--sid", "agent-7", "a.rs"]);
    env.run(
        "fsview-read",
        &["--sid", "agent-7", "--offset", "2", "--limit", "1", "b.txt"],
    );
    assert_eq!(ctx_build(&env, &["--sid", "agent-7"]).code, 0);
    env.run("ctx-invalidate", &["--sid", "agent-7", "--injection", "v2"]);
    // The injection cleared the context, and CLAUDE.md's view with it:
    // built again, it is there again.
    assert_eq!(ctx_build(&env, &["--sid", "agent-7"]).code, 0);
    let export = env.run("fsview-session", &["export", "--sid", "agent-7"]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    let doc: Value = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(doc["fsview_export"], 3);
    assert_eq!(doc["sid"], "agent-7");
    // Not in a git work tree: every path is absolute, nothing is mapped.
    assert_eq!(doc["root"], Value::Null);
    assert_eq!(doc["files"][0]["path"], json!(env.path("a.rs")));
    assert_eq!(doc["files"].as_array().unwrap().len(), 3);
    assert_eq!(doc["texts"].as_object().unwrap().len(), 3);
    assert_eq!(doc["context"][0]["part"], "injection");

    std::fs::create_dir(env.root().join("elsewhere")).unwrap();
    let other = env.root().join("elsewhere/other.db");
    let import = |args: &[&str]| {
        run_at(
            &env,
            &other,
            "fsview-session",
            args,
            Some(export.stdout.as_bytes()),
        )
    };
    import(&["import"]).expect(
        0,
        "imported \"agent-7\": 3 files, 3 views, 3 context parts, 1 instruction file, 3 new texts, 5 events\n",
    );
    // Same views, same verdicts, as in the file it came from.
    let show = |session: &Path| {
        run_at(
            &env,
            session,
            "fsview-session",
            &["show", "--sid", "agent-7"],
            None,
        )
    };
    let here = show(&env.session);
    assert_eq!(here.code, 0);
    show(&other).expect(0, &here.stdout);
    let check = |session: &Path| {
        let args = ["--sid", "agent-7", "a.rs", "b.txt", "CLAUDE.md"];
        let edit = run_at(&env, session, "fsview-check-edit", &args, None);
        let write = run_at(
            &env,
            session,
            "fsview-check-edit",
            &["--sid", "agent-7", "--write", "b.txt"],
            None,
        );
        (edit.code, edit.stdout, write.code, write.stdout)
    };
    let verdicts = check(&env.session);
    assert_eq!(verdicts.0, 1);
    assert_eq!(check(&other), verdicts);
    // The injection came along.
    let memo = run_at(
        &env,
        &other,
        "fsview-session",
        &["export", "--sid", "agent-7"],
        None,
    );
    let again: Value = serde_json::from_str(&memo.stdout).unwrap();
    assert_eq!(again["context"], doc["context"]);

    // Importing over an existing session is refused, unless asked.
    import(&["import"]).expect(2, "").stderr_is(&format!(
        "fsview-session: session \"agent-7\" already exists in {}; pass --replace to overwrite it, or --sid NEW to import it under another id\n",
        other.display()
    ));
    import(&["import", "--replace", "--json"]);
    let r = import(&["import", "--sid", "copy", "--json"]);
    let j = &r.json()[0];
    assert_eq!(
        (
            &j["type"],
            &j["sid"],
            &j["from_sid"],
            &j["files"],
            &j["texts"]
        ),
        (
            &json!("import"),
            &json!("copy"),
            &json!("agent-7"),
            &json!(3),
            &json!(0)
        )
    );
    // FSVIEW_SID does not rename an import; only --sid does.
    let mut c = env.cmd(harness::bin("fsview-session"));
    c.env("FSVIEW_SESSION", &other)
        .env("FSVIEW_SID", "from-env")
        .args(["import", "--replace"]);
    harness::output(c, Some(export.stdout.as_bytes())).expect(
        0,
        "imported \"agent-7\": 3 files, 3 views, 3 context parts, 1 instruction file, 0 new texts, 5 events\n",
    );
}

#[test]
fn a_malformed_export_imports_nothing() {
    let env = Env::new();
    let bad: [(&[u8], &str); 8] = [
        (b"not json", "not JSON (expected ident at line 1 column 2)"),
        (
            b"{\"sid\": \"x\"}",
            "no \"fsview_export\" version (1 to 3) in it",
        ),
        (
            b"{\"fsview_export\": 1, \"sid\": \"x\", \"parent\": null, \"created_ns\": 1, \"files\": [], \"texts\": {\"00\": \"\"}, \"context\": [], \"nested\": [], \"events\": []}",
            "texts[\"00\"]: \"00\" is not a SHA-256 in hex",
        ),
        (
            b"{\"fsview_export\": 1, \"sid\": \"x\", \"parent\": null, \"created_ns\": 1, \"files\": [{\"path\": \"rel\", \"fingerprint\": {\"dev\": 1, \"ino\": 1, \"btime_ns\": null, \"ftype\": 0, \"size\": 1, \"mtime_ns\": 1, \"ctime_ns\": 1, \"taken_ns\": 1, \"sha256\": null}, \"viewed_ns\": 1, \"views\": []}], \"texts\": {}, \"context\": [], \"nested\": [], \"events\": []}",
            "files[0].path: rel is not an absolute path",
        ),
        // Version 2 names files relative to the work tree, but never
        // outside it.
        (
            b"{\"fsview_export\": 2, \"sid\": \"x\", \"parent\": null, \"created_ns\": 1, \"files\": [{\"path\": \"../up\", \"fingerprint\": {\"dev\": 1, \"ino\": 1, \"btime_ns\": null, \"ftype\": 0, \"size\": 1, \"mtime_ns\": 1, \"ctime_ns\": 1, \"taken_ns\": 1, \"sha256\": null}, \"viewed_ns\": 1, \"views\": [], \"told\": null}], \"texts\": {}, \"context\": [], \"nested\": [], \"events\": []}",
            "files[0].path: ../up is not a plain path below the work tree",
        ),
        (
            b"{\"fsview_export\": 2, \"sid\": \"x\", \"parent\": null, \"created_ns\": 1, \"files\": [{\"path\": \"/a\", \"fingerprint\": {\"dev\": 1, \"ino\": 1, \"btime_ns\": null, \"ftype\": 0, \"size\": 1, \"mtime_ns\": 1, \"ctime_ns\": 1, \"taken_ns\": 1, \"sha256\": null}, \"viewed_ns\": 1, \"views\": [], \"told\": {\"change\": \"moved\", \"fingerprint\": null, \"text_sha256\": null, \"told_ns\": 1}}], \"texts\": {}, \"context\": [], \"nested\": [], \"events\": []}",
            "files[0].told.change: \"moved\" is not a change",
        ),
        // A view's lines are lines of the file.
        (
            b"{\"fsview_export\": 2, \"sid\": \"x\", \"parent\": null, \"created_ns\": 1, \"files\": [{\"path\": \"/a\", \"fingerprint\": {\"dev\": 1, \"ino\": 1, \"btime_ns\": null, \"ftype\": 0, \"size\": 1, \"mtime_ns\": 1, \"ctime_ns\": 1, \"taken_ns\": 1, \"sha256\": null}, \"viewed_ns\": 1, \"views\": [{\"kind\": \"range\", \"source\": \"read\", \"offset\": 0, \"lines\": 5, \"total_lines\": 100, \"shown_sha256\": \"0000000000000000000000000000000000000000000000000000000000000000\", \"text_sha256\": null, \"viewed_ns\": 1, \"origin\": null, \"released\": null, \"released_ns\": null}], \"told\": null}], \"texts\": {}, \"context\": [], \"nested\": [], \"events\": []}",
            "files[0].views[0].offset: 0 is not a line number (lines count from 1)",
        ),
        (
            b"{\"fsview_export\": 2, \"sid\": \"x\", \"parent\": null, \"created_ns\": 1, \"files\": [{\"path\": \"/a\", \"fingerprint\": {\"dev\": 1, \"ino\": 1, \"btime_ns\": null, \"ftype\": 0, \"size\": 1, \"mtime_ns\": 1, \"ctime_ns\": 1, \"taken_ns\": 1, \"sha256\": null}, \"viewed_ns\": 1, \"views\": [{\"kind\": \"range\", \"source\": \"read\", \"offset\": 10, \"lines\": 9223372036854775807, \"total_lines\": 100, \"shown_sha256\": \"0000000000000000000000000000000000000000000000000000000000000000\", \"text_sha256\": null, \"viewed_ns\": 1, \"origin\": null, \"released\": null, \"released_ns\": null}], \"told\": null}], \"texts\": {}, \"context\": [], \"nested\": [], \"events\": []}",
            "files[0].views[0].lines: 9223372036854775807 lines from line 10 run past the file's 100",
        ),
    ];
    for (doc, why) in bad {
        env.run_stdin("fsview-session", &["import"], doc)
            .expect(2, "")
            .stderr_is(&format!(
                "fsview-session: standard input is not a valid fsview export: {why}; import what `fsview-session export` wrote\n"
            ));
        assert!(
            !env.session.exists(),
            "a bad import created the session file"
        );
    }
    env.run_stdin("fsview-session", &["import"], b"{\"fsview_export\": 4}")
        .expect(2, "")
        .stderr_is("fsview-session: standard input is an fsview export of version 4, newer than this fsview reads (3); upgrade fsview\n");
    // A relative path needs a work tree to land in.
    env.run_stdin(
        "fsview-session",
        &["import"],
        b"{\"fsview_export\": 2, \"sid\": \"x\", \"parent\": null, \"created_ns\": 1, \"files\": [], \"texts\": {}, \"context\": [], \"nested\": [{\"path\": \"CLAUDE.md\"}], \"events\": []}",
    )
    .expect(2, "")
    .stderr_is("fsview-session: the export names files relative to the top of its git work tree, and the current directory is in none; run the import inside a clone of the repository, or pass --root DIR\n");
    assert!(
        !env.session.exists(),
        "a bad import created the session file"
    );
    // A bad document against an existing file leaves it as it was.
    env.write("a.rs", "x\n");
    env.run("fsview-read", &["a.rs"]);
    let before = env.run("fsview-session", &["list", "--json"]).stdout;
    env.run_stdin(
        "fsview-session",
        &["import", "--replace", "--sid", "default"],
        b"[]",
    )
    .expect(2, "");
    assert_eq!(
        env.run("fsview-session", &["list", "--json"]).stdout,
        before
    );
}

#[test]
fn gc_frees_texts_no_view_refers_to() {
    let env = Env::new();
    env.write("a.rs", "hello\n");
    env.run("fsview-read", &["a.rs"]);
    env.run(
        "fsview-session",
        &["fork", "--from", "default", "--sid", "sub"],
    );
    // The log keeps its pages between calls (up to 256 KiB); gc gives
    // them back, and says so.
    let wal = || {
        std::fs::metadata(env.session.with_extension("db-wal"))
            .unwrap()
            .len()
    };
    let gc = |freed: &str| {
        let before = wal();
        let line = match before {
            0 => format!("{freed}\n"),
            n => format!("{freed}; truncated the write-ahead log ({n} bytes)\n"),
        };
        env.run("fsview-session", &["gc"]).expect(0, &line);
        assert_eq!(wal(), 0);
        before
    };
    assert!(gc("freed 0 kept texts (0 bytes)") > 0);
    // Nothing written since: nothing to give back.
    assert_eq!(gc("freed 0 kept texts (0 bytes)"), 0);
    env.run("fsview-session", &["drop", "--sid", "default"]);
    // The fork still refers to the text: it stays.
    gc("freed 0 kept texts (0 bytes)");
    env.run("fsview-session", &["drop", "--sid", "sub"]);
    gc("freed 1 kept text (6 bytes)");
    let j = env.run("fsview-session", &["gc", "--json"]).json();
    assert_eq!(
        j[0],
        json!({"v": 1, "type": "gc", "texts": 0, "bytes": 0, "wal_before": 0, "wal_after": 0, "busy": false})
    );
    let conn = rusqlite::Connection::open(&env.session).unwrap();
    let kept: i64 = conn
        .query_row("SELECT value FROM meta WHERE key='text_bytes'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(kept, 0);
}

#[test]
fn every_binary_appends_to_the_log() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.write("CLAUDE.md", "Be brief.\n");
    env.run("fsview-read", &["a.rs"]);
    env.run("fsview-read", &["a.rs"]);
    env.write("a.rs", "fn a() { 1 }\n");
    env.run("fsview-check-edit", &["--write", "a.rs"])
        .expect(1, &format!("a.rs: modified (content): {MODIFIED}\n"));
    env.run("fsview-check-edit", &["--changed"]);
    env.run("fsview-read", &["--written", "a.rs"]);
    env.run_stdin("fsview-read", &["--processed", "CLAUDE.md"], b"Be.\n");
    env.run("fsview-check-edit", &["new.rs"]);
    assert_eq!(ctx_build(&env, &["--for", "a.rs"]).code, 0);
    env.run("ctx-invalidate", &["--injection", "x", "--reason", "test"]);
    env.run("ctx-invalidate", &["--injection", ""]);
    env.run("ctx-invalidate", &["--forget", "a.rs", "--reason", "stale"]);
    env.run("ctx-invalidate", &["--reset"]);
    env.run(
        "fsview-session",
        &["fork", "--from", "default", "--sid", "kid"],
    );
    let log = |sid: &str| -> Vec<String> {
        env.run("fsview-session", &["events", "--json", "--sid", sid])
            .json()
            .iter()
            .map(|e| {
                let s = |k: &str| e[k].as_str().unwrap_or("-").to_string();
                format!(
                    "{} {} {} {} {}",
                    s("tool"),
                    s("action"),
                    s("path"),
                    s("verdict"),
                    s("detail")
                )
            })
            .collect()
    };
    assert_eq!(
        log("default"),
        [
            "fsview-read read a.rs - full",
            "fsview-read read a.rs unchanged full",
            "fsview-check-edit check a.rs modified write, content",
            "fsview-check-edit changed - modified 1 file",
            "fsview-read written a.rs - full",
            "fsview-read processed CLAUDE.md - processed",
            "fsview-check-edit check new.rs new_file edit",
            "ctx-build build - miss for 1 path",
            "ctx-invalidate injection - set test",
            "ctx-invalidate injection - removed -",
            "ctx-invalidate forget - 1 file stale",
            "ctx-invalidate reset - all -",
        ]
    );
    assert_eq!(log("kid"), ["fsview-session fork - - from \"default\""]);
}

#[test]
fn no_session_file_means_no_sessions_and_none_is_created() {
    let env = Env::new();
    env.write("a.rs", "x\n");
    for cmd in [&["list"][..], &["list", "--json"]] {
        env.run("fsview-session", cmd)
            .expect(0, "")
            .stderr_is(&format!(
                "fsview-session: no session file at {}: no sessions\n",
                env.session.display()
            ));
    }
    // Showing a session needs the session: none is there.
    for cmd in [&["show"][..], &["events"]] {
        env.run("fsview-session", cmd)
            .expect(2, "")
            .stderr_is(&format!(
                "fsview-session: no session file at {}; nothing to show (check --session or FSVIEW_SESSION)\n",
                env.session.display()
            ));
    }
    env.run("fsview-session", &["gc"])
        .expect(0, "freed 0 kept texts (0 bytes)\n");
    env.run("fsview-session", &["drop", "--sid", "x"])
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-session: no session file at {}; nothing to drop (check --session or FSVIEW_SESSION)\n",
            env.session.display()
        ));
    // The edit gate logs its verdicts, but never creates a file to log in.
    env.run("fsview-check-edit", &["a.rs"]).expect(
        1,
        "a.rs: not_read: File has not been read yet. Read it first before writing to it.\n",
    );
    env.run("fsview-check-edit", &["--changed"]).expect(0, "");
    let help = env.run("fsview-session", &["--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("Examples:"));
    env.run("fsview-session", &["list", "--help"]);
    assert!(!env.session.exists());
    // A session without views: nothing to show, exit 0.
    env.run("fsview-read", &["--sid", "other", "a.rs"]);
    env.run("ctx-invalidate", &["--sid", "other", "--forget"]);
    env.run("fsview-session", &["show", "--sid", "other"])
        .expect(0, "")
        .stderr_is("fsview-session: session \"other\" has no views\n");
}

// A mistyped --sid is an error for every command that names one session,
// with the nearest ids the file holds, quoted as every message quotes ids.
#[test]
fn a_mistyped_sid_is_an_error_everywhere_with_the_nearest_ids() {
    let env = Env::new();
    env.write("a.rs", "x\n");
    for sid in ["agent-7", "agent-12", "default", "会話"] {
        env.run("fsview-read", &["--sid", sid, "a.rs"])
            .expect(0, "1\tx\n");
    }
    let before = std::fs::read(&env.session).unwrap();
    for cmd in ["show", "events", "drop", "export"] {
        env.run("fsview-session", &[cmd, "--sid", "agnt-7"])
            .expect(2, "")
            .stderr_is(&format!(
                "fsview-session: no session \"agnt-7\" in {}; nearest: \"agent-7\", \"agent-12\", \"default\" (see `fsview-session list`)\n",
                env.session.display()
            ));
    }
    env.run("fsview-session", &["fork", "--from", "agnt-7", "--sid", "x"])
        .expect(2, "")
        .stderr_is(&format!(
            "fsview-session: no session \"agnt-7\" in {}; nearest: \"agent-7\", \"agent-12\", \"default\" (see `fsview-session list`)\n",
            env.session.display()
        ));
    assert_eq!(std::fs::read(&env.session).unwrap(), before);
    // A wide (CJK) id lines up in the table: two columns a character.
    env.run("fsview-session", &["list"]).expect(
        0,
        "\
SID       FILES  VIEWS  EVENTS  CREATED   ACTIVE    PARENT
agent-7       1      1       1  just now  just now  -
agent-12      1      1       1  just now  just now  -
default       1      1       1  just now  just now  -
会話          1      1       1  just now  just now  -
",
    );
}

// Issue 43: with no --sid and no session "default", show and events look
// into the conversation active last (its agents' activity counts as its
// own), among those that saw a file of this project, and say which; list
// says which they would pick; a --sid or FSVIEW_SID is never second-guessed.
#[test]
fn without_a_sid_the_latest_conversation_is_shown() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    env.write("b.rs", "fn b() {}\n");
    let elsewhere = env.root().join("elsewhere.txt");
    std::fs::write(&elsewhere, "x\n").unwrap();
    env.run("fsview-read", &["-q", "--sid", "conv-1", "a.rs"]);
    env.run("fsview-read", &["-q", "--sid", "conv-2", "b.rs"]);
    env.run(
        "fsview-read",
        &["-q", "--sid", "conv-1", "--agent", "w1", "b.rs"],
    );
    // Active last, but it saw no file of this directory.
    env.run(
        "fsview-read",
        &["-q", "--sid", "other-project", elsewhere.to_str().unwrap()],
    );
    let picked = "fsview-session: no session \"default\": showing the latest conversation, \"conv-1\" (active just now); --sid ID picks another\n";
    env.run("fsview-session", &["show"])
        .expect(
            0,
            "\
AGENT  PATH  KIND  STATE  HELD  WHEN      SOURCE  LINES
main   a.rs  full  fresh  yes   just now  read    1-1 of 1
w1     b.rs  full  fresh  yes   just now  read    1-1 of 1
",
        )
        .stderr_is(picked);
    let events = env.run("fsview-session", &["events", "--agent", "main"]);
    assert_eq!(events.stderr, picked);
    assert_eq!(events.stdout.lines().count(), 2, "{}", events.stdout);
    env.run("fsview-session", &["list", "--json"])
        .stderr_is("fsview-session: no session \"default\": show and events pick the latest conversation, \"conv-1\"; --sid ID picks another\n");
    env.run("fsview-session", &["list", "--ids"])
        .expect(0, "conv-1\nconv-1/w1\nconv-2\nother-project\n")
        .stderr_is("");
    // Named: as named, and an unknown one is still an error.
    env.run("fsview-session", &["show", "--sid", "conv-2"])
        .stderr_is("");
    let mut c = env.cmd(harness::bin("fsview-session"));
    c.env("FSVIEW_SID", "nope").arg("show");
    let r = harness::output(c, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    // Once there is a session "default", it is the one.
    env.run("fsview-read", &["-q", "b.rs"]);
    env.run("fsview-session", &["show"])
        .expect(
            0,
            "\
PATH  KIND  STATE  HELD  WHEN      SOURCE  LINES
b.rs  full  fresh  yes   just now  read    1-1 of 1
",
        )
        .stderr_is("");
}

// Issue 43: show FILE... and --text: what the agent was shown of each
// file, numbered as it saw it (a range with its own line numbers), a
// written file as written, a text not kept said; a hard link is the same
// file; --json carries the text.
#[test]
fn show_text_prints_what_the_agent_was_shown() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    env.write("log.txt", "1\n2\n3\n4\n5\n");
    env.run(
        "fsview-read",
        &["-q", "--offset", "2", "--limit", "2", "a.rs"],
    );
    env.run("fsview-read", &["-q", "log.txt"]);
    env.write("w.rs", "fn w() {}\n");
    env.run("fsview-read", &["-q", "--written", "w.rs"]);
    std::fs::hard_link(env.path("log.txt"), env.path("link.txt")).unwrap();
    env.run(
        "fsview-session",
        &["show", "--text", "a.rs", "link.txt", "w.rs"],
    )
    .expect(
        0,
        "\
a.rs: range, lines 2-3 of 3, read just now; fresh
2\tfn b() {}
3\tfn c() {}

log.txt: full, lines 1-5 of 5, read just now; fresh
1\t1
2\t2
3\t3
4\t4
5\t5

w.rs: full, lines 1-1 of 1, write just now; fresh
fn w() {}

",
    )
    .stderr_is("");
    // A change since: the text is still what was shown, and the state says.
    env.write("a.rs", "changed\n");
    env.run("fsview-session", &["show", "--text", "a.rs"]).expect(
        0,
        "a.rs: range, lines 2-3 of 3, read just now; modified (content)\n2\tfn b() {}\n3\tfn c() {}\n\n",
    );
    let v = env
        .run("fsview-session", &["show", "--text", "--json", "a.rs"])
        .json();
    assert_eq!(
        (v.len(), v[0]["text"].as_str(), v[0]["offset"].as_u64()),
        (1, Some("fn b() {}\nfn c() {}\n"), Some(2))
    );
    // A name that is not in the session: exit 1, the others still shown.
    env.write("never.rs", "x\n");
    env.run("fsview-session", &["show", "w.rs", "never.rs"])
        .expect(
            1,
            "PATH  KIND  STATE  HELD  WHEN      SOURCE  LINES\nw.rs  full  fresh  yes   just now  write   1-1 of 1\n",
        )
        .stderr_is("fsview-session: never.rs: no view in session \"default\"\n");
}

// Issue 43: which session file the tools use here.
#[test]
fn path_prints_the_session_file_in_use() {
    let env = Env::new();
    env.run("fsview-session", &["path"])
        .expect(0, &format!("{}\n", env.session.display()))
        .stderr_is("fsview-session: it does not exist yet: the first call that records something creates it\n");
    assert!(!env.session.exists());
    env.write("a.rs", "x\n");
    env.run("fsview-read", &["-q", "a.rs"]);
    let v = env.run("fsview-session", &["path", "--json"]).json();
    assert_eq!(
        v,
        vec![
            json!({"v": 1, "type": "session_file", "path": env.session.to_str().unwrap(), "exists": true})
        ]
    );
    // Without FSVIEW_SESSION, in a git work tree: the git directory's.
    env.sh("git init -q").expect(0, "");
    let mut c = env.cmd(harness::bin("fsview-session"));
    c.env_remove("FSVIEW_SESSION").arg("path");
    let r = harness::output(c, None);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (
            0,
            format!("{}\n", env.path(".git/fsview/session.db").display()).as_str()
        )
    );
}

// `--sid S/A` is `--sid S --agent A`: the agent's session of conversation
// S, dropped with it; `--sid S/main` is S's main thread.
#[test]
fn a_sid_with_a_slash_names_an_agent_of_the_conversation() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    env.run("fsview-read", &["-q", "--sid", "F/w", "a.txt"])
        .expect(0, "1\ta\n");
    env.run("fsview-read", &["-q", "--sid", "F", "a.txt"])
        .expect(0, "1\ta\n");
    let r = env.run("fsview-session", &["list", "--json"]);
    let parents: Vec<(String, Option<String>)> = r
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["sid"].as_str().unwrap().to_string(),
                v["parent"].as_str().map(String::from),
            )
        })
        .collect();
    assert_eq!(
        parents,
        [
            ("F".to_string(), None),
            ("F/w".to_string(), Some("F".to_string()))
        ]
    );
    assert_eq!(env.run("fsview-session", &["drop", "--sid", "F"]).code, 0);
    env.run("fsview-check-edit", &["--sid", "F/w", "a.txt"])
        .expect(
            1,
            "a.txt: not_read: File has not been read yet. Read it first before writing to it.\n",
        );
    env.run("fsview-read", &["-q", "--sid", "D/main", "a.txt"])
        .expect(0, "1\ta\n");
    env.run("fsview-check-edit", &["--sid", "D", "a.txt"])
        .expect(0, "a.txt: ok\n");
}

// An export whose own session id is not a valid one names it, and how to
// import it anyway; no --sid was given to blame.
#[test]
fn an_export_with_an_invalid_session_id_says_so_and_how_to_import_it() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    assert_eq!(
        env.run("fsview-read", &["-q", "--sid", "S", "a.txt"]).code,
        0
    );
    let export = env.run("fsview-session", &["export", "--sid", "S"]);
    let mut doc: Value = serde_json::from_str(&export.stdout).unwrap();
    doc["sid"] = json!("bad\nid");
    let doc = doc.to_string();
    env.run_stdin("fsview-session", &["import"], doc.as_bytes())
        .expect(2, "")
        .stderr_is("fsview-session: the document's session id \"bad\\nid\" is not a valid one (1 to 200 printable characters); import it under another with --sid NEW\n");
    env.run_stdin("fsview-session", &["import", "--sid", "T"], doc.as_bytes()).expect(
        0,
        "imported \"T\" (exported as \"bad\\nid\"): 1 file, 1 view, 0 context parts, 0 instruction files, 0 new texts, 1 event\n",
    );
}
