//! Deterministic pauses for the tests of races, in debug builds only.
//!
//! A race between two processes (a check that hashed a file and is about to
//! store what it found, and a read that records a newer view) is reproduced
//! by stopping one of them at a named point, not by luck. With
//! `FSVIEW_TEST_PAUSE=POINT:DIR` in its environment, a debug build that
//! reaches `POINT` creates `DIR/POINT.waiting` and waits (up to a minute)
//! until `DIR/POINT.go` exists. Several points, comma-separated
//! (`exchange,undo:DIR`), pause at each in turn. Release builds compile the
//! points away and never read the variable.

/// Pause here when a test asks for it (see the module documentation).
#[cfg(debug_assertions)]
pub fn point(name: &str) {
    use std::path::Path;
    use std::time::{Duration, Instant};
    let Ok(spec) = std::env::var("FSVIEW_TEST_PAUSE") else {
        return;
    };
    let Some((points, dir)) = spec.split_once(':') else {
        return;
    };
    if !points.split(',').any(|p| p == name) {
        return;
    }
    let dir = Path::new(dir);
    let _ = std::fs::write(dir.join(format!("{name}.waiting")), b"");
    let go = dir.join(format!("{name}.go"));
    let start = Instant::now();
    while !go.exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Release builds have no pause points.
#[cfg(not(debug_assertions))]
#[inline(always)]
pub fn point(_name: &str) {}
