//! The fields every agent's payload carries, read once.
//!
//! Every payload says which conversation it belongs to and where the agent
//! works; most say which subagent acted, which tool call it reports, and
//! where the agent's own transcript of the conversation is. Each agent
//! names them its own way: an adapter says where ([`Fields`], JSON
//! pointers), and [`who`] reads them, with the same messages for every
//! agent when one is missing.

use std::path::PathBuf;

use serde_json::Value;

use crate::event::{Stage, Who};
use crate::Problem;

/// Where a payload holds the fields of [`Who`], as JSON pointers
/// (`/session_id`); `None` where the agent has no such field.
#[derive(Clone, Copy, Debug)]
pub struct Fields {
    /// The conversation's id (required).
    pub session: &'static str,
    /// The agent's working directory (required).
    pub cwd: &'static str,
    /// The subagent that acted, when it was not the main thread.
    pub agent: Option<&'static str>,
    /// The tool call the payload reports.
    pub call: Option<&'static str>,
    /// The agent's transcript of the conversation.
    pub transcript: Option<&'static str>,
    /// The prompt the model is answering.
    pub prompt: Option<&'static str>,
}

/// Claude Code's names, which Qwen Code, Codex and others copy.
pub const CLAUDE: Fields = Fields {
    session: "/session_id",
    cwd: "/cwd",
    agent: Some("/agent_id"),
    call: Some("/tool_use_id"),
    transcript: Some("/transcript_path"),
    prompt: Some("/prompt_id"),
};

/// A non-empty string at `pointer`.
fn text<'a>(payload: &'a Value, pointer: Option<&str>) -> Option<&'a str> {
    payload
        .pointer(pointer?)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The sender of `payload` (the payload of hook `event`, for messages),
/// read where `fields` says: a missing session or working directory is a
/// problem, any other field is optional.
pub fn who(payload: &Value, event: &str, fields: &Fields) -> Result<Who, Problem> {
    let name = |p: &str| p.trim_start_matches('/').replace('/', ".");
    let session = text(payload, Some(fields.session)).ok_or_else(|| {
        Problem::new(format!(
            "the {event} payload has no {} string; pass --sid ID to name the session",
            name(fields.session)
        ))
    })?;
    let cwd = text(payload, Some(fields.cwd)).ok_or_else(|| {
        Problem::new(format!(
            "the {event} payload has no {} string",
            name(fields.cwd)
        ))
    })?;
    Ok(Who {
        session: session.to_string(),
        agent: text(payload, fields.agent).map(String::from),
        cwd: PathBuf::from(cwd),
        call: text(payload, fields.call).map(String::from),
        transcript: text(payload, fields.transcript).map(PathBuf::from),
        prompt: text(payload, fields.prompt).map(String::from),
    })
}

/// The payload, which must be a JSON object; else the problem `why` says
/// (which payload the adapter reads, from where).
pub fn object(bytes: &[u8], why: impl FnOnce() -> String) -> Result<Value, (Stage, Problem)> {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .filter(Value::is_object)
        .ok_or_else(|| (Stage::Other, Problem::new(why())))
}

/// The `hook_event_name` of a payload shaped as Claude Code's.
pub fn hook_event_name(payload: &Value) -> Result<&str, (Stage, Problem)> {
    payload
        .get("hook_event_name")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            (
                Stage::Other,
                Problem::new("the hook payload has no hook_event_name string"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_read_where_the_agent_puts_them() {
        let p = json!({"session_id": "s", "cwd": "/w", "tool_use_id": "toolu_1",
                       "transcript_path": "/h/t.jsonl", "agent_id": "", "prompt_id": "p-1"});
        let w = who(&p, "PostToolUse", &CLAUDE).unwrap();
        assert_eq!(
            w,
            Who {
                session: "s".into(),
                agent: None,
                cwd: "/w".into(),
                call: Some("toolu_1".into()),
                transcript: Some("/h/t.jsonl".into()),
                prompt: Some("p-1".into()),
            }
        );
        let nested = Fields {
            session: "/input/sessionID",
            cwd: "/directory",
            agent: None,
            call: Some("/input/callID"),
            transcript: None,
            prompt: None,
        };
        let e = who(&json!({"directory": "/w"}), "tool.execute.after", &nested).unwrap_err();
        assert_eq!(
            e.0,
            "the tool.execute.after payload has no input.sessionID string; pass --sid ID to name the session"
        );
        let e = who(&json!({"session_id": "s"}), "Stop", &CLAUDE).unwrap_err();
        assert_eq!(e.0, "the Stop payload has no cwd string");
    }
}
