//! Patches in the `apply_patch` format (Codex's, also taken by other
//! agents): which files a patch changes, and what it makes of a text.
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/app.py
//! *** Move to: src/main.py          (optional)
//! @@ def run():                     (a context line to find first; or a bare @@)
//!  unchanged line
//! -removed line
//! +added line
//! *** End of File                   (optional: the chunk ends the file)
//! *** Add File: notes.txt
//! +every line of the new file
//! *** Delete File: old.txt
//! *** End Patch
//! ```
//!
//! Applying is done the way Codex 0.171.0 does it, so that fsview can tell
//! what the agent believes a file holds after its patch: the text's lines
//! (a final newline does not start another), each chunk's old lines found
//! in order after the previous chunk (and after its context line), exactly
//! first, then ignoring trailing whitespace, then surrounding whitespace,
//! then typographic dashes, quotes and spaces; the lines kept as context
//! stay as the file has them, removed ones go, added ones come in; a chunk
//! that only adds lines adds them at the end of the file; the result ends
//! with a newline and keeps the text's CRLF line endings. Where fsview's
//! reading and the tool's differ, the view fsview records is simply never
//! fresh (a read too many, never a change let through).

use std::path::{Path, PathBuf};

use crate::event::{Changed, Event, Patched, Replace};
use crate::Problem;

/// One chunk of an update: its old lines (kept and removed), found after
/// `context`, become its new lines (kept and added).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub context: Option<String>,
    pub lines: Vec<Line>,
    /// The old lines end the file.
    pub end_of_file: bool,
}

/// A line of a chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// ` line`: context, in the file before and after.
    Keep(String),
    /// `-line`
    Remove(String),
    /// `+line`
    Add(String),
}

impl Chunk {
    /// The lines the chunk expects in the file.
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                Line::Keep(t) | Line::Remove(t) => Some(t.as_str()),
                Line::Add(_) => None,
            })
            .collect()
    }

    /// The lines the chunk leaves (its context as the patch spells it).
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                Line::Keep(t) | Line::Add(t) => Some(t.as_str()),
                Line::Remove(_) => None,
            })
            .collect()
    }
}

/// What a patch does to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// Create the file (or replace it whole) with `text`.
    Add {
        path: PathBuf,
        text: String,
    },
    Delete {
        path: PathBuf,
    },
    /// Change the file by chunks, and move it when `to` says so.
    Update {
        path: PathBuf,
        to: Option<PathBuf>,
        chunks: Vec<Chunk>,
    },
}

impl FileOp {
    /// The file the operation changes first (the source of a move).
    pub fn path(&self) -> &PathBuf {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF: &str = "*** End of File";

/// The operations of a patch, or `None` when `text` is not a patch in this
/// format (then the tool refuses it too, and fsview takes nothing from it).
pub fn parse(text: &str) -> Option<Vec<FileOp>> {
    let lines: Vec<&str> = text.trim().lines().collect();
    let body = match lines.as_slice() {
        [first, body @ .., last] if first.trim() == BEGIN && last.trim() == END => body,
        _ => return None,
    };
    let mut ops = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let header = body[i].trim();
        i += 1;
        if let Some(path) = header.strip_prefix(ADD) {
            let mut text = String::new();
            while let Some(l) = body.get(i).and_then(|l| l.strip_prefix('+')) {
                text.push_str(l);
                text.push('\n');
                i += 1;
            }
            ops.push(FileOp::Add {
                path: PathBuf::from(path),
                text,
            });
        } else if let Some(path) = header.strip_prefix(DELETE) {
            ops.push(FileOp::Delete {
                path: PathBuf::from(path),
            });
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            let to = body.get(i).and_then(|l| l.strip_prefix(MOVE)).map(|t| {
                i += 1;
                PathBuf::from(t)
            });
            let mut chunks = Vec::new();
            while i < body.len() && !body[i].starts_with('*') {
                if body[i].trim().is_empty() {
                    i += 1;
                    continue;
                }
                let (chunk, used) = chunk(&body[i..], chunks.is_empty())?;
                chunks.push(chunk);
                i += used;
            }
            if chunks.is_empty() {
                return None;
            }
            ops.push(FileOp::Update {
                path: PathBuf::from(path),
                to,
                chunks,
            });
        } else {
            return None;
        }
    }
    Some(ops)
}

/// One chunk at the start of `lines`, and how many lines it took.
fn chunk(lines: &[&str], first: bool) -> Option<(Chunk, usize)> {
    let (context, mut used) = match lines[0] {
        "@@" => (None, 1),
        l if l.starts_with("@@ ") => (Some(l[3..].to_string()), 1),
        // The first chunk of a file may leave out its @@.
        _ if first => (None, 0),
        _ => return None,
    };
    let mut c = Chunk {
        context,
        lines: Vec::new(),
        end_of_file: false,
    };
    let start = used;
    for l in &lines[start..] {
        if *l == EOF {
            if used == start {
                return None;
            }
            c.end_of_file = true;
            used += 1;
            break;
        }
        match l.chars().next() {
            None => c.lines.push(Line::Keep(String::new())),
            Some(' ') => c.lines.push(Line::Keep(l[1..].to_string())),
            Some('-') => c.lines.push(Line::Remove(l[1..].to_string())),
            Some('+') => c.lines.push(Line::Add(l[1..].to_string())),
            // The next chunk, or the next file.
            _ if used > start => break,
            _ => return None,
        }
        used += 1;
    }
    if used == start {
        return None;
    }
    Some((c, used))
}

/// A patch's operations, or why it cannot be read (then a change it makes
/// is refused: fsview cannot tell what it would change).
pub fn operations(text: &str) -> Result<Vec<FileOp>, Problem> {
    parse(text).ok_or_else(|| {
        Problem::new(
            "the patch is not in the apply_patch format (*** Begin Patch, *** Add/Update/Delete File: PATH, ..., *** End Patch)",
        )
    })
}

/// `path` as named from `dir` (a `cd DIR &&` before the command, a tool's
/// working directory).
fn under(dir: Option<&Path>, path: &Path) -> PathBuf {
    match dir {
        Some(d) => d.join(path),
        None => path.to_path_buf(),
    }
}

/// The gate's questions for each file a patch changes: `*** Update File`
/// is a targeted edit; `*** Add File` (which replaces a file that is
/// there), `*** Delete File` and a `*** Move to` destination change the
/// whole file.
pub fn gates(dir: Option<&Path>, ops: &[FileOp]) -> Vec<Event> {
    gate_each(dir, ops, false)
}

/// [`gates`], with each update that stays in its file also naming its
/// replacements ([`replaces`]), so that one made against a view of a file
/// that changed since may be merged with that change: only where the
/// agent tells the model that change with the patch's call or its result
/// (Codex's `apply_patch`, also as a here-document, told with the call;
/// opencode's, told after it).
pub fn gates_merging(dir: Option<&Path>, ops: &[FileOp]) -> Vec<Event> {
    gate_each(dir, ops, true)
}

fn gate_each(dir: Option<&Path>, ops: &[FileOp], merging: bool) -> Vec<Event> {
    let mut out = Vec::new();
    for op in ops {
        if let (
            true,
            FileOp::Update {
                path,
                to: None,
                chunks,
            },
        ) = (merging, op)
        {
            if let Some(edits) = replaces(chunks) {
                out.push(Event::AboutToReplace {
                    path: under(dir, path),
                    edits,
                });
                continue;
            }
        }
        let (path, whole) = match op {
            FileOp::Update { path, .. } => (path, false),
            FileOp::Add { path, .. } | FileOp::Delete { path } => (path, true),
        };
        out.push(Event::AboutToChange {
            path: under(dir, path),
            whole,
        });
        if let FileOp::Update { to: Some(to), .. } = op {
            out.push(Event::AboutToChange {
                path: under(dir, to),
                whole: true,
            });
        }
    }
    out
}

/// An update's chunks as replacements of exact text: each chunk's old
/// lines by its new lines, where the tool would find them if the old lines
/// are in the file once. `None` for a chunk the tool places by more than
/// its own lines: one that only adds (at the end of the file), one that
/// ends the file, or one found after a context line (`@@ def run():`).
pub fn replaces(chunks: &[Chunk]) -> Option<Vec<Replace>> {
    let joined = |lines: Vec<&str>| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    chunks
        .iter()
        .map(|c| {
            let old = c.old_lines();
            let placed_by_more = old.is_empty()
                || c.end_of_file
                || c.context.as_deref().is_some_and(|t| !t.is_empty());
            (!placed_by_more).then(|| Replace {
                old: joined(old),
                new: joined(c.new_lines()),
                all: false,
            })
        })
        .collect()
}

/// What a patch operation makes of its file, once the tool applied it
/// (`done`), or when it is about to (a patch that no report will follow).
pub fn applied(dir: Option<&Path>, op: FileOp, done: bool) -> Option<Event> {
    Some(match op {
        FileOp::Add { path, text } if done => Event::Changed(Changed {
            path: under(dir, &path),
            text,
            before: None,
            whole: true,
        }),
        FileOp::Add { path, text } => Event::Patched(Patched {
            path: under(dir, &path),
            from: None,
            text: Some(text),
            chunks: Vec::new(),
            applied: false,
        }),
        FileOp::Delete { path } if done => Event::Removed(under(dir, &path)),
        // Not removed yet: the views stay until they are not fresh.
        FileOp::Delete { .. } => return None,
        FileOp::Update { path, to, chunks } => Event::Patched(Patched {
            path: under(dir, to.as_ref().unwrap_or(&path)),
            from: to.is_some().then(|| under(dir, &path)),
            text: None,
            chunks,
            applied: done,
        }),
    })
}

/// The texts `after` was before `chunks` changed it, as the tool applies
/// them ([`apply`]): each chunk's new lines, found in order, put back as
/// its old lines (the kept ones as the file has them). Two candidates, as
/// the tool ends its result with a newline whether or not the text had
/// one. `None` when a chunk's new lines are not there.
pub fn unapply(after: &str, chunks: &[Chunk]) -> Option<[String; 2]> {
    let (lines, crlf) = text_lines(after);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut pos = 0;
    // Chunks that only add lines added them at the end of the file.
    let (tail, body): (Vec<&Chunk>, Vec<&Chunk>) =
        chunks.iter().partition(|c| c.old_lines().is_empty());
    let appended: usize = tail.iter().map(|c| c.new_lines().len()).sum();
    let end = lines.len().checked_sub(appended)?;
    for c in body {
        let new = c.new_lines();
        let at = if new.is_empty() {
            // Only removed lines: put back where its context says, or at
            // the cursor.
            match &c.context {
                Some(ctx) => seek(&lines[..end], &[ctx.as_str()], pos, false)? + 1,
                None => pos,
            }
        } else {
            (pos..=end.checked_sub(new.len())?).find(|&i| lines[i..i + new.len()] == new[..])?
        };
        out.extend_from_slice(&lines[pos..at]);
        let mut from = at;
        for l in &c.lines {
            match l {
                Line::Keep(_) => {
                    out.push(lines[from]);
                    from += 1;
                }
                Line::Add(_) => from += 1,
                Line::Remove(t) => out.push(t),
            }
        }
        pos = from;
    }
    if pos > end {
        return None;
    }
    out.extend_from_slice(&lines[pos..end]);
    for c in tail {
        if lines[end..].len() < c.new_lines().len() {
            return None;
        }
    }
    let eol = if crlf { "\r\n" } else { "\n" };
    let joined = out.join(eol);
    let mut with_newline = joined.clone();
    if !out.is_empty() {
        with_newline.push_str(eol);
    }
    Some([with_newline, joined])
}

/// Where a chunk's new lines are in a text: first line (1-based) and count.
pub type Span = (u64, u64);

/// A text's lines as the tool reads them (a final newline starts no
/// other, `\r\n` ends a line as `\n` does), and whether it uses `\r\n`.
fn text_lines(text: &str) -> (Vec<&str>, bool) {
    let mut lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    (lines, text.contains("\r\n"))
}

/// `base` with `chunks` applied as the tool applies them, and where each
/// chunk's new lines ended up; `None` when a chunk does not apply.
pub fn apply(base: &str, chunks: &[Chunk]) -> Option<(String, Vec<Span>)> {
    let (lines, crlf) = text_lines(base);
    let mut cursor = 0;
    // (where, how many old lines, the chunk's lines that apply there)
    let mut edits: Vec<(usize, usize, &[Line])> = Vec::new();
    for c in chunks {
        if let Some(ctx) = &c.context {
            cursor = seek(&lines, &[ctx.as_str()], cursor, false)? + 1;
        }
        let old = c.old_lines();
        if old.is_empty() {
            // Only added lines: Codex adds them at the end of the file.
            edits.push((lines.len(), 0, &c.lines));
            continue;
        }
        let (at, len, ops) = match seek(&lines, &old, cursor, c.end_of_file) {
            Some(at) => (at, old.len(), &c.lines[..]),
            // A trailing empty line in the chunk may stand for the final
            // newline.
            None if matches!(c.lines.last(), Some(Line::Keep(t)) if t.is_empty()) => {
                let at = seek(&lines, &old[..old.len() - 1], cursor, c.end_of_file)?;
                (at, old.len() - 1, &c.lines[..c.lines.len() - 1])
            }
            None => return None,
        };
        edits.push((at, len, ops));
        cursor = at + len;
    }
    edits.sort_by_key(|e| e.0);
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    let mut spans = Vec::with_capacity(edits.len());
    let mut pos = 0;
    for (at, len, ops) in edits {
        if at < pos {
            return None; // overlapping chunks
        }
        out.extend_from_slice(&lines[pos..at]);
        let start = out.len();
        let mut from = at;
        for op in ops {
            match op {
                // The file's own line: a context line may have matched
                // leniently.
                Line::Keep(_) => {
                    out.push(lines[from]);
                    from += 1;
                }
                Line::Remove(_) => from += 1,
                Line::Add(t) => out.push(t),
            }
        }
        spans.push((start as u64 + 1, (out.len() - start) as u64));
        pos = at + len;
    }
    out.extend_from_slice(&lines[pos..]);
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut text = out.join(eol);
    text.push_str(eol);
    Some((text, spans))
}

/// Where each chunk's new lines are in `text`, in order; chunks that add no
/// line, or whose lines are not there, are left out.
pub fn locate(text: &str, chunks: &[Chunk]) -> Vec<Span> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut cursor = 0;
    let mut spans = Vec::new();
    for new in chunks
        .iter()
        .map(Chunk::new_lines)
        .filter(|n| !n.is_empty())
    {
        let found = (cursor..=lines.len().saturating_sub(new.len()))
            .find(|&i| lines[i..i + new.len()] == new[..]);
        if let Some(at) = found {
            spans.push((at as u64 + 1, new.len() as u64));
            cursor = at + new.len();
        }
    }
    spans
}

/// The first index at or after `start` (at the end when `eof`) where
/// `pattern` matches `lines`, each pass more lenient than the one before.
fn seek(lines: &[&str], pattern: &[&str], start: usize, eof: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(start);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let from = if eof {
        lines.len() - pattern.len()
    } else {
        start
    };
    let last = lines.len() - pattern.len();
    let passes: [fn(&str) -> String; 4] = [
        |s| s.to_string(),
        |s| s.trim_end().to_string(),
        |s| s.trim().to_string(),
        |s| s.trim().chars().map(plain).collect(),
    ];
    passes.iter().find_map(|norm| {
        (from..=last).find(|&i| {
            pattern
                .iter()
                .zip(&lines[i..])
                .all(|(p, l)| norm(p) == norm(l))
        })
    })
}

/// Typographic punctuation and spaces as their plain ASCII forms.
fn plain(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{2018}'..='\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk from its lines as a patch writes them (' ', '-', '+').
    fn chunk(context: Option<&str>, lines: &[&str]) -> Chunk {
        Chunk {
            context: context.map(String::from),
            lines: lines
                .iter()
                .map(|l| {
                    let (tag, t) = l.split_at(1);
                    match tag {
                        " " => Line::Keep(t.into()),
                        "-" => Line::Remove(t.into()),
                        _ => Line::Add(t.into()),
                    }
                })
                .collect(),
            end_of_file: false,
        }
    }

    #[test]
    fn parses_every_operation() {
        let p = "*** Begin Patch\n*** Add File: a.txt\n+one\n+\n*** Delete File: b.txt\n\
                 *** Update File: c.py\n*** Move to: d.py\n@@ def f():\n-    pass\n+    return 1\n \n\
                 @@\n-x\n+y\n*** End of File\n*** End Patch\n";
        assert_eq!(
            parse(p).unwrap(),
            vec![
                FileOp::Add {
                    path: "a.txt".into(),
                    text: "one\n\n".into()
                },
                FileOp::Delete {
                    path: "b.txt".into()
                },
                FileOp::Update {
                    path: "c.py".into(),
                    to: Some("d.py".into()),
                    chunks: vec![
                        chunk(Some("def f():"), &["-    pass", "+    return 1", " "]),
                        Chunk {
                            end_of_file: true,
                            ..chunk(None, &["-x", "+y"])
                        },
                    ]
                },
            ]
        );
        // The first chunk may leave out its @@.
        let p = "*** Begin Patch\n*** Update File: f\n import os\n+import re\n*** End Patch";
        assert_eq!(
            parse(p).unwrap(),
            vec![FileOp::Update {
                path: "f".into(),
                to: None,
                chunks: vec![chunk(None, &[" import os", "+import re"])]
            }]
        );
    }

    #[test]
    fn refuses_what_is_not_a_patch() {
        assert_eq!(parse("cat a.txt"), None);
        assert_eq!(parse("*** Begin Patch\n*** Add File: a\n+x\n"), None);
        assert_eq!(
            parse("*** Begin Patch\n*** Update File: a\n*** End Patch"),
            None
        );
        assert_eq!(
            parse("*** Begin Patch\n*** Frobnicate: a\n*** End Patch"),
            None
        );
        assert_eq!(
            parse("*** Begin Patch\n*** Update File: a\n@@\nbad\n*** End Patch"),
            None
        );
    }

    #[test]
    fn applies_as_the_tool_does() {
        let base = "a\nb\nc\nd\n";
        let (t, spans) = apply(base, &[chunk(None, &["-b", "+B", "+B2"])]).unwrap();
        assert_eq!(t, "a\nB\nB2\nc\nd\n");
        assert_eq!(spans, vec![(2, 2)]);
        // Chunks in order, a context line first, a final newline added.
        let (t, spans) = apply("fn a\nx\nfn b\nx", &[chunk(Some("fn b"), &["-x", "+y"])]).unwrap();
        assert_eq!((t.as_str(), spans), ("fn a\nx\nfn b\ny\n", vec![(4, 1)]));
        // Whitespace and typographic quotes are tolerated in old lines, and
        // context lines stay as the file has them (as Codex 0.171.0 did).
        let (t, _) = apply(
            "  say “hi”  \nx  \ny\n",
            &[chunk(None, &["-say \"hi\"", " x", "-y", "+z"])],
        )
        .unwrap();
        assert_eq!(t, "x  \nz\n");
        // CRLF stays CRLF.
        let (t, _) = apply("one\r\ntwo\r\n", &[chunk(None, &["-two", "+TWO"])]).unwrap();
        assert_eq!(t, "one\r\nTWO\r\n");
        // Only added lines go at the end, whatever the context (as Codex
        // 0.171.0 did).
        let (t, spans) = apply("a\nb\nc\n", &[chunk(Some("a"), &["+new"])]).unwrap();
        assert_eq!((t.as_str(), spans), ("a\nb\nc\nnew\n", vec![(4, 1)]));
        // A trailing empty context line may stand for the final newline.
        let (t, _) = apply("a\nb", &[chunk(None, &["-b", "+B", " "])]).unwrap();
        assert_eq!(t, "a\nB\n");
        // Old lines not in the text: not applied.
        assert_eq!(apply(base, &[chunk(None, &["-zz", "+y"])]), None);
        assert_eq!(apply(base, &[chunk(Some("nope"), &["-b", "+y"])]), None);
    }

    #[test]
    fn unapplies_what_apply_did() {
        let cases: [(&str, Vec<Chunk>); 4] = [
            ("a\nb\nc\nd\n", vec![chunk(None, &["-b", "+B", "+B2"])]),
            (
                "fn a\nx\nfn b\nx\n",
                vec![chunk(Some("fn b"), &["-x", "+y"])],
            ),
            (
                "a\nb\nc\n",
                vec![chunk(None, &[" a", "-b", " c"]), chunk(None, &["+new"])],
            ),
            ("one\r\ntwo\r\n", vec![chunk(None, &["-two", "+TWO"])]),
        ];
        for (base, chunks) in cases {
            let (after, _) = apply(base, &chunks).unwrap();
            let before = unapply(&after, &chunks).unwrap();
            assert!(before.contains(&base.to_string()), "{base:?}: {before:?}");
        }
        // A file without a final newline: the second candidate.
        let (after, _) = apply("a\nb", &[chunk(None, &["-a", "+A"])]).unwrap();
        assert_eq!(
            unapply(&after, &[chunk(None, &["-a", "+A"])]).unwrap()[1],
            "a\nb"
        );
        // Another change beside the patch is not undone.
        let chunks = [chunk(None, &["-b", "+B"])];
        let before = unapply("a\nB\nc changed\n", &chunks).unwrap();
        assert!(!before.contains(&"a\nb\nc\n".to_string()));
        assert_eq!(unapply("a\nb\n", &chunks), None);
    }

    #[test]
    fn locates_new_lines_in_order() {
        let chunks = [
            chunk(None, &["-b", "+B"]),
            chunk(None, &["-x"]),
            chunk(None, &["-d", "+D", "+E"]),
        ];
        assert_eq!(locate("a\nB\nc\nD\nE\n", &chunks), vec![(2, 1), (4, 2)]);
        assert_eq!(locate("a\nb\n", &chunks), vec![]);
    }
}
