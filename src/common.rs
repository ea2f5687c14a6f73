//! What every fsview tool shares: the session options, the output stream,
//! and the one choke point where an outcome becomes an exit code.
//!
//! Exit codes: 0 ok, 1 a negative verdict (an edit denied, a change found),
//! 2 an error. A closed stdout (`fsview-read big | head`) ends the run
//! quietly with 0, as ripgrep does.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use fsview_store::error::{escape_bytes, quote_id};
use fsview_store::{location, Error, Store};

/// Options every tool takes.
#[derive(clap::Args, Debug, Clone)]
pub struct SessionArgs {
    /// The session file [default: fsview/session.db in the git directory, else
    /// $XDG_STATE_HOME/fsview/session.db]
    #[arg(long, env = "FSVIEW_SESSION", value_name = "FILE", global = true)]
    pub session: Option<PathBuf>,

    /// The session (conversation) within the file; `S/A` names agent A's
    /// views in conversation S, as `--sid S --agent A` does
    #[arg(
        id = "sid",
        long = "sid",
        env = "FSVIEW_SID",
        value_name = "ID",
        default_value = "default",
        global = true
    )]
    pub session_id: String,

    /// The agent of the session whose views to use: a subagent's id, or
    /// `main` for the main thread [default: main]
    #[arg(long, env = "FSVIEW_AGENT", value_name = "ID", global = true)]
    pub agent: Option<String>,

    /// Write JSON Lines to stdout, one object per input (see fsview-json(7))
    #[arg(long, global = true)]
    pub json: bool,

    /// Print no notices on stderr (errors are still printed)
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

impl SessionArgs {
    /// The session file's path, as flags, environment and cwd decide.
    pub fn session_path(&self, cwd: &Path) -> Result<PathBuf, Error> {
        location::session_path(self.session.as_deref(), cwd)
    }

    /// Open (creating if needed) the session file, for `tool`. With
    /// `--agent A`, agent A's session is created (empty, inside the
    /// conversation) when it does not exist yet.
    pub fn open(&self, cwd: &Path, tool: &str) -> Result<Store, Error> {
        let store = self.open_plain(cwd)?;
        self.ensure_agent(&store, tool)?;
        Ok(store)
    }

    /// Open the session file if it exists, for `tool`, as [`Self::open`].
    pub fn open_existing(&self, cwd: &Path, tool: &str) -> Result<Option<Store>, Error> {
        let store = self.inspect(cwd)?;
        if let Some(store) = &store {
            self.ensure_agent(store, tool)?;
        }
        Ok(store)
    }

    /// Open (creating if needed) the session file, and change nothing in
    /// it (no agent's session is created). Only the default location is
    /// created with its directories: a path given with --session or
    /// FSVIEW_SESSION must be in an existing directory, so a typo is an
    /// error, not a new directory tree holding an empty session.
    pub fn open_plain(&self, cwd: &Path) -> Result<Store, Error> {
        self.check_sid()?;
        let path = self.session_path(cwd)?;
        if let Some(given) = &self.session {
            location::check_explicit_dir(&path, given)?;
        }
        Store::open(&path)
    }

    /// Open the session file if it exists, and change nothing in it.
    pub fn inspect(&self, cwd: &Path) -> Result<Option<Store>, Error> {
        self.check_sid()?;
        Store::open_existing(&self.session_path(cwd)?)
    }

    fn ensure_agent(&self, store: &Store, tool: &str) -> Result<(), Error> {
        if let Some(agent) = self.agent_id() {
            if !store.has_session(&self.sid())? {
                store.start_agent(
                    &self.session_id,
                    agent,
                    None,
                    fsview_store::agents::Start::Empty,
                    tool,
                )?;
            }
        } else if let Some((conversation, agent)) = self.split_sid() {
            // `--sid S/A` is `--sid S --agent A`: the agent's session of
            // conversation S (listed, shown and dropped with it), however
            // it was made.
            store.start_agent(
                conversation,
                agent,
                None,
                fsview_store::agents::Start::Empty,
                tool,
            )?;
        }
        Ok(())
    }

    /// `--sid S/A` without `--agent`: conversation S and agent A (not the
    /// main thread: `S/main` is S).
    fn split_sid(&self) -> Option<(&str, &str)> {
        if self.agent.is_some() {
            return None;
        }
        self.session_id
            .split_once('/')
            .filter(|(c, a)| !c.is_empty() && !a.is_empty() && *a != MAIN_AGENT)
    }

    /// The session holding the views the tool works on: `--sid`, or with
    /// `--agent A` (other than `main`) agent A's session inside it.
    pub fn sid(&self) -> String {
        match self.agent_id() {
            Some(a) => fsview_store::agents::sid_of(&self.session_id, a),
            None => match self.session_id.strip_suffix("/main") {
                Some(c) if self.agent.is_none() && !c.is_empty() => c.to_string(),
                _ => self.session_id.clone(),
            },
        }
    }

    /// The subagent `--agent` names, if any (`main` is the main thread).
    pub fn agent_id(&self) -> Option<&str> {
        self.agent.as_deref().filter(|a| *a != MAIN_AGENT)
    }

    /// Whether `--agent` chose one agent's views (the main thread's or a
    /// subagent's), rather than a whole conversation.
    pub fn one_agent(&self) -> bool {
        self.agent.is_some()
    }

    pub fn check_sid(&self) -> Result<(), Error> {
        let sid = &self.session_id;
        if sid.is_empty() || sid.len() > 200 || sid.chars().any(char::is_control) {
            return Err(Error::new(format!(
                "invalid session id {}: use 1 to 200 printable characters (--sid or FSVIEW_SID)",
                quote_id(sid)
            )));
        }
        if let Some(a) = &self.agent {
            if a.is_empty() || a.len() > 200 || a.chars().any(char::is_control) {
                return Err(Error::new(format!(
                    "invalid agent id {}: use 1 to 200 printable characters, or main for the main thread (--agent or FSVIEW_AGENT)",
                    quote_id(a)
                )));
            }
        }
        Ok(())
    }
}

/// `--agent main`: the main thread of a conversation, whose views are the
/// conversation's session itself.
pub const MAIN_AGENT: &str = "main";

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Ok = 0,
    Negative = 1,
    Error = 2,
}

impl Outcome {
    pub fn worst(self, other: Outcome) -> Outcome {
        self.max(other)
    }
}

/// Why a run stopped early.
#[derive(Debug)]
pub enum Stop {
    /// An error for the whole run (not one path).
    Error(Error),
    /// Nobody reads our stdout any more.
    BrokenPipe,
    /// Stdout cannot be written (a full disk): an error for the whole
    /// run, whichever input it was writing.
    Output(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Error(e)
    }
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Stop::BrokenPipe
        } else {
            Stop::Output(Error::new(format!(
                "cannot write to standard output: {}",
                fsview_store::error::plain_io(&e)
            )))
        }
    }
}

/// Run a tool and turn its outcome into the exit code: the only place that
/// does.
pub fn finish(tool: &str, result: Result<Outcome, Stop>) -> u8 {
    match result {
        Ok(o) => o as u8,
        Err(Stop::BrokenPipe) => 0,
        Err(Stop::Error(e) | Stop::Output(e)) => {
            eprintln!("{tool}: {e}");
            2
        }
    }
}

/// Parse arguments: the one place a bad command line becomes exit 2.
///
/// `--help` and `--version` print and exit 0 before anything opens the
/// session file. Any other error clap finds is printed as one line, `TOOL:
/// what is wrong; what to do` (see [`crate::usage`]), and exits 2.
///
/// `command` builds the tool's command. Its help is laid out
/// ([`with_exit_status`]) only when it is shown: `--help`, `-h` and every
/// error parse again with it, and a call that parses costs none of it.
pub fn parse<T: clap::FromArgMatches>(command: impl Fn() -> clap::Command) -> T {
    parse_with_matches(command).0
}

/// [`parse`] for a tool that also needs the matches themselves (where a
/// value came from).
pub fn parse_with_matches<T: clap::FromArgMatches>(
    command: impl Fn() -> clap::Command,
) -> (T, clap::ArgMatches) {
    let matches = parse_matches(&command);
    match T::from_arg_matches(&matches) {
        Ok(t) => (t, matches),
        Err(e) => usage_exit(&prepare(command()), e),
    }
}

/// [`parse`] for a tool without a derived argument struct.
pub fn parse_matches(command: impl Fn() -> clap::Command) -> clap::ArgMatches {
    // A file size limit (`ulimit -f`) must be an error we report, like a
    // full disk, not a signal that kills us mid-write.
    // SAFETY: setting a signal to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    if let Ok(m) = negatives_are_values(command()).try_get_matches_from(std::env::args_os()) {
        return m;
    }
    matches(&mut prepare(command()))
}

fn prepare(cmd: clap::Command) -> clap::Command {
    negatives_are_values(with_exit_status(cmd))
}

fn matches(cmd: &mut clap::Command) -> clap::ArgMatches {
    match cmd.try_get_matches_from_mut(std::env::args_os()) {
        Ok(m) => m,
        Err(e) => usage_exit(cmd, e),
    }
}

/// `--limit -1` hands `-1` to --limit's parser, which says what --limit
/// takes, instead of clap reading `-1` as an unknown flag.
fn negatives_are_values(cmd: clap::Command) -> clap::Command {
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    // Options of one value only: `-0` must stay a flag before PATHs, and a
    // list such as `--forget -0 -` must not swallow it.
    let mut cmd = cmd.mut_args(|a| {
        let one_value = a
            .get_num_args()
            .is_none_or(|r| r.min_values() == 1 && r.max_values() == 1);
        if !a.is_positional() && a.get_action().takes_values() && one_value {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    });
    for name in subs {
        cmd = cmd.mut_subcommand(name, negatives_are_values);
    }
    cmd
}

fn usage_exit(cmd: &clap::Command, e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    eprintln!(
        "{}: {}",
        cmd.get_name(),
        crate::usage::message(cmd, &e, &args)
    );
    std::process::exit(2)
}

/// What each tool's exit codes mean, for `--help` ("Exit status:") and the
/// man pages' EXIT STATUS. Every tool exits 0 (ok), 1 (a negative verdict)
/// or 2 (an error); a tool that has no negative verdict never exits 1.
pub fn exit_status(tool: &str) -> Option<&'static [(&'static str, &'static str)]> {
    Some(match tool {
        "fsview-read" => &[
            ("0", "every file was shown (or recorded)"),
            ("2", "an error: bad arguments, a file that could not be shown (the others still were), an unusable session file"),
        ],
        "fsview-check-edit" => &[
            ("0", "every path may be changed (ok or new_file); with --changed, nothing changed"),
            ("1", "at least one path was denied; with --changed, at least one file changed"),
            ("2", "an error: bad arguments, a path that is not a regular file, an unusable session file"),
        ],
        "ctx-build" => &[
            ("0", "the context was built, or returned from the cache"),
            ("2", "an error: bad arguments, an unusable session file, a bad SOURCE_DATE_EPOCH"),
        ],
        "ctx-invalidate" => &[
            ("0", "done, or nothing to do (no session file yet); install-hooks: the hooks are installed or removed"),
            ("2", "an error: bad arguments, an unusable session file; install-hooks: not in a git work tree, a hook it cannot chain"),
        ],
        "fsview-edit" => &[
            ("0", "every edit was applied (or, with --dry-run, would be)"),
            ("1", "at least one was refused: the gate (not_read, processed_view, modified, ...) or the Edit rules (not_found, ambiguous, no_change, file_exists); its file is untouched"),
            ("2", "an error: bad arguments, a malformed request line (the good ones are still applied), a file that cannot be read or written, an unusable session file"),
        ],
        "fsview-write" => &[
            ("0", "every file was written (or, with --dry-run, would be)"),
            ("1", "at least one was refused by the gate (a whole-file write needs a fresh full view); its file is untouched"),
            ("2", "an error: bad arguments, a malformed request line (the good ones are still written), a file that cannot be written, an unusable session file"),
        ],
        "fsview-mcp" => &[
            ("0", "the client closed the connection (end of standard input); refusals and failures of tools are tool results, not exit codes"),
            ("2", "an error at start: bad arguments, a --dir that is not a directory, an unusable session file; or standard input or output failed"),
        ],
        "fsview-demo" => &[
            ("0", "every step ran (the denials it shows are part of the demo)"),
            ("2", "an error: bad arguments, git or the fsview tools missing, a tool that failed"),
        ],
        "fsview-session" => &[
            ("0", "done; list also when there is no session file (nothing is created)"),
            ("1", "show FILE...: a file named has no view in the session"),
            ("2", "an error: bad arguments, an unusable session file, a session that does not exist (show, events, fork, drop, export) or already exists (fork, import without --replace), a malformed export document (nothing is imported)"),
        ],
        _ => return None,
    })
}

/// The options of [`SessionArgs`], which `-h` names in one line.
const SHARED: [&str; 5] = ["session", "sid", "agent", "json", "quiet"];

/// How many examples `-h` shows; `--help` shows them all.
const SHORT_EXAMPLES: usize = 3;

/// The widest a line of help may be, as a man page is read.
pub const HELP_WIDTH: usize = 80;

/// `cmd`'s help in two lengths, for the tool and each of its commands:
/// `-h` gives each option's first clause and the first few examples;
/// `--help` gives everything, every example and the exit status. Examples
/// are laid out to fit [`HELP_WIDTH`] columns: a description that does not
/// fit beside its command goes under it.
pub fn with_exit_status(cmd: clap::Command) -> clap::Command {
    let name = cmd.get_name().to_string();
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut cmd = two_lengths(cmd, &name, exit_status(&name));
    for sub in subs {
        let full = format!("{name} {sub}");
        cmd = cmd.mut_subcommand(&sub, |c| {
            // The list of commands in -h shows each one's first clause.
            let c = match (c.get_about().map(|a| a.to_string()), c.get_long_about()) {
                (Some(about), None) if first_clause(&about) != about => {
                    c.about(first_clause(&about)).long_about(about)
                }
                _ => c,
            };
            two_lengths(c, &full, None)
        });
    }
    cmd
}

fn two_lengths(cmd: clap::Command, name: &str, codes: Option<&[(&str, &str)]>) -> clap::Command {
    let text = cmd
        .get_after_long_help()
        .or(cmd.get_after_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    let (before, examples, after) = examples_of(&text);
    let mut long = before.clone();
    let mut short = before;
    if !examples.is_empty() {
        long.push_str(&lay_out_examples(&examples));
        short.push_str(&lay_out_examples(
            &examples[..examples.len().min(SHORT_EXAMPLES)],
        ));
    }
    long.push_str(&after);
    if let Some(codes) = codes {
        if !long.is_empty() {
            long.push_str("\n\n");
        }
        long.push_str("Exit status:");
        for (code, what) in codes {
            long.push('\n');
            long.push_str(&wrap(&format!("  {code}  "), what, 5));
        }
    }
    let shared = cmd.get_arguments().any(|a| a.get_id() == "session");
    if !short.is_empty() {
        short.push_str("\n\n");
    }
    if shared {
        // The options every tool takes are said once, in --help.
        short.push_str("Also --session FILE, --sid ID, --agent ID, --json, --quiet.\n");
    }
    short.push_str(&if name.contains(' ') {
        format!("More: {name} --help")
    } else {
        format!("More: {name} --help, man {name}")
    });
    cmd.after_help(short.trim_end().to_string())
        .after_long_help(long.trim_end().to_string())
        .max_term_width(HELP_WIDTH)
        .mut_args(|a| {
            let a = if SHARED.contains(&a.get_id().as_str()) {
                a.hide_short_help(true)
            } else {
                a
            };
            let Some(help) = a.get_help().map(|h| h.to_string()) else {
                return a;
            };
            if a.get_long_help().is_some() {
                return a;
            }
            let first = first_clause(&help);
            if first == help {
                a
            } else {
                a.help(first).long_help(help)
            }
        })
}

/// An option's (or a command's) help as `-h` shows it: without its
/// parentheses, up to its first `;` or sentence end; what is in brackets
/// (`[default: ...]`) is kept whole.
pub fn first_clause(help: &str) -> String {
    let mut out = String::new();
    let (mut square, mut round) = (0i32, 0i32);
    let mut chars = help.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '[' if round == 0 => square += 1,
            ']' if round == 0 => square -= 1,
            '(' if square == 0 => {
                round += 1;
                // The space before a parenthesis goes with it.
                if round == 1 && out.ends_with(' ') {
                    out.pop();
                }
                continue;
            }
            ')' if square == 0 && round > 0 => {
                round -= 1;
                continue;
            }
            _ if round > 0 => continue,
            ';' | '.' if square == 0 && help[i + 1..].starts_with(' ') => break,
            _ => {}
        }
        out.push(c);
        let _ = chars.peek();
    }
    out.trim_end_matches('.').trim_end().to_string()
}

/// Text after help split around its "Examples:" block: the text before, the
/// examples as (command, description) pairs, and the text after (the next
/// heading on).
pub fn examples_of(text: &str) -> (String, Vec<(String, String)>, String) {
    let Some(start) = text.find("Examples:\n") else {
        return (text.to_string(), Vec::new(), String::new());
    };
    let before = text[..start].to_string();
    let mut examples: Vec<(String, String)> = Vec::new();
    let mut rest = String::new();
    let mut lines = text[start + "Examples:\n".len()..].lines();
    for line in lines.by_ref() {
        if line.is_empty() {
            rest.push('\n');
            break;
        }
        let body = line.trim_start();
        let indent = line.len() - body.len();
        // A line indented past the commands continues a description.
        if indent > 4 {
            if let Some((_, d)) = examples.last_mut() {
                if !d.is_empty() {
                    d.push(' ');
                }
                d.push_str(body);
            }
            continue;
        }
        match body.find("   ").or_else(|| body.find("  ")) {
            Some(i) => examples.push((body[..i].to_string(), body[i..].trim().to_string())),
            None => examples.push((body.to_string(), String::new())),
        }
    }
    for line in lines {
        rest.push('\n');
        rest.push_str(line);
    }
    (before, examples, rest)
}

/// Examples as help shows them: "Examples:", then each command with its
/// description beside it, in one column, wrapped to [`HELP_WIDTH`]; a
/// command too long for the column has its description under it, in the
/// column.
pub fn lay_out_examples(examples: &[(String, String)]) -> String {
    let column = examples
        .iter()
        .map(|(c, _)| c.len() + 5)
        .filter(|w| *w <= 46)
        .max()
        .unwrap_or(20);
    let mut out = String::from("Examples:");
    for (cmd, what) in examples {
        out.push_str("\n  ");
        out.push_str(cmd);
        if what.is_empty() {
            continue;
        }
        if cmd.len() + 4 <= column {
            let lead = format!("{:w$}", "", w = column - 2 - cmd.len());
            out.push_str(&wrap(&lead, what, column));
        } else {
            out.push('\n');
            out.push_str(&wrap(&" ".repeat(column), what, column));
        }
    }
    out
}

/// `what` after `lead`, wrapped at [`HELP_WIDTH`] with continuation lines
/// indented by `indent`; `lead` is counted as if it started its line at
/// `indent` less its own width.
fn wrap(lead: &str, what: &str, indent: usize) -> String {
    let mut text = String::new();
    let mut line = lead.to_string();
    // Where the line really starts: a lead of spaces after a command is
    // placed at the column.
    let mut width = indent.max(lead.len());
    let mut empty = true;
    for word in what.split(' ') {
        if !empty && width + 1 + word.len() > HELP_WIDTH {
            text.push_str(line.trim_end());
            text.push('\n');
            line = " ".repeat(indent);
            width = indent;
            empty = true;
        }
        if !empty {
            line.push(' ');
            width += 1;
        }
        line.push_str(word);
        width += word.len();
        empty = false;
    }
    text.push_str(line.trim_end());
    text
}

/// Stdout, buffered, with diagnostics to stderr under the tool's name.
pub struct Out {
    pub tool: &'static str,
    pub quiet: bool,
    w: BufWriter<io::Stdout>,
}

impl Out {
    pub fn new(tool: &'static str, quiet: bool) -> Out {
        Out {
            tool,
            quiet,
            w: BufWriter::with_capacity(64 * 1024, io::stdout()),
        }
    }

    pub fn write(&mut self, s: &str) -> Result<(), Stop> {
        self.w.write_all(s.as_bytes())?;
        Ok(())
    }

    /// The buffered stdout, for output written as it is made.
    pub fn writer(&mut self) -> &mut impl Write {
        &mut self.w
    }

    pub fn json(&mut self, v: &serde_json::Value) -> Result<(), Stop> {
        serde_json::to_writer(&mut self.w, v).map_err(io::Error::from)?;
        self.w.write_all(b"\n")?;
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), Stop> {
        self.w.flush()?;
        Ok(())
    }

    /// A notice on stderr, unless `--quiet`.
    pub fn notice(&mut self, msg: &str) {
        if !self.quiet {
            let _ = self.w.flush();
            eprintln!("{}: {msg}", self.tool);
        }
    }

    /// What the caller must hear even under `--quiet`, since what it is
    /// taken to hold depends on it (a merged edit's other change); with
    /// `--json` the JSON carries it, and `--quiet` keeps stderr quiet.
    pub fn told(&mut self, msg: &str, json: bool) {
        if !(self.quiet && json) {
            let _ = self.w.flush();
            eprintln!("{}: {msg}", self.tool);
        }
    }

    /// An error about one input on stderr; the run goes on.
    pub fn error(&mut self, msg: &str) {
        let _ = self.w.flush();
        eprintln!("{}: {msg}", self.tool);
    }
}

/// A path as text output shows it: escaped so it stays on one line.
pub fn shown(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    escape_bytes(path.as_os_str().as_bytes())
}

pub fn current_dir() -> Result<PathBuf, Error> {
    std::env::current_dir().map_err(|e| {
        Error::new(format!(
            "cannot read the current directory: {}; cd to an existing directory",
            fsview_store::error::plain_io(&e)
        ))
    })
}

/// All of standard input, which holds `what` ("the processed text"); a
/// terminal there is refused with `how` to give it, never waited on: a
/// reader that waits for a terminal looks hung, and Ctrl-D would hand it
/// nothing as if that were the input.
pub fn stdin_bytes(what: &str, how: &str) -> Result<Vec<u8>, Error> {
    use std::io::IsTerminal;
    if io::stdin().is_terminal() {
        return Err(Error::new(format!(
            "standard input is a terminal, not {what}; {how}"
        )));
    }
    read_most(&mut io::stdin().lock(), what, "standard input")
}

/// The most input read whole: what a tool for text files takes from
/// standard input or a `--content` file (fsview-mcp takes about as much
/// in one message). Past it, one line says so rather than memory growing
/// until the machine runs out (`< /dev/zero`).
pub const MAX_INPUT: u64 = 1 << 30;

/// All of `from`, which holds `what`, read from `source` ("standard
/// input", a file's name): at most [`MAX_INPUT`] bytes.
pub fn read_most(from: &mut impl io::Read, what: &str, source: &str) -> Result<Vec<u8>, Error> {
    read_at_most(from, what, source, MAX_INPUT)
}

fn read_at_most(
    from: &mut impl io::Read,
    what: &str,
    source: &str,
    max: u64,
) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::new();
    io::Read::read_to_end(&mut io::Read::take(from, max + 1), &mut buf).map_err(|e| {
        Error::new(format!(
            "cannot read {what} from {source}: {}",
            fsview_store::error::plain_io(&e)
        ))
    })?;
    if buf.len() as u64 > max {
        return Err(Error::new(format!(
            "{what} from {source} is over {}; fsview takes text of at most that",
            match max {
                m if m >= 1 << 30 && m % (1 << 30) == 0 => format!("{} GiB", m >> 30),
                m => format!("{m} bytes"),
            }
        )));
    }
    Ok(buf)
}

/// [`stdin_bytes`] as UTF-8 text (JSON Lines).
pub fn stdin_text(what: &str, how: &str) -> Result<String, Error> {
    String::from_utf8(stdin_bytes(what, how)?).map_err(|_| {
        Error::new(format!(
            "cannot read {what} from standard input: it is not UTF-8; send JSON Lines as UTF-8"
        ))
    })
}

/// Where paths to work on come from: arguments, `-` for stdin (one per line,
/// or NUL-separated with `-0`).
/// `reader` is the command line that reads them (`fsview-check-edit -`).
pub fn paths_from(reader: &str, args: &[PathBuf], nul: bool) -> Result<Vec<PathBuf>, Error> {
    use std::os::unix::ffi::OsStringExt;
    let mut out = Vec::new();
    let mut stdin_used = false;
    for a in args {
        if a.as_os_str() == "-" {
            if stdin_used {
                continue;
            }
            stdin_used = true;
            let buf = stdin_bytes(
                "the list of paths `-` stands for",
                &format!("pipe it in, a path a line (git diff --name-only | {reader}) or NUL-separated with -0"),
            )?;
            let sep = if nul { b'\0' } else { b'\n' };
            for part in buf.split(|&b| b == sep) {
                let part = if nul {
                    part
                } else {
                    part.strip_suffix(b"\r").unwrap_or(part)
                };
                if !part.is_empty() {
                    out.push(PathBuf::from(std::ffi::OsString::from_vec(part.to_vec())));
                }
            }
        } else {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// Parse a size such as `262144`, `256K`, `256KiB`, `1M`.
pub fn parse_size(s: &str) -> Result<u64, crate::usage::Refused> {
    use crate::usage::Refused;
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| {
        Refused(format!(
            "takes a size in bytes or with a suffix (256K, 1M), not {s:?}"
        ))
    })?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        "g" | "gb" | "gib" => 1024 * 1024 * 1024,
        _ => {
            return Err(Refused(format!(
                "takes a size with the unit K, M or G, not {s:?}"
            )))
        }
    };
    match n.checked_mul(mult) {
        Some(0) | None => Err(Refused(format!(
            "takes a size from 1 byte to 16 EiB, not {s:?}"
        ))),
        Some(v) => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn input_past_the_most_is_one_error() {
        let mut zeros = std::io::Read::take(std::io::repeat(0), 11);
        let e = read_at_most(&mut zeros, "the new content", "standard input", 10).unwrap_err();
        assert_eq!(
            e.message(),
            "the new content from standard input is over 10 bytes; fsview takes text of at most that"
        );
        let mut ten = std::io::Read::take(std::io::repeat(0), 10);
        assert_eq!(read_at_most(&mut ten, "x", "y", 10).unwrap().len(), 10);
    }

    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256K"), Ok(262144));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("10"), Ok(10));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12Q").is_err());
    }
}
