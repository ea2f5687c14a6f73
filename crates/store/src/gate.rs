//! May the agent change this file now?
//!
//! A targeted edit needs a fresh view that is not processed (full, range or
//! start); replacing the whole file needs a fresh `full` view. A file that
//! does not exist may be created without a read. A file a reminder told of
//! a change to is `modified` until the agent reads it again, even when the
//! disk is back to what it read: the agent last heard of something else
//! (see [`crate::remind`]). The messages keep Claude Code's wording where it
//! has one, so an agent trained on it knows what to do.

use std::path::{Path, PathBuf};

use crate::error::{quote, Error, Result};
use crate::fingerprint::{self, Change, FileType, Freshness, Stat};
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
    let resolved = paths::resolve(cwd, path)?;
    let canonical = resolved.canonical().to_path_buf();
    let lookup = |s: &Store| -> Result<Option<FileRecord>> {
        if let Some(r) = s.file_by_path(sid, &canonical)? {
            return Ok(Some(r));
        }
        match &resolved {
            Resolved::Existing { meta, .. } => s.file_by_inode(sid, &Stat::of(meta)),
            Resolved::Missing { .. } => Ok(None),
        }
    };
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
    let record = match store {
        Some(s) => lookup(s)?,
        None => None,
    };
    let Some(record) = record else {
        let verdict = match resolved {
            Resolved::Missing { .. } => Verdict::NewFile,
            Resolved::Existing { .. } => Verdict::NotRead,
        };
        return Ok(decision(verdict, canonical, None));
    };
    let store = store.expect("a record comes from a store");
    let views = store.views(record.id)?;
    // A full view if there is one, else the latest partial one (views come
    // oldest first): it is what the agent last saw of the file.
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
    let fresh = fingerprint::freshness(&canonical, &record.fingerprint)
        .map_err(|e| Error::io("check", path, &e))?;
    let verdict = match fresh {
        Freshness::Fresh { refreshed } => {
            if let Some(fp) = refreshed {
                // Saves a hash next time, and only onto the record checked;
                // a failure here changes no verdict.
                let _ = store.refresh(sid, &record, &fp);
            }
            if store.is_told(record.id)? {
                Verdict::Modified(Change::Content)
            } else {
                Verdict::Ok
            }
        }
        Freshness::Stale(change) => Verdict::Modified(change),
    };
    Ok(decision(verdict, canonical, Some(best)))
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
