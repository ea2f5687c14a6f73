//! ctx-invalidate: clear what the session cached, explicitly.
//!
//! The memoized context stays byte-stable until somebody says otherwise;
//! this is how they say it: clear the system part, the user part or both,
//! set or remove a system-prompt injection (which clears both), forget
//! views, or reset the whole session. Every change is one transaction and
//! leaves an event with the reason in the session's log.
//!
//! It is made to run from git hooks: it never creates a session file just
//! to clear it (no file means nothing is cached: it exits 0 quietly), and
//! `--hook` keeps it silent.

use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};
use serde_json::Value;

use fsview_store::fingerprint::Stat;
use fsview_store::memo::{ForgetPath, Parts};
use fsview_store::paths::{self, Resolved};
use fsview_store::{Error, Store};

use crate::common::{self, Out, Outcome, SessionArgs, Stop};
use crate::{git_hooks, json};

const TOOL: &str = "ctx-invalidate";

const EXAMPLES: &str = "\
Examples:
  ctx-invalidate                             clear the system and user context
  ctx-invalidate --system --reason 'branch switched'
                                             clear the git facts only, with a reason
  ctx-invalidate --injection 'cache-break: 2' --reason debugging
                                             the next ctx-build carries the injection
  ctx-invalidate --injection ''              remove the injection
  ctx-invalidate --forget src/main.rs        the agent must read it again before editing
  git diff --name-only -z | ctx-invalidate -0 --forget -
                                             forget the files a diff touched
  ctx-invalidate --forget                    forget every view of the session
  ctx-invalidate --reset                     forget the whole session, like /clear
  ctx-invalidate --system --hook --all-sessions --reason 'git post-checkout'
                                             what the git hooks run
  ctx-invalidate install-hooks               install those hooks in this repository
  ctx-invalidate install-hooks --uninstall   remove them, restoring the hooks they chained";

/// Clear the session's memoized context, forget views, or reset it.
///
/// By default both memoized parts are cleared (the next ctx-build is a
/// miss); --system or --user clears one. Clearing the user part also
/// drops the views its build recorded of the instruction files it
/// injected (the text at the front of every request is replaced when it is
/// built again, which records what it injects then). --injection TEXT stores a
/// system-prompt injection that the next ctx-build puts in the system part
/// (`cacheBreaker: [CACHE_BREAKER: TEXT]`), and clears both parts, like
/// Claude Code's setSystemPromptInjection; an empty TEXT removes it.
/// --forget forgets views (of the given paths, or all), so the edit gate
/// asks for a read again; instruction files already given stay given.
/// --reset forgets the whole session: views, memoized parts, the injection
/// and the instruction files given, like /clear. --reason is recorded with
/// each change in the session's event log.
///
/// When the session file does not exist nothing is cached: ctx-invalidate
/// exits 0 without creating it (except to store an --injection). Nor is
/// anything cached for a session the file does not hold: it says so on
/// stderr, naming the nearest ids, and exits 0 without making that
/// session (again except for an --injection). --hook,
/// for git hooks, prints nothing on stdout and never creates the file.
///
/// `ctx-invalidate install-hooks` installs git hooks (post-checkout on a
/// branch switch, post-merge, post-rewrite) that run `ctx-invalidate
/// --system --hook --all-sessions`, in the hooks directory git uses
/// (core.hooksPath and worktrees included). A hook already there is kept as
/// NAME.pre-fsview and run first, its exit status kept; `--uninstall`
/// removes fsview's hooks and puts the kept ones back.
#[derive(Parser, Debug)]
#[command(
    name = TOOL,
    version,
    after_help = EXAMPLES,
    args_conflicts_with_subcommands = true
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Cmd>,

    /// Clear the system part (git facts, injection)
    #[arg(long)]
    pub system: bool,

    /// Clear the user part (instruction files, date)
    #[arg(long)]
    pub user: bool,

    /// Why, recorded in the session's event log
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Set the system-prompt injection of the next builds ('' removes it);
    /// clears both parts
    #[arg(long, value_name = "TEXT", conflicts_with_all = ["system", "user"])]
    pub injection: Option<String>,

    /// Forget the views of these files (all views when none is given); `-`
    /// reads paths from stdin, one per line
    #[arg(long, value_name = "PATH", num_args = 0..)]
    pub forget: Option<Vec<PathBuf>>,

    /// Paths on stdin (`-`) are separated by NUL bytes, as from `git diff -z`
    #[arg(short = '0', long = "null", requires = "forget")]
    pub null: bool,

    /// Forget the whole session: views, memoized parts, injection and
    /// the instruction files given
    #[arg(long, conflicts_with_all = ["system", "user", "injection", "forget"])]
    pub reset: bool,

    /// Act on every session in the session file, not only --sid
    #[arg(long)]
    pub all_sessions: bool,

    /// Running from a git hook: print nothing on stdout, never create the
    /// session file
    #[arg(long)]
    pub hook: bool,

    #[command(flatten)]
    pub common: SessionArgs,
}

/// What ctx-invalidate does besides invalidating.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Install git hooks (post-checkout, post-merge, post-rewrite) that
    /// clear the git facts of every session of the repository
    InstallHooks {
        /// Remove fsview's hooks and restore the hooks they chained
        #[arg(long)]
        uninstall: bool,
    },
}

pub fn command() -> clap::Command {
    Args::command()
}

pub fn main() -> u8 {
    let args: Args = common::parse(command);
    common::finish(TOOL, run(&args))
}

/// A path to forget, resolved.
struct Target {
    canonical: PathBuf,
    stat: Option<Stat>,
}

fn run(args: &Args) -> Result<Outcome, Stop> {
    let cwd = common::current_dir()?;
    if let Some(Cmd::InstallHooks { uninstall }) = &args.command {
        return install_hooks(args, &cwd, *uninstall);
    }
    let mut out = Out::new(TOOL, args.common.quiet || args.hook);
    let create = args.injection.is_some() && !args.hook;
    let store = if create {
        args.common.open(&cwd, TOOL)?
    } else {
        match args.common.open_existing(&cwd, TOOL)? {
            Some(s) => s,
            // No session file: nothing is cached, nothing to forget.
            None => return Ok(Outcome::Ok),
        }
    };
    let targets = match &args.forget {
        Some(given) if !given.is_empty() => Some(resolve_all(&cwd, given, args.null)?),
        _ => None,
    };
    let sids = if args.all_sessions {
        store.sessions()?
    } else {
        vec![args.common.sid()]
    };
    for sid in &sids {
        // A session the file does not hold has nothing cached to clear:
        // none is made for it (a mistyped --sid), and it is said. Setting
        // an injection ahead of a session's first build is the exception.
        if args.injection.is_none() && !args.all_sessions {
            if let Err(e) = store.require_session(sid) {
                if args.common.json {
                    let mut m = json::object("invalidate");
                    m.insert("sid".into(), sid.clone().into());
                    m.insert("cleared".into(), Vec::<String>::new().into());
                    m.insert("injection".into(), Value::Null);
                    m.insert("forgot".into(), 0.into());
                    m.insert("reset".into(), false.into());
                    m.insert("reason".into(), args.reason.clone().into());
                    out.json(&Value::Object(m))?;
                }
                out.notice(&format!(
                    "{}; nothing was cached for it, so nothing was cleared",
                    e.message()
                ));
                continue;
            }
        }
        let report = apply(args, &store, sid, targets.as_deref())?;
        if args.common.json {
            let mut m = json::object("invalidate");
            m.insert("sid".into(), sid.clone().into());
            m.insert("cleared".into(), report.cleared.clone().into());
            m.insert("injection".into(), report.injection.clone().into());
            m.insert("forgot".into(), report.forgot.into());
            m.insert("reset".into(), args.reset.into());
            m.insert("reason".into(), args.reason.clone().into());
            out.json(&Value::Object(m))?;
        } else if !args.hook {
            let prefix = if args.all_sessions {
                format!("session {}: ", fsview_store::error::quote_id(sid))
            } else {
                String::new()
            };
            for line in report.lines() {
                out.write(&format!("{prefix}{line}\n"))?;
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

fn install_hooks(args: &Args, cwd: &std::path::Path, uninstall: bool) -> Result<Outcome, Stop> {
    let mut out = Out::new(TOOL, args.common.quiet);
    let me = std::env::current_exe().map_err(|e| {
        Error::new(format!(
            "cannot find the ctx-invalidate binary the hooks should run: {}",
            fsview_store::error::plain_io(&e)
        ))
    })?;
    let report = git_hooks::install(cwd, uninstall, &me)?;
    if args.common.json {
        let mut m = json::object(if uninstall {
            "uninstall-hooks"
        } else {
            "install-hooks"
        });
        json::put_path(&mut m, "dir", &report.dir);
        if uninstall {
            m.insert("removed".into(), report.removed.clone().into());
            m.insert("restored".into(), report.restored.clone().into());
        } else {
            m.insert("installed".into(), report.installed.clone().into());
            m.insert("kept".into(), report.kept.clone().into());
            json::put_path(&mut m, "runs", &me);
        }
        out.json(&Value::Object(m))?;
    } else if !args.common.quiet {
        for line in report.lines() {
            out.write(&format!("{line}\n"))?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

fn resolve_all(cwd: &std::path::Path, given: &[PathBuf], nul: bool) -> Result<Vec<Target>, Error> {
    let mut targets = Vec::new();
    for p in common::paths_from("ctx-invalidate --forget -", given, nul)? {
        targets.push(match paths::resolve(cwd, &p)? {
            Resolved::Existing { canonical, meta } => Target {
                canonical,
                stat: Some(Stat::of(&meta)),
            },
            Resolved::Missing { canonical } => Target {
                canonical,
                stat: None,
            },
        });
    }
    Ok(targets)
}

/// What was done to one session.
#[derive(Default)]
struct Report {
    cleared: Vec<&'static str>,
    /// Some(text) when an injection was set, Some("") when removed.
    injection: Option<String>,
    forgot: Option<usize>,
    reset: bool,
}

impl Report {
    fn lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.reset {
            v.push("reset the session: views, context, injection and loaded files".to_string());
            return v;
        }
        match self.injection.as_deref() {
            Some("") => v.push("removed the injection".to_string()),
            Some(_) => v.push("set the injection".to_string()),
            None => {}
        }
        if let Some(n) = self.forgot {
            let files = if n == 1 { "file" } else { "files" };
            v.push(format!("forgot the views of {n} {files}"));
        }
        match self.cleared.as_slice() {
            [] => {}
            [one] => v.push(format!("cleared the {one} context")),
            _ => v.push("cleared the system and user context".to_string()),
        }
        v
    }
}

fn apply(
    args: &Args,
    store: &Store,
    sid: &str,
    targets: Option<&[Target]>,
) -> Result<Report, Stop> {
    let reason = args.reason.as_deref();
    let mut report = Report::default();
    if args.reset {
        store.reset(sid, reason)?;
        report.reset = true;
        report.cleared = vec!["system", "user"];
        return Ok(report);
    }
    if let Some(text) = &args.injection {
        let injection = (!text.is_empty()).then_some(text.as_str());
        store.set_injection(sid, injection, reason)?;
        report.injection = Some(text.clone());
        report.cleared = vec!["system", "user"];
    }
    if args.forget.is_some() {
        let paths: Option<Vec<ForgetPath<'_>>> = targets.map(|ts| {
            ts.iter()
                .map(|t| ForgetPath {
                    path: &t.canonical,
                    stat: t.stat,
                })
                .collect()
        });
        report.forgot = Some(store.forget(sid, paths.as_deref(), reason)?);
    }
    let explicit = args.system || args.user;
    let parts = if explicit {
        Parts {
            system: args.system,
            user: args.user,
        }
    } else if args.injection.is_none() && args.forget.is_none() {
        Parts {
            system: true,
            user: true,
        }
    } else {
        Parts {
            system: false,
            user: false,
        }
    };
    store.invalidate(sid, parts, reason)?;
    if parts.system {
        report.cleared.push("system");
    }
    if parts.user {
        report.cleared.push("user");
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    #[test]
    fn verify_app() {
        super::command().debug_assert();
    }
}
