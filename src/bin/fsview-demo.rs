//! fsview-demo: a short agent run, played with the real tools in a
//! temporary git repository, printing each step and its verdict.
//!
//! It runs the fsview binaries that sit next to it (building them with the
//! cargo that ran it when they are missing), so what it shows is what a
//! shell script would get.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

const TOOLS: [&str; 4] = [
    "fsview-read",
    "fsview-check-edit",
    "ctx-build",
    "ctx-invalidate",
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
    fsview::common::parse_matches(
        clap::Command::new("fsview-demo")
            .version(env!("CARGO_PKG_VERSION"))
            .about("Play a short agent run with the fsview tools in a temporary git repository")
            .long_about(
                "Play a short agent run with the fsview tools in a temporary git repository: \
                 each step's command, its output and its exit status, from the real binaries \
                 and one session file. Colour on a terminal unless NO_COLOR is set.",
            )
            .after_help(
                "Examples:\n  cargo run --bin fsview-demo   build the tools and play the demo",
            ),
    );
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
            self.paint("36", &format!("{name} {}", args.join(" ")))
        );
        let out = Command::new(self.bin.join(name))
            .args(args)
            .current_dir(&self.work)
            .env("FSVIEW_SESSION", &self.session)
            .env("FSVIEW_SID", "demo")
            .env("CLAUDE_CONFIG_DIR", self.work.join(".no-user-config"))
            .env("FSVIEW_MANAGED_DIR", self.work.join(".no-managed-config"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
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

/// The directory holding the fsview binaries: ours, built if needed.
fn tools_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let missing = |d: &Path| TOOLS.iter().any(|t| !d.join(t).is_file());
    if missing(&dir) {
        // Run by `cargo run`, which builds only this binary: build the rest.
        let cargo = std::env::var_os("CARGO").ok_or(
            "the fsview tools are not next to fsview-demo; build them with `cargo build --bins`",
        )?;
        let mut c = Command::new(cargo);
        c.args(["build", "--quiet", "--bins"]);
        if dir.ends_with("release") {
            c.arg("--release");
        }
        let status = c.status().map_err(|e| format!("cannot run cargo: {e}"))?;
        if !status.success() || missing(&dir) {
            return Err("building the fsview tools failed; run `cargo build --bins`".into());
        }
    }
    Ok(dir)
}

fn tempdir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir().join(format!("fsview-demo-{}", std::process::id()));
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
    std::fs::canonicalize(&base).map_err(|e| e.to_string())
}
