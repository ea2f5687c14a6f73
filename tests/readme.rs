//! Every code block of README.md, tested as a reader would use it.
//!
//! The rules, also written in an HTML comment at the end of README.md:
//!
//! - ```` ```sh ```` (or `bash`) blocks run in the order they appear, in one
//!   bash shell started in an empty scratch directory, with the built
//!   binaries first on PATH, HOME and TMPDIR inside the scratch directory,
//!   and git knowing a user name. Each command must exit 0, or N when its
//!   comment says `exit N`. A command is what bash reads as one: a line, or
//!   lines joined by `\`, an open quote, a compound command or a heredoc.
//! - ```` ```sh not-run ```` blocks are only checked for bash syntax: for
//!   what a test must not do (install into the system, run cargo).
//! - ```` ```json ```` blocks must parse; ```` ```text ```` blocks are output
//!   or prose.
//! - Any other block fails this test, naming its line and the choices.
//!
//! So a new section passes by being runnable as pasted, or says in the
//! README source why it is not run; nothing is skipped silently.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use crate::harness::bin_dir;

/// How long the whole walkthrough may take before it counts as hung.
const TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Run,
    NotRun,
    Json,
    Text,
}

#[derive(Debug)]
struct Block {
    /// The README line of the block's first line of code.
    line: usize,
    kind: Kind,
    code: String,
}

/// The code blocks of `markdown`, or the lines of blocks that break the
/// rules.
fn blocks(markdown: &str) -> Result<Vec<Block>, Vec<String>> {
    let line_of = |offset: usize| markdown[..offset].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut bad = Vec::new();
    let mut open: Option<(usize, Option<Kind>, String)> = None;
    for (event, range) in Parser::new(markdown).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let fence_line = line_of(range.start);
                let info = match &kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                let words: Vec<&str> = info.split_whitespace().collect();
                let kind = match words.as_slice() {
                    ["sh" | "bash"] => Some(Kind::Run),
                    ["sh" | "bash", "not-run"] => Some(Kind::NotRun),
                    ["json"] => Some(Kind::Json),
                    ["text"] => Some(Kind::Text),
                    _ => {
                        bad.push(format!(
                            "README.md:{fence_line}: a code block marked {info:?}: mark it ```sh (run), ```sh not-run (syntax only), ```json or ```text"
                        ));
                        None
                    }
                };
                open = Some((fence_line + 1, kind, String::new()));
            }
            Event::Text(t) => {
                if let Some((_, _, code)) = &mut open {
                    code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((line, Some(kind), code)) = open.take() {
                    out.push(Block { line, kind, code });
                }
            }
            _ => {}
        }
    }
    if bad.is_empty() {
        Ok(out)
    } else {
        Err(bad)
    }
}

/// One command of a runnable block: the README lines it spans and the exit
/// code it must give.
#[derive(Debug, PartialEq, Eq)]
struct Step {
    line: usize,
    text: String,
    expect: i32,
}

/// Split a runnable block into commands as bash reads them, each with the
/// exit code its comment promises (`exit N`, else 0).
fn steps(block: &Block) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut start = block.line;
    for (i, line) in block.code.lines().enumerate() {
        if pending.is_empty() {
            start = block.line + i;
        }
        pending.push(line);
        let joined = pending.join("\n");
        // A line ending in `\` continues (bash -n would read the backslash
        // at the end of its input as a literal).
        if line.ends_with('\\') && !line.ends_with("\\\\") {
            continue;
        }
        match syntax(&joined) {
            Syntax::Complete => {}
            Syntax::Incomplete => continue,
            Syntax::Error(e) => return Err(format!("README.md:{start}: {e}")),
        }
        if !joined.lines().all(|l| {
            let t = l.trim();
            t.is_empty() || t.starts_with('#')
        }) {
            let comments: Vec<&str> = [pending.first(), pending.last()]
                .into_iter()
                .flatten()
                .filter_map(|l| comment(l))
                .collect();
            let expect = comments.iter().find_map(|c| promised_exit(c)).unwrap_or(0);
            steps.push(Step {
                line: start,
                text: joined,
                expect,
            });
        }
        pending.clear();
    }
    if !pending.is_empty() {
        return Err(format!(
            "README.md:{start}: the block ends inside a command: {:?}",
            pending.join("\n")
        ));
    }
    Ok(steps)
}

enum Syntax {
    Complete,
    Incomplete,
    Error(String),
}

/// What bash makes of `text` without running it.
fn syntax(text: &str) -> Syntax {
    let out = Command::new("bash")
        .arg("-n")
        .arg("-c")
        .arg(text)
        .output()
        .expect("run bash -n");
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() && !err.contains("here-document") {
        return Syntax::Complete;
    }
    if err.contains("end of file")
        || err.contains("unexpected EOF")
        || err.contains("here-document")
    {
        return Syntax::Incomplete;
    }
    Syntax::Error(err.trim().replace('\n', " "))
}

/// The comment of a shell line: from a `#` that starts a word outside
/// quotes.
fn comment(line: &str) -> Option<&str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return Some(&line[i + 1..]),
            _ => {}
        }
        prev = c;
    }
    None
}

/// `exit N` in a comment.
fn promised_exit(comment: &str) -> Option<i32> {
    let words: Vec<&str> = comment
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .find(|w| w[0] == "exit")
        .and_then(|w| w[1].parse().ok())
}

/// The walkthrough as one bash script: each step, then a check of its exit
/// status that names the step and stops the run.
fn script(steps: &[Step]) -> String {
    let mut s = String::from("set -o pipefail\n");
    for (i, step) in steps.iter().enumerate() {
        s.push_str(&step.text);
        s.push('\n');
        s.push_str(&format!(
            "__rc=$?; if [ \"$__rc\" != {} ]; then echo \"__readme_step {i} exited $__rc\" >&2; exit 99; fi\n",
            step.expect
        ));
    }
    s.push_str("echo __readme_done >&2\n");
    s
}

/// A scratch directory the way a new user's machine looks to the README.
struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        for d in ["home", "tmp", "work"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(
            root.join("home/.gitconfig"),
            "[user]\n\tname = A Reader\n\temail = reader@example.com\n[init]\n\tdefaultBranch = main\n",
        )
        .unwrap();
        Scratch { _dir: dir, root }
    }

    fn bash(&self, script: &str) -> (i32, String) {
        let path = self.root.join("readme.sh");
        std::fs::write(&path, script).unwrap();
        let mut child = Command::new("bash")
            .arg(&path)
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display()),
            )
            .env("HOME", self.root.join("home"))
            .env("TMPDIR", self.root.join("tmp"))
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CEILING_DIRECTORIES", &self.root)
            .current_dir(self.root.join("work"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run bash");
        // Both streams into one transcript, read on threads so neither
        // pipe fills.
        let mut out = child.stdout.take().unwrap();
        let mut err = child.stderr.take().unwrap();
        let t_out = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = out.read_to_end(&mut s);
            s
        });
        let t_err = std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = err.read_to_end(&mut s);
            s
        });
        let start = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if start.elapsed() > TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the README walkthrough ran over {TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = String::from_utf8_lossy(&t_out.join().unwrap()).into_owned();
        let stderr = String::from_utf8_lossy(&t_err.join().unwrap()).into_owned();
        (
            status.code().unwrap_or(-1),
            format!("--- stdout\n{stdout}--- stderr\n{stderr}"),
        )
    }
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

#[test]
fn every_readme_block_runs_as_pasted() {
    let blocks = blocks(&readme()).unwrap_or_else(|bad| panic!("{}", bad.join("\n")));
    let mut all = Vec::new();
    for b in &blocks {
        match b.kind {
            Kind::Run => all.extend(steps(b).unwrap_or_else(|e| panic!("{e}"))),
            Kind::NotRun => match syntax(&b.code) {
                Syntax::Complete => {}
                Syntax::Incomplete => {
                    panic!("README.md:{}: the block ends inside a command", b.line)
                }
                Syntax::Error(e) => panic!("README.md:{}: not bash: {e}", b.line),
            },
            Kind::Json => {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&b.code) {
                    panic!("README.md:{}: not JSON: {e}", b.line);
                }
            }
            Kind::Text => {}
        }
    }
    assert!(
        all.len() >= 20,
        "only {} commands to run in README.md",
        all.len()
    );
    let scratch = Scratch::new();
    let (code, transcript) = scratch.bash(&script(&all));
    if let Some(i) = transcript
        .lines()
        .find_map(|l| l.strip_prefix("__readme_step "))
        .and_then(|l| l.split(' ').next())
        .and_then(|i| i.parse::<usize>().ok())
    {
        let step = &all[i];
        let got = transcript
            .lines()
            .find_map(|l| l.strip_prefix(&format!("__readme_step {i} exited ")))
            .unwrap_or("?");
        panic!(
            "README.md:{}: {:?} exited {got}, its comment promises {}\n{transcript}",
            step.line, step.text, step.expect
        );
    }
    assert!(
        code == 0 && transcript.contains("__readme_done"),
        "the README walkthrough stopped early (exit {code}):\n{transcript}"
    );
}

// The rules above, on a small README of their own.
#[test]
fn blocks_are_marked_and_commands_split_as_bash_reads_them() {
    let md = "# T\n\n```sh\necho one  # exit 0\nfalse    # a denial, exit 1\nprintf 'a # b\\n' \\\n  | cat   # exit 0\nif true; then\n  echo two\nfi\ncat <<'EOF'\nx # exit 3\nEOF\n```\n\n```sh not-run\ncargo install --path .\n```\n\n```json\n{\"a\": 1}\n```\n";
    let b = blocks(md).unwrap();
    assert_eq!(
        b.iter()
            .map(|b| (b.line, b.kind.clone()))
            .collect::<Vec<_>>(),
        [(4, Kind::Run), (17, Kind::NotRun), (21, Kind::Json)]
    );
    let s = steps(&b[0]).unwrap();
    let got: Vec<(usize, i32)> = s.iter().map(|s| (s.line, s.expect)).collect();
    assert_eq!(got, [(4, 0), (5, 1), (6, 0), (8, 0), (11, 0)]);
    assert_eq!(s[3].text, "if true; then\n  echo two\nfi");
    assert_eq!(s[4].text, "cat <<'EOF'\nx # exit 3\nEOF");
    let scratch = Scratch::new();
    let (code, out) = scratch.bash(&script(&s));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("a # b\ntwo\nx # exit 3\n"), "{out}");
    // A promise broken: the step is named.
    let (code, out) = scratch.bash(&script(
        &steps(&blocks("```sh\ntrue  # exit 1\n```\n").unwrap()[0]).unwrap(),
    ));
    assert_eq!(code, 99);
    assert!(out.contains("__readme_step 0 exited 0"), "{out}");
    // Unmarked or unknown blocks are named, not skipped.
    assert_eq!(
        blocks("x\n\n```\nls\n```\n\n```sh maybe\nls\n```\n").unwrap_err(),
        [
            "README.md:3: a code block marked \"\": mark it ```sh (run), ```sh not-run (syntax only), ```json or ```text",
            "README.md:7: a code block marked \"sh maybe\": mark it ```sh (run), ```sh not-run (syntax only), ```json or ```text",
        ]
    );
    assert!(matches!(
        steps(&blocks("```sh\necho 'open\n```\n").unwrap()[0]),
        Err(e) if e.contains("ends inside a command")
    ));
}
