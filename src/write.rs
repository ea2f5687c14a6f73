//! fsview-write: replace a whole file with new content under the gate, so
//! that nothing anyone else wrote meanwhile is lost.
//!
//! Arguments and printing only; the work is `fsview_apply::apply`, shared
//! with fsview-edit and the MCP server.

use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use serde::Deserialize;

use fsview_apply::edits::Voice;
use fsview_apply::{Change, OnChange, Request};
use fsview_store::Error;

use crate::common::{self, Out, Outcome, SessionArgs, Stop};
use crate::edit;

const TOOL: &str = "fsview-write";

const EXAMPLES: &str = "\
Examples:
  printf '%s\\n' \"$new_text\" | fsview-write src/lib.rs
                                            replace the file; needs a fresh full view
  fsview-write --content draft.rs src/lib.rs
                                            the new content from a file
  fsview-write new/mod.rs < mod.rs          create a file (and its directories); no read needed
  fsview-write --dry-run src/lib.rs < new.rs
                                            the diff only; nothing written
  fsview-write --requests < writes.jsonl    one {\"path\":\"a.rs\",\"content\":\"...\"} per line";

/// Replace a whole file with new content, under the gate, and record what
/// was written.
///
/// The gate comes first, as `fsview-check-edit --write` decides it: the
/// agent must have a fresh `full` view of the file (a range or the start is
/// not enough: `start_only`); a file that does not exist needs none, and its
/// missing directories are created. The check and the write are one step:
/// the file is locked against other fsview writers, its bytes are checked
/// against the view, the new file is written beside it, flushed and swapped
/// in, and a change that landed meanwhile makes it `modified` instead of
/// being overwritten. A file another program has open for writing (a
/// shell's `>>`, a logger) is refused `in_use`: it would go on writing to
/// the replaced file. The content is written as given (its line endings
/// too); the file keeps its encoding (UTF-16 stays UTF-16), its byte-order
/// mark, and what `cp -a` keeps: mode, owner, ACLs and extended attributes,
/// taken just before the swap. A file a new one cannot stand in for (a
/// group you are not in, a bind-mounted file) is written in place, and a
/// notice says so. The written text becomes a `full` view (source
/// `write`).
///
/// A symbolic link is followed: its target is replaced and the link stays
/// a link. A file with other hard links is replaced by a new file, so the
/// other names keep the old text (a notice says so). A process killed, or a
/// machine that crashes, at any moment leaves the old file or the new one,
/// never a mix. Nothing another program wrote is deleted: a version that
/// cannot stay at the path is kept beside it as NAME.fsview-conflict-TIME-PID
/// (named in the message), and a write interrupted by a crash may leave
/// .NAME.fsview-PID-N.tmp holding the other version, which the next write
/// of the file names: compare before deleting. A file no one may write
/// (mode without a w bit) or marked immutable or append-only is refused,
/// for root too. See docs/apply.md.
///
/// Prints a unified diff of the change (with --json, one record per
/// request). A refusal prints its verdict and message on stderr. Exit 0
/// when every write was applied, 1 when any was refused, 2 on an error: the
/// file is then untouched, unless the message says it was written but its
/// view could not be recorded (--json: "applied": true).
#[derive(Parser, Debug)]
#[command(name = TOOL, version, after_help = EXAMPLES)]
pub struct Args {
    /// The file to write (with --requests, none)
    #[arg(value_name = "PATH", required_unless_present = "requests")]
    pub path: Option<PathBuf>,

    /// Read the new content from FILE instead of stdin (`-` is stdin)
    #[arg(long, value_name = "FILE")]
    pub content: Option<PathBuf>,

    /// Decide and print the diff, but write nothing and record no view
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Read requests as JSON Lines on stdin: {"path": "a.rs", "content":
    /// "..."} ("file_path" also names the path). A malformed line is named
    /// on stderr (exit 2) and the good ones are still written
    #[arg(long, conflicts_with_all = ["path", "content"])]
    pub requests: bool,

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
    content: String,
}

fn run(args: &Args) -> Result<Outcome, Stop> {
    let cwd = common::current_dir()?;
    let mut out = Out::new(TOOL, args.common.quiet);
    let requests = if args.requests {
        edit::read_requests(TOOL, |line| {
            serde_json::from_str::<RequestLine>(line)
                .map(|r| Request {
                    path: r.path,
                    change: Change::Write(r.content.into_bytes()),
                })
                .map_err(|e| {
                    format!("{e}; each line must be an object like {{\"path\":\"a.rs\",\"content\":\"...\"}}")
                })
        })?
    } else {
        let path = args.path.clone().expect("clap requires PATH");
        vec![Ok(Request {
            path,
            change: Change::Write(content(args)?),
        })]
    };
    edit::apply_all(
        TOOL,
        &args.common,
        edit::Apply {
            dry_run: args.dry_run,
            voice: Voice::command_line(args.requests),
            // A whole-file write is never merged.
            on_change: OnChange::Refuse,
        },
        &cwd,
        &requests,
        &mut out,
    )
}

/// The new content: --content FILE, else stdin (never a terminal).
fn content(args: &Args) -> Result<Vec<u8>, Error> {
    match &args.content {
        Some(f) if f.as_os_str() != "-" => {
            let mut file =
                std::fs::File::open(f).map_err(|e| Error::io("read --content", f, &e))?;
            let shown = common::shown(f);
            common::read_most(&mut file, "the new content", &shown)
        }
        _ => common::stdin_bytes(
            "the new content",
            "pipe it in (printf 'fn main() {}\\n' | fsview-write src/main.rs), or give --content FILE",
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn verify_app() {
        super::command().debug_assert();
    }
}
