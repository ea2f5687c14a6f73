//! How far each session's transcript has been read.
//!
//! Some of what an agent shows the model is recorded only in the agent's
//! own transcript of the conversation (a file attached to a prompt, a
//! compaction and what it kept). A reader reads such a transcript a little
//! at a time, from where it stopped: this is where it stopped, per session
//! (a [`Cursor`]: the file's identity and the offset just past its last
//! complete line, plus the reader's own state), so no hook re-reads what an
//! earlier one read. The store does not interpret the transcript; the
//! reader (fsview-agents) does.
//!
//! Two hooks of one session may read the same new lines at once: the one
//! that stores its cursor second finds the cursor moved and leaves it
//! ([`Store::advance_cursor`]), so a cursor never goes back.

use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use rusqlite::{params, OptionalExtension};

use crate::error::Result;
use crate::fingerprint;
use crate::store::{path_bytes, Store};

/// Where a session's transcript was last read up to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    /// The transcript's path.
    pub path: PathBuf,
    /// The file's identity when it was read: another file at the path (a
    /// new transcript) is read from its start.
    pub dev: u64,
    pub ino: u64,
    /// The offset just past the last complete line read.
    pub offset: u64,
    /// The reader's own state between calls (opaque to the store).
    pub state: Option<String>,
    /// Why the transcript could not be read, once said (so it is said
    /// once, not at every hook).
    pub problem: Option<String>,
}

impl Store {
    /// Session `sid`'s cursor, if its transcript was ever read.
    pub fn cursor(&self, sid: &str) -> Result<Option<Cursor>> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT path, dev, ino, offset, state, problem FROM transcripts WHERE sid=?1",
            )?
            .query_row([sid], |r| {
                Ok(Cursor {
                    path: PathBuf::from(std::ffi::OsString::from_vec(r.get(0)?)),
                    dev: r.get::<_, i64>(1)? as u64,
                    ino: r.get::<_, i64>(2)? as u64,
                    offset: r.get::<_, i64>(3)?.max(0) as u64,
                    state: r.get(4)?,
                    problem: r.get(5)?,
                })
            })
            .optional()
        })
    }

    /// Store `next` as session `sid`'s cursor, if the stored one is still
    /// `was` (`None`: there was none). Returns whether it was stored: a
    /// concurrent reader that got further first keeps its cursor.
    pub fn advance_cursor(&self, sid: &str, was: Option<&Cursor>, next: &Cursor) -> Result<bool> {
        self.write(|conn| {
            let now: Option<(Vec<u8>, i64, i64, i64)> = conn
                .prepare_cached("SELECT path, dev, ino, offset FROM transcripts WHERE sid=?1")?
                .query_row([sid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .optional()?;
            let same = match (&now, was) {
                (None, None) => true,
                (Some((p, dev, ino, off)), Some(w)) => {
                    *p == path_bytes(&w.path)
                        && *dev as u64 == w.dev
                        && *ino as u64 == w.ino
                        && *off as u64 == w.offset
                }
                _ => false,
            };
            if !same {
                return Ok(false);
            }
            conn.prepare_cached(
                "INSERT INTO transcripts(sid, path, dev, ino, offset, state, problem, read_ns)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT(sid) DO UPDATE SET path=excluded.path, dev=excluded.dev,
                   ino=excluded.ino, offset=excluded.offset, state=excluded.state,
                   problem=excluded.problem, read_ns=excluded.read_ns",
            )?
            .execute(params![
                sid,
                path_bytes(&next.path),
                next.dev as i64,
                next.ino as i64,
                i64::try_from(next.offset).unwrap_or(i64::MAX),
                next.state,
                next.problem,
                fingerprint::now_ns()
            ])?;
            Ok(true)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_only_moves_from_where_it_was() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        assert_eq!(store.cursor("c").unwrap(), None);
        let first = Cursor {
            path: d.path().join("t.jsonl"),
            dev: 1,
            ino: 2,
            offset: 10,
            state: Some("{}".into()),
            problem: None,
        };
        assert!(store.advance_cursor("c", None, &first).unwrap());
        assert_eq!(store.cursor("c").unwrap().as_ref(), Some(&first));
        let second = Cursor {
            offset: 20,
            ..first.clone()
        };
        // Another reader stored `first` already: this one, from nothing,
        // does not overwrite it.
        assert!(!store.advance_cursor("c", None, &second).unwrap());
        assert!(store.advance_cursor("c", Some(&first), &second).unwrap());
        assert!(!store.advance_cursor("c", Some(&first), &first).unwrap());
        assert_eq!(store.cursor("c").unwrap().unwrap().offset, 20);
        // A dropped session drops its cursor.
        store
            .log("c", &[crate::events::Event::new("t", "x")])
            .unwrap();
        store.drop_session("c").unwrap();
        assert_eq!(store.cursor("c").unwrap(), None);
    }
}
