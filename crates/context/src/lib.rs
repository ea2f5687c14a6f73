//! fsview's fixed context: the git facts and instruction files a conversation
//! starts with, built the way Claude Code builds them, as plain data.
//!
//! This crate reads the disk and runs `git`; it never prints, never stores and
//! never caches. The session store decides what to memoize; the binaries
//! decide what to print. What it promises:
//!
//! - [`system_context`] gathers the git facts Claude Code puts in its system
//!   prompt (branch, default branch, short status capped at 2,000 characters,
//!   last five commits, user name), running git without optional locks and
//!   without filter drivers (see the [`git`] module).
//! - [`user_context`] finds the instruction files in Claude Code's order
//!   (managed, user, then every directory from `/` down to the working
//!   directory, then the auto-memory `MEMORY.md`), follows `@imports`, applies
//!   front matter `paths:` rules and strips block-level HTML comments. Every
//!   injected file carries the exact bytes read from disk and the metadata of
//!   the same open file, so a caller can record it as a view whose kind is
//!   [`Kind::Processed`] when the injected text is not the disk text.
//! - [`nested_for`] is the lazy half: the instruction files below the working
//!   directory, and the conditional rules, that apply to given paths.
//! - [`render_user`] and [`render_system`] give the bytes an agent prepends,
//!   deterministically: the same inputs give the same bytes.
//!
//! Nothing here fails: problems (a missing import, an unreadable file, no
//! `git` on `PATH`) become one-line warnings next to the result.

pub mod comments;
pub mod discover;
pub mod frontmatter;
pub mod git;
pub mod imports;
mod load;
pub mod memory;
pub mod render;

use std::path::{Path, PathBuf};

pub use discover::{nested_for, user_context};
pub use git::{system_context, system_context_with, Git};
pub use render::{contents_block, render_git_status, render_system, render_user};

/// Where to look for instruction files and how to treat them.
#[derive(Debug, Clone)]
pub struct Options {
    /// The working directory of the conversation: the walk for instruction
    /// files ends here, and user and managed `paths:` rules match relative to
    /// it.
    pub cwd: PathBuf,
    /// The project: imports may not leave it unless
    /// [`Options::allow_external_imports`] says so. Usually [`project_root`].
    pub project_root: PathBuf,
    /// The home directory, for `@~/x` imports; `None` makes them warnings.
    pub home: Option<PathBuf>,
    /// Managed policy directory (`/etc/claude-code`): `CLAUDE.md` and
    /// `.claude/rules/**/*.md`.
    pub managed_dir: PathBuf,
    /// User directory (`~/.claude` or `$CLAUDE_CONFIG_DIR`): `CLAUDE.md` and
    /// `rules/**/*.md`.
    pub user_dir: PathBuf,
    /// Other instruction file names read in every directory right after
    /// `CLAUDE.md`, such as `AGENTS.md` or `GEMINI.md`.
    pub extra_names: Vec<String>,
    /// The auto-memory entrypoint (`MEMORY.md`), loaded last and truncated.
    pub memory_file: Option<PathBuf>,
    /// Let `@imports` reach files outside their project.
    pub allow_external_imports: bool,
    /// Absolute paths the agent is about to work on: conditional rules whose
    /// `paths:` match one of them are loaded, and [`nested_for`] walks down
    /// to their directories.
    pub for_paths: Vec<PathBuf>,
}

/// The top of the git work tree holding `cwd` (the nearest directory with a
/// `.git` entry, directory or file), else `cwd` itself. It runs no process.
pub fn project_root(cwd: &Path) -> PathBuf {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        // symlink_metadata: a `.git` symlink still marks a work tree top, and
        // a dangling one is better treated as present than walked past.
        if d.join(".git").symlink_metadata().is_ok() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    cwd.to_path_buf()
}

/// How what was injected relates to the bytes on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The injected text is the disk text (read as UTF-8, lossily).
    Full,
    /// The injected text differs: front matter or HTML comments stripped, or
    /// truncated. Claude Code calls such a view `isPartialView`.
    Processed,
}

impl Kind {
    /// The word used in JSON and in the session store: `full` or `processed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Full => "full",
            Kind::Processed => "processed",
        }
    }
}

/// One instruction file as it was injected.
#[derive(Debug, Clone)]
pub struct InjectedFile {
    /// Canonical path of the file read.
    pub path: PathBuf,
    /// A short machine word for where it came from: `managed`,
    /// `managed-rule`, `user`, `user-rule`, `project`, `rule`, `local`,
    /// `import` or `memory`.
    pub label: String,
    /// Claude Code's description, shown as `Contents of PATH (description):`.
    pub description: String,
    /// Whether [`InjectedFile::text`] is the disk text.
    pub kind: Kind,
    /// What is injected (not trimmed; rendering trims, as Claude Code does).
    pub text: String,
    /// The exact bytes read from disk, from one open of the file.
    pub raw: Vec<u8>,
    /// `fstat` of that same open file, taken before its bytes were read, so
    /// a change racing the read shows up as not fresh later.
    pub meta: std::fs::Metadata,
    /// The canonical path of the file whose `@import` brought this one in.
    pub imported_by: Option<PathBuf>,
    /// A rule with `paths:` in its front matter, loaded because a path
    /// matched.
    pub conditional: bool,
}

/// The instruction files, in injection order, and what went wrong finding
/// them.
#[derive(Debug, Clone, Default)]
pub struct UserContext {
    pub files: Vec<InjectedFile>,
    /// One human-readable line each, naming the file concerned.
    pub warnings: Vec<String>,
}

/// The git part of the context, if any.
#[derive(Debug, Clone, Default)]
pub struct SystemContext {
    /// `None` outside a git work tree or when git could not run.
    pub git: Option<GitFacts>,
    pub warnings: Vec<String>,
}

/// What git said at the start of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitFacts {
    /// Current branch; `HEAD` when detached.
    pub branch: String,
    /// `origin/HEAD`'s branch, else `main` or `master` if origin has it,
    /// else `main`.
    pub default_branch: String,
    /// `git status --short` as shown: at most 2,000 characters, followed by
    /// Claude Code's truncation notice when it was longer. Empty when clean.
    pub status: String,
    /// Whether [`GitFacts::status`] was cut.
    pub status_truncated: bool,
    /// `git log --oneline -n 5`; empty in a repository without commits.
    pub log: String,
    /// `user.name`, when set and not empty.
    pub user_name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_root_finds_git_entry_or_falls_back_to_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let deep = tmp.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(project_root(&deep), deep);
        std::fs::create_dir(tmp.path().join("a/.git")).unwrap();
        assert_eq!(project_root(&deep), tmp.path().join("a"));
        // A worktree has a `.git` file, not a directory.
        std::fs::write(tmp.path().join("a/b/.git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(project_root(&deep), tmp.path().join("a/b"));
    }

    #[test]
    fn kind_words() {
        assert_eq!(Kind::Full.as_str(), "full");
        assert_eq!(Kind::Processed.as_str(), "processed");
    }
}
