//! Many processes, one session file: no lost record, no failed call.

use crate::harness::{bin_dir, Env};

// 8 processes, each reading and checking its own 100 files (and one shared
// file) against one session file, all at once.
#[test]
fn eight_processes_by_a_hundred_reads_and_checks() {
    let env = Env::new();
    for p in 0..8 {
        for i in 0..100 {
            env.write(&format!("p{p}/f{i}"), format!("process {p} file {i}\n"));
        }
    }
    env.write("shared", "shared\n");
    let script = format!(
        r#"
        export PATH="{bin}:$PATH"
        for p in 0 1 2 3 4 5 6 7; do
          (
            fail=0
            for i in $(seq 0 99); do
              fsview-read -q "p$p/f$i" shared > /dev/null || fail=$((fail+1))
              fsview-check-edit --write "p$p/f$i" > /dev/null || fail=$((fail+1))
            done
            echo "$p $fail"
          ) > "out.$p" 2> "err.$p" &
        done
        wait
        cat out.* | sort
        cat err.*
        "#,
        bin = bin_dir().display()
    );
    let r = env.sh(&script);
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stdout, "0 0\n1 0\n2 0\n3 0\n4 0\n5 0\n6 0\n7 0\n",
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr, "");
    let c = rusqlite::Connection::open(&env.session).unwrap();
    let files: i64 = c
        .query_row("SELECT count(*) FROM files", [], |r| r.get(0))
        .unwrap();
    let views: i64 = c
        .query_row("SELECT count(*) FROM views", [], |r| r.get(0))
        .unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!((files, views, ok.as_str()), (801, 801, "ok"));
}
