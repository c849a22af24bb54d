//! SEARCH/REPLACE blocks, Aider's edit format and the variant Cline and Roo Code use:
//!
//! ````text
//! src/app.py
//! ```python
//! <<<<<<< SEARCH            (Cline, Roo: ------- SEARCH)
//! def f():
//!     return 1
//! =======
//! def f():
//!     return 2
//! >>>>>>> REPLACE           (Cline, Roo: +++++++ REPLACE)
//! ```
//! ````
//!
//! The path is the last non-blank line before the block or before the fence it sits in; a block with
//! none edits the previous block's file, as Aider reads it. Everything outside blocks is prose.
//! A block says nothing about where its text lies, so its anchor only asks for whole lines.

use super::{Format, Hunk, Patch, PatchFile, PatchOp};
use super::unified::{bare, quote, whole};
use crate::engine::{Anchor, Refusal};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Marker {
    /// `<<<<<<< SEARCH` (`true`) or `------- SEARCH` (`false`).
    Search(bool),
    Divider,
    Replace,
}

/// A marker line: 5 to 9 marker characters, then the word, then nothing but whitespace.
fn marker(line: &str) -> Option<Marker> {
    let t = line.trim_end();
    let first = t.chars().next()?;
    let n = t.chars().take_while(|&c| c == first).count();
    if !(5..=9).contains(&n) {
        return None;
    }
    match (first, t[n..].trim_start()) {
        ('<', "SEARCH") => Some(Marker::Search(true)),
        ('-', "SEARCH") => Some(Marker::Search(false)),
        ('=', "") => Some(Marker::Divider),
        ('>' | '+', "REPLACE") => Some(Marker::Replace),
        _ => None,
    }
}

pub fn looks_like(text: &str) -> bool {
    text.lines().any(|l| matches!(marker(l), Some(Marker::Search(_))))
}

pub fn parse(text: &str) -> Result<Patch, Refusal> {
    // Split on '\n' only, each line keeping its break: a CRLF text keeps its '\r' in the block text.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut files: Vec<PatchFile> = Vec::new();
    let mut previous: Option<String> = None;
    let mut n = 0;
    // Where the previous block ended: the path is looked for after it only.
    let mut after = 0;
    let mut i = 0;
    while i < lines.len() {
        let t = bare(lines[i]);
        let angled = match marker(t) {
            None => {
                i += 1;
                continue;
            }
            Some(Marker::Search(angled)) => angled,
            Some(_) => {
                return Err(Refusal::invalid(format!(
                    "InputValidationError: line {} of the text ({}) is a SEARCH/REPLACE marker outside any block: a \
                     block is a line `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and \
                     `>>>>>>> REPLACE`; open the block with `<<<<<<< SEARCH` or remove the stray marker",
                    i + 1,
                    quote(t)
                )))
            }
        };
        n += 1;
        let Some(path) = path_before(&lines, after, i).or_else(|| previous.clone()) else {
            return Err(Refusal::invalid(format!(
                "InputValidationError: SEARCH/REPLACE block {n} names no file: put the file's path on the line before \
                 {} (line {} of the text)",
                t.trim_end(),
                i + 1
            )));
        };
        let (search, replace, end) = block(&lines, i, n, angled)?;
        let anchor = Anchor { label: format!("SEARCH/REPLACE block {n} ({path})"), ..Anchor::default() };
        let hunk = Hunk { old: search, new: replace, anchor };
        match files.iter_mut().find(|f| f.path == path) {
            Some(f) => f.hunks.push(hunk),
            None => files.push(PatchFile { path: path.clone(), op: PatchOp::Update, hunks: vec![hunk] }),
        }
        previous = Some(path);
        after = end + 1;
        i = end + 1;
    }
    if files.is_empty() {
        return Err(Refusal::invalid(
            "InputValidationError: the text holds no SEARCH/REPLACE block: write the file's path on a line, then \
             `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and `>>>>>>> REPLACE`",
        ));
    }
    Ok(Patch { format: Format::SearchReplace, files })
}

/// The block opened at line `open`: its SEARCH text, its REPLACE text and the index of its closing line.
fn block(lines: &[&str], open: usize, n: usize, angled: bool) -> Result<(String, String, usize), Refusal> {
    let (divider, close) = ("=======", if angled { ">>>>>>> REPLACE" } else { "+++++++ REPLACE" });
    let unterminated = |missing: &str, at: Option<usize>| {
        let before = match at {
            Some(j) => format!("line {}, which opens another block", j + 1),
            None => "the end of the text".to_string(),
        };
        Refusal::invalid(format!(
            "InputValidationError: SEARCH/REPLACE block {n} (begun at line {} of the text) has no `{missing}` line \
             before {before}: a block is a line `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and \
             `>>>>>>> REPLACE`",
            open + 1
        ))
    };
    let mut search = String::new();
    let mut j = open + 1;
    loop {
        let Some(&raw) = lines.get(j) else { return Err(unterminated(divider, None)) };
        match marker(bare(raw)) {
            Some(Marker::Divider) => break,
            Some(Marker::Search(_)) => return Err(unterminated(divider, Some(j))),
            Some(Marker::Replace) => {
                return Err(Refusal::invalid(format!(
                    "InputValidationError: SEARCH/REPLACE block {n} (begun at line {} of the text) reaches its REPLACE \
                     marker at line {} without a `=======` line: put a line `=======` between the lines to find and \
                     their replacement",
                    open + 1,
                    j + 1
                )))
            }
            None => search.push_str(&whole(raw)),
        }
        j += 1;
    }
    // A second `=======` in the replacement is taken as text (a Markdown heading's underline, a
    // conflict marker): only the REPLACE marker ends a block.
    let mut replace = String::new();
    j += 1;
    loop {
        let Some(&raw) = lines.get(j) else { return Err(unterminated(close, None)) };
        match marker(bare(raw)) {
            Some(Marker::Replace) => return Ok((search, replace, j)),
            Some(Marker::Search(_)) => return Err(unterminated(close, Some(j))),
            _ => replace.push_str(&whole(raw)),
        }
        j += 1;
    }
}

/// The path written for the block opened at line `open`: the last non-blank line before it, or
/// before the fence it sits in, looking no further back than `from`.
fn path_before(lines: &[&str], from: usize, open: usize) -> Option<String> {
    let previous_line = |before: usize| (from..before).rev().find(|&j| !bare(lines[j]).trim().is_empty());
    let mut k = previous_line(open)?;
    if bare(lines[k]).trim_start().starts_with("```") {
        k = previous_line(k)?;
    }
    let t = bare(lines[k]).trim();
    // A fence there closes an earlier code block; a marker there ends the previous block.
    if t.starts_with("```") || marker(t).is_some() {
        return None;
    }
    clean_path(t)
}

/// `**src/app.py:**`, `` `src/app.py` ``: the path without its decoration. A line with spaces that
/// reads as a sentence (`Now update the handler:`) names no file, unless it holds one backticked
/// name (``Edit `src/app.py`:``).
fn clean_path(t: &str) -> Option<String> {
    let mut p = t;
    for _ in 0..2 {
        p = p.trim().trim_end_matches(':').trim().trim_matches(['*', '`']).trim();
    }
    if p.is_empty() {
        return None;
    }
    if !p.contains(char::is_whitespace) {
        return Some(p.to_string());
    }
    let spans: Vec<&str> = t.split('`').collect();
    if spans.len() == 3 && !spans[1].trim().is_empty() {
        return Some(spans[1].trim().to_string());
    }
    if t.trim_end_matches(['*', '`']).trim_end().ends_with([':', '.']) {
        return None;
    }
    Some(p.to_string())
}
