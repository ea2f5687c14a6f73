//! fsview-mcp driven over stdio with raw JSON-RPC, as a client would: the
//! handshake, the tools list, each tool's success and refusal, a change
//! made by another process between a read and an edit (merged when the edit
//! is away from it, refused with it when near), malformed input, a
//! client that vanishes mid-call, and eight servers on one session file.
//! Results are checked exactly, and against the session file through the
//! command-line tools (the shell sees what the MCP client's model saw).

mod harness;

use serde_json::{json, Value};

use harness::{is_error, path_str, text, texts, views, Client, Env, PATIENCE};

#[test]
fn initialize_names_the_server_its_version_and_the_session() {
    let env = Env::new();
    let mut c = Client::start(&env, &["--sid", "agent-7"]);
    let r = c.initialize("2025-11-25");
    let result = &r["result"];
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "fsview-mcp");
    assert_eq!(result["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(result["capabilities"], json!({"tools": {}}));
    let instructions = result["instructions"].as_str().unwrap();
    assert!(
        instructions.ends_with(&format!(
            "Relative paths are taken from {}. Session \"agent-7\" of {}.",
            env.work.display(),
            env.session.display()
        )),
        "{instructions}"
    );
    let (code, stderr) = c.close();
    assert_eq!(code, 0);
    assert_eq!(
        stderr,
        format!(
            "fsview-mcp: serving session \"agent-7\" of {} on stdio; relative paths from {}\n",
            env.session.display(),
            env.work.display()
        )
    );
}

#[test]
fn older_protocol_versions_are_served_and_unknown_ones_get_a_known_one() {
    let env = Env::new();
    for (asked, got) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut c = Client::start(&env, &["--sid", "v", "-q"]);
        let r = c.initialize(asked);
        assert_eq!(r["result"]["protocolVersion"], got, "{asked}");
        assert_eq!(c.close(), (0, String::new()));
    }
}

#[test]
fn the_2026_protocol_needs_no_initialize() {
    // 2026-07-28 replaced the handshake with per-request _meta
    // (server/discover and the protocol version in every request).
    let env = Env::new();
    env.write("a.txt", "one\n");
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut c = Client::start(&env, &["--sid", "s", "-q"]);
    let d = c.request("server/discover", json!({"_meta": meta}));
    assert!(d.get("error").is_none(), "{d}");
    assert_eq!(
        d["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "fsview-mcp",
        "{d}"
    );
    assert!(
        d["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28")),
        "{d}"
    );
    let r = c.request(
        "tools/call",
        json!({"name": "read", "arguments": {"file_path": "a.txt"}, "_meta": meta}),
    );
    assert_eq!(texts(&r["result"]), ["1\tone\n"], "{r}");
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(c.close().0, 0);
}

#[test]
fn tools_are_listed_with_claude_codes_argument_names_and_closed_schemas() {
    let env = Env::new();
    let mut c = env.server(&["--sid", "s", "-q"]);
    let r = c.request("tools/list", json!({}));
    let tools = r["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["read", "edit", "write", "changed", "context"]);
    let schema = |name: &str| {
        let t = tools.iter().find(|t| t["name"] == name).unwrap();
        let mut s = t["inputSchema"].clone();
        s.as_object_mut().unwrap().remove("$schema");
        // Descriptions of the arguments are read by models, not checked
        // here word for word; the shape is.
        for p in s["properties"].as_object_mut().unwrap().values_mut() {
            assert!(p["description"].as_str().is_some_and(|d| !d.is_empty()));
            p.as_object_mut().unwrap().remove("description");
        }
        s
    };
    assert_eq!(
        schema("read"),
        json!({"type": "object", "properties": {
            "file_path": {"type": "string"},
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1}},
            "required": ["file_path"], "additionalProperties": false})
    );
    assert_eq!(
        schema("edit"),
        json!({"type": "object", "properties": {
            "file_path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean", "default": false}},
            "required": ["file_path", "old_string", "new_string"], "additionalProperties": false})
    );
    assert_eq!(
        schema("write"),
        json!({"type": "object", "properties": {
            "file_path": {"type": "string"},
            "content": {"type": "string"}},
            "required": ["file_path", "content"], "additionalProperties": false})
    );
    assert_eq!(
        schema("changed"),
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert_eq!(
        schema("context"),
        json!({"type": "object", "properties": {"for_path": {"type": "string"}},
            "additionalProperties": false})
    );
    for t in tools {
        let d = t["description"].as_str().unwrap();
        assert!(d.len() > 200, "{} has a real description", t["name"]);
        assert_eq!(
            t["inputSchema"]["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
    }
    let read = tools.iter().find(|t| t["name"] == "read").unwrap();
    assert!(read["description"].as_str().unwrap().contains(&format!(
        "a relative path is taken from {}",
        env.work.display()
    )));
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    let edit = tools.iter().find(|t| t["name"] == "edit").unwrap();
    assert_eq!(edit["annotations"]["readOnlyHint"], false);
    assert_eq!(edit["annotations"]["destructiveHint"], true);
    assert_eq!(c.close().0, 0);
}

#[test]
fn read_shows_numbered_lines_and_the_shell_sees_the_view() {
    let env = Env::new();
    env.write("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    let mut c = env.server(&["--sid", "agent-7", "-q"]);
    let abs = path_str(&env.path("src/main.rs"));
    let r = c.call("read", json!({"file_path": abs}));
    assert_eq!(
        texts(&r),
        ["1\tfn main() {\n2\t    println!(\"hi\");\n3\t}\n"]
    );
    assert_eq!(r["isError"], false);
    assert_eq!(
        r["_meta"]["fsview/read"],
        json!({"path": abs, "canonical": abs, "kind": "full", "offset": 1, "lines": 3,
               "total_lines": 3, "unchanged": false, "stub": false})
    );
    // A call after the result waits for its record; the shell then agrees.
    let r = c.call(
        "read",
        json!({"file_path": "src/main.rs", "offset": 2, "limit": 1}),
    );
    assert_eq!(texts(&r), ["2\t    println!(\"hi\");\n"]);
    assert_eq!(r["_meta"]["fsview/read"]["kind"], "range");
    let check = env.run("fsview-check-edit", &["--sid", "agent-7", "src/main.rs"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, "src/main.rs: ok\n")
    );
    let check = env.run("fsview-check-edit", &["--sid", "other", "src/main.rs"]);
    assert_eq!(check.code, 1, "another session saw nothing");
    assert_eq!(
        views(&env, "agent-7"),
        [
            ("src/main.rs".into(), "full".into(), "read".into()),
            ("src/main.rs".into(), "range".into(), "read".into())
        ]
    );
    assert_eq!(c.close().0, 0);
}

#[test]
fn read_notices_and_refusals_are_in_the_clis_words() {
    let env = Env::new();
    env.write("empty.txt", "");
    env.write("short.txt", "a\nb\n");
    env.write("bin.dat", b"\x00\x01\x02");
    std::fs::create_dir(env.path("dir")).unwrap();
    let big: String = (1..=300).map(|i| format!("line {i:03}\n")).collect();
    env.write("big.txt", &big);
    let mut c = env.server(&["--sid", "s", "-q", "--cap", "100"]);
    let r = c.call("read", json!({"file_path": "empty.txt"}));
    assert_eq!(texts(&r), ["Note: the file exists but is empty.\n"]);
    assert_eq!(r["isError"], false);
    let r = c.call("read", json!({"file_path": "short.txt", "offset": 5}));
    assert_eq!(
        texts(&r),
        ["Note: the file exists but is shorter than the provided offset (5); the file has 2 lines.\n"]
    );
    let r = c.call("read", json!({"file_path": "big.txt"}));
    assert_eq!(
        texts(&r),
        ["1\tline 001\n2\tline 002\n3\tline 003\n4\tline 004\n5\tline 005\n6\tline 006\n7\tline 007\n\nNote: showing lines 1-7 of 300: the file is longer than one read shows (100 bytes as a client counts them, or 2,000 lines); read on with offset 8.\n"]
    );
    assert_eq!(r["_meta"]["fsview/read"]["kind"], "start");
    for (path, want) in [
        (
            "bin.dat",
            "bin.dat looks binary (a NUL byte in its first 8 KiB); read shows text files only",
        ),
        ("dir", "dir is a directory; read shows regular files only"),
        ("nope.txt", "nope.txt: no such file; check the path"),
    ] {
        let r = c.call("read", json!({"file_path": path}));
        assert_eq!(texts(&r), [want]);
        assert!(is_error(&r), "{r}");
    }
    // Nothing was shown of those (short.txt's read began past its end):
    // no view.
    let mut shown: Vec<String> = views(&env, "s").into_iter().map(|v| v.0).collect();
    shown.sort();
    assert_eq!(shown, ["big.txt", "empty.txt"]);
    assert_eq!(c.close().0, 0);
}

#[test]
fn edit_needs_a_read_and_then_applies_with_the_diff() {
    let env = Env::new();
    env.write(
        "lib.rs",
        "fn old_name() {}\n\nfn main() {\n    old_name();\n}\n",
    );
    let mut c = env.server(&["--sid", "s", "-q"]);
    let args =
        json!({"file_path": "lib.rs", "old_string": "fn old_name(", "new_string": "fn new_name("});
    let r = c.call("edit", args.clone());
    assert!(is_error(&r));
    assert_eq!(
        texts(&r),
        ["lib.rs: not_read: File has not been read yet. Read it first before writing to it."]
    );
    assert_eq!(r["_meta"]["fsview/edit"]["verdict"], "not_read");
    c.call(
        "read",
        json!({"file_path": "lib.rs", "offset": 1, "limit": 1}),
    );
    let r = c.call("edit", args);
    assert_eq!(r["isError"], false);
    assert_eq!(
        texts(&r),
        ["The file lib.rs has been updated successfully.\n\n--- lib.rs\n+++ lib.rs\n@@ -1,4 +1,4 @@\n-fn old_name() {}\n+fn new_name() {}\n \n fn main() {\n     old_name();\n"]
    );
    // Its own edit needs no re-read; Claude Code's rules hold.
    let r = c.call(
        "edit",
        json!({"file_path": "lib.rs", "old_string": "nope", "new_string": "x"}),
    );
    assert_eq!(
        texts(&r),
        ["lib.rs: not_found: String to replace not found in file.\nString: nope"]
    );
    let r = c.call(
        "edit",
        json!({"file_path": "lib.rs", "old_string": "_name", "new_string": "_x"}),
    );
    assert_eq!(
        texts(&r),
        ["lib.rs: ambiguous: Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: _name"]
    );
    let r = c.call(
        "edit",
        json!({"file_path": "lib.rs", "old_string": "main", "new_string": "main"}),
    );
    assert_eq!(
        texts(&r),
        ["lib.rs: no_change: No changes to make: old_string and new_string are exactly the same."]
    );
    let r = c.call(
        "edit",
        json!({"file_path": "lib.rs", "old_string": "_name", "new_string": "_x", "replace_all": true}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["_meta"]["fsview/edit"]["replacements"], 2);
    assert_eq!(
        env.read("lib.rs"),
        "fn new_x() {}\n\nfn main() {\n    old_x();\n}\n"
    );
    let r = c.call(
        "edit",
        json!({"file_path": "lib.rs", "old_string": "", "new_string": "x"}),
    );
    assert_eq!(
        texts(&r),
        ["lib.rs: file_exists: Cannot create new file - file already exists. To change it, give the text to replace as old_string; to replace all of it, use the write tool."]
    );
    let r = c.call(
        "edit",
        json!({"file_path": "new/mod.rs", "old_string": "", "new_string": "pub fn f() {}\n"}),
    );
    assert_eq!(
        texts(&r),
        ["File created successfully at: new/mod.rs\n\n--- /dev/null\n+++ new/mod.rs\n@@ -0,0 +1 @@\n+pub fn f() {}\n"]
    );
    assert_eq!(c.close().0, 0);
}

#[test]
fn write_needs_a_full_view_of_an_existing_file() {
    let env = Env::new();
    env.write("a.txt", "1\n2\n3\n");
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call("read", json!({"file_path": "a.txt", "limit": 2}));
    let w = json!({"file_path": "a.txt", "content": "new\n"});
    let r = c.call("write", w.clone());
    assert!(is_error(&r));
    assert_eq!(
        texts(&r),
        ["a.txt: start_only: File has only been read in part (lines 1-2 of 3). Read the whole file before writing all of it."]
    );
    c.call("read", json!({"file_path": "a.txt"}));
    let r = c.call("write", w);
    assert_eq!(
        texts(&r),
        ["The file a.txt has been updated successfully.\n\n--- a.txt\n+++ a.txt\n@@ -1,3 +1 @@\n-1\n-2\n-3\n+new\n"]
    );
    assert_eq!(env.read("a.txt"), "new\n");
    let r = c.call("write", json!({"file_path": "b/c.txt", "content": "c\n"}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(env.read("b/c.txt"), "c\n");
    // What the server wrote is the session's view: the shell may write
    // the whole file too.
    let check = env.run(
        "fsview-check-edit",
        &["--sid", "s", "--write", "a.txt", "b/c.txt"],
    );
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, "a.txt: ok\nb/c.txt: ok\n")
    );
    assert_eq!(c.close().0, 0);
}

#[test]
fn a_change_by_another_process_between_read_and_edit_is_refused_and_told() {
    let env = Env::new();
    env.write("a.txt", "alpha\nbeta\ngamma\n");
    env.write("b.txt", "b\n");
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call("read", json!({"file_path": "a.txt"}));
    // Another process: same size, a plain rewrite.
    env.write("a.txt", "alpha\nBETA\ngamma\n");
    let abs = path_str(&env.path("a.txt"));
    let r = c.call(
        "edit",
        json!({"file_path": "a.txt", "old_string": "gamma", "new_string": "delta"}),
    );
    assert!(is_error(&r));
    assert_eq!(
        texts(&r),
        [
            "a.txt: modified (content): File has been modified since read, either by the user or by a linter. The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).".to_string(),
            format!("These files changed since you last saw them:\n\n{abs}: modified (content)\n--- {abs} (as viewed)\n+++ {abs} (now)\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n"),
        ]
    );
    assert_eq!(
        env.read("a.txt"),
        "alpha\nBETA\ngamma\n",
        "nothing overwritten"
    );
    // Told once, and whole: the next result carries no news, and the
    // view moved to the text told, so the retry needs no re-read.
    let r = c.call("read", json!({"file_path": "b.txt"}));
    assert_eq!(texts(&r), ["1\tb\n"]);
    let r = c.call("changed", json!({}));
    assert_eq!(
        texts(&r),
        ["No file you have seen has changed since you saw it.\n"]
    );
    let check = env.run("fsview-check-edit", &["--sid", "s", "a.txt"]);
    assert_eq!(check.code, 0);
    let r = c.call(
        "edit",
        json!({"file_path": "a.txt", "old_string": "gamma", "new_string": "delta"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(env.read("a.txt"), "alpha\nBETA\ndelta\n");
    let r = c.call("changed", json!({}));
    assert_eq!(
        texts(&r),
        ["No file you have seen has changed since you saw it.\n"]
    );
    assert_eq!(c.close().0, 0);
}

/// A 12-line file, as a formatter race plays it.
fn notes() -> String {
    (1..=12).map(|i| format!("line {i} of notes\n")).collect()
}

/// The unified diff fsview tells of a change, or of an edit, in `notes`.
fn hunk(from: &str, to: &str, at: &str, lines: &[&str]) -> String {
    let mut d = format!("--- {from}\n+++ {to}\n@@ {at} @@\n");
    for l in lines {
        d.push_str(l);
        d.push('\n');
    }
    d
}

#[test]
fn an_edit_away_from_another_change_is_merged_and_the_change_told_with_it() {
    let env = Env::new();
    env.write("notes.txt", notes());
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call("read", json!({"file_path": "notes.txt"}));
    // A formatter changes line 1 while the edit of line 10 is on its way.
    let formatted = notes().replace("line 1 of notes\n", "LINE 1 OF NOTES (formatted)\n");
    env.write("notes.txt", &formatted);
    let r = c.call(
        "edit",
        json!({"file_path": "notes.txt", "old_string": "line 10 of notes", "new_string": "LINE 10"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let other = hunk(
        "notes.txt",
        "notes.txt",
        "-1,4 +1,4",
        &[
            "-line 1 of notes",
            "+LINE 1 OF NOTES (formatted)",
            " line 2 of notes",
            " line 3 of notes",
            " line 4 of notes",
        ],
    );
    let mine = hunk(
        "notes.txt",
        "notes.txt",
        "-7,6 +7,6",
        &[
            " line 7 of notes",
            " line 8 of notes",
            " line 9 of notes",
            "-line 10 of notes",
            "+LINE 10",
            " line 11 of notes",
            " line 12 of notes",
        ],
    );
    assert_eq!(
        texts(&r),
        [format!(
            "The file notes.txt has been updated successfully. notes.txt had been changed since you read it (by the user or another program); that change is kept and your edit was made beside it. You now hold the file with both; the other change:\n\n{other}\n\n{mine}"
        )]
    );
    let meta = &r["_meta"]["fsview/edit"];
    assert_eq!(
        (
            &meta["verdict"],
            &meta["merged"]["diff"],
            &meta["merged"]["writer"]
        ),
        (&json!("merged"), &json!(other), &Value::Null)
    );
    let both = formatted.replace("line 10 of notes", "LINE 10");
    assert_eq!(env.read("notes.txt"), both, "both changes kept");
    // The view moved to the merged text: nothing left to tell, and the
    // next edit, next to the formatter's line, needs no re-read.
    let r = c.call("changed", json!({}));
    assert_eq!(
        texts(&r),
        ["No file you have seen has changed since you saw it.\n"]
    );
    let r = c.call(
        "edit",
        json!({"file_path": "notes.txt", "old_string": "line 2 of notes", "new_string": "LINE 2"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(
        env.read("notes.txt"),
        both.replace("line 2 of notes", "LINE 2")
    );
    assert_eq!(c.close().0, 0);
    let ev = env.run("fsview-session", &["events", "--sid", "s", "--json"]);
    let verdicts: Vec<String> = ev
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["action"] == "edit")
        .map(|e| e["verdict"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(verdicts, ["merged", "ok"], "{}", ev.stdout);
}

#[test]
fn an_edit_of_lines_read_as_a_range_is_merged_and_what_became_of_them_told() {
    let env = Env::new();
    let text: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    env.write("long.txt", &text);
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call(
        "read",
        json!({"file_path": "long.txt", "offset": 10, "limit": 11}),
    );
    // A line added at the top, and line 12 changed (inside the lines read,
    // 5 lines from the edit).
    let theirs = format!(
        "#!/bin/sh\n{}",
        text.replace("line 12\n", "line 12 formatted\n")
    );
    env.write("long.txt", &theirs);
    let r = c.call(
        "edit",
        json!({"file_path": "long.txt", "old_string": "line 17\n", "new_string": "LINE 17\n"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let other = hunk(
        "long.txt",
        "long.txt",
        "-10,7 +10,7",
        &[
            " line 9",
            " line 10",
            " line 11",
            "-line 12",
            "+line 12 formatted",
            " line 13",
            " line 14",
            " line 15",
        ],
    );
    let mine = hunk(
        "long.txt",
        "long.txt",
        "-15,7 +15,7",
        &[
            " line 14", " line 15", " line 16", "-line 17", "+LINE 17", " line 18", " line 19",
            " line 20",
        ],
    );
    assert_eq!(
        texts(&r),
        [format!(
            "The file long.txt has been updated successfully. long.txt had been changed since you read lines 10-20 (by the user or another program); that change is kept and your edit was made beside it. Those lines are 11-21 now, and you hold them with both; what changed in them:\n\n{other}\n\n{mine}"
        )]
    );
    let meta = &r["_meta"]["fsview/edit"];
    assert_eq!(
        (
            &meta["verdict"],
            &meta["merged"]["diff"],
            &meta["merged"]["lines"]
        ),
        (
            &json!("merged"),
            &json!(other),
            &json!({"seen": [10, 20], "now": [11, 21]})
        )
    );
    assert_eq!(
        env.read("long.txt"),
        theirs.replace("line 17\n", "LINE 17\n")
    );
    // Held to the line its edit showed: not to the whole file.
    let r = c.call("write", json!({"file_path": "long.txt", "content": "x\n"}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        texts(&r),
        ["long.txt: start_only: File has only been read in part (line 18 of 41). Read the whole file before writing all of it."]
    );
    assert_eq!(c.close().0, 0);
}

#[test]
fn an_edit_near_another_change_or_with_on_change_refuse_is_refused_with_it() {
    let env = Env::new();
    let abs = path_str(&env.path("notes.txt"));
    let refusal = "notes.txt: modified (content): File has been modified since read, either by the user or by a linter. The whole change is below: you now hold the file's new text, so retry your change against it (no need to read the file again).";
    // (the server's arguments, its environment, the line edited)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], usize);
    let cases: [Case; 3] = [
        // The line before the edited one changed: too near to merge.
        (&["--sid", "near", "-q"], &[], 3),
        // Far enough, but the strict answer asked for.
        (&["--sid", "opt", "-q", "--on-change", "refuse"], &[], 10),
        (
            &["--sid", "var", "-q"],
            &[("FSVIEW_ON_CHANGE", "refuse")],
            10,
        ),
    ];
    for (args, vars, line) in cases {
        env.write("notes.txt", notes());
        let mut c = Client::start_with(&env, args, vars);
        c.initialize("2025-11-25");
        c.call("read", json!({"file_path": "notes.txt"}));
        let mut changed = notes().replace("line 1 of notes\n", "LINE 1 OF NOTES (formatted)\n");
        if line == 3 {
            changed = changed.replace("line 2 of notes\n", "line 2  of  notes\n");
        }
        env.write("notes.txt", &changed);
        let old = format!("line {line} of notes");
        let r = c.call(
            "edit",
            json!({"file_path": "notes.txt", "old_string": old, "new_string": old.to_uppercase()}),
        );
        // Eight lines of context (fsview_store::changes::CONTEXT_LINES).
        let mut lines = vec!["-line 1 of notes".to_string()];
        if line == 3 {
            lines.push("-line 2 of notes".into());
        }
        lines.push("+LINE 1 OF NOTES (formatted)".into());
        if line == 3 {
            lines.push("+line 2  of  notes".into());
        }
        let (first, last) = if line == 3 { (3, 10) } else { (2, 9) };
        lines.extend((first..=last).map(|i| format!(" line {i} of notes")));
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let diff = hunk(
            &format!("{abs} (as viewed)"),
            &format!("{abs} (now)"),
            &format!("-1,{last} +1,{last}"),
            &lines,
        );
        assert_eq!(
            (is_error(&r), texts(&r)),
            (
                true,
                vec![
                    refusal.to_string(),
                    format!("These files changed since you last saw them:\n\n{abs}: modified (content)\n{diff}")
                ]
            ),
            "{args:?}"
        );
        assert_eq!(
            env.read("notes.txt"),
            changed,
            "{args:?}: nothing overwritten"
        );
        // Told whole: the retry against the text told applies.
        let r = c.call(
            "edit",
            json!({"file_path": "notes.txt", "old_string": old, "new_string": old.to_uppercase()}),
        );
        assert_eq!(r["isError"], false, "{args:?}: {r}");
        assert_eq!(
            env.read("notes.txt"),
            changed.replace(&old, &old.to_uppercase())
        );
        assert_eq!(c.close().0, 0);
    }
}

#[test]
fn a_merged_edit_names_the_other_session_that_changed_the_file() {
    let env = Env::new();
    env.write("notes.txt", notes());
    let mut s = env.server(&["--sid", "s", "-q"]);
    let mut t = env.server(&["--sid", "t", "-q"]);
    s.call("read", json!({"file_path": "notes.txt"}));
    t.call("read", json!({"file_path": "notes.txt"}));
    let r = t.call(
        "edit",
        json!({"file_path": "notes.txt", "old_string": "line 1 of notes", "new_string": "LINE 1"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let r = s.call(
        "edit",
        json!({"file_path": "notes.txt", "old_string": "line 10 of notes", "new_string": "LINE 10"}),
    );
    assert_eq!(r["isError"], false, "{r}");
    let writer = r["_meta"]["fsview/edit"]["merged"]["writer"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // "at HH:MM": the time of the other session's write.
    let at = writer.rsplit(' ').next().unwrap_or_default();
    assert_eq!(
        writer,
        format!("fsview-mcp in session \"t\" at {at}"),
        "{r}"
    );
    assert!(
        at.len() == 5 && at.as_bytes()[2] == b':',
        "a time of day: {writer}"
    );
    assert!(
        text(&r).starts_with(&format!(
            "The file notes.txt has been updated successfully. notes.txt had been changed since you read it (by {writer}); that change is kept"
        )),
        "{r}"
    );
    assert_eq!(
        env.read("notes.txt"),
        notes()
            .replace("line 1 of notes", "LINE 1")
            .replace("line 10 of notes", "LINE 10")
    );
    assert_eq!(s.close().0, 0);
    assert_eq!(t.close().0, 0);
}

#[test]
fn a_refusal_asks_for_a_read_when_the_change_is_not_told_whole() {
    let env = Env::new();
    let refusal = "a.txt: modified (content): File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";
    let edit = json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "A"});
    // A view of part of the file: the diff told is not the whole change
    // from a text the model holds. And with --no-news, nothing is told.
    for (args, read) in [
        (
            &["--sid", "part", "-q"][..],
            json!({"file_path": "a.txt", "offset": 1, "limit": 1}),
        ),
        (
            &["--sid", "quiet", "-q", "--no-news"][..],
            json!({"file_path": "a.txt"}),
        ),
    ] {
        env.write("a.txt", "alpha\nbeta\n");
        let mut c = env.server(args);
        c.call("read", read);
        env.write("a.txt", "alpha\nBETA\n");
        let r = c.call("edit", edit.clone());
        assert!(is_error(&r), "{args:?}: {r}");
        assert_eq!(texts(&r)[0], refusal, "{args:?}");
        assert_eq!(env.read("a.txt"), "alpha\nBETA\n", "{args:?}");
        // It is right: the retry without a read is refused again.
        let r = c.call("edit", edit.clone());
        assert!(is_error(&r), "{args:?}: {r}");
        assert_eq!(texts(&r)[0], refusal, "{args:?}");
        assert_eq!(c.close().0, 0);
    }
}

#[test]
fn news_comes_after_any_result_once_and_leaves_out_the_file_read() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    env.write("b.txt", "b\n");
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call("read", json!({"file_path": "a.txt"}));
    c.call("read", json!({"file_path": "b.txt"}));
    env.write("a.txt", "A\n");
    env.write("b.txt", "B\n");
    let a = path_str(&env.path("a.txt"));
    // Reading b: b's new text is the answer, a is the news.
    let r = c.call("read", json!({"file_path": "b.txt"}));
    assert_eq!(
        texts(&r),
        [
            "1\tB\n".to_string(),
            format!("These files changed since you last saw them:\n\n{a}: modified (content)\n--- {a} (as viewed)\n+++ {a} (now)\n@@ -1 +1 @@\n-a\n+A\n")
        ]
    );
    // Told whole: a's view moved to the text told.
    let r = c.call("changed", json!({}));
    assert_eq!(
        texts(&r),
        ["No file you have seen has changed since you saw it.\n"]
    );
    let r = c.call("read", json!({"file_path": "b.txt"}));
    assert_eq!(texts(&r).len(), 1, "told once: {r}");
    assert_eq!(c.close().0, 0);

    // --no-news: only `changed` tells.
    let mut c = env.server(&["--sid", "quiet", "-q", "--no-news"]);
    c.call("read", json!({"file_path": "a.txt"}));
    env.write("a.txt", "AA\n");
    let r = c.call("read", json!({"file_path": "b.txt"}));
    assert_eq!(texts(&r), ["1\tB\n"]);
    assert_eq!(c.close().0, 0);
}

#[test]
fn stub_answers_an_unchanged_reread_only_when_asked() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call("read", json!({"file_path": "a.txt"}));
    let r = c.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(texts(&r), ["1\ta\n"]);
    assert_eq!(r["_meta"]["fsview/read"]["unchanged"], true);
    assert_eq!(c.close().0, 0);
    let mut c = env.server(&["--sid", "s", "-q", "--stub"]);
    let r = c.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(
        texts(&r),
        ["File unchanged since last read. The content from the earlier read in this conversation is still current; refer to that instead of re-reading.\n"]
    );
    assert_eq!(r["_meta"]["fsview/read"]["stub"], true);
    env.write("a.txt", "b\n");
    let r = c.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(texts(&r), ["1\tb\n"]);
    assert_eq!(c.close().0, 0);
}

#[test]
fn context_gives_ctx_builds_text_and_nested_files_once() {
    let env = Env::new();
    let git = |args: &[&str]| {
        let s = env.cmd("git").args(args).output().unwrap();
        assert!(s.status.success(), "{s:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.name", "Tester"]);
    git(&["config", "user.email", "t@example.com"]);
    env.write(
        "CLAUDE.md",
        "<!-- for maintainers -->\nRun the tests first.\n",
    );
    env.write("packages/api/CLAUDE.md", "The API package.\n");
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "first"]);
    let mut c = env.server(&["--sid", "s", "-q"]);
    let r = c.call("context", json!({}));
    let want = env.run("ctx-build", &["--sid", "s"]);
    assert_eq!(want.code, 0, "{}", want.stderr);
    assert_eq!(texts(&r), std::slice::from_ref(&want.stdout));
    assert!(
        want.stdout.contains("Run the tests first."),
        "{}",
        want.stdout
    );
    assert_eq!(r["_meta"]["fsview/context"]["cache"], Value::Null);
    let r = c.call("context", json!({"for_path": "packages/api/src/server.ts"}));
    let t = text(&r);
    assert!(t.contains("The API package."), "{t}");
    assert!(!t.contains("Run the tests first."), "{t}");
    assert_eq!(r["_meta"]["fsview/context"]["cache"], "hit");
    let r = c.call("context", json!({"for_path": "packages/api/src/server.ts"}));
    assert_eq!(
        texts(&r),
        ["No instruction files or rules for packages/api/src/server.ts beyond those already given.\n"]
    );
    // The instruction file was injected with its comment stripped: an
    // edit needs a read first, as with ctx-build.
    let r = c.call(
        "edit",
        json!({"file_path": "CLAUDE.md", "old_string": "first", "new_string": "last"}),
    );
    assert!(is_error(&r));
    assert_eq!(r["_meta"]["fsview/edit"]["verdict"], "processed_view");
    assert_eq!(c.close().0, 0);
}

#[test]
fn malformed_input_gets_an_error_and_the_server_keeps_serving() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let mut c = env.server(&["--sid", "s", "-q"]);
    // Not JSON at all: a parse error, with no id (issue 22: it used to get
    // no answer at all).
    c.send_line("this is not json");
    let m = c.recv();
    assert_eq!(m["error"]["code"], -32700, "{m}");
    assert_eq!(m["id"], Value::Null);
    // JSON, but no JSON-RPC message: Invalid Request, with no id.
    c.send_line(r#"{"hello": "world"}"#);
    let m = c.recv();
    assert_eq!(m["error"]["code"], -32600, "{m}");
    assert_eq!(m["id"], Value::Null);
    // A request of the wrong shape: Invalid Request, with its id.
    c.send_line(r#"{"jsonrpc": "2.0", "id": 41, "method": 7}"#);
    let m = c.recv();
    assert_eq!(
        (m["error"]["code"].clone(), m["id"].clone()),
        (json!(-32600), json!(41)),
        "{m}"
    );
    // A notification no one knows: no answer (the next one is the read's).
    // An unknown tool is a protocol error (the MCP specification's).
    let r = c.request("tools/call", json!({"name": "Read", "arguments": {}}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(
        r["error"]["message"],
        "unknown tool \"Read\"; the tools are read, edit, write, changed and context"
    );
    // A tools/call the SDK cannot read as one: invalid params, saying
    // what is wrong (it was "method not found").
    for (params, want) in [
        (
            json!({"name": "read", "arguments": "a.txt"}),
            "tools/call: params.arguments must be an object of the tool's arguments",
        ),
        (
            json!({"name": 5, "arguments": {}}),
            "tools/call: params.name must be the tool's name, a string",
        ),
        (
            json!({"arguments": {}}),
            "tools/call: params.name is missing; name the tool to call",
        ),
    ] {
        let r = c.request("tools/call", params);
        assert_eq!(
            (r["error"]["code"].clone(), r["error"]["message"].clone()),
            (json!(-32602), json!(want)),
            "{r}"
        );
    }
    // Bad arguments are a tool error the model can correct.
    for (name, args, want) in [
        ("read", json!({}), "read: file_path is required (a string)"),
        ("read", json!({"file_path": "a.txt", "limit": -1}), "read: limit must be a whole number, 1 or more, not -1"),
        ("edit", json!({"file_path": "a.txt", "old_string": "a", "new_string": "b", "all": true}),
         "edit: unknown argument \"all\"; it takes file_path, old_string, new_string, replace_all"),
        ("write", json!({"file_path": "a.txt", "content": 7}), "write: content must be a string, not a number"),
    ] {
        let r = c.call(name, args);
        assert!(is_error(&r), "{r}");
        assert_eq!(texts(&r), [want]);
    }
    let r = c.request("no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    c.send_line(r#"{"jsonrpc": "2.0", "method": "notifications/no-such-thing"}"#);
    // Still serving.
    let r = c.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(texts(&r), ["1\ta\n"]);
    assert_eq!(c.close().0, 0);
}

#[test]
fn a_client_that_vanishes_mid_call_leaves_no_view_of_what_it_never_got() {
    use std::io::{BufRead, BufReader, Write};
    let env = Env::new();
    // Larger than a pipe's buffer, so the result cannot be written whole
    // once the client's end is closed.
    let big: String = (1..=100_000).map(|i| format!("line {i}\n")).collect();
    env.write("big.txt", &big);
    env.write("small.txt", "s\n");
    let mut child = env
        .cmd(harness::mcp_bin())
        .args(["--sid", "s", "-q", "--cap", "4M"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut say = |m: Value| writeln!(stdin, "{m}").unwrap();
    say(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
    );
    say(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    say(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": {"file_path": "small.txt"}}}),
    );
    let mut line = String::new();
    for _ in 0..2 {
        line.clear();
        stdout.read_line(&mut line).unwrap();
    }
    assert!(line.contains("1\\ts\\n"), "{line}");
    say(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read", "arguments": {"file_path": "big.txt"}}}),
    );
    // Gone: both ends closed, nothing of the answer read.
    drop(stdin);
    drop(stdout);
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "a closed connection ends the server quietly"
    );
    let shown: Vec<String> = views(&env, "s").into_iter().map(|v| v.0).collect();
    assert_eq!(shown, ["small.txt"], "big.txt was never delivered");
    let check = env.run("fsview-check-edit", &["--sid", "s", "big.txt"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (
            1,
            "big.txt: not_read: File has not been read yet. Read it first before writing to it.\n"
        )
    );
    let ev = env.run("fsview-session", &["events", "--sid", "s", "--json"]);
    let reads = ev
        .stdout
        .lines()
        .filter(|l| l.contains("\"action\":\"read\""))
        .count();
    assert_eq!(reads, 1, "{}", ev.stdout);
}

#[test]
fn results_written_before_the_client_left_are_recorded() {
    // A client that sends its calls and closes its end of stdin at once,
    // reading the answers to the end (`printf ... | fsview-mcp`): every
    // answer is written, and what it showed recorded, before the server
    // exits.
    let env = Env::new();
    env.write("a.txt", "a\n");
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "sh", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": {"file_path": "a.txt"}}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let r = env.mcp_once(&["--sid", "pipe", "-q"], input.as_bytes());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let answers: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 2, "{}", r.stdout);
    assert_eq!(texts(&answers[1]["result"]), ["1\ta\n"]);
    assert_eq!(
        views(&env, "pipe"),
        [("a.txt".into(), "full".into(), "read".into())]
    );
}

#[test]
fn sigterm_waits_for_the_record_of_an_answer_already_written() {
    // MCP clients close stdin, wait 2 s, then send SIGTERM. An answer the
    // client has is recorded even when its record is slow (here: paused
    // until after the SIGTERM, as a record waiting for the session file's
    // lock would be).
    let env = Env::new();
    env.write("a.txt", "a\n");
    env.write("b.txt", "b\n");
    let pause = env.path("pause");
    std::fs::create_dir(&pause).unwrap();
    let spec = format!("told:{}", pause.display());
    let mut c = Client::start_with(&env, &["--sid", "s", "-q"], &[("FSVIEW_TEST_PAUSE", &spec)]);
    c.initialize("2025-11-25");
    c.call("read", json!({"file_path": "a.txt"}));
    env.write("a.txt", "A\n");
    // b's text, with a's change as news: its record pauses before it lands.
    let r = c.call("read", json!({"file_path": "b.txt"}));
    assert_eq!(texts(&r).len(), 2, "{r}");
    let waiting = pause.join("told.waiting");
    let start = std::time::Instant::now();
    while !waiting.exists() {
        assert!(start.elapsed() < PATIENCE, "the record never paused");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    c.hang_up_and_terminate();
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(pause.join("told.go"), b"").unwrap();
    let (code, stderr) = c.wait();
    assert_eq!((code, stderr.as_str()), (0, ""));
    let ev = env.run("fsview-session", &["events", "--sid", "s", "--json"]);
    let actions: Vec<String> = ev
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["action"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(actions, ["read", "told", "read"], "{}", ev.stdout);

    // A SIGTERM while the client still holds stdin open: the server exits
    // at once, cleanly.
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call("read", json!({"file_path": "b.txt"}));
    c.terminate();
    assert_eq!(c.wait(), (0, String::new()));
}

#[test]
fn eight_servers_on_one_session_file_lose_nothing_and_one_edit_wins() {
    let env = Env::new();
    env.write("shared.txt", "version 1\n");
    for i in 0..8 {
        env.write(&format!("own{i}.txt"), format!("file {i}\n"));
    }
    // One session file; each server its own agent's session, as eight
    // agents of a pipeline would be.
    let mut clients: Vec<Client> = (0..8)
        .map(|i| env.server(&["--sid", &format!("crew-{i}"), "-q"]))
        .collect();
    // Every server reads the shared file and its own one.
    for (i, c) in clients.iter_mut().enumerate() {
        c.call("read", json!({"file_path": "shared.txt"}));
        c.call("read", json!({"file_path": format!("own{i}.txt")}));
    }
    // All at once: each server edits its own file and the shared one side
    // by side (its two calls pipelined), from the version all of them read,
    // while short-lived command-line tools open and close the same session
    // file (each close may checkpoint the WAL: a server whose connections
    // had lost their locks would see it reset under them).
    let stop = std::sync::atomic::AtomicBool::new(false);
    let results: Vec<(Value, Value, String)> = std::thread::scope(|s| {
        let shell = s.spawn(|| {
            let mut runs = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) || runs < 20 {
                let r = env.run("fsview-check-edit", &["--sid", "crew-0", "--changed"]);
                assert!(r.code < 2, "{}", r.stderr);
                runs += 1;
            }
        });
        let handles: Vec<_> = clients
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                s.spawn(move || {
                    let r = c.call_all(&[
                        (
                            "edit",
                            json!({"file_path": format!("own{i}.txt"), "old_string": "file", "new_string": "edited"}),
                        ),
                        (
                            "edit",
                            json!({"file_path": "shared.txt", "old_string": "version 1", "new_string": format!("version by {i}")}),
                        ),
                        ("changed", json!({})),
                    ]);
                    // What told the winner's change, if anything did: the
                    // first answer's news, or `changed` (pipelined calls run
                    // side by side, so it may answer before the edit).
                    let told = format!("{}{}", r[0], r[2]);
                    (r[0].clone(), r[1].clone(), told)
                })
            })
            .collect();
        let r = handles.into_iter().map(|h| h.join().unwrap()).collect();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        shell.join().unwrap();
        r
    });
    for (i, (own, _, _)) in results.iter().enumerate() {
        assert_eq!(own["isError"], false, "{own}");
        assert_eq!(env.read(&format!("own{i}.txt")), format!("edited {i}\n"));
    }
    let winners: Vec<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, (_, s, _))| s["isError"] == false)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(winners.len(), 1, "one edit lands: {results:?}");
    assert_eq!(
        env.read("shared.txt"),
        format!("version by {}\n", winners[0])
    );
    for (i, (own, s, told)) in results.iter().enumerate() {
        if i != winners[0] {
            // Refused as modified since read; or, where the first answer or
            // `changed` told the winner's change and its record landed
            // before this pipelined call was checked, the edit of the old
            // text is not found in the new one the loser now holds. Never
            // applied.
            let told = told.contains("version by");
            let verdict = s["_meta"]["fsview/edit"]["verdict"].as_str().unwrap_or("");
            let want: &[&str] = if told {
                &["modified", "not_found"]
            } else {
                &["modified"]
            };
            assert!(
                want.contains(&verdict),
                "{verdict}, want one of {want:?}: {own}\n{s}"
            );
        }
    }
    for c in clients {
        assert_eq!(c.close().0, 0);
    }
    // Every read and edit is in the session file's log, each in its
    // server's session; every view is there.
    let integrity = env.run("fsview-session", &["list"]);
    assert_eq!(integrity.code, 0, "{}", integrity.stderr);
    let mut reads = 0;
    let mut edits = 0;
    for i in 0..8 {
        let ev = env.run(
            "fsview-session",
            &["events", "--sid", &format!("crew-{i}"), "--json"],
        );
        assert_eq!(ev.code, 0, "{}", ev.stderr);
        for l in ev.stdout.lines() {
            let e: Value = serde_json::from_str(l).unwrap();
            match e["action"].as_str() {
                Some("read") => reads += 1,
                Some("edit") => edits += 1,
                _ => {}
            }
        }
        let mut v = views(&env, &format!("crew-{i}"));
        v.sort();
        // The latest view of each file: what the server wrote, else read.
        let shared = if i == winners[0] { "write" } else { "read" };
        let want = vec![
            (
                format!("own{i}.txt"),
                "full".to_string(),
                "write".to_string(),
            ),
            ("shared.txt".into(), "full".into(), shared.to_string()),
        ];
        assert_eq!(v, want, "crew-{i}");
    }
    assert_eq!((reads, edits), (16, 16));
}

#[test]
fn without_sid_each_server_is_a_session_of_its_own() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let mut c = env.server(&[]);
    let pid = c.pid();
    c.call("read", json!({"file_path": "a.txt"}));
    c.call("changed", json!({}));
    let (code, stderr) = c.close();
    assert_eq!(code, 0);
    let sid = stderr
        .strip_prefix("fsview-mcp: serving session \"")
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("{stderr}"))
        .to_string();
    assert!(
        sid.starts_with("mcp-") && sid.ends_with(&format!("Z-{pid}")),
        "{sid}"
    );
    assert_eq!(
        sid.len(),
        "mcp-20261202T183501Z-".len() + pid.to_string().len()
    );
    assert_eq!(
        views(&env, &sid),
        [("a.txt".into(), "full".into(), "read".into())]
    );
    // FSVIEW_SID names it as for every tool.
    let r = {
        let mut cmd = env.cmd(harness::mcp_bin());
        cmd.env("FSVIEW_SID", "from-env")
            .stdin(std::process::Stdio::null());
        cmd.output().unwrap()
    };
    assert_eq!(r.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&r.stderr).starts_with("fsview-mcp: serving session \"from-env\"")
    );
}

#[test]
fn agent_and_dir_choose_the_views_and_the_paths() {
    let env = Env::new();
    env.write("sub/a.txt", "a\n");
    let mut c = env.server(&["--sid", "conv", "--agent", "worker", "-C", "sub", "-q"]);
    c.call("read", json!({"file_path": "a.txt"}));
    c.call("changed", json!({}));
    assert_eq!(c.close().0, 0);
    let check = env.run(
        "fsview-check-edit",
        &["--sid", "conv", "--agent", "worker", "sub/a.txt"],
    );
    assert_eq!((check.code, check.stdout.as_str()), (0, "sub/a.txt: ok\n"));
    let check = env.run("fsview-check-edit", &["--sid", "conv", "sub/a.txt"]);
    assert_eq!(check.code, 1, "the main thread saw nothing");
}

#[test]
fn bad_command_lines_get_one_line_and_exit_2() {
    let env = Env::new();
    env.write("file", "x\n");
    for (args, want) in [
        (vec!["--bogus"], "fsview-mcp: unknown option --bogus; see fsview-mcp --help\n".to_string()),
        (vec!["--json"], "fsview-mcp: fsview-mcp speaks MCP (JSON-RPC) on standard output; --json does not apply to it\n".to_string()),
        (vec!["-C", "nowhere"], "fsview-mcp: cannot open --dir nowhere: no such file or directory; check the path\n".to_string()),
        (vec!["-C", "file"], "fsview-mcp: --dir file is not a directory; give the directory paths are taken from\n".to_string()),
        (vec!["--cap", "lots"], "fsview-mcp: --cap takes a size in bytes or with a suffix (256K, 1M), not \"lots\"\n".to_string()),
    ] {
        let r = env.mcp_once(&args, b"");
        assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (2, "", want.as_str()), "{args:?}");
    }
    let r = env.mcp_once(&["--help"], b"");
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .contains("Exit status:\n  0  the client closed the connection"),
        "{}",
        r.stdout
    );
    // A session file that cannot be used: at start, one line.
    env.write(
        "notdb",
        "this is not sqlite, and long enough to be checked as a header",
    );
    let mut c = env.cmd(harness::mcp_bin());
    c.env("FSVIEW_SESSION", env.path("notdb"))
        .stdin(std::process::Stdio::null());
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("fsview-mcp: "), "{err}");
}

#[test]
fn the_servers_connections_keep_their_locks_while_other_processes_come_and_go() {
    // A process that opens a file and closes it again drops every POSIX
    // lock it holds on it, SQLite's too. The server keeps connections open
    // for its whole life, so none may be opened (with the header check's
    // open and close) after another: it would hold no lock at all, and a
    // command-line tool closing the file would take itself for the last
    // user, checkpoint and empty the WAL under the server. (Regression: 8
    // SDK clients at once saw "disk I/O error" and a corrupt file.)
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    env.write("m.txt", "m\n");
    env.write("c.txt", "c\n");
    let mut c = env.server(&["--sid", "server", "-q"]);
    c.call("read", json!({"file_path": "m.txt"}));
    c.call("changed", json!({}));
    let inode = std::fs::metadata(&env.session).unwrap().ino();
    let locks = std::fs::read_to_string("/proc/locks").unwrap();
    let held = locks.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 5 && f[4] == c.pid().to_string() && f[5].ends_with(&format!(":{inode}"))
    });
    assert!(
        held,
        "the server holds a lock on the session file:\n{locks}"
    );
    let cli = env.run("fsview-read", &["--sid", "shell", "c.txt"]);
    assert_eq!(cli.code, 0, "{}", cli.stderr);
    let wal = env.session.with_file_name("session.db-wal");
    assert!(
        std::fs::metadata(&wal).unwrap().len() > 0,
        "the WAL was not reset under the live server"
    );
    let r = c.call("read", json!({"file_path": "c.txt"}));
    assert_eq!(texts(&r), ["1\tc\n"]);
    c.call("changed", json!({}));
    assert_eq!(c.close(), (0, String::new()));
    let conn = rusqlite::Connection::open(&env.session).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    assert_eq!(views(&env, "server").len(), 2);
    assert_eq!(views(&env, "shell").len(), 1);
}

#[test]
fn the_session_file_itself_is_not_a_file_to_read_or_change() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call("read", json!({"file_path": "a.txt"}));
    let db = path_str(&env.session);
    for (tool, args) in [
        ("read", json!({"file_path": db})),
        ("read", json!({"file_path": format!("{db}-wal")})),
        (
            "write",
            json!({"file_path": format!("{db}-journal"), "content": "x"}),
        ),
        (
            "edit",
            json!({"file_path": db, "old_string": "a", "new_string": "b"}),
        ),
    ] {
        let r = c.call(tool, args.clone());
        let p = args["file_path"].as_str().unwrap();
        assert!(is_error(&r), "{r}");
        assert_eq!(
            texts(&r),
            [format!("{p} is fsview's session file; the file tools do not show or change it (fsview-session inspects it)")]
        );
    }
    assert!(!env.session.with_file_name("session.db-journal").exists());
    assert_eq!(c.close().0, 0);
}

// Issue 22, fault 13: a message over the limit (1 GiB and some for a
// write; set small here) gets an answer naming the limit, with the id from
// the start of the line or, as the TypeScript SDK writes it, from its end;
// the server keeps serving.
#[test]
fn a_message_over_the_limit_is_answered() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let mut c = Client::start_with(
        &env,
        &["--sid", "s", "-q"],
        &[("FSVIEW_TEST_MAX_MESSAGE", "4096")],
    );
    c.initialize("2025-11-25");
    let content = "x".repeat(10_000);
    c.send(&json!({"jsonrpc": "2.0", "id": 90, "method": "tools/call",
        "params": {"name": "write", "arguments": {"file_path": "b.txt", "content": content}}}));
    let m = c.recv();
    assert_eq!(m["id"], 90, "{m}");
    assert_eq!(m["error"]["code"], -32600);
    assert_eq!(
        m["error"]["message"],
        "the message is over 4096 bytes, the most fsview-mcp takes (a write of up to 1 GiB); send less"
    );
    c.send_line(&format!(
        r#"{{"method":"tools/call","params":{{"name":"write","arguments":{{"file_path":"b.txt","content":"{content}"}}}},"jsonrpc":"2.0","id":"last"}}"#
    ));
    let m = c.recv();
    assert_eq!(
        (m["id"].clone(), m["error"]["code"].clone()),
        (json!("last"), json!(-32600)),
        "{m}"
    );
    assert!(!env.path("b.txt").exists());
    let r = c.call("read", json!({"file_path": "a.txt"}));
    assert_eq!(texts(&r), ["1\ta\n"]);
    assert_eq!(c.close().0, 0);
}

// Issue 22, fault 15: an edit or write result carries at most 200 lines of
// its diff, then says how many it left out.
#[test]
fn a_large_write_answers_with_a_capped_diff() {
    let env = Env::new();
    let mut c = env.server(&["--sid", "s", "-q"]);
    let content: String = (0..5000).map(|i| format!("line {i}\n")).collect();
    let r = c.call("write", json!({"file_path": "big.txt", "content": content}));
    assert!(!is_error(&r), "{r}");
    let t = text(&r);
    assert!(
        t.ends_with("+line 196\n[4803 more lines of the diff left out; read the file to see it]\n"),
        "{}",
        &t[t.len() - 200..]
    );
    assert!(t.len() < 3000, "{}", t.len());
    assert_eq!(r["_meta"]["fsview/write"]["diff_truncated"], 4803, "{r}");
    assert_eq!(env.read("big.txt"), content);
    assert_eq!(c.close().0, 0);
}

// Issue 22, fault 6: a hard link to the session file's shared memory (or
// to the file itself), under another name in another directory, is still
// the session file: reading it would drop this server's locks.
#[test]
fn a_hard_link_to_the_session_file_is_refused_too() {
    let env = Env::new();
    let mut c = env.server(&["--sid", "s", "-q"]);
    c.call("changed", json!({}));
    let shm = env.session.with_file_name("session.db-shm");
    assert!(shm.exists());
    std::fs::hard_link(&shm, env.path("innocent.txt")).unwrap();
    std::fs::hard_link(&env.session, env.path("other.db")).unwrap();
    for name in ["innocent.txt", "other.db"] {
        let r = c.call("read", json!({"file_path": name}));
        assert!(is_error(&r), "{r}");
        assert_eq!(
            texts(&r),
            [format!("{name} is fsview's session file; the file tools do not show or change it (fsview-session inspects it)")]
        );
    }
    assert_eq!(c.close().0, 0);
}

/// News goes with an answer only within the read's cap, the answer's text
/// included (a client cuts a long result, and the model never gets what it
/// cut): after a long answer it waits for the next one.
#[test]
fn news_waits_when_it_would_take_the_answer_past_the_cap() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let long: String = (1..=20).map(|i| format!("line {i:02} of b\n")).collect();
    env.write("b.txt", &long);
    env.write("c.txt", "c\n");
    let mut c = env.server(&["--sid", "s", "-q", "--cap", "400"]);
    c.call("read", json!({"file_path": "a.txt"}));
    env.write("a.txt", "A\n");
    let a = path_str(&env.path("a.txt"));
    let news = format!("These files changed since you last saw them:\n\n{a}: modified (content)\n--- {a} (as viewed)\n+++ {a} (now)\n@@ -1 +1 @@\n-a\n+A\n");
    // b's 20 numbered lines (about 320 bytes) leave too little room.
    let r = c.call("read", json!({"file_path": "b.txt"}));
    assert_eq!(texts(&r).len(), 1, "no news beside b: {r}");
    assert!(texts(&r)[0].len() + news.len() > 400, "{r}");
    let r = c.call("read", json!({"file_path": "c.txt"}));
    assert_eq!(texts(&r), ["1\tc\n".to_string(), news]);
    assert_eq!(c.close().0, 0);
}

/// A read shows at most 2,000 lines, whatever the cap: opencode and Kilo
/// cut an MCP result past 2,000 lines after the server sent it. And the
/// cap counts what a client counts: bytes, each newline and tab twice
/// (Claude Code measures the result as JSON).
#[test]
fn a_read_fits_what_clients_pass_on_whole() {
    let env = Env::new();
    let many: String = (1..=2500).map(|i| format!("{i}\n")).collect();
    env.write("many.txt", &many);
    let wide: String = (1..=100)
        .map(|i| format!("{i:03} {}\n", "é".repeat(20)))
        .collect();
    env.write("wide.txt", &wide);
    let mut c = env.server(&["--sid", "s", "-q", "--cap", "1M"]);
    let r = c.call("read", json!({"file_path": "many.txt"}));
    let text = &texts(&r)[0];
    assert!(text.starts_with("1\t1\n2\t2\n"), "{}", &text[..100]);
    assert!(
        text.ends_with("2000\t2000\n\nNote: showing lines 1-2000 of 2500: the file is longer than one read shows (1048576 bytes as a client counts them, or 2,000 lines); read on with offset 2001.\n"),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    assert_eq!(r["_meta"]["fsview/read"]["lines"], 2000);
    // Lines 1 to 9 take 49 each (the number, its tab counted twice, the
    // line's 45 bytes, "001 " and 20 two-byte characters, and its newline
    // again), line 10 takes 50: 491 of 510, and line 11 would pass it.
    let mut c = env.server(&["--sid", "t", "-q", "--cap", "510"]);
    let r = c.call("read", json!({"file_path": "wide.txt"}));
    assert_eq!(r["_meta"]["fsview/read"]["lines"], 10);
    assert_eq!(r["_meta"]["fsview/read"]["kind"], "start");
}
