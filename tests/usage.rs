//! A bad command line, for every binary: one line on stderr that says what
//! is wrong and what to do, exit 2, nothing on stdout, the session file
//! untouched. And `--help` gives the exit codes.

use crate::harness::{bin, output, Env};

const TOOLS: [&str; 8] = [
    "fsview-read",
    "fsview-check-edit",
    "fsview-edit",
    "fsview-write",
    "ctx-build",
    "ctx-invalidate",
    "fsview-session",
    "fsview-hook",
];

#[test]
fn every_binary_says_a_usage_error_in_one_line() {
    let env = Env::new();
    env.write("a.rs", "a\n");
    env.run("fsview-read", &["a.rs"]).expect(0, "1\ta\n");
    let before = std::fs::read(&env.session).unwrap();
    for tool in TOOLS {
        env.run(tool, &["--bogus"])
            .expect(2, "")
            .stderr_is(&format!(
                "{tool}: unknown option --bogus; see {tool} --help\n"
            ));
        env.run(tool, &["--jsn"]).expect(2, "");
    }
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "fsview-read",
            &["--offset", "0", "a.rs"],
            "--offset counts from 1 (the first line), not 0",
        ),
        (
            "fsview-read",
            &["--limit", "-1", "a.rs"],
            "--limit must be 1 or more, not -1",
        ),
        (
            "fsview-read",
            &["-n", "ten", "a.rs"],
            "--limit takes a whole number, 1 or more, not \"ten\"",
        ),
        (
            "fsview-read",
            &["--stb", "a.rs"],
            "unknown option --stb; did you mean --stub? (see fsview-read --help)",
        ),
        (
            "fsview-read",
            &["--cap", "lots", "a.rs"],
            "--cap takes a size in bytes or with a suffix (256K, 1M), not \"lots\"",
        ),
        (
            "fsview-read",
            &["--written", "--offset", "2", "a.rs"],
            "--written cannot be used with --offset; drop one of them (see fsview-read --help)",
        ),
        // Not a usage line that makes --session look required.
        (
            "fsview-check-edit",
            &["--changed", "a.rs"],
            "--changed cannot be used with PATH arguments; drop one of them (see fsview-check-edit --help)",
        ),
        (
            "fsview-check-edit",
            &["--diff-lines", "-5", "--changed"],
            "--diff-lines cannot be negative (-5)",
        ),
        (
            "ctx-build",
            &["extra"],
            "unexpected argument \"extra\"; see ctx-build --help",
        ),
        (
            "ctx-invalidate",
            &["--reset", "--system"],
            "--reset cannot be used with --system; drop one of them (see ctx-invalidate --help)",
        ),
        (
            "ctx-invalidate",
            &["--system", "install-hooks"],
            "the command install-hooks cannot be used with --system; drop one of them (see ctx-invalidate --help)",
        ),
        (
            "fsview-session",
            &[],
            "name a command: list, show, events, fork, drop, export, import, path or gc (see fsview-session --help)",
        ),
        (
            "fsview-session",
            &["shw"],
            "unknown command \"shw\"; did you mean \"show\"? (see fsview-session --help)",
        ),
        (
            "fsview-session",
            &["--limit", "3", "events"],
            "unknown option --limit; it goes after its command: events --limit (see fsview-session --help)",
        ),
        (
            "fsview-session",
            &["events", "--limit", "0"],
            "--limit must be 1 or more, not 0",
        ),
        (
            "fsview-session",
            &["fork"],
            "missing --from; see fsview-session --help",
        ),
        // What is missing, and why: needed on its own unless another
        // option stands in, or needed by an option given.
        (
            "fsview-edit",
            &[],
            "missing --old and --new (or give --requests); see fsview-edit --help",
        ),
        (
            "fsview-edit",
            &["--dry-run", "a.rs", "--old", "x"],
            "missing --new (or give --requests); see fsview-edit --help",
        ),
        (
            "fsview-write",
            &[],
            "missing PATH (or give --requests); see fsview-write --help",
        ),
        (
            "fsview-read",
            &["--content", "w.txt", "a.rs"],
            "--content needs --written; see fsview-read --help",
        ),
        (
            "ctx-invalidate",
            &["-0", "--reason", "x"],
            "-0 needs --forget; see ctx-invalidate --help",
        ),
    ];
    for (tool, args, msg) in cases {
        env.run(tool, args)
            .expect(2, "")
            .stderr_is(&format!("{tool}: {msg}\n"));
    }
    // A value from the environment is named by its variable.
    let mut c = env.cmd(bin("fsview-read"));
    c.env("FSVIEW_READ_CAP", "lots").arg("a.rs");
    output(c, None).expect(2, "").stderr_is(
        "fsview-read: FSVIEW_READ_CAP takes a size in bytes or with a suffix (256K, 1M), not \"lots\"\n",
    );
    assert_eq!(std::fs::read(&env.session).unwrap(), before);
}

// `fsview-read -` does not read a file from stdin: what it reads there are
// JSON requests, and it says so.
#[test]
fn fsview_read_dash_points_to_requests() {
    let env = Env::new();
    env.write("a.rs", "a\n");
    env.run_stdin("fsview-read", &["-"], b"a.rs\n")
        .expect(2, "")
        .stderr_is("fsview-read: `-` is not a file to show; to send what to read on stdin use --requests (JSON Lines: {\"path\": \"a.rs\"}), or name a file called - as ./-\n");
    assert!(!env.session.exists());
    env.run_stdin("fsview-read", &["--requests"], b"{\"path\": \"a.rs\"}\n")
        .expect(0, "1\ta\n");
    env.write("-", "dash\n");
    env.run("fsview-read", &["./-"]).expect(0, "1\tdash\n");
}

#[test]
fn help_gives_examples_and_exit_codes() {
    let env = Env::new();
    for tool in TOOLS {
        let h = env.run(tool, &["--help"]);
        assert_eq!((h.code, h.stderr.as_str()), (0, ""), "{tool}");
        assert!(h.stdout.contains("\nExamples:\n"), "{tool}:\n{}", h.stdout);
        // fsview-hook's help is its own helper's (issue 14 leaves it).
        if tool == "fsview-hook" {
            continue;
        }
        let exit = &h.stdout[h
            .stdout
            .find("\nExit status:\n")
            .unwrap_or_else(|| panic!("{tool} --help gives no exit codes:\n{}", h.stdout))..];
        let codes: Vec<&str> = exit
            .lines()
            .filter_map(|l| l.strip_prefix("  "))
            .filter_map(|l| l.split("  ").next())
            .filter(|c| !c.is_empty())
            .collect();
        // fsview-session: show FILE exits 1 for a file with no view.
        let want: &[&str] = if [
            "fsview-check-edit",
            "fsview-edit",
            "fsview-write",
            "fsview-session",
        ]
        .contains(&tool)
        {
            &["0", "1", "2"]
        } else {
            &["0", "2"]
        };
        assert_eq!(codes, want, "{tool}:\n{exit}");
    }
}

/// `-h` is a summary and `--help` the whole, as for git or cargo: `-h`
/// gives each option's first clause and three examples, names the options
/// every tool takes in one line and says where the rest is; `--help` adds
/// every example and the exit status. Both fit 80 columns.
#[test]
fn short_help_is_short_and_every_help_fits_80_columns() {
    // The binaries print what their definitions render (fsview-mcp's is
    // another package's binary: its definition is fsview::mcp's).
    let mut read = fsview::commands().remove(0);
    assert_eq!(read.get_name(), "fsview-read");
    for (flag, want) in [
        ("-h", read.render_help().to_string()),
        ("--help", read.render_long_help().to_string()),
    ] {
        let mut c = std::process::Command::new(bin("fsview-read"));
        c.arg(flag).env_clear();
        assert_eq!(output(c, None).stdout, want, "fsview-read {flag}");
    }
    for mut cmd in fsview::commands() {
        let tool = cmd.get_name().to_string();
        let tool = tool.as_str();
        let short = cmd.render_help().to_string();
        let long = cmd.render_long_help().to_string();
        let (short, long) = (Out { stdout: short }, Out { stdout: long });
        let lines = short.stdout.lines().count();
        assert!(lines <= 40, "{tool} -h is {lines} lines:\n{}", short.stdout);
        assert!(
            long.stdout.lines().count() > lines + 20,
            "{tool} --help says more than -h"
        );
        assert!(
            short
                .stdout
                .ends_with(&format!("More: {tool} --help, man {tool}\n")),
            "{tool}:\n{}",
            short.stdout
        );
        assert!(!short.stdout.contains("Exit status:"), "{tool}");
        let examples = |s: &str| {
            s[s.find("\nExamples:\n").unwrap()..]
                .lines()
                .skip(2)
                .take_while(|l| l.starts_with("  "))
                .filter(|l| !l.starts_with("      "))
                .count()
        };
        assert_eq!(examples(&short.stdout), 3, "{tool}:\n{}", short.stdout);
        assert!(examples(&long.stdout) > 3, "{tool}");
        for (form, text) in [("-h", &short.stdout), ("--help", &long.stdout)] {
            for l in text.lines() {
                assert!(l.chars().count() <= 80, "{tool} {form}: {l:?}");
            }
        }
        if tool != "fsview-hook" {
            assert!(
                short
                    .stdout
                    .contains("Also --session FILE, --sid ID, --agent ID, --json, --quiet.\n"),
                "{tool}"
            );
            assert!(!short.stdout.contains("--session <FILE>"), "{tool}");
            assert!(long.stdout.contains("--session <FILE>"), "{tool}");
        }
    }
}

/// Every man page reads in 80 columns: no line of `man` wider (the JSON
/// page's record types and the examples were up to 691 columns).
#[test]
fn man_pages_fit_80_columns() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    assert!(pages.len() >= 10);
    for page in pages {
        let out = std::process::Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANWIDTH", "80")
            .env("MANPAGER", "cat")
            .env("LC_ALL", "C.UTF-8")
            .output()
            .expect("man(1) runs the pages (Debian: apt-get install man-db)");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.lines().count() > 20,
            "{page:?}"
        );
        for l in text.lines() {
            assert!(l.chars().count() <= 80, "{}: {l:?}", page.display());
        }
    }
}

struct Out {
    stdout: String,
}

/// A reader of standard input run from a terminal says what it wanted and
/// how to give it, and exits 2, instead of waiting there silently (and
/// taking Ctrl-D's nothing for input: `--processed` recorded an empty
/// view). `script` gives the command a terminal.
#[test]
fn a_terminal_on_stdin_is_refused_with_what_to_do() {
    let env = Env::new();
    env.write("a.rs", "fn a() {}\n");
    let on_a_terminal = |line: &str| {
        let mut c = env.cmd("script");
        c.args(["-qec", line, "/dev/null"]);
        let r = output(c, None);
        (r.code, r.stdout.replace("\r\n", "\n"))
    };
    let bin = |t: &str| bin(t).display().to_string();
    for (line, said) in [
        (
            format!("{} --processed a.rs", bin("fsview-read")),
            "fsview-read: standard input is a terminal, not the processed text --processed records; pipe in what was injected: strip-comments CLAUDE.md | fsview-read --processed CLAUDE.md",
        ),
        (
            format!("{} --requests", bin("fsview-read")),
            "fsview-read: standard input is a terminal, not the --requests JSON Lines; pipe them in: printf '{\"path\":\"a.rs\"}\\n' | fsview-read --requests",
        ),
        (
            format!("{} --written --content - a.rs", bin("fsview-read")),
            "fsview-read: standard input is a terminal, not the written text (--content -); pipe it in (fsview-read --written --content - a.rs < written.txt), or give --content FILE",
        ),
        (
            format!("{} -", bin("fsview-check-edit")),
            "fsview-check-edit: standard input is a terminal, not the list of paths `-` stands for; pipe it in, a path a line (git diff --name-only | fsview-check-edit -) or NUL-separated with -0",
        ),
        (
            format!("{} --forget -", bin("ctx-invalidate")),
            "ctx-invalidate: standard input is a terminal, not the list of paths `-` stands for; pipe it in, a path a line (git diff --name-only | ctx-invalidate --forget -) or NUL-separated with -0",
        ),
        (
            format!("{} --requests", bin("fsview-edit")),
            "fsview-edit: standard input is a terminal, not the --requests JSON Lines; pipe them in: fsview-edit --requests < requests.jsonl",
        ),
        (
            format!("{} a.rs", bin("fsview-write")),
            "fsview-write: standard input is a terminal, not the new content; pipe it in (printf 'fn main() {}\\n' | fsview-write src/main.rs), or give --content FILE",
        ),
        (
            format!("{} import", bin("fsview-session")),
            "fsview-session: standard input is a terminal, not the session to import; pipe in what export wrote: fsview-session import < session.json",
        ),
        (
            format!("{} claude", bin("fsview-hook")),
            "fsview-hook: standard input is a terminal, not a hook payload; the agent sends one once `fsview-hook install AGENT` wired it in, or pipe one in: fsview-hook AGENT < payload.json",
        ),
    ] {
        assert_eq!(on_a_terminal(&line), (2, format!("{said}\n")), "{line}");
    }
    // Nothing was recorded: the gate still wants a read.
    env.run("fsview-check-edit", &["a.rs"]).expect(
        1,
        "a.rs: not_read: File has not been read yet. Read it first before writing to it.\n",
    );
}

// Issue 42: an agent fsview does not know is told the agents it does know;
// a name is suggested only when it is near what was typed (a typo), never
// another program's ("aider" is not "claude"; "cline" is known now).
#[test]
fn an_unknown_agent_lists_the_known_ones_and_suggests_only_a_near_name() {
    let env = Env::new();
    let known = "claude, gemini, codex, qwen, opencode, copilot, droid, kilo, pi or cline";
    for (agent, hint) in [
        ("aider", format!("use {known}")),
        ("continue", format!("use {known}")),
        (
            "clade",
            format!("did you mean \"claude\"? (one of {known})"),
        ),
        (
            "copliot",
            format!("did you mean \"copilot\"? (one of {known})"),
        ),
    ] {
        env.run("fsview-hook", &["install", agent])
            .expect(2, "")
            .stderr_is(&format!(
                "fsview-hook: AGENT cannot be \"{agent}\"; {hint}\n"
            ));
    }
    env.run("fsview-hook", &["aider"])
        .expect(2, "")
        .stderr_is("fsview-hook: unknown command \"aider\"; the commands are claude, gemini, codex, qwen, opencode, kilo, pi, copilot, droid, cline or install\n");
}
