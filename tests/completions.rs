//! The shipped bash completions, sourced into a real bash: each command of a
//! tool with commands completes its own options (`fsview-session events
//! --<TAB>`), which clap_complete's script got wrong for a hyphenated
//! binary name until `cargo xtask man` fixed it. CI checks that
//! completions/ is what xtask writes, so this tests what users install.

use std::path::Path;
use std::process::Command;

use crate::harness::output;

/// What bash offers for `words` (the last one being completed).
fn complete(tool: &str, words: &[&str]) -> Vec<String> {
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
    let mut c = Command::new("bash");
    c.arg("--norc")
        .arg("-c")
        .arg(script)
        .arg("bash")
        .arg(&file)
        .args(words)
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
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
