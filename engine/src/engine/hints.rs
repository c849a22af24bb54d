//! Help for a refused edit, so the caller can fix its plan in one retry: where the closest text is and
//! how it differs (down to the word that changed), or where the several matches are.
//!
//! Finding the closest text must stay cheap on a 10 MB file: lines are compared by a hash of their
//! loose form (one pass), and only old_string's lines that occur nowhere in the file are compared by
//! shared character trigrams (a second pass that a 64 Ki-bit filter keeps to a lookup per trigram).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};

use super::text::{
    gram_similarity, grams, indent_of, line_of, line_similarity, line_starts, lines_with_offsets,
    loose, pair_most_alike, plain, plain_char, token_set, token_similarity, tokens,
};
use super::tolerant::Tier;

const MAX_SHOWN_LINES: usize = 30;
const MAX_LISTED_MATCHES: usize = 50;
/// Lines whose trigram similarity reaches this are taken for the same line, changed.
const SIMILAR: f32 = 0.4;
/// Extra file lines looked at around a window, so that a line added or removed since the caller read
/// the file still lines up.
const SLACK: usize = 3;
const MAX_WORD_CHANGES: usize = 3;
const DIFF_BUDGET: Duration = Duration::from_millis(100);

/// Where an ambiguous edit's matches are, each line named once: "Matches are at lines 3, 17 and 40.";
/// a line with several says how many ("Matches are at line 1 (2 matches)."), and where lines and
/// matches differ in number the total comes first ("Matches are at lines 1 and 2 (3 matches: 2 on
/// line 2).").
pub fn match_lines(current: &str, found: &[(usize, usize)]) -> String {
    let starts = line_starts(current);
    let mut per_line: Vec<(usize, usize)> = Vec::new();
    for &(s, _) in found {
        let line = line_of(&starts, s);
        match per_line.last_mut() {
            Some((l, n)) if *l == line => *n += 1,
            _ => per_line.push((line, 1)),
        }
    }
    let lines = list(per_line.iter().map(|&(l, _)| l.to_string()).collect());
    match per_line.as_slice() {
        [(l, n)] if *n > 1 => format!("Matches are at line {l} ({n} matches)."),
        [_] => format!("Matches are at line {lines}."),
        _ if per_line.len() == found.len() => format!("Matches are at lines {lines}."),
        _ => {
            let several: Vec<String> = per_line
                .iter()
                .filter(|&&(_, n)| n > 1)
                .map(|&(l, n)| format!("{n} on line {l}"))
                .collect();
            format!(
                "Matches are at lines {lines} ({} matches: {}).",
                found.len(),
                list(several)
            )
        }
    }
}

/// A tolerant tier that matched several places.
pub fn tolerant_matches(tier: Tier, lines: &[(usize, usize)]) -> String {
    let items: Vec<String> = lines.iter().map(|&r| range(r)).collect();
    format!(
        "Matching {}, old_string is at {}: add a line that tells them apart, or write old_string exactly as the file has it.",
        tier.describe(),
        list(items)
    )
}

/// A tolerant tier that matched one place where writing new_string needs a guess.
pub fn tolerant_unsure(tier: Tier, lines: (usize, usize), why: &str) -> String {
    format!(
        "Matching {}, old_string is at {}, but {why}. Write old_string exactly as the file has it there, and new_string as it is to be written.",
        tier.describe(),
        range(lines)
    )
}

fn range((first, last): (usize, usize)) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

/// At most MAX_LISTED_MATCHES items, joined with commas and "and".
fn list(mut items: Vec<String>) -> String {
    if items.len() > MAX_LISTED_MATCHES {
        let more = items.len() - MAX_LISTED_MATCHES;
        items.truncate(MAX_LISTED_MATCHES);
        items.push(format!("{more} more"));
    }
    join_and(&items)
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {}", rest.join(", "), last),
    }
}

pub fn not_found(current: &str, old: &str, new: &str) -> Option<String> {
    if old.trim().is_empty() {
        return Some(format!(
            "old_string is only whitespace ({old:?}) and the file has no such run of it. Include a neighbouring \
             line with visible text in old_string and new_string, so the edit has something to hold on to."
        ));
    }
    if old.contains('\r') {
        let lf = old.replace("\r\n", "\n");
        if memchr::memmem::find(current.as_bytes(), lf.as_bytes()).is_some() {
            return Some(
                "Line endings differ: old_string has \\r\\n line breaks but the file uses \\n."
                    .into(),
            );
        }
    }
    let file_lines = lines_with_offsets(current);
    let mut old_lines: Vec<&str> = old.split('\n').collect();
    if old_lines.len() > 1 && old.ends_with('\n') {
        old_lines.pop();
    }
    let windows = closest_windows(&file_lines, &old_lines);
    let applied = |near: Option<(usize, usize)>| already_applied(current, near, old, new);
    let Some(&best) = windows.first() else {
        if let Some(h) = applied(None) {
            return Some(h);
        }
        let first = old_lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .copied()
            .unwrap_or("");
        return Some(format!(
            "No line of the file resembles old_string's line \"{}\", even ignoring whitespace, quotes and dashes. \
             Read the file again before retrying.",
            first.trim()
        ));
    };
    let described = describe(&file_lines, &old_lines, old.ends_with('\n'), best);
    let (first, last) = described.lines;
    let from = file_lines[first].0;
    let to = file_lines[last].0 + file_lines[last].1.len();
    if let Some(h) = applied(Some((from, to))) {
        return Some(h);
    }
    let shown: Vec<&str> = current[from..to]
        .split('\n')
        .take(MAX_SHOWN_LINES)
        .collect();
    let at = range((first + 1, last + 1));
    let others: Vec<String> = windows[1..]
        .iter()
        .map(|&s| range((s + 1, (s + old_lines.len()).min(file_lines.len()))))
        .collect();
    let lead = if others.is_empty() {
        format!("The closest text is at {at} and differs in")
    } else {
        format!(
            "The closest texts are at {at} and {}. At {at} the text differs in",
            list(others)
        )
    };
    Some(format!(
        "{lead} {}. The file has there:\n{}",
        described.what(),
        shown.join("\n")
    ))
}

/// "new_string is already present": only where old_string's closest text is, so that a short or
/// common new_string found elsewhere in the file does not send the caller the wrong way.
/// With no closest text (`near` None), anywhere in the file will do: old_string resembles nothing, so
/// an edit that replaced it whole is the likely story.
fn already_applied(
    current: &str,
    near: Option<(usize, usize)>,
    old: &str,
    new: &str,
) -> Option<String> {
    if new.trim().chars().count() < 3 || new == old {
        return None;
    }
    let (from, to) = near.unwrap_or((0, current.len()));
    // A new_string much shorter than the closest text (a word, a prefix of the line) proves nothing.
    if near.is_some() && 2 * new.trim().len() < current[from..to].trim().len() {
        return None;
    }
    let lo = from.saturating_sub(new.len());
    let hi = (to + new.len()).min(current.len());
    let at = lo + memchr::memmem::find(&current.as_bytes()[lo..hi], new.as_bytes())?;
    let line = line_of(&line_starts(current), at);
    Some(format!(
        "new_string is already present at line {line}: this edit looks already applied."
    ))
}

/// FNV-1a over a line's loose form (see `text::loose`), without building it; `None` for a blank line.
fn loose_hash(line: &str) -> Option<u64> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut any = false;
    for word in line.split_whitespace() {
        if any {
            h = (h ^ u64::from(b' ')).wrapping_mul(0x100_0000_01b3);
        }
        any = true;
        for c in word.chars().map(plain_char) {
            h = (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3);
        }
    }
    any.then_some(h)
}

/// Where old_string most likely was: window starts (0-based file lines) with the best score, the best
/// first; several only when each matches every line loosely (the same lines at several indentations).
fn closest_windows(file: &[(usize, &str)], old: &[&str]) -> Vec<usize> {
    let old_hash: Vec<Option<u64>> = old.iter().map(|l| loose_hash(l)).collect();
    let content_lines = old_hash.iter().flatten().count();
    let mut by_hash: HashMap<u64, Vec<usize>> = HashMap::new();
    for (j, h) in old_hash.iter().enumerate() {
        if let Some(h) = h {
            by_hash.entry(*h).or_default().push(j);
        }
    }
    let mut votes: HashMap<usize, f32> = HashMap::new();
    let mut seen = vec![false; old.len()];
    for (i, (_, line)) in file.iter().enumerate() {
        let Some(h) = loose_hash(line) else { continue };
        if let Some(js) = by_hash.get(&h) {
            for &j in js.iter().filter(|&&j| j <= i) {
                seen[j] = true;
                *votes.entry(i - j).or_default() += 1.0;
            }
        }
    }
    let perfect = |v: f32| v >= content_lines as f32;
    if !votes.values().any(|&v| perfect(v)) {
        // The lines found nowhere as they are: look for them changed.
        let changed: Vec<usize> = (0..old.len())
            .filter(|&j| old_hash[j].is_some() && !seen[j])
            .take(64)
            .collect();
        vote_similar(file, old, &changed, &mut votes);
    }
    // Blank lines of old_string count where the file has them blank too: they place the window.
    let blanks: Vec<usize> = (0..old.len()).filter(|&j| old_hash[j].is_none()).collect();
    let mut scored: Vec<(usize, f32, f32)> = votes
        .into_iter()
        .map(|(s, v)| {
            let b = blanks
                .iter()
                .filter(|&&j| file.get(s + j).is_some_and(|(_, l)| l.trim().is_empty()))
                .count();
            (s, v, v + 0.25 * b as f32)
        })
        .collect();
    // Only the best matter: keep them, then order them (a sort of every window costs more on a large
    // file of look-alike lines than the search did).
    let Some(best_score) = scored.iter().map(|w| w.2).max_by(f32::total_cmp) else {
        return Vec::new();
    };
    scored.retain(|w| w.2 == best_score);
    scored.sort_unstable_by_key(|w| w.0);
    let (best, best_votes, _) = scored[0];
    if !perfect(best_votes) {
        return vec![best];
    }
    scored
        .iter()
        .filter(|w| perfect(w.1))
        .map(|w| w.0)
        .collect()
}

/// Votes from file lines that share enough trigrams with one of old_string's `changed` lines.
/// Never inlined: inside `not_found` its pass changed how the line-hash pass there was compiled, and
/// a miss that ends after that pass (`mb10_miss_indentation`) took 10% longer.
#[inline(never)]
fn vote_similar(
    file: &[(usize, &str)],
    old: &[&str],
    changed: &[usize],
    votes: &mut HashMap<usize, f32>,
) {
    if changed.is_empty() {
        return;
    }
    let (mut buf, mut gs) = (Vec::new(), Vec::new());
    let mut per_line: Vec<Vec<u32>> = Vec::with_capacity(changed.len());
    for &j in changed {
        grams(old[j], &mut buf, &mut gs);
        per_line.push(gs.clone());
    }
    let sizes: Vec<usize> = per_line.iter().map(Vec::len).collect();
    let table = GramTable::new(&per_line);
    let token_sets: Vec<Vec<u64>> = changed.iter().map(|&j| token_set(old[j])).collect();
    let mut shared = vec![0usize; changed.len()];
    // The hot loop of a miss on a large file.
    for (i, (_, line)) in file.iter().enumerate() {
        shared.iter_mut().for_each(|s| *s = 0);
        let count = shared_grams(line, &table, &mut shared, &mut buf, &mut gs);
        if count == 0 {
            continue;
        }
        let mut line_tokens: Option<Vec<u64>> = None;
        for (bit, &j) in changed.iter().enumerate() {
            let shared = shared[bit].min(sizes[bit]);
            let mut sim = gram_similarity(shared, count, sizes[bit]);
            // Words only where the trigrams already see some likeness: tokenising every line that
            // shares one common trigram would cost more than the rest of the pass.
            if (0.2..SIMILAR).contains(&sim) {
                let ts = line_tokens.get_or_insert_with(|| token_set(line));
                sim = sim.max(token_similarity(&token_sets[bit], ts));
            }
            if sim >= SIMILAR && j <= i {
                *votes.entry(i - j).or_default() += sim;
            }
        }
    }
}

/// Counts into `shared` the trigrams `line` shares with each of old_string's changed lines (a bit
/// each in `table`), and returns how many trigrams `line` has (0 for a blank line). An ASCII line's
/// trigrams are read straight off its bytes (whitespace runs folded as `loose` folds them), with no
/// allocation and no sorting; other lines take the general path (`grams`, into `buf` and `gs`).
#[inline]
fn shared_grams(
    line: &str,
    table: &GramTable,
    shared: &mut [usize],
    buf: &mut Vec<u8>,
    gs: &mut Vec<u32>,
) -> usize {
    if !line.is_ascii() {
        grams(line, buf, gs);
        gs.iter().for_each(|&g| table.hit(g, shared));
        return gs.len();
    }
    let (mut g, mut len, mut space, mut count) = (0u32, 0usize, false, 0usize);
    for &b in line.trim().as_bytes() {
        let b = if b.is_ascii_whitespace() {
            if space {
                continue;
            }
            space = true;
            b' '
        } else {
            space = false;
            b
        };
        g = ((g << 8) | u32::from(b)) & 0xff_ffff;
        len += 1;
        if len >= 3 {
            count += 1;
            table.hit(g, shared);
        }
    }
    if len == 0 {
        return 0;
    }
    if len < 3 {
        table.hit((1 << 24) | g, shared);
        return 1;
    }
    count
}

/// For each trigram of old_string's changed lines, which of them (a bit each) have it: an
/// open-addressing table with a multiplicative hash, since a 10 MB file asks it ten million times and
/// std's SipHash map would be most of the cost.
struct GramTable {
    keys: Vec<u32>,
    masks: Vec<u64>,
    shift: u32,
}

impl GramTable {
    fn new(per_line: &[Vec<u32>]) -> GramTable {
        let n: usize = per_line.iter().map(Vec::len).sum();
        let bits = (n * 4).max(16).next_power_of_two().trailing_zeros();
        let mut t = GramTable {
            keys: vec![u32::MAX; 1 << bits],
            masks: vec![0; 1 << bits],
            shift: 32 - bits,
        };
        for (bit, gs) in per_line.iter().enumerate() {
            for &g in gs {
                let slot = t.slot(g);
                t.keys[slot] = g;
                t.masks[slot] |= 1 << bit;
            }
        }
        t
    }

    /// The slot holding `g`, or the empty one where it would go. Grams are below 2^25, so u32::MAX
    /// marks an empty slot; the table is at most a quarter full, so a probe ends soon.
    fn slot(&self, g: u32) -> usize {
        let mask = self.keys.len() - 1;
        let mut i = (g.wrapping_mul(0x9e37_79b1) >> self.shift) as usize;
        while self.keys[i] != g && self.keys[i] != u32::MAX {
            i = (i + 1) & mask;
        }
        i
    }

    fn get(&self, g: u32) -> u64 {
        self.masks[self.slot(g)]
    }

    /// Adds one to `shared` for each changed line that has the trigram `g`.
    #[inline]
    fn hit(&self, g: u32, shared: &mut [usize]) {
        let mut m = self.get(g);
        while m != 0 {
            shared[m.trailing_zeros() as usize] += 1;
            m &= m - 1;
        }
    }
}

/// What differs between old_string's lines and the file's around a window.
struct Described {
    /// First and last file line (0-based) of the closest text.
    lines: (usize, usize),
    causes: Vec<String>,
    words: Vec<String>,
}

impl Described {
    fn what(&self) -> String {
        match (self.causes.is_empty(), self.words.is_empty()) {
            (true, true) => "its line breaks".into(),
            (false, true) => join_and(&self.causes),
            (true, false) => format!("its words: {}", self.words.join("; ")),
            (false, false) => format!(
                "{} and in its words: {}",
                join_and(&self.causes),
                self.words.join("; ")
            ),
        }
    }
}

fn describe(file: &[(usize, &str)], old: &[&str], ends_line: bool, start: usize) -> Described {
    let (lo, hi) = window_bounds(file, old, start);
    let window: Vec<&str> = file[lo..hi].iter().map(|(_, l)| *l).collect();
    let (mut pairs, missing) = pair_lines(old, &window, start - lo);
    pairs.sort_unstable();
    let first = pairs.iter().map(|p| p.1).min();
    let last = pairs.iter().map(|p| p.1).max();
    let (first, last) = match (first, last) {
        (Some(f), Some(l)) => (f, l),
        _ => (start - lo, (start - lo + old.len()).min(window.len()) - 1),
    };
    let line_no = |i: usize| lo + i + 1;
    // Extra file lines between paired ones.
    let paired: std::collections::HashSet<usize> = pairs.iter().map(|p| p.1).collect();
    let extra: Vec<usize> = (first..=last).filter(|i| !paired.contains(i)).collect();
    let (causes, mut words) = pair_differences(&pairs, old, &window, lo, ends_line);
    for j in missing.into_iter().filter(|&j| !old[j].trim().is_empty()) {
        words.push(format!(
            "old_string's line \"{}\" is not there",
            clip(old[j].trim())
        ));
    }
    for i in extra {
        words.push(format!(
            "line {} \"{}\" is not in old_string",
            line_no(i),
            clip(window[i].trim())
        ));
    }
    words.truncate(MAX_WORD_CHANGES * 2);
    Described {
        lines: (lo + first, lo + last),
        causes,
        words,
    }
}

/// The file lines (0-based, end excluded) looked at for old_string placed at line `start`: slack only
/// at an edge whose line does not line up as it is, since slack lets a line of the file that merely
/// looks like old_string's first or last line take its place.
fn window_bounds(file: &[(usize, &str)], old: &[&str], start: usize) -> (usize, usize) {
    let lines_up = |j: usize| {
        file.get(start + j)
            .is_some_and(|(_, f)| line_similarity(old[j], f) >= SIMILAR)
    };
    let lo = if lines_up(0) {
        start
    } else {
        start.saturating_sub(SLACK)
    };
    let hi = if lines_up(old.len() - 1) {
        start + old.len()
    } else {
        start + old.len() + SLACK
    }
    .min(file.len());
    (lo, hi)
}

/// Pairs of (old line, window line), and old lines with no counterpart, by a line diff of their loose
/// forms; `at`: where the window puts old_string's first line.
fn pair_lines(old: &[&str], window: &[&str], at: usize) -> (Vec<(usize, usize)>, Vec<usize>) {
    let keys = |ls: &[&str]| ls.iter().map(|l| loose_hash(l)).collect::<Vec<_>>();
    let ops = capture_diff_slices_deadline(
        Algorithm::Myers,
        &keys(old),
        &keys(window),
        Some(Instant::now() + DIFF_BUDGET),
    );
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut missing: Vec<usize> = Vec::new();
    for op in ops {
        match op {
            DiffOp::Equal {
                old_index,
                new_index,
                len,
            } => pairs.extend((0..len).map(|k| (old_index + k, new_index + k))),
            DiffOp::Delete {
                old_index, old_len, ..
            } => missing.extend(old_index..old_index + old_len),
            DiffOp::Insert { .. } => {}
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                // The likeliest counterpart: the most alike line, else the one where the window puts it.
                let counterparts = pair_most_alike(
                    old_index..old_index + old_len,
                    new_index..new_index + new_len,
                    SIMILAR,
                    |j, i| line_similarity(old[j], window[i]),
                    |j| Some(at + j),
                );
                for (j, i) in (old_index..).zip(counterparts) {
                    match i {
                        Some(i) => pairs.push((j, i)),
                        None => missing.push(j),
                    }
                }
            }
        }
    }
    (pairs, missing)
}

/// What differs between the lines of each pair (old_string's line `j`, the window's line `i`): the
/// causes (indentation, trailing whitespace, quotes, spacing), and the words of lines whose words
/// differ. `lo`: the window's first file line (0-based).
fn pair_differences(
    pairs: &[(usize, usize)],
    old: &[&str],
    window: &[&str],
    lo: usize,
    ends_line: bool,
) -> (Vec<String>, Vec<String>) {
    let mut causes: Vec<String> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut indents: Vec<(usize, String)> = Vec::new();
    fn note(causes: &mut Vec<String>, d: String) {
        if !causes.contains(&d) {
            causes.push(d)
        }
    }
    let line_no = |i: usize| lo + i + 1;
    for &(j, i) in pairs {
        let (o, f) = (old[j], window[i]);
        if o == f {
            continue;
        }
        let (oi, fi) = (indent_of(o), indent_of(f));
        if oi != fi && !(j == 0 && oi.is_empty()) {
            indents.push((line_no(i), describe_indent(oi, fi)));
        }
        let trailing_differs = o.trim_end() != o || f.trim_end() != f;
        let (ot, ft) = (o.trim(), f.trim());
        let may_end_inside = j + 1 == old.len() && !ends_line;
        if trailing_differs
            && (o.trim_end() == f.trim_end() || ot == ft)
            && !(may_end_inside && o.trim_end() == o)
        {
            note(&mut causes, "trailing whitespace".into());
        }
        if ot == ft {
            continue;
        }
        if plain(ot) == plain(ft) {
            note(&mut causes, describe_quotes(o, f));
        } else if loose(o) == loose(f) {
            note(&mut causes, "spacing inside a line".into());
        } else {
            words.extend(word_changes(ot, ft, line_no(i), j == 0, may_end_inside));
        }
    }
    if !indents.is_empty() {
        let kinds: Vec<&String> = indents.iter().map(|(_, d)| d).collect();
        let d = if kinds.iter().all(|d| *d == kinds[0]) {
            kinds[0].clone()
        } else {
            let ls: Vec<String> = indents.iter().map(|(l, _)| l.to_string()).collect();
            format!("indentation (lines {})", join_and(&ls))
        };
        causes.insert(0, d);
    }
    (causes, words)
}

/// The words of one line that changed: `line 14 has "dog" where old_string has "cat"`. On old_string's
/// first and last lines, file text before or after it is not a difference (old_string may start or
/// end inside a line).
fn word_changes(old: &str, file: &str, line: usize, first: bool, last: bool) -> Vec<String> {
    let o = tokens(old);
    let f = tokens(file);
    let key = |t: &&str| plain(t);
    let ok: Vec<String> = o.iter().map(key).collect();
    let fk: Vec<String> = f.iter().map(key).collect();
    let ops = capture_diff_slices_deadline(
        Algorithm::Myers,
        &ok,
        &fk,
        Some(Instant::now() + DIFF_BUDGET),
    );
    let mut out = Vec::new();
    let n = ops.len();
    for (k, op) in ops.iter().enumerate() {
        let (or, fr) = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => (old_index..old_index + old_len, new_index..new_index),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index..old_index, new_index..new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index..old_index + old_len,
                new_index..new_index + new_len,
            ),
        };
        if or.is_empty() && ((first && k == 0) || (last && k + 1 == n)) {
            continue;
        }
        // One side empty: widen by the neighbouring token so the text quoted says where.
        let (or, fr) = if (or.is_empty() || fr.is_empty()) && or.start > 0 && fr.start > 0 {
            (or.start - 1..or.end, fr.start - 1..fr.end)
        } else if or.is_empty() || fr.is_empty() {
            (
                or.start..(or.end + 1).min(o.len()),
                fr.start..(fr.end + 1).min(f.len()),
            )
        } else {
            (or, fr)
        };
        let (or, fr) = (atom(&o, or), atom(&f, fr));
        let (ot, ft) = (o[or].concat(), f[fr].concat());
        out.push(format!(
            "line {line} has \"{}\" where old_string has \"{}\"",
            clip(ft.trim()),
            clip(ot.trim())
        ));
        if out.len() == MAX_WORD_CHANGES {
            break;
        }
    }
    out
}

/// A range of tokens widened to the whole run it sits in between spaces, quotes, brackets and
/// separators, so that "0.4.17" is quoted whole, not "17".
fn atom(tokens: &[&str], r: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let joins = |t: &str| {
        !t.chars()
            .any(|c| c.is_whitespace() || "\"'`“”‘’()[]{}<>,;:=".contains(c))
    };
    let (mut s, mut e) = (r.start, r.end);
    if s == e || !tokens[s..e].iter().all(|t| joins(t)) {
        return r;
    }
    while s > 0 && joins(tokens[s - 1]) {
        s -= 1;
    }
    while e < tokens.len() && joins(tokens[e]) {
        e += 1;
    }
    s..e
}

fn clip(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

fn describe_indent(old: &str, file: &str) -> String {
    let tabs = |s: &str| s.contains('\t');
    match (tabs(old), tabs(file)) {
        (false, true) => "indentation (the file indents with tabs, old_string with spaces)".into(),
        (true, false) => "indentation (the file indents with spaces, old_string with tabs)".into(),
        _ => format!(
            "indentation (the file has {} leading characters, old_string {})",
            file.chars().count(),
            old.chars().count()
        ),
    }
}

fn describe_quotes(old: &str, file: &str) -> String {
    let fancy = |s: &str| s.chars().any(|c| plain_char(c) != c);
    match (fancy(old), fancy(file)) {
        (false, true) => {
            "quotes or dashes (the file has typographic ones, old_string plain ones)".into()
        }
        (true, false) => {
            "quotes or dashes (the file has plain ones, old_string typographic ones)".into()
        }
        _ => "quotes or dashes".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matches of `needle` in `text`, as the engine finds them (non-overlapping, in order).
    fn found(text: &str, needle: &str) -> Vec<(usize, usize)> {
        text.match_indices(needle)
            .map(|(s, m)| (s, s + m.len()))
            .collect()
    }

    #[test]
    fn match_lines_counts_matches_and_names_each_line_once() {
        let t = |text: &str| match_lines(text, &found(text, "ab"));
        assert_eq!(t("ab\nx\nab\n"), "Matches are at lines 1 and 3.");
        assert_eq!(t("ab ab\n"), "Matches are at line 1 (2 matches).");
        assert_eq!(
            t("ab\nab ab\n"),
            "Matches are at lines 1 and 2 (3 matches: 2 on line 2)."
        );
        assert_eq!(
            t("ab ab ab\nx\nab\nab ab\n"),
            "Matches are at lines 1, 3 and 4 (6 matches: 3 on line 1 and 2 on line 4)."
        );
        let many = "ab ab\n".repeat(60);
        let text = t(&many);
        assert!(
            text.starts_with("Matches are at lines 1, 2, 3, ")
                && text.contains(", 49, 50 and 10 more (120 matches: 2 on line 1, 2 on line 2, ")
                && text.ends_with(", 2 on line 50 and 10 more)."),
            "{text}"
        );
    }
}
