//! The commands the shell reader knows, as one table: for each writer,
//! which of its words name the file it writes and how it writes it; for
//! each wrapper, which of its options take a value before the command it
//! runs. As ripgrep keeps its flags in one list, every writer is a row of
//! [`WRITERS`] and every wrapper a row of [`WRAPPERS`]: the reader
//! dispatches on them, each row carries the examples its test runs, and
//! docs/shell.md's tables are checked against them row by row (the tests
//! below), so a command added here is documented and tested where it is
//! added.

use std::path::PathBuf;

use super::parse::Dir;
use super::write::{awk_option, perl_option, sed_option, How, Opt};

/// A command that writes files, and how fsview finds them.
pub struct Writer {
    /// Its names (the last part of the path it is run by); `python*`: the
    /// name, or the name and a version (`python3`, `python3.12`). For a
    /// redirection, its operators (no command has them as a name).
    pub names: &'static [&'static str],
    /// Which of its words name the files it writes (docs/shell.md's
    /// words).
    pub file: &'static str,
    /// How it writes them, as the gate is asked (unless `file` says
    /// otherwise for an option).
    pub asks: How,
    /// How the reader finds them.
    pub(super) files: Files,
    /// Command lines, each with the writes the reader finds in it (`PATH
    /// HOW`, comma-separated; empty: none; a copy's destination as named,
    /// whether or not it is a directory).
    pub examples: &'static [(&'static str, &'static str)],
}

/// How a writer names its files.
#[derive(Clone, Copy)]
pub(super) enum Files {
    /// A redirection, read by the parser for every command.
    Redirection,
    /// Each operand (`tee`; `-a` appends).
    Operands,
    /// With an option for in place, each file after the script (the first
    /// word that is no option, unless an option gave the script).
    InPlace(fn(&str) -> Option<Opt>),
    /// The value of an option: its letter, its long name, how it writes.
    Options(&'static [(char, &'static str, How)]),
    /// The destination of a copy (`cp`, `mv`, `install`, `ln`).
    Destination,
    /// Each operand, with a size that may shrink it (`truncate -s`).
    Truncated,
    /// `of=FILE` (`dd`; `conv=notrunc`: in place).
    Of,
    /// Each operand, as an append: nothing is lost (`touch`).
    Touched,
    /// Python code opening a literal path.
    Python,
    /// JavaScript code writing a literal path.
    Node,
}

/// Every writer fsview knows, in docs/shell.md's order.
pub const WRITERS: &[Writer] = &[
    Writer {
        names: &[">", ">|", "&>", ">&", "N>"],
        file: "the word after it (`2> err.log` too)",
        asks: How::Whole,
        files: Files::Redirection,
        examples: &[
            ("make > out.log 2> err.log", "out.log whole, err.log whole"),
            ("make >& all.log", "all.log whole"),
        ],
    },
    Writer {
        names: &[">>", "&>>"],
        file: "the word after it",
        asks: How::Append,
        files: Files::Redirection,
        examples: &[("make >> build.log 2>&1", "build.log append")],
    },
    Writer {
        names: &["<>"],
        file: "the word after it",
        asks: How::Edit,
        files: Files::Redirection,
        examples: &[("exec 3<> f.bin", "f.bin edit")],
    },
    Writer {
        names: &["tee"],
        file: "each operand (`-a`, `--append`: an append)",
        asks: How::Whole,
        files: Files::Operands,
        examples: &[
            ("make | tee a.log", "a.log whole"),
            ("make | tee -a a.log b.log", "a.log append, b.log append"),
        ],
    },
    Writer {
        names: &["sed"],
        file: "with `-i`/`--in-place`, each file after the script",
        asks: How::Edit,
        files: Files::InPlace(sed_option),
        examples: &[
            ("sed -i -e s/a/b/ f.txt g.txt", "f.txt edit, g.txt edit"),
            ("sed s/a/b/ f.txt", ""),
        ],
    },
    Writer {
        names: &["perl", "ruby"],
        file: "with `-i`, each file after the script (`-0` and `-l` take digits only, so `-0pi` and `-pli` are `-i` too)",
        asks: How::Edit,
        files: Files::InPlace(perl_option),
        examples: &[
            ("perl -pi -e 's/a/b/' f.pl", "f.pl edit"),
            ("perl -0777pi -e 's/a/b/' f.pl", "f.pl edit"),
            ("ruby -i.bak -pe 'x' f.rb", "f.rb edit"),
            ("perl -ne 'print' f.pl", ""),
        ],
    },
    Writer {
        names: &["gawk", "awk"],
        file: "with `-i inplace` (`--include`), each file after the program",
        asks: How::Edit,
        files: Files::InPlace(awk_option),
        examples: &[
            ("gawk -i inplace '{sub(/a/,\"b\")}1' f.txt g.txt", "f.txt edit, g.txt edit"),
            ("awk -v n=1 -i inplace -f fix.awk f.txt", "f.txt edit"),
            ("gawk -i lib.awk '{print}' f.txt", ""),
            ("awk -F: '{print $1}' f.txt", ""),
        ],
    },
    Writer {
        names: &["sort"],
        file: "`-o FILE`, `--output=FILE`",
        asks: How::Whole,
        files: Files::Options(&[('o', "--output", How::Whole)]),
        examples: &[("sort -u -o s.txt s.txt", "s.txt whole"), ("sort s.txt", "")],
    },
    Writer {
        names: &["curl"],
        file: "`-o FILE`, `--output FILE` (`-sSLo FILE`; `-` is standard output)",
        asks: How::Whole,
        files: Files::Options(&[('o', "--output", How::Whole)]),
        examples: &[
            ("curl -fsSLo f.sh https://x", "f.sh whole"),
            ("curl -O https://x/f", ""),
        ],
    },
    Writer {
        names: &["wget"],
        file: "`-O FILE`, `--output-document` (`-qO FILE`), its log `-o FILE`; `-a FILE` appends to the log",
        asks: How::Whole,
        files: Files::Options(&[
            ('O', "--output-document", How::Whole),
            ('o', "--output-file", How::Whole),
            ('a', "--append-output", How::Append),
        ]),
        examples: &[
            ("wget -qO f.tgz https://x", "f.tgz whole"),
            ("wget -a w.log -O - https://x", "w.log append"),
        ],
    },
    Writer {
        names: &["cp", "mv", "install"],
        file: "the destination; a directory (or `-t DIR`): the file of the source's name in it. None with `-n` (`mv`: unless a later `-f`), a `--backup` (not `--backup=none` or `off`), `install -d`. A symlink there: `mv` and `cp --remove-destination` replace it (nothing asked), `cp` and `install` write through it. `cp -l` and `cp -s` make links, as `ln`. A directory copied (`-r`, `-a`): each file under the destination it would overwrite (the first 10,000 files of the source). What `mv` moves from someone's file is not the agent's own output after it",
        asks: How::Whole,
        files: Files::Destination,
        examples: &[
            ("cp a.txt b.txt", "b.txt whole"),
            ("mv -t dir a.txt", "dir whole"),
            ("cp -n a.txt b.txt", ""),
        ],
    },
    Writer {
        names: &["ln"],
        file: "with `-f`, the link's name; a symlink there is replaced, not the file behind it (nothing asked; `-n`: a link to a directory too). Without `-f` nothing there is lost, and nothing is asked. A write through a link the same command line made is a write of the file it names",
        asks: How::Whole,
        files: Files::Destination,
        examples: &[("ln -sf t link", "link whole"), ("ln -s t link", "link whole")],
    },
    Writer {
        names: &["truncate"],
        file: "each operand, with `-s SIZE` (not `+SIZE`, which only grows it)",
        asks: How::Whole,
        files: Files::Truncated,
        examples: &[
            ("truncate -s 0 big.log", "big.log whole"),
            ("truncate -s +1M big.log", ""),
        ],
    },
    Writer {
        names: &["dd"],
        file: "`of=FILE` (`conv=notrunc`: an edit in place)",
        asks: How::Whole,
        files: Files::Of,
        examples: &[
            ("dd if=/dev/zero of=d.img count=1", "d.img whole"),
            ("dd if=x of=d.img conv=notrunc", "d.img edit"),
        ],
    },
    Writer {
        names: &["touch"],
        file: "each operand: it makes a file or sets its times",
        asks: How::Append,
        files: Files::Touched,
        examples: &[("touch -d yesterday a b", "a append, b append")],
    },
    Writer {
        names: &["python*", "pypy3"],
        file: "code (`-c`, or on standard input: `python3 - <<'EOF'`) opening a literal path: `open('f', 'w')`, `Path('f').write_text(` (`'a'`: an append, `'r+'`: an edit)",
        asks: How::Whole,
        files: Files::Python,
        examples: &[
            ("python3 -c \"open('o.txt', 'w').write('x')\"", "o.txt whole"),
            ("python3.12 -c \"open('o.txt', 'a')\"", "o.txt append"),
            ("python3 script.py", ""),
        ],
    },
    Writer {
        names: &["node", "nodejs", "bun", "deno"],
        file: "code (`-e`, `-p`, or on standard input) writing a literal path: `writeFileSync('f'` (`appendFileSync`: an append)",
        asks: How::Whole,
        files: Files::Node,
        examples: &[(
            "node -e \"require('fs').writeFileSync('o.json', '{}')\"",
            "o.json whole",
        )],
    },
];

/// The writer a command of this name is (the last part of its path), when
/// fsview knows it.
pub(super) fn writer(base: &str) -> Option<&'static Writer> {
    WRITERS
        .iter()
        .filter(|w| !matches!(w.files, Files::Redirection))
        .find(|w| w.names.iter().any(|n| named(n, base)))
}

fn named(name: &str, base: &str) -> bool {
    match name.strip_suffix('*') {
        Some(stem) => base
            .strip_prefix(stem)
            .is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b'.')),
        None => name == base,
    }
}

/// A command that runs the rest of its words as a command of its own.
pub struct Wrapper {
    /// Its names; two words (`uv run`): the name and its subcommand.
    pub names: &'static [&'static str],
    /// Its options that take the next word as their value.
    pub takes_value: &'static [&'static str],
    /// What comes between its options and the command it runs.
    pub then: Then,
    /// Options whose value is the directory the command runs in (`env
    /// -C DIR`): what it names is looked for there. Redirections stay the
    /// outer shell's.
    pub chdir: &'static [&'static str],
    /// Command lines, each with the writes the reader finds in it.
    pub examples: &'static [(&'static str, &'static str)],
}

/// What comes between a wrapper's options and the command it runs.
#[derive(Clone, Copy)]
pub enum Then {
    /// Nothing.
    Command,
    /// One word, which it names (`timeout 5`: the time).
    Word(&'static str),
    /// `NAME=VALUE` words (`env`).
    Assignments,
    /// A mask, unless `-c`/`--cpu-list` gave the list (`taskset`).
    Mask,
}

/// Every wrapper fsview looks through, in docs/shell.md's order.
pub const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &[
            "nohup", "command", "builtin", "exec", "time", "setsid", "unbuffer",
        ],
        takes_value: &[],
        then: Then::Command,
        chdir: &[],
        examples: &[
            ("nohup sed -i s/a/b/ f", "f edit"),
            ("setsid -f cp a b", "b whole"),
        ],
    },
    Wrapper {
        names: &["env"],
        takes_value: &["-u", "-C", "-S", "--unset", "--chdir", "--split-string"],
        then: Then::Assignments,
        chdir: &["-C", "--chdir"],
        examples: &[
            ("env -u X A=1 sed -i s/a/b/ f", "f edit"),
            ("env -C sub sed -i s/a/b/ f > log", "log whole, sub/f edit"),
            ("env --chdir=/srv A=1 tee f", "/srv/f whole"),
        ],
    },
    Wrapper {
        names: &["sudo", "doas"],
        takes_value: &[
            "-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t", "--user", "--group", "--chdir",
        ],
        then: Then::Command,
        chdir: &["-D", "--chdir"],
        examples: &[
            ("sudo -u root tee /etc/x.conf", "/etc/x.conf whole"),
            ("sudo -D /etc tee x.conf", "/etc/x.conf whole"),
        ],
    },
    Wrapper {
        names: &["nice"],
        takes_value: &["-n"],
        then: Then::Command,
        chdir: &[],
        examples: &[("nice -n 5 sort -o s s", "s whole")],
    },
    Wrapper {
        names: &["timeout"],
        takes_value: &["-s", "-k", "--signal", "--kill-after"],
        then: Then::Word("the time"),
        chdir: &[],
        examples: &[("timeout -k 1 5 cp a b", "b whole")],
    },
    Wrapper {
        names: &["stdbuf"],
        takes_value: &["-i", "-o", "-e"],
        then: Then::Command,
        chdir: &[],
        examples: &[("stdbuf -o L tee out.txt", "out.txt whole")],
    },
    Wrapper {
        names: &["ionice"],
        takes_value: &["-c", "-n", "-p", "-P", "-u"],
        then: Then::Command,
        chdir: &[],
        examples: &[("ionice -c 3 cp a b", "b whole")],
    },
    Wrapper {
        names: &["taskset"],
        takes_value: &["-c", "--cpu-list"],
        then: Then::Mask,
        chdir: &[],
        examples: &[
            ("taskset -c 0,1 cp a b", "b whole"),
            ("taskset 0x3 cp a b", "b whole"),
        ],
    },
    Wrapper {
        names: &["chrt"],
        takes_value: &[],
        then: Then::Word("the priority"),
        chdir: &[],
        examples: &[("chrt -f 10 cp a b", "b whole")],
    },
    Wrapper {
        names: &["flock"],
        takes_value: &["-w", "-E", "--timeout", "--conflict-exit-code"],
        then: Then::Word("the lock file"),
        chdir: &[],
        examples: &[("flock -w 5 /tmp/l sed -i s/a/b/ f", "f edit")],
    },
    Wrapper {
        names: &["npx", "bunx"],
        takes_value: &["-p", "--package"],
        then: Then::Command,
        chdir: &[],
        examples: &[
            ("npx -y tsx -e \"require('fs').writeFileSync('o', '')\"", ""),
            ("npx --package=x tee out.txt", "out.txt whole"),
        ],
    },
    Wrapper {
        names: &["uv run"],
        takes_value: &[
            "--with",
            "--python",
            "-p",
            "--project",
            "--package",
            "--env-file",
            "--extra",
            "--group",
            "--index",
            "--directory",
        ],
        then: Then::Command,
        chdir: &["--directory"],
        examples: &[
            (
                "uv run --with rich python -c \"open('o.txt', 'w')\"",
                "o.txt whole",
            ),
            (
                "uv run --directory sub python -c \"open('o.txt', 'w')\"",
                "sub/o.txt whole",
            ),
        ],
    },
    Wrapper {
        names: &["poetry run", "pipenv run"],
        takes_value: &[],
        then: Then::Command,
        chdir: &[],
        examples: &[("poetry run python -c \"open('o.txt', 'w')\"", "o.txt whole")],
    },
];

/// A command's words without the wrappers that run the rest as a command
/// of its own ([`WRAPPERS`]; `flock FILE -c SCRIPT` runs a script, read as
/// one).
pub(super) fn strip_wrappers(words: &[Option<String>]) -> &[Option<String>] {
    unwrap(words, &Dir::Known(PathBuf::new())).words
}

/// A command seen through its wrappers.
pub(super) struct Unwrapped<'a> {
    /// The command the wrappers run, as words (none after `env -S`).
    pub words: &'a [Option<String>],
    /// Where it runs: the shell's directory, or where a wrapper's
    /// [`Wrapper::chdir`] option sends it (unknown when that is not a
    /// literal word).
    pub dir: Dir,
    /// `env -S STRING ARGS`: the command line it runs, STRING then ARGS,
    /// as a script to read (`None` when a word of it is not literal).
    pub split: Option<Option<String>>,
}

/// [`strip_wrappers`], with where the command runs and what `env -S`
/// gives it. Options are read as getopt reads them: short ones grouped
/// (`-iC DIR`, `-CDIR`), long ones by any unambiguous start (`--ch DIR`,
/// `--chdir=DIR`).
pub(super) fn unwrap<'a>(words: &'a [Option<String>], dir: &Dir) -> Unwrapped<'a> {
    let mut w = words;
    let mut dir = dir.clone();
    loop {
        let done = |w, dir| Unwrapped {
            words: w,
            dir,
            split: None,
        };
        let Some((Some(name), rest)) = w.split_first() else {
            return done(w, dir);
        };
        let base = name.rsplit('/').next().unwrap_or(name);
        let Some((wrapper, before, rest)) = wrapper(base, rest) else {
            return done(w, dir);
        };
        if base == "flock"
            && rest
                .iter()
                .any(|a| matches!(a.as_deref(), Some("-c" | "--command")))
        {
            return done(w, dir);
        }
        // Options before a subcommand (`uv --directory D run`) are read
        // first, the same way.
        let mut split = None;
        let mut opts = 0;
        for (words, at) in [(before, &mut 0), (rest, &mut opts)] {
            while let Some(a) = words.get(*at) {
                let Some(a) = a.as_deref() else {
                    break;
                };
                if a == "--" {
                    *at += 1;
                    break;
                }
                if !a.starts_with('-') || a == "-" {
                    break;
                }
                let o = option(wrapper, a, words.get(*at + 1));
                if let Some(to) = o.chdir {
                    dir = dir.cd(to.as_deref());
                }
                if o.split.is_some() {
                    split = o.split;
                }
                *at += o.words;
            }
        }
        let n = match wrapper.then {
            Then::Command => opts,
            Then::Word(_) => opts + 1,
            Then::Assignments => {
                let mut i = opts;
                while rest
                    .get(i)
                    .is_some_and(|a| a.as_deref().is_some_and(|a| a.contains('=')))
                {
                    i += 1;
                }
                i
            }
            Then::Mask => {
                // With -c the list is the option's; else a mask comes first.
                let listed = rest[..opts.min(rest.len())].iter().any(|a| {
                    a.as_deref()
                        .is_some_and(|a| a.starts_with("-c") || a == "--cpu-list")
                });
                opts + usize::from(!listed)
            }
        };
        if let Some(line) = split {
            // The string is the command; the words after it, its
            // arguments.
            let args = rest.get(n.min(rest.len())..).unwrap_or_default();
            let script = line.and_then(|l| {
                let quoted: Option<Vec<String>> =
                    args.iter().map(|a| a.as_deref().map(shell_quote)).collect();
                quoted.map(|q| std::iter::once(l).chain(q).collect::<Vec<_>>().join(" "))
            });
            return Unwrapped {
                words: &[],
                dir,
                split: Some(script),
            };
        }
        if n > rest.len() {
            return done(&[], dir);
        }
        w = &rest[n..];
    }
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// What one option word of a wrapper does.
struct OptionWord {
    /// Words it takes: itself, and its value when that is the next word.
    words: usize,
    /// A directory option's value (`None` inside: not literal).
    chdir: Option<Option<String>>,
    /// `env -S`'s value.
    split: Option<Option<String>>,
}

/// The option word `a` of `wrapper`; `next`, the word after it.
fn option(wrapper: &Wrapper, a: &str, next: Option<&Option<String>>) -> OptionWord {
    let named = |opt: &str, value: Option<Option<String>>, words: usize| {
        let takes = |list: &[&str]| list.contains(&opt);
        OptionWord {
            words,
            chdir: value.clone().filter(|_| takes(wrapper.chdir)),
            split: value.filter(|_| {
                wrapper.names.contains(&"env") && matches!(opt, "-S" | "--split-string")
            }),
        }
    };
    if let Some(long) = a.strip_prefix("--") {
        let (name, inline) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (long, None),
        };
        let Some(full) = long_option(wrapper, name) else {
            return OptionWord {
                words: 1,
                chdir: None,
                split: None,
            };
        };
        return match inline {
            Some(v) => named(full, Some(Some(v.to_string())), 1),
            None => named(full, Some(next.cloned().flatten()), 2),
        };
    }
    // Short options grouped: the first that takes a value takes the rest
    // of the word, else the next word.
    for (i, c) in a.char_indices().skip(1) {
        let opt = format!("-{c}");
        if wrapper.takes_value.iter().any(|t| *t == opt) {
            let attached = &a[i + c.len_utf8()..];
            return match attached {
                "" => named(&opt, Some(next.cloned().flatten()), 2),
                v => named(&opt, Some(Some(v.to_string())), 1),
            };
        }
    }
    OptionWord {
        words: 1,
        chdir: None,
        split: None,
    }
}

/// The long option with a value that `name` names, exactly or by an
/// unambiguous start, as getopt_long takes it (`--ch` for `--chdir`).
fn long_option(wrapper: &Wrapper, name: &str) -> Option<&'static str> {
    let longs = wrapper
        .takes_value
        .iter()
        .filter_map(|t| t.strip_prefix("--").map(|n| (n, *t)));
    let mut found = None;
    for (n, t) in longs {
        if n == name {
            return Some(t);
        }
        if !name.is_empty() && n.starts_with(name) {
            if found.is_some() {
                return None; // ambiguous
            }
            found = Some(t);
        }
    }
    found
}

/// Some of a command's words, each literal or not (`None`).
type Words<'a> = &'a [Option<String>];

/// The wrapper a command of this name is, the words between its name and
/// its subcommand (options: `uv --directory D run`), and the words after.
fn wrapper<'a>(
    base: &str,
    rest: &'a [Option<String>],
) -> Option<(&'static Wrapper, Words<'a>, Words<'a>)> {
    for w in WRAPPERS {
        for n in w.names {
            match n.split_once(' ') {
                Some((name, sub)) if name == base => {
                    let mut i = 0;
                    while let Some(Some(a)) = rest.get(i) {
                        if !a.starts_with('-') {
                            break;
                        }
                        let takes = w.takes_value.contains(&a.as_str())
                            || GLOBAL_WITH_VALUE.contains(&a.as_str());
                        i += if takes { 2 } else { 1 };
                    }
                    if rest.get(i).and_then(|s| s.as_deref()) == Some(sub) {
                        return Some((w, &rest[..i], &rest[i + 1..]));
                    }
                }
                Some(_) => {}
                None if *n == base => return Some((w, &[], rest)),
                None => {}
            }
        }
    }
    None
}

/// Options with a value that a two-word wrapper's command takes before its
/// subcommand (`uv --cache-dir D run`), besides its own.
const GLOBAL_WITH_VALUE: &[&str] = &["--cache-dir", "--config-file", "--color"];

/// docs/shell.md's table of writers, as the table above renders it.
pub fn writers_doc() -> Vec<String> {
    let mut rows = vec![
        "| the command | the file it writes | asks the gate as |".to_string(),
        "|---|---|---|".to_string(),
    ];
    for w in WRITERS {
        let asks = match w.asks {
            How::Whole => "a whole-file write",
            How::Edit => "an edit in place",
            How::Append => "nothing (nothing is lost)",
        };
        rows.push(format!("| {} | {} | {asks} |", names(w.names), w.file));
    }
    rows
}

/// docs/shell.md's table of wrappers, as the table above renders it.
pub fn wrappers_doc() -> Vec<String> {
    let mut rows = vec![
        "| the wrapper | its options with a value | the command it runs comes after |".to_string(),
        "|---|---|---|".to_string(),
    ];
    for w in WRAPPERS {
        let mut then = match w.then {
            Then::Command => "its options".to_string(),
            Then::Word(what) => format!("its options and {what}"),
            Then::Assignments => "its options and its `NAME=VALUE` words".to_string(),
            Then::Mask => "its options and a mask, unless `-c` gave the list".to_string(),
        };
        if !w.chdir.is_empty() {
            then.push_str(&format!(
                "; the files it names are in the directory given by {}",
                names(w.chdir)
            ));
        }
        let opts = match w.takes_value {
            [] => "none".to_string(),
            v => names(v),
        };
        rows.push(format!("| {} | {opts} | {then} |", names(w.names)));
    }
    rows
}

fn names(n: &[&str]) -> String {
    n.iter()
        .map(|n| format!("`{}`", n.replace('|', "\\|")))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The writes `command` makes, as the examples write them.
    fn found(command: &str) -> String {
        super::super::writes(command)
            .iter()
            .map(|w| {
                let how = match w.how {
                    How::Whole => "whole",
                    How::Edit => "edit",
                    How::Append => "append",
                };
                format!("{} {how}", w.path.display())
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    #[test]
    fn every_writer_finds_what_its_examples_say() {
        for w in WRITERS {
            assert!(!w.examples.is_empty(), "{:?}: no example", w.names);
            for (command, want) in w.examples {
                assert_eq!(found(command), *want, "{:?}: {command}", w.names);
            }
        }
    }

    #[test]
    fn every_wrapper_is_looked_through_as_its_examples_say() {
        for w in WRAPPERS {
            assert!(!w.examples.is_empty(), "{:?}: no example", w.names);
            for (command, want) in w.examples {
                assert_eq!(found(command), *want, "{:?}: {command}", w.names);
            }
        }
    }

    #[test]
    fn each_name_is_one_writer_or_wrapper() {
        let mut seen: Vec<&str> = Vec::new();
        for n in WRITERS
            .iter()
            .flat_map(|w| w.names)
            .chain(WRAPPERS.iter().flat_map(|w| w.names))
        {
            assert!(!seen.contains(n), "{n} twice");
            seen.push(n);
        }
        assert!(writer("python3.12").is_some() && writer("python").is_some());
        assert!(writer("pythonista").is_none() && writer(">").is_none());
    }

    /// The table under `heading` in docs/shell.md, line by line.
    fn doc_table(heading: &str) -> Vec<String> {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/shell.md"))
                .expect("docs/shell.md");
        let at = doc
            .find(heading)
            .unwrap_or_else(|| panic!("docs/shell.md: no {heading:?}"));
        doc[at..]
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .map(String::from)
            .collect()
    }

    fn same_rows(heading: &str, code: Vec<String>) {
        let doc = doc_table(heading);
        for (i, c) in code.iter().enumerate() {
            assert!(
                doc.get(i) == Some(c),
                "docs/shell.md, {heading:?}, row {i}:\n  docs: {:?}\n  code: {c:?}\n\nThe table as the code has it:\n{}\n",
                doc.get(i),
                code.join("\n")
            );
        }
        assert_eq!(
            doc.len(),
            code.len(),
            "docs/shell.md, {heading:?}: rows past the code's"
        );
    }

    #[test]
    fn the_docs_table_of_writers_is_this_table() {
        same_rows("## The writes it gates", writers_doc());
    }

    #[test]
    fn the_docs_table_of_wrappers_is_this_table() {
        same_rows("### The wrappers it looks through", wrappers_doc());
    }
}
