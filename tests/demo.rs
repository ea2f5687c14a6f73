//! The README's first command: the demo plays its agent run with the real
//! binaries (the command-line tools, an agent's hooks, the MCP server) and
//! prints each step and verdict, in plain text off a terminal.

use crate::harness::{output, Env};

#[test]
fn demo_plays_every_step_with_its_verdict() {
    let env = Env::new();
    let mut c = env.cmd(env!("CARGO_BIN_EXE_fsview-demo"));
    c.env("TMPDIR", env.root());
    let r = output(c, None);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains('\x1b'), "colour off a terminal");
    // The verdicts, in order, as the demo prints them.
    let wanted = [
        "  cache: \"miss\"",
        "  Current branch: main",
        "  cache: \"hit\"",
        "  src/main.rs: not_read: File has not been read yet. Read it first before writing to it.",
        "  1\tfn main() {",
        "  src/main.rs: ok",
        "  CLAUDE.md: processed_view: File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.",
        "(the agent edits src/main.rs)",
        "  -    println!(\"hello\");",
        "  +    println!(\"hello, world\");",
        "$ fsview-read --written src/main.rs",
        "  src/main.rs: ok",
        "  src/main.rs: modified (content): File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.",
        "  +fn main() { println!(\"hello, world\"); }",
        "$ fsview-edit src/main.rs --old 'hello, world' --new 'hello, fsview'",
        "  fsview-edit: src/main.rs: modified (content): File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.",
        "$ fsview-read src/main.rs",
        "  +fn main() { println!(\"hello, fsview\"); }",
        "$ fsview-hook install claude",
        "  $REPO/.git/info/exclude: /.claude/settings.local.json added: git leaves that file alone in this clone",
        "$ fsview-hook claude < payload.json",
        "  permissionDecision: deny",
        "  permissionDecisionReason: File has not been read yet. Read it first before writing to it.",
        "  $REPO/.claude/settings.local.json: removed (fsview-hook had made it)",
        "-> tools/call edit CLAUDE.md",
        "  error: $REPO/CLAUDE.md: not_read: File has not been read yet. Read it first before writing to it.",
        "-> tools/call read CLAUDE.md",
        "  1\t<!-- maintainers: keep this short -->",
        "-> tools/call edit CLAUDE.md",
        "  The file $REPO/CLAUDE.md has been updated successfully.",
        "$ ctx-invalidate install-hooks",
        "  installed post-checkout, post-merge, post-rewrite in .git/hooks",
        "$ git checkout -b feature",
        "  cache: \"miss\"",
        "  Current branch: feature",
        "Done: every verdict above came from the real binaries and one SQLite session file.",
    ];
    // The demo's repository, wherever it was made, as $REPO.
    let repo = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("A temporary git repository: "))
        .unwrap()
        .to_string();
    let stdout = r.stdout.replace(&repo, "$REPO");
    let lines: Vec<&str> = stdout.lines().collect();
    let mut at = 0;
    for w in wanted {
        match lines[at..].iter().position(|l| *l == w) {
            Some(i) => at += i + 1,
            None => panic!("missing (in order) {w:?} in:\n{stdout}"),
        }
    }
    // It cleans up after itself.
    let left: Vec<_> = std::fs::read_dir(env.root())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("fsview-demo-"))
        .collect();
    assert!(left.is_empty(), "demo left {left:?}");
}

#[test]
fn demo_usage_errors_are_one_line_and_help_gives_exit_codes() {
    let env = Env::new();
    let mut c = env.cmd(env!("CARGO_BIN_EXE_fsview-demo"));
    c.arg("--bogus");
    output(c, None)
        .expect(2, "")
        .stderr_is("fsview-demo: unknown option --bogus; see fsview-demo --help\n");
    let mut c = env.cmd(env!("CARGO_BIN_EXE_fsview-demo"));
    c.arg("--help");
    let h = output(c, None);
    assert_eq!(h.code, 0);
    assert!(
        h.stdout.ends_with("Exit status:\n  0  every step ran (the denials it shows are part of the demo)\n  2  an error: bad arguments, git or the fsview tools missing, a tool that\n     failed\n"),
        "{}",
        h.stdout
    );
}

// Issue 43: run by `cargo run`, which builds only the demo, it builds the
// other tools first. That takes minutes the first time: it says so before
// cargo starts, lets cargo show its progress (no --quiet), and says how
// long it took before the demo plays. A cargo that fails is one line.
#[test]
fn the_demo_says_it_builds_the_tools_first_and_shows_cargos_progress() {
    let env = Env::new();
    let dir = env.root().join("bin");
    std::fs::create_dir(&dir).unwrap();
    let demo = dir.join("fsview-demo");
    std::fs::copy(env!("CARGO_BIN_EXE_fsview-demo"), &demo).unwrap();
    // A stand-in cargo: logs its arguments, prints progress as cargo does
    // on stderr, and "builds" by copying the real tools next to the demo.
    let real = crate::harness::bin_dir();
    let cargo = env.write(
        "cargo",
        format!(
            "#!/bin/sh\necho \"$@\" > '{log}'\necho '   Compiling fsview v0.1.0' >&2\nfor t in fsview-read fsview-check-edit fsview-edit ctx-build ctx-invalidate fsview-hook fsview-mcp; do cp '{real}'/$t '{dir}'/; done\n",
            log = env.root().join("cargo.log").display(),
            real = real.display(),
            dir = dir.display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = env.cmd(&demo);
    c.env("CARGO", &cargo).env("TMPDIR", env.root());
    let r = output(c, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(env.root().join("cargo.log")).unwrap(),
        "build --bins -p fsview -p fsview-mcp\n"
    );
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stderr);
    assert_eq!(
        lines[0],
        "fsview-demo: building the tools it plays first (fsview-read, fsview-check-edit, fsview-edit, ctx-build, ctx-invalidate, fsview-hook, fsview-mcp); the first time this takes about 2 minutes on 2 cores, cargo's progress below"
    );
    assert_eq!(lines[1], "   Compiling fsview v0.1.0");
    assert!(
        lines[2].starts_with("fsview-demo: built in 0m 0")
            && lines[2].ends_with("s; the demo follows"),
        "{}",
        lines[2]
    );
    assert!(r
        .stdout
        .contains("Done: every verdict above came from the real binaries"));
    // A failed build: one line, exit 2.
    for t in ["fsview-read", "fsview-mcp"] {
        std::fs::remove_file(dir.join(t)).unwrap();
    }
    std::fs::write(&cargo, "#!/bin/sh\nexit 101\n").unwrap();
    let mut c = env.cmd(&demo);
    c.env("CARGO", &cargo).env("TMPDIR", env.root());
    let r = output(c, None);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.ends_with("\nfsview-demo: building the fsview tools failed; run `cargo build --workspace --bins`\n"),
        "{}",
        r.stderr
    );
}
