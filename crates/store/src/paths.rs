//! One file, one name.
//!
//! The gate must not be fooled by naming: `./a`, `a/../a`, an absolute path
//! and a symlink all resolve to the canonical path of the file they reach.
//! (A hard link has a canonical path of its own; the gate matches it by
//! device and inode instead.) A path that does not exist yet resolves
//! through its existing parent, so a new file gets the name it will have.

use std::fs::Metadata;
use std::path::{Component, Path, PathBuf};

use crate::error::{quote, Error, Result};
use crate::fingerprint;

/// A path as the gate sees it.
#[derive(Debug)]
pub enum Resolved {
    /// It exists: its canonical path and the stat of what it reaches.
    Existing { canonical: PathBuf, meta: Metadata },
    /// Nothing is there (yet); the canonical path it would have.
    Missing { canonical: PathBuf },
}

impl Resolved {
    pub fn canonical(&self) -> &Path {
        match self {
            Resolved::Existing { canonical, .. } | Resolved::Missing { canonical } => canonical,
        }
    }
}

/// Resolve `path` (relative to `cwd`).
pub fn resolve(cwd: &Path, path: &Path) -> Result<Resolved> {
    if path.as_os_str().is_empty() {
        return Err(Error::new("an empty path was given; name a file"));
    }
    let abs = cwd.join(path);
    match std::fs::canonicalize(&abs) {
        Ok(canonical) => {
            let meta = std::fs::symlink_metadata(&canonical)
                .map_err(|e| Error::io("inspect", path, &e))?;
            Ok(Resolved::Existing { canonical, meta })
        }
        Err(e) if fingerprint::is_gone(&e) => {
            // A "magic" link (/dev/stdin -> /proc/self/fd/0 -> pipe:[N])
            // reaches something no path names: it exists all the same.
            if let Ok(meta) = std::fs::metadata(&abs) {
                return Ok(Resolved::Existing {
                    canonical: normalize(&abs),
                    meta,
                });
            }
            if let Ok(m) = std::fs::symlink_metadata(&abs) {
                if m.file_type().is_symlink() {
                    return Err(Error::new(format!(
                        "{} is a dangling symbolic link; fix the link or name its target",
                        quote(path)
                    )));
                }
            }
            if e.raw_os_error() == Some(libc::ENOTDIR) {
                return Err(Error::new(format!(
                    "{}: a component of the path is not a directory; check the path",
                    quote(path)
                )));
            }
            Ok(Resolved::Missing {
                canonical: canonical_missing(&abs),
            })
        }
        Err(e) => Err(Error::io("resolve", path, &e)),
    }
}

/// The canonical path a missing file would have: its deepest existing
/// ancestor canonicalized, then the rest normalized lexically.
fn canonical_missing(abs: &Path) -> PathBuf {
    let normal = normalize(abs);
    let mut base = normal.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(base) {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return normal,
        }
    }
}

/// Remove `.` and resolve `..` lexically.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// How to show a canonical path to the user: relative to `cwd` when it lies
/// below it, else absolute.
pub fn display(cwd: &Path, canonical: &Path) -> PathBuf {
    match canonical.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_path_buf(),
        _ => canonical.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_one_file_agree() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("a"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
        for name in ["a", "./a", "sub/../a", "link"] {
            let r = resolve(&root, Path::new(name)).unwrap();
            assert_eq!(r.canonical(), root.join("a"), "{name}");
        }
        let r = resolve(&root, Path::new("sub/../new.rs")).unwrap();
        assert!(matches!(r, Resolved::Missing { .. }));
        assert_eq!(r.canonical(), root.join("new.rs"));
        let r = resolve(&root, Path::new("x/y/z.rs")).unwrap();
        assert_eq!(r.canonical(), root.join("x/y/z.rs"));
    }

    #[test]
    fn dangling_link_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(d.path().join("nowhere"), d.path().join("l")).unwrap();
        let e = resolve(d.path(), Path::new("l")).unwrap_err();
        assert_eq!(
            e.message(),
            "l is a dangling symbolic link; fix the link or name its target"
        );
    }
}
