//! One pass over the original text that finds every occurrence of many long needles at once.
//!
//! Each needle of at least `2K - 1` bytes is indexed by the `K` eight-byte grams that start at `K`
//! consecutive offsets `o..o+K` of it. Any occurrence at `s` contains exactly one text position `b`
//! that is a multiple of `K` with `b - s` in `o..o+K`, and the gram there lies inside the occurrence, so
//! reading the text only at multiples of `K` finds every occurrence exactly once. That is one 8-byte load
//! and a bit test per 8 bytes of text, whatever the number of needles; a general multi-pattern automaton
//! walks every byte. `o` is chosen per needle where its grams are least shared with the other needles, so
//! similar lines of code do not all answer to the same gram.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const K: usize = 8;
pub const MIN_LEN: usize = 2 * K - 1;
const FILTER_BITS: u32 = 20;
/// The window of a needle is chosen among its first `SPAN` offsets: any window finds every
/// occurrence, so looking further only refines the choice, at a cost that grows with the needle (a
/// diff hunk's context lines made a thousand 300-byte needles cost more than the scan).
const SPAN: usize = 64;

fn gram(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + K].try_into().expect("eight bytes"))
}

/// One multiply mixes an 8-byte gram well enough; SipHash would cost more than the scan itself.
#[derive(Default)]
struct GramHasher(u64);

impl Hasher for GramHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u64(&mut self, g: u64) {
        // The table picks buckets by the low bits: fold the well-mixed high half of the product down.
        let h = (g ^ (g >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 32);
    }
}

type GramMap<V> = HashMap<u64, V, BuildHasherDefault<GramHasher>>;

fn slot(g: u64) -> usize {
    (g.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FILTER_BITS)) as usize
}

/// The gram table of a set of needles (all `>= MIN_LEN` bytes).
pub struct GramIndex<'n> {
    needles: Vec<&'n [u8]>,
    table: GramMap<Vec<(u32, u32)>>,
    filter: Vec<u64>,
}

impl<'n> GramIndex<'n> {
    pub fn new(needles: Vec<&'n [u8]>) -> Self {
        // Offsets whose grams are counted: those a window can cover.
        let counted = |n: &[u8]| (n.len() - K).min(SPAN + K - 1);
        let total: usize = needles.iter().map(|n| counted(n) + 1).sum();
        let mut shared: GramMap<u32> = GramMap::with_capacity_and_hasher(total, Default::default());
        for n in &needles {
            for at in 0..=counted(n) {
                *shared.entry(gram(n, at)).or_default() += 1;
            }
        }
        let mut table: GramMap<Vec<(u32, u32)>> =
            GramMap::with_capacity_and_hasher(needles.len() * K, Default::default());
        let mut filter = vec![0u64; 1 << (FILTER_BITS - 6)];
        let mut counts: Vec<u64> = Vec::new();
        for (id, n) in needles.iter().enumerate() {
            // The window of K offsets whose grams the other needles share least (a sliding sum).
            counts.clear();
            counts.extend((0..=counted(n)).map(|at| shared[&gram(n, at)] as u64));
            let mut sum: u64 = counts[..K].iter().sum();
            let (mut o, mut best) = (0, sum);
            for start in 1..=counts.len() - K {
                sum = sum + counts[start + K - 1] - counts[start - 1];
                if sum < best {
                    (o, best) = (start, sum);
                }
            }
            for d in o..o + K {
                let g = gram(n, d);
                table.entry(g).or_default().push((id as u32, d as u32));
                let s = slot(g);
                filter[s >> 6] |= 1 << (s & 63);
            }
        }
        GramIndex {
            needles,
            table,
            filter,
        }
    }

    /// Calls `found(needle id, start)` once for every occurrence lying wholly inside `text`, overlapping
    /// ones included, in no particular order. The lattice of read positions starts at `text[0]`, so a
    /// window of a larger text can be scanned on its own.
    pub fn scan(&self, text: &[u8], mut found: impl FnMut(usize, usize)) {
        let mut b = 0;
        while b + K <= text.len() {
            let g = gram(text, b);
            let s = slot(g);
            if self.filter[s >> 6] & (1 << (s & 63)) != 0 {
                if let Some(entries) = self.table.get(&g) {
                    for &(id, d) in entries {
                        let (id, d) = (id as usize, d as usize);
                        let n = self.needles[id];
                        if b >= d
                            && b - d + n.len() <= text.len()
                            && &text[b - d..b - d + n.len()] == n
                        {
                            found(id, b - d);
                        }
                    }
                }
            }
            b += K;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Occurrence starts of each needle (all `>= MIN_LEN` bytes), overlapping ones included, sorted.
    fn find_all(text: &[u8], needles: &[&[u8]]) -> Vec<Vec<usize>> {
        let index = GramIndex::new(needles.to_vec());
        let mut found: Vec<Vec<usize>> = vec![Vec::new(); needles.len()];
        index.scan(text, |id, s| found[id].push(s));
        for list in &mut found {
            list.sort_unstable();
        }
        found
    }

    #[test]
    fn finds_what_a_scan_finds() {
        let text = "xx let value = compute(1); let value = compute(1); let value = compute(12);aaaaaaaaaaaaaaaaaaaa";
        let needles: Vec<&[u8]> = vec![
            b"let value = compute(1);",
            b"value = compute(12);",
            b"aaaaaaaaaaaaaaaa",
            b"not in the text at all",
        ];
        let found = find_all(text.as_bytes(), &needles);
        for (n, f) in needles.iter().zip(&found) {
            let expected: Vec<usize> = (0..=text.len() - n.len())
                .filter(|&i| &text.as_bytes()[i..i + n.len()] == *n)
                .collect();
            assert_eq!(f, &expected, "{}", String::from_utf8_lossy(n));
        }
    }
}
