//! Tool results: the text a model reads (the engine's message, as the CLI prints it, and where the
//! plan was applied) and `structuredContent` for programs.
//!
//! Success: `{ok: true, applied_in: "editor"|"disk", editor?, files: [{file_path, edits_applied,
//! replacements, created}], edits_failed, message}`; a preview has `preview: true`, `checked_in`
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

/// The per-file figures, from a result object (`multiedit.apply`'s or the CLI's `--json`).
fn files_of(result: &Value) -> Value {
    let files = result.get("files").and_then(Value::as_array).cloned().unwrap_or_default();
    files
        .iter()
        .map(|f| {
            json!({
                "file_path": f.get("file_path").cloned().unwrap_or(Value::Null),
                "edits_applied": f.get("edits_applied").cloned().unwrap_or(json!(0)),
                "replacements": f.get("replacements").cloned().unwrap_or(json!(0)),
                "created": f.get("created").cloned().unwrap_or(json!(false)),
            })
        })
        .collect()
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
            format!("{message}\n\nWritten to disk: {reason}.")
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
        format!("{diff}Preview, nothing applied. {message}\nChecked against {editor}'s buffers.")
    } else {
        structured["applied_in"] = json!("editor");
        format!("{message}\n\nApplied in {editor}'s buffers.")
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
        text.push_str(&format!("\n\nRefused by {e}'s multiedit (checked against its buffers); nothing was changed."));
    }
    result(text, structured, true)
}

/// A bug met while running the plan (a panic caught): an error result, never a crash of the server.
pub fn internal(message: String) -> CallToolResult {
    let structured = json!({"ok": false, "kind": "internal_error", "edit_index": null, "file_path": null,
        "message": message, "hint": null});
    result(message, structured, true)
}
