//! fsview-hook claude, fed the payloads Continue CLI 1.5.47 (`cn`) builds
//! for Claude Code's hooks (tests/fixtures/hooks/continue-1.5.47: built as
//! its src/hooks/fireHook.ts builds them, since no code path of cn 1.5.47
//! fires them; see the README there). cn loads `.claude/settings.json`, so
//! the day it fires them, a project wired with `fsview-hook install
//! claude` is gated under cn too: its `filepath`, its string results, its
//! empty `transcript_path`.

use crate::hook_fixtures::{view, Fixtures, NOT_READ};

const A_TXT: &str = "one\ntwo\nthree\n";

fn cn() -> Fixtures {
    Fixtures::new("claude", "continue-1.5.47")
}

fn deny(reason: &str) -> String {
    format!(
        "{}\n",
        serde_json::json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }})
    )
}

// Issue 42, item 2: a Write names its file `filepath`; a Read's result is
// the string "Content of PATH:\n" and the whole file, a full view; the
// empty transcript makes no call wait.
#[test]
fn continue_shapes_are_read_and_gated() {
    let c = cn();
    c.env.write("a.txt", A_TXT);
    // A new file needs no read; an existing one does.
    c.hook("pre_write_create", &[]).expect(0, "").stderr_is("");
    c.hook("pre_write_update", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    c.hook("pre_edit", &[]).expect(0, &deny(NOT_READ));
    c.hook("post_read", &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("a.txt"), view("full", "read", 1, 3, true));
    c.hook("pre_edit", &[]).expect(0, "").stderr_is("");
    c.hook("pre_write_update", &[]).expect(0, "").stderr_is("");
    // No call waited for a transcript there is none of (a wait that
    // gives up is logged).
    let events = c
        .env
        .run("fsview-session", &["events", "--sid", c.sid, "--json"])
        .json();
    assert!(events.iter().all(|e| e["action"] != "wait"), "{events:?}");
    // A Write's result does not say what the file holds, but its input
    // does: the written text is the view.
    c.env.write("a.txt", "rewritten\n");
    c.hook("post_write_update", &[]).expect(0, "").stderr_is("");
    assert_eq!(c.view("a.txt"), view("full", "write", 1, 1, true));
}

// An Edit's result is a string that does not say what the file holds:
// nothing is taken as seen from it (never a view made up from its diff);
// the change is told after the call, from the view's kept text, as any
// change is, and the model then holds it.
#[test]
fn continue_an_edit_result_is_told_as_a_change() {
    let c = cn();
    c.env.write("a.txt", A_TXT);
    c.hook("post_read", &[]).expect(0, "");
    c.env.write("a.txt", "one\nTWO\nthree\n");
    c.hook("post_edit", &[]).expect(
        0,
        &format!(
            "{}\n",
            serde_json::json!({"hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "These files changed since you last saw them:\n\na.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
            }})
        ),
    );
    c.hook("pre_edit", &[]).expect(0, "").stderr_is("");
    // A Read result of another shape is said, and nothing recorded.
    let mut p = c.payload("post_read");
    p["tool_response"] = "Error reading file: EACCES".into();
    let r = c.send(&p, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("does not start \"Content of PATH:\""),
        "{}",
        r.stderr
    );
}
