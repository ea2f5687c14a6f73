//! Files an agent attached to a prompt itself, as the prompt's text holds
//! them: each a view, held to the disk, before the prompt's reminder.
//!
//! gemini-cli and Qwen Code (its fork) append the files of a prompt's
//! `@path`s to the prompt the hook gets, between
//! `--- Content from referenced files ---` and `--- End of content ---`,
//! each after a `Content from PATH:` line ([`referenced`]); pi puts its
//! `@FILE` arguments before the prompt in blocks of its own.

use crate::event::{Event, Shown};

const REFERENCED: &str = "\n--- Content from referenced files ---";
const REFERENCED_END: &str = "\n--- End of content ---";

/// Each file of a prompt's `--- Content from referenced files ---` part,
/// its header `each` (`"\nContent from @"` for gemini-cli,
/// `"\nContent from "` for Qwen Code) then `PATH:\n` and its text: the
/// path and the text.
pub fn referenced<'a>(prompt: &'a str, each: &str) -> Vec<(&'a str, &'a str)> {
    let Some(at) = prompt.find(REFERENCED) else {
        return Vec::new();
    };
    let mut rest = &prompt[at + REFERENCED.len()..];
    let Some(end) = rest.rfind(REFERENCED_END) else {
        return Vec::new();
    };
    rest = &rest[..end];
    let mut out = Vec::new();
    while let Some(body) = rest.strip_prefix(each) {
        let Some((path, after)) = body.split_once(":\n") else {
            break;
        };
        let next = after.find(each).unwrap_or(after.len());
        out.push((path, &after[..next]));
        rest = &after[next..];
    }
    out
}

/// A prompt that showed `shown` first: each view, then the prompt.
pub fn prompt_showing(shown: impl IntoIterator<Item = Shown>) -> Event {
    let mut events: Vec<Event> = shown.into_iter().map(Event::Shown).collect();
    if events.is_empty() {
        return Event::Prompt;
    }
    events.push(Event::Prompt);
    Event::Each(events)
}
