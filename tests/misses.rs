//! The misses of issue 9, each reproduced: the gate said ok (or a re-read
//! said "unchanged") although the file was not what the agent was last
//! shown. Races are reproduced with a deterministic pause (debug builds stop
//! at a named point while `FSVIEW_TEST_PAUSE` asks them to), never by luck.

use std::path::Path;
use std::time::Duration;

use crate::harness::{bin, Env, Paused};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

fn modified(path: &str, change: &str) -> String {
    format!("{path}: modified ({change}): {MODIFIED}\n")
}

fn read_ok(env: &Env, args: &[&str]) {
    let mut a = vec!["-q"];
    a.extend_from_slice(args);
    let r = env.run("fsview-read", &a);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Let every timestamp written so far age past the racy window, so the next
/// view's stat is one the old rule trusted.
fn age() {
    std::thread::sleep(Duration::from_millis(2100));
}

/// Save `text` to `rel` as editors do: a new file renamed over the old one.
fn rename_save(env: &Env, rel: &str, text: &str) {
    let tmp = format!("{rel}.tmp");
    env.write(&tmp, text);
    std::fs::rename(env.path(&tmp), env.path(rel)).unwrap();
}

// Miss 1: a check found the same bytes under a new file object and went to
// store the new fingerprint; meanwhile the user wrote B and the agent read
// it. The stale refresh must not land on the newer view, or restoring A
// would pass although the agent last saw B.
#[test]
fn a_refresh_never_overwrites_a_newer_view() {
    let env = Env::new();
    env.write("f", "AAAA\n");
    read_ok(&env, &["f"]);
    rename_save(&env, "f", "AAAA\n");
    let check = Paused::start(&env, "refresh", "fsview-check-edit", &["f"]);
    env.write("f", "BBBB\n");
    read_ok(&env, &["f"]);
    // The paused check answers for what it saw: A, the same bytes.
    check.finish().expect(0, "f: ok\n");
    env.write("f", "AAAA\n");
    env.run("fsview-check-edit", &["f"])
        .expect(1, &modified("f", "content"));
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "f: modified (content)\n--- f (as viewed)\n+++ f (now)\n@@ -1 +1 @@\n-BBBB\n+AAAA\n",
    );
}

// Miss 1, across sessions: row ids are reused after a drop. A refresh
// computed for session one's record of `a` must not land on session two's
// record of `b` that took over the row, or session two could write `a`
// without ever reading it.
#[test]
fn a_refresh_never_lands_on_a_reused_row() {
    let env = Env::new();
    env.write("a", "aaaa\n");
    env.write("b", "bbbb\n");
    read_ok(&env, &["--sid", "one", "a"]);
    rename_save(&env, "a", "aaaa\n");
    let check = Paused::start(&env, "refresh", "fsview-check-edit", &["--sid", "one", "a"]);
    env.run("fsview-session", &["drop", "--sid", "one"]).expect(
        0,
        "dropped \"one\": 1 file, 1 view, 0 context parts, 0 instruction files, 1 event\n",
    );
    read_ok(&env, &["--sid", "two", "b"]);
    let ids: Vec<(String, i64)> = {
        let c = rusqlite::Connection::open(&env.session).unwrap();
        let mut s = c.prepare("SELECT sid, id FROM files").unwrap();
        s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(ids, [("two".to_string(), 1)], "the row was not reused");
    check.finish().expect(0, "a: ok\n");
    env.run("fsview-check-edit", &["--sid", "two", "--write", "a", "b"])
        .expect(1, &format!("a: not_read: {NOT_READ}\nb: ok\n"));
}

/// Map `path` shared and writable; the mapping lives until `unmap`.
fn map(path: &Path) -> (*mut u8, usize) {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let len = f.metadata().unwrap().len() as usize;
    // SAFETY: a fresh shared mapping of a file we opened read-write; it is
    // only written within `len` and unmapped by `unmap`.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    (p.cast(), len)
}

fn poke(map: (*mut u8, usize), at: usize, bytes: &[u8]) {
    assert!(at + bytes.len() <= map.1);
    // SAFETY: within the mapping, checked above.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.0.add(at), bytes.len()) };
}

fn unmap(map: (*mut u8, usize)) {
    // SAFETY: the mapping made by `map`, unmapped once.
    unsafe { libc::munmap(map.0.cast(), map.1) };
}

fn stat_of(path: &Path) -> (u64, i64, i64, i64, i64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    (
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

// Miss 2: a write through a shared mapping to a page already dirty leaves
// size, mtime and ctime as they were (on tmpfs for as long as the mapping
// lives). Files under 128 KiB are hashed on every check, so it is caught;
// a larger one is caught with the stat shortcut off, and only then: the
// limit SECURITY.md states.
#[test]
fn a_write_through_a_shared_mapping_is_caught_where_the_shortcut_is_off() {
    let env = Env::new();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let small = shm.path().join("small.txt");
    let large = shm.path().join("large.txt");
    std::fs::write(&small, "a".repeat(4095) + "\n").unwrap();
    std::fs::write(&large, ("b".repeat(1023) + "\n").repeat(256)).unwrap();
    let (ms, ml) = (map(&small), map(&large));
    // The first store faults the page in, dirty; the kernel stamps the file
    // then, and never again while the page stays dirty.
    poke(ms, 0, b"A");
    poke(ml, 0, b"B");
    age();
    let (s, l) = (small.to_str().unwrap(), large.to_str().unwrap());
    read_ok(&env, &["--cap", "1M", s, l]);
    let before = (stat_of(&small), stat_of(&large));
    poke(ms, 10, b"XYZ");
    poke(ml, 10, b"XYZ");
    assert_eq!((stat_of(&small), stat_of(&large)), before, "the stat moved");
    env.run("fsview-check-edit", &[s])
        .expect(1, &modified(s, "content"));
    env.run("fsview-check-edit", &[l])
        .expect(0, &format!("{l}: ok\n"));
    let mut c = env.cmd(bin("fsview-check-edit"));
    c.env("FSVIEW_STAT_SHORTCUT", "off").arg(l);
    crate::harness::output(c, None).expect(1, &modified(l, "content"));
    unmap(ms);
    unmap(ml);
}

// Miss 8: /proc/uptime has size 0 and timestamps that do not move while its
// text changes every hundredth of a second: never fresh by its stat.
#[test]
fn a_pseudo_file_is_never_fresh_by_its_stat() {
    let env = Env::new();
    // An inode the kernel made a while ago, as it is in a long session.
    env.sh("cat /proc/uptime > /dev/null").expect(0, "");
    age();
    read_ok(&env, &["/proc/uptime"]);
    std::thread::sleep(Duration::from_millis(50));
    env.run("fsview-check-edit", &["/proc/uptime"])
        .expect(1, &modified("/proc/uptime", "content"));
}

// Miss 7: a full read of a file over 32 MiB read every byte, so it carries
// their hash; a touch afterwards is then no change (the content decides)
// instead of failing closed on the stat.
#[test]
fn a_full_read_over_32_mib_carries_its_hash() {
    let env = Env::new();
    let body = ("z".repeat(99) + "\n").repeat(340_000);
    env.write("big.txt", &body);
    age();
    let j = env
        .run("fsview-read", &["--json", "--cap", "64M", "big.txt"])
        .json();
    assert_eq!(j[0]["kind"], "full");
    let sum = env.sh("sha256sum big.txt | cut -d' ' -f1");
    assert_eq!(j[0]["sha256"].as_str(), Some(sum.stdout.trim()));
    env.sh("touch big.txt").expect(0, "");
    env.run("fsview-check-edit", &["--write", "big.txt"])
        .expect(0, "big.txt: ok\n");
}

// Miss 10: an offset past what the session file holds (u64::MAX) wrapped
// to -1 when stored; the next change then overflowed line arithmetic in
// `--changed` (a panic in debug builds). It is stored clamped and shown
// saturated.
#[test]
fn an_offset_past_any_line_then_a_change() {
    let env = Env::new();
    env.write("a", "1\n2\n");
    let j = env
        .run(
            "fsview-read",
            &["--json", "-o", "18446744073709551615", "a"],
        )
        .json();
    assert_eq!(
        (j[0]["kind"].as_str(), j[0]["lines"].as_u64()),
        (Some("range"), Some(0))
    );
    // Nothing was shown: no view, so no edit of it without a read.
    env.write("a", "1\n2\n3\n");
    env.run("fsview-check-edit", &["--changed"]).expect(0, "");
    env.run("fsview-check-edit", &["a"]).expect(
        1,
        "a: not_read: File has not been read yet. Read it first before writing to it.\n",
    );
    let stored: i64 = rusqlite::Connection::open(&env.session)
        .unwrap()
        .query_row("SELECT count(*) FROM views", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, 0);
}

// Miss 6: views copied by `fork` or `import` were never shown to the new
// conversation, so `--stub` must not tell it to "refer to the earlier
// read": it gets the text, and the stub only after its own read.
#[test]
fn stub_only_for_text_this_conversation_was_shown() {
    let env = Env::new();
    env.write("a", "x\n");
    read_ok(&env, &["--sid", "parent", "a"]);
    env.run(
        "fsview-session",
        &["fork", "--from", "parent", "--sid", "child"],
    )
    .expect(
        0,
        "forked \"parent\" into \"child\": 1 file, 1 view, 0 context parts, 0 instruction files\n",
    );
    env.run("fsview-read", &["--sid", "child", "--stub", "a"])
        .expect(0, "1\tx\n");
    let stub = env.run("fsview-read", &["--sid", "child", "--stub", "a"]);
    assert_eq!(stub.code, 0);
    assert!(
        stub.stdout.starts_with("File unchanged since last read."),
        "{}",
        stub.stdout
    );
    let export = env.run("fsview-session", &["export", "--sid", "parent"]);
    assert_eq!(export.code, 0, "{}", export.stderr);
    let r = env.run_stdin(
        "fsview-session",
        &["import", "--sid", "imported"],
        export.stdout.as_bytes(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = env
        .run(
            "fsview-read",
            &["--sid", "imported", "--stub", "--json", "a"],
        )
        .json();
    assert_eq!(
        (j[0]["unchanged"].as_bool(), j[0]["content"].as_str()),
        (Some(false), Some("1\tx\n"))
    );
}

// Miss 5: ctx-build shows instruction files trimmed (as Claude Code does):
// leading blank lines, the first line's indentation and trailing spaces
// never reach the agent, so such a file is a `processed` view, and a
// whole-file write needs a read. A file whose only difference is its final
// line ending (which no rendering of lines shows) stays `full`.
#[test]
fn ctx_build_records_trimmed_text_as_processed() {
    let env = Env::new();
    for d in ["claude", "managed"] {
        std::fs::create_dir_all(env.root().join(d)).unwrap();
    }
    env.write("CLAUDE.md", "\n\n    indented code block\nrule   \n");
    env.write("CLAUDE.local.md", "# Mine\n\nBe brief.\n");
    let mut c = env.cmd(bin("ctx-build"));
    c.args(["--json"])
        .env("CLAUDE_CONFIG_DIR", env.root().join("claude"))
        .env("FSVIEW_MANAGED_DIR", env.root().join("managed"))
        .env("GIT_CEILING_DIRECTORIES", env.root())
        .env("SOURCE_DATE_EPOCH", "1700000000");
    let r = crate::harness::output(c, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = &r.json()[0];
    let kinds: Vec<(String, String)> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let p = f["path"].as_str().unwrap();
            let name = Path::new(p).file_name().unwrap().to_str().unwrap();
            (name.to_string(), f["kind"].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("CLAUDE.md".to_string(), "processed".to_string()),
            ("CLAUDE.local.md".to_string(), "full".to_string())
        ]
    );
    env.run("fsview-check-edit", &["--write", "CLAUDE.md", "CLAUDE.local.md"])
        .expect(1, "CLAUDE.md: processed_view: File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.\nCLAUDE.local.md: ok\n");
}

// A setting that is neither on nor off is one clear error, before the
// session file is touched.
#[test]
fn a_bad_stat_shortcut_setting_is_one_clear_error() {
    let env = Env::new();
    env.write("a", "a\n");
    let mut c = env.cmd(bin("fsview-check-edit"));
    c.env("FSVIEW_STAT_SHORTCUT", "sometimes").arg("a");
    crate::harness::output(c, None).expect(2, "").stderr_is(
        "fsview-check-edit: FSVIEW_STAT_SHORTCUT=\"sometimes\" is not a setting; use on (the default) or off (hash on every check)\n",
    );
    assert!(!env.session.exists());
}
