//! The one JSON envelope every fsview tool writes.
//!
//! `--json` output is JSON Lines: one object per input, each with `"v": 1`
//! (the envelope version, bumped only for incompatible changes) and a
//! `"type"` naming the record (`read`, `record`, `check`, `changed`,
//! `error`, ...). Paths are strings; a path that is not valid UTF-8 is
//! written lossily in `path` and exactly, base64-encoded, in `path_bytes`.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use base64::Engine;
use serde_json::{Map, Value};

pub const VERSION: u64 = 1;

/// A new object of `type`.
pub fn object(kind: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("v".into(), VERSION.into());
    m.insert("type".into(), kind.into());
    m
}

/// Put `path` under `key`, with `{key}_bytes` when it is not UTF-8.
pub fn put_path(m: &mut Map<String, Value>, key: &str, path: &Path) {
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(s) => {
            m.insert(key.into(), s.into());
        }
        Err(_) => {
            m.insert(
                key.into(),
                String::from_utf8_lossy(bytes).into_owned().into(),
            );
            m.insert(
                format!("{key}_bytes"),
                base64::engine::general_purpose::STANDARD
                    .encode(bytes)
                    .into(),
            );
        }
    }
}

/// An error about one input.
pub fn error(path: Option<&Path>, message: &str) -> Value {
    let mut m = object("error");
    if let Some(p) = path {
        put_path(&mut m, "path", p);
    }
    m.insert("error".into(), message.into());
    Value::Object(m)
}
