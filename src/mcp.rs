//! fsview-mcp's command line: its clap definition, here beside the other
//! tools' so that `--help`, the man page and the completions come from one
//! place. The server itself (tokio and the MCP SDK) is the `fsview-mcp`
//! crate in crates/mcp: no other binary links an async runtime.

use std::path::PathBuf;

use clap::{CommandFactory, Parser};

use crate::common::{self, SessionArgs};

pub const TOOL: &str = "fsview-mcp";

/// The default for --cap: what one read's result holds at most. Clients
/// cut long tool results after the server sent them (Claude Code 2.1.332
/// saves one over 50,000 characters, counted as JSON, to a file and shows
/// the model a 2 KB preview; opencode and Kilo cut past 51,200 bytes), and
/// a view must be what the model was shown, so a read stays under.
pub const DEFAULT_CAP: &str = "48K";

const EXAMPLES: &str = "\
Examples:
  fsview-mcp --sid agent-7                  serve on stdio, the views in session agent-7
  fsview-mcp -C ~/src/app                   paths from ~/src/app, its session file
  fsview-check-edit --sid agent-7 src/lib.rs
                                            the shell sees what the MCP client's model saw
  fsview-session list                       the sessions, fsview-mcp's own (mcp-...) among them
  {\"mcpServers\": {\"fsview\": {\"command\": \"/abs/path/fsview-mcp\"}}}
                                            in an MCP client's configuration (JSON)";

/// Serve fsview's gated file tools to an MCP client over stdio.
///
/// A Model Context Protocol server (JSON-RPC on stdin and stdout, protocol
/// versions 2024-11-05 to 2026-07-28) with five tools, named and shaped as
/// Claude Code's: `read {file_path, offset?, limit?}` shows a file numbered
/// as fsview-read does and records the view once the result is written to
/// the client; `edit {file_path, old_string, new_string, replace_all?}` and
/// `write {file_path, content}` apply a change under the gate, as
/// fsview-edit and fsview-write do (Claude Code's Edit rules, nothing written
/// meanwhile lost, the written text recorded); `changed {}` lists the files
/// no longer as the model saw them, with diffs; `context {for_path?}` gives
/// ctx-build's text. A refusal or a failure is a tool result with `isError`
/// and the message the command-line tool gives; the server keeps serving.
///
/// Sessions: --sid, --session, --agent and their environment variables, as
/// for the other tools, in the same session file, so the shell, the hooks
/// and the MCP client agree. Without --sid (and FSVIEW_SID) each server
/// process is a session of its own, named mcp-YYYYMMDDTHHMMSSZ-PID (said on
/// stderr at start, and to the client in the server's instructions): a
/// client that starts one server per conversation gets one session per
/// conversation.
///
/// Paths: a relative file_path is taken from the server's working
/// directory, or --dir; absolute paths always work. The client's MCP roots
/// are not used: a client may list several, change them mid-session, or
/// have none, and a path must name the same file from read to edit.
///
/// Files that changed since the model saw them (by the user, a formatter,
/// another agent) are told after the result of the model's next tool call,
/// in a second text block, with diffs, each change once, as Claude Code
/// tells them at a turn; the gate then refuses such a file until it is read
/// again. --no-news leaves that to `changed`.
///
/// A read is recorded once its result has been written to the client in
/// full: a client that is gone, or a call cancelled, records nothing. A
/// write or edit is recorded as it is made.
#[derive(Parser, Debug)]
#[command(name = TOOL, version, after_help = EXAMPLES)]
pub struct Args {
    /// Take relative paths from DIR, look for the default session file
    /// there, and give DIR's instruction files [default: the working
    /// directory]
    #[arg(short = 'C', long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Most a read's result holds (suffixes K, M, G): its numbered lines in
    /// bytes, each newline, tab or quote counted twice, as clients count
    /// them. A read over it, or over 2,000 lines, shows the start and says
    /// where to read on. Keep it under what the client passes on whole
    #[arg(long, value_name = "SIZE", default_value = DEFAULT_CAP, env = "FSVIEW_MCP_CAP", value_parser = common::parse_size)]
    pub cap: u64,

    /// Answer a re-read of an unchanged file, already shown to this
    /// session, with a short stub instead of its text. Only for a client
    /// that keeps every earlier result in view (no compaction) and starts
    /// one server per conversation
    #[arg(long)]
    pub stub: bool,

    /// Do not add the files changed since the model saw them to tool
    /// results (the `changed` tool still lists them)
    #[arg(long)]
    pub no_news: bool,

    /// When a file changed since it was read: merge an edit that is 3 or
    /// more lines from the change, and tell the change with the result (the
    /// default), or refuse every such edit [env: FSVIEW_ON_CHANGE]
    #[arg(long, value_name = "WHAT", value_parser = ["merge", "refuse"])]
    pub on_change: Option<String>,

    /// Another instruction file name `context` reads in every directory,
    /// after CLAUDE.md (repeatable), as ctx-build --also
    #[arg(
        long,
        value_name = "NAME",
        env = "FSVIEW_INSTRUCTION_NAMES",
        value_delimiter = ','
    )]
    pub also: Vec<String>,

    #[command(flatten)]
    pub common: SessionArgs,
}

/// The clap command. `--json` (shared by every tool) has no meaning for a
/// server whose stdout is the protocol: it is hidden, and refused.
pub fn command() -> clap::Command {
    Args::command()
        .mut_arg("json", |a| a.hide(true))
        // The default is this server's own session, not `default` (which
        // only marks that no --sid was given).
        .mut_arg("sid", |a| {
            a.hide_default_value(true).help(
                "The session (conversation) within the file; `S/A` names agent A's views in conversation S, as `--sid S --agent A` does [default: this server's own, mcp-YYYYMMDDTHHMMSSZ-PID]",
            )
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn verify_app() {
        super::command().debug_assert();
    }
}
