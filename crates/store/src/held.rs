//! What the conversation still holds.
//!
//! A view is what the model was shown, and it counts (for the gate, for an
//! "unchanged" re-read) only while the conversation still holds it. Agents
//! drop what they showed: a compaction replaces the conversation with a
//! summary (keeping a short tail of messages, re-attaching a few files), a
//! rewind goes back to an earlier message and abandons what came after it.
//! Each view knows where in the conversation it came from
//! ([`NewView::origin`](crate::store::NewView::origin)), so a compaction
//! that kept a message keeps the views it showed, and a rewind drops
//! exactly the views of the abandoned messages ([`Store::hold_only`]).
//!
//! A view the conversation no longer holds is not deleted: it stays for
//! history (`fsview-session show` marks it), and a change to its file is
//! still reported. It lets no change through, and a re-read of it is never
//! "unchanged". Recording the view again (a re-read, the file re-attached
//! after a compaction) holds it again.
//!
//! Views of the conversation's fixed context (instruction files: source
//! `inject` or `import`) are no message of it: the agent sends them again
//! with each request, or fsview does at the compaction's start, so neither
//! a compaction nor a rewind drops them.

use std::collections::HashSet;
use std::path::Path;

use rusqlite::{params, OptionalExtension};

use crate::error::Result;
use crate::events::{log_in, Event};
use crate::fingerprint::{self, Hash};
use crate::store::{path_bytes, Store};
use crate::view::{Kind, Released};

/// Which views of the conversation's messages a [`Store::hold_only`] may
/// release.
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a> {
    /// Every one (a compaction): the conversation holds nothing else than
    /// what its live origins showed. A view of unknown origin is released.
    All,
    /// Those shown by these origins (a rewind: the messages known to the
    /// agent's record, of which only the live ones are held). A view of
    /// another origin, or of none, is left as it is.
    Origins(&'a HashSet<String>),
}

/// What a [`Store::hold_only`] changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settled {
    /// Views the conversation no longer holds.
    pub released: usize,
    /// Views released before whose origin the conversation holds again
    /// (a message a compaction kept, a branch resumed again).
    pub restored: usize,
}

/// Between the origins of a view that needs several (a change told as a
/// diff: what carried it, and the view of the text it was taken from,
/// which may be of unknown origin: empty, never held).
pub const ORIGINS_SEP: char = '\n';

/// A view as [`Store::hold_only`] settles it: file id, kind, first line,
/// line count, origin, whether released, source.
type ViewRow = (i64, String, i64, i64, Option<String>, bool, String);

/// The action [`Store::hold_only`] logs when it changed anything: verdict
/// the reason, detail the counts.
pub const RELEASE_ACTION: &str = "release";

impl Store {
    /// Settle what session `sid` holds: its views shown by an origin in
    /// `live` are held (again, if they were released); the others `scope`
    /// names are released, for reason `why`. Views of the fixed context
    /// (`inject`, `import` with no origin) are never touched; instructions
    /// attached mid-conversation (with an origin) are. One transaction, logged as
    /// `tool` did it when anything changed.
    pub fn hold_only(
        &self,
        sid: &str,
        live: &HashSet<String>,
        scope: Scope<'_>,
        why: Released,
        tool: &str,
    ) -> Result<Settled> {
        self.write(|conn| {
            let now = fingerprint::now_ns();
            let rows: Vec<ViewRow> = {
                let mut stmt = conn.prepare_cached(
                    "SELECT v.file_id, v.kind, v.line_offset, v.line_count, v.origin, v.released IS NOT NULL, v.source
                     FROM views v JOIN files f ON v.file_id = f.id
                     WHERE f.sid = ?1 AND (v.source IN ('read', 'write')
                       OR (v.source IN ('inject', 'import') AND v.origin IS NOT NULL))",
                )?;
                let rows = stmt.query_map([sid], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                    ))
                })?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            let mut settled = Settled::default();
            let mut set = conn.prepare_cached(
                "UPDATE views SET released=?5, released_ns=?6
                 WHERE file_id=?1 AND kind=?2 AND line_offset=?3 AND line_count=?4",
            )?;
            for (file_id, kind, offset, count, origin, released, source) in rows {
                // A view of several origins holds while all of them do.
                let parts = || origin.iter().flat_map(|o| o.split(ORIGINS_SEP));
                let is_live = origin.is_some() && parts().all(|o| live.contains(o));
                let in_scope = match scope {
                    Scope::All => true,
                    Scope::Origins(known) => parts().any(|o| known.contains(o)),
                };
                if is_live && released {
                    set.execute(params![
                        file_id,
                        kind,
                        offset,
                        count,
                        None::<&str>,
                        None::<i64>
                    ])?;
                    settled.restored += 1;
                } else if !is_live && in_scope && !released {
                    set.execute(params![file_id, kind, offset, count, why.as_str(), now])?;
                    settled.released += 1;
                    // An instruction file attached mid-conversation and
                    // gone with it may be attached again: given again.
                    if source == "inject" || source == "import" {
                        conn.execute(
                            "DELETE FROM nested WHERE sid = ?1 AND path = (SELECT path FROM files WHERE id = ?2)",
                            params![sid, file_id],
                        )?;
                    }
                }
            }
            if settled != Settled::default() {
                let detail = format!(
                    "{} views no longer held, {} held again",
                    settled.released, settled.restored
                );
                log_in(
                    conn,
                    sid,
                    now,
                    &Event::new(tool, RELEASE_ACTION)
                        .verdict(why.as_str())
                        .detail(Some(&detail)),
                )?;
            }
            Ok(settled)
        })
    }

    /// Every origin session `sid`'s views came from (held or not).
    pub fn origins(&self, sid: &str) -> Result<HashSet<String>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT DISTINCT v.origin FROM views v JOIN files f ON v.file_id = f.id
                 WHERE f.sid = ?1 AND v.origin IS NOT NULL",
            )?;
            let rows = stmt.query_map([sid], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// Whether session `sid`'s conversation still holds the whole of the
    /// file at canonical `path` as the text of SHA-256 `shown`: a `full`
    /// view of that text it was shown itself (not copied from another
    /// session) and has not dropped. Whether the disk still holds that
    /// text is the caller's to check (its fingerprint, the gate).
    pub fn holds_whole(&self, sid: &str, path: &Path, shown: &Hash) -> Result<bool> {
        let path = path_bytes(path);
        self.read(|conn| {
            Ok(conn
                .prepare_cached(
                    "SELECT 1 FROM views v JOIN files f ON v.file_id = f.id
                     WHERE f.sid = ?1 AND f.path = ?2 AND v.kind = ?3 AND v.shown_hash = ?4
                       AND v.copied = 0 AND v.released IS NULL",
                )?
                .query_row(params![sid, path, Kind::Full.as_str(), &shown[..]], |_| {
                    Ok(())
                })
                .optional()?
                .is_some())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{self, Verdict};
    use crate::show::{self, Request};
    use crate::store::NewView;
    use crate::view::Source;

    fn record(store: &Store, path: &Path, source: Source, origin: Option<&str>) -> bool {
        let s = show::read(path, &Request::whole(1 << 20)).unwrap();
        store
            .record(
                "c",
                &NewView::of_shown(path, &s, source).with_origin(origin),
            )
            .unwrap()
            .unchanged
    }

    fn verdict(store: &Store, dir: &Path, path: &Path) -> Verdict {
        gate::decide(Some(store), "c", dir, path, false)
            .unwrap()
            .verdict
    }

    fn set(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    // A compaction that kept one message keeps its view; every other view
    // of a message is released (the unknown origin's too), the instruction
    // file stays, and recording a released view holds it again.
    #[test]
    fn a_compaction_keeps_only_what_it_kept() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let [a, b, c, md] = ["a", "b", "c", "CLAUDE.md"].map(|n| {
            let p = d.path().join(n);
            std::fs::write(&p, format!("{n}\n")).unwrap();
            p
        });
        record(&store, &a, Source::Read, Some("t1"));
        record(&store, &b, Source::Write, Some("t2"));
        record(&store, &c, Source::Read, None);
        record(&store, &md, Source::Inject, None);
        let s = store
            .hold_only("c", &set(&["t2"]), Scope::All, Released::Compaction, "t")
            .unwrap();
        assert_eq!(
            s,
            Settled {
                released: 2,
                restored: 0
            }
        );
        let v = |p: &Path| verdict(&store, d.path(), p);
        assert_eq!(
            [v(&a), v(&b), v(&c), v(&md)],
            [Verdict::NotRead, Verdict::Ok, Verdict::NotRead, Verdict::Ok]
        );
        let d_a = gate::decide(Some(&store), "c", d.path(), &a, false).unwrap();
        assert_eq!(
            d_a.message,
            "File has not been read yet. Read it first before writing to it. (What it was shown of it is no longer in the conversation: compaction.)"
        );
        let f = store.file_by_path("c", &a).unwrap().unwrap();
        let views = store.views(f.id).unwrap();
        assert_eq!(views.len(), 1, "kept for history");
        assert_eq!(views[0].released.map(|r| r.0), Some(Released::Compaction));
        assert_eq!(views[0].origin.as_deref(), Some("t1"));
        let hash = fingerprint::hash_bytes(b"a\n");
        assert!(!store.holds_whole("c", &a, &hash).unwrap());
        // Read again: held again, and not "unchanged" (it was not held).
        assert!(!record(&store, &a, Source::Read, Some("t3")));
        assert_eq!(v(&a), Verdict::Ok);
        assert!(store.holds_whole("c", &a, &hash).unwrap());
        assert!(record(&store, &a, Source::Read, Some("t4")));
        // Settled again: nothing to change, nothing logged.
        let s = store
            .hold_only(
                "c",
                &set(&["t2", "t4"]),
                Scope::All,
                Released::Compaction,
                "t",
            )
            .unwrap();
        assert_eq!(s, Settled::default());
        let log: Vec<(String, Option<String>, Option<String>)> = store
            .events("c", None)
            .unwrap()
            .into_iter()
            .filter(|e| e.action == RELEASE_ACTION)
            .map(|e| (e.action, e.verdict, e.detail))
            .collect();
        assert_eq!(
            log,
            [(
                "release".to_string(),
                Some("compaction".to_string()),
                Some("2 views no longer held, 0 held again".to_string())
            )]
        );
    }

    // A rewind releases the views of the abandoned messages only; going
    // back to the abandoned branch holds them again.
    #[test]
    fn a_rewind_releases_the_abandoned_branch_only() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let [a, b, c] = ["a", "b", "c"].map(|n| {
            let p = d.path().join(n);
            std::fs::write(&p, format!("{n}\n")).unwrap();
            p
        });
        record(&store, &a, Source::Read, Some("t1"));
        record(&store, &b, Source::Read, Some("t2"));
        record(&store, &c, Source::Read, None);
        let known = set(&["t1", "t2"]);
        let s = store
            .hold_only(
                "c",
                &set(&["t1"]),
                Scope::Origins(&known),
                Released::Rewind,
                "t",
            )
            .unwrap();
        assert_eq!(
            s,
            Settled {
                released: 1,
                restored: 0
            }
        );
        let v = |p: &Path| verdict(&store, d.path(), p);
        assert_eq!(
            [v(&a), v(&b), v(&c)],
            [Verdict::Ok, Verdict::NotRead, Verdict::Ok]
        );
        let s = store
            .hold_only(
                "c",
                &set(&["t1", "t2"]),
                Scope::Origins(&known),
                Released::Rewind,
                "t",
            )
            .unwrap();
        assert_eq!(
            s,
            Settled {
                released: 0,
                restored: 1
            }
        );
        assert_eq!(v(&b), Verdict::Ok);
    }
}
