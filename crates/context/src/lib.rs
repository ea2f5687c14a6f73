//! fsview's fixed context: the git facts and instruction files a conversation
//! starts with, built the way Claude Code builds them, as plain data.
//!
//! "The way Claude Code builds them" means what the real binary was seen to
//! send: Claude Code 2.1.332, captured on the fixture of
//! `tests/fixtures/context/` (see `scripts/e2e/`). Where fsview differs on
//! purpose, the module that does it says so.
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
//!   (managed, user, then every directory from the top down to the working
//!   directory, then the auto-memory `MEMORY.md`), follows `@imports`, applies
//!   front matter `paths:` rules and strips block-level HTML comments. Every
//!   injected file carries the exact bytes read from disk and the metadata of
//!   the same open file, so a caller can record it as a view whose kind is
//!   [`Kind::Processed`] when the injected text is not the disk text.
//! - [`nested_for`] is the lazy half: the instruction files below the working
//!   directory, and the conditional rules, that apply to given paths.
//! - [`render`] gives the bytes an agent is given, in the layout of a given
//!   Claude Code version ([`Layout`]), deterministically: the same inputs
//!   give the same bytes.
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

use std::path::PathBuf;

pub use discover::{nested_for, user_context};
pub use git::{system_context, system_context_with, Git};
pub use render::{Block, Layout, Place};

/// Where to look for instruction files and how to treat them.
#[derive(Debug, Clone)]
pub struct Options {
    /// The working directory of the conversation: the walk for instruction
    /// files ends here, user and managed `paths:` rules match relative to
    /// it, and imports of project, local and managed files may not leave it
    /// unless [`Options::allow_external_imports`] says so (Claude Code's
    /// boundary: the directory it started in, not the git work tree).
    pub cwd: PathBuf,
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
    /// Let `@imports` of project, local and managed files reach files
    /// outside the working directory (Claude Code's "external imports"
    /// approval). The user's own files may import from anywhere regardless.
    pub allow_external_imports: bool,
    /// Absolute paths the agent is about to work on: conditional rules whose
    /// `paths:` match one of them are loaded, and [`nested_for`] walks down
    /// to their directories.
    pub for_paths: Vec<PathBuf>,
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
    /// Whose file it is, which decides its description (an import has its
    /// importer's).
    pub origin: Origin,
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

/// Whose instruction file it is: Claude Code's memory types, each with the
/// description shown as `Contents of PATH (description):`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The administrator's policy (`/etc/claude-code`).
    Managed,
    /// The user's own (`~/.claude`), and what it imports.
    User,
    /// Checked into the project: `CLAUDE.md`, `.claude/CLAUDE.md`, rules.
    Project,
    /// `CLAUDE.local.md`.
    Local,
    /// The auto-memory index `MEMORY.md`.
    Memory,
}

impl Origin {
    /// Claude Code's description of such a file, in the given layout.
    /// Claude Code 2.1.88 described managed files as the user's; 2.1.332
    /// has a description of their own.
    pub fn description(self, layout: Layout) -> &'static str {
        match self {
            Origin::Managed if layout == Layout::ClaudeCode2_1_88 => load::DESC_USER,
            Origin::Managed => load::DESC_MANAGED,
            Origin::User => load::DESC_USER,
            Origin::Project => load::DESC_PROJECT,
            Origin::Local => load::DESC_LOCAL,
            Origin::Memory => load::DESC_MEMORY,
        }
    }

    /// The word used in JSON and in the stored memo.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Managed => "managed",
            Origin::User => "user",
            Origin::Project => "project",
            Origin::Local => "local",
            Origin::Memory => "memory",
        }
    }

    /// The origin a word from [`Origin::as_str`] names.
    pub fn from_word(word: &str) -> Option<Origin> {
        [
            Origin::Managed,
            Origin::User,
            Origin::Project,
            Origin::Local,
            Origin::Memory,
        ]
        .into_iter()
        .find(|o| o.as_str() == word)
    }
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
    /// `git status --short` as shown: at most 2,000 UTF-16 code units (what
    /// Claude Code counts), without the truncation notice, which rendering
    /// adds in the wording of its layout. Empty when clean.
    pub status: String,
    /// Whether [`GitFacts::status`] was cut.
    pub status_truncated: bool,
    /// Whether filter drivers of the repository's own configuration were
    /// switched off while the status lists a changed tracked file: Claude
    /// Code 2.1.332 then says the listing may hold unchanged files.
    pub filters_off_note: bool,
    /// `git log --oneline -n 5`; empty in a repository without commits.
    pub log: String,
    /// `user.name`, when set and not empty.
    pub user_name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_describe_files_per_layout() {
        for o in [
            Origin::Managed,
            Origin::User,
            Origin::Project,
            Origin::Local,
            Origin::Memory,
        ] {
            assert_eq!(Origin::from_word(o.as_str()), Some(o));
        }
        assert_eq!(Origin::from_word("import"), None);
        assert_eq!(
            Origin::Managed.description(Layout::ClaudeCode2_1_332),
            "organization-managed policy instructions"
        );
        assert_eq!(
            Origin::Managed.description(Layout::ClaudeCode2_1_88),
            "user's private global instructions for all projects"
        );
        assert_eq!(
            Origin::Local.description(Layout::ClaudeCode2_1_88),
            Origin::Local.description(Layout::ClaudeCode2_1_332)
        );
    }

    #[test]
    fn kind_words() {
        assert_eq!(Kind::Full.as_str(), "full");
        assert_eq!(Kind::Processed.as_str(), "processed");
    }
}
