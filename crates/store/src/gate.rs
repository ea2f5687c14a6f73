//! May the agent change this file now?
//!
//! A targeted edit needs a fresh view that is not processed (full, range or
//! start); replacing the whole file needs a fresh `full` view. A file that
//! does not exist may be created without a read. A file a reminder told of
//! a change to is `modified` until the agent reads it again, even when the
//! disk is back to what it read: the agent last heard of something else
//! (see [`crate::remind`]). Only the views the conversation still holds
//! count ([`crate::held`]). The messages keep Claude Code's wording where it
//! has one, so an agent trained on it knows what to do.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::error::{quote, Error, Result};
use crate::events::Event;
use crate::fingerprint::{self, Change, FileType, Fingerprint, Freshness, Stat};
use crate::paths::{self, Resolved};
use crate::store::{FastMap, FileRecord, Store, ViewRecord, ViewsById, LOOKUP_CHUNK};
use crate::view::{Kind, Source};

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
/// A file deleted since the agent read it: an edit has nothing to change;
/// a whole-file write creates it again ([`Verdict::NewFile`]).
pub const MSG_DELETED: &str = "File has been deleted since read: there is nothing to edit. Write the whole file to create it again, or leave it deleted.";

/// How a `modified` refusal starts: who changed the file when fsview knows
/// ([`crate::writers`]), else Claude Code's "either by the user or by a
/// linter"; `None` for a deletion, said as one.
pub fn modified_since(change: Change, writer: Option<&str>) -> String {
    match (change, writer) {
        (Change::Deleted, _) => "File has been deleted since read".to_string(),
        (_, Some(w)) => format!("File has been modified since read, by {w}"),
        (_, None) => {
            "File has been modified since read, either by the user or by a linter".to_string()
        }
    }
}
/// The end of [`MSG_MODIFIED`] (and of every `modified` refusal that names
/// who changed the file).
pub const READ_AGAIN: &str = "Read it again before attempting to write it.";
/// In its place, where the refusal carries the whole change and the view
/// moved to the text told ([`crate::remind`]): no read is needed.
pub const RETRY_TOLD: &str = "The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).";
/// A shell command may write again what the agent's own commands wrote
/// ([`crate::own`]).
pub const MSG_OWN_OUTPUT: &str =
    "The file is your own command's output, unchanged since: it may be written again.";
/// A shell command's scratch file in the system's temporary directory.
pub const MSG_SCRATCH: &str =
    "The file is scratch in the system's temporary directory, outside any project: it may be written.";
/// A git command that would discard changes the agent neither made nor was
/// shown; each file that holds them follows, with the diff it would lose.
pub const MSG_DISCARD: &str = "This git command would discard changes you have neither made nor been shown, by the user or another program: they would be lost. If they are yours to drop, read each file first; otherwise leave these files out of the command. What it would lose:";
/// The agent's own output that someone else changed since.
pub const MSG_OWN_CHANGED: &str = "File has been changed since your own command last wrote it, by the user or another program. Read it first before writing to it.";

/// What change the gate is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// A targeted edit: any fresh view that is not processed.
    Edit,
    /// Replacing the whole file: a fresh `full` view.
    Write,
    /// Changing cells of a notebook by id (Claude Code's NotebookEdit): any
    /// fresh view, a processed one (the cells it was shown, not its JSON)
    /// included.
    Cells,
}

/// The gate's answer, with what it was based on.
#[derive(Clone, Debug)]
pub struct Decision {
    pub verdict: Verdict,
    pub canonical: PathBuf,
    /// What to tell the agent: one of a few fixed sentences but for a
    /// partial view (which lines it saw) or a released one (why it is
    /// gone), so borrowed where it can be (a batch makes thousands).
    pub message: Cow<'static, str>,
    /// The view that allowed the change, or the best one there was.
    pub view: Option<ViewRecord>,
    /// For a `not_read` of a file the agent was shown before: why the
    /// conversation no longer holds it (a compaction, a rewind).
    pub released: Option<crate::view::Released>,
    /// For a `modified`: who changed the file, when fsview knows
    /// ([`crate::writers::Writer::describe`]).
    pub writer: Option<String>,
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
    let want = if write { Want::Write } else { Want::Edit };
    decide_for(store, sid, cwd, path, want)
}

/// Decide whether `path` may be changed as `want` says.
pub fn decide_for(
    store: Option<&Store>,
    sid: &str,
    cwd: &Path,
    path: &Path,
    want: Want,
) -> Result<Decision> {
    let mut gate = Gate::new(store, sid, cwd);
    let d = gate.decide_for(path, want)?;
    gate.refresh();
    Ok(d)
}

/// The gate for a batch of paths (`fsview-check-edit -0 -` of thousands):
/// what the paths share is done once. Directories are canonicalized once
/// ([`paths::Resolver`]), the session's lookups run in one read snapshot
/// and, through [`Gate::decide_all`], together; each recorded file is
/// opened once; what reminders told is loaded once, and the fingerprints worth storing
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
    /// Leave what a batch read of the session to the process's exit
    /// ([`Gate::ending_process`]).
    ending: bool,
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
            ending: false,
        }
    }

    /// The process ends after this gate's batch (a command-line tool):
    /// the session a batch reads whole (tens of thousands of allocations for
    /// 10,000 files) is then not freed piece by piece but with the
    /// process, at once. Not for a server that lives on.
    pub fn ending_process(mut self) -> Gate<'a> {
        self.ending = true;
        self
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
        let want = if write { Want::Write } else { Want::Edit };
        self.decide_for(path, want)
    }

    /// The gate's answer for `path`; see [`decide_for`].
    pub fn decide_for(&mut self, path: &Path, want: Want) -> Result<Decision> {
        self.decide_resolving(path, want, None)
    }

    /// [`Gate::decide_for`]; `absent` is a canonical path already known to
    /// have no record of its own (a batch looked it up), so that lookup is
    /// not made twice.
    fn decide_resolving(
        &mut self,
        path: &Path,
        want: Want,
        absent: Option<&Path>,
    ) -> Result<Decision> {
        let resolved = self.resolver.resolve(self.cwd, path)?;
        regular_only(path, &resolved)?;
        let canonical = resolved.canonical().to_path_buf();
        let record = match self.store {
            Some(s) => match absent == Some(canonical.as_path()) {
                true => None,
                false => s.file_by_path(self.sid, &canonical)?,
            }
            .map_or_else(
                || match &resolved {
                    Resolved::Existing { meta, .. } => s.file_by_inode(self.sid, &Stat::of(meta)),
                    Resolved::Missing { .. } => Ok(None),
                },
                |r| Ok(Some(r)),
            )?,
            None => None,
        };
        let all = match (&record, self.store) {
            (Some(r), Some(s)) => s.views(r.id)?,
            _ => Vec::new(),
        };
        let exists = matches!(resolved, Resolved::Existing { .. });
        self.judge(
            path,
            want,
            canonical,
            exists,
            record.as_ref(),
            &all,
            |fp, canonical| match &resolved {
                Resolved::Existing { meta, .. } => fingerprint::freshness_with(canonical, fp, meta),
                Resolved::Missing { .. } => Ok(Freshness::Stale(Change::Deleted)),
            },
        )
    }

    /// The gate's answers for many paths (`fsview-check-edit -0 -`), in
    /// order, each the answer [`Gate::decide`] gives. What the batch shares
    /// is done once: the records of its paths and their views are looked up
    /// together (one pass over the session when the batch names at least
    /// half of its files, else a few statements per [`LOOKUP_CHUNK`]
    /// paths), and a path with a record of a regular file under its plain
    /// canonical name is opened once ([`paths::open_plain`]) for both the
    /// stat and the bytes that decide, on every core when there are many. Anything else (a link, a name that
    /// is not plain, nothing there, not a regular file, a file never
    /// viewed) goes the way of [`Gate::decide`].
    pub fn decide_all(&mut self, jobs: &[(PathBuf, bool)]) -> Vec<Result<Decision>> {
        let Some(store) = self.store else {
            return jobs.iter().map(|(p, w)| self.decide(p, *w)).collect();
        };
        let plain: Vec<Option<PathBuf>> = jobs
            .iter()
            .map(|(p, _)| self.resolver.plain(self.cwd, p))
            .collect();
        let count = store.file_count(self.sid).ok();
        let mut out = Vec::with_capacity(jobs.len());
        if let Some(n) = count.filter(|n| jobs.len().saturating_mul(2) >= *n) {
            self.decide_ahead(jobs, plain, store, n, &mut out);
            return out;
        }
        for (jobs, plain) in jobs.chunks(LOOKUP_CHUNK).zip(plain.chunks(LOOKUP_CHUNK)) {
            let names: Vec<&Path> = plain.iter().flatten().map(PathBuf::as_path).collect();
            match store.files_by_paths(self.sid, &names) {
                Ok(records) => {
                    let ids: Vec<i64> = records.values().map(|r| r.id).collect();
                    self.decide_found(jobs, plain, &records, || store.views_of(&ids), &mut out)
                }
                Err(_) => self.decide_each(jobs, &mut out),
            }
        }
        out
    }

    /// Each path on its own (a batched lookup failed: each path then gets
    /// its own error, or its answer).
    fn decide_each(&mut self, jobs: &[(PathBuf, bool)], out: &mut Vec<Result<Decision>>) {
        out.extend(jobs.iter().map(|(p, w)| self.decide(p, *w)));
    }

    /// [`Gate::decide_all`] for a batch that names at least half of the
    /// session's `files` files (by `plain` canonical names): every file at
    /// a plain name is opened and, when small, hashed (over the cores when
    /// there are many) while this thread reads the whole session, whose
    /// records then decide. A file the session has no record of is opened
    /// for nothing, which a batch of mostly read files repays; when the
    /// session holds at most a quarter as many files as the batch names,
    /// it is read first instead, and a file it has no record of by name
    /// only gets its `lstat` (its identity and type are all that decide).
    /// Names under `/dev`, `/proc` and `/sys` are never opened ahead
    /// (opening a device can act on it): they go the single path's way,
    /// which looks first.
    fn decide_ahead(
        &mut self,
        jobs: &[(PathBuf, bool)],
        plain: Vec<Option<PathBuf>>,
        store: &Store,
        files: usize,
        out: &mut Vec<Result<Decision>>,
    ) {
        let names: Vec<&Path> = plain.iter().flatten().map(PathBuf::as_path).collect();
        let special = |p: &Path| {
            let b = p.as_os_str().as_encoded_bytes();
            [&b"/dev/"[..], b"/proc/", b"/sys/"]
                .iter()
                .any(|d| b.starts_with(d))
        };
        let sid = self.sid;
        let load = || -> Option<Session> {
            let views = store.session_views(sid, files).ok()?;
            let records = store.session_files(sid, files, &views).ok()?;
            Some(Session { records, views })
        };
        // A session much smaller than the batch (a hook over a tree the
        // agent has barely read) is read first, at little cost: a file it
        // has no record of by name then needs its lstat only, not its bytes.
        let early = (files.saturating_mul(4) <= names.len()).then(load);
        let early_index = match &early {
            Some(Some(s)) => Some(s.index()),
            _ => None,
        };
        let unrecorded = |name: &Path| {
            early_index
                .as_ref()
                .is_some_and(|ix| !ix.contains_key(name.as_os_str()))
        };
        let mut late: Option<Session> = None;
        let (probes, read_late) = spread_while(
            &names,
            |name| {
                if special(name) {
                    None
                } else if unrecorded(name) {
                    std::fs::symlink_metadata(name)
                        .ok()
                        .map(|m| Probe::Stat(Stat::of(&m)))
                } else {
                    fingerprint::hashed_ahead(name).map(Probe::Opened)
                }
            },
            // The index borrows the names of the records read.
            || match early {
                Some(_) => None,
                None => load().map(|s| {
                    let s: &Session = late.insert(s);
                    (s, s.index())
                }),
            },
        );
        let (session, index) = match (&early, early_index, read_late) {
            (Some(Some(s)), Some(ix), _) => (s, ix),
            (None, _, Some((s, ix))) => (s, ix),
            _ => return self.decide_each(jobs, out),
        };
        let views = &session.views;
        // The identities of the session's records: a file no record names
        // may be a hard link to a file the agent viewed
        // ([`Store::file_by_inode`]). Gathered at the first such file.
        let mut known: Option<HashSet<(u64, u64)>> = None;
        let mut probes = probes.into_iter();
        for ((path, write), plain) in jobs.iter().zip(plain) {
            let Some(canonical) = plain else {
                out.push(self.decide(path, *write));
                continue;
            };
            let probe = probes.next().flatten();
            let Some((record, at)) = index
                .get(canonical.as_os_str())
                .map(|&i| &session.records[i as usize])
            else {
                // A regular file at a plain name that no record names, by
                // name or identity: never read, decided with no more system
                // calls or statements (as decide_resolving would find).
                let unknown = probe.as_ref().is_some_and(|p| {
                    let known = known
                        .get_or_insert_with(|| identities(session.records.iter().map(|(r, _)| r)));
                    let stat = p.stat();
                    stat.ftype == FileType::File && !known.contains(&(stat.dev, stat.ino))
                });
                out.push(match unknown {
                    true => Ok(decision(Verdict::NotRead, canonical, None)),
                    false => self.decide_resolving(path, want_of(*write), Some(&canonical)),
                });
                continue;
            };
            let fresh = match (record.fingerprint.stat.ftype, probe) {
                (FileType::File, Some(Probe::Opened(opened))) => {
                    fingerprint::freshness_ahead(&canonical, &record.fingerprint, opened)
                }
                _ => None,
            };
            let Some(fresh) = fresh else {
                // Not a regular file then or now, a link, nothing there, or
                // hashed ahead by the quick hash and the record has none to
                // compare: as alone.
                out.push(self.decide(path, *write));
                continue;
            };
            let all = views.at(at.clone());
            out.push(self.judge_recorded(path, *write, canonical, record, all, fresh));
        }
        if self.ending {
            std::mem::forget((index, known));
            std::mem::forget((early, late));
        }
    }

    /// [`Gate::decide_all`] for `jobs` (with their plain canonical names),
    /// `records` holding every record of those names and `views` giving
    /// every view of those records: looked up while the recorded files are
    /// opened and hashed, which need the records only.
    fn decide_found(
        &mut self,
        jobs: &[(PathBuf, bool)],
        plain: &[Option<PathBuf>],
        records: &FastMap<std::ffi::OsString, FileRecord>,
        views: impl FnOnce() -> Result<ViewsById>,
        out: &mut Vec<Result<Decision>>,
    ) {
        // The recorded regular files, opened and checked first (over the
        // cores when there are many): None where the path turned out to be
        // something else, for the single path's way.
        let found: Vec<Option<(&Path, &FileRecord)>> = plain
            .iter()
            .map(|p| {
                let canonical = p.as_deref()?;
                let record = records.get(canonical.as_os_str())?;
                (record.fingerprint.stat.ftype == FileType::File).then_some((canonical, record))
            })
            .collect();
        let todo: Vec<(&Path, &FileRecord)> = found.iter().flatten().copied().collect();
        let (checked, views) = spread_while(
            &todo,
            |(canonical, record)| {
                let taken_ns = fingerprint::now_ns();
                match paths::open_plain(canonical) {
                    Ok((f, m)) if FileType::of(&m) == FileType::File => {
                        Some(fingerprint::freshness_of_open(
                            canonical,
                            &record.fingerprint,
                            f,
                            &m,
                            taken_ns,
                        ))
                    }
                    // A link, nothing there, something else: as alone.
                    _ => None,
                }
            },
            views,
        );
        let Ok(views) = views else {
            return self.decide_each(jobs, out);
        };
        let mut checked = checked.into_iter();
        for (((path, write), plain), found) in jobs.iter().zip(plain).zip(&found) {
            let Some(canonical) = plain else {
                out.push(self.decide(path, *write));
                continue;
            };
            let Some((_, record)) = found else {
                if records.contains_key(canonical.as_os_str()) {
                    out.push(self.decide(path, *write));
                } else {
                    out.push(self.decide_resolving(path, want_of(*write), Some(canonical)));
                }
                continue;
            };
            let Some(fresh) = checked.next().flatten() else {
                out.push(self.decide(path, *write));
                continue;
            };
            let all = views.get(record.id);
            out.push(self.judge_recorded(path, *write, canonical.clone(), record, all, fresh));
        }
    }

    /// [`Gate::judge`] of a batch's path whose `record` is of a regular
    /// file that is still there, `fresh` what its bytes said.
    fn judge_recorded(
        &mut self,
        path: &Path,
        write: bool,
        canonical: PathBuf,
        record: &FileRecord,
        all: &[ViewRecord],
        fresh: std::io::Result<Freshness>,
    ) -> Result<Decision> {
        self.judge(
            path,
            want_of(write),
            canonical,
            true,
            Some(record),
            all,
            |_, _| fresh,
        )
    }

    /// The verdict for `path` (canonically `canonical`, on disk when
    /// `exists`) from its `record` and every view of it (`all`, oldest
    /// first); `fresh` says whether the file still holds what a
    /// fingerprint describes, asked only when the views leave it open.
    #[allow(clippy::too_many_arguments)]
    fn judge(
        &mut self,
        path: &Path,
        want: Want,
        canonical: PathBuf,
        exists: bool,
        record: Option<&FileRecord>,
        all: &[ViewRecord],
        fresh: impl FnOnce(&Fingerprint, &Path) -> std::io::Result<Freshness>,
    ) -> Result<Decision> {
        let Some(record) = record else {
            let verdict = if exists {
                Verdict::NotRead
            } else {
                Verdict::NewFile
            };
            return Ok(decision(verdict, canonical, None));
        };
        let store = self.store.expect("a record comes from a store");
        // Only what the conversation still holds counts (see
        // crate::held): a view it dropped is history.
        let views = || all.iter().filter(|v| v.held());
        if views().next().is_none() {
            let mut d = decision(Verdict::NotRead, canonical, None);
            if let Some((why, _)) = all.iter().rev().find_map(|v| v.released) {
                d.released = Some(why);
                d.message = Cow::Owned(format!(
                    "{MSG_NOT_READ} (What it was shown of it is no longer in the conversation: {}.)",
                    why.as_str()
                ));
            }
            return Ok(d);
        }
        // A full view if there is one, else the latest partial one (views
        // come oldest first): it is what the agent last saw of the file.
        // Cells are changed by id: the cells shown (a processed view) do.
        let best = views()
            .rev()
            .find(|v| v.kind == Kind::Full)
            .or_else(|| views().rev().find(|v| v.kind != Kind::Processed))
            .or_else(|| views().next_back().filter(|_| want == Want::Cells))
            .cloned();
        let Some(best) = best else {
            let any = views().next_back().cloned();
            return Ok(decision(Verdict::ProcessedView, canonical, any));
        };
        if want == Want::Write
            && best.kind != Kind::Full
            && !(exists && pieces_cover(&canonical, views()))
        {
            return Ok(decision(Verdict::StartOnly, canonical, Some(best)));
        }
        if !exists && want == Want::Write {
            // Deleted since the agent read it: nothing there holds anyone's
            // text, so writing it whole creates it again.
            return Ok(decision(Verdict::NewFile, canonical, Some(best)));
        }
        let fresh =
            fresh(&record.fingerprint, &canonical).map_err(|e| Error::io("check", path, &e))?;
        let verdict = match fresh {
            Freshness::Fresh { refreshed } => {
                let told = self.is_told(store, record.id)?;
                if let Some(fp) = refreshed {
                    // Saves a hash next time, and only onto the record
                    // checked; stored at the end, and a failure there
                    // changes no verdict.
                    self.refreshes.push((record.clone(), fp));
                }
                if told {
                    Verdict::Modified(Change::Content)
                } else {
                    Verdict::Ok
                }
            }
            Freshness::Stale(change) => Verdict::Modified(change),
        };
        let mut d = decision(verdict, canonical, Some(best));
        if let Verdict::Modified(change) = verdict {
            self.name_writer(store, &mut d, change);
        }
        Ok(d)
    }

    /// Say who made the change a `modified` refusal is about, when fsview
    /// knows ([`crate::writers`]): the bytes the file holds now are one
    /// writer's trace. A deletion is said as one. Only on a refusal, so a
    /// hash more costs nothing on the way of an allowed change.
    fn name_writer(&self, store: &Store, d: &mut Decision, change: Change) {
        if change == Change::Deleted {
            d.message = Cow::Borrowed(MSG_DELETED);
            return;
        }
        let Ok((hash, _)) = fingerprint::hash_path(&d.canonical) else {
            return;
        };
        let Ok(Some(w)) = store.writer(self.sid, &d.canonical, &hash) else {
            return;
        };
        let who = w.describe(self.sid);
        d.message = Cow::Owned(format!(
            "{}. {READ_AGAIN}",
            modified_since(change, Some(&who))
        ));
        d.writer = Some(who);
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

/// A batch's job: a whole-file write, else a targeted edit.
fn want_of(write: bool) -> Want {
    if write {
        Want::Write
    } else {
        Want::Edit
    }
}

/// Files a batch must open before it is spread over the cores: below this
/// a thread's start costs more than it saves.
const SPREAD_FROM: usize = 512;

/// Items a thread takes at a time in [`spread_while`].
const SPREAD_CHUNK: usize = 64;

/// `f` of every item, in order, and `meanwhile()` on this thread: `f`
/// over the machine's cores when there are many items, else one after the
/// other. The items go in chunks to whichever thread is free: one thread
/// per core but this one starts on them, and this one joins them once
/// `meanwhile()` is done, so no core waits on another's share.
fn spread_while<T: Sync, R: Send + Default, W>(
    items: &[T],
    f: impl Fn(&T) -> R + Sync,
    meanwhile: impl FnOnce() -> W,
) -> (Vec<R>, W) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 || items.len() < SPREAD_FROM {
        return (items.iter().map(&f).collect(), meanwhile());
    }
    let mut out: Vec<R> = std::iter::repeat_with(R::default)
        .take(items.len())
        .collect();
    let w = {
        // Each chunk of answers is taken by one thread only: the locks
        // are never contended, they only hand the slices over.
        let slots: Vec<Mutex<&mut [R]>> = out.chunks_mut(SPREAD_CHUNK).map(Mutex::new).collect();
        let next = AtomicUsize::new(0);
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = slots.get(i) else { break };
            let mut answers = slot.lock().unwrap_or_else(|e| e.into_inner());
            let part = &items[i * SPREAD_CHUNK..];
            for (item, answer) in part.iter().zip(answers.iter_mut()) {
                *answer = f(item);
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..cores.min(8) {
                scope.spawn(work);
            }
            let w = meanwhile();
            work();
            w
        })
    };
    (out, w)
}

/// What a batch learned of a file before deciding it.
enum Probe {
    /// Opened, and hashed when small ([`fingerprint::hashed_ahead`]).
    Opened(fingerprint::Ahead),
    /// Its `lstat` only: a file the session has no record of by its name.
    Stat(Stat),
}

impl Probe {
    fn stat(&self) -> &Stat {
        match self {
            Probe::Opened(a) => a.stat(),
            Probe::Stat(s) => s,
        }
    }
}

/// What a batch read of the whole session: every record, with where its
/// views are in `views`.
struct Session {
    records: Vec<(FileRecord, std::ops::Range<usize>)>,
    views: ViewsById,
}

impl Session {
    /// The records by canonical path: indices into `records`, keyed by
    /// the names the records hold (no copies).
    fn index(&self) -> FastMap<&std::ffi::OsStr, u32> {
        let mut ix = FastMap::with_capacity_and_hasher(self.records.len(), Default::default());
        for (i, (r, _)) in self.records.iter().enumerate() {
            ix.insert(r.path.as_os_str(), i as u32);
        }
        ix
    }
}

/// The identities (device and inode) of `records`.
fn identities<'r>(records: impl Iterator<Item = &'r FileRecord>) -> HashSet<(u64, u64)> {
    records
        .map(|r| (r.fingerprint.stat.dev, r.fingerprint.stat.ino))
        .collect()
}

/// The gate judges regular files only: anything else at the path is an
/// error that says so.
fn regular_only(path: &Path, resolved: &Resolved) -> Result<()> {
    if let Resolved::Existing { meta, .. } = resolved {
        let ft = FileType::of(meta);
        if ft != FileType::File {
            return Err(Error::new(format!(
                "{} is {}; fsview-check-edit gates regular files only",
                quote(path),
                ft.describe()
            )));
        }
    }
    Ok(())
}

fn decision(verdict: Verdict, canonical: PathBuf, view: Option<ViewRecord>) -> Decision {
    let message = match verdict {
        Verdict::Ok => "The file may be changed.".into(),
        Verdict::NewFile => "File does not exist; creating it needs no read.".into(),
        Verdict::NotRead => MSG_NOT_READ.into(),
        // A tool that renders what it reads (a notebook as its cells, lines
        // it shortened), or injected context.
        Verdict::ProcessedView if view.as_ref().is_some_and(|v| v.source == Source::Read) => "File has only been shown processed (as its tool rendered it, such as a notebook's cells), not as it is on disk. Change only what was shown (a notebook cell by cell), or read all of its text before writing to it.".into(),
        Verdict::ProcessedView => "File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.".into(),
        Verdict::StartOnly => {
            let part = match &view {
                Some(v) if v.lines == 0 => "none of its lines".into(),
                Some(v) => {
                    let last = v.offset.saturating_add(v.lines - 1);
                    let lines = match last == v.offset {
                        true => format!("line {last}"),
                        false => format!("lines {}-{last}", v.offset),
                    };
                    match v.total_lines {
                        Some(t) => format!("{lines} of {t}"),
                        None => lines,
                    }
                }
                None => "part of it".into(),
            };
            format!("File has only been read in part ({part}). Read the whole file before writing all of it.").into()
        }
        Verdict::Modified(_) => MSG_MODIFIED.into(),
    };
    Decision {
        verdict,
        canonical,
        message,
        view,
        released: None,
        writer: None,
    }
}

/// Whether parts read one after another (`--offset`, or the start of a
/// long file and then the rest) showed every line of the file at `path`
/// as it is now; see [`pieces_cover_bytes`]. The freshness check after it
/// compares the content with the record's.
fn pieces_cover<'a>(path: &Path, views: impl Iterator<Item = &'a ViewRecord>) -> bool {
    let parts: Vec<&ViewRecord> = views.filter(|v| is_piece(v)).collect();
    if parts.len() < 2 {
        return false;
    }
    match std::fs::read(path) {
        Ok(bytes) => pieces_cover_bytes(&bytes, parts.into_iter()),
        Err(_) => false,
    }
}

/// A view that shows the lines it names, exactly: a read's range or start.
/// An edit's range view names the lines from its first change to its
/// last, which it did not all show; a view injected or processed shows
/// other text.
fn is_piece(v: &ViewRecord) -> bool {
    matches!(v.kind, Kind::Range | Kind::Start)
        && v.source == Source::Read
        && v.lines > 0
        && v.held()
}

/// Whether the held parts among `views`, read one after another, showed
/// every line of `bytes` (the file's content, the one the views are of:
/// a change drops a record's views), each exactly: the agent has seen the
/// whole of it, as one read of it all would have shown it. Each must still
/// match the lines it names (a line a cap cut does not).
pub fn pieces_cover_bytes<'a>(bytes: &[u8], views: impl Iterator<Item = &'a ViewRecord>) -> bool {
    let total = crate::show::count_lines(bytes);
    let mut spans: Vec<(u64, u64)> = views
        .filter(|v| is_piece(v))
        .filter(|v| {
            fingerprint::hash_bytes(crate::show::slice_lines(bytes, v.offset, v.lines))
                == v.shown_hash
        })
        .map(|v| (v.offset, v.offset.saturating_add(v.lines)))
        .collect();
    if spans.len() < 2 {
        return false;
    }
    spans.sort_unstable();
    let mut next = 1;
    for (from, to) in spans {
        if from > next {
            return false;
        }
        next = next.max(to);
    }
    total > 0 && next > total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::{self, Request};
    use crate::store::NewView;

    fn read(store: &Store, path: &Path) {
        let s = show::read(path, &Request::whole(1 << 20)).unwrap();
        store
            .record("s", &NewView::of_shown(path, &s, Source::Read))
            .unwrap();
    }

    fn set_quick(store: &Store, sql: &str) {
        store
            .write(|c| c.execute(&format!("UPDATE files SET quick={sql}"), []))
            .unwrap();
    }

    /// The verdicts of `a` alone and of `a` and `b` in one batch.
    fn verdicts(store: &Store, dir: &Path, a: &Path, b: &Path) -> (Verdict, Verdict) {
        let one = decide(Some(store), "s", dir, a, false).unwrap().verdict;
        let mut gate = Gate::new(Some(store), "s", dir).in_snapshot().unwrap();
        let jobs = [(a.to_path_buf(), false), (b.to_path_buf(), false)];
        let batch = gate.decide_all(&jobs);
        gate.finish(&[]).unwrap();
        (one, batch[0].as_ref().unwrap().verdict)
    }

    // A check compares the XXH3 hash a read stored, and the SHA-256 where
    // the record has none (a session from before fsview kept it): a record
    // whose quick hash is of other bytes is modified, though its SHA-256
    // matches, and with none the SHA-256 decides, alone and in a batch.
    #[test]
    fn a_check_compares_the_quick_hash_where_the_record_has_one() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        let store = Store::open(&dir.join("s.db")).unwrap();
        let (a, b) = (dir.join("a.rs"), dir.join("b.rs"));
        std::fs::write(&a, "fn a() {}\n").unwrap();
        std::fs::write(&b, "fn b() {}\n").unwrap();
        read(&store, &a);
        read(&store, &b);
        let rec = store.file_by_path("s", &a).unwrap().unwrap();
        assert_eq!(
            rec.fingerprint.quick,
            Some(fingerprint::quick_bytes(b"fn a() {}\n"))
        );
        assert_eq!(verdicts(&store, &dir, &a, &b), (Verdict::Ok, Verdict::Ok));
        set_quick(&store, "zeroblob(16)");
        let changed = Verdict::Modified(Change::Content);
        assert_eq!(verdicts(&store, &dir, &a, &b), (changed, changed));
        set_quick(&store, "NULL");
        assert_eq!(verdicts(&store, &dir, &a, &b), (Verdict::Ok, Verdict::Ok));
        std::fs::write(&a, "fn a() { 1 }\n").unwrap();
        assert_eq!(verdicts(&store, &dir, &a, &b), (changed, changed));
        // Read again, the record has both hashes of the new bytes.
        read(&store, &a);
        let rec = store.file_by_path("s", &a).unwrap().unwrap();
        assert_eq!(
            rec.fingerprint.quick,
            Some(fingerprint::quick_bytes(b"fn a() { 1 }\n"))
        );
        assert_eq!(verdicts(&store, &dir, &a, &b), (Verdict::Ok, Verdict::Ok));
    }
}
