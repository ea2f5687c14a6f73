//! Errors a user can cause, and the ones they cannot.
//!
//! Every error fsview reports is one line that names what went wrong and says
//! what to do next; the binaries print it as `TOOL: message` and exit 2. The
//! `Error` type keeps that line ready-made so no caller has to phrase it again.

use std::fmt;
use std::io;
use std::path::Path;

/// One error, already phrased for the user.
#[derive(Debug)]
pub struct Error {
    message: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with a message that already says what to do.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }

    /// An I/O error about `path`, phrased with the usual remedies.
    pub fn io(what: &str, path: &Path, err: &io::Error) -> Error {
        let hint = match err.kind() {
            io::ErrorKind::PermissionDenied => "check its permissions",
            io::ErrorKind::NotFound => "check the path",
            _ if err.raw_os_error() == Some(libc::ENOSPC) => "free some disk space",
            _ if err.raw_os_error() == Some(libc::EROFS) => "the filesystem is read-only",
            _ if err.raw_os_error() == Some(libc::EFBIG) => "a file size limit was hit",
            _ => "check the path and try again",
        };
        Error::new(format!(
            "cannot {what} {}: {}; {hint}",
            quote(path),
            plain_io(err)
        ))
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// An io::Error without Rust's " (os error N)" suffix, lower-cased like the
/// rest of our messages.
pub fn plain_io(err: &io::Error) -> String {
    let s = err.to_string();
    let s = match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    };
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => s,
    }
}

/// A path as it goes into a one-line message: control characters, newlines
/// and bytes that are not UTF-8 are escaped so one error stays one line.
pub fn quote(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    escape_bytes(path.as_os_str().as_bytes())
}

/// A session id as every message quotes it: in double quotes, with
/// control characters, quotes and backslashes escaped (Rust's debug form),
/// so `"agent 7"` and `"agent-7\n"` are told apart and stay on one line.
pub fn quote_id(sid: &str) -> String {
    format!("{sid:?}")
}

/// `bytes` as they are when [`escape_bytes`] would change nothing in them
/// (printable ASCII, no backslash).
pub fn plain_text(bytes: &[u8]) -> Option<&str> {
    if bytes
        .iter()
        .all(|&b| (b' '..=b'~').contains(&b) && b != b'\\')
    {
        std::str::from_utf8(bytes).ok()
    } else {
        None
    }
}

/// Escape bytes for a one-line, human-readable display: printable UTF-8 is
/// kept, `\n`, `\t`, `\r`, `\\` and other control characters become C-style
/// escapes, and invalid UTF-8 becomes `\xNN`.
pub fn escape_bytes(bytes: &[u8]) -> String {
    // Most names are plain ASCII with nothing to escape (a batch prints
    // thousands): copied as they are.
    if let Some(plain) = plain_text(bytes) {
        return plain.to_string();
    }
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_one_line() {
        assert_eq!(escape_bytes(b"a\nb\tc\\d"), "a\\nb\\tc\\\\d");
        assert_eq!(escape_bytes(b"x\xffy"), "x\\xffy");
        assert_eq!(escape_bytes("é\u{1b}".as_bytes()), "é\\u{1b}");
        assert_eq!(escape_bytes(b"src/a b~.rs"), "src/a b~.rs");
        assert_eq!(escape_bytes(b"a\x7f"), "a\\u{7f}");
    }

    #[test]
    fn plain_io_drops_os_error_suffix() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(plain_io(&e), "no such file or directory");
    }
}
