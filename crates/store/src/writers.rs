//! Who changed a file, when fsview knows: the writer named in a refusal
//! and in a told change instead of "the user or a linter".
//!
//! A change made through fsview leaves a trace in the session file: a
//! write through a hook or `fsview-edit` is a `write` view of the text it
//! left, in the writer's session (another conversation, a subagent, a
//! shell session's `--sid`); a shell command's output is an `own` row of
//! its conversation. The writer is the one whose trace is of exactly the
//! bytes the file holds now, left after the asking session last saw the
//! file, the latest if several: anything else (bytes no trace describes, a
//! trace from before the asker's view, which the asker saw past, a view
//! copied by a fork, which wrote nothing) is not known, and is said as
//! unknown. A shell command's trace names the command, and the agent of the
//! conversation that ran it where its hook logged the output as its own.

use std::path::Path;

use rusqlite::{params, OptionalExtension};

use crate::agents::AGENT_ACTION;
use crate::error::Result;
use crate::fingerprint::Hash;
use crate::store::path_bytes;
use crate::Store;

/// A writer fsview knows, of the bytes a file holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Writer {
    /// The session whose trace it is (`CONVERSATION/AGENT` for a subagent).
    pub sid: String,
    /// A shell command's output, not a file tool's write.
    pub command: bool,
    /// For a subagent: its type, when its start said.
    pub kind: Option<String>,
    /// The tool that logged the write, when the log says.
    pub tool: Option<String>,
    /// A shell command's first line, when its run is still kept.
    pub command_line: Option<String>,
    pub at_ns: i64,
}

impl Store {
    /// The latest writer other than session `me` whose trace is of exactly
    /// the bytes of hash `now` at `canonical`, left after `me` last saw the
    /// file; `me`'s own shell command counts (its file tools' writes are
    /// its own views, never a change).
    pub fn writer(&self, me: &str, canonical: &Path, now: &Hash) -> Result<Option<Writer>> {
        let path = path_bytes(canonical);
        self.read(|conn| {
            // When `me` last saw the file: a trace from before is of bytes
            // it saw past (changed and changed back since).
            let since: i64 = conn
                .query_row(
                    "SELECT viewed_ns FROM files WHERE sid = ?1 AND path = ?2",
                    params![me, path],
                    |r| r.get(0),
                )
                .optional()?
                .unwrap_or(i64::MIN);
            let write: Option<(String, i64)> = conn
                .query_row(
                    "SELECT f.sid, v.viewed_ns FROM files f JOIN views v ON v.file_id = f.id
                     WHERE f.path = ?1 AND f.hash = ?2 AND f.sid != ?3 AND v.source = 'write'
                     AND v.copied = 0 AND v.viewed_ns > ?4
                     ORDER BY v.viewed_ns DESC LIMIT 1",
                    params![path, &now[..], me, since],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let own: Option<(String, i64)> = conn
                .query_row(
                    "SELECT sid, written_ns FROM own WHERE path = ?1 AND hash = ?2
                     AND written_ns > ?3
                     ORDER BY written_ns DESC LIMIT 1",
                    params![path, &now[..], since],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let (mut sid, at_ns, command) = match (write, own) {
                (Some(w), Some(o)) if o.1 > w.1 => (o.0, o.1, true),
                (Some(w), _) => (w.0, w.1, false),
                (None, Some(o)) => (o.0, o.1, true),
                (None, None) => return Ok(None),
            };
            let mut command_line = None;
            if command {
                // The run it came from, and the agent of the conversation
                // whose hook logged the output as its own (a subagent's
                // command is its, not the main thread's).
                command_line = conn
                    .query_row(
                        "SELECT command FROM runs WHERE sid = ?1 AND started_ns <= ?2
                         ORDER BY started_ns DESC LIMIT 1",
                        params![sid, at_ns],
                        |r| r.get::<_, Option<String>>(0),
                    )
                    .optional()?
                    .flatten();
                let agent: Option<String> = conn
                    .query_row(
                        "SELECT sid FROM events WHERE path = ?1 AND verdict = 'own'
                         AND at_ns BETWEEN ?2 AND ?2 + 5000000000
                         AND (detail LIKE 'changed by the command:%'
                              OR detail LIKE 'made by the command:%')
                         AND (sid = ?3 OR substr(sid, 1, length(?3) + 1) = ?3 || '/')
                         ORDER BY at_ns LIMIT 1",
                        params![path, at_ns, sid],
                        |r| r.get(0),
                    )
                    .optional()?;
                if let Some(a) = agent {
                    sid = a;
                }
            }
            let kind: Option<String> = conn
                .query_row(
                    "SELECT verdict FROM events WHERE sid = ?1 AND action = ?2 AND verdict IS NOT NULL
                     ORDER BY id LIMIT 1",
                    params![sid, AGENT_ACTION],
                    |r| r.get(0),
                )
                .optional()?;
            let tool: Option<String> = conn
                .query_row(
                    "SELECT tool FROM events WHERE sid = ?1 AND path = ?2
                     AND action IN ('written', 'edit', 'write', 'told', 'check')
                     ORDER BY id DESC LIMIT 1",
                    params![sid, path],
                    |r| r.get(0),
                )
                .optional()?;
            Ok(Some(Writer {
                sid,
                command,
                kind,
                tool,
                command_line,
                at_ns,
            }))
        })
    }
}

impl Writer {
    /// Who it is, as seen from session `me`, with the time of day: "your
    /// own shell command at 14:02", "subagent a1 (general-purpose) at
    /// 14:02", "another conversation (c2) at 14:02", "fsview-edit in
    /// session \"default\" at 14:02".
    pub fn describe(&self, me: &str) -> String {
        let at = time_of_day(self.at_ns);
        let (conversation, agent) = match self.sid.split_once('/') {
            Some((c, a)) => (c, Some(a)),
            None => (self.sid.as_str(), None),
        };
        let mine = me.split_once('/').map_or(me, |(c, _)| c);
        let subagent = |a: &str| match &self.kind {
            Some(k) if !k.is_empty() => format!("subagent {a} ({k})"),
            _ => format!("subagent {a}"),
        };
        let ran = match &self.command_line {
            Some(c) if !c.is_empty() => format!(" `{c}`"),
            _ => String::new(),
        };
        let who = match agent {
            _ if self.command && self.sid == me => format!("your own shell command{ran}"),
            Some(a) if self.command && conversation == mine => {
                format!("a shell command{ran} of {}", subagent(a))
            }
            None if self.command && conversation == mine => {
                format!("a shell command{ran} of this conversation")
            }
            Some(a) if conversation == mine => subagent(a),
            None if conversation == mine => "the main conversation".to_string(),
            _ if self.command => format!(
                "a shell command{ran} of another conversation ({})",
                self.sid
            ),
            _ => match self.tool.as_deref() {
                Some(t) if t != "fsview-hook" => format!("{t} in session \"{}\"", self.sid),
                _ => format!("another conversation ({})", self.sid),
            },
        };
        format!("{who} at {at}")
    }
}

/// `HH:MM` in the local time zone.
fn time_of_day(ns: i64) -> String {
    let Ok(t) = jiff::Timestamp::from_nanosecond(ns as i128) else {
        return "an unknown time".to_string();
    };
    t.to_zoned(jiff::tz::TimeZone::system())
        .strftime("%H:%M")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(sid: &str, command: bool, kind: Option<&str>, tool: Option<&str>) -> Writer {
        Writer {
            sid: sid.to_string(),
            command,
            kind: kind.map(String::from),
            tool: tool.map(String::from),
            command_line: None,
            at_ns: 0,
        }
    }

    /// The writer's words without the time.
    fn who(writer: &Writer, me: &str) -> String {
        let d = writer.describe(me);
        d.rsplit_once(" at ").unwrap().0.to_string()
    }

    #[test]
    fn the_writer_is_named_from_where_the_reader_stands() {
        let me = "c1";
        assert_eq!(
            who(&w("c1/a3", false, Some("general-purpose"), None), me),
            "subagent a3 (general-purpose)"
        );
        assert_eq!(who(&w("c1/a3", false, None, None), me), "subagent a3");
        assert_eq!(
            who(&w("c1", false, None, None), "c1/a3"),
            "the main conversation"
        );
        assert_eq!(
            who(&w("c1", true, None, None), me),
            "your own shell command"
        );
        assert_eq!(
            who(&w("c1", true, None, None), "c1/a3"),
            "a shell command of this conversation"
        );
        assert_eq!(
            who(&w("c2", false, None, Some("fsview-hook")), me),
            "another conversation (c2)"
        );
        assert_eq!(
            who(&w("default", false, None, Some("fsview-edit")), me),
            "fsview-edit in session \"default\""
        );
        assert_eq!(
            who(&w("c2", true, None, None), me),
            "a shell command of another conversation (c2)"
        );
        // A subagent's command, as its hook logged it, seen from the main
        // thread and from the subagent itself; with the command's line.
        let mut fmt = w("c1/a3", true, Some("general-purpose"), None);
        assert_eq!(
            who(&fmt, me),
            "a shell command of subagent a3 (general-purpose)"
        );
        fmt.command_line = Some("npm run fmt".into());
        assert_eq!(
            who(&fmt, me),
            "a shell command `npm run fmt` of subagent a3 (general-purpose)"
        );
        assert_eq!(who(&fmt, "c1/a3"), "your own shell command `npm run fmt`");
    }
}
