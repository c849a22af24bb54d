//! A rename's WorkspaceEdit, from the editor's rename provider, made the plan's: each file's text
//! edits as exact spans of the text the server holds for it, counted, and refused when it changes
//! nothing, touches a file outside the workspace, or does more than edit text.

use std::collections::HashMap;

use ropey::Rope;
use tower_lsp_server::ls_types::{
    DocumentChangeOperation, DocumentChanges, OneOf, TextEdit, WorkspaceEdit,
};

use super::outline::byte_of;
use crate::engine;
use crate::engine::Span;
use crate::protocol::positions::Encoding;
use crate::refusal::Refusal;

/// The text edits of a rename's WorkspaceEdit, per document URI in the order the edit gives them.
pub(crate) fn text_edits(
    edit: &WorkspaceEdit,
    what: &str,
) -> Result<Vec<(String, Vec<TextEdit>)>, Refusal> {
    let mut out: Vec<(String, Vec<TextEdit>)> = Vec::new();
    // Where each URI is in `out`: a rename reaches thousands of files.
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut add = |uri: String, edits: Vec<TextEdit>| match index.get(&uri) {
        Some(&i) => out[i].1.extend(edits),
        None => {
            index.insert(uri.clone(), out.len());
            out.push((uri, edits));
        }
    };
    if let Some(changes) = &edit.changes {
        let mut sorted: Vec<_> = changes.iter().collect();
        sorted.sort_by_key(|(u, _)| u.as_str().to_string());
        for (uri, edits) in sorted {
            add(uri.as_str().to_string(), edits.clone());
        }
    }
    let text = |e: &OneOf<TextEdit, tower_lsp_server::ls_types::AnnotatedTextEdit>| match e {
        OneOf::Left(t) => t.clone(),
        OneOf::Right(a) => a.text_edit.clone(),
    };
    match &edit.document_changes {
        None => {}
        Some(DocumentChanges::Edits(list)) => {
            for d in list {
                add(
                    d.text_document.uri.as_str().to_string(),
                    d.edits.iter().map(text).collect(),
                );
            }
        }
        Some(DocumentChanges::Operations(ops)) => {
            for op in ops {
                match op {
                    DocumentChangeOperation::Edit(d) => add(d.text_document.uri.as_str().to_string(), d.edits.iter().map(text).collect()),
                    DocumentChangeOperation::Op(_) => {
                        return Err(Refusal::of(
                            engine::Kind::NotApplied,
                            format!(
                                "{what} also creates, renames or deletes files (the language server's edit does); multiedit applies \
                                 the text edits of a rename only. Nothing was changed. Rename it in the editor instead."
                            ),
                        ))
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The most files one rename may edit, and the most occurrences: past either, it is refused before
/// any file is read (`within_caps`). A rename costs about linear time in both (docs/performance.md);
/// these bound it to a few seconds of the server's work while real renames fit with room to spare
/// (a symbol of this repository is named at most a few hundred times).
pub(crate) const MAX_RENAME_FILES: usize = 10_000;
pub(crate) const MAX_RENAME_OCCURRENCES: usize = 200_000;

/// Refuses a rename (`what`: "The rename of total to sum") whose edits reach more files or
/// occurrences than the caps, with its counts.
pub(crate) fn within_caps(edits: &[(String, Vec<TextEdit>)], what: &str) -> Result<(), Refusal> {
    let files = edits.iter().filter(|(_, e)| !e.is_empty()).count();
    let occurrences: usize = edits.iter().map(|(_, e)| e.len()).sum();
    let past = if occurrences > MAX_RENAME_OCCURRENCES {
        format!("{} occurrences", grouped(MAX_RENAME_OCCURRENCES))
    } else if files > MAX_RENAME_FILES {
        format!("{} files", grouped(MAX_RENAME_FILES))
    } else {
        return Ok(());
    };
    Err(Refusal::of(
        engine::Kind::TooLarge,
        format!(
            "{what} reaches {} in {}, more than the {past} multiedit applies in one plan. Nothing was changed. \
             Rename it with the editor's own rename.",
            counted(occurrences, "occurrence"),
            counted(files, "file"),
        ),
    ))
}

/// `n` things, the number grouped: "1,000,000 occurrences", "1 file".
fn counted(n: usize, one: &str) -> String {
    format!("{} {one}{}", grouped(n), if n == 1 { "" } else { "s" })
}

/// `n` with its thousands grouped: 1,000,000.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One file's edits as spans of its text (sorted), those that change nothing left out. `Err` with why
/// they do not fit the text.
pub(crate) fn spans(text: &str, edits: &[TextEdit], enc: Encoding) -> Result<Vec<Span>, String> {
    let rope = Rope::from_str(text);
    let mut out = Vec::with_capacity(edits.len());
    for e in edits {
        let at = |p| {
            byte_of(&rope, p, enc).ok_or_else(|| {
                format!(
                    "an edit at line {}, column {} lies outside the text",
                    e.range.start.line + 1,
                    e.range.start.character + 1
                )
            })
        };
        let (start, end) = (at(e.range.start)?, at(e.range.end)?);
        if start > end {
            return Err(format!(
                "an edit at line {} ends before it starts",
                e.range.start.line + 1
            ));
        }
        if text[start..end] != e.new_text {
            out.push(Span {
                start,
                end,
                text: e.new_text.clone(),
            });
        }
    }
    out.sort_by_key(|s| (s.start, s.end));
    if out.windows(2).any(|w| w[0].end > w[1].start) {
        return Err("two of its edits overlap".into());
    }
    Ok(out)
}

/// How many occurrences and files a rename changes, and the words a result gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Count {
    pub(crate) old_name: String,
    pub(crate) new_name: String,
    /// Per file path, its occurrences.
    pub(crate) files: Vec<(String, usize)>,
}

impl Count {
    pub(crate) fn occurrences(&self) -> usize {
        self.files.iter().map(|(_, n)| n).sum()
    }
}

/// The refusal for a rename that would change nothing.
pub(crate) fn unchanged(old_name: &str, new_name: &str, why: &str) -> Refusal {
    Refusal::of(
        engine::Kind::Unchanged,
        format!(
            "The rename of {old_name} to {new_name} changes nothing: {why}. Nothing was changed."
        ),
    )
}

/// Per URI of a rename's edit, the name its document has there, for the old name when the editor
/// gave no placeholder: the text of the edit's first range.
pub(crate) fn old_name(text: &str, edits: &[TextEdit], enc: Encoding) -> Option<String> {
    let rope = Rope::from_str(text);
    let e = edits.first()?;
    let (a, b) = (
        byte_of(&rope, e.range.start, enc)?,
        byte_of(&rope, e.range.end, enc)?,
    );
    text.get(a..b).map(str::to_string)
}

/// The rename as the result reports it.
pub(crate) fn summary(count: &Count) -> crate::result::RenameSummary {
    crate::result::RenameSummary {
        old_name: count.old_name.clone(),
        new_name: count.new_name.clone(),
        occurrences: count.occurrences(),
        files: count
            .files
            .iter()
            .map(|(file_path, occurrences)| crate::result::RenamedFile {
                file_path: file_path.clone(),
                occurrences: *occurrences,
            })
            .collect(),
    }
}

/// Occurrences per file, by path, in the order given.
pub(crate) fn count(old_name: &str, new_name: &str, per_file: &[(String, usize)]) -> Count {
    let mut files: Vec<(String, usize)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (path, n) in per_file.iter().filter(|(_, n)| *n > 0) {
        match index.get(path.as_str()) {
            Some(&i) => files[i].1 += n,
            None => {
                index.insert(path, files.len());
                files.push((path.clone(), *n));
            }
        }
    }
    Count {
        old_name: old_name.into(),
        new_name: new_name.into(),
        files,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    fn edit(l: u32, c0: u32, c1: u32, text: &str) -> TextEdit {
        TextEdit::new(
            Range::new(Position::new(l, c0), Position::new(l, c1)),
            text.into(),
        )
    }

    #[test]
    fn edits_become_spans_and_those_that_change_nothing_are_left_out() {
        let text = "let total = 1;\nuse(total, total);\n";
        let spans = spans(
            text,
            &[
                edit(1, 11, 16, "sum"),
                edit(0, 4, 9, "sum"),
                edit(1, 4, 9, "total"),
            ],
            Encoding::Utf16,
        )
        .unwrap();
        assert_eq!(
            spans.iter().map(|s| (s.start, s.end)).collect::<Vec<_>>(),
            [(4, 9), (26, 31)]
        );
        assert_eq!(
            super::spans(
                text,
                &[edit(0, 4, 9, "a"), edit(0, 6, 7, "b")],
                Encoding::Utf16
            )
            .unwrap_err(),
            "two of its edits overlap"
        );
        assert_eq!(
            super::spans(text, &[edit(5, 0, 1, "a")], Encoding::Utf16).unwrap_err(),
            "an edit at line 6, column 1 lies outside the text"
        );
        let c = count(
            "total",
            "sum",
            &[
                ("/w/a.ts".into(), 2),
                ("/w/b.ts".into(), 0),
                ("/w/c.ts".into(), 1),
            ],
        );
        assert_eq!((c.occurrences(), c.files.len()), (3, 2));
    }

    #[test]
    fn a_rename_past_the_caps_is_refused_with_its_counts() {
        let each = |files: usize, per_file: usize| -> Vec<(String, Vec<TextEdit>)> {
            (0..files)
                .map(|f| {
                    (
                        format!("file:///w/{f}.ts"),
                        vec![edit(0, 0, 1, "b"); per_file],
                    )
                })
                .collect()
        };
        let what = "The rename of a to b";
        assert!(within_caps(&each(3, MAX_RENAME_OCCURRENCES / 3), what).is_ok());
        assert!(within_caps(&each(MAX_RENAME_FILES, 1), what).is_ok());
        let r = within_caps(&each(3, 333_334), what).unwrap_err();
        assert_eq!(r.kind, crate::engine::Kind::TooLarge);
        assert_eq!(
            r.message,
            "The rename of a to b reaches 1,000,002 occurrences in 3 files, more than the 200,000 occurrences multiedit \
             applies in one plan. Nothing was changed. Rename it with the editor's own rename."
        );
        assert_eq!(
            within_caps(&each(MAX_RENAME_FILES + 1, 1), what).unwrap_err().message,
            "The rename of a to b reaches 10,001 occurrences in 10,001 files, more than the 10,000 files multiedit \
             applies in one plan. Nothing was changed. Rename it with the editor's own rename."
        );
        assert_eq!(
            (grouped(0), grouped(999), grouped(1000), grouped(1234567)),
            ("0".into(), "999".into(), "1,000".into(), "1,234,567".into())
        );
    }
}
