//! ctx-build: the session's fixed context, built once and then returned
//! byte for byte.
//!
//! The first call builds the system part (git facts, and the injection set
//! by ctx-invalidate) and the user part (instruction files and the date)
//! with fsview-context, and stores both in the session together with the
//! views of every injected file, in one transaction. Later calls return the
//! same bytes (`"cache": "hit"`) without running git or reading an
//! instruction file, until ctx-invalidate clears a part; if a file the
//! stored part was built from has changed since, they say so on stderr.
//! Two builds racing on a cold cache agree: the first one stored wins and
//! the other returns its bytes.
//!
//! What is stored is what the context is made of (the git facts, the
//! injection, each file's injected text, the date), not one rendering of
//! it: the bytes are rendered at print time in the layout `--layout` names,
//! deterministically, so every layout of one memo is byte-stable and
//! switching layouts needs no rebuild. A memo stored by an older ctx-build
//! (rendered text) is rebuilt once, with a notice.
//!
//! `--for PATH...` adds the lazy half: nested instruction files and
//! conditional rules for those paths that the session has not been given
//! yet, as a separate block that is not part of the memo, each file given
//! once per session.

use std::collections::HashSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};
use serde_json::{json, Map, Value};

use fsview_context::render::{self, FileText, Parts};
use fsview_context::{
    self as context, GitFacts, InjectedFile, Layout, Options, Origin, UserContext,
};
use fsview_store::events::Event;
use fsview_store::fingerprint::{self, FileType, Fingerprint, Freshness, Stat};
use fsview_store::memo::{self, Build, Memo, NewPart, Part, Stored};
use fsview_store::show;
use fsview_store::store::NewView;
use fsview_store::{paths, Error, Kind, Source, Store};

use crate::common::{self, Out, Outcome, SessionArgs, Stop};
use crate::json;

const TOOL: &str = "ctx-build";

/// How often a build is redone when an invalidation keeps landing while it
/// runs, before it is returned unstored.
const ATTEMPTS: usize = 3;

/// The version of what a memo part's body holds: the parts as JSON. Bodies
/// without it are an older ctx-build's rendered text.
const FORMAT: u64 = 2;

const EXAMPLES: &str = "\
Examples:
  ctx-build                                  the context as text, as Claude Code 2.1.332 lays it out
  ctx-build --layout 2.1.88                  as Claude Code 2.1.88 laid it out: system part, then user part
  ctx-build --json | jq -r .cache            miss on the first call, hit after it
  ctx-build --json | jq -r '.blocks[] | select(.where == \"user\") | .text'
                                             the blocks of the first user message
  ctx-build --json | jq -r .system           the 2.1.88 system part (gitStatus line), whatever --layout
  ctx-build --for packages/api/src/server.ts nested CLAUDE.md files and matching rules, once each
  ctx-build --also AGENTS.md --also GEMINI.md
                                             read other instruction file names too
  ctx-build --memory ~/.claude/projects/p/memory/MEMORY.md
                                             add the auto-memory index (truncated)
  ctx-build --no-cache                       a preview from disk; stores and records nothing
  ctx-invalidate && ctx-build                rebuild after a change

Environment:
  CLAUDE_CONFIG_DIR         user directory (default ~/.claude): CLAUDE.md, rules/**/*.md
  FSVIEW_MANAGED_DIR        managed policy directory (default /etc/claude-code)
  FSVIEW_INSTRUCTION_NAMES  extra instruction file names, comma-separated (as --also)
  SOURCE_DATE_EPOCH         seconds since 1970 fixing \"Today's date\" (in the local zone, TZ)";

/// Build the session's fixed context once, then return the same bytes.
///
/// The context is what Claude Code 2.1.332 gives a conversation, byte for
/// byte (checked against the real binary, see docs/context.md): the git facts
/// (current and default branch, short status cut at 2,000 characters, the
/// last 5 commits, user.name; git runs with --no-optional-locks and without
/// filter drivers), the instruction files in Claude Code's order (managed,
/// user, then CLAUDE.md, .claude/CLAUDE.md, unconditional
/// .claude/rules/**/*.md and CLAUDE.local.md of every directory from the top
/// down to the working directory, then --memory), with @imports followed
/// (inside the working directory, text files only, 4 levels deep), front
/// matter and block HTML comments stripped, and today's date. Every injected
/// file is recorded as a view of the session: `processed` when what was
/// injected differs from the disk, else `full`.
///
/// It is stored in the session: the next ctx-build prints the very same
/// bytes ("cache": "hit") until ctx-invalidate clears a part, even if files
/// changed meanwhile; it then warns on stderr, naming them.
///
/// Text output is the context as an agent prepends it, in the layout of
/// --layout: 2.1.332 (default) gives the instructions reminder and the git
/// reminder (the first user message's blocks), then the date sentence (the
/// end of the system text); 2.1.88 gives the system part (gitStatus line), a
/// blank line, then the user reminder (instructions and date). --json gives
/// one object: `layout`; `blocks`, the context in that layout, each block
/// with `part`, `where` (system, user or attachment) and `text`; `system` and
/// `user`, the parts as Claude Code 2.1.88 placed them whatever --layout
/// says, so scripts that assemble their own text are unaffected; `nested`,
/// `files` (path, source, kind, label, origin, bytes, injected_bytes,
/// text, imported_by, part), `cache` and `warnings`. On a hit, stderr repeats only
/// what is new (changed files, other options); `warnings` holds all.
///
/// --for PATH... returns, after the memoized parts, the instruction files of
/// the directories below the working directory down to each PATH, and the
/// conditional rules (front matter `paths:`) that match a PATH, that this
/// session has not been given yet: one reminder per file, `Contents of
/// PATH:` and its text, as Claude Code attaches them after the tool result
/// that touched PATH (JSON `nested`, and `blocks` with `where: attachment`).
/// They are never part of the memo, and each file is given once per session
/// (until `ctx-invalidate --reset`).
///
/// Where ctx-build differs from Claude Code 2.1.332 on purpose: the
/// injection set with `ctx-invalidate --injection` stays `cacheBreaker:
/// [CACHE_BREAKER: TEXT]` in the system text, as in 2.1.88 (the public build
/// of 2.1.332 sends none); the date is only the sentence (the rest of Claude
/// Code's environment section is its own); a file with a NUL byte in its
/// first 8 KiB is skipped; --also names are fsview's; git status runs with
/// the filter drivers of every configuration scope off (Claude Code: the
/// repository's own); a character straddling the status cut is left out
/// whole; every nested block ends with a line break (Claude Code drops the
/// one after a message's last block); every import not followed is a
/// warning; text output puts the blocks one after another (Claude Code sends
/// separate content blocks, as `blocks` has them). Not reproduced: Claude
/// Code's escaping of its own tags inside a nested file, and its wording for
/// managed files it cannot verify.
#[derive(Parser, Debug)]
#[command(name = TOOL, version, after_help = EXAMPLES)]
pub struct Args {
    /// Files the agent is about to work on: also return their nested
    /// instruction files and matching conditional rules not given yet
    #[arg(long = "for", value_name = "PATH", num_args = 1..)]
    pub for_paths: Vec<PathBuf>,

    /// Where in the conversation the --for files are attached (an agent's
    /// id for it, such as fsview-hook's `prompt:ID`): their views hold as
    /// long as that does, released at a compaction or rewind that drops
    /// it. Without it they are fixed context, never released
    #[arg(long, value_name = "ORIGIN", hide = true, requires = "for_paths")]
    pub origin: Option<String>,

    /// Another instruction file name to read in every directory, after
    /// CLAUDE.md (repeatable; replaces FSVIEW_INSTRUCTION_NAMES)
    #[arg(
        long,
        value_name = "NAME",
        env = "FSVIEW_INSTRUCTION_NAMES",
        value_delimiter = ','
    )]
    pub also: Vec<String>,

    /// Let @imports of project, local and managed files reach files outside
    /// the working directory (Claude Code's approval of external imports;
    /// the user's own files import from anywhere regardless)
    #[arg(long)]
    pub allow_external_imports: bool,

    /// Lay the context out as this Claude Code version did: 2.1.332 (the
    /// current layout) or 2.1.88 (the layout fsview was first built on)
    #[arg(long, value_name = "VERSION", default_value = Layout::default().version(),
          value_parser = clap::builder::PossibleValuesParser::new(Layout::ALL.map(Layout::version)))]
    pub layout: String,

    /// Build from disk now, ignoring the memo; store and record nothing
    #[arg(long)]
    pub no_cache: bool,

    /// The auto-memory index (MEMORY.md), injected last, truncated at 200
    /// lines or 25,000 characters
    #[arg(long, value_name = "FILE")]
    pub memory: Option<PathBuf>,

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

/// Everything a build depends on, fixed before anything is read.
struct Setup {
    cwd: PathBuf,
    opts: Options,
    /// `opts` with the --for paths, for the lazy half.
    for_opts: Option<Options>,
    today: Today,
    /// What the user part was built for; a hit built for something else
    /// warns.
    key: Map<String, Value>,
    warnings: Vec<String>,
}

/// The context as it will be printed.
struct Shown {
    cache_hit: bool,
    /// What the memoized parts are made of.
    git: Option<GitFacts>,
    injection: Option<String>,
    instruction_files: Vec<FileText>,
    date: String,
    /// The files of --for given now.
    nested: Vec<FileText>,
    files: Vec<Value>,
    /// All warnings, for --json.
    warnings: Vec<String>,
    /// The ones this call found, for stderr.
    new_warnings: Vec<String>,
    /// What this call stored as shown, undone when the output does not
    /// reach its reader ([`memo::Store::undo_build`]).
    recorded: Recorded,
}

/// The user part and the files' views a build stored.
#[derive(Default)]
struct Recorded {
    user: bool,
    paths: Vec<PathBuf>,
}

fn run(args: &Args) -> Result<Outcome, Stop> {
    let cwd = common::current_dir()?;
    let setup = setup(args, &cwd)?;
    let mut out = Out::new(TOOL, args.common.quiet);
    if args.no_cache {
        let store = args.common.open_existing(&cwd, TOOL)?;
        let result = preview(args, &setup, store.as_ref())?;
        print(args, &mut out, &result)?;
        if !args.common.json && std::io::stderr().is_terminal() {
            out.notice("previewed the context from disk (--no-cache): nothing stored");
        }
        return Ok(Outcome::Ok);
    }
    let store = args.common.open(&cwd, TOOL)?;
    let result = memoized(args, &setup, &store)?;
    // What was stored as shown holds only once it is out: a reader gone
    // (a closed pipe), or a full disk, got none or part of it. Its views
    // and the files given are taken back, and a user part built now is
    // built again next time, when its views are recorded.
    if let Err(e) = print(args, &mut out, &result) {
        let r = &result.recorded;
        if r.user || !r.paths.is_empty() {
            let paths: Vec<&Path> = r.paths.iter().map(PathBuf::as_path).collect();
            let _ = store.undo_build(&args.common.sid(), r.user, &paths);
        }
        return Err(e);
    }
    // On a terminal, a person cannot tell a build from a reuse by the
    // text, which is the same bytes either way: say which it was. Scripts
    // read `cache` in --json, and their stderr stays as it was.
    if !args.common.json && std::io::stderr().is_terminal() {
        out.notice(if result.cache_hit {
            "reused the context built before (cache hit): the same bytes until ctx-invalidate clears it"
        } else {
            "built the context (cache miss): the next calls return these same bytes until ctx-invalidate clears it"
        });
    }
    Ok(Outcome::Ok)
}

fn setup(args: &Args, cwd: &Path) -> Result<Setup, Error> {
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let today = today()?;
    // An empty item (FSVIEW_INSTRUCTION_NAMES set but empty, `a,,b`, a
    // trailing comma) names nothing, as an empty variable does elsewhere.
    let also: Vec<String> = args
        .also
        .iter()
        .filter(|n| !n.is_empty())
        .cloned()
        .collect();
    for name in &also {
        if name == "." || name == ".." || name.contains('/') {
            return Err(Error::new(format!(
                "--also takes a file name such as AGENTS.md, not {name:?} (check --also and FSVIEW_INSTRUCTION_NAMES)"
            )));
        }
    }
    let mut warnings = Vec::new();
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let user_dir = match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(d) => cwd.join(d),
        None => match &home {
            Some(h) => h.join(".claude"),
            None => {
                warnings.push(
                    "neither CLAUDE_CONFIG_DIR nor HOME is set; no user instruction files"
                        .to_string(),
                );
                PathBuf::from("/nonexistent/.claude")
            }
        },
    };
    let managed_dir = std::env::var_os("FSVIEW_MANAGED_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| cwd.join(d))
        .unwrap_or_else(|| PathBuf::from("/etc/claude-code"));
    let memory_file = args.memory.as_ref().map(|m| cwd.join(m));
    let opts = Options {
        cwd: cwd.clone(),
        home,
        managed_dir,
        user_dir,
        extra_names: also,
        memory_file,
        allow_external_imports: args.allow_external_imports,
        for_paths: Vec::new(),
    };
    let for_opts = (!args.for_paths.is_empty()).then(|| Options {
        for_paths: args.for_paths.iter().map(|p| cwd.join(p)).collect(),
        ..opts.clone()
    });
    let mut key = Map::new();
    key.insert("cwd".into(), lossy(&opts.cwd).into());
    key.insert("also".into(), opts.extra_names.clone().into());
    key.insert(
        "memory".into(),
        opts.memory_file.as_deref().map(lossy).into(),
    );
    key.insert(
        "allow_external_imports".into(),
        opts.allow_external_imports.into(),
    );
    key.insert("user_dir".into(), lossy(&opts.user_dir).into());
    key.insert("managed_dir".into(), lossy(&opts.managed_dir).into());
    Ok(Setup {
        cwd,
        opts,
        for_opts,
        today,
        key,
        warnings,
    })
}

fn lossy(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Today's date, `YYYY-MM-DD` in the local time zone (TZ, else the
/// system's), as the agent's user sees it; SOURCE_DATE_EPOCH fixes the
/// moment, the zone still applies. The moment is read (and a bad
/// SOURCE_DATE_EPOCH refused) on every call; the zone is looked up only
/// when a build renders the date, so a cache hit never loads it.
fn today() -> Result<Today, Error> {
    let bad = |s: &str| {
        Error::new(format!(
            "SOURCE_DATE_EPOCH={s:?} is not a whole number of seconds since 1970-01-01; fix or unset it"
        ))
    };
    let at = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(s) if !s.is_empty() => {
            let secs = s.trim().parse::<i64>().map_err(|_| bad(&s))?;
            jiff::Timestamp::from_second(secs).map_err(|_| {
                Error::new(format!(
                    "SOURCE_DATE_EPOCH={s:?} is out of range (years -9999 to 9999); fix or unset it"
                ))
            })?
        }
        Err(std::env::VarError::NotUnicode(v)) => {
            return Err(bad(&v.to_string_lossy()));
        }
        _ => jiff::Timestamp::now(),
    };
    Ok(Today {
        at,
        date: std::sync::OnceLock::new(),
    })
}

/// Today's date, rendered on first use (see [`today`]).
struct Today {
    at: jiff::Timestamp,
    date: std::sync::OnceLock<String>,
}

impl std::ops::Deref for Today {
    type Target = str;

    fn deref(&self) -> &str {
        self.date.get_or_init(|| {
            self.at
                .to_zoned(jiff::tz::TimeZone::system())
                .date()
                .to_string()
        })
    }
}

/// What one build produced, before storing.
struct Built {
    system: Option<(String, Value)>,
    user: Option<(String, Value, UserContext)>,
    nested: UserContext,
    taken_ns: i64,
}

/// Build the parts `memo` lacks, and the nested files not in `loaded`.
fn build(setup: &Setup, memo: &Memo, loaded: &HashSet<PathBuf>) -> Built {
    let taken_ns = fingerprint::now_ns();
    let need_system = memo.system.is_none();
    let need_user = memo.user.is_none();
    let (system, user) = std::thread::scope(|s| {
        let system = need_system.then(|| s.spawn(|| context::system_context(&setup.cwd)));
        let user = need_user.then(|| context::user_context(&setup.opts));
        let system = system.map(|h| h.join().unwrap_or_default());
        (system, user)
    });
    let system = system.map(|sys| {
        let body = json!({
            "format": FORMAT,
            "git": sys.git.as_ref().map(git_json),
            "injection": memo.injection,
        })
        .to_string();
        let meta =
            json!({"format": FORMAT, "key": {"cwd": lossy(&setup.cwd)}, "warnings": sys.warnings});
        (body, meta)
    });
    let user = user.map(|mut ctx| {
        ctx.warnings.splice(0..0, setup.warnings.iter().cloned());
        let files: Vec<Value> = ctx
            .files
            .iter()
            .map(|f| file_text_json(&FileText::from(f)))
            .collect();
        let body = json!({"format": FORMAT, "date": &*setup.today, "files": files}).to_string();
        let files: Vec<Value> = ctx
            .files
            .iter()
            .map(|f| {
                let mut m = file_json(f, "user");
                m.insert("fp".into(), fp_json(&fingerprint_of(f, taken_ns)));
                Value::Object(m)
            })
            .collect();
        let meta =
            json!({"format": FORMAT, "key": setup.key, "files": files, "warnings": ctx.warnings});
        (body, meta, ctx)
    });
    let nested = match &setup.for_opts {
        Some(o) => {
            let mut loaded = loaded.clone();
            if let Some((_, _, ctx)) = &user {
                loaded.extend(ctx.files.iter().map(|f| f.path.clone()));
            }
            let mut nested = context::nested_for(o, &loaded);
            // What trims to nothing is never shown: not given, no view.
            nested.files.retain(|f| !shown_text(f).is_empty());
            nested
        }
        None => UserContext::default(),
    };
    Built {
        system,
        user,
        nested,
        taken_ns,
    }
}

/// The memoized context; a memo an older ctx-build stored (rendered text,
/// not the parts) is cleared first and built again.
fn memoized(args: &Args, setup: &Setup, store: &Store) -> Result<Shown, Stop> {
    let sid = &args.common.sid();
    let memo = store.memo(sid)?;
    let legacy = memo::Parts {
        system: memo.system.as_ref().is_some_and(is_legacy),
        user: memo.user.as_ref().is_some_and(is_legacy),
    };
    if !(legacy.system || legacy.user) {
        return memoized_build(args, setup, store, Some(memo));
    }
    store.invalidate(sid, legacy, Some("stored by an older ctx-build"))?;
    let mut r = memoized_build(args, setup, store, None)?;
    let note =
        "the session's cached context was stored by an older ctx-build; built it again".to_string();
    r.warnings.push(note.clone());
    r.new_warnings.push(note);
    Ok(r)
}

/// Whether a stored part is an older ctx-build's rendered text.
fn is_legacy(part: &Part) -> bool {
    serde_json::from_str::<Value>(&part.body)
        .ok()
        .and_then(|v| v.get("format").and_then(Value::as_u64))
        != Some(FORMAT)
}

fn memoized_build(
    args: &Args,
    setup: &Setup,
    store: &Store,
    memo: Option<Memo>,
) -> Result<Shown, Stop> {
    let sid = &args.common.sid();
    let for_detail = (!args.for_paths.is_empty()).then(|| match args.for_paths.len() {
        1 => "for 1 path".to_string(),
        n => format!("for {n} paths"),
    });
    let event = |verdict: &'static str| {
        Event::new(TOOL, "build")
            .verdict(verdict)
            .detail(for_detail.as_deref())
    };
    // A hit stores nothing, so its event is a write of its own, made only
    // when it is news (a run of hits is logged once); the context is the
    // answer, and a log that cannot be written does not change it.
    let log_hit = || {
        let _ = store.log_once(sid, &event("hit"));
    };
    if let (None, Some(memo)) = (&setup.for_opts, memo) {
        // The common case, kept short: one read, no build.
        if memo.system.is_some() && memo.user.is_some() {
            log_hit();
            return Ok(hit(setup, &memo, Vec::new()));
        }
    }
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let memo = store.memo_for_build(sid)?;
        let loaded = if setup.for_opts.is_some() {
            store.nested(sid)?
        } else {
            HashSet::new()
        };
        let built = build(setup, &memo, &loaded);
        if built.system.is_none() && built.user.is_none() && built.nested.files.is_empty() {
            log_hit();
            return Ok(hit(setup, &memo, built.nested.warnings));
        }
        let user_fps: Vec<Fingerprint> = built
            .user
            .iter()
            .flat_map(|(_, _, ctx)| ctx.files.iter())
            .map(|f| fingerprint_of(f, built.taken_ns))
            .collect();
        let nested_fps: Vec<Fingerprint> = built
            .nested
            .files
            .iter()
            .map(|f| fingerprint_of(f, built.taken_ns))
            .collect();
        // A file whose text trims to nothing is not shown at all: no view.
        let user_views: Vec<NewView<'_>> = built
            .user
            .iter()
            .flat_map(|(_, _, ctx)| ctx.files.iter())
            .zip(&user_fps)
            .filter(|(f, _)| !shown_text(f).is_empty())
            .map(|(f, fp)| view_of(f, fp))
            .collect();
        let nested_views: Vec<NewView<'_>> = built
            .nested
            .files
            .iter()
            .zip(&nested_fps)
            .map(|(f, fp)| view_of(f, fp).with_origin(args.origin.as_deref()))
            .collect();
        let system_meta = built.system.as_ref().map(|(_, m)| m.to_string());
        let user_meta = built.user.as_ref().map(|(_, m, _)| m.to_string());
        let b = Build {
            generation: Some(memo.generation),
            system: built.system.as_ref().map(|(body, _)| NewPart {
                body,
                meta: system_meta.as_deref().unwrap_or("{}"),
            }),
            user: built.user.as_ref().map(|(body, _, _)| NewPart {
                body,
                meta: user_meta.as_deref().unwrap_or("{}"),
            }),
            user_views: &user_views,
            nested_views: &nested_views,
            event: Some(event(if built.system.is_none() && built.user.is_none() {
                "hit"
            } else {
                "miss"
            })),
        };
        match store.store_build(sid, &b)? {
            Stored::Outdated => {
                last = Some((memo, built));
                continue;
            }
            Stored::Done {
                system,
                user,
                nested_new,
            } => {
                let cache_hit = built.system.is_none() && built.user.is_none();
                let nested_files: Vec<&InjectedFile> = built
                    .nested
                    .files
                    .iter()
                    .zip(&nested_new)
                    .filter(|(_, new)| **new)
                    .map(|(f, _)| f)
                    .collect();
                let memo = Memo {
                    system,
                    user,
                    ..memo
                };
                let mut r = if cache_hit {
                    hit(setup, &memo, Vec::new())
                } else {
                    // Everything this call built is news.
                    let mut r = from_memo(&memo, false);
                    r.new_warnings = r.warnings.clone();
                    r
                };
                add_nested(&mut r, &nested_files, built.nested.warnings);
                r.recorded = Recorded {
                    user: built.user.is_some(),
                    paths: user_views
                        .iter()
                        .map(|v| v.path.to_path_buf())
                        .chain(nested_files.iter().map(|f| f.path.clone()))
                        .collect(),
                };
                return Ok(r);
            }
        }
    }
    // Invalidations kept coming: give what was built, unstored.
    let _ = store.log(sid, &[event("miss").detail(Some("not stored"))]);
    let (memo, built) = last.expect("at least one attempt");
    let mut r = unstored(&memo, built);
    let w = "the session's context was invalidated during every build; returned a build that was not stored".to_string();
    r.warnings.push(w.clone());
    r.new_warnings.push(w);
    Ok(r)
}

/// --no-cache: build everything from disk, store nothing.
fn preview(args: &Args, setup: &Setup, store: Option<&Store>) -> Result<Shown, Stop> {
    let sid = &args.common.sid();
    let (injection, loaded) = match store {
        Some(s) => (s.memo(sid)?.injection, s.nested(sid)?),
        None => (None, HashSet::new()),
    };
    let memo = Memo {
        injection,
        ..Memo::default()
    };
    let built = build(setup, &memo, &loaded);
    Ok(unstored(&memo, built))
}

fn unstored(memo: &Memo, built: Built) -> Shown {
    let as_part = |body: &str, meta: &Value| Part {
        body: body.to_string(),
        meta: Some(meta.to_string()),
        built_ns: built.taken_ns,
    };
    let memo = Memo {
        system: built
            .system
            .as_ref()
            .map(|(b, m)| as_part(b, m))
            .or_else(|| memo.system.clone()),
        user: built
            .user
            .as_ref()
            .map(|(b, m, _)| as_part(b, m))
            .or_else(|| memo.user.clone()),
        injection: memo.injection.clone(),
        generation: memo.generation,
    };
    let mut r = from_memo(&memo, false);
    let nested: Vec<&InjectedFile> = built.nested.files.iter().collect();
    add_nested(&mut r, &nested, built.nested.warnings);
    r.new_warnings = r.warnings.clone();
    r
}

/// A hit: the stored parts, checked against the disk.
fn hit(setup: &Setup, memo: &Memo, nested_warnings: Vec<String>) -> Shown {
    let user_meta = meta_of(memo.user.as_ref());
    let system_meta = meta_of(memo.system.as_ref());
    let mut r = shown(memo, &system_meta, &user_meta, true);
    let mut news = Vec::new();
    let mut changed = Vec::new();
    if let Some(files) = user_meta.get("files").and_then(Value::as_array) {
        for f in files {
            let (Some(path), Some(fp)) = (
                fsview_store::export::get_path(f, "path"),
                f.get("fp").and_then(fp_from_json),
            ) else {
                continue;
            };
            if let Ok(Freshness::Stale(change)) = fingerprint::freshness(&path, &fp) {
                changed.push(format!(
                    "{} ({})",
                    common::shown(&paths::display(&setup.cwd, &path)),
                    change.as_str()
                ));
            }
        }
    }
    if !changed.is_empty() {
        news.push(format!(
            "the cached user context was built from files changed since: {}; run ctx-invalidate --user to rebuild it",
            changed.join(", ")
        ));
    }
    let mut differ = Vec::new();
    if let Some(key) = user_meta.get("key").and_then(Value::as_object) {
        for (field, what) in [
            ("cwd", "working directory"),
            ("also", "--also"),
            ("memory", "--memory"),
            ("allow_external_imports", "--allow-external-imports"),
            ("user_dir", "CLAUDE_CONFIG_DIR"),
            ("managed_dir", "FSVIEW_MANAGED_DIR"),
        ] {
            if key.get(field) != setup.key.get(field) {
                differ.push(what);
            }
        }
    }
    let system_cwd = system_meta.pointer("/key/cwd");
    if system_cwd.is_some()
        && system_cwd != setup.key.get("cwd")
        && !differ.contains(&"working directory")
    {
        differ.insert(0, "working directory");
    }
    if !differ.is_empty() {
        news.push(format!(
            "the cached context was built with another {}; run ctx-invalidate to rebuild it",
            differ.join(", ")
        ));
    }
    news.extend(nested_warnings);
    r.warnings.extend(news.iter().cloned());
    r.new_warnings = news;
    r
}

fn meta_of(p: Option<&Part>) -> Value {
    p.and_then(|p| p.meta.as_deref())
        .and_then(|m| serde_json::from_str(m).ok())
        .unwrap_or(Value::Null)
}

/// The output for the stored parts (nothing nested yet).
fn from_memo(memo: &Memo, cache_hit: bool) -> Shown {
    let system_meta = meta_of(memo.system.as_ref());
    let user_meta = meta_of(memo.user.as_ref());
    shown(memo, &system_meta, &user_meta, cache_hit)
}

fn shown(memo: &Memo, system_meta: &Value, user_meta: &Value, cache_hit: bool) -> Shown {
    let mut warnings = Vec::new();
    for m in [system_meta, user_meta] {
        if let Some(ws) = m.get("warnings").and_then(Value::as_array) {
            warnings.extend(ws.iter().filter_map(Value::as_str).map(String::from));
        }
    }
    let files = user_meta
        .get("files")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                // One whose text trims to nothing is not shown.
                .filter(|f| {
                    f.get("text")
                        .and_then(Value::as_str)
                        .is_none_or(|t| !render::js_trim(t).is_empty())
                })
                .map(|f| {
                    let mut f = f.clone();
                    if let Some(m) = f.as_object_mut() {
                        m.remove("fp");
                    }
                    f
                })
                .collect()
        })
        .unwrap_or_default();
    let body = |p: Option<&Part>| {
        p.and_then(|p| serde_json::from_str::<Value>(&p.body).ok())
            .unwrap_or(Value::Null)
    };
    let system = body(memo.system.as_ref());
    let user = body(memo.user.as_ref());
    Shown {
        cache_hit,
        git: system.get("git").and_then(git_from_json),
        injection: system
            .get("injection")
            .and_then(Value::as_str)
            .map(String::from),
        instruction_files: user
            .get("files")
            .and_then(Value::as_array)
            .map(|fs| fs.iter().filter_map(file_text_from_json).collect())
            .unwrap_or_default(),
        date: user
            .get("date")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        nested: Vec::new(),
        files,
        warnings,
        new_warnings: Vec::new(),
        recorded: Recorded::default(),
    }
}

fn add_nested(r: &mut Shown, files: &[&InjectedFile], warnings: Vec<String>) {
    r.nested = files.iter().map(|f| FileText::from(*f)).collect();
    r.files
        .extend(files.iter().map(|f| Value::Object(file_json(f, "nested"))));
    r.warnings.extend(warnings.iter().cloned());
    r.new_warnings.extend(warnings);
}

fn print(args: &Args, out: &mut Out, r: &Shown) -> Result<(), Stop> {
    let layout = Layout::from_version(&args.layout).unwrap_or_default();
    let parts = Parts {
        files: &r.instruction_files,
        git: r.git.as_ref(),
        injection: r.injection.as_deref(),
        date: &r.date,
    };
    let mut blocks = render::blocks(&parts, layout);
    let nested = render::nested_blocks(&r.nested);
    blocks.extend(nested.iter().cloned());
    if args.common.json {
        let mut m = json::object("context");
        m.insert(
            "cache".into(),
            if r.cache_hit { "hit" } else { "miss" }.into(),
        );
        m.insert("layout".into(), layout.version().into());
        m.insert(
            "system".into(),
            render::system_2_1_88(parts.git, parts.injection).into(),
        );
        m.insert(
            "user".into(),
            render::user_2_1_88(parts.files, parts.date).into(),
        );
        let nested_text: String = nested.iter().map(|b| b.text.as_str()).collect();
        m.insert(
            "nested".into(),
            (!nested.is_empty()).then_some(nested_text).into(),
        );
        let blocks: Vec<Value> = blocks
            .iter()
            .map(|b| {
                let mut o = Map::new();
                o.insert("part".into(), b.part.into());
                o.insert("where".into(), b.place.as_str().into());
                if let Some(p) = &b.path {
                    o.insert("path".into(), p.clone().into());
                }
                o.insert("text".into(), b.text.clone().into());
                Value::Object(o)
            })
            .collect();
        m.insert("blocks".into(), blocks.into());
        m.insert("files".into(), r.files.clone().into());
        m.insert("warnings".into(), r.warnings.clone().into());
        out.json(&Value::Object(m))?;
    } else {
        out.write(&render::text(&blocks, layout))?;
    }
    out.flush()?;
    for w in &r.new_warnings {
        out.notice(w);
    }
    Ok(())
}

/// What the agent is shown of an injected file: its text as rendered, which
/// trims it as Claude Code does (`context::contents_block`): leading blank
/// lines, the first line's indentation and trailing white space never reach
/// the agent.
fn shown_text(f: &InjectedFile) -> &str {
    render::js_trim(&f.text)
}

/// The view kind of an injected file: `full` only when what was shown is
/// the bytes on disk, but for one final line ending, which no rendering of
/// lines shows (fsview-read's numbered text does not either).
fn kind_of(f: &InjectedFile) -> Kind {
    let raw = f.raw.as_slice();
    let body = match raw.strip_suffix(b"\n") {
        Some(r) => r.strip_suffix(b"\r").unwrap_or(r),
        None => raw,
    };
    let shown = shown_text(f).as_bytes();
    if f.kind == context::Kind::Full && (shown == raw || shown == body) {
        Kind::Full
    } else {
        Kind::Processed
    }
}

fn source_of(f: &InjectedFile) -> Source {
    if f.imported_by.is_some() {
        Source::Import
    } else {
        Source::Inject
    }
}

/// The fingerprint of what was read: the stat of the open file, taken
/// before its bytes, and the hash of those bytes. `taken_ns` is from before
/// the build started, so a write during the build makes the stat racy and
/// the hash decides.
fn fingerprint_of(f: &InjectedFile, taken_ns: i64) -> Fingerprint {
    Fingerprint::of_bytes(Stat::of(&f.meta), taken_ns, &f.raw)
}

fn view_of<'a>(f: &'a InjectedFile, fp: &'a Fingerprint) -> NewView<'a> {
    let kind = kind_of(f);
    // A full view is of the disk bytes (kept for diffs as they are).
    let shown = match kind {
        Kind::Full => &f.raw[..],
        _ => shown_text(f).as_bytes(),
    };
    let lines = show::count_lines(shown);
    NewView {
        path: &f.path,
        fingerprint: fp,
        kind,
        source: source_of(f),
        offset: 1,
        lines,
        total_lines: (kind == Kind::Full).then_some(lines),
        shown,
        keep_text: true,
        origin: None,
        conversation: None,
    }
}

fn file_json(f: &InjectedFile, part: &str) -> Map<String, Value> {
    let mut m = Map::new();
    json::put_path(&mut m, "path", &f.path);
    m.insert("source".into(), source_of(f).as_str().into());
    m.insert("kind".into(), kind_of(f).as_str().into());
    m.insert("label".into(), f.label.clone().into());
    m.insert("origin".into(), f.origin.as_str().into());
    m.insert("bytes".into(), f.raw.len().into());
    m.insert("injected_bytes".into(), f.text.len().into());
    m.insert("text".into(), f.text.clone().into());
    match &f.imported_by {
        Some(p) => json::put_path(&mut m, "imported_by", p),
        None => {
            m.insert("imported_by".into(), Value::Null);
        }
    }
    m.insert("part".into(), part.into());
    m
}

/// A stored instruction file, as rendering needs it.
fn file_text_json(f: &FileText) -> Value {
    json!({"path": f.path, "origin": f.origin.as_str(), "text": f.text})
}

fn file_text_from_json(v: &Value) -> Option<FileText> {
    Some(FileText {
        path: v.get("path")?.as_str()?.to_string(),
        origin: Origin::from_word(v.get("origin")?.as_str()?)?,
        text: v.get("text")?.as_str()?.to_string(),
    })
}

fn git_json(g: &GitFacts) -> Value {
    json!({
        "branch": g.branch,
        "default_branch": g.default_branch,
        "status": g.status,
        "status_truncated": g.status_truncated,
        "filters_off_note": g.filters_off_note,
        "log": g.log,
        "user_name": g.user_name,
    })
}

fn git_from_json(v: &Value) -> Option<GitFacts> {
    let text = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    Some(GitFacts {
        branch: text("branch")?,
        default_branch: text("default_branch")?,
        status: text("status")?,
        status_truncated: flag("status_truncated"),
        filters_off_note: flag("filters_off_note"),
        log: text("log")?,
        user_name: text("user_name"),
    })
}

fn fp_json(fp: &Fingerprint) -> Value {
    json!({
        "dev": fp.stat.dev,
        "ino": fp.stat.ino,
        "btime_ns": fp.stat.btime_ns,
        "ftype": fp.stat.ftype.code(),
        "size": fp.stat.size,
        "mtime_ns": fp.stat.mtime_ns,
        "ctime_ns": fp.stat.ctime_ns,
        "taken_ns": fp.taken_ns,
        "hash": fp.hash.as_ref().map(fingerprint::hex),
    })
}

fn fp_from_json(v: &Value) -> Option<Fingerprint> {
    let int = |k: &str| v.get(k).and_then(Value::as_i64);
    let hash = match v.get("hash").and_then(Value::as_str) {
        Some(h) => Some(unhex(h)?),
        None => None,
    };
    Some(Fingerprint {
        stat: Stat {
            dev: v.get("dev")?.as_u64()?,
            ino: v.get("ino")?.as_u64()?,
            btime_ns: int("btime_ns"),
            ftype: FileType::from_code(int("ftype")?),
            size: v.get("size")?.as_u64()?,
            mtime_ns: int("mtime_ns")?,
            ctime_ns: int("ctime_ns")?,
        },
        taken_ns: int("taken_ns")?,
        hash,
        // Not kept in the memo: its SHA-256 decides.
        quick: None,
    })
}

fn unhex(s: &str) -> Option<fingerprint::Hash> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let mut h = [0u8; 32];
    for (i, pair) in b.chunks(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        h[i] = (hi * 16 + lo) as u8;
    }
    Some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a");
        std::fs::write(&p, "x").unwrap();
        let (hash, stat) = fingerprint::hash_path(&p).unwrap();
        let fp = Fingerprint {
            stat,
            taken_ns: 5,
            hash: Some(hash),
            quick: None,
        };
        assert_eq!(fp_from_json(&fp_json(&fp)), Some(fp));
    }

    #[test]
    fn verify_app() {
        command().debug_assert();
    }
}
