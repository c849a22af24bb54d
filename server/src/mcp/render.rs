//! Tool results: the text a model reads (the engine's message, as the CLI prints it, and where the
//! plan was applied) and `structuredContent` for programs.
//!
//! Success: `{ok: true, applied_in: "editor"|"disk", editor?, files, edits_failed, message}`, `files`
//! as `multiedit apply --json` gives them (`protocol_result`: tiers, offsets, deletions, moves, modes;
//! through an editor also each file's `version` and whether its `mode` was set); a preview has `preview: true`, `checked_in`
//! instead of `applied_in`, and `diff`. A refusal is an error result (`isError: true`) whose text is
//! the refusal's message and hint and whose structured content is `{ok: false, kind, edit_index,
//! file_path, message, hint}`.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Value};

use crate::disk::Recovered;
use crate::engine::{Outcome, Refusal};

fn result(text: String, structured: Value, is_error: bool) -> CallToolResult {
    let mut r = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    r.structured_content = Some(structured);
    r
}

/// The per-file reports of a result object (`multiedit.apply`'s or the CLI's `--json`), whole: every
/// front end reports a file the same way.
fn files_of(result: &Value) -> Value {
    result.get("files").filter(|f| f.is_array()).cloned().unwrap_or(json!([]))
}

fn recovered_text(recovered: &[Recovered]) -> String {
    recovered.iter().map(|r| format!("\nBefore this plan, multiedit {}.", r.describe())).collect()
}

/// A plan applied (or, with `diff`, previewed) on disk because no editor has its files open.
pub fn disk(outcome: &Outcome, diff: Option<&str>, reason: &str, recovered: &[Recovered]) -> CallToolResult {
    let common = crate::protocol_result::outcome_json(outcome);
    let message = outcome.message();
    let mut structured = json!({
        "ok": true,
        "files": files_of(&common),
        "edits_failed": common["edits_failed"],
        "message": message,
    });
    if !recovered.is_empty() {
        structured["recovered"] = recovered.iter().map(Recovered::to_json).collect();
    }
    let text = match diff {
        Some(d) => {
            structured["preview"] = json!(true);
            structured["checked_in"] = json!("disk");
            structured["diff"] = json!(d);
            format!("{d}Preview, nothing written. {message}\nChecked against the files on disk: {reason}.")
        }
        None => {
            structured["applied_in"] = json!("disk");
            format!("{message}\n\nWritten to disk: {reason}. No diagnostics: no editor checked the change.")
        }
    };
    result(format!("{text}{}", recovered_text(recovered)), structured, false)
}

/// A plan the editor's `multiedit lsp` applied in its buffers (or, for a preview, checked against
/// them). `answer` is the object `multiedit.apply` / `multiedit.preview` answered with.
pub fn editor(editor: &str, answer: &Value, preview: bool) -> CallToolResult {
    let message = answer.get("message").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut structured = json!({
        "ok": true,
        "editor": editor,
        "files": files_of(answer),
        "edits_failed": answer.get("edits_failed").cloned().unwrap_or(json!([])),
        "message": message,
    });
    let text = if preview {
        let diff = answer.get("diff").and_then(Value::as_str).unwrap_or_default();
        structured["preview"] = json!(true);
        structured["checked_in"] = json!("editor");
        structured["diff"] = json!(diff);
        format!("{diff}Preview, nothing applied. {message}\nChecked against the buffers of {editor}.")
    } else {
        structured["applied_in"] = json!("editor");
        // The delta of the editor's diagnostics, when its client reports them (multiedit/diagnostics).
        let diagnostics = match answer.get("diagnostics_text").and_then(Value::as_str) {
            Some(d) => {
                structured["diagnostics"] = answer.get("diagnostics").cloned().unwrap_or(Value::Null);
                d.to_string()
            }
            None => "No diagnostics: the editor does not report them to multiedit.".into(),
        };
        format!("{message}\n\nApplied in the buffers of {editor}.\n{diagnostics}")
    };
    result(text, structured, false)
}

/// A refused plan: nothing was changed. `editor`: the editor whose server refused it, when the plan
/// went through one.
pub fn refusal(r: &Refusal, editor: Option<&str>) -> CallToolResult {
    let mut structured = json!({
        "ok": false,
        "kind": r.kind,
        "edit_index": r.edit_index,
        "file_path": r.file_path,
        "message": r.message,
        "hint": r.hint,
    });
    let mut text = r.full_text();
    if let Some(e) = editor {
        structured["editor"] = json!(e);
        text.push_str(&format!("\n\nRefused by the multiedit of {e} (checked against its buffers); nothing was changed."));
    }
    result(text, structured, true)
}

/// A bug met while running the plan (a panic caught): an error result, never a crash of the server.
pub fn internal(message: String) -> CallToolResult {
    let structured = json!({"ok": false, "kind": "internal_error", "edit_index": null, "file_path": null,
        "message": message, "hint": null});
    result(message, structured, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Kind;

    fn text(r: &CallToolResult) -> String {
        r.content[0].as_text().expect("text content").text.clone()
    }

    #[test]
    fn through_an_editor() {
        let answer = json!({"ok": true, "message": "Applied 1 edit to /w/a.txt:\n1. Replaced \"a\" with \"b\"",
            "files": [{"file_path": "/w/a.txt", "edits_applied": 1, "replacements": 1, "created": false, "tiers": []}],
            "edits_failed": [], "diff": "--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1 +1 @@\n-a\n+b\n"});
        let r = editor("Neovim", &answer, false);
        assert_eq!(r.is_error, Some(false));
        assert_eq!(
            text(&r),
            "Applied 1 edit to /w/a.txt:\n1. Replaced \"a\" with \"b\"\n\nApplied in the buffers of Neovim.\nNo diagnostics: the editor \
             does not report them to multiedit."
        );
        let mut with = answer.clone();
        with["diagnostics_text"] = json!("New errors: a.txt:1:1 bad (x 1)");
        with["diagnostics"] = json!({"available": true, "introduced": [{"file_path": "/w/a.txt", "line": 1}]});
        let checked = editor("Neovim", &with, false);
        assert!(text(&checked).ends_with("Applied in the buffers of Neovim.\nNew errors: a.txt:1:1 bad (x 1)"), "{}", text(&checked));
        assert_eq!(checked.structured_content.unwrap()["diagnostics"]["introduced"][0]["line"], 1);
        let s = r.structured_content.unwrap();
        assert_eq!((s["applied_in"].as_str(), s["editor"].as_str()), (Some("editor"), Some("Neovim")));
        assert_eq!(s["files"], answer["files"]);

        let r = editor("Neovim", &answer, true);
        assert!(text(&r).starts_with("--- a/w/a.txt") && text(&r).ends_with("Checked against the buffers of Neovim."));
        let s = r.structured_content.unwrap();
        assert_eq!((s["checked_in"].as_str(), s["preview"].as_bool()), (Some("editor"), Some(true)));
        assert!(s.get("applied_in").is_none());
    }

    #[test]
    fn refused_by_an_editor_or_on_disk() {
        let refusal = Refusal::new(Kind::NotFound, "String to replace not found in file.\nString: x")
            .at(2)
            .in_file("/w/a.txt")
            .with_hint(Some("The closest text is at line 3.".into()));
        let r = super::refusal(&refusal, None);
        assert_eq!(r.is_error, Some(true));
        assert_eq!(text(&r), "String to replace not found in file.\nString: x\nThe closest text is at line 3.");
        assert_eq!(
            r.structured_content.unwrap(),
            json!({"ok": false, "kind": "not_found", "edit_index": 2, "file_path": "/w/a.txt",
                "message": "String to replace not found in file.\nString: x", "hint": "The closest text is at line 3."})
        );
        let r = super::refusal(&refusal, Some("Helix"));
        assert!(text(&r).ends_with("Refused by the multiedit of Helix (checked against its buffers); nothing was changed."));
        assert_eq!(r.structured_content.unwrap()["editor"], "Helix");
    }
}
