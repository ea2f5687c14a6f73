//! The five tools as a client lists them: names, descriptions and input
//! schemas, and the checking of a call's arguments against them.
//!
//! Names and argument names are Claude Code's (`file_path`, `old_string`,
//! `new_string`, `replace_all`, `offset`, `limit`, `content`), so a model
//! trained on its tools knows these. The descriptions say when to use each
//! tool and what the gate asks of the model, in the manner of Claude
//! Code's. The schemas are written out by hand, not derived: they are part
//! of what a model reads, and the tests hold them to exact values.
//!
//! Arguments are checked here rather than by the SDK: a bad argument is a
//! tool result with `isError` naming the argument and what it takes, which
//! a model can correct, where a protocol error would reach it as an opaque
//! failure.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

/// What the descriptions need to know about this server.
pub struct Setting<'a> {
    /// Where relative paths are taken from.
    pub dir: &'a Path,
    /// Most bytes one read shows.
    pub cap: u64,
}

/// The tools, in the order a client lists them.
pub fn tools(s: &Setting<'_>) -> Vec<Tool> {
    let dir = s.dir.display();
    let cap = size(s.cap);
    vec![
        tool(
            "read",
            "Read file",
            format!(
                "Reads a file from the local filesystem and records what you were shown, so that edit and write can tell whether the file changed since.

Usage:
- file_path should be an absolute path; a relative path is taken from {dir}.
- By default it shows the whole file, up to {cap} and 2,000 lines; a longer file shows its first lines and says where to read on. You can give offset (the line to start at, counting from 1) and limit (how many lines) to read part of a long file; otherwise read the whole file.
- Lines are shown numbered: the line number, a tab, then the line's text. The number and the tab are not part of the file: never copy them into old_string or new_string.
- It shows text files only: a directory, a device or a binary file is refused with an error.
- Read a file before changing it: edit needs a read of the file (any part of it), and write of an existing file needs a read of all of it, as the file is now.
- When files you have seen change (the user, a formatter or another agent edited them), the result of your next call to these tools ends with the list of those files and their diffs. Read such a file again before you edit it.
- You can read several files at once by calling this tool several times in one turn."
            ),
            json!({
                "type": "object",
                "properties": {
                    "file_path": {
                        "type": "string",
                        "description": "The absolute path to the file to read"
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 0,
                        "description": "The line number to start reading from (1 is the first line; 0 is taken as 1). Only provide if the file is too large to read at once"
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "The number of lines to read. Only provide if the file is too large to read at once"
                    }
                },
                "required": ["file_path"],
                "additionalProperties": false
            }),
            ToolAnnotations::with_title("Read file")
                .read_only(true)
                .open_world(false),
        ),
        tool(
            "edit",
            "Edit file",
            format!(
                "Performs an exact string replacement in a file, only if the file is still what you last read.

Usage:
- You must read the file with the read tool first; any part of it is enough. The edit is refused if you have not read the file, or if it changed since you read it (the user, a formatter or another agent changed it): read it again, then redo the edit on what it now holds. Nothing anyone else wrote is ever overwritten.
- file_path should be an absolute path; a relative path is taken from {dir}.
- When editing text from read output, keep the exact indentation (tabs or spaces) as it appears after the line number prefix (the number and a tab). Never include any part of the line number prefix in old_string or new_string.
- old_string must occur exactly once in the file, or the edit fails: give more surrounding lines to make it unique, or set replace_all to change every occurrence (to rename a variable, say).
- new_string must differ from old_string.
- An empty old_string creates a file that does not exist yet, with new_string as its content (and its directories); that needs no read.
- The file keeps its line endings, encoding, final newline and permissions. Prefer editing existing files to writing new ones.
- Returns the diff of the change. After a successful edit you may edit the file again without reading it."
            ),
            json!({
                "type": "object",
                "properties": {
                    "file_path": {
                        "type": "string",
                        "description": "The absolute path to the file to modify"
                    },
                    "old_string": {
                        "type": "string",
                        "description": "The text to replace"
                    },
                    "new_string": {
                        "type": "string",
                        "description": "The text to replace it with (must be different from old_string)"
                    },
                    "replace_all": {
                        "type": "boolean",
                        "default": false,
                        "description": "Replace all occurrences of old_string (default false)"
                    }
                },
                "required": ["file_path", "old_string", "new_string"],
                "additionalProperties": false
            }),
            ToolAnnotations::with_title("Edit file")
                .read_only(false)
                .destructive(true)
                .idempotent(false)
                .open_world(false),
        ),
        tool(
            "write",
            "Write file",
            format!(
                "Writes a file to the local filesystem, replacing it whole if it exists, only if you have read all of it and it has not changed since.

Usage:
- A file that does not exist can be written without a read; missing directories are created.
- An existing file must have been read in full with the read tool, and be unchanged since: a file you read only in part, or that changed since, is refused. Read it (all of it) and try again.
- file_path should be an absolute path; a relative path is taken from {dir}.
- content is written as given, line endings included; the file keeps its encoding and permissions.
- Prefer edit to change part of an existing file: it sends only the change, and needs only a read of some of the file.
- Returns the diff of the change."
            ),
            json!({
                "type": "object",
                "properties": {
                    "file_path": {
                        "type": "string",
                        "description": "The absolute path to the file to write (must be absolute, not relative)"
                    },
                    "content": {
                        "type": "string",
                        "description": "The content to write to the file"
                    }
                },
                "required": ["file_path", "content"],
                "additionalProperties": false
            }),
            ToolAnnotations::with_title("Write file")
                .read_only(false)
                .destructive(true)
                .idempotent(true)
                .open_world(false),
        ),
        tool(
            "changed",
            "Files changed since seen",
            "Lists the files you have read or written that are no longer what you saw, because someone else changed them since (the user, a formatter, another agent), each with a unified diff from the text you saw to the text now, or a note when there is none (deleted, replaced, too large).

Use it after a pause, before editing files you read a while ago, or when an edit was refused because the file was modified. edit and write refuse a listed file until you read it again. Changes are also told, once each, at the end of the result of your next call to these tools; this lists all of them whenever you ask."
                .to_string(),
            json!({
                "type": "object",
                "properties": {},
                "additionalProperties": false
            }),
            ToolAnnotations::with_title("Files changed since seen")
                .read_only(true)
                .open_world(false),
        ),
        tool(
            "context",
            "Project context",
            format!(
                "Returns this project's instructions and facts, as a coding agent is given them at the start of a conversation: the instruction files (CLAUDE.md and the like, from the user's and from every directory down to {dir}, with their @imports), the git branch, status and recent commits, and today's date. It is built once per session and returned the same afterwards.

Usage:
- Call it once, without arguments, at the start of a task, and follow the instructions it returns.
- Before working on a file in a subdirectory, call it with for_path set to that file: it returns the instruction files of the directories on the way to it, and the rules that apply to it, that you have not been given yet, or says there are none.
- The instruction files it gives count as read as you were given them: one shown with parts left out (comments, front matter) must be read with the read tool before you edit it."
            ),
            json!({
                "type": "object",
                "properties": {
                    "for_path": {
                        "type": "string",
                        "description": "A file you are about to work on: return only the instruction files and rules for it not given yet"
                    }
                },
                "additionalProperties": false
            }),
            ToolAnnotations::with_title("Project context")
                .read_only(true)
                .open_world(false),
        ),
    ]
}

fn tool(
    name: &'static str,
    title: &str,
    description: String,
    schema: Value,
    annotations: ToolAnnotations,
) -> Tool {
    let Value::Object(mut schema) = schema else {
        unreachable!("a schema is an object")
    };
    schema.insert(
        "$schema".into(),
        "https://json-schema.org/draft/2020-12/schema".into(),
    );
    Tool::new(name, description, Arc::new(schema))
        .with_title(title)
        .with_annotations(annotations)
}

/// A byte count as a person says it: "64 KiB".
fn size(n: u64) -> String {
    const K: u64 = 1024;
    match n {
        n if n % (K * K * K) == 0 => format!("{} GiB", n / (K * K * K)),
        n if n % (K * K) == 0 => format!("{} MiB", n / (K * K)),
        n if n % K == 0 => format!("{} KiB", n / K),
        n => format!("{n} bytes"),
    }
}

/// A tool call, its arguments checked.
#[derive(Debug, PartialEq)]
pub enum Call {
    Read {
        file_path: PathBuf,
        offset: Option<u64>,
        limit: Option<u64>,
    },
    Edit {
        file_path: PathBuf,
        old_string: String,
        new_string: String,
        replace_all: bool,
    },
    Write {
        file_path: PathBuf,
        content: String,
    },
    Changed,
    Context {
        for_path: Option<PathBuf>,
    },
}

impl Call {
    /// The tool's name.
    pub fn name(&self) -> &'static str {
        match self {
            Call::Read { .. } => "read",
            Call::Edit { .. } => "edit",
            Call::Write { .. } => "write",
            Call::Changed => "changed",
            Call::Context { .. } => "context",
        }
    }
}

/// Why a call could not be made.
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// No such tool: a protocol error, as the MCP specification has it.
    UnknownTool(String),
    /// Arguments that do not fit the schema: a tool result with `isError`,
    /// so the model can correct them.
    Arguments(String),
}

/// Check a call of tool `name` with `arguments` against its schema.
pub fn parse(name: &str, arguments: Option<&JsonObject>) -> Result<Call, Refused> {
    let empty = JsonObject::new();
    let a = Args {
        tool: name,
        map: arguments.unwrap_or(&empty),
    };
    let call = match name {
        "read" => {
            a.only(&["file_path", "offset", "limit"])?;
            let offset = a.integer("offset", 0)?.map(|o| o.max(1));
            Call::Read {
                file_path: a.path("file_path")?,
                offset,
                limit: a.integer("limit", 1)?,
            }
        }
        "edit" => {
            a.only(&["file_path", "old_string", "new_string", "replace_all"])?;
            Call::Edit {
                file_path: a.path("file_path")?,
                old_string: a.string("old_string")?,
                new_string: a.string("new_string")?,
                replace_all: a.boolean("replace_all")?.unwrap_or(false),
            }
        }
        "write" => {
            a.only(&["file_path", "content"])?;
            Call::Write {
                file_path: a.path("file_path")?,
                content: a.string("content")?,
            }
        }
        "changed" => {
            a.only(&[])?;
            Call::Changed
        }
        "context" => {
            a.only(&["for_path"])?;
            Call::Context {
                for_path: a.optional_string("for_path")?.map(PathBuf::from),
            }
        }
        other => {
            return Err(Refused::UnknownTool(format!(
                "unknown tool {other:?}; the tools are read, edit, write, changed and context"
            )))
        }
    };
    Ok(call)
}

struct Args<'a> {
    tool: &'a str,
    map: &'a JsonObject,
}

impl Args<'_> {
    fn refuse(&self, what: String) -> Refused {
        Refused::Arguments(format!("{}: {what}", self.tool))
    }

    /// No arguments but `known`.
    fn only(&self, known: &[&str]) -> Result<(), Refused> {
        if let Some(k) = self.map.keys().find(|k| !known.contains(&k.as_str())) {
            let takes = match known {
                [] => "no arguments".to_string(),
                _ => known.join(", "),
            };
            return Err(self.refuse(format!("unknown argument {k:?}; it takes {takes}")));
        }
        Ok(())
    }

    fn string(&self, key: &str) -> Result<String, Refused> {
        match self.map.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            None | Some(Value::Null) => Err(self.refuse(format!("{key} is required (a string)"))),
            Some(other) => {
                Err(self.refuse(format!("{key} must be a string, not {}", kind_of(other))))
            }
        }
    }

    fn optional_string(&self, key: &str) -> Result<Option<String>, Refused> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(_) => self.string(key).map(Some),
        }
    }

    fn path(&self, key: &str) -> Result<PathBuf, Refused> {
        let s = self.string(key)?;
        if s.is_empty() {
            return Err(self.refuse(format!("{key} is empty; give the path of a file")));
        }
        if s.contains('\0') {
            return Err(self.refuse(format!("{key} holds a NUL character; no path does")));
        }
        Ok(PathBuf::from(s))
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, Refused> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            // Some models send booleans as strings.
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(other) => Err(self.refuse(format!(
                "{key} must be true or false, not {}",
                kind_of(other)
            ))),
        }
    }

    /// A whole number of at least `min`; models send some as `"10"` or
    /// `10.0`, which are taken too.
    fn integer(&self, key: &str, min: u64) -> Result<Option<u64>, Refused> {
        let v = match self.map.get(key) {
            None | Some(Value::Null) => return Ok(None),
            Some(v) => v,
        };
        let n = match v {
            Value::Number(n) => n
                .as_u64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1.8e19)
                        .map(|f| f as u64)
                })
                .ok_or(()),
            Value::String(s) => s.trim().parse::<u64>().map_err(|_| ()),
            _ => Err(()),
        };
        match n {
            Ok(n) if n >= min => Ok(Some(n)),
            _ => {
                let what = match v {
                    Value::Number(n) => n.to_string(),
                    other => kind_of(other).to_string(),
                };
                Err(self.refuse(format!(
                    "{key} must be a whole number, {min} or more, not {what}"
                )))
            }
        }
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> JsonObject {
        match v {
            Value::Object(m) => m,
            _ => panic!("an object"),
        }
    }

    #[test]
    fn reads_take_numbers_as_models_send_them() {
        for (given, want) in [
            (json!(10), Some(10)),
            (json!(10.0), Some(10)),
            (json!("10"), Some(10)),
            (json!(0), Some(1)),
            (json!(null), None),
        ] {
            let call = parse(
                "read",
                Some(&args(json!({"file_path": "/a", "offset": given}))),
            )
            .unwrap();
            assert_eq!(
                call,
                Call::Read {
                    file_path: "/a".into(),
                    offset: want,
                    limit: None
                }
            );
        }
        assert_eq!(
            parse("read", Some(&args(json!({"file_path": "/a", "limit": 0})))),
            Err(Refused::Arguments(
                "read: limit must be a whole number, 1 or more, not 0".into()
            ))
        );
        assert_eq!(
            parse(
                "read",
                Some(&args(json!({"file_path": "/a", "offset": -3})))
            ),
            Err(Refused::Arguments(
                "read: offset must be a whole number, 0 or more, not -3".into()
            ))
        );
        assert_eq!(
            parse(
                "read",
                Some(&args(json!({"file_path": "/a", "offset": 1.5})))
            ),
            Err(Refused::Arguments(
                "read: offset must be a whole number, 0 or more, not 1.5".into()
            ))
        );
    }

    #[test]
    fn missing_unknown_and_mistyped_arguments_are_named() {
        assert_eq!(
            parse(
                "edit",
                Some(&args(json!({"file_path": "/a", "old_string": "x"})))
            ),
            Err(Refused::Arguments(
                "edit: new_string is required (a string)".into()
            ))
        );
        assert_eq!(
            parse("read", Some(&args(json!({"path": "/a"})))),
            Err(Refused::Arguments(
                "read: unknown argument \"path\"; it takes file_path, offset, limit".into()
            ))
        );
        assert_eq!(
            parse("write", Some(&args(json!({"file_path": 3, "content": ""})))),
            Err(Refused::Arguments(
                "write: file_path must be a string, not a number".into()
            ))
        );
        assert_eq!(
            parse("changed", Some(&args(json!({"all": true})))),
            Err(Refused::Arguments(
                "changed: unknown argument \"all\"; it takes no arguments".into()
            ))
        );
        assert_eq!(parse("changed", None), Ok(Call::Changed));
        assert!(matches!(parse("Read", None), Err(Refused::UnknownTool(_))));
    }

    #[test]
    fn every_schema_is_a_closed_object_naming_its_required_arguments() {
        let dir = Path::new("/w");
        for t in tools(&Setting { dir, cap: 65536 }) {
            let s = &t.input_schema;
            assert_eq!(s["type"], "object", "{}", t.name);
            assert_eq!(s["additionalProperties"], false, "{}", t.name);
            let props = s["properties"].as_object().unwrap();
            for r in s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", t.name);
            }
        }
    }

    #[test]
    fn sizes_read_as_people_say_them() {
        assert_eq!(size(65536), "64 KiB");
        assert_eq!(size(1 << 20), "1 MiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
