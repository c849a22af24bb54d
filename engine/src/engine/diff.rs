//! Unified diffs for dry runs and previews, built from the composed change itself.
//!
//! Diffing the before and after texts again would cost O(N·D) (Myers): a `replace_all` that touches
//! 50,000 lines took minutes. The replacements already say exactly what changed, so each hunk is cut
//! from them: the changed lines with their old text (`-`) and new text (`+`), three lines of context.

use super::apply::FileChange;
use super::changeset::Replacement;
use super::plan::FileOp;
use super::text::{self, line_starts};

const CONTEXT: usize = 3;

/// A run of whole old lines `[first, last)` and the new lines that replace them.
struct Block {
    first: usize,
    last: usize,
    new_text: String,
}

pub fn unified(path: &str, before: &str, reps: &[Replacement]) -> String {
    with_header(&format!("--- a{path}\n+++ b{path}\n"), before, reps)
}

/// One file's part of a dry run's or preview's diff, file operations included as git writes them:
/// `/dev/null` for a created or deleted file, `rename from`/`rename to` for a moved one.
pub fn file_diff(change: &FileChange, before: &str) -> String {
    let path = &change.file_path;
    match &change.op {
        FileOp::Delete => {
            let all = [Replacement {
                start: 0,
                end: before.len(),
                text: String::new(),
            }];
            let body = with_header(&format!("--- a{path}\n+++ /dev/null\n"), before, &all);
            if body.is_empty() {
                format!("deleted file {path}\n")
            } else {
                body
            }
        }
        FileOp::MoveTo(to) => {
            let renamed = format!("rename from {path}\nrename to {to}\n");
            renamed
                + &with_header(
                    &format!("--- a{path}\n+++ b{to}\n"),
                    before,
                    &change.replacements,
                )
        }
        FileOp::Edit | FileOp::Create if change.created => with_header(
            &format!("--- /dev/null\n+++ b{path}\n"),
            before,
            &change.replacements,
        ),
        FileOp::Edit | FileOp::Create => unified(path, before, &change.replacements),
    }
}

fn with_header(header: &str, before: &str, reps: &[Replacement]) -> String {
    if reps.is_empty() {
        return String::new();
    }
    let lines = Lines::new(before);
    let blocks = blocks(&lines, reps);
    let mut out = header.to_string();
    let mut delta: isize = 0;
    let mut i = 0;
    while i < blocks.len() {
        // A hunk takes every following block that is at most 2 * CONTEXT unchanged lines away.
        let mut j = i + 1;
        while j < blocks.len() && blocks[j].first <= blocks[j - 1].last + 2 * CONTEXT {
            j += 1;
        }
        delta += push_hunk(&mut out, &lines, &blocks[i..j], delta);
        i = j;
    }
    out
}

/// The old text's lines, indexed from 0.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// How many lines: a final newline starts none.
    count: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let starts = line_starts(text);
        let count = if text.is_empty() {
            0
        } else if text.ends_with('\n') {
            starts.len() - 1
        } else {
            starts.len()
        };
        Lines {
            text,
            starts,
            count,
        }
    }

    /// The line holding `offset`.
    fn of(&self, offset: usize) -> usize {
        text::line_of(&self.starts, offset) - 1
    }

    /// Where line `i` ends, its newline included.
    fn end(&self, i: usize) -> usize {
        self.starts.get(i + 1).copied().unwrap_or(self.text.len())
    }

    /// Line `i`, its newline included.
    fn line(&self, i: usize) -> &'a str {
        &self.text[self.starts[i]..self.end(i)]
    }
}

/// Blocks: the lines each replacement touches, merged where they share or touch a line.
fn blocks(lines: &Lines<'_>, reps: &[Replacement]) -> Vec<Block> {
    let n_lines = lines.count;
    let mut blocks: Vec<Block> = Vec::new();
    let mut pending: Option<(usize, usize, Vec<&Replacement>)> = None;
    for r in reps {
        let first = lines.of(r.start).min(n_lines);
        let last = if r.end > r.start {
            lines.of(r.end - 1) + 1
        } else {
            first + 1
        }
        .min(n_lines.max(first + 1));
        match &mut pending {
            Some((_, l, group)) if first < *l => {
                *l = (*l).max(last);
                group.push(r);
            }
            _ => {
                if let Some(p) = pending.take() {
                    blocks.push(block(lines, p));
                }
                pending = Some((first, last, vec![r]));
            }
        }
    }
    if let Some(p) = pending.take() {
        blocks.push(block(lines, p));
    }
    blocks
}

/// Writes the hunk of `blocks` (near enough to share one) to `out`, with `CONTEXT` lines around
/// them; `delta`: the lines the hunks before it added. Returns the lines this one adds.
fn push_hunk(out: &mut String, lines: &Lines<'_>, blocks: &[Block], delta: isize) -> isize {
    let n_lines = lines.count;
    let from = blocks[0].first.saturating_sub(CONTEXT);
    let to = (blocks[blocks.len() - 1].last + CONTEXT).min(n_lines);
    let mut body = String::new();
    let (mut old_count, mut new_count) = (0usize, 0usize);
    let mut line = from;
    let mut hunk_delta = 0isize;
    for b in blocks {
        for k in line..b.first {
            push_line(&mut body, ' ', lines.line(k));
        }
        old_count += b.first - line;
        new_count += b.first - line;
        for k in b.first..b.last.min(n_lines) {
            push_line(&mut body, '-', lines.line(k));
            old_count += 1;
        }
        for l in b.new_text.split_inclusive('\n') {
            push_line(&mut body, '+', l);
            new_count += 1;
        }
        hunk_delta += b.new_text.split_inclusive('\n').count() as isize
            - (b.last.min(n_lines) - b.first) as isize;
        line = b.last.min(n_lines);
    }
    for k in line..to {
        push_line(&mut body, ' ', lines.line(k));
    }
    old_count += to.saturating_sub(line);
    new_count += to.saturating_sub(line);
    let new_from = (from as isize + delta) as usize;
    out.push_str(&format!(
        "@@ -{} +{} @@\n",
        range(from, old_count),
        range(new_from, new_count)
    ));
    out.push_str(&body);
    hunk_delta
}

/// The block of old lines `[first, last)` and the new text the replacements of `group` give them.
fn block(lines: &Lines<'_>, (first, last, group): (usize, usize, Vec<&Replacement>)) -> Block {
    let before = lines.text;
    let begin = lines.starts.get(first).copied().unwrap_or(before.len());
    let end = lines.end(last.saturating_sub(1)).max(begin);
    let mut new_text = String::new();
    let mut at = begin;
    for r in group {
        new_text.push_str(&before[at..r.start]);
        new_text.push_str(&r.text);
        at = r.end;
    }
    new_text.push_str(&before[at..end.max(at)]);
    Block {
        first,
        last,
        new_text,
    }
}

/// `start,count` as unified diffs write it: 1-based, and the line before an empty range.
fn range(start: usize, count: usize) -> String {
    if count == 0 {
        format!("{start},0")
    } else if count == 1 {
        format!("{}", start + 1)
    } else {
        format!("{},{count}", start + 1)
    }
}

fn push_line(out: &mut String, mark: char, line: &str) {
    out.push(mark);
    out.push_str(line);
    if !line.ends_with('\n') {
        out.push_str("\n\\ No newline at end of file\n");
    }
}
