//! Claude Code's Edit rules, on a file's text.
//!
//! An edit replaces `old` with `new`. `old` must occur exactly once, or
//! `replace_all` must be set; not found, found more than once, and `old`
//! equal to `new` are refusals whose messages are Claude Code's own, so a
//! model trained on them knows what to do next. Several edits of one file
//! are applied in order, each to the result of the one before; the first
//! that is refused refuses them all.
//!
//! What is matched, and how the rest of the file is kept:
//!
//! - **Line endings.** The model sees lines, not `\r`: a file's `\r\n` are
//!   matched as `\n` (as Claude Code does, which reads a CRLF file as LF),
//!   and `\r\n` in `old` or `new` count as `\n`. Line breaks in the new text
//!   are written as the file's own: `\r\n` when most of its lines end so,
//!   else `\n`. Lines the edit does not touch keep their ending byte for
//!   byte, in a file with mixed endings too.
//! - **Curly quotes.** The exact text is matched first. Only when it is not
//!   found, `‘ ’ “ ”` in the file and in `old` are read as `'` and `"` and
//!   the search is made again, as Claude Code does (models type straight
//!   quotes where a file has curly ones). When a match needed this, the new
//!   text gets the file's curly quotes by Claude Code's rules (an opening
//!   quote after a space, a line start or `([{—–`; a closing one elsewhere;
//!   an apostrophe between two letters is `’`). Occurrences are counted in
//!   this quote-blind reading, so `'a'` and `‘a’` in one file are two.
//! - **Deleting a line.** An empty `new` whose `old` is the whole text of
//!   one or more lines (it starts a line and a line break follows it) also
//!   removes that line break, as Claude Code does, so deleting a line's text
//!   leaves no blank line. Claude Code also takes the line break after a
//!   match that starts mid-line, joining two lines; fsview does not (send
//!   the `\n` in `old` to join lines). With `replace_all` this is decided
//!   per occurrence.
//! - **Empty `old`.** Creates a file (handled by the caller for a file that
//!   does not exist) or fills a file that holds only whitespace; on any
//!   other file it is refused ("Cannot create new file - file already
//!   exists.").
//!
//! Not copied from Claude Code: it strips trailing whitespace from each
//! line of `new` (outside Markdown) and undoes a few substitutions its own
//! API makes in model output; fsview writes `new` exactly as given.

use std::borrow::Cow;
use std::ops::Range;

/// One replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub old: String,
    pub new: String,
    pub replace_all: bool,
}

/// Why an edit was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `old` is not in the file.
    NotFound,
    /// `old` is in the file more than once, and `replace_all` is not set.
    Ambiguous,
    /// `old` equals `new`, or the edits leave the file as it was.
    NoChange,
    /// An empty `old` (create the file) on a file that has content.
    FileExists,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::NotFound => "not_found",
            Refusal::Ambiguous => "ambiguous",
            Refusal::NoChange => "no_change",
            Refusal::FileExists => "file_exists",
        }
    }
}

/// A refusal with the message for the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    pub refusal: Refusal,
    /// Which edit (0-based) was refused, when it was one edit's fault.
    pub edit: Option<usize>,
    pub message: String,
}

/// The edited text, and how many replacements made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edited {
    pub text: Vec<u8>,
    pub replacements: usize,
}

pub const MSG_SAME: &str = "No changes to make: old_string and new_string are exactly the same.";
pub const MSG_UNCHANGED: &str = "Original and edited file match exactly. Failed to apply edit.";
pub const MSG_EXISTS: &str = "Cannot create new file - file already exists.";

/// Whose words a refusal is said in. The model keeps Claude Code's
/// messages, which name its Edit tool's arguments; the command line says
/// its own, naming what its user typed, on one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Voice {
    /// Claude Code's words (fsview-mcp's tools).
    #[default]
    Model,
    /// `--old`, `--new`, `--all` (fsview-edit's flags).
    Flags,
    /// `old_string`, `new_string`, `"replace_all": true` (JSON Lines
    /// requests on the command line).
    Requests,
}

impl Voice {
    /// The command line's voice: JSON requests' names with `--requests`,
    /// else the flags'.
    pub fn command_line(requests: bool) -> Voice {
        if requests {
            Voice::Requests
        } else {
            Voice::Flags
        }
    }

    fn old_name(self) -> &'static str {
        match self {
            Voice::Flags => "--old",
            Voice::Model | Voice::Requests => "old_string",
        }
    }

    fn new_name(self) -> &'static str {
        match self {
            Voice::Flags => "--new",
            Voice::Model | Voice::Requests => "new_string",
        }
    }

    fn all(self) -> &'static str {
        match self {
            Voice::Flags => "--all",
            Voice::Model | Voice::Requests => "\"replace_all\": true",
        }
    }

    /// `s` quoted on one line, cut past 80 characters.
    fn quoted(s: &str) -> String {
        let cut: String = s.chars().take(80).collect();
        if cut.len() < s.len() {
            format!("{:?}...", cut)
        } else {
            format!("{s:?}")
        }
    }

    fn not_found(self, old: &str) -> String {
        match self {
            Voice::Model => format!("String to replace not found in file.\nString: {old}"),
            v => format!(
                "{} is not in the file: {}",
                v.old_name(),
                Voice::quoted(old)
            ),
        }
    }

    fn ambiguous(self, n: usize, old: &str) -> String {
        match self {
            Voice::Model => format!(
                "Found {n} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: {old}"
            ),
            v => format!(
                "{} occurs {n} times in the file: {}; give {} to replace each, or more of the text around the one to replace",
                v.old_name(),
                Voice::quoted(old),
                v.all()
            ),
        }
    }

    fn same(self) -> String {
        match self {
            Voice::Model => MSG_SAME.to_string(),
            v => format!(
                "{} and {} are the same: nothing to change",
                v.old_name(),
                v.new_name()
            ),
        }
    }

    fn unchanged(self) -> String {
        match self {
            Voice::Model => MSG_UNCHANGED.to_string(),
            _ => "the edits leave the file as it was: nothing to change".to_string(),
        }
    }

    fn exists(self) -> String {
        match self {
            Voice::Model => format!("{MSG_EXISTS} To change it, give the text to replace as old_string; to replace all of it, use fsview-write."),
            v => format!(
                "the file exists and has text, so an empty {} cannot create it: give the text to replace as {}, or replace all of it with fsview-write",
                v.old_name(),
                v.old_name()
            ),
        }
    }

    fn missing(self) -> String {
        match self {
            Voice::Model => "File does not exist. To create it, give an empty old_string and the whole text as new_string (or use fsview-write).".to_string(),
            v => format!(
                "the file does not exist: to create it, give an empty {} and the whole text as {} (or use fsview-write)",
                v.old_name(),
                v.new_name()
            ),
        }
    }
}

/// Apply `edits` in order to `text` (UTF-8 bytes, possibly with invalid
/// sequences, without a BOM). `exists` is false when the file does not
/// exist yet: then the first edit must have an empty `old`, and its `new`
/// is the file.
/// Refusals are said in `voice`.
pub fn apply(text: &[u8], exists: bool, edits: &[Edit], voice: Voice) -> Result<Edited, Refused> {
    let many = edits.len() > 1;
    let refuse = |i: usize, refusal: Refusal, message: String| Refused {
        refusal,
        edit: Some(i),
        message: if many {
            format!("Edit {} of {}: {message}", i + 1, edits.len())
        } else {
            message
        },
    };
    let mut current: Cow<'_, [u8]> = Cow::Borrowed(text);
    let mut replacements = 0;
    for (i, e) in edits.iter().enumerate() {
        if e.old == e.new {
            return Err(refuse(i, Refusal::NoChange, voice.same()));
        }
        if i == 0 && !exists {
            if !e.old.is_empty() {
                return Err(refuse(i, Refusal::NotFound, voice.missing()));
            }
            current = Cow::Owned(e.new.as_bytes().to_vec());
            replacements += 1;
            continue;
        }
        let (next, n) = apply_one(&current, e, voice).map_err(|(r, m)| refuse(i, r, m))?;
        current = Cow::Owned(next);
        replacements += n;
    }
    if exists && current.as_ref() == text {
        return Err(Refused {
            refusal: Refusal::NoChange,
            edit: None,
            message: voice.unchanged(),
        });
    }
    Ok(Edited {
        text: current.into_owned(),
        replacements,
    })
}

/// One edit on an existing file's text: the new text and the number of
/// replacements, or the refusal and its message.
fn apply_one(text: &[u8], e: &Edit, voice: Voice) -> Result<(Vec<u8>, usize), (Refusal, String)> {
    if e.old.is_empty() {
        // Claude Code lets an empty old_string fill an empty file only.
        if text.iter().all(u8::is_ascii_whitespace) {
            return Ok((e.new.as_bytes().to_vec(), 1));
        }
        return Err((Refusal::FileExists, voice.exists()));
    }
    let old = lf(&e.old);
    let new = lf(&e.new);
    let norm = Normalized::line_feeds(text);
    let mut spans = find_all(&norm.bytes, old.as_bytes());
    let mut via_quotes = false;
    if spans.is_empty() {
        let quotes = Normalized::straight_quotes(&norm.bytes);
        let q_old = straight(&old);
        spans = find_all(&quotes.bytes, q_old.as_bytes())
            .into_iter()
            .map(|s| quotes.source(s))
            .collect();
        via_quotes = !spans.is_empty();
    }
    if spans.is_empty() {
        return Err((Refusal::NotFound, voice.not_found(&e.old)));
    }
    if spans.len() > 1 && !e.replace_all {
        return Err((Refusal::Ambiguous, voice.ambiguous(spans.len(), &e.old)));
    }
    if new.is_empty() && !old.ends_with('\n') {
        // Deleting a line's text deletes its line break too.
        for i in 0..spans.len() {
            let (start, end) = (spans[i].start, spans[i].end);
            let line_start = start == 0 || norm.bytes[start - 1] == b'\n';
            let next_starts_here = spans.get(i + 1).is_some_and(|n| n.start == end);
            if line_start && norm.bytes.get(end) == Some(&b'\n') && !next_starts_here {
                spans[i].end += 1;
            }
        }
    }
    let crlf = crlf_dominant(text);
    let mut out = Vec::with_capacity(text.len() + spans.len() * new.len());
    let mut at = 0;
    for span in &spans {
        let src = norm.source(span.clone());
        out.extend_from_slice(&text[at..src.start]);
        let replacement: Cow<'_, str> = if via_quotes {
            let actual = String::from_utf8_lossy(&norm.bytes[span.clone()]);
            Cow::Owned(preserve_quote_style(&actual, &new))
        } else {
            Cow::Borrowed(new.as_ref())
        };
        if crlf {
            out.extend_from_slice(replacement.replace('\n', "\r\n").as_bytes());
        } else {
            out.extend_from_slice(replacement.as_bytes());
        }
        at = src.end;
    }
    out.extend_from_slice(&text[at..]);
    Ok((out, spans.len()))
}

/// `\r\n` read as `\n`.
fn lf(s: &str) -> Cow<'_, str> {
    if s.contains("\r\n") {
        Cow::Owned(s.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(s)
    }
}

/// More lines end in `\r\n` than in a bare `\n`.
pub fn crlf_dominant(text: &[u8]) -> bool {
    let mut crlf = 0usize;
    let mut lf = 0usize;
    for i in memchr::memchr_iter(b'\n', text) {
        if i > 0 && text[i - 1] == b'\r' {
            crlf += 1;
        } else {
            lf += 1;
        }
    }
    crlf > lf
}

/// Non-overlapping occurrences, left to right (as JavaScript's `split`).
fn find_all(hay: &[u8], needle: &[u8]) -> Vec<Range<usize>> {
    memchr::memmem::find_iter(hay, needle)
        .map(|i| i..i + needle.len())
        .collect()
}

const LEFT_SINGLE: char = '\u{2018}';
const RIGHT_SINGLE: char = '\u{2019}';
const LEFT_DOUBLE: char = '\u{201C}';
const RIGHT_DOUBLE: char = '\u{201D}';

/// Curly quotes read as straight ones.
fn straight(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            LEFT_SINGLE | RIGHT_SINGLE => '\'',
            LEFT_DOUBLE | RIGHT_DOUBLE => '"',
            c => c,
        })
        .collect()
}

/// Bytes read another way (CRLF as LF, curly quotes as straight), with the
/// way back to the bytes they were read from.
struct Normalized<'a> {
    bytes: Cow<'a, [u8]>,
    /// `starts[i]`: where normalized byte `i` starts in the source;
    /// `starts[len]` is the source's length. `None`: the same bytes.
    starts: Option<Vec<usize>>,
}

impl<'a> Normalized<'a> {
    /// `\r\n` read as `\n`.
    fn line_feeds(src: &'a [u8]) -> Normalized<'a> {
        if memchr::memchr(b'\r', src).is_none() {
            return Normalized {
                bytes: Cow::Borrowed(src),
                starts: None,
            };
        }
        let mut bytes = Vec::with_capacity(src.len());
        let mut starts = Vec::with_capacity(src.len() + 1);
        let mut i = 0;
        while i < src.len() {
            starts.push(i);
            if src[i] == b'\r' && src.get(i + 1) == Some(&b'\n') {
                bytes.push(b'\n');
                i += 2;
            } else {
                bytes.push(src[i]);
                i += 1;
            }
        }
        starts.push(src.len());
        Normalized {
            bytes: Cow::Owned(bytes),
            starts: Some(starts),
        }
    }

    /// `‘ ’ “ ”` (three bytes each in UTF-8) read as `'` and `"`.
    fn straight_quotes(src: &'a [u8]) -> Normalized<'a> {
        let mut bytes = Vec::with_capacity(src.len());
        let mut starts = Vec::with_capacity(src.len() + 1);
        let mut i = 0;
        while i < src.len() {
            starts.push(i);
            match src[i..] {
                [0xE2, 0x80, 0x98 | 0x99, ..] => {
                    bytes.push(b'\'');
                    i += 3;
                }
                [0xE2, 0x80, 0x9C | 0x9D, ..] => {
                    bytes.push(b'"');
                    i += 3;
                }
                _ => {
                    bytes.push(src[i]);
                    i += 1;
                }
            }
        }
        starts.push(src.len());
        Normalized {
            bytes: Cow::Owned(bytes),
            starts: Some(starts),
        }
    }

    /// The source bytes a normalized range was read from.
    fn source(&self, r: Range<usize>) -> Range<usize> {
        match &self.starts {
            None => r,
            Some(s) => s[r.start]..s[r.end],
        }
    }
}

/// Claude Code's `preserveQuoteStyle`: give `new` the curly quotes of the
/// file text `actual` that was matched quote-blind.
fn preserve_quote_style(actual: &str, new: &str) -> String {
    let double = actual.contains(LEFT_DOUBLE) || actual.contains(RIGHT_DOUBLE);
    let single = actual.contains(LEFT_SINGLE) || actual.contains(RIGHT_SINGLE);
    let chars: Vec<char> = new.chars().collect();
    let mut out = String::with_capacity(new.len());
    for (i, &c) in chars.iter().enumerate() {
        let curly = match c {
            '"' if double => Some(if opening(&chars, i) {
                LEFT_DOUBLE
            } else {
                RIGHT_DOUBLE
            }),
            '\'' if single => {
                let letter = |j: Option<usize>| {
                    j.and_then(|j| chars.get(j))
                        .is_some_and(|c| c.is_alphabetic())
                };
                Some(if letter(i.checked_sub(1)) && letter(Some(i + 1)) {
                    RIGHT_SINGLE
                } else if opening(&chars, i) {
                    LEFT_SINGLE
                } else {
                    RIGHT_SINGLE
                })
            }
            _ => None,
        };
        out.push(curly.unwrap_or(c));
    }
    out
}

/// A quote at `i` opens: it starts the text or follows a space, a line
/// break, an opening bracket or a dash.
fn opening(chars: &[char], i: usize) -> bool {
    i == 0
        || matches!(
            chars[i - 1],
            ' ' | '\t' | '\n' | '\r' | '(' | '[' | '{' | '\u{2014}' | '\u{2013}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    // The command line names what its user typed, on one line; the model
    // gets Claude Code's words.
    #[test]
    fn refusals_in_each_voice() {
        let e = [Edit {
            old: "a\nb".into(),
            new: "c".into(),
            replace_all: false,
        }];
        let said = |v: Voice| apply(b"a\nb a\nb", true, &e, v).unwrap_err().message;
        assert_eq!(said(Voice::Flags), "--old occurs 2 times in the file: \"a\\nb\"; give --all to replace each, or more of the text around the one to replace");
        assert_eq!(said(Voice::Requests), "old_string occurs 2 times in the file: \"a\\nb\"; give \"replace_all\": true to replace each, or more of the text around the one to replace");
        assert!(said(Voice::Model)
            .starts_with("Found 2 matches of the string to replace, but replace_all is false."));
        let long = "x".repeat(100);
        let e = [Edit {
            old: long.clone(),
            new: "y".into(),
            replace_all: false,
        }];
        assert_eq!(
            apply(b"z", true, &e, Voice::Flags).unwrap_err().message,
            format!("--old is not in the file: {:?}...", "x".repeat(80))
        );
        assert_eq!(
            apply(b"z", true, &e, Voice::Model).unwrap_err().message,
            format!("String to replace not found in file.\nString: {long}")
        );
    }

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old: old.into(),
            new: new.into(),
            replace_all: false,
        }
    }

    fn all(old: &str, new: &str) -> Edit {
        Edit {
            replace_all: true,
            ..edit(old, new)
        }
    }

    fn ok(text: &str, edits: &[Edit]) -> String {
        String::from_utf8(
            apply(text.as_bytes(), true, edits, Voice::Model)
                .unwrap()
                .text,
        )
        .unwrap()
    }

    fn refused(text: &str, edits: &[Edit]) -> (Refusal, String) {
        let r = apply(text.as_bytes(), true, edits, Voice::Model).unwrap_err();
        (r.refusal, r.message)
    }

    #[test]
    fn unique_replace_and_claude_codes_refusals() {
        assert_eq!(
            ok("fn old_name() {}\n", &[edit("old_name", "new_name")]),
            "fn new_name() {}\n"
        );
        assert_eq!(
            refused("a\n", &[edit("b", "c")]),
            (
                Refusal::NotFound,
                "String to replace not found in file.\nString: b".into()
            )
        );
        assert_eq!(
            refused("x x\n", &[edit("x", "y")]),
            (Refusal::Ambiguous, "Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: x".into())
        );
        assert_eq!(
            refused("x\n", &[edit("x", "x")]),
            (Refusal::NoChange, MSG_SAME.into())
        );
        assert_eq!(ok("x x x\n", &[all("x", "yy")]), "yy yy yy\n");
        assert_eq!(
            apply(b"x x x", true, &[all("x", "y")], Voice::Model)
                .unwrap()
                .replacements,
            3
        );
    }

    // Occurrences do not overlap, as in JavaScript's split: "aaa" holds
    // "aa" once.
    #[test]
    fn occurrences_do_not_overlap() {
        assert_eq!(ok("aaa", &[edit("aa", "b")]), "ba");
        assert_eq!(ok("aaaa", &[all("aa", "b")]), "bb");
    }

    #[test]
    fn crlf_is_matched_as_lf_and_kept() {
        assert_eq!(
            ok("a\r\nb\r\nc\r\n", &[edit("a\nb\n", "x\ny\nz\n")]),
            "x\r\ny\r\nz\r\nc\r\n"
        );
        // The model may send CRLF itself.
        assert_eq!(ok("a\r\nb\r\n", &[edit("a\r\nb", "c\r\nd")]), "c\r\nd\r\n");
        // Mixed endings: lines not touched keep theirs; new lines take the
        // dominant one (here LF).
        assert_eq!(
            ok("a\r\nb\nc\nd\n", &[edit("c", "c1\nc2")]),
            "a\r\nb\nc1\nc2\nd\n"
        );
        assert_eq!(
            ok("a\r\nb\r\nc\n", &[edit("b\nc", "B\nC")]),
            "a\r\nB\r\nC\n"
        );
    }

    #[test]
    fn no_final_newline_stays_so() {
        assert_eq!(ok("a\nb", &[edit("b", "c")]), "a\nc");
        assert_eq!(ok("a\r\nb", &[edit("a\nb", "x\ny")]), "x\r\ny");
    }

    #[test]
    fn curly_quotes_match_straight_ones_and_stay_curly() {
        let text = "say “hello” and ‘bye’, it’s fine\n";
        assert_eq!(
            ok(text, &[edit("say \"hello\"", "say \"hi there\"")]),
            "say “hi there” and ‘bye’, it’s fine\n"
        );
        assert_eq!(
            ok(text, &[edit("it's fine", "it's (really) 'fine'")]),
            "say “hello” and ‘bye’, it’s (really) ‘fine’\n"
        );
        // Straight quotes in the file are matched exactly, and the new text
        // is taken as typed.
        assert_eq!(ok("x = \"a\"\n", &[edit("\"a\"", "\"b\"")]), "x = \"b\"\n");
        // Single quotes do not stand for double ones.
        assert_eq!(
            refused("'a' ‘a’", &[edit("\"a\"", "b")]).0,
            Refusal::NotFound
        );
        // Quote-blind counting: every spelling counts.
        assert_eq!(
            refused("‘a’ ’a‘", &[edit("'a'", "b")]).0,
            Refusal::Ambiguous
        );
        // The exact text wins over quote-blind matches, as in Claude Code.
        assert_eq!(ok("“a” \"a\" “a”", &[edit("\"a\"", "b")]), "“a” b “a”");
        assert_eq!(
            refused("“a” “a”", &[edit("\"a\"", "b")]).0,
            Refusal::Ambiguous
        );
        // Typing the curly quotes a file has, where a straight one is
        // expected, makes no change in the file.
        assert_eq!(
            refused("it’s", &[edit("it's", "it’s")]),
            (Refusal::NoChange, MSG_UNCHANGED.into())
        );
    }

    #[test]
    fn deleting_a_line_takes_its_line_break() {
        assert_eq!(ok("a\nb\nc\n", &[edit("b", "")]), "a\nc\n");
        assert_eq!(ok("a\r\nb\r\nc\r\n", &[edit("b", "")]), "a\r\nc\r\n");
        assert_eq!(ok("a\nb", &[edit("b", "")]), "a\n");
        assert_eq!(ok("ab\nb\n", &[all("b", "")]), "a\n");
        // Mid-line text is deleted alone: no lines are joined.
        assert_eq!(ok("ab\nc\n", &[edit("b", "")]), "a\nc\n");
        // old ending in a line break removes exactly what it says.
        assert_eq!(ok("a\nb\n\nc\n", &[edit("b\n", "")]), "a\n\nc\n");
    }

    #[test]
    fn several_edits_apply_in_order_all_or_nothing() {
        assert_eq!(ok("a\nb\n", &[edit("a", "x"), edit("x\nb", "y")]), "y\n");
        let r = apply(
            b"a\nb\n",
            true,
            &[edit("a", "x"), edit("zzz", "y")],
            Voice::Model,
        )
        .unwrap_err();
        assert_eq!(r.refusal, Refusal::NotFound);
        assert_eq!(r.edit, Some(1));
        assert_eq!(
            r.message,
            "Edit 2 of 2: String to replace not found in file.\nString: zzz"
        );
        // Edits that undo each other change nothing.
        assert_eq!(
            refused("a", &[edit("a", "b"), edit("b", "a")]),
            (Refusal::NoChange, MSG_UNCHANGED.into())
        );
    }

    #[test]
    fn empty_old_creates_or_fills_only() {
        let r = apply(
            b"",
            false,
            &[edit("", "new\n"), edit("new", "fresh")],
            Voice::Model,
        )
        .unwrap();
        assert_eq!(r.text, b"fresh\n");
        assert_eq!(
            apply(b"", false, &[edit("x", "y")], Voice::Model)
                .unwrap_err()
                .refusal,
            Refusal::NotFound
        );
        assert_eq!(ok(" \n", &[edit("", "body\n")]), "body\n");
        assert_eq!(refused("body\n", &[edit("", "x")]).0, Refusal::FileExists);
    }

    #[test]
    fn bytes_that_are_not_utf8_survive() {
        let text = b"caf\xe9\nvalue = 1\n";
        let r = apply(text, true, &[edit("1", "2")], Voice::Model).unwrap();
        assert_eq!(r.text, b"caf\xe9\nvalue = 2\n");
    }

    use proptest::prelude::*;

    proptest! {
        // On LF text without curly quotes, an edit is plain string
        // replacement: the first (only) occurrence, or all of them.
        #[test]
        fn lf_text_is_plain_replacement(
            text in "[ab\n]{0,40}",
            old in "[ab\n]{1,4}",
            new in "[abc\n]{1,4}",
            all in any::<bool>(),
        ) {
            let e = Edit { old: old.clone(), new: new.clone(), replace_all: all };
            let count = text.matches(&old).count();
            match apply(text.as_bytes(), true, std::slice::from_ref(&e), Voice::Model) {
                Ok(r) => {
                    prop_assert!(count == 1 || (all && count > 1));
                    let want = if all { text.replace(&old, &new) } else { text.replacen(&old, &new, 1) };
                    prop_assert_eq!(String::from_utf8(r.text).unwrap(), want);
                    prop_assert_eq!(r.replacements, count);
                }
                Err(r) => match r.refusal {
                    Refusal::NotFound => prop_assert_eq!(count, 0),
                    Refusal::Ambiguous => prop_assert!(count > 1 && !all),
                    Refusal::NoChange => prop_assert!(old == new || text.replace(&old, &new) == text),
                    Refusal::FileExists => prop_assert!(false, "old is never empty here"),
                },
            }
        }

        // A CRLF file is edited as its LF reading, and written back with
        // CRLF: the same result as editing the LF text and converting.
        #[test]
        fn crlf_text_edits_like_its_lf_reading(
            text in "[ab\n]{0,40}",
            old in "[ab\n]{1,4}",
            new in "[abc\n]{1,4}",
        ) {
            let crlf = text.replace('\n', "\r\n");
            let e = [Edit { old: old.clone(), new: new.clone(), replace_all: false }];
            let lf_result = apply(text.as_bytes(), true, &e, Voice::Model);
            let crlf_result = apply(crlf.as_bytes(), true, &e, Voice::Model);
            let dominant = text.contains('\n');
            match (lf_result, crlf_result) {
                (Ok(a), Ok(b)) => {
                    let a = String::from_utf8(a.text).unwrap();
                    let b = String::from_utf8(b.text).unwrap();
                    if dominant {
                        prop_assert_eq!(b, a.replace('\n', "\r\n"));
                    } else {
                        prop_assert_eq!(b, a);
                    }
                }
                (Err(a), Err(b)) => prop_assert_eq!(a.refusal, b.refusal),
                (a, b) => prop_assert!(false, "{:?} vs {:?}", a, b),
            }
        }
    }

    #[test]
    fn claude_codes_quote_rules() {
        assert_eq!(preserve_quote_style("“x”", "\"a\" (\"b\")"), "“a” (“b”)");
        assert_eq!(preserve_quote_style("‘x’", "don't 'go'"), "don’t ‘go’");
        // Only the kinds of quote the matched text had are curled.
        assert_eq!(preserve_quote_style("“x”", "it's \"a\""), "it's “a”");
    }
}
