//! Random cases from a byte string: the fuzzer hands its input, the proptest driver random bytes.
//! One generator for both, so a crash found by either replays in the other.
//!
//! Texts are built from a small alphabet of pieces chosen to collide: line breaks of every kind (LF,
//! CRLF, lone CR, mixed), a BOM (also in the middle), astral and multi-byte characters, NUL. Old strings
//! are mostly cut from the text or from earlier new strings, so edits match, chain and overlap.

use super::model::{Edit, Expect, File, Plan, BOM};

pub const PIECES: &[&str] = &[
    "a", "b", "ab", "aa", "ba", " ", "\t", "\n", "\r\n", "\r", "é", "😀", "\0", BOM, "x\n",
    "\r\n\r\n", "ß", "\n\n",
];

/// Rarer pieces (in one case in four, one byte value in sixteen picks one) for the tolerant matcher: typographic quotes and
/// dashes, odd spaces, indentation, trailing whitespace, a combining accent.
pub const TYPOGRAPHY: &[&str; 16] = &[
    "\u{201c}", "\u{201d}", "\u{2019}", "'", "\"", "\u{2014}", "-", "  ", "\u{a0}", "    x", "\tx",
    " \n", "x \n", "\u{2013}", "e\u{301}", "\u{fb01}",
];

struct Source<'a> {
    data: &'a [u8],
    pos: usize,
    typography: bool,
}

impl Source<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn below(&mut self, n: usize) -> usize {
        self.byte() as usize % n
    }
    fn pieces(&mut self, max: usize) -> String {
        let k = self.below(max + 1);
        (0..k)
            .map(|_| match self.byte() {
                b @ 240.. if self.typography => TYPOGRAPHY[b as usize - 240],
                b => PIECES[b as usize % PIECES.len()],
            })
            .collect()
    }
    /// A run of 1 to 6 characters of `pool`, or random pieces when the pool is empty.
    fn cut(&mut self, pool: &str) -> String {
        let starts: Vec<usize> = pool.char_indices().map(|(i, _)| i).collect();
        if starts.is_empty() {
            return self.pieces(3);
        }
        let a = self.below(starts.len());
        let len = 1 + self.below(6);
        let end = starts.get(a + len).copied().unwrap_or(pool.len());
        pool[starts[a]..end].to_string()
    }
}

#[derive(Debug, Clone)]
pub struct Case {
    pub plan: Plan,
    pub texts: Vec<Option<String>>,
}

impl Case {
    pub fn originals(&self) -> Vec<Option<&str>> {
        self.texts.iter().map(|t| t.as_deref()).collect()
    }
}

pub fn case(data: &[u8]) -> Case {
    let mut s = Source {
        data,
        pos: 0,
        typography: false,
    };
    let flags = s.byte();
    s.typography = flags & 0xc0 == 0xc0;
    let partial = flags & 3 == 0;
    let claude_code = flags & 12 == 0;
    let nfiles = if flags & 0x30 == 0 { 2 } else { 1 };
    let mut files = Vec::new();
    let mut texts = Vec::new();
    for fi in 0..nfiles {
        let kind = s.byte();
        let mut text = s.pieces(24);
        if kind & 7 == 0 {
            text.insert_str(0, BOM);
        }
        let text = match kind >> 3 {
            0..=1 => None,
            2 => Some(String::new()),
            _ => Some(text),
        };
        // One plan in eight is large (20 to 51 edits): past 24 distinct needles the engine indexes the
        // text with one multi-pattern pass instead of one search per needle.
        let b = s.byte() as usize;
        let mut text = text;
        let nedits = if b >= 224 {
            if let Some(t) = text.as_mut().filter(|t| !t.is_empty()) {
                t.push_str(&s.pieces(120));
            }
            20 + (b - 224)
        } else {
            1 + b % 5
        };
        let mut pool = text.clone().unwrap_or_default();
        let mut edits = Vec::new();
        for e in 0..nedits {
            let how = s.byte();
            let creating = e == 0 && text.as_deref().is_none_or(str::is_empty) && how & 1 == 1;
            let old = match how & 7 {
                _ if creating => String::new(),
                0 => String::new(),
                1 | 2 => s.pieces(3),
                _ => s.cut(&pool),
            };
            let new = match (how >> 3) & 7 {
                0 => old.clone(),
                1 => String::new(),
                2 => format!("{old}{}", s.pieces(2)),
                3 => format!("{}{old}", s.pieces(2)),
                4 => old.replace('a', "b"),
                _ => s.pieces(4),
            };
            let expect = match how >> 6 {
                0 | 1 => Expect::One,
                2 => Expect::All,
                _ => Expect::Exactly(1 + s.below(3)),
            };
            pool.push_str(&new);
            edits.push(Edit { old, new, expect });
        }
        files.push(File {
            path: format!("/work/f{fi}.txt"),
            edits,
        });
        texts.push(text);
    }
    Case {
        plan: Plan {
            files,
            partial,
            claude_code,
        },
        texts,
    }
}
