//! fsview-edit: apply an agent's edits under the gate, with Claude Code's
//! Edit rules, so that nothing anyone else wrote meanwhile is lost.
//!
//! The tool only parses arguments and request lines and prints; the gate,
//! the rules, the write and the record are `fsview_apply::apply`, shared
//! with fsview-write and the MCP server.

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use serde::Deserialize;
use serde_json::Value;

use fsview_apply::edits::Voice;
use fsview_apply::{Change, Context, Edit, OnChange, Report, Request, Verdict};
use fsview_store::error::escape_bytes;
use fsview_store::gate::Verdict as GateVerdict;
use fsview_store::{fingerprint, Error, Store};

use crate::common::{self, Out, Outcome, SessionArgs, Stop};
use crate::json;

const TOOL: &str = "fsview-edit";

const EXAMPLES: &str = "\
Examples:
  fsview-edit src/lib.rs --old 'fn old_name(' --new 'fn new_name('
                                            replace the one occurrence; prints the diff
  fsview-edit src/lib.rs --old x --new y --all
                                            replace every occurrence
  fsview-edit a.rs --old 'use a;' --new 'use b;' --old 'a::f()' --new 'b::f()'
                                            two edits in order, all or nothing
  fsview-edit --dry-run --json src/lib.rs --old a --new b
                                            the diff as JSON; nothing written
  fsview-edit new.rs --old '' --new 'fn main() {}'
                                            create a file (no read needed)
  fsview-edit --requests < edits.jsonl      one request a line, such as these two:
  {\"path\":\"a.rs\",\"old_string\":\"x\",\"new_string\":\"y\",\"replace_all\":false}
  {\"path\":\"a.rs\",\"edits\":[{\"old_string\":\"x\",\"new_string\":\"y\"}, ...]}";

/// Apply edits to files, under the gate, and record what was written.
///
/// Each edit replaces --old with --new, by Claude Code's Edit rules:
/// --old must occur exactly once (or give --all), must differ from --new,
/// and is matched exactly first, then with curly quotes in the file read
/// as straight ones. The file keeps its line endings, encoding, byte-order
/// mark, final newline (or its absence), mode and owner. Several --old/--new
/// pairs are applied in order, each to the result of the one before, all
/// or nothing.
///
/// The gate comes first, as fsview-check-edit decides it: the agent must
/// have a fresh view of the file that is not processed (any view for an
/// edit; a file that does not exist needs none). The check and the write
/// are one step: the file is locked against other fsview writers, its bytes
/// are checked against the view, the new file is written beside it, flushed
/// and swapped in, and a change that landed meanwhile makes it `modified`
/// instead of being overwritten. A file another program has open for
/// writing (a shell's `>>`, a logger) is refused `in_use`: it would go on
/// writing to the replaced file. The written text becomes a `full` view
/// (source `write`), so the next edit needs no re-read.
///
/// The new file gets what `cp -a` keeps: mode, owner, ACLs and extended
/// attributes, taken just before the swap (a chmod during the edit is
/// kept). A file a new one cannot stand in for (a group you are not in, a
/// bind-mounted file) is written in place, and a notice says so. A
/// symbolic link is followed: its target is replaced and the link stays a
/// link. A file with other hard links is replaced by a new file, so the
/// other names keep the old text (a notice says so). A process killed, or
/// a machine that crashes, at any moment leaves the old file or the new
/// one, never a mix. Nothing another program wrote is deleted: a version
/// that cannot stay at the path is kept beside it as
/// NAME.fsview-conflict-TIME-PID (named in the message), and a write
/// interrupted by a crash may leave .NAME.fsview-PID-N.tmp holding the
/// other version, which the next edit of the file names: compare before
/// deleting. A file no one may write (mode without a w bit) or marked
/// immutable or append-only is refused, for root too. See docs/apply.md.
///
/// A file that changed since its view (a formatter, the user, another
/// agent) takes an edit still, by default, when the edit is 3 or more
/// lines from every line that change touched and its text is found exactly
/// where it was (after a read of some lines, --offset/--limit: 3 or more
/// lines inside them too): both are kept (verdict merged), and the other
/// change is printed on stderr, --quiet or not (with --json, as "merged"; after a read of
/// some lines, what became of them and where they are now). --on-change refuse (or
/// FSVIEW_ON_CHANGE=refuse) refuses every such edit as modified.
///
/// Prints a unified diff of each change (with --json, one record per
/// request). A refusal prints its verdict and message on stderr: not_read,
/// processed_view, modified (the gate's), not_found, ambiguous, no_change,
/// file_exists (the edit's), in_use. Exit 0 when every request was applied,
/// 1 when any was refused, 2 on an error: the file is then untouched,
/// unless the message says it was written but its view could not be
/// recorded (--json: "applied": true).
#[derive(Parser, Debug)]
#[command(name = TOOL, version, after_help = EXAMPLES)]
pub struct Args {
    /// Files to edit, each with the same edits (with --requests, none)
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Text to replace (Claude Code's old_string); repeat --old/--new for
    /// several edits. Empty creates a file that does not exist. Note that
    /// "$(...)" drops trailing newlines; use --requests for exact text
    #[arg(
        long,
        value_name = "TEXT",
        allow_hyphen_values = true,
        required_unless_present = "requests"
    )]
    pub old: Vec<String>,

    /// Text to put in its place (Claude Code's new_string)
    #[arg(
        long,
        value_name = "TEXT",
        allow_hyphen_values = true,
        required_unless_present = "requests"
    )]
    pub new: Vec<String>,

    /// Replace every occurrence of each --old (replace_all), not just a
    /// unique one
    #[arg(short = 'a', long)]
    pub all: bool,

    /// Decide and print the diff, but write nothing and record no view
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Read requests as JSON Lines on stdin: {"path", "old_string",
    /// "new_string", "replace_all"} or {"path", "edits": [{"old_string",
    /// "new_string", "replace_all"}, ...]} ("file_path" also names the
    /// path; "replace_all" is optional). A malformed line is named on
    /// stderr (exit 2) and the good ones are still applied
    #[arg(long, conflicts_with_all = ["paths", "old", "new", "all"])]
    pub requests: bool,

    /// When the file changed since it was read: merge an edit that is 3 or
    /// more lines from the change (the default), or refuse every such edit
    /// [env: FSVIEW_ON_CHANGE]
    #[arg(long, value_name = "WHAT", value_parser = ["merge", "refuse"])]
    pub on_change: Option<String>,

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
    #[serde(alias = "file_path")]
    path: PathBuf,
    old_string: Option<String>,
    new_string: Option<String>,
    replace_all: Option<bool>,
    edits: Option<Vec<EditLine>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditLine {
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
}

const LINE_SHAPE: &str = "each line must be an object like {\"path\":\"a.rs\",\"old_string\":\"x\",\"new_string\":\"y\"} or {\"path\":\"a.rs\",\"edits\":[{\"old_string\":\"x\",\"new_string\":\"y\"}]}";

impl RequestLine {
    fn into_request(self) -> Result<Request, String> {
        let edits = match (self.old_string, self.new_string, self.edits) {
            (Some(old), Some(new), None) => vec![Edit {
                old,
                new,
                replace_all: self.replace_all.unwrap_or(false),
            }],
            (None, None, Some(list)) if self.replace_all.is_none() => {
                if list.is_empty() {
                    return Err("\"edits\" is empty; give at least one edit".to_string());
                }
                list.into_iter()
                    .map(|e| Edit {
                        old: e.old_string,
                        new: e.new_string,
                        replace_all: e.replace_all,
                    })
                    .collect()
            }
            (None, None, Some(_)) => {
                return Err("\"replace_all\" goes inside each of \"edits\"".to_string())
            }
            (_, _, Some(_)) => {
                return Err(
                    "give either \"old_string\" and \"new_string\", or \"edits\", not both"
                        .to_string(),
                )
            }
            (None, _, None) => return Err("missing field `old_string`".to_string()),
            (_, None, None) => return Err("missing field `new_string`".to_string()),
        };
        Ok(Request {
            path: self.path,
            change: Change::Edit(edits),
        })
    }
}

fn run(args: &Args) -> Result<Outcome, Stop> {
    let cwd = common::current_dir()?;
    let mut out = Out::new(TOOL, args.common.quiet);
    let requests = if args.requests {
        read_requests(TOOL, |line| {
            serde_json::from_str::<RequestLine>(line)
                .map_err(|e| format!("{e}; {LINE_SHAPE}"))
                .and_then(|r| r.into_request())
        })?
    } else {
        if args.paths.is_empty() {
            return Err(Error::new("no file given; name the file to edit (see --help)").into());
        }
        if args.old.len() != args.new.len() {
            return Err(Error::new(format!(
                "{} --old but {} --new; give one --new for each --old, in order",
                args.old.len(),
                args.new.len()
            ))
            .into());
        }
        let edits: Vec<Edit> = args
            .old
            .iter()
            .zip(&args.new)
            .map(|(old, new)| Edit {
                old: old.clone(),
                new: new.clone(),
                replace_all: args.all,
            })
            .collect();
        args.paths
            .iter()
            .map(|p| {
                Ok(Request {
                    path: p.clone(),
                    change: Change::Edit(edits.clone()),
                })
            })
            .collect()
    };
    let on_change = OnChange::resolve(args.on_change.as_deref().and_then(OnChange::parse))
        .map_err(|e| Stop::from(Error::new(e)))?;
    apply_all(
        TOOL,
        &args.common,
        Apply {
            dry_run: args.dry_run,
            voice: Voice::command_line(args.requests),
            on_change,
        },
        &cwd,
        &requests,
        &mut out,
    )
}

/// How the requests are applied.
pub(crate) struct Apply {
    pub dry_run: bool,
    pub voice: Voice,
    pub on_change: OnChange,
}

/// Parse JSON Lines requests from stdin: each line a request, or why it is
/// not one ("stdin line N: ..."). A line that is not UTF-8 is refused
/// alone; the others still count.
pub(crate) fn read_requests(
    tool: &str,
    parse: impl Fn(&str) -> Result<Request, String>,
) -> Result<Vec<Result<Request, String>>, Stop> {
    let input = common::stdin_bytes(
        "the --requests JSON Lines",
        &format!("pipe them in: {tool} --requests < requests.jsonl"),
    )?;
    Ok(input
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.trim_ascii().is_empty())
        .map(|(n, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            std::str::from_utf8(line)
                .map_err(|e| {
                    format!(
                        "byte 0x{:02X} at column {} is not UTF-8; send JSON Lines as UTF-8",
                        line[e.valid_up_to()],
                        e.valid_up_to() + 1
                    )
                })
                .and_then(&parse)
                .map_err(|e| format!("stdin line {}: {e}", n + 1))
        })
        .collect())
}

/// Apply every request in order and print each report, or the error of a
/// malformed request line where it stood; the worst outcome. The session
/// file is opened for the first good request (created, unless a dry run).
///
/// A closed stdout (`fsview-edit --requests < e.jsonl | head`) stops the
/// printing, not the edits: every request asked for is still applied, and
/// the exit status still says how they went.
pub(crate) fn apply_all(
    tool: &'static str,
    common: &SessionArgs,
    how: Apply,
    cwd: &Path,
    requests: &[Result<Request, String>],
    out: &mut Out,
) -> Result<Outcome, Stop> {
    let Apply {
        dry_run,
        voice,
        on_change,
    } = how;
    let mut store: Option<Option<Store>> = None;
    // A session the file does not hold (a mistyped --sid): said once, and
    // not created by a refusal.
    let mut unknown: Option<String> = None;
    let mut not_read = false;
    let mut outcome = Outcome::Ok;
    let mut stdout = Stdout { out, closed: false };
    let sid = common.sid();
    for req in requests {
        let req = match req {
            Ok(r) => r,
            Err(msg) => {
                outcome = Outcome::Error;
                if common.json {
                    stdout.data(|o| o.json(&json::error(None, msg)))?;
                }
                stdout.out.error(msg);
                continue;
            }
        };
        if store.is_none() {
            // A dry run creates no session file; a write must be recorded.
            store = Some(if dry_run {
                common.inspect(cwd)?
            } else {
                Some(common.open(cwd, tool)?)
            });
            if let Some(Some(s)) = &store {
                unknown = s.unknown_session(&sid)?;
            }
        }
        let cx = Context {
            store: store.as_ref().and_then(Option::as_ref),
            sid: &sid,
            cwd,
            tool,
            dry_run,
            voice,
            unknown_session: unknown.is_some(),
            on_change,
        };
        match fsview_apply::apply(&cx, req) {
            Ok(report) => {
                not_read |= report.verdict == Verdict::Gate(GateVerdict::NotRead);
                let o = print(&mut stdout, common.json, tool, dry_run, &req.path, &report)?;
                outcome = outcome.worst(o);
            }
            Err(e) => {
                outcome = Outcome::Error;
                if common.json {
                    stdout.data(|o| o.json(&json::error(Some(&req.path), e.message())))?;
                }
                stdout.out.error(e.message());
            }
        }
    }
    stdout.data(|o| o.flush())?;
    if let (Some(hint), true) = (&unknown, not_read) {
        stdout.out.notice(&format!(
            "{hint}; it has no views, so every file in it is not_read"
        ));
    }
    Ok(outcome)
}

/// Standard output that may be closed by its reader.
struct Stdout<'a> {
    out: &'a mut Out,
    closed: bool,
}

impl Stdout<'_> {
    /// Write data, unless the reader is gone; a closed pipe is noted, not
    /// an error.
    fn data(&mut self, f: impl FnOnce(&mut Out) -> Result<(), Stop>) -> Result<(), Stop> {
        if self.closed {
            return Ok(());
        }
        match f(self.out) {
            Err(Stop::BrokenPipe) => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// Print one report: the diff (text) or a record (JSON); a refusal's
/// verdict and message on stderr.
fn print(
    stdout: &mut Stdout<'_>,
    json_out: bool,
    tool: &str,
    dry_run: bool,
    path: &Path,
    r: &Report,
) -> Result<Outcome, Stop> {
    let refused = !r.verdict.allowed();
    if json_out {
        let kind = if tool == "fsview-write" {
            "write"
        } else {
            "edit"
        };
        let mut m = json::object(kind);
        json::put_path(&mut m, "path", path);
        json::put_path(&mut m, "canonical", &r.canonical);
        m.insert("applied".into(), r.applied.into());
        m.insert("verdict".into(), r.verdict.as_str().into());
        m.insert(
            "change".into(),
            r.verdict.change().map(|c| c.as_str()).into(),
        );
        m.insert("message".into(), r.message.clone().into());
        m.insert("diff".into(), r.diff.clone().into());
        m.insert("replacements".into(), r.replacements.into());
        m.insert(
            "sha256".into(),
            r.sha256.as_ref().map(fingerprint::hex).into(),
        );
        m.insert("dry_run".into(), dry_run.into());
        m.insert(
            "merged".into(),
            r.merged
                .as_ref()
                .map(|m| {
                    let lines = m.lines.map(|l| {
                        serde_json::json!({ "seen": [l.seen.0, l.seen.1], "now": [l.now.0, l.now.1] })
                    });
                    serde_json::json!({ "diff": m.diff, "writer": m.writer, "lines": lines })
                })
                .into(),
        );
        m.insert("notices".into(), r.notices.clone().into());
        match &r.conflict {
            Some(c) => json::put_path(&mut m, "conflict", c),
            None => {
                m.insert("conflict".into(), Value::Null);
            }
        }
        stdout.data(|o| o.json(&Value::Object(m)))?;
    } else if let Some(diff) = &r.diff {
        stdout.data(|o| o.write(diff))?;
    }
    let out = &mut *stdout.out;
    if refused {
        let p = common::shown(path);
        let msg = escape_bytes(r.message.as_bytes());
        let line = match r.verdict.change() {
            Some(c) => format!("{p}: modified ({}): {msg}", c.as_str()),
            None => format!("{p}: {}: {msg}", r.verdict.as_str()),
        };
        out.error(&line);
    }
    if let Some(m) = &r.merged {
        let by = m
            .writer
            .as_deref()
            .map_or(String::new(), |w| format!(" by {w}"));
        let p = common::shown(path);
        // Even under --quiet: the view now holds that change, so the
        // caller is told it (the JSON's "merged" tells it there).
        let told = match m.lines {
            None => format!(
                "{p}: merged: it had changed since it was read{by}; that change is kept, and the edit was made beside it:\n{}",
                m.diff.trim_end()
            ),
            Some(l) if m.diff.is_empty() => format!(
                "{p}: merged: it had been changed{by} since lines {}-{} were read, outside them (they are lines {}-{} now); that change is kept, and the edit was made beside it",
                l.seen.0, l.seen.1, l.now.0, l.now.1
            ),
            Some(l) => format!(
                "{p}: merged: lines {}-{} had been changed{by} since they were read (they are lines {}-{} now); that change is kept, and the edit was made beside it:\n{}",
                l.seen.0, l.seen.1, l.now.0, l.now.1,
                m.diff.trim_end()
            ),
        };
        out.told(&told, json_out);
    }
    for n in &r.notices {
        out.notice(n);
    }
    if let Some(e) = &r.unrecorded {
        out.error(e.message());
        return Ok(Outcome::Error);
    }
    Ok(if refused {
        Outcome::Negative
    } else {
        Outcome::Ok
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn verify_app() {
        super::command().debug_assert();
    }
}
