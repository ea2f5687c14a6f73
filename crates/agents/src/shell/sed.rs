//! A `sed -i` whose script is substitutions of patterns
//! (`sed -i -E 's/^(version) = .*/\1 = "2"/' Cargo.toml`): what it does
//! to a text is found by running `sed` itself over that text, so that
//! the edit can be merged with a change its file had since the agent's
//! view, as an edit tool's is ([`crate::event::Edits`]).
//!
//! fsview reads sed's regular expressions no more than it must: it only
//! checks that the script is substitutions and nothing else (no `e` or `w`
//! flag, no command that reads or writes a file, no loop), and runs GNU
//! sed's `--sandbox` over the texts, with a time limit. A sed that is not
//! GNU's, or fails, or takes too long, merges nothing: the command is
//! refused with the change, as it was.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one run of sed over a text may take.
const LIMIT: Duration = Duration::from_secs(2);

/// A sed script of substitutions, with the options it runs under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sed {
    /// Each `-e` script (or the one script word), in order.
    pub scripts: Vec<String>,
    /// `-E`/`-r`: extended regular expressions.
    pub extended: bool,
    /// `-z`: lines end with NUL.
    pub null_data: bool,
    /// `--posix`.
    pub posix: bool,
}

impl Sed {
    /// What the script makes of `text`, as `sed -i` makes it of a file
    /// holding it; `None` when sed cannot be run in its sandbox, fails,
    /// takes longer than [`LIMIT`] or writes something that is not UTF-8.
    pub fn run(&self, text: &str) -> Option<String> {
        let mut cmd = Command::new("sed");
        cmd.arg("--sandbox");
        if self.extended {
            cmd.arg("-E");
        }
        if self.null_data {
            cmd.arg("-z");
        }
        if self.posix {
            cmd.arg("--posix");
        }
        for s in &self.scripts {
            cmd.arg("-e").arg(s);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut stdin = child.stdin.take()?;
        let input = text.as_bytes().to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let mut stdout = child.stdout.take()?;
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            stdout.read_to_end(&mut out).map(|_| out)
        });
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if start.elapsed() < LIMIT => std::thread::sleep(Duration::from_millis(1)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        // A sed that stopped reading early leaves the writer a broken
        // pipe: what it wrote is still its answer.
        let _ = writer.join();
        let out = reader.join().ok()?.ok()?;
        match status {
            Some(s) if s.success() => String::from_utf8(out).ok(),
            _ => None,
        }
    }
}

/// The script of `sed -i [-E] [-s] [-z] [--posix] SCRIPT FILE...` (or
/// `-e SCRIPT`, any number of them, or `--expression=SCRIPT`) when each
/// script is only substitutions ([`substitutions`]) and the command edits
/// its files in place with no backup; `None` for any other command line.
pub(super) fn sed_script(args: &[Option<&str>]) -> Option<Sed> {
    let mut sed = Sed {
        scripts: Vec::new(),
        extended: false,
        null_data: false,
        posix: false,
    };
    let mut in_place = false;
    let mut given = false;
    let mut opts = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = (*a)?;
        match a {
            "--" if opts => opts = false,
            "--in-place" if opts => in_place = true,
            "--regexp-extended" if opts => sed.extended = true,
            "--separate" if opts => {}
            "--null-data" if opts => sed.null_data = true,
            "--posix" if opts => sed.posix = true,
            "-e" | "--expression" if opts => {
                sed.scripts.push((*it.next()?)?.to_string());
                given = true;
            }
            _ if opts && a.starts_with("--expression=") => {
                sed.scripts.push(a["--expression=".len()..].to_string());
                given = true;
            }
            _ if opts && a.starts_with('-') && a.len() > 1 => {
                // A cluster of -E, -r, -s, -z and a last -i (after -i the
                // rest of the word would be a backup's suffix).
                let flags = &a[1..];
                let (flags, i) = match flags.strip_suffix('i') {
                    Some(f) => (f, true),
                    None => (flags, false),
                };
                for c in flags.chars() {
                    match c {
                        'E' | 'r' => sed.extended = true,
                        'z' => sed.null_data = true,
                        's' => {}
                        _ => return None,
                    }
                }
                in_place |= i;
            }
            _ if !given => {
                sed.scripts.push(a.to_string());
                given = true;
            }
            _ => {}
        }
    }
    let only_substitutions = sed.scripts.iter().all(|s| substitutions(s));
    (in_place && given && only_substitutions).then_some(sed)
}

/// Whether `script` is one or more substitutions and nothing else:
/// `[ADDR[,ADDR]][!]s/RE/NEW/[FLAGS]`, separated by `;` or newlines, where
/// an address is a line number, `$` or `/RE/` (`\cREc`, with `I` or `M`)
/// and the flags are `g`, `i`/`I`, `m`/`M` and a number: no flag that
/// prints, writes a file or runs a command.
pub(super) fn substitutions(script: &str) -> bool {
    let mut s = script.chars().peekable();
    let mut any = false;
    loop {
        while s.peek().is_some_and(|c| c.is_whitespace() || *c == ';') {
            s.next();
        }
        if s.peek().is_none() {
            return any;
        }
        // Addresses.
        for second in [false, true] {
            if second {
                if s.peek() != Some(&',') {
                    break;
                }
                s.next();
            }
            match s.peek().copied() {
                Some(c) if c.is_ascii_digit() => {
                    while s.peek().is_some_and(char::is_ascii_digit) {
                        s.next();
                    }
                }
                Some('$') => {
                    s.next();
                }
                Some('/') | Some('\\') => {
                    if s.next() == Some('\\') {
                        match s.next() {
                            Some(d) if d != '\n' && d != '\\' => {
                                if !delimited(&mut s, d) {
                                    return false;
                                }
                            }
                            _ => return false,
                        }
                    } else if !delimited(&mut s, '/') {
                        return false;
                    }
                    while s.peek().is_some_and(|c| matches!(c, 'I' | 'M')) {
                        s.next();
                    }
                }
                _ if second => return false,
                _ => {}
            }
        }
        while s.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            s.next();
        }
        if s.peek() == Some(&'!') {
            s.next();
        }
        while s.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            s.next();
        }
        if s.next() != Some('s') {
            return false;
        }
        let delim = match s.next() {
            Some(d) if d != '\n' && d != '\\' => d,
            _ => return false,
        };
        if !delimited(&mut s, delim) || !delimited(&mut s, delim) {
            return false;
        }
        while s
            .peek()
            .is_some_and(|c| matches!(c, 'g' | 'i' | 'I' | 'm' | 'M') || c.is_ascii_digit())
        {
            s.next();
        }
        while s.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            s.next();
        }
        match s.peek() {
            None | Some(';') | Some('\n') => any = true,
            _ => return false,
        }
    }
}

/// Moves past the text up to and including the next `delim` that no
/// backslash escapes; false when there is none.
fn delimited(s: &mut std::iter::Peekable<std::str::Chars<'_>>, delim: char) -> bool {
    while let Some(c) = s.next() {
        if c == '\\' {
            if s.next().is_none() {
                return false;
            }
        } else if c == delim {
            return true;
        }
    }
    false
}
