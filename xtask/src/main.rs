//! Project chores that need the code but do not belong in a shipped binary.
//!
//! `cargo xtask man` writes a man page per tool into `man/`, generated from
//! the same clap definitions that give `--help`, plus the sections clap does
//! not know (EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES). `cargo xtask man
//! --check` fails when `man/` is not what the code would write, so CI keeps
//! the pages honest. The same run writes shell completions (bash, zsh,
//! fish) for every tool into `completions/`, from the same definitions;
//! after `--sid` they offer the ids of the sessions in the session file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use roff::{bold, roman, Roff};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    match args.as_slice() {
        ["man"] => write_man(&root.join("man"), false),
        ["man", "--check"] => write_man(&root.join("man"), true),
        _ => {
            eprintln!("xtask: usage: cargo xtask man [--check]");
            ExitCode::from(2)
        }
    }
}

fn write_man(dir: &Path, check: bool) -> ExitCode {
    let mut stale = Vec::new();
    let mut pages: Vec<(PathBuf, String)> = fsview::commands()
        .into_iter()
        .map(|cmd| {
            let name = cmd.get_name().to_string();
            (dir.join(format!("{name}.1")), page(cmd))
        })
        .collect();
    pages.push((dir.join("fsview-json.7"), json_page()));
    let comp = dir.parent().expect("man/ has a parent").join("completions");
    for cmd in fsview::commands() {
        let name = cmd.get_name().to_string();
        for (shell, file) in [
            (clap_complete::Shell::Bash, format!("{name}.bash")),
            (clap_complete::Shell::Zsh, format!("_{name}")),
            (clap_complete::Shell::Fish, format!("{name}.fish")),
        ] {
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut cmd.clone(), name.clone(), &mut buf);
            let mut text = String::from_utf8(buf).expect("completions are UTF-8");
            if shell == clap_complete::Shell::Bash {
                text = fix_bash(&name, &text);
            }
            text = complete_session_ids(shell, &name, &text, &cmd);
            pages.push((comp.join(file), text));
        }
    }
    for (path, text) in &pages {
        let current = std::fs::read_to_string(path).unwrap_or_default();
        if current == *text {
            continue;
        }
        if check {
            stale.push(path.display().to_string());
        } else {
            std::fs::create_dir_all(path.parent().expect("a file in a dir"))
                .expect("create the directory");
            std::fs::write(path, text).expect("write man page");
            println!("wrote {}", path.display());
        }
    }
    if !stale.is_empty() {
        eprintln!(
            "xtask: man pages or completions out of date: {}; run `cargo xtask man` and commit man/ and completions/",
            stale.join(", ")
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// clap_complete's bash script names a subcommand's state in two ways for
/// a hyphenated binary: the loop that follows the words typed assigns
/// `fsview__session__subcmd__show` (the binary's `-` as `__`), the case
/// that offers options tests `fsview__subcmd__session__subcmd__show` (its
/// `-` as `__subcmd__`), so `fsview-session show --<TAB>` offered nothing.
/// Rename the second to the first, and check that every state the case
/// tests is one the loop can reach.
fn fix_bash(bin: &str, text: &str) -> String {
    const SEP: &str = "__subcmd__";
    let good = format!("{}{SEP}", bin.replace('-', "__"));
    let bad = format!("{}{SEP}", bin.replace('-', SEP));
    let fixed = if bad == good {
        text.to_string()
    } else {
        text.replace(&bad, &good)
    };
    let assigned: Vec<&str> = fixed
        .lines()
        .filter_map(|l| l.trim().strip_prefix("cmd=\""))
        .map(|l| l.trim_end_matches('"'))
        .collect();
    let root = bin.replace('-', "__");
    for label in fixed.lines().filter_map(|l| {
        l.strip_prefix("        ")
            .and_then(|l| l.strip_suffix(')'))
            .filter(|l| !l.starts_with(' ') && l.chars().all(|c| c.is_alphanumeric() || c == '_'))
    }) {
        assert!(
            label == root || assigned.contains(&label),
            "bash completion for {bin}: state {label} is never reached; clap_complete changed, fix fix_bash"
        );
    }
    fixed
}

/// The options whose value is a session id: `--sid` (of every tool, or of
/// each of its commands) and `fsview-session fork --from`.
const SESSION_ID_OPTIONS: [&str; 2] = ["sid", "from"];

/// How many places (the tool, each of its commands) take one of
/// SESSION_ID_OPTIONS: as many as each shell's completion must have
/// rewritten.
fn session_id_options(cmd: &clap::Command) -> usize {
    fn count(cmd: &clap::Command) -> usize {
        let here = cmd
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter(|a| {
                a.get_long()
                    .is_some_and(|l| SESSION_ID_OPTIONS.contains(&l))
            })
            .count();
        here + cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .map(count)
            .sum::<usize>()
    }
    let mut cmd = cmd.clone();
    cmd.build();
    count(&cmd)
}

/// The bash function that lists the session ids, for `--sid <TAB>`: what
/// `fsview-session list --ids` prints (nothing without a session file),
/// of the session file a `--session FILE` typed before names. Each id is
/// matched against the word as text (never expanded as `compgen -W`
/// would: an id is data).
const BASH_SESSION_IDS: &str = r#"# The ids of the sessions in the session file (a --session FILE typed on
# the line names it), for --sid: `fsview-session list --ids`.
_fsview_session_ids() {
    local i id file=""
    local -a args=(list --ids)
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --session)
                file="${COMP_WORDS[i + 1]}"
                [[ "${file}" == "=" ]] && file="${COMP_WORDS[i + 2]}"
                ;;
            --session=*)
                file="${COMP_WORDS[i]#--session=}"
                ;;
        esac
    done
    [[ "${file}" == "~/"* ]] && file="${HOME}/${file#"~/"}"
    [[ -n "${file}" ]] && args+=(--session "${file}")
    COMPREPLY=()
    while IFS= read -r id; do
        [[ -n "${id}" && "${id}" == "${cur}"* ]] && COMPREPLY+=("${id}")
    done < <(fsview-session "${args[@]}" 2>/dev/null)
}

"#;

/// The same for zsh: `_arguments` calls it with compadd's options, and
/// `opt_args` holds a --session given.
const ZSH_SESSION_IDS: &str = r#"
# The ids of the sessions in the session file (a --session FILE typed on
# the line names it), for --sid: `fsview-session list --ids`.
(( $+functions[_fsview_session_ids] )) ||
_fsview_session_ids() {
    local -a args ids
    args=(list --ids)
    [[ -n ${opt_args[--session]} ]] && args+=(--session ${~${(Q)opt_args[--session]}})
    ids=(${(f)"$(fsview-session $args 2>/dev/null)"})
    compadd "$@" -a ids
}
"#;

/// The same for fish.
const FISH_SESSION_IDS: &str = r#"# The ids of the sessions in the session file (a --session FILE typed on
# the line names it), for --sid: `fsview-session list --ids`.
function __fsview_session_ids
    set -l tokens (commandline -opc)
    set -l args list --ids
    for i in (seq (count $tokens))
        switch $tokens[$i]
            case --session
                if test $i -lt (count $tokens)
                    set args list --ids --session (string replace -r '^~/' ~/ -- $tokens[(math $i + 1)])
                end
            case '--session=*'
                set args list --ids --session (string replace -r '^--session=~/' ~/ -- $tokens[$i] | string replace -r '^--session=' '')
        end
    end
    fsview-session $args 2>/dev/null
end

"#;

/// A rule for fish that stands in for `--sid`'s own where clap's condition
/// fails: before a command (`ctx-invalidate --sid <TAB>`), its argparse
/// refuses an option whose value is not typed yet. For a tool that takes
/// `--sid` itself, after its rules.
const FISH_AFTER_SID: &str = r#"
# A session id after --sid, also where the rule of --sid above does not
# apply (before a command, whose test refuses --sid without its value yet).
function __fsview_completing_session_id
    set -l tokens (commandline -opc)
    test "$tokens[-1]" = --sid
end
complete -c BIN -n __fsview_completing_session_id -f -a '(__fsview_session_ids)' -d 'A session id'
"#;

/// clap_complete offers file names for `--sid`: offer the session ids
/// instead, each shell asking `fsview-session list --ids`. Each place
/// (the tool, each of its commands) that takes such an option must be
/// rewritten, from the exact text clap_complete writes there (a change of
/// it fails here).
fn complete_session_ids(
    shell: clap_complete::Shell,
    bin: &str,
    text: &str,
    cmd: &clap::Command,
) -> String {
    use clap_complete::Shell;
    let expected = session_id_options(cmd);
    let top_level_sid = cmd.get_arguments().any(|a| a.get_long() == Some("sid"));
    let mut out = String::new();
    let mut rewritten = 0;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        match shell {
            Shell::Bash
                if SESSION_ID_OPTIONS
                    .iter()
                    .any(|o| trimmed == format!("--{o})")) =>
            {
                let next = lines.next().unwrap_or_default();
                assert_eq!(
                    next.trim_start(),
                    r#"COMPREPLY=($(compgen -f "${cur}"))"#,
                    "bash completion for {bin}: {trimmed} completes otherwise; clap_complete changed, fix complete_session_ids"
                );
                out.push_str(line);
                out.push('\n');
                out.push_str(&next[..next.len() - next.trim_start().len()]);
                out.push_str("_fsview_session_ids\n");
                rewritten += 1;
                continue;
            }
            Shell::Zsh
                if SESSION_ID_OPTIONS
                    .iter()
                    .any(|o| trimmed.starts_with(&format!("'--{o}=["))) =>
            {
                let kept = line
                    .strip_suffix(":ID:_default' \\")
                    .unwrap_or_else(|| panic!("zsh completion for {bin}: {line} completes otherwise; clap_complete changed, fix complete_session_ids"));
                out.push_str(kept);
                out.push_str(":ID:_fsview_session_ids' \\\n");
                rewritten += 1;
                continue;
            }
            Shell::Fish
                if SESSION_ID_OPTIONS
                    .iter()
                    .any(|o| trimmed.contains(&format!(" -l {o} -d "))) =>
            {
                assert!(
                    line.ends_with(" -r"),
                    "fish completion for {bin}: {line} completes otherwise; clap_complete changed, fix complete_session_ids"
                );
                out.push_str(line);
                out.push_str(" -f -a '(__fsview_session_ids)'\n");
                rewritten += 1;
                continue;
            }
            _ => {}
        }
        out.push_str(line);
        out.push('\n');
    }
    assert_eq!(
        rewritten, expected,
        "{shell} completion for {bin}: {rewritten} of the {expected} session id options found; clap_complete changed, fix complete_session_ids"
    );
    if rewritten == 0 {
        return text.to_string();
    }
    match shell {
        Shell::Bash => format!("{BASH_SESSION_IDS}{out}"),
        Shell::Fish if top_level_sid => format!(
            "{FISH_SESSION_IDS}{out}{}",
            FISH_AFTER_SID.replace("BIN", bin)
        ),
        Shell::Fish => format!("{FISH_SESSION_IDS}{out}"),
        Shell::Zsh => {
            // After the tool's function, before the lines that call it
            // when the file is autoloaded.
            let at = out
                .find("\nif [ \"$funcstack[1]\" = ")
                .unwrap_or_else(|| panic!("zsh completion for {bin}: no funcstack test; clap_complete changed, fix complete_session_ids"));
            format!("{}{ZSH_SESSION_IDS}{}", &out[..at], &out[at..])
        }
        _ => out,
    }
}

/// What clap does not know about a tool. Exit codes are in
/// `fsview::common::exit_status`, where --help reads them too; `exit` is
/// only for a tool that does not give them there.
struct Extra {
    exit: &'static [(&'static str, &'static str)],
    env: &'static [(&'static str, &'static str)],
}

const SHARED_ENV: &[(&str, &str)] = &[
    ("FSVIEW_SESSION", "The session file, as --session."),
    ("FSVIEW_SID", "The session id, as --sid; default \"default\"."),
    ("FSVIEW_AGENT", "The agent whose views to use, as --agent: a subagent's id, or main."),
    ("GIT_DIR, GIT_COMMON_DIR", "Where the git directory is, as git uses them (inside git hooks); the default session file lives in it."),
    ("XDG_STATE_HOME", "Where the session file lives outside a git work tree (default ~/.local/state)."),
    ("FSVIEW_STAT_SHORTCUT", "on (the default): an unchanged stat of a file of 128 KiB or more on a local filesystem stands in for its content; off: every check hashes the file."),
    ("FSVIEW_NETWORK_SESSION", "allow: use a session file on a network filesystem (NFS, SMB, 9p, Ceph, ...) that only this machine's processes use; without it such a session file is refused, since SQLite's locks and shared memory do not hold between machines."),
];

fn extra(name: &str) -> Extra {
    match name {
        "fsview-read" => Extra {
            exit: &[],
            env: &[("FSVIEW_READ_CAP", "The default for --cap.")],
        },
        "fsview-check-edit" => Extra {
            exit: &[],
            env: &[],
        },
        "fsview-edit" | "fsview-write" => Extra {
            exit: &[
                ("0", "Every request was applied (or, with --dry-run, would be)."),
                ("1", "At least one request was refused: by the gate (not_read, processed_view, start_only, modified) or by the Edit rules (not_found, ambiguous, no_change, file_exists). A refused file is untouched."),
                ("2", "An error: bad arguments, a malformed request line (the good ones are still applied), a directory, a binary file, a file or directory that cannot be written, a full disk, an unusable session file. The file is untouched."),
            ],
            env: &[],
        },
        "ctx-build" => Extra {
            exit: &[],
            env: &[
                ("CLAUDE_CONFIG_DIR", "The user's instruction directory (default ~/.claude)."),
                ("FSVIEW_MANAGED_DIR", "The managed policy directory (default /etc/claude-code)."),
                ("FSVIEW_INSTRUCTION_NAMES", "Extra instruction file names, comma-separated, as --also."),
                ("SOURCE_DATE_EPOCH", "Fixes the current moment for reproducible output; the date is still taken in the local time zone."),
                ("TZ", "The time zone of \"Today's date\" (an IANA name such as America/Los_Angeles, or a POSIX rule), else the system's."),
            ],
        },
        "ctx-invalidate" => Extra {
            exit: &[],
            env: &[],
        },
        "fsview-hook" => Extra {
            exit: &[
                ("0", "The payload was answered (a deny is an answer, as JSON on stdout), or it failed open; install: done, or already as asked."),
                ("2", "Bad arguments, or a payload that could not be answered failed closed outside PreToolUse: Claude Code's blocking error, with the one line on stderr as its message; install: a settings file that is not valid JSON or cannot be written (left as it was)."),
            ],
            env: &[
                ("FSVIEW_INSTRUCTION_NAMES", "Other instruction file names, comma-separated, as --also."),
                ("CLAUDE_CONFIG_DIR", "Where install --user writes (default ~/.claude); also read by the ctx-build that SessionStart runs."),
                ("FSVIEW_MANAGED_DIR, SOURCE_DATE_EPOCH, TZ", "Read by the ctx-build that SessionStart runs."),
            ],
        },
        "fsview-mcp" => Extra {
            exit: &[],
            env: &[
                ("FSVIEW_SID", "The session id, as --sid; without either, each server process is a session of its own, mcp-YYYYMMDDTHHMMSSZ-PID."),
                ("FSVIEW_MCP_CAP", "The default for --cap."),
                ("FSVIEW_INSTRUCTION_NAMES", "Other instruction file names for the context tool, comma-separated, as --also."),
                ("CLAUDE_CONFIG_DIR, FSVIEW_MANAGED_DIR, SOURCE_DATE_EPOCH, TZ", "Read by the ctx-build that the context tool runs."),
            ],
        },
        "fsview-session" => Extra {
            exit: &[],
            env: &[("TZ", "The time zone of the dates shown for times more than a week back, else the system's.")],
        },
        _ => Extra {
            exit: &[("0", "Success."), ("1", "A negative answer."), ("2", "An error.")],
            env: &[],
        },
    }
}

fn page(cmd: clap::Command) -> String {
    let name = cmd.get_name().to_string();
    // The examples of --help: a command and what it does, each.
    let (_, examples, _) = fsview::common::examples_of(
        &cmd.get_after_long_help()
            .or(cmd.get_after_help())
            .map(|h| h.to_string())
            .unwrap_or_default(),
    );
    let man = clap_mangen::Man::new(cmd.clone())
        .manual("fsview")
        .source("fsview");
    let mut out: Vec<u8> = Vec::new();
    man.render_title(&mut out).unwrap();
    man.render_name_section(&mut out).unwrap();
    out.extend_from_slice(synopsis(&cmd).as_bytes());
    man.render_description_section(&mut out).unwrap();
    man.render_options_section(&mut out).unwrap();
    if cmd.has_subcommands() {
        out.extend_from_slice(commands_section(&cmd).as_bytes());
    }
    let x = extra(&name);
    let mut r = Roff::new();
    r.control("SH", ["EXIT STATUS"]);
    // The same words as --help, where the tool gives them there.
    let exit: Vec<(String, String)> = match fsview::common::exit_status(&name) {
        Some(codes) => codes
            .iter()
            .map(|(c, w)| (c.to_string(), sentence(w)))
            .collect(),
        None => x
            .exit
            .iter()
            .map(|(c, w)| (c.to_string(), w.to_string()))
            .collect(),
    };
    for (code, what) in exit {
        r.control("TP", []).text([bold(code)]).text([roman(what)]);
    }
    r.control("SH", ["ENVIRONMENT"]);
    for (var, what) in SHARED_ENV
        .iter()
        .filter(|(v, _)| !(name == "fsview-hook" && matches!(*v, "FSVIEW_SID" | "FSVIEW_AGENT")))
        // fsview-mcp says what its FSVIEW_SID default is itself.
        .filter(|(v, _)| !(name == "fsview-mcp" && *v == "FSVIEW_SID"))
        .chain(x.env)
    {
        r.control("TP", []).text([bold(*var)]).text([roman(*what)]);
    }
    r.control("SH", ["FILES"]);
    r.control("TP", [])
        .text([italic_path("$GIT_COMMON_DIR/fsview/session.db")])
        .text([roman("The default session file inside a git work tree (shared by its worktrees). Created with mode 0600; it holds file contents.")]);
    r.control("TP", [])
        .text([italic_path("$XDG_STATE_HOME/fsview/session.db")])
        .text([roman(
            "The default session file elsewhere (~/.local/state/fsview/session.db).",
        )]);
    if !examples.is_empty() {
        // Each command as a tag, its description filled under it: man
        // lays it out in the reader's width.
        r.control("SH", ["EXAMPLES"]);
        for (command, what) in &examples {
            r.control("TP", []).text([bold(command.as_str())]);
            if !what.is_empty() {
                r.text([roman(what.as_str())]);
            }
        }
    }
    r.control("SH", ["SEE ALSO"]);
    let others: Vec<String> = fsview::commands()
        .iter()
        .map(|c| c.get_name().to_string())
        .filter(|n| *n != name)
        .map(|n| format!("{n}(1)"))
        .chain(["fsview-json(7)".to_string()])
        .collect();
    r.text([roman(others.join(", "))]);
    out.extend_from_slice(r.to_roff().as_bytes());
    man.render_version_section(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// "the context was built" -> "The context was built."
fn sentence(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => format!("{}{}.", f.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}

/// SYNOPSIS: every option with its argument (`--offset N`), and the
/// positionals as they repeat (`[PATH]...`); for a tool with commands,
/// one more line per command with its own options.
fn synopsis(cmd: &clap::Command) -> String {
    let mut cmd = cmd.clone();
    cmd.build();
    let name = cmd.get_name().to_string();
    let mut r = Roff::new();
    r.control("SH", ["SYNOPSIS"]);
    let mut line = vec![bold(name.clone())];
    line.extend(usage_of(&cmd, |_| true));
    // A tool whose options and commands exclude each other has a line
    // for each; otherwise the first line names where the command goes.
    if cmd.has_subcommands() && !cmd.is_args_conflicts_with_subcommands_set() {
        let required = cmd.is_subcommand_required_set();
        line.push(roman(if required { " " } else { " [" }));
        line.push(roff::italic("COMMAND"));
        if !required {
            line.push(roman("]"));
        }
    }
    r.text(line);
    for sc in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        r.control("br", []);
        let mut line = vec![bold(format!("{name} {}", sc.get_name()))];
        line.extend(usage_of(sc, |a| !a.is_global_set()));
        r.text(line);
    }
    r.to_roff()
}

/// The options and positionals of `cmd` that `keep` keeps, as synopsis
/// text, each preceded by a space.
fn usage_of(cmd: &clap::Command, keep: impl Fn(&clap::Arg) -> bool) -> Vec<roff::Inline> {
    let mut out = Vec::new();
    let shown = |a: &&clap::Arg| {
        !a.is_hide_set() && keep(a) && !matches!(a.get_long(), Some("help" | "version"))
    };
    for a in cmd
        .get_arguments()
        .filter(|a| !a.is_positional())
        .filter(shown)
    {
        let required = a.is_required_set();
        out.push(roman(if required { " " } else { " [" }));
        match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => {
                out.push(bold(format!("-{s}")));
                out.push(roman("|"));
                out.push(bold(format!("--{l}")));
            }
            (Some(s), None) => out.push(bold(format!("-{s}"))),
            (None, Some(l)) => out.push(bold(format!("--{l}"))),
            (None, None) => continue,
        }
        if a.get_action().takes_values() {
            let value = a
                .get_value_names()
                .map(|v| v.join(" "))
                .unwrap_or_else(|| a.get_id().to_string().to_uppercase());
            let range = a.get_num_args().expect("built");
            out.push(roman(" "));
            match (range.min_values(), range.max_values()) {
                (0, _) => {
                    out.push(roman("["));
                    out.push(roff::italic(value));
                    out.push(roman("]..."));
                }
                (_, 1) => out.push(roff::italic(value)),
                _ => {
                    out.push(roff::italic(value));
                    out.push(roman("..."));
                }
            }
        }
        out.push(roman(if required { "" } else { "]" }));
    }
    for a in cmd.get_positionals().filter(shown) {
        let value = a
            .get_value_names()
            .map(|v| v.join(" "))
            .unwrap_or_else(|| a.get_id().to_string().to_uppercase());
        let many = a.get_num_args().expect("built").max_values() > 1;
        let required = a.is_required_set();
        out.push(roman(if required { " " } else { " [" }));
        out.push(roff::italic(value));
        out.push(roman(match (required, many) {
            (true, true) => "...",
            (true, false) => "",
            (false, true) => "]...",
            (false, false) => "]",
        }));
    }
    out
}

/// COMMANDS: each subcommand with its own options and what it does (one
/// page per tool, not one per subcommand).
fn commands_section(cmd: &clap::Command) -> String {
    let mut r = Roff::new();
    r.control("SH", ["COMMANDS"]);
    for sc in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let mut usage = sc.get_name().to_string();
        for a in sc.get_positionals() {
            let name = a
                .get_value_names()
                .map(|v| v.join(" "))
                .unwrap_or_else(|| a.get_id().to_string().to_uppercase());
            usage.push_str(&if a.is_required_set() {
                format!(" <{name}>")
            } else {
                format!(" [{name}]")
            });
        }
        for a in sc.get_arguments() {
            let Some(long) = a.get_long() else { continue };
            if a.is_global_set() || long == "help" {
                continue;
            }
            let value = match a.get_value_names() {
                Some(v) if a.get_action().takes_values() => format!(" <{}>", v.join(" ")),
                _ => String::new(),
            };
            let one = format!("--{long}{value}");
            usage.push(' ');
            usage.push_str(&if a.is_required_set() {
                one
            } else {
                format!("[{one}]")
            });
        }
        let about = sc
            .get_long_about()
            .or(sc.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        r.control("TP", []).text([bold(usage)]).text([roman(about)]);
    }
    r.to_roff()
}

fn italic_path(p: &str) -> roff::Inline {
    roff::italic(p)
}

/// fsview-json(7): the one JSON envelope, documented in one place.
fn json_page() -> String {
    let mut r = Roff::new();
    r.control("TH", ["FSVIEW-JSON", "7", "", "fsview", "fsview"]);
    r.control("SH", ["NAME"]);
    r.text([roman(
        "fsview-json - the JSON Lines envelope of every fsview tool",
    )]);
    r.control("SH", ["DESCRIPTION"]);
    for p in JSON_DOC.split("\n\n") {
        if let Some(rest) = p.strip_prefix("## ") {
            r.control("SH", [rest.trim()]);
            continue;
        }
        if p.starts_with("  ") {
            // "  NAME  what it holds": a tagged paragraph each, filled to
            // the reader's width.
            for l in p.lines() {
                let l = l.trim_start();
                let (tag, what) = l.split_once("  ").unwrap_or((l, ""));
                r.control("TP", [])
                    .text([bold(tag.trim())])
                    .text([roman(what.trim())]);
            }
        } else {
            r.control("PP", []).text([roman(p.replace('\n', " "))]);
        }
    }
    r.to_roff()
}

const JSON_DOC: &str = include_str!("../../docs/json.md");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synopsis_shows_option_arguments_and_repeated_paths() {
        let read = synopsis(&fsview::read::command());
        assert!(
            read.contains(r"[\fB\-o\fR|\fB\-\-offset\fR \fIN\fR]"),
            "{read}"
        );
        assert!(read.contains(r"[\fB\-\-cap\fR \fISIZE\fR]"), "{read}");
        assert!(read.trim_end().ends_with(r"[\fIPATH\fR]..."), "{read}");
        let inv = synopsis(&fsview::ctx_invalidate::command());
        assert!(inv.contains(r"[\fB\-\-forget\fR [\fIPATH\fR]...]"), "{inv}");
        assert!(
            inv.contains(
                "\n.br\n\\fBctx\\-invalidate install\\-hooks\\fR [\\fB\\-\\-uninstall\\fR]\n"
            ),
            "{inv}"
        );
        let session = synopsis(&fsview::session::command());
        assert!(
            session.contains(r"[\fB\-q\fR|\fB\-\-quiet\fR] \fICOMMAND\fR"),
            "{session}"
        );
        assert!(
            session.contains(
                r"\fBfsview\-session fork\fR \fB\-\-from\fR \fIID\fR [\fB\-\-replace\fR]"
            ),
            "{session}"
        );
    }

    #[test]
    fn bash_states_are_named_one_way() {
        let broken = "    case \"${cmd},${i}\" in\n            fsview__session,show)\n                cmd=\"fsview__session__subcmd__show\"\n                ;;\n    esac\n    case \"${cmd}\" in\n        fsview__session)\n            ;;\n        fsview__subcmd__session__subcmd__show)\n            ;;\n";
        let fixed = fix_bash("fsview-session", broken);
        assert!(
            fixed.contains("\n        fsview__session__subcmd__show)\n"),
            "{fixed}"
        );
        assert!(!fixed.contains("fsview__subcmd__session"));
        // A name without a hyphen is left alone.
        assert_eq!(fix_bash("tool", "        tool)\n"), "        tool)\n");
    }

    #[test]
    #[should_panic(expected = "is never reached")]
    fn an_unreachable_bash_state_is_caught() {
        fix_bash("a-b", "        a__b__subcmd__x)\n");
    }

    #[test]
    fn examples_stop_at_the_next_heading() {
        let page = page(fsview::commands().remove(2));
        let examples = &page[page.find(".SH EXAMPLES").unwrap()..];
        assert!(!examples.contains("Exit status:"), "{examples}");
        assert!(!examples.contains("Environment:"), "{examples}");
    }
}
