//! Shell commands, read the way bash reads them: which lines of which file
//! a command prints, and which files it writes.
//!
//! Every agent fsview answers has a shell tool, and a shell can show a file
//! (`cat`, `sed -n`) or write one (`>`, `tee`, `sed -i`, `cp`) as surely as
//! the agent's read and edit tools. This is the one reader of command lines
//! for every adapter: a command line is parsed as bash parses it
//! (`brush-parser`), and only what it says literally is taken. A word with
//! a variable, a command substitution, a glob or a `~` names no file fsview
//! can know, so nothing is taken from it: such a write is not gated and
//! such a read records nothing. A command fsview cannot read is allowed,
//! never refused on a guess.
//!
//! What a command shows ([`read`]), when it is one of these alone, after an
//! optional `cd DIR &&`, with literal arguments:
//! - `cat FILE`: the whole file, as its bytes;
//! - `cat -n FILE`, `nl -ba FILE`: the whole file, each line numbered;
//! - `sed -n 'A,Bp' FILE`, `sed -n 'Ap'`, `sed -n 'A,$p'`: lines A to B;
//! - `nl -ba FILE | sed -n 'A,Bp'` (or `cat -n`): the same, numbered;
//! - `head [-n N | -N] FILE` (10 lines by default): the first lines;
//! - `tail [-n N | -N] FILE`: the last lines; `tail -n +A FILE`: from A.
//!
//! What a command writes ([`writes`]), anywhere in the command line (each
//! part of a pipeline or a list, loops, subshells, functions, `$(...)`,
//! `bash -c '...'`, `bash <<'EOF'`, `eval '...'`), its paths taken from
//! where the `cd`s before it lead; never a name that is no file
//! ([`not_a_file`]):
//! - a redirection `>`, `>|`, `&>`, `N>` (the whole file), `>>`, `&>>` (an
//!   append), `<>` (in place);
//! - `tee [-a] FILE...`; `sed -i`/`--in-place`, `perl -i` and `ruby -i`
//!   (in place); `touch` (as an append: nothing is lost);
//! - `sort -o FILE`, `curl -o FILE`, `wget -O FILE` (the whole file);
//! - `cp`, `mv`, `install` and `ln -f` onto a file (the whole file; a
//!   directory as the destination means the file of the source's name in
//!   it), unless told not to overwrite (`-n`) or to keep a backup (`-b`);
//! - `truncate -s SIZE` (the whole file, unless it only grows it), `dd
//!   of=FILE` (the whole file, in place with `conv=notrunc`);
//! - `python -c` / `node -e` code, or code fed to them as a here-document,
//!   that opens a literal path for writing (`open('f', 'w')`,
//!   `Path('f').write_text(`, `writeFileSync('f'`, `appendFileSync('f'`).
//!
//! A whole-file write whose text the command spells out (`cat > f <<'EOF'`,
//! `tee f <<'EOF'`, `echo TEXT > f`, with nothing to expand) says what the
//! file then holds. It also finds the patch Codex takes from a command
//! line ([`apply_patch`]), and git's commands that discard work-tree
//! changes ([`discards`]).

use std::path::{Path, PathBuf};

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::ParserOptions;

use crate::event::{Changed, Event, Extent, OwnWrite, Printed, Shown, ShownText};

/// The command line as bash parses it; `None` when it does not parse.
fn program(command: &str) -> Option<ast::Program> {
    let mut p = brush_parser::Parser::new(std::io::Cursor::new(command), &ParserOptions::default());
    p.parse_program().ok()
}

/// A word's text when it has nothing for the shell to expand (no
/// variable, command substitution, glob, brace or tilde): the quotes and
/// escapes taken away.
fn literal(w: &str) -> Option<String> {
    let pieces = word::parse(w, &ParserOptions::default()).ok()?;
    let mut out = String::new();
    for p in &pieces {
        push_literal(p, &mut out, false)?;
    }
    Some(out)
}

fn push_literal(p: &WordPieceWithSource, out: &mut String, quoted: bool) -> Option<()> {
    match &p.piece {
        WordPiece::Text(t) => {
            if !quoted && t.contains(['*', '?', '[', '{']) {
                return None;
            }
            out.push_str(t);
        }
        WordPiece::SingleQuotedText(t) => out.push_str(t),
        // `\x` is `x`; a backslash before a newline joins the lines.
        WordPiece::EscapeSequence(e) => out.push_str(e.strip_prefix('\\').unwrap_or(e)),
        WordPiece::DoubleQuotedSequence(inner) => {
            for p in inner {
                push_literal(p, out, true)?;
            }
        }
        _ => return None,
    }
    Some(())
}

/// Where a command runs, relative to where the command line starts.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Dir {
    /// This directory (empty: where the line starts).
    Known(PathBuf),
    /// A `cd` to somewhere fsview cannot tell.
    Unknown,
}

impl Dir {
    /// `path` as named from here; `None` for a relative path from an
    /// unknown directory.
    fn join(&self, path: &str) -> Option<PathBuf> {
        let p = Path::new(path);
        match self {
            _ if p.is_absolute() => Some(p.to_path_buf()),
            Dir::Known(d) => Some(d.join(p)),
            Dir::Unknown => None,
        }
    }

    fn cd(&self, to: Option<&str>) -> Dir {
        match to {
            Some(to) if to != "-" && !to.is_empty() => match self.join(to) {
                Some(d) => Dir::Known(d),
                None => Dir::Unknown,
            },
            _ => Dir::Unknown,
        }
    }
}

/// A redirection, as far as fsview reads it.
#[derive(Clone, Debug)]
enum Redirect {
    /// Output to a file (`None`: a name fsview cannot read).
    Out { path: Option<String>, how: How },
    /// Standard input from a here-document or here-string: its text when
    /// nothing in it is expanded; `script`, its text as written, expanded
    /// or not (what a shell reading it as a script finds literally in it).
    Input {
        fd: i32,
        text: Option<String>,
        script: Option<String>,
    },
    /// Anything else (an input file, a duplicated descriptor).
    Other,
}

/// One simple command, flattened out of the command line.
#[derive(Clone, Debug)]
struct Simple {
    /// The command's name and arguments, each its literal text or `None`.
    words: Vec<Option<String>>,
    redirects: Vec<Redirect>,
    dir: Dir,
    /// It runs in the background (`&`): the command line may return before
    /// it has written what it writes.
    background: bool,
}

impl Simple {
    fn name(&self) -> Option<&str> {
        self.words.first().and_then(|w| w.as_deref())
    }

    /// The text on standard input, when a here-document or here-string
    /// gives it literally.
    fn stdin(&self) -> Option<Option<&str>> {
        self.redirects.iter().rev().find_map(|r| match r {
            Redirect::Input { fd: 0, text, .. } => Some(text.as_deref()),
            _ => None,
        })
    }
}

/// Every simple command of a command line, each with the redirections that
/// apply to it and the directory it runs in.
fn flatten(program: &ast::Program, start: &Dir) -> Vec<Simple> {
    let mut out = Vec::new();
    for list in &program.complete_commands {
        let mut dir = start.clone();
        compound_list(list, &mut dir, &[], &mut out);
    }
    out
}

fn compound_list(
    list: &ast::CompoundList,
    dir: &mut Dir,
    outer: &[Redirect],
    out: &mut Vec<Simple>,
) {
    for ast::CompoundListItem(and_or, sep) in &list.0 {
        let from = out.len();
        pipeline(&and_or.first, dir, outer, out);
        for next in &and_or.additional {
            let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
            pipeline(p, dir, outer, out);
        }
        if matches!(sep, ast::SeparatorOperator::Async) {
            for c in &mut out[from..] {
                c.background = true;
            }
        }
    }
}

fn pipeline(p: &ast::Pipeline, dir: &mut Dir, outer: &[Redirect], out: &mut Vec<Simple>) {
    // Each part of a pipeline runs in a subshell of its own (the last one
    // too, unless `lastpipe`): a `cd` in one changes no other.
    let alone = p.seq.len() > 1;
    for c in &p.seq {
        let mut here = dir.clone();
        command(c, &mut here, outer, out);
        if !alone {
            *dir = here;
        }
    }
}

fn command(c: &ast::Command, dir: &mut Dir, outer: &[Redirect], out: &mut Vec<Simple>) {
    match c {
        ast::Command::Simple(s) => simple(s, dir, outer, out),
        ast::Command::Compound(cc, redirects) => {
            let mut all = outer.to_vec();
            if let Some(r) = redirects {
                all.extend(r.0.iter().map(|r| redirect(r, out, dir)));
            }
            compound(cc, dir, &all, out);
        }
        ast::Command::Function(f) => {
            // The body runs where the function is called: take it as run
            // here, and leave the directory as it was.
            let mut here = dir.clone();
            let mut all = outer.to_vec();
            if let Some(r) = &f.body.1 {
                all.extend(r.0.iter().map(|r| redirect(r, out, dir)));
            }
            compound(&f.body.0, &mut here, &all, out);
        }
        ast::Command::ExtendedTest(..) => {}
    }
}

fn compound(cc: &ast::CompoundCommand, dir: &mut Dir, outer: &[Redirect], out: &mut Vec<Simple>) {
    use ast::CompoundCommand as C;
    let before = dir.clone();
    match cc {
        C::BraceGroup(b) => compound_list(&b.list, dir, outer, out),
        C::Subshell(s) => {
            let mut here = dir.clone();
            compound_list(&s.list, &mut here, outer, out);
            return;
        }
        C::ForClause(f) => compound_list(&f.body.list, dir, outer, out),
        C::ArithmeticForClause(f) => compound_list(&f.body.list, dir, outer, out),
        C::CaseClause(c) => {
            for item in &c.cases {
                if let Some(list) = &item.cmd {
                    compound_list(list, dir, outer, out);
                }
            }
        }
        C::IfClause(i) => {
            compound_list(&i.condition, dir, outer, out);
            compound_list(&i.then, dir, outer, out);
            for e in i.elses.iter().flatten() {
                if let Some(c) = &e.condition {
                    compound_list(c, dir, outer, out);
                }
                compound_list(&e.body, dir, outer, out);
            }
        }
        C::WhileClause(w) | C::UntilClause(w) => {
            compound_list(&w.0, dir, outer, out);
            compound_list(&w.1.list, dir, outer, out);
        }
        C::Coprocess(c) => {
            let mut here = dir.clone();
            command(&c.body, &mut here, outer, out);
            return;
        }
        C::Arithmetic(_) => {}
    }
    // A branch, a loop: whether its `cd` ran is not known.
    if *dir != before && !matches!(cc, C::BraceGroup(_)) {
        *dir = Dir::Unknown;
    }
}

fn simple(s: &ast::SimpleCommand, dir: &mut Dir, outer: &[Redirect], out: &mut Vec<Simple>) {
    let mut words = Vec::new();
    let mut redirects = outer.to_vec();
    let items = s
        .prefix
        .iter()
        .flat_map(|p| p.0.iter())
        .map(|i| (i, true))
        .chain(s.suffix.iter().flat_map(|p| p.0.iter()).map(|i| (i, false)));
    let mut name_done = false;
    for (item, in_prefix) in items {
        if !in_prefix && !name_done {
            if let Some(w) = &s.word_or_name {
                substitutions(&w.value, dir, out);
                words.push(literal(&w.value));
            }
            name_done = true;
        }
        match item {
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => redirects.push(redirect(r, out, dir)),
            ast::CommandPrefixOrSuffixItem::Word(w) => {
                substitutions(&w.value, dir, out);
                words.push(literal(&w.value));
            }
            ast::CommandPrefixOrSuffixItem::AssignmentWord(_, w) => {
                substitutions(&w.value, dir, out);
                // After the name it is an argument (`dd of=FILE`).
                if !in_prefix {
                    words.push(literal(&w.value));
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                let mut here = dir.clone();
                compound_list(&sub.list, &mut here, &[], out);
            }
        }
    }
    if !name_done {
        if let Some(w) = &s.word_or_name {
            substitutions(&w.value, dir, out);
            words.push(literal(&w.value));
        }
    }
    let cmd = Simple {
        words,
        redirects,
        dir: dir.clone(),
        background: false,
    };
    match cmd.name() {
        Some("cd" | "pushd") => *dir = dir.cd(cmd.words.get(1).and_then(|w| w.as_deref())),
        Some("popd") => *dir = Dir::Unknown,
        _ => {}
    }
    // `bash -c 'SCRIPT'`, `bash <<'EOF'`, `eval '...'`: the script's
    // commands too, where it runs.
    if let Some(script) = shell_script(&cmd) {
        if let Some(p) = program(&script) {
            let from = out.len();
            out.extend(flatten(&p, &cmd.dir));
            if cmd.background {
                for c in &mut out[from..] {
                    c.background = true;
                }
            }
        }
    }
    if !cmd.words.is_empty() || cmd.redirects.len() > outer.len() {
        out.push(cmd);
    }
}

/// The script a command runs as shell code: `bash -c SCRIPT` (or sh,
/// dash, zsh, ksh), a shell reading its script from a here-document or
/// here-string (`bash <<'EOF'`, `sh -s <<EOF`: its text as written, what
/// it names literally being certain whatever the outer shell expands),
/// `eval` of literal words, `flock FILE -c SCRIPT`.
fn shell_script(cmd: &Simple) -> Option<String> {
    let words = strip_wrappers(&cmd.words);
    let [name, rest @ ..] = words else {
        return None;
    };
    let name = name.as_deref()?;
    let base = name.rsplit('/').next().unwrap_or(name);
    let dash_c = || {
        let at = rest.iter().position(|w| {
            w.as_deref()
                .is_some_and(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
        })?;
        rest.get(at + 1)?.clone()
    };
    match base {
        "bash" | "sh" | "dash" | "zsh" | "ksh" => {
            if let Some(script) = dash_c() {
                return Some(script);
            }
            // No script file (or `-s`, `-`): the script is standard input.
            let file = rest
                .iter()
                .any(|w| w.as_deref().is_none_or(|w| !w.starts_with('-')));
            let stdin = rest.iter().any(|w| {
                w.as_deref().is_some_and(|w| {
                    w == "-" || (w.starts_with('-') && !w.starts_with("--") && w.contains('s'))
                })
            });
            if file && !stdin {
                return None;
            }
            cmd.redirects.iter().rev().find_map(|r| match r {
                Redirect::Input {
                    fd: 0,
                    script: Some(s),
                    ..
                } => Some(s.clone()),
                _ => None,
            })
        }
        "eval" => rest
            .iter()
            .map(|w| w.as_deref())
            .collect::<Option<Vec<_>>>()
            .map(|w| w.join(" ")),
        "flock" => dash_c(),
        _ => None,
    }
}

/// The commands inside a word's `$(...)` and backquotes, run where it is.
fn substitutions(w: &str, dir: &Dir, out: &mut Vec<Simple>) {
    if !w.contains(['$', '`']) {
        return;
    }
    let Ok(pieces) = word::parse(w, &ParserOptions::default()) else {
        return;
    };
    let mut scripts = Vec::new();
    collect_substitutions(&pieces, &mut scripts);
    for s in scripts {
        if let Some(p) = program(&s) {
            out.extend(flatten(&p, dir));
        }
    }
}

fn collect_substitutions(pieces: &[WordPieceWithSource], out: &mut Vec<String>) {
    for p in pieces {
        match &p.piece {
            WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                out.push(s.clone())
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => collect_substitutions(inner, out),
            _ => {}
        }
    }
}

fn redirect(r: &ast::IoRedirect, out: &mut Vec<Simple>, dir: &Dir) -> Redirect {
    use ast::IoFileRedirectKind as K;
    use ast::IoFileRedirectTarget as T;
    let mut file = |w: &ast::Word, how| {
        substitutions(&w.value, dir, out);
        Redirect::Out {
            path: literal(&w.value),
            how,
        }
    };
    match r {
        ast::IoRedirect::File(_, kind, T::Filename(w)) => match kind {
            K::Write | K::Clobber => file(w, How::Whole),
            K::Append => file(w, How::Append),
            K::ReadAndWrite => file(w, How::Edit),
            _ => Redirect::Other,
        },
        // `>& FILE` (not a descriptor): standard output and error to it.
        ast::IoRedirect::File(_, K::DuplicateOutput, T::Duplicate(w))
            if !w.value.is_empty() && !w.value.bytes().all(|b| b.is_ascii_digit() || b == b'-') =>
        {
            file(w, How::Whole)
        }
        ast::IoRedirect::File(_, _, T::ProcessSubstitution(_, sub)) => {
            let mut here = dir.clone();
            compound_list(&sub.list, &mut here, &[], out);
            Redirect::Other
        }
        ast::IoRedirect::File(..) => Redirect::Other,
        ast::IoRedirect::OutputAndError(w, append) => {
            file(w, if *append { How::Append } else { How::Whole })
        }
        ast::IoRedirect::HereDocument(fd, doc) => {
            let untabbed = |t: &str| -> String {
                match doc.remove_tabs {
                    true => t
                        .split_inclusive('\n')
                        .map(|l| l.trim_start_matches('\t'))
                        .collect(),
                    false => t.to_string(),
                }
            };
            let script = Some(untabbed(&doc.doc.value));
            let mut text = script.clone();
            if doc.requires_expansion && doc.doc.value.contains(['$', '`', '\\']) {
                substitutions(&doc.doc.value, dir, out);
                text = None;
            }
            Redirect::Input {
                fd: fd.unwrap_or(0),
                text,
                script,
            }
        }
        ast::IoRedirect::HereString(fd, w) => {
            let text = literal(&w.value).map(|mut t| {
                t.push('\n');
                t
            });
            Redirect::Input {
                fd: fd.unwrap_or(0),
                script: text.clone(),
                text,
            }
        }
    }
}

// -- reads --------------------------------------------------------------------

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

/// The words of a pipeline of one simple command.
fn plain_words(p: &ast::Pipeline) -> Option<Vec<String>> {
    match p.seq.as_slice() {
        [ast::Command::Simple(s)] if !p.bang => plain_simple(s),
        _ => None,
    }
}

/// A simple command's words, when it has no redirection or assignment and
/// every word is literal.
fn plain_simple(s: &ast::SimpleCommand) -> Option<Vec<String>> {
    if s.prefix.is_some() {
        return None;
    }
    let mut words = vec![literal(&s.word_or_name.as_ref()?.value)?];
    for item in s.suffix.iter().flat_map(|x| x.0.iter()) {
        match item {
            ast::CommandPrefixOrSuffixItem::Word(w) => words.push(literal(&w.value)?),
            _ => return None,
        }
    }
    Some(words)
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

/// What a command the agent ran showed it of a file, the files it wrote
/// with a text it spelled out, and every file it wrote (what it left there
/// is the agent's own output: [`fsview_store::own`]): the events to record
/// once the command has run (its output as `output` says, when the agent
/// reports it). `dir`: where the command ran, when not the agent's working
/// directory.
pub fn ran(command: &str, dir: Option<&Path>, output: Option<Output<'_>>) -> Vec<Event> {
    ran_as(command, dir, output, false)
}

/// [`ran`] for a command the agent runs on in the background (Claude
/// Code's `run_in_background`): the hook after it comes when it started,
/// and what it writes is still being written.
pub fn started(command: &str, dir: Option<&Path>) -> Vec<Event> {
    ran_as(command, dir, None, true)
}

fn ran_as(
    command: &str,
    dir: Option<&Path>,
    output: Option<Output<'_>>,
    background: bool,
) -> Vec<Event> {
    let mut events = Vec::new();
    if let Some(read) = output.and_then(|o| read(command).and_then(|r| shown(r, o))) {
        events.push(Event::Shown(under(dir, read)));
    }
    let writes = writes(command);
    for w in &writes {
        if let (How::Whole, Some(text), None, false) = (w.how, &w.text, &w.into, background) {
            events.push(Event::ShellWrote(Changed {
                path: join(dir, &w.path),
                text: text.clone(),
                before: None,
                whole: true,
            }));
        }
    }
    if !writes.is_empty() {
        events.push(Event::ShellWritten(own_writes(&writes, dir, background)));
    }
    if !discards(command).is_empty() {
        events.push(Event::GitDiscarded);
    }
    events
}

fn own_writes(writes: &[Write], dir: Option<&Path>, background: bool) -> Vec<OwnWrite> {
    writes
        .iter()
        .map(|w| OwnWrite {
            path: join(dir, &w.path),
            into: w.into.clone(),
            how: w.how,
            from: w.from.as_deref().map(|f| join(dir, f)),
            live: background || w.background,
        })
        .collect()
}

/// The gate's questions for the files a command is about to write (see
/// [`writes`]; an append is no question, see [`How::Append`]), then what
/// each of them holds before it runs ([`Event::ShellWriting`]).
pub fn about_to_run(command: &str, dir: Option<&Path>) -> Vec<Event> {
    let writes = writes(command);
    let mut events: Vec<Event> = writes
        .iter()
        .filter(|w| w.how != How::Append)
        .map(|w| {
            Event::ShellWrite(crate::event::ShellWrite {
                path: join(dir, &w.path),
                whole: w.how == How::Whole,
                into: w.into.clone(),
            })
        })
        .collect();
    for mut d in discards(command) {
        d.dir = join(dir, &d.dir);
        events.push(Event::GitDiscard(d));
    }
    if !writes.is_empty() {
        events.push(Event::ShellWriting(own_writes(&writes, dir, false)));
    }
    events
}

fn join(dir: Option<&Path>, path: &Path) -> PathBuf {
    match dir {
        Some(d) => d.join(path),
        None => path.to_path_buf(),
    }
}

fn under(dir: Option<&Path>, mut s: Shown) -> Shown {
    s.path = join(dir, &s.path);
    s
}

/// What a read command's output showed of its file.
fn shown(read: Read, output: Output<'_>) -> Option<Shown> {
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
fn unnumbered(output: &str, first: u64) -> Option<String> {
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

// -- writes -------------------------------------------------------------------

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
}

/// The files a command line writes, as far as it names them literally;
/// never a name that is no file ([`not_a_file`]).
pub fn writes(command: &str) -> Vec<Write> {
    let Some(p) = program(command) else {
        return Vec::new();
    };
    let mut out: Vec<Write> = Vec::new();
    for cmd in flatten(&p, &Dir::Known(PathBuf::new())) {
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

fn command_writes(cmd: &Simple, out: &mut Vec<Write>) {
    // The source of the copy `push` is given next.
    let from = std::cell::Cell::new(None);
    let mut push = |name: &str, how: How, into: Option<String>, text: Option<String>| {
        if let Some(path) = cmd.dir.join(name) {
            out.push(Write {
                path,
                how,
                into,
                text: text.filter(|_| how == How::Whole),
                from: from.take(),
                background: cmd.background,
            });
        }
    };
    // What the command prints, when it spells it out.
    let printed = printed(cmd);
    for r in &cmd.redirects {
        if let Redirect::Out { path: Some(p), how } = r {
            if !p.is_empty() {
                push(p, *how, None, printed.clone());
            }
        }
    }
    let words = strip_wrappers(&cmd.words);
    let Some((Some(name), args)) = words.split_first() else {
        return;
    };
    let base = name.rsplit('/').next().unwrap_or(name);
    let args: Vec<Option<&str>> = args.iter().map(|a| a.as_deref()).collect();
    match base {
        "tee" => {
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
        "sed" => {
            for f in in_place_files(&args, sed_option) {
                push(f, How::Edit, None, None);
            }
        }
        "perl" | "ruby" => {
            for f in in_place_files(&args, perl_option) {
                push(f, How::Edit, None, None);
            }
        }
        // The file an option names as where the output goes: `sort -o`,
        // `curl -o`/`--output`, `wget -O`/`--output-document` (and its log,
        // `-o`; `-a` appends to it).
        "sort" | "curl" | "wget" => {
            let options: &[(char, &str, How)] = match base {
                "sort" => &[('o', "--output", How::Whole)],
                "curl" => &[('o', "--output", How::Whole)],
                _ => &[
                    ('O', "--output-document", How::Whole),
                    ('o', "--output-file", How::Whole),
                    ('a', "--append-output", How::Append),
                ],
            };
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
        "cp" | "mv" | "install" | "ln" => {
            for (dest, into, source) in copies(base, &args) {
                from.set(source.and_then(|f| cmd.dir.join(f)));
                push(dest, How::Whole, into, None);
            }
        }
        "touch" => {
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
        "truncate" => {
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
        "dd" => {
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
        _ if is_python(base) || is_node(base) => {
            let code = code_of(base, &args).or_else(|| {
                // `python3 - <<'EOF'`, `node <<'EOF'`: the code on stdin.
                let script_file = args.iter().any(|a| a.is_some_and(|a| !a.starts_with('-')));
                (!script_file).then(|| cmd.stdin().flatten()).flatten()
            });
            if let Some(code) = code {
                let found = if is_python(base) {
                    python_writes(code)
                } else {
                    node_writes(code)
                };
                for (f, how) in found {
                    push(&f, how, None, None);
                }
            }
        }
        _ => {}
    }
}

/// A command's words without the wrappers that run the rest as a command
/// of its own (`env X=1`, `sudo`, `nohup`, `time`, `command`, `exec`,
/// `nice`, `timeout 5`).
fn strip_wrappers(words: &[Option<String>]) -> &[Option<String>] {
    let mut w = words;
    loop {
        let Some((Some(name), rest)) = w.split_first() else {
            return w;
        };
        let base = name.rsplit('/').next().unwrap_or(name);
        let skip_opts = |rest: &[Option<String>], with_arg: &[&str]| {
            let mut i = 0;
            while let Some(Some(a)) = rest.get(i) {
                if a == "--" {
                    return i + 1;
                }
                if !a.starts_with('-') {
                    break;
                }
                i += if with_arg.contains(&a.as_str()) { 2 } else { 1 };
            }
            i
        };
        let n = match base {
            "nohup" | "command" | "builtin" | "exec" | "time" | "setsid" | "unbuffer" => {
                skip_opts(rest, &[])
            }
            "stdbuf" => skip_opts(rest, &["-i", "-o", "-e"]),
            "ionice" => skip_opts(rest, &["-c", "-n", "-p", "-P", "-u"]),
            // taskset MASK CMD, chrt PRIORITY CMD (their -p forms act on a
            // process, and run nothing).
            "taskset" => {
                let n = skip_opts(rest, &["-c", "--cpu-list"]);
                // With -c the list is the option's; else a mask comes first.
                let listed = rest[..n.min(rest.len())].iter().any(|a| {
                    a.as_deref()
                        .is_some_and(|a| a.starts_with("-c") || a == "--cpu-list")
                });
                n + usize::from(!listed)
            }
            "chrt" => skip_opts(rest, &[]) + 1,
            // flock FILE CMD (its -c form is a script: shell_script).
            "flock"
                if rest
                    .iter()
                    .any(|a| matches!(a.as_deref(), Some("-c" | "--command"))) =>
            {
                return w
            }
            "flock" => skip_opts(rest, &["-w", "-E", "--timeout", "--conflict-exit-code"]) + 1,
            "sudo" | "doas" => skip_opts(
                rest,
                &["-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"],
            ),
            "nice" => skip_opts(rest, &["-n"]),
            "env" => {
                let mut i = skip_opts(rest, &["-u", "-C", "-S"]);
                while rest
                    .get(i)
                    .is_some_and(|a| a.as_deref().is_some_and(|a| a.contains('=')))
                {
                    i += 1;
                }
                i
            }
            "timeout" => skip_opts(rest, &["-s", "-k", "--signal", "--kill-after"]) + 1,
            _ => return w,
        };
        if n > rest.len() {
            return &[];
        }
        w = &rest[n..];
    }
}

/// What an option word of `sed` or `perl` does.
#[derive(Clone, Copy, Default)]
struct Opt {
    /// It takes the next word as its argument.
    takes_next: bool,
    /// It asks for in-place editing.
    in_place: bool,
    /// It gives the script (so the first other word is a file).
    script: bool,
}

/// An option of `sed`, or `None` when the word is not one.
fn sed_option(a: &str) -> Option<Opt> {
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
fn perl_option(a: &str) -> Option<Opt> {
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
            'I' | 'M' | 'm' | 'x' | 'd' | 'D' | 'C' | '0' | 'l' => return Some(opt),
            _ => {}
        }
    }
    Some(opt)
}

/// The files of `sed -i` or `perl -i`: the words after the script (the
/// first word that is no option, unless an option gave the script), when
/// an option asked for in-place editing.
fn in_place_files<'a>(args: &[Option<&'a str>], option: fn(&str) -> Option<Opt>) -> Vec<&'a str> {
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
/// source (never for `ln`, whose link is no copy).
#[allow(clippy::type_complexity)]
fn copies<'a>(
    name: &str,
    args: &[Option<&'a str>],
) -> Vec<(&'a str, Option<String>, Option<&'a str>)> {
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
                    "--backup" => backup = true,
                    "--force" => force = true,
                    "--no-target-directory" => no_target_dir = true,
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
                        'b' => backup = true,
                        'f' => force = true,
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
    if no_clobber || backup || dirs_only || (name == "ln" && !force) {
        return Vec::new();
    }
    let base_of = |s: Option<&str>| {
        s.and_then(|s| Path::new(s.trim_end_matches('/')).file_name())
            .map(|n| n.to_string_lossy().into_owned())
    };
    let copied = |s: Option<&'a str>| s.filter(|_| name != "ln");
    match target_dir {
        Some(Some(dir)) => operands
            .iter()
            .filter_map(|s| base_of(*s).map(|n| (dir, Some(n), copied(*s))))
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
                    .filter_map(|s| base_of(*s).map(|n| (*dest, Some(n), copied(*s))))
                    .collect();
            }
            let into = if no_target_dir {
                None
            } else {
                sources.first().copied().and_then(base_of)
            };
            vec![(*dest, into, copied(sources.first().copied().flatten()))]
        }
    }
}

fn is_python(name: &str) -> bool {
    name == "python"
        || name == "pypy3"
        || name
            .strip_prefix("python")
            .is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

fn is_node(name: &str) -> bool {
    matches!(name, "node" | "nodejs" | "bun" | "deno")
}

/// The code of `python -c CODE` or `node -e CODE` (`--eval`, `-p`).
fn code_of<'a>(name: &str, args: &[Option<&'a str>]) -> Option<&'a str> {
    let flags: &[&str] = if is_python(name) {
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
fn python_writes(code: &str) -> Vec<(String, How)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("open(") {
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
fn node_writes(code: &str) -> Vec<(String, How)> {
    let mut out = Vec::new();
    for (call, how) in [
        ("writeFileSync(", How::Whole),
        ("writeFile(", How::Whole),
        ("appendFileSync(", How::Append),
        ("appendFile(", How::Append),
    ] {
        for (at, _) in code.match_indices(call) {
            if let Some((path, _)) = string_literal(&code[at + call.len()..]) {
                out.push((path, how));
            }
        }
    }
    out
}

/// A string literal at the start of `s` (after spaces): `'...'` or
/// `"..."` with no escape, no interpolation prefix; its text and the rest.
fn string_literal(s: &str) -> Option<(String, &str)> {
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
fn printed(cmd: &Simple) -> Option<String> {
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

// -- git's discards ------------------------------------------------------------

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
    let Some(p) = program(command) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for cmd in flatten(&p, &Dir::Known(PathBuf::new())) {
        if let Some(d) = git_discard(&cmd) {
            out.push(d);
        }
    }
    out
}

fn git_discard(cmd: &Simple) -> Option<Discard> {
    let words = strip_wrappers(&cmd.words);
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
    let mut dir = match &cmd.dir {
        Dir::Known(d) => d.clone(),
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

fn head() -> Loses {
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
fn operands<'a>(
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

fn has(opts: &[&str], short: char, long: &[&str]) -> bool {
    opts.iter().any(|o| {
        long.contains(o) || (o.starts_with('-') && !o.starts_with("--") && o[1..].contains(short))
    })
}

fn checkout(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, before, after) = operands(
        args,
        &["-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"],
    );
    if opts.iter().any(|o| {
        matches!(*o, "-b" | "-B" | "--orphan" | "-p" | "--patch" | "--detach")
            || o.starts_with("--pathspec-from-file")
    }) {
        return None;
    }
    let force = has(&opts, 'f', &["--force"]);
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

fn restore(args: &[&str]) -> Option<(Vec<String>, Loses)> {
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

fn reset(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, _, _) = operands(args, &[]);
    opts.contains(&"--hard").then(|| (Vec::new(), head()))
}

fn switch(args: &[&str]) -> Option<(Vec<String>, Loses)> {
    let (opts, _, _) = operands(args, &["-c", "-C", "--orphan", "--conflict"]);
    has(&opts, 'f', &["--force", "--discard-changes"]).then(|| (Vec::new(), head()))
}

fn stash(args: &[&str]) -> Option<(Vec<String>, Loses)> {
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

fn clean(args: &[&str]) -> Option<(Vec<String>, Loses)> {
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

// -- Codex's apply_patch ------------------------------------------------------

/// The patch a command line sends to `apply_patch` (or `applypatch`) as a
/// here-document, in the forms Codex takes from a command line and applies
/// itself instead of running it: the whole line is `apply_patch <<DELIM`
/// and the patch, after an optional `cd DIR &&` (the directory quoted or
/// not, with or without spaces around `&&`). Returns the directory and the
/// patch text. A here-document inside another command's here-document is
/// that command's input, not a patch.
pub fn apply_patch(command: &str) -> Option<(Option<PathBuf>, String)> {
    let p = program(command)?;
    let [list] = p.complete_commands.as_slice() else {
        return None;
    };
    let [ast::CompoundListItem(and_or, ast::SeparatorOperator::Sequence)] = list.0.as_slice()
    else {
        return None;
    };
    let (dir, patch) = match and_or.additional.as_slice() {
        [] => (None, &and_or.first),
        [ast::AndOr::And(next)] => {
            let words = plain_words(&and_or.first)?;
            match words.as_slice() {
                [cd, d] if cd == "cd" => (Some(PathBuf::from(d)), next),
                _ => return None,
            }
        }
        _ => return None,
    };
    let [ast::Command::Simple(s)] = patch.seq.as_slice() else {
        return None;
    };
    if s.prefix.is_some() || patch.bang {
        return None;
    }
    let name = literal(&s.word_or_name.as_ref()?.value)?;
    if !matches!(name.as_str(), "apply_patch" | "applypatch") {
        return None;
    }
    let [ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(
        None | Some(0),
        doc,
    ))] = s.suffix.as_ref()?.0.as_slice()
    else {
        return None;
    };
    Some((dir, doc.doc.value.clone()))
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
        assert_eq!(
            read("cat my\\ file.txt"),
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
        for cmd in [
            "cd src && cat x.rs",
            "cd src&&cat x.rs",
            "cd \"src\" && cat x.rs",
        ] {
            assert_eq!(
                read(cmd),
                Some(Read {
                    dir: Some("src".into()),
                    ..r("x.rs", Lines::All, false).unwrap()
                }),
                "{cmd}"
            );
        }
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
            "cd - && cat a",
            "cat -",
            "X=1 cat a",
            "! cat a",
            "cat 'unterminated",
            "",
        ] {
            assert_eq!(read(c), None, "{c}");
        }
    }

    fn w(path: &str, how: How) -> Write {
        Write {
            path: path.into(),
            how,
            into: None,
            text: None,
            from: None,
            background: false,
        }
    }

    /// A copy of the file `name` onto `path`.
    fn into(path: &str, name: &str) -> Write {
        Write {
            into: Some(name.into()),
            from: Some(name.into()),
            ..w(path, How::Whole)
        }
    }

    fn from(mut w: Write, source: &str) -> Write {
        w.from = Some(source.into());
        w
    }

    fn background(mut w: Write) -> Write {
        w.background = true;
        w
    }

    fn with_text(mut w: Write, text: &str) -> Write {
        w.text = Some(text.into());
        w
    }

    #[test]
    fn writes_it_finds() {
        use How::*;
        let cases: Vec<(&str, Vec<Write>)> =
            vec![
            (
                "echo hi > out.txt",
                vec![with_text(w("out.txt", Whole), "hi\n")],
            ),
            (
                "echo -n 'a  b' >| out.txt",
                vec![with_text(w("out.txt", Whole), "a  b")],
            ),
            ("printf x >> log.txt", vec![w("log.txt", Append)]),
            ("make 2> err.log", vec![w("err.log", Whole)]),
            (
                "make &> all.log; make &>> all.log",
                vec![w("all.log", Whole), w("all.log", Append)],
            ),
            ("cmd >& out.log 2>&1", vec![w("out.log", Whole)]),
            (
                "cat > config.py <<'EOF'\nx = $1\nEOF\n",
                vec![with_text(w("config.py", Whole), "x = $1\n")],
            ),
            (
                "cat <<EOF > c.txt\nplain\nEOF",
                vec![with_text(w("c.txt", Whole), "plain\n")],
            ),
            ("cat <<EOF > c.txt\n$HOME\nEOF", vec![w("c.txt", Whole)]),
            (
                "cat <<-EOF > c.txt\n\tindented\nEOF",
                vec![with_text(w("c.txt", Whole), "indented\n")],
            ),
            (
                "tee out.txt <<'EOF'\nhello\nEOF",
                vec![with_text(w("out.txt", Whole), "hello\n")],
            ),
            (
                "echo x | tee -a log.txt other.txt",
                vec![w("log.txt", Append), w("other.txt", Append)],
            ),
            ("cargo test 2>&1 | tee test.log", vec![w("test.log", Whole)]),
            ("echo x | tee -i -p out.txt", vec![w("out.txt", Whole)]),
            ("echo x | tee -ia log.txt", vec![w("log.txt", Append)]),
            (
                "echo x | tee --output-error=warn out.txt",
                vec![w("out.txt", Whole)],
            ),
            (
                "sed -i 's/a/b/' f.txt g.txt",
                vec![w("f.txt", Edit), w("g.txt", Edit)],
            ),
            (
                "sed -i.bak -e 's/a/b/' -e 's/c/d/' f.txt",
                vec![w("f.txt", Edit)],
            ),
            ("sed -ni '/x/p' f.txt", vec![w("f.txt", Edit)]),
            ("sed --in-place=.orig s/a/b/ f.txt", vec![w("f.txt", Edit)]),
            ("sed 's/a/b/' f.txt > g.txt", vec![w("g.txt", Whole)]),
            ("perl -pi -e 's/a/b/' f.txt", vec![w("f.txt", Edit)]),
            ("perl -i.bak -pe 's/a/b/' f.txt", vec![w("f.txt", Edit)]),
            ("perl -ne 'print' f.txt", vec![]),
            ("cp a.txt b.txt", vec![into("b.txt", "a.txt")]),
            ("cp -T a.txt b.txt", vec![from(w("b.txt", Whole), "a.txt")]),
            (
                "cd sub && cp ../example.json config.json",
                vec![Write {
                    into: Some("example.json".into()),
                    ..from(w("sub/config.json", Whole), "sub/../example.json")
                }],
            ),
            ("cp -r src dest", vec![into("dest", "src")]),
            (
                "cp a.txt b.txt dir/",
                vec![into("dir/", "a.txt"), into("dir/", "b.txt")],
            ),
            ("cp -t dir a.txt", vec![into("dir", "a.txt")]),
            ("cp -n a.txt b.txt", vec![]),
            ("cp -b a.txt b.txt", vec![]),
            ("mv -f new.txt old.txt", vec![into("old.txt", "new.txt")]),
            (
                "install -m 644 a.txt /opt/b.txt",
                vec![into("/opt/b.txt", "a.txt")],
            ),
            ("install -d build", vec![]),
            (
                "ln -sf target link",
                vec![Write {
                    into: Some("target".into()),
                    ..w("link", Whole)
                }],
            ),
            (
                "touch a.txt -d yesterday b.txt; touch -r ref c",
                vec![w("a.txt", Append), w("b.txt", Append), w("c", Append)],
            ),
            (
                "npm run dev > dev.log 2>&1 & sleep 1; cat dev.log > copy.txt",
                vec![background(w("dev.log", Whole)), w("copy.txt", Whole)],
            ),
            (
                "(cd web && npm start > ../web.log) & wait",
                vec![background(w("web/../web.log", Whole))],
            ),
            ("ln -s target link", vec![]),
            ("truncate -s 0 big.log", vec![w("big.log", Whole)]),
            ("truncate -s +1M big.log", vec![]),
            (
                "dd if=/dev/zero of=disk.img bs=1M count=1",
                vec![w("disk.img", Whole)],
            ),
            (
                "dd if=x of=disk.img conv=notrunc",
                vec![w("disk.img", Edit)],
            ),
            (
                "python3 -c \"open('out.txt', 'w').write('x')\"",
                vec![w("out.txt", Whole)],
            ),
            (
                "python -c 'open(\"log.txt\", mode=\"a\").write(1)'",
                vec![w("log.txt", Append)],
            ),
            ("python3 -c \"print(open('in.txt').read())\"", vec![]),
            (
                "python3 - <<'EOF'\nfrom pathlib import Path\nPath('p.txt').write_text('x')\nEOF",
                vec![w("p.txt", Whole)],
            ),
            (
                "node -e \"require('fs').writeFileSync('o.json', '{}')\"",
                vec![w("o.json", Whole)],
            ),
            (
                "node -e \"fs.appendFileSync('o.log', 'x')\"",
                vec![w("o.log", Append)],
            ),
            (
                "cd sub && echo x > f.txt",
                vec![with_text(w("sub/f.txt", Whole), "x\n")],
            ),
            (
                "cd \"my dir\"&&sed -i s/a/b/ f.txt",
                vec![w("my dir/f.txt", Edit)],
            ),
            (
                "(cd sub; echo x > a); echo y > b",
                vec![
                    with_text(w("sub/a", Whole), "x\n"),
                    with_text(w("b", Whole), "y\n"),
                ],
            ),
            (
                "cd $D && echo x > rel; echo y > /abs/f",
                vec![with_text(w("/abs/f", Whole), "y\n")],
            ),
            (
                "for f in a b; do echo $f > out.txt; done",
                vec![w("out.txt", Whole)],
            ),
            ("if true; then cd x; fi; echo y > f", vec![]),
            ("{ echo a; echo b; } > both.txt", vec![w("both.txt", Whole)]),
            ("echo $(sed -i s/a/b/ f.txt)", vec![w("f.txt", Edit)]),
            (
                "bash -c 'echo x > inner.txt'",
                vec![with_text(w("inner.txt", Whole), "x\n")],
            ),
            (
                "sudo -u root tee /etc/x.conf < x",
                vec![w("/etc/x.conf", Whole)],
            ),
            ("env A=1 sed -i s/a/b/ f", vec![w("f", Edit)]),
            ("timeout 5 cp a b", vec![into("b", "a")]),
            ("echo x > $OUT", vec![]),
            ("echo x > *.txt", vec![]),
            ("echo x > ~/f", vec![]),
            ("echo x > /dev/null", vec![]),
            (
                "make 2>/dev/stderr >/dev/fd/1 | tee /dev/tty /proc/self/fd/2",
                vec![],
            ),
            ("cd /tmp && echo x > ../dev/stdout", vec![]),
            ("echo x > /dev/tcp/localhost/80", vec![]),
            (
                "echo x > /proc/1/fd/1",
                vec![with_text(w("/proc/1/fd/1", Whole), "x\n")],
            ),
            (
                "echo x > /dev/stdout.txt",
                vec![with_text(w("/dev/stdout.txt", Whole), "x\n")],
            ),
            (
                "cat > f <<'EOF'\napply_patch <<'X'\n*** Begin Patch\nX\nEOF",
                vec![with_text(
                    w("f", Whole),
                    "apply_patch <<'X'\n*** Begin Patch\nX\n",
                )],
            ),
            ("sort -o out.txt in.txt", vec![w("out.txt", Whole)]),
            ("sort -u --output=a.txt a.txt", vec![w("a.txt", Whole)]),
            ("sort -oa.txt a.txt", vec![w("a.txt", Whole)]),
            ("sort a.txt", vec![]),
            (
                "curl -sL -o page.html https://x",
                vec![w("page.html", Whole)],
            ),
            ("curl --output=f.bin https://x", vec![w("f.bin", Whole)]),
            ("curl -O https://x/f.bin", vec![]),
            ("wget -q -O f.tar.gz https://x", vec![w("f.tar.gz", Whole)]),
            ("wget -O - https://x", vec![]),
            ("wget -qO f.sh https://x", vec![w("f.sh", Whole)]),
            ("curl -fsSLo f.sh https://x", vec![w("f.sh", Whole)]),
            ("curl -sS https://x > page.html", vec![w("page.html", Whole)]),
            (
                "wget -a wget.log --output-document=f https://x",
                vec![w("wget.log", Append), w("f", Whole)],
            ),
            ("ruby -pi -e 'gsub(/a/, \"b\")' f.rb", vec![w("f.rb", Edit)]),
            ("ruby -i.bak -pe 'x' f.rb", vec![w("f.rb", Edit)]),
            ("ruby script.rb f.rb", vec![]),
            (
                "bash <<'EOF'\necho x > inner.txt\nsed -i s/a/b/ f\nEOF",
                vec![with_text(w("inner.txt", Whole), "x\n"), w("f", Edit)],
            ),
            (
                "sh -s <<EOF\necho $HOME > out.txt\nEOF",
                vec![w("out.txt", Whole)],
            ),
            ("bash <<< 'echo x > here.txt'", vec![with_text(w("here.txt", Whole), "x\n")]),
            ("bash script.sh <<'EOF'\necho x > no.txt\nEOF", vec![]),
            ("eval 'echo x > e.txt'", vec![with_text(w("e.txt", Whole), "x\n")]),
            ("eval \"$CMD\" > /dev/null", vec![]),
            ("sudo bash -c 'echo x > /etc/f'", vec![with_text(w("/etc/f", Whole), "x\n")]),
            ("flock /tmp/l -c 'echo x > f.txt'", vec![with_text(w("f.txt", Whole), "x\n")]),
            ("flock -w 5 /tmp/l sed -i s/a/b/ f", vec![w("f", Edit)]),
            ("stdbuf -oL sed -i s/a/b/ f", vec![w("f", Edit)]),
            ("stdbuf -o L tee out.txt < in", vec![w("out.txt", Whole)]),
            ("ionice -c 3 cp a b", vec![into("b", "a")]),
            ("taskset -c 0,1 cp a b", vec![into("b", "a")]),
            ("taskset 0x3 cp a b", vec![into("b", "a")]),
            ("chrt -f 10 cp a b", vec![into("b", "a")]),
            ("setsid -f cp a b", vec![into("b", "a")]),
            ("cargo build --release && cargo test", vec![]),
            ("git commit -am 'x > y'", vec![]),
            ("echo 'unterminated", vec![]),
        ];
        for (cmd, want) in cases {
            assert_eq!(writes(cmd), want, "{cmd}");
        }
    }

    #[test]
    fn git_discards_it_finds() {
        let idx = Loses::SinceIndex;
        let at = |rev: &str, untracked, ignored| Loses::SinceCommit {
            rev: rev.into(),
            untracked,
            ignored,
        };
        let head = at("HEAD", false, false);
        let clean = |dirs, ignored, only_ignored| Loses::Untracked {
            dirs,
            ignored,
            only_ignored,
        };
        let d = |dir: &str, paths: &[&str], loses: Loses| {
            (
                PathBuf::from(dir),
                paths.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                loses,
            )
        };
        type Found = (PathBuf, Vec<String>, Loses);
        let cases: Vec<(&str, Vec<Found>)> = vec![
            (
                "git checkout -- f.rs g.rs",
                vec![d("", &["f.rs", "g.rs"], idx.clone())],
            ),
            (
                "git checkout HEAD -- f.rs",
                vec![d("", &["f.rs"], head.clone())],
            ),
            (
                "git checkout HEAD~2 -- .",
                vec![d("", &["."], at("HEAD~2", false, false))],
            ),
            (
                "git checkout f.rs",
                vec![d("", &["f.rs"], Loses::CheckoutAmbiguous)],
            ),
            (
                "git checkout main src/",
                vec![d("", &["main", "src/"], Loses::CheckoutAmbiguous)],
            ),
            (
                "git checkout .",
                vec![d("", &["."], Loses::CheckoutAmbiguous)],
            ),
            ("git checkout -f", vec![d("", &[], head.clone())]),
            ("git checkout --force main", vec![d("", &[], head.clone())]),
            ("git restore f.rs", vec![d("", &["f.rs"], idx.clone())]),
            ("git restore -- .", vec![d("", &["."], idx.clone())]),
            (
                "git restore --source=HEAD --worktree f.rs",
                vec![d("", &["f.rs"], head.clone())],
            ),
            (
                "git restore -s v1 -W f.rs",
                vec![d("", &["f.rs"], at("v1", false, false))],
            ),
            ("git restore -SW f.rs", vec![d("", &["f.rs"], head.clone())]),
            ("git reset --hard", vec![d("", &[], head.clone())]),
            (
                "git reset --hard origin/main",
                vec![d("", &[], head.clone())],
            ),
            ("git stash", vec![d("", &[], head.clone())]),
            ("git stash -u", vec![d("", &[], at("HEAD", true, false))]),
            (
                "git stash push --all",
                vec![d("", &[], at("HEAD", true, true))],
            ),
            (
                "git stash push -m wip -- f.rs",
                vec![d("", &["f.rs"], head.clone())],
            ),
            ("git stash save wip", vec![d("", &[], head.clone())]),
            ("git clean -f", vec![d("", &[], clean(false, false, false))]),
            ("git clean -fd", vec![d("", &[], clean(true, false, false))]),
            (
                "git clean -fdx build",
                vec![d("", &["build"], clean(true, true, false))],
            ),
            (
                "git clean -f -X",
                vec![d("", &[], clean(false, false, true))],
            ),
            (
                "git switch --discard-changes main",
                vec![d("", &[], head.clone())],
            ),
            ("git switch -f main", vec![d("", &[], head.clone())]),
            (
                "cd sub && git checkout -- f.rs",
                vec![d("sub", &["f.rs"], idx.clone())],
            ),
            ("git -C sub restore .", vec![d("sub", &["."], idx.clone())]),
            ("git -c x.y=1 reset --hard", vec![d("", &[], head.clone())]),
            // Nothing lost, or nothing fsview can know.
            ("git checkout", vec![]),
            ("git checkout -b new", vec![]),
            ("git checkout -p f.rs", vec![]),
            ("git switch main", vec![]),
            ("git reset HEAD~1", vec![]),
            ("git reset --keep HEAD~1", vec![]),
            ("git restore --staged f.rs", vec![]),
            ("git stash pop", vec![]),
            ("git stash list", vec![]),
            ("git stash -p", vec![]),
            ("git clean -n", vec![]),
            ("git clean -fn", vec![]),
            ("git clean -d", vec![]),
            ("git checkout -- $F", vec![]),
            ("git --work-tree=/w checkout -- f.rs", vec![]),
            ("git status && git diff > x.patch", vec![]),
            ("echo git checkout .", vec![]),
        ];
        for (cmd, want) in cases {
            let got: Vec<_> = discards(cmd)
                .into_iter()
                .map(|d| (d.dir, d.paths, d.loses))
                .collect();
            assert_eq!(got, want, "{cmd}");
        }
        assert_eq!(
            discards("git checkout  --  .")[0].words,
            "git checkout -- ."
        );
    }

    #[test]
    fn finds_patches_as_codex_takes_them() {
        let patch = "*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\n";
        assert_eq!(
            apply_patch(&format!("apply_patch <<'EOF'\n{patch}EOF\n")),
            Some((None, patch.to_string()))
        );
        for (cmd, dir) in [
            ("cd sub && apply_patch <<\"PATCH\"\nx\nPATCH", "sub"),
            ("cd sub&&apply_patch <<'EOF'\nx\nEOF", "sub"),
            ("cd 'my dir' && applypatch <<EOF\nx\nEOF", "my dir"),
            ("cd \"my dir\" && apply_patch <<'EOF'\nx\nEOF\n", "my dir"),
        ] {
            assert_eq!(
                apply_patch(cmd),
                Some((Some(dir.into()), "x\n".to_string())),
                "{cmd}"
            );
        }
        for cmd in [
            "cat <<EOF\nx\nEOF",
            "apply_patch <<EOF\nno end",
            // Quoted inside another command's here-document: its input.
            "cat > notes.md <<'EOF'\napply_patch <<'X'\n*** Begin Patch\n*** End Patch\nX\nEOF",
            "ls; apply_patch <<'EOF'\nx\nEOF",
            "cd $D && apply_patch <<'EOF'\nx\nEOF",
            "apply_patch <<'EOF' &\nx\nEOF",
        ] {
            assert_eq!(apply_patch(cmd), None, "{cmd}");
        }
    }

    #[test]
    fn numbered_lines() {
        assert_eq!(unnumber("     3\tline 3"), Some((3, "line 3")));
        assert_eq!(unnumber("    12\t"), Some((12, "")));
        assert_eq!(unnumber("line"), None);
        assert_eq!(
            unnumbered("     3\tline 3\n     4\t\n", 3).as_deref(),
            Some("line 3\n")
        );
        assert_eq!(unnumbered("     3\ta\n     5\tb\n", 3), None);
        assert_eq!(unnumbered("a\n", 1), None);
        // The output trimmed at its end: the last line's tab gone.
        assert_eq!(unnumbered("     1\tx\n     2", 1).as_deref(), Some("x\n"));
    }

    #[test]
    fn what_the_output_showed() {
        let s = |cmd: &str, out: Output<'_>| shown(read(cmd).unwrap(), out);
        let printed = |text: &str, form| {
            ShownText::Printed(Printed {
                text: text.into(),
                form,
            })
        };
        use crate::event::Form;
        assert_eq!(
            s("cat a", Output::Exact("")).map(|x| (x.text, x.extent)),
            Some((printed("", Form::Exact), Extent::Whole))
        );
        assert_eq!(s("head -n 2 a", Output::Exact("")), None);
        assert_eq!(
            s(
                "cat a",
                Output::Head {
                    text: "one\ntwo\nthr",
                    trimmed: true
                }
            )
            .map(|x| (x.text, x.extent)),
            Some((printed("one\ntwo\n", Form::Trimmed), Extent::Start))
        );
        assert_eq!(
            s(
                "tail -n 3 a",
                Output::Head {
                    text: "x\ny",
                    trimmed: false
                }
            ),
            None
        );
        assert_eq!(
            s(
                "nl -ba a | sed -n '2,3p'",
                Output::Terminal("     2\tb\r\n     3\tc\r\n")
            )
            .map(|x| (x.text, x.offset)),
            Some((printed("b\nc", Form::Terminal), 2))
        );
    }
}
