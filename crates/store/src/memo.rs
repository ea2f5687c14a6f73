//! The memoized context of a session, and everything that clears it.
//!
//! ctx-build stores each part it builds (`system`, `user`) in the `context`
//! table with the views of the files it injected, in one transaction, so a
//! session never holds a memo whose files were not recorded, nor the other
//! way round. Parts are stored with `INSERT OR IGNORE`: when two builds race
//! on a cold cache the first one stored wins, and the other returns the
//! winner's bytes, so every caller sees the same bytes from then on.
//!
//! A build that started before an invalidation must not store what it saw
//! after it: every ctx-invalidate writes an event, the id of the latest one
//! is the memo's *generation*, and a build stores only when the generation
//! it started from is still current (else it builds again).
//!
//! The pending system-prompt injection is the `injection` part. The
//! `nested` table holds every instruction file the session has been given
//! (eagerly or lazily), so lazy loading returns each one once.

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::events::{log_in, Event};
use crate::fingerprint::{self, Stat};
use crate::store::{ensure_session, path_bytes, record_in, Budget, NewView, Store};

/// The tool name that invalidation events are recorded under.
pub const INVALIDATE_TOOL: &str = "ctx-invalidate";

/// A memoized part as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub body: String,
    /// The builder's own description of the part (JSON for ctx-build).
    pub meta: Option<String>,
    pub built_ns: i64,
}

/// What the session holds for its context.
#[derive(Clone, Debug, Default)]
pub struct Memo {
    pub system: Option<Part>,
    pub user: Option<Part>,
    pub injection: Option<String>,
    /// The id of the latest invalidation event (0 when none).
    pub generation: i64,
}

/// A part to store.
pub struct NewPart<'a> {
    pub body: &'a str,
    pub meta: &'a str,
}

/// One build to store, atomically.
pub struct Build<'a> {
    /// Store only if the generation is still this (`None`: always).
    pub generation: Option<i64>,
    pub system: Option<NewPart<'a>>,
    pub user: Option<NewPart<'a>>,
    /// The views of the user part's files, recorded only if this build's
    /// user part is the one stored.
    pub user_views: &'a [NewView<'a>],
    /// Lazily loaded files: each is recorded only if no build gave it to the
    /// session before.
    pub nested_views: &'a [NewView<'a>],
    /// Logged with the build, in its transaction, when it is stored.
    pub event: Option<Event<'a>>,
}

/// What storing a build did.
#[derive(Debug)]
pub enum Stored {
    /// An invalidation came between reading the memo and storing: build
    /// again.
    Outdated,
    Done {
        /// The parts now stored (ours, or a racing build's).
        system: Option<Part>,
        user: Option<Part>,
        /// Per `nested_views` entry: whether this build gave it first.
        nested_new: Vec<bool>,
    },
}

/// Which parts to clear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    pub system: bool,
    pub user: bool,
}

/// A file to forget: its canonical path and, when it exists, its stat (so
/// a hard link to a viewed file is forgotten too).
pub struct ForgetPath<'a> {
    pub path: &'a Path,
    pub stat: Option<Stat>,
}

impl Store {
    /// The session's memo, in one read, without its generation (a hit
    /// needs none; see [`Store::memo_for_build`]).
    pub fn memo(&self, sid: &str) -> Result<Memo> {
        self.read(|conn| memo(conn, sid, 0))
    }

    /// The session's memo with its generation, read first: an invalidation
    /// between the two reads then makes the build outdated, never the memo
    /// newer than the generation it is stored under.
    pub fn memo_for_build(&self, sid: &str) -> Result<Memo> {
        self.read(|conn| {
            let g = generation(conn, sid)?;
            memo(conn, sid, g)
        })
    }

    /// The instruction files this session has been given.
    pub fn nested(&self, sid: &str) -> Result<HashSet<PathBuf>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached("SELECT path FROM nested WHERE sid=?1")?;
            let rows = stmt.query_map([sid], |r| r.get::<_, Vec<u8>>(0))?;
            rows.map(|r| r.map(|b| PathBuf::from(OsString::from_vec(b))))
                .collect()
        })
    }

    /// Store a build: its parts, the views of its files and the files given
    /// to the session, in one transaction.
    pub fn store_build(&self, sid: &str, b: &Build<'_>) -> Result<Stored> {
        self.write(|conn| {
            let now = fingerprint::now_ns();
            let mut budget = Budget::unread();
            if let Some(g) = b.generation {
                if generation(conn, sid)? != g {
                    return Ok(Stored::Outdated);
                }
            }
            ensure_session(conn, sid, now)?;
            if let Some(p) = &b.system {
                insert_part(conn, sid, "system", p, now)?;
            }
            if let Some(p) = &b.user {
                if insert_part(conn, sid, "user", p, now)? {
                    for v in b.user_views {
                        record_in(conn, sid, v, now, &mut budget)?;
                        add_nested(conn, sid, v.path)?;
                    }
                }
            }
            let mut nested_new = Vec::with_capacity(b.nested_views.len());
            for v in b.nested_views {
                let fresh = add_nested(conn, sid, v.path)?;
                if fresh {
                    record_in(conn, sid, v, now, &mut budget)?;
                }
                nested_new.push(fresh);
            }
            if let Some(e) = &b.event {
                log_in(conn, sid, now, e)?;
            }
            Ok(Stored::Done {
                system: part(conn, sid, "system")?,
                user: part(conn, sid, "user")?,
                nested_new,
            })
        })
    }

    /// Take back what a build stored as shown when its output never
    /// reached the reader: the user part (when `user`: built again next
    /// time, its views recorded then), and the views of `paths` it
    /// injected, with their mark as given (offered again next time). A
    /// read's view of one of them stays.
    pub fn undo_build(&self, sid: &str, user: bool, paths: &[&Path]) -> Result<()> {
        self.write(|conn| {
            if user {
                clear(
                    conn,
                    sid,
                    Parts {
                        system: false,
                        user: true,
                    },
                )?;
            }
            for p in paths {
                drop_injected(conn, sid, &path_bytes(p))?;
            }
            let e = Event::new("ctx-build", "undo")
                .verdict(if user { "user" } else { "files" })
                .detail(Some("the context was not delivered in full"));
            log_in(conn, sid, fingerprint::now_ns(), &e)
        })
    }

    /// Every session in the file.
    pub fn sessions(&self) -> Result<Vec<String>> {
        self.read(|conn| {
            let mut stmt = conn.prepare("SELECT sid FROM sessions ORDER BY sid")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Clear memoized parts.
    pub fn invalidate(&self, sid: &str, parts: Parts, reason: Option<&str>) -> Result<()> {
        let cleared = match (parts.system, parts.user) {
            (true, true) => "system+user",
            (true, false) => "system",
            (false, true) => "user",
            (false, false) => return Ok(()),
        };
        self.write(|conn| {
            clear(conn, sid, parts)?;
            invalidation(conn, sid, "invalidate", cleared, reason)
        })
    }

    /// Set (or with `None` remove) the system-prompt injection, clearing
    /// both parts so the next build carries it.
    pub fn set_injection(
        &self,
        sid: &str,
        injection: Option<&str>,
        reason: Option<&str>,
    ) -> Result<()> {
        self.write(|conn| {
            let now = fingerprint::now_ns();
            ensure_session(conn, sid, now)?;
            clear(
                conn,
                sid,
                Parts {
                    system: true,
                    user: true,
                },
            )?;
            conn.execute(
                "DELETE FROM context WHERE sid=?1 AND part='injection'",
                [sid],
            )?;
            if let Some(text) = injection {
                conn.execute(
                    "INSERT INTO context(sid, part, body, built_ns) VALUES(?1, 'injection', ?2, ?3)",
                    params![sid, text.as_bytes(), now],
                )?;
            }
            let verdict = if injection.is_some() { "set" } else { "removed" };
            invalidation(conn, sid, "injection", verdict, reason)
        })
    }

    /// Forget views: of the given files, or all (`None`). Returns how many
    /// files the session no longer has views of. Loaded instruction files
    /// stay loaded (see [`Store::reset`]).
    pub fn forget(
        &self,
        sid: &str,
        which: Option<&[ForgetPath<'_>]>,
        reason: Option<&str>,
    ) -> Result<usize> {
        self.write(|conn| {
            let ids: Vec<i64> = match which {
                None => {
                    let mut stmt = conn.prepare("SELECT id FROM files WHERE sid=?1")?;
                    let rows = stmt.query_map([sid], |r| r.get(0))?;
                    rows.collect::<rusqlite::Result<_>>()?
                }
                Some(paths) => {
                    let mut ids = Vec::new();
                    for f in paths {
                        let mut stmt = conn.prepare_cached(
                            "SELECT id FROM files WHERE sid=?1 AND (path=?2 OR (dev=?3 AND ino=?4))",
                        )?;
                        let (dev, ino) = match &f.stat {
                            Some(s) => (s.dev as i64, s.ino as i64),
                            None => (-1, -1),
                        };
                        let rows = stmt
                            .query_map(params![sid, path_bytes(f.path), dev, ino], |r| r.get(0))?;
                        for id in rows {
                            ids.push(id?);
                        }
                    }
                    ids.sort_unstable();
                    ids.dedup();
                    ids
                }
            };
            for id in &ids {
                conn.execute("DELETE FROM views WHERE file_id=?1", [id])?;
                conn.execute("DELETE FROM files WHERE id=?1", [id])?;
            }
            let forgot = match (which, ids.len()) {
                (None, _) => "all".to_string(),
                (Some(_), 1) => "1 file".to_string(),
                (Some(_), n) => format!("{n} files"),
            };
            invalidation(conn, sid, "forget", &forgot, reason)?;
            Ok(ids.len())
        })
    }

    /// Forget the whole session, like `/clear`: its views, its memoized
    /// parts, its injection and the instruction files it was given. Its
    /// events stay, as a log.
    pub fn reset(&self, sid: &str, reason: Option<&str>) -> Result<()> {
        self.write(|conn| {
            conn.execute(
                "DELETE FROM views WHERE file_id IN (SELECT id FROM files WHERE sid=?1)",
                [sid],
            )?;
            conn.execute("DELETE FROM files WHERE sid=?1", [sid])?;
            conn.execute("DELETE FROM context WHERE sid=?1", [sid])?;
            conn.execute("DELETE FROM nested WHERE sid=?1", [sid])?;
            invalidation(conn, sid, "reset", "all", reason)
        })
    }

    /// Append one event to the session's log.
    pub fn event(
        &self,
        sid: &str,
        tool: &str,
        action: &str,
        path: Option<&Path>,
        detail: Option<&str>,
    ) -> Result<()> {
        self.write(|conn| event(conn, sid, tool, action, path, detail))
    }
}

fn memo(conn: &Connection, sid: &str, generation: i64) -> rusqlite::Result<Memo> {
    let mut memo = Memo {
        generation,
        ..Memo::default()
    };
    let mut stmt =
        conn.prepare_cached("SELECT part, body, meta, built_ns FROM context WHERE sid=?1")?;
    let mut rows = stmt.query([sid])?;
    while let Some(r) = rows.next()? {
        let part: String = r.get(0)?;
        let body: Vec<u8> = r.get(1)?;
        let p = Part {
            body: String::from_utf8_lossy(&body).into_owned(),
            meta: r.get(2)?,
            built_ns: r.get(3)?,
        };
        match part.as_str() {
            "system" => memo.system = Some(p),
            "user" => memo.user = Some(p),
            "injection" => memo.injection = Some(p.body),
            _ => {}
        }
    }
    Ok(memo)
}

fn generation(conn: &Connection, sid: &str) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT coalesce(max(id), 0) FROM events WHERE sid=?1 AND tool=?2")?
        .query_row(params![sid, INVALIDATE_TOOL], |r| r.get(0))
}

/// Store a part unless one is there; true when this one was stored.
fn insert_part(
    conn: &Connection,
    sid: &str,
    name: &str,
    p: &NewPart<'_>,
    now: i64,
) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO context(sid, part, body, built_ns, meta) VALUES(?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![sid, name, p.body.as_bytes(), now, p.meta])?;
    Ok(n == 1)
}

fn part(conn: &Connection, sid: &str, name: &str) -> rusqlite::Result<Option<Part>> {
    conn.prepare_cached("SELECT body, meta, built_ns FROM context WHERE sid=?1 AND part=?2")?
        .query_row(params![sid, name], |r| {
            let body: Vec<u8> = r.get(0)?;
            Ok(Part {
                body: String::from_utf8_lossy(&body).into_owned(),
                meta: r.get(1)?,
                built_ns: r.get(2)?,
            })
        })
        .optional()
}

/// The views the user part's build recorded of its files, with their
/// marks as given: a cleared user part is built again, and what the
/// conversation is then sent replaces the old text at the front of every
/// request, so the old text is no longer held. The rebuild records the
/// files it injects again; a view of the same file that came another way
/// (a read) stays.
fn release_user_files(conn: &Connection, sid: &str) -> rusqlite::Result<()> {
    let Some(user) = part(conn, sid, "user")? else {
        return Ok(());
    };
    let meta: serde_json::Value = user
        .meta
        .as_deref()
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or_default();
    let files = meta
        .get("files")
        .and_then(|f| f.as_array())
        .cloned()
        .unwrap_or_default();
    for path in files
        .iter()
        .filter_map(|f| crate::export::get_path(f, "path"))
    {
        drop_injected(conn, sid, &path_bytes(&path))?;
    }
    Ok(())
}

/// Drop what the context injected of the file at `path` (its canonical
/// path's bytes): its inject and import views (a read's stays), its record
/// when no view is left, and its mark as given.
fn drop_injected(conn: &Connection, sid: &str, path: &[u8]) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM views WHERE source IN ('inject', 'import')
           AND file_id IN (SELECT id FROM files WHERE sid=?1 AND path=?2)",
        params![sid, path],
    )?;
    conn.execute(
        "DELETE FROM files WHERE sid=?1 AND path=?2
           AND id NOT IN (SELECT file_id FROM views)",
        params![sid, path],
    )?;
    conn.execute(
        "DELETE FROM nested WHERE sid=?1 AND path=?2",
        params![sid, path],
    )?;
    Ok(())
}

/// Remember that the session was given `path`; true when it was new.
fn add_nested(conn: &Connection, sid: &str, path: &Path) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached("INSERT OR IGNORE INTO nested(sid, path) VALUES(?1, ?2)")?
        .execute(params![sid, path_bytes(path)])?;
    Ok(n == 1)
}

fn clear(conn: &Connection, sid: &str, parts: Parts) -> rusqlite::Result<()> {
    if parts.user {
        release_user_files(conn, sid)?;
    }
    for (on, name) in [(parts.system, "system"), (parts.user, "user")] {
        if on {
            conn.execute(
                "DELETE FROM context WHERE sid=?1 AND part=?2",
                params![sid, name],
            )?;
        }
    }
    Ok(())
}

fn event(
    conn: &Connection,
    sid: &str,
    tool: &str,
    action: &str,
    path: Option<&Path>,
    detail: Option<&str>,
) -> rusqlite::Result<()> {
    let e = Event {
        tool,
        action,
        path,
        verdict: None,
        detail,
    };
    log_in(conn, sid, fingerprint::now_ns(), &e)
}

/// An invalidation's event: what was cleared is its verdict, the reason its
/// detail.
fn invalidation(
    conn: &Connection,
    sid: &str,
    action: &str,
    verdict: &str,
    reason: Option<&str>,
) -> rusqlite::Result<()> {
    let e = Event::new(INVALIDATE_TOOL, action)
        .verdict(verdict)
        .detail(reason);
    log_in(conn, sid, fingerprint::now_ns(), &e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::Fingerprint;
    use crate::view::{Kind, Source};

    fn store() -> (tempfile::TempDir, Store) {
        let d = tempfile::tempdir().unwrap();
        let s = Store::open(&d.path().join("s.db")).unwrap();
        (d, s)
    }

    fn part<'a>(body: &'a str) -> Option<NewPart<'a>> {
        Some(NewPart { body, meta: "{}" })
    }

    #[test]
    fn first_stored_build_wins() {
        let (_d, s) = store();
        let g = s.memo_for_build("a").unwrap().generation;
        let one = Build {
            generation: Some(g),
            system: part("sys 1"),
            user: part("user 1"),
            user_views: &[],
            nested_views: &[],
            event: None,
        };
        s.store_build("a", &one).unwrap();
        let two = Build {
            system: part("sys 2"),
            user: part("user 2"),
            ..one
        };
        let Stored::Done { system, user, .. } = s.store_build("a", &two).unwrap() else {
            panic!("outdated");
        };
        assert_eq!(system.unwrap().body, "sys 1");
        assert_eq!(user.unwrap().body, "user 1");
    }

    #[test]
    fn an_invalidation_outdates_a_build_in_flight() {
        let (_d, s) = store();
        let g = s.memo_for_build("a").unwrap().generation;
        s.invalidate(
            "a",
            Parts {
                system: true,
                user: false,
            },
            Some("test"),
        )
        .unwrap();
        let b = Build {
            generation: Some(g),
            system: part("old"),
            user: None,
            user_views: &[],
            nested_views: &[],
            event: None,
        };
        assert!(matches!(s.store_build("a", &b).unwrap(), Stored::Outdated));
        assert!(s.memo("a").unwrap().system.is_none());
    }

    #[test]
    fn nested_files_are_given_once_and_reset_forgets_them() {
        let (d, s) = store();
        let f = d.path().join("CLAUDE.md");
        std::fs::write(&f, "x\n").unwrap();
        let (hash, stat) = fingerprint::hash_path(&f).unwrap();
        let fp = Fingerprint {
            stat,
            taken_ns: 0,
            hash: Some(hash),
            quick: None,
        };
        let v = NewView {
            path: &f,
            fingerprint: &fp,
            kind: Kind::Full,
            source: Source::Inject,
            offset: 1,
            lines: 1,
            total_lines: Some(1),
            shown: b"x\n",
            keep_text: true,
            origin: None,
            conversation: None,
        };
        let views = [v];
        let b = Build {
            generation: None,
            system: None,
            user: None,
            user_views: &[],
            nested_views: &views,
            event: None,
        };
        let first = s.store_build("a", &b).unwrap();
        assert!(matches!(first, Stored::Done { ref nested_new, .. } if nested_new == &[true]));
        let again = s.store_build("a", &b).unwrap();
        assert!(matches!(again, Stored::Done { ref nested_new, .. } if nested_new == &[false]));
        assert_eq!(s.files("a").unwrap().len(), 1);
        s.reset("a", None).unwrap();
        assert!(s.nested("a").unwrap().is_empty());
        assert!(s.files("a").unwrap().is_empty());
    }
}
