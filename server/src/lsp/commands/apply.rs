//! `multiedit.apply`: validates the plan, hands the editor ONE WorkspaceEdit through
//! `workspace/applyEdit`, and reports the engine's result once the editor has applied it.
//!
//! The server never changes its own copy of a document here: the editor applies the edit and then
//! sends the didChange like for any other change, so the server's text can never drift from the
//! buffer, whatever the editor made of the edit.

use serde_json::Value;
use tower_lsp_server::ls_types::request::ApplyWorkspaceEdit;
use tower_lsp_server::ls_types::{ApplyWorkspaceEditParams, MessageType};
use tower_lsp_server::Client;

use super::{prepare_logged, result_json, Failure, APPLY};
use crate::engine::{FileOp, Kind, Refusal};
use crate::lsp::{diagnostics, log};
use crate::lsp::session::Session;

/// Shown by editors that name the undo step or ask for confirmation.
const LABEL: &str = "MultiEdit";

fn not_applied(message: String) -> Failure {
    Failure::Refused(Refusal::new(Kind::NotApplied, message))
}

pub async fn run(session: &Session, client: &Client, arguments: &[Value]) -> Result<Value, Failure> {
    if !session.config().apply_edit {
        return Err(not_applied(format!(
            "The editor does not support workspace/applyEdit (it did not set the client capability \
             workspace.applyEdit), so {APPLY} cannot hand it the change. Nothing was changed. Run \
             multiedit.preview instead: it returns the WorkspaceEdit and a diff without applying anything."
        )));
    }
    let (config, prepared) = prepare_logged(session, client, APPLY, arguments).await?;
    if prepared.creates && !(config.document_changes && config.create_files) {
        let created: Vec<&str> =
            prepared.outcome.files.iter().filter(|f| f.created).map(|f| f.file_path.as_str()).collect();
        return Err(not_applied(format!(
            "The plan creates {}, but the editor cannot create files through a workspace edit (its client \
             capabilities lack workspace.workspaceEdit.documentChanges or \"create\" in resourceOperations). \
             Nothing was changed. Create the file first, then run the plan with an empty first old_string.",
            created.join(", ")
        )));
    }
    let needs = |op: fn(&FileOp) -> bool| prepared.outcome.files.iter().filter(|f| op(&f.op)).map(|f| f.file_path.as_str()).collect::<Vec<_>>();
    for (verb, ability, files) in [
        ("deletes", config.delete_files, needs(|o| *o == FileOp::Delete)),
        ("renames", config.rename_files, needs(|o| matches!(o, FileOp::MoveTo(_)))),
    ] {
        if !files.is_empty() && (!config.document_changes || !ability) {
            let op = if verb == "deletes" { "delete" } else { "rename" };
            return Err(not_applied(format!(
                "The plan {verb} {}, but the editor cannot {op} files through a workspace edit (its client \
                 capabilities lack workspace.workspaceEdit.documentChanges or \"{op}\" in resourceOperations). \
                 Nothing was changed. Apply the patch with `multiedit apply` instead.",
                files.join(", ")
            )));
        }
    }

    let watch = diagnostics::Watch::start(client, &config, &prepared).await;
    let params = ApplyWorkspaceEditParams { label: Some(LABEL.into()), edit: prepared.edit.clone() };
    let timeout = config.apply_edit_timeout;
    // A client that never answers must not hold this handler, one of the few that run at once, forever.
    let answer = tokio::time::timeout(timeout, client.send_request::<ApplyWorkspaceEdit>(params)).await;
    match answer {
        Ok(Ok(response)) if response.applied => {
            let mut result = result_json(&prepared);
            if let Some(watch) = watch {
                watch.finish(session, client, &config, &prepared, &mut result).await;
            }
            // One line per file: the full report, with every old and new string, goes to the caller.
            let summary: Vec<String> = prepared
                .outcome
                .files
                .iter()
                .map(|f| format!("{} edit(s) to {}", f.edits_applied(), f.file_path))
                .collect();
            log(client, MessageType::LOG, format!("{APPLY}: applied {}", summary.join(", "))).await;
            Ok(result)
        }
        Ok(Ok(response)) => {
            let reason = response.failure_reason.map(|r| format!(" (the editor said: {r})")).unwrap_or_default();
            Err(not_applied(format!(
                "The editor did not apply the change{reason}. A document probably changed after the plan was \
                 checked against it, or the editor refused the edit. Nothing was changed; run the plan again."
            )))
        }
        Ok(Err(e)) => Err(not_applied(format!(
            "The editor answered workspace/applyEdit with an error ({}), so it did not apply the change. \
             Nothing was changed; run the plan again.",
            e.message
        ))),
        Err(_) => Err(not_applied(format!(
            "The editor did not answer workspace/applyEdit within {} ms. Whether it applied the change is \
             unknown: check the documents before running the plan again.",
            timeout.as_millis()
        ))),
    }
}
