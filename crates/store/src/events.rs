//! The session's event log: what every tool did, with its verdict and why.
//!
//! Every binary appends to the `events` table: reads and recorded writes,
//! edit checks with their verdicts, context builds (hit or miss), and
//! invalidations with their reasons. Where a tool writes anyway, its event
//! goes into the same transaction ([`log_in`]), so the log never claims a
//! change that was rolled back, nor misses one that was committed. A tool
//! that is otherwise read-only (fsview-check-edit) logs all of one call's
//! events in one short transaction at its end ([`Store::log`]).
//!
//! The log is bounded: once a session holds more than [`KEEP`] events, its
//! oldest are deleted in the same transaction, down to [`PRUNE_TO`], so the
//! count is paid for once per thousand events, not on every insert.

use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::fingerprint::{self, Fingerprint};
use crate::store::{
    ensure_session, path_bytes, record_in, refresh_in, Budget, FileRecord, NewView, Recorded, Store,
};

/// Most events a session keeps.
pub const KEEP: i64 = 10_000;
/// What a session over [`KEEP`] is cut down to.
pub const PRUNE_TO: i64 = 9_000;

/// One event to append.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    /// The binary: `fsview-read`, `fsview-check-edit`, ...
    pub tool: &'a str,
    /// What it did: `read`, `check`, `build`, `invalidate`, ...
    pub action: &'a str,
    /// The canonical path it was about, if any.
    pub path: Option<&'a Path>,
    /// Its answer: a check's verdict, a build's `hit` or `miss`, ...
    pub verdict: Option<&'a str>,
    /// Anything else: a view's kind, an invalidation's reason, a count.
    pub detail: Option<&'a str>,
}

impl<'a> Event<'a> {
    pub fn new(tool: &'a str, action: &'a str) -> Event<'a> {
        Event {
            tool,
            action,
            path: None,
            verdict: None,
            detail: None,
        }
    }

    pub fn path(self, path: &'a Path) -> Event<'a> {
        Event {
            path: Some(path),
            ..self
        }
    }

    pub fn verdict(self, verdict: &'a str) -> Event<'a> {
        Event {
            verdict: Some(verdict),
            ..self
        }
    }

    pub fn detail(self, detail: Option<&'a str>) -> Event<'a> {
        Event { detail, ..self }
    }
}

/// Append `e` to session `sid`'s log inside a write transaction already open
/// on `conn`, pruning the session's oldest events past [`KEEP`].
pub fn log_in(conn: &Connection, sid: &str, now: i64, e: &Event<'_>) -> rusqlite::Result<()> {
    log_all(conn, sid, now, std::slice::from_ref(e))
}

/// Append `events` to session `sid`'s log inside a write transaction
/// already open on `conn`, then prune its oldest events past [`KEEP`]
/// once: a batch's events cost an insert each and nothing more.
pub(crate) fn log_all(
    conn: &Connection,
    sid: &str,
    now: i64,
    events: &[Event<'_>],
) -> rusqlite::Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    // Every event belongs to a listed session.
    ensure_session(conn, sid, now)?;
    insert_all(conn, sid, now, events)
}

/// [`log_all`], for a session known to be listed.
fn insert_all(
    conn: &Connection,
    sid: &str,
    now: i64,
    events: &[Event<'_>],
) -> rusqlite::Result<()> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO events(sid, at_ns, tool, action, path, verdict, detail) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    // Checked when an id passed a multiple of 64 only: the bound is then
    // KEEP plus at most 64 (or the batch), and the common insert is one
    // statement.
    let mut check = false;
    let mut id = 0;
    for e in events {
        insert.execute(params![
            sid,
            now,
            e.tool,
            e.action,
            e.path.map(path_bytes),
            e.verdict,
            e.detail
        ])?;
        id = conn.last_insert_rowid();
        check |= id % 64 == 0;
    }
    if check {
        prune(conn, sid, id)?;
    }
    Ok(())
}

/// Cut session `sid`'s log down to [`PRUNE_TO`] when it holds more than
/// [`KEEP`] events; `id` is its newest.
fn prune(conn: &Connection, sid: &str, id: i64) -> rusqlite::Result<()> {
    // Ids are unique and increasing, so a session holds at most
    // `id - oldest + 1` events: one index seek rules out pruning almost
    // always, and only a span over the bound pays for counting.
    let oldest: i64 = conn
        .prepare_cached("SELECT id FROM events WHERE sid=?1 ORDER BY id LIMIT 1")?
        .query_row([sid], |r| r.get(0))?;
    if id - oldest < KEEP {
        return Ok(());
    }
    let nth_newest = |n: i64| -> rusqlite::Result<Option<i64>> {
        conn.prepare_cached(
            "SELECT id FROM events WHERE sid=?1 ORDER BY id DESC LIMIT 1 OFFSET ?2",
        )?
        .query_row(params![sid, n - 1], |r| r.get(0))
        .optional()
    };
    if nth_newest(KEEP + 1)?.is_none() {
        return Ok(());
    }
    if let Some(keep_from) = nth_newest(PRUNE_TO)? {
        conn.prepare_cached("DELETE FROM events WHERE sid=?1 AND id < ?2")?
            .execute(params![sid, keep_from])?;
    }
    Ok(())
}

impl Store {
    /// Record a view and its event in one transaction; `event` makes the
    /// event from what recording found.
    pub fn record_logged<'e>(
        &self,
        sid: &str,
        v: &NewView<'_>,
        event: impl Fn(Recorded) -> Event<'e>,
    ) -> Result<Recorded> {
        self.write(|conn| {
            let now = fingerprint::now_ns();
            let r = record_in(conn, sid, v, now, &mut Budget::unread())?;
            // record_in left the session listed.
            insert_all(conn, sid, now, &[event(r)])?;
            Ok(r)
        })
    }

    /// Append events to session `sid`'s log, all in one transaction.
    pub fn log(&self, sid: &str, events: &[Event<'_>]) -> Result<()> {
        self.refresh_and_log(sid, &[], events)
    }

    /// End a batch of checks in one transaction: store each fingerprint
    /// worth storing, only onto the record it was computed from (see
    /// [`Store::refresh`]), and append the batch's events.
    pub fn refresh_and_log(
        &self,
        sid: &str,
        refreshes: &[(FileRecord, Fingerprint)],
        events: &[Event<'_>],
    ) -> Result<()> {
        if refreshes.is_empty() && events.is_empty() {
            return Ok(());
        }
        if !refreshes.is_empty() {
            crate::pause::point("refresh");
        }
        self.write(|conn| {
            for (record, fp) in refreshes {
                refresh_in(conn, sid, record, fp)?;
            }
            log_all(conn, sid, fingerprint::now_ns(), events)
        })
    }

    /// Log `e` unless it would repeat the session's latest event exactly
    /// (same tool, action, path, verdict and detail): a run of identical
    /// events, such as cache hits with nothing in between, is logged once,
    /// and the call that finds it logged writes nothing.
    pub fn log_once(&self, sid: &str, e: &Event<'_>) -> Result<()> {
        let path = e.path.map(path_bytes);
        let repeat = self.read(|conn| {
            conn.query_row(
                "SELECT tool IS ?2 AND action IS ?3 AND path IS ?4 AND verdict IS ?5 AND detail IS ?6
                 FROM events WHERE sid=?1 ORDER BY id DESC LIMIT 1",
                params![sid, e.tool, e.action, path, e.verdict, e.detail],
                |r| r.get::<_, bool>(0),
            )
            .optional()
        })?;
        if repeat == Some(true) {
            return Ok(());
        }
        self.log(sid, std::slice::from_ref(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(s: &Store, sid: &str) -> i64 {
        s.read(|c| {
            c.query_row("SELECT count(*) FROM events WHERE sid=?1", [sid], |r| {
                r.get(0)
            })
        })
        .unwrap()
    }

    // The log stays bounded per session, and pruning one session never
    // touches another's events.
    #[test]
    fn log_is_bounded_per_session() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("s.db")).unwrap();
        s.log("quiet", &[Event::new("t", "a")]).unwrap();
        let many: Vec<Event<'_>> = (0..KEEP).map(|_| Event::new("t", "a")).collect();
        s.log("busy", &many).unwrap();
        assert_eq!(count(&s, "busy"), KEEP);
        // Pruning is checked on every 64th id (ids 1..=10001 so far): the
        // count never passes KEEP + 64, and the prune at id 10048 cuts it to
        // PRUNE_TO, after which the last 17 events are added.
        let mut most = 0;
        for i in 0..64 {
            let action = if i == 63 { "last" } else { "a" };
            s.log("busy", &[Event::new("t", action)]).unwrap();
            most = most.max(count(&s, "busy"));
        }
        assert!(most <= KEEP + 64, "{most}");
        assert_eq!(count(&s, "busy"), PRUNE_TO + 17);
        assert_eq!(count(&s, "quiet"), 1);
        let newest: String = s
            .read(|c| {
                c.query_row(
                    "SELECT action FROM events WHERE sid='busy' ORDER BY id DESC LIMIT 1",
                    [],
                    |r| r.get(0),
                )
            })
            .unwrap();
        assert_eq!(newest, "last");
    }

    // A run of identical events (cache hits in a loop) is logged once; the
    // same event after another one is news again.
    #[test]
    fn log_once_skips_exact_repeats_only() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("s.db")).unwrap();
        let hit = Event::new("ctx-build", "build").verdict("hit");
        s.log_once("x", &hit).unwrap();
        s.log_once("x", &hit).unwrap();
        assert_eq!(count(&s, "x"), 1);
        s.log_once("x", &Event::new("ctx-build", "build").verdict("miss"))
            .unwrap();
        s.log_once("x", &hit).unwrap();
        assert_eq!(count(&s, "x"), 3);
    }
}
