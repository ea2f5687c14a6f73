//! The git facts of the system context, from the real `git`.
//!
//! Every command is `git --no-optional-locks -c core.fsmonitor=false ...`,
//! run directly (no shell, arguments as a vector) in the working directory:
//! it never takes the index lock nor refreshes the index (safe from a git
//! hook, while another git command holds the lock) and never starts an
//! fsmonitor daemon. Filter drivers are switched off too: `status` runs a
//! clean filter (git-lfs, git-crypt, ...) when a file's stat data no longer
//! matches the index, so before `status` the configured drivers are listed
//! (`git config --name-only --get-regexp '^filter\.'`, which reads only
//! config) and `status` gets `-c filter.NAME.clean= -c filter.NAME.process=
//! -c filter.NAME.smudge= -c filter.NAME.required=false` for each. The cost
//! of that choice: a filtered file whose stat data is dirty is compared raw,
//! so it may be listed as modified when a clean filter would have found it
//! unchanged; the status is a snapshot for a prompt, and not running
//! arbitrary filter programs from a hook matters more. Claude Code 2.1.332
//! switches off the drivers of the repository's own configuration (local
//! and worktree scope) too, and then adds a line saying the listing may hold
//! unchanged files; fsview switches off drivers of every scope (a global
//! `git lfs install` included) and adds that line when Claude Code would:
//! drivers of the repository's own configuration were switched off and a
//! changed tracked file is listed.
//!
//! The commands run in parallel threads once `rev-parse
//! --is-inside-work-tree` has said this is a work tree: current branch,
//! default branch, status (cut at 2,000 UTF-16 code units, Claude Code's
//! JavaScript string length; the notice is the renderer's, since its wording
//! changed between versions), last five commits, `user.name`. Outside a work
//! tree there are no facts and no warning; no `git` at all is a warning,
//! never a failure. A `git status` that fails is shown as unknown, not
//! as "(clean)". The status loses trailing white space only, as in
//! Claude Code, so the leading space of a first ` M file` line is kept; the
//! log and the user name are trimmed at both ends.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{GitFacts, SystemContext};

/// The status shown when `git status` failed.
pub const STATUS_FAILED: &str = "(unknown: `git status` failed)";

/// UTF-16 code units of `git status --short` shown at most (Claude Code's
/// 2,000 "characters", as JavaScript counts them).
pub const MAX_STATUS_CHARS: usize = 2000;

/// How to run git: which program, with which extra environment. The default
/// is `git` from `PATH` with the inherited environment; tests set
/// `GIT_CONFIG_GLOBAL` and friends here instead of in the process.
#[derive(Debug, Clone)]
pub struct Git {
    pub program: PathBuf,
    pub envs: Vec<(OsString, OsString)>,
}

impl Default for Git {
    fn default() -> Self {
        Git {
            program: PathBuf::from("git"),
            envs: Vec::new(),
        }
    }
}

struct Output {
    ok: bool,
    stdout: String,
}

impl Git {
    fn run(&self, cwd: &Path, extra_config: &[String], args: &[&str]) -> io::Result<Output> {
        let mut cmd = Command::new(&self.program);
        cmd.arg("--no-optional-locks")
            .args(["-c", "core.fsmonitor=false"]);
        for c in extra_config {
            cmd.arg("-c").arg(c);
        }
        cmd.args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        let out = cmd.output()?;
        Ok(Output {
            ok: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
        })
    }

    /// Trimmed stdout of a successful command; `None` on failure.
    fn text(&self, cwd: &Path, args: &[&str]) -> Option<String> {
        match self.run(cwd, &[], args) {
            Ok(o) if o.ok => Some(o.stdout),
            _ => None,
        }
    }
}

/// The system context for `cwd`, with `git` from `PATH`.
pub fn system_context(cwd: &Path) -> SystemContext {
    system_context_with(cwd, &Git::default())
}

/// The system context for `cwd`, running git as `git` says.
pub fn system_context_with(cwd: &Path, git: &Git) -> SystemContext {
    let mut ctx = SystemContext::default();
    match git.run(cwd, &[], &["rev-parse", "--is-inside-work-tree"]) {
        Ok(o) if o.ok && o.stdout == "true" => {}
        Ok(_) => return ctx, // not a work tree (or a bare repository)
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            ctx.warnings.push(format!(
                "git: {} not found on PATH; no git facts in the context",
                git.program.display()
            ));
            return ctx;
        }
        Err(e) => {
            ctx.warnings.push(format!(
                "git: cannot run {}: {e}; no git facts in the context",
                git.program.display()
            ));
            return ctx;
        }
    }

    let (branch, default_branch, (status, status_truncated, filters_off_note), log, user_name) =
        std::thread::scope(|s| {
            let branch = s.spawn(|| current_branch(git, cwd));
            let default_branch = s.spawn(|| default_branch(git, cwd));
            let status = s.spawn(|| status(git, cwd));
            let log = s.spawn(|| {
                git.text(cwd, &["log", "--oneline", "-n", "5"])
                    .unwrap_or_default()
            });
            let user_name = git
                .text(cwd, &["config", "user.name"])
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty());
            (
                branch.join().unwrap_or_else(|_| "HEAD".into()),
                default_branch.join().unwrap_or_else(|_| "main".into()),
                status.join().unwrap_or((String::new(), false, false)),
                log.join().unwrap_or_default(),
                user_name,
            )
        });
    ctx.git = Some(GitFacts {
        branch,
        default_branch,
        status,
        status_truncated,
        filters_off_note,
        log: log.trim().to_string(),
        user_name,
    });
    ctx
}

fn current_branch(git: &Git, cwd: &Path) -> String {
    if let Some(b) = git.text(cwd, &["rev-parse", "--abbrev-ref", "HEAD"]) {
        return b;
    }
    // No commit yet: HEAD names an unborn branch.
    git.text(cwd, &["symbolic-ref", "--short", "HEAD"])
        .unwrap_or_else(|| "HEAD".to_string())
}

fn default_branch(git: &Git, cwd: &Path) -> String {
    if let Some(r) = git.text(cwd, &["symbolic-ref", "refs/remotes/origin/HEAD"]) {
        if let Some(b) = r.strip_prefix("refs/remotes/origin/") {
            return b.to_string();
        }
    }
    // One process answers both questions: which of the two refs exist.
    let refs = git
        .text(
            cwd,
            &[
                "for-each-ref",
                "--format=%(refname)",
                "refs/remotes/origin/main",
                "refs/remotes/origin/master",
            ],
        )
        .unwrap_or_default();
    let has = |name: &str| refs.lines().any(|l| l == name);
    if has("refs/remotes/origin/main") {
        "main".into()
    } else if has("refs/remotes/origin/master") {
        "master".into()
    } else {
        "main".into()
    }
}

/// The status as shown, whether it was cut, and whether Claude Code's
/// filters-off line applies.
fn status(git: &Git, cwd: &Path) -> (String, bool, bool) {
    let mut config = Vec::new();
    let mut repository_drivers = false;
    if let Some(names) = git.text(
        cwd,
        &[
            "config",
            "--show-scope",
            "--name-only",
            "--get-regexp",
            r"^filter\.",
        ],
    ) {
        let mut drivers: Vec<&str> = Vec::new();
        for line in names.lines() {
            let (scope, name) = line.split_once('\t').unwrap_or(("", line));
            let Some(driver) = name
                .strip_prefix("filter.")
                .and_then(|n| n.rsplit_once('.').map(|(driver, _)| driver))
            else {
                continue;
            };
            repository_drivers |= matches!(scope, "local" | "worktree");
            drivers.push(driver);
        }
        drivers.sort_unstable();
        drivers.dedup();
        for d in drivers {
            for key in ["clean", "smudge", "process"] {
                config.push(format!("filter.{d}.{key}="));
            }
            config.push(format!("filter.{d}.required=false"));
        }
    }
    let args = ["status", "--short", "--ignore-submodules=dirty"];
    // A status that failed (a damaged index) is not an empty one: said as
    // unknown, never as "(clean)", which Claude Code would show.
    let text = match git.run(cwd, &config, &args) {
        Ok(o) if o.ok => o.stdout,
        _ => STATUS_FAILED.to_string(),
    };
    let note = repository_drivers && lists_a_changed_tracked_file(&text);
    let (shown, cut) = cap_status(&text);
    (shown, cut, note)
}

/// Whether a short status lists a file other than an untracked one.
fn lists_a_changed_tracked_file(status: &str) -> bool {
    status
        .lines()
        .any(|l| !l.trim().is_empty() && !l.starts_with("??") && !l.starts_with("## "))
}

/// `status` cut to [`MAX_STATUS_CHARS`] UTF-16 code units, and whether it
/// was cut. A character that would straddle the limit (half of a surrogate
/// pair, where JavaScript would keep a lone surrogate) is left out.
pub fn cap_status(status: &str) -> (String, bool) {
    let mut units = 0;
    for (i, c) in status.char_indices() {
        units += c.len_utf16();
        if units > MAX_STATUS_CHARS {
            return (status[..i].to_string(), true);
        }
    }
    (status.to_string(), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn hermetic() -> Git {
        let env = |k: &str, v: &str| (OsString::from(k), OsString::from(v));
        Git {
            program: PathBuf::from("git"),
            envs: vec![
                env("GIT_CONFIG_GLOBAL", "/dev/null"),
                env("GIT_CONFIG_NOSYSTEM", "1"),
                env("GIT_AUTHOR_NAME", "A U Thor"),
                env("GIT_AUTHOR_EMAIL", "author@example.com"),
                env("GIT_COMMITTER_NAME", "C O Mitter"),
                env("GIT_COMMITTER_EMAIL", "committer@example.com"),
                env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z"),
                env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z"),
            ],
        }
    }

    fn git(g: &Git, dir: &Path, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(dir);
        for (k, v) in &g.envs {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn init(g: &Git, dir: &Path) {
        git(g, dir, &["init", "-q", "-b", "trunk"]);
    }

    #[test]
    fn repo_without_commits() {
        let g = hermetic();
        let tmp = tempfile::tempdir().unwrap();
        init(&g, tmp.path());
        fs::write(tmp.path().join("new.txt"), "x\n").unwrap();
        let ctx = system_context_with(tmp.path(), &g);
        assert!(ctx.warnings.is_empty(), "{:?}", ctx.warnings);
        assert_eq!(
            ctx.git,
            Some(GitFacts {
                branch: "trunk".into(),
                default_branch: "main".into(),
                status: "?? new.txt".into(),
                status_truncated: false,
                filters_off_note: false,
                log: String::new(),
                user_name: None,
            })
        );
    }

    #[test]
    fn repo_with_commits_and_a_modified_file() {
        let g = hermetic();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        init(&g, dir);
        git(&g, dir, &["config", "user.name", "Ada Lovelace"]);
        fs::write(dir.join("a.txt"), "one\n").unwrap();
        git(&g, dir, &["add", "a.txt"]);
        git(&g, dir, &["commit", "-q", "-m", "first"]);
        fs::write(dir.join("a.txt"), "two\n").unwrap();
        let sha = git(&g, dir, &["rev-parse", "--short", "HEAD"]);
        let ctx = system_context_with(dir, &g);
        assert_eq!(
            ctx.git,
            Some(GitFacts {
                branch: "trunk".into(),
                default_branch: "main".into(),
                status: " M a.txt".into(),
                status_truncated: false,
                filters_off_note: false,
                log: format!("{sha} first"),
                user_name: Some("Ada Lovelace".into()),
            })
        );
    }

    #[test]
    fn detached_head_and_origin_master() {
        let g = hermetic();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        init(&g, dir);
        fs::write(dir.join("a.txt"), "one\n").unwrap();
        git(&g, dir, &["add", "a.txt"]);
        git(&g, dir, &["commit", "-q", "-m", "first"]);
        git(
            &g,
            dir,
            &["update-ref", "refs/remotes/origin/master", "HEAD"],
        );
        git(&g, dir, &["checkout", "-q", "--detach"]);
        let facts = system_context_with(dir, &g).git.unwrap();
        assert_eq!(facts.branch, "HEAD");
        assert_eq!(facts.default_branch, "master");
        assert_eq!(facts.status, "");

        git(&g, dir, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
        assert_eq!(
            system_context_with(dir, &g).git.unwrap().default_branch,
            "main"
        );
        git(&g, dir, &["update-ref", "refs/remotes/origin/dev", "HEAD"]);
        git(
            &g,
            dir,
            &[
                "symbolic-ref",
                "refs/remotes/origin/HEAD",
                "refs/remotes/origin/dev",
            ],
        );
        assert_eq!(
            system_context_with(dir, &g).git.unwrap().default_branch,
            "dev"
        );
    }

    #[test]
    fn filter_drivers_are_not_run() {
        let g = hermetic();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        init(&g, dir);
        let marker = dir.join("filter-ran");
        let cmd = format!("touch {} && cat", marker.display());
        git(&g, dir, &["config", "filter.mark.clean", &cmd]);
        git(&g, dir, &["config", "filter.mark.required", "true"]);
        fs::write(dir.join(".gitattributes"), "*.dat filter=mark\n").unwrap();
        fs::write(dir.join("x.dat"), "data\n").unwrap();
        git(&g, dir, &["add", "."]);
        git(&g, dir, &["commit", "-q", "-m", "c"]);
        fs::remove_file(&marker).unwrap();
        // Same content, new stat data: status must look at the content.
        fs::write(dir.join("x.dat"), "data\n").unwrap();
        let facts = system_context_with(dir, &g).git.unwrap();
        assert!(!marker.exists(), "the clean filter ran");
        assert_eq!(facts.branch, "trunk");
        // Unchanged content: no changed file listed, no note.
        assert_eq!((facts.status.as_str(), facts.filters_off_note), ("", false));
        // A changed tracked file listed while the repository's own filter
        // was off: Claude Code's note applies. An untracked file alone
        // does not make it apply.
        fs::write(dir.join("new.txt"), "x\n").unwrap();
        assert!(!system_context_with(dir, &g).git.unwrap().filters_off_note);
        fs::write(dir.join("x.dat"), "other\n").unwrap();
        let facts = system_context_with(dir, &g).git.unwrap();
        assert_eq!(facts.status, " M x.dat\n?? new.txt");
        assert!(facts.filters_off_note);
        assert!(!marker.exists(), "the clean filter ran");
    }

    #[test]
    fn a_global_filter_is_switched_off_without_the_note() {
        let mut g = hermetic();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let global = dir.join("global.gitconfig");
        let marker = dir.join("filter-ran");
        fs::write(
            &global,
            format!(
                "[filter \"mark\"]\n\tclean = touch {} && cat\n\trequired = true\n",
                marker.display()
            ),
        )
        .unwrap();
        g.envs.retain(|(k, _)| k != "GIT_CONFIG_GLOBAL");
        g.envs.push(("GIT_CONFIG_GLOBAL".into(), global.into()));
        let repo = dir.join("repo");
        fs::create_dir(&repo).unwrap();
        init(&g, &repo);
        fs::write(repo.join(".gitattributes"), "*.dat filter=mark\n").unwrap();
        fs::write(repo.join("x.dat"), "data\n").unwrap();
        git(&g, &repo, &["add", "."]);
        git(&g, &repo, &["commit", "-q", "-m", "c"]);
        fs::remove_file(&marker).unwrap();
        fs::write(repo.join("x.dat"), "changed\n").unwrap();
        let facts = system_context_with(&repo, &g).git.unwrap();
        assert_eq!(facts.status, " M x.dat");
        assert!(!facts.filters_off_note);
        assert!(!marker.exists(), "the clean filter ran");
    }

    #[test]
    fn outside_a_work_tree_no_facts_no_warning() {
        let tmp = tempfile::tempdir().unwrap();
        let mut g = hermetic();
        // Keep git from finding a repository above the temp directory.
        g.envs.push((
            "GIT_CEILING_DIRECTORIES".into(),
            tmp.path().parent().unwrap().as_os_str().to_owned(),
        ));
        let ctx = system_context_with(tmp.path(), &g);
        assert_eq!(ctx.git, None);
        assert!(ctx.warnings.is_empty());
    }

    #[test]
    fn no_git_is_a_warning() {
        let tmp = tempfile::tempdir().unwrap();
        let g = Git {
            program: PathBuf::from("/nonexistent/git"),
            envs: vec![],
        };
        let ctx = system_context_with(tmp.path(), &g);
        assert_eq!(ctx.git, None);
        assert_eq!(
            ctx.warnings,
            vec!["git: /nonexistent/git not found on PATH; no git facts in the context"]
        );
    }

    #[test]
    fn status_is_cut_at_2000_utf16_code_units() {
        let long = "?? f\n".repeat(500); // 2,500 characters
        assert_eq!(cap_status(&long), (long[..2000].to_string(), true));
        assert_eq!(cap_status(&long[..2000]), (long[..2000].to_string(), false));
        assert_eq!(cap_status("?? a"), ("?? a".to_string(), false));
        // "é" is one unit, as JavaScript counts: 2,000 of them fit.
        let e = "é".repeat(2001);
        assert_eq!(cap_status(&e), ("é".repeat(2000), true));
        // "😀" is two units: 1,000 fit, and a pair straddling the limit is
        // left out whole.
        let smiles = "😀".repeat(1001);
        assert_eq!(cap_status(&smiles), ("😀".repeat(1000), true));
        let odd = format!("x{}", "😀".repeat(1000));
        assert_eq!(cap_status(&odd), (format!("x{}", "😀".repeat(999)), true));
    }
}
