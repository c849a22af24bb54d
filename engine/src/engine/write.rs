//! A whole-file write (`multiedit_write`): the new text of a file as the minimal line changes against
//! the text it replaces, so that an editor applies it as any plan (the lines the write keeps are not
//! touched: their marks, folds and diagnostics stay), and the disk gets exactly the new text.
//!
//! The file keeps its own line breaks and byte order mark when the new text has none of its own: a
//! model that read a CRLF file as lines writes LF, and a write must not turn every line of the file.

use similar::{capture_diff_slices, Algorithm, DiffOp};

use super::apply::{EditReport, FileChange};
use super::changeset::Replacement;
use super::plan::FileOp;
use super::refusal::{Kind, Refusal};

/// `content` as the text of the file `file_path`, whose current text is `original` (`None`: it does
/// not exist, and the write creates it).
pub fn write_file(
    original: Option<&str>,
    file_path: &str,
    content: &str,
) -> Result<FileChange, Refusal> {
    let Some(old) = original else {
        let report = EditReport {
            created: true,
            ..EditReport::new(0, "", content, 1)
        };
        let replacements = vec![Replacement {
            start: 0,
            end: 0,
            text: content.to_string(),
        }];
        return Ok(change(
            file_path,
            true,
            replacements,
            content.to_string(),
            report,
        ));
    };
    let new = in_the_files_form(old, content);
    if new == old {
        return Err(Refusal::new(
            Kind::Unchanged,
            format!("{file_path} already holds exactly this text; nothing was written."),
        )
        .in_file(file_path));
    }
    let replacements = line_changes(old, &new);
    let changed = new_lines_changed(old, &new);
    let label = format!(
        "the new text ({} line{}; changed: {})",
        line_count(&new),
        if line_count(&new) == 1 { "" } else { "s" },
        if changed.is_empty() {
            "only removals".to_string()
        } else {
            changed
        }
    );
    let report = EditReport {
        label: Some(label),
        ..EditReport::new(0, "", &new, 1)
    };
    Ok(change(file_path, false, replacements, new, report))
}

fn change(
    file_path: &str,
    created: bool,
    replacements: Vec<Replacement>,
    text: String,
    report: EditReport,
) -> FileChange {
    FileChange {
        file_path: file_path.to_string(),
        created,
        op: FileOp::Edit,
        replacements,
        text,
        applied: vec![report],
        failed: Vec::new(),
        edit_count: 1,
        mode: None,
        line_breaks: None,
    }
}

/// `content` with the file's CRLF breaks when every break of the file is CRLF and `content` has none,
/// and with the file's byte order mark when `content` starts without one.
fn in_the_files_form(old: &str, content: &str) -> String {
    let breaks = old.matches('\n').count();
    let crlf = breaks > 0 && old.matches("\r\n").count() == breaks && !content.contains('\r');
    let mut new = if crlf {
        content.replace('\n', "\r\n")
    } else {
        content.to_string()
    };
    if old.starts_with('\u{feff}') && !new.starts_with('\u{feff}') {
        new.insert(0, '\u{feff}');
    }
    new
}

fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// The diff of the two texts' lines, each line with its break.
fn line_diff(old: &str, new: &str) -> Vec<DiffOp> {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    capture_diff_slices(Algorithm::Myers, &a, &b)
}

/// The replacements, in bytes of `old`, that turn it into `new` line by line: one per run of lines
/// that differ.
fn line_changes(old: &str, new: &str) -> Vec<Replacement> {
    let ops = line_diff(old, new);
    let starts = |text: &str| -> Vec<usize> {
        let mut at = vec![0];
        at.extend(text.split_inclusive('\n').scan(0, |end, l| {
            *end += l.len();
            Some(*end)
        }));
        at
    };
    let (a, b) = (starts(old), starts(new));
    ops.iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(|op| {
            let (o, n) = (op.old_range(), op.new_range());
            Replacement {
                start: a[o.start],
                end: a[o.end],
                text: new[b[n.start]..b[n.end]].to_string(),
            }
        })
        .collect()
}

/// The lines of `new` that are not the old text's, as ranges (`3-4, 9`).
fn new_lines_changed(old: &str, new: &str) -> String {
    let ranges: Vec<String> = line_diff(old, new)
        .iter()
        .filter(|op| !matches!(op, DiffOp::Equal { .. }))
        .map(DiffOp::new_range)
        .filter(|r| !r.is_empty())
        .map(|r| {
            if r.len() == 1 {
                format!("line {}", r.start + 1)
            } else {
                format!("lines {}-{}", r.start + 1, r.end)
            }
        })
        .collect();
    ranges.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::apply_replacements;

    fn written(old: &str, content: &str) -> FileChange {
        write_file(Some(old), "/w/a.txt", content).unwrap()
    }

    #[test]
    fn only_the_lines_that_differ_are_replaced() {
        let old = "one\ntwo\nthree\nfour\n";
        let c = written(old, "one\nTWO\nthree\nfour\nfive\n");
        assert_eq!(
            c.replacements,
            [
                Replacement {
                    start: 4,
                    end: 8,
                    text: "TWO\n".into()
                },
                Replacement {
                    start: 19,
                    end: 19,
                    text: "five\n".into()
                }
            ]
        );
        assert_eq!(apply_replacements(old, &c.replacements), c.text);
        assert_eq!(
            c.applied[0].label.as_deref(),
            Some("the new text (5 lines; changed: line 2, line 5)")
        );
        // A last line without a newline, lines removed.
        let c = written("a\nb\nc", "a\nc");
        assert_eq!(apply_replacements("a\nb\nc", &c.replacements), "a\nc");
        assert_eq!(
            c.applied[0].label.as_deref(),
            Some("the new text (2 lines; changed: only removals)")
        );
    }

    #[test]
    fn the_file_keeps_its_crlf_and_byte_order_mark() {
        let old = "\u{feff}one\r\ntwo\r\n";
        let c = written(old, "one\nTWO\n");
        assert_eq!(c.text, "\u{feff}one\r\nTWO\r\n");
        assert_eq!(
            c.replacements,
            [Replacement {
                start: 8,
                end: 13,
                text: "TWO\r\n".into()
            }]
        );
        // A text that states its own line breaks is written as it is.
        assert_eq!(written(old, "one\r\ntwo\n").text, "\u{feff}one\r\ntwo\n");
    }

    #[test]
    fn a_new_file_is_created_and_the_same_text_is_refused() {
        let c = write_file(None, "/w/new.txt", "hello\n").unwrap();
        assert!(c.created && c.applied[0].created);
        assert_eq!(
            c.replacements,
            [Replacement {
                start: 0,
                end: 0,
                text: "hello\n".into()
            }]
        );
        let r = write_file(Some("x\r\n"), "/w/a.txt", "x\n").unwrap_err();
        assert_eq!(
            (r.kind, r.message.as_str()),
            (
                Kind::Unchanged,
                "/w/a.txt already holds exactly this text; nothing was written."
            )
        );
    }
}
