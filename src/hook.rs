//! fsview-hook: the fsview tools as an agent's command hooks.
//!
//! The command line only: each agent's protocol and what fsview does with
//! its events live in the `fsview-agents` crate. `fsview-hook AGENT`
//! answers one hook payload on stdin (`claude`, `gemini`, `codex`);
//! `fsview-hook install AGENT` wires that into the agent's settings.

use std::io::{IsTerminal as _, Read as _};
use std::path::{Path, PathBuf};

use clap::{Args as ClapArgs, CommandFactory, Parser, Subcommand, ValueEnum};
use serde_json::Value;

use fsview_agents::claude::{Claude, ClaudeInstaller};
use fsview_agents::cline::{Cline, ClineInstaller};
use fsview_agents::codex::{Codex, CodexInstaller};
use fsview_agents::copilot::{Copilot, CopilotInstaller};
use fsview_agents::core::Options;
use fsview_agents::droid::{Droid, DroidInstaller};
use fsview_agents::gemini::{Gemini, GeminiInstaller};
use fsview_agents::install::{self, Done, Installer, Scope, What};
use fsview_agents::opencode::{Opencode, KILO, OPENCODE};
use fsview_agents::pi::{Pi, PiInstaller};
use fsview_agents::qwen::{Qwen, QwenInstaller};
use fsview_agents::{Agent, Reply};
use fsview_store::changes::Limits;
use fsview_store::error::plain_io;
use fsview_store::Error;

use crate::common::{self, Out, Outcome, Stop};
use crate::json;

const TOOL: &str = "fsview-hook";

const EXAMPLES: &str = "\
Examples:
  fsview-hook install claude               wire the hooks into .claude/settings.local.json
  fsview-hook install claude --project     ... into .claude/settings.json (checked in)
  fsview-hook install gemini               ... into .gemini/settings.json
  fsview-hook install codex                ... into .codex/hooks.json (then trust them in Codex)
  fsview-hook install claude --uninstall   remove them again
  fsview-hook install qwen                 .qwen/settings.json (Qwen Code)
  fsview-hook install opencode             a plugin in .opencode/plugins/ (opencode)
  fsview-hook install copilot              .github/hooks/fsview.json (Copilot CLI)
  fsview-hook install droid                .factory/settings.json (Factory Droid)
  fsview-hook install kilo                 a plugin in .kilo/plugins/ (Kilo Code CLI)
  fsview-hook install pi                   an extension in .pi/extensions/ (pi)
  fsview-hook install cline                hook files in .clinerules/hooks/ (Cline CLI)
  fsview-hook claude < payload.json        answer one Claude Code hook payload (JSON on stdin)
  fsview-hook gemini < payload.json        ... one gemini-cli hook payload
  fsview-hook codex < payload.json         ... one Codex hook payload
  fsview-hook claude --allow               also approve the edits the gate lets through
  fsview-hook claude --also AGENTS.md      also give the model AGENTS.md files at session start
  fsview-hook claude --short-reads off     every re-read gets the file's text (default: auto, short)
  fsview-hook claude --give-back off       refusals never carry a file's text: the model reads it
  fsview-hook claude --sid main            one fsview session for every conversation

Exit codes:
  0  the payload was answered (a deny is an answer: JSON on stdout), or it
     failed open; install: done, or nothing to do
  2  bad arguments; a payload that failed closed outside the gate (the
     agent's blocking error, its message the one line on stderr); install: a
     settings file that is not valid JSON or cannot be written (left as it was)

fsview-hook never exits 1: gemini-cli lets a change through when a hook
exits 1.";

/// Answer an agent's command hooks with the fsview tools, or wire them in.
///
/// Each agent has a subcommand that reads one of its hook payloads on
/// stdin and answers in its protocol: claude (Claude Code), gemini
/// (gemini-cli), codex (Codex), qwen (Qwen Code), opencode (through the
/// plugin `install opencode` writes), copilot (GitHub Copilot CLI), droid
/// (Factory Droid), kilo (Kilo Code CLI, through the same plugin), pi
/// (through the extension `install pi` writes), cline (Cline CLI, through
/// the hook files `install cline` writes). Each
/// gates the agent's edit and write tools, records what its reads showed
/// and what it wrote, as the tool reports them, tells the files changed
/// since the agent saw them at its next prompt, and gives at a session's
/// start only instruction files the agent does not load itself. Each
/// agent's shell tool is read the same way (docs/shell.md): a command's
/// writes are gated like the write tool's (an append passes, a command
/// fsview cannot read passes), and what a read command printed counts as
/// seen. Each subcommand's --help says how it reads its agent's events.
///
/// `fsview-hook claude` reads one Claude Code hook payload (JSON) on stdin
/// and answers it. PreToolUse on Edit, NotebookEdit and Write runs the edit
/// gate (Write as a whole-file write), and on Bash for each file the
/// command writes: a refused change gets
/// permissionDecision "deny" with the gate's message; a change the gate
/// lets through gets no opinion, or "allow" with --allow. PostToolUse
/// records what the tool reports: a Read's shown lines, as a full, range or
/// start view held to the text shown; a Bash read's output (cat, sed -n,
/// head, tail, nl -ba); a Write, Edit or NotebookEdit's
/// resulting text, held against the disk, so that a change landing between
/// the tool and the hook is reported, never taken as seen. SessionStart
/// runs ctx-build (recording the instruction files Claude Code injected as
/// views) and sends only instruction files Claude Code does not load itself
/// (--also); InstructionsLoaded records the nested instruction files
/// Claude Code attached (ctx-build --for); UserPromptSubmit sends the files
/// changed since the agent saw them, with diffs, each change once.
///
/// Subagents (the Agent tool) have views of their own: the session
/// SESSION_ID/AGENT_ID, started by SubagentStart empty, or for a fork with a
/// copy of its launcher's views (the launcher's PreToolUse on Agent says it
/// launches one). Nothing flows back: a file a subagent wrote is no longer
/// fresh for a parent that saw it, and PostToolUse on Agent (a foreground
/// subagent that completed) tells the parent what changed, as a prompt does.
///
/// The payload's session_id is the fsview session (FSVIEW_SID is not read:
/// each conversation is its own session unless --sid says otherwise), and
/// a subagent's agent_id picks its views inside it; the payload's cwd is
/// where the default session file is looked for. A payload that
/// cannot be answered, or a failure, fails open or closed as --on-error
/// says (default: closed for the gate, open for the rest), with one line on
/// stderr either way. stdout and stderr are the agent's protocol, so
/// `fsview-hook AGENT` takes no --json or --quiet; `install` does.
#[derive(Parser, Debug)]
#[command(name = TOOL, version, after_help = EXAMPLES, subcommand_required = true)]
pub struct Args {
    #[command(subcommand)]
    pub command: Cmd,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Answer one Claude Code hook payload (JSON on stdin)
    #[command(after_help = CLAUDE_EXAMPLES)]
    Claude(HookArgs),
    /// Answer one gemini-cli hook payload (JSON on stdin)
    ///
    /// BeforeTool on replace (a targeted edit) and write_file (a whole-file
    /// write) runs the edit gate, and on run_shell_command for each file the
    /// command writes: a refused change gets {"decision":
    /// "deny", "reason": ...}, which the model sees as "Tool execution
    /// blocked: ..."; one the gate lets through gets no opinion. AfterTool
    /// records what read_file showed (the whole text; the lines under its
    /// "Status: Showing lines A-B of N total lines." banner, as a range, or
    /// the first page of a long file as a start view; shortened lines as a
    /// processed view) and what replace and write_file left in the file
    /// (returnDisplay.newContent), each held to the disk. BeforeAgent sends
    /// the files changed since they were seen; SessionStart sends only
    /// --also files gemini-cli does not load (it loads GEMINI.md). gemini-cli
    /// turns < and > in hook context into &lt; and &gt; (not &): context
    /// holding either is sent with its & escaped too, under a line saying it
    /// is HTML-escaped. A file with an @, which gemini-cli would read a file
    /// at, is left out at session start, with a word to read it. With
    /// --short-reads on, an unchanged re-read's result is blocked with a
    /// short notice instead (the model sees a failed call; off by default).
    /// A gate that cannot decide denies; fsview-hook never exits 1, which
    /// gemini-cli takes as "allow".
    #[command(after_help = GEMINI_EXAMPLES)]
    Gemini(HookArgs),
    /// Answer one Codex hook payload (JSON on stdin)
    ///
    /// PreToolUse on apply_patch runs the edit gate for each file of the
    /// patch (Update File: a targeted edit; Add File, Delete File and a Move
    /// to destination: a whole-file write), and so on Bash for a patch sent
    /// to apply_patch as a here-document; a refusal is permissionDecision
    /// "deny", which the model sees as "Command blocked by PreToolUse hook:
    /// ...". A patch fsview cannot read is refused; any other command is
    /// gated for each file it writes. PostToolUse records what a Bash read
    /// printed (cat, cat -n, nl -ba, sed -n 'A,Bp', nl -ba FILE | sed -n
    /// 'A,Bp', head, tail; only when the disk holds exactly that, maybe
    /// from a terminal, and only the first lines of an output Codex
    /// truncated; nothing for other commands) and what an applied patch left (an added file whole, an
    /// updated one whole when it was seen whole before, else the lines the
    /// patch wrote). A here-document patch, which Codex applies without a
    /// PostToolUse, is recorded at PreToolUse as what it will make of the
    /// file, fresh only once the file holds exactly that. UserPromptSubmit
    /// sends the files changed since they were seen; SessionStart sends
    /// only --also files Codex does not load (it loads AGENTS.md), never on
    /// resume.
    #[command(after_help = CODEX_EXAMPLES)]
    Codex(HookArgs),
    /// Answer one Qwen Code hook payload (JSON on stdin)
    #[command(after_help = QWEN_EXAMPLES, long_about = QWEN_ABOUT)]
    Qwen(HookArgs),
    /// Answer what fsview's opencode plugin sends (JSON on stdin)
    #[command(after_help = OPENCODE_EXAMPLES, long_about = OPENCODE_ABOUT)]
    Opencode(HookArgs),
    /// Answer what fsview's Kilo Code CLI plugin sends (JSON on stdin)
    #[command(after_help = KILO_EXAMPLES, long_about = KILO_ABOUT)]
    Kilo(HookArgs),
    /// Answer what fsview's pi extension sends (JSON on stdin)
    #[command(after_help = PI_EXAMPLES, long_about = PI_ABOUT)]
    Pi(HookArgs),
    /// Answer one GitHub Copilot CLI hook payload (JSON on stdin)
    #[command(after_help = COPILOT_EXAMPLES, long_about = COPILOT_ABOUT)]
    Copilot(CopilotArgs),
    /// Answer one Factory Droid hook payload (JSON on stdin)
    #[command(after_help = DROID_EXAMPLES, long_about = DROID_ABOUT)]
    Droid(HookArgs),
    /// Answer one Cline CLI hook payload (JSON on stdin)
    #[command(after_help = CLINE_EXAMPLES, long_about = CLINE_ABOUT)]
    Cline(HookArgs),
    /// Wire fsview-hook into an agent's settings, by its absolute path
    #[command(after_help = INSTALL_EXAMPLES)]
    Install(InstallArgs),
}

const CLAUDE_EXAMPLES: &str = "\
Examples:
  fsview-hook claude < payload.json        answer one payload: JSON on stdout, or nothing
  fsview-hook claude --allow               also approve the edits the gate lets through
  fsview-hook claude --also AGENTS.md      also give the model AGENTS.md files at session start
  fsview-hook claude --short-reads off     every re-read gets the file's text (default: auto, short)
  fsview-hook claude --on-error closed     fail closed for every event (exit 2 outside the gate)

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate (Claude Code's blocking
     error, its message the one line on stderr)";

const GEMINI_EXAMPLES: &str = "\
Examples:
  fsview-hook install gemini               wire it into .gemini/settings.json
  fsview-hook gemini < payload.json        answer one payload: JSON on stdout, or nothing
  fsview-hook gemini --also AGENTS.md      also give the model AGENTS.md files at session start
  fsview-hook install gemini --short-reads on  answer unchanged re-reads with a notice (a blocked result)

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate (gemini-cli's blocking
     error, its message the one line on stderr)";

const CODEX_EXAMPLES: &str = "\
Examples:
  fsview-hook install codex                wire it into .codex/hooks.json
  fsview-hook codex < payload.json         answer one payload: JSON on stdout, or nothing
  fsview-hook codex --also CLAUDE.md       also give the model CLAUDE.md files at session start

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate (Codex's blocking
     error, its message the one line on stderr)";
const QWEN_ABOUT: &str = "\
Answer one Qwen Code hook payload (JSON on stdin).

Qwen Code's hooks are Claude Code's (the same events, envelope and
answers); its tools are its own. PreToolUse on edit and notebook_edit runs
the edit gate, on write_file the whole-file gate, on run_shell_command the
gate for each file the command writes: a refused change gets
permissionDecision \"deny\", whose reason the model receives verbatim.
PostToolUse records what read_file showed (its \"Showing lines A-B of N\"
banner, the lines with their trailing whitespace trimmed as Qwen Code shows
them, never a line it cut; a notebook's cells as it renders them), what a
shell read printed (the Output: of run_shell_command, trimmed) and
what edit, write_file and notebook_edit wrote (returnDisplay.newContent),
held against the disk. UserPromptSubmit (also
fired before each model call with tool results) tells the files changed
since they were seen, each change once; Qwen Code escapes < and > in hook
context, so a diff holding them is left out with a note to read the file.
SessionStart sends and records nothing: Qwen Code loads QWEN.md and
AGENTS.md itself (so --also has no effect here).";

const QWEN_EXAMPLES: &str = "\
Examples:
  fsview-hook install qwen                 wire it into .qwen/settings.json
  fsview-hook qwen < payload.json          answer one payload: JSON on stdout, or nothing

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate (Qwen Code's blocking
     error, its message the one line on stderr)";

const OPENCODE_ABOUT: &str = "\
Answer what fsview's opencode plugin sends (JSON on stdin).

opencode runs JavaScript plugins, not commands: `fsview-hook install
opencode` writes one (.opencode/plugins/fsview.js) that sends each hook's
objects as {\"event\", \"directory\", \"input\", \"output\"}. On
tool.execute.before of edit, write, apply_patch (what opencode gives GPT
models) and bash (each file the command writes) the gate answers {\"deny\": REASON},
which the plugin throws (the model receives REASON); the plugin denies too
when fsview-hook cannot run. tool.execute.after records what read showed
(metadata.display, never a line it cut), what a bash read printed, what
write and apply_patch wrote, and an edit's
diff applied to the agent's last view of the file, held against the disk;
after any tool it answers {\"context\": TEXT}, which the plugin appends
to the tool's output: what changed meanwhile, before the model's next
step. chat.message answers {\"context\": TEXT}, added to the user's
message: the files changed since they were seen, each change once. Nothing is sent
at a session's start (--also has no effect here), and opencode's own
permissions decide what the gate lets through (--allow has none either).";

const OPENCODE_EXAMPLES: &str = "\
Examples:
  fsview-hook install opencode             write .opencode/plugins/fsview.js
  fsview-hook opencode < payload.json      answer one plugin payload

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate";

const KILO_ABOUT: &str = "\
Answer what fsview's Kilo Code CLI plugin sends (JSON on stdin).

Kilo Code CLI is a fork of opencode: it loads the same JavaScript plugins,
from .kilo/plugins/ (not .opencode/plugins/), calls the same hooks with the
same objects, and names its tools as opencode does. `fsview-hook install
kilo` writes opencode's plugin there, calling `fsview-hook kilo`, which
answers as `fsview-hook opencode` does (see its --help): the gate on edit,
write, apply_patch, bash, and background_process when it starts a command
(for each file the command writes), what read showed and what edit and write wrote, the files
changed since they were seen with the next tool result and at each chat
message.";

const KILO_EXAMPLES: &str = "\
Examples:
  fsview-hook install kilo                 write .kilo/plugins/fsview.js
  fsview-hook kilo < payload.json          answer one plugin payload

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate";

const PI_ABOUT: &str = "\
Answer what fsview's pi extension sends (JSON on stdin).

pi runs TypeScript or JavaScript extensions, not commands: `fsview-hook
install pi` writes one (.pi/extensions/fsview.js) that sends each event
as {\"event\", \"cwd\", \"sessionId\", ...the event's fields}. On
tool_call of edit and write, and of bash for each file its command writes
(>, tee, sed -i, cp, ...: see docs/shell.md), the gate answers
{\"deny\": REASON}, which the
extension returns as {block: true, reason} (the model receives REASON);
the extension blocks too when fsview-hook cannot run. tool_result records
what read showed (its text from the offset asked, never past a
\"[Showing lines ...]\" or \"[N more lines in file ...]\" note), what
write wrote, an edit's replacements applied to the agent's last view of
the file, and what a read command run by bash printed (cat, sed -n, head,
...; only when the disk holds exactly that), held against the disk, and
answers {\"context\": TEXT} (what changed meanwhile, added to the
result as a text block of its own) or, for a whole re-read of exactly
what the conversation holds, {\"short\": NOTICE} (the extension shows the
notice in place of the text; --short-reads). before_agent_start answers
{\"context\": TEXT}, which the extension adds after the prompt as a
message of its own: the files changed since they were seen, each change
once. Nothing is sent at a session's start (pi
loads AGENTS.md and CLAUDE.md itself; --also has no effect here), and
--allow has none either (pi has no permission prompt).";

const PI_EXAMPLES: &str = "\
Examples:
  fsview-hook install pi                   write .pi/extensions/fsview.js
  fsview-hook pi < payload.json            answer one extension payload

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate";

const COPILOT_ABOUT: &str = "\
Answer one GitHub Copilot CLI hook payload (JSON on stdin).

Copilot CLI's camelCase hooks (.github/hooks/*.json) send payloads that do
not name their event: --event says it (the installed hooks pass it), else
the payload's fields do. preToolUse on edit runs the edit gate, on create
the whole-file gate, on bash the gate for each file the command writes: a
refused change gets {\"permissionDecision\":
\"deny\", \"permissionDecisionReason\": REASON}, and the model receives
\"Denied by preToolUse hook: REASON\". postToolUse records what view
showed (the file's text exactly; nothing for a file too large to show or a
directory), what a bash read printed, what create wrote, and an edit's replacement applied to the
agent's last view of the file, held against the disk. userPromptSubmitted
tells the files changed since they were seen, with diffs, each change once.
preCompact releases every view: the summary Copilot CLI compacts the
conversation into holds no file's text. sessionStart is not wired: Copilot
CLI loads its instruction files itself (so --also has no effect here).";

const COPILOT_EXAMPLES: &str = "\
Examples:
  fsview-hook install copilot              write .github/hooks/fsview.json
  fsview-hook copilot --event preToolUse < payload.json

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate";

const DROID_ABOUT: &str = "\
Answer one Factory Droid hook payload (JSON on stdin).

Droid's hooks are Claude Code's (the same events, envelope and answers),
read from the hooks key of .factory/settings.json; its tools are its own.
PreToolUse on Edit runs the edit gate, on Create the whole-file gate, on
ApplyPatch the gate for each file of the patch (a patch fsview cannot read
is refused), on Execute the gate for each file the command writes (>, tee,
sed -i, cp, ...: see docs/shell.md): a refused change gets permissionDecision \"deny\", which the
model receives as \"Error: REASON\". PostToolUse records what Read showed
(the whole text, or the lines under its \"Showing lines A-B of N\" marker
as a range, or the first 2,400 lines of a longer file as a start view),
what Create wrote, an Edit's replacement applied to the agent's last view
of the file, and what a read command run by Execute printed (cat, sed -n,
head, ...; only when the disk holds exactly that), each held against the
disk; then it tells the files changed since they were seen, each change
once, as additionalContext. droid exec fires no UserPromptSubmit, so the
reminder comes with the next tool result; UserPromptSubmit (the
interactive Droid) is answered the same way. SessionStart sends only
--also files Droid does not load (it loads AGENTS.md).";

const DROID_EXAMPLES: &str = "\
Examples:
  fsview-hook install droid                wire it into .factory/settings.json
  fsview-hook droid < payload.json         answer one payload: JSON on stdout, or nothing

Exit codes:
  0  answered (a deny is an answer: JSON on stdout), or failed open
  2  bad arguments, or failed closed outside the gate";

const CLINE_ABOUT: &str = "\
Answer one Cline CLI hook payload (JSON on stdin).

Cline runs the hook files named by event in .clinerules/hooks/ (and
~/.cline/hooks/); install cline writes PreToolUse.bash and
PostToolUse.bash there, each running fsview-hook cline by its absolute
path. PreToolUse gates editor (a targeted edit; without old_text the
creation of a missing file), apply_patch and run_commands (each file a
command writes). Cline has no answer that refuses one call (cancel ends
the whole task, an exit code is ignored): a refusal runs the call with an
input the tool rejects (overrideInput) and tells the model why (context,
a <hook_context> after the tool's error). PostToolUse records what
read_files showed (its N | line text; a capped read is a partial view),
what editor wrote and what run_commands printed, and tells the files
changed since they were seen (contextModification). A subagent
(spawn_agent: a parent_agent_id) has views of its own. When fsview-hook
is missing, the hook file refuses editor, apply_patch and run_commands
itself.";

const CLINE_EXAMPLES: &str = "\
Examples:
  fsview-hook install cline                .clinerules/hooks/ (--user: ~/.cline/hooks/)
  fsview-hook cline < payload.json         answer one payload: JSON on stdout, or nothing

Exit codes:
  0  answered (a refusal is an answer: JSON on stdout), or failed open
  2  bad arguments";

const INSTALL_EXAMPLES: &str = "\
Examples:
  fsview-hook install claude               .claude/settings.local.json (this project, you)
  fsview-hook install claude --project     .claude/settings.json (this project, checked in)
  fsview-hook install claude --user        ~/.claude/settings.json (every project)
  fsview-hook install claude --uninstall   give back what install changed, exactly
  fsview-hook install claude --short-reads off  ... with every re-read given the file's text
  fsview-hook install gemini               .gemini/settings.json (this project)
  fsview-hook install gemini --user        $GEMINI_CLI_HOME/.gemini/settings.json, else ~/.gemini/...
  fsview-hook install codex                .codex/hooks.json (this project)
  fsview-hook install codex --user         $CODEX_HOME/hooks.json, else ~/.codex/hooks.json
  fsview-hook install qwen                 .qwen/settings.json (--user: ~/.qwen/settings.json)
  fsview-hook install opencode             .opencode/plugins/fsview.js at the top of the work tree
  fsview-hook install copilot              .github/hooks/fsview.json at the top of the work tree
  fsview-hook install droid                .factory/settings.json (--user: ~/.factory/settings.json)
  fsview-hook install kilo                 .kilo/plugins/fsview.js at the top of the work tree
  fsview-hook install pi                   .pi/extensions/fsview.js (--user: ~/.pi/agent/extensions/)
  fsview-hook install cline                .clinerules/hooks/*.bash at the top of the work tree

Exit codes:
  0  installed, uninstalled, or already as asked
  2  a settings file that is not valid JSON or cannot be written (left as it was)";

/// What to do with a payload that cannot be answered, or a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnError {
    /// Exit 0 with no answer: the agent goes on as if there were no hook
    Open,
    /// The gate: deny, naming the problem; other events: exit 2 (a blocking
    /// error)
    Closed,
}

#[derive(ClapArgs, Debug)]
pub struct HookArgs {
    /// The session file [default: fsview/session.db in the git directory of
    /// the payload's cwd, else $XDG_STATE_HOME/fsview/session.db]
    #[arg(long, env = "FSVIEW_SESSION", value_name = "FILE")]
    pub session: Option<PathBuf>,

    /// The fsview session to use instead of the payload's session_id (a
    /// subagent's views are ID/AGENT_ID)
    #[arg(long, value_name = "ID")]
    pub sid: Option<String>,

    /// Fail open or closed on a payload that cannot be answered or a
    /// failure [default: closed for the gate, open for the rest]
    #[arg(long, value_enum, value_name = "MODE")]
    pub on_error: Option<OnError>,

    /// This hook answers the agent's event before a change (PreToolUse,
    /// BeforeTool, tool.execute.before): a payload that cannot be read at
    /// all is refused, as the gate refuses a change it cannot check. The
    /// installed hooks pass it.
    #[arg(long)]
    pub gate: bool,

    /// Approve the changes the gate lets through (Claude Code and Codex:
    /// permissionDecision "allow"; gemini-cli: decision "allow"), skipping
    /// the agent's own permission prompt, instead of no opinion
    #[arg(long)]
    pub allow: bool,

    /// SessionStart: another instruction file name for ctx-build to read;
    /// files of names the agent does not load itself are sent to the model
    #[arg(
        long,
        value_name = "NAME",
        env = "FSVIEW_INSTRUCTION_NAMES",
        value_delimiter = ','
    )]
    pub also: Vec<String>,

    /// At a prompt (UserPromptSubmit, BeforeAgent): most diff lines shown
    /// per file
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub diff_lines: usize,

    /// At a prompt: most diff lines shown in all
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub total_diff_lines: usize,

    /// Answer a whole re-read of a file the conversation still holds,
    /// unchanged, with a short notice instead of its text (Claude Code,
    /// pi): on, off, or auto (on for an agent whose compactions and rewinds
    /// fsview follows, since a conversation that dropped the text must get
    /// it again)
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value = "auto",
        env = "FSVIEW_SHORT_READS"
    )]
    pub short_reads: ShortReads,

    /// Give the model a small file (24 KiB, 2,000 lines of text at most)
    /// whole where it would otherwise have to read it: a rewrite whose diff
    /// --diff-lines would cut is told by its whole text when that is
    /// shorter (within --total-diff-lines), and a refusal carries the file
    /// when its change cannot be told whole or a compaction or rewind
    /// dropped it from the conversation. off: diffs are cut, and such
    /// refusals say "read it again" (or "first")
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value = "on",
        env = "FSVIEW_GIVE_BACK"
    )]
    pub give_back: OnOff,

    /// A targeted edit (Claude Code's Edit) of a file that changed since
    /// the agent read it: merge, when the edit is 3 or more lines from
    /// every line the change touched, applies it to the file as it is and
    /// tells the model the change with it; refuse always refuses it, with
    /// the change. Merging needs an agent that can be told with a change it
    /// lets through (Claude Code); for the others every such edit is
    /// refused
    #[arg(
        long,
        value_enum,
        value_name = "WHAT",
        default_value = "merge",
        env = "FSVIEW_ON_CHANGE"
    )]
    pub on_change: OnChange,
}

/// What a targeted edit of a changed file gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnChange {
    Merge,
    Refuse,
}

/// A switch that is on or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

/// When unchanged re-reads are answered short.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ShortReads {
    On,
    Off,
    Auto,
}

impl ShortReads {
    fn choice(self) -> Option<bool> {
        match self {
            ShortReads::On => Some(true),
            ShortReads::Off => Some(false),
            ShortReads::Auto => None,
        }
    }
}

/// A Copilot CLI hook event fsview-hook answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CopilotEvent {
    #[value(name = "preToolUse")]
    PreToolUse,
    #[value(name = "postToolUse")]
    PostToolUse,
    #[value(name = "userPromptSubmitted")]
    UserPromptSubmitted,
    #[value(name = "preCompact")]
    PreCompact,
}

#[derive(ClapArgs, Debug)]
pub struct CopilotArgs {
    /// The hook event the payload is [default: told by its fields]
    #[arg(long, value_enum, value_name = "EVENT")]
    pub event: Option<CopilotEvent>,

    #[command(flatten)]
    pub hook: HookArgs,
}

/// The agents whose settings `install` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InstallAgent {
    /// Claude Code (.claude/settings*.json)
    Claude,
    /// gemini-cli (.gemini/settings.json)
    Gemini,
    /// Codex (.codex/hooks.json)
    Codex,
    /// Qwen Code (.qwen/settings.json)
    Qwen,
    /// opencode (a plugin in .opencode/plugins/)
    Opencode,
    /// GitHub Copilot CLI (.github/hooks/fsview.json)
    Copilot,
    /// Factory Droid (.factory/settings.json)
    Droid,
    /// Kilo Code CLI (a plugin in .kilo/plugins/)
    Kilo,
    /// pi (an extension in .pi/extensions/)
    Pi,
    /// Cline CLI (hook files in .clinerules/hooks/)
    Cline,
}

#[derive(ClapArgs, Debug)]
pub struct InstallArgs {
    /// Whose settings to change
    #[arg(value_enum, value_name = "AGENT")]
    pub agent: InstallAgent,

    /// The project's settings, checked in (claude: .claude/settings.json,
    /// gemini: .gemini/settings.json, codex: .codex/hooks.json, qwen:
    /// .qwen/settings.json, droid: .factory/settings.json, pi:
    /// .pi/extensions/fsview.js, in the current directory; opencode: .opencode/plugins/fsview.js, kilo:
    /// .kilo/plugins/fsview.js, cline: .clinerules/hooks/ and copilot: .github/hooks/fsview.json at
    /// the top of the git work tree) [default for every agent but claude]
    #[arg(long, group = "scope")]
    pub project: bool,

    /// The project's settings for you only, not checked in (claude only:
    /// .claude/settings.local.json at the top of the git work tree, kept
    /// out of git in this clone) [default for claude]
    #[arg(long, group = "scope")]
    pub local: bool,

    /// Your settings for every project (claude: $CLAUDE_CONFIG_DIR, else
    /// ~/.claude; gemini: $GEMINI_CLI_HOME/.gemini, else ~/.gemini; codex:
    /// $CODEX_HOME/hooks.json, else ~/.codex/hooks.json; qwen:
    /// ~/.qwen/settings.json; droid: ~/.factory/settings.json; opencode:
    /// ~/.config/opencode/plugins/; kilo: ~/.config/kilo/plugins/; pi:
    /// $PI_CODING_AGENT_DIR, else ~/.pi/agent, /extensions/;
    /// copilot: $COPILOT_HOME, else ~/.copilot, /hooks/; cline:
    /// ~/.cline/hooks/)
    #[arg(long, group = "scope")]
    pub user: bool,

    /// Give back what install changed: files it made removed (with the
    /// folders made for them), files it changed restored byte for byte, or,
    /// where you changed them since, only fsview-hook's entries taken out
    #[arg(long)]
    pub uninstall: bool,

    /// Have each hook pass --also NAME (instruction files of other names
    /// for the model at session start)
    #[arg(long, value_name = "NAME", conflicts_with = "uninstall")]
    pub also: Vec<String>,

    /// Have each hook pass --short-reads WHEN (answer unchanged re-reads
    /// short: on, off, auto)
    #[arg(long, value_enum, value_name = "WHEN", conflicts_with = "uninstall")]
    pub short_reads: Option<ShortReads>,

    /// Have each hook pass --give-back WHEN (refusals give back a small
    /// file whole: on, off)
    #[arg(long, value_enum, value_name = "WHEN", conflicts_with = "uninstall")]
    pub give_back: Option<OnOff>,

    /// Have each hook pass --on-change WHAT (an edit of a file changed
    /// since it was read: merge where it does not collide, or refuse)
    #[arg(long, value_enum, value_name = "WHAT", conflicts_with = "uninstall")]
    pub on_change: Option<OnChange>,

    /// Write one JSON object to stdout saying what was done (see
    /// fsview-json(7))
    #[arg(long)]
    pub json: bool,

    /// Print nothing when it worked
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn command() -> clap::Command {
    Args::command()
}

pub fn main() -> u8 {
    let args: Args = common::parse(command);
    match &args.command {
        Cmd::Claude(a) => answer(&Claude, a, a.gate),
        Cmd::Gemini(a) => answer(&Gemini, a, a.gate),
        Cmd::Codex(a) => answer(&Codex, a, a.gate),
        Cmd::Qwen(a) => answer(&Qwen, a, a.gate),
        Cmd::Opencode(a) => answer(&Opencode(&OPENCODE), a, a.gate),
        Cmd::Kilo(a) => answer(&Opencode(&KILO), a, a.gate),
        Cmd::Pi(a) => answer(&Pi, a, a.gate),
        Cmd::Droid(a) => answer(&Droid, a, a.gate),
        Cmd::Cline(a) => answer(&Cline, a, a.gate),
        Cmd::Copilot(a) => {
            let event = a
                .event
                .and_then(|e| e.to_possible_value())
                .map(|v| v.get_name().to_string());
            let gate = a.hook.gate || a.event == Some(CopilotEvent::PreToolUse);
            answer(&Copilot { event }, &a.hook, gate)
        }
        Cmd::Install(a) => common::finish(TOOL, install(a)),
    }
}

/// Answer one payload on stdin for `agent`.
fn answer(agent: &dyn Agent, args: &HookArgs, gate: bool) -> u8 {
    // Agents pipe their payloads in; a terminal there is a person trying
    // the command, who is told how, rather than left waiting.
    if std::io::stdin().is_terminal() {
        eprintln!(
            "{TOOL}: standard input is a terminal, not a hook payload; the agent sends one once `fsview-hook install AGENT` wired it in, or pipe one in: fsview-hook AGENT < payload.json"
        );
        return 2;
    }
    let reply = match options(args, gate) {
        Ok(opts) => {
            let mut input = Vec::new();
            match std::io::stdin().lock().read_to_end(&mut input) {
                Ok(_) => fsview_agents::run(agent, &opts, closed(args), &input),
                Err(e) => agent.fail(
                    unread(gate),
                    &format!(
                        "cannot read the hook payload from standard input: {}",
                        plain_io(&e)
                    ),
                    closed(args).unwrap_or(gate),
                ),
            }
        }
        Err(e) => agent.fail(unread(gate), e.message(), closed(args).unwrap_or(gate)),
    };
    emit(&reply)
}

/// The stage of a payload that could not be read: the gate's, for a hook
/// wired to the agent's event before a change.
fn unread(gate: bool) -> fsview_agents::event::Stage {
    if gate {
        fsview_agents::event::Stage::AboutToChange
    } else {
        fsview_agents::event::Stage::Other
    }
}

fn closed(args: &HookArgs) -> Option<bool> {
    args.on_error.map(|m| m == OnError::Closed)
}

fn options(args: &HookArgs, gate: bool) -> Result<Options, Error> {
    // A relative --session is relative to where the hook runs.
    let session = match &args.session {
        Some(p) if p.is_relative() => Some(common::current_dir()?.join(p)),
        other => other.clone(),
    };
    let exe = std::env::current_exe()
        .map_err(|e| Error::new(format!("cannot find fsview-hook itself: {}", plain_io(&e))))?;
    Ok(Options {
        session,
        sid: args.sid.clone(),
        allow: args.allow,
        limits: Limits {
            per_file: args.diff_lines,
            total: args.total_diff_lines,
            rewrites: args.give_back == OnOff::On,
            // Each agent's own numbering: see fsview_agents::Agent::numbers_reads.
            numbered: true,
            crlf_as_lf: false,
        },
        also: args.also.clone(),
        bin_dir: exe.parent().map(Path::to_path_buf).unwrap_or_default(),
        gate,
        short_reads: args.short_reads.choice(),
        give_back: args.give_back == OnOff::On,
        on_change: match args.on_change {
            OnChange::Merge => fsview_store::merge::OnChange::Merge,
            OnChange::Refuse => fsview_store::merge::OnChange::Refuse,
        },
    })
}

/// Print a reply and turn it into the exit code.
fn emit(reply: &Reply) -> u8 {
    let mut out = Out::new(TOOL, false);
    if let Some(line) = &reply.stdout {
        let written = out
            .write(line)
            .and_then(|()| out.write("\n"))
            .and_then(|()| out.flush());
        if let Err(Stop::Error(e) | Stop::Output(e)) = written {
            eprintln!("{TOOL}: {e}");
            return 2;
        }
    }
    if let Some(msg) = &reply.stderr {
        out.error(msg);
    }
    reply.code
}

/// The installer of `agent`.
fn installer(agent: InstallAgent) -> &'static dyn Installer {
    match agent {
        InstallAgent::Claude => &ClaudeInstaller,
        InstallAgent::Gemini => &GeminiInstaller,
        InstallAgent::Codex => &CodexInstaller,
        InstallAgent::Qwen => &QwenInstaller,
        InstallAgent::Opencode => &OPENCODE,
        InstallAgent::Kilo => &KILO,
        InstallAgent::Pi => &PiInstaller,
        InstallAgent::Copilot => &CopilotInstaller,
        InstallAgent::Droid => &DroidInstaller,
        InstallAgent::Cline => &ClineInstaller,
    }
}

fn install(args: &InstallArgs) -> Result<Outcome, Stop> {
    let inst = installer(args.agent);
    let scope = if args.project {
        Scope::Project
    } else if args.user {
        Scope::User
    } else if args.local {
        Scope::Local
    } else {
        inst.default_scope()
    };
    let cwd = common::current_dir()?;
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| Error::new(format!("cannot find fsview-hook itself: {}", plain_io(&e))))?;
    let mut extra: Vec<String> = args
        .also
        .iter()
        .flat_map(|n| ["--also".to_string(), n.clone()])
        .collect();
    // The value as typed on the command line.
    fn word(v: impl ValueEnum) -> String {
        v.to_possible_value()
            .map(|v| v.get_name().to_string())
            .unwrap_or_default()
    }
    if let Some(when) = args.short_reads {
        extra.extend(["--short-reads".to_string(), word(when)]);
    }
    if let Some(when) = args.give_back {
        extra.extend(["--give-back".to_string(), word(when)]);
    }
    if let Some(what) = args.on_change {
        extra.extend(["--on-change".to_string(), word(what)]);
    }
    let run = install::Run { exe, args: extra };
    let done =
        install::install(inst, scope, args.uninstall, &run, &cwd).map_err(|p| Error::new(p.0))?;
    let mut out = Out::new(TOOL, args.quiet);
    if args.json {
        let mut m = json::object("install");
        m.insert("agent".into(), inst.agent().into());
        json::put_path(&mut m, "file", &done.file);
        m.insert(
            "action".into(),
            if args.uninstall {
                "uninstall"
            } else {
                "install"
            }
            .into(),
        );
        m.insert("changed".into(), done.changed.into());
        m.insert("command".into(), done.command.clone().into());
        m.insert(
            "events".into(),
            Value::from(
                done.events
                    .iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>(),
            ),
        );
        let files: Vec<Value> = done
            .files
            .iter()
            .map(|(f, what, _)| {
                let mut o = serde_json::Map::new();
                json::put_path(&mut o, "path", f);
                o.insert("done".into(), what.word().into());
                Value::Object(o)
            })
            .collect();
        m.insert("files".into(), files.into());
        let dirs: Vec<Value> = done
            .dirs_removed
            .iter()
            .map(|d| Value::from(d.to_string_lossy().into_owned()))
            .collect();
        m.insert("dirs_removed".into(), dirs.into());
        out.json(&Value::Object(m))?;
    } else if !args.quiet {
        out.write(&report(&done, args.uninstall))?;
        if let (false, Some(next)) = (args.uninstall, inst.next_step(scope, &cwd)) {
            out.write(&format!("{next}\n"))?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// What an install or uninstall did, a line a file, every path absolute.
fn report(done: &Done, uninstall: bool) -> String {
    let events = done.events.join(", ");
    let mut text = String::new();
    for (i, (file, what, purpose)) in done.files.iter().enumerate() {
        let file = common::shown(file);
        let line = match (uninstall, what, i) {
            (false, What::Unchanged, 0) => format!(
                "{file}: already runs {} ({events}); nothing changed",
                done.command
            ),
            (false, What::Created | What::Changed, 0) => {
                format!("{file}: {events} now run {}", done.command)
            }
            (false, What::Created | What::Changed, _) => match purpose {
                Some(p) => format!("{file}: {p}"),
                None => format!("{file}: changed"),
            },
            (true, What::Unchanged, 0) => {
                format!("{file}: no fsview-hook hooks; nothing changed")
            }
            (true, What::Restored, _) => {
                format!("{file}: given back as it was before fsview-hook changed it")
            }
            (true, What::Removed, _) => format!("{file}: removed (fsview-hook had made it)"),
            (true, What::Stripped, _) => {
                format!("{file}: fsview-hook's entries removed; everything else kept")
            }
            _ => continue,
        };
        text.push_str(&line);
        text.push('\n');
    }
    for d in &done.dirs_removed {
        text.push_str(&format!(
            "{}: removed (made for fsview-hook's files, now empty)\n",
            common::shown(d)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_command() {
        command().debug_assert();
    }
}
