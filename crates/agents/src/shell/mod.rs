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
//! What a command shows ([`read`]), when it is one of these with literal
//! arguments, alone or in a list of commands whose other output is known
//! (`cd DIR &&`, `gen > f &&`, `; echo done`: [`read`] says which):
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
//! ([`not_a_file`]): the redirections, and the commands of
//! [`commands::WRITERS`] (which word names the file, a whole write or in
//! place), looked through [`commands::WRAPPERS`].
//!
//! A whole-file write whose text the command spells out (`cat > f <<'EOF'`,
//! `tee f <<'EOF'`, `echo TEXT > f`, with nothing to expand) says what the
//! file then holds. It also finds the patch Codex takes from a command
//! line ([`apply_patch`]), and git's commands that discard work-tree
//! changes ([`discards`]).

//!
//! The modules: [`parse`] flattens a command line into its simple commands;
//! [`commands`] is the table of the commands fsview knows (which word
//! names the file each writes, and how; the wrappers it looks through),
//! which docs/shell.md's tables are checked against; [`read`], [`write`]
//! and [`git`] read what those commands show, write and discard.

use std::path::{Path, PathBuf};

use crate::event::{Changed, Event, OwnWrite, Shown};

mod apply_patch;
pub mod commands;
mod filter;
mod git;
mod parse;
mod read;
mod write;

pub use apply_patch::apply_patch;
pub use filter::Filter;
pub use git::{discards, Discard, Loses};
pub use read::{read, unnumber, Lines, Output, Read};
pub use write::{not_a_file, writes, How, Link, Write};

use read::shown;

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
    // Every command: what it changed without naming it is looked for too.
    if !writes.is_empty() || !background {
        events.push(Event::ShellWritten(
            own_writes(&writes, dir, background),
            command.to_string(),
        ));
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
            link: w.link,
        })
        .collect()
}

/// The gate's questions for the files a command is about to write (see
/// [`writes`]; an append is no question, see [`How::Append`]), then what
/// each of them holds before it runs ([`Event::ShellWriting`]).
pub fn about_to_run(command: &str, dir: Option<&Path>) -> Vec<Event> {
    let writes = writes(command);
    let mut events: Vec<Event> = Vec::new();
    // Links the line makes, and the files each names: a write through one
    // later in the line writes that file, which the disk before the line
    // does not show (`ln -s notes.txt s && echo x > s`).
    let mut made: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
    for w in &writes {
        let at = join(dir, &w.path);
        // The file it writes: `into` names it when `at` is a directory.
        let here = match &w.into {
            Some(n) if at.is_dir() => at.join(n),
            _ => at.clone(),
        };
        for (link, names) in &made {
            if *link == here && w.how != How::Append && w.link.is_none_or(|l| !l.makes) {
                for n in names {
                    events.push(gated(n.clone(), w.how == How::Whole, w.edit.clone()));
                }
            }
        }
        if let (Some(l), Some(from)) = (w.link.filter(|l| l.makes), &w.from) {
            let link = here;
            let mut names = vec![join(dir, from)];
            if l.symbolic && from.is_relative() {
                // A symbolic link's source is read from its own directory.
                if let Some(other) = link.parent().map(|p| p.join(from)) {
                    if !names.contains(&other) {
                        names.push(other);
                    }
                }
            }
            made.push((link, names));
        }
        if w.how == How::Append || w.link.is_some_and(|l| l.keeps) {
            continue;
        }
        // A directory copied (`cp -r SRC DEST`): each file it holds
        // overwrites the file of its name under the destination.
        if let Some(src) = w.from.as_ref().map(|f| join(dir, f)).filter(|f| f.is_dir()) {
            if w.link.is_none_or(|l| !l.moves && !l.makes) {
                let contents = src.as_os_str().as_encoded_bytes().ends_with(b"/.");
                let root = match &w.into {
                    Some(n) if !contents && at.is_dir() => at.join(n),
                    _ => at.clone(),
                };
                for rel in files_under(&src, COPIED_FILES) {
                    let target = root.join(&rel);
                    if target.is_file() {
                        events.push(gated(target, true, None));
                    }
                }
                continue;
            }
        }
        events.push(Event::ShellWrite(crate::event::ShellWrite {
            path: at,
            whole: w.how == How::Whole,
            into: w.into.clone(),
            link: w.link,
            edits: w.edit.clone(),
        }));
    }
    for mut d in discards(command) {
        d.dir = join(dir, &d.dir);
        events.push(Event::GitDiscard(d));
    }
    events.push(Event::ShellWriting(own_writes(&writes, dir, false)));
    events
}

/// The gate's question for a file the line writes by another name than
/// its own (through a link it made, inside a directory it copies).
fn gated(path: PathBuf, whole: bool, edits: Option<crate::event::Edits>) -> Event {
    Event::ShellWrite(crate::event::ShellWrite {
        path,
        whole,
        into: None,
        link: None,
        edits,
    })
}

/// How many files of a directory copied are looked at: past them, the
/// rest of a copy is not gated (said in docs/shell.md).
const COPIED_FILES: usize = 10_000;

/// The regular files under `dir` (links not followed), as paths relative
/// to it: at most `most`.
fn files_under(dir: &Path, most: usize) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let name = rel.join(e.file_name());
            if ft.is_dir() {
                todo.push(name);
            } else if ft.is_file() {
                out.push(name);
                if out.len() >= most {
                    return out;
                }
            }
        }
    }
    out
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

#[cfg(test)]
mod tests;
