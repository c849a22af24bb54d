//! Where an anchored edit applies: the hunks of diffs, apply_patch envelopes and SEARCH/REPLACE blocks.
//!
//! A hunk is whole lines, so it matches only at a line start and ends at a line end (a last line
//! without a newline: at the end of the file). Of the places left, the hunk's own rules choose: the
//! start or end of the file, file order after the previous hunk, a line it must follow, and the
//! nearest to its stated line once the previous hunk's offset is carried over, as `patch` does. A
//! choice that would rest on a tie is refused, never guessed.

use std::borrow::Cow;

use super::changeset::{line_breaks, ChangeSet};
use super::hints;
use super::plan::Anchor;
use super::refusal::{Kind, Refusal};
use super::search::{find_starts, OriginalIndex, Touching};
use super::text::cap;
use super::tolerant::{self, Tier};

/// A hunk as the engine sees it: old and new text with the file's line endings, the old text as the
/// patch wrote it (for refusals), and its anchor.
pub struct Hunk<'t> {
    pub old: &'t str,
    pub new: &'t str,
    pub written: &'t str,
    pub anchor: &'t Anchor,
}

/// Where a hunk was placed.
#[derive(Debug, Clone, Copy)]
pub struct Placed {
    pub start: usize,
    pub end: usize,
    /// 1-based line of `start` in the text the earlier edits left.
    pub line: usize,
    /// Lines between where the hunk said it was and where it was found (0 when it said nothing).
    pub offset: isize,
    /// Matched the file's last line, which has no newline, without the newline the hunk gave it
    /// (`Anchor::eof_newline_optional`): the new text's final newline is dropped too.
    pub without_final_newline: bool,
    /// Lines added at the end of the file by a hunk that names no line they follow: the next hunk
    /// still starts looking where the previous one ended, as apply_patch does.
    pub appended: bool,
}

/// The state one file's anchored edits share: its line breaks, the offset found for the previous
/// hunk, and where that hunk ended.
pub struct Placer {
    breaks: Vec<usize>,
    offset: isize,
    prev_end: usize,
    /// A current offset and its line, valid until the text changes before it: hunks come mostly in
    /// file order, so the next line is counted from here, not from the start (`ChangeSet::line_of`
    /// costs O(replacements) per call, which made 1,000 hunks cost 1,000,000 steps).
    cursor: std::cell::Cell<Option<(usize, usize)>>,
}

type Search<'c, 'a, 'i, 't, 's, 'n> = (
    &'c ChangeSet<'a>,
    &'i mut OriginalIndex<'t>,
    Option<&'s Touching<'s, 'n>>,
);

impl Placer {
    pub fn new(text: &str) -> Placer {
        Placer {
            breaks: line_breaks(text),
            offset: 0,
            prev_end: 0,
            cursor: std::cell::Cell::new(None),
        }
    }

    /// Where `hunk` goes and the text it puts there: its exact place; else, under tolerant matching,
    /// the tolerant tiers' match if that keeps the hunk's rules. A miss carries the closest-text hint.
    pub fn locate<'t>(
        &self,
        search: Search<'_, '_, '_, '_, '_, '_>,
        hunk: &Hunk<'t>,
        tolerant: bool,
        file_has_bom: bool,
    ) -> Result<(Placed, Cow<'t, str>, Option<Tier>), Refusal> {
        let (cs, index, touching) = search;
        let a = hunk.anchor;
        if a.bom && !file_has_bom {
            let message = format!(
                "{} does not apply: it starts with a byte order mark, and the file has none.",
                cap(&a.label)
            );
            return Err(Refusal::new(Kind::NotFound, message));
        }
        let spacing = without_spacing(hunk.old, hunk.new, a);
        let mut tries: Vec<(&str, Cow<'t, str>)> = vec![(hunk.old, Cow::Borrowed(hunk.new))];
        if let Some((old, new)) = &spacing {
            tries.push((old, Cow::Owned(new.clone())));
        }
        let mut placed = Err(Refusal::new(Kind::NotFound, String::new()));
        for (k, (old, new)) in tries.iter().enumerate() {
            if old.is_empty() {
                return self.insert((cs, index, touching), new.clone(), a);
            }
            match self.place((cs, &mut *index, touching), old, a) {
                Ok(p) => {
                    placed = Ok((p, new.clone(), None));
                    break;
                }
                Err(r) if k == 0 => placed = Err(r),
                Err(_) => {}
            }
        }
        // Why the tolerant tiers found no certain place, for the hint.
        let mut tolerant_hint: Option<String> = None;
        if placed.is_err() && tolerant {
            match self.place_tolerant((cs, &mut *index, touching), &tries, hunk) {
                Ok(found) => placed = Ok(found),
                Err(hint) => tolerant_hint = hint,
            }
        }
        match placed {
            Ok((p, new, tier)) if p.without_final_newline => {
                let new = match new {
                    Cow::Borrowed(t) => Cow::Borrowed(t.strip_suffix('\n').unwrap_or(t)),
                    Cow::Owned(t) => Cow::Owned(t.strip_suffix('\n').unwrap_or(&t).to_string()),
                };
                Ok((p, new, tier))
            }
            Ok(found) => Ok(found),
            Err(r) if r.kind == Kind::NotFound => {
                let hint = tolerant_hint
                    .or_else(|| hints::not_found(&cs.current_text(), hunk.old, hunk.new));
                Err(r.with_hint(hint))
            }
            Err(r) => Err(r),
        }
    }

    /// The tolerant tiers' match of the first of `tries` (the hunk's old and new text, then the same
    /// without its spacing) that finds one certain place keeping the hunk's rules; else why none did,
    /// for the hint (`None`: nothing looked alike).
    fn place_tolerant<'t>(
        &self,
        search: Search<'_, '_, '_, '_, '_, '_>,
        tries: &[(&str, Cow<'t, str>)],
        hunk: &Hunk<'t>,
    ) -> Result<(Placed, Cow<'t, str>, Option<Tier>), Option<String>> {
        let (cs, index, touching) = search;
        let a = hunk.anchor;
        let mut tolerant_hint: Option<String> = None;
        let current = cs.current_text();
        // The file's last line has no newline and the format cannot say so: the hunk's lines
        // may end there without theirs, as an exact match may (`Placer::place`).
        let open_end = a.eof_newline_optional && !current.is_empty() && !current.ends_with('\n');
        for (old, new) in tries {
            let mut found = tolerant::find(&current, old, new, true);
            if let (tolerant::Found::None, true, Some(short)) =
                (&found, open_end, old.strip_suffix('\n'))
            {
                found = match tolerant::find(
                    &current,
                    short,
                    new.strip_suffix('\n').unwrap_or(new),
                    true,
                ) {
                    tolerant::Found::One(m) if m.end != current.len() => tolerant::Found::None,
                    other => other,
                };
            }
            match found {
                tolerant::Found::One(m) => {
                    if let Ok(p) =
                        self.check((cs, &mut *index, touching), m.start, m.end, a, hunk.written)
                    {
                        return Ok((p, Cow::Owned(m.new_text), Some(m.tier)));
                    }
                }
                tolerant::Found::Unsure { tier, lines, why } => {
                    tolerant_hint.get_or_insert_with(|| hints::tolerant_unsure(tier, lines, &why));
                }
                tolerant::Found::Several { tier, lines } => {
                    tolerant_hint.get_or_insert_with(|| hints::tolerant_matches(tier, &lines));
                }
                tolerant::Found::None => {}
            }
        }
        Err(tolerant_hint)
    }

    /// A hunk that only adds lines (apply_patch's `@@` followed by '+' lines): right after the line
    /// its `@@ <line>` names, else at the end of the file (also when it ends with `*** End of File`).
    /// A last line without a newline gets one before the added lines, which then end without one,
    /// so the file keeps its last line as it was.
    fn insert<'t>(
        &self,
        search: Search<'_, '_, '_, '_, '_, '_>,
        new: Cow<'t, str>,
        a: &Anchor,
    ) -> Result<(Placed, Cow<'t, str>, Option<Tier>), Refusal> {
        let (cs, index, touching) = search;
        let floor = self.floor(cs, index, touching, a)?;
        let len = cs.current_len();
        let after_line = a.after.as_deref().is_some_and(|t| !t.trim().is_empty()) && !a.at_end;
        let at = if after_line { floor } else { len };
        let text = if at == len && len > 0 && cs.byte(len - 1) != Some(b'\n') {
            Cow::Owned(format!("\n{}", new.strip_suffix('\n').unwrap_or(&new)))
        } else {
            new
        };
        let placed = Placed {
            start: at,
            end: at,
            line: self.line(cs, at),
            offset: 0,
            without_final_newline: false,
            appended: !after_line,
        };
        Ok((placed, text, None))
    }

    /// Finds the one place for `needle` (the hunk's old text, line endings as the file's view has
    /// them) or says why there is none.
    pub fn place(
        &self,
        search: Search<'_, '_, '_, '_, '_, '_>,
        needle: &str,
        a: &Anchor,
    ) -> Result<Placed, Refusal> {
        let (cs, index, touching) = search;
        let starts = find_starts(cs, index, touching, needle);
        let floor = self.floor(cs, index, touching, a)?;
        let placed = self.choose(
            cs,
            &starts,
            needle.len(),
            needle.ends_with('\n'),
            floor,
            a,
            needle,
        );
        let len = cs.current_len();
        if placed.is_ok() || !a.eof_newline_optional || len == 0 || cs.byte(len - 1) == Some(b'\n')
        {
            return placed;
        }
        let Some(short) = needle.strip_suffix('\n') else {
            return placed;
        };
        let at_end: Vec<usize> = find_starts(cs, index, touching, short)
            .into_iter()
            .filter(|&s| s + short.len() == len)
            .collect();
        match self.choose(cs, &at_end, short.len(), true, floor, a, needle) {
            Ok(p) => Ok(Placed {
                without_final_newline: true,
                ..p
            }),
            Err(_) => placed,
        }
    }

    /// Whether a place found another way (the tolerant tiers) keeps the hunk's rules.
    pub fn check(
        &self,
        search: Search<'_, '_, '_, '_, '_, '_>,
        start: usize,
        end: usize,
        a: &Anchor,
        old: &str,
    ) -> Result<Placed, Refusal> {
        let (cs, index, touching) = search;
        let floor = self.floor(cs, index, touching, a)?;
        let ends_line = end == cs.current_len() || cs.byte(end - 1) == Some(b'\n');
        self.choose(cs, &[start], end - start, ends_line, floor, a, old)
    }

    /// Records the hunk just applied at `p`, with its new text.
    pub fn applied(&mut self, p: &Placed, new_text: &str) {
        if p.appended {
            self.cursor.set(None);
            return;
        }
        self.offset = p.offset;
        self.prev_end = p.start + new_text.len();
        let lines = memchr::memchr_iter(b'\n', new_text.as_bytes()).count();
        self.cursor.set(Some((self.prev_end, p.line + lines)));
    }

    /// The text changed by other means (a plan edit among the hunks): the cursor no longer holds.
    pub fn changed(&self) {
        self.cursor.set(None);
    }

    /// The first offset the hunk may start at: after the previous hunk (`forward`), after the line it
    /// names (`after`).
    fn floor(
        &self,
        cs: &ChangeSet<'_>,
        index: &mut OriginalIndex<'_>,
        touching: Option<&Touching>,
        a: &Anchor,
    ) -> Result<usize, Refusal> {
        let mut floor = if a.forward { self.prev_end } else { 0 };
        if let Some(after) = a.after.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let line = find_starts(cs, index, touching, after)
                .into_iter()
                .filter(|&q| q >= floor)
                .find_map(|q| whole_line(cs, q, q + after.len()));
            match line {
                Some(end) => floor = end,
                None => {
                    let from = if floor == 0 {
                        String::new()
                    } else {
                        format!(" after line {}", self.line(cs, floor))
                    };
                    return Err(Refusal::new(
                        Kind::NotFound,
                        format!("{} does not apply: the file has no line \"{after}\"{from}, the line the hunk says it follows.", cap(&a.label)),
                    ));
                }
            }
        }
        Ok(floor)
    }

    /// The one place among `starts` (matches `m` bytes long; `ends_line`: the match ends a line) that
    /// keeps the hunk's rules, after `floor`: file order takes the first, else the one nearest its
    /// stated line (`nearest`). `old`: the hunk's lines, for the refusal.
    // The hunk's rules and the matches come from different places (the placer's state, the search, the
    // hunk): a struct gathering them would only rename them for this one call.
    #[allow(clippy::too_many_arguments)]
    fn choose(
        &self,
        cs: &ChangeSet<'_>,
        starts: &[usize],
        m: usize,
        ends_line: bool,
        floor: usize,
        a: &Anchor,
        old: &str,
    ) -> Result<Placed, Refusal> {
        let c = self
            .allowed(cs, starts, m, ends_line, floor, a)
            .map_err(|why| does_not_apply(a, &why, old))?;
        let placed = |s: usize, stated: Option<usize>| {
            let line = self.line(cs, s);
            Placed {
                start: s,
                end: s + m,
                line,
                offset: stated.map_or(0, |l| line as isize - l as isize),
                without_final_newline: false,
                appended: false,
            }
        };
        if a.forward {
            return Ok(placed(c[0], a.line));
        }
        match a.line {
            None if c.len() == 1 => Ok(placed(c[0], None)),
            None => Err(Refusal::new(
                Kind::Ambiguous,
                format!(
                    "{} matches {} places (lines {}): add lines around the change so that it matches one place.\nLines:\n{old}",
                    cap(&a.label),
                    c.len(),
                    self.lines(cs, &c)
                ),
            )),
            Some(stated) => Ok(placed(self.nearest(cs, &c, stated, a, old)?, Some(stated))),
        }
    }

    /// The starts among `starts` that keep the hunk's rules, each rule in turn: whole lines, the start
    /// of the file, its end, not before `floor`. `Err`: why none does, from the rule that left none.
    fn allowed(
        &self,
        cs: &ChangeSet<'_>,
        starts: &[usize],
        m: usize,
        ends_line: bool,
        floor: usize,
        a: &Anchor,
    ) -> Result<Vec<usize>, String> {
        let len = cs.current_len();
        let mut c: Vec<usize> = starts.to_vec();
        let mut why: Option<String> = None;
        let mut keep = |c: &mut Vec<usize>,
                        ok: &dyn Fn(usize) -> bool,
                        reason: &dyn Fn(&[usize]) -> String| {
            if why.is_none() && !c.is_empty() {
                let before = c.clone();
                c.retain(|&s| ok(s));
                if c.is_empty() {
                    why = Some(reason(&before));
                }
            }
        };
        let lines = |v: &[usize]| self.lines(cs, v);
        keep(
            &mut c,
            &|s| (s == 0 || cs.byte(s - 1) == Some(b'\n')) && (ends_line || s + m == len),
            &|v| {
                format!(
                    "its text occurs only as part of longer lines (line {})",
                    lines(v)
                )
            },
        );
        if a.at_start {
            keep(&mut c, &|s| s == 0, &|v| {
                format!(
                    "its lines are at line {}, but the hunk starts at the start of the file",
                    lines(v)
                )
            });
        }
        if a.at_end {
            keep(&mut c, &|s| s + m == len, &|v| {
                format!(
                    "its lines are at line {}, but the hunk ends at the end of the file",
                    lines(v)
                )
            });
        }
        if floor > 0 {
            let at = self.line(cs, floor);
            keep(&mut c, &|s| s >= floor, &|v| {
                format!("its lines are at line {}, before line {at} where the previous hunk (or the line it follows) leaves off; hunks go in file order", lines(v))
            });
        }
        if c.is_empty() {
            return Err(why.unwrap_or_else(|| "its lines are not in the file".into()));
        }
        Ok(c)
    }

    /// Of the places `c`, the one nearest the line `stated`, moved by the previous hunk's offset as
    /// `patch` does; refused past the anchor's reach, and on a tie.
    fn nearest(
        &self,
        cs: &ChangeSet<'_>,
        c: &[usize],
        stated: usize,
        a: &Anchor,
        old: &str,
    ) -> Result<usize, Refusal> {
        let expected = stated as isize + self.offset;
        let mut best: Vec<(isize, usize)> = c
            .iter()
            .map(|&s| ((self.line(cs, s) as isize - expected).abs(), s))
            .collect();
        best.sort_unstable();
        if let Some(reach) = a.reach.filter(|&r| best[0].0 > r as isize) {
            let what = format!(
                "its lines are at line {}, {} lines from line {expected} where its start line puts them, and a block is \
                 looked for within {reach} lines of its start line: correct the start line",
                self.lines(cs, &best.iter().map(|b| b.1).collect::<Vec<_>>()),
                best[0].0
            );
            return Err(does_not_apply(a, &what, old));
        }
        if best.len() > 1 && best[0].0 == best[1].0 {
            return Err(Refusal::new(
                Kind::Ambiguous,
                format!(
                    "{} matches lines {} and {}, both {} lines from line {expected} where it is expected: add \
                     context lines to the hunk so that it matches one place.\nLines:\n{old}",
                    cap(&a.label),
                    self.line(cs, best[0].1.min(best[1].1)),
                    self.line(cs, best[0].1.max(best[1].1)),
                    best[0].0
                ),
            ));
        }
        Ok(best[0].1)
    }

    /// The lines of the places `v`, the first five and how many more: "3, 17 and 2 more".
    fn lines(&self, cs: &ChangeSet<'_>, v: &[usize]) -> String {
        let l: Vec<String> = v
            .iter()
            .take(5)
            .map(|&s| self.line(cs, s).to_string())
            .collect();
        let more = if v.len() > 5 {
            format!(" and {} more", v.len() - 5)
        } else {
            String::new()
        };
        format!("{}{more}", l.join(", "))
    }

    fn line(&self, cs: &ChangeSet<'_>, p: usize) -> usize {
        let line = match self.cursor.get() {
            Some((at, line)) if at <= p => line + cs.newlines_between(at, p),
            _ => cs.line_of(p, &self.breaks),
        };
        self.cursor.set(Some((p, line)));
        line
    }
}

/// A hunk refused as not found: `what` keeps it from applying; its lines `old` are shown.
fn does_not_apply(a: &Anchor, what: &str, old: &str) -> Refusal {
    Refusal::new(
        Kind::NotFound,
        format!("{} does not apply: {what}.\nLines:\n{old}", cap(&a.label)),
    )
}

/// The hunk without the blank line a model adds as spacing, tried when the hunk as written is not in
/// the file: an apply_patch hunk's empty last line (a blank line before `*** End Patch` or the next
/// section, which apply_patch also retries without), and the blank first line of a SEARCH that has at
/// least two more (a hunk placed by its text alone; Aider drops it the same way). The new text loses
/// the same blank line where it has it too, so the file keeps its own spacing.
fn without_spacing(old: &str, new: &str, a: &Anchor) -> Option<(String, String)> {
    let blank = |l: &str| l.trim().is_empty();
    if a.forward {
        let old = old.strip_suffix('\n')?;
        if !(old.is_empty() || old.ends_with('\n')) {
            return None;
        }
        let new = if new.ends_with("\n\n") {
            &new[..new.len() - 1]
        } else {
            new
        };
        return Some((old.to_string(), new.to_string()));
    }
    if a.line.is_some() || a.at_start || a.at_end {
        return None;
    }
    let (first, rest) = old.split_once('\n')?;
    if !blank(first) || rest.trim_end_matches('\n').lines().count() < 2 {
        return None;
    }
    let new = match new.split_once('\n') {
        Some((f, r)) if blank(f) => r,
        _ => new,
    };
    Some((rest.to_string(), new.to_string()))
}

/// If `[q, e)` is a whole line but for blanks around it, the offset just past that line's end.
fn whole_line(cs: &ChangeSet<'_>, q: usize, e: usize) -> Option<usize> {
    let blank = |b: u8| b == b' ' || b == b'\t';
    let mut s = q;
    while s > 0 {
        match cs.byte(s - 1) {
            Some(b'\n') => break,
            Some(b) if blank(b) => s -= 1,
            _ => return None,
        }
    }
    let mut p = e;
    loop {
        match cs.byte(p) {
            None => return Some(p),
            Some(b'\n') => return Some(p + 1),
            Some(b) if blank(b) || b == b'\r' => p += 1,
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_counts_lines_through_replacements() {
        let orig = "a\nb\nc\nd\n";
        let mut cs = ChangeSet::new(orig);
        let breaks = line_breaks(orig);
        cs.apply(&[(2, 4)], "x\ny\nz\n");
        // current: a\nx\ny\nz\nc\nd\n
        let current = cs.current_text();
        for p in 0..current.len() {
            let want = current[..p].matches('\n').count() + 1;
            assert_eq!(cs.line_of(p, &breaks), want, "offset {p} of {current:?}");
            assert_eq!(cs.byte(p), Some(current.as_bytes()[p]));
            for q in p..=current.len() {
                assert_eq!(
                    cs.newlines_between(p, q),
                    current[p..q].matches('\n').count(),
                    "[{p}, {q}) of {current:?}"
                );
            }
        }
    }
}
