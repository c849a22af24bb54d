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
use super::grams;

/// From this many distinct needles on, one multi-pattern pass beats one memmem pass per needle.
const MULTI_PATTERN_THRESHOLD: usize = 16;

/// Start offsets of every occurrence of each needle in the original text, overlapping ones included.
pub struct OriginalIndex<'a> {
    text: &'a str,
    found: HashMap<String, Vec<usize>>,
}

impl<'a> OriginalIndex<'a> {
    pub fn new(text: &'a str, needles: &[&str]) -> Self {
        let mut distinct: Vec<&str> = needles.iter().copied().filter(|n| !n.is_empty()).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let mut index = OriginalIndex { text, found: HashMap::new() };
        if distinct.len() >= MULTI_PATTERN_THRESHOLD && !text.is_empty() {
            index.build_multi(&distinct);
        }
        index
    }

    fn build_multi(&mut self, needles: &[&str]) {
        let (long, short): (Vec<&str>, Vec<&str>) = needles.iter().partition(|n| n.len() >= grams::MIN_LEN);
        if !long.is_empty() {
            let bytes: Vec<&[u8]> = long.iter().map(|n| n.as_bytes()).collect();
            for (needle, list) in long.iter().zip(grams::find_all(self.text.as_bytes(), &bytes)) {
                self.found.insert((*needle).to_string(), list);
            }
        }
        if short.len() < MULTI_PATTERN_THRESHOLD {
            return; // found one by one, on demand
        }
        let Ok(ac) = AhoCorasick::builder().match_kind(MatchKind::Standard).build(&short) else { return };
        // Pathological needle sets ("a", "aa", "aaa"... on "aaaa...") have quadratically many overlapping
        // occurrences; past this budget the per-needle scans are used instead.
        let budget = 8 * self.text.len() + 1_000_000;
        let mut lists: Vec<Vec<usize>> = vec![Vec::new(); short.len()];
        let mut total = 0usize;
        for m in ac.find_overlapping_iter(self.text) {
            lists[m.pattern().as_usize()].push(m.start());
            total += 1;
            if total > budget {
                return;
            }
        }
        for (needle, mut list) in short.iter().zip(lists) {
            // Overlapping iteration reports by end offset; for one needle that is start order.
            debug_assert!(list.windows(2).all(|w| w[0] < w[1]));
            list.shrink_to_fit();
            self.found.insert((*needle).to_string(), list);
        }
    }

    pub fn occurrences(&mut self, needle: &str) -> &[usize] {
        let text = self.text;
        self.found.entry(needle.to_string()).or_insert_with(|| overlapping(text, needle, &memmem::Finder::new(needle)))
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

/// From this many edits on, occurrences that touch changed text are found when the change is made
/// (`Touching`), not by rescanning every changed place for every later edit.
pub const TOUCHING_THRESHOLD: usize = 16;

/// Past this many recorded candidates the tracker gives up and the window scan takes over.
const TOUCHING_BUDGET: usize = 4_000_000;

/// Occurrences of the plan's needles that touch changed text, recorded when each replacement is made.
///
/// Why this finds everything: take an occurrence that touches changed text when edit `j` runs, and the
/// most recently made replacement it touches. Nothing in the occurrence changed since that replacement was
/// made (a later change there would be a more recent replacement it touches), so the scan of that
/// replacement's window found it then. Positions are kept relative to the replacement (by its original
/// start), and every candidate is checked against the current text before use, so stale ones drop out.
pub struct Touching {
    ac: AhoCorasick,
    ids: HashMap<String, usize>,
    pad: usize,
    hits: Vec<Vec<(usize, isize)>>,
    recorded: usize,
    pub gave_up: bool,
}

impl Touching {
    pub fn new(needles: &[&str]) -> Option<Self> {
        let mut distinct: Vec<&str> = needles.iter().copied().filter(|n| !n.is_empty()).collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.is_empty() {
            return None;
        }
        let ac = AhoCorasick::builder().match_kind(MatchKind::Standard).build(&distinct).ok()?;
        let pad = distinct.iter().map(|n| n.len()).max().unwrap_or(1) - 1;
        let ids = distinct.iter().enumerate().map(|(i, n)| ((*n).to_string(), i)).collect();
        Some(Touching { ac, ids, pad, hits: vec![Vec::new(); distinct.len()], recorded: 0, gave_up: false })
    }

    /// Scans the windows of the replacements just made.
    pub fn record(&mut self, cs: &ChangeSet<'_>, made: &[usize]) {
        if self.gave_up {
            return;
        }
        let mut scratch = String::new();
        for &i in made {
            let (x, y) = cs.window_of(i, self.pad);
            let (anchor, cur) = cs.rep_anchor(i);
            scratch.clear();
            cs.current_slice(x, y, &mut scratch);
            for m in self.ac.find_overlapping_iter(&scratch) {
                let (s, e) = (x + m.start(), x + m.end());
                if cs.touches_change(s, e) {
                    self.hits[m.pattern().as_usize()].push((anchor, s as isize - cur as isize));
                    self.recorded += 1;
                }
            }
            if self.recorded > TOUCHING_BUDGET {
                self.gave_up = true;
                self.hits.clear();
                return;
            }
        }
    }

    fn candidates(&self, cs: &ChangeSet<'_>, needle: &str, out: &mut Vec<usize>) {
        let Some(&id) = self.ids.get(needle) else { return };
        let mut scratch = String::new();
        for &(anchor, off) in &self.hits[id] {
            let Some(cur) = cs.cur_start_of(anchor) else { continue };
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
        let finder = memmem::Finder::new(needle);
        let mut scratch = String::new();
        let mut extra = Vec::new();
        for (x, y) in cs.windows(m) {
            if y - x < m {
                continue;
            }
            scratch.clear();
            cs.current_slice(x, y, &mut scratch);
            for off in overlapping(&scratch, needle, &finder) {
                let s = x + off;
                if cs.touches_change(s, s + m) {
                    extra.push(s);
                }
            }
        }
        if !extra.is_empty() {
            starts.extend(extra);
            starts.sort_unstable();
        }
    }
    let mut out = Vec::new();
    let mut next_free = 0;
    for s in starts {
        if s >= next_free {
            out.push((s, s + m));
            next_free = s + m;
        }
    }
    out
}
