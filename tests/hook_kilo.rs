//! fsview-hook kilo, fed what fsview's plugin sent from the real Kilo Code
//! CLI 7.7.9 (tests/fixtures/hooks/kilo-7.7.9, captured by
//! `scripts/e2e-kilo --save-fixtures` from the platform package
//! `@kilocode/cli-linux-x64`; 7.7.7 sent the same payloads). Kilo Code
//! CLI is opencode's fork: the same plugin, in .kilo/plugins/, and the
//! same objects, so it is answered as opencode is
//! (tests/hook_opencode.rs); these tests hold Kilo's own payloads to that.

use serde_json::{json, Value};

use crate::hook_fixtures::{big, partial, reminder, view, Fixtures, NOT_READ};

const A_TXT: &str = "one\ntwo\nthree\n";

fn kilo() -> Fixtures {
    Fixtures::new("kilo", "kilo-7.7.9")
}

fn deny(reason: &str) -> String {
    format!("{}\n", json!({ "deny": reason }))
}

#[test]
fn kilo_the_gate_reads_and_writes_as_opencode() {
    let k = kilo();
    k.env.write("a.txt", A_TXT);
    k.hook("before_edit", &[])
        .expect(0, &deny(NOT_READ))
        .stderr_is("");
    k.hook("before_write_create", &[]).expect(0, "");
    k.hook("after_read_range", &[]).expect(0, "");
    assert_eq!(k.view("a.txt"), view("range", "read", 2, 1, true));
    k.hook("before_edit", &[]).expect(0, "");
    k.hook("before_write_update", &[])
        .expect(0, &deny(&partial("line 2 of 3")));
    let k = kilo();
    k.env.write("a.txt", A_TXT);
    k.hook("after_read_whole", &[]).expect(0, "");
    assert_eq!(k.view("a.txt"), view("full", "read", 1, 3, true));
    k.env.write("a.txt", "one\nTWO\nthree\n");
    k.hook("after_edit", &[]).expect(0, "").stderr_is("");
    assert_eq!(k.view("a.txt"), view("full", "write", 1, 3, true));
    k.env.write("a.txt", "one\nTWO\nthree\nfour\n");
    k.hook("after_write_update", &[]).expect(0, "");
    assert_eq!(k.view("a.txt"), view("full", "write", 1, 4, true));
    k.env.write("a.txt", "changed\n");
    // Refused with the whole change: the retry goes through.
    k.hook("before_edit", &[]).expect(
        0,
        &deny(&crate::harness::modified_told(
            "a.txt: modified (content)\n--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,4 +1 @@\n-one\n-TWO\n-three\n-four\n+changed\n",
        )),
    );
    k.hook("before_edit", &[]).expect(0, "");
}

/// 2,000 lines of 2,500 shown; a line cut at 2,000 characters is not.
#[test]
fn kilo_a_capped_read_and_a_cut_line_as_opencode() {
    let k = kilo();
    k.env
        .write("big.txt", big(2500, |i| format!("line {i} of a big file")));
    k.hook("after_read_capped", &[]).expect(0, "");
    assert_eq!(k.view("big.txt"), view("start", "read", 1, 2000, true));
    k.env
        .write("long.txt", format!("{}\nshort\n", "x".repeat(3000)));
    k.hook("after_read_long_line", &[])
        .expect(0, "")
        .stderr_is("");
    assert_eq!(k.view("long.txt"), None);
}

#[test]
fn kilo_a_change_is_told_at_the_next_message() {
    let k = kilo();
    k.env.write("a.txt", A_TXT);
    k.hook("after_read_whole", &[]).expect(0, "");
    k.hook("chat_message", &[]).expect(0, "");
    k.env.write("a.txt", "one\n2\nthree\n");
    let diff = "--- a.txt (as viewed)\n+++ a.txt (now)\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";
    k.hook("chat_message", &[]).expect(
        0,
        &format!("{}\n", json!({ "context": reminder("a.txt", diff) })),
    );
    k.hook("chat_message", &[]).expect(0, "");
    k.raw(b"[]", &[]).expect(0, "").stderr_is(
        "fsview-hook: the payload is not a JSON object; fsview-hook kilo reads what fsview's kilo plugin sends on stdin\n",
    );
}

#[test]
fn kilo_install_writes_the_plugin_into_kilo_directories() {
    let env = crate::harness::Env::new();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(env.path(""))
        .status()
        .unwrap();
    assert!(git.success());
    std::fs::create_dir_all(env.path("sub")).unwrap();
    let exe = std::fs::canonicalize(crate::harness::bin("fsview-hook")).unwrap();
    let exe = exe.display().to_string();
    env.run("fsview-hook", &["install", "kilo"]).expect(
        0,
        &format!("{}: tool.execute.before, tool.execute.after, chat.message, session.compacted now run {exe} kilo\nKilo Code CLI loads the plugin when it next starts; it needs no other setting.\n", env.path(".kilo/plugins/fsview.js").display()),
    );
    let file = env.path(".kilo/plugins/fsview.js");
    let js = std::fs::read_to_string(&file).unwrap();
    assert!(js.starts_with("// fsview-hook: the kilo end of fsview's hooks"));
    assert!(js.contains(&format!("const HOOK = {};", Value::from(exe.as_str()))));
    assert!(js.contains(r#"const args = ["kilo", ...ARGS, ...(gate ? ["--gate"] : [])];"#));
    // opencode's plugin is not Kilo's: each is left to its own installer.
    env.write(".opencode/plugins/fsview.js", "// mine\n");
    env.run(
        "fsview-hook",
        &["install", "kilo", "--uninstall", "--quiet"],
    )
    .expect(0, "");
    assert!(
        !env.path(".kilo").exists(),
        "made for the plugin, removed with it"
    );
    assert!(env.path(".opencode/plugins/fsview.js").exists());
    env.run("fsview-hook", &["install", "kilo", "--local"])
        .expect(2, "")
        .stderr_is("fsview-hook: kilo has no local plugin directory; use --project (.kilo/plugins/) or --user (~/.config/kilo/plugins/)\n");
    let mut c = env.cmd(crate::harness::bin("fsview-hook"));
    c.args(["install", "kilo", "--user", "--quiet"])
        .env("XDG_CONFIG_HOME", env.root().join("xdg"));
    crate::harness::output(c, None).expect(0, "");
    assert!(env.root().join("xdg/kilo/plugins/fsview.js").exists());
}
