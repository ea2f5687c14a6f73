//! Is another program holding the file open for writing? A Linux read
//! lease answers it, for a few microseconds.
//!
//! `fcntl(F_SETLEASE, F_RDLCK)` on a file opened read-only is granted only
//! when no one has the file open for writing (a shell's `cmd >> file`, a
//! logger, an editor with the file open read-write, a shared writable
//! mapping: each holds a writable open file). Once granted, anyone who
//! opens the file for writing, or truncates it, breaks the lease: their
//! `open` waits (at most `/proc/sys/fs/lease-break-time`, 45 s by default)
//! until the holder lets go, and [`Lease::broken`] says so. Such a writer
//! has not written a byte yet when the holder sees the break.
//!
//! So an fsview writer holding the lease across its last check and the
//! swap knows that nothing was written to the old file meanwhile and that
//! no one will write to it after the swap, or sees the break and undoes
//! the swap (the writer then opens the file that is back at the path).
//!
//! A lease is only for the file's owner (or `CAP_LEASE`), and not every
//! filesystem grants them (NFS, FUSE and some others refuse, and
//! `/proc/sys/fs/leases-enable` can turn them off): then [`Lease::take`]
//! says why not, and the caller checks the old file's bytes again after
//! the swap instead, and says that open writers could not be checked.

use std::fs::File;
use std::io;
use std::os::unix::io::{AsRawFd, RawFd};
use std::sync::Once;

/// A read lease on an open file, let go when dropped.
pub struct Lease {
    fd: RawFd,
}

/// Why no lease could be taken.
#[derive(Debug)]
pub enum NoLease {
    /// Another program has the file open for writing.
    OpenForWriting,
    /// Leases are not available here (not the file's owner, a filesystem
    /// without them): what the kernel said.
    Unavailable(io::Error),
}

impl Lease {
    /// Take a read lease on `f`, opened read-only.
    pub fn take(f: &File) -> Result<Lease, NoLease> {
        ignore_sigio();
        let fd = f.as_raw_fd();
        // SAFETY: fcntl on a file descriptor we own; no memory involved.
        if unsafe { libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) } == 0 {
            return Ok(Lease { fd });
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) => Err(NoLease::OpenForWriting),
            _ => Err(NoLease::Unavailable(e)),
        }
    }

    /// Someone opened the file for writing (or truncated it) since the
    /// lease was taken: their `open` waits for this lease to go.
    pub fn broken(&self) -> bool {
        // SAFETY: as in `take`.
        let t = unsafe { libc::fcntl(self.fd, libc::F_GETLEASE) };
        t != libc::F_RDLCK
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // SAFETY: as in `take`. Closing the file would let go too.
        unsafe { libc::fcntl(self.fd, libc::F_SETLEASE, libc::F_UNLCK) };
    }
}

/// A lease's break is signalled with SIGIO, whose default action ends the
/// process: fsview does not use the signal, so it is ignored (unless the
/// program handles it already). The break itself is read with
/// `F_GETLEASE`.
fn ignore_sigio() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: sigaction with valid pointers; SIG_IGN needs no handler.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGIO, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_DFL
            {
                let mut ign: libc::sigaction = std::mem::zeroed();
                ign.sa_sigaction = libc::SIG_IGN;
                libc::sigaction(libc::SIGIO, &ign, std::ptr::null_mut());
            }
        }
    });
}

/// The processes this one can see that have the file (`dev`, `ino`) open
/// for writing, as "NAME, PID N", at most `most`: for the message of a
/// refusal.
pub fn writers(dev: u64, ino: u64, most: usize) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut found = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return found;
    };
    for p in procs.flatten() {
        let name = p.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if pid == std::process::id().to_string() {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let writes = fds.flatten().any(|fd| {
            let same = std::fs::metadata(fd.path())
                .map(|m| m.dev() == dev && m.ino() == ino)
                .unwrap_or(false);
            same && fd_writes(&p.path(), &fd.file_name())
        });
        if writes {
            let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            found.push(format!("{}, PID {pid}", comm.trim()));
            if found.len() >= most {
                break;
            }
        }
    }
    found
}

/// Whether descriptor `fd` of process `proc` was opened for writing.
fn fd_writes(proc: &std::path::Path, fd: &std::ffi::OsStr) -> bool {
    let Ok(info) = std::fs::read_to_string(proc.join("fdinfo").join(fd)) else {
        return false;
    };
    info.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|f| f & libc::O_ACCMODE as u32 != libc::O_RDONLY as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_refuses_the_lease_and_an_opener_breaks_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let r = File::open(&p).unwrap();
        let w = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        assert!(matches!(Lease::take(&r), Err(NoLease::OpenForWriting)));
        drop(w);
        let lease = Lease::take(&r).unwrap();
        assert!(!lease.broken());
        // A reader does not break it; a non-blocking writer does (and is
        // told to wait).
        let _reader = File::open(&p).unwrap();
        assert!(!lease.broken());
        use std::os::unix::fs::OpenOptionsExt;
        let e = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&p)
            .unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EWOULDBLOCK));
        assert!(lease.broken());
    }
}
