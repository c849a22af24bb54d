//! The composed change: sorted, non-overlapping replacements against the ORIGINAL text.
//!
//! Sequential edits are not applied to a growing string; each one is folded into this set, in the way
//! helix-core's ChangeSet or CodeMirror's ChangeSet compose. The current text is implicit:
//! `orig[..s0] + t0 + orig[e0..s1] + t1 + ...`. Folding a batch of matches costs O(replacements + matched
//! text), never O(file size), which is what keeps a thousand edits on a 10 MB file cheap.
//!
//! Invariants (checked by `debug_check`): `reps` sorted by start, `reps[i].end < reps[i+1].start` (no
//! overlap and no touching: touching replacements are merged), `cur_start[i]` is where `reps[i].text`
//! begins in the current text.

use super::text::common_prefix;

/// Offsets of the `\n`s of `text`, for `ChangeSet::line_of`.
pub fn line_breaks(text: &str) -> Vec<usize> {
    memchr::memchr_iter(b'\n', text.as_bytes()).collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Byte offsets into the original text, `start <= end`.
    pub start: usize,
    pub end: usize,
    pub text: String,
}

pub struct ChangeSet<'a> {
    orig: &'a str,
    reps: Vec<Replacement>,
    cur_start: Vec<usize>,
    cur_len: usize,
}

impl<'a> ChangeSet<'a> {
    pub fn new(orig: &'a str) -> Self {
        ChangeSet {
            orig,
            reps: Vec::new(),
            cur_start: Vec::new(),
            cur_len: orig.len(),
        }
    }

    pub fn current_len(&self) -> usize {
        self.cur_len
    }

    pub fn is_empty(&self) -> bool {
        self.reps.is_empty()
    }

    fn cur_end(&self, i: usize) -> usize {
        self.cur_start[i] + self.reps[i].text.len()
    }

    /// Offset added to original positions that lie after `reps[..i]` and before `reps[i]`.
    fn delta_before(&self, i: usize) -> isize {
        if i < self.reps.len() {
            self.cur_start[i] as isize - self.reps[i].start as isize
        } else {
            self.cur_len as isize - self.orig.len() as isize
        }
    }

    /// Whether original bytes `[a, b)` are still present, contiguous and unchanged in the current text.
    pub fn is_intact(&self, a: usize, b: usize) -> bool {
        let idx = self.reps.partition_point(|r| r.start < b);
        idx == 0 || self.reps[idx - 1].end <= a
    }

    /// Current position of an original position that lies in an unchanged stretch.
    pub fn orig_to_cur(&self, p: usize) -> usize {
        let i = self.reps.partition_point(|r| r.end <= p);
        (p as isize + self.delta_before(i)) as usize
    }

    /// Appends the current text `[x, y)` to `out`.
    pub fn current_slice(&self, x: usize, y: usize, out: &mut String) {
        self.pieces(x, y, |piece| out.push_str(piece));
    }

    /// The current text `[x, y)` in order, as the pieces of original and replacement text it is made
    /// of, without building it.
    fn pieces<'s>(&'s self, x: usize, y: usize, mut each: impl FnMut(&'s str)) {
        let mut pos = x;
        let mut i = self.cur_start.partition_point(|&s| s < x);
        // The replacement before may still cover `x`.
        if i > 0 && self.cur_end(i - 1) > x {
            i -= 1;
        }
        while pos < y {
            if i < self.reps.len() && self.cur_start[i] <= pos {
                let off = pos - self.cur_start[i];
                let take = (self.reps[i].text.len() - off).min(y - pos);
                each(&self.reps[i].text[off..off + take]);
                pos += take;
                i += 1;
            } else {
                let gap_end = if i < self.reps.len() {
                    self.cur_start[i].min(y)
                } else {
                    y
                };
                let o = (pos as isize - self.delta_before(i)) as usize;
                each(&self.orig[o..o + (gap_end - pos)]);
                pos = gap_end;
            }
        }
    }

    /// Like `current_slice`, for a range that may not fall on character boundaries (a stale candidate):
    /// appends nothing then.
    pub fn current_slice_checked(&self, x: usize, y: usize, out: &mut String) {
        if self.is_boundary(x) && self.is_boundary(y) {
            self.current_slice(x, y, out);
        }
    }

    pub fn current_text(&self) -> String {
        let mut s = String::with_capacity(self.cur_len);
        self.current_slice(0, self.cur_len, &mut s);
        s
    }

    /// The stretches of current text where a needle of `m` bytes could overlap changed text:
    /// each replacement widened by `m - 1` on both sides, merged. Returns `(x, y, first_rep, end_rep)`.
    pub fn windows(&self, m: usize) -> Vec<(usize, usize)> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        let pad = m.saturating_sub(1);
        for i in 0..self.reps.len() {
            let (x, y) = self.window_of(i, pad);
            match out.last_mut() {
                Some(last) if last.1 >= x => last.1 = last.1.max(y),
                _ => out.push((x, y)),
            }
        }
        out
    }

    /// The current text's byte at `p < current_len()`.
    fn byte_at(&self, p: usize) -> u8 {
        let i = self.cur_start.partition_point(|&s| s <= p);
        if i > 0 && p < self.cur_end(i - 1) {
            return self.reps[i - 1].text.as_bytes()[p - self.cur_start[i - 1]];
        }
        self.orig.as_bytes()[(p as isize - self.delta_before(i)) as usize]
    }

    fn is_boundary(&self, p: usize) -> bool {
        p == 0 || p >= self.cur_len || (self.byte_at(p) as i8) >= -0x40
    }

    fn floor_boundary(&self, mut p: usize) -> usize {
        while !self.is_boundary(p) {
            p -= 1;
        }
        p
    }

    fn ceil_boundary(&self, mut p: usize) -> usize {
        while !self.is_boundary(p) {
            p += 1;
        }
        p
    }

    /// Whether current `[x, y)` overlaps changed text or spans the point where text was deleted.
    pub fn touches_change(&self, x: usize, y: usize) -> bool {
        let idx = self.cur_start.partition_point(|&s| s < y);
        idx > 0 && self.cur_end(idx - 1) > x
    }

    /// Replaces the current ranges `matches` (sorted, non-overlapping, non-empty) with `new`. Returns the
    /// indices of the replacements this created or grew.
    ///
    /// Only the replacements between the first and the last match are rebuilt; the rest are shifted.
    pub fn apply(&mut self, matches: &[(usize, usize)], new: &str) -> Vec<usize> {
        self.apply_with(matches, |_| new)
    }

    /// `apply` with a text of its own for each place (`(start, end, text)`, sorted, non-overlapping):
    /// a resolved edit's spans in one fold, whose cost is that of one `apply`. One `apply` per span
    /// rebuilt the set's tail each time, quadratic in the spans (a rename of 100,000 occurrences).
    pub fn apply_each(&mut self, places: &[(usize, usize, String)]) -> Vec<usize> {
        let matches: Vec<(usize, usize)> = places.iter().map(|(a, b, _)| (*a, *b)).collect();
        self.apply_with(&matches, |k| places[k].2.as_str())
    }

    fn apply_with<'n>(
        &mut self,
        matches: &[(usize, usize)],
        new_of: impl Fn(usize) -> &'n str,
    ) -> Vec<usize> {
        let mut made = Vec::new();
        let (Some(&(first, _)), Some(&(_, last))) = (matches.first(), matches.last()) else {
            return made;
        };
        let (lo, hi) = self.reached(first, last);
        let old = Folding {
            orig: self.orig,
            orig_start: self.reps[lo..hi].iter().map(|r| r.start).collect(),
            cur_start: self.cur_start[lo..hi].to_vec(),
            cur_end: (lo..hi).map(|i| self.cur_end(i)).collect(),
            delta_after: self.delta_before(hi),
        };
        let old_reps: Vec<Replacement> = self.reps.drain(lo..hi).collect();
        let mut out: Vec<Replacement> = Vec::with_capacity(old_reps.len() + matches.len());
        let mut reps = old_reps.into_iter().enumerate().peekable();
        let mut pending: Option<Pending> = None;

        for (k, &(ca, cb)) in matches.iter().enumerate() {
            let merge = matches!(&pending, Some(p) if ca <= p.cur_end);
            if !merge {
                if let Some(p) = pending.take() {
                    made.push(lo + out.len());
                    out.push(p.finish());
                }
                // Replacements that end before the match stay as they are.
                while let Some((i, _)) = reps.peek() {
                    if old.cur_end[*i] < ca {
                        out.push(reps.next().expect("peeked").1);
                    } else {
                        break;
                    }
                }
                pending = Some(Pending::start(ca, &old, &mut reps));
            }
            let p = pending.as_mut().expect("pending set above");
            p.extend_to(cb, &old, &mut reps);
            p.replace(ca, cb, new_of(k));
        }
        if let Some(p) = pending.take() {
            made.push(lo + out.len());
            out.push(p.finish());
        }
        out.extend(reps.map(|(_, r)| r));
        let new_hi = lo + out.len();
        self.reps.splice(lo..lo, out);
        self.recompute_from(lo, hi, new_hi);
        made
    }

    /// The replacements `[lo, hi)` that matches from current offset `first` to `last` can reach: from
    /// the one that ends at or after `first` to the last that starts at or before `last`.
    fn reached(&self, first: usize, last: usize) -> (usize, usize) {
        let mut lo = self.cur_start.partition_point(|&s| s < first);
        if lo > 0 && self.cur_end(lo - 1) >= first {
            lo -= 1;
        }
        let hi = lo + self.cur_start[lo..].partition_point(|&s| s <= last);
        (lo, hi)
    }

    /// The window of current text around replacement `i` in which a needle of up to `pad + 1` bytes
    /// could touch it.
    pub fn window_of(&self, i: usize, pad: usize) -> (usize, usize) {
        let x = self.floor_boundary(self.cur_start[i].saturating_sub(pad));
        let y = self.ceil_boundary((self.cur_end(i) + pad).min(self.cur_len));
        (x, y)
    }

    /// The byte at current offset `p` (`None` at or past the end).
    pub fn byte(&self, p: usize) -> Option<u8> {
        (p < self.cur_len).then(|| self.byte_at(p))
    }

    /// The number of `\n`s in the current text `[x, y)`, without copying it.
    pub fn newlines_between(&self, x: usize, y: usize) -> usize {
        let mut n = 0;
        self.pieces(x, y, |piece| {
            n += memchr::memchr_iter(b'\n', piece.as_bytes()).count()
        });
        n
    }

    /// The 1-based line of current offset `p`. `orig_breaks` holds the offsets of the original's
    /// `\n`s, sorted (see `line_breaks`). Costs O(replacements + their text), not O(file).
    pub fn line_of(&self, p: usize, orig_breaks: &[usize]) -> usize {
        let before_orig = |a: usize| orig_breaks.partition_point(|&x| x < a) as isize;
        let breaks = |t: &str| memchr::memchr_iter(b'\n', t.as_bytes()).count() as isize;
        let mut extra: isize = 0;
        for (k, r) in self.reps.iter().enumerate() {
            let start = self.cur_start[k];
            if start >= p {
                break;
            }
            let end = start + r.text.len();
            if p < end {
                return (before_orig(r.start) + extra + breaks(&r.text[..p - start])) as usize + 1;
            }
            extra += breaks(&r.text) - (before_orig(r.end) - before_orig(r.start));
        }
        let i = self.cur_start.partition_point(|&s| s < p);
        let o = (p as isize - self.delta_before(i)) as usize;
        (before_orig(o) + extra) as usize + 1
    }

    /// Original start and current start of replacement `i`.
    pub fn rep_anchor(&self, i: usize) -> (usize, usize) {
        (self.reps[i].start, self.cur_start[i])
    }

    /// Current start of the replacement whose original start is `start`, if there is one.
    pub fn cur_start_of(&self, start: usize) -> Option<usize> {
        let i = self.reps.partition_point(|r| r.start < start);
        (i < self.reps.len() && self.reps[i].start == start).then(|| self.cur_start[i])
    }

    /// Recomputes positions after `reps[lo..new_hi]` replaced what was `reps[lo..old_hi]`: from scratch
    /// inside that range, by one shift in place after it.
    fn recompute_from(&mut self, lo: usize, old_hi: usize, new_hi: usize) {
        let mut delta: isize = if lo == 0 { 0 } else { self.delta_after(lo - 1) };
        let mut mid = Vec::with_capacity(new_hi - lo);
        for r in &self.reps[lo..new_hi] {
            mid.push((r.start as isize + delta) as usize);
            delta += r.text.len() as isize - (r.end - r.start) as isize;
        }
        // The untouched tail keeps its order; all of it moves by the same amount.
        let shift = if new_hi < self.reps.len() {
            (self.reps[new_hi].start as isize + delta) - self.cur_start[old_hi] as isize
        } else {
            0
        };
        self.cur_start.splice(lo..old_hi, mid);
        for c in &mut self.cur_start[new_hi..] {
            *c = (*c as isize + shift) as usize;
        }
        self.cur_len = match self.reps.len() {
            0 => self.orig.len(),
            n => (self.orig.len() as isize + self.delta_after(n - 1)) as usize,
        };
    }

    /// Offset for original positions just after replacement `i`.
    fn delta_after(&self, i: usize) -> isize {
        let r = &self.reps[i];
        self.cur_start[i] as isize - r.start as isize + r.text.len() as isize
            - (r.end - r.start) as isize
    }

    /// The final, minimal replacements: each trimmed of the text it shares with the original at either
    /// end, and dropped when nothing is left.
    pub fn finish(self) -> Vec<Replacement> {
        let orig = self.orig;
        self.reps
            .into_iter()
            .filter_map(|mut r| {
                let old = &orig[r.start..r.end];
                let pre = common_prefix(old, &r.text);
                let suf = common_suffix(&old[pre..], &r.text[pre..]);
                if pre == old.len() && pre == r.text.len() {
                    return None;
                }
                r.text = r.text[pre..r.text.len() - suf].to_string();
                r.start += pre;
                r.end -= suf;
                Some(r)
            })
            .collect()
    }

    #[cfg(test)]
    pub fn debug_check(&self) {
        for w in self.reps.windows(2) {
            assert!(
                w[0].end < w[1].start,
                "replacements touch or overlap: {w:?}"
            );
        }
        assert_eq!(self.current_text().len(), self.cur_len);
    }
}

/// Positions of the replacements being folded into (a slice of the set), read while they are moved into
/// the new ones.
struct Folding<'a> {
    orig: &'a str,
    orig_start: Vec<usize>,
    cur_start: Vec<usize>,
    cur_end: Vec<usize>,
    /// The offset for original positions after the slice.
    delta_after: isize,
}

impl Folding<'_> {
    fn delta_before(&self, i: usize) -> isize {
        if i < self.orig_start.len() {
            self.cur_start[i] as isize - self.orig_start[i] as isize
        } else {
            self.delta_after
        }
    }
}

/// A replacement being grown: it covers old current text `[cur_begin, cur_end)`, held in `rep.text`.
/// The matches folded so far turned `rep.text[..read]` into `done`.
struct Pending {
    cur_begin: usize,
    cur_end: usize,
    rep: Replacement,
    done: String,
    read: usize,
}

impl Pending {
    /// The replacement a match at current offset `ca` starts growing: the old one it starts in, else
    /// an empty one at `ca`.
    fn start<I>(ca: usize, old: &Folding<'_>, reps: &mut std::iter::Peekable<I>) -> Pending
    where
        I: Iterator<Item = (usize, Replacement)>,
    {
        match reps.peek() {
            Some((i, _)) if old.cur_start[*i] <= ca => {
                let (i, r) = reps.next().expect("peeked");
                Pending {
                    cur_begin: old.cur_start[i],
                    cur_end: old.cur_end[i],
                    rep: r,
                    done: String::new(),
                    read: 0,
                }
            }
            next => {
                let i = next.map_or(old.cur_start.len(), |(i, _)| *i);
                let o = (ca as isize - old.delta_before(i)) as usize;
                Pending {
                    cur_begin: ca,
                    cur_end: ca,
                    rep: Replacement {
                        start: o,
                        end: o,
                        text: String::new(),
                    },
                    done: String::new(),
                    read: 0,
                }
            }
        }
    }

    /// Folds in the match of current `[ca, cb)` (covered already: `extend_to`), replaced by `new`.
    /// Copied forward, never spliced in place: splicing each match into a large replacement cost its
    /// whole length per match.
    fn replace(&mut self, ca: usize, cb: usize, new: &str) {
        let (lo_in, hi_in) = (ca - self.cur_begin, cb - self.cur_begin);
        self.done.push_str(&self.rep.text[self.read..lo_in]);
        self.done.push_str(new);
        self.read = hi_in;
    }

    fn finish(mut self) -> Replacement {
        self.done.push_str(&self.rep.text[self.read..]);
        Replacement {
            text: self.done,
            ..self.rep
        }
    }

    /// Grows the replacement to cover old current text up to `x`, swallowing every old replacement it
    /// reaches or touches.
    fn extend_to<I>(&mut self, x: usize, old: &Folding<'_>, reps: &mut std::iter::Peekable<I>)
    where
        I: Iterator<Item = (usize, Replacement)>,
    {
        loop {
            let next_start = reps.peek().map(|(i, _)| old.cur_start[*i]);
            if let Some(ns) = next_start {
                if ns <= self.cur_end {
                    let (i, r) = reps.next().expect("peeked");
                    self.rep.text.push_str(&r.text);
                    self.rep.end = r.end;
                    self.cur_end = old.cur_end[i];
                    continue;
                }
            }
            if self.cur_end >= x {
                return;
            }
            let upto = next_start.map_or(x, |ns| ns.min(x));
            let n = upto - self.cur_end;
            self.rep
                .text
                .push_str(&old.orig[self.rep.end..self.rep.end + n]);
            self.rep.end += n;
            self.cur_end = upto;
        }
    }
}

fn common_suffix(a: &str, b: &str) -> usize {
    let n = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut k = n;
    while k > 0 && !a.is_char_boundary(a.len() - k) {
        k -= 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply_naive(text: &str, matches: &[(usize, usize)], new: &str) -> String {
        let mut out = String::new();
        let mut last = 0;
        for &(a, b) in matches {
            out.push_str(&text[last..a]);
            out.push_str(new);
            last = b;
        }
        out.push_str(&text[last..]);
        out
    }

    #[test]
    fn folding_matches_inside_and_across_earlier_replacements() {
        let orig = "aaa bbb ccc ddd";
        let mut cs = ChangeSet::new(orig);
        cs.apply(&[(4, 7)], "XbX");
        assert_eq!(cs.current_text(), "aaa XbX ccc ddd");
        // Two matches inside the same earlier replacement.
        cs.apply(&[(4, 5), (6, 7)], "YY");
        assert_eq!(cs.current_text(), "aaa YYbYY ccc ddd");
        cs.debug_check();
        // One match spanning changed text and original text on both sides.
        cs.apply(&[(2, 12)], "-");
        assert_eq!(cs.current_text(), "aa-c ddd");
        cs.debug_check();
        let reps = cs.finish();
        assert_eq!(
            reps,
            vec![Replacement {
                start: 2,
                end: 10,
                text: "-".into()
            }]
        );
    }

    #[test]
    fn deletions_that_meet_are_merged() {
        let orig = "one two three";
        let mut cs = ChangeSet::new(orig);
        cs.apply(&[(3, 4)], "");
        cs.apply(&[(3, 6)], "");
        assert_eq!(cs.current_text(), "one three");
        cs.debug_check();
        assert_eq!(
            cs.finish(),
            vec![Replacement {
                start: 3,
                end: 7,
                text: String::new()
            }]
        );
    }

    #[test]
    fn edits_that_cancel_leave_nothing() {
        let mut cs = ChangeSet::new("alpha beta");
        cs.apply(&[(0, 5)], "gamma");
        cs.apply(&[(0, 5)], "alpha");
        assert!(cs.finish().is_empty());
    }

    #[test]
    fn random_folds_agree_with_naive_replacement() {
        let mut seed = 12345u64;
        let mut rnd = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..2000 {
            let orig: String = (0..rnd(20))
                .map(|_| (b'a' + rnd(3) as u8) as char)
                .collect();
            let mut cs = ChangeSet::new(&orig);
            let mut naive = orig.clone();
            for _ in 0..rnd(6) {
                let len = naive.len();
                let mut matches = Vec::new();
                let mut pos = 0;
                while pos < len && matches.len() < 3 {
                    let a = pos + rnd(len - pos + 1);
                    if a >= len {
                        break;
                    }
                    let b = a + 1 + rnd((len - a).min(4));
                    matches.push((a, b.min(len)));
                    pos = b + rnd(2);
                }
                let new: String = (0..rnd(4)).map(|_| (b'x' + rnd(3) as u8) as char).collect();
                naive = apply_naive(&naive, &matches, &new);
                cs.apply(&matches, &new);
                cs.debug_check();
                assert_eq!(cs.current_text(), naive);
            }
            let reps = cs.finish();
            let mut rebuilt = String::new();
            let mut last = 0;
            for r in &reps {
                rebuilt.push_str(&orig[last..r.start]);
                rebuilt.push_str(&r.text);
                last = r.end;
            }
            rebuilt.push_str(&orig[last..]);
            assert_eq!(rebuilt, naive);
        }
    }
}
