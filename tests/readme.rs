//! Every code block of README.md and of docs/*.md, tested as a reader
//! would use it, and the README's shape.
//!
//! The rules, also written in an HTML comment at the end of README.md:
//!
//! - ```` ```sh ```` (or `bash`) blocks of one file run in the order they
//!   appear, in one bash shell started in an empty scratch directory (each
//!   file its own), with the built binaries first on PATH, HOME and TMPDIR
//!   inside the scratch directory, and git knowing a user name. Each
//!   command must exit 0, or N when its comment says `exit N`. A command
//!   is what bash reads as one: a line, or lines joined by `\`, an open
//!   quote, a compound command or a heredoc. Running them must leave HOME
//!   as it was: a reader who pastes a block changes their project, never
//!   their own settings.
//! - ```` ```sh not-run ```` blocks are only checked for bash syntax: for
//!   what a test must not do (install into the system or the home, run
//!   cargo).
//! - ```` ```json ```` blocks must parse; ```` ```text ```` blocks are output
//!   or prose.
//! - Any other block fails this test, naming its file, line and the
//!   choices.
//! - Every link to a file of the repository, or to a heading, leads
//!   somewhere.
//!
//! So a new section passes by being runnable as pasted, or says in the
//! source why it is not run; nothing is skipped silently.

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
    /// The file it is in, relative to the repository.
    file: String,
    /// The line of the block's first line of code.
    line: usize,
    kind: Kind,
    code: String,
}

/// The code blocks of `markdown` (the text of `file`), or the lines of
/// blocks that break the rules.
fn blocks(file: &str, markdown: &str) -> Result<Vec<Block>, Vec<String>> {
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
                            "{file}:{fence_line}: a code block marked {info:?}: mark it ```sh (run), ```sh not-run (syntax only), ```json or ```text"
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
                    out.push(Block {
                        file: file.to_string(),
                        line,
                        kind,
                        code,
                    });
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

/// One command of a runnable block: the lines it spans and the exit code
/// it must give.
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
            Syntax::Error(e) => return Err(format!("{}:{start}: {e}", block.file)),
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
            "{}:{start}: the block ends inside a command: {:?}",
            block.file,
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
                panic!("the walkthrough ran over {TIMEOUT:?}");
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

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// README.md, then every Markdown file of docs/, by name, as paths
/// relative to the repository.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    docs.insert(0, "README.md".to_string());
    docs
}

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_type().is_dir())
        .map(|e| {
            e.path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    out.sort();
    out
}

/// Check the blocks of `file` and run its runnable ones in a scratch
/// directory of their own; the number of commands run.
fn walk_through(file: &str) -> usize {
    let blocks = blocks(file, &read(file)).unwrap_or_else(|bad| panic!("{}", bad.join("\n")));
    let mut all = Vec::new();
    for b in &blocks {
        match b.kind {
            Kind::Run => all.extend(steps(b).unwrap_or_else(|e| panic!("{e}"))),
            Kind::NotRun => match syntax(&b.code) {
                Syntax::Complete => {}
                Syntax::Incomplete => {
                    panic!("{file}:{}: the block ends inside a command", b.line)
                }
                Syntax::Error(e) => panic!("{file}:{}: not bash: {e}", b.line),
            },
            Kind::Json => {
                if let Err(e) = serde_json::from_str::<serde_json::Value>(&b.code) {
                    panic!("{file}:{}: not JSON: {e}", b.line);
                }
            }
            Kind::Text => {}
        }
    }
    if all.is_empty() {
        return 0;
    }
    let scratch = Scratch::new();
    let home_before = files_under(&scratch.root.join("home"));
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
            "{file}:{}: {:?} exited {got}, its comment promises {}\n{transcript}",
            step.line, step.text, step.expect
        );
    }
    assert!(
        code == 0 && transcript.contains("__readme_done"),
        "the walkthrough of {file} stopped early (exit {code}):\n{transcript}"
    );
    // A reader who pastes the blocks changes the project they are in,
    // never their own settings (an agent's user-wide hooks, say).
    assert_eq!(
        files_under(&scratch.root.join("home")),
        home_before,
        "the blocks of {file} changed the reader's home; mark such a block ```sh not-run"
    );
    all.len()
}

#[test]
fn every_readme_block_runs_as_pasted() {
    let n = walk_through("README.md");
    assert!(n >= 20, "only {n} commands to run in README.md");
}

#[test]
fn every_docs_block_runs_as_pasted() {
    let docs: Vec<String> = documents().into_iter().skip(1).collect();
    assert!(docs.len() >= 7, "{docs:?}");
    // The files side by side: each has its own scratch directory.
    let runs: Vec<_> = docs
        .iter()
        .map(|d| {
            let d = d.clone();
            std::thread::spawn(move || walk_through(&d))
        })
        .collect();
    let mut failed = Vec::new();
    for (d, r) in docs.iter().zip(runs) {
        if let Err(e) = r.join() {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("{d}: {msg}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces
/// as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of `markdown`'s headings, a repeated one numbered as GitHub
/// does (`-1`, `-2`).
fn anchors(markdown: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut heading: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = &mut heading {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let a = anchor(&heading.take().unwrap_or_default());
                let n = out
                    .iter()
                    .filter(|x| **x == a || x.starts_with(&format!("{a}-")))
                    .count();
                out.push(if n == 0 { a } else { format!("{a}-{n}") });
            }
            _ => {}
        }
    }
    out
}

/// The links of `markdown` that point into the repository (no scheme),
/// with their lines.
fn local_links(markdown: &str) -> Vec<(usize, String)> {
    let line_of = |offset: usize| markdown[..offset].matches('\n').count() + 1;
    Parser::new(markdown)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. }) if !dest_url.contains("://") => {
                Some((line_of(range.start), dest_url.to_string()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn every_link_leads_somewhere() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in documents()
        .iter()
        .map(String::as_str)
        .chain(["SECURITY.md"])
    {
        let text = read(file);
        let dir = Path::new(file).parent().unwrap();
        for (line, dest) in local_links(&text) {
            checked += 1;
            let (path, frag) = match dest.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (dest.as_str(), None),
            };
            let target = if path.is_empty() {
                file.to_string()
            } else {
                dir.join(path).to_string_lossy().into_owned()
            };
            let on_disk = root().join(&target);
            if !on_disk.exists() {
                broken.push(format!("{file}:{line}: {dest}: no {target}"));
                continue;
            }
            if let Some(frag) = frag {
                let heads = anchors(&std::fs::read_to_string(&on_disk).unwrap_or_default());
                if !heads.iter().any(|h| h == frag) {
                    broken.push(format!(
                        "{file}:{line}: {dest}: no heading #{frag} in {target}"
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 30, "only {checked} links checked");
}

/// What a newcomer meets first: what fsview is and for whom, the two
/// commands, the contents, how to install, and how to wire it into an
/// agent, all before the internals (which live in docs/).
#[test]
fn the_readme_opens_with_what_a_newcomer_needs() {
    let text = read("README.md");
    let manifest = read("Cargo.toml");
    // What it is and for whom, in prose, before any code.
    let first_code = text.find("```").unwrap();
    let intro = &text[..first_code];
    assert!(
        intro.contains("fsview is ") && intro.contains("It is for "),
        "the README opens by saying what fsview is and whom it is for:\n{intro}"
    );
    // Then exactly the two commands, neither needing `just`.
    let b = blocks("README.md", &text).unwrap();
    let commands: Vec<&str> = b[0]
        .code
        .lines()
        .map(|l| l.split(" #").next().unwrap().trim())
        .collect();
    assert_eq!(
        (b[0].kind.clone(), commands),
        (
            Kind::NotRun,
            vec!["cargo run --bin fsview-demo", "cargo test --workspace"]
        )
    );
    // The minimum Rust version the manifest holds, said before the commands.
    let msrv = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap();
    assert!(
        intro.contains(&format!("Rust toolchain ({msrv} or newer)")),
        "{intro}"
    );
    // A contents list first, naming every section in order.
    let sections: Vec<String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::to_string)
        .collect();
    assert_eq!(sections[0], "Contents");
    let contents = &text[text.find("## Contents").unwrap()..];
    let contents = &contents[..contents[3..].find("\n## ").unwrap()];
    let listed: Vec<String> = local_links(contents)
        .into_iter()
        .filter_map(|(_, d)| d.strip_prefix('#').map(str::to_string))
        .collect();
    let all: Vec<String> = sections[1..].iter().map(|s| anchor(s)).collect();
    assert_eq!(listed, all, "the contents list every section, in order");
    // Install with a clone line, then the agents, within the first screens.
    let line_of = |h: &str| {
        text.lines()
            .position(|l| l == h)
            .unwrap_or_else(|| panic!("no {h:?} in README.md"))
            + 1
    };
    assert_eq!(sections[1], "Install");
    assert_eq!(sections[2], "Use it with your agent");
    assert!(line_of("## Use it with your agent") <= 100);
    let install = &text[text.find("## Install").unwrap()..text.find("## Use it with").unwrap()];
    assert!(install.contains("git clone ") && install.contains("scripts/install"));
    // The clone line names the address the manifest gives, and none it
    // does not: without a `repository` field, a placeholder the reader
    // fills in, said as one.
    let clone = install
        .lines()
        .find(|l| l.starts_with("git clone "))
        .expect("a line starting `git clone `");
    let url = clone.split_whitespace().nth(2).unwrap();
    match manifest
        .lines()
        .find_map(|l| l.strip_prefix("repository = \""))
        .and_then(|l| l.strip_suffix('"'))
    {
        Some(repository) => assert_eq!(url, repository, "{clone}"),
        None => assert!(
            url == "URL" && clone.contains("# URL: "),
            "Cargo.toml names no repository, so the clone line must not invent one: {clone}"
        ),
    }
    assert!(install.contains(&format!("Rust {msrv} or newer")));
    assert!(install.contains("minutes"), "how long the build takes");
    // Internals, benchmarks and the code's layout are in docs/.
    for (was, doc, heading) in [
        (
            "How freshness is decided",
            "docs/freshness.md",
            "How freshness is decided",
        ),
        ("Benchmarks", "docs/benchmarks.md", "Benchmarks"),
        ("Layout", "docs/layout.md", "Layout of the code"),
        (
            "The session file",
            "docs/session-file.md",
            "The session file",
        ),
    ] {
        assert!(
            !sections.iter().any(|s| s.starts_with(was)),
            "{was} belongs in {doc}, not in the README"
        );
        assert!(read(doc).starts_with(&format!("# {heading}")), "{doc}");
        assert!(
            text.contains(&format!("]({doc})")),
            "the README points to {doc}"
        );
    }
    // The licenses Cargo.toml promises are there.
    assert!(manifest.contains("license = \"MIT OR Apache-2.0\""));
    assert!(read("LICENSE-MIT").contains("Permission is hereby granted, free of charge"));
    assert!(read("LICENSE-APACHE")
        .contains("Apache License\n                           Version 2.0, January 2004"));
}

// The rules above, on a small README of their own.
#[test]
fn blocks_are_marked_and_commands_split_as_bash_reads_them() {
    let md = "# T\n\n```sh\necho one  # exit 0\nfalse    # a denial, exit 1\nprintf 'a # b\\n' \\\n  | cat   # exit 0\nif true; then\n  echo two\nfi\ncat <<'EOF'\nx # exit 3\nEOF\n```\n\n```sh not-run\ncargo install --path .\n```\n\n```json\n{\"a\": 1}\n```\n";
    let b = blocks("README.md", md).unwrap();
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
        &steps(&blocks("README.md", "```sh\ntrue  # exit 1\n```\n").unwrap()[0]).unwrap(),
    ));
    assert_eq!(code, 99);
    assert!(out.contains("__readme_step 0 exited 0"), "{out}");
    // Unmarked or unknown blocks are named, not skipped.
    assert_eq!(
        blocks("README.md", "x\n\n```\nls\n```\n\n```sh maybe\nls\n```\n").unwrap_err(),
        [
            "README.md:3: a code block marked \"\": mark it ```sh (run), ```sh not-run (syntax only), ```json or ```text",
            "README.md:7: a code block marked \"sh maybe\": mark it ```sh (run), ```sh not-run (syntax only), ```json or ```text",
        ]
    );
    assert!(matches!(
        steps(&blocks("README.md", "```sh\necho 'open\n```\n").unwrap()[0]),
        Err(e) if e.contains("ends inside a command")
    ));
}
