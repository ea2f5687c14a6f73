//! The one JSON envelope every fsview tool writes.
//!
//! `--json` output is JSON Lines: one object per input, each with `"v": 1`
//! (the envelope version, bumped only for incompatible changes) and a
//! `"type"` naming the record (`read`, `record`, `check`, `changed`,
//! `error`, ...). Paths are strings; a path that is not valid UTF-8 is
//! written lossily in `path` and exactly, base64-encoded, in `path_bytes`.

use std::path::Path;

use serde_json::{Map, Value};

pub const VERSION: u64 = 1;

/// A new object of `type`.
pub fn object(kind: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("v".into(), VERSION.into());
    m.insert("type".into(), kind.into());
    m
}

pub use fsview_store::export::put_path;

/// An error about one input.
pub fn error(path: Option<&Path>, message: &str) -> Value {
    let mut m = object("error");
    if let Some(p) = path {
        put_path(&mut m, "path", p);
    }
    m.insert("error".into(), message.into());
    Value::Object(m)
}
