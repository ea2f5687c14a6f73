//! Reads one instruction file, turns it into what is injected, and follows
//! its imports.
//!
//! Each file is opened once (non-blocking, so a FIFO cannot hang the build),
//! `fstat`ed through that open descriptor before its bytes are read, and read
//! from that same descriptor: the bytes and the metadata a caller records
//! belong to one file, even if the path is replaced meanwhile. Files over
//! 4 MiB and files with a NUL byte in their first 8 KiB are skipped with a
//! warning. The processing is Claude Code's: front matter stripped, block
//! HTML comments stripped, `MEMORY.md` truncated; a file that is empty after
//! that is dropped.
//!
//! Imports are loaded right after their importer, depth first, each file at
//! most once per build (the same set breaks cycles), at most
//! [`MAX_IMPORT_DEPTH`] imports deep, as Claude Code 2.1.332 does:
//!
//! - An import of a project, local or managed file must stay inside the
//!   working directory, the directory Claude Code started in (not the git
//!   work tree: run from `packages/api`, the root `CLAUDE.md`'s
//!   `@docs/style.md` is outside), unless external imports are allowed. Both
//!   the path as written and the file it resolves to must be inside, so
//!   `..` and symlink escapes count. The user's own files (`~/.claude`) may
//!   import from anywhere.
//! - Only files with no extension or a text extension Claude Code knows
//!   ([`TEXT_EXTENSIONS`]: `.md`, `.txt`, source code, ...) are imported;
//!   `@docs/diagram.svg` is skipped.
//!
//! Unlike Claude Code, fsview also skips a file with a NUL byte in its first
//! 8 KiB (binary content is not instructions) and says why every import it
//! skips was skipped.

use std::collections::HashSet;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::frontmatter::{self, FrontMatter, PathRule};
use crate::{comments, imports, memory, InjectedFile, Kind, Options, Origin, UserContext};

/// Files larger than this are not injected.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// A file longer than this (in characters, once processed) gets a warning.
pub const LARGE_FILE_CHARS: usize = 40_000;
/// Imports nest at most this deep (an instruction file's own imports are at
/// depth 1): Claude Code reads files down to depth 4 and no deeper.
pub const MAX_IMPORT_DEPTH: usize = 4;
/// How much of a file is checked for a NUL byte.
const TEXT_SNIFF_BYTES: usize = 8 * 1024;

/// The extensions of the files Claude Code imports (compared lowercased); a
/// file without an extension is imported too.
pub const TEXT_EXTENSIONS: &[&str] = &[
    ".md",
    ".txt",
    ".text",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".xml",
    ".csv",
    ".html",
    ".htm",
    ".css",
    ".scss",
    ".sass",
    ".less",
    ".js",
    ".ts",
    ".tsx",
    ".jsx",
    ".mjs",
    ".cjs",
    ".mts",
    ".cts",
    ".py",
    ".pyi",
    ".pyw",
    ".rb",
    ".erb",
    ".rake",
    ".go",
    ".rs",
    ".java",
    ".kt",
    ".kts",
    ".scala",
    ".c",
    ".cpp",
    ".cc",
    ".cxx",
    ".h",
    ".hpp",
    ".hxx",
    ".cs",
    ".swift",
    ".sh",
    ".bash",
    ".zsh",
    ".fish",
    ".ps1",
    ".bat",
    ".cmd",
    ".env",
    ".ini",
    ".cfg",
    ".conf",
    ".config",
    ".properties",
    ".sql",
    ".graphql",
    ".gql",
    ".proto",
    ".vue",
    ".svelte",
    ".astro",
    ".ejs",
    ".hbs",
    ".pug",
    ".jade",
    ".php",
    ".pl",
    ".pm",
    ".lua",
    ".r",
    ".dart",
    ".ex",
    ".exs",
    ".erl",
    ".hrl",
    ".clj",
    ".cljs",
    ".cljc",
    ".edn",
    ".hs",
    ".lhs",
    ".elm",
    ".ml",
    ".mli",
    ".f",
    ".f90",
    ".f95",
    ".for",
    ".cmake",
    ".make",
    ".makefile",
    ".gradle",
    ".sbt",
    ".rst",
    ".adoc",
    ".asciidoc",
    ".org",
    ".tex",
    ".latex",
    ".lock",
    ".log",
    ".diff",
    ".patch",
];

pub const DESC_MANAGED: &str = "organization-managed policy instructions";
pub const DESC_PROJECT: &str = "project instructions, checked into the codebase";
pub const DESC_LOCAL: &str = "user's private project instructions, not checked in";
pub const DESC_USER: &str = "user's private global instructions for all projects";
pub const DESC_MEMORY: &str = "user's auto-memory, persists across conversations";

/// Where a file came from: how it is labelled and where its imports may go.
#[derive(Debug, Clone)]
pub(crate) struct Source {
    pub label: &'static str,
    pub origin: Origin,
    /// Imports must stay inside this directory (canonical); `None`: they may
    /// go anywhere.
    pub import_root: Option<PathBuf>,
    /// Whether `@imports` are followed at all (not in MEMORY.md).
    pub follow_imports: bool,
    /// MEMORY.md truncation applies.
    pub is_memory: bool,
}

/// Which rules of a rules directory to load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RuleMode {
    /// Unconditional rules, then conditional ones that match.
    All,
    /// Only conditional rules that match (unconditional ones were loaded
    /// eagerly).
    ConditionalOnly,
}

/// A file as read from disk.
struct OnDisk {
    path: PathBuf,
    raw: Vec<u8>,
    meta: Metadata,
}

enum ReadError {
    NotFound,
    IsDir,
    NotRegular,
    TooLarge(u64),
    NotText,
    Io(io::Error),
}

impl ReadError {
    fn describe(&self) -> String {
        match self {
            ReadError::NotFound => "file not found".into(),
            ReadError::IsDir => "is a directory".into(),
            ReadError::NotRegular => "not a regular file; skipped".into(),
            ReadError::TooLarge(n) => format!("{n} bytes, larger than 4 MiB; skipped"),
            ReadError::NotText => "not a text file (NUL byte in its first 8 KiB); skipped".into(),
            ReadError::Io(e) => format!("cannot read: {e}"),
        }
    }
}

fn read_file(canonical: &Path) -> Result<OnDisk, ReadError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(canonical)
        .map_err(io_error)?;
    // fstat before reading: the metadata describes the file whose bytes we
    // are about to take, not whatever the path names later.
    let meta = file.metadata().map_err(io_error)?;
    if meta.is_dir() {
        return Err(ReadError::IsDir);
    }
    if !meta.is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge(meta.len()));
    }
    let mut raw = Vec::with_capacity(meta.len() as usize);
    // The file may grow while we read; never take more than the cap + 1.
    read_capped(&file, &mut raw).map_err(io_error)?;
    if raw.len() as u64 > MAX_FILE_BYTES {
        return Err(ReadError::TooLarge(raw.len() as u64));
    }
    if raw[..raw.len().min(TEXT_SNIFF_BYTES)].contains(&0) {
        return Err(ReadError::NotText);
    }
    Ok(OnDisk {
        path: canonical.to_path_buf(),
        raw,
        meta,
    })
}

fn read_capped(file: &File, raw: &mut Vec<u8>) -> io::Result<()> {
    let mut limited = file.take(MAX_FILE_BYTES + 1);
    loop {
        match limited.read_to_end(raw) {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

fn io_error(e: io::Error) -> ReadError {
    match e.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound,
        _ if e.raw_os_error() == Some(libc::EISDIR) => ReadError::IsDir,
        _ if e.raw_os_error() == Some(libc::ENOTDIR) => ReadError::NotFound,
        _ => ReadError::Io(e),
    }
}

/// `path` made absolute and canonical when it exists; when it does not, its
/// parent canonicalized and the name appended; else as given.
pub(crate) fn canonical_or_given(path: &Path, cwd: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    if let Ok(c) = abs.canonicalize() {
        return c;
    }
    if let (Some(parent), Some(name)) = (abs.parent(), abs.file_name()) {
        if let Ok(p) = parent.canonicalize() {
            return p.join(name);
        }
    }
    abs
}

/// One build's state: what was loaded, in order, and what went wrong.
pub(crate) struct Loader<'a> {
    pub opts: &'a Options,
    pub cwd: PathBuf,
    pub managed_dir: PathBuf,
    pub user_dir: PathBuf,
    /// `opts.for_paths`, absolute and canonical where they exist.
    pub targets: Vec<PathBuf>,
    processed: HashSet<PathBuf>,
    out: UserContext,
}

impl<'a> Loader<'a> {
    pub fn new(opts: &'a Options, already_loaded: &HashSet<PathBuf>) -> Self {
        let cwd = opts.cwd.canonicalize().unwrap_or_else(|_| opts.cwd.clone());
        let canon = |p: &Path| canonical_or_given(p, &cwd);
        Loader {
            managed_dir: canon(&opts.managed_dir),
            user_dir: canon(&opts.user_dir),
            targets: opts.for_paths.iter().map(|p| canon(p)).collect(),
            processed: already_loaded.clone(),
            out: UserContext::default(),
            cwd,
            opts,
        }
    }

    pub fn finish(self) -> UserContext {
        self.out
    }

    pub(crate) fn warn(&mut self, line: String) {
        self.out.warnings.push(line);
    }

    /// A project, local or managed file: its imports stay in the working
    /// directory.
    pub fn cwd_source(&self, label: &'static str, origin: Origin) -> Source {
        Source {
            label,
            origin,
            import_root: Some(self.cwd.clone()),
            follow_imports: true,
            is_memory: false,
        }
    }

    /// Loads a top-level instruction file, if it exists, and its imports.
    pub fn load_file(&mut self, path: &Path, source: &Source) {
        let Ok(canonical) = path.canonicalize() else {
            return; // absent (or a dangling link): nothing to load
        };
        if self.processed.contains(&canonical) {
            return;
        }
        match read_file(&canonical) {
            Ok(read) => {
                let text = String::from_utf8_lossy(&read.raw).into_owned();
                let fm = frontmatter::parse(&text);
                self.emit(read, text, fm, source, None, 0, false);
            }
            Err(ReadError::NotFound | ReadError::IsDir) => {}
            Err(e) => {
                let what = e.describe();
                self.warn(format!("{}: {what}", canonical.display()));
            }
        }
    }

    /// Loads the `.md` files under `dir` (recursively, sorted by path):
    /// unconditional rules first (unless `mode` says only conditional), then
    /// the conditional rules whose `paths:`, relative to `base`, match one of
    /// `targets`.
    pub fn load_rules(
        &mut self,
        dir: &Path,
        base: &Path,
        source: &Source,
        mode: RuleMode,
        targets: &[PathBuf],
    ) {
        let mut candidates = Vec::new();
        for entry in walkdir::WalkDir::new(dir).follow_links(true) {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    // A missing rules directory is the common case.
                    let missing = e
                        .io_error()
                        .is_some_and(|io| io.kind() == io::ErrorKind::NotFound);
                    if !missing {
                        self.warn(format!("{}: {e}", dir.display()));
                    }
                    continue;
                }
            };
            let is_md = entry.path().extension().is_some_and(|x| x == "md");
            if entry.file_type().is_file() && is_md {
                candidates.push(entry.into_path());
            }
        }
        // Path's order compares component by component: `a.md` < `a/b.md` <
        // `b.md`, the order a sorted walk visits them in.
        candidates.sort();

        let mut unconditional = Vec::new();
        let mut conditional = Vec::new();
        for path in candidates {
            let Ok(canonical) = path.canonicalize() else {
                continue;
            };
            if self.processed.contains(&canonical) {
                continue;
            }
            let read = match read_file(&canonical) {
                Ok(r) => r,
                Err(ReadError::NotFound | ReadError::IsDir) => continue,
                Err(e) => {
                    let what = e.describe();
                    self.warn(format!("{}: {what}", canonical.display()));
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&read.raw).into_owned();
            let fm = frontmatter::parse(&text);
            match &fm.paths {
                None => unconditional.push((read, text, fm)),
                Some(patterns) => {
                    let (rule, errors) = PathRule::new(base, patterns);
                    for e in errors {
                        self.warn(format!("{}: paths: {e}", canonical.display()));
                    }
                    if targets.iter().any(|t| rule.matches(t)) {
                        conditional.push((read, text, fm));
                    }
                }
            }
        }
        if mode == RuleMode::All {
            for (read, text, fm) in unconditional {
                self.emit(read, text, fm, source, None, 0, false);
            }
        }
        for (read, text, fm) in conditional {
            self.emit(read, text, fm, source, None, 0, true);
        }
    }

    /// Turns a read file into an injected one, then follows its imports.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        read: OnDisk,
        lossy: String,
        fm: FrontMatter,
        source: &Source,
        imported_by: Option<&Path>,
        depth: usize,
        conditional: bool,
    ) {
        if !self.processed.insert(read.path.clone()) {
            return;
        }
        if let Some(e) = &fm.error {
            self.warn(format!(
                "{}: invalid front matter, injected as is: {}",
                read.path.display(),
                first_line(e)
            ));
        }
        let body = &lossy[fm.body_start..];
        let (mut text, _) = comments::strip_block_comments(body);
        if source.is_memory {
            text = memory::truncate(&text).0;
        }
        if text.trim().is_empty() {
            return;
        }
        let chars = text.chars().count();
        if chars > LARGE_FILE_CHARS {
            self.warn(format!(
                "{}: {chars} characters, over the {LARGE_FILE_CHARS} recommended for an instruction file",
                read.path.display()
            ));
        }
        let kind = if text == lossy {
            Kind::Full
        } else {
            Kind::Processed
        };
        let found = if source.follow_imports {
            let base = read.path.parent().unwrap_or(Path::new("/"));
            imports::find_imports(&text, base, self.opts.home.as_deref())
        } else {
            Vec::new()
        };
        let importer = read.path.clone();
        self.out.files.push(InjectedFile {
            path: read.path,
            label: if imported_by.is_some() {
                "import".to_string()
            } else {
                source.label.to_string()
            },
            origin: source.origin,
            kind,
            text,
            raw: read.raw,
            meta: read.meta,
            imported_by: imported_by.map(Path::to_path_buf),
            conditional,
        });
        for import in found {
            self.import(&import, &importer, source, depth + 1);
        }
    }

    fn import(&mut self, import: &imports::Import, importer: &Path, source: &Source, depth: usize) {
        // Imports of an import have its importer's origin and boundary.
        let prefix = format!("import {} from {}", import.written, importer.display());
        let Some(target) = &import.target else {
            self.warn(format!("{prefix}: no home directory to resolve ~ against"));
            return;
        };
        let canonical = match target.canonicalize() {
            Ok(c) => c,
            Err(e) => {
                let what = io_error(e).describe();
                self.warn(format!("{prefix}: {what}"));
                return;
            }
        };
        if self.processed.contains(&canonical) {
            return; // a cycle, or loaded already: once is enough
        }
        if let Some(root) = source.import_root.as_ref() {
            let outside = !canonical.starts_with(root) || !lexical(target).starts_with(root);
            if outside && !self.opts.allow_external_imports {
                self.warn(format!(
                    "{prefix}: {} is outside the working directory {}; not loaded (external imports are not allowed)",
                    canonical.display(),
                    root.display()
                ));
                return;
            }
        }
        if depth > MAX_IMPORT_DEPTH {
            self.warn(format!(
                "{prefix}: imports nest deeper than {MAX_IMPORT_DEPTH} levels; not loaded"
            ));
            return;
        }
        if let Some(ext) = non_text_extension(target) {
            self.warn(format!(
                "{prefix}: {ext} is not a text file extension Claude Code imports; skipped"
            ));
            return;
        }
        match read_file(&canonical) {
            Ok(read) => {
                let text = String::from_utf8_lossy(&read.raw).into_owned();
                let fm = frontmatter::parse(&text);
                self.emit(read, text, fm, source, Some(importer), depth, false);
            }
            Err(e) => {
                let what = e.describe();
                self.warn(format!("{prefix}: {what}"));
            }
        }
    }
}

/// `path` with `.` and `..` resolved by name, as Node's `path.resolve`
/// does (no file system access).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The extension of `path` (as Node's `path.extname` finds it, lowercased)
/// when it is not one Claude Code imports; `None` for a text extension or
/// none at all.
pub(crate) fn non_text_extension(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_string_lossy();
    let dot = name.rfind('.').filter(|&i| i > 0)?;
    // A name made only of dots (`..`) has no extension.
    if name[..dot].chars().all(|c| c == '.') {
        return None;
    }
    let ext = name[dot..].to_lowercase();
    (!TEXT_EXTENSIONS.contains(&ext.as_str())).then_some(ext)
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}
