//! `ctx-invalidate install-hooks`: the git hooks that clear the git facts.
//!
//! A branch switch, a merge or a rebase changes what ctx-build's system part
//! says (branch, status, commits), yet the memo returns it byte for byte
//! until someone invalidates it. These hooks (post-checkout for a branch
//! checkout, post-merge, post-rewrite) run `ctx-invalidate --system --hook
//! --all-sessions` so the next build tells the agent the new state.
//!
//! They go where git looks for hooks: `git rev-parse --git-path hooks` from
//! the top of the work tree, which honours `core.hooksPath` (a relative one
//! is relative to the top) and worktrees. A hook already there that is not
//! fsview's is kept as `NAME.pre-fsview` and run first by fsview's, with the
//! same arguments and stdin, its exit status the one git sees; installing
//! again only refreshes fsview's hooks; `--uninstall` removes them and puts
//! the kept hooks back. A hook never fails the git command.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use fsview_store::error::plain_io;
use fsview_store::Error;

use crate::common::shown;

/// The hooks, and when each clears the git facts (a shell condition on the
/// hook's arguments).
const HOOKS: [(&str, &str, &str); 3] = [
    (
        "post-checkout",
        r#"[ "${3:-}" = 1 ]"#,
        "after a branch checkout (not a file checkout)",
    ),
    ("post-merge", "true", "after a merge or a pull"),
    ("post-rewrite", "true", "after a rebase or an amend"),
];

/// The first line of every hook fsview wrote. Hooks from before
/// `install-hooks` moved into ctx-invalidate start with `# fsview-hook:`.
const MARKER: &str = "# fsview-git-hook:";
const OLD_MARKER: &str = "# fsview-hook:";

/// What installing or removing did, in the order it happened.
#[derive(Debug, Default)]
pub struct Report {
    /// The hooks directory, as git names it (relative to the top of the work
    /// tree unless core.hooksPath is absolute).
    pub dir: PathBuf,
    /// Hooks that were not fsview's, kept as NAME.pre-fsview.
    pub kept: Vec<String>,
    pub installed: Vec<String>,
    pub removed: Vec<String>,
    /// Kept hooks put back by --uninstall.
    pub restored: Vec<String>,
}

impl Report {
    /// One line a change, for text output.
    pub fn lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        let dir = shown(&self.dir);
        for name in &self.kept {
            v.push(format!(
                "kept the existing {name} as {}; fsview's hook runs it first",
                shown(&self.dir.join(format!("{name}.pre-fsview")))
            ));
        }
        if !self.installed.is_empty() {
            v.push(format!("installed {} in {dir}", self.installed.join(", ")));
        }
        for name in &self.removed {
            if self.restored.contains(name) {
                v.push(format!("removed {name}, restored the hook it chained"));
            } else {
                v.push(format!("removed {name}"));
            }
        }
        if self.installed.is_empty() && self.removed.is_empty() {
            v.push(format!("no fsview hooks in {dir}; nothing to remove"));
        }
        v
    }
}

/// Install fsview's hooks (or with `uninstall`, remove them) in the
/// repository of `cwd`. `ctx_invalidate` is the binary the hooks run first
/// (this one), falling back to the one on PATH when it is gone.
pub fn install(cwd: &Path, uninstall: bool, ctx_invalidate: &Path) -> Result<Report, Error> {
    let top = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|e| match e {
        GitError::Failed => Error::new(
            "not inside a git work tree; cd into the repository whose hooks to install, then rerun",
        ),
        GitError::Run(e) => e,
    })?;
    let dir = git(&top, &["rev-parse", "--git-path", "hooks"]).map_err(|e| match e {
        GitError::Failed => Error::new(format!(
            "git cannot name the hooks directory of {}; check the repository",
            shown(&top)
        )),
        GitError::Run(e) => e,
    })?;
    let abs = top.join(&dir);
    let mut report = Report {
        dir,
        ..Report::default()
    };
    if uninstall {
        for (name, _, _) in HOOKS {
            let dst = abs.join(name);
            if !ours(&dst) {
                continue;
            }
            std::fs::remove_file(&dst).map_err(|e| Error::io("remove", &dst, &e))?;
            let kept = abs.join(format!("{name}.pre-fsview"));
            if exists(&kept) {
                std::fs::rename(&kept, &dst).map_err(|e| Error::io("restore", &kept, &e))?;
                report.restored.push(name.to_string());
            }
            report.removed.push(name.to_string());
        }
        return Ok(report);
    }
    std::fs::create_dir_all(&abs).map_err(|e| Error::io("create the hooks directory", &abs, &e))?;
    // Refuse before changing anything: a hook we could not chain.
    for (name, _, _) in HOOKS {
        let dst = abs.join(name);
        let kept = abs.join(format!("{name}.pre-fsview"));
        if exists(&dst) && !ours(&dst) && exists(&kept) {
            return Err(Error::new(format!(
                "{} is not fsview's and {} exists too; merge them by hand, then rerun",
                shown(&report.dir.join(name)),
                shown(&report.dir.join(format!("{name}.pre-fsview")))
            )));
        }
    }
    for (name, when, what) in HOOKS {
        let dst = abs.join(name);
        if exists(&dst) && !ours(&dst) {
            let kept = abs.join(format!("{name}.pre-fsview"));
            std::fs::rename(&dst, &kept)
                .map_err(|e| Error::io("keep the existing hook", &dst, &e))?;
            report.kept.push(name.to_string());
        }
        let tmp = abs.join(format!("{name}.tmp.{}", std::process::id()));
        let text = hook(name, when, what, ctx_invalidate);
        let written = std::fs::write(&tmp, text)
            .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755)))
            .and_then(|()| std::fs::rename(&tmp, &dst));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(Error::io("write the hook", &dst, &e));
        }
        report.installed.push(name.to_string());
    }
    Ok(report)
}

/// The text of one hook.
fn hook(name: &str, when: &str, what: &str, ctx_invalidate: &Path) -> String {
    format!(
        r#"#!/bin/sh
{MARKER} {name} (installed by `ctx-invalidate install-hooks`)
#
# Clears the memoized system context (git facts) of every fsview session
# of this repository {what}, so the next
# ctx-build tells the agent the new branch and commits. It never fails the
# git command: a hook that was here before fsview runs first, with the same
# arguments and standard input, and its exit status is the one git sees.
# It runs the ctx-invalidate that installed it, else the one on PATH, else
# nothing.
status=0
if [ -x "$0.pre-fsview" ]; then
    "$0.pre-fsview" "$@"
    status=$?
fi
if {when}; then
    fsview={path}
    [ -x "$fsview" ] || fsview=$(command -v ctx-invalidate) || fsview=
    if [ -n "$fsview" ]; then
        "$fsview" --system --hook --all-sessions --reason "git {name}" </dev/null >/dev/null || :
    fi
fi
exit "$status"
"#,
        path = sh_quote(&ctx_invalidate.to_string_lossy()),
    )
}

/// `s` as one shell word.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// Whether the hook at `p` is one fsview wrote.
fn ours(p: &Path) -> bool {
    match std::fs::read(p) {
        Ok(text) => text
            .split(|&b| b == b'\n')
            .any(|l| l.starts_with(MARKER.as_bytes()) || l.starts_with(OLD_MARKER.as_bytes())),
        Err(_) => false,
    }
}

enum GitError {
    /// git ran and said no.
    Failed,
    Run(Error),
}

/// git's one line of output, a path.
fn git(dir: &Path, args: &[&str]) -> Result<PathBuf, GitError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| {
            GitError::Run(Error::new(format!(
                "cannot run git: {}; install git or put it on PATH",
                plain_io(&e)
            )))
        })?;
    if !out.status.success() {
        return Err(GitError::Failed);
    }
    use std::os::unix::ffi::OsStringExt;
    let mut line = out.stdout;
    while line.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        line.pop();
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(line)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_quote_the_binary_path() {
        let h = hook(
            "post-merge",
            "true",
            "after a merge",
            Path::new("/o'k/ctx-invalidate"),
        );
        assert!(h.contains("    fsview='/o'\\''k/ctx-invalidate'\n"), "{h}");
        assert!(h.starts_with("#!/bin/sh\n# fsview-git-hook: post-merge "));
    }
}
