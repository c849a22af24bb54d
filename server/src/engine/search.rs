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

/// Above this many distinct needles one multi-pattern pass beats one memmem pass per needle.
const MULTI_PATTERN_THRESHOLD: usize = 24;

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
        let Ok(ac) = AhoCorasick::builder().match_kind(MatchKind::Standard).build(needles) else { return };
        // Pathological needle sets ("a", "aa", "aaa"... on "aaaa...") have quadratically many overlapping
        // occurrences; past this budget the per-needle scans below are used instead.
        let budget = 8 * self.text.len() + 1_000_000;
        let mut lists: Vec<Vec<usize>> = vec![Vec::new(); needles.len()];
        let mut total = 0usize;
        for m in ac.find_overlapping_iter(self.text) {
            lists[m.pattern().as_usize()].push(m.start());
            total += 1;
            if total > budget {
                return;
            }
        }
        for (needle, mut list) in needles.iter().zip(lists) {
            // Overlapping iteration reports by end offset; equal-length matches of one needle keep order.
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

/// Leftmost-first, non-overlapping occurrences of `needle` in the text `cs` currently represents,
/// as `(start, end)` in current coordinates.
pub fn find_matches(cs: &ChangeSet<'_>, index: &mut OriginalIndex<'_>, needle: &str) -> Vec<(usize, usize)> {
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
    if !cs.is_empty() {
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
