//! fsview-session: look into a session file and move whole sessions.
//!
//! `list`, `show` and `events` are read-only: they never create a session
//! file (a missing one has no sessions) and never write to one. A command
//! that names one session (`show`, `events`, `fork --from`, `drop`,
//! `export`) refuses a session that is not there, naming the nearest ids
//! the file holds: a mistyped --sid is never an empty session. `fork`,
//! `drop` and `import` are each one transaction: a session is copied,
//! deleted or imported whole, or not at all. `export` writes one
//! self-contained, versioned JSON document (views, fingerprints, kept
//! texts, what reminders told, context caches, loaded instruction files,
//! the log; see `fsview_store::export`) that `import` reads back, here or
//! in another clone on another machine, refusing a malformed document
//! before it touches the session file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{CommandFactory, Parser, Subcommand};
use serde_json::{Map, Value};
use unicode_width::UnicodeWidthStr;

use fsview_store::error::{escape_bytes, quote_id};
use fsview_store::export as export_doc;
use fsview_store::fingerprint::{self, Freshness};
use fsview_store::inspect::{Counts, EventRecord, Summary};
use fsview_store::store::{FileRecord, ViewRecord};
use fsview_store::view::{Kind, Source};
use fsview_store::{paths, Error, Store};

use crate::common::{self, Out, Outcome, SessionArgs, Stop, MAIN_AGENT};
use crate::json;

const TOOL: &str = "fsview-session";

const EXAMPLES: &str = "\
Examples:
  fsview-session list                           sessions in the file, with counts and ages
  fsview-session show                           what the agent saw: every view of the session, or
                                                without one named \"default\", of the latest conversation
  fsview-session show --text src/main.rs        the text it was shown of that file, numbered as it saw it
  fsview-session show --sid agent-7             every view: path, kind, fresh or not, when, source
  fsview-session show --json | jq 'select(.fresh | not)'
                                                the views that are no longer fresh
  fsview-session events --limit 20              the latest 20 events: reads, checks, builds
  fsview-session fork --from default --sid sub-1
                                                a subagent starts with its parent's views
  fsview-session show --sid S                   a conversation's views, each marked with its agent
  fsview-session show --sid S --agent A         one subagent's views (the same: --sid S/A)
  fsview-session events --sid S --agent main    the main thread's events only
  fsview-session drop --sid sub-1               delete a session and everything of it
  fsview-session export --sid agent-7 > s.json  one self-contained JSON document
  fsview-session import < s.json                import it under its own id (--sid NEW to rename),
                                                in this clone or another one
  fsview-session gc                             drop texts no view needs, truncate the WAL
  fsview-session path                           the session file the tools use here";

/// Inspect the sessions of a session file, and copy, drop, export, import
/// or tidy them.
///
/// A session file holds any number of sessions (one per agent conversation
/// or pipeline run, named by --sid). Inside a conversation each agent has
/// its own views: the main thread's are the session S, subagent A's the
/// session S/A, whose parent is S (--sid S --agent A names it too; --agent
/// main is the main thread). `list` shows each conversation's agents right
/// after it, with an AGENT column (main, or the agent's type) when there are
/// any; `show` and `events` for a conversation include its agents' views and
/// events, each marked with its agent, unless --agent picks one; `drop`
/// drops a conversation with its agents. Without --sid (or FSVIEW_SID), when
/// the file has no session "default" (the hooks name each session by the
/// agent's conversation id), `show` and `events` look into the latest
/// conversation, the one most recently active among those that viewed a
/// file of this project (else among all), and say which on stderr.
/// `list`, `show` and `events` only read:
/// a missing session file has no sessions and is not created. `show`,
/// `events`, `fork --from`, `drop` and `export` need the session they name
/// and, when it is not there, say which ids are nearest. `fork`,
/// `drop` and `import` each change the file in one transaction. `export`
/// writes one JSON document (see fsview-json(7)); `import` reads it back,
/// refusing a malformed document with one error line and importing nothing.
/// Sessions travel: an export names the files of the git work tree relative
/// to its top, and an import in another clone, at any path on any machine,
/// maps them onto that clone, where each view gates by content (the same
/// bytes are ok, other bytes modified).
///
/// Their own options: `list --ids`; `show [FILE...] [--text]`; `events
/// --limit N`; `fork --from ID [--replace]`
/// (into --sid); `export [--root DIR]`; `import [--replace] [--root DIR]`
/// (into the document's session, or the --sid given on the command line;
/// relative paths onto DIR, default the top of the current work tree).
/// `--sid` and the other shared options
/// may come before or after the subcommand.
#[derive(Parser, Debug)]
#[command(
    name = TOOL,
    version,
    after_help = EXAMPLES,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Cmd,

    #[command(flatten)]
    pub common: SessionArgs,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// List the sessions in the session file, with counts and ages
    List {
        /// Print only the session ids, one a line (conversations and their
        /// agents' S/A), nothing when there is no session file
        #[arg(long)]
        ids: bool,
    },
    /// Show every view of the session (--sid) and of its agents (or of the
    /// one --agent names): path, kind, fresh or not, whether the
    /// conversation still holds it (no after a compaction or a rewind that
    /// dropped it), when, source and lines
    Show {
        /// Only the views of these files (exit 1 when one has none)
        #[arg(value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print the text each view showed the agent, numbered as it saw
        /// it, under a line that names the file, the kind of view, the
        /// lines, when, the source and whether the file is still that text
        #[arg(long)]
        text: bool,
    },
    /// Show the event log of the session (--sid) and of its agents (or of
    /// the one --agent names), oldest first: reads, checks, builds,
    /// invalidations, with their verdicts and reasons
    Events {
        /// Show only the latest N events
        #[arg(long, value_name = "N", value_parser = crate::usage::at_least_one)]
        limit: Option<u64>,
    },
    /// Copy session --from into --sid: its views (kept texts are shared),
    /// its loaded instruction files and its memoized context
    Fork {
        /// The session to copy
        #[arg(long, value_name = "ID")]
        from: String,
        /// Overwrite --sid when it exists
        #[arg(long)]
        replace: bool,
    },
    /// Delete the session --sid names (on the command line or in
    /// FSVIEW_SID, never the default by omission) and everything of it,
    /// its agents' sessions included; its kept texts stay until gc
    Drop,
    /// Write the session (--sid) to stdout as one self-contained JSON
    /// document; files inside the git work tree are named relative to its
    /// top, so the session can be imported into another clone
    Export {
        /// Name the files below DIR relative to it [default: the top of the
        /// git work tree of the current directory]
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Import a session exported by `export` from stdin, under its own id
    /// or the --sid given on the command line; files the export names
    /// relative to its work tree are mapped onto this one
    Import {
        /// Overwrite the session when the file already has one of that id
        #[arg(long)]
        replace: bool,
        /// Map the export's relative paths onto DIR [default: the top of the
        /// git work tree of the current directory]
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
    },
    /// Print the path of the session file the tools use here (--session,
    /// FSVIEW_SESSION, else the git directory's, else the user's state
    /// directory's), whether or not it exists yet
    Path,
    /// Drop kept texts no view refers to, then checkpoint and truncate the
    /// write-ahead log (which otherwise keeps up to 256 KiB of pages
    /// between calls, for the next call to write over)
    Gc,
}

pub fn command() -> clap::Command {
    Args::command()
}

pub fn main() -> u8 {
    let (args, matches): (Args, _) = common::parse_with_matches(command);
    // `import` goes into the document's own session unless --sid is on the
    // command line: a FSVIEW_SID in the environment must not rename it
    // silently.
    let source = |m: &clap::ArgMatches| {
        m.subcommand()
            .and_then(|(_, m)| m.value_source("sid"))
            .or(m.value_source("sid"))
    };
    let sid_given = source(&matches) == Some(ValueSource::CommandLine);
    // `drop` deletes: the session it deletes is named, on the command line
    // or in FSVIEW_SID, never the default by omission.
    let sid_named = sid_given || source(&matches) == Some(ValueSource::EnvVariable);
    if matches!(args.command, Cmd::Drop) && !sid_named {
        return common::finish(
            TOOL,
            Err(Error::new(
                "drop deletes a session and everything of it: name it with --sid ID (--sid default for the default session); fsview-session list shows them",
            )
            .into()),
        );
    }
    common::finish(TOOL, run(&args, sid_given, sid_named))
}

fn run(args: &Args, sid_given: bool, sid_named: bool) -> Result<Outcome, Stop> {
    let cwd = common::current_dir()?;
    // Canonical paths are shown relative to the canonical cwd.
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let mut out = Out::new(TOOL, args.common.quiet);
    let mut outcome = Outcome::Ok;
    match &args.command {
        Cmd::List { ids } => list(args, &cwd, *ids, sid_named, &mut out),
        Cmd::Show { files, text } => {
            show(args, &cwd, sid_named, files, *text, &mut out).map(|o| outcome = o)
        }
        Cmd::Events { limit } => events(args, &cwd, sid_named, *limit, &mut out),
        Cmd::Fork { from, replace } => fork(args, &cwd, from, *replace, &mut out),
        Cmd::Drop => drop_session(args, &cwd, &mut out),
        Cmd::Export { root } => export(args, &cwd, root.as_deref(), &mut out),
        Cmd::Import { replace, root } => {
            import(args, &cwd, sid_given, *replace, root.as_deref(), &mut out)
        }
        Cmd::Path => path(args, &cwd, &mut out),
        Cmd::Gc => gc(args, &cwd, &mut out),
    }?;
    out.flush()?;
    Ok(outcome)
}

/// The session file if it exists; `None` (after a notice) if not.
fn existing(args: &Args, cwd: &Path, out: &mut Out) -> Result<Option<Store>, Stop> {
    let store = args.common.inspect(cwd)?;
    if store.is_none() {
        let path = args.common.session_path(cwd)?;
        out.notice(&format!(
            "no session file at {}: no sessions",
            common::shown(&path)
        ));
    }
    Ok(store)
}

/// The session file, which must exist for `what`.
fn required(args: &Args, cwd: &Path, what: &str) -> Result<Store, Stop> {
    match args.common.inspect(cwd)? {
        Some(s) => Ok(s),
        None => {
            let path = args.common.session_path(cwd)?;
            Err(Error::new(format!(
                "no session file at {}; nothing to {what} (check --session or FSVIEW_SESSION)",
                common::shown(&path)
            ))
            .into())
        }
    }
}

fn list(args: &Args, cwd: &Path, ids: bool, sid_named: bool, out: &mut Out) -> Result<(), Stop> {
    if ids {
        // For completions and scripts: the ids alone, and no notice.
        if let Some(store) = args.common.inspect(cwd)? {
            for s in store.summaries()? {
                out.write(&format!("{}\n", one_line(&s.sid)))?;
            }
        }
        return Ok(());
    }
    let Some(store) = existing(args, cwd, out)? else {
        return Ok(());
    };
    let sessions = store.summaries()?;
    if sessions.is_empty() {
        out.notice(&format!("no sessions in {}", common::shown(store.path())));
        return Ok(());
    }
    let picked = if sid_named || store.has_session(&args.common.session_id)? {
        None
    } else {
        latest_conversation(&store, &sessions, cwd)?
    };
    let now = fingerprint::now_ns();
    // How many agents each conversation has.
    let mut agents: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &sessions {
        if let (Some(_), Some(p)) = (&s.agent, &s.parent) {
            *agents.entry(p.as_str()).or_default() += 1;
        }
    }
    if args.common.json {
        for s in &sessions {
            let mut m = json::object("session");
            m.insert("sid".into(), s.sid.clone().into());
            m.insert("parent".into(), s.parent.clone().into());
            m.insert("agent".into(), s.agent.clone().into());
            m.insert("agent_type".into(), s.agent_type.clone().into());
            m.insert(
                "agents".into(),
                agents.get(s.sid.as_str()).copied().unwrap_or(0).into(),
            );
            m.insert("files".into(), s.files.into());
            m.insert("views".into(), s.views.into());
            m.insert("events".into(), s.events.into());
            m.insert("created".into(), timestamp(s.created_ns).into());
            m.insert("active".into(), timestamp(s.active_ns).into());
            m.insert("created_ns".into(), s.created_ns.into());
            m.insert("active_ns".into(), s.active_ns.into());
            out.json(&Value::Object(m))?;
        }
        say_picked(args, picked, out);
        return Ok(());
    }
    // The AGENT column only where a conversation has agents: the main
    // thread's row says main, each agent's its type.
    let with_agents = !agents.is_empty();
    let rows = sessions
        .iter()
        .map(|s| {
            let mut row = vec![
                one_line(&s.sid),
                s.files.to_string(),
                s.views.to_string(),
                s.events.to_string(),
                age(now, s.created_ns),
                age(now, s.active_ns),
                s.parent.as_deref().map(one_line).unwrap_or("-".into()),
            ];
            if with_agents {
                row.push(match (&s.agent, &s.agent_type) {
                    (Some(_), Some(t)) => one_line(t),
                    (Some(_), None) => "subagent".into(),
                    (None, _) if agents.contains_key(s.sid.as_str()) => MAIN_AGENT.into(),
                    (None, _) => "-".into(),
                });
            }
            row
        })
        .collect();
    let mut head = vec![
        ("SID", false),
        ("FILES", true),
        ("VIEWS", true),
        ("EVENTS", true),
        ("CREATED", false),
        ("ACTIVE", false),
        ("PARENT", false),
    ];
    if with_agents {
        head.push(("AGENT", false));
    }
    out.write(&table(&head, rows))?;
    say_picked(args, picked, out);
    Ok(())
}

/// After `list`: which conversation `show` and `events` would look into.
fn say_picked(args: &Args, picked: Option<(String, i64)>, out: &mut Out) {
    if let Some((sid, _)) = picked {
        out.notice(&format!(
            "no session {}: show and events pick the latest conversation, {}; --sid ID picks another",
            quote_id(&args.common.session_id),
            quote_id(&sid)
        ));
    }
}

/// The conversation `show` and `events` look into when no --sid (or
/// FSVIEW_SID) names one and the file has no session of the default id,
/// as after a hooked conversation, whose session is named by the agent's
/// conversation id: the most recently active one (its agents' activity
/// counts as its own) among those that viewed a file of this project (the
/// git work tree's top, else the current directory), else among all.
/// `None` when the file has no conversation.
fn latest_conversation(
    store: &Store,
    sessions: &[Summary],
    cwd: &Path,
) -> Result<Option<(String, i64)>, Stop> {
    let mut active: BTreeMap<&str, i64> = BTreeMap::new();
    for s in sessions {
        let conversation = match (&s.agent, &s.parent) {
            (Some(_), Some(p)) => p.as_str(),
            _ => s.sid.as_str(),
        };
        let a = active.entry(conversation).or_insert(s.active_ns);
        *a = (*a).max(s.active_ns);
    }
    let top = export_doc::worktree_top(cwd)
        .and_then(|t| t.canonicalize().ok())
        .unwrap_or_else(|| cwd.to_path_buf());
    let mut here = Vec::new();
    for (&sid, &at) in &active {
        let mut sets = vec![sid.to_string()];
        sets.extend(store.agents(sid)?.into_iter().map(|a| a.sid));
        for set in &sets {
            if store.files(set)?.iter().any(|f| f.path.starts_with(&top)) {
                here.push((sid, at));
                break;
            }
        }
    }
    let pool: Vec<(&str, i64)> = if here.is_empty() {
        active.into_iter().collect()
    } else {
        here
    };
    // The latest; of two equally recent, the greater id, so that the
    // answer never depends on the order rows come in.
    Ok(pool
        .into_iter()
        .max_by_key(|&(sid, at)| (at, sid))
        .map(|(sid, at)| (sid.to_string(), at)))
}

/// The options `show` and `events` look with: as given, or, when no --sid
/// names a session and the default one does not exist, the latest
/// conversation's, said in a notice.
fn looked_into(
    args: &Args,
    store: &Store,
    cwd: &Path,
    sid_named: bool,
    out: &mut Out,
) -> Result<SessionArgs, Stop> {
    let mut common = args.common.clone();
    if sid_named || store.has_session(&common.session_id)? {
        return Ok(common);
    }
    if let Some((sid, at)) = latest_conversation(store, &store.summaries()?, cwd)? {
        out.notice(&format!(
            "no session {}: showing the latest conversation, {} (active {}); --sid ID picks another",
            quote_id(&common.session_id),
            quote_id(&sid),
            age(fingerprint::now_ns(), at)
        ));
        common.session_id = sid;
    }
    Ok(common)
}

/// The view sets `show` and `events` cover: the session the options name,
/// and without --agent its agents too, each with its agent id (`None`: the
/// session itself).
fn view_sets(common: &SessionArgs, store: &Store) -> Result<Vec<(String, Option<String>)>, Stop> {
    let sid = common.sid();
    let mut sets = vec![(sid.clone(), None)];
    if !common.one_agent() {
        for a in store.agents(&sid)? {
            sets.push((a.sid, Some(a.agent)));
        }
    }
    Ok(sets)
}

/// Whether a file is still what its views saw, in show's words.
/// `told`: a reminder told the agent of a change it has not read since, so
/// the file is not what it last heard of, as the gate and --changed say.
fn state(record: &FileRecord, told: bool) -> (bool, Option<&'static str>) {
    match fingerprint::freshness(&record.path, &record.fingerprint) {
        Ok(Freshness::Fresh { .. }) if told => (false, Some("content")),
        Ok(Freshness::Fresh { .. }) => (true, None),
        Ok(Freshness::Stale(c)) => (false, Some(c.as_str())),
        // Unreadable now (permissions): not what was seen, as --changed says.
        Err(_) => (false, Some("content")),
    }
}

fn lines_of(v: &ViewRecord) -> String {
    let span = if v.lines == 0 {
        "none".to_string()
    } else {
        format!("{}-{}", v.offset, v.offset + v.lines - 1)
    };
    match v.total_lines {
        Some(t) => format!("{span} of {t}"),
        None => span,
    }
}

/// A file `show FILE...` names: its canonical path, and its device and
/// inode where it exists.
type Named = (PathBuf, Option<(u64, u64)>);

/// The files `show FILE...` names: each one's canonical path, and its
/// device and inode where it exists (a hard link is the same file).
fn named_files(cwd: &Path, files: &[PathBuf]) -> Result<Vec<Named>, Stop> {
    use std::os::unix::fs::MetadataExt;
    files
        .iter()
        .map(|f| match paths::resolve(cwd, f)? {
            paths::Resolved::Existing { canonical, meta } => {
                Ok((canonical, Some((meta.dev(), meta.ino()))))
            }
            paths::Resolved::Missing { canonical } => Ok((canonical, None)),
        })
        .collect()
}

fn show(
    args: &Args,
    cwd: &Path,
    sid_named: bool,
    files: &[PathBuf],
    text: bool,
    out: &mut Out,
) -> Result<Outcome, Stop> {
    let store = required(args, cwd, "show")?;
    let common = looked_into(args, &store, cwd, sid_named, out)?;
    store.require_session(&common.sid())?;
    let named = named_files(cwd, files)?;
    let mut found = vec![false; named.len()];
    let sets = view_sets(&common, &store)?;
    let with_agents = sets.len() > 1;
    let now = fingerprint::now_ns();
    let mut rows = Vec::new();
    let mut any = false;
    for (sid, agent) in &sets {
        let told = store.told_ids(sid)?;
        for f in &store.files(sid)? {
            if !named.is_empty() {
                let stat = &f.fingerprint.stat;
                let mut hit = false;
                for (i, (canonical, id)) in named.iter().enumerate() {
                    if *canonical == f.path || *id == Some((stat.dev, stat.ino)) {
                        found[i] = true;
                        hit = true;
                    }
                }
                if !hit {
                    continue;
                }
            }
            any = true;
            let (fresh, change) = state(f, told.contains(&f.id));
            let shown = paths::display(cwd, &f.path);
            let state_words = match change {
                None => "fresh".to_string(),
                Some(c) => format!("modified ({c})"),
            };
            for v in store.views(f.id)? {
                let kept = match (&v.text_hash, text) {
                    (Some(h), true) => store.text(h)?,
                    _ => None,
                };
                if common.json {
                    let mut m = json::object("view");
                    m.insert("sid".into(), sid.clone().into());
                    m.insert("agent".into(), agent.clone().into());
                    json::put_path(&mut m, "path", &shown);
                    json::put_path(&mut m, "canonical", &f.path);
                    m.insert("kind".into(), v.kind.as_str().into());
                    m.insert("source".into(), v.source.as_str().into());
                    m.insert("fresh".into(), fresh.into());
                    m.insert(
                        "state".into(),
                        if fresh { "fresh" } else { "modified" }.into(),
                    );
                    m.insert("change".into(), change.into());
                    m.insert("offset".into(), v.offset.into());
                    m.insert("lines".into(), v.lines.into());
                    m.insert("total_lines".into(), v.total_lines.into());
                    m.insert("viewed".into(), timestamp(v.viewed_ns).into());
                    m.insert("viewed_ns".into(), v.viewed_ns.into());
                    m.insert("sha256".into(), fingerprint::hex(&v.shown_hash).into());
                    m.insert("text_kept".into(), v.text_hash.is_some().into());
                    m.insert("held".into(), v.held().into());
                    m.insert(
                        "released".into(),
                        v.released.map(|(why, _)| why.as_str()).into(),
                    );
                    m.insert("released_ns".into(), v.released.map(|(_, at)| at).into());
                    m.insert("origin".into(), v.origin.clone().into());
                    if text {
                        put_text(&mut m, kept.as_deref());
                    }
                    out.json(&Value::Object(m))?;
                    continue;
                }
                if text {
                    out.write(&shown_text(
                        agent.as_deref().filter(|_| with_agents),
                        &common::shown(&shown),
                        &v,
                        &state_words,
                        age(now, v.viewed_ns),
                        kept.as_deref(),
                    ))?;
                    continue;
                }
                let mut row = Vec::new();
                if with_agents {
                    row.push(agent.as_deref().map(one_line).unwrap_or(MAIN_AGENT.into()));
                }
                row.extend([
                    common::shown(&shown),
                    v.kind.as_str().to_string(),
                    state_words.clone(),
                    match v.released {
                        None => "yes".to_string(),
                        Some((why, _)) => format!("no ({})", why.as_str()),
                    },
                    age(now, v.viewed_ns),
                    v.source.as_str().to_string(),
                    lines_of(&v),
                ]);
                rows.push(row);
            }
        }
    }
    let mut outcome = Outcome::Ok;
    for (file, found) in files.iter().zip(&found) {
        if !found {
            out.notice(&format!(
                "{}: no view in session {}",
                common::shown(file),
                quote_id(&sets[0].0)
            ));
            outcome = Outcome::Negative;
        }
    }
    if !any {
        if named.is_empty() {
            out.notice(&format!("session {} has no views", quote_id(&sets[0].0)));
        }
        return Ok(outcome);
    }
    if common.json || text {
        return Ok(outcome);
    }
    let mut head = Vec::new();
    if with_agents {
        head.push(("AGENT", false));
    }
    head.extend([
        ("PATH", false),
        ("KIND", false),
        ("STATE", false),
        ("HELD", false),
        ("WHEN", false),
        ("SOURCE", false),
        ("LINES", false),
    ]);
    out.write(&table(&head, rows))?;
    Ok(outcome)
}

/// One view as `show --text` prints it: a line that says what it is, then
/// the text the agent was shown, numbered as a read showed it (other views
/// as they were: what the agent wrote, what an injector gave it), and a
/// blank line.
fn shown_text(
    agent: Option<&str>,
    path: &str,
    v: &ViewRecord,
    state: &str,
    when: String,
    kept: Option<&[u8]>,
) -> String {
    let mut s = String::new();
    if let Some(a) = agent {
        s.push_str(&format!("[{}] ", one_line(a)));
    }
    s.push_str(&format!(
        "{path}: {}, lines {}, {} {when}; {state}",
        v.kind.as_str(),
        lines_of(v),
        v.source.as_str(),
    ));
    if let Some((why, _)) = v.released {
        s.push_str(&format!("; no longer held ({})", why.as_str()));
    }
    s.push('\n');
    match kept {
        Some(bytes) if v.source == Source::Read && v.kind != Kind::Processed => {
            s.push_str(&fsview_store::show::number_lines(bytes, v.offset.max(1)));
        }
        Some(bytes) => {
            s.push_str(&String::from_utf8_lossy(bytes));
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                s.push('\n');
            }
        }
        None => s.push_str("(its text was not kept)\n"),
    }
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s.push('\n');
    s
}

/// `text` (and `text_bytes`, base64, when it is not UTF-8) of a view in
/// `show --text --json`: null where the text was not kept.
fn put_text(m: &mut Map<String, Value>, kept: Option<&[u8]>) {
    use base64::Engine;
    match kept {
        None => {
            m.insert("text".into(), Value::Null);
        }
        Some(bytes) => match std::str::from_utf8(bytes) {
            Ok(t) => {
                m.insert("text".into(), t.into());
            }
            Err(_) => {
                m.insert(
                    "text".into(),
                    String::from_utf8_lossy(bytes).into_owned().into(),
                );
                m.insert(
                    "text_bytes".into(),
                    base64::engine::general_purpose::STANDARD
                        .encode(bytes)
                        .into(),
                );
            }
        },
    }
}

fn events(
    args: &Args,
    cwd: &Path,
    sid_named: bool,
    limit: Option<u64>,
    out: &mut Out,
) -> Result<(), Stop> {
    let store = required(args, cwd, "show")?;
    let common = looked_into(args, &store, cwd, sid_named, out)?;
    let sid = common.sid();
    store.require_session(&sid)?;
    let events: Vec<(Option<String>, EventRecord)> = if common.one_agent() {
        store
            .events(&sid, limit)?
            .into_iter()
            .map(|e| (None, e))
            .collect()
    } else {
        store.conversation_events(&sid, limit)?
    };
    if events.is_empty() {
        out.notice(&format!("session {} has no events", quote_id(&sid)));
        return Ok(());
    }
    if common.json {
        for (agent, e) in &events {
            let mut m = json::object("event");
            let of = match agent {
                Some(a) => fsview_store::agents::sid_of(&sid, a),
                None => sid.clone(),
            };
            m.insert("sid".into(), of.into());
            m.insert("agent".into(), agent.clone().into());
            m.insert("id".into(), e.id.into());
            m.insert("at".into(), timestamp(e.at_ns).into());
            m.insert("at_ns".into(), e.at_ns.into());
            m.insert("tool".into(), e.tool.clone().into());
            m.insert("action".into(), e.action.clone().into());
            match &e.path {
                Some(p) => {
                    json::put_path(&mut m, "path", &paths::display(cwd, p));
                    json::put_path(&mut m, "canonical", p);
                }
                None => {
                    m.insert("path".into(), Value::Null);
                }
            }
            m.insert("verdict".into(), e.verdict.clone().into());
            m.insert("detail".into(), e.detail.clone().into());
            out.json(&Value::Object(m))?;
        }
        return Ok(());
    }
    let with_agents = !common.one_agent() && !store.agents(&sid)?.is_empty();
    let now = fingerprint::now_ns();
    let dash = |s: &Option<String>| s.as_deref().map(one_line).unwrap_or("-".into());
    let rows = events
        .iter()
        .map(|(agent, e)| {
            let mut row = vec![age(now, e.at_ns)];
            if with_agents {
                row.push(agent.as_deref().map(one_line).unwrap_or(MAIN_AGENT.into()));
            }
            row.extend([
                one_line(&e.tool),
                one_line(&e.action),
                e.path
                    .as_deref()
                    .map(|p| common::shown(&paths::display(cwd, p)))
                    .unwrap_or("-".into()),
                dash(&e.verdict),
                dash(&e.detail),
            ]);
            row
        })
        .collect();
    let mut head = vec![("WHEN", false)];
    if with_agents {
        head.push(("AGENT", false));
    }
    head.extend([
        ("TOOL", false),
        ("ACTION", false),
        ("PATH", false),
        ("VERDICT", false),
        ("DETAIL", false),
    ]);
    out.write(&table(&head, rows))
}

fn fork(args: &Args, cwd: &Path, from: &str, replace: bool, out: &mut Out) -> Result<(), Stop> {
    check_sid(from, "--from")?;
    let store = required(args, cwd, "fork")?;
    let to = &args.common.sid();
    let n = store.fork(from, to, replace)?;
    if args.common.json {
        let mut m = json::object("fork");
        m.insert("from".into(), from.into());
        m.insert("sid".into(), to.clone().into());
        counts_json(&mut m, &n);
        return out.json(&Value::Object(m));
    }
    out.write(&format!(
        "forked {} into {}: {}\n",
        quote_id(from),
        quote_id(to),
        describe(&n, false)
    ))
}

fn drop_session(args: &Args, cwd: &Path, out: &mut Out) -> Result<(), Stop> {
    let store = required(args, cwd, "drop")?;
    let sid = &args.common.sid();
    let n = store.drop_session(sid)?;
    if args.common.json {
        let mut m = json::object("drop");
        m.insert("sid".into(), sid.clone().into());
        counts_json(&mut m, &n);
        m.insert("agents".into(), n.agents.into());
        return out.json(&Value::Object(m));
    }
    out.write(&format!(
        "dropped {}: {}\n",
        quote_id(sid),
        describe(&n, true)
    ))
}

fn counts_json(m: &mut Map<String, Value>, n: &Counts) {
    m.insert("files".into(), n.files.into());
    m.insert("views".into(), n.views.into());
    m.insert("context".into(), n.context.into());
    m.insert("nested".into(), n.nested.into());
    m.insert("events".into(), n.events.into());
}

/// "2 files, 3 views, 2 context parts, 1 instruction file[, 9 events]".
fn describe(n: &Counts, with_events: bool) -> String {
    let mut parts = vec![
        plural(n.files, "file", "files"),
        plural(n.views, "view", "views"),
        plural(n.context, "context part", "context parts"),
        plural(n.nested, "instruction file", "instruction files"),
    ];
    if with_events {
        parts.push(plural(n.events, "event", "events"));
    }
    if n.agents > 0 {
        parts.push(format!("and {}", plural(n.agents, "agent", "agents")));
    }
    parts.join(", ")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn path(args: &Args, cwd: &Path, out: &mut Out) -> Result<(), Stop> {
    let path = args.common.session_path(cwd)?;
    let exists = path.exists();
    if args.common.json {
        let mut m = json::object("session_file");
        json::put_path(&mut m, "path", &path);
        m.insert("exists".into(), exists.into());
        return out.json(&Value::Object(m));
    }
    out.write(&format!("{}\n", common::shown(&path)))?;
    if !exists {
        out.notice("it does not exist yet: the first call that records something creates it");
    }
    Ok(())
}

fn gc(args: &Args, cwd: &Path, out: &mut Out) -> Result<(), Stop> {
    let Some(store) = args.common.inspect(cwd)? else {
        // Nothing to collect, and nothing is created for it.
        if args.common.json {
            out.json(&gc_json(0, 0, 0, 0, false))?;
        } else {
            out.write("freed 0 kept texts (0 bytes)\n")?;
        }
        return Ok(());
    };
    let c = store.gc()?;
    if args.common.json {
        return out.json(&gc_json(
            c.texts,
            c.bytes,
            c.wal_before,
            c.wal_after,
            c.busy,
        ));
    }
    let texts = if c.texts == 1 { "text" } else { "texts" };
    let mut line = format!("freed {} kept {texts} ({} bytes)", c.texts, c.bytes);
    if c.busy {
        line.push_str("; the write-ahead log is in use by another process and was not truncated; run gc again later");
    } else if c.wal_before > c.wal_after {
        line.push_str(&format!(
            "; truncated the write-ahead log ({} bytes)",
            c.wal_before - c.wal_after
        ));
    }
    out.write(&format!("{line}\n"))
}

fn gc_json(texts: i64, bytes: i64, wal_before: u64, wal_after: u64, busy: bool) -> Value {
    let mut m = json::object("gc");
    m.insert("texts".into(), texts.into());
    m.insert("bytes".into(), bytes.into());
    m.insert("wal_before".into(), wal_before.into());
    m.insert("wal_after".into(), wal_after.into());
    m.insert("busy".into(), busy.into());
    Value::Object(m)
}

// ---- export and import ----------------------------------------------------

/// Where the paths of an export are rooted: `--root DIR`, else the top of
/// the git work tree of the current directory, else nowhere (absolute).
fn export_root(root: Option<&Path>, cwd: &Path) -> Result<export_doc::Root, Error> {
    let top = match root {
        Some(dir) => Some(root_dir(dir, cwd)?),
        None => export_doc::worktree_top(cwd),
    };
    Ok(export_doc::Root { top })
}

/// `--root DIR`, canonical: an existing directory.
fn root_dir(dir: &Path, cwd: &Path) -> Result<PathBuf, Error> {
    let abs = cwd.join(dir);
    match std::fs::canonicalize(&abs) {
        Ok(p) if p.is_dir() => Ok(p),
        Ok(_) => Err(Error::new(format!(
            "--root {} is not a directory; name the top of the work tree",
            common::shown(dir)
        ))),
        Err(e) => Err(Error::new(format!(
            "--root {}: {}; name an existing directory",
            common::shown(dir),
            fsview_store::error::plain_io(&e)
        ))),
    }
}

fn export(args: &Args, cwd: &Path, root: Option<&Path>, out: &mut Out) -> Result<(), Stop> {
    let root = export_root(root, cwd)?;
    let store = required(args, cwd, "export")?;
    let sid = &args.common.sid();
    let Some(d) = store.dump(sid)? else {
        let gone = store.require_session(sid).err().unwrap_or_else(|| {
            Error::new(format!(
                "session {} appeared while it was exported; run the export again",
                quote_id(sid)
            ))
        });
        return Err(gone.into());
    };
    out.json(&export_doc::document(&d, &root, fingerprint::now_ns()))
}

fn import(
    args: &Args,
    cwd: &Path,
    sid_given: bool,
    replace: bool,
    root: Option<&Path>,
    out: &mut Out,
) -> Result<(), Stop> {
    let input = common::stdin_bytes(
        "the session to import",
        "pipe in what export wrote: fsview-session import < session.json",
    )?;
    // Check everything before the session file is opened (or created).
    let (dump, parsed) = export_doc::parse(&input, || {
        match root {
        Some(dir) => root_dir(dir, cwd),
        None => export_doc::worktree_top(cwd).ok_or_else(|| {
            Error::new(
                "the export names files relative to the top of its git work tree, and the current directory is in none; run the import inside a clone of the repository, or pass --root DIR",
            )
        }),
    }
    })?;
    let sid = if sid_given {
        args.common.sid()
    } else {
        dump.sid.clone()
    };
    if sid_given {
        check_sid(&sid, "--sid")?;
    } else if check_sid(&sid, "").is_err() {
        return Err(Error::new(format!(
            "the document's session id {} is not a valid one (1 to 200 printable characters); import it under another with --sid NEW",
            quote_id(&sid)
        ))
        .into());
    }
    let store = args.common.open_plain(cwd)?;
    let n = store.load(&dump, &sid, replace)?;
    if args.common.json {
        let mut m = json::object("import");
        m.insert("sid".into(), sid.clone().into());
        m.insert("from_sid".into(), dump.sid.clone().into());
        counts_json(&mut m, &n);
        m.insert("texts".into(), n.texts.into());
        m.insert("version".into(), parsed.version.into());
        match &parsed.mapped_onto {
            Some(top) => json::put_path(&mut m, "root", top),
            None => {
                m.insert("root".into(), Value::Null);
            }
        }
        return out.json(&Value::Object(m));
    }
    let renamed = if sid == dump.sid {
        String::new()
    } else {
        format!(" (exported as {})", quote_id(&dump.sid))
    };
    let onto = match &parsed.mapped_onto {
        Some(top) => format!("; work tree files mapped onto {}", common::shown(top)),
        None => String::new(),
    };
    out.write(&format!(
        "imported {}{renamed}: {}, {}, {}{onto}\n",
        quote_id(&sid),
        describe(&n, false),
        plural(n.texts, "new text", "new texts"),
        plural(n.events, "event", "events"),
    ))
}

// ---- shared formatting ------------------------------------------------------

/// The same rules as --sid.
fn check_sid(sid: &str, what: &str) -> Result<(), Error> {
    if sid.is_empty() || sid.len() > 200 || sid.chars().any(char::is_control) {
        return Err(Error::new(format!(
            "invalid session id {} for {what}: use 1 to 200 printable characters",
            quote_id(sid)
        )));
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    escape_bytes(s.as_bytes())
}

/// When, coarsely: "just now", "5m ago", "3h ago", "2d ago", and the date
/// in the local time zone (TZ, else the system's) from a week back. Exact
/// times are in --json.
fn age(now_ns: i64, then_ns: i64) -> String {
    let secs = (now_ns - then_ns).max(0) / 1_000_000_000;
    match secs {
        0..=59 => "just now".to_string(),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        86_400..=604_799 => format!("{}d ago", secs / 86_400),
        _ => match jiff::Timestamp::from_nanosecond(i128::from(then_ns)) {
            Ok(t) => t.to_zoned(jiff::tz::TimeZone::system()).date().to_string(),
            Err(_) => "long ago".to_string(),
        },
    }
}

/// RFC 3339 in UTC, to the second: "2023-11-14T22:13:20Z".
fn timestamp(ns: i64) -> String {
    match jiff::Timestamp::from_second(ns.div_euclid(1_000_000_000)) {
        Ok(t) => t.to_string(),
        // Out of jiff's range (years beyond ±9999): only a damaged or
        // hand-made file holds such a time.
        Err(_) => "-".to_string(),
    }
}

/// A plain-text table: columns padded to their widest cell (numbers
/// right-aligned), two spaces apart, no trailing blanks. Widths are terminal
/// columns, so a CJK id (two columns a character) lines up too.
fn table(head: &[(&str, bool)], rows: Vec<Vec<String>>) -> String {
    let mut widths: Vec<usize> = head.iter().map(|(h, _)| h.width()).collect();
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.width());
        }
    }
    let header: Vec<String> = head.iter().map(|(h, _)| h.to_string()).collect();
    let mut out = String::new();
    for r in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = widths[i] - c.width();
            if head[i].1 {
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            } else {
                line.push_str(c);
                line.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_app() {
        command().debug_assert();
    }

    #[test]
    fn ages_and_timestamps() {
        let s = 1_000_000_000;
        assert_eq!(age(100 * s, 99 * s), "just now");
        assert_eq!(age(100 * s, 200 * s), "just now");
        assert_eq!(age(4000 * s, 0), "1h ago");
        assert_eq!(age(200_000 * s, 0), "2d ago");
        assert_eq!(timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp(1_700_000_000 * s + 5), "2023-11-14T22:13:20Z");
        assert_eq!(timestamp(-s / 2), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn tables_align() {
        let t = table(
            &[("A", false), ("N", true), ("Z", false)],
            vec![vec!["xyz".into(), "10".into(), "-".into()]],
        );
        assert_eq!(t, "A     N  Z\nxyz  10  -\n");
        let t = table(
            &[("SID", false), ("N", true)],
            vec![
                vec!["会話-1".into(), "3".into()],
                vec!["abc".into(), "12".into()],
            ],
        );
        assert_eq!(t, "SID      N\n会話-1   3\nabc     12\n");
    }
}
