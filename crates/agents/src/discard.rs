//! What a git command that discards work-tree changes would lose, asked of
//! git itself ([`crate::shell::discards`] reads the command line).
//!
//! Every question is a read-only git command run in the command's
//! directory with `--no-optional-locks` (no index refresh written behind
//! the user's back): which files hold changes the discard throws away
//! (`git diff --name-only`, `git ls-files --others`), which lines of each
//! (`git diff -U0`), and the diff a refusal shows. Git missing, a directory
//! that is no work tree, an answer that cannot be read: the command is not
//! judged (a command fsview cannot read is allowed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::shell::Loses;

/// Run git in `dir` with `args`; its stdout when it exits 0 (or with one of
/// `ok` codes).
fn git(dir: &Path, args: &[&str], ok: &[i32]) -> Option<Vec<u8>> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .args(["-c", "core.quotepath=off", "-c", "color.ui=never"])
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_EXTERNAL_DIFF")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let code = out.status.code()?;
    (code == 0 || ok.contains(&code)).then_some(out.stdout)
}

/// The top of the work tree `dir` is in.
pub fn top(dir: &Path) -> Option<PathBuf> {
    let out = git(dir, &["rev-parse", "--show-toplevel"], &[])?;
    let s = String::from_utf8(out).ok()?;
    let top = PathBuf::from(s.trim_end_matches('\n'));
    top.is_absolute().then_some(top)
}

/// Whether `word` names a commit in `dir`'s repository.
pub fn is_commit(dir: &Path, word: &str) -> bool {
    git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{word}^{{commit}}"),
        ],
        &[],
    )
    .is_some()
}

fn names(out: Vec<u8>) -> Vec<String> {
    out.split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .filter_map(|n| String::from_utf8(n.to_vec()).ok())
        .collect()
}

/// A file a discard would change, and whether git tracks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    /// Absolute, under the work tree's top.
    pub path: PathBuf,
    pub tracked: bool,
}

/// The files a discard of `paths` (pathspecs relative to `dir`; none: the
/// whole tree) would change, as git lists them. `None` when git cannot
/// tell.
pub fn files(dir: &Path, top: &Path, paths: &[String], loses: &Loses) -> Option<Vec<Lost>> {
    let with_paths = |mut args: Vec<String>| {
        args.push("--".into());
        args.extend(paths.iter().cloned());
        args
    };
    let run = |args: Vec<String>| -> Option<Vec<String>> {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        git(dir, &refs, &[]).map(names)
    };
    let tracked = |rev: Option<&str>| {
        let mut a: Vec<String> = vec!["diff".into(), "--name-only".into(), "-z".into()];
        a.extend(rev.map(String::from));
        run(with_paths(a))
    };
    // Untracked files, not ignored (`dirs`: inside untracked directories
    // too; else those directories are left alone, as `git clean` without
    // -d leaves them).
    let untracked = |dirs: bool| {
        let mut a: Vec<String> = [
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--full-name",
        ]
        .map(String::from)
        .to_vec();
        if !dirs {
            a.push("--directory".into());
        }
        run(with_paths(a)).map(|v| v.into_iter().filter(|n| !n.ends_with('/')).collect())
    };
    // Ignored files each ignored on its own (`.env`, a local config): a
    // whole ignored directory (`target/`, `node_modules/`) is build output,
    // made again by the build, and not looked into.
    let ignored = || {
        let a: Vec<String> = [
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
            "--full-name",
        ]
        .map(String::from)
        .to_vec();
        run(with_paths(a)).map(|v| {
            v.into_iter()
                .filter(|n| !n.ends_with('/'))
                .collect::<Vec<_>>()
        })
    };
    let mut out: Vec<Lost> = Vec::new();
    let mut add = |list: Vec<String>, is_tracked: bool| {
        for n in list {
            let path = top.join(&n);
            if !out.iter().any(|l| l.path == path) {
                out.push(Lost {
                    path,
                    tracked: is_tracked,
                });
            }
        }
    };
    match loses {
        Loses::SinceIndex => add(tracked(None)?, true),
        Loses::SinceCommit {
            rev,
            untracked: u,
            ignored: i,
        } => {
            add(tracked(Some(rev))?, true);
            if *u {
                add(untracked(true)?, false);
            }
            if *i {
                add(ignored()?, false);
            }
        }
        Loses::Untracked {
            dirs,
            ignored: i,
            only_ignored,
        } => {
            // With a pathspec, `git clean` goes into untracked
            // directories whatever -d says.
            if !only_ignored {
                add(untracked(*dirs || !paths.is_empty())?, false);
            }
            if *i || *only_ignored {
                add(ignored()?, false);
            }
        }
        Loses::CheckoutAmbiguous => return None,
    }
    Some(out)
}

/// `path` as named from `dir` (git names an untracked file compared with
/// `--no-index` as it is given).
fn from_dir(dir: &Path, path: &Path) -> String {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match path.strip_prefix(&dir) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => path.to_string_lossy().into_owned(),
    }
}

/// The commit a discard of tracked files restores them from (`None`: the
/// index).
fn rev(loses: &Loses) -> Option<&str> {
    match loses {
        Loses::SinceCommit { rev, .. } => Some(rev),
        _ => None,
    }
}

/// The lines of the file now that the discard throws away: each hunk's
/// lines on the work tree's side, 1-based and inclusive. `None` when git
/// shows no lines (a binary file): all of it.
pub fn lines(dir: &Path, lost: &Lost, loses: &Loses) -> Option<Vec<(u64, u64)>> {
    let path = from_dir(dir, &lost.path);
    let out = if lost.tracked {
        let mut a = vec!["diff", "-U0", "--no-ext-diff", "--no-textconv"];
        a.extend(rev(loses));
        a.extend(["--", &path]);
        git(dir, &a, &[])?
    } else {
        let a = [
            "diff",
            "-U0",
            "--no-index",
            "--no-ext-diff",
            "--",
            "/dev/null",
            &path,
        ];
        git(dir, &a, &[1])?
    };
    let text = String::from_utf8_lossy(&out);
    if text.lines().any(|l| l.starts_with("Binary files ")) {
        return None;
    }
    let mut ranges = Vec::new();
    for l in text.lines() {
        let Some(rest) = l.strip_prefix("@@ -") else {
            continue;
        };
        let new = rest.split(' ').nth(1)?.strip_prefix('+')?;
        let (start, count) = match new.split_once(',') {
            Some((s, c)) => (s.parse::<u64>().ok()?, c.parse::<u64>().ok()?),
            None => (new.parse::<u64>().ok()?, 1),
        };
        if count > 0 {
            ranges.push((start, start + count - 1));
        }
    }
    Some(ranges)
}

/// The diff of what a discard of `lost` throws away, in git's words,
/// capped at `max` lines (a marker says how many more).
pub fn diff(dir: &Path, lost: &Lost, loses: &Loses, max: usize) -> String {
    let path = from_dir(dir, &lost.path);
    let out = if lost.tracked {
        let mut a = vec!["diff", "--no-ext-diff", "--no-textconv"];
        a.extend(rev(loses));
        a.extend(["--", &path]);
        git(dir, &a, &[])
    } else {
        let a = [
            "diff",
            "--no-index",
            "--no-ext-diff",
            "--",
            "/dev/null",
            &path,
        ];
        git(dir, &a, &[1])
    };
    let text = String::from_utf8_lossy(&out.unwrap_or_default()).into_owned();
    let total = text.lines().count();
    if total <= max {
        return text;
    }
    let mut cut: String = text.lines().take(max).flat_map(|l| [l, "\n"]).collect();
    cut.push_str(&format!("[{} lines truncated]\n", total - max));
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, script: &str) {
        let ok = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap()
            .success();
        assert!(ok, "{script}");
    }

    #[test]
    fn what_a_discard_would_lose() {
        let d = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(d.path()).unwrap();
        sh(
            &dir,
            "git init -q && printf 'a\\nb\\nc\\nd\\n' > f.txt && echo '/target/' > .gitignore && echo '.env' >> .gitignore && git add . && git commit -qm init",
        );
        sh(
            &dir,
            "printf 'a\\nB\\nc\\nd\\ne\\n' > f.txt && echo new > u.txt && mkdir -p target sub && echo o > target/o && echo s > .env && echo x > sub/x",
        );
        let top = top(&dir).unwrap();
        assert_eq!(top, dir);
        let head = Loses::SinceCommit {
            rev: "HEAD".into(),
            untracked: false,
            ignored: false,
        };
        let t = |p: &str, tracked| Lost {
            path: dir.join(p),
            tracked,
        };
        assert_eq!(files(&dir, &top, &[], &head), Some(vec![t("f.txt", true)]));
        assert_eq!(
            lines(&dir, &t("f.txt", true), &head),
            Some(vec![(2, 2), (5, 5)])
        );
        assert_eq!(lines(&dir, &t("u.txt", false), &head), Some(vec![(1, 1)]));
        let clean = |dirs, ignored, only_ignored| Loses::Untracked {
            dirs,
            ignored,
            only_ignored,
        };
        assert_eq!(
            files(&dir, &top, &[], &clean(false, false, false)),
            Some(vec![t("u.txt", false)])
        );
        assert_eq!(
            files(&dir, &top, &[], &clean(true, false, false)),
            Some(vec![t("sub/x", false), t("u.txt", false)])
        );
        assert_eq!(
            files(&dir, &top, &[], &clean(false, true, false)),
            Some(vec![t("u.txt", false), t(".env", false)])
        );
        assert_eq!(
            files(&dir, &top, &["sub".into()], &clean(true, false, false)),
            Some(vec![t("sub/x", false)])
        );
        assert!(is_commit(&dir, "HEAD"));
        assert!(!is_commit(&dir, "f.txt"));
        assert!(diff(&dir, &t("f.txt", true), &head, 100).contains("-b\n+B\n"));
    }
}
