//! What the agent's own shell commands wrote.
//!
//! A build log, a test report, a scratch file, a copy: a file a command of
//! the conversation created or last wrote whole holds nobody's text but the
//! agent's own, and its later commands may write it again, whatever the
//! command (`cargo build > build.log` run twice). After each command the
//! adapter records, for each file the command named as it wrote it, the
//! fingerprint of what the command left there. The shell's gate then lets a
//! write of the file through while the disk still holds exactly that: once
//! anyone else changes the file, it is somebody's text again, and the gate
//! answers as for any other file.
//!
//! An own output is not a view: the model was not shown it. It never makes
//! a re-read "unchanged", never lets a targeted edit of the agent's edit
//! tool through, and no reminder tells of it.
//!
//! Whether a command's output is the agent's own depends on what the path
//! held just before the command ran: the hook before the command records it
//! ([`Before`]), the hook after it decides. A whole-file write makes the
//! file the agent's own, whatever was there (the gate let it through). An
//! append or an edit in place makes it so only when it was nothing, the
//! agent's own output, or a text the agent holds whole before; otherwise
//! the file holds text the agent never saw, and is not the agent's own.
//!
//! Rows are the conversation's (every agent of it), kept across a clear
//! (the files are still the agent's making), dropped with the session.

use std::io::{self, Read};
use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::fingerprint::{self, FileType, Fingerprint, Freshness, Hash, Quick, Stat};
use crate::store::{blob_hash, keep_text, path_bytes, Budget, Store};

/// Files up to this size are hashed from one read, and their text kept for
/// the diff of a change someone else makes: what a refusal can show whole.
pub const KEEP_BYTES: u64 = crate::remind::REWRITE_BYTES as u64;

/// How many of a conversation's shell commands' windows are kept
/// ([`Store::run_started`]).
pub const RUNS_KEPT: usize = 100;

/// What a path held just before a command that writes it ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Before {
    /// Nothing: the command creates it.
    New,
    /// The agent's own output, unchanged since ([`Own::holds`]).
    Own,
    /// Somebody's text, all of which the agent holds (a fresh `full`
    /// view): what an edit in place makes of it is still nothing the agent
    /// did not see or make.
    Seen,
    /// Anything else: somebody's text.
    Other,
    /// A git command the gate let through is about to restore it from git
    /// (`git checkout .`): whatever it leaves is committed text.
    Discard,
}

impl Before {
    pub fn as_str(self) -> &'static str {
        match self {
            Before::New => "new",
            Before::Own => "own",
            Before::Seen => "seen",
            Before::Other => "other",
            Before::Discard => "discard",
        }
    }

    fn parse(s: &str) -> Option<Before> {
        Some(match s {
            "new" => Before::New,
            "own" => Before::Own,
            "seen" => Before::Seen,
            "other" => Before::Other,
            "discard" => Before::Discard,
            _ => return None,
        })
    }
}

/// A file the agent's own command wrote.
#[derive(Clone, Debug)]
pub struct Own {
    /// What the command left there; `None` before the first command that
    /// writes it has finished.
    pub fingerprint: Option<Fingerprint>,
    /// That text, kept while small ([`KEEP_BYTES`]) and within the budget.
    pub text_hash: Option<Hash>,
    /// What the path held before the command now running, if one is.
    pub before: Option<Before>,
    /// That command runs on in the background.
    pub live: bool,
    pub written_ns: i64,
}

impl Own {
    /// The file at `canonical` still holds exactly what the command left.
    pub fn holds(&self, canonical: &Path) -> bool {
        let Some(fp) = &self.fingerprint else {
            return false;
        };
        matches!(
            fingerprint::freshness(canonical, fp),
            Ok(Freshness::Fresh { .. })
        )
    }
}

/// The fingerprint of the regular file at `canonical` now, and its bytes
/// when small ([`KEEP_BYTES`]).
pub fn take(canonical: &Path) -> io::Result<(Fingerprint, Option<Vec<u8>>)> {
    let taken_ns = fingerprint::now_ns();
    let file = fingerprint::open_nonblocking(canonical)?;
    let stat = Stat::of(&file.metadata()?);
    if stat.ftype != FileType::File {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("is {}", stat.ftype.describe()),
        ));
    }
    if stat.size <= KEEP_BYTES {
        let mut bytes = Vec::with_capacity(stat.size as usize);
        file.take(KEEP_BYTES + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 == stat.size {
            return Ok((Fingerprint::of_bytes(stat, taken_ns, &bytes), Some(bytes)));
        }
        // It changed while read: the next look decides.
        let (hash, stat) = fingerprint::hash_path(canonical)?;
        return Ok((fingerprint_of(stat, taken_ns, hash), None));
    }
    let hash = fingerprint::hash_open(file, &stat)?;
    Ok((fingerprint_of(stat, taken_ns, hash), None))
}

fn fingerprint_of(stat: Stat, taken_ns: i64, hash: Hash) -> Fingerprint {
    Fingerprint {
        stat,
        taken_ns,
        hash: Some(hash),
        quick: None,
    }
}

const OWN_COLUMNS: &str =
    "dev, ino, btime_ns, size, mtime_ns, ctime_ns, taken_ns, hash, quick, text_hash, before, written_ns, live";

fn own_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Own> {
    let fingerprint = match r.get::<_, Option<i64>>(0)? {
        None => None,
        Some(dev) => Some(Fingerprint {
            stat: Stat {
                dev: dev as u64,
                ino: r.get::<_, i64>(1)? as u64,
                btime_ns: r.get(2)?,
                ftype: FileType::File,
                size: r.get::<_, i64>(3)?.max(0) as u64,
                mtime_ns: r.get(4)?,
                ctime_ns: r.get(5)?,
            },
            taken_ns: r.get(6)?,
            hash: r.get::<_, Option<Vec<u8>>>(7)?.map(blob_hash),
            quick: r
                .get::<_, Option<Vec<u8>>>(8)?
                .and_then(|q| Quick::try_from(q.as_slice()).ok()),
        }),
    };
    Ok(Own {
        fingerprint,
        text_hash: r.get::<_, Option<Vec<u8>>>(9)?.map(blob_hash),
        before: r
            .get::<_, Option<String>>(10)?
            .as_deref()
            .and_then(Before::parse),
        written_ns: r.get(11)?,
        live: r.get::<_, i64>(12)? != 0,
    })
}

fn own_in(conn: &Connection, sid: &str, path: &[u8]) -> rusqlite::Result<Option<Own>> {
    conn.prepare_cached(&format!(
        "SELECT {OWN_COLUMNS} FROM own WHERE sid=?1 AND path=?2"
    ))?
    .query_row(params![sid, path], own_row)
    .optional()
}

impl Store {
    /// What conversation `sid`'s own commands left at `canonical`, if they
    /// wrote it.
    pub fn own(&self, sid: &str, canonical: &Path) -> Result<Option<Own>> {
        let path = path_bytes(canonical);
        self.read(|conn| own_in(conn, sid, &path))
    }

    /// A command of conversation `sid` is about to write `canonical`,
    /// which holds what `before` says.
    pub fn own_before(&self, sid: &str, canonical: &Path, before: Before) -> Result<()> {
        self.own_before_all(sid, &[(canonical, before)])
    }

    /// [`Store::own_before`] for each of `marks`, in one transaction: a
    /// command's hook marks up to hundreds of files at once.
    pub fn own_before_all(&self, sid: &str, marks: &[(&Path, Before)]) -> Result<()> {
        if marks.is_empty() {
            return Ok(());
        }
        let now = fingerprint::now_ns();
        self.write(|conn| {
            crate::store::ensure_session(conn, sid, now)?;
            let mut stmt = conn.prepare_cached(
                "INSERT INTO own(sid, path, before, written_ns) VALUES(?1, ?2, ?3, ?4)
                 ON CONFLICT(sid, path) DO UPDATE SET before=excluded.before, live=0",
            )?;
            for (canonical, before) in marks {
                stmt.execute(params![sid, path_bytes(canonical), before.as_str(), now])?;
            }
            Ok(())
        })
    }

    /// The command about to write `canonical` runs on in the background:
    /// the hook after it came when it started, and it writes on.
    pub fn own_live(&self, sid: &str, canonical: &Path) -> Result<()> {
        let path = path_bytes(canonical);
        self.write(|conn| {
            conn.prepare_cached(
                "UPDATE own SET live=1 WHERE sid=?1 AND path=?2 AND before IS NOT NULL",
            )?
            .execute(params![sid, path])?;
            Ok(())
        })
    }

    /// A command of conversation `sid` left `fp` at `canonical` (its
    /// `bytes` when small): the agent's own output from now on.
    pub fn own_wrote(
        &self,
        sid: &str,
        canonical: &Path,
        fp: &Fingerprint,
        bytes: Option<&[u8]>,
    ) -> Result<()> {
        let path = path_bytes(canonical);
        let now = fingerprint::now_ns();
        self.write(|conn| {
            crate::store::ensure_session(conn, sid, now)?;
            let text_hash = match (bytes, fp.hash) {
                (Some(b), Some(h)) if keep_text(conn, &h, b, now, &mut Budget::unread())? => {
                    Some(h)
                }
                _ => None,
            };
            conn.prepare_cached(
                "INSERT INTO own(sid, path, dev, ino, btime_ns, size, mtime_ns, ctime_ns, taken_ns, hash, quick, text_hash, before, written_ns)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, NULL, ?13)
                 ON CONFLICT(sid, path) DO UPDATE SET dev=excluded.dev, ino=excluded.ino,
                   btime_ns=excluded.btime_ns, size=excluded.size, mtime_ns=excluded.mtime_ns,
                   ctime_ns=excluded.ctime_ns, taken_ns=excluded.taken_ns, hash=excluded.hash,
                   quick=excluded.quick, text_hash=excluded.text_hash, before=NULL,
                   live=0, written_ns=excluded.written_ns",
            )?
            .execute(params![
                sid,
                path,
                fp.stat.dev as i64,
                fp.stat.ino as i64,
                fp.stat.btime_ns,
                fp.stat.size as i64,
                fp.stat.mtime_ns,
                fp.stat.ctime_ns,
                fp.taken_ns,
                fp.hash.as_ref().map(|h| &h[..]),
                crate::store::quick_param(fp),
                text_hash.as_ref().map(|h| &h[..]),
                now,
            ])?;
            Ok(())
        })
    }

    /// The paths of conversation `sid` a command is about to write, with
    /// what they held `before` it.
    pub fn own_pending(&self, sid: &str, before: Before) -> Result<Vec<std::path::PathBuf>> {
        use std::os::unix::ffi::OsStringExt;
        self.read(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT path FROM own WHERE sid=?1 AND before=?2")?;
            let rows = stmt.query_map(params![sid, before.as_str()], |r| {
                Ok(std::path::PathBuf::from(std::ffi::OsString::from_vec(
                    r.get(0)?,
                )))
            })?;
            rows.collect()
        })
    }

    /// The paths conversation `sid`'s commands left output at and no
    /// command runs on writing, newest first, at most `limit`.
    pub fn own_paths(&self, sid: &str, limit: usize) -> Result<Vec<std::path::PathBuf>> {
        use std::os::unix::ffi::OsStringExt;
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT path FROM own WHERE sid=?1 AND dev IS NOT NULL AND live=0
                 ORDER BY written_ns DESC LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![sid, limit as i64], |r| {
                Ok(std::path::PathBuf::from(std::ffi::OsString::from_vec(
                    r.get(0)?,
                )))
            })?;
            rows.collect()
        })
    }

    /// No command is about to change the paths marked `own` or `seen` any
    /// more, but one that runs on in the background.
    pub fn own_untrack(&self, sid: &str) -> Result<()> {
        self.write(|conn| {
            conn.prepare_cached(
                "UPDATE own SET before=NULL WHERE sid=?1 AND live=0 AND before IN ('own', 'seen')",
            )?
            .execute([sid])?;
            conn.prepare_cached("DELETE FROM own WHERE sid=?1 AND dev IS NULL AND before IS NULL")?
                .execute([sid])?;
            Ok(())
        })
    }

    /// No command is about to write the paths marked `before` any more
    /// (it was refused, or its end was never reported).
    pub fn own_unpend(&self, sid: &str, before: Before) -> Result<()> {
        self.write(|conn| {
            conn.prepare_cached("UPDATE own SET before=NULL WHERE sid=?1 AND before=?2")?
                .execute(params![sid, before.as_str()])?;
            // A row that never held an output is nothing.
            conn.prepare_cached("DELETE FROM own WHERE sid=?1 AND dev IS NULL AND before IS NULL")?
                .execute([sid])?;
            Ok(())
        })
    }

    /// `canonical` is no longer the agent's own output (somebody's text is
    /// in it, or nothing is there).
    pub fn own_forget(&self, sid: &str, canonical: &Path) -> Result<()> {
        let path = path_bytes(canonical);
        self.write(|conn| {
            conn.prepare_cached("DELETE FROM own WHERE sid=?1 AND path=?2")?
                .execute(params![sid, path])?;
            Ok(())
        })
    }

    /// A shell command of conversation `sid` starts now (its hook
    /// before): the window in which the files it creates are its own
    /// ([`Store::run_made`]) opens. The conversation's oldest runs beyond
    /// [`RUNS_KEPT`] are dropped.
    pub fn run_started(&self, sid: &str) -> Result<()> {
        let now = fingerprint::now_ns();
        self.write(|conn| {
            conn.prepare_cached(
                "INSERT INTO runs(sid, started_ns) VALUES(?1, ?2) ON CONFLICT DO NOTHING",
            )?
            .execute(params![sid, now])?;
            conn.prepare_cached(
                "DELETE FROM runs WHERE sid=?1 AND started_ns <
                   (SELECT started_ns FROM runs WHERE sid=?1 ORDER BY started_ns DESC LIMIT 1 OFFSET ?2)",
            )?
            .execute(params![sid, RUNS_KEPT as i64 - 1])?;
            Ok(())
        })
    }

    /// The hook after conversation `sid`'s shell command `command` came:
    /// its window (the latest one still open) closes now.
    pub fn run_ended(&self, sid: &str, command: &str) -> Result<()> {
        let now = fingerprint::now_ns();
        self.write(|conn| {
            conn.prepare_cached(
                "UPDATE runs SET ended_ns=?2, command=?3 WHERE sid=?1 AND started_ns =
                   (SELECT max(started_ns) FROM runs WHERE sid=?1 AND ended_ns IS NULL)",
            )?
            .execute(params![sid, now, command])?;
            Ok(())
        })
    }

    /// The command of conversation `sid` that made the file `stat` says:
    /// one whose window holds the file's birth and its last change (so
    /// nothing wrote it after the command's end), if any. Filesystems
    /// without a birth time say nothing. A file's times come from the
    /// kernel's coarse clock, which may lag the one the hook read by a
    /// tick (4 ms at 250 Hz): a file made before the command is never
    /// taken as its (its birth is before the window), one the command made
    /// in its first tick may not be (refused as before: the safe side),
    /// and one someone else changed in the tick after the hook after
    /// cannot be told from the command's last write.
    pub fn run_made(&self, sid: &str, stat: &Stat) -> Result<Option<String>> {
        let Some(btime) = stat.btime_ns else {
            return Ok(None);
        };
        if stat.mtime_ns < btime {
            return Ok(None); // a time set by hand (`touch -d`): not a run's
        }
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT coalesce(command, '') FROM runs WHERE sid=?1 AND ended_ns IS NOT NULL
                   AND started_ns <= ?2 AND ?2 <= ended_ns AND ?3 <= ended_ns
                 ORDER BY started_ns DESC LIMIT 1",
            )?
            .query_row(params![sid, btime, stat.mtime_ns], |r| r.get(0))
            .optional()
        })
    }

    /// The diff from what the agent's own command left at `canonical`
    /// (`own`) to what is there now, capped; `None` when that text was not
    /// kept or the file is not text any more.
    pub fn own_changed(&self, own: &Own, canonical: &Path, cwd: &Path) -> Result<Option<String>> {
        let Some(old) = own.text_hash.map(|h| self.text(&h)).transpose()?.flatten() else {
            return Ok(None);
        };
        let Ok(Some(new)) = crate::changes::read_capped(canonical) else {
            return Ok(None);
        };
        let mut budget = crate::changes::Limits::default().per_file;
        let d = crate::changes::diff(
            &old,
            &new,
            canonical,
            "as your command wrote it",
            None,
            None,
            cwd,
            false,
            budget,
            &mut budget,
        );
        Ok(d.diff)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(btime: Option<i64>, mtime: i64) -> Stat {
        Stat {
            dev: 1,
            ino: 2,
            btime_ns: btime,
            ftype: FileType::File,
            size: 3,
            mtime_ns: mtime,
            ctime_ns: mtime,
        }
    }

    #[test]
    fn a_file_born_and_last_written_in_a_run_is_its() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let before = fingerprint::now_ns();
        store.run_started("s").unwrap();
        let during = fingerprint::now_ns();
        // Open: nothing is its yet.
        assert_eq!(
            store.run_made("s", &stat(Some(during), during)).unwrap(),
            None
        );
        store.run_ended("s", "make gen").unwrap();
        let after = fingerprint::now_ns();
        let made = |b, m| store.run_made("s", &stat(b, m)).unwrap();
        assert_eq!(made(Some(during), during), Some("make gen".to_string()));
        assert_eq!(made(Some(before - 1), during), None, "born before");
        assert_eq!(made(Some(during), after + 1), None, "written after");
        assert_eq!(made(None, during), None, "no birth time");
        assert_eq!(made(Some(during), during - 1), None, "a time set by hand");
        assert_eq!(
            store.run_made("t", &stat(Some(during), during)).unwrap(),
            None,
            "another conversation's"
        );
        // The newest RUNS_KEPT are kept.
        for i in 0..RUNS_KEPT + 5 {
            store.run_started("s").unwrap();
            store.run_ended("s", &format!("c{i}")).unwrap();
        }
        assert_eq!(made(Some(during), during), None, "dropped");
        let n: i64 = store
            .read(|c| c.query_row("SELECT count(*) FROM runs WHERE sid='s'", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, RUNS_KEPT as i64);
    }

    #[test]
    fn an_own_output_holds_until_someone_changes_it() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        let store = Store::open(&dir.join("s.db")).unwrap();
        let log = dir.join("build.log");
        assert!(store.own("s", &log).unwrap().is_none());
        store.own_before("s", &log, Before::New).unwrap();
        let pending = store.own("s", &log).unwrap().unwrap();
        assert_eq!(pending.before, Some(Before::New));
        assert!(!pending.holds(&log));
        std::fs::write(&log, "compiling\n").unwrap();
        let (fp, bytes) = take(&log).unwrap();
        store.own_wrote("s", &log, &fp, bytes.as_deref()).unwrap();
        let own = store.own("s", &log).unwrap().unwrap();
        assert_eq!(own.before, None);
        assert!(own.holds(&log));
        std::fs::write(&log, "compiling\nthe user's line\n").unwrap();
        assert!(!own.holds(&log));
        let diff = store.own_changed(&own, &log, &dir).unwrap().unwrap();
        assert!(diff.contains("+the user's line"), "{diff}");
        store.own_forget("s", &log).unwrap();
        assert!(store.own("s", &log).unwrap().is_none());
    }
}
