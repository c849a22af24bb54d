//! Finding an edit's matches in the current text without rescanning the whole file for every edit.
//!
//! Every needle of a plan is located once in the original text (one memmem pass per needle for small
//! plans, one Aho-Corasick pass for all of them in large plans). An edit's matches are then the original
//! occurrences that later edits left intact, plus whatever a scan of the small windows around changed
//! text finds. Both sets together, taken leftmost-first without overlap, are exactly what a scan of
//! the materialised current text would return.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, MatchKind};
use memchr::memmem;

use super::changeset::ChangeSet;
use super::grams::{self, GramIndex};

/// From this many distinct needles on, one pass for all of them beats one memmem pass per needle, and
/// occurrences touching changed text are recorded when the change is made (`Touching`) rather than
/// found by rescanning every changed place for every later edit.
pub const MANY_NEEDLES: usize = 16;

/// Pathological needle sets ("a", "aa", "aaa"... on "aaaa...") have quadratically many overlapping
/// occurrences; past this many per byte scanned, the one-pass search gives up for short needles.
const OVERLAP_BUDGET_PER_BYTE: usize = 8;

/// The distinct needles of a large plan, ready for one-pass scans of a text or of a window: long ones
/// through a gram table, short ones through Aho-Corasick.
pub struct NeedleSet<'n> {
    ids: HashMap<&'n str, usize>,
    long: Option<(GramIndex<'n>, Vec<usize>)>,
    short: Option<(AhoCorasick, Vec<usize>)>,
    short_count: usize,
    lens: Vec<usize>,
    max_len: usize,
}

impl<'n> NeedleSet<'n> {
    /// `None` for plans with fewer than `MANY_NEEDLES` distinct needles.
    pub fn new(needles: &[&'n str]) -> Option<Self> {
        let mut distinct: Vec<&'n str> =
            needles.iter().copied().filter(|n| !n.is_empty()).collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < MANY_NEEDLES {
            return None;
        }
        let ids = distinct.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let (long_ids, short_ids): (Vec<usize>, Vec<usize>) =
            (0..distinct.len()).partition(|&i| distinct[i].len() >= grams::MIN_LEN);
        let long = (!long_ids.is_empty()).then(|| {
            (
                GramIndex::new(long_ids.iter().map(|&i| distinct[i].as_bytes()).collect()),
                long_ids,
            )
        });
        let short_count = short_ids.len();
        let short = if short_ids.is_empty() {
            None
        } else {
            let patterns: Vec<&str> = short_ids.iter().map(|&i| distinct[i]).collect();
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .build(&patterns)
                .ok()?;
            Some((ac, short_ids))
        };
        let lens: Vec<usize> = distinct.iter().map(|n| n.len()).collect();
        let max_len = lens.iter().copied().max().unwrap_or(1);
        Some(NeedleSet {
            ids,
            long,
            short,
            short_count,
            lens,
            max_len,
        })
    }

    fn id(&self, needle: &str) -> Option<usize> {
        self.ids.get(needle).copied()
    }

    fn len(&self) -> usize {
        self.ids.len()
    }

    fn scan_long(&self, text: &str, mut found: impl FnMut(usize, usize)) {
        if let Some((index, ids)) = &self.long {
            index.scan(text.as_bytes(), |local, s| found(ids[local], s));
        }
    }

    /// Like `scan_long` for the short needles; false if the occurrences ran past `budget`.
    fn scan_short(&self, text: &str, budget: usize, mut found: impl FnMut(usize, usize)) -> bool {
        let Some((ac, ids)) = &self.short else {
            return true;
        };
        for (n, m) in ac.find_overlapping_iter(text).enumerate() {
            if n >= budget {
                return false;
            }
            found(ids[m.pattern().as_usize()], m.start());
        }
        true
    }
}

/// Start offsets of every occurrence of each needle in the original text, overlapping ones included.
pub struct OriginalIndex<'a> {
    text: &'a str,
    found: HashMap<String, Vec<usize>>,
}

impl<'a> OriginalIndex<'a> {
    pub fn new(text: &'a str, set: Option<&NeedleSet<'_>>) -> Self {
        let mut index = OriginalIndex {
            text,
            found: HashMap::new(),
        };
        if let Some(set) = set.filter(|_| !text.is_empty()) {
            let mut lists: Vec<Vec<usize>> = vec![Vec::new(); set.len()];
            let mut complete = vec![false; set.len()];
            set.scan_long(text, |id, s| lists[id].push(s));
            if let Some((_, ids)) = &set.long {
                ids.iter().for_each(|&i| complete[i] = true);
            }
            // A few short needles are cheaper found one by one, on demand.
            if set.short_count >= MANY_NEEDLES {
                let mut short_lists: Vec<(usize, usize)> = Vec::new();
                let budget = OVERLAP_BUDGET_PER_BYTE * text.len() + 1_000_000;
                if set.scan_short(text, budget, |id, s| short_lists.push((id, s))) {
                    for (id, s) in short_lists {
                        lists[id].push(s);
                    }
                    if let Some((_, ids)) = &set.short {
                        ids.iter().for_each(|&i| complete[i] = true);
                    }
                }
            }
            for (needle, &id) in &set.ids {
                if complete[id] {
                    let mut list = std::mem::take(&mut lists[id]);
                    list.sort_unstable();
                    index.found.insert((*needle).to_string(), list);
                }
            }
        }
        index
    }

    pub fn occurrences(&mut self, needle: &str) -> &[usize] {
        let text = self.text;
        self.found
            .entry(needle.to_string())
            .or_insert_with(|| starts_of(text, needle))
    }
}

/// Needles longer than this are looked for by their first bytes, each hit then compared whole: a
/// memmem finder costs O(needle) to build, and for a hunk of a few hundred bytes that was a fifth of
/// a whole `multiedit apply --dry-run` of a typical commit.
const PREFIX: usize = 32;

/// Every start of `needle` in `hay`, overlapping occurrences included.
fn starts_of(hay: &str, needle: &str) -> Vec<usize> {
    Starts::new(needle).in_text(hay)
}

/// A needle ready to be looked for, by its prefix when it is long (`PREFIX`).
struct Starts<'n> {
    needle: &'n str,
    finder: memmem::Finder<'n>,
    prefixed: bool,
}

impl<'n> Starts<'n> {
    fn new(needle: &'n str) -> Self {
        let cut = (PREFIX..needle.len())
            .find(|&c| needle.is_char_boundary(c))
            .unwrap_or(needle.len());
        Starts {
            needle,
            finder: memmem::Finder::new(&needle[..cut]),
            prefixed: cut < needle.len(),
        }
    }

    fn in_text(&self, hay: &str) -> Vec<usize> {
        let hits = overlapping(hay, self.needle, &self.finder);
        if !self.prefixed {
            return hits;
        }
        // A prefix found nearly everywhere (a run of one repeated byte) would make the comparisons
        // quadratic: the whole needle's finder is linear.
        if hits.len().saturating_mul(self.needle.len()) > 4 * hay.len() + 4096 {
            return overlapping(hay, self.needle, &memmem::Finder::new(self.needle));
        }
        let bytes = hay.as_bytes();
        hits.into_iter()
            .filter(|&s| bytes[s..].starts_with(self.needle.as_bytes()))
            .collect()
    }
}

/// Every start of `needle` in `hay`, overlapping occurrences included.
fn overlapping(hay: &str, needle: &str, finder: &memmem::Finder<'_>) -> Vec<usize> {
    let mut out = Vec::new();
    if needle.is_empty() {
        return out;
    }
    let bytes = hay.as_bytes();
    let mut pos = 0;
    while let Some(i) = finder.find(&bytes[pos..]) {
        out.push(pos + i);
        // The next occurrence can only start on a char boundary; step one char, not one byte.
        pos += i + hay[pos + i..].chars().next().map_or(1, char::len_utf8);
        if pos >= bytes.len() {
            break;
        }
    }
    out
}

/// Past this many recorded candidates the tracker gives up and the window scan takes over.
const TOUCHING_BUDGET: usize = 4_000_000;

/// Occurrences of the plan's needles that touch changed text, recorded when each replacement is made.
///
/// Why this finds everything: take an occurrence that touches changed text when edit `j` runs, and the
/// most recently made replacement it touches. Nothing in the occurrence changed since that replacement was
/// made (a later change there would be a more recent replacement it touches), so the scan of that
/// replacement's window found it then. Positions are kept relative to the replacement (by its original
/// start), and every candidate is checked against the current text before use, so stale ones drop out.
pub struct Touching<'s, 'n> {
    set: &'s NeedleSet<'n>,
    hits: Vec<Vec<(usize, isize)>>,
    recorded: usize,
    pub gave_up: bool,
}

impl<'s, 'n> Touching<'s, 'n> {
    pub fn new(set: &'s NeedleSet<'n>) -> Self {
        Touching {
            set,
            hits: vec![Vec::new(); set.len()],
            recorded: 0,
            gave_up: false,
        }
    }

    /// Scans the windows of the replacements just made.
    pub fn record(&mut self, cs: &ChangeSet<'_>, made: &[usize]) {
        if self.gave_up {
            return;
        }
        let mut scratch = String::new();
        let mut found: Vec<(usize, usize)> = Vec::new();
        for &i in made {
            let (x, y) = cs.window_of(i, self.set.max_len - 1);
            let (anchor, cur) = cs.rep_anchor(i);
            scratch.clear();
            cs.current_slice(x, y, &mut scratch);
            found.clear();
            self.set.scan_long(&scratch, |id, s| found.push((id, s)));
            let room = TOUCHING_BUDGET.saturating_sub(self.recorded);
            if !self
                .set
                .scan_short(&scratch, room, |id, s| found.push((id, s)))
            {
                self.give_up();
                return;
            }
            for &(id, off) in &found {
                let s = x + off;
                let len = self.set.lens[id];
                if cs.touches_change(s, s + len) {
                    self.hits[id].push((anchor, s as isize - cur as isize));
                    self.recorded += 1;
                }
            }
            if self.recorded > TOUCHING_BUDGET {
                self.give_up();
                return;
            }
        }
    }

    fn give_up(&mut self) {
        self.gave_up = true;
        self.hits.clear();
    }

    fn candidates(&self, cs: &ChangeSet<'_>, needle: &str, out: &mut Vec<usize>) {
        let Some(id) = self.set.id(needle) else {
            return;
        };
        let mut scratch = String::new();
        for &(anchor, off) in &self.hits[id] {
            let Some(cur) = cs.cur_start_of(anchor) else {
                continue;
            };
            let s = cur as isize + off;
            if s < 0 || s as usize + needle.len() > cs.current_len() {
                continue;
            }
            let s = s as usize;
            scratch.clear();
            cs.current_slice_checked(s, s + needle.len(), &mut scratch);
            if scratch == needle && cs.touches_change(s, s + needle.len()) {
                out.push(s);
            }
        }
    }
}

/// Leftmost-first, non-overlapping occurrences of `needle` in the text `cs` currently represents,
/// as `(start, end)` in current coordinates.
pub fn find_matches(
    cs: &ChangeSet<'_>,
    index: &mut OriginalIndex<'_>,
    touching: Option<&Touching>,
    needle: &str,
) -> Vec<(usize, usize)> {
    let m = needle.len();
    let mut out = Vec::new();
    let mut next_free = 0;
    for s in find_starts(cs, index, touching, needle) {
        if s >= next_free {
            out.push((s, s + m));
            next_free = s + m;
        }
    }
    out
}

/// Every start of `needle` in the current text, overlapping occurrences included, sorted. Anchored
/// edits choose among all of them: the leftmost-first rule could hide the one a hunk's line names.
pub fn find_starts(
    cs: &ChangeSet<'_>,
    index: &mut OriginalIndex<'_>,
    touching: Option<&Touching>,
    needle: &str,
) -> Vec<usize> {
    let m = needle.len();
    if m == 0 {
        return Vec::new();
    }
    let mut starts: Vec<usize> = Vec::new();
    for &a in index.occurrences(needle) {
        if cs.is_intact(a, a + m) {
            starts.push(cs.orig_to_cur(a));
        }
    }
    if let Some(t) = touching.filter(|t| !t.gave_up && !cs.is_empty()) {
        let mut extra = Vec::new();
        t.candidates(cs, needle, &mut extra);
        if !extra.is_empty() {
            starts.extend(extra);
            starts.sort_unstable();
            starts.dedup();
        }
    } else if !cs.is_empty() {
        let wanted = Starts::new(needle);
        let mut scratch = String::new();
        let mut extra = Vec::new();
        for (x, y) in cs.windows(m) {
            if y - x < m {
                continue;
            }
            scratch.clear();
            cs.current_slice(x, y, &mut scratch);
            for off in wanted.in_text(&scratch) {
                let s = x + off;
                if cs.touches_change(s, s + m) {
                    extra.push(s);
                }
            }
        }
        if !extra.is_empty() {
            starts.extend(extra);
            starts.sort_unstable();
            starts.dedup();
        }
    }
    starts
}
