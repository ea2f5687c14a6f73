//! fsview-check-edit: may the agent change this file now?
//!
//! Read-only but for its log: each call's verdicts go into the session's
//! event log in one short transaction after they are printed, and only
//! when the session file already exists (a batch of more than
//! [`LOG_EACH`] paths: its refusals and one event that counts them all).

use std::borrow::Cow;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use serde::Deserialize;
use serde_json::Value;

use fsview_store::changes::{self, Limits};
use fsview_store::events::Event;
use fsview_store::gate::{Decision, Gate};
use fsview_store::{paths, Error, Store};

use crate::common::{self, Out, Outcome, SessionArgs, Stop};
use crate::json;

const TOOL: &str = "fsview-check-edit";

const EXAMPLES: &str = "\
Examples:
  fsview-check-edit src/main.rs            may the agent edit it? ok (0) or denied (1)
  fsview-check-edit --write src/main.rs    may it replace the whole file? needs a full view
  fsview-check-edit --json a.rs b.rs       one JSON object per path, with \"verdict\"
  git diff --name-only -z | fsview-check-edit -0 -
                                           paths from stdin, NUL-separated
  fsview-check-edit --changed              files changed since the agent saw them, with diffs
  printf '{\"path\":\"a.rs\",\"write\":true}\\n' | fsview-check-edit --requests";

/// Decide, per path, whether the agent may change the file now.
///
/// A targeted edit (the default) needs a fresh view that is not processed;
/// a whole-file write (--write) needs a fresh `full` view. Fresh means the
/// file holds the bytes the view was taken from: a touch, a chmod, or the
/// same bytes saved as a new file (a save by rename, git stash and pop) are
/// no change. Verdicts: `ok`, `new_file` (nothing there: creating it needs
/// no read), `not_read`, `processed_view`, `start_only` (--write after
/// seeing only part) and `modified` (with what changed: content; replaced,
/// another file with other bytes; deleted; type). A file a reminder told of
/// a change to (fsview-hook) is modified until it is read again. Exit 0
/// when every path is allowed, 1 when any is denied, 2 on error.
///
/// An unchanged stat stands in for the content only for files of 128 KiB
/// or more on local filesystems (ext4, XFS, Btrfs, tmpfs, ...) whose
/// timestamps can tell a later write; smaller files, network and FUSE
/// filesystems and /proc are hashed on every check.
///
/// With --changed, list instead every file of the session that is no longer
/// what the agent saw, with a unified diff where the viewed text was kept;
/// exit 1 when there is any.
#[derive(Parser, Debug)]
#[command(name = TOOL, version, after_help = EXAMPLES)]
pub struct Args {
    /// Files to check; `-` reads paths from stdin, one per line
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Ask about replacing the whole file, not a targeted edit
    #[arg(short, long)]
    pub write: bool,

    /// Paths on stdin (`-`) are separated by NUL bytes, as from `git diff -z`
    #[arg(short = '0', long = "null")]
    pub null: bool,

    /// Read requests as JSON Lines on stdin: {"path": "a.rs", "write": true}
    /// ("write" optional, default false); a malformed line is named on stderr
    /// (exit 2) and the good ones are still checked
    #[arg(long, conflicts_with_all = ["paths", "changed"])]
    pub requests: bool,

    /// List every file of the session whose views are no longer fresh, with
    /// a unified diff of what changed
    #[arg(long, conflicts_with_all = ["paths", "write", "null"])]
    pub changed: bool,

    /// With --changed: most diff lines shown per file
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub diff_lines: usize,

    /// With --changed: most diff lines shown in all
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub total_diff_lines: usize,

    #[command(flatten)]
    pub common: SessionArgs,
}

pub fn command() -> clap::Command {
    Args::command()
}

pub fn main() -> u8 {
    let args: Args = common::parse(command);
    common::finish(TOOL, run(&args))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestLine {
    path: PathBuf,
    #[serde(default)]
    write: bool,
}

fn run(args: &Args) -> Result<Outcome, Stop> {
    let cwd = common::current_dir()?;
    let mut out = Out::new(TOOL, args.common.quiet);
    if args.changed {
        return run_changed(args, &cwd, &mut out);
    }
    let mut outcome = Outcome::Ok;
    let jobs: Vec<(PathBuf, bool)> = if args.requests {
        let input = common::stdin_text(
            "the --requests JSON Lines",
            "pipe them in: printf '{\"path\":\"a.rs\"}\\n' | fsview-check-edit --requests",
        )?;
        let mut jobs = Vec::new();
        for (n, line) in input.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<RequestLine>(line) {
                Ok(r) => jobs.push((r.path, r.write)),
                Err(e) => {
                    outcome = Outcome::Error;
                    let msg = format!(
                        "stdin line {}: {e}; each line must be an object like {{\"path\":\"a.rs\",\"write\":false}}",
                        n + 1
                    );
                    if args.common.json {
                        out.json(&json::error(None, &msg))?;
                    }
                    out.error(&msg);
                }
            }
        }
        jobs
    } else {
        if args.paths.is_empty() {
            return Err(Error::new("no file given; name one or more PATHs, or `-` to read them from stdin (see --help)").into());
        }
        common::paths_from("fsview-check-edit -", &args.paths, args.null)?
            .into_iter()
            .map(|p| (p, args.write))
            .collect()
    };
    let store = args.common.open_existing(&cwd, TOOL)?;
    let sid = args.common.sid();
    // One snapshot, one lock of the file for all the lookups (a single
    // check's too: each statement outside it would take its own).
    let mut gate = Gate::new(store.as_ref(), &sid, &cwd)
        .ending_process()
        .in_snapshot()?;
    // A session the file does not hold (a mistyped --sid, say) has no
    // views: it is not created by asking, and a refusal says so.
    let unknown = match &store {
        Some(s) => s.unknown_session(&sid)?,
        None => None,
    };
    // (canonical path, verdict, detail) per decision, logged at the end.
    let mut logged: Vec<(PathBuf, &'static str, Cow<'static, str>)> =
        Vec::with_capacity(jobs.len());
    let answers = if jobs.len() > 1 {
        gate.decide_all(&jobs)
    } else {
        jobs.iter().map(|(p, w)| gate.decide(p, *w)).collect()
    };
    for ((path, write), answer) in jobs.iter().zip(answers) {
        match answer {
            Ok(d) => {
                if !d.verdict.allowed() {
                    outcome = outcome.worst(Outcome::Negative);
                }
                print_decision(args, &mut out, path, *write, &d)?;
                let asked = if *write { "write" } else { "edit" };
                let detail = match d.verdict.change() {
                    Some(c) => Cow::Owned(format!("{asked}, {}", c.as_str())),
                    None => Cow::Borrowed(asked),
                };
                logged.push((d.canonical, d.verdict.as_str(), detail));
            }
            Err(e) => {
                outcome = Outcome::Error;
                if args.common.json {
                    out.json(&json::error(Some(path), e.message()))?;
                }
                out.error(e.message());
            }
        }
    }
    out.flush()?;
    if let Some(hint) = &unknown {
        if logged.iter().any(|(_, v, _)| *v == "not_read") {
            out.notice(&format!(
                "{hint}; it has no views, so every file in it is not_read"
            ));
        }
    }
    let summary;
    let events: Vec<Event<'_>> = if unknown.is_some() {
        Vec::new()
    } else if logged.len() <= LOG_EACH {
        logged.iter().map(check_event).collect()
    } else {
        // A big batch (a pre-commit hook over a tree) would push the
        // session's history of reads and edits out of its bounded log:
        // its refusals are logged each (the first LOG_EACH), the rest as
        // one event that counts them.
        summary = batch_summary(&logged);
        let mut events: Vec<Event<'_>> = logged
            .iter()
            .filter(|(_, v, _)| *v != "ok" && *v != "new_file")
            .take(LOG_EACH)
            .map(check_event)
            .collect();
        events.push(Event::new(TOOL, "check").detail(Some(&summary)));
        events
    };
    // The batch's fingerprints worth storing and its events, in one short
    // transaction. The verdicts are the answer and are already out: a log
    // that cannot be written changes neither them nor the exit code, and
    // says nothing. Without a session file there is no log to write, and
    // none is created for it.
    let _ = gate.finish(&events);
    // A batch's thousands of paths are freed with the process, at once.
    std::mem::forget(events);
    std::mem::forget((logged, jobs));
    Ok(outcome)
}

/// Most checks of one call logged each; a bigger batch logs its refusals
/// (as many) and one event counting all its verdicts.
const LOG_EACH: usize = 64;

/// The event of one check: (canonical path, verdict, detail).
fn check_event<'a>(
    (path, verdict, detail): &'a (PathBuf, &'static str, Cow<'static, str>),
) -> Event<'a> {
    Event::new(TOOL, "check")
        .path(path)
        .verdict(verdict)
        .detail(Some(detail))
}

/// "batch of 10000 paths: 9990 ok, 10 not_read": each verdict with its
/// count, in the order first met.
fn batch_summary(logged: &[(PathBuf, &'static str, Cow<'static, str>)]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for (_, verdict, _) in logged {
        match counts.iter_mut().find(|(v, _)| v == verdict) {
            Some((_, n)) => *n += 1,
            None => counts.push((verdict, 1)),
        }
    }
    let counted: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
    format!("batch of {} paths: {}", logged.len(), counted.join(", "))
}

/// Log this call's events in one short transaction, quietly (see above).
fn log_quietly(store: &Store, sid: &str, events: &[Event<'_>]) {
    let _ = store.log(sid, events);
}

fn print_decision(
    args: &Args,
    out: &mut Out,
    path: &Path,
    write: bool,
    d: &Decision,
) -> Result<(), Stop> {
    if args.common.json {
        let mut m = json::object("check");
        json::put_path(&mut m, "path", path);
        json::put_path(&mut m, "canonical", &d.canonical);
        m.insert("verdict".into(), d.verdict.as_str().into());
        m.insert(
            "change".into(),
            d.verdict.change().map(|c| c.as_str()).into(),
        );
        m.insert("allowed".into(), d.verdict.allowed().into());
        m.insert("write".into(), write.into());
        m.insert("message".into(), d.message.clone().into());
        m.insert(
            "view".into(),
            d.view.as_ref().map(|v| v.kind.as_str()).into(),
        );
        return out.json(&Value::Object(m));
    }
    // In pieces, the name as it is when it needs no escaping: a batch
    // prints thousands of lines.
    match fsview_store::error::plain_text(path.as_os_str().as_bytes()) {
        Some(plain) => out.write(plain)?,
        None => out.write(&common::shown(path))?,
    }
    out.write(": ")?;
    match (d.verdict.allowed(), d.verdict.change()) {
        (true, _) => out.write(d.verdict.as_str())?,
        (false, Some(c)) => {
            out.write("modified (")?;
            out.write(c.as_str())?;
            out.write("): ")?;
            out.write(&d.message)?;
        }
        (false, None) => {
            out.write(d.verdict.as_str())?;
            out.write(": ")?;
            out.write(&d.message)?;
        }
    }
    out.write("\n")
}

fn run_changed(args: &Args, cwd: &Path, out: &mut Out) -> Result<Outcome, Stop> {
    let Some(store) = args.common.open_existing(cwd, TOOL)? else {
        return Ok(Outcome::Ok);
    };
    let limits = Limits {
        per_file: args.diff_lines,
        total: args.total_diff_lines,
        // Listings are diffs (a reminder's whole texts are a hook's).
        rewrites: false,
        numbered: true,
        crlf_as_lf: false,
    };
    let found = changes::changed(&store, &args.common.sid(), cwd, limits)?;
    for c in &found {
        let shown = paths::display(cwd, &c.record.path);
        if args.common.json {
            let mut m = json::object("changed");
            json::put_path(&mut m, "path", &shown);
            json::put_path(&mut m, "canonical", &c.record.path);
            m.insert("verdict".into(), "modified".into());
            m.insert("change".into(), c.change.as_str().into());
            m.insert("diff".into(), c.diff.clone().into());
            m.insert("truncated".into(), c.truncated.into());
            m.insert("note".into(), c.note.clone().into());
            m.insert("writer".into(), c.writer.clone().into());
            out.json(&Value::Object(m))?;
        } else {
            out.write(&changes::listing(
                &common::shown(&shown),
                c.change,
                changes::by_writer(c.writer.as_deref(), c.note.as_deref()).as_deref(),
                c.diff.as_deref(),
            ))?;
        }
    }
    out.flush()?;
    let detail = match found.len() {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    let verdict = if found.is_empty() { "ok" } else { "modified" };
    log_quietly(
        &store,
        &args.common.sid(),
        &[Event::new(TOOL, "changed")
            .verdict(verdict)
            .detail(Some(&detail))],
    );
    Ok(if found.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Negative
    })
}
