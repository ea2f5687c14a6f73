//! The build scripts find what cargo built where cargo built it: a global
//! CARGO_TARGET_DIR (or cargo's build.target-dir) must not send them to an
//! empty target/. And scripts/install says what it does and how long it
//! takes before it starts.

use std::path::Path;
use std::process::Command;

fn script(name: &str) -> Command {
    Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(name),
    )
}

fn stdout(mut c: Command) -> (i32, String, String) {
    let out = c.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn target_dir_is_where_cargo_builds() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    let mut c = script("target-dir");
    c.env("CARGO_TARGET_DIR", &elsewhere)
        .env_remove("CARGO_BUILD_TARGET_DIR");
    assert_eq!(
        stdout(c),
        (0, format!("{}\n", elsewhere.display()), String::new())
    );
    // cargo's own setting (build.target-dir, here from the environment).
    let config = dir.path().join("from-config");
    let mut c = script("target-dir");
    c.env_remove("CARGO_TARGET_DIR")
        .env("CARGO_BUILD_TARGET_DIR", &config);
    assert_eq!(
        stdout(c),
        (0, format!("{}\n", config.display()), String::new())
    );
}

#[test]
fn install_says_how_long_and_refuses_what_it_does_not_know() {
    let mut c = script("install");
    c.arg("--help");
    let (code, out, err) = stdout(c);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.starts_with("Install fsview the fast way"), "{out}");
    assert!(out.contains("7.5 minutes of CPU time"), "{out}");
    assert!(out.contains("CARGO_TARGET_DIR"), "{out}");
    assert!(out.ends_with("error.\n"), "{out}");
    let mut c = script("install");
    c.arg("--prefx");
    assert_eq!(
        stdout(c),
        (
            2,
            String::new(),
            "install: unknown argument --prefx; see scripts/install --help\n".to_string()
        )
    );
}
