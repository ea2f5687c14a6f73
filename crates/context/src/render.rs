//! The bytes an agent is given, in Claude Code's words.
//!
//! The user context becomes the `<system-reminder>` message Claude Code puts
//! before the conversation: its `# claudeMd` part (the instructions header and
//! one `Contents of PATH (description):` block per file, text trimmed, blocks
//! separated by a blank line), then `# currentDate`. The system context
//! becomes the `key: value` lines Claude Code appends to its system prompt:
//! `gitStatus: ...` and, when an injection is set, `cacheBreaker:
//! [CACHE_BREAKER: ...]`. Rendering depends on its arguments only (the date
//! is one of them), so the same inputs always give the same bytes.

use crate::{GitFacts, SystemContext, UserContext};

/// Claude Code's header above the instruction files.
pub const INSTRUCTIONS_HEADER: &str = "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.";

const REMINDER_OPEN: &str =
    "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n";
const REMINDER_CLOSE: &str = "\n\n      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context unless it is highly relevant to your task.\n</system-reminder>\n";

/// One injected file as the agent sees it: `Contents of PATH (description):`
/// and its text.
pub fn contents_block(f: &crate::InjectedFile) -> String {
    format!(
        "Contents of {} ({}):\n\n{}",
        f.path.display(),
        f.description,
        f.text.trim()
    )
}

/// The user-context message: instruction files and `today` (`YYYY-MM-DD`).
pub fn render_user(ctx: &UserContext, today: &str) -> String {
    let mut parts = Vec::new();
    let blocks: Vec<String> = ctx
        .files
        .iter()
        .filter(|f| !f.text.trim().is_empty())
        .map(contents_block)
        .collect();
    if !blocks.is_empty() {
        parts.push(format!(
            "# claudeMd\n{INSTRUCTIONS_HEADER}\n\n{}",
            blocks.join("\n\n")
        ));
    }
    parts.push(format!("# currentDate\nToday's date is {today}."));
    format!("{REMINDER_OPEN}{}{REMINDER_CLOSE}", parts.join("\n"))
}

/// The system-context lines; empty when there is neither git nor injection.
pub fn render_system(sys: &SystemContext, injection: Option<&str>) -> String {
    let mut lines = Vec::new();
    if let Some(git) = &sys.git {
        lines.push(format!("gitStatus: {}", render_git_status(git)));
    }
    if let Some(injection) = injection {
        lines.push(format!("cacheBreaker: [CACHE_BREAKER: {injection}]"));
    }
    lines.join("\n")
}

/// Claude Code's git status text.
pub fn render_git_status(git: &GitFacts) -> String {
    let mut parts = vec![
        "This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.".to_string(),
        format!("Current branch: {}", git.branch),
        format!("Main branch (you will usually use this for PRs): {}", git.default_branch),
    ];
    if let Some(user) = &git.user_name {
        parts.push(format!("Git user: {user}"));
    }
    let status = if git.status.is_empty() {
        "(clean)"
    } else {
        &git.status
    };
    parts.push(format!("Status:\n{status}"));
    parts.push(format!("Recent commits:\n{}", git.log));
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InjectedFile, Kind};
    use std::path::PathBuf;

    fn file(path: &str, description: &str, text: &str) -> InjectedFile {
        InjectedFile {
            path: PathBuf::from(path),
            label: "project".into(),
            description: description.into(),
            kind: Kind::Full,
            text: text.into(),
            raw: text.as_bytes().to_vec(),
            meta: std::fs::metadata("/").unwrap(),
            imported_by: None,
            conditional: false,
        }
    }

    #[test]
    fn user_context_text() {
        let ctx = UserContext {
            files: vec![
                file(
                    "/p/CLAUDE.md",
                    "project instructions, checked into the codebase",
                    "# P\n\nUse bun.\n",
                ),
                file(
                    "/p/CLAUDE.local.md",
                    "user's private project instructions, not checked in",
                    "\nmine\n",
                ),
            ],
            warnings: vec![],
        };
        assert_eq!(
            render_user(&ctx, "2026-03-01"),
            "<system-reminder>\n\
             As you answer the user's questions, you can use the following context:\n\
             # claudeMd\n\
             Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\
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
    }

    #[test]
    fn user_context_without_files_has_only_the_date() {
        assert_eq!(
            render_user(&UserContext::default(), "2026-03-01"),
            "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n\
             # currentDate\nToday's date is 2026-03-01.\n\n      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context unless it is highly relevant to your task.\n</system-reminder>\n"
        );
    }

    #[test]
    fn system_context_text() {
        let sys = SystemContext {
            git: Some(GitFacts {
                branch: "feature".into(),
                default_branch: "main".into(),
                status: String::new(),
                status_truncated: false,
                log: "abc1234 first".into(),
                user_name: Some("Ada".into()),
            }),
            warnings: vec![],
        };
        assert_eq!(
            render_system(&sys, Some("2")),
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
        assert_eq!(render_system(&SystemContext::default(), None), "");
    }
}
