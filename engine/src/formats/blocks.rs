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
//! The path is the last non-blank line before the block or before the fence it sits in (decoration
//! such as `# `, `**` and backticks taken off), or alone in a code block of its own just before; a
//! block with none edits the previous block's file, as Aider reads it, and the first one the file the
//! request names (`file_path`: Roo Code sends the path beside the blocks). Everything outside blocks
//! is prose. `...` lines in both SEARCH and REPLACE leave text out: each part between them is an edit.
//!
//! Roo Code's blocks, as its prompt defines them, start with header lines:
//!
//! ```text
//! <<<<<<< SEARCH
//! :start_line:12            (required by Roo's prompt; `:end_line:` may follow)
//! -------
//! [the lines to find]
//! =======
//! [their replacement]
//! >>>>>>> REPLACE
//! ```
//!
//! A block with a start line is placed at the nearest of its places within `ROO_REACH` lines of it (as
//! Roo Code looks no further); a SEARCH whose every line carries Roo's `12 | ` line number prefix (as
//! its read_file tool shows lines) has them taken off and its first number is its start line. A line
//! of content that would read as a marker is escaped with a backslash (`\=======`), which is taken off.
//! Any other block says nothing about where its text lies: its anchor only asks for whole lines.

use super::error::ParseError;
use super::patch::{Format, Hunk, Patch, PatchFile, PatchOp};
use super::unified::{bare, quote, whole};
use crate::engine::Anchor;

/// How far from its start line a Roo Code block is looked for (Roo Code's own buffer).
pub const ROO_REACH: usize = 40;

/// Whose blocks a text holds: Aider's (`<<<<<<< SEARCH` after a path), Cline's (`------- SEARCH` /
/// `+++++++ REPLACE`) or Roo Code's (start line headers, escaped markers, numbered SEARCH lines).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Aider,
    Cline,
    Roo,
}

/// The flavour of a text that holds blocks (`None`: it holds none).
pub fn flavor(text: &str) -> Option<Flavor> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = None;
    for (i, l) in lines.iter().enumerate() {
        let angled = match marker(l) {
            Some(Marker::Search(angled)) => angled,
            _ => {
                if unescape(l) != *l {
                    found = Some(Flavor::Roo);
                }
                continue;
            }
        };
        let next = lines.get(i + 1).map_or("", |l| l.trim());
        if header(next).is_some() {
            return Some(Flavor::Roo);
        }
        if found.is_none() {
            found = Some(if angled { Flavor::Aider } else { Flavor::Cline });
        }
    }
    let numbered = lines
        .iter()
        .any(|l| matches!(marker(l), Some(Marker::Search(_))))
        && lines.windows(2).any(|w| {
            matches!(marker(w[0]), Some(Marker::Search(_))) && line_number(w[1]).is_some()
        });
    if numbered {
        return Some(Flavor::Roo);
    }
    found
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Marker {
    /// `<<<<<<< SEARCH` (`true`) or `------- SEARCH` (`false`).
    Search(bool),
    Divider,
    Replace,
}

/// A marker line: 5 to 9 marker characters, then (but for the divider) a space and the word, then
/// nothing but whitespace. `<<<<<<< SEARCH>` is Roo Code's too (a model's stray `>`, which Roo accepts).
fn marker(line: &str) -> Option<Marker> {
    let t = line.trim_end();
    let first = t.chars().next()?;
    let n = t.chars().take_while(|&c| c == first).count();
    if !(5..=9).contains(&n) {
        return None;
    }
    let rest = &t[n..];
    if first == '=' {
        return rest.is_empty().then_some(Marker::Divider);
    }
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    match (first, rest.trim_start()) {
        ('<', "SEARCH" | "SEARCH>") => Some(Marker::Search(true)),
        ('-', "SEARCH") => Some(Marker::Search(false)),
        ('>' | '+', "REPLACE") => Some(Marker::Replace),
        _ => None,
    }
}

/// A content line Roo Code escaped because it reads as a marker or a header: without its backslash.
fn unescape(line: &str) -> &str {
    const ESCAPED: [&str; 6] = [
        "<<<<<<<",
        "=======",
        ">>>>>>>",
        "-------",
        ":start_line:",
        ":end_line:",
    ];
    match line.strip_prefix('\\') {
        Some(rest) if ESCAPED.iter().any(|m| rest.starts_with(m)) => rest,
        _ => line,
    }
}

/// Roo Code's header line: `:start_line:` or `:end_line:` (true for the start) and its text after.
fn header(line: &str) -> Option<(bool, &str)> {
    let t = line.trim();
    t.strip_prefix(":start_line:")
        .map(|n| (true, n))
        .or_else(|| t.strip_prefix(":end_line:").map(|n| (false, n)))
}

/// A line as Roo Code's read_file tool shows it, `  12 | text`: its number and its text (one space
/// after the bar taken off with it). A second bar right after the first is table text, not a prefix.
fn line_number(line: &str) -> Option<(usize, &str)> {
    let t = line.trim_start();
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let after = &t[digits..];
    let spaced = after.trim_start_matches([' ', '\t']);
    if digits == 0
        || spaced.len() == after.len()
        || !spaced.starts_with('|')
        || spaced[1..].starts_with('|')
    {
        return None;
    }
    let body = &spaced[1..];
    Some((
        t[..digits].parse().ok()?,
        body.strip_prefix(' ').unwrap_or(body),
    ))
}

/// Lines (each with its break) without Roo Code's line number prefixes, with the first number, if
/// every line has one and they count up one by one. `None` when they do not.
fn numbered(lines: &[&str]) -> Option<(usize, Vec<String>)> {
    let mut first = None;
    let mut out = Vec::with_capacity(lines.len());
    for (k, raw) in lines.iter().enumerate() {
        let (n, text) = line_number(bare(raw))?;
        if *first.get_or_insert(n) + k != n {
            return None;
        }
        out.push(whole(text));
    }
    Some((first?, out))
}

pub fn looks_like(text: &str) -> bool {
    text.lines()
        .any(|l| matches!(marker(l), Some(Marker::Search(_))))
}

/// `file_path`: the file of the blocks that name none (Roo Code's `path` parameter).
pub fn parse(text: &str, file_path: Option<&str>) -> Result<Patch, ParseError> {
    // Split on '\n' only, each line keeping its break: a CRLF text keeps its '\r' in the block text.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut files: Vec<PatchFile> = Vec::new();
    let mut previous: Option<String> = None;
    // The blocks with a start line so far: their file, start line, and lines added less lines removed.
    let mut starts: Vec<(String, usize, isize)> = Vec::new();
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
                return Err(ParseError::at(i + 1, format!(
                    "line {} of the text ({}) is a SEARCH/REPLACE marker outside any block: a \
                     block is a line `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and \
                     `>>>>>>> REPLACE`; open the block with `<<<<<<< SEARCH` or remove the stray marker",
                    i + 1,
                    quote(t)
                )))
            }
        };
        n += 1;
        let path = block_path(&lines, after, i, n, file_path, previous.as_deref())?;
        let b = block(&lines, i, n, angled)?;
        let end = b.end;
        let hunks = block_hunks(b, &path, n, &mut starts)?;
        match files.iter_mut().find(|f| f.path == path) {
            Some(f) => f.hunks.extend(hunks),
            None => files.push(PatchFile {
                path: path.clone(),
                op: PatchOp::Update,
                hunks,
                mode: None,
            }),
        }
        previous = Some(path);
        after = end + 1;
        i = end + 1;
    }
    if files.is_empty() {
        return Err(ParseError::new(
            "the text holds no SEARCH/REPLACE block: write the file's path on a line, then \
             `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and `>>>>>>> REPLACE`",
        ));
    }
    Ok(Patch {
        format: Format::SearchReplace,
        files,
    })
}

/// The file of block `n`, opened at line `i`: the path written before it (after line `after`, where
/// the previous block ended), else the previous block's, else the request's `file_path`; refused when
/// the written one is not `file_path`, or when there is none.
fn block_path(
    lines: &[&str],
    after: usize,
    i: usize,
    n: usize,
    file_path: Option<&str>,
    previous: Option<&str>,
) -> Result<String, ParseError> {
    let named = path_before(lines, after, i);
    if let (Some(named), Some(given)) = (&named, file_path) {
        if !same_path(named, given) {
            return Err(ParseError::at(i + 1, format!(
                "SEARCH/REPLACE block {n} (line {} of the text) names the file {named}, and the request's \
                 file_path is {given}: give the blocks' file in one place, or send the blocks of each file apart",
                i + 1
            )));
        }
    }
    named
        .or_else(|| previous.map(str::to_string))
        .or_else(|| file_path.map(str::to_string))
        .ok_or_else(|| {
            ParseError::at(
                i + 1,
                format!(
                    "SEARCH/REPLACE block {n} names no file: put the file's path on the line before \
                 {} (line {} of the text), or give it as the request's file_path",
                    bare(lines[i]).trim_end(),
                    i + 1
                ),
            )
        })
}

/// The hunks of block `b`, the `n`th, of the file `path`: one, or one per part of a block that
/// leaves text out (`elided`). `starts`: the blocks with a start line so far (their file, start line,
/// and lines added less lines removed), which this one's start line is moved by and joins.
fn block_hunks(
    b: Block,
    path: &str,
    n: usize,
    starts: &mut Vec<(String, usize, isize)>,
) -> Result<Vec<Hunk>, ParseError> {
    let label = match b.start_line {
        Some(s) => format!("SEARCH/REPLACE block {n} ({path}, start line {s})"),
        None => format!("SEARCH/REPLACE block {n} ({path})"),
    };
    let elided = elided(&b.search, &b.replace, &label)?;
    // Roo Code's start lines count in the file as it was: the blocks above this one moved its
    // text by the lines they added or removed.
    let file_blocks = starts.iter().filter(|(p, _, _)| *p == path);
    let line = b.start_line.filter(|_| elided.is_none()).map(|s| {
        let moved: isize = file_blocks
            .filter(|(_, at, _)| *at < s)
            .map(|(_, _, d)| d)
            .sum();
        (s as isize + moved).max(1) as usize
    });
    if let Some(s) = b.start_line {
        let count = |t: &str| t.split_inclusive('\n').count() as isize;
        starts.push((path.to_string(), s, count(&b.replace) - count(&b.search)));
    }
    let hunks = elided.unwrap_or_else(|| vec![(b.search, b.replace, label)]);
    Ok(hunks
        .into_iter()
        .map(|(old, new, label)| Hunk {
            old,
            new,
            anchor: Anchor {
                label,
                line,
                reach: line.map(|_| ROO_REACH),
                eof_newline_optional: true,
                ..Anchor::default()
            },
        })
        .collect())
}

/// Whether a path a block names is the request's `file_path`: the same text once a leading `./` is
/// taken off, or a relative one that the absolute one ends with.
fn same_path(named: &str, given: &str) -> bool {
    let (a, b) = (
        named.trim_start_matches("./"),
        given.trim_start_matches("./"),
    );
    let ends = |abs: &str, rel: &str| {
        abs.starts_with('/') && !rel.starts_with('/') && abs.ends_with(&format!("/{rel}"))
    };
    a == b || ends(a, b) || ends(b, a)
}

/// A block's SEARCH text, REPLACE text and label.
type Part = (String, String, String);

/// A block whose SEARCH and REPLACE leave text out with the same `...` lines, as Aider reads it: each
/// part between them is its own edit, matched in the file in order (each in one place). The parts
/// REPLACE keeps unchanged are left out; a part that only adds lines, with no SEARCH lines to place
/// them by, is refused (Aider would append them to the file). `None` when the block has no `...`
/// lines, or not the same ones in both halves: then they are the file's text (a Python `...`).
fn elided(search: &str, replace: &str, label: &str) -> Result<Option<Vec<Part>>, ParseError> {
    let parts = |t: &str| {
        let (mut pieces, mut dots) = (vec![String::new()], Vec::new());
        for line in t.split_inclusive('\n') {
            if line.trim() == "..." {
                dots.push(line.trim_end().to_string());
                pieces.push(String::new());
            } else {
                pieces.last_mut().expect("one at least").push_str(line);
            }
        }
        (pieces, dots)
    };
    let ((olds, dots), (news, dots_new)) = (parts(search), parts(replace));
    if dots.is_empty() || dots != dots_new {
        return Ok(None);
    }
    let mut hunks = Vec::new();
    for (k, (old, new)) in olds.into_iter().zip(news).enumerate() {
        if old.is_empty() && !new.is_empty() {
            let place = match k {
                0 => "before its first `...` line".to_string(),
                k if k == dots.len() => "after its last `...` line".to_string(),
                k => format!("between its `...` lines {k} and {}", k + 1),
            };
            return Err(ParseError::new(format!(
                "{label} adds lines {place} where its SEARCH has none, so nothing says where they \
                 go: put the lines they follow or precede in SEARCH and in REPLACE"
            )));
        }
        if old != new {
            hunks.push((old, new, format!("{label}, part {}", k + 1)));
        }
    }
    Ok((!hunks.is_empty()).then_some(hunks))
}

/// One block as written: what it finds and what it writes, the index of its closing line, and Roo
/// Code's start line when it gives one.
struct Block {
    search: String,
    replace: String,
    end: usize,
    start_line: Option<usize>,
}

/// The block opened at line `open`.
fn block(lines: &[&str], open: usize, n: usize, angled: bool) -> Result<Block, ParseError> {
    let close = if angled {
        ">>>>>>> REPLACE"
    } else {
        "+++++++ REPLACE"
    };
    let (start_line, j) = start_line(lines, open + 1, n)?;
    let (search, j) = search_lines(lines, j, open, n)?;
    // A second `=======` in the replacement is taken as text (a Markdown heading's underline, a
    // conflict marker): only the REPLACE marker ends a block.
    let mut replace: Vec<&str> = Vec::new();
    let mut j = j + 1;
    let end = loop {
        let Some(&raw) = lines.get(j) else {
            return Err(unterminated(open, n, close, None));
        };
        match marker(bare(raw)) {
            Some(Marker::Replace) => break j,
            Some(Marker::Search(_)) => return Err(unterminated(open, n, close, Some(j))),
            _ if header(bare(raw)).is_some() => {
                return Err(ParseError::at(j + 1, format!(
                    "SEARCH/REPLACE block {n}: line {} of the text ({}) is a start or end line in the replacement: \
                     they go right after `<<<<<<< SEARCH`; to write such a line into the file, escape it as `\\{}`",
                    j + 1,
                    quote(bare(raw).trim()),
                    bare(raw).trim()
                )))
            }
            _ => replace.push(unescape(raw)),
        }
        j += 1;
    };
    let (search, replace, start_line) = without_numbers(&search, &replace, start_line, open, n)?;
    Ok(Block {
        search,
        replace,
        end,
        start_line,
    })
}

/// The refusal of block `n`, opened at line `open`, that has no `missing` marker line before the
/// line `at` that opens another block (`None`: the end of the text).
fn unterminated(open: usize, n: usize, missing: &str, at: Option<usize>) -> ParseError {
    let before = match at {
        Some(j) => format!("line {}, which opens another block", j + 1),
        None => "the end of the text".to_string(),
    };
    ParseError::at(open + 1, format!(
        "SEARCH/REPLACE block {n} (begun at line {} of the text) has no `{missing}` line \
         before {before}: a block is a line `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and \
         `>>>>>>> REPLACE`",
        open + 1
    ))
}

/// Roo Code's headers from line `j` of block `n` (`:start_line:`, `:end_line:`), then its `-------`
/// line between them and the lines to find: the start line they give, and the line after them.
fn start_line(
    lines: &[&str],
    mut j: usize,
    n: usize,
) -> Result<(Option<usize>, usize), ParseError> {
    let (mut start_line, mut headers) = (None, false);
    while let Some((start, number)) = lines.get(j).and_then(|l| header(bare(l))) {
        let value: usize = number.trim().parse().ok().filter(|&v| v >= 1).ok_or_else(|| {
            ParseError::at(j + 1, format!(
                "SEARCH/REPLACE block {n}: line {} of the text ({}) gives no line number: write `:start_line:` or \
                 `:end_line:` with the line's number in the file, counted from 1",
                j + 1,
                quote(bare(lines[j]).trim())
            ))
        })?;
        if start {
            start_line = Some(value);
        }
        headers = true;
        j += 1;
    }
    if headers
        && lines
            .get(j)
            .is_some_and(|l| bare(l).trim_end() == "-------")
    {
        j += 1;
    }
    Ok((start_line, j))
}

/// The lines to find of block `n` (opened at line `open`), from line `j` to its `=======` line, and
/// that line's index.
fn search_lines<'a>(
    lines: &[&'a str],
    mut j: usize,
    open: usize,
    n: usize,
) -> Result<(Vec<&'a str>, usize), ParseError> {
    let divider = "=======";
    let mut search: Vec<&str> = Vec::new();
    loop {
        let Some(&raw) = lines.get(j) else {
            return Err(unterminated(open, n, divider, None));
        };
        match marker(bare(raw)) {
            Some(Marker::Divider) => return Ok((search, j)),
            Some(Marker::Search(_)) => return Err(unterminated(open, n, divider, Some(j))),
            Some(Marker::Replace) => {
                return Err(ParseError::at(j + 1, format!(
                    "SEARCH/REPLACE block {n} (begun at line {} of the text) reaches its REPLACE \
                     marker at line {} without a `=======` line: put a line `=======` between the lines to find and \
                     their replacement",
                    open + 1,
                    j + 1
                )))
            }
            None => search.push(unescape(raw)),
        }
        j += 1;
    }
}

/// The block's SEARCH and REPLACE texts and its start line. Roo Code's read_file shows `12 | text`: a
/// SEARCH written with those prefixes on every line, counting up, has them taken off (its first
/// number is the start line, unless a header gave one), and so has its REPLACE if every line of it
/// has one too.
fn without_numbers(
    search: &[&str],
    replace: &[&str],
    start_line: Option<usize>,
    open: usize,
    n: usize,
) -> Result<(String, String, Option<usize>), ParseError> {
    let joined = |ls: &[&str]| ls.iter().map(|l| whole(l)).collect::<String>();
    Ok(match numbered(search) {
        Some((first, stripped)) => {
            let replace = if replace.iter().all(|l| line_number(bare(l)).is_some()) {
                replace
                    .iter()
                    .map(|l| whole(line_number(bare(l)).map_or("", |(_, t)| t)))
                    .collect()
            } else if replace.iter().any(|l| line_number(bare(l)).is_some()) {
                return Err(ParseError::at(open + 1, format!(
                    "SEARCH/REPLACE block {n} (begun at line {} of the text) has line numbers (`12 | `) on every line it \
                     finds but on only some of its replacement: which are the file's text cannot be known; write the \
                     replacement with a number on every line or on none",
                    open + 1
                )));
            } else {
                joined(replace)
            };
            (stripped.concat(), replace, start_line.or(Some(first)))
        }
        None => (joined(search), joined(replace), start_line),
    })
}

/// The path written for the block opened at line `open`: the last non-blank line before it, or
/// before the fence it sits in, looking no further back than `from`.
fn path_before(lines: &[&str], from: usize, open: usize) -> Option<String> {
    let previous_line = |before: usize| {
        (from..before)
            .rev()
            .find(|&j| !bare(lines[j]).trim().is_empty())
    };
    let fence = |j: usize| bare(lines[j]).trim_start().starts_with("```");
    let mut k = previous_line(open)?;
    if fence(k) {
        k = previous_line(k)?;
        // The name alone in a code block of its own, just before the block's (as some models write
        // it): ```` ``` ````, the name, ```` ``` ````.
        if fence(k) {
            let name = previous_line(k)?;
            return previous_line(name)
                .filter(|&o| fence(o))
                .and_then(|_| clean_path(bare(lines[name]).trim()));
        }
    }
    let t = bare(lines[k]).trim();
    // A fence there closes an earlier code block; a marker there ends the previous block.
    if t.starts_with("```") || marker(t).is_some() {
        return None;
    }
    clean_path(t)
}

/// `**src/app.py:**`, `` `src/app.py` ``, `# src/app.py`: the path without its decoration. A line with spaces that
/// reads as a sentence (`Now update the handler:`) names no file, unless it holds one backticked
/// name (``Edit `src/app.py`:``).
fn clean_path(t: &str) -> Option<String> {
    let mut p = t;
    for _ in 0..2 {
        p = p
            .trim()
            .trim_end_matches(':')
            .trim()
            .trim_start_matches('#')
            .trim()
            .trim_matches(['*', '`'])
            .trim();
    }
    // `...` between blocks stands for the text left out, not a file.
    if p.is_empty() || p == "..." {
        return None;
    }
    if !p.contains(char::is_whitespace) {
        return Some(p.to_string());
    }
    let spans: Vec<&str> = t.split('`').collect();
    if spans.len() == 3 && !spans[1].trim().is_empty() {
        return Some(spans[1].trim().to_string());
    }
    if t.trim_end_matches(['*', '`'])
        .trim_end()
        .ends_with([':', '.'])
    {
        return None;
    }
    Some(p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::{files, refusal, text};

    fn hunk(old: &str, new: &str, n: usize, path: &str) -> Hunk {
        let anchor = Anchor {
            label: format!("SEARCH/REPLACE block {n} ({path})"),
            eof_newline_optional: true,
            ..Anchor::default()
        };
        Hunk {
            old: old.into(),
            new: new.into(),
            anchor,
        }
    }

    fn file(path: &str, hunks: Vec<Hunk>) -> PatchFile {
        PatchFile {
            path: path.into(),
            op: PatchOp::Update,
            hunks,
            mode: None,
        }
    }

    #[test]
    fn aider_blocks_in_fences_with_prose_between() {
        let t = text(&[
            "I will make the greeting louder.",
            "",
            "src/greet.py",
            "```python",
            "<<<<<<< SEARCH",
            "def hello():",
            "    print('hi')",
            "=======",
            "def hello():",
            "    print('HI')",
            ">>>>>>> REPLACE",
            "```",
            "",
            "And a new file:",
            "",
            "docs/notes.md",
            "```",
            "<<<<<<< SEARCH",
            "=======",
            "# Notes",
            ">>>>>>> REPLACE",
            "```",
            "",
            "```python",
            "<<<<<<< SEARCH",
            "import sys",
            "=======",
            "import os",
            "import sys",
            ">>>>>>> REPLACE",
            "```",
        ]);
        assert_eq!(
            files(Format::SearchReplace, &t),
            vec![
                file(
                    "src/greet.py",
                    vec![hunk(
                        "def hello():\n    print('hi')\n",
                        "def hello():\n    print('HI')\n",
                        1,
                        "src/greet.py"
                    )]
                ),
                // An empty SEARCH: the engine creates the file when it does not exist.
                file(
                    "docs/notes.md",
                    vec![
                        hunk("", "# Notes\n", 2, "docs/notes.md"),
                        hunk(
                            "import sys\n",
                            "import os\nimport sys\n",
                            3,
                            "docs/notes.md"
                        )
                    ]
                ),
            ]
        );
    }

    #[test]
    fn files_come_in_order_of_first_mention_and_blocks_without_a_path_reuse_the_last() {
        let t = text(&[
            "a.rs",
            "<<<<<<< SEARCH",
            "1",
            "=======",
            "2",
            ">>>>>>> REPLACE",
            "<<<<<<< SEARCH",
            "3",
            "=======",
            "4",
            ">>>>>>> REPLACE",
            "b.rs",
            "<<<<<<< SEARCH",
            "5",
            "=======",
            "6",
            ">>>>>>> REPLACE",
            "a.rs",
            "<<<<<<< SEARCH",
            "7",
            "=======",
            "8",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            files(Format::SearchReplace, &t),
            vec![
                file(
                    "a.rs",
                    vec![
                        hunk("1\n", "2\n", 1, "a.rs"),
                        hunk("3\n", "4\n", 2, "a.rs"),
                        hunk("7\n", "8\n", 4, "a.rs")
                    ]
                ),
                file("b.rs", vec![hunk("5\n", "6\n", 3, "b.rs")]),
            ]
        );
    }

    #[test]
    fn cline_and_roo_markers_of_five_to_nine_characters() {
        let t = text(&[
            "src/x.ts",
            "------- SEARCH  ",
            "let a = 1;",
            "=======\t",
            "let a = 2;",
            "+++++++ REPLACE",
            "<<<<< SEARCH",
            "b",
            "=========",
            "c",
            ">>>>>>>>> REPLACE",
        ]);
        assert_eq!(
            files(Format::SearchReplace, &t),
            vec![file(
                "src/x.ts",
                vec![
                    hunk("let a = 1;\n", "let a = 2;\n", 1, "src/x.ts"),
                    hunk("b\n", "c\n", 2, "src/x.ts")
                ]
            )]
        );
        // Four or ten characters are text, not markers.
        assert!(!looks_like("<<<< SEARCH\n"));
        assert!(!looks_like("<<<<<<<<<< SEARCH\n"));
    }

    #[test]
    fn the_path_line_loses_its_decoration() {
        for line in [
            "**src/a.py**",
            "`src/a.py`",
            "src/a.py:",
            "  *src/a.py:*  ",
            "**`src/a.py`:**",
            "Edit `src/a.py`:",
            "# src/a.py",
            "### `src/a.py`",
        ] {
            let t = text(&[
                line,
                "```",
                "<<<<<<< SEARCH",
                "x",
                "=======",
                "y",
                ">>>>>>> REPLACE",
                "```",
            ]);
            assert_eq!(
                files(Format::SearchReplace, &t)[0].path,
                "src/a.py",
                "from {line:?}"
            );
        }
        // Paths may hold spaces.
        let t = text(&[
            "My Docs/read me.txt",
            "<<<<<<< SEARCH",
            "x",
            "=======",
            "y",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            files(Format::SearchReplace, &t)[0].path,
            "My Docs/read me.txt"
        );
    }

    #[test]
    fn dotted_parts_become_one_hunk_each_and_unpaired_dots_are_text() {
        let t = text(&[
            "f.py",
            "<<<<<<< SEARCH",
            "a",
            "...",
            "c",
            "...",
            "e",
            "=======",
            "A",
            "...",
            "c",
            "...",
            "E",
            ">>>>>>> REPLACE",
        ]);
        let label = |k: usize| format!("SEARCH/REPLACE block 1 (f.py), part {k}");
        let part = |old: &str, new: &str, k: usize| Hunk {
            old: old.into(),
            new: new.into(),
            anchor: Anchor {
                label: label(k),
                eof_newline_optional: true,
                ..Anchor::default()
            },
        };
        assert_eq!(
            files(Format::SearchReplace, &t),
            vec![file(
                "f.py",
                vec![part("a\n", "A\n", 1), part("e\n", "E\n", 3)]
            )]
        );
        let t = text(&[
            "f.py",
            "<<<<<<< SEARCH",
            "a",
            "    ...",
            "=======",
            "a",
            "    pass",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            files(Format::SearchReplace, &t),
            vec![file(
                "f.py",
                vec![hunk("a\n    ...\n", "a\n    pass\n", 1, "f.py")]
            )]
        );
    }

    #[test]
    fn a_sentence_before_a_block_is_not_a_path() {
        let t = text(&[
            "a.py",
            "<<<<<<< SEARCH",
            "x",
            "=======",
            "y",
            ">>>>>>> REPLACE",
            "Now the second change:",
            "<<<<<<< SEARCH",
            "z",
            "=======",
            "w",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            files(Format::SearchReplace, &t),
            vec![file(
                "a.py",
                vec![hunk("x\n", "y\n", 1, "a.py"), hunk("z\n", "w\n", 2, "a.py")]
            )]
        );
    }

    #[test]
    fn crlf_lines_and_a_second_divider_in_the_replacement_are_kept() {
        let t =
            "f.md\r\n<<<<<<< SEARCH\r\nTitle\r\n=======\r\nTitle\r\n=======\r\n>>>>>>> REPLACE\r\n";
        assert_eq!(
            files(Format::SearchReplace, t),
            vec![file(
                "f.md",
                vec![hunk("Title\r\n", "Title\r\n=======\r\n", 1, "f.md")]
            )]
        );
    }

    #[test]
    fn the_first_block_without_a_path_is_refused() {
        assert_eq!(
            refusal(Format::SearchReplace, &text(&["<<<<<<< SEARCH", "x", "=======", "y", ">>>>>>> REPLACE"])),
            "InputValidationError: SEARCH/REPLACE block 1 names no file: put the file's path on the line before \
             <<<<<<< SEARCH (line 1 of the text), or give it as the request's file_path"
        );
        assert_eq!(
            refusal(Format::SearchReplace, &text(&[
                "Here is the change:",
                "```",
                "------- SEARCH",
                "x",
                "=======",
                "y",
                "+++++++ REPLACE",
                "```"
            ])),
            "InputValidationError: SEARCH/REPLACE block 1 names no file: put the file's path on the line before \
             ------- SEARCH (line 3 of the text), or give it as the request's file_path"
        );
    }

    #[test]
    fn unterminated_blocks_are_refused() {
        assert_eq!(
            refusal(Format::SearchReplace, &text(&["a", "<<<<<<< SEARCH", "x", "y"])),
            "InputValidationError: SEARCH/REPLACE block 1 (begun at line 2 of the text) has no `=======` line before the \
             end of the text: a block is a line `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and \
             `>>>>>>> REPLACE`"
        );
        assert_eq!(
            refusal(Format::SearchReplace, &text(&["a", "------- SEARCH", "x", "=======", "y", "```"])),
            "InputValidationError: SEARCH/REPLACE block 1 (begun at line 2 of the text) has no `+++++++ REPLACE` line \
             before the end of the text: a block is a line `<<<<<<< SEARCH`, the lines to find, `=======`, their \
             replacement and `>>>>>>> REPLACE`"
        );
        assert_eq!(
            refusal(Format::SearchReplace, &text(&["a", "<<<<<<< SEARCH", "x", "=======", "y", "<<<<<<< SEARCH", "z", "=======", ">>>>>>> REPLACE"])),
            "InputValidationError: SEARCH/REPLACE block 1 (begun at line 2 of the text) has no `>>>>>>> REPLACE` line \
             before line 6, which opens another block: a block is a line `<<<<<<< SEARCH`, the lines to find, `=======`, \
             their replacement and `>>>>>>> REPLACE`"
        );
        assert_eq!(
            refusal(Format::SearchReplace, &text(&["a", "<<<<<<< SEARCH", "x", ">>>>>>> REPLACE"])),
            "InputValidationError: SEARCH/REPLACE block 1 (begun at line 2 of the text) reaches its REPLACE marker at \
             line 4 without a `=======` line: put a line `=======` between the lines to find and their replacement"
        );
    }

    #[test]
    fn markers_outside_a_block_are_refused() {
        assert_eq!(
            refusal(Format::SearchReplace, &text(&["a", "<<<<<<< SEARCH", "x", "=======", "y", ">>>>>>> REPLACE", "=======", "z", ">>>>>>> REPLACE"])),
            "InputValidationError: line 7 of the text (`=======`) is a SEARCH/REPLACE marker outside any block: a block \
             is a line `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and `>>>>>>> REPLACE`; open the \
             block with `<<<<<<< SEARCH` or remove the stray marker"
        );
        assert!(refusal(Format::SearchReplace, &text(&["+++++++ REPLACE"]))
            .starts_with("InputValidationError: line 1 of the text (`+++++++ REPLACE`) is"));
    }

    #[test]
    fn a_text_without_blocks_is_refused() {
        assert_eq!(
            refusal(Format::SearchReplace, "nothing here\n"),
            "InputValidationError: the text holds no SEARCH/REPLACE block: write the file's path on a line, then \
             `<<<<<<< SEARCH`, the lines to find, `=======`, their replacement and `>>>>>>> REPLACE`"
        );
    }

    #[test]
    fn detect_prefers_blocks_whose_text_shows_another_format() {
        // A block editing a README that documents apply_patch and diffs: its lines start with their markers.
        let t = text(&[
            "README.md",
            "<<<<<<< SEARCH",
            "*** Begin Patch",
            "--- a/x",
            "+++ b/x",
            "@@ -1 +1 @@",
            "=======",
            "*** Begin Patch",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(super::super::detect(&t), Some(Format::SearchReplace));
        assert_eq!(
            files(Format::SearchReplace, &t)[0].hunks[0].old,
            "*** Begin Patch\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n"
        );
        // A diff or an envelope changing such a file prefixes the marker: it is theirs to parse.
        let diff = text(&[
            "--- a/README.md",
            "+++ b/README.md",
            "@@ -1 +1 @@",
            "-<<<<<<< SEARCH",
            "+<<<<<<< HEAD",
        ]);
        assert_eq!(super::super::detect(&diff), Some(Format::Diff));
        let envelope = text(&[
            "*** Begin Patch",
            "*** Update File: r",
            "-<<<<<<< SEARCH",
            "+x",
            "*** End Patch",
        ]);
        assert_eq!(super::super::detect(&envelope), Some(Format::ApplyPatch));
    }

    fn roo(old: &str, new: &str, n: usize, path: &str, start: Option<usize>) -> Hunk {
        let label = match start {
            Some(s) => format!("SEARCH/REPLACE block {n} ({path}, start line {s})"),
            None => format!("SEARCH/REPLACE block {n} ({path})"),
        };
        Hunk {
            old: old.into(),
            new: new.into(),
            anchor: Anchor {
                label,
                line: start,
                reach: start.map(|_| ROO_REACH),
                eof_newline_optional: true,
                ..Anchor::default()
            },
        }
    }

    #[test]
    fn roo_headers_and_separator_are_not_text_and_the_path_comes_from_the_request() {
        let t = text(&[
            "<<<<<<< SEARCH",
            ":start_line:3",
            "-------",
            "c",
            "=======",
            "C",
            ">>>>>>> REPLACE",
            "",
            "<<<<<<< SEARCH>",
            ":start_line:9",
            ":end_line:10",
            "-------",
            "i",
            "j",
            "=======",
            "I",
            ">>>>>>> REPLACE",
        ]);
        let patch = parse(&t, Some("src/a.ts")).unwrap_or_else(|e| panic!("{}", e.message));
        // The second block's start line counts in the file as it was; the first added no line.
        assert_eq!(
            patch.files,
            vec![file(
                "src/a.ts",
                vec![
                    roo("c\n", "C\n", 1, "src/a.ts", Some(3)),
                    roo("i\nj\n", "I\n", 2, "src/a.ts", Some(9))
                ]
            )]
        );
        assert_eq!(flavor(&t), Some(Flavor::Roo));
        // Blocks apply in order: an earlier block above another moves it by the lines it adds or
        // removes; one below does not.
        let t = text(&[
            "<<<<<<< SEARCH",
            ":start_line:20",
            "-------",
            "x",
            "=======",
            ">>>>>>> REPLACE",
            "<<<<<<< SEARCH",
            ":start_line:5",
            "-------",
            "y",
            "=======",
            "y1",
            "y2",
            "y3",
            ">>>>>>> REPLACE",
            "<<<<<<< SEARCH",
            ":start_line:30",
            "-------",
            "z",
            "=======",
            "Z",
            ">>>>>>> REPLACE",
        ]);
        let lines: Vec<Option<usize>> = parse(&t, Some("f")).unwrap().files[0]
            .hunks
            .iter()
            .map(|h| h.anchor.line)
            .collect();
        assert_eq!(lines, vec![Some(20), Some(5), Some(31)]);
    }

    #[test]
    fn roo_escaped_markers_lose_their_backslash() {
        let t = text(&[
            "f.txt",
            "<<<<<<< SEARCH",
            "before",
            "\\<<<<<<< HEAD",
            "\\=======",
            "\\>>>>>>> theirs",
            "\\-------",
            "after",
            "=======",
            "\\:start_line:4",
            "kept",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            files(Format::SearchReplace, &t),
            vec![file(
                "f.txt",
                vec![hunk(
                    "before\n<<<<<<< HEAD\n=======\n>>>>>>> theirs\n-------\nafter\n",
                    ":start_line:4\nkept\n",
                    1,
                    "f.txt"
                )]
            )]
        );
        assert_eq!(flavor(&t), Some(Flavor::Roo));
        // A backslash before anything else is the file's.
        let t = text(&[
            "f.txt",
            "<<<<<<< SEARCH",
            "\\n",
            "=======",
            "\\t",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(files(Format::SearchReplace, &t)[0].hunks[0].old, "\\n\n");
    }

    #[test]
    fn roo_line_numbers_are_taken_off_when_every_search_line_counts_up() {
        let t = text(&[
            "<<<<<<< SEARCH",
            " 9 | fn f() {",
            "10 |     1",
            "11 | }",
            "=======",
            " 9 | fn f() {",
            "10 |     2",
            "11 | }",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            parse(&t, Some("f.rs")).unwrap().files,
            vec![file(
                "f.rs",
                vec![roo(
                    "fn f() {\n    1\n}\n",
                    "fn f() {\n    2\n}\n",
                    1,
                    "f.rs",
                    Some(9)
                )]
            )]
        );
        assert_eq!(flavor(&t), Some(Flavor::Roo));
        // A replacement without numbers is kept as it is; a table's own bars stay.
        let t = text(&[
            "<<<<<<< SEARCH",
            "1 | |a|b|",
            "=======",
            "|a|c|",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            parse(&t, Some("t.md")).unwrap().files[0].hunks[0],
            roo("|a|b|\n", "|a|c|\n", 1, "t.md", Some(1))
        );
        // Numbers that skip, or a line without one: the SEARCH is the file's text as written.
        let t = text(&[
            "<<<<<<< SEARCH",
            "1 | a",
            "3 | b",
            "=======",
            "x",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            parse(&t, Some("f")).unwrap().files[0].hunks[0].old,
            "1 | a\n3 | b\n"
        );
        // Numbered on every line it finds, on some of its replacement: refused.
        let t = text(&[
            "<<<<<<< SEARCH",
            "1 | a",
            "2 | b",
            "=======",
            "1 | a",
            "c",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            parse(&t, Some("f")).unwrap_err().message,
            "SEARCH/REPLACE block 1 (begun at line 1 of the text) has line numbers (`12 | `) on every line it finds but on only some of its replacement: which are the file's text cannot be known; write the replacement with a number on every line or on none"
        );
    }

    #[test]
    fn roo_headers_in_the_wrong_place_are_refused() {
        let t = text(&[
            "<<<<<<< SEARCH",
            "a",
            "=======",
            ":start_line:5",
            "b",
            ">>>>>>> REPLACE",
        ]);
        let e = parse(&t, Some("f")).unwrap_err();
        assert_eq!(e.message, "SEARCH/REPLACE block 1: line 4 of the text (`:start_line:5`) is a start or end line in the replacement: they go right after `<<<<<<< SEARCH`; to write such a line into the file, escape it as `\\:start_line:5`");
        assert_eq!(e.blamed_line(), Some(4));
        let t = text(&[
            "<<<<<<< SEARCH",
            ":start_line:twelve",
            "-------",
            "a",
            "=======",
            "b",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(parse(&t, Some("f")).unwrap_err().message, "SEARCH/REPLACE block 1: line 2 of the text (`:start_line:twelve`) gives no line number: write `:start_line:` or `:end_line:` with the line's number in the file, counted from 1");
        // The separator only follows headers: elsewhere it is the file's text.
        let t = text(&[
            "f",
            "<<<<<<< SEARCH",
            "-------",
            "a",
            "=======",
            "b",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            files(Format::SearchReplace, &t)[0].hunks[0].old,
            "-------\na\n"
        );
    }

    #[test]
    fn markers_need_their_space_and_search_may_carry_one_stray_angle() {
        for bad in [
            "-------SEARCH",
            "<<-- SEARCH",
            "-- SEARCH",
            "<<<<<<< SEARCH>>",
            "<<<<<<< SEARCH  >",
        ] {
            assert!(!looks_like(&format!("{bad}\n")), "{bad}");
        }
        assert!(looks_like("<<<<<<< SEARCH>  \n"));
    }

    #[test]
    fn a_block_naming_another_file_than_the_requests_is_refused() {
        let t = text(&[
            "src/b.ts",
            "<<<<<<< SEARCH",
            "a",
            "=======",
            "b",
            ">>>>>>> REPLACE",
        ]);
        assert_eq!(
            parse(&t, Some("src/a.ts")).unwrap_err().message,
            "SEARCH/REPLACE block 1 (line 2 of the text) names the file src/b.ts, and the request's file_path is src/a.ts: give the blocks' file in one place, or send the blocks of each file apart"
        );
        // The same file, written relative or with `./`, is no contradiction.
        assert_eq!(
            parse(&t, Some("/w/src/b.ts")).unwrap().files[0].path,
            "src/b.ts"
        );
        assert_eq!(
            parse(&t, Some("./src/b.ts")).unwrap().files[0].path,
            "src/b.ts"
        );
    }

    #[test]
    fn the_flavour_tells_roo_from_aider_and_cline() {
        assert_eq!(
            flavor(&text(&[
                "a.py",
                "<<<<<<< SEARCH",
                "x",
                "=======",
                "y",
                ">>>>>>> REPLACE"
            ])),
            Some(Flavor::Aider)
        );
        assert_eq!(
            flavor(&text(&[
                "a.py",
                "------- SEARCH",
                "x",
                "=======",
                "y",
                "+++++++ REPLACE"
            ])),
            Some(Flavor::Cline)
        );
        assert_eq!(
            flavor(&text(&[
                "<<<<<<< SEARCH",
                ":start_line:1",
                "-------",
                "x",
                "=======",
                "y",
                ">>>>>>> REPLACE"
            ])),
            Some(Flavor::Roo)
        );
        assert_eq!(flavor("no blocks\n"), None);
    }

    #[test]
    fn a_refusal_carries_the_line_it_blames() {
        let line = |t: &str| parse(t, None).expect_err("should be refused").blamed_line();
        let stray = [
            "a",
            "<<<<<<< SEARCH",
            "x",
            "=======",
            "y",
            ">>>>>>> REPLACE",
            "=======",
            "z",
            ">>>>>>> REPLACE",
        ];
        assert_eq!(line(&text(&stray)), Some(7));
        // An unterminated block is blamed on the line that opens it; a missing divider on the REPLACE marker.
        assert_eq!(line(&text(&["a", "<<<<<<< SEARCH", "x", "y"])), Some(2));
        assert_eq!(
            line(&text(&["a", "<<<<<<< SEARCH", "x", ">>>>>>> REPLACE"])),
            Some(4)
        );
        assert_eq!(line("no blocks here\n"), None);
    }
}
