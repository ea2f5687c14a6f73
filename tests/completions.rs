//! The shipped bash completions, sourced into a real bash: each command of a
//! tool with commands completes its own options (`fsview-session events
//! --<TAB>`), which clap_complete's script got wrong for a hyphenated
//! binary name until `cargo xtask man` fixed it. `--sid <TAB>` offers the
//! ids of the sessions in the session file (`fsview-session list --ids`),
//! where clap_complete's script offered file names. CI checks that
//! completions/ is what xtask writes, so this tests what users install.

use std::path::Path;
use std::process::Command;

use crate::harness::{bin_dir, output, Env};

/// What bash offers for `words` (the last one being completed).
fn complete(tool: &str, words: &[&str]) -> Vec<String> {
    let mut c = Command::new("bash");
    c.env_clear().env("PATH", "/usr/bin:/bin");
    complete_with(c, tool, words)
}

/// What bash offers for `words`, run as `c` (its PATH, its environment
/// and its working directory) says.
fn complete_with(mut c: Command, tool: &str, words: &[&str]) -> Vec<String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("completions")
        .join(format!("{tool}.bash"));
    let script = r#"
source "$1"
shift
spec=$(complete -p "$1") || exit 3
fn=${spec#*-F }
fn=${fn%% *}
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
prev=""
[ $# -ge 2 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "$prev"
printf '%s\n' "${COMPREPLY[@]}"
"#;
    c.arg("--norc")
        .arg("-c")
        .arg(script)
        .arg("bash")
        .arg(&file)
        .args(words);
    let r = output(c, None);
    assert_eq!(r.code, 0, "bash: {}", r.stderr);
    let mut got: Vec<String> = r
        .stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    got.sort();
    got
}

#[test]
fn bash_completes_the_options_of_each_command() {
    let mut checked = 0;
    for mut cmd in fsview::commands() {
        cmd.build();
        let tool = cmd.get_name().to_string();
        for sc in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            let mut want: Vec<String> = sc
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
                .collect();
            want.sort();
            want.dedup();
            let got = complete(&tool, &[&tool, sc.get_name(), "--"]);
            assert_eq!(got, want, "{tool} {} --<TAB>", sc.get_name());
            checked += 1;
        }
    }
    // fsview-session's 8 commands and ctx-invalidate install-hooks at least.
    assert!(checked >= 9, "only {checked} commands checked");
    assert_eq!(
        complete("fsview-session", &["fsview-session", "events", "--li"]),
        ["--limit"]
    );
    assert_eq!(
        complete("fsview-session", &["fsview-session", "fork", "--"]),
        [
            "--agent",
            "--from",
            "--help",
            "--json",
            "--quiet",
            "--replace",
            "--session",
            "--sid"
        ]
    );
    assert_eq!(
        complete(
            "ctx-invalidate",
            &["ctx-invalidate", "install-hooks", "--u"]
        ),
        ["--uninstall"]
    );
    // The commands themselves.
    assert_eq!(
        complete("fsview-session", &["fsview-session", "e"]),
        ["events", "export"]
    );
}

/// bash as a user runs it in `env`: the built tools on PATH, the session
/// file of `env` (FSVIEW_SESSION) unless `session` is false.
fn bash_in(env: &Env, session: bool) -> Command {
    let mut c = env.cmd("bash");
    if !session {
        c.env_remove("FSVIEW_SESSION");
    }
    c
}

/// `--sid <TAB>` offers the sessions of the session file, agents' `S/A`
/// too, after every tool and every command that takes --sid (and
/// `fsview-session fork --from`), from `fsview-session list --ids`.
#[test]
fn bash_completes_session_ids_after_sid() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    env.run("fsview-read", &["--sid", "review", "a.txt"])
        .expect(0, "1\ta\n");
    env.run(
        "fsview-read",
        &["--sid", "review", "--agent", "helper", "a.txt"],
    )
    .expect(0, "1\ta\n");
    env.run("fsview-read", &["--sid", "other", "a.txt"])
        .expect(0, "1\ta\n");
    let all = ["other", "review", "review/helper"];
    assert_eq!(
        complete_with(
            bash_in(&env, true),
            "fsview-check-edit",
            &["fsview-check-edit", "--sid", ""]
        ),
        all
    );
    let mut checked = 0;
    for mut cmd in fsview::commands() {
        cmd.build();
        let tool = cmd.get_name().to_string();
        let takes_sid = |c: &clap::Command| c.get_arguments().any(|a| a.get_long() == Some("sid"));
        if takes_sid(&cmd) {
            assert_eq!(
                complete_with(bash_in(&env, true), &tool, &[&tool, "--sid", "re"]),
                ["review", "review/helper"],
                "{tool} --sid re<TAB>"
            );
            checked += 1;
        }
        for sc in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            if takes_sid(sc) {
                assert_eq!(
                    complete_with(
                        bash_in(&env, true),
                        &tool,
                        &[&tool, sc.get_name(), "--sid", "re"]
                    ),
                    ["review", "review/helper"],
                    "{tool} {} --sid re<TAB>",
                    sc.get_name()
                );
                checked += 1;
            }
        }
    }
    // 7 tools, fsview-session's 8 commands, ctx-invalidate install-hooks
    // and fsview-hook's agents at least.
    assert!(checked >= 20, "only {checked} places checked");
    assert_eq!(
        complete_with(
            bash_in(&env, true),
            "fsview-session",
            &["fsview-session", "fork", "--from", "o"]
        ),
        ["other"]
    );
    // A --session typed on the line names the session file, as the tool
    // would read it: before the command too, and as --session=FILE.
    let file = env.session.to_str().unwrap();
    assert_eq!(
        complete_with(
            bash_in(&env, false),
            "fsview-check-edit",
            &["fsview-check-edit", "--session", file, "--sid", ""]
        ),
        all
    );
    assert_eq!(
        complete_with(
            bash_in(&env, false),
            "fsview-session",
            &[
                "fsview-session",
                &format!("--session={file}"),
                "show",
                "--sid",
                "review/"
            ]
        ),
        ["review/helper"]
    );
    // bash splits --session=FILE at the `=` (COMP_WORDBREAKS).
    assert_eq!(
        complete_with(
            bash_in(&env, false),
            "fsview-read",
            &["fsview-read", "--session", "=", file, "--sid", "o"]
        ),
        ["other"]
    );
    // No session file: nothing offered, and none made.
    let mut c = bash_in(&env, false);
    c.env("FSVIEW_SESSION", env.root().join("none.db"));
    assert_eq!(
        complete_with(c, "fsview-check-edit", &["fsview-check-edit", "--sid", ""]),
        Vec::<String>::new()
    );
    assert!(!env.root().join("none.db").exists());
    // Without fsview-session on PATH: nothing either.
    let mut c = bash_in(&env, true);
    c.env("PATH", "/usr/bin:/bin");
    assert_eq!(
        complete_with(c, "fsview-check-edit", &["fsview-check-edit", "--sid", ""]),
        Vec::<String>::new()
    );
    assert!(bin_dir().join("fsview-session").exists());
}

/// An id is offered as it is, never expanded by the shell: a stand-in
/// fsview-session lists ids that bash's `compgen -W` would run or split.
#[test]
fn bash_offers_a_session_id_as_text() {
    let env = Env::new();
    let stand_in = env.root().join("stand-in");
    std::fs::create_dir(&stand_in).unwrap();
    // Written here, made executable by another process: a thread of
    // this one that forks meanwhile holds no descriptor of it for writing
    // (exec would fail with ETXTBSY).
    let text = env.root().join("fsview-session.sh");
    std::fs::write(
        &text,
        "#!/bin/sh\n[ \"$*\" = \"list --ids\" ] || exit 2\nprintf '%s\\n' '$(touch made)' '*' 'a b' '~x'\n",
    )
    .unwrap();
    let mut c = Command::new("install");
    c.arg("-m755")
        .arg(&text)
        .arg(stand_in.join("fsview-session"));
    assert_eq!(output(c, None).code, 0);
    env.write("file-here", "");
    let mut c = env.cmd("bash");
    c.env("PATH", format!("{}:/usr/bin:/bin", stand_in.display()));
    assert_eq!(
        complete_with(c, "fsview-edit", &["fsview-edit", "--sid", ""]),
        ["$(touch made)", "*", "a b", "~x"]
    );
    assert!(!env.path("made").exists());
}
