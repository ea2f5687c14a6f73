//! The session file: one SQLite database shared by every fsview process.
//!
//! Opening is careful about whose file it is. A missing or zero-length file
//! (as `mktemp` makes) becomes a new session file; anything else must carry
//! SQLite's magic, fsview's `application_id` and a `user_version` this build
//! knows, or it is refused before SQLite writes a byte to it. A file from a
//! newer fsview is refused, not migrated down.
//!
//! Writes are short `BEGIN IMMEDIATE` transactions in WAL mode, so readers
//! never wait and writers queue on SQLite's lock with a busy timeout; a
//! transaction that still finds the file busy is retried with backoff for up
//! to a minute. A process killed mid-write leaves the last committed state:
//! that is what SQLite's journal is for.
//!
//! Viewed text is stored once per content (keyed by its SHA-256) within a
//! size budget; past it the least recently used texts are dropped, while the
//! fingerprints that decide freshness stay.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, ErrorCode, OpenFlags, OptionalExtension};

use crate::error::{quote, Error, Result};
use crate::fingerprint::{self, FileType, Fingerprint, Hash, Quick, Stat};
use crate::view::{Kind, Released, Source};

/// 'FSVW': marks a SQLite file as an fsview session file.
pub const APPLICATION_ID: i32 = 0x4653_5657;
/// The schema this build writes. Bump it with a new entry in [`MIGRATIONS`].
pub const SCHEMA_VERSION: i32 = 8;
/// Default budget for kept texts.
pub const DEFAULT_TEXT_BUDGET: i64 = 64 * 1024 * 1024;

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
const WRITE_DEADLINE: Duration = Duration::from_secs(60);

/// Schema migrations, in order: entry `i` takes `user_version` `i` to `i + 1`.
/// Forward only: a file is never migrated down, and an entry, once
/// released, never changes.
pub(crate) const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE meta(
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE sessions(
    sid        TEXT PRIMARY KEY,
    created_ns INTEGER NOT NULL,
    parent     TEXT
) WITHOUT ROWID;
-- One row per file a session has seen: its path and its fingerprint when
-- last viewed. Every view of the row saw that same content.
CREATE TABLE files(
    id        INTEGER PRIMARY KEY,
    sid       TEXT NOT NULL,
    path      BLOB NOT NULL,
    dev       INTEGER NOT NULL,
    ino       INTEGER NOT NULL,
    btime_ns  INTEGER,
    ftype     INTEGER NOT NULL,
    size      INTEGER NOT NULL,
    mtime_ns  INTEGER NOT NULL,
    ctime_ns  INTEGER NOT NULL,
    taken_ns  INTEGER NOT NULL,
    hash      BLOB,
    viewed_ns INTEGER NOT NULL,
    UNIQUE(sid, path)
);
CREATE INDEX files_inode ON files(sid, dev, ino);
CREATE TABLE views(
    file_id     INTEGER NOT NULL,
    kind        TEXT NOT NULL,
    line_offset INTEGER NOT NULL,
    line_count  INTEGER NOT NULL,
    source      TEXT NOT NULL,
    total_lines INTEGER,
    shown_hash  BLOB NOT NULL,
    text_hash   BLOB,
    viewed_ns   INTEGER NOT NULL,
    PRIMARY KEY(file_id, kind, line_offset, line_count)
) WITHOUT ROWID;
-- Kept texts, once per content. When each was last used lives apart from
-- the body: updating a row rewrites all of it, overflow pages included.
CREATE TABLE texts(
    hash BLOB PRIMARY KEY,
    body BLOB NOT NULL
);
CREATE TABLE text_use(
    hash    BLOB PRIMARY KEY,
    size    INTEGER NOT NULL,
    used_ns INTEGER NOT NULL
);
CREATE INDEX text_use_used ON text_use(used_ns);
-- Memoized context parts (system, user) and the pending injection.
CREATE TABLE context(
    sid      TEXT NOT NULL,
    part     TEXT NOT NULL,
    body     BLOB NOT NULL,
    built_ns INTEGER NOT NULL,
    -- ctx-build's JSON about the part: its files and their fingerprints,
    -- its warnings, the options it was built with.
    meta     TEXT,
    PRIMARY KEY(sid, part)
) WITHOUT ROWID;
CREATE TABLE nested(
    sid  TEXT NOT NULL,
    path BLOB NOT NULL,
    PRIMARY KEY(sid, path)
) WITHOUT ROWID;
CREATE TABLE events(
    id      INTEGER PRIMARY KEY,
    sid     TEXT NOT NULL,
    at_ns   INTEGER NOT NULL,
    tool    TEXT NOT NULL,
    action  TEXT NOT NULL,
    path    BLOB,
    verdict TEXT,
    detail  TEXT
);
CREATE INDEX events_sid ON events(sid, id);
"#,
    // 2: views copied from another session, and what reminders told.
    r#"
-- A view copied from another session (fsview-session fork, import): this
-- conversation never saw its text, so a re-read is not "unchanged" for it
-- until it is read here. Recording the view here clears the mark.
ALTER TABLE views ADD COLUMN copied INTEGER NOT NULL DEFAULT 0;
-- What a reminder last told the agent about a file it had read: the file's
-- state then (its fingerprint, and the text, kept for the next diff), or
-- that it was deleted or no longer a regular file. A read of the file
-- clears it; until then the gate refuses, and the next reminder tells only
-- what changed since (a revert included).
CREATE TABLE told(
    file_id   INTEGER PRIMARY KEY,
    change    TEXT NOT NULL,
    dev       INTEGER,
    ino       INTEGER,
    btime_ns  INTEGER,
    ftype     INTEGER,
    size      INTEGER,
    mtime_ns  INTEGER,
    ctime_ns  INTEGER,
    taken_ns  INTEGER,
    hash      BLOB,
    text_hash BLOB,
    told_ns   INTEGER NOT NULL
);
-- Whatever deletes a file's record (forget, reset, drop, a replaced
-- session) deletes what was told about it: row ids are reused.
CREATE TRIGGER told_gone AFTER DELETE ON files BEGIN
    DELETE FROM told WHERE file_id = old.id;
END;
"#,
    // 3: what the conversation holds, and where each view came from in it.
    r#"
-- Where in the conversation the view came from: the agent's own id for
-- what showed it (Claude Code: the tool_use id of a tool call, the uuid of
-- a transcript entry for a file attached to a prompt); NULL when unknown.
ALTER TABLE views ADD COLUMN origin TEXT;
-- Why and when the conversation stopped holding the view (compaction,
-- rewind); NULL while it holds it. A view no longer held lets no change
-- through and is never "unchanged", but stays for history and change
-- reports until the file's content changes. Recording the view again
-- holds it again.
ALTER TABLE views ADD COLUMN released TEXT;
ALTER TABLE views ADD COLUMN released_ns INTEGER;
-- How far a session's transcript (the agent's own record of the
-- conversation) has been read: the file's identity, and the offset just
-- past its last complete line. `state` is the reader's own, between calls;
-- `problem` why the transcript could not be read, said once.
CREATE TABLE transcripts(
    sid     TEXT PRIMARY KEY,
    path    BLOB NOT NULL,
    dev     INTEGER NOT NULL,
    ino     INTEGER NOT NULL,
    offset  INTEGER NOT NULL,
    state   TEXT,
    problem TEXT,
    read_ns INTEGER NOT NULL
) WITHOUT ROWID;
"#,
    // 4: the most recently viewed files of a session, without a sort.
    r#"
-- What changed among the files last viewed is looked at after every tool
-- call (Store::recent_files): without this index that was a scan and a
-- sort of the whole session (25 ms in a session of 10,000 files).
CREATE INDEX files_recent ON files(sid, viewed_ns, id);
"#,
    // 5: a fast hash beside the SHA-256, for checks.
    r#"
-- XXH3-128 of the same bytes as `hash` (fingerprint::Quick), compared by
-- a check instead of it: NULL where it was not computed (rows from before
-- this column, fingerprints by stat alone), and then `hash` decides. It is
-- set with `hash`, every time, so that it never describes other bytes.
ALTER TABLE files ADD COLUMN quick BLOB;
"#,
    // 6: what the agent's own shell commands wrote (crate::own).
    r#"
-- A file a shell command of the conversation `sid` created or last wrote
-- whole, as the command left it: its fingerprint (NULL columns: nothing
-- recorded yet), and its text when small, kept for the diff of a change
-- someone else makes to it. Not a view: the model was not shown it. While
-- a command that writes the file runs, `before` says what the path held
-- just before it ('new': nothing, 'own': this same output, 'seen': a text
-- the agent holds whole, 'other': anything else; 'discard': a git command
-- is about to restore it from git); NULL otherwise. `live`: that command runs on in the
-- background, writing as it goes.
CREATE TABLE own(
    sid        TEXT NOT NULL,
    path       BLOB NOT NULL,
    dev        INTEGER,
    ino        INTEGER,
    btime_ns   INTEGER,
    size       INTEGER,
    mtime_ns   INTEGER,
    ctime_ns   INTEGER,
    taken_ns   INTEGER,
    hash       BLOB,
    quick      BLOB,
    text_hash  BLOB,
    before     TEXT,
    live       INTEGER NOT NULL DEFAULT 0,
    written_ns INTEGER NOT NULL,
    PRIMARY KEY(sid, path)
) WITHOUT ROWID;
"#,
    // 7: which conversation was shown each view.
    r#"
-- The conversation whose hook recorded the view (the agent's session id,
-- with its subagent's id: what fsview-hook's session would be without
-- --sid); NULL when unknown (another tool, a row from before this column).
-- A session several conversations share (fsview-hook --sid) answers a
-- re-read short only for a view its own conversation was shown.
ALTER TABLE views ADD COLUMN conversation TEXT;
"#,
    // 8: when the conversation's shell commands ran.
    r#"
-- A shell command of conversation `sid`, from the hook before it
-- (`started_ns`) to the hook after it (`ended_ns`; NULL while it runs, or
-- when no hook after came): a file created in that window and unchanged
-- since is one the command made without naming it (a generator's output),
-- the agent's own. `command`: its first line, capped. The newest 100 of a
-- conversation are kept.
CREATE TABLE runs(
    sid        TEXT NOT NULL,
    started_ns INTEGER NOT NULL,
    ended_ns   INTEGER,
    command    TEXT,
    PRIMARY KEY(sid, started_ns)
) WITHOUT ROWID;
"#,
];

/// An open session file.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// A file a session has seen, with its fingerprint at the last view.
#[derive(Clone, Debug)]
pub struct FileRecord {
    pub id: i64,
    pub path: PathBuf,
    pub fingerprint: Fingerprint,
    pub viewed_ns: i64,
}

/// One view of a file.
#[derive(Clone, Debug)]
pub struct ViewRecord {
    pub kind: Kind,
    pub source: Source,
    pub offset: u64,
    pub lines: u64,
    pub total_lines: Option<u64>,
    pub shown_hash: Hash,
    pub text_hash: Option<Hash>,
    pub viewed_ns: i64,
    /// Where in the conversation it came from (see [`NewView::origin`]).
    pub origin: Option<String>,
    /// The conversation it was shown to, when a hook recorded it: the
    /// agent's session id, with its subagent's id (`SESSION/AGENT`), as
    /// fsview-hook names the session without `--sid`. `None` when unknown.
    pub conversation: Option<String>,
    /// Why and when the conversation stopped holding it; `None` while it
    /// holds it.
    pub released: Option<(Released, i64)>,
}

impl ViewRecord {
    /// The conversation still holds what this view showed: it counts for
    /// the gate and for "unchanged".
    pub fn held(&self) -> bool {
        self.released.is_none()
    }
}

/// A view to record.
pub struct NewView<'a> {
    /// Canonical path.
    pub path: &'a Path,
    pub fingerprint: &'a Fingerprint,
    pub kind: Kind,
    pub source: Source,
    pub offset: u64,
    pub lines: u64,
    pub total_lines: Option<u64>,
    /// The exact text shown (file bytes, or the processed text).
    pub shown: &'a [u8],
    /// Keep `shown` for later diffs.
    pub keep_text: bool,
    /// Where in the conversation it was shown: the agent's own id for the
    /// message or tool call that showed it, so that a compaction or a
    /// rewind that drops that message drops the view
    /// ([`Store::hold_only`]). `None` when unknown.
    pub origin: Option<&'a str>,
    /// The conversation it was shown to (see [`ViewRecord::conversation`]);
    /// `None` when unknown. Asked of [`Store::seen`], the conversation
    /// asking: only a view shown to it counts.
    pub conversation: Option<&'a str>,
}

impl<'a> NewView<'a> {
    /// The view of what a read showed of the file at canonical `path`, its
    /// text kept for later diffs.
    pub fn of_shown(path: &'a Path, shown: &'a crate::show::Shown, source: Source) -> Self {
        NewView {
            path,
            fingerprint: &shown.fingerprint,
            kind: shown.kind,
            source,
            offset: shown.offset,
            lines: shown.lines,
            total_lines: shown.total_lines,
            shown: &shown.bytes,
            keep_text: true,
            origin: None,
            conversation: None,
        }
    }
}

impl<'a> NewView<'a> {
    /// The `full` view, source `write`, of a file the agent wrote, its text
    /// kept when it was small enough to read back.
    pub fn of_written(path: &'a Path, w: &'a crate::show::Written) -> Self {
        NewView {
            path,
            fingerprint: &w.fingerprint,
            kind: Kind::Full,
            source: Source::Write,
            offset: 1,
            lines: w.lines,
            total_lines: Some(w.lines),
            shown: w.bytes.as_deref().unwrap_or_default(),
            keep_text: w.bytes.is_some(),
            origin: None,
            conversation: None,
        }
    }

    /// The same view, shown by `origin` (see [`NewView::origin`]).
    pub fn with_origin(self, origin: Option<&'a str>) -> Self {
        NewView { origin, ..self }
    }

    /// The same view, shown to `conversation` (see
    /// [`NewView::conversation`]).
    pub fn with_conversation(self, conversation: Option<&'a str>) -> Self {
        NewView {
            conversation,
            ..self
        }
    }
}

/// What recording found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recorded {
    /// The same view of the same content was recorded before.
    pub unchanged: bool,
}

impl Store {
    /// Open the session file at `path`, creating it (mode 0600, and its
    /// directory 0700) when it does not exist.
    pub fn open(path: &Path) -> Result<Store> {
        match Store::open_inner(path, true)? {
            Some(s) => Ok(s),
            None => unreachable!("open with create returns a store"),
        }
    }

    /// Open the session file at `path` if it exists; `None` if it does not.
    pub fn open_existing(path: &Path) -> Result<Option<Store>> {
        Store::open_inner(path, false)
    }

    /// Another connection to this store's file, for a process that uses
    /// several at once (the MCP server). It skips the header check that
    /// [`Store::open`] makes through a plain file descriptor: closing that
    /// descriptor drops every POSIX lock the process holds on the file,
    /// SQLite's included, and a connection of this process that SQLite
    /// believes locked would run unlocked beside other processes (a WAL
    /// reset under it: short reads, a corrupt file). The file's header and
    /// schema were checked when `self` was opened.
    pub fn another(&self) -> Result<Store> {
        let path = &self.path;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = connect(path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| db_error(path, e))?;
        persist_wal(&conn);
        conn.execute_batch(&settings()?)
            .map_err(|e| db_error(path, e))?;
        Ok(Store {
            conn,
            path: path.clone(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open_inner(path: &Path, create: bool) -> Result<Option<Store>> {
        // Settings are checked before the file is touched, so a bad one is
        // an error for every tool alike.
        fingerprint::check_policy().map_err(Error::new)?;
        refuse_network(path)?;
        let fresh = match inspect(path)? {
            // An empty file made by someone else (`touch`) is taken as
            // ours: private, as a file fsview creates is, since it will
            // hold the texts of files.
            Some(0) => {
                private(path)?;
                true
            }
            Some(_) => false,
            None if !create => return Ok(None),
            None => {
                create_file(path)?;
                true
            }
        };
        if !fresh {
            sniff_header(path)?;
        }
        configure_sqlite();
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = connect(path, flags)?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store
            .conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| db_error(path, e))?;
        persist_wal(&store.conn);
        store.check_schema()?;
        store
            .conn
            .execute_batch(&settings()?)
            .map_err(|e| db_error(path, e))?;
        Ok(Some(store))
    }

    /// Refuse a foreign or newer file; initialize or migrate ours.
    fn check_schema(&self) -> Result<()> {
        // The common case, a file of this build's schema, in two reads of
        // the header that compile nothing over the schema (the statement
        // below costs 28 us of a short call). The id, once ours, stays
        // ours; the version is read after it.
        let app: i32 =
            self.retry(|conn| conn.query_row("PRAGMA application_id", [], |r| r.get(0)))?;
        if app == APPLICATION_ID {
            let version: i32 =
                self.retry(|conn| conn.query_row("PRAGMA user_version", [], |r| r.get(0)))?;
            if version == SCHEMA_VERSION {
                return Ok(());
            }
        }
        let (app, version, tables) = self.retry(header)?;
        if app == APPLICATION_ID && version == SCHEMA_VERSION {
            return Ok(());
        }
        if app != 0 && app != APPLICATION_ID {
            return Err(self.foreign());
        }
        if app == 0 {
            // A new file, or one another fsview process is initializing
            // right now (its commit sets the id and the tables at once, and
            // all three were read in one snapshot); any table at all means
            // somebody else's database.
            if tables > 0 {
                return Err(self.foreign());
            }
            self.retry(|conn| conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(())))?;
        }
        if version > SCHEMA_VERSION {
            return Err(self.newer(version));
        }
        self.migrate()
    }

    fn migrate(&self) -> Result<()> {
        let path = self.path.clone();
        self.write(|conn| {
            // Re-read inside the lock: another process may have done it.
            let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
            let mut version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            if app != 0 && app != APPLICATION_ID {
                return Ok(Err(foreign_error(&path)));
            }
            if version > SCHEMA_VERSION {
                return Ok(Err(newer_error(&path, version)));
            }
            if app == 0 {
                let tables: i64 =
                    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
                if tables > 0 {
                    return Ok(Err(foreign_error(&path)));
                }
                conn.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID};"))?;
            }
            while version < SCHEMA_VERSION {
                conn.execute_batch(MIGRATIONS[version as usize])?;
                version += 1;
            }
            conn.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION};"))?;
            Ok(Ok(()))
        })?
    }

    fn foreign(&self) -> Error {
        foreign_error(&self.path)
    }

    fn newer(&self, version: i32) -> Error {
        newer_error(&self.path, version)
    }

    /// Run `f` in a `BEGIN IMMEDIATE` transaction, retrying while the file
    /// is busy. `f` must be safe to run again.
    pub fn write<T>(&self, mut f: impl FnMut(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let start = Instant::now();
        let mut delay = Duration::from_millis(1);
        loop {
            match self.try_write(&mut f) {
                Ok(v) => return Ok(v),
                Err(e) if is_busy(&e) && start.elapsed() < WRITE_DEADLINE => {
                    std::thread::sleep(delay + jitter(delay));
                    delay = (delay * 2).min(Duration::from_millis(50));
                }
                Err(e) => return Err(db_error(&self.path, e)),
            }
        }
    }

    fn try_write<T>(
        &self,
        f: &mut impl FnMut(&Connection) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<T> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let result = f(&self.conn).and_then(|v| self.conn.execute_batch("COMMIT").map(|_| v));
        if result.is_err() && !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
        result
    }

    /// Run a read-only query, mapping errors to messages.
    pub fn read<T>(&self, mut f: impl FnMut(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        self.retry(&mut f)
    }

    /// Run `f`, retrying while the file is busy (a reader can meet a writer
    /// rebuilding the WAL index, or a checkpoint in progress).
    fn retry<T>(&self, mut f: impl FnMut(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let start = Instant::now();
        let mut delay = Duration::from_millis(1);
        loop {
            match f(&self.conn) {
                Ok(v) => return Ok(v),
                Err(e) if is_busy(&e) && start.elapsed() < WRITE_DEADLINE => {
                    std::thread::sleep(delay + jitter(delay));
                    delay = (delay * 2).min(Duration::from_millis(50));
                }
                Err(e) => return Err(db_error(&self.path, e)),
            }
        }
    }

    /// Record a view, replacing the file's earlier views when its content
    /// changed since them.
    pub fn record(&self, sid: &str, v: &NewView<'_>) -> Result<Recorded> {
        self.write(|conn| record_in(conn, sid, v, fingerprint::now_ns(), &mut Budget::unread()))
    }

    /// Whether recording `v` would find it recorded before (the same view
    /// of the same content: [`Recorded::unchanged`]), without writing.
    pub fn seen(&self, sid: &str, v: &NewView<'_>) -> Result<bool> {
        let path = path_bytes(v.path);
        self.read(|conn| seen_as(conn, file_by_path(conn, sid, &path)?.as_ref(), v))
    }

    /// [`Store::seen`], given the session's record of the file, `old`,
    /// read in the same transaction ([`Store::begin_read`]).
    pub fn seen_in(&self, old: Option<&FileRecord>, v: &NewView<'_>) -> Result<bool> {
        self.read(|conn| seen_as(conn, old, v))
    }

    /// Store `fp`, a fingerprint of the same bytes as `record`'s (the file's
    /// new identity after a save by rename, a stat aged past the racy
    /// window), but only if the session's record of the file is still
    /// exactly `record`: a read that recorded a newer view meanwhile, or a
    /// row id reused by another file after a forget or a drop, is never
    /// overwritten with what a check found about the old one. Returns
    /// whether it was stored.
    pub fn refresh(&self, sid: &str, record: &FileRecord, fp: &Fingerprint) -> Result<bool> {
        crate::pause::point("refresh");
        self.write(|conn| refresh_in(conn, sid, record, fp))
    }

    /// Start a read transaction: every read until [`Store::end_read`] sees
    /// one snapshot of the file, and the file's lock is taken once, not
    /// once per statement. Nothing may write on this connection meanwhile.
    pub fn begin_read(&self) -> Result<()> {
        self.conn
            .execute_batch("BEGIN")
            .map_err(|e| db_error(&self.path, e))
    }

    /// End the read transaction [`Store::begin_read`] started.
    pub fn end_read(&self) {
        if !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("COMMIT");
        }
    }

    pub fn file_by_path(&self, sid: &str, path: &Path) -> Result<Option<FileRecord>> {
        self.read(|conn| file_by_path(conn, sid, &path_bytes(path)))
    }

    /// The most recently viewed file of the session with this inode (a hard
    /// link to it, or the same file under a name no longer canonical).
    pub fn file_by_inode(&self, sid: &str, stat: &Stat) -> Result<Option<FileRecord>> {
        self.read(|conn| {
            conn.prepare_cached(&format!("SELECT {FILE_COLUMNS} FROM files WHERE sid=?1 AND dev=?2 AND ino=?3 ORDER BY viewed_ns DESC LIMIT 1"))?
                .query_row(params![sid, stat.dev as i64, stat.ino as i64], file_row)
                .optional()
        })
    }

    /// Every file the session has seen, oldest view first.
    pub fn files(&self, sid: &str) -> Result<Vec<FileRecord>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(&format!(
                "SELECT {FILE_COLUMNS} FROM files WHERE sid=?1 ORDER BY viewed_ns, id"
            ))?;
            let rows = stmt.query_map([sid], file_row)?;
            rows.collect()
        })
    }

    /// Session `sid`'s `limit` most recently viewed files, newest first.
    pub fn recent_files(&self, sid: &str, limit: usize) -> Result<Vec<FileRecord>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {FILE_COLUMNS} FROM files WHERE sid=?1 ORDER BY viewed_ns DESC, id DESC LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![sid, limit as i64], file_row)?;
            rows.collect()
        })
    }

    /// Session `sid`'s records of many canonical paths, by path: a batch's
    /// lookups in a few statements ([`LOOKUP_CHUNK`] paths each) instead of
    /// one per path. A path with no record is absent from the map.
    pub fn files_by_paths(
        &self,
        sid: &str,
        paths: &[&Path],
    ) -> Result<FastMap<OsString, FileRecord>> {
        self.read(|conn| {
            let mut out = FastMap::with_capacity_and_hasher(paths.len(), Default::default());
            for chunk in paths.chunks(LOOKUP_CHUNK) {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {FILE_COLUMNS} FROM files WHERE sid=?1 AND path IN ({})",
                    placeholders(2, chunk.len())
                ))?;
                let args = std::iter::once(rusqlite::types::Value::Text(sid.to_string())).chain(
                    chunk
                        .iter()
                        .map(|p| rusqlite::types::Value::Blob(path_bytes(p))),
                );
                let rows = stmt.query_map(rusqlite::params_from_iter(args), file_row)?;
                for r in rows {
                    let r = r?;
                    out.insert(r.path.clone().into_os_string(), r);
                }
            }
            Ok(out)
        })
    }

    /// How many files session `sid` has records of.
    pub fn file_count(&self, sid: &str) -> Result<usize> {
        self.read(|conn| {
            conn.prepare_cached("SELECT count(*) FROM files WHERE sid=?1")?
                .query_row([sid], |r| r.get::<_, i64>(0))
                .map(|n| n.max(0) as usize)
        })
    }

    /// Every record of session `sid` (about `files` of them): a batch
    /// that names most of a session's files reads them in one pass rather
    /// than path by path, and indexes them by the names they hold.
    ///
    /// With each record comes where its views are in `views` (the
    /// session's, [`Store::session_views`]): looked up here, while the
    /// batch's files are being hashed, not one by one as it decides.
    pub fn session_files(
        &self,
        sid: &str,
        files: usize,
        views: &ViewsById,
    ) -> Result<Vec<(FileRecord, std::ops::Range<usize>)>> {
        self.read(|conn| {
            let mut out = Vec::with_capacity(files);
            let mut stmt =
                conn.prepare_cached(&format!("SELECT {FILE_COLUMNS} FROM files WHERE sid=?1"))?;
            for r in stmt.query_map([sid], file_row)? {
                let r = r?;
                let at = views.range(r.id);
                out.push((r, at));
            }
            Ok(out)
        })
    }

    /// Every view of session `sid`'s records (about `files` of them), by
    /// record id, each file's oldest first as [`Store::views`] gives them.
    pub fn session_views(&self, sid: &str, files: usize) -> Result<ViewsById> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT v.file_id, {} FROM files f CROSS JOIN views v ON v.file_id=f.id WHERE f.sid=?1",
                VIEW_COLUMNS.split(", ").map(|c| format!("v.{c}")).collect::<Vec<_>>().join(", ")
            ))?;
            let rows = stmt.query_map([sid], |r| Ok((r.get::<_, i64>(0)?, view_row_from(r, 1)?)))?;
            let mut all = Vec::with_capacity(files);
            for r in rows {
                all.push(r?);
            }
            Ok(ViewsById::new(all))
        })
    }

    /// The views of many records, by record id, each file's oldest first
    /// as [`Store::views`] gives them; in a few statements for a batch.
    pub fn views_of(&self, file_ids: &[i64]) -> Result<ViewsById> {
        self.read(|conn| {
            let mut all = Vec::with_capacity(file_ids.len());
            for chunk in file_ids.chunks(LOOKUP_CHUNK) {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT file_id, {VIEW_COLUMNS} FROM views WHERE file_id IN ({})",
                    placeholders(1, chunk.len())
                ))?;
                let rows = stmt.query_map(rusqlite::params_from_iter(chunk), |r| {
                    Ok((r.get::<_, i64>(0)?, view_row_from(r, 1)?))
                })?;
                for r in rows {
                    all.push(r?);
                }
            }
            Ok(ViewsById::new(all))
        })
    }

    pub fn views(&self, file_id: i64) -> Result<Vec<ViewRecord>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {VIEW_COLUMNS} FROM views WHERE file_id=?1 ORDER BY viewed_ns"
            ))?;
            let rows = stmt.query_map([file_id], view_row)?;
            rows.collect()
        })
    }

    /// A kept text, if it is still kept.
    pub fn text(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
        self.read(|conn| {
            conn.query_row("SELECT body FROM texts WHERE hash=?1", [&hash[..]], |r| {
                r.get(0)
            })
            .optional()
        })
    }

    pub(crate) fn text_budget(&self) -> Result<i64> {
        self.read(text_budget_in)
    }

    /// Set the budget for kept texts, in bytes.
    pub fn set_text_budget(&self, bytes: i64) -> Result<()> {
        self.write(|conn| {
            conn.execute(
                "INSERT INTO meta(key, value) VALUES('text_budget', ?1) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                [bytes],
            )?;
            evict(conn, bytes)?;
            Ok(())
        })
    }
}

/// Record a view inside a write transaction already open on `conn` (see
/// [`Store::record`]); `budget` is the kept-text budget.
///
/// It leaves session `sid` listed in `sessions`: a new record lists it,
/// and an existing one shows it is (a session's files are deleted with
/// it, in one transaction).
pub(crate) fn record_in(
    conn: &Connection,
    sid: &str,
    v: &NewView<'_>,
    now: i64,
    budget: &mut Budget,
) -> rusqlite::Result<Recorded> {
    let path = path_bytes(v.path);
    let shown_hash = shown_hash_of(v);
    let old = file_by_path(conn, sid, &path)?;
    let mut unchanged = false;
    let file_id = match old {
        Some(old) if old.fingerprint.same_content(v.fingerprint) => {
            unchanged = view_exists(conn, old.id, v, &shown_hash)?;
            // Keep a hash the stat-only fingerprint lacks.
            let mut fp = v.fingerprint.clone();
            if fp.hash.is_none() {
                fp.hash = old.fingerprint.hash;
            }
            update_file(conn, old.id, &old.fingerprint, &fp, now)?;
            old.id
        }
        Some(old) => {
            conn.execute("DELETE FROM views WHERE file_id=?1", [old.id])?;
            update_file(conn, old.id, &old.fingerprint, v.fingerprint, now)?;
            old.id
        }
        None => {
            ensure_session(conn, sid, now)?;
            insert_file(conn, sid, &path, v.fingerprint, now)?
        }
    };
    if v.kind != Kind::Processed || v.source == Source::Read {
        // The agent has now seen the file itself (a tool's rendering of it
        // too, a notebook's cells: not context injected again): what
        // reminders told about it since the last read is superseded.
        conn.prepare_cached("DELETE FROM told WHERE file_id=?1")?
            .execute([file_id])?;
    }
    let kept = v.keep_text && keep_text(conn, &shown_hash, v.shown, now, budget)?;
    let text_hash = kept.then_some(shown_hash);
    conn.execute(
        "INSERT INTO views(file_id, kind, line_offset, line_count, source, total_lines, shown_hash, text_hash, viewed_ns, origin, conversation)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT(file_id, kind, line_offset, line_count) DO UPDATE SET
           -- The same lines of the same content, read and then injected:
           -- still a read (clearing what was injected leaves it).
           source=CASE WHEN views.source = 'read' AND excluded.source IN ('inject', 'import')
                       THEN views.source ELSE excluded.source END,
           total_lines=excluded.total_lines,
           shown_hash=excluded.shown_hash, text_hash=excluded.text_hash,
           viewed_ns=excluded.viewed_ns, copied=0, origin=excluded.origin,
           conversation=excluded.conversation, released=NULL, released_ns=NULL",
        params![
            file_id,
            v.kind.as_str(),
            line_number(v.offset),
            line_number(v.lines),
            v.source.as_str(),
            v.total_lines.map(line_number),
            &shown_hash[..],
            text_hash.as_ref().map(|h| &h[..]),
            now,
            v.origin,
            v.conversation
        ],
    )?;
    Ok(Recorded { unchanged })
}

/// The hash of what a view showed: a full view showed the file's bytes, so
/// their hash is the file's.
///
/// A full view whose text was too large to keep ([`NewView::of_written`]
/// of a file over the keep limit) comes without it: the file's hash stands
/// for it, never the hash of the empty text it is not.
fn shown_hash_of(v: &NewView<'_>) -> Hash {
    let untold = !v.keep_text && v.shown.is_empty() && v.fingerprint.stat.size > 0;
    match v.fingerprint.hash {
        Some(h)
            if v.kind == Kind::Full
                && (untold || v.shown.len() as u64 == v.fingerprint.stat.size) =>
        {
            h
        }
        _ => fingerprint::hash_bytes(v.shown),
    }
}

/// Whether `v` was recorded before for `old`, the session's record of its
/// file: the same content, and the same view of it (see [`view_exists`]).
fn seen_as(conn: &Connection, old: Option<&FileRecord>, v: &NewView<'_>) -> rusqlite::Result<bool> {
    match old {
        Some(old) if old.fingerprint.same_content(v.fingerprint) => {
            view_exists(conn, old.id, v, &shown_hash_of(v))
        }
        _ => Ok(false),
    }
}

/// The same view (kind, first line, shown text) is recorded for `file_id`,
/// and this conversation was shown it and still holds it: a view copied
/// from another session (fork, import) was never seen here, and one the
/// conversation dropped (compaction, rewind) is no longer in it. When `v`
/// names its conversation, only a view shown to that one counts (a
/// session several conversations share).
fn view_exists(
    conn: &Connection,
    file_id: i64,
    v: &NewView<'_>,
    shown_hash: &Hash,
) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM views WHERE file_id=?1 AND kind=?2 AND line_offset=?3 AND shown_hash=?4 AND copied=0 AND released IS NULL
               AND (?5 IS NULL OR conversation=?5)",
        )?
        .query_row(
            params![
                file_id,
                v.kind.as_str(),
                line_number(v.offset),
                &shown_hash[..],
                v.conversation
            ],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// A map of many entries built and read once by one process (a batch's
/// whole session): hashed fast, not against flooding (the keys are the
/// session's own paths and ids).
pub type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Views of many records in one array, by record id: a batch of checks
/// holds thousands, and one small array each would cost more to allocate
/// than to read.
#[derive(Debug, Default)]
pub struct ViewsById {
    /// Sorted by record id, then oldest first.
    all: Vec<ViewRecord>,
    /// Record id to its range of `all`.
    at: FastMap<i64, std::ops::Range<usize>>,
}

impl ViewsById {
    fn new(mut rows: Vec<(i64, ViewRecord)>) -> ViewsById {
        // Oldest first within a record, as Store::views orders them (a
        // sort in SQLite cost more than the rest of the pass).
        rows.sort_unstable_by_key(|(id, v)| (*id, v.viewed_ns));
        let mut at = FastMap::with_capacity_and_hasher(rows.len(), Default::default());
        let mut all = Vec::with_capacity(rows.len());
        // The record being gathered, and where its views start.
        let mut current: Option<(i64, usize)> = None;
        for (i, (id, v)) in rows.into_iter().enumerate() {
            match current {
                Some((c, start)) if c != id => {
                    at.insert(c, start..i);
                    current = Some((id, i));
                }
                None => current = Some((id, i)),
                Some(_) => {}
            }
            all.push(v);
        }
        if let Some((c, start)) = current {
            at.insert(c, start..all.len());
        }
        ViewsById { all, at }
    }

    /// The views of record `id`, oldest first (none when it has none).
    pub fn get(&self, id: i64) -> &[ViewRecord] {
        self.at(self.range(id))
    }

    /// Where the views of record `id` are ([`ViewsById::at`]).
    pub fn range(&self, id: i64) -> std::ops::Range<usize> {
        self.at.get(&id).cloned().unwrap_or(0..0)
    }

    /// The views in `range` (a [`ViewsById::range`] of these views).
    pub fn at(&self, range: std::ops::Range<usize>) -> &[ViewRecord] {
        self.all.get(range).unwrap_or(&[])
    }
}

pub(crate) const FILE_COLUMNS: &str =
    "id, path, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, viewed_ns, quick";

pub(crate) fn file_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FileRecord> {
    Ok(FileRecord {
        id: r.get(0)?,
        path: PathBuf::from(std::ffi::OsString::from_vec(r.get(1)?)),
        fingerprint: Fingerprint {
            stat: Stat {
                dev: r.get::<_, i64>(2)? as u64,
                ino: r.get::<_, i64>(3)? as u64,
                btime_ns: r.get(4)?,
                ftype: FileType::from_code(r.get(5)?),
                size: r.get::<_, i64>(6)? as u64,
                mtime_ns: r.get(7)?,
                ctime_ns: r.get(8)?,
            },
            taken_ns: r.get(9)?,
            hash: opt_hash_at(r, 10)?,
            quick: opt_quick_at(r, 12)?,
        },
        viewed_ns: r.get(11)?,
    })
}

/// The `views` columns [`view_row`] reads, in its order.
pub(crate) const VIEW_COLUMNS: &str =
    "kind, source, line_offset, line_count, total_lines, shown_hash, text_hash, viewed_ns, origin, released, released_ns, conversation";

/// A `views` row selected as [`VIEW_COLUMNS`].
pub(crate) fn view_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ViewRecord> {
    view_row_from(r, 0)
}

/// A row whose [`VIEW_COLUMNS`] start at column `at`.
fn view_row_from(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<ViewRecord> {
    // Words and hashes are read in place: a batch reads thousands of rows.
    Ok(ViewRecord {
        kind: Kind::parse(str_at(r, at)?).unwrap_or(Kind::Processed),
        source: Source::parse(str_at(r, at + 1)?).unwrap_or(Source::Read),
        offset: r.get::<_, i64>(at + 2)?.max(0) as u64,
        lines: r.get::<_, i64>(at + 3)?.max(0) as u64,
        total_lines: r.get::<_, Option<i64>>(at + 4)?.map(|n| n.max(0) as u64),
        shown_hash: slice_hash(r.get_ref(at + 5)?.as_blob()?),
        text_hash: opt_hash_at(r, at + 6)?,
        viewed_ns: r.get(at + 7)?,
        origin: r.get(at + 8)?,
        released: match r.get_ref(at + 9)?.as_str_or_null()? {
            // A reason this build does not know is a release all the same.
            Some(why) => Some((
                Released::parse(why).unwrap_or(Released::Compaction),
                r.get::<_, Option<i64>>(at + 10)?.unwrap_or(0),
            )),
            None => None,
        },
        conversation: r.get(at + 11)?,
    })
}

/// A text column, borrowed from the row.
fn str_at<'r>(r: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    Ok(r.get_ref(i)?.as_str()?)
}

/// A hash column that may be NULL, copied straight from the row.
fn opt_hash_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Hash>> {
    Ok(r.get_ref(i)?.as_blob_or_null()?.map(slice_hash))
}

/// A [`Quick`] hash column: anything but 16 bytes (never written so) reads
/// as none, and SHA-256 then decides.
fn opt_quick_at(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Quick>> {
    Ok(r.get_ref(i)?
        .as_blob_or_null()?
        .and_then(|b| Quick::try_from(b).ok()))
}

/// How many paths or ids one batched lookup names (a statement per chunk,
/// well under SQLite's limit on parameters; each chunk size is a prepared
/// statement of its own, cached).
pub const LOOKUP_CHUNK: usize = 256;

/// `?first, ?first+1, ...`: `n` numbered parameters for an `IN (...)`.
fn placeholders(first: usize, n: usize) -> String {
    (first..first + n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A line number or count as the session file holds it: clamped to i64,
/// never wrapped to a negative number.
pub(crate) fn line_number(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// [`Store::refresh`] inside a write transaction already open on `conn`.
pub(crate) fn refresh_in(
    conn: &Connection,
    sid: &str,
    record: &FileRecord,
    fp: &Fingerprint,
) -> rusqlite::Result<bool> {
    if !still_current(conn, sid, record)? {
        return Ok(false);
    }
    // As in update_file: the identity's index only when it changed.
    conn.prepare_cached(if same_identity(&record.fingerprint, fp) {
        "UPDATE files SET btime_ns=?4, ftype=?5, size=?6, mtime_ns=?7, ctime_ns=?8, taken_ns=?9, quick=IIF(?10 IS NULL, quick, ?11), hash=COALESCE(?10, hash) WHERE id=?1"
    } else {
        "UPDATE files SET dev=?2, ino=?3, btime_ns=?4, ftype=?5, size=?6, mtime_ns=?7, ctime_ns=?8, taken_ns=?9, quick=IIF(?10 IS NULL, quick, ?11), hash=COALESCE(?10, hash) WHERE id=?1"
    })?
    .execute(fingerprint_params(record.id, fp))?;
    Ok(true)
}

/// Whether two fingerprints name the same device and inode (the columns
/// of the `files_inode` index).
fn same_identity(a: &Fingerprint, b: &Fingerprint) -> bool {
    a.stat.dev == b.stat.dev && a.stat.ino == b.stat.ino
}

/// Inside a write transaction: is `record` still session `sid`'s record of
/// its file, exactly as it was read (same row, same path, same fingerprint)?
pub(crate) fn still_current(
    conn: &Connection,
    sid: &str,
    record: &FileRecord,
) -> rusqlite::Result<bool> {
    let now = conn
        .prepare_cached(&format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE id=?1 AND sid=?2"
        ))?
        .query_row(params![record.id, sid], file_row)
        .optional()?;
    Ok(now.is_some_and(|r| r.path == record.path && r.fingerprint == record.fingerprint))
}

fn file_by_path(conn: &Connection, sid: &str, path: &[u8]) -> rusqlite::Result<Option<FileRecord>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {FILE_COLUMNS} FROM files WHERE sid=?1 AND path=?2"
    ))?;
    stmt.query_row(params![sid, path], file_row).optional()
}

pub(crate) fn blob_hash(v: Vec<u8>) -> Hash {
    slice_hash(&v)
}

fn slice_hash(v: &[u8]) -> Hash {
    let mut h = [0u8; 32];
    let n = v.len().min(32);
    h[..n].copy_from_slice(&v[..n]);
    h
}

pub fn path_bytes(p: &Path) -> Vec<u8> {
    p.as_os_str().as_bytes().to_vec()
}

pub fn ensure_session(conn: &Connection, sid: &str, now: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO sessions(sid, created_ns) VALUES(?1, ?2)")?
        .execute(params![sid, now])?;
    Ok(())
}

fn fingerprint_params(id: i64, fp: &Fingerprint) -> impl rusqlite::Params + '_ {
    (
        id,
        fp.stat.dev as i64,
        fp.stat.ino as i64,
        fp.stat.btime_ns,
        fp.stat.ftype.code(),
        fp.stat.size as i64,
        fp.stat.mtime_ns,
        fp.stat.ctime_ns,
        fp.taken_ns,
        fp.hash.as_ref().map(|h| h.to_vec()),
        quick_param(fp),
    )
}

/// Set record `id`'s fingerprint to `fp` and its last view to `now`;
/// `was` is the fingerprint it had.
fn update_file(
    conn: &Connection,
    id: i64,
    was: &Fingerprint,
    fp: &Fingerprint,
    now: i64,
) -> rusqlite::Result<()> {
    conn.prepare_cached(if same_identity(was, fp) {
        // SQLite rewrites the entry of every index whose columns an
        // UPDATE sets, changed or not: a page more written (and
        // checkpointed) at every re-read of the same file.
        "UPDATE files SET btime_ns=?4, ftype=?5, size=?6, mtime_ns=?7, ctime_ns=?8, taken_ns=?9, hash=?10, viewed_ns=?11, quick=?12 WHERE id=?1"
    } else {
        "UPDATE files SET dev=?2, ino=?3, btime_ns=?4, ftype=?5, size=?6, mtime_ns=?7, ctime_ns=?8, taken_ns=?9, hash=?10, viewed_ns=?11, quick=?12 WHERE id=?1"
    })?
    .execute(params![
        id,
        fp.stat.dev as i64,
        fp.stat.ino as i64,
        fp.stat.btime_ns,
        fp.stat.ftype.code(),
        fp.stat.size as i64,
        fp.stat.mtime_ns,
        fp.stat.ctime_ns,
        fp.taken_ns,
        fp.hash.as_ref().map(|h| &h[..]),
        now,
        quick_param(fp),
    ])?;
    Ok(())
}

/// The `quick` column of a fingerprint: none without its SHA-256 (the
/// column is never set without `hash`).
pub(crate) fn quick_param(fp: &Fingerprint) -> Option<&[u8]> {
    fp.hash.and(fp.quick.as_ref()).map(|q| &q[..])
}

fn insert_file(
    conn: &Connection,
    sid: &str,
    path: &[u8],
    fp: &Fingerprint,
    now: i64,
) -> rusqlite::Result<i64> {
    conn.prepare_cached(
        "INSERT INTO files(sid, path, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, viewed_ns, quick)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        sid,
        path,
        fp.stat.dev as i64,
        fp.stat.ino as i64,
        fp.stat.btime_ns,
        fp.stat.ftype.code(),
        fp.stat.size as i64,
        fp.stat.mtime_ns,
        fp.stat.ctime_ns,
        fp.taken_ns,
        fp.hash.as_ref().map(|h| &h[..]),
        now,
        quick_param(fp),
    ])?;
    Ok(conn.last_insert_rowid())
}

/// The kept-text budget of a write transaction, read from the session
/// file when first needed (a re-read of a text already kept needs none:
/// one statement less in every re-read).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget(Option<i64>);

impl Budget {
    /// The session file's budget, read inside the transaction if needed.
    pub(crate) fn unread() -> Budget {
        Budget(None)
    }

    fn get(&mut self, conn: &Connection) -> rusqlite::Result<i64> {
        match self.0 {
            Some(b) => Ok(b),
            None => {
                let b = text_budget_in(conn)?;
                self.0 = Some(b);
                Ok(b)
            }
        }
    }
}

/// The budget for kept texts, read on `conn` (inside the transaction that
/// keeps one: no read transaction of its own).
pub(crate) fn text_budget_in(conn: &Connection) -> rusqlite::Result<i64> {
    Ok(conn
        .prepare_cached("SELECT value FROM meta WHERE key='text_budget'")?
        .query_row([], |r| r.get(0))
        .optional()?
        .unwrap_or(DEFAULT_TEXT_BUDGET))
}

/// How stale a kept text's last-use stamp may get before a use restamps
/// it. The stamp only orders texts for eviction, so a minute's precision
/// costs nothing worth having; restamping at every re-read rewrote the
/// `text_use` row and its index entry, 2 of the 7 pages such a re-read
/// wrote (0.04 ms of a 1.69 ms re-read of a 100 KB file, alternating runs
/// of 1,000).
const USE_STAMP_NS: i64 = 60_000_000_000;

/// Store `body` under `hash` (once) if it fits in `budget`, then drop the
/// least recently used texts while the total is over it; returns whether
/// the text is kept. A text already kept gets its last-use stamp moved to
/// `now` when it is older than [`USE_STAMP_NS`] (or ahead of `now`: the
/// clock was set back).
pub(crate) fn keep_text(
    conn: &Connection,
    hash: &Hash,
    body: &[u8],
    now: i64,
    budget: &mut Budget,
) -> rusqlite::Result<bool> {
    let stamp: Option<i64> = conn
        .prepare_cached("SELECT used_ns FROM text_use WHERE hash=?1")?
        .query_row([&hash[..]], |r| r.get(0))
        .optional()?;
    if let Some(stamp) = stamp {
        if stamp < now.saturating_sub(USE_STAMP_NS) || stamp > now {
            conn.prepare_cached("UPDATE text_use SET used_ns=?2 WHERE hash=?1")?
                .execute(params![&hash[..], now])?;
        }
        return Ok(true);
    }
    let budget = budget.get(conn)?;
    if body.len() as i64 > budget {
        return Ok(false);
    }
    conn.prepare_cached("INSERT INTO texts(hash, body) VALUES(?1, ?2)")?
        .execute(params![&hash[..], body])?;
    conn.prepare_cached("INSERT INTO text_use(hash, size, used_ns) VALUES(?1, ?2, ?3)")?
        .execute(params![&hash[..], body.len() as i64, now])?;
    conn.prepare_cached(
        "INSERT INTO meta(key, value) VALUES('text_bytes', ?1)
         ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
    )?
    .execute([body.len() as i64])?;
    evict(conn, budget)?;
    Ok(true)
}

pub(crate) fn evict(conn: &Connection, budget: i64) -> rusqlite::Result<()> {
    let mut total: i64 = conn
        .query_row("SELECT value FROM meta WHERE key='text_bytes'", [], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or(0);
    if total <= budget {
        return Ok(());
    }
    while total > budget {
        let oldest: Option<(Vec<u8>, i64)> = conn
            .query_row(
                "SELECT hash, size FROM text_use ORDER BY used_ns LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((hash, len)) = oldest else {
            total = 0;
            break;
        };
        conn.execute("DELETE FROM texts WHERE hash=?1", [&hash])?;
        conn.execute("DELETE FROM text_use WHERE hash=?1", [&hash])?;
        total -= len;
    }
    conn.execute(
        "INSERT INTO meta(key, value) VALUES('text_bytes', ?1) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        [total.max(0)],
    )?;
    Ok(())
}

/// Settings for SQLite as a whole, made once, before its first connection
/// in the process. Every fsview call is a short process that opens one
/// connection: SQLite's default lookaside allocator (about 120 KiB, all
/// touched when the connection opens: a dozen page faults) is cut to 8 KiB,
/// which still serves the small allocations of a few statements, and its
/// memory statistics (a lock around every allocation) are turned off. Best
/// effort: a library already initialized by someone else keeps its
/// settings.
fn configure_sqlite() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_config is called before any connection of this
        // process exists; called later, it only returns SQLITE_MISUSE.
        unsafe {
            rusqlite::ffi::sqlite3_config(
                rusqlite::ffi::SQLITE_CONFIG_LOOKASIDE,
                128 as std::os::raw::c_int,
                64 as std::os::raw::c_int,
            );
            rusqlite::ffi::sqlite3_config(
                rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
                0 as std::os::raw::c_int,
            );
        }
    });
}

/// A connection to the session file through fsview's VFS (see
/// [`crate::vfs`]), or SQLite's default where it is not available.
fn connect(path: &Path, flags: OpenFlags) -> Result<Connection> {
    let conn = if crate::vfs::register() {
        Connection::open_with_flags_and_vfs(path, flags, crate::vfs::NAME)
    } else {
        Connection::open_with_flags(path, flags)
    };
    conn.map_err(|e| db_error(path, e))
}

/// A connection's settings: how hard writes are pushed to the disk
/// ([`sync_mode`]), and the WAL kept up to [`crate::vfs::KEEP`] bytes
/// between transactions (past it, truncated to that at a commit, and to
/// zero when the last connection closes: see [`crate::vfs`]).
fn settings() -> Result<String> {
    Ok(format!(
        "PRAGMA synchronous={}; PRAGMA journal_size_limit={};",
        sync_mode()?,
        crate::vfs::KEEP
    ))
}

/// Keep the WAL file when the last connection closes (emptied, see
/// [`settings`]) instead of deleting it and creating it again in the next
/// process. Best effort: a failure only costs speed.
fn persist_wal(conn: &Connection) {
    let mut on: std::os::raw::c_int = 1;
    // SAFETY: the handle is a live connection owned by `conn`; the op reads
    // an int through the pointer during the call only.
    unsafe {
        rusqlite::ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            rusqlite::ffi::SQLITE_FCNTL_PERSIST_WAL,
            (&mut on as *mut std::os::raw::c_int).cast(),
        );
    }
}

/// How hard SQLite pushes writes to the disk: `$FSVIEW_SYNC`, default `off`.
///
/// Every call is a short process, so the WAL is checkpointed when each
/// writer closes; with `normal` that costs two fsyncs per recording call,
/// more than the rest of the call on many disks. With `off` (the default) a
/// killed process still leaves a consistent file (the OS has every byte);
/// only an OS crash or power loss within seconds of a write can damage it,
/// and then fsview refuses the file with a clear error and a gate without
/// its views fails closed (not_read). Set `normal` or `full` where that
/// trade is wrong.
fn sync_mode() -> Result<&'static str> {
    match std::env::var("FSVIEW_SYNC").as_deref() {
        Err(_) | Ok("") | Ok("off") => Ok("OFF"),
        Ok("normal") => Ok("NORMAL"),
        Ok("full") => Ok("FULL"),
        Ok(other) => Err(Error::new(format!(
            "FSVIEW_SYNC={other:?} is not a sync mode; use off, normal or full"
        ))),
    }
}

fn jitter(d: Duration) -> Duration {
    // The low bits of the clock are noise enough to spread retries.
    let n = fingerprint::now_ns() as u64;
    Duration::from_nanos(n % (d.as_nanos() as u64 + 1))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked)
    )
}

/// The application id, schema version and table count, read in one
/// snapshot.
fn header(conn: &Connection) -> rusqlite::Result<(i32, i32, i64)> {
    // One statement is one snapshot.
    conn.query_row(
        "SELECT a.application_id, v.user_version, (SELECT count(*) FROM sqlite_master)
         FROM pragma_application_id AS a, pragma_user_version AS v",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// What went wrong with the session file, and what to do about it.
pub fn db_error(path: &Path, e: rusqlite::Error) -> Error {
    let p = quote(path);
    let msg = match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => format!(
            "the disk holding session file {p} is full; nothing was recorded; free some space and retry"
        ),
        Some(ErrorCode::ReadOnly) => format!(
            "session file {p} is read-only; make it (and its directory) writable or pass another --session"
        ),
        Some(ErrorCode::CannotOpen) => format!(
            "cannot open session file {p}; check that its directory exists and is writable, or pass another --session"
        ),
        Some(ErrorCode::PermissionDenied) => format!(
            "permission denied on session file {p}; check its permissions or pass another --session"
        ),
        Some(ErrorCode::NotADatabase) => format!(
            "{p} is not an fsview session file (not an SQLite database); pass another --session"
        ),
        Some(ErrorCode::DatabaseCorrupt) => format!(
            "session file {p} is corrupt; move it aside (fsview will start a new one) or pass another --session"
        ),
        Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => format!(
            "session file {p} stayed locked by another process for over a minute; retry"
        ),
        Some(ErrorCode::SystemIoFailure) => {
            let detail = match &e {
                rusqlite::Error::SqliteFailure(f, _) if f.extended_code == 13 /* SQLITE_FULL */ => "disk full".to_string(),
                _ => e.to_string(),
            };
            format!("I/O error on session file {p} ({detail}); check the disk and retry")
        }
        _ => format!("session file {p}: {e}; retry, or pass another --session"),
    };
    Error::new(msg)
}

fn foreign_error(path: &Path) -> Error {
    Error::new(format!(
        "{} is an SQLite database but not an fsview session file; pass another --session",
        quote(path)
    ))
}

fn newer_error(path: &Path, version: i32) -> Error {
    Error::new(format!(
        "session file {} was written by a newer fsview (schema {version}, this one knows {SCHEMA_VERSION}); upgrade fsview or pass another --session",
        quote(path)
    ))
}

/// Refuse a session file on a network filesystem (NFS, SMB, 9p, Ceph, ...),
/// before it is created or touched: SQLite's WAL keeps its index in memory
/// shared through a file mapping and its locks in the kernel of each
/// machine, so processes on two machines sharing the file would each see
/// their own and corrupt it. One `statfs` of the file, or of the nearest
/// directory above it that exists. `FSVIEW_NETWORK_SESSION=allow` accepts
/// it, for a file only this machine's processes use (a home directory on
/// NFS).
fn refuse_network(path: &Path) -> Result<()> {
    if std::env::var("FSVIEW_NETWORK_SESSION").as_deref() == Ok("allow") {
        return Ok(());
    }
    let Some(existing) = path.ancestors().find(|a| a.exists()) else {
        return Ok(());
    };
    match fingerprint::network_filesystem(existing) {
        None => Ok(()),
        Some(fs) => Err(Error::new(format!(
            "session file {} is on a network filesystem ({fs}), where SQLite's locks and shared memory do not hold between machines; put it on a local disk (--session or FSVIEW_SESSION), or set FSVIEW_NETWORK_SESSION=allow if only this machine uses it",
            quote(path)
        ))),
    }
}

/// What is at the session path: `None` when nothing, else its length.
/// Anything but a regular file of ours is refused here, before SQLite.
fn inspect(path: &Path) -> Result<Option<u64>> {
    let p = quote(path);
    let lmeta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if fingerprint::is_gone(&e) => return Ok(None),
        Err(e) => return Err(Error::io("inspect session file", path, &e)),
    };
    let meta = if lmeta.file_type().is_symlink() {
        match fs::metadata(path) {
            Ok(m) => m,
            Err(e) if fingerprint::is_gone(&e) => {
                return Err(Error::new(format!(
                    "session path {p} is a dangling symbolic link; fix the link or pass another --session"
                )))
            }
            Err(e) => return Err(Error::io("inspect session file", path, &e)),
        }
    } else {
        lmeta
    };
    let ft = FileType::of(&meta);
    if ft != FileType::File {
        return Err(Error::new(format!(
            "session path {p} is {}, not a file; pass --session with a file path",
            ft.describe()
        )));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(Error::new(format!(
            "session file {p} belongs to another user (uid {}); fsview only uses its own session files; pass another --session",
            meta.uid()
        )));
    }
    // SQLite keeps the write-ahead log beside the name it opened: two
    // processes through two hard links would each keep a log of their own
    // for one database, and lose each other's writes.
    if meta.nlink() > 1 {
        return Err(Error::new(format!(
            "session file {p} has {} hard links, and SQLite would keep a separate log for each name and corrupt it; use it by one name (a symbolic link is fine), or remove the other links",
            meta.nlink()
        )));
    }
    Ok(Some(meta.len()))
}

/// Refuse a file that is not SQLite at all before SQLite sees it.
fn sniff_header(path: &Path) -> Result<()> {
    let mut head = [0u8; 16];
    let mut f = fs::File::open(path).map_err(|e| Error::io("open session file", path, &e))?;
    let mut got = 0;
    while got < head.len() {
        match f.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(Error::io("read session file", path, &e)),
        }
    }
    if got < head.len() || &head != b"SQLite format 3\0" {
        return Err(Error::new(format!(
            "{} is not an fsview session file (not an SQLite database); pass another --session",
            quote(path)
        )));
    }
    Ok(())
}

/// Create the session file with mode 0600 (it holds file contents), and any
/// missing directories above it with mode 0700.
/// Make the session file readable and writable by its owner alone.
fn private(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(|e| Error::io("make the session file private", path, &e))
}

fn create_file(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            use std::os::unix::fs::DirBuilderExt;
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| Error::io("create the session directory", dir, &e))?;
        }
    }
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io("create session file", path, &e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_with_mode_0600() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/s.db");
        let s = Store::open(&p).unwrap();
        drop(s);
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dmode = fs::metadata(d.path().join("sub"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dmode, 0o700);
        // Reopening validates and succeeds.
        Store::open(&p).unwrap();
    }

    #[test]
    fn zero_length_file_is_a_new_session() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        fs::write(&p, b"").unwrap();
        Store::open(&p).unwrap();
        assert!(fs::metadata(&p).unwrap().len() > 0);
    }

    #[test]
    fn refuses_text_and_foreign() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.db");
        fs::write(&p, b"hello, I am text\n").unwrap();
        let e = Store::open(&p).err().unwrap();
        assert!(e.message().contains("not an SQLite database"), "{e}");
        let f = d.path().join("f.db");
        Connection::open(&f)
            .unwrap()
            .execute_batch("CREATE TABLE x(a);")
            .unwrap();
        let before = fs::read(&f).unwrap();
        let e = Store::open(&f).err().unwrap();
        assert!(e.message().contains("not an fsview session file"), "{e}");
        assert_eq!(fs::read(&f).unwrap(), before);
    }

    // The files last viewed (looked at after every tool call) come from
    // an index, in order: no scan and no sort of the whole session.
    #[test]
    fn recent_files_need_no_sort() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let plan: Vec<String> = store
            .read(|c| {
                let mut stmt = c.prepare(&format!(
                    "EXPLAIN QUERY PLAN SELECT {FILE_COLUMNS} FROM files WHERE sid=?1 ORDER BY viewed_ns DESC, id DESC LIMIT ?2"
                ))?;
                let rows = stmt.query_map(params!["s", 256], |r| r.get::<_, String>(3))?;
                rows.collect()
            })
            .unwrap();
        assert_eq!(plan, ["SEARCH files USING INDEX files_recent (sid=?)"]);
    }

    // A session file written by the first release (schema 1) is migrated
    // in place: its views stay, they count as shown here (not copied), and
    // the new table and its trigger work.
    #[test]
    fn a_version_1_file_is_migrated() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        let f = d.path().join("a");
        fs::write(&f, "one\n").unwrap();
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch(&format!(
                "PRAGMA journal_mode=WAL; PRAGMA application_id = {APPLICATION_ID};"
            ))
            .unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute_batch("PRAGMA user_version = 1;").unwrap();
            c.execute(
                "INSERT INTO files(id, sid, path, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, viewed_ns)
                 VALUES(1, 'old', ?1, 1, 2, NULL, 0, 4, 5, 6, 7, ?2, 8)",
                params![path_bytes(&f), &fingerprint::hash_bytes(b"one\n")[..]],
            )
            .unwrap();
            c.execute(
                "INSERT INTO views(file_id, kind, line_offset, line_count, source, total_lines, shown_hash, text_hash, viewed_ns)
                 VALUES(1, 'full', 1, 1, 'read', 1, ?1, NULL, 8)",
                [&fingerprint::hash_bytes(b"one\n")[..]],
            )
            .unwrap();
        }
        let store = Store::open(&p).unwrap();
        let version: i32 = store
            .read(|c| c.query_row("PRAGMA user_version", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let copied: i64 = store
            .read(|c| c.query_row("SELECT copied FROM views", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(copied, 0);
        let rec = store.file_by_path("old", &f).unwrap().unwrap();
        assert_eq!(store.views(rec.id).unwrap().len(), 1);
        // No quick hash in a row from before it: the SHA-256 decides.
        assert_eq!(rec.fingerprint.quick, None);
        let gate = crate::gate::decide(Some(&store), "old", d.path(), &f, false).unwrap();
        assert_eq!(gate.verdict, crate::gate::Verdict::Ok);
        // The same view of the same content read again is "unchanged".
        let s = crate::show::read(&f, &crate::show::Request::whole(1 << 20)).unwrap();
        let r = store
            .record("old", &NewView::of_shown(&f, &s, Source::Read))
            .unwrap();
        assert!(r.unchanged);
        // Deleting a file's record deletes what was told about it.
        store
            .write(|c| {
                c.execute(
                    "INSERT INTO told(file_id, change, told_ns) VALUES(1, 'deleted', 1)",
                    [],
                )?;
                c.execute("DELETE FROM files WHERE id=1", [])
            })
            .unwrap();
        let told: i64 = store
            .read(|c| c.query_row("SELECT count(*) FROM told", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(told, 0);
    }

    // A session file of schema 2 is migrated in place: its views are held
    // (the conversation is taken to hold them, as before), of no known
    // origin, and it gets its transcripts table.
    #[test]
    fn a_version_2_file_is_migrated() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        let f = d.path().join("a");
        fs::write(&f, "one\n").unwrap();
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch(&format!(
                "PRAGMA journal_mode=WAL; PRAGMA application_id = {APPLICATION_ID};"
            ))
            .unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute_batch(MIGRATIONS[1]).unwrap();
            c.execute_batch("PRAGMA user_version = 2;").unwrap();
        }
        // Written by the schema-2 code: no origin column yet.
        {
            let c = Connection::open(&p).unwrap();
            c.execute(
                "INSERT INTO files(id, sid, path, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, viewed_ns)
                 VALUES(1, 'old', ?1, 1, 2, NULL, 0, 4, 5, 6, 7, ?2, 8)",
                params![path_bytes(&f), &fingerprint::hash_bytes(b"one\n")[..]],
            )
            .unwrap();
            c.execute(
                "INSERT INTO views(file_id, kind, line_offset, line_count, source, total_lines, shown_hash, text_hash, viewed_ns, copied)
                 VALUES(1, 'full', 1, 1, 'read', 1, ?1, NULL, 8, 0)",
                [&fingerprint::hash_bytes(b"one\n")[..]],
            )
            .unwrap();
        }
        let store = Store::open(&p).unwrap();
        let rec = store.file_by_path("old", &f).unwrap().unwrap();
        let views = store.views(rec.id).unwrap();
        assert_eq!(
            (views.len(), views[0].held(), views[0].origin.as_deref()),
            (1, true, None)
        );
        assert_eq!(store.cursor("old").unwrap(), None);
        assert!(store
            .holds_whole("old", &f, &fingerprint::hash_bytes(b"one\n"))
            .unwrap());
    }

    #[test]
    fn refuses_newer_schema() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        drop(Store::open(&p).unwrap());
        Connection::open(&p)
            .unwrap()
            .execute_batch("PRAGMA user_version = 99;")
            .unwrap();
        let e = Store::open(&p).err().unwrap();
        assert!(e.message().contains("newer fsview (schema 99"), "{e}");
    }
}

#[cfg(test)]
mod written_tests {
    use super::*;
    use crate::show;

    // A written file too large to keep its text: its view's hash is the
    // file's, not the empty string's (the bug: e3b0c442... in show --json).
    #[test]
    fn a_large_written_file_has_its_own_hash() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let p = d.path().join("big");
        fs::write(&p, "x".repeat(5000)).unwrap();
        let w = show::read_written(&p, 1024).unwrap();
        assert!(w.bytes.is_none());
        store.record("t", &NewView::of_written(&p, &w)).unwrap();
        let f = store.file_by_path("t", &p).unwrap().unwrap();
        let v = &store.views(f.id).unwrap()[0];
        assert_eq!(
            v.shown_hash,
            fingerprint::hash_bytes("x".repeat(5000).as_bytes())
        );
        assert_eq!(v.text_hash, None);
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;
    use crate::show::{self, Request};

    fn record_file(store: &Store, path: &Path) {
        let s = show::read(path, &Request::whole(1 << 20)).unwrap();
        store
            .record("t", &NewView::of_shown(path, &s, Source::Read))
            .unwrap();
    }

    // Over the budget, the oldest texts go; the fingerprints stay.
    #[test]
    fn texts_over_the_budget_are_dropped_but_fingerprints_stay() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        store.set_text_budget(100).unwrap();
        let paths: Vec<PathBuf> = (0..3)
            .map(|i| {
                let p = d.path().join(format!("f{i}"));
                fs::write(&p, format!("{i}").repeat(40)).unwrap();
                p
            })
            .collect();
        for p in &paths {
            record_file(&store, p);
        }
        let kept: Vec<bool> = paths
            .iter()
            .map(|p| {
                let f = store.file_by_path("t", p).unwrap().unwrap();
                let v = &store.views(f.id).unwrap()[0];
                store.text(v.text_hash.as_ref().unwrap()).unwrap().is_some()
            })
            .collect();
        assert_eq!(kept, [false, true, true]);
        let f0 = store.file_by_path("t", &paths[0]).unwrap().unwrap();
        assert!(f0.fingerprint.hash.is_some());
        let total: i64 = store
            .read(|c| {
                c.query_row("SELECT value FROM meta WHERE key='text_bytes'", [], |r| {
                    r.get(0)
                })
            })
            .unwrap();
        assert_eq!(total, 80);
    }

    // The budget is read only for a text not kept yet (a re-read of a kept
    // text needs none), and then it decides.
    #[test]
    fn the_budget_decides_for_a_text_not_kept_yet() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let p = d.path().join("f");
        fs::write(&p, "x".repeat(60)).unwrap();
        let text_of = |store: &Store| {
            let f = store.file_by_path("t", &p).unwrap().unwrap();
            store.views(f.id).unwrap()[0].text_hash
        };
        record_file(&store, &p);
        let kept = text_of(&store).unwrap();
        record_file(&store, &p);
        assert_eq!(text_of(&store), Some(kept));
        // Lowering the budget evicts it; the next read does not keep it.
        store.set_text_budget(10).unwrap();
        assert!(store.text(&kept).unwrap().is_none());
        record_file(&store, &p);
        assert_eq!(text_of(&store), None);
        store.set_text_budget(100).unwrap();
        record_file(&store, &p);
        assert_eq!(text_of(&store), Some(kept));
        assert!(store.text(&kept).unwrap().is_some());
    }

    // A text used again is stamped again once its stamp is a minute old,
    // not at every use; the stamp decides which text goes first.
    #[test]
    fn a_text_used_again_is_restamped_at_most_once_a_minute() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let p = d.path().join("f");
        fs::write(&p, "text\n").unwrap();
        record_file(&store, &p);
        let stamp = |store: &Store| -> i64 {
            store
                .read(|c| c.query_row("SELECT used_ns FROM text_use", [], |r| r.get(0)))
                .unwrap()
        };
        let set = |store: &Store, ns: i64| {
            store
                .write(|c| c.execute("UPDATE text_use SET used_ns=?1", [ns]))
                .unwrap();
        };
        let now = fingerprint::now_ns();
        // Used 10 s ago: the re-read keeps the stamp.
        set(&store, now - 10_000_000_000);
        record_file(&store, &p);
        assert_eq!(stamp(&store), now - 10_000_000_000);
        // Used 2 minutes ago: the re-read stamps it now.
        set(&store, now - 120_000_000_000);
        record_file(&store, &p);
        assert!(stamp(&store) >= now, "{} < {now}", stamp(&store));
        // Stamped ahead of the clock (set back since): stamped now.
        set(&store, now + 3_600_000_000_000);
        record_file(&store, &p);
        assert!(stamp(&store) < now + 3_600_000_000_000);
        // Still kept once, counted once.
        let (texts, total): (i64, i64) = store
            .read(|c| {
                c.query_row(
                    "SELECT (SELECT count(*) FROM texts), (SELECT value FROM meta WHERE key='text_bytes')",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
            })
            .unwrap();
        assert_eq!((texts, total), (1, 5));
    }
}

#[cfg(test)]
mod conversation_tests {
    use super::*;
    use crate::show::{self, Request};

    // A session two conversations share: a view is seen by the one it was
    // shown to, and by whoever does not say who asks; recording it again
    // for the other makes it the other's.
    #[test]
    fn a_view_is_seen_by_the_conversation_it_was_shown_to() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let p = d.path().join("a.txt");
        fs::write(&p, "a\n").unwrap();
        let s = show::read(&p, &Request::whole(1 << 20)).unwrap();
        let by = |c| NewView::of_shown(&p, &s, Source::Read).with_conversation(c);
        store.record("shared", &by(Some("conv-a"))).unwrap();
        assert!(store.seen("shared", &by(Some("conv-a"))).unwrap());
        assert!(!store.seen("shared", &by(Some("conv-b"))).unwrap());
        assert!(store.seen("shared", &by(None)).unwrap());
        let f = store.file_by_path("shared", &p).unwrap().unwrap();
        assert_eq!(
            store.views(f.id).unwrap()[0].conversation.as_deref(),
            Some("conv-a")
        );
        store.record("shared", &by(Some("conv-b"))).unwrap();
        assert!(store.seen("shared", &by(Some("conv-b"))).unwrap());
        assert!(!store.seen("shared", &by(Some("conv-a"))).unwrap());
        // Recorded by a tool that does not say: nobody's in particular.
        store.record("shared", &by(None)).unwrap();
        assert!(!store.seen("shared", &by(Some("conv-b"))).unwrap());
    }
}
