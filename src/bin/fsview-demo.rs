//! fsview-demo: a short agent run, played with the real tools in a
//! temporary git repository, printing each step and its verdict: reads and
//! checks, context, fsview-edit, Claude Code's hooks (a payload answered)
//! and fsview-mcp (a client's calls).
//!
//! It runs the fsview binaries that sit next to it (building them with the
//! cargo that ran it when they are missing), so what it shows is what a
//! shell script would get.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

const TOOLS: [&str; 7] = [
    "fsview-read",
    "fsview-check-edit",
    "fsview-edit",
    "ctx-build",
    "ctx-invalidate",
    "fsview-hook",
    "fsview-mcp",
];

struct Demo {
    bin: PathBuf,
    work: PathBuf,
    session: PathBuf,
    color: bool,
    step: usize,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fsview-demo: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    fsview::common::parse_matches(|| {
        clap::Command::new("fsview-demo")
            .version(env!("CARGO_PKG_VERSION"))
            .about("Play a short agent run with the fsview tools in a temporary git repository")
            .long_about(
                "Play a short agent run with the fsview tools in a temporary git repository: \
                 each step's command, its output and its exit status, from the real binaries \
                 and one session file: the command-line tools, fsview-edit, Claude Code's hooks \
                 answered by fsview-hook, and fsview-mcp spoken to as an MCP client would. \
                 Colour on a terminal unless NO_COLOR is set.",
            )
            .after_help(
                "Examples:\n  cargo run --bin fsview-demo   build the tools and play the demo",
            )
    });
    let bin = tools_dir()?;
    let tmp = tempdir()?;
    let work = tmp.join("repo");
    std::fs::create_dir_all(work.join("src")).map_err(|e| e.to_string())?;
    let color = std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut d = Demo {
        bin,
        session: tmp.join("session.db"),
        work,
        color,
        step: 0,
    };
    let result = d.play();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

impl Demo {
    fn play(&mut self) -> Result<(), String> {
        self.say(&format!(
            "A temporary git repository: {}",
            self.work.display()
        ));
        self.write("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n")?;
        self.write(
            "CLAUDE.md",
            "<!-- maintainers: keep this short -->\n# Project\n\nRun `cargo test` before you commit.\n",
        )?;
        self.git(&["init", "-q", "-b", "main"])?;
        self.git(&["add", "."])?;
        self.git(&["commit", "-q", "-m", "Initial commit"])?;

        self.title("The conversation starts: build its fixed context once");
        self.tool("ctx-build", &["--json"], &["cache", "branch", "files"])?;
        self.tool("ctx-build", &["--json"], &["cache"])?;

        self.title("The agent wants to edit src/main.rs before reading it");
        self.tool("fsview-check-edit", &["src/main.rs"], &[])?;

        self.title("It reads the file (a full view is recorded)");
        self.tool("fsview-read", &["src/main.rs"], &[])?;
        self.tool("fsview-check-edit", &["src/main.rs"], &[])?;

        self.title("CLAUDE.md was injected with its comment stripped: a processed view");
        self.tool("fsview-check-edit", &["CLAUDE.md"], &[])?;

        self.title("The agent edits the file and records its own write");
        self.edit(
            "src/main.rs",
            "    println!(\"hello\");",
            "    println!(\"hello, world\");",
        )?;
        self.tool("fsview-read", &["--written", "src/main.rs"], &[])?;
        self.tool("fsview-check-edit", &["--write", "src/main.rs"], &[])?;

        self.title("A formatter rewrites it behind the agent's back");
        self.write("src/main.rs", "fn main() { println!(\"hello, world\"); }\n")?;
        self.tool("fsview-check-edit", &["--write", "src/main.rs"], &[])?;
        self.tool("fsview-check-edit", &["--changed"], &[])?;

        self.title("fsview-edit applies an edit under the gate: refused until re-read");
        let edit = [
            "src/main.rs",
            "--old",
            "hello, world",
            "--new",
            "hello, fsview",
        ];
        self.tool("fsview-edit", &edit, &[])?;
        self.tool("fsview-read", &["src/main.rs"], &[])?;
        self.tool("fsview-edit", &edit, &[])?;

        self.title("Inside Claude Code: its hooks, wired in and answering");
        self.tool("fsview-hook", &["install", "claude"], &[])?;
        self.hook_payload(
            "PreToolUse: Claude Code asks to Edit CLAUDE.md, which it never read",
            "CLAUDE.md",
        )?;
        self.tool("fsview-hook", &["install", "claude", "--uninstall"], &[])?;

        self.title("Any MCP client: fsview-mcp's read and edit tools, on the same gate");
        self.mcp()?;

        self.title("A git checkout fires the installed hook, which invalidates the context");
        self.tool("ctx-invalidate", &["install-hooks"], &[])?;
        println!("{}", self.paint("36", "$ git checkout -b feature"));
        self.git(&["checkout", "-q", "-b", "feature"])?;
        self.tool("ctx-build", &["--json"], &["cache", "branch"])?;
        self.say(
            "Done: every verdict above came from the real binaries and one SQLite session file.",
        );
        Ok(())
    }

    /// Hand `fsview-hook claude` one PreToolUse payload for an Edit of
    /// `rel`, as Claude Code sends it, and show its answer.
    fn hook_payload(&self, what: &str, rel: &str) -> Result<(), String> {
        println!("{}", self.paint("36", &format!("({what})")));
        let payload = serde_json::json!({
            "session_id": "demo-conversation",
            "transcript_path": self.work.join(".no-transcript.jsonl"),
            "cwd": self.work,
            "hook_event_name": "PreToolUse",
            "tool_name": "Edit",
            "tool_input": {
                "file_path": self.work.join(rel),
                "old_string": "Project",
                "new_string": "fsview demo",
            },
        });
        let answer = self.pipe("fsview-hook", &["claude"], &format!("{payload}\n"))?;
        let v: serde_json::Value = serde_json::from_str(answer.trim())
            .map_err(|e| format!("fsview-hook answered no JSON ({e}): {answer}"))?;
        let out = &v["hookSpecificOutput"];
        println!(
            "  permissionDecision: {}",
            out["permissionDecision"].as_str().unwrap_or("(none)")
        );
        println!(
            "  permissionDecisionReason: {}",
            out["permissionDecisionReason"].as_str().unwrap_or("")
        );
        Ok(())
    }

    /// Speak MCP to fsview-mcp over its stdio, one request at a time, as a
    /// client would: an edit of a file never read, a read, the edit again.
    fn mcp(&self) -> Result<(), String> {
        let mut child = self
            .command("fsview-mcp")
            .args(["--sid", "demo-mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run fsview-mcp: {e}"))?;
        let mut stdin = child.stdin.take().expect("piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut ask = |id: u64, method: &str, params: serde_json::Value| {
            let req =
                serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            writeln!(stdin, "{req}").map_err(|e| format!("fsview-mcp: {e}"))?;
            let mut line = String::new();
            stdout
                .read_line(&mut line)
                .map_err(|e| format!("fsview-mcp: {e}"))?;
            serde_json::from_str::<serde_json::Value>(&line)
                .map_err(|e| format!("fsview-mcp answered no JSON ({e}): {line}"))
        };
        ask(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "fsview-demo", "version": "1"}}),
        )?;
        let file = self.work.join("CLAUDE.md");
        let edit = serde_json::json!({"name": "edit", "arguments": {
            "file_path": file, "old_string": "before you commit", "new_string": "first"}});
        let read = serde_json::json!({"name": "read", "arguments": {"file_path": file}});
        for (id, call, shown) in [(2, &edit, "edit"), (3, &read, "read"), (4, &edit, "edit")] {
            println!(
                "{} {}",
                self.paint("36", "->"),
                self.paint("36", &format!("tools/call {shown} CLAUDE.md"))
            );
            let r = ask(id, "tools/call", call.clone())?;
            let result = &r["result"];
            let text = result["content"][0]["text"].as_str().unwrap_or("");
            let first = text.lines().next().unwrap_or("");
            let error = result["isError"].as_bool().unwrap_or(false);
            println!(
                "  {}{}",
                if error { "error: " } else { "" },
                self.paint(if error { "31" } else { "32" }, first)
            );
        }
        drop(stdin);
        let _ = child.wait();
        Ok(())
    }

    /// Run a tool with `input` on stdin; its stdout.
    fn pipe(&self, name: &str, args: &[&str], input: &str) -> Result<String, String> {
        println!(
            "{} {}",
            self.paint("36", "$"),
            self.paint("36", &format!("{name} {} < payload.json", args.join(" ")))
        );
        let mut child = self
            .command(name)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {name}: {e}"))?;
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(input.as_bytes())
            .map_err(|e| format!("{name}: {e}"))?;
        let out = child
            .wait_with_output()
            .map_err(|e| format!("{name}: {e}"))?;
        if out.status.code() != Some(0) {
            return Err(format!(
                "{name} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// One of the tools, run in the demo's repository on its session file,
    /// with no user's or machine's instruction files or git settings.
    fn command(&self, name: &str) -> Command {
        let mut c = Command::new(self.bin.join(name));
        c.current_dir(&self.work)
            .env("FSVIEW_SESSION", &self.session)
            .env("CLAUDE_CONFIG_DIR", self.work.join(".no-user-config"))
            .env("FSVIEW_MANAGED_DIR", self.work.join(".no-managed-config"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        c
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    fn title(&mut self, s: &str) {
        self.step += 1;
        println!("\n{}", self.paint("1", &format!("{}. {s}", self.step)));
    }

    fn say(&self, s: &str) {
        println!("{s}");
    }

    fn write(&self, rel: &str, body: &str) -> Result<(), String> {
        std::fs::write(self.work.join(rel), body).map_err(|e| format!("cannot write {rel}: {e}"))
    }

    /// The agent's edit: replace `old` with `new` in `rel`, shown as a
    /// one-line diff, as an agent's Edit tool call would be.
    fn edit(&self, rel: &str, old: &str, new: &str) -> Result<(), String> {
        let path = self.work.join(rel);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {rel}: {e}"))?;
        if text.matches(old).count() != 1 {
            return Err(format!("the demo's edit of {rel} does not match once"));
        }
        println!("{}", self.paint("36", &format!("(the agent edits {rel})")));
        println!("  {}", self.paint("31", &format!("-{old}")));
        println!("  {}", self.paint("32", &format!("+{new}")));
        self.write(rel, &text.replacen(old, new, 1))
    }

    fn git(&self, args: &[&str]) -> Result<(), String> {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let status = Command::new("git")
            .env("PATH", path)
            .env("FSVIEW_SESSION", &self.session)
            .args(["-c", "user.name=Demo", "-c", "user.email=demo@example.com"])
            .args(args)
            .current_dir(&self.work)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run git ({e}); the demo needs git on PATH"))?;
        if !status.success() {
            return Err(format!("git {} failed", args.join(" ")));
        }
        Ok(())
    }

    /// Run a tool, print the command, its output (or, with `fields`, those
    /// fields of its JSON) and its exit status.
    fn tool(&self, name: &str, args: &[&str], fields: &[&str]) -> Result<(), String> {
        println!(
            "{} {}",
            self.paint("36", "$"),
            self.paint("36", &format!("{name} {}", shell_words(args)))
        );
        let out = self
            .command(name)
            .args(args)
            .env("FSVIEW_SID", "demo")
            .output()
            .map_err(|e| format!("cannot run {name}: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if fields.is_empty() {
            for l in stdout.lines() {
                println!("  {l}");
            }
        } else {
            for l in stdout.lines() {
                let v: serde_json::Value =
                    serde_json::from_str(l).map_err(|e| format!("{name} --json: {e}"))?;
                for f in fields {
                    if *f == "branch" {
                        let sys = v["system"].as_str().unwrap_or("");
                        if let Some(l) = sys.lines().find(|l| l.starts_with("Current branch:")) {
                            println!("  {l}");
                        }
                        continue;
                    }
                    let shown = match (&v[*f], *f) {
                        (serde_json::Value::Array(files), "files") => files
                            .iter()
                            .map(|x| {
                                format!(
                                    "{} ({}, {})",
                                    x["path"].as_str().unwrap_or("?"),
                                    x["source"].as_str().unwrap_or("?"),
                                    x["kind"].as_str().unwrap_or("?")
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                        (x, _) => x.to_string(),
                    };
                    println!("  {f}: {shown}");
                }
            }
        }
        for l in String::from_utf8_lossy(&out.stderr).lines() {
            println!("  {}", self.paint("33", l));
        }
        let code = out.status.code().unwrap_or(-1);
        let verdict = match code {
            0 => self.paint("32", "exit 0"),
            1 => self.paint("31", "exit 1 (denied / changed)"),
            _ => self.paint("31;1", &format!("exit {code} (error)")),
        };
        println!("  {verdict}");
        if code > 1 {
            return Err(format!("{name} failed unexpectedly"));
        }
        Ok(())
    }
}

/// `args` as a shell would take them back.
fn shell_words(args: &[&str]) -> String {
    args.iter()
        .map(|a| fsview_agents::install::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The directory holding the fsview binaries: ours, built if needed.
fn tools_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let missing = |d: &Path| TOOLS.iter().any(|t| !d.join(t).is_file());
    if missing(&dir) {
        // Run by `cargo run`, which builds only this binary: build the rest.
        let cargo = std::env::var_os("CARGO").ok_or(
            "the fsview tools are not next to fsview-demo; build them with `cargo build --workspace --bins`",
        )?;
        let mut c = Command::new(cargo);
        c.args(["build", "--bins", "-p", "fsview", "-p", "fsview-mcp"]);
        if dir.ends_with("release") {
            c.arg("--release");
        }
        // The first build takes minutes: say so at once, and let cargo
        // show its progress, so that nobody takes it for a hang.
        eprintln!(
            "fsview-demo: building the tools it plays first ({}); the first time this takes about \
             2 minutes on 2 cores, cargo's progress below",
            TOOLS.join(", ")
        );
        let started = std::time::Instant::now();
        let status = c.status().map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() || missing(&dir) {
            return Err(
                "building the fsview tools failed; run `cargo build --workspace --bins`".into(),
            );
        }
        let secs = started.elapsed().as_secs();
        eprintln!(
            "fsview-demo: built in {}m {:02}s; the demo follows",
            secs / 60,
            secs % 60
        );
    }
    Ok(dir)
}

fn tempdir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir().join(format!("fsview-demo-{}", std::process::id()));
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
    std::fs::canonicalize(&base).map_err(|e| e.to_string())
}
