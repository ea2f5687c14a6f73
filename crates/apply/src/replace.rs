//! Replacing a file so that no update is lost and nothing is torn.
//!
//! fsview never writes into a file. It writes the new text to a temporary
//! file beside it (same directory, so same filesystem), gives it the old
//! file's owner and mode, flushes it to the disk (`fdatasync`), and only
//! then puts it in place with one rename. A process killed, or a machine
//! that loses power, at any moment leaves the old file or the new one at
//! the path, never a mix; at worst a stray `.NAME.fsview-*.tmp` beside it.
//!
//! **fsview writers queue.** Each takes an exclusive `flock` on the file it
//! is about to replace, and after getting it checks that the path still
//! names that file (a writer before it may have replaced it). So the check
//! "still what the agent saw" and the rename happen with no other fsview
//! writer in between: of eight writers that saw one version, one wins and
//! seven find the file changed.
//!
//! **Writers that take no lock** (an editor, a formatter, `sed -i`) cannot
//! be queued, so the old file is checked again *after* the swap: on Linux
//! the new file is exchanged with the old one (`renameat2` with
//! `RENAME_EXCHANGE`), which hands back exactly the file that stood at the
//! path at that instant. If it is not the file that was checked, or its
//! bytes changed meanwhile, the exchange is undone and the write refused:
//! a change that landed before the write is never lost. (Only a writer
//! that opens the path in the microseconds between the exchange and its
//! undoing can still be overwritten. Where the filesystem cannot exchange,
//! the check runs just before a plain rename instead.)
//!
//! **Hard links** are broken: the path gets a new file and the other names
//! keep the old text (which is what a shared store such as pnpm's needs).
//! **Symbolic links** are followed by the caller: the target is replaced and
//! the link stays a link. **Owner and mode** are copied to the new file;
//! where the owner cannot be kept (not root, someone else's file) the write
//! is refused. Extended attributes and ACLs are not copied.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fsview_store::fingerprint::{Change, FileType, Stat};

/// How long a writer waits for another fsview writer of the same file.
const LOCK_DEADLINE: Duration = Duration::from_secs(60);

/// A file opened and locked against other fsview writers.
pub struct Locked {
    pub file: File,
    pub meta: Metadata,
    pub stat: Stat,
}

/// Open `path` and take the fsview writers' lock on it. `None` when there
/// is nothing at the path. The lock is released when `Locked` is dropped.
/// A wait past a minute is an error of kind `TimedOut`.
pub fn lock(path: &Path) -> io::Result<Option<Locked>> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if fsview_store::fingerprint::is_gone(&e) => return Ok(None),
        Err(e) => return Err(e),
    };
    let start = Instant::now();
    let mut delay = Duration::from_micros(200);
    loop {
        // SAFETY: flock on a file descriptor we own; no memory involved.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            break;
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) | Some(libc::EINTR) => {}
            _ => return Err(e),
        }
        if start.elapsed() > LOCK_DEADLINE {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "another fsview writer held it for over a minute",
            ));
        }
        std::thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_millis(20));
    }
    let meta = file.metadata()?;
    let stat = Stat::of(&meta);
    Ok(Some(Locked { file, meta, stat }))
}

impl Locked {
    /// Every byte of the locked file.
    pub fn read_all(&self) -> io::Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(self.meta.len() as usize + 1);
        (&self.file).read_to_end(&mut buf)?;
        Ok(buf)
    }

    /// Whether the locked file still holds exactly `expect`.
    fn holds(&self, expect: &[u8]) -> io::Result<bool> {
        let mut buf = vec![0u8; expect.len() + 1];
        let mut got = 0;
        while got < buf.len() {
            match self.file.read_at(&mut buf[got..], got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(&buf[..got] == expect)
    }
}

/// How the path differs from the locked file, if it does: another file
/// stands there, or nothing, or something that is not a regular file.
pub fn path_change(path: &Path, locked: &Stat) -> io::Result<Option<Change>> {
    match fs::symlink_metadata(path) {
        Ok(m) => {
            let now = Stat::of(&m);
            Ok(if now.ftype != FileType::File {
                Some(Change::Type)
            } else if now.dev != locked.dev || now.ino != locked.ino {
                Some(Change::Replaced)
            } else {
                None
            })
        }
        Err(e) if fsview_store::fingerprint::is_gone(&e) => Ok(Some(Change::Deleted)),
        Err(e) => Err(e),
    }
}

/// A temporary file beside the target, removed on drop unless it was put
/// in place.
pub struct Temp {
    pub path: PathBuf,
    pub file: File,
    armed: bool,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Why a temporary file could not be written.
#[derive(Debug)]
pub enum WriteError {
    /// Creating, writing or flushing it failed.
    Io(io::Error),
    /// The old file's owner could not be given to the new one.
    Owner { uid: u32, gid: u32, err: io::Error },
}

impl From<io::Error> for WriteError {
    fn from(e: io::Error) -> Self {
        WriteError::Io(e)
    }
}

impl Temp {
    /// Create `.NAME.fsview-PID-N.tmp` beside `target`, with `mode` (before
    /// the umask).
    pub fn beside(target: &Path, mode: u32) -> io::Result<Temp> {
        let dir = target.parent().unwrap_or(Path::new("/"));
        let name = target.file_name().map(|n| n.as_bytes()).unwrap_or(b"file");
        // Leave room under NAME_MAX (255) for the decoration.
        let name = String::from_utf8_lossy(&name[..name.len().min(200)]).into_owned();
        let pid = std::process::id();
        let seed = fsview_store::fingerprint::now_ns() as u64;
        for n in 0..100u64 {
            let path = dir.join(format!(
                ".{name}.fsview-{pid}-{:x}.tmp",
                seed.wrapping_add(n) & 0xff_ffff
            ));
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&path)
            {
                Ok(file) => {
                    return Ok(Temp {
                        path,
                        file,
                        armed: true,
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free temporary file name",
        ))
    }

    /// Write `bytes`, give the file `like`'s owner and mode (when given),
    /// and flush it to the disk.
    pub fn fill(&mut self, bytes: &[u8], like: Option<&Metadata>) -> Result<(), WriteError> {
        self.file.write_all(bytes)?;
        if let Some(m) = like {
            let mine = self.file.metadata()?;
            let fd = self.file.as_raw_fd();
            if mine.uid() != m.uid() || mine.gid() != m.gid() {
                // SAFETY: fchown on a file descriptor we own.
                if unsafe { libc::fchown(fd, m.uid(), m.gid()) } != 0 {
                    return Err(WriteError::Owner {
                        uid: m.uid(),
                        gid: m.gid(),
                        err: io::Error::last_os_error(),
                    });
                }
            }
            // After the chown, which clears set-user-ID and set-group-ID.
            // SAFETY: fchmod on a file descriptor we own.
            if unsafe { libc::fchmod(fd, m.mode() & 0o7777) } != 0 {
                return Err(WriteError::Io(io::Error::last_os_error()));
            }
        }
        self.file.sync_data()?;
        Ok(())
    }
}

/// The result of putting the new file in place.
#[derive(Debug, PartialEq, Eq)]
pub enum Swapped {
    /// The new file stands at the path; the old one is gone.
    Done,
    /// The path no longer held the checked file and text; nothing changed.
    Conflict(Change),
}

/// Put `temp` in place of `target`, which `locked` holds and which held
/// exactly `expect` when it was checked. See the module comment for what
/// is checked when.
pub fn swap_in(
    temp: &mut Temp,
    target: &Path,
    locked: &Locked,
    expect: &[u8],
) -> io::Result<Swapped> {
    match renameat2(&temp.path, target, RENAME_EXCHANGE) {
        Ok(()) => {}
        Err(e) if unsupported(&e) => return rename_checked(temp, target, locked, expect),
        Err(e) => return Err(e),
    }
    // `temp.path` now names what stood at the target.
    let conflict = match path_change(&temp.path, &locked.stat)? {
        Some(Change::Deleted) => Some(Change::Deleted),
        Some(c) => Some(c),
        None if !locked.holds(expect)? => Some(Change::Content),
        None => None,
    };
    if let Some(change) = conflict {
        if let Err(e) = renameat2(&temp.path, target, RENAME_EXCHANGE) {
            // The other writer's file is at the temporary name: keep it.
            temp.armed = false;
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "another program changed the file while it was being replaced, and putting its version back failed ({}); its version is in {}",
                    fsview_store::error::plain_io(&e),
                    temp.path.display()
                ),
            ));
        }
        // Our file is back at the temporary name; dropping `temp` removes it.
        return Ok(Swapped::Conflict(change));
    }
    // The old file is at the temporary name; dropping `temp` removes it.
    Ok(Swapped::Done)
}

/// Where the filesystem cannot exchange: check, then rename.
fn rename_checked(
    temp: &mut Temp,
    target: &Path,
    locked: &Locked,
    expect: &[u8],
) -> io::Result<Swapped> {
    if let Some(c) = path_change(target, &locked.stat)? {
        return Ok(Swapped::Conflict(c));
    }
    if !locked.holds(expect)? {
        return Ok(Swapped::Conflict(Change::Content));
    }
    fs::rename(&temp.path, target)?;
    temp.armed = false;
    Ok(Swapped::Done)
}

/// Put `temp` at `target` only if nothing is there. `false` when something
/// is (it appeared since the check).
pub fn create_new(temp: &mut Temp, target: &Path) -> io::Result<bool> {
    match renameat2(&temp.path, target, RENAME_NOREPLACE) {
        Ok(()) => {
            temp.armed = false;
            return Ok(true);
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) if unsupported(&e) => {}
        Err(e) => return Err(e),
    }
    // link(2) never replaces either.
    match fs::hard_link(&temp.path, target) {
        Ok(()) => Ok(true), // dropping `temp` removes the temporary name
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(target_os = "linux")]
const RENAME_EXCHANGE: u32 = libc::RENAME_EXCHANGE;
#[cfg(target_os = "linux")]
const RENAME_NOREPLACE: u32 = libc::RENAME_NOREPLACE;
#[cfg(not(target_os = "linux"))]
const RENAME_EXCHANGE: u32 = 2;
#[cfg(not(target_os = "linux"))]
const RENAME_NOREPLACE: u32 = 1;

#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: u32) -> io::Result<()> {
    use std::ffi::CString;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))
    };
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths that live across the call. The raw
    // syscall, not glibc's wrapper, so older C libraries work too.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn renameat2(_from: &Path, _to: &Path, _flags: u32) -> io::Result<()> {
    Err(io::Error::from_raw_os_error(libc::ENOSYS))
}

/// The kernel or the filesystem cannot do this kind of rename.
fn unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(body: &[u8]) -> (tempfile::TempDir, PathBuf, Locked) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, body).unwrap();
        let l = lock(&p).unwrap().unwrap();
        (d, p, l)
    }

    fn temp_with(p: &Path, body: &[u8], like: &Metadata) -> Temp {
        let mut t = Temp::beside(p, 0o600).unwrap();
        t.fill(body, Some(like)).unwrap();
        t
    }

    fn leftovers(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn swaps_in_and_leaves_nothing_behind() {
        use std::os::unix::fs::PermissionsExt;
        let (d, p, l) = setup(b"old\n");
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        let l = Locked {
            meta: fs::metadata(&p).unwrap(),
            ..l
        };
        let mut t = temp_with(&p, b"new\n", &l.meta);
        assert_eq!(swap_in(&mut t, &p, &l, b"old\n").unwrap(), Swapped::Done);
        drop(t);
        assert_eq!(fs::read(&p).unwrap(), b"new\n");
        assert_eq!(fs::metadata(&p).unwrap().mode() & 0o7777, 0o640);
        assert_eq!(leftovers(d.path()), ["f"]);
    }

    // A writer that takes no lock changed the file after the check: the
    // exchange hands the changed file back, and it is put back in place.
    #[test]
    fn a_change_after_the_check_is_put_back() {
        let (d, p, l) = setup(b"old\n");
        let mut t = temp_with(&p, b"new\n", &l.meta);
        fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"theirs\n")
            .unwrap();
        assert_eq!(
            swap_in(&mut t, &p, &l, b"old\n").unwrap(),
            Swapped::Conflict(Change::Content)
        );
        drop(t);
        assert_eq!(fs::read(&p).unwrap(), b"old\ntheirs\n");
        assert_eq!(leftovers(d.path()), ["f"]);
    }

    // An editor saved by renaming its own file over the path.
    #[test]
    fn a_file_renamed_over_it_is_put_back() {
        let (d, p, l) = setup(b"old\n");
        let mut t = temp_with(&p, b"new\n", &l.meta);
        fs::write(d.path().join("editor"), b"editor's\n").unwrap();
        fs::rename(d.path().join("editor"), &p).unwrap();
        assert_eq!(
            swap_in(&mut t, &p, &l, b"old\n").unwrap(),
            Swapped::Conflict(Change::Replaced)
        );
        drop(t);
        assert_eq!(fs::read(&p).unwrap(), b"editor's\n");
        assert_eq!(leftovers(d.path()), ["f"]);
    }

    #[test]
    fn create_new_never_replaces() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("n");
        let mut t = Temp::beside(&p, 0o644).unwrap();
        t.fill(b"mine\n", None).unwrap();
        assert!(create_new(&mut t, &p).unwrap());
        drop(t);
        let mut t = Temp::beside(&p, 0o644).unwrap();
        t.fill(b"second\n", None).unwrap();
        assert!(!create_new(&mut t, &p).unwrap());
        drop(t);
        assert_eq!(fs::read(&p).unwrap(), b"mine\n");
        assert_eq!(leftovers(d.path()), ["n"]);
    }

    #[test]
    fn a_second_writer_waits_for_the_lock() {
        let (_d, p, l) = setup(b"x");
        let p2 = p.clone();
        let waiter = std::thread::spawn(move || lock(&p2).unwrap().is_some());
        std::thread::sleep(Duration::from_millis(100));
        assert!(!waiter.is_finished(), "took a lock another writer holds");
        drop(l);
        assert!(waiter.join().unwrap());
    }
}
