//! A raw MCP client for the tests: the built fsview-mcp started in a temp
//! directory with a cleared environment, JSON-RPC written to its stdin line
//! by line and read from its stdout, as any client does over stdio.
//!
//! The other fsview binaries (fsview-check-edit, fsview-session, ctx-build)
//! are taken from beside fsview-mcp in the target directory: `cargo test
//! --workspace` builds them all before it runs any test.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

/// How long a response may take before the test fails (not a timing
/// assertion: a hang guard).
pub const PATIENCE: Duration = Duration::from_secs(30);

pub fn mcp_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fsview-mcp"))
}

/// Another fsview binary, from beside fsview-mcp.
pub fn bin(name: &str) -> PathBuf {
    let p = mcp_bin().parent().unwrap().join(name);
    assert!(
        p.exists(),
        "{} is not built; run the tests with `cargo test --workspace` (or `cargo build --workspace` first)",
        p.display()
    );
    p
}

pub struct Env {
    _dir: tempfile::TempDir,
    pub work: PathBuf,
    pub session: PathBuf,
}

/// What a finished command did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        Env {
            session: root.join("session.db"),
            work,
            _dir: dir,
        }
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

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    /// A command with a cleared environment, in the work tree, with the
    /// session file set.
    pub fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.work.parent().unwrap().join("home"))
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .env("FSVIEW_SESSION", &self.session)
            .current_dir(&self.work);
        c
    }

    /// Run another fsview tool to completion.
    pub fn run(&self, tool: &str, args: &[&str]) -> Run {
        let out = self
            .cmd(bin(tool))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// fsview-mcp run to completion on `stdin`.
    pub fn mcp_once(&self, args: &[&str], stdin: &[u8]) -> Run {
        let mut c = self.cmd(mcp_bin());
        c.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut w = child.stdin.take().unwrap();
        let _ = w.write_all(stdin);
        drop(w);
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// A server, initialized.
    pub fn server(&self, args: &[&str]) -> Client {
        let mut c = Client::start(self, args);
        c.initialize("2025-11-25");
        c
    }
}

/// An MCP client of one fsview-mcp process.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
    next_id: u64,
}

impl Client {
    /// Start fsview-mcp with `args` (not yet initialized).
    pub fn start(env: &Env, args: &[&str]) -> Client {
        Client::start_with(env, args, &[])
    }

    /// [`Client::start`], with more environment variables.
    pub fn start_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Client {
        let mut c = env.cmd(mcp_bin());
        c.envs(vars.iter().copied());
        c.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut s);
            s
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            next_id: 1,
        }
    }

    pub fn send_line(&mut self, line: &str) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(line.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
        w.flush().unwrap();
    }

    pub fn send(&mut self, msg: &Value) {
        self.send_line(&msg.to_string());
    }

    /// The next message from the server.
    pub fn recv(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(PATIENCE)
            .expect("the server answered within the time allowed");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Send a request; its response (the whole message), skipping
    /// notifications.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.recv();
            if m.get("id") == Some(&json!(id)) {
                return m;
            }
            assert!(m.get("id").is_none(), "a response to another request: {m}");
        }
    }

    pub fn initialize(&mut self, version: &str) -> Value {
        let r = self.request(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "fsview-tests", "version": "0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        r
    }

    /// Call a tool; its result.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        assert!(r.get("error").is_none(), "a protocol error: {r}");
        r["result"].clone()
    }

    /// Call several tools at once (every request sent before any answer is
    /// read, so the server runs them side by side); their results, in the
    /// order of `calls`.
    pub fn call_all(&mut self, calls: &[(&str, Value)]) -> Vec<Value> {
        let first = self.next_id;
        for (name, arguments) in calls {
            let id = self.next_id;
            self.next_id += 1;
            self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                              "params": {"name": name, "arguments": arguments}}));
        }
        let mut results = vec![Value::Null; calls.len()];
        let mut left = calls.len();
        while left > 0 {
            let m = self.recv();
            let Some(id) = m.get("id").and_then(Value::as_u64) else {
                continue;
            };
            let slot = &mut results[(id - first) as usize];
            assert!(slot.is_null() && m.get("error").is_none(), "{m}");
            *slot = m["result"].clone();
            left -= 1;
        }
        results
    }

    /// Close stdin (the client is done) and wait for the server to exit.
    pub fn close(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        (status.code().unwrap_or(-1), self.stderr.join().unwrap())
    }

    /// Close stdin (the client is done) and send SIGTERM, as the SDKs do
    /// to a server that has not exited yet; the server is left running.
    pub fn hang_up_and_terminate(&mut self) {
        drop(self.stdin.take());
        self.terminate();
    }

    /// Send SIGTERM, stdin left as it is.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -TERM");
    }

    /// Wait for the server to exit: its exit code (-1 for a signal) and
    /// stderr.
    pub fn wait(mut self) -> (i32, String) {
        let status = self.child.wait().unwrap();
        (status.code().unwrap_or(-1), self.stderr.join().unwrap())
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// The text blocks of a tool result.
pub fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {result}"))
        .iter()
        .map(|b| {
            assert_eq!(b["type"], "text", "{b}");
            b["text"].as_str().unwrap().to_string()
        })
        .collect()
}

/// The one text block of a tool result.
pub fn text(result: &Value) -> String {
    let t = texts(result);
    assert_eq!(t.len(), 1, "one block: {result}");
    t.into_iter().next().unwrap()
}

pub fn is_error(result: &Value) -> bool {
    result["isError"] == json!(true)
}

/// The views of a session as `fsview-session show --json` lists them:
/// (path relative to the work tree, kind, source).
pub fn views(env: &Env, sid: &str) -> Vec<(String, String, String)> {
    let r = env.run("fsview-session", &["show", "--sid", sid, "--json"]);
    if r.code != 0 {
        return Vec::new();
    }
    r.stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["path"].as_str().unwrap().to_string(),
                v["kind"].as_str().unwrap().to_string(),
                v["source"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

pub fn path_str(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}
