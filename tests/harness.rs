//! A hermetic test environment: a temp directory holding a work tree and a
//! session file, and a cleared environment for every command.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Env {
    // Held for its Drop: the temp directory lives as long as the Env.
    _dir: tempfile::TempDir,
    /// The working directory of every command.
    pub work: PathBuf,
    pub session: PathBuf,
}

/// What a command did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn bin(name: &str) -> PathBuf {
    match name {
        "fsview-read" => PathBuf::from(env!("CARGO_BIN_EXE_fsview-read")),
        "fsview-check-edit" => PathBuf::from(env!("CARGO_BIN_EXE_fsview-check-edit")),
        "ctx-build" => PathBuf::from(env!("CARGO_BIN_EXE_ctx-build")),
        "ctx-invalidate" => PathBuf::from(env!("CARGO_BIN_EXE_ctx-invalidate")),
        "fsview-session" => PathBuf::from(env!("CARGO_BIN_EXE_fsview-session")),
        "fsview-hook" => PathBuf::from(env!("CARGO_BIN_EXE_fsview-hook")),
        "fsview-edit" => PathBuf::from(env!("CARGO_BIN_EXE_fsview-edit")),
        "fsview-write" => PathBuf::from(env!("CARGO_BIN_EXE_fsview-write")),
        other => panic!("unknown binary {other}"),
    }
}

/// The directory holding the built binaries, for shell pipelines.
pub fn bin_dir() -> PathBuf {
    bin("fsview-read").parent().unwrap().to_path_buf()
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        let session = root.join("session.db");
        Env {
            _dir: dir,
            work,
            session,
        }
    }

    pub fn root(&self) -> PathBuf {
        self.work.parent().unwrap().to_path_buf()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.work.join(rel)
    }

    pub fn write(&self, rel: &str, body: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&p, body).unwrap();
        p
    }

    /// A command with a cleared environment: PATH for git and coreutils,
    /// HOME inside the temp dir, the session file set.
    pub fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display()),
            )
            .env("HOME", self.root().join("home"))
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .env("FSVIEW_SESSION", &self.session)
            .current_dir(&self.work);
        c
    }

    pub fn run(&self, name: &str, args: &[&str]) -> Run {
        self.run_in(name, args, None)
    }

    pub fn run_stdin(&self, name: &str, args: &[&str], stdin: &[u8]) -> Run {
        self.run_in(name, args, Some(stdin))
    }

    fn run_in(&self, name: &str, args: &[&str], stdin: Option<&[u8]>) -> Run {
        let mut c = self.cmd(bin(name));
        c.args(args);
        output(c, stdin)
    }

    /// Run a bash pipeline (with `set -o pipefail`), the binaries on PATH.
    pub fn sh(&self, script: &str) -> Run {
        let mut c = self.cmd("bash");
        c.arg("-c").arg(format!("set -o pipefail\n{script}"));
        output(c, None)
    }
}

/// Start `c`. A program a test has just written (a copy of a binary, a
/// script) may be busy for a moment: another test's thread that forks
/// while the file is open for writing holds that descriptor until its
/// child execs, and exec then fails with ETXTBSY. Tried again for up to a
/// second, as cargo does.
pub fn spawn(c: &mut Command) -> std::process::Child {
    let mut tries = 0;
    loop {
        match c.spawn() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            r => return r.expect("spawn"),
        }
    }
}

pub fn output(mut c: Command, stdin: Option<&[u8]>) -> Run {
    c.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = spawn(&mut c);
    if let Some(input) = stdin {
        let mut w = child.stdin.take().unwrap();
        // A command may exit without reading its stdin (an error found
        // first): that is its answer, not the harness's failure.
        if let Err(e) = w.write_all(input) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
    }
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

impl Run {
    /// Assert the exit code and exact stdout, showing stderr on failure.
    #[track_caller]
    pub fn expect(&self, code: i32, stdout: &str) -> &Run {
        assert_eq!(
            (self.code, self.stdout.as_str()),
            (code, stdout),
            "stderr: {}",
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stderr_is(&self, stderr: &str) -> &Run {
        assert_eq!(self.stderr, stderr);
        self
    }

    /// The JSON Lines of stdout.
    pub fn json(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

/// Set a file's mtime (and atime) to `secs.nanos` since the epoch.
pub fn set_mtime(path: &Path, secs: i64, nanos: u32) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::new(secs as u64, nanos);
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_times(std::fs::FileTimes::new().set_modified(t).set_accessed(t))
        .unwrap();
}

pub fn mtime(path: &Path) -> (i64, u32) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    (m.mtime(), m.mtime_nsec() as u32)
}

/// The gate's `modified` refusal that carries the whole change (`listing`:
/// the reminder's lines after its header), as fsview-hook words it.
/// `text` with each time of day after " at " (`14:02`, which a message
/// naming who changed a file carries) put as `HH:MM`.
pub fn untimed(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let time = b[i..].starts_with(b" at ")
            && b.len() >= i + 9
            && b[i + 4].is_ascii_digit()
            && b[i + 5].is_ascii_digit()
            && b[i + 6] == b':'
            && b[i + 7].is_ascii_digit()
            && b[i + 8].is_ascii_digit();
        if time {
            out.push_str(" at HH:MM");
            i += 9;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// [`modified_told`], the change made by `writer` (as the refusal names
/// it, its time as `HH:MM`: see [`untimed`]).
pub fn modified_told_by(writer: &str, listing: &str) -> String {
    format!(
        "File has been modified since read, by {writer}. The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).\n\nThese files changed since you last saw them:\n\n{listing}"
    )
}

/// [`modified_told`] for an agent whose own edit tool insists on a re-read
/// after a change (Droid).
pub fn modified_told_reread(listing: &str) -> String {
    format!(
        "File has been modified since read, either by the user or by a linter. The whole change is below; your edit tool still needs the file read again before it edits it.\n\nThese files changed since you last saw them:\n\n{listing}"
    )
}

pub fn modified_told(listing: &str) -> String {
    format!(
        "File has been modified since read, either by the user or by a linter. The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).\n\nThese files changed since you last saw them:\n\n{listing}"
    )
}

/// A tool started in the background, stopped at pause point `point`.
pub struct Paused {
    child: Child,
    dir: PathBuf,
    point: &'static str,
}

impl Paused {
    pub fn start(env: &Env, point: &'static str, tool: &str, args: &[&str]) -> Paused {
        Paused::start_at(env, &[point], tool, args)
    }

    /// Start `tool`, to pause at each of `points` in turn; it is stopped at
    /// the first.
    pub fn start_at(env: &Env, points: &[&'static str], tool: &str, args: &[&str]) -> Paused {
        let point = points[0];
        let dir = env.root().join(format!("pause-{point}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut c = env.cmd(bin(tool));
        c.args(args)
            .env(
                "FSVIEW_TEST_PAUSE",
                format!("{}:{}", points.join(","), dir.display()),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = c.spawn().unwrap();
        let waiting = dir.join(format!("{point}.waiting"));
        let start = Instant::now();
        while !waiting.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{tool} never reached pause point {point}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        Paused { child, dir, point }
    }

    /// Let it go on to pause point `next`, and wait until it is there.
    pub fn go_on_to(&mut self, next: &'static str) {
        std::fs::write(self.dir.join(format!("{}.go", self.point)), b"").unwrap();
        let waiting = self.dir.join(format!("{next}.waiting"));
        let start = Instant::now();
        while !waiting.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "never reached pause point {next}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        self.point = next;
    }

    /// Kill it where it stands.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn finish(self) -> Run {
        std::fs::write(self.dir.join(format!("{}.go", self.point)), b"").unwrap();
        let out = self.child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Run a tool (`argv[0]`, one of fsview's) as uid 4321, groups 4321 only
/// (root may write anything), with a session file of its own.
pub fn as_user(env: &Env, argv: &[&str]) -> Run {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(env.root(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = env.root().join("u4321");
    if !home.exists() {
        std::fs::create_dir(&home).unwrap();
        std::os::unix::fs::chown(&home, Some(4321), Some(4321)).unwrap();
    }
    let mut c = env.cmd("setpriv");
    c.args(["--reuid=4321", "--regid=4321", "--clear-groups", "--"])
        .arg(bin(argv[0]))
        .args(&argv[1..])
        .env("FSVIEW_SESSION", home.join("s.db"));
    output(c, None)
}

/// The ids of the sessions the env's session file holds, as listed.
pub fn sids(env: &Env) -> Vec<String> {
    env.run("fsview-session", &["list", "--json"])
        .json()
        .iter()
        .map(|s| s["sid"].as_str().unwrap().to_string())
        .collect()
}

/// Whether a test may go on without what this machine lacks: `missing` is
/// `None` when it has it. Where it does not, the test is skipped, said on
/// stderr with the reason, so that the README's `cargo test --workspace`
/// passes on a machine with only Rust and git; CI (.ci/run sets
/// FSVIEW_TESTS_STRICT=1) installs everything, and there a missing piece
/// fails the test instead of skipping it.
pub fn can_run(missing: Option<String>) -> bool {
    let Some(why) = missing else {
        return true;
    };
    // The test harness names each test's thread after the test.
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    if std::env::var_os("FSVIEW_TESTS_STRICT").is_some_and(|v| v == "1") {
        panic!("{test} needs {why} (FSVIEW_TESTS_STRICT=1: CI runs every test)");
    }
    eprintln!("skipped: {test} needs {why}");
    false
}

/// `None` when GNU sed with `--sandbox` (4.3 or later) is on PATH, which
/// fsview runs to merge a `sed -i` of a pattern; else what is missing.
pub fn gnu_sed() -> Option<String> {
    let ok = std::process::Command::new("sed")
        .args(["--sandbox", "-e", "s/a/b/"])
        .stdin(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    (!ok).then(|| "GNU sed 4.3 or later on PATH (Debian package sed)".to_string())
}

/// `None` when `tool` is on PATH (or in /usr/sbin, /sbin); else what is
/// missing, with the Debian package that has it.
pub fn tool(tool: &str, package: &str) -> Option<String> {
    let found = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("PATH=\"$PATH:/usr/sbin:/sbin\" command -v {tool}"),
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (!found).then(|| format!("{tool} (Debian's {package} package)"))
}

/// The reason of a Claude-shaped PreToolUse deny (Claude Code's, Codex's,
/// Qwen Code's), from the hook's stdout; panics when it is no deny.
pub fn denied_reason(stdout: &str) -> String {
    let v: serde_json::Value =
        serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecision"], "deny",
        "{stdout}"
    );
    v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_else(|| panic!("no reason: {stdout}"))
        .to_string()
}
