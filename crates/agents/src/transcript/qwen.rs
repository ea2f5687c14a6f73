//! Qwen Code's transcript: the tool results it cut to fit a batch.
//!
//! As written by Qwen Code 0.24.4 (seen with the real binary:
//! `scripts/e2e-qwen batch-budget-cuts-views`), the transcript is JSON
//! Lines at the payloads' `transcript_path`
//! (`~/.qwen/projects/PROJECT/chats/SESSION.jsonl`). Each tool result is
//! an entry of its own, written when its batch of calls ends, holding the
//! `functionResponse` as the model gets it:
//!
//! ```text
//! {"type":"tool_result","message":{"role":"user","parts":[{"functionResponse":
//!  {"id":"CALL","name":"read_file","response":{"output":"..."}}}]},...}
//! ```
//!
//! When the outputs of one batch of calls add up to more than its budget
//! (`tools.toolOutputBatchBudget`, 200,000 characters by default), Qwen
//! Code cuts each one over its share to a head and a tail:
//! "Tool output truncated. Persisted tool-output artifact: PATH", an empty
//! line, the first fifth of the share, `...`, the last four fifths. The
//! hooks never see it: `PostToolUse` has the whole output, and
//! `PostToolBatch` (fired a call at a time when it is wired) the output
//! before the cut. So the view a hook recorded of such a call is more than
//! the model was shown: it is released here, as a compaction's. What the
//! model did see of the file (the head and the tail, cut mid-line) is not
//! recorded: a read of it again is a small cost, a blind write is not.
//!
//! An entry names its call by the API's id (`functionResponse.id`), the
//! hooks' `tool_call_id`, which the Qwen adapter records as the views'
//! origin. Nothing else of this transcript is read; Qwen Code's
//! compressions are told by `PostCompact`.

use std::collections::HashSet;

use serde_json::Value;

use super::{Format, Holding, Resync, Step};
use crate::event::Event;

/// Qwen Code's transcript format.
pub struct Qwen;

/// The format as Qwen Code 0.24.4 writes it.
pub static QWEN_CODE: Qwen = Qwen;

/// How a cut output starts (`fitText` in Qwen Code 0.24.4).
const CUT: &str = "Tool output truncated.";

impl Format for Qwen {
    fn seen_in(&self) -> &'static str {
        "Qwen Code 0.24.4"
    }

    fn read(&self, lines: &[&[u8]], _state: Option<&str>) -> Step {
        if lines.iter().any(|l| !cut_calls(l).is_empty()) {
            Step::Resync { compaction: false }
        } else {
            Step::Read {
                found: Vec::new(),
                state: String::new(),
            }
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
}

/// A whole re-read: every call whose output was cut.
#[derive(Default)]
struct Whole {
    cut: HashSet<String>,
}

impl Resync for Whole {
    fn lines(&mut self, lines: &[(u64, &[u8])]) {
        for (_, line) in lines {
            self.cut.extend(cut_calls(line));
        }
    }

    fn finish(self: Box<Self>) -> Holding {
        Holding {
            compacted: self.cut,
            ..Holding::default()
        }
    }
}

/// The calls whose output a transcript line holds cut, if it is a tool
/// result entry. Only a line that holds the words is parsed.
fn cut_calls(line: &[u8]) -> Vec<String> {
    if memchr::memmem::find(line, CUT.as_bytes()).is_none() {
        return Vec::new();
    }
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return Vec::new();
    };
    if v.get("type").and_then(Value::as_str) != Some("tool_result") {
        return Vec::new();
    }
    let Some(parts) = v.pointer("/message/parts").and_then(Value::as_array) else {
        return Vec::new();
    };
    parts
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .filter(|r| {
            r.pointer("/response/output")
                .and_then(Value::as_str)
                .is_some_and(|o| o.starts_with(CUT))
        })
        .filter_map(|r| r.get("id").and_then(Value::as_str))
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(id: &str, output: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "type": "tool_result",
            "message": {"role": "user", "parts": [{"functionResponse": {
                "id": id, "name": "read_file", "response": {"output": output}}}]},
            "toolCallResult": {"callId": id, "status": "success"},
        }))
        .unwrap()
    }

    #[test]
    fn a_cut_output_names_its_call() {
        let cut = result(
            "call_1",
            "Tool output truncated. Persisted tool-output artifact: /t/call_1.txt\n\nhead\n...\ntail",
        );
        assert_eq!(cut_calls(&cut), vec!["call_1".to_string()]);
        let whole = result("call_2", "one\ntwo\n");
        assert!(cut_calls(&whole).is_empty());
        // The words inside a whole output (a file that holds them) are no cut.
        let quoted = result("call_3", "a file that says Tool output truncated. here\n");
        assert!(cut_calls(&quoted).is_empty());
        // Only a tool result entry says it.
        let said = serde_json::to_vec(&json!({"type": "user", "message": {"parts": [
            {"text": "Tool output truncated."}]}}))
        .unwrap();
        assert!(cut_calls(&said).is_empty());
    }

    #[test]
    fn a_cut_asks_for_a_whole_read_that_releases_it() {
        let cut = result("call_1", "Tool output truncated.\n\nhead\n...\ntail");
        let whole = result("call_2", "one\n");
        assert_eq!(
            QWEN_CODE.read(&[&whole], None),
            Step::Read {
                found: Vec::new(),
                state: String::new()
            }
        );
        assert_eq!(
            QWEN_CODE.read(&[&whole, &cut], None),
            Step::Resync { compaction: false }
        );
        let mut r = QWEN_CODE.resync();
        r.lines(&[(0, &whole), (100, &cut)]);
        let h = r.finish();
        assert_eq!(h.compacted, HashSet::from(["call_1".to_string()]));
        assert!(h.live.is_empty() && h.found.is_empty());
    }
}
