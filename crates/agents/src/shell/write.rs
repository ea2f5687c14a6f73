//! The files a command line writes ([`writes`]), read by the table of
//! commands fsview knows ([`super::commands`]).

use std::path::{Path, PathBuf};

use super::commands::{strip_wrappers, unwrap, writer, Files};
use super::filter::{perl_script, sed_script};
use super::parse::{commands, Dir, Redirect, Simple};
use crate::event::{Edits, Replace};

/// How a command writes a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// Replaces all of it (`>`, `tee`, `cp` onto it): needs a fresh view of
    /// the whole file, as a write tool does.
    Whole,
    /// Changes it in place (`sed -i`, `perl -i`): needs a fresh view, as an
    /// edit tool does.
    Edit,
    /// Adds to its end (`>>`, `tee -a`). Nothing that was there is lost,
    /// so it needs no view: a log or a scratch file grows as it always
    /// did. Views of the file then stop being fresh, as after any change.
    Append,
}

/// A file a command writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    /// As the command names it, from where the command line starts.
    pub path: PathBuf,
    pub how: How,
    /// When `path` is a directory, the file written is the one of this
    /// name in it (`cp a.txt dir`).
    pub into: Option<String>,
    /// What a whole-file write puts in the file, when the command spells
    /// it out and writes the file only once.
    pub text: Option<String>,
    /// The file whose bytes it copies there (`cp SRC DEST`, `install`,
    /// `mv`), from where the command line starts.
    pub from: Option<PathBuf>,
    /// The command runs in the background (`&`): it may go on writing the
    /// file after the command line returns.
    pub background: bool,
    /// A symlink at the destination is replaced, not written through (`ln
    /// -f`, `mv`, `cp --remove-destination`); `None`: written through.
    pub link: Option<Link>,
    /// What an in-place edit does, when fsview can make it of another
    /// text (a replacement of literal text, [`sed_replacement`]; a sed
    /// or perl script of substitutions, [`sed_script`], [`perl_script`]):
    /// then it can be merged with a change the file had since the agent's
    /// view, as an edit tool's can.
    pub edit: Option<Edits>,
}

/// What a command does to a symlink where it writes: it replaces the link,
/// and the file the link points to is not touched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Link {
    /// It makes a link (`ln`, `cp -l`, `cp -s`): what it leaves there holds
    /// no one's text, but names the file its source names.
    pub makes: bool,
    /// A link to a directory is replaced too (`ln -n`, `-T`), where
    /// otherwise the command writes into the directory it points to.
    pub even_to_dir: bool,
    /// The link it makes is a symbolic one (`ln -s`, `cp -s`): its source
    /// is read from the link's directory.
    pub symbolic: bool,
    /// It moves its source there (`mv`): the source's text is nowhere
    /// else afterwards.
    pub moves: bool,
    /// It makes a link only where nothing is (`ln` without `-f`, `cp -n
    /// -s`): nothing there is lost, and nothing is gated; the link is
    /// known for the writes after it in the command line.
    pub keeps: bool,
}

/// The files a command line writes, as far as it names them literally;
/// never a name that is no file ([`not_a_file`]).
pub fn writes(command: &str) -> Vec<Write> {
    let mut out: Vec<Write> = Vec::new();
    for cmd in commands(command, &Dir::Known(PathBuf::new())) {
        command_writes(&cmd, &mut out);
    }
    out.retain(|w| !not_a_file(&w.path));
    // A text is what the file holds only when nothing else writes it.
    let paths: Vec<PathBuf> = out.iter().map(|w| w.path.clone()).collect();
    for w in &mut out {
        if paths.iter().filter(|p| **p == w.path).count() > 1 {
            w.text = None;
        }
    }
    // A redirection of a group or a loop is each of its commands'.
    let mut seen = Vec::new();
    out.retain(|w| {
        let key = (w.path.clone(), w.how, w.into.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    out
}

/// Whether `path` (absolute, or relative to where the command runs) names
/// no file of anyone's: `/dev/null`, the command's own standard streams and
/// descriptors (`/dev/stdout`, `/dev/stderr`, `/dev/stdin`, `/dev/fd/N`,
/// `/proc/self/fd/N`, `/proc/thread-self/fd/N`), its terminal (`/dev/tty`)
/// and bash's network names (`/dev/tcp/...`, `/dev/udp/...`).
///
/// Answered by the name as written (`..` taken away by the letter), never
/// by resolving it: in the hook's process `/dev/stderr` is the hook's own
/// standard error, which may be a file, and not what the command writes.
pub fn not_a_file(path: &Path) -> bool {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in path.components() {
        match c {
            std::path::Component::RootDir => parts.clear(),
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::Normal(n) => parts.push(n),
            _ => {}
        }
    }
    if !path.is_absolute() {
        return false;
    }
    let parts: Vec<&str> = parts.iter().filter_map(|p| p.to_str()).collect();
    matches!(
        parts.as_slice(),
        ["dev", "null" | "stdin" | "stdout" | "stderr" | "tty"]
            | ["dev", "fd" | "tcp" | "udp", ..]
            | ["proc", "self" | "thread-self", "fd", ..]
    )
}

pub(super) fn command_writes(cmd: &Simple, out: &mut Vec<Write>) {
    // The source of the copy `push` is given next.
    let from = std::cell::Cell::new(None);
    let link = std::cell::Cell::new(None);
    let edit = std::cell::Cell::new(None);
    // Redirections are the shell's, in its directory; what the command
    // names is in the one its wrappers send it to (`env -C DIR`).
    let seen = unwrap(&cmd.words, &cmd.dir);
    let (words, runs_in) = (seen.words, seen.dir);
    let mut push_in =
        |dir: &Dir, name: &str, how: How, into: Option<String>, text: Option<String>| {
            if let Some(path) = dir.join(name) {
                out.push(Write {
                    path,
                    how,
                    into,
                    text: text.filter(|_| how == How::Whole),
                    from: from.take(),
                    background: cmd.background,
                    link: link.take(),
                    edit: edit.take(),
                });
            }
        };
    // What the command prints, when it spells it out.
    let printed = printed(cmd);
    for r in &cmd.redirects {
        if let Redirect::Out { path: Some(p), how } = r {
            if !p.is_empty() {
                push_in(&cmd.dir, p, *how, None, printed.clone());
            }
        }
    }
    let mut push = |name: &str, how: How, into: Option<String>, text: Option<String>| {
        push_in(&runs_in, name, how, into, text)
    };
    let Some((Some(name), args)) = words.split_first() else {
        return;
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    let args: Vec<Option<&str>> = args.iter().map(|a| a.as_deref()).collect();
    let Some(writer) = writer(base) else {
        return;
    };
    match writer.files {
        Files::Redirection => {}
        Files::Operands => {
            let mut how = How::Whole;
            let mut files = Vec::new();
            let mut opts = true;
            for a in &args {
                match a {
                    Some("--") if opts => opts = false,
                    Some("-a" | "--append") if opts => how = How::Append,
                    Some(o) if opts && o.starts_with('-') && o.len() > 1 => {
                        // Short options together (`-ai`): one of them
                        // may be -a. Any other option names no file.
                        let append =
                            !o.starts_with("--") && o.trim_start_matches('-').contains('a');
                        how = if append { How::Append } else { how };
                    }
                    Some(f) => files.push(*f),
                    None => {}
                }
            }
            let text = cmd.stdin().flatten().map(String::from);
            for f in files {
                push(f, how, None, text.clone());
            }
        }
        Files::InPlace(option) => {
            let replacement = match base {
                "sed" => sed_replacement(&args)
                    .map(|r| Edits::Replace(vec![r]))
                    .or_else(|| sed_script(&args).map(Edits::Filter)),
                "perl" => perl_script(&args).map(Edits::Filter),
                _ => None,
            };
            for f in in_place_files(&args, option) {
                edit.set(replacement.clone());
                push(f, How::Edit, None, None);
            }
        }
        // The file an option names as where the output goes: `sort -o`,
        // `curl -o`/`--output`, `wget -O`/`--output-document` (and its log,
        // `-o`; `-a` appends to it).
        Files::Options(options) => {
            let mut it = args.iter().peekable();
            while let Some(a) = it.next() {
                let Some(a) = a else { continue };
                if *a == "--" {
                    break;
                }
                for (short, long, how) in options {
                    let value = if a == long {
                        it.next().copied().flatten()
                    } else if let Some(v) = a.strip_prefix(&format!("{long}=")) {
                        Some(v)
                    } else if a.starts_with('-') && !a.starts_with("--") {
                        // A cluster of short options (`-sSo FILE`, `-qO
                        // FILE`): the letter's value is the rest of the
                        // word, or the next word.
                        match a[1..].split_once(*short) {
                            Some((_, "")) => it.next().copied().flatten(),
                            Some((_, rest)) => Some(rest),
                            None => None,
                        }
                    } else {
                        None
                    };
                    // `-` is standard output.
                    if let Some(f) = value.filter(|f| *f != "-") {
                        push(f, *how, None, None);
                    }
                }
            }
        }
        Files::Destination => {
            for (dest, into, source, replaces) in copies(base, &args) {
                from.set(source.and_then(|f| runs_in.join(f)));
                link.set(replaces);
                push(dest, How::Whole, into, None);
            }
        }
        Files::Touched => {
            // It creates a file or sets its times: nothing that was there
            // is lost, as with an append.
            let mut it = args.iter();
            let mut opts = true;
            while let Some(a) = it.next() {
                match a {
                    Some("--") if opts => opts = false,
                    Some("-d" | "-r" | "-t") if opts => {
                        it.next();
                    }
                    Some(o) if opts && o.starts_with('-') && o.len() > 1 => {}
                    Some(f) => push(f, How::Append, None, None),
                    None => {}
                }
            }
        }
        Files::Truncated => {
            let mut files = Vec::new();
            let mut grows = false;
            let mut it = args.iter();
            while let Some(a) = it.next() {
                match a {
                    Some("-s" | "--size") => {
                        grows = it
                            .next()
                            .copied()
                            .flatten()
                            .is_some_and(|s| s.starts_with(['+', '>']))
                    }
                    Some(o) if o.starts_with("--size=") => grows = o[7..].starts_with(['+', '>']),
                    Some(o) if o.starts_with("-s") && o.len() > 2 => {
                        grows = o[2..].starts_with(['+', '>'])
                    }
                    Some("-r" | "--reference" | "-o") => {
                        it.next();
                    }
                    Some(o) if o.starts_with('-') => {}
                    Some(f) => files.push(*f),
                    None => {}
                }
            }
            if !grows {
                for f in files {
                    push(f, How::Whole, None, None);
                }
            }
        }
        Files::Of => {
            let of = args
                .iter()
                .find_map(|a| a.and_then(|a| a.strip_prefix("of=")));
            let notrunc = args.iter().any(|a| {
                a.and_then(|a| a.strip_prefix("conv="))
                    .is_some_and(|c| c.split(',').any(|c| c == "notrunc"))
            });
            if let Some(f) = of {
                push(f, if notrunc { How::Edit } else { How::Whole }, None, None);
            }
        }
        Files::Python | Files::Node => {
            let python = matches!(writer.files, Files::Python);
            let code = code_of(python, &args).or_else(|| {
                // `python3 - <<'EOF'`, `node <<'EOF'`: the code on stdin.
                let script_file = args.iter().any(|a| a.is_some_and(|a| !a.starts_with('-')));
                (!script_file).then(|| cmd.stdin().flatten()).flatten()
            });
            if let Some(code) = code {
                let found = if python {
                    python_writes(code)
                } else {
                    node_writes(code)
                };
                for (f, how) in found {
                    push(&f, how, None, None);
                }
            }
        }
    }
}

/// What an option word of `sed` or `perl` does.
#[derive(Clone, Copy, Default)]
pub(super) struct Opt {
    /// It takes the next word as its argument.
    pub(super) takes_next: bool,
    /// It asks for in-place editing.
    pub(super) in_place: bool,
    /// It gives the script (so the first other word is a file).
    pub(super) script: bool,
    /// Its argument (the next word) asks for in-place editing when it is
    /// `inplace` (`gawk -i inplace`: the extension of that name).
    pub(super) in_place_if_next: bool,
}

/// An option of `sed`, or `None` when the word is not one.
pub(super) fn sed_option(a: &str) -> Option<Opt> {
    let arg = |script| Opt {
        takes_next: true,
        script,
        ..Opt::default()
    };
    match a {
        "-e" | "--expression" | "-f" | "--file" => Some(arg(true)),
        "-l" | "--line-length" => Some(arg(false)),
        _ if a == "--in-place" || a.starts_with("--in-place=") => Some(Opt {
            in_place: true,
            ..Opt::default()
        }),
        _ if a.starts_with("--expression=") || a.starts_with("--file=") => Some(Opt {
            script: true,
            ..Opt::default()
        }),
        _ if a.starts_with("--") => Some(Opt::default()),
        _ if a.starts_with('-') && a.len() > 1 => {
            // A cluster (-n, -E, -s); -i[SUFFIX] takes the rest of the
            // word (so `-ie` is -i with the suffix "e"); -e, -f and -l take
            // the rest, or the next word.
            let flags = &a[1..];
            for (at, c) in flags.char_indices() {
                let last = at + 1 == flags.len();
                match c {
                    'i' => {
                        return Some(Opt {
                            in_place: true,
                            ..Opt::default()
                        })
                    }
                    'e' | 'f' => {
                        return Some(Opt {
                            takes_next: last,
                            script: true,
                            ..Opt::default()
                        })
                    }
                    'l' => {
                        return Some(Opt {
                            takes_next: last,
                            ..Opt::default()
                        })
                    }
                    _ => {}
                }
            }
            Some(Opt::default())
        }
        _ => None,
    }
}

/// An option of `perl`, or `None` when the word is not one.
pub(super) fn perl_option(a: &str) -> Option<Opt> {
    if a.starts_with("--") || a == "-" {
        return Some(Opt::default());
    }
    let flags = a.strip_prefix('-').filter(|f| !f.is_empty())?;
    let mut opt = Opt::default();
    for (at, c) in flags.char_indices() {
        match c {
            // -i[EXT]: the rest of the word is the backup's suffix.
            'i' => {
                opt.in_place = true;
                return Some(opt);
            }
            'e' | 'E' => {
                opt.script = true;
                opt.takes_next = at + 1 == flags.len();
                return Some(opt);
            }
            // Switches whose argument is the rest of the word.
            'I' | 'M' | 'm' | 'x' | 'd' | 'D' | 'C' => return Some(opt),
            // Switches whose argument is digits only (-0777, -l, -0x1FF):
            // other switches may follow them in the word (`-0pi`, `-pli`).
            '0' | 'l' => {
                let rest = &flags[at + 1..];
                let digits = rest
                    .strip_prefix(['x', 'X'])
                    .filter(|_| c == '0')
                    .map(|hex| 1 + hex.chars().take_while(char::is_ascii_hexdigit).count())
                    .unwrap_or_else(|| {
                        rest.chars().take_while(|d| ('0'..='7').contains(d)).count()
                    });
                return match perl_option(&format!("-{}", &rest[digits..])) {
                    Some(more) if rest.len() > digits => Some(Opt {
                        in_place: opt.in_place || more.in_place,
                        script: opt.script || more.script,
                        takes_next: more.takes_next,
                        ..opt
                    }),
                    _ => Some(opt),
                };
            }
            _ => {}
        }
    }
    Some(opt)
}

/// gawk's in-place extension, as `-i` or `--include` names it.
fn is_inplace(lib: Option<&str>) -> bool {
    matches!(lib, Some("inplace" | "inplace.awk"))
}

/// An option of `gawk` (and `awk` where it is gawk), or `None` when the
/// word is not one: `-i inplace` (`--include`) edits each file in place.
pub(super) fn awk_option(a: &str) -> Option<Opt> {
    let next = |script| Opt {
        takes_next: true,
        script,
        ..Opt::default()
    };
    match a {
        "-i" | "--include" => Some(Opt {
            takes_next: true,
            in_place_if_next: true,
            ..Opt::default()
        }),
        "-f" | "--file" | "-e" | "--source" | "-E" | "--exec" => Some(next(true)),
        "-v" | "--assign" | "-F" | "--field-separator" | "-l" | "--load" => Some(next(false)),
        _ if a.starts_with("--include=") => Some(Opt {
            in_place: is_inplace(a.strip_prefix("--include=")),
            ..Opt::default()
        }),
        _ if a.starts_with("--file=") || a.starts_with("--source=") || a.starts_with("--exec=") => {
            Some(Opt {
                script: true,
                ..Opt::default()
            })
        }
        _ if a.starts_with("--") => Some(Opt::default()),
        _ if a.starts_with("-i") => Some(Opt {
            in_place: is_inplace(a.strip_prefix("-i")),
            ..Opt::default()
        }),
        _ if a.starts_with("-f") || a.starts_with("-e") || a.starts_with("-E") => Some(Opt {
            script: true,
            ..Opt::default()
        }),
        _ if a.starts_with('-') && a.len() > 1 => Some(Opt::default()),
        _ => None,
    }
}

/// What `sed -i 's/OLD/NEW/' FILE...` (or `s/OLD/NEW/g`, the script also
/// given with `-e` or `--expression=`) does to each file, when it is
/// plainly a replacement of literal text: OLD and NEW hold nothing sed
/// reads as more than itself (no backslash; no `.[]*^$+?(){}|` in OLD, no
/// `&` in NEW; no newline), and the only options are `-i`/`--in-place`
/// (no backup suffix), `-E`/`-r`/`--regexp-extended` and `-s`/
/// `--separate`. Without `g` it is the one occurrence of OLD, when there
/// is exactly one (sed changes the first of each line); with `g`, every
/// occurrence. `None` for any other command line.
pub(super) fn sed_replacement(args: &[Option<&str>]) -> Option<Replace> {
    let mut script = None;
    let mut in_place = false;
    let mut opts = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = (*a)?;
        match a {
            "--" if opts => opts = false,
            "-i" | "--in-place" if opts => in_place = true,
            "-E" | "-r" | "--regexp-extended" | "-s" | "--separate" if opts => {}
            "-e" | "--expression" if opts && script.is_none() => script = Some((*it.next()?)?),
            _ if opts && a.starts_with("--expression=") && script.is_none() => {
                script = a.strip_prefix("--expression=");
            }
            _ if opts && a.starts_with('-') && a.len() > 1 => return None,
            _ if script.is_none() => script = Some(a),
            _ => {}
        }
    }
    if !in_place {
        return None;
    }
    let rest = script?.strip_prefix('s')?;
    let delim = rest.chars().next()?;
    if delim.is_alphanumeric() || delim == '\\' || delim == '\n' || delim.is_whitespace() {
        return None;
    }
    let parts: Vec<&str> = rest[delim.len_utf8()..].split(delim).collect();
    let [old, new, flags] = parts.as_slice() else {
        return None;
    };
    let all = match *flags {
        "" => false,
        "g" => true,
        _ => return None,
    };
    let plain_old = !old.is_empty() && !old.contains(|c| "\\.[]*^$+?(){}|\n".contains(c));
    let plain_new = !new.contains(|c| "\\&\n".contains(c));
    (plain_old && plain_new).then(|| Replace {
        old: old.to_string(),
        new: new.to_string(),
        all,
    })
}

/// The files of `sed -i` or `perl -i`: the words after the script (the
/// first word that is no option, unless an option gave the script), when
/// an option asked for in-place editing.
pub(super) fn in_place_files<'a>(
    args: &[Option<&'a str>],
    option: fn(&str) -> Option<Opt>,
) -> Vec<&'a str> {
    let mut in_place = false;
    let mut script_given = false;
    let mut files = Vec::new();
    let mut opts = true;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        let Some(a) = a else {
            // A word fsview cannot read: the script, or a file it cannot
            // name.
            script_given = true;
            continue;
        };
        if opts && a == "--" {
            opts = false;
            continue;
        }
        if let Some(o) = option(a).filter(|_| opts) {
            in_place |= o.in_place;
            script_given |= o.script;
            if o.takes_next {
                if o.in_place_if_next && is_inplace(args.get(i).copied().flatten()) {
                    in_place = true;
                }
                i += 1;
            }
            continue;
        }
        if !script_given {
            script_given = true;
            continue;
        }
        files.push(a);
    }
    if in_place {
        files
    } else {
        Vec::new()
    }
}

/// The destinations of `cp`, `mv`, `install` or `ln` that it overwrites:
/// each with the name of the file it becomes when the destination is a
/// directory, and the file it copies there when the command names one
/// source (never for `ln`, whose link is no copy), and what it does to a
/// symlink there.
#[allow(clippy::type_complexity)]
pub(super) fn copies<'a>(
    name: &str,
    args: &[Option<&'a str>],
) -> Vec<(&'a str, Option<String>, Option<&'a str>, Option<Link>)> {
    let with_arg: &[&str] = match name {
        "install" => &[
            "-m",
            "-o",
            "-g",
            "-S",
            "-t",
            "--mode",
            "--owner",
            "--group",
            "--suffix",
            "--target-directory",
        ],
        _ => &["-S", "-t", "--suffix", "--target-directory"],
    };
    let mut operands: Vec<Option<&str>> = Vec::new();
    let mut target_dir: Option<Option<&str>> = None;
    let (mut no_clobber, mut backup, mut force, mut no_target_dir, mut dirs_only) =
        (false, false, false, false, false);
    let (mut remove_destination, mut no_dereference) = (false, false);
    // `ln -s`, `cp -s`: a symbolic link; `cp -l`: a hard link.
    let (mut symbolic, mut hard) = (false, false);
    let mut opts = true;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        match a {
            Some("--") if opts => opts = false,
            Some(o) if opts && o.starts_with("--") => {
                let (key, value) = match o.split_once('=') {
                    Some((k, v)) => (k, Some(v)),
                    None => (o, None),
                };
                match key {
                    "--no-clobber" => no_clobber = true,
                    "--update" if value == Some("none") || value == Some("none-fail") => {
                        no_clobber = true
                    }
                    // `none` and `off`: never make backups.
                    "--backup" => backup = !matches!(value, Some("none" | "off")),
                    "--force" => {
                        force = true;
                        // mv: the last of -i, -f and -n wins.
                        no_clobber &= name != "mv";
                    }
                    "--symbolic" if name == "ln" => symbolic = true,
                    "--symbolic-link" if name == "cp" => symbolic = true,
                    "--link" if name == "cp" => hard = true,
                    "--no-target-directory" => no_target_dir = true,
                    "--remove-destination" => remove_destination = true,
                    "--no-dereference" => no_dereference = true,
                    "--directory" => dirs_only = true,
                    "--target-directory" => {
                        target_dir = Some(match value {
                            Some(v) => Some(v),
                            None => {
                                i += 1;
                                args.get(i - 1).copied().flatten()
                            }
                        })
                    }
                    k if with_arg.contains(&k) && value.is_none() => i += 1,
                    _ => {}
                }
            }
            Some(o) if opts && o.starts_with('-') && o.len() > 1 => {
                let flags = &o[1..];
                for (at, c) in flags.char_indices() {
                    let takes = with_arg.contains(&format!("-{c}").as_str());
                    match c {
                        'n' if name != "ln" => no_clobber = true,
                        'n' => no_dereference = true,
                        'b' => backup = true,
                        'f' => {
                            force = true;
                            // mv: the last of -i, -f and -n wins.
                            no_clobber &= name != "mv";
                        }
                        's' if name == "ln" || name == "cp" => symbolic = true,
                        'l' if name == "cp" => hard = true,
                        'T' => no_target_dir = true,
                        'd' if name == "install" => dirs_only = true,
                        _ => {}
                    }
                    if takes {
                        let rest = &flags[at + c.len_utf8()..];
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1).copied().flatten()
                        } else {
                            Some(rest)
                        };
                        if c == 't' {
                            target_dir = Some(value);
                        }
                        break;
                    }
                }
            }
            other => operands.push(other),
        }
    }
    // Nothing is lost: not overwritten, or kept as a backup; `ln` without
    // -f refuses an existing destination; `install -d` makes directories.
    // A link made so is still said (`keeps`): a write through it later in
    // the line writes the file it names.
    let makes_link = name == "ln" || (name == "cp" && (symbolic || hard));
    let keeps = no_clobber || backup || (name == "ln" && !force);
    if dirs_only || (keeps && !makes_link) {
        return Vec::new();
    }
    let base_of = |s: Option<&str>| {
        s.and_then(|s| Path::new(s.trim_end_matches('/')).file_name())
            .map(|n| n.to_string_lossy().into_owned())
    };
    // A link's source too: the file its name will stand for.
    let copied = |s: Option<&'a str>| s;
    // `ln -f` unlinks what is there, `mv` renames over it, `cp
    // --remove-destination` unlinks it first: a link there is replaced.
    // `cp` and `install` otherwise write through it; `cp -l` and `cp -s`
    // make links as `ln` does.
    let link = match name {
        "ln" => Some(Link {
            makes: true,
            even_to_dir: no_dereference || no_target_dir,
            symbolic,
            keeps,
            ..Link::default()
        }),
        "cp" if symbolic || hard => Some(Link {
            makes: true,
            even_to_dir: no_target_dir,
            symbolic,
            keeps,
            ..Link::default()
        }),
        "mv" => Some(Link {
            even_to_dir: no_target_dir,
            moves: true,
            ..Link::default()
        }),
        "cp" if remove_destination => Some(Link {
            even_to_dir: no_target_dir,
            ..Link::default()
        }),
        _ => None,
    };
    match target_dir {
        Some(Some(dir)) => operands
            .iter()
            .filter_map(|s| base_of(*s).map(|n| (dir, Some(n), copied(*s), link)))
            .collect(),
        Some(None) => Vec::new(),
        None => {
            let Some((Some(dest), sources)) = operands.split_last() else {
                return Vec::new();
            };
            if sources.is_empty() && name != "ln" {
                return Vec::new();
            }
            if sources.len() > 1 {
                // Several sources: the destination is a directory.
                return sources
                    .iter()
                    .filter_map(|s| base_of(*s).map(|n| (*dest, Some(n), copied(*s), link)))
                    .collect();
            }
            let into = if no_target_dir {
                None
            } else {
                sources.first().copied().and_then(base_of)
            };
            vec![(
                *dest,
                into,
                copied(sources.first().copied().flatten()),
                link,
            )]
        }
    }
}

/// The code of `python -c CODE` or `node -e CODE` (`--eval`, `-p`).
pub(super) fn code_of<'a>(python: bool, args: &[Option<&'a str>]) -> Option<&'a str> {
    let flags: &[&str] = if python {
        &["-c"]
    } else {
        &["-e", "--eval", "-p", "--print"]
    };
    let at = args
        .iter()
        .position(|a| a.is_some_and(|a| flags.contains(&a)))?;
    args.get(at + 1).copied().flatten()
}

/// The files Python code opens for writing by a literal name:
/// `open('f', 'w')` (a whole file; `'a'` appends, `'r+'` edits),
/// `Path('f').write_text(`, `.write_bytes(`.
pub(super) fn python_writes(code: &str) -> Vec<(String, How)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("open(") {
        if !in_code(code, at, "#") {
            continue;
        }
        // Not `os.open(`, `fdopen(`, `urlopen(`: a name of its own.
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            && !code[..at].ends_with("io.")
        {
            continue;
        }
        let rest = &code[at + 5..];
        let Some((path, rest)) = string_literal(rest) else {
            continue;
        };
        let rest = rest.trim_start();
        let mode = match rest.strip_prefix(',') {
            Some(r) => {
                let r = r.trim_start();
                let r = r
                    .strip_prefix("mode")
                    .map(|m| m.trim_start().trim_start_matches('=').trim_start())
                    .unwrap_or(r);
                match string_literal(r) {
                    Some((m, _)) => m,
                    // A mode fsview cannot read: not taken.
                    None => continue,
                }
            }
            None => "r".to_string(),
        };
        let how = if mode.contains('a') {
            How::Append
        } else if mode.contains(['w', 'x']) {
            How::Whole
        } else if mode.contains('+') {
            How::Edit
        } else {
            continue;
        };
        out.push((path, how));
    }
    for (at, _) in code.match_indices("Path(") {
        if !in_code(code, at, "#") {
            continue;
        }
        let Some((path, rest)) = string_literal(&code[at + 5..]) else {
            continue;
        };
        let rest = rest.trim_start();
        if rest.starts_with(").write_text(") || rest.starts_with(").write_bytes(") {
            out.push((path, How::Whole));
        }
    }
    out
}

/// The files JavaScript code writes by a literal name: `writeFileSync('f'`
/// and `writeFile('f'` (a whole file), `appendFileSync('f'`,
/// `appendFile('f'` (an append).
pub(super) fn node_writes(code: &str) -> Vec<(String, How)> {
    let mut out = Vec::new();
    for (call, how) in [
        ("writeFileSync(", How::Whole),
        ("writeFile(", How::Whole),
        ("appendFileSync(", How::Append),
        ("appendFile(", How::Append),
    ] {
        for (at, _) in code.match_indices(call) {
            if !in_code(code, at, "//") {
                continue;
            }
            if let Some((path, _)) = string_literal(&code[at + call.len()..]) {
                out.push((path, how));
            }
        }
    }
    out
}

/// Whether `code` at byte `at` is code: not inside a string literal or a
/// comment (`comment` to the end of the line) opened earlier on its line.
/// A string over several lines is not followed: such code counts as code,
/// which only gates more.
fn in_code(code: &str, at: usize, comment: &str) -> bool {
    let start = code[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &code[start..at];
    let mut quote: Option<char> = None;
    let mut chars = line.char_indices();
    while let Some((i, c)) = chars.next() {
        match quote {
            Some(_) if c == '\\' => {
                chars.next();
            }
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '`') => quote = Some(c),
            None if line[i..].starts_with(comment) => return false,
            None => {}
        }
    }
    quote.is_none()
}

/// A string literal at the start of `s` (after spaces): `'...'` or
/// `"..."` with no escape, no interpolation prefix; its text and the rest.
pub(super) fn string_literal(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    let s = s.strip_prefix('r').unwrap_or(s);
    let q = s.chars().next().filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let body = &s[1..];
    let end = body.find(q)?;
    let text = &body[..end];
    if text.contains('\\') || text.is_empty() || (q == '`' && text.contains("${")) {
        return None;
    }
    Some((text.to_string(), &body[end + 1..]))
}

/// What a command prints to standard output, when it spells it out: `cat`
/// of a literal here-document or here-string, `echo` of literal words.
pub(super) fn printed(cmd: &Simple) -> Option<String> {
    let words = strip_wrappers(&cmd.words);
    let (name, args) = words.split_first()?;
    match name.as_deref()? {
        "cat" => match args {
            [] => cmd.stdin().flatten().map(String::from),
            [Some(dash)] if dash == "-" => cmd.stdin().flatten().map(String::from),
            _ => None,
        },
        "echo" => {
            let args = args
                .iter()
                .map(|a| a.as_deref())
                .collect::<Option<Vec<_>>>()?;
            let (newline, args) = match args.split_first() {
                Some((&"-n", rest)) => (false, rest),
                _ => (true, &args[..]),
            };
            // An option, or an escape some echo would read: not certain.
            if args.iter().any(|a| a.starts_with('-') || a.contains('\\')) {
                return None;
            }
            let mut t = args.join(" ");
            if newline {
                t.push('\n');
            }
            Some(t)
        }
        _ => None,
    }
}
