//! Claude Code's transcript, as Claude Code 2.1.332 writes it.
//!
//! One JSON object a line (`~/.claude/projects/PROJECT/SESSION.jsonl`; a
//! subagent's beside it, `SESSION/subagents/agent-ID.jsonl`). The entries
//! of the conversation carry a `uuid` and the `parentUuid` of the entry
//! they follow; others (`api-request`, `queue-operation`, ...) carry
//! neither and say nothing here. Entries as seen in the real binary
//! (fixtures: `tests/fixtures/transcripts/claude-2.1.332/`):
//!
//! - `"type": "attachment"` with `attachment.type` `"file"`: a file Claude
//!   Code read itself and showed the model: an `@path` in a prompt (written
//!   before the model's first tool call), or a file re-attached after a
//!   compaction. `attachment.content` is exactly the Read tool's response
//!   (`{type: "text", file: {filePath, content, numLines, startLine,
//!   totalLines}}`, or a notebook's cells), `truncated: true` when a file
//!   over the token cap showed only its first lines, `range: {offset,
//!   limit}` for `@path#L10-20`. A view of it, as a Read's; its origin is
//!   the entry's `uuid`. Other attachments show no file text fsview can
//!   hold: `already_read_file` (shows nothing: the model holds its earlier
//!   read), `compact_file_reference` and `at_mention_reference` (a path
//!   only), `edited_text_file` (a change notice), `nested_memory`
//!   (instruction files, recorded through `InstructionsLoaded`).
//! - `"type": "assistant"`, one entry per content block: a `tool_use` block
//!   (`id`, `name`, `input`) is a tool call; `"type": "user"` with a
//!   `tool_result` block (`tool_use_id`) is its result, with the tool's
//!   response in `toolUseResult` (the PostToolUse `tool_response`). The
//!   hooks record those; a result whose call the session has no view from
//!   (a hook failed, or fsview was installed later) is recorded from here.
//!   Results of parallel calls each follow their own call, not the entry
//!   before them. A subagent's transcript keeps no `toolUseResult`: its
//!   reads are known from its hooks only.
//! - `"type": "system"`, `"subtype": "compact_boundary"`: a compaction, with
//!   `parentUuid` null, and `compactMetadata.preservedMessages.uuids` the
//!   messages it kept. It is written after the `PostCompact` hook, with the
//!   summary and the re-attached files after it.
//! - `"type": "attachment"` with `attachment.type` `"tool_results_cut"`:
//!   results Claude Code takes out of every request after it
//!   (`attachment.callIds`, the calls' ids; each result is sent as
//!   "[Old tool result content cleared]", its own line left whole). Seen
//!   with the real binary when a resumed conversation comes back after a
//!   pause of over 65 minutes with about 30 Read results or more (the idle
//!   clearing, behind a feature flag of Claude Code's:
//!   `scripts/e2e-claude microcompact-idle`); no hook fires. Those calls'
//!   views are released as a compaction's.
//! - A rewind (`--resume-session-at`, the interactive rewind) leaves the
//!   abandoned entries in the file: the next prompt's `parentUuid` is the
//!   message rewound to, not the last entry.
//!
//! What the conversation holds is the live chain: from the last entry that
//! is no tool's result up its `parentUuid`s to the first, or to a
//! compaction's boundary and the messages it kept. Its views are those of
//! its file attachments and of the calls of its assistant entries that
//! have a result, whatever the tool (a Read's, a shell command's read or
//! write, a refusal that gave a file back); all others the transcript
//! knows are no longer held. Incrementally, a boundary, or any entry that
//! does not follow the last one read (a rewind's prompt, and the local
//! commands, their caveats and the attachments written before it) makes
//! the whole file read again; the results of parallel calls each follow
//! their own call, and what comes after them one of them. Anything else
//! only records the views of the new lines.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{Format, Found, Holding, Located, Resync, Step};
use crate::claude;
use crate::event::Event;

/// Claude Code's transcript format.
pub struct ClaudeCode;

pub static CLAUDE_CODE: ClaudeCode = ClaudeCode;

/// The reader's state between hooks.
#[derive(Default, Serialize, Deserialize)]
struct State {
    /// The last entry of the conversation read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    leaf: Option<String>,
    /// The results of calls read since the last entry that is none: the
    /// next entry may follow any of them (parallel calls' results each
    /// follow their own call, in the order they finish).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tips: Vec<String>,
    /// Calls read without their result yet: the tool, the input's offset
    /// and limit (a Read's extent depends on them), and the entry that
    /// made the call, which its result follows.
    #[serde(default, skip_serializing_if = "HashMap::is_empty")]
    calls: HashMap<String, Call>,
    /// The `promptId` of the last line read that has one: the prompt the
    /// transcript has reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prompt: Option<String>,
}

impl State {
    /// The state a previous call left (`None` at first, or not understood:
    /// the state at the start).
    fn of(state: Option<&str>) -> State {
        state
            .and_then(|s| serde_json::from_str(s).ok())
            .unwrap_or_default()
    }

    /// Whether entry `e` (of the conversation) continues the branch read
    /// so far: it follows the last entry, or the results of calls since
    /// the last entry that is none, or it holds the result of a call read
    /// and follows the entry that made it (parallel calls). Anything else
    /// is another branch, whatever the entry is.
    fn follows(&self, e: &Entry) -> bool {
        let Some(leaf) = &self.leaf else {
            return true; // the first entry read
        };
        let Some(parent) = &e.parent else {
            return false;
        };
        parent == leaf
            || self.tips.contains(parent)
            || e.results().any(|id| {
                self.calls
                    .get(id)
                    .is_some_and(|c| c.entry.as_ref() == Some(parent))
            })
    }
}

#[derive(Clone, Serialize, Deserialize)]
struct Call {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    offset: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    limit: Option<Value>,
    /// The entry that made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    entry: Option<String>,
}

/// What fsview reads of an entry; large fields (a tool's whole output, a
/// file's text) are skipped, and parsed only where needed.
#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    subtype: Option<String>,
    #[serde(default)]
    uuid: Option<String>,
    #[serde(rename = "parentUuid", default)]
    parent: Option<String>,
    #[serde(rename = "isMeta", default)]
    meta: bool,
    /// The prompt whose turn the entry is part of (a prompt and its
    /// tools' results carry it).
    #[serde(rename = "promptId", default)]
    prompt: Option<String>,
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    attachment: Option<Attachment>,
    #[serde(rename = "compactMetadata", default)]
    compact: Option<CompactMetadata>,
}

#[derive(Deserialize)]
struct Message {
    /// The API message's id: the entries of one message (one per content
    /// block) share it.
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    content: Content,
}

#[derive(Deserialize, Default)]
#[serde(untagged)]
enum Content {
    Blocks(Vec<Block>),
    Text(serde::de::IgnoredAny),
    #[default]
    None,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    input: Option<Input>,
    #[serde(default)]
    tool_use_id: Option<String>,
}

#[derive(Deserialize)]
struct Input {
    #[serde(default)]
    offset: Option<Value>,
    #[serde(default)]
    limit: Option<Value>,
}

#[derive(Deserialize)]
struct Attachment {
    #[serde(rename = "type", default)]
    kind: String,
    /// A `tool_results_cut`'s calls.
    #[serde(rename = "callIds", default)]
    call_ids: Vec<String>,
}

#[derive(Deserialize)]
struct CompactMetadata {
    #[serde(rename = "preservedMessages", default)]
    preserved: Option<Preserved>,
}

#[derive(Deserialize)]
struct Preserved {
    #[serde(default)]
    uuids: Vec<String>,
}

impl Entry {
    /// An entry of the conversation (the others have no uuid).
    fn in_chain(&self) -> bool {
        self.uuid.is_some()
            && matches!(
                self.kind.as_str(),
                "user" | "assistant" | "attachment" | "system"
            )
    }

    fn blocks(&self) -> &[Block] {
        match self.message.as_ref().map(|m| &m.content) {
            Some(Content::Blocks(b)) => b,
            _ => &[],
        }
    }

    /// A prompt: a user entry that is no tool's result (and no
    /// harness note).
    fn is_prompt(&self) -> bool {
        self.kind == "user" && !self.meta && !self.blocks().iter().any(|b| b.kind == "tool_result")
    }

    fn is_boundary(&self) -> bool {
        self.kind == "system" && self.subtype.as_deref() == Some("compact_boundary")
    }

    fn is_file_attachment(&self) -> bool {
        self.kind == "attachment" && self.attachment.as_ref().is_some_and(|a| a.kind == "file")
    }

    /// The calls whose results a `tool_results_cut` took out of every
    /// request after it.
    fn cut(&self) -> Option<&[String]> {
        if self.kind != "attachment" {
            return None;
        }
        self.attachment
            .as_ref()
            .filter(|a| a.kind == "tool_results_cut")
            .map(|a| a.call_ids.as_slice())
    }

    /// The tools this entry calls, whatever they are: a view may come of
    /// any call (a file tool's, a shell command's read or write, a
    /// refusal that gave a file back), and goes with it.
    fn calls(&self) -> impl Iterator<Item = (&str, Call)> {
        self.blocks().iter().filter_map(|b| {
            if b.kind != "tool_use" {
                return None;
            }
            Some((
                b.id.as_deref()?,
                Call {
                    name: b.name.clone().unwrap_or_default(),
                    offset: b.input.as_ref().and_then(|i| i.offset.clone()),
                    limit: b.input.as_ref().and_then(|i| i.limit.clone()),
                    entry: self.uuid.clone(),
                },
            ))
        })
    }

    /// The calls whose results this entry holds.
    fn results(&self) -> impl Iterator<Item = &str> {
        self.blocks()
            .iter()
            .filter(|b| b.kind == "tool_result")
            .filter_map(|b| b.tool_use_id.as_deref())
    }
}

fn parse(line: &[u8]) -> Option<Entry> {
    serde_json::from_slice(line).ok()
}

/// The view a file attachment shows, as a Read of it would.
fn attached(line: &[u8]) -> Option<Event> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let a = v.get("attachment")?;
    let path = a.get("filename")?.as_str().filter(|p| !p.is_empty())?;
    let content = a.get("content").filter(|c| c.is_object())?;
    // What the mention asked for: a range, else the whole file (cut at the
    // start when `truncated`: the extent of a read with no offset).
    let input = match a.get("range") {
        Some(r) => json!({"file_path": path, "offset": r.get("offset"), "limit": r.get("limit")}),
        None => json!({"file_path": path}),
    };
    let mut response = content.clone();
    if a.get("truncated").and_then(Value::as_bool) == Some(true) {
        if let Some(file) = response.get_mut("file").and_then(Value::as_object_mut) {
            file.insert("truncatedByTokenCap".into(), true.into());
        }
    }
    claude::read(PathBuf::from(path), &input, &response)
        .ok()
        .filter(|e| *e != Event::Ignored)
}

/// The view a file tool's result shows or makes, as its hook would have
/// (a shell command's is its hook's alone).
fn resulted(line: &[u8], call: &Call) -> Option<Event> {
    if !claude::is_file_tool(&call.name) {
        return None;
    }
    let v: Value = serde_json::from_slice(line).ok()?;
    let response = v.get("toolUseResult").filter(|r| r.is_object())?;
    let path = response
        .get("filePath")
        .or_else(|| response.pointer("/file/filePath"))
        .or_else(|| response.get("notebook_path"))
        .and_then(Value::as_str)?;
    let key = if call.name == "NotebookEdit" {
        "notebook_path"
    } else {
        "file_path"
    };
    let mut input = json!({ key: path });
    if let Some(o) = &call.offset {
        input["offset"] = o.clone();
    }
    if let Some(l) = &call.limit {
        input["limit"] = l.clone();
    }
    claude::tool_result(&call.name, &input, response)
        .ok()
        .filter(|e| *e != Event::Ignored)
}

impl Format for ClaudeCode {
    fn seen_in(&self) -> &'static str {
        "Claude Code 2.1.332"
    }

    fn read(&self, lines: &[&[u8]], state: Option<&str>) -> Step {
        let mut st = State::of(state);
        let mut found = Vec::new();
        for line in lines {
            let Some(e) = parse(line) else {
                continue; // not understood: says nothing
            };
            if e.prompt.is_some() {
                st.prompt.clone_from(&e.prompt);
            }
            if e.is_boundary() {
                return Step::Resync { compaction: true };
            }
            if !e.in_chain() {
                continue;
            }
            if e.cut().is_some() {
                // Results taken out of the conversation: what it holds is
                // settled again, with the cut (on the live chain) applied.
                return Step::Resync { compaction: false };
            }
            if !st.follows(&e) {
                // Another branch (a rewind; after it, local commands,
                // their caveats and attachments come before the prompt):
                // what the conversation holds is settled again.
                return Step::Resync { compaction: false };
            }
            if e.is_prompt() {
                // A new turn: calls of the last one have their results.
                st.calls.clear();
            }
            match e.results().next() {
                Some(_) => st.tips.extend(e.uuid.clone()),
                None => st.tips.clear(),
            }
            st.leaf = e.uuid.clone();
            for (id, call) in e.calls() {
                st.calls.insert(id.to_string(), call);
            }
            for id in e.results() {
                let Some(call) = st.calls.remove(id) else {
                    continue;
                };
                if let Some(event) = resulted(line, &call) {
                    found.push(Found {
                        origin: id.to_string(),
                        event,
                    });
                }
            }
            if e.is_file_attachment() {
                if let (Some(uuid), Some(event)) = (&e.uuid, attached(line)) {
                    found.push(Found {
                        origin: uuid.clone(),
                        event,
                    });
                }
            }
        }
        Step::Read {
            found,
            state: serde_json::to_string(&st).unwrap_or_default(),
        }
    }

    fn siblings(&self, tail: &[u8], call: &str) -> Option<HashSet<String>> {
        let entries: Vec<Entry> = tail
            .split(|b| *b == b'\n')
            .filter_map(parse)
            .filter(|e| e.kind == "assistant")
            .collect();
        let message = entries
            .iter()
            .find(|e| {
                e.blocks()
                    .iter()
                    .any(|b| b.kind == "tool_use" && b.id.as_deref() == Some(call))
            })?
            .message
            .as_ref()?
            .id
            .clone()?;
        Some(
            entries
                .iter()
                .filter(|e| e.message.as_ref().and_then(|m| m.id.as_deref()) == Some(&message))
                .flat_map(|e| e.blocks().iter())
                .filter(|b| b.kind == "tool_use")
                .filter_map(|b| b.id.clone())
                .filter(|id| id != call)
                .collect(),
        )
    }

    fn prompt_mark(&self, prompt: &str) -> Option<String> {
        // Claude Code writes its transcript as compact JSON.
        Some(format!("\"promptId\":{}", Value::from(prompt)))
    }

    fn at_prompt(&self, state: Option<&str>, prompt: &str) -> bool {
        State::of(state).prompt.is_some_and(|p| p == prompt)
    }

    fn reached(&self, state: Option<&str>, prompt: &str) -> Option<String> {
        let mut st = State::of(state);
        st.prompt = Some(prompt.to_string());
        serde_json::to_string(&st).ok()
    }

    fn resync(&self) -> Box<dyn Resync> {
        Box::new(Whole::default())
    }

    fn located(&self, line: &[u8], how: &str) -> Option<Event> {
        match how {
            ATTACHED => attached(line),
            call => resulted(line, &serde_json::from_str(call).ok()?),
        }
    }

    fn names(&self, session: &str) -> Option<String> {
        // Claude Code writes every entry as compact JSON, each with the
        // conversation's id.
        Some(format!("\"sessionId\":{}", Value::from(session)))
    }
}

/// How a [`Located`] from an attachment is read ([`Format::located`]);
/// one from a call's result is the call, as JSON.
const ATTACHED: &str = "attachment";

/// An entry of the conversation as a whole re-read keeps it: its ids, and
/// where its line is.
struct Node {
    uuid: String,
    parent: Option<String>,
    /// Where its line starts.
    at: u64,
    /// A file attachment's entry.
    file: bool,
    /// A compaction's boundary: the messages it kept.
    boundary: Option<Vec<String>>,
    /// The calls it makes.
    calls: Vec<(String, Call)>,
    /// The calls whose results it holds.
    results: Vec<String>,
    /// The calls whose results it cut (`tool_results_cut`).
    cut: Vec<String>,
    /// The prompt whose turn it is part of (`promptId`).
    prompt: Option<String>,
}

/// A whole re-read of Claude Code's transcript ([`Format::resync`]).
#[derive(Default)]
struct Whole {
    nodes: Vec<Node>,
    /// The `promptId` of the last line that has one.
    prompt: Option<String>,
}

impl Resync for Whole {
    fn lines(&mut self, lines: &[(u64, &[u8])]) {
        for (at, line) in lines {
            let Some(e) = parse(line) else {
                continue;
            };
            if e.prompt.is_some() {
                self.prompt.clone_from(&e.prompt);
            }
            if !e.in_chain() {
                continue;
            }
            let Some(uuid) = e.uuid.clone() else {
                continue;
            };
            self.nodes.push(Node {
                boundary: e.is_boundary().then(|| {
                    e.compact
                        .as_ref()
                        .and_then(|c| c.preserved.as_ref())
                        .map(|p| p.uuids.clone())
                        .unwrap_or_default()
                }),
                file: e.is_file_attachment(),
                calls: e.calls().map(|(id, c)| (id.to_string(), c)).collect(),
                results: e.results().map(String::from).collect(),
                cut: e.cut().map(<[String]>::to_vec).unwrap_or_default(),
                prompt: e.prompt.clone(),
                parent: e.parent,
                uuid,
                at: *at,
            });
        }
    }

    fn finish(self: Box<Self>) -> Holding {
        let nodes = self.nodes;
        let index: HashMap<&str, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.uuid.as_str(), i))
            .collect();
        // The live chain: up from the last entry to the first, or to a
        // compaction's boundary and what it kept. Results of parallel
        // calls each follow their own call, so the last entry that holds
        // no result is where the chain starts: the calls of its message
        // are on it (a result written late, of a call of another branch,
        // is not).
        let tip = nodes
            .iter()
            .rposition(|n| n.results.is_empty())
            .or(nodes.len().checked_sub(1));
        let mut live_nodes: HashSet<usize> = HashSet::new();
        let mut boundary = None;
        let mut at = tip;
        while let Some(i) = at {
            if !live_nodes.insert(i) {
                break; // a cycle: stop
            }
            let n = &nodes[i];
            if let Some(kept) = &n.boundary {
                boundary = Some(i);
                for u in kept {
                    if let Some(&k) = index.get(u.as_str()) {
                        live_nodes.insert(k);
                    }
                }
                break;
            }
            at = n.parent.as_deref().and_then(|p| index.get(p).copied());
        }
        // Which calls have a result, and where.
        let mut result_of: HashMap<&str, usize> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            for id in &n.results {
                result_of.entry(id).or_insert(i);
            }
        }
        // Results a cut on the live chain took out: Claude Code leaves
        // them out of every request after it (their lines stay whole).
        let cut: HashSet<&str> = live_nodes
            .iter()
            .flat_map(|&i| nodes[i].cut.iter().map(String::as_str))
            .collect();
        let mut h = Holding::default();
        let mut found: Vec<(usize, Located)> = Vec::new();
        let mut cleared = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let live = live_nodes.contains(&i);
            // Known and no longer held: before the compaction on the live
            // chain, else on an abandoned branch.
            let gone = match boundary {
                Some(b) if i < b => &mut h.compacted,
                _ => &mut h.abandoned,
            };
            if n.file {
                if !live {
                    gone.insert(n.uuid.clone());
                } else {
                    h.live.insert(n.uuid.clone());
                    let how = ATTACHED.to_string();
                    found.push((
                        i,
                        Located {
                            origin: n.uuid.clone(),
                            at: n.at,
                            how,
                        },
                    ));
                }
            }
            for (id, call) in &n.calls {
                match (live, result_of.get(id.as_str()).copied()) {
                    (false, _) => {
                        gone.insert(id.clone());
                    }
                    // A live call with no result yet (its hook may be
                    // running): neither held nor gone.
                    (true, None) => {}
                    (true, Some(_)) if cut.contains(id.as_str()) => {
                        cleared.push(id.clone());
                    }
                    (true, Some(r)) => {
                        h.live.insert(id.clone());
                        if claude::is_file_tool(&call.name) {
                            let how = serde_json::to_string(call).unwrap_or_default();
                            let at = nodes[r].at;
                            let origin = id.clone();
                            found.push((r, Located { origin, at, how }));
                        }
                    }
                }
            }
        }
        h.compacted.extend(cleared);
        // What was told with a prompt holds while an entry of its turn is
        // on the live chain (the prompt's own is, when any later one is).
        let live_prompts: HashSet<&str> = live_nodes
            .iter()
            .filter_map(|&i| nodes[i].prompt.as_deref())
            .collect();
        for (i, n) in nodes.iter().enumerate() {
            let Some(p) = n.prompt.as_deref() else {
                continue;
            };
            let origin = super::prompt_origin(p);
            if live_prompts.contains(p) {
                h.live.insert(origin);
            } else if boundary.is_some_and(|b| i < b) {
                h.compacted.insert(origin);
            } else {
                h.abandoned.insert(origin);
            }
        }
        found.sort_by_key(|(at, _)| *at);
        h.found = found.into_iter().map(|(_, f)| f).collect();
        // Read on from here as if line by line: the live calls still
        // without a result, and the results after the chain's start.
        let calls = live_nodes
            .iter()
            .flat_map(|&i| nodes[i].calls.iter())
            .filter(|(id, _)| !result_of.contains_key(id.as_str()))
            .map(|(id, c)| (id.clone(), c.clone()))
            .collect();
        let tips = tip.map_or(Vec::new(), |t| {
            nodes[t + 1..].iter().map(|n| n.uuid.clone()).collect()
        });
        let st = State {
            leaf: nodes.last().map(|n| n.uuid.clone()),
            tips,
            calls,
            prompt: self.prompt,
        };
        h.state = serde_json::to_string(&st).unwrap_or_default();
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Changed, Shown, ShownText};
    use crate::transcript::resync_bytes;
    use serde_json::json;

    // Real transcripts of Claude Code 2.1.332, captured by
    // `scripts/e2e-claude --save-fixtures capture-transcripts`.
    const MENTION_COMPACT: &[u8] = include_bytes!(
        "../../../../tests/fixtures/transcripts/claude-2.1.332/mention_compact.jsonl"
    );
    const REWIND: &[u8] =
        include_bytes!("../../../../tests/fixtures/transcripts/claude-2.1.332/rewind.jsonl");
    const PARALLEL: &[u8] =
        include_bytes!("../../../../tests/fixtures/transcripts/claude-2.1.332/parallel.jsonl");
    const SUBAGENT: &[u8] = include_bytes!(
        "../../../../tests/fixtures/transcripts/claude-2.1.332/parallel_subagent.jsonl"
    );

    fn lines(all: &[u8]) -> Vec<&[u8]> {
        all.split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// Each view found: its origin, path, extent, first line and text (or
    /// "changed" and the new text).
    fn shown(found: &[Found]) -> Vec<(String, String, String)> {
        found
            .iter()
            .map(|f| match &f.event {
                Event::Shown(Shown {
                    path,
                    text: ShownText::Lines(t),
                    offset,
                    extent,
                }) => (
                    f.origin.clone(),
                    path.display().to_string(),
                    format!("{extent:?} from {offset}: {}", t.lines().count()),
                ),
                Event::Changed(Changed { path, text, .. }) => (
                    f.origin.clone(),
                    path.display().to_string(),
                    format!("changed to {text:?}"),
                ),
                other => (f.origin.clone(), String::new(), format!("{other:?}")),
            })
            .collect()
    }

    /// [`resync_bytes`], with only the calls' and attachments' origins:
    /// the prompts' ([`super::super::prompt_origin`]) are tested apart.
    fn resync_calls(format: &dyn super::super::Format, all: &[u8]) -> (Holding, Vec<Found>) {
        let (mut h, found) = resync_bytes(format, all);
        for s in [&mut h.live, &mut h.abandoned, &mut h.compacted] {
            s.retain(|o| !o.starts_with(super::super::PROMPT_ORIGIN));
        }
        (h, found)
    }

    /// The prompts' origins among `ids`.
    fn prompts(ids: &HashSet<String>) -> Vec<String> {
        let mut v: Vec<String> = ids
            .iter()
            .filter(|o| o.starts_with(super::super::PROMPT_ORIGIN))
            .cloned()
            .collect();
        v.sort();
        v
    }

    // What was told with a prompt holds while that prompt's turn is on the
    // live chain: the rewound prompt's is abandoned, the others held.
    #[test]
    fn a_rewind_abandons_what_its_prompts_were_told() {
        let (h, _) = resync_bytes(&CLAUDE_CODE, REWIND);
        assert_eq!(
            prompts(&h.live),
            [
                "prompt:6bae9701-8fc6-4940-8f41-71f990874779",
                "prompt:f43c6e80-f1e4-4d62-b26f-43f929d6f831"
            ]
        );
        assert_eq!(
            prompts(&h.abandoned),
            ["prompt:8d7d4fbe-44cc-447f-ab79-6c0b45105c81"]
        );
        assert!(prompts(&h.compacted).is_empty());
    }

    fn set(ids: &[&str]) -> HashSet<String> {
        ids.iter().map(|s| s.to_string()).collect()
    }

    // Read a hook at a time: the @-mentions are views of what they showed
    // (whole, cut at the token cap, a range; a file too large shows
    // nothing), the tools' results too; the compaction asks for a resync.
    #[test]
    fn mentions_and_results_are_found_as_they_come() {
        let all = lines(MENTION_COMPACT);
        let boundary = all
            .iter()
            .position(|l| l.windows(16).any(|w| w == b"compact_boundary"))
            .unwrap();
        let (before, after) = all.split_at(boundary);
        let Step::Read { found, state } = CLAUDE_CODE.read(before, None) else {
            panic!("no resync before the compaction");
        };
        assert_eq!(
            shown(&found),
            [
                (
                    "bc9e9357-c0d0-4b34-a17a-d2e139abfc3e",
                    "@CWD@/notes.txt",
                    "Whole from 1: 2"
                ),
                (
                    "toolu_e2e_0002",
                    "@CWD@/notes.txt",
                    "changed to \"ALPHA\\nbeta\\n\""
                ),
                (
                    "ded23d10-00d2-4326-815f-923800d86027",
                    "@CWD@/cut.txt",
                    "Start from 1: 2000"
                ),
                ("toolu_e2e_0003", "@CWD@/a.txt", "Whole from 1: 4"),
                (
                    "83f9c202-c66a-40c7-976b-0eb278a227d7",
                    "@CWD@/a.txt",
                    "Range from 2: 2"
                ),
            ]
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        );
        assert_eq!(
            CLAUDE_CODE.read(&after[..1], Some(&state)),
            Step::Resync { compaction: true }
        );
        // Lines read in two calls say what they say in one.
        let (one, two) = before.split_at(10);
        let Step::Read { found: f1, state } = CLAUDE_CODE.read(one, None) else {
            panic!()
        };
        let Step::Read { found: f2, .. } = CLAUDE_CODE.read(two, Some(&state)) else {
            panic!()
        };
        assert_eq!([f1, f2].concat(), found);
    }

    // After the compaction, the conversation holds what it re-attached and
    // what came after; every view of before is known and dropped.
    #[test]
    fn a_compaction_holds_what_it_reattached() {
        let (h, found) = resync_calls(&CLAUDE_CODE, MENTION_COMPACT);
        assert_eq!(
            shown(&found),
            [
                (
                    "21010280-0f63-452d-86f3-5ba1dc1ba6f5",
                    "@CWD@/a.txt",
                    "Whole from 1: 4"
                ),
                (
                    "d25a4f54-c55d-4628-a964-bd9318ff1b6d",
                    "@CWD@/notes.txt",
                    "Whole from 1: 2"
                ),
                (
                    "toolu_e2e_0004",
                    "@CWD@/a.txt",
                    "changed to \"one\\nTWO\\nthree\\nfour\\n\""
                ),
            ]
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        );
        assert_eq!(
            h.live,
            set(&[
                "21010280-0f63-452d-86f3-5ba1dc1ba6f5",
                "d25a4f54-c55d-4628-a964-bd9318ff1b6d",
                "toolu_e2e_0004"
            ])
        );
        assert_eq!(
            h.compacted,
            set(&[
                "bc9e9357-c0d0-4b34-a17a-d2e139abfc3e",
                "toolu_e2e_0002",
                "ded23d10-00d2-4326-815f-923800d86027",
                "toolu_e2e_0003",
                "83f9c202-c66a-40c7-976b-0eb278a227d7",
            ])
        );
        assert!(h.abandoned.is_empty());
        // A message the compaction kept keeps its views: here, as if it
        // had kept the Read of a.txt's result.
        let kept = String::from_utf8(MENTION_COMPACT.to_vec()).unwrap().replace(
            "\"uuids\":[\"d52aaf85-1aa2-45b2-b487-2d278586df91\"]",
            "\"uuids\":[\"e837f4d4-d50c-4bbd-af67-b87a96979d35\",\"5862929c-0d19-4856-8233-d1b11f6cac4a\"]",
        );
        assert_ne!(kept.as_bytes(), MENTION_COMPACT);
        let (h, _) = resync_calls(&CLAUDE_CODE, kept.as_bytes());
        assert!(h.live.contains("toolu_e2e_0003"));
        assert!(!h.compacted.contains("toolu_e2e_0003"));
    }

    // The reader knows which prompt the transcript has reached: the
    // `promptId` of the last line that has one (a prompt, a tool's
    // result), read line by line or whole; a prompt whose lines never
    // came is taken as reached when told.
    #[test]
    fn the_reader_knows_the_prompt_it_reached() {
        const T_B: &str = "8d7d4fbe-44cc-447f-ab79-6c0b45105c81";
        const REWOUND: &str = "f43c6e80-f1e4-4d62-b26f-43f929d6f831";
        assert_eq!(
            CLAUDE_CODE.prompt_mark(REWOUND).unwrap(),
            format!("\"promptId\":\"{REWOUND}\"")
        );
        let all = lines(REWIND);
        let rewound = all
            .iter()
            .position(|l| l.windows(11).any(|w| w == b"[t-rewound]"))
            .unwrap();
        let Step::Read { state, .. } = CLAUDE_CODE.read(&all[..rewound], None) else {
            panic!("no resync before the rewind");
        };
        assert!(CLAUDE_CODE.at_prompt(Some(&state), T_B));
        assert!(!CLAUDE_CODE.at_prompt(Some(&state), REWOUND));
        assert!(!CLAUDE_CODE.at_prompt(None, T_B));
        let (h, _) = resync_calls(&CLAUDE_CODE, REWIND);
        assert!(CLAUDE_CODE.at_prompt(Some(&h.state), REWOUND));
        assert!(!CLAUDE_CODE.at_prompt(Some(&h.state), T_B));
        let told = CLAUDE_CODE.reached(Some(&state), "p-never").unwrap();
        assert!(CLAUDE_CODE.at_prompt(Some(&told), "p-never"));
        // Nothing else of the state changes: the rewound prompt is still
        // seen as one.
        assert_eq!(
            CLAUDE_CODE.read(&all[rewound..], Some(&told)),
            Step::Resync { compaction: false }
        );
    }

    // A prompt that does not follow the last entry is a rewind: the turn
    // it abandons (b.txt's read) is dropped, the rest held.
    #[test]
    fn a_rewind_abandons_its_branch() {
        let all = lines(REWIND);
        let rewound = all
            .iter()
            .position(|l| l.windows(11).any(|w| w == b"[t-rewound]"))
            .unwrap();
        let Step::Read { found, state } = CLAUDE_CODE.read(&all[..rewound], None) else {
            panic!("no resync before the rewind");
        };
        assert_eq!(found.len(), 2);
        assert_eq!(
            CLAUDE_CODE.read(&all[rewound..], Some(&state)),
            Step::Resync { compaction: false }
        );
        let (h, found) = resync_calls(&CLAUDE_CODE, REWIND);
        assert_eq!(h.live, set(&["toolu_e2e_0003", "toolu_e2e_0006"]));
        assert_eq!(h.abandoned, set(&["toolu_e2e_0005"]));
        assert!(h.compacted.is_empty());
        assert_eq!(
            shown(&found)
                .into_iter()
                .map(|(o, p, _)| (o, p))
                .collect::<Vec<_>>(),
            [
                ("toolu_e2e_0003".to_string(), "@CWD@/a.txt".to_string()),
                ("toolu_e2e_0006".to_string(), "@CWD@/b.txt".to_string()),
            ]
        );
    }

    // A `tool_results_cut` (its shape as Claude Code 2.1.332 writes it:
    // `scripts/e2e-claude microcompact-idle`) takes the calls it names out
    // of the conversation; one off the live chain cuts nothing.
    #[test]
    fn a_cut_releases_the_results_it_names() {
        let all = lines(REWIND);
        let last = all
            .iter()
            .rev()
            .find_map(|l| parse(l).filter(Entry::in_chain).and_then(|e| e.uuid))
            .unwrap();
        let cut = |parent: &str, uuid: &str| {
            json!({"parentUuid": parent, "isSidechain": false, "type": "attachment", "uuid": uuid,
                   "timestamp": "2026-12-07T13:04:35.317Z",
                   "attachment": {"type": "tool_results_cut", "callIds": ["toolu_e2e_0003"],
                                  "standIn": "[Old tool result content cleared]", "roughTokens": 28062}})
            .to_string()
        };
        let on_chain = cut(&last, "cut-1");
        let (before, _) = resync_calls(&CLAUDE_CODE, REWIND);
        assert_eq!(
            CLAUDE_CODE.read(&[on_chain.as_bytes()], Some(&before.state)),
            Step::Resync { compaction: false }
        );
        let mut bytes = REWIND.to_vec();
        bytes.extend_from_slice(on_chain.as_bytes());
        bytes.push(b'\n');
        let (h, found) = resync_calls(&CLAUDE_CODE, &bytes);
        assert_eq!(h.live, set(&["toolu_e2e_0006"]));
        assert_eq!(h.compacted, set(&["toolu_e2e_0003"]));
        assert_eq!(h.abandoned, set(&["toolu_e2e_0005"]));
        assert_eq!(
            shown(&found)
                .into_iter()
                .map(|(o, _, _)| o)
                .collect::<Vec<_>>(),
            ["toolu_e2e_0006".to_string()]
        );
        // The same cut on a branch the conversation left: nothing cut.
        let first = all
            .iter()
            .find_map(|l| parse(l).filter(Entry::in_chain).and_then(|e| e.uuid))
            .unwrap();
        let mut bytes = REWIND.to_vec();
        bytes.extend_from_slice(cut(&first, "cut-2").as_bytes());
        bytes.push(b'\n');
        bytes.extend_from_slice(
            json!({"parentUuid": last, "type": "user", "uuid": "after-cut",
                   "message": {"role": "user", "content": "go on"}})
            .to_string()
            .as_bytes(),
        );
        bytes.push(b'\n');
        let (h, _) = resync_calls(&CLAUDE_CODE, &bytes);
        assert_eq!(h.live, set(&["toolu_e2e_0003", "toolu_e2e_0006"]));
        assert!(h.compacted.is_empty(), "{:?}", h.compacted);
    }

    // Results of parallel calls each follow their own call, not the last
    // entry: all of them are held, and no rewind is seen.
    #[test]
    fn parallel_results_are_held() {
        let Step::Read { found, .. } = CLAUDE_CODE.read(&lines(PARALLEL), None) else {
            panic!("parallel results are no rewind");
        };
        let (h, whole) = resync_calls(&CLAUDE_CODE, PARALLEL);
        // The subagent's launch (toolu_e2e_0001) is a call of the
        // conversation too.
        assert_eq!(
            h.live,
            set(&["toolu_e2e_0007", "toolu_e2e_0008", "toolu_e2e_0001"])
        );
        assert_eq!(whole, found);
        assert_eq!(found.len(), 2);
        // A subagent's own transcript reads the same way.
        let (h, _) = resync_calls(&CLAUDE_CODE, SUBAGENT);
        assert_eq!(h.live, set(&["toolu_e2e_0009"]));
    }

    /// `all` with the Read of the turn the rewind abandons (toolu_e2e_0005)
    /// made a shell command's.
    fn rewind_with_a_shell_read() -> Vec<u8> {
        let all = String::from_utf8(REWIND.to_vec()).unwrap();
        let shell = all.replace(
            "\"id\":\"toolu_e2e_0005\",\"name\":\"Read\",\"input\":{\"file_path\":\"@CWD@/b.txt\"}",
            "\"id\":\"toolu_e2e_0005\",\"name\":\"Bash\",\"input\":{\"command\":\"cat b.txt\"}",
        );
        assert_ne!(shell, all);
        shell.into_bytes()
    }

    // Every call of an abandoned turn goes with it, whatever its tool: a
    // shell command's read (or write, or a refusal that gave a file back)
    // is as much a view as a Read's.
    #[test]
    fn a_rewind_abandons_every_call_of_its_branch() {
        let (h, found) = resync_calls(&CLAUDE_CODE, &rewind_with_a_shell_read());
        assert_eq!(h.abandoned, set(&["toolu_e2e_0005"]));
        assert_eq!(h.live, set(&["toolu_e2e_0003", "toolu_e2e_0006"]));
        // A shell command's view is its hook's to record, not the
        // transcript's.
        assert_eq!(found.len(), 2);
    }

    // After a rewind, a local command (`/cost`) writes its caveat, its
    // name and its output before the next prompt: the caveat follows the
    // message rewound to, not the last entry, and that is the branch.
    #[test]
    fn any_entry_off_the_last_one_is_a_branch() {
        const REWOUND_TO: &str = "f013b9f0-7fac-46b2-878c-4cbb89f087c4";
        const LAST: &str = "8629e6da-f2e6-4848-a785-11e3f4c17c04";
        let all = lines(REWIND);
        let rewound = all
            .iter()
            .position(|l| l.windows(11).any(|w| w == b"[t-rewound]"))
            .unwrap();
        let Step::Read { state, .. } = CLAUDE_CODE.read(&all[..rewound], None) else {
            panic!("no resync before the rewind");
        };
        let meta = |uuid: &str, parent: &str, content: &str, is_meta: bool| {
            json!({"parentUuid": parent, "isSidechain": false, "type": "user",
                "message": {"role": "user", "content": content},
                "isMeta": is_meta, "uuid": uuid, "sessionId": "@SID@"})
            .to_string()
        };
        let caveat = meta("c1", REWOUND_TO, "Caveat: local commands below.", true);
        let command = meta("c2", "c1", "<command-name>/cost</command-name>", false);
        assert_eq!(
            CLAUDE_CODE.read(&[caveat.as_bytes(), command.as_bytes()], Some(&state)),
            Step::Resync { compaction: false }
        );
        // The same entries after the last one are no branch.
        let caveat = meta("c1", LAST, "Caveat: local commands below.", true);
        let Step::Read { found, .. } =
            CLAUDE_CODE.read(&[caveat.as_bytes(), command.as_bytes()], Some(&state))
        else {
            panic!("a local command after the last entry is no branch");
        };
        assert_eq!(found, vec![]);
    }

    // A whole read of a transcript that ends among the results of parallel
    // calls: the calls of the message after the first one's are live all
    // the same, and the results still to come follow on, no branch.
    #[test]
    fn a_transcript_cut_among_parallel_results_holds_every_call() {
        let all = lines(PARALLEL);
        let r7 = all
            .iter()
            .position(|l| {
                let r7: &[u8] = b"\"tool_use_id\":\"toolu_e2e_0007\"";
                l.windows(r7.len()).any(|w| w == r7)
            })
            .unwrap();
        let head: Vec<u8> = all[..=r7]
            .iter()
            .flat_map(|l| [*l, b"\n"].concat())
            .collect();
        let (h, _) = resync_calls(&CLAUDE_CODE, &head);
        assert_eq!(h.live, set(&["toolu_e2e_0007", "toolu_e2e_0008"]));
        assert!(h.abandoned.is_empty(), "{:?}", h.abandoned);
        let Step::Read { found, .. } = CLAUDE_CODE.read(&all[r7 + 1..], Some(&h.state)) else {
            panic!("the rest of the parallel results are no branch");
        };
        assert_eq!(found, vec![]);
    }

    // What cannot be understood says nothing, and stops nothing after it.
    #[test]
    fn lines_not_understood_say_nothing() {
        let mut all =
            b"not json\n{\"type\":\"attachment\",\"attachment\":{\"type\":\"file\"}}\n[1,2]\n"
                .to_vec();
        all.extend_from_slice(PARALLEL);
        all.extend_from_slice(b"{\"type\":\"user\",\"uuid\":7}\n{\"truncated");
        let (h, _) = resync_calls(&CLAUDE_CODE, &all);
        assert_eq!(
            h.live,
            set(&["toolu_e2e_0007", "toolu_e2e_0008", "toolu_e2e_0001"])
        );
        let Step::Read { found, .. } = CLAUDE_CODE.read(&lines(&all), None) else {
            panic!()
        };
        assert_eq!(found.len(), 2);
    }
}
