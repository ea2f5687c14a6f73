//! ctx-build and ctx-invalidate on a fixture monorepo built with the real
//! git: the memo (miss, hit, same bytes), lazy nested loading, the views
//! the build records for the edit gate, invalidation from the command line
//! and from the installed git hooks.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{self, Env, Run};

const PROJECT: &str = "project instructions, checked into the codebase";
const LOCAL: &str = "user's private project instructions, not checked in";
const USER: &str = "user's private global instructions for all projects";
const MANAGED: &str = "organization-managed policy instructions";
const MEMORY: &str = "user's auto-memory, persists across conversations";
const HEADER: &str = "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.";
const GIT_INTRO: &str = "This is the git status at the start of the conversation. Note that this status is a snapshot in time, and will not update during the conversation.";
const GIT_CLOSE: &str = "Claude Code attached this context automatically; it isn't part of the user's message. It describes the user's own account and workspace, so they don't need it reported back.";
const DATE: &str = "Today's date is 2023-11-14.";
const PROCESSED: &str = "File has only been shown processed (as injected context), not as it is on disk. Read it first before writing to it.";
const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";

/// A monorepo with instruction files at several levels, a user and a
/// managed directory, in a hermetic environment (no global git config, a
/// fixed date and fixed commit dates).
struct Repo {
    env: Env,
}

impl Repo {
    /// The fixture, committed, with CLAUDE.local.md left untracked.
    fn new() -> Repo {
        let r = Repo::bare();
        r.git(&["init", "-q", "-b", "main"]);
        r.git(&["config", "user.name", "Ada Lovelace"]);
        r.files();
        r.git(&["add", "."]);
        r.git(&["reset", "-q", "CLAUDE.local.md"]);
        r.git(&["commit", "-q", "-m", "monorepo"]);
        r
    }

    fn bare() -> Repo {
        let env = Env::new();
        std::fs::create_dir_all(env.root().join("claude")).unwrap();
        std::fs::create_dir_all(env.root().join("managed")).unwrap();
        Repo { env }
    }

    fn files(&self) {
        let e = &self.env;
        e.write(
            "CLAUDE.md",
            "# Monorepo\n\n<!-- maintainers: keep this short -->\n\nUse pnpm. Style: @docs/style.md\n\n```sh\n@not-an-import.md\n```\n\nNever @../outside.md\n",
        );
        e.write("docs/style.md", "Tabs, not spaces. @cycle.md\n");
        e.write("docs/cycle.md", "Back to @style.md\n");
        e.write(".claude/rules/always.md", "Always run the tests.\n");
        e.write(
            ".claude/rules/fm.md",
            "---\ndescription: a rule with front matter\n---\nPrefer small commits.\n",
        );
        e.write(
            ".claude/rules/ts.md",
            "---\npaths: \"packages/**/*.ts\"\n---\nTypeScript strict mode.\n",
        );
        e.write("CLAUDE.local.md", "My local notes.\n");
        e.write("packages/CLAUDE.md", "All packages.\n");
        e.write("packages/api/CLAUDE.md", "The API package.\n");
        e.write("packages/api/src/server.ts", "export {}\n");
        e.write("packages/web/CLAUDE.md", "The web package.\n");
        std::fs::write(e.root().join("outside.md"), "Outside.\n").unwrap();
        std::fs::write(e.root().join("claude/CLAUDE.md"), "User prefs.\n").unwrap();
        std::fs::write(e.root().join("managed/CLAUDE.md"), "Policy.\n").unwrap();
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.env.path(rel)
    }

    fn root(&self) -> PathBuf {
        self.env.root()
    }

    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = self.env.cmd(program);
        let root = self.root();
        c.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CEILING_DIRECTORIES", &root)
            .env("GIT_AUTHOR_NAME", "A U Thor")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_COMMITTER_NAME", "C O Mitter")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
            .env("CLAUDE_CONFIG_DIR", root.join("claude"))
            .env("FSVIEW_MANAGED_DIR", root.join("managed"))
            .env("SOURCE_DATE_EPOCH", "1700000000");
        c
    }

    fn run(&self, name: &str, args: &[&str]) -> Run {
        let mut c = self.cmd(harness::bin(name));
        c.args(args);
        harness::output(c, None)
    }

    fn run_stdin(&self, name: &str, args: &[&str], stdin: &[u8]) -> Run {
        let mut c = self.cmd(harness::bin(name));
        c.args(args);
        harness::output(c, Some(stdin))
    }

    fn sh(&self, script: &str) -> Run {
        let mut c = self.cmd("sh");
        c.arg("-c").arg(script);
        harness::output(c, None)
    }

    fn git(&self, args: &[&str]) -> String {
        let mut c = self.cmd("git");
        c.args(args);
        let r = harness::output(c, None);
        assert_eq!(r.code, 0, "git {args:?}: {}", r.stderr);
        r.stdout.trim_end().to_string()
    }

    fn build_json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let r = self.run("ctx-build", &a);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.json().remove(0)
    }

    fn log(&self) -> String {
        self.git(&["log", "--oneline", "-n", "5"])
    }
}

fn system_part(branch: &str, status: &str, log: &str) -> String {
    let status = if status.is_empty() { "(clean)" } else { status };
    format!(
        "gitStatus: {GIT_INTRO}\n\nCurrent branch: {branch}\n\nMain branch (you will usually use this for PRs): main\n\nGit user: Ada Lovelace\n\nStatus:\n{status}\n\nRecent commits:\n{log}"
    )
}

fn user_part(blocks: &[(PathBuf, &str, &str)]) -> String {
    let mut s = String::from(
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n",
    );
    if !blocks.is_empty() {
        let b: Vec<String> = blocks
            .iter()
            .map(|(p, d, t)| format!("Contents of {} ({d}):\n\n{t}", p.display()))
            .collect();
        s += &format!("# claudeMd\n{HEADER}\n\n{}\n", b.join("\n\n"));
    }
    s + "# currentDate\nToday's date is 2023-11-14.\n\n      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context unless it is highly relevant to your task.\n</system-reminder>\n"
}

/// The fixture's instruction files as built from the work tree top: path,
/// description in the current layout, text as shown.
fn fixture_files(r: &Repo) -> Vec<(PathBuf, &'static str, &'static str)> {
    let root = r.root();
    vec![
        (root.join("managed/CLAUDE.md"), MANAGED, "Policy."),
        (root.join("claude/CLAUDE.md"), USER, "User prefs."),
        (
            r.p("CLAUDE.md"),
            PROJECT,
            "# Monorepo\n\nUse pnpm. Style: @docs/style.md\n\n```sh\n@not-an-import.md\n```\n\nNever @../outside.md",
        ),
        (
            r.p("docs/style.md"),
            PROJECT,
            "Tabs, not spaces. @cycle.md",
        ),
        (r.p("docs/cycle.md"), PROJECT, "Back to @style.md"),
        (
            r.p(".claude/rules/always.md"),
            PROJECT,
            "Always run the tests.",
        ),
        (r.p(".claude/rules/fm.md"), PROJECT, "Prefer small commits."),
        (r.p("CLAUDE.local.md"), LOCAL, "My local notes."),
    ]
}

/// The fixture's user part as Claude Code 2.1.88 placed it (JSON `user`):
/// managed files carried the user's description then.
fn fixture_user(r: &Repo) -> String {
    let files: Vec<_> = fixture_files(r)
        .into_iter()
        .map(|(p, d, t)| (p, if d == MANAGED { USER } else { d }, t))
        .collect();
    user_part(&files)
}

/// Claude Code 2.1.332's instructions reminder.
fn instructions_block(files: &[(PathBuf, &str, &str)]) -> String {
    let b: Vec<String> = files
        .iter()
        .map(|(p, d, t)| format!("Contents of {} ({d}):\n\n{t}", p.display()))
        .collect();
    format!(
        "<system-reminder>\n{HEADER}\n\n{}\n</system-reminder>",
        b.join("\n\n")
    )
}

/// Claude Code 2.1.332's git reminder.
fn git_block(branch: &str, status: &str, log: &str) -> String {
    let status = if status.is_empty() { "(clean)" } else { status };
    format!(
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# gitStatus\n{GIT_INTRO}\n\nCurrent branch: {branch}\n\nMain branch (you will usually use this for PRs): main\n\nGit user: Ada Lovelace\n\nStatus:\n{status}\n\nRecent commits:\n{log}\n\n{GIT_CLOSE}\n</system-reminder>"
    )
}

/// One nested file as Claude Code attaches it.
fn nested_block(path: &Path, text: &str) -> String {
    format!(
        "<system-reminder>\nContents of {}:\n\n{text}\n</system-reminder>\n",
        path.display()
    )
}

/// The text output in the default layout (Claude Code 2.1.332).
fn fixture_text(r: &Repo) -> String {
    format!(
        "{}\n{}\n{DATE}\n",
        instructions_block(&fixture_files(r)),
        git_block("main", "?? CLAUDE.local.md", &r.log())
    )
}

/// The text output with --layout 2.1.88.
fn fixture_text_2_1_88(r: &Repo) -> String {
    format!(
        "{}\n\n{}",
        system_part("main", "?? CLAUDE.local.md", &r.log()),
        fixture_user(r)
    )
}

fn outside_warning(r: &Repo) -> String {
    let root = r.root();
    format!(
        "import ../outside.md from {}: {} is outside the working directory {}; not loaded (external imports are not allowed)",
        r.p("CLAUDE.md").display(),
        root.join("outside.md").display(),
        r.env.work.display()
    )
}

#[test]
fn miss_then_hit_returns_identical_bytes() {
    let r = Repo::new();
    let first = r.run("ctx-build", &[]);
    first.expect(0, &fixture_text(&r));
    assert_eq!(
        first.stderr,
        format!("ctx-build: {}\n", outside_warning(&r))
    );
    // The hit repeats no build warning on stderr.
    r.run("ctx-build", &[])
        .expect(0, &fixture_text(&r))
        .stderr_is("");
    let j = r.build_json(&[]);
    assert_eq!(j["v"], 1);
    assert_eq!(j["type"], "context");
    assert_eq!(j["cache"], "hit");
    assert_eq!(
        j["system"],
        system_part("main", "?? CLAUDE.local.md", &r.log())
    );
    assert_eq!(j["user"], fixture_user(&r));
    assert_eq!(j["nested"], serde_json::Value::Null);
    assert_eq!(j["warnings"], serde_json::json!([outside_warning(&r)]));
    let files: Vec<String> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap();
            let by = f["imported_by"]
                .as_str()
                .map(|b| format!(" <- {}", b.rsplit('/').next().unwrap()))
                .unwrap_or_default();
            format!(
                "{} {} {} {} {}/{}{by}",
                path.strip_prefix(&format!("{}/", r.root().display()))
                    .unwrap(),
                f["source"].as_str().unwrap(),
                f["kind"].as_str().unwrap(),
                f["label"].as_str().unwrap(),
                f["bytes"],
                f["injected_bytes"],
            )
        })
        .collect();
    assert_eq!(
        files,
        vec![
            "managed/CLAUDE.md inject full managed 8/8",
            "claude/CLAUDE.md inject full user 12/12",
            "work/CLAUDE.md inject processed project 134/95",
            "work/docs/style.md import full import 28/28 <- CLAUDE.md",
            "work/docs/cycle.md import full import 18/18 <- style.md",
            "work/.claude/rules/always.md inject full rule 22/22",
            "work/.claude/rules/fm.md inject processed rule 68/22",
            "work/CLAUDE.local.md inject full local 16/16",
        ]
    );
}

#[test]
fn layout_2_1_88_is_the_layout_fsview_was_first_built_on() {
    let r = Repo::new();
    r.run("ctx-build", &["--layout", "2.1.88"])
        .expect(0, &fixture_text_2_1_88(&r));
    // One memo, every layout: the default layout is a hit too, and its
    // bytes come back the same.
    r.run("ctx-build", &[])
        .expect(0, &fixture_text(&r))
        .stderr_is("");
    assert_eq!(r.build_json(&["--layout", "2.1.88"])["cache"], "hit");
    r.run("ctx-build", &["--layout", "2.1.88"])
        .expect(0, &fixture_text_2_1_88(&r));
    // Nested files come after the user part.
    let nested = nested_block(&r.p("packages/CLAUDE.md"), "All packages.\n")
        + &nested_block(&r.p(".claude/rules/ts.md"), "TypeScript strict mode.\n");
    r.run(
        "ctx-build",
        &["--layout", "2.1.88", "--for", "packages/src/x.ts"],
    )
    .expect(0, &format!("{}\n{nested}", fixture_text_2_1_88(&r)));
}

#[test]
fn json_keeps_its_parts_in_every_layout() {
    let r = Repo::new();
    let current = r.build_json(&[]);
    let old = r.build_json(&["--layout", "2.1.88"]);
    assert_eq!(
        (&current["layout"], &old["layout"]),
        (&serde_json::json!("2.1.332"), &serde_json::json!("2.1.88"))
    );
    for key in ["system", "user", "nested", "files", "warnings"] {
        assert_eq!(current[key], old[key], "{key}");
    }
    // `system` and `user` are the parts as Claude Code 2.1.88 placed them.
    assert_eq!(
        current["system"],
        system_part("main", "?? CLAUDE.local.md", &r.log())
    );
    assert_eq!(current["user"], fixture_user(&r));
    // `blocks` is the chosen layout, block by block, with where each goes.
    let summary = |j: &serde_json::Value| -> Vec<(String, String, String)> {
        j["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["part"].as_str().unwrap().into(),
                    b["where"].as_str().unwrap().into(),
                    b["text"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let s = |x: &str| x.to_string();
    assert_eq!(
        summary(&current),
        vec![
            (
                s("instructions"),
                s("user"),
                instructions_block(&fixture_files(&r))
            ),
            (
                s("git"),
                s("user"),
                git_block("main", "?? CLAUDE.local.md", &r.log())
            ),
            (s("date"), s("system"), s(DATE)),
        ]
    );
    assert_eq!(
        summary(&old),
        vec![
            (
                s("system"),
                s("system"),
                system_part("main", "?? CLAUDE.local.md", &r.log())
            ),
            (s("user"), s("user"), fixture_user(&r)),
        ]
    );
    let bad = r.run("ctx-build", &["--layout", "2.1.0"]);
    assert_eq!(bad.code, 2);
    assert_eq!(
        bad.stderr,
        "ctx-build: --layout cannot be \"2.1.0\"; did you mean \"2.1.88\"? (one of 2.1.332 or 2.1.88)\n"
    );
}

#[test]
fn an_injection_keeps_its_2_1_88_words_in_the_system_text() {
    let r = Repo::new();
    r.run("ctx-invalidate", &["--injection", "cache-break: 2"]);
    let j = r.build_json(&[]);
    let blocks = j["blocks"].as_array().unwrap();
    let parts: Vec<(&str, &str)> = blocks
        .iter()
        .map(|b| (b["part"].as_str().unwrap(), b["where"].as_str().unwrap()))
        .collect();
    assert_eq!(
        parts,
        [
            ("instructions", "user"),
            ("git", "user"),
            ("injection", "system"),
            ("date", "system")
        ]
    );
    assert_eq!(
        blocks[2]["text"],
        "cacheBreaker: [CACHE_BREAKER: cache-break: 2]"
    );
}

#[test]
fn a_memo_stored_by_an_older_ctx_build_is_built_again() {
    let r = Repo::new();
    r.run("ctx-build", &[]);
    // What the previous ctx-build stored: rendered text, no format.
    let conn = rusqlite::Connection::open(&r.env.session).unwrap();
    conn.execute(
        "UPDATE context SET body=CAST(?1 AS BLOB), meta='{}' WHERE part='user'",
        [fixture_user(&r)],
    )
    .unwrap();
    drop(conn);
    r.run("ctx-build", &[]).expect(0, &fixture_text(&r)).stderr_is(&format!(
        "ctx-build: {}\nctx-build: the session's cached context was stored by an older ctx-build; built it again\n",
        outside_warning(&r)
    ));
    r.run("ctx-build", &[])
        .expect(0, &fixture_text(&r))
        .stderr_is("");
    let j = r.build_json(&[]);
    assert_eq!(j["cache"], "hit");
}

#[test]
fn a_hit_warns_when_a_file_changed_and_keeps_the_bytes() {
    let r = Repo::new();
    r.run("ctx-build", &[]).expect(0, &fixture_text(&r));
    r.env.write("docs/style.md", "Spaces now.\n");
    std::fs::remove_file(r.p("CLAUDE.local.md")).unwrap();
    r.run("ctx-build", &[]).expect(0, &fixture_text(&r)).stderr_is(
        "ctx-build: the cached user context was built from files changed since: docs/style.md (content), CLAUDE.local.md (deleted); run ctx-invalidate --user to rebuild it\n",
    );
    r.run("ctx-build", &["--quiet"])
        .expect(0, &fixture_text(&r))
        .stderr_is("");
}

#[test]
fn invalidate_parts_then_miss() {
    let r = Repo::new();
    r.run("ctx-build", &[]);
    r.env.write("CLAUDE.local.md", "Changed notes.\n");
    r.run("ctx-invalidate", &["--user", "--reason", "notes changed"])
        .expect(0, "cleared the user context\n");
    let j = r.build_json(&[]);
    assert_eq!(j["cache"], "miss");
    assert!(j["user"].as_str().unwrap().contains("Changed notes."));
    // The system part was kept: still the status from before.
    assert_eq!(
        j["system"],
        system_part("main", "?? CLAUDE.local.md", &r.log())
    );
    r.git(&["add", "CLAUDE.local.md"]);
    r.run("ctx-invalidate", &["--system"])
        .expect(0, "cleared the system context\n");
    let j = r.build_json(&[]);
    assert_eq!(j["cache"], "miss");
    assert_eq!(
        j["system"],
        system_part("main", "A  CLAUDE.local.md", &r.log())
    );
    assert_eq!(r.build_json(&[])["cache"], "hit");
    r.run("ctx-invalidate", &[])
        .expect(0, "cleared the system and user context\n");
    assert_eq!(r.build_json(&[])["cache"], "miss");
    // The reasons are in the session's log.
    let conn = rusqlite::Connection::open(&r.env.session).unwrap();
    let events: Vec<(String, String, Option<String>)> = conn
        .prepare(
            "SELECT action, verdict, detail FROM events WHERE tool='ctx-invalidate' ORDER BY id",
        )
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let inv = |cleared: &str, reason: Option<&str>| {
        (
            "invalidate".to_string(),
            cleared.to_string(),
            reason.map(str::to_string),
        )
    };
    assert_eq!(
        events,
        vec![
            inv("user", Some("notes changed")),
            inv("system", None),
            inv("system+user", None),
        ]
    );
}

#[test]
fn injection_is_part_of_the_next_build_until_removed() {
    let r = Repo::new();
    r.run("ctx-build", &[]);
    r.run(
        "ctx-invalidate",
        &["--injection", "cache-break: 2", "--reason", "debugging"],
    )
    .expect(
        0,
        "set the injection\ncleared the system and user context\n",
    );
    let sys = format!(
        "{}\ncacheBreaker: [CACHE_BREAKER: cache-break: 2]",
        system_part("main", "?? CLAUDE.local.md", &r.log())
    );
    let j = r.build_json(&[]);
    assert_eq!(j["cache"], "miss");
    assert_eq!(j["system"], sys);
    assert_eq!(r.build_json(&[])["cache"], "hit");
    r.run("ctx-invalidate", &["--injection", ""]).expect(
        0,
        "removed the injection\ncleared the system and user context\n",
    );
    r.run("ctx-build", &[]).expect(0, &fixture_text(&r));
}

#[test]
fn for_loads_nested_files_and_matching_rules_once() {
    let r = Repo::new();
    // One reminder per file, no description, the text as it is (issue 16,
    // fixes 4 and 5).
    let nested = |blocks: &[(&str, &str)]| {
        blocks
            .iter()
            .map(|(p, t)| nested_block(&r.p(p), t))
            .collect::<String>()
    };
    let api = nested(&[
        ("packages/CLAUDE.md", "All packages.\n"),
        ("packages/api/CLAUDE.md", "The API package.\n"),
        (".claude/rules/ts.md", "TypeScript strict mode.\n"),
    ]);
    // On a cold cache: the memoized parts, then the nested files.
    r.run("ctx-build", &["--for", "packages/api/src/server.ts"])
        .expect(0, &format!("{}{api}", fixture_text(&r)));
    // Given once: the next call has nothing nested, and the memo is a hit.
    let j = r.build_json(&["--for", "packages/api/src/server.ts"]);
    assert_eq!(j["cache"], "hit");
    assert_eq!(j["nested"], serde_json::Value::Null);
    assert_eq!(j["files"].as_array().unwrap().len(), 8);
    // Another package: only what is new, on a hit.
    let j = r.build_json(&["--for", "packages/web/app.ts", "packages/api/x.ts"]);
    assert_eq!(j["cache"], "hit");
    assert_eq!(
        j["nested"],
        nested(&[("packages/web/CLAUDE.md", "The web package.\n")])
    );
    let blocks = j["blocks"].as_array().unwrap();
    let last = blocks.last().unwrap();
    assert_eq!(
        (&last["part"], &last["where"], &last["path"]),
        (
            &serde_json::json!("nested"),
            &serde_json::json!("attachment"),
            &serde_json::json!(r.p("packages/web/CLAUDE.md").display().to_string())
        )
    );
    let last = j["files"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["part"], "nested");
    assert_eq!(last["kind"], "full");
    // The memoized bytes never include nested files.
    r.run("ctx-build", &[]).expect(0, &fixture_text(&r));
    // Nested files are views too.
    r.run("fsview-check-edit", &["packages/web/CLAUDE.md"])
        .expect(0, "packages/web/CLAUDE.md: ok\n");
}

#[test]
fn injected_files_are_views_for_the_edit_gate() {
    let r = Repo::new();
    r.run("ctx-build", &[]);
    r.run(
        "fsview-check-edit",
        &[
            "CLAUDE.md",
            ".claude/rules/fm.md",
            "CLAUDE.local.md",
            "docs/style.md",
            ".claude/rules/ts.md",
        ],
    )
    .expect(
        1,
        &format!(
            "CLAUDE.md: processed_view: {PROCESSED}\n.claude/rules/fm.md: processed_view: {PROCESSED}\nCLAUDE.local.md: ok\ndocs/style.md: ok\n.claude/rules/ts.md: not_read: {NOT_READ}\n"
        ),
    );
    // A full read makes the processed one editable.
    r.run("fsview-read", &["CLAUDE.md"]);
    r.run("fsview-check-edit", &["--write", "CLAUDE.md"])
        .expect(0, "CLAUDE.md: ok\n");
}

#[test]
fn forget_and_reset() {
    let r = Repo::new();
    r.run("ctx-build", &["--for", "packages/api/src/server.ts"]);
    r.run(
        "ctx-invalidate",
        &["--forget", "CLAUDE.local.md", "./docs/../docs/style.md"],
    )
    .expect(0, "forgot the views of 2 files\n");
    r.run("fsview-check-edit", &["CLAUDE.local.md", "docs/cycle.md"])
        .expect(
            1,
            &format!("CLAUDE.local.md: not_read: {NOT_READ}\ndocs/cycle.md: ok\n"),
        );
    r.run_stdin(
        "ctx-invalidate",
        &["-0", "--forget", "-"],
        b"docs/cycle.md\0missing.md\0",
    )
    .expect(0, "forgot the views of 1 file\n");
    // Forgetting views keeps the memo.
    assert_eq!(r.build_json(&[])["cache"], "hit");
    r.run("ctx-invalidate", &["--forget"])
        .expect(0, "forgot the views of 8 files\n");
    r.run("fsview-check-edit", &["CLAUDE.local.md"])
        .expect(1, &format!("CLAUDE.local.md: not_read: {NOT_READ}\n"));
    r.run("ctx-invalidate", &["--reset", "--reason", "/clear"])
        .expect(
            0,
            "reset the session: views, context, injection and loaded files\n",
        );
    let j = r.build_json(&["--for", "packages/api/src/server.ts"]);
    assert_eq!(j["cache"], "miss");
    assert!(j["nested"].as_str().unwrap().contains("The API package."));
    r.run("fsview-check-edit", &["CLAUDE.local.md"])
        .expect(0, "CLAUDE.local.md: ok\n");
}

#[test]
fn invalidate_without_a_session_file_is_quiet_and_creates_none() {
    let r = Repo::new();
    for args in [
        &["--system", "--hook", "--reason", "git post-checkout"][..],
        &[][..],
        &["--forget"][..],
        &["--reset"][..],
        &["--hook", "--injection", "x"][..],
    ] {
        r.run("ctx-invalidate", args).expect(0, "").stderr_is("");
    }
    assert!(!r.env.session.exists());
    // An injection outside a hook is worth a session file.
    r.run("ctx-invalidate", &["--injection", "x"]).expect(
        0,
        "set the injection\ncleared the system and user context\n",
    );
    assert!(r.env.session.exists());
}

#[test]
fn detached_head() {
    let r = Repo::new();
    r.git(&["checkout", "-q", "--detach"]);
    let j = r.build_json(&[]);
    assert_eq!(
        j["system"],
        system_part("HEAD", "?? CLAUDE.local.md", &r.log())
    );
}

#[test]
fn repository_without_commits() {
    let r = Repo::bare();
    r.git(&["init", "-q", "-b", "trunk"]);
    r.git(&["config", "user.name", "Ada Lovelace"]);
    r.env.write("CLAUDE.md", "Fresh.\n");
    let j = r.build_json(&[]);
    assert_eq!(
        j["system"],
        format!(
            "gitStatus: {GIT_INTRO}\n\nCurrent branch: trunk\n\nMain branch (you will usually use this for PRs): main\n\nGit user: Ada Lovelace\n\nStatus:\n?? CLAUDE.md\n\nRecent commits:\n"
        )
    );
    assert_eq!(
        j["user"],
        user_part(&[(r.p("CLAUDE.md"), PROJECT, "Fresh.")])
    );
}

#[test]
fn outside_a_work_tree_there_is_no_system_part() {
    let r = Repo::bare();
    r.env.write("CLAUDE.md", "Plain directory.\n");
    r.run("ctx-build", &[]).expect(
        0,
        &format!(
            "{}\n{DATE}\n",
            instructions_block(&[(r.p("CLAUDE.md"), PROJECT, "Plain directory.")])
        ),
    );
    r.run("ctx-build", &["--layout", "2.1.88"]).expect(
        0,
        &user_part(&[(r.p("CLAUDE.md"), PROJECT, "Plain directory.")]),
    );
}

#[test]
fn large_memory_is_truncated_with_a_notice() {
    let r = Repo::new();
    let text: String = (1..=300).map(|i| format!("- note {i}\n")).collect();
    let mem = r.root().join("claude/projects/p/memory/MEMORY.md");
    std::fs::create_dir_all(mem.parent().unwrap()).unwrap();
    std::fs::write(&mem, &text).unwrap();
    let j = r.build_json(&["--memory", mem.to_str().unwrap()]);
    let (shown, cut) = fsview_context::memory::truncate(&text);
    assert!(cut);
    let user = j["user"].as_str().unwrap();
    let block = format!(
        "Contents of {} ({MEMORY}):\n\n{}\n# currentDate",
        mem.display(),
        shown.trim()
    );
    assert!(user.contains(&block), "{user}");
    let f = j["files"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(f["label"], "memory");
    assert_eq!(f["kind"], "processed");
    assert_eq!(f["bytes"], text.len());
    // A hit built with other options says so.
    r.run("ctx-build", &["--also", "AGENTS.md"])
        .stderr_is("ctx-build: the cached context was built with another --also, --memory; run ctx-invalidate to rebuild it\n");
}

#[test]
fn also_reads_other_instruction_file_names() {
    let r = Repo::new();
    r.env.write("AGENTS.md", "Agents file.\n");
    r.env.write("GEMINI.md", "Gemini file.\n");
    let j = r.build_json(&["--also", "AGENTS.md"]);
    let user = j["user"].as_str().unwrap();
    assert!(user.contains("Agents file.") && !user.contains("Gemini file."));
    r.run("ctx-invalidate", &[]);
    let mut c = r.cmd(harness::bin("ctx-build"));
    c.args(["--json"])
        .env("FSVIEW_INSTRUCTION_NAMES", "AGENTS.md,GEMINI.md");
    let j = harness::output(c, None).json().remove(0);
    let user = j["user"].as_str().unwrap();
    let (a, g) = (
        user.find("Agents file.").unwrap(),
        user.find("Gemini file.").unwrap(),
    );
    assert!(a < g);
}

#[test]
fn no_cache_builds_without_storing() {
    let r = Repo::new();
    r.run("ctx-build", &["--no-cache"])
        .expect(0, &fixture_text(&r));
    assert!(!r.env.session.exists());
    r.run("ctx-build", &[]);
    r.env.write("CLAUDE.local.md", "Newer.\n");
    let j = r.build_json(&["--no-cache"]);
    assert_eq!(j["cache"], "miss");
    assert!(j["user"].as_str().unwrap().contains("Newer."));
    assert!(!r.build_json(&[])["user"]
        .as_str()
        .unwrap()
        .contains("Newer."));
}

#[test]
fn user_errors_exit_2_and_leave_the_session_alone() {
    let r = Repo::new();
    r.run("ctx-build", &[]);
    let before = std::fs::read(&r.env.session).unwrap();
    let mut c = r.cmd(harness::bin("ctx-build"));
    c.env("SOURCE_DATE_EPOCH", "yesterday");
    harness::output(c, None).expect(2, "").stderr_is(
        "ctx-build: SOURCE_DATE_EPOCH=\"yesterday\" is not a whole number of seconds since 1970-01-01; fix or unset it\n",
    );
    r.run("ctx-build", &["--also", "docs/AGENTS.md"]).expect(2, "").stderr_is(
        "ctx-build: --also takes a file name such as AGENTS.md, not \"docs/AGENTS.md\" (check --also and FSVIEW_INSTRUCTION_NAMES)\n",
    );
    r.run("ctx-invalidate", &["--reset", "--system"])
        .expect(2, "");
    std::os::unix::fs::symlink(r.p("nowhere"), r.p("dangling")).unwrap();
    r.run("ctx-invalidate", &["--forget", "dangling"]).expect(2, "").stderr_is(
        "ctx-invalidate: dangling is a dangling symbolic link; fix the link or name its target\n",
    );
    assert_eq!(std::fs::read(&r.env.session).unwrap(), before);
    assert_eq!(r.build_json(&[])["cache"], "hit");
    // --help and --version never open the session file.
    std::fs::write(&r.env.session, "not a database").unwrap();
    for tool in ["ctx-build", "ctx-invalidate"] {
        assert_eq!(r.run(tool, &["--help"]).code, 0);
        assert_eq!(r.run(tool, &["--version"]).code, 0);
    }
    let bad = r.run("ctx-build", &[]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("is not an fsview session file"),
        "{}",
        bad.stderr
    );
    assert_eq!(std::fs::read(&r.env.session).unwrap(), b"not a database");
}

// Two builds racing on a cold cache: the first stored wins, the other
// returns its bytes, and every later hit agrees.
#[test]
fn racing_cold_builds_agree() {
    let r = Repo::new();
    let children: Vec<_> = (0..4)
        .map(|_| {
            let mut c = r.cmd(harness::bin("ctx-build"));
            c.arg("--json")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null());
            c.spawn().unwrap()
        })
        .collect();
    let outs: Vec<serde_json::Value> = children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success());
            serde_json::from_slice(&o.stdout).unwrap()
        })
        .collect();
    let hit = r.build_json(&[]);
    assert_eq!(hit["cache"], "hit");
    for o in &outs {
        assert_eq!((&o["system"], &o["user"]), (&hit["system"], &hit["user"]));
    }
}

fn install_hooks(r: &Repo, args: &[&str]) -> Run {
    let mut a = vec!["install-hooks"];
    a.extend_from_slice(args);
    r.run("ctx-invalidate", &a)
}

#[test]
fn a_real_checkout_fires_the_installed_hook() {
    let r = Repo::new();
    install_hooks(&r, &[]).expect(
        0,
        "installed post-checkout, post-merge, post-rewrite in .git/hooks\n",
    );
    r.git(&["branch", "feature"]);
    r.run("ctx-build", &[]).expect(0, &fixture_text(&r));
    // A file checkout is not a branch switch: the memo stays.
    r.git(&["checkout", "-q", "main", "--", "CLAUDE.md"]);
    assert_eq!(r.build_json(&[])["cache"], "hit");
    r.git(&["checkout", "-q", "feature"]);
    let j = r.build_json(&[]);
    assert_eq!(j["cache"], "miss");
    assert_eq!(
        j["system"],
        system_part("feature", "?? CLAUDE.local.md", &r.log())
    );
    // Only the system part was cleared by the hook.
    assert_eq!(j["user"], fixture_user(&r));
    // A commit amend (post-rewrite) clears it too.
    r.git(&["commit", "-q", "--amend", "-m", "amended"]);
    let j = r.build_json(&[]);
    assert_eq!(j["cache"], "miss");
    assert!(j["system"].as_str().unwrap().ends_with(" amended"));
}

#[test]
fn install_hooks_chains_existing_hooks_and_is_idempotent() {
    let r = Repo::new();
    r.git(&["config", "core.hooksPath", "githooks"]);
    std::fs::create_dir_all(r.p("githooks")).unwrap();
    let log = r.root().join("hook.log");
    let theirs = format!(
        "#!/bin/sh\necho \"theirs $*\" >> {log}\ncat >> {log}\nexit 3\n",
        log = log.display()
    );
    std::fs::write(r.p("githooks/post-rewrite"), &theirs).unwrap();
    r.sh("chmod +x githooks/post-rewrite").expect(0, "");
    let installed = "installed post-checkout, post-merge, post-rewrite in githooks\n";
    // From a subdirectory: a relative core.hooksPath is relative to the top.
    let mut c = r.cmd(harness::bin("ctx-invalidate"));
    c.arg("install-hooks").current_dir(r.p("docs"));
    harness::output(c, None).expect(
        0,
        &format!("kept the existing post-rewrite as githooks/post-rewrite.pre-fsview; fsview's hook runs it first\n{installed}"),
    );
    install_hooks(&r, &[]).expect(0, installed);
    assert_eq!(
        std::fs::read_to_string(r.p("githooks/post-rewrite.pre-fsview")).unwrap(),
        theirs
    );
    r.run("ctx-build", &[]);
    // The chained hook gets the arguments and stdin; its status is kept.
    let run = r.sh("printf 'old new\\n' | githooks/post-rewrite amend");
    assert_eq!(run.code, 3);
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "theirs amend\nold new\n"
    );
    assert_eq!(r.build_json(&[])["cache"], "miss");
    // A second hook that is not fsview's cannot be chained: nothing changes.
    std::fs::write(r.p("githooks/post-rewrite"), "#!/bin/sh\n").unwrap();
    install_hooks(&r, &[]).expect(2, "").stderr_is(
        "ctx-invalidate: githooks/post-rewrite is not fsview's and githooks/post-rewrite.pre-fsview exists too; merge them by hand, then rerun\n",
    );
    install_hooks(&r, &[]).expect(2, "");
    assert_eq!(
        std::fs::read_to_string(r.p("githooks/post-rewrite")).unwrap(),
        "#!/bin/sh\n"
    );
    install_hooks(&r, &["--uninstall"]).expect(0, "removed post-checkout\nremoved post-merge\n");
    std::fs::remove_file(r.p("githooks/post-rewrite")).unwrap();
    std::fs::rename(
        r.p("githooks/post-rewrite.pre-fsview"),
        r.p("githooks/post-rewrite"),
    )
    .unwrap();
    install_hooks(&r, &["--json"]).expect(
        0,
        &format!(
            "{{\"v\":1,\"type\":\"install-hooks\",\"dir\":\"githooks\",\"installed\":[\"post-checkout\",\"post-merge\",\"post-rewrite\"],\"kept\":[\"post-rewrite\"],\"runs\":\"{}\"}}\n",
            // The running binary names itself by its canonical path.
            std::fs::canonicalize(harness::bin("ctx-invalidate"))
                .unwrap()
                .display()
        ),
    );
    install_hooks(&r, &["--uninstall"]).expect(
        0,
        "removed post-checkout\nremoved post-merge\nremoved post-rewrite, restored the hook it chained\n",
    );
    assert_eq!(
        std::fs::read_to_string(r.p("githooks/post-rewrite")).unwrap(),
        theirs
    );
    assert!(!r.p("githooks/post-checkout").exists());
    assert!(!r.p("githooks/post-rewrite.pre-fsview").exists());
    install_hooks(&r, &["--uninstall"])
        .expect(0, "no fsview hooks in githooks; nothing to remove\n");
}

// The hooks run the ctx-invalidate that installed them (an absolute path, so
// a git client with another PATH still runs it), else the one on PATH, else
// nothing, and never fail the git command.
#[test]
fn installed_hooks_find_ctx_invalidate_or_do_nothing() {
    let r = Repo::new();
    let copy = r.root().join("bin/ctx-invalidate");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(harness::bin("ctx-invalidate"), &copy).unwrap();
    let mut c = r.cmd(&copy);
    c.arg("install-hooks");
    harness::output(c, None).expect(
        0,
        "installed post-checkout, post-merge, post-rewrite in .git/hooks\n",
    );
    let hook = std::fs::read_to_string(r.p(".git/hooks/post-merge")).unwrap();
    assert!(
        hook.contains(&format!("    fsview='{}'\n", copy.display())),
        "{hook}"
    );
    // Not on PATH, but where it was installed from.
    r.run("ctx-build", &[]);
    r.sh("PATH=/usr/bin:/bin; export PATH; .git/hooks/post-merge 0")
        .expect(0, "")
        .stderr_is("");
    assert_eq!(r.build_json(&[])["cache"], "miss");
    // Gone from there: the one on PATH.
    std::fs::remove_file(&copy).unwrap();
    r.sh(".git/hooks/post-merge 0").expect(0, "").stderr_is("");
    assert_eq!(r.build_json(&[])["cache"], "miss");
    // Nowhere: the hook does nothing, and says nothing.
    r.sh("PATH=/usr/bin:/bin; export PATH; .git/hooks/post-merge 0")
        .expect(0, "")
        .stderr_is("");
    assert_eq!(r.build_json(&[])["cache"], "hit");
    // Outside a work tree: one line.
    let mut c = r.cmd(harness::bin("ctx-invalidate"));
    c.arg("install-hooks").current_dir(r.root());
    harness::output(c, None).expect(2, "").stderr_is(
        "ctx-invalidate: not inside a git work tree; cd into the repository whose hooks to install, then rerun\n",
    );
}

// Bad input in instruction files is a warning in the output, never a
// failure: an import chain deeper than 4 levels stops there (as in Claude
// Code), and a front matter block that is not YAML is injected as it is.
#[test]
fn deep_import_chain_and_invalid_front_matter_are_warnings() {
    let r = Repo::bare();
    r.git(&["init", "-q", "-b", "main"]);
    r.env.write("CLAUDE.md", "Top @d1.md\n");
    for i in 1..=7 {
        r.env
            .write(&format!("d{i}.md"), format!("Level {i} @d{}.md\n", i + 1));
    }
    r.env.write(
        ".claude/rules/bad.md",
        "---\npaths: [unclosed\n  bad: : yaml\n---\nRule body.\n",
    );
    let out = r.run("ctx-build", &["--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let j = &out.json()[0];
    let deep = format!(
        "import d5.md from {}: imports nest deeper than 4 levels; not loaded",
        r.p("d4.md").display()
    );
    let yaml = format!(
        "{}: invalid front matter, injected as is: Deserialize error: illegal placement of ':' indicator at byte 22 line 2 column 6",
        r.p(".claude/rules/bad.md").display()
    );
    assert_eq!(j["warnings"], serde_json::json!([deep, yaml]));
    let files: Vec<(String, String)> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let p = f["path"].as_str().unwrap();
            (
                p.rsplit('/').next().unwrap().to_string(),
                f["source"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let names: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("CLAUDE.md", "inject"),
            ("d1.md", "import"),
            ("d2.md", "import"),
            ("d3.md", "import"),
            ("d4.md", "import"),
            ("bad.md", "inject")
        ]
    );
    assert_eq!(
        out.stderr,
        format!("ctx-build: {deep}\nctx-build: {yaml}\n")
    );
}

// ---------------------------------------------------------------------------
// Against what the real Claude Code sent.
//
// tests/fixtures/context/tree.json is the fixture repository of issue 16;
// scripts/e2e/capture_context.py ran Claude Code 2.1.332 on it from the top
// and from packages/api, let the model Read packages/api/src/server.ts, and
// kept the first request and the messages the Read added, redacted
// ({{ROOT}}, {{DATE}}, {{COMMIT}}). These tests build the same tree and hold
// ctx-build to those bytes.

const CAPTURE_VERSION: &str = "2.1.332";
const CAPTURE_DATE: &str = "2023-11-14";

fn fixture_json(name: &str) -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/context")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// The capture fixture, built as scripts/e2e/context_fixture.py builds it:
/// the work tree in `work`, HOME in `home`, the user directory in
/// `home/.claude`, the managed directory in `managed`.
struct Capture {
    env: Env,
    spec: serde_json::Value,
}

impl Capture {
    fn new() -> Capture {
        let spec = fixture_json("tree.json");
        let c = Capture {
            env: Env::new(),
            spec,
        };
        let s = &c.spec;
        let write_all = |base: &Path, files: &serde_json::Value| {
            for (rel, text) in files.as_object().unwrap() {
                let p = base.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, text.as_str().unwrap()).unwrap();
            }
        };
        let root = c.env.root();
        c.git(&["init", "-q", "-b", "main"]);
        let name = s["commit"]["user_name"].as_str().unwrap();
        c.git(&["config", "user.name", name]);
        write_all(&c.env.work, &s["committed"]);
        c.git(&["add", "."]);
        c.git(&[
            "commit",
            "-q",
            "-m",
            s["commit"]["message"].as_str().unwrap(),
        ]);
        let append = s["dirty_append"].as_str().unwrap();
        for rel in s["dirty"].as_array().unwrap() {
            let p = c.env.path(rel.as_str().unwrap());
            let mut text = std::fs::read_to_string(&p).unwrap();
            text.push_str(append);
            std::fs::write(&p, text).unwrap();
        }
        write_all(&c.env.work, &s["untracked"]);
        write_all(&root.join("home/.claude"), &s["user"]);
        write_all(&root.join("home"), &s["home"]);
        write_all(&root.join("managed"), &s["managed"]);
        c
    }

    fn cmd(&self, program: impl AsRef<std::ffi::OsStr>, cwd: &str) -> Command {
        let mut c = self.env.cmd(program);
        let root = self.env.root();
        let date = &self.spec["commit"]["date"];
        c.current_dir(self.env.path(cwd))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CEILING_DIRECTORIES", &root)
            .env("GIT_AUTHOR_NAME", "Ada Lovelace")
            .env("GIT_AUTHOR_EMAIL", "ada@example.com")
            .env("GIT_COMMITTER_NAME", "Ada Lovelace")
            .env("GIT_COMMITTER_EMAIL", "ada@example.com")
            .env("GIT_AUTHOR_DATE", date.as_str().unwrap())
            .env("GIT_COMMITTER_DATE", date.as_str().unwrap())
            .env("CLAUDE_CONFIG_DIR", root.join("home/.claude"))
            .env("FSVIEW_MANAGED_DIR", root.join("managed"))
            .env("SOURCE_DATE_EPOCH", "1700000000");
        c
    }

    fn git(&self, args: &[&str]) -> String {
        let mut c = self.cmd("git", ".");
        c.args(args);
        let r = harness::output(c, None);
        assert_eq!(r.code, 0, "git {args:?}: {}", r.stderr);
        r.stdout.trim_end().to_string()
    }

    /// `ctx-build --json ARGS` run in `cwd`, and its stderr.
    fn build(&self, cwd: &str, args: &[&str]) -> (serde_json::Value, String) {
        let mut c = self.cmd(harness::bin("ctx-build"), cwd);
        c.arg("--json").args(args);
        let r = harness::output(c, None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        (r.json().remove(0), r.stderr)
    }

    /// The file the scripted model read, absolute.
    fn read(&self) -> String {
        self.env
            .path(self.spec["read"].as_str().unwrap())
            .display()
            .to_string()
    }

    /// A captured text with this tree's paths, date and commit in place of
    /// the redactions; Claude Code's /etc/claude-code is FSVIEW_MANAGED_DIR.
    fn localize(&self, text: &str) -> String {
        let root = self.env.root().display().to_string();
        text.replace("{{ROOT}}", &root)
            .replace("{{DATE}}", CAPTURE_DATE)
            .replace("{{COMMIT}}", &self.git(&["rev-parse", "--short", "HEAD"]))
            .replace("/etc/claude-code/", &format!("{root}/managed/"))
    }
}

/// The text blocks of a captured message.
fn texts(message: &serde_json::Value) -> Vec<String> {
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap().to_string())
        .collect()
}

/// What Claude Code sent, piece by piece, as ctx-build names the parts:
/// (part, text), in order.
fn claude_code_pieces(c: &Capture, run: &str) -> Vec<(String, String)> {
    let first = fixture_json(&format!(
        "claude-code-{CAPTURE_VERSION}-{run}-first-request.json"
    ));
    let messages = first["messages"].as_array().unwrap();
    let mut pieces = Vec::new();
    for t in texts(&messages[0]) {
        if t.starts_with("<system-reminder>\nCodebase and user instructions") {
            pieces.push(("instructions".to_string(), c.localize(&t)));
        } else if t.contains("\n# gitStatus\n") {
            pieces.push(("git".to_string(), c.localize(&t)));
        }
    }
    // The environment message ends with the date sentence.
    let env = messages
        .iter()
        .find(|m| m["role"] == "system")
        .expect("an environment message");
    let env_text = texts(env).concat();
    let last_line = env_text.rsplit('\n').next().unwrap();
    pieces.push(("date".to_string(), c.localize(last_line)));
    let after = fixture_json(&format!(
        "claude-code-{CAPTURE_VERSION}-{run}-after-read.json"
    ));
    let last = after["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let nested = texts(&last);
    let n = nested.len();
    for (i, t) in nested.into_iter().enumerate() {
        // Claude Code drops the line break after the last block of a
        // message; ctx-build gives every block as it is when another follows.
        let t = if i + 1 == n { t + "\n" } else { t };
        pieces.push(("nested".to_string(), c.localize(&t)));
    }
    pieces
}

fn ctx_build_pieces(j: &serde_json::Value) -> Vec<(String, String)> {
    j["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["part"].as_str().unwrap().to_string(),
                b["text"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn claude_code_2_1_332_first_request_and_nested_files_from_the_top() {
    let c = Capture::new();
    let (j, _) = c.build(".", &["--for", &c.read()]);
    assert_eq!(j["layout"], CAPTURE_VERSION);
    let ours = ctx_build_pieces(&j);
    let theirs = claude_code_pieces(&c, "root");
    let parts: Vec<&str> = theirs.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        parts,
        ["instructions", "git", "date", "nested", "nested", "nested"]
    );
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t);
    }
    assert_eq!(ours.len(), theirs.len());
}

#[test]
fn claude_code_2_1_332_first_request_and_nested_files_from_packages_api() {
    let c = Capture::new();
    let (j, _) = c.build("packages/api", &["--for", &c.read()]);
    let ours = ctx_build_pieces(&j);
    let theirs = claude_code_pieces(&c, "api");
    let parts: Vec<&str> = theirs.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(parts, ["instructions", "git", "date", "nested"]);
    for (o, t) in ours.iter().zip(&theirs) {
        assert_eq!(o, t);
    }
    assert_eq!(ours.len(), theirs.len());
}

/// The `Contents of ...` blocks of the instructions block, by path relative
/// to the fixture's top directory.
fn instruction_paths(c: &Capture, j: &serde_json::Value) -> Vec<String> {
    let root = format!("{}/", c.env.root().display());
    j["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["part"] == "user")
        .map(|f| {
            f["path"]
                .as_str()
                .unwrap()
                .strip_prefix(&root)
                .unwrap()
                .to_string()
        })
        .collect()
}

// Issue 16, fix 1: a removed block comment takes the blank line after it.
#[test]
fn fix_1_a_removed_comment_takes_the_blank_line_after_it() {
    let c = Capture::new();
    let (j, _) = c.build(".", &[]);
    let instructions = j["blocks"][0]["text"].as_str().unwrap();
    assert!(instructions.contains(&format!(
        "Contents of {}:\n\n# Fixture project\n\nUse pnpm, never npm.",
        c.env.path("CLAUDE.md").display().to_string()
            + " (project instructions, checked into the codebase)"
    )));
    // In a CRLF file the line endings become \n, as in Claude Code.
    assert!(instructions.ends_with(
        "docs/crlf.md (user's private project instructions, not checked in):\n\nCRLF line one.\n\nCRLF line two.\n</system-reminder>"
    ));
    let md = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == c.env.path("CLAUDE.md").display().to_string())
        .unwrap()
        .clone();
    assert_eq!(
        (&md["kind"], &md["bytes"], &md["injected_bytes"]),
        (
            &serde_json::json!("processed"),
            &serde_json::json!(303),
            &serde_json::json!(198)
        )
    );
}

// Issue 16, fix 2: imports stop at the directory the agent started in, not
// at the git work tree.
#[test]
fn fix_2_imports_stop_at_the_working_directory() {
    let c = Capture::new();
    let (j, stderr) = c.build("packages/api", &[]);
    assert_eq!(
        instruction_paths(&c, &j),
        [
            "managed/CLAUDE.md",
            "managed/.claude/rules/managed-rule.md",
            "home/.claude/CLAUDE.md",
            "home/user-notes.md",
            "work/CLAUDE.md",
            "work/.claude/CLAUDE.md",
            "work/.claude/rules/always.md",
            "work/CLAUDE.local.md",
            "work/packages/api/CLAUDE.md",
            "work/packages/api/notes.md",
        ]
    );
    let root = c.env.root().display().to_string();
    let api = format!("{root}/work/packages/api");
    let outside = |what: &str, from: &str, target: &str| {
        format!(
            "ctx-build: import {what} from {root}/{from}: {root}/{target} is outside the working directory {api}; not loaded (external imports are not allowed)\n"
        )
    };
    assert_eq!(
        stderr,
        [
            outside("policy.md", "managed/CLAUDE.md", "managed/policy.md"),
            outside("docs/style.md", "work/CLAUDE.md", "work/docs/style.md"),
            outside(
                "docs/diagram.svg",
                "work/CLAUDE.md",
                "work/docs/diagram.svg"
            ),
            outside(
                "../docs/chain/1.md",
                "work/.claude/CLAUDE.md",
                "work/docs/chain/1.md"
            ),
            outside("docs/NOTES", "work/CLAUDE.local.md", "work/docs/NOTES"),
            outside("docs/crlf.md", "work/CLAUDE.local.md", "work/docs/crlf.md"),
        ]
        .concat()
    );
    // With the user's approval, they are followed.
    let (j, _) = c.build("packages/api", &["--no-cache", "--allow-external-imports"]);
    assert!(instruction_paths(&c, &j).contains(&"work/docs/style.md".to_string()));
}

// Issue 16, fix 3: only files Claude Code treats as text are imported.
#[test]
fn fix_3_only_text_files_are_imported() {
    let c = Capture::new();
    let (j, stderr) = c.build(".", &[]);
    let paths = instruction_paths(&c, &j);
    assert!(!paths.contains(&"work/docs/diagram.svg".to_string()));
    // No extension at all is text.
    assert!(paths.contains(&"work/docs/NOTES".to_string()));
    assert!(!serde_json::to_string(&j)
        .unwrap()
        .contains("MUST NOT APPEAR"));
    let root = c.env.root().display().to_string();
    assert!(stderr.contains(&format!(
        "ctx-build: import docs/diagram.svg from {root}/work/CLAUDE.md: .svg is not a text file extension Claude Code imports; skipped\n"
    )), "{stderr}");
}

// Issue 16, fixes 4 and 5: a nested file is `Contents of PATH:` without a
// description, in a reminder of its own, its text untrimmed.
#[test]
fn fix_4_and_5_nested_files_one_reminder_each_without_description() {
    let c = Capture::new();
    let (j, _) = c.build(".", &["--for", &c.read()]);
    let nested: Vec<(String, String)> = j["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["part"] == "nested")
        .map(|b| {
            assert_eq!(b["where"], "attachment");
            (
                b["path"].as_str().unwrap().to_string(),
                b["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let api = c.env.path("packages/api/CLAUDE.md");
    let notes = c.env.path("packages/api/notes.md");
    let ts = c.env.path(".claude/rules/ts.md");
    assert_eq!(
        nested,
        vec![
            (
                api.display().to_string(),
                nested_block(&api, "# API package\n\n Kept after the comment.\n\nHandlers live in src/. See @notes.md\n")
            ),
            (
                notes.display().to_string(),
                nested_block(&notes, "API notes: keep handlers small.\n")
            ),
            (
                ts.display().to_string(),
                nested_block(&ts, "TypeScript: strict mode, no any.\n")
            ),
        ]
    );
    assert_eq!(
        j["nested"],
        nested.iter().map(|(_, t)| t.as_str()).collect::<String>()
    );
}

// "Today" is the user's date, not UTC's: at 20:00 on 2 December in Los
// Angeles (04:00 UTC on the 3rd) it is the 2nd. SOURCE_DATE_EPOCH fixes
// the moment; the zone (TZ: an IANA name or a POSIX rule) still applies.
#[test]
fn today_is_the_date_in_the_local_time_zone() {
    let r = Repo::new();
    let date = |tz: &str| {
        let mut c = r.cmd(harness::bin("ctx-build"));
        c.env("SOURCE_DATE_EPOCH", "1796270400") // 2026-12-03T04:00:00Z
            .env("TZ", tz)
            .args(["--no-cache", "--json"]);
        let out = harness::output(c, None);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let user = out.json()[0]["user"].as_str().unwrap().to_string();
        user.lines()
            .find_map(|l| l.strip_prefix("Today's date is "))
            .unwrap()
            .to_string()
    };
    assert_eq!(date("UTC"), "2026-12-03.");
    assert_eq!(date("America/Los_Angeles"), "2026-12-02.");
    assert_eq!(date("PST8PDT,M3.2.0,M11.1.0"), "2026-12-02.");
    assert_eq!(date("Asia/Tokyo"), "2026-12-03.");
    // A moment jiff cannot place is refused, like a malformed one.
    let mut c = r.cmd(harness::bin("ctx-build"));
    c.env("SOURCE_DATE_EPOCH", "99999999999999");
    harness::output(c, None).expect(2, "").stderr_is(
        "ctx-build: SOURCE_DATE_EPOCH=\"99999999999999\" is out of range (years -9999 to 9999); fix or unset it\n",
    );
}

// --all-sessions names each session as every message does: quoted.
#[test]
fn all_sessions_names_each_session_quoted() {
    let r = Repo::new();
    r.run("ctx-build", &["--sid", "a b"])
        .expect(0, &fixture_text(&r));
    r.run("ctx-build", &["--sid", "c"])
        .expect(0, &fixture_text(&r));
    r.run("ctx-invalidate", &["--all-sessions", "--system"])
        .expect(
        0,
        "session \"a b\": cleared the system context\nsession \"c\": cleared the system context\n",
    );
}

/// Run `args` of `name` in `repo` with stderr on a new pseudo-terminal;
/// what the terminal got, and the exit code.
fn on_a_terminal(repo: &Repo, name: &str, args: &[&str]) -> (String, i32) {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    // SAFETY: posix_openpt and friends on a descriptor we own; ptsname's
    // string is copied before any other call.
    let (master, slave) = unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let name = std::ffi::CStr::from_ptr(libc::ptsname(m)).to_owned();
        let s = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(
            s >= 0,
            "open the terminal: {}",
            std::io::Error::last_os_error()
        );
        (std::fs::File::from_raw_fd(m), std::fs::File::from_raw_fd(s))
    };
    let mut c = repo.cmd(harness::bin(name));
    c.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(slave);
    let code = harness::spawn(&mut c).wait().unwrap().code().unwrap();
    drop(c);
    // Everything written is in the terminal's buffer by now; read it until
    // it is empty (EIO once no one has the other side open).
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let mut master = master;
    loop {
        match master.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    (String::from_utf8_lossy(&got).replace("\r\n", "\n"), code)
}

// Issue 43: the text of a build and of a reuse are the same bytes, so on
// a terminal ctx-build says on stderr which it was; off one (scripts,
// hooks) its stderr stays as it was.
#[test]
fn on_a_terminal_ctx_build_says_whether_it_built_or_reused() {
    let repo = Repo::new();
    std::fs::write(repo.p("CLAUDE.md"), "Be brief.\n").unwrap();
    assert_eq!(
        on_a_terminal(&repo, "ctx-build", &[]),
        (
            "ctx-build: built the context (cache miss): the next calls return these same bytes until ctx-invalidate clears it\n".to_string(),
            0
        )
    );
    assert_eq!(
        on_a_terminal(&repo, "ctx-build", &[]),
        (
            "ctx-build: reused the context built before (cache hit): the same bytes until ctx-invalidate clears it\n".to_string(),
            0
        )
    );
    assert_eq!(
        on_a_terminal(&repo, "ctx-build", &["--no-cache"]),
        (
            "ctx-build: previewed the context from disk (--no-cache): nothing stored\n".to_string(),
            0
        )
    );
    assert_eq!(
        on_a_terminal(&repo, "ctx-build", &["--json"]),
        (String::new(), 0)
    );
    assert_eq!(
        on_a_terminal(&repo, "ctx-build", &["-q"]),
        (String::new(), 0)
    );
    let r = repo.run("ctx-build", &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
}

// What ctx-build stores as shown holds once it is out. To a full disk, or
// to a reader gone before the end, its views and the files it gave are
// taken back, and the next call gives them again, recorded then.
#[test]
fn a_context_that_never_reached_its_reader_is_not_recorded_as_shown() {
    let r = Repo::new();
    let ctx_build = harness::bin("ctx-build");
    let check = |path: &str| r.run("fsview-check-edit", &["--write", path]);
    let full = r.sh(&format!("'{}' > /dev/full", ctx_build.display()));
    assert_eq!(
        (full.code, full.stderr.as_str()),
        (
            2,
            "ctx-build: cannot write to standard output: no space left on device\n"
        )
    );
    check("CLAUDE.md").expect(1, &format!("CLAUDE.md: not_read: {NOT_READ}\n"));
    assert_eq!(r.build_json(&[])["cache"], "miss");
    check("CLAUDE.md").expect(1, &format!("CLAUDE.md: processed_view: {PROCESSED}\n"));
    // A nested file longer than a pipe holds, to a reader that stops
    // after 10 bytes: the write fails with EPIPE, the run ends quietly.
    let long: String = (1..=5000).map(|i| format!("API rule {i}\n")).collect();
    r.env.write("packages/api/CLAUDE.md", &long);
    let cut = r.sh(&format!(
        "'{}' --for packages/api/src/server.ts | head -c 10 >/dev/null",
        ctx_build.display()
    ));
    assert_eq!(cut.code, 0, "{}", cut.stderr);
    check("packages/api/CLAUDE.md").expect(
        1,
        &format!("packages/api/CLAUDE.md: not_read: {NOT_READ}\n"),
    );
    let j = r.build_json(&["--for", "packages/api/src/server.ts"]);
    let given: Vec<&str> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["part"] == "nested")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let api = r.p("packages/api/CLAUDE.md").display().to_string();
    assert!(given.contains(&api.as_str()), "{given:?}");
    check("packages/api/CLAUDE.md").expect(0, "packages/api/CLAUDE.md: ok\n");
}

// A file whose text trims to nothing (white space, a byte-order mark) is
// not shown, so it has no view; one that trims differently from its bytes
// is shown processed, a byte-order mark being trimmed as JavaScript does.
#[test]
fn what_trims_away_is_not_recorded_as_shown() {
    let r = Repo::new();
    r.env.write(".claude/CLAUDE.md", "\u{feff}\n");
    r.env
        .write("CLAUDE.local.md", "\u{feff}\n\nMy local notes.\n");
    let j = r.build_json(&[]);
    let kinds: Vec<(String, String)> = j["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["kind"].as_str().unwrap().to_string(),
            )
        })
        .filter(|(p, _)| p.ends_with("CLAUDE.local.md") || p.ends_with(".claude/CLAUDE.md"))
        .collect();
    assert_eq!(
        kinds,
        vec![(
            r.p("CLAUDE.local.md").display().to_string(),
            "processed".to_string()
        )]
    );
    r.run("fsview-check-edit", &["--write", ".claude/CLAUDE.md", "CLAUDE.local.md"]).expect(
        1,
        &format!(".claude/CLAUDE.md: not_read: {NOT_READ}\nCLAUDE.local.md: processed_view: {PROCESSED}\n"),
    );
}

// A mistyped --sid has nothing cached: ctx-invalidate says so, naming the
// nearest ids, clears nothing and makes no session of it.
#[test]
fn invalidating_a_session_the_file_does_not_hold_clears_and_makes_nothing() {
    let r = Repo::new();
    assert_eq!(r.run("ctx-build", &["--sid", "conv-1234"]).code, 0);
    r.run("ctx-invalidate", &["--sid", "conv-1243", "--reason", "branch switched"])
        .expect(0, "")
        .stderr_is(&format!(
            "ctx-invalidate: no session \"conv-1243\" in {}; nearest: \"conv-1234\" (see `fsview-session list`); nothing was cached for it, so nothing was cleared\n",
            r.env.session.display()
        ));
    assert_eq!(harness::sids(&r.env), ["conv-1234"]);
    let j = r.build_json(&["--sid", "conv-1234"]);
    assert_eq!(j["cache"], "hit");
}

// A `git status` that fails (a damaged index) is not a clean tree.
#[test]
fn a_failed_git_status_is_shown_unknown_not_clean() {
    let r = Repo::new();
    std::fs::write(r.p(".git/index"), "garbage\n").unwrap();
    let out = r.run("ctx-build", &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("Status:\n(unknown: `git status` failed)\n"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("(clean)"), "{}", out.stdout);
}

// FSVIEW_INSTRUCTION_NAMES set but empty, or with empty items, names
// nothing (as an empty variable does elsewhere); a --memory file that is
// not there is said, since it was named on purpose.
#[test]
fn empty_instruction_names_name_nothing_and_a_missing_memory_file_is_said() {
    let r = Repo::new();
    let plain = r.run("ctx-build", &["--no-cache"]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    for names in ["", "AGENTS.md,,", ","] {
        let mut c = r.cmd(harness::bin("ctx-build"));
        c.arg("--no-cache").env("FSVIEW_INSTRUCTION_NAMES", names);
        let out = harness::output(c, None);
        assert_eq!(
            (out.code, &out.stdout),
            (0, &plain.stdout),
            "{names:?}: {}",
            out.stderr
        );
    }
    let out = r.run("ctx-build", &["--no-cache", "--memory", "MEMROY.md"]);
    assert_eq!(
        (out.code, out.stderr.as_str()),
        (
            0,
            format!(
                "ctx-build: {}\nctx-build: {}: file not found; --memory skipped\n",
                outside_warning(&r),
                r.p("MEMROY.md").display()
            )
            .as_str()
        )
    );
    let out = r.run("ctx-build", &["--no-cache", "--memory", "docs"]);
    assert_eq!(
        out.stderr,
        format!(
            "ctx-build: {}\nctx-build: {}: is a directory; --memory skipped\n",
            outside_warning(&r),
            r.p("docs").display()
        )
    );
}

// The user part is sent at the front of every request: once it is cleared
// and built again, the old text is gone from the conversation, and so are
// the views of the files it held. What the rebuild injects is recorded
// again; a file it no longer injects needs a read.
#[test]
fn a_rebuilt_user_part_holds_only_what_it_injects_now() {
    let r = Repo::bare();
    r.git(&["init", "-q", "-b", "main"]);
    r.env.write("CLAUDE.md", "Root.\n@notes.md\n");
    r.env.write("notes.md", "old notes\n");
    r.env.write("mine.md", "read, not injected\n");
    assert_eq!(r.run("fsview-read", &["-q", "mine.md"]).code, 0);
    assert_eq!(r.run("ctx-build", &[]).code, 0);
    let check = || {
        r.run(
            "fsview-check-edit",
            &["--write", "CLAUDE.md", "notes.md", "mine.md"],
        )
    };
    check().expect(0, "CLAUDE.md: ok\nnotes.md: ok\nmine.md: ok\n");
    r.env.write("CLAUDE.md", "Root.\n");
    r.run(
        "ctx-invalidate",
        &["--user", "--reason", "CLAUDE.md edited"],
    )
    .expect(0, "cleared the user context\n");
    // Cleared: nothing of the old part is held.
    check().expect(
        1,
        &format!("CLAUDE.md: not_read: {NOT_READ}\nnotes.md: not_read: {NOT_READ}\nmine.md: ok\n"),
    );
    let built = r.run("ctx-build", &[]);
    assert!(!built.stdout.contains("old notes"), "{}", built.stdout);
    check().expect(
        1,
        &format!("CLAUDE.md: ok\nnotes.md: not_read: {NOT_READ}\nmine.md: ok\n"),
    );
}

// A file the agent read, then injected too, is still read: neither a
// cleared user part nor an undone build takes the read's view away.
#[test]
fn a_read_survives_the_context_that_injected_the_same_file() {
    let r = Repo::bare();
    r.git(&["init", "-q", "-b", "main"]);
    r.env.write("CLAUDE.md", "Root.\n@notes.md\n");
    r.env.write("notes.md", "notes\n");
    r.env.write("sub/CLAUDE.md", "Nested rules.\n");
    r.env.write("sub/x.rs", "x\n");
    assert_eq!(
        r.run("fsview-read", &["-q", "notes.md", "sub/CLAUDE.md"])
            .code,
        0
    );
    assert_eq!(r.run("ctx-build", &[]).code, 0);
    r.run("ctx-invalidate", &["--user"])
        .expect(0, "cleared the user context\n");
    let full = r.sh(&format!(
        "'{}' --for sub/x.rs > /dev/full",
        harness::bin("ctx-build").display()
    ));
    assert_eq!(full.code, 2, "{}", full.stderr);
    r.run(
        "fsview-check-edit",
        &["--write", "notes.md", "sub/CLAUDE.md"],
    )
    .expect(0, "notes.md: ok\nsub/CLAUDE.md: ok\n");
}
