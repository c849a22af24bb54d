//! `multiedit.preview`: the same validation as `multiedit.apply`, applying nothing. Returns the
//! result the apply would give, a unified diff and the WorkspaceEdit the apply would send.

use serde_json::{json, Value};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::Client;

use super::{log_recovered, prepare, result_json, PREVIEW};
use crate::engine::diff;
use crate::lsp::catch_panic;
use crate::lsp::convert::{edit_json, internal_error, refusal_error};
use crate::lsp::session::Session;

pub async fn run(session: &Session, client: &Client, arguments: &[Value]) -> Result<Option<Value>> {
    let config = session.config();
    let mut recovered = Vec::new();
    let prepared = catch_panic(PREVIEW, || prepare(session, &config, PREVIEW, arguments, &mut recovered));
    log_recovered(client, PREVIEW, &recovered).await;
    let prepared = prepared.map_err(internal_error)?.map_err(|r| refusal_error(&r))?;
    let diff: String = prepared
        .outcome
        .files
        .iter()
        .zip(&prepared.before)
        .map(|(f, before)| diff::unified(&f.file_path, before.as_deref().unwrap_or(""), &f.replacements))
        .collect();
    let mut result = result_json(&prepared);
    result["diff"] = json!(diff);
    result["edit"] = edit_json(&prepared.edit);
    Ok(Some(result))
}
