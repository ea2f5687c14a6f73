//! Git's commands that throw away work-tree changes ([`discards`]); what
//! each would lose is asked of git itself ([`crate::discard`]).

use std::path::PathBuf;

use super::commands::{strip_wrappers, unwrap};
use super::parse::{commands, Dir, Simple};

/// A git command that throws away changes in the work tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discard {
    /// Where git runs (its `-C` applied), from where the command line
    /// starts.
    pub dir: PathBuf,
    /// The pathspecs it names, as given (relative to `dir`); none: the
    /// whole tree.
    pub paths: Vec<String>,
    /// What it loses.
    pub loses: Loses,
    /// Its words, to name it in a refusal (`git checkout .`).
    pub words: String,
}

/// What a discard loses of the files its paths name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loses {
    /// The work tree's changes against the index (`git checkout -- f`,
    /// `git restore f`).
    SinceIndex,
    /// The work tree's changes against a commit (`git checkout HEAD -- f`,
    /// `git restore --source=REV f`; `git reset --hard`, `git stash`,
    /// `git checkout -f BRANCH`: against `HEAD`); `untracked` too (`git
    /// stash -u`), and `ignored` (`git stash -a`).
    SinceCommit {
        rev: String,
        untracked: bool,
        ignored: bool,
    },
    /// `git checkout X ...` without `--`: X is a commit and the rest are
    /// paths, or all are paths; git decides, asked at the gate. One word
    /// that is a branch switches branches, which loses nothing (git
    /// refuses to overwrite a changed file).
    CheckoutAmbiguous,
    /// Untracked files (`git clean -f`): in untracked directories too with
    /// `dirs` (`-d`); ignored files too with `ignored` (`-x`), or only
    /// them (`only_ignored`, `-X`).
    Untracked {
        dirs: bool,
        ignored: bool,
        only_ignored: bool,
    },
}

/// The git commands of a command line that discard changes in the work
/// tree, as far as they are literal. Each path form (`git checkout -- f`,
/// `git checkout HEAD -- f`, `git restore [--source=REV] f`, `git stash
/// push -- f`) and each whole-tree form (`git checkout .`, `git restore
/// .`, `git reset --hard [REV]`, `git stash` without paths, `git clean -f`,
/// `git checkout -f`, `git switch -f`/`--discard-changes`). Not: a branch
/// switch (`git checkout BRANCH`, `git switch BRANCH`: git refuses to lose
/// a change), `git reset` without `--hard` (the index only), `--keep` and
/// `--merge` (git refuses), `git restore --staged` alone, dry runs,
/// interactive forms (`-p`, `-i`), and names fsview cannot know
/// (`--pathspec-from-file`, `--git-dir`, `--work-tree`, a word with a
/// variable).
pub fn discards(command: &str) -> Vec<Discard> {
    let mut out = Vec::new();
    // A `git add` earlier in the line makes untracked files tracked, which
    // a discard after it then loses too (`git add -A && git reset --hard`):
    // git, asked before the line, would not count them.
    let mut added = false;
    for cmd in commands(command, &Dir::Known(PathBuf::new())) {
        if let Some(mut d) = git_discard(&cmd) {
            if let (true, Loses::SinceCommit { untracked, .. }) = (added, &mut d.loses) {
                *untracked = true;
            }
            out.push(d);
        } else if git_adds(&cmd) {
            added = true;
        }
    }
    out
}

/// Whether `cmd` is a `git add` (any form: it may stage untracked files).
fn git_adds(cmd: &Simple) -> bool {
    let words = strip_wrappers(&cmd.words);
    let mut it = words.iter().map(|w| w.as_deref());
    if it.next().flatten().map(|n| n.rsplit('/').next()) != Some(Some("git")) {
        return false;
    }
    let mut rest = it.peekable();
    while let Some(Some(a)) = rest.peek() {
        match *a {
            "-C" | "-c" => {
                rest.next();
                rest.next();
            }
            a if a.starts_with('-') => {
                rest.next();
            }
            _ => break,
        }
    }
    matches!(rest.next(), Some(Some("add" | "stage")))
}

pub(super) fn git_discard(cmd: &Simple) -> Option<Discard> {
    let seen = unwrap(&cmd.words, &cmd.dir);
    let (words, runs_in) = (seen.words, seen.dir);
    let (name, args) = words.split_first()?;
    let name = name.as_deref()?;
    if name.rsplit('/').next() != Some("git") {
        return None;
    }
    // Every word literal: a name fsview cannot read may be any path.
    let args: Vec<&str> = args
        .iter()
        .map(|a| a.as_deref())
        .collect::<Option<Vec<_>>>()?;
    // Git's own options, before the subcommand.
    let mut dir = match runs_in {
        Dir::Known(d) => d,
        Dir::Unknown => return None,
    };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match *a {
            "-C" => {
                dir = Dir::Known(dir).join(args.get(i + 1)?)?;
                i += 2;
            }
            "-c" => i += 2,
            _ if a.starts_with("--git-dir") || a.starts_with("--work-tree") => return None,
            _ if a.starts_with("--namespace") || a.starts_with("--exec-path") => i += 1,
            _ if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = *args.get(i)?;
    let rest = &args[i + 1..];
    let (paths, loses) = match sub {
        "checkout" => checkout(rest)?,
        "restore" => restore(rest)?,
        "reset" => reset(rest)?,
        "stash" => stash(rest)?,
        "clean" => clean(rest)?,
        "switch" => switch(rest)?,
        "rm" => rm(rest)?,
        _ => return None,
    };
    let words = std::iter::once("git")
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    Some(Discard {
        dir,
        paths,
        loses,
        words,
    })
}

pub(super) fn head() -> Loses {
    Loses::SinceCommit {
        rev: "HEAD".into(),
        untracked: false,
        ignored: false,
    }
}

/// The words after a subcommand's options, split at `--`: the options
/// (each with its value when `with_value` names it), the operands before
/// `--`, the operands after it (`None`: no `--`).
#[allow(clippy::type_complexity)]
pub(super) fn operands<'a>(
    args: &[&'a str],
    with_value: &[&str],
) -> (Vec<&'a str>, Vec<&'a str>, Option<Vec<&'a str>>) {
    let (mut opts, mut before) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if a == "--" {
            return (opts, before, Some(args[i..].to_vec()));
        }
        if a.starts_with('-') && a.len() > 1 {
            opts.push(a);
            if with_value.contains(&a) {
                if let Some(v) = args.get(i) {
                    opts.push(v);
                    i += 1;
                }
            }
        } else {
            before.push(a);
        }
    }
    (opts, before, None)
}

pub(super) fn has(opts: &[&str], short: char, long: &[&str]) -> bool {
    opts.iter().any(|o| {
        long.contains(o) || (o.starts_with('-') && !o.starts_with("--") && o[1..].contains(short))
    })
}

pub(super) fn checkout(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, before, after) = operands(
        args,
        &["-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"],
    );
    let force = has(&opts, 'f', &["--force"]);
    // A new branch forced onto a start point: the work tree becomes it,
    // changes and all (`git checkout -f -B main HEAD`). Unforced, git
    // refuses to lose a change.
    if opts.iter().any(|o| matches!(*o, "-b" | "-B" | "--orphan")) {
        return force.then(|| {
            let rev = before.first().map_or("HEAD", |r| r).to_string();
            (
                Vec::new(),
                Loses::SinceCommit {
                    rev,
                    untracked: false,
                    ignored: false,
                },
            )
        });
    }
    if opts.iter().any(|o| {
        matches!(*o, "-p" | "--patch" | "--detach") || o.starts_with("--pathspec-from-file")
    }) {
        return None;
    }
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match after {
        // git checkout [REV] -- PATHS
        Some(paths) if !paths.is_empty() => match before.as_slice() {
            [] => Some((strings(&paths), Loses::SinceIndex)),
            [rev] => Some((
                strings(&paths),
                Loses::SinceCommit {
                    rev: rev.to_string(),
                    untracked: false,
                    ignored: false,
                },
            )),
            _ => None,
        },
        Some(_) | None if before.is_empty() => force.then(|| (Vec::new(), head())),
        // git checkout [-f] BRANCH, or paths: git decides.
        _ if before.len() == 1 && force => Some((Vec::new(), head())),
        _ => Some((strings(&before), Loses::CheckoutAmbiguous)),
    }
}

/// `git rm -f PATHS`: the files go, their changes with them (unforced,
/// git refuses to remove a changed file; `--cached` keeps the work tree).
pub(super) fn rm(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, before, after) = operands(args, &["--pathspec-from-file"]);
    if !has(&opts, 'f', &["--force"])
        || has(&opts, 'n', &["--dry-run", "--cached"])
        || opts.iter().any(|o| o.starts_with("--pathspec-from-file"))
    {
        return None;
    }
    let paths: Vec<String> = before
        .iter()
        .chain(after.iter().flatten())
        .map(|s| s.to_string())
        .collect();
    (!paths.is_empty()).then_some((paths, head()))
}

pub(super) fn restore(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, before, after) = operands(args, &["-s", "--source", "--conflict"]);
    if opts
        .iter()
        .any(|o| matches!(*o, "-p" | "--patch") || o.starts_with("--pathspec-from-file"))
    {
        return None;
    }
    let staged = has(&opts, 'S', &["--staged"]);
    let worktree = has(&opts, 'W', &["--worktree"]);
    if staged && !worktree {
        return None;
    }
    let mut rev = None;
    for (i, o) in opts.iter().enumerate() {
        if let Some(v) = o.strip_prefix("--source=") {
            rev = Some(v.to_string());
        } else if matches!(*o, "-s" | "--source") {
            rev = opts.get(i + 1).map(|v| v.to_string());
        } else if let Some(v) = o.strip_prefix("-s").filter(|v| !v.is_empty()) {
            rev = Some(v.to_string());
        }
    }
    let mut paths: Vec<String> = before.iter().map(|s| s.to_string()).collect();
    paths.extend(after.unwrap_or_default().iter().map(|s| s.to_string()));
    if paths.is_empty() {
        return None;
    }
    let loses = match rev {
        Some(rev) => Loses::SinceCommit {
            rev,
            untracked: false,
            ignored: false,
        },
        // --staged --worktree restores both from HEAD.
        None if staged => head(),
        None => Loses::SinceIndex,
    };
    Some((paths, loses))
}

pub(super) fn reset(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, _, _) = operands(args, &[]);
    opts.contains(&"--hard").then(|| (Vec::new(), head()))
}

pub(super) fn switch(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, _, _) = operands(args, &["-c", "-C", "--orphan", "--conflict"]);
    has(&opts, 'f', &["--force", "--discard-changes"]).then(|| (Vec::new(), head()))
}

pub(super) fn stash(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (args, push) = match args.split_first() {
        None => (args, true),
        Some((&"push", rest)) => (rest, true),
        Some((&"save", rest)) => (rest, false),
        Some((a, _)) if a.starts_with('-') => (args, true),
        Some(_) => return None,
    };
    let (opts, before, after) = operands(args, &["-m", "--message", "--pathspec-from-file"]);
    if opts.iter().any(|o| {
        matches!(*o, "-p" | "--patch" | "--staged" | "-S") || o.starts_with("--pathspec-from-file")
    }) {
        return None;
    }
    let all = has(&opts, 'a', &["--all"]);
    let untracked = all || has(&opts, 'u', &["--include-untracked"]);
    let loses = Loses::SinceCommit {
        rev: "HEAD".into(),
        untracked,
        ignored: all,
    };
    // `save MESSAGE` takes no paths; `push` takes them after its options.
    let mut paths: Vec<String> = Vec::new();
    if push {
        paths.extend(before.iter().map(|s| s.to_string()));
    }
    paths.extend(after.unwrap_or_default().iter().map(|s| s.to_string()));
    Some((paths, loses))
}

pub(super) fn clean(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, before, after) = operands(args, &["-e", "--exclude"]);
    let force = has(&opts, 'f', &["--force"]);
    if !force || has(&opts, 'n', &["--dry-run"]) || has(&opts, 'i', &["--interactive"]) {
        return None;
    }
    let mut paths: Vec<String> = before.iter().map(|s| s.to_string()).collect();
    paths.extend(after.unwrap_or_default().iter().map(|s| s.to_string()));
    let only_ignored = opts
        .iter()
        .any(|o| o.starts_with('-') && !o.starts_with("--") && o.contains('X'));
    let ignored = opts
        .iter()
        .any(|o| o.starts_with('-') && !o.starts_with("--") && o.contains('x'));
    Some((
        paths,
        Loses::Untracked {
            dirs: has(&opts, 'd', &[]),
            ignored,
            only_ignored,
        },
    ))
}
