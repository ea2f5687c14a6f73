//! Issue 22: no one's change is lost by fsview-edit's and fsview-write's own
//! write. Each fault of the hunt, reproduced deterministically: the writer
//! is paused at the system call in question (debug builds stop at a named
//! point while `FSVIEW_TEST_PAUSE` asks them to: `lease` just after the
//! read lease is taken, `exchange` just before the swap, `undo` just
//! before a swap is undone, `in-place` just before a write in place), the
//! other program acts, and the writer goes on.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::process::{Command, Stdio};

use crate::harness::{as_user, bin, output, Env, Paused, Run};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

fn read(env: &Env, path: &str) {
    let r = env.run("fsview-read", &["-q", path]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn body(env: &Env, path: &str) -> String {
    String::from_utf8(std::fs::read(env.path(path)).unwrap()).unwrap()
}

/// Every name in the work directory, sorted.
fn names(env: &Env) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(&env.work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Save `text` to `rel` as editors do: a new file renamed over the old one.
fn rename_save(env: &Env, rel: &str, text: &str) {
    let tmp = env.root().join("editor.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, env.path(rel)).unwrap();
}

fn edit(old: &str, new: &str) -> Vec<String> {
    ["f.txt", "--old", old, "--new", new]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn paused(env: &Env, points: &[&'static str], args: &[String]) -> Paused {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Paused::start_at(env, points, "fsview-edit", &args)
}

/// Set extended attribute `name` of `path` through the system call, as
/// setfattr does: the tests need no attr package. `Err` with the errno
/// where the filesystem refuses (no xattr support: EOPNOTSUPP).
fn set_xattr(path: &std::path::Path, name: &str, value: &[u8]) -> Result<(), std::io::Error> {
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let n = std::ffi::CString::new(name).unwrap();
    // SAFETY: valid NUL-terminated strings and a buffer of the length given.
    let rc = unsafe {
        libc::setxattr(
            p.as_ptr(),
            n.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Every extended attribute of `path` with its value, by name (the POSIX
/// ACL among them, as system.posix_acl_access), as getfattr -d -m - lists
/// them.
fn xattrs(path: &std::path::Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let p = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut names = vec![0u8; 65536];
    // SAFETY: the buffer is as long as the length given.
    let n = unsafe { libc::listxattr(p.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    assert!(n >= 0, "listxattr: {}", std::io::Error::last_os_error());
    names.truncate(n as usize);
    let mut all = std::collections::BTreeMap::new();
    for name in names.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let c = std::ffi::CString::new(name).unwrap();
        let mut value = vec![0u8; 65536];
        // SAFETY: as above.
        let len = unsafe {
            libc::getxattr(
                p.as_ptr(),
                c.as_ptr(),
                value.as_mut_ptr().cast(),
                value.len(),
            )
        };
        assert!(len >= 0, "getxattr: {}", std::io::Error::last_os_error());
        value.truncate(len as usize);
        all.insert(String::from_utf8_lossy(name).into_owned(), value);
    }
    all
}

/// A POSIX access ACL in the form the kernel keeps it in the
/// system.posix_acl_access attribute (what setfacl writes): version 2,
/// then (tag, permissions, id) entries, sorted by tag and id.
fn acl(entries: &[(u16, u16, u32)]) -> Vec<u8> {
    let mut v = 2u32.to_le_bytes().to_vec();
    for &(tag, perm, id) in entries {
        v.extend(tag.to_le_bytes());
        v.extend(perm.to_le_bytes());
        v.extend(id.to_le_bytes());
    }
    v
}

const ACL_USER_OBJ: u16 = 0x01;
const ACL_USER: u16 = 0x02;
const ACL_GROUP_OBJ: u16 = 0x04;
const ACL_MASK: u16 = 0x10;
const ACL_OTHER: u16 = 0x20;
const ACL_UNDEFINED_ID: u32 = u32::MAX;

/// Whether the test directory's filesystem keeps user extended attributes
/// and POSIX ACLs; where it does not, the test says it is skipped and why
/// (never a failure for want of what the machine cannot do; CI's does).
fn attributes_supported(env: &Env) -> bool {
    let probe = env.write("probe", "");
    let tried = set_xattr(&probe, "user.probe", b"1").and_then(|()| {
        set_xattr(
            &probe,
            "system.posix_acl_access",
            &acl(&[
                (ACL_USER_OBJ, 6, ACL_UNDEFINED_ID),
                (ACL_GROUP_OBJ, 4, ACL_UNDEFINED_ID),
                (ACL_OTHER, 4, ACL_UNDEFINED_ID),
            ]),
        )
    });
    std::fs::remove_file(&probe).unwrap();
    crate::harness::can_run(tried.err().map(|e| {
        format!(
            "a filesystem that keeps extended attributes and ACLs; {}'s does not ({e})",
            env.root().display()
        )
    }))
}

/// Run a bash script in a private mount namespace (as root), the binaries
/// on PATH.
fn in_mount_namespace(env: &Env, script: &str) -> Run {
    let mut c = env.cmd("unshare");
    c.args(["-m", "--propagation", "private", "bash", "-c", script]);
    output(c, None)
}

// Fault 1: a writer that already has the file open (a shell's `>>`, a
// logger) would go on writing into the displaced file. The read lease is
// refused while it has the file open: nothing is written, and the refusal
// names it. Once it is gone, the edit goes through.
#[test]
fn a_writer_that_holds_the_file_open_is_not_displaced() {
    let env = Env::new();
    env.write("f.txt", "one\n");
    read(&env, "f.txt");
    let log = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path("f.txt"))
        .unwrap();
    let mut writer = Command::new("sleep").arg("60").stdout(log).spawn().unwrap();
    let args = edit("one", "ONE");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.run("fsview-edit", &args).expect(1, "").stderr_is(&format!(
        "fsview-edit: f.txt: in_use: File is open for writing in another program (sleep, PID {}), which would go on writing to the old file if it were replaced. Wait until it closes the file, read it again, then change it.\n",
        writer.id()
    ));
    let json = env.run("fsview-edit", &[&["--json"], &args[..]].concat());
    assert_eq!(json.code, 1);
    let j = &json.json()[0];
    assert_eq!(
        (j["verdict"].as_str(), j["applied"].as_bool()),
        (Some("in_use"), Some(false))
    );
    assert_eq!(body(&env, "f.txt"), "one\n");
    writer.kill().unwrap();
    writer.wait().unwrap();
    env.run("fsview-edit", &args)
        .expect(0, "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-one\n+ONE\n");
    assert_eq!(names(&env), ["f.txt"]);
}

// Fault 1, the other way: a program opens the file for writing while the
// edit holds the lease. Its open is held back (a non-blocking one is told
// to wait), the swap is undone, and the file it opens is the one at the
// path.
#[test]
fn a_writer_that_opens_the_file_during_the_swap_wins() {
    let env = Env::new();
    env.write("f.txt", "one\n");
    read(&env, "f.txt");
    let p = paused(&env, &["exchange"], &edit("one", "ONE"));
    let e = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(env.path("f.txt"))
        .unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EWOULDBLOCK));
    p.finish().expect(1, "").stderr_is(
        "fsview-edit: f.txt: in_use: File is open for writing in another program, which would go on writing to the old file if it were replaced. Wait until it closes the file, read it again, then change it.\n",
    );
    assert_eq!(body(&env, "f.txt"), "one\n");
    assert_eq!(names(&env), ["f.txt"]);
}

// The same with a real shell appending (`>>`): its open waits for the
// lease (seen in the kernel's wait channel), the swap is undone, and its
// line lands in the file that is back at the path.
#[test]
fn a_shell_appending_during_the_swap_loses_nothing() {
    let env = Env::new();
    env.write("f.txt", "one\n");
    read(&env, "f.txt");
    let p = paused(&env, &["exchange"], &edit("one", "ONE"));
    let mut shell = env
        .cmd("sh")
        .args(["-c", "echo two >> f.txt"])
        .spawn()
        .unwrap();
    let wchan = format!("/proc/{}/wchan", shell.id());
    let start = std::time::Instant::now();
    while !std::fs::read_to_string(&wchan)
        .unwrap_or_default()
        .contains("break_lease")
    {
        assert!(
            start.elapsed().as_secs() < 30,
            "the shell's open never waited for the lease"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let r = p.finish();
    assert!(shell.wait().unwrap().success());
    r.expect(1, "");
    assert!(
        r.stderr
            .contains(": in_use: File is open for writing in another program"),
        "{}",
        r.stderr
    );
    assert_eq!(body(&env, "f.txt"), "one\ntwo\n");
    assert_eq!(names(&env), ["f.txt"]);
}

// Fault 2: an editor saved by rename just before the swap, and again while
// the swap was being undone. The undo hands back the second save: it is
// kept as a conflict copy beside the file, named in the message and the
// events, never deleted.
#[test]
fn a_save_during_the_undo_is_kept_as_a_conflict_copy() {
    let env = Env::new();
    env.write("f.txt", "old\n");
    read(&env, "f.txt");
    let mut p = paused(&env, &["exchange", "undo"], &edit("old", "new"));
    rename_save(&env, "f.txt", "editor 1\n");
    p.go_on_to("undo");
    rename_save(&env, "f.txt", "editor 2\n");
    let r = p.finish();
    let all = names(&env);
    assert_eq!(all.len(), 2, "{all:?}");
    let copy = &all[1];
    assert!(copy.starts_with("f.txt.fsview-conflict-"), "{all:?}");
    assert_eq!(body(&env, "f.txt"), "editor 1\n");
    assert_eq!(body(&env, copy), "editor 2\n");
    let at = env.path(copy);
    r.expect(1, "").stderr_is(&format!(
        "fsview-edit: f.txt: modified (replaced): {MODIFIED} Another program saved the file twice while it was being replaced: one version is in the file, the other was kept in {}; compare them.\n",
        at.display()
    ));
    let events = env.run("fsview-session", &["events", "--json"]).json();
    let last = events.last().unwrap();
    assert_eq!(
        (last["verdict"].as_str(), last["detail"].as_str()),
        (
            Some("modified"),
            Some(format!("replaced; conflict copy {}", at.display()).as_str())
        )
    );
}

// Fault 3: killed between the swap and its undo. The path holds the edit,
// and the editor's save is whole at the temporary name; the next edit of
// the file names it.
#[test]
fn a_write_killed_before_its_undo_leaves_the_other_version_named() {
    let env = Env::new();
    env.write("f.txt", "old\n");
    read(&env, "f.txt");
    let mut p = paused(&env, &["exchange", "undo"], &edit("old", "new"));
    rename_save(&env, "f.txt", "editor\n");
    p.go_on_to("undo");
    p.kill();
    let all = names(&env);
    assert_eq!(all.len(), 2, "{all:?}");
    let left = &all[0];
    assert!(
        left.starts_with(".f.txt.fsview-") && left.ends_with(".tmp"),
        "{all:?}"
    );
    assert_eq!(body(&env, left), "editor\n");
    assert_eq!(body(&env, "f.txt"), "new\n");
    read(&env, "f.txt");
    env.run("fsview-edit", &["f.txt", "--old", "new", "--new", "newer"])
        .expect(0, "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-new\n+newer\n")
        .stderr_is(&format!(
            "fsview-edit: {} was left by an fsview write of f.txt that did not finish: it holds the text that write was putting in place, or the version it had swapped out (maybe another program's); compare it with the file, then delete it\n",
            env.path(left).display()
        ));
    assert_eq!(body(&env, left), "editor\n");
}

// Fault 4: a chmod, chown or attribute set during the edit is kept, not
// reverted to what the file had when it was locked: one just before the
// metadata is read (at the lease), one after it was read, just before the
// swap.
#[test]
fn metadata_changed_during_the_edit_is_kept() {
    let env = Env::new();
    if !attributes_supported(&env) {
        return;
    }
    env.write("f.txt", "old\n");
    std::fs::set_permissions(env.path("f.txt"), std::fs::Permissions::from_mode(0o644)).unwrap();
    read(&env, "f.txt");
    let mut p = paused(&env, &["lease", "exchange"], &edit("old", "new"));
    std::fs::set_permissions(env.path("f.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    p.go_on_to("exchange");
    std::os::unix::fs::chown(env.path("f.txt"), Some(4321), Some(4322)).unwrap();
    set_xattr(&env.path("f.txt"), "user.origin", b"late").unwrap();
    p.finish()
        .expect(0, "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-old\n+new\n");
    let m = std::fs::metadata(env.path("f.txt")).unwrap();
    assert_eq!((m.mode() & 0o7777, m.uid(), m.gid()), (0o640, 4321, 4322));
    assert_eq!(
        xattrs(&env.path("f.txt"))
            .get("user.origin")
            .map(Vec::as_slice),
        Some(&b"late"[..])
    );
    assert_eq!(body(&env, "f.txt"), "new\n");
    assert_eq!(names(&env), ["f.txt"]);
}

// Fault 5: a POSIX ACL (group::r-- under mask::rw-, a named user) and
// extended attributes (user.*, trusted.*) stay as they were, as `cp -a`
// keeps them.
#[test]
fn acls_and_extended_attributes_are_kept() {
    let env = Env::new();
    if !attributes_supported(&env) {
        return;
    }
    let f = env.write("f.txt", "old\n");
    // setfacl -m u::rw-,g::r--,o::r--,u:4321:rw-,m::rw-: group::r-- under
    // a wider mask, so the mode's group bits (the mask) are not the group's.
    let the_acl = acl(&[
        (ACL_USER_OBJ, 6, ACL_UNDEFINED_ID),
        (ACL_USER, 6, 4321),
        (ACL_GROUP_OBJ, 4, ACL_UNDEFINED_ID),
        (ACL_MASK, 6, ACL_UNDEFINED_ID),
        (ACL_OTHER, 4, ACL_UNDEFINED_ID),
    ]);
    set_xattr(&f, "system.posix_acl_access", &the_acl).unwrap();
    set_xattr(&f, "user.origin", b"agent").unwrap();
    // trusted.* needs CAP_SYS_ADMIN: root only.
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        set_xattr(&f, "trusted.note", b"kept").unwrap();
    }
    let before = xattrs(&f);
    assert_eq!(
        before.get("system.posix_acl_access").map(Vec::as_slice),
        Some(&the_acl[..])
    );
    assert_eq!(before.contains_key("trusted.note"), root);
    let mode = std::fs::metadata(&f).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o664, "the mask is the mode's group bits");
    read(&env, "f.txt");
    env.run("fsview-edit", &["f.txt", "--old", "old", "--new", "new"])
        .expect(0, "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-old\n+new\n");
    assert_eq!(xattrs(&f), before);
    assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o777, mode);
    assert_eq!(body(&env, "f.txt"), "new\n");
}

// Fault 7: the user's own file, with a group the user is not in. A new
// file cannot get that group, so the file is written in place (it keeps
// its inode, owner and group), and a notice says so.
#[test]
fn an_own_file_with_a_foreign_group_is_written_in_place() {
    let env = Env::new();
    env.write("f.txt", "old\n");
    std::os::unix::fs::chown(&env.work, Some(4321), Some(4321)).unwrap();
    std::os::unix::fs::chown(env.path("f.txt"), Some(4321), Some(4322)).unwrap();
    std::fs::set_permissions(env.path("f.txt"), std::fs::Permissions::from_mode(0o664)).unwrap();
    let ino = std::fs::metadata(env.path("f.txt")).unwrap().ino();
    as_user(&env, &["fsview-read", "-q", "f.txt"]).expect(0, "1\told\n");
    as_user(&env, &["fsview-edit", "f.txt", "--old", "old", "--new", "new"])
        .expect(0, "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-old\n+new\n")
        .stderr_is("fsview-edit: f.txt was written in place, not replaced: a new file cannot keep its group (gid 4322) (operation not permitted)\n");
    let m = std::fs::metadata(env.path("f.txt")).unwrap();
    assert_eq!(
        (m.ino(), m.uid(), m.gid(), m.mode() & 0o7777),
        (ino, 4321, 4322, 0o664)
    );
    assert_eq!(body(&env, "f.txt"), "new\n");
    assert_eq!(names(&env), ["f.txt"]);
    // The next edit needs no read: the written text is the view.
    as_user(
        &env,
        &[
            "fsview-edit",
            "-q",
            "f.txt",
            "--old",
            "new",
            "--new",
            "newer",
        ],
    )
    .expect(0, "--- f.txt\n+++ f.txt\n@@ -1 +1 @@\n-new\n+newer\n");
}

// Fault 8: a single file bind-mounted (as containers do with config
// files) cannot be renamed over: it is written in place, as --dry-run
// promised, and the file it is mounted from holds the edit.
#[test]
fn a_bind_mounted_file_is_written_in_place() {
    let env = Env::new();
    let src = env.root().join("src.txt");
    let script = format!(
        r#"set -u
        printf 'host\n' > "{src}"
        printf 'x\n' > f.txt
        mount --bind "{src}" f.txt
        fsview-read -q f.txt > /dev/null
        fsview-edit --dry-run -q f.txt --old host --new container > /dev/null; echo "dry rc=$?"
        fsview-edit f.txt --old host --new container > /dev/null; echo "rc=$?"
        cat "{src}"
        ls -A"#,
        src = src.display()
    );
    let r = in_mount_namespace(&env, &script);
    r.expect(0, "dry rc=0\nrc=0\ncontainer\nf.txt\n");
    r.stderr_is("fsview-edit: f.txt was written in place, not replaced: it is a mount point\n");
}

// Fault 12: a file name of 90 Latin-1 bytes (not UTF-8): the temporary
// name is cut as bytes and fits.
#[test]
fn a_long_latin1_name_is_edited() {
    let env = Env::new();
    let name = std::ffi::OsStr::from_bytes(&[0xe9u8; 90]).to_os_string();
    let path = env.work.join(&name);
    std::fs::write(&path, "old\n").unwrap();
    let mut c = env.cmd(bin("fsview-read"));
    c.arg("-q").arg(&name);
    assert_eq!(output(c, None).code, 0);
    let mut c = env.cmd(bin("fsview-edit"));
    c.arg("-q")
        .arg(&name)
        .args(["--old", "old", "--new", "new"]);
    let r = output(c, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
    assert_eq!(std::fs::read_dir(&env.work).unwrap().count(), 1);
}

// Fault 17: an immutable or append-only file: the message names the
// attribute and what to do, for root too.
#[test]
fn immutable_and_append_only_files_name_the_attribute() {
    let env = Env::new();
    if !crate::harness::can_run(crate::harness::tool("chattr", "e2fsprogs")) {
        return;
    }
    env.write("f.txt", "old\n");
    read(&env, "f.txt");
    for (flag, words) in [
        ("i", "is immutable (chattr +i): no one may change it, root included; remove the attribute (chattr -i, as root) to change it"),
        ("a", "is append-only (chattr +a): it may only grow, and a change rewrites it; remove the attribute (chattr -a, as root) to change it"),
    ] {
        let set = env.sh(&format!("chattr +{flag} f.txt"));
        assert_eq!(
            set.code, 0,
            "this test needs a filesystem that takes chattr +{flag} (ext4, XFS, Btrfs, tmpfs): {}",
            set.stderr
        );
        let r = env.run("fsview-edit", &["f.txt", "--old", "old", "--new", "new"]);
        env.sh(&format!("chattr -{flag} f.txt")).expect(0, "");
        r.expect(2, "")
            .stderr_is(&format!("fsview-edit: f.txt {words}\n"));
    }
    assert_eq!(body(&env, "f.txt"), "old\n");
    assert_eq!(names(&env), ["f.txt"]);
}

// Fault 19: a newline in a path is escaped in the diff's headers, as in
// every other message.
#[test]
fn a_newline_in_a_path_is_escaped_in_the_diff() {
    let env = Env::new();
    env.write("a\nb.txt", "x\n");
    read(&env, "a\nb.txt");
    env.run("fsview-edit", &["a\nb.txt", "--old", "x", "--new", "y"])
        .expect(0, "--- a\\nb.txt\n+++ a\\nb.txt\n@@ -1 +1 @@\n-x\n+y\n");
}

// Fault 9: one request line with a byte that is not UTF-8 is refused
// alone; the lines around it are applied.
#[test]
fn a_request_line_that_is_not_utf8_is_refused_alone() {
    let env = Env::new();
    let mut input = b"{\"path\":\"a.txt\",\"old_string\":\"\",\"new_string\":\"a\\n\"}\n".to_vec();
    input.extend_from_slice(b"{\"path\":\"b.txt\",\"old_string\":\"\",\"new_string\":\"\xff\"}\n");
    input.extend_from_slice(b"{\"path\":\"c.txt\",\"old_string\":\"\",\"new_string\":\"c\\n\"}\n");
    let r = env.run_stdin("fsview-edit", &["-q", "--requests"], &input);
    assert_eq!(r.code, 2);
    r.stderr_is("fsview-edit: stdin line 2: byte 0xFF at column 47 is not UTF-8; send JSON Lines as UTF-8\n");
    assert_eq!(names(&env), ["a.txt", "c.txt"]);
}

// Fault 10: a UTF-16 file is text: fsview-read shows it (as UTF-8), and
// the edit keeps it UTF-16 with its byte-order mark.
#[test]
fn utf16_files_are_read_and_edited() {
    let env = Env::new();
    let utf16 = |s: &str| -> Vec<u8> {
        let mut v = vec![0xff, 0xfe];
        for u in s.encode_utf16() {
            v.extend_from_slice(&u.to_le_bytes());
        }
        v
    };
    env.write("w.txt", utf16("héllo\nworld\n"));
    env.run("fsview-read", &["w.txt"])
        .expect(0, "1\théllo\n2\tworld\n");
    env.run("fsview-read", &["-o", "2", "w.txt"])
        .expect(0, "2\tworld\n");
    env.run(
        "fsview-edit",
        &["-q", "w.txt", "--old", "world", "--new", "wörld"],
    )
    .expect(
        0,
        "--- w.txt\n+++ w.txt\n@@ -1,2 +1,2 @@\n héllo\n-world\n+wörld\n",
    );
    assert_eq!(
        std::fs::read(env.path("w.txt")).unwrap(),
        utf16("héllo\nwörld\n")
    );
    env.run("fsview-check-edit", &["w.txt"])
        .expect(0, "w.txt: ok\n");
    // A change by someone else is diffed as text.
    env.write("w.txt", utf16("héllo\nthere\n"));
    env.run("fsview-check-edit", &["--changed"]).expect(
        1,
        "w.txt: modified (content)\n--- w.txt (as viewed)\n+++ w.txt (now)\n@@ -1,2 +1,2 @@\n héllo\n-wörld\n+there\n",
    );
}

// Fault 11: a file over 32 MiB, read from its start just after it was
// written. Eight agents that read a new one all at once edit it at once,
// merging off (with it on, edits this far apart in the lines each saw all
// land: `edit_races`): one lands. The winner reads its own edit back at once and edits again:
// no refusal while the stat ages.
#[test]
fn a_large_file_just_written_can_be_edited() {
    let env = Env::new();
    let big: String = (0..1_900_000)
        .map(|i| format!("line {i:07} of 30\n"))
        .collect();
    assert!(big.len() > 33 << 20);
    env.write("big.txt", &big);
    for i in 1..=8 {
        let sid = format!("agent-{i}");
        let r = env.run("fsview-read", &["-q", "--sid", &sid, "big.txt"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let children: Vec<std::process::Child> = (1..=8)
        .map(|i| {
            env.cmd(bin("fsview-edit"))
                .args([
                    "-q",
                    "--on-change",
                    "refuse",
                    "--sid",
                    &format!("agent-{i}"),
                    "big.txt",
                    "--old",
                    &format!("line {:07} of", i * 1000),
                    "--new",
                    &format!("LINE {:07} by {i}", i * 1000),
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let codes: Vec<(i32, String)> = children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            (
                o.status.code().unwrap(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            )
        })
        .collect();
    let winners: Vec<usize> = (0..8).filter(|&i| codes[i].0 == 0).collect();
    assert_eq!(winners.len(), 1, "{codes:?}");
    for (code, err) in codes.iter().filter(|c| c.0 != 0) {
        assert_eq!(*code, 1, "{err}");
        assert!(err.contains(": modified ("), "{err}");
    }
    let w = winners[0] + 1;
    let sid = format!("agent-{w}");
    let r = env.run("fsview-read", &["-q", "--sid", &sid, "big.txt"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = env.run(
        "fsview-edit",
        &[
            "-q",
            "--sid",
            &sid,
            "big.txt",
            "--old",
            "line 0000007 of",
            "--new",
            "line seven of",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want = big
        .replace(
            &format!("line {:07} of", w * 1000),
            &format!("LINE {:07} by {w}", w * 1000),
        )
        .replace("line 0000007 of", "line seven of");
    assert!(body(&env, "big.txt") == want);
}
