//! What a file was when the agent saw it, and whether it still is.
//!
//! A fingerprint is the file's identity (device, inode, birth time where the
//! filesystem keeps one, and file type), its size, mtime and ctime in
//! nanoseconds, the moment the stat was taken, and a SHA-256 of the whole file.
//!
//! Freshness never trusts timestamps alone. Equal stats prove nothing when the
//! stat was taken in the same clock tick as the last write: a second write in
//! that tick can leave size, mtime and ctime unchanged (git calls such an entry
//! "racily clean"). So a fingerprint whose mtime or ctime lies within
//! [`RACY_WINDOW_NS`] of the moment it was taken is verified by hashing, and so
//! is any fingerprint whose stat differs at all: equal content is fresh
//! (a touch, a chmod), different content is not. An mtime set backwards
//! (`touch -d`, `cp -p`, `tar`, `rsync -t`) still moves the ctime, which
//! nobody can set, so it is caught too.
//!
//! A file too large to hash on every range read (over [`HASH_LIMIT`]) may be
//! fingerprinted by its stat alone, and only when that stat is not racy. Such
//! a fingerprint is fresh only while the stat is exactly the same; any change
//! of stat counts as a change of content, because nothing else can prove it
//! is not one.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// How close to the moment of the stat a write may be before the stat is
/// trusted no more. Two seconds covers filesystems with coarse timestamps
/// (FAT keeps two-second mtimes, several keep whole seconds).
pub const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// Files up to this size are always hashed whole, even for a range read: the
/// hash costs little next to starting a process. Larger ones are hashed only
/// when read to the end or when their stat cannot be trusted.
pub const HASH_LIMIT: u64 = 32 * 1024 * 1024;

pub type Hash = [u8; 32];

/// The kind of a file, as far as freshness cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileType {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
}

impl FileType {
    pub fn of(meta: &Metadata) -> FileType {
        let ft = meta.file_type();
        if ft.is_file() {
            FileType::File
        } else if ft.is_dir() {
            FileType::Dir
        } else if ft.is_symlink() {
            FileType::Symlink
        } else if ft.is_fifo() {
            FileType::Fifo
        } else if ft.is_socket() {
            FileType::Socket
        } else if ft.is_char_device() {
            FileType::CharDevice
        } else {
            FileType::BlockDevice
        }
    }

    pub fn code(self) -> i64 {
        self as i64
    }

    pub fn from_code(code: i64) -> FileType {
        match code {
            1 => FileType::Dir,
            2 => FileType::Symlink,
            3 => FileType::Fifo,
            4 => FileType::Socket,
            5 => FileType::CharDevice,
            6 => FileType::BlockDevice,
            _ => FileType::File,
        }
    }

    /// "a directory", "a FIFO", ... for messages.
    pub fn describe(self) -> &'static str {
        match self {
            FileType::File => "a regular file",
            FileType::Dir => "a directory",
            FileType::Symlink => "a symbolic link",
            FileType::Fifo => "a FIFO",
            FileType::Socket => "a socket",
            FileType::CharDevice => "a character device",
            FileType::BlockDevice => "a block device",
        }
    }
}

/// The parts of a stat that freshness compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    /// Birth time, where the filesystem reports one: it tells a file deleted
    /// and recreated on a reused inode from the file that was there before.
    pub btime_ns: Option<i64>,
    pub ftype: FileType,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

impl Stat {
    pub fn of(meta: &Metadata) -> Stat {
        let btime_ns = meta
            .created()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i64);
        Stat {
            dev: meta.dev(),
            ino: meta.ino(),
            btime_ns,
            ftype: FileType::of(meta),
            size: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        }
    }

    /// Same file object (not necessarily same content).
    pub fn same_identity(&self, other: &Stat) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && match (self.btime_ns, other.btime_ns) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }

    /// Same size and timestamps (identity aside).
    pub fn same_times(&self, other: &Stat) -> bool {
        self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && self.ctime_ns == other.ctime_ns
    }
}

/// A file as it was at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    pub stat: Stat,
    /// Wall-clock time just before the stat was taken.
    pub taken_ns: i64,
    /// SHA-256 of the whole file; `None` when fingerprinted by stat alone.
    pub hash: Option<Hash>,
}

impl Fingerprint {
    /// True when a write after the stat could have left the stat unchanged.
    pub fn is_racy(&self) -> bool {
        is_racy(&self.stat, self.taken_ns)
    }

    /// True when both fingerprints prove the same bytes.
    pub fn same_content(&self, other: &Fingerprint) -> bool {
        match (self.hash, other.hash) {
            (Some(a), Some(b)) => a == b,
            _ => {
                self.stat.same_identity(&other.stat)
                    && self.stat.same_times(&other.stat)
                    && !self.is_racy()
                    && !other.is_racy()
            }
        }
    }
}

pub fn is_racy(stat: &Stat, taken_ns: i64) -> bool {
    stat.mtime_ns.max(stat.ctime_ns) >= taken_ns - RACY_WINDOW_NS
}

pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// How a file differs from what the agent saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Same file, other bytes.
    Content,
    /// Another file now stands at the path (a rename-replace, a delete and
    /// recreate).
    Replaced,
    /// Nothing is at the path any more.
    Deleted,
    /// Something other than a regular file is at the path.
    Type,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Content => "content",
            Change::Replaced => "replaced",
            Change::Deleted => "deleted",
            Change::Type => "type",
        }
    }
}

/// The answer to "is this file still what the agent saw?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// Still the same bytes. `refreshed` is a better fingerprint for the same
    /// content (new stat, no longer racy) worth storing, if any.
    Fresh {
        refreshed: Option<Fingerprint>,
    },
    Stale(Change),
}

/// Decide whether the file at `path` still holds what `fp` describes.
pub fn freshness(path: &Path, fp: &Fingerprint) -> io::Result<Freshness> {
    let taken_ns = now_ns();
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if is_gone(&e) => return Ok(Freshness::Stale(Change::Deleted)),
        Err(e) => return Err(e),
    };
    let now = Stat::of(&meta);
    if now.ftype != fp.stat.ftype {
        return Ok(Freshness::Stale(Change::Type));
    }
    if !now.same_identity(&fp.stat) {
        return Ok(Freshness::Stale(Change::Replaced));
    }
    if now.same_times(&fp.stat) && !fp.is_racy() {
        return Ok(Freshness::Fresh { refreshed: None });
    }
    if now.size != fp.stat.size {
        return Ok(Freshness::Stale(Change::Content));
    }
    let Some(want) = fp.hash else {
        // Fingerprinted by stat alone and the stat moved: nothing can prove
        // the content did not.
        return Ok(Freshness::Stale(Change::Content));
    };
    let (got, stat) = match hash_path(path) {
        Ok(x) => x,
        Err(e) if is_gone(&e) => return Ok(Freshness::Stale(Change::Deleted)),
        Err(e) => return Err(e),
    };
    if !stat.same_identity(&fp.stat) {
        return Ok(Freshness::Stale(Change::Replaced));
    }
    if got != want {
        return Ok(Freshness::Stale(Change::Content));
    }
    let better = Fingerprint {
        stat,
        taken_ns,
        hash: Some(got),
    };
    // Worth storing when it saves a hash next time: the stat changed, or the
    // old one was racy and this one is not.
    let refreshed = if !stat.same_times(&fp.stat) || (fp.is_racy() && !better.is_racy()) {
        Some(better)
    } else {
        None
    };
    Ok(Freshness::Fresh { refreshed })
}

/// A file that vanished, or whose parent is no longer a directory.
pub fn is_gone(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotFound || e.raw_os_error() == Some(libc::ENOTDIR)
}

/// Open a file for reading without ever blocking: a FIFO with no writer
/// opens at once (and is then refused by type), and no terminal becomes ours.
pub fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

/// Hash a whole regular file, with the stat of the open file taken before
/// the first byte was read.
pub fn hash_path(path: &Path) -> io::Result<(Hash, Stat)> {
    let mut file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    let stat = Stat::of(&meta);
    if stat.ftype != FileType::File {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}", stat.ftype.describe()),
        ));
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
    }
    Ok((hasher.finalize().into(), stat))
}

pub fn hash_bytes(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

pub fn hex(hash: &Hash) -> String {
    let mut s = String::with_capacity(64);
    for b in hash {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn fingerprint(path: &Path) -> Fingerprint {
        let taken_ns = now_ns();
        let (hash, stat) = hash_path(path).unwrap();
        Fingerprint {
            stat,
            taken_ns,
            hash: Some(hash),
        }
    }

    #[test]
    fn fresh_file_is_racy_right_after_writing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a");
        std::fs::write(&p, "one\n").unwrap();
        let fp = fingerprint(&p);
        assert!(fp.is_racy());
        assert_eq!(
            freshness(&p, &fp).unwrap(),
            Freshness::Fresh { refreshed: None }
        );
    }

    // Racy git: a same-size rewrite in the same tick leaves the stat alone;
    // only the hash can tell.
    #[test]
    fn same_size_rewrite_in_same_tick_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a");
        std::fs::write(&p, "one\n").unwrap();
        let mut fp = fingerprint(&p);
        let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.write_all(b"two\n").unwrap();
        drop(f);
        // Pretend the stat did not move at all, as on a coarse clock.
        fp.stat = Stat::of(&std::fs::metadata(&p).unwrap());
        assert_eq!(
            freshness(&p, &fp).unwrap(),
            Freshness::Stale(Change::Content)
        );
    }

    #[test]
    fn stat_only_fingerprint_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a");
        std::fs::write(&p, "one\n").unwrap();
        let mut fp = fingerprint(&p);
        fp.hash = None;
        fp.taken_ns += 10 * RACY_WINDOW_NS;
        assert_eq!(
            freshness(&p, &fp).unwrap(),
            Freshness::Fresh { refreshed: None }
        );
        fp.stat.mtime_ns -= 1;
        assert_eq!(
            freshness(&p, &fp).unwrap(),
            Freshness::Stale(Change::Content)
        );
    }

    #[test]
    fn deleted_and_type() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a");
        std::fs::write(&p, "one\n").unwrap();
        let fp = fingerprint(&p);
        std::fs::remove_file(&p).unwrap();
        assert_eq!(
            freshness(&p, &fp).unwrap(),
            Freshness::Stale(Change::Deleted)
        );
        std::fs::create_dir(&p).unwrap();
        assert_eq!(freshness(&p, &fp).unwrap(), Freshness::Stale(Change::Type));
    }
}
