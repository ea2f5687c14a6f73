//! Telling the agent, once, of each change to the files it has read.
//!
//! Before a turn an agent adapter (a UserPromptSubmit hook, an MCP server)
//! adds a reminder of the files that changed since the agent saw them, with
//! diffs, as Claude Code does. Each change is told once: a file already in a
//! reminder is not repeated on every prompt. What makes that sound is that
//! what was told is recorded as carefully as a view: the state of the file
//! the reminder described (its fingerprint, and its text for the next
//! diff), or that it was deleted or no longer a regular file. From then on:
//!
//! - the file is news again when the disk moves away from what was told,
//!   by the same rule as freshness (the content decides). A revert to the
//!   text the agent had read is such a move: the agent last heard of the
//!   other text, so it is told, with the diff from what it was told;
//! - the edit gate refuses the file (`modified`) until the agent reads it
//!   again, whatever the disk holds, since the last thing it heard may not
//!   be what is there; `fsview-check-edit --changed` lists it likewise;
//! - a read of the file (any view but a processed one) clears what was told.
//!
//! A reminder can also move the view instead of leaving it stale: when its
//! diff is the whole change from the whole text the agent holds (a `full`
//! view it still holds, never told of since) to the file's text now, and
//! reaches the model unaltered ([`Reminder::whole`], which a caller clears
//! when it alters or leaves out the diff), the agent holds the new text as
//! surely as if it had read it. [`record`] then records that text as a
//! `full` view (source `read`, logged as `told`) instead of what was told:
//! the next edit needs no re-read. Anything less (a diff cut by the caps, a
//! range or start view, a change told before and not read since, a text
//! that is not plain UTF-8 with `\n` line ends) leaves the view stale as
//! before.
//!
//! Recording is conditional like a refresh ([`crate::Store::refresh`]): a
//! told state lands only on the file record it was computed from, never on
//! a newer view recorded meanwhile, nor on a reused row.
//!
//! Every adapter calls [`remind`] (or [`select`], [`record`] and [`render`]
//! in turn): the selection, the record of what was told and the text are
//! the same for every agent.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read};
use std::path::Path;

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use crate::changes::{self, Described, Limits, Now};
use crate::error::{quote, Result};
use crate::events::{log_in, Event};
use crate::fingerprint::{self, Change, FileType, Fingerprint, Freshness, Hash, Stat};
use crate::store::{
    blob_hash, keep_text, record_in, still_current, Budget, FileRecord, NewView, Store,
};
use crate::view::{Kind, Source};

/// The first line of a reminder's text.
pub const HEADER: &str = "These files changed since you last saw them:";

/// What a reminder told the agent about one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Told {
    /// The change it named.
    pub change: Change,
    /// What stood at the path: `None` when nothing did.
    pub stat: Option<Stat>,
    /// When that stat was taken.
    pub taken_ns: i64,
    /// The hash of the file's bytes, when a readable regular file stood there.
    pub hash: Option<Hash>,
    /// Its text, kept for the next diff (while the text budget allows).
    pub text_hash: Option<Hash>,
    pub told_ns: i64,
}

impl Told {
    /// Has the disk moved away from what was told? By the rule of
    /// freshness: the same bytes under another file object have not.
    fn moved(&self, path: &Path) -> bool {
        let Some(stat) = self.stat else {
            // Told it was deleted: news when something is back.
            return !matches!(std::fs::symlink_metadata(path), Err(e) if fingerprint::is_gone(&e));
        };
        if stat.ftype != FileType::File {
            return match std::fs::symlink_metadata(path) {
                Ok(m) => FileType::of(&m) != stat.ftype,
                Err(_) => true,
            };
        }
        let fp = Fingerprint {
            stat,
            taken_ns: self.taken_ns,
            hash: self.hash,
            quick: None,
        };
        match self.hash {
            Some(_) => !matches!(
                fingerprint::freshness(path, &fp),
                Ok(Freshness::Fresh { .. })
            ),
            // Unreadable when told: news when its stat moves.
            None => match std::fs::symlink_metadata(path) {
                Ok(m) => {
                    let now = Stat::of(&m);
                    !(now.same_identity(&stat) && now.same_times(&stat))
                }
                Err(_) => true,
            },
        }
    }
}

/// One file to tell of.
#[derive(Clone, Debug)]
pub struct Reminder {
    /// The session's record of the file (its last view).
    pub record: FileRecord,
    /// How it differs from what the agent saw or was last told.
    pub change: Change,
    /// The unified diff, from the text the agent was last told of (or
    /// shown) to the text now, possibly ending in a truncation marker.
    pub diff: Option<String>,
    /// Lines of diff left out by the caps.
    pub truncated: usize,
    /// Why there is no diff, when there is none.
    pub note: Option<String>,
    /// Who made the change, when fsview knows ([`crate::writers`]).
    pub writer: Option<String>,
    /// The diff is the whole change from the whole text the agent holds to
    /// the file's text now: told unaltered, it moves the view to that text
    /// (see the module documentation). Clear it when the diff does not
    /// reach the model exactly as it is.
    pub whole: bool,
    /// `diff` holds the file's whole text now, numbered, not a diff: a
    /// rewrite whose diff the caps would cut, told by the shorter text
    /// ([`Limits::rewrites`]).
    pub rewrite: bool,
    /// The state being told, to record.
    told: Told,
    /// The file's text now, to keep for the next diff.
    text: Option<Vec<u8>>,
}

impl Reminder {
    /// What was told, in words, for the events log.
    pub fn summary(&self) -> String {
        match (&self.diff, &self.note) {
            (Some(d), _) if self.rewrite => {
                format!(
                    "its whole text, {}",
                    plural(d.lines().count() as u64, "line")
                )
            }
            (Some(d), _) => {
                let shown = d.lines().count() - usize::from(self.truncated > 0);
                let cut = match self.truncated {
                    0 => String::new(),
                    n => format!(", {n} more cut"),
                };
                format!("a diff of {shown} lines{cut}")
            }
            (None, Some(n)) => n.clone(),
            (None, None) => self.change.as_str().to_string(),
        }
    }
}

/// The origin of the full view whose text a diff of file `file_id` was
/// taken from: the latest held one (`None` inside: of unknown origin).
fn base_origin(conn: &rusqlite::Connection, file_id: i64) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .prepare_cached(
            "SELECT origin FROM views WHERE file_id=?1 AND kind='full' AND released IS NULL
             ORDER BY viewed_ns DESC LIMIT 1",
        )?
        .query_row([file_id], |r| r.get::<_, Option<String>>(0))
        .optional()?
        .flatten())
}

/// Tell session `sid` of what changed since it last saw or heard of each of
/// its files: select them, record what is told, and return the reminder's
/// text, or `None` when there is nothing new. `tool` names the adapter in
/// the events log. Paths are shown relative to `cwd` when below it.
pub fn remind(
    store: &Store,
    sid: &str,
    cwd: &Path,
    limits: Limits,
    tool: &str,
) -> Result<Option<String>> {
    let found = select(store, sid, cwd, limits)?;
    if found.is_empty() {
        return Ok(None);
    }
    record(store, sid, tool, &found, None)?;
    Ok(Some(render(cwd, &found)))
}

/// The files of session `sid` with news for the agent: changed since its
/// last view and never told, or moved away from what it was last told.
pub fn select(store: &Store, sid: &str, cwd: &Path, limits: Limits) -> Result<Vec<Reminder>> {
    select_among(store, sid, cwd, limits, store.files(sid)?)
}

/// How many of a session's most recently viewed files
/// [`select_stat_moved`] looks at: a call's cost stays flat however long
/// the session grows.
pub const STAT_MOVED_FILES: usize = 256;

/// [`select`] among the [`STAT_MOVED_FILES`] most recently viewed files
/// whose stat moved from their record's (any write moves the ctime; a
/// deletion or a new file object shows too): what to tell after every tool
/// call, where [`select`]'s close look at every file (a hash of each small
/// one) would cost each call as much as a prompt. A change no stat shows
/// (a write through a shared mapping), or to a file viewed long ago, waits
/// for the next prompt's reminder or the gate, which decide by content.
pub fn select_stat_moved(
    store: &Store,
    sid: &str,
    cwd: &Path,
    limits: Limits,
) -> Result<Vec<Reminder>> {
    let mut records: Vec<FileRecord> = store
        .recent_files(sid, STAT_MOVED_FILES)?
        .into_iter()
        .filter(stat_moved)
        .collect();
    // Told in the order a prompt tells them: oldest view first.
    records.reverse();
    select_among(store, sid, cwd, limits, records)
}

/// Whether the file at `record`'s path is no longer the file object, with
/// the size and times, its record holds.
fn stat_moved(record: &FileRecord) -> bool {
    let was = &record.fingerprint.stat;
    match std::fs::symlink_metadata(&record.path) {
        Ok(m) => {
            let now = Stat::of(&m);
            !(now.ftype == was.ftype && now.same_identity(was) && now.same_times(was))
        }
        Err(_) => true,
    }
}

/// [`select`] for the one file at canonical `path`: what would be told of
/// it (nothing when it has no news or no record).
pub fn select_file(
    store: &Store,
    sid: &str,
    cwd: &Path,
    limits: Limits,
    path: &Path,
) -> Result<Vec<Reminder>> {
    let records = store.file_by_path(sid, path)?.into_iter().collect();
    select_among(store, sid, cwd, limits, records)
}

fn select_among(
    store: &Store,
    sid: &str,
    cwd: &Path,
    limits: Limits,
    records: Vec<FileRecord>,
) -> Result<Vec<Reminder>> {
    let told = store.told_all(sid)?;
    let mut budget = limits.total;
    let mut out = Vec::new();
    for mut record in records {
        let prior = told.get(&record.id);
        if prior.is_some_and(|t| !t.moved(&record.path)) {
            continue; // already told, and still so
        }
        let since_view = changes::check(store, sid, &mut record);
        if prior.is_none() && since_view.is_none() {
            continue; // fresh, and nothing was told
        }
        let now = capture(&record.path);
        let budget_before = budget;
        let change = match now.told.stat {
            None => Change::Deleted,
            Some(s) if s.ftype != FileType::File => Change::Type,
            Some(_) => match since_view {
                Some(c @ (Change::Content | Change::Replaced)) => c,
                // Back to the bytes the agent read, or here again after a
                // deletion it was told of: a change from what it heard.
                _ => Change::Content,
            },
        };
        let mut d = describe(
            store,
            &record,
            prior,
            since_view.is_none(),
            change,
            &now,
            cwd,
            limits.crlf_as_lf,
            limits.per_file,
            &mut budget,
        )?;
        let told_whole = |d: &Described| {
            prior.is_none()
                && d.note.is_none()
                && d.diff.is_some()
                && matches!(change, Change::Content | Change::Replaced)
                && now.told.hash.is_some()
                && now
                    .bytes
                    .as_deref()
                    .is_some_and(|b| plain_text(b, limits.crlf_as_lf))
        };
        let mut as_text = false;
        if limits.rewrites && d.truncated > 0 && told_whole(&d) {
            // The text as the agent's read shows it.
            let shown = match (limits.crlf_as_lf, now.bytes.as_deref()) {
                (true, Some(b)) if memchr::memchr(b'\r', b).is_some() => {
                    Some(std::borrow::Cow::Owned(
                        String::from_utf8_lossy(b)
                            .replace("\r\n", "\n")
                            .into_bytes(),
                    ))
                }
                (_, b) => b.map(std::borrow::Cow::Borrowed),
            };
            if let Some(text) = rewrite_text(shown.as_deref(), &d, budget_before, limits.numbered) {
                if holds_whole_text(store, &record)? {
                    budget = budget_before - text.1 as usize;
                    let how = match limits.numbered {
                        true => "numbered as a read shows it",
                        false => "as a read shows it",
                    };
                    d = Described {
                        note: Some(format!(
                            "rewritten: its whole text now ({}), {how}",
                            plural(text.1, "line")
                        )),
                        diff: Some(text.0),
                        truncated: 0,
                    };
                    as_text = true;
                }
            }
        }
        let whole =
            as_text || (d.truncated == 0 && told_whole(&d) && holds_whole_text(store, &record)?);
        let writer = match (change, now.told.hash) {
            (Change::Content | Change::Replaced, Some(hash)) => store
                .writer(sid, &record.path, &hash)?
                .map(|w| w.describe(sid)),
            _ => None,
        };
        out.push(Reminder {
            record,
            change,
            diff: d.diff,
            truncated: d.truncated,
            note: d.note,
            writer,
            rewrite: as_text,
            whole,
            told: Told { change, ..now.told },
            text: now.bytes,
        });
    }
    Ok(out)
}

/// The most of a file told or given back by its whole text: a rewrite
/// ([`Limits::rewrites`]), and what a hook's refusal gives back whole.
pub const REWRITE_BYTES: usize = 24 * 1024;

/// A rewrite's whole text, `numbered` or as it is, and its line count:
/// when the file's `bytes` (plain text, at most [`REWRITE_BYTES`], no NUL)
/// make fewer lines than the diff `d` would have shown uncut, and no more
/// than `budget`.
fn rewrite_text(
    bytes: Option<&[u8]>,
    d: &Described,
    budget: usize,
    numbered: bool,
) -> Option<(String, u64)> {
    let bytes = bytes.filter(|b| b.len() <= REWRITE_BYTES && !b.contains(&0))?;
    let lines = crate::show::count_lines(bytes);
    let uncut = d.diff.as_deref().map_or(0, |t| t.lines().count()) + d.truncated;
    if lines == 0 || lines as usize >= uncut || lines as usize > budget {
        return None;
    }
    let text = match numbered {
        true => crate::show::number_lines(bytes, 1),
        false => String::from_utf8(bytes.to_vec()).ok()?,
    };
    Some((text, lines))
}

/// `n` and `word`, with an `s` unless `n` is 1: "1 line", "240 lines".
pub fn plural(n: u64, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        n => format!("{n} {word}s"),
    }
}

/// Text a diff shows exactly: UTF-8 with `\n` line ends (a tool that
/// decodes `\r\n` would show other lines than the diff's), or, for an
/// agent whose read shows `\r\n` as `\n` (`crlf`), `\r` only before
/// `\n`: the lines it reads are the diff's with that `\r` left out.
fn plain_text(bytes: &[u8], crlf: bool) -> bool {
    let cr_ok = match crlf {
        false => !bytes.contains(&b'\r'),
        true => memchr::memchr_iter(b'\r', bytes).all(|i| bytes.get(i + 1) == Some(&b'\n')),
    };
    cr_ok && std::str::from_utf8(bytes).is_ok()
}

/// Whether the diff of `record` starts from a `full` view the agent still
/// holds, with its text kept (what [`changes::describe`] diffs from): the
/// very text it was shown (even where that was not the disk's by then), so
/// that text with the whole diff applied is the file's text now.
fn holds_whole_text(store: &Store, record: &FileRecord) -> Result<bool> {
    let views = store.views(record.id)?;
    Ok(changes::best_kept(&views).is_some_and(|v| v.kind == Kind::Full && v.held()))
}

/// Record in one transaction that `reminders` were told to session `sid`,
/// with a `remind` event each (logged under `tool`). A told state lands only
/// on the very record it was computed from (see the module documentation);
/// a [`Reminder::whole`] one records the file's text as a `full` view
/// instead. Returns how many views moved so.
///
/// `origin`: where in the conversation the change was told (the call whose
/// result carried it, the prompt), the origin of each view moved to the new
/// text: it holds as long as that does (a rewind past it, a result cut,
/// releases it), not as long as the read before it.
pub fn record(
    store: &Store,
    sid: &str,
    tool: &str,
    reminders: &[Reminder],
    origin: Option<&str>,
) -> Result<usize> {
    let summaries: Vec<String> = reminders.iter().map(Reminder::summary).collect();
    crate::pause::point("told");
    store.write(|conn| {
        let now = fingerprint::now_ns();
        let mut budget = Budget::unread();
        let mut moved = 0;
        for (r, summary) in reminders.iter().zip(&summaries) {
            if still_current(conn, sid, &r.record)? && r.whole {
                if let (Some(text), Some(_)) = (&r.text, r.told.hash) {
                    let fp = Fingerprint {
                        stat: r.told.stat.expect("a whole reminder is of a regular file"),
                        taken_ns: r.told.taken_ns,
                        hash: r.told.hash,
                        quick: None,
                    };
                    let lines = crate::show::count_lines(text);
                    // A diff is the new text only with the text it was
                    // taken from: both must still be held (see
                    // crate::held::ORIGINS_SEP). A whole text told alone
                    // needs only what carried it.
                    let origin = match origin {
                        Some(carrier) if !r.rewrite => {
                            let base = base_origin(conn, r.record.id)?.unwrap_or_default();
                            Some(format!("{carrier}{}{base}", crate::held::ORIGINS_SEP))
                        }
                        other => other.map(String::from),
                    };
                    let view = NewView {
                        path: &r.record.path,
                        fingerprint: &fp,
                        kind: Kind::Full,
                        source: Source::Read,
                        offset: 1,
                        lines,
                        total_lines: Some(lines),
                        shown: text,
                        keep_text: true,
                        origin: origin.as_deref(),
                        conversation: None,
                    };
                    record_in(conn, sid, &view, now, &mut budget)?;
                    moved += 1;
                    let e = Event::new(tool, TOLD_ACTION)
                        .path(&r.record.path)
                        .verdict(r.change.as_str())
                        .detail(Some(summary));
                    log_in(conn, sid, now, &e)?;
                    continue;
                }
            }
            if still_current(conn, sid, &r.record)? {
                let text_hash = match (&r.text, r.told.hash) {
                    (Some(text), Some(hash)) => {
                        keep_text(conn, &hash, text, now, &mut budget)?.then_some(hash)
                    }
                    _ => None,
                };
                store_told(conn, r.record.id, &r.told, text_hash, now)?;
            }
            let e = Event::new(tool, "remind")
                .path(&r.record.path)
                .verdict(r.change.as_str())
                .detail(Some(summary));
            log_in(conn, sid, now, &e)?;
        }
        Ok(moved)
    })
}

/// The action logged when a told change moved a view (see [`record`]).
pub const TOLD_ACTION: &str = "told";

/// The reminder's text: one line per file (`PATH: modified (CHANGE)`, with
/// a note when there is no diff) and its diff, under [`HEADER`].
pub fn render(cwd: &Path, reminders: &[Reminder]) -> String {
    let mut text = format!("{HEADER}\n\n");
    for r in reminders {
        let shown = crate::paths::display(cwd, &r.record.path);
        let note = changes::by_writer(r.writer.as_deref(), r.note.as_deref());
        text.push_str(&changes::listing(
            &quote(&shown),
            r.change,
            note.as_deref(),
            r.diff.as_deref(),
        ));
    }
    text
}

/// The file at a path as a reminder finds it.
struct Captured {
    told: Told,
    /// Its bytes, when a regular file of at most [`changes::MAX_DIFF_FILE`]
    /// bytes could be read.
    bytes: Option<Vec<u8>>,
    /// Why there are no bytes, when there are none.
    missing: Now<'static>,
}

impl Captured {
    fn now(&self) -> Now<'_> {
        match &self.bytes {
            Some(b) => Now::Bytes(b),
            None => self.missing,
        }
    }
}

/// What is at `path` now: the stat of the open file before its first byte,
/// the hash of every byte, and the bytes themselves when small enough to
/// diff and keep. One open, so the diff shown and the state recorded are of
/// the same bytes.
fn capture(path: &Path) -> Captured {
    let taken_ns = fingerprint::now_ns();
    let told = |stat: Option<Stat>, hash: Option<Hash>| Told {
        change: Change::Content,
        stat,
        taken_ns,
        hash,
        text_hash: None,
        told_ns: taken_ns,
    };
    let lstat = || std::fs::symlink_metadata(path).ok().map(|m| Stat::of(&m));
    // A record's path is the file itself (links resolved when it was
    // seen): a link there now replaced it, whatever it points to.
    if let Some(link) = lstat().filter(|s| s.ftype == FileType::Symlink) {
        return Captured {
            told: told(Some(link), None),
            bytes: None,
            missing: Now::Gone,
        };
    }
    let file = match fingerprint::open_nonblocking(path) {
        Ok(f) => f,
        Err(e) if fingerprint::is_gone(&e) => {
            return Captured {
                told: told(None, None),
                bytes: None,
                missing: Now::Gone,
            }
        }
        // A socket cannot be opened; anything else unreadable is told by
        // its stat.
        Err(_) => {
            return Captured {
                told: told(lstat(), None),
                bytes: None,
                missing: Now::Unreadable,
            }
        }
    };
    let stat = match file.metadata() {
        Ok(m) => Stat::of(&m),
        Err(_) => {
            return Captured {
                told: told(lstat(), None),
                bytes: None,
                missing: Now::Unreadable,
            }
        }
    };
    if stat.ftype != FileType::File {
        return Captured {
            told: told(Some(stat), None),
            bytes: None,
            missing: Now::Gone,
        };
    }
    match hash_keeping(file, changes::MAX_DIFF_FILE) {
        Ok((hash, bytes)) => Captured {
            told: told(Some(stat), Some(hash)),
            bytes: bytes.map(crate::encoding::as_shown),
            missing: Now::TooLarge,
        },
        Err(_) => Captured {
            told: told(Some(stat), None),
            bytes: None,
            missing: Now::Unreadable,
        },
    }
}

/// Hash every byte of `file`, keeping them when there are at most `keep`.
fn hash_keeping(mut file: std::fs::File, keep: u64) -> io::Result<(Hash, Option<Vec<u8>>)> {
    let mut hasher = Sha256::new();
    let mut kept = Some(Vec::new());
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        if let Some(k) = &mut kept {
            if (k.len() + n) as u64 > keep {
                kept = None;
            } else {
                k.extend_from_slice(&buf[..n]);
            }
        }
    }
    Ok((hasher.finalize().into(), kept))
}

/// The diff of a reminder: from the text last told of, when it was kept,
/// else from the text of the view (as `fsview-check-edit --changed` shows
/// it), to the text now.
#[allow(clippy::too_many_arguments)]
fn describe(
    store: &Store,
    record: &FileRecord,
    prior: Option<&Told>,
    fresh_since_view: bool,
    change: Change,
    now: &Captured,
    cwd: &Path,
    crlf: bool,
    per_file: usize,
    budget: &mut usize,
) -> Result<Described> {
    let current = now.now();
    let views = store.views(record.id)?;
    let told_text = match prior.and_then(|t| t.text_hash) {
        Some(h) => store.text(&h)?,
        None => None,
    };
    if let (Some(old), Now::Bytes(new)) = (&told_text, current) {
        // The told text is the whole file; cut both to what was viewed,
        // where those lines were then and are now.
        let view = changes::best_kept(&views);
        let lines = view.and_then(changes::lines_of);
        let seen = match (view, lines) {
            (Some(v), Some(_)) => v.text_hash.map(|h| store.text(&h)).transpose()?.flatten(),
            _ => None,
        };
        let (old, new, lines, now_lines) = match lines {
            None => (&old[..], new, None, None),
            Some((offset, count)) => {
                let at = |text: &[u8]| {
                    seen.as_deref()
                        .and_then(|s| changes::seen_now(s, text, offset))
                        .unwrap_or((offset, count))
                };
                let (then, now) = (at(old), at(new));
                (
                    crate::show::slice_lines(old, then.0, then.1),
                    crate::show::slice_lines(new, now.0, now.1),
                    Some(then),
                    Some(now),
                )
            }
        };
        return Ok(changes::diff(
            old,
            new,
            &record.path,
            "as last told",
            lines,
            now_lines,
            cwd,
            crlf,
            per_file,
            budget,
        ));
    }
    if fresh_since_view {
        // Told of a deletion or a change whose text was not kept, and now
        // the bytes the agent read are back.
        return Ok(Described {
            diff: None,
            truncated: 0,
            note: Some("the same text as viewed again".into()),
        });
    }
    changes::describe(
        store, record, &views, change, current, cwd, crlf, per_file, budget,
    )
}

impl Store {
    /// What a reminder last told session `sid`'s record `file_id` of, if
    /// the agent has not read the file since.
    pub fn told(&self, file_id: i64) -> Result<Option<Told>> {
        self.read(|conn| {
            conn.prepare_cached(&format!("SELECT {TOLD_COLUMNS} FROM told WHERE file_id=?1"))?
                .query_row([file_id], told_row)
                .optional()
        })
    }

    /// Whether a reminder told of a change to record `file_id` that the
    /// agent has not read since.
    pub fn is_told(&self, file_id: i64) -> Result<bool> {
        self.read(|conn| {
            Ok(conn
                .prepare_cached("SELECT 1 FROM told WHERE file_id=?1")?
                .query_row([file_id], |_| Ok(()))
                .optional()?
                .is_some())
        })
    }

    /// Everything told to session `sid` and not read since, by record id.
    pub(crate) fn told_all(&self, sid: &str) -> Result<HashMap<i64, Told>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(&format!(
                // told first (CROSS JOIN keeps that order): it holds a few
                // rows, the session may hold 100,000 files.
                "SELECT t.file_id, {} FROM told t CROSS JOIN files f ON f.id = t.file_id WHERE f.sid=?1",
                TOLD_COLUMNS
                    .split(", ")
                    .map(|c| format!("t.{c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))?;
            let rows = stmt.query_map([sid], |r| Ok((r.get::<_, i64>(0)?, told_row_at(r, 1)?)))?;
            rows.collect()
        })
    }

    /// The ids of session `sid`'s records told of and not read since.
    /// The records of session `sid` that a reminder told of a change the
    /// agent has not read since.
    pub fn told_ids(&self, sid: &str) -> Result<HashSet<i64>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                // told first, as in told_all.
                "SELECT t.file_id FROM told t CROSS JOIN files f ON f.id = t.file_id WHERE f.sid=?1",
            )?;
            let rows = stmt.query_map([sid], |r| r.get::<_, i64>(0))?;
            rows.collect()
        })
    }
}

pub(crate) const TOLD_COLUMNS: &str =
    "change, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, text_hash, told_ns";

pub(crate) fn told_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Told> {
    told_row_at(r, 0)
}

fn told_row_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Told> {
    let change = match r.get::<_, String>(at)?.as_str() {
        "deleted" => Change::Deleted,
        "type" => Change::Type,
        "replaced" => Change::Replaced,
        _ => Change::Content,
    };
    let stat = match r.get::<_, Option<i64>>(at + 4)? {
        None => None,
        Some(ftype) => Some(Stat {
            dev: r.get::<_, i64>(at + 1)? as u64,
            ino: r.get::<_, i64>(at + 2)? as u64,
            btime_ns: r.get(at + 3)?,
            ftype: FileType::from_code(ftype),
            size: r.get::<_, i64>(at + 5)? as u64,
            mtime_ns: r.get(at + 6)?,
            ctime_ns: r.get(at + 7)?,
        }),
    };
    Ok(Told {
        change,
        stat,
        taken_ns: r.get::<_, Option<i64>>(at + 8)?.unwrap_or(0),
        hash: r.get::<_, Option<Vec<u8>>>(at + 9)?.map(blob_hash),
        text_hash: r.get::<_, Option<Vec<u8>>>(at + 10)?.map(blob_hash),
        told_ns: r.get(at + 11)?,
    })
}

pub(crate) fn store_told(
    conn: &Connection,
    file_id: i64,
    t: &Told,
    text_hash: Option<Hash>,
    now: i64,
) -> rusqlite::Result<()> {
    let s = t.stat.as_ref();
    conn.prepare_cached(
        "INSERT OR REPLACE INTO told(file_id, change, dev, ino, btime_ns, ftype, size, mtime_ns, ctime_ns, taken_ns, hash, text_hash, told_ns)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        file_id,
        t.change.as_str(),
        s.map(|s| s.dev as i64),
        s.map(|s| s.ino as i64),
        s.and_then(|s| s.btime_ns),
        s.map(|s| s.ftype.code()),
        s.map(|s| s.size as i64),
        s.map(|s| s.mtime_ns),
        s.map(|s| s.ctime_ns),
        t.taken_ns,
        t.hash.as_ref().map(|h| &h[..]),
        text_hash.as_ref().map(|h| &h[..]),
        now
    ])?;
    Ok(())
}
