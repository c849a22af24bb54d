//! The editor's conversions between LSP types and the engine's: WorkspaceEdits and errors. Positions
//! and URIs, which the language servers multiedit starts need too, are `protocol::positions`'s
//! (re-exported here). The engine works in byte offsets of plain strings and never sees a protocol type.

use std::collections::HashMap;

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, ErrorCode};
use tower_lsp_server::ls_types::{
    AnnotatedTextEdit, ChangeAnnotation, CreateFile, DeleteFile, DeleteFileOptions,
    DocumentChangeOperation, DocumentChanges, OneOf, OptionalVersionedTextDocumentIdentifier,
    RenameFile, RenameFileOptions, ResourceOp, TextDocumentEdit, TextEdit, Uri, WorkspaceEdit,
};

use crate::engine::{self, FilePlan, Options, Replacement};
pub use crate::protocol::positions::*;
use crate::refusal::Refusal;

/// LSP 3.17 error code "RequestFailed": the request was well formed but could not be carried out.
pub(crate) const REQUEST_FAILED: i64 = -32803;

/// One file's part of a WorkspaceEdit.
pub(crate) struct FileEdit {
    pub(crate) uri: Uri,
    /// The version the edits were computed against; `None` for a file the editor has not opened.
    pub(crate) version: Option<i32>,
    /// The file does not exist: create it first.
    pub(crate) create: bool,
    pub(crate) edits: Vec<TextEdit>,
    /// After its edits (if any) the file is deleted, or renamed to this URI (a patch's file operations).
    pub(crate) then: Then,
}

#[derive(Clone, Default)]
pub(crate) enum Then {
    #[default]
    Keep,
    Delete,
    RenameTo(Uri),
}

/// The operation that follows a file's text edit: DeleteFile, RenameFile. Neither overwrites: the
/// server checked that a rename's target is free, and the editor refuses rather than replace one.
fn then_op(
    f_uri: &Uri,
    then: Then,
    annotation_id: Option<String>,
) -> Option<DocumentChangeOperation> {
    match then {
        Then::Keep => None,
        Then::Delete => Some(DocumentChangeOperation::Op(ResourceOp::Delete(
            DeleteFile {
                uri: f_uri.clone(),
                options: Some(DeleteFileOptions {
                    recursive: Some(false),
                    ignore_if_not_exists: Some(false),
                }),
                annotation_id,
            },
        ))),
        Then::RenameTo(new_uri) => Some(DocumentChangeOperation::Op(ResourceOp::Rename(
            RenameFile {
                old_uri: f_uri.clone(),
                new_uri,
                options: Some(RenameFileOptions {
                    overwrite: Some(false),
                    ignore_if_exists: Some(false),
                }),
                annotation_id,
            },
        ))),
    }
}

/// All files in ONE WorkspaceEdit, so the editor applies the batch as one operation (one undo).
/// `document_changes` is what the client supports; without it only existing files can be changed.
pub(crate) fn workspace_edit(files: Vec<FileEdit>, document_changes: bool) -> WorkspaceEdit {
    if !document_changes {
        let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
        for f in files {
            changes.entry(f.uri).or_default().extend(f.edits);
        }
        return WorkspaceEdit {
            changes: Some(changes),
            document_changes: None,
            change_annotations: None,
        };
    }
    let mut ops = Vec::new();
    for f in files {
        if f.create {
            ops.push(DocumentChangeOperation::Op(ResourceOp::Create(
                CreateFile {
                    uri: f.uri.clone(),
                    options: None,
                    annotation_id: None,
                },
            )));
        }
        let after = then_op(&f.uri, f.then, None);
        if !f.edits.is_empty() || after.is_none() {
            ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
                text_document: OptionalVersionedTextDocumentIdentifier {
                    uri: f.uri,
                    version: f.version,
                },
                edits: f.edits.into_iter().map(OneOf::Left).collect(),
            }));
        }
        ops.extend(after);
    }
    WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Operations(ops)),
        change_annotations: None,
    }
}

/// Change annotations for a WorkspaceEdit: per file of `workspace_edit`'s list, the label of each of
/// its text edits (same order), and whether the editor must ask the user before applying (review).
pub(crate) struct Annotations {
    pub(crate) labels: Vec<Vec<String>>,
    pub(crate) needs_confirmation: bool,
}

/// Like `workspace_edit`, each text edit annotated with the plan edit(s) it carries out ("Edit 2:
/// \"old\" → \"new\""), one annotation per label and file, described by the file's path. With
/// `needs_confirmation` the editor asks before applying (VS Code: its Refactor Preview, where single
/// edits or files can be left out). Annotations need `documentChanges`; a client without them gets
/// the plain edit.
pub(crate) fn annotated_workspace_edit(
    files: Vec<FileEdit>,
    document_changes: bool,
    annotations: Option<Annotations>,
) -> WorkspaceEdit {
    let Some(annotations) = annotations.filter(|_| document_changes) else {
        return workspace_edit(files, document_changes);
    };
    let mut table = AnnotationTable {
        table: HashMap::new(),
        needs_confirmation: annotations.needs_confirmation,
    };
    let mut ops = Vec::new();
    for (i, f) in files.into_iter().enumerate() {
        ops.extend(annotated_file(i, f, annotations.labels.get(i), &mut table));
    }
    WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Operations(ops)),
        change_annotations: Some(table.table),
    }
}

/// The change annotations of a WorkspaceEdit, by id.
struct AnnotationTable {
    table: HashMap<String, ChangeAnnotation>,
    needs_confirmation: bool,
}

impl AnnotationTable {
    /// The id of `label`'s annotation in file `i` (at `path`), made the first time it is met.
    fn annotate(&mut self, i: usize, path: &str, label: &str) -> String {
        let id = format!("multiedit.{i}.{label}");
        self.table
            .entry(id.clone())
            .or_insert_with(|| ChangeAnnotation {
                label: label.to_string(),
                needs_confirmation: Some(self.needs_confirmation),
                description: Some(path.to_string()),
            });
        id
    }
}

/// The operations of file `i` of the edit, each annotated: its creation, its text edits (each with
/// its label of `labels`, else "MultiEdit") and its deletion or rename.
fn annotated_file(
    i: usize,
    f: FileEdit,
    labels: Option<&Vec<String>>,
    table: &mut AnnotationTable,
) -> Vec<DocumentChangeOperation> {
    let mut ops = Vec::new();
    let path = crate::paths::to_path(f.uri.as_str())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| f.uri.as_str().to_string());
    if f.create {
        let id = table.annotate(i, &path, &format!("Create {}", file_name(&path)));
        ops.push(DocumentChangeOperation::Op(ResourceOp::Create(
            CreateFile {
                uri: f.uri.clone(),
                options: None,
                annotation_id: Some(id),
            },
        )));
    }
    let edits: Vec<OneOf<TextEdit, AnnotatedTextEdit>> = f
        .edits
        .into_iter()
        .enumerate()
        .map(|(j, text_edit)| {
            let label = labels
                .and_then(|l| l.get(j))
                .cloned()
                .unwrap_or_else(|| "MultiEdit".to_string());
            OneOf::Right(AnnotatedTextEdit {
                text_edit,
                annotation_id: table.annotate(i, &path, &label),
            })
        })
        .collect();
    let after = match &f.then {
        Then::Keep => None,
        Then::Delete => then_op(
            &f.uri,
            f.then.clone(),
            Some(table.annotate(i, &path, &format!("Delete {}", file_name(&path)))),
        ),
        Then::RenameTo(to) => {
            let to_path = crate::paths::to_path(to.as_str())
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            let label = format!("Rename {} to {}", file_name(&path), file_name(&to_path));
            let id = table.annotate(i, &path, &label);
            then_op(&f.uri, f.then.clone(), Some(id))
        }
    };
    if !edits.is_empty() || after.is_none() {
        ops.push(DocumentChangeOperation::Edit(TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: f.uri,
                version: f.version,
            },
            edits,
        }));
    }
    ops.extend(after);
    ops
}

fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Plans whose attribution would cost more than this many bytes of engine runs get one label per
/// file instead of one per edit.
const ATTRIBUTION_BUDGET: usize = 32 << 20;

/// The label of each replacement of a file's change: the plan edits that made it, `Edit 2: "old" →
/// "new"` (or `Edits 1 and 3: ...` when later edits changed the same text). Found by running the
/// engine on each prefix of the file's edits: edit k made a replacement when the text the prefix
/// k-1 and the prefix k put in its span differ. Large plans get one label for the whole file.
pub(crate) fn edit_labels(
    original: Option<&str>,
    file: &FilePlan,
    options: &Options,
    reps: &[Replacement],
) -> Vec<String> {
    let n = file.edits.len();
    let size = original.map_or(0, str::len) + 1;
    let whole = || vec![crate::result::plural(n, "edit"); reps.len()];
    if n == 1 {
        return vec![label_for(file, &[0]); reps.len()];
    }
    if n.saturating_mul(size) > ATTRIBUTION_BUDGET || n > 500 {
        return whole();
    }
    let mut makers: Vec<Vec<usize>> = vec![Vec::new(); reps.len()];
    let mut previous: Vec<Replacement> = Vec::new();
    for k in 1..=n {
        let prefix = FilePlan {
            edits: file.edits[..k].to_vec(),
            ..file.clone()
        };
        let current = engine::apply_file(original, &prefix, options)
            .map(|c| c.replacements)
            .unwrap_or_default();
        for (r, who) in reps.iter().zip(makers.iter_mut()) {
            if near(&previous, r) != near(&current, r) {
                who.push(k - 1);
            }
        }
        previous = current;
    }
    makers
        .iter()
        .map(|who| {
            if who.is_empty() {
                label_for(file, &[n - 1])
            } else {
                label_for(file, who)
            }
        })
        .collect()
}

/// The replacements that overlap or touch a replacement's span.
fn near<'a>(reps: &'a [Replacement], r: &Replacement) -> Vec<&'a Replacement> {
    reps.iter()
        .filter(|x| x.start <= r.end && x.end >= r.start)
        .collect()
}

fn clip(s: &str) -> String {
    let one: String = s.replace("\r\n", "⏎").replace('\n', "⏎");
    if one.chars().count() > 40 {
        format!("{}…", one.chars().take(39).collect::<String>())
    } else {
        one
    }
}

fn label_for(file: &FilePlan, who: &[usize]) -> String {
    let pair = |i: usize| {
        let e = &file.edits[i];
        match e.target.as_deref() {
            // An edit placed by a symbol or a rename says what it does.
            Some(engine::Target::Spans(spans)) => spans.summary.clone(),
            _ => format!("\"{}\" → \"{}\"", clip(&e.old_string), clip(&e.new_string)),
        }
    };
    match who {
        [i] => format!("Edit {}: {}", i + 1, pair(*i)),
        _ => {
            let nums: Vec<String> = who.iter().map(|i| (i + 1).to_string()).collect();
            let (last, rest) = nums.split_last().expect("two or more");
            format!(
                "Edits {} and {last}: {}",
                rest.join(", "),
                who.iter().map(|&i| pair(i)).collect::<Vec<_>>().join(", ")
            )
        }
    }
}

/// A refusal as a JSON-RPC error: `message` is the engine's exact message, `data` the structured
/// refusal (with the hint). A malformed plan is "invalid params"; anything else "request failed".
pub(crate) fn refusal_error(r: &Refusal) -> Error {
    let code = if r.kind == engine::Kind::InvalidPlan {
        ErrorCode::InvalidParams
    } else {
        ErrorCode::ServerError(REQUEST_FAILED)
    };
    Error {
        code,
        message: r.message.clone().into(),
        data: Some(serde_json::to_value(r).unwrap_or(Value::Null)),
    }
}

/// A failure of the server itself (not of the plan).
pub(crate) fn internal_error(message: String) -> Error {
    Error {
        code: ErrorCode::InternalError,
        message: message.into(),
        data: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ropey::Rope;
    use std::path::Path;
    use std::str::FromStr;
    use tower_lsp_server::ls_types::{Position, Range};

    fn pos(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn utf16_positions_around_astral_characters() {
        let rope = Rope::from_str("a😀b\r\nx😀😀y\rlast");
        // "😀" is two UTF-16 code units and four bytes.
        assert_eq!(position_to_char(&rope, pos(0, 3), Encoding::Utf16), 2);
        assert_eq!(
            position_to_char(&rope, pos(0, 2), Encoding::Utf16),
            1,
            "inside a surrogate pair"
        );
        assert_eq!(position_to_char(&rope, pos(1, 5), Encoding::Utf16), 5 + 3);
        assert_eq!(
            position_to_char(&rope, pos(0, 99), Encoding::Utf16),
            3,
            "clamped before the CRLF"
        );
        assert_eq!(
            position_to_char(&rope, pos(1, 99), Encoding::Utf16),
            9,
            "clamped before the CR"
        );
        assert_eq!(
            position_to_char(&rope, pos(9, 0), Encoding::Utf16),
            rope.len_chars()
        );
        assert_eq!(position_to_char(&rope, pos(0, 5), Encoding::Utf8), 2);
        assert_eq!(
            position_to_char(&rope, pos(0, 2), Encoding::Utf8),
            1,
            "inside a UTF-8 sequence"
        );
        let b = "a😀b\r\nx😀😀".len();
        assert_eq!(byte_to_position(&rope, b, Encoding::Utf16), pos(1, 5));
        assert_eq!(byte_to_position(&rope, b, Encoding::Utf8), pos(1, 9));
        assert_eq!(byte_to_position(&rope, 10_000, Encoding::Utf16), pos(2, 4));
    }

    proptest::proptest! {
        /// Byte offset -> position -> char index lands where it started, in both encodings, for any
        /// mix of ASCII, two-byte, astral characters and the three kinds of line break.
        #[test]
        fn positions_round_trip(
            chars in proptest::collection::vec(proptest::sample::select(vec!['a', 'é', '😀', '\n', '\r', '\t']), 0..60),
            pick in 0usize..1000,
        ) {
            let text: String = chars.into_iter().collect();
            let rope = Rope::from_str(&text);
            let c = pick % (rope.len_chars() + 1);
            // Between the \r and \n of a CRLF is not a position LSP can express.
            let inside_crlf = c > 0 && c < rope.len_chars() && rope.char(c - 1) == '\r' && rope.char(c) == '\n';
            if !inside_crlf {
                for enc in [Encoding::Utf16, Encoding::Utf8] {
                    let pos = byte_to_position(&rope, rope.char_to_byte(c), enc);
                    proptest::prop_assert_eq!(position_to_char(&rope, pos, enc), c, "{:?} {:?}", enc, pos);
                }
            }
        }
    }

    #[test]
    fn each_replacement_is_labelled_with_the_edits_that_made_it() {
        let file = FilePlan {
            file_path: "/w/a.txt".into(),
            edits: vec![
                engine::Edit::new("alpha", "ALPHA"),
                engine::Edit::new("gamma", "GAMMA"),
                engine::Edit::new("ALPHA beta", "ALPHA BETA"),
                engine::Edit::all("line\n", "row\n"),
            ],
            op: engine::FileOp::Edit,
            mode: None,
            literal: false,
        };
        let text = "alpha beta gamma\nline\nline\n";
        let change = engine::apply_file(Some(text), &file, &Options::default()).unwrap();
        let labels = edit_labels(Some(text), &file, &Options::default(), &change.replacements);
        assert_eq!(change.replacements.len(), labels.len());
        let by_text: Vec<(String, String)> = change
            .replacements
            .iter()
            .zip(&labels)
            .map(|(r, l)| (text[r.start..r.end].to_string(), l.clone()))
            .collect();
        let label_of = |orig: &str| {
            by_text
                .iter()
                .filter(|(t, _)| t.contains(orig))
                .map(|(_, l)| l.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            label_of("gamma"),
            ["Edit 2: \"gamma\" → \"GAMMA\""],
            "{by_text:?}"
        );
        assert!(
            label_of("alpha")
                .iter()
                .all(|l| l.starts_with("Edits 1 and 3: \"alpha\" → \"ALPHA\", \"ALPHA beta\"")),
            "{by_text:?}"
        );
        assert_eq!(
            label_of("line"),
            ["Edit 4: \"line⏎\" → \"row⏎\""],
            "{by_text:?}"
        );
    }

    #[test]
    fn annotations_group_per_file_and_ask_for_review() {
        let uri = |p: &str| Uri::from_str(&format!("file://{p}")).unwrap();
        let edit = |text: &str| TextEdit::new(Range::new(pos(0, 0), pos(0, 1)), text.into());
        let files = vec![
            FileEdit {
                uri: uri("/w/a.txt"),
                version: Some(3),
                create: false,
                edits: vec![edit("x"), edit("y")],
                then: Then::Keep,
            },
            FileEdit {
                uri: uri("/w/new.txt"),
                version: None,
                create: true,
                edits: vec![edit("z")],
                then: Then::Keep,
            },
        ];
        let labels = vec![
            vec!["Edit 1: a".to_string(), "Edit 1: a".to_string()],
            vec!["Edit 1: z".to_string()],
        ];
        let we = annotated_workspace_edit(
            files,
            true,
            Some(Annotations {
                labels,
                needs_confirmation: true,
            }),
        );
        let v = serde_json::to_value(&we).unwrap();
        let table = v["changeAnnotations"].as_object().unwrap();
        assert_eq!(
            table.len(),
            3,
            "one per label and file, plus the creation: {v}"
        );
        assert!(table.values().all(|a| a["needsConfirmation"] == true));
        let ops = v["documentChanges"].as_array().unwrap();
        let first = &ops[0]["edits"];
        assert_eq!(first[0]["annotationId"], first[1]["annotationId"]);
        assert_eq!(
            table[first[0]["annotationId"].as_str().unwrap()]["label"],
            "Edit 1: a"
        );
        assert_eq!(
            table[first[0]["annotationId"].as_str().unwrap()]["description"],
            "/w/a.txt"
        );
        assert_eq!(ops[1]["kind"], "create");
        assert_eq!(
            table[ops[1]["annotationId"].as_str().unwrap()]["label"],
            "Create new.txt"
        );

        // Without documentChanges: the plain edit.
        let plain = annotated_workspace_edit(
            vec![FileEdit {
                uri: uri("/w/a.txt"),
                version: None,
                create: false,
                edits: vec![edit("x")],
                then: Then::Keep,
            }],
            false,
            Some(Annotations {
                labels: vec![vec!["l".into()]],
                needs_confirmation: true,
            }),
        );
        assert!(plain.change_annotations.is_none() && plain.changes.is_some());
    }

    #[test]
    fn reversed_range_is_empty_at_its_end() {
        let rope = Rope::from_str("hello");
        assert_eq!(
            range_to_chars(&rope, Range::new(pos(0, 4), pos(0, 1)), Encoding::Utf16),
            1..1
        );
    }

    #[test]
    fn keys_ignore_drive_letter_case_and_escapes() {
        assert_eq!(
            uri_key("file:///C%3A/Users/x.txt"),
            uri_key("file:///c:/Users/x.txt")
        );
        assert_eq!(
            path_key(Path::new("C:\\Users\\x.txt")),
            uri_key("file:///c:/Users/x.txt")
        );
        assert_eq!(uri_key("file:///tmp/a%20b.txt"), "/tmp/a b.txt");
        assert_eq!(uri_key("untitled:Untitled-1"), "untitled:Untitled-1");
    }
}
