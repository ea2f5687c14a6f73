//! `fsview-hook install` and `--uninstall` give back exactly what was
//! there: files they made go (with the folders made for them), files they
//! changed get their bytes back, and the user's formatting and comments
//! stay meanwhile. Every agent, in a real git repository.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

use crate::harness::{self, Env, Run};

const AGENTS: [&str; 10] = [
    "claude", "gemini", "codex", "qwen", "opencode", "copilot", "kilo", "pi", "droid", "cline",
];

/// The settings file each agent's project install writes, from the top.
fn settings(agent: &str) -> &'static str {
    match agent {
        "claude" => ".claude/settings.local.json",
        "gemini" => ".gemini/settings.json",
        "codex" => ".codex/hooks.json",
        "qwen" => ".qwen/settings.json",
        "opencode" => ".opencode/plugins/fsview.js",
        "copilot" => ".github/hooks/fsview.json",
        "kilo" => ".kilo/plugins/fsview.js",
        "pi" => ".pi/extensions/fsview.js",
        "droid" => ".factory/settings.json",
        "cline" => ".clinerules/hooks/PreToolUse.bash",
        _ => unreachable!(),
    }
}

fn git_repo() -> Env {
    let env = Env::new();
    let r = env.sh("git init -q && git config user.name T && git config user.email t@example.com");
    assert_eq!(r.code, 0, "{}", r.stderr);
    env
}

fn install(env: &Env, args: &[&str]) -> Run {
    let mut all = vec!["install"];
    all.extend_from_slice(args);
    env.run("fsview-hook", &all)
}

/// Every file and folder under the work tree (`.git` included, its index
/// and logs left out), with each file's bytes and mode.
fn snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>, u32)> {
    let mut out: Vec<_> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            !(rel.starts_with(".git/objects")
                || rel.starts_with(".git/logs")
                || rel == ".git/index")
        })
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            let bytes = meta.is_file().then(|| std::fs::read(e.path()).unwrap());
            (rel, bytes, meta.permissions().mode())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_agent_installs_and_uninstalls_to_exactly_what_was_there() {
    let env = git_repo();
    env.write("README.md", "# project\n");
    let work = env.path("");
    let before = snapshot(&work);
    for a in AGENTS {
        install(&env, &[a, "--quiet"]).expect(0, "");
        assert!(env.path(settings(a)).exists(), "{a}");
    }
    // The record of what was changed is the user's only, as the session
    // file is: it holds copies of settings files.
    let mode = |p: &str| std::fs::metadata(env.path(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        (mode(".git/fsview"), mode(".git/fsview/installed.json")),
        (0o700, 0o600)
    );
    // The local Claude file is the user's own: git does not see it.
    let status = env.sh("git status --porcelain");
    assert!(!status.stdout.contains(".claude"), "{}", status.stdout);
    assert_eq!(
        env.sh("git check-ignore .claude/settings.local.json")
            .stdout,
        ".claude/settings.local.json\n"
    );
    for a in AGENTS {
        install(&env, &[a, "--uninstall", "--quiet"]).expect(0, "");
    }
    assert_eq!(snapshot(&work), before);
    assert_eq!(
        env.sh("git status --porcelain --ignored").stdout,
        "?? README.md\n"
    );
}

#[test]
fn uninstall_restores_a_hand_formatted_file_byte_for_byte() {
    let env = git_repo();
    // Comments (gemini-cli and Qwen Code allow them), tabs, CRLF, a key
    // order of the user's own, a trailing comma, no final newline.
    let texts = [
        (
            "gemini",
            "{\n  // my model, chosen by hand\n  \"model\": { \"name\": \"gemini-3-pro\" },\n  /* hooks of mine */\n  \"hooks\": {\n    \"BeforeTool\": [\n      { \"matcher\": \"run_shell_command\", \"hooks\": [ { \"type\": \"command\", \"command\": \"./guard.sh\" } ] }\n    ]\n  }\n}\n",
        ),
        ("qwen", "{\r\n\t\"model\": {\"name\": \"qwen3-coder\"},\r\n\t\"ui\": {\"theme\": \"dark\"},\r\n}"),
        ("codex", "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]}}"),
        ("claude", "{\n    \"permissions\": {\n        \"allow\": [\"Bash(npm test)\"]\n    }\n}\n"),
    ];
    for (agent, text) in texts {
        let file = env.write(settings(agent), text);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        install(&env, &[agent, "--quiet"]).expect(0, "");
        let installed = std::fs::read_to_string(&file).unwrap();
        // Added in place: the user's lines are all still there, in order
        // (a one-line file is made several to take the new entries).
        let mut rest = installed.as_str();
        for line in text.lines().filter(|_| text.lines().count() > 1) {
            let l = line.trim_end_matches(['\r', ',']);
            match rest.find(l) {
                Some(i) => rest = &rest[i + l.len()..],
                None => panic!("{agent}: {l:?} lost from:\n{installed}"),
            }
        }
        assert!(installed.contains("fsview-hook"), "{agent}");
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o640,
            "{agent}: mode kept"
        );
        let r = install(&env, &[agent, "--uninstall"]);
        assert_eq!(
            (r.code, r.stdout.lines().next().unwrap_or("")),
            (
                0,
                format!(
                    "{}: given back as it was before fsview-hook changed it",
                    file.display()
                )
                .as_str()
            )
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "{agent}");
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o640,
            "{agent}: mode kept"
        );
    }
    // Nothing of fsview-hook's is left: no record, no folder.
    assert!(!env.path(".git/fsview").exists());
}

/// gemini-cli reads `//` comments in its settings: installing into such a
/// file works and keeps them (it was refused, "fix it by hand").
#[test]
fn gemini_settings_with_comments_are_edited_in_place() {
    let env = git_repo();
    let text = "// project settings\n{\n  \"model\": {\"name\": \"gemini-3-pro\"} // pinned\n}\n";
    let file = env.write(".gemini/settings.json", text);
    install(&env, &["gemini", "--quiet"]).expect(0, "");
    let now = std::fs::read_to_string(&file).unwrap();
    assert!(
        now.starts_with("// project settings\n{\n  \"model\": {\"name\": \"gemini-3-pro\"}, // pinned\n  \"hooks\": {\n"),
        "{now}"
    );
    // What gemini-cli reads once the comments are stripped is JSON.
    let stripped: String = now
        .lines()
        .map(|l| l.split(" //").next().unwrap())
        .filter(|l| !l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let v: Value = serde_json::from_str(&stripped).unwrap();
    assert_eq!(v["model"]["name"], "gemini-3-pro");
    assert_eq!(v["hooks"]["BeforeTool"][0]["hooks"][0]["name"], "fsview");
}

#[test]
fn a_file_changed_since_loses_only_fsview_hooks_entries() {
    let env = git_repo();
    // Made by the install, then the user added a key: the file stays,
    // with their key.
    install(&env, &["codex", "--quiet"]).expect(0, "");
    let file = env.path(".codex/hooks.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("{\n", "{\n  \"mine\": true,\n", 1)).unwrap();
    install(&env, &["codex", "--uninstall"]).expect(
        0,
        &format!(
            "{}: fsview-hook's entries removed; everything else kept\n",
            file.display()
        ),
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\n  \"mine\": true\n}\n"
    );
    // The user's own file, changed since: their change and their file stay.
    let file = env.write(".gemini/settings.json", "{\n  \"a\": 1\n}\n");
    install(&env, &["gemini", "--quiet"]).expect(0, "");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replacen("\"a\": 1", "\"a\": 2", 1)).unwrap();
    install(&env, &["gemini", "--uninstall", "--quiet"]).expect(0, "");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\n  \"a\": 2\n}\n"
    );
    // Made by the install, then changed only in fsview-hook's part: gone.
    install(&env, &["qwen", "--quiet"]).expect(0, "");
    let file = env.path(".qwen/settings.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("read_file|", "")).unwrap();
    install(&env, &["qwen", "--uninstall", "--quiet"]).expect(0, "");
    assert!(!env.path(".qwen").exists());
}

/// Installed in another clone and checked in: no record here, so the file
/// is the only witness. What held only fsview-hook's entries goes, with
/// the folders it alone filled.
#[test]
fn without_a_record_a_file_of_fsview_hooks_entries_only_goes() {
    let env = git_repo();
    install(&env, &["claude", "--project", "--quiet"]).expect(0, "");
    install(&env, &["gemini", "--quiet"]).expect(0, "");
    let mine = std::fs::read_to_string(env.path(".gemini/settings.json"))
        .unwrap()
        .replacen("{\n", "{\n  \"theme\": \"dark\",\n", 1);
    std::fs::write(env.path(".gemini/settings.json"), &mine).unwrap();
    std::fs::remove_file(env.path(".git/fsview/installed.json")).unwrap();
    let settings = env.path(".claude/settings.json");
    install(&env, &["claude", "--project", "--uninstall"]).expect(
        0,
        &format!(
            "{}: removed (fsview-hook had made it)\n{}: removed (made for fsview-hook's files, now empty)\n",
            settings.display(),
            env.path(".claude").display()
        ),
    );
    install(&env, &["gemini", "--uninstall", "--quiet"]).expect(0, "");
    assert_eq!(
        std::fs::read_to_string(env.path(".gemini/settings.json")).unwrap(),
        "{\n  \"theme\": \"dark\"\n}\n"
    );
    assert_eq!(
        env.sh("git status --porcelain --ignored").stdout,
        "?? .gemini/\n"
    );
}

/// A folder that was there before stays, even empty; an empty settings
/// file that was there stays too.
#[test]
fn what_was_there_before_stays_even_when_empty() {
    let env = git_repo();
    std::fs::create_dir_all(env.path(".claude")).unwrap();
    env.write(".gemini/settings.json", "");
    install(&env, &["claude", "--quiet"]).expect(0, "");
    install(&env, &["gemini", "--quiet"]).expect(0, "");
    install(&env, &["claude", "--uninstall", "--quiet"]).expect(0, "");
    install(&env, &["gemini", "--uninstall", "--quiet"]).expect(0, "");
    assert!(env.path(".claude").is_dir());
    assert!(!env.path(".claude/settings.local.json").exists());
    assert_eq!(
        std::fs::read_to_string(env.path(".gemini/settings.json")).unwrap(),
        ""
    );
}

/// From a subdirectory every agent's install says where it wrote by its
/// absolute path, and uninstalling from there finds it again.
#[test]
fn from_a_subdirectory_paths_are_absolute() {
    let env = git_repo();
    std::fs::create_dir_all(env.path("sub/dir")).unwrap();
    let exe = std::fs::canonicalize(harness::bin("fsview-hook")).unwrap();
    for (agent, file) in [
        ("copilot", env.path(".github/hooks/fsview.json")),
        ("opencode", env.path(".opencode/plugins/fsview.js")),
        ("codex", env.path("sub/dir/.codex/hooks.json")),
    ] {
        let mut c = env.cmd(harness::bin("fsview-hook"));
        c.args(["install", agent]).current_dir(env.path("sub/dir"));
        let r = harness::output(c, None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.starts_with(&format!("{}: ", file.display())),
            "{agent}: {}",
            r.stdout
        );
        assert!(r
            .stdout
            .contains(&format!("now run {} {agent}", exe.display())));
        let mut c = env.cmd(harness::bin("fsview-hook"));
        c.args(["install", agent, "--uninstall", "--quiet"])
            .current_dir(env.path("sub/dir"));
        harness::output(c, None).expect(0, "");
        assert!(!file.exists(), "{agent}");
    }
    // Nothing left but the folders the test made (which git does not list).
    assert_eq!(env.sh("git status --porcelain --ignored").stdout, "");
    assert!(!env.path("sub/dir/.codex").exists());
}

#[test]
fn install_reports_each_file_in_json() {
    let env = git_repo();
    let r = install(&env, &["claude", "--json"]);
    let j = r.json();
    let file = env.path(".claude/settings.local.json");
    let exclude = env.path(".git/info/exclude");
    assert_eq!(
        j[0]["files"],
        serde_json::json!([
            {"path": file.display().to_string(), "done": "created"},
            {"path": exclude.display().to_string(), "done": "changed"}
        ])
    );
    let j = install(&env, &["claude", "--uninstall", "--json"]).json();
    assert_eq!(
        (&j[0]["files"], &j[0]["dirs_removed"], &j[0]["changed"]),
        (
            &serde_json::json!([
                {"path": file.display().to_string(), "done": "removed"},
                {"path": exclude.display().to_string(), "done": "restored"}
            ]),
            &serde_json::json!([env.path(".claude").display().to_string()]),
            &Value::Bool(true)
        )
    );
}

/// The switches a hook runs with are the ones install was given, in the
/// command every hook event runs.
#[test]
fn install_passes_the_switches_on_to_each_hook() {
    let env = git_repo();
    let j = install(
        &env,
        &[
            "claude",
            "--short-reads",
            "off",
            "--give-back",
            "off",
            "--json",
        ],
    )
    .json();
    let exe = crate::harness::bin("fsview-hook");
    assert_eq!(
        j[0]["command"],
        format!(
            "{} claude --short-reads off --give-back off",
            exe.canonicalize().unwrap().display()
        )
    );
    let settings = std::fs::read_to_string(env.path(".claude/settings.local.json")).unwrap();
    assert!(
        settings.contains("--give-back off"),
        "each hook runs with it: {settings}"
    );
}

/// Cline's hooks are executable files of fsview-hook's own beside the
/// user's (a `PreToolUse` of theirs stays); uninstalled, the project is as
/// it was, byte for byte.
#[test]
fn cline_hook_files_are_executable_and_leave_the_users_alone() {
    let env = git_repo();
    env.write(".clinerules/hooks/PreToolUse", "#!/bin/sh\necho '{}'\n");
    std::fs::set_permissions(
        env.path(".clinerules/hooks/PreToolUse"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let work = env.path("");
    let before = snapshot(&work);
    install(&env, &["cline", "--quiet"]).expect(0, "");
    let hook = harness::bin("fsview-hook");
    for e in ["PreToolUse", "PostToolUse"] {
        let p = env.path(&format!(".clinerules/hooks/{e}.bash"));
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        assert!(text.starts_with(&format!(
            "#!/bin/sh\n# Written by `fsview-hook install cline` (Cline {e} hook)"
        )));
        assert!(
            text.contains(&format!("  exec {} cline\n", hook.display())),
            "{text}"
        );
    }
    install(&env, &["cline", "--uninstall", "--quiet"]).expect(0, "");
    assert_eq!(snapshot(&work), before);
}

/// With fsview-hook gone, the PreToolUse hook file refuses a change
/// itself (fail closed) and lets a read through.
#[test]
fn cline_hook_file_refuses_a_change_when_fsview_hook_is_missing() {
    let env = git_repo();
    let copy = env.root().join("bin/fsview-hook");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(harness::bin("fsview-hook"), &copy).unwrap();
    let mut c = env.cmd(&copy);
    c.args(["install", "cline", "--quiet"]);
    harness::output(c, None).expect(0, "");
    std::fs::remove_file(&copy).unwrap();
    let script = env.path(".clinerules/hooks/PreToolUse.bash");
    let edit = r#"{"hookName":"tool_call","tool_call":{"id":"c1","name":"editor","input":{"path":"a.txt","old_text":"a","new_text":"b"}},"preToolUse":{"toolName":"editor","parameters":{}}}"#;
    let mut c = env.cmd(&script);
    let r = harness::output(c, Some(edit.as_bytes()));
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "overrideInput": {"fsview": "refused; see the hook_context after this result"},
            "context": format!("fsview-hook could not check this change, so it is denied: {} is missing (reinstall fsview, or run `fsview-hook install cline --uninstall`)", copy.display()),
        })
    );
    let read = r#"{"hookName":"tool_call","tool_call":{"id":"c2","name":"read_files","input":{}},"preToolUse":{"toolName":"read_files","parameters":{}}}"#;
    c = env.cmd(&script);
    harness::output(c, Some(read.as_bytes())).expect(0, "");
}
