//! Factory Droid's transcript: the files an `@path` in a prompt attached.
//!
//! As written by Droid 0.225.2 (`droid exec`, seen with the real binary:
//! `scripts/e2e-droid at-mention-edit`), the transcript is JSON Lines at
//! the payloads' `transcript_path`. Droid reads a file named by `@path`
//! itself, runs no hook for it, and sends its text to the model in a
//! message of its own, written to the transcript before the model's first
//! call:
//!
//! ```text
//! {"type":"message","id":"context-ID","message":{"role":"user","visibility":"llm_only",
//!  "content":[{"type":"text","text":"<system-reminder>\nContents of ABS (lines A–B of N):\nTEXT\n</system-reminder>"},...]}}
//! ```
//!
//! TEXT is the file's lines A to B joined by `\n` (a file ending in a
//! newline counts the empty line after it: all of a two-line file is
//! "lines 1–3 of 3", and TEXT is then the file's text exactly). Each such
//! block is a view; its origin is the message's id and the block's index.
//! Nothing else of this transcript is read: Droid says nothing there of a
//! compaction fsview understands (a compaction continues in a new session,
//! or says `SessionStart` `compact`, which the hook answers), and it has no
//! rewind headless.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::Value;

use super::{Format, Found, Holding, Located, Resync, Step};
use crate::event::{Event, Extent, Shown, ShownText};

/// Droid's transcript format.
pub struct Droid;

/// The format as Droid 0.225.2 writes it.
pub static DROID: Droid = Droid;

const OPEN: &str = "<system-reminder>\nContents of ";
const CLOSE: &str = "\n</system-reminder>";

impl Format for Droid {
    fn seen_in(&self) -> &'static str {
        "Factory Droid 0.225.2"
    }

    fn read(&self, lines: &[&[u8]], _state: Option<&str>) -> Step {
        Step::Read {
            found: lines.iter().flat_map(|l| attached(l)).collect(),
            state: String::new(),
        }
    }

    fn resync(&self) -> Box<dyn Resync> {
        Box::new(Whole::default())
    }

    fn located(&self, line: &[u8], how: &str) -> Option<Event> {
        attached(line)
            .into_iter()
            .find(|f| f.origin == how)
            .map(|f| f.event)
    }

    fn names(&self, session: &str) -> Option<String> {
        // Its first line starts the session, with its id.
        Some(format!(
            "\"type\":\"session_start\",\"id\":{}",
            Value::from(session)
        ))
    }

    fn siblings(&self, _tail: &[u8], _call: &str) -> Option<HashSet<String>> {
        None
    }
}

/// A whole re-read of Droid's transcript: every file attached is held.
#[derive(Default)]
struct Whole {
    found: Vec<Located>,
}

impl Resync for Whole {
    fn lines(&mut self, lines: &[(u64, &[u8])]) {
        for (at, line) in lines {
            for f in attached(line) {
                self.found.push(Located {
                    how: f.origin.clone(),
                    origin: f.origin,
                    at: *at,
                });
            }
        }
    }

    fn finish(self: Box<Self>) -> Holding {
        Holding {
            live: self.found.iter().map(|f| f.origin.clone()).collect(),
            found: self.found,
            ..Holding::default()
        }
    }
}

/// The files a transcript line attached, if it is Droid's context message.
fn attached(line: &[u8]) -> Vec<Found> {
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return Vec::new();
    };
    let Some(id) = v
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| id.starts_with("context-"))
    else {
        return Vec::new();
    };
    if v.get("type").and_then(Value::as_str) != Some("message")
        || v.pointer("/message/role").and_then(Value::as_str) != Some("user")
    {
        return Vec::new();
    }
    let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
        return Vec::new();
    };
    blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|(i, b)| {
            let shown = contents(b.get("text")?.as_str()?)?;
            Some(Found {
                origin: format!("{id}#{i}"),
                event: Event::Shown(shown),
            })
        })
        .collect()
}

/// One `Contents of ABS (lines A–B of N):\nTEXT` block: the view of lines
/// A to B, whole when they are all N.
fn contents(text: &str) -> Option<Shown> {
    let body = text.strip_prefix(OPEN)?.strip_suffix(CLOSE)?;
    let (head, shown) = body.split_once("):\n")?;
    let (path, range) = head.rsplit_once(" (lines ")?;
    let (first, rest) = range.split_once('–')?;
    let (last, total) = rest.split_once(" of ")?;
    let [first, last, total] = [first, last, total].map(|n| n.parse::<u64>().ok());
    let (first, last, total) = (first?, last?, total?);
    if !path.starts_with('/') || first == 0 || first > last || last > total {
        return None;
    }
    let extent = match (first, last == total) {
        (1, true) => Extent::Whole,
        (1, false) => Extent::Start,
        _ => Extent::Range,
    };
    Some(Shown {
        path: PathBuf::from(path),
        text: ShownText::Lines(shown.to_string()),
        offset: first,
        extent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "type": "message", "id": "context-m1",
            "message": {"role": "user", "visibility": "llm_only",
                        "content": [{"type": "text", "text": "<system-reminder>\nother\n</system-reminder>"},
                                    {"type": "text", "text": text}]}
        }))
        .unwrap()
    }

    #[test]
    fn a_contents_block_is_a_view_of_its_lines() {
        let l = line("<system-reminder>\nContents of /w/m.txt (lines 1–3 of 3):\none\ntwo\n\n</system-reminder>");
        let Step::Read { found, .. } = DROID.read(&[&l], None) else {
            panic!("not a read");
        };
        assert_eq!(
            found,
            vec![Found {
                origin: "context-m1#1".to_string(),
                event: Event::Shown(Shown {
                    path: PathBuf::from("/w/m.txt"),
                    text: ShownText::Lines("one\ntwo\n".to_string()),
                    offset: 1,
                    extent: Extent::Whole,
                }),
            }]
        );
        let l = line("<system-reminder>\nContents of /w/m.txt (lines 2–3 of 9):\ntwo\nthree\n</system-reminder>");
        let (h, found) = crate::transcript::resync_bytes(&DROID, &[&l[..], b"\n"].concat());
        let Event::Shown(s) = &found[0].event else {
            panic!("not shown");
        };
        assert_eq!((s.offset, s.extent), (2, Extent::Range));
        assert_eq!(h.live, HashSet::from(["context-m1#1".to_string()]));
    }

    #[test]
    fn anything_else_is_nothing() {
        for text in [
            "Contents of /w/m.txt (lines 1–3 of 3):\none\n",
            "<system-reminder>\nContents of m.txt (lines 1–1 of 1):\none\n</system-reminder>",
            "<system-reminder>\nContents of /w/m.txt (lines 3–1 of 3):\none\n</system-reminder>",
        ] {
            let Step::Read { found, .. } = DROID.read(&[&line(text)], None) else {
                panic!("not a read");
            };
            assert_eq!(found, vec![], "{text}");
        }
        let Step::Read { found, .. } = DROID.read(&[b"not json", b"{\"id\":\"context-x\"}"], None)
        else {
            panic!("not a read");
        };
        assert_eq!(found, vec![]);
    }
}
