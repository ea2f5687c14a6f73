//! What `cp -a` keeps of a file besides its bytes: mode (set-user-ID,
//! set-group-ID and sticky bits too), owner and group, and the extended
//! attributes the caller can see, POSIX ACLs (`system.posix_acl_access`)
//! among them, `user.*`, `security.*` (an SELinux label, file
//! capabilities) and, for root, `trusted.*`.
//!
//! fsview replaces a file with a new one, so everything here is read from
//! the old file ([`Meta::of`]) and given to the new one ([`Meta::give`])
//! through file descriptors, never by name. The order matters: the owner
//! first (a `chown` clears set-user-ID bits and file capabilities), then
//! the mode, then the attributes (an ACL sets the group bits of the mode to
//! its mask, which the old mode already shows). What cannot be given (a
//! group the caller is not in, an attribute the caller may not set) is
//! [`Unkept`]: the caller then writes the file in place instead, which
//! keeps everything by not replacing the file at all.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;

const ACL_ACCESS: &CStr = c"system.posix_acl_access";

/// A file's metadata, as far as a copy keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    /// Extended attributes by name, in the order the kernel lists them.
    pub xattrs: Vec<(CString, Vec<u8>)>,
}

/// What could not be given to the new file, for the message.
#[derive(Debug)]
pub struct Unkept {
    pub what: String,
    pub err: io::Error,
}

impl Meta {
    /// The metadata of the open file `f`.
    pub fn of(f: &File) -> io::Result<Meta> {
        let m = f.metadata()?;
        let mut xattrs = Vec::new();
        for name in list(f)? {
            match get(f, &name) {
                Ok(Some(v)) => xattrs.push((name, v)),
                // Removed since it was listed.
                Ok(None) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Meta {
            mode: m.mode() & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
            xattrs,
        })
    }

    /// Give this metadata to the open file `f` (a new file, or one whose
    /// metadata moved); what is already the same is left alone.
    pub fn give(&self, f: &File) -> Result<(), Unkept> {
        let fd = f.as_raw_fd();
        let now = Meta::of(f).map_err(|err| Unkept {
            what: "its metadata".into(),
            err,
        })?;
        if now.uid != self.uid || now.gid != self.gid {
            // SAFETY: fchown on a file descriptor we own.
            if unsafe { libc::fchown(fd, self.uid, self.gid) } != 0 {
                let what = if now.uid == self.uid {
                    format!("its group (gid {})", self.gid)
                } else {
                    format!("its owner (uid {}, gid {})", self.uid, self.gid)
                };
                return Err(Unkept {
                    what,
                    err: io::Error::last_os_error(),
                });
            }
        }
        // After the chown, which clears set-user-ID and set-group-ID.
        // SAFETY: fchmod on a file descriptor we own.
        if unsafe { libc::fchmod(fd, self.mode) } != 0 {
            return Err(Unkept {
                what: format!("its mode ({:04o})", self.mode),
                err: io::Error::last_os_error(),
            });
        }
        // An ACL the new file got from its directory's default ACL, which
        // the old file did not have, goes: the mode says it all.
        if !self.xattrs.iter().any(|(n, _)| n.as_c_str() == ACL_ACCESS)
            && now.xattrs.iter().any(|(n, _)| n.as_c_str() == ACL_ACCESS)
        {
            // SAFETY: a NUL-terminated name and a file descriptor we own.
            if unsafe { libc::fremovexattr(fd, ACL_ACCESS.as_ptr()) } != 0 {
                return Err(Unkept {
                    what: "its lack of an ACL".into(),
                    err: io::Error::last_os_error(),
                });
            }
            // SAFETY: as above; the ACL's removal may have moved the mode.
            if unsafe { libc::fchmod(fd, self.mode) } != 0 {
                return Err(Unkept {
                    what: format!("its mode ({:04o})", self.mode),
                    err: io::Error::last_os_error(),
                });
            }
        }
        for (name, value) in &self.xattrs {
            if now.xattrs.iter().any(|(n, v)| n == name && v == value) {
                continue;
            }
            // SAFETY: a NUL-terminated name and a buffer that live across
            // the call, on a file descriptor we own.
            let rc = unsafe {
                libc::fsetxattr(fd, name.as_ptr(), value.as_ptr().cast(), value.len(), 0)
            };
            if rc != 0 {
                return Err(Unkept {
                    what: format!("its extended attribute {}", name.to_string_lossy()),
                    err: io::Error::last_os_error(),
                });
            }
        }
        // A set-group-ID bit the kernel dropped (the caller is not in the
        // group) is metadata not kept.
        let after = f.metadata().map_err(|err| Unkept {
            what: "its metadata".into(),
            err,
        })?;
        if after.mode() & 0o7777 != self.mode {
            return Err(Unkept {
                what: format!("its mode ({:04o})", self.mode),
                err: io::Error::from_raw_os_error(libc::EPERM),
            });
        }
        Ok(())
    }
}

/// The names of the extended attributes of `f` the caller can see.
fn list(f: &File) -> io::Result<Vec<CString>> {
    let fd = f.as_raw_fd();
    let mut buf = vec![0u8; 1024];
    loop {
        // SAFETY: a buffer of `buf.len()` bytes we own.
        let n = unsafe { libc::flistxattr(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            buf.truncate(n as usize);
            break;
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ERANGE) => {
                // SAFETY: a size query: no buffer is written.
                let want = unsafe { libc::flistxattr(fd, std::ptr::null_mut(), 0) };
                if want < 0 {
                    return Err(io::Error::last_os_error());
                }
                buf = vec![0u8; want as usize + 64];
            }
            // No extended attributes on this filesystem at all.
            Some(libc::ENOTSUP) => return Ok(Vec::new()),
            _ => return Err(e),
        }
    }
    Ok(buf
        .split(|&b| b == 0)
        .filter(|n| !n.is_empty())
        .filter_map(|n| CString::new(n).ok())
        .collect())
}

/// The value of attribute `name` of `f`; `None` when it is gone.
fn get(f: &File, name: &CStr) -> io::Result<Option<Vec<u8>>> {
    let fd = f.as_raw_fd();
    let mut buf = vec![0u8; 256];
    loop {
        // SAFETY: a NUL-terminated name and a buffer we own.
        let n = unsafe { libc::fgetxattr(fd, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            buf.truncate(n as usize);
            return Ok(Some(buf));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ERANGE) => {
                // SAFETY: a size query: no buffer is written.
                let want = unsafe { libc::fgetxattr(fd, name.as_ptr(), std::ptr::null_mut(), 0) };
                if want < 0 {
                    return Err(io::Error::last_os_error());
                }
                buf = vec![0u8; want as usize + 64];
            }
            Some(libc::ENODATA) => return Ok(None),
            _ => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_attributes_and_mode_are_given() {
        let d = tempfile::tempdir().unwrap();
        let a = File::create(d.path().join("a")).unwrap();
        let b = File::create(d.path().join("b")).unwrap();
        // SAFETY: fchmod and fsetxattr on descriptors we own.
        unsafe {
            libc::fchmod(a.as_raw_fd(), 0o640);
            let v = b"v1";
            if libc::fsetxattr(a.as_raw_fd(), c"user.k".as_ptr(), v.as_ptr().cast(), 2, 0) != 0 {
                panic!(
                    "this filesystem takes no user.* attributes: {}",
                    io::Error::last_os_error()
                );
            }
        }
        let m = Meta::of(&a).unwrap();
        assert_eq!(m.mode, 0o640);
        assert_eq!(m.xattrs, vec![(c"user.k".to_owned(), b"v1".to_vec())]);
        m.give(&b).unwrap();
        assert_eq!(Meta::of(&b).unwrap(), m);
    }
}
