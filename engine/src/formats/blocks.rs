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
//! block with none edits the previous block's file, as Aider reads it. Everything outside blocks is
//! prose. `...` lines in both SEARCH and REPLACE leave text out: each part between them is an edit.
//! A block says nothing about where its text lies, so its anchor only asks for whole lines.

use super::unified::{bare, quote, whole};
use super::{Format, Hunk, Patch, PatchFile, PatchOp};
use super::error::ParseError;
use crate::engine::Anchor;

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

pub fn parse(text: &str) -> Result<Patch, ParseError> {
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
        let Some(path) = path_before(&lines, after, i).or_else(|| previous.clone()) else {
            return Err(ParseError::at(i + 1, format!(
                "SEARCH/REPLACE block {n} names no file: put the file's path on the line before \
                 {} (line {} of the text)",
                t.trim_end(),
                i + 1
            )));
        };
        let (search, replace, end) = block(&lines, i, n, angled)?;
        let label = format!("SEARCH/REPLACE block {n} ({path})");
        let hunks = elided(&search, &replace, &label)?.unwrap_or_else(|| vec![(search, replace, label)]);
        let hunks = hunks.into_iter().map(|(old, new, label)| Hunk {
            old,
            new,
            anchor: Anchor { label, eof_newline_optional: true, ..Anchor::default() },
        });
        match files.iter_mut().find(|f| f.path == path) {
            Some(f) => f.hunks.extend(hunks),
            None => files.push(PatchFile { path: path.clone(), op: PatchOp::Update, hunks: hunks.collect(), mode: None }),
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
    Ok(Patch { format: Format::SearchReplace, files })
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

/// The block opened at line `open`: its SEARCH text, its REPLACE text and the index of its closing line.
fn block(lines: &[&str], open: usize, n: usize, angled: bool) -> Result<(String, String, usize), ParseError> {
    let (divider, close) = ("=======", if angled { ">>>>>>> REPLACE" } else { "+++++++ REPLACE" });
    let unterminated = |missing: &str, at: Option<usize>| {
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
    };
    let mut search = String::new();
    let mut j = open + 1;
    loop {
        let Some(&raw) = lines.get(j) else { return Err(unterminated(divider, None)) };
        match marker(bare(raw)) {
            Some(Marker::Divider) => break,
            Some(Marker::Search(_)) => return Err(unterminated(divider, Some(j))),
            Some(Marker::Replace) => {
                return Err(ParseError::at(j + 1, format!(
                    "SEARCH/REPLACE block {n} (begun at line {} of the text) reaches its REPLACE \
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
    let fence = |j: usize| bare(lines[j]).trim_start().starts_with("```");
    let mut k = previous_line(open)?;
    if fence(k) {
        k = previous_line(k)?;
        // The name alone in a code block of its own, just before the block's (as some models write
        // it): ```` ``` ````, the name, ```` ``` ````.
        if fence(k) {
            let name = previous_line(k)?;
            return previous_line(name).filter(|&o| fence(o)).and_then(|_| clean_path(bare(lines[name]).trim()));
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
        p = p.trim().trim_end_matches(':').trim().trim_start_matches('#').trim().trim_matches(['*', '`']).trim();
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
    if t.trim_end_matches(['*', '`']).trim_end().ends_with([':', '.']) {
        return None;
    }
    Some(p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::{files, refusal, text};

    fn hunk(old: &str, new: &str, n: usize, path: &str) -> Hunk {
        let anchor = Anchor { label: format!("SEARCH/REPLACE block {n} ({path})"), eof_newline_optional: true, ..Anchor::default() };
        Hunk { old: old.into(), new: new.into(), anchor }
    }

    fn file(path: &str, hunks: Vec<Hunk>) -> PatchFile {
        PatchFile { path: path.into(), op: PatchOp::Update, hunks, mode: None }
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
                    vec![hunk("def hello():\n    print('hi')\n", "def hello():\n    print('HI')\n", 1, "src/greet.py")]
                ),
                // An empty SEARCH: the engine creates the file when it does not exist.
                file(
                    "docs/notes.md",
                    vec![
                        hunk("", "# Notes\n", 2, "docs/notes.md"),
                        hunk("import sys\n", "import os\nimport sys\n", 3, "docs/notes.md")
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
                    vec![hunk("1\n", "2\n", 1, "a.rs"), hunk("3\n", "4\n", 2, "a.rs"), hunk("7\n", "8\n", 4, "a.rs")]
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
                vec![hunk("let a = 1;\n", "let a = 2;\n", 1, "src/x.ts"), hunk("b\n", "c\n", 2, "src/x.ts")]
            )]
        );
        // Four or ten characters are text, not markers.
        assert!(!looks_like("<<<< SEARCH\n"));
        assert!(!looks_like("<<<<<<<<<< SEARCH\n"));
    }

    #[test]
    fn the_path_line_loses_its_decoration() {
        for line in
            ["**src/a.py**", "`src/a.py`", "src/a.py:", "  *src/a.py:*  ", "**`src/a.py`:**", "Edit `src/a.py`:", "# src/a.py", "### `src/a.py`"]
        {
            let t = text(&[line, "```", "<<<<<<< SEARCH", "x", "=======", "y", ">>>>>>> REPLACE", "```"]);
            assert_eq!(files(Format::SearchReplace, &t)[0].path, "src/a.py", "from {line:?}");
        }
        // Paths may hold spaces.
        let t = text(&["My Docs/read me.txt", "<<<<<<< SEARCH", "x", "=======", "y", ">>>>>>> REPLACE"]);
        assert_eq!(files(Format::SearchReplace, &t)[0].path, "My Docs/read me.txt");
    }

    #[test]
    fn dotted_parts_become_one_hunk_each_and_unpaired_dots_are_text() {
        let t = text(&["f.py", "<<<<<<< SEARCH", "a", "...", "c", "...", "e", "=======", "A", "...", "c", "...", "E", ">>>>>>> REPLACE"]);
        let label = |k: usize| format!("SEARCH/REPLACE block 1 (f.py), part {k}");
        let part = |old: &str, new: &str, k: usize| Hunk {
            old: old.into(),
            new: new.into(),
            anchor: Anchor { label: label(k), eof_newline_optional: true, ..Anchor::default() },
        };
        assert_eq!(files(Format::SearchReplace, &t), vec![file("f.py", vec![part("a\n", "A\n", 1), part("e\n", "E\n", 3)])]);
        let t = text(&["f.py", "<<<<<<< SEARCH", "a", "    ...", "=======", "a", "    pass", ">>>>>>> REPLACE"]);
        assert_eq!(files(Format::SearchReplace, &t), vec![file("f.py", vec![hunk("a\n    ...\n", "a\n    pass\n", 1, "f.py")])]);
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
        assert_eq!(files(Format::SearchReplace, &t), vec![file("a.py", vec![hunk("x\n", "y\n", 1, "a.py"), hunk("z\n", "w\n", 2, "a.py")])]);
    }

    #[test]
    fn crlf_lines_and_a_second_divider_in_the_replacement_are_kept() {
        let t = "f.md\r\n<<<<<<< SEARCH\r\nTitle\r\n=======\r\nTitle\r\n=======\r\n>>>>>>> REPLACE\r\n";
        assert_eq!(files(Format::SearchReplace, t), vec![file("f.md", vec![hunk("Title\r\n", "Title\r\n=======\r\n", 1, "f.md")])]);
    }

    #[test]
    fn the_first_block_without_a_path_is_refused() {
        assert_eq!(
            refusal(Format::SearchReplace, &text(&["<<<<<<< SEARCH", "x", "=======", "y", ">>>>>>> REPLACE"])),
            "InputValidationError: SEARCH/REPLACE block 1 names no file: put the file's path on the line before \
             <<<<<<< SEARCH (line 1 of the text)"
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
             ------- SEARCH (line 3 of the text)"
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
        assert_eq!(files(Format::SearchReplace, &t)[0].hunks[0].old, "*** Begin Patch\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n");
        // A diff or an envelope changing such a file prefixes the marker: it is theirs to parse.
        let diff = text(&["--- a/README.md", "+++ b/README.md", "@@ -1 +1 @@", "-<<<<<<< SEARCH", "+<<<<<<< HEAD"]);
        assert_eq!(super::super::detect(&diff), Some(Format::Diff));
        let envelope = text(&["*** Begin Patch", "*** Update File: r", "-<<<<<<< SEARCH", "+x", "*** End Patch"]);
        assert_eq!(super::super::detect(&envelope), Some(Format::ApplyPatch));
    }

    #[test]
    fn a_refusal_carries_the_line_it_blames() {
        let line = |t: &str| parse(t).expect_err("should be refused").blamed_line();
        let stray = ["a", "<<<<<<< SEARCH", "x", "=======", "y", ">>>>>>> REPLACE", "=======", "z", ">>>>>>> REPLACE"];
        assert_eq!(line(&text(&stray)), Some(7));
        // An unterminated block is blamed on the line that opens it; a missing divider on the REPLACE marker.
        assert_eq!(line(&text(&["a", "<<<<<<< SEARCH", "x", "y"])), Some(2));
        assert_eq!(line(&text(&["a", "<<<<<<< SEARCH", "x", ">>>>>>> REPLACE"])), Some(4));
        assert_eq!(line("no blocks here\n"), None);
    }
}
