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
/// one command (or a numbering piped into `sed -n`) after an optional
/// `cd DIR &&`, no redirection, every word literal.
pub fn read(command: &str) -> Option<Read> {
    let p = program(command)?;
    let [list] = p.complete_commands.as_slice() else {
        return None;
    };
    let [ast::CompoundListItem(and_or, _)] = list.0.as_slice() else {
        return None;
    };
    let (dir, pipe) = match and_or.additional.as_slice() {
        [] => (None, &and_or.first),
        [ast::AndOr::And(next)] => {
            let cd = plain_words(&and_or.first)?;
            match cd.as_slice() {
                [c, d] if c == "cd" && d != "-" => (Some(PathBuf::from(d)), next),
                _ => return None,
            }
        }
        _ => return None,
    };
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
    let mut r = match stages.as_slice() {
        [one] => single(one)?,
        [numbering, filter] => {
            let mut r = single(numbering)?;
            if !r.numbered || r.lines != Lines::All {
                return None;
            }
            r.lines = match filter.split_first() {
                Some((sed, args)) if sed == "sed" => sed_range(args)?,
                _ => return None,
            };
            r
        }
        _ => return None,
    };
    r.dir = dir;
    Some(r)
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
