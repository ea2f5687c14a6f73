//! The build scripts find what cargo built where cargo built it: a global
//! CARGO_TARGET_DIR (or cargo's build.target-dir) must not send them to an
//! empty target/, and scripts/build-release says where the binaries are
//! (not target/release). scripts/install says what it does and how long it
//! takes before it starts, and what bash and zsh need to find the
//! completions; --uninstall leaves the prefix as it was before the install,
//! the directories the install made gone, those that were there kept.
//! (Installed here from stand-ins of the binaries, with --from: no release
//! build.)

use std::os::unix::fs::PermissionsExt;
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

/// A stand-in for each tool's binary, as scripts/install wants them (it
/// only copies them).
fn stand_in_build(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for t in tools() {
        let path = dir.join(&t);
        std::fs::write(&path, format!("#!/bin/sh\necho {t}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir.to_path_buf()
}

/// The tools scripts/install installs (those with a man page), in its order.
fn tools() -> Vec<String> {
    let mut t: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".1").map(String::from))
        .collect();
    t.sort();
    t
}

/// How many files an install puts in: per tool its binary, man page and
/// three completions; the section 7 pages; the manifest.
fn installed_files() -> usize {
    let man7 = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("man"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".7")
        })
        .count();
    tools().len() * 5 + man7 + 1
}

/// Every path under `root`, with each file's content and each one's mode.
fn tree(root: &Path) -> Vec<(String, Option<Vec<u8>>, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let mode = meta.permissions().mode();
            if meta.is_dir() {
                stack.push(path);
                out.push((rel, None, mode));
            } else {
                out.push((rel, Some(std::fs::read(&path).unwrap()), mode));
            }
        }
    }
    out.sort();
    out
}

/// scripts/install with `args`, HOME in `root`, a plain PATH and `env`.
fn install(root: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut c = script("install");
    c.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", root.join("home"))
        .envs(env.iter().copied());
    stdout(c)
}

fn root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("home")).unwrap();
    (dir, root)
}

/// What scripts/install says after installing into `prefix`, the binaries
/// into `bin`, from `built`.
fn installed(prefix: &Path, bin: &Path, built: &Path) -> String {
    let (p, b) = (prefix.display(), bin.display());
    let newer = if *bin == prefix.join("bin") {
        " (bash-completion 2.12 or newer finds them without it)"
    } else {
        ""
    };
    format!(
        "install: {} (built in {}) into {b}; man pages into {p}/share/man; completions under {p}/share\n\
         install: {b} is not on your PATH; add it (export PATH=\"{b}:$PATH\")\n\
         install: for bash completions, add this line to ~/.bashrc{newer}: for f in {p}/share/bash-completion/completions/*; do . \"$f\"; done\n\
         install: for zsh completions, add fpath=({p}/share/zsh/site-functions $fpath) to ~/.zshrc before compinit\n",
        tools().join(" "),
        built.display(),
    )
}

/// The manifest of an install into `prefix`, `bin`, that made `made`.
fn manifest(bin: &Path, made: &[PathBuf]) -> String {
    let mut m = format!(
        "# Written by fsview's scripts/install: scripts/install --uninstall removes\n\
         # fsview's files and then each directory below that is empty (the install\n\
         # made them; a directory that was there before is never listed).\n\
         bin-dir {}\n",
        bin.display()
    );
    for d in made {
        m.push_str(&format!("dir {}\n", d.display()));
    }
    m
}

/// Install and uninstall: the prefix is as it was, the directories the
/// install made gone, the one of the user's (empty) still there. Twice
/// installed (an upgrade) as well.
#[test]
fn install_then_uninstall_leaves_the_prefix_as_it_was() {
    let (_dir, root) = root();
    let built = stand_in_build(&root.join("built"));
    let p = root.join("p");
    std::fs::create_dir_all(p.join("share/man")).unwrap();
    let before = tree(&root);
    let args = [
        "--prefix",
        p.to_str().unwrap(),
        "--from",
        built.to_str().unwrap(),
    ];
    let made: Vec<PathBuf> = [
        "share/fsview",
        "bin",
        "share/man/man1",
        "share/man/man7",
        "share/bash-completion",
        "share/bash-completion/completions",
        "share/zsh",
        "share/zsh/site-functions",
        "share/fish",
        "share/fish/vendor_completions.d",
    ]
    .iter()
    .map(|d| p.join(d))
    .collect();
    for _ in 0..2 {
        assert_eq!(
            install(&root, &args, &[]),
            (0, installed(&p, &p.join("bin"), &built), String::new())
        );
        assert_eq!(
            std::fs::read_to_string(p.join("share/fsview/install-manifest")).unwrap(),
            manifest(&p.join("bin"), &made)
        );
    }
    assert_eq!(
        std::fs::read(p.join("bin/fsview-read")).unwrap(),
        b"#!/bin/sh\necho fsview-read\n"
    );
    assert_eq!(
        std::fs::read(p.join("share/bash-completion/completions/fsview-read")).unwrap(),
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/fsview-read.bash"))
            .unwrap()
    );
    assert_eq!(
        install(
            &root,
            &["--prefix", p.to_str().unwrap(), "--uninstall"],
            &[]
        ),
        (
            0,
            format!(
                "install: removed {} files of fsview from {}\n\
                 install: removed the 10 directories the install made\n",
                installed_files(),
                p.display()
            ),
            String::new()
        )
    );
    assert_eq!(tree(&root), before);
}

/// A directory the install made that holds something of the user's now
/// stays, and says so; the --bin-dir of the install is the one uninstalled
/// from. Without a manifest (an older install's), the files go and the
/// directories stay, as it says.
#[test]
fn uninstall_keeps_what_holds_something_and_says_without_a_manifest() {
    let (_dir, root) = root();
    let built = stand_in_build(&root.join("built"));
    let before = tree(&root);
    let (q, b) = (root.join("q"), root.join("b"));
    let (qs, bs) = (q.to_str().unwrap(), b.to_str().unwrap());
    let args = [
        "--prefix",
        qs,
        "--bin-dir",
        bs,
        "--from",
        built.to_str().unwrap(),
    ];
    assert_eq!(
        install(&root, &args, &[]),
        (0, installed(&q, &b, &built), String::new())
    );
    std::fs::write(q.join("share/notes.txt"), "mine\n").unwrap();
    assert_eq!(
        install(&root, &["--prefix", qs, "--uninstall"], &[]),
        (
            0,
            format!(
                "install: removed {} files of fsview from {qs} and {bs}\n\
                 install: removed 11 of the 13 directories the install made; kept, not empty: {qs}/share, {qs}\n",
                installed_files()
            ),
            String::new()
        )
    );
    std::fs::remove_file(q.join("share/notes.txt")).unwrap();
    std::fs::remove_dir(q.join("share")).unwrap();
    std::fs::remove_dir(&q).unwrap();
    assert_eq!(tree(&root), before);

    install(&root, &args, &[]);
    std::fs::remove_file(q.join("share/fsview/install-manifest")).unwrap();
    assert_eq!(
        install(
            &root,
            &["--prefix", qs, "--bin-dir", bs, "--uninstall"],
            &[]
        ),
        (
            0,
            format!(
                "install: removed {} files of fsview from {qs} and {bs}\n\
                 install: no {qs}/share/fsview/install-manifest (an older scripts/install wrote none), so the directories the install made stay\n",
                installed_files() - 1
            ),
            String::new()
        )
    );
    assert!(q.join("share/man/man1").is_dir() && b.is_dir());
    // Nothing left to remove: nothing more to say.
    assert_eq!(
        install(
            &root,
            &["--prefix", qs, "--bin-dir", bs, "--uninstall"],
            &[]
        ),
        (
            0,
            format!("install: removed 0 files of fsview from {qs} and {bs}\n"),
            String::new()
        )
    );
}

/// The line for bash is there only when bash-completion would not look in
/// PREFIX/share/bash-completion/completions: its user directory
/// (BASH_COMPLETION_USER_DIR, else XDG_DATA_HOME's, else ~/.local/share's)
/// and the system data directories (XDG_DATA_DIRS) are searched.
#[test]
fn install_tells_bash_where_the_completions_are_only_when_it_does_not_look() {
    let (_dir, root) = root();
    let built = stand_in_build(&root.join("built"));
    let from = built.to_str().unwrap();
    let bash_lines = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("install: for bash"))
            .map(String::from)
            .collect()
    };
    // The default prefix, ~/.local.
    let (code, out, err) = install(&root, &["--from", from], &[]);
    assert_eq!((code, err.as_str(), bash_lines(&out)), (0, "", vec![]));
    assert!(root
        .join("home/.local/share/bash-completion/completions/fsview-read")
        .is_file());
    let p = root.join("p");
    let share = p.join("share");
    let ps = p.to_str().unwrap();
    for env in [
        ("XDG_DATA_HOME", share.display().to_string()),
        ("XDG_DATA_DIRS", format!("/usr/share:{}/", share.display())),
        (
            "BASH_COMPLETION_USER_DIR",
            share.join("bash-completion").display().to_string(),
        ),
    ] {
        let (code, out, err) =
            install(&root, &["--prefix", ps, "--from", from], &[(env.0, &env.1)]);
        assert_eq!(
            (code, err.as_str(), bash_lines(&out)),
            (0, "", vec![]),
            "{env:?}"
        );
    }
    // Elsewhere it is needed; a user directory of another place is no help.
    let (code, out, err) = install(
        &root,
        &["--prefix", ps, "--from", from],
        &[(
            "XDG_DATA_HOME",
            root.join("home/.local/share").to_str().unwrap(),
        )],
    );
    assert_eq!(
        (code, err.as_str(), bash_lines(&out)),
        (
            0,
            "",
            vec![format!(
                "install: for bash completions, add this line to ~/.bashrc (bash-completion 2.12 or newer finds them without it): for f in {ps}/share/bash-completion/completions/*; do . \"$f\"; done"
            )]
        )
    );
    // The line sources each file, whatever the directory's name.
    let odd = root.join("my prefix");
    let (code, out, _) = install(
        &root,
        &["--prefix", odd.to_str().unwrap(), "--from", from],
        &[],
    );
    assert_eq!(code, 0);
    let line = bash_lines(&out).remove(0);
    let loop_ = line.split_once("it): ").unwrap().1;
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(format!("{loop_}\ncomplete -p fsview-read"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin");
    let (code, out, err) = stdout(c);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.contains(" fsview-read\n"), "{out}");
    assert_eq!(
        install(&root, &["--from", from, "--portable"], &[]),
        (
            2,
            String::new(),
            "install: --portable is for the build; --from installs binaries built already\n"
                .to_string()
        )
    );
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
