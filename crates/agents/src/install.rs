//! Wiring fsview-hook into an agent's own files, and giving back exactly
//! what was there.
//!
//! An install is a list of [`Part`]s, each what fsview-hook adds to one
//! file: its hooks merged into a settings file of Claude Code's shape
//! ([`HookSettings`]: JSON, comments allowed, edited in place, so the
//! user's formatting and comments stay as they were), a file of its own
//! ([`OwnFile`]: a plugin, a hooks file), a line in a text file
//! ([`ExcludeLine`]: git's `info/exclude`). [`install`] applies them and
//! remembers, in a ledger beside the default session file
//! (`fsview/installed.json` in the git directory, else in
//! `$XDG_STATE_HOME/fsview/`), what each file held before and which
//! folders it made for it. Uninstalling gives that back:
//!
//! - a file still as fsview-hook left it gets its old bytes back, or is
//!   removed, with the folders made for it, when fsview-hook created it;
//! - a file changed since loses only fsview-hook's entries (everything
//!   else stays as it is now), and is removed when fsview-hook created it
//!   and nothing else was put in it;
//! - with no record (installed in another clone and checked in, or the
//!   ledger deleted) the file's content is the only witness: fsview-hook's
//!   entries go, and a file (and folders) that held nothing else goes too.
//!
//! Installing twice gives one entry per event. Each command names the
//! installed fsview-hook by its absolute path, so that a `PATH` without
//! fsview cannot make the gate fail open; a hook that must fail closed
//! passes `--gate` (a payload it cannot read is then refused too) and ends
//! in `|| exit 2`, so that even a missing binary blocks the change.
//!
//! Claude Code's shape (`{"hooks": {EVENT: [{"matcher": M, "hooks":
//! [{"type": "command", "command": C}]}]}}`) is shared by several agents
//! (gemini-cli adds a `name` to each entry, Codex reads it from
//! `hooks.json`), so it is written here once ([`merge`], [`HookSettings`]);
//! an agent with another shape gives its own [`Installer::parts`].

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use fsview_store::error::{plain_io, quote};
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};
use serde_json::{json, Map, Value};

use crate::Problem;

/// Whose settings to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The project's shared settings, checked in.
    Project,
    /// The project's settings for this user only, not checked in.
    Local,
    /// The user's settings, for every project.
    User,
}

/// One hook to wire: the agent's event, the tools it matches (`None`: every
/// occurrence), and whether a hook that cannot run must block (the gate).
#[derive(Clone, Copy, Debug)]
pub struct Hook {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub fail_closed: bool,
}

/// What each installed hook runs: `exe AGENT args...`.
#[derive(Clone, Debug)]
pub struct Run {
    /// fsview-hook, by its absolute path.
    pub exe: PathBuf,
    pub args: Vec<String>,
}

impl Run {
    /// The shell command running fsview-hook for `agent`.
    pub fn command(&self, agent: &str) -> String {
        let mut command = format!("{} {agent}", shell_quote(&self.exe.to_string_lossy()));
        for a in &self.args {
            command.push(' ');
            command.push_str(&shell_quote(a));
        }
        command
    }
}

/// One agent's installer.
pub trait Installer {
    /// The agent's name as `fsview-hook` takes it (`claude`).
    fn agent(&self) -> &'static str;
    /// The file that holds the hooks for `scope`, from `cwd` (the project).
    fn settings_file(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem>;
    /// The folder `settings_file` hangs from for `scope` (the project, the
    /// user's home): folders below it that hold nothing but fsview-hook's
    /// files are fsview-hook's to remove; it never is.
    fn base(&self, scope: Scope, cwd: &Path) -> Result<PathBuf, Problem> {
        let file = self.settings_file(scope, cwd)?;
        Ok(match scope {
            Scope::User => file.parent().unwrap_or(Path::new("/")).to_path_buf(),
            Scope::Project | Scope::Local if file.starts_with(cwd) => cwd.to_path_buf(),
            Scope::Project | Scope::Local => work_top(cwd).unwrap_or_else(|| cwd.to_path_buf()),
        })
    }
    /// The hooks to merge into `settings_file` (Claude Code's shape).
    fn hooks(&self) -> &'static [Hook] {
        &[]
    }
    /// The events the installed hooks answer, as the agent names them.
    fn events(&self) -> Vec<&'static str> {
        self.hooks().iter().fold(Vec::new(), |mut seen, h| {
            // An event wired twice (two matchers) is named once.
            if !seen.contains(&h.event) {
                seen.push(h.event);
            }
            seen
        })
    }
    /// The scope `install` uses when none is given.
    fn default_scope(&self) -> Scope {
        Scope::Local
    }
    /// A `name` for each hook entry, where the agent shows one.
    fn hook_name(&self) -> Option<&'static str> {
        None
    }
    /// The agent blocks when a hook cannot start (exit 126, 127): then a
    /// hook that must fail open exits 0 instead.
    fn blocks_when_missing(&self) -> bool {
        false
    }
    /// What the user must still do after installing for `scope` from
    /// `cwd`, if anything.
    fn next_step(&self, _scope: Scope, _cwd: &Path) -> Option<String> {
        None
    }
    /// What installing writes, file by file, the settings file first: by
    /// default [`hooks`](Installer::hooks) merged into it.
    fn parts(&self, scope: Scope, cwd: &Path, run: &Run) -> Result<Vec<Box<dyn Part>>, Problem> {
        Ok(vec![Box::new(hook_settings(self, scope, cwd, run)?)])
    }
}

/// `inst`'s hooks merged into its settings file for `scope`: what
/// [`Installer::parts`] writes unless an installer says otherwise.
pub fn hook_settings<I: Installer + ?Sized>(
    inst: &I,
    scope: Scope,
    cwd: &Path,
    run: &Run,
) -> Result<HookSettings, Problem> {
    Ok(HookSettings {
        file: inst.settings_file(scope, cwd)?,
        base: inst.base(scope, cwd)?,
        hooks: inst.hooks(),
        command: run.command(inst.agent()),
        agent: inst.agent(),
        name: inst.hook_name(),
        open_when_missing: inst.blocks_when_missing(),
    })
}

/// What fsview-hook adds to one file, as edits it can take back.
pub trait Part {
    /// The file.
    fn file(&self) -> &Path;
    /// The folder the file's own folders hang from (never removed).
    fn base(&self) -> &Path;
    /// `now` (`None`: no file) with fsview-hook's entries as wanted, or
    /// `None` when it already is. `Err` says what is wrong with `now`.
    fn add(&self, now: Option<&str>) -> Result<Option<String>, String>;
    /// `now` without any of fsview-hook's entries.
    fn strip(&self, now: &str) -> Result<Stripped, String>;
    /// What the part is for, said when it is added (the settings file's
    /// hooks are said by the installer).
    fn purpose(&self) -> Option<String> {
        None
    }
    /// The file is a program the agent runs (mode 755).
    fn executable(&self) -> bool {
        false
    }
}

/// A file's text without fsview-hook's entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stripped {
    pub text: String,
    /// Nothing is left in it that anyone would keep (`{}`, no comment).
    pub empty: bool,
}

/// What happened to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// Made by this install.
    Created,
    /// fsview-hook's entries added or updated.
    Changed,
    /// Already as asked (or, uninstalling, nothing of fsview-hook's).
    Unchanged,
    /// Given back byte for byte as it was before fsview-hook changed it.
    Restored,
    /// Removed: fsview-hook had created it and nothing else is in it.
    Removed,
    /// fsview-hook's entries removed; the rest, changed since, kept.
    Stripped,
}

impl What {
    pub fn word(self) -> &'static str {
        match self {
            What::Created => "created",
            What::Changed => "changed",
            What::Unchanged => "unchanged",
            What::Restored => "restored",
            What::Removed => "removed",
            What::Stripped => "stripped",
        }
    }
}

/// What installing or uninstalling did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Done {
    /// The settings file.
    pub file: PathBuf,
    /// Some file was written or removed.
    pub changed: bool,
    /// The command each hook runs (before any `--gate || exit 2`).
    pub command: String,
    pub events: Vec<&'static str>,
    /// Each file, the settings file first, what happened to it and what
    /// it is for.
    pub files: Vec<(PathBuf, What, Option<String>)>,
    /// Folders removed with the files they held, deepest first.
    pub dirs_removed: Vec<PathBuf>,
}

/// Install (or uninstall) `inst`'s hooks for `scope`, each running `run`.
pub fn install(
    inst: &dyn Installer,
    scope: Scope,
    uninstall: bool,
    run: &Run,
    cwd: &Path,
) -> Result<Done, Problem> {
    let parts = inst.parts(scope, cwd, run)?;
    let mut done = Done {
        file: inst.settings_file(scope, cwd)?,
        changed: false,
        command: run.command(inst.agent()),
        events: inst.events(),
        files: Vec::new(),
        dirs_removed: Vec::new(),
    };
    // Every text first, so that a file fsview-hook cannot read stops the
    // whole install before anything is written.
    let mut plans = Vec::new();
    // Folders one file's removal could not take yet (another file of
    // fsview-hook's was still in them): tried again at the end.
    let mut leftover = Vec::new();
    for part in &parts {
        let target = target_of(part.file());
        let now = read_text(&target)?;
        let bad = |what: String| {
            Problem::new(format!(
                "{} {what}, nothing was changed",
                quote(part.file())
            ))
        };
        if uninstall {
            if let Some(t) = &now {
                part.strip(t).map_err(bad)?;
            }
            plans.push((part, target, now, None));
        } else {
            let new = part.add(now.as_deref()).map_err(bad)?;
            plans.push((part, target, now, new));
        }
    }
    for (part, target, now, new) in plans {
        let mut ledger = Ledger::open(&target)?;
        let what = if uninstall {
            take_back(
                part.as_ref(),
                &target,
                now,
                &mut ledger,
                &mut done.dirs_removed,
                &mut leftover,
            )?
        } else {
            put(part.as_ref(), &target, now, new, &mut ledger)?
        };
        ledger.save()?;
        done.changed |= what != What::Unchanged;
        done.files
            .push((part.file().to_path_buf(), what, part.purpose()));
    }
    leftover.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in leftover {
        if std::fs::remove_dir(&d).is_ok() {
            done.dirs_removed.push(d);
        }
    }
    Ok(done)
}

/// Write `new` where `now` is, remembering what was there and the folders
/// made for it.
fn put(
    part: &dyn Part,
    target: &Path,
    now: Option<String>,
    new: Option<String>,
    ledger: &mut Ledger,
) -> Result<What, Problem> {
    let Some(new) = new else {
        return Ok(What::Unchanged);
    };
    let key = target.to_string_lossy().into_owned();
    let old = ledger.entries.remove(&key);
    // What to give back: the record's, while the file is as fsview-hook
    // left it; else what the file holds now, without fsview-hook's
    // entries (a file that held nothing else counts as fsview-hook's).
    let (original, mut dirs) = match old {
        Some(e) if now.as_deref() == Some(e.written.as_str()) => (e.original, e.dirs),
        e => {
            let original = match &now {
                None => None,
                Some(t) => {
                    let s = part
                        .strip(t)
                        .map_err(|what| Problem::new(format!("{} {what}", quote(part.file()))))?;
                    (!(s.empty && s.text != *t)).then_some(s.text)
                }
            };
            (original, e.map(|e| e.dirs).unwrap_or_default())
        }
    };
    let dir = target.parent().unwrap_or(Path::new("/"));
    dirs.extend(make_dirs(dir)?);
    write_text(target, &new)?;
    if part.executable() {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(target, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| fsview_store::Error::io("chmod", target, &e))?;
    }
    ledger.entries.insert(
        key,
        Entry {
            original,
            written: new,
            dirs,
        },
    );
    Ok(if now.is_none() {
        What::Created
    } else {
        What::Changed
    })
}

/// Give back what was at `target` before fsview-hook changed it.
fn take_back(
    part: &dyn Part,
    target: &Path,
    now: Option<String>,
    ledger: &mut Ledger,
    dirs_removed: &mut Vec<PathBuf>,
    leftover: &mut Vec<PathBuf>,
) -> Result<What, Problem> {
    let entry = ledger
        .entries
        .remove(&target.to_string_lossy().into_owned());
    let what = match (&now, &entry) {
        (None, _) => What::Unchanged,
        (Some(t), Some(e)) if *t == e.written => match &e.original {
            None => remove_file(target).map(|()| What::Removed)?,
            Some(o) if o == t => What::Unchanged,
            Some(o) => write_text(target, o).map(|()| What::Restored)?,
        },
        (Some(t), _) => {
            let s = part
                .strip(t)
                .map_err(|what| Problem::new(format!("{} {what}", quote(part.file()))))?;
            let ours_made_it = entry
                .as_ref()
                .map_or(s.text != *t, |e| e.original.is_none());
            if s.empty && ours_made_it {
                remove_file(target).map(|()| What::Removed)?
            } else if s.text != *t {
                write_text(target, &s.text).map(|()| What::Stripped)?
            } else {
                What::Unchanged
            }
        }
    };
    // The folders made for the file, once they hold nothing; with no
    // record, those between the file and its base that it alone filled.
    let mut dirs: Vec<PathBuf> = match &entry {
        Some(e) => e.dirs.clone(),
        None if what == What::Removed => target
            .parent()
            .into_iter()
            .flat_map(Path::ancestors)
            .take_while(|d| d.starts_with(part.base()) && *d != part.base())
            .map(Path::to_path_buf)
            .collect(),
        None => Vec::new(),
    };
    dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in dirs {
        if std::fs::remove_dir(&d).is_ok() {
            dirs_removed.push(d);
        } else if d.exists() {
            leftover.push(d);
        }
    }
    Ok(what)
}

/// What the ledger remembers of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// The text before fsview-hook changed it (`None`: there was no file).
    original: Option<String>,
    /// The text fsview-hook last wrote.
    written: String,
    /// The folders made for the file, top first.
    dirs: Vec<PathBuf>,
}

/// The record of what installs changed: `installed.json` beside the default
/// session file of the place the file is in, locked while it is used.
struct Ledger {
    path: PathBuf,
    entries: BTreeMap<String, Entry>,
    /// The lock on the ledger's folder, held until it is saved.
    _lock: std::fs::File,
    /// The ledger's folder was made for it.
    made_dir: bool,
}

impl Ledger {
    fn open(target: &Path) -> Result<Ledger, Problem> {
        let near = target
            .ancestors()
            .skip(1)
            .find(|d| d.is_dir())
            .unwrap_or(Path::new("/"));
        let dir = fsview_store::location::session_path(None, near)?
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let made_dir = !dir.exists();
        // As the session file's: its own folder, the user's only (it
        // keeps copies of settings files, which may hold tokens).
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .map_err(|e| fsview_store::Error::io("create", &dir, &e))?;
        }
        let lock =
            std::fs::File::open(&dir).map_err(|e| fsview_store::Error::io("open", &dir, &e))?;
        // SAFETY: flock on a descriptor we own; no memory involved.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            let e = std::io::Error::last_os_error();
            return Err(fsview_store::Error::io("lock", &dir, &e).into());
        }
        let path = dir.join("installed.json");
        let mut entries = BTreeMap::new();
        if let Some(text) = read_text(&path)? {
            let v: Value = serde_json::from_str(&text).map_err(|e| {
                Problem::new(format!(
                    "{} is not fsview-hook's record of installs ({e}); move it away, nothing was changed",
                    quote(&path)
                ))
            })?;
            for (k, e) in v
                .get("files")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let (Some(written), Some(dirs)) = (
                    e.get("written").and_then(Value::as_str),
                    e.get("dirs").and_then(Value::as_array),
                ) else {
                    continue;
                };
                entries.insert(
                    k.clone(),
                    Entry {
                        original: e
                            .get("original")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        written: written.to_string(),
                        dirs: dirs
                            .iter()
                            .filter_map(Value::as_str)
                            .map(PathBuf::from)
                            .collect(),
                    },
                );
            }
        }
        Ok(Ledger {
            path,
            entries,
            _lock: lock,
            made_dir,
        })
    }

    /// Write the ledger back; an empty one is removed (with its folder,
    /// when it was made for it and holds nothing else).
    fn save(self) -> Result<(), Problem> {
        if self.entries.is_empty() {
            if self.path.exists() {
                remove_file(&self.path)?;
            }
            if let Some(dir) = self.path.parent() {
                if self.made_dir || dir.read_dir().is_ok_and(|mut d| d.next().is_none()) {
                    let _ = std::fs::remove_dir(dir);
                }
            }
            return Ok(());
        }
        let mut files = Map::new();
        for (k, e) in &self.entries {
            files.insert(
                k.clone(),
                json!({
                    "original": e.original,
                    "written": e.written,
                    "dirs": e.dirs.iter().map(|d| d.to_string_lossy()).collect::<Vec<_>>(),
                }),
            );
        }
        let doc = json!({
            "about": "What fsview-hook install changed, so that --uninstall gives it back exactly. Delete it to forget.",
            "version": 1,
            "files": files,
        });
        let mut text = serde_json::to_string_pretty(&doc).expect("JSON serializes");
        text.push('\n');
        write_private(&self.path, &text)
    }
}

/// The top of the git work tree holding `dir`, found by its `.git`.
pub fn work_top(dir: &Path) -> Option<PathBuf> {
    fsview_store::location::work_tree_top(dir)
}

/// Make `dir` and the folders above it that are missing; the ones made,
/// top first.
fn make_dirs(dir: &Path) -> Result<Vec<PathBuf>, Problem> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    let mut made = Vec::new();
    for d in missing.into_iter().rev() {
        match std::fs::create_dir(d) {
            Ok(()) => made.push(d.to_path_buf()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(fsview_store::Error::io("create", d, &e).into()),
        }
    }
    Ok(made)
}

/// The file a settings path names: a symlinked settings file (a dotfiles
/// manager's) is updated where it points, not replaced by a copy.
fn target_of(file: &Path) -> PathBuf {
    std::fs::canonicalize(file).unwrap_or_else(|_| {
        // A file not made yet: its folder may be a link too.
        match (file.parent(), file.file_name()) {
            (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                .map(|d| d.join(name))
                .unwrap_or_else(|_| file.to_path_buf()),
            _ => file.to_path_buf(),
        }
    })
}

fn read_text(file: &Path) -> Result<Option<String>, Problem> {
    match std::fs::read(file) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            Problem::new(format!(
                "{} is not UTF-8 text; fix it by hand, nothing was changed",
                quote(file)
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(fsview_store::Error::io("read", file, &e).into()),
    }
}

fn remove_file(file: &Path) -> Result<(), Problem> {
    std::fs::remove_file(file).map_err(|e| fsview_store::Error::io("remove", file, &e).into())
}

/// Write `text` to `file` whole or not at all (a temporary file renamed
/// over it), keeping the file's permissions.
fn write_text(file: &Path, text: &str) -> Result<(), Problem> {
    let mode = std::fs::metadata(file).ok().map(|m| m.permissions());
    write_atomic(file, text, mode)
}

/// Write `text` to `file`, readable by its owner only.
fn write_private(file: &Path, text: &str) -> Result<(), Problem> {
    use std::os::unix::fs::PermissionsExt;
    write_atomic(file, text, Some(std::fs::Permissions::from_mode(0o600)))
}

fn write_atomic(
    file: &Path,
    text: &str,
    mode: Option<std::fs::Permissions>,
) -> Result<(), Problem> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.fsview-{}", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        // A new file gets what the umask leaves of 0666, as any new file.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(if mode.is_some() { 0o600 } else { 0o666 })
            .open(&tmp)?;
        if let Some(mode) = &mode {
            f.set_permissions(mode.clone())?;
        }
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Problem::new(format!(
            "cannot write {}: {}; nothing was changed",
            quote(file),
            plain_io(&e)
        ))
    })
}

/// fsview-hook's hooks in a settings file of Claude Code's shape, edited in
/// place.
pub struct HookSettings {
    pub file: PathBuf,
    pub base: PathBuf,
    pub hooks: &'static [Hook],
    /// What each hook runs (before `--gate || exit 2` and the like).
    pub command: String,
    /// The agent fsview-hook answers for there.
    pub agent: &'static str,
    /// Each entry's `name`, where the agent shows one.
    pub name: Option<&'static str>,
    /// A hook that must fail open exits 0 when it cannot start.
    pub open_when_missing: bool,
}

impl HookSettings {
    fn style(&self) -> Style<'static> {
        Style {
            name: self.name,
            open_when_missing: self.open_when_missing,
        }
    }
}

/// JSON as agents read it: comments and trailing commas allowed, nothing
/// looser (gemini-cli and Qwen Code strip comments; every agent parses the
/// rest as JSON).
fn parse_options() -> jsonc_parser::ParseOptions {
    jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_trailing_commas: true,
        allow_loose_object_property_names: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        ..Default::default()
    }
}

fn by_hand(what: String) -> String {
    format!("{what}; fix it by hand")
}

/// `text` as a tree that keeps its comments and spacing, and as a value.
fn parse_settings(text: &str) -> Result<(CstRootNode, Value), String> {
    let root = CstRootNode::parse(text, &parse_options())
        .map_err(|e| format!("is not valid JSON ({e}); fix it by hand"))?;
    let value = root.to_serde_value().unwrap_or(Value::Null);
    if !value.is_object() {
        return Err("is not a JSON object; fix it by hand".to_string());
    }
    Ok((root, value))
}

impl Part for HookSettings {
    fn file(&self) -> &Path {
        &self.file
    }

    fn base(&self) -> &Path {
        &self.base
    }

    fn add(&self, now: Option<&str>) -> Result<Option<String>, String> {
        let style = self.style();
        let Some(now) = now.filter(|t| !t.trim().is_empty()) else {
            let mut doc = Value::Object(Map::new());
            merge(&mut doc, self.hooks, &self.command, self.agent, &style)?;
            let mut text = serde_json::to_string_pretty(&doc).expect("JSON serializes");
            text.push('\n');
            return Ok(Some(text));
        };
        let (root, mut value) = parse_settings(now)?;
        if !merge(&mut value, self.hooks, &self.command, self.agent, &style).map_err(by_hand)? {
            return Ok(None);
        }
        let obj = root.object_value().ok_or("is not a JSON object")?;
        let emptied = strip_tree(&obj, self.agent, false);
        let hooks = match obj.get("hooks").and_then(|p| p.value()) {
            Some(v) => v
                .as_object()
                .ok_or("has a \"hooks\" key that is not an object; fix it by hand")?,
            None => object_of(&obj.append("hooks", CstInputValue::Object(Vec::new())))?,
        };
        for h in self.hooks {
            let groups = match hooks.get(h.event).and_then(|p| p.value()) {
                Some(v) => v.as_array().ok_or_else(|| {
                    format!("has hooks.{} that is not a list; fix it by hand", h.event)
                })?,
                None => array_of(&hooks.append(h.event, CstInputValue::Array(Vec::new())))?,
            };
            groups.append(input(&group(h, &self.command, &style)));
        }
        // An event wired before and no longer: its emptied list goes.
        for e in emptied {
            if !self.hooks.iter().any(|h| h.event == e) {
                if let Some(p) = hooks.get(&e) {
                    p.remove();
                }
            }
        }
        Ok(Some(root.to_string()))
    }

    fn strip(&self, now: &str) -> Result<Stripped, String> {
        if now.trim().is_empty() {
            return Ok(Stripped {
                text: now.to_string(),
                empty: true,
            });
        }
        let (root, mut value) = parse_settings(now)?;
        if merge(&mut value, &[], &self.command, self.agent, &self.style()).map_err(by_hand)? {
            let obj = root.object_value().ok_or("is not a JSON object")?;
            strip_tree(&obj, self.agent, true);
        }
        let text = root.to_string();
        let empty = root
            .object_value()
            .is_some_and(|o| o.properties().is_empty())
            && !text.contains("//")
            && !text.contains("/*");
        Ok(Stripped { text, empty })
    }
}

fn object_of(prop: &jsonc_parser::cst::CstObjectProp) -> Result<CstObject, String> {
    prop.value()
        .and_then(|v| v.as_object())
        .ok_or_else(|| "could not be edited".to_string())
}

fn array_of(prop: &jsonc_parser::cst::CstObjectProp) -> Result<CstArray, String> {
    prop.value()
        .and_then(|v| v.as_array())
        .ok_or_else(|| "could not be edited".to_string())
}

/// `v` as the tree editor takes it.
fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(a) => CstInputValue::Array(a.iter().map(input).collect()),
        Value::Object(o) => {
            CstInputValue::Object(o.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// Remove fsview-hook's entries for `agent` from the settings tree `obj`,
/// as [`merge`] does from its value: a group left with no hook goes; with
/// `prune`, an event left with no group goes too, and `hooks` left empty.
/// Returns the events whose lists it emptied.
fn strip_tree(obj: &CstObject, agent: &str, prune: bool) -> Vec<String> {
    let mut emptied = Vec::new();
    let Some(hooks) = obj
        .get("hooks")
        .and_then(|p| p.value())
        .and_then(|v| v.as_object())
    else {
        return emptied;
    };
    for event in hooks.properties() {
        let Some(groups) = event.value().and_then(|v| v.as_array()) else {
            continue;
        };
        let mut removed = false;
        for g in groups.elements() {
            let Some(list) = g
                .as_object()
                .and_then(|o| o.get("hooks"))
                .and_then(|p| p.value())
                .and_then(|v| v.as_array())
            else {
                continue;
            };
            let mine: Vec<CstNode> = list
                .elements()
                .into_iter()
                .filter(|h| h.to_serde_value().is_some_and(|v| is_ours(&v, agent)))
                .collect();
            if mine.is_empty() {
                continue;
            }
            if mine.len() == list.elements().len() {
                g.remove();
            } else {
                mine.into_iter().for_each(CstNode::remove);
            }
            removed = true;
        }
        if removed && groups.elements().is_empty() {
            let name = event
                .name()
                .and_then(|n| n.decoded_value().ok())
                .unwrap_or_default();
            emptied.push(name);
            if prune {
                event.remove();
            }
        }
    }
    if prune && !emptied.is_empty() && hooks.properties().is_empty() {
        if let Some(p) = obj.get("hooks") {
            p.remove();
        }
    }
    emptied
}

/// How an agent's hook entries are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Style<'a> {
    /// Each entry's `name`, where the agent shows one.
    pub name: Option<&'a str>,
    /// A hook that must fail open exits 0 when it cannot start.
    pub open_when_missing: bool,
}

/// What ends the command of a hook that must fail open, for an agent that
/// blocks when a hook cannot start: 126 and 127 (not executable, not
/// found) become 0; fsview-hook's own exit codes are kept.
pub const OPEN_WHEN_MISSING: &str = "|| { s=$?; [ $s -lt 126 ] && exit $s; exit 0; }";

/// The group wiring `h` to `command`, written in `style`.
fn group(h: &Hook, command: &str, style: &Style<'_>) -> Value {
    let mut g = Map::new();
    if let Some(m) = h.matcher {
        g.insert("matcher".into(), m.into());
    }
    let cmd = if h.fail_closed {
        format!("{command} --gate || exit 2")
    } else if style.open_when_missing {
        format!("{command} {OPEN_WHEN_MISSING}")
    } else {
        command.to_string()
    };
    let mut entry = json!({"type": "command", "command": cmd});
    if let Some(n) = style.name {
        entry["name"] = n.into();
    }
    g.insert("hooks".into(), json!([entry]));
    Value::Object(g)
}

/// Make `doc`'s `hooks` hold exactly `wanted` as fsview-hook's entries for
/// `agent` (none: uninstall), each running `command`, written in `style`,
/// leaving every other entry as it is. Returns whether anything changed,
/// or what is wrong with the document.
pub fn merge(
    doc: &mut Value,
    wanted: &[Hook],
    command: &str,
    agent: &str,
    style: &Style<'_>,
) -> Result<bool, String> {
    let root = doc.as_object_mut().ok_or("is not a JSON object")?;
    if root.get("hooks").is_some_and(|h| !h.is_object()) {
        return Err("has a \"hooks\" key that is not an object".to_string());
    }
    let groups_of = |h: &Hook| group(h, command, style);
    // Already as wanted: every wanted group present once, no other entry
    // of ours anywhere.
    if let Some(hooks) = root.get("hooks").and_then(Value::as_object) {
        let ours_total: usize = hooks
            .values()
            .filter_map(Value::as_array)
            .flatten()
            .map(|g| ours_in(g, agent))
            .sum();
        let all_there = wanted.iter().all(|h| {
            hooks
                .get(h.event)
                .and_then(Value::as_array)
                .is_some_and(|groups| groups.iter().filter(|g| **g == groups_of(h)).count() == 1)
        });
        if all_there && ours_total == wanted.len() {
            return Ok(false);
        }
    } else if wanted.is_empty() {
        return Ok(false);
    }
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .expect("hooks is an object");
    let mut changed = false;
    let mut emptied = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            if wanted.iter().any(|h| h.event == event) {
                return Err(format!("has hooks.{event} that is not a list"));
            }
            continue;
        };
        let n = groups.len();
        // A group left with no hook by this goes; the user's own empty
        // groups stay.
        groups.retain_mut(|g| match g.get_mut("hooks").and_then(Value::as_array_mut) {
            Some(list) => {
                let len = list.len();
                list.retain(|h| !is_ours(h, agent));
                changed |= list.len() != len;
                !(list.len() != len && list.is_empty())
            }
            None => true,
        });
        if groups.len() != n && groups.is_empty() {
            emptied.push(event.clone());
        }
    }
    for e in emptied {
        hooks.remove(&e);
    }
    for h in wanted {
        let groups = hooks
            .entry(h.event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Some(groups) = groups.as_array_mut() else {
            return Err(format!("has hooks.{} that is not a list", h.event));
        };
        groups.push(groups_of(h));
        changed = true;
    }
    if hooks.is_empty() {
        root.remove("hooks");
    }
    Ok(changed)
}

/// A file fsview-hook owns whole: an agent that reads hooks from every
/// file of a folder, a plugin file. `ours` tells a file fsview-hook wrote
/// from one it did not, which is never overwritten or removed.
pub struct OwnFile {
    pub file: PathBuf,
    pub base: PathBuf,
    pub text: String,
    pub ours: Box<dyn Fn(&str) -> bool>,
    /// A program the agent runs (a hook file), written mode 755.
    pub executable: bool,
}

impl Part for OwnFile {
    fn file(&self) -> &Path {
        &self.file
    }

    fn base(&self) -> &Path {
        &self.base
    }

    fn add(&self, now: Option<&str>) -> Result<Option<String>, String> {
        match now {
            Some(t) if t == self.text => Ok(None),
            Some(t) if !(self.ours)(t) => {
                Err("is not one fsview-hook wrote; move it away first".to_string())
            }
            _ => Ok(Some(self.text.clone())),
        }
    }

    fn strip(&self, now: &str) -> Result<Stripped, String> {
        if (self.ours)(now) {
            Ok(Stripped {
                text: String::new(),
                empty: true,
            })
        } else {
            Err("is not one fsview-hook wrote; move it away first".to_string())
        }
    }

    fn executable(&self) -> bool {
        self.executable
    }
}

/// A line that keeps a file out of git in this clone only: `/PATH` in the
/// repository's `info/exclude`, where the file is not ignored already.
pub struct ExcludeLine {
    file: PathBuf,
    base: PathBuf,
    line: String,
    /// Ignored by some other rule (or tracked): no line needed.
    ignored_elsewhere: bool,
}

impl ExcludeLine {
    /// The line keeping `file` out of git, when `file` is in a git work
    /// tree.
    pub fn of(file: &Path) -> Option<ExcludeLine> {
        let dir = file.parent()?;
        let near = dir.ancestors().find(|d| d.is_dir())?;
        let top = work_top(near)?;
        let rel = file.strip_prefix(&top).ok()?;
        let git = fsview_store::location::common_git_dir(&top)?;
        let line = format!("/{}", rel.to_string_lossy());
        // A file ignored by the project's own rules needs no line of ours;
        // a line of ours already there counts as one (git cannot tell).
        let ignored = std::process::Command::new("git")
            .arg("-C")
            .arg(&top)
            .args(["check-ignore", "-q", "--"])
            .arg(rel)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let exclude = git.join("info").join("exclude");
        let ours_there =
            std::fs::read_to_string(&exclude).is_ok_and(|t| t.lines().any(|l| l == line));
        Some(ExcludeLine {
            base: git.clone(),
            file: exclude,
            line,
            ignored_elsewhere: ignored && !ours_there,
        })
    }
}

impl Part for ExcludeLine {
    fn file(&self) -> &Path {
        &self.file
    }

    fn purpose(&self) -> Option<String> {
        Some(format!(
            "{} added: git leaves that file alone in this clone",
            self.line
        ))
    }

    fn base(&self) -> &Path {
        &self.base
    }

    fn add(&self, now: Option<&str>) -> Result<Option<String>, String> {
        let now = now.unwrap_or("");
        if self.ignored_elsewhere || now.lines().any(|l| l == self.line) {
            return Ok(None);
        }
        let mut text = now.to_string();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&self.line);
        text.push('\n');
        Ok(Some(text))
    }

    fn strip(&self, now: &str) -> Result<Stripped, String> {
        let text: String = now
            .split_inclusive('\n')
            .filter(|l| l.trim_end_matches('\n') != self.line)
            .collect();
        Ok(Stripped {
            empty: text.trim().is_empty(),
            text,
        })
    }
}

/// Whether a shell command runs `fsview-hook AGENT` (any path to it).
pub fn runs_fsview_hook(command: &str, agent: &str) -> bool {
    is_ours(&json!({ "command": command }), agent)
}

fn ours_in(group: &Value, agent: &str) -> usize {
    group
        .get("hooks")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter(|h| is_ours(h, agent)).count())
        .unwrap_or(0)
}

/// A hook entry that runs `fsview-hook AGENT` (any path to it).
fn is_ours(hook: &Value, agent: &str) -> bool {
    let Some(cmd) = hook.get("command").and_then(Value::as_str) else {
        return false;
    };
    let words = shell_words(cmd, 2);
    matches!(words.as_slice(), [program, a] if a == agent
        && Path::new(program).file_name().is_some_and(|n| n == "fsview-hook"))
}

/// The first `n` words of a shell command line, with quotes removed (enough
/// to recognise a command this module wrote, or a hand-written one).
fn shell_words(cmd: &str, n: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = cmd.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => cur.extend(chars.next()),
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                cur.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                    if words.len() == n {
                        return words;
                    }
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words.truncate(n);
    words
}

/// `s` as one shell word: as it is when it needs no quoting, else in single
/// quotes.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOOKS: &[Hook] = &[
        Hook {
            event: "PreToolUse",
            matcher: Some("Edit|Write"),
            fail_closed: true,
        },
        Hook {
            event: "SessionStart",
            matcher: None,
            fail_closed: false,
        },
    ];

    #[test]
    fn words_and_quotes() {
        assert_eq!(
            shell_words("'/a b/fsview-hook' claude || exit 2", 2),
            ["/a b/fsview-hook", "claude"]
        );
        assert_eq!(
            shell_words("fsview-hook   claude", 5),
            ["fsview-hook", "claude"]
        );
        assert_eq!(shell_words("\"x\\\"y\" z", 2), ["x\"y", "z"]);
        assert_eq!(shell_quote("/usr/bin/fsview-hook"), "/usr/bin/fsview-hook");
        assert_eq!(shell_quote("/it's here/x"), "'/it'\\''s here/x'");
    }

    #[test]
    fn merge_keeps_others_and_is_idempotent() {
        let mut doc = json!({
            "model": "opus",
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
                "Stop": [{"hooks": [{"type": "command", "command": "fsview-hook claude"}]}]
            }
        });
        assert_eq!(
            merge(
                &mut doc,
                HOOKS,
                "/bin/fsview-hook claude",
                "claude",
                &Style::default()
            ),
            Ok(true)
        );
        assert_eq!(
            doc,
            json!({
                "model": "opus",
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]},
                        {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "/bin/fsview-hook claude --gate || exit 2"}]}
                    ],
                    "SessionStart": [{"hooks": [{"type": "command", "command": "/bin/fsview-hook claude"}]}]
                }
            })
        );
        let again = doc.clone();
        assert_eq!(
            merge(
                &mut doc,
                HOOKS,
                "/bin/fsview-hook claude",
                "claude",
                &Style::default()
            ),
            Ok(false)
        );
        assert_eq!(doc, again);
        // Another path to the binary: replaced, still one entry.
        assert_eq!(
            merge(
                &mut doc,
                HOOKS,
                "/opt/fsview-hook claude",
                "claude",
                &Style::default()
            ),
            Ok(true)
        );
        assert_eq!(doc["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            merge(
                &mut doc,
                &[],
                "/opt/fsview-hook claude",
                "claude",
                &Style::default()
            ),
            Ok(true)
        );
        assert_eq!(
            doc,
            json!({"model": "opus", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}]}})
        );
    }

    #[test]
    fn merge_refuses_what_it_does_not_understand() {
        let mut doc = json!({"hooks": []});
        assert!(merge(&mut doc, HOOKS, "x claude", "claude", &Style::default()).is_err());
        let mut doc = json!({"hooks": {"PreToolUse": {}}});
        assert!(merge(&mut doc, HOOKS, "x claude", "claude", &Style::default()).is_err());
    }
}
