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
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => '-',
        '\u{00a0}' | '\u{2007}' | '\u{202f}' => ' ',
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
