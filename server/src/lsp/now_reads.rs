//! What the editor made of an applied plan: its text compared with the text the plan made, once it
//! answered `applied: true`, and the edited lines as they now read.
//!
//! An editor may change the edit on its way in (the VS Code extension runs the user's formatter on the
//! touched lines; a review may leave edits out). The caller's next `old_string` must match the
//! editor's text, not the plan's, so the result names the lines the plan touched as they read now:
//! each replacement's lines in the plan's text, carried through a line diff of the plan's text to the
//! editor's and widened to every changed run of lines they overlap or touch. The same diff maps the
//! diagnostics the editor had before the edit into its text (`diagnostics.rs`).

use std::ops::Range;
use std::time::{Duration, Instant};

use ropey::Rope;
use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};

use crate::engine::{self, Replacement};
use crate::result::EditedLines;

/// A diff that takes longer is cut short by `similar` (still a correct diff, only coarser).
const DIFF_BUDGET: Duration = Duration::from_millis(200);

const BOM: char = '\u{feff}';

/// One edited file whose text in the editor is not the plan's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EditorText {
    /// The document's text once the editor applied the plan.
    pub(crate) text: String,
    /// The replacements (byte offsets in the plan's text) that turn the plan's text into `text`.
    pub(crate) changes: Vec<Replacement>,
    /// The lines the plan touched, as they now read (0-based, inclusive), only where the editor
    /// changed something on or next to them.
    regions: Vec<(usize, usize)>,
}

/// A line without its `\n` or `\r\n`.
fn without_break(line: &str) -> &str {
    match line.strip_suffix('\n') {
        Some(l) => l.strip_suffix('\r').unwrap_or(l),
        None => line,
    }
}

/// A run of lines the editor changed: `old` lines of the plan's text became `new` lines of its own
/// (0-based, half-open; either may be empty).
#[derive(Debug, Clone, PartialEq)]
struct Hunk {
    old: Range<usize>,
    new: Range<usize>,
}

/// The byte offset where each line starts, and the text's length last: line `i` is
/// `starts[i]..starts[i + 1]`, its line break included. (The engine's list ends instead with the
/// start of the empty line after a final break, which is the text's length then.)
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = engine::line_starts(text);
    if starts.last() != Some(&text.len()) {
        starts.push(text.len());
    }
    starts
}

/// The 0-based line holding byte `offset` (a text's end: its last line; 0 for an empty text).
fn line_of(starts: &[usize], offset: usize) -> usize {
    let lines = starts.len() - 1;
    engine::line_of(starts, offset)
        .saturating_sub(1)
        .min(lines.saturating_sub(1))
}

/// The line diff of `old` to `new` (line breaks count), as the runs that differ.
fn line_hunks(old: &str, new: &str) -> Vec<Hunk> {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    // Only the middle is diffed: an editor's change is small next to the file.
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let ops = capture_diff_slices_deadline(
        Algorithm::Myers,
        &a[head..a.len() - tail],
        &b[head..b.len() - tail],
        Some(Instant::now() + DIFF_BUDGET),
    );
    ops.into_iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| {
            let (old, new) = (op.old_range(), op.new_range());
            Hunk {
                old: old.start + head..old.end + head,
                new: new.start + head..new.end + head,
            }
        })
        .collect()
}

/// The lines of `now` that differ from `before` (a document the user typed in), as 1-based first and
/// last line and their text: the changed run nearest to byte `near` of `before` (else the first one).
/// `None` when the texts have the same lines.
pub(crate) fn changed_lines(
    before: &str,
    now: &str,
    near: Option<usize>,
) -> Option<(usize, usize, String)> {
    let hunks = line_hunks(before, now);
    let at = near.map(|n| line_of(&line_starts(before), n));
    let distance = |h: &Hunk| {
        at.map_or(0, |l| {
            if h.old.contains(&l) {
                0
            } else {
                h.old.start.abs_diff(l).min(h.old.end.abs_diff(l))
            }
        })
    };
    let hunk = hunks
        .iter()
        .filter(|h| !h.new.is_empty())
        .min_by_key(|h| distance(h))?;
    let lines: Vec<&str> = now.split_inclusive('\n').collect();
    let text = lines[hunk.new.clone()]
        .iter()
        .map(|l| without_break(l))
        .collect::<Vec<_>>()
        .join("\n");
    Some((hunk.new.start + 1, hunk.new.end, text))
}

impl EditorText {
    /// The editor's text `now` of a file, read once it answered and its didChange arrived: `None` when
    /// it is the text the plan made (`plan`, from the engine's `replacements` of `before`), or still
    /// the text before the plan (not updated yet: nothing to compare).
    pub(crate) fn compare(
        now: &Rope,
        plan: &str,
        before: Option<&str>,
        replacements: &[Replacement],
    ) -> Option<EditorText> {
        if *now == plan {
            return None;
        }
        let now = now.to_string();
        // Editors show a file without its byte order mark; the plan's text from disk keeps it.
        let unmarked = |t: &str| {
            if now.starts_with(BOM) {
                t.to_string()
            } else {
                t.strip_prefix(BOM).unwrap_or(t).to_string()
            }
        };
        if now == unmarked(plan) || before.is_some_and(|b| now == unmarked(b)) {
            return None;
        }
        Some(EditorText::new(plan, now, replacements))
    }

    /// The regions as the result gives them, 1-based.
    pub(crate) fn now_reads(&self, file_path: &str) -> Vec<EditedLines> {
        let lines: Vec<&str> = self.text.split_inclusive('\n').collect();
        self.regions
            .iter()
            .map(|&(first, last)| EditedLines {
                file_path: file_path.to_string(),
                first_line: first + 1,
                last_line: last + 1,
                text: lines[first..=last]
                    .iter()
                    .map(|l| without_break(l))
                    .collect::<Vec<_>>()
                    .join("\n"),
            })
            .collect()
    }

    /// `plan`: the text the plan made, from the engine's `replacements` of the text before it; `now`:
    /// the editor's.
    fn new(plan: &str, now: String, replacements: &[Replacement]) -> EditorText {
        let bom = if plan.starts_with(BOM) && !now.starts_with(BOM) {
            BOM.len_utf8()
        } else {
            0
        };
        let hunks = line_hunks(&plan[bom..], &now);
        let (old_starts, new_starts) = (line_starts(&plan[bom..]), line_starts(&now));
        let mut changes: Vec<Replacement> = Vec::with_capacity(hunks.len() + 1);
        if bom > 0 {
            changes.push(Replacement {
                start: 0,
                end: bom,
                text: String::new(),
            });
        }
        changes.extend(hunks.iter().map(|h| Replacement {
            start: old_starts[h.old.start] + bom,
            end: old_starts[h.old.end] + bom,
            text: now[new_starts[h.new.start]..new_starts[h.new.end]].to_string(),
        }));
        let touched =
            plan_spans(replacements).map(|(s, e)| (s.saturating_sub(bom), e.saturating_sub(bom)));
        let spans = touched.map(|(s, e)| {
            (
                line_of(&old_starts, s),
                line_of(&old_starts, e.max(s + 1) - 1),
            )
        });
        let regions = regions(spans, &hunks, new_starts.len() - 1);
        EditorText {
            text: now,
            changes,
            regions,
        }
    }
}

/// Each replacement's span in the text the replacements make (byte offsets; empty for a deletion).
fn plan_spans(replacements: &[Replacement]) -> impl Iterator<Item = (usize, usize)> + '_ {
    replacements.iter().scan(0isize, |shift, r| {
        let start = (r.start as isize + *shift) as usize;
        *shift += r.text.len() as isize - (r.end - r.start) as isize;
        Some((start, start + r.text.len()))
    })
}

/// The plan's line spans (`first..=last` of its text) as they read in the editor's text of `lines`
/// lines: each widened to the hunks it overlaps or touches, carried over, kept only if a hunk changed
/// it, then merged where they overlap or meet.
fn regions(
    spans: impl Iterator<Item = (usize, usize)>,
    hunks: &[Hunk],
    lines: usize,
) -> Vec<(usize, usize)> {
    // An unchanged line's place in the editor's text: moved by every hunk wholly before it.
    let carried = |line: usize| -> isize {
        let moved: isize = hunks
            .iter()
            .filter(|h| h.old.end <= line)
            .map(|h| h.new.len() as isize - h.old.len() as isize)
            .sum();
        line as isize + moved
    };
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (mut first, mut last) in spans {
        let mut taken = vec![false; hunks.len()];
        // Widening can make a span meet one more hunk: until nothing changes.
        loop {
            let mut grew = false;
            for (h, taken) in hunks.iter().zip(&mut taken) {
                if !*taken && h.old.start <= last + 1 && h.old.end >= first {
                    *taken = true;
                    grew = true;
                    first = first.min(h.old.start);
                    last = last.max(h.old.end.max(h.old.start + 1) - 1);
                }
            }
            if !grew {
                break;
            }
        }
        let within = |line: usize| {
            hunks
                .iter()
                .zip(&taken)
                .any(|(h, t)| *t && h.old.contains(&line))
        };
        let ends = hunks
            .iter()
            .zip(&taken)
            .filter(|(_, t)| **t)
            .map(|(h, _)| (h.new.start as isize, h.new.end as isize - 1));
        let (mut to_first, mut to_last) = (isize::MAX, isize::MIN);
        for (s, e) in ends {
            (to_first, to_last) = (to_first.min(s), to_last.max(e));
        }
        if to_first == isize::MAX || lines == 0 {
            continue;
        }
        if !within(first) {
            to_first = to_first.min(carried(first));
        }
        if !within(last) {
            to_last = to_last.max(carried(last));
        }
        // What the editor removed entirely reads as the line now in its place.
        let to_first = (to_first.max(0) as usize).min(lines - 1);
        let to_last = (to_last.max(to_first as isize) as usize).min(lines - 1);
        out.push((to_first, to_last));
    }
    out.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(out.len());
    for (first, last) in out {
        match merged.last_mut() {
            Some(prev) if first <= prev.1 + 1 => prev.1 = prev.1.max(last),
            _ => merged.push((first, last)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(start: usize, end: usize, text: &str) -> Replacement {
        Replacement {
            start,
            end,
            text: text.into(),
        }
    }

    /// The plan's text from `before`, and the regions of the editor's `now`, 1-based.
    fn read(
        before: &str,
        reps: &[Replacement],
        now: &str,
    ) -> (String, Vec<(usize, usize, String)>) {
        let mut plan = before.to_string();
        for r in reps.iter().rev() {
            plan.replace_range(r.start..r.end, &r.text);
        }
        let e = EditorText::new(&plan, now.to_string(), reps);
        let mut text = plan.clone();
        for c in e.changes.iter().rev() {
            text.replace_range(c.start..c.end, &c.text);
        }
        assert_eq!(
            text, now,
            "the changes turn the plan's text into the editor's"
        );
        let lines: Vec<&str> = now.lines().collect();
        (
            plan,
            e.regions
                .iter()
                .map(|&(f, l)| (f + 1, l + 1, lines[f..=l].join("\n")))
                .collect(),
        )
    }

    #[test]
    fn a_reformatted_line_reads_as_the_formatter_left_it() {
        let before = "a\nx=1\nb\n";
        let (plan, regions) = read(before, &[rep(2, 5, "x=2")], "a\nx = 2\nb\n");
        assert_eq!(plan, "a\nx=2\nb\n");
        assert_eq!(regions, [(2, 2, "x = 2".to_string())]);
    }

    #[test]
    fn a_region_widens_to_the_changes_it_touches_and_keeps_to_those() {
        // The plan adds two lines after `f() {`; the formatter re-indents them and the line after them,
        // and, far away, a line the plan did not touch.
        let before = "f() {\nreturn;\n}\n\n\nfar=1\n";
        let now = "f() {\n  a;\n  b;\n  return;\n}\n\n\nfar = 1\n";
        let (_, regions) = read(before, &[rep(6, 6, "a;\nb;\n")], now);
        assert_eq!(
            regions,
            [(2, 4, "  a;\n  b;\n  return;".to_string())],
            "the far line is not the plan's"
        );
        // A change that only moves the touched lines: reported nowhere.
        let (_, regions) = read("x\ny\n", &[rep(2, 3, "z")], "top\nx\nz\n");
        assert_eq!(regions, []);
    }

    #[test]
    fn lines_the_formatter_split_or_joined_are_all_given() {
        let (_, regions) = read(
            "a\nb\n",
            &[rep(0, 1, "call(x,y)")],
            "call(\n  x,\n  y)\nb\n",
        );
        assert_eq!(regions, [(1, 3, "call(\n  x,\n  y)".to_string())]);
        let (_, regions) = read("a\nb\nc\n", &[rep(2, 3, "(\nb\n)")], "a\n(b)\nc\n");
        assert_eq!(regions, [(2, 2, "(b)".to_string())]);
    }

    #[test]
    fn regions_that_meet_once_carried_over_are_one() {
        let before = "a\nb\nc\nd\n";
        let (_, regions) = read(
            before,
            &[rep(0, 1, "A=1"), rep(4, 5, "C=1")],
            "A = 1\nb = 0\nC = 1\nd\n",
        );
        assert_eq!(regions, [(1, 3, "A = 1\nb = 0\nC = 1".to_string())]);
    }

    #[test]
    fn what_the_editor_removed_reads_as_the_line_in_its_place() {
        let (_, regions) = read("a\nb\nc\n", &[rep(2, 3, "x")], "a\nc\n");
        assert_eq!(regions, [(2, 2, "c".to_string())]);
        let (_, regions) = read("a\n", &[rep(0, 1, "x")], "");
        assert_eq!(regions, []);
    }

    #[test]
    fn the_end_of_the_file_and_its_line_breaks() {
        // The plan appends a line without a final break; the editor adds one.
        let (_, regions) = read("a\n", &[rep(2, 2, "b")], "a\nb\n");
        assert_eq!(regions, [(2, 2, "b".to_string())]);
        // CRLF kept: the text has no `\r`.
        let (_, regions) = read(
            "a\r\nb\r\nc\r\n",
            &[rep(3, 4, "x=1")],
            "a\r\nx = 1\r\nc\r\n",
        );
        assert_eq!(regions, [(2, 2, "x = 1".to_string())]);
    }

    #[test]
    fn a_byte_order_mark_the_editor_hides_is_no_change() {
        let plan = "\u{feff}a\nx=1\n";
        let e = EditorText::new(plan, "a\nx = 1\n".into(), &[rep(5, 8, "x=1")]);
        assert_eq!(e.regions, [(1, 1)]);
        assert_eq!(e.changes[0], rep(0, 3, ""));
    }
}
