//! What assistants get wrong in an edit they derive from a file: the indentation unit, trailing
//! whitespace, typographic quotes, a word the file no longer has. Each mistake is applied to one
//! derived edit, and a refusal's hint is checked for naming the mistake and where it is.

use super::derive::DerivedEdit;
use super::images::{hash, spaces_to_tabs, tabs_to_spaces};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mistake {
    /// old_string and new_string indented with tabs where the file has spaces.
    SpacesAsTabs,
    /// old_string and new_string indented with 4 spaces where the file has tabs.
    TabsAsSpaces,
    /// old_string's lines without their trailing whitespace.
    TrailingStripped,
    /// old_string with plain quotes and dashes where the file has typographic ones.
    PlainQuotes,
    /// One word of old_string replaced with another (the file changed since it was read).
    ChangedWord,
}

impl Mistake {
    pub fn name(self) -> &'static str {
        match self {
            Mistake::SpacesAsTabs => "spaces as tabs",
            Mistake::TabsAsSpaces => "tabs as spaces",
            Mistake::TrailingStripped => "trailing ws stripped",
            Mistake::PlainQuotes => "plain quotes",
            Mistake::ChangedWord => "changed word",
        }
    }

    /// The words a hint must use to name this mistake.
    pub fn cause(self) -> &'static [&'static str] {
        match self {
            Mistake::SpacesAsTabs | Mistake::TabsAsSpaces => &["indentation"],
            Mistake::TrailingStripped => &["trailing whitespace"],
            Mistake::PlainQuotes => &["quotes", "dashes"],
            Mistake::ChangedWord => &[],
        }
    }
}

/// The edit as written with `mistake`, if the mistake changes it.
pub struct Sloppy {
    pub old: String,
    pub new: String,
    /// 0-based line of the file (the text before the edit) the hint must name.
    pub line: usize,
    /// For a changed word: the file's word and old_string's.
    pub words: Option<(String, String)>,
}

const OTHER_WORDS: &[&str] = &["zebra", "quokka", "walrus", "heron", "ocelot"];

pub fn apply(mistake: Mistake, e: &DerivedEdit, indent_unit: usize) -> Option<Sloppy> {
    let per_line =
        |s: &str, f: &dyn Fn(&str) -> String| s.split('\n').map(f).collect::<Vec<_>>().join("\n");
    let mut words = None;
    let mut line = e.first_line;
    let (old, new) = match mistake {
        Mistake::SpacesAsTabs => {
            let f = |l: &str| spaces_to_tabs(l, indent_unit);
            (per_line(&e.old, &f), per_line(&e.new, &f))
        }
        Mistake::TabsAsSpaces => {
            let f = |l: &str| tabs_to_spaces(l, 4);
            (per_line(&e.old, &f), per_line(&e.new, &f))
        }
        Mistake::TrailingStripped => (
            per_line(&e.old, &|l: &str| {
                l.trim_end_matches([' ', '\t']).to_string()
            }),
            e.new.clone(),
        ),
        Mistake::PlainQuotes => {
            // A truth that writes more plain quotes or dashes of a kind old_string has in curly form
            // may be turning a curly one plain: a straightened plan cannot tell that from keeping it, and
            // the documented rule re-curls what it kept. Not a mistake this test can judge.
            let count = |s: &str, c: char| s.chars().filter(|&x| x == c).count();
            let curly_turned_plain = e.old.chars().filter(|&c| plain_char(c) != c).any(|c| {
                let p = plain_char(c);
                count(&e.new, p) > count(&e.old, p)
            });
            if curly_turned_plain {
                return None;
            }
            (e.old.chars().map(plain_char).collect(), e.new.clone())
        }
        Mistake::ChangedWord => {
            let (j, from, to) = changed_word(e)?;
            let mut lines: Vec<String> = e.old.split('\n').map(str::to_string).collect();
            lines[j] = replace_word(&lines[j], &from, &to);
            line = e.first_line + j;
            words = Some((from, to));
            (lines.join("\n"), e.new.clone())
        }
    };
    let normal = |s: &str| s.replace("\r\n", "\n");
    // Not a mistake if nothing changed, or if the text as written is in the file anyway.
    if old == e.old || normal(&e.before).contains(&normal(&old)) {
        return None;
    }
    Some(Sloppy {
        old,
        new,
        line,
        words,
    })
}

/// The plain form of typographic quotes and dashes.
fn plain_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' => '\'',
        '\u{201c}' | '\u{201d}' => '"',
        '\u{2013}' | '\u{2014}' => '-',
        c => c,
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The ASCII words of `line` (4 letters or more), with their byte offsets.
fn words(line: &str) -> impl Iterator<Item = (usize, &str)> {
    line.split(|c: char| !is_word_char(c))
        .filter(|w| w.len() >= 4 && w.chars().all(|c| c.is_ascii_alphabetic()))
        .map(move |w| (w.as_ptr() as usize - line.as_ptr() as usize, w))
}

/// A line of old_string (changed lines first) and a word of it to replace, with its replacement.
fn changed_word(e: &DerivedEdit) -> Option<(usize, String, String)> {
    let lines: Vec<&str> = e.old.split('\n').collect();
    let order = e
        .changed
        .clone()
        .chain(0..e.changed.start)
        .chain(e.changed.end..lines.len());
    for j in order.filter(|&j| j < lines.len()) {
        if let Some((_, w)) = words(lines[j]).next() {
            let to = (0..OTHER_WORDS.len())
                .map(|i| OTHER_WORDS[(hash(w) as usize + i) % OTHER_WORDS.len()])
                .find(|o| !lines[j].contains(o))?;
            return Some((j, w.to_string(), to.to_string()));
        }
    }
    None
}

fn replace_word(line: &str, from: &str, to: &str) -> String {
    let (at, _) = words(line)
        .find(|(_, w)| *w == from)
        .expect("the word is on the line");
    format!("{}{to}{}", &line[..at], &line[at + from.len()..])
}

/// The part of a hint that describes (the file's text it quotes after it is left out).
pub fn summary(hint: &str) -> &str {
    hint.split("The file has there:").next().unwrap_or(hint)
}

/// Whether `text` names 1-based line `n` (`line n`, `lines n-m`, `line n:`).
pub fn names_line(text: &str, n: usize) -> bool {
    text.match_indices("line").any(|(i, _)| {
        let rest = text[i + 4..].trim_start_matches('s').trim_start();
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse() == Ok(n)
    })
}

/// Whether `text` has `word` as a whole word.
pub fn names_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(is_word_char)
            && !text[i + word.len()..]
                .chars()
                .next()
                .is_some_and(is_word_char)
    })
}
