//! Apply a change under the gate: the one step shared by `fsview-edit`,
//! `fsview-write` and anything else that changes files for an agent (the
//! MCP server).
//!
//! [`apply`] takes a request (a path, and edits or the whole new text) and
//! does, in order:
//!
//! 1. **The gate**, as `fsview-check-edit` decides it ([`gate::decide`]),
//!    before anything else: an edit needs a fresh view that is not
//!    processed, a whole-file write a fresh `full` view, a file that does
//!    not exist none. Refused: the gate's verdict and message, nothing
//!    written. Then what must not be changed is refused for everyone, root
//!    included: a mode without a `w` bit, `chattr +i` or `+a`.
//! 2. **The check, under the writers' lock.** The file is opened and locked
//!    against other fsview writers ([`replace`]), and its bytes are read
//!    once and checked against the view's fingerprint: the new text is
//!    computed from exactly the bytes the agent saw, or not at all
//!    (`modified`).
//! 3. **Claude Code's Edit rules** ([`edits`]) on the file's text, kept in
//!    its encoding ([`encoding`]): refusals are `not_found`, `ambiguous`,
//!    `no_change`, `file_exists`.
//! 4. **The write** ([`replace::replace`]): a temporary file beside it,
//!    flushed; under a read lease ([`lease`]; `in_use` when another program
//!    has the file open for writing) the last check, the old file's
//!    metadata given to the new one ([`meta`]), and the swap, undone if
//!    anything else landed meanwhile (`modified`; another program's version
//!    kept as a conflict copy, never deleted). A file a new one cannot
//!    stand in for is written in place.
//! 5. **The record**: the written text becomes a `full` view of source
//!    `write` (so the next edit needs no re-read), with the event in the
//!    session's log, in one transaction. A refusal is logged with its
//!    verdict.
//!
//! Errors a user can cause (a directory, a binary file, a path that cannot
//! be written, a full disk) are `Err` with one line that says what to do;
//! the file is then as it was (except a write whose view could not be
//! recorded: [`Report::unrecorded`]). The whole account is docs/apply.md.

pub mod diff;
pub mod edits;
pub mod lease;
pub mod meta;
pub mod replace;

pub use fsview_store::encoding;

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use fsview_store::error::quote;
use fsview_store::events::Event;
use fsview_store::fingerprint::{
    self, Change as FileChange, FileType, Fingerprint, Hash, Quick, Stat,
};
use fsview_store::gate::{self, Verdict as GateVerdict};
pub use fsview_store::merge::OnChange;
use fsview_store::paths::{self, Resolved};
use fsview_store::store::{FileRecord, NewView};
use fsview_store::{Error, Kind, Source, Store};

pub use edits::{Edit, Refusal};

/// The largest file changed, as Claude Code's Edit allows: the whole file
/// is read into memory, and several copies of it are made.
pub const MAX_FILE: u64 = 1 << 30;

/// Written texts up to this size are kept in the session, for later diffs
/// (as `fsview-read --written` keeps them).
pub const KEEP_TEXT: usize = 8 * 1024 * 1024;

/// What to change in a file.
#[derive(Clone, Debug)]
pub enum Change {
    /// Replacements, applied in order, all or nothing.
    Edit(Vec<Edit>),
    /// The whole new content.
    Write(Vec<u8>),
}

/// One request: a path (relative to the caller's working directory) and
/// the change.
#[derive(Clone, Debug)]
pub struct Request {
    pub path: PathBuf,
    pub change: Change,
}

impl Request {
    fn whole_file(&self) -> bool {
        matches!(self.change, Change::Write(_))
    }

    fn action(&self) -> &'static str {
        match self.change {
            Change::Edit(_) => "edit",
            Change::Write(_) => "write",
        }
    }
}

/// Where and for whom a request is applied.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// The session file; `None` when there is none (only for a dry run: a
    /// write must be recorded).
    pub store: Option<&'a Store>,
    pub sid: &'a str,
    pub cwd: &'a Path,
    /// The tool, for messages and the events log (`fsview-edit`, ...).
    pub tool: &'a str,
    /// Decide and compute everything, write nothing.
    pub dry_run: bool,
    /// Whose words an edit's refusal is said in.
    pub voice: edits::Voice,
    /// The session file does not hold session `sid` (a mistyped `--sid`):
    /// a refusal is not logged, so asking creates no session; a change
    /// that is written still records its view there.
    pub unknown_session: bool,
    /// A targeted edit of a file that changed since the view: merged with
    /// that change where they do not collide ([`fsview_store::merge`]), or
    /// refused.
    pub on_change: OnChange,
}

/// The answer for one request: the gate's verdict, or why the edit itself
/// was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Gate(GateVerdict),
    /// The file changed since the view, and the edit was made beside that
    /// change, which is kept ([`Report::merged`]).
    Merged,
    Refused(Refusal),
    /// Another program has the file open for writing: replacing it would
    /// lose what it writes next.
    InUse,
}

impl Verdict {
    /// The verdict's word: the gate's (`ok`, `new_file`, `not_read`,
    /// `processed_view`, `start_only`, `modified`) or the edit's
    /// (`not_found`, `ambiguous`, `no_change`, `file_exists`), or
    /// `in_use`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Gate(v) => v.as_str(),
            Verdict::Merged => "merged",
            Verdict::Refused(r) => r.as_str(),
            Verdict::InUse => "in_use",
        }
    }

    /// The gate let the change through (`ok`, `new_file`): it was applied,
    /// or would be in a dry run.
    pub fn allowed(self) -> bool {
        matches!(self, Verdict::Gate(v) if v.allowed()) || self == Verdict::Merged
    }

    /// What changed, for `modified`.
    pub fn change(self) -> Option<FileChange> {
        match self {
            Verdict::Gate(v) => v.change(),
            _ => None,
        }
    }
}

/// What happened to one request.
#[derive(Debug)]
pub struct Report {
    /// The canonical path (symbolic links resolved): the file written.
    pub canonical: PathBuf,
    pub verdict: Verdict,
    /// The file now holds the change (false for a refusal and a dry run).
    pub applied: bool,
    /// For the model: what happened, or what to do now.
    pub message: String,
    /// A unified diff of the change (empty when the text is the same);
    /// `None` when refused.
    pub diff: Option<String>,
    /// Replacements made (edits), or 1 for a whole-file write.
    pub replacements: usize,
    /// SHA-256 of the file as written (or as it would be, in a dry run).
    pub sha256: Option<Hash>,
    /// Things worth knowing that are not errors (a hard link broken, a
    /// write in place).
    pub notices: Vec<String>,
    /// Another program's version of the file, kept beside it as a conflict
    /// copy (`NAME.fsview-conflict-TIME-PID`) because it could not stay at
    /// the path.
    pub conflict: Option<PathBuf>,
    /// The file was written but the view could not be recorded: the next
    /// edit will need a read first.
    pub unrecorded: Option<Error>,
    /// For [`Verdict::Merged`]: the other change the file had since the
    /// view, as a unified diff (the agent now holds it too), and who made
    /// it when fsview knows.
    pub merged: Option<Merged>,
}

/// The change an edit was merged with.
#[derive(Clone, Debug)]
pub struct Merged {
    /// What changed of what the agent saw: a unified diff.
    pub diff: String,
    pub writer: Option<String>,
    /// For an edit made on lines the agent saw (a `range` or `start`
    /// view), not the whole file: which.
    pub lines: Option<SeenLines>,
}

/// The lines an edit was made on: first and last (from 1) as the agent saw
/// them, and where they are in the file now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeenLines {
    pub seen: (u64, u64),
    pub now: (u64, u64),
}

impl Report {
    /// A report of nothing written: a refusal, or the base of the others.
    fn new(canonical: PathBuf, verdict: Verdict, message: String) -> Report {
        Report {
            canonical,
            verdict,
            applied: false,
            message,
            diff: None,
            replacements: 0,
            sha256: None,
            notices: Vec::new(),
            conflict: None,
            unrecorded: None,
            merged: None,
        }
    }
}

/// Apply one request. See the crate documentation for the steps.
pub fn apply(cx: &Context<'_>, req: &Request) -> Result<Report, Error> {
    // A name ending in `/` names a directory: never a file to create
    // (open(2) says EISDIR), whatever resolving it drops.
    if req.path.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(Error::new(format!(
            "{} ends in /, which names a directory; {} changes regular files: name one",
            quote(&req.path),
            cx.tool
        )));
    }
    // A file that appears between the gate and its creation sends us
    // round again: the gate then answers for the file that is there.
    for _ in 0..3 {
        if let Some(report) = attempt(cx, req)? {
            return Ok(report);
        }
    }
    Err(Error::new(format!(
        "{} kept appearing and disappearing while it was being created; retry",
        quote(&req.path)
    )))
}

/// One try; `None` when the file appeared after the gate said `new_file`.
fn attempt(cx: &Context<'_>, req: &Request) -> Result<Option<Report>, Error> {
    let p = quote(&req.path);
    let tool = cx.tool;
    let resolved = paths::resolve(cx.cwd, &req.path)?;
    if let Resolved::Existing { canonical, meta } = &resolved {
        let ft = FileType::of(meta);
        if ft != FileType::File {
            return Err(Error::new(format!(
                "{p} is {}; {tool} changes regular files only",
                ft.describe()
            )));
        }
        // A binary file, before the gate: no read ever shows one, so the
        // gate's "read it first" would send the agent round in a circle.
        // (A file that cannot be read here gets the gate's answer.)
        if inspect(canonical).is_ok_and(|(head, _)| encoding::sniff(&head).is_err()) {
            return Err(binary(&req.path, tool));
        }
    }
    // The gate first: a file the agent has not seen (or no longer sees as
    // it is) gets the gate's answer, whatever else is wrong with it.
    let d = gate::decide(cx.store, cx.sid, cx.cwd, &req.path, req.whole_file())?;
    // A targeted edit of a file that changed since its view may be merged
    // with that change (checked under the lock, in `update`).
    let merging = cx.on_change == OnChange::Merge
        && !req.whole_file()
        && matches!(
            d.verdict,
            GateVerdict::Modified(FileChange::Content | FileChange::Replaced)
        )
        && d.view.as_ref().is_some_and(|v| v.kind != Kind::Processed);
    if !d.verdict.allowed() && !merging {
        let report = Report::new(
            d.canonical,
            Verdict::Gate(d.verdict),
            d.message.into_owned(),
        );
        log(cx, req, &report, None);
        return Ok(Some(report));
    }
    if let Resolved::Existing { canonical, meta } = &resolved {
        if meta.len() > MAX_FILE {
            return Err(Error::new(format!(
                "{p} is {} bytes; {tool} changes files up to 1 GiB",
                meta.len()
            )));
        }
        let (head, flags) = inspect(canonical).map_err(|e| Error::io("read", &req.path, &e))?;
        if encoding::sniff(&head).is_err() {
            return Err(binary(&req.path, tool));
        }
        if !cx.dry_run {
            writable(canonical, meta, flags).map_err(|e| Error::new(format!("{p} {e}")))?;
        }
    }
    if let Change::Write(content) = &req.change {
        if content.len() as u64 > MAX_FILE {
            return Err(Error::new(format!(
                "the new content for {p} is {} bytes; {tool} writes files up to 1 GiB",
                content.len()
            )));
        }
        if memchr::memchr(0, &content[..content.len().min(encoding::SNIFF_LEN)]).is_some() {
            return Err(Error::new(format!(
                "the new content for {p} has a NUL byte (binary data); {tool} writes text only"
            )));
        }
    }
    match d.verdict {
        GateVerdict::NewFile => create(cx, req, &d.canonical),
        _ => update(cx, req, &d.canonical).map(Some),
    }
}

/// Create a file that does not exist.
fn create(cx: &Context<'_>, req: &Request, canonical: &Path) -> Result<Option<Report>, Error> {
    let (text, replacements) = match &req.change {
        Change::Edit(list) => match edits::apply(b"", false, list, cx.voice) {
            Ok(e) => (e.text, e.replacements),
            Err(r) => return Ok(Some(refusal(cx, req, canonical, r))),
        },
        Change::Write(content) => (content.clone(), 1),
    };
    let diff = diff::unified(None, &text, &quote(&req.path));
    let hash = fingerprint::hash_bytes(&text);
    let quick = fingerprint::quick_bytes(&text);
    let verdict = Verdict::Gate(GateVerdict::NewFile);
    if cx.dry_run {
        let report = Report {
            diff: Some(diff),
            replacements,
            sha256: Some(hash),
            ..Report::new(canonical.to_path_buf(), verdict, dry_run_message(&req.path))
        };
        log(cx, req, &report, Some("dry run"));
        return Ok(Some(report));
    }
    let parent = canonical.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(parent).map_err(|e| Error::io("create the directory", parent, &e))?;
    let mut temp =
        replace::Temp::beside(canonical, 0o666).map_err(|e| temp_error(cx, req, canonical, e))?;
    temp.fill(&text).map_err(|e| write_error(req, e))?;
    if !replace::create_new(&mut temp, canonical).map_err(|e| write_error(req, e))? {
        return Ok(None);
    }
    let fp = written_fingerprint(&temp.file, hash, quick)
        .map_err(|e| Error::io("inspect", &req.path, &e))?;
    drop(temp);
    let message = format!("File created successfully at: {}", req.path.display());
    let report = Report {
        applied: true,
        diff: Some(diff),
        replacements,
        sha256: Some(hash),
        ..Report::new(canonical.to_path_buf(), verdict, message)
    };
    Ok(Some(record(
        cx,
        req,
        report,
        &fp,
        &text,
        None,
        Some("created"),
    )))
}

/// Change a file the gate let through, or one the gate found changed
/// since the view, for an edit that may be merged with that change
/// ([`merge_edit`]): the check is made on the bytes read under the lock.
/// How many times a mergeable edit locks the file again after writers
/// ahead of it replaced it.
const MERGE_RELOCKS: u32 = 256;

fn update(cx: &Context<'_>, req: &Request, canonical: &Path) -> Result<Report, Error> {
    let tool = cx.tool;
    let store = cx
        .store
        .expect("an allowed existing file has a view in a store");
    let Some(viewed) = view_record(store, cx.sid, canonical)? else {
        // The gate found a view a moment ago; it was dropped since (a
        // ctx-invalidate --forget): there is none now.
        return Ok(gate_refusal(cx, req, canonical, GateVerdict::NotRead, None));
    };
    let modified = |c| gate_refusal(cx, req, canonical, GateVerdict::Modified(c), None);
    // A change found under the lock (another writer since the gate, or
    // the gate's own `modified`) may be merged with the edit.
    let can_merge = cx.on_change == OnChange::Merge && matches!(req.change, Change::Edit(_));
    let mut tries = 0;
    let locked = loop {
        let Some(locked) = replace::lock(canonical).map_err(|e| lock_error(req, e))? else {
            return Ok(modified(FileChange::Deleted));
        };
        if locked.stat.ftype != FileType::File {
            return Ok(modified(FileChange::Type));
        }
        if !can_merge && !locked.stat.same_identity(&viewed.fingerprint.stat) {
            return Ok(modified(FileChange::Replaced));
        }
        // A writer before us may have replaced the file while we waited:
        // the file locked is no longer at the path. An edit that may be
        // merged locks the one there now, once for each writer queued
        // ahead of it (20 agents at once had 19: a bound of 16 refused the
        // last ones' edits); any other is refused. Each try means another
        // writer finished, so the bound only stops a file replaced without
        // end.
        match replace::path_change(canonical, &locked.stat)
            .map_err(|e| Error::io("inspect", &req.path, &e))?
        {
            None => break locked,
            Some(_) if can_merge && tries < MERGE_RELOCKS => tries += 1,
            Some(c) => return Ok(modified(c)),
        }
    };
    let replaced = !locked.stat.same_identity(&viewed.fingerprint.stat);
    let bytes = locked
        .read_all()
        .map_err(|e| Error::io("read", &req.path, &e))?;
    let fresh = !replaced
        && holds_viewed(&locked, &bytes, &viewed.fingerprint)
            .map_err(|e| Error::io("read", &req.path, &e))?;
    let stale = match replaced {
        true => FileChange::Replaced,
        false => FileChange::Content,
    };
    if !fresh && !can_merge {
        return Ok(modified(stale));
    }
    let (enc, text) = encoding::decode(&bytes).map_err(|_| binary(&req.path, tool))?;
    let mut merged = None;
    // Whether the agent knows all of the file once it is written: not
    // after an edit of lines it saw, which shows it only the lines changed.
    let mut knows_all = true;
    let (new_text, replacements) = match &req.change {
        Change::Edit(list) if !fresh => {
            match merge_edit(store, cx, &viewed, &text, list, &quote(&req.path)) {
                Some((e, other, lines)) => {
                    knows_all = lines.is_none();
                    merged = Some(Merged {
                        diff: other,
                        writer: writer(cx, canonical),
                        lines,
                    });
                    (e.text, e.replacements)
                }
                None => return Ok(modified(stale)),
            }
        }
        Change::Edit(list) => match edits::apply(&text, true, list, cx.voice) {
            Ok(e) => {
                knows_all = held_whole(store, &viewed, &bytes);
                (e.text, e.replacements)
            }
            Err(r) => return Ok(refusal(cx, req, canonical, r)),
        },
        // A read shows bytes that are not UTF-8 as U+FFFD: a whole text
        // written back from it would lose them, unseen. An edit keeps them.
        Change::Write(content)
            if matches!(enc, encoding::Encoding::Utf8 { .. })
                && std::str::from_utf8(&text).is_err()
                && content.as_slice() != bytes.as_slice() =>
        {
            return Err(Error::new(format!(
                "{} holds bytes that are not UTF-8, which a read shows as U+FFFD: writing it whole would replace them; change its lines with an edit instead",
                quote(&req.path)
            )));
        }
        Change::Write(content) => (content.clone(), 1),
    };
    // What the agent is shown of an edit of lines it saw: the lines changed.
    let changed = (!knows_all).then(|| {
        fsview_store::show::changed_lines(
            &String::from_utf8_lossy(&text),
            &String::from_utf8_lossy(&new_text),
        )
    });
    let diff = diff::unified(Some(&text), &new_text, &quote(&req.path));
    drop(text);
    // What the agent sees of a UTF-16 file is its text as UTF-8 (as
    // fsview-read shows it): that is the view's text.
    let utf16_text = matches!(enc, encoding::Encoding::Utf16 { .. }).then(|| new_text.clone());
    let Some(new_bytes) = encoding::encode(enc, new_text) else {
        return Err(Error::new(format!(
            "{} is stored as {}, and the new text is not valid UTF-8 to convert; send UTF-8 text",
            quote(&req.path),
            enc.as_str()
        )));
    };
    let hash = fingerprint::hash_bytes(&new_bytes);
    let quick = fingerprint::quick_bytes(&new_bytes);
    let shown: &[u8] = utf16_text.as_deref().unwrap_or(&new_bytes);
    let verdict = match merged {
        Some(_) => Verdict::Merged,
        None => Verdict::Gate(GateVerdict::Ok),
    };
    let merged_note = merged.as_ref().map(|m| merged_message(&req.path, m));
    let base = Report {
        diff: Some(diff),
        replacements,
        sha256: Some(hash),
        merged,
        ..Report::new(canonical.to_path_buf(), verdict, String::new())
    };
    if cx.dry_run {
        let report = Report {
            message: dry_run_message(&req.path),
            ..base
        };
        log(cx, req, &report, Some("dry run"));
        return Ok(report);
    }
    if new_bytes == bytes {
        // A whole-file write of what is already there: nothing to replace,
        // but the agent has now seen (written) all of it.
        let fp = Fingerprint {
            stat: locked.stat,
            taken_ns: fingerprint::now_ns(),
            hash: Some(hash),
            quick: Some(quick),
        };
        let report = Report {
            applied: true,
            message: format!(
                "The file {} already holds this content; nothing was rewritten.",
                req.path.display()
            ),
            ..base
        };
        return Ok(record(
            cx,
            req,
            report,
            &fp,
            shown,
            changed,
            Some("same content"),
        ));
    }
    let mut notices = Vec::new();
    let (file, in_place, more) =
        match replace::replace(canonical, &locked, &bytes, &new_bytes) {
            Ok(replace::Replaced::Done {
                file,
                in_place,
                notices,
            }) => (file, in_place, notices),
            Ok(replace::Replaced::Conflict { change, kept }) => {
                let mut r = gate_refusal(cx, req, canonical, GateVerdict::Modified(change), kept);
                r.notices = leftovers(req, canonical);
                return Ok(r);
            }
            Ok(replace::Replaced::OpenForWriting { writers }) => {
                return Ok(in_use(cx, req, canonical, &writers))
            }
            Err(replace::Failed::Temp(e)) => return Err(temp_error(cx, req, canonical, e)),
            Err(replace::Failed::Io(e)) => return Err(write_error(req, e)),
            Err(replace::Failed::Stuck { err, kept }) => {
                return Err(Error::new(format!(
                    "another program changed {} while it was being replaced, and putting its version back failed ({}); its version is in {}, and the file holds the edit: compare them",
                    quote(&req.path),
                    fsview_store::error::plain_io(&err),
                    quote(&kept)
                )))
            }
        };
    match &in_place {
        Some(why) => notices.push(format!(
            "{} was written in place, not replaced: {why}",
            req.path.display()
        )),
        None if locked.meta.nlink() > 1 => notices.push(format!(
            "{} had {} hard links; it was replaced by a new file, so the other names still hold the old text",
            req.path.display(),
            locked.meta.nlink()
        )),
        None => {}
    }
    notices.extend(more);
    notices.extend(leftovers(req, canonical));
    let fp =
        written_fingerprint(&file, hash, quick).map_err(|e| Error::io("inspect", &req.path, &e))?;
    drop(file);
    drop(locked);
    let detail = match &req.change {
        Change::Edit(_) if replacements == 1 => "1 replacement".to_string(),
        Change::Edit(_) => format!("{replacements} replacements"),
        Change::Write(_) => "replaced".to_string(),
    };
    let detail = match in_place {
        Some(_) => format!("{detail}, in place"),
        None => detail,
    };
    let mut message = format!(
        "The file {} has been updated successfully.",
        req.path.display()
    );
    if let Some(note) = merged_note {
        message.push(' ');
        message.push_str(&note);
    }
    let report = Report {
        applied: true,
        message,
        notices,
        ..base
    };
    Ok(record(cx, req, report, &fp, shown, changed, Some(&detail)))
}

/// The edit made to `now` (the file's decoded text under the lock) when
/// it merges with the change the file had since the agent's view
/// ([`fsview_store::merge`]): the edit applied, the other change (what
/// became of what the agent saw) as a unified diff, and for an edit of
/// lines the agent saw, which. Tried against the whole text the agent
/// holds, else each run of lines it holds, the latest first. `None` when
/// it does not merge (it touches lines within 3 of the change, lands
/// elsewhere, comes within 3 lines of the end of the lines seen, or the
/// view's text was not kept).
fn merge_edit(
    store: &Store,
    cx: &Context<'_>,
    viewed: &FileRecord,
    now: &[u8],
    list: &[Edit],
    name: &str,
) -> Option<(edits::Edited, String, Option<SeenLines>)> {
    use fsview_store::merge::{self, Seen};
    let mut views = store.views(viewed.id).ok()?;
    views.retain(|v| v.held() && v.kind != Kind::Processed && v.text_hash.is_some());
    views.sort_by_key(|v| (v.kind != Kind::Full, std::cmp::Reverse(v.viewed_ns)));
    let theirs = std::str::from_utf8(now).ok()?;
    let apply = |t: &str| {
        edits::apply(t.as_bytes(), true, list, cx.voice)
            .ok()
            .and_then(|e| String::from_utf8(e.text).ok())
    };
    for v in &views {
        let Some(kept) = v.text_hash.and_then(|h| store.text(&h).ok().flatten()) else {
            continue;
        };
        let Ok(text) = std::str::from_utf8(&kept) else {
            continue;
        };
        // The text as read starts with the file's UTF-8 BOM, which `now`
        // (decoded) no longer has: without it both are the same text.
        let text = match (v.offset <= 1, text.strip_prefix('\u{feff}')) {
            (true, Some(t)) if !theirs.starts_with('\u{feff}') => t,
            _ => text,
        };
        let seen = match v.kind {
            Kind::Full => Seen::Whole(text),
            _ => Seen::Lines {
                text,
                first: v.offset as usize,
                total: v.total_lines.map(|t| t as usize),
            },
        };
        let Ok(m) = merge::merge_edit(seen, theirs, apply) else {
            continue;
        };
        let result = edits::apply(now, true, list, cx.voice).ok()?;
        let other = diff::unified(Some(m.base.as_bytes()), now, name);
        let lines = m.now.map(|(first, count)| SeenLines {
            seen: (v.offset, v.offset + v.lines.max(1) - 1),
            now: (first as u64, (first + count.max(1) - 1) as u64),
        });
        return Some((result, other, lines));
    }
    None
}

/// Whether the agent holds a `full` view of the file it edits: then it
/// knows all of it once edited.
/// Whether the agent holds all of the file, `bytes` as it viewed them: a
/// full view, or parts read that show every line.
fn held_whole(store: &Store, viewed: &FileRecord, bytes: &[u8]) -> bool {
    store.views(viewed.id).is_ok_and(|vs| {
        vs.iter().any(|v| v.kind == Kind::Full && v.held())
            || fsview_store::gate::pieces_cover_bytes(bytes, vs.iter())
    })
}

/// What the model is told with a merged edit's result.
fn merged_message(path: &Path, m: &Merged) -> String {
    let by = match &m.writer {
        Some(w) => format!("by {w}"),
        None => "by the user or another program".to_string(),
    };
    let Some(l) = m.lines else {
        return format!(
            "{} had been changed since you read it ({by}); that change is kept and your edit was made beside it. You now hold the file with both; the other change:\n\n{}",
            path.display(),
            m.diff
        );
    };
    let (seen, now) = (span(l.seen), span(l.now));
    match m.diff.is_empty() {
        true => format!(
            "{} had been changed since you read lines {seen} ({by}), outside those lines: nothing in them changed, and they are lines {now} now. That change is kept and your edit was made beside it.",
            path.display()
        ),
        false => format!(
            "{} had been changed since you read lines {seen} ({by}); that change is kept and your edit was made beside it. Those lines are {now} now, and you hold them with both; what changed in them:\n\n{}",
            path.display(),
            m.diff
        ),
    }
}

/// Lines `first-last`, or one line.
fn span((first, last): (u64, u64)) -> String {
    match first == last {
        true => first.to_string(),
        false => format!("{first}-{last}"),
    }
}

/// Notices naming what an interrupted fsview write left beside the file.
fn leftovers(req: &Request, canonical: &Path) -> Vec<String> {
    replace::leftovers(canonical)
        .iter()
        .map(|l| {
            format!(
                "{} was left by an fsview write of {} that did not finish: it holds the text that write was putting in place, or the version it had swapped out (maybe another program's); compare it with the file, then delete it",
                quote(l),
                quote(&req.path)
            )
        })
        .collect()
}

/// The session's record of the file the gate allowed: by its name, else
/// (a hard link, or a name no longer canonical) by its inode.
fn view_record(store: &Store, sid: &str, canonical: &Path) -> Result<Option<FileRecord>, Error> {
    if let Some(r) = store.file_by_path(sid, canonical)? {
        return Ok(Some(r));
    }
    match std::fs::symlink_metadata(canonical) {
        Ok(m) => store.file_by_inode(sid, &Stat::of(&m)),
        Err(_) => Ok(None),
    }
}

/// Whether `bytes`, read from the locked file, are what the view saw.
fn holds_viewed(locked: &replace::Locked, bytes: &[u8], fp: &Fingerprint) -> io::Result<bool> {
    if let Some(want) = fp.hash {
        return Ok(fingerprint::hash_bytes(bytes) == want);
    }
    // Fingerprinted by stat alone (a range read of a huge file): that stat
    // proves the content only when it is old enough not to hide a write,
    // and only if it did not move while we read.
    let after = Stat::of(&locked.file.metadata()?);
    Ok(!fp.is_racy() && locked.stat.same_times(&fp.stat) && after.same_times(&locked.stat))
}

/// The fingerprint of the file just written: its stat now, the hash of
/// what was written. Another writer right after us moves the stat within
/// the racy window, so the next check hashes and catches it.
fn written_fingerprint(file: &std::fs::File, hash: Hash, quick: Quick) -> io::Result<Fingerprint> {
    let taken_ns = fingerprint::now_ns();
    let stat = Stat::of(&file.metadata()?);
    Ok(Fingerprint {
        stat,
        taken_ns,
        hash: Some(hash),
        quick: Some(quick),
    })
}

/// Record the written text as a full view (source write) with the event,
/// in one transaction.
#[allow(clippy::too_many_arguments)]
fn record(
    cx: &Context<'_>,
    req: &Request,
    mut report: Report,
    fp: &Fingerprint,
    written: &[u8],
    changed: Option<(u64, u64)>,
    detail: Option<&str>,
) -> Report {
    let Some(store) = cx.store else {
        return report;
    };
    let total = fsview_store::show::count_lines(written);
    // The whole text written, or (an edit of lines the agent saw, not the
    // whole file) the lines it changed: what the result shows of them.
    let (kind, offset, lines, shown) = match changed {
        None => (Kind::Full, 1, total, written),
        Some((o, n)) => (
            Kind::Range,
            o,
            n,
            fsview_store::show::slice_lines(written, o, n),
        ),
    };
    // A write of the bytes already there changed nothing: the agent has
    // seen them, it did not make them (no one is told it wrote them).
    let source = match detail {
        Some("same content") => Source::Read,
        _ => Source::Write,
    };
    let view = NewView {
        path: &report.canonical,
        fingerprint: fp,
        kind,
        source,
        offset,
        lines,
        total_lines: Some(total),
        shown,
        keep_text: shown.len() <= KEEP_TEXT,
        origin: None,
        conversation: None,
    };
    let canonical = report.canonical.clone();
    let verdict = report.verdict.as_str();
    if let Err(e) = store.record_logged(cx.sid, &view, |_| {
        Event::new(cx.tool, req.action())
            .path(&canonical)
            .verdict(verdict)
            .detail(detail)
    }) {
        report.unrecorded = Some(Error::new(format!(
            "{} was written, but its view was not recorded ({e}); read it again before the next edit",
            quote(&req.path)
        )));
    }
    report
}

/// A refusal by the gate's words found under the lock; `kept`: another
/// program's version kept as a conflict copy on the way.
fn gate_refusal(
    cx: &Context<'_>,
    req: &Request,
    canonical: &Path,
    v: GateVerdict,
    kept: Option<PathBuf>,
) -> Report {
    let mut message = match v {
        GateVerdict::Modified(fsview_store::fingerprint::Change::Deleted) => {
            gate::MSG_DELETED.to_string()
        }
        GateVerdict::Modified(c) => format!(
            "{}. {}",
            gate::modified_since(c, writer(cx, canonical).as_deref()),
            gate::READ_AGAIN
        ),
        _ => gate::MSG_NOT_READ.to_string(),
    };
    let mut detail = None;
    if let Some(k) = &kept {
        message.push_str(&format!(
            " Another program saved the file twice while it was being replaced: one version is in the file, the other was kept in {}; compare them.",
            k.display()
        ));
        detail = Some(format!(
            "{}; conflict copy {}",
            v.change().map(|c| c.as_str()).unwrap_or_default(),
            k.display()
        ));
    }
    let report = Report {
        conflict: kept,
        ..Report::new(canonical.to_path_buf(), Verdict::Gate(v), message)
    };
    log(cx, req, &report, detail.as_deref());
    report
}

/// Who changed `canonical` since the view, when fsview knows
/// ([`fsview_store::writers`]).
fn writer(cx: &Context<'_>, canonical: &Path) -> Option<String> {
    let store = cx.store?;
    let (hash, _) = fingerprint::hash_path(canonical).ok()?;
    let w = store.writer(cx.sid, canonical, &hash).ok()??;
    Some(w.describe(cx.sid))
}

/// Refused: another program has the file open for writing.
fn in_use(cx: &Context<'_>, req: &Request, canonical: &Path, writers: &[String]) -> Report {
    let who = match writers {
        [] => "another program".to_string(),
        [one] => format!("another program ({one})"),
        more => format!("other programs ({})", more.join("; ")),
    };
    let message = format!(
        "File is open for writing in {who}, which would go on writing to the old file if it were replaced. Wait until it closes the file, read it again, then change it."
    );
    let report = Report::new(canonical.to_path_buf(), Verdict::InUse, message);
    log(cx, req, &report, None);
    report
}

fn refusal(cx: &Context<'_>, req: &Request, canonical: &Path, r: edits::Refused) -> Report {
    let report = Report::new(
        canonical.to_path_buf(),
        Verdict::Refused(r.refusal),
        r.message,
    );
    log(cx, req, &report, None);
    report
}

/// Log a request that wrote nothing. The answer is given either way: a log
/// that cannot be written changes nothing and says nothing (as for
/// fsview-check-edit).
fn log(cx: &Context<'_>, req: &Request, report: &Report, detail: Option<&str>) {
    let Some(store) = cx.store.filter(|_| !cx.unknown_session) else {
        return;
    };
    let change = report.verdict.change().map(|c| c.as_str());
    let e = Event::new(cx.tool, req.action())
        .path(&report.canonical)
        .verdict(report.verdict.as_str())
        .detail(detail.or(change));
    let _ = store.log(cx.sid, &[e]);
}

fn dry_run_message(path: &Path) -> String {
    format!(
        "Dry run: the change to {} is allowed and was not written.",
        path.display()
    )
}

/// The first bytes of a file, enough to tell text from binary, and its
/// inode flags (`chattr`), 0 where the filesystem has none.
fn inspect(path: &Path) -> io::Result<(Vec<u8>, u32)> {
    use std::io::Read;
    use std::os::unix::io::AsRawFd;
    let f = fingerprint::open_nonblocking(path)?;
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one long into `flags`.
    if unsafe { libc::ioctl(f.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut flags) } != 0 {
        flags = 0;
    }
    let mut head = Vec::with_capacity(encoding::SNIFF_LEN);
    f.take(encoding::SNIFF_LEN as u64).read_to_end(&mut head)?;
    Ok((head, flags as u32))
}

fn binary(path: &Path, tool: &str) -> Error {
    Error::new(format!(
        "{} looks binary (a NUL byte in its first 8 KiB, or broken UTF-16); {tool} changes text files only",
        quote(path)
    ))
}

fn lock_error(req: &Request, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::TimedOut {
        return Error::new(format!(
            "{}: another fsview writer held it for over a minute; retry",
            quote(&req.path)
        ));
    }
    Error::io("open", &req.path, &e)
}

fn write_error(req: &Request, e: io::Error) -> Error {
    Error::io("write", &req.path, &e)
}

/// The temporary file beside the target could not be made.
fn temp_error(cx: &Context<'_>, req: &Request, canonical: &Path, e: io::Error) -> Error {
    if e.kind() != io::ErrorKind::PermissionDenied {
        return write_error(req, e);
    }
    let dir = canonical.parent().unwrap_or(Path::new("/"));
    Error::new(format!(
        "cannot write {}: its directory {} is not writable ({} writes the new text to a file beside it and renames that into place); make the directory writable",
        quote(&req.path),
        quote(dir),
        cx.tool
    ))
}

/// Refuse a file that must not be changed, for everyone, root included:
/// one whose mode lets no one write it (a user's "leave this alone", as
/// `chmod a-w` says it), and one marked immutable or append-only
/// (`chattr +i`, `+a`). Otherwise the kernel's own check decides (root may
/// change other users' files, as with any tool).
fn writable(path: &Path, meta: &std::fs::Metadata, flags: u32) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    const IMMUTABLE: u32 = 0x10; // FS_IMMUTABLE_FL
    const APPEND: u32 = 0x20; // FS_APPEND_FL
    let mode = meta.mode() & 0o7777;
    if flags & IMMUTABLE != 0 {
        return Err("is immutable (chattr +i): no one may change it, root included; remove the attribute (chattr -i, as root) to change it".to_string());
    }
    if flags & APPEND != 0 {
        return Err("is append-only (chattr +a): it may only grow, and a change rewrites it; remove the attribute (chattr -a, as root) to change it".to_string());
    }
    if mode & 0o222 == 0 {
        return Err(format!(
            "is read-only (mode {mode:04o}): no one may write it, root included; make it writable (chmod u+w) to change it"
        ));
    }
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: a NUL-terminated path that lives across the call.
    let rc = unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => Err(format!(
            "is not writable for you (mode {mode:04o}, owner uid {}); ask its owner, or run as them",
            meta.uid()
        )),
        Some(libc::EROFS) => {
            Err("is on a read-only filesystem; it cannot be changed there".to_string())
        }
        _ => Ok(()),
    }
}
