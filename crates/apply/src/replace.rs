//! Replacing a file so that no one's change is lost and nothing is torn.
//!
//! fsview does not write into a file. It writes the new text to a
//! temporary file beside it (same directory, so same filesystem), flushes
//! it to the disk (`fdatasync`), gives it the old file's metadata ([`crate::meta`]:
//! what `cp -a` keeps) and swaps it in with one rename. A process killed,
//! or a machine that loses power, at any moment leaves the old file or the
//! new one at the path, never a mix.
//!
//! **fsview writers queue.** Each takes an exclusive `flock` on the file it
//! is about to replace, and after getting it checks that the path still
//! names that file (a writer before it may have replaced it). So the check
//! "still what the agent saw" and the swap happen with no other fsview
//! writer in between: of eight writers that saw one version, one wins and
//! seven find the file changed.
//!
//! **Writers that take no lock** (an editor, a formatter, `sed -i`, a shell
//! appending) cannot be queued. A read lease ([`lease`]) is taken before
//! the last check: it is refused while another program has the file open
//! for writing (nothing is written then: [`Replaced::OpenForWriting`]), and
//! it breaks when one opens it. The metadata is read under it, just before
//! the swap, so a chmod or setfacl made during the edit is kept. On Linux
//! the new file is exchanged with the old one (`renameat2` with
//! `RENAME_EXCHANGE`), which hands back exactly the file that stood at the
//! path at that instant. If it is not the file checked, or the lease broke
//! (or, without a lease, its bytes changed), the exchange is undone and the
//! write refused. The undoing is an exchange too, and whatever it hands
//! back that is not ours (an editor saved by renaming onto the path in that
//! moment) is kept as a conflict copy, `NAME.fsview-conflict-TIME-PID`
//! beside the file, and named: **nothing anyone else wrote is deleted**.
//! Where the filesystem cannot exchange, the check runs just before a plain
//! rename instead.
//!
//! **A crash** between the exchange and its end leaves the other version
//! at the temporary name `.NAME.fsview-PID-N.tmp`: the old text, or
//! another program's save. [`leftovers`] finds those of a process that is
//! gone, for the next write of the file to name them.
//!
//! **In place.** A new file cannot always stand in for the old one: a
//! group the caller is not in, another user's file the caller may write,
//! an attribute the caller may not set, a file that is a mount point (a
//! single file bind-mounted into a container). Such a file is written in
//! place, after the old text is put in the temporary file and flushed (a
//! crash during the write leaves it there), under the same lock and the
//! same check just before the write.
//!
//! **Hard links** are broken by a swap: the path gets a new file and the
//! other names keep the old text (which is what a shared store such as
//! pnpm's needs). **Symbolic links** are followed by the caller: the target
//! is replaced and the link stays a link.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fsview_store::fingerprint::{Change, FileType, Stat};

use crate::lease::{self, Lease, NoLease};
use crate::meta::Meta;

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
/// in place or kept.
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

/// The longest file name most filesystems take (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// `name` cut (as bytes: a name need not be UTF-8) so that `extra` more
/// bytes still fit in a file name.
fn room_for(name: &[u8], extra: usize) -> &[u8] {
    &name[..name.len().min(NAME_MAX.saturating_sub(extra))]
}

/// A name beside `target`: `pre` + its file name (cut to fit) + `post`.
fn beside_name(target: &Path, pre: &str, post: &str) -> PathBuf {
    let dir = target.parent().unwrap_or(Path::new("/"));
    let name = target.file_name().map(|n| n.as_bytes()).unwrap_or(b"file");
    let mut bytes = pre.as_bytes().to_vec();
    bytes.extend_from_slice(room_for(name, pre.len() + post.len()));
    bytes.extend_from_slice(post.as_bytes());
    dir.join(std::ffi::OsStr::from_bytes(&bytes))
}

/// The prefix of the temporary files of `target`: `.NAME.fsview-`.
fn temp_prefix(target: &Path) -> Vec<u8> {
    let p = beside_name(target, ".", ".fsview-0000000000-000000.tmp");
    let name = p.file_name().map(|n| n.as_bytes()).unwrap_or_default();
    name[..name.len() - "0000000000-000000.tmp".len()].to_vec()
}

impl Temp {
    /// Create `.NAME.fsview-PID-N.tmp` beside `target`, with `mode` (before
    /// the umask). NAME is cut, byte-wise, to keep the whole within a file
    /// name's 255 bytes.
    pub fn beside(target: &Path, mode: u32) -> io::Result<Temp> {
        let pid = std::process::id();
        let seed = fsview_store::fingerprint::now_ns() as u64;
        for n in 0..100u64 {
            let post = format!(
                ".fsview-{pid:010}-{:06x}.tmp",
                seed.wrapping_add(n) & 0xff_ffff
            );
            let path = beside_name(target, ".", &post);
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .open(&path)
            {
                Ok(file) => {
                    // Locked as the file it may become is: once swapped in,
                    // the next fsview writer waits until this one is done
                    // with it, its handle open for writing closed (else that
                    // writer, finding the file open for writing, would refuse
                    // it as in use). New, no one else can hold its lock.
                    // SAFETY: flock on a file descriptor we own.
                    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
                    return Ok(Temp {
                        path,
                        file,
                        armed: true,
                    });
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

    /// Write `bytes` from the start (dropping anything after them) and
    /// flush them to the disk.
    pub fn fill(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.set_len(0)?;
        self.file.write_all_at(bytes, 0)?;
        self.file.sync_data()
    }

    /// Keep what the temporary name holds now (another program's file) as
    /// a conflict copy beside `target`; its name.
    fn keep_as_conflict(&mut self, target: &Path) -> io::Result<PathBuf> {
        let at = conflict_name(target);
        let mut name = at.clone();
        for n in 1..100 {
            match renameat2(&self.path, &name, RENAME_NOREPLACE) {
                Ok(()) => {
                    self.armed = false;
                    return Ok(name);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    name = PathBuf::from(format!("{}-{n}", at.display()));
                }
                Err(e) if unsupported(&e) => {
                    // link(2) never replaces either.
                    match fs::hard_link(&self.path, &name) {
                        Ok(()) => {
                            let _ = fs::remove_file(&self.path);
                            self.armed = false;
                            return Ok(name);
                        }
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                            name = PathBuf::from(format!("{}-{n}", at.display()));
                        }
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        // Left where it is, under a name the message gives.
        self.armed = false;
        Ok(self.path.clone())
    }
}

/// `NAME.fsview-conflict-YYYYMMDDTHHMMSSZ-PID` beside `target`: visible
/// (no leading dot), and ending so that no build tool takes it for a
/// source file of the target's kind.
fn conflict_name(target: &Path) -> PathBuf {
    let now = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%SZ");
    beside_name(
        target,
        "",
        &format!(".fsview-conflict-{now}-{}", std::process::id()),
    )
}

/// Why a file could not be replaced; the file is then as it was, except
/// as [`Failed::Stuck`] says.
#[derive(Debug)]
pub enum Failed {
    /// The temporary file beside the target could not be made.
    Temp(io::Error),
    Io(io::Error),
    /// Another program changed the file while it was being replaced, and
    /// putting its version back failed: it is kept at `kept`, and the path
    /// holds the new text.
    Stuck {
        err: io::Error,
        kept: PathBuf,
    },
}

impl From<io::Error> for Failed {
    fn from(e: io::Error) -> Self {
        Failed::Io(e)
    }
}

/// The result of replacing a file.
#[derive(Debug)]
pub enum Replaced {
    /// The new text stands at the path; `file` is open on it.
    Done {
        file: File,
        /// Why it was written in place rather than replaced, if it was.
        in_place: Option<String>,
        notices: Vec<String>,
    },
    /// The path no longer held the checked file and text: nothing of ours
    /// is at the path. `kept` names a conflict copy of another program's
    /// version that could not stand at the path.
    Conflict {
        change: Change,
        kept: Option<PathBuf>,
    },
    /// Another program has the file open for writing (`writers`: those
    /// this process can see, as "NAME, PID N"): nothing was written.
    OpenForWriting { writers: Vec<String> },
}

/// Replace `target`, which `locked` holds and which held exactly `expect`
/// when it was checked, with `new`. See the module comment for what is
/// checked when.
pub fn replace(
    target: &Path,
    locked: &Locked,
    expect: &[u8],
    new: &[u8],
) -> Result<Replaced, Failed> {
    let mut temp = Temp::beside(target, 0o600).map_err(Failed::Temp)?;
    temp.fill(new)?;
    match swap(&mut temp, target, locked, expect)? {
        Swap::Done(r) => Ok(r),
        Swap::InPlace(why) => in_place(temp, target, locked, expect, new, why),
    }
}

enum Swap {
    Done(Replaced),
    /// A new file cannot stand in for this one: write it in place.
    InPlace(String),
}

fn swap(temp: &mut Temp, target: &Path, locked: &Locked, expect: &[u8]) -> Result<Swap, Failed> {
    let mut notices = Vec::new();
    let lease = match Lease::take(&locked.file) {
        Ok(l) => Some(l),
        Err(NoLease::OpenForWriting) => {
            let writers = lease::writers(locked.stat.dev, locked.stat.ino, 3);
            return Ok(Swap::Done(Replaced::OpenForWriting { writers }));
        }
        Err(NoLease::Unavailable(e)) => {
            notices.push(format!(
                "fsview could not check whether another program has {} open for writing ({}); one that has would go on writing to the replaced file",
                target.display(),
                fsview_store::error::plain_io(&e)
            ));
            None
        }
    };
    fsview_store::pause::point("lease");
    // The last check, under the lease: from here on no one writes to the
    // old file unseen.
    if let Some(c) = path_change(target, &locked.stat)? {
        return Ok(conflict(c, None));
    }
    if !locked.holds(expect)? {
        return Ok(conflict(Change::Content, None));
    }
    // The metadata just before the swap, so a chmod, chown or setfacl made
    // during the edit is kept.
    let mut meta = Meta::of(&locked.file)?;
    if let Err(u) = meta.give(&temp.file) {
        return Ok(Swap::InPlace(format!(
            "a new file cannot keep {} ({})",
            u.what,
            fsview_store::error::plain_io(&u.err)
        )));
    }
    fsview_store::pause::point("exchange");
    match renameat2(&temp.path, target, RENAME_EXCHANGE) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            // A mount point: a single file bind-mounted (containers).
            return Ok(Swap::InPlace("it is a mount point".to_string()));
        }
        Err(e) if unsupported(&e) => {
            return rename_checked(temp, target, locked, expect, &meta, notices, lease);
        }
        Err(e) => return Err(e.into()),
    }
    fsview_store::pause::point("exchanged");
    // `temp.path` now names what stood at the target.
    let mut opened = false;
    let back = match path_change(&temp.path, &locked.stat)? {
        None => match &lease {
            Some(l) if l.broken() => {
                opened = true;
                Some(Change::Content)
            }
            Some(_) => None,
            None if !locked.holds(expect)? => Some(Change::Content),
            None => None,
        },
        Some(Change::Deleted) | Some(Change::Type) => Some(Change::Replaced),
        Some(c) => Some(c),
    };
    if let Some(change) = back {
        let r = undo(temp, target, change)?;
        drop(lease);
        // Someone opened the old file for writing: it is back at the path,
        // and their open goes on now that the lease is gone. They have not
        // written yet: the file is in use, not changed.
        return Ok(Swap::Done(match r {
            Replaced::Conflict { kept: None, .. } if opened => Replaced::OpenForWriting {
                writers: lease::writers(locked.stat.dev, locked.stat.ino, 3),
            },
            r => r,
        }));
    }
    // A chmod or setfacl that reached the old file as it was swapped out
    // goes to the new one too.
    for _ in 0..3 {
        let now = Meta::of(&locked.file)?;
        if now == meta {
            break;
        }
        if let Err(u) = now.give(&temp.file) {
            notices.push(format!(
                "{} changed while it was replaced, and the new file cannot keep {} ({})",
                target.display(),
                u.what,
                fsview_store::error::plain_io(&u.err)
            ));
            break;
        }
        meta = now;
    }
    // The old file, checked unchanged: its name goes.
    fs::remove_file(&temp.path)?;
    temp.armed = false;
    if lease.as_ref().is_some_and(|l| l.broken()) {
        notices.push(format!(
            "a program opened {} for writing as it was being replaced; what it writes goes to the old file, which no longer has a name",
            target.display()
        ));
    }
    drop(lease);
    let file = temp.file.try_clone()?;
    Ok(Swap::Done(Replaced::Done {
        file,
        in_place: None,
        notices,
    }))
}

fn conflict(change: Change, kept: Option<PathBuf>) -> Swap {
    Swap::Done(Replaced::Conflict { change, kept })
}

/// The file that came back from the swap is not the one checked, or it
/// changed: put it back. Whatever then comes back to the temporary name
/// is ours (removed) unless yet another program put its file at the path
/// meanwhile: that one is kept as a conflict copy. Nothing anyone else
/// wrote is removed.
fn undo(temp: &mut Temp, target: &Path, change: Change) -> Result<Replaced, Failed> {
    use std::os::unix::fs::MetadataExt as _;
    let ours = temp.file.metadata()?;
    fsview_store::pause::point("undo");
    match renameat2(&temp.path, target, RENAME_EXCHANGE) {
        Ok(()) => {}
        Err(e) if fsview_store::fingerprint::is_gone(&e) => {
            // The path went (our file was deleted): put theirs back, unless
            // something new stands there already.
            return match renameat2(&temp.path, target, RENAME_NOREPLACE) {
                Ok(()) => {
                    temp.armed = false;
                    Ok(Replaced::Conflict { change, kept: None })
                }
                Err(_) => {
                    let kept = temp.keep_as_conflict(target)?;
                    Ok(Replaced::Conflict {
                        change,
                        kept: Some(kept),
                    })
                }
            };
        }
        Err(err) => {
            let kept = temp.keep_as_conflict(target)?;
            return Err(Failed::Stuck { err, kept });
        }
    }
    let back = fs::symlink_metadata(&temp.path)?;
    if back.dev() == ours.dev() && back.ino() == ours.ino() {
        // Ours: dropping `temp` removes it.
        return Ok(Replaced::Conflict { change, kept: None });
    }
    let kept = temp.keep_as_conflict(target)?;
    Ok(Replaced::Conflict {
        change,
        kept: Some(kept),
    })
}

/// Where the filesystem cannot exchange: check, then rename.
fn rename_checked(
    temp: &mut Temp,
    target: &Path,
    locked: &Locked,
    expect: &[u8],
    meta: &Meta,
    notices: Vec<String>,
    lease: Option<Lease>,
) -> Result<Swap, Failed> {
    if let Some(c) = path_change(target, &locked.stat)? {
        return Ok(conflict(c, None));
    }
    if !locked.holds(expect)? || lease.as_ref().is_some_and(|l| l.broken()) {
        return Ok(conflict(Change::Content, None));
    }
    if Meta::of(&locked.file)? != *meta {
        Meta::of(&locked.file)?
            .give(&temp.file)
            .map_err(|u| Failed::Io(u.err))?;
    }
    fs::rename(&temp.path, target)?;
    temp.armed = false;
    drop(lease);
    let file = temp.file.try_clone()?;
    Ok(Swap::Done(Replaced::Done {
        file,
        in_place: None,
        notices,
    }))
}

/// Write `new` into the file itself, for a file a new one cannot stand in
/// for (`why`). The temporary file first takes the old text and is
/// flushed, so a crash during the write leaves it whole there; it is
/// removed once the new text is on the disk. The file keeps its identity,
/// owner, mode, ACLs and attributes; a writer that has it open keeps
/// writing into the one file.
fn in_place(
    mut temp: Temp,
    target: &Path,
    locked: &Locked,
    expect: &[u8],
    new: &[u8],
    why: String,
) -> Result<Replaced, Failed> {
    temp.fill(expect)?;
    let w = match OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(target)
    {
        Ok(w) => w,
        Err(e) if fsview_store::fingerprint::is_gone(&e) => {
            return Ok(Replaced::Conflict {
                change: Change::Deleted,
                kept: None,
            })
        }
        Err(e) => return Err(e.into()),
    };
    if !Stat::of(&w.metadata()?).same_identity(&locked.stat) {
        return Ok(Replaced::Conflict {
            change: Change::Replaced,
            kept: None,
        });
    }
    let meta = Meta::of(&locked.file)?;
    fsview_store::pause::point("in-place");
    if !locked.holds(expect)? {
        return Ok(Replaced::Conflict {
            change: Change::Content,
            kept: None,
        });
    }
    w.write_all_at(new, 0)?;
    w.set_len(new.len() as u64)?;
    w.sync_data()?;
    let mut notices = Vec::new();
    // A write by anyone but root drops set-user-ID bits and file
    // capabilities: give them back where the kernel lets us.
    if Meta::of(&locked.file)? != meta {
        if let Err(u) = meta.give(&w) {
            notices.push(format!(
                "{} lost {} in the write ({})",
                target.display(),
                u.what,
                fsview_store::error::plain_io(&u.err)
            ));
        }
    }
    // The backup goes with `temp`.
    drop(temp);
    Ok(Replaced::Done {
        file: w,
        in_place: Some(why),
        notices,
    })
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

/// Temporary files of `target` left by an fsview write that did not finish
/// (its process is gone): each holds either the text that write was
/// putting in place or the version it had swapped out, maybe another
/// program's. Found by name beside the target.
pub fn leftovers(target: &Path) -> Vec<PathBuf> {
    let dir = target.parent().unwrap_or(Path::new("/"));
    let prefix = temp_prefix(target);
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let Some(rest) = name.as_bytes().strip_prefix(prefix.as_slice()) else {
                return false;
            };
            let Some(pid) = rest
                .strip_suffix(b".tmp")
                .and_then(|r| r.split(|&b| b == b'-').next())
                .and_then(|p| std::str::from_utf8(p).ok())
                .and_then(|p| p.parse::<i32>().ok())
            else {
                return false;
            };
            !alive(pid)
        })
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Whether process `pid` exists (seen from this PID namespace).
fn alive(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 || *libc::__errno_location() == libc::EPERM }
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
    use std::io::Write;
    use std::os::unix::fs::MetadataExt;

    fn setup(body: &[u8]) -> (tempfile::TempDir, PathBuf, Locked) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, body).unwrap();
        let l = lock(&p).unwrap().unwrap();
        (d, p, l)
    }

    fn leftovers_in(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_and_leaves_nothing_behind() {
        use std::os::unix::fs::PermissionsExt;
        let (d, p, l) = setup(b"old\n");
        // A chmod after the lock, before the swap, is kept.
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        let r = replace(&p, &l, b"old\n", b"new\n").unwrap();
        assert!(
            matches!(&r, Replaced::Done { in_place: None, notices, .. } if notices.is_empty()),
            "{r:?}"
        );
        assert_eq!(fs::read(&p).unwrap(), b"new\n");
        assert_eq!(fs::metadata(&p).unwrap().mode() & 0o7777, 0o640);
        assert_eq!(leftovers_in(d.path()), ["f"]);
    }

    // A writer that takes no lock changed the file after the check: the
    // swap is refused, and the file keeps its text.
    #[test]
    fn a_change_after_the_check_is_kept() {
        let (d, p, l) = setup(b"old\n");
        fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"theirs\n")
            .unwrap();
        let r = replace(&p, &l, b"old\n", b"new\n").unwrap();
        assert!(
            matches!(
                r,
                Replaced::Conflict {
                    change: Change::Content,
                    kept: None
                }
            ),
            "{r:?}"
        );
        assert_eq!(fs::read(&p).unwrap(), b"old\ntheirs\n");
        assert_eq!(leftovers_in(d.path()), ["f"]);
    }

    // A writer that has the file open: nothing is written.
    #[test]
    fn a_file_open_for_writing_is_not_replaced() {
        let (d, p, l) = setup(b"old\n");
        let w = fs::OpenOptions::new().append(true).open(&p).unwrap();
        let r = replace(&p, &l, b"old\n", b"new\n").unwrap();
        assert!(
            matches!(&r, Replaced::OpenForWriting { writers } if writers.is_empty()),
            "{r:?}"
        );
        drop(w);
        assert_eq!(fs::read(&p).unwrap(), b"old\n");
        assert_eq!(leftovers_in(d.path()), ["f"]);
    }

    // An editor saved by renaming its own file over the path.
    #[test]
    fn a_file_renamed_over_it_stays() {
        let (d, p, l) = setup(b"old\n");
        fs::write(d.path().join("editor"), b"editor's\n").unwrap();
        fs::rename(d.path().join("editor"), &p).unwrap();
        let r = replace(&p, &l, b"old\n", b"new\n").unwrap();
        assert!(
            matches!(
                r,
                Replaced::Conflict {
                    change: Change::Replaced,
                    kept: None
                }
            ),
            "{r:?}"
        );
        assert_eq!(fs::read(&p).unwrap(), b"editor's\n");
        assert_eq!(leftovers_in(d.path()), ["f"]);
    }

    #[test]
    fn create_new_never_replaces() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("n");
        let mut t = Temp::beside(&p, 0o644).unwrap();
        t.fill(b"mine\n").unwrap();
        assert!(create_new(&mut t, &p).unwrap());
        drop(t);
        let mut t = Temp::beside(&p, 0o644).unwrap();
        t.fill(b"second\n").unwrap();
        assert!(!create_new(&mut t, &p).unwrap());
        drop(t);
        assert_eq!(fs::read(&p).unwrap(), b"mine\n");
        assert_eq!(leftovers_in(d.path()), ["n"]);
    }

    // A name of 200 bytes that are not UTF-8 (Latin-1): the temporary and
    // conflict names stay within 255 bytes, cut byte-wise.
    #[test]
    fn long_names_that_are_not_utf8_fit() {
        let d = tempfile::tempdir().unwrap();
        let name = std::ffi::OsStr::from_bytes(&[0xe9u8; 200]);
        let p = d.path().join(name);
        let t = Temp::beside(&p, 0o600).unwrap();
        let n = t.path.file_name().unwrap().as_bytes().len();
        assert!(n <= 255, "{n}");
        assert!(conflict_name(&p).file_name().unwrap().as_bytes().len() <= 255);
        assert!(t
            .path
            .file_name()
            .unwrap()
            .as_bytes()
            .starts_with(&temp_prefix(&p)));
    }

    // The file swapped in is still open for writing in the writer until it
    // is done with it: the next writer waits for it (else it would find the
    // file open for writing and refuse it as in use).
    #[test]
    fn the_next_writer_waits_until_the_file_swapped_in_is_closed() {
        let (_d, p, l) = setup(b"old\n");
        let Replaced::Done { file, .. } = replace(&p, &l, b"old\n", b"new\n").unwrap() else {
            panic!("not replaced");
        };
        drop(l);
        let p2 = p.clone();
        let next = std::thread::spawn(move || {
            let l = lock(&p2).unwrap().unwrap();
            matches!(
                replace(&p2, &l, b"new\n", b"newer\n").unwrap(),
                Replaced::Done { .. }
            )
        });
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !next.is_finished(),
            "took the lock of a file still being written"
        );
        drop(file);
        assert!(
            next.join().unwrap(),
            "the next writer found the file in use"
        );
        assert_eq!(fs::read(&p).unwrap(), b"newer\n");
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
