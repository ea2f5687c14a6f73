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
    /// The edit does not apply to the text the agent saw, or to the file's
    /// text now (its tool would fail on it).
    Unapplied,
    /// The agent saw some of the file's lines, and the edit comes within
    /// [`MARGIN`] lines of where they end (or beyond): what changed just
    /// past them cannot be told apart from what the agent saw.
    Uncovered,
}

impl Refused {
    pub fn as_str(self) -> &'static str {
        match self {
            Refused::Near => "the edit is within 3 lines of the other change",
            Refused::Elsewhere => "the edit's text no longer stands only where it was",
            Refused::Unapplied => "the edit does not apply to the text as seen and as it is now",
            Refused::Uncovered => "the edit is within 3 lines of the end of the lines seen",
        }
    }
}

/// What the agent was shown of a file, that its edit was made against.
#[derive(Clone, Copy, Debug)]
pub enum Seen<'a> {
    /// All of it.
    Whole(&'a str),
    /// Some of its lines, each with its newline (a `range` or `start`
    /// view): `text`, which began at line `first` (from 1) of a file of
    /// `total` lines, when known.
    Lines {
        text: &'a str,
        first: usize,
        total: Option<usize>,
    },
}

/// An edit merged with the change its file had since the agent's view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    /// The file's text now with the edit made: what to write.
    pub result: String,
    /// What the agent saw, put where it is in the file now: for a
    /// [`Seen::Lines`], the file's text now with the lines it saw in place
    /// of what they became. The other change, as far as the agent can know
    /// it, is the diff from this to the file's text now ([`told`]).
    pub base: String,
    /// For a [`Seen::Lines`]: where the lines seen are in the file now,
    /// the first (from 1) and how many.
    pub now: Option<(usize, usize)>,
}

/// Merge an edit (`apply`: the edit made to a text by the agent's tool's
/// rules, `None` where the tool would fail) made against what the agent
/// saw with the change the file had since, when they do not collide
/// ([`merge`]).
///
/// An agent that saw only some lines saw nothing of the rest: its edit
/// must stand at least [`MARGIN`] lines inside them (or reach the file's
/// own start or end there), and the other change it is told is what
/// became of those lines. They are found in the file now around where the
/// edit lands.
pub fn merge_edit(
    seen: Seen<'_>,
    theirs: &str,
    apply: impl Fn(&str) -> Option<String>,
) -> Result<Merged, Refused> {
    let (text, first, total) = match seen {
        Seen::Whole(base) => {
            let ours = apply(base).ok_or(Refused::Unapplied)?;
            let result = apply(theirs).ok_or(Refused::Unapplied)?;
            merge(&Texts {
                base,
                theirs,
                ours: &ours,
                result: &result,
            })?;
            return Ok(Merged {
                result,
                base: base.to_string(),
                now: None,
            });
        }
        Seen::Lines { text, first, total } => (text, first.max(1), total),
    };
    let block = lines(text);
    let now = lines(theirs);
    // The lines seen must each end a line of the file, but for its last.
    if block.is_empty() || block[..block.len() - 1].iter().any(|l| !l.ends_with('\n')) {
        return Err(Refused::Uncovered);
    }
    // Where the edit is in the lines seen, and in the file now.
    let ours_block = apply(text).ok_or(Refused::Unapplied)?;
    let result = apply(theirs).ok_or(Refused::Unapplied)?;
    let (i, j) = span(&hunks(&block, &lines(&ours_block))).unwrap_or((0, 0));
    let (p, q) = span(&hunks(&now, &lines(&result))).unwrap_or((0, 0));
    let (s, e) = locate(&block, &now, (i, j), (p, q)).ok_or(Refused::Elsewhere)?;
    if !where_they_were(&block, &now, first - 1, (s, e)) {
        return Err(Refused::Elsewhere);
    }
    let mut base = String::with_capacity(theirs.len() + text.len());
    now[..s].iter().for_each(|l| base.push_str(l));
    // A last line seen without its newline is the file's last line; one
    // that is not last now gets the newline back.
    base.push_str(text);
    if e < now.len() && !text.ends_with('\n') {
        base.push('\n');
    }
    now[e..].iter().for_each(|l| base.push_str(l));
    let ours = apply(&base).ok_or(Refused::Unapplied)?;
    merge(&Texts {
        base: &base,
        theirs,
        ours: &ours,
        result: &result,
    })?;
    // Inside the lines seen, by the margin, but where they reach the
    // file's own start or end (then and now).
    let n = block.len();
    let at_start = first == 1 && s == 0;
    let at_end = total == Some(first - 1 + n) && e == now.len();
    let inside = hunks(&lines(&base), &lines(&ours))
        .iter()
        .all(|h| (at_start || h.start >= s + MARGIN) && (at_end || h.end + MARGIN <= s + n));
    if !inside {
        return Err(Refused::Uncovered);
    }
    Ok(Merged {
        result,
        base,
        now: Some((s + 1, e - s)),
    })
}

/// Whether `found` (lines `start..end` of `now`, found around where the
/// edit lands) is where the lines seen (`block`, which began at line `at`,
/// from 0) went, judged from where they were: the lines around their old
/// place that still hold at least half of them must be these, else (none
/// of them left there) `found` must be the one place in the file that
/// holds them whole. A copy of the lines seen elsewhere, or a block that
/// only looks like them, is not where they went: the edit would land on
/// text the agent never saw, while its own lines changed.
fn where_they_were(block: &[&str], now: &[&str], at: usize, found: (usize, usize)) -> bool {
    let n = block.len();
    let whole = |k: usize| k + n <= now.len() && now[k..k + n] == *block;
    if whole(at) {
        return found == (at, at + n);
    }
    let at = at.min(now.len());
    let near = locate(block, now, (0, 0), (at, at)).filter(|&(a, b)| {
        let kept: usize = diff_ops(block, &now[a..b])
            .iter()
            .map(|op| match *op {
                DiffOp::Equal { len, .. } => len,
                _ => 0,
            })
            .sum();
        2 * kept >= n
    });
    match near {
        Some((a, b)) => a < found.1 && found.0 < b,
        None => {
            let mut places = (0..=now.len().saturating_sub(n)).filter(|&k| whole(k));
            places.next() == Some(found.0) && found.1 == found.0 + n && places.next().is_none()
        }
    }
}

/// The lines from the first a hunk touches to the last.
fn span(hunks: &[Hunk<'_>]) -> Option<(usize, usize)> {
    Some((hunks.first()?.start, hunks.last()?.end))
}

/// How long finding the lines seen in the file now may look for the
/// closest match before it settles for a good one.
const LOCATE_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(50);

/// Where the lines of `block` are in `now` (`start..end`): found around
/// where the edit lands (`block` lines `edit_block`, `now` lines
/// `edit_now`), a line diff of the block against the lines near there.
/// Changed lines at the block's ends are taken as changed in place, one
/// for one. `None` when no line of it is left.
fn locate(
    block: &[&str],
    now: &[&str],
    edit_block: (usize, usize),
    edit_now: (usize, usize),
) -> Option<(usize, usize)> {
    let n = block.len();
    // Lines inserted into or deleted from the block, on either side of the
    // edit, move its ends: look that far beyond them.
    let slack = n + 16;
    let from = edit_now.0.saturating_sub(edit_block.0 + slack);
    let to = (edit_now.1 + (n - edit_block.1.min(n)) + slack).min(now.len());
    let window = &now[from..to];
    let deadline = std::time::Instant::now() + LOCATE_TIMEOUT;
    let ops =
        similar::capture_diff_slices_deadline(Algorithm::Myers, block, window, Some(deadline));
    let mut runs: Vec<(usize, usize, usize)> = ops
        .iter()
        .filter_map(|op| match *op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => Some((old_index, new_index, len)),
            _ => None,
        })
        .collect();
    // A run at either end that only lines inserted part from the next one
    // (the block's first lines, "}" and "", matched to the same lines of
    // an earlier function) is slid next to it, where the same lines stand:
    // the diff is as short, and the block's end no longer reaches far off.
    while let [(b0, w0, l0), (b1, w1, l1), ..] = runs[..] {
        if b0 + l0 != b1 || w1 < w0 + l0 + l0 || window[w1 - l0..w1] != block[b0..b1] {
            break;
        }
        runs.splice(0..2, [(b0, w1 - l0, l0 + l1)]);
    }
    while let [.., (b0, w0, l0), (b1, w1, l1)] = runs[..] {
        let k = runs.len() - 2;
        if b0 + l0 != b1 || w1 < w0 + l0 || w0 + l0 + l1 > window.len() {
            break;
        }
        if window[w0 + l0..w0 + l0 + l1] != block[b1..b1 + l1] {
            break;
        }
        runs.splice(k.., [(b0, w0, l0 + l1)]);
    }
    let &(b0, w0, _) = runs.first()?;
    let &(b1, w1, len) = runs.last()?;
    let start = from + w0.saturating_sub(b0);
    let end = (from + w1 + len + (n - (b1 + len))).min(to).max(start);
    Some((start, end))
}

/// Where the lines an agent saw (`text`, which began at line `first`,
/// counted from 1) are in `now`, the file's text now: their first line
/// (counted from 0) and the line after their last. Found where they were,
/// else whole where they moved (the nearest such place), else by a line
/// diff against the lines around where they were, when at least half of
/// them are there still. `None` when they cannot be found so.
pub fn locate_seen(text: &str, now: &str, first: usize) -> Option<(usize, usize)> {
    let block = lines(text);
    let now = lines(now);
    let n = block.len();
    if n == 0 {
        return None;
    }
    let at = first.max(1) - 1;
    let same = |k: usize| k + n <= now.len() && now[k..k + n] == block[..];
    if same(at) {
        return Some((at, at + n));
    }
    // Moved whole: the nearest place that holds all of them.
    let moved = (0..=now.len().saturating_sub(n))
        .filter(|&k| now[k] == block[0] && same(k))
        .min_by_key(|&k| k.abs_diff(at));
    if let Some(k) = moved {
        return Some((k, k + n));
    }
    let at = at.min(now.len());
    let (start, end) = locate(&block, &now, (0, 0), (at, at))?;
    // Enough of them left for the place to be theirs.
    let kept: usize = diff_ops(&block, &now[start..end])
        .iter()
        .map(|op| match *op {
            DiffOp::Equal { len, .. } => len,
            _ => 0,
        })
        .sum();
    (2 * kept >= n).then_some((start, end))
}

/// The other change as the agent is told it: a unified diff from
/// [`Merged::base`] to the file's text now, headed by `name`, with 3 lines
/// of context. Empty when nothing the agent saw changed.
pub fn told(merged: &Merged, theirs: &str, name: &str) -> String {
    similar::TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(merged.base.as_str(), theirs)
        .unified_diff()
        .context_radius(MARGIN)
        .header(name, name)
        .to_string()
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

/// How long one line diff of a merge may look for the smallest diff. A
/// rewrite of most of a long file costs the diff time that grows with the
/// square of its length (35 s for 20,000 lines all re-indented); past this
/// it settles for a correct but longer one, whose larger hunks can only
/// make an edit nearer to the change: refused, never merged wrongly (the
/// result is checked against both changes made to the base, [`merge`]).
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(50);

/// The line diff of `a` to `b`, the smallest found within [`DIFF_TIMEOUT`].
pub(crate) fn diff_ops<T: PartialEq + std::hash::Hash + Eq + Ord>(a: &[T], b: &[T]) -> Vec<DiffOp> {
    let deadline = std::time::Instant::now() + DIFF_TIMEOUT;
    similar::capture_diff_slices_deadline(Algorithm::Myers, a, b, Some(deadline))
}

/// The changed runs from `base` to `other`, in base line numbers.
fn hunks<'a>(base: &[&'a str], other: &[&'a str]) -> Vec<Hunk<'a>> {
    let ops = diff_ops(base, other);
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

    /// Lines `first..=last` of `text`.
    fn slice(text: &str, first: usize, last: usize) -> String {
        lines(text)[first - 1..last].concat()
    }

    /// The edit `old -> new` made against lines `first..=last` of `base`
    /// (a file of `total` lines) while the file became `theirs`.
    fn try_lines(
        base: &str,
        (first, last): (usize, usize),
        theirs: &str,
        old: &str,
        new: &str,
    ) -> Result<Merged, Refused> {
        let text = slice(base, first, last);
        let seen = Seen::Lines {
            text: &text,
            first,
            total: Some(lines(base).len()),
        };
        merge_edit(seen, theirs, |t| replace_exact(t, &[(old, new, false)]))
    }

    #[test]
    fn lines_seen_moved_by_a_change_above_them_take_the_edit() {
        let base = numbered(60);
        let theirs = format!("// one\n// two\n{base}");
        let m = try_lines(&base, (10, 30), &theirs, "line 20\n", "line twenty\n").unwrap();
        assert_eq!(m.result, theirs.replace("line 20\n", "line twenty\n"));
        assert_eq!(m.now, Some((12, 21)));
        // Nothing the agent saw changed: nothing to tell but where it is.
        assert_eq!(told(&m, &theirs, "f"), "");
    }

    #[test]
    fn a_change_inside_the_lines_seen_is_told_far_and_refused_near() {
        let base = numbered(60);
        let theirs = format!(
            "// one\n{}",
            base.replace("line 12\n", "line 12 formatted\n")
        );
        let m = try_lines(&base, (10, 30), &theirs, "line 20\n", "line twenty\n").unwrap();
        assert_eq!(m.result, theirs.replace("line 20\n", "line twenty\n"));
        assert_eq!(m.now, Some((11, 21)));
        assert_eq!(
            told(&m, &theirs, "f"),
            "--- f\n+++ f\n@@ -10,7 +10,7 @@\n line 9\n line 10\n line 11\n-line 12\n+line 12 formatted\n line 13\n line 14\n line 15\n"
        );
        assert_eq!(
            try_lines(&base, (10, 30), &theirs, "line 15\n", "x\n"),
            Err(Refused::Near)
        );
        assert!(try_lines(&base, (10, 30), &theirs, "line 16\n", "x\n").is_ok());
    }

    #[test]
    fn the_edit_must_stand_three_lines_inside_the_lines_seen() {
        let base = numbered(60);
        let theirs = base.replace("line 50\n", "line fifty\n");
        let seen = (10, 30);
        for (line, ok) in [
            (10, false),
            (12, false),
            (13, true),
            (27, true),
            (28, false),
            (30, false),
        ] {
            let got = try_lines(&base, seen, &theirs, &format!("line {line}\n"), "x\n");
            assert_eq!(got.is_ok(), ok, "line {line}: {got:?}");
            if !ok {
                assert_eq!(got, Err(Refused::Uncovered), "line {line}");
            }
        }
        // Text the agent did not see is no edit of what it saw.
        assert_eq!(
            try_lines(&base, seen, &theirs, "line 40\n", "x\n"),
            Err(Refused::Unapplied)
        );
    }

    #[test]
    fn lines_seen_from_the_file_start_or_to_its_end_need_no_margin_there() {
        let base = numbered(40);
        let theirs = base.replace("line 30\n", "line thirty\n");
        let m = try_lines(&base, (1, 20), &theirs, "line 1\n", "x\n").unwrap();
        assert_eq!(m.now, Some((1, 20)));
        assert_eq!(m.result, theirs.replacen("line 1\n", "x\n", 1));
        let theirs = base.replace("line 2\n", "line two\n");
        let m = try_lines(&base, (21, 40), &theirs, "line 40\n", "x\n").unwrap();
        assert_eq!(m.result, theirs.replace("line 40\n", "x\n"));
        // Lines added after the end since: the end seen is no longer the
        // file's.
        let theirs = format!("{base}line 41\n");
        assert_eq!(
            try_lines(&base, (21, 40), &theirs, "line 40\n", "x\n"),
            Err(Refused::Uncovered)
        );
        // Lines added before the start since: likewise.
        let theirs = format!("line 0\n{base}");
        assert_eq!(
            try_lines(&base, (1, 20), &theirs, "line 1\n", "x\n"),
            Err(Refused::Uncovered)
        );
    }

    #[test]
    fn the_first_and_last_lines_seen_changed_are_told_in_place() {
        let base = numbered(60);
        let theirs = base
            .replace("line 10\n", "line ten\n")
            .replace("line 30\n", "line thirty\n");
        let m = try_lines(&base, (10, 30), &theirs, "line 20\n", "x\n").unwrap();
        assert_eq!(m.now, Some((10, 21)));
        let diff = told(&m, &theirs, "f");
        assert!(diff.contains("-line 10\n+line ten\n"), "{diff}");
        assert!(diff.contains("-line 30\n+line thirty\n"), "{diff}");
    }

    #[test]
    fn an_edit_whose_text_is_now_only_outside_the_lines_seen_is_refused() {
        let base = numbered(60);
        // "line 20" changed where the agent saw it, and put at the top:
        // found once now, but not among the lines seen.
        let theirs = format!("line 20\n{}", base.replace("line 20\n", "line 20 moved\n"));
        assert!(try_lines(&base, (10, 30), &theirs, "line 20\n", "x\n").is_err());
        // Likewise moved below them, with no copy left to find twice.
        let theirs = format!("{}line 20\n", base.replace("line 20\n", ""));
        assert!(try_lines(&base, (10, 30), &theirs, "line 20\n", "x\n").is_err());
        // Found twice now: the tool itself would fail.
        let theirs = format!("line 20\n{base}");
        assert_eq!(
            try_lines(&base, (10, 30), &theirs, "line 20\n", "x\n"),
            Err(Refused::Unapplied)
        );
    }

    #[test]
    fn a_copy_of_the_lines_seen_is_not_where_they_went() {
        // Lines 10-20 seen; then line 15 changed where it was, and the
        // lines seen copied below line 50: "line 15" is found once, in the
        // copy, which the agent never saw, while its own line 15 changed.
        let base = numbered(60);
        let all = lines(&base);
        let theirs = [
            all[..14].concat(),
            "line 15 CHANGED\n".to_string(),
            all[15..50].concat(),
            all[9..20].concat(),
            all[50..].concat(),
        ]
        .concat();
        assert_eq!(
            try_lines(&base, (10, 20), &theirs, "line 15\n", "line fifteen\n"),
            Err(Refused::Elsewhere)
        );
        // Moved far (100 lines above them) and whole: found there.
        let theirs = format!("{}{base}", numbered(100).replace("line", "new"));
        let m = try_lines(&base, (10, 20), &theirs, "line 15\n", "line fifteen\n").unwrap();
        assert_eq!(m.now, Some((110, 11)));
        // ...but not when they stand whole twice.
        let theirs = format!("{}{base}", all[9..20].concat());
        assert!(try_lines(&base, (10, 20), &theirs, "line 15\n", "line fifteen\n").is_err());
    }

    #[test]
    fn a_rewrite_of_every_line_of_a_long_file_is_refused() {
        // Each diff settles for a longer one after a while: 20,000 lines
        // re-indented took 35 s to refuse.
        let base: String = (0..20_000)
            .map(|i| format!("    let v{i} = f({i});\n"))
            .collect();
        let theirs = base.replace("    let", "\tlet");
        assert!(try_merge(&base, &theirs, "f(19999)", "f(0)").is_err());
    }

    #[test]
    fn a_last_line_seen_without_its_newline_is_the_files_end() {
        let base = "a\nb\nc\nd\ne\nf\ng\nh";
        let theirs = "A\nb\nc\nd\ne\nf\ng\nh";
        let m = try_lines(base, (4, 8), theirs, "h", "H").unwrap();
        assert_eq!(m.result, "A\nb\nc\nd\ne\nf\ng\nH");
        assert_eq!(told(&m, theirs, "f"), "");
    }

    #[test]
    fn lines_seen_are_found_where_they_are_now() {
        let base = numbered(60);
        let seen = slice(&base, 10, 17);
        // Where they were.
        assert_eq!(locate_seen(&seen, &base, 10), Some((9, 17)));
        // Moved by lines added far above (further than a window around
        // where they were would look).
        let header: String = (0..200).map(|i| format!("// {i}\n")).collect();
        let theirs = format!("{header}{base}");
        assert_eq!(locate_seen(&seen, &theirs, 10), Some((209, 217)));
        // Moved, and changed inside.
        let theirs = format!("a\nb\n{}", base.replace("line 13\n", "line 13!\n"));
        assert_eq!(locate_seen(&seen, &theirs, 10), Some((11, 19)));
        // Mostly gone: not found.
        let theirs: String = (1..=60).map(|i| format!("other {i}\n")).collect();
        assert_eq!(locate_seen(&seen, &theirs, 10), None);
    }

    #[test]
    fn lines_seen_that_start_with_common_lines_are_found_where_they_are() {
        // Functions end "}" and "": lines seen from the end of one, with a
        // line changed inside, are not taken to start at an earlier
        // function's end.
        let text: String = (0..40)
            .map(|j| format!("fn f{j}() {{\n    let y = x+{j};\n}}\n\n"))
            .collect();
        let seen = slice(&text, 47, 70); // from the "}" of f11
        let theirs = format!("// top\n{}", text.replace("x+13;", "x + 13;"));
        assert_eq!(locate_seen(&seen, &theirs, 47), Some((47, 71)));
        let m = try_lines(&text, (47, 70), &theirs, "x+16;", "x+16; // ok").unwrap();
        assert_eq!(m.now, Some((48, 24)));
        assert_eq!(
            told(&m, &theirs, "f"),
            "--- f\n+++ f\n@@ -52,7 +52,7 @@\n }\n \n fn f13() {\n-    let y = x+13;\n+    let y = x + 13;\n }\n \n fn f14() {\n"
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
