//! Whole sessions: list them, read one out, copy, drop, move and tidy.
//!
//! This is what `fsview-session` stands on. Each operation that changes the
//! file is one write transaction, so a fork, a drop or an import is all
//! there or not at all, and each that reads more than one table reads one
//! snapshot, so an export never mixes two moments of a busy session.
//!
//! Kept texts are shared by content hash between sessions: a fork copies
//! only the references, a drop leaves the texts for [`Store::gc`], which
//! removes those no view refers to any more.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::{quote, quote_id, Error, Result};
use crate::events::{log_in, Event, KEEP};
use crate::fingerprint::{self, Hash};
use crate::remind::{store_told, told_row, Told, TOLD_COLUMNS};
use crate::store::{
    blob_hash, evict, file_row, line_number, path_bytes, view_row, FileRecord, Store, ViewRecord,
    FILE_COLUMNS, VIEW_COLUMNS,
};

/// The tool name fsview-session's own events are logged under.
pub const SESSION_TOOL: &str = "fsview-session";

/// One session, counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub sid: String,
    /// The session it was forked from, if any; an agent's conversation.
    pub parent: Option<String>,
    /// The agent's id, when the session is the view set of an agent of
    /// conversation `parent` (see [`crate::agents`]).
    pub agent: Option<String>,
    /// The agent's type, as the agent named it when it started.
    pub agent_type: Option<String>,
    pub created_ns: i64,
    /// The latest view, build or event.
    pub active_ns: i64,
    pub files: i64,
    pub views: i64,
    pub events: i64,
}

/// One logged event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRecord {
    pub id: i64,
    pub at_ns: i64,
    pub tool: String,
    pub action: String,
    pub path: Option<PathBuf>,
    pub verdict: Option<String>,
    pub detail: Option<String>,
}

/// A memoized context part (or the injection), as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextRow {
    pub part: String,
    pub body: Vec<u8>,
    pub built_ns: i64,
    pub meta: Option<String>,
}

/// Everything of one session, for export and import (see [`crate::export`]).
#[derive(Clone, Debug)]
pub struct Dump {
    pub sid: String,
    pub parent: Option<String>,
    pub created_ns: i64,
    /// Each file with its views, oldest view first.
    pub files: Vec<DumpFile>,
    /// The kept texts the views and what was told refer to.
    pub texts: Vec<(Hash, Vec<u8>)>,
    pub context: Vec<ContextRow>,
    /// The instruction files the session has been given.
    pub nested: Vec<PathBuf>,
    /// The log, oldest first.
    pub events: Vec<EventRecord>,
}

/// One file of a [`Dump`]: its record, its views, and what a reminder told
/// the agent of it and the agent has not read since.
#[derive(Clone, Debug)]
pub struct DumpFile {
    pub record: FileRecord,
    pub views: Vec<ViewRecord>,
    pub told: Option<Told>,
}

/// How many rows of each kind a fork, import or drop moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub files: usize,
    pub views: usize,
    pub context: usize,
    pub nested: usize,
    pub events: usize,
    pub texts: usize,
    /// Agents' sessions dropped with their conversation.
    pub agents: usize,
}

/// What [`Store::gc`] freed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collected {
    pub texts: i64,
    pub bytes: i64,
    /// Size of the write-ahead log before and after the checkpoint.
    pub wal_before: u64,
    pub wal_after: u64,
    /// Another process kept the WAL from being checkpointed in full.
    pub busy: bool,
}

impl Store {
    /// Every session in the file, oldest first, each conversation's agents
    /// right after it.
    pub fn summaries(&self) -> Result<Vec<Summary>> {
        let mut all = self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT s.sid, s.parent, s.created_ns,
                   (SELECT count(*) FROM files f WHERE f.sid = s.sid),
                   (SELECT count(*) FROM views v JOIN files f ON v.file_id = f.id WHERE f.sid = s.sid),
                   (SELECT count(*) FROM events e WHERE e.sid = s.sid),
                   max(s.created_ns,
                       coalesce((SELECT max(viewed_ns) FROM files f WHERE f.sid = s.sid), 0),
                       coalesce((SELECT max(built_ns) FROM context c WHERE c.sid = s.sid), 0),
                       coalesce((SELECT max(at_ns) FROM events e WHERE e.sid = s.sid), 0)),
                   (SELECT e.verdict FROM events e WHERE e.sid = s.sid AND e.action = ?1
                      ORDER BY e.id LIMIT 1)
                 FROM sessions s ORDER BY s.created_ns, s.sid",
            )?;
            let rows = stmt.query_map([crate::agents::AGENT_ACTION], |r| {
                let sid: String = r.get(0)?;
                let parent: Option<String> = r.get(1)?;
                let agent = parent
                    .as_deref()
                    .and_then(|p| crate::agents::agent_of(p, &sid))
                    .map(String::from);
                Ok(Summary {
                    agent_type: if agent.is_some() { r.get(7)? } else { None },
                    agent,
                    sid,
                    parent,
                    created_ns: r.get(2)?,
                    files: r.get(3)?,
                    views: r.get(4)?,
                    events: r.get(5)?,
                    active_ns: r.get(6)?,
                })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        // Each agent right after its conversation: sorted by the
        // conversation's creation, then the agents by their own.
        let created: std::collections::HashMap<String, i64> =
            all.iter().map(|s| (s.sid.clone(), s.created_ns)).collect();
        all.sort_by_cached_key(|s| {
            let root = match (&s.agent, &s.parent) {
                (Some(_), Some(p)) => p.clone(),
                _ => s.sid.clone(),
            };
            let root_created = created.get(&root).copied().unwrap_or(s.created_ns);
            (
                root_created,
                root,
                s.agent.is_some(),
                s.created_ns,
                s.sid.clone(),
            )
        });
        Ok(all)
    }

    /// Whether the file holds session `sid`.
    pub fn has_session(&self, sid: &str) -> Result<bool> {
        self.read(|conn| exists(conn, sid))
    }

    /// What to tell the user of a session `sid` the file does not hold
    /// while it holds others ("no session \"agnt-7\" in FILE; nearest:
    /// ..."): a mistyped --sid would otherwise pass for a session with no
    /// views. `None` when it holds `sid`, or no session at all.
    pub fn unknown_session(&self, sid: &str) -> Result<Option<String>> {
        let path = self.path().to_path_buf();
        self.read(|conn| {
            let any: bool = conn
                .query_row("SELECT 1 FROM sessions LIMIT 1", [], |_| Ok(()))
                .optional()?
                .is_some();
            Ok(match any && !exists(conn, sid)? {
                false => None,
                true => Some(missing(conn, &path, sid)?.message().to_string()),
            })
        })
    }

    /// Ok when the file holds session `sid`; else the error that names the
    /// nearest ids it does hold.
    pub fn require_session(&self, sid: &str) -> Result<()> {
        let path = self.path().to_path_buf();
        self.read(|conn| {
            Ok(match exists(conn, sid)? {
                true => Ok(()),
                false => Err(missing(conn, &path, sid)?),
            })
        })?
    }

    /// The session's log, oldest first; with `limit`, only the latest
    /// `limit` events.
    pub fn events(&self, sid: &str, limit: Option<u64>) -> Result<Vec<EventRecord>> {
        self.read(|conn| {
            let limit = limit.map(|n| n.min(i64::MAX as u64) as i64).unwrap_or(-1);
            let mut stmt = conn.prepare(
                "SELECT * FROM (SELECT id, at_ns, tool, action, path, verdict, detail
                   FROM events WHERE sid=?1 ORDER BY id DESC LIMIT ?2) ORDER BY id",
            )?;
            let rows = stmt.query_map(params![sid, limit], event_row)?;
            rows.collect()
        })
    }

    /// Copy session `from` into `to`: its views (texts shared by hash), the
    /// instruction files it was given and its memoized context, so a
    /// subagent starts where its parent is. `to` must not exist unless
    /// `replace`.
    pub fn fork(&self, from: &str, to: &str, replace: bool) -> Result<Counts> {
        if from == to {
            return Err(Error::new(format!(
                "cannot fork session {} into itself; name another --sid",
                quote_id(from)
            )));
        }
        let path = self.path().to_path_buf();
        self.write(|conn| {
            if !exists(conn, from)? {
                return Ok(Err(missing(conn, &path, from)?));
            }
            if exists(conn, to)? {
                if !replace {
                    return Ok(Err(Error::new(format!(
                        "session {} already exists in {}; pass --replace to overwrite it, or fork into another --sid",
                        quote_id(to),
                        quote(&path)
                    ))));
                }
                delete_session(conn, to)?;
            }
            let now = fingerprint::now_ns();
            conn.execute(
                "INSERT INTO sessions(sid, created_ns, parent) VALUES(?1, ?2, ?3)",
                params![to, now, from],
            )?;
            let n = copy_session(conn, from, to, &[])?;
            let detail = format!("from {}", quote_id(from));
            let e = Event::new(SESSION_TOOL, "fork").detail(Some(&detail));
            log_in(conn, to, now, &e)?;
            Ok(Ok(n))
        })?
    }

    /// Delete session `sid` and everything of it, its agents' sessions
    /// included (see [`crate::agents`]). Its kept texts stay until
    /// [`Store::gc`].
    pub fn drop_session(&self, sid: &str) -> Result<Counts> {
        let path = self.path().to_path_buf();
        self.write(|conn| {
            if !exists(conn, sid)? {
                return Ok(Err(missing(conn, &path, sid)?));
            }
            let mut n = delete_session(conn, sid)?;
            for agent in crate::agents::agents_in(conn, sid)? {
                let a = delete_session(conn, &agent.sid)?;
                n.files += a.files;
                n.views += a.views;
                n.context += a.context;
                n.nested += a.nested;
                n.events += a.events;
                n.agents += 1;
            }
            Ok(Ok(n))
        })?
    }

    /// Everything of session `sid`, read in one snapshot; `None` when the
    /// file has no such session.
    pub fn dump(&self, sid: &str) -> Result<Option<Dump>> {
        self.read(|conn| snapshot(conn, |conn| dump(conn, sid)))
    }

    /// Store `d` as session `sid` in one transaction, replacing a session of
    /// that id only when `replace`. Texts are checked against their hashes
    /// by the caller; the text budget applies as to any kept text.
    pub fn load(&self, d: &Dump, sid: &str, replace: bool) -> Result<Counts> {
        let budget = self.text_budget()?;
        let path = self.path().to_path_buf();
        self.write(|conn| {
            if exists(conn, sid)? {
                if !replace {
                    return Ok(Err(Error::new(format!(
                        "session {} already exists in {}; pass --replace to overwrite it, or --sid NEW to import it under another id",
                        quote_id(sid),
                        quote(&path)
                    ))));
                }
                delete_session(conn, sid)?;
            }
            Ok(Ok(load(conn, d, sid, budget)?))
        })?
    }

    /// Drop kept texts no view refers to, then checkpoint the WAL and
    /// truncate it.
    pub fn gc(&self) -> Result<Collected> {
        let wal = wal_path(self.path());
        let wal_before = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        let (texts, bytes) = self.write(|conn| {
            let orphan = "hash NOT IN (SELECT text_hash FROM views WHERE text_hash IS NOT NULL)
                 AND hash NOT IN (SELECT text_hash FROM told WHERE text_hash IS NOT NULL)
                 AND hash NOT IN (SELECT text_hash FROM own WHERE text_hash IS NOT NULL)";
            let (n, bytes): (i64, i64) = conn.query_row(
                &format!("SELECT count(*), coalesce(sum(length(body)), 0) FROM texts WHERE {orphan}"),
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            conn.execute(&format!("DELETE FROM texts WHERE {orphan}"), [])?;
            conn.execute(
                "DELETE FROM text_use WHERE hash NOT IN (SELECT hash FROM texts)",
                [],
            )?;
            conn.execute(
                "INSERT INTO meta(key, value) VALUES('text_bytes', (SELECT coalesce(sum(size), 0) FROM text_use))
                 ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                [],
            )?;
            Ok((n, bytes))
        })?;
        // Truncated for real: gc gives the space back (see crate::vfs).
        let busy: i64 = crate::vfs::truncating(|| {
            self.read(|conn| conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0)))
        })?;
        let wal_after = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        Ok(Collected {
            texts,
            bytes,
            wal_before,
            wal_after,
            busy: busy != 0,
        })
    }
}

fn wal_path(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_os_string();
    s.push("-wal");
    PathBuf::from(s)
}

/// "No such session", with the nearest ids the file does hold as a hint:
/// a mistyped --sid is named, never taken for an empty session.
fn missing(conn: &Connection, path: &Path, sid: &str) -> rusqlite::Result<Error> {
    let mut stmt = conn.prepare("SELECT sid FROM sessions")?;
    let sids = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    let near = nearest(sid, &sids, 3);
    let hint = if near.is_empty() {
        "it holds no sessions yet".to_string()
    } else {
        let near: Vec<String> = near.iter().map(|s| quote_id(s)).collect();
        format!("nearest: {} (see `fsview-session list`)", near.join(", "))
    };
    Ok(Error::new(format!(
        "no session {} in {}; {hint}",
        quote_id(sid),
        quote(path)
    )))
}

/// Up to `n` of `sids`, nearest to `sid` first: by edit distance relative
/// to the longer id (so a short unrelated id is not "near"), then by name.
fn nearest<'a>(sid: &str, sids: &'a [String], n: usize) -> Vec<&'a str> {
    let mut ranked: Vec<(f64, &str)> = sids
        .iter()
        .map(|s| (strsim::normalized_damerau_levenshtein(sid, s), s.as_str()))
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    ranked.into_iter().take(n).map(|(_, s)| s).collect()
}

pub(crate) fn exists(conn: &Connection, sid: &str) -> rusqlite::Result<bool> {
    Ok(conn
        .query_row("SELECT 1 FROM sessions WHERE sid=?1", [sid], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Copy session `from`'s views (kept texts shared by hash), memoized
/// context and loaded instruction files into session `to`, whose row
/// exists and holds nothing yet. A view `from` no longer held is copied as
/// such; how far `from`'s transcript was read is not copied (`to` reads
/// its own).
pub(crate) fn copy_session(
    conn: &Connection,
    from: &str,
    to: &str,
    unseen: &[String],
) -> rusqlite::Result<Counts> {
    let mut files = conn.execute(
        "INSERT INTO files(sid, path, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, viewed_ns, quick)
         SELECT ?2, path, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, viewed_ns, quick
         FROM files WHERE sid=?1 ORDER BY id",
        params![from, to],
    )?;
    let mut views = conn.execute(
        "INSERT INTO views(file_id, kind, line_offset, line_count, source, total_lines, shown_hash, text_hash, viewed_ns, copied, origin, released, released_ns)
         SELECT nf.id, v.kind, v.line_offset, v.line_count, v.source, v.total_lines, v.shown_hash, v.text_hash, v.viewed_ns, 1, v.origin, v.released, v.released_ns
         FROM files f JOIN views v ON v.file_id = f.id
         JOIN files nf ON nf.sid = ?2 AND nf.path = f.path
         WHERE f.sid = ?1",
        params![from, to],
    )?;
    // What a reminder told of a file holds the copy as it holds `from`: a
    // file told in part stays modified until read, even changed back.
    conn.execute(
        "INSERT INTO told(file_id, change, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, text_hash, told_ns)
         SELECT nf.id, t.change, t.dev, t.ino, t.btime_ns, t.ftype, t.size, t.mtime_ns, t.ctime_ns, t.taken_ns, t.hash, t.text_hash, t.told_ns
         FROM files f JOIN told t ON t.file_id = f.id
         JOIN files nf ON nf.sid = ?2 AND nf.path = f.path
         WHERE f.sid = ?1",
        params![from, to],
    )?;
    if !unseen.is_empty() {
        // Views `to` never saw, and then the files left with no view.
        for origin in unseen {
            views -= conn.execute(
                "DELETE FROM views WHERE origin = ?2 AND file_id IN (SELECT id FROM files WHERE sid = ?1)",
                params![to, origin],
            )?;
        }
        files -= conn.execute(
            "DELETE FROM files WHERE sid = ?1 AND id NOT IN (SELECT file_id FROM views)",
            [to],
        )?;
    }
    let context = conn.execute(
        "INSERT INTO context(sid, part, body, built_ns, meta)
         SELECT ?2, part, body, built_ns, meta FROM context WHERE sid=?1",
        params![from, to],
    )?;
    let nested = conn.execute(
        "INSERT INTO nested(sid, path) SELECT ?2, path FROM nested WHERE sid=?1",
        params![from, to],
    )?;
    Ok(Counts {
        files,
        views,
        context,
        nested,
        ..Counts::default()
    })
}

/// Delete every row of session `sid`, counting them.
fn delete_session(conn: &Connection, sid: &str) -> rusqlite::Result<Counts> {
    let views = conn.execute(
        "DELETE FROM views WHERE file_id IN (SELECT id FROM files WHERE sid=?1)",
        [sid],
    )?;
    let files = conn.execute("DELETE FROM files WHERE sid=?1", [sid])?;
    let context = conn.execute("DELETE FROM context WHERE sid=?1", [sid])?;
    let nested = conn.execute("DELETE FROM nested WHERE sid=?1", [sid])?;
    let events = conn.execute("DELETE FROM events WHERE sid=?1", [sid])?;
    // And the cursors of the conversations that shared the session
    // (fsview-hook --sid: `SID`, a newline, the conversation).
    conn.execute(
        "DELETE FROM transcripts WHERE sid=?1 OR substr(sid, 1, length(?1) + 1) = ?1 || char(10)",
        [sid],
    )?;
    conn.execute("DELETE FROM own WHERE sid=?1", [sid])?;
    conn.execute("DELETE FROM runs WHERE sid=?1", [sid])?;
    conn.execute("DELETE FROM sessions WHERE sid=?1", [sid])?;
    Ok(Counts {
        files,
        views,
        context,
        nested,
        events,
        texts: 0,
        agents: 0,
    })
}

/// Run `f` in one read transaction (one snapshot).
fn snapshot<T>(
    conn: &Connection,
    f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.execute_batch("BEGIN")?;
    let result = f(conn);
    let _ = conn.execute_batch(if result.is_ok() { "COMMIT" } else { "ROLLBACK" });
    result
}

fn to_path(b: Vec<u8>) -> PathBuf {
    PathBuf::from(OsString::from_vec(b))
}

pub(crate) fn event_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<EventRecord> {
    Ok(EventRecord {
        id: r.get(0)?,
        at_ns: r.get(1)?,
        tool: r.get(2)?,
        action: r.get(3)?,
        path: r.get::<_, Option<Vec<u8>>>(4)?.map(to_path),
        verdict: r.get(5)?,
        detail: r.get(6)?,
    })
}

fn dump(conn: &Connection, sid: &str) -> rusqlite::Result<Option<Dump>> {
    let head: Option<(Option<String>, i64)> = conn
        .query_row(
            "SELECT parent, created_ns FROM sessions WHERE sid=?1",
            [sid],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((parent, created_ns)) = head else {
        return Ok(None);
    };
    let mut files = Vec::new();
    {
        let mut fstmt = conn.prepare(&format!(
            "SELECT {FILE_COLUMNS} FROM files WHERE sid=?1 ORDER BY viewed_ns, id"
        ))?;
        let mut vstmt = conn.prepare(&format!(
            "SELECT {VIEW_COLUMNS} FROM views WHERE file_id=?1 ORDER BY viewed_ns, kind, line_offset, line_count"
        ))?;
        let mut tstmt =
            conn.prepare(&format!("SELECT {TOLD_COLUMNS} FROM told WHERE file_id=?1"))?;
        let records: Vec<FileRecord> = fstmt
            .query_map([sid], file_row)?
            .collect::<rusqlite::Result<_>>()?;
        for record in records {
            let views = vstmt
                .query_map([record.id], view_row)?
                .collect::<rusqlite::Result<_>>()?;
            let told = tstmt.query_row([record.id], told_row).optional()?;
            files.push(DumpFile {
                record,
                views,
                told,
            });
        }
    }
    let texts = conn
        .prepare(
            "SELECT t.hash, t.body FROM texts t WHERE t.hash IN
               (SELECT v.text_hash FROM views v JOIN files f ON v.file_id = f.id WHERE f.sid=?1)
               OR t.hash IN
               (SELECT d.text_hash FROM told d JOIN files f ON d.file_id = f.id WHERE f.sid=?1)
             ORDER BY t.hash",
        )?
        .query_map([sid], |r| Ok((blob_hash(r.get(0)?), r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let context = conn
        .prepare("SELECT part, body, built_ns, meta FROM context WHERE sid=?1 ORDER BY part")?
        .query_map([sid], |r| {
            Ok(ContextRow {
                part: r.get(0)?,
                body: r.get(1)?,
                built_ns: r.get(2)?,
                meta: r.get(3)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let nested = conn
        .prepare("SELECT path FROM nested WHERE sid=?1 ORDER BY path")?
        .query_map([sid], |r| r.get::<_, Vec<u8>>(0).map(to_path))?
        .collect::<rusqlite::Result<_>>()?;
    let events = conn
        .prepare(
            "SELECT id, at_ns, tool, action, path, verdict, detail FROM events WHERE sid=?1 ORDER BY id",
        )?
        .query_map([sid], event_row)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Some(Dump {
        sid: sid.to_string(),
        parent,
        created_ns,
        files,
        texts,
        context,
        nested,
        events,
    }))
}

fn load(conn: &Connection, d: &Dump, sid: &str, budget: i64) -> rusqlite::Result<Counts> {
    let now = fingerprint::now_ns();
    let mut n = Counts::default();
    conn.execute(
        "INSERT INTO sessions(sid, created_ns, parent) VALUES(?1, ?2, ?3)",
        params![sid, d.created_ns, d.parent],
    )?;
    for DumpFile {
        record: f,
        views,
        told,
    } in &d.files
    {
        let fp = &f.fingerprint;
        conn.prepare_cached(
            "INSERT INTO files(sid, path, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, viewed_ns, quick)
             VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?
        .execute(params![
            sid,
            path_bytes(&f.path),
            fp.stat.dev as i64,
            fp.stat.ino as i64,
            fp.stat.btime_ns,
            fp.stat.ftype.code(),
            fp.stat.size as i64,
            fp.stat.mtime_ns,
            fp.stat.ctime_ns,
            fp.taken_ns,
            fp.hash.as_ref().map(|h| &h[..]),
            f.viewed_ns,
            crate::store::quick_param(fp),
        ])?;
        let id = conn.last_insert_rowid();
        n.files += 1;
        for v in views {
            // A document may name one view twice; the last one wins, as a
            // second recording of it would. Marked copied: the importing
            // conversation never saw their text.
            conn.prepare_cached(
                "INSERT OR REPLACE INTO views(file_id, kind, line_offset, line_count, source, total_lines, shown_hash, text_hash, viewed_ns, copied, origin, released, released_ns)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?11, ?12)",
            )?
            .execute(params![
                id,
                v.kind.as_str(),
                line_number(v.offset),
                line_number(v.lines),
                v.source.as_str(),
                v.total_lines.map(line_number),
                &v.shown_hash[..],
                v.text_hash.as_ref().map(|h| &h[..]),
                v.viewed_ns,
                v.origin,
                v.released.map(|(why, _)| why.as_str()),
                v.released.map(|(_, at)| at)
            ])?;
            n.views += 1;
        }
        if let Some(t) = told {
            // What the agent was last told stays what it was told: the
            // gate refuses the file here too until it is read.
            store_told(conn, id, t, t.text_hash, t.told_ns)?;
        }
    }
    for (hash, body) in &d.texts {
        let have = conn
            .prepare_cached("UPDATE text_use SET used_ns=?2 WHERE hash=?1")?
            .execute(params![&hash[..], now])?;
        if have > 0 {
            continue;
        }
        conn.prepare_cached("INSERT OR IGNORE INTO texts(hash, body) VALUES(?1, ?2)")?
            .execute(params![&hash[..], body])?;
        conn.prepare_cached("INSERT INTO text_use(hash, size, used_ns) VALUES(?1, ?2, ?3)")?
            .execute(params![&hash[..], body.len() as i64, now])?;
        conn.prepare_cached(
            "INSERT INTO meta(key, value) VALUES('text_bytes', ?1)
             ON CONFLICT(key) DO UPDATE SET value = value + excluded.value",
        )?
        .execute([body.len() as i64])?;
        n.texts += 1;
    }
    evict(conn, budget)?;
    for c in &d.context {
        conn.execute(
            "INSERT OR REPLACE INTO context(sid, part, body, built_ns, meta) VALUES(?1, ?2, ?3, ?4, ?5)",
            params![sid, c.part, c.body, c.built_ns, c.meta],
        )?;
        n.context += 1;
    }
    for p in &d.nested {
        n.nested += conn
            .prepare_cached("INSERT OR IGNORE INTO nested(sid, path) VALUES(?1, ?2)")?
            .execute(params![sid, path_bytes(p)])?;
    }
    // The log is bounded here as everywhere: keep the latest.
    let skip = d.events.len().saturating_sub((KEEP - 1) as usize);
    for e in &d.events[skip..] {
        conn.prepare_cached(
            "INSERT INTO events(sid, at_ns, tool, action, path, verdict, detail) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            sid,
            e.at_ns,
            e.tool,
            e.action,
            e.path.as_deref().map(path_bytes),
            e.verdict,
            e.detail
        ])?;
        n.events += 1;
    }
    let detail = format!("from an export of {}", quote_id(&d.sid));
    log_in(
        conn,
        sid,
        now,
        &Event::new(SESSION_TOOL, "import").detail(Some(&detail)),
    )?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::{self, Request};
    use crate::store::NewView;
    use crate::view::Source;

    fn read(store: &Store, sid: &str, path: &Path) {
        let s = show::read(path, &Request::whole(1 << 20)).unwrap();
        store
            .record(sid, &NewView::of_shown(path, &s, Source::Read))
            .unwrap();
    }

    // A dump loaded under another id is the same session: same files,
    // fingerprints, views and texts.
    #[test]
    fn dump_and_load_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let a = d.path().join("a");
        std::fs::write(&a, "one\ntwo\n").unwrap();
        read(&store, "x", &a);
        let dumped = store.dump("x").unwrap().unwrap();
        assert_eq!(dumped.texts.len(), 1);
        store.load(&dumped, "y", false).unwrap();
        let again = store.dump("y").unwrap().unwrap();
        assert_eq!(again.files.len(), 1);
        assert_eq!(
            again.files[0].record.fingerprint,
            dumped.files[0].record.fingerprint
        );
        assert_eq!(again.files[0].views.len(), 1);
        assert_eq!(again.texts, dumped.texts);
        let e = store.load(&dumped, "y", false).unwrap_err();
        assert!(e.message().contains("already exists"), "{e}");
        assert!(store.dump("nope").unwrap().is_none());
    }

    // A mistyped id is named with the ids nearest to it, closest first.
    #[test]
    fn a_missing_session_names_the_nearest() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.db");
        let store = Store::open(&p).unwrap();
        let e = store.require_session("agent-7").unwrap_err();
        assert_eq!(
            e.message(),
            format!(
                "no session \"agent-7\" in {}; it holds no sessions yet",
                p.display()
            )
        );
        let a = d.path().join("a");
        std::fs::write(&a, "x\n").unwrap();
        for sid in ["default", "agent-1", "agent-7b", "zzz"] {
            read(&store, sid, &a);
        }
        store.require_session("agent-1").unwrap();
        let e = store.require_session("agent-7").unwrap_err();
        assert_eq!(
            e.message(),
            format!(
                "no session \"agent-7\" in {}; nearest: \"agent-7b\", \"agent-1\", \"default\" (see `fsview-session list`)",
                p.display()
            )
        );
        assert_eq!(
            store.drop_session("agent-7").unwrap_err().message(),
            e.message()
        );
    }
}
