//! Shell commands that show a file, read the way a shell reads them.
//!
//! Agents whose only way to read is a shell (Codex) show files with a few
//! well-known commands. This module recognizes exactly those, with literal
//! arguments, and says which lines of which file their output is; anything
//! else (a pipe it does not know, a glob, a variable, a redirection, several
//! files) is not understood, and then nothing is taken from the command.
//!
//! - `cat FILE`: the whole file, as its bytes;
//! - `cat -n FILE`, `nl -ba FILE`: the whole file, each line numbered;
//! - `sed -n 'A,Bp' FILE`, `sed -n 'Ap'`, `sed -n 'A,$p'`: lines A to B;
//! - `nl -ba FILE | sed -n 'A,Bp'` (or `cat -n`): the same, numbered;
//! - `head [-n N | -N] FILE` (10 lines by default): the first lines;
//! - `tail [-n N | -N] FILE`: the last lines; `tail -n +A FILE`: from A.
//!
//! A leading `cd DIR &&` changes the directory the file is named from. It
//! also finds patches sent to `apply_patch` as a here-document.

use std::path::PathBuf;

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

/// The read a command line makes, if it is one this module understands.
pub fn read(command: &str) -> Option<Read> {
    let mut stages = pipeline(command)?;
    let mut dir = None;
    if let [first, ..] = stages.as_slice() {
        if first.len() == 2 && first[0] == "cd" {
            dir = Some(PathBuf::from(&first[1]));
            stages.remove(0);
        }
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
fn single(words: &[String]) -> Option<Read> {
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
fn sed_range(args: &[String]) -> Option<Lines> {
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

fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The commands of a pipeline (`|`), optionally after `cd DIR &&`, each
/// as its words; `None` for anything with shell syntax beyond plain words,
/// quotes, one pipe and one `&&` after a `cd`.
fn pipeline(command: &str) -> Option<Vec<Vec<String>>> {
    let mut stages: Vec<Vec<String>> = vec![Vec::new()];
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.trim().chars().peekable();
    let end_word = |word: &mut String, in_word: &mut bool, stages: &mut Vec<Vec<String>>| {
        if *in_word {
            stages.last_mut().unwrap().push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\') => word.push(c),
                            _ => return None,
                        },
                        '$' | '`' => return None,
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                let c = chars.next()?;
                if c == '\n' {
                    return None;
                }
                word.push(c);
            }
            ' ' | '\t' => end_word(&mut word, &mut in_word, &mut stages),
            '|' if chars.peek() != Some(&'|') => {
                end_word(&mut word, &mut in_word, &mut stages);
                stages.push(Vec::new());
            }
            '&' if chars.peek() == Some(&'&') => {
                chars.next();
                end_word(&mut word, &mut in_word, &mut stages);
                // Only `cd DIR && ...`.
                if stages.len() != 1 || stages[0].first().map(String::as_str) != Some("cd") {
                    return None;
                }
                stages.push(Vec::new());
            }
            // Anything the shell would expand or redirect.
            '$' | '`' | '*' | '?' | '[' | '~' | '<' | '>' | ';' | '&' | '|' | '(' | ')' | '{'
            | '}' | '\n' | '#' | '!' => return None,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut stages);
    if stages.iter().any(Vec::is_empty) {
        return None;
    }
    Some(stages)
}

/// The texts sent to `apply_patch` (or `applypatch`) as a here-document in
/// a shell command: `apply_patch <<'EOF'` ... `EOF`, after an optional
/// `cd DIR &&`, with the directory.
pub fn patch_heredocs(command: &str) -> Vec<(Option<PathBuf>, String)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = command.split('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        i += 1;
        let Some((head, delim)) = heredoc_start(line) else {
            continue;
        };
        let mut words = head.split_whitespace().collect::<Vec<_>>();
        if !matches!(words.pop(), Some("apply_patch" | "applypatch")) {
            continue;
        }
        let dir = match words.as_slice() {
            [] => None,
            ["cd", d, "&&"] => Some(PathBuf::from(unquote(d))),
            _ => None,
        };
        let start = i;
        while i < lines.len() && lines[i].trim_end() != delim {
            i += 1;
        }
        if i < lines.len() {
            out.push((dir, lines[start..i].join("\n")));
            i += 1;
        }
    }
    out
}

/// `COMMAND <<DELIM`, `<<'DELIM'` or `<<"DELIM"` ending a line: the command
/// and the delimiter.
fn heredoc_start(line: &str) -> Option<(&str, &str)> {
    let (head, rest) = line.rsplit_once("<<")?;
    let rest = rest.trim().trim_start_matches('-');
    let delim = unquote(rest);
    if delim.is_empty() || !delim.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some((head.trim_end(), delim))
}

fn unquote(s: &str) -> &str {
    for q in ['\'', '"'] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// A numbered line as `nl -ba` and `cat -n` print it: its number, and the
/// line after the tab.
pub fn unnumber(line: &str) -> Option<(u64, &str)> {
    let (n, rest) = line.split_once('\t')?;
    Some((number(n.trim_start())?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(path: &str, lines: Lines, numbered: bool) -> Option<Read> {
        Some(Read {
            path: path.into(),
            dir: None,
            lines,
            numbered,
        })
    }

    #[test]
    fn reads_it_understands() {
        assert_eq!(read("cat a.txt"), r("a.txt", Lines::All, false));
        assert_eq!(
            read("cat 'my file.txt'"),
            r("my file.txt", Lines::All, false)
        );
        assert_eq!(read("cat -n a.txt"), r("a.txt", Lines::All, true));
        assert_eq!(read("nl -ba src/x.rs"), r("src/x.rs", Lines::All, true));
        let range = |from, to| Lines::Range { from, to };
        assert_eq!(
            read("sed -n '1,5p' a.txt"),
            r("a.txt", range(1, Some(5)), false)
        );
        assert_eq!(
            read("sed -n 7p a.txt"),
            r("a.txt", range(7, Some(7)), false)
        );
        assert_eq!(
            read("sed -n '3,$p' a.txt"),
            r("a.txt", range(3, None), false)
        );
        assert_eq!(
            read("nl -ba a.txt | sed -n '3,6p'"),
            r("a.txt", range(3, Some(6)), true)
        );
        assert_eq!(read("head a.txt"), r("a.txt", Lines::Head(10), false));
        assert_eq!(read("head -n 3 a.txt"), r("a.txt", Lines::Head(3), false));
        assert_eq!(read("head -20 a.txt"), r("a.txt", Lines::Head(20), false));
        assert_eq!(read("tail -n 2 a.txt"), r("a.txt", Lines::Tail(2), false));
        assert_eq!(
            read("tail -n +40 a.txt"),
            r("a.txt", range(40, None), false)
        );
        assert_eq!(
            read("cd src && cat x.rs"),
            Some(Read {
                dir: Some("src".into()),
                ..r("x.rs", Lines::All, false).unwrap()
            })
        );
    }

    #[test]
    fn nothing_from_what_it_does_not_understand() {
        for c in [
            "cat a.txt b.txt",
            "cat *.txt",
            "cat $F",
            "cat a.txt > b.txt",
            "cat a.txt; rm a.txt",
            "sed -n '1,5p;10p' a.txt",
            "sed -i 's/a/b/' a.txt",
            "sed -n '5,1p' a.txt",
            "head -c 10 a.txt",
            "grep -n x a.txt",
            "cat a.txt | head",
            "sed -n '1,5p' a.txt | nl -ba",
            "cat \"$HOME/a\"",
            "cat ~/a",
            "ls && cat a",
            "cat -",
            "",
        ] {
            assert_eq!(read(c), None, "{c}");
        }
    }

    #[test]
    fn finds_patches_in_heredocs() {
        let cmd =
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\nEOF\n";
        assert_eq!(
            patch_heredocs(cmd),
            vec![(
                None,
                "*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch".to_string()
            )]
        );
        let cmd = "cd sub && apply_patch <<\"PATCH\"\nx\nPATCH";
        assert_eq!(
            patch_heredocs(cmd),
            vec![(Some("sub".into()), "x".to_string())]
        );
        assert_eq!(patch_heredocs("cat <<EOF\nx\nEOF"), vec![]);
        assert_eq!(patch_heredocs("apply_patch <<EOF\nno end"), vec![]);
    }

    #[test]
    fn numbered_lines() {
        assert_eq!(unnumber("     3\tline 3"), Some((3, "line 3")));
        assert_eq!(unnumber("    12\t"), Some((12, "")));
        assert_eq!(unnumber("line"), None);
    }
}
