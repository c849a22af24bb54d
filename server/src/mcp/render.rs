//! Tool results: the text a model reads (the engine's message, as the CLI prints it, and where the
//! plan was applied) and `structuredContent` for programs.
//!
//! `structuredContent` is the one result object (`crate::result::PlanResult`), as `multiedit apply
//! --json` prints it, with `applied_in: "editor"|"disk"` and through an editor `editor` (and what its
//! server added: each file's `version`, `diagnostics`); a preview has `preview: true`, `checked_in`
//! instead of `applied_in`, and `diff`. A refusal is an error result (`isError: true`) whose text is
//! the refusal's message and hint and whose structured content is the refusal with `ok: false`
//! (`crate::result::Refused`). Every tool's `structuredContent` also carries `text`, the text content
//! whole (`result`), for the clients that show their model only the structured result.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use crate::bridge::Intent;
use crate::disk::Recovered;
use crate::refusal::{Kind, Refusal};
use crate::result::{earlier_text, EarlierDiagnostics, Place, PlanResult, Refused};

/// A tool result: `text` as its text content, and `structured` with `text` added to it. Claude Code
/// and Codex give their model a result's `structuredContent` instead of its text (Gemini CLI and
/// OpenCode the text), so the sentences written for the model (where the edit is, whether it is on
/// disk, what it did to the diagnostics, a file's lines) reach it either way.
pub(super) fn result(text: String, mut structured: Value, is_error: bool) -> CallToolResult {
    if let Value::Object(fields) = &mut structured {
        fields.insert("text".into(), Value::from(text.as_str()));
    }
    let mut r = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    r.structured_content = Some(structured);
    r
}

/// `r` with the diagnostics deltas of the caller's earlier edits that had not settled when they were
/// answered (`earlier`, delivered with this call whatever its tool): a paragraph at the end of the
/// text, and `earlier_diagnostics` in the structured result.
pub(crate) fn with_earlier(
    mut r: CallToolResult,
    earlier: &[EarlierDiagnostics],
) -> CallToolResult {
    let Some(paragraph) = earlier_text(earlier) else {
        return r;
    };
    let mut text = r
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default();
    text.push_str("\n\n");
    text.push_str(&paragraph);
    r.content = vec![ContentBlock::text(text.clone())];
    if let Some(Value::Object(fields)) = &mut r.structured_content {
        fields.insert("text".into(), Value::from(text));
        fields.insert(
            "earlier_diagnostics".into(),
            serde_json::to_value(earlier).unwrap_or_default(),
        );
    }
    r
}

fn recovered_text(recovered: &[Recovered]) -> String {
    recovered
        .iter()
        .map(|r| format!("\nBefore this plan, multiedit {}.", r.describe()))
        .collect()
}

/// Marks `result` as applied in, or for a preview checked against, `place`.
fn placed(result: PlanResult, place: Place, preview: bool) -> PlanResult {
    if preview {
        PlanResult {
            preview: Some(true),
            checked_in: Some(place),
            ..result
        }
    } else {
        PlanResult {
            applied_in: Some(place),
            ..result
        }
    }
}

/// A plan applied (or, with `diff`, previewed) on disk because no editor has its files open.
/// `written`: the engine's result, with what the language servers multiedit started added (a rename, the
/// diagnostics delta: `language_servers`).
pub(crate) fn disk(
    written: PlanResult,
    diff: Option<&str>,
    reason: &str,
    recovered: &[Recovered],
) -> CallToolResult {
    let common = PlanResult {
        diff: diff.map(str::to_string),
        recovered: recovered.iter().map(Recovered::to_entry).collect(),
        ..written
    };
    let message = &common.message_for_model();
    let text = match (diff, &common.diagnostics_text) {
        (Some(d), _) => format!(
            "{d}Preview, nothing written. {message}\nChecked against the files on disk: {reason}."
        ),
        // As through an editor: where, the new hashes, then what the language servers said.
        (None, Some(diagnostics)) => format!(
            "{message}\n\nWritten to disk: {reason}.{}\n{diagnostics}",
            sha256_line(&common)
        ),
        (None, None) => format!(
            "{message}\n\nWritten to disk: {reason}. No diagnostics: no editor checked the change.{}",
            sha256_line(&common)
        ),
    };
    let text = format!("{text}{}", recovered_text(recovered));
    result(
        text,
        placed(common, Place::Disk, diff.is_some()).to_value(),
        false,
    )
}

/// A plan the editor's `multiedit lsp` applied in its buffers (or, for a preview, checked against
/// them). `answer` is the object `multiedit.apply` / `multiedit.preview` answered with; the
/// WorkspaceEdit a preview carries is the editor's business, not passed on.
pub(crate) fn editor(editor: &str, answer: PlanResult, intent: Intent) -> CallToolResult {
    let preview = intent == Intent::Preview;
    let answer = PlanResult {
        editor: Some(editor.to_string()),
        edit: None,
        label: None,
        ..answer
    };
    let message = &answer.message_for_model();
    let text = if preview {
        let diff = answer.diff.as_deref().unwrap_or_default();
        format!(
            "{diff}Preview, nothing applied. {message}\nChecked against the buffers of {editor}."
        )
    } else {
        // The delta of the editor's diagnostics, when its client reports them (multiedit/diagnostics).
        let diagnostics = match &answer.diagnostics_text {
            Some(d) => d.clone(),
            None => "No diagnostics: the editor does not report them to multiedit.".into(),
        };
        // Last, as the agent's next old_string must match these lines.
        let now_reads = answer
            .now_reads_text
            .as_ref()
            .map(|t| format!("\n\n{t}"))
            .unwrap_or_default();
        // Whether the agent's next step (tests, compiler, git, a file read) sees the edit on disk.
        let on_disk = answer
            .on_disk_text
            .as_ref()
            .map(|t| format!("{t}\n"))
            .unwrap_or_default();
        // The files' new hashes, for the next multiedit_write.
        let sha256 = answer
            .sha256_text()
            .map(|t| format!("{t}\n"))
            .unwrap_or_default();
        format!(
            "{message}\n\nApplied in the buffers of {editor}.\n{on_disk}{sha256}{diagnostics}{now_reads}"
        )
    };
    let earlier = answer.earlier_diagnostics.clone();
    let r = result(
        text,
        placed(answer, Place::Editor, preview).to_value(),
        false,
    );
    with_earlier(r, &earlier)
}

/// The files' new sha256, on a line of its own after the line that says where the plan was written.
fn sha256_line(result: &PlanResult) -> String {
    result
        .sha256_text()
        .map(|t| format!("\n{t}"))
        .unwrap_or_default()
}

/// A refused plan: nothing was changed. `editor`: the editor whose server refused it, when the plan
/// went through one.
pub(crate) fn refusal(r: &Refusal, editor: Option<&str>) -> CallToolResult {
    let structured = serde_json::to_value(Refused::new(r, editor)).expect("a refusal serialises");
    let mut text = r.full_text();
    if let Some(e) = editor {
        text.push_str(&format!("\n\nRefused by the multiedit of {e} (checked against its buffers); nothing was changed."));
    }
    result(text, structured, true)
}

/// A bug met while running the plan (a panic caught): an error result, never a crash of the server,
/// and a line on stderr, which MCP clients keep in their logs, so it can be reported.
pub(crate) fn internal(message: String) -> CallToolResult {
    crate::process::err(&format!("multiedit mcp: {message}\n"));
    refusal(&Refusal::new(Kind::InternalError, message), None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::EditedLines;
    use serde_json::json;

    fn read(v: &Value) -> PlanResult {
        serde_json::from_value(v.clone()).expect("a result object")
    }

    fn text(r: &CallToolResult) -> String {
        r.content[0].as_text().expect("text content").text.clone()
    }

    #[test]
    fn through_an_editor() {
        let answer = json!({"ok": true, "message": "Applied 1 edit to /w/a.txt:\n1. Replaced \"a\" with \"b\"",
            "files": [{"file_path": "/w/a.txt", "edits_applied": 1, "replacements": 1, "created": false, "tiers": []}],
            "edits_failed": [], "diff": "--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1 +1 @@\n-a\n+b\n"});
        let r = editor("Neovim", read(&answer), Intent::Apply);
        assert_eq!(r.is_error, Some(false));
        assert_eq!(
            text(&r),
            "Applied 1 edit to /w/a.txt:\n1. Replaced \"a\" with \"b\"\n\nApplied in the buffers of Neovim.\nNo diagnostics: the editor \
             does not report them to multiedit."
        );
        let mut with = answer.clone();
        with["diagnostics_text"] = json!("New errors: a.txt:1:1 bad (x 1)");
        with["diagnostics"] = json!({"available": true, "report": "errors", "omitted": 0, "waited_ms": 5, "delta_ms": 0.1,
            "introduced": [{"file_path": "/w/a.txt", "line": 1, "column": 1, "end_line": 1, "end_column": 2, "severity": "error",
                "source": "x", "code": "1", "message": "bad"}],
            "resolved": [], "present": [], "pending": [], "unchecked": [], "quiet": [], "not_compared": [], "not_open_before": []});
        let checked = editor("Neovim", read(&with), Intent::Apply);
        assert!(
            text(&checked)
                .ends_with("Applied in the buffers of Neovim.\nNew errors: a.txt:1:1 bad (x 1)"),
            "{}",
            text(&checked)
        );
        assert_eq!(
            checked.structured_content.unwrap()["diagnostics"]["introduced"][0]["line"],
            1
        );
        // Whether the edit is on disk comes before the diagnostics.
        with["on_disk_text"] = json!("Saved: the edit is on disk.");
        let saved = editor("Neovim", read(&with), Intent::Apply);
        assert!(text(&saved).ends_with("Applied in the buffers of Neovim.\nSaved: the edit is on disk.\nNew errors: a.txt:1:1 bad (x 1)"), "{}", text(&saved));
        let s = r.structured_content.unwrap();
        assert_eq!(
            (s["applied_in"].as_str(), s["editor"].as_str()),
            (Some("editor"), Some("Neovim"))
        );
        assert_eq!(s["files"], answer["files"]);

        // Applied: each file's new sha256, after where it was applied and whether it is on disk.
        let mut hashed = answer.clone();
        hashed["files"][0]["sha256"] = json!("ab".repeat(32));
        let r = editor("Neovim", read(&hashed), Intent::Apply);
        assert_eq!(
            text(&r),
            format!(
                "Applied 1 edit to /w/a.txt:\n1. Replaced \"a\" with \"b\"\n\nApplied in the buffers of Neovim.\nNew sha256: {}\nNo \
                 diagnostics: the editor does not report them to multiedit.",
                "ab".repeat(32)
            )
        );

        let r = editor("Neovim", read(&answer), Intent::Preview);
        assert!(
            text(&r).starts_with("--- a/w/a.txt")
                && text(&r).ends_with("Checked against the buffers of Neovim.")
        );
        let s = r.structured_content.unwrap();
        assert_eq!(
            (s["checked_in"].as_str(), s["preview"].as_bool()),
            (Some("editor"), Some(true))
        );
        assert!(s.get("applied_in").is_none());
    }

    #[test]
    fn lines_the_editor_changed_after_the_edit_end_the_text() {
        let answer = json!({"ok": true, "message": "Applied 1 edit to /w/a.py:\n1. Replaced \"x=1\" with \"x=2\"",
            "files": [{"file_path": "/w/a.py", "edits_applied": 1, "replacements": 1, "created": false, "tiers": []}],
            "edits_failed": [], "diagnostics_text": "No new errors."});
        let mut result = read(&answer);
        let region = |first_line, last_line, text: &str| EditedLines {
            file_path: "/w/a.py".into(),
            first_line,
            last_line,
            text: text.into(),
        };
        result.add_now_reads([region(2, 2, "x = 2"), region(7, 8, "def f():\n    pass")]);
        let r = editor("Neovim", result, Intent::Apply);
        assert_eq!(
            text(&r),
            "Applied 1 edit to /w/a.py:\n1. Replaced \"x=1\" with \"x=2\"\n\nApplied in the buffers of Neovim.\nNo new errors.\n\n\
             The editor changed the edited lines after the edit (its formatter, or a review). They now read (match these in \
             your next old_string):\n/w/a.py, line 2:\nx = 2\n\n/w/a.py, lines 7-8:\ndef f():\n    pass"
        );
        assert_eq!(
            r.structured_content.unwrap()["now_reads"],
            json!([
            {"file_path": "/w/a.py", "first_line": 2, "last_line": 2, "text": "x = 2"},
            {"file_path": "/w/a.py", "first_line": 7, "last_line": 8, "text": "def f():\n    pass"}])
        );
    }

    #[test]
    fn on_disk_each_written_file_has_its_new_hash_and_a_preview_none() {
        let plan = crate::engine::parse_plan(
            &json!({"file_path": "/w/a.txt", "edits": [{"old_string": "a", "new_string": "b"}]})
                .to_string(),
        )
        .unwrap();
        let outcome = crate::engine::apply_plan(&plan, &[Some("a\n")]).unwrap();
        let hash = crate::result::sha256("b\n");
        // The hashes are the written texts': the caller adds them once the plan is written.
        let mut written = PlanResult::of(&outcome);
        written.add_sha256_written(&outcome);
        let r = disk(written, None, "no editor holds it", &[]);
        assert_eq!(
            text(&r),
            format!(
                "Applied 1 edit to /w/a.txt:\n1. Replaced \"a\" with \"b\"\n\nWritten to disk: no editor holds it. No \
                 diagnostics: no editor checked the change.\nNew sha256: {hash}"
            )
        );
        let s = r.structured_content.clone().unwrap();
        assert_eq!(s["files"][0]["sha256"], hash);
        // The clients that show their model only the structured result show it the same sentences.
        assert_eq!(s["text"], text(&r));
        let preview = disk(
            PlanResult::of(&outcome),
            Some("diff\n"),
            "no editor holds it",
            &[],
        );
        assert!(!text(&preview).contains("sha256"), "{}", text(&preview));
        assert!(preview.structured_content.unwrap()["files"][0]
            .get("sha256")
            .is_none());
    }

    #[test]
    fn refused_by_an_editor_or_on_disk() {
        let refusal = Refusal::of(
            crate::engine::Kind::NotFound,
            "String to replace not found in file.\nString: x",
        )
        .at(2)
        .in_file("/w/a.txt")
        .with_hint(Some("The closest text is at line 3.".into()));
        let r = super::refusal(&refusal, None);
        assert_eq!(r.is_error, Some(true));
        assert_eq!(
            text(&r),
            "String to replace not found in file.\nString: x\nThe closest text is at line 3."
        );
        assert_eq!(
            r.structured_content.unwrap(),
            json!({"ok": false, "kind": "not_found", "edit_index": 2, "file_path": "/w/a.txt",
                "message": "String to replace not found in file.\nString: x", "hint": "The closest text is at line 3.",
                "text": "String to replace not found in file.\nString: x\nThe closest text is at line 3."})
        );
        let r = super::refusal(&refusal, Some("Helix"));
        assert!(text(&r).ends_with(
            "Refused by the multiedit of Helix (checked against its buffers); nothing was changed."
        ));
        assert_eq!(r.structured_content.unwrap()["editor"], "Helix");
    }
}
