//! What fsview does with each common event, for every agent.
//!
//! - [`Event::Shown`]: record the view the tool reports, held to the shown
//!   text ([`hold`](crate::hold)).
//! - [`Event::AboutToChange`]: the edit gate, as `fsview-check-edit` runs it.
//! - [`Event::Changed`]: record what the agent now believes the file holds,
//!   held against the disk: a `full` view when the agent wrote all of it or
//!   had seen exactly all of what it changed, else a `range` over the lines
//!   it changed (it knows those, not the lines it never read).
//! - [`Event::InstructionsFor`]: run `ctx-build --for PATH`, which records
//!   the nested instruction files and matching rules as views; the agent
//!   has them already, so nothing is sent.
//! - [`Event::SessionStart`]: reset on a clear, run `ctx-build` (which
//!   records the instruction files as views), and hand back as context only
//!   the instruction files the agent does not load itself.
//! - [`Event::Prompt`]: the files that changed since the agent saw them,
//!   each told once ([`remind`](crate::remind)).
//! - [`Event::Edited`]: a targeted change reported as what it replaced:
//!   applied to the agent's last view of the file ([`edited`](crate::edited)),
//!   recorded as [`Event::Changed`] would be; nothing when it does not apply.
//!
//! The core knows no agent's name: what differs between agents is in their
//! modules, behind [`Agent`](crate::Agent).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fsview_store::changes::Limits;
use fsview_store::error::{plain_io, quote};
use fsview_store::events::Event as LogEvent;
use fsview_store::paths::{self, Resolved};
use fsview_store::{fingerprint, gate, location, Kind, Source, Store};
use serde_json::Value;

use crate::event::{Answer, Changed, Edited, Event, Extent, Shown, ShownText, Stage, Start, Who};
use crate::hold::{self, Held};
use crate::{remind, Agent, Problem};

/// The name fsview-hook's events carry in the session's log.
pub const TOOL: &str = "fsview-hook";

/// How fsview answers, whatever the agent.
#[derive(Clone, Debug)]
pub struct Options {
    /// The session file (absolute), instead of the default for the agent's
    /// working directory.
    pub session: Option<PathBuf>,
    /// The fsview session to use instead of the agent's conversation id.
    pub sid: Option<String>,
    /// Approve the changes the gate lets through, instead of no opinion.
    pub allow: bool,
    /// Caps on the diffs of a reminder.
    pub limits: Limits,
    /// Other instruction file names `ctx-build` reads (`--also`).
    pub also: Vec<String>,
    /// Where `ctx-build` and `ctx-invalidate` are installed.
    pub bin_dir: PathBuf,
}

/// The session an event belongs to.
struct Session<'a> {
    file: PathBuf,
    sid: String,
    who: &'a Who,
}

impl Session<'_> {
    fn open(&self) -> Result<Store, Problem> {
        Ok(Store::open(&self.file)?)
    }

    fn open_existing(&self) -> Result<Option<Store>, Problem> {
        Ok(Store::open_existing(&self.file)?)
    }

    fn cwd(&self) -> &Path {
        &self.who.cwd
    }
}

/// Answer one event.
pub fn handle(
    agent: &dyn Agent,
    opts: &Options,
    who: &Who,
    event: &Event,
) -> Result<Answer, Problem> {
    if *event == Event::Ignored {
        return Ok(Answer::Nothing);
    }
    let session = session(opts, who)?;
    match event {
        Event::Shown(s) => shown(&session, s).map(|()| Answer::Nothing),
        Event::AboutToChange { path, whole } => about_to_change(opts, &session, path, *whole),
        Event::Changed(c) => changed(&session, c).map(|()| Answer::Nothing),
        Event::InstructionsFor(path) => {
            instructions_for(opts, &session, path).map(|()| Answer::Nothing)
        }
        Event::SessionStart(start) => session_start(agent, opts, &session, *start),
        Event::Prompt => prompt(agent, opts, &session),
        Event::Edited(e) => edited(&session, e).map(|()| Answer::Nothing),
        Event::Ignored => Ok(Answer::Nothing),
    }
}

fn session<'a>(opts: &Options, who: &'a Who) -> Result<Session<'a>, Problem> {
    let sid = match &opts.sid {
        Some(s) => s.clone(),
        None => who.session.clone(),
    };
    if sid.is_empty() || sid.len() > 200 || sid.chars().any(char::is_control) {
        return Err(Problem::new(format!(
            "session id {sid:?} cannot name an fsview session (use 1 to 200 printable characters); pass --sid ID"
        )));
    }
    let file = location::session_path(opts.session.as_deref(), &who.cwd)?;
    Ok(Session { file, sid, who })
}

/// Resolve `path` to an existing regular file's canonical path.
fn existing(cwd: &Path, path: &Path) -> Result<PathBuf, Problem> {
    match paths::resolve(cwd, path)? {
        Resolved::Existing { canonical, .. } => Ok(canonical),
        Resolved::Missing { .. } => Err(Problem::new(format!(
            "{}: no such file any more, so nothing was recorded",
            quote(path)
        ))),
    }
}

fn record(
    s: &Session<'_>,
    store: &Store,
    held: &Held,
    source: Source,
    action: &str,
) -> Result<(), Problem> {
    let verdict = match (held.moved, source) {
        (false, _) => None,
        (true, Source::Read) => Some("changed"),
        (true, _) => Some("rewritten"),
    };
    store.record_logged(&s.sid, &held.view(source), |_| {
        let e = LogEvent::new(TOOL, action)
            .path(&held.canonical)
            .detail(Some(held.kind.as_str()));
        match verdict {
            Some(v) => e.verdict(v),
            None => e,
        }
    })?;
    Ok(())
}

fn shown(s: &Session<'_>, shown: &Shown) -> Result<(), Problem> {
    let canonical = existing(s.cwd(), &shown.path)?;
    let Some(held) = hold::shown(&canonical, shown)? else {
        return Ok(());
    };
    let store = s.open()?;
    record(s, &store, &held, Source::Read, "read")
}

fn changed(s: &Session<'_>, c: &Changed) -> Result<(), Problem> {
    let canonical = existing(s.cwd(), &c.path)?;
    let store = s.open()?;
    let knew_all = match &c.before {
        Some(before) => knew_all(&store, &s.sid, &canonical, before)?,
        None => false,
    };
    let held = hold::changed(&canonical, c, knew_all)?;
    record(s, &store, &held, Source::Write, "written")
}

/// Whether the agent had a `full` view of exactly `before`: then after a
/// targeted change it still knows the whole file.
fn knew_all(store: &Store, sid: &str, canonical: &Path, before: &str) -> Result<bool, Problem> {
    if before.is_empty() {
        return Ok(true);
    }
    let Some(record) = store.file_by_path(sid, canonical)? else {
        return Ok(false);
    };
    let views = store.views(record.id)?;
    let Some(full) = views.iter().find(|v| v.kind == Kind::Full) else {
        return Ok(false);
    };
    if record.fingerprint.hash == Some(fingerprint::hash_bytes(before.as_bytes())) {
        return Ok(true);
    }
    // The file's bytes may differ from the tool's text by how it decodes
    // them (CRLF, a byte-order mark): compare the kept text.
    let Some(kept) = full
        .text_hash
        .map(|h| store.text(&h))
        .transpose()?
        .flatten()
    else {
        return Ok(false);
    };
    Ok(hold::decoded(&kept, true).as_ref() == before.as_bytes())
}

fn about_to_change(
    opts: &Options,
    s: &Session<'_>,
    path: &Path,
    whole: bool,
) -> Result<Answer, Problem> {
    let store = s.open_existing()?;
    let d = gate::decide(store.as_ref(), &s.sid, s.cwd(), path, whole)?;
    if let Some(store) = &store {
        // As fsview-check-edit logs its checks: a log that cannot be
        // written changes no verdict.
        let detail = if whole { "write" } else { "edit" };
        let _ = store.log(
            &s.sid,
            &[LogEvent::new(TOOL, "check")
                .path(&d.canonical)
                .verdict(d.verdict.as_str())
                .detail(Some(detail))],
        );
    }
    Ok(match (d.verdict.allowed(), opts.allow) {
        (true, true) => Answer::Allow(d.message),
        (true, false) => Answer::Nothing,
        (false, _) => Answer::Deny(d.message),
    })
}

/// An instruction file `ctx-build` injected, from its `--json` output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstructionFile {
    pub path: PathBuf,
    pub label: Option<String>,
    pub text: String,
    pub imported_by: Option<PathBuf>,
}

fn session_start(
    agent: &dyn Agent,
    opts: &Options,
    s: &Session<'_>,
    start: Start,
) -> Result<Answer, Problem> {
    if start == Start::Clear {
        // The conversation starts over: it has read nothing any more.
        let a: Vec<OsString> = vec![
            "--reset".into(),
            "--hook".into(),
            "--reason".into(),
            "SessionStart (clear)".into(),
            "--session".into(),
            s.file.clone().into_os_string(),
            "--sid".into(),
            s.sid.clone().into(),
        ];
        sibling(opts, "ctx-invalidate", &a, s.cwd())?;
    }
    // Records the injected instruction files as views (a cache hit records
    // nothing new and returns the same bytes).
    let out = sibling(opts, "ctx-build", &ctx_args(opts, s), s.cwd())?;
    // A resumed conversation already holds what its start was given, and
    // the agent adds a start's context again on resume.
    if start == Start::Resume {
        return Ok(Answer::Nothing);
    }
    let files = instruction_files(&out)?;
    let send = not_loaded_by(agent, opts, &files);
    if send.is_empty() {
        return Ok(Answer::Nothing);
    }
    let blocks: Vec<String> = send
        .iter()
        .map(|f| {
            let label = f
                .label
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default();
            format!("Contents of {}{label}:\n\n{}", f.path.display(), f.text)
        })
        .collect();
    Ok(Answer::Context(format!(
        "Instruction files read by fsview (--also {}):\n\n{}",
        opts.also.join(", "),
        blocks.join("\n\n")
    )))
}

fn instructions_for(opts: &Options, s: &Session<'_>, path: &Path) -> Result<(), Problem> {
    let mut a = ctx_args(opts, s);
    a.push("--for".into());
    a.push(path.into());
    sibling(opts, "ctx-build", &a, s.cwd())?;
    Ok(())
}

/// The arguments every `ctx-build` run of the hook takes.
fn ctx_args(opts: &Options, s: &Session<'_>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec![
        "--session".into(),
        s.file.clone().into_os_string(),
        "--sid".into(),
        s.sid.clone().into(),
        "--json".into(),
        "--quiet".into(),
    ];
    for name in &opts.also {
        a.push("--also".into());
        a.push(name.into());
    }
    a
}

/// The user-part files of `ctx-build --json` output.
fn instruction_files(json: &str) -> Result<Vec<InstructionFile>, Problem> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| Problem::new(format!("ctx-build --json gave no JSON ({e})")))?;
    let files = v
        .get("files")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Ok(files
        .iter()
        .filter(|f| f.get("part").and_then(Value::as_str) == Some("user"))
        .filter_map(|f| {
            Some(InstructionFile {
                path: PathBuf::from(f.get("path")?.as_str()?),
                label: f.get("label").and_then(Value::as_str).map(String::from),
                text: f.get("text")?.as_str()?.to_string(),
                imported_by: f
                    .get("imported_by")
                    .and_then(Value::as_str)
                    .map(PathBuf::from),
            })
        })
        .collect())
}

/// The files found only by `--also` names the agent does not load itself,
/// with what they import, in `ctx-build`'s order.
fn not_loaded_by<'f>(
    agent: &dyn Agent,
    opts: &Options,
    files: &'f [InstructionFile],
) -> Vec<&'f InstructionFile> {
    let mut send: Vec<&InstructionFile> = Vec::new();
    for f in files {
        let wanted = match &f.imported_by {
            Some(parent) => send.iter().any(|s| &s.path == parent),
            None => f
                .path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| opts.also.iter().any(|a| a == n) && !agent.loads_itself(n)),
        };
        if wanted {
            send.push(f);
        }
    }
    send
}

/// Run another fsview binary installed next to this one, in `cwd`, and
/// return its stdout. ctx-build has no library entry point of its own: it
/// is run exactly as a shell would run it.
fn sibling(opts: &Options, name: &str, args: &[OsString], cwd: &Path) -> Result<String, Problem> {
    let path = opts.bin_dir.join(name);
    let out = Command::new(&path)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Problem::new(format!(
                "cannot run {}: {}; install fsview-hook next to the other fsview binaries",
                quote(&path),
                plain_io(&e)
            ))
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().next().unwrap_or("").trim();
        return Err(Problem::new(if first.is_empty() {
            format!("{name} failed ({})", out.status)
        } else {
            first.to_string()
        }));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn prompt(agent: &dyn Agent, opts: &Options, s: &Session<'_>) -> Result<Answer, Problem> {
    let Some(store) = s.open_existing()? else {
        return Ok(Answer::Nothing);
    };
    let news = remind::news(&store, &s.sid, s.cwd(), opts.limits)?;
    if news.is_empty() {
        return Ok(Answer::Nothing);
    }
    // The same lines as `fsview-check-edit --changed`, under one sentence.
    let mut text = String::from("These files changed since you last saw them:\n\n");
    for c in &news {
        let shown = paths::display(s.cwd(), &c.record.path);
        let note = c
            .note
            .as_deref()
            .map(|n| format!(": {n}"))
            .unwrap_or_default();
        text.push_str(&format!(
            "{}: modified ({}){note}\n",
            fsview_store::error::quote(&shown),
            c.change.as_str()
        ));
        if let Some(d) = &c.diff {
            match agent.alters(Stage::Prompt, d) {
                None => text.push_str(d),
                Some(why) => text.push_str(&format!(
                    "(its diff is left out: {why}; read the file to see the change)\n"
                )),
            }
        }
    }
    Ok(Answer::Context(text))
}

/// A targeted change reported as what it replaced: the agent's last view
/// of the file with the change applied, recorded as a change it made (a
/// `full` view when that view was the whole file, else a `range` over the
/// view's lines), held against the disk. Nothing is recorded when no view
/// with kept text takes the change exactly.
fn edited(s: &Session<'_>, e: &Edited) -> Result<(), Problem> {
    let canonical = existing(s.cwd(), &e.path)?;
    let Some(store) = s.open_existing()? else {
        return Ok(());
    };
    let Some(file) = store.file_by_path(&s.sid, &canonical)? else {
        return Ok(());
    };
    let mut views = store.views(file.id)?;
    // The whole file first: then the agent knows all of it afterwards.
    views.sort_by_key(|v| v.kind != Kind::Full);
    for v in views.iter().filter(|v| v.kind != Kind::Processed) {
        let Some(kept) = v.text_hash.map(|h| store.text(&h)).transpose()?.flatten() else {
            continue;
        };
        let Ok(kept) = String::from_utf8(kept) else {
            continue;
        };
        let Some(after) = crate::edited::apply(&kept, v.offset, &e.change) else {
            continue;
        };
        let held = if v.kind == Kind::Full {
            let c = Changed {
                path: canonical.clone(),
                text: after,
                before: Some(kept),
                whole: false,
            };
            hold::changed(&canonical, &c, true)?
        } else {
            let shown = Shown {
                path: canonical.clone(),
                text: ShownText::Lines(after),
                offset: v.offset,
                extent: Extent::Range,
            };
            match hold::shown(&canonical, &shown)? {
                Some(h) => h,
                None => return Ok(()),
            }
        };
        return record(s, &store, &held, Source::Write, "written");
    }
    Ok(())
}
