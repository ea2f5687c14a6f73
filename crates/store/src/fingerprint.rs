//! What a file was when the agent saw it, and whether it still is.
//!
//! A fingerprint is the file's identity (device, inode, birth time where the
//! filesystem keeps one, and file type), its size, mtime and ctime in
//! nanoseconds, the moment the stat was taken, and a SHA-256 of the whole file.
//!
//! **The content decides.** A file is fresh when it holds the same bytes,
//! whatever else happened to it: a touch, a chmod, an editor's save through a
//! temporary file and a rename, `git stash && git stash pop`, an overlayfs
//! copy-up. When the bytes are the same under a new file object, the new
//! identity is adopted (see [`Freshness::Fresh`]) so the next check is cheap
//! again. A deleted file and a change of file type are never fresh.
//!
//! The stat is only a shortcut for "unchanged" without reading the file, and
//! it is taken only where it is sound ([`shortcut_sound`]):
//!
//! - the file is at least [`ALWAYS_HASH_BELOW`] (128 KiB): a smaller one is
//!   hashed on every check, which costs at most a tenth of starting the
//!   process that checks it, and catches what no stat shows (a write through
//!   a shared mapping, a pseudo-file of size 0 whose text changes);
//! - the filesystem is a local one whose stat the kernel keeps
//!   ([`fs_keeps_stat`]: ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS, bcachefs,
//!   overlayfs, ...). Network and FUSE filesystems (NFS, SMB/CIFS, 9p,
//!   virtiofs, sshfs), where a client caches attributes or `touch -d` sets
//!   the ctime too, and pseudo-filesystems (procfs, sysfs) are always hashed;
//! - the timestamps can tell a later write: the ctime has a sub-second part
//!   (a whole-second ctime means a coarse clock, where a same-second,
//!   same-size rewrite keeps the whole stat), neither timestamp lies after the
//!   moment the view was taken (a clock behind the file's), and neither lies
//!   within [`RACY_WINDOW_NS`] before it (git's "racily clean": a write in the
//!   same timestamp tick as the view can leave the stat unchanged);
//! - identity, size, mtime and ctime are all unchanged.
//!
//! On those filesystems file timestamps come from the same kernel clock fsview
//! reads, so a clock that disagrees can only make a stat look untrustworthy
//! (and the file hashed), never hide a change. `FSVIEW_STAT_SHORTCUT=off`
//! turns the shortcut off altogether: every check hashes.
//!
//! A file too large to hash on every range read (over [`HASH_LIMIT`]) may be
//! fingerprinted by its stat alone: where the shortcut is sound at that
//! moment, or where the file is being written right now (a hash would be
//! stale by the next check, and would cost the whole file on every read).
//! Such a fingerprint is fresh only while the stat is exactly the same and
//! could vouch for the content; any change of stat counts as a change of
//! content, because nothing else can prove it is not one, and a racy one is
//! never fresh (fail closed: the view reads `modified` until read again).

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// How close before the moment of the view a file's timestamp may lie before
/// the stat is trusted no more: a second write in the same timestamp tick can
/// leave it unchanged. Two seconds covers the coarsest ticks of the
/// filesystems the shortcut is used on.
pub const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// Files smaller than this are hashed on every check; the stat shortcut is
/// for larger ones only. Measured by `scripts/bench-hash` on the 2-core CI
/// machine (SHA-256 instructions, warm cache): opening, reading and hashing
/// 128 KiB costs 0.10 ms, 16 KiB 0.02 ms, against 1 to 2.3 ms to start the
/// process that checks it (`stat -c %s`, idle to loaded); 1 MiB would cost
/// 0.8 ms, as much as the rest of the call.
pub const ALWAYS_HASH_BELOW: u64 = 128 * 1024;

/// Files up to this size are always hashed whole, even for a range read: the
/// hash costs little next to starting a process. Larger ones are hashed only
/// when read from their start or to the end, or when their stat cannot be
/// trusted.
pub const HASH_LIMIT: u64 = 32 * 1024 * 1024;

pub type Hash = [u8; 32];

/// XXH3-128 of the same bytes as a fingerprint's SHA-256: what a check
/// compares when the fingerprint has it. A file under
/// [`ALWAYS_HASH_BELOW`] is hashed on every check, and a batch of 10,000
/// 2 KB files spent a fifth of its time in SHA-256 (1.6 GB/s with the
/// processor's SHA instructions); XXH3 hashes them ten times as fast. It
/// is no defence against a change made to collide on purpose (nor is the
/// gate: whoever can write the file can write anything), and two different
/// texts share one by chance once in 2^128. The SHA-256 stays what views,
/// kept texts and exports name content by.
pub type Quick = [u8; 16];

/// XXH3-128 of `bytes` ([`Quick`]).
pub fn quick_bytes(bytes: &[u8]) -> Quick {
    xxhash_rust::xxh3::xxh3_128(bytes).to_le_bytes()
}
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
            // Saturating: `touch -d` can set a time past what i64
            // nanoseconds hold (the year 2262).
            mtime_ns: to_ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: to_ns(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Drop the identity (device, inode, birth time): what an imported
    /// fingerprint keeps when it was taken on another machine or boot,
    /// where those numbers name other file objects or none. No file has
    /// device 0 and inode 0, so such a stat matches no file by identity,
    /// and the content decides at its first check.
    pub fn forget_identity(&mut self) {
        self.dev = 0;
        self.ino = 0;
        self.btime_ns = None;
    }

    /// Whether the identity is unknown (see [`Stat::forget_identity`]).
    pub fn identity_unknown(&self) -> bool {
        self.dev == 0 && self.ino == 0
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
    /// XXH3-128 of the same bytes ([`Quick`]), which a check then compares
    /// instead; `None` where it was not computed (a fingerprint by stat
    /// alone, a session written before fsview kept it): SHA-256 decides.
    /// Never set without `hash`, and never of other bytes.
    pub quick: Option<Quick>,
}

impl Fingerprint {
    /// The fingerprint of `bytes` with `stat`, taken at `taken_ns`: both
    /// hashes of them.
    pub fn of_bytes(stat: Stat, taken_ns: i64, bytes: &[u8]) -> Fingerprint {
        Fingerprint {
            stat,
            taken_ns,
            hash: Some(hash_bytes(bytes)),
            quick: Some(quick_bytes(bytes)),
        }
    }
}

fn to_ns(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

impl Fingerprint {
    /// True when the stat's timestamps could not tell a write after the
    /// view from the state it saw (see [`stamps_tell_writes`]).
    pub fn is_racy(&self) -> bool {
        !stamps_tell_writes(&self.stat, self.taken_ns)
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

/// True when a write after `taken_ns` must move the stat's timestamps: the
/// ctime is finer than whole seconds, and neither timestamp lies after
/// `taken_ns` nor within [`RACY_WINDOW_NS`] before it.
///
/// A whole-second ctime means a filesystem with coarse timestamps (or a
/// ctime someone set, which local filesystems do not allow): a same-second,
/// same-size rewrite keeps the whole stat, and how long ago "the same
/// second" was depends on a clock fsview cannot read. A timestamp after
/// `taken_ns` means the clock that stamps the file runs ahead of fsview's:
/// no window measured on fsview's clock means anything then.
pub fn stamps_tell_writes(stat: &Stat, taken_ns: i64) -> bool {
    let latest = stat.mtime_ns.max(stat.ctime_ns);
    stat.ctime_ns.rem_euclid(1_000_000_000) != 0
        && latest <= taken_ns
        && latest < taken_ns.saturating_sub(RACY_WINDOW_NS)
}

pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Whether the stat shortcut is allowed at all: `FSVIEW_STAT_SHORTCUT`,
/// `on` by default, `off` to hash on every check. Any other value is
/// refused when the session file is opened ([`check_policy`]); here it
/// counts as `off`, failing safe.
pub fn shortcut_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        matches!(
            std::env::var("FSVIEW_STAT_SHORTCUT").as_deref(),
            Err(_) | Ok("") | Ok("on")
        )
    })
}

/// Refuse a `FSVIEW_STAT_SHORTCUT` that is neither `on` nor `off`, with a
/// message that says what to set.
pub fn check_policy() -> Result<(), String> {
    match std::env::var("FSVIEW_STAT_SHORTCUT").as_deref() {
        Err(_) | Ok("") | Ok("on") | Ok("off") => Ok(()),
        Ok(other) => Err(format!(
            "FSVIEW_STAT_SHORTCUT={other:?} is not a setting; use on (the default) or off (hash on every check)"
        )),
    }
}

/// Linux filesystem magic numbers (`statfs(2)`, `linux/magic.h`) of local
/// filesystems whose stat the kernel itself keeps: every write moves the
/// ctime, no one can set it, and timestamps come from the kernel's own
/// clock. Everything else (NFS, SMB/CIFS, 9p, FUSE and with it virtiofs and
/// sshfs, Ceph, AFS, procfs, sysfs, FAT, NTFS, ...) is hashed on every
/// check.
#[cfg(target_os = "linux")]
const LOCAL_FILESYSTEMS: &[u32] = &[
    0xEF53,      // ext2, ext3, ext4
    0x5846_5342, // XFS
    0x9123_683E, // Btrfs
    0x0102_1994, // tmpfs
    0x8584_58F6, // ramfs
    0xF2F5_2010, // F2FS
    0x2FC1_2FC1, // ZFS
    0xCA45_1A4E, // bcachefs
    0x794C_7630, // overlayfs
    0x3153_464A, // JFS
    0x3434,      // NILFS
];

/// True when the filesystem holding `path` keeps a stat the shortcut may
/// rely on (see [`LOCAL_FILESYSTEMS`]). Unknown, or not asked: false.
pub fn fs_keeps_stat(path: &Path) -> bool {
    fs_magic(path).is_some_and(is_local_magic)
}

/// The `statfs` type of the filesystem holding `path`, where the system
/// says (Linux).
fn fs_magic(path: &Path) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        let mut buf = std::mem::MaybeUninit::<libc::statfs>::uninit();
        // SAFETY: `c` is a valid C string and `buf` is large enough for the
        // struct statfs the call fills in; it is read only on success.
        let rc = unsafe { libc::statfs(c.as_ptr(), buf.as_mut_ptr()) };
        if rc != 0 {
            return None;
        }
        // SAFETY: statfs returned 0, so it filled `buf`.
        Some(unsafe { buf.assume_init() }.f_type as u32)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}

/// Filesystems whose files other machines write too (`statfs` types):
/// where SQLite's locks and shared memory do not hold between machines.
const NETWORK_FILESYSTEMS: &[(u32, &str)] = &[
    (0x6969, "NFS"),
    (0x517B, "SMB"),
    (0xFF53_4D42, "CIFS"),
    (0xFE53_4D42, "SMB2"),
    (0x0102_1997, "9p"),
    (0x00C3_6400, "Ceph"),
    (0x5346_414F, "AFS"),
    (0x6B41_4653, "AFS"),
    (0x7375_7245, "Coda"),
    (0x0BD0_0BD0, "Lustre"),
    (0x0116_1970, "GFS2"),
    (0x7461_636F, "OCFS2"),
];

/// The name of the network filesystem holding `path`, if it is on one
/// (one `statfs`). FUSE is not counted: it is as often local (container
/// storage, encryption layers) as remote, and cannot be told apart.
pub fn network_filesystem(path: &Path) -> Option<&'static str> {
    let magic = fs_magic(path)?;
    network_name(magic)
}

fn network_name(magic: u32) -> Option<&'static str> {
    NETWORK_FILESYSTEMS
        .iter()
        .find(|(m, _)| *m == magic)
        .map(|(_, name)| *name)
}

/// The same, for an open file (`fstatfs`).
pub fn fd_fs_keeps_stat(file: &File) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let mut buf = std::mem::MaybeUninit::<libc::statfs>::uninit();
        // SAFETY: the descriptor is open for the lifetime of `file`, and
        // `buf` is read only on success.
        let rc = unsafe { libc::fstatfs(file.as_raw_fd(), buf.as_mut_ptr()) };
        if rc != 0 {
            return false;
        }
        // SAFETY: fstatfs returned 0, so it filled `buf`.
        let magic = unsafe { buf.assume_init() }.f_type;
        is_local_magic(magic as u32)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        false
    }
}

fn is_local_magic(magic: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        LOCAL_FILESYSTEMS.contains(&magic)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = magic;
        false
    }
}

/// May `stat` stand in for the content of a file last fingerprinted as
/// `fp`, without reading it? Only when nothing could have changed the bytes
/// without moving the stat; see the module documentation. `fs_ok` says
/// whether the file's filesystem keeps its stat, asked last because it is
/// the one system call here.
pub fn shortcut_sound(fp: &Fingerprint, now: &Stat, fs_ok: impl FnOnce() -> bool) -> bool {
    shortcut_enabled()
        && now.ftype == FileType::File
        && now.size >= ALWAYS_HASH_BELOW
        && now.same_identity(&fp.stat)
        && now.same_times(&fp.stat)
        && stamps_tell_writes(&fp.stat, fp.taken_ns)
        && fs_ok()
}

/// May a file just opened for reading be fingerprinted by `stat` alone,
/// when the read does not reach its end? Only a file too large to hash on a
/// range read (over [`HASH_LIMIT`]), and then either where a later check
/// could trust the stat, or where the file is being written right now
/// ([`being_written`]): a hash of it would be out of date by the next
/// check, and for a log appended to every few milliseconds it would cost a
/// pass over the whole file on every read. Such a racy stat-only view can
/// never be proved fresh: it reads `modified` until read again (fail
/// closed), and its read costs only the range.
pub fn stat_may_stand_in(file: &File, stat: &Stat, taken_ns: i64) -> bool {
    stat.size > HASH_LIMIT
        && (being_written(stat, taken_ns)
            || (shortcut_enabled() && stamps_tell_writes(stat, taken_ns) && fd_fs_keeps_stat(file)))
}

/// True when a timestamp of the file lies within [`RACY_WINDOW_NS`] before
/// `taken_ns`, or after it: the file was written a moment ago, or is being
/// written now, so what a read sees may already be gone.
pub fn being_written(stat: &Stat, taken_ns: i64) -> bool {
    stat.mtime_ns.max(stat.ctime_ns) >= taken_ns.saturating_sub(RACY_WINDOW_NS)
}

/// How a file differs from what the agent saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The same file object holds other bytes.
    Content,
    /// Another file object stands at the path and holds other bytes (an
    /// editor's save by rename, a delete and recreate, with new text). The
    /// same bytes under another file object are no change at all.
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

    /// `Content` when `now` is the file object `was`, else `Replaced`.
    /// Other bytes than a view whose identity is unknown (imported from
    /// another machine) are `Content`: no file object was replaced there.
    pub fn of_bytes(was: &Stat, now: &Stat) -> Change {
        if now.same_identity(was) || was.identity_unknown() {
            Change::Content
        } else {
            Change::Replaced
        }
    }
}

/// The answer to "is this file still what the agent saw?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Freshness {
    /// Still the same bytes. `refreshed` is a fingerprint of the same bytes
    /// worth storing instead, if any: the file's new identity (a save by
    /// rename), or a stat the shortcut can use next time.
    Fresh {
        refreshed: Option<Fingerprint>,
    },
    Stale(Change),
}

/// Decide whether the file at `path` still holds what `fp` describes.
pub fn freshness(path: &Path, fp: &Fingerprint) -> io::Result<Freshness> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if is_gone(&e) => return Ok(Freshness::Stale(Change::Deleted)),
        Err(e) => return Err(e),
    };
    freshness_with(path, fp, &meta)
}

/// [`freshness`], for a caller that has just taken the `lstat` of `path`
/// (`meta`) itself: the gate resolving a path has, and need not pay twice.
pub fn freshness_with(path: &Path, fp: &Fingerprint, meta: &Metadata) -> io::Result<Freshness> {
    freshness_stat(path, fp, Stat::of(meta))
}

/// [`freshness_with`] from the [`Stat`] of that `lstat`.
fn freshness_stat(path: &Path, fp: &Fingerprint, now: Stat) -> io::Result<Freshness> {
    freshness_hashing(path, fp, now, || {
        let taken_ns = now_ns();
        let file = open_nonblocking(path)?;
        let stat = Stat::of(&file.metadata()?);
        Ok((sum_open(file, &stat, Algo::of(fp))?, stat, taken_ns))
    })
}

/// [`freshness`] of a file the caller has open (`file`, opened without
/// following a final link and never blocking, see [`open_nonblocking`]),
/// with `meta` its `fstat` taken right after the open and `taken_ns` the
/// moment before the open: a batch of checks opens each file once, and the
/// stat it decides by is the stat of the bytes it hashes.
pub fn freshness_of_open(
    path: &Path,
    fp: &Fingerprint,
    file: File,
    meta: &Metadata,
    taken_ns: i64,
) -> io::Result<Freshness> {
    let stat = Stat::of(meta);
    freshness_hashing(path, fp, stat, || {
        Ok((sum_open(file, &stat, Algo::of(fp))?, stat, taken_ns))
    })
}

/// A file opened and, when small enough that its stat can never stand in
/// for its bytes, hashed before its record is known ([`hashed_ahead`]):
/// a batch of checks reads the session meanwhile.
pub struct Ahead {
    /// The `fstat` of the open file.
    stat: Stat,
    /// The moment before the open.
    taken_ns: i64,
    /// The [`Quick`] hash of its bytes, for a file under
    /// [`ALWAYS_HASH_BELOW`].
    hash: Option<io::Result<Sum>>,
}

impl Ahead {
    /// The `fstat` taken when the file was opened.
    pub fn stat(&self) -> &Stat {
        &self.stat
    }
}

/// Open the regular file at `canonical` (never following a final link,
/// never blocking) and hash it when it is under [`ALWAYS_HASH_BELOW`]
/// bytes: what every check of it would do first. `None` for a link,
/// nothing there or anything but a regular file (the caller decides those
/// the single path's way).
pub fn hashed_ahead(canonical: &Path) -> Option<Ahead> {
    let taken_ns = now_ns();
    let (file, meta) = crate::paths::open_plain(canonical).ok()?;
    let stat = Stat::of(&meta);
    if stat.ftype != FileType::File {
        return None;
    }
    let hash = (stat.size < ALWAYS_HASH_BELOW).then(|| sum_open(file, &stat, Algo::Quick));
    Some(Ahead {
        stat,
        taken_ns,
        hash,
    })
}

/// [`freshness`] of a file opened (and hashed, when small) by
/// [`hashed_ahead`]: decided by the stat and bytes taken then; a larger
/// file whose stat cannot vouch for it is hashed now. `None` when the
/// bytes were hashed and `fp` has no [`Quick`] hash to compare (a session
/// from before fsview kept them): check the file alone.
pub fn freshness_ahead(
    path: &Path,
    fp: &Fingerprint,
    ahead: Ahead,
) -> Option<io::Result<Freshness>> {
    let Ahead {
        stat,
        taken_ns,
        hash,
    } = ahead;
    Some(match hash {
        Some(_) if fp.quick.is_none() && fp.hash.is_some() => return None,
        Some(hash) => freshness_hashing(path, fp, stat, || Ok((hash?, stat, taken_ns))),
        None => freshness_stat(path, fp, stat),
    })
}

/// Which hash a check computes of a file's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Sha,
    Quick,
}

impl Algo {
    /// The hash `fp` is compared by: its [`Quick`] hash when it has one.
    pub fn of(fp: &Fingerprint) -> Algo {
        match fp.quick {
            Some(_) => Algo::Quick,
            None => Algo::Sha,
        }
    }

    /// The hash of `bytes`.
    pub fn sum(self, bytes: &[u8]) -> Sum {
        match self {
            Algo::Sha => Sum::Sha(hash_bytes(bytes)),
            Algo::Quick => Sum::Quick(quick_bytes(bytes)),
        }
    }
}

/// A hash of a file's bytes, as [`Algo`] asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sum {
    Sha(Hash),
    Quick(Quick),
}

/// The decision of [`freshness_with`], with `hash` giving the file's hash,
/// the stat of the file hashed and the moment before that stat, when the
/// content must decide.
fn freshness_hashing(
    path: &Path,
    fp: &Fingerprint,
    now: Stat,
    hash: impl FnOnce() -> io::Result<(Sum, Stat, i64)>,
) -> io::Result<Freshness> {
    if now.ftype != fp.stat.ftype {
        return Ok(Freshness::Stale(Change::Type));
    }
    if shortcut_sound(fp, &now, || fs_keeps_stat(path)) {
        return Ok(Freshness::Fresh { refreshed: None });
    }
    let Some(sha) = fp.hash else {
        // Fingerprinted by stat alone and the stat cannot vouch for it:
        // nothing can prove the content did not change.
        return Ok(Freshness::Stale(Change::of_bytes(&fp.stat, &now)));
    };
    // Another size is other bytes, where the filesystem's stat can be
    // believed (a network client's cached size may be stale).
    if now.size != fp.stat.size && shortcut_enabled() && fs_keeps_stat(path) {
        return Ok(Freshness::Stale(Change::of_bytes(&fp.stat, &now)));
    }
    let (got, stat, taken_ns) = match hash() {
        Ok(x) => x,
        Err(e) if is_gone(&e) => return Ok(Freshness::Stale(Change::Deleted)),
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            return Ok(Freshness::Stale(Change::Type))
        }
        Err(e) => return Err(e),
    };
    let same = match got {
        Sum::Quick(q) => fp.quick == Some(q),
        Sum::Sha(h) => h == sha,
    };
    if !same {
        return Ok(Freshness::Stale(Change::of_bytes(&fp.stat, &stat)));
    }
    // The same bytes: the same hashes, both of them.
    let better = Fingerprint {
        stat,
        taken_ns,
        hash: fp.hash,
        quick: fp.quick,
    };
    Ok(Freshness::Fresh {
        refreshed: worth_storing(fp, &better).then_some(better),
    })
}

/// Whether `better` (same bytes as `fp`) is worth a write to the session
/// file: it names the file object now at the path (a save by rename, so
/// hard links and the next shortcut find it), or it lets the shortcut skip
/// the next hash where `fp` could not. A small file is hashed on every check
/// anyway: a new mtime alone is not worth a write for it.
fn worth_storing(fp: &Fingerprint, better: &Fingerprint) -> bool {
    if !better.stat.same_identity(&fp.stat) {
        return true;
    }
    better.stat.size >= ALWAYS_HASH_BELOW
        && shortcut_enabled()
        && stamps_tell_writes(&better.stat, better.taken_ns)
        && (!better.stat.same_times(&fp.stat) || !stamps_tell_writes(&fp.stat, fp.taken_ns))
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
    let file = open_nonblocking(path)?;
    let stat = Stat::of(&file.metadata()?);
    Ok((hash_open(file, &stat)?, stat))
}

/// Hash the whole of an open file whose `fstat` is `stat` (a regular file,
/// else an `InvalidInput` error saying what it is).
pub fn hash_open(file: File, stat: &Stat) -> io::Result<Hash> {
    match sum_open(file, stat, Algo::Sha)? {
        Sum::Sha(h) => Ok(h),
        Sum::Quick(_) => unreachable!("asked for SHA-256"),
    }
}

/// [`hash_open`] by the hash `algo` names.
pub fn sum_open(mut file: File, stat: &Stat, algo: Algo) -> io::Result<Sum> {
    if stat.ftype != FileType::File {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}", stat.ftype.describe()),
        ));
    }
    thread_local! {
        // One buffer for every file a thread hashes: a batch of thousands
        // of small files allocates and zeroes it once.
        static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    // Sized to the file (up to 256 KiB), with one spare byte so that the
    // first read of a file that did not grow sees all of it.
    let len = usize::try_from(stat.size)
        .unwrap_or(usize::MAX)
        .saturating_add(1)
        .clamp(4096, 256 * 1024);
    BUF.with_borrow_mut(|buf| {
        if buf.len() < len {
            buf.resize(len, 0);
        }
        let buf = &mut buf[..len];
        let mut hasher: Option<Hasher> = None;
        loop {
            let n = match file.read(buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            // A first read that returned exactly the size the stat gave,
            // short of the buffer, met the end of the file: hashed in one
            // piece, no read more to find the end. Anything else (grown,
            // shrunk, a short read) is hashed piece by piece to the end.
            if hasher.is_none() && n < buf.len() && n as u64 == stat.size {
                return Ok(algo.sum(&buf[..n]));
            }
            hasher
                .get_or_insert_with(|| Hasher::new(algo))
                .update(&buf[..n]);
        }
        Ok(hasher.unwrap_or_else(|| Hasher::new(algo)).finish())
    })
}

/// A hash of bytes given in pieces, as [`Algo`] says.
enum Hasher {
    Sha(Box<Sha256>),
    Quick(Box<xxhash_rust::xxh3::Xxh3>),
}

impl Hasher {
    fn new(algo: Algo) -> Hasher {
        match algo {
            Algo::Sha => Hasher::Sha(Box::default()),
            Algo::Quick => Hasher::Quick(Box::default()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Hasher::Sha(h) => h.update(bytes),
            Hasher::Quick(h) => h.update(bytes),
        }
    }

    fn finish(self) -> Sum {
        match self {
            Hasher::Sha(h) => Sum::Sha((*h).finalize().into()),
            Hasher::Quick(h) => Sum::Quick(h.digest128().to_le_bytes()),
        }
    }
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
            quick: None,
        }
    }

    /// A fingerprint as if taken `secs` seconds after the file's last change.
    fn aged(mut fp: Fingerprint, secs: i64) -> Fingerprint {
        fp.taken_ns = fp.stat.mtime_ns.max(fp.stat.ctime_ns) + secs * 1_000_000_000;
        fp
    }

    fn big(dir: &Path, name: &str, byte: u8) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, vec![byte; ALWAYS_HASH_BELOW as usize]).unwrap();
        p
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

    // The rule for the shortcut, case by case, on one unchanged stat.
    #[test]
    fn the_stat_shortcut_is_taken_only_where_sound() {
        let dir = tempfile::tempdir().unwrap();
        let p = big(dir.path(), "a", b'a');
        let fp = aged(fingerprint(&p), 10);
        let now = fp.stat;
        assert!(shortcut_sound(&fp, &now, || true));
        // A filesystem that does not keep its stat (NFS, FUSE, procfs, ...).
        assert!(!shortcut_sound(&fp, &now, || false));
        // Small files are always hashed.
        let mut small = fp.clone();
        small.stat.size = ALWAYS_HASH_BELOW - 1;
        assert!(!shortcut_sound(&small, &small.stat, || true));
        // Racily clean: the view was taken within the window of the change.
        let racy = aged(fp.clone(), 1);
        assert!(!shortcut_sound(&racy, &now, || true));
        // A clock behind the file's: its timestamps lie after the view.
        let behind = aged(fp.clone(), -5);
        assert!(!shortcut_sound(&behind, &now, || true));
        // Coarse timestamps: a whole-second ctime cannot tell a same-second
        // rewrite, however long ago fsview's clock says that second was.
        let mut coarse = fp.clone();
        coarse.stat.ctime_ns -= coarse.stat.ctime_ns.rem_euclid(1_000_000_000);
        coarse.stat.mtime_ns = coarse.stat.ctime_ns;
        let coarse = aged(coarse, 3600);
        assert!(!shortcut_sound(&coarse, &coarse.stat, || true));
        // Any stat change.
        let mut moved = now;
        moved.mtime_ns += 1;
        assert!(!shortcut_sound(&fp, &moved, || true));
        let mut other = now;
        other.ino += 1;
        assert!(!shortcut_sound(&fp, &other, || true));
    }

    // Issue 9, clock skew: a same-size rewrite on a coarse-timestamp
    // filesystem whose clock lags fsview's, seen as a stat that did not move
    // at all although the bytes did.
    #[test]
    fn coarse_timestamps_from_a_lagging_clock_are_hashed() {
        let dir = tempfile::tempdir().unwrap();
        let p = big(dir.path(), "a", b'a');
        let mut fp = fingerprint(&p);
        std::fs::write(&p, vec![b'b'; ALWAYS_HASH_BELOW as usize]).unwrap();
        // What such a filesystem reports: the same whole second for both
        // writes, ten seconds behind fsview's clock.
        let second = fp.stat.ctime_ns - fp.stat.ctime_ns.rem_euclid(1_000_000_000);
        fp.stat = Stat::of(&std::fs::metadata(&p).unwrap());
        fp.stat.mtime_ns = second;
        fp.stat.ctime_ns = second;
        fp.taken_ns = second + 10_000_000_000;
        assert!(fp.hash.is_some());
        assert!(!shortcut_sound(&fp, &fp.stat, || true));
    }

    #[test]
    fn stat_only_fingerprint_fails_closed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            fs_keeps_stat(dir.path()),
            "the temporary directory must be on a local filesystem for this test"
        );
        let p = big(dir.path(), "a", b'a');
        let mut fp = aged(fingerprint(&p), 10);
        fp.hash = None;
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

    // The content decides: the same bytes under a new file object are fresh,
    // and the new identity is handed back to be stored; other bytes under a
    // new file object are `replaced`.
    #[test]
    fn same_bytes_under_a_new_file_object_are_fresh() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a");
        std::fs::write(&p, "text\n").unwrap();
        let fp = fingerprint(&p);
        let tmp = dir.path().join("a.tmp");
        std::fs::write(&tmp, "text\n").unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        let now = Stat::of(&std::fs::metadata(&p).unwrap());
        assert!(!now.same_identity(&fp.stat));
        match freshness(&p, &fp).unwrap() {
            Freshness::Fresh {
                refreshed: Some(better),
            } => assert!(better.stat.same_identity(&now)),
            other => panic!("{other:?}"),
        }
        std::fs::write(&tmp, "other\n").unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        assert_eq!(
            freshness(&p, &fp).unwrap(),
            Freshness::Stale(Change::Replaced)
        );
    }

    // Issue 9, pseudo-files: /proc/uptime has size 0 and a fixed mtime while
    // its text changes; it is hashed, never trusted by its stat.
    #[cfg(target_os = "linux")]
    #[test]
    fn procfs_is_not_a_filesystem_that_keeps_its_stat() {
        let uptime = Path::new("/proc/uptime");
        assert!(!fs_keeps_stat(uptime));
        assert!(!fs_keeps_stat(Path::new("/sys/kernel")));
    }

    // Issue 13: a session file on a network filesystem is refused; the
    // test directory is local, and the types are told apart by number.
    #[test]
    fn network_filesystems_are_known_by_type() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(network_filesystem(dir.path()), None);
        assert_eq!(network_name(0x6969), Some("NFS"));
        assert_eq!(network_name(0xFF53_4D42), Some("CIFS"));
        assert_eq!(network_name(0x0102_1997), Some("9p"));
        assert_eq!(network_name(0x6573_5546), None); // FUSE: local or not
        assert_eq!(network_name(0xEF53), None);
        for (m, _) in NETWORK_FILESYSTEMS {
            assert!(!is_local_magic(*m));
        }
    }

    #[test]
    fn far_future_times_saturate() {
        assert_eq!(to_ns(i64::MAX / 2, 5), i64::MAX);
        assert_eq!(to_ns(-(i64::MAX / 2), 0), i64::MIN);
        assert_eq!(to_ns(3, 7), 3_000_000_007);
    }
}
