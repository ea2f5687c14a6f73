//! The bytes an agent is given, in the layout of a Claude Code version.
//!
//! Rendering depends on its arguments only (the date is one of them), so the
//! same inputs always give the same bytes. Two layouts, both taken from what
//! the real binaries sent:
//!
//! **Claude Code 2.1.332** ([`Layout::ClaudeCode2_1_332`], the default). The
//! first user message starts with up to two reminders, each its own content
//! block: the instruction files
//!
//! ```text
//! <system-reminder>
//! Codebase and user instructions are shown below. ...
//!
//! Contents of PATH (description):
//!
//! TEXT
//! </system-reminder>
//! ```
//!
//! (left out when there is no file), then the git facts
//!
//! ```text
//! <system-reminder>
//! As you answer the user's questions, you can use the following context:
//! # gitStatus
//! This is the git status at the start of the conversation. ...
//!
//! Claude Code attached this context automatically; ...
//! </system-reminder>
//! ```
//!
//! (left out outside a git work tree). The date sentence `Today's date is
//! YYYY-MM-DD.` ends the environment section of the system text. A cut
//! status ends "... run "git status" using Bash)".
//!
//! **Claude Code 2.1.88** ([`Layout::ClaudeCode2_1_88`], the layout fsview
//! was first built on). The git facts are a `gitStatus: ...` line appended
//! to the system prompt; the instruction files and the date are one reminder
//! before the conversation: "As you answer the user's questions, you can use
//! the following context:", `# claudeMd` with the files, `# currentDate`,
//! and a closing "IMPORTANT: this context may or may not be relevant ..."
//! line. A cut status ends "... using BashTool)", and managed files carry the
//! user's description.
//!
//! In both, every file is `Contents of PATH (description):`, a blank line and
//! its text trimmed at both ends (JavaScript's `trim`), blocks separated by a
//! blank line; a nested file (loaded after the agent touched a path below
//! the working directory) is a reminder of its own, `Contents of PATH:` with
//! no description and its text as it is. The system-prompt injection set by
//! `ctx-invalidate --injection` is `cacheBreaker: [CACHE_BREAKER: TEXT]` in
//! the system text: Claude Code 2.1.88's words; the public build of 2.1.332
//! sends no injection at all, and fsview keeps it where 2.1.88 put it.

use crate::{GitFacts, InjectedFile, Origin};

/// Claude Code's header above the instruction files.
pub const INSTRUCTIONS_HEADER: &str = "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.";

/// The first line of Claude Code's context reminder.
const CONTEXT_LEAD: &str = "As you answer the user's questions, you can use the following context:";

/// Claude Code 2.1.332's last line of the git reminder.
const CONTEXT_CLOSE_2_1_332: &str = "Claude Code attached this context automatically; it isn't part of the user's message. It describes the user's own account and workspace, so they don't need it reported back.";

/// Claude Code 2.1.88's last line of the context reminder.
const CONTEXT_CLOSE_2_1_88: &str = "      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context unless it is highly relevant to your task.";

const GIT_INTRO: &str = "This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.";

const FILTERS_OFF_NOTE: &str = "This status was taken with the repository's own git filters off, so a file it lists may be unchanged.";

/// Which Claude Code version's message layout to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// Claude Code 2.1.332: instructions and git facts as reminders of their
    /// own in the first user message, the date ending the system text.
    #[default]
    ClaudeCode2_1_332,
    /// Claude Code 2.1.88: git facts in the system prompt, instructions and
    /// date in one reminder.
    ClaudeCode2_1_88,
}

impl Layout {
    /// Every layout, the default first.
    pub const ALL: [Layout; 2] = [Layout::ClaudeCode2_1_332, Layout::ClaudeCode2_1_88];

    /// The Claude Code version the layout was taken from, as `--layout`
    /// names it.
    pub fn version(self) -> &'static str {
        match self {
            Layout::ClaudeCode2_1_332 => "2.1.332",
            Layout::ClaudeCode2_1_88 => "2.1.88",
        }
    }

    /// The layout of a version named by [`Layout::version`].
    pub fn from_version(version: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| l.version() == version)
    }
}

/// Where a block goes in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Appended to the system text (the system prompt, or the environment
    /// section that ends it).
    System,
    /// A block of the first user message, before the prompt.
    User,
    /// A block after the tool result that touched the file's path.
    Attachment,
}

impl Place {
    pub fn as_str(self) -> &'static str {
        match self {
            Place::System => "system",
            Place::User => "user",
            Place::Attachment => "attachment",
        }
    }
}

/// One piece of the context, as one content block of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What it holds: `instructions`, `git`, `injection`, `date` (2.1.332),
    /// `system`, `user` (2.1.88), or `nested` (both).
    pub part: &'static str,
    pub place: Place,
    pub text: String,
    /// The file a `nested` block shows.
    pub path: Option<String>,
}

/// An instruction file as rendering needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileText {
    /// The path as shown (lossy when it is not UTF-8).
    pub path: String,
    pub origin: Origin,
    /// What was injected, untrimmed.
    pub text: String,
}

impl From<&InjectedFile> for FileText {
    fn from(f: &InjectedFile) -> Self {
        FileText {
            path: f.path.display().to_string(),
            origin: f.origin,
            text: f.text.clone(),
        }
    }
}

/// Everything the memoized context is rendered from.
#[derive(Debug, Clone, Copy)]
pub struct Parts<'a> {
    pub files: &'a [FileText],
    /// `None` outside a git work tree.
    pub git: Option<&'a GitFacts>,
    pub injection: Option<&'a str>,
    /// `YYYY-MM-DD`.
    pub date: &'a str,
}

/// `s` without the white space JavaScript's `String.prototype.trim` removes
/// at both ends: Unicode white space and U+FEFF, but not U+0085.
pub fn js_trim(s: &str) -> &str {
    let js_space = |c: char| c == '\u{feff}' || (c.is_whitespace() && c != '\u{85}');
    s.trim_matches(js_space)
}

/// One file as the agent sees it among the instructions.
fn contents_block(f: &FileText, layout: Layout) -> String {
    format!(
        "Contents of {} ({}):\n\n{}",
        f.path,
        f.origin.description(layout),
        js_trim(&f.text)
    )
}

/// The instruction files as Claude Code gives them (its `claudeMd`): the
/// header and one block per file; empty when there is no file.
pub fn instructions(files: &[FileText], layout: Layout) -> String {
    let blocks: Vec<String> = files
        .iter()
        .filter(|f| !js_trim(&f.text).is_empty())
        .map(|f| contents_block(f, layout))
        .collect();
    if blocks.is_empty() {
        return String::new();
    }
    format!("{INSTRUCTIONS_HEADER}\n\n{}", blocks.join("\n\n"))
}

/// Claude Code's git status text (its `gitStatus`), in the words of
/// `layout`.
pub fn git_status(git: &GitFacts, layout: Layout) -> String {
    let tool = match layout {
        Layout::ClaudeCode2_1_332 => "Bash",
        Layout::ClaudeCode2_1_88 => "BashTool",
    };
    let mut parts = vec![
        GIT_INTRO.to_string(),
        format!("Current branch: {}", git.branch),
        format!(
            "Main branch (you will usually use this for PRs): {}",
            git.default_branch
        ),
    ];
    if let Some(user) = &git.user_name {
        parts.push(format!("Git user: {user}"));
    }
    let mut status = if git.status.is_empty() {
        "(clean)".to_string()
    } else {
        git.status.clone()
    };
    if git.status_truncated {
        status.push_str(&format!(
            "\n... (truncated because it exceeds 2k characters. If you need more information, run \"git status\" using {tool})"
        ));
    }
    if git.filters_off_note && layout == Layout::ClaudeCode2_1_332 {
        status.push('\n');
        status.push_str(FILTERS_OFF_NOTE);
    }
    parts.push(format!("Status:\n{status}"));
    parts.push(format!("Recent commits:\n{}", git.log));
    parts.join("\n\n")
}

fn injection_line(injection: &str) -> String {
    format!("cacheBreaker: [CACHE_BREAKER: {injection}]")
}

/// The date sentence.
pub fn date_sentence(date: &str) -> String {
    format!("Today's date is {date}.")
}

/// Claude Code 2.1.88's system-context lines: `gitStatus: ...` and the
/// injection; empty when there is neither.
pub fn system_2_1_88(git: Option<&GitFacts>, injection: Option<&str>) -> String {
    let mut lines = Vec::new();
    if let Some(git) = git {
        lines.push(format!(
            "gitStatus: {}",
            git_status(git, Layout::ClaudeCode2_1_88)
        ));
    }
    if let Some(injection) = injection {
        lines.push(injection_line(injection));
    }
    lines.join("\n")
}

/// Claude Code 2.1.88's user-context reminder: the instruction files and
/// the date.
pub fn user_2_1_88(files: &[FileText], date: &str) -> String {
    let mut parts = Vec::new();
    let claude_md = instructions(files, Layout::ClaudeCode2_1_88);
    if !claude_md.is_empty() {
        parts.push(format!("# claudeMd\n{claude_md}"));
    }
    parts.push(format!("# currentDate\n{}", date_sentence(date)));
    format!(
        "<system-reminder>\n{CONTEXT_LEAD}\n{}\n\n{CONTEXT_CLOSE_2_1_88}\n</system-reminder>\n",
        parts.join("\n")
    )
}

/// The memoized context as blocks, in order, in `layout`.
pub fn blocks(parts: &Parts<'_>, layout: Layout) -> Vec<Block> {
    let block = |part, place, text| Block {
        part,
        place,
        text,
        path: None,
    };
    match layout {
        Layout::ClaudeCode2_1_332 => {
            let mut out = Vec::new();
            let claude_md = instructions(parts.files, layout);
            if !claude_md.is_empty() {
                out.push(block(
                    "instructions",
                    Place::User,
                    format!("<system-reminder>\n{claude_md}\n</system-reminder>"),
                ));
            }
            if let Some(git) = parts.git {
                out.push(block(
                    "git",
                    Place::User,
                    format!(
                        "<system-reminder>\n{CONTEXT_LEAD}\n# gitStatus\n{}\n\n{CONTEXT_CLOSE_2_1_332}\n</system-reminder>",
                        git_status(git, layout)
                    ),
                ));
            }
            if let Some(injection) = parts.injection {
                out.push(block("injection", Place::System, injection_line(injection)));
            }
            out.push(block("date", Place::System, date_sentence(parts.date)));
            out
        }
        Layout::ClaudeCode2_1_88 => {
            let mut out = Vec::new();
            let system = system_2_1_88(parts.git, parts.injection);
            if !system.is_empty() {
                out.push(block("system", Place::System, system));
            }
            out.push(block(
                "user",
                Place::User,
                user_2_1_88(parts.files, parts.date),
            ));
            out
        }
    }
}

/// One nested file as Claude Code attaches it: a reminder of its own,
/// `Contents of PATH:` and the text as it is. Claude Code drops the final
/// line break of the last block of a message; this is the block as it is
/// when another follows.
pub fn nested_reminder(f: &FileText) -> String {
    format!(
        "<system-reminder>\nContents of {}:\n\n{}\n</system-reminder>\n",
        f.path, f.text
    )
}

/// The nested files as blocks, one each.
pub fn nested_blocks(files: &[FileText]) -> Vec<Block> {
    files
        .iter()
        .map(|f| Block {
            part: "nested",
            place: Place::Attachment,
            text: nested_reminder(f),
            path: Some(f.path.clone()),
        })
        .collect()
}

/// The blocks as one text, the way an agent prepends them. 2.1.88: the
/// system part, a blank line, the user part, then the nested files after a
/// line break. 2.1.332: each block in order, each ending with a line break.
pub fn text(blocks: &[Block], layout: Layout) -> String {
    let mut out = String::new();
    match layout {
        Layout::ClaudeCode2_1_88 => {
            let mut nested = blocks.iter().filter(|b| b.part == "nested").peekable();
            for b in blocks.iter().filter(|b| b.part != "nested") {
                out.push_str(&b.text);
                if b.part == "system" {
                    out.push_str("\n\n");
                }
            }
            if nested.peek().is_some() {
                out.push('\n');
                nested.for_each(|b| out.push_str(&b.text));
            }
        }
        Layout::ClaudeCode2_1_332 => {
            for b in blocks {
                out.push_str(&b.text);
                if !b.text.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, origin: Origin, text: &str) -> FileText {
        FileText {
            path: path.into(),
            origin,
            text: text.into(),
        }
    }

    fn facts(status: &str, truncated: bool, note: bool) -> GitFacts {
        GitFacts {
            branch: "feature".into(),
            default_branch: "main".into(),
            status: status.into(),
            status_truncated: truncated,
            filters_off_note: note,
            log: "abc1234 first".into(),
            user_name: Some("Ada".into()),
        }
    }

    fn files() -> Vec<FileText> {
        vec![
            file("/etc/claude-code/CLAUDE.md", Origin::Managed, "Policy.\n"),
            file("/p/CLAUDE.md", Origin::Project, "# P\n\nUse bun.\n"),
            file("/p/CLAUDE.local.md", Origin::Local, "\n\u{feff}mine\n"),
        ]
    }

    #[test]
    fn layouts_by_version() {
        assert_eq!(Layout::default(), Layout::ClaudeCode2_1_332);
        for l in Layout::ALL {
            assert_eq!(Layout::from_version(l.version()), Some(l));
        }
        assert_eq!(Layout::from_version("2.1.0"), None);
    }

    #[test]
    fn current_layout_blocks() {
        let files = files();
        let git = facts("?? x", false, false);
        let parts = Parts {
            files: &files,
            git: Some(&git),
            injection: None,
            date: "2026-03-01",
        };
        let b = blocks(&parts, Layout::ClaudeCode2_1_332);
        let summary: Vec<_> = b.iter().map(|b| (b.part, b.place)).collect();
        assert_eq!(
            summary,
            vec![
                ("instructions", Place::User),
                ("git", Place::User),
                ("date", Place::System)
            ]
        );
        assert_eq!(
            b[0].text,
            "<system-reminder>\n\
             Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\
             \n\
             Contents of /etc/claude-code/CLAUDE.md (organization-managed policy instructions):\n\
             \n\
             Policy.\n\
             \n\
             Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\
             \n\
             # P\n\
             \n\
             Use bun.\n\
             \n\
             Contents of /p/CLAUDE.local.md (user's private project instructions, not checked in):\n\
             \n\
             mine\n\
             </system-reminder>"
        );
        assert_eq!(
            b[1].text,
            "<system-reminder>\n\
             As you answer the user's questions, you can use the following context:\n\
             # gitStatus\n\
             This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.\n\
             \n\
             Current branch: feature\n\
             \n\
             Main branch (you will usually use this for PRs): main\n\
             \n\
             Git user: Ada\n\
             \n\
             Status:\n\
             ?? x\n\
             \n\
             Recent commits:\n\
             abc1234 first\n\
             \n\
             Claude Code attached this context automatically; it isn't part of the user's message. It describes the user's own account and workspace, so they don't need it reported back.\n\
             </system-reminder>"
        );
        assert_eq!(b[2].text, "Today's date is 2026-03-01.");
        assert_eq!(
            text(&b, Layout::ClaudeCode2_1_332),
            format!("{}\n{}\n{}\n", b[0].text, b[1].text, b[2].text)
        );
    }

    #[test]
    fn current_layout_without_files_git_or_with_an_injection() {
        let parts = Parts {
            files: &[],
            git: None,
            injection: Some("2"),
            date: "2026-03-01",
        };
        let b = blocks(&parts, Layout::ClaudeCode2_1_332);
        assert_eq!(
            b.iter()
                .map(|b| (b.part, b.text.as_str()))
                .collect::<Vec<_>>(),
            vec![
                ("injection", "cacheBreaker: [CACHE_BREAKER: 2]"),
                ("date", "Today's date is 2026-03-01.")
            ]
        );
    }

    #[test]
    fn git_status_wording_per_layout() {
        let cut = facts(" M a", true, true);
        let tail_332 = "Status:\n M a\n... (truncated because it exceeds 2k characters. If you need more information, run \"git status\" using Bash)\nThis status was taken with the repository's own git filters off, so a file it lists may be unchanged.\n\nRecent commits:\nabc1234 first";
        assert!(git_status(&cut, Layout::ClaudeCode2_1_332).ends_with(tail_332));
        // 2.1.88 had neither the new tool name nor the filters line.
        let tail_88 = "Status:\n M a\n... (truncated because it exceeds 2k characters. If you need more information, run \"git status\" using BashTool)\n\nRecent commits:\nabc1234 first";
        assert!(git_status(&cut, Layout::ClaudeCode2_1_88).ends_with(tail_88));
        assert!(
            git_status(&facts("", false, false), Layout::ClaudeCode2_1_332)
                .contains("Status:\n(clean)\n\n")
        );
    }

    #[test]
    fn layout_2_1_88() {
        let files = files();
        let git = facts("", false, false);
        let parts = Parts {
            files: &files,
            git: Some(&git),
            injection: Some("2"),
            date: "2026-03-01",
        };
        let b = blocks(&parts, Layout::ClaudeCode2_1_88);
        assert_eq!(
            b[0].text,
            "gitStatus: This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.\n\
             \n\
             Current branch: feature\n\
             \n\
             Main branch (you will usually use this for PRs): main\n\
             \n\
             Git user: Ada\n\
             \n\
             Status:\n\
             (clean)\n\
             \n\
             Recent commits:\n\
             abc1234 first\n\
             cacheBreaker: [CACHE_BREAKER: 2]"
        );
        assert_eq!(
            b[1].text,
            "<system-reminder>\n\
             As you answer the user's questions, you can use the following context:\n\
             # claudeMd\n\
             Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\
             \n\
             Contents of /etc/claude-code/CLAUDE.md (user's private global instructions for all projects):\n\
             \n\
             Policy.\n\
             \n\
             Contents of /p/CLAUDE.md (project instructions, checked into the codebase):\n\
             \n\
             # P\n\
             \n\
             Use bun.\n\
             \n\
             Contents of /p/CLAUDE.local.md (user's private project instructions, not checked in):\n\
             \n\
             mine\n\
             # currentDate\n\
             Today's date is 2026-03-01.\n\
             \n      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context unless it is highly relevant to your task.\n\
             </system-reminder>\n"
        );
        assert_eq!(
            text(&b, Layout::ClaudeCode2_1_88),
            format!("{}\n\n{}", b[0].text, b[1].text)
        );
        // Without files or git: only the date in the reminder.
        assert_eq!(
            user_2_1_88(&[], "2026-03-01"),
            "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n\
             # currentDate\nToday's date is 2026-03-01.\n\n      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context unless it is highly relevant to your task.\n</system-reminder>\n"
        );
        assert_eq!(system_2_1_88(None, None), "");
    }

    // Issue 16, fixes 4 and 5: a nested file is `Contents of PATH:` with no
    // description, one reminder per file, its text untrimmed.
    #[test]
    fn nested_files_one_reminder_each_without_description() {
        let nested = vec![
            file("/p/api/CLAUDE.md", Origin::Project, "# API\n\nHandlers.\n"),
            file("/p/.claude/rules/ts.md", Origin::Project, "TS.\n"),
        ];
        let b = nested_blocks(&nested);
        assert_eq!(
            b.iter().map(|b| b.text.as_str()).collect::<Vec<_>>(),
            vec![
                "<system-reminder>\nContents of /p/api/CLAUDE.md:\n\n# API\n\nHandlers.\n\n</system-reminder>\n",
                "<system-reminder>\nContents of /p/.claude/rules/ts.md:\n\nTS.\n\n</system-reminder>\n",
            ]
        );
        assert_eq!(b[1].path.as_deref(), Some("/p/.claude/rules/ts.md"));
        let mut all = blocks(
            &Parts {
                files: &[],
                git: None,
                injection: None,
                date: "2026-03-01",
            },
            Layout::ClaudeCode2_1_88,
        );
        let user = all[0].text.clone();
        all.extend(b.clone());
        assert_eq!(
            text(&all, Layout::ClaudeCode2_1_88),
            format!("{user}\n{}{}", b[0].text, b[1].text)
        );
    }

    #[test]
    fn trim_is_javascripts() {
        assert_eq!(js_trim("\u{feff} \t\u{a0}x y\u{2028}\n"), "x y");
        assert_eq!(js_trim("\u{85}x\u{85}"), "\u{85}x\u{85}");
    }
}
