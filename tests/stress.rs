//! The stress script, small: 4 workers for 3 seconds on the debug build,
//! with random SIGKILLs. The full run is `scripts/stress`.

use crate::harness::{bin_dir, output, Env};

#[test]
fn killed_processes_leave_a_consistent_file_and_lose_no_record() {
    let env = Env::new();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/stress");
    let mut c = env.cmd("bash");
    c.arg(script)
        .args(["--workers", "4", "--seconds", "3", "--bin"])
        .arg(bin_dir())
        .env_remove("FSVIEW_SESSION");
    let r = output(c, None);
    assert_eq!(r.code, 0, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    let figures: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(figures.last(), Some(&"stress: ok"), "{}", r.stdout);
    assert!(r.stdout.contains(" missing: 0\n"), "{}", r.stdout);
    assert!(r.stdout.contains("integrity_check: ok\n"), "{}", r.stdout);
    assert!(r.stdout.contains("contention errors: 0\n"), "{}", r.stdout);
}

// Issue 13, small: many agents reading and checking on one file, nothing
// killed: every call succeeds and every read is recorded. The full run is
// `scripts/stress --workers 64 --ops read,check --no-kill`.
#[test]
fn many_agents_reading_and_checking_fail_no_call() {
    let env = Env::new();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/stress");
    let mut c = env.cmd("bash");
    c.arg(script)
        .args(["--workers", "8", "--seconds", "3", "--ops", "read,check"])
        .args(["--no-kill", "--bin"])
        .arg(bin_dir())
        .env_remove("FSVIEW_SESSION");
    let r = output(c, None);
    assert_eq!(r.code, 0, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .starts_with("8 workers, 3 s, ops read,check, no kills\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(" killed 0 (SIGKILLs sent 0)  failed 0\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(" missing: 0\n"), "{}", r.stdout);
    assert!(!r.stdout.contains("  build "), "{}", r.stdout);
    assert_eq!(r.stdout.lines().last(), Some("stress: ok"), "{}", r.stdout);
}
