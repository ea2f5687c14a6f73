//! fsview-mcp: fsview's gated file tools for any MCP client, over stdio.
//!
//! The one async program of fsview: tokio and the official MCP SDK
//! (`rmcp`) stay in this crate. The tools themselves ([`calls`]) are
//! synchronous, on the cores the command-line tools use, and run on
//! blocking threads. [`catalog`] is what a client lists (names, schemas,
//! descriptions) and checks a call's arguments; [`delivery`] records a
//! read's view only once its result is out; [`server`] is the MCP side.
//!
//! The command line (`fsview::mcp::Args`) lives with the other tools'
//! definitions, so that man pages and completions come from one place.

pub mod calls;
pub mod catalog;
pub mod connections;
pub mod delivery;
pub mod server;
pub mod stdio;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::parser::ValueSource;
use rmcp::service::ServerInitializeError;
use rmcp::ServiceExt;

use fsview::common::{self, Outcome, Stop};
use fsview::mcp::{Args, TOOL};
use fsview_store::error::quote;
use fsview_store::Error;

use crate::calls::Desk;
use crate::connections::Connections;
use crate::delivery::{Delivering, Ledger};
use crate::server::Server;
use crate::stdio::Stdio;

pub fn main() -> ExitCode {
    let (mut args, matches): (Args, clap::ArgMatches) =
        common::parse_with_matches(fsview::mcp::command);
    ExitCode::from(common::finish(TOOL, run(&mut args, &matches)))
}

fn run(args: &mut Args, matches: &clap::ArgMatches) -> Result<Outcome, Stop> {
    if args.common.json {
        return Err(Error::new(
            "fsview-mcp speaks MCP (JSON-RPC) on standard output; --json does not apply to it",
        )
        .into());
    }
    let dir = match &args.dir {
        Some(d) => directory(d)?,
        None => common::current_dir()?,
    };
    if matches.value_source("sid") == Some(ValueSource::DefaultValue) {
        args.common.session_id = own_sid();
    }
    // Every connection is opened now (see crate::connections); a session
    // file that cannot be used fails here, with one line.
    let connections = Connections::open(&args.common, &dir, connections::SIZE)?;
    let path = args.common.session_path(&dir)?;
    let session_file = std::fs::canonicalize(&path).unwrap_or(path);
    let ctx_build = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join("ctx-build")))
        .unwrap_or_else(|| PathBuf::from("ctx-build"));
    let on_change = fsview_apply::OnChange::resolve(
        args.on_change
            .as_deref()
            .and_then(fsview_apply::OnChange::parse),
    )
    .map_err(Error::new)?;
    let desk = Desk {
        on_change,
        session: args.common.clone(),
        session_file,
        dir,
        cap: args.cap,
        stub: args.stub,
        news: !args.no_news,
        also: args.also.clone(),
        ctx_build,
        connections: Arc::new(connections),
        telling: Arc::default(),
    };
    if !args.common.quiet {
        eprintln!(
            "{TOOL}: serving session {:?} of {} on stdio; relative paths from {}",
            desk.session.sid(),
            desk.session_file.display(),
            desk.dir.display()
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new(format!("cannot start: {e}")))?;
    let served = runtime.block_on(serve(desk));
    // Not a plain drop: that waits for the thread reading stdin, which a
    // SIGTERM leaves blocked on a client that has not closed it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    served?;
    Ok(Outcome::Ok)
}

/// Serve on stdin and stdout until the client closes the connection.
async fn serve(desk: Desk) -> Result<(), Error> {
    let ledger = Arc::new(Ledger::default());
    let stdio = Stdio::new(tokio::io::stdin(), tokio::io::stdout());
    // Tests of the message limit set a small one (debug builds only).
    #[cfg(debug_assertions)]
    let stdio = match std::env::var("FSVIEW_TEST_MAX_MESSAGE").map(|v| v.parse()) {
        Ok(Ok(max)) => stdio.with_max(max),
        _ => stdio,
    };
    let transport = Delivering::new(stdio, ledger.clone());
    let running = match Server::new(desk, ledger.clone()).serve(transport).await {
        Ok(r) => r,
        // Closed before it began: a client that changed its mind.
        Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => {
            return Err(Error::new(format!(
                "the client did not begin with initialize ({e}); is it an MCP client?"
            )))
        }
    };
    // MCP clients close stdin, wait a moment (2 s in the official SDKs),
    // then send SIGTERM. Answers already written are recorded before the
    // server goes: a view is what was shown, and the record of a result
    // the client has may be waiting for the session file's lock (many
    // servers on one session file, a loaded machine).
    let waiting = running.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        r = &mut waiting => {
            r.map_err(|e| Error::new(format!("the server stopped: {e}")))?;
        }
        () = terminated() => {}
    }
    let _ = tokio::time::timeout(RECORD_GRACE, ledger.settled()).await;
    Ok(())
}

/// How long the server waits, before it exits, for the records of answers
/// already written (the SDKs send SIGKILL 2 s after SIGTERM).
const RECORD_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Resolves on SIGTERM; never, when the handler cannot be set (the
/// default action, exit at once, stays).
async fn terminated() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(_) => std::future::pending().await,
    }
}

/// --dir, checked and made absolute.
fn directory(d: &Path) -> Result<PathBuf, Error> {
    match std::fs::metadata(d) {
        Ok(m) if m.is_dir() => std::fs::canonicalize(d).map_err(|e| Error::io("open --dir", d, &e)),
        Ok(_) => Err(Error::new(format!(
            "--dir {} is not a directory; give the directory paths are taken from",
            quote(d)
        ))),
        Err(e) => Err(Error::io("open --dir", d, &e)),
    }
}

/// The session of a server started without --sid: its own, named for when
/// it started and its process.
fn own_sid() -> String {
    let now = jiff::Timestamp::now();
    format!(
        "mcp-{}-{}",
        now.strftime("%Y%m%dT%H%M%SZ"),
        std::process::id()
    )
}
