//! Project chores that need the code but do not belong in a shipped binary.
//!
//! `cargo xtask man` writes a man page per tool into `man/`, generated from
//! the same clap definitions that give `--help`, plus the sections clap does
//! not know (EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES). `cargo xtask man
//! --check` fails when `man/` is not what the code would write, so CI keeps
//! the pages honest. The same run writes shell completions (bash, zsh,
//! fish) for every tool into `completions/`, from the same definitions.

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
            pages.push((
                comp.join(file),
                String::from_utf8(buf).expect("completions are UTF-8"),
            ));
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

/// What clap does not know about a tool.
struct Extra {
    exit: &'static [(&'static str, &'static str)],
    env: &'static [(&'static str, &'static str)],
}

const SHARED_ENV: &[(&str, &str)] = &[
    ("FSVIEW_SESSION", "The session file, as --session."),
    ("FSVIEW_SID", "The session id, as --sid; default \"default\"."),
    ("GIT_DIR, GIT_COMMON_DIR", "Where the git directory is, as git uses them (inside git hooks); the default session file lives in it."),
    ("XDG_STATE_HOME", "Where the session file lives outside a git work tree (default ~/.local/state)."),
];

fn extra(name: &str) -> Extra {
    match name {
        "fsview-read" => Extra {
            exit: &[
                ("0", "Every file was shown (or recorded)."),
                ("2", "An error: bad arguments, a file that could not be shown (the others were still shown), an unusable session file."),
            ],
            env: &[("FSVIEW_READ_CAP", "The default for --cap.")],
        },
        "fsview-check-edit" => Extra {
            exit: &[
                ("0", "Every path may be changed (ok or new_file); with --changed, nothing changed."),
                ("1", "At least one path was denied; with --changed, at least one file changed."),
                ("2", "An error: bad arguments, a path that is not a regular file, an unusable session file."),
            ],
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
            exit: &[
                ("0", "The context was built or returned from the cache."),
                ("2", "An error: bad arguments, an unusable session file, a bad SOURCE_DATE_EPOCH."),
            ],
            env: &[
                ("CLAUDE_CONFIG_DIR", "The user's instruction directory (default ~/.claude)."),
                ("FSVIEW_MANAGED_DIR", "The managed policy directory (default /etc/claude-code)."),
                ("FSVIEW_INSTRUCTION_NAMES", "Extra instruction file names, comma-separated, as --also."),
                ("SOURCE_DATE_EPOCH", "Fixes the current date (UTC) for reproducible output."),
            ],
        },
        "ctx-invalidate" => Extra {
            exit: &[
                ("0", "Done, or nothing to do (no session file yet)."),
                ("2", "An error: bad arguments, an unusable session file."),
            ],
            env: &[],
        },
        "fsview-hook" => Extra {
            exit: &[
                ("0", "The payload was answered (a deny is an answer, as JSON on stdout), or it failed open."),
                ("2", "Bad arguments, or a payload that could not be answered failed closed outside PreToolUse: Claude Code's blocking error, with the one line on stderr as its message."),
            ],
            env: &[
                ("CLAUDE_CONFIG_DIR, FSVIEW_MANAGED_DIR, FSVIEW_INSTRUCTION_NAMES, SOURCE_DATE_EPOCH", "Read by the ctx-build that SessionStart runs."),
            ],
        },
        "fsview-session" => Extra {
            exit: &[
                ("0", "Done; for list, show and events also when there is no session file or no such session (nothing is created)."),
                ("2", "An error: bad arguments, an unusable session file, a session that does not exist (fork, drop, export) or already exists (fork, import without --replace), a malformed export document (nothing is imported)."),
            ],
            env: &[],
        },
        _ => Extra {
            exit: &[("0", "Success."), ("1", "A negative answer."), ("2", "An error.")],
            env: &[],
        },
    }
}

fn page(cmd: clap::Command) -> String {
    let name = cmd.get_name().to_string();
    let examples: Vec<String> = cmd
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default()
        .lines()
        .skip_while(|l| !l.starts_with("Examples:"))
        .skip(1)
        .map(|l| l.strip_prefix("  ").unwrap_or(l).to_string())
        .collect();
    let man = clap_mangen::Man::new(cmd.clone())
        .manual("fsview")
        .source("fsview");
    let mut out: Vec<u8> = Vec::new();
    man.render_title(&mut out).unwrap();
    man.render_name_section(&mut out).unwrap();
    man.render_synopsis_section(&mut out).unwrap();
    man.render_description_section(&mut out).unwrap();
    man.render_options_section(&mut out).unwrap();
    if cmd.has_subcommands() {
        out.extend_from_slice(commands_section(&cmd).as_bytes());
    }
    let x = extra(&name);
    let mut r = Roff::new();
    r.control("SH", ["EXIT STATUS"]);
    for (code, what) in x.exit {
        r.control("TP", []).text([bold(*code)]).text([roman(*what)]);
    }
    r.control("SH", ["ENVIRONMENT"]);
    for (var, what) in SHARED_ENV
        .iter()
        .filter(|(v, _)| !(name == "fsview-hook" && *v == "FSVIEW_SID"))
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
        r.control("SH", ["EXAMPLES"]);
        r.control("nf", []);
        for l in &examples {
            r.text([roman(l.as_str())]);
        }
        r.control("fi", []);
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

/// COMMANDS: each subcommand with its own options and what it does (one
/// page per tool, not one per subcommand).
fn commands_section(cmd: &clap::Command) -> String {
    let mut r = Roff::new();
    r.control("SH", ["COMMANDS"]);
    for sc in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let mut usage = sc.get_name().to_string();
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
            r.control("nf", []);
            for l in p.lines() {
                r.text([roman(l.strip_prefix("  ").unwrap_or(l))]);
            }
            r.control("fi", []);
        } else {
            r.control("PP", []).text([roman(p.replace('\n', " "))]);
        }
    }
    r.to_roff()
}

const JSON_DOC: &str = include_str!("../../docs/json.md");
