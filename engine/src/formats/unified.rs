//! Unified diffs as `git diff`, `git format-patch` and `diff -u` write them (the GNU diffutils manual,
//! "Detailed Description of Unified Format", and git-diff(1), "Generating patch text with -p").
//!
//! A hunk's body is delimited by the counts in its `@@ -O,Oc +N,Nc @@` header, never by what the
//! next line looks like: a removed line `-- x` reads `--- x`, which is also how a file header starts.
//! Outside hunk bodies anything that is not a header is ignored: the commit message and mail headers
//! before the first file, the `-- ` signature and a chat answer's closing fence after the last hunk.
//!
//! Modes are git's: `new file mode`, `old mode`/`new mode` (a section may change nothing else) set
//! the file's executable bit as `git apply` does; a symbolic link or submodule is refused.
//!
//! Several sections for one file (a series of `git diff`s or `format-patch`es concatenated) are
//! composed as `git apply` composes them: each section applies to the text the one before left, a
//! rename's later sections name the new path, and a deletion followed by a creation replaces the
//! file. What `git apply` refuses (a path changed after it was deleted or renamed away) or gets wrong
//! (a second creation; a deletion or a rename after an edit, which it writes from the file as it was
//! before the patch, keeping the edited one) is refused.

use super::error::ParseError;
use super::patch::{Format, Hunk, Patch, PatchFile, PatchOp};
use crate::engine::Anchor;

const DEV_NULL: &str = "/dev/null";

pub fn looks_like(text: &str) -> bool {
    let mut after_dashes = false;
    for line in text.lines() {
        if line.starts_with("diff --git ")
            || line.starts_with("@@ -")
            || (after_dashes && line.starts_with("+++ "))
        {
            return true;
        }
        after_dashes = line.starts_with("--- ");
    }
    false
}

pub fn parse(text: &str) -> Result<Patch, ParseError> {
    // Split on '\n' only, each line keeping its break: a CRLF patch keeps its '\r' in the hunk text.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut files = Vec::new();
    let mut cur: Option<Section> = None;
    let mut i = 0;
    while i < lines.len() {
        let t = bare(lines[i]);
        if let Some(rest) = t.strip_prefix("diff --git ") {
            finish(cur.take(), &mut files)?;
            let mut s = Section::new(i + 1, true);
            s.git_names = Some(git_names(rest, i + 1)?);
            i = extended_headers(&lines, i + 1, &mut s)?;
            cur = Some(s);
            continue;
        }
        if t.starts_with("--- ") {
            if let Some(names) = file_header(&lines, i)? {
                finish(cur.take(), &mut files)?;
                let mut s = Section::new(i + 1, false);
                s.names = Some(names);
                cur = Some(s);
                i += 2;
                continue;
            }
            // Prose may hold a line starting with "--- "; one right before a hunk header is a header.
            if lines
                .get(i + 1)
                .is_some_and(|n| bare(n).starts_with("@@ -"))
            {
                return Err(no_plus_line(&lines, i));
            }
        }
        if t.starts_with("@@ ") {
            match cur.as_mut() {
                Some(s) if s.names.is_some() => {
                    i = hunk(&lines, i, s)?;
                    continue;
                }
                _ if t.starts_with("@@ -") => {
                    return Err(ParseError::at(i + 1, format!(
                        "line {} of the patch ({}) starts a hunk that follows no file header: \
                         put the file's `--- a/path` and `+++ b/path` lines before it, as git diff writes them",
                        i + 1,
                        quote(t)
                    )))
                }
                _ => {}
            }
        }
        if is_binary(t) {
            let path = match &cur {
                Some(s) if s.git => s.path(),
                _ => binary_files_name(t),
            };
            return Err(binary(&path, i + 1, t));
        }
        i += 1;
    }
    finish(cur.take(), &mut files)?;
    if files.is_empty() {
        return Err(ParseError::new(
            "the diff holds no file change: it has no hunk (`@@ -l,n +l,n @@` after a file's \
             `--- a/path` and `+++ b/path` lines) and no new, deleted or renamed file and no mode change; \
             give the diff of at least one changed file",
        ));
    }
    Ok(Patch {
        format: Format::Diff,
        files,
    })
}

/// One file's part of the diff, as read so far.
struct Section {
    /// Where it starts (its `diff --git` or `---` line), 1-based.
    line: usize,
    git: bool,
    /// From the `diff --git` line: the only names a section without `---`/`+++` lines has.
    git_names: Option<(String, String)>,
    /// From the `---` and `+++` lines, unquoted, prefixes not yet stripped.
    names: Option<(String, String)>,
    rename: (Option<String>, Option<String>),
    new_file: bool,
    deleted: bool,
    /// `old mode` / `new mode` (`new file mode` for a new file), as git writes them.
    old_mode: Option<u32>,
    new_mode: Option<u32>,
    hunks: Vec<RawHunk>,
}

struct RawHunk {
    /// The header's line in the patch, 1-based.
    line: usize,
    old_start: usize,
    old_count: usize,
    new_count: usize,
    old: String,
    new: String,
    /// Context lines after the last change: none means the hunk ends the file.
    trailing: usize,
}

impl Section {
    fn new(line: usize, git: bool) -> Self {
        Section {
            line,
            git,
            git_names: None,
            names: None,
            rename: (None, None),
            new_file: false,
            deleted: false,
            old_mode: None,
            new_mode: None,
            hunks: Vec::new(),
        }
    }

    fn stripped_names(&self) -> (String, String) {
        let (old, new) = self
            .names
            .as_ref()
            .or(self.git_names.as_ref())
            .cloned()
            .unwrap_or_default();
        strip_prefixes(&old, &new)
    }

    fn is_new(&self) -> bool {
        self.new_file || self.stripped_names().0 == DEV_NULL
    }

    fn is_deleted(&self) -> bool {
        self.deleted || self.stripped_names().1 == DEV_NULL
    }

    /// The path the file is known by in the patch: the one it has before a rename or a deletion.
    fn path(&self) -> String {
        let (old, new) = self.stripped_names();
        if let (Some(from), Some(_)) = &self.rename {
            return from.clone();
        }
        if new == DEV_NULL || self.deleted {
            old
        } else {
            new
        }
    }
}

/// git's -p1: `a/` and `b/` are dropped only when the header uses them, so `diff -u old/x new/x`
/// keeps its paths whole.
fn strip_prefixes(old: &str, new: &str) -> (String, String) {
    let null = |p: &str| p == DEV_NULL;
    let prefixed = (null(old) || old.starts_with("a/"))
        && (null(new) || new.starts_with("b/"))
        && !(null(old) && null(new));
    if !prefixed {
        return (old.to_string(), new.to_string());
    }
    let strip = |p: &str, pre: &str| {
        if null(p) {
            p.to_string()
        } else {
            p[pre.len()..].to_string()
        }
    };
    (strip(old, "a/"), strip(new, "b/"))
}

/// The git extended header lines after `diff --git`, up to and including `---`/`+++`; returns the
/// index of the first line after them.
fn extended_headers(lines: &[&str], mut i: usize, s: &mut Section) -> Result<usize, ParseError> {
    const IGNORED: &[&str] = &["index ", "similarity index ", "dissimilarity index "];
    while i < lines.len() {
        let t = bare(lines[i]);
        if let Some(p) = t.strip_prefix("rename from ") {
            s.rename.0 = Some(header_path(p, i + 1)?);
        } else if let Some(p) = t.strip_prefix("rename to ") {
            s.rename.1 = Some(header_path(p, i + 1)?);
        } else if let Some(p) = t.strip_prefix("copy from ") {
            let from = header_path(p, i + 1)?;
            let to = match lines
                .get(i + 1)
                .and_then(|l| bare(l).strip_prefix("copy to "))
            {
                Some(p) => header_path(p, i + 2)?,
                None => s.stripped_names().1,
            };
            return Err(ParseError::at(i + 1, format!(
                "the diff copies {from} to {to} (line {} of the patch): multiedit does not support \
                 copies; make the diff without copy detection (no -C or --find-copies), which shows the copy as a new file",
                i + 1
            )));
        } else if let Some(m) = t.strip_prefix("new file mode ") {
            s.new_file = true;
            s.new_mode = Some(git_mode(m, i + 1, s)?);
        } else if let Some(m) = t.strip_prefix("old mode ") {
            s.old_mode = Some(git_mode(m, i + 1, s)?);
        } else if let Some(m) = t.strip_prefix("new mode ") {
            s.new_mode = Some(git_mode(m, i + 1, s)?);
        } else if t.starts_with("deleted file mode ") {
            s.deleted = true;
        } else if is_binary(t) {
            return Err(binary(&s.path(), i + 1, t));
        } else if t.starts_with("--- ") {
            let Some(names) = file_header(lines, i)? else {
                return Err(no_plus_line(lines, i));
            };
            s.names = Some(names);
            return Ok(i + 2);
        } else if !IGNORED.iter().any(|p| t.starts_with(p)) {
            return Ok(i);
        }
        i += 1;
    }
    Ok(i)
}

/// A mode of an extended header: a regular file's, executable (`0o100755`) or not (`0o100644`), as
/// git reads it (an old `100664` is `100644`).
fn git_mode(text: &str, line: usize, s: &Section) -> Result<u32, ParseError> {
    let mode = u32::from_str_radix(text.trim(), 8).ok();
    match mode {
        Some(m) if m & 0o170000 == 0o100000 => Ok(if m & 0o100 != 0 { 0o100755 } else { 0o100644 }),
        _ => {
            let what = match mode {
                Some(0o120000) => "a symbolic link".to_string(),
                Some(0o160000) => "a submodule".to_string(),
                _ => format!("mode {}", quote(text.trim())),
            };
            Err(ParseError::at(
                line,
                format!(
                "the diff makes {} {what} (line {line} of the patch): multiedit writes regular \
                 files only; apply this section with `git apply`",
                s.path()
            ),
            ))
        }
    }
}

/// The names of a `--- old` line at `i` followed by a `+++ new` line, or `None` when no `+++` follows.
fn file_header(lines: &[&str], i: usize) -> Result<Option<(String, String)>, ParseError> {
    let Some(plus) = lines.get(i + 1).and_then(|l| bare(l).strip_prefix("+++ ")) else {
        return Ok(None);
    };
    let old = header_path(&bare(lines[i])[4..], i + 1)?;
    let new = header_path(plus, i + 2)?;
    Ok(Some((old, new)))
}

fn no_plus_line(lines: &[&str], i: usize) -> ParseError {
    let next = match lines.get(i + 1) {
        Some(l) => format!(
            "line {} ({}) is not its `+++ b/path` line",
            i + 2,
            quote(bare(l))
        ),
        None => "the patch ends there".to_string(),
    };
    ParseError::at(
        i + 1,
        format!(
        "line {} of the patch ({}) starts a file header, but {next}: a unified diff names each \
         file on two lines, `--- a/path` then `+++ b/path`; add the missing line",
        i + 1,
        quote(bare(lines[i]))
    ),
    )
}

/// A path after `--- `, `+++ `, `rename from `...: C-quoted by git when unusual, and followed by a
/// tab and a timestamp in `diff -u` output.
fn header_path(rest: &str, line: usize) -> Result<String, ParseError> {
    if rest.starts_with('"') {
        return Ok(unquote(rest, line)?.0);
    }
    let path = rest.split('\t').next().unwrap_or("");
    Ok(path.trim_end().to_string())
}

/// The two names of `diff --git a/x b/y`. They are only needed when no `---`/`+++` lines follow
/// (renames, empty files), where git writes both names alike unless they are quoted.
fn git_names(rest: &str, line: usize) -> Result<(String, String), ParseError> {
    if rest.starts_with('"') {
        let (old, after) = unquote(rest, line)?;
        return Ok((old, header_path(after.trim_start(), line)?));
    }
    if let Some(at) = rest.find(" \"") {
        return Ok((rest[..at].to_string(), unquote(&rest[at + 1..], line)?.0));
    }
    // "a/x y b/x y": the split where both halves name the same file, else the first " b/".
    let splits: Vec<usize> = rest.match_indices(" b/").map(|(at, _)| at).collect();
    let same = splits
        .iter()
        .copied()
        .find(|&at| rest[..at].strip_prefix("a/") == Some(&rest[at + 3..]));
    let at = same
        .or(splits.first().copied())
        .or_else(|| rest.find(' '))
        .unwrap_or(rest.len());
    Ok((
        rest[..at].to_string(),
        rest.get(at + 1..).unwrap_or("").trim_end().to_string(),
    ))
}

/// git's C-style quoting (`"a/f\303\251 x.txt"`): returns the path and the text after the closing quote.
fn unquote(s: &str, line: usize) -> Result<(String, &str), ParseError> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 1;
    while i < b.len() {
        match b[i] {
            b'"' => {
                return String::from_utf8(out)
                    .map(|p| (p, &s[i + 1..]))
                    .map_err(|_| {
                        ParseError::at(
                            line,
                            format!(
                        "the quoted path on line {line} of the patch ({}) is not UTF-8 text once \
                         unquoted: multiedit edits files whose names are UTF-8",
                        quote(s)
                    ),
                        )
                    })
            }
            b'\\' if i + 1 < b.len() => {
                let c = b[i + 1];
                i += 2;
                if (b'0'..=b'7').contains(&c) {
                    let mut v = u32::from(c - b'0');
                    for _ in 0..2 {
                        if i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                            v = v * 8 + u32::from(b[i] - b'0');
                            i += 1;
                        }
                    }
                    out.push(v as u8);
                } else {
                    out.push(match c {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'a' => 7,
                        b'b' => 8,
                        b'f' => 12,
                        b'v' => 11,
                        other => other,
                    });
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err(ParseError::at(
        line,
        format!(
            "the quoted path on line {line} of the patch ({}) has no closing quote: end it with \"",
            quote(s)
        ),
    ))
}

fn is_binary(t: &str) -> bool {
    (t.starts_with("Binary files ") && t.ends_with(" differ")) || t == "GIT binary patch"
}

/// The file of `Binary files x and y differ` outside a git section: y, unless the file was deleted.
fn binary_files_name(t: &str) -> String {
    let names = &t["Binary files ".len()..t.len() - " differ".len()];
    let (old, new) = names.split_once(" and ").unwrap_or((names, names));
    let (old, new) = strip_prefixes(old, new);
    if new == DEV_NULL {
        old
    } else {
        new
    }
}

fn binary(path: &str, line: usize, t: &str) -> ParseError {
    ParseError::at(
        line,
        format!(
            "the diff changes {path} as a binary file (line {line} of the patch: {}): multiedit \
         applies text changes only; apply binary patches with `git apply`",
            quote(t)
        ),
    )
}

/// `@@ -O,Oc +N,Nc @@`, a count left out meaning 1.
fn hunk_header(t: &str) -> Option<(usize, usize, usize)> {
    let rest = t.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let number = |s: &str| {
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    let range = |r: &str| match r.split_once(',') {
        Some((start, count)) => Some((number(start)?, number(count)?)),
        None => Some((number(r)?, 1)),
    };
    let (old_start, old_count) = range(old)?;
    let (_, new_count) = range(new)?;
    Some((old_start, old_count, new_count))
}

#[derive(Clone, Copy)]
enum Side {
    Both,
    Old,
    New,
}

/// Reads the hunk whose header is line `i` into `s`; returns the index of the line after it.
fn hunk(lines: &[&str], i: usize, s: &mut Section) -> Result<usize, ParseError> {
    let header = bare(lines[i]);
    let Some((old_start, old_count, new_count)) = hunk_header(header) else {
        return Err(bad_hunk_header(i, header));
    };
    let k = s.hunks.len() + 1;
    let mismatch = |j: usize| {
        let (old, new) = count_body(lines, i + 1, j);
        ParseError::at(i + 1, format!(
            "hunk {k} of {} (line {} of the patch, {}) announces {old_count} old and {new_count} \
             new lines, but its body holds {old} old and {new} new lines: make the counts in the @@ line match the \
             body (old: the ' ' and '-' lines, new: the ' ' and '+' lines)",
            s.path(),
            i + 1,
            quote(header)
        ))
    };
    let mut body = Body::new(old_count, new_count);
    let mut j = i + 1;
    while body.open() || lines.get(j).is_some_and(|l| l.starts_with('\\')) {
        let Some(&raw) = lines.get(j) else {
            return Err(mismatch(j));
        };
        let t = bare(raw);
        // Some tools strip the space of an empty context line.
        let (side, text) = match raw.as_bytes()[0] {
            b' ' => (Side::Both, &raw[1..]),
            _ if t.is_empty() => (Side::Both, raw),
            b'-' => (Side::Old, &raw[1..]),
            b'+' => (Side::New, &raw[1..]),
            b'\\' => {
                if !body.no_newline() {
                    return Err(ParseError::at(
                        j + 1,
                        format!(
                        "line {} of the patch ({}) follows no hunk line: a `\\ No newline at end \
                         of file` line comes right after the line that has no newline",
                        j + 1,
                        quote(t)
                    ),
                    ));
                }
                j += 1;
                continue;
            }
            _ if t.starts_with("@@") || t.starts_with("diff --git ") => return Err(mismatch(j)),
            _ => {
                let (o, n) = (old_count - body.left_old, new_count - body.left_new);
                return Err(ParseError::at(j + 1, format!(
                    "line {} of the patch ({}) is inside hunk {k} of {} but is no hunk line: each \
                     line of a hunk starts with ' ' (context), '-' (removed), '+' (added) or '\\' (no newline at end of \
                     file). The hunk's header at line {} announces {old_count} old and {new_count} new lines and {o} old \
                     and {n} new came before this line: fix the line, or the counts if the hunk ends before it",
                    j + 1,
                    quote(t),
                    s.path(),
                    i + 1
                )));
            }
        };
        if !body.push(side, text) {
            return Err(mismatch(j));
        }
        j += 1;
    }
    if counts_too_small(lines, j)? {
        return Err(mismatch(j));
    }
    s.hunks.push(RawHunk {
        line: i + 1,
        old_start,
        old_count,
        new_count,
        trailing: body.trailing_context(),
        old: body.old,
        new: body.new,
    });
    Ok(j)
}

/// The refusal of line `i`, `header`, which starts as a hunk header and is none.
fn bad_hunk_header(i: usize, header: &str) -> ParseError {
    ParseError::at(
        i + 1,
        format!(
            "line {} of the patch ({}) is not a valid hunk header: expected \
             `@@ -start,count +start,count @@` (a count may be left out when it is 1)",
            i + 1,
            quote(header)
        ),
    )
}

/// Whether line `j`, right after a hunk's counts are used up, is a hunk line: then the counts are too
/// small. "-- " is the signature `git format-patch` ends with, "--- " + "+++ " the next file's header.
fn counts_too_small(lines: &[&str], j: usize) -> Result<bool, ParseError> {
    let Some(&next) = lines.get(j) else {
        return Ok(false);
    };
    let t = bare(next);
    let hunk_line = t.starts_with([' ', '+', '-']);
    Ok(hunk_line
        && t.trim_end() != "--"
        && !(t.starts_with("--- ") && file_header(lines, j)?.is_some()))
}

/// A hunk's body as it is read: its old and new text, the lines its header's counts still expect,
/// and its context lines before and after the change.
struct Body {
    old: String,
    new: String,
    left_old: usize,
    left_new: usize,
    leading: usize,
    trailing: usize,
    changed: bool,
    /// The side of the last line read, which a `\ No newline at end of file` line is about.
    last: Option<Side>,
}

impl Body {
    fn new(old_count: usize, new_count: usize) -> Body {
        Body {
            old: String::new(),
            new: String::new(),
            left_old: old_count,
            left_new: new_count,
            leading: 0,
            trailing: 0,
            changed: false,
            last: None,
        }
    }

    /// Whether the header's counts expect another line.
    fn open(&self) -> bool {
        self.left_old > 0 || self.left_new > 0
    }

    /// Adds the line `text` on `side`; false when the counts leave no room for it there.
    fn push(&mut self, side: Side, text: &str) -> bool {
        let room = match side {
            Side::Both => self.left_old > 0 && self.left_new > 0,
            Side::Old => self.left_old > 0,
            Side::New => self.left_new > 0,
        };
        if !room {
            return false;
        }
        let line = whole(text);
        if matches!(side, Side::Both | Side::Old) {
            self.old.push_str(&line);
            self.left_old -= 1;
        }
        if matches!(side, Side::Both | Side::New) {
            self.new.push_str(&line);
            self.left_new -= 1;
        }
        match (side, self.changed) {
            (Side::Both, false) => self.leading += 1,
            (Side::Both, true) => self.trailing += 1,
            _ => (self.changed, self.trailing) = (true, 0),
        }
        self.last = Some(side);
        true
    }

    /// `\ No newline at end of file`: the last line read ends without one. False when no line came
    /// before.
    fn no_newline(&mut self) -> bool {
        let Some(side) = self.last else {
            return false;
        };
        if matches!(side, Side::Both | Side::Old) {
            drop_break(&mut self.old);
        }
        if matches!(side, Side::Both | Side::New) {
            drop_break(&mut self.new);
        }
        true
    }

    /// Context lines after the last change; a hunk that changes nothing has only context.
    fn trailing_context(&self) -> usize {
        if self.changed {
            self.trailing
        } else {
            self.leading
        }
    }
}

/// The old and new line counts of the body starting at `from`, read as far as it looks like one
/// (past `stop`, the line that broke the header's counts, if need be), for the refusal.
fn count_body(lines: &[&str], from: usize, stop: usize) -> (usize, usize) {
    let (mut old, mut new) = (0, 0);
    for (j, raw) in lines.iter().enumerate().skip(from) {
        let t = bare(raw);
        // Past `stop` an empty line is more likely the gap before prose than one more context line.
        let end =
            t.is_empty() || t.starts_with("@@") || t.trim_end() == "--" || t.starts_with("--- ");
        if j >= stop && end {
            break;
        }
        match t.as_bytes().first() {
            None | Some(b' ') => {
                old += 1;
                new += 1;
            }
            Some(b'-') => old += 1,
            Some(b'+') => new += 1,
            Some(b'\\') => {}
            _ => break,
        }
    }
    (old, new)
}

/// Turns a finished section into its file, if it changes anything multiedit applies, and composes
/// it with the sections before it that name the same file.
fn finish(s: Option<Section>, files: &mut Vec<PatchFile>) -> Result<(), ParseError> {
    let Some(s) = s else { return Ok(()) };
    let path = s.path();
    let mode = match (s.old_mode, s.new_mode) {
        (old, Some(new)) if old != Some(new) => Some(new),
        _ => None,
    };
    if s.is_new() {
        let content: String = s.hunks.iter().map(|h| h.new.as_str()).collect();
        let anchor = Anchor {
            label: format!("new file {path}"),
            ..Anchor::default()
        };
        let file = PatchFile {
            path,
            op: PatchOp::Add,
            hunks: vec![Hunk {
                old: String::new(),
                new: content,
                anchor,
            }],
            mode,
        };
        return compose(files, file, s.line);
    }
    let deleted = s.is_deleted();
    let op = match &s.rename {
        _ if deleted => PatchOp::Delete,
        (Some(_), Some(to)) => PatchOp::Move(to.clone()),
        _ if s.hunks.is_empty() && s.git && mode.is_none() => return Ok(()),
        _ if s.hunks.is_empty() && !s.git => {
            return Err(ParseError::at(s.line, format!(
                "the file header at line {} of the patch names {path} but no hunk \
                 (`@@ -l,n +l,n @@`) follows it: give the file's hunks after its header, or leave the header out",
                s.line
            )))
        }
        _ => PatchOp::Update,
    };
    // Hunks are numbered through all of a file's sections, so each label names one hunk.
    let before = match live(files, &path) {
        // A new file's content is no hunk of the diff's.
        Some(i) if !deleted => files[i].hunks.len() - usize::from(files[i].op == PatchOp::Add),
        _ => 0,
    };
    let hunks = anchored(&s, &path, before)?;
    compose(
        files,
        PatchFile {
            path,
            op,
            hunks,
            mode,
        },
        s.line,
    )
}

/// The hunks of section `s` of the file `path`, anchored where each says it applies, numbered after
/// the `before` hunks of the file's earlier sections.
fn anchored(s: &Section, path: &str, before: usize) -> Result<Vec<Hunk>, ParseError> {
    let deleted = s.is_deleted();
    let mut hunks = Vec::with_capacity(s.hunks.len());
    let mut shift: isize = 0;
    for (n, h) in s.hunks.iter().enumerate() {
        let k = before + n + 1;
        // `@@ -0,0 +1,n @@`: lines added to a file that is empty (git's diff of an empty file).
        let into_empty = h.old.is_empty() && h.old_start == 0 && s.hunks.len() == 1 && !deleted;
        if h.old.is_empty() && !into_empty {
            return Err(ParseError::at(h.line, format!(
                "hunk {k} of {path} (line {} of the patch) adds lines with no context around \
                 them: it could only be placed by its line number, which multiedit does not trust alone; make the diff \
                 with context lines (git diff -U3)",
                h.line
            )));
        }
        let anchor = Anchor {
            line: Some((h.old_start as isize + shift).max(0) as usize),
            reach: None,
            forward: false,
            after: None,
            // As git apply does: a hunk at line 1 starts the file, one without trailing context ends it,
            // also without context at all (a zero-context hunk in mid-file is refused, as git refuses
            // it without --unidiff-zero); a deleted file's hunks take every line.
            at_start: deleted || h.old_start <= 1,
            at_end: deleted || h.trailing == 0,
            // A diff says when a last line has no newline (`\ No newline at end of file`).
            eof_newline_optional: false,
            bom: false,
            label: format!("hunk {k} of {path}, at line {}", h.old_start),
        };
        shift += h.new_count as isize - h.old_count as isize;
        hunks.push(Hunk {
            old: h.old.clone(),
            new: h.new.clone(),
            anchor,
        });
    }
    Ok(hunks)
}

/// The file of `files` that goes by `path` once they are applied (a move's target), if any.
fn live(files: &[PatchFile], path: &str) -> Option<usize> {
    files.iter().rposition(|f| match &f.op {
        PatchOp::Update | PatchOp::Add => f.path == path,
        PatchOp::Move(to) => to == path,
        PatchOp::Delete => false,
    })
}

/// Adds the file of the section at `line` to `files`: a new entry, or composed with the earlier
/// sections of the same file.
fn compose(files: &mut Vec<PatchFile>, f: PatchFile, line: usize) -> Result<(), ParseError> {
    let refuse = |what: String| {
        ParseError::at(
            line,
            format!(
                "the section at line {line} of the patch {what}: each section of a file applies \
             to what the sections before it left; fix or drop one of them"
            ),
        )
    };
    // A path an earlier section deleted or renamed away (and nothing since gave back).
    let gone = files
        .iter()
        .rposition(|e| e.path == f.path && matches!(e.op, PatchOp::Delete | PatchOp::Move(_)));
    match (live(files, &f.path), &f.op) {
        (Some(_), PatchOp::Add) => Err(refuse(format!("creates {}, which an earlier section creates or changes", f.path))),
        (Some(_), PatchOp::Delete) => Err(refuse(format!(
            "deletes {}, which an earlier section creates or changes (git apply would keep the changed file)",
            f.path
        ))),
        (Some(_), PatchOp::Move(to)) => Err(refuse(format!(
            "renames {} to {to} after an earlier section creates or changes it (git apply would rename the file as \
             it was before the patch and keep the changed one too); rename it first, then change it under its new name",
            f.path
        ))),
        (Some(i), PatchOp::Update) => {
            let e = &mut files[i];
            match (&e.op, e.hunks.as_mut_slice(), f.hunks.as_slice()) {
                // Created empty, then given lines (`@@ -0,0 +1,n @@`): created with them.
                (PatchOp::Add, [created], [added]) if created.new.is_empty() && added.old.is_empty() => created.new = added.new.clone(),
                _ => e.hunks.extend(f.hunks),
            }
            e.mode = f.mode.or(e.mode);
            Ok(())
        }
        (None, PatchOp::Add) if gone.is_some_and(|g| files[g].op == PatchOp::Delete) => {
            // Deleted, then created: the file's text is replaced, as git writes it.
            let e = &mut files[gone.unwrap_or_default()];
            let content = f.hunks.into_iter().next().map(|h| h.new).unwrap_or_default();
            match e.hunks.first_mut() {
                Some(h) => h.new = content,
                None => e.hunks.push(Hunk { old: String::new(), new: content, anchor: empty_file_anchor(&f.path) }),
            }
            e.op = PatchOp::Update;
            e.mode = f.mode;
            Ok(())
        }
        (None, _) if gone.is_some() => {
            let g = &files[gone.unwrap_or_default()];
            let how = match &g.op {
                PatchOp::Move(to) => format!("renamed it to {to}"),
                _ => "deleted it".to_string(),
            };
            Err(refuse(format!("changes {} after an earlier section {how} (git apply refuses it too)", f.path)))
        }
        (None, _) => {
            files.push(f);
            Ok(())
        }
    }
}

/// The anchor of lines added to a file that is empty: they make its whole text.
fn empty_file_anchor(path: &str) -> Anchor {
    Anchor {
        line: Some(0),
        at_start: true,
        at_end: true,
        label: format!("hunk 1 of {path}, at line 0"),
        ..Anchor::default()
    }
}

/// A line without its break, for recognising headers and markers. (Shared with the other parsers.)
pub(super) fn bare(line: &str) -> &str {
    let l = line.strip_suffix('\n').unwrap_or(line);
    l.strip_suffix('\r').unwrap_or(l)
}

/// A hunk line as the file has it: with its break, which only the patch's last line may lack.
pub(super) fn whole(body: &str) -> String {
    if body.ends_with('\n') {
        body.to_string()
    } else {
        format!("{body}\n")
    }
}

/// `\ No newline at end of file`: the `\n` goes and a `\r` before it stays, as git apply reads it: a
/// file may end in a lone `\r`, and a patch that passed through a CRLF channel is refused by both.
fn drop_break(s: &mut String) {
    if s.ends_with('\n') {
        s.pop();
    }
}

/// A patch line as refusals quote it: in backticks, cut when long.
pub(super) fn quote(t: &str) -> String {
    const MAX: usize = 80;
    match t.char_indices().nth(MAX) {
        Some((at, _)) => format!("`{}...`", &t[..at]),
        None => format!("`{t}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::test_support::{files, refusal, text};

    fn anchor(line: usize, at_start: bool, at_end: bool, label: &str) -> Anchor {
        Anchor {
            line: Some(line),
            at_start,
            at_end,
            label: label.to_string(),
            ..Anchor::default()
        }
    }

    fn hunk(old: &str, new: &str, anchor: Anchor) -> Hunk {
        Hunk {
            old: old.to_string(),
            new: new.to_string(),
            anchor,
        }
    }

    fn file(path: &str, op: PatchOp, hunks: Vec<Hunk>) -> PatchFile {
        PatchFile {
            path: path.to_string(),
            op,
            hunks,
            mode: None,
        }
    }

    /// A new file as git writes it, `new file mode 100644`.
    fn new_file(path: &str, content: &str) -> PatchFile {
        let anchor = Anchor {
            label: format!("new file {path}"),
            ..Anchor::default()
        };
        PatchFile {
            mode: Some(0o100644),
            ..file(path, PatchOp::Add, vec![hunk("", content, anchor)])
        }
    }

    #[test]
    fn format_patch_mail_with_two_hunks_and_a_signature() {
        let t = text(&[
            "From 1234567890abcdef Mon Sep 17 00:00:00 2001",
            "From: A U Thor <author@example.com>",
            "Subject: [PATCH] greet louder",
            "",
            "The greeting was too quiet.",
            "---",
            " src/greet.py | 4 ++--",
            " 1 file changed, 3 insertions(+), 2 deletions(-)",
            "",
            "diff --git a/src/greet.py b/src/greet.py",
            "index 3b18e51..a0b2c3d 100644",
            "--- a/src/greet.py",
            "+++ b/src/greet.py",
            "@@ -1,3 +1,4 @@",
            " import sys",
            "+import os",
            " ",
            " def hello():",
            "@@ -10,4 +11,3 @@ def hello():",
            "     x = 1",
            "-    print('hi')",
            "-    return x",
            "+    return print('HI') or x",
            " ",
            "-- ",
            "2.43.0",
            "",
        ]);
        assert_eq!(
            files(Format::Diff, &t),
            vec![file(
                "src/greet.py",
                PatchOp::Update,
                vec![
                    hunk(
                        "import sys\n\ndef hello():\n",
                        "import sys\nimport os\n\ndef hello():\n",
                        anchor(1, true, false, "hunk 1 of src/greet.py, at line 1"),
                    ),
                    // Expected at 10 + (4 - 3): the first hunk added a line.
                    hunk(
                        "    x = 1\n    print('hi')\n    return x\n\n",
                        "    x = 1\n    return print('HI') or x\n\n",
                        anchor(11, false, false, "hunk 2 of src/greet.py, at line 10"),
                    ),
                ],
            )]
        );
    }

    #[test]
    fn line_of_a_later_hunk_carries_every_earlier_hunks_shift() {
        let t = text(&[
            "--- a/f",
            "+++ b/f",
            "@@ -2,2 +2,3 @@",
            " a",
            "+b",
            " c",
            "@@ -20,3 +21,1 @@",
            " d",
            "-e",
            "-f",
            "@@ -40,2 +39,2 @@",
            " g",
            "-h",
            "+i",
        ]);
        let lines: Vec<Option<usize>> = files(Format::Diff, &t)[0]
            .hunks
            .iter()
            .map(|h| h.anchor.line)
            .collect();
        assert_eq!(lines, vec![Some(2), Some(21), Some(39)]);
    }

    #[test]
    fn diff_u_keeps_its_paths_and_drops_the_timestamps() {
        let t = text(&[
            "--- hello.c.orig\t2024-03-01 10:00:00.000000000 +0100",
            "+++ hello.c\t2024-03-01 10:05:00.000000000 +0100",
            "@@ -4,3 +4,3 @@",
            " int main(void) {",
            "-  puts(\"hi\");",
            "+  puts(\"hello\");",
            " }",
            "--- old/util.h\t2024-03-01 10:00:00 +0100",
            "+++ new/util.h\t2024-03-01 10:05:00 +0100",
            "@@ -1 +1 @@",
            "-#define N 1",
            "+#define N 2",
        ]);
        assert_eq!(
            files(Format::Diff, &t),
            vec![
                file(
                    "hello.c",
                    PatchOp::Update,
                    vec![hunk(
                        "int main(void) {\n  puts(\"hi\");\n}\n",
                        "int main(void) {\n  puts(\"hello\");\n}\n",
                        anchor(4, false, false, "hunk 1 of hello.c, at line 4"),
                    )],
                ),
                // A count left out is 1; no context at all: neither end is claimed.
                file(
                    "new/util.h",
                    PatchOp::Update,
                    vec![hunk(
                        "#define N 1\n",
                        "#define N 2\n",
                        anchor(1, true, true, "hunk 1 of new/util.h, at line 1")
                    )],
                ),
            ]
        );
    }

    #[test]
    fn a_and_b_prefixes_are_stripped_outside_git_too() {
        let t = text(&[
            "--- a/lib/x.rs",
            "+++ b/lib/x.rs",
            "@@ -1,2 +1,2 @@",
            "-old",
            "+new",
            " keep",
        ]);
        assert_eq!(
            files(Format::Diff, &t),
            vec![file(
                "lib/x.rs",
                PatchOp::Update,
                vec![hunk(
                    "old\nkeep\n",
                    "new\nkeep\n",
                    anchor(1, true, false, "hunk 1 of lib/x.rs, at line 1")
                )]
            )]
        );
    }

    #[test]
    fn lines_inside_a_body_are_read_by_the_counts_not_by_their_looks() {
        // The removed line "-- x" and the added "++ y" look like file headers.
        let t = text(&[
            "--- a/q.sql",
            "+++ b/q.sql",
            "@@ -1,2 +1,2 @@",
            "--- x",
            "+++ y",
            " select 1;",
        ]);
        assert_eq!(files(Format::Diff, &t)[0].hunks[0].old, "-- x\nselect 1;\n");
        assert_eq!(files(Format::Diff, &t)[0].hunks[0].new, "++ y\nselect 1;\n");
    }

    #[test]
    fn new_files_become_adds() {
        let t = text(&[
            "diff --git a/docs/new.md b/docs/new.md",
            "new file mode 100644",
            "index 0000000..8e3c1b2",
            "--- /dev/null",
            "+++ b/docs/new.md",
            "@@ -0,0 +1,2 @@",
            "+# New",
            "+text",
            "diff --git a/empty.txt b/empty.txt",
            "new file mode 100644",
            "index 0000000..e69de29",
            "--- /dev/null",
            "+++ b/plain.txt",
            "@@ -0,0 +1 @@",
            "+one",
        ]);
        let mut expected = vec![
            new_file("docs/new.md", "# New\ntext\n"),
            new_file("plain.txt", "one\n"),
        ];
        assert_eq!(files(Format::Diff, &t), expected);
        // An empty new file has no hunk in git's output: one hunk with both sides empty.
        let t = text(&[
            "diff --git a/empty.txt b/empty.txt",
            "new file mode 100644",
            "index 0000000..e69de29",
        ]);
        expected = vec![new_file("empty.txt", "")];
        assert_eq!(files(Format::Diff, &t), expected);
    }

    #[test]
    fn deleted_files_become_deletes_whose_hunks_take_the_whole_file() {
        let t = text(&[
            "diff --git a/old.txt b/old.txt",
            "deleted file mode 100644",
            "index 2e65efe..0000000",
            "--- a/old.txt",
            "+++ /dev/null",
            "@@ -1,2 +0,0 @@",
            "-a",
            "-b",
            "diff --git a/gone.txt b/gone.txt",
            "deleted file mode 100644",
            "index e69de29..0000000",
        ]);
        assert_eq!(
            files(Format::Diff, &t),
            vec![
                file(
                    "old.txt",
                    PatchOp::Delete,
                    vec![hunk(
                        "a\nb\n",
                        "",
                        anchor(1, true, true, "hunk 1 of old.txt, at line 1")
                    )]
                ),
                file("gone.txt", PatchOp::Delete, vec![]),
            ]
        );
    }

    #[test]
    fn renames_become_moves_with_or_without_hunks() {
        let t = text(&[
            "diff --git a/src/old name.rs b/src/new name.rs",
            "similarity index 100%",
            "rename from src/old name.rs",
            "rename to src/new name.rs",
            "diff --git a/a.txt b/b.txt",
            "similarity index 80%",
            "rename from a.txt",
            "rename to b.txt",
            "index 1111111..2222222 100644",
            "--- a/a.txt",
            "+++ b/b.txt",
            "@@ -1,2 +1,2 @@",
            " x",
            "-y",
            "+z",
        ]);
        assert_eq!(
            files(Format::Diff, &t),
            vec![
                file(
                    "src/old name.rs",
                    PatchOp::Move("src/new name.rs".into()),
                    vec![]
                ),
                file(
                    "a.txt",
                    PatchOp::Move("b.txt".into()),
                    vec![hunk(
                        "x\ny\n",
                        "x\nz\n",
                        anchor(1, true, true, "hunk 1 of a.txt, at line 1")
                    )]
                ),
            ]
        );
    }

    #[test]
    fn modes_are_read_as_git_writes_them() {
        let t = text(&[
            "diff --git a/run.sh b/run.sh",
            "old mode 100644",
            "new mode 100755",
            "diff --git a/x b/x",
            "old mode 100755",
            "new mode 100644",
            "index 1111111..2222222",
            "--- a/x",
            "+++ b/x",
            "@@ -1 +1 @@",
            "-1",
            "+2",
            "diff --git a/tool b/tool",
            "new file mode 100755",
            "index 0000000..2222222",
            "--- /dev/null",
            "+++ b/tool",
            "@@ -0,0 +1 @@",
            "+#!/bin/sh",
            "diff --git a/same b/same",
            "old mode 100755",
            "new mode 100755",
        ]);
        let tool = Anchor {
            label: "new file tool".into(),
            ..Anchor::default()
        };
        assert_eq!(
            files(Format::Diff, &t),
            vec![
                PatchFile {
                    mode: Some(0o100755),
                    ..file("run.sh", PatchOp::Update, vec![])
                },
                PatchFile {
                    mode: Some(0o100644),
                    ..file(
                        "x",
                        PatchOp::Update,
                        vec![hunk(
                            "1\n",
                            "2\n",
                            anchor(1, true, true, "hunk 1 of x, at line 1")
                        )]
                    )
                },
                PatchFile {
                    mode: Some(0o100755),
                    ..file("tool", PatchOp::Add, vec![hunk("", "#!/bin/sh\n", tool)])
                },
            ]
        );
        let link = text(&[
            "diff --git a/l b/l",
            "new file mode 120000",
            "index 0000000..2222222",
            "--- /dev/null",
            "+++ b/l",
            "@@ -0,0 +1 @@",
            "+target",
        ]);
        assert_eq!(
            refusal(Format::Diff, &link),
            "InputValidationError: the diff makes l a symbolic link (line 2 of the patch): multiedit writes regular files \
             only; apply this section with `git apply`"
        );
        let odd = text(&["diff --git a/l b/l", "old mode 100644", "new mode 10x644"]);
        assert!(refusal(Format::Diff, &odd).starts_with(
            "InputValidationError: the diff makes l mode `10x644` (line 3 of the patch)"
        ));
    }

    #[test]
    fn lines_added_to_an_empty_file_are_anchored_at_its_start() {
        let t = text(&[
            "diff --git a/e b/e",
            "index e69de29..2222222 100644",
            "--- a/e",
            "+++ b/e",
            "@@ -0,0 +1,2 @@",
            "+a",
            "+b",
        ]);
        assert_eq!(
            files(Format::Diff, &t),
            vec![file(
                "e",
                PatchOp::Update,
                vec![hunk(
                    "",
                    "a\nb\n",
                    anchor(0, true, true, "hunk 1 of e, at line 0")
                )]
            )]
        );
    }

    /// Three `git diff`s of one file in a row, hunks numbered through the file.
    fn section(path: &str, old: &str, new: &str) -> String {
        text(&[
            &format!("diff --git a/{path} b/{path}"),
            "index 1111111..2222222 100644",
            &format!("--- a/{path}"),
            &format!("+++ b/{path}"),
            "@@ -1 +1 @@",
            &format!("-{old}"),
            &format!("+{new}"),
        ])
    }

    #[test]
    fn sections_of_one_file_are_composed_in_order() {
        let t = [
            section("f", "a", "b"),
            section("f", "b", "c"),
            section("g", "x", "y"),
            section("f", "c", "d"),
        ]
        .concat();
        let h = |o: &str, n: &str, k: usize| {
            hunk(
                &format!("{o}\n"),
                &format!("{n}\n"),
                anchor(1, true, true, &format!("hunk {k} of f, at line 1")),
            )
        };
        let got = files(Format::Diff, &t);
        assert_eq!(
            got[0],
            file(
                "f",
                PatchOp::Update,
                vec![h("a", "b", 1), h("b", "c", 2), h("c", "d", 3)]
            )
        );
        assert_eq!((got.len(), got[1].path.as_str()), (2, "g"));
        // A rename, then an edit under the new name: one move with both.
        let rename = text(&[
            "diff --git a/f b/g",
            "similarity index 100%",
            "rename from f",
            "rename to g",
        ]);
        let got = files(
            Format::Diff,
            &[rename.clone(), section("g", "a", "b")].concat(),
        );
        assert_eq!(
            got,
            vec![file(
                "f",
                PatchOp::Move("g".into()),
                vec![hunk(
                    "a\n",
                    "b\n",
                    anchor(1, true, true, "hunk 1 of g, at line 1")
                )]
            )]
        );
        // Deleted, then created again: its text replaced, with the new mode.
        let delete = text(&[
            "diff --git a/f b/f",
            "deleted file mode 100644",
            "--- a/f",
            "+++ /dev/null",
            "@@ -1 +0,0 @@",
            "-a",
        ]);
        let add = text(&[
            "diff --git a/f b/f",
            "new file mode 100755",
            "--- /dev/null",
            "+++ b/f",
            "@@ -0,0 +1 @@",
            "+b",
        ]);
        let got = files(Format::Diff, &[delete.clone(), add.clone()].concat());
        assert_eq!(
            got,
            vec![PatchFile {
                mode: Some(0o100755),
                ..file(
                    "f",
                    PatchOp::Update,
                    vec![hunk(
                        "a\n",
                        "b\n",
                        anchor(1, true, true, "hunk 1 of f, at line 1")
                    )]
                )
            }]
        );
        // Created empty, then given lines.
        let empty = text(&[
            "diff --git a/e b/e",
            "new file mode 100644",
            "index 0000000..e69de29",
        ]);
        let lines = text(&[
            "diff --git a/e b/e",
            "index e69de29..2222222 100644",
            "--- a/e",
            "+++ b/e",
            "@@ -0,0 +1 @@",
            "+x",
        ]);
        assert_eq!(
            files(Format::Diff, &[empty, lines].concat()),
            vec![new_file("e", "x\n")]
        );
        // Created, then edited.
        let got = files(
            Format::Diff,
            &[add.clone(), section("f", "b", "c")].concat(),
        );
        assert_eq!(
            got[0]
                .hunks
                .iter()
                .map(|h| h.anchor.label.as_str())
                .collect::<Vec<_>>(),
            ["new file f", "hunk 1 of f, at line 1"]
        );
    }

    #[test]
    fn sections_git_refuses_or_gets_wrong_are_refused() {
        let delete = text(&[
            "diff --git a/f b/f",
            "deleted file mode 100644",
            "--- a/f",
            "+++ /dev/null",
            "@@ -1 +0,0 @@",
            "-b",
        ]);
        let add = text(&[
            "diff --git a/f b/f",
            "new file mode 100644",
            "--- /dev/null",
            "+++ b/f",
            "@@ -0,0 +1 @@",
            "+b",
        ]);
        let rename = text(&[
            "diff --git a/f b/g",
            "similarity index 100%",
            "rename from f",
            "rename to g",
        ]);
        let tail = ": each section of a file applies to what the sections before it left; fix or drop one of them";
        for (t, what) in [
            ([section("f", "a", "b"), delete.clone()].concat(), "line 8 of the patch deletes f, which an earlier section creates or changes (git apply would keep the changed file)"),
            ([add.clone(), add.clone()].concat(), "line 7 of the patch creates f, which an earlier section creates or changes"),
            ([delete.clone(), section("f", "a", "b")].concat(), "line 7 of the patch changes f after an earlier section deleted it (git apply refuses it too)"),
            ([rename.clone(), section("f", "a", "b")].concat(), "line 5 of the patch changes f after an earlier section renamed it to g (git apply refuses it too)"),
            (
                [section("f", "a", "b"), rename.clone()].concat(),
                "line 8 of the patch renames f to g after an earlier section creates or changes it (git apply would \
                 rename the file as it was before the patch and keep the changed one too); rename it first, then change \
                 it under its new name",
            ),
        ] {
            assert_eq!(refusal(Format::Diff, &t), format!("InputValidationError: the section at {what}{tail}"));
        }
    }

    #[test]
    fn git_quoted_paths_are_unquoted() {
        let t = text(&[
            r#"diff --git "a/f\303\251 x.txt" "b/f\303\251 x.txt""#,
            "index 1111111..2222222 100644",
            r#"--- "a/f\303\251 x.txt""#,
            r#"+++ "b/f\303\251 x.txt""#,
            "@@ -1 +1 @@",
            "-a",
            "+b",
            r#"diff --git "a/tab\there" "b/quote\"d""#,
            "similarity index 100%",
            r#"rename from "tab\there""#,
            r#"rename to "quote\"d""#,
        ]);
        let got = files(Format::Diff, &t);
        assert_eq!(got[0].path, "fé x.txt");
        assert_eq!(
            got[0].hunks[0].anchor.label,
            "hunk 1 of fé x.txt, at line 1"
        );
        assert_eq!(
            (got[1].path.as_str(), &got[1].op),
            ("tab\there", &PatchOp::Move("quote\"d".into()))
        );
    }

    /// The old and new text of the first hunk of the first file of a diff.
    fn first_hunk(t: &str) -> [String; 2] {
        let h = &files(Format::Diff, t)[0].hunks[0];
        [h.old.clone(), h.new.clone()]
    }

    #[test]
    fn no_newline_at_end_of_file_drops_the_break_of_the_line_before() {
        // The old side lacked the final newline, the new side adds it.
        let t = text(&[
            "--- a/f",
            "+++ b/f",
            "@@ -1,2 +1,2 @@",
            " a",
            "-b",
            "\\ No newline at end of file",
            "+b",
        ]);
        assert_eq!(first_hunk(&t), ["a\nb", "a\nb\n"]);
        // The new side drops it.
        let t = text(&[
            "--- a/f",
            "+++ b/f",
            "@@ -1,2 +1,2 @@",
            " a",
            "-b",
            "+c",
            "\\ No newline at end of file",
        ]);
        assert_eq!(first_hunk(&t), ["a\nb\n", "a\nc"]);
        // A context line without newline: both sides, whatever language the marker is in.
        let t = text(&[
            "--- a/f",
            "+++ b/f",
            "@@ -1,2 +1,2 @@",
            "-a",
            "+A",
            " b",
            "\\ Kein Zeilenumbruch am Dateiende.",
        ]);
        assert_eq!(first_hunk(&t), ["a\nb", "A\nb"]);
    }

    #[test]
    fn crlf_lines_keep_their_carriage_return() {
        let t =
            "--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,2 +1,2 @@\r\n one\r\n-two\r\n+2\r\n\\ No newline at end of file\r\n";
        assert_eq!(
            files(Format::Diff, t),
            vec![file(
                "w.txt",
                PatchOp::Update,
                vec![hunk(
                    "one\r\ntwo\r\n",
                    "one\r\n2\r",
                    anchor(1, true, true, "hunk 1 of w.txt, at line 1")
                )]
            )]
        );
    }

    #[test]
    fn an_empty_line_in_a_body_is_an_empty_context_line() {
        let t = text(
            &["--- a/f", "+++ b/f", "@@ -1,3 +1,3 @@", "a", "", "-b", "+c"].map(|l| {
                if l == "a" {
                    " a"
                } else {
                    l
                }
            }),
        );
        assert_eq!(files(Format::Diff, &t)[0].hunks[0].old, "a\n\nb\n");
        assert_eq!(files(Format::Diff, &t)[0].hunks[0].new, "a\n\nc\n");
    }

    #[test]
    fn a_chat_answer_fence_and_prose_around_the_diff_are_ignored() {
        let t = text(&[
            "Here is the fix:",
            "",
            "```diff",
            "--- a/f",
            "+++ b/f",
            "@@ -5,2 +5,2 @@",
            " x",
            "-y",
            "+z",
            "```",
            "",
            "It renames y.",
        ]);
        assert_eq!(
            files(Format::Diff, &t),
            vec![file(
                "f",
                PatchOp::Update,
                vec![hunk(
                    "x\ny\n",
                    "x\nz\n",
                    anchor(5, false, true, "hunk 1 of f, at line 5")
                )]
            )]
        );
        // The patch's last line without its newline is still a whole line.
        let t = "--- a/f\n+++ b/f\n@@ -5,2 +5,2 @@\n x\n-y\n+z";
        assert_eq!(files(Format::Diff, t)[0].hunks[0].new, "x\nz\n");
    }

    #[test]
    fn leading_and_trailing_context_decide_the_ends() {
        let t = text(&[
            "--- a/f",
            "+++ b/f",
            "@@ -1,2 +1,1 @@",
            "-a",
            " b",
            "@@ -7,2 +6,1 @@",
            " c",
            "-d",
            "@@ -20,1 +18,1 @@",
            "-e",
            "+f",
        ]);
        let anchors: Vec<(bool, bool)> = files(Format::Diff, &t)[0]
            .hunks
            .iter()
            .map(|h| (h.anchor.at_start, h.anchor.at_end))
            .collect();
        assert_eq!(anchors, vec![(true, false), (false, true), (false, true)]);
    }

    #[test]
    fn binary_patches_are_refused() {
        let t = text(&[
            "diff --git a/logo.png b/logo.png",
            "index 1111111..2222222 100644",
            "Binary files a/logo.png and b/logo.png differ",
        ]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: the diff changes logo.png as a binary file (line 3 of the patch: `Binary files \
             a/logo.png and b/logo.png differ`): multiedit applies text changes only; apply binary patches with `git apply`"
        );
        let t = text(&[
            "diff --git a/x.bin b/x.bin",
            "new file mode 100644",
            "index 0000000..2222222",
            "GIT binary patch",
            "literal 3",
            "KcmZQzU|;|M00aO5",
        ]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: the diff changes x.bin as a binary file (line 4 of the patch: `GIT binary patch`): \
             multiedit applies text changes only; apply binary patches with `git apply`"
        );
        let t = text(&["Binary files old/a.db and new/a.db differ"]);
        assert!(refusal(Format::Diff, &t).starts_with(
            "InputValidationError: the diff changes new/a.db as a binary file (line 1 "
        ));
    }

    #[test]
    fn copies_are_refused() {
        let t = text(&[
            "diff --git a/a.c b/b.c",
            "similarity index 100%",
            "copy from a.c",
            "copy to b.c",
        ]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: the diff copies a.c to b.c (line 3 of the patch): multiedit does not support copies; \
             make the diff without copy detection (no -C or --find-copies), which shows the copy as a new file"
        );
    }

    #[test]
    fn counts_that_do_not_match_the_body_are_refused() {
        // Too few lines: the next hunk header comes first.
        let t = text(&[
            "--- a/f",
            "+++ b/f",
            "@@ -1,3 +1,3 @@",
            " a",
            "-b",
            "+c",
            "@@ -9 +9 @@",
            "-x",
            "+y",
        ]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: hunk 1 of f (line 3 of the patch, `@@ -1,3 +1,3 @@`) announces 3 old and 3 new \
             lines, but its body holds 2 old and 2 new lines: make the counts in the @@ line match the body (old: the ' ' \
             and '-' lines, new: the ' ' and '+' lines)"
        );
        // Too few lines: the patch ends.
        let t = text(&["--- a/f", "+++ b/f", "@@ -1,2 +1,2 @@", " a", "-b"]);
        assert!(refusal(Format::Diff, &t)
            .contains("announces 2 old and 2 new lines, but its body holds 2 old and 1 new lines"));
        // Too many lines.
        let t = text(&[
            "--- a/f",
            "+++ b/f",
            "@@ -1,2 +1,2 @@",
            " a",
            "-b",
            "+c",
            " d",
            "",
            "prose",
        ]);
        assert!(refusal(Format::Diff, &t)
            .contains("announces 2 old and 2 new lines, but its body holds 3 old and 3 new lines"));
        let t = text(&["--- a/f", "+++ b/f", "@@ -1 +1 @@", "-b", "-c", "+d"]);
        assert!(refusal(Format::Diff, &t).contains("hunk 1 of f (line 3 of the patch, `@@ -1 +1 @@`) announces 1 old and 1 new lines, but its body holds 2 old and 1 new"));
    }

    #[test]
    fn an_unknown_prefix_in_a_body_is_refused() {
        let t = text(&[
            "```diff",
            "--- a/f",
            "+++ b/f",
            "@@ -1,3 +1,3 @@",
            " a",
            "-b",
            "+c",
            "```",
        ]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: line 8 of the patch (`\u{60}\u{60}\u{60}`) is inside hunk 1 of f but is no hunk line: each \
             line of a hunk starts with ' ' (context), '-' (removed), '+' (added) or '\\' (no newline at end of file). \
             The hunk's header at line 4 announces 3 old and 3 new lines and 2 old and 2 new came before this line: \
             fix the line, or the counts if the hunk ends before it"
        );
    }

    #[test]
    fn a_file_header_without_its_plus_line_is_refused() {
        let t = text(&["--- a/f", "@@ -1 +1 @@", "-a", "+b"]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: line 1 of the patch (`--- a/f`) starts a file header, but line 2 (`@@ -1 +1 @@`) \
             is not its `+++ b/path` line: a unified diff names each file on two lines, `--- a/path` then `+++ b/path`; \
             add the missing line"
        );
        let t = text(&["diff --git a/f b/f", "index 1..2 100644", "--- a/f"]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: line 3 of the patch (`--- a/f`) starts a file header, but the patch ends there: a \
             unified diff names each file on two lines, `--- a/path` then `+++ b/path`; add the missing line"
        );
        // A "--- " line in prose, far from any hunk, is prose.
        let t = text(&[
            "--- notes ---",
            "",
            "--- a/f",
            "+++ b/f",
            "@@ -1 +1 @@",
            "-a",
            "+b",
        ]);
        assert_eq!(files(Format::Diff, &t).len(), 1);
    }

    #[test]
    fn a_hunk_before_any_file_header_is_refused() {
        let t = text(&["@@ -1 +1 @@", "-a", "+b"]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: line 1 of the patch (`@@ -1 +1 @@`) starts a hunk that follows no file header: put \
             the file's `--- a/path` and `+++ b/path` lines before it, as git diff writes them"
        );
    }

    #[test]
    fn a_hunk_adding_lines_without_context_is_refused() {
        let t = text(&["--- a/f", "+++ b/f", "@@ -3,0 +4,2 @@", "+x", "+y"]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: hunk 1 of f (line 3 of the patch) adds lines with no context around them: it could \
             only be placed by its line number, which multiedit does not trust alone; make the diff with context lines \
             (git diff -U3)"
        );
    }

    #[test]
    fn malformed_hunk_headers_and_headers_without_hunks_are_refused() {
        let t = text(&["--- a/f", "+++ b/f", "@@ -1,x +1 @@", "-a"]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: line 3 of the patch (`@@ -1,x +1 @@`) is not a valid hunk header: expected \
             `@@ -start,count +start,count @@` (a count may be left out when it is 1)"
        );
        let t = text(&["--- a/f", "+++ b/f", "no hunk here"]);
        assert_eq!(
            refusal(Format::Diff, &t),
            "InputValidationError: the file header at line 1 of the patch names f but no hunk (`@@ -l,n +l,n @@`) \
             follows it: give the file's hunks after its header, or leave the header out"
        );
    }

    #[test]
    fn a_text_without_files_is_refused() {
        assert_eq!(
            refusal(Format::Diff, "just prose\n"),
            "InputValidationError: the diff holds no file change: it has no hunk (`@@ -l,n +l,n @@` after a file's \
             `--- a/path` and `+++ b/path` lines) and no new, deleted or renamed file and no mode change; give the \
             diff of at least one changed file"
        );
    }

    #[test]
    fn looks_like_needs_a_header_at_a_line_start() {
        assert!(looks_like("diff --git a/x b/x\n"));
        assert!(looks_like("text\n--- x\n+++ y\n"));
        assert!(looks_like("@@ -1 +1 @@\n"));
        assert!(!looks_like("--- x\nprose\n+++ y\n"));
        assert!(!looks_like("  diff --git a/x b/x\n"));
    }

    #[test]
    fn a_refusal_carries_the_patch_line_it_blames() {
        let line = |t: &str| parse(t).expect_err("should be refused").blamed_line();
        // A malformed hunk header, a fence inside a hunk, a `---` line with no `+++` after it.
        assert_eq!(
            line(&text(&["--- a/f", "+++ b/f", "@@ -1,x +1 @@", "-a"])),
            Some(3)
        );
        assert_eq!(
            line(&text(&[
                "```diff",
                "--- a/f",
                "+++ b/f",
                "@@ -1,3 +1,3 @@",
                " a",
                "-b",
                "+c",
                "```"
            ])),
            Some(8)
        );
        assert_eq!(
            line(&text(&["x", "--- a/f", "@@ -1 +1 @@", "-a", "+b"])),
            Some(2)
        );
        // A text with no file change has no line to blame.
        assert_eq!(line("just prose\n"), None);
    }
}
