//! Small text helpers shared by the hints and the tolerant matcher.

/// Byte offset where each line starts (a line ends at `\n`).
pub fn line_starts(text: &str) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    v
}

/// 1-based line number of a byte offset, given `line_starts`.
pub fn line_of(starts: &[usize], offset: usize) -> usize {
    starts.partition_point(|&s| s <= offset)
}

/// The lines of `text` without their `\n`, with their start offsets.
pub fn lines_with_offsets(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', text.as_bytes()) {
        out.push((start, &text[start..nl]));
        start = nl + 1;
    }
    out.push((start, &text[start..]));
    out
}

/// Straight quotes, plain dashes and plain spaces for their typographic twins.
pub fn plain_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{201b}' | '\u{2032}' => '\'',
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{201f}' | '\u{2033}' => '"',
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{00a0}' | '\u{2002}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => ' ',
        c => c,
    }
}

pub fn plain(s: &str) -> String {
    s.chars().map(plain_char).collect()
}

/// A line reduced to what a reader sees: no surrounding whitespace, runs of inner whitespace as one
/// space, typographic quotes and dashes made plain.
pub fn loose(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().map(plain_char));
    }
    out
}

pub fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The length in bytes of the text `a` and `b` start with, whole characters only.
pub fn common_prefix(a: &str, b: &str) -> usize {
    let mut n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while n > 0 && !a.is_char_boundary(n) {
        n -= 1;
    }
    n
}

/// The leading whitespace every one of `lines` starts with (compared by whole characters: an
/// indentation may hold multi-byte spaces, U+3000); `None` for no line.
pub fn common_indent<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    lines
        .into_iter()
        .map(indent_of)
        .reduce(|base, indent| &indent[..common_prefix(base, indent)])
}

/// The distinct trigrams of a line's loose form (a shorter line is its own gram).
pub fn grams(line: &str, buf: &mut Vec<u8>, out: &mut Vec<u32>) {
    buf.clear();
    buf.extend_from_slice(loose(line).as_bytes());
    out.clear();
    if buf.len() < 3 {
        if !buf.is_empty() {
            out.push((1 << 24) | buf.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)));
        }
        return;
    }
    out.extend(
        buf.windows(3)
            .map(|w| (u32::from(w[0]) << 16) | (u32::from(w[1]) << 8) | u32::from(w[2])),
    );
    out.sort_unstable();
    out.dedup();
}

pub fn gram_similarity(shared: usize, file: usize, old: usize) -> f32 {
    if file == 0 || old == 0 {
        return 0.0;
    }
    let dice = 2.0 * shared as f32 / (file + old) as f32;
    // old_string's first or last line is often part of a longer file line (a line too short to say
    // much is not taken for part of one).
    let contained = if old >= 5 {
        0.8 * shared as f32 / old as f32
    } else {
        0.0
    };
    dice.max(contained)
}

/// How alike two lines read, 0 to 1: shared character trigrams of their loose forms, or shared
/// tokens where a whole word changed (`fn main(){}` against `fn quokka(){}` share few trigrams).
pub fn line_similarity(a: &str, b: &str) -> f32 {
    let (mut buf, mut ga, mut gb) = (Vec::new(), Vec::new(), Vec::new());
    grams(a, &mut buf, &mut ga);
    grams(b, &mut buf, &mut gb);
    let shared = ga.iter().filter(|g| gb.binary_search(g).is_ok()).count();
    gram_similarity(shared, gb.len(), ga.len()).max(token_similarity(&token_set(a), &token_set(b)))
}

/// The distinct words of a line (punctuation left out: `c();` and `log();` are not alike), hashed
/// and sorted.
pub fn token_set(line: &str) -> Vec<u64> {
    let mut out: Vec<u64> = tokens(line)
        .into_iter()
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .map(|t| {
            t.chars()
                .map(plain_char)
                .fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
                    (h ^ u64::from(c)).wrapping_mul(0x100_0000_01b3)
                })
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

pub fn token_similarity(a: &[u64], b: &[u64]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let shared = a.iter().filter(|t| b.binary_search(t).is_ok()).count();
    2.0 * shared as f32 / (a.len() + b.len()) as f32
}

/// Words, runs of whitespace, and single other characters.
pub fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            0
        } else if c.is_whitespace() {
            1
        } else {
            2
        }
    };
    let mut prev: Option<u8> = None;
    for (i, c) in s.char_indices() {
        let k = class(c);
        if let Some(p) = prev {
            if p != k || k == 2 {
                out.push(&s[start..i]);
                start = i;
            }
        }
        prev = Some(k);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// Pairs each line of `lines` (a run of replaced lines) with its most alike line of `others`, in
/// order: a line's counterpart is looked for after the previous line's, so pairs never cross. The
/// most alike is the one whose `similarity(line, other)` is highest and at least `threshold` (the
/// first of equals); a line with none takes the line `fallback` names, if that is still free. Each
/// caller keeps its own threshold: what passes for the same line, changed, is its own call.
pub fn pair_most_alike(
    lines: std::ops::Range<usize>,
    others: std::ops::Range<usize>,
    threshold: f32,
    similarity: impl Fn(usize, usize) -> f32,
    fallback: impl Fn(usize) -> Option<usize>,
) -> Vec<Option<usize>> {
    let mut next = others.start;
    lines
        .map(|line| {
            let free = next..others.end;
            let best = free
                .clone()
                .map(|other| (other, similarity(line, other)))
                .filter(|&(_, s)| s >= threshold)
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
                .map(|(other, _)| other)
                .or_else(|| fallback(line).filter(|at| free.contains(at)));
            if let Some(other) = best {
                next = other + 1;
            }
            best
        })
        .collect()
}

/// The label at the start of a sentence: `Hunk 2 of src/a.rs`.
pub fn cap(label: &str) -> String {
    let mut c = label.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_indentation_is_cut_at_whole_characters() {
        assert_eq!(common_indent(["\t  a", "\t b", "\t    c"]), Some("\t "));
        assert_eq!(common_indent(["  a"]), Some("  "));
        assert_eq!(common_indent(Vec::<&str>::new()), None);
        // En space and em space share their first two bytes: no part of a character is common.
        assert_eq!(common_indent(["\u{2002}a", "\u{2003}b"]), Some(""));
        assert_eq!(
            common_indent(["\u{3000}\u{3000}a", "\u{3000} b"]),
            Some("\u{3000}")
        );
    }
}
