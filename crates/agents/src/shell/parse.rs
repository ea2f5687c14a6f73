//! The command line as bash parses it (`brush-parser`), flattened into the
//! simple commands it runs: each with its words (literal or not), its
//! redirections and the directory it runs in.
//!
//! Only what a line says literally is taken: a word with a variable, a
//! command substitution, a glob, a brace or a `~` is `None`. Commands are
//! found anywhere in the line (each part of a pipeline or a list, loops,
//! subshells, functions, `$(...)`, process substitutions, a shell's script
//! in `-c`, a here-document or `eval`).

use std::path::{Path, PathBuf};

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::ParserOptions;

use super::commands::unwrap;
use super::write::How;

/// The command line as bash parses it; `None` when it does not parse.
pub(super) fn program(command: &str) -> Option<ast::Program> {
    parse(command).ok()
}

fn parse(command: &str) -> Result<ast::Program, brush_parser::ParseError> {
    let mut p = brush_parser::Parser::new(std::io::Cursor::new(command), &ParserOptions::default());
    p.parse_program()
}

/// A word's text when it has nothing for the shell to expand (no
/// variable, command substitution, glob, brace or tilde): the quotes and
/// escapes taken away.
pub(super) fn literal(w: &str) -> Option<String> {
    let pieces = word::parse(w, &ParserOptions::default()).ok()?;
    let mut out = String::new();
    for p in &pieces {
        push_literal(p, &mut out, false)?;
    }
    Some(out)
}

pub(super) fn push_literal(p: &WordPieceWithSource, out: &mut String, quoted: bool) -> Option<()> {
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
pub(super) enum Dir {
    /// This directory (empty: where the line starts).
    Known(PathBuf),
    /// A `cd` to somewhere fsview cannot tell.
    Unknown,
}

impl Dir {
    /// `path` as named from here; `None` for a relative path from an
    /// unknown directory.
    pub(super) fn join(&self, path: &str) -> Option<PathBuf> {
        let p = Path::new(path);
        match self {
            _ if p.is_absolute() => Some(p.to_path_buf()),
            Dir::Known(d) => Some(d.join(p)),
            Dir::Unknown => None,
        }
    }

    pub(super) fn cd(&self, to: Option<&str>) -> Dir {
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
pub(super) enum Redirect {
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
pub(super) struct Simple {
    /// The command's name and arguments, each its literal text or `None`.
    pub(super) words: Vec<Option<String>>,
    pub(super) redirects: Vec<Redirect>,
    pub(super) dir: Dir,
    /// It runs in the background (`&`): the command line may return before
    /// it has written what it writes.
    pub(super) background: bool,
}

impl Simple {
    pub(super) fn name(&self) -> Option<&str> {
        self.words.first().and_then(|w| w.as_deref())
    }

    /// The text on standard input, when a here-document or here-string
    /// gives it literally.
    pub(super) fn stdin(&self) -> Option<Option<&str>> {
        self.redirects.iter().rev().find_map(|r| match r {
            Redirect::Input { fd: 0, text, .. } => Some(text.as_deref()),
            _ => None,
        })
    }
}

/// Every simple command of a command line, each with the redirections that
/// apply to it and the directory it runs in.
pub(super) fn flatten(program: &ast::Program, start: &Dir) -> Vec<Simple> {
    let mut out = Vec::new();
    let mut dir = start.clone();
    chain(program, &mut dir, &mut out);
    out
}

/// [`flatten`] from `dir`, leaving it where the program's `cd`s lead (a
/// `cd` on one line holds for the next).
fn chain(program: &ast::Program, dir: &mut Dir, out: &mut Vec<Simple>) {
    for list in &program.complete_commands {
        compound_list(list, dir, &[], out);
    }
}

/// Every simple command of a command line, as [`flatten`] finds them. A
/// line brush-parser rejects (a `case` inside `$(...)`, a `select` loop)
/// is read in the parts that parse ([`recover`]): their literal writes are
/// still gated, and nothing is taken from the rest.
pub(super) fn commands(command: &str, start: &Dir) -> Vec<Simple> {
    match program(command) {
        Some(p) => flatten(&p, start),
        None => recover(command, start),
    }
}

/// The most lines [`recover`] reads, and the most it joins to find a part
/// that parses: a hook answers in milliseconds.
const RECOVER_LINES: usize = 400;
const RECOVER_JOIN: usize = 64;
/// The most parses [`recover`] tries in all.
const RECOVER_TRIES: usize = 1000;

/// The commands of the parts of a line that parse, when the whole does
/// not. From each line on, the fewest whole lines that parse together (a
/// loop, a here-document, a quoted newline) are one part. A line that
/// parses with none of those after it is split at its `;`, `&&`, `||`,
/// `|` and `&` outside quotes and brackets, and each piece that parses is
/// a part; the `cd`s of such a line are not followed (where it runs after
/// one is not known). Reading stops, taking nothing more, at a line that
/// ends inside quotes or brackets or opens a here-document (what follows
/// may be text, not commands), and past [`RECOVER_LINES`] lines or
/// [`RECOVER_TRIES`] parses.
fn recover(command: &str, start: &Dir) -> Vec<Simple> {
    let lines: Vec<&str> = command.split_inclusive('\n').collect();
    let mut out = Vec::new();
    let mut dir = start.clone();
    let mut at = 0;
    let mut tries = 0;
    while at < lines.len().min(RECOVER_LINES) && tries < RECOVER_TRIES {
        let last = lines.len().min(at + RECOVER_JOIN);
        let mut parsed = None;
        for end in at + 1..=last {
            tries += 1;
            match parse(&lines[at..end].concat()) {
                Ok(p) => {
                    parsed = Some((end, p));
                    break;
                }
                // An error before the last line: no line more mends it.
                Err(brush_parser::ParseError::ParsingNear(pos)) if pos.line < end - at => break,
                Err(_) => {}
            }
        }
        if let Some((end, p)) = parsed {
            chain(&p, &mut dir, &mut out);
            at = end;
            continue;
        }
        let line = lines[at];
        at += 1;
        let Some(pieces) = pieces(line) else {
            break;
        };
        for (piece, background) in pieces {
            let before = dir.clone();
            match program(piece) {
                Some(p) => {
                    let from = out.len();
                    chain(&p, &mut dir, &mut out);
                    for c in &mut out[from..] {
                        c.background |= background;
                    }
                }
                None if names_cd(piece) => dir = Dir::Unknown,
                None => {}
            }
            if dir != before {
                dir = Dir::Unknown;
            }
        }
    }
    out
}

/// Whether a piece that does not parse may change the directory.
fn names_cd(piece: &str) -> bool {
    piece
        .split(|c: char| c.is_whitespace() || ";&|(){}`$\"'".contains(c))
        .any(|w| matches!(w, "cd" | "pushd" | "popd"))
}

/// One line split at its `;`, `&&`, `||`, `|` and `&` outside quotes,
/// brackets and backquotes, each piece with whether a lone `&` puts it in
/// the background; a comment ends it. `None` when the line ends inside
/// quotes or brackets, with a backslash, or opens a here-document.
fn pieces(line: &str) -> Option<Vec<(&str, bool)>> {
    #[derive(PartialEq)]
    enum In {
        Paren,
        Double,
        Back,
    }
    let b = line.as_bytes();
    let mut stack: Vec<In> = Vec::new();
    let mut out = Vec::new();
    let mut from = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let prev = if i > 0 { b[i - 1] } else { b' ' };
        match stack.last() {
            Some(In::Double) => match c {
                b'\\' => i += 1,
                b'"' => {
                    stack.pop();
                }
                b'(' if prev == b'$' => stack.push(In::Paren),
                b'`' => stack.push(In::Back),
                _ => {}
            },
            Some(In::Back) => match c {
                b'\\' => i += 1,
                b'`' => {
                    stack.pop();
                }
                _ => {}
            },
            None | Some(In::Paren) => match c {
                b'\\' => i += 1,
                b'\'' => {
                    i += b[i + 1..].iter().position(|&q| q == b'\'')? + 1;
                }
                b'"' => stack.push(In::Double),
                b'`' => stack.push(In::Back),
                b'(' => stack.push(In::Paren),
                // A `)` with no `(` open (a `case` pattern's) closes nothing.
                b')' if stack.last() == Some(&In::Paren) => {
                    stack.pop();
                }
                b'#' if prev.is_ascii_whitespace() || b";&|()".contains(&prev) => {
                    if !stack.is_empty() {
                        return None;
                    }
                    out.push((&line[from..i], false));
                    return Some(out);
                }
                b'<' if b.get(i + 1) == Some(&b'<') => {
                    if b.get(i + 2) != Some(&b'<') {
                        return None;
                    }
                    i += 2;
                }
                b';' | b'&' | b'|' if stack.is_empty() => {
                    let redirect = (c == b'&'
                        && (b"<>".contains(&prev) || b.get(i + 1) == Some(&b'>')))
                        || (c == b'|' && prev == b'>');
                    if !redirect {
                        let double = b.get(i + 1) == Some(&c);
                        let background = c == b'&' && !double;
                        out.push((&line[from..i], background));
                        i += usize::from(double);
                        from = i + 1;
                    }
                }
                _ => {}
            },
        }
        i += 1;
    }
    if !stack.is_empty() || line.trim_end_matches(['\n', '\r']).ends_with('\\') {
        return None;
    }
    out.push((&line[from..], false));
    Some(out)
}

pub(super) fn compound_list(
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

pub(super) fn pipeline(
    p: &ast::Pipeline,
    dir: &mut Dir,
    outer: &[Redirect],
    out: &mut Vec<Simple>,
) {
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

pub(super) fn command(c: &ast::Command, dir: &mut Dir, outer: &[Redirect], out: &mut Vec<Simple>) {
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

pub(super) fn compound(
    cc: &ast::CompoundCommand,
    dir: &mut Dir,
    outer: &[Redirect],
    out: &mut Vec<Simple>,
) {
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

pub(super) fn simple(
    s: &ast::SimpleCommand,
    dir: &mut Dir,
    outer: &[Redirect],
    out: &mut Vec<Simple>,
) {
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
    if let Some((script, runs_in)) = shell_script(&cmd) {
        let from = out.len();
        out.extend(commands(&script, &runs_in));
        if cmd.background {
            for c in &mut out[from..] {
                c.background = true;
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
/// `eval` of literal words, `flock FILE -c SCRIPT`, and the command line
/// `env -S STRING` gives (read as a script: its quotes as the shell's);
/// with the directory it runs in (`env -C DIR bash -c ...`).
pub(super) fn shell_script(cmd: &Simple) -> Option<(String, Dir)> {
    let seen = unwrap(&cmd.words, &cmd.dir);
    let script = match seen.split {
        Some(line) => line,
        None => script_of(cmd, seen.words),
    }?;
    Some((script, seen.dir))
}

/// [`shell_script`]'s script, of the command `words` its wrappers run.
fn script_of(cmd: &Simple, words: &[Option<String>]) -> Option<String> {
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
        // `bash -c -- SCRIPT`: the script is after the end of options.
        match rest.get(at + 1)?.as_deref() {
            Some("--") => rest.get(at + 2)?.clone(),
            _ => rest.get(at + 1)?.clone(),
        }
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
pub(super) fn substitutions(w: &str, dir: &Dir, out: &mut Vec<Simple>) {
    if !w.contains(['$', '`']) {
        return;
    }
    let Ok(pieces) = word::parse(w, &ParserOptions::default()) else {
        return;
    };
    let mut scripts = Vec::new();
    collect_substitutions(&pieces, &mut scripts);
    for s in scripts {
        out.extend(commands(&s, dir));
    }
}

pub(super) fn collect_substitutions(pieces: &[WordPieceWithSource], out: &mut Vec<String>) {
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

pub(super) fn redirect(r: &ast::IoRedirect, out: &mut Vec<Simple>, dir: &Dir) -> Redirect {
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

/// The words of a pipeline of one simple command.
pub(super) fn plain_words(p: &ast::Pipeline) -> Option<Vec<String>> {
    match p.seq.as_slice() {
        [ast::Command::Simple(s)] if !p.bang => plain_simple(s),
        _ => None,
    }
}

/// A simple command's words, when it has no redirection or assignment and
/// every word is literal.
pub(super) fn plain_simple(s: &ast::SimpleCommand) -> Option<Vec<String>> {
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
