//! A targeted edit onto a file that changed since the agent's view: a
//! three-way merge whose base is the view.
//!
//! The agent's edit was made against the text it was shown (the base);
//! someone else changed the file since (theirs). When the two touch lines
//! at least [`MARGIN`] unchanged lines apart, both are kept: the file gets
//! the other change and the edit, and the model is told the other change
//! with the result. Anything closer, or an edit that would land anywhere
//! but where it was meant to (its text found another number of times in
//! the new text, or found somewhere the other change put it), is refused
//! as a stale edit always was. The caller applies the edit with its own
//! rules to both texts ([`Texts`]); this module only decides whether the
//! result on the new text is the merge of the two changes.

use similar::{Algorithm, DiffOp};

/// Unchanged lines that must stand between the edit and any other change.
pub const MARGIN: usize = 3;

/// What a targeted edit gets when the file changed since the view: merged
/// with the change where they do not collide (the default), or refused as
/// a stale edit always was.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnChange {
    #[default]
    Merge,
    Refuse,
}

/// The environment variable that sets [`OnChange`] where no option does.
pub const ENV: &str = "FSVIEW_ON_CHANGE";

impl OnChange {
    pub fn parse(s: &str) -> Option<OnChange> {
        match s {
            "merge" => Some(OnChange::Merge),
            "refuse" => Some(OnChange::Refuse),
            _ => None,
        }
    }

    /// The option's value when given, else [`ENV`]'s, else the default;
    /// an [`ENV`] that says neither is an error the caller reports.
    pub fn resolve(option: Option<OnChange>) -> Result<OnChange, String> {
        if let Some(o) = option {
            return Ok(o);
        }
        match std::env::var(ENV) {
            Ok(v) if v.is_empty() => Ok(OnChange::default()),
            Ok(v) => OnChange::parse(&v).ok_or_else(|| {
                format!("{ENV}={v:?} is neither \"merge\" nor \"refuse\"; set one of those, or unset it")
            }),
            Err(_) => Ok(OnChange::default()),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            OnChange::Merge => "merge",
            OnChange::Refuse => "refuse",
        }
    }
}

/// The four texts of a merge, each the whole file.
#[derive(Clone, Copy, Debug)]
pub struct Texts<'a> {
    /// What the agent was shown: its edit was made against this.
    pub base: &'a str,
    /// What the file holds now.
    pub theirs: &'a str,
    /// The base with the edit applied.
    pub ours: &'a str,
    /// The file's text now with the edit applied: what the write would
    /// leave.
    pub result: &'a str,
}

/// Why an edit is not merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// It touches lines within [`MARGIN`] lines of the other change.
    Near,
    /// Applied to the new text it does something else than to the text the
    /// agent saw (found elsewhere, or another number of times).
    Elsewhere,
}

impl Refused {
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::Near => "the edit is within 3 lines of the other change",
            Refused::Elsewhere => "the edit's text no longer stands only where it was",
        }
    }
}

/// A changed run of lines: base lines `start..end` became `lines`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Hunk<'a> {
    start: usize,
    end: usize,
    lines: Vec<&'a str>,
}

/// The lines of `text`, each with its newline.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The changed runs from `base` to `other`, in base line numbers.
fn hunks<'a>(base: &[&'a str], other: &[&'a str]) -> Vec<Hunk<'a>> {
    let ops = similar::capture_diff_slices(Algorithm::Myers, base, other);
    let mut out: Vec<Hunk<'a>> = Vec::new();
    for op in ops {
        let (start, end, new) = match op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index, old_len, ..
            } => (old_index, old_index + old_len, 0..0),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, old_index, new_index..new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index,
                old_index + old_len,
                new_index..new_index + new_len,
            ),
        };
        // Runs that touch are one change.
        match out.last_mut() {
            Some(h) if h.end == start => {
                h.end = end;
                h.lines.extend_from_slice(&other[new]);
            }
            _ => out.push(Hunk {
                start,
                end,
                lines: other[new].to_vec(),
            }),
        }
    }
    out
}

/// Whether `a` and `b` have at least [`MARGIN`] unchanged base lines
/// between them.
fn apart(a: &Hunk<'_>, b: &Hunk<'_>) -> bool {
    a.end + MARGIN <= b.start || b.end + MARGIN <= a.start
}

/// The file's text with both changes, when the edit may be applied to the
/// new text: the edit's lines are at least [`MARGIN`] lines from every line
/// the other change touched, and `texts.result` (the edit applied to the
/// new text by the caller's rules) is exactly both changes made to the
/// base.
pub fn merge(texts: &Texts<'_>) -> Result<(), Refused> {
    let base = lines(texts.base);
    let theirs = hunks(&base, &lines(texts.theirs));
    let ours = hunks(&base, &lines(texts.ours));
    if theirs.iter().any(|t| ours.iter().any(|o| !apart(t, o))) {
        return Err(Refused::Near);
    }
    let mut all: Vec<&Hunk<'_>> = theirs.iter().chain(&ours).collect();
    all.sort_by_key(|h| h.start);
    let mut merged = String::with_capacity(texts.result.len());
    let mut at = 0;
    for h in all {
        base[at..h.start].iter().for_each(|l| merged.push_str(l));
        h.lines.iter().for_each(|l| merged.push_str(l));
        at = h.end;
    }
    base[at..].iter().for_each(|l| merged.push_str(l));
    match merged == texts.result {
        true => Ok(()),
        false => Err(Refused::Elsewhere),
    }
}

/// `text` with each of `edits` (old text, new text, every occurrence)
/// made in turn, each old text found exactly once unless every occurrence
/// is to change: the plain rule of a targeted edit, for agents whose own
/// tool applies it so. `None` when one is not found (or is ambiguous, or
/// empty).
pub fn replace_exact(text: &str, edits: &[(&str, &str, bool)]) -> Option<String> {
    let mut out = text.to_string();
    for &(old, new, all) in edits {
        if old.is_empty() {
            return None;
        }
        let count = out.matches(old).count();
        if count == 0 || (!all && count != 1) {
            return None;
        }
        out = match all {
            true => out.replace(old, new),
            false => out.replacen(old, new, 1),
        };
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    /// The edit `old -> new` made against `base` while the file became
    /// `theirs`: the merge's answer, as the hooks and fsview-edit ask it.
    fn try_merge(base: &str, theirs: &str, old: &str, new: &str) -> Result<String, Refused> {
        let edits = [(old, new, false)];
        let ours = replace_exact(base, &edits).expect("the edit applies to the base");
        let Some(result) = replace_exact(theirs, &edits) else {
            return Err(Refused::Elsewhere);
        };
        merge(&Texts {
            base,
            theirs,
            ours: &ours,
            result: &result,
        })
        .map(|()| result)
    }

    #[test]
    fn an_edit_far_from_the_other_change_keeps_both() {
        let base = numbered(20);
        let theirs = base.replace("line 2\n", "line 2 (formatted)\n");
        let got = try_merge(&base, &theirs, "line 15\n", "line fifteen\n").unwrap();
        assert_eq!(
            got,
            base.replace("line 2\n", "line 2 (formatted)\n")
                .replace("line 15\n", "line fifteen\n")
        );
    }

    #[test]
    fn three_unchanged_lines_between_are_enough_and_two_are_not() {
        let base = numbered(20);
        // The other change on line 5; the edit on line 9: lines 6-8 between.
        let theirs = base.replace("line 5\n", "line five\n");
        assert!(try_merge(&base, &theirs, "line 9\n", "line nine\n").is_ok());
        // On line 8: only lines 6-7 between.
        assert_eq!(
            try_merge(&base, &theirs, "line 8\n", "line eight\n"),
            Err(Refused::Near)
        );
        // Before it, the same: the edit on line 1, lines 2-4 between.
        assert!(try_merge(&base, &theirs, "line 1\n", "line one\n").is_ok());
        assert_eq!(
            try_merge(&base, &theirs, "line 2\n", "line two\n"),
            Err(Refused::Near)
        );
    }

    #[test]
    fn the_same_line_is_refused() {
        let base = numbered(10);
        let theirs = base.replace("line 4\n", "line 4 changed\n");
        // The edit's text still found once, within the changed line.
        assert_eq!(
            try_merge(&base, &theirs, "line 4", "line FOUR"),
            Err(Refused::Near)
        );
        let theirs = base.replace("line 4\n", "  line 4\n");
        assert_eq!(
            try_merge(&base, &theirs, "line 4\n", "line FOUR\n"),
            Err(Refused::Near)
        );
    }

    #[test]
    fn lines_inserted_or_deleted_far_away_shift_nothing_that_matters() {
        let base = numbered(30);
        let theirs = format!("// header\n// more\n{}", base.replace("line 12\n", ""));
        let got = try_merge(&base, &theirs, "line 25\n", "line 25 edited\n").unwrap();
        assert_eq!(got, theirs.replace("line 25\n", "line 25 edited\n"));
    }

    #[test]
    fn an_edit_whose_text_the_other_change_copied_is_refused() {
        let base = numbered(20);
        // The other change put a second "line 15" at the top.
        let theirs = format!("line 15\n{base}");
        assert_eq!(
            try_merge(&base, &theirs, "line 15\n", "x\n"),
            Err(Refused::Elsewhere)
        );
    }

    #[test]
    fn an_edit_whose_text_moved_is_refused() {
        let base = numbered(20);
        // The other change moved line 15 to the top: the text is found once,
        // but not where the edit was meant.
        let theirs = format!("line 15\n{}", base.replace("line 15\n", ""));
        assert!(try_merge(&base, &theirs, "line 15\n", "x\n").is_err());
    }

    #[test]
    fn no_final_newline_and_an_edit_at_the_end() {
        let base = "a\nb\nc\nd\ne\nf\ng";
        let theirs = "A\nb\nc\nd\ne\nf\ng";
        assert_eq!(
            try_merge(base, theirs, "g", "G").unwrap(),
            "A\nb\nc\nd\ne\nf\nG"
        );
    }

    #[test]
    fn replace_exact_is_the_plain_rule() {
        assert_eq!(replace_exact("a b a", &[("a", "x", false)]), None);
        assert_eq!(
            replace_exact("a b a", &[("a", "x", true)]).unwrap(),
            "x b x"
        );
        assert_eq!(replace_exact("a b", &[("c", "x", false)]), None);
        assert_eq!(replace_exact("a b", &[("", "x", false)]), None);
        assert_eq!(
            replace_exact("a b", &[("a", "c", false), ("c b", "d", false)]).unwrap(),
            "d"
        );
    }
}
