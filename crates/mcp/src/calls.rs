//! What each tool does: synchronous, on the same cores as the command-line
//! tools (`fsview_store::show` as fsview-read reads, `fsview_apply::apply`
//! as fsview-edit and fsview-write change, `changes` and `remind` as
//! fsview-check-edit --changed and the hooks' reminders, ctx-build itself
//! for the context). The server runs each call on a blocking thread.
//!
//! A call returns an [`Answer`]: the text for the model, whether it is an
//! error, and what is to be recorded once the answer has reached the client
//! (a [`Delivery`]): the view a read showed, and what the news told. A
//! change made by edit or write is recorded by `apply` as it is made.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};

use fsview::common::{self, SessionArgs};
use fsview::mcp::TOOL;
use fsview_apply::{Change, Context, Edit, Request};
use fsview_store::changes::{self, Limits};
use fsview_store::error::{plain_io, quote};
use fsview_store::events::Event;
use fsview_store::gate;
use fsview_store::paths::{self, Resolved};
use fsview_store::remind::{self, Reminder};
use fsview_store::show::{self, Notice, ReadError, Shown};
use fsview_store::store::NewView;
use fsview_store::{Error, Source, Store};

use crate::catalog::Call;
use crate::connections::Connections;

/// Caps on the diffs of `changed` and of the news, in lines: smaller than
/// the command line's (200 per file, 1,000 in all), since a client passes
/// a tool result on whole only up to its own limit.
pub const LIMITS: Limits = Limits {
    per_file: 100,
    total: 400,
    rewrites: true,
    // fsview-mcp's read numbers its lines.
    numbered: true,
    crlf_as_lf: false,
};

/// Caps on the diff an edit or write result carries: a whole-file write
/// of a large file would otherwise send all of it back.
pub const DIFF_LINES: usize = 200;
pub const DIFF_BYTES: usize = 32 * 1024;

/// At most [`DIFF_LINES`] lines and [`DIFF_BYTES`] bytes of `diff` (whole
/// lines, or the first line cut), then a line naming how many lines were
/// left out; and that number.
fn capped_diff(diff: &str) -> (String, usize) {
    let total = diff.lines().count();
    let mut out = String::new();
    let mut kept = 0;
    for line in diff.split_inclusive('\n') {
        if kept == DIFF_LINES || out.len() + line.len() > DIFF_BYTES {
            if kept == 0 {
                let mut end = DIFF_BYTES.min(line.len());
                while !line.is_char_boundary(end) {
                    end -= 1;
                }
                out.push_str(&line[..end]);
                out.push('\n');
                kept = 1;
            }
            break;
        }
        out.push_str(line);
        kept += 1;
    }
    let cut = total - kept;
    if cut > 0 {
        out.push_str(&format!(
            "[{cut} more lines of the diff left out; read the file to see it]\n"
        ));
    }
    (out, cut)
}

/// Paths in diffs and lists are shown absolute, as the tools' descriptions
/// ask the model to name them: no directory is a prefix of every path but
/// the empty one.
const ABSOLUTE: &str = "";

/// Everything a call needs to know, fixed at start.
pub struct Desk {
    /// The session options, the session id settled.
    pub session: SessionArgs,
    /// The session file, resolved (absolute).
    pub session_file: PathBuf,
    /// Where relative paths are taken from.
    pub dir: PathBuf,
    /// Most bytes one read shows.
    pub cap: u64,
    /// Answer an unchanged re-read with the stub.
    pub stub: bool,
    /// Tell what changed since seen after each result.
    pub news: bool,
    /// Merge an edit with a change the file had since the view, or refuse.
    pub on_change: fsview_apply::OnChange,
    /// Other instruction file names for ctx-build.
    pub also: Vec<String>,
    /// The ctx-build to run for `context`.
    pub ctx_build: PathBuf,
    /// The session file's connections.
    pub connections: Arc<Connections>,
    /// Files whose news is on its way to the client: not news for a call
    /// running beside it (each change is told once).
    pub telling: Arc<Mutex<HashSet<i64>>>,
}

/// A tool's answer.
pub struct Answer {
    /// What the model reads.
    pub text: String,
    /// The files changed since seen, told after the text (a block of its
    /// own).
    pub news: Option<String>,
    pub is_error: bool,
    /// For programs, not the model: what was shown or decided.
    pub meta: Map<String, Value>,
    /// What to record once the answer is delivered.
    pub delivery: Option<Delivery>,
}

impl Answer {
    fn ok(text: String) -> Answer {
        Answer {
            text,
            news: None,
            is_error: false,
            meta: Map::new(),
            delivery: None,
        }
    }

    fn error(text: impl Into<String>) -> Answer {
        Answer {
            is_error: true,
            ..Answer::ok(text.into())
        }
    }

    fn meta(mut self, key: &str, v: Value) -> Answer {
        self.meta.insert(format!("fsview/{key}"), v);
        self
    }
}

/// What a delivered answer records: what the news told, then the view a
/// read showed (a read clears what was told of its file).
pub struct Delivery {
    connections: Arc<Connections>,
    telling: Arc<Mutex<HashSet<i64>>>,
    sid: String,
    told: Vec<Reminder>,
    view: Option<(PathBuf, Shown)>,
}

impl Delivery {
    /// Record it. A failure is said on stderr: the model has its answer,
    /// and the next edit of that file will ask for a read, never pass on a
    /// view that was not recorded.
    pub fn record(self) {
        let store = self.connections.lease();
        if !self.told.is_empty() {
            if let Err(e) = remind::record(&store, &self.sid, TOOL, &self.told, None) {
                eprintln!("{TOOL}: what changed was told, but not recorded: {e}");
            }
        }
        if let Some((canonical, shown)) = self.view.as_ref().filter(|(_, s)| !s.shows_nothing()) {
            let view = NewView::of_shown(canonical, shown, Source::Read);
            let r = store.record_logged(&self.sid, &view, |r| {
                let e = Event::new(TOOL, "read")
                    .path(canonical)
                    .detail(Some(shown.kind.as_str()));
                if r.unchanged {
                    e.verdict("unchanged")
                } else {
                    e
                }
            });
            if let Err(e) = r {
                eprintln!(
                    "{TOOL}: {} was shown, but its view was not recorded ({e}); its next edit will ask for a read",
                    quote(canonical)
                );
            }
        }
    }
}

impl Drop for Delivery {
    /// Recorded or never delivered: no longer on its way either way (news
    /// not delivered is news for the next call).
    fn drop(&mut self) {
        let mut telling = self.telling.lock().expect("telling lock");
        for r in &self.told {
            telling.remove(&r.record.id);
        }
    }
}

/// An edit or write refused as `modified` whose whole change the news
/// carries: once delivered, the view moves to the text told, so the
/// refusal asks for a retry, not for a read (as the hooks' refusals do).
fn retry_told(answer: &mut Answer, told: &[Reminder]) {
    let refused = ["fsview/edit", "fsview/write"].iter().find_map(|k| {
        let m = answer.meta.get(*k)?;
        if m["verdict"] != "modified" {
            return None;
        }
        m["canonical"].as_str().map(PathBuf::from)
    });
    let Some(canonical) = refused else {
        return;
    };
    if told.iter().any(|r| r.whole && r.record.path == canonical) {
        // Only that sentence: a note after it (a version kept aside) stays.
        if let Some(at) = answer.text.rfind(gate::READ_AGAIN) {
            answer
                .text
                .replace_range(at..at + gate::READ_AGAIN.len(), gate::RETRY_TOLD);
        }
    }
}

impl Desk {
    /// Answer one call.
    pub fn call(&self, call: Call) -> Answer {
        let store = self.connections.lease();
        let sid = self.session.sid();
        if let Some(refused) = self.session_file_named(&call) {
            return refused;
        }
        // The answer, the view a read showed, and for `changed` what it
        // listed (recorded as told: not news for the next call).
        let (mut answer, view, listed) = match call {
            Call::Read {
                file_path,
                offset,
                limit,
            } => match self.read(&store, &sid, &file_path, offset, limit) {
                Ok((answer, canonical, shown)) => (answer, Some((canonical, shown)), None),
                Err(e) => (Answer::error(e.message()), None, None),
            },
            Call::Edit {
                file_path,
                old_string,
                new_string,
                replace_all,
            } => {
                let edit = Edit {
                    old: old_string,
                    new: new_string,
                    replace_all,
                };
                let change = Change::Edit(vec![edit]);
                (self.apply(&store, &sid, file_path, change), None, None)
            }
            Call::Write { file_path, content } => {
                let change = Change::Write(content.into_bytes());
                (self.apply(&store, &sid, file_path, change), None, None)
            }
            Call::Changed => match self.changed(&store, &sid) {
                Ok((answer, told)) => (answer, None, Some(told)),
                Err(e) => (Answer::error(e.message()), None, None),
            },
            Call::Context { for_path } => (self.context(for_path.as_deref()), None, None),
        };
        let listing = listed.is_some();
        let told = match listed {
            Some(told) => told,
            None if self.news => {
                let exclude = view.as_ref().map(|(c, _)| c.as_path());
                match self.news(&store, &sid, exclude) {
                    Ok(found) => found,
                    Err(e) => {
                        eprintln!("{TOOL}: cannot tell what changed: {e}");
                        Vec::new()
                    }
                }
            }
            None => Vec::new(),
        };
        let mut told = told;
        if !listing {
            self.fit_news(&answer, &mut told);
        }
        if !listing && !told.is_empty() {
            retry_told(&mut answer, &told);
            answer.news = Some(remind::render(Path::new(ABSOLUTE), &told));
        }
        if !told.is_empty() || view.is_some() {
            answer.delivery = Some(Delivery {
                connections: self.connections.clone(),
                telling: self.telling.clone(),
                sid,
                told,
                view,
            });
        }
        answer
    }

    /// A refusal when `call` would read or change the session file itself
    /// (or its WAL): besides making no sense to an agent, opening it in
    /// this process and closing it again would drop the locks this
    /// process's connections hold on it (see crate::connections).
    fn session_file_named(&self, call: &Call) -> Option<Answer> {
        let path = match call {
            Call::Read { file_path, .. }
            | Call::Edit { file_path, .. }
            | Call::Write { file_path, .. } => file_path,
            _ => return None,
        };
        let canonical = paths::resolve(&self.dir, path)
            .ok()?
            .canonical()
            .to_path_buf();
        let name = self
            .session_file
            .file_name()?
            .to_string_lossy()
            .into_owned();
        // By name (a file not made yet), and by identity: a hard link to
        // the WAL's shared memory elsewhere is the same file.
        let same = |a: &std::fs::Metadata, b: &std::fs::Metadata| {
            use std::os::unix::fs::MetadataExt;
            a.dev() == b.dev() && a.ino() == b.ino()
        };
        let target = std::fs::metadata(&canonical).ok();
        let ours = ["", "-wal", "-shm", "-journal"].iter().any(|suffix| {
            let file = self.session_file.with_file_name(format!("{name}{suffix}"));
            canonical == file
                || match (&target, std::fs::metadata(&file)) {
                    (Some(t), Ok(f)) => same(t, &f),
                    _ => false,
                }
        });
        ours.then(|| {
            Answer::error(format!(
                "{} is fsview's session file; the file tools do not show or change it (fsview-session inspects it)",
                quote(path)
            ))
        })
    }

    /// Of `found`, what no call beside this one is telling already; those
    /// are marked as being told (until their delivery is recorded or
    /// dropped).
    fn claim(&self, mut found: Vec<Reminder>) -> Vec<Reminder> {
        let mut telling = self.telling.lock().expect("telling lock");
        found.retain(|r| telling.insert(r.record.id));
        found
    }

    /// Keep the news, with the answer's text, within `cap` bytes, what a
    /// read shows at most: a client cuts a long result (Claude Code past
    /// 25,000 tokens), and what it cuts the model never got. The longest
    /// diffs wait first, for the next call.
    fn fit_news(&self, answer: &Answer, told: &mut Vec<Reminder>) {
        let room = usize::try_from(self.cap)
            .unwrap_or(usize::MAX)
            .saturating_sub(counted(&answer.text));
        let mut waiting = Vec::new();
        while !told.is_empty() && counted(&remind::render(Path::new(ABSOLUTE), told)) > room {
            let longest = (0..told.len())
                .max_by_key(|&i| told[i].diff.as_ref().map_or(0, String::len))
                .expect("not empty");
            waiting.push(told.remove(longest));
        }
        let mut telling = self.telling.lock().expect("telling lock");
        for r in &waiting {
            telling.remove(&r.record.id);
        }
    }

    /// What changed since seen and was never told, the file just read
    /// left out (its text is in the answer).
    fn news(
        &self,
        store: &Store,
        sid: &str,
        exclude: Option<&Path>,
    ) -> Result<Vec<Reminder>, Error> {
        let mut found = remind::select(store, sid, Path::new(ABSOLUTE), LIMITS)?;
        found.retain(|r| Some(r.record.path.as_path()) != exclude);
        Ok(self.claim(found))
    }

    fn read(
        &self,
        store: &Store,
        sid: &str,
        path: &Path,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> Result<(Answer, PathBuf, Shown), Error> {
        let canonical = match paths::resolve(&self.dir, path)? {
            Resolved::Existing { canonical, .. } => canonical,
            Resolved::Missing { .. } => {
                return Err(Error::new(format!(
                    "{}: no such file; check the path",
                    quote(path)
                )))
            }
        };
        let req = show::Request {
            offset,
            limit,
            cap: self.cap,
        };
        let mut shown = show::read(&canonical, &req).map_err(|e| read_error(path, e))?;
        // What the client passes on whole: fewer lines, when the numbered
        // ones would not fit.
        if let Some(keep) = fitting(&shown, self.cap) {
            shown = shown.cut_to(keep, &req);
        }
        // Whether it is a re-read shapes the answer; the view itself is
        // recorded only once the answer is delivered.
        let unchanged = store.seen(sid, &NewView::of_shown(&canonical, &shown, Source::Read))?;
        let stub = self.stub && unchanged;
        let mut text = if stub {
            format!("{}\n", fsview::read::UNCHANGED_STUB)
        } else {
            shown.numbered()
        };
        let notes = notices(&shown, &req, self.cap);
        if !notes.is_empty() {
            if !text.is_empty() {
                text.push('\n');
            }
            for n in &notes {
                text.push_str(&format!("Note: {n}\n"));
            }
        }
        let answer = Answer::ok(text).meta(
            "read",
            json!({
                "path": path.to_string_lossy(),
                "canonical": canonical.to_string_lossy(),
                "kind": shown.kind.as_str(),
                "offset": shown.offset,
                "lines": shown.lines,
                "total_lines": shown.total_lines,
                "unchanged": unchanged,
                "stub": stub,
            }),
        );
        Ok((answer, canonical, shown))
    }

    fn apply(&self, store: &Store, sid: &str, path: PathBuf, change: Change) -> Answer {
        let req = Request { path, change };
        let cx = Context {
            store: Some(store),
            sid,
            cwd: &self.dir,
            tool: TOOL,
            dry_run: false,
            voice: fsview_apply::edits::Voice::Model,
            // The server's own session, made when it started.
            unknown_session: false,
            on_change: self.on_change,
        };
        let r = match fsview_apply::apply(&cx, &req) {
            Ok(r) => r,
            Err(e) => return Answer::error(e.message()),
        };
        let meta = json!({
            "path": req.path.to_string_lossy(),
            "canonical": r.canonical.to_string_lossy(),
            "applied": r.applied,
            "verdict": r.verdict.as_str(),
            "change": r.verdict.change().map(|c| c.as_str()),
            "replacements": r.replacements,
            "merged": r.merged.as_ref().map(|m| {
                let lines = m.lines.map(|l| json!({"seen": [l.seen.0, l.seen.1], "now": [l.now.0, l.now.1]}));
                json!({"diff": m.diff, "writer": m.writer, "lines": lines})
            }),
        });
        let key = match req.change {
            Change::Edit(_) => "edit",
            Change::Write(_) => "write",
        };
        if !r.verdict.allowed() {
            // The line fsview-edit and fsview-write print for a refusal.
            let p = common::shown(&req.path);
            // The Edit rules point a whole-file change to the command-line
            // tool; here it is the write tool. The message keeps its line
            // breaks (the command line escapes them to stay on one line).
            let msg = r.message.replace("use fsview-write", "use the write tool");
            let line = match r.verdict.change() {
                Some(c) => format!("{p}: modified ({}): {msg}", c.as_str()),
                None => format!("{p}: {}: {msg}", r.verdict.as_str()),
            };
            return Answer::error(line).meta(key, meta);
        }
        let mut text = format!("{}\n", r.message);
        let mut cut = 0;
        if let Some(diff) = r.diff.as_deref().filter(|d| !d.is_empty()) {
            text.push('\n');
            let (shown, left_out) = capped_diff(diff);
            text.push_str(&shown);
            cut = left_out;
        }
        let mut meta = meta;
        meta["diff_truncated"] = cut.into();
        for n in &r.notices {
            text.push_str(&format!("Note: {n}\n"));
        }
        if let Some(e) = &r.unrecorded {
            // The file holds the change: not an error for the model, which
            // must only read it before its next edit.
            text.push_str(&format!("Note: {}\n", e.message()));
        }
        Answer::ok(text).meta(key, meta)
    }

    fn changed(&self, store: &Store, sid: &str) -> Result<(Answer, Vec<Reminder>), Error> {
        let found = changes::changed(store, sid, Path::new(ABSOLUTE), LIMITS)?;
        // Listed now, so not news for the next call: what the reminders
        // would tell is recorded as told once this answer is delivered.
        let told = if self.news {
            self.claim(remind::select(store, sid, Path::new(ABSOLUTE), LIMITS)?)
        } else {
            Vec::new()
        };
        let mut text = String::new();
        if found.is_empty() {
            text.push_str("No file you have seen has changed since you saw it.\n");
        } else {
            text.push_str(remind::HEADER);
            text.push_str("\n\n");
        }
        for c in &found {
            text.push_str(&changes::listing(
                &quote(&c.record.path),
                c.change,
                changes::by_writer(c.writer.as_deref(), c.note.as_deref()).as_deref(),
                c.diff.as_deref(),
            ));
        }
        let files: Vec<Value> = found
            .iter()
            .map(|c| {
                json!({
                    "path": c.record.path.to_string_lossy(),
                    "change": c.change.as_str(),
                    "note": c.note,
                    "writer": c.writer,
                    "truncated": c.truncated,
                })
            })
            .collect();
        Ok((Answer::ok(text).meta("changed", Value::Array(files)), told))
    }

    /// ctx-build, run as a shell would run it (it has no library entry
    /// point), in DIR, on this session.
    fn context(&self, for_path: Option<&Path>) -> Answer {
        let mut c = Command::new(&self.ctx_build);
        c.current_dir(&self.dir)
            .arg("--session")
            .arg(&self.session_file)
            .arg("--sid")
            .arg(&self.session.session_id);
        if let Some(a) = &self.session.agent {
            c.arg("--agent").arg(a);
        }
        for name in &self.also {
            c.arg("--also").arg(name);
        }
        if let Some(p) = for_path {
            c.arg("--json").arg("--for").arg(p);
        }
        let out = match c
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                return Answer::error(format!(
                    "cannot run {}: {}; install fsview-mcp next to the other fsview binaries",
                    quote(&self.ctx_build),
                    plain_io(&e)
                ))
            }
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            let first = stderr.lines().next().unwrap_or("").trim();
            return Answer::error(if first.is_empty() {
                format!("ctx-build failed ({})", out.status)
            } else {
                first.to_string()
            });
        }
        let stdout = String::from_utf8_lossy(&out.stdout);
        let (mut text, cache) = match for_path {
            None => (stdout.into_owned(), None),
            Some(p) => {
                let v: Value = match serde_json::from_str(&stdout) {
                    Ok(v) => v,
                    Err(e) => return Answer::error(format!("ctx-build --json gave no JSON ({e})")),
                };
                let nested: String = v["blocks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["where"] == "attachment")
                    .filter_map(|b| b["text"].as_str())
                    .collect();
                let text = if nested.is_empty() {
                    format!(
                        "No instruction files or rules for {} beyond those already given.\n",
                        quote(p)
                    )
                } else {
                    nested
                };
                (text, v["cache"].as_str().map(String::from))
            }
        };
        let notes: Vec<&str> = stderr
            .lines()
            .map(|l| l.strip_prefix("ctx-build: ").unwrap_or(l))
            .filter(|l| !l.trim().is_empty())
            .collect();
        if !notes.is_empty() {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push('\n');
            for n in notes {
                text.push_str(&format!("Note: {n}\n"));
            }
        }
        Answer::ok(text).meta(
            "context",
            json!({
                "for_path": for_path.map(|p| p.to_string_lossy().into_owned()),
                "cache": cache,
            }),
        )
    }
}

/// A read's failure, in fsview-read's words.
fn read_error(path: &Path, e: ReadError) -> Error {
    let p = quote(path);
    match e {
        ReadError::NotAFile(ft) => Error::new(format!(
            "{p} is {}; read shows regular files only",
            ft.describe()
        )),
        ReadError::Binary => Error::new(format!(
            "{p} looks binary (a NUL byte in its first 8 KiB); read shows text files only"
        )),
        ReadError::Io(e) => Error::io("read", path, &e),
    }
}

/// The most lines one read shows: the fewest a client seen passes on
/// whole in one result (opencode 1.18.33 and Kilo 7.7.9 cut an MCP tool's
/// result past 2,000 lines, after the server sent it).
const MAX_LINES: u64 = 2_000;

/// How much of the client's room `text` takes, at most, as the clients
/// seen count it: its UTF-8 bytes (opencode and Kilo cut an MCP result
/// past 51,200 bytes), and again each character JSON escapes (Claude Code
/// 2.1.332 measures a result's content as JSON, and past 50,000
/// characters saves it to a file and shows the model a 2 KB preview). A
/// character counts no more in UTF-16 units than in UTF-8 bytes.
fn counted(text: &str) -> usize {
    text.len()
        + text
            .bytes()
            .map(|b| match b {
                b'\n' | b'\t' | b'\r' | b'"' | b'\\' | 0x08 | 0x0c => 1,
                0..=0x1f => 5,
                _ => 0,
            })
            .sum::<usize>()
}

/// When the numbered lines of `shown` would take more than `cap` of the
/// client's room ([`counted`]) or pass [`MAX_LINES`]: the bytes of the
/// file to read instead, the whole lines that fit (of a single line too
/// long, its start that fits). `None` when it fits.
fn fitting(shown: &Shown, cap: u64) -> Option<u64> {
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut used = 0;
    let mut kept = 0;
    for (n, line) in (shown.offset..).zip(shown.bytes.split_inclusive(|&b| b == b'\n')) {
        let numbered = show::number_lines(line, n);
        let this = counted(&numbered);
        if used + this > cap || n - shown.offset >= MAX_LINES {
            let fit = match kept {
                // Not even the first line: its start, as much less as it
                // was over (each byte left out counts one or more).
                0 => line.len().saturating_sub(this.saturating_sub(cap)).max(1),
                k => k,
            };
            return Some(fit as u64);
        }
        used += this;
        kept += line.len();
    }
    None
}

/// What the model should know about a read beyond its lines, in the words
/// of fsview-read's notices, with the tool's arguments for its options.
fn notices(s: &Shown, req: &show::Request, cap: u64) -> Vec<String> {
    let of = |total: Option<u64>| total.map(|t| format!(" of {t}")).unwrap_or_default();
    s.notices(req)
        .into_iter()
        .map(|n| match n {
            Notice::Empty => "the file exists but is empty.".to_string(),
            Notice::PastEnd { offset, total: Some(t) } => format!(
                "the file exists but is shorter than the provided offset ({offset}); the file has {t} lines."
            ),
            Notice::PastEnd { offset, total: None } => {
                format!("the file exists but has fewer than {offset} lines.")
            }
            Notice::CutLine { line } => format!(
                "line {line} is longer than {cap} bytes, the most one read shows; only its start was shown."
            ),
            Notice::Capped { first, last, total, range, next } => format!(
                "showing lines {first}-{last}{}: {} is longer than one read shows ({cap} bytes as a client counts them, or 2,000 lines); read on with offset {next}.",
                of(total),
                if range { "the range" } else { "the file" },
            ),
            Notice::NotUtf8 => {
                "the file is not valid UTF-8: invalid bytes are shown as U+FFFD.".to_string()
            }
        })
        .collect()
}
