//! `multiedit.preview`: the same validation as `multiedit.apply`, applying nothing. Returns the
//! result the apply would give, a unified diff and the WorkspaceEdit the apply would send.

use serde_json::Value;
use tower_lsp_server::Client;

use super::shared::{decode, prepare_logged, result_json, Failure};
use crate::engine::diff;
use crate::lsp::capabilities::PREVIEW;
use crate::lsp::request::Origin;
use crate::lsp::session::Session;
use crate::result::PlanResult;

pub(crate) async fn run(
    session: &Session,
    client: &Client,
    origin: Origin,
    arguments: &[Value],
) -> Result<Value, Failure> {
    let request = decode(session, PREVIEW, arguments)?;
    let (_, prepared) = prepare_logged(session, client, PREVIEW, origin, &request).await?;
    let diff: String = prepared
        .each()
        .map(|(change, file)| diff::file_diff(change, file.before.as_deref().unwrap_or("")))
        .collect();
    let result = PlanResult {
        diff: Some(diff),
        edit: Some(prepared.edit.clone()),
        ..result_json(&prepared)
    };
    Ok(result.to_value())
}
