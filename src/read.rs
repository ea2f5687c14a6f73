//! fsview-read: show a file numbered as an agent's Read tool does, and
//! record what was shown as a view in the session, with an event in its
//! log in the same transaction. A view is recorded once its output has been
//! written out in full: a closed pipe (`| head`) or an interrupt while
//! writing leaves no view of text that never reached the reader.

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use serde::Deserialize;
use serde_json::Value;

use fsview_store::error::quote;
use fsview_store::events::Event;
use fsview_store::fingerprint::{self, Fingerprint};
use fsview_store::paths::{self, Resolved};
use fsview_store::show::{self, Notice, ReadError, Request, Shown};
use fsview_store::store::NewView;
use fsview_store::{Error, Kind, Source, Store};

use crate::common::{self, Out, Outcome, SessionArgs, Stop};
use crate::{json, usage};

const TOOL: &str = "fsview-read";

/// What an unchanged re-read prints with --stub.
pub const UNCHANGED_STUB: &str = "File unchanged since last read. The content from the earlier read in this conversation is still current; refer to that instead of re-reading.";

/// Texts up to this size are kept with a --written view, for later diffs.
const WRITTEN_KEEP: u64 = 8 * 1024 * 1024;

const EXAMPLES: &str = "\
Examples:
  fsview-read src/main.rs                       show a file, record a full view
  fsview-read --offset 100 --limit 50 app.log   lines 100-149, a range view
  fsview-read --stub src/main.rs                a short stub if unchanged since the last read
  fsview-read --json a.rs b.rs | jq .kind       JSON Lines, one object per file
  fsview-read --written src/main.rs             after the agent wrote it: a full view, source write
  fsview-read --written --content - a.rs < written.txt
                                                the same, held to the text the agent wrote
  strip-comments CLAUDE.md | fsview-read --processed CLAUDE.md
                                                record what a pipeline injected
  printf '{\"path\":\"a.rs\",\"limit\":5}\\n' | fsview-read --requests";

/// Show files numbered as an agent's Read tool does, and record the views.
///
/// Prints each line as `N<TAB>line`, numbered from 1 (or from --offset), and
/// once that output is written out in full, records in the session what was
/// shown (a closed pipe or an interrupt records nothing): a `full` view of the whole file, a
/// `range` view of an --offset/--limit slice, or a `start` view when the
/// whole file was asked for but the cap cut it (an empty file: `full`, read
/// from any line; an offset past the end shows nothing and records
/// nothing). Directories, FIFOs, devices,
/// sockets and binary files are refused, never waited on. Notices (capped
/// output, an empty file, an offset past the end, text that is not UTF-8) go
/// to stderr, and into `notices` with --json.
#[derive(Parser, Debug)]
#[command(name = TOOL, version, after_help = EXAMPLES)]
pub struct Args {
    /// Files to show (with --requests, none: requests come on stdin)
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// First line to show, 1-based
    #[arg(short = 'o', long, value_name = "N", value_parser = usage::line_number)]
    pub offset: Option<u64>,

    /// Number of lines to show
    #[arg(short = 'n', long, value_name = "N", value_parser = usage::at_least_one)]
    pub limit: Option<u64>,

    /// Most bytes of a file to show (suffixes K, M, G); a whole-file read
    /// over it shows the start and records a `start` view
    #[arg(long, value_name = "SIZE", default_value = "256K", env = "FSVIEW_READ_CAP", value_parser = common::parse_size)]
    pub cap: u64,

    /// When this conversation was shown the same view of the same content
    /// before, print a short stub instead of the content (not for views
    /// copied by `fsview-session fork` or `import`: it never saw those)
    #[arg(long)]
    pub stub: bool,

    /// Record the agent's own write of each PATH as a `full` view (source
    /// `write`), printing nothing, so its next edit needs no re-read
    #[arg(long, conflicts_with_all = ["offset", "limit", "stub", "processed", "requests"])]
    pub written: bool,

    /// With --written: the text the agent wrote (a file, or `-` for stdin;
    /// one PATH). If the disk no longer holds it (a formatter already ran),
    /// that text is recorded, so the next check reports the rewrite
    #[arg(long, value_name = "FILE", requires = "written")]
    pub content: Option<PathBuf>,

    /// Record the text on stdin as a `processed` view of PATH (what a
    /// pipeline injected instead of the disk text), printing nothing
    #[arg(long, conflicts_with_all = ["offset", "limit", "stub", "requests"])]
    pub processed: bool,

    /// Read requests as JSON Lines on stdin:
    /// {"path": "a.rs", "offset": 10, "limit": 5} (offset and limit optional);
    /// a malformed line is named on stderr (exit 2) and the good ones are
    /// still done
    #[arg(long)]
    pub requests: bool,

    #[command(flatten)]
    pub common: SessionArgs,
}

pub fn command() -> clap::Command {
    Args::command()
}

pub fn main() -> u8 {
    let args: Args = common::parse(command);
    common::finish(TOOL, run(&args))
}

/// One thing to show.
struct Job {
    path: PathBuf,
    req: Request,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestLine {
    path: PathBuf,
    offset: Option<u64>,
    limit: Option<u64>,
}

fn run(args: &Args) -> Result<Outcome, Stop> {
    let cwd = common::current_dir()?;
    let mut out = Out::new(TOOL, args.common.quiet);
    if args.paths.iter().any(|p| p.as_os_str() == "-") {
        // `-` is no file name here: fsview-read shows files, and what it
        // reads on stdin are JSON requests (or --processed text).
        return Err(Error::new(
            "`-` is not a file to show; to send what to read on stdin use --requests (JSON Lines: {\"path\": \"a.rs\"}), or name a file called - as ./-",
        )
        .into());
    }
    if args.processed {
        return run_processed(args, &cwd, &mut out);
    }
    let mut outcome = Outcome::Ok;
    let jobs = if args.requests {
        if !args.paths.is_empty() {
            return Err(
                Error::new("--requests reads paths from stdin; give no PATH arguments").into(),
            );
        }
        let (jobs, bad) = read_requests(args, &mut out)?;
        outcome = outcome.worst(bad);
        jobs
    } else {
        if args.paths.is_empty() {
            return Err(Error::new("no file given; name one or more PATHs (see --help)").into());
        }
        let req = Request {
            offset: args.offset,
            limit: args.limit,
            cap: args.cap,
        };
        args.paths
            .iter()
            .map(|p| Job {
                path: p.clone(),
                req,
            })
            .collect()
    };
    if args.content.is_some() && jobs.len() != 1 {
        return Err(Error::new(
            "--content is the text written to one file: give exactly one PATH with --written --content",
        )
        .into());
    }
    let store = args.common.open(&cwd, TOOL)?;
    let many = jobs.len() > 1;
    for (i, job) in jobs.iter().enumerate() {
        let result = if args.written {
            written(args, &store, &cwd, &job.path, &mut out)
        } else {
            show_one(args, &store, &cwd, job, many && i > 0, many, &mut out)
        };
        match result {
            Ok(()) => {}
            Err(Stop::Error(e)) => {
                outcome = Outcome::Error;
                if args.common.json {
                    out.json(&json::error(Some(&job.path), e.message()))?;
                }
                out.error(e.message());
            }
            Err(stop) => return Err(stop),
        }
    }
    out.flush()?;
    Ok(outcome)
}

fn read_requests(args: &Args, out: &mut Out) -> Result<(Vec<Job>, Outcome), Stop> {
    let input = common::stdin_text(
        "the --requests JSON Lines",
        "pipe them in: printf '{\"path\":\"a.rs\"}\\n' | fsview-read --requests",
    )?;
    let mut jobs = Vec::new();
    let mut outcome = Outcome::Ok;
    for (n, line) in input.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<RequestLine>(line) {
            Ok(r) if r.offset == Some(0) || r.limit == Some(0) => {
                outcome = Outcome::Error;
                let msg = format!("stdin line {}: offset and limit start at 1", n + 1);
                if args.common.json {
                    out.json(&json::error(Some(&r.path), &msg))?;
                }
                out.error(&msg);
            }
            Ok(r) => jobs.push(Job {
                path: r.path,
                req: Request {
                    offset: r.offset,
                    limit: r.limit,
                    cap: args.cap,
                },
            }),
            Err(e) => {
                outcome = Outcome::Error;
                let msg = format!(
                    "stdin line {}: {e}; each line must be an object like {{\"path\":\"a.rs\",\"offset\":1,\"limit\":50}}",
                    n + 1
                );
                if args.common.json {
                    out.json(&json::error(None, &msg))?;
                }
                out.error(&msg);
            }
        }
    }
    Ok((jobs, outcome))
}

/// Resolve `path` to an existing regular file.
fn existing(cwd: &Path, path: &Path) -> Result<PathBuf, Error> {
    match paths::resolve(cwd, path)? {
        Resolved::Existing { canonical, .. } => Ok(canonical),
        Resolved::Missing { .. } => Err(Error::new(format!(
            "{}: no such file; check the path",
            quote(path)
        ))),
    }
}

fn read_error(path: &Path, e: ReadError) -> Error {
    let p = quote(path);
    match e {
        ReadError::NotAFile(ft) => Error::new(format!(
            "{p} is {}; fsview-read shows regular files only",
            ft.describe()
        )),
        ReadError::Binary => Error::new(format!(
            "{p} looks binary (a NUL byte in its first 8 KiB); fsview-read shows text files only"
        )),
        ReadError::Io(e) => Error::io("read", path, &e),
    }
}

#[allow(clippy::too_many_arguments)]
fn show_one(
    args: &Args,
    store: &Store,
    cwd: &Path,
    job: &Job,
    gap: bool,
    header: bool,
    out: &mut Out,
) -> Result<(), Stop> {
    let canonical = existing(cwd, &job.path)?;
    let sid = args.common.sid();
    // One snapshot of the session for what it knows of the file (a re-read
    // of the same bytes takes their SHA-256 from it) and whether this is a
    // re-read.
    store.begin_read()?;
    let looked = look(store, &sid, &canonical, job);
    store.end_read();
    let (shown, unchanged) = looked?;
    let view = NewView::of_shown(&canonical, &shown, Source::Read);
    let notices = notices(&shown, &job.req, args.cap);
    let stub = args.stub && unchanged;
    if args.common.json {
        let content = if stub {
            format!("{UNCHANGED_STUB}\n")
        } else {
            shown.numbered()
        };
        let mut m = json::object("read");
        json::put_path(&mut m, "path", &job.path);
        json::put_path(&mut m, "canonical", &canonical);
        m.insert("kind".into(), shown.kind.as_str().into());
        m.insert("source".into(), Source::Read.as_str().into());
        m.insert("offset".into(), shown.offset.into());
        m.insert("lines".into(), shown.lines.into());
        m.insert("total_lines".into(), shown.total_lines.into());
        m.insert("unchanged".into(), unchanged.into());
        m.insert(
            "sha256".into(),
            shown.fingerprint.hash.as_ref().map(fingerprint::hex).into(),
        );
        m.insert("content".into(), content.into());
        m.insert("notices".into(), notices.clone().into());
        out.json(&Value::Object(m))?;
    } else {
        if gap {
            out.write("\n")?;
        }
        if header {
            out.write(&format!("==> {} <==\n", common::shown(&job.path)))?;
        }
        if stub {
            out.write(&format!("{UNCHANGED_STUB}\n"))?;
        } else {
            // Numbered as it is written out, not built first.
            shown.write_numbered(out.writer())?;
        }
    }
    out.flush()?;
    if shown.shows_nothing() {
        // Nothing shown, nothing seen: no view (a targeted edit of it
        // then asks for a read).
        for n in notices {
            out.notice(&format!("{}: {n}", common::shown(&job.path)));
        }
        return Ok(());
    }
    store.record_logged(&args.common.sid(), &view, |r| {
        let e = Event::new(TOOL, "read")
            .path(&canonical)
            .detail(Some(shown.kind.as_str()));
        if r.unchanged {
            e.verdict("unchanged")
        } else {
            e
        }
    })?;
    for n in notices {
        out.notice(&format!("{}: {n}", common::shown(&job.path)));
    }
    Ok(())
}

/// Read `canonical` as `job` asks, and whether the session recorded the
/// same view of the same content before. A view is recorded only once its
/// output is out in full (see [`show_one`]): a closed pipe or an interrupt
/// leaves no view of text nobody received. Whether it is a re-read shapes
/// that output, so it is asked first.
fn look(store: &Store, sid: &str, canonical: &Path, job: &Job) -> Result<(Shown, bool), Stop> {
    let old = store.file_by_path(sid, canonical)?;
    let known = old.as_ref().and_then(|r| show::Known::of(&r.fingerprint));
    let shown =
        show::read_known(canonical, &job.req, known).map_err(|e| read_error(&job.path, e))?;
    let unchanged = store.seen_in(
        old.as_ref(),
        &NewView::of_shown(canonical, &shown, Source::Read),
    )?;
    Ok((shown, unchanged))
}

/// The notices a read deserves, in the words the agent will see.
fn notices(s: &Shown, req: &Request, cap: u64) -> Vec<String> {
    let of = |total: Option<u64>| total.map(|t| format!(" of {t}")).unwrap_or_default();
    s.notices(req)
        .into_iter()
        .map(|n| match n {
            Notice::Empty => "the file exists but is empty".to_string(),
            Notice::PastEnd { offset, total: Some(t) } => format!(
                "the file exists but is shorter than the provided offset ({offset}); the file has {t} lines"
            ),
            Notice::PastEnd { offset, total: None } => {
                format!("the file exists but has fewer than {offset} lines")
            }
            Notice::CutLine { line } => format!(
                "line {line} is longer than the cap of {cap} bytes and was cut; raise --cap to see all of it"
            ),
            Notice::Capped { first, last, total, range, next } => format!(
                "showing lines {first}-{last}{}: {} is over the cap of {cap} bytes; read on with --offset {next} (or raise --cap)",
                of(total),
                if range { "the range" } else { "the file" },
            ),
            Notice::NotUtf8 => "not valid UTF-8: invalid bytes are shown as U+FFFD".to_string(),
        })
        .collect()
}

/// Record the agent's own write: a full view of what is on disk now.
fn written(args: &Args, store: &Store, cwd: &Path, path: &Path, out: &mut Out) -> Result<(), Stop> {
    let canonical = existing(cwd, path)?;
    let mut written =
        show::read_written(&canonical, WRITTEN_KEEP).map_err(|e| read_error(path, e))?;
    let rewritten = match &args.content {
        Some(source) => written.hold_to(&agent_text(source)?, WRITTEN_KEEP),
        None => false,
    };
    store.record_logged(
        &args.common.sid(),
        &NewView::of_written(&canonical, &written),
        |_| {
            let e = Event::new(TOOL, "written")
                .path(&canonical)
                .detail(Some(Kind::Full.as_str()));
            if rewritten {
                e.verdict("rewritten")
            } else {
                e
            }
        },
    )?;
    if rewritten {
        out.notice(&format!(
            "{}: the file no longer holds what was written (rewritten since?); recorded what was written, so the next check reports the change",
            common::shown(path)
        ));
    }
    if args.common.json {
        let mut m = json::object("record");
        json::put_path(&mut m, "path", path);
        json::put_path(&mut m, "canonical", &canonical);
        m.insert("kind".into(), Kind::Full.as_str().into());
        m.insert("source".into(), Source::Write.as_str().into());
        m.insert("lines".into(), written.lines.into());
        m.insert(
            "sha256".into(),
            written
                .fingerprint
                .hash
                .as_ref()
                .map(fingerprint::hex)
                .into(),
        );
        m.insert("rewritten".into(), rewritten.into());
        out.json(&Value::Object(m))?;
    }
    Ok(())
}

/// The text the agent wrote, from `--content FILE` or stdin (`-`).
fn agent_text(source: &Path) -> Result<Vec<u8>, Error> {
    if source.as_os_str() == "-" {
        return common::stdin_bytes(
            "the written text (--content -)",
            "pipe it in (fsview-read --written --content - a.rs < written.txt), or give --content FILE",
        );
    }
    std::fs::read(source).map_err(|e| Error::io("read --content", source, &e))
}

/// Record stdin as a processed view of the one PATH.
fn run_processed(args: &Args, cwd: &Path, out: &mut Out) -> Result<Outcome, Stop> {
    let [path] = args.paths.as_slice() else {
        return Err(Error::new(
            "--processed records one file: give exactly one PATH and its injected text on stdin",
        )
        .into());
    };
    let canonical = existing(cwd, path)?;
    let text = common::stdin_bytes(
        "the processed text --processed records",
        "pipe in what was injected: strip-comments CLAUDE.md | fsview-read --processed CLAUDE.md",
    )?;
    let taken_ns = fingerprint::now_ns();
    let (hash, stat) =
        fingerprint::hash_path(&canonical).map_err(|e| Error::io("read", path, &e))?;
    let fp = Fingerprint {
        stat,
        taken_ns,
        hash: Some(hash),
        quick: None,
    };
    // Text identical to the disk is no processing at all.
    let kind = if fingerprint::hash_bytes(&text) == hash {
        Kind::Full
    } else {
        Kind::Processed
    };
    let lines = show::count_lines(&text);
    let store = args.common.open(cwd, TOOL)?;
    store.record_logged(
        &args.common.sid(),
        &NewView {
            path: &canonical,
            fingerprint: &fp,
            kind,
            source: Source::Inject,
            offset: 1,
            lines,
            total_lines: None,
            shown: &text,
            keep_text: true,
            origin: None,
            conversation: None,
        },
        |_| {
            Event::new(TOOL, "processed")
                .path(&canonical)
                .detail(Some(kind.as_str()))
        },
    )?;
    if args.common.json {
        let mut m = json::object("record");
        json::put_path(&mut m, "path", path);
        json::put_path(&mut m, "canonical", &canonical);
        m.insert("kind".into(), kind.as_str().into());
        m.insert("source".into(), Source::Inject.as_str().into());
        m.insert("lines".into(), lines.into());
        out.json(&Value::Object(m))?;
        out.flush()?;
    }
    Ok(Outcome::Ok)
}
