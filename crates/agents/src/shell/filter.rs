//! An in-place edit by a script (`sed -i -E 's/^(version) = .*/\1 = "2"/'
//! Cargo.toml`, `perl -pi -e 's/\bfoo\b/bar/g' f`): what it does to a text
//! is found by running the program itself over that text, so that the edit
//! can be merged with a change its file had since the agent's view, as an
//! edit tool's is ([`crate::event::Edits`]).
//!
//! fsview reads the patterns no more than it must: it only checks that the
//! script is substitutions and nothing else (no flag or command that runs
//! code, reads or writes a file, or loops; for perl, nothing interpolated
//! but a group), and runs the program over the texts, with a time limit:
//! sed as `sed --sandbox`. A program that is missing, fails, or takes too
//! long (or a sed that is not GNU's) merges nothing: the command is refused
//! with the change, as it was.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one run of the program over a text may take.
const LIMIT: Duration = Duration::from_secs(2);

/// A program that makes of its standard input what an in-place edit makes
/// of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// `sed` or `perl`.
    pub program: &'static str,
    /// Its arguments: the options and scripts, no file.
    pub args: Vec<String>,
}

impl Filter {
    /// `program` with `options`, then each of `scripts` after its `-e`.
    fn with_scripts(program: &'static str, mut options: Vec<String>, scripts: Vec<String>) -> Self {
        for s in scripts {
            options.push("-e".into());
            options.push(s);
        }
        Filter {
            program,
            args: options,
        }
    }

    /// What the edit makes of `text`, as it makes it of a file holding it;
    /// `None` when the program cannot be run, fails, takes longer than
    /// [`LIMIT`] or writes something that is not UTF-8.
    pub fn run(&self, text: &str) -> Option<String> {
        let mut child = Command::new(self.program)
            .args(&self.args)
            // What the user's settings would load into perl runs with the
            // command itself, once.
            .env_remove("PERL5OPT")
            .env_remove("PERL5LIB")
            .env_remove("PERLLIB")
            .env_remove("PERL5DB")
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
        // A program that stopped reading early leaves the writer a broken
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
pub(super) fn sed_script(args: &[Option<&str>]) -> Option<Filter> {
    let mut options = vec!["--sandbox".to_string()];
    let mut scripts = Vec::new();
    let mut in_place = false;
    let mut given = false;
    let mut opts = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = (*a)?;
        match a {
            "--" if opts => opts = false,
            "--in-place" if opts => in_place = true,
            "--regexp-extended" if opts => options.push("-E".into()),
            "--separate" if opts => {}
            "--null-data" if opts => options.push("-z".into()),
            "--posix" if opts => options.push("--posix".into()),
            "-e" | "--expression" if opts => {
                scripts.push((*it.next()?)?.to_string());
                given = true;
            }
            _ if opts && a.starts_with("--expression=") => {
                scripts.push(a["--expression=".len()..].to_string());
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
                        'E' | 'r' => options.push("-E".into()),
                        'z' => options.push("-z".into()),
                        's' => {}
                        _ => return None,
                    }
                }
                in_place |= i;
            }
            _ if !given => {
                scripts.push(a.to_string());
                given = true;
            }
            _ => {}
        }
    }
    if !(in_place && given && scripts.iter().all(|s| substitutions(s))) {
        return None;
    }
    Some(Filter::with_scripts("sed", options, scripts))
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

/// The script of `perl -pi -e SCRIPT FILE...` (`-i -pe`, `-0777 -pi`,
/// `-pli`, `-w`; any number of `-e` or `-E`) when each script is only
/// substitutions ([`perl_substitutions`]) and the command edits its files
/// in place with no backup; `None` for any other command line (`-n`, a
/// script from a file, any other option).
pub(super) fn perl_script(args: &[Option<&str>]) -> Option<Filter> {
    let mut options = vec!["-p".to_string()];
    let mut scripts: Vec<String> = Vec::new();
    let (mut p, mut in_place) = (false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = (*a)?;
        // Perl's options end at `--` or at the first other word: the files.
        let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty() && *f != "-") else {
            break;
        };
        let mut chars = flags.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                'p' => p = true,
                'w' => {}
                'l' => {
                    if chars.peek().is_some_and(|(_, c)| c.is_ascii_digit()) {
                        return None;
                    }
                    options.push("-l".into());
                }
                // -0DIGITS (octal) or -0xHEX: the record separator.
                '0' => {
                    let mut sep = String::from("-0");
                    while let Some((_, d)) = chars.next_if(|(_, c)| ('0'..='7').contains(c)) {
                        sep.push(d);
                    }
                    if let Some((_, x)) = chars.next_if(|(_, c)| matches!(c, 'x' | 'X')) {
                        sep.push(x);
                        while let Some((_, d)) = chars.next_if(|(_, c)| c.is_ascii_hexdigit()) {
                            sep.push(d);
                        }
                    }
                    options.push(sep);
                }
                // -i with anything after it names a backup's suffix.
                'i' if at + 1 == flags.len() => in_place = true,
                'e' | 'E' => {
                    let rest = &flags[at + 1..];
                    let script = match rest.is_empty() {
                        true => (*it.next()?)?,
                        false => rest,
                    };
                    scripts.push(script.to_string());
                    break;
                }
                _ => return None,
            }
        }
    }
    if !(p && in_place && !scripts.is_empty()) {
        return None;
    }
    if !scripts.iter().all(|s| perl_substitutions(s)) {
        return None;
    }
    Some(Filter::with_scripts("perl", options, scripts))
}

/// Whether a perl script is one or more substitutions and nothing else:
/// `s/RE/NEW/FLAGS`, separated by `;`, with any delimiter but a bracket,
/// the flags `g`, `i`, `m`, `s` and `x` (not `e`, which runs NEW as code,
/// nor `r`), and nothing interpolated but a group (`$1`, `$&`): no other
/// `$`, no `@`, no code in RE ([`runs_code`]; a `$` that ends RE, or
/// comes before `)` or `|`, is the anchor).
pub(super) fn perl_substitutions(script: &str) -> bool {
    let mut s = script.chars().peekable();
    let mut any = false;
    loop {
        while s.peek().is_some_and(|c| c.is_whitespace() || *c == ';') {
            s.next();
        }
        if s.peek().is_none() {
            return any;
        }
        if s.next() != Some('s') {
            return false;
        }
        let delim = match s.next() {
            Some(d) if !(d.is_alphanumeric() || d.is_whitespace() || "\\_{}[]()<>".contains(d)) => {
                d
            }
            _ => return false,
        };
        let (Some(re), Some(new)) = (taken(&mut s, delim), taken(&mut s, delim)) else {
            return false;
        };
        while s.next_if(|c| "gimsx".contains(*c)).is_some() {}
        while s.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
        if !matches!(s.peek(), None | Some(';') | Some('\n')) {
            return false;
        }
        if !plain_perl(&re, |next| matches!(next, None | Some(')') | Some('|')))
            || !plain_perl(&new, |next| {
                next.is_some_and(|c| c.is_ascii_digit() || c == '&')
            })
            || runs_code(&re)
        {
            return false;
        }
        any = true;
    }
}

/// Whether a perl regex may hold code: `(?{ })`, `(??{ })`, and since
/// perl 5.38 `(*{ })` and `(**{ })`, looked for with white space left out
/// (under `/x`). A backtracking verb (`(*FAIL)`) or an escaped `\(` before
/// `?{` is taken as code too: such a script is gated, not run.
fn runs_code(re: &str) -> bool {
    let tight: String = re.chars().filter(|c| !c.is_whitespace()).collect();
    tight.contains("(?{") || tight.contains("(??{") || tight.contains("(*")
}

/// The text up to the next `delim` that no backslash escapes (escapes
/// kept); `None` when there is none.
fn taken(s: &mut std::iter::Peekable<std::str::Chars<'_>>, delim: char) -> Option<String> {
    let mut out = String::new();
    while let Some(c) = s.next() {
        if c == '\\' {
            out.push(c);
            out.push(s.next()?);
        } else if c == delim {
            return Some(out);
        } else {
            out.push(c);
        }
    }
    None
}

/// Whether `part` of a substitution interpolates nothing but what
/// `dollar_ok` allows after a `$` (given the next character): no `@`.
fn plain_perl(part: &str, dollar_ok: impl Fn(Option<char>) -> bool) -> bool {
    let mut s = part.chars().peekable();
    while let Some(c) = s.next() {
        match c {
            '\\' => {
                s.next();
            }
            '@' => return false,
            '$' if !dollar_ok(s.peek().copied()) => return false,
            _ => {}
        }
    }
    true
}
