//! The reminder at a prompt: which files the agent saw have changed since.
//!
//! One function chooses what to tell ([`news`]); everything else about a
//! reminder (its wording, the agent's protocol) is elsewhere. A change is
//! told once, as Claude Code tells it: a file already in a reminder, and not
//! changed again since, is not repeated on every prompt. It stays changed
//! for the gate until the agent reads it again.

use std::path::Path;

use fsview_store::changes::{self, Changed, Limits};
use fsview_store::events::Event as LogEvent;
use fsview_store::Store;

use crate::core::TOOL;
use crate::Problem;

/// The files of session `sid` that changed since the agent saw them and
/// that no reminder told yet, with their diffs; the reminder events are
/// logged, so the next call does not tell them again.
pub fn news(store: &Store, sid: &str, cwd: &Path, limits: Limits) -> Result<Vec<Changed>, Problem> {
    let found = changes::changed(store, sid, cwd, limits)?;
    let mut told = Vec::new();
    let mut fresh_news = Vec::new();
    for c in found {
        let state = disk_state(&c.record.path);
        let already = store.last_detail(sid, TOOL, "remind", &c.record.path)?;
        if already.as_deref() == Some(state.as_str()) {
            continue;
        }
        told.push(state);
        fresh_news.push(c);
    }
    let events: Vec<LogEvent<'_>> = fresh_news
        .iter()
        .zip(&told)
        .map(|(c, state)| {
            LogEvent::new(TOOL, "remind")
                .path(&c.record.path)
                .verdict(c.change.as_str())
                .detail(Some(state.as_str()))
        })
        .collect();
    store.log(sid, &events)?;
    Ok(fresh_news)
}

/// What is at `path` now, as a short key: a reminder is news again when it
/// changes (identity, size or times), not on every prompt.
fn disk_state(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::symlink_metadata(path) {
        Ok(m) => format!(
            "{}:{}:{}:{}.{}:{}.{}",
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        ),
        Err(_) => "gone".to_string(),
    }
}
