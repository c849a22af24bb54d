//! Edits placed by something other than their text: a symbol of the editor's language servers
//! (`{"symbol": "Calculator/add", "replace": "body"}`), a rename, and the exact spans both become once
//! a front end that can ask the editor has resolved them. The engine resolves neither: it parses and
//! checks them, refuses them unresolved (`needs_editor`), and applies spans.

use super::changeset::ChangeSet;
use super::eol::View;
use super::refusal::{Kind, Refusal};

/// What an edit addresses instead of a text to find (`Edit::target`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A symbol of the file, resolved by the editor's language servers into `Spans`.
    Symbol {
        path: NamePath,
        action: SymbolAction,
    },
    /// Exact places in the text the engine is given (byte offsets, sorted, apart), each with its new
    /// text: a resolved symbol, or a rename's edits in one file.
    Spans(Spans),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spans {
    pub spans: Vec<Span>,
    /// How the result reports the edit: "Replaced the body of Calculator/add (lines 3-5)".
    pub summary: String,
    /// What it acts on, for refusals: "the body of Calculator/add (lines 3-5)".
    pub what: String,
    /// `false` for an edit the plan did not list as one (a rename's, in each file it reaches): the
    /// result lists it without a number, and the plan's own edits keep theirs.
    pub numbered: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// `replace` or `insert` of a symbol edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolAction {
    /// `replace: "whole"`: the symbol's range as its language server gives it.
    Whole,
    /// `replace: "body"`: between the braces of the block that ends the symbol.
    Body,
    /// `insert: "before"` / `"after"`: new lines before or after the symbol.
    Before,
    After,
}

impl SymbolAction {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolAction::Whole => "replace whole",
            SymbolAction::Body => "replace body",
            SymbolAction::Before => "insert before",
            SymbolAction::After => "insert after",
        }
    }
}

/// A symbol's name path: `Calculator/add`, `/main` (top level only), `add[1]` (the second of the
/// symbols the path names, in file order: overloads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamePath {
    /// Written with a leading `/`: the first name is a top-level symbol.
    pub rooted: bool,
    /// The names, outermost first.
    pub names: Vec<String>,
    /// `[n]`: which of several matches, counted from 0 in file order.
    pub index: Option<usize>,
    /// As written.
    pub text: String,
}

impl NamePath {
    /// Parses a name path, or says what is wrong with it (for `field`).
    pub fn parse(text: &str, field: &str) -> Result<NamePath, String> {
        let bad = |why: &str| {
            format!(
                "`{field}` is \"{text}\", which is not a name path: {why}. Write the symbol's names from the outermost, \
                 separated by /, such as \"Calculator/add\" (\"/add\" for a top-level add only, \"add[1]\" for the \
                 second of several)"
            )
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(bad("it is empty"));
        }
        if trimmed.contains(['\n', '\r']) {
            return Err(bad("it holds a line break"));
        }
        let (rooted, rest) = match trimmed.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        // `[n]` is an index only when n is a number: `operator[]` stays a name.
        let (rest, index) = match rest.strip_suffix(']').and_then(|r| r.rsplit_once('[')) {
            Some((path, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                match n.parse::<usize>() {
                    Ok(i) => (path, Some(i)),
                    Err(_) => return Err(bad("the number in its [n] is too large")),
                }
            }
            _ => (rest, None),
        };
        let names: Vec<String> = rest.split('/').map(|n| n.trim().to_string()).collect();
        if names.iter().any(String::is_empty) {
            return Err(bad("one of its names is empty"));
        }
        Ok(NamePath {
            rooted,
            names,
            index,
            text: trimmed.to_string(),
        })
    }
}

/// A rename (the plan's `rename`): the editor's rename provider renames the symbol at a place of
/// `file_path` to `new_name`, in every file it reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    pub file_path: String,
    pub at: RenameAt,
    pub new_name: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenameAt {
    /// The symbol's name, where its language server puts it (`selectionRange`).
    Symbol(NamePath),
    /// 1-based line, and 1-based column counted in characters.
    Position { line: usize, column: usize },
}

/// Where each span of a resolved edit lies in the current text of `cs` (current positions, in order:
/// `ChangeSet::apply_each` folds them all at once), with its new text as the view writes it. An earlier
/// edit wholly inside a span goes with it; one that holds an end of a span, or a span that does not
/// fit the text it was resolved on, is refused.
pub(super) fn places(
    cs: &ChangeSet<'_>,
    view: &View<'_>,
    original: &str,
    spans: &Spans,
) -> Result<Vec<(usize, usize, String)>, Refusal> {
    let misfit = || {
        Refusal::new(
            Kind::NotApplied,
            format!("The place of {} does not fit the file's text (it was resolved on another text). Nothing was changed; send the plan again.", spans.what),
        )
    };
    let mut out = Vec::with_capacity(spans.spans.len());
    let mut last_end = 0;
    for s in &spans.spans {
        if s.start > s.end
            || s.end > original.len()
            || s.start < last_end
            || !original.is_char_boundary(s.start)
            || !original.is_char_boundary(s.end)
        {
            return Err(misfit());
        }
        last_end = s.end;
        let (Some(a), Some(b)) = (view.to_view(s.start), view.to_view(s.end)) else {
            return Err(misfit());
        };
        if !view.text.is_char_boundary(a) || !view.text.is_char_boundary(b) {
            return Err(misfit());
        }
        // Earlier edits wholly inside the span are replaced with it (a body that held a renamed name);
        // one that holds an end of it leaves no place for that end.
        if !cs.is_intact(a, a) || !cs.is_intact(b, b) {
            return Err(Refusal::new(
                Kind::Overlaps,
                format!(
                    "{} begins or ends inside text that an earlier edit of this plan changed, so the place its language \
                     server gave no longer holds. Nothing was changed. Put this edit before the one that changes that text, \
                     or address it with old_string.",
                    super::text::cap(&spans.what)
                ),
            ));
        }
        out.push((
            cs.orig_to_cur(a),
            cs.orig_to_cur(b),
            view.normalize(&s.text).into_owned(),
        ));
    }
    if spans
        .spans
        .iter()
        .all(|s| original[s.start..s.end] == s.text)
    {
        return Err(Refusal::new(
            Kind::NoOp,
            format!(
                "No changes to make: the new text of {} is exactly the text there.",
                spans.what
            ),
        ));
    }
    Ok(out)
}

/// What serves a plan that names symbols or renames: the editor's language servers. The refusal the
/// engine gives when nothing resolved them (on disk, `multiedit apply`).
pub fn needs_editor(what: &str) -> Refusal {
    Refusal::new(
        Kind::NeedsEditor,
        format!(
            "{what} is resolved by the language servers of an editor running multiedit lsp, and none resolved it here \
             (on disk, multiedit reads no symbols). Nothing was changed. Open the project in an editor with multiedit \
             (VS Code with the MultiEdit extension, Neovim with multiedit lsp and its symbols handler) and send the plan \
             through it, or address the text with old_string."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{apply_plan, parse_plan, Edit, FilePlan, Plan};
    use serde_json::json;

    fn refusal(plan: serde_json::Value) -> Refusal {
        parse_plan(&plan.to_string()).unwrap_err()
    }

    #[test]
    fn symbol_edits_and_renames_are_parsed_and_each_mistake_named() {
        let plan = parse_plan(
            &json!({"file_path": "/w/a.ts", "edits": [
                {"symbol": "Calculator/add", "replace": "body", "new_string": "return a + b;"},
                {"symbol": "/main", "insert": "after", "new_string": "function g() {}\n"},
                {"old_string": "x", "new_string": "y"},
            ], "rename": {"file_path": "/w/a.ts", "symbol": "total", "new_name": "sum"}})
            .to_string(),
        )
        .unwrap();
        let e = &plan.files[0].edits;
        assert!(
            matches!(e[0].target.as_deref(), Some(Target::Symbol { action: SymbolAction::Body, path }) if path.names == ["Calculator", "add"])
        );
        assert!(
            matches!(e[1].target.as_deref(), Some(Target::Symbol { action: SymbolAction::After, path }) if path.rooted)
        );
        assert!(e[2].target.is_none());
        assert_eq!(
            plan.rename.as_ref().map(|r| r.new_name.as_str()),
            Some("sum")
        );
        // A rename alone is a plan.
        let alone = parse_plan(
            &json!({"rename": {"file_path": "/w/a.ts", "line": 3, "column": 7, "new_name": "sum"}})
                .to_string(),
        )
        .unwrap();
        assert!(alone.files.is_empty());
        assert_eq!(
            alone.rename.unwrap().at,
            RenameAt::Position { line: 3, column: 7 }
        );

        let cases = [
            (json!({"file_path": "/a", "edits": [{"symbol": "f", "new_string": "x"}]}),
             "`edits[0].symbol` names f: say what to do with it, `edits[0].replace`: \"whole\" or \"body\", or `edits[0].insert`: \"before\" or \"after\""),
            (json!({"file_path": "/a", "edits": [{"symbol": "f", "replace": "all", "new_string": "x"}]}),
             "The parameter `edits[0].replace` must be one of \"whole\", \"body\" but is \"all\""),
            (json!({"file_path": "/a", "edits": [{"symbol": "f", "replace": "body", "old_string": "a", "new_string": "x"}]}),
             "`edits[0].symbol` places the edit, so `edits[0].old_string` has no place beside it: give either `symbol` (with `replace` or `insert`) or `old_string`"),
            (json!({"file_path": "/a", "edits": [{"replace": "body", "new_string": "x"}]}),
             "`edits[0].replace` acts on a symbol: give `edits[0].symbol` (its name path, such as \"Calculator/add\") with it, or find the text with `edits[0].old_string`"),
            (json!({"file_path": "/a", "edits": [{"symbol": "f", "insert": "after"}]}), "The required parameter `edits[0].new_string` is missing"),
            (json!({"file_path": "/a", "edits": [{"new_string": "x"}]}), "The required parameter `edits[0].old_string` is missing"),
            (json!({"rename": {"file_path": "/a", "new_name": "b"}}),
             "`rename` needs the symbol to rename: `rename.symbol` (its name path, such as \"Calculator/total\"), or `rename.line` and `rename.column` (1-based, the column in characters) of a place in its name"),
            (json!({"rename": {"file_path": "/a", "line": 2, "new_name": "b"}}), "`rename.line` and `rename.column` go together: give both (1-based, the column in characters)"),
            (json!({"rename": {"file_path": "/a", "symbol": "x", "line": 2, "column": 1, "new_name": "b"}}), "Give `rename.symbol` or `rename.line` with `rename.column`, not both"),
            (json!({"rename": {"file_path": "/a", "symbol": "x", "new_name": " "}}), "`rename.new_name` must be the new name, one line and not empty, but is \" \""),
            (json!({"rename": {"file_path": "a.ts", "symbol": "x", "new_name": "y"}}), "`rename.file_path` must be an absolute path (starting with /) or a file:// URI, but is \"a.ts\""),
            (json!({"rename": {"file_path": "/a", "symbol": "x", "new_name": "y", "to": 1}}), "An unexpected parameter `rename.to` was provided (allowed here: file_path, symbol, line, column, new_name)"),
        ];
        for (plan, want) in cases {
            let r = refusal(plan.clone());
            assert_eq!(r.kind, Kind::InvalidPlan, "{plan}");
            assert_eq!(
                r.message,
                format!(
                    "InputValidationError: MultiEdit failed due to the following issue:\n{want}"
                ),
                "{plan}"
            );
        }
    }

    #[test]
    fn unresolved_symbols_and_renames_are_refused_for_what_would_serve_them() {
        let plan = parse_plan(&json!({"file_path": "/w/a.ts", "edits": [{"old_string": "a", "new_string": "b"}, {"symbol": "f", "replace": "whole", "new_string": ""}]}).to_string()).unwrap();
        let r = apply_plan(&plan, &[Some("a\nfunction f() {}\n")]).unwrap_err();
        assert_eq!(
            (r.kind, r.edit_index, r.file_path.as_deref()),
            (Kind::NeedsEditor, Some(1), Some("/w/a.ts"))
        );
        assert!(r.message.starts_with("Edit 2 names the symbol f, which is resolved by the language servers of an editor running multiedit lsp"), "{}", r.message);
        let plan = parse_plan(
            &json!({"rename": {"file_path": "/w/a.ts", "symbol": "f", "new_name": "g"}})
                .to_string(),
        )
        .unwrap();
        assert_eq!(apply_plan(&plan, &[]).unwrap_err().kind, Kind::NeedsEditor);
    }

    fn spans(spans: Vec<Span>, numbered: bool) -> Edit {
        let target = Target::Spans(Spans {
            spans,
            summary: "Renamed a to b".into(),
            what: "the rename".into(),
            numbered,
        });
        Edit {
            target: Some(Box::new(target)),
            ..Edit::new("", "b")
        }
    }

    fn run(text: &str, edits: Vec<Edit>) -> Result<crate::engine::FileChange, Refusal> {
        let plan = Plan {
            files: vec![FilePlan::edit("/f", edits)],
            options: Default::default(),
            rename: None,
        };
        apply_plan(&plan, &[Some(text)]).map(|mut o| o.files.remove(0))
    }

    #[test]
    fn spans_apply_at_their_places_through_crlf_and_earlier_edits() {
        let text = "let a = 1;\r\nuse(a);\r\n";
        let renamed = spans(
            vec![
                Span {
                    start: 4,
                    end: 5,
                    text: "b".into(),
                },
                Span {
                    start: 16,
                    end: 17,
                    text: "b".into(),
                },
            ],
            false,
        );
        let c = run(text, vec![renamed.clone(), Edit::new("use(b)", "print(b)")]).unwrap();
        assert_eq!(c.text, "let b = 1;\r\nprint(b);\r\n");
        assert_eq!(
            c.message(),
            "Applied 2 edits to /f:\n- Renamed a to b\n2. Replaced \"use(b)\" with \"print(b)\""
        );
        assert_eq!(c.applied[0].replacements, 2);
        // After an edit that changed the text around an end of a span: refused, nothing applied.
        let r = run(text, vec![Edit::new("e(a", "e(x"), renamed.clone()]).unwrap_err();
        assert_eq!((r.kind, r.edit_index), (Kind::Overlaps, Some(1)));
        assert_eq!(
            r.message,
            "The rename begins or ends inside text that an earlier edit of this plan changed, so the place its language server \
             gave no longer holds. Nothing was changed. Put this edit before the one that changes that text, or address it with \
             old_string."
        );
        // An earlier edit wholly inside a span goes with it.
        let body = spans(
            vec![Span {
                start: 12,
                end: 19,
                text: "print(b);".into(),
            }],
            true,
        );
        let c = run(text, vec![Edit::new("use(a)", "use(q)"), body]).unwrap();
        assert_eq!(c.text, "let a = 1;\r\nprint(b);\r\n");
        // An earlier edit elsewhere moves the places.
        let c = run(text, vec![Edit::new("1;", "100;"), renamed]).unwrap();
        assert_eq!(c.text, "let b = 100;\r\nuse(b);\r\n");
        // A place between \r and \n, or past the end, does not fit the text.
        let r = run(
            text,
            vec![spans(
                vec![Span {
                    start: 11,
                    end: 11,
                    text: "x".into(),
                }],
                true,
            )],
        )
        .unwrap_err();
        assert_eq!(r.kind, Kind::NotApplied);
        assert_eq!(
            run(
                text,
                vec![spans(
                    vec![Span {
                        start: 30,
                        end: 31,
                        text: "x".into()
                    }],
                    true
                )]
            )
            .unwrap_err()
            .kind,
            Kind::NotApplied
        );
        // The same text again is no change.
        let r = run(
            text,
            vec![spans(
                vec![Span {
                    start: 4,
                    end: 5,
                    text: "a".into(),
                }],
                true,
            )],
        )
        .unwrap_err();
        assert_eq!(
            (r.kind, r.message.as_str()),
            (
                Kind::NoOp,
                "No changes to make: the new text of the rename is exactly the text there."
            )
        );
    }

    #[test]
    fn view_positions() {
        let v = View::new("\u{feff}a\r\nb\r\n");
        let got: Vec<Option<usize>> = (0..9).map(|p| v.to_view(p)).collect();
        assert_eq!(
            got,
            [
                None,
                None,
                None,
                Some(0),
                Some(1),
                None,
                Some(2),
                Some(3),
                None
            ]
        );
        assert_eq!(v.to_view(9), Some(4));
    }

    #[test]
    fn name_paths() {
        let p = NamePath::parse("Calculator/add", "symbol").unwrap();
        assert_eq!(
            (p.rooted, p.names.clone(), p.index),
            (
                false,
                vec!["Calculator".to_string(), "add".to_string()],
                None
            )
        );
        let p = NamePath::parse("/main", "symbol").unwrap();
        assert_eq!((p.rooted, p.names.len()), (true, 1));
        assert_eq!(NamePath::parse("add[1]", "symbol").unwrap().index, Some(1));
        assert_eq!(
            NamePath::parse("a//b", "edits[0].symbol").unwrap_err(),
            "`edits[0].symbol` is \"a//b\", which is not a name path: one of its names is empty. Write the symbol's names \
             from the outermost, separated by /, such as \"Calculator/add\" (\"/add\" for a top-level add only, \
             \"add[1]\" for the second of several)"
        );
        assert_eq!(
            NamePath::parse("operator[]", "s").unwrap().names,
            ["operator[]"]
        );
        assert!(NamePath::parse("  ", "s").unwrap_err().contains("empty"));
    }
}
