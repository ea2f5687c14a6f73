//! The export document: one session as a self-contained JSON document that
//! `fsview-session import` reads back, in this clone or in another one, on
//! this machine or on another (a CI runner that takes over a pipeline).
//!
//! It is a data contract, versioned by its `fsview_export` field and
//! documented in fsview-json(7). [`VERSION`] is what [`document`] writes;
//! [`parse`] reads it and every older version (1, whose paths are all
//! absolute), and refuses a newer one before anything is touched.
//!
//! **Paths travel relative to the work tree.** An export taken inside a git
//! work tree names the files below its top relative to that top
//! (`src/main.rs`) and keeps every other path absolute; an import maps the
//! relative ones onto the top of the work tree it runs in (or `--root`), at
//! whatever path that clone lives.
//!
//! **Identity does not travel; content does.** A file's device and inode
//! name a file object only on the machine, and the boot, where they were
//! taken. A document carries the exporting machine's boot id: imported on
//! that same boot, fingerprints keep their identity; anywhere else they
//! lose it ([`Stat::forget_identity`]), so nothing there can match them by
//! inode, and the first check of each file re-identifies it by content:
//! the same bytes are fresh and the file's identity there is adopted, other
//! bytes are `modified` (`content`). A view fingerprinted by its stat alone
//! (a range deep inside a huge file) has no content to be re-identified by:
//! it reads `modified` there until it is read again (fail closed).

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use base64::Engine;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::error::{escape_bytes, Error, Result};
use crate::fingerprint::{self, Change, FileType, Fingerprint, Hash, Stat};
use crate::inspect::{ContextRow, Dump, DumpFile, EventRecord};
use crate::remind::Told;
use crate::store::{FileRecord, ViewRecord};
use crate::view::{Kind, Released, Source};

/// The version [`document`] writes.
pub const VERSION: u64 = 3;

/// Where the relative paths of a document are rooted.
#[derive(Clone, Debug, Default)]
pub struct Root {
    /// The top of the work tree (canonical), if any.
    pub top: Option<PathBuf>,
}

/// The canonical top of the git work tree holding `cwd`, as git itself
/// says (`git rev-parse --show-toplevel`); `None` outside a work tree or
/// when git cannot be run.
pub fn worktree_top(cwd: &Path) -> Option<PathBuf> {
    let out = std::process::Command::new("git")
        .arg("--no-optional-locks")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let mut bytes = out.stdout;
    while bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    if bytes.is_empty() {
        return None;
    }
    let top = PathBuf::from(OsString::from_vec(bytes));
    Some(std::fs::canonicalize(&top).unwrap_or(top))
}

/// This boot of this machine (Linux's `boot_id`): device and inode numbers
/// name the same file objects only within it.
pub fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_string())
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

/// `p` into `m` under `key`, with `{key}_bytes` (base64, exact) when it is
/// not UTF-8: how every fsview document and `--json` record names a path.
pub fn put_path(m: &mut Map<String, Value>, key: &str, p: &Path) {
    let bytes = p.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            m.insert(key.into(), s.into());
        }
        Err(_) => {
            m.insert(
                key.into(),
                String::from_utf8_lossy(bytes).into_owned().into(),
            );
            m.insert(format!("{key}_bytes"), b64().encode(bytes).into());
        }
    }
}

/// The path [`put_path`] put in `m` under `key` (exact, from
/// `{key}_bytes`, when it was not UTF-8).
pub fn get_path(m: &Value, key: &str) -> Option<PathBuf> {
    if let Some(b) = m.get(format!("{key}_bytes")).and_then(Value::as_str) {
        let bytes = b64().decode(b).ok()?;
        return Some(PathBuf::from(OsString::from_vec(bytes)));
    }
    m.get(key).and_then(Value::as_str).map(PathBuf::from)
}

/// A canonical path as the document names it: relative to `top` when
/// below it, else as it is.
fn portable<'a>(p: &'a Path, top: Option<&Path>) -> &'a Path {
    match top.map(|t| p.strip_prefix(t)) {
        Some(Ok(rel)) if !rel.as_os_str().is_empty() => rel,
        _ => p,
    }
}

fn fingerprint_json(fp: &Fingerprint) -> Value {
    json!({
        "dev": fp.stat.dev,
        "ino": fp.stat.ino,
        "btime_ns": fp.stat.btime_ns,
        "ftype": fp.stat.ftype.code(),
        "size": fp.stat.size,
        "mtime_ns": fp.stat.mtime_ns,
        "ctime_ns": fp.stat.ctime_ns,
        "taken_ns": fp.taken_ns,
        "sha256": fp.hash.as_ref().map(fingerprint::hex),
    })
}

/// Session `d` as a document of [`VERSION`], with the paths below
/// `root.top` relative to it.
pub fn document(d: &Dump, root: &Root, now_ns: i64) -> Value {
    let top = root.top.as_deref();
    let files: Vec<Value> = d
        .files
        .iter()
        .map(|f| {
            let mut m = Map::new();
            put_path(&mut m, "path", portable(&f.record.path, top));
            m.insert(
                "fingerprint".into(),
                fingerprint_json(&f.record.fingerprint),
            );
            m.insert("viewed_ns".into(), f.record.viewed_ns.into());
            let views: Vec<Value> = f
                .views
                .iter()
                .map(|v| {
                    json!({
                        "kind": v.kind.as_str(),
                        "source": v.source.as_str(),
                        "offset": v.offset,
                        "lines": v.lines,
                        "total_lines": v.total_lines,
                        "shown_sha256": fingerprint::hex(&v.shown_hash),
                        "text_sha256": v.text_hash.as_ref().map(fingerprint::hex),
                        "viewed_ns": v.viewed_ns,
                        "origin": v.origin,
                        "released": v.released.map(|(why, _)| why.as_str()),
                        "released_ns": v.released.map(|(_, at)| at),
                    })
                })
                .collect();
            m.insert("views".into(), views.into());
            m.insert(
                "told".into(),
                match &f.told {
                    None => Value::Null,
                    Some(t) => json!({
                        "change": t.change.as_str(),
                        "fingerprint": t.stat.map(|stat| fingerprint_json(&Fingerprint {
                            stat,
                            taken_ns: t.taken_ns,
                            hash: t.hash,
                            quick: None,
                        })),
                        "text_sha256": t.text_hash.as_ref().map(fingerprint::hex),
                        "told_ns": t.told_ns,
                    }),
                },
            );
            Value::Object(m)
        })
        .collect();
    let texts: Map<String, Value> = d
        .texts
        .iter()
        .map(|(h, body)| (fingerprint::hex(h), b64().encode(body).into()))
        .collect();
    let context: Vec<Value> = d
        .context
        .iter()
        .map(|c| {
            let mut m = Map::new();
            m.insert("part".into(), c.part.clone().into());
            match std::str::from_utf8(&c.body) {
                Ok(s) => m.insert("body".into(), s.into()),
                Err(_) => m.insert("body_base64".into(), b64().encode(&c.body).into()),
            };
            m.insert("built_ns".into(), c.built_ns.into());
            m.insert("meta".into(), c.meta.clone().into());
            Value::Object(m)
        })
        .collect();
    let nested: Vec<Value> = d
        .nested
        .iter()
        .map(|p| {
            let mut m = Map::new();
            put_path(&mut m, "path", portable(p, top));
            Value::Object(m)
        })
        .collect();
    let events: Vec<Value> = d
        .events
        .iter()
        .map(|e| {
            let mut m = Map::new();
            m.insert("at_ns".into(), e.at_ns.into());
            m.insert("tool".into(), e.tool.clone().into());
            m.insert("action".into(), e.action.clone().into());
            match &e.path {
                Some(p) => put_path(&mut m, "path", portable(p, top)),
                None => {
                    m.insert("path".into(), Value::Null);
                }
            }
            m.insert("verdict".into(), e.verdict.clone().into());
            m.insert("detail".into(), e.detail.clone().into());
            Value::Object(m)
        })
        .collect();
    let mut doc = Map::new();
    doc.insert("fsview_export".into(), VERSION.into());
    doc.insert("sid".into(), d.sid.clone().into());
    doc.insert("parent".into(), d.parent.clone().into());
    doc.insert("created_ns".into(), d.created_ns.into());
    doc.insert("exported".into(), timestamp(now_ns).into());
    match top {
        Some(t) => put_path(&mut doc, "root", t),
        None => {
            doc.insert("root".into(), Value::Null);
        }
    }
    doc.insert("boot_id".into(), boot_id().into());
    doc.insert("files".into(), files.into());
    doc.insert("texts".into(), texts.into());
    doc.insert("context".into(), context.into());
    doc.insert("nested".into(), nested.into());
    doc.insert("events".into(), events.into());
    Value::Object(doc)
}

/// RFC 3339 in UTC, to the second: "2023-11-14T22:13:20Z".
fn timestamp(ns: i64) -> String {
    match jiff::Timestamp::from_second(ns.div_euclid(1_000_000_000)) {
        Ok(t) => t.to_string(),
        Err(_) => "-".to_string(),
    }
}

#[derive(Deserialize)]
struct DocHead {
    fsview_export: Option<Value>,
}

#[derive(Deserialize)]
struct Doc {
    sid: String,
    parent: Option<String>,
    created_ns: i64,
    #[serde(default)]
    boot_id: Option<String>,
    files: Vec<DocFile>,
    texts: BTreeMap<String, String>,
    context: Vec<DocContext>,
    nested: Vec<DocPath>,
    events: Vec<DocEvent>,
}

#[derive(Deserialize)]
struct DocPath {
    path: String,
    path_bytes: Option<String>,
}

#[derive(Deserialize)]
struct DocFile {
    #[serde(flatten)]
    path: DocPath,
    fingerprint: DocFingerprint,
    viewed_ns: i64,
    views: Vec<DocView>,
    #[serde(default)]
    told: Option<DocTold>,
}

#[derive(Deserialize)]
struct DocFingerprint {
    dev: u64,
    ino: u64,
    btime_ns: Option<i64>,
    ftype: i64,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    taken_ns: i64,
    sha256: Option<String>,
}

#[derive(Deserialize)]
struct DocView {
    kind: String,
    source: String,
    offset: u64,
    lines: u64,
    total_lines: Option<u64>,
    shown_sha256: String,
    text_sha256: Option<String>,
    viewed_ns: i64,
    #[serde(default)]
    origin: Option<String>,
    #[serde(default)]
    released: Option<String>,
    #[serde(default)]
    released_ns: Option<i64>,
}

#[derive(Deserialize)]
struct DocTold {
    change: String,
    fingerprint: Option<DocFingerprint>,
    text_sha256: Option<String>,
    told_ns: i64,
}

#[derive(Deserialize)]
struct DocContext {
    part: String,
    body: Option<String>,
    body_base64: Option<String>,
    built_ns: i64,
    meta: Option<String>,
}

#[derive(Deserialize)]
struct DocEvent {
    at_ns: i64,
    tool: String,
    action: String,
    path: Option<String>,
    path_bytes: Option<String>,
    verdict: Option<String>,
    detail: Option<String>,
}

/// Why a document is not an export we can import.
fn malformed(what: impl std::fmt::Display) -> Error {
    Error::new(format!(
        "standard input is not a valid fsview export: {what}; import what `fsview-session export` wrote"
    ))
}

/// What [`parse`] found besides the session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The document's version.
    pub version: u64,
    /// The directory its relative paths were mapped onto, if it had any.
    pub mapped_onto: Option<PathBuf>,
    /// Whether fingerprints kept their identity (imported on the boot
    /// that exported them).
    pub same_boot: bool,
}

/// Parse and check a document of any version this build reads, all of it,
/// into a dump. Relative paths are mapped onto the directory `root` gives
/// (asked only when the document has any; its error is the import's).
pub fn parse(input: &[u8], root: impl FnOnce() -> Result<PathBuf>) -> Result<(Dump, Parsed)> {
    let value: Value =
        serde_json::from_slice(input).map_err(|e| malformed(format!("not JSON ({e})")))?;
    let head: DocHead =
        serde_json::from_value(value.clone()).map_err(|_| malformed("not a JSON object"))?;
    let version = match head.fsview_export {
        Some(Value::Number(n)) if matches!(n.as_u64(), Some(1..=VERSION)) => {
            n.as_u64().unwrap_or(VERSION)
        }
        Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > VERSION) => {
            return Err(Error::new(format!(
                "standard input is an fsview export of version {n}, newer than this fsview reads ({VERSION}); upgrade fsview"
            )))
        }
        _ => {
            return Err(malformed(format!(
                "no \"fsview_export\" version (1 to {VERSION}) in it"
            )))
        }
    };
    let doc: Doc = serde_json::from_value(value).map_err(malformed)?;
    let same_boot = version >= 2 && doc.boot_id.is_some() && doc.boot_id == boot_id();
    let mut paths = Paths {
        version,
        root: Some(Box::new(root)),
        top: None,
    };
    let mut files = Vec::with_capacity(doc.files.len());
    for (i, f) in doc.files.iter().enumerate() {
        let at = |field: &str| format!("files[{i}].{field}");
        let path = paths.resolve(&f.path, &at("path"))?;
        let mut fingerprint = doc_fingerprint(&f.fingerprint, &at("fingerprint"))?;
        if !same_boot {
            fingerprint.stat.forget_identity();
        }
        let record = FileRecord {
            id: 0,
            path,
            fingerprint,
            viewed_ns: f.viewed_ns,
        };
        let mut views = Vec::with_capacity(f.views.len());
        for (j, v) in f.views.iter().enumerate() {
            let at = |field: &str| format!("files[{i}].views[{j}].{field}");
            if v.offset == 0 {
                return Err(malformed(format!(
                    "{}: 0 is not a line number (lines count from 1)",
                    at("offset")
                )));
            }
            if let Some(total) = v.total_lines {
                if v.lines > 0 && (v.offset - 1).saturating_add(v.lines) > total {
                    return Err(malformed(format!(
                        "{}: {} lines from line {} run past the file's {total}",
                        at("lines"),
                        v.lines,
                        v.offset
                    )));
                }
            }
            views.push(ViewRecord {
                kind: Kind::parse(&v.kind).ok_or_else(|| {
                    malformed(format!("{}: {:?} is not a view kind", at("kind"), v.kind))
                })?,
                source: Source::parse(&v.source).ok_or_else(|| {
                    malformed(format!(
                        "{}: {:?} is not a view source",
                        at("source"),
                        v.source
                    ))
                })?,
                offset: v.offset,
                lines: v.lines,
                total_lines: v.total_lines,
                shown_hash: hash(&v.shown_sha256, &at("shown_sha256"))?,
                text_hash: v
                    .text_sha256
                    .as_deref()
                    .map(|h| hash(h, &at("text_sha256")))
                    .transpose()?,
                viewed_ns: v.viewed_ns,
                origin: v.origin.clone(),
                // Another clone's conversations are none of this one's.
                conversation: None,
                released: match &v.released {
                    None => None,
                    Some(why) => Some((
                        Released::parse(why).ok_or_else(|| {
                            malformed(format!(
                                "{}: {why:?} is not a reason a view was released",
                                at("released")
                            ))
                        })?,
                        v.released_ns.unwrap_or(0),
                    )),
                },
            });
        }
        let told = match &f.told {
            None => None,
            Some(t) => {
                let at = |field: &str| format!("files[{i}].told.{field}");
                let change = match t.change.as_str() {
                    "content" => Change::Content,
                    "replaced" => Change::Replaced,
                    "deleted" => Change::Deleted,
                    "type" => Change::Type,
                    other => {
                        return Err(malformed(format!(
                            "{}: {other:?} is not a change",
                            at("change")
                        )))
                    }
                };
                let fp = t
                    .fingerprint
                    .as_ref()
                    .map(|fp| doc_fingerprint(fp, &at("fingerprint")))
                    .transpose()?;
                let mut stat = fp.as_ref().map(|fp| fp.stat);
                if let Some(s) = stat.as_mut().filter(|_| !same_boot) {
                    s.forget_identity();
                }
                Some(Told {
                    change,
                    stat,
                    taken_ns: fp.as_ref().map_or(0, |fp| fp.taken_ns),
                    hash: fp.and_then(|fp| fp.hash),
                    text_hash: t
                        .text_sha256
                        .as_deref()
                        .map(|h| hash(h, &at("text_sha256")))
                        .transpose()?,
                    told_ns: t.told_ns,
                })
            }
        };
        files.push(DumpFile {
            record,
            views,
            told,
        });
    }
    let mut seen = HashSet::new();
    for f in &files {
        if !seen.insert(f.record.path.clone()) {
            return Err(malformed(format!(
                "{} is listed twice in files",
                escape_bytes(f.record.path.as_os_str().as_bytes())
            )));
        }
    }
    let mut texts = Vec::with_capacity(doc.texts.len());
    for (key, body) in &doc.texts {
        let at = format!("texts[{key:?}]");
        let h = hash(key, &at)?;
        let body = b64()
            .decode(body)
            .map_err(|e| malformed(format!("{at}: not base64 ({e})")))?;
        // Texts are stored by content: one under another's hash would show
        // a wrong diff later.
        if fingerprint::hash_bytes(&body) != h {
            return Err(malformed(format!(
                "{at}: the text does not match its SHA-256"
            )));
        }
        texts.push((h, body));
    }
    let mut context = Vec::with_capacity(doc.context.len());
    for (i, c) in doc.context.iter().enumerate() {
        if !matches!(c.part.as_str(), "system" | "user" | "injection") {
            return Err(malformed(format!(
                "context[{i}].part: {:?} is not system, user or injection",
                c.part
            )));
        }
        let body = match (&c.body, &c.body_base64) {
            (Some(s), None) => s.as_bytes().to_vec(),
            (None, Some(b)) => b64()
                .decode(b)
                .map_err(|e| malformed(format!("context[{i}].body_base64: not base64 ({e})")))?,
            _ => {
                return Err(malformed(format!(
                    "context[{i}]: needs one of body or body_base64"
                )))
            }
        };
        context.push(ContextRow {
            part: c.part.clone(),
            body,
            built_ns: c.built_ns,
            meta: c.meta.clone(),
        });
    }
    let nested = doc
        .nested
        .iter()
        .enumerate()
        .map(|(i, p)| paths.resolve(p, &format!("nested[{i}].path")))
        .collect::<Result<Vec<_>>>()?;
    let mut events = Vec::with_capacity(doc.events.len());
    for (i, e) in doc.events.iter().enumerate() {
        let path = match &e.path {
            None => None,
            Some(p) => Some(paths.resolve(
                &DocPath {
                    path: p.clone(),
                    path_bytes: e.path_bytes.clone(),
                },
                &format!("events[{i}].path"),
            )?),
        };
        events.push(EventRecord {
            id: 0,
            at_ns: e.at_ns,
            tool: e.tool.clone(),
            action: e.action.clone(),
            path,
            verdict: e.verdict.clone(),
            detail: e.detail.clone(),
        });
    }
    let parsed = Parsed {
        version,
        mapped_onto: paths.top,
        same_boot,
    };
    Ok((
        Dump {
            sid: doc.sid,
            parent: doc.parent,
            created_ns: doc.created_ns,
            files,
            texts,
            context,
            nested,
            events,
        },
        parsed,
    ))
}

type RootFn<'a> = Box<dyn FnOnce() -> Result<PathBuf> + 'a>;

/// The document's paths made absolute: relative ones (version 2 on) onto
/// the root, asked for once, when the first one comes.
struct Paths<'a> {
    version: u64,
    root: Option<RootFn<'a>>,
    top: Option<PathBuf>,
}

impl Paths<'_> {
    fn resolve(&mut self, p: &DocPath, at: &str) -> Result<PathBuf> {
        let path = match &p.path_bytes {
            Some(b) => {
                let bytes = b64()
                    .decode(b)
                    .map_err(|e| malformed(format!("{at}_bytes: not base64 ({e})")))?;
                PathBuf::from(OsString::from_vec(bytes))
            }
            None => PathBuf::from(&p.path),
        };
        let shown = || escape_bytes(path.as_os_str().as_bytes());
        if path.as_os_str().is_empty() || path.as_os_str().as_bytes().contains(&0) {
            return Err(malformed(format!("{at}: {} is not a path", shown())));
        }
        if path.is_absolute() {
            return Ok(path);
        }
        if self.version < 2 {
            return Err(malformed(format!(
                "{at}: {} is not an absolute path",
                shown()
            )));
        }
        // Below the work tree's top, and nowhere else: no `..`, no `.`.
        if !path.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(malformed(format!(
                "{at}: {} is not a plain path below the work tree",
                shown()
            )));
        }
        if self.top.is_none() {
            let root = self.root.take().expect("asked once");
            self.top = Some(root()?);
        }
        Ok(self.top.as_ref().expect("set above").join(path))
    }
}

fn doc_fingerprint(fp: &DocFingerprint, at: &str) -> Result<Fingerprint> {
    if !(0..=6).contains(&fp.ftype) {
        return Err(malformed(format!(
            "{at}.ftype: unknown file type {}",
            fp.ftype
        )));
    }
    Ok(Fingerprint {
        stat: Stat {
            dev: fp.dev,
            ino: fp.ino,
            btime_ns: fp.btime_ns,
            ftype: FileType::from_code(fp.ftype),
            size: fp.size,
            mtime_ns: fp.mtime_ns,
            ctime_ns: fp.ctime_ns,
        },
        taken_ns: fp.taken_ns,
        hash: fp
            .sha256
            .as_deref()
            .map(|h| hash(h, &format!("{at}.sha256")))
            .transpose()?,
        quick: None,
    })
}

/// A SHA-256 in lower- or upper-case hex.
fn hash(s: &str, at: &str) -> Result<Hash> {
    let bad = || malformed(format!("{at}: {s:?} is not a SHA-256 in hex"));
    if s.len() != 64 || !s.is_ascii() {
        return Err(bad());
    }
    let mut h = [0u8; 32];
    for (i, b) in h.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{self, Verdict};
    use crate::show::{self, Request};
    use crate::store::{NewView, Store};

    // What a reminder told travels with the view: the gate refuses the
    // file in the other clone too, until it is read there. Off the boot
    // that exported it, every identity is dropped.
    #[test]
    fn told_state_travels_and_identities_stay_behind() {
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        let (one, two) = (base.join("one"), base.join("two"));
        for dir in [&one, &two] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("a"), "same\n").unwrap();
        }
        let store = Store::open(&base.join("s.db")).unwrap();
        let a = one.join("a");
        let s = show::read(&a, &Request::whole(1 << 20)).unwrap();
        store
            .record("x", &NewView::of_shown(&a, &s, Source::Read))
            .unwrap();
        let id = store.file_by_path("x", &a).unwrap().unwrap().id;
        store
            .write(|c| {
                c.execute(
                    "INSERT INTO told(file_id, change, told_ns) VALUES(?1, 'deleted', 5)",
                    [id],
                )
            })
            .unwrap();
        let root = Root {
            top: Some(one.clone()),
        };
        let mut doc = document(&store.dump("x").unwrap().unwrap(), &root, 0);
        assert_eq!(doc["files"][0]["path"], "a");
        assert_eq!(
            doc["files"][0]["told"],
            json!({"change": "deleted", "fingerprint": null, "text_sha256": null, "told_ns": 5})
        );
        doc["boot_id"] = json!("elsewhere");
        let (dump, parsed) = parse(doc.to_string().as_bytes(), || Ok(two.clone())).unwrap();
        assert_eq!(
            parsed,
            Parsed {
                version: VERSION,
                mapped_onto: Some(two.clone()),
                same_boot: false
            }
        );
        let f = &dump.files[0];
        assert_eq!(f.record.path, two.join("a"));
        assert!(f.record.fingerprint.stat.identity_unknown());
        assert_eq!(f.told.as_ref().map(|t| t.change), Some(Change::Deleted));
        store.load(&dump, "y", false).unwrap();
        let verdict = |sid| {
            gate::decide(Some(&store), sid, &two, Path::new("a"), false)
                .unwrap()
                .verdict
        };
        assert_eq!(verdict("y"), Verdict::Modified(Change::Content));
        // Without what was told, the same bytes are fresh there.
        doc["files"][0]["told"] = Value::Null;
        let (dump, _) = parse(doc.to_string().as_bytes(), || Ok(two.clone())).unwrap();
        store.load(&dump, "z", false).unwrap();
        assert_eq!(verdict("z"), Verdict::Ok);
    }

    // A view the conversation no longer held travels as such, with its
    // origin, and refuses the change in the importing session too; a
    // version 2 document (no such fields) holds every view.
    #[test]
    fn released_views_travel_released() {
        let d = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(d.path()).unwrap();
        std::fs::write(base.join("a"), "one\n").unwrap();
        let store = Store::open(&base.join("s.db")).unwrap();
        let a = base.join("a");
        let s = show::read(&a, &Request::whole(1 << 20)).unwrap();
        store
            .record(
                "x",
                &NewView::of_shown(&a, &s, Source::Read).with_origin(Some("toolu_1")),
            )
            .unwrap();
        store
            .hold_only(
                "x",
                &HashSet::new(),
                crate::held::Scope::All,
                Released::Compaction,
                "t",
            )
            .unwrap();
        let root = Root {
            top: Some(base.clone()),
        };
        let mut doc = document(&store.dump("x").unwrap().unwrap(), &root, 0);
        let v = &doc["files"][0]["views"][0];
        assert_eq!(
            (&v["origin"], &v["released"]),
            (&json!("toolu_1"), &json!("compaction"))
        );
        assert!(v["released_ns"].as_i64().unwrap() > 0);
        let (dump, _) = parse(doc.to_string().as_bytes(), || Ok(base.clone())).unwrap();
        store.load(&dump, "y", false).unwrap();
        let verdict = |sid| {
            gate::decide(Some(&store), sid, &base, Path::new("a"), false)
                .unwrap()
                .verdict
        };
        assert_eq!(verdict("y"), Verdict::NotRead);
        let f = store.file_by_path("y", &a).unwrap().unwrap();
        assert_eq!(
            store.views(f.id).unwrap()[0].origin.as_deref(),
            Some("toolu_1")
        );
        // As version 2 wrote it: held.
        doc["fsview_export"] = json!(2);
        for key in ["origin", "released", "released_ns"] {
            doc["files"][0]["views"][0]
                .as_object_mut()
                .unwrap()
                .remove(key);
        }
        let (dump, parsed) = parse(doc.to_string().as_bytes(), || Ok(base.clone())).unwrap();
        assert_eq!(parsed.version, 2);
        store.load(&dump, "z", false).unwrap();
        assert_eq!(verdict("z"), Verdict::Ok);
        // A reason this build does not know is refused.
        doc["fsview_export"] = json!(3);
        doc["files"][0]["views"][0]["released"] = json!("forgotten");
        let e = parse(doc.to_string().as_bytes(), || Ok(base.clone())).unwrap_err();
        assert!(
            e.message()
                .contains("files[0].views[0].released: \"forgotten\" is not a reason"),
            "{e}"
        );
    }

    // Version 1 documents, all paths absolute, are still read; their
    // identities are dropped (they carry no boot id).
    #[test]
    fn version_1_is_still_read() {
        let doc = br#"{"fsview_export": 1, "sid": "x", "parent": null, "created_ns": 1,
            "files": [{"path": "/w/a.rs", "fingerprint": {"dev": 7, "ino": 9, "btime_ns": 3,
              "ftype": 0, "size": 1, "mtime_ns": 1, "ctime_ns": 1, "taken_ns": 1, "sha256": null},
              "viewed_ns": 1, "views": []}],
            "texts": {}, "context": [], "nested": [], "events": []}"#;
        let (dump, parsed) = parse(doc, || panic!("no relative path")).unwrap();
        assert_eq!(parsed.version, 1);
        assert_eq!(dump.files[0].record.path, Path::new("/w/a.rs"));
        assert!(dump.files[0].record.fingerprint.stat.identity_unknown());
        assert!(dump.files[0].told.is_none());
    }

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let s = 1_000_000_000;
        assert_eq!(timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp(1_700_000_000 * s + 5), "2023-11-14T22:13:20Z");
        assert_eq!(timestamp(-s / 2), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn paths_below_the_top_are_relative() {
        let top = Path::new("/w/repo");
        assert_eq!(
            portable(Path::new("/w/repo/src/a.rs"), Some(top)),
            Path::new("src/a.rs")
        );
        assert_eq!(
            portable(Path::new("/w/repository/a.rs"), Some(top)),
            Path::new("/w/repository/a.rs")
        );
        assert_eq!(portable(top, Some(top)), top);
        assert_eq!(
            portable(Path::new("/etc/hosts"), None),
            Path::new("/etc/hosts")
        );
    }
}
