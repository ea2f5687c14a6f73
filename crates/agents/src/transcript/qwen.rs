//! Qwen Code's transcript: the tool results it takes out of what the model
//! is sent, which no hook reports.
//!
//! As written by Qwen Code 0.24.4 (seen with the real binary:
//! `scripts/e2e-qwen batch-budget-cuts-views`, `size-clearing-drops-views` and
//! `idle-clearing-drops-views`),
//! the transcript is JSON Lines at the payloads' `transcript_path`
//! (`~/.qwen/projects/PROJECT/chats/SESSION.jsonl`), one entry a line:
//!
//! - `"type": "tool_result"`: a call's result, written when its batch of
//!   calls ends, holding the `functionResponse` as the model gets it:
//!   `{"message":{"role":"user","parts":[{"functionResponse":{"id":CALL,
//!   "name":"read_file","response":{"output":"..."}}}]}}`. `CALL` is the
//!   API's id for the call, the hooks' `tool_call_id`, which the Qwen
//!   adapter records as the views' origin.
//! - `"type": "assistant"`: the model's answer to one request.
//! - `"type": "user"`: a prompt; the request after it sends no results.
//! - `"type": "system"`, `"subtype": "chat_compression"`: a compression;
//!   `systemPayload.compressedHistory` is the history from then on
//!   (`PostCompact` has released every view already).
//!
//! Two things take a result out of what the model is sent, and no hook
//! sees either:
//!
//! - **A batch's budget.** When the outputs of one batch of calls add up
//!   to more than `tools.toolOutputBatchBudget` (200,000 characters by
//!   default), each one over its share is cut to a head and a tail before
//!   the model sees it: "Tool output truncated. Persisted tool-output
//!   artifact: PATH", an empty line, the first fifth of the share, `...`,
//!   the last four fifths. `PostToolUse` has the whole output, the
//!   transcript the cut one. Its view is released as soon as the line is
//!   read. What the model did see of the file (a head and a tail, cut
//!   mid-line) is not recorded: a read again is a small cost, a blind
//!   write is not.
//! - **Clearing old results** (`microcompactHistory`, on by default).
//!   Before a request whose results (those it sends and those the history
//!   holds, since the last compression) come to more than 500,000
//!   characters, Qwen Code replaces the oldest of the history's with
//!   "[Old tool result content cleared]" until they come to 250,000 or
//!   less, keeping the newest 5 and those it sends. It writes nothing of
//!   it. So fsview keeps what Qwen Code surely still holds, and releases
//!   the rest ([`Clearing`]): until the results since the last compression
//!   pass 500,000 characters, all of them; after, those the last request
//!   sent, the newest 5 before them, and the newest that come to 250,000
//!   characters. Whatever Qwen Code cleared is outside that (a cleared
//!   result had more than 250,000 characters of results after it, and 5
//!   newer ones, when it was cleared), whether the conversation ran in one
//!   process or was resumed in several (a resumed conversation starts
//!   with every result whole again). Qwen Code may still hold more: it
//!   clears down to 250,000 characters only when it passes 500,000, so a
//!   view released here may be one the model still has (a read again).
//!   Only `read_file`'s and `run_shell_command`'s views are released so:
//!   the others come from the calls' own input (an edit's, a write's),
//!   which the history keeps.
//!
//! Counted as fsview can be sure of: every result's output, in UTF-16
//! units as Qwen Code counts (JavaScript's `length`), whatever the tool (Qwen
//! Code counts only its own tools' outputs, so fsview may count more,
//! which only releases more). The thresholds are Qwen Code's defaults; a
//! user's `clearContextOnIdle` settings that lower them are not read.
//!
//! - **Clearing after an idle hour.** Before a request made 60 minutes or
//!   more after the last answer in the same process (the user away, a long
//!   command), Qwen Code clears every result of the history but the newest
//!   5. Nothing written says it either, and a conversation resumed in a
//!   new process is not cleared so; the transcript cannot tell the two
//!   apart. So at a hook 59 minutes or more after the last answer's entry
//!   (its `timestamp`, written as the answer ends), every view from a
//!   result but the newest 5 is released, as if it were cleared: at worst,
//!   a read again after an hour away.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Format, Holding, Resync, Step};
use crate::event::Event;

/// Qwen Code's transcript format.
pub struct Qwen;

/// The format as Qwen Code 0.24.4 writes it.
pub static QWEN_CODE: Qwen = Qwen;

/// How a cut output starts (`fitText` in Qwen Code 0.24.4).
const CUT: &str = "Tool output truncated.";

/// Results over this many characters are cleared before a request
/// (`DEFAULT_TOOL_RESULTS_TOTAL_CHARS_THRESHOLD`).
const THRESHOLD: u64 = 500_000;

/// ... down to this many (`lowWatermark`, half the threshold).
const LOW: u64 = THRESHOLD / 2;

/// The newest results of the history never cleared
/// (`toolResultsNumToKeep`).
const KEEP: usize = 5;

/// How long after the last answer fsview takes the results as cleared:
/// Qwen Code clears at 60 minutes (`toolResultsThresholdMinutes`) before
/// the next request, which may come a little after the hook that reads
/// the transcript.
const IDLE_NS: i64 = 59 * 60 * 1_000_000_000;

/// The tools whose views come from their results.
const SHOWN_BY_RESULT: [&str; 2] = ["read_file", "run_shell_command"];

impl Format for Qwen {
    fn seen_in(&self) -> &'static str {
        "Qwen Code 0.24.4"
    }

    fn read(&self, lines: &[&[u8]], state: Option<&str>) -> Step {
        let mut c = state
            .and_then(|s| serde_json::from_str::<Clearing>(s).ok())
            .unwrap_or_default();
        let mut calls = HashSet::new();
        for line in lines {
            c.line(line, &mut calls);
        }
        c.settle(&mut calls, fsview_store::fingerprint::now_ns());
        let state = serde_json::to_string(&c).unwrap_or_default();
        if calls.is_empty() {
            Step::Read {
                found: Vec::new(),
                state,
            }
        } else {
            Step::Release { calls, state }
        }
    }

    fn resync(&self) -> Box<dyn Resync> {
        Box::new(Whole::default())
    }

    fn located(&self, _line: &[u8], _how: &str) -> Option<Event> {
        None
    }

    fn siblings(&self, _tail: &[u8], _call: &str) -> Option<HashSet<String>> {
        None
    }

    /// Every entry carries the conversation's id.
    fn names(&self, session: &str) -> Option<String> {
        Some(format!("\"sessionId\":{}", Value::from(session)))
    }

    /// Its entries are written through a queue, a line at a time: the
    /// results a request sent may reach the file after the gates of the
    /// calls its answer makes run. The answer's entry (which holds those
    /// calls' ids) is queued after them.
    fn releases_late(&self) -> bool {
        true
    }
}

/// A whole re-read: every call whose result was taken out.
#[derive(Default)]
struct Whole {
    clearing: Clearing,
    released: HashSet<String>,
}

impl Resync for Whole {
    fn lines(&mut self, lines: &[(u64, &[u8])]) {
        for (_, line) in lines {
            self.clearing.line(line, &mut self.released);
        }
    }

    fn finish(mut self: Box<Self>) -> Holding {
        let now = fsview_store::fingerprint::now_ns();
        self.clearing.settle(&mut self.released, now);
        Holding {
            compacted: self.released,
            state: serde_json::to_string(&self.clearing).unwrap_or_default(),
            ..Holding::default()
        }
    }
}

/// One result: its call, its output's length, and whether its call's
/// views come from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Item {
    id: String,
    chars: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    shows: bool,
}

/// What fsview is sure Qwen Code still sends of the results since the
/// last compression (the module's doc says how), kept between hooks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Clearing {
    /// Results some request sent, oldest first, but those already
    /// released (with all older ones) as cleared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    sent: Vec<Item>,
    /// Results no request sent yet: the next one sends them, unless a
    /// prompt comes first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fresh: Vec<Item>,
    /// Characters of every result some request sent since the last
    /// compression, released ones too.
    #[serde(default)]
    total: u64,
    /// Calls whose results were cut, until a request after them is read:
    /// their `PostToolUse` hooks may end after a hook read their lines, so
    /// they are released again with each new line until then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    cut: Vec<String>,
    /// When the last answer's entry was written (nanoseconds since the
    /// epoch), from its `timestamp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answered_ns: Option<i64>,
}

impl Clearing {
    /// What a transcript line says; the calls it releases go to `out`.
    fn line(&mut self, line: &[u8], out: &mut HashSet<String>) {
        if !may_matter(line) {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("tool_result") => {
                for (item, cut) in results(v.pointer("/message/parts")) {
                    if cut {
                        self.cut.push(item.id.clone());
                    }
                    self.fresh.push(item);
                }
            }
            // The request after a prompt sends no results: those not sent
            // yet are the history's, and it clears as it clears.
            Some("user") => {
                self.idle_since(&v, out);
                let fresh = std::mem::take(&mut self.fresh);
                self.total += fresh.iter().map(|i| i.chars).sum::<u64>();
                self.sent.extend(fresh);
                self.clear(out);
            }
            // Every hook of the calls it sent had ended before it.
            // Its request came an idle hour after the last answer when
            // its own entry did (or later: only releases more).
            Some("assistant") => {
                out.extend(self.cut.drain(..));
                let at = self.idle_since(&v, out);
                self.request(out);
                if at.is_some() {
                    self.answered_ns = at;
                }
            }
            Some("system")
                if v.get("subtype").and_then(Value::as_str) == Some("chat_compression") =>
            {
                self.sent = v
                    .pointer("/systemPayload/compressedHistory")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .flat_map(|c| results(c.get("parts")))
                    // Their views went with the compression.
                    .map(|(item, _)| Item {
                        shows: false,
                        ..item
                    })
                    .collect();
                self.total = self.sent.iter().map(|i| i.chars).sum();
            }
            _ => {}
        }
    }

    /// A request was made (its answer is the line read): it sent the fresh
    /// results, after Qwen Code cleared what it clears.
    fn request(&mut self, out: &mut HashSet<String>) {
        self.clear(out);
        let fresh = std::mem::take(&mut self.fresh);
        self.total += fresh.iter().map(|i| i.chars).sum::<u64>();
        self.sent.extend(fresh);
    }

    /// After the lines read: the cut calls not yet followed by a request
    /// are released (again), and, when results were written that no
    /// request sent yet, what the request that sends them will clear is
    /// released now, before its answer's line comes (Qwen Code writes
    /// through a queue). Clearing as if it were made now releases no more
    /// than it will: it sends these results and maybe more, which only
    /// clear more.
    fn settle(&mut self, out: &mut HashSet<String>, now_ns: i64) {
        out.extend(self.cut.iter().cloned());
        if !self.fresh.is_empty() {
            self.clear(out);
        }
        if self
            .answered_ns
            .is_some_and(|at| now_ns.saturating_sub(at) >= IDLE_NS)
        {
            self.idle(out);
        }
    }

    /// The entry `v`'s time; when it is an idle hour after the last
    /// answer, what a request then clears is released first.
    fn idle_since(&mut self, v: &Value, out: &mut HashSet<String>) -> Option<i64> {
        let at = v
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(epoch_ns)?;
        if self
            .answered_ns
            .is_some_and(|was| at.saturating_sub(was) >= IDLE_NS)
        {
            self.idle(out);
        }
        Some(at)
    }

    /// What a request an idle hour after the last answer clears: every
    /// result but the newest KEEP (with output). Counted over those sent
    /// and those not sent yet alike, which only releases more.
    fn idle(&mut self, out: &mut HashSet<String>) {
        let mut kept = 0;
        self.fresh = keep_newest(std::mem::take(&mut self.fresh), &mut kept, out);
        self.sent = keep_newest(std::mem::take(&mut self.sent), &mut kept, out);
    }

    /// What a request that sends the fresh results clears, if their
    /// characters and those sent before pass the threshold: all but those,
    /// the newest KEEP before them and the newest that come to LOW; of
    /// them, the calls whose views came from their results go to `out`.
    fn clear(&mut self, out: &mut HashSet<String>) {
        let sending: u64 = self.fresh.iter().map(|i| i.chars).sum();
        if self.total + sending > THRESHOLD {
            // Surely held: those sent now, the newest KEEP before them, and
            // the newest results that come to LOW, counted from the newest
            // whatever was kept (Qwen Code clears until all it holds comes
            // to LOW: a large result it keeps leaves less room for others).
            let mut held = self.sent.len();
            let mut chars = sending;
            let mut kept = 0;
            while held > 0 {
                let i = &self.sent[held - 1];
                chars += i.chars;
                let within = chars <= LOW;
                let newest = kept < KEEP;
                if !within && !newest {
                    break;
                }
                if i.chars > 0 {
                    kept += 1;
                }
                held -= 1;
            }
            out.extend(self.sent.drain(..held).filter(|i| i.shows).map(|i| i.id));
        }
    }
}

/// `items` (oldest first) without those past the newest KEEP with output,
/// `kept` counting the newer ones kept already; the calls whose views came
/// from the results left out go to `out`.
fn keep_newest(items: Vec<Item>, kept: &mut usize, out: &mut HashSet<String>) -> Vec<Item> {
    let mut held: Vec<Item> = items
        .into_iter()
        .rev()
        .filter_map(|i| {
            if i.chars == 0 || *kept < KEEP {
                *kept += usize::from(i.chars > 0);
                return Some(i);
            }
            if i.shows {
                out.insert(i.id);
            }
            None
        })
        .collect();
    held.reverse();
    held
}

/// An entry's `timestamp` (RFC 3339, as Qwen Code writes it) in
/// nanoseconds since the epoch.
fn epoch_ns(at: &str) -> Option<i64> {
    let t: jiff::Timestamp = at.parse().ok()?;
    i64::try_from(t.as_nanosecond()).ok()
}

/// Whether a line may be an entry that matters here, from its bytes: only
/// those lines are parsed.
fn may_matter(line: &[u8]) -> bool {
    [
        &b"\"type\":\"tool_result\""[..],
        b"\"type\":\"assistant\"",
        b"\"type\":\"user\"",
        b"\"subtype\":\"chat_compression\"",
    ]
    .iter()
    .any(|n| memchr::memmem::find(line, n).is_some())
}

/// Each `functionResponse` of `parts`: the result, and whether it was cut
/// to fit its batch.
fn results(parts: Option<&Value>) -> Vec<(Item, bool)> {
    parts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("functionResponse"))
        .filter_map(|r| {
            let id = r.get("id").and_then(Value::as_str)?;
            let output = r.pointer("/response/output").and_then(Value::as_str);
            let name = r.get("name").and_then(Value::as_str).unwrap_or("");
            let item = Item {
                id: id.to_string(),
                chars: output.map_or(0, |o| o.encode_utf16().count() as u64),
                shows: SHOWN_BY_RESULT.contains(&name),
            };
            Some((item, output.is_some_and(|o| o.starts_with(CUT))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(id: &str, name: &str, output: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "type": "tool_result",
            "message": {"role": "user", "parts": [{"functionResponse": {
                "id": id, "name": name, "response": {"output": output}}}]},
            "toolCallResult": {"callId": id, "status": "success"},
        }))
        .unwrap()
    }

    fn entry(kind: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({"type": kind, "message": {"role": "model", "parts": []}}))
            .unwrap()
    }

    /// Read `lines` a line at a time, as hooks would, carrying the state:
    /// the calls released, in order of the lines that released them.
    fn read_each(lines: &[Vec<u8>]) -> Vec<HashSet<String>> {
        let mut state: Option<String> = None;
        let mut out = Vec::new();
        for l in lines {
            match QWEN_CODE.read(&[l], state.as_deref()) {
                Step::Read { state: s, .. } => state = Some(s),
                Step::Release { calls, state: s } => {
                    out.push(calls);
                    state = Some(s);
                }
                Step::Resync { .. } => panic!("no resync"),
            }
        }
        out
    }

    fn whole(lines: &[Vec<u8>]) -> HashSet<String> {
        let mut r = QWEN_CODE.resync();
        let with_at: Vec<(u64, &[u8])> = lines.iter().map(|l| (0, l.as_slice())).collect();
        r.lines(&with_at);
        r.finish().compacted
    }

    /// An answer's entry written `ago` seconds ago.
    fn answered(ago: i64) -> Vec<u8> {
        let at = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(ago);
        serde_json::to_vec(&json!({"type": "assistant", "timestamp": at.to_string(),
            "message": {"role": "model", "parts": []}}))
        .unwrap()
    }

    #[test]
    fn an_idle_hour_after_the_last_answer_keeps_only_the_newest_five() {
        // 8 reads answered 2 hours ago: Qwen Code clears all but the
        // newest 5 before the next request (the same process) or not at
        // all (a new one): fsview takes them as cleared.
        let mut lines = Vec::new();
        for i in 1..=8 {
            lines.push(result(&format!("c{i}"), "read_file", "x"));
        }
        lines.push(answered(2 * 3600));
        assert_eq!(whole(&lines), ids(1..=3));
        let got: HashSet<String> = read_each(&lines).into_iter().flatten().collect();
        assert_eq!(got, ids(1..=3));
        // A shell command's result counts among the newest, an edit's too
        // (not released: its view is the call's own).
        lines.insert(8, result("e9", "edit", "ok"));
        assert_eq!(whole(&lines), ids(1..=4));
        // Ten minutes: nothing.
        lines.pop();
        lines.push(answered(600));
        assert_eq!(whole(&lines), HashSet::new());
        // Answered now, then (by the entries' times, 2 hours later) a
        // prompt and its answer, read by the next hook: the request after
        // the prompt cleared them, whatever the hook's own time.
        let mut lines: Vec<Vec<u8>> = (1..=8)
            .map(|i| result(&format!("c{i}"), "read_file", "x"))
            .collect();
        lines.push(answered(0));
        let later = (jiff::Timestamp::now() + jiff::SignedDuration::from_hours(2)).to_string();
        lines.push(
            serde_json::to_vec(&json!({"type": "user", "timestamp": later,
                "message": {"role": "user", "parts": [{"text": "back"}]}}))
            .unwrap(),
        );
        lines.push(answered(-2 * 3600));
        assert_eq!(whole(&lines), ids(1..=3));
        let mut state: Option<String> = None;
        let mut got = HashSet::new();
        for batch in [&lines[..9], &lines[9..]] {
            let batch: Vec<&[u8]> = batch.iter().map(|l| l.as_slice()).collect();
            match QWEN_CODE.read(&batch, state.as_deref()) {
                Step::Read { state: s, .. } => state = Some(s),
                Step::Release { calls, state: s } => {
                    got.extend(calls);
                    state = Some(s);
                }
                Step::Resync { .. } => panic!("no resync"),
            }
        }
        assert_eq!(got, ids(1..=3));
    }

    fn ids(range: std::ops::RangeInclusive<u32>) -> HashSet<String> {
        range.map(|i| format!("c{i}")).collect()
    }

    fn batch(lines: &mut Vec<Vec<u8>>, range: std::ops::RangeInclusive<u32>, chars: usize) {
        for i in range {
            lines.push(result(&format!("c{i}"), "read_file", &"x".repeat(chars)));
        }
        lines.push(entry("assistant"));
    }

    #[test]
    fn a_cut_output_is_released_at_once() {
        let cut = result(
            "c1",
            "read_file",
            "Tool output truncated. Persisted tool-output artifact: /t/c1.txt\n\nhead\n...\ntail",
        );
        let mut lines = vec![result("c0", "read_file", "one\n"), cut];
        assert_eq!(read_each(&lines), vec![ids(1..=1)]);
        assert_eq!(whole(&lines), ids(1..=1));
        // Released again with each line until a request's answer (its
        // PostToolUse may record the view after a hook read the line),
        // then no more.
        lines.push(result("c2", "read_file", "two\n"));
        lines.push(entry("assistant"));
        lines.push(result("c3", "read_file", "three\n"));
        assert_eq!(read_each(&lines), vec![ids(1..=1); 3]);
        // The words inside a whole output (a file that holds them) are no cut.
        let quoted = result(
            "c2",
            "read_file",
            "a file that says Tool output truncated.\n",
        );
        assert!(read_each(&[quoted]).is_empty());
    }

    /// Three batches of 8 results of 23,652 characters: the third
    /// request's results come to 567,648, over 500,000. Qwen Code clears
    /// the oldest until 250,000 or less: all of the first batch, and 3 of
    /// the second (the newest 5 of the history are kept).
    #[test]
    fn past_the_threshold_only_the_newest_results_are_held() {
        let mut lines = vec![entry("user")];
        batch(&mut lines, 1..=8, 23_652);
        batch(&mut lines, 9..=16, 23_652);
        let before = lines.len();
        batch(&mut lines, 17..=24, 23_652);
        let released: HashSet<String> = ids(1..=11);
        assert!(read_each(&lines[..before]).is_empty());
        assert_eq!(read_each(&lines), vec![released.clone()]);
        assert_eq!(whole(&lines), released);
        // A prompt: if it resumed the conversation in a new process, every
        // result is whole again, 567,648 characters, and Qwen Code clears
        // down to 236,520 (c15 to c24). So those go too.
        lines.push(entry("user"));
        lines.push(entry("assistant"));
        assert_eq!(read_each(&lines), vec![released.clone(), ids(12..=14)]);
        // A small read then: the held come to 236,526, nothing more.
        lines.push(result("c25", "read_file", "small\n"));
        lines.push(entry("assistant"));
        assert_eq!(read_each(&lines), vec![released, ids(12..=14)]);
        assert_eq!(whole(&lines), ids(1..=14));
    }

    #[test]
    fn under_the_threshold_everything_is_held() {
        let mut lines = vec![entry("user")];
        batch(&mut lines, 1..=20, 24_000); // 480,000
        lines.push(entry("user"));
        lines.push(entry("assistant"));
        assert!(read_each(&lines).is_empty());
        assert!(whole(&lines).is_empty());
        // One more result of 20,001 characters: 500,001. Cleared down to
        // 236,001: c12 to c20, and c21.
        batch(&mut lines, 21..=21, 20_001);
        assert_eq!(whole(&lines), ids(1..=11));
    }

    /// Results whose views come from their calls' input (an edit, a
    /// write) are counted but not released; characters count in UTF-16
    /// units.
    #[test]
    fn only_reads_and_shell_results_are_released_and_utf16_counts() {
        let mut lines = vec![entry("user")];
        lines.push(result("w1", "write_file", &"x".repeat(200_000)));
        lines.push(result("s1", "run_shell_command", &"x".repeat(200_000)));
        for i in 1..=5 {
            lines.push(result(&format!("r{i}"), "read_file", "x"));
        }
        lines.push(entry("assistant"));
        // 100,001 characters of 2 bytes each: 500,006 in all.
        lines.push(result("r6", "read_file", &"é".repeat(100_001)));
        lines.push(entry("assistant"));
        assert_eq!(read_each(&lines), vec![HashSet::from(["s1".to_string()])]);
        // 500,000 characters (1,000,000 bytes): not over.
        let under = vec![
            entry("user"),
            result("r7", "read_file", &"é".repeat(250_000)),
            entry("assistant"),
            result("r8", "read_file", &"é".repeat(250_000)),
            entry("assistant"),
        ];
        assert!(whole(&under).is_empty());
    }

    /// A large result among the newest 5 is kept, and leaves the others
    /// less room: 10 results of 20,000, one of 260,000, then one of
    /// 50,000 (510,000). Qwen Code clears the oldest until what it holds
    /// comes to 250,000, keeping the newest 5 of the history (c7 to c11):
    /// c1 to c6 go.
    #[test]
    fn a_large_kept_result_leaves_the_others_less_room() {
        let mut lines = vec![entry("user")];
        batch(&mut lines, 1..=10, 20_000);
        batch(&mut lines, 11..=11, 260_000);
        assert!(whole(&lines).is_empty());
        batch(&mut lines, 12..=12, 50_000);
        assert_eq!(whole(&lines), ids(1..=6));
        assert_eq!(read_each(&lines), vec![ids(1..=6)]);
    }

    /// After a compression the count starts again from the history it
    /// keeps.
    #[test]
    fn a_compression_starts_the_count_again() {
        let mut lines = vec![entry("user")];
        batch(&mut lines, 1..=20, 24_000); // 480,000
        let kept = json!({"type": "system", "subtype": "chat_compression", "systemPayload": {
            "compressedHistory": [{"role": "user", "parts": [{"text": "summary"}]},
                                  {"role": "user", "parts": [{"functionResponse": {
                                      "id": "c20", "name": "read_file",
                                      "response": {"output": "x".repeat(24_000)}}}]}]}});
        lines.push(serde_json::to_vec(&kept).unwrap());
        lines.push(entry("user"));
        batch(&mut lines, 21..=40, 23_000); // 24,000 + 460,000
        assert!(whole(&lines).is_empty());
        batch(&mut lines, 41..=41, 20_000); // 504,000
                                            // c20's view went with the compression; the oldest of the new.
        assert_eq!(whole(&lines), ids(21..=30));
    }
}
