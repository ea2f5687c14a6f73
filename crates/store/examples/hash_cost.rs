//! What hashing a file costs, by size: the figures behind
//! `fingerprint::ALWAYS_HASH_BELOW` (run by `scripts/bench-hash`, which
//! sets them beside the cost of starting a process).
//!
//! For each size, a file of that many bytes is hashed the way a check
//! hashes it (`fingerprint::hash_path`: open, fstat, read, SHA-256) many
//! times with a warm page cache; the median is printed in microseconds, with
//! the cost of the stat shortcut's own system calls (lstat and statfs) for
//! comparison.
//!
//! Usage: hash_cost [DIR]   (files are written to DIR, default a temp dir)

use std::path::Path;
use std::time::Instant;

use fsview_store::fingerprint;

fn median_us(mut f: impl FnMut()) -> f64 {
    for _ in 0..20 {
        f();
    }
    let mut runs: Vec<f64> = (0..301)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    runs.sort_by(|a, b| a.total_cmp(b));
    runs[runs.len() / 2]
}

fn main() {
    let dir = match std::env::args_os().nth(1) {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::temp_dir(),
    };
    let shortcut = {
        let p = dir.join("hash-cost-stat");
        std::fs::write(&p, b"x").unwrap();
        let us = median_us(|| {
            std::fs::symlink_metadata(&p).unwrap();
            fingerprint::fs_keeps_stat(&p);
        });
        std::fs::remove_file(&p).unwrap();
        us
    };
    println!("size_bytes\thash_us\tshortcut_us");
    for size in [
        0u64,
        1 << 10,
        4 << 10,
        16 << 10,
        64 << 10,
        128 << 10,
        256 << 10,
        1 << 20,
        4 << 20,
    ] {
        let p = dir.join(format!("hash-cost-{size}"));
        let body: Vec<u8> = (0..size).map(|i| b"abcdefgh\n"[(i % 9) as usize]).collect();
        std::fs::write(&p, &body).unwrap();
        let us = median_us(|| {
            fingerprint::hash_path(Path::new(&p)).unwrap();
        });
        std::fs::remove_file(&p).unwrap();
        println!("{size}\t{us:.1}\t{shortcut:.1}");
    }
}
