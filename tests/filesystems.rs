//! Freshness on real filesystems other than the test directory's, each
//! mounted for one test in a private mount namespace (`unshare -m`, as
//! root): an overlayfs (a dev container's image layer), a FUSE filesystem
//! that behaves as a network filesystem's client (sshfs, NFS, SMB), and an
//! ext4 with whole-second timestamps whose clock disagrees with fsview's.

use crate::harness::{can_run, output, tool, Env, Run};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

/// Run `script` with bash in a private mount namespace, in the work tree,
/// with the fsview binaries and the system tools (`mkfs.ext4`) on PATH.
/// (No pipefail: `yes | head` is how the scripts write files.)
fn in_namespace(env: &Env, script: &str) -> Run {
    let mut c = env.cmd("unshare");
    c.args(["-m", "--propagation", "private", "bash", "-c"])
        .arg(format!("export PATH=\"$PATH:/usr/sbin:/sbin\"\n{script}"));
    output(c, None)
}

// The content decides: `chmod` or `touch` of a file in an overlayfs image
// layer copies it up to the upper layer (a new birth time, on some setups a
// new inode); the bytes are the same, so it is fresh, not `replaced`.
#[test]
fn overlayfs_copy_up_is_no_change() {
    let env = Env::new();
    let script = r#"
        mkdir -p ov/lower ov/upper ov/work ov/m
        printf 'base image text\n' > ov/lower/a.txt
        printf 'other layer text\n' > ov/lower/b.txt
        mount -t overlay overlay -o lowerdir=ov/lower,upperdir=ov/upper,workdir=ov/work ov/m || exit 1
        fsview-read -q ov/m/a.txt ov/m/b.txt > /dev/null
        btime() { stat -c %w "$1"; }
        a0=$(btime ov/m/a.txt)
        chmod 600 ov/m/a.txt
        touch ov/m/b.txt
        [ -e ov/upper/a.txt ] && [ -e ov/upper/b.txt ] && echo "copied up"
        [ "$a0" != "$(btime ov/m/a.txt)" ] && echo "new birth time"
        fsview-check-edit --write ov/m/a.txt ov/m/b.txt; echo "rc=$?"
        printf 'changed\n' > ov/m/b.txt
        fsview-check-edit ov/m/b.txt; echo "rc=$?"
        umount ov/m
    "#;
    in_namespace(&env, script).expect(
        0,
        &format!(
            "copied up\nnew birth time\nov/m/a.txt: ok\nov/m/b.txt: ok\nrc=0\nov/m/b.txt: modified (content): {MODIFIED}\nrc=1\n"
        ),
    );
}

// Miss 3: on a network filesystem a change made by the server (or another
// client) keeps the whole stat the client shows: sshfs lets `touch -d` set
// the ctime with the mtime, and caches attributes for 20 s. The FUSE server
// here reports exactly that; the stat shortcut is never taken on FUSE, NFS,
// SMB or 9p, so the file is hashed and the change caught.
#[test]
fn a_change_behind_a_network_filesystems_cached_stat_is_caught() {
    if !can_run(tool("python3", "python3")) {
        return;
    }
    let env = Env::new();
    let server = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/fuse_one_file.py"
    );
    let script = format!(
        r#"
        mkdir -p net/m
        yes aaaaaaa | head -c 262144 > net/backing
        python3 {server} net/m net/backing 1600000000123456789 &
        for i in $(seq 200); do [ -e net/m/f ] && break; sleep 0.05; done
        stat -f -c %t net/m/f
        fsview-read -q --cap 1M net/m/f > /dev/null; echo "read rc=$?"
        fsview-check-edit net/m/f
        s0=$(stat -c '%s %Y.%y %Z.%z %i' net/m/f)
        yes bbbbbbb | head -c 262144 > net/backing.new && mv net/backing.new net/backing
        [ "$s0" = "$(stat -c '%s %Y.%y %Z.%z %i' net/m/f)" ] && echo "same stat"
        fsview-check-edit net/m/f; echo "rc=$?"
        umount net/m
        wait
    "#
    );
    in_namespace(&env, &script).expect(
        0,
        &format!(
            "65735546\nread rc=0\nnet/m/f: ok\nsame stat\nnet/m/f: modified (content): {MODIFIED}\nrc=1\n"
        ),
    );
}

// Miss 4: a filesystem with whole-second timestamps (ext4 with 128-byte
// inodes) and a clock that stamps files ten seconds behind fsview's (a
// shim moves fsview's clock ahead instead). A same-size rewrite in the same
// second keeps the whole stat, and the view looked ten seconds old to the
// racy window; a whole-second ctime now means "hash", whatever the clocks
// say.
#[test]
fn a_same_second_rewrite_on_coarse_timestamps_with_a_lagging_clock_is_caught() {
    if !can_run(tool("mkfs.ext4", "e2fsprogs")) {
        return;
    }
    let env = Env::new();
    let shim = env.root().join("clock_ahead.so");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/clock_ahead.c");
    let mut cc = env.cmd("cc");
    cc.args(["-shared", "-fPIC", "-o"])
        .arg(&shim)
        .arg(src)
        .arg("-ldl");
    let built = output(cc, None);
    assert_eq!(built.code, 0, "{}", built.stderr);
    let script = format!(
        r#"
        truncate -s 8M coarse.img
        mkfs.ext4 -q -I 128 -F coarse.img > /dev/null 2>&1
        mkdir -p c && mount -o loop coarse.img c || exit 1
        export CLOCK_AHEAD_SECS=10
        ahead=$(( $(LD_PRELOAD={shim} date +%s) - $(date +%s) ))
        [ "$ahead" -ge 9 ] && echo "fsview's clock is ahead"
        for try in 1 2 3 4 5 6 7 8; do
            yes aaaaaaa | head -c 262144 > c/f
            s0=$(stat -c '%s %Y.%y %Z.%z' c/f)
            LD_PRELOAD={shim} fsview-read -q --cap 1M c/f > /dev/null
            yes bbbbbbb | head -c 262144 > c/f
            [ "$s0" = "$(stat -c '%s %Y.%y %Z.%z' c/f)" ] && break
        done
        [ "$s0" = "$(stat -c '%s %Y.%y %Z.%z' c/f)" ] && echo "same stat"
        case $(stat -c %z c/f) in *.000000000*) echo "whole seconds";; esac
        LD_PRELOAD={shim} fsview-check-edit c/f; echo "rc=$?"
        umount c
    "#,
        shim = shim.display()
    );
    in_namespace(&env, &script).expect(
        0,
        &format!(
            "fsview's clock is ahead\nsame stat\nwhole seconds\nc/f: modified (content): {MODIFIED}\nrc=1\n"
        ),
    );
}
