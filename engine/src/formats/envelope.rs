//! The apply_patch envelope that GPT-family models and Codex CLI emit:
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/app.py
//! *** Move to: src/main.py
//! @@ def handler():
//! -    return 1
//! +    return 2
//! *** End of File
//! *** End Patch
//! ```
//!
//! Hunks carry no line numbers: they come in file order (`forward`), a `@@ <line>` header names a line
//! the hunk lies after, and `*** End of File` pins it to the end; a hunk of only '+' lines adds them
//! after its `@@ <line>`, else at the end of the file. What models wrap around the envelope (a shell
//! heredoc, a code fence, blank lines, spaces around markers) is ignored: only the lines between the
//! markers count. A heredoc Codex would refuse (unmatched quotes, never closed) is refused.

use super::error::ParseError;
use super::patch::{Format, Hunk, Patch, PatchFile, PatchOp};
use super::unified::{bare, quote, whole};
use crate::engine::Anchor;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";

pub fn looks_like(text: &str) -> bool {
    text.lines().any(|l| l.trim() == BEGIN)
}

pub fn parse(text: &str) -> Result<Patch, ParseError> {
    // Split on '\n' only, each line keeping its break: a CRLF patch keeps its '\r' in the hunk text.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(begin) = lines.iter().position(|l| l.trim() == BEGIN) else {
        return Err(ParseError::new(
            "the text has no `*** Begin Patch` line: an apply_patch envelope starts with a line \
             `*** Begin Patch` and ends with a line `*** End Patch`, with the file sections between them",
        ));
    };
    let Some(end) = lines
        .iter()
        .skip(begin + 1)
        .position(|l| l.trim() == END)
        .map(|p| p + begin + 1)
    else {
        return Err(ParseError::at(
            begin + 1,
            format!(
            "the envelope begun at line {} (`*** Begin Patch`) has no `*** End Patch` line: end \
             the envelope with a line `*** End Patch` after its last section",
            begin + 1
        ),
        ));
    };
    if let Some(again) = lines.iter().skip(end + 1).position(|l| l.trim() == BEGIN) {
        return Err(ParseError::at(
            again + end + 2,
            format!(
                "line {} of the patch starts a second envelope after the one ended at line {}: \
             send one envelope, with every file's section in it",
                again + end + 2,
                end + 1
            ),
        ));
    }
    heredoc(&lines, begin, end)?;
    let mut files = Vec::new();
    let mut cur: Option<Section> = None;
    for (i, &raw) in lines.iter().enumerate().take(end).skip(begin + 1) {
        let no = i + 1;
        let t = bare(raw);
        // Models indent markers too (`  *** Update File: a.py`); inside a hunk, though, a line that
        // starts with a space is a context line, as apply_patch reads it.
        let in_hunk = cur.as_ref().is_some_and(|s| s.open.is_some());
        if t.starts_with("*** ") || (!in_hunk && t.trim_start().starts_with("*** ")) {
            marker(t.trim(), no, &mut cur, &mut files)?;
            continue;
        }
        match cur.as_mut() {
            None if t.trim().is_empty() => {}
            None => {
                return Err(ParseError::at(
                    no,
                    format!(
                        "line {no} of the patch ({}) comes before any file section: after \
                     `*** Begin Patch` comes `*** Add File: <path>`, `*** Delete File: <path>` or \
                     `*** Update File: <path>`",
                        quote(t)
                    ),
                ))
            }
            Some(s) => s.body_line(raw, no)?,
        }
    }
    if let Some(s) = cur.take() {
        files.push(s.finish()?);
    }
    if files.is_empty() {
        return Err(ParseError::new(
            "the patch holds no file change: between `*** Begin Patch` and `*** End Patch` put at \
             least one `*** Add File: <path>`, `*** Delete File: <path>` or `*** Update File: <path>` section",
        ));
    }
    Ok(Patch {
        format: Format::ApplyPatch,
        files,
    })
}

/// The shell heredoc models wrap the envelope in (`apply_patch <<'EOF'` on the line before
/// `*** Begin Patch`, `EOF` after `*** End Patch`) is ignored when it is well formed; a delimiter with
/// unmatched quotes or a heredoc never closed is refused, as the shell (and apply_patch) would refuse it.
fn heredoc(lines: &[&str], begin: usize, end: usize) -> Result<(), ParseError> {
    let Some(open) = lines[..begin].iter().rposition(|l| !l.trim().is_empty()) else {
        return Ok(());
    };
    let line = bare(lines[open]).trim();
    let Some(at) = line
        .find("<<")
        .filter(|&at| !line[at + 2..].starts_with('<'))
    else {
        return Ok(());
    };
    let rest = line[at + 2..].trim_start_matches('-').trim_start();
    let word = rest
        .split(|c: char| c.is_whitespace() || "|;&)>".contains(c))
        .next()
        .unwrap_or("");
    // `<<` followed by anything but a (quoted) word is no heredoc (`cout << x` in the prose before).
    let quote_of = |c: char| ['\'', '"'].contains(&c);
    let inner = word.trim_matches(quote_of);
    if inner.is_empty() || !inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Ok(());
    }
    let (open_q, close_q) = (
        word.chars().next().filter(|&c| quote_of(c)),
        word.chars().last().filter(|&c| quote_of(c)),
    );
    let delimiter = match (open_q, close_q) {
        (Some(a), Some(b)) if a == b && word.len() == inner.len() + 2 => inner,
        (None, None) => inner,
        _ => {
            return Err(ParseError::at(open + 1, format!(
                "line {} of the patch ({}) opens a shell heredoc whose delimiter (`{word}`) has \
                 unmatched quotes: write `<<'EOF'`, `<<\"EOF\"` or `<<EOF`, or send the envelope alone, without the \
                 shell command",
                open + 1,
                quote(line)
            )))
        }
    };
    let closed = lines[end + 1..]
        .iter()
        .map(|l| bare(l).trim())
        .find(|l| !l.is_empty())
        == Some(delimiter);
    if !closed {
        return Err(ParseError::at(open + 1, format!(
            "the shell heredoc opened at line {} of the patch ({}) is not closed: put a line \
             `{delimiter}` right after `*** End Patch`, or send the envelope alone, without the shell command",
            open + 1,
            quote(line)
        )));
    }
    Ok(())
}

/// A `*** ` line inside the envelope: a new section, `Move to`, or `End of File`.
fn marker(
    t: &str,
    no: usize,
    cur: &mut Option<Section>,
    files: &mut Vec<PatchFile>,
) -> Result<(), ParseError> {
    let sections: [(&str, Kind); 3] = [
        ("*** Add File:", Kind::Add),
        ("*** Delete File:", Kind::Delete),
        ("*** Update File:", Kind::Update),
    ];
    for (prefix, kind) in sections {
        if let Some(rest) = t.strip_prefix(prefix) {
            let path = named_path(rest, no, t)?;
            if let Some(s) = cur.take() {
                files.push(s.finish()?);
            }
            *cur = Some(Section {
                kind,
                path,
                line: no,
                move_to: None,
                add: String::new(),
                hunks: Vec::new(),
                open: None,
                closed: false,
                blanks: String::new(),
            });
            return Ok(());
        }
    }
    if let Some(rest) = t.strip_prefix("*** Move to:") {
        return match cur.as_mut() {
            Some(s)
                if s.kind == Kind::Update
                    && s.move_to.is_none()
                    && s.hunks.is_empty()
                    && s.open.is_none() =>
            {
                s.move_to = Some(named_path(rest, no, t)?);
                Ok(())
            }
            _ => Err(ParseError::at(
                no,
                format!(
                "line {no} of the patch ({}) does not follow an `*** Update File: <path>` line: \
                 put it right after the Update File line of the file to move",
                quote(t)
            ),
            )),
        };
    }
    if t == "*** End of File" {
        return match cur.as_mut() {
            Some(s) if s.open.is_some() => {
                s.close_hunk(true)?;
                s.closed = true;
                Ok(())
            }
            _ => Err(ParseError::at(
                no,
                format!(
                "line {no} of the patch (`*** End of File`) closes no hunk: it goes right after \
                 the last line of a hunk in an `*** Update File: <path>` section"
            ),
            )),
        };
    }
    Err(ParseError::at(no, format!(
        "line {no} of the patch ({}) is not an apply_patch marker: expected \
         `*** Add File: <path>`, `*** Delete File: <path>`, `*** Update File: <path>`, `*** Move to: <path>` (right \
         after Update File), `*** End of File` (closing a hunk) or `*** End Patch`",
        quote(t)
    )))
}

fn named_path(rest: &str, no: usize, t: &str) -> Result<String, ParseError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(ParseError::at(
            no,
            format!(
                "line {no} of the patch ({}) names no path: write the file's path after the colon",
                quote(t)
            ),
        ));
    }
    Ok(path.to_string())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Add,
    Delete,
    Update,
}

/// One file section, as read so far.
struct Section {
    kind: Kind,
    path: String,
    /// Its `*** ... File:` line, 1-based.
    line: usize,
    move_to: Option<String>,
    /// An Add section's content.
    add: String,
    hunks: Vec<Hunk>,
    open: Option<OpenHunk>,
    /// The last hunk was closed by `*** End of File`: the next one needs its `@@`.
    closed: bool,
    /// Empty lines an Add section has read but not yet taken as content: it takes them only if a
    /// '+' line follows, as blank lines before the next marker are the model's spacing.
    blanks: String,
}

struct OpenHunk {
    /// Its `@@` line, or its first line when the file's first hunk has none.
    line: usize,
    after: Option<String>,
    old: String,
    new: String,
    changes: bool,
    /// Only empty lines so far: a blank line between `*** Update File:` and `@@` is no hunk.
    blank: bool,
}

impl Section {
    fn body_line(&mut self, raw: &str, no: usize) -> Result<(), ParseError> {
        let t = bare(raw);
        match self.kind {
            Kind::Add => match t.strip_prefix('+') {
                Some(_) => {
                    self.add.push_str(&std::mem::take(&mut self.blanks));
                    self.add.push_str(&whole(&raw[1..]));
                }
                None if t.trim().is_empty() => self.blanks.push_str(&whole(raw)),
                None => {
                    return Err(ParseError::at(no, format!(
                        "line {no} of the patch ({}), in `*** Add File: {}`, does not start with \
                         '+': every line of a new file's content starts with '+' (an empty line is a lone '+')",
                        quote(t),
                        self.path
                    )))
                }
            },
            Kind::Delete if t.trim().is_empty() => {}
            Kind::Delete => {
                return Err(ParseError::at(no, format!(
                    "line {no} of the patch ({}) follows `*** Delete File: {}`, which takes no \
                     lines: remove it, or start the next section with its `*** ` marker",
                    quote(t),
                    self.path
                )))
            }
            Kind::Update => self.update_line(raw, no)?,
        }
        Ok(())
    }

    fn update_line(&mut self, raw: &str, no: usize) -> Result<(), ParseError> {
        let t = bare(raw);
        if t.trim_end() == "@@" || t.starts_with("@@ ") {
            return self.start_hunk(t, no);
        }
        let (old, new, body) = match raw.as_bytes()[0] {
            b' ' => (true, true, &raw[1..]),
            // An empty line is an empty context line: models drop the lone space.
            _ if t.is_empty() => (true, true, raw),
            b'-' => (true, false, &raw[1..]),
            b'+' => (false, true, &raw[1..]),
            _ => {
                let k = self.hunks.len() + 1;
                return Err(ParseError::at(no, format!(
                    "line {no} of the patch ({}), in hunk {k} of {}, does not start with ' ' \
                     (context), '-' (removed) or '+' (added): prefix every hunk line, and start each hunk with `@@` \
                     or `@@ <a line that comes before the change>`",
                    quote(t),
                    self.path
                )));
            }
        };
        if self.open.is_none() && !self.open_headless(t, no)? {
            return Ok(());
        }
        let h = self.open.as_mut().expect("opened above");
        let line = whole(body);
        if old {
            h.old.push_str(&line);
        }
        if new {
            h.new.push_str(&line);
        }
        h.changes |= old != new;
        h.blank &= t.is_empty();
        Ok(())
    }

    /// Opens the hunk whose `@@` line, `t`, is line `no` of the patch, closing the one before.
    fn start_hunk(&mut self, t: &str, no: usize) -> Result<(), ParseError> {
        let after = t[2..].trim();
        if is_line_numbers(after) {
            return Err(ParseError::at(no, format!(
                "line {no} of the patch ({}) is a unified diff hunk header: in an apply_patch \
                 envelope a hunk starts with `@@` alone or with `@@ <a line that comes before the change>`, not \
                 line numbers",
                quote(t)
            )));
        }
        self.close_hunk(false)?;
        self.closed = false;
        let after = (!after.is_empty()).then(|| after.to_string());
        self.open = Some(OpenHunk {
            line: no,
            after,
            old: String::new(),
            new: String::new(),
            changes: false,
            blank: false,
        });
        Ok(())
    }

    /// Opens a hunk for the hunk line `t` (line `no`), which comes with no `@@` line before it; false
    /// for a blank line after `*** End of File`, which is skipped.
    fn open_headless(&mut self, t: &str, no: usize) -> Result<bool, ParseError> {
        if self.closed && t.trim().is_empty() {
            return Ok(false);
        }
        if self.closed {
            return Err(ParseError::at(
                no,
                format!(
                    "line {no} of the patch ({}) follows `*** End of File`, which closed hunk {} \
                 of {}: start the next hunk with `@@`, or the next file with its `*** ` marker",
                    quote(t),
                    self.hunks.len(),
                    self.path
                ),
            ));
        }
        // The first hunk of a file may leave out its `@@`; a later one cannot, since it would be
        // the previous hunk's continuation.
        self.open = Some(OpenHunk {
            line: no,
            after: None,
            old: String::new(),
            new: String::new(),
            changes: false,
            blank: true,
        });
        Ok(true)
    }

    fn close_hunk(&mut self, at_end: bool) -> Result<(), ParseError> {
        let Some(h) = self.open.take() else {
            return Ok(());
        };
        if h.blank && !at_end {
            return Ok(());
        }
        let k = self.hunks.len() + 1;
        // A file that is moved may state the lines it expects without changing them (Codex moves it):
        // such a hunk only checks them.
        if !h.changes && self.move_to.is_none() {
            return Err(ParseError::at(
                h.line,
                format!(
                "hunk {k} of {} (line {} of the patch) has no '-' or '+' line, only context: it \
                 changes nothing; add the lines to remove ('-') and to add ('+'), or drop the hunk",
                self.path, h.line
            ),
            ));
        }
        let label = match &h.after {
            Some(a) => format!("hunk {k} of {} (after \"{a}\")", self.path),
            None => format!("hunk {k} of {}", self.path),
        };
        let anchor = Anchor {
            forward: true,
            after: h.after,
            at_end,
            eof_newline_optional: true,
            label,
            ..Anchor::default()
        };
        self.hunks.push(Hunk {
            old: h.old,
            new: h.new,
            anchor,
        });
        Ok(())
    }

    fn finish(mut self) -> Result<PatchFile, ParseError> {
        self.close_hunk(false)?;
        let (op, hunks) = match self.kind {
            Kind::Add => {
                let anchor = Anchor { label: format!("new file {}", self.path), ..Anchor::default() };
                (PatchOp::Add, vec![Hunk { old: String::new(), new: self.add, anchor }])
            }
            Kind::Delete => (PatchOp::Delete, Vec::new()),
            Kind::Update => match self.move_to {
                Some(to) => (PatchOp::Move(to), self.hunks),
                None if self.hunks.is_empty() => {
                    return Err(ParseError::at(self.line, format!(
                        "`*** Update File: {}` (line {} of the patch) has no hunk and no \
                         `*** Move to:`: add its hunks (`@@`, then ' ', '-' and '+' lines), or drop the section",
                        self.path, self.line
                    )))
                }
                None => (PatchOp::Update, self.hunks),
            },
        };
        Ok(PatchFile {
            path: self.path,
            op,
            hunks,
            mode: None,
        })
    }
}

/// `-12,3 +12,4 @@`: what follows `@@ ` in a unified diff's hunk header.
fn is_line_numbers(after: &str) -> bool {
    let mut words = after.split_whitespace();
    let range = |w: Option<&str>, sign: char| {
        w.and_then(|w| w.strip_prefix(sign)).is_some_and(|r| {
            !r.is_empty()
                && r.split(',')
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    range(words.next(), '-') && range(words.next(), '+')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::{files, refusal, text};

    fn anchor(after: Option<&str>, at_end: bool, label: &str) -> Anchor {
        Anchor {
            eof_newline_optional: true,
            bom: false,
            line: None,
            reach: None,
            forward: true,
            after: after.map(String::from),
            at_start: false,
            at_end,
            label: label.into(),
        }
    }

    fn hunk(old: &str, new: &str, anchor: Anchor) -> Hunk {
        Hunk {
            old: old.into(),
            new: new.into(),
            anchor,
        }
    }

    fn file(path: &str, op: PatchOp, hunks: Vec<Hunk>) -> PatchFile {
        PatchFile {
            path: path.into(),
            op,
            hunks,
            mode: None,
        }
    }

    fn new_file(path: &str, content: &str) -> PatchFile {
        file(
            path,
            PatchOp::Add,
            vec![hunk(
                "",
                content,
                Anchor {
                    label: format!("new file {path}"),
                    ..Anchor::default()
                },
            )],
        )
    }

    #[test]
    fn every_kind_of_section() {
        let t = text(&[
            "*** Begin Patch",
            "*** Add File: docs/hello.txt",
            "+Hello",
            "+",
            "+world",
            "*** Delete File: old/obsolete.py",
            "*** Update File: src/app.py",
            "*** Move to: src/main.py",
            "@@ def handler():",
            "-    return 1",
            "+    return 2",
            "@@",
            " x = 1",
            "-y = 2",
            "+y = 3",
            "*** End of File",
            "*** End Patch",
        ]);
        assert_eq!(
            files(Format::ApplyPatch, &t),
            vec![
                new_file("docs/hello.txt", "Hello\n\nworld\n"),
                file("old/obsolete.py", PatchOp::Delete, vec![]),
                file(
                    "src/app.py",
                    PatchOp::Move("src/main.py".into()),
                    vec![
                        hunk(
                            "    return 1\n",
                            "    return 2\n",
                            anchor(
                                Some("def handler():"),
                                false,
                                "hunk 1 of src/app.py (after \"def handler():\")"
                            ),
                        ),
                        hunk(
                            "x = 1\ny = 2\n",
                            "x = 1\ny = 3\n",
                            anchor(None, true, "hunk 2 of src/app.py")
                        ),
                    ],
                ),
            ]
        );
    }

    #[test]
    fn the_first_hunk_may_leave_out_its_header_and_an_empty_line_is_empty_context() {
        let t = text(&[
            "*** Begin Patch",
            "*** Update File: a.py",
            " import os",
            "",
            "-x = 1",
            "+x = 2",
            "@@ class Foo",
            "     def f(self):",
            "-        pass",
            "+        return 1",
            "*** End Patch",
        ]);
        assert_eq!(
            files(Format::ApplyPatch, &t),
            vec![file(
                "a.py",
                PatchOp::Update,
                vec![
                    hunk(
                        "import os\n\nx = 1\n",
                        "import os\n\nx = 2\n",
                        anchor(None, false, "hunk 1 of a.py")
                    ),
                    hunk(
                        "    def f(self):\n        pass\n",
                        "    def f(self):\n        return 1\n",
                        anchor(
                            Some("class Foo"),
                            false,
                            "hunk 2 of a.py (after \"class Foo\")"
                        ),
                    ),
                ],
            )]
        );
    }

    #[test]
    fn wrappers_models_send_are_ignored() {
        let body = ["*** Update File: f.txt", "@@", "-a", "+b"];
        let expected = vec![file(
            "f.txt",
            PatchOp::Update,
            vec![hunk("a\n", "b\n", anchor(None, false, "hunk 1 of f.txt"))],
        )];
        let heredoc = [
            &["apply_patch <<'EOF'", "*** Begin Patch"][..],
            &body,
            &["*** End Patch", "EOF"],
        ]
        .concat();
        assert_eq!(files(Format::ApplyPatch, &text(&heredoc)), expected);
        let piped = [
            &["cat <<'PATCH' | apply_patch", "*** Begin Patch"][..],
            &body,
            &["*** End Patch", "PATCH"],
        ]
        .concat();
        assert_eq!(files(Format::ApplyPatch, &text(&piped)), expected);
        let fenced = [
            &["", "Here it is:", "```", "*** Begin Patch  "][..],
            &body,
            &["*** End Patch\t", "```", ""],
        ]
        .concat();
        assert_eq!(files(Format::ApplyPatch, &text(&fenced)), expected);
        // Trailing whitespace after the section and hunk markers too.
        let spaced = text(&[
            "*** Begin Patch",
            "*** Update File: f.txt  ",
            "@@  ",
            "-a",
            "+b",
            "*** End of File ",
            "*** End Patch",
        ]);
        assert_eq!(
            files(Format::ApplyPatch, &spaced)[0].hunks[0].anchor,
            anchor(None, true, "hunk 1 of f.txt")
        );
    }

    #[test]
    fn an_indented_marker_starts_a_section_but_inside_a_hunk_it_is_context() {
        let t = text(&[
            "*** Begin Patch",
            "  *** Update File: r.md",
            "@@",
            " *** Add File: x",
            "-a",
            "+b",
            "*** End Patch",
        ]);
        let expected = hunk(
            "*** Add File: x\na\n",
            "*** Add File: x\nb\n",
            anchor(None, false, "hunk 1 of r.md"),
        );
        assert_eq!(
            files(Format::ApplyPatch, &t),
            vec![file("r.md", PatchOp::Update, vec![expected])]
        );
    }

    #[test]
    fn a_move_alone_is_a_move_without_hunks() {
        let t = text(&[
            "*** Begin Patch",
            "*** Update File: a.rs",
            "*** Move to: b.rs",
            "*** End Patch",
        ]);
        assert_eq!(
            files(Format::ApplyPatch, &t),
            vec![file("a.rs", PatchOp::Move("b.rs".into()), vec![])]
        );
        // A move whose hunk has only context keeps the hunk, which checks the lines.
        let t = text(&[
            "*** Begin Patch",
            "*** Update File: a.rs",
            "*** Move to: b.rs",
            "@@",
            " fn main() {}",
            "*** End Patch",
        ]);
        let check = hunk(
            "fn main() {}\n",
            "fn main() {}\n",
            anchor(None, false, "hunk 1 of a.rs"),
        );
        assert_eq!(
            files(Format::ApplyPatch, &t),
            vec![file("a.rs", PatchOp::Move("b.rs".into()), vec![check])]
        );
    }

    #[test]
    fn added_files_empty_or_followed_by_blank_lines() {
        let t = text(&[
            "*** Begin Patch",
            "*** Add File: empty.txt",
            "*** Add File: b.txt",
            "+x",
            "",
            "+y",
            "",
            "",
            "*** End Patch",
        ]);
        // A blank line between '+' lines is content; blank lines before the next marker are spacing.
        assert_eq!(
            files(Format::ApplyPatch, &t),
            vec![new_file("empty.txt", ""), new_file("b.txt", "x\n\ny\n")]
        );
    }

    #[test]
    fn crlf_lines_keep_their_carriage_return() {
        let t = "*** Begin Patch\r\n*** Update File: w.txt\r\n@@\r\n a\r\n-b\r\n+c\r\n*** End Patch\r\n";
        assert_eq!(files(Format::ApplyPatch, t)[0].hunks[0].old, "a\r\nb\r\n");
        assert_eq!(files(Format::ApplyPatch, t)[0].hunks[0].new, "a\r\nc\r\n");
        assert_eq!(files(Format::ApplyPatch, t)[0].path, "w.txt");
    }

    #[test]
    fn missing_begin_or_end_is_refused() {
        assert_eq!(
            refusal(Format::ApplyPatch, "*** Update File: a\n"),
            "InputValidationError: the text has no `*** Begin Patch` line: an apply_patch envelope starts with a line \
             `*** Begin Patch` and ends with a line `*** End Patch`, with the file sections between them"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["x", "*** Begin Patch", "*** Update File: a", "-a", "+b", "EOF"])),
            "InputValidationError: the envelope begun at line 2 (`*** Begin Patch`) has no `*** End Patch` line: end \
             the envelope with a line `*** End Patch` after its last section"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Delete File: a", "*** End Patch", "*** Begin Patch", "*** End Patch"])),
            "InputValidationError: line 4 of the patch starts a second envelope after the one ended at line 3: send one \
             envelope, with every file's section in it"
        );
    }

    #[test]
    fn unknown_and_misplaced_markers_are_refused() {
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Rename File: a", "*** End Patch"])),
            "InputValidationError: line 2 of the patch (`*** Rename File: a`) is not an apply_patch marker: expected \
             `*** Add File: <path>`, `*** Delete File: <path>`, `*** Update File: <path>`, `*** Move to: <path>` (right \
             after Update File), `*** End of File` (closing a hunk) or `*** End Patch`"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Update File: a", "@@", "-x", "+y", "*** Move to: b", "*** End Patch"])),
            "InputValidationError: line 6 of the patch (`*** Move to: b`) does not follow an `*** Update File: <path>` \
             line: put it right after the Update File line of the file to move"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Add File: a", "+x", "*** End of File", "*** End Patch"])),
            "InputValidationError: line 4 of the patch (`*** End of File`) closes no hunk: it goes right after the last \
             line of a hunk in an `*** Update File: <path>` section"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Update File:   ", "*** End Patch"])),
            "InputValidationError: line 2 of the patch (`*** Update File:`) names no path: write the file's path after \
             the colon"
        );
    }

    #[test]
    fn body_lines_without_their_prefix_are_refused() {
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Update File: a.py", "@@", " x", "y = 2", "*** End Patch"])),
            "InputValidationError: line 5 of the patch (`y = 2`), in hunk 1 of a.py, does not start with ' ' (context), \
             '-' (removed) or '+' (added): prefix every hunk line, and start each hunk with `@@` or `@@ <a line that \
             comes before the change>`"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Add File: n.txt", "+a", "b", "*** End Patch"])),
            "InputValidationError: line 4 of the patch (`b`), in `*** Add File: n.txt`, does not start with '+': every \
             line of a new file's content starts with '+' (an empty line is a lone '+')"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Delete File: d.txt", "-a", "*** End Patch"])),
            "InputValidationError: line 3 of the patch (`-a`) follows `*** Delete File: d.txt`, which takes no lines: \
             remove it, or start the next section with its `*** ` marker"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "", "-a", "*** End Patch"])),
            "InputValidationError: line 3 of the patch (`-a`) comes before any file section: after `*** Begin Patch` \
             comes `*** Add File: <path>`, `*** Delete File: <path>` or `*** Update File: <path>`"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Update File: a", "@@", "-x", "+y", "*** End of File", "-z", "*** End Patch"])),
            "InputValidationError: line 7 of the patch (`-z`) follows `*** End of File`, which closed hunk 1 of a: start \
             the next hunk with `@@`, or the next file with its `*** ` marker"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Update File: a", "@@ -1,2 +1,2 @@", "-x", "+y", "*** End Patch"])),
            "InputValidationError: line 3 of the patch (`@@ -1,2 +1,2 @@`) is a unified diff hunk header: in an \
             apply_patch envelope a hunk starts with `@@` alone or with `@@ <a line that comes before the change>`, not \
             line numbers"
        );
    }

    #[test]
    fn hunks_that_change_nothing_and_empty_updates_are_refused() {
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&[
                "*** Begin Patch",
                "*** Update File: a",
                "@@ fn main()",
                " x",
                "@@",
                "-y",
                "+z",
                "*** End Patch"
            ])),
            "InputValidationError: hunk 1 of a (line 3 of the patch) has no '-' or '+' line, only context: it changes \
             nothing; add the lines to remove ('-') and to add ('+'), or drop the hunk"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "*** Update File: a", "", "*** End Patch"])),
            "InputValidationError: `*** Update File: a` (line 2 of the patch) has no hunk and no `*** Move to:`: add its \
             hunks (`@@`, then ' ', '-' and '+' lines), or drop the section"
        );
        assert_eq!(
            refusal(Format::ApplyPatch, &text(&["*** Begin Patch", "", "*** End Patch"])),
            "InputValidationError: the patch holds no file change: between `*** Begin Patch` and `*** End Patch` put at \
             least one `*** Add File: <path>`, `*** Delete File: <path>` or `*** Update File: <path>` section"
        );
    }

    #[test]
    fn prose_with_a_shift_operator_before_the_envelope_is_no_heredoc() {
        let t = text(&[
            "Print it with `cout << x`:",
            "*** Begin Patch",
            "*** Delete File: a",
            "*** End Patch",
        ]);
        assert_eq!(
            files(Format::ApplyPatch, &t),
            vec![file("a", PatchOp::Delete, vec![])]
        );
        assert!(refusal(
            Format::ApplyPatch,
            &text(&[
                "<<'EOF",
                "*** Begin Patch",
                "*** Delete File: a",
                "*** End Patch",
                "EOF"
            ])
        )
        .contains("unmatched quotes"));
    }

    #[test]
    fn looks_like_needs_the_begin_marker_on_its_own_line() {
        assert!(looks_like("apply_patch <<'EOF'\n*** Begin Patch\n"));
        assert!(looks_like("*** Begin Patch  \r\n"));
        assert!(!looks_like("say *** Begin Patch here\n"));
    }

    #[test]
    fn a_refusal_carries_the_patch_line_it_blames() {
        let line = |t: &str| parse(t).expect_err("should be refused").blamed_line();
        assert_eq!(
            line(&text(&[
                "x",
                "*** Begin Patch",
                "*** Update File: a",
                "-a",
                "+b",
                "EOF"
            ])),
            Some(2)
        );
        let twice = [
            "*** Begin Patch",
            "*** Delete File: a",
            "*** End Patch",
            "*** Begin Patch",
            "*** End Patch",
        ];
        assert_eq!(line(&text(&twice)), Some(4));
        assert_eq!(
            line(&text(&[
                "*** Begin Patch",
                "*** Rename File: a",
                "*** End Patch"
            ])),
            Some(2)
        );
        // A text without the envelope has no line to blame.
        assert_eq!(line("*** Update File: a\n"), None);
    }
}
