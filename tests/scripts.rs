//! The build scripts find what cargo built where cargo built it: a global
//! CARGO_TARGET_DIR (or cargo's build.target-dir) must not send them to an
//! empty target/, and scripts/build-release says where the binaries are
//! (not target/release). And scripts/install says what it does and how long
//! it takes before it starts.

use std::path::{Path, PathBuf};
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

/// scripts/hot-cc puts the functions its list names first in the binary:
/// a C name as it is, a Rust name without its hash. Linked by rustc as
/// scripts/build-release links (lld, the default linker of this target).
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
#[test]
fn hot_cc_lays_out_the_listed_functions_first() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("prog.rs");
    std::fs::write(
        &src,
        "#[inline(never)] pub fn cold_a() -> u32 { std::hint::black_box(1) }\n\
         #[inline(never)] pub fn cold_b() -> u32 { std::hint::black_box(2) }\n\
         #[inline(never)] pub fn hot_b() -> u32 { std::hint::black_box(3) }\n\
         #[unsafe(no_mangle)] #[inline(never)] pub extern \"C\" fn hot_c() -> u32 { std::hint::black_box(4) }\n\
         fn main() { println!(\"{}\", cold_a() + cold_b() + hot_b() + hot_c()); }\n",
    )
    .unwrap();
    let list = dir.path().join("hot.txt");
    // Unordered, lld puts hot_c last: each check below fails if a name
    // is not found.
    std::fs::write(&list, "# the hot ones\n_ZN4prog5hot_bE\nhot_c\n").unwrap();
    let out = dir.path().join("prog");
    let hot_cc = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/hot-cc");
    let mut c = Command::new("rustc");
    c.args(["--edition", "2024", "-O", "-C", "codegen-units=1", "-o"])
        .arg(&out)
        .arg(format!("-Clinker={}", hot_cc.display()))
        .arg(&src)
        .env("FSVIEW_HOT_TEXT", &list);
    let (code, _, err) = stdout(c);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        stdout(Command::new(&out)),
        (0, "10\n".to_string(), String::new())
    );
    let binary = std::fs::read(&out).unwrap();
    assert!(
        binary.windows(12).any(|w| w == b"Linker: LLD "),
        "linked by lld"
    );
    // Addresses of the four functions, by nm.
    let mut nm = Command::new("nm");
    nm.arg(&out);
    let (code, syms, _) = stdout(nm);
    assert_eq!(code, 0);
    let at = |name: &str| -> u64 {
        let line = syms
            .lines()
            .find(|l| {
                l.ends_with(&format!(" {name}"))
                    || l.contains(&format!("4prog{}{name}17h", name.len()))
            })
            .unwrap_or_else(|| panic!("{name} not in nm's output"));
        u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap()
    };
    let (hot_c, hot_b, cold_a, cold_b) = (at("hot_c"), at("hot_b"), at("cold_a"), at("cold_b"));
    assert!(hot_b < hot_c, "in the list's order: {hot_b:x} {hot_c:x}");
    assert!(
        hot_c < cold_a.min(cold_b),
        "before the rest: {hot_c:x} {cold_a:x} {cold_b:x}"
    );
}

/// Without lld (another linker), scripts/hot-cc is the C compiler as it is.
#[test]
fn hot_cc_passes_another_link_through() {
    let mut c = script("hot-cc");
    c.args(["-o", "prog", "a.o", "-lc"])
        .env("FSVIEW_LINK_CC", "echo");
    assert_eq!(
        stdout(c),
        (0, "-o prog a.o -lc\n".to_string(), String::new())
    );
}

/// Make `text` an executable at `path`. Made executable by another
/// process: a thread of this one that forks meanwhile holds no descriptor
/// of it open for writing (its exec would fail with ETXTBSY).
fn executable(path: &Path, text: &str) {
    let source = path.with_extension("text");
    std::fs::write(&source, text).unwrap();
    let mut c = Command::new("install");
    c.arg("-m755").arg(&source).arg(path);
    assert_eq!(stdout(c), (0, String::new(), String::new()));
    std::fs::remove_file(&source).unwrap();
}

fn root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("home")).unwrap();
    (dir, root)
}

/// scripts/build-release says where the binaries are when it is done (on
/// Linux with glibc not in target/release) and prints that directory, the
/// only thing on stdout. Run with stand-ins of cargo and rustc.
#[test]
fn build_release_says_where_the_binaries_are() {
    let (_dir, root) = root();
    let stubs = root.join("stubs");
    std::fs::create_dir(&stubs).unwrap();
    let target = root.join("tgt");
    let t = target.display().to_string();
    executable(
        &stubs.join("cargo"),
        &format!(
            "#!/bin/sh\ncase $1 in\n  metadata) echo '{{\"packages\":[],\"target_directory\":\"{t}\",\"version\":1}}' ;;\n  build) ;;\n  *) exit 3 ;;\nesac\n"
        ),
    );
    executable(
        &stubs.join("rustc"),
        "#!/bin/sh\necho \"host: $STUB_HOST\"\n",
    );
    let run = |host: &str| -> (i32, String, Vec<String>) {
        let mut c = script("build-release");
        c.env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", stubs.display()))
            .env("HOME", root.join("home"))
            .env("STUB_HOST", host);
        let (code, out, err) = stdout(c);
        // The seconds it took, whatever they were.
        let err = err
            .lines()
            .map(|l| match l.split_once("built in ") {
                Some((a, rest)) => {
                    let n = rest.find(' ').unwrap();
                    assert!(rest[..n].chars().all(|c| c.is_ascii_digit()), "{l}");
                    format!("{a}built in N{}", &rest[n..])
                }
                None => l.to_string(),
            })
            .collect();
        (code, out, err)
    };
    let building = format!(
        "build-release: building the release binaries into {t} (7.5 minutes of CPU time: about 10 on a busy 2-core machine, less with more cores; cargo's progress follows)"
    );
    assert_eq!(
        run("x86_64-unknown-linux-gnu"),
        (
            0,
            format!("{t}/x86_64-unknown-linux-gnu/release\n"),
            vec![
                building.clone(),
                format!(
                    "build-release: built in N s; the binaries are in {t}/x86_64-unknown-linux-gnu/release (not {t}/release: cargo puts a build for --target x86_64-unknown-linux-gnu in a folder of that name)"
                ),
            ]
        )
    );
    assert_eq!(
        run("aarch64-apple-darwin"),
        (
            0,
            format!("{t}/release\n"),
            vec![
                building,
                format!("build-release: built in N s; the binaries are in {t}/release")
            ]
        )
    );
}
