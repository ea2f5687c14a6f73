//! The session file's VFS: SQLite's own `unix` VFS, except that a WAL file
//! SQLite empties keeps its pages.
//!
//! Every fsview call is a short process, the only one with the session
//! file open, so at its close SQLite checkpoints the WAL and truncates it to
//! zero bytes (`journal_size_limit`, persistent WAL), and the next call
//! writes its pages into a fresh file. On ext4 a C loop writes 5 pages (a
//! re-read's) into a truncated file in 20 us and over existing pages in
//! 4.7 us, and the truncation takes 9.5 us more: about 25 us of every
//! recording call. Here, emptying a WAL of up to [`KEEP`] bytes writes
//! zeros over its 32-byte header instead. SQLite reads a WAL whose header
//! is not valid as empty, and its next writer writes a new header with new
//! random salts: the frames left after it carry the old salts and are
//! never valid again. SQLite itself leaves frames past the end of a WAL it
//! restarts in place. Only SQLite's "empty the WAL" changes: a WAL over
//! [`KEEP`] bytes (after a large transaction) and any truncation to another
//! size are done as SQLite asks, and `fsview-session gc` truncates
//! ([`truncating`]).
//!
//! The shared-memory index (`-shm`) likewise: the first connection of a
//! call resets it by writing zeros over its header instead of truncating
//! it, so it is not extended again page by page at every call
//! ([`shm_ftruncate`]).
//!
//! Everything else is the `unix` VFS itself: its open, locks, reads,
//! writes and shared memory, on the same files, so processes using the
//! plain `unix` VFS (older fsview, the `sqlite3` shell) share the file
//! with this one as before.

use std::cell::Cell;
use std::ffi::{c_char, c_int, CStr};
use std::sync::OnceLock;

use rusqlite::ffi;

/// The VFS's name, for [`rusqlite::Connection::open_with_flags_and_vfs`].
pub(crate) const NAME: &CStr = c"fsview";

/// The largest WAL emptied by invalidating its header (a recording call
/// writes a few pages; `PRAGMA journal_size_limit` is set to the same).
pub(crate) const KEEP: i64 = 256 * 1024;

thread_local! {
    /// Set by [`truncating`]: SQLite empties the WAL in the thread that
    /// runs the statement.
    static TRUNCATE: Cell<bool> = const { Cell::new(false) };
}

/// The `unix` VFS's methods for a WAL file, and the same with our
/// `xTruncate`.
struct WalMethods {
    unix: *const ffi::sqlite3_io_methods,
    ours: ffi::sqlite3_io_methods,
}

// SAFETY: `unix` points to SQLite's static, immutable method table.
unsafe impl Send for WalMethods {}
unsafe impl Sync for WalMethods {}

static WAL_METHODS: OnceLock<WalMethods> = OnceLock::new();

/// Register the VFS with SQLite (once per process); whether it is there to
/// open connections with. Without SQLite's `unix` VFS (another system),
/// it is not, and connections use SQLite's default.
pub(crate) fn register() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find and sqlite3_vfs_register are safe to
        // call at any time; the VFS registered is a copy of `unix` that is
        // never freed, as SQLite requires.
        unsafe {
            let unix = ffi::sqlite3_vfs_find(c"unix".as_ptr());
            if unix.is_null() || (*unix).xOpen.is_none() {
                return false;
            }
            let mut vfs: ffi::sqlite3_vfs = *unix;
            vfs.pNext = std::ptr::null_mut();
            vfs.zName = NAME.as_ptr();
            vfs.pAppData = unix.cast();
            vfs.xOpen = Some(open);
            let vfs = Box::leak(Box::new(vfs));
            if ffi::sqlite3_vfs_register(vfs, 0) != ffi::SQLITE_OK {
                return false;
            }
            keep_shm_pages(unix);
            true
        }
    })
}

/// The system call `ftruncate` as the `unix` VFS had it before
/// [`keep_shm_pages`].
static FTRUNCATE: OnceLock<Ftruncate> = OnceLock::new();

type Ftruncate = unsafe extern "C" fn(c_int, libc::off_t) -> c_int;

/// The size SQLite truncates a shared-memory index to when the first
/// connection attaches: "an arbitrary small number, less than the -shm
/// header size", used for nothing else (a database, WAL or journal is
/// truncated to a whole number of pages, or to zero).
const SHM_RESET: libc::off_t = 3;

/// The bytes of a shared-memory index that say whether it is valid: the
/// two copies of the WAL-index header and the checkpoint information.
const SHM_HEADER: usize = 136;

/// Reset a shared-memory index by writing zeros over its header instead of
/// truncating it (see [`shm_ftruncate`]). The `unix` VFS calls its system
/// calls through one table for every connection of the process, so this is
/// set once, on that table.
///
/// # Safety
///
/// `unix` is SQLite's `unix` VFS.
unsafe fn keep_shm_pages(unix: *mut ffi::sqlite3_vfs) {
    // SAFETY: the `unix` VFS's own xGetSystemCall and xSetSystemCall, with
    // a name it knows; the function set has ftruncate's signature.
    unsafe {
        let (Some(get), Some(set)) = ((*unix).xGetSystemCall, (*unix).xSetSystemCall) else {
            return;
        };
        let Some(real) = get(unix, c"ftruncate".as_ptr()) else {
            return;
        };
        let real = std::mem::transmute::<unsafe extern "C" fn(), Ftruncate>(real);
        if FTRUNCATE.set(real).is_ok() {
            let ours = std::mem::transmute::<Ftruncate, unsafe extern "C" fn()>(shm_ftruncate);
            set(unix, c"ftruncate".as_ptr(), Some(ours));
        }
    }
}

/// `ftruncate`, except SQLite's reset of a shared-memory index.
///
/// The first connection to a WAL database truncates its `-shm` file (to
/// [`SHM_RESET`] bytes) so that it holds no valid header, and the next
/// mapping extends it again page by page: one write per 4 KiB page, and
/// fresh pages in memory, at every fsview call. Writing zeros over the
/// header does the same for SQLite: a header whose `isInit` is 0 is not
/// valid, so the connection rebuilds the index from the WAL (which SQLite
/// does whenever it finds no valid header), and the hash tables past the
/// header are zeroed by SQLite before their first entry is written, as
/// they are when a WAL restarts in place. The caller holds the index's
/// exclusive "dead man switch" lock, so no other connection has it mapped.
/// A file smaller than the header, or within [`truncating`], is truncated.
unsafe extern "C" fn shm_ftruncate(fd: c_int, size: libc::off_t) -> c_int {
    let real = *FTRUNCATE.get().expect("set before this is");
    if size == SHM_RESET && !TRUNCATE.get() {
        // SAFETY: fstat and pwrite on the descriptor SQLite passed, into
        // and from buffers of the sizes given.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::fstat(fd, &mut st) == 0 && st.st_size >= SHM_HEADER as libc::off_t {
                let zeros = [0u8; SHM_HEADER];
                if libc::pwrite(fd, zeros.as_ptr().cast(), SHM_HEADER, 0) == SHM_HEADER as isize {
                    return 0;
                }
            }
        }
    }
    // SAFETY: the system call itself, as SQLite would have made it.
    unsafe { real(fd, size) }
}

/// Run `f`, in which a WAL emptied is truncated, as SQLite asks: for a
/// command whose point is to give the space back.
pub(crate) fn truncating<T>(f: impl FnOnce() -> T) -> T {
    let was = TRUNCATE.replace(true);
    let out = f();
    TRUNCATE.set(was);
    out
}

/// Open through the `unix` VFS; a WAL file gets our `xTruncate`.
unsafe extern "C" fn open(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite passes this VFS (whose pAppData is the `unix` VFS,
    // with an xOpen: see `register`) and a file of its szOsFile bytes,
    // which is `unix`'s; the `unix` VFS opens it as its own.
    unsafe {
        let unix = (*vfs).pAppData.cast::<ffi::sqlite3_vfs>();
        let unix_open = (*unix).xOpen.expect("register checked it");
        let rc = unix_open(unix, name, file, flags, out_flags);
        if rc == ffi::SQLITE_OK && flags & ffi::SQLITE_OPEN_WAL != 0 {
            let methods = (*file).pMethods;
            if !methods.is_null() && (*methods).xTruncate.is_some() {
                let wal = WAL_METHODS.get_or_init(|| WalMethods {
                    unix: methods,
                    ours: ffi::sqlite3_io_methods {
                        xTruncate: Some(wal_truncate),
                        ..*methods
                    },
                });
                // Another locking style's methods (not seen on Linux) keep
                // their own truncation.
                if std::ptr::eq(wal.unix, methods) {
                    (*file).pMethods = &wal.ours;
                }
            }
        }
        rc
    }
}

/// Empty a WAL of up to [`KEEP`] bytes by writing zeros over its header;
/// anything else as the `unix` VFS does.
unsafe extern "C" fn wal_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let unix = WAL_METHODS
        .get()
        .expect("set when the file was opened")
        .unix;
    // SAFETY: `file` is a WAL file the `unix` VFS opened (see `open`), and
    // `unix` is its own method table, with these methods.
    unsafe {
        let unix = &*unix;
        let truncate = unix.xTruncate.expect("checked at open");
        if size != 0 || TRUNCATE.get() {
            return truncate(file, size);
        }
        let (Some(file_size), Some(write)) = (unix.xFileSize, unix.xWrite) else {
            return truncate(file, size);
        };
        let mut now: ffi::sqlite3_int64 = 0;
        if file_size(file, &mut now) != ffi::SQLITE_OK || now > KEEP {
            return truncate(file, size);
        }
        if now == 0 {
            return ffi::SQLITE_OK;
        }
        let zeros = [0u8; 32];
        write(file, zeros.as_ptr().cast(), now.min(32) as c_int, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, OpenFlags};

    fn open(path: &std::path::Path) -> Connection {
        assert!(register());
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
        let c = Connection::open_with_flags_and_vfs(path, flags, NAME).unwrap();
        let mut on: c_int = 1;
        // SAFETY: a live connection; the op reads an int during the call.
        unsafe {
            ffi::sqlite3_file_control(
                c.handle(),
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_PERSIST_WAL,
                (&mut on as *mut c_int).cast(),
            );
        }
        c.execute_batch(&format!(
            "PRAGMA journal_mode=WAL; PRAGMA journal_size_limit={KEEP};"
        ))
        .unwrap();
        c
    }

    /// A connection to `db` with a table `t` of 20 rows, each inserted in
    /// a transaction of its own.
    fn filled(db: &std::path::Path) -> Connection {
        let c = open(db);
        c.execute_batch("CREATE TABLE t(x)").unwrap();
        for i in 0..20 {
            c.execute("INSERT INTO t VALUES(?1)", [i]).unwrap();
        }
        c
    }

    fn count(c: &Connection) -> i64 {
        c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    // The WAL keeps its pages with its header zeroed, and is empty to the
    // next connection: of this VFS, and of SQLite's own. A new transaction
    // after it is read back whole, past the frames left from before.
    #[test]
    fn an_emptied_wal_keeps_its_pages_and_reads_as_empty() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("s.db");
        let wal = d.path().join("s.db-wal");
        drop(filled(&db));
        let bytes = std::fs::read(&wal).unwrap();
        assert!(bytes.len() > 4096, "the WAL kept its pages");
        assert_eq!(&bytes[..32], &[0u8; 32], "its header invalidated");
        {
            let c = open(&db);
            assert_eq!(count(&c), 20);
            c.execute("INSERT INTO t VALUES(20)", []).unwrap();
        }
        // SQLite's own VFS reads the same (and, without a persistent WAL,
        // deletes it at close).
        let plain = Connection::open(&db).unwrap();
        assert_eq!(count(&plain), 21);
        let ok: String = plain
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        drop(plain);
        assert!(!wal.exists());
    }

    // Killed before its close, a writer leaves a WAL whose frames are the
    // data: the next connection recovers them, the frames of an earlier
    // generation past them ignored.
    #[test]
    fn a_wal_left_by_a_killed_writer_is_recovered() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("s.db");
        drop(filled(&db));
        let c = open(&db);
        c.execute("INSERT INTO t VALUES(20)", []).unwrap();
        // As if killed: the WAL holds the insert, uncheckpointed.
        let copy = d.path().join("copy.db");
        std::fs::copy(&db, &copy).unwrap();
        std::fs::copy(d.path().join("s.db-wal"), d.path().join("copy.db-wal")).unwrap();
        drop(c);
        let again = open(&copy);
        assert_eq!(count(&again), 21);
    }

    // The first connection resets the shared-memory index by zeroing its
    // header, not by truncating it: an index left by a killed process that
    // says the WAL holds frames it no longer does is not trusted, and the
    // WAL is read again.
    #[test]
    fn a_stale_shared_memory_index_is_reset_by_its_header() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("s.db");
        let shm = d.path().join("s.db-shm");
        let c = filled(&db);
        // A valid index of a WAL of 21 transactions.
        let stale = std::fs::read(&shm).unwrap();
        assert_ne!(&stale[..SHM_HEADER], &[0u8; SHM_HEADER][..]);
        let busy: i64 = c
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
            .unwrap();
        assert_eq!(busy, 0);
        // The WAL starts again: one transaction, under new salts.
        c.execute("INSERT INTO t VALUES(20)", []).unwrap();
        let copy = d.path().join("copy.db");
        std::fs::copy(&db, &copy).unwrap();
        std::fs::copy(d.path().join("s.db-wal"), d.path().join("copy.db-wal")).unwrap();
        std::fs::write(d.path().join("copy.db-shm"), &stale).unwrap();
        drop(c);
        let again = open(&copy);
        assert_eq!(count(&again), 21);
        let ok: String = again
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
        // Reset in place: the index kept its size (a truncated one is
        // extended again only as far as the connection maps it).
        assert_eq!(
            std::fs::metadata(d.path().join("copy.db-shm"))
                .unwrap()
                .len(),
            stale.len() as u64
        );
    }

    #[test]
    fn gc_truncates_for_real() {
        let d = tempfile::tempdir().unwrap();
        let db = d.path().join("s.db");
        let c = open(&db);
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES(1);")
            .unwrap();
        let wal = d.path().join("s.db-wal");
        let checkpoint = || -> i64 {
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
                .unwrap()
        };
        assert_eq!(checkpoint(), 0);
        assert_eq!(&std::fs::read(&wal).unwrap()[..32], &[0u8; 32]);
        c.execute("INSERT INTO t VALUES(2)", []).unwrap();
        assert_eq!(truncating(checkpoint), 0);
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0);
        assert_eq!(count(&c), 2);
    }
}
