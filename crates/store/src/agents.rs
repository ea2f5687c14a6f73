//! A conversation's agents: one view set each.
//!
//! An agent conversation may run subagents (Claude Code's `Agent` tool,
//! Codex's subagents), concurrently with the main thread and each other.
//! What one agent saw never lets another one edit, so each has its own
//! views: the main thread's are the conversation's session `S`, a
//! subagent `A`'s are the session `S/A` ([`sid_of`]), whose `parent` column
//! names `S`. Nothing flows between them: a subagent's read or write is not
//! its parent's view, so a file a subagent changed is simply no longer
//! fresh for a parent that saw it before (the gate refuses the parent's
//! next edit, and its reminder tells it, like any other change).
//!
//! A subagent starts with no views ([`Start::Empty`]), or with a copy of
//! the views of the agent that launched it ([`Start::CopyOfLauncher`], as
//! Claude Code's `fork` inherits its parent's context). Which agent that is
//! the start itself does not say (a subagent may launch one too): the
//! launcher logs each such launch ([`Store::launching`]), and a start takes
//! the copy from the one agent of the conversation with a launch not yet
//! taken. When none, or more than one, has one, the new agent starts with
//! no views: a needless "read it first" costs a read, a wrong copy could let
//! it change a file it never saw.
//!
//! An agent's session is created when it starts, or lazily when its first
//! view is recorded, in one transaction each, so concurrent hooks of a
//! parent and its subagents create each session once and never mix their
//! views. `--sid S/A` (or `--sid S --agent A`) addresses one agent's views
//! from the shell like any session.

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::Result;
use crate::events::{log_in, Event};
use crate::fingerprint;
use crate::inspect::{copy_session, event_row, exists, Counts, EventRecord};
use crate::Store;

/// The event an agent's session starts with: its type as `verdict`, where
/// its views came from as `detail`.
pub const AGENT_ACTION: &str = "agent";
/// An agent launched a subagent that starts with a copy of its views
/// (`verdict`: the subagent's type).
pub const LAUNCH_ACTION: &str = "launch";
/// Such a launch was taken by the subagent that started (`verdict`: its
/// type, `detail`: its id).
pub const LAUNCHED_ACTION: &str = "launched";
/// An agent handed its turn to a subagent that reports its calls as its
/// own (gemini-cli's `invoke_agent`): `verdict` the subagent's type,
/// `detail` the id fsview gave it.
pub const DELEGATE_ACTION: &str = "delegate";
/// That subagent finished (`detail`: its id).
pub const DELEGATED_ACTION: &str = "delegated";

/// How a launch's detail names the origins whose views the subagent does
/// not get: `not copied (the same message): ORIGIN ORIGIN ...`, or, when
/// the agent's transcript did not say which calls shared the launch's
/// message, [`UNWRITTEN`].
const UNSEEN: &str = "not copied (the same message): ";
const UNWRITTEN: &str = "not copied (not in the transcript yet): ";

/// The session holding agent `agent`'s views in conversation
/// `conversation`.
pub fn sid_of(conversation: &str, agent: &str) -> String {
    format!("{conversation}/{agent}")
}

/// The agent whose views session `sid` holds, when `sid` is an agent's
/// session of conversation `parent`.
pub fn agent_of<'s>(parent: &str, sid: &'s str) -> Option<&'s str> {
    sid.strip_prefix(parent)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|a| !a.is_empty())
}

/// One agent of a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentSession {
    /// Its session: `conversation/agent`.
    pub sid: String,
    pub agent: String,
    /// Its type, as the agent named it at its start, if known.
    pub agent_type: Option<String>,
    pub created_ns: i64,
}

/// Where a starting agent's views come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// None: it has seen nothing yet.
    Empty,
    /// A copy of the views of the agent that launched it (see
    /// [`Store::launching`]), else none.
    CopyOfLauncher,
}

/// What [`Store::start_agent`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Started {
    /// The session was created now (it did not exist: a repeated start, or
    /// a start after the agent's first recorded view, changes nothing).
    pub created: bool,
    /// The session whose views were copied.
    pub from: Option<String>,
    pub counts: Counts,
}

impl Store {
    /// The agents of `conversation`, oldest first.
    pub fn agents(&self, conversation: &str) -> Result<Vec<AgentSession>> {
        self.read(|conn| agents_in(conn, conversation))
    }

    /// Log that agent session `sid` launches a subagent of type `kind`
    /// that is to start with a copy of its views, but for those shown by
    /// the origins `unseen` (the other calls of the message that launches
    /// it: the subagent's context ends with that message, without their
    /// results).
    /// `known`: whether they are known to be that message's (else they
    /// are those whose message the agent had not written yet).
    pub fn launching(
        &self,
        sid: &str,
        tool: &str,
        kind: &str,
        unseen: &[String],
        known: bool,
    ) -> Result<()> {
        let why = if known { UNSEEN } else { UNWRITTEN };
        let detail = (!unseen.is_empty()).then(|| format!("{why}{}", unseen.join(" ")));
        self.log(
            sid,
            &[Event::new(tool, LAUNCH_ACTION)
                .verdict(kind)
                .detail(detail.as_deref())],
        )
    }

    /// Start agent `agent` of `conversation` (of type `kind`, if known):
    /// create its session, empty or with a copy of its launcher's views as
    /// `start` says, and log it as `tool` did. One transaction; an agent
    /// whose session exists is left as it is.
    pub fn start_agent(
        &self,
        conversation: &str,
        agent: &str,
        kind: Option<&str>,
        start: Start,
        tool: &str,
    ) -> Result<Started> {
        let sid = sid_of(conversation, agent);
        self.write(|conn| {
            if exists(conn, &sid)? {
                // Created by a path that did not know it for an agent's:
                // it is one now.
                conn.execute(
                    "UPDATE sessions SET parent=?2 WHERE sid=?1 AND parent IS NULL",
                    params![sid, conversation],
                )?;
                return Ok(Started {
                    created: false,
                    from: None,
                    counts: Counts::default(),
                });
            }
            let now = fingerprint::now_ns();
            // The conversation is listed too, even before its first view.
            crate::store::ensure_session(conn, conversation, now)?;
            conn.execute(
                "INSERT INTO sessions(sid, created_ns, parent) VALUES(?1, ?2, ?3)",
                params![sid, now, conversation],
            )?;
            let (from, why, unseen) = match (start, kind) {
                (Start::CopyOfLauncher, Some(kind)) => launcher(conn, conversation, kind)?,
                (Start::CopyOfLauncher, None) => (None, "no launcher known".to_string(), vec![]),
                (Start::Empty, _) => (None, String::new(), vec![]),
            };
            let counts = match &from {
                Some(f) => copy_session(conn, f, &sid, &unseen)?,
                None => Counts::default(),
            };
            let whose = |f: &str| match agent_of(conversation, f) {
                Some(a) => format!("agent {a}'s"),
                None => "the main thread's".to_string(),
            };
            let detail = match &from {
                Some(f) => format!(
                    "a copy of {} views: {} files, {} views",
                    whose(f),
                    counts.files,
                    counts.views
                ),
                None if why.is_empty() => "no views".to_string(),
                None => format!("no views ({why})"),
            };
            if let (Some(f), Some(kind)) = (&from, kind) {
                log_in(
                    conn,
                    f,
                    now,
                    &Event::new(tool, LAUNCHED_ACTION)
                        .verdict(kind)
                        .detail(Some(agent)),
                )?;
            }
            let mut e = Event::new(tool, AGENT_ACTION).detail(Some(&detail));
            if let Some(kind) = kind {
                e = e.verdict(kind);
            }
            log_in(conn, &sid, now, &e)?;
            Ok(Started {
                created: true,
                from,
                counts,
            })
        })
    }

    /// Agent session `sid` of `conversation` hands its turn to a subagent
    /// of type `kind` whose calls come in its name (gemini-cli's
    /// `invoke_agent`: the subagent's hooks carry the conversation's id and
    /// nothing of their own): until [`Store::delegated`], they are the
    /// subagent's ([`Store::delegate_of`]). The subagent gets an id of its
    /// own (`KIND-N`) and its views, empty. Returns that id.
    pub fn delegate(
        &self,
        conversation: &str,
        sid: &str,
        kind: &str,
        tool: &str,
    ) -> Result<String> {
        let n: i64 = self.read(|conn| {
            conn.query_row(
                "SELECT count(*) FROM events WHERE sid=?1 AND action=?2",
                params![sid, DELEGATE_ACTION],
                |r| r.get(0),
            )
        })?;
        let safe: String = kind
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(60)
            .collect();
        let agent = format!("{safe}-{}", n + 1);
        self.start_agent(conversation, &agent, Some(kind), Start::Empty, tool)?;
        self.log(
            sid,
            &[Event::new(tool, DELEGATE_ACTION)
                .verdict(kind)
                .detail(Some(&agent))],
        )?;
        Ok(agent)
    }

    /// The subagent agent session `sid` handed its turn to has finished.
    pub fn delegated(&self, sid: &str, tool: &str) -> Result<()> {
        if let Some(agent) = self.delegate_of(sid)? {
            self.log(
                sid,
                &[Event::new(tool, DELEGATED_ACTION).detail(Some(&agent))],
            )?;
        }
        Ok(())
    }

    /// The subagent agent session `sid` has handed its turn to and that has
    /// not finished, if any (the latest).
    pub fn delegate_of(&self, sid: &str) -> Result<Option<String>> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT d.detail FROM events d WHERE d.sid=?1 AND d.action=?2
                   AND NOT EXISTS (SELECT 1 FROM events e WHERE e.sid=?1 AND e.action=?3
                                   AND e.detail=d.detail AND e.id > d.id)
                 ORDER BY d.id DESC LIMIT 1",
            )?
            .query_row(params![sid, DELEGATE_ACTION, DELEGATED_ACTION], |r| {
                r.get(0)
            })
            .optional()
        })
    }

    /// The log of session `sid` and of its agents, merged in the order the
    /// events happened, each with the agent it belongs to (`None`: `sid`
    /// itself); with `limit`, only the latest `limit`.
    pub fn conversation_events(
        &self,
        sid: &str,
        limit: Option<u64>,
    ) -> Result<Vec<(Option<String>, EventRecord)>> {
        self.read(|conn| {
            let limit = limit.map(|n| n.min(i64::MAX as u64) as i64).unwrap_or(-1);
            let mut stmt = conn.prepare(
                "SELECT * FROM (
                   SELECT e.id, e.at_ns, e.tool, e.action, e.path, e.verdict, e.detail, e.sid
                   FROM events e
                   WHERE e.sid = ?1
                      OR e.sid IN (SELECT s.sid FROM sessions s WHERE s.parent = ?1
                                   AND substr(s.sid, 1, length(?1) + 1) = ?1 || '/'
                                   AND length(s.sid) > length(?1) + 1)
                   ORDER BY e.id DESC LIMIT ?2)
                 ORDER BY id",
            )?;
            let rows = stmt.query_map(params![sid, limit], |r| {
                let of: String = r.get(7)?;
                Ok((agent_of(sid, &of).map(String::from), event_row(r)?))
            })?;
            rows.collect()
        })
    }
}

/// The agents of `conversation`, oldest first.
pub(crate) fn agents_in(
    conn: &Connection,
    conversation: &str,
) -> rusqlite::Result<Vec<AgentSession>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.sid, s.created_ns,
           (SELECT e.verdict FROM events e WHERE e.sid = s.sid AND e.action = ?2
              ORDER BY e.id LIMIT 1)
         FROM sessions s
         WHERE s.parent = ?1 AND substr(s.sid, 1, length(?1) + 1) = ?1 || '/'
           AND length(s.sid) > length(?1) + 1
         ORDER BY s.created_ns, s.sid",
    )?;
    let rows = stmt.query_map(params![conversation, AGENT_ACTION], |r| {
        let sid: String = r.get(0)?;
        Ok(AgentSession {
            agent: agent_of(conversation, &sid).unwrap_or_default().to_string(),
            sid,
            created_ns: r.get(1)?,
            agent_type: r.get(2)?,
        })
    })?;
    rows.collect()
}

/// The session whose views a starting agent of type `kind` copies: the one
/// agent of `conversation` (its main thread included) with a launch of that
/// type not yet taken, and the origins its launch said not to copy. `None`
/// with the reason when there is no such agent, or more than one.
fn launcher(
    conn: &Connection,
    conversation: &str,
    kind: &str,
) -> rusqlite::Result<(Option<String>, String, Vec<String>)> {
    let mut candidates = vec![conversation.to_string()];
    candidates.extend(agents_in(conn, conversation)?.into_iter().map(|a| a.sid));
    let mut pending = Vec::new();
    for sid in candidates {
        let count = |action: &str| -> rusqlite::Result<i64> {
            conn.prepare_cached(
                "SELECT count(*) FROM events WHERE sid=?1 AND action=?2 AND verdict=?3",
            )?
            .query_row(params![sid, action, kind], |r| r.get(0))
        };
        if count(LAUNCH_ACTION)? > count(LAUNCHED_ACTION)? {
            pending.push(sid);
        }
    }
    Ok(match pending.len() {
        1 => {
            let from = pending.pop();
            let unseen = match &from {
                Some(sid) => unseen_of(conn, sid, kind)?,
                None => vec![],
            };
            (from, String::new(), unseen)
        }
        0 => (None, "no launch of it was seen".to_string(), vec![]),
        _ => (
            None,
            format!("{} agents launched one; which is not known", pending.len()),
            vec![],
        ),
    })
}

/// What the launch about to be taken in session `sid` (its oldest of type
/// `kind` not taken yet) said not to copy.
fn unseen_of(conn: &Connection, sid: &str, kind: &str) -> rusqlite::Result<Vec<String>> {
    let taken: i64 = conn
        .prepare_cached("SELECT count(*) FROM events WHERE sid=?1 AND action=?2 AND verdict=?3")?
        .query_row(params![sid, LAUNCHED_ACTION, kind], |r| r.get(0))?;
    let detail: Option<Option<String>> = conn
        .prepare_cached(
            "SELECT detail FROM events WHERE sid=?1 AND action=?2 AND verdict=?3 ORDER BY id LIMIT 1 OFFSET ?4",
        )?
        .query_row(params![sid, LAUNCH_ACTION, kind, taken], |r| r.get(0))
        .optional()?;
    Ok(detail
        .flatten()
        .and_then(|d| {
            d.strip_prefix(UNSEEN)
                .or_else(|| d.strip_prefix(UNWRITTEN))
                .map(str::to_string)
        })
        .map(|ids| ids.split(' ').map(String::from).collect())
        .unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::show::{self, Request};
    use crate::store::NewView;
    use crate::view::Source;

    fn read(store: &Store, sid: &str, path: &std::path::Path) {
        let s = show::read(path, &Request::whole(1 << 20)).unwrap();
        store
            .record(sid, &NewView::of_shown(path, &s, Source::Read))
            .unwrap();
    }

    #[test]
    fn names() {
        assert_eq!(sid_of("s", "a"), "s/a");
        assert_eq!(agent_of("s", "s/a"), Some("a"));
        assert_eq!(agent_of("s", "s/a/b"), Some("a/b"));
        assert_eq!(agent_of("s", "s/"), None);
        assert_eq!(agent_of("s", "sx/a"), None);
        assert_eq!(agent_of("s", "s"), None);
    }

    // A fork copies the one launcher with a launch not yet taken; a start
    // never undoes what an agent has; the conversation's log merges them.
    #[test]
    fn starts_copy_the_launcher_once() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(&d.path().join("s.db")).unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, "x\n").unwrap();
        read(&store, "c", &f);
        store.launching("c", "t", "fork", &[], true).unwrap();
        let s = store
            .start_agent("c", "k1", Some("fork"), Start::CopyOfLauncher, "t")
            .unwrap();
        assert_eq!(
            (s.created, s.from.as_deref(), s.counts.files, s.counts.views),
            (true, Some("c"), 1, 1)
        );
        // The launch is taken: a second fork has no launcher.
        let s = store
            .start_agent("c", "k2", Some("fork"), Start::CopyOfLauncher, "t")
            .unwrap();
        assert_eq!((s.created, s.from), (true, None));
        // Started again: left as it is.
        let s = store
            .start_agent("c", "k1", Some("fork"), Start::Empty, "t")
            .unwrap();
        assert!(!s.created);
        assert_eq!(store.files("c/k1").unwrap().len(), 1);
        let agents: Vec<(String, Option<String>)> = store
            .agents("c")
            .unwrap()
            .into_iter()
            .map(|a| (a.agent, a.agent_type))
            .collect();
        assert_eq!(
            agents,
            [
                ("k1".to_string(), Some("fork".to_string())),
                ("k2".to_string(), Some("fork".to_string()))
            ]
        );
        let log: Vec<(Option<String>, String)> = store
            .conversation_events("c", None)
            .unwrap()
            .into_iter()
            .map(|(a, e)| (a, e.action))
            .collect();
        assert_eq!(
            log,
            [
                (None, LAUNCH_ACTION.to_string()),
                (None, LAUNCHED_ACTION.to_string()),
                (Some("k1".to_string()), AGENT_ACTION.to_string()),
                (Some("k2".to_string()), AGENT_ACTION.to_string()),
            ]
        );
        let n = store.drop_session("c").unwrap();
        assert_eq!((n.agents, n.files, n.views), (2, 2, 2));
        assert!(store.summaries().unwrap().is_empty());
    }
}
