//! Where the session file lives when nobody says.
//!
//! In order: `--session FILE`, `$FSVIEW_SESSION` (both handed in by the
//! caller), `fsview/session.db` inside the git directory of the current work
//! tree (the common git directory for a linked worktree, so every worktree of
//! a repository shares one file), else `$XDG_STATE_HOME/fsview/session.db`
//! (`~/.local/state/fsview/session.db`). The git directory is found by
//! walking up from the working directory, as git does, without running git:
//! this sits on every call's start-up path.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{quote, Error, Result};

/// The session file for `explicit` (from `--session` or `$FSVIEW_SESSION`),
/// else the default for `cwd`.
pub fn session_path(explicit: Option<&Path>, cwd: &Path) -> Result<PathBuf> {
    if let Some(p) = explicit {
        if p.as_os_str().is_empty() {
            return Err(Error::new(
                "the session path is empty; pass --session FILE or unset FSVIEW_SESSION",
            ));
        }
        return Ok(cwd.join(p));
    }
    if let Some(git) = common_git_dir(cwd) {
        return Ok(git.join("fsview").join("session.db"));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home().map(|h| h.join(".local").join("state")));
    match state {
        Some(dir) => Ok(dir.join("fsview").join("session.db")),
        None => Err(Error::new(
            "cannot choose a session file: not in a git work tree and neither XDG_STATE_HOME nor HOME is set; pass --session FILE",
        )),
    }
}

/// A session path given explicitly (`--session`, `$FSVIEW_SESSION`) must
/// be in a directory that exists: only the default location is created
/// with its directories, so a typo is an error, not a new directory tree
/// holding an empty session. `given` is the path as given, to name the
/// setting to fix.
pub fn check_explicit_dir(path: &Path, given: &Path) -> Result<()> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    if std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    let origin = match std::env::var_os("FSVIEW_SESSION") {
        Some(v) if Path::new(&v) == given => "FSVIEW_SESSION",
        _ => "--session",
    };
    // The nearest thing that exists on the way: a file where a directory
    // should be is named as such.
    let blocker = dir
        .ancestors()
        .find(|a| std::fs::metadata(a).is_ok())
        .filter(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()));
    Err(Error::new(match blocker {
        Some(file) => format!(
            "cannot create the session file {}: {} is not a directory; fix {origin}",
            quote(path),
            quote(file)
        ),
        None => format!(
            "cannot create the session file {}: directory {} does not exist; create it first, or fix {origin}",
            quote(path),
            quote(dir)
        ),
    }))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The common git directory for `cwd`: `$GIT_COMMON_DIR` or `$GIT_DIR` when
/// set (as inside a git hook), else the `.git` found walking up.
pub fn common_git_dir(cwd: &Path) -> Option<PathBuf> {
    if let Some(common) = env_path("GIT_COMMON_DIR") {
        return Some(cwd.join(common));
    }
    let git_dir = match env_path("GIT_DIR") {
        Some(d) => cwd.join(d),
        None => find_git_dir(cwd)?,
    };
    Some(match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(s) => git_dir.join(s.trim_end_matches(['\n', '\r'])),
        Err(_) => git_dir,
    })
}

fn env_path(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The git directory of the work tree holding `cwd`, found as git finds it:
/// a `.git` directory, or a `.git` file saying `gitdir: PATH`, that holds a
/// `HEAD` (git walks past a stray empty `.git`, and so does fsview, rather
/// than put the session file in it).
fn find_git_dir(cwd: &Path) -> Option<PathBuf> {
    find_work_tree(cwd).map(|(_, git_dir)| git_dir)
}

/// The top of the git work tree holding `cwd` (the folder whose `.git`
/// [`find_git_dir`] takes), or `None` outside one.
pub fn work_tree_top(cwd: &Path) -> Option<PathBuf> {
    find_work_tree(cwd).map(|(top, _)| top)
}

/// The top of the work tree holding `cwd` and its git directory.
fn find_work_tree(cwd: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        let dot_git = d.join(".git");
        if let Ok(meta) = std::fs::metadata(&dot_git) {
            let git_dir = if meta.is_dir() {
                Some(dot_git)
            } else {
                std::fs::read_to_string(&dot_git)
                    .ok()
                    .and_then(|s| s.strip_prefix("gitdir:").map(|rest| d.join(rest.trim())))
            };
            if let Some(g) = git_dir.filter(|g| g.join("HEAD").is_file()) {
                return Some((d.to_path_buf(), g));
            }
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_worktree_common_dir() {
        let t = tempfile::tempdir().unwrap();
        let main = t.path().join("repo/.git");
        std::fs::create_dir_all(main.join("worktrees/wt")).unwrap();
        std::fs::write(main.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(main.join("worktrees/wt/HEAD"), "ref: refs/heads/wt\n").unwrap();
        std::fs::write(main.join("worktrees/wt/commondir"), "../..\n").unwrap();
        let wt = t.path().join("wt");
        std::fs::create_dir_all(wt.join("sub")).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", main.join("worktrees/wt").display()),
        )
        .unwrap();
        let got = find_git_dir(&wt.join("sub")).unwrap();
        assert_eq!(got, main.join("worktrees/wt"));
        let common = std::fs::read_to_string(got.join("commondir")).unwrap();
        assert_eq!(
            std::fs::canonicalize(got.join(common.trim())).unwrap(),
            std::fs::canonicalize(&main).unwrap()
        );
    }

    #[test]
    fn walks_past_a_git_dir_without_head() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        // A stray, empty `.git` between the work tree's top and cwd.
        let inner = repo.join("sub");
        std::fs::create_dir_all(inner.join(".git")).unwrap();
        std::fs::create_dir_all(inner.join("deeper")).unwrap();
        assert_eq!(find_git_dir(&inner.join("deeper")), Some(repo.join(".git")));
        assert_eq!(work_tree_top(&inner.join("deeper")), Some(repo.clone()));
        // Nothing but stray ones: no git directory at all.
        let lone = t.path().join("lone");
        std::fs::create_dir_all(lone.join(".git")).unwrap();
        assert_eq!(find_git_dir(&lone), None);
    }
}
