//! `multiedit.preview`: the same validation as `multiedit.apply`, applying nothing. Returns the
//! result the apply would give, a unified diff and the WorkspaceEdit the apply would send.

use serde_json::{json, Value};
use tower_lsp_server::Client;

use super::{prepare_logged, result_json, Failure, PREVIEW};
use crate::engine::diff;
use crate::lsp::convert::edit_json;
use crate::lsp::session::Session;

pub async fn run(session: &Session, client: &Client, arguments: &[Value]) -> Result<Value, Failure> {
    let (_, prepared) = prepare_logged(session, client, PREVIEW, arguments).await?;
    let diff: String =
        prepared.each().map(|(change, file)| diff::file_diff(change, file.before.as_deref().unwrap_or(""))).collect();
    let mut result = result_json(&prepared);
    result["diff"] = json!(diff);
    result["edit"] = edit_json(&prepared.edit);
    Ok(result)
}
