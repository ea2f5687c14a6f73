//! The fsview command-line tools.
//!
//! Each tool is a module with a `command()` (its clap definition, used for
//! `--help`, man pages and completions) and a `main()` returning the exit
//! status, which the thin binary runs through [`main!`] (see [`start`]).
//! What every tool shares (the session options, the JSON envelope, the one
//! place an outcome becomes an exit code) lives in [`common`] and
//! [`json`].

pub mod check_edit;
pub mod common;
pub mod ctx_build;
pub mod ctx_invalidate;
pub mod edit;
pub mod git_hooks;
pub mod hook;
pub mod json;
pub mod mcp;
pub mod read;
pub mod session;
pub mod start;
pub mod usage;
pub mod write;

/// Every tool's clap command as `--help` shows it (with its exit status),
/// for man pages and completions.
pub fn commands() -> Vec<clap::Command> {
    vec![
        read::command(),
        check_edit::command(),
        edit::command(),
        write::command(),
        ctx_build::command(),
        ctx_invalidate::command(),
        session::command(),
        hook::command(),
        mcp::command(),
    ]
    .into_iter()
    .map(common::with_exit_status)
    .collect()
}
