//! `match: tolerant`: what to try, in order, after an exact miss. Each tier must find exactly one
//! place; a tier that finds several stops the search (a looser tier would only be more ambiguous).

use serde::Serialize;

use super::text::{indent_of, lines_with_offsets, plain, plain_char};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Lines equal but for trailing whitespace.
    LineTrimmed,
    /// Lines equal but for leading and trailing whitespace; new_string is re-indented.
    Indentation,
    /// Equal once typographic quotes, dashes and spaces are made plain; new_string is re-curled.
    Quotes,
}

impl Tier {
    pub fn describe(self) -> &'static str {
        match self {
            Tier::LineTrimmed => "ignoring trailing whitespace",
            Tier::Indentation => "ignoring indentation",
            Tier::Quotes => "ignoring quote and dash style",
        }
    }
}

pub struct TolerantMatch {
    pub start: usize,
    pub end: usize,
    pub new_text: String,
    pub tier: Tier,
}

enum Found {
    None,
    One(usize, usize),
    Several,
}

pub fn find(current: &str, old: &str, new: &str) -> Option<TolerantMatch> {
    let lines = lines_with_offsets(current);
    let mut old_lines: Vec<&str> = old.split('\n').collect();
    let keeps_newline = old.ends_with('\n') && old_lines.len() > 1;
    if keeps_newline {
        old_lines.pop();
    }
    type SameLine = fn(&str, &str) -> bool;
    let tiers: [(Tier, SameLine); 2] =
        [(Tier::LineTrimmed, |a, b| a.trim_end() == b.trim_end()), (Tier::Indentation, |a, b| a.trim() == b.trim())];
    for (tier, same) in tiers {
        match find_lines(current, &lines, &old_lines, keeps_newline, same) {
            Found::One(s, e) => {
                let new_text = match tier {
                    Tier::Indentation => reindent(&old_lines, &current[s..e], new),
                    _ => new.to_string(),
                };
                return Some(TolerantMatch { start: s, end: e, new_text, tier });
            }
            Found::Several => return None,
            Found::None => {}
        }
    }
    let (s, e) = find_plain(current, old)?;
    let new_text = if current[s..e] != *old { recurl(new, &current[s..e]) } else { new.to_string() };
    Some(TolerantMatch { start: s, end: e, new_text, tier: Tier::Quotes })
}

fn find_lines(
    current: &str,
    lines: &[(usize, &str)],
    old: &[&str],
    keeps_newline: bool,
    same: fn(&str, &str) -> bool,
) -> Found {
    let k = old.len();
    if k == 0 || k > lines.len() || old.iter().all(|l| l.trim().is_empty()) {
        return Found::None;
    }
    let mut hit = None;
    for c in 0..=lines.len() - k {
        if (0..k).all(|j| same(old[j], lines[c + j].1)) {
            if hit.is_some() {
                return Found::Several;
            }
            hit = Some(c);
        }
    }
    let Some(c) = hit else { return Found::None };
    let start = lines[c].0;
    let (lo, ll) = lines[c + k - 1];
    let mut end = lo + ll.len();
    if keeps_newline && end < current.len() {
        end += 1;
    }
    Found::One(start, end)
}

/// new_string with old_string's indentation swapped for the file's, line by line.
fn reindent(old_lines: &[&str], region: &str, new: &str) -> String {
    let Some(first) = old_lines.iter().position(|l| !l.trim().is_empty()) else { return new.to_string() };
    let old_indent = indent_of(old_lines[first]);
    let file_indent = indent_of(region.split('\n').nth(first).unwrap_or(""));
    let tab_width = if file_indent.contains('\t') && !old_indent.contains('\t') && !file_indent.is_empty() {
        Some((old_indent.len() / file_indent.len()).max(1))
    } else {
        None
    };
    let lines: Vec<String> = new
        .split('\n')
        .map(|line| {
            if line.trim().is_empty() {
                return line.to_string();
            }
            let rest = line.strip_prefix(old_indent).unwrap_or_else(|| line.trim_start());
            let extra = indent_of(rest);
            let extra = match tab_width {
                Some(w) if !extra.contains('\t') => "\t".repeat(extra.len() / w) + &" ".repeat(extra.len() % w),
                _ => extra.to_string(),
            };
            format!("{file_indent}{extra}{}", rest.trim_start())
        })
        .collect();
    lines.join("\n")
}

/// A unique match of `old` in `current` once both are made plain; byte range in `current`.
fn find_plain(current: &str, old: &str) -> Option<(usize, usize)> {
    let needle = plain(old);
    if needle.is_empty() {
        return None;
    }
    let mut hay = String::with_capacity(current.len());
    let mut map = Vec::with_capacity(current.len() + 1);
    for (i, c) in current.char_indices() {
        let p = plain_char(c);
        for _ in 0..p.len_utf8() {
            map.push(i);
        }
        hay.push(p);
    }
    map.push(current.len());
    let mut it = memchr::memmem::find_iter(hay.as_bytes(), needle.as_bytes());
    let s = it.next()?;
    if it.next().is_some() {
        return None;
    }
    let e = s + needle.len();
    // `e` sits at the start of the char after the match, or at the end.
    Some((map[s], if e < map.len() - 1 { map[e] } else { current.len() }))
}

/// Straight quotes in `new` curled the way the matched text curls them.
fn recurl(new: &str, matched: &str) -> String {
    let curly_double = matched.contains(['\u{201c}', '\u{201d}']);
    let curly_single = matched.contains(['\u{2018}', '\u{2019}']);
    let mut out = String::with_capacity(new.len());
    let mut prev: Option<char> = None;
    let chars: Vec<char> = new.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let opening = prev.is_none_or(|p| p.is_whitespace() || "([{\u{2014}\u{2013}".contains(p));
        let next = chars.get(i + 1).copied();
        let r = match c {
            '"' if curly_double => {
                if opening {
                    '\u{201c}'
                } else {
                    '\u{201d}'
                }
            }
            '\'' if curly_single => {
                let between_letters = prev.is_some_and(char::is_alphabetic) && next.is_some_and(char::is_alphabetic);
                if opening && !between_letters {
                    '\u{2018}'
                } else {
                    '\u{2019}'
                }
            }
            c => c,
        };
        out.push(r);
        prev = Some(c);
    }
    out
}
