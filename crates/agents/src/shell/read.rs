//! What a command shows of a file ([`read`]), and what of it the agent
//! showed the model ([`Output`]).

use std::path::PathBuf;

use brush_parser::ast;

use super::parse::{plain_simple, plain_words, program};
use crate::event::{Extent, Printed, Shown, ShownText};

/// What a command printed of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    pub path: PathBuf,
    /// The directory `path` is relative to, when the command changed it
    /// (relative to the directory the command ran in).
    pub dir: Option<PathBuf>,
    pub lines: Lines,
    /// Each line came out as `%6d\t` and the line (`nl -ba`, `cat -n`).
    pub numbered: bool,
    /// What the commands before it in the command line print, known (an
    /// `echo`), and after it: the output is the three together.
    pub before: String,
    pub after: String,
}

/// Which lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lines {
    /// Every line.
    All,
    /// From line `from` (1-based) to `to` (the end when `None`).
    Range { from: u64, to: Option<u64> },
    /// The first `n` lines.
    Head(u64),
    /// The last `n` lines.
    Tail(u64),
}

/// The read a command line makes, if it is one this module understands:
/// one read command (or a numbering piped into `sed -n`), every word
/// literal, no redirection, alone or in a list of commands run one after
/// the other (`;`, `&&`, a new line) whose other output is known:
/// before it, `cd DIR` (followed), `echo` of literal words (what it prints
/// is known), `true`, `:`, and commands whose standard output goes to a
/// file (`gen > f`: they print nothing, unless on standard error, which
/// then leaves more in the output than the file, and nothing is recorded);
/// after it, `echo` of literal words, `true`, `:`. So the output is what
/// is known to come before, the read's, what is known to come after: the
/// read's part is delimited ([`shown`]). Anything else (`||`, `&`, a
/// second read, a command whose output is not known) reads nothing.
pub fn read(command: &str) -> Option<Read> {
    let p = program(command)?;
    let mut pipes = Vec::new();
    for list in &p.complete_commands {
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            if matches!(sep, ast::SeparatorOperator::Async) {
                return None;
            }
            pipes.push(&and_or.first);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) => pipes.push(p),
                    ast::AndOr::Or(_) => return None,
                }
            }
        }
    }
    let mut found: Option<(usize, Read)> = None;
    for (i, pipe) in pipes.iter().enumerate() {
        if let Some(r) = pipe_read(pipe) {
            if found.is_some() {
                return None; // two reads: whose is which output is a guess
            }
            found = Some((i, r));
        }
    }
    let (at, mut r) = found?;
    let mut dir: Option<PathBuf> = None;
    for pipe in &pipes[..at] {
        match before_read(pipe)? {
            Prints::Cd(d) => {
                dir = Some(match dir {
                    Some(now) => now.join(d),
                    None => PathBuf::from(d),
                })
            }
            Prints::Text(t) => r.before.push_str(&t),
        }
    }
    for pipe in &pipes[at + 1..] {
        match after_read(pipe)? {
            Prints::Text(t) => r.after.push_str(&t),
            Prints::Cd(_) => return None,
        }
    }
    r.dir = dir;
    Some(r)
}

/// What a command around a read adds to the output, or where it goes.
enum Prints {
    Cd(String),
    Text(String),
}

/// A command before the read: `cd DIR`, a literal `echo`, `true`, `:`, or
/// one whose standard output goes to a file.
fn before_read(pipe: &ast::Pipeline) -> Option<Prints> {
    if pipe.bang || pipe.timed.is_some() {
        return None;
    }
    if let Some(words) = plain_words(pipe) {
        match words.as_slice() {
            [cd, d] if cd == "cd" && d != "-" && !d.is_empty() => {
                return Some(Prints::Cd(d.clone()))
            }
            _ => {
                if let Some(t) = echoed(&words) {
                    return Some(Prints::Text(t));
                }
            }
        }
    }
    // A pipeline whose last command writes its standard output to a file.
    let [.., ast::Command::Simple(last)] = pipe.seq.as_slice() else {
        return None;
    };
    for c in &pipe.seq {
        let ast::Command::Simple(c) = c else {
            return None;
        };
        // What changes the shell itself, or its output, is not followed.
        let name = c.word_or_name.as_ref().map(|w| w.value.as_str());
        if matches!(
            name,
            None | Some(
                "cd" | "pushd" | "popd" | "exec" | "source" | "." | "eval" | "set" | "alias"
            )
        ) {
            return None;
        }
    }
    stdout_to_file(last).then(|| Prints::Text(String::new()))
}

/// A command after the read: a literal `echo`, `true`, `:`.
fn after_read(pipe: &ast::Pipeline) -> Option<Prints> {
    if pipe.bang || pipe.timed.is_some() {
        return None;
    }
    echoed(&plain_words(pipe)?).map(Prints::Text)
}

/// What `echo` of literal words (`true`, `:`: nothing) prints, when
/// certain.
fn echoed(words: &[String]) -> Option<String> {
    let (name, args) = words.split_first()?;
    match name.as_str() {
        "true" | ":" if args.is_empty() => Some(String::new()),
        "echo" => {
            // An option, or an escape some echo would read: not certain.
            let option = |a: &str| {
                a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c))
            };
            if args.iter().any(|a| option(a) || a.contains('\\')) {
                return None;
            }
            Some(format!("{}\n", args.join(" ")))
        }
        _ => None,
    }
}

/// The command's standard output goes to a file (its last redirection of
/// it names one), and no redirection sends it back (`/dev/stdout`).
fn stdout_to_file(c: &ast::SimpleCommand) -> bool {
    use ast::IoFileRedirectKind as K;
    use ast::IoFileRedirectTarget as T;
    let items = c
        .prefix
        .iter()
        .flat_map(|p| p.0.iter())
        .chain(c.suffix.iter().flat_map(|s| s.0.iter()));
    let mut to_file = false;
    let file = |w: &ast::Word| {
        let v = w.value.as_str();
        !v.is_empty() && (!v.starts_with("/dev/") || v == "/dev/null") && !v.starts_with("/proc/")
    };
    for item in items {
        let ast::CommandPrefixOrSuffixItem::IoRedirect(r) = item else {
            continue;
        };
        match r {
            ast::IoRedirect::File(fd, kind, target) if fd.is_none_or(|f| f == 1) => {
                to_file = match (kind, target) {
                    (K::Write | K::Clobber | K::Append, T::Filename(w)) => file(w),
                    (K::DuplicateOutput, T::Duplicate(w)) => {
                        !w.value.bytes().all(|b| b.is_ascii_digit() || b == b'-') && file(w)
                    }
                    _ => false,
                }
            }
            ast::IoRedirect::OutputAndError(w, _) => to_file = file(w),
            _ => {}
        }
    }
    to_file
}

/// The read of one pipeline: a read command, or a numbering piped into
/// `sed -n`.
fn pipe_read(pipe: &ast::Pipeline) -> Option<Read> {
    let stages = pipe
        .seq
        .iter()
        .map(|c| match c {
            ast::Command::Simple(s) => plain_simple(s),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    if pipe.bang || pipe.timed.is_some() {
        return None;
    }
    match stages.as_slice() {
        [one] => single(one),
        [numbering, filter] => {
            let mut r = single(numbering)?;
            if !r.numbered || r.lines != Lines::All {
                return None;
            }
            r.lines = match filter.split_first() {
                Some((sed, args)) if sed == "sed" => sed_range(args)?,
                _ => return None,
            };
            Some(r)
        }
        _ => None,
    }
}

/// One command of the pipeline, naming its file.
pub(super) fn single(words: &[String]) -> Option<Read> {
    let (name, args) = words.split_first()?;
    let (lines, numbered, file) = match name.as_str() {
        "cat" => match args {
            [f] => (Lines::All, false, f),
            [flag, f] if flag == "-n" => (Lines::All, true, f),
            _ => return None,
        },
        "nl" => match args {
            [flag, f] if flag == "-ba" => (Lines::All, true, f),
            [b, a, f] if b == "-b" && a == "a" => (Lines::All, true, f),
            _ => return None,
        },
        "sed" => {
            let (file, args) = args.split_last()?;
            (sed_range(args)?, false, file)
        }
        "head" | "tail" => {
            let (n, file) = match args {
                [f] => ("10", f),
                [flag, n, f] if flag == "-n" => (n.as_str(), f),
                [flag, f] if flag.starts_with('-') && flag.len() > 1 => (&flag[1..], f),
                _ => return None,
            };
            let lines = match (name.as_str(), n.strip_prefix('+')) {
                ("tail", Some(from)) => Lines::Range {
                    from: number(from)?.max(1),
                    to: None,
                },
                (_, Some(_)) => return None,
                ("head", None) => Lines::Head(number(n)?),
                _ => Lines::Tail(number(n)?),
            };
            (lines, false, file)
        }
        _ => return None,
    };
    if file.starts_with('-') || file.is_empty() {
        return None;
    }
    Some(Read {
        path: PathBuf::from(file),
        dir: None,
        lines,
        numbered,
        before: String::new(),
        after: String::new(),
    })
}

/// The arguments of `sed -n 'A,Bp'` (without its file): the lines it
/// prints.
pub(super) fn sed_range(args: &[String]) -> Option<Lines> {
    let script = match args {
        [n, script] if n == "-n" => script,
        _ => return None,
    };
    let body = script.strip_suffix('p')?;
    let (from, to) = match body.split_once(',') {
        Some((a, "$")) => (number(a)?, None),
        Some((a, b)) => (number(a)?, Some(number(b)?)),
        None => (number(body)?, Some(number(body)?)),
    };
    if from == 0 || to.is_some_and(|t| t < from) {
        return None;
    }
    Some(Lines::Range { from, to })
}

pub(super) fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A numbered line as `nl -ba` and `cat -n` print it: its number, and the
/// line after the tab.
pub fn unnumber(line: &str) -> Option<(u64, &str)> {
    let (n, rest) = line.split_once('\t')?;
    Some((number(n.trim_start())?, rest))
}

// -- what the agent showed of a command's output -----------------------------

/// What an agent's shell tool gave the model of a command's output, as its
/// tool reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output<'a> {
    /// Every byte the command printed, as it printed them.
    Exact(&'a str),
    /// The same, except that it may have run on a terminal, which prints
    /// each `\n` as `\r\n` (Codex's `tty`, which its hook does not name).
    Terminal(&'a str),
    /// What it printed with the whitespace at both ends removed (some
    /// agents remove only blank lines at the start).
    Trimmed(&'a str),
    /// Only the start of what it printed (the agent cut the rest): the
    /// lines before the last newline are whole, the rest of the last one
    /// was not shown. `trimmed`: whitespace at the start was removed.
    Head { text: &'a str, trimmed: bool },
}

/// What a read command's output showed of its file.
pub(super) fn shown(read: Read, output: Output<'_>) -> Option<Shown> {
    let output = delimited(&read, output)?;
    let (text, cut, form) = match output {
        Output::Exact(t) => (t, false, crate::event::Form::Exact),
        Output::Terminal(t) => (t, false, crate::event::Form::Terminal),
        Output::Trimmed(t) => (t, false, crate::event::Form::Trimmed),
        Output::Head { text, trimmed } => {
            // The line the cut went through was not shown whole.
            let whole = match text.rfind('\n') {
                Some(i) => &text[..=i],
                None => "",
            };
            let form = if trimmed {
                crate::event::Form::Trimmed
            } else {
                crate::event::Form::Exact
            };
            (whole, true, form)
        }
    };
    let (offset, extent) = match read.lines {
        Lines::All if cut => (1, Extent::Start),
        Lines::All if read.numbered => (1, Extent::Range),
        Lines::All => (1, Extent::Whole),
        Lines::Range { from, .. } => (from, Extent::Range),
        Lines::Head(_) => (1, Extent::Range),
        // Which lines a cut tail shows is not known.
        Lines::Tail(_) if cut => return None,
        Lines::Tail(_) => (1, Extent::Tail),
    };
    let text = if read.numbered {
        unnumbered(text, offset)?
    } else {
        text.to_string()
    };
    // Nothing printed shows a file only when the file is empty.
    if text.is_empty() && extent != Extent::Whole {
        return None;
    }
    let path = match &read.dir {
        Some(d) => d.join(&read.path),
        None => read.path,
    };
    Some(Shown {
        path,
        text: ShownText::Printed(Printed { text, form }),
        offset,
        extent,
    })
}

/// The read's part of the output: what is known to come before and after
/// it taken away, each exactly as the agent shows it; `None` when the
/// output does not hold them so (something printed what was not known).
fn delimited<'a>(read: &Read, output: Output<'a>) -> Option<Output<'a>> {
    let (before, after) = (read.before.as_str(), read.after.as_str());
    if before.is_empty() && after.is_empty() {
        return Some(output);
    }
    let strip = |t: &'a str, b: &str, a: &str| t.strip_prefix(b)?.strip_suffix(a);
    Some(match output {
        Output::Exact(t) => Output::Exact(strip(t, before, after)?),
        Output::Terminal(t) => {
            let crlf = |s: &str| s.replace('\n', "\r\n");
            Output::Terminal(
                strip(t, &crlf(before), &crlf(after)).or_else(|| strip(t, before, after))?,
            )
        }
        // Whitespace at the ends of the whole output was removed: the
        // known parts' outer ends are matched trimmed, the read's part is
        // trimmed as if it stood alone.
        Output::Trimmed(t) => {
            let rest = t.strip_prefix(before.trim_start())?;
            let rest = if after.trim().is_empty() {
                rest
            } else {
                rest.strip_suffix(after.trim_end())?
            };
            Output::Trimmed(rest.trim())
        }
        // A cut output: only what comes before is known to be whole.
        Output::Head { text, trimmed } if after.is_empty() => Output::Head {
            text: match trimmed {
                true => text.strip_prefix(before.trim_start())?,
                false => text.strip_prefix(before)?,
            },
            trimmed,
        },
        Output::Head { .. } => return None,
    })
}

/// The lines of `nl -ba` (or `cat -n`) output without their numbers, which
/// must count up from `first`; the last newline left out (it is printed
/// even after a last line that has none).
pub(super) fn unnumbered(output: &str, first: u64) -> Option<String> {
    let body = output.strip_suffix('\n').unwrap_or(output);
    let body = body.strip_suffix('\r').unwrap_or(body);
    let mut lines = Vec::new();
    let count = body.split('\n').count();
    for (i, line) in body.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        // An empty last line whose tab an agent trimmed off the output.
        let (n, text) = match unnumber(line) {
            None if i + 1 == count => (number(line.trim_start())?, ""),
            other => other?,
        };
        if n != first + i as u64 {
            return None;
        }
        lines.push(text);
    }
    Some(lines.join("\n"))
}
