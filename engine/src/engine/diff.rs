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
    let starts = line_starts(before);
    // Lines are indexed from 0; `line_end(i)` is where line i ends, its newline included.
    let n_lines = if before.is_empty() {
        0
    } else if before.ends_with('\n') {
        starts.len() - 1
    } else {
        starts.len()
    };
    let line_of = |offset: usize| text::line_of(&starts, offset) - 1;
    let line_end = |i: usize| starts.get(i + 1).copied().unwrap_or(before.len());

    // Blocks: the lines each replacement touches, merged where they share or touch a line.
    let mut blocks: Vec<Block> = Vec::new();
    let mut pending: Option<(usize, usize, Vec<&Replacement>)> = None;
    for r in reps {
        let first = line_of(r.start).min(n_lines);
        let last = if r.end > r.start {
            line_of(r.end - 1) + 1
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
                    blocks.push(block(before, &starts, line_end(p.1.saturating_sub(1)), p));
                }
                pending = Some((first, last, vec![r]));
            }
        }
    }
    if let Some(p) = pending.take() {
        blocks.push(block(before, &starts, line_end(p.1.saturating_sub(1)), p));
    }

    let mut out = header.to_string();
    let old_line = |i: usize| &before[starts[i]..line_end(i)];
    let mut delta: isize = 0;
    let mut i = 0;
    while i < blocks.len() {
        // A hunk takes every following block that is at most 2 * CONTEXT unchanged lines away.
        let mut j = i + 1;
        while j < blocks.len() && blocks[j].first <= blocks[j - 1].last + 2 * CONTEXT {
            j += 1;
        }
        let from = blocks[i].first.saturating_sub(CONTEXT);
        let to = (blocks[j - 1].last + CONTEXT).min(n_lines);
        let mut body = String::new();
        let (mut old_count, mut new_count) = (0usize, 0usize);
        let mut line = from;
        let mut hunk_delta = 0isize;
        for b in &blocks[i..j] {
            for k in line..b.first {
                push_line(&mut body, ' ', old_line(k));
            }
            old_count += b.first - line;
            new_count += b.first - line;
            for k in b.first..b.last.min(n_lines) {
                push_line(&mut body, '-', old_line(k));
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
            push_line(&mut body, ' ', old_line(k));
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
        delta += hunk_delta;
        i = j;
    }
    out
}

fn block(
    before: &str,
    starts: &[usize],
    end: usize,
    (first, last, group): (usize, usize, Vec<&Replacement>),
) -> Block {
    let begin = starts.get(first).copied().unwrap_or(before.len());
    let end = end.max(begin);
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
