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

const K: usize = 8;
pub const MIN_LEN: usize = 2 * K - 1;
const FILTER_BITS: u32 = 20;

fn gram(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + K].try_into().expect("eight bytes"))
}

fn slot(g: u64) -> usize {
    (g.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FILTER_BITS)) as usize
}

/// Occurrence starts of each needle (all `>= MIN_LEN` bytes), overlapping ones included, sorted.
pub fn find_all(text: &[u8], needles: &[&[u8]]) -> Vec<Vec<usize>> {
    let mut shared: HashMap<u64, u32> = HashMap::new();
    for n in needles {
        for at in 0..=n.len() - K {
            *shared.entry(gram(n, at)).or_default() += 1;
        }
    }
    let mut table: HashMap<u64, Vec<(u32, u32)>> = HashMap::new();
    let mut filter = vec![0u64; 1 << (FILTER_BITS - 6)];
    for (id, n) in needles.iter().enumerate() {
        let cost = |o: usize| (o..o + K).map(|d| shared[&gram(n, d)] as u64).sum::<u64>();
        let o = (0..=n.len() + 1 - 2 * K).min_by_key(|&o| cost(o)).expect("needle long enough");
        for d in o..o + K {
            let g = gram(n, d);
            table.entry(g).or_default().push((id as u32, d as u32));
            let s = slot(g);
            filter[s >> 6] |= 1 << (s & 63);
        }
    }
    let mut found: Vec<Vec<usize>> = vec![Vec::new(); needles.len()];
    let mut b = 0;
    while b + K <= text.len() {
        let g = gram(text, b);
        let s = slot(g);
        if filter[s >> 6] & (1 << (s & 63)) != 0 {
            if let Some(entries) = table.get(&g) {
                for &(id, d) in entries {
                    let (id, d) = (id as usize, d as usize);
                    let n = needles[id];
                    if b >= d && b - d + n.len() <= text.len() && &text[b - d..b - d + n.len()] == n {
                        found[id].push(b - d);
                    }
                }
            }
        }
        b += K;
    }
    for list in &mut found {
        list.sort_unstable();
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let expected: Vec<usize> =
                (0..=text.len() - n.len()).filter(|&i| &text.as_bytes()[i..i + n.len()] == *n).collect();
            assert_eq!(f, &expected, "{}", String::from_utf8_lossy(n));
        }
    }
}
