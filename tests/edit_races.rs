//! No lost update: real processes racing to change one file, and
//! processes killed in the middle of a write.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::harness::{bin, Env};

const MODIFIED: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn spawn(env: &Env, tool: &str, args: &[&str]) -> Child {
    let mut c = env.cmd(bin(tool));
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c.spawn().unwrap()
}

/// Agents 1 to 8 (sessions `agent-N`), each turning line `line(N)` of
/// f.txt into "LINE L by agent N", all at once: each one's exit code and
/// stderr.
fn edit_all_at_once(env: &Env, line: impl Fn(usize) -> usize) -> Vec<(i32, String)> {
    edit_n_at_once(env, 8, line)
}

/// [`edit_all_at_once`] with agents 1 to `n`.
fn edit_n_at_once(env: &Env, n: usize, line: impl Fn(usize) -> usize) -> Vec<(i32, String)> {
    let children: Vec<Child> = (1..=n)
        .map(|i| {
            let (sid, old, new) = (
                format!("agent-{i}"),
                format!("line {}\n", line(i)),
                format!("LINE {} by agent {i}\n", line(i)),
            );
            spawn(
                env,
                "fsview-edit",
                &["--sid", &sid, "f.txt", "--old", &old, "--new", &new],
            )
        })
        .collect();
    children.into_iter().map(finish).collect()
}

fn finish(child: Child) -> (i32, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

// Eight agents (sessions) read one version of a file; each then edits a
// different line of it, all at once, with merging off. Exactly one edit
// lands; the other seven are refused as modified, and the file holds
// exactly that one change. Several rounds, so the processes interleave
// differently.
#[test]
fn eight_agents_that_saw_one_version_exactly_one_applies() {
    let env = Env::new();
    for round in 0..4 {
        env.write("f.txt", lines(8));
        for i in 1..=8 {
            let sid = format!("agent-{i}");
            let r = env.run("fsview-read", &["-q", "--sid", &sid, "f.txt"]);
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
        let children: Vec<Child> = (1..=8)
            .map(|i| {
                let (sid, old, new) = (
                    format!("agent-{i}"),
                    format!("line {i}\n"),
                    format!("LINE {i} by agent {i}\n"),
                );
                spawn(
                    &env,
                    "fsview-edit",
                    &[
                        "--on-change",
                        "refuse",
                        "--sid",
                        &sid,
                        "f.txt",
                        "--old",
                        &old,
                        "--new",
                        &new,
                    ],
                )
            })
            .collect();
        let results: Vec<(i32, String)> = children.into_iter().map(finish).collect();
        let winners: Vec<usize> = (0..8)
            .filter(|&i| results[i].0 == 0)
            .map(|i| i + 1)
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        let w = winners[0];
        for (i, (code, stderr)) in results.iter().enumerate() {
            if i + 1 == w {
                continue;
            }
            assert_eq!(*code, 1, "round {round}: {stderr}");
            // Said as Claude Code says it, naming the writer (the
            // winner's session) when the gate saw its write, else as
            // unknown (it landed under the lock).
            assert!(
                stderr.starts_with("fsview-edit: f.txt: modified (")
                    && (stderr.ends_with(&format!("): {MODIFIED}\n"))
                        || stderr.contains(&format!(
                            "): File has been modified since read, by fsview-edit in session \"agent-{w}\" at "
                        ))),
                "round {round}: {stderr}"
            );
        }
        let want = lines(8).replace(&format!("line {w}\n"), &format!("LINE {w} by agent {w}\n"));
        assert_eq!(std::fs::read_to_string(env.path("f.txt")).unwrap(), want);
    }
}

// The same with merging on (the default) and the eight lines 4 apart: every
// edit lands, each on the text the ones before it left, and the file holds
// all eight. Edits of neighbouring lines (1 apart) still collide: one lands
// and the others are refused. Nothing is ever lost.
#[test]
fn eight_agents_editing_lines_far_apart_all_land() {
    let env = Env::new();
    for (round, step) in [(0, 4), (1, 4), (2, 1)] {
        env.write("f.txt", lines(32));
        for i in 1..=8 {
            let r = env.run(
                "fsview-read",
                &["-q", "--sid", &format!("agent-{i}"), "f.txt"],
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
        let line = |i: usize| 1 + (i - 1) * step;
        let results = edit_all_at_once(&env, line);
        let mut want = lines(32);
        for (i, (code, stderr)) in results.iter().enumerate() {
            let i = i + 1;
            match code {
                0 => {
                    want = want.replace(
                        &format!("line {}\n", line(i)),
                        &format!("LINE {} by agent {i}\n", line(i)),
                    )
                }
                1 => assert!(
                    stderr.starts_with("fsview-edit: f.txt: modified ("),
                    "round {round}: {stderr}"
                ),
                _ => panic!("round {round}: {stderr}"),
            }
        }
        let landed = results.iter().filter(|r| r.0 == 0).count();
        match step {
            4 => assert_eq!(landed, 8, "round {round}: {results:?}"),
            _ => assert!(landed >= 1, "round {round}: {results:?}"),
        }
        assert_eq!(std::fs::read_to_string(env.path("f.txt")).unwrap(), want);
    }
}

// Twenty agents at once, each 10 lines from the others: each waits for
// every writer queued ahead of it (up to 19), then merges; none is refused
// for having waited behind many (a bound of 16 waits once refused some).
#[test]
fn twenty_agents_editing_lines_far_apart_all_land() {
    let env = Env::new();
    for round in 0..3 {
        env.write("f.txt", lines(200));
        for i in 1..=20 {
            let r = env.run(
                "fsview-read",
                &["-q", "--sid", &format!("agent-{i}"), "f.txt"],
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
        let line = |i: usize| i * 10 - 5;
        let results = edit_n_at_once(&env, 20, line);
        assert!(
            results.iter().all(|r| r.0 == 0),
            "round {round}: {results:?}"
        );
        let mut want = lines(200);
        for i in 1..=20 {
            want = want.replace(
                &format!("line {}\n", line(i)),
                &format!("LINE {} by agent {i}\n", line(i)),
            );
        }
        assert_eq!(std::fs::read_to_string(env.path("f.txt")).unwrap(), want);
    }
}

// Eight agents that each read only ten lines of one file (a range), all
// edit the middle of their own lines at once: every edit lands, each
// merged with the ones that landed before it, outside the lines it saw.
// An agent whose edit comes within 3 lines of the end of what it read is
// refused whenever the file changed since (it cannot know what changed
// just past what it saw).
#[test]
fn eight_agents_that_read_ranges_far_apart_all_land() {
    let env = Env::new();
    for round in 0..3 {
        env.write("f.txt", lines(80));
        for i in 1..=8 {
            let first = (i - 1) * 10 + 1;
            let r = env.run(
                "fsview-read",
                &[
                    "-q",
                    "--sid",
                    &format!("agent-{i}"),
                    "--offset",
                    &first.to_string(),
                    "--limit",
                    "10",
                    "f.txt",
                ],
            );
            assert_eq!(r.code, 0, "{}", r.stderr);
        }
        let line = |i: usize| (i - 1) * 10 + 5;
        let results = edit_all_at_once(&env, line);
        let mut want = lines(80);
        for (i, (code, stderr)) in results.iter().enumerate() {
            assert_eq!(*code, 0, "round {round}, agent {}: {results:?}", i + 1);
            // Told that the file changed (by whom, when the gate saw that
            // write land), outside the lines it read; or nothing (it
            // landed first).
            assert!(
                stderr.is_empty()
                    || stderr.starts_with("fsview-edit: f.txt: merged: it had been changed ")
                        && stderr.contains(&format!(
                            " since lines {}-{} were read, outside them (they are lines {}-{} now)",
                            i * 10 + 1,
                            i * 10 + 10,
                            i * 10 + 1,
                            i * 10 + 10
                        )),
                "round {round}: {stderr}"
            );
            let i = i + 1;
            want = want.replace(
                &format!("line {}\n", line(i)),
                &format!("LINE {} by agent {i}\n", line(i)),
            );
        }
        assert_eq!(std::fs::read_to_string(env.path("f.txt")).unwrap(), want);
    }
    // Within 3 lines of the end of the lines read: refused, the change
    // said.
    env.write("f.txt", lines(80));
    let r = env.run(
        "fsview-read",
        &[
            "-q", "--sid", "a", "--offset", "11", "--limit", "10", "f.txt",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.write("f.txt", lines(80).replace("line 50\n", "line fifty\n"));
    env.run(
        "fsview-edit",
        &["--sid", "a", "f.txt", "--old", "line 19\n", "--new", "x\n"],
    )
    .expect(1, "")
    .stderr_is(&format!(
        "fsview-edit: f.txt: modified (content): {MODIFIED}\n"
    ));
}

// One session, eight processes at once: an agent's own write counts as
// seen (as in Claude Code), so several may land one after another. Still
// nothing is lost: the file holds exactly the changes reported applied.
#[test]
fn one_session_racing_itself_loses_nothing() {
    let env = Env::new();
    env.write("f.txt", lines(8));
    let r = env.run("fsview-read", &["-q", "f.txt"]);
    assert_eq!(r.code, 0);
    let children: Vec<Child> = (1..=8)
        .map(|i| {
            let (old, new) = (format!("line {i}\n"), format!("LINE {i}\n"));
            spawn(
                &env,
                "fsview-edit",
                &["f.txt", "--old", &old, "--new", &new],
            )
        })
        .collect();
    let results: Vec<(i32, String)> = children.into_iter().map(finish).collect();
    let mut want = lines(8);
    for (i, (code, stderr)) in results.iter().enumerate() {
        match code {
            0 => want = want.replace(&format!("line {}\n", i + 1), &format!("LINE {}\n", i + 1)),
            1 => assert!(stderr.contains("modified ("), "{stderr}"),
            _ => panic!("{stderr}"),
        }
    }
    assert!(results.iter().any(|r| r.0 == 0), "{results:?}");
    assert_eq!(std::fs::read_to_string(env.path("f.txt")).unwrap(), want);
}

// Eight agents create the same new file at once: one creates it, the other
// seven are told to read it first (it is no longer new, and they have not
// seen it).
#[test]
fn eight_creators_of_one_new_file_exactly_one_creates() {
    let env = Env::new();
    let children: Vec<Child> = (1..=8)
        .map(|i| {
            let (sid, new) = (format!("agent-{i}"), format!("made by {i}\n"));
            spawn(
                &env,
                "fsview-edit",
                &["--sid", &sid, "new.txt", "--old", "", "--new", &new],
            )
        })
        .collect();
    let results: Vec<(i32, String)> = children.into_iter().map(finish).collect();
    let winners: Vec<usize> = (0..8)
        .filter(|&i| results[i].0 == 0)
        .map(|i| i + 1)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    // A loser's session is one the file does not hold (it asked, nothing
    // was recorded): the refusal says so, naming the sessions made by then
    // (none when it looked before any was: then nothing is said).
    for (i, (code, stderr)) in results.iter().enumerate().filter(|(_, r)| r.0 != 0) {
        let (refusal, hint) = stderr.split_once('\n').unwrap();
        if hint.is_empty() {
            assert_eq!((*code, refusal), (1, "fsview-edit: new.txt: not_read: File has not been read yet. Read it first before writing to it."));
            continue;
        }
        assert_eq!((*code, refusal), (1, "fsview-edit: new.txt: not_read: File has not been read yet. Read it first before writing to it."));
        let start = format!("fsview-edit: no session \"agent-{}\" in ", i + 1);
        assert!(
            hint.starts_with(&start)
                && hint.ends_with("; it has no views, so every file in it is not_read\n"),
            "{stderr}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(env.path("new.txt")).unwrap(),
        format!("made by {}\n", winners[0])
    );
}

// A process killed at any moment of a write leaves the old file or the
// new one, never a mix, and the session file consistent. Kills land at
// pseudo-random moments across the whole call; each round starts from a
// fresh read.
#[test]
fn killed_at_random_moments_the_file_is_old_or_new() {
    let env = Env::new();
    let a: String = (0..2000)
        .map(|i| format!("a line {i:05} of the old text\n"))
        .collect();
    let b = a.replace("a line", "b line");
    env.write("f.txt", &a);
    // How long a whole call takes here, so kills spread over all of it;
    // stretched when kills keep landing before the end.
    let r = env.run("fsview-read", &["-q", "--cap", "1M", "f.txt"]);
    assert_eq!(r.code, 0);
    let start = std::time::Instant::now();
    let r = env.run(
        "fsview-edit",
        &["-q", "f.txt", "--old", "a line", "--new", "b line", "--all"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut span = start.elapsed().as_micros() as u64 * 5 / 4;
    let mut seed = fsview_seed();
    let (mut old, mut new, mut in_a_row) = (0, 0, 0);
    for _ in 0..60 {
        let now = std::fs::read_to_string(env.path("f.txt")).unwrap();
        let (from, to) = if now == a {
            ("a line", "b line")
        } else {
            ("b line", "a line")
        };
        let r = env.run("fsview-read", &["-q", "--cap", "1M", "f.txt"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let mut child = Command::new(bin("fsview-edit"))
            .env_clear()
            .env("FSVIEW_SESSION", &env.session)
            .current_dir(&env.work)
            .args(["-q", "f.txt", "--old", from, "--new", to, "--all"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        std::thread::sleep(Duration::from_micros((seed >> 33) % span.max(1)));
        let _ = child.kill();
        let _ = child.wait();
        let after = std::fs::read_to_string(env.path("f.txt")).unwrap();
        assert!(
            after == a || after == b,
            "a torn file: {} bytes",
            after.len()
        );
        if after == now {
            old += 1;
            in_a_row += 1;
            if in_a_row % 8 == 0 {
                span *= 2;
            }
        } else {
            new += 1;
            in_a_row = 0;
        }
        // A kill between the swap and the cleanup leaves the old file
        // under its temporary name: complete, and named to be found.
        for e in std::fs::read_dir(&env.work).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.starts_with(".f.txt.fsview-") && name.ends_with(".tmp") {
                std::fs::remove_file(env.path(&name)).unwrap();
            } else {
                assert_eq!(name, "f.txt");
            }
        }
    }
    // Kills landed both before and after the swap.
    assert!(old > 0 && new > 0, "old {old}, new {new}");
    let c = rusqlite::Connection::open(&env.session).unwrap();
    let ok: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
    // Whatever the kills left, the gate still works on it.
    let r = env.run("fsview-read", &["-q", "--cap", "1M", "f.txt"]);
    assert_eq!(r.code, 0);
    let r = env.run(
        "fsview-edit",
        &["-q", "f.txt", "--old", "00000 of", "--new", "zero of"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

fn fsview_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}
