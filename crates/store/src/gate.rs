//! May the agent change this file now?
//!
//! A targeted edit needs a fresh view that is not processed (full, range or
//! start); replacing the whole file needs a fresh `full` view. A file that
//! does not exist may be created without a read. A file a reminder told of
//! a change to is `modified` until the agent reads it again, even when the
//! disk is back to what it read: the agent last heard of something else
//! (see [`crate::remind`]). The messages keep Claude Code's wording where it
//! has one, so an agent trained on it knows what to do.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{quote, Error, Result};
use crate::events::Event;
use crate::fingerprint::{self, Change, FileType, Fingerprint, Freshness, Stat};
use crate::paths::{self, Resolved};
use crate::store::{FileRecord, Store, ViewRecord};
use crate::view::Kind;

/// The gate's answer for one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    NewFile,
    NotRead,
    ProcessedView,
    StartOnly,
    Modified(Change),
}

impl Verdict {
    /// The verdict's word, as in `--json` output.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::NewFile => "new_file",
            Verdict::NotRead => "not_read",
            Verdict::ProcessedView => "processed_view",
            Verdict::StartOnly => "start_only",
            Verdict::Modified(_) => "modified",
        }
    }

    pub fn allowed(self) -> bool {
        matches!(self, Verdict::Ok | Verdict::NewFile)
    }

    pub fn change(self) -> Option<Change> {
        match self {
            Verdict::Modified(c) => Some(c),
            _ => None,
        }
    }
}

pub const MSG_NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
pub const MSG_MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

/// The gate's answer, with what it was based on.
#[derive(Clone, Debug)]
pub struct Decision {
    pub verdict: Verdict,
    pub canonical: PathBuf,
    pub message: String,
    /// The view that allowed the change, or the best one there was.
    pub view: Option<ViewRecord>,
}

/// Decide whether `path` may be changed: a whole-file write when `write`,
/// else a targeted edit. `store` is `None` when no session file exists yet.
pub fn decide(
    store: Option<&Store>,
    sid: &str,
    cwd: &Path,
    path: &Path,
    write: bool,
) -> Result<Decision> {
    let mut gate = Gate::new(store, sid, cwd);
    let d = gate.decide(path, write)?;
    gate.refresh();
    Ok(d)
}

/// The gate for a batch of paths (`fsview-check-edit -0 -` of thousands):
/// what the paths share is done once. Directories are canonicalized once
/// ([`paths::Resolver`]), the session's lookups run in one read snapshot,
/// what reminders told is loaded once, and the fingerprints worth storing
/// (a file's new identity, an aged stat) are stored together at the end,
/// each only onto the record it was computed from, in the transaction
/// that logs the batch's events ([`Gate::finish`]).
pub struct Gate<'a> {
    store: Option<&'a Store>,
    sid: &'a str,
    cwd: &'a Path,
    resolver: paths::Resolver,
    told: Option<HashSet<i64>>,
    refreshes: Vec<(FileRecord, Fingerprint)>,
    snapshot: bool,
}

impl<'a> Gate<'a> {
    pub fn new(store: Option<&'a Store>, sid: &'a str, cwd: &'a Path) -> Gate<'a> {
        Gate {
            store,
            sid,
            cwd,
            resolver: paths::Resolver::new(),
            told: None,
            refreshes: Vec::new(),
            snapshot: false,
        }
    }

    /// Look everything up in one read snapshot from now until
    /// [`Gate::finish`] (for a batch: one lock of the file, not one per
    /// statement). Refreshes wait for the end either way.
    pub fn in_snapshot(mut self) -> Result<Gate<'a>> {
        if let Some(store) = self.store {
            store.begin_read()?;
            self.snapshot = true;
        }
        Ok(self)
    }

    /// The gate's answer for `path`; see [`decide`].
    pub fn decide(&mut self, path: &Path, write: bool) -> Result<Decision> {
        let resolved = self.resolver.resolve(self.cwd, path)?;
        let canonical = resolved.canonical().to_path_buf();
        if let Resolved::Existing { meta, .. } = &resolved {
            let ft = FileType::of(meta);
            if ft != FileType::File {
                return Err(Error::new(format!(
                    "{} is {}; fsview-check-edit gates regular files only",
                    quote(path),
                    ft.describe()
                )));
            }
        }
        let record = match self.store {
            Some(s) => match s.file_by_path(self.sid, &canonical)? {
                Some(r) => Some(r),
                None => match &resolved {
                    Resolved::Existing { meta, .. } => {
                        s.file_by_inode(self.sid, &Stat::of(meta))?
                    }
                    Resolved::Missing { .. } => None,
                },
            },
            None => None,
        };
        let Some(record) = record else {
            let verdict = match resolved {
                Resolved::Missing { .. } => Verdict::NewFile,
                Resolved::Existing { .. } => Verdict::NotRead,
            };
            return Ok(decision(verdict, canonical, None));
        };
        let store = self.store.expect("a record comes from a store");
        let views = store.views(record.id)?;
        // A full view if there is one, else the latest partial one (views
        // come oldest first): it is what the agent last saw of the file.
        let best = views
            .iter()
            .rev()
            .find(|v| v.kind == Kind::Full)
            .or_else(|| views.iter().rev().find(|v| v.kind != Kind::Processed))
            .cloned();
        let Some(best) = best else {
            let any = views.last().cloned();
            return Ok(decision(Verdict::ProcessedView, canonical, any));
        };
        if write && best.kind != Kind::Full {
            return Ok(decision(Verdict::StartOnly, canonical, Some(best)));
        }
        let fresh = match &resolved {
            Resolved::Existing { meta, .. } => {
                fingerprint::freshness_with(&canonical, &record.fingerprint, meta)
            }
            Resolved::Missing { .. } => Ok(Freshness::Stale(Change::Deleted)),
        }
        .map_err(|e| Error::io("check", path, &e))?;
        let verdict = match fresh {
            Freshness::Fresh { refreshed } => {
                let told = self.is_told(store, record.id)?;
                if let Some(fp) = refreshed {
                    // Saves a hash next time, and only onto the record
                    // checked; stored at the end, and a failure there
                    // changes no verdict.
                    self.refreshes.push((record, fp));
                }
                if told {
                    Verdict::Modified(Change::Content)
                } else {
                    Verdict::Ok
                }
            }
            Freshness::Stale(change) => Verdict::Modified(change),
        };
        Ok(decision(verdict, canonical, Some(best)))
    }

    /// Whether a reminder told of record `id` and it was not read since: one
    /// lookup for a single decision, the session's whole (small) set once
    /// for a batch.
    fn is_told(&mut self, store: &Store, id: i64) -> Result<bool> {
        if !self.snapshot {
            return store.is_told(id);
        }
        if self.told.is_none() {
            self.told = Some(store.told_ids(self.sid)?);
        }
        Ok(self.told.as_ref().is_some_and(|t| t.contains(&id)))
    }

    /// End the snapshot, and store the refreshes found.
    fn refresh(&mut self) {
        if let Some(store) = self.store {
            if std::mem::take(&mut self.snapshot) {
                store.end_read();
            }
            for (record, fp) in std::mem::take(&mut self.refreshes) {
                let _ = store.refresh(self.sid, &record, &fp);
            }
        }
    }

    /// End the batch: store the refreshes found and log `events`, in one
    /// write transaction. The verdicts are already out: a failure here
    /// changes none of them.
    pub fn finish(mut self, events: &[Event<'_>]) -> Result<()> {
        let Some(store) = self.store else {
            return Ok(());
        };
        if std::mem::take(&mut self.snapshot) {
            store.end_read();
        }
        let refreshes = std::mem::take(&mut self.refreshes);
        store.refresh_and_log(self.sid, &refreshes, events)
    }
}

impl Drop for Gate<'_> {
    fn drop(&mut self) {
        if self.snapshot {
            if let Some(store) = self.store {
                store.end_read();
            }
        }
    }
}

fn decision(verdict: Verdict, canonical: PathBuf, view: Option<ViewRecord>) -> Decision {
    let message = match verdict {
        Verdict::Ok => "The file may be changed.".to_string(),
        Verdict::NewFile => "File does not exist; creating it needs no read.".to_string(),
        Verdict::NotRead => MSG_NOT_READ.to_string(),
        Verdict::ProcessedView => "File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.".to_string(),
        Verdict::StartOnly => {
            let part = match &view {
                Some(v) if v.lines == 0 => "none of its lines".to_string(),
                Some(v) => {
                    let last = v.offset.saturating_add(v.lines - 1);
                    match v.total_lines {
                        Some(t) => format!("lines {}-{last} of {t}", v.offset),
                        None => format!("lines {}-{last}", v.offset),
                    }
                }
                None => "part of it".to_string(),
            };
            format!("File has only been read in part ({part}). Read the whole file before writing all of it.")
        }
        Verdict::Modified(_) => MSG_MODIFIED.to_string(),
    };
    Decision {
        verdict,
        canonical,
        message,
        view,
    }
}
